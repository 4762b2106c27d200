//! `agent-min history`: the saved tasks, oldest first, one line each.

use std::ffi::OsString;
use std::process::ExitCode;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::run::budget::accounting::Totals;
use crate::run::cli::Options;
use crate::run::session::state::{Record, Store};

/// The version of the `history --json` format, in every line's `version` field.
pub const VERSION: u32 = 1;

/// One line of `agent-min history --json`: one saved task. `agent-min/schemas/history.schema.json`
/// is generated from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The format's version ([`VERSION`]).
    pub version: u32,
    /// The task id (what `agent-min resume` takes).
    pub id: String,
    /// `running`, `completed`, `failed`, or `interrupted` (saved as running by a run that is gone).
    #[schemars(extend("enum" = ["running", "completed", "failed", "interrupted"]))]
    pub status: String,
    /// The result (completed) or the reason (failed).
    pub outcome: Option<String>,
    /// The task as given.
    pub task: String,
    /// The workspace.
    pub cwd: String,
    /// Provider name.
    pub provider: String,
    /// Model name.
    pub model: String,
    /// When it was created (Unix seconds).
    pub created: u64,
    /// Last save (Unix seconds).
    pub updated: u64,
    /// Turns (requests) so far.
    pub turns: u32,
    /// Requests the model answered, over all runs.
    pub requests: u64,
    /// Token and cost totals, over all runs.
    pub totals: Totals,
}

/// The `--help` text of `agent-min history`.
pub const HELP: &str = "\
agent-min history — list saved tasks

USAGE:
    agent-min history [--state-dir DIR] [--json]

One line per task, oldest first: id, status (running, completed, failed, or interrupted when
the run that saved it is gone: Ctrl-C, kill, a crash), the requests the model answered, cost,
when it was last saved, the workspace and the task. Continue one with `agent-min resume ID`
(or `--last`).

OPTIONS:
    --state-dir DIR   where tasks are saved (default $XDG_STATE_HOME/agent-min or
                      ~/.local/state/agent-min)
    --json            one JSON object per task instead
";

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
                print!("{HELP}");
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
    let tasks = match crate::run::open_store(&opts, None).and_then(|s: Store| s.list()) {
        Ok(t) => t,
        Err(e) => return usage_error(&e),
    };
    if tasks.is_empty() && !json {
        println!("No saved tasks yet; `agent-min run` saves each task after every turn.");
    }
    for r in &tasks {
        if json {
            println!("{}", serde_json::to_string(&entry(r)).unwrap_or_default());
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

/// One task's line; its task and workspace are shown escaped, as everything else on the terminal.
fn summary_line(r: &Record) -> String {
    let cost = r.totals.cost_usd.map_or("-".to_string(), |c| format!("${c:.4}"));
    let task: String = r.meta.task.lines().next().unwrap_or("").chars().take(60).collect();
    let line = format!(
        "{}  {:<9} {:>4} req  {:>9}  {}  {}  {}",
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

fn entry(r: &Record) -> Entry {
    Entry {
        version: VERSION,
        id: r.meta.id.clone(),
        status: r.shown_status().to_string(),
        outcome: r.outcome.clone(),
        task: r.meta.task.clone(),
        cwd: r.meta.cwd.clone(),
        provider: r.meta.provider.clone(),
        model: r.meta.model.clone(),
        created: r.meta.created,
        updated: r.updated,
        turns: r.turns,
        requests: r.requests(),
        totals: r.totals.clone(),
    }
}
