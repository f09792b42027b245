//! Past sessions (`session/list`), loaded with `session/load` (which replays their runs; each
//! reviewed run then shows a Roll back button).

use iced::widget::{button, column, row, scrollable, text};
use iced::{Element, Fill};

use super::theme;
use crate::acp::PastSession;

/// History messages.
#[derive(Debug, Clone)]
pub enum Message {
    Refresh,
    Load(String),
}

/// The history list.
pub fn view(sessions: &[PastSession], can_list: bool, can_load: bool) -> Element<'_, Message> {
    let mut col = column![row![
        text("History").size(14).width(Fill),
        button(text("Refresh").size(12))
            .style(theme::link)
            .on_press_maybe(can_list.then_some(Message::Refresh)),
    ]]
    .spacing(2);
    if sessions.is_empty() {
        col = col.push(text("No past sessions.").size(12).color(theme::MUTED));
    }
    for session in sessions {
        let title = if session.title.is_empty() {
            session.session_id.clone()
        } else {
            session.title.clone()
        };
        col = col.push(
            row![
                button(text(title).size(12))
                    .style(theme::link)
                    .width(Fill)
                    .on_press_maybe(can_load.then(|| Message::Load(session.session_id.clone()))),
                text(session.updated_at.clone()).size(11).color(theme::MUTED),
            ]
            .spacing(6),
        );
    }
    scrollable(col).height(iced::Length::Fixed(140.0)).into()
}
