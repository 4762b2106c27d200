//! Checkpoints during a run (Cline's `CheckpointTracker` as `Task` uses it): when the task
//! starts, the shadow repository is opened and the initial `start` checkpoint taken in the
//! background — Cline's `initialCheckpointCommitPromise` — while the model works on its first
//! reply; read-only tools never wait for it, the first edit or command does. Then one after
//! each reply whose calls may have changed files, when they have all run. Each is tagged with the task id and turn in its
//! commit message, recorded in the saved task (so `resume` continues the series), shown in one
//! dim line and sent as a `checkpoint` event. Failures never stop the task: they are one
//! warning (checkpoints then off for the run when the repository cannot be opened at all).
//!
//! A reply of edits has a checkpoint that looks only at the paths they wrote, so it costs the
//! change, not the workspace; the whole workspace is scanned again after anything else that may have changed
//! files (a command, an MCP tool, any tool not known to only read, a failed checkpoint).

use std::path::PathBuf;
use std::thread::JoinHandle;

use super::place;
use super::shadow::{Scope, Shadow, Taken};
use crate::run::session::events::Events;
use crate::run::session::state::{now_secs, CheckpointRecord};
use crate::run::ui::term::Term;

/// Files recorded per checkpoint in the saved task (the count is always exact).
const MAX_FILES_RECORDED: usize = 50;

/// Whether `tool` may change files (Cline's checkpointed tools): its declaration says so.
pub(crate) fn changes_files(tool: &str) -> bool {
    crate::run::tools::registry::mutates(tool)
}

/// Tools known to change no file: after them an edit's checkpoint may still look at the
/// paths it wrote only. Anything else makes the next checkpoint scan the whole workspace.
fn reads_only(tool: &str) -> bool {
    matches!(
        tool,
        "read_file"
            | "list_files"
            | "search_files"
            | "list_code_definition_names"
            | "ask_followup_question"
            | "attempt_completion"
            | "plan_mode_respond"
            | "access_mcp_resource"
            | "load_mcp_documentation"
    )
}

/// The background start: the opened repository and the initial checkpoint, or why not.
type Opening = JoinHandle<Result<(Shadow, Result<Taken, String>), String>>;

enum Repo {
    Off,
    /// Not opened yet: the state directory, the workspace and the start checkpoint's message
    /// ([`Tracker::begin`] opens it).
    Pending(PathBuf, PathBuf, String),
    /// Being opened, the initial checkpoint being taken.
    Opening(Opening),
    On(Shadow),
}

/// The checkpoints of one task during one run.
pub struct Tracker {
    repo: Repo,
    task_id: String,
    records: Vec<CheckpointRecord>,
    /// This run's `start` checkpoint has been recorded (or was not needed).
    started: bool,
    /// Something may have changed files the index does not know of yet: the next checkpoint
    /// scans the whole workspace.
    scan_due: bool,
    /// Built without checkpoints: say so at the first tool that changes files.
    not_built: bool,
    /// What the reply's calls so far may have changed: its checkpoint is due.
    due: Option<Due>,
}

/// What a reply's calls may have changed: the tools, in order, and every path they wrote when
/// that is all they can have changed (`None`: the whole workspace is looked at).
struct Due {
    tools: Vec<String>,
    wrote: Option<Vec<PathBuf>>,
}

/// Where the conversation is when a checkpoint may be taken: what a task restore to it puts
/// back.
#[derive(Debug, Clone, Copy)]
pub(crate) struct At {
    /// The conversation's length, the reply asking for the tool included.
    pub messages: usize,
    /// How many cuts of the context window it has been through (a task restore to the
    /// checkpoint undoes the later ones).
    pub cuts: u32,
}

impl Tracker {
    /// No checkpoints (`--no-checkpoints`, `--no-save`, replays).
    pub fn off() -> Tracker {
        Tracker {
            repo: Repo::Off,
            task_id: String::new(),
            records: Vec::new(),
            started: true,
            scan_due: true,
            not_built: false,
            due: None,
        }
    }

    /// Checkpoints of `workspace` in `STATE_DIR/checkpoints/`, for task `task_id`; the
    /// repository is opened and the initial checkpoint taken in the background from
    /// [`Tracker::begin`] on.
    pub(crate) fn new(state_dir: PathBuf, workspace: PathBuf, task_id: &str) -> Tracker {
        if !super::BUILT_IN {
            let mut off = Tracker::off();
            off.not_built = true;
            return off;
        }
        let message = format!("checkpoint-{}-{task_id} start", place::cwd_hash(&workspace));
        Tracker {
            repo: Repo::Pending(state_dir, workspace, message),
            task_id: task_id.to_string(),
            records: Vec::new(),
            started: false,
            scan_due: false,
            not_built: false,
            due: None,
        }
    }

