//! The agent panel: session mode, the prompt box with slash-command completion and
//! attachments, the live plan checklist, the transcript (thoughts, messages, tool calls) and
//! the permission request's buttons.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::ToolCallStatus;
use iced::widget::{button, checkbox, column, container, lazy, pick_list, row, scrollable, text, text_input};
use iced::{Element, Fill, Font, Length, Task};

use super::theme;
use crate::session::state::{REJECTED, ROLLED_BACK, ROLLING_BACK};
use crate::session::{ChoiceRole, Entry, EntryKind, PlanRow, RunStatus, SessionState, ToolCallRow, commands};

/// How many transcript entries are shown at first (older ones behind "Show earlier").
pub const TRANSCRIPT_WINDOW: usize = 200;
/// Id of the prompt box (focus, simulator selectors).
pub const PROMPT_ID: &str = "prompt";
/// Id of the transcript's scrollable.
pub const TRANSCRIPT_ID: &str = "transcript";
/// Id of the feedback box.
pub const FEEDBACK_ID: &str = "feedback";

/// What the panel itself holds (the session lives in [`SessionState`]).
#[derive(Debug, Clone)]
pub struct AgentPanel {
    pub prompt: String,
    pub feedback: String,
    pub attach_file: bool,
    pub attach_selection: bool,
    /// Transcript entries shown from the end.
    pub window: usize,
}

impl Default for AgentPanel {
    fn default() -> Self {
        AgentPanel {
            prompt: String::new(),
            feedback: String::new(),
            attach_file: false,
            attach_selection: false,
            window: TRANSCRIPT_WINDOW,
        }
    }
}

/// A session mode in the picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModeChoice {
    pub id: String,
    pub name: String,
}

impl std::fmt::Display for ModeChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

/// Agent panel messages.
#[derive(Debug, Clone)]
pub enum Message {
    PromptChanged(String),
    /// Tab: complete the slash command.
    Complete,
    UseCommand(String),
    Send,
    Cancel,
    ModeSelected(ModeChoice),
    AttachFile(bool),
    AttachSelection(bool),
    ToggleThought(usize),
    OpenLocation(PathBuf, Option<u32>),
    /// A permission option was pressed (its option id).
    Choose(String),
    FeedbackChanged(String),
    ShowEarlier,
    ShowReview,
    /// `/rollback RUN_ID` for a reviewed run.
    RollBack(String),
}

impl AgentPanel {
    /// Applies the messages that only touch the panel; the rest go to the app.
    pub fn update_local(&mut self, message: &Message, session: Option<&SessionState>) -> bool {
        match message {
            Message::PromptChanged(prompt) => self.prompt.clone_from(prompt),
            Message::Complete => {
                if let Some(session) = session
                    && let Some(done) = commands::complete_prompt(&session.commands, &self.prompt)
                {
                    self.prompt = done;
                }
            }
            Message::UseCommand(name) => {
                if let Some(session) = session
                    && let Some(command) = session.commands.iter().find(|c| &c.name == name)
                {
                    self.prompt = commands::complete(command);
                }
            }
            Message::AttachFile(on) => self.attach_file = *on,
            Message::AttachSelection(on) => self.attach_selection = *on,
            Message::FeedbackChanged(text) => self.feedback.clone_from(text),
            Message::ShowEarlier => self.window += TRANSCRIPT_WINDOW,
            _ => return false,
        }
        true
    }

