//! What a command can reach. Cline has no sandbox; this is agent-min's, after codex's.
//!
//! Owns: the environment policy ([`mod@env`]: no variable whose name says `KEY`, `SECRET` or
//! `TOKEN`), the agent's own hardening once its key is read ([`process`]: the key wiped from
//! its environment in place, non-dumpable), the Landlock rules ([`rules`]: read everywhere
//! but `/dev` — no terminal —, write only in the workspace, the temp directory and
//! `--sandbox-allow-write` directories),
//! the network namespace that cuts commands off the network, the directories outside any
//! project that later runs trust, kept from commands and tools when they lie within reach
//! ([`guarded`]), and what the model is told when the sandbox may be why a command failed
//! ([`notice`]). The only `unsafe` is in `sys.rs`.
//! May use: [`crate::run::ui::redact`], [`crate::run::ui::interrupt`] (the private temp directory
//! removed on Ctrl-C), `crate::run::built` (the refusal when the feature is off).
//!
//! Without the cargo feature `sandbox` (the minimal build) a sandbox is refused, never skipped:
//! `--sandbox` other than `off`, and `--yolo`'s default, stop the run before it starts
//! ([`Choice::resolve`]), and `crate::run::spawn` refuses to start a command under a sandbox
//! policy. The environment policy, the agent's own hardening and the ptrace-only Landlock
//! domain of every child protect the key, not the workspace: they are in every build.
//!
//! How a child is actually started (and this policy applied to it) is [`crate::run::spawn`]'s.
//!
//! The policy is set from the command line ([`configure`]) before the first command, made
//! current again by each task at each prompt (an editor's sessions each have their own:
//! [`activate`]), and read by `execute_command` ([`current`]).

pub(crate) mod env;
pub(crate) mod guarded;
pub(crate) mod notice;
pub(crate) mod process;
pub(crate) mod rules;
mod sys;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

pub(crate) use env::EnvPolicy;

/// How commands are confined (`--sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// No confinement (the default without `--yolo`, where a person approves every command).
    Off,
    /// Read everywhere (but devices), write nowhere (except `/dev/null` and the like).
    ReadOnly,
    /// Read everywhere (but devices), write in the workspace, the temp directory and `--sandbox-allow-write`
    /// directories (the default under `--yolo`).
    WorkspaceWrite,
}

impl Mode {
    /// The mode named on the command line.
    pub(crate) fn parse(s: &str) -> Result<Mode, String> {
        match s {
            // codex's name for the same thing.
            "off" | "danger-full-access" => Ok(Mode::Off),
            "read-only" => Ok(Mode::ReadOnly),
            "workspace-write" => Ok(Mode::WorkspaceWrite),
            other => {
                Err(format!("--sandbox {other:?}: expected workspace-write, read-only or off (danger-full-access)"))
            }
        }
    }

    /// Its command-line name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::ReadOnly => "read-only",
            Mode::WorkspaceWrite => "workspace-write",
        }
    }
}

/// Everything that decides what a command can reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Policy {
    /// File-system confinement.
    pub mode: Mode,
    /// Where writes are allowed under [`Mode::WorkspaceWrite`] (canonical directories).
    pub writable: Vec<PathBuf>,
    /// Whether commands keep the network under a sandbox (`--sandbox-network`).
    pub network: bool,
    /// Which variables commands inherit.
    pub env: EnvPolicy,
    /// The run's private temporary directory, commands' `TMPDIR` (under `workspace-write`):
    /// the system's `/tmp` is not writable to them, so nothing there (another run's state, a
    /// socket) can be planted or changed.
    pub tmp: Option<PathBuf>,
    /// The directories that decide what later runs trust ([`guarded`]): those that lie where
    /// the tools or commands may write are read-only to sandboxed commands and never written by
    /// the file tools ([`Policy::guarded`]).
    pub trusted: Vec<PathBuf>,
    /// The files that decide where such a directory is (`user-dirs.dirs`), guarded alike.
    pub deciding: Vec<PathBuf>,
}

impl Default for Policy {
    /// No sandbox, the default environment policy.
    fn default() -> Self {
        Policy {
            mode: Mode::Off,
            writable: Vec::new(),
            network: true,
            env: EnvPolicy::default(),
            tmp: None,
            trusted: Vec::new(),
            deciding: Vec::new(),
        }
    }
}

/// The command-line choices, before they are checked against the kernel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Choice {
    /// `--sandbox MODE`, if given.
    pub mode: Option<Mode>,
    /// `--sandbox-allow-write DIR` (repeatable).
    pub allow_write: Vec<PathBuf>,
    /// `--sandbox-network`.
    pub network: bool,
    /// `--env-keep` / `--env-drop`.
    pub env: EnvPolicy,
}

