//! The review pane: the run's batched diff as a file list with +/− counts and the selected
//! file's diff, unified or side by side, rendered virtually (only the visible rows are laid
//! out, so a 10,000-line diff scrolls like a short one). Rows never wrap: each is one line
//! high, and the pane scrolls sideways to the longest line (side by side: each side on its own,
//! both up and down together).
//!
//! The person keeps or rejects each file and each hunk (every hunk starts kept); the
//! permission card then accepts all, rejects all, or applies the kept hunks
//! ([`ReviewPane::selection`]).

use std::path::Path;

use iced::widget::text::Wrapping;
use iced::widget::{button, column, container, row, scrollable, space, text};
use iced::{Element, Fill, Font, Length, Task};

use super::theme;
use crate::session::state::{ACCEPTED, REJECTED, ROLLED_BACK, ROLLING_BACK};
use crate::session::{DiffLine, FileDiff, FileStatus, LineKind, Review, SideRow};

/// Height of one diff row in logical pixels.
pub const ROW_HEIGHT: f32 = 18.0;
/// Lines laid out beyond the viewport on each side.
pub const OVERSCAN: usize = 20;
/// Id of the diff scrollable (unified).
pub const DIFF_ID: &str = "diff";
/// Ids of the two sides' scrollables (side by side).
pub const DIFF_OLD_ID: &str = "diff-old";
pub const DIFF_NEW_ID: &str = "diff-new";
/// Width of one character of the 12 px monospace font (the sideways scroll extent).
const CHAR_WIDTH: f32 = 7.3;
/// Width of a line-number gutter.
const GUTTER: f32 = 44.0;

/// How the selected file's diff is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    #[default]
    Unified,
    SideBySide,
}

/// Which file is shown, how, where it is scrolled, and which hunks are rejected.
#[derive(Debug, Clone, Default)]
pub struct ReviewPane {
    pub selected: usize,
    pub offset: f32,
    pub viewport: f32,
    pub layout: Layout,
    /// `(file, hunk)` pairs the person rejected (everything else is kept).
    pub rejected: std::collections::BTreeSet<(usize, usize)>,
}

/// Review pane messages.
#[derive(Debug, Clone)]
pub enum Message {
    SelectFile(usize),
    Scrolled {
        offset: f32,
        height: f32,
    },
    /// One side of the side-by-side view scrolled (`old`: the left one); the other follows up
    /// and down, not sideways.
    SideScrolled {
        old: bool,
        offset: f32,
        height: f32,
    },
    ShowLayout(Layout),
    /// Keep (true) or reject (false) hunk `.1` of file `.0`.
    KeepHunk(usize, usize, bool),
    /// Keep (true) or reject (false) every hunk of a file.
    KeepFile(usize, bool),
    /// Keep (true) or reject (false) every hunk of every file.
    KeepAll(bool),
}

/// What the person kept of a review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    pub kept: usize,
    pub total: usize,
    /// Per file, per hunk: kept.
    pub files: Vec<Vec<bool>>,
}

impl Selection {
    /// Every hunk kept (a plain accept).
    pub fn all(&self) -> bool {
        self.kept == self.total
    }
    /// No hunk kept (a plain reject).
    pub fn none(&self) -> bool {
        self.kept == 0
    }
}

impl ReviewPane {
    pub fn update(&mut self, message: Message, review: Option<&Review>) -> Task<Message> {
        match message {
            Message::SelectFile(index) => {
                self.selected = index;
                self.offset = 0.0;
            }
            Message::Scrolled { offset, height } => {
                self.offset = offset;
                self.viewport = height;
            }
            Message::SideScrolled { old, offset, height } => {
                self.viewport = height;
                if (offset - self.offset).abs() > 0.5 {
                    self.offset = offset;
                    let other = if old { DIFF_NEW_ID } else { DIFF_OLD_ID };
                    return iced::widget::operation::scroll_to(
                        other,
                        iced::widget::operation::AbsoluteOffset {
                            x: None,
                            y: Some(offset),
                        },
                    );
                }
            }
            Message::ShowLayout(layout) => {
                self.layout = layout;
                self.offset = 0.0;
            }
            Message::KeepHunk(file, hunk, keep) => self.keep(file, hunk, keep),
            Message::KeepFile(file, keep) => {
                let hunks = review.and_then(|r| r.files.get(file)).map_or(0, |f| f.hunks.len());
                for hunk in 0..hunks {
                    self.keep(file, hunk, keep);
                }
            }
            Message::KeepAll(keep) => {
                if let Some(review) = review {
                    for (file, diff) in review.files.iter().enumerate() {
                        for hunk in 0..diff.hunks.len() {
                            self.keep(file, hunk, keep);
                        }
                    }
                }
            }
        }
        Task::none()
    }

