//! The task as a record: saved state after every turn ([`state`]), `agent-min history`
//! ([`history`]), `agent-min resume` ([`resume`]), recorded sessions played back in place of a
//! model ([`replay`]), and the `--json` event stream ([`events`]); the JSON Schemas of these formats ([`schemas`]).
//!
//! Owns: what outlives a run and what a script sees of one. May use: [`crate::run::llm`]'s types
//! (messages, usage, errors), [`crate::run::budget`] (totals), [`crate::run::ui`] (redaction).

pub mod events;
pub mod history;
pub mod replay;
pub mod resume;
pub mod schemas;
pub mod state;
