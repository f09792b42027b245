//! The editor pane: open buffers (iced `text_editor` with the syntax highlighter), tabs,
//! save. Buffers answer the agent's `fs/read_text_file`, so agents see unsaved text.

use std::path::{Path, PathBuf};

use iced::widget::text_editor::{self, Content, Cursor, Position};
use iced::widget::{button, column, container, row, scrollable, text};
use iced::{Element, Fill, Font};

use super::theme;

/// Id of the editor widget (focus, simulator selectors).
pub const EDITOR_ID: &str = "editor";

/// One open file.
#[derive(Debug)]
pub struct Buffer {
    pub path: PathBuf,
    pub content: Content,
    pub dirty: bool,
}

/// The open buffers and the active one.
#[derive(Debug, Default)]
pub struct Buffers {
    pub open: Vec<Buffer>,
    pub active: Option<usize>,
}

/// Editor pane messages.
#[derive(Debug, Clone)]
pub enum Message {
    Edit(text_editor::Action),
    Select(usize),
    Close(usize),
    Save,
}

impl Buffers {
    /// The buffer for `path`, if open.
    pub fn find(&self, path: &Path) -> Option<&Buffer> {
        self.open.iter().find(|b| b.path == path)
    }

    /// The active buffer.
    pub fn current(&self) -> Option<&Buffer> {
        self.active.and_then(|i| self.open.get(i))
    }

    /// Opens (or replaces the text of) `path` and makes it active; the cursor goes to `line`.
    pub fn open(&mut self, path: PathBuf, text: &str, line: Option<u32>) {
        let index = match self.open.iter().position(|b| b.path == path) {
            Some(index) => {
                if !self.open[index].dirty {
                    self.open[index].content = Content::with_text(text);
                }
                index
            }
            None => {
                self.open.push(Buffer {
                    path,
                    content: Content::with_text(text),
                    dirty: false,
                });
                self.open.len() - 1
            }
        };
        self.active = Some(index);
        if let Some(line) = line {
            self.go_to_line(index, line);
        }
    }

    /// Moves the cursor of buffer `index` to `line` (1-based).
    pub fn go_to_line(&mut self, index: usize, line: u32) {
        if let Some(buffer) = self.open.get_mut(index) {
            let last = buffer.content.line_count().saturating_sub(1);
            buffer.content.move_to(Cursor {
                position: Position {
                    line: (line.saturating_sub(1) as usize).min(last),
                    column: 0,
                },
                selection: None,
            });
        }
    }

    /// Reloads a clean buffer from new text (after an accepted run); dirty ones are kept.
    pub fn reload(&mut self, path: &Path, text: &str) -> bool {
        match self.open.iter_mut().find(|b| b.path == path) {
            Some(buffer) if !buffer.dirty => {
                let cursor = buffer.content.cursor();
                buffer.content = Content::with_text(text);
                buffer.content.move_to(Cursor {
                    selection: None,
                    ..cursor
                });
                true
            }
            _ => false,
        }
    }

    /// Applies an editor message; returns the `(path, text)` to save for `Save`.
    pub fn update(&mut self, message: Message) -> Option<(PathBuf, String)> {
        match message {
            Message::Edit(action) => {
                if let Some(buffer) = self.active.and_then(|i| self.open.get_mut(i)) {
                    buffer.dirty |= action.is_edit();
                    buffer.content.perform(action);
                }
                None
            }
            Message::Select(index) => {
                if index < self.open.len() {
                    self.active = Some(index);
                }
                None
            }
            Message::Close(index) => {
                if index < self.open.len() {
                    self.open.remove(index);
                    self.active = if self.open.is_empty() {
                        None
                    } else {
                        Some(index.min(self.open.len() - 1))
                    };
                }
                None
            }
            Message::Save => {
                let buffer = self.current()?;
                Some((buffer.path.clone(), buffer.content.text()))
            }
        }
    }

    /// Marks a saved buffer clean.
    pub fn saved(&mut self, path: &Path) {
        if let Some(buffer) = self.open.iter_mut().find(|b| b.path == path) {
            buffer.dirty = false;
        }
    }

    /// The editor pane.
    pub fn view(&self, workspace: &Path) -> Element<'_, Message> {
        let tabs = row(self.open.iter().enumerate().map(|(i, b)| {
            let name = b.path.strip_prefix(workspace).unwrap_or(&b.path).display().to_string();
            let label = if b.dirty { format!("{name} *") } else { name };
            let style = if Some(i) == self.active {
                theme::selected
            } else {
                theme::link
            };
            row![
                button(text(label).size(13)).style(style).on_press(Message::Select(i)),
                button(text("x").size(11))
                    .style(theme::link)
                    .on_press(Message::Close(i)),
            ]
            .into()
        }))
        .spacing(4);
        let body: Element<'_, Message> = match self.current() {
            Some(buffer) => {
                let syntax = buffer.path.extension().and_then(|e| e.to_str()).unwrap_or("txt");
                iced::widget::text_editor(&buffer.content)
                    .id(EDITOR_ID)
                    .height(Fill)
                    .font(Font::MONOSPACE)
                    .size(13)
                    .highlight(syntax, iced::highlighter::Theme::Base16Ocean)
                    .on_action(Message::Edit)
                    .into()
            }
            None => container(text("Open a file from the tree.").color(theme::MUTED))
                .center(Fill)
                .into(),
        };
        column![
            scrollable(tabs).direction(scrollable::Direction::Horizontal(
                scrollable::Scrollbar::new().width(2).scroller_width(2)
            )),
            body
        ]
        .spacing(4)
        .into()
    }
}