    fn keep(&mut self, file: usize, hunk: usize, keep: bool) {
        if keep {
            self.rejected.remove(&(file, hunk));
        } else {
            self.rejected.insert((file, hunk));
        }
    }

    /// What is kept of `review`.
    pub fn selection(&self, review: &Review) -> Selection {
        let files: Vec<Vec<bool>> = review
            .files
            .iter()
            .enumerate()
            .map(|(f, diff)| {
                (0..diff.hunks.len())
                    .map(|h| !self.rejected.contains(&(f, h)))
                    .collect()
            })
            .collect();
        let total = files.iter().map(Vec::len).sum();
        let kept = files.iter().flatten().filter(|k| **k).count();
        Selection { kept, total, files }
    }

    /// The range of rows to lay out for `total` rows.
    pub fn visible_range(&self, total: usize) -> std::ops::Range<usize> {
        let viewport = if self.viewport > 0.0 { self.viewport } else { 1200.0 };
        let count = (viewport / ROW_HEIGHT).ceil() as usize;
        // An offset past the end (another file was longer) shows the end, not nothing.
        let first = ((self.offset / ROW_HEIGHT).floor().max(0.0) as usize).min(total.saturating_sub(count));
        let start = first.saturating_sub(OVERSCAN).min(total);
        let end = (first + count + OVERSCAN).min(total);
        start..end
    }

