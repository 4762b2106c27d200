//! The key never reaches argv or output; missing curl is named; Ctrl-C kills curl and running
//! commands and exits 130; usage errors exit 2.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

const LIMIT: Duration = Duration::from_secs(60);

fn real_curl() -> String {
    let out = Command::new("sh").args(["-c", "command -v curl"]).output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A `curl` first on PATH that logs its argv (the kind of any `[@]/dev/fd/N` argument and the
/// mode of any other `@file`), its pid, then execs the real curl.
fn curl_wrapper(dir: &Path) -> (PathBuf, PathBuf) {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = dir.join("curl-argv.log");
    let script = format!(
        "#!/bin/sh\necho \"pid $$\" >> '{log}'\nfor a in \"$@\"; do\n  printf 'arg %s\\n' \"$a\" >> '{log}'\n  case \"$a\" in @/dev/fd/*|/dev/fd/*) printf 'kind %s\\n' \"$(stat -L -c %F \"${{a#@}}\")\" >> '{log}';; @/*) printf 'mode %s\\n' \"$(stat -c %a \"${{a#@}}\")\" >> '{log}';; esac\ndone\nexec '{curl}' \"$@\"\n",
        log = log.display(),
        curl = real_curl()
    );
    let w = bin.join("curl");
    std::fs::write(&w, script).unwrap();
    std::fs::set_permissions(&w, std::fs::Permissions::from_mode(0o755)).unwrap();
    (bin, log)
}

fn path_with(bin: &Path) -> String {
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}

#[test]
fn api_key_is_never_on_curls_argv_nor_in_output() {
    let ws = tempfile::tempdir().unwrap();
    let tools = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let (bin, log) = curl_wrapper(tools.path());
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "a.txt"), ("content", "x")])),
        anthropic(&completion("done")),
    ]);
    let path = path_with(&bin);
    let tmpdir = tmp.path().display().to_string();
    let base = anthropic_args(&server);
    let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
    args.push("t");
    let r = run_agent(ws.path(), &args, &[("PATH", &path), ("TMPDIR", &tmpdir)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());

    let argv = std::fs::read_to_string(&log).expect("the wrapper ran");
    assert_eq!(argv.matches("pid ").count(), 2, "curl ran once per request:\n{argv}");
    assert!(argv.contains("arg -K"), "{argv}");
    assert!(!argv.contains(KEY), "the key is on curl's argv:\n{argv}");
    assert!(!argv.contains("sk-test"), "{argv}");
    // Nor the URL, which may hold a token (an MCP server's, a base URL's user info).
    assert!(!argv.contains("127.0.0.1") && !argv.contains("http"), "the URL is on curl's argv:\n{argv}");
    // The headers and the URL go through an inherited pipe, never a file.
    assert!(argv.contains("arg /dev/fd/"), "{argv}");
    assert_eq!(argv.matches("kind fifo").count(), 2, "{argv}");
    assert!(!argv.contains("mode "), "a file was passed to curl:\n{argv}");
    // The server did receive it, so it was really sent.
    assert_eq!(server.requests()[0].header("x-api-key"), Some(KEY));
    // Not in output, not left on disk.
    assert!(!r.all().contains(KEY));
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(leftovers.is_empty(), "temp files left behind: {leftovers:?}");
    for e in walk(ws.path()) {
        assert!(!std::fs::read_to_string(&e).unwrap_or_default().contains(KEY), "{}", e.display());
    }
}

fn walk(p: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(p).unwrap().flatten() {
        if e.path().is_dir() {
            v.extend(walk(&e.path()));
        } else {
            v.push(e.path());
        }
    }
    v
}

