//! Unified diffs of one file, computed from the old and new text that ACP's `diff` tool-call
//! content carries (ided sends whole texts, the client renders the hunks), their side-by-side
//! rows, and the file's text with only some of its hunks applied (per-hunk review).

use std::path::PathBuf;

use similar::{ChangeTag, TextDiff};

/// Lines of unchanged context shown around each change.
pub const CONTEXT_LINES: usize = 3;

/// What one rendered diff line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// `@@ -a,b +c,d @@` hunk header.
    Hunk,
    /// Unchanged context.
    Context,
    /// Added in the new text.
    Added,
    /// Removed from the old text.
    Removed,
}

/// One line of a unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    pub kind: LineKind,
    /// Line number in the old text (1-based), for context and removed lines.
    pub old_line: Option<usize>,
    /// Line number in the new text (1-based), for context and added lines.
    pub new_line: Option<usize>,
    /// The text without its trailing newline.
    pub text: String,
}

/// Whether the file is new, changed or gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileStatus {
    Added,
    Modified,
    Deleted,
}

/// The unified diff of one file with its +/− counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub path: PathBuf,
    pub status: FileStatus,
    pub lines: Vec<DiffLine>,
    pub added: usize,
    pub removed: usize,
    /// The text after the change (what the editor shows after accept).
    pub new_text: String,
    /// The text before the change (`None`: a new file).
    pub old_text: Option<String>,
    /// Each hunk's index range in `lines` (its `@@` header first).
    pub hunks: Vec<std::ops::Range<usize>>,
}

/// One row of the side-by-side view: the old line on the left, the new one on the right
/// (either may be absent), or a hunk header across both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SideRow {
    Hunk { hunk: usize, text: String },
    Lines { old: Option<usize>, new: Option<usize> },
}

impl FileDiff {
    /// Computes the diff; `old_text` is `None` for a new file, and an empty `new_text` with an
    /// old text marks a deletion (ACP has no separate delete marker).
    pub fn compute(path: PathBuf, old_text: Option<&str>, new_text: &str) -> Self {
        let status = match old_text {
            None => FileStatus::Added,
            Some(old) if new_text.is_empty() && !old.is_empty() => FileStatus::Deleted,
            Some(_) => FileStatus::Modified,
        };
        let old = old_text.unwrap_or("");
        let diff = TextDiff::from_lines(old, new_text);
        let mut lines = Vec::new();
        let mut hunks = Vec::new();
        let (mut added, mut removed) = (0, 0);
        for group in diff.grouped_ops(CONTEXT_LINES) {
            let hunk_start_index = lines.len();
            let (Some(first), Some(last)) = (group.first(), group.last()) else {
                continue;
            };
            let old_range = first.old_range().start..last.old_range().end;
            let new_range = first.new_range().start..last.new_range().end;
            lines.push(DiffLine {
                kind: LineKind::Hunk,
                old_line: None,
                new_line: None,
                text: format!(
                    "@@ -{},{} +{},{} @@",
                    hunk_start(old_range.start, old_range.len()),
                    old_range.len(),
                    hunk_start(new_range.start, new_range.len()),
                    new_range.len()
                ),
            });
            for op in &group {
                for change in diff.iter_changes(op) {
                    let kind = match change.tag() {
                        ChangeTag::Equal => LineKind::Context,
                        ChangeTag::Insert => {
                            added += 1;
                            LineKind::Added
                        }
                        ChangeTag::Delete => {
                            removed += 1;
                            LineKind::Removed
                        }
                    };
                    let text = change.value().trim_end_matches(['\n', '\r']).to_owned();
                    lines.push(DiffLine {
                        kind,
                        old_line: change.old_index().map(|i| i + 1),
                        new_line: change.new_index().map(|i| i + 1),
                        text,
                    });
                }
            }
            hunks.push(hunk_start_index..lines.len());
        }
        Self {
            path,
            status,
            lines,
            added,
            removed,
            new_text: new_text.to_owned(),
            old_text: old_text.map(str::to_owned),
            hunks,
        }
    }

