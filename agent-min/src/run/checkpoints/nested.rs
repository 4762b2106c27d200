//! Nested git repositories inside the workspace, handled as Cline handles them: while a
//! checkpoint is taken or restored, each nested `.git` directory is renamed `.git_disabled`, so
//! the shadow repository tracks the nested project's files instead of a gitlink, then renamed
//! back. Unlike Cline (which renames back every `.git_disabled` it finds), the renames are first
//! written to a journal, so after a `kill -9` the next run puts back exactly those — and never a
//! `.git_disabled` directory of the user's own. A submodule's or worktree's `.git` *file* (or a
//! `.git` symlink) is disabled the same way: git would otherwise store a gitlink for the
//! folder and none of its files, silently.

use std::ffi::OsString;
use std::fs;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{self as rfs, Mode, OFlags};

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
    /// Each rename is also undone by a Ctrl-C (the journal covers `kill -9`); unregistered
    /// before the folders below are closed.
    _on_interrupt: Vec<crate::run::ui::interrupt::Guard>,
    /// The folder each `.git` was renamed in, held open, and the `.git`'s path.
    renamed: Vec<(Arc<OwnedFd>, PathBuf)>,
}

fn disabled_name(git: &Path) -> PathBuf {
    let mut s = git.as_os_str().to_owned();
    s.push(GIT_DISABLED_SUFFIX);
    PathBuf::from(s)
}

/// `.git` and `.git_disabled`, the names renamed in the folder.
fn names() -> (OsString, OsString) {
    (".git".into(), format!(".git{GIT_DISABLED_SUFFIX}").into())
}

/// The folder holding `git` (absolute, canonical, as [`find`] returns it), opened from `/` one
/// component at a time without following a link. The renames happen in that open folder, not
/// by path: a command (a daemon left running) could swap a folder on the way for a link to
/// the workspace between [`find`] and the rename, which would then disable the workspace's own
/// `.git` — and with its protection gone, a later command could plant a `core.fsmonitor` that
/// the person's next `git status` runs; or swap it back before the rename back.
fn open_folder_of(git: &Path) -> std::io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut dir = rfs::open("/", flags, Mode::empty())?;
    for c in git.parent().unwrap_or(Path::new("/")).components() {
        match c {
            Component::Normal(part) => dir = rfs::openat(&dir, part, flags, Mode::empty())?,
            Component::RootDir => {}
            _ => return Err(std::io::Error::other("not a canonical path")),
        }
    }
    Ok(dir)
}

/// Renames every nested `.git` to `.git_disabled`, journalled in `journal` first.
pub(crate) fn disable(workspace: &Path, shadows: &Path, journal: &Path) -> Result<Disabled, String> {
    let nested: Vec<PathBuf> = find(workspace, shadows).into_iter().filter(|g| !present(&disabled_name(g))).collect();
    disable_found(nested, journal)
}

/// Renames the `.git` entries [`find`] found, journalled in `journal` first.
fn disable_found(nested: Vec<PathBuf>, journal: &Path) -> Result<Disabled, String> {
    if !nested.is_empty() {
        // The paths' bytes: `display` wrote a name that is not UTF-8 mangled, and `repair` then
        // found no such folder and left its `.git` disabled for good.
        use std::os::unix::ffi::OsStrExt;
        let text: Vec<u8> = nested.iter().flat_map(|p| [p.as_os_str().as_bytes(), b"\0"].concat()).collect();
        let write = || -> std::io::Result<()> {
            let mut f = fs::File::create(journal)?;
            f.write_all(&text)?;
            f.sync_all()
        };
        write().map_err(|e| format!("cannot write {} ({e})", journal.display()))?;
    }
    let mut done = Disabled { journal: journal.to_path_buf(), renamed: Vec::new(), _on_interrupt: Vec::new() };
    let (git_name, off_name) = names();
    for git in nested {
        let cannot =
            |e: &dyn std::fmt::Display| format!("cannot disable the nested repository {} ({e})", git.display());
        let dir = Arc::new(open_folder_of(&git).map_err(|e| cannot(&e))?);
        let guard = crate::run::ui::interrupt::track_rename(dir.clone(), off_name.clone(), git_name.clone());
        done._on_interrupt.push(guard);
        rfs::renameat(&*dir, &git_name, &*dir, &off_name).map_err(|e| cannot(&e))?;
        done.renamed.push((dir, git));
    }
    Ok(done)
}

