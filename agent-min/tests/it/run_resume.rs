//! Saved tasks: kill -9 in the middle of a streamed reply, then `resume` completes the task with
//! every completed turn intact; `history` lists tasks; saved files never hold the API key.

use crate::common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(60);

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() {
            v.extend(files(&e.path()));
        } else {
            v.push(e.path());
        }
    }
    v
}

/// The saved tasks (`tasks/ID.json`; not a `.ID.lock` left by a process killed with -9).
fn saved_tasks(state: &Path) -> Vec<Value> {
    files(&state.join("tasks"))
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect()
}

#[test]
fn kill_9_mid_stream_then_resume_completes_with_nothing_lost() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    // The fourth reply streams its first text, then the server stalls before the rest: the
    // agent is killed with SIGKILL while it waits.
    let mut stalled = anthropic_with("I am halfway through the next step", 1000, "end_turn");
    let body = String::from_utf8(stalled.body.clone()).unwrap();
    stalled.stall_at = body.find("event: content_block_stop").unwrap();
    stalled.stall = Duration::from_secs(3);
    let server = Server::start(vec![
        anthropic(&tool("list_files", &[("path", ".")])),
        // A command that tries to print the key: it is not in the command's environment.
        anthropic(&tool(
            "execute_command",
            &[("command", "echo key=$ANTHROPIC_API_KEY"), ("requires_approval", "false")],
        )),
        anthropic(&tool("write_to_file", &[("path", "notes.txt"), ("content", "turn three")])),
        stalled,
        anthropic(&completion("Resumed and finished.")),
    ]);
    let state_dir = state.path().display().to_string();
    let base = anthropic_args(&server);
    let mut cmd = Command::new(bin());
    cmd.arg("run")
        .args(&base)
        .args(["--state-dir", &state_dir, "--json", "write notes"])
        .current_dir(ws.path())
        .env("ANTHROPIC_API_KEY", KEY)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let out = Arc::new(Mutex::new(String::new()));
    let mut stdout = child.stdout.take().unwrap();
    let sink = out.clone();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    let start = Instant::now();
    while !out.lock().unwrap().contains("halfway") {
        assert!(start.elapsed() < Duration::from_secs(30), "the stalled reply never started: {}", out.lock().unwrap());
        assert!(child.try_wait().unwrap().is_none(), "the agent ended early: {}", out.lock().unwrap());
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(9));
    reader.join().unwrap();
    assert_eq!(server.requests().len(), 4);
    assert_eq!(std::fs::read_to_string(ws.path().join("notes.txt")).unwrap(), "turn three");

    // What the kill left on disk: the three completed turns, the unanswered message pending,
    // no temp file, no key.
    let saved = saved_tasks(state.path());
    assert_eq!(saved.len(), 1, "{saved:?}");
    let task = &saved[0];
    assert_eq!(task["status"], "running");
    assert_eq!(task["messages"].as_array().unwrap().len(), 6);
    let id = task["id"].as_str().unwrap().to_string();
    for f in files(state.path()) {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        assert!(!text.contains(KEY), "the key is in {}", f.display());
        // The workspace's checkpoints (a shadow git repository) live beside the tasks.
        let checkpoint = f.starts_with(state.path().join("checkpoints"));
        // The killed process's claim on the task: its lock, which the kernel let go.
        let claim = f == state.path().join("tasks").join(format!(".{id}.lock"));
        assert!(checkpoint || claim || f.extension().is_some_and(|e| e == "json"), "leftover {}", f.display());
    }
    assert!(text_of(&task["messages"][5]["content"]).contains("write_to_file"));
    let r2 = text_of(&task["messages"][4]["content"]);
    assert!(r2.contains("Output:\nkey=") && !r2.contains("key=[REDACTED]"), "{r2}");
    assert!(!out.lock().unwrap().contains(KEY), "the key is in the --json output");

    // `history` lists it, as interrupted: the process that saved it is gone.
    let h = run_cmd("history", ws.path(), &["--state-dir", &state_dir], &[], LIMIT);
    assert_eq!(h.code, Some(0), "{}", h.all());
    assert!(
        h.stdout.contains(&id) && h.stdout.contains(" interrupted ") && h.stdout.contains("write notes"),
        "{}",
        h.stdout
    );

    // Resume (by id prefix, with the same provider flags) and finish.
    let prefix = &id[..id.len() - 2];
    let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
    args.extend(["--state-dir", &state_dir, "--json", prefix]);
    let r = run_cmd("resume", ws.path(), &args, &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let events = events::parse(&r.stdout);
    assert_eq!(events[0]["resumed"], true);
    assert_eq!(events[0]["task_id"], id.as_str());
    assert_eq!(events.last().unwrap()["status"], "completed");

    let reqs = server.requests();
    assert_eq!(reqs.len(), 5);
    let before = reqs[3].body["messages"].as_array().unwrap();
    let after = reqs[4].body["messages"].as_array().unwrap();
    // Every completed turn is sent again exactly as before the kill…
    assert_eq!(after.len(), before.len());
    assert!(!reqs.iter().any(|r| r.body.to_string().contains(KEY)), "the key was in the conversation");
    assert_eq!(after[..before.len() - 1], before[..before.len() - 1]);
    // …the message the killed request was answering is there, followed by Cline's resumption
    // notice; the half-streamed reply is not.
    let last = text_of(&after.last().unwrap()["content"]);
    // The killed request's focus chain reminder is not sent again: this request has its own.
    let unanswered = common::without_reminder(&text_of(&before.last().unwrap()["content"]));
    assert!(last.starts_with(unanswered.trim_end()), "{last}");
    assert!(
        last.contains("[TASK RESUMPTION] This task was interrupted just now. It may or may not be complete"),
        "{last}"
    );
    assert!(
        last.contains(&format!(
            "The current working directory is now '{}'",
            std::fs::canonicalize(ws.path()).unwrap().display()
        )),
        "{last}"
    );
    assert!(!after.iter().any(|m| text_of(&m["content"]).contains("halfway")));

    let saved = saved_tasks(state.path());
    assert_eq!(saved[0]["status"], "completed");
    assert_eq!(saved[0]["outcome"], "Resumed and finished.");
    assert_eq!(saved[0]["turns"], 4, "three turns before the kill, one after; the killed one never completed");
    assert_eq!(saved[0]["totals"]["requests"], 4, "the killed request never reported usage");
    for f in files(state.path()) {
        assert!(!String::from_utf8_lossy(&std::fs::read(&f).unwrap()).contains(KEY), "the key is in {}", f.display());
        assert!(f.extension().is_none_or(|x| x != "lock"), "the resume let go of the task: {}", f.display());
    }
}

