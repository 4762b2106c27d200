//! Checkpoints (Cline's `CheckpointTracker`): every turn's workspace saved in a
//! shadow git repository outside it, listed, compared and restored.
//!
//! Owns: the shadow repository ([`shadow`]: create, repair, stage, commit, diff, restore), how
//! git is run (`git`: clean environment, time and output bounds), what is left out
//! (`exclusions`; the person's global gitignore, `global_ignore`), where the repository lives and which workspaces are refused ([`place`]),
//! the cross-process lock ([`lock`]), nested repositories (`nested`), the checkpoints of a
//! run (`tracker`, called from `task.rs`), and restoring one (`restore`; the
//! `agent-min checkpoints` command is `crate::checkpoints_cmd`).
//!
//! May use: [`crate::run::session`] (the saved task and its checkpoint records, events),
//! [`crate::run::llm`] (message roles), [`crate::run::ui`] (terminal, interrupts),
//! `crate::run::clock`, `crate::run::places` (the home directory), `crate::run::spawn` (how git is started),
//! `crate::run::tools::registry` (which tools change files), `crate::run::built` (what a
//! build without checkpoints says), `crate::run::prompt` (the file alert an unsent resume
//! message holds), `crate::run::trusted_file` (reading a small file without blocking). Nothing here runs git in
//! the user's own repository, or with the user's git configuration or hooks.

pub(crate) mod exclusions;
pub(crate) mod git;
pub(crate) mod global_ignore;
pub mod lock;
pub(crate) mod nested;
pub mod place;
pub(crate) mod restore;
pub mod shadow;
pub(crate) mod tracker;

pub(crate) use tracker::At;
pub use tracker::Tracker;

/// Whether this build takes checkpoints (the cargo feature `checkpoints`). Without it a run
/// takes none and says so once, at its first edit or command; `agent-min checkpoints` refuses.
/// Every way to the shadow repository starts with this test, so the optimizer leaves it out.
pub(crate) const BUILT_IN: bool = cfg!(feature = "checkpoints");

/// Reads a text file of at most `cap` bytes (regular files only, opened without blocking and
/// judged on the open file: a FIFO a command swapped in after a check by path would block the
/// agent forever), decoded lossily as node's `fs.readFile(path, "utf8")` does in Cline: one
/// stray byte does not lose the whole file.
pub(crate) fn read_small(path: &std::path::Path, cap: u64) -> std::io::Result<String> {
    let bytes = crate::run::trusted_file::read(path, crate::run::trusted_file::Links::Follow, cap)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