    /// The pane for `review`; `state` is ided's review state of its call (`rolled_back`, or the
    /// client's `rolling_back` while a rollback runs). An answered review is a record: it says
    /// how it was answered (and rolled back) first, and offers no Keep / Reject (they changed
    /// nothing any more, and the pane looked like a review still waiting).
    pub fn view<'a>(&'a self, review: &'a Review, workspace: &Path, state: Option<&str>) -> Element<'a, Message> {
        let mut selection = self.selection(review);
        // Decided: answered here, or (a loaded session) ided says how it ended.
        let answered = review.answer.is_some() || matches!(state, Some(ACCEPTED | REJECTED | ROLLED_BACK));
        // Rejected as a whole (the Reject button, or ided's state): no hunk was kept, whatever
        // the Keep / Reject marks said before the answer.
        if review.answer.as_deref() == Some("reject") || (review.answer.is_none() && state == Some(REJECTED)) {
            for kept in selection.files.iter_mut().flatten() {
                *kept = false;
            }
            selection.kept = 0;
        }
        let mut files = column![
            text(format!(
                "{}  +{} −{}",
                files_label(review.files.len()),
                review.added(),
                review.removed()
            ))
            .size(13),
        ]
        .spacing(4);
        let answer = review.answer.as_deref().or(match state {
            Some(ACCEPTED | ROLLED_BACK) => Some("accept"),
            Some(REJECTED) => Some("reject"),
            _ => None,
        });
        files = match answer {
            Some(answer) if answered => files.push(
                text(outcome(answer, review.run_id.as_deref(), state))
                    .size(12)
                    .color(theme::WARN),
            ),
            _ => files
                .push(
                    text(format!("keeping {} of {} hunks", selection.kept, selection.total))
                        .size(12)
                        .color(theme::MUTED),
                )
                .push(
                    row![
                        small_button("Keep all", Message::KeepAll(true), selection.all()),
                        small_button("Reject all", Message::KeepAll(false), selection.none()),
                    ]
                    .spacing(4)
                    .wrap()
                    .vertical_spacing(2),
                ),
        };
        for (index, file) in review.files.iter().enumerate() {
            files = files.push(self.file_row(index, file, &selection.files[index], workspace, answered));
        }
        let diff: Element<'a, Message> = match review.files.get(self.selected) {
            Some(file) => column![
                row![
                    small_button(
                        "Unified",
                        Message::ShowLayout(Layout::Unified),
                        self.layout == Layout::Unified
                    ),
                    small_button(
                        "Side by side",
                        Message::ShowLayout(Layout::SideBySide),
                        self.layout == Layout::SideBySide
                    ),
                ]
                .spacing(4),
                {
                    let kept = selection.files[self.selected].clone();
                    let pane = self.clone();
                    // The rows fill the pane at least (their backgrounds span it), and the
                    // longest line at most (the pane scrolls sideways to it).
                    iced::widget::responsive(move |size| pane.diff_view(file, &kept, answered, size.width - 12.0))
                },
            ]
            .spacing(4)
            .into(),
            None => text("No changes.").color(theme::MUTED).into(),
        };
        row![
            container(scrollable(files)).width(Length::FillPortion(1)).padding(4),
            container(diff).width(Length::FillPortion(3)),
        ]
        .spacing(6)
        .height(Fill)
        .into()
    }

    fn file_row<'a>(
        &self,
        index: usize,
        file: &'a FileDiff,
        kept: &[bool],
        workspace: &Path,
        answered: bool,
    ) -> Element<'a, Message> {
        let mark = match file.status {
            FileStatus::Added => "A",
            FileStatus::Modified => "M",
            FileStatus::Deleted => "D",
        };
        let style = if index == self.selected {
            theme::selected
        } else {
            theme::link
        };
        let kept_count = kept.iter().filter(|k| **k).count();
        let state = if kept_count == kept.len() {
            "kept".to_owned()
        } else if kept_count == 0 {
            "rejected".to_owned()
        } else {
            format!("{kept_count}/{} hunks", kept.len())
        };
        column![
            button(
                row![
                    text(mark).font(Font::MONOSPACE).size(12),
                    // One line, cut where the counts start (a narrow list drew it over them).
                    container(
                        text(
                            file.path
                                .strip_prefix(workspace)
                                .unwrap_or(&file.path)
                                .display()
                                .to_string()
                        )
                        .size(12)
                        .wrapping(Wrapping::None)
                    )
                    .width(Fill)
                    .clip(true),
                    text(format!("+{}", file.added)).size(12).color(theme::OK),
                    text(format!("−{}", file.removed)).size(12).color(theme::ERROR),
                ]
                .spacing(6),
            )
            .style(style)
            .width(Fill)
            .on_press(Message::SelectFile(index)),
            // The buttons first (they must stay reachable in a narrow list), the state after.
            // The line wraps where the list is narrower than its controls: a plain row gave
            // the state only the width left over (none, in a quarter of a 1024 px window's
            // review pane), so it was squeezed to a sliver or drawn past the list's edge.
            if answered {
                row![text(state).size(11).color(theme::MUTED)]
            } else {
                row![
                    small_button("Keep file", Message::KeepFile(index, true), kept_count == kept.len()),
                    small_button("Reject file", Message::KeepFile(index, false), kept_count == 0),
                    text(state).size(11).color(theme::MUTED),
                ]
            }
            .spacing(4)
            .align_y(iced::Center)
            .wrap()
            .vertical_spacing(1),
        ]
        .spacing(1)
        .into()
    }

    fn diff_view<'a>(
        &self,
        file: &'a FileDiff,
        kept: &[bool],
        answered: bool,
        pane_width: f32,
    ) -> Element<'a, Message> {
        let file_index = self.selected;
        let hunk_of = |line: usize| file.hunks.iter().position(|h| h.contains(&line)).unwrap_or(0);
        let hunk_header = |hunk: usize, header: &str, width: f32| -> Element<'a, Message> {
            let keep = kept.get(hunk).copied().unwrap_or(true);
            let mut header = row![
                text(header.to_owned())
                    .size(12)
                    .font(Font::MONOSPACE)
                    .wrapping(Wrapping::None)
                    .color(theme::HUNK_FG),
                text(if keep { "kept" } else { "rejected" }).size(11).color(if keep {
                    theme::OK
                } else {
                    theme::ERROR
                }),
            ]
            .spacing(8)
            .align_y(iced::Center);
            if !answered {
                header = header
                    .push(tiny_button(
                        "Keep hunk",
                        Message::KeepHunk(file_index, hunk, true),
                        keep,
                    ))
                    .push(tiny_button(
                        "Reject hunk",
                        Message::KeepHunk(file_index, hunk, false),
                        !keep,
                    ));
            }
            container(header)
                .height(Length::Fixed(ROW_HEIGHT))
                .width(Length::Fixed(width))
                .clip(true)
                .into()
        };
        let (rows, total, width): (Vec<Element<'a, Message>>, usize, f32) = match self.layout {
            Layout::Unified => {
                let width = (GUTTER + 8.0 + (file.widest_line() + 2) as f32 * CHAR_WIDTH).max(pane_width);
                let total = file.lines.len();
                let range = self.visible_range(total);
                let rows = file.lines[range.clone()]
                    .iter()
                    .enumerate()
                    .map(|(offset, line)| {
                        let index = range.start + offset;
                        if line.kind == LineKind::Hunk {
                            return hunk_header(hunk_of(index), &line.text, width);
                        }
                        let dimmed = !kept.get(hunk_of(index)).copied().unwrap_or(true);
                        unified_row(line, width, dimmed)
                    })
                    .collect();
                (rows, total, width)
            }
            Layout::SideBySide => return self.side_by_side(file, kept, pane_width, hunk_header),
        };
        let range = self.visible_range(total);
        let mut lines = column![space::vertical().height(Length::Fixed(range.start as f32 * ROW_HEIGHT))];
        for row in rows {
            lines = lines.push(row);
        }
        lines = lines.push(space::vertical().height(Length::Fixed((total - range.end) as f32 * ROW_HEIGHT)));
        scrollable(lines.width(Length::Fixed(width)))
            .id(DIFF_ID)
            .direction(scrollable::Direction::Both {
                vertical: scrollable::Scrollbar::default(),
                horizontal: scrollable::Scrollbar::default(),
            })
            .on_scroll(|viewport| Message::Scrolled {
                offset: viewport.absolute_offset().y,
                height: viewport.bounds().height,
            })
            .width(Fill)
            .height(Fill)
            .into()
    }
}

