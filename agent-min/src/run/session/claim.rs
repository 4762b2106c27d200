//! One process per saved task. A process that runs a task (`run`, `resume`, an editor's
//! session) or restores its checkpoint holds an exclusive `flock` on `tasks/.ID.lock` while it
//! does; another that wants the task is refused, with the holder's pid (written in the file).
//! Two processes on one task would each save over the other's turns and checkpoints. The
//! kernel drops the lock when its holder dies, `kill -9` included, so it is never stale;
//! the saved status alone could not tell (an editor's session saves `completed` and lives on).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// A task held by this process; let go when dropped (or when the process ends: a Ctrl-C or a
/// `kill -9` leaves the file, which the next claim takes over).
#[derive(Debug)]
pub struct Claim {
    path: PathBuf,
    file: File,
}

/// Another process holds the task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Busy {
    /// The task.
    pub id: String,
    /// The holder, as it wrote itself in the lock file (`None` if it had not yet, or that
    /// process is gone: the pid of a dead holder may be another process's by now).
    pub pid: Option<u32>,
}

impl Busy {
    /// Why `doing` the task here is refused, and what to do instead.
    pub fn refusal(&self, doing: &str) -> String {
        let (who, stop) = match self.pid {
            Some(pid) => (format!("process {pid}"), format!(", or stop it (kill -INT {pid}) and try again")),
            None => ("another process".to_string(), String::new()),
        };
        format!(
            "task {} is running now ({who}: agent-min run, resume or an editor's session); {doing} it as well would lose one side's turns and checkpoints — wait for it to end{stop}",
            self.id
        )
    }
}

/// Takes task `id` in `tasks` (the store's directory of saved tasks) for this process.
/// `Ok(None)`: no lock file could be made there (a read-only state directory, say); the task
/// runs unclaimed.
pub(crate) fn claim(tasks: &Path, id: &str) -> Result<Option<Claim>, Busy> {
    let path = tasks.join(format!(".{id}.lock"));
    // A holder removes the file as it lets go: a lock taken (or refused) on a file no longer
    // at `path` says nothing about the task, so try again on the one there now.
    for _ in 0..8 {
        let open = OpenOptions::new().read(true).write(true).create(true).truncate(false).mode(0o600).open(&path);
        let Ok(mut file) = open else { return Ok(None) };
        let locked = try_lock(&file);
        if !is_at(&file, &path) {
            continue;
        }
        if !locked {
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            let pid = text.trim().parse::<u32>().ok().filter(|pid| Path::new(&format!("/proc/{pid}")).exists());
            return Err(Busy { id: id.to_string(), pid });
        }
        let pid = std::process::id().to_string();
        let _ = file.set_len(0).and_then(|()| file.rewind()).and_then(|()| file.write_all(pid.as_bytes()));
        return Ok(Some(Claim { path, file }));
    }
    Ok(None)
}

/// Whether `file` is the file at `path` now.
fn is_at(file: &File, path: &Path) -> bool {
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(there)) => (open.dev(), open.ino()) == (there.dev(), there.ino()),
        _ => false,
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        // Removed while still locked (the file closes after this), and only if it is still
        // ours at that path: see `claim`.
        if is_at(&self.file, &self.path) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Tries to take an exclusive `flock` on `file` without waiting.
pub(crate) fn try_lock(file: &File) -> bool {
    rustix::fs::flock(file, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claimed_task_is_refused_to_another_claim_with_the_holders_pid_until_let_go() {
        let d = tempfile::tempdir().unwrap();
        let first = claim(d.path(), "t1").unwrap().expect("claimed");
        // flock conflicts between two opens even inside one process.
        let busy = claim(d.path(), "t1").unwrap_err();
        assert_eq!(busy, Busy { id: "t1".into(), pid: Some(std::process::id()) });
        let why = busy.refusal("resuming");
        assert!(why.contains("task t1 is running now") && why.contains("kill -INT"), "{why}");
        // Another task is free.
        let other = claim(d.path(), "t2").unwrap().expect("another task");
        drop(first);
        assert!(!d.path().join(".t1.lock").exists(), "removed when let go");
        let again = claim(d.path(), "t1").unwrap().expect("free again");
        drop((again, other));
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_claim_lets_go_of_only_its_own_file_and_names_only_a_live_holder() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join(".t1.lock");
        let first = claim(d.path(), "t1").unwrap().expect("claimed");
        // The file at the path is another one now (as after a holder let go): a claim takes
        // that one, and the first claim's drop leaves it.
        std::fs::remove_file(&path).unwrap();
        let second = claim(d.path(), "t1").unwrap().expect("the file there now is free");
        drop(first);
        assert!(path.exists(), "the second claim's file is left alone");
        drop(second);
        assert!(!path.exists());
        // A holder whose written pid is no process (a leftover pid): not named.
        std::fs::write(&path, "4194305").unwrap();
        let other = std::fs::OpenOptions::new().read(true).open(&path).unwrap();
        assert!(try_lock(&other));
        assert_eq!(claim(d.path(), "t1").unwrap_err().pid, None);
    }

    #[test]
    fn a_lock_file_left_by_a_process_that_died_is_taken_over() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(".t1.lock"), "4194305").unwrap();
        let held = claim(d.path(), "t1").unwrap().expect("no one holds it");
        assert_eq!(std::fs::read_to_string(d.path().join(".t1.lock")).unwrap(), std::process::id().to_string());
        drop(held);
    }

    #[test]
    fn a_directory_where_no_lock_can_be_made_leaves_the_task_unclaimed() {
        let d = tempfile::tempdir().unwrap();
        assert!(claim(&d.path().join("missing"), "t1").unwrap().is_none());
    }
}
