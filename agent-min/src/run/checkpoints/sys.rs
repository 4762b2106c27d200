//! The only `unsafe` of checkpoints: `flock` for the lock (std's
//! `File::try_lock` needs Rust 1.89, above this crate's 1.88).
#![allow(unsafe_code)] // flock(2) (this is the checkpoints' `sys` module)

use std::fs::File;
use std::os::fd::AsRawFd;

/// Tries to take an exclusive `flock` on `file` without waiting.
pub(crate) fn try_lock(file: &File) -> bool {
    // SAFETY: flock only reads the descriptor number; `file` keeps it open for the call.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}
