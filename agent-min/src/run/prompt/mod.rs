//! What the model is told, in one place per kind of text:
//!
//! - [`mod@system`]: the system prompt, by model family (Cline's `system-prompt/` variants);
//! - `responses`: Cline's `formatResponse` texts (tool results, errors, the loop's notes);
//! - `environment`: Cline's `<environment_details>`;
//! - `focus_chain`: Cline's `task_progress` checklist, its counters and its reminders;
//! - `patch`: a text built in as its line differences from another (the prompts' size).
//!
//! A new text goes in the file of its kind; callers use the re-exports below.
//!
//! May use: `crate::run::llm::providers::registry` (which providers Cline counts as next-gen),
//! `crate::run::clock` (the time), `crate::run::texts` (the prompts' texts), nothing else of the
//! agent.

pub(crate) mod content_limits;
pub(crate) mod environment;
pub(crate) mod focus_chain;
pub(crate) mod patch;
pub(crate) mod responses;
pub(crate) mod skills;
pub mod system;

pub use responses::*;
