//! `agent-min history`: the saved tasks, oldest first, one line each.

use std::ffi::OsString;
use std::process::ExitCode;

use crate::run::cli::Options;
use crate::run::session::history::entry;
use crate::run::session::state::{Record, Store};

/// The `--help` text of `agent-min history`.
pub(crate) fn help() -> &'static str {
    crate::run::texts::AGENT_MIN_HISTORY_TXT.get()
}

/// Entry point of `agent-min history`.
pub fn main(args: Vec<OsString>) -> ExitCode {
    use lexopt::prelude::*;
    let mut opts = Options::default();
    let mut json = false;
    let mut p = lexopt::Parser::from_args(args);
    loop {
        match p.next() {
            Ok(None) => break,
            Ok(Some(Short('h') | Long("help"))) => {
                print!("{}", help());
                return ExitCode::SUCCESS;
            }
            Ok(Some(Long("json"))) => json = true,
            Ok(Some(Long("state-dir"))) => match p.value() {
                Ok(v) => opts.state_dir = Some(v.into()),
                Err(e) => return usage_error(&e.to_string()),
            },
            Ok(Some(other)) => return usage_error(&format!("{}; see `agent-min history --help`", other.unexpected())),
            Err(e) => return usage_error(&e.to_string()),
        }
    }
    // Where `run` saves: the config file's `state_dir` unless given here.
    if opts.state_dir.is_none() {
        opts.state_dir = crate::run::cli::from_config_file("history").state_dir;
    }
    let (tasks, unreadable) = match crate::run::open_store(&opts, None).and_then(|s: Store| s.list_all()) {
        Ok(t) => t,
        Err(e) => return usage_error(&e),
    };
    // Named, not skipped silently: a broken save is still someone's task.
    for (_, why) in &unreadable {
        eprintln!("agent-min history: skipped {}", crate::run::ui::term::visible(why));
    }
    if tasks.is_empty() && !json {
        println!("No saved tasks yet; `agent-min run` saves each task after every turn.");
    }
    if !tasks.is_empty() && !json {
        println!("{}", header());
    }
    for r in &tasks {
        if json {
            println!("{}", crate::run::ui::term::json_visible(&serde_json::to_string(&entry(r)).unwrap_or_default()));
        } else {
            println!("{}", summary_line(r));
        }
    }
    ExitCode::SUCCESS
}

fn usage_error(msg: &str) -> ExitCode {
    eprintln!("agent-min history: {msg}");
    ExitCode::from(2)
}

/// The status column's width: its longest status (`approval_needed`), so every line's columns
/// stand under the header's.
const STATUS_WIDTH: usize = "approval_needed".len();

/// The column names, over [`summary_line`]'s columns.
fn header() -> String {
    let when = crate::run::clock::format_utc(0).chars().count();
    format!(
        "{:<22}  {:<STATUS_WIDTH$} {:>8}  {:>9}  {:<when$}  {}  {}",
        "ID", "STATUS", "REQUESTS", "COST", "UPDATED", "WORKSPACE", "TASK"
    )
}

/// One task's line; its task and workspace are shown escaped, as everything else on the terminal.
fn summary_line(r: &Record) -> String {
    let cost = r.totals.cost_usd.map_or("-".to_string(), |c| format!("${c:.4}"));
    let task: String = r.meta.task.lines().next().unwrap_or("").chars().take(60).collect();
    let line = format!(
        "{}  {:<STATUS_WIDTH$} {:>4} req  {:>9}  {}  {}  {}",
        r.meta.id,
        r.shown_status(),
        r.requests(),
        cost,
        crate::run::clock::format_utc(r.updated),
        r.meta.cwd,
        task
    );
    crate::run::ui::term::visible(&line).into_owned()
}
