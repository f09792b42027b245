//! The status bar: connection, agent, session, run and daemon/index status.

use iced::widget::{container, row, text};
use iced::{Element, Fill};

use super::theme;
use crate::app::{App, Message};

pub fn view(app: &App) -> Element<'_, Message> {
    let connection = match (&app.connection, &app.exit) {
        (_, Some(_)) => text("agent stopped").color(theme::ERROR),
        (Some(_), None) => text("connected").color(theme::OK),
        (None, None) => text("starting").color(theme::WARN),
    };
    let session = app
        .session
        .as_ref()
        .and_then(|s| s.session_id.clone())
        .map_or_else(String::new, |id| format!("session {id}"));
    let mode = app
        .session
        .as_ref()
        .and_then(|s| s.current_mode.clone())
        .unwrap_or_default();
    let skipped = app
        .session
        .as_ref()
        .filter(|s| s.skipped > 0)
        .map_or_else(String::new, |s| format!("{} updates skipped", s.skipped));
    let mut bar = row![
        connection.size(12),
        text(session).size(12),
        text(mode).size(12),
        text(app.status.clone()).size(12).width(Fill),
        text(skipped).size(12)
    ]
    .spacing(16);
    if let Some(error) = &app.error {
        bar = bar.push(text(error.clone()).size(12).color(theme::ERROR));
    }
    container(bar)
        .padding([2, 8])
        .width(Fill)
        .style(theme::status_bar)
        .into()
}