    /// Starts opening the repository and taking the initial checkpoint, in the background — as
    /// Cline at the task's first request, after its TaskStart (or TaskResume) and
    /// UserPromptSubmit hooks: while the checkpoint is taken, nested repositories' `.git` are
    /// renamed away, and a hook must not see that. Later calls do nothing.
    pub(crate) fn begin(&mut self) {
        // (A constant: without the feature nothing is pending, and the shadow repository's code
        // stays out of the build.)
        if !super::BUILT_IN || !matches!(self.repo, Repo::Pending(..)) {
            return;
        }
        let Repo::Pending(state_dir, workspace, message) = std::mem::replace(&mut self.repo, Repo::Off) else {
            return;
        };
        let opening = std::thread::spawn(move || {
            let shadow = Shadow::open(&state_dir, &workspace)?;
            let taken = shadow
                .lock()
                .and_then(|_held| shadow.snapshot(&message, None, false))
                .and_then(|t| t.ok_or_else(|| "nothing was committed".to_string()));
            // git's housekeeping, when due: on a thread no tool waits for.
            std::thread::spawn(shadow.tidy());
            Ok((shadow, taken))
        });
        self.repo = Repo::Opening(opening);
    }

    /// Continues the series of a resumed task.
    pub(crate) fn resume(&mut self, saved: Vec<CheckpointRecord>) {
        self.records = saved;
    }

    /// The conversation went back to `at` (an editor's refused prompt), when the task had
    /// `kept` checkpoints: those taken since keep their files but restore the conversation no
    /// further than `at` (an earlier one may name more messages, from before a cut: it stays).
    pub(crate) fn roll_back(&mut self, kept: usize, at: At) {
        for r in self.records.iter_mut().skip(kept) {
            (r.messages, r.cuts) = (at.messages as u32, at.cuts);
        }
    }

    /// The task's checkpoints so far (saved with the task).
    pub(crate) fn records(&self) -> &[CheckpointRecord] {
        &self.records
    }

    /// Before a tool runs (and its PreToolUse hook): if it is not known to read only (an edit,
    /// a command, an MCP server's tool) and is the run's first such tool, waits for the initial
    /// checkpoint and records it — Cline waits for it before every tool but its `READ_ONLY_TOOLS`.
    pub(crate) fn before(&mut self, tool: &str, turn: u32, at: At, term: &mut Term, events: &mut Events) {
        if !changes_files(tool) && reads_only(tool) {
            return;
        }
        if !super::BUILT_IN {
            if std::mem::take(&mut self.not_built) {
                term.info(&format!(
                    "  no checkpoints: {}",
                    crate::run::built::not_built_in("checkpoints", "checkpoints")
                ));
            }
            return;
        }
        if self.started {
            return;
        }
        self.started = true;
        let Some(taken) = self.wait(term) else { return };
        let Repo::On(shadow) = &self.repo else { return };
        // A resumed run's start is only recorded if the workspace changed since the series'
        // last checkpoint, and counts the files changed since then.
        let taken = match self.records.last() {
            None => Some(taken),
            Some(last) => match shadow.changed_between(&last.hash, &taken.hash) {
                Ok(files) if files.is_empty() => None,
                Ok(files) => Some(Taken { files, ..taken }),
                Err(_) => Some(taken),
            },
        };
        if let Some(t) = taken {
            // Restoring the task to this point resends the request that asked for the tool.
            let at = At { messages: at.messages.saturating_sub(1), ..at };
            self.record(t, "start", turn, at, term, events);
        }
    }

    /// A tool of the reply ran. If it may have changed files, the reply's checkpoint
    /// ([`Tracker::after_reply`]) is due; `wrote`: the one path it wrote, when that is all it can
    /// have changed (an edit tool, no hook), else `None` (the whole workspace is looked at).
    pub(crate) fn ran(&mut self, tool: &str, wrote: Option<PathBuf>) {
        if reads_only(tool) {
            return;
        }
        // A tool that may change files unseen (an MCP server's) is covered by a checkpoint of
        // the whole workspace, as a command is: a run that changed files only through MCP had none.
        let wrote = if changes_files(tool) { wrote } else { None };
        let due = self.due.get_or_insert_with(|| Due { tools: Vec::new(), wrote: Some(Vec::new()) });
        if !due.tools.iter().any(|t| t == tool) {
            due.tools.push(tool.to_string());
        }
        match (wrote, &mut due.wrote) {
            (Some(path), Some(paths)) => paths.push(path),
            _ => due.wrote = None,
        }
    }

    /// After a reply's calls have all run: its checkpoint, if one of them may have changed
    /// files (Cline: "Save checkpoint after all tools in this response have finished
    /// executing"). One per reply, so a restore never undoes part of what the results the model
    /// reads next say was done.
    pub(crate) fn after_reply(&mut self, turn: u32, at: At, term: &mut Term, events: &mut Events) {
        let Some(due) = self.due.take() else { return };
        if !super::BUILT_IN {
            return;
        }
        let tool = due.tools.join(", ");
        let _ = self.wait(term);
        let Repo::On(shadow) = &self.repo else { return };
        let message = format!("checkpoint-{}-{} turn {turn} {tool}", place::cwd_hash(shadow.workspace()), self.task_id);
        let since = self.records.last().map(|r| r.hash.as_str());
        let scope = match &due.wrote {
            Some(paths) if !self.scan_due => Scope::Paths(paths),
            _ => Scope::All,
        };
        let taken = shadow.lock().and_then(|_held| shadow.snapshot_of(scope, &message, since, false));
        self.scan_due = taken.is_err();
        match taken {
            Ok(Some(t)) => self.record(t, &tool, turn, at, term, events),
            Ok(None) => {}
            Err(e) => term.warn(&format!("Checkpoint after {tool} failed: {e}. The task goes on.")),
        }
    }

