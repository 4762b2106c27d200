//! `agent-min sandbox check`: which protections this machine gives commands, per kernel
//! feature, and probes that run a real command under the sandbox and report what it could do.

use std::ffi::OsString;
use std::process::{ExitCode, Stdio};

use crate::run::sandbox::{self, Mode};
use crate::run::spawn;

fn help() -> &'static str {
    crate::run::texts::AGENT_MIN_SANDBOX_TXT.get()
}

/// Entry point of `agent-min sandbox`.
pub fn main(args: Vec<OsString>) -> ExitCode {
    match args.first().and_then(|a| a.to_str()) {
        Some("check") => check(),
        Some("-h" | "--help" | "help") | None => {
            print!("{}", help());
            ExitCode::SUCCESS
        }
        Some(other) => {
            eprintln!("agent-min sandbox: unknown subcommand {other:?}; expected `check`\n\n{}", help());
            ExitCode::from(2)
        }
    }
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "NO"
    }
}

fn check() -> ExitCode {
    if !cfg!(feature = "sandbox") {
        eprintln!("agent-min sandbox check: {}", crate::run::built::not_built_in("sandbox", "the command sandbox"));
        return ExitCode::from(1);
    }
    let abi = spawn::landlock_abi();
    println!("Landlock ABI: {abi}{}", if abi == 0 { " (not available: commands cannot be sandboxed)" } else { "" });
    println!("  file-system confinement (ABI 1, truncate ABI 3): {}", yes(abi >= 3));
    println!("  device ioctls handled, no TIOCSTI into a terminal (ABI 5): {}", yes(abi >= 5));
    println!("  signals and abstract sockets scoped to the sandbox (ABI 6): {}", yes(abi >= 6));
    println!(
        "  hooks, MCP servers, git and --sandbox off commands cannot ptrace or open /proc/PID/mem outside: {}",
        yes(abi >= 1)
    );
    let root = rustix::process::geteuid().is_root();
    println!(
        "Namespaces: network off and read-only .git/.clinerules/hooks/.cline {}",
        if root { "as root" } else { "through a user namespace (needs unprivileged user namespaces)" }
    );
    println!(
        "seccomp: Unix-domain sockets denied to sandboxed commands: {}",
        yes(cfg!(any(target_arch = "x86_64", target_arch = "aarch64")))
    );
    if let Ok(v) = std::fs::read_to_string("/proc/sys/dev/tty/legacy_tiocsti") {
        println!(
            "TIOCSTI allowed by the kernel (dev.tty.legacy_tiocsti): {} (commands run in their own session either way)",
            v.trim()
        );
    }
    if abi == 0 {
        return ExitCode::from(1);
    }
    match probes() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("agent-min sandbox check: {e}");
            ExitCode::from(1)
        }
    }
}

/// Runs one command per question under the workspace-write sandbox in a scratch workspace.
fn probes() -> Result<(), String> {
    let base = std::env::temp_dir().join(format!("agent-min-check-{}", std::process::id()));
    let ws = base.join("ws");
    std::fs::create_dir_all(ws.join(".git")).map_err(|e| format!("{}: {e}", ws.display()))?;
    let ws = std::fs::canonicalize(&ws).map_err(|e| e.to_string())?;
    let choice = sandbox::Choice { mode: Some(Mode::WorkspaceWrite), ..Default::default() };
    let policy = choice.resolve(true, &ws)?;
    let outside = base.join("outside");
    let me = std::process::id();
    // A terminal of this user's that the command is not given, such as the one the agent runs on.
    let terminal = other_terminal();
    let mut questions: Vec<(&str, String)> = vec![
        ("write in the workspace", "echo x > inside".into()),
        ("write outside it (the system temp directory)", format!("echo x > '{}'", outside.display())),
        ("write in the workspace's .git", "echo x > .git/planted".into()),
        ("signal the agent", "kill -0 $PPID".into()),
        ("open the terminal (/dev/tty)", ": </dev/tty".into()),
        ("open /proc/PID/mem of a process outside", format!("exec 3</proc/{me}/mem")),
    ];
    if let Some((_, name)) = &terminal {
        questions.push(("read another terminal (/dev/pts/N)", format!("exec 3<'{name}'")));
    }
    println!("Probes (a command under --sandbox workspace-write, network off):");
    for (what, script) in questions {
        let cmd = spawn::command("sh", spawn::Policy::Command { sandbox: &policy, workspace: &ws });
        let ok = cmd?
            .arg("-c")
            .arg(script)
            .current_dir(&ws)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| e.to_string())?
            .success();
        println!("  {what}: {}", if ok { "possible" } else { "refused" });
    }
    drop(terminal);
    if let Some(tmp) = &policy.tmp {
        let _ = std::fs::remove_dir_all(tmp);
    }
    let _ = std::fs::remove_dir_all(&base);
    Ok(())
}

/// A new pseudo-terminal: its main side (held open while the probe runs) and the path of its
/// other side. `None` where none can be made.
fn other_terminal() -> Option<(std::os::fd::OwnedFd, String)> {
    use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
    let main = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).ok()?;
    grantpt(&main).ok()?;
    unlockpt(&main).ok()?;
    let name = ptsname(&main, Vec::new()).ok()?.into_string().ok()?;
    Some((main, name))
}
