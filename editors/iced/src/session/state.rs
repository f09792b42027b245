//! What the client knows about one ACP session, and the reducer that folds the agent's
//! updates into it. Nothing here touches iced: the views read this state, the tests drive it
//! with recorded update sequences.

use std::collections::HashMap;
use std::path::PathBuf;

use agent_client_protocol::v1::schema::{
    ContentBlock, EmbeddedResourceResource, PermissionOptionKind, Plan, PlanEntryStatus, RequestPermissionRequest,
    SessionModeState, SessionNotification, SessionUpdate, StopReason, ToolCall, ToolCallContent, ToolCallStatus,
    ToolCallUpdate, ToolKind,
};
use serde_json::Value;

use super::diff::FileDiff;

/// Where ided puts the statuses ACP's plan entries cannot say (`failed`, `skipped`; the
/// entry itself then says `completed`): `entry._meta["ided/status"]`.
pub const PLAN_STATUS_META: &str = "ided/status";
/// ided's state of a review call on its final update: `_meta["ided/review"]`.
pub const REVIEW_STATE_META: &str = "ided/review";

/// The review state of a run whose `/rollback` is in flight (the client's own, until the
/// turn ends).
pub const ROLLING_BACK: &str = "rolling_back";
/// ided's review state of a rolled-back run.
pub const ROLLED_BACK: &str = "rolled_back";
/// ided's review state of a rejected run.
pub const REJECTED: &str = "rejected";
/// ided's review state of an accepted run.
pub const ACCEPTED: &str = "accepted";

/// A `/rollback RUN_ID` the person sent, until its turn ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingRollback {
    pub run_id: String,
    /// The transcript length when it went out (the turn's answer comes after).
    from: usize,
    /// Each affected tool call's review state before the rollback (restored if it fails).
    previous: Vec<(usize, Option<String>)>,
}

/// The status of one plan step, including ided's failed/skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepStatus {
    Pending,
    InProgress,
    Completed,
    Failed,
    Skipped,
    /// The run was cancelled while this step ran.
    Cancelled,
}

impl StepStatus {
    /// The checklist mark shown before the step.
    pub fn mark(self) -> &'static str {
        match self {
            StepStatus::Pending => "[ ]",
            StepStatus::InProgress => "[~]",
            StepStatus::Completed => "[x]",
            StepStatus::Failed => "[!]",
            StepStatus::Skipped => "[-]",
            StepStatus::Cancelled => "[/]",
        }
    }

    /// A word for the status.
    pub fn label(self) -> &'static str {
        match self {
            StepStatus::Pending => "pending",
            StepStatus::InProgress => "in progress",
            StepStatus::Completed => "completed",
            StepStatus::Failed => "failed",
            StepStatus::Skipped => "skipped",
            StepStatus::Cancelled => "cancelled",
        }
    }
}

/// One row of the execution plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanRow {
    pub content: String,
    pub status: StepStatus,
}

/// A file position a tool call touched.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Location {
    pub path: PathBuf,
    pub line: Option<u32>,
}

/// One tool call as a row: kind, status, output, locations and any diffs it carries.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallRow {
    pub id: String,
    pub title: String,
    pub kind: ToolKind,
    pub status: ToolCallStatus,
    pub locations: Vec<Location>,
    pub output: String,
    pub raw_input: Option<String>,
    pub diffs: Vec<FileDiff>,
    /// The ided run this call belongs to (`rawInput.run_id` of a review call): rollback target.
    pub run_id: Option<String>,
    /// ided's review state of a review call (`_meta["ided/review"]`: open, accepted, rejected,
    /// rolled_back), when ided sent one.
    pub review_state: Option<String>,
    /// The person's answer to this review call's permission request (`accept`, `reject`,
    /// `feedback`, `cancelled`), once given.
    pub answered: Option<String>,
    /// Bumped on every change, so views can cache rows that did not change.
    pub revision: u64,
}

/// What one transcript entry shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    /// What the person sent.
    User(String),
    /// Agent text, streamed chunk by chunk into one entry.
    Agent(String),
    /// The orchestrator's decisions (collapsible).
    Thought { text: String, expanded: bool },
    /// A tool call: an index into [`SessionState::tool_calls`].
    Tool(usize),
    /// A line from the client itself (run stopped, agent exited, skipped update).
    Notice(String),
}

/// One transcript entry with its revision (bumped when its text grows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub kind: EntryKind,
    pub revision: u64,
}

