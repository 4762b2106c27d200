//! The one way agent-min starts a child process. Every `std::process::Command` of the crate is
//! made here ([`command`]), under a named [`Policy`] that decides, in one table, its
//! environment, its process group or session, whether it dies with the agent (even by
//! `kill -9`), and its sandbox. Callers add arguments, pipes and variables of their own and
//! spawn it; they never set up a child themselves. A test keeps `Command::new` out of every
//! other file.
//!
//! | policy | environment | group | dies with the agent | confinement |
//! |---|---|---|---|---|
//! | [`Policy::Curl`] | no API key | the agent's | `PR_SET_PDEATHSIG` | — (the key's reader) |
//! | [`Policy::Git`] | only what the caller sets, plus the trusted `PATH` | the agent's | `PR_SET_PDEATHSIG` | ptrace scope |
//! | [`Policy::Editor`] | no API key; the trusted `PATH` | the agent's (the terminal's) | `PR_SET_PDEATHSIG` | — (the person's own) |
//! | [`Policy::Hook`] | no API key; the trusted `PATH` | its own | watchdog | ptrace scope |
//! | [`Policy::McpServer`] | a minimal one with the trusted `PATH`, plus its config's | its own | both | ptrace scope |
//! | [`Policy::Extractor`] | none | the agent's | `PR_SET_PDEATHSIG` | ptrace scope, [`EXTRACTOR_LIMITS`]; it gives up file access itself |
//! | [`Policy::Command`] | the sandbox's, a private `TMPDIR` | its own session | watchdog | the sandbox, or ptrace scope under `--sandbox off` |
//!
//! The trusted `PATH` ([`trusted_path`]) is the agent's without the directories a command or an
//! edit may write; every bare program name is looked up on it.
//!
//! "ptrace scope" is a Landlock domain that restricts nothing on the file system: a process
//! in it cannot ptrace, nor open `/proc/PID/mem` of, any process outside it —
//! such as curl holding the API key in its memory. The sandbox is [`crate::run::sandbox`]'s
//! policy; the system calls are in `sys.rs`, the only `unsafe` here.
//!
//! May use: [`crate::run::sandbox`], [`crate::run::ui::redact`], `crate::run::built`,
//! [`crate::run::trusted_file`], `crate::run::places` (the home directory: a workspace holding
//! it is not passed over in the agent's own lookups).

#[cfg(feature = "sandbox")]
mod seccomp;
mod sys;

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use crate::run::sandbox::{self, rules, Mode};
use crate::run::ui::redact;
pub(crate) use sys::landlock_abi;
use sys::{ChildSetup, Group};

/// Why a child is started; each one gets its fixed set of protections (see the module table).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Policy<'a> {
    /// curl for one HTTP request; the request headers (with the key) arrive on descriptor
    /// `headers_fd`, which curl alone inherits.
    Curl {
        /// Opened close-on-exec by the caller; inherited by curl only.
        headers_fd: i32,
    },
    /// git for the checkpoints' shadow repository, or read-only in the person's repository
    /// (an `@git-changes` or commit mention), with [`GIT_SAFETY_CONFIG`] and [`GIT_SAFETY_ENV`].
    Git,
    /// The person's `$EDITOR` on a proposed edit, in the foreground of the terminal.
    Editor,
    /// A project hook script (approved by the person).
    Hook,
    /// A stdio MCP server from the person's settings.
    McpServer,
    /// agent-min itself (`/proc/self/exe`) taking a document's text apart: a file the parser
    /// panics, loops or swells on ends this child, never the agent. (Only with the cargo
    /// feature `pdf`.)
    #[cfg_attr(not(feature = "pdf"), allow(dead_code))]
    Extractor,
    /// `execute_command`: the model's command, under `sandbox`, in `workspace`.
    Command {
        /// The run's sandbox policy.
        sandbox: &'a sandbox::Policy,
        /// The workspace root, whose `.git`, `.clinerules/hooks` and `.cline` stay read-only.
        workspace: &'a Path,
    },
}

/// Variables an MCP server gets from ours (the SDK's `getDefaultEnvironment`); its config's
/// `env` is added to these. Nothing else of ours — no API key — reaches the server.
const MINIMAL_ENV: &[&str] = &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];