    /// Waits for the background start; its checkpoint, if it was taken.
    fn wait(&mut self, term: &mut Term) -> Option<Taken> {
        self.begin();
        if !matches!(self.repo, Repo::Opening(_)) {
            return None;
        }
        let Repo::Opening(handle) = std::mem::replace(&mut self.repo, Repo::Off) else { return None };
        let joined = handle.join().unwrap_or_else(|_| Err("the checkpoint thread panicked".to_string()));
        match joined {
            Ok((shadow, taken)) => {
                self.repo = Repo::On(shadow);
                match taken {
                    Ok(t) => Some(t),
                    Err(e) => {
                        self.scan_due = true;
                        term.warn(&format!("The initial checkpoint failed: {e}. The task goes on."));
                        None
                    }
                }
            }
            Err(e) => {
                term.warn(&format!("Checkpoints are off for this run: {e}. The task goes on without them."));
                None
            }
        }
    }

    fn record(&mut self, t: Taken, tool: &str, turn: u32, at: At, term: &mut Term, events: &mut Events) {
        let number = self.records.last().map_or(1, |r| r.number + 1);
        let files_changed = t.files.len() as u32;
        let what = if tool == "start" { "the workspace before the run's first edit" } else { "after the tool" };
        term.info(&format!("  checkpoint {number} ({what}): {} changed", crate::run::ui::count(files_changed, "file")));
        if !t.left_out.is_empty() {
            term.warn(&format!("  checkpoint {number} left out: {}", t.left_out.join(", ")));
        }
        events.checkpoint(turn, number, &t.hash, tool, files_changed);
        self.records.push(CheckpointRecord {
            number,
            turn,
            hash: t.hash,
            time: now_secs(),
            tool: tool.to_string(),
            files_changed,
            files: t.files.into_iter().take(MAX_FILES_RECORDED).collect(),
            left_out: t.left_out.into_iter().take(MAX_FILES_RECORDED).collect(),
            messages: at.messages as u32,
            cuts: at.cuts,
            workspace: None,
        });
    }
}

#[cfg(all(test, not(feature = "checkpoints")))]
mod not_built_in {
    use super::*;

    #[test]
    fn without_the_feature_no_checkpoint_is_taken_and_the_run_is_told_once() {
        let (state, ws) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::write(ws.path().join("a.txt"), "a").unwrap();
        let mut t = Tracker::new(state.path().to_path_buf(), ws.path().to_path_buf(), "t1");
        let buf = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        struct W(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
        impl std::io::Write for W {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut term = Term::to_writer(Box::new(W(buf.clone())));
        let mut events = Events::off();
        for turn in 1..3 {
            let at = At { messages: 2, cuts: 0 };
            t.before("write_to_file", turn, at, &mut term, &mut events);
            t.ran("write_to_file", None);
            t.after_reply(turn, at, &mut term, &mut events);
        }
        let said = String::from_utf8(buf.lock().unwrap().clone()).unwrap();
        assert_eq!(said.matches("`checkpoints`").count(), 1, "{said}");
        assert!(t.records().is_empty());
        assert_eq!(std::fs::read_dir(state.path()).unwrap().count(), 0, "nothing written in the state directory");
    }
}

impl Drop for Tracker {
    /// A task that ended before its first edit still lets the initial checkpoint finish (its
    /// git must not outlive the lock).
    fn drop(&mut self) {
        if let Repo::Opening(handle) = std::mem::replace(&mut self.repo, Repo::Off) {
            let _ = handle.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// After an editor's refused prompt, a checkpoint taken during it restores the
    /// conversation no further than where it went back to.
    #[test]
    fn a_roll_back_caps_the_later_checkpoints_conversation() {
        let record = |number: u32, messages: u32, cuts: u32| CheckpointRecord {
            number,
            turn: number,
            hash: String::new(),
            time: 0,
            tool: "write_to_file".into(),
            files_changed: 1,
            files: Vec::new(),
            left_out: Vec::new(),
            messages,
            cuts,
            workspace: None,
        };
        let mut t = Tracker::off();
        // The first was taken before a cut: it names more messages than there are now.
        t.resume(vec![record(1, 20, 0), record(2, 6, 1), record(3, 8, 2)]);
        t.roll_back(1, At { messages: 4, cuts: 1 });
        let kept: Vec<(u32, u32)> = t.records().iter().map(|r| (r.messages, r.cuts)).collect();
        assert_eq!(kept, [(20, 0), (4, 1), (4, 1)]);
    }
}
