//! `agent-min`: run a minimal Cline-style agent, or drive the parser from the command line.

use std::process::ExitCode;

fn main() -> ExitCode {
    if let Some(code) = agent_min::run::tools::read::as_extractor() {
        return code;
    }
    let mut args = std::env::args_os().skip(1);
    let Some(cmd) = args.next() else {
        eprint!("{}", agent_min::usage());
        return ExitCode::from(2);
    };
    let rest: Vec<_> = args.collect();
    match cmd.to_str() {
        Some("parse") => agent_min::parse_cmd::main(rest),
        Some("run") => agent_min::run::main(rest),
        #[cfg(feature = "acp")]
        Some("acp") => agent_min::acp::main(rest),
        #[cfg(not(feature = "acp"))]
        Some("acp") => {
            eprintln!("agent-min acp: the Agent Client Protocol is not built into this agent-min (it was built without the cargo feature `acp`); rebuild with `cargo build --release -p agent-min --features acp`, or with the default features");
            ExitCode::from(2)
        }
        Some("resume") => agent_min::resume_cmd::main(rest),
        Some("history") => agent_min::history_cmd::main(rest),
        Some("checkpoints") => agent_min::checkpoints_cmd::main(rest),
        Some("-V" | "--version") => {
            println!("agent-min {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Some("mcp") => agent_min::mcp_cmd::main(rest),
        Some("sandbox") => agent_min::sandbox_cmd::main(rest),
        // `agent-min help run` is `agent-min run --help`.
        Some("help") if !rest.is_empty() => {
            let help = vec![std::ffi::OsString::from("--help")];
            match rest[0].to_str() {
                Some("parse") => agent_min::parse_cmd::main(help),
                Some("run") => agent_min::run::main(help),
                #[cfg(feature = "acp")]
                Some("acp") => agent_min::acp::main(help),
                Some("resume") => agent_min::resume_cmd::main(help),
                Some("history") => agent_min::history_cmd::main(help),
                Some("checkpoints") => agent_min::checkpoints_cmd::main(help),
                Some("mcp") => agent_min::mcp_cmd::main(help),
                Some("sandbox") => agent_min::sandbox_cmd::main(help),
                _ => {
                    eprintln!(
                        "agent-min help: unknown command {:?}; expected parse, run, resume, history, checkpoints, mcp or sandbox",
                        rest[0]
                    );
                    ExitCode::from(2)
                }
            }
        }
        Some("-h" | "--help" | "help") => {
            print!("{}", agent_min::usage());
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!(
                "agent-min: unknown command {:?}; expected `parse`, `run`, `resume`, `history`, `checkpoints`, `mcp` or `sandbox`\n\n{}",
                cmd,
                agent_min::usage()
            );
            ExitCode::from(2)
        }
    }
}