/// The limits of a [`Policy::Extractor`] child, (resource, soft, hard): after a minute of CPU
/// time it gets `SIGXCPU` (a second later `SIGKILL`); past 4 GiB of address space its
/// allocations fail (and it aborts); it leaves no core file. A document that takes more to
/// read is refused.
pub(crate) const EXTRACTOR_LIMITS: &[(rustix::process::Resource, u64, u64)] = &[
    (rustix::process::Resource::Cpu, 60, 61),
    (rustix::process::Resource::As, 4 << 30, 4 << 30),
    (rustix::process::Resource::Core, 0, 0),
];

/// Directories of a workspace that decide what runs outside the sandbox later (git's hooks
/// and config, Cline's hooks, the project's MCP servers): read-only to sandboxed commands.
pub(crate) const PROTECTED: &[&str] = &[".git", ".clinerules/hooks", ".cline"];

/// What every git agent-min runs is given on its command line, whatever a repository's own
/// config says: no hooks, no signing, no file-system monitor, no external diff, no pager (the
/// checkpoints' git, and git in the person's repository for an `@git-changes` mention).
pub(crate) const GIT_SAFETY_CONFIG: &[&str] = &[
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "commit.gpgSign=false",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "diff.external=",
    "-c",
    "core.pager=cat",
];

/// The environment that goes with [`GIT_SAFETY_CONFIG`] (on top of [`Policy::Git`]'s empty
/// one): no user or system config, never a prompt for credentials, C messages, and no lock
/// taken by a command that only reads (`status` and `diff` refresh the index when they can: a
/// reader killed then leaves an `index.lock`, and one running takes the lock from a writer).
pub(crate) const GIT_SAFETY_ENV: &[(&str, &str)] = &[
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("LC_ALL", "C"),
    ("GIT_OPTIONAL_LOCKS", "0"),
];

/// Finds `git` on `PATH`; `None` if it is not installed.
pub(crate) fn find_git() -> Option<std::path::PathBuf> {
    find_program("git")
}

/// Finds the agent's own program `name` (`curl`, `git`) on `PATH` (without one,
/// `/bin:/usr/bin`, as `execvp` searches), in its absolute directories only and outside the
/// places commands or the file tools may write ([`distrust_programs_in`], the sandbox's
/// writable directories and its temporary one); `None` if it is not there.
pub(crate) fn find_program(name: &str) -> Option<std::path::PathBuf> {
    first_executable(trusted_dirs(&agents_path()).into_iter(), name)
}

/// The agent's `PATH` as the children it trusts get it — hooks, MCP servers, the editor, git —
/// and as bare program names are looked up for any child: the directories [`find_program`]
/// searches, each by its real path. A `#!/usr/bin/env python3` hook, an `npx` server (whose
/// `#!/usr/bin/env node` looks on its `PATH`) or a hook calling `jq` by name would otherwise
/// run what a sandboxed command wrote into an activated `.venv/bin`, outside the sandbox.
pub(crate) fn trusted_path() -> std::ffi::OsString {
    // Never empty: an empty `PATH` searches the working directory (execvp, `sh`) — the
    // workspace, for a hook. A real path holding `:` cannot be a `PATH` entry.
    let dirs = trusted_dirs(&agents_path()).into_iter().filter(|d| !d.as_os_str().as_encoded_bytes().contains(&b':'));
    let path = std::env::join_paths(dirs).unwrap_or_default();
    if path.is_empty() {
        "/usr/bin:/bin".into()
    } else {
        path
    }
}

/// The absolute directories of `path` outside the places commands or the file tools may
/// write, by their real paths (a link into a workspace is passed over, and a program found is
/// named by the directory checked, not by a link that could be swapped after the check).
fn trusted_dirs(path: &OsStr) -> Vec<std::path::PathBuf> {
    let policy = sandbox::current();
    let mut untrusted = UNTRUSTED.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
    untrusted.extend(policy.writable.iter().chain(&policy.tmp).cloned());
    let home = crate::run::places::home_dir().and_then(|h| h.canonicalize().ok());
    untrusted.retain(|place| worth_distrusting(place, home.as_deref()));
    dirs_outside(path, &untrusted)
}

/// Whether `place` can be passed over when looking for the agent's programs: not `/` nor a
/// folder holding the home directory (a workspace there — `cd / && agent-min run` in a
/// container, a run in `~` — holds every `PATH` directory, `~/.local/bin` and `~/.cargo/bin`
/// too, and no curl or git would be found at all).
fn worth_distrusting(place: &Path, home: Option<&Path>) -> bool {
    place != Path::new("/") && !home.is_some_and(|h| h.starts_with(place))
}

