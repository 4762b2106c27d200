//! `agent-min run`: the agent (see issue 5).

pub mod api;
pub mod curl;
pub mod diff;
pub mod fsx;
pub mod interrupt;
pub mod paths;
pub mod providers;
pub mod sse;

use std::ffi::OsString;
use std::process::ExitCode;

/// Entry point of `agent-min run`.
pub fn main(_args: Vec<OsString>) -> ExitCode {
    eprintln!("agent-min run: not implemented yet");
    ExitCode::from(2)
}
