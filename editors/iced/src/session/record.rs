//! Recorded session event sequences (JSON Lines): what the connection saw, replayed into a
//! [`SessionState`]. The reducer tests and the benchmark use them.

use agent_client_protocol::v1::schema::{RequestPermissionRequest, StopReason};
use serde::Deserialize;
use serde_json::Value;

use super::state::{AgentExit, SessionState};

/// One recorded event, in the order the client saw it.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RecordedEvent {
    /// The params of a `session/update` notification, raw (malformed ones are skipped).
    Update { params: Value },
    /// The params of a `session/request_permission` request.
    Permission { params: Value },
    /// The person answered the permission request with this option id (or `cancelled`).
    Answer { option: String },
    /// The person sent a prompt.
    Prompt { text: String },
    /// The person pressed Cancel (`session/cancel` went out).
    Cancel,
    /// The prompt request answered with this stop reason.
    PromptFinished { stop_reason: StopReason },
    /// The prompt request failed.
    PromptFailed { message: String },
    /// The agent process ended.
    AgentExit {
        code: Option<i32>,
        #[serde(default)]
        stderr: Vec<String>,
    },
}

impl RecordedEvent {
    /// Parses a JSON Lines recording (blank lines and `//` comments ignored).
    pub fn parse_lines(text: &str) -> Result<Vec<RecordedEvent>, serde_json::Error> {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("//"))
            .map(serde_json::from_str)
            .collect()
    }

    /// Folds this event into `state`.
    pub fn apply_to(&self, state: &mut SessionState) {
        match self {
            RecordedEvent::Update { params } => {
                state.apply_json(params);
            }
            RecordedEvent::Permission { params } => {
                match serde_json::from_value::<RequestPermissionRequest>(params.clone()) {
                    Ok(request) => state.permission_requested(&request),
                    Err(err) => {
                        log::warn!("skipping a malformed permission request: {err}");
                        state.skipped += 1;
                    }
                }
            }
            RecordedEvent::Answer { option } => state.permission_answered(option),
            RecordedEvent::Prompt { text } => state.prompt_sent(text),
            RecordedEvent::Cancel => state.cancel_requested(),
            RecordedEvent::PromptFinished { stop_reason } => state.prompt_finished(*stop_reason),
            RecordedEvent::PromptFailed { message } => state.prompt_failed(message),
            RecordedEvent::AgentExit { code, stderr } => state.agent_exited(AgentExit {
                code: *code,
                stderr_tail: stderr.clone(),
                message: String::new(),
            }),
        }
    }

    /// Replays a whole recording into a fresh state for `session_id`.
    pub fn replay(session_id: &str, events: &[RecordedEvent]) -> SessionState {
        let mut state = SessionState::for_session(session_id, None);
        for event in events {
            event.apply_to(&mut state);
        }
        state
    }
}
