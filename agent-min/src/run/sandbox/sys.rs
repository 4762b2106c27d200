//! The sandbox's only `unsafe`: overwriting the process's initial environment in place, and
//! the code that runs in a command's child between `fork` and `exec`.

use std::ffi::CStr;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Overwrites the value of the environment variable `name` with zero bytes where it lives,
/// so `/proc/self/environ` (which shows the memory the process started with) no longer holds
/// it. The variable list itself is left to `std::env::remove_var`.
pub fn wipe_env_value(name: &str) {
    let prefix = format!("{name}=");
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
            if bytes.starts_with(prefix.as_bytes()) {
                let len = bytes.len();
                std::ptr::write_bytes(entry.add(prefix.len()), 0, len - prefix.len());
            }
            p = p.add(1);
        }
    }
}

/// What the child does before `exec`, in this order: enter a new network namespace (when
/// `unshare_net`), then apply the prepared Landlock ruleset (which also sets no_new_privs).
pub struct ChildSetup {
    /// Create a network namespace with only a loopback device that is down.
    pub unshare_net: bool,
    /// `uid_map` / `gid_map` lines for an unprivileged user, if a user namespace is needed for
    /// the network namespace (prepared here, since the child must not allocate).
    pub id_maps: Option<(String, String)>,
    /// The ruleset, created in the parent.
    pub ruleset: Option<landlock::RulesetCreated>,
}

/// Installs `setup` to run in the command's child after `fork`.
pub fn before_exec(cmd: &mut Command, setup: ChildSetup) {
    let mut setup = Some(setup);
    // SAFETY: the closure runs in the forked child, where only async-signal-safe work is
    // allowed: it makes raw system calls (unshare, open/write of /proc files with paths and
    // contents prepared before the fork, prctl, landlock_restrict_self) and allocates nothing
    // on the success path; `take` moves the prepared values out without allocating.
    unsafe {
        cmd.pre_exec(move || {
            let Some(s) = setup.take() else { return Ok(()) };
            if s.unshare_net {
                use rustix::thread::UnshareFlags;
                let flags = if s.id_maps.is_some() {
                    UnshareFlags::NEWUSER | UnshareFlags::NEWNET
                } else {
                    UnshareFlags::NEWNET
                };
                rustix::thread::unshare_unsafe(flags)?;
                if let Some((uid_map, gid_map)) = &s.id_maps {
                    // The agent is non-dumpable, which makes its `/proc/self` files root's; the
                    // child (about to exec, which resets it anyway) must own them to map its ids.
                    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::Dumpable)?;
                    write_proc("/proc/self/setgroups", b"deny")?;
                    write_proc("/proc/self/uid_map", uid_map.as_bytes())?;
                    write_proc("/proc/self/gid_map", gid_map.as_bytes())?;
                }
            }
            if let Some(ruleset) = s.ruleset {
                ruleset.restrict_self().map_err(|_| std::io::Error::from_raw_os_error(libc::EPERM))?;
            }
            Ok(())
        });
    }
}

/// Writes `data` to a `/proc/self` file with raw system calls (no allocation).
fn write_proc(path: &str, data: &[u8]) -> std::io::Result<()> {
    use rustix::fs::{Mode, OFlags};
    let fd = rustix::fs::open(path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
    rustix::io::write(&fd, data)?;
    Ok(())
}
