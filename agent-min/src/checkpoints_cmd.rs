//! `agent-min checkpoints list | diff | restore`: the checkpoints of a saved task, a unified
//! diff between two of them (or one and now), and Cline's three kinds of restore — asked for
//! confirmation unless `--yes`.

use std::ffi::OsString;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::run::checkpoints::restore::{self, What};
use crate::run::checkpoints::shadow::Shadow;
use crate::run::clock::format_utc;
use crate::run::session::state::{self, CheckpointRecord, Record, Store};
use crate::run::ui::term::visible;

/// The `--help` text.
pub(crate) fn help() -> &'static str {
    crate::run::texts::AGENT_MIN_CHECKPOINTS_TXT.get()
}

#[derive(Debug, Default)]
struct Args {
    sub: String,
    id: Option<String>,
    numbers: Vec<u32>,
    what: Option<What>,
    yes: bool,
    state_dir: Option<PathBuf>,
    help: bool,
}

fn parse(args: Vec<OsString>) -> Result<Args, String> {
    use lexopt::prelude::*;
    let mut a = Args::default();
    let mut last = false;
    let mut positional = Vec::new();
    let mut p = lexopt::Parser::from_args(args);
    let err = |e: lexopt::Error| e.to_string();
    let set_what = |a: &mut Args, w: What| match a.what.replace(w) {
        Some(old) if old != w => Err("give one of --files, --task and --both".to_string()),
        _ => Ok(()),
    };
    while let Some(arg) = p.next().map_err(err)? {
        match arg {
            Short('h') | Long("help") => a.help = true,
            Long("last") => last = true,
            Short('y') | Long("yes") => a.yes = true,
            Long("files") => set_what(&mut a, What::Files)?,
            Long("task") => set_what(&mut a, What::Task)?,
            Long("both") => set_what(&mut a, What::Both)?,
            // Absolute now: git runs in the workspace, where a relative path names another folder.
            Long("state-dir") => {
                let dir = PathBuf::from(p.value().map_err(err)?);
                a.state_dir =
                    Some(std::path::absolute(&dir).map_err(|e| format!("--state-dir {}: {e}", dir.display()))?);
            }
            Value(v) if a.sub.is_empty() => a.sub = v.string().map_err(err)?,
            Value(v) => positional.push(v.string().map_err(err)?),
            other => return Err(format!("{}; see `agent-min checkpoints --help`", other.unexpected())),
        }
    }
    if a.help {
        return Ok(a);
    }
    // Where `run` saves: the config file's `state_dir` unless given here.
    if a.state_dir.is_none() {
        a.state_dir = crate::run::cli::from_config_file("checkpoints").state_dir;
    }
    // A task id has a dash or at least 8 digits; a checkpoint number is short.
    let is_id = |s: &str| s.contains('-') || s.len() >= 8 || s.parse::<u32>().is_err();
    if !last && positional.first().is_some_and(|s| is_id(s)) {
        a.id = Some(positional.remove(0));
    }
    for s in positional {
        a.numbers.push(
            s.parse().map_err(|_| format!("{s:?} is not a checkpoint number; see `agent-min checkpoints list`"))?,
        );
    }
    let (min, max) = match a.sub.as_str() {
        "list" => (0, 0),
        "diff" => (1, 2),
        "restore" => (1, 1),
        "" => return Err("which command? `list`, `diff` or `restore` (see `agent-min checkpoints --help`)".into()),
        s => return Err(format!("unknown command {s:?}; expected `list`, `diff` or `restore`")),
    };
    if a.numbers.len() < min || a.numbers.len() > max {
        return Err(match a.sub.as_str() {
            "list" => "`list` takes no checkpoint number".to_string(),
            "diff" => "`diff` takes one or two checkpoint numbers: N [M]".to_string(),
            _ => "`restore` takes one checkpoint number N".to_string(),
        });
    }
    if a.what.is_some() && a.sub != "restore" {
        return Err("--files, --task and --both are for `restore`".into());
    }
    Ok(a)
}

