//! Library half of `agent-min`: the parse command and the agent, split out so that tests and fuzz
//! targets can reach the pieces (the SSE decoder, the diff applier) directly.

// The ports only `acp` drives (`Task::converse`, `Events::tapped`, `Term::answered_by`, …) have
// no caller without it; unused code is caught by the default build's clippy.
#![cfg_attr(not(feature = "acp"), allow(dead_code))]

#[cfg(feature = "acp")]
pub mod acp;
pub mod checkpoints_cmd;
pub mod history_cmd;
pub mod mcp_cmd;
pub mod parse_cmd;
pub mod resume_cmd;
pub mod run;
pub mod sandbox_cmd;

/// What `agent-min` with no command, or `agent-min --help`, prints: the commands.
pub fn usage() -> &'static str {
    run::texts::AGENT_MIN_TXT.get()
}