/// A permission option, classified by what pressing it means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub id: String,
    pub name: String,
    pub role: ChoiceRole,
}

/// What a permission option does in ided's review.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChoiceRole {
    Accept,
    Reject,
    /// Sends the text of the feedback box with the answer.
    Feedback,
    Other,
}

/// A permission request waiting for the person.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingPermission {
    pub tool_call_id: String,
    pub title: String,
    pub choices: Vec<Choice>,
}

/// The batched diff under review.
#[derive(Debug, Clone, PartialEq)]
pub struct Review {
    pub tool_call_id: String,
    /// The ided run under review (for `/rollback`).
    pub run_id: Option<String>,
    pub title: String,
    pub files: Vec<FileDiff>,
    /// The answer given, once given (`accept`, `reject`, `feedback`, `cancelled`).
    pub answer: Option<String>,
}

impl Review {
    pub fn added(&self) -> usize {
        self.files.iter().map(|f| f.added).sum()
    }
    pub fn removed(&self) -> usize {
        self.files.iter().map(|f| f.removed).sum()
    }
}

/// Where the current prompt turn stands.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum RunStatus {
    #[default]
    Idle,
    Running,
    /// `session/cancel` sent, waiting for the prompt to answer.
    Cancelling,
    /// The prompt answered with this stop reason (`end_turn`, `cancelled`, ...).
    Stopped(String),
    /// The prompt request failed.
    Failed(String),
    /// ided refused what the prompt asked (`rollback`: a `/rollback` it would not do); why is
    /// said in the transcript. Not a failure of the session: it stays usable.
    Refused(String),
}

/// The agent process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentExit {
    pub code: Option<i32>,
    pub stderr_tail: Vec<String>,
    pub message: String,
}

/// A session mode the agent offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mode {
    pub id: String,
    pub name: String,
}

/// A slash command the agent offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub name: String,
    pub description: String,
    pub hint: Option<String>,
}

/// Everything the client knows about one session.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionState {
    pub session_id: Option<String>,
    pub modes: Vec<Mode>,
    pub current_mode: Option<String>,
    pub commands: Vec<Command>,
    pub plan: Vec<PlanRow>,
    pub plan_revision: u64,
    pub transcript: Vec<Entry>,
    pub tool_calls: Vec<ToolCallRow>,
    tool_index: HashMap<String, usize>,
    pub review: Option<Review>,
    pub permission: Option<PendingPermission>,
    pub run: RunStatus,
    pub exit: Option<AgentExit>,
    /// Updates that could not be parsed or are not shown (logged, then skipped).
    pub skipped: usize,
    /// Updates applied so far.
    pub applied: usize,
    /// The `/rollback` in flight, if any.
    pub rollback: Option<PendingRollback>,
    revision: u64,
}

impl SessionState {
    /// A fresh state for a session the agent created or loaded.
    pub fn for_session(session_id: impl Into<String>, modes: Option<&SessionModeState>) -> Self {
        let mut state = SessionState {
            session_id: Some(session_id.into()),
            ..SessionState::default()
        };
        if let Some(modes) = modes {
            state.set_modes(modes);
        }
        state
    }

    /// Takes the modes from `session/new` or `session/load`.
    pub fn set_modes(&mut self, modes: &SessionModeState) {
        self.modes = modes
            .available_modes
            .iter()
            .map(|m| Mode {
                id: m.id.0.to_string(),
                name: m.name.clone(),
            })
            .collect();
        self.current_mode = Some(modes.current_mode_id.0.to_string());
    }

    fn bump(&mut self) -> u64 {
        self.revision += 1;
        self.revision
    }

    /// Folds one raw `session/update` params object in; a malformed one is logged and
    /// skipped (returns false).
    pub fn apply_json(&mut self, params: &Value) -> bool {
        match serde_json::from_value::<SessionNotification>(params.clone()) {
            Ok(notification) => {
                self.apply_notification(notification);
                true
            }
            Err(err) => {
                log::warn!("skipping a malformed session/update: {err}");
                self.skipped += 1;
                false
            }
        }
    }

    /// Folds one `session/update` notification in (updates for another session are skipped).
    pub fn apply_notification(&mut self, notification: SessionNotification) {
        if let Some(id) = &self.session_id
            && id.as_str() != &*notification.session_id.0
        {
            log::warn!(
                "skipping an update for session {} (this is {id})",
                notification.session_id.0
            );
            self.skipped += 1;
            return;
        }
        self.apply(notification.update);
    }

