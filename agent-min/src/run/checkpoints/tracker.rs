//! Checkpoints during a run (Cline's `CheckpointTracker` as `Task` uses it): the shadow
//! repository is opened at the first edit or command — read-only tools never wait for it — and
//! a `start` checkpoint is taken before that tool runs (Cline's initial checkpoint); then one
//! after every tool that may have changed files. Each is tagged with the task id and turn in
//! its commit message, recorded in the saved task (so `resume` continues the series), shown in
//! one dim line and sent as a `checkpoint` event. Failures never stop the task: they are one
//! warning (checkpoints then off for the run when the repository cannot be opened at all).

use std::path::PathBuf;

use super::place;
use super::shadow::{Shadow, Taken};
use crate::run::session::events::Events;
use crate::run::session::state::{now_secs, CheckpointRecord};
use crate::run::ui::term::Term;

/// Files recorded per checkpoint in the saved task (the count is always exact).
const MAX_FILES_RECORDED: usize = 50;

/// Whether `tool` may change files (Cline's checkpointed tools).
pub fn changes_files(tool: &str) -> bool {
    matches!(tool, "write_to_file" | "replace_in_file" | "execute_command")
}

enum Repo {
    Off,
    /// Not opened yet: where it will be.
    Later {
        state_dir: PathBuf,
        workspace: PathBuf,
    },
    On(Shadow),
}

/// The checkpoints of one task during one run.
pub struct Tracker {
    repo: Repo,
    task_id: String,
    records: Vec<CheckpointRecord>,
    /// This run's `start` checkpoint has been taken (or was not needed).
    started: bool,
}

impl Tracker {
    /// No checkpoints (`--no-checkpoints`, `--no-save`, replays).
    pub fn off() -> Tracker {
        Tracker { repo: Repo::Off, task_id: String::new(), records: Vec::new(), started: true }
    }

    /// Checkpoints of `workspace` in `STATE_DIR/checkpoints/`, for task `task_id`.
    pub fn new(state_dir: PathBuf, workspace: PathBuf, task_id: &str) -> Tracker {
        Tracker {
            repo: Repo::Later { state_dir, workspace },
            task_id: task_id.to_string(),
            records: Vec::new(),
            started: false,
        }
    }

    /// Continues the series of a resumed task.
    pub fn resume(&mut self, saved: Vec<CheckpointRecord>) {
        self.records = saved;
    }

    /// The task's checkpoints so far (saved with the task).
    pub fn records(&self) -> &[CheckpointRecord] {
        &self.records
    }

    /// Before a tool runs: the run's `start` checkpoint, if `tool` is its first that may change
    /// files. `messages` is the conversation's length, the reply asking for `tool` included.
    pub fn before(&mut self, tool: &str, turn: u32, messages: usize, term: &mut Term, events: &mut Events) {
        if self.started || !changes_files(tool) {
            return;
        }
        self.started = true;
        // Restoring the task to this point resends the request that asked for the tool.
        self.take("start", turn, messages.saturating_sub(1), term, events);
    }

    /// After a tool ran: a checkpoint if it may have changed files.
    pub fn after(&mut self, tool: &str, turn: u32, messages: usize, term: &mut Term, events: &mut Events) {
        if changes_files(tool) && !matches!(self.repo, Repo::Off) {
            self.take(tool, turn, messages, term, events);
        }
    }

    fn shadow(&mut self, term: &mut Term) -> Option<&Shadow> {
        if let Repo::Later { state_dir, workspace } = &self.repo {
            self.repo = match Shadow::open(state_dir, workspace) {
                Ok(s) => Repo::On(s),
                Err(e) => {
                    term.warn(&format!("Checkpoints are off for this run: {e}. The task goes on without them."));
                    Repo::Off
                }
            };
        }
        match &self.repo {
            Repo::On(s) => Some(s),
            _ => None,
        }
    }

    fn take(&mut self, tool: &str, turn: u32, messages: usize, term: &mut Term, events: &mut Events) {
        // A run's start adds nothing when the workspace is as the series' last checkpoint left it.
        let skip_unchanged = tool == "start" && !self.records.is_empty();
        let since = self.records.last().map(|r| r.hash.clone());
        let task_id = self.task_id.clone();
        let Some(shadow) = self.shadow(term) else { return };
        let hash = place::cwd_hash(shadow.workspace());
        let message = format!("checkpoint-{hash}-{task_id} turn {turn} {tool}");
        let taken = shadow.lock().and_then(|_held| shadow.snapshot(&message, since.as_deref(), skip_unchanged));
        match taken {
            Ok(Some(t)) => self.record(t, tool, turn, messages, term, events),
            Ok(None) => {}
            Err(e) => term.warn(&format!("Checkpoint after {tool} failed: {e}. The task goes on.")),
        }
    }

    fn record(&mut self, t: Taken, tool: &str, turn: u32, messages: usize, term: &mut Term, events: &mut Events) {
        let number = self.records.last().map_or(1, |r| r.number + 1);
        let files_changed = t.files.len() as u32;
        term.info(&format!("  checkpoint {number}: {files_changed} file(s) changed"));
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
            messages: messages as u32,
        });
    }
}
