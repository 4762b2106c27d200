//! What a new user hits first: an unusable `--cwd`, a read-only workspace, `--version`, a task
//! piped on standard input.

mod common;

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
