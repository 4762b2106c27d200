//! What a run may spend: tokens and cost ([`accounting`]), `--max-turns` / `--max-cost` /
//! `--timeout` ([`limits`]), `--max-mistakes` by kind (`mistakes`), and the context window with Cline's truncation ([`context`]).
//!
//! Owns: every count, price and limit. May use: [`crate::run::llm`]'s types, provider names and model
//! facts (`llm/models.rs`: prices, context windows), `crate::run::prompt::starts_a_part` (where
//! a result ends in a user message, for the context window's cuts), and
//! `crate::run::ui::interrupt` (the timeout's watchdog stops what runs, as Ctrl-C does).

pub mod accounting;
pub mod context;
pub mod limits;
pub(crate) mod mistakes;
