//! The task as a record: saved state after every turn ([`state`]), one process per task
//! ([`claim`]), the `--json` event stream
//! ([`events`]), the `history --json` line (`history`) and the JSON Schemas of these formats (`schemas`). `agent-min history` and
//! `agent-min resume` are `crate::history_cmd` and `crate::resume_cmd`; a recorded session played
//! back in place of a model is `crate::run::replay`.
//!
//! Owns: what outlives a run and what a script sees of one. May use: [`crate::run::llm`]'s types
//! (messages, usage, errors), [`crate::run::budget`] (totals), [`crate::run::ui`] (redaction, escaping,
//! interrupts), `crate::run::clock`.

pub mod claim;
pub mod events;
pub(crate) mod history;
#[cfg(test)]
mod schemas;
pub mod state;
