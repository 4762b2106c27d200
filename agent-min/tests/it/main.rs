//! agent-min's integration tests, in one binary (as ripgrep's `tests/tests.rs`): one link instead
//! of one per file. Each module is one area; run one with `cargo test -p agent-min --test it run_native::`.
//!
//! Most drive the built `agent-min` binary against scripted servers on 127.0.0.1 (black box);
//! `task_loop` drives `Task` in-process through a scripted `Transport` (fast, no processes).

mod common;

#[cfg(feature = "acp")]
mod acp;
mod diff_cline;
mod layout;
mod parse_cli;
mod run_checkpoints;
mod run_cli;
mod run_context;
mod run_e2e;
mod run_edit;
mod run_focus_chain;
mod run_hardening;
mod run_history;
#[cfg(feature = "documents")]
mod run_images;
mod run_json;
mod run_limits;
mod run_local;
mod run_mcp;
mod run_mentions;
mod run_native;
mod run_permissions;
mod run_project;
mod run_replay;
mod run_resume;
mod run_review;
mod run_safety;
mod system_prompt;
mod task_loop;
