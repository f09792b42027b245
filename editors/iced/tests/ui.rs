//! UI behaviour with iced_test's headless Simulator: typing and sending a prompt, the plan
//! appearing, and the exact permission outcome each review button sends.

mod support;

use std::sync::{Arc, mpsc};

use agent_client_protocol::v1::schema::{
    ContentBlock, RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse, SessionMode,
    SessionModeState,
};
use iced::Point;
use iced::keyboard::key::Named;
use iced_test::{selector, simulator};
use ided_iced::acp::{AgentInfo, Command, Connection, Event, Launch, Reply};
use ided_iced::app::{Center, FEEDBACK_META, KEEP_META};
use ided_iced::ui::agent_panel::{FEEDBACK_ID, PROMPT_ID};
use ided_iced::{App, Message, Options};
use serde_json::json;

/// An app connected to a detached connection whose commands the test reads.
fn connected_app() -> (
    App,
    futures::channel::mpsc::UnboundedReceiver<Command>,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().unwrap();
    let launch = Launch::resolve(Some("/nonexistent/ided"), dir.path()).unwrap();
    let (mut app, _) = App::new(Options {
        workspace: dir.path().to_path_buf(),
        launch: Ok(launch),
        script: Vec::new(),
        screenshot: None,
        answer: None,
        side_by_side: false,
        bench: None,
        started: std::time::Instant::now(),
        demo: Default::default(),
    });
    let (connection, mut commands) = Connection::detached();
    let _ = app.update(Message::Acp(Event::Started(connection)));
    let _ = app.update(Message::Acp(Event::Initialized(AgentInfo {
        name: "ided".into(),
        version: "0".into(),
        load_session: true,
        list_sessions: false,
        embedded_context: true,
    })));
    assert!(
        matches!(commands.try_recv(), Ok(Command::NewSession)),
        "initialize is followed by session/new"
    );
    let modes = SessionModeState::new(
        "code",
        vec![SessionMode::new("ask", "Ask"), SessionMode::new("code", "Code")],
    );
    let _ = app.update(Message::Acp(Event::SessionReady {
        session_id: "s-1".into(),
        modes: Some(modes),
        loaded: false,
    }));
    (app, commands, dir)
}

fn update(app: &mut App, params: serde_json::Value) {
    let _ = app.update(Message::Acp(Event::Update(Arc::new(params))));
}

/// Runs the simulator's messages through the app's update.
fn apply(app: &mut App, messages: Vec<Message>) {
    for message in messages {
        let _ = app.update(message);
    }
}

#[test]
fn typing_a_prompt_and_pressing_enter_sends_it_and_the_plan_rows_appear() {
    let (mut app, mut commands, _dir) = connected_app();
    let typed = {
        let mut ui = simulator(app.view());
        ui.click(selector::id(PROMPT_ID)).expect("the prompt box");
        ui.typewrite("/dry-run add a --json flag");
        ui.into_messages().collect::<Vec<_>>()
    };
    apply(&mut app, typed);
    assert_eq!(app.panel.prompt, "/dry-run add a --json flag");
    // The view is rebuilt after every message (as iced does): now Enter submits.
    let submitted = {
        let mut ui = simulator(app.view());
        ui.click(selector::id(PROMPT_ID)).expect("the prompt box");
        ui.tap_key(Named::Enter);
        ui.into_messages().collect::<Vec<_>>()
    };
    apply(&mut app, submitted);
    match commands.try_recv() {
        Ok(Command::Prompt { session_id, blocks }) => {
            assert_eq!(session_id, "s-1");
            assert_eq!(blocks.len(), 1, "no attachment without an open file");
            let ContentBlock::Text(text) = &blocks[0] else {
                panic!("a text block: {blocks:?}")
            };
            assert_eq!(text.text, "/dry-run add a --json flag");
        }
        other => panic!("expected a prompt, got {other:?}"),
    }
    assert!(app.panel.prompt.is_empty(), "the prompt box is cleared");

    update(
        &mut app,
        json!({"sessionId":"s-1","update":{"sessionUpdate":"plan","entries":[
            {"content":"Implement the flag (coder)","priority":"high","status":"in_progress"},
            {"content":"Write tests (test_writer)","priority":"medium","status":"pending"}]}}),
    );
    let mut ui = simulator(app.view());
    assert!(
        ui.find("Implement the flag (coder)").is_ok(),
        "the first plan row is on screen"
    );
    assert!(
        ui.find("Write tests (test_writer)").is_ok(),
        "the second plan row is on screen"
    );
    assert!(
        ui.find("in progress").is_ok() && ui.find("pending").is_ok(),
        "with their statuses"
    );
    assert!(ui.find("Cancel").is_ok(), "a running prompt can be cancelled");
}

#[test]
fn cancel_sends_session_cancel_and_the_ui_shows_the_run_stop() {
    let (mut app, mut commands, _dir) = connected_app();
    app.panel.prompt = "refactor".into();
    let _ = app.update(Message::Agent(ided_iced::ui::agent_panel::Message::Send));
    assert!(matches!(commands.try_recv(), Ok(Command::Prompt { .. })));
    let messages = {
        let mut ui = simulator(app.view());
        ui.click("Cancel").expect("the Cancel button");
        ui.into_messages().collect::<Vec<_>>()
    };
    apply(&mut app, messages);
    assert!(matches!(commands.try_recv(), Ok(Command::Cancel { session_id }) if session_id == "s-1"));
    let _ = app.update(Message::Acp(Event::PromptDone {
        session_id: "s-1".into(),
        outcome: Ok(agent_client_protocol::v1::schema::StopReason::Cancelled),
    }));
    let mut ui = simulator(app.view());
    assert!(ui.find("stopped: cancelled").is_ok());
    assert!(ui.find("Run cancelled.").is_ok());
}

/// A review with a permission request whose answer lands in the returned receiver.
fn reviewing_app() -> (
    App,
    mpsc::Receiver<Result<RequestPermissionResponse, String>>,
    tempfile::TempDir,
) {
    let (mut app, _commands, dir) = connected_app();
    let root = dir.path().display().to_string();
    update(
        &mut app,
        json!({"sessionId":"s-1","update":{"sessionUpdate":"tool_call","toolCallId":"run-1/review-1",
            "title":"Review run run-1: 1 file(s), +1 -1","kind":"edit","status":"pending",
            "content":[{"type":"diff","path":format!("{root}/a.py"),"oldText":"x = 1\n","newText":"x = 2\n"}],
            "rawInput":{"run_id":"run-1"}}}),
    );
    let request: RequestPermissionRequest = serde_json::from_value(json!({
        "sessionId":"s-1",
        "toolCall":{"toolCallId":"run-1/review-1","title":"Review run run-1: 1 file(s), +1 -1","kind":"edit","status":"pending"},
        "options":[{"optionId":"accept","name":"Accept all","kind":"allow_once"},
                   {"optionId":"reject","name":"Reject","kind":"reject_once"},
                   {"optionId":"feedback","name":"Send feedback","kind":"reject_once"}]}))
    .unwrap();
    let (tx, rx) = mpsc::channel();
    let reply = Reply::new(move |answer| tx.send(answer).unwrap());
    let _ = app.update(Message::Acp(Event::Permission(Arc::new(request), reply)));
    assert_eq!(app.center, Center::Review, "the review opens with the request");
    (app, rx, dir)
}

/// Clicks `label` and runs what the click leads to (file reads and writes) to its end.
fn click_and_run(app: &mut App, label: &str) {
    let messages = {
        let mut ui = simulator(app.view());
        ui.click(label).unwrap_or_else(|e| panic!("{label}: {e:?}"));
        ui.into_messages().collect::<Vec<_>>()
    };
    for message in messages {
        let task = app.update(message);
        support::run_task(app, task);
    }
}

fn click(app: &mut App, label: &str) {
    let messages = {
        let mut ui = simulator(app.view());
        ui.click(label).unwrap_or_else(|e| panic!("{label}: {e:?}"));
        ui.into_messages().collect::<Vec<_>>()
    };
    apply(app, messages);
}

fn selected(answer: Result<RequestPermissionResponse, String>) -> (String, Option<serde_json::Value>) {
    let response = answer.expect("an answer, not an error");
    let RequestPermissionOutcome::Selected(selected) = response.outcome else {
        panic!("a selected outcome: {:?}", response.outcome)
    };
    let meta = response.meta.map(serde_json::Value::Object);
    (selected.option_id.0.to_string(), meta)
}

#[test]
fn clicking_accept_all_sends_the_accept_option_and_marks_the_review() {
    let (mut app, answers, _dir) = reviewing_app();
    {
        let mut ui = simulator(app.view());
        assert!(
            ui.find("+1").is_ok() && ui.find("−1").is_ok(),
            "the file list shows +/− counts"
        );
        assert!(ui.find("x = 2").is_err(), "diff lines are prefixed");
        assert!(ui.find("+x = 2").is_ok(), "the added line is on screen");
        assert!(ui.find("-x = 1").is_ok(), "the removed line is on screen");
    }
    click(&mut app, "Accept all");
    assert_eq!(selected(answers.try_recv().unwrap()), ("accept".into(), None));
    assert!(answers.try_recv().is_err(), "exactly one answer");
    let review = app.session.as_ref().unwrap().review.as_ref().unwrap();
    assert_eq!(review.answer.as_deref(), Some("accept"));
    assert_eq!(
        app.reload_after_prompt.len(),
        1,
        "the accepted file reloads when the prompt ends"
    );
}

