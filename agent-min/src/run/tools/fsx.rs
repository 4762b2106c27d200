//! Small file helpers: atomic writes and removals that never follow a symlink, and reading regular
//! files only.

use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::run::ui::interrupt;

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn unique_name(prefix: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    format!("{prefix}.{}.{n}.{nanos:x}", std::process::id())
}

/// Most bytes a tool reads from one file (a file the model reads, edits or searches).
pub(crate) const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// Reads `path` if it is a regular file of at most `max` bytes. Nothing else is opened for
/// reading: a FIFO would block forever, `/dev/zero` never ends. The type is checked before
/// opening, and again on the open file (opened non-blocking, so a FIFO swapped in between the
/// two checks cannot block either).
pub(crate) fn read_regular(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let not_regular = |m: &fs::Metadata| {
        let what = if m.is_dir() { "is a directory" } else { "is not a regular file (a FIFO, device or socket)" };
        io::Error::new(io::ErrorKind::InvalidInput, what)
    };
    let meta = fs::metadata(path)?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let f = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
    read_open(f, max)
}

/// Reads an open file if it is a regular file of at most `max` bytes.
fn read_open(f: fs::File, max: u64) -> io::Result<Vec<u8>> {
    let meta = f.metadata()?;
    if !meta.is_file() {
        let what = if meta.is_dir() { "is a directory" } else { "is not a regular file (a FIFO, device or socket)" };
        return Err(io::Error::new(io::ErrorKind::InvalidInput, what));
    }
    let too_large = |n: u64| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("is too large ({n} bytes; the limit is {max} bytes)"))
    };
    if meta.len() > max {
        return Err(too_large(meta.len()));
    }
    let mut v = Vec::with_capacity(meta.len() as usize);
    f.take(max + 1).read_to_end(&mut v)?;
    if v.len() as u64 > max {
        return Err(too_large(v.len() as u64));
    }
    Ok(v)
}

/// Writes `contents` to `path` atomically: a temp file in the same directory, fsync, rename.
/// Keeps the permissions of an existing file. Creates missing parent directories.
///
/// A file with more than one name (a hard link) is replaced too: its other names, which may lie
/// outside the workspace (pnpm's store, linked into `node_modules`), keep their text. A file
/// without write permission for its owner is refused, naming it and the fix, for root too (a
/// rename needs only the directory's permission, so a read-only file would be replaced by a new
/// read-only one).
///
/// `path` must be absolute and already resolved (no symlinks in its existing part, as
/// [`super::paths::Workspace::resolve`] returns it): the directories are opened one by one,
/// relative to the previous one's descriptor, **without following any symlink**, at the moment
/// of the write. A directory swapped for a link after the path was checked and approved (during
/// the approval prompt, say) makes the write fail — nothing is written anywhere — instead of
/// landing where the link points.
pub(crate) fn atomic_write(path: &Path, contents: &[u8]) -> io::Result<()> {
    let (dir, name) = open_parent(path, true, Act::Write)?;
    let mode = match rfs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => {
            let mode = st.st_mode & 0o7777;
            if mode & 0o200 == 0 {
                return Err(read_only(path, mode));
            }
            Some(mode)
        }
        Ok(_) => return Err(changed(path, "is no longer a regular file (a symlink, directory or device)", Act::Write)),
        Err(e) if e == Errno::NOENT => None,
        Err(e) => return Err(e.into()),
    };
    replace_in(&dir, path.parent().unwrap_or(Path::new("/")), name, contents, mode)
}

