//! The workspace's file tree, read one folder at a time with `.gitignore` applied (the
//! `ignore` crate: gitignored and hidden files are not listed).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// One listed file or folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    pub path: PathBuf,
    pub name: String,
    pub is_dir: bool,
}

/// A visible row of the tree (depth for indentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeRow<'a> {
    pub entry: &'a TreeEntry,
    pub depth: usize,
    pub expanded: bool,
}

/// The tree: listed folders and which of them are expanded.
#[derive(Debug, Clone, Default)]
pub struct FileTree {
    pub root: PathBuf,
    children: HashMap<PathBuf, Vec<TreeEntry>>,
    expanded: BTreeSet<PathBuf>,
}

impl FileTree {
    pub fn new(root: PathBuf) -> Self {
        FileTree {
            root,
            ..FileTree::default()
        }
    }

    /// Stores a folder's listing (from [`list_dir`]).
    pub fn set_children(&mut self, dir: PathBuf, entries: Vec<TreeEntry>) {
        self.children.insert(dir, entries);
    }

    /// Whether the folder's listing is known.
    pub fn is_listed(&self, dir: &Path) -> bool {
        self.children.contains_key(dir)
    }

    /// Expands or collapses a folder; true when it is now expanded and not listed yet.
    pub fn toggle(&mut self, dir: &Path) -> bool {
        if !self.expanded.remove(dir) {
            self.expanded.insert(dir.to_path_buf());
            return !self.is_listed(dir);
        }
        false
    }

    /// The rows to show, depth first, folders before files.
    pub fn rows(&self) -> Vec<TreeRow<'_>> {
        let mut rows = Vec::new();
        self.push_rows(&self.root, 0, &mut rows);
        rows
    }

    fn push_rows<'a>(&'a self, dir: &Path, depth: usize, rows: &mut Vec<TreeRow<'a>>) {
        let Some(entries) = self.children.get(dir) else {
            return;
        };
        for entry in entries {
            let expanded = entry.is_dir && self.expanded.contains(&entry.path);
            rows.push(TreeRow { entry, depth, expanded });
            if expanded {
                self.push_rows(&entry.path, depth + 1, rows);
            }
        }
    }
}

/// Lists one folder: gitignored, hidden and `.git` entries left out, folders first, by name.
pub fn list_dir(dir: &Path) -> Vec<TreeEntry> {
    let mut entries: Vec<TreeEntry> = ignore::WalkBuilder::new(dir)
        .max_depth(Some(1))
        .hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .require_git(false)
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.depth() == 1)
        .map(|e| TreeEntry {
            name: e.file_name().to_string_lossy().into_owned(),
            is_dir: e.file_type().is_some_and(|t| t.is_dir()),
            path: e.into_path(),
        })
        .collect();
    entries.sort_by(|a, b| b.is_dir.cmp(&a.is_dir).then_with(|| a.name.cmp(&b.name)));
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_hides_gitignored_and_hidden_files_and_puts_folders_first() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".gitignore"), "build/\n*.log\n").unwrap();
        std::fs::create_dir(root.join("build")).unwrap();
        std::fs::create_dir(root.join("src")).unwrap();
        std::fs::write(root.join("src/main.py"), "x = 1\n").unwrap();
        std::fs::write(root.join("a.log"), "").unwrap();
        std::fs::write(root.join("README.md"), "").unwrap();
        let names: Vec<_> = list_dir(root).into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["src", "README.md"]);

        let mut tree = FileTree::new(root.to_path_buf());
        tree.set_children(root.to_path_buf(), list_dir(root));
        let src = root.join("src");
        assert!(tree.toggle(&src), "an unlisted folder asks to be listed");
        tree.set_children(src.clone(), list_dir(&src));
        let rows: Vec<_> = tree.rows().iter().map(|r| (r.entry.name.clone(), r.depth)).collect();
        assert_eq!(
            rows,
            [("src".into(), 0), ("main.py".into(), 1), ("README.md".into(), 0)]
        );
    }
}