/// After Accept (and after a rollback) the review pane still offered Keep / Reject for every
/// file and hunk, said "keeping 1 of 1 hunks" as if the review waited, and never said the run
/// was rolled back; it read "1 files".
#[test]
fn an_answered_review_says_how_it_ended_and_offers_no_keep_or_reject() {
    let controls = [
        "Keep all",
        "Reject all",
        "Keep file",
        "Reject file",
        "Keep hunk",
        "Reject hunk",
    ];
    let (app, _answers, _dir) = reviewing_app();
    {
        let mut ui = simulator(app.view());
        assert!(ui.find("Review (1 file +1 −1)").is_ok(), "the tab counts one file");
        assert!(ui.find("1 file  +1 −1").is_ok());
        assert!(ui.find("1 file, +1 −1").is_ok(), "the permission card too");
        assert!(ui.find("keeping 1 of 1 hunks").is_ok());
        for label in controls {
            assert!(ui.find(label).is_ok(), "{label} while the review waits");
        }
    }
    let (mut app, mut commands, _dir) = accepted_review_app();
    assert_eq!(app.center, Center::Review, "the review stays on screen");
    let gone = |app: &App, when: &str| {
        let mut ui = simulator(app.view());
        for label in controls {
            assert!(ui.find(label).is_err(), "no {label} {when}");
        }
        assert!(ui.find("keeping 1 of 1 hunks").is_err(), "{when}");
        assert!(ui.find("kept").is_ok(), "the file's and the hunk's state stay {when}");
    };
    gone(&app, "after Accept");
    assert!(simulator(app.view()).find("Accepted").is_ok());
    click(&mut app, "Roll back run run-1");
    assert!(matches!(commands.try_recv(), Ok(Command::Prompt { .. })));
    assert!(simulator(app.view()).find("Accepted; rolling back run run-1…").is_ok());
    finish_rollback_turn(
        &mut app,
        Ok("Rolled back run run-1: 1 revert commit(s) on refs/heads/main (3af0aa8)."),
    );
    gone(&app, "after the rollback");
    assert!(
        simulator(app.view()).find("Accepted; run run-1 rolled back").is_ok(),
        "the review pane says the run was rolled back"
    );
}

#[test]
fn clicking_reject_sends_the_reject_option() {
    let (mut app, answers, _dir) = reviewing_app();
    click(&mut app, "Reject");
    assert_eq!(selected(answers.try_recv().unwrap()), ("reject".into(), None));
    assert!(app.reload_after_prompt.is_empty());
}

#[test]
fn feedback_is_disabled_until_typed_and_then_goes_out_in_the_answer_meta() {
    let (mut app, answers, _dir) = reviewing_app();
    click(&mut app, "Send feedback");
    assert!(answers.try_recv().is_err(), "no answer without feedback text");
    let messages = {
        let mut ui = simulator(app.view());
        ui.click(selector::id(FEEDBACK_ID)).expect("the feedback box");
        ui.typewrite("keep the old flag too");
        ui.into_messages().collect::<Vec<_>>()
    };
    apply(&mut app, messages);
    click(&mut app, "Send feedback");
    assert_eq!(
        selected(answers.try_recv().unwrap()),
        (
            "feedback".into(),
            Some(json!({ FEEDBACK_META: "keep the old flag too" }))
        )
    );
}

#[test]
fn the_agent_exiting_shows_a_banner_with_the_exit_code_stderr_and_restart() {
    let (mut app, _commands, _dir) = connected_app();
    let _ = app.update(Message::Acp(Event::Exited(ided_iced::session::AgentExit {
        code: Some(3),
        stderr_tail: vec!["ERROR boom: the daemon socket closed".into()],
        message: "the agent exited".into(),
    })));
    let messages = {
        let mut ui = simulator(app.view());
        assert!(ui.find("ided acp stopped (exit code 3): the agent exited").is_ok());
        assert!(ui.find("ERROR boom: the daemon socket closed").is_ok());
        ui.click("Restart").expect("a Restart button");
        ui.into_messages().collect::<Vec<_>>()
    };
    apply(&mut app, messages);
    assert!(app.exit.is_none() && app.session.is_none());
    assert_eq!(
        app.launch.as_ref().unwrap().generation,
        1,
        "restart starts a new connection"
    );
}

#[test]
fn tab_completes_a_slash_command_from_the_agent_list() {
    let (mut app, _commands, _dir) = connected_app();
    update(
        &mut app,
        json!({"sessionId":"s-1","update":{"sessionUpdate":"available_commands_update","availableCommands":[
            {"name":"workflow","description":"Run a named workflow","input":{"hint":"NAME"}},
            {"name":"dry-run","description":"Plan only"}]}}),
    );
    app.panel.prompt = "/wo".into();
    {
        let mut ui = simulator(app.view());
        assert!(ui.find("/workflow NAME").is_ok(), "the matching command is suggested");
        assert!(ui.find("/dry-run").is_err(), "non-matching ones are not");
    }
    let _ = app.update(Message::Agent(ided_iced::ui::agent_panel::Message::Complete));
    assert_eq!(app.panel.prompt, "/workflow ");
}

#[test]
fn an_accepted_review_offers_roll_back_which_sends_the_rollback_command() {
    let (mut app, answers, _dir) = reviewing_app();
    {
        let mut ui = simulator(app.view());
        assert!(
            ui.find("Roll back run run-1").is_err(),
            "nothing to roll back before accept"
        );
    }
    click(&mut app, "Accept all");
    assert_eq!(selected(answers.try_recv().unwrap()).0, "accept");
    update(
        &mut app,
        json!({"sessionId":"s-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"run-1/review-1",
            "status":"completed","rawOutput":"Accepted: 1 commit(s)"}}),
    );
    let _ = app.update(Message::Acp(Event::PromptDone {
        session_id: "s-1".into(),
        outcome: Ok(agent_client_protocol::v1::schema::StopReason::EndTurn),
    }));
    let (connection, mut commands) = Connection::detached();
    app.connection = Some(connection);
    click(&mut app, "Roll back run run-1");
    match commands.try_recv() {
        Ok(Command::Prompt { blocks, .. }) => {
            let ContentBlock::Text(text) = &blocks[0] else {
                panic!("{blocks:?}")
            };
            assert_eq!(text.text, "/rollback run-1");
        }
        other => panic!("expected the rollback prompt, got {other:?}"),
    }
}

#[test]
fn opening_another_folder_switches_the_workspace_and_restarts_the_agent_there() {
    let (mut app, _commands, _dir) = connected_app();
    let other = tempfile::tempdir().unwrap();
    let messages = {
        let mut ui = simulator(app.view());
        ui.click("Open folder…").expect("the open-folder box");
        ui.typewrite("x");
        ui.into_messages().collect::<Vec<_>>()
    };
    apply(&mut app, messages);
    assert_eq!(app.open_path, "x", "typing goes into the open-folder box");
    let _ = app.update(Message::WorkspaceOpened(Ok(other.path().to_path_buf())));
    assert_eq!(app.workspace, other.path());
    let launch = app.launch.as_ref().unwrap();
    assert_eq!((launch.workspace.as_path(), launch.generation), (other.path(), 1));
    assert!(
        app.session.is_none() && app.connection.is_none(),
        "a fresh agent process for the new folder"
    );
    assert!(app.open_path.is_empty());
}

#[test]
fn the_agent_reads_the_unsaved_text_of_an_open_buffer() {
    let (mut app, _commands, dir) = connected_app();
    let path = dir.path().join("a.py");
    std::fs::write(&path, "x = 1\ny = 2\n").unwrap();
    app.buffers.open(path.clone(), "x = 1\ny = 2\n", None);
    let messages = {
        let mut ui = simulator(app.view());
        ui.click(selector::id(ided_iced::ui::editor::EDITOR_ID))
            .expect("the editor");
        ui.typewrite("# unsaved\n");
        ui.into_messages().collect::<Vec<_>>()
    };
    apply(&mut app, messages);
    assert!(app.buffers.open[0].dirty, "typing made the buffer dirty");
    let unsaved = app.buffers.open[0].content.text();
    assert!(unsaved.contains("# unsaved"), "{unsaved:?}");

    let request: agent_client_protocol::v1::schema::ReadTextFileRequest =
        serde_json::from_value(json!({"sessionId": "s-1", "path": path})).unwrap();
    let (tx, rx) = mpsc::channel();
    let reply = Reply::new(move |answer| tx.send(answer).unwrap());
    let _ = app.update(Message::Acp(Event::ReadFile(Arc::new(request), reply)));
    let answer = rx
        .try_recv()
        .expect("answered at once from the buffer")
        .expect("not an error");
    assert_eq!(
        answer.content, unsaved,
        "the agent sees the unsaved text, not the file on disk"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "x = 1\ny = 2\n");
}

fn advertise_commands(app: &mut App) {
    update(
        app,
        json!({"sessionId":"s-1","update":{"sessionUpdate":"available_commands_update","availableCommands":[
            {"name":"workflow","description":"Run a named workflow","input":{"hint":"NAME"}},
            {"name":"dry-run","description":"Plan only"},
            {"name":"runs","description":"List runs"},
            {"name":"rollback","description":"Revert an accepted run","input":{"hint":"ID"}}]}}),
    );
}

