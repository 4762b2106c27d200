//! `agent-min history` after the ways a run ends: Ctrl-C, a failure after answered requests.

use crate::common;

use std::process::Stdio;
use std::time::Duration;

use common::*;

const LIMIT: Duration = Duration::from_secs(60);

/// The one `history` line of the only task saved in `state`.
fn history_line(state: &std::path::Path) -> String {
    let here = tempfile::tempdir().unwrap();
    let state = state.display().to_string();
    let r = run_cmd("history", here.path(), &[], &[("XDG_STATE_HOME", &state)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "a header and one task: {}", r.stdout);
    assert!(lines[0].starts_with("ID "), "{}", r.stdout);
    // The columns stand under the header's, whatever the status.
    let requests_end = lines[0].find("REQUESTS").unwrap() + "REQUESTS".len();
    assert_eq!(lines[1].find(" req ").map(|i| i + " req".len()), Some(requests_end), "{}", r.stdout);
    lines[1].to_string()
}

#[test]
fn a_task_stopped_by_ctrl_c_is_interrupted_with_its_answered_requests() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "x\n").unwrap();
    let mut stalled = anthropic(&completion("never"));
    stalled.stall = Duration::from_secs(30);
    let server = Server::start(vec![anthropic(&tool("read_file", &[("path", "a.txt")])), stalled]);
    let base = anthropic_args(&server);
    let child =
        agent_cmd("run", ws.path(), &args_with(&base, &["t"]), &[], state.path()).stdin(Stdio::null()).spawn().unwrap();
    server.wait_for_requests(2, LIMIT);
    ctrl_c(&child);
    let r = wait_limited(child, LIMIT);
    assert_eq!(r.code, Some(130), "{}", r.all());
    let line = history_line(state.path());
    // One request answered (the read); the second was cut off by Ctrl-C.
    assert!(line.contains(" interrupted        1 req "), "{line}");
}

#[test]
fn a_failed_task_counts_only_the_requests_the_model_answered() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let list = tool("list_files", &[("path", ".")]);
    let err = || status(500, serde_json::json!({"type":"error","error":{"type":"api_error","message":"boom"}}));
    // Two answered requests, then one that fails after its 3 retries.
    let server = Server::start(vec![
        anthropic(&list),
        anthropic(&tool("list_files", &[("path", "./")])),
        err(),
        err(),
        err(),
        err(),
    ]);
    let s = state.path().display().to_string();
    let r = run_agent(ws.path(), &args_with(&anthropic_args(&server), &["t"]), &[("XDG_STATE_HOME", &s)], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert_eq!(server.requests().len(), 6);
    let line = history_line(state.path());
    assert!(line.contains(" failed             2 req "), "{line}");
    assert!(r.stderr.contains("over 2 requests"), "{}", r.stderr);
}

#[test]
fn history_json_and_the_saved_task_follow_their_published_schemas() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "x\n").unwrap();
    let server =
        Server::start(vec![anthropic(&tool("read_file", &[("path", "a.txt")])), anthropic(&completion("read"))]);
    let s = state.path().display().to_string();
    let r = run_agent(ws.path(), &args_with(&anthropic_args(&server), &["t"]), &[("XDG_STATE_HOME", &s)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());

    let here = tempfile::tempdir().unwrap();
    let h = run_cmd("history", here.path(), &["--json"], &[("XDG_STATE_HOME", &s)], LIMIT);
    assert_eq!(h.code, Some(0), "{}", h.all());
    let lines: Vec<serde_json::Value> = h.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 1, "{}", h.stdout);
    let history = common::events::schema("history.schema.json");
    common::events::errors(&history, &lines[0]).unwrap();
    assert_eq!((lines[0]["version"].as_u64(), lines[0]["status"].as_str()), (Some(1), Some("completed")));
    assert_eq!(lines[0]["totals"]["requests"], 2);
    let mut extra = lines[0].clone();
    extra["surprise"] = true.into();
    assert!(common::events::errors(&history, &extra).is_err(), "the schema is closed");

    let id = lines[0]["id"].as_str().unwrap();
    let file = state.path().join("agent-min/tasks").join(format!("{id}.json"));
    let saved: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let task = common::events::schema("task.schema.json");
    common::events::errors(&task, &saved).unwrap();
    assert_eq!(saved["messages"][1]["role"], "assistant");
    let mut role = saved.clone();
    role["messages"][1]["role"] = "system".into();
    assert!(common::events::errors(&task, &role).is_err(), "an unknown role is not a saved task");
}