    /// The panel.
    /// The panel; `kept` is what the review pane keeps of the review (kept, total hunks).
    pub fn view<'a>(
        &'a self,
        session: Option<&'a SessionState>,
        connected: bool,
        workspace: &'a Path,
        kept: Option<(usize, usize)>,
    ) -> Element<'a, Message> {
        let Some(session) = session else {
            let hint = if connected {
                "Starting a session…"
            } else {
                "Waiting for ided acp…"
            };
            return container(text(hint).color(theme::MUTED)).center(Fill).into();
        };
        column![
            self.header(session),
            plan_view(&session.plan, session.plan_revision),
            self.transcript(session, workspace),
            self.permission(session, kept),
            self.prompt_box(session),
        ]
        .spacing(8)
        .padding(8)
        .into()
    }

    fn header<'a>(&'a self, session: &'a SessionState) -> Element<'a, Message> {
        let modes: Vec<ModeChoice> = session
            .modes
            .iter()
            .map(|m| ModeChoice {
                id: m.id.clone(),
                name: m.name.clone(),
            })
            .collect();
        let selected = session
            .current_mode
            .as_ref()
            .and_then(|id| modes.iter().find(|m| &m.id == id).cloned());
        let status = match &session.run {
            RunStatus::Idle => text("idle").color(theme::MUTED),
            RunStatus::Running => text("running").color(theme::ACTIVE),
            RunStatus::Cancelling => text("cancelling…").color(theme::WARN),
            RunStatus::Stopped(reason) => text(format!("stopped: {reason}")).color(theme::MUTED),
            // Why is said once, in the transcript.
            RunStatus::Failed(_) => text("failed").color(theme::ERROR),
            RunStatus::Refused(what) => text(format!("{what} refused")).color(theme::WARN),
        };
        let mut header = row![
            text("Mode").size(13),
            pick_list(modes, selected, Message::ModeSelected).text_size(13)
        ]
        .spacing(6)
        .align_y(iced::Center);
        header = header.push(iced::widget::space::horizontal()).push(status.size(13));
        if session.is_running() {
            header = header.push(button(text("Cancel").size(13)).on_press(Message::Cancel));
        }
        header.into()
    }

    fn transcript<'a>(&'a self, session: &'a SessionState, workspace: &'a Path) -> Element<'a, Message> {
        let total = session.transcript.len();
        let start = total.saturating_sub(self.window);
        let mut items = column![].spacing(6);
        if start > 0 {
            items = items.push(
                button(text(format!("Show earlier ({start} more)")).size(12))
                    .style(theme::link)
                    .on_press(Message::ShowEarlier),
            );
        }
        for (index, entry) in session.transcript.iter().enumerate().skip(start) {
            items = items.push(entry_view(index, entry, &session.tool_calls, workspace));
        }
        // The scrollbar gets its own lane: drawn over the entries it hid their right edge (a
        // tool call's status, the end of long lines).
        scrollable(items.width(Fill))
            .id(TRANSCRIPT_ID)
            .direction(scrollable::Direction::Vertical(scrollable::Scrollbar::new().spacing(4)))
            .anchor_bottom()
            .height(Fill)
            .into()
    }

    fn permission<'a>(&'a self, session: &'a SessionState, kept: Option<(usize, usize)>) -> Element<'a, Message> {
        let Some(permission) = &session.permission else {
            return column![].into();
        };
        let mut buttons = row![].spacing(6);
        let mut wants_feedback = false;
        let none_kept = matches!(kept, Some((0, total)) if total > 0);
        for choice in &permission.choices {
            // With every hunk rejected, accepting is rejecting: the Reject button says it (a
            // second, green "Reject" in the accept button's place read as two answers).
            if none_kept && choice.role == ChoiceRole::Accept {
                continue;
            }
            let enabled = choice.role != ChoiceRole::Feedback || !self.feedback.trim().is_empty();
            wants_feedback |= choice.role == ChoiceRole::Feedback;
            let style = match choice.role {
                ChoiceRole::Accept => button::success,
                ChoiceRole::Reject => button::danger,
                _ => button::secondary,
            };
            // With some hunks rejected in the review pane, accept applies the kept ones.
            let name = match kept {
                Some((kept, total)) if choice.role == ChoiceRole::Accept && kept < total => {
                    format!("Apply {kept} of {total} hunks")
                }
                _ => choice.name.clone(),
            };
            buttons = buttons.push(
                button(text(name).size(13))
                    .style(style)
                    .on_press_maybe(enabled.then(|| Message::Choose(choice.id.clone()))),
            );
        }
        let summary = session.review.as_ref().map_or_else(String::new, |r| {
            format!(
                "{}, +{} −{}",
                super::review::files_label(r.files.len()),
                r.added(),
                r.removed()
            )
        });
        let mut card = column![
            text(permission.title.clone()).size(14),
            row![
                text(summary).size(13).color(theme::MUTED),
                button(text("Show diff").size(12))
                    .style(theme::link)
                    .on_press(Message::ShowReview),
            ]
            .spacing(8)
            .align_y(iced::Center),
            buttons,
        ]
        .spacing(6);
        if wants_feedback {
            card = card.push(
                text_input("Feedback for another attempt…", &self.feedback)
                    .id(FEEDBACK_ID)
                    .on_input(Message::FeedbackChanged)
                    .size(13),
            );
        }
        container(card).padding(8).style(theme::card).width(Fill).into()
    }

    fn prompt_box<'a>(&'a self, session: &'a SessionState) -> Element<'a, Message> {
        let suggestions = commands::suggestions(&session.commands, &self.prompt);
        // The suggestions live in a column of their own that is always there: the prompt box
        // keeps its place in the widget tree, so iced keeps its state (focus, cursor) while the
        // list grows and shrinks under the typing.
        let mut list = column![].spacing(4);
        for command in suggestions {
            let hint = command.hint.as_deref().map(|h| format!(" {h}")).unwrap_or_default();
            list = list.push(
                button(
                    row![
                        text(format!("/{}{hint}", command.name)).size(13).font(Font::MONOSPACE),
                        text(command.description.clone()).size(12).color(theme::MUTED),
                    ]
                    .spacing(8),
                )
                .style(theme::link)
                .on_press(Message::UseCommand(command.name.clone())),
            );
        }
        let can_send = !self.prompt.trim().is_empty() && !session.is_running();
        let input = text_input("Ask ided… (/ for commands)", &self.prompt)
            .id(PROMPT_ID)
            .on_input(Message::PromptChanged)
            .on_submit_maybe(can_send.then_some(Message::Send))
            .size(14);
        column![list]
            .spacing(4)
            .push(
                row![
                    input,
                    button(text("Send")).on_press_maybe(can_send.then_some(Message::Send))
                ]
                .spacing(6),
            )
            .push(
                row![
                    checkbox(self.attach_file)
                        .label("Attach open file")
                        .on_toggle(Message::AttachFile)
                        .text_size(12),
                    checkbox(self.attach_selection)
                        .label("Attach selection")
                        .on_toggle(Message::AttachSelection)
                        .text_size(12),
                ]
                .spacing(12),
            )
            .into()
    }
}

