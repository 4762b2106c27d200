//! Issue 12's security review, end to end: each test is one of the failures it found, run
//! through the real binary, the real curl and the scripted server.

use crate::common;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;

const LIMIT: Duration = Duration::from_secs(60);

/// Flags for a scripted run that asks a person (no `--yolo`).
fn asking_args(server: &Server) -> Vec<String> {
    anthropic_args(server).into_iter().filter(|a| a != "--yolo").collect()
}

/// Runs the agent in `ws`; when its stdout first shows an approval prompt, calls `meanwhile`
/// (the person is still reading the prompt), then answers `y`. Returns the run.
fn approve_after(ws: &Path, args: &[String], meanwhile: impl FnOnce()) -> Run {
    // The person's terminal: a pseudo-terminal as standard input.
    let (mut terminal, tty) = pty();
    let mut child = Command::new(setsid())
        .arg(bin())
        .arg("run")
        .args(args)
        .arg("t")
        .current_dir(ws)
        .env("ANTHROPIC_API_KEY", KEY)
        .env("NO_COLOR", "1")
        .env("XDG_STATE_HOME", ws.join(".state"))
        .stdin(Stdio::from(tty))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agent-min");
    let seen = Arc::new(Mutex::new(String::new()));
    let mut out = child.stderr.take().unwrap();
    let sink = seen.clone();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = out.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    let start = Instant::now();
    while !seen.lock().unwrap().contains("approve?") {
        assert!(start.elapsed() < LIMIT, "no approval prompt:\n{}", seen.lock().unwrap());
        std::thread::sleep(Duration::from_millis(10));
    }
    meanwhile();
    terminal.write_all(b"y\n").unwrap();
    let mut err = String::new();
    let mut e = child.stdout.take().unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(start.elapsed() < LIMIT, "agent-min did not finish");
        std::thread::sleep(Duration::from_millis(10));
    };
    drop(terminal); // kept open until the end: closing it would drop the unread answer
    let _ = e.read_to_string(&mut err);
    reader.join().unwrap();
    // stdout is not a terminal: the transcript is on stderr, the result on stdout.
    let transcript = seen.lock().unwrap().clone();
    Run { code: status.code(), stdout: err, stderr: transcript }
}

/// A workspace `ws/` with a directory `sub/`, and `outside/` beside it.
fn ws_and_outside() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let (ws, outside) = (d.path().join("ws"), d.path().join("outside"));
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    (d, ws, outside)
}

/// Replaces the directory `ws/sub` by a link to `../outside`.
fn swap_sub_for_a_link(ws: &Path) {
    let _ = std::fs::remove_file(ws.join("sub/f.txt"));
    std::fs::remove_dir(ws.join("sub")).unwrap();
    std::os::unix::fs::symlink("../outside", ws.join("sub")).unwrap();
}

#[test]
fn a_directory_swapped_for_a_link_during_the_write_prompt_is_not_followed() {
    let (_d, ws, outside) = ws_and_outside();
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "sub/x.txt"), ("content", "written")])),
        anthropic(&completion("done")),
    ]);
    let r = approve_after(&ws, &asking_args(&server), || swap_sub_for_a_link(&ws));
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!outside.join("x.txt").exists(), "approving wrote outside the workspace:\n{}", r.all());
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "something was left outside");
    let told = server.requests()[1].last_user();
    // Seen before the write (`fsx`'s own refusal of the link, the last guard, is unit-tested).
    assert!(told.contains("sub/x.txt changed while the edit was prepared") && told.contains("not written"), "{told}");
}

#[test]
fn a_directory_swapped_for_a_link_during_the_edit_prompt_is_not_followed() {
    let (_d, ws, outside) = ws_and_outside();
    std::fs::write(ws.join("sub/f.txt"), "alpha\n").unwrap();
    std::fs::write(outside.join("f.txt"), "outside alpha\n").unwrap();
    let diff = "------- SEARCH\nalpha\n=======\nBETA\n+++++++ REPLACE";
    let server = Server::start(vec![
        anthropic(&tool("replace_in_file", &[("path", "sub/f.txt"), ("diff", diff)])),
        anthropic(&completion("done")),
    ]);
    let r = approve_after(&ws, &asking_args(&server), || swap_sub_for_a_link(&ws));
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(std::fs::read_to_string(outside.join("f.txt")).unwrap(), "outside alpha\n", "edited outside");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1, "a temp file was left outside");
    let told = server.requests()[1].last_user();
    assert!(told.contains("sub/f.txt changed while the edit was prepared") && told.contains("not written"), "{told}");
}

/// apply_patch removes a file (Delete File, and the old name of Move File) by its descriptor
/// too: `sub` swapped for a link while the person reads the prompt makes the removal fail; the
/// file the link leads to stays. (apply_patch in Cline's XML, which Cline runs in any variant.)
#[test]
fn a_directory_swapped_for_a_link_during_the_patch_prompt_deletes_nothing_outside() {
    let (_d, ws, outside) = ws_and_outside();
    std::fs::write(ws.join("sub/victim.txt"), "inside\n").unwrap();
    std::fs::write(outside.join("victim.txt"), "outside\n").unwrap();
    let patch = "*** Begin Patch\n*** Delete File: sub/victim.txt\n*** End Patch";
    let server =
        Server::start(vec![anthropic(&tool("apply_patch", &[("input", patch)])), anthropic(&completion("done"))]);
    let r = approve_after(&ws, &asking_args(&server), || {
        std::fs::rename(ws.join("sub"), ws.join("moved")).unwrap();
        std::os::unix::fs::symlink("../outside", ws.join("sub")).unwrap();
    });
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stderr.contains("Delete sub/victim.txt"), "the patch's prompt was answered: {}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(outside.join("victim.txt")).ok().as_deref(),
        Some("outside\n"),
        "approving deleted a file outside the workspace:\n{}",
        r.all()
    );
    assert!(ws.join("moved/victim.txt").exists(), "the checked file is where it was moved");
    let told = server.requests()[1].last_user();
    assert!(
        told.contains("Error executing apply_patch: sub/victim.txt:") && told.contains("nothing was removed"),
        "{told}"
    );
}

/// A `.gitignore` over the bound on ignore rules (1 MiB) in a directory: the walks that feed
/// the first request's file list and `list_files` leave the directory out instead of reading
/// it, the person is warned once, and the model is told in each result that something is left
/// out. (Its first rule would hide `keep.txt` beside it: the file was not read.)
#[test]
fn an_oversize_gitignore_is_not_read_and_what_it_leaves_out_is_said() {
    let ws = tempfile::tempdir().unwrap();
    let mut big = String::from("keep.txt\n");
    while big.len() <= 1 << 20 {
        big.push_str("# a comment line to pass the bound on ignore rules, cheaply\n");
    }
    std::fs::create_dir_all(ws.path().join("big")).unwrap();
    std::fs::write(ws.path().join("big/.gitignore"), &big).unwrap();
    std::fs::write(ws.path().join("big/keep.txt"), "").unwrap();
    std::fs::write(ws.path().join("top.txt"), "").unwrap();
    let list = || anthropic(&tool("list_files", &[("path", "."), ("recursive", "true")]));
    let server = Server::start(vec![list(), list(), anthropic(&completion("done"))]);
    let r = run_agent(ws.path(), &args_with(&anthropic_args(&server), &["--no-save", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let dir = ws.path().canonicalize().unwrap().join("big");
    let warning = format!(
        "{}/ was left out: {} is {} bytes, and with it the ignore rules that apply there would exceed the limit of 1048576 bytes (1 MiB).",
        dir.display(),
        dir.join(".gitignore").display(),
        big.len()
    );
    assert_eq!(r.stderr.matches(&warning).count(), 1, "warned once:\n{}", r.stderr);
    let reqs = server.requests();
    let first = reqs[0].last_user();
    assert!(first.lines().any(|l| l == "top.txt") && !first.lines().any(|l| l == "big/"), "{first}");
    assert!(first.contains(&format!("Note: {warning}")), "{first}");
    for req in &reqs[1..3] {
        let told = req.last_user();
        assert!(told.lines().any(|l| l == "top.txt") && !told.contains("keep.txt"), "{told}");
        assert!(!told.lines().any(|l| l == "big/"), "{told}");
        assert!(told.contains(&format!("Note: {warning}")), "{told}");
    }
}

/// Peak resident memory of a live process, in KiB (`VmHWM`).
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_command_printing_hundreds_of_megabytes_keeps_the_agents_memory_bounded() {
    let ws = tempfile::tempdir().unwrap();
    let loud = "head -c 400000000 /dev/zero | tr '\\0' a; echo; echo END";
    let mut done = anthropic(&completion("done"));
    done.stall = Duration::from_secs(5); // the agent waits here while its peak memory is read
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", loud), ("requires_approval", "false")])),
        done,
    ]);
    let base = anthropic_args(&server);
    let args = args_with(&base, &["--no-save", "t"]);
    // The whole output goes to a log file in the temp directory, as in Cline.
    let tmp = tempfile::tempdir().unwrap();
    let mut child = Command::new(bin())
        .arg("run")
        .args(&args)
        .current_dir(ws.path())
        .env("TMPDIR", tmp.path())
        .env("ANTHROPIC_API_KEY", KEY)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // stdout is not a terminal: the transcript, with the command's output, is on stderr.
    let mut out = child.stderr.take().unwrap();
    let shown = std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()).unwrap());
    server.wait_for_requests(2, LIMIT);
    let peak = peak_rss_kib(pid);
    let mut result = child.stdout.take().unwrap();
    let mut stdout = String::new();
    result.read_to_string(&mut stdout).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0), "{stdout}");
    let printed = shown.join().unwrap();
    assert!(printed > 400_000_000, "the output was shown as it came ({printed} bytes)");
    let told = server.requests()[1].last_user();
    assert!(told.contains("Full output saved to: ") && told.contains("\nEND"), "{}", &told[..200]);
    let logs: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    assert_eq!(std::fs::metadata(&logs[0]).unwrap().len(), 400_000_005, "the whole output, byte for byte");
    eprintln!("agent peak RSS: {} KiB for 400 MB of command output", peak);
    assert!(peak < 32 * 1024, "the agent's peak RSS was {} MiB for 400 MB of output", peak / 1024);
}

