//! The editor pane: open buffers (iced `text_editor` with the syntax highlighter), tabs,
//! save. Buffers answer the agent's `fs/read_text_file`, so agents see unsaved text.
//!
//! Each buffer remembers the text it last read from or wrote to disk. When the file changes
//! under it (a run accepted, rejected or rolled back), a clean buffer follows the file; a buffer
//! with unsaved edits asks first (reload, merge, or keep the edits), and a save never overwrites
//! a file that changed since the buffer last saw it without asking. Edits kept over such a
//! change do not undo it silently either: the next save says so and offers keep theirs, keep
//! mine, or a three-way merge of both (`session::merge`).

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
    /// Why the file changed on disk, when the app knows ("run r-1 was accepted").
    pub disk_note: Option<String>,
    /// The person kept their edits over a change on disk: a save would undo that change, so it
    /// asks first.
    pub kept_over: Option<KeptOver>,
    /// A save waits for the person's choice (keep theirs, keep mine, merge).
    pub save_asks: bool,
}

/// Edits kept over a change on disk: the text they started from, and the file's text since.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptOver {
    pub base: String,
    pub theirs: String,
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
        self.kept_over = None;
        self.save_asks = false;
    }

    /// The text the unsaved edits started from (before any change on disk they were kept over).
    fn base(&self) -> String {
        self.kept_over
            .as_ref()
            .map_or_else(|| self.disk.clone(), |k| k.base.clone())
    }

    /// Merges the unsaved edits with `theirs` (the file on disk now) into the buffer; the
    /// number of conflict blocks.
    fn merge(&mut self, theirs: String) -> usize {
        let merged = crate::session::merge::merge3(&self.base(), &self.content.text(), &theirs);
        let cursor = self.content.cursor();
        self.content = Content::with_text(&merged.text);
        let last = self.content.line_count().saturating_sub(1);
        self.content.move_to(Cursor {
            position: Position {
                line: cursor.position.line.min(last),
                column: 0,
            },
            selection: None,
        });
        self.dirty = merged.text != theirs;
        self.disk = theirs;
        self.changed_on_disk = None;
        self.kept_over = None;
        self.save_asks = false;
        merged.conflicts
    }

    /// What a save of this buffer writes.
    fn save_request(&self) -> SaveRequest {
        SaveRequest {
            path: self.path.clone(),
            text: self.content.text(),
            expected: self.disk.clone(),
        }
    }
}

