//! Where the person's own settings live outside any project: the home directory and Cline's
//! home folder. What is read from them is trusted, so what is guarded from commands
//! (`run::trusted_places`) is found by the same functions.

use std::path::PathBuf;

/// The home directory, from `$HOME`.
pub(crate) fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// Cline's home folder, where its CLI keeps global rules, workflows, hooks and settings
/// (`resolveClineDir` in the SDK's `storage/paths.ts`): `$CLINE_DIR` when set (absolute here:
/// a relative one would be read from the workspace), else `~/.cline`.
pub(crate) fn cline_dir() -> Option<PathBuf> {
    let set = std::env::var_os("CLINE_DIR").map(PathBuf::from).filter(|d| d.is_absolute());
    set.or_else(|| Some(home_dir()?.join(".cline")))
}
