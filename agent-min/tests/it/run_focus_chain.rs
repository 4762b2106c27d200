//! Cline's focus chain, on by default: the `task_progress` checklist in the prompt and the
//! tools, its reminders in the requests, and each new list shown, reported, saved and taken up
//! again by `resume`; `--no-focus-chain` turns all of it off.

use crate::common;

use std::time::Duration;

use common::*;

const LIMIT: Duration = Duration::from_secs(60);

/// The reminders' first lines, as Cline's `FocusChainPrompts` and `generateFocusChainInstructions`.
const RECOMMENDED: &str = "\n# task_progress RECOMMENDED\n";
const UPDATE_REQUIRED: &str =
    "# TODO LIST UPDATE REQUIRED - You MUST include the task_progress parameter in your NEXT tool call.";

fn user_texts(server: &Server) -> Vec<String> {
    server.requests().iter().map(|r| r.last_user()).collect()
}

#[test]
fn the_checklist_is_asked_for_kept_shown_reported_and_saved() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "alpha\n").unwrap();
    let first = "- [x] Read a.txt\n- [ ] List the files\n- [ ] Finish";
    let last = "- [x] Read a.txt\n- [x] List the files\n- [x] Finish";
    let mut replies = vec![anthropic(&tool("read_file", &[("path", "a.txt"), ("task_progress", first)]))];
    // The list comes with the first reply; the requests after it go without an update, and
    // the sixth of them (the seventh request) is reminded.
    for i in 0..6 {
        let dir = format!("d{i}");
        std::fs::create_dir(ws.path().join(&dir)).unwrap();
        replies.push(anthropic(&tool("list_files", &[("path", &dir)])));
    }
    replies.push(anthropic(&format!(
        "Done.\n{}",
        tool("attempt_completion", &[("result", "ok"), ("task_progress", last)])
    )));
    let server = Server::start(replies);
    let base = anthropic_args(&server);
    let dir = state.path().to_str().unwrap();
    let r = run_agent(ws.path(), &args_with(&base, &["--json", "--state-dir", dir, "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());

    // The prompt is Cline's with its focus chain on.
    let system = server.requests()[0].body["system"].to_string();
    assert!(system.contains("UPDATING TASK PROGRESS"), "{system}");
    assert!(system.contains("- task_progress: (optional) A checklist showing task progress"), "{system}");

    let users = user_texts(&server);
    assert_eq!(users.len(), 8);
    // The first request recommends a list, before the environment details.
    let at = users[0].find(RECOMMENDED).expect(&users[0]);
    assert!(users[0][at..].contains("<environment_details>") && users[0].starts_with("<task>\nt\n</task>"));
    // With a list, nothing until six requests have gone without an update…
    for (i, u) in users.iter().enumerate().take(6).skip(1) {
        assert!(!u.contains("task_progress"), "request {}: {u}", i + 1);
    }
    // …then the list, its progress and Cline's note for it; the count starts again.
    assert!(!users[7].contains("task_progress"), "{}", users[7]);
    let due = &users[6];
    let at = due.find(UPDATE_REQUIRED).expect(due);
    assert!(at < due.find("<environment_details>").unwrap(), "{due}");
    assert!(due.contains("**Current Progress: 1/3 items completed (33%)**"), "{due}");
    assert!(due.contains(&format!("\n\n\t\t\t\t{first}\n\n")), "{due}");
    assert!(due.contains("**Note:** 33% of items are complete."), "{due}");

    // Each new list is an event and is shown.
    let events = events::parse(&r.stdout);
    let progress = events::of(&events, "task_progress");
    assert_eq!(progress.len(), 2, "{progress:?}");
    assert_eq!(
        (progress[0]["list"].as_str(), progress[0]["total"].as_u64(), progress[0]["done"].as_u64()),
        (Some(first), Some(3), Some(1))
    );
    assert_eq!(progress[0]["call_id"], "call_1");
    assert_eq!((progress[1]["list"].as_str(), progress[1]["done"].as_u64()), (Some(last), Some(3)));
    assert!(r.stderr.contains("☰ Task progress: 1/3") && r.stderr.contains("    - [ ] List the files"), "{}", r.stderr);

    // The saved task holds the last list (format version 4).
    let tasks: Vec<_> = std::fs::read_dir(state.path().join("tasks")).unwrap().flatten().collect();
    let file = tasks.iter().find(|e| e.file_name().to_string_lossy().ends_with(".json")).unwrap();
    let saved: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(file.path()).unwrap()).unwrap();
    assert_eq!(saved["version"], 4);
    assert_eq!(saved["task_progress"], last);
}

#[test]
fn resume_goes_on_with_the_saved_checklist() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().to_str().unwrap();
    let list = "- [x] Look around\n- [ ] Finish";
    let server = Server::start(vec![anthropic(&tool("list_files", &[("path", "."), ("task_progress", list)]))]);
    let base = anthropic_args(&server);
    // Stopped by --max-turns after the first request: saved with its list.
    let r = run_agent(ws.path(), &args_with(&base, &["--state-dir", dir, "--max-turns", "1", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());

    let server = Server::start(vec![anthropic(&completion("ok"))]);
    let base = anthropic_args(&server);
    let r = run_cmd("resume", ws.path(), &args_with(&base, &["--state-dir", dir, "--last"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    // Cline would recommend a new list here (its list is read back only at the next tool call);
    // the saved one is taken up, so nothing is asked for.
    let users = user_texts(&server);
    assert!(users[0].contains("[TASK RESUMPTION]"), "{}", users[0]);
    assert!(!users[0].contains("task_progress"), "{}", users[0]);
}

#[test]
fn no_focus_chain_leaves_out_the_parameter_the_reminders_and_the_events() {
    let ws = tempfile::tempdir().unwrap();
    let reply = tool("list_files", &[("path", "."), ("task_progress", "- [ ] x")]);
    let server = Server::start(vec![anthropic(&reply), anthropic(&completion("ok"))]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--json", "--no-focus-chain", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    // (The model's own reply, in the history, still says what it said.)
    for req in server.requests() {
        assert!(!req.body["system"].to_string().contains("task_progress"), "{}", req.body["system"]);
        assert!(!req.last_user().contains("task_progress"), "{}", req.last_user());
    }
    assert!(events::of(&events::parse(&r.stdout), "task_progress").is_empty());
    assert!(!r.stderr.contains("Task progress"), "{}", r.stderr);
}

#[test]
fn a_native_calls_task_progress_is_the_checklist() {
    use common::native::{self, call, AnthropicReply};
    let ws = tempfile::tempdir().unwrap();
    let list = "- [x] Look\\n- [ ] Finish";
    let args = format!(r#"{{"path":".","task_progress":"{list}"}}"#);
    let server = Server::start(vec![
        native::anthropic(
            AnthropicReply { calls: vec![call("toolu_A", "list_files", &[&args])], ..Default::default() },
            7,
        ),
        native::anthropic(
            AnthropicReply {
                calls: vec![call("toolu_B", "attempt_completion", &[r#"{"result":"ok"}"#])],
                ..Default::default()
            },
            7,
        ),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--json", "--tool-calls", "native", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let events = events::parse(&r.stdout);
    let progress = events::of(&events, "task_progress");
    assert_eq!(progress.len(), 1, "{}", r.stdout);
    assert_eq!(progress[0]["list"], "- [x] Look\n- [ ] Finish");
    // Every tool but execute_command takes it, as Cline's native definitions do.
    let tools = server.requests()[0].body["tools"].as_array().unwrap().clone();
    for t in &tools {
        let has = t["input_schema"]["properties"].get("task_progress").is_some();
        assert_eq!(has, t["name"] != "execute_command", "{t}");
    }
}