/// Issue 21, Iced defect 1: the slash-command list appearing under the typing took the prompt
/// box's place in the widget tree, so each key moved the focus out of it.
#[test]
fn typing_a_slash_command_keeps_the_focus_in_the_prompt_while_the_list_changes() {
    let (mut app, _commands, _dir) = connected_app();
    advertise_commands(&mut app);
    let mut live = support::Live::new();
    live.click_id(&mut app, PROMPT_ID);
    live.type_keys(&mut app, "/ru");
    assert_eq!(app.panel.prompt, "/ru", "every key reached the prompt");
    {
        let mut ui = simulator(app.view());
        assert!(ui.find("/runs").is_ok(), "the list shows the match");
        assert!(ui.find("/workflow NAME").is_err());
    }
    live.type_keys(&mut app, "ns x");
    assert_eq!(
        app.panel.prompt, "/runs x",
        "the list emptying does not take the focus either"
    );
}

/// A `/rollback` turn ends with ided's answer (`Rolled back run ID` or an error).
fn finish_rollback_turn(app: &mut App, answer: Result<&str, &str>) {
    match answer {
        Ok(text) => {
            update(
                app,
                json!({"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk",
                    "content":{"type":"text","text":text}}}),
            );
            let _ = app.update(Message::Acp(Event::PromptDone {
                session_id: "s-1".into(),
                outcome: Ok(agent_client_protocol::v1::schema::StopReason::EndTurn),
            }));
        }
        Err(error) => {
            let _ = app.update(Message::Acp(Event::PromptDone {
                session_id: "s-1".into(),
                outcome: Err(error.into()),
            }));
        }
    }
}

fn accepted_review_app() -> (
    App,
    futures::channel::mpsc::UnboundedReceiver<Command>,
    tempfile::TempDir,
) {
    let (mut app, answers, dir) = reviewing_app();
    click(&mut app, "Accept all");
    assert_eq!(selected(answers.try_recv().unwrap()).0, "accept");
    update(
        &mut app,
        json!({"sessionId":"s-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"run-1/review-1",
            "status":"completed","rawOutput":"Accepted: 1 commit(s)"}}),
    );
    let _ = app.update(Message::Acp(Event::PromptDone {
        session_id: "s-1".into(),
        outcome: Ok(agent_client_protocol::v1::schema::StopReason::EndTurn),
    }));
    let (connection, commands) = Connection::detached();
    app.connection = Some(connection);
    (app, commands, dir)
}

/// Issue 21, Iced defect 3: after a rollback the button went on offering it; a second click
/// showed ided's refusal as raw JSON, twice.
#[test]
fn roll_back_is_offered_once_and_after_the_rollback_the_card_says_rolled_back() {
    let (mut app, mut commands, _dir) = accepted_review_app();
    click(&mut app, "Roll back run run-1");
    assert!(matches!(commands.try_recv(), Ok(Command::Prompt { .. })));
    {
        let mut ui = simulator(app.view());
        assert!(
            ui.find("Roll back run run-1").is_err(),
            "no second rollback while one runs"
        );
        assert!(ui.find("Rolling back run run-1…").is_ok());
    }
    finish_rollback_turn(
        &mut app,
        Ok("Rolled back run run-1: 1 revert commit(s) on main (abc1234567)."),
    );
    let mut ui = simulator(app.view());
    assert!(
        ui.find("Roll back run run-1").is_err(),
        "a rolled-back run offers no Roll back"
    );
    assert!(ui.find("Run run-1 rolled back").is_ok());
}

#[test]
fn a_refused_rollback_reads_as_text_once_and_roll_back_comes_back() {
    let (mut app, mut commands, _dir) = accepted_review_app();
    click(&mut app, "Roll back run run-1");
    assert!(matches!(commands.try_recv(), Ok(Command::Prompt { .. })));
    // What the connection makes of ided's JSON-RPC error (see acp::error_text).
    let mut error = agent_client_protocol::Error::internal_error();
    error.message = "run run-1 is rolled back, not accepted: nothing to roll back".into();
    error.data = Some(json!({"code": "vcs_error", "details": "VcsError: run run-1 is rolled back"}));
    let shown = ided_iced::acp::error_text::human(&error);
    finish_rollback_turn(&mut app, Err(&shown));
    let mut ui = simulator(app.view());
    assert!(
        ui.find(
            "Rollback of run run-1 refused: run run-1 is rolled back, not accepted: nothing to roll back [vcs_error]"
        )
        .is_ok(),
        "the transcript says why, as text"
    );
    // Issue 39, Iced item 5: the session status turned red "failed" for a refused rollback.
    assert!(
        ui.find("rollback refused").is_ok(),
        "the header says the rollback was refused"
    );
    assert!(ui.find("failed").is_err(), "the session did not fail");
    assert!(
        ui.find(shown.as_str()).is_err() && ui.find(format!("failed: {shown}").as_str()).is_err(),
        "said once"
    );
    assert!(ui.find("Roll back run run-1").is_ok(), "not rolled back: offered again");
}

/// Issue 21, Iced defect 6: after a cancel the later stages stayed `pending`.
#[test]
fn after_a_cancel_the_running_stage_is_cancelled_and_the_later_ones_skipped() {
    let (mut app, _commands, _dir) = connected_app();
    app.panel.prompt = "refactor".into();
    let _ = app.update(Message::Agent(ided_iced::ui::agent_panel::Message::Send));
    update(
        &mut app,
        json!({"sessionId":"s-1","update":{"sessionUpdate":"plan","entries":[
            {"content":"Plan (planner)","priority":"high","status":"completed"},
            {"content":"Implement (coder)","priority":"high","status":"in_progress"},
            {"content":"Test (tester)","priority":"medium","status":"pending"}]}}),
    );
    let _ = app.update(Message::Agent(ided_iced::ui::agent_panel::Message::Cancel));
    let _ = app.update(Message::Acp(Event::PromptDone {
        session_id: "s-1".into(),
        outcome: Ok(agent_client_protocol::v1::schema::StopReason::Cancelled),
    }));
    let statuses: Vec<_> = app
        .session
        .as_ref()
        .unwrap()
        .plan
        .iter()
        .map(|p| p.status.label())
        .collect();
    assert_eq!(statuses, ["completed", "cancelled", "skipped"]);
    let mut ui = simulator(app.view());
    assert!(ui.find("pending").is_err(), "no stage is left pending");
    assert!(ui.find("cancelled").is_ok() && ui.find("skipped").is_ok());
}

/// Issue 21, Iced defect 6: a long tool-call title pushed the status past the card's edge.
#[test]
fn a_tool_calls_status_stays_inside_the_card_with_a_long_title() {
    let (mut app, _commands, _dir) = connected_app();
    // Enough output that the transcript scrolls (its scrollbar showed over the cards' edge).
    for i in 0..40 {
        update(
            &mut app,
            json!({"sessionId":"s-1","update":{"sessionUpdate":"tool_call","toolCallId":format!("r-{i}"),
                "title":format!("read file {i}"),"kind":"read","status":"completed"}}),
        );
    }
    let title = "Search the workspace for every caller of parse_configuration_file_with_overrides \
                 and read each one of them to find the crash";
    update(
        &mut app,
        json!({"sessionId":"s-1","update":{"sessionUpdate":"tool_call","toolCallId":"t-1",
            "title":title,"kind":"search","status":"in_progress"}}),
    );
    let mut ui = simulator(app.view());
    let status = ui.find("in_progress").expect("the status is on screen");
    let (bounds, visible) = (status.bounds(), status.visible_bounds().expect("visible"));
    assert!(
        (bounds.width - visible.width).abs() < 0.5 && (bounds.x - visible.x).abs() < 0.5,
        "the status is not clipped: {bounds:?} shown as {visible:?}"
    );
    assert!(bounds.x + bounds.width <= support::SIZE.width, "{bounds:?}");
    // The panel's right edge is the Send button's; the transcript's scrollbar lane is
    // there, so the card and its status must end before it.
    let send = ui.find("Send").expect("the Send button").bounds();
    let panel_right = send.x + send.width;
    assert!(
        bounds.x + bounds.width <= panel_right - 8.0,
        "the status stays left of the scrollbar: {bounds:?}, panel ends at {panel_right}"
    );
}

fn ctrl_s() -> Vec<iced::Event> {
    use iced::keyboard::{self, Key, Modifiers};
    let key = Key::Character("s".into());
    vec![iced::Event::Keyboard(keyboard::Event::KeyPressed {
        key: key.clone(),
        modified_key: key.clone(),
        physical_key: keyboard::key::Physical::Code(keyboard::key::Code::KeyS),
        location: keyboard::Location::Standard,
        modifiers: Modifiers::CTRL,
        text: None,
        repeat: false,
    })]
}

/// Presses Ctrl+S the way the window does (the keyboard subscription) and runs the save.
fn save_with_ctrl_s(app: &mut App) {
    for event in ctrl_s() {
        let iced::Event::Keyboard(key) = event else { continue };
        let task = app.update(Message::Key(key));
        support::run_task(app, task);
    }
}

fn end_turn(app: &mut App) {
    let task = app.update(Message::Acp(Event::PromptDone {
        session_id: "s-1".into(),
        outcome: Ok(agent_client_protocol::v1::schema::StopReason::EndTurn),
    }));
    support::run_task(app, task);
}

