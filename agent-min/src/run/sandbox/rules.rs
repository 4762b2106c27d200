//! The Landlock ruleset for one command: read (and execute) everywhere, write only where the
//! mode allows. Built in the agent before the command starts (opening the allowed directories);
//! the child only applies it.

#[cfg(feature = "sandbox")]
use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, ABI,
};
#[cfg(feature = "sandbox")]
use landlock::{PathBeneath, PathFd, Scope};

/// The Landlock ABI whose file-system rights are required: 3 adds `truncate` to 2's `refer`.
/// Where the kernel has them, ABI 5's device ioctls (no `TIOCSTI` into a terminal) and ABI 6's
/// scopes (no signal to, and no abstract socket of, a process outside) are handled too.
const HANDLED: ABI = ABI::V3;

/// Device files every command may write: discarding output, reading randomness. Not
/// `/dev/tty`: a command has no terminal, and typing into the person's is an escape.
#[cfg(feature = "sandbox")]
const WRITABLE_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"];

/// Whether the running kernel enforces Landlock; the reason when it does not.
pub(crate) fn available() -> Result<(), String> {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(HANDLED))
        .and_then(|r| r.create())
        .map(drop)
        .map_err(|e| e.to_string())
}

/// A ruleset allowing reads everywhere and writes beneath `writable` (which must exist;
/// missing ones are skipped). Fails, rather than running unconfined, if the kernel cannot
/// enforce it.
#[cfg(feature = "sandbox")]
pub(crate) fn ruleset(writable: &[PathBuf]) -> Result<RulesetCreated, String> {
    let read = AccessFs::from_read(HANDLED);
    let all = AccessFs::from_all(HANDLED);
    let mut rules = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .map(|r| r.set_compatibility(CompatLevel::BestEffort))
        .and_then(|r| r.handle_access(AccessFs::IoctlDev))
        .and_then(|r| r.scope(Scope::Signal | Scope::AbstractUnixSocket))
        .and_then(|r| r.create())
        .map_err(|e| format!("Landlock: {e}"))?
        .add_rule(PathBeneath::new(PathFd::new("/").map_err(|e| e.to_string())?, read))
        .map_err(|e| format!("Landlock: {e}"))?;
    for dev in WRITABLE_DEVICES {
        if let Ok(fd) = PathFd::new(dev) {
            rules = rules
                .add_rule(PathBeneath::new(fd, AccessFs::ReadFile | AccessFs::WriteFile))
                .map_err(|e| format!("Landlock: {e}"))?;
        }
    }
    for dir in writable.iter().filter(|d| Path::new(d).is_dir()) {
        let fd = PathFd::new(dir).map_err(|e| format!("cannot open {} for the sandbox: {e}", dir.display()))?;
        rules = rules.add_rule(PathBeneath::new(fd, all)).map_err(|e| format!("Landlock: {e}"))?;
    }
    Ok(rules)
}

/// Takes every file-system access away from the calling process for good (its open
/// descriptors keep working): a document extractor's own first step, before it parses what it
/// was given. Best effort: on a kernel without Landlock the process keeps its access, and the
/// spawner's limits still bound it. (Only the PDF extractor does: the cargo feature `pdf`.)
#[cfg_attr(not(feature = "pdf"), allow(dead_code))]
pub(crate) fn give_up_files() {
    let _ = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(HANDLED))
        .and_then(|r| r.create())
        .and_then(|r| r.restrict_self());
}

/// A Landlock domain that restricts nothing a program needs: it handles only the creation of
/// block devices. Being in a domain is the point: a process in one cannot ptrace, nor open
/// `/proc/PID/mem` of, a process outside it (Landlock's ptrace restriction, every
/// ABI). `None` on a kernel without Landlock (`agent-min sandbox check` says so). Root needs
/// no `no_new_privs` to enter it, so there `sudo` and the like keep working; anyone else's
/// children get it (the kernel's condition for entering a domain).
pub(crate) fn ptrace_scope() -> Option<RulesetCreated> {
    let root = rustix::process::geteuid().is_root();
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::MakeBlock)
        .and_then(|r| r.create())
        .map(|r| r.no_new_privs(!root))
        .ok()
}
