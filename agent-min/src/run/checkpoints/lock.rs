//! One checkpoint operation at a time per workspace, across processes (Cline's
//! `CheckpointLockUtils`): an exclusive `flock` on `STATE_DIR/checkpoints/HASH/lock`, tried again
//! with Cline's back-off (500 ms, then 1 s more per attempt, 30 s in all). The kernel drops the
//! lock when its holder dies, so a `kill -9` never leaves a stale lock behind.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// Cline's total wait for the lock.
pub(crate) const WAIT: Duration = Duration::from_secs(30);

/// A held lock; released when dropped (or when the process dies).
#[derive(Debug)]
pub struct Held {
    _file: File,
}

/// Takes the lock at `path`, waiting up to `wait`.
pub fn acquire(path: &Path, wait: Duration) -> Result<Held, String> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("cannot open the checkpoint lock {} ({e})", path.display()))?;
    let start = Instant::now();
    let mut attempt: u64 = 0;
    loop {
        if crate::run::session::claim::try_lock(&file) {
            return Ok(Held { _file: file });
        }
        let left = wait.saturating_sub(start.elapsed());
        if left.is_zero() {
            return Err(format!(
                "another agent is taking or restoring a checkpoint of this workspace (lock {} held for {}s); try again when it is done",
                path.display(),
                wait.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(500 + 1000 * attempt).min(left));
        attempt += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_waits_then_gives_up_with_a_clear_message() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("lock");
        let first = acquire(&path, WAIT).unwrap();
        // flock conflicts between two opens even inside one process.
        let err = acquire(&path, Duration::from_millis(300)).unwrap_err();
        assert!(err.contains("another agent"), "{err}");
        drop(first);
        // A child another test forks in this process holds the lock's descriptor until its exec.
        assert!(acquire(&path, Duration::from_secs(3)).is_ok(), "free again once dropped");
    }
}
