//! The panels of the window, each with its own messages and view, and the theme.

pub mod agent_panel;
pub mod editor;
pub mod file_tree;
pub mod history;
pub mod plan_graph;
pub mod review;
pub mod search;
pub mod status_bar;
pub mod theme;
