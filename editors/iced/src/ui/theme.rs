//! Colours and widget styles, in one place (views never inline colours).

use iced::widget::{button, container};
use iced::{Background, Border, Color, Theme};

use crate::session::{LineKind, StepStatus};
use agent_client_protocol::v1::schema::ToolCallStatus;

pub const ADDED_BG: Color = Color::from_rgb(0.10, 0.26, 0.14);
pub const REMOVED_BG: Color = Color::from_rgb(0.32, 0.11, 0.12);
pub const HUNK_FG: Color = Color::from_rgb(0.45, 0.65, 0.95);
pub const MUTED: Color = Color::from_rgb(0.55, 0.57, 0.62);
pub const OK: Color = Color::from_rgb(0.35, 0.78, 0.45);
pub const WARN: Color = Color::from_rgb(0.95, 0.75, 0.30);
pub const ERROR: Color = Color::from_rgb(0.95, 0.40, 0.40);
pub const ACTIVE: Color = Color::from_rgb(0.45, 0.70, 1.00);
pub const PANEL_BG: Color = Color::from_rgb(0.13, 0.14, 0.16);
pub const BAR_BG: Color = Color::from_rgb(0.09, 0.10, 0.12);

/// The application theme.
pub fn app_theme() -> Theme {
    Theme::TokyoNight
}

/// Colour of a plan step's text.
pub fn step_color(status: StepStatus) -> Color {
    match status {
        StepStatus::Pending => MUTED,
        StepStatus::InProgress => ACTIVE,
        StepStatus::Completed => OK,
        StepStatus::Failed => ERROR,
        StepStatus::Skipped => MUTED,
        StepStatus::Cancelled => WARN,
    }
}

/// Colour of a tool call's status.
pub fn tool_status_color(status: ToolCallStatus) -> Color {
    match status {
        ToolCallStatus::InProgress => ACTIVE,
        ToolCallStatus::Completed => OK,
        ToolCallStatus::Failed => ERROR,
        _ => MUTED,
    }
}

/// Background of one diff line.
pub fn diff_line(kind: LineKind) -> impl Fn(&Theme) -> container::Style {
    move |_theme| container::Style {
        background: match kind {
            LineKind::Added => Some(Background::Color(ADDED_BG)),
            LineKind::Removed => Some(Background::Color(REMOVED_BG)),
            _ => None,
        },
        text_color: match kind {
            LineKind::Hunk => Some(HUNK_FG),
            _ => None,
        },
        ..container::Style::default()
    }
}

/// A side panel.
pub fn panel(_theme: &Theme) -> container::Style {
    container::Style {
        background: Some(Background::Color(PANEL_BG)),
        border: Border {
            color: Color::from_rgb(0.22, 0.23, 0.27),
            width: 1.0,
            radius: 0.0.into(),
        },
        ..container::Style::default()
    }
}

/// The status bar.
pub fn status_bar(_theme: &Theme) -> container::Style {
    container::Style {
        background: Some(Background::Color(BAR_BG)),
        text_color: Some(MUTED),
        ..container::Style::default()
    }
}

/// The failure banner.
pub fn banner(_theme: &Theme) -> container::Style {
    container::Style {
        background: Some(Background::Color(Color::from_rgb(0.40, 0.10, 0.12))),
        text_color: Some(Color::WHITE),
        border: Border {
            color: ERROR,
            width: 1.0,
            radius: 4.0.into(),
        },
        ..container::Style::default()
    }
}

/// A tool-call or permission card.
pub fn card(_theme: &Theme) -> container::Style {
    container::Style {
        background: Some(Background::Color(Color::from_rgb(0.17, 0.18, 0.21))),
        border: Border {
            color: Color::from_rgb(0.26, 0.27, 0.32),
            width: 1.0,
            radius: 4.0.into(),
        },
        ..container::Style::default()
    }
}

/// A flat, text-like button (file tree rows, locations, list items).
pub fn link(theme: &Theme, status: button::Status) -> button::Style {
    let base = button::text(theme, status);
    button::Style {
        text_color: match status {
            button::Status::Hovered | button::Status::Pressed => ACTIVE,
            _ => base.text_color,
        },
        ..base
    }
}

/// A selected list item.
pub fn selected(theme: &Theme, status: button::Status) -> button::Style {
    button::Style {
        background: Some(Background::Color(Color::from_rgb(0.20, 0.25, 0.35))),
        ..link(theme, status)
    }
}
