//! `--json`: every event of end-to-end runs follows the documented schema, the events tell the
//! whole story in order, and the human output moves to stderr.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::{json, Value};

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn json_events_follow_the_schema() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "alpha\n").unwrap();
    let mut limited = status(429, json!({"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}));
    limited.headers.push(("retry-after".into(), "0".into()));
    let mut thinking = anthropic_body("", 5, "end_turn");
    // A reasoning delta before the text, as extended thinking streams it.
    let at = thinking.find("event: ping").unwrap();
    thinking.insert_str(at, "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Let me look.\"}}\r\n\r\n");
    let with_reasoning = {
        let text_events = anthropic_body(&tool("read_file", &[("path", "a.txt")]), 4, "end_turn");
        let start = text_events.find("event: ping").unwrap();
        let end = thinking.find("event: ping").unwrap();
        let mut b = text_events.clone();
        b.insert_str(start, &thinking[at..end]);
        Resp { body: b.into_bytes(), ..anthropic("") }
    };
    let server = Server::start(vec![
        limited,
        with_reasoning,
        anthropic(&format!("Writing.\n{}", tool("write_to_file", &[("path", "b.txt"), ("content", "beta")]))),
        anthropic(&tool("read_file", &[("path", "../outside.txt")])),
        anthropic(&tool("execute_command", &[("command", "echo hi"), ("requires_approval", "false")])),
        anthropic(&completion("Both files are there.")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(
        ws.path(),
        &args_with(&base, &["--json", "--model", "claude-sonnet-4-5", "--tool-calls", "xml", "t"]),
        &[],
        LIMIT,
    );
    assert_eq!(r.code, Some(0), "{}", r.all());
    let events = events::parse(&r.stdout);

    // Every type but the failure-only ones appears; the failure ones are covered below.
    for ty in [
        "task_started",
        "text",
        "reasoning",
        "tool_call",
        "approval",
        "tool_result",
        "api_request",
        "retry",
        "completion",
    ] {
        assert!(!events::of(&events, ty).is_empty(), "no {ty} event in:\n{}", r.stdout);
    }
    assert_eq!(events[0]["type"], "task_started");
    assert_eq!(events[0]["model"], "claude-sonnet-4-5");
    assert_eq!(events[0]["resumed"], false);
    let last = events.last().unwrap();
    assert_eq!(last["type"], "completion");
    assert_eq!(last["status"], "completed");
    assert_eq!(last["result"], "Both files are there.");
    let id = events[0]["task_id"].as_str().unwrap();
    assert!(events.iter().all(|e| e["task_id"] == id));
    assert!(events.iter().all(|e| e["version"] == 6), "every event names the format's version");

    // The human output went to stderr.
    assert!(r.stderr.contains("● read_file a.txt"), "{}", r.stderr);
    assert!(r.stderr.contains("Tokens: "));

    // Text deltas add up to what was shown; reasoning arrives as its own events.
    let text: String = events::of(&events, "text").iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert!(text.contains("Writing.") && text.contains("All done."), "{text}");
    assert_eq!(events::of(&events, "reasoning")[0]["text"], "Let me look.");

    // Each tool call: partial events while it streams, one complete event, one approval, one
    // result — all with the same call id, in that order.
    let complete: Vec<&Value> =
        events::of(&events, "tool_call").into_iter().filter(|e| e["partial"] == false).collect();
    assert_eq!(complete.len(), 5);
    for c in &complete {
        let id = &c["call_id"];
        let idx = |ty: &str, partial: Option<bool>| {
            events
                .iter()
                .position(|e| e["type"] == ty && &e["call_id"] == id && partial.is_none_or(|p| e["partial"] == p))
        };
        let (call, approval, result) = (idx("tool_call", Some(false)), idx("approval", None), idx("tool_result", None));
        assert!(idx("tool_call", Some(true)).unwrap() < call.unwrap(), "partial first for {id}");
        assert!(call < approval && approval < result, "order for {id}: {call:?} {approval:?} {result:?}");
    }
    for p in events::of(&events, "tool_call") {
        let values = p["params"].as_object().unwrap();
        assert!(values.values().all(|v| !v.as_str().unwrap().contains("</")), "a partial closing tag leaked: {p}");
    }
    let read = complete[0];
    assert_eq!(read["tool"], "read_file");
    assert_eq!(read["params"], json!({"path": "a.txt"}));
    let approvals = events::of(&events, "approval");
    let by: Vec<(&str, bool)> =
        approvals.iter().map(|a| (a["by"].as_str().unwrap(), a["approved"].as_bool().unwrap())).collect();
    assert_eq!(by, [("auto", true), ("yolo", true), ("policy", false), ("yolo", true), ("auto", true)]);
    let results = events::of(&events, "tool_result");
    assert!(results[0]["result"].as_str().unwrap().contains("1 | alpha"));
    assert_eq!(results[2]["ok"], false);
    assert!(results[3]["result"].as_str().unwrap().contains("hi"));
    // The write's result leaves out its echo of the file, which the complete call carries; put
    // back where `left_out` says, it is the text the model got.
    let write = results[1];
    assert_eq!(
        (&write["tool"], &write["left_out"]),
        (&json!("write_to_file"), &json!("final_file_content")),
        "{write}"
    );
    assert!(results.iter().filter(|r| r["tool"] != "write_to_file").all(|r| r.get("left_out").is_none()));
    let shown = write["result"].as_str().unwrap();
    let at = shown.find("<final_file_content path=\"").unwrap();
    let at = at + shown[at..].find("\">\n").unwrap() + 3;
    let whole = [&shown[..at], complete[1]["params"]["content"].as_str().unwrap(), &shown[at..]].concat();
    assert!(whole.contains("<final_file_content path=\"b.txt\">\nbeta\n</final_file_content>"), "{whole}");
    let sent = server.requests()[3].last_user();
    assert!(sent.contains(&whole), "the model got:\n{sent}\n\nput back:\n{whole}");

    // A retry (the 429 has no usage, so no api_request), then five requests with usage and
    // cost (claude-sonnet-4-5 is in the price table).
    let retry = events::of(&events, "retry");
    assert_eq!((retry[0]["attempt"].as_u64(), retry[0]["status"].as_u64()), (Some(1), Some(429)));
    let reqs = events::of(&events, "api_request");
    assert_eq!(reqs.len(), 5);
    let cost_sum: f64 = reqs.iter().map(|e| e["cost_usd"].as_f64().unwrap()).sum();
    let totals = &last["totals"];
    assert_eq!(totals["requests"], 5);
    assert_eq!(totals["tokens_in"], 500);
    assert!(totals["cost_usd"].as_f64().unwrap() > 0.0);
    assert!((totals["cost_usd"].as_f64().unwrap() - cost_sum).abs() < 1e-5, "{totals} vs {cost_sum}");
    assert_eq!(reqs[4]["totals"], *totals);
}

#[test]
fn failed_runs_emit_error_and_a_failed_completion() {
    let ws = tempfile::tempdir().unwrap();
    let list = tool("list_files", &[("path", ".")]);
    let server = Server::start(vec![anthropic(&list), anthropic(&list)]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--json", "--max-turns", "1", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    let events = events::parse(&r.stdout);
    let err = events::of(&events, "error");
    assert_eq!(err.len(), 1);
    assert_eq!(err[0]["limit"], "max_turns");
    assert!(err[0]["message"].as_str().unwrap().contains("--max-turns"));
    let end = events.last().unwrap();
    assert_eq!((end["type"].as_str(), end["status"].as_str()), (Some("completion"), Some("failed")));
    assert_eq!(end["result"], Value::Null);
    assert_eq!(end["totals"]["requests"], 1);
}

#[test]
fn the_schema_checker_rejects_what_the_docs_do_not_allow() {
    let good = json!({"type":"text","version":6,"task_id":"x","ts":1,"turn":1,"text":"hi"});
    assert!(events::validate(&good).is_ok(), "{:?}", events::validate(&good));
    let mut other_version = good.clone();
    other_version["version"] = json!(1);
    assert!(events::validate(&other_version).is_err(), "a stream of another version is not this schema's");
    let mut null = good.clone();
    null["text"] = Value::Null;
    assert!(events::validate(&null).is_err());
    let mut extra = good.clone();
    extra["surprise"] = json!(1);
    assert!(events::validate(&extra).is_err());
    let mut wrong = good.clone();
    wrong["turn"] = json!("1");
    assert!(events::validate(&wrong).is_err());
    assert!(events::validate(&json!({"type":"nope","task_id":"x","ts":1})).is_err());
    let mut missing = good;
    missing.as_object_mut().unwrap().remove("ts");
    assert!(events::validate(&missing).is_err());
}

#[test]
fn a_persons_denial_with_feedback_is_an_approval_event() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "a.txt"), ("content", "x")])),
        anthropic(&completion("ok")),
    ]);
    let url = server.anthropic_url();
    let args = ["--no-save", "--json", "--provider", "anthropic", "--base-url", &url, "--tool-calls", "xml", "t"];
    let r = run_interactive(ws.path(), &args, b"use b.txt\n", LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stderr.contains("Create a.txt — approve?"), "the prompt is on stderr: {}", r.stderr);
    let events = events::parse(&r.stdout);
    let approval = events::of(&events, "approval")[0];
    assert_eq!(approval["by"], "user");
    assert_eq!(approval["approved"], false);
    assert_eq!(approval["feedback"], "use b.txt");
    assert_eq!(events::of(&events, "tool_result")[0]["ok"], false);
    assert!(!ws.path().join("a.txt").exists());
}