/// Entry point of `agent-min checkpoints`.
pub fn main(args: Vec<OsString>) -> ExitCode {
    let a = match parse(args) {
        Ok(a) => a,
        Err(e) => return fail(2, &e),
    };
    if a.help {
        print!("{}", help());
        return ExitCode::SUCCESS;
    }
    if !crate::run::checkpoints::BUILT_IN {
        return fail(2, &crate::run::built::not_built_in("checkpoints", "`agent-min checkpoints`"));
    }
    let Some(dir) = a.state_dir.clone().or_else(state::default_dir) else {
        return fail(2, "no state directory: neither XDG_STATE_HOME nor HOME is set; pass --state-dir DIR");
    };
    // After a `kill -9` mid-checkpoint, nested repositories are hidden until put back.
    for problem in crate::run::checkpoints::shadow::reenable_nested(&dir) {
        eprintln!("agent-min checkpoints: {}", visible(&problem));
    }
    let result = Store::open(&dir, None).and_then(|store| {
        let record = match &a.id {
            Some(id) => store.load(id)?,
            None => {
                let r = store.last_in(std::path::Path::new("."))?;
                let task = crate::resume_cmd::short(&r.meta.task);
                let cwd = crate::run::ui::term::visible(&r.meta.cwd);
                eprintln!("agent-min checkpoints: the latest task of {cwd}: {} — {task}", r.meta.id);
                r
            }
        };
        match a.sub.as_str() {
            "list" => list(&record),
            "diff" => diff(&dir, &record, a.numbers[0], a.numbers.get(1).copied()),
            _ => restore_cmd(&store, &dir, record, a.numbers[0], a.what.unwrap_or(What::Both), a.yes),
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(1, &e),
    }
}

fn fail(code: u8, msg: &str) -> ExitCode {
    eprintln!("agent-min checkpoints: {}", visible(msg));
    ExitCode::from(code)
}

fn find(record: &Record, n: u32) -> Result<&CheckpointRecord, String> {
    record.checkpoints.iter().find(|c| c.number == n).ok_or_else(|| {
        let have = match (record.checkpoints.first(), record.checkpoints.last()) {
            (Some(a), Some(b)) => format!("it has checkpoints {} to {}", a.number, b.number),
            _ => "it has none".to_string(),
        };
        format!(
            "task {} has no checkpoint {n}; {have} (see `agent-min checkpoints list {}`)",
            record.meta.id, record.meta.id
        )
    })
}

/// The shadow repository of the workspace checkpoint `cp` of `record` was taken in.
fn open(dir: &Path, record: &Record, cp: &CheckpointRecord) -> Result<Shadow, String> {
    let ws = Path::new(cp.workspace(&record.meta.cwd));
    if !ws.is_dir() {
        return Err(format!(
            "checkpoint {} was taken in {}, which is not there any more (moved or deleted); its checkpoints are kept in that workspace's series under {}",
            cp.number,
            ws.display(),
            dir.join("checkpoints").display()
        ));
    }
    Shadow::open(dir, ws)
}

fn list(record: &Record) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    let head = format!("Checkpoints of task {} in {}:", record.meta.id, record.meta.cwd);
    let _ = writeln!(out, "{}", visible(&head));
    if record.checkpoints.is_empty() {
        let _ = writeln!(out, "  none (the task made no edit or command with checkpoints on)");
        return Ok(());
    }
    let _ = writeln!(out, "{:>4}  {:>4}  {:<23}  {:<16}  {:>5}  commit", "N", "turn", "time", "tool", "files");
    for c in &record.checkpoints {
        let line = format!(
            "{:>4}  {:>4}  {:<23}  {:<16}  {:>5}  {}",
            c.number,
            c.turn,
            format_utc(c.time),
            c.tool,
            c.files_changed,
            &c.hash[..c.hash.len().min(10)]
        );
        let _ = writeln!(out, "{}", visible(&line));
        if let Some(ws) = &c.workspace {
            let _ = writeln!(out, "{}", visible(&format!("        taken in {ws}")));
        }
        if !c.left_out.is_empty() {
            let _ = writeln!(out, "{}", visible(&format!("        left out: {}", c.left_out.join(", "))));
        }
    }
    Ok(())
}

fn diff(dir: &Path, record: &Record, n: u32, m: Option<u32>) -> Result<(), String> {
    let first = find(record, n)?;
    let from = first.hash.clone();
    let second = m.map(|m| find(record, m)).transpose()?;
    let to = second.map(|c| c.hash.clone());
    let ws = first.workspace(&record.meta.cwd);
    if let Some(other) = second.map(|c| c.workspace(&record.meta.cwd)).filter(|w| *w != ws) {
        return Err(format!(
            "checkpoints {n} and {} were taken in different workspaces ({ws} and {other}); compare each with its workspace now: `agent-min checkpoints diff {} N`",
            m.unwrap_or_default(),
            record.meta.id
        ));
    }
    let shadow = open(dir, record, first)?;
    let _held = shadow.lock()?;
    let bytes = shadow.diff(&from, to.as_deref())?;
    // The diff quotes files the model wrote: control characters are shown escaped.
    let text = String::from_utf8_lossy(&bytes);
    let _ = std::io::stdout().lock().write_all(visible(&text).as_bytes());
    Ok(())
}

fn restore_cmd(store: &Store, dir: &Path, record: Record, n: u32, what: What, yes: bool) -> Result<(), String> {
    // A process running the task would save its conversation over the restored one, and go
    // on from files it no longer has.
    let _held = store.claim(&record.meta.id).map_err(|busy| busy.refusal("restoring"))?;
    let cp = find(&record, n)?.clone();
    let shadow = open(dir, &record, &cp)?;
    let when = match cp.tool.as_str() {
        "start" => "before the run's first edit or command".to_string(),
        "restore" => "before a restore".to_string(),
        tool => format!("after {tool}"),
    };
    let mut plan = format!(
        "Restore task {} to checkpoint {n} (turn {}, {when}, {}):\n",
        record.meta.id,
        cp.turn,
        format_utc(cp.time)
    );
    if what.files() {
        let (mut changes, mut new, left_out) = {
            let _held = shadow.lock()?;
            let left_out = shadow.kept_by_restore(&cp.hash, &cp.left_out)?;
            (shadow.changes(&cp.hash, None)?, shadow.created_since_last()?, left_out)
        };
        // Created since the last checkpoint and not in N, or left out of N: left alone (Cline's
        // `reset --hard` leaves what it does not track).
        new.extend(left_out.iter().cloned());
        let (kept, _): (Vec<_>, Vec<_>) = changes.iter().partition(|(s, p)| *s == 'A' && new.contains(p));
        let kept: Vec<String> = kept.into_iter().map(|(_, p)| p.clone()).collect();
        changes.retain(|(s, p)| !(*s == 'A' && new.contains(p)));
        plan.push_str(&format!("  files in {}: {} would change\n", cp.workspace(&record.meta.cwd), changes.len()));
        for (status, path) in changes.iter().take(30) {
            // `changes` lists N → now; restoring goes the other way.
            let verb = match status {
                'A' => "delete ",
                'D' => "restore",
                _ => "revert ",
            };
            plan.push_str(&format!("    {verb} {path}\n"));
        }
        if changes.len() > 30 {
            plan.push_str(&format!("    … and {} more\n", changes.len() - 30));
        }
        if !kept.is_empty() {
            let why = if left_out.is_empty() {
                "created since the last checkpoint"
            } else {
                "created since the last checkpoint, left out of this one, or not known to it: it holds only the files an edit wrote"
            };
            plan.push_str(&format!("  left as they are ({why}): {}\n", first_ten(&kept)));
        }
    }
    if what.task() {
        plan.push_str(&format!(
            "  conversation: from {} to {} messages{}; `agent-min resume {}` continues from there\n",
            record.messages.len(),
            restore::length_at(&record, &cp),
            if cp.cuts < record.cuts.len() as u32 { " (as it was before the context window's cut)" } else { "" },
            record.meta.id
        ));
        let changed = if what.files() { Vec::new() } else { restore::changed_after(&record, &cp) };
        if !changed.is_empty() {
            plan.push_str(&format!(
                "  files changed since, which `resume` tells the model to read again: {}\n",
                first_ten(&changed)
            ));
        }
    }
    eprint!("{}", visible(&plan));
    if !yes && !confirm()? {
        return Err("not restored".into());
    }
    let id = record.meta.id.clone();
    let done = restore::restore(store, &shadow, record, &cp, what)?;
    eprintln!("Restored checkpoint {n} of task {id}.");
    if let Some(undo) = done.undo_files {
        eprintln!("The files as they were are checkpoint {undo}: `agent-min checkpoints restore {id} {undo} --files` undoes this.");
    }
    if let Some(copy) = done.undo_task {
        eprintln!("The conversation as it was is kept in {}.", copy.display());
    }
    Ok(())
}

/// Asks on the terminal (or reads a line from stdin): only `y`/`yes` restores.
fn confirm() -> Result<bool, String> {
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        eprintln!("Restore? [y/N] (reading the answer from stdin; pass --yes to skip)");
    } else {
        eprint!("Restore? [y/N] ");
    }
    let mut line = String::new();
    stdin.lock().read_line(&mut line).map_err(|e| format!("cannot read the answer ({e})"))?;
    Ok(matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
}

/// The first ten of `paths`, and how many more there are.
fn first_ten(paths: &[String]) -> String {
    let shown: Vec<&str> = paths.iter().take(10).map(String::as_str).collect();
    let more = if paths.len() > 10 { format!(" and {} more", paths.len() - 10) } else { String::new() };
    format!("{}{more}", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    #[test]
    fn ids_numbers_and_choices_are_told_apart() {
        let a = parse(args(&["restore", "20250102-030405", "3", "--files", "--yes"])).unwrap();
        assert_eq!(
            (a.id.as_deref(), a.numbers.as_slice(), a.what, a.yes),
            (Some("20250102-030405"), &[3][..], Some(What::Files), true)
        );
        let a = parse(args(&["diff", "--last", "2", "5"])).unwrap();
        assert_eq!((a.id, a.numbers), (None, vec![2, 5]));
        let a = parse(args(&["diff", "4"])).unwrap();
        assert_eq!((a.id, a.numbers), (None, vec![4]));
        assert!(parse(args(&["list", "20250102"])).unwrap().id.is_some(), "8 digits are an id prefix");
    }

    #[test]
    fn mistakes_are_named() {
        assert!(parse(args(&["restore", "--last"])).unwrap_err().contains("one checkpoint number"));
        assert!(parse(args(&["restore", "1", "--files", "--task"])).unwrap_err().contains("one of"));
        assert!(parse(args(&["diff", "x-y"])).unwrap_err().contains("N [M]"));
        assert!(parse(args(&["undo"])).unwrap_err().contains("unknown command"));
        assert!(parse(args(&["list", "--files"])).unwrap_err().contains("for `restore`"));
        assert!(parse(args(&[])).unwrap_err().contains("which command"));
    }
}