/// The open buffers and the active one.
#[derive(Debug, Default)]
pub struct Buffers {
    pub open: Vec<Buffer>,
    pub active: Option<usize>,
    /// What the last message did that the status bar should say (a merge's conflicts).
    pub note: Option<String>,
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
    /// Keep the edits of buffer `index` over the changed file (a save then asks first).
    KeepMine(usize),
    /// Merge the edits of buffer `index` with the file's text on disk (three-way).
    Merge(usize),
    /// The save that would undo the change on disk: drop the edits for the file on disk.
    KeepTheirs(usize),
    /// The save that would undo the change on disk: write the edits anyway.
    SaveMine(usize),
    /// Where the symbol at the cursor is defined (F12; answered by ided, see `ui::search`).
    GoToDefinition,
    /// Every use of the symbol at the cursor (Shift+F12).
    FindReferences,
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
                    disk_note: None,
                    kept_over: None,
                    save_asks: false,
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
            let line = (line.saturating_sub(1) as usize).min(last);
            buffer.content.move_to(Cursor {
                position: Position { line, column: 0 },
                selection: None,
            });
        }
    }

    /// The file of `path` holds `text` now: a clean buffer follows it (keeping the cursor line),
    /// a buffer with unsaved edits asks (`changed_on_disk`). Returns true when it reloaded.
    pub fn disk_changed(&mut self, path: &Path, text: &str) -> bool {
        self.disk_changed_because(path, text, None)
    }

    /// [`Buffers::disk_changed`], saying why when it is known (`note`: "run r-1 was accepted").
    pub fn disk_changed_because(&mut self, path: &Path, text: &str, note: Option<&str>) -> bool {
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
                buffer.kept_over = None;
                buffer.save_asks = false;
            } else {
                buffer.changed_on_disk = Some(text.to_owned());
                buffer.disk_note = note.map(str::to_owned);
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
                let index = self.active?;
                let buffer = self.open.get_mut(index)?;
                // Edits kept over a change on disk: writing them would undo that change.
                if buffer.kept_over.is_some() && buffer.dirty {
                    buffer.save_asks = true;
                    return None;
                }
                Some(buffer.save_request())
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
                    && let Some(theirs) = buffer.changed_on_disk.take()
                {
                    buffer.kept_over = Some(KeptOver {
                        base: buffer.base(),
                        theirs: theirs.clone(),
                    });
                    buffer.disk = theirs;
                }
                None
            }
            Message::Merge(index) => {
                let buffer = self.open.get_mut(index)?;
                let saving = buffer.save_asks;
                let theirs = buffer
                    .changed_on_disk
                    .clone()
                    .or_else(|| buffer.kept_over.as_ref().map(|k| k.theirs.clone()))?;
                let conflicts = buffer.merge(theirs);
                let name = buffer
                    .path
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                if conflicts > 0 {
                    self.note = Some(format!(
                        "merged {name} with {conflicts} conflict{}: resolve the <<<<<<< blocks, then save",
                        if conflicts == 1 { "" } else { "s" }
                    ));
                    return None;
                }
                self.note = Some(format!("merged {name}: your edits and the change on disk"));
                // Merged cleanly while saving: the save goes on with the merged text.
                (saving && buffer.dirty).then(|| buffer.save_request())
            }
            Message::KeepTheirs(index) => {
                if let Some(buffer) = self.open.get_mut(index) {
                    let theirs = buffer.disk.clone();
                    buffer.replace_text(&theirs);
                }
                None
            }
            Message::SaveMine(index) => {
                let buffer = self.open.get_mut(index)?;
                buffer.kept_over = None;
                buffer.save_asks = false;
                Some(buffer.save_request())
            }
            // The app asks ided (it holds the connection).
            Message::GoToDefinition | Message::FindReferences => None,
        }
    }

    /// The active buffer's file and the cursor's place in it: 1-based line, and 1-based column
    /// in characters (as ided counts them).
    pub fn cursor_place(&self) -> Option<(PathBuf, u32, u32)> {
        let buffer = self.current()?;
        let position = buffer.content.cursor().position;
        let line = buffer
            .content
            .line(position.line)
            .map_or_else(String::new, |l| l.text.to_string());
        let column = crate::session::intel::char_column(&line, position.column);
        Some((buffer.path.clone(), position.line as u32 + 1, column))
    }

    /// Moves the cursor of the active buffer to `line` and `column` (1-based; the column in
    /// characters).
    pub fn move_cursor(&mut self, line: u32, column: u32) {
        let Some(buffer) = self.active.and_then(|i| self.open.get_mut(i)) else {
            return;
        };
        let last = buffer.content.line_count().saturating_sub(1);
        let line = (line.saturating_sub(1) as usize).min(last);
        let text = buffer
            .content
            .line(line)
            .map_or_else(String::new, |l| l.text.to_string());
        let byte = text
            .char_indices()
            .nth(column.saturating_sub(1) as usize)
            .map_or(text.len(), |(i, _)| i);
        buffer.content.move_to(Cursor {
            position: Position { line, column: byte },
            selection: None,
        });
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
                buffer.kept_over = None;
                buffer.save_asks = false;
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
        {
            let name = buffer.path.strip_prefix(workspace).unwrap_or(&buffer.path).display();
            let why = buffer
                .disk_note
                .as_deref()
                .map_or_else(String::new, |note| format!(" ({note})"));
            if buffer.changed_on_disk.is_some() {
                bar = bar.push(ask_bar(
                    format!("{name} changed on disk{why}, and this tab has unsaved edits."),
                    [
                        ("Reload from disk", Message::ReloadFromDisk(index)),
                        ("Merge", Message::Merge(index)),
                        ("Keep my edits", Message::KeepMine(index)),
                    ],
                ));
            } else if buffer.save_asks {
                bar = bar.push(ask_bar(
                    format!("Saving would undo the change made to {name} on disk{why}: your edits started before it."),
                    [
                        ("Keep theirs", Message::KeepTheirs(index)),
                        ("Keep mine", Message::SaveMine(index)),
                        ("Merge", Message::Merge(index)),
                    ],
                ));
            }
        }
        let has_file = self.current().is_some();
        let ask = |label: &'static str, message: Message| {
            button(text(label).size(12))
                .style(theme::link)
                .padding([1, 6])
                .on_press_maybe(has_file.then_some(message))
        };
        column![
            row![
                scrollable(tabs)
                    .direction(scrollable::Direction::Horizontal(
                        scrollable::Scrollbar::new().width(2).scroller_width(2)
                    ))
                    .width(Fill),
                ask("Definition (F12)", Message::GoToDefinition),
                ask("References (Shift+F12)", Message::FindReferences),
            ]
            .spacing(4)
            .align_y(iced::Center),
            bar,
            body
        ]
        .spacing(4)
        .into()
    }
}

/// A bar over the editor that asks: the question and its three answers (the first drops the
/// person's edits, so it is drawn as the dangerous one).
fn ask_bar<'a>(question: String, answers: [(&'static str, Message); 3]) -> Element<'a, Message> {
    let mut line = row![text(question).size(13).width(Fill)]
        .spacing(8)
        .align_y(iced::Center);
    for (i, (label, message)) in answers.into_iter().enumerate() {
        line = line.push(
            button(text(label).size(12))
                .style(if i == 0 { button::danger } else { button::secondary })
                .on_press(message),
        );
    }
    container(line).padding(6).style(theme::banner).width(Fill).into()
}