/// Issue 21, Iced defect 2: after Roll back the open tab kept the accepted text, and Ctrl+S
/// wrote the rolled-back change back to disk.
#[test]
fn an_open_tab_follows_its_file_after_a_rollback_and_ctrl_s_keeps_the_rolled_back_text() {
    let (mut app, _commands, dir) = connected_app();
    let path = dir.path().join("calc.py");
    let (before, accepted) = ("x = 1\n", "x = 2\n");
    std::fs::write(&path, accepted).unwrap();
    app.buffers.open(path.clone(), accepted, Some(1));
    // The rollback turn: ided reverts the file on disk, then the turn ends.
    app.panel.prompt = "/rollback run-1".into();
    let _ = app.update(Message::Agent(ided_iced::ui::agent_panel::Message::Send));
    std::fs::write(&path, before).unwrap();
    end_turn(&mut app);
    assert_eq!(
        app.buffers.open[0].content.text(),
        before,
        "the tab shows the file as it is now"
    );
    assert!(!app.buffers.open[0].dirty);
    save_with_ctrl_s(&mut app);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        before,
        "Ctrl+S did not bring the change back"
    );
}

#[test]
fn a_tab_with_unsaved_edits_asks_before_it_follows_the_file_and_save_does_not_overwrite_it() {
    let (mut app, _commands, dir) = connected_app();
    let path = dir.path().join("calc.py");
    std::fs::write(&path, "x = 1\n").unwrap();
    app.buffers.open(path.clone(), "x = 1\n", None);
    let mut live = support::Live::new();
    live.click_id(&mut app, ided_iced::ui::editor::EDITOR_ID);
    live.type_keys(&mut app, "# mine\n");
    assert!(app.buffers.open[0].dirty);
    let mine = app.buffers.open[0].content.text();
    // A run is accepted meanwhile: the file changes on disk.
    std::fs::write(&path, "x = 2\n").unwrap();
    end_turn(&mut app);
    assert_eq!(
        app.buffers.open[0].content.text(),
        mine,
        "unsaved edits are not thrown away"
    );
    {
        let mut ui = simulator(app.view());
        assert!(
            ui.find("calc.py changed on disk, and this tab has unsaved edits.")
                .is_ok()
        );
    }
    save_with_ctrl_s(&mut app);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "x = 2\n",
        "no silent overwrite"
    );
    click(&mut app, "Reload from disk");
    assert_eq!(app.buffers.open[0].content.text(), "x = 2\n");
    assert!(!app.buffers.open[0].dirty && app.buffers.open[0].changed_on_disk.is_none());
}

/// Issue 39, Iced item 5: "Keep my edits" over a file ided had just changed, then Ctrl+S,
/// wrote the tab's text back: the accepted change was undone in the working tree, silently.
#[test]
fn a_save_that_would_undo_an_accepted_change_says_so_and_offers_keep_theirs_keep_mine_or_merge() {
    for choice in ["Merge", "Keep mine", "Keep theirs"] {
        let (mut app, mine, dir) = edits_kept_over_an_accepted_run();
        let path = dir.path().join("calc.py");
        save_with_ctrl_s(&mut app);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            CALC_ACCEPTED,
            "{choice}: the save wrote nothing yet"
        );
        assert!(
            simulator(app.view())
                .find(
                    "Saving would undo the change made to calc.py on disk (run run-2 was accepted): \
                     your edits started before it."
                )
                .is_ok(),
            "{choice}: the save says what it would undo: {:?}",
            support::texts(&app)
        );
        click_and_run(&mut app, choice);
        let written = std::fs::read_to_string(&path).unwrap();
        let buffer = &app.buffers.open[0];
        match choice {
            "Merge" => {
                let merged = mine.replace("a + b", "b + a");
                assert_ne!(merged, mine, "the accepted change is on a line the edits left alone");
                assert_eq!(written, merged, "the save went on with both changes");
                assert!(!app.buffers.open[0].dirty);
                assert_eq!(app.status, "saved {}".replace("{}", &path.display().to_string()));
            }
            "Keep mine" => assert_eq!(written, mine, "written on purpose"),
            _ => {
                assert_eq!(written, CALC_ACCEPTED);
                assert_eq!(buffer.content.text(), CALC_ACCEPTED, "the tab shows the accepted text");
                assert!(!buffer.dirty);
            }
        }
    }
}

/// The same choice offered as soon as the file changes under unsaved edits: Merge keeps both.
#[test]
fn unsaved_edits_merge_with_an_accepted_change_and_conflicts_are_marked() {
    let (mut app, _answers, dir) = review_of_files(&[("calc.py", CALC, CALC_ACCEPTED)]);
    let path = dir.path().join("calc.py");
    app.buffers.open(path.clone(), CALC, None);
    let _ = app.update(Message::ShowCenter(Center::Editor));
    let mut live = support::Live::new();
    live.click_id(&mut app, ided_iced::ui::editor::EDITOR_ID);
    live.type_keys(&mut app, "# mine\n");
    let mine = app.buffers.open[0].content.text();
    accept_and_apply(&mut app, &path);
    click(&mut app, "Merge");
    assert_eq!(app.buffers.open[0].content.text(), mine.replace("a + b", "b + a"));
    assert!(app.buffers.open[0].dirty, "merged in the tab, not saved yet");
    save_with_ctrl_s(&mut app);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), mine.replace("a + b", "b + a"));

    // Both sides changed the same line: a conflict block, nothing written.
    let (mut app, _answers, dir) = review_of_files(&[("calc.py", CALC, CALC_ACCEPTED)]);
    let path = dir.path().join("calc.py");
    app.buffers.open(path.clone(), CALC, None);
    let _ = app.update(Message::ShowCenter(Center::Editor));
    let _ = app.update(Message::Editor(ided_iced::ui::editor::Message::Edit(
        iced::widget::text_editor::Action::Move(iced::widget::text_editor::Motion::Down),
    )));
    let _ = app.update(Message::Editor(ided_iced::ui::editor::Message::Edit(
        iced::widget::text_editor::Action::Move(iced::widget::text_editor::Motion::End),
    )));
    for c in "  # mine".chars() {
        let _ = app.update(Message::Editor(ided_iced::ui::editor::Message::Edit(
            iced::widget::text_editor::Action::Edit(iced::widget::text_editor::Edit::Insert(c)),
        )));
    }
    accept_and_apply(&mut app, &path);
    click(&mut app, "Merge");
    let text = app.buffers.open[0].content.text();
    assert!(
        text.contains("<<<<<<< your edits\n    return a + b  # mine\n=======\n    return b + a\n>>>>>>> on disk\n"),
        "{text}"
    );
    assert!(app.status.contains("1 conflict"), "{}", app.status);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        CALC_ACCEPTED,
        "nothing written"
    );
}

const CALC: &str = "def add(a, b):\n    return a + b\n";
const CALC_ACCEPTED: &str = "def add(a, b):\n    return b + a\n";

/// Accepts the pending review of calc.py; ided writes the accepted text; the turn ends.
fn accept_and_apply(app: &mut App, path: &std::path::Path) {
    click(app, "Accept all");
    std::fs::write(path, CALC_ACCEPTED).unwrap();
    update(
        app,
        json!({"sessionId":"s-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"run-2/review-1",
            "status":"completed","rawOutput":"Accepted: 1 commit(s)","_meta":{"ided/review":"accepted"}}}),
    );
    end_turn(app);
    let _ = app.update(Message::ShowCenter(Center::Editor));
}

/// A tab of calc.py with unsaved edits whose file ided changed (run run-2 accepted), the
/// person having kept the edits: the app, the tab's text, the folder.
fn edits_kept_over_an_accepted_run() -> (App, String, tempfile::TempDir) {
    let (mut app, _answers, dir) = review_of_files(&[("calc.py", CALC, CALC_ACCEPTED)]);
    let path = dir.path().join("calc.py");
    app.buffers.open(path.clone(), CALC, None);
    let _ = app.update(Message::ShowCenter(Center::Editor));
    let mut live = support::Live::new();
    live.click_id(&mut app, ided_iced::ui::editor::EDITOR_ID);
    live.type_keys(&mut app, "# mine\n");
    let mine = app.buffers.open[0].content.text();
    assert!(mine.contains("# mine") && mine.contains("a + b"), "{mine:?}");
    accept_and_apply(&mut app, &path);
    assert_eq!(
        app.buffers.open[0].content.text(),
        mine,
        "unsaved edits are not thrown away"
    );
    assert!(
        simulator(app.view())
            .find("calc.py changed on disk (run run-2 was accepted), and this tab has unsaved edits.")
            .is_ok(),
        "{:?}",
        support::texts(&app)
    );
    click(&mut app, "Keep my edits");
    (app, mine, dir)
}