/// Scrolls the transcript to its end, where it follows new output. For a session newly shown:
/// the scrollable's state belongs to the panel, not to the session, so without this a new or
/// loaded session kept the last one's distance from the end, and a transcript shorter than it
/// stayed at its top while output came in. (Anchored at the bottom, the offset counts from the
/// end: 0 is the end; `snap_to_end` would go to the top.)
pub fn follow_end<T: Send + 'static>() -> Task<T> {
    iced::widget::operation::scroll_to(
        TRANSCRIPT_ID,
        iced::widget::operation::AbsoluteOffset { x: None, y: Some(0.0) },
    )
}

/// The plan as a checklist.
pub fn plan_view(plan: &[PlanRow], revision: u64) -> Element<'_, Message> {
    if plan.is_empty() {
        return column![].into();
    }
    let rows: Vec<PlanRow> = plan.to_vec();
    lazy(revision, move |_| {
        let mut col = column![text("Plan").size(14)].spacing(2);
        for step in &rows {
            col = col.push(
                row![
                    text(step.status.mark())
                        .font(Font::MONOSPACE)
                        .size(13)
                        .color(theme::step_color(step.status)),
                    text(step.content.clone()).size(13),
                    text(step.status.label()).size(11).color(theme::step_color(step.status)),
                ]
                .spacing(6),
            );
        }
        container(col).padding(6).style(theme::card).width(Fill)
    })
    .into()
}

fn entry_view<'a>(index: usize, entry: &'a Entry, tools: &'a [ToolCallRow], workspace: &Path) -> Element<'a, Message> {
    let revision = match &entry.kind {
        EntryKind::Tool(i) => tools.get(*i).map_or(0, |t| t.revision),
        _ => entry.revision,
    };
    let kind = entry.kind.clone();
    let tool = match &entry.kind {
        EntryKind::Tool(i) => tools.get(*i).cloned(),
        _ => None,
    };
    let workspace = workspace.to_path_buf();
    lazy((index, revision), move |_| -> Element<'static, Message> {
        match &kind {
            EntryKind::User(t) => container(text(format!("> {t}")).size(14))
                .padding(4)
                .style(theme::card)
                .width(Fill)
                .into(),
            EntryKind::Agent(t) => agent_text(t),
            EntryKind::Thought { text: t, expanded } => {
                let shown = if *expanded {
                    t.clone()
                } else {
                    t.lines().next().unwrap_or_default().chars().take(120).collect()
                };
                let marker = if *expanded { "▾" } else { "▸" };
                button(text(format!("{marker} {shown}")).size(12).color(theme::MUTED))
                    .style(theme::link)
                    .padding(0)
                    .on_press(Message::ToggleThought(index))
                    .into()
            }
            EntryKind::Notice(t) => text(t.clone()).size(12).color(theme::WARN).into(),
            EntryKind::Tool(_) => tool
                .as_ref()
                .map_or_else(|| column![].into(), |t| tool_view(t, &workspace)),
        }
    })
    .into()
}