/// Writes `contents` as `name` in the open folder `dir` (whose path is `at`, for the temporary
/// file's removal on Ctrl-C), whole or not at all: a new temporary file beside it (`O_EXCL`,
/// never through a link), fsync, a rename over `name`, fsync of the folder. `mode`: the mode
/// the file gets (an existing file's, kept); `None`, a new file's.
pub(crate) fn replace_in(
    dir: &OwnedFd,
    at: &Path,
    name: &std::ffi::OsStr,
    contents: &[u8],
    mode: Option<u32>,
) -> io::Result<()> {
    let tmp = unique_name(&format!(".{}.agent-min-tmp", name.to_string_lossy()));
    let _guard = interrupt::track_file(at.join(&tmp));
    let result = (|| {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut f = fs::File::from(rfs::openat(dir, tmp.as_str(), flags, Mode::from_raw_mode(temp_mode(mode)))?);
        f.write_all(contents)?;
        if let Some(m) = mode {
            rfs::fchmod(&f, Mode::from_raw_mode(m))?;
        }
        f.sync_all()?;
        rfs::renameat(dir, tmp.as_str(), dir, name)?;
        rfs::fsync(dir).map_err(io::Error::from)
    })();
    if result.is_err() {
        let _ = rfs::unlinkat(dir, tmp.as_str(), AtFlags::empty());
    }
    result
}

/// The mode a save's temp file is created with, before its content is written: a new file's
/// (`0644`, less the umask), or for a file that exists (`existing`, whose mode the temp file
/// gets once written) the owner's alone — a `0600` file's new secrets were readable to all
/// while being written.
fn temp_mode(existing: Option<u32>) -> u32 {
    match existing {
        Some(_) => 0o600,
        None => 0o644,
    }
}

/// The refusal of a file without write permission for its owner.
fn read_only(path: &Path, mode: u32) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{} is read-only (mode {mode:04o}), so it was not changed; agent-min writes no file its owner may not write. If it should change, ask the user to make it writable (chmod u+w {}) and try again.",
            path.display(),
            path.display()
        ),
    )
}

/// What a file looked like on disk: device, inode, size, modified and changed times. Another
/// stamp later means it was written, replaced or removed meanwhile (`ctime` moves on any write).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Stamp([i64; 7]);

/// The stamp of `path` (a final link not followed), `None` if there is nothing there.
pub(crate) fn stamp(path: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let m = fs::symlink_metadata(path).ok()?;
    Some(Stamp([m.dev() as i64, m.ino() as i64, m.size() as i64, m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec()]))
}

/// Reads `path` like [`read_regular`], but opens it as [`atomic_write`] writes: every
/// directory relative to its parent's descriptor and the file itself, all without following a
/// symlink. A path that changed into a link after it was resolved is an error, not a read of
/// wherever the link points.
/// (What a file is read with before it is written: its errors say nothing was written.)
pub(crate) fn read_regular_no_follow(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    read_no_follow(path, max, Act::Write)
}

/// Reads the resolved and checked `path` for the model (`read_file`) as
/// [`read_regular_no_follow`] does: a link swapped in since the check is refused, not read.
pub(crate) fn read_checked(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    read_no_follow(path, max, Act::Read)
}

/// Removes the file at the resolved and checked `path` as [`atomic_write`] writes: its parent
/// directory is opened component by component without following a symlink, and the name is
/// unlinked relative to that descriptor (`unlinkat`). A directory swapped for a link after the
/// path was checked and approved makes the removal fail instead of removing the file where the
/// link leads. A symlink named by `path` is itself removed, never what it points to.
pub(crate) fn remove_no_follow(path: &Path) -> io::Result<()> {
    let (dir, name) = open_parent(path, false, Act::Remove)?;
    rfs::unlinkat(&dir, name, AtFlags::empty()).map_err(io::Error::from)
}

fn read_no_follow(path: &Path, max: u64, act: Act) -> io::Result<Vec<u8>> {
    read_open(open_no_follow(path, act)?, max)
}

/// Opens the resolved and checked `path` as [`read_checked`] does, whatever its size, for a
/// reader that streams it (`search_files`): a regular file only, reached without following a
/// symlink.
pub(crate) fn open_checked(path: &Path) -> io::Result<fs::File> {
    let f = open_no_follow(path, Act::Read)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        let what = if meta.is_dir() { "is a directory" } else { "is not a regular file (a FIFO, device or socket)" };
        return Err(io::Error::new(io::ErrorKind::InvalidInput, what));
    }
    Ok(f)
}

