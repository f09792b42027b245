//! ided's Iced IDE client: opens a workspace, talks to `ided acp` over the Agent Client
//! Protocol, streams a run's plan, thoughts, messages and tool calls, reviews its batched diff
//! (accept / reject / feedback) and rolls runs back.
//!
//! Layout: [`session`] (the ACP session model and reducer, no iced), [`acp`] (the SDK
//! connection as a subscription), [`workspace`] (file tree, file text), [`ui`] (panels),
//! [`app`] (the Elm-shaped application that wires them).

pub mod acp;
pub mod app;
pub mod bench;
pub mod session;
pub mod ui;
pub mod workspace;

pub use app::{App, Message, Options};