/// A review of `files` (path, old text, new text) with ided's three options pending.
fn review_of_files(
    files: &[(&str, &str, &str)],
) -> (
    App,
    mpsc::Receiver<Result<RequestPermissionResponse, String>>,
    tempfile::TempDir,
) {
    let (mut app, _commands, dir) = connected_app();
    let root = dir.path().display().to_string();
    let content: Vec<_> = files
        .iter()
        .map(|(path, old, new)| {
            std::fs::write(dir.path().join(path), old).unwrap();
            json!({"type":"diff","path":format!("{root}/{path}"),"oldText":old,"newText":new})
        })
        .collect();
    update(
        &mut app,
        json!({"sessionId":"s-1","update":{"sessionUpdate":"tool_call","toolCallId":"run-2/review-1",
            "title":"Review run run-2","kind":"edit","status":"pending","content":content,
            "rawInput":{"run_id":"run-2"}}}),
    );
    let request: RequestPermissionRequest = serde_json::from_value(json!({
        "sessionId":"s-1",
        "toolCall":{"toolCallId":"run-2/review-1","title":"Review run run-2","kind":"edit","status":"pending"},
        "options":[{"optionId":"accept","name":"Accept all","kind":"allow_once"},
                   {"optionId":"reject","name":"Reject","kind":"reject_once"},
                   {"optionId":"feedback","name":"Send feedback","kind":"reject_once"}]}))
    .unwrap();
    let (tx, rx) = mpsc::channel();
    let reply = Reply::new(move |answer| tx.send(answer).unwrap());
    let _ = app.update(Message::Acp(Event::Permission(Arc::new(request), reply)));
    (app, rx, dir)
}

/// Issue 21, Iced defect 4: a long diff line wrapped and was painted over the next row.
#[test]
fn a_long_diff_line_stays_one_row_high_and_clear_of_the_next_row() {
    let long = format!("x = \"{}\"", "wide ".repeat(80));
    let new = format!("{long}\ny = 2\n");
    let (app, _answers, _dir) = review_of_files(&[("a.py", "x = 1\ny = 1\n", &new)]);
    let mut ui = simulator(app.view());
    let first = ui.find(format!("+{long}").as_str()).expect("the long line").bounds();
    let next = ui.find("+y = 2").expect("the next line").bounds();
    assert!(
        first.height <= ided_iced::ui::review::ROW_HEIGHT + 0.5,
        "one row high: {first:?}"
    );
    assert!(first.y + first.height <= next.y + 0.5, "{first:?} overlaps {next:?}");
    // What is drawn: right of "+y = 2" its row is empty (a wrapped line painted text there).
    let image = support::pixels(&app);
    let beside = iced::Rectangle {
        x: next.x + next.width + 24.0,
        y: next.y + 2.0,
        width: 240.0,
        height: next.height - 4.0,
    };
    assert_eq!(
        support::bright_pixels(&image, beside),
        0,
        "nothing painted over the next row"
    );
    let on_line = iced::Rectangle {
        y: first.y + 2.0,
        height: first.height - 4.0,
        ..beside
    };
    assert!(
        support::bright_pixels(&image, on_line) > 0,
        "the long line itself is drawn there"
    );
}

#[test]
fn the_side_by_side_view_shows_the_old_line_left_of_the_new_one() {
    let (mut app, _answers, _dir) = review_of_files(&[("a.py", "a = 0\nx = 1\nz = 0\n", "a = 0\nx = 2\nz = 0\n")]);
    click(&mut app, "Side by side");
    let mut ui = simulator(app.view());
    let old = ui.find("x = 1").expect("the old line, unprefixed").bounds();
    let new = ui.find("x = 2").expect("the new line").bounds();
    assert!((old.y - new.y).abs() < 0.5, "on one row: {old:?} {new:?}");
    assert!(old.x < new.x, "old on the left");
    assert!(ui.find("+x = 2").is_err(), "no unified prefixes");
}

/// A long file name in the narrow file list was drawn over its +/− counts.
#[test]
fn a_long_file_name_is_cut_before_its_counts_in_the_file_list() {
    let counts = |name: &str| {
        let (app, _answers, _dir) = review_of_files(&[(name, "1\n", "2\n")]);
        let mut ui = simulator(app.view());
        let plus = ui.find("+1").expect("the added count").bounds();
        let minus = ui.find("−1").expect("the removed count").bounds();
        let both = iced::Rectangle {
            width: minus.x + minus.width - plus.x,
            ..plus
        };
        support::bright_pixels(&support::pixels(&app), both)
    };
    let short = counts("a.py");
    assert!(short > 0, "the counts are drawn");
    assert_eq!(
        counts("a_rather_long_module_name_for_a_narrow_list.py"),
        short,
        "nothing of the name is drawn over the counts"
    );
}

/// The narrow file list pushed each file's state ("1/2 hunks", "rejected", "kept") off its
/// right edge: the row of Keep file / Reject file / state gave the state only the width left
/// over, none in a quarter of the review pane, so it was squeezed to a sliver and drawn past
/// the list (and "Reject file" broke in two lines).
#[test]
fn every_file_row_shows_its_counts_and_its_whole_state_inside_the_file_list() {
    let long = "a_rather_long_module_name_for_a_narrow_list.py";
    let (mut app, _answers, _dir) = review_of_files(&[
        ("a.py", TWO_HUNKS_OLD, TWO_HUNKS_NEW),
        (long, "1\n", "2\n3\n"),
        ("c.py", "x\n", "y\n"),
    ]);
    let _ = app.update(Message::Review(ided_iced::ui::review::Message::KeepHunk(0, 1, false)));
    let _ = app.update(Message::Review(ided_iced::ui::review::Message::KeepFile(1, false)));
    let mut ui = simulator(app.view());
    let left = ui.find("keeping 2 of 4 hunks").expect("the list's header").bounds().x;
    // The diff pane starts at its layout buttons; the list ends before it.
    let right = ui.find("Unified").expect("the diff pane").bounds().x;
    // A label alone, laid out with all the room it wants: its natural width.
    let natural = |label: &str, size: f32| {
        let alone: iced::Element<'_, ()> = iced::widget::text(label.to_owned()).size(size).into();
        simulator(alone).find(label).expect("the label alone").bounds().width
    };
    let inside = |what: &str, found: iced::Rectangle| {
        assert!(
            found.x >= left - 0.5 && found.x + found.width <= right + 0.5,
            "{what} inside the file list [{left}, {right}]: {found:?}"
        );
    };
    for state in ["1/2 hunks", "rejected", "kept"] {
        let found = ui.find(state).expect("the file's state").bounds();
        inside(state, found);
        assert!(
            (found.width - natural(state, 11.0)).abs() < 0.5,
            "{state} laid out whole: {found:?}"
        );
        assert!(found.height <= 11.0 * 1.3 + 0.5, "{state} on one line: {found:?}");
    }
    for button in ["Keep file", "Reject file"] {
        let found = ui.find(button).expect("the file's button").bounds();
        inside(button, found);
        assert!(found.height <= 11.0 * 1.3 + 0.5, "{button} on one line: {found:?}");
    }
    for counts in ["+2", "−1", "+1"] {
        inside(counts, ui.find(counts).expect("a file's counts").bounds());
    }
}

const TWO_HUNKS_OLD: &str = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\n";
const TWO_HUNKS_NEW: &str = "A\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nN\n";

#[test]
fn rejecting_one_hunk_accepts_with_the_kept_file_texts_and_leaves_the_files_to_ided() {
    let (mut app, answers, dir) = review_of_files(&[
        ("a.py", TWO_HUNKS_OLD, TWO_HUNKS_NEW),
        ("b.py", "1\n", "2\n"),
        ("c.py", "x\n", "y\n"),
    ]);
    assert_eq!(
        app.session.as_ref().unwrap().review.as_ref().unwrap().files[0]
            .hunks
            .len(),
        2
    );
    let _ = app.update(Message::Review(ided_iced::ui::review::Message::KeepHunk(0, 1, false)));
    click(&mut app, "Reject file"); // the first file row's: a.py
    click(&mut app, "Keep file"); // a.py again
    let _ = app.update(Message::Review(ided_iced::ui::review::Message::KeepHunk(0, 1, false)));
    // b.py rejected as a whole from its own row; c.py kept whole.
    let _ = app.update(Message::Review(ided_iced::ui::review::Message::KeepFile(1, false)));
    {
        let mut ui = simulator(app.view());
        assert!(ui.find("keeping 2 of 4 hunks").is_ok());
        assert!(ui.find("1/2 hunks").is_ok() && ui.find("rejected").is_ok());
    }
    click(&mut app, "Apply 2 of 4 hunks");
    let (option, meta) = selected(answers.try_recv().unwrap());
    assert_eq!(option, "accept", "ided accepts the kept part of the run");
    let root = dir.path().display().to_string();
    assert_eq!(
        meta,
        Some(json!({ KEEP_META: [
            {"path": format!("{root}/a.py"), "text": TWO_HUNKS_OLD.replacen('a', "A", 1)},
            {"path": format!("{root}/c.py")},
        ]})),
        "a.py by its text with only the first hunk, c.py whole, b.py left out"
    );
    assert_eq!(
        app.session.as_ref().unwrap().review.as_ref().unwrap().answer.as_deref(),
        Some("kept 2 of 4 hunks")
    );
    end_turn(&mut app);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.py")).unwrap(),
        TWO_HUNKS_OLD,
        "the client writes nothing itself: ided commits the kept hunks"
    );
}

