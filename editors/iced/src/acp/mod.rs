//! The ACP side: launching `ided acp`, the SDK connection as a subscription, and one-shot
//! replies to the agent's requests.

pub mod connection;
pub mod error_text;
pub mod launch;
pub mod reply;

pub use connection::{AgentInfo, Command, Connection, Event, IntelRequest, PastSession};
pub use launch::Launch;
pub use reply::Reply;
