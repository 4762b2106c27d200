//! The sandbox's only `unsafe`: overwriting the process's initial environment in place.
#![allow(unsafe_code)] // the sandbox's system calls (this is its `sys` module)

use std::ffi::CStr;

/// Overwrites the value of the environment variable `name` with zero bytes where it lives,
/// so `/proc/self/environ` (which shows the memory the process started with) no longer holds
/// it. The variable list itself is left to `std::env::remove_var`.
pub(crate) fn wipe_env_value(name: &std::ffi::OsStr) {
    use std::os::unix::ffi::OsStrExt;
    let prefix = [name.as_bytes(), b"="].concat();
    // SAFETY: `environ` is the C library's NULL-terminated array of pointers to NUL-terminated
    // "NAME=value" strings; it is read here before any thread of ours changes the environment
    // (called once at start-up). Each string is writable memory owned by the process (the
    // initial stack, or a `setenv` copy); we write only within its length, keeping the
    // terminating NUL, so it stays a valid C string ("NAME=" followed by NULs).
    unsafe {
        let mut p = libc::environ;
        while !p.is_null() && !(*p).is_null() {
            let entry = *p;
            let bytes = CStr::from_ptr(entry).to_bytes();
            if bytes.starts_with(&prefix) {
                let len = bytes.len();
                std::ptr::write_bytes(entry.add(prefix.len()), 0, len - prefix.len());
            }
            p = p.add(1);
        }
    }
}