#[test]
fn resume_last_continues_a_task_stopped_by_a_limit() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let list = tool("list_files", &[("path", ".")]);
    let server = Server::start(vec![anthropic(&list), anthropic(&list), anthropic(&completion("done later"))]);
    let base = anthropic_args(&server);
    let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
    args.extend(["--state-dir", &state_dir]);
    let mut first = args.clone();
    first.extend(["--max-turns", "2", "list twice"]);
    let r = run_agent(ws.path(), &first, &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(r.stderr.contains("agent-min resume "), "the way to resume is printed: {}", r.stderr);
    assert_eq!(saved_tasks(state.path())[0]["status"], "failed");

    // The provider flags are the saved ones; only the key comes from the environment.
    let r = run_cmd(
        "resume",
        ws.path(),
        &["--last", "--state-dir", &state_dir, "--yolo", "--retry-delay", "0.05"],
        &[],
        LIMIT,
    );
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let msgs = reqs[2].body["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 5);
    let last = text_of(&msgs[4]["content"]);
    assert!(last.starts_with("[list_files for '.'] Result:"), "{last}");
    assert!(last.contains("[TASK RESUMPTION]"));
    assert_eq!(reqs[2].header("x-api-key"), Some(KEY));
    assert!(r.stderr.contains("over 3 requests"), "totals include the earlier run: {}", r.stderr);
}

/// A config file's provider, model and URL are for new tasks: `resume` keeps the saved task's.
/// They counted as given again, so the Anthropic key went to the server the task was saved
/// with, asking it for another model in another wire format.
#[test]
fn a_config_files_provider_and_model_leave_a_resumed_task_as_it_was_saved() {
    let (ws, state, config) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let state_dir = state.path().display().to_string();
    let list = tool("list_files", &[("path", ".")]);
    let server = Server::start(vec![openai(&list), openai(&completion("done later"))]);
    let mut first: Vec<String> = openai_args(&server);
    first.extend(["--state-dir".into(), state_dir.clone(), "--max-turns".into(), "1".into(), "list".into()]);
    let first: Vec<&str> = first.iter().map(String::as_str).collect();
    let r = run_agent(ws.path(), &first, &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    std::fs::create_dir(config.path().join("agent-min")).unwrap();
    let toml = "provider = \"anthropic\"\nmodel = \"claude-other\"\nbase_url = \"http://127.0.0.1:9\"\n";
    std::fs::write(config.path().join("agent-min/config.toml"), toml).unwrap();
    let envs = [("XDG_CONFIG_HOME", config.path().to_str().unwrap())];
    let r = run_cmd("resume", ws.path(), &["--last", "--state-dir", &state_dir, "--yolo"], &envs, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{}", r.all());
    assert!(reqs[1].path.ends_with("/chat/completions"), "{}", reqs[1].path);
    assert_eq!(reqs[1].body["model"], "gpt-test");
    assert_eq!(reqs[1].header("x-api-key"), None, "the Anthropic key was sent");
    assert_eq!(saved_tasks(state.path())[0]["provider"], "openai");

    // The file's `cwd` still says where `--last` takes the latest task from.
    let elsewhere = tempfile::tempdir().unwrap();
    let cwd = std::fs::canonicalize(ws.path()).unwrap().display().to_string();
    std::fs::write(config.path().join("agent-min/config.toml"), format!("cwd = {cwd:?}\n")).unwrap();
    let server = Server::start(vec![openai(&completion("again"))]);
    let url = server.openai_url();
    let r =
        run_cmd("resume", elsewhere.path(), &["--last", "--state-dir", &state_dir, "--base-url", &url], &envs, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
}

/// `resume ID "words"` (and `--last "words"`, as `codex exec resume`) sends the words after the
/// notice as Cline's `New instructions for task continuation:`, their mentions read; a resume
/// whose request failed keeps them for the next one, which says them once.
#[test]
fn words_given_with_a_resume_follow_the_notice_and_outlive_a_failed_request() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    std::fs::write(ws.path().join("a.txt"), "alpha line\n").unwrap();
    let list = tool("list_files", &[("path", ".")]);
    let refused =
        status(400, serde_json::json!({"type":"error","error":{"type":"invalid_request_error","message":"no"}}));
    let server =
        Server::start(vec![anthropic(&list), refused, anthropic(&completion("done")), anthropic(&completion("again"))]);
    let base = anthropic_args(&server);
    let r =
        run_agent(ws.path(), &args_with(&base, &["--state-dir", &state_dir, "--max-turns", "1", "list"]), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    let id = saved_tasks(state.path())[0]["id"].as_str().unwrap().to_string();

    let words = "New instructions for task continuation:\n<user_message>\nalso read 'a.txt' (see below for file content)\n</user_message>\n\n<file_content path=\"a.txt\">\nalpha line\n\n</file_content>";
    let r = run_cmd("resume", ws.path(), &[&id, "also read @/a.txt", "--state-dir", &state_dir], &[], LIMIT);
    assert_eq!(r.code, Some(1), "the request is refused: {}", r.all());
    let sent = without_reminder(&server.requests()[1].last_user());
    let notice = sent.find("[TASK RESUMPTION]").unwrap_or_else(|| panic!("{sent}"));
    assert!(sent[..notice].starts_with("[list_files for '.'] Result:"), "{sent}");
    let said = sent.find(&format!("\n\n{words}\n\n<environment_details>")).unwrap_or_else(|| panic!("{sent}"));
    assert!(notice < said && !sent[notice..said].contains("</environment_details>"), "after the notice: {sent}");

    let r = run_cmd("resume", ws.path(), &["--last", "--state-dir", &state_dir], &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let sent = without_reminder(&server.requests()[2].last_user());
    assert_eq!(sent.matches("[TASK RESUMPTION]").count(), 1, "{sent}");
    assert_eq!(sent.matches("New instructions for task continuation:").count(), 1, "{sent}");
    // The words of the failed resume go before the new notice, as its unsent message did.
    assert!(sent.find(words).unwrap() < sent.find("[TASK RESUMPTION]").unwrap(), "{sent}");
    let saved = &saved_tasks(state.path())[0];
    assert_eq!(saved["task"], "list", "the saved task is not the words");

    // Without words, piped input is what is said.
    let mut cmd = agent_cmd("resume", ws.path(), &["--last", "--state-dir", &state_dir], &[], state.path());
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"words from a pipe\n").unwrap();
    let r = wait_limited(child, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let sent = server.requests()[3].last_user();
    assert!(sent.contains("<user_message>\nwords from a pipe\n</user_message>"), "{sent}");
    assert_eq!(saved_tasks(state.path())[0]["task"], "list");
}

/// The person's words given with a resume are saved before its first request: a Ctrl-C while
/// that request runs (a slow thinking model) keeps them for the next resume, and the task shows
/// as running meanwhile (it showed the killed process's `interrupted`).
#[test]
fn words_given_with_a_resume_are_saved_before_its_first_request() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let list = tool("list_files", &[("path", ".")]);
    // The resumed request's reply stalls after its first text delta, until the signal comes.
    let mut slow = anthropic("Thinking about the changelog now.");
    let body = String::from_utf8(slow.body.clone()).unwrap();
    let delta = body.find("text_delta").expect("a text delta");
    slow.stall_at = delta + body[delta..].find("\r\n\r\n").unwrap() + 4;
    slow.stall = Duration::from_secs(60);
    let server = Server::start(vec![anthropic(&list), slow, anthropic(&completion("done"))]);
    let base = anthropic_args(&server);
    let r =
        run_agent(ws.path(), &args_with(&base, &["--state-dir", &state_dir, "--max-turns", "1", "list"]), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    let id = saved_tasks(state.path())[0]["id"].as_str().unwrap().to_string();

    let args = args_with(&base, &["--state-dir", &state_dir, "--json", &id, "ALSO UPDATE THE CHANGELOG"]);
    let mut child = agent_cmd("resume", ws.path(), &args, &[], state.path()).stdin(Stdio::null()).spawn().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while std::io::BufRead::read_line(&mut stdout, &mut line).unwrap() > 0 && !line.contains("\"type\":\"text\"") {
        line.clear();
    }
    assert!(line.contains("\"type\":\"text\""), "the resumed request never streamed");
    let h = run_cmd("history", ws.path(), &["--state-dir", &state_dir], &[], LIMIT);
    assert!(h.stdout.contains(" running ") && !h.stdout.contains(" interrupted "), "{}", h.stdout);
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let saved = &saved_tasks(state.path())[0];
    let pending = saved["pending"].as_str().unwrap_or_default();
    assert!(pending.contains("ALSO UPDATE THE CHANGELOG"), "the words were lost: {saved}");

    let r = run_cmd("resume", ws.path(), &args_with(&base, &["--state-dir", &state_dir, "--last"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let sent = server.requests()[2].last_user();
    assert!(sent.contains("ALSO UPDATE THE CHANGELOG"), "{sent}");
}

/// The `# Context Window Usage` line of a request's last user message.
fn context_usage(request: &Value) -> String {
    let msgs = request["messages"].as_array().unwrap();
    let last = text_of(&msgs[msgs.len() - 1]["content"]);
    let at = last.find("# Context Window Usage\n").unwrap_or_else(|| panic!("no usage line: {last}"));
    last[at..].lines().nth(1).unwrap().to_string()
}

#[test]
fn a_resumed_task_shows_the_last_requests_context_window_usage() {
    // Cline reads the usage from the last request it saved; a resumed task used to say
    // "0 / 200K tokens used (0%)" until its first reply.
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let list = tool("list_files", &[("path", ".")]);
    let server = Server::start(vec![
        anthropic_usage(&list, 40_000),
        anthropic_usage(&list, 40_000),
        anthropic(&completion("done later")),
    ]);
    let base = anthropic_args(&server);
    let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
    args.extend(["--state-dir", &state_dir, "--max-turns", "2", "list twice"]);
    let r = run_agent(ws.path(), &args, &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    let r = run_cmd("resume", ws.path(), &["--last", "--state-dir", &state_dir, "--yolo"], &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    // The second request shows the first reply's usage; the resumed one the second's, the same.
    let shown = context_usage(&reqs[1].body);
    assert!(shown.starts_with("40,"), "{shown}");
    assert_eq!(context_usage(&reqs[2].body), shown);
}

#[test]
fn a_task_running_now_is_not_resumed_alongside_it() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    std::fs::write(ws.path().join("a.txt"), "x\n").unwrap();
    // The second request waits until the first run is stopped.
    let mut stalled = anthropic(&completion("never"));
    stalled.stall = Duration::from_secs(120);
    let server = Server::start(vec![anthropic(&tool("read_file", &[("path", "a.txt")])), stalled]);
    let base = anthropic_args(&server);
    let child = agent_cmd("run", ws.path(), &args_with(&base, &["--state-dir", &state_dir, "t"]), &[], state.path())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    server.wait_for_requests(2, LIMIT);
    // Saved after the first turn, by a process that is still running.
    let pid = child.id().to_string();
    let r = run_cmd("resume", ws.path(), &args_with(&base, &["--last", "--state-dir", &state_dir]), &[], LIMIT);
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert!(r.stderr.contains("is running now") && r.stderr.contains(&format!("kill -INT {pid}")), "{}", r.stderr);
    assert_eq!(server.requests().len(), 2, "the resume sent nothing");
    ctrl_c(&child);
    let run = wait_limited(child, LIMIT);
    assert_eq!(run.code, Some(130), "{}", run.all());
}

#[test]
fn a_newest_save_that_cannot_be_read_is_named_and_never_passed_over() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let server = Server::start(vec![anthropic(&completion("old done")), anthropic(&completion("new done"))]);
    let base = anthropic_args(&server);
    for task in ["old task", "new task"] {
        let r = run_agent(ws.path(), &args_with(&base, &["--state-dir", &state_dir, task]), &[], LIMIT);
        assert_eq!(r.code, Some(0), "{}", r.all());
    }
    let tasks = saved_tasks(state.path());
    let new = tasks.iter().find(|t| t["task"] == "new task").expect("the new task");
    let id = new["id"].as_str().unwrap().to_string();
    let file = state.path().join("tasks").join(format!("{id}.json"));
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, &text[..text.len() / 2]).unwrap();

    let h = run_cmd("history", ws.path(), &["--state-dir", &state_dir], &[], LIMIT);
    assert_eq!(h.code, Some(0), "{}", h.all());
    assert!(h.stderr.contains("skipped") && h.stderr.contains(&format!("{id}.json")), "{}", h.stderr);
    // `--last` does not fall back to the older task.
    let r = run_cmd("resume", ws.path(), &["--last", "--state-dir", &state_dir], &[], LIMIT);
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert!(r.stderr.contains(&format!("{id}.json")) && r.stderr.contains("give a task id"), "{}", r.stderr);
    // A prefix of its id names the file and what is wrong with it.
    let r = run_cmd("resume", ws.path(), &[&id[..id.len() - 2], "--state-dir", &state_dir], &[], LIMIT);
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert!(r.stderr.contains("not a valid saved task"), "{}", r.stderr);
    assert_eq!(server.requests().len(), 2, "nothing was resumed");
}

#[test]
fn resume_errors_name_the_fix() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let r = run_cmd("resume", ws.path(), &["--last", "--state-dir", &state_dir], &[], LIMIT);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("no saved tasks") && r.stderr.contains("agent-min run"), "{}", r.stderr);
    let r = run_cmd("resume", ws.path(), &["nope", "--state-dir", &state_dir], &[], LIMIT);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("agent-min history"), "{}", r.stderr);
    let r = run_cmd("resume", ws.path(), &[], &[], LIMIT);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("--last"), "{}", r.stderr);
    let h = run_cmd("history", ws.path(), &["--state-dir", &state_dir], &[], LIMIT);
    assert_eq!(h.code, Some(0));
    assert!(h.stdout.contains("No saved tasks"), "{}", h.stdout);
}

#[test]
fn ctrl_c_during_a_command_keeps_the_answered_request_and_resume_does_not_ask_it_again() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let cmd = "touch started; sleep 60";
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", cmd), ("requires_approval", "false")])),
        anthropic(&completion("Resumed and finished.")),
    ]);
    let state_dir = state.path().display().to_string();
    let base = anthropic_args(&server);
    let child = Command::new(bin())
        .arg("run")
        .args(&base)
        .args(["--state-dir", &state_dir, "wait a minute"])
        .current_dir(ws.path())
        .env("ANTHROPIC_API_KEY", KEY)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = child;
    let start = Instant::now();
    while !ws.path().join("started").exists() {
        assert!(start.elapsed() < LIMIT, "the command never started");
        assert!(child.try_wait().unwrap().is_none(), "the agent ended early");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    assert_eq!(child.wait().unwrap().code(), Some(130));

    // The answered (and billed) request is on disk: its reply and its usage.
    let saved = saved_tasks(state.path());
    let task = &saved[0];
    assert_eq!(task["totals"]["requests"], 1, "{task}");
    assert_eq!(task["turns"], 1);
    let messages = task["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(text_of(&messages[1]["content"]).contains("<execute_command>"));
    let h = run_cmd("history", ws.path(), &["--state-dir", &state_dir], &[], LIMIT);
    assert!(h.stdout.contains(" interrupted ") && h.stdout.contains("  1 req "), "{}", h.stdout);

    // Resume continues after the reply, as Cline does: the next request is the resumption
    // notice, not the task asked again.
    let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
    args.extend(["--state-dir", &state_dir, "--last"]);
    let r = run_cmd("resume", ws.path(), &args, &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let sent = reqs[1].body["messages"].as_array().unwrap();
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert_eq!(sent[1]["role"], "assistant");
    assert!(sent[1]["content"].to_string().contains("<execute_command>"));
    let last = sent[2]["content"].to_string();
    assert!(last.contains("[TASK RESUMPTION]") && !last.contains("<task>"), "{last}");
    let saved = saved_tasks(state.path());
    assert_eq!(saved[0]["totals"]["requests"], 2);
}