/// A pause in the stream: the text held back to coalesce events goes out at once, not when the
/// next byte comes (an editor or a script showed the reply's last words only after the pause).
#[test]
fn text_before_a_pause_in_the_stream_is_in_the_events_during_the_pause() {
    use std::io::BufRead;
    use std::process::Stdio;
    let ws = tempfile::tempdir().unwrap();
    let mut reply = anthropic_with("Reading the files first. Then I change the parser.", 5, "end_turn");
    // Five deltas ("Readi" … "rst. "), then nothing until the client hangs up.
    let body = String::from_utf8_lossy(&reply.body).into_owned();
    let fifth = body.match_indices("event: content_block_delta").nth(5).unwrap().0;
    reply.stall_at = fifth;
    reply.stall = Duration::from_secs(120);
    let server = Server::start(vec![reply]);
    let base = anthropic_args(&server);
    let args = args_with(&base, &["--json", "--no-save", "t"]);
    let mut child = agent_cmd("run", ws.path(), &args, &[], ws.path()).stdin(Stdio::null()).spawn().unwrap();
    let out = child.stdout.take().unwrap();
    let texts = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let seen = texts.clone();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            let e: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
            if e["type"] == "text" {
                seen.lock().unwrap().push_str(e["text"].as_str().unwrap_or(""));
            }
        }
    });
    let start = std::time::Instant::now();
    while !texts.lock().unwrap().contains("Reading the files first.") {
        assert!(start.elapsed() < LIMIT, "the text before the pause never came: {:?}", texts.lock().unwrap());
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!texts.lock().unwrap().contains("Then"), "text the server never sent");
    ctrl_c(&child);
    let status = wait_exit(&mut child, LIMIT);
    reader.join().unwrap();
    assert_eq!(status.code(), Some(130));
}