#[test]
fn escape_sequences_from_the_model_and_from_commands_never_reach_the_terminal() {
    let ws = tempfile::tempdir().unwrap();
    let evil = "printf 'out\\033]0;pwned\\007\\033[2J\\rover\\n'";
    let server = Server::start(vec![
        anthropic(&format!(
            "Title\x1b]0;owned\x07 clear\x1b[2J\r\n{}",
            tool("execute_command", &[("command", evil), ("requires_approval", "false")])
        )),
        anthropic(&completion("done\x1b[5m")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!r.all().contains(['\x1b', '\x07']), "raw control bytes reached the terminal:\n{:?}", r.all());
    assert!(r.stderr.contains("Title\\x1b]0;owned\\x07 clear\\x1b[2J\n"), "{:?}", r.stderr);
    assert!(r.stderr.contains("out\\x1b]0;pwned\\x07\\x1b[2J\\rover"), "{:?}", r.stderr);
}

#[test]
fn a_command_cannot_read_the_key_from_the_agents_proc_environ_nor_inherit_secret_variables() {
    let ws = tempfile::tempdir().unwrap();
    const ROUTER: &str = "sk-or-v1-ROUTER-SECRET-0a1b2c3d";
    const GH: &str = "ghp_GITHUB-TOKEN-SECRET-99887766";
    std::fs::write(ws.path().join("notes.txt"), format!("leaked: {ROUTER}\n")).unwrap();
    let cmd = "tr '\\0' '\\n' </proc/$PPID/environ | grep -e API_KEY -e TOKEN; env | grep -i -e key -e token -e secret; echo PLAIN=$PLAIN_VAR; echo end";
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", cmd), ("requires_approval", "false")])),
        anthropic(&tool("read_file", &[("path", "notes.txt")])),
        // The model quotes the key it read, in deltas of 5 characters: at the terminal and in
        // the text events it is masked whole, not shown piece by piece.
        anthropic(&format!("The notes say {ROUTER}.\n{}", completion("done"))),
    ]);
    let base = anthropic_args(&server);
    let envs = [("OPENROUTER_API_KEY", ROUTER), ("GITHUB_TOKEN", GH), ("PLAIN_VAR", "visible-value")];
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let r = run_agent(ws.path(), &args_with(&base, &["--json", "--state-dir", &state_dir, "t"]), &envs, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    let told = reqs[1].last_user();
    assert!(told.contains("PLAIN=visible-value") && told.contains("end"), "the command ran: {told}");
    // Bytes, read lossily: the state dir also holds the checkpoints' shadow git objects.
    let saved: String = walk_files(state.path())
        .iter()
        .map(|f| String::from_utf8_lossy(&std::fs::read(f).unwrap()).into_owned())
        .collect();
    for secret in [KEY, ROUTER, GH] {
        for req in &reqs {
            assert!(!req.body.to_string().contains(secret), "{secret} was sent to the model:\n{told}");
        }
        assert!(!r.all().contains(secret), "{secret} was shown");
        assert!(!saved.contains(secret), "{secret} was saved");
    }
    assert!(reqs[2].last_user().contains("leaked: [REDACTED]"), "{}", reqs[2].last_user());
    for part in ROUTER.as_bytes().windows(10) {
        let part = std::str::from_utf8(part).unwrap();
        assert!(!r.all().contains(part), "{part} of the key was shown:\n{}", r.all());
    }
    assert!(r.stderr.contains("The notes say [REDACTED]."), "{}", r.stderr);
    let text: String = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|e| e["type"] == "text")
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect();
    assert!(text.starts_with("The notes say [REDACTED].\n"), "{text:?}");
}

