//! The editor pane: open buffers (iced `text_editor` with the syntax highlighter), tabs,
//! save. Buffers answer the agent's `fs/read_text_file`, so agents see unsaved text.
//!
//! Each buffer remembers the text it last read from or wrote to disk. When the file changes
//! under it (a run accepted, rejected or rolled back), a clean buffer follows the file; a buffer
//! with unsaved edits asks first (reload, or keep the edits), and a save never overwrites a file
//! that changed since the buffer last saw it without asking.

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
    /// The file's text as this buffer last read or wrote it.
    pub disk: String,
    /// The file's new text on disk while the buffer has unsaved edits: the person chooses.
    pub changed_on_disk: Option<String>,
}

/// What a save found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SaveOutcome {
    Written(String),
    /// The file changed since the buffer last saw it: nothing written; its text now.
    ChangedOnDisk(String),
}

/// What a save writes: the buffer's text, if the file still holds `expected`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaveRequest {
    pub path: PathBuf,
    pub text: String,
    pub expected: String,
}

impl Buffer {
    /// Shows `text` (the file's text on disk), clean, the cursor on the same line.
    fn replace_text(&mut self, text: &str) {
        let cursor = self.content.cursor();
        self.content = Content::with_text(text);
        let last = self.content.line_count().saturating_sub(1);
        self.content.move_to(Cursor {
            position: Position {
                line: cursor.position.line.min(last),
                column: 0,
            },
            selection: None,
        });
        self.disk = text.to_owned();
        self.dirty = false;
        self.changed_on_disk = None;
    }
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
    /// Drop the unsaved edits of buffer `index` for the file's text on disk.
    ReloadFromDisk(usize),
    /// Keep the edits of buffer `index`; the next save overwrites the changed file.
    KeepMine(usize),
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
                self.disk_changed(&path, text);
                index
            }
            None => {
                self.open.push(Buffer {
                    path,
                    content: Content::with_text(text),
                    dirty: false,
                    disk: text.to_owned(),
                    changed_on_disk: None,
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

    /// The file of `path` holds `text` now: a clean buffer follows it (keeping the cursor line),
    /// a buffer with unsaved edits asks (`changed_on_disk`). Returns true when it reloaded.
    pub fn disk_changed(&mut self, path: &Path, text: &str) -> bool {
        let Some(buffer) = self.open.iter_mut().find(|b| b.path == path) else {
            return false;
        };
        if buffer.disk == text {
            return false;
        }
        if buffer.dirty {
            if buffer.content.text() == text {
                buffer.disk = text.to_owned();
                buffer.dirty = false;
                buffer.changed_on_disk = None;
            } else {
                buffer.changed_on_disk = Some(text.to_owned());
            }
            return false;
        }
        buffer.replace_text(text);
        true
    }

    /// Applies an editor message; returns what to save for `Save`.
    pub fn update(&mut self, message: Message) -> Option<SaveRequest> {
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
                Some(SaveRequest {
                    path: buffer.path.clone(),
                    text: buffer.content.text(),
                    expected: buffer.disk.clone(),
                })
            }
            Message::ReloadFromDisk(index) => {
                if let Some(buffer) = self.open.get_mut(index)
                    && let Some(text) = buffer.changed_on_disk.take()
                {
                    buffer.replace_text(&text);
                }
                None
            }
            Message::KeepMine(index) => {
                if let Some(buffer) = self.open.get_mut(index)
                    && let Some(text) = buffer.changed_on_disk.take()
                {
                    buffer.disk = text;
                }
                None
            }
        }
    }

    /// A save ended: written (the buffer is clean, unless it was edited meanwhile), or refused
    /// because the file changed on disk (the buffer asks).
    pub fn saved(&mut self, path: &Path, outcome: &SaveOutcome) {
        let Some(buffer) = self.open.iter_mut().find(|b| b.path == path) else {
            return;
        };
        match outcome {
            SaveOutcome::Written(text) => {
                buffer.disk.clone_from(text);
                buffer.dirty = buffer.content.text() != *text;
                buffer.changed_on_disk = None;
            }
            SaveOutcome::ChangedOnDisk(text) => buffer.changed_on_disk = Some(text.clone()),
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
        let mut bar = column![];
        if let Some(index) = self.active
            && let Some(buffer) = self.open.get(index)
            && buffer.changed_on_disk.is_some()
        {
            let name = buffer.path.strip_prefix(workspace).unwrap_or(&buffer.path).display();
            bar = bar.push(
                container(
                    row![
                        text(format!("{name} changed on disk, and this tab has unsaved edits."))
                            .size(13)
                            .width(Fill),
                        button(text("Reload from disk").size(12))
                            .style(button::danger)
                            .on_press(Message::ReloadFromDisk(index)),
                        button(text("Keep my edits").size(12))
                            .style(button::secondary)
                            .on_press(Message::KeepMine(index)),
                    ]
                    .spacing(8)
                    .align_y(iced::Center),
                )
                .padding(6)
                .style(theme::banner)
                .width(Fill),
            );
        }
        column![
            scrollable(tabs).direction(scrollable::Direction::Horizontal(
                scrollable::Scrollbar::new().width(2).scroller_width(2)
            )),
            bar,
            body
        ]
        .spacing(4)
        .into()
    }
}