/// Ctrl-C while the model streams: every word the terminal showed is in the `text` events,
/// before `completion` (interrupted, 130), the last line. (The text held back to bound the
/// events per second — the last 100 ms of it — used to end with the process.)
#[test]
fn ctrl_c_mid_reply_keeps_the_streamed_text_in_the_events() {
    use std::io::Read;
    use std::process::Stdio;
    let ws = tempfile::tempdir().unwrap();
    let said = "Reading the files first. Then I change the parser; these are the last words.";
    let mut reply = anthropic_with(said, 5, "end_turn");
    // All of the text, then the stream stalls until the client hangs up.
    reply.stall_at = String::from_utf8_lossy(&reply.body).find("event: content_block_stop").unwrap();
    reply.stall = Duration::from_secs(60);
    let server = Server::start(vec![reply]);
    let base = anthropic_args(&server);
    let args = args_with(&base, &["--json", "--no-save", "t"]);
    let mut child = agent_cmd("run", ws.path(), &args, &[], ws.path()).stdin(Stdio::null()).spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let stdout = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let shown = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let (mut err, seen) = (child.stderr.take().unwrap(), shown.clone());
    let stderr = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = err.read(&mut buf) {
            seen.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    // The terminal shows a piece after its event took it: once all is shown, all was streamed.
    let start = std::time::Instant::now();
    while !shown.lock().unwrap().contains(said) {
        assert!(start.elapsed() < LIMIT, "the text never showed:\n{}", shown.lock().unwrap());
        std::thread::sleep(Duration::from_millis(10));
    }
    ctrl_c(&child);
    let status = wait_exit(&mut child, LIMIT);
    stderr.join().unwrap();
    let (stdout, stderr) = (stdout.join().unwrap(), shown.lock().unwrap().clone());
    assert_eq!(status.code(), Some(130), "{stdout}\n{stderr}");
    let events = events::parse(&stdout);
    let text: String = events::of(&events, "text").iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(text, said, "{stdout}");
    let end = events.last().unwrap();
    assert_eq!((end["type"].as_str(), end["status"].as_str()), (Some("completion"), Some("interrupted")), "{stdout}");
}

/// `--json` lines carry no character a terminal acts on: the model's C1 control (`U+009B`, a
/// CSI) and bidirectional override are `\u` escapes, the same JSON string (the lines are read
/// on terminals, `tail -f`); `history --json` too.
#[test]
fn json_lines_escape_what_a_terminal_would_act_on() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let said = "red \u{9b}31m and \u{202e}txt.exe";
    let server = Server::start(vec![anthropic(&completion(said))]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--json", "--state-dir", &state_dir, said]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    for (out, name) in [
        (&r.stdout, "run"),
        (&run_cmd("history", ws.path(), &["--json", "--state-dir", &state_dir], &[], LIMIT).stdout, "history"),
    ] {
        assert!(!out.contains('\u{9b}') && !out.contains('\u{202e}'), "{name}: {out:?}");
        assert!(out.contains("\\u009b31m") && out.contains("\\u202etxt.exe"), "{name}: {out}");
    }
    let events = events::parse(&r.stdout);
    assert_eq!(events::of(&events, "completion")[0]["result"], said, "the same text, escaped");
}