    /// The file's text with only the hunks whose `keep` is true applied to the old text
    /// (`keep` shorter than the hunks: the rest are not applied).
    pub fn text_with_hunks(&self, keep: &[bool]) -> String {
        let old = self.old_text.as_deref().unwrap_or("");
        let diff = TextDiff::from_lines(old, self.new_text.as_str());
        let (old_lines, new_lines) = (diff.old_slices(), diff.new_slices());
        let mut out = String::new();
        let mut cursor = 0;
        for (hunk, group) in diff.grouped_ops(CONTEXT_LINES).iter().enumerate() {
            let kept = keep.get(hunk).copied().unwrap_or(false);
            for op in group {
                if op.tag() == similar::DiffTag::Equal {
                    continue;
                }
                let (o, n) = (op.old_range(), op.new_range());
                out.extend(old_lines[cursor..o.start].iter().copied());
                if kept {
                    out.extend(new_lines[n].iter().copied());
                } else {
                    out.extend(old_lines[o.clone()].iter().copied());
                }
                cursor = o.end;
            }
        }
        out.extend(old_lines[cursor..].iter().copied());
        out
    }

    /// The rows of the side-by-side view: context on both sides, each run of removed lines
    /// paired with the added lines after it (indices into `lines`).
    pub fn side_rows(&self) -> Vec<SideRow> {
        let mut rows = Vec::with_capacity(self.lines.len());
        for (hunk, range) in self.hunks.iter().enumerate() {
            let mut i = range.start;
            while i < range.end {
                let line = &self.lines[i];
                match line.kind {
                    LineKind::Hunk => {
                        rows.push(SideRow::Hunk {
                            hunk,
                            text: line.text.clone(),
                        });
                        i += 1;
                    }
                    LineKind::Context => {
                        rows.push(SideRow::Lines {
                            old: Some(i),
                            new: Some(i),
                        });
                        i += 1;
                    }
                    LineKind::Added => {
                        rows.push(SideRow::Lines {
                            old: None,
                            new: Some(i),
                        });
                        i += 1;
                    }
                    LineKind::Removed => {
                        let removed_end = (i..range.end)
                            .find(|&j| self.lines[j].kind != LineKind::Removed)
                            .unwrap_or(range.end);
                        let added_end = (removed_end..range.end)
                            .find(|&j| self.lines[j].kind != LineKind::Added)
                            .unwrap_or(range.end);
                        let (removed, added) = (removed_end - i, added_end - removed_end);
                        for k in 0..removed.max(added) {
                            rows.push(SideRow::Lines {
                                old: (k < removed).then_some(i + k),
                                new: (k < added).then_some(removed_end + k),
                            });
                        }
                        i = added_end;
                    }
                }
            }
        }
        rows
    }

    /// The longest line, in characters (the width the diff view scrolls to).
    pub fn widest_line(&self) -> usize {
        self.lines.iter().map(|l| l.text.chars().count()).max().unwrap_or(0)
    }

    /// The longest line of each side of the side-by-side view (old: context and removed lines;
    /// new: context and added lines), in characters.
    pub fn widest_sides(&self) -> (usize, usize) {
        let widest = |kind: LineKind| {
            self.lines
                .iter()
                .filter(|l| l.kind == LineKind::Context || l.kind == kind)
                .map(|l| l.text.chars().count())
                .max()
                .unwrap_or(0)
        };
        (widest(LineKind::Removed), widest(LineKind::Added))
    }

    /// The diff as unified-diff text (`---`/`+++` headers, hunks), e.g. for copying.
    pub fn to_unified(&self) -> String {
        let name = self.path.display();
        let mut out = format!("--- a/{name}\n+++ b/{name}\n");
        for line in &self.lines {
            let prefix = match line.kind {
                LineKind::Hunk => "",
                LineKind::Context => " ",
                LineKind::Added => "+",
                LineKind::Removed => "-",
            };
            out.push_str(prefix);
            out.push_str(&line.text);
            out.push('\n');
        }
        out
    }
}