#[test]
fn keeping_every_hunk_is_a_plain_accept_and_rejecting_every_hunk_a_plain_reject() {
    let (mut app, answers, _dir) = review_of_files(&[("a.py", TWO_HUNKS_OLD, TWO_HUNKS_NEW)]);
    click(&mut app, "Accept all");
    assert_eq!(selected(answers.try_recv().unwrap()), ("accept".into(), None));
    let (mut app, answers, _dir) = review_of_files(&[("a.py", TWO_HUNKS_OLD, TWO_HUNKS_NEW)]);
    click(&mut app, "Reject all");
    // Issue 39, Iced item 5: the card then showed two Reject buttons, one of them green.
    let reject_buttons: Vec<String> = support::texts(&app)
        .into_iter()
        .map(|(t, _)| t)
        .filter(|t| t.starts_with("Reject") && t != "Reject all" && t != "Reject file" && t != "Reject hunk")
        .collect();
    assert_eq!(reject_buttons, ["Reject"], "one Reject button on the card");
    let accepting: Vec<String> = support::texts(&app)
        .into_iter()
        .map(|(t, _)| t)
        .filter(|t| t.starts_with("Accept") || t.starts_with("Apply"))
        .collect();
    assert!(accepting.is_empty(), "no button accepts nothing: {accepting:?}");
    click(&mut app, "Reject");
    assert_eq!(selected(answers.try_recv().unwrap()).0, "reject");
}

/// Issue 21, Iced defect 6: the transcript did not follow new output.
#[test]
fn the_transcript_follows_new_output_unless_the_person_scrolled_up() {
    let (mut app, _commands, _dir) = connected_app();
    let mut live = support::Live::new();
    let say = |app: &mut App, text: String| {
        update(
            app,
            json!({"sessionId":"s-1","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":text}}}),
        );
        update(
            app,
            json!({"sessionId":"s-1","update":{"sessionUpdate":"tool_call","toolCallId":format!("t-{text}"),
                "title":format!("read {text}"),"kind":"read","status":"completed"}}),
        );
    };
    for i in 0..5 {
        say(&mut app, format!("step {i}"));
        assert!(live.shows(&app, &format!("read step {i}")));
    }
    for i in 5..60 {
        say(&mut app, format!("step {i}"));
        let _ = live.shows(&app, "read step 0");
    }
    assert!(live.shows(&app, "read step 59"), "the newest output is on screen");
    assert!(!live.shows(&app, "read step 0"), "the oldest scrolled away");
    // The person scrolls up to read: new output does not move what they read.
    let at = live.center_of_text(&app, "read step 59");
    live.wheel(&mut app, at, 6.0);
    assert!(!live.shows(&app, "read step 59"), "scrolled up");
    say(&mut app, "step 60".into());
    assert!(
        !live.shows(&app, "read step 60"),
        "not dragged to the end while reading"
    );
    // Back at the end, it follows again.
    live.wheel(&mut app, at, -1000.0);
    say(&mut app, "step 61".into());
    assert!(live.shows(&app, "read step 61"), "following again");
    // Dragging the scroller down to the end of its track follows too.
    let send = {
        let mut ui = simulator(app.view());
        ui.find("Send").expect("the Send button").bounds()
    };
    let last = live.center_of_text(&app, "read step 61");
    let track_x = send.x + send.width - 4.0;
    live.drag(
        &mut app,
        Point::new(track_x, last.y - 4.0),
        Point::new(track_x, last.y + 200.0),
    );
    for i in 62..70 {
        say(&mut app, format!("step {i}"));
    }
    assert!(live.shows(&app, "read step 69"), "following after a drag to the end");
}

/// Issue 21, Iced defect 6: the transcript did not follow new output. Its scroll position
/// belonged to the panel, not to the session: after the person scrolled up in one session,
/// the next one (a Restart, a session from History) kept that distance from its end, so a
/// transcript shorter than it stayed at its top while the output came in below.
#[test]
fn a_new_session_follows_its_output_after_the_person_scrolled_up_in_the_one_before() {
    let (mut app, _commands, _dir) = connected_app();
    let mut live = support::Live::new();
    let say = |app: &mut App, session: &str, text: String| {
        update(
            app,
            json!({"sessionId":session,"update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":text}}}),
        );
        update(
            app,
            json!({"sessionId":session,"update":{"sessionUpdate":"tool_call","toolCallId":format!("t-{text}"),
                "title":format!("read {text}"),"kind":"read","status":"completed"}}),
        );
    };
    for i in 0..60 {
        say(&mut app, "s-1", format!("step {i}"));
        let _ = live.shows(&app, "read step 0");
    }
    assert!(live.shows(&app, "read step 59"), "the first session follows");
    let at = live.center_of_text(&app, "read step 59");
    live.wheel(&mut app, at, 1000.0);
    assert!(live.shows(&app, "read step 0"), "the person scrolled up to its start");
    let shown = app.update(Message::Acp(Event::SessionReady {
        session_id: "s-2".into(),
        modes: None,
        loaded: true,
    }));
    live.run(&mut app, shown);
    for i in 0..20 {
        say(&mut app, "s-2", format!("next {i}"));
        let _ = live.shows(&app, "read next 0");
    }
    assert!(
        !live.shows(&app, "read next 0"),
        "the new session's output overflows its transcript"
    );
    assert!(
        live.shows(&app, "read next 19"),
        "the new session's newest output is on screen"
    );
}
/// Issue 21, Iced defect 6: each start or Restart added an empty untitled session to History.
#[test]
fn history_leaves_out_the_sessions_nobody_prompted() {
    let (mut app, _commands, _dir) = connected_app();
    let past = |id: &str, title: &str| ided_iced::acp::PastSession {
        session_id: id.into(),
        title: title.into(),
        updated_at: "2026-11-25T10:00:00+00:00".into(),
    };
    let _ = app.update(Message::Acp(Event::Sessions(vec![
        past("s-empty-1", ""),
        past("s-fix", "fix the crash in divide"),
        past("s-empty-2", ""),
    ])));
    let mut ui = simulator(app.view());
    assert!(ui.find("fix the crash in divide").is_ok());
    assert!(ui.find("s-empty-1").is_err() && ui.find("s-empty-2").is_err());
}

/// What ided's dry run says (graph_mermaid of the feature workflow, as the daemon printed it).
const DRY_RUN_MERMAID: &str = "---\nconfig:\n  flowchart:\n    curve: linear\n---\ngraph TD;\n\t__start__([<p>__start__</p>]):::first\n\trequirements_analysis(requirements_analysis)\n\timplementation(implementation)\n\ttest_writing(test_writing)\n\ttest_execution(test_execution)\n\tcode_review(code_review)\n\tdocumentation(documentation)\n\tadaptive_retrieval(adaptive_retrieval)\n\tdone(done)\n\tabort(abort)\n\t__end__([<p>__end__</p>]):::last\n\t__start__ --> requirements_analysis;\n\tadaptive_retrieval -. &nbsp;limit&nbsp; .-> abort;\n\tadaptive_retrieval -. &nbsp;retry: documentation&nbsp; .-> documentation;\n\tadaptive_retrieval -. &nbsp;retry: implementation&nbsp; .-> implementation;\n\tadaptive_retrieval -. &nbsp;retry: requirements_analysis&nbsp; .-> requirements_analysis;\n\tadaptive_retrieval -. &nbsp;retry: test_writing&nbsp; .-> test_writing;\n\tcode_review -. &nbsp;failure&nbsp; .-> abort;\n\tcode_review -. &nbsp;retry&nbsp; .-> adaptive_retrieval;\n\tcode_review -. &nbsp;success&nbsp; .-> documentation;\n\tdocumentation -. &nbsp;limit&nbsp; .-> abort;\n\tdocumentation -. &nbsp;retry&nbsp; .-> adaptive_retrieval;\n\tdocumentation -. &nbsp;success / failure&nbsp; .-> done;\n\timplementation -. &nbsp;failure&nbsp; .-> abort;\n\timplementation -. &nbsp;retry&nbsp; .-> adaptive_retrieval;\n\timplementation -. &nbsp;success&nbsp; .-> test_writing;\n\trequirements_analysis -. &nbsp;limit&nbsp; .-> abort;\n\trequirements_analysis -. &nbsp;retry&nbsp; .-> adaptive_retrieval;\n\trequirements_analysis -. &nbsp;success / failure&nbsp; .-> implementation;\n\ttest_execution -. &nbsp;limit&nbsp; .-> abort;\n\ttest_execution -. &nbsp;retry&nbsp; .-> adaptive_retrieval;\n\ttest_execution -. &nbsp;success / failure&nbsp; .-> code_review;\n\ttest_writing -. &nbsp;failure&nbsp; .-> abort;\n\ttest_writing -. &nbsp;retry&nbsp; .-> adaptive_retrieval;\n\ttest_writing -. &nbsp;limit&nbsp; .-> code_review;\n\ttest_writing -. &nbsp;success&nbsp; .-> test_execution;\n\tabort --> __end__;\n\tdone --> __end__;\n\tclassDef default fill:#f2f0ff,line-height:1.2\n\tclassDef first fill-opacity:0\n\tclassDef last fill:#bfb6fc\n";

/// Issue 21, Iced defect 5: a dry run showed the Mermaid source, tabs as empty boxes.
#[test]
fn a_dry_runs_plan_graph_is_drawn_as_a_graph_not_mermaid_source() {
    let (mut app, _commands, _dir) = connected_app();
    let message = format!(
        "Dry run: run r-1 planned with workflow feature; nothing executed.\n\n```mermaid\n{DRY_RUN_MERMAID}\n```"
    );
    update(
        &mut app,
        json!({"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":message}}}),
    );
    let mut ui = simulator(app.view());
    assert!(
        ui.find("Dry run: run r-1 planned with workflow feature; nothing executed.")
            .is_ok()
    );
    assert!(ui.find("Plan graph").is_ok());
    let start = ui.find("start").expect("the start node").bounds();
    let first = ui.find("requirements_analysis").expect("a stage node").bounds();
    let later = ui.find("implementation").expect("a later stage").bounds();
    assert!(
        start.y < first.y && first.y < later.y,
        "layered top-down: {start:?} {first:?} {later:?}"
    );
    assert!(ui.find("end").is_ok());
    for source in ["graph TD;", "```mermaid", "__start__ --> requirements_analysis;"] {
        assert!(ui.find(source).is_err(), "{source} is not shown");
    }
}