    /// Folds one session update in.
    pub fn apply(&mut self, update: SessionUpdate) {
        self.applied += 1;
        match update {
            SessionUpdate::UserMessageChunk(chunk) => {
                let text = content_text(&chunk.content);
                self.append_text(text, |k| matches!(k, EntryKind::User(_)), EntryKind::User);
            }
            SessionUpdate::AgentMessageChunk(chunk) => {
                let text = content_text(&chunk.content);
                if self.repeats_review_outcome(&text) {
                    // ided says how a review ended twice: as the review call's output (on its
                    // card) and as a message. Shown once, on the card.
                    return;
                }
                self.append_text(text, |k| matches!(k, EntryKind::Agent(_)), EntryKind::Agent);
            }
            SessionUpdate::AgentThoughtChunk(chunk) => {
                let text = content_text(&chunk.content);
                self.append_text(
                    text,
                    |k| matches!(k, EntryKind::Thought { .. }),
                    |text| EntryKind::Thought { text, expanded: false },
                );
            }
            SessionUpdate::ToolCall(call) => self.tool_call(call),
            SessionUpdate::ToolCallUpdate(update) => self.tool_call_update(update),
            SessionUpdate::Plan(plan) => self.plan(&plan),
            SessionUpdate::AvailableCommandsUpdate(update) => {
                self.commands = update
                    .available_commands
                    .iter()
                    .map(|c| Command {
                        name: c.name.trim_start_matches('/').to_owned(),
                        description: c.description.clone(),
                        hint: c.input.as_ref().and_then(|input| {
                            serde_json::to_value(input)
                                .ok()
                                .and_then(|v| v.get("hint").and_then(Value::as_str).map(str::to_owned))
                        }),
                    })
                    .collect();
            }
            SessionUpdate::CurrentModeUpdate(update) => {
                self.current_mode = Some(update.current_mode_id.0.to_string());
            }
            other => {
                log::debug!("session update not shown: {other:?}");
                self.applied -= 1;
                self.skipped += 1;
            }
        }
    }

    /// Whether `text`, a new agent message (not the rest of one being streamed), only repeats
    /// the outcome a finished review call already shows on its card.
    fn repeats_review_outcome(&self, text: &str) -> bool {
        let said = text.trim();
        if said.is_empty() || matches!(self.transcript.last().map(|e| &e.kind), Some(EntryKind::Agent(_))) {
            return false;
        }
        self.tool_calls.iter().rev().any(|t| {
            !t.diffs.is_empty()
                && matches!(t.status, ToolCallStatus::Completed | ToolCallStatus::Failed)
                && t.output.trim() == said
        })
    }

    /// Appends streamed text to the last entry when it is of the same kind, else starts one.
    fn append_text(&mut self, text: String, same: impl Fn(&EntryKind) -> bool, make: impl Fn(String) -> EntryKind) {
        let revision = self.bump();
        if let Some(last) = self.transcript.last_mut()
            && same(&last.kind)
        {
            match &mut last.kind {
                EntryKind::User(t) | EntryKind::Agent(t) | EntryKind::Thought { text: t, .. } => {
                    t.push_str(&text);
                }
                _ => {}
            }
            last.revision = revision;
            return;
        }
        self.transcript.push(Entry {
            kind: make(text),
            revision,
        });
    }

    fn plan(&mut self, plan: &Plan) {
        self.plan = plan
            .entries
            .iter()
            .map(|entry| PlanRow {
                content: entry.content.clone(),
                status: meta_status(entry.meta.as_ref()).unwrap_or(match entry.status {
                    PlanEntryStatus::Pending => StepStatus::Pending,
                    PlanEntryStatus::InProgress => StepStatus::InProgress,
                    PlanEntryStatus::Completed => StepStatus::Completed,
                    _ => StepStatus::Pending,
                }),
            })
            .collect();
        self.plan_revision = self.bump();
    }

