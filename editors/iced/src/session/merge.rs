//! A three-way line merge: the person's unsaved edits (`mine`) and what changed on disk
//! meanwhile (`theirs`, an accepted run), both from the text the edits started from (`base`).
//! Changes to different lines are both kept; the same change made on both sides is kept once;
//! changes that touch the same or adjacent lines differently become a conflict block, as git
//! writes them.

use similar::{DiffOp, TextDiff};

/// The merged text and how many conflict blocks it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    pub text: String,
    pub conflicts: usize,
}

/// The first line of a conflict block (the person's side follows).
pub const MINE_MARK: &str = "<<<<<<< your edits";
/// Between the two sides of a conflict block.
pub const SPLIT_MARK: &str = "=======";
/// The last line of a conflict block (after the text on disk).
pub const THEIRS_MARK: &str = ">>>>>>> on disk";

/// One side's change: base lines `start..end` become `lines`.
#[derive(Debug, Clone)]
struct Change<'a> {
    start: usize,
    end: usize,
    lines: Vec<&'a str>,
}

/// Merges `mine` and `theirs`, both edited from `base` (see the module docs).
pub fn merge3(base: &str, mine: &str, theirs: &str) -> Merged {
    let base_lines = lines(base);
    let mine_changes = changes(base, mine);
    let theirs_changes = changes(base, theirs);
    let (mut i, mut j) = (0, 0);
    let mut at = 0; // next base line to copy
    let mut out: Vec<&str> = Vec::new();
    let mut conflicts = 0;
    while i < mine_changes.len() || j < theirs_changes.len() {
        // The next group: the earliest change, and every change of either side that touches it
        // (transitively).
        let first = match (mine_changes.get(i), theirs_changes.get(j)) {
            (Some(m), Some(t)) => m.start.min(t.start),
            (Some(m), None) => m.start,
            (None, Some(t)) => t.start,
            (None, None) => break,
        };
        let (mut start, mut end) = (first, first);
        let (i0, j0) = (i, j);
        loop {
            let mut grew = false;
            if let Some(m) = mine_changes.get(i)
                && touches(m, start, end, i == i0 && j == j0)
            {
                start = start.min(m.start);
                end = end.max(m.end);
                i += 1;
                grew = true;
            }
            if let Some(t) = theirs_changes.get(j)
                && touches(t, start, end, i == i0 && j == j0)
            {
                start = start.min(t.start);
                end = end.max(t.end);
                j += 1;
                grew = true;
            }
            if !grew {
                break;
            }
        }
        out.extend_from_slice(&base_lines[at..start]);
        let ours = apply(&base_lines, start, end, &mine_changes[i0..i]);
        let others = apply(&base_lines, start, end, &theirs_changes[j0..j]);
        if i == i0 {
            out.extend(others);
        } else if j == j0 || ours == others {
            out.extend(ours);
        } else {
            conflicts += 1;
            out.push(MINE_MARK_LINE);
            out.extend(ours);
            out.push(SPLIT_MARK_LINE);
            out.extend(others);
            out.push(THEIRS_MARK_LINE);
        }
        at = end;
    }
    out.extend_from_slice(&base_lines[at..]);
    Merged {
        text: out.concat(),
        conflicts,
    }
}

const MINE_MARK_LINE: &str = "<<<<<<< your edits\n";
const SPLIT_MARK_LINE: &str = "=======\n";
const THEIRS_MARK_LINE: &str = ">>>>>>> on disk\n";

/// Whether `change` belongs to the group `start..end` (`empty`: nothing joined it yet, so it
/// starts at `start`): it changes lines of the group, or inserts lines inside it or where it
/// starts (their order would be a guess). Changes to neighbouring lines do not conflict.
fn touches(change: &Change<'_>, start: usize, end: usize, empty: bool) -> bool {
    let (s, e) = (change.start, change.end);
    if empty || s == start {
        return s == start;
    }
    if s == e || start == end {
        // An insertion (either side) conflicts only strictly inside the other's lines.
        return (start < s && s < end) || (s < start && start < e);
    }
    s < end && start < e
}

