//! What a run may spend: tokens and cost ([`accounting`]), `--max-turns` / `--max-cost` /
//! `--timeout` ([`limits`]), `--max-mistakes` by kind (`mistakes`), and the context window with Cline's truncation ([`context`]).
//!
//! Owns: every count, price and limit. May use: [`crate::run::llm`]'s types, provider names and model
//! facts (`llm/models.rs`: prices, context windows), and
//! `crate::run::ui::interrupt` (the timeout's watchdog stops what runs, as Ctrl-C does).

pub mod accounting;
pub mod context;
pub mod limits;
pub(crate) mod mistakes;