/// The places programs are never taken from as the agent's own: the workspaces of the run.
static UNTRUSTED: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Makes [`find_program`] pass over `PATH` directories inside `dir` (a workspace): an
/// activated `.venv/bin` or `node_modules/.bin` on `PATH` would otherwise give the agent a
/// `curl` a command or an edit put there — handed the key's pipe — or a `git` run unsandboxed.
pub(crate) fn distrust_programs_in(dir: &Path) {
    let real = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let mut places = UNTRUSTED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !places.contains(&real) {
        places.push(real);
    }
}

/// The absolute directories of `path` not inside one of `untrusted` (real paths), each by its
/// real path, without repeats.
fn dirs_outside(path: &OsStr, untrusted: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    let mut dirs: Vec<std::path::PathBuf> = Vec::new();
    for d in std::env::split_paths(path).filter(|d| d.is_absolute()) {
        let Ok(real) = d.canonicalize() else { continue };
        if !untrusted.iter().any(|u| real.starts_with(u)) && !dirs.contains(&real) {
            dirs.push(real);
        }
    }
    dirs
}

/// The agent's own `PATH`; without one, `/bin:/usr/bin`, as `execvp` searches.
fn agents_path() -> std::ffi::OsString {
    std::env::var_os("PATH").unwrap_or_else(|| "/bin:/usr/bin".into())
}

/// The `PATH` a child given the variables `env` is looked up on: its own when `env` sets one
/// (Node's `spawn` looks in the child's environment), else the agent's [`trusted_path`].
pub(crate) fn path_for(env: &[(String, String)]) -> std::ffi::OsString {
    env.iter().rev().find(|(k, _)| k == "PATH").map_or_else(trusted_path, |(_, p)| p.into())
}

/// The first executable `name` in the absolute directories of `path` (a `PATH` value: a child's
/// own, which its settings give).
pub(crate) fn program_in(path: &OsStr, name: impl AsRef<std::path::Path>) -> Option<std::path::PathBuf> {
    // Only absolute directories: a relative or empty entry (`.`, `node_modules/.bin`) would find
    // a program the workspace holds — a `curl` given the key's pipe, a `git` or `sh` run
    // outside the sandbox.
    first_executable(std::env::split_paths(path), name)
}