/// The process that started the agent (a shell, `timeout`, a CI step, node) still holds the
/// key in its environment: a sandboxed command finds it in none of that process's files — its
/// `/proc/PID/environ`, each thread's `task/TID/environ`, nor a thread's own `/proc/TID`, which
/// `/proc` does not list but answers by number (a review read the key in each). The agent's own
/// was wiped already.
#[test]
fn a_sandboxed_command_cannot_read_the_key_from_the_environment_of_whatever_started_the_agent() {
    let ws = tempfile::tempdir().unwrap();
    // Every process from the launcher up to the agent (the launcher's thread is between them:
    // made before the agent was; the agent's own value is wiped, its name left), and the
    // launcher's threads through its own `task/`.
    let cmd = "L=$(cut -d' ' -f4 /proc/$PPID/stat); for f in $(seq $L $((PPID - 1)) | sed 's|.*|/proc/&/environ|') /proc/$L/task/*/environ; do \
               if tr '\\0' '\\n' < $f 2>/dev/null | grep -q '^ANTHROPIC_API_KEY='; then echo \"HOLDS-KEY $f\"; fi; done; echo SCANNED-$L-$PPID";
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", cmd), ("requires_approval", "false")])),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let args = args_with(&base, &["--no-save", "t"]);
    let state = tempfile::tempdir().unwrap();
    // A launcher with a second thread that starts the agent as its child and waits: it keeps the
    // key it was given.
    let mut launcher = Command::new("python3");
    let threaded = "import subprocess, sys, threading, time\n\
        threading.Thread(target=time.sleep, args=(600,), daemon=True).start()\n\
        sys.exit(subprocess.call(sys.argv[1:]))";
    launcher.arg("-c").arg(threaded).arg(setsid()).arg(bin()).arg("run").args(&args);
    agent_env(&mut launcher, state.path()).current_dir(ws.path()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let r = wait_limited(launcher.stdin(Stdio::null()).spawn().unwrap(), LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let told = server.requests()[1].last_user();
    assert!(told.lines().any(|l| l.starts_with("SCANNED-")), "{told}");
    assert!(!told.lines().any(|l| l.starts_with("HOLDS-KEY")), "{told}");
}

/// A variable whose name is not UTF-8 but says it holds a token is withheld like any other
/// (the agent used to skip such names when listing what to withhold, so the command got it).
#[test]
fn a_secret_variable_whose_name_is_not_utf8_is_withheld_too() {
    use std::os::unix::ffi::OsStrExt;
    let ws = tempfile::tempdir().unwrap();
    const VALUE: &str = "odd-named-SECRET-5e6f7a8b";
    // The shell's own initial environment, as the agent started it (dash leaves such a name
    // out of what it passes on; bash, another system's `sh`, does not).
    let cmd = "tr '\\0' '\\n' </proc/$$/environ | grep -a -c odd-named-SECRET; echo end";
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", cmd), ("requires_approval", "false")])),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let args = args_with(&base, &["--no-save", "t"]);
    let state = tempfile::tempdir().unwrap();
    let mut agent = Command::new(bin());
    agent.arg("run").args(&args).env(std::ffi::OsStr::from_bytes(b"DEPLOY_TOKEN\xff"), VALUE);
    agent_env(&mut agent, state.path()).current_dir(ws.path()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let r = wait_limited(agent.stdin(Stdio::null()).spawn().unwrap(), LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let told = server.requests()[1].last_user();
    assert!(told.lines().any(|l| l == "0") && told.contains("end"), "the command saw the variable:\n{told}");
    assert!(!r.all().contains(VALUE), "{}", r.all());
}

/// Every file below `dir`.
fn walk_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk_files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A directory outside the workspace and a temp directory for the agent (its `TMPDIR`, which
/// the sandbox lets commands write): siblings in target/tmp, so the first is never inside the
/// second, wherever the checkout and the system's temp directory are.
fn outside_and_tmpdir() -> (tempfile::TempDir, tempfile::TempDir) {
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    (outside, tmp)
}

#[test]
fn under_yolo_commands_are_sandboxed_by_default_and_the_model_is_told_how_to_ask_for_more() {
    let ws = tempfile::tempdir().unwrap();
    // Outside the workspace and outside the agent's temp directory, wherever the checkout is
    // (also under the system's temp directory): the agent gets its own TMPDIR beside it.
    let (outside, tmp) = outside_and_tmpdir();
    let target = outside.path().join("escaped.txt");
    let cmd = format!("echo x > '{}'", target.display());
    let script = || {
        vec![
            anthropic(&tool("execute_command", &[("command", &cmd), ("requires_approval", "false")])),
            anthropic(&completion("done")),
        ]
    };
    let server = Server::start(script());
    let base = anthropic_args(&server);
    let tmpdir = [("TMPDIR", tmp.path().to_str().unwrap())];
    let r = run_agent(ws.path(), &args_with(&base, &["t"]), &tmpdir, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stderr.contains("Commands run sandboxed (--sandbox workspace-write"), "{}", r.stderr);
    assert!(!target.exists(), "a --yolo command wrote outside the workspace");
    let told = server.requests()[1].last_user();
    assert!(told.contains("Permission denied") && told.contains("agent-min's sandbox"), "{told}");
    assert!(told.contains("--sandbox-allow-write DIR"), "{told}");
    // Nobody answers a question under --yolo: the note names no tool the model lacks.
    assert!(!told.contains("ask_followup_question") && told.contains("attempt_completion"), "{told}");

    // Allowed explicitly, the same command writes there.
    let server = Server::start(script());
    let base = anthropic_args(&server);
    let dir = outside.path().display().to_string();
    let r = run_agent(ws.path(), &args_with(&base, &["--sandbox-allow-write", &dir, "t"]), &tmpdir, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(target.exists(), "--sandbox-allow-write did not allow it:\n{}", server.requests()[1].last_user());
}

#[test]
fn sandbox_flags_are_checked_and_named() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--sandbox", "strict", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("expected workspace-write, read-only or off"), "{}", r.stderr);
    let r = run_agent(ws.path(), &args_with(&base, &["--sandbox-allow-write", "/nonexistent-w12", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("--sandbox-allow-write /nonexistent-w12"), "{}", r.stderr);
    let help = run_agent(ws.path(), &["--help"], &[], LIMIT);
    for flag in
        ["--sandbox MODE", "--sandbox-allow-write DIR", "--sandbox-network", "--env-keep NAME", "--env-drop NAME"]
    {
        assert!(help.stdout.contains(flag), "--help does not teach {flag}");
    }
}

#[test]
fn when_saves_fail_the_last_line_says_so_instead_of_claiming_a_save() {
    let ws = tempfile::tempdir().unwrap();
    let state = ws.path().join("state");
    // The command breaks the state directory: every later save fails. (Unconfined: a
    // sandboxed command cannot write a state directory inside the workspace.)
    let cmd = "rm -rf state/tasks && echo 'not a directory' > state/tasks";
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", cmd), ("requires_approval", "false")])),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let dir = state.display().to_string();
    let r = run_agent(ws.path(), &args_with(&base, &["--state-dir", &dir, "--sandbox", "off", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!r.all().contains("Saved as"), "a save that failed was announced:\n{}", r.all());
    assert!(r.all().contains("could NOT be saved"), "{}", r.all());
    assert!(r.all().contains("Could not save the task"), "each failed save is reported:\n{}", r.all());
}

/// The `api_request` events of a `--json` run.
fn api_requests(stdout: &str) -> Vec<serde_json::Value> {
    events::of(&events::parse(stdout), "api_request").into_iter().cloned().collect()
}

/// With `--one-tool-per-reply` the reply is cut after its tool, yet the server's usage is read;
/// by default (several calls per reply, as Cline) the text after the tool is shown and kept.
#[test]
fn a_reply_ending_in_a_tool_reports_the_servers_usage_not_an_estimate() {
    for (openai_wire, one_tool) in [(false, true), (true, true), (false, false), (true, false)] {
        let ws = tempfile::tempdir().unwrap();
        let reply = |t: &str| if openai_wire { openai(t) } else { anthropic(t) };
        let server = Server::start(vec![
            reply(&format!("Listing.\n{}\nand text after the tool", tool("list_files", &[("path", ".")]))),
            reply(&completion("done")),
        ]);
        let base = if openai_wire { openai_args(&server) } else { anthropic_args(&server) };
        let mut args = vec!["--json", "t"];
        if one_tool {
            args.insert(0, "--one-tool-per-reply");
        }
        let r = run_agent(ws.path(), &args_with(&base, &args), &[("OPENAI_API_KEY", KEY)], LIMIT);
        assert_eq!(r.code, Some(0), "{}", r.all());
        let reqs = api_requests(&r.stdout);
        assert_eq!(reqs.len(), 2);
        let (want_in, want_out) = if openai_wire { (50, 9) } else { (100, 42) };
        for e in &reqs {
            assert_eq!(e["estimated"], false, "openai={openai_wire}: {e}");
            assert_eq!((e["tokens_in"].as_u64(), e["tokens_out"].as_u64()), (Some(want_in), Some(want_out)), "{e}");
        }
        assert_eq!(reqs[1]["totals"]["estimated_requests"], 0);
        let sent_back = server.requests()[1].body.to_string().contains("and text after the tool");
        if one_tool {
            assert!(!r.all().contains("and text after the tool"), "what follows the tool was shown");
            assert!(!sent_back, "…or sent back");
        } else {
            assert!(r.all().contains("and text after the tool"), "the whole reply is shown: {}", r.all());
            assert!(sent_back, "…and kept in the history");
        }
        if !openai_wire {
            assert_eq!(server.requests()[0].body["stream"], true);
        } else {
            assert_eq!(server.requests()[0].body["stream_options"]["include_usage"], true);
        }
    }
}

/// A reply cut after its first tool (`--one-tool-per-reply`) is read up to the server's usage
/// report, which comes with the stop reason: a refusal there stops the task before the call
/// runs, as any refusal does (the call was run and the task went on).
#[test]
fn a_refusal_after_the_first_tool_is_seen_with_one_tool_per_reply() {
    let ws = tempfile::tempdir().unwrap();
    let text = format!("Writing.\n{}", tool("write_to_file", &[("path", "x.txt"), ("content", "x")]));
    let server = Server::start(vec![anthropic_with(&text, 5, "refusal"), anthropic(&completion("done"))]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--one-tool-per-reply", "--tool-calls", "xml", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(r.stderr.contains("safety system ended the model's reply (stop reason \"refusal\")"), "{}", r.stderr);
    assert!(!ws.path().join("x.txt").exists(), "the refused reply's call ran");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn a_server_silent_after_the_tool_costs_a_short_wait_and_an_honest_estimate() {
    let ws = tempfile::tempdir().unwrap();
    let text = format!("Listing.\n{}", tool("list_files", &[("path", ".")]));
    let mut stalled = anthropic(&text);
    let body = String::from_utf8(stalled.body.clone()).unwrap();
    stalled.stall_at = body.find("event: content_block_stop").unwrap(); // the tool has closed
    stalled.stall = Duration::from_secs(30);
    let server = Server::start(vec![stalled, anthropic(&completion("done"))]);
    let base = anthropic_args(&server);
    let start = Instant::now();
    // Only a reply cut at its first tool stops reading there; by default the whole reply is read.
    let r = run_agent(ws.path(), &args_with(&base, &["--one-tool-per-reply", "--json", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let took = start.elapsed();
    assert!(took < Duration::from_secs(10), "the agent waited for the stalled server: {took:?}");
    let reqs = api_requests(&r.stdout);
    assert_eq!(reqs[0]["estimated"], true, "{}", reqs[0]);
    assert_eq!(reqs[0]["tokens_in"], 100, "the input count of message_start is kept: {}", reqs[0]);
    assert_eq!(reqs[1]["estimated"], false);
}

/// The partial `tool_call` events of a streamed write, and the whole `--json` output, against
/// the file: progress events (at least 3) that show at most 1 KiB of it each, with its size so
/// far, whatever the speed of the stream (by bytes alone: this stream arrives within moments, a
/// model's takes minutes, and both get the same events); a complete event with the file as
/// written; a result that leaves out its echo of it; at most 2× the file in all.
fn assert_partial_events_are_bounded(stdout: &str, written: &str) {
    let events = events::parse(stdout);
    let calls = events::of(&events, "tool_call");
    let (partial, complete): (Vec<&&serde_json::Value>, Vec<&&serde_json::Value>) =
        calls.iter().partition(|e| e["partial"] == true);
    let complete: Vec<_> = complete.into_iter().filter(|e| e["tool"] == "write_to_file").collect();
    let partial: Vec<_> = partial.into_iter().filter(|e| e["tool"] == "write_to_file").collect();
    assert_eq!(complete.len(), 1);
    // The complete event carries the content as written (untrimmed: the first line's indentation).
    let got = complete[0]["params"]["content"].as_str().unwrap();
    assert!(got == written, "the complete event is not exact ({} bytes, want {})", got.len(), written.len());
    assert!(partial.len() >= 3, "{} partial events: progress is shown as the file grows", partial.len());
    let sizes: Vec<u64> = partial.iter().map(|e| e["sizes"]["content"].as_u64().unwrap_or(0)).collect();
    assert!(sizes.windows(2).all(|w| w[0] < w[1]) && sizes[sizes.len() - 1] > written.len() as u64 / 2, "{sizes:?}");
    for p in &partial {
        let shown = p["params"]["content"].as_str().unwrap_or("");
        assert!(shown.len() <= 1024 && written.starts_with(shown), "a partial event showed {} bytes", shown.len());
    }
    let result = &events::of(&events, "tool_result")[0];
    assert_eq!(result["left_out"], "final_file_content", "{}", &result.to_string()[..300]);
    assert!(stdout.len() <= 2 * written.len(), "--json wrote {} bytes for a {}-byte file", stdout.len(), written.len());
}

/// Runs `--json --tool-calls MODE` against `server`, whose first reply writes `content` to
/// big.rs, and checks the file and the events. The file is `content` exactly: a native call's
/// JSON string as it is (as Cline writes it), the XML one without the line break before
/// `</content>` (the tags' layout).
fn streamed_write(server: &Server, mode: &str, content: &str) {
    let ws = tempfile::tempdir().unwrap();
    let base = anthropic_args(server);
    let r = run_agent(ws.path(), &args_with(&base, &["--json", "--tool-calls", mode, "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let written = std::fs::read_to_string(ws.path().join("big.rs")).unwrap();
    let want = if mode == "native" { content } else { content.strip_suffix('\n').unwrap() };
    assert!(written == want, "the file is not exact ({} bytes, want {})", written.len(), want.len());
    assert_partial_events_are_bounded(&r.stdout, &written);
}

#[test]
fn a_large_streamed_write_gives_bounded_partial_events_and_an_exact_complete_one() {
    let line = "    let value = compute(index, &table[offset..]); // <tag> & \"quotes\"\n";
    let content: String = line.repeat(256 * 1024 / line.len());
    // The XML dialect, the file in 16-byte text deltas.
    let text = tool("write_to_file", &[("path", "big.rs"), ("content", &format!("\n{content}"))]);
    let mut write = anthropic_with(&text, 16, "end_turn");
    write.chunk = 64 * 1024;
    streamed_write(&Server::start(vec![write, anthropic(&completion("done"))]), "xml", &content);

    // Native tool calls (the default path), the arguments in 16-byte `input_json_delta`
    // fragments. (Their partial events used to double, each carrying all the values so far,
    // and only a spacing in time thinned them: a slow stream got ~2× the file in them.)
    let args = serde_json::json!({"absolutePath": "big.rs", "content": content}).to_string();
    let cuts: Vec<usize> =
        (0..args.len()).step_by(16).filter(|&i| args.is_char_boundary(i)).chain([args.len()]).collect();
    let fragments: Vec<&str> = cuts.windows(2).map(|w| &args[w[0]..w[1]]).collect();
    let reply = native::AnthropicReply {
        text: "Writing it.",
        calls: vec![native::call("toolu_W", "write_to_file", &fragments)],
        ..Default::default()
    };
    let done = native::AnthropicReply {
        calls: vec![native::call("toolu_Z", "attempt_completion", &[r#"{"result":"ok"}"#])],
        ..Default::default()
    };
    streamed_write(
        &Server::start(vec![native::anthropic(reply, 64 * 1024), native::anthropic(done, 64)]),
        "native",
        &content,
    );
}

#[test]
fn curl_gets_the_key_only_through_its_header_pipe_never_in_its_environment() {
    let ws = tempfile::tempdir().unwrap();
    let tools = tempfile::tempdir().unwrap();
    let real = String::from_utf8(Command::new("sh").args(["-c", "command -v curl"]).output().unwrap().stdout).unwrap();
    let (bin, log) = (tools.path().join("bin"), tools.path().join("curl-env.log"));
    std::fs::create_dir_all(&bin).unwrap();
    let wrapper = format!("#!/bin/sh\nenv >> '{}'\nexec '{}' \"$@\"\n", log.display(), real.trim());
    std::fs::write(bin.join("curl"), wrapper).unwrap();
    Command::new("chmod").arg("755").arg(bin.join("curl")).status().unwrap();
    let server = Server::start(vec![anthropic(&completion("done"))]);
    let base = anthropic_args(&server);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let r = run_agent(ws.path(), &args_with(&base, &["t"]), &[("PATH", &path)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let env = std::fs::read_to_string(&log).expect("the wrapper ran");
    assert!(env.contains("PATH="), "{env}");
    assert!(!env.contains(KEY) && !env.contains("ANTHROPIC_API_KEY"), "curl's environment holds the key:\n{env}");
    assert_eq!(server.requests()[0].header("x-api-key"), Some(KEY), "the key was still sent");
}

/// A `curl` planted in `ws`'s activated `.venv/bin`, which writes what it reads to the marker
/// file: the marker, and a `PATH` naming that folder first.
fn plant_curl(ws: &Path) -> (std::path::PathBuf, String) {
    let bin = ws.join(".venv/bin");
    let marker = ws.join("planted-ran");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("curl"), format!("#!/bin/sh\ncat > '{}'\nexit 7\n", marker.display())).unwrap();
    Command::new("chmod").arg("755").arg(bin.join("curl")).status().unwrap();
    (marker, format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default()))
}

/// A `curl` in the workspace is never the agent's, though `PATH` names its folder first (an
/// activated `.venv/bin`): a command or an edit could have put it there, and it would get the
/// key's pipe.
#[test]
fn a_curl_planted_in_the_workspace_is_not_run_though_path_names_it() {
    let ws = tempfile::tempdir().unwrap();
    let (marker, path) = plant_curl(ws.path());
    // Sandboxed, the workspace is a writable place; unconfined, it is still the workspace.
    for sandbox in ["workspace-write", "off"] {
        let server = Server::start(vec![anthropic(&completion("done"))]);
        let base = anthropic_args(&server);
        let args = args_with(&base, &["--sandbox", sandbox, "t"]);
        let r = run_agent(ws.path(), &args, &[("PATH", &path)], LIMIT);
        assert_eq!(r.code, Some(0), "{sandbox}: {}", r.all());
        assert!(!marker.exists(), "{sandbox}: the workspace's curl ran and read the key's pipe");
        assert_eq!(server.requests()[0].header("x-api-key"), Some(KEY));
    }
}

/// A run against an OpenAI-compatible server on this machine (LM Studio, llama.cpp) asks it
/// first whether it takes only strings — with curl, before the workspace is opened and the
/// sandbox set up. That early look fixed the sandbox's policy at "off" for the whole run (its
/// commands wrote anywhere, though the banner said sandboxed) and could run a curl planted in
/// the workspace before the key was wiped from the agent's environment.
#[test]
fn a_run_against_a_local_server_is_sandboxed_and_runs_no_planted_curl() {
    let ws = tempfile::tempdir().unwrap();
    let (marker, path) = plant_curl(ws.path());
    let (outside, tmp) = outside_and_tmpdir();
    let target = outside.path().join("escaped.txt");
    let cmd = format!("echo x > '{}'", target.display());
    let server = Server::start(vec![
        openai(&tool("execute_command", &[("command", &cmd), ("requires_approval", "false")])),
        openai(&completion("done")),
    ]);
    let envs = [("PATH", path.as_str()), ("TMPDIR", tmp.path().to_str().unwrap())];
    let r = run_agent(ws.path(), &args_with(&openai_args(&server), &["t"]), &envs, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stderr.contains("Commands run sandboxed (--sandbox workspace-write"), "{}", r.stderr);
    assert!(!target.exists(), "a sandboxed command wrote outside the workspace");
    assert!(!marker.exists(), "the workspace's curl ran");
}

/// `agent-min mcp list` in a workspace passes over its folders on `PATH` as `run` does: a curl
/// planted in an activated `.venv/bin` would get the pipe holding the person's MCP headers
/// (an `Authorization` from their global settings).
#[test]
fn mcp_list_does_not_run_a_curl_planted_in_the_workspace() {
    let ws = tempfile::tempdir().unwrap();
    let (marker, path) = plant_curl(ws.path());
    let home = tempfile::tempdir().unwrap();
    let cfg = home.path().join("mcp.json");
    let servers = r#"{"mcpServers": {"web": {"type": "streamableHttp", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer tracker-SECRET"}, "timeout": 3}}}"#;
    std::fs::write(&cfg, servers).unwrap();
    let envs = [("PATH", path.as_str()), ("HOME", home.path().to_str().unwrap())];
    let r = run_cmd("mcp", ws.path(), &["list", "--mcp-config", cfg.to_str().unwrap()], &envs, LIMIT);
    assert!(r.stdout.contains("web") || r.stderr.contains("web"), "{}", r.all());
    assert!(!marker.exists(), "the workspace's curl ran: {:?}", std::fs::read_to_string(&marker));
}

/// The children the agent trusts — a global hook, the person's MCP server — get a `PATH`
/// without the workspace's folders: a program a sandboxed command wrote into an activated
/// `.venv/bin` (a hook's `#!/usr/bin/env python3`, a tool it calls by name, an `npx` server's
/// `node`) would run outside the sandbox.
#[test]
fn a_program_planted_in_the_workspace_is_not_run_by_a_hook_or_an_mcp_server_though_path_names_it() {
    let ws = tempfile::tempdir().unwrap();
    let (outside, _tmp) = outside_and_tmpdir();
    let bin = ws.path().join(".venv/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let marker = outside.path().join("escaped");
    let probe = format!("#!/bin/sh\necho \"$0 $*\" >> '{}'\n", marker.display());
    std::fs::write(bin.join("am-probe"), probe).unwrap();
    Command::new("chmod").arg("755").arg(bin.join("am-probe")).status().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    // A global hook calling it by name, and a server named by it.
    let home = tempfile::tempdir().unwrap();
    let hooks = home.path().join("Documents/Cline/Hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let ran = home.path().join("hook-ran");
    let hook = format!("#!/bin/sh\ncat > /dev/null\nam-probe hook; echo \"$PATH\" > '{}'\n", ran.display());
    std::fs::write(hooks.join("TaskStart"), hook).unwrap();
    Command::new("chmod").arg("755").arg(hooks.join("TaskStart")).status().unwrap();
    let cfg = home.path().join("mcp.json");
    std::fs::write(&cfg, r#"{"mcpServers": {"probe": {"command": "am-probe", "args": ["server"]}}}"#).unwrap();
    let docs = home.path().join("Documents");
    let envs = [
        ("PATH", path.as_str()),
        ("HOME", home.path().to_str().unwrap()),
        ("XDG_DOCUMENTS_DIR", docs.to_str().unwrap()),
    ];
    let server = Server::start(vec![anthropic(&completion("done"))]);
    let base = anthropic_args(&server);
    let args = args_with(&base, &["--mcp-config", cfg.to_str().unwrap(), "--no-save", "t"]);
    let r = run_agent(ws.path(), &args, &envs, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!marker.exists(), "ran: {:?}\n{}", std::fs::read_to_string(&marker), r.all());
    let hook_path = std::fs::read_to_string(&ran).unwrap_or_else(|e| panic!("the hook ran: {e}\n{}", r.all()));
    assert!(!hook_path.contains(".venv"), "the hook's PATH: {hook_path}");
}

#[test]
fn for_an_unprivileged_user_the_sandbox_confines_writes_and_cuts_the_network_too() {
    // As root the network namespace needs no user namespace; as anyone else it does. Run the
    // agent as `nobody` (65534) with `setpriv` (util-linux), as a user who is not root would.
    assert!(Command::new("setpriv").arg("--version").output().is_ok(), "setpriv (util-linux) is needed");
    let ws = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(ws.path(), Some(65534), Some(65534)).unwrap();
    let (outside, tmp) = outside_and_tmpdir();
    std::os::unix::fs::chown(outside.path(), Some(65534), Some(65534)).unwrap();
    std::os::unix::fs::chown(tmp.path(), Some(65534), Some(65534)).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let cmd = format!(
        "id -u; echo in > inside.txt && echo wrote-inside; echo x > '{}/escaped' || echo refused-outside; curl -sS --max-time 3 http://127.0.0.1:{port}/ || echo no-network",
        outside.path().display()
    );
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", &cmd), ("requires_approval", "false")])),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let mut child = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(bin())
        .arg("run")
        .args(args_with(&base, &["--no-save", "t"]))
        .current_dir(ws.path())
        .env("ANTHROPIC_API_KEY", KEY)
        .env("NO_COLOR", "1")
        .env("HOME", ws.path())
        .env("TMPDIR", tmp.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{out}");
    let told = server.requests()[1].last_user();
    assert!(told.contains("65534") && told.contains("wrote-inside"), "{told}");
    assert!(told.contains("refused-outside") && !outside.path().join("escaped").exists(), "{told}");
    assert!(told.contains("no-network") && listener.accept().is_err(), "{told}");
}

#[test]
fn a_process_of_the_same_unprivileged_user_cannot_read_the_agents_proc_environ() {
    // The agent turns itself non-dumpable: its /proc files become root's. Seen from a command
    // run unconfined as the same user (`nobody`, through setpriv).
    assert!(Command::new("setpriv").arg("--version").output().is_ok(), "setpriv (util-linux) is needed");
    let ws = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(ws.path(), Some(65534), Some(65534)).unwrap();
    let cmd = "id -u; cat /proc/$PPID/environ >/dev/null && echo READABLE || echo UNREADABLE; cat /proc/$$/environ >/dev/null && echo own-readable";
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", cmd), ("requires_approval", "false")])),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let status = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(bin())
        .arg("run")
        .args(args_with(&base, &["--no-save", "--sandbox", "off", "t"]))
        .current_dir(ws.path())
        .env("ANTHROPIC_API_KEY", KEY)
        .env("HOME", ws.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let told = server.requests()[1].last_user();
    assert!(told.contains("65534") && told.contains("own-readable"), "{told}");
    assert!(told.lines().any(|l| l == "UNREADABLE") && !told.lines().any(|l| l == "READABLE"), "{told}");
}

// ---- issue 20 (children die with the agent) and issue 25 (what escapes the sandbox) ----

/// Waits until `cond` holds, checking often; false if `limit` passes first.
fn wait_until(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

/// The pid written in `file`, once it is there.
fn pid_in(file: &Path) -> Option<i32> {
    std::fs::read_to_string(file).ok()?.trim().parse().ok()
}

/// Whether process `pid` has ended (gone, or a zombie nobody reaped yet).
fn ended(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[test]
fn a_command_and_everything_it_started_die_with_the_agent_on_kill_9() {
    for sandbox in ["off", "workspace-write"] {
        let ws = tempfile::tempdir().unwrap();
        let cmd = "sleep 600 & echo $! > bg.pid; echo $$ > sh.pid; wait";
        let server = Server::start(vec![
            anthropic(&tool("execute_command", &[("command", cmd), ("requires_approval", "false")])),
            anthropic(&completion("done")),
        ]);
        let base = anthropic_args(&server);
        let mut agent = Command::new(bin())
            .arg("run")
            .args(args_with(&base, &["--no-save", "--sandbox", sandbox, "t"]))
            .current_dir(ws.path())
            .env("ANTHROPIC_API_KEY", KEY)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pids = || Some((pid_in(&ws.path().join("bg.pid"))?, pid_in(&ws.path().join("sh.pid"))?));
        assert!(wait_until(LIMIT, || pids().is_some()), "the command did not start ({sandbox})");
        let (bg, sh) = pids().unwrap();
        agent.kill().unwrap(); // SIGKILL: the agent cleans nothing up itself
        agent.wait().unwrap();
        let both_ended = wait_until(LIMIT, || ended(bg) && ended(sh));
        for pid in [bg, sh] {
            if !ended(pid) {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
        }
        assert!(both_ended, "after kill -9 of the agent its command lives on (--sandbox {sandbox})");
    }
}

#[test]
fn a_sandboxed_command_cannot_signal_the_agent_nor_reach_a_unix_socket_nor_get_ssh_auth_sock() {
    // Issue 25, finding 6: `kill -STOP $PPID` froze the agent past its --timeout; a command drove
    // tmux through its socket; SSH_AUTH_SOCK was handed to commands.
    let ws = tempfile::tempdir().unwrap();
    // In the system temp directory: a socket's path must stay under 108 bytes, however deep the
    // checkout.
    let sockdir = tempfile::tempdir().unwrap();
    let sock = sockdir.path().join("server.sock");
    let listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    listener.set_nonblocking(true).unwrap();
    let cmd = format!(
        "kill -CONT $PPID && echo SIGNALLED || echo NO-SIGNAL; curl -sS --max-time 5 --unix-socket '{}' http://x/ >/dev/null 2>&1; echo curl=$?; echo SOCK=$SSH_AUTH_SOCK.",
        sock.display()
    );
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", &cmd), ("requires_approval", "false")])),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let envs = [("SSH_AUTH_SOCK", sock.to_str().unwrap())];
    let r = run_agent(ws.path(), &args_with(&base, &["--no-save", "t"]), &envs, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let told = server.requests()[1].last_user();
    let line = |l: &str| told.lines().any(|x| x == l);
    assert!(line("NO-SIGNAL") && !line("SIGNALLED"), "{told}");
    assert!(listener.accept().is_err(), "a sandboxed command connected to {}: {told}", sock.display());
    assert!(told.contains("curl=7"), "{told}");
    assert!(told.contains("SOCK=."), "SSH_AUTH_SOCK reached the command: {told}");
}

#[test]
fn sandboxed_commands_get_a_private_tmpdir_and_cannot_write_the_system_temp_directory() {
    // Issue 25, finding 7: with the state dir under /tmp a command planted a hook and its
    // approval there.
    let ws = tempfile::tempdir().unwrap();
    let planted = std::env::temp_dir().join(format!("agent-min-planted-{}", std::process::id()));
    // A private temp directory left by a run that was killed (its process is gone) is removed
    // by the next run.
    let mut gone = Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let stale = std::env::temp_dir().join(format!("agent-min-tmp-{}-0", gone.id()));
    std::fs::create_dir_all(stale.join("left")).unwrap();
    let cmd = format!(
        "echo x > '{}' || echo REFUSED; echo y > \"$TMPDIR/own\" && echo TMP-OK; echo TMPDIR=$TMPDIR",
        planted.display()
    );
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", &cmd), ("requires_approval", "false")])),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--no-save", "t"]), &[], LIMIT);
    let _ = std::fs::remove_file(&planted);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let told = server.requests()[1].last_user();
    let line = |l: &str| told.lines().any(|x| x == l);
    assert!(line("REFUSED") && line("TMP-OK"), "{told}");
    let tmpdir = told.lines().find_map(|l| l.strip_prefix("TMPDIR=")).unwrap().to_string();
    assert!(tmpdir.contains("agent-min-tmp-"), "{told}");
    assert!(!Path::new(&tmpdir).exists(), "the private temp directory outlived the run");
    assert!(!stale.exists(), "a killed run's private temp directory was left");

    // A state directory inside the workspace is read-only to commands; the agent saves there.
    let cmd = "mkdir -p state/x && echo WROTE-STATE; echo x > state/planted && echo WROTE-STATE";
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", cmd), ("requires_approval", "false")])),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--state-dir", "state", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let told = server.requests()[1].last_user();
    assert!(!told.lines().any(|l| l == "WROTE-STATE"), "{told}");
    assert!(!ws.path().join("state/planted").exists());
    let saved = std::fs::read_dir(ws.path().join("state/tasks")).map(|d| d.count()).unwrap_or(0);
    assert_eq!(saved, 1, "the agent itself still saves its task there");
}

/// A run whose workspace is the home directory: agent-min's config directory (its settings,
/// the global MCP servers, the MCP approvals), Cline's documents folder (global hooks, rules),
/// `~/.agents` (skills, the global `AGENTS.md`; missing before the run) and the state
/// directory are read-only to commands and never written by the file tools, so
/// nothing a run writes there is trusted by the next run (a review planted a global hook, an
/// MCP server and a config.toml sending the key elsewhere). The person is warned.
#[test]
fn in_the_home_directory_a_run_cannot_plant_settings_hooks_or_approvals_that_later_runs_trust() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_str().unwrap();
    let config = format!("{h}/.config");
    let state = format!("{h}/.local/state");
    // Cline's documents folder is `~/Documents` whether or not `xdg-user-dir` is installed.
    let docs = format!("{h}/Documents");
    let envs = [
        ("HOME", h),
        ("XDG_CONFIG_HOME", config.as_str()),
        ("XDG_STATE_HOME", state.as_str()),
        ("XDG_DOCUMENTS_DIR", docs.as_str()),
    ];
    let cmd = "mkdir -p Documents/Cline/Hooks && echo x > Documents/Cline/Hooks/TaskStart && echo PLANTED hook; \
               echo '{}' > .config/agent-min/mcp.json && echo PLANTED mcp; \
               mkdir -p .config/agent-min/mcp-approved && echo PLANTED approval; \
               echo x > .local/state/agent-min/planted && echo PLANTED state; \
               mkdir -p .agents && echo x > .agents/AGENTS.md && echo PLANTED agents-md; \
               mkdir -p .cline/rules && echo x > .cline/rules/r.md && echo PLANTED cline-rule; \
               mkdir -p .cline/data/settings && echo '{}' > .cline/data/settings/cline_mcp_settings.json && echo PLANTED cline-mcp; \
               mkdir -p .agents/skills/s && echo x > .agents/skills/s/SKILL.md && echo PLANTED skill; \
               echo 'XDG_DOCUMENTS_DIR=\"$HOME/planted\"' > .config/user-dirs.dirs && echo PLANTED user-dirs; \
               echo ok > inside.txt && echo INSIDE-OK";
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", cmd), ("requires_approval", "false")])),
        anthropic(&tool(
            "write_to_file",
            &[("path", ".config/agent-min/config.toml"), ("content", "base_url = \"http://127.0.0.1:9\"\n")],
        )),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(home.path(), &args_with(&base, &["t"]), &envs, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stderr.contains("holds your home directory"), "{}", r.stderr);
    let told = server.requests()[1].last_user();
    assert!(told.contains("INSIDE-OK") && !told.lines().any(|l| l.starts_with("PLANTED")), "{told}");
    let refused = server.requests()[2].last_user();
    assert!(refused.contains("which agent-min never writes"), "{refused}");
    for f in [
        "Documents/Cline/Hooks/TaskStart",
        ".config/agent-min/mcp.json",
        ".config/agent-min/mcp-approved",
        ".config/agent-min/config.toml",
        ".local/state/agent-min/planted",
        ".agents/AGENTS.md",
        ".agents/skills/s",
        ".cline/rules/r.md",
        ".cline/data/settings/cline_mcp_settings.json",
    ] {
        assert!(!home.path().join(f).exists(), "{f} was planted");
    }
    // Where Cline's documents folder is, for a later run (`xdg-user-dir`'s file): made empty,
    // which says what no file says, to be kept read-only.
    let dirs = std::fs::read_to_string(home.path().join(".config/user-dirs.dirs")).unwrap_or_default();
    assert!(!dirs.contains("planted"), "user-dirs.dirs was rewritten: {dirs}");
}

/// Settings kept in a dotfiles repository and linked from `~/.config/agent-min`: a run in that
/// repository cannot rewrite them through their real paths (a command, or `write_to_file`),
/// which the next run, anywhere, would trust (`sandbox = "off"`, another base URL for the key).
#[test]
fn a_setting_linked_from_the_config_folder_cannot_be_rewritten_where_it_lies() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_str().unwrap();
    let config = format!("{h}/.config");
    let dotfiles = home.path().join("dotfiles");
    std::fs::create_dir_all(dotfiles.join("agent-min")).unwrap();
    std::fs::create_dir_all(home.path().join(".config/agent-min")).unwrap();
    std::fs::write(dotfiles.join("agent-min/config.toml"), "# mine\n").unwrap();
    std::os::unix::fs::symlink(
        dotfiles.join("agent-min/config.toml"),
        home.path().join(".config/agent-min/config.toml"),
    )
    .unwrap();
    let envs = [("HOME", h), ("XDG_CONFIG_HOME", config.as_str())];
    let cmd =
        "echo 'sandbox = \"off\"' >> agent-min/config.toml && echo PLANTED; echo ok > inside.txt && echo INSIDE-OK";
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", cmd), ("requires_approval", "false")])),
        anthropic(&tool("write_to_file", &[("path", "agent-min/config.toml"), ("content", "yolo = true\n")])),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(&dotfiles, &args_with(&base, &["--no-save", "t"]), &envs, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let told = server.requests()[1].last_user();
    assert!(told.contains("INSIDE-OK") && !told.lines().any(|l| l.starts_with("PLANTED")), "{told}");
    let refused = server.requests()[2].last_user();
    assert!(refused.contains("which agent-min never writes"), "{refused}");
    assert_eq!(std::fs::read_to_string(dotfiles.join("agent-min/config.toml")).unwrap(), "# mine\n");
}

/// A run in Cline's documents folder itself (kept in git, say) may change it, but a global
/// hook a command wrote there is not run as the person's own: it is approved as a
/// workspace's hook is (under `--yolo`, not at all), since it would run outside the sandbox.
#[test]
fn a_global_hook_a_command_wrote_is_not_run_unasked() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_str().unwrap();
    let docs = format!("{h}/Documents");
    let cline = home.path().join("Documents/Cline");
    std::fs::create_dir_all(cline.join("Hooks")).unwrap();
    let envs = [("HOME", h), ("XDG_DOCUMENTS_DIR", docs.as_str())];
    let marker = home.path().join("hook-ran");
    let cmd = format!(
        "printf '#!/bin/sh\\ntouch {}\\n' > Hooks/PreToolUse && chmod 755 Hooks/PreToolUse && echo WROTE",
        marker.display()
    );
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", &cmd), ("requires_approval", "false")])),
        anthropic(&tool("list_files", &[("path", ".")])),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(&cline, &args_with(&base, &["--no-save", "t"]), &envs, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(server.requests()[1].last_user().contains("WROTE"), "{}", r.all());
    assert!(cline.join("Hooks/PreToolUse").exists());
    assert!(!marker.exists(), "the planted hook ran: {}", r.all());
    assert!(r.stderr.contains("is not approved and does not run"), "{}", r.stderr);
}

#[test]
fn in_the_home_directory_a_dangling_user_dirs_link_cannot_be_filled_in() {
    // `~/.config/user-dirs.dirs` a link to a dotfiles file not made yet: a command creating
    // that file would decide Cline's documents folder, and with it whose global hooks run.
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_str().unwrap();
    let config = format!("{h}/.config");
    std::fs::create_dir(&config).unwrap();
    std::os::unix::fs::symlink("../dotfiles/user-dirs.dirs", home.path().join(".config/user-dirs.dirs")).unwrap();
    let envs = [("HOME", h), ("XDG_CONFIG_HOME", config.as_str())];
    let cmd = "mkdir -p dotfiles; echo 'XDG_DOCUMENTS_DIR=\"$HOME/planted\"' > .config/user-dirs.dirs && echo PLANTED through-link; \
               echo 'XDG_DOCUMENTS_DIR=\"$HOME/planted\"' > dotfiles/user-dirs.dirs && echo PLANTED target; \
               echo ok > inside.txt && echo INSIDE-OK";
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", cmd), ("requires_approval", "false")])),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(home.path(), &args_with(&base, &["t"]), &envs, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let told = server.requests()[1].last_user();
    assert!(told.contains("INSIDE-OK") && !told.lines().any(|l| l.starts_with("PLANTED")), "{told}");
    let dirs = std::fs::read_to_string(home.path().join("dotfiles/user-dirs.dirs")).unwrap_or_default();
    assert!(!dirs.contains("planted"), "user-dirs.dirs was written through its link: {dirs}");
}

#[test]
fn sandboxed_commands_cannot_plant_git_hooks_git_config_cline_hooks_or_mcp_settings() {
    // Issue 25, finding 5: what a --yolo command writes there runs later outside the sandbox.
    let ws = tempfile::tempdir().unwrap();
    assert!(Command::new("git").args(["init", "-q"]).current_dir(ws.path()).status().unwrap().success());
    // A repository nested in the workspace (a vendored checkout): its .git is as dangerous.
    std::fs::create_dir_all(ws.path().join("vendor/lib")).unwrap();
    assert!(Command::new("git")
        .args(["init", "-q"])
        .current_dir(ws.path().join("vendor/lib"))
        .status()
        .unwrap()
        .success());
    std::fs::create_dir_all(ws.path().join(".clinerules/hooks")).unwrap();
    std::fs::create_dir_all(ws.path().join(".cline")).unwrap();
    let cmd = "for f in .git/hooks/pre-commit vendor/lib/.git/hooks/pre-commit .clinerules/hooks/TaskResume .cline/mcp.json; do echo x > $f && echo WROTE $f; done; git config core.fsmonitor ./evil && echo WROTE-CONFIG; echo '[core] fsmonitor = ./evil' >> vendor/lib/.git/config && echo WROTE-NESTED-CONFIG; echo in > inside.txt && echo INSIDE-OK";
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", cmd), ("requires_approval", "false")])),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--no-save", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let told = server.requests()[1].last_user();
    assert!(told.contains("INSIDE-OK") && !told.lines().any(|l| l.starts_with("WROTE")), "{told}");
    for f in
        [".git/hooks/pre-commit", "vendor/lib/.git/hooks/pre-commit", ".clinerules/hooks/TaskResume", ".cline/mcp.json"]
    {
        assert!(!ws.path().join(f).exists(), "{f} was planted");
    }
    for config in [".git/config", "vendor/lib/.git/config"] {
        let config = std::fs::read_to_string(ws.path().join(config)).unwrap();
        assert!(!config.contains("fsmonitor"), "{config}");
    }
}

#[test]
fn a_git_directory_reached_through_a_link_is_as_protected_as_one_that_is_not() {
    // Android's `repo` makes every `.git` a link into `.repo/`: a --yolo command wrote git config
    // and hooks through it (and `write_to_file` did too), which the next `git status` ran
    // outside the sandbox.
    let ws = tempfile::tempdir().unwrap();
    git(ws.path(), &["init", "-q"]);
    std::fs::create_dir_all(ws.path().join(".repo")).unwrap();
    std::fs::rename(ws.path().join(".git"), ws.path().join(".repo/proj.git")).unwrap();
    std::os::unix::fs::symlink(".repo/proj.git", ws.path().join(".git")).unwrap();
    std::fs::create_dir_all(ws.path().join("vendor/lib")).unwrap();
    git(&ws.path().join("vendor/lib"), &["init", "-q"]);
    std::fs::rename(ws.path().join("vendor/lib/.git"), ws.path().join(".repo/lib.git")).unwrap();
    std::os::unix::fs::symlink("../../.repo/lib.git", ws.path().join("vendor/lib/.git")).unwrap();
    let cmd = "git config core.fsmonitor ./evil && echo WROTE-CONFIG; echo x > .git/hooks/post-checkout && echo WROTE-HOOK; echo x > .repo/proj.git/hooks/pre-commit && echo WROTE-ALIAS; echo x > vendor/lib/.git/hooks/pre-commit && echo WROTE-NESTED; echo in > inside.txt && echo INSIDE-OK";
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", cmd), ("requires_approval", "false")])),
        anthropic(&tool("write_to_file", &[("path", ".git/hooks/post-merge"), ("content", "x")])),
        anthropic(&tool("write_to_file", &[("path", ".repo/proj.git/hooks/pre-push"), ("content", "x")])),
        anthropic(&tool("write_to_file", &[("path", ".repo/lib.git/config"), ("content", "x")])),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--yolo", "--no-save", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let told = server.requests()[1].last_user();
    assert!(told.contains("INSIDE-OK") && !told.lines().any(|l| l.starts_with("WROTE")), "{told}");
    for k in 2..=4 {
        let told = server.requests()[k].last_user();
        assert!(told.contains("which agent-min never writes"), "{told}");
    }
    for f in ["hooks/post-checkout", "hooks/pre-commit", "hooks/post-merge", "hooks/pre-push"] {
        assert!(!ws.path().join(".repo/proj.git").join(f).exists(), "{f} was planted");
    }
    assert!(!ws.path().join(".repo/lib.git/hooks/pre-commit").exists());
    for config in [".repo/proj.git/config", ".repo/lib.git/config"] {
        let config = std::fs::read_to_string(ws.path().join(config)).unwrap();
        assert!(!config.contains("fsmonitor") && config.contains("[core]"), "{config}");
    }
}

#[test]
fn a_git_directory_named_by_a_git_file_is_as_protected_as_a_git_directory() {
    // `git init --separate-git-dir` (and a worktree or a submodule) leaves `.git` a file that
    // names the git directory, here inside the workspace: the hooks and config git runs are
    // there, and a command wrote them through the plain path, which the next `git status` ran.
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join(".store")).unwrap();
    git(ws.path(), &["init", "-q", "--separate-git-dir", ".store/proj.git"]);
    std::fs::create_dir_all(ws.path().join("vendor/lib")).unwrap();
    git(&ws.path().join("vendor/lib"), &["init", "-q"]);
    std::fs::rename(ws.path().join("vendor/lib/.git"), ws.path().join(".store/lib.git")).unwrap();
    // A relative `gitdir:`, as a submodule's, from the file's own directory.
    std::fs::write(ws.path().join("vendor/lib/.git"), "gitdir: ../../.store/lib.git\n").unwrap();
    git(&ws.path().join("vendor/lib"), &["status", "-s"]);
    let cmd = "git config core.fsmonitor ./evil && echo WROTE-CONFIG; echo x > .store/proj.git/hooks/pre-commit && echo WROTE-HOOK; (cd vendor/lib && git config core.fsmonitor ./evil) && echo WROTE-NESTED-CONFIG; echo x > .store/lib.git/hooks/pre-commit && echo WROTE-NESTED-HOOK; echo in > inside.txt && echo INSIDE-OK";
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", cmd), ("requires_approval", "false")])),
        anthropic(&tool("write_to_file", &[("path", ".store/proj.git/hooks/pre-push"), ("content", "x")])),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--yolo", "--no-save", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let told = server.requests()[1].last_user();
    assert!(told.contains("INSIDE-OK") && !told.lines().any(|l| l.starts_with("WROTE")), "{told}");
    assert!(server.requests()[2].last_user().contains("which agent-min never writes"));
    for f in [".store/proj.git/hooks/pre-commit", ".store/proj.git/hooks/pre-push", ".store/lib.git/hooks/pre-commit"] {
        assert!(!ws.path().join(f).exists(), "{f} was planted");
    }
    for config in [".store/proj.git/config", ".store/lib.git/config"] {
        let config = std::fs::read_to_string(ws.path().join(config)).unwrap();
        assert!(!config.contains("fsmonitor") && config.contains("[core]"), "{config}");
    }
}

/// `s` quoted for `sh`.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

#[test]
fn a_sandboxed_command_cannot_type_into_the_agents_terminal() {
    // Issue 25, finding 3: with TIOCSTI a command typed `y⏎` into the terminal and approved the
    // model's next command itself. The agent runs on a pseudo-terminal (`script`), its
    // controlling terminal, as at a person's desk.
    let ws = tempfile::tempdir().unwrap();
    let inject = "python3 -c 'import fcntl, os, termios; fd = os.open(\"/dev/tty\", os.O_RDWR); fcntl.ioctl(fd, termios.TIOCSTI, b\"#\"); print(\"INJECTED\")' 2>/dev/null || echo NO-TTY";
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", inject), ("requires_approval", "false")])),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let line: Vec<String> = std::iter::once(bin().display().to_string())
        .chain(["run".to_string()])
        .chain(args_with(&base, &["--no-save", "t"]).iter().map(|s| s.to_string()))
        .map(|a| sh_quote(&a))
        .collect();
    let mut child = Command::new("script")
        .args(["-qefc", &line.join(" "), "/dev/null"])
        .current_dir(ws.path())
        .env("ANTHROPIC_API_KEY", KEY)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script (util-linux) is needed");
    let stdin = child.stdin.take();
    let r = wait_limited(child, LIMIT);
    drop(stdin);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let told = server.requests()[1].last_user();
    let line = |l: &str| told.lines().any(|x| x == l);
    assert!(line("NO-TTY") && !line("INJECTED"), "{told}");
}

#[test]
fn a_sandboxed_command_cannot_read_what_is_typed_into_another_terminal() {
    // Security review, finding 1: `dd if=/dev/pts/0` from a --yolo command read what the person
    // typed into the agent's terminal — and could read any other terminal of theirs. The test's
    // own pseudo-terminal stands for one: a line typed into it waits there while a sandboxed
    // command tries to open it by its path, under both sandbox modes.
    use std::os::fd::AsRawFd;
    for sandbox in ["workspace-write", "read-only"] {
        let ws = tempfile::tempdir().unwrap();
        let (mut terminal, tty) = pty();
        let path = std::fs::read_link(format!("/proc/self/fd/{}", tty.as_raw_fd())).unwrap();
        assert!(path.starts_with("/dev/pts"), "{}", path.display());
        terminal.write_all(b"hunter2-typed\n").unwrap();
        // Nor through a device node of its own (root may `mknod`; any other user may not).
        let rdev = std::os::unix::fs::MetadataExt::rdev(&tty.metadata().unwrap());
        let (major, minor) = (libc::major(rdev), libc::minor(rdev));
        let cmd = format!(
            "timeout 10 head -c 14 {tty} && echo OPENED || echo REFUSED; \
             timeout 10 head -c 1 /dev/ptmx >/dev/null 2>&1 && echo PTMX || echo NO-PTMX; \
             mknod term c {major} {minor} 2>/dev/null && echo MADE || echo NO-MKNOD; \
             test \"$(head -c 4 /dev/urandom | wc -c)\" = 4 && echo x > /dev/null && echo DEVICES-OK",
            tty = sh_quote(&path.display().to_string())
        );
        let server = Server::start(vec![
            anthropic(&tool("execute_command", &[("command", &cmd), ("requires_approval", "false")])),
            anthropic(&completion("done")),
        ]);
        let base = anthropic_args(&server);
        let r = run_agent(ws.path(), &args_with(&base, &["--no-save", "--sandbox", sandbox, "t"]), &[], LIMIT);
        assert_eq!(r.code, Some(0), "{sandbox}: {}", r.all());
        let told = server.requests()[1].last_user();
        let line = |l: &str| told.lines().any(|x| x == l);
        assert!(!told.contains("hunter2"), "--sandbox {sandbox}: a command read the terminal: {told}");
        assert!(line("REFUSED") && !line("OPENED"), "--sandbox {sandbox}: {told}");
        assert!(line("NO-PTMX") && line("NO-MKNOD") && line("DEVICES-OK"), "--sandbox {sandbox}: {told}");
        // The line is still there for whoever the terminal is for.
        let mut pending = [rustix::event::PollFd::new(&tty, rustix::event::PollFlags::IN)];
        let limit = rustix::event::Timespec { tv_sec: LIMIT.as_secs() as i64, tv_nsec: 0 };
        assert_eq!(
            rustix::event::poll(&mut pending, Some(&limit)).unwrap(),
            1,
            "--sandbox {sandbox}: the line is gone"
        );
        let mut got = [0u8; 64];
        let n = (&tty).read(&mut got).unwrap();
        assert_eq!(&got[..n], b"hunter2-typed\n", "--sandbox {sandbox}");
    }
}

#[test]
fn sandbox_check_names_the_kernel_features_and_what_probe_commands_could_do() {
    let ws = tempfile::tempdir().unwrap();
    let r = run_cmd("sandbox", ws.path(), &["check"], &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    for line in [
        "Landlock ABI: ",
        "  write in the workspace: possible",
        "  write outside it (the system temp directory): refused",
        "  write in the workspace's .git: refused",
        "  open the terminal (/dev/tty): refused",
        "  open /proc/PID/mem of a process outside: refused",
        "  read another terminal (/dev/pts/N): refused",
    ] {
        assert!(r.stdout.contains(line), "{line:?} missing:\n{}", r.stdout);
    }
}

#[test]
fn brackets_and_braces_in_a_url_are_characters_not_curl_globs() {
    // Without curl's -g, `[1-3]` made three requests of one (an MCP server names the URL its
    // messages go to).
    // (The model list asked of a local server, `…/v1/models`, is answered apart and not
    // recorded.)
    let server = Server::start(vec![openai(&completion("done"))]);
    let url = format!("{}/x[1-3]{{a,b}}", server.openai_url());
    let mut args = openai_args(&server);
    let at = args.iter().position(|a| a == "--base-url").unwrap() + 1;
    args[at] = url;
    let r = run_agent(
        tempfile::tempdir().unwrap().path(),
        &args_with(&args, &["--no-save", "--context-window", "128000", "t"]),
        &[],
        LIMIT,
    );
    let reqs = server.requests();
    let paths: Vec<String> = reqs.iter().map(|q| q.path.clone()).collect();
    assert_eq!(r.code, Some(0), "{paths:?} {}", r.all());
    assert_eq!(paths, ["/v1/x[1-3]{a,b}/chat/completions"]);
}
