//! The workspace on disk: the file tree and the text the agent may read.

pub mod tree;

pub use tree::{FileTree, TreeEntry, list_dir};

use std::path::{Path, PathBuf};

/// `path` made absolute against the workspace (ACP paths are absolute; be lenient).
pub fn absolute(workspace: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        workspace.join(path)
    }
}

/// Lines `line` (1-based) .. `line + limit` of `text`, as `fs/read_text_file` asks.
pub fn slice_lines(text: &str, line: Option<u32>, limit: Option<u32>) -> String {
    if line.is_none() && limit.is_none() {
        return text.to_owned();
    }
    let start = line.map_or(0, |l| l.saturating_sub(1) as usize);
    let lines = text.split_inclusive('\n').skip(start);
    match limit {
        Some(limit) => lines.take(limit as usize).collect(),
        None => lines.collect(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn read_text_file_slices_by_one_based_line_and_limit() {
        let text = "a\nb\nc\nd\n";
        assert_eq!(super::slice_lines(text, None, None), text);
        assert_eq!(super::slice_lines(text, Some(2), Some(2)), "b\nc\n");
        assert_eq!(super::slice_lines(text, Some(4), None), "d\n");
    }
}