fn tool_view(tool: &ToolCallRow, workspace: &Path) -> Element<'static, Message> {
    let kind = serde_json::to_value(tool.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let (status, status_color) = status_label(tool);
    let mut col = column![
        row![
            text(kind)
                .size(11)
                .font(Font::MONOSPACE)
                .color(theme::MUTED)
                .width(Length::Fixed(56.0)),
            // The title takes what is left (wrapping), so the status always fits the card.
            text(tool.title.clone()).size(13).width(Fill),
            text(status).size(11).color(status_color),
        ]
        .spacing(6)
    ]
    .spacing(2);
    if !tool.locations.is_empty() {
        let mut locations = row![].spacing(6);
        for location in tool.locations.iter().take(8) {
            let shown = location
                .path
                .strip_prefix(workspace)
                .unwrap_or(&location.path)
                .display();
            let label = match location.line {
                Some(line) => format!("{shown}:{line}"),
                None => shown.to_string(),
            };
            locations = locations.push(
                button(text(label).size(11).font(Font::MONOSPACE))
                    .style(theme::link)
                    .padding(0)
                    .on_press(Message::OpenLocation(location.path.clone(), location.line)),
            );
        }
        col = col.push(locations);
    }
    if !tool.diffs.is_empty() {
        let added: usize = tool.diffs.iter().map(|d| d.added).sum();
        let removed: usize = tool.diffs.iter().map(|d| d.removed).sum();
        col = col.push(
            button(
                text(format!(
                    "{} changed, +{added} −{removed}",
                    super::review::files_label(tool.diffs.len())
                ))
                .size(12),
            )
            .style(theme::link)
            .padding(0)
            .on_press(Message::ShowReview),
        );
    }
    // An accepted review (ided completes the review call; its diffs stay) can be rolled back,
    // unless ided says it already was.
    if let Some(run_id) = &tool.run_id
        && !tool.diffs.is_empty()
        && tool.status == ToolCallStatus::Completed
    {
        col = col.push(match tool.review_state.as_deref() {
            Some(ROLLED_BACK) => Element::from(text(format!("Run {run_id} rolled back")).size(12).color(theme::MUTED)),
            Some(ROLLING_BACK) => text(format!("Rolling back run {run_id}…"))
                .size(12)
                .color(theme::WARN)
                .into(),
            _ => button(text(format!("Roll back run {run_id}")).size(12))
                .style(button::secondary)
                .on_press(Message::RollBack(run_id.clone()))
                .into(),
        });
    }
    if !tool.output.is_empty() {
        let output: String = tool.output.lines().take(12).collect::<Vec<_>>().join("\n");
        col = col.push(text(output).size(11).font(Font::MONOSPACE).color(theme::MUTED));
    }
    container(col).padding(6).style(theme::card).width(Fill).into()
}

/// The word a tool call's card shows for its status, and its colour. A review the person
/// rejected, or sent back with feedback, ends `failed` in ACP terms (nothing was applied), but
/// that was their choice, not a failure: it reads `rejected` / `sent back`, not red.
pub fn status_label(tool: &ToolCallRow) -> (String, iced::Color) {
    if !tool.diffs.is_empty() && tool.status == ToolCallStatus::Failed {
        if tool.review_state.as_deref() == Some(REJECTED) || tool.answered.as_deref() == Some("reject") {
            return ("rejected".into(), theme::MUTED);
        }
        if tool.answered.as_deref() == Some("feedback") {
            return ("sent back".into(), theme::MUTED);
        }
    }
    let status = serde_json::to_value(tool.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    (status, theme::tool_status_color(tool.status))
}

/// Agent text, with a Mermaid plan graph (a dry run's) drawn as a graph.
fn agent_text(t: &str) -> Element<'static, Message> {
    use crate::session::plan_graph::{Segment, segments};
    if !t.contains("```mermaid") {
        return text(t.replace('\t', "    ")).size(14).into();
    }
    let mut col = column![].spacing(6);
    for segment in segments(t) {
        col = col.push(match segment {
            Segment::Text(t) => Element::from(text(t).size(14)),
            Segment::Graph(graph) => container(
                column![
                    text("Plan graph").size(12).color(theme::MUTED),
                    scrollable(super::plan_graph::view(&graph))
                        .direction(scrollable::Direction::Horizontal(scrollable::Scrollbar::default())),
                ]
                .spacing(4),
            )
            .padding(6)
            .style(theme::card)
            .into(),
        });
    }
    col.into()
}
