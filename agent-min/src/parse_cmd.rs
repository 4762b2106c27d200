//! `agent-min parse`: placeholder until the parser lands.

use std::ffi::OsString;
use std::process::ExitCode;

/// Entry point of `agent-min parse`.
pub fn main(_args: Vec<OsString>) -> ExitCode {
    ExitCode::from(2)
}