/// The base lines `start..end` with `changes` (all inside that range, in order) applied.
fn apply<'a>(base: &[&'a str], start: usize, end: usize, changes: &[Change<'a>]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut at = start;
    for change in changes {
        out.extend_from_slice(&base[at..change.start]);
        out.extend_from_slice(&change.lines);
        at = change.end;
    }
    out.extend_from_slice(&base[at..end]);
    out
}

/// The lines of `text`, each with its line break (a last line without one stays without).
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// What `new` changed of `old`, as base ranges and their new lines, in order.
fn changes<'a>(old: &str, new: &'a str) -> Vec<Change<'a>> {
    let new_lines = lines(new);
    let diff = TextDiff::from_lines(old, new);
    let mut out: Vec<Change<'a>> = Vec::new();
    for op in diff.ops() {
        let (start, end, lines) = match *op {
            DiffOp::Equal { .. } => continue,
            DiffOp::Delete { old_index, old_len, .. } => (old_index, old_index + old_len, Vec::new()),
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => (old_index, old_index, new_lines[new_index..new_index + new_len].to_vec()),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => (
                old_index,
                old_index + old_len,
                new_lines[new_index..new_index + new_len].to_vec(),
            ),
        };
        // Adjacent operations (a delete next to an insert) are one change.
        if let Some(last) = out.last_mut()
            && last.end == start
        {
            last.end = end;
            last.lines.extend(lines);
            continue;
        }
        out.push(Change { start, end, lines });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";

    #[test]
    fn changes_to_different_lines_are_both_kept() {
        let mine = BASE.replace("def add(a, b):\n", "# mine\ndef add(a, b):\n");
        let theirs = BASE.replace("return a - b", "return b - a");
        let merged = merge3(BASE, &mine, &theirs);
        assert_eq!(merged.conflicts, 0);
        assert_eq!(merged.text, mine.replace("return a - b", "return b - a"));
    }

    #[test]
    fn the_same_change_on_both_sides_is_kept_once() {
        let both = BASE.replace("a + b", "b + a");
        assert_eq!(
            merge3(BASE, &both, &both),
            Merged {
                text: both.clone(),
                conflicts: 0
            }
        );
        assert_eq!(merge3(BASE, BASE, &both).text, both, "only theirs changed");
        assert_eq!(merge3(BASE, &both, BASE).text, both, "only mine changed");
    }

    #[test]
    fn different_changes_to_one_line_become_a_conflict_block() {
        let mine = BASE.replace("a + b", "a + b  # mine");
        let theirs = BASE.replace("a + b", "sum((a, b))");
        let merged = merge3(BASE, &mine, &theirs);
        assert_eq!(merged.conflicts, 1);
        assert_eq!(
            merged.text,
            "def add(a, b):\n<<<<<<< your edits\n    return a + b  # mine\n=======\n    return sum((a, b))\n>>>>>>> on disk\n\n\ndef sub(a, b):\n    return a - b\n"
        );
        assert!(
            merged.text.contains(MINE_MARK) && merged.text.contains(SPLIT_MARK) && merged.text.contains(THEIRS_MARK)
        );
    }

    #[test]
    fn insertions_at_the_end_and_a_file_without_a_last_newline() {
        let mine = format!("{BASE}# mine at the end\n");
        let theirs = BASE.replacen("def add", "def plus", 1);
        let merged = merge3(BASE, &mine, &theirs);
        assert_eq!(merged.conflicts, 0);
        assert_eq!(merged.text, format!("{theirs}# mine at the end\n"));
        let merged = merge3("a\nb", "a\nb\nc", "A\nb");
        assert_eq!(
            merged,
            Merged {
                text: "A\nb\nc".into(),
                conflicts: 0
            }
        );
        assert_eq!(merge3("", "x\n", "").text, "x\n");
    }
}
