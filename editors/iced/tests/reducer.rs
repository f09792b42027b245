//! The session reducer over recorded ACP update sequences (tests/fixtures/*.jsonl).

use std::path::PathBuf;

use agent_client_protocol::v1::schema::{ToolCallStatus, ToolKind};
use ided_iced::session::{ChoiceRole, EntryKind, FileStatus, RecordedEvent, RunStatus, SessionState, StepStatus};

fn replay(recording: &str) -> SessionState {
    let events = RecordedEvent::parse_lines(recording).expect("the recording parses");
    RecordedEvent::replay("s-1", &events)
}

fn steps(state: &SessionState) -> Vec<(&str, StepStatus)> {
    state.plan.iter().map(|p| (p.content.as_str(), p.status)).collect()
}

#[test]
fn a_dry_run_shows_its_plan_thoughts_and_message_and_offers_the_slash_commands() {
    let state = replay(include_str!("fixtures/dry_run.jsonl"));
    assert_eq!(
        steps(&state),
        [
            ("Implement the flag (coder)", StepStatus::Pending),
            ("Write tests (test_writer)", StepStatus::Pending),
            ("Update docs (documenter) — skipped", StepStatus::Skipped),
        ]
    );
    let kinds: Vec<&EntryKind> = state.transcript.iter().map(|e| &e.kind).collect();
    assert_eq!(
        kinds.len(),
        3,
        "user prompt, one merged thought, one merged message: {kinds:?}"
    );
    assert_eq!(kinds[0], &EntryKind::User("/dry-run add a --json flag".into()));
    let EntryKind::Thought { text, expanded } = kinds[1] else {
        panic!("a thought: {:?}", kinds[1])
    };
    assert!(text.starts_with("Workflow feature_with_iterative_testing") && text.contains("docs: skip"));
    assert!(!expanded, "thoughts start collapsed");
    assert_eq!(
        kinds[2],
        &EntryKind::Agent("Dry run: 3 stages planned, nothing executed.\n".into())
    );
    let names: Vec<_> = state.commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["workflow", "dry-run", "runs", "rollback"]);
    assert_eq!(state.commands[0].hint.as_deref(), Some("NAME"));
    assert_eq!(state.run, RunStatus::Stopped("end_turn".into()));
    assert_eq!(state.skipped, 0);
}

#[test]
fn an_editing_run_tracks_tool_calls_and_turns_the_diff_into_an_answered_review() {
    let state = replay(include_str!("fixtures/edit_review.jsonl"));
    assert_eq!(
        steps(&state),
        [
            ("Implement the flag (coder)", StepStatus::Completed),
            ("Run the tests (tester): failed", StepStatus::Failed)
        ]
    );
    let read = state.tool_call_by_id("run-7/t1").expect("the read call");
    assert_eq!((read.kind, read.status), (ToolKind::Read, ToolCallStatus::Completed));
    assert_eq!(read.locations[0].path, PathBuf::from("/ws/cli.py"));
    assert_eq!(read.locations[0].line, Some(12));
    assert_eq!(read.output, "def main():\n    pass");
    let tests = state.tool_call_by_id("run-7/t2").expect("the test run");
    assert_eq!(
        (tests.status, tests.output.as_str()),
        (ToolCallStatus::Failed, "1 failed, 3 passed")
    );

    let review = state.review.as_ref().expect("the diff became the review");
    assert_eq!(review.tool_call_id, "run-7/review-1");
    assert_eq!(review.run_id.as_deref(), Some("run-7"));
    let files: Vec<_> = review
        .files
        .iter()
        .map(|f| (f.path.to_str().unwrap(), f.status, f.added, f.removed))
        .collect();
    assert_eq!(
        files,
        [
            ("/ws/cli.py", FileStatus::Modified, 3, 2),
            ("/ws/NOTES.md", FileStatus::Added, 1, 0)
        ]
    );
    assert_eq!(review.answer.as_deref(), Some("accept"));
    assert!(state.permission.is_none(), "the answered request is closed");
    let call = state.tool_call_by_id("run-7/review-1").unwrap();
    assert_eq!(call.status, ToolCallStatus::Completed);
    assert!(call.output.starts_with("Accepted: 1 commit(s)"));
    assert_eq!(
        call.diffs.len(),
        2,
        "ided's final update keeps the diffs (the run can be rolled back)"
    );
    // Tool calls appear in the transcript once each, in order.
    let tools: Vec<usize> = state
        .transcript
        .iter()
        .filter_map(|e| if let EntryKind::Tool(i) = e.kind { Some(i) } else { None })
        .collect();
    assert_eq!(tools, [0, 1, 2]);
    assert_eq!(state.run, RunStatus::Stopped("end_turn".into()));
}