/// The first executable `name` in the absolute ones of `dirs`.
fn first_executable(
    dirs: impl Iterator<Item = std::path::PathBuf>,
    name: impl AsRef<std::path::Path>,
) -> Option<std::path::PathBuf> {
    dirs.filter(|d| d.is_absolute()).map(|d| d.join(name.as_ref())).find(|p| {
        use std::os::unix::fs::PermissionsExt;
        p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// A `Command` for `program` under `policy`, ready for the caller's arguments and pipes: a
/// bare name is looked up as [`find_program`] does. Fails when it is not found there or a
/// sandbox cannot be prepared (never by running unconfined, or a workspace's program, instead).
pub(crate) fn command(program: impl AsRef<OsStr>, policy: Policy<'_>) -> Result<Command, String> {
    command_on(&trusted_path(), program, policy)
}

/// As [`command`], with a bare name looked up in the absolute directories of `path` (a child's
/// own `PATH`, which its settings give: Node's `spawn` looks there, in the child's environment).
pub(crate) fn command_on(path: &OsStr, program: impl AsRef<OsStr>, policy: Policy<'_>) -> Result<Command, String> {
    let program = program.as_ref();
    let mut cmd = if std::path::Path::new(program).components().count() == 1 && !program.is_empty() {
        let name = program.to_string_lossy();
        let found = program_in(path, name.as_ref());
        let mut cmd =
            Command::new(found.ok_or_else(|| format!("`{name}` was not found in PATH's absolute directories"))?);
        // Named as before, as the shell names itself in its errors (`sh: 1: Syntax error…`).
        std::os::unix::process::CommandExt::arg0(&mut cmd, program);
        cmd
    } else {
        Command::new(program)
    };
    let mut setup = ChildSetup::plain();
    match policy {
        Policy::Curl { headers_fd } => {
            without_keys(&mut cmd);
            setup.die_with_agent = true;
            setup.inherit_fd = Some(headers_fd);
        }
        Policy::Git => {
            cmd.env_clear().env("PATH", trusted_path());
            setup.die_with_agent = true;
            setup.ruleset = rules::ptrace_scope();
        }
        Policy::Editor => {
            without_keys(&mut cmd);
            cmd.env("PATH", trusted_path());
            setup.die_with_agent = true;
        }
        Policy::Hook => {
            without_keys(&mut cmd);
            cmd.env("PATH", trusted_path());
            (setup.group, setup.watchdog) = (Group::Own, true);
            setup.ruleset = rules::ptrace_scope();
        }
        Policy::McpServer => {
            cmd.env_clear();
            for k in MINIMAL_ENV {
                if let Some(v) = std::env::var_os(k) {
                    cmd.env(k, v);
                }
            }
            // Its settings' `env` may give a `PATH` of its own (added after this).
            cmd.env("PATH", trusted_path());
            (setup.group, setup.watchdog, setup.die_with_agent) = (Group::Own, true, true);
            setup.ruleset = rules::ptrace_scope();
        }
        Policy::Extractor => {
            cmd.env_clear();
            setup.die_with_agent = true;
            setup.ruleset = rules::ptrace_scope();
            setup.limits = EXTRACTOR_LIMITS;
        }
        Policy::Command { sandbox, workspace } => {
            for name in sandbox.env.withheld() {
                cmd.env_remove(name);
            }
            if let Some(tmp) = &sandbox.tmp {
                cmd.env("TMPDIR", tmp);
            }
            // Cline's command environment (`StandaloneTerminalProcess`): no pager, and no
            // editor waiting for a terminal the command does not have (`git commit` without
            // `-m` ends at once instead of at the timeout).
            cmd.env("TERM", "xterm-256color")
                .env("PAGER", "cat")
                .env("GIT_PAGER", "cat")
                .env("SYSTEMD_PAGER", "")
                .env("MANPAGER", "cat");
            if editor_unset(std::env::var_os("EDITOR")) {
                cmd.env("EDITOR", "cat");
            }
            (setup.group, setup.watchdog) = (Group::Session, true);
            confine(&mut setup, sandbox, workspace)?;
        }
    }
    sys::before_exec(&mut cmd, setup);
    Ok(cmd)
}

/// Whether a command gets `EDITOR=cat`: as Cline's `process.env.EDITOR || "cat"`, also for an
/// empty `EDITOR` (git would fall back to its own editor, waiting for a terminal).
fn editor_unset(editor: Option<std::ffi::OsString>) -> bool {
    editor.is_none_or(|e| e.is_empty())
}

/// Whether `path` is a file a kernel cannot execute — neither `#!` nor ELF at its start —
/// which the C library's `execvp` (used for every child with a pre-exec step) would then hand
/// to `/bin/sh` instead of failing with `ENOEXEC`. Callers refuse such a file themselves.
pub(crate) fn lacks_interpreter_line(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 4];
    let Ok(n) = std::fs::File::open(path).and_then(|mut f| f.read(&mut head)) else { return false };
    !(head[..n].starts_with(b"#!") || head[..n] == *b"\x7fELF")
}

/// The agent's own keys never reach a child (they are wiped from the agent's environment
/// early, but `agent-min mcp list` and the like keep them).
fn without_keys(cmd: &mut Command) {
    for k in redact::KEY_VARS {
        cmd.env_remove(k);
    }
}

/// A command's sandbox: Landlock, and unless `--sandbox off` the network namespace, the
/// read-only protected directories and the seccomp filter.
fn confine(setup: &mut ChildSetup, sandbox: &sandbox::Policy, workspace: &Path) -> Result<(), String> {
    if sandbox.mode == Mode::Off {
        setup.ruleset = rules::ptrace_scope();
        return Ok(());
    }
    sandboxed(setup, sandbox, workspace)
}

/// Built without the cargo feature `sandbox`: a command that was to be sandboxed does not run.
#[cfg(not(feature = "sandbox"))]
fn sandboxed(_: &mut ChildSetup, _: &sandbox::Policy, _: &Path) -> Result<(), String> {
    Err(crate::run::built::not_built_in("sandbox", "the command sandbox"))
}

/// Landlock, the read-only protected directories, the network namespace, the seccomp filter.
#[cfg(feature = "sandbox")]
fn sandboxed(setup: &mut ChildSetup, sandbox: &sandbox::Policy, workspace: &Path) -> Result<(), String> {
    use std::path::PathBuf;
    let mut writable: Vec<PathBuf> = Vec::new();
    if sandbox.mode == Mode::WorkspaceWrite {
        writable.extend(sandbox.writable.iter().cloned());
        writable.extend(sandbox.tmp.iter().cloned());
        setup.read_only = protected(workspace, &sandbox.guarded(workspace), &writable)?;
    }
    setup.masked = environ_holding(&crate::run::ui::redact::secrets());
    setup.ruleset = Some(rules::ruleset(&writable)?);
    setup.unshare_net = !sandbox.network;
    if rustix::process::geteuid().as_raw() != 0 {
        let (uid, gid) = (rustix::process::geteuid().as_raw(), rustix::process::getegid().as_raw());
        setup.id_maps = Some((format!("{uid} {uid} 1"), format!("{gid} {gid} 1")));
    }
    setup.seccomp = seccomp::deny_unix_sockets();
    Ok(())
}

/// The [`PROTECTED`] entries that exist in `workspace`, the `.git` of every repository nested
/// in it ([`nested_git`]), and the `guarded` directories (`sandbox::guarded`), as read-only
/// bind mounts; for an entry that is a link, where it leads ([`link_target`]); for a `.git`
/// that is a file, the git directory it names ([`gitfile_dirs`]).
#[cfg(feature = "sandbox")]
fn protected(
    workspace: &Path,
    guarded: &[std::path::PathBuf],
    writable: &[std::path::PathBuf],
) -> Result<Vec<sys::ReadOnly>, String> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let mut out = Vec::new();
    let paths =
        PROTECTED.iter().map(|rel| workspace.join(rel)).chain(nested_git(workspace)).chain(guarded.iter().cloned());
    let mut resolved = Vec::new();
    for path in paths {
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        // A `.git` file's git directory, read through a link as git reads it.
        let dirs = if path.is_file() { gitfile_dirs(&path, writable) } else { Vec::new() };
        let path = if meta.file_type().is_symlink() {
            match link_target(&path, writable) {
                Some(target) => target,
                None => continue,
            }
        } else {
            path
        };
        for path in std::iter::once(path).chain(dirs) {
            if !resolved.contains(&path) {
                resolved.push(path);
            }
        }
    }
    for path in resolved {
        let flags = rustix::fs::statvfs(&path).map_err(|e| format!("{}: {e}", path.display()))?.f_flag.bits();
        let locked = flags
            & (libc::ST_NOSUID
                | libc::ST_NODEV
                | libc::ST_NOEXEC
                | libc::ST_NOATIME
                | libc::ST_NODIRATIME
                | libc::ST_RELATIME);
        let path = CString::new(path.as_os_str().as_bytes()).map_err(|_| format!("{}: a NUL byte", path.display()))?;
        out.push(sys::ReadOnly { path, locked: locked as libc::c_ulong });
    }
    Ok(out)
}

/// Where the link `path` leads, when that is a directory or file commands could otherwise write
/// (inside one of the `writable` directories): Android's `repo` makes every `.git` a link into
/// `.repo/`, and a command writing through it planted hooks and config that git then ran
/// outside the sandbox. A target elsewhere is left alone: it is not writable to commands, and
/// binding it (say `/`) would only cost.
#[cfg(feature = "sandbox")]
fn link_target(path: &Path, writable: &[std::path::PathBuf]) -> Option<std::path::PathBuf> {
    let target = std::fs::canonicalize(path).ok()?;
    writable.iter().any(|w| target.starts_with(w)).then_some(target)
}

/// The most of a `.git` file (or a `commondir`) read: git's own limit for a `.git` file.
#[cfg(feature = "sandbox")]
const GITFILE_BYTES: u64 = 1 << 20;

/// For a `.git` that is a file — `git init --separate-git-dir`, a worktree, a submodule — the
/// directory its `gitdir:` names and that directory's `commondir`, where git finds the hooks
/// and config it runs, when they are inside one of the `writable` directories (a directory
/// elsewhere is not writable to commands). Read as git reads them (`read_gitfile_gently`,
/// `get_common_dir_noenv`): the whole file but its trailing line ends, a relative `gitdir:`
/// from the directory of the `.git` as named (a link's own), a relative `commondir` from the
/// git directory.
#[cfg(feature = "sandbox")]
fn gitfile_dirs(dot_git: &Path, writable: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    use crate::run::trusted_file::{self, Links};
    use std::os::unix::ffi::OsStrExt;
    // The file's bytes without the line ends it ends with.
    let content = |path: &Path| -> Option<Vec<u8>> {
        let mut bytes = trusted_file::read(path, Links::Follow, GITFILE_BYTES).ok()?;
        let end = bytes.iter().rposition(|&b| b != b'\n' && b != b'\r').map_or(0, |i| i + 1);
        bytes.truncate(end);
        Some(bytes)
    };
    let path_of = |bytes: &[u8]| std::path::PathBuf::from(std::ffi::OsStr::from_bytes(bytes));
    let mut out = Vec::new();
    let Some(git_dir) = content(dot_git).and_then(|c| c.strip_prefix(b"gitdir: ").map(path_of)) else {
        return out;
    };
    let git_dir = dot_git.parent().unwrap_or(Path::new("/")).join(git_dir);
    let common = content(&git_dir.join("commondir")).map(|c| git_dir.join(path_of(&c)));
    for dir in std::iter::once(git_dir).chain(common) {
        if let Some(dir) = std::fs::canonicalize(dir).ok().filter(|d| writable.iter().any(|w| d.starts_with(w))) {
            out.push(dir);
        }
    }
    out
}

/// The `/proc/PID` of every process this user can read whose environment holds one of
/// `secrets`, and the `/proc/TID` of each of its threads: the shell, `timeout` or CI step that
/// started agent-min still holds the key it passed (the agent wipes only its own copy), and
/// Landlock's ptrace scope covers a process's memory, not its `environ`. Whole directories: the
/// same text is each thread's `task/TID/environ`, and a thread's own `/proc/TID` (not listed,
/// but found by its number) holds the group's `task/` again. A sandboxed command sees them
/// empty. At most 4,096 processes (and 1,024 threads each) and 1 MiB per file are read.
#[cfg(feature = "sandbox")]
fn environ_holding(secrets: &[String]) -> Vec<std::ffi::CString> {
    use std::io::Read;
    use std::os::unix::ffi::OsStrExt;
    if secrets.is_empty() {
        return Vec::new();
    }
    let me = std::process::id().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut found = Vec::new();
    let mut buf = Vec::new();
    for e in entries.flatten().take(4096) {
        let name = e.file_name();
        if !name.as_bytes().iter().all(u8::is_ascii_digit) || name.as_bytes() == me.as_bytes() {
            continue;
        }
        let path = e.path().join("environ");
        buf.clear();
        let Ok(f) = std::fs::File::open(&path) else { continue };
        if f.take(1 << 20).read_to_end(&mut buf).is_err() {
            continue;
        }
        if !secrets.iter().any(|s| memchr::memmem::find(&buf, s.as_bytes()).is_some()) {
            continue;
        }
        let threads = std::fs::read_dir(e.path().join("task")).into_iter().flatten().flatten().take(1024);
        let ids = threads.map(|t| t.file_name()).filter(|t| *t != name);
        for dir in std::iter::once(e.path()).chain(ids.map(|t| std::path::Path::new("/proc").join(t))) {
            if let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) {
                found.push(c);
            }
        }
    }
    found
}