impl Drop for Disabled {
    fn drop(&mut self) {
        let (git_name, off_name) = names();
        let mut all_back = true;
        for (dir, _) in &self.renamed {
            let _ = rfs::renameat(&**dir, &off_name, &**dir, &git_name);
            all_back &= rfs::statat(&**dir, &git_name, rfs::AtFlags::SYMLINK_NOFOLLOW).is_ok();
        }
        if all_back {
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
        let cannot =
            |e: &dyn std::fmt::Display| format!("cannot re-enable the nested repository {} ({e})", git.display());
        // The folder as it is now, reached without following a link: gone or swapped for one,
        // there is nothing of ours to put back there.
        let Ok(dir) = open_folder_of(&git) else { continue };
        let (git_name, off_name) = names();
        let at = |name: &OsString| rfs::statat(&dir, name, rfs::AtFlags::SYMLINK_NOFOLLOW).is_ok();
        if !at(&git_name) && at(&off_name) {
            rfs::renameat(&dir, &off_name, &dir, &git_name).map_err(|e| cannot(&e))?;
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
        let ws = d.path().canonicalize().unwrap().join("ws");
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

    #[test]
    fn a_crash_is_repaired_where_a_folders_name_is_not_utf8() {
        use std::os::unix::ffi::OsStrExt;
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().canonicalize().unwrap().join("ws");
        let lib = ws.join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
        fs::create_dir_all(lib.join(".git/objects")).unwrap();
        let journal = d.path().join("journal");
        std::mem::forget(disable(&ws, Path::new("/nonexistent"), &journal).unwrap());
        assert!(!lib.join(".git").exists());
        assert_eq!(repair(&journal).unwrap(), 1);
        assert!(lib.join(".git/objects").is_dir());
    }

    /// A folder swapped for a link to the workspace after the search (by a command's daemon)
    /// leads no rename to the workspace's own `.git`; one moved away while disabled gets its
    /// `.git` back where it went, and the workspace's `.git` is never renamed.
    #[test]
    fn a_folder_swapped_for_a_link_never_renames_the_workspaces_own_git() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().canonicalize().unwrap().join("ws");
        for dir in [".git/objects", "sub/.git/objects"] {
            fs::create_dir_all(ws.join(dir)).unwrap();
        }
        let journal = d.path().join("journal");
        // Between the search and the rename.
        let found = find(&ws, Path::new("/nonexistent"));
        assert_eq!(found, vec![ws.join("sub/.git")]);
        fs::rename(ws.join("sub"), ws.join("real-sub")).unwrap();
        std::os::unix::fs::symlink(".", ws.join("sub")).unwrap();
        assert!(disable_found(found, &journal).is_err());
        assert!(ws.join(".git/objects").is_dir() && !ws.join(".git_disabled").exists());
        fs::remove_file(ws.join("sub")).unwrap();
        fs::rename(ws.join("real-sub"), ws.join("sub")).unwrap();
        // While disabled: the folder moved away and a link to the workspace put in its place.
        let guard = disable(&ws, Path::new("/nonexistent"), &journal).unwrap();
        assert!(ws.join("sub/.git_disabled/objects").is_dir());
        fs::rename(ws.join("sub"), ws.join("real-sub")).unwrap();
        std::os::unix::fs::symlink(".", ws.join("sub")).unwrap();
        fs::rename(ws.join(".git"), ws.join(".git_disabled")).unwrap(); // bait for a rename by path
        drop(guard);
        assert!(ws.join("real-sub/.git/objects").is_dir(), "put back where the folder went");
        assert!(ws.join(".git_disabled").is_dir() && !ws.join(".git").exists(), "the bait is left alone");
        // After a crash, repair goes no way through a link either.
        fs::rename(ws.join(".git_disabled"), ws.join(".git")).unwrap();
        fs::remove_file(ws.join("sub")).unwrap();
        fs::rename(ws.join("real-sub"), ws.join("sub")).unwrap();
        std::mem::forget(disable(&ws, Path::new("/nonexistent"), &journal).unwrap());
        fs::rename(ws.join("sub"), ws.join("real-sub")).unwrap();
        std::os::unix::fs::symlink(".", ws.join("sub")).unwrap();
        fs::rename(ws.join(".git"), ws.join(".git_disabled")).unwrap();
        assert_eq!(repair(&journal).unwrap(), 0);
        assert!(ws.join(".git_disabled").is_dir() && !ws.join(".git").exists());
    }
}
