//! `agent-min mcp list`: starts the configured MCP servers as a run would, and shows each one's
//! state, tools and resources (or, with `--json`, one JSON object per server).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{json, Value};

use crate::run::mcp::hub::State;
use crate::run::mcp::sources;
use crate::run::session::events::Events;
use crate::run::ui::interrupt;
use crate::run::ui::term::{visible, Term};

/// The `--help` text.
pub(crate) fn help() -> &'static str {
    crate::run::texts::AGENT_MIN_MCP_TXT.get()
}

struct Opts {
    files: Vec<PathBuf>,
    cwd: PathBuf,
    /// The option given to start the workspace's servers unasked, if one was.
    trust: Option<&'static str>,
    json: bool,
    wait: std::time::Duration,
}

/// Entry point of `agent-min mcp`.
pub fn main(args: Vec<OsString>) -> ExitCode {
    let mut it = args.into_iter();
    match it.next().as_ref().and_then(|a| a.to_str()) {
        Some("list") if !crate::run::mcp::BUILT_IN => {
            eprintln!("agent-min mcp: {}", crate::run::built::not_built_in("mcp", "MCP"));
            return ExitCode::from(2);
        }
        Some("list") => {}
        Some("-h" | "--help" | "help") | None => {
            print!("{}", help());
            return ExitCode::SUCCESS;
        }
        Some(other) => {
            eprintln!("agent-min mcp: unknown subcommand {other:?}; expected `list`\n\n{}", help());
            return ExitCode::from(2);
        }
    }
    let opts = match parse(it.collect()) {
        Ok(Some(o)) => o,
        Ok(None) => {
            print!("{}", help());
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("agent-min mcp list: {e}");
            return ExitCode::from(2);
        }
    };
    // The workspace's file is read only by its real path (no link on the way): `.` is not one.
    let cwd = match std::fs::canonicalize(&opts.cwd) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("agent-min mcp list: --cwd {}: {e}; give an existing directory", opts.cwd.display());
            return ExitCode::from(2);
        }
    };
    // As `run` does: an activated `.venv/bin` on PATH could hold a curl a command planted, and
    // it would get the pipe with the servers' headers.
    crate::run::spawn::distrust_programs_in(&cwd);
    interrupt::install();
    let mut term = Term::stderr();
    let mut events = Events::off();
    let mut hub = match sources::start_now(&opts.files, &cwd, opts.trust, opts.wait, &mut term) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("agent-min mcp list: {e}");
            return ExitCode::from(2);
        }
    };
    if hub.is_empty() {
        eprintln!("agent-min mcp list: no MCP servers are configured; pass --mcp-config FILE or create $XDG_CONFIG_HOME/agent-min/mcp.json or ~/.cline/data/settings/cline_mcp_settings.json (see `agent-min mcp --help`)");
        return ExitCode::from(1);
    }
    let mut failed = false;
    let mut out = String::new();
    for s in hub.servers() {
        failed |= matches!(s.state, State::Failed(_));
        if opts.json {
            out.push_str(&server_json(s).to_string());
            out.push('\n');
        } else {
            out.push_str(&server_text(s));
        }
    }
    // A server's names and errors are untrusted: made safe for a terminal, and with --json in
    // JSON's own escapes (`visible` writes `\x9b`, which no JSON reader takes).
    match opts.json {
        true => print!("{}", crate::run::ui::term::json_visible(&out)),
        false => print!("{}", visible(&out)),
    }
    hub.stop(&mut events);
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn parse(args: Vec<OsString>) -> Result<Option<Opts>, String> {
    use lexopt::prelude::*;
    let mut o = Opts {
        files: Vec::new(),
        cwd: PathBuf::from("."),
        trust: None,
        json: false,
        wait: crate::run::mcp::hub::CONNECT_WAIT,
    };
    let mut p = lexopt::Parser::from_args(args);
    while let Some(arg) = p.next().map_err(|e| e.to_string())? {
        match arg {
            Short('h') | Long("help") => return Ok(None),
            Long("mcp-config") => o.files.push(p.value().map_err(|e| e.to_string())?.into()),
            Long("cwd") => o.cwd = p.value().map_err(|e| e.to_string())?.into(),
            Long("trust-workspace") => o.trust = Some("--trust-workspace"),
            // What this command took before it took `run`'s name for the same thing.
            Long("yolo") => o.trust = Some("--yolo"),
            Long("json") => o.json = true,
            Long("mcp-startup-timeout") => {
                let v = p.value().map_err(|e| e.to_string())?;
                let s = v.to_string_lossy();
                match s.parse::<f64>() {
                    Ok(x) if x.is_finite() && x >= 1.0 => o.wait = crate::run::clock::clamped_secs(x),
                    _ => {
                        return Err(format!(
                            "--mcp-startup-timeout expects a number of seconds (at least 1), got {s:?}"
                        ))
                    }
                }
            }
            other => return Err(format!("{}; see `agent-min mcp --help`", other.unexpected())),
        }
    }
    // The config file's `mcp_config` first, as `run` reads it.
    let mut files = crate::run::cli::from_config_file("mcp").mcp_config;
    files.append(&mut o.files);
    o.files = files;
    Ok(Some(o))
}

fn field<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

fn server_text(s: &crate::run::mcp::hub::Server) -> String {
    let mut t = format!("{} [{}] {}\n", s.cfg.name, s.state_name(), s.cfg.command_line());
    match &s.state {
        State::Connected(c) => {
            t.push_str(&format!("  tools ({}):\n", c.tools.len()));
            for tool in &c.tools {
                t.push_str(&format!("    {} — {}\n", field(tool, "name"), field(tool, "description")));
            }
            if !c.resources.is_empty() {
                t.push_str(&format!("  resources ({}):\n", c.resources.len()));
                for r in &c.resources {
                    t.push_str(&format!("    {} ({})\n", field(r, "uri"), field(r, "name")));
                }
            }
            if !c.templates.is_empty() {
                t.push_str(&format!("  resource templates ({}):\n", c.templates.len()));
                for r in &c.templates {
                    t.push_str(&format!("    {} ({})\n", field(r, "uriTemplate"), field(r, "name")));
                }
            }
        }
        State::Failed(e) => t.push_str(&format!("  error: {e}\n")),
        State::Disabled => t.push_str("  (\"disabled\": true in its settings)\n"),
        State::Starting(_) => t.push_str("  (still starting)\n"),
    }
    t
}

fn server_json(s: &crate::run::mcp::hub::Server) -> Value {
    let names = |v: &[Value], k: &str| v.iter().map(|x| Value::from(field(x, k))).collect::<Vec<_>>();
    let (tools, resources, templates, error) = match &s.state {
        State::Connected(c) => {
            (names(&c.tools, "name"), names(&c.resources, "uri"), names(&c.templates, "uriTemplate"), None)
        }
        State::Failed(e) => (vec![], vec![], vec![], Some(e.clone())),
        State::Disabled | State::Starting(_) => (vec![], vec![], vec![], None),
    };
    json!({"server": s.cfg.name, "file": s.cfg.file.display().to_string(), "state": s.state_name(),
           "command": s.cfg.command_line(), "tools": tools, "resources": resources,
           "resource_templates": templates, "error": error})
}