/// Entries looked at, and nested repositories protected, at most: a walk of a workspace
/// larger than that protects the repositories it found.
#[cfg(feature = "sandbox")]
const NESTED_WALK: usize = 200_000;
#[cfg(feature = "sandbox")]
const NESTED_REPOS: usize = 256;

/// The `.git` (a directory, or a worktree's file) of every repository nested in `workspace`
/// below its top level: a command that plants `core.fsmonitor` or a hook there has it run by
/// the next `git status` in that directory, outside any sandbox — as at the top level.
/// Links are not followed; a `.git` is not walked into.
#[cfg(feature = "sandbox")]
fn nested_git(workspace: &Path) -> Vec<std::path::PathBuf> {
    let (mut found, mut seen) = (Vec::new(), 0usize);
    let mut dirs = vec![workspace.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            seen += 1;
            if seen > NESTED_WALK || found.len() >= NESTED_REPOS {
                return found;
            }
            let Ok(kind) = e.file_type() else { continue };
            if e.file_name() == ".git" {
                // (A link is resolved by `protected`; the walk itself follows none.)
                if dir != workspace {
                    found.push(e.path());
                }
            } else if kind.is_dir() {
                dirs.push(e.path());
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_editor_is_replaced_as_cline_replaces_it() {
        assert!(editor_unset(None) && editor_unset(Some("".into())));
        assert!(!editor_unset(Some("vim".into())));
    }

    /// A `git` (or `curl`, `sh`) in the working directory (an empty or relative `PATH` entry)
    /// is never the one run: the workspace could hold it.
    #[test]
    fn programs_are_found_only_in_absolute_path_directories() {
        for name in ["git", "curl", "sh"] {
            let d = tempfile::tempdir().unwrap();
            let fake = d.path().join(name);
            std::fs::write(&fake, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
            let dir = d.path().display().to_string();
            assert_eq!(program_in(OsStr::new(&format!("/nonexistent:{dir}")), name), Some(fake));
            // Relative to wherever the agent runs (here, a path that leads from the test's
            // working directory to the fake): not searched.
            let up = "../".repeat(std::env::current_dir().unwrap().components().count());
            let relative = format!("{up}{}", d.path().strip_prefix("/").unwrap().display());
            assert!(Path::new(&relative).join(name).is_file(), "{relative} leads to the fake");
            assert_eq!(program_in(OsStr::new(&format!(":.:{relative}:/nonexistent")), name), None);
            // A child's own PATH is the one searched: named as given, found there or nowhere.
            let cmd = command_on(OsStr::new(&dir), name, Policy::Editor).unwrap();
            assert_eq!((cmd.get_program(), cmd.get_args().len()), (d.path().join(name).as_os_str(), 0));
            let e = command_on(OsStr::new("/nonexistent"), name, Policy::Editor).unwrap_err();
            assert!(e.contains("not found in PATH's absolute directories"), "{e}");
        }
    }
    /// The agent's own `curl` and `git` are never taken from a workspace, whatever `PATH`
    /// says: not from a directory in it, nor through a link leading there.
    #[test]
    fn the_agents_own_programs_are_never_taken_from_a_workspace() {
        let (ws, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let ws_real = ws.path().canonicalize().unwrap();
        for (dir, name) in [(ws.path().join(".venv/bin"), "curl"), (elsewhere.path().join("bin"), "curl")] {
            std::fs::create_dir_all(&dir).unwrap();
            let fake = dir.join(name);
            std::fs::write(&fake, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        }
        let link = elsewhere.path().join("venv-link");
        std::os::unix::fs::symlink(ws.path().join(".venv/bin"), &link).unwrap();
        let path = |dirs: &[&Path]| std::env::join_paths(dirs).unwrap();
        let planted = ws.path().join(".venv/bin");
        let other = elsewhere.path().join("bin");
        let program_outside = |path: &OsStr, untrusted: &[std::path::PathBuf]| {
            first_executable(dirs_outside(path, untrusted).into_iter(), "curl")
        };
        let found = program_outside(&path(&[&planted, &link, &other]), std::slice::from_ref(&ws_real));
        assert_eq!(found, Some(other.join("curl")));
        let planted_real = planted.canonicalize().unwrap();
        assert_eq!(program_outside(&path(&[&planted]), &[]), Some(planted_real.join("curl")), "when trusted");
        // Named by the real directory checked, not the link.
        assert_eq!(program_outside(&path(&[&link]), &[]), Some(planted_real.join("curl")));
        // A workspace at `/` or holding the home directory is not passed over: it holds every
        // directory of PATH, and curl was found nowhere.
        let home = Path::new("/home/u");
        assert!(!worth_distrusting(Path::new("/"), Some(home)));
        assert!(!worth_distrusting(Path::new("/"), None));
        assert!(!worth_distrusting(home, Some(home)));
        assert!(!worth_distrusting(Path::new("/home"), Some(home)));
        assert!(worth_distrusting(Path::new("/home/u/project"), Some(home)));
    }

    use std::path::PathBuf;

    /// Every `.rs` file under `dir`.
    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                sources(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    #[test]
    #[cfg(feature = "sandbox")]
    fn nested_repositories_are_found_below_the_top_not_through_links_nor_inside_a_git() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        for dir in [".git/modules/x/.git", "sub/.git/hooks", "a/b/vendor/.git", "plain/src"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        std::fs::create_dir_all(root.join("wt")).unwrap();
        std::fs::write(root.join("wt/.git"), "gitdir: /elsewhere\n").unwrap();
        std::os::unix::fs::symlink(root.join("sub"), root.join("link")).unwrap();
        // A `.git` that is a link (Android's `repo`): found, to be resolved by `protected`.
        std::fs::create_dir_all(root.join("store/r.git")).unwrap();
        std::fs::create_dir_all(root.join("r")).unwrap();
        std::os::unix::fs::symlink(root.join("store/r.git"), root.join("r/.git")).unwrap();
        let mut found: Vec<String> =
            nested_git(root).iter().map(|p| p.strip_prefix(root).unwrap().display().to_string()).collect();
        found.sort();
        assert_eq!(found, ["a/b/vendor/.git", "r/.git", "sub/.git", "wt/.git"]);
        let real = root.canonicalize().unwrap();
        assert_eq!(link_target(&root.join("r/.git"), std::slice::from_ref(&real)), Some(real.join("store/r.git")));
        assert_eq!(link_target(&root.join("r/.git"), &[real.join("elsewhere")]), None, "not writable: left alone");
    }

    #[test]
    #[cfg(feature = "sandbox")]
    fn a_git_file_is_read_as_git_reads_it() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        for dir in ["wt", "store/wt.git", "store/main.git"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        // A relative gitdir, a CR LF ending; a relative commondir, from the git directory.
        std::fs::write(root.join("wt/.git"), "gitdir: ../store/wt.git\r\n").unwrap();
        std::fs::write(root.join("store/wt.git/commondir"), "../main.git\n").unwrap();
        let writable = std::slice::from_ref(&root);
        assert_eq!(
            gitfile_dirs(&root.join("wt/.git"), writable),
            [root.join("store/wt.git"), root.join("store/main.git")]
        );
        // Through a link, a relative gitdir is resolved from the link's own directory.
        std::fs::create_dir_all(root.join("links/x")).unwrap();
        std::fs::write(root.join("links/x/gitfile"), "gitdir: ../store/wt.git\n").unwrap();
        std::fs::create_dir_all(root.join("w2")).unwrap();
        std::os::unix::fs::symlink(root.join("links/x/gitfile"), root.join("w2/.git")).unwrap();
        assert_eq!(gitfile_dirs(&root.join("w2/.git"), writable)[0], root.join("store/wt.git"));
        // A git directory elsewhere is not writable to commands: left alone.
        assert!(gitfile_dirs(&root.join("wt/.git"), &[root.join("elsewhere")]).is_empty());
    }

    #[test]
    fn no_file_outside_the_spawner_starts_a_process() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let spawner = src.join("run/spawn");
        let mut files = Vec::new();
        sources(&src, &mut files);
        assert!(files.len() > 50, "the sources were not found under {}", src.display());
        let mut offenders = Vec::new();
        for f in files.iter().filter(|f| !f.starts_with(&spawner)) {
            let text = std::fs::read_to_string(f).unwrap();
            for needle in ["Command::new", "pre_exec", "libc::fork", ".process_group(", "posix_spawn"] {
                if text.contains(needle) {
                    offenders.push(format!("{}: {needle}", f.strip_prefix(&src).unwrap().display()));
                }
            }
        }
        assert!(offenders.is_empty(), "children must be started through run/spawn: {offenders:#?}");
    }

    /// Runs `sh -c script` under `policy` and returns its stdout.
    fn output(policy: Policy<'_>, script: &str) -> String {
        let out = command("sh", policy).unwrap().arg("-c").arg(script).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn a_document_extractor_is_bounded_in_cpu_time_and_memory_and_leaves_no_core() {
        // `ulimit` shows the soft limits: seconds, KiB, blocks.
        let limits = output(Policy::Extractor, "ulimit -t; ulimit -v; ulimit -c");
        assert_eq!(limits.split_whitespace().collect::<Vec<_>>(), ["60", "4194304", "0"], "{limits}");
    }

    #[test]
    fn hooks_mcp_servers_and_unsandboxed_commands_cannot_read_the_memory_of_processes_outside() {
        // A server or hook could read curl's memory (the key) through /proc.
        // The test process stands for curl: same user, dumpable, outside any domain.
        let me = std::process::id();
        let probe = format!("(exec 3</proc/{me}/mem) 2>/dev/null && echo READABLE || echo DENIED");
        let ws = tempfile::tempdir().unwrap();
        let off = sandbox::Policy::default();
        for (name, policy) in [
            ("hook", Policy::Hook),
            ("mcp server", Policy::McpServer),
            ("git", Policy::Git),
            ("--sandbox off command", Policy::Command { sandbox: &off, workspace: ws.path() }),
        ] {
            assert_eq!(output(policy, &probe).trim(), "DENIED", "a {name} opened /proc/{me}/mem");
            // Its own children it may still inspect (debuggers work inside).
            assert_eq!(output(policy, "sleep 5 & (exec 3</proc/$!/mem) && echo OWN; kill $!").trim(), "OWN");
        }
    }
}

#[cfg(all(test, not(feature = "sandbox")))]
mod not_built_in {
    use super::*;

    #[test]
    fn without_the_feature_a_sandboxed_command_is_not_started() {
        let ws = std::env::temp_dir();
        let policy = sandbox::Policy { mode: Mode::WorkspaceWrite, writable: vec![ws.clone()], ..Default::default() };
        let e = command("true", Policy::Command { sandbox: &policy, workspace: &ws }).unwrap_err();
        assert!(e.contains("`sandbox`"), "{e}");
        let off = sandbox::Policy::default();
        assert!(command("true", Policy::Command { sandbox: &off, workspace: &ws }).is_ok());
    }
}
