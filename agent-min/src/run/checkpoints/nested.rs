//! Nested git repositories inside the workspace, handled as Cline handles them: while a
//! checkpoint is taken or restored, each nested `.git` directory is renamed `.git_disabled`, so
//! the shadow repository tracks the nested project's files instead of a gitlink, then renamed
//! back. Unlike Cline (which renames back every `.git_disabled` it finds), the renames are first
//! written to a journal, so after a `kill -9` the next run puts back exactly those — and never a
//! `.git_disabled` directory of the user's own. A submodule's or worktree's `.git` *file* (or a
//! `.git` symlink) is disabled the same way: git would otherwise store a gitlink for the
//! folder and none of its files, silently.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::exclusions::GIT_DISABLED_SUFFIX;

/// Most directory entries looked at when searching for nested repositories.
const MAX_ENTRIES: usize = 2_000_000;

/// Nested `.git` entries — directories, and the files or symlinks of submodules and worktrees —
/// not the workspace's own, skipping `node_modules` as Cline does, and `shadows` (the state
/// directory's `checkpoints`: its shadow repositories are not projects), never following
/// symlinks.
pub(crate) fn find(workspace: &Path, shadows: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![workspace.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return found;
            }
            let Ok(ty) = e.file_type() else { continue };
            let name = e.file_name();
            if name == ".git" {
                if dir != workspace {
                    found.push(e.path());
                }
                continue;
            }
            if !ty.is_dir() {
                continue;
            }
            let path = e.path();
            if name != "node_modules"
                && !name.to_string_lossy().ends_with(&format!(".git{GIT_DISABLED_SUFFIX}"))
                && path != shadows
            {
                stack.push(path);
            }
        }
    }
    found
}

/// The nested repositories disabled for one operation; enabled again when dropped.
pub(crate) struct Disabled {
    journal: PathBuf,
    renamed: Vec<PathBuf>,
    /// Each rename is also undone by a Ctrl-C (the journal covers `kill -9`).
    _on_interrupt: Vec<crate::run::ui::interrupt::Guard>,
}

fn disabled_name(git: &Path) -> PathBuf {
    let mut s = git.as_os_str().to_owned();
    s.push(GIT_DISABLED_SUFFIX);
    PathBuf::from(s)
}

/// Renames every nested `.git` to `.git_disabled`, journalled in `journal` first.
pub(crate) fn disable(workspace: &Path, shadows: &Path, journal: &Path) -> Result<Disabled, String> {
    let nested: Vec<PathBuf> = find(workspace, shadows).into_iter().filter(|g| !present(&disabled_name(g))).collect();
    if !nested.is_empty() {
        let text: String = nested.iter().map(|p| format!("{}\0", p.display())).collect();
        let write = || -> std::io::Result<()> {
            let mut f = fs::File::create(journal)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()
        };
        write().map_err(|e| format!("cannot write {} ({e})", journal.display()))?;
    }
    let mut done = Disabled { journal: journal.to_path_buf(), renamed: Vec::new(), _on_interrupt: Vec::new() };
    for git in nested {
        done._on_interrupt.push(crate::run::ui::interrupt::track_rename(disabled_name(&git), git.clone()));
        fs::rename(&git, disabled_name(&git))
            .map_err(|e| format!("cannot disable the nested repository {} ({e})", git.display()))?;
        done.renamed.push(git);
    }
    Ok(done)
}

impl Drop for Disabled {
    fn drop(&mut self) {
        for git in &self.renamed {
            let _ = fs::rename(disabled_name(git), git);
        }
        if self.renamed.iter().all(|g| present(g)) {
            let _ = fs::remove_file(&self.journal);
        }
    }
}

/// Whether something (a directory, file or symlink, even dangling) is at `p`.
fn present(p: &Path) -> bool {
    fs::symlink_metadata(p).is_ok()
}

/// After a crash: renames back what `journal` lists (where the `.git` is still missing).
/// Returns how many were put back.
pub(crate) fn repair(journal: &Path) -> Result<usize, String> {
    let Ok(text) = fs::read(journal) else { return Ok(0) };
    let mut n = 0;
    for entry in text.split(|b| *b == 0).filter(|e| !e.is_empty()) {
        use std::os::unix::ffi::OsStrExt;
        let git = PathBuf::from(std::ffi::OsStr::from_bytes(entry));
        let off = disabled_name(&git);
        if !present(&git) && present(&off) {
            fs::rename(&off, &git)
                .map_err(|e| format!("cannot re-enable the nested repository {} ({e})", git.display()))?;
            n += 1;
        }
    }
    fs::remove_file(journal).map_err(|e| format!("cannot remove {} ({e})", journal.display()))?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_repos_are_disabled_then_put_back_and_a_crash_is_repaired() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        for dir in [".git", "lib/.git/objects", "node_modules/x/.git", "own/.git_disabled"] {
            fs::create_dir_all(ws.join(dir)).unwrap();
        }
        let journal = d.path().join("journal");
        assert_eq!(find(&ws, Path::new("/nonexistent")), vec![ws.join("lib/.git")]);
        let guard = disable(&ws, Path::new("/nonexistent"), &journal).unwrap();
        assert!(!ws.join("lib/.git").exists() && ws.join("lib/.git_disabled/objects").is_dir());
        assert!(ws.join(".git").is_dir(), "the workspace's own .git is never touched");
        // A crash now: the guard never runs; the journal says what to put back.
        std::mem::forget(guard);
        assert_eq!(repair(&journal).unwrap(), 1);
        assert!(ws.join("lib/.git/objects").is_dir());
        assert!(ws.join("own/.git_disabled").is_dir(), "a .git_disabled of the user's own stays");
        assert!(!journal.exists());
        // The normal path: dropped, everything is back and the journal gone.
        drop(disable(&ws, Path::new("/nonexistent"), &journal).unwrap());
        assert!(ws.join("lib/.git").is_dir() && !journal.exists());
    }
}