impl Choice {
    /// The policy for a run in `workspace`: the mode given, else `workspace-write` under
    /// `--yolo` and `off` otherwise. A sandbox the kernel cannot enforce is an error naming
    /// the way out (`--sandbox off`, given explicitly) — never a silent fallback.
    pub(crate) fn resolve(&self, yolo: bool, workspace: &Path) -> Result<Policy, String> {
        let mode = self.mode.unwrap_or(if yolo { Mode::WorkspaceWrite } else { Mode::Off });
        let mut policy = Policy { mode, env: self.env.clone(), ..Policy::default() };
        if mode == Mode::Off {
            return Ok(policy);
        }
        let given = if self.mode.is_some() { "--sandbox" } else { "--yolo (which sandboxes commands by default)" };
        if !cfg!(feature = "sandbox") {
            let why = crate::run::built::not_built_in("sandbox", "the command sandbox");
            return Err(format!(
                "{given} asks for the command sandbox, but {why}. Pass --sandbox off to run commands unconfined, knowingly"
            ));
        }
        if let Err(why) = rules::available() {
            return Err(format!(
                "{given} needs Landlock, which this kernel does not provide ({why}); commands cannot be confined here. Pass --sandbox off to run them unconfined, knowingly"
            ));
        }
        policy.network = self.network;
        if mode == Mode::WorkspaceWrite {
            policy.writable.push(workspace.to_path_buf());
            policy.tmp = Some(private_tmp()?);
            for dir in &self.allow_write {
                let real = std::fs::canonicalize(dir)
                    .map_err(|e| format!("--sandbox-allow-write {}: {e}; give an existing directory", dir.display()))?;
                policy.writable.push(real);
            }
        }
        Ok(policy)
    }
}

/// Creates the run's private temporary directory (mode 0700) in the system's, removed when the
/// agent ends ([`remove_private_tmp`], or the interrupt handler).
fn private_tmp() -> Result<PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::fs::canonicalize(std::env::temp_dir()).unwrap_or_else(|_| std::env::temp_dir());
    remove_stale_tmps(&base);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let dir = base.join(format!("agent-min-tmp-{}-{nanos:08x}", std::process::id()));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| format!("cannot create a temporary directory for commands ({}): {e}", dir.display()))?;
    std::mem::forget(crate::run::ui::interrupt::track_file(dir.clone()));
    TMPS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(dir.clone());
    Ok(dir)
}