impl ReviewPane {
    /// The side-by-side view: the old text on the left, the new on the right, each side in a
    /// pane of its own that scrolls sideways to its longest line (a long line was cut at the
    /// pane's edge); scrolling up or down one side scrolls the other along. `hunk_header` draws
    /// a hunk's header row (with its Keep / Reject) on the left.
    fn side_by_side<'a>(
        &self,
        file: &'a FileDiff,
        kept: &[bool],
        pane_width: f32,
        hunk_header: impl Fn(usize, &str, f32) -> Element<'a, Message>,
    ) -> Element<'a, Message> {
        let hunk_of = |line: usize| file.hunks.iter().position(|h| h.contains(&line)).unwrap_or(0);
        let half = ((pane_width - 6.0) / 2.0).max(160.0);
        let (old_chars, new_chars) = file.widest_sides();
        let side_width = |chars: usize| (GUTTER + 8.0 + (chars + 1) as f32 * CHAR_WIDTH).max(half);
        let (old_width, new_width) = (side_width(old_chars), side_width(new_chars));
        let side = file.side_rows();
        let total = side.len();
        let range = self.visible_range(total);
        let spacer = |rows: usize| space::vertical().height(Length::Fixed(rows as f32 * ROW_HEIGHT));
        let (mut left, mut right) = (column![spacer(range.start)], column![spacer(range.start)]);
        for row in &side[range.clone()] {
            match row {
                SideRow::Hunk { hunk, text: header } => {
                    left = left.push(hunk_header(*hunk, header, old_width));
                    right = right.push(
                        container(
                            text(header.clone())
                                .size(12)
                                .font(Font::MONOSPACE)
                                .wrapping(Wrapping::None)
                                .color(theme::HUNK_FG),
                        )
                        .height(Length::Fixed(ROW_HEIGHT))
                        .width(Length::Fixed(new_width))
                        .clip(true),
                    );
                }
                SideRow::Lines { old, new } => {
                    let hunk = hunk_of(old.or(*new).unwrap_or(0));
                    let dimmed = !kept.get(hunk).copied().unwrap_or(true);
                    left = left.push(half_row(old.map(|i| &file.lines[i]), true, old_width, dimmed));
                    right = right.push(half_row(new.map(|i| &file.lines[i]), false, new_width, dimmed));
                }
            }
        }
        left = left.push(spacer(total - range.end));
        right = right.push(spacer(total - range.end));
        let pane = |lines: iced::widget::Column<'a, Message>, id: &'static str, width: f32, old: bool| {
            scrollable(lines.width(Length::Fixed(width)))
                .id(id)
                .direction(scrollable::Direction::Both {
                    // One vertical scrollbar (the right side's) for both.
                    vertical: if old {
                        scrollable::Scrollbar::hidden()
                    } else {
                        scrollable::Scrollbar::default()
                    },
                    horizontal: scrollable::Scrollbar::default(),
                })
                .on_scroll(move |viewport| Message::SideScrolled {
                    old,
                    offset: viewport.absolute_offset().y,
                    height: viewport.bounds().height,
                })
                .width(Length::Fixed(half))
                .height(Fill)
        };
        row![
            pane(left, DIFF_OLD_ID, old_width, true),
            pane(right, DIFF_NEW_ID, new_width, false)
        ]
        .spacing(6)
        .into()
    }
}

