//! The review pane: the run's batched diff as a file list with +/− counts and the selected
//! file's unified diff, rendered virtually (only the visible lines are laid out, so a
//! 10,000-line diff scrolls like a short one).

use std::path::Path;

use iced::widget::{button, column, container, row, scrollable, space, text};
use iced::{Element, Fill, Font, Length};

use super::theme;
use crate::session::{FileStatus, LineKind, Review};

/// Height of one diff line in logical pixels.
pub const ROW_HEIGHT: f32 = 18.0;
/// Lines laid out beyond the viewport on each side.
pub const OVERSCAN: usize = 20;
/// Id of the diff scrollable.
pub const DIFF_ID: &str = "diff";

/// Which file is shown and where the diff is scrolled.
#[derive(Debug, Clone, Default)]
pub struct ReviewPane {
    pub selected: usize,
    pub offset: f32,
    pub viewport: f32,
}

/// Review pane messages.
#[derive(Debug, Clone)]
pub enum Message {
    SelectFile(usize),
    Scrolled { offset: f32, height: f32 },
}

impl ReviewPane {
    pub fn update(&mut self, message: Message) {
        match message {
            Message::SelectFile(index) => {
                self.selected = index;
                self.offset = 0.0;
            }
            Message::Scrolled { offset, height } => {
                self.offset = offset;
                self.viewport = height;
            }
        }
    }

    /// The range of lines to lay out for `total` lines.
    pub fn visible_range(&self, total: usize) -> std::ops::Range<usize> {
        let viewport = if self.viewport > 0.0 { self.viewport } else { 1200.0 };
        let count = (viewport / ROW_HEIGHT).ceil() as usize;
        // An offset past the end (another file was longer) shows the end, not nothing.
        let first = ((self.offset / ROW_HEIGHT).floor().max(0.0) as usize).min(total.saturating_sub(count));
        let start = first.saturating_sub(OVERSCAN).min(total);
        let end = (first + count + OVERSCAN).min(total);
        start..end
    }

    pub fn view<'a>(&'a self, review: &'a Review, workspace: &Path) -> Element<'a, Message> {
        let mut files = column![
            text(format!(
                "{} files  +{} −{}",
                review.files.len(),
                review.added(),
                review.removed()
            ))
            .size(13),
        ]
        .spacing(2);
        for (index, file) in review.files.iter().enumerate() {
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
            files = files.push(
                button(
                    row![
                        text(mark).font(Font::MONOSPACE).size(12),
                        text(
                            file.path
                                .strip_prefix(workspace)
                                .unwrap_or(&file.path)
                                .display()
                                .to_string()
                        )
                        .size(12)
                        .width(Fill),
                        text(format!("+{}", file.added)).size(12).color(theme::OK),
                        text(format!("−{}", file.removed)).size(12).color(theme::ERROR),
                    ]
                    .spacing(6),
                )
                .style(style)
                .width(Fill)
                .on_press(Message::SelectFile(index)),
            );
        }
        if let Some(answer) = &review.answer {
            files = files.push(text(format!("answered: {answer}")).size(12).color(theme::MUTED));
        }
        let diff: Element<'a, Message> = match review.files.get(self.selected) {
            Some(file) => {
                let total = file.lines.len();
                let range = self.visible_range(total);
                let mut lines = column![space::vertical().height(Length::Fixed(range.start as f32 * ROW_HEIGHT))];
                for line in &file.lines[range.clone()] {
                    let prefix = match line.kind {
                        LineKind::Hunk => "",
                        LineKind::Context => " ",
                        LineKind::Added => "+",
                        LineKind::Removed => "-",
                    };
                    let number = line
                        .new_line
                        .or(line.old_line)
                        .map_or_else(String::new, |n| n.to_string());
                    lines = lines.push(
                        container(
                            row![
                                text(number)
                                    .size(12)
                                    .font(Font::MONOSPACE)
                                    .color(theme::MUTED)
                                    .width(Length::Fixed(48.0)),
                                text(format!("{prefix}{}", line.text)).size(12).font(Font::MONOSPACE),
                            ]
                            .spacing(6),
                        )
                        .style(theme::diff_line(line.kind))
                        .height(Length::Fixed(ROW_HEIGHT))
                        .width(Fill),
                    );
                }
                lines = lines.push(space::vertical().height(Length::Fixed((total - range.end) as f32 * ROW_HEIGHT)));
                scrollable(lines.width(Fill))
                    .id(DIFF_ID)
                    .on_scroll(|viewport| Message::Scrolled {
                        offset: viewport.absolute_offset().y,
                        height: viewport.bounds().height,
                    })
                    .height(Fill)
                    .into()
            }
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_lines_near_the_viewport_are_laid_out() {
        let pane = ReviewPane {
            selected: 0,
            offset: 5_000.0 * ROW_HEIGHT,
            viewport: 40.0 * ROW_HEIGHT,
        };
        let range = pane.visible_range(10_000);
        assert_eq!(range, 4_980..5_060);
        assert_eq!(pane.visible_range(30), 0..30);
    }
}