/// Removes the private temporary directories of runs that ended without removing theirs (a
/// `kill -9`): ours (same owner), named for a process that no longer exists.
fn remove_stale_tmps(base: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(base) else { return };
    let me = rustix::process::geteuid().as_raw();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("agent-min-tmp-")).and_then(|r| r.split('-').next())
        else {
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else { continue };
        let alive = Path::new("/proc").join(pid).exists();
        if meta.is_dir() && meta.uid() == me && !alive && pid.parse::<u32>().is_ok() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Removes the private temporary directories made for commands (the run's, or each editor
/// session's). Call when the agent ends.
pub(crate) fn remove_private_tmp() {
    for dir in TMPS.lock().unwrap_or_else(std::sync::PoisonError::into_inner).drain(..) {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// The policy commands run under now: the run's, or in an editor the policy of the session
/// whose turn it is (each has its own workspace).
static POLICY: RwLock<Option<Arc<Policy>>> = RwLock::new(None);

/// The private temporary directories made.
static TMPS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Makes `policy` the one for this process's commands ([`activate`]) and hardens the process
/// (its secrets wiped from its environment, non-dumpable; again for a later editor session,
/// which changes nothing more). Returns the line to show when commands are sandboxed.
pub(crate) fn configure(policy: Policy) -> Result<Option<String>, String> {
    process::harden(&policy.env)?;
    let line = (policy.mode != Mode::Off).then(|| policy.describe());
    activate(Arc::new(policy));
    Ok(line)
}

/// Makes `policy` the one commands run under from now on: an editor's session makes its own
/// current for its turn. (Once it was set once per process: a second session's commands ran
/// under the first's, which let them write the first workspace's `.git` and not their own.)
pub(crate) fn activate(policy: Arc<Policy>) {
    *POLICY.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(policy);
}

/// The policy commands run under ([`Policy::default`], unconfined, until [`configure`] is
/// called — without fixing it: what looks before that, a probe of the model's server, must
/// not keep the real policy from being set).
pub(crate) fn current() -> Arc<Policy> {
    static OFF: OnceLock<Arc<Policy>> = OnceLock::new();
    let now = POLICY.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
    now.unwrap_or_else(|| OFF.get_or_init(|| Arc::new(Policy::default())).clone())
}

impl Policy {
    /// Guards the directories `candidates` and the `files` deciding where they are, in every
    /// workspace (an editor's sessions each have their own) — those of them within the reach of
    /// a workspace's tools and commands ([`Policy::guarded`]); guarded at once for `workspace`.
    pub(crate) fn guard(&mut self, candidates: &[PathBuf], files: &[PathBuf], workspace: &Path) {
        self.trusted = candidates.to_vec();
        self.deciding = files.to_vec();
        self.guarded(workspace);
    }

    /// The guarded places for `workspace` ([`guarded::inside`]):
    /// those that lie inside it or a directory commands may write (real paths; under
    /// `workspace-write`, created when missing so that they can be bound read-only), and there
    /// too what a link inside them leads to ([`guarded::links_within`]).
    pub(crate) fn guarded(&self, workspace: &Path) -> Vec<PathBuf> {
        let mut roots = vec![workspace.to_path_buf()];
        roots.extend(self.writable.iter().cloned());
        let create = self.mode == Mode::WorkspaceWrite;
        let mut out = guarded::inside(&self.trusted, guarded::Place::Dir, &roots, create);
        out.extend(guarded::inside(&self.deciding, guarded::Place::File, &roots, create));
        // What a link in them leads to, if within reach (made, empty, where it is missing, as
        // the files above are: else a command could make it).
        let links = guarded::links_within(&self.trusted);
        for led in guarded::inside(&links, guarded::Place::File, &roots, create) {
            if !out.contains(&led) {
                out.push(led);
            }
        }
        out
    }

    /// Whether `path` (real) lies in a place guarded for `workspace`: which one.
    pub(crate) fn guarded_dir(&self, workspace: &Path, path: &Path) -> Option<PathBuf> {
        self.guarded(workspace).into_iter().find(|g| path.starts_with(g))
    }

    /// One line for the start of a run, saying how commands are confined.
    pub(crate) fn describe(&self) -> String {
        match self.mode {
            Mode::Off => "Commands run unconfined (--sandbox off).".to_string(),
            mode => {
                let net = if self.network { "network on" } else { "network off" };
                let dirs: Vec<String> = self.writable.iter().map(|d| d.display().to_string()).collect();
                let writes = if dirs.is_empty() {
                    "no writes".to_string()
                } else {
                    format!("writes only in {}", dirs.join(", "))
                };
                format!("Commands run sandboxed (--sandbox {}: {writes}; {net}).", mode.name())
            }
        }
    }
}

/// Parses the sandbox flag `--NAME` (taking its value from `p`) into `choice`.
pub(crate) fn flag(choice: &mut Choice, name: &str, p: &mut lexopt::Parser) -> Result<(), String> {
    let mut value = || {
        p.value()
            .map_err(|e| e.to_string())
            .and_then(|v| v.into_string().map_err(|v| format!("--{name}: {v:?} is not UTF-8")))
    };
    match name {
        "sandbox" => choice.mode = Some(Mode::parse(&value()?)?),
        "sandbox-allow-write" => choice.allow_write.push(value()?.into()),
        "sandbox-network" => choice.network = true,
        "env-keep" => choice.env.keep.push(value()?),
        "env-drop" => choice.env.drop.push(value()?),
        other => return Err(format!("--{other} is not a sandbox flag")),
    }
    Ok(())
}

#[cfg(all(test, not(feature = "sandbox")))]
mod not_built_in {
    use super::*;

    #[test]
    fn without_the_feature_a_sandbox_is_refused_and_off_is_said_explicitly() {
        let ws = std::env::temp_dir();
        let asked = Choice { mode: Some(Mode::WorkspaceWrite), ..Default::default() };
        let e = asked.resolve(false, &ws).unwrap_err();
        assert!(e.starts_with("--sandbox asks for the command sandbox") && e.contains("`sandbox`"), "{e}");
        let e = Choice { mode: Some(Mode::ReadOnly), ..Default::default() }.resolve(true, &ws).unwrap_err();
        assert!(e.contains("--sandbox off"), "{e}");
        // --yolo sandboxes by default: refused too, never run unconfined instead.
        let e = Choice::default().resolve(true, &ws).unwrap_err();
        assert!(e.starts_with("--yolo (which sandboxes commands by default)") && e.contains("`sandbox`"), "{e}");
        // Unconfined only when asked for, and by default without --yolo (a person approves each command).
        let off = Choice { mode: Some(Mode::Off), ..Default::default() };
        assert_eq!(off.resolve(true, &ws).unwrap().mode, Mode::Off);
        assert_eq!(Choice::default().resolve(false, &ws).unwrap().mode, Mode::Off);
    }
}
