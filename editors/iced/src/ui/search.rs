//! The search panel (left, beside the file tree): ided's search of the workspace's code or docs,
//! and the definitions and references the editor asked for. Every result opens its file at its
//! line. The questions go to ided over ACP (`_ided/intel/<capability>`); ided answers from the
//! workspace daemon's index and language servers.

use std::path::{Path, PathBuf};

use iced::widget::{button, column, container, row, scrollable, text, text_input};
use iced::{Element, Fill, Font};

use super::theme;
use crate::session::intel::{Answer, Query};

/// Id of the search box (focus, simulator selectors).
pub const SEARCH_ID: &str = "search";

/// What the panel holds: the typed text, the question in flight, the last answer.
#[derive(Debug, Clone, Default)]
pub struct SearchPanel {
    pub text: String,
    /// Search the docs instead of the code.
    pub docs: bool,
    /// The question in flight and its request id (a later question replaces it).
    pub pending: Option<(u64, Query)>,
    /// The last question and its answer, or why there is none.
    pub shown: Option<(Query, Result<Answer, String>)>,
    /// The id of the next request.
    pub next_id: u64,
}

/// Search panel messages.
#[derive(Debug, Clone)]
pub enum Message {
    TextChanged(String),
    /// Search for the typed text.
    Submit,
    /// Search the docs (true) or the code.
    Docs(bool),
    /// Open a result: the file at the line.
    Open(PathBuf, u32),
}

impl SearchPanel {
    /// Starts `query`: its request id (answers to earlier ones are dropped).
    pub fn ask(&mut self, query: Query) -> u64 {
        self.next_id += 1;
        self.pending = Some((self.next_id, query));
        self.next_id
    }

    /// The answer to request `id`: the question it answered, when it is the one in flight.
    pub fn answered(&mut self, id: u64) -> Option<Query> {
        match self.pending.take() {
            Some((pending, query)) if pending == id => Some(query),
            other => {
                self.pending = other;
                None
            }
        }
    }

    /// The panel; `ready`: a session is there to ask.
    pub fn view<'a>(&'a self, workspace: &'a Path, ready: bool) -> Element<'a, Message> {
        let can_search = ready && !self.text.trim().is_empty();
        let input = text_input("Search the workspace…", &self.text)
            .id(SEARCH_ID)
            .on_input(Message::TextChanged)
            .on_submit_maybe(can_search.then_some(Message::Submit))
            .size(13);
        let kinds = row![
            toggle("Code", !self.docs, Message::Docs(false)),
            toggle("Docs", self.docs, Message::Docs(true)),
            iced::widget::space::horizontal(),
            button(text("Search").size(12))
                .style(button::secondary)
                .padding([2, 8])
                .on_press_maybe(can_search.then_some(Message::Submit)),
        ]
        .spacing(4)
        .align_y(iced::Center);
        let mut col = column![input, kinds].spacing(6).padding(4);
        if let Some((_, query)) = &self.pending {
            col = col.push(
                text(format!("Asking ided for the {}…", query.describe(workspace)))
                    .size(12)
                    .color(theme::WARN),
            );
        }
        match &self.shown {
            None if !ready => {
                col = col.push(text("Waiting for the session…").size(12).color(theme::MUTED));
            }
            None => {
                col = col.push(
                    text("Search ided's index, or ask the editor for a definition (F12) or references (Shift+F12).")
                        .size(12)
                        .color(theme::MUTED),
                );
            }
            Some((query, Err(why))) => {
                col = col
                    .push(text(capitalized(&query.describe(workspace))).size(13))
                    .push(text(why.clone()).size(12).color(theme::ERROR));
            }
            Some((query, Ok(answer))) => {
                col = col
                    .push(text(capitalized(&query.describe(workspace))).size(13))
                    .push(text(answer.summary.clone()).size(12).color(theme::MUTED));
                for note in &answer.notes {
                    col = col.push(text(note.clone()).size(11).color(theme::WARN));
                }
                let mut list = column![].spacing(2);
                for place in &answer.places {
                    let shown = place.path.strip_prefix(workspace).unwrap_or(&place.path).display();
                    let mut item = column![
                        text(format!("{shown}:{}", place.line))
                            .size(11)
                            .font(Font::MONOSPACE)
                            .color(if place.outside { theme::MUTED } else { theme::ACTIVE }),
                    ];
                    if !place.label.is_empty() {
                        item = item.push(text(place.label.clone()).size(12));
                    }
                    if !place.detail.is_empty() {
                        item = item.push(text(place.detail.clone()).size(11).color(theme::MUTED));
                    }
                    list = list.push(
                        button(item)
                            .style(theme::link)
                            .padding([2, 4])
                            .width(Fill)
                            .on_press(Message::Open(place.path.clone(), place.line)),
                    );
                }
                col = col.push(scrollable(list.width(Fill)).height(Fill));
            }
        }
        container(col).height(Fill).into()
    }
}

fn toggle(label: &str, active: bool, message: Message) -> Element<'static, Message> {
    button(text(label.to_owned()).size(12))
        .style(if active { theme::selected } else { theme::link })
        .padding([1, 6])
        .on_press(message)
        .into()
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}
