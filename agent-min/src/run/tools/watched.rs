//! Cline's `FileContextTracker`, as far as `# Recently Modified Files` needs it: the files this
//! task read or edited are watched, and a change made by something else since (the person, a
//! command, another program) is reported once in the next environment details. An edit by the
//! agent itself is not a change (Cline's `recentlyEditedByCline`): its file is watched again as
//! written. Watching is a stat per file when the details are built, not a file-system watcher.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// What tells one version of a file from another: device, inode, size, modification time.
type Stamp = Option<(u64, u64, u64, i64, i64)>;

fn stamp(abs: &Path) -> Stamp {
    std::fs::metadata(abs).ok().map(|m| (m.dev(), m.ino(), m.size(), m.mtime(), m.mtime_nsec()))
}

/// The watched files, in the order they were first read or edited.
#[derive(Debug, Default, Clone)]
pub(crate) struct Watched {
    files: Vec<(String, PathBuf, Stamp)>,
}

impl Watched {
    /// The agent read or wrote `abs` (shown to the model as `shown`): watch it as it is now.
    pub(crate) fn saw(&mut self, shown: &str, abs: &Path) {
        let now = stamp(abs);
        match self.files.iter_mut().find(|(_, a, _)| a == abs) {
            Some(entry) => entry.2 = now,
            None => self.files.push((shown.to_string(), abs.to_path_buf(), now)),
        }
    }

    /// The watched files changed by something else since the agent last read or wrote them
    /// (Cline's `getAndClearRecentlyModifiedFiles`); each is reported once. A file deleted, or
    /// created where there was none, is not "modified": Cline's watcher reports `change` events
    /// only (not `unlink` or `add`), and a model told to re-read a deleted file gets an error.
    pub(crate) fn take_modified(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        for (shown, abs, seen) in &mut self.files {
            let now = stamp(abs);
            if seen.is_some() && now.is_some() && now != *seen {
                out.push(shown.clone());
            }
            *seen = now;
        }
        out
    }

    /// The person changed `abs` before it was saved (their edit of a proposed file): reported
    /// as modified in the next details, as Cline's `user_edited` records it.
    pub(crate) fn edited_by_person(&mut self, shown: &str, abs: &Path) {
        self.saw(shown, abs);
        if let Some(entry) = self.files.iter_mut().find(|(_, a, seen)| a == abs && seen.is_some()) {
            // No file has device and inode 0: the next look sees a change.
            entry.2 = Some((0, 0, 0, 0, 0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_by_something_else_is_reported_once_and_the_agents_own_is_not() {
        let d = tempfile::tempdir().unwrap();
        let (a, b) = (d.path().join("a.txt"), d.path().join("b.txt"));
        std::fs::write(&a, "1").unwrap();
        std::fs::write(&b, "1").unwrap();
        let mut w = Watched::default();
        w.saw("a.txt", &a);
        w.saw("b.txt", &b);
        assert!(w.take_modified().is_empty());
        // The agent's own edit: watched again as written.
        std::fs::write(&a, "22").unwrap();
        w.saw("a.txt", &a);
        assert!(w.take_modified().is_empty());
        // Someone else's edit: reported, then not again. A deletion is not a modification,
        // nor is the file's coming back (Cline's watcher reports `change` only).
        std::fs::write(&a, "333").unwrap();
        std::fs::remove_file(&b).unwrap();
        assert_eq!(w.take_modified(), ["a.txt"]);
        assert!(w.take_modified().is_empty());
        std::fs::write(&b, "back").unwrap();
        assert!(w.take_modified().is_empty());
        std::fs::write(&b, "changed after").unwrap();
        assert_eq!(w.take_modified(), ["b.txt"], "watched again once it is back");
        // The person's edit of a proposal is reported.
        w.edited_by_person("a.txt", &a);
        assert_eq!(w.take_modified(), ["a.txt"]);
        // A file never read or written is not watched.
        std::fs::write(d.path().join("c.txt"), "x").unwrap();
        assert!(w.take_modified().is_empty());
    }
}
