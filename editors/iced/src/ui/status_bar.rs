//! The status bar: connection, agent, session, run and daemon/index status.

use iced::widget::text::Wrapping;
use iced::widget::{container, row, text};
use iced::{Element, Fill, Length};

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
    // One line high whatever it says (a long status cut at the edge): the panes above keep
    // their size.
    let line = |t: iced::widget::Text<'static>| t.size(12).wrapping(Wrapping::None);
    let mut bar = row![
        line(connection),
        line(text(session)),
        line(text(mode)),
        container(line(text(app.status.clone()))).width(Fill).clip(true),
        line(text(skipped)),
    ]
    .spacing(16);
    if let Some(error) = &app.error {
        bar = bar.push(line(text(error.clone()).color(theme::ERROR)));
    }
    container(bar)
        .padding([2, 8])
        .width(Fill)
        .height(Length::Fixed(20.0))
        .clip(true)
        .style(theme::status_bar)
        .into()
}