#[test]
fn a_permission_request_offers_accept_reject_and_feedback_until_answered() {
    let recording = include_str!("fixtures/edit_review.jsonl");
    let events = RecordedEvent::parse_lines(recording).unwrap();
    let until_permission = events
        .iter()
        .position(|e| matches!(e, RecordedEvent::Permission { .. }))
        .unwrap();
    let state = RecordedEvent::replay("s-1", &events[..=until_permission]);
    let permission = state.permission.as_ref().expect("a pending permission request");
    assert_eq!(permission.title, "Review run run-7: 2 file(s), +3 -1");
    let choices: Vec<_> = permission
        .choices
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.role))
        .collect();
    assert_eq!(
        choices,
        [
            ("accept", "Accept all", ChoiceRole::Accept),
            ("reject", "Reject", ChoiceRole::Reject),
            ("feedback", "Send feedback", ChoiceRole::Feedback)
        ]
    );
    assert_eq!(state.review.as_ref().unwrap().answer, None);
    assert!(state.is_running());
}

#[test]
fn cancelling_stops_the_run_marks_the_running_stage_cancelled_and_the_later_ones_skipped() {
    let events = RecordedEvent::parse_lines(include_str!("fixtures/cancel.jsonl")).unwrap();
    let mut state = RecordedEvent::replay("s-1", &events[..3]);
    assert_eq!(state.run, RunStatus::Cancelling, "cancel sent, prompt not answered yet");
    events[3].apply_to(&mut state);
    assert_eq!(state.run, RunStatus::Stopped("cancelled".into()));
    assert_eq!(
        steps(&state),
        [
            ("Plan (architect)", StepStatus::Completed),
            ("Implement (coder)", StepStatus::Cancelled),
            ("Review (reviewer)", StepStatus::Skipped)
        ]
    );
    assert_eq!(
        state.transcript.last().unwrap().kind,
        EntryKind::Notice("Run cancelled.".into())
    );
}

#[test]
fn the_agent_exiting_fails_the_run_closes_the_request_and_keeps_the_stderr_tail() {
    let state = replay(include_str!("fixtures/agent_exit.jsonl"));
    let exit = state.exit.as_ref().expect("the exit is recorded");
    assert_eq!(exit.code, Some(1));
    assert_eq!(exit.stderr_tail.last().unwrap(), "RuntimeError: daemon socket closed");
    assert_eq!(state.run, RunStatus::Failed("the agent exited (exit code 1)".into()));
    assert!(state.permission.is_none());
    assert_eq!(
        state.transcript.last().unwrap().kind,
        EntryKind::Notice("The agent exited (exit code 1).".into())
    );
}

#[test]
fn malformed_unknown_and_foreign_updates_are_skipped_and_the_rest_applies() {
    let state = replay(include_str!("fixtures/malformed.jsonl"));
    assert_eq!(state.skipped, 4);
    assert_eq!(state.applied, 2);
    assert_eq!(state.transcript.len(), 1);
    assert_eq!(state.transcript[0].kind, EntryKind::Agent("before after".into()));
}

#[test]
fn streamed_text_grows_one_entry_and_bumps_only_its_revision() {
    let mut state = SessionState::for_session("s-1", None);
    state.prompt_sent("hi");
    let chunk = |text: &str| serde_json::json!({"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":text}}});
    state.apply_json(&chunk("a"));
    let user_revision = state.transcript[0].revision;
    let first = state.transcript[1].revision;
    state.apply_json(&chunk("b"));
    assert_eq!(state.transcript.len(), 2);
    assert_eq!(
        state.transcript[0].revision, user_revision,
        "older entries keep their revision (cached views)"
    );
    assert!(state.transcript[1].revision > first);
}

#[test]
fn five_thousand_updates_fold_in_well_under_a_second() {
    let mut state = SessionState::for_session("s-1", None);
    let started = std::time::Instant::now();
    for i in 0..5_000 {
        let update = if i % 3 == 0 {
            serde_json::json!({"sessionId":"s-1","update":{"sessionUpdate":"tool_call","toolCallId":format!("t{i}"),"title":"read","kind":"read","status":"completed"}})
        } else {
            serde_json::json!({"sessionId":"s-1","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"x"}}})
        };
        state.apply_json(&update);
    }
    assert_eq!(state.applied, 5_000);
    assert!(started.elapsed().as_secs_f64() < 1.0, "took {:?}", started.elapsed());
}

#[test]
fn a_review_ided_reports_rolled_back_keeps_that_state_apart_from_a_plain_accept() {
    let accepted = replay(include_str!("fixtures/edit_review.jsonl"));
    let review = accepted.tool_call_by_id("run-7/review-1").expect("the review call");
    assert_eq!(
        (review.status, review.review_state.as_deref()),
        (ToolCallStatus::Completed, None)
    );

    let rolled_back = include_str!("fixtures/edit_review.jsonl").to_owned()
        + r#"{"event":"update","params":{"sessionId":"s-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"run-7/review-1","status":"completed","_meta":{"ided/review":"rolled_back"}}}}"#
        + "\n";
    let state = replay(&rolled_back);
    let review = state.tool_call_by_id("run-7/review-1").expect("the review call");
    assert_eq!(review.review_state.as_deref(), Some("rolled_back"));
    assert_eq!(review.diffs.len(), 2, "the diffs stay");
}
