//! What a new user hits first: an unusable `--cwd`, a read-only workspace, `--version`, a task
//! piped on standard input.

use crate::common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn an_unusable_cwd_is_a_usage_error_naming_it() {
    let here = tempfile::tempdir().unwrap();
    let r = run_agent(here.path(), &["--cwd", "/etc/passwd", "--no-save", "hi"], &[], LIMIT);
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert!(
        r.stderr.contains("the workspace /etc/passwd is not a directory; pass a directory with --cwd"),
        "{}",
        r.stderr
    );
    let missing = here.path().join("nope");
    let r = run_agent(here.path(), &["--cwd", missing.to_str().unwrap(), "--no-save", "hi"], &[], LIMIT);
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert!(r.stderr.contains("is not usable (No such file or directory"), "{}", r.stderr);
}

#[test]
fn a_workspace_that_is_not_writable_is_said_up_front() {
    // /proc refuses new files to everyone, root included.
    let server = Server::start(vec![anthropic(&completion("done"))]);
    let here = tempfile::tempdir().unwrap();
    let r =
        run_agent(here.path(), &args_with(&anthropic_args(&server), &["--cwd", "/proc", "--no-save", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let warning = "the workspace /proc is not writable (";
    let at = r.all().find(warning).unwrap_or_else(|| panic!("no warning: {}", r.all()));
    assert!(r.all()[at..].contains("write_to_file, replace_in_file and commands that write there will fail"));
    assert!(at < r.all().find("Task completed").unwrap_or(usize::MAX), "said before the task ran");
}

#[test]
fn version_is_printed_by_the_binary_and_by_run() {
    for args in [&["--version"][..], &["-V"], &["run", "--version"]] {
        let out = Command::new(bin()).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("agent-min {}\n", env!("CARGO_PKG_VERSION")),
            "{args:?}"
        );
    }
}

#[test]
fn a_dash_reads_the_task_from_standard_input() {
    let server = Server::start(vec![anthropic(&completion("done"))]);
    let ws = tempfile::tempdir().unwrap();
    let base = anthropic_args(&server);
    let mut child = Command::new(bin())
        .arg("run")
        .args(args_with(&base, &["--no-save", "-"]))
        .current_dir(ws.path())
        .env("ANTHROPIC_API_KEY", KEY)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"Refactor the parser.\nKeep the tests green.\n").unwrap();
    let r = wait_limited(child, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let first = server.requests()[0].last_user();
    assert!(first.starts_with("<task>\nRefactor the parser.\nKeep the tests green.\n</task>"), "{first}");
}

#[test]
fn anthropic_404_names_the_url_and_suggests_dropping_v1() {
    let server = Server::start(vec![status(
        404,
        serde_json::json!({"type":"error","error":{"type":"not_found_error","message":"Not Found"}}),
    )]);
    let ws = tempfile::tempdir().unwrap();
    let base = format!("{}/v1", server.anthropic_url());
    let r =
        run_agent(ws.path(), &["--provider", "anthropic", "--base-url", &base, "--yolo", "--no-save", "t"], &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert_eq!(server.requests()[0].path, "/v1/v1/messages");
    let want = format!(
        "posted to {base}/v1/messages; agent-min adds /v1/messages to an Anthropic base URL itself, so drop /v1 from --base-url ({})",
        server.anthropic_url()
    );
    assert!(r.stderr.contains(&want), "{}", r.stderr);
}

#[test]
fn http_401_says_where_the_key_came_from_or_that_none_was_sent() {
    let unauthorized = || status(401, serde_json::json!({"error":{"message":"Unauthorized","type":"auth"}}));
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![unauthorized()]);
    let r = run_agent(ws.path(), &args_with(&anthropic_args(&server), &["--no-save", "t"]), &[], LIMIT);
    assert!(r.stderr.contains("the key sent was read from ANTHROPIC_API_KEY; check that it is valid"), "{}", r.stderr);
    let server = Server::start(vec![unauthorized()]);
    let r = run_agent(ws.path(), &args_with(&openai_args(&server), &["--no-save", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(r.stderr.contains("no key was sent (OPENAI_API_KEY is not set)"), "{}", r.stderr);
}

#[test]
fn a_refused_connection_is_not_retried_and_says_nothing_listens() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let base = format!("http://127.0.0.1:{port}");
    let ws = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let r = run_agent(
        ws.path(),
        &["--provider", "anthropic", "--base-url", &base, "--yolo", "--no-save", "--json", "t"],
        &[],
        LIMIT,
    );
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(
        r.stderr.contains(&format!(
            "nothing is listening at {base}/v1/messages (connection refused); start the server, or check --base-url"
        )),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("\"type\":\"retry\""), "{}", r.stdout);
    // The default retry delays (2 + 4 + 8 s) were not waited for.
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// Runs agent-min on a pseudo-terminal (util-linux `script`), as a person sees it.
fn on_a_terminal(ws: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let quoted: Vec<String> = std::iter::once(bin().display().to_string())
        .chain(std::iter::once("run".to_string()))
        .chain(args.iter().map(|a| a.to_string()))
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &quoted.join(" "), "/dev/null"])
        .current_dir(ws)
        .env("ANTHROPIC_API_KEY", KEY)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("util-linux `script` is needed to run agent-min on a terminal (apt-get install util-linux)");
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn on_a_terminal_a_failure_is_said_once_without_an_empty_token_line() {
    let server = Server::start(vec![status(
        401,
        serde_json::json!({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}),
    )]);
    let ws = tempfile::tempdir().unwrap();
    let (code, screen) = on_a_terminal(ws.path(), &args_with(&anthropic_args(&server), &["--no-save", "t"]));
    assert_eq!(code, Some(1), "{screen}");
    assert_eq!(screen.matches("invalid x-api-key").count(), 1, "{screen}");
    assert!(!screen.contains("Tokens:"), "{screen}");
}
