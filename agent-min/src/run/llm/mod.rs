//! The model, reached over HTTP: what the loop sends and gets back (`types`), the three wire
//! formats ([`providers`]), Server-Sent Events ([`sse`]), the `curl` subprocess (`curl`) and the
//! transport that joins them with retries (`http`).
//!
//! Owns: everything between "a conversation" and "a stream of deltas". May use: `crate::run::clock`,
//! `crate::run::ui::interrupt` (so Ctrl-C kills curl) and `crate::run::ui::redact` (the key
//! variables curl never inherits; URLs shown without their credentials), `crate::run::spawn` (how curl is started), `crate::run::texts`
//! (the model table), nothing else of the agent. The types
//! everyone shares live in `types`, which depends on nothing, so the providers and the transport
//! never import each other in a circle.

pub(crate) mod curl;
pub(crate) mod http;
pub(crate) mod models;
pub mod providers;
pub(crate) mod server_window;
pub mod sse;
pub(crate) mod tool_specs;
pub(crate) mod types;

pub(crate) use http::{backoff, Http};
pub(crate) use types::json_bytes;
pub use types::{
    ApiError, BlockDelta, Delta, Flow, ImagePart, Message, Part, Role, StopReason, ToolUsePart, Transport, Usage,
    QUIET_AFTER,
};