fn hunk_start(start: usize, len: usize) -> usize {
    if len == 0 { start } else { start + 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modified_file_counts_added_and_removed_lines_with_line_numbers() {
        let diff = FileDiff::compute("a.py".into(), Some("a\nb\nc\n"), "a\nB\nc\nd\n");
        assert_eq!(diff.status, FileStatus::Modified);
        assert_eq!((diff.added, diff.removed), (2, 1));
        assert_eq!(diff.lines[0].text, "@@ -1,3 +1,4 @@");
        let removed = diff.lines.iter().find(|l| l.kind == LineKind::Removed).unwrap();
        assert_eq!((removed.old_line, removed.text.as_str()), (Some(2), "b"));
        assert!(diff.to_unified().contains("\n+d\n"));
    }

    #[test]
    fn new_file_is_all_additions_and_emptied_file_is_a_deletion() {
        let added = FileDiff::compute("n.txt".into(), None, "x\ny\n");
        assert_eq!((added.status, added.added, added.removed), (FileStatus::Added, 2, 0));
        let deleted = FileDiff::compute("d.txt".into(), Some("x\n"), "");
        assert_eq!((deleted.status, deleted.removed), (FileStatus::Deleted, 1));
    }

    #[test]
    fn applying_some_hunks_keeps_the_old_text_of_the_others() {
        let old: String = (0..40).map(|i| format!("{i}\n")).collect();
        let new: String = (0..40)
            .map(|i| match i {
                5 => "five\n".to_owned(),
                35 => "thirty-five\n".to_owned(),
                _ => format!("{i}\n"),
            })
            .collect();
        let diff = FileDiff::compute("f".into(), Some(&old), &new);
        assert_eq!(diff.hunks.len(), 2);
        assert_eq!(diff.text_with_hunks(&[true, true]), new);
        assert_eq!(diff.text_with_hunks(&[false, false]), old);
        let first_only = diff.text_with_hunks(&[true, false]);
        assert!(
            first_only.contains("five\n") && first_only.contains("\n35\n"),
            "{first_only}"
        );
        let added = FileDiff::compute("n".into(), None, "a\nb\n");
        assert_eq!(added.text_with_hunks(&[false]), "");
    }

    #[test]
    fn side_by_side_pairs_removed_lines_with_the_added_ones() {
        let diff = FileDiff::compute("f".into(), Some("a\nb\nc\n"), "a\nB\nB2\nc\n");
        let rows = diff.side_rows();
        let pairs: Vec<(Option<&str>, Option<&str>)> = rows
            .iter()
            .filter_map(|r| match r {
                SideRow::Lines { old, new } => Some((
                    old.map(|i| diff.lines[i].text.as_str()),
                    new.map(|i| diff.lines[i].text.as_str()),
                )),
                SideRow::Hunk { .. } => None,
            })
            .collect();
        assert_eq!(
            pairs,
            [
                (Some("a"), Some("a")),
                (Some("b"), Some("B")),
                (None, Some("B2")),
                (Some("c"), Some("c"))
            ]
        );
    }

    #[test]
    fn distant_changes_become_separate_hunks() {
        let old: String = (0..40).map(|i| format!("{i}\n")).collect();
        let new: String = (0..40)
            .map(|i| match i {
                5 => "five\n".to_owned(),
                35 => "thirty-five\n".to_owned(),
                _ => format!("{i}\n"),
            })
            .collect();
        let diff = FileDiff::compute("f".into(), Some(&old), &new);
        let hunks = diff.lines.iter().filter(|l| l.kind == LineKind::Hunk).count();
        assert_eq!(hunks, 2);
    }
}