#[test]
fn missing_curl_is_named() {
    let ws = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let server = Server::start(vec![]);
    let base = anthropic_args(&server);
    let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
    args.push("t");
    let path = empty.path().display().to_string();
    let r = run_agent(ws.path(), &args, &[("PATH", &path)], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(r.stderr.contains("`curl` was not found on PATH"), "{}", r.stderr);
    assert!(server.requests().is_empty());
}

/// A relative `PATH` entry (`.`, or `node_modules/.bin` that a sandboxed `npm install` may
/// fill) does not find a `curl` the workspace holds: Command's own lookup ran it, with the
/// key's header pipe.
#[test]
fn a_workspace_curl_on_a_relative_path_entry_is_never_run() {
    let ws = tempfile::tempdir().unwrap();
    let marker = ws.path().join("fake-curl-ran");
    let fake = ws.path().join("curl");
    std::fs::write(&fake, format!("#!/bin/sh\ncat \"$@\" > '{}' 2>&1\nexit 1\n", marker.display())).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let server = Server::start(vec![anthropic(&completion("done"))]);
    let base = anthropic_args(&server);
    let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
    args.push("t");
    let path = format!(".:{}", std::env::var("PATH").unwrap_or_default());
    let r = run_agent(ws.path(), &args, &[("PATH", &path)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!marker.exists(), "the workspace's curl ran");
    assert_eq!(server.requests().len(), 1);
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < Duration::from_secs(20), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
        .unwrap_or(false)
}

fn spawn_agent(ws: &Path, args: &[&str], envs: &[(&str, &str)]) -> std::process::Child {
    let mut cmd = Command::new(bin());
    cmd.arg("run")
        .args(args)
        .arg("--no-save")
        .current_dir(ws)
        .env("ANTHROPIC_API_KEY", KEY)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

fn sigint(pid: u32) {
    assert!(Command::new("kill").args(["-INT", &pid.to_string()]).status().unwrap().success());
}

/// An agent run whose one request stalls mid-stream, with curl wrapped (its pid logged) and
/// TMPDIR a private folder; returns once curl is running.
struct StalledRun {
    _ws: tempfile::TempDir,
    _tools: tempfile::TempDir,
    tmp: tempfile::TempDir,
    server: Server,
    child: std::process::Child,
    curl_pid: i32,
}

fn stalled_run() -> StalledRun {
    let ws = tempfile::tempdir().unwrap();
    let tools = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let (bin, log) = curl_wrapper(tools.path());
    let mut stalled = anthropic(&completion("never"));
    stalled.stall = Duration::from_secs(30);
    let server = Server::start(vec![stalled]);
    let base = anthropic_args(&server);
    let args = args_with(&base, &["t"]);
    let path = path_with(&bin);
    let tmpdir = tmp.path().display().to_string();
    let child = spawn_agent(ws.path(), &args, &[("PATH", &path), ("TMPDIR", &tmpdir)]);
    wait_for("the request", || !server.requests().is_empty());
    let curl_pid: i32 = std::fs::read_to_string(&log).unwrap().lines().next().unwrap()[4..].parse().unwrap();
    assert!(alive(curl_pid));
    StalledRun { _ws: ws, _tools: tools, tmp, server, child, curl_pid }
}

#[test]
fn ctrl_c_while_streaming_kills_curl_and_exits_130() {
    // Kept whole: its server and folders must live until the end of the test.
    let run = stalled_run();
    let (tmp, curl_pid) = (&run.tmp, run.curl_pid);
    sigint(run.child.id());
    let start = Instant::now();
    let r = wait_limited(run.child, Duration::from_secs(10));
    assert_eq!(r.code, Some(130), "{}", r.all());
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(r.stderr.contains("interrupted"), "{}", r.stderr);
    wait_for("curl to be gone", || !alive(curl_pid));
    let leftovers: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(leftovers.is_empty(), "header file left behind: {leftovers:?}");
}

#[test]
fn ctrl_c_while_a_command_runs_kills_its_process_group_and_exits_130() {
    let ws = tempfile::tempdir().unwrap();
    let cmd = "sleep 60 & echo $! > bg.pid; wait";
    let server =
        Server::start(vec![anthropic(&tool("execute_command", &[("command", cmd), ("requires_approval", "false")]))]);
    let base = anthropic_args(&server);
    let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
    args.push("t");
    let child = spawn_agent(ws.path(), &args, &[]);
    let pid = child.id();
    let pidfile = ws.path().join("bg.pid");
    wait_for("the command to start", || std::fs::read_to_string(&pidfile).is_ok_and(|s| s.ends_with('\n')));
    let bg: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
    assert!(alive(bg));
    sigint(pid);
    let r = wait_limited(child, Duration::from_secs(10));
    assert_eq!(r.code, Some(130), "{}", r.all());
    wait_for("the background sleep to be killed", || !alive(bg));
}

#[test]
fn help_teaches_and_exits_0() {
    let out = Command::new(bin()).args(["run", "--help"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "--provider",
        "--model",
        "--base-url",
        "--yolo",
        "--cwd",
        "--max-mistakes",
        "--max-turns",
        "--replay",
        "EXIT CODES",
        "130",
    ] {
        assert!(help.contains(needle), "--help lacks {needle}");
    }
}

#[test]
fn usage_errors_exit_2_and_name_the_fix() {
    let ws = tempfile::tempdir().unwrap();
    let run = |args: &[&str], envs: &[(&str, &str)]| {
        let mut c = Command::new(bin());
        c.arg("run").args(args).current_dir(ws.path()).env_remove("ANTHROPIC_API_KEY").env_remove("OPENAI_API_KEY");
        c.env_remove("OPENAI_BASE_URL").env_remove("OPENROUTER_API_KEY");
        for (k, v) in envs {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (code, err) = run(&[], &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("no task given"), "{err}");
    let (code, err) = run(&["--provider", "anthropic", "t"], &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("ANTHROPIC_API_KEY is not set"), "{err}");
    // No provider asked for: every variable that would pick one is named.
    let (code, err) = run(&["t"], &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("no API key found: set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENROUTER_API_KEY (the first set picks the provider)"), "{err}");
    // A server named by URL reads its provider's key only: that one is named.
    let (code, err) = run(&["--base-url", "https://api.openai.com/v1", "t"], &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("OPENAI_API_KEY is not set"), "{err}");
    let (code, err) = run(&["--max-turns", "lots", "t"], &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--max-turns expects a whole number"), "{err}");
    let (code, err) = run(&["--cwd", "/nonexistent/agent-min", "--provider", "ollama", "t"], &[]);
    assert_eq!(code, Some(2));
    assert!(err.contains("--cwd"), "{err}");
}

#[test]
fn commands_never_see_the_api_keys() {
    let ws = tempfile::tempdir().unwrap();
    const OPENAI_KEY: &str = "sk-openai-OTHER-SECRET-77";
    let cmd = "env | grep API_KEY; echo \"a=$ANTHROPIC_API_KEY o=$OPENAI_API_KEY\" >&2";
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", cmd), ("requires_approval", "false")])),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
    args.extend(["--json", "t"]);
    let r = run_agent(ws.path(), &args, &[("OPENAI_API_KEY", OPENAI_KEY)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    for k in [KEY, OPENAI_KEY] {
        assert!(!r.stdout.contains(k), "the key is in the --json stdout:\n{}", r.stdout);
        assert!(!r.stderr.contains(k), "the key is on stderr:\n{}", r.stderr);
    }
    let events = events::parse(&r.stdout);
    let result = events::of(&events, "tool_result")[0]["result"].as_str().unwrap().to_string();
    assert!(result.contains("a= o="), "{result}");
    // The model was not told either.
    let reqs = server.requests();
    assert!(reqs[1].body.to_string().contains("a= o="));
    assert!(!reqs[1].body.to_string().contains("sk-"));
}

#[test]
fn kill_9_mid_stream_leaves_no_key_on_disk_and_no_curl_running() {
    let mut run = stalled_run();
    let (tmp, server, curl_pid) = (&run.tmp, &run.server, run.curl_pid);
    let child = &mut run.child;
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();
    wait_for("curl to die with the agent", || !alive(curl_pid));
    for f in walk(tmp.path()) {
        let text = std::fs::read(&f).unwrap_or_default();
        assert!(!String::from_utf8_lossy(&text).contains(KEY), "the key survives in {}", f.display());
    }
    assert_eq!(server.requests()[0].header("x-api-key"), Some(KEY));
}

#[test]
fn a_curlrc_is_never_read() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(".curlrc"), "verbose\nheader = \"X-From-Curlrc: yes\"\n").unwrap();
    let server = Server::start(vec![anthropic(&completion("done"))]);
    let base = anthropic_args(&server);
    let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
    args.push("t");
    let h = home.path().display().to_string();
    let r = run_agent(ws.path(), &args, &[("CURL_HOME", &h), ("HOME", &h), ("XDG_CONFIG_HOME", &h)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(server.requests()[0].header("x-from-curlrc"), None, "curl read ~/.curlrc");
    assert!(!r.all().contains(KEY));
}

#[test]
fn sigterm_is_reported_as_sigterm_not_ctrl_c() {
    let ws = tempfile::tempdir().unwrap();
    let mut stalled = anthropic(&completion("never"));
    stalled.stall = Duration::from_secs(30);
    let server = Server::start(vec![stalled]);
    let base = anthropic_args(&server);
    let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
    args.push("t");
    let child = spawn_agent(ws.path(), &args, &[]);
    wait_for("the request", || !server.requests().is_empty());
    assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    let r = wait_limited(child, Duration::from_secs(10));
    assert_eq!(r.code, Some(143), "SIGTERM: 128 + 15: {}", r.all());
    assert!(r.stderr.contains("terminated (SIGTERM)") && !r.stderr.contains("Ctrl-C"), "{}", r.stderr);
}