/// Issue 39, Iced item 1: Tab completed the command but left the cursor where the typing had
/// stopped, so `/ro`, Tab, `ZZ` read `/roZZllback` (and a run id typed after it garbled the
/// command).
#[test]
fn tab_completion_leaves_the_cursor_at_the_end_of_the_completed_word() {
    let (mut app, _commands, _dir) = connected_app();
    advertise_commands(&mut app);
    let mut live = support::Live::new();
    live.click_id(&mut app, PROMPT_ID);
    live.type_keys(&mut app, "/ro");
    live.key(&mut app, Named::Tab);
    assert_eq!(app.panel.prompt, "/rollback ", "Tab completed the command");
    live.type_keys(&mut app, "ZZ");
    assert_eq!(
        app.panel.prompt, "/rollback ZZ",
        "the typing goes on after the completion"
    );
    // A unique prefix of a command without an argument completes too, the cursor after it.
    let (mut app, _commands, _dir) = connected_app();
    advertise_commands(&mut app);
    let mut live = support::Live::new();
    live.click_id(&mut app, PROMPT_ID);
    live.type_keys(&mut app, "/d");
    live.key(&mut app, Named::Tab);
    live.type_keys(&mut app, " fix it");
    assert_eq!(app.panel.prompt, "/dry-run fix it");
}

/// Issue 39, Iced item 2: a click on a slash suggestion took the focus from the prompt, so
/// what was typed next was lost.
#[test]
fn clicking_a_slash_suggestion_keeps_the_focus_on_the_prompt() {
    let (mut app, _commands, _dir) = connected_app();
    advertise_commands(&mut app);
    let mut live = support::Live::new();
    live.click_id(&mut app, PROMPT_ID);
    live.type_keys(&mut app, "/ro");
    live.click_text(&mut app, "/rollback ID");
    assert_eq!(app.panel.prompt, "/rollback ", "the click completed the command");
    live.type_keys(&mut app, "r-42");
    assert_eq!(app.panel.prompt, "/rollback r-42", "the next keys reach the prompt");
}

/// Issue 39, Iced item 3: after Reject, the file row and the hunk header still read "kept"
/// (every hunk starts kept in the pane), and the transcript card said "failed" in red for a
/// rejection the person chose (ided ends a rejected review call `failed`: nothing applied).
#[test]
fn a_rejected_review_reads_rejected_and_its_card_does_not_say_failed() {
    let (mut app, answers, _dir) = reviewing_app();
    click(&mut app, "Reject");
    assert_eq!(selected(answers.try_recv().unwrap()).0, "reject");
    update(
        &mut app,
        json!({"sessionId":"s-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"run-1/review-1",
            "status":"failed","rawOutput":"Rejected: your files are untouched; ided/run/run-1 is kept until cleanup.",
            "_meta":{"ided/review":"rejected"}}}),
    );
    end_turn(&mut app);
    assert_eq!(app.center, Center::Review);
    assert_eq!(
        support::count(&app, "kept"),
        0,
        "nothing reads kept: {:?}",
        support::texts(&app)
    );
    assert_eq!(
        support::count(&app, "rejected"),
        3,
        "the file row, the hunk header and the transcript card read rejected"
    );
    assert!(
        simulator(app.view()).find("Rejected").is_ok(),
        "the pane says how it ended"
    );
    assert_eq!(support::count(&app, "failed"), 0, "the card does not say failed");
    // A review ided says was rejected, shown in a loaded session (no answer given here).
    let (mut app, _commands, _dir) = connected_app();
    let root = _dir.path().display().to_string();
    update(
        &mut app,
        json!({"sessionId":"s-1","update":{"sessionUpdate":"tool_call","toolCallId":"run-9/review-1",
            "title":"Review run run-9","kind":"edit","status":"pending",
            "content":[{"type":"diff","path":format!("{root}/a.py"),"oldText":"x = 1\n","newText":"x = 2\n"}],
            "rawInput":{"run_id":"run-9"}}}),
    );
    update(
        &mut app,
        json!({"sessionId":"s-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"run-9/review-1",
            "status":"failed","rawOutput":"Rejected: your files are untouched.","_meta":{"ided/review":"rejected"}}}),
    );
    let _ = app.update(Message::ShowCenter(Center::Review));
    assert_eq!(support::count(&app, "kept"), 0);
    assert_eq!(support::count(&app, "failed"), 0);
    assert!(
        simulator(app.view()).find("Reject hunk").is_err(),
        "a decided review offers no Keep / Reject"
    );
}

/// Issue 39, Iced item 5: the accept message showed twice (on the review card, then as a
/// message with the same text).
#[test]
fn the_accept_message_shows_once() {
    let (mut app, answers, _dir) = reviewing_app();
    click(&mut app, "Accept all");
    assert_eq!(selected(answers.try_recv().unwrap()).0, "accept");
    let said = "Accepted: 1 commit(s) on refs/heads/main (abc1234567); /rollback run-1 undoes it.";
    update(
        &mut app,
        json!({"sessionId":"s-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"run-1/review-1",
            "status":"completed","rawOutput":said,"_meta":{"ided/review":"accepted"}}}),
    );
    for text in [format!("{said}\n"), "Run run-1 completed: done\n".into()] {
        update(
            &mut app,
            json!({"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":text}}}),
        );
    }
    end_turn(&mut app);
    let texts = support::texts(&app);
    let shown = texts
        .iter()
        .filter(|(t, _)| t.contains("Accepted: 1 commit(s)"))
        .count();
    assert_eq!(shown, 1, "{texts:?}");
    assert!(
        texts.iter().any(|(t, _)| t.contains("Run run-1 completed: done")),
        "other messages still show"
    );
}

/// Issue 39, Iced item 5: History showed raw ISO timestamps.
#[test]
fn history_shows_when_a_session_was_used_for_people_not_iso() {
    let (mut app, _commands, _dir) = connected_app();
    let _ = app.update(Message::Acp(Event::Sessions(vec![ided_iced::acp::PastSession {
        session_id: "s-old".into(),
        title: "fix the crash in divide".into(),
        updated_at: "2025-01-15T10:00:00.123456+00:00".into(),
    }])));
    let mut ui = simulator(app.view());
    assert!(ui.find("fix the crash in divide").is_ok());
    assert!(ui.find("2025-01-15T10:00:00.123456+00:00").is_err(), "no raw ISO time");
    assert!(ui.find("2025-01-15").is_ok(), "an old session shows its date");
}

/// Issue 39, Iced item 4: side by side cut long lines at the pane's edge (`raise
/// ZeroDivisionEr`), with no way to scroll to their end at the default window size. Each side
/// now scrolls sideways on its own; up and down, both together.
#[test]
fn side_by_side_long_lines_scroll_sideways_to_their_end() {
    let long = "        raise ZeroDivisionError(\"b is 0: a division by zero is not defined, whatever the numerator\")";
    let old = "def divide(a, b):\n    return a / b\n";
    let new = format!("def divide(a, b):\n    if b == 0:\n{long}\n    return a / b\n");
    let (mut app, _answers, _dir) = review_of_files(&[("calc.py", old, &new)]);
    click(&mut app, "Side by side");
    let natural = {
        let alone: iced::Element<'_, ()> = iced::widget::text(long.to_owned())
            .size(12)
            .font(iced::Font::MONOSPACE)
            .into();
        simulator(alone).find(long).expect("the line alone").bounds().width
    };
    let mut live = support::Live::new();
    let found = |app: &App| {
        let mut ui = simulator(app.view());
        let line = ui.find(long).expect("the long line, on the new side");
        (line.bounds(), line.visible_bounds())
    };
    let (bounds, visible) = found(&app);
    assert!(
        (bounds.width - natural).abs() < 1.0,
        "laid out whole, not cut at the pane: {bounds:?} vs {natural}"
    );
    let visible = visible.expect("on screen");
    assert!(
        visible.x + visible.width < bounds.x + bounds.width - 50.0,
        "at the default size its end is past the pane's edge: {visible:?} of {bounds:?}"
    );
    // Scroll the new side sideways (the wheel's sideways turn).
    live.wheel_sideways(&mut app, visible.center(), -500.0);
    let scrolled = live
        .scroll_offset(&app, ided_iced::ui::review::DIFF_NEW_ID)
        .expect("the new side's scrollable");
    let hidden = (bounds.x + bounds.width) - (visible.x + visible.width);
    assert!(
        scrolled.x >= hidden - 1.0,
        "the new side scrolls far enough to show the line's end: {scrolled:?}, {hidden} px were hidden"
    );
    let old_side = live
        .scroll_offset(&app, ided_iced::ui::review::DIFF_OLD_ID)
        .expect("the old side's scrollable");
    assert_eq!(old_side.x, 0.0, "the old side stays where it was");
}