    fn tool_call(&mut self, call: ToolCall) {
        let revision = self.bump();
        let id = call.tool_call_id.0.to_string();
        let mut row = ToolCallRow {
            id: id.clone(),
            title: call.title,
            kind: call.kind,
            status: call.status,
            locations: Vec::new(),
            output: String::new(),
            raw_input: call.raw_input.as_ref().map(compact_json),
            diffs: Vec::new(),
            run_id: call.raw_input.as_ref().and_then(run_id_of),
            review_state: None,
            answered: self
                .tool_index
                .get(&id)
                .and_then(|&i| self.tool_calls[i].answered.clone()),
            revision,
        };
        set_locations(&mut row, &call.locations);
        set_content(&mut row, &call.content);
        if let Some(raw) = &call.raw_output
            && row.output.is_empty()
        {
            row.output = raw_output_text(raw);
        }
        let index = match self.tool_index.get(&id) {
            Some(&index) => {
                self.tool_calls[index] = row;
                index
            }
            None => {
                let index = self.tool_calls.len();
                self.tool_calls.push(row);
                self.tool_index.insert(id, index);
                self.transcript.push(Entry {
                    kind: EntryKind::Tool(index),
                    revision,
                });
                index
            }
        };
        self.sync_review_from(index);
    }

    fn tool_call_update(&mut self, update: ToolCallUpdate) {
        let id = update.tool_call_id.0.to_string();
        let Some(&index) = self.tool_index.get(&id) else {
            // An update for a call we never saw: show it as a call of its own.
            let mut call = ToolCall::new(
                update.tool_call_id.clone(),
                update.fields.title.clone().unwrap_or_default(),
            );
            if let Some(kind) = update.fields.kind {
                call = call.kind(kind);
            }
            self.tool_call(call);
            return self.tool_call_update(update);
        };
        let revision = self.bump();
        let row = &mut self.tool_calls[index];
        let fields = update.fields;
        if let Some(kind) = fields.kind {
            row.kind = kind;
        }
        if let Some(status) = fields.status {
            row.status = status;
        }
        if let Some(title) = fields.title {
            row.title = title;
        }
        if let Some(locations) = &fields.locations {
            set_locations(row, locations);
        }
        if let Some(content) = &fields.content {
            row.output.clear();
            row.diffs.clear();
            set_content(row, content);
        }
        if let Some(raw) = &fields.raw_input {
            row.raw_input = Some(compact_json(raw));
            if let Some(run_id) = run_id_of(raw) {
                row.run_id = Some(run_id);
            }
        }
        if let Some(raw) = &fields.raw_output
            && row.output.is_empty()
        {
            row.output = raw_output_text(raw);
        }
        if let Some(state) = update
            .meta
            .as_ref()
            .and_then(|meta| meta.get(REVIEW_STATE_META))
            .and_then(Value::as_str)
        {
            row.review_state = Some(state.to_owned());
        }
        row.revision = revision;
        self.sync_review_from(index);
    }

    /// A tool call that carries diffs becomes the review (the latest one wins).
    fn sync_review_from(&mut self, index: usize) {
        let row = &self.tool_calls[index];
        if row.diffs.is_empty() {
            return;
        }
        let answer = self
            .review
            .as_ref()
            .filter(|r| r.tool_call_id == row.id)
            .and_then(|r| r.answer.clone());
        self.review = Some(Review {
            tool_call_id: row.id.clone(),
            run_id: row.run_id.clone(),
            title: row.title.clone(),
            files: row.diffs.clone(),
            answer,
        });
    }

    /// The agent asks for permission (ided: accept / reject / feedback on the batched diff).
    pub fn permission_requested(&mut self, request: &RequestPermissionRequest) {
        let update = request.tool_call.clone();
        let id = update.tool_call_id.0.to_string();
        let title = update.fields.title.clone().unwrap_or_default();
        if update.fields.content.is_some() || !self.tool_index.contains_key(&id) {
            self.tool_call_update(update);
        }
        let title = if title.is_empty() {
            self.tool_index
                .get(&id)
                .map(|&i| self.tool_calls[i].title.clone())
                .unwrap_or_default()
        } else {
            title
        };
        self.permission = Some(PendingPermission {
            tool_call_id: id,
            title,
            choices: request
                .options
                .iter()
                .map(|option| Choice {
                    id: option.option_id.0.to_string(),
                    name: option.name.clone(),
                    role: choice_role(&option.option_id.0, option.kind),
                })
                .collect(),
        });
    }

    /// The person answered the permission request with `answer` (an option id or `cancelled`).
    pub fn permission_answered(&mut self, answer: &str) {
        let Some(permission) = self.permission.take() else {
            return;
        };
        if let Some(review) = self.review.as_mut()
            && review.tool_call_id == permission.tool_call_id
        {
            review.answer = Some(answer.to_owned());
        }
        let revision = self.bump();
        if let Some(&index) = self.tool_index.get(&permission.tool_call_id) {
            let row = &mut self.tool_calls[index];
            row.answered = Some(answer.to_owned());
            row.revision = revision;
        }
    }