/// Opens `path` (non-blocking: a FIFO cannot block) without following a symlink anywhere on it.
fn open_no_follow(path: &Path, act: Act) -> io::Result<fs::File> {
    let (dir, name) = open_parent(path, false, act)?;
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    match rfs::openat(&dir, name, flags, Mode::empty()) {
        Ok(fd) => Ok(fs::File::from(fd)),
        Err(e) if e == Errno::LOOP => Err(changed(path, "is a symbolic link", act)),
        Err(e) => Err(e.into()),
    }
}

/// Opens the parent directory of the absolute `path` component by component from `/`, never
/// following a symlink (creating missing directories when `create`); returns it and the file
/// name. (`act`: what the path is opened for, as its errors say.)
fn open_parent(path: &Path, create: bool, act: Act) -> io::Result<(OwnedFd, &std::ffi::OsStr)> {
    let name = path.file_name().filter(|_| path.is_absolute()).ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("{}: not an absolute path to a file", path.display()))
    })?;
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut dir = rfs::open("/", dir_flags, Mode::empty())?;
    let mut at = PathBuf::from("/");
    for c in path.parent().unwrap_or(Path::new("/")).components() {
        let Component::Normal(part) = c else {
            if matches!(c, Component::ParentDir) {
                return Err(changed(path, "contains `..`", act));
            }
            continue;
        };
        let mut next = rfs::openat(&dir, part, dir_flags, Mode::empty());
        if create && matches!(next, Err(Errno::NOENT)) {
            match rfs::mkdirat(&dir, part, Mode::from_raw_mode(0o755)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
            next = rfs::openat(&dir, part, dir_flags, Mode::empty());
        }
        at.push(part);
        dir = match next {
            Ok(d) => d,
            // A file where a directory is needed (`a.txt/b.txt`) is no race: named as it is.
            Err(Errno::NOTDIR)
                if rfs::statat(&dir, part, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|st| {
                    let kind = FileType::from_raw_mode(st.st_mode);
                    kind != FileType::Symlink && kind != FileType::Directory
                }) =>
            {
                let what = format!("{} is a file, not a directory", at.display());
                return Err(io::Error::new(io::ErrorKind::NotADirectory, what));
            }
            Err(e) if e == Errno::LOOP || e == Errno::NOTDIR => {
                return Err(changed(path, "has a directory that is now a symbolic link or not a directory", act))
            }
            Err(e) => return Err(e.into()),
        };
    }
    Ok((dir, name))
}

/// What a path is opened for, as its errors say (reading before a write is for a write: its
/// errors say nothing was written).
#[derive(Clone, Copy)]
enum Act {
    Read,
    Write,
    Remove,
}

/// The error for a path that is not what was checked and approved.
fn changed(path: &Path, what: &str, act: Act) -> io::Error {
    let (when, nothing) = match act {
        Act::Read => ("reading", "read"),
        Act::Write => ("writing", "written"),
        Act::Remove => ("removing", "removed"),
    };
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} {what}: the path changed after it was checked, and links are never followed when {when}; nothing was {nothing}",
            path.display()
        ),
    )
}