/// The next command the app sent, which must be an `_ided/intel/*` request.
fn intel_request(commands: &mut futures::channel::mpsc::UnboundedReceiver<Command>) -> ided_iced::acp::IntelRequest {
    match commands.try_recv() {
        Ok(Command::Intel(request)) => request,
        other => panic!("expected an _ided/intel request, got {other:?}"),
    }
}

/// Issue 39, Iced item 6: the client had no search although the daemon serves one. The
/// search panel asks ided (`_ided/intel/search_code`), lists the hits, and a hit opens its file
/// at its line.
#[test]
fn the_search_panel_asks_ided_and_a_hit_opens_its_file_at_the_line() {
    let (mut app, mut commands, dir) = connected_app();
    let calc = dir.path().join("calc.py");
    std::fs::write(
        &calc,
        "def add(a, b):\n    return a + b\n\n\ndef divide(a, b):\n    return a / b\n",
    )
    .unwrap();
    click(&mut app, "Search");
    let mut live = support::Live::new();
    live.click_id(&mut app, ided_iced::ui::search::SEARCH_ID);
    live.type_keys(&mut app, "divide");
    live.key(&mut app, Named::Enter);
    let request = intel_request(&mut commands);
    assert_eq!(
        (request.session_id.as_str(), request.capability.as_str()),
        ("s-1", "search_code")
    );
    assert_eq!(request.params["query"], "divide");
    assert!(
        simulator(app.view())
            .find("Asking ided for the “divide” in the code…")
            .is_ok(),
        "the panel says it waits"
    );
    let _ = app.update(Message::Acp(Event::IntelAnswer {
        id: request.id,
        result: Ok(json!({"mode": "lexical", "vectors": 0.0, "matches": "strong",
            "hits": [{"path": "calc.py", "line": 5, "end_line": 6, "symbol": "divide",
                "snippet": "def divide(a, b):", "score": 2.0}]})),
    }));
    {
        let mut ui = simulator(app.view());
        assert!(ui.find("1 hit (lexical)").is_ok());
        assert!(ui.find("calc.py:5").is_ok() && ui.find("def divide(a, b):").is_ok());
    }
    click_and_run(&mut app, "calc.py:5");
    let buffer = app.buffers.current().expect("the hit's file is open");
    assert_eq!(buffer.path, calc);
    assert_eq!(buffer.content.cursor().position.line, 4, "at the hit's line");
    assert_eq!(app.center, Center::Editor);
}

/// Issue 39, Iced item 6: no go-to-definition or references from the editor. F12 asks ided
/// where the name at the cursor is defined and opens it; Shift+F12 lists its uses.
#[test]
fn f12_opens_the_definition_and_shift_f12_lists_the_references() {
    let (mut app, mut commands, dir) = connected_app();
    let calc = dir.path().join("calc.py");
    let main = dir.path().join("main.py");
    std::fs::write(&calc, "def add(a, b):\n    return a + b\n").unwrap();
    std::fs::write(&main, "from calc import add\nprint(add(1, 2))\n").unwrap();
    app.buffers
        .open(main.clone(), "from calc import add\nprint(add(1, 2))\n", None);
    app.buffers.move_cursor(2, 8);
    assert_eq!(app.buffers.cursor_place(), Some((main.clone(), 2, 8)));
    let mut live = support::Live::new();
    live.key(&mut app, Named::F12);
    let request = intel_request(&mut commands);
    assert_eq!(request.capability, "find_definition");
    assert_eq!(
        serde_json::Value::Object(request.params.clone()),
        json!({"file": "main.py", "line": 2, "column": 8, "max_chars": 400}),
        "the cursor's place, relative to the workspace, as ided takes it"
    );
    let answered = app.update(Message::Acp(Event::IntelAnswer {
        id: request.id,
        result: Ok(
            json!({"query": "main.py:2:8", "total": 1, "server": "basedpyright", "definitions": [{
            "symbol": "calc.add", "location": {"path": "calc.py", "in_workspace": true, "line_text": "def add(a, b):",
            "range": {"start_line": 1, "start_column": 5, "end_line": 1, "end_column": 8}}}]}),
        ),
    }));
    support::run_task(&mut app, answered);
    assert_eq!(
        app.buffers.current().map(|b| b.path.clone()),
        Some(calc.clone()),
        "the definition opened"
    );
    assert_eq!(app.status, "definition: calc.py:1");

    // Shift+F12 from the use: the references, listed in the search panel.
    let _ = app.update(Message::Editor(ided_iced::ui::editor::Message::Select(0)));
    app.buffers.move_cursor(2, 8);
    let task = app.update(Message::Key(support::key_pressed(
        iced::keyboard::Key::Named(Named::F12),
        iced::keyboard::Modifiers::SHIFT,
    )));
    support::run_task(&mut app, task);
    let request = intel_request(&mut commands);
    assert_eq!(request.capability, "get_references");
    let _ = app.update(Message::Acp(Event::IntelAnswer {
        id: request.id,
        result: Ok(json!({"query": "add", "total": 2, "files": 2, "references": [
            {"location": {"path": "calc.py", "range": {"start_line": 1, "start_column": 5, "end_line": 1, "end_column": 8},
             "line_text": "def add(a, b):"}, "is_declaration": true},
            {"location": {"path": "main.py", "range": {"start_line": 2, "start_column": 7, "end_line": 2, "end_column": 10},
             "line_text": "print(add(1, 2))"}}]})),
    }));
    assert_eq!(app.left, ided_iced::app::Left::Search);
    {
        let mut ui = simulator(app.view());
        assert!(ui.find("References to main.py:2:8").is_ok());
        assert!(ui.find("2 references in 2 files").is_ok());
        assert!(ui.find("calc.py:1").is_ok() && ui.find("main.py:2").is_ok());
    }
    click_and_run(&mut app, "main.py:2");
    assert_eq!(app.buffers.current().map(|b| b.path.clone()), Some(main));
}

/// What ided refuses (no daemon, a bad position) reads as text in the panel, and an answer to
/// an earlier question does not replace the current one.
#[test]
fn a_refused_question_reads_as_text_and_a_stale_answer_is_dropped() {
    let (mut app, mut commands, _dir) = connected_app();
    app.search.text = "first".into();
    let _ = app.update(Message::Search(ided_iced::ui::search::Message::Submit));
    let first = intel_request(&mut commands);
    app.search.text = "second".into();
    let _ = app.update(Message::Search(ided_iced::ui::search::Message::Submit));
    let second = intel_request(&mut commands);
    let _ = app.update(Message::Acp(Event::IntelAnswer {
        id: first.id,
        result: Ok(json!({"mode": "lexical", "vectors": 0.0, "matches": "none", "hits": []})),
    }));
    assert!(app.search.shown.is_none(), "the earlier question's answer is dropped");
    let why = "search and code intelligence go through the workspace daemon, and there is none [store_failed]";
    let _ = app.update(Message::Acp(Event::IntelAnswer {
        id: second.id,
        result: Err(why.into()),
    }));
    let mut ui = simulator(app.view());
    assert!(ui.find("“second” in the code").is_ok(), "the question answered");
    assert!(ui.find(why).is_ok(), "why, as text: {:?}", support::texts(&app));
}

/// The scripted demo steps behind the docs' screenshots (`--search`, `--definition`): asked in
/// order once the session is ready, each after the previous answer, a definition's file opened
/// first with the cursor on its place.
#[test]
fn scripted_questions_are_asked_in_order_once_the_session_is_ready() {
    use ided_iced::session::intel::Query;
    let dir = tempfile::tempdir().unwrap();
    let test_py = dir.path().join("test_calc.py");
    std::fs::write(
        &test_py,
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    )
    .unwrap();
    let launch = Launch::resolve(Some("/nonexistent/ided"), dir.path()).unwrap();
    let (mut app, _) = App::new(Options {
        workspace: dir.path().to_path_buf(),
        launch: Ok(launch),
        script: Vec::new(),
        screenshot: None,
        answer: None,
        side_by_side: false,
        bench: None,
        started: std::time::Instant::now(),
        demo: ided_iced::app::Demo {
            questions: vec![
                Query::Search {
                    text: "add".into(),
                    docs: false,
                },
                Query::Definition {
                    file: test_py.clone(),
                    line: 5,
                    column: 12,
                },
            ],
            ..Default::default()
        },
    });
    let (connection, mut commands) = Connection::detached();
    let _ = app.update(Message::Acp(Event::Started(connection)));
    let _ = app.update(Message::Acp(Event::SessionReady {
        session_id: "s-1".into(),
        modes: None,
        loaded: false,
    }));
    let search = intel_request(&mut commands);
    assert_eq!(
        (search.capability.as_str(), &search.params["query"]),
        ("search_code", &json!("add"))
    );
    assert!(
        commands.try_recv().is_err(),
        "the definition waits for the search's answer"
    );
    let next = app.update(Message::Acp(Event::IntelAnswer {
        id: search.id,
        result: Ok(json!({"mode": "lexical", "vectors": 0.0, "matches": "strong", "hits": []})),
    }));
    support::run_task(&mut app, next); // opens test_calc.py, then asks
    let definition = intel_request(&mut commands);
    assert_eq!(definition.capability, "find_definition");
    assert_eq!(
        serde_json::Value::Object(definition.params),
        json!({"file": "test_calc.py", "line": 5, "column": 12, "max_chars": 400})
    );
    assert_eq!(
        app.buffers.cursor_place(),
        Some((test_py, 5, 12)),
        "the cursor on the name"
    );
}