    /// A prompt went out (a `/rollback RUN_ID`, typed or from the Roll back button, marks the
    /// run's review calls as rolling back until the turn ends).
    pub fn prompt_sent(&mut self, text: &str) {
        let revision = self.bump();
        self.transcript.push(Entry {
            kind: EntryKind::User(text.to_owned()),
            revision,
        });
        self.run = RunStatus::Running;
        if let Some(run_id) = text.trim().strip_prefix("/rollback ").map(str::trim)
            && !run_id.is_empty()
            && !run_id.contains(char::is_whitespace)
        {
            self.rollback_sent(run_id);
        }
    }

    /// `session/cancel` went out.
    pub fn cancel_requested(&mut self) {
        if self.run == RunStatus::Running {
            self.run = RunStatus::Cancelling;
        }
        if let Some(permission) = self.permission.take()
            && let Some(review) = self.review.as_mut()
            && review.tool_call_id == permission.tool_call_id
        {
            review.answer = Some("cancelled".into());
        }
    }

    /// The prompt request answered.
    pub fn prompt_finished(&mut self, stop: StopReason) {
        let reason = stop_reason_label(stop);
        if reason == "cancelled" {
            self.notice("Run cancelled.".into());
            // The step that ran was cancelled; the steps after it will not run.
            for row in &mut self.plan {
                row.status = match row.status {
                    StepStatus::InProgress => StepStatus::Cancelled,
                    StepStatus::Pending => StepStatus::Skipped,
                    other => other,
                };
            }
            self.plan_revision = self.bump();
        }
        self.finish_rollback(reason == "end_turn");
        self.run = RunStatus::Stopped(reason);
    }

    /// The prompt request failed.
    pub fn prompt_failed(&mut self, message: &str) {
        match self.rollback.as_ref().map(|r| r.run_id.clone()) {
            // A refused /rollback (the run was not accepted, or rolled back already): said as
            // text once; the session did not fail.
            Some(run_id) => {
                self.notice(format!("Rollback of run {run_id} refused: {message}"));
                self.finish_rollback(false);
                self.run = RunStatus::Refused("rollback".into());
            }
            None => {
                self.notice(format!("Prompt failed: {message}"));
                self.run = RunStatus::Failed(message.to_owned());
            }
        }
    }

    /// `/rollback RUN_ID` went out: the run's review calls show it in flight (no second Roll
    /// back while it runs). The transcript entry of the prompt itself is before `from`.
    fn rollback_sent(&mut self, run_id: &str) {
        let revision = self.bump();
        let mut previous = Vec::new();
        for (index, row) in self.tool_calls.iter_mut().enumerate() {
            if row.run_id.as_deref() == Some(run_id) {
                previous.push((index, row.review_state.replace(ROLLING_BACK.to_owned())));
                row.revision = revision;
            }
        }
        self.rollback = Some(PendingRollback {
            run_id: run_id.to_owned(),
            from: self.transcript.len(),
            previous,
        });
    }

    /// The rollback's turn ended: the run is rolled back when ided said so in the turn
    /// (`Rolled back run ID`) or marked its review call `rolled_back`; otherwise (a refusal,
    /// an error) the review calls get their state back and Roll back is offered again.
    fn finish_rollback(&mut self, ended: bool) {
        let Some(pending) = self.rollback.take() else {
            return;
        };
        let said = format!("Rolled back run {}", pending.run_id);
        let done = ended
            && self.transcript[pending.from.min(self.transcript.len())..]
                .iter()
                .any(|e| matches!(&e.kind, EntryKind::Agent(t) if t.contains(&said)));
        let revision = self.bump();
        for (index, previous) in pending.previous {
            let Some(row) = self.tool_calls.get_mut(index) else {
                continue;
            };
            if row.review_state.as_deref() == Some(ROLLING_BACK) {
                row.review_state = if done { Some(ROLLED_BACK.to_owned()) } else { previous };
                row.revision = revision;
            }
        }
    }

    /// The agent process exited or crashed.
    pub fn agent_exited(&mut self, exit: AgentExit) {
        let code = exit.code.map_or_else(
            || "no exit code (killed by a signal)".to_owned(),
            |c| format!("exit code {c}"),
        );
        self.notice(format!("The agent exited ({code})."));
        if matches!(self.run, RunStatus::Running | RunStatus::Cancelling) {
            self.run = RunStatus::Failed(format!("the agent exited ({code})"));
        }
        self.permission = None;
        self.exit = Some(exit);
    }

