//! Past sessions (`session/list`), loaded with `session/load` (which replays their runs; each
//! reviewed run then shows a Roll back button). A session nobody prompted has no title (ided
//! titles a session with its first prompt) and nothing to replay: every start of the client
//! makes one, so the list leaves them out.

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
    let shown: Vec<&PastSession> = sessions.iter().filter(|s| !s.title.trim().is_empty()).collect();
    if shown.is_empty() {
        col = col.push(text("No past sessions.").size(12).color(theme::MUTED));
    }
    for session in shown {
        let title = session.title.clone();
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
