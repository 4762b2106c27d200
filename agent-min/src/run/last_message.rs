//! `-o FILE`: the final result, written whole or not at all, into the folder `FILE` named when
//! the run started.
//!
//! The folder is opened before the task runs, and the result written relative to that open
//! folder: a temporary file only this write creates (`O_EXCL`, never through a link) renamed
//! over `FILE`. The task's commands may write the folder (it is often the workspace), but they
//! cannot redirect the write — not by planting a link at the temporary file's name (a fixed name
//! beside `FILE` was followed, writing the result into any file the user can write), nor by
//! swapping the folder for a link to another.

use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::fs::{self as rfs, Mode, OFlags};

use crate::run::tools::fsx;
use crate::run::ui::redact;

/// Where `-o` writes: its folder, open since the run started, and the file's name there.
#[derive(Debug)]
pub(crate) struct LastMessage {
    dir: OwnedFd,
    name: OsString,
    /// `FILE` as given, for messages.
    shown: PathBuf,
}

impl LastMessage {
    /// Opens the folder `file` is in (a usage error, said before the task runs, when there is
    /// none or `file` names no file).
    pub(crate) fn open(file: &Path) -> Result<LastMessage, String> {
        let shown = file.display();
        let name = file.file_name().ok_or_else(|| format!("-o {shown}: not a file name"))?;
        let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let dir = rfs::open(dir, flags, Mode::empty())
            .map_err(|e| format!("-o {shown}: its folder {} cannot be opened ({e})", dir.display()))?;
        // The result replaces the file by a rename: a device, a folder or a link there would be
        // replaced itself (`-o /dev/stdout`, run as root, would replace that link in /dev).
        if let Ok(st) = rfs::statat(&dir, name, rfs::AtFlags::SYMLINK_NOFOLLOW) {
            if rfs::FileType::from_raw_mode(st.st_mode) != rfs::FileType::RegularFile {
                return Err(format!(
                    "-o {shown}: is not a regular file (a link, a folder or a device); give a file's name (the result is on stdout too, when stdout is not a terminal)"
                ));
            }
        }
        Ok(LastMessage { dir, name: name.to_os_string(), shown: file.to_path_buf() })
    }

    /// `FILE` as given.
    pub(crate) fn path(&self) -> &Path {
        &self.shown
    }

    /// Writes `result` (keys masked) to the file: a new temporary file, then a rename over it.
    pub(crate) fn write(&self, result: &str) -> io::Result<()> {
        let at = self.shown.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        fsx::replace_in(&self.dir, at, &self.name, redact::apply(result).as_bytes(), None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A link planted where the temporary file would be, at any name the old fixed scheme
    /// used, is not followed: the result lands in `FILE`, the link's target is untouched.
    #[test]
    fn a_planted_link_is_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let ws = d.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let out = LastMessage::open(&ws.join("review.md")).unwrap();
        std::os::unix::fs::symlink(&victim, ws.join(format!(".review.md.tmp.{}", std::process::id()))).unwrap();
        std::os::unix::fs::symlink(&victim, ws.join("review.md")).unwrap();
        out.write("the result").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(ws.join("review.md")).unwrap(), "the result");
        assert!(!ws.join("review.md").symlink_metadata().unwrap().file_type().is_symlink());
    }

    /// A link, a folder or a device at FILE is refused when the run starts: the rename would
    /// replace it (`-o /dev/stdout`).
    #[test]
    fn what_is_not_a_regular_file_is_refused() {
        let d = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/dev/null", d.path().join("out")).unwrap();
        std::fs::create_dir(d.path().join("dir")).unwrap();
        for name in ["out", "dir"] {
            let e = LastMessage::open(&d.path().join(name)).unwrap_err();
            assert!(e.contains("is not a regular file"), "{e}");
        }
        std::fs::write(d.path().join("plain"), "old").unwrap();
        assert!(LastMessage::open(&d.path().join("plain")).is_ok());
        assert!(LastMessage::open(&d.path().join("new")).is_ok());
    }

    /// The folder is the one open since the start: swapped for a link to another folder, the
    /// result still lands in the first.
    #[test]
    fn a_folder_swapped_for_a_link_is_not_followed() {
        let d = tempfile::tempdir().unwrap();
        let (out_dir, elsewhere) = (d.path().join("out"), d.path().join("elsewhere"));
        std::fs::create_dir(&out_dir).unwrap();
        std::fs::create_dir(&elsewhere).unwrap();
        let out = LastMessage::open(&out_dir.join("r.md")).unwrap();
        std::fs::rename(&out_dir, d.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &out_dir).unwrap();
        out.write("the result").unwrap();
        assert!(!elsewhere.join("r.md").exists());
        assert_eq!(std::fs::read_to_string(d.path().join("moved/r.md")).unwrap(), "the result");
    }

    #[test]
    fn a_missing_folder_is_said_before_the_run() {
        let e = LastMessage::open(Path::new("/nonexistent-agent-min/out.txt")).unwrap_err();
        assert!(
            e.starts_with("-o /nonexistent-agent-min/out.txt: its folder /nonexistent-agent-min cannot be opened ("),
            "{e}"
        );
        assert!(LastMessage::open(Path::new("/")).is_err());
    }
}
