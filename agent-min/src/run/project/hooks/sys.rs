//! The hooks' only `unsafe`: a sealed memory file holding an approved script's bytes, so what
//! runs is what was approved, not whatever the workspace path holds at that moment.
#![allow(unsafe_code)] // the hooks' system calls (their `sys` module)

use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `MFD_EXEC` (Linux 6.3): ask for an executable memory file where `vm.memfd_noexec` = 1 would
/// make it non-executable by default. Older kernels reject the flag; then it is left out.
const MFD_EXEC: libc::c_uint = 0x0010;

/// A memory file with `bytes` in it, sealed against any change (write, grow, shrink, new seals).
pub(crate) fn sealed_copy(bytes: &[u8]) -> std::io::Result<OwnedFd> {
    let name = c"agent-min-hook";
    let flags = libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING;
    // SAFETY: `name` is a valid NUL-terminated string; the return value is checked.
    let mut fd = unsafe { libc::memfd_create(name.as_ptr(), flags | MFD_EXEC) };
    if fd < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
        // SAFETY: as above.
        fd = unsafe { libc::memfd_create(name.as_ptr(), flags) };
    }
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just created and is owned by nobody else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut file = std::fs::File::from(owned);
    file.write_all(bytes)?;
    let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
    // SAFETY: a valid descriptor; F_ADD_SEALS takes an int argument.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, seals) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(OwnedFd::from(file))
}

/// A duplicate of `fd` that a child inherits (no close-on-exec), for the moment of one spawn:
/// a `#!` script's interpreter opens `/proc/self/fd/N` after the exec, so N must survive it.
pub(crate) fn inheritable(fd: &OwnedFd) -> std::io::Result<OwnedFd> {
    // SAFETY: a valid descriptor; `dup` returns a new one without FD_CLOEXEC, checked below.
    let n = unsafe { libc::dup(fd.as_raw_fd()) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `n` was just created and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(n) })
}
