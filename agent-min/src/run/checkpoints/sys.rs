//! The only `unsafe` of checkpoints: two system calls — `flock` for the lock (std's
//! `File::try_lock` needs Rust 1.89, above this crate's 1.88) and `PR_SET_PDEATHSIG` for git.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::process::Command;

/// Tries to take an exclusive `flock` on `file` without waiting.
pub fn try_lock(file: &File) -> bool {
    // SAFETY: flock only reads the descriptor number; `file` keeps it open for the call.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// After a `kill -9` of the agent, its git is killed too: an orphan git still writing the
/// shadow repository (its lock released with the agent) could race the next run's repair.
pub fn die_with_the_agent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the hook runs in the forked child before exec and calls only async-signal-safe
    // functions (prctl, getppid, _exit) on integers. The death signal is tied to the spawning
    // thread, which waits for git before it ends.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                libc::_exit(1); // the agent died before the line above took effect
            }
            Ok(())
        });
    }
}
