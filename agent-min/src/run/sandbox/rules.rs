//! The Landlock ruleset for one command: read (and execute) everywhere, write only where the
//! mode allows. Built in the agent before the command starts (opening the allowed directories);
//! the child only applies it.

use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, ABI,
};

/// The Landlock ABI whose file-system rights are handled: 3 adds `truncate` to 2's `refer`.
/// (ABI 5's device-ioctl right is left alone so terminals and `/dev/null` keep working.)
const HANDLED: ABI = ABI::V3;

/// Device files every command may write: discarding output, reading randomness, its terminal.
const WRITABLE_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"];

/// Whether the running kernel enforces Landlock; the reason when it does not.
pub fn available() -> Result<(), String> {
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
pub fn ruleset(writable: &[PathBuf]) -> Result<RulesetCreated, String> {
    let read = AccessFs::from_read(HANDLED);
    let all = AccessFs::from_all(HANDLED);
    let mut rules = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
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