/// "1 file", "3 files".
pub fn files_label(count: usize) -> String {
    format!("{count} {}", if count == 1 { "file" } else { "files" })
}

/// How an answered review ended, and whether its run was rolled back since: "Accepted",
/// "Kept 2 of 4 hunks; run R rolled back", ...
fn outcome(answer: &str, run_id: Option<&str>, state: Option<&str>) -> String {
    let answered = match answer {
        "accept" => "Accepted".to_owned(),
        "reject" => "Rejected".to_owned(),
        "feedback" => "Sent back with feedback".to_owned(),
        "cancelled" => "Not answered: the turn ended".to_owned(),
        other => {
            let mut chars = other.chars();
            chars
                .next()
                .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
        }
    };
    let run = run_id.map_or_else(|| "the run".to_owned(), |id| format!("run {id}"));
    match state {
        Some(ROLLED_BACK) => format!("{answered}; {run} rolled back"),
        Some(ROLLING_BACK) => format!("{answered}; rolling back {run}…"),
        _ => answered,
    }
}

fn prefix(kind: LineKind) -> &'static str {
    match kind {
        LineKind::Hunk => "",
        LineKind::Context => " ",
        LineKind::Added => "+",
        LineKind::Removed => "-",
    }
}

/// One unified row: one line high whatever its length (no wrapping: the pane scrolls sideways).
fn unified_row<'a>(line: &'a DiffLine, width: f32, dimmed: bool) -> Element<'a, Message> {
    let number = line
        .new_line
        .or(line.old_line)
        .map_or_else(String::new, |n| n.to_string());
    let body = text(format!("{}{}", prefix(line.kind), line.text))
        .size(12)
        .font(Font::MONOSPACE)
        .wrapping(Wrapping::None);
    container(
        row![
            text(number)
                .size(12)
                .font(Font::MONOSPACE)
                .color(theme::MUTED)
                .wrapping(Wrapping::None)
                .width(Length::Fixed(GUTTER)),
            if dimmed { body.color(theme::MUTED) } else { body },
        ]
        .spacing(6),
    )
    .style(theme::diff_line(if dimmed { LineKind::Context } else { line.kind }))
    .height(Length::Fixed(ROW_HEIGHT))
    .width(Length::Fixed(width))
    .clip(true)
    .into()
}

/// One side of a side-by-side row (`old`: the left side, which shows removed lines).
fn half_row<'a>(line: Option<&'a DiffLine>, old: bool, width: f32, dimmed: bool) -> Element<'a, Message> {
    let Some(line) = line else {
        return container(space::horizontal())
            .height(Length::Fixed(ROW_HEIGHT))
            .width(Length::Fixed(width))
            .into();
    };
    let number = if old { line.old_line } else { line.new_line }.map_or_else(String::new, |n| n.to_string());
    let body = text(line.text.clone())
        .size(12)
        .font(Font::MONOSPACE)
        .wrapping(Wrapping::None);
    container(
        row![
            text(number)
                .size(12)
                .font(Font::MONOSPACE)
                .color(theme::MUTED)
                .wrapping(Wrapping::None)
                .width(Length::Fixed(GUTTER)),
            if dimmed { body.color(theme::MUTED) } else { body },
        ]
        .spacing(6),
    )
    .style(theme::diff_line(if dimmed { LineKind::Context } else { line.kind }))
    .height(Length::Fixed(ROW_HEIGHT))
    .width(Length::Fixed(width))
    .clip(true)
    .into()
}

fn small_button(label: &str, message: Message, active: bool) -> Element<'static, Message> {
    button(text(label.to_owned()).size(11))
        .style(if active { theme::selected } else { theme::link })
        .padding([1, 6])
        .on_press(message)
        .into()
}

fn tiny_button(label: &str, message: Message, active: bool) -> Element<'static, Message> {
    button(text(label.to_owned()).size(10))
        .style(if active { theme::selected } else { theme::link })
        .padding([0, 4])
        .on_press(message)
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_lines_near_the_viewport_are_laid_out() {
        let pane = ReviewPane {
            offset: 5_000.0 * ROW_HEIGHT,
            viewport: 40.0 * ROW_HEIGHT,
            ..ReviewPane::default()
        };
        let range = pane.visible_range(10_000);
        assert_eq!(range, 4_980..5_060);
        assert_eq!(pane.visible_range(30), 0..30);
    }
}
