//! Prints `read_file`'s text of a file (before line numbers), or `ERROR: …` as Cline's
//! extractor reports a failure: the agent-min half of `scripts/extract-vs-cline.sh`.

use std::process::ExitCode;

fn main() -> ExitCode {
    // A PDF is parsed by this program itself, started again as a child.
    if let Some(code) = agent_min::run::tools::read::as_extractor() {
        return code;
    }
    let path = std::env::args_os().nth(1).expect("usage: extract_text FILE");
    let path = std::fs::canonicalize(&path).unwrap_or_else(|_| path.into());
    match agent_min::run::tools::read::extract_text(&path) {
        Ok(text) => print!("{text}"),
        Err(e) => print!("ERROR: {e}"),
    }
    ExitCode::SUCCESS
}
