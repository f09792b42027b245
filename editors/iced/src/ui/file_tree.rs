//! The file tree panel, with an "open folder" box that switches the workspace.

use std::path::Path;

use iced::widget::{button, column, row, scrollable, text, text_input};
use iced::{Element, Fill};

use super::theme;
use crate::app::Message;
use crate::workspace::FileTree;

/// The tree: folders toggle, files open in the editor.
pub fn view<'a>(tree: &'a FileTree, workspace: &'a Path, open_path: &'a str) -> Element<'a, Message> {
    let name = workspace
        .file_name()
        .map_or_else(|| workspace.display().to_string(), |n| n.to_string_lossy().into_owned());
    let open = row![
        text_input("Open folder…", open_path)
            .on_input(Message::OpenPathChanged)
            .on_submit(Message::OpenWorkspace)
            .size(12),
        button(text("Open").size(12))
            .style(button::secondary)
            .on_press_maybe((!open_path.trim().is_empty()).then_some(Message::OpenWorkspace)),
    ]
    .spacing(4);
    let mut col = column![open, text(name).size(14)].spacing(2).padding(4);
    for row in tree.rows() {
        let indent = "  ".repeat(row.depth);
        let marker = match (row.entry.is_dir, row.expanded) {
            (true, true) => "▾ ",
            (true, false) => "▸ ",
            (false, _) => "  ",
        };
        let message = if row.entry.is_dir {
            Message::TreeToggle(row.entry.path.clone())
        } else {
            Message::OpenFile(row.entry.path.clone(), None)
        };
        col = col.push(
            button(text(format!("{indent}{marker}{}", row.entry.name)).size(13))
                .style(theme::link)
                .padding([1, 4])
                .width(Fill)
                .on_press(message),
        );
    }
    scrollable(col).height(Fill).into()
}