/// Node's message for a failed system call on `abs` (`ENOENT: no such file or directory, stat
/// '/abs'`), for the errors a mention or a read meets; others as the system says them.
pub(crate) fn node_error(e: &std::io::Error, call: &str, abs: &Path) -> String {
    let (code, what) = match e.raw_os_error() {
        Some(libc::ENOENT) => ("ENOENT", "no such file or directory"),
        Some(libc::EACCES) => ("EACCES", "permission denied"),
        Some(libc::ENOTDIR) => ("ENOTDIR", "not a directory"),
        Some(libc::ELOOP) => ("ELOOP", "too many symbolic links encountered"),
        Some(libc::ENAMETOOLONG) => ("ENAMETOOLONG", "name too long"),
        _ => return e.to_string(),
    };
    format!("{code}: {what}, {call} '{}'", abs.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_creates_dirs_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a/b/c.txt");
        atomic_write(&p, b"hello").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "hello");
        atomic_write(&p, b"again").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "again");
        let names: Vec<_> = fs::read_dir(d.path().join("a/b")).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    /// A workspace with `sub/`, and an `outside/` beside it.
    fn swap_setup() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(d.path()).unwrap();
        let (ws, outside) = (root.join("ws"), root.join("outside"));
        fs::create_dir_all(ws.join("sub")).unwrap();
        fs::create_dir_all(&outside).unwrap();
        (d, ws, outside)
    }

    #[test]
    fn a_directory_swapped_for_a_link_after_the_check_is_not_followed() {
        let (_d, ws, outside) = swap_setup();
        let checked = ws.join("sub/x.txt"); // resolved while `sub` was a directory
        fs::remove_dir(ws.join("sub")).unwrap();
        std::os::unix::fs::symlink("../outside", ws.join("sub")).unwrap();
        let e = atomic_write(&checked, b"evil").unwrap_err();
        assert!(e.to_string().contains("nothing was written"), "{e}");
        assert!(!outside.join("x.txt").exists(), "the write followed the swapped link");
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0, "a temp file was left outside");
        let e = read_regular_no_follow(&checked, 100).unwrap_err();
        assert!(e.to_string().contains("changed"), "{e}");
    }

    /// The removal apply_patch makes (Delete File, Move File's old name): `sub/victim.txt`
    /// checked while `sub` was a directory, `sub` now a link to a directory outside.
    #[test]
    fn a_removal_through_a_directory_swapped_for_a_link_removes_nothing() {
        let (_d, ws, outside) = swap_setup();
        let checked = ws.join("sub/victim.txt");
        fs::write(&checked, "inside").unwrap();
        fs::write(outside.join("victim.txt"), "outside").unwrap();
        fs::rename(ws.join("sub"), ws.join("moved")).unwrap();
        std::os::unix::fs::symlink("../outside", ws.join("sub")).unwrap();
        let e = remove_no_follow(&checked).unwrap_err();
        assert!(
            e.to_string().contains("is now a symbolic link") && e.to_string().contains("nothing was removed"),
            "{e}"
        );
        assert_eq!(fs::read_to_string(outside.join("victim.txt")).unwrap(), "outside", "removed outside");
        assert!(ws.join("moved/victim.txt").exists());
        // Through a real directory it removes the file; a link it names is removed, not its
        // target; a missing file is the system's error, as `std::fs::remove_file` gives it.
        remove_no_follow(&ws.join("moved/victim.txt")).unwrap();
        assert!(!ws.join("moved/victim.txt").exists());
        std::os::unix::fs::symlink(outside.join("victim.txt"), ws.join("moved/link")).unwrap();
        remove_no_follow(&ws.join("moved/link")).unwrap();
        assert!(fs::symlink_metadata(ws.join("moved/link")).is_err());
        assert_eq!(fs::read_to_string(outside.join("victim.txt")).unwrap(), "outside");
        let missing = remove_no_follow(&ws.join("moved/gone.txt")).unwrap_err();
        assert_eq!(missing.to_string(), fs::remove_file(ws.join("moved/gone.txt")).unwrap_err().to_string());
    }

    #[test]
    fn a_file_swapped_for_a_link_is_neither_read_nor_replaced() {
        let (_d, ws, outside) = swap_setup();
        fs::write(outside.join("secret"), "top secret").unwrap();
        std::os::unix::fs::symlink(outside.join("secret"), ws.join("sub/f.txt")).unwrap();
        assert!(read_regular_no_follow(&ws.join("sub/f.txt"), 100).is_err());
        assert!(atomic_write(&ws.join("sub/f.txt"), b"new").is_err());
        assert_eq!(fs::read_to_string(outside.join("secret")).unwrap(), "top secret");
        assert!(fs::symlink_metadata(ws.join("sub/f.txt")).unwrap().file_type().is_symlink());
    }

    /// A write to a file with two names gives the written name a new file: the other name,
    /// which may lie outside the workspace (pnpm's store), keeps its text.
    #[test]
    fn a_hard_linked_files_other_name_is_left_as_it_was() {
        use std::os::unix::fs::PermissionsExt;
        let (_d, ws, _) = swap_setup();
        let (a, b) = (ws.join("sub/a.txt"), ws.join("sub/b.txt"));
        fs::write(&a, "old text").unwrap();
        fs::set_permissions(&a, fs::Permissions::from_mode(0o640)).unwrap();
        fs::hard_link(&a, &b).unwrap();
        atomic_write(&a, b"new").unwrap();
        assert_eq!(fs::read_to_string(&a).unwrap(), "new");
        assert_eq!(fs::read_to_string(&b).unwrap(), "old text");
        assert_eq!(fs::metadata(&a).unwrap().permissions().mode() & 0o777, 0o640);
    }

    /// A read-only file is refused (for root too, who could write it, and whom a rename would
    /// let replace it anyway): the error names the file and the fix, and nothing changes.
    #[test]
    fn a_read_only_file_is_refused_and_unchanged() {
        use std::os::unix::fs::PermissionsExt;
        let (_d, ws, _) = swap_setup();
        let (p, link) = (ws.join("sub/ro.txt"), ws.join("sub/ro-link.txt"));
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o444)).unwrap();
        let e = atomic_write(&p, b"new").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        let msg = e.to_string();
        assert!(msg.contains(&format!("{} is read-only (mode 0444)", p.display())), "{msg}");
        assert!(msg.contains(&format!("chmod u+w {}", p.display())), "{msg}");
        assert_eq!(fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o444);
        // With a second name too.
        fs::hard_link(&p, &link).unwrap();
        assert_eq!(atomic_write(&link, b"new").unwrap_err().kind(), io::ErrorKind::PermissionDenied);
        assert_eq!(fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(fs::read_dir(ws.join("sub")).unwrap().count(), 2, "a temp file was left");
    }

    /// A file that exists is rewritten through a temp file only its owner can open until it is
    /// given the file's mode (after its content is written); a new file's is created as usual.
    /// (The mapping `atomic_write` creates its temp file with: the write itself is too quick to
    /// be watched.)
    #[test]
    fn a_saves_temp_file_is_the_owners_until_written() {
        assert_eq!(temp_mode(Some(0o600)), 0o600);
        assert_eq!(temp_mode(Some(0o644)), 0o600);
        assert_eq!(temp_mode(None), 0o644);
    }

    /// A file where a folder should be (`a.txt/b.txt`) is named as such, not as a path that
    /// changed after its check; nothing is written.
    #[test]
    fn a_file_in_place_of_a_folder_is_named() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("a.txt");
        fs::write(&file, "a").unwrap();
        let e = atomic_write(&file.join("b.txt"), b"b").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotADirectory);
        assert_eq!(e.to_string(), format!("{} is a file, not a directory", file.display()));
        assert_eq!(read_regular_no_follow(&file.join("b.txt"), 10).unwrap_err().kind(), io::ErrorKind::NotADirectory);
        assert_eq!(fs::read_to_string(&file).unwrap(), "a");
    }

    #[test]
    fn atomic_write_keeps_the_mode_of_an_existing_file() {
        use std::os::unix::fs::PermissionsExt;
        let (_d, ws, _) = swap_setup();
        let p = ws.join("sub/run.sh");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o751)).unwrap();
        atomic_write(&p, b"new").unwrap();
        assert_eq!(fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o751);
        assert_eq!(read_regular_no_follow(&p, 100).unwrap(), b"new");
        assert!(atomic_write(Path::new("relative.txt"), b"x").is_err(), "only resolved absolute paths");
    }
}
