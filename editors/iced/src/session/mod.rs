//! The ACP session model: the reducer over session updates, the diffs it renders, the slash
//! commands it completes, and recorded event sequences. No iced types here.

pub mod commands;
pub mod diff;
pub mod intel;
pub mod merge;
pub mod plan_graph;
pub mod record;
pub mod state;

pub use diff::{DiffLine, FileDiff, FileStatus, LineKind, SideRow};
pub use record::RecordedEvent;
pub use state::{
    AgentExit, Choice, ChoiceRole, Entry, EntryKind, Location, PendingPermission, PlanRow, Review, RunStatus,
    SessionState, StepStatus, ToolCallRow,
};
