//! The Landlock ruleset for one command: read (and execute) everywhere but the devices, write
//! only where the mode allows. Built in the agent before the command starts (opening the
//! allowed directories); the child only applies it.

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

/// What else of `/dev` commands may read: POSIX shared memory. No other device: not a terminal
/// (`/dev/pts/*`, `/dev/ptmx`, `/dev/tty*`, `/dev/console`, the consoles' screens
/// `/dev/vcs*`), whose reader takes what the person types; not `/dev/input`, nor a disk.
#[cfg(feature = "sandbox")]
const READABLE_DEVICES: &[&str] = &["/dev/shm"];

/// Whether the running kernel enforces Landlock; the reason when it does not.
pub(crate) fn available() -> Result<(), String> {
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(HANDLED))
        .and_then(|r| r.create())
        .map(drop)
        .map_err(|e| e.to_string())
}

/// A ruleset allowing reads everywhere but in `/dev` (there only [`WRITABLE_DEVICES`] and
/// [`READABLE_DEVICES`]) and writes beneath `writable` (which must exist; missing ones are
/// skipped). Fails, rather than running unconfined, if the kernel cannot enforce it.
///
/// Landlock grants a right beneath a directory with no exception inside it, so `/` is not
/// granted whole: each of its entries is, but `/dev` (listing directories is allowed
/// everywhere; a name says nothing typed). The entries are those of the moment the command
/// starts. A `writable` directory holding `/dev` (a workspace at `/`) is granted alike.
#[cfg(feature = "sandbox")]
pub(crate) fn ruleset(writable: &[PathBuf]) -> Result<RulesetCreated, String> {
    let read = AccessFs::from_read(HANDLED);
    // No device node made where commands write (root's `mknod`): it would reach a terminal or
    // an input device as the one in `/dev` does.
    let write = AccessFs::from_all(HANDLED) & !(AccessFs::MakeChar | AccessFs::MakeBlock);
    let mut rules = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(HANDLED))
        .map(|r| r.set_compatibility(CompatLevel::BestEffort))
        .and_then(|r| r.handle_access(AccessFs::IoctlDev))
        .and_then(|r| r.scope(Scope::Signal | Scope::AbstractUnixSocket))
        .and_then(|r| r.create())
        .map_err(|e| format!("Landlock: {e}"))?;
    let dev = std::fs::canonicalize("/dev").unwrap_or_else(|_| PathBuf::from("/dev"));
    grant(&mut rules, Path::new("/"), AccessFs::ReadDir.into())?;
    for place in outside(Path::new("/"), &dev) {
        let _ = grant(&mut rules, &place, read); // one that cannot be opened stays out of reach
    }
    for dev in WRITABLE_DEVICES.iter().filter(|d| Path::new(d).exists()) {
        grant(&mut rules, Path::new(dev), AccessFs::ReadFile | AccessFs::WriteFile)?;
    }
    for dir in READABLE_DEVICES.iter().filter(|d| Path::new(d).exists()) {
        grant(&mut rules, Path::new(dir), read)?;
    }
    for dir in writable.iter().filter(|d| Path::new(d).is_dir()) {
        if dev.starts_with(dir) {
            for place in outside(dir, &dev) {
                let _ = grant(&mut rules, &place, write);
            }
        } else {
            grant(&mut rules, dir, write)?;
        }
    }
    Ok(rules)
}

/// Adds the rule granting `access` beneath `path` (a file gets the rights a file can have).
#[cfg(feature = "sandbox")]
fn grant(rules: &mut RulesetCreated, path: &Path, access: landlock::BitFlags<AccessFs>) -> Result<(), String> {
    let fd = PathFd::new(path).map_err(|e| format!("cannot open {} for the sandbox: {e}", path.display()))?;
    let access = if path.is_dir() { access } else { access & AccessFs::from_file(HANDLED) };
    rules.add_rule(PathBeneath::new(fd, access)).map(drop).map_err(|e| format!("Landlock: {e}"))
}

/// The entries of `dir` (which holds `dev`) by their real paths, but those leading into `dev`
/// or to a directory holding it (a link to `/`).
#[cfg(feature = "sandbox")]
fn outside(dir: &Path, dev: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| std::fs::canonicalize(e.path()).ok())
        .filter(|real| !real.starts_with(dev) && !dev.starts_with(real))
        .collect()
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
