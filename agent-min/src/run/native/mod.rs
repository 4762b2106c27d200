//! Native tool calls, beside the XML dialect: which dialect a run speaks
//! (`mode`: `--tool-calls xml|native|auto` and Cline's table of model families), the streamed
//! JSON arguments read incrementally (`args`), one native reply turned into the same
//! [`crate::run::tools::Call`] the XML path produces ([`reply`]), and what the model is told in
//! this dialect (`prompt`), calls written as XML text instead (`recover`), `<thinking>` tags kept off the screen (`thinking_tags`), and
//! the MCP servers' own functions read as `use_mcp_tool` (`mcp_call`).
//!
//! Owns: the native dialect between the wire (`llm/`) and the loop. May use: [`crate::run::llm`]
//! types, [`crate::run::reply`] (`Reply`, `Screen`), [`crate::run::prompt`]'s texts,
//! [`crate::run::tools`]' `Call`, [`crate::run::ui`], `crate::run::mcp::native` (uids). The
//! wire shapes themselves (tool
//! definitions, `tool_use` / `tool_calls` decoding, history pairing) live in `llm/`.

pub(crate) mod args;
pub(crate) mod mcp_call;
pub(crate) mod mode;
pub(crate) mod prompt;
pub(crate) mod recover;
pub mod reply;
pub(crate) mod thinking_tags;

pub(crate) use mode::ToolCalls;
pub(crate) use prompt::{invalid_arguments, no_tools_used, system, truncated_text, truncated_tool};
pub(crate) use recover::TOOLS_IGNORED;
pub(crate) use reply::{calls_left_out, read_reply};
