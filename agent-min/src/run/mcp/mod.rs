//! MCP: the client side of the Model Context Protocol, with Cline's settings format and texts.
//!
//! Owns: where the settings come from and the one-time approval of a workspace's own
//! `.cline/mcp.json` (`sources`, this file), the settings format (`config`), JSON-RPC
//! (`jsonrpc`), the transports behind `Transport` — stdio child processes (`stdio`),
//! streamable HTTP (`http`) and the older HTTP+SSE (`sse`), both through curl — one session (`client`), the set of servers of a
//! run (`hub`), what the prompt says about them (`prompt`), their tools as native tool
//! definitions with Cline's `uid0mcp0tool` names (`native`) and Cline's result texts
//! (`texts`). The tools that use it are `tools/mcp.rs`; `agent-min mcp list` is
//! `crate::mcp_cmd`.
//!
//! May use: `crate::run::llm::curl` and [`crate::run::llm::sse`] (HTTP),
//! `crate::run::llm::tool_specs` (the native definitions' type), [`crate::run::ui`]
//! (prompts, interrupt registration, key names), [`crate::run::session::events`], and
//! `crate::run::prompt` (the base system prompt), `crate::run::clock`,
//! `crate::run::trusted_file` (reading the settings), `crate::run::places` (where the Cline
//! CLI's settings are), `crate::run::spawn` (starting a server),
//! `crate::run::built` (what a build without MCP says), `crate::run::digest` (what an approval
//! of a workspace's settings covers).

pub(crate) mod client;
pub(crate) mod config;
pub(crate) mod http;
pub(crate) mod hub;
pub(crate) mod jsonrpc;
pub(crate) mod native;
pub(crate) mod newest;
pub(crate) mod prompt;
pub(crate) mod sources;
pub(crate) mod sse;
pub(crate) mod stdio;
pub(crate) mod texts;

use std::time::Instant;

use serde_json::Value;

pub use hub::Hub;
use jsonrpc::McpError;

/// Whether this build starts MCP servers (the cargo feature `mcp`). Without it the servers a
/// settings file lists are named in one warning and never started (`--mcp-config` is refused),
/// so no hub ever has a server and the optimizer leaves the transports and sessions out.
pub(crate) const BUILT_IN: bool = cfg!(feature = "mcp");

/// A way to exchange JSON-RPC messages with a server.
pub(crate) trait Transport: Send {
    /// Sends one message; `deadline` bounds how long that may take (HTTP: the whole POST).
    fn send(&mut self, msg: &Value, deadline: Instant) -> Result<(), McpError>;
    /// The next message from the server, waiting until `deadline` ([`McpError::Timeout`]).
    fn recv(&mut self, deadline: Instant) -> Result<Value, McpError>;
    /// The protocol version agreed at `initialize` (HTTP sends it as a header).
    fn negotiated(&mut self, _protocol: &str) {}
    /// Lines of output that were not JSON-RPC messages (stdio).
    fn garbage_lines(&self) -> usize {
        0
    }
    /// The server's process group, for a server run as a child (stdio).
    fn server_group(&self) -> Option<i32> {
        None
    }
}
