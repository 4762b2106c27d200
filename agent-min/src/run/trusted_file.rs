//! Reading a configuration file the workspace (or anything a command can write) holds: rules,
//! `.clineignore`, hooks, MCP settings. One open, then everything is judged on that descriptor:
//! `O_NONBLOCK` (a FIFO cannot block the open), `O_NOFOLLOW` where a link is not acceptable,
//! `fstat` (a regular file, at most `cap` bytes), and a read of at most `cap + 1` bytes (a file
//! that grows after the `fstat` is still refused). No check-then-use by path: what was checked
//! is what was read.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// Whether the last component may be a symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Links {
    /// A symlink is refused (`O_NOFOLLOW`).
    Refuse,
    /// A symlink is followed (judge where it leads with [`Opened::within`]).
    Follow,
}

/// Why a file could not be used.
#[derive(Debug)]
pub(crate) enum Error {
    /// There is no such file.
    Missing,
    /// A symlink where none is accepted.
    Symlink,
    /// A FIFO, device, directory or socket.
    NotRegular,
    /// Over the cap: its size (from `fstat`, or at least `cap + 1` when it grew).
    TooLarge {
        /// The size seen.
        size: u64,
        /// The cap.
        cap: u64,
    },
    /// Another I/O error.
    Io(std::io::Error),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Missing => write!(f, "no such file"),
            Error::Symlink => write!(f, "it is a symbolic link, which is not followed"),
            Error::NotRegular => write!(f, "not a regular file (a FIFO, device or directory)"),
            Error::TooLarge { size, cap } => write!(f, "{size} bytes, over the {cap}-byte limit"),
            Error::Io(e) => write!(f, "{e}"),
        }
    }
}

/// A regular file, open.
pub(crate) struct Opened {
    file: File,
    meta: std::fs::Metadata,
}

/// Opens `path` without blocking; refuses anything but a regular file.
pub(crate) fn open(path: &Path, links: Links) -> Result<Opened, Error> {
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY;
    if links == Links::Refuse {
        flags |= libc::O_NOFOLLOW;
    }
    let file =
        std::fs::OpenOptions::new().read(true).custom_flags(flags).open(path).map_err(|e| match e.raw_os_error() {
            Some(libc::ENOENT) | Some(libc::ENOTDIR) => Error::Missing,
            Some(libc::ELOOP) if links == Links::Refuse => Error::Symlink,
            _ => Error::Io(e),
        })?;
    let meta = file.metadata().map_err(Error::Io)?;
    if !meta.is_file() {
        return Err(Error::NotRegular);
    }
    Ok(Opened { file, meta })
}

/// Opens and reads `path` (at most `cap` bytes).
pub(crate) fn read(path: &Path, links: Links, cap: u64) -> Result<Vec<u8>, Error> {
    open(path, links)?.read(cap)
}

impl Opened {
    /// Its size, from `fstat`.
    pub(crate) fn len(&self) -> u64 {
        self.meta.len()
    }

    /// Whether this process may execute it, as `access(X_OK)` judges (and Cline's hook
    /// discovery asks): by the owner's bits when it is ours, else the group's when we are in
    /// its group, else the others'; for root, any execute bit.
    pub(crate) fn executable(&self) -> bool {
        let (uid, gid) = (rustix::process::geteuid().as_raw(), rustix::process::getegid().as_raw());
        let groups = rustix::process::getgroups().unwrap_or_default();
        let in_group = |g: u32| g == gid || groups.iter().any(|x| x.as_raw() == g);
        may_execute(self.meta.mode(), self.meta.uid(), self.meta.gid(), uid, in_group)
    }

    /// Where the descriptor really is (the kernel's name for it, after every link).
    pub(crate) fn real_path(&self) -> Option<PathBuf> {
        std::fs::read_link(format!("/proc/self/fd/{}", self.file.as_raw_fd())).ok()
    }

    /// Whether the opened file lies inside `root` (itself canonical), judged on the descriptor.
    pub(crate) fn within(&self, root: &Path) -> bool {
        self.real_path().is_some_and(|p| p.starts_with(root))
    }

    /// Its bytes: at most `cap`, else [`Error::TooLarge`].
    pub(crate) fn read(self, cap: u64) -> Result<Vec<u8>, Error> {
        if self.meta.len() > cap {
            return Err(Error::TooLarge { size: self.meta.len(), cap });
        }
        let mut bytes = Vec::with_capacity(self.meta.len() as usize);
        self.file.take(cap + 1).read_to_end(&mut bytes).map_err(Error::Io)?;
        if bytes.len() as u64 > cap {
            return Err(Error::TooLarge { size: bytes.len() as u64, cap });
        }
        Ok(bytes)
    }
}

/// Whether user `uid` may execute a file of `mode` owned by `owner` and `group`, as the kernel
/// decides for `access(X_OK)` (one class's bits only: an owner denied is denied, whatever the
/// others may do); `in_group` says whether the user is in a group.
fn may_execute(mode: u32, owner: u32, group: u32, uid: u32, in_group: impl Fn(u32) -> bool) -> bool {
    let bits = match () {
        () if uid == 0 => 0o111,
        () if uid == owner => 0o100,
        () if in_group(group) => 0o010,
        () => 0o001,
    };
    mode & bits != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn execute_permission_is_judged_by_the_callers_class_of_bits() {
        let member = |g: u32| g == 20;
        // The owner: only the owner's bit counts (`0o601`: others may, the owner may not).
        assert!(may_execute(0o700, 1000, 20, 1000, member));
        assert!(!may_execute(0o601, 1000, 20, 1000, member));
        assert!(!may_execute(0o611, 1000, 20, 1000, member));
        // In the file's group: the group's bit.
        assert!(may_execute(0o610, 1, 20, 1000, member));
        assert!(!may_execute(0o701, 1, 20, 1000, member));
        // Anyone else: the others' bit.
        assert!(may_execute(0o601, 1, 30, 1000, member));
        assert!(!may_execute(0o770, 1, 30, 1000, member));
        // Root: any execute bit, and none is none.
        assert!(may_execute(0o601, 1, 30, 0, member) && may_execute(0o610, 1, 30, 0, member));
        assert!(!may_execute(0o666, 1, 30, 0, member));
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .unwrap();
        assert!(matches!(read(&fifo, Links::Follow, 100), Err(Error::NotRegular)));
    }

    #[test]
    fn a_huge_sparse_file_is_refused_from_its_size() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("big");
        File::create(&f).unwrap().set_len(2 << 30).unwrap();
        let e = read(&f, Links::Refuse, 1 << 20).unwrap_err();
        assert!(matches!(e, Error::TooLarge { size, .. } if size == 2 << 30), "{e}");
        assert_eq!(e.to_string(), "2147483648 bytes, over the 1048576-byte limit");
    }

    #[test]
    fn links_are_refused_or_judged_by_where_they_lead() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        let (ws, outside) = (root.join("ws"), root.join("secret"));
        std::fs::create_dir(&ws).unwrap();
        std::fs::write(&outside, "x").unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
        assert!(matches!(read(&ws.join("link"), Links::Refuse, 10), Err(Error::Symlink)));
        let o = open(&ws.join("link"), Links::Follow).unwrap();
        assert!(!o.within(&ws) && o.within(&root));
        assert_eq!(o.read(10).unwrap(), b"x");
        assert!(matches!(read(&ws.join("none"), Links::Follow, 10), Err(Error::Missing)));
    }
}
