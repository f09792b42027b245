//! The file tree panel.

use std::path::Path;

use iced::widget::{button, column, scrollable, text};
use iced::{Element, Fill};

use super::theme;
use crate::app::Message;
use crate::workspace::FileTree;

/// The tree: folders toggle, files open in the editor.
pub fn view<'a>(tree: &'a FileTree, workspace: &'a Path) -> Element<'a, Message> {
    let name = workspace
        .file_name()
        .map_or_else(|| workspace.display().to_string(), |n| n.to_string_lossy().into_owned());
    let mut col = column![text(name).size(14)].spacing(0).padding(4);
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