    /// Shows or hides one thought's full text.
    pub fn toggle_thought(&mut self, index: usize) {
        let revision = self.bump();
        if let Some(entry) = self.transcript.get_mut(index)
            && let EntryKind::Thought { expanded, .. } = &mut entry.kind
        {
            *expanded = !*expanded;
            entry.revision = revision;
        }
    }

    /// A line from the client itself in the transcript.
    pub fn client_notice(&mut self, text: String) {
        self.notice(text);
    }

    fn notice(&mut self, text: String) {
        let revision = self.bump();
        self.transcript.push(Entry {
            kind: EntryKind::Notice(text),
            revision,
        });
    }

    /// The tool call with this id.
    pub fn tool_call_by_id(&self, id: &str) -> Option<&ToolCallRow> {
        self.tool_index.get(id).map(|&i| &self.tool_calls[i])
    }

    /// True while a prompt turn is in flight.
    pub fn is_running(&self) -> bool {
        matches!(self.run, RunStatus::Running | RunStatus::Cancelling)
    }
}

fn set_locations(row: &mut ToolCallRow, locations: &[agent_client_protocol::v1::schema::ToolCallLocation]) {
    row.locations = locations
        .iter()
        .map(|l| Location {
            path: l.path.clone(),
            line: l.line,
        })
        .collect();
}

fn set_content(row: &mut ToolCallRow, content: &[ToolCallContent]) {
    for item in content {
        match item {
            ToolCallContent::Content(c) => {
                if !row.output.is_empty() {
                    row.output.push('\n');
                }
                row.output.push_str(&content_text(&c.content));
            }
            ToolCallContent::Diff(d) => {
                row.diffs
                    .push(FileDiff::compute(d.path.clone(), d.old_text.as_deref(), &d.new_text));
            }
            ToolCallContent::Terminal(t) => {
                row.output.push_str(&format!("[terminal {}]", t.terminal_id.0));
            }
            _ => {}
        }
    }
}

/// The text of a content block (resources by their text or URI).
pub fn content_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::ResourceLink(link) => format!("[{}]({})", link.name, link.uri),
        ContentBlock::Resource(res) => match &res.resource {
            EmbeddedResourceResource::TextResourceContents(t) => t.text.clone(),
            EmbeddedResourceResource::BlobResourceContents(b) => format!("[binary {}]", b.uri),
            _ => String::new(),
        },
        ContentBlock::Image(_) => "[image]".into(),
        ContentBlock::Audio(_) => "[audio]".into(),
        _ => String::new(),
    }
}

fn run_id_of(raw: &Value) -> Option<String> {
    raw.get("run_id").and_then(Value::as_str).map(str::to_owned)
}

fn compact_json(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn raw_output_text(raw: &Value) -> String {
    match raw {
        Value::String(s) => s.clone(),
        other => compact_json(other),
    }
}

/// `_meta["ided/status"]` of a plan entry: ided's failed/skipped.
fn meta_status(meta: Option<&serde_json::Map<String, Value>>) -> Option<StepStatus> {
    let status = meta?.get(PLAN_STATUS_META).and_then(Value::as_str)?;
    match status {
        "pending" => Some(StepStatus::Pending),
        "in_progress" => Some(StepStatus::InProgress),
        "completed" => Some(StepStatus::Completed),
        "failed" => Some(StepStatus::Failed),
        "skipped" => Some(StepStatus::Skipped),
        _ => None,
    }
}

fn choice_role(id: &str, kind: PermissionOptionKind) -> ChoiceRole {
    let id = id.to_ascii_lowercase();
    if id.contains("feedback") {
        ChoiceRole::Feedback
    } else if id.contains("reject") {
        ChoiceRole::Reject
    } else if id.contains("accept") {
        ChoiceRole::Accept
    } else {
        match kind {
            PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways => ChoiceRole::Accept,
            PermissionOptionKind::RejectOnce | PermissionOptionKind::RejectAlways => ChoiceRole::Reject,
            _ => ChoiceRole::Other,
        }
    }
}

/// The wire name of a stop reason (`end_turn`, `cancelled`, ...).
pub fn stop_reason_label(stop: StopReason) -> String {
    serde_json::to_value(stop)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "unknown".into())
}
