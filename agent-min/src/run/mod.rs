//! `agent-min run`: the agent (see issue 5). Not implemented yet.

use std::ffi::OsString;
use std::process::ExitCode;

/// Entry point of `agent-min run`.
pub fn main(_args: Vec<OsString>) -> ExitCode {
    eprintln!("agent-min run: not implemented yet");
    ExitCode::from(2)
}
