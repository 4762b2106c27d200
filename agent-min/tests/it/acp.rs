//! `agent-min acp` driven by a real ACP client nobody here wrote: the official TypeScript SDK
//! (`@agentclientprotocol/sdk`, pinned in `tests/acp/package-lock.json`, installed and cached
//! by `tests/acp/install.sh` in target/acp-client), its `client()` over an `ndJsonStream`
//! (`tests/acp/client.mjs`). The model is the scripted server on 127.0.0.1. Every line on the
//! wire, both ways, is validated against the ACP v1 JSON Schema the SDK ships
//! (`schema/v1/schema.json`): the side's branch of the schema, and the method's own type.

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use serde_json::{json, Value};

const LIMIT: Duration = Duration::from_secs(180);

/// The installed SDK: `install.sh` (pinned, cached; a no-op once installed) runs once per test
/// run; a failed install fails the tests here loudly, with its output.
fn sdk() -> PathBuf {
    static INSTALLED: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    let installed = INSTALLED.get_or_init(|| {
        let dir = std::env::var_os("AGENT_MIN_ACP_CLIENT")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/acp-client"));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/install.sh");
        let out = Command::new("bash")
            .arg(&script)
            .env("AGENT_MIN_ACP_CLIENT", &dir)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        if !out.status.success() || !dir.join(".installed").is_file() {
            return Err(format!(
                "the ACP client SDK could not be installed in {} by {} (needs node, npm and the npm registry):\n{said}",
                dir.display(),
                script.display()
            ));
        }
        Ok(dir.join("node_modules/@agentclientprotocol/sdk"))
    });
    match installed {
        Ok(dir) => dir.clone(),
        Err(e) => panic!("{e}"),
    }
}

/// The ACP v1 schema as the SDK ships it, split by side: what the agent may send, what the
/// client may send, and every type by name.
struct Schema {
    root: Value,
    agent: jsonschema::Validator,
    client: jsonschema::Validator,
}

impl Schema {
    fn load() -> Schema {
        let path = sdk().join("schema/v1/schema.json");
        let root: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let side = |title: &str| {
            let branch = root["anyOf"].as_array().unwrap().iter().find(|b| b["title"] == title).cloned();
            let mut one = branch.unwrap_or_else(|| panic!("{}: no {title} branch", path.display()));
            one["$schema"] = root["$schema"].clone();
            one["$defs"] = root["$defs"].clone();
            jsonschema::validator_for(&one).unwrap()
        };
        Schema { agent: side("Agent"), client: side("Client"), root }
    }

    /// A validator of one type of `$defs`.
    fn of(&self, name: &str) -> jsonschema::Validator {
        assert!(self.root["$defs"].get(name).is_some(), "the schema has no {name}");
        let one =
            json!({"$schema": self.root["$schema"], "$ref": format!("#/$defs/{name}"), "$defs": self.root["$defs"]});
        jsonschema::validator_for(&one).unwrap()
    }
}

/// The type of a request's params and of its result, by method.
fn types(method: &str) -> (&'static str, Option<&'static str>) {
    match method {
        "initialize" => ("InitializeRequest", Some("InitializeResponse")),
        "session/new" => ("NewSessionRequest", Some("NewSessionResponse")),
        "session/load" => ("LoadSessionRequest", Some("LoadSessionResponse")),
        "session/prompt" => ("PromptRequest", Some("PromptResponse")),
        "session/close" => ("CloseSessionRequest", Some("CloseSessionResponse")),
        "session/cancel" => ("CancelNotification", None),
        "session/update" => ("SessionNotification", None),
        "session/request_permission" => ("RequestPermissionRequest", Some("RequestPermissionResponse")),
        "fs/read_text_file" => ("ReadTextFileRequest", Some("ReadTextFileResponse")),
        "fs/write_text_file" => ("WriteTextFileRequest", Some("WriteTextFileResponse")),
        other => panic!("a method the scenario does not use: {other}"),
    }
}

/// Checks every line of the transcript: JSON-RPC 2.0, the sender's branch of the schema, and
/// the params or result of its method; returns the messages by sender. Only requests of the
/// methods `may_fail` may be answered with an error (the test then looks at it).
fn validate(transcript: &str, may_fail: &[&str]) -> Vec<(String, Value)> {
    let schema = Schema::load();
    let mut pending: HashMap<(String, String), String> = HashMap::new(); // (asker, id) → method
    let mut out = Vec::new();
    for entry in transcript.lines() {
        let entry: Value = serde_json::from_str(entry).unwrap();
        let from = entry["from"].as_str().unwrap().to_string();
        let line = entry["line"].as_str().unwrap();
        let msg: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{from} sent a line that is not JSON ({e}): {line}"));
        let side = if from == "agent" { &schema.agent } else { &schema.client };
        errors(side, &msg).unwrap_or_else(|e| panic!("{from}'s message breaks the ACP v1 schema:\n{e}\nin {msg}"));
        let id = msg.get("id").map(Value::to_string);
        let (ty, key) = match (msg.get("method").and_then(Value::as_str), id) {
            (Some(method), id) => {
                if let Some(id) = id {
                    pending.insert((from.clone(), id), method.to_string());
                }
                (Some(types(method).0), "params")
            }
            (None, Some(id)) => {
                let asker = if from == "agent" { "client" } else { "agent" };
                let method =
                    pending.remove(&(asker.to_string(), id)).unwrap_or_else(|| panic!("an answer to nothing: {msg}"));
                if msg.get("error").is_some() {
                    assert!(may_fail.contains(&method.as_str()), "{from} answered {method} with an error: {msg}");
                    out.push((from, msg));
                    continue;
                }
                (types(&method).1, "result")
            }
            (None, None) => panic!("neither a request nor a response: {msg}"),
        };
        if let Some(ty) = ty {
            errors(&schema.of(ty), &msg[key])
                .unwrap_or_else(|e| panic!("{from}'s {ty} breaks the ACP v1 schema:\n{e}\nin {msg}"));
        }
        out.push((from, msg));
    }
    assert!(pending.is_empty(), "requests never answered: {pending:?}");
    out
}

fn errors(schema: &jsonschema::Validator, v: &Value) -> Result<(), String> {
    common::events::errors(schema, v)
}

/// The agent's `session/update`s between the client's `n`-th request of `method` (0-based) and
/// the agent's answer to it, in the order on the wire (the SDK's notification handlers may run
/// after the answer's promise resolves, so what the client saw is not cut by its own marks).
fn updates_of<'a>(messages: &'a [(String, Value)], method: &str, n: usize) -> Vec<&'a Value> {
    let asked = messages
        .iter()
        .enumerate()
        .filter(|(_, (from, m))| from == "client" && m["method"] == method)
        .nth(n)
        .map(|(i, _)| i)
        .unwrap_or_else(|| panic!("no {method} number {n}"));
    let id = &messages[asked].1["id"];
    let answered = asked
        + messages[asked..]
            .iter()
            .position(|(from, m)| from == "agent" && &m["id"] == id && m.get("method").is_none())
            .unwrap_or_else(|| panic!("{method} number {n} was not answered"));
    messages[asked..answered]
        .iter()
        .filter(|(from, m)| from == "agent" && m["method"] == "session/update")
        .map(|(_, m)| &m["params"]["update"])
        .collect()
}

fn kinds<'a>(updates: &[&'a Value]) -> Vec<&'a str> {
    updates.iter().map(|u| u["sessionUpdate"].as_str().unwrap()).collect()
}

#[test]
fn an_editor_grants_rejects_and_cancels_over_acp_with_the_official_sdk() {
    let server = Server::start(vec![
        // Prompt 1: an edit, approved; then done.
        anthropic(&format!(
            "I'll write it.\n{}",
            tool(
                "write_to_file",
                &[
                    ("path", "hello.txt"),
                    ("content", "Hello from ACP"),
                    ("task_progress", "- [x] Write hello.txt\n- [ ] Say so"),
                ]
            )
        )),
        anthropic(&completion("hello.txt says hello")),
        // Prompt 2, the same conversation: an edit, rejected; then done.
        anthropic(&tool("write_to_file", &[("path", "other.txt"), ("content", "never\n")])),
        anthropic(&completion("other.txt was not written")),
        // Prompt 3: a slow command, approved, then cancelled while it runs.
        anthropic(&tool(
            "execute_command",
            &[
                ("command", "echo started > started.txt; sleep 120; echo finished > finished.txt"),
                ("requires_approval", "true"),
            ],
        )),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let (seen, messages) = run_client("approvals", &[], &server, &root, state.path());

    // Every message, both ways, follows the ACP v1 schema (`run_client`).
    assert!(messages.iter().any(|(from, m)| from == "agent" && m["method"] == "session/request_permission"));

    assert_eq!(seen["initialize"]["protocolVersion"], 1);
    assert_eq!(seen["initialize"]["agentCapabilities"]["loadSession"], true);
    // MCP servers of the editor's: stdio (always), streamable HTTP and SSE.
    assert_eq!(seen["initialize"]["agentCapabilities"]["mcpCapabilities"], json!({"http": true, "sse": true}));
    // Embedded text resources are read into the prompt: said so.
    assert_eq!(seen["initialize"]["agentCapabilities"]["promptCapabilities"]["embeddedContext"], true);

    // 1: granted — the file is written; tool_call (an edit, its path, its diff), its updates and
    // the reply's text were streamed; the turn ended.
    assert_eq!(seen["first"]["stopReason"], "end_turn", "{seen}");
    assert_eq!(std::fs::read_to_string(root.join("hello.txt")).unwrap(), "Hello from ACP");
    let first = updates_of(&messages, "session/prompt", 0);
    let k = kinds(&first);
    assert!(k.contains(&"agent_message_chunk"), "{k:?}");
    let call = first.iter().find(|u| u["sessionUpdate"] == "tool_call").expect("a tool_call");
    assert_eq!(call["kind"], "edit");
    assert!(call.get("status").is_none_or(|s| s == "pending"), "{call}"); // pending, the default
    let path = root.join("hello.txt").display().to_string();
    assert_eq!(call["locations"][0]["path"], path);
    assert_eq!(call["content"][0]["type"], "diff");
    assert_eq!(call["content"][0]["path"], path);
    assert_eq!(call["content"][0]["newText"], "Hello from ACP");
    let id = &call["toolCallId"];
    let statuses: Vec<&Value> = first
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update" && &u["toolCallId"] == id)
        .map(|u| &u["status"])
        .collect();
    assert_eq!(statuses, [&json!("in_progress"), &json!("completed")], "{first:?}");
    let said: String = first
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert!(said.contains("I'll write it.") && said.contains("hello.txt says hello"), "{said:?}");
    // The focus chain's checklist is the session's plan.
    let plan = first.iter().find(|u| u["sessionUpdate"] == "plan").expect("a plan");
    assert_eq!(
        plan["entries"],
        json!([
            {"content": "Write hello.txt", "priority": "medium", "status": "completed"},
            {"content": "Say so", "priority": "medium", "status": "pending"},
        ])
    );
    let asked = &seen["permissions"][0];
    assert_eq!(asked["toolCall"]["toolCallId"], *id);
    // Not renamed: Zed applies the request's toolCall fields to the call's card.
    let title = &asked["toolCall"]["title"];
    assert!(title.is_null() || *title == call["title"], "the card {} renamed {title}", call["title"]);
    let options: Vec<&str> = asked["options"].as_array().unwrap().iter().map(|o| o["kind"].as_str().unwrap()).collect();
    assert_eq!(options, ["allow_once", "allow_always", "reject_once", "reject_always"]);

    // 2: the same conversation, rejected — nothing written, the call failed, the model told.
    assert_eq!(seen["second"]["stopReason"], "end_turn", "{seen}");
    assert!(!root.join("other.txt").exists());
    let second = updates_of(&messages, "session/prompt", 1);
    let call = second.iter().find(|u| u["sessionUpdate"] == "tool_call").expect("a tool_call");
    let last =
        second.iter().rev().find(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == call["toolCallId"]);
    assert_eq!(last.unwrap()["status"], "failed");
    let reqs = server.requests();
    let third_request = reqs[2].body["messages"].as_array().unwrap().clone();
    assert!(third_request.len() >= 5, "prompt 2 continues the conversation: {third_request:?}");
    assert!(reqs[2].last_user().contains("Now write other.txt."), "{}", reqs[2].last_user());
    assert!(reqs[3].last_user().contains("The user denied this operation"), "{}", reqs[3].last_user());

    // 3: cancelled while the command ran — it was killed, and no request followed.
    assert_eq!(seen["third"]["stopReason"], "cancelled", "{seen}");
    assert!(root.join("started.txt").exists(), "the command ran");
    assert!(!root.join("finished.txt").exists(), "the command was killed");
    // Its call did not complete: it failed, with what the command printed.
    let third = updates_of(&messages, "session/prompt", 2);
    let call = third.iter().find(|u| u["sessionUpdate"] == "tool_call").expect("a tool_call");
    let last =
        third.iter().rev().find(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == call["toolCallId"]);
    assert_eq!(last.unwrap()["status"], "failed", "{third:?}");
    assert_eq!(server.requests().len(), 5);
}

#[test]
fn a_reply_cancelled_as_it_streams_stays_in_the_history_marked_as_cline_keeps_it() {
    // The reply stops coming after its first delta, its first sentence, until the client
    // cancels it (the agent says a reply's first text at once).
    let sentence = "I'll delete the build directory first.";
    let text = format!("{sentence} Then I will rebuild everything from scratch.");
    let mut stalled = anthropic_with(&text, sentence.len(), "end_turn");
    let body = String::from_utf8(stalled.body.clone()).unwrap();
    let first = body.find("first.").expect("the first sentence's delta");
    stalled.stall_at = first + body[first..].find("\r\n\r\n").unwrap() + 4;
    stalled.stall = Duration::from_secs(300);
    let server = Server::start(vec![stalled, anthropic(&completion("left the build directory alone"))]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let env = [
        ("ACP_PROMPT", "Clean up the project."),
        ("ACP_WAIT_FOR", "directory first."),
        ("ACP_PROMPT2", "Don't delete the build directory."),
    ];
    let (seen, _) = run_client("interrupt", &env, &server, &root, state.path());
    assert_eq!(seen["first"]["stopReason"], "cancelled", "{seen}");
    assert_eq!(seen["second"]["stopReason"], "end_turn", "{seen}");

    // The second prompt's request holds the task, the reply as far as it came with Cline's
    // note, then the person's words: what they answer is in front of the model.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let messages = reqs[1].body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user"], "{messages:?}");
    assert!(text_of(&messages[0]["content"]).contains("Clean up the project."));
    let said = text_of(&messages[1]["content"]);
    assert_eq!(said, format!("{sentence}\n\n[Response interrupted by user]"));
    let next = reqs[1].last_user();
    assert!(next.contains("<feedback>\nDon't delete the build directory.\n</feedback>"), "{next}");
    assert!(!next.contains("Clean up the project."), "the task was sent again: {next}");
}

/// Runs tests/acp/client.mjs's `scenario` (with `env`) against `agent-min acp` (the model:
/// `server`) in the workspace `root`, its state in `state`, as an editor starts it; returns
/// what the client saw and every message on the wire, each checked against the ACP v1 schema.
fn run_client(
    scenario: &str,
    env: &[(&str, &str)],
    server: &Server,
    root: &Path,
    state: &Path,
) -> (Value, Vec<(String, Value)>) {
    run_client_with(scenario, env, &[], server, root, state)
}

/// [`run_client`], the agent started with `more` run options.
fn run_client_with(
    scenario: &str,
    env: &[(&str, &str)],
    more: &[&str],
    server: &Server,
    root: &Path,
    state: &Path,
) -> (Value, Vec<(String, Value)>) {
    run_client_failing(scenario, env, more, &[], server, root, state)
}

/// [`run_client_with`], where the agent may answer requests of the methods `may_fail` with an
/// error.
fn run_client_failing(
    scenario: &str,
    env: &[(&str, &str)],
    more: &[&str],
    may_fail: &[&str],
    server: &Server,
    root: &Path,
    state: &Path,
) -> (Value, Vec<(String, Value)>) {
    let sdk = sdk();
    let transcript = state.join("transcript.ndjson");
    let (url, tasks) = (server.anthropic_url(), state.join("tasks").display().to_string());
    let agent_args = [
        "--provider",
        "anthropic",
        "--base-url",
        &url,
        "--model",
        "claude-test",
        "--retry-delay",
        "0.05",
        "--state-dir",
        &tasks,
    ];
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/client.mjs");
    // The client starts the agent as an editor would, in the tests' usual environment (a key, a
    // state directory, no controlling terminal).
    let mut cmd = Command::new(setsid());
    cmd.arg("node")
        .arg(&script)
        .arg(sdk.join("dist/v1/stable/acp.js"))
        .arg(&transcript)
        .arg(root)
        .arg(bin())
        .arg("acp")
        .args(agent_args)
        .args(more)
        .current_dir(root)
        .env("ACP_SCENARIO", scenario)
        .envs(env.iter().copied());
    agent_env(&mut cmd, state).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = cmd.spawn().expect("node");
    let run = wait_limited(child, LIMIT);
    assert_eq!(run.code, Some(0), "the client failed:\n{}", run.all());
    let seen: Value = serde_json::from_str(run.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {}", run.all()));
    assert_eq!(seen["exit"]["code"], 0, "agent-min acp did not exit cleanly: {}", run.all());
    let messages = validate(&std::fs::read_to_string(&transcript).unwrap(), may_fail);
    (seen, messages)
}

#[test]
fn an_editor_that_offers_its_file_system_gets_the_reads_and_writes_of_text_files() {
    let server = Server::start(vec![
        // An edit of a file the editor holds with unsaved changes, and a new file: one reply.
        anthropic(&format!(
            "{}{}",
            tool(
                "replace_in_file",
                &[
                    ("path", "notes.txt"),
                    ("diff", "------- SEARCH\nunsaved line\n=======\nedited line\n+++++++ REPLACE")
                ]
            ),
            tool("write_to_file", &[("path", "new.txt"), ("content", "brand new\n")])
        )),
        anthropic(&tool("read_file", &[("path", "notes.txt")])),
        anthropic(&completion("done")),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    std::fs::write(root.join("notes.txt"), "saved line\n").unwrap();
    let state = tempfile::tempdir().unwrap();
    // The buffer holds the agent's own key, as a project's .env may: masked wherever the agent
    // shows it, it must still go back into the file as it was.
    let notes_text = format!("ANTHROPIC_API_KEY={KEY}\nunsaved line\n");
    let env = [("ACP_FS", "1"), ("ACP_PROMPT", "Edit notes.txt, then write new.txt."), ("ACP_NOTES", &notes_text)];
    let (seen, _) = run_client("once", &env, &server, &root, state.path());
    assert_eq!(seen["first"]["stopReason"], "end_turn", "{seen}");

    // The edit applied to the buffer's text and went back to the buffer, the key in it kept;
    // the new file too. The disk is the editor's business: agent-min wrote nothing there.
    let (notes, new) = (root.join("notes.txt").display().to_string(), root.join("new.txt").display().to_string());
    assert_eq!(seen["buffers"][&notes], format!("ANTHROPIC_API_KEY={KEY}\nedited line\n"), "{seen}");
    assert_eq!(seen["buffers"][&new], "brand new", "{seen}"); // Cline's write_to_file drops the last newline
    assert_eq!(std::fs::read_to_string(root.join("notes.txt")).unwrap(), "saved line\n");
    assert!(!root.join("new.txt").exists(), "written on disk by the agent");
    let calls: Vec<(String, String)> = seen["fs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["method"].as_str().unwrap().to_string(), c["path"].as_str().unwrap().to_string()))
        .collect();
    // The buffer is read again just before it is written: a change the person made while
    // asked about the edit is not written over.
    let want = [("read", &notes), ("read", &notes), ("write", &notes), ("write", &new), ("read", &notes)];
    let want: Vec<(String, String)> = want.iter().map(|(m, p)| (m.to_string(), p.to_string())).collect();
    assert_eq!(calls, want);

    // read_file gave the model the buffer's text.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let result = reqs[2].last_user();
    assert!(result.contains("edited line") && !result.contains("saved line"), "{result}");
}

/// A `cwd` through a link (macOS's `/tmp`, a linked home): the editor is sent paths under the
/// `cwd` it gave — its worktree's and its buffers' — not the workspace's real path, in the
/// calls' locations and in its file-system requests.
#[test]
fn an_editor_s_cwd_through_a_link_is_where_its_paths_are() {
    let server = Server::start(vec![
        anthropic(&tool(
            "replace_in_file",
            &[("path", "notes.txt"), ("diff", "------- SEARCH\nunsaved line\n=======\nedited line\n+++++++ REPLACE")],
        )),
        anthropic(&completion("done")),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let real = std::fs::canonicalize(ws.path()).unwrap().join("real");
    std::fs::create_dir(&real).unwrap();
    std::fs::write(real.join("notes.txt"), "saved line\n").unwrap();
    let link = real.with_file_name("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let state = tempfile::tempdir().unwrap();
    let env = [("ACP_FS", "1"), ("ACP_PROMPT", "Edit notes.txt.")];
    let (seen, messages) = run_client("once", &env, &server, &link, state.path());
    assert_eq!(seen["first"]["stopReason"], "end_turn", "{seen}");
    let notes = link.join("notes.txt").display().to_string();
    let paths: Vec<&str> = seen["fs"].as_array().unwrap().iter().map(|c| c["path"].as_str().unwrap()).collect();
    assert_eq!(paths, [notes.as_str(), notes.as_str(), notes.as_str()], "{seen}");
    assert_eq!(seen["buffers"][&notes], "edited line\n", "{seen}");
    let located: Vec<&Value> = updates_of(&messages, "session/prompt", 0)
        .into_iter()
        .filter_map(|u| u.get("locations")?.as_array()?.first()?.get("path"))
        .collect();
    assert!(!located.is_empty() && located.iter().all(|p| *p == &json!(notes)), "{located:?}");
}

#[test]
fn two_sessions_in_one_process_each_start_and_a_cancel_stops_only_its_own() {
    let server = Server::start(vec![
        // Session A: an edit (its permission answered after the client cancelled B), then done.
        anthropic(&tool("write_to_file", &[("path", "hello.txt"), ("content", "from A")])),
        anthropic(&completion("A wrote hello.txt")),
        // Session B, after the cancel: its prompt runs as any.
        anthropic(&completion("B done")),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let (seen, _) = run_client("two", &[], &server, &root, state.path());

    // The second session started: the key, wiped from the environment by the first session's
    // hardening, is the one read at the start.
    let ids: Vec<&str> =
        seen["sessions"].as_array().unwrap().iter().map(|s| s["sessionId"].as_str().unwrap()).collect();
    assert!(ids.len() == 2 && ids[0] != ids[1], "{seen}");
    // B's cancel left A's turn alone: its permission was answered, the file written.
    assert_eq!(seen["first"]["stopReason"], "end_turn", "{seen}");
    assert_eq!(std::fs::read_to_string(root.join("hello.txt")).unwrap(), "from A");
    assert_eq!(seen["second"]["stopReason"], "end_turn", "{seen}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[2].header("x-api-key"), Some(KEY));
    assert!(reqs[1].last_user().contains("successfully saved to hello.txt"), "{}", reqs[1].last_user());
}

#[test]
fn a_saved_session_is_loaded_its_history_sent_back_and_continued() {
    let server = Server::start(vec![
        // The first process: one prompt, an edit and a completion.
        anthropic(&format!(
            "I'll write it.\n{}",
            tool("write_to_file", &[("path", "hello.txt"), ("content", "Hello from ACP")])
        )),
        anthropic(&completion("hello.txt says hello")),
        // The second process loads the session; its prompt continues the conversation.
        anthropic(&completion("it still says hello")),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let (first, _) =
        run_client("once", &[("ACP_PROMPT", "Write hello.txt saying hello.")], &server, &root, state.path());
    assert_eq!(first["first"]["stopReason"], "end_turn", "{first}");
    let id = first["session"]["sessionId"].as_str().unwrap().to_string();

    let env = [("ACP_LOAD_ID", id.as_str()), ("ACP_PROMPT", "Does it still say hello?")];
    let (seen, messages) = run_client("load", &env, &server, &root, state.path());
    assert_eq!(seen["first"]["stopReason"], "end_turn", "{seen}");

    // The history came back before the load's answer (in the order on the wire: the SDK's
    // handlers may run after the answer's promise resolves): the person's words, the reply's
    // text, the edit as a completed tool call, the completion's result.
    let history = updates_of(&messages, "session/load", 0);
    let texts = |kind: &str| -> Vec<&str> {
        history.iter().filter(|u| u["sessionUpdate"] == kind).map(|u| u["content"]["text"].as_str().unwrap()).collect()
    };
    assert_eq!(texts("user_message_chunk"), ["Write hello.txt saying hello."], "{history:?}");
    assert_eq!(texts("agent_message_chunk"), ["I'll write it.", "All done.", "hello.txt says hello"], "{history:?}");
    let call = history.iter().find(|u| u["sessionUpdate"] == "tool_call").expect("the edit");
    assert_eq!((&call["kind"], &call["status"]), (&json!("edit"), &json!("completed")));
    assert_eq!(call["locations"][0]["path"], root.join("hello.txt").display().to_string());

    // The prompt after the load resumed the saved conversation as Cline's resumeTaskFromHistory
    // does: the resumption notice, the prompt as new instructions.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let messages = reqs[2].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5, "{messages:?}");
    let last = reqs[2].last_user();
    assert!(last.starts_with("[TASK RESUMPTION] This task was interrupted "), "{last}");
    let words =
        "\n\nNew instructions for task continuation:\n<user_message>\nDoes it still say hello?\n</user_message>\n\n";
    assert!(last.contains(words) && !last.contains("<feedback>"), "{last}");
    assert!(messages[0].to_string().contains("Write hello.txt saying hello."));
}

#[test]
fn what_is_not_a_request_gets_invalid_request_and_authenticate_has_no_method() {
    // Raw lines, as a faulty client might send them: each gets an answer, so it never waits.
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(bin());
    cmd.arg("acp").current_dir(ws.path());
    agent_env(&mut cmd, state.path()).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let lines = [
        r#"[{"jsonrpc":"2.0","id":1,"method":"initialize"}]"#,
        r#"{"jsonrpc":"2.0","id":7,"method":5}"#,
        r#""just a string""#,
        r#"{"jsonrpc":"2.0","id":8,"method":"authenticate","params":{"methodId":"oauth"}}"#,
    ];
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), (lines.join("\n") + "\n").as_bytes()).unwrap();
    let run = wait_limited(child, LIMIT);
    assert_eq!(run.code, Some(0), "{}", run.all());
    let answers: Vec<Value> = run.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let got: Vec<(Value, i64)> =
        answers.iter().map(|a| (a["id"].clone(), a["error"]["code"].as_i64().unwrap_or(0))).collect();
    assert_eq!(
        got,
        [(Value::Null, -32600), (json!(7), -32600), (Value::Null, -32600), (json!(8), -32602)],
        "{answers:?}"
    );
    assert!(answers[3]["error"]["message"].as_str().unwrap().contains("no authentication methods"));
}

/// A session that is open in an editor holds its task: it saves `completed` after each prompt
/// and lives on, so `resume` and `checkpoints restore` elsewhere are refused (both would save
/// over what the session saves next), and are free once the editor closes it.
#[test]
fn a_task_open_in_an_editors_session_is_not_resumed_or_restored_elsewhere() {
    use std::io::{BufRead, Write};
    let server = Server::start(vec![anthropic(&completion("done"))]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let dir = state.path().display().to_string();
    let url = server.anthropic_url();
    let agent = ["--provider", "anthropic", "--base-url", &url, "--model", "claude-test", "--state-dir", &dir];
    let mut cmd = Command::new(bin());
    cmd.arg("acp").args(agent).current_dir(&root);
    agent_env(&mut cmd, state.path()).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut to_agent = child.stdin.take().unwrap();
    // The agent's answers, line by line, on a thread: a hung agent fails the test at LIMIT.
    let (tx, answers) = std::sync::mpsc::channel::<Value>();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(serde_json::from_str(&line).unwrap_or_default());
        }
    });
    let mut ask = |id: u64, method: &str, params: Value| -> Value {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string() + "\n";
        to_agent.write_all(line.as_bytes()).unwrap();
        loop {
            let m = answers.recv_timeout(LIMIT).expect("the agent answers");
            if m["id"] == id {
                assert!(m["error"].is_null(), "{m}");
                return m["result"].clone();
            }
        }
    };
    ask(1, "initialize", json!({"protocolVersion": 1, "clientCapabilities": {}}));
    let session = ask(2, "session/new", json!({"cwd": root, "mcpServers": []}));
    let id = session["sessionId"].as_str().unwrap().to_string();
    let prompt = json!({"sessionId": id, "prompt": [{"type": "text", "text": "Say done."}]});
    assert_eq!(ask(3, "session/prompt", prompt)["stopReason"], "end_turn");
    let saved = saved_status(state.path(), &id);
    assert_eq!(saved, "completed", "saved after the prompt, the session still open");

    let pid = child.id();
    let resume = run_cmd("resume", &root, &[&id, "--state-dir", &dir], &[], LIMIT);
    assert_eq!(resume.code, Some(2), "{}", resume.all());
    assert!(
        resume.stderr.contains("is running now") && resume.stderr.contains(&format!("process {pid}")),
        "{}",
        resume.stderr
    );
    let restore = run_cmd("checkpoints", &root, &["restore", &id, "1", "--yes", "--state-dir", &dir], &[], LIMIT);
    assert_eq!(restore.code, Some(1), "{}", restore.all());
    assert!(restore.stderr.contains("is running now") && restore.stderr.contains("restoring it"), "{}", restore.stderr);
    assert_eq!(server.requests().len(), 1, "nothing was sent by the refused commands");

    // The editor closes the session: the task is free (restore now says what it has).
    drop(to_agent);
    assert_eq!(wait_exit(&mut child, LIMIT).code(), Some(0));
    let restore = run_cmd("checkpoints", &root, &["restore", &id, "1", "--yes", "--state-dir", &dir], &[], LIMIT);
    assert!(restore.stderr.contains("has no checkpoint 1"), "{}", restore.stderr);
}

/// The saved status of task `id` in the state directory `state`.
fn saved_status(state: &Path, id: &str) -> String {
    let text = std::fs::read_to_string(state.join("tasks").join(format!("{id}.json"))).unwrap();
    serde_json::from_str::<Value>(&text).unwrap()["status"].as_str().unwrap_or_default().to_string()
}

#[test]
fn each_prompt_gets_the_whole_limits_and_a_turn_limit_is_the_protocols_stop_reason() {
    let server = Server::start(vec![
        // Prompt 1, two requests: an edit, then done.
        anthropic(&tool("write_to_file", &[("path", "a.txt"), ("content", "one")])),
        anthropic(&completion("wrote a.txt")),
        // Prompt 2: two reads; a third request would pass --max-turns 2.
        anthropic(&tool("read_file", &[("path", "a.txt")])),
        anthropic(&tool("list_files", &[("path", ".")])),
        // Prompt 3: the limits afresh.
        anthropic(&completion("still here")),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let prompts = json!(["Write a.txt.", "Read it and list the files.", "Say you are still here."]).to_string();
    let env = [("ACP_PROMPTS", prompts.as_str())];
    let (seen, messages) =
        run_client_with("prompts", &env, &["--max-turns", "2", "--timeout", "1h"], &server, &root, state.path());
    let stops: Vec<&str> =
        seen["answers"].as_array().unwrap().iter().map(|a| a["stopReason"].as_str().unwrap()).collect();
    assert_eq!(stops, ["end_turn", "max_turn_requests", "end_turn"], "{seen}");
    assert_eq!(server.requests().len(), 5);

    // The edit's call showed its diff, and its completion kept it: the result (the file again)
    // is the raw output, not content that replaces the diff.
    let updates = updates_of(&messages, "session/prompt", 0);
    let write = updates.iter().find(|u| u["sessionUpdate"] == "tool_call" && u["title"] == "Write a.txt");
    let write = write.unwrap_or_else(|| panic!("no write call: {updates:?}"));
    assert_eq!(write["content"][0]["type"], "diff", "{write}");
    let id = &write["toolCallId"];
    let done = updates
        .iter()
        .find(|u| u["toolCallId"] == *id && u["status"] == "completed")
        .unwrap_or_else(|| panic!("no completed update: {updates:?}"));
    assert!(done.get("content").is_none(), "{done}");
    assert!(done["rawOutput"].as_str().unwrap().contains("successfully saved to a.txt"), "{done}");
}

#[test]
fn after_a_stop_at_the_mistake_limit_the_next_prompt_is_the_persons_guidance() {
    let server = Server::start(vec![
        anthropic("Let me think about it."),
        anthropic("Still thinking."),
        anthropic(&completion("done as guided")),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    // A server the editor passes that the settings file also names: the session starts.
    let cfg = state.path().join("mcp.json");
    std::fs::write(&cfg, r#"{"mcpServers": {"shared": {"command": "/nonexistent/mcp-server"}}}"#).unwrap();
    let mcp = json!([{"name": "shared", "command": "/nonexistent/other", "args": [], "env": []}]).to_string();
    // An empty prompt sends nothing to the model.
    let prompts = json!(["", "Do the task.", "Use attempt_completion now."]).to_string();
    let hooks = RecordingHooks::new(state.path(), &["UserPromptSubmit"]);
    let env = [
        ("ACP_PROMPTS", prompts.as_str()),
        ("ACP_MCP", mcp.as_str()),
        ("HOME", &hooks.home),
        ("XDG_DOCUMENTS_DIR", &hooks.docs),
    ];
    let more = ["--max-mistakes", "2", "--mcp-config", cfg.to_str().unwrap()];
    let (seen, _) = run_client_with("prompts", &env, &more, &server, &root, state.path());
    let stops: Vec<&str> =
        seen["answers"].as_array().unwrap().iter().map(|a| a["stopReason"].as_str().unwrap()).collect();
    assert_eq!(stops, ["end_turn", "end_turn", "end_turn"], "{seen}");

    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "the empty prompt reached the model, or the guidance did not");
    assert!(text_of(&reqs[0].body["messages"][0]["content"]).contains("<task>\nDo the task.\n</task>"));
    let guided = reqs[2].last_user();
    assert!(
        guided.contains("You seem to be having trouble proceeding. The user has provided the following feedback to help guide you:\n<feedback>\nUse attempt_completion now.\n</feedback>"),
        "{guided}"
    );
    // Cline asks for guidance and runs no hook on it: UserPromptSubmit saw the task only.
    assert!(!guided.contains("UserPromptSubmit saw it"), "{guided}");
    let submitted: Vec<Value> =
        hooks.inputs("UserPromptSubmit").iter().map(|i| i["userPromptSubmit"]["prompt"].clone()).collect();
    assert_eq!(submitted, [json!("Do the task.")]);
}

/// The client's MCP servers for a slow call (the Python SDK's test server, its `slow` tool), and
/// the file the server writes when the call begins.
fn slow_mcp_server(state: &Path) -> (String, PathBuf) {
    let pidfile = state.join("pids");
    let env = json!([{"name": "PIDFILE", "value": pidfile.display().to_string()}]);
    let py = crate::run_mcp::python();
    let mcp = json!([{"name": "py", "command": py, "args": [crate::run_mcp::py_script()], "env": env}]);
    (mcp.to_string(), state.join("pids.calls"))
}

#[test]
fn a_cancel_stops_an_mcp_call_under_way_at_once() {
    let server = Server::start(vec![anthropic(&tool(
        "use_mcp_tool",
        &[("server_name", "py"), ("tool_name", "slow"), ("arguments", r#"{"seconds": 600}"#)],
    ))]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let (mcp, marker) = slow_mcp_server(state.path());
    let env =
        [("ACP_MCP", mcp.as_str()), ("ACP_PROMPT", "Call the slow tool."), ("ACP_MARKER", marker.to_str().unwrap())];
    let (seen, messages) = run_client("cancel-when", &env, &server, &root, state.path());
    assert_eq!(seen["first"]["stopReason"], "cancelled", "{seen}");
    // The call ended with the cancel, not at the server's 60 s timeout.
    let updates = updates_of(&messages, "session/prompt", 0);
    let ended = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "failed")
        .unwrap_or_else(|| panic!("the call did not end: {updates:?}"));
    let said = ended["content"][0]["content"]["text"].as_str().unwrap_or_default();
    assert!(said.contains("the turn was cancelled"), "{ended}");
    assert_eq!(server.requests().len(), 1);
}

/// A cancel during one call of a reply runs none of the reply's later calls: under `--yolo` the
/// write after the slow MCP call still happened after the person pressed Stop (and was shown
/// as failed).
#[test]
fn a_cancel_runs_no_later_call_of_the_reply() {
    let slow =
        tool("use_mcp_tool", &[("server_name", "py"), ("tool_name", "slow"), ("arguments", r#"{"seconds": 600}"#)]);
    let write = tool("write_to_file", &[("path", "a.txt"), ("content", "written after the cancel")]);
    let server = Server::start(vec![anthropic(&format!("{slow}\n{write}"))]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let (mcp, marker) = slow_mcp_server(state.path());
    let env =
        [("ACP_MCP", mcp.as_str()), ("ACP_PROMPT", "Call it, then write."), ("ACP_MARKER", marker.to_str().unwrap())];
    let (seen, messages) = run_client_with("cancel-when", &env, &["--yolo"], &server, &root, state.path());
    assert_eq!(seen["first"]["stopReason"], "cancelled", "{seen}");
    assert!(!root.join("a.txt").exists(), "the write ran after the cancel");
    let statuses = last_statuses(&messages);
    assert!(statuses.values().all(|s| s == "failed"), "{statuses:?}");
    assert_eq!(server.requests().len(), 1);
}

/// A client may send its next prompt right after a cancel, before the cancelled prompt is
/// answered: the cancelled turn still ends `cancelled`, and the next one runs. (The flag was
/// cleared as the next prompt was read, and the cancelled turn went on with another request.)
#[test]
fn a_prompt_sent_right_after_a_cancel_does_not_undo_it() {
    let slow =
        tool("use_mcp_tool", &[("server_name", "py"), ("tool_name", "slow"), ("arguments", r#"{"seconds": 600}"#)]);
    let server = Server::start(vec![anthropic(&slow), anthropic(&completion("second done"))]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let (mcp, marker) = slow_mcp_server(state.path());
    let env = [
        ("ACP_MCP", mcp.as_str()),
        ("ACP_PROMPT", "Call the slow tool."),
        ("ACP_PROMPT2", "Never mind, finish."),
        ("ACP_MARKER", marker.to_str().unwrap()),
    ];
    let (seen, messages) = run_client("cancel-when", &env, &server, &root, state.path());
    assert_eq!(seen["first"]["stopReason"], "cancelled", "{seen}");
    assert_eq!(seen["second"]["stopReason"], "end_turn", "{seen}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{seen}");
    assert!(reqs[1].last_user().contains("Never mind, finish."), "{}", reqs[1].last_user());
    let said: String = updates_of(&messages, "session/prompt", 0)
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap_or_default())
        .collect();
    assert!(!said.contains("Task failed"), "{said}");
}

/// XML: the results of the calls a reply ran before its `attempt_completion` reach the model
/// with the next prompt, before the feedback on the completion (Cline pushed them before it
/// waited for the person); they were dropped.
#[test]
fn the_results_before_a_completion_go_with_the_next_prompt() {
    let reply = format!("{}\n{}", tool("list_files", &[("path", ".")]), completion("done"));
    let server = Server::start(vec![anthropic(&reply), anthropic(&completion("done again"))]);
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("seen.txt"), "x").unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let prompts = json!(["List and finish.", "Now more."]).to_string();
    let env = [("ACP_PROMPTS", prompts.as_str())];
    let (seen, _) = run_client_with("prompts", &env, &[], &server, &root, state.path());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{seen}");
    let next = reqs[1].last_user();
    let listed = next.find("[list_files for '.'] Result:\nseen.txt").unwrap_or_else(|| panic!("{next}"));
    let done = next.find("[attempt_completion] Result: Done\n\nThe user has provided feedback").expect("feedback");
    assert!(listed < done && next.contains("<feedback>\nNow more.\n</feedback>"), "{next}");
}

/// The protocol's `refusal`: the refused prompt and all after it are left out of the next
/// prompt (an editor such as Zed takes them out of its thread), so the model gets the
/// conversation as it was before it — also when the first prompt was refused, which leaves the
/// next one to open the task afresh.
#[test]
fn a_refused_prompt_and_its_turns_are_left_out_of_the_next_one() {
    let server = Server::start(vec![
        anthropic(&completion("first done")),
        // Prompt 2: a read, then the safety system's refusal.
        anthropic(&tool("read_file", &[("path", "seen.txt")])),
        anthropic_with("I can't help with that.", 5, "refusal"),
        // Prompt 3 goes on from prompt 1: the file is read for the first time.
        anthropic(&tool("read_file", &[("path", "seen.txt")])),
        anthropic(&completion("hi")),
    ]);
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("seen.txt"), "SEEN-CONTENT").unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let prompts = json!(["First task.", "Do the refused thing.", "Say hi."]).to_string();
    let env = [("ACP_PROMPTS", prompts.as_str())];
    let (seen, _) = run_client_with("prompts", &env, &[], &server, &root, state.path());
    let stops: Vec<&str> =
        seen["answers"].as_array().unwrap().iter().map(|a| a["stopReason"].as_str().unwrap()).collect();
    assert_eq!(stops, ["end_turn", "refusal", "end_turn"], "{seen}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 5, "{seen}");
    let read = reqs[4].last_user();
    assert!(read.contains("SEEN-CONTENT") && !read.contains("already read"), "{read}");
    let next = &reqs[3].body["messages"];
    let all = next.to_string();
    assert!(all.contains("First task.") && all.contains("Say hi."), "{all}");
    assert!(!all.contains("refused thing") && !all.contains("SEEN-CONTENT"), "the refused turn was sent again: {all}");
    // Prompt 1's request, its completion, and the feedback that is prompt 3.
    assert_eq!(next.as_array().unwrap().len(), 3, "{all}");

    // The first prompt refused: the next one is the task.
    let server =
        Server::start(vec![anthropic_with("I can't help with that.", 5, "refusal"), anthropic(&completion("done"))]);
    let state = tempfile::tempdir().unwrap();
    let prompts = json!(["The refused task.", "Another task."]).to_string();
    let env = [("ACP_PROMPTS", prompts.as_str())];
    let (seen, _) = run_client_with("prompts", &env, &[], &server, &root, state.path());
    let stops: Vec<&str> =
        seen["answers"].as_array().unwrap().iter().map(|a| a["stopReason"].as_str().unwrap()).collect();
    assert_eq!(stops, ["refusal", "end_turn"], "{seen}");
    let messages = server.requests()[1].body["messages"].clone();
    assert_eq!(messages.as_array().unwrap().len(), 1, "{messages}");
    let first = text_of(&messages[0]["content"]);
    assert!(first.contains("<task>\nAnother task.\n</task>") && !first.contains("refused"), "{first}");

    // So does a prompt after a `session/load` of a session whose only prompt was refused.
    let server =
        Server::start(vec![anthropic_with("I can't help with that.", 5, "refusal"), anthropic(&completion("done"))]);
    let state = tempfile::tempdir().unwrap();
    let (first, _) = run_client("once", &[("ACP_PROMPT", "The refused task.")], &server, &root, state.path());
    assert_eq!(first["first"]["stopReason"], "refusal", "{first}");
    let id = first["session"]["sessionId"].as_str().unwrap().to_string();
    let env = [("ACP_LOAD_ID", id.as_str()), ("ACP_PROMPT", "Another task.")];
    // At a terminal there is nothing to resume.
    let tasks = state.path().join("tasks").display().to_string();
    let r = run_cmd("resume", &root, &["--state-dir", &tasks, &id], &[], LIMIT);
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert!(
        r.stderr.contains(&format!("task {id} has nothing to resume: its only prompt was refused")),
        "{}",
        r.stderr
    );
    let (seen, _) = run_client("load", &env, &server, &root, state.path());
    assert_eq!(seen["first"]["stopReason"], "end_turn", "{seen}");
    let messages = server.requests()[1].body["messages"].clone();
    assert_eq!(messages.as_array().unwrap().len(), 1, "{messages}");
    let first = text_of(&messages[0]["content"]);
    assert!(first.contains("<task>\nAnother task.\n</task>") && !first.contains("refused"), "{first}");
}

/// A session whose first request failed kept that request: loaded, its next prompt sends it
/// again with the resumption notice (only a refused first prompt leaves nothing to resume).
#[test]
fn a_loaded_session_whose_first_request_failed_sends_it_again() {
    let server = Server::start(vec![
        status(401, json!({"type":"error","error":{"type":"authentication_error","message":"no"}})),
        anthropic(&completion("done")),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let (first, _) = run_client("once", &[("ACP_PROMPT", "The first task.")], &server, &root, state.path());
    assert_eq!(first["first"]["stopReason"], "end_turn", "{first}");
    let id = first["session"]["sessionId"].as_str().unwrap().to_string();
    let env = [("ACP_LOAD_ID", id.as_str()), ("ACP_PROMPT", "Try again.")];
    let (seen, _) = run_client("load", &env, &server, &root, state.path());
    assert_eq!(seen["first"]["stopReason"], "end_turn", "{seen}");
    let sent = server.requests()[1].last_user();
    assert!(sent.contains("<task>\nThe first task.\n</task>") && sent.contains("[TASK RESUMPTION]"), "{sent}");
    assert!(sent.contains("Try again."), "{sent}");
}

/// An editor has no prompt in the middle of a turn: the model's question ends the turn, shown
/// with its options, and the next prompt is its answer (it went on with an invented one).
#[test]
fn a_question_ends_the_turn_and_the_next_prompt_answers_it() {
    let ask = tool("ask_followup_question", &[("question", "Which color?"), ("options", r#"["red", "blue"]"#)]);
    let reply = format!("{}\n{ask}", tool("list_files", &[("path", ".")]));
    let server = Server::start(vec![anthropic(&reply), anthropic(&completion("painted blue"))]);
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("seen.txt"), "x").unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let prompts = json!(["Paint it.", "blue, see @/seen.txt"]).to_string();
    let env = [("ACP_PROMPTS", prompts.as_str())];
    let (seen, messages) = run_client_with("prompts", &env, &[], &server, &root, state.path());
    assert_eq!(seen["answers"][0]["stopReason"], "end_turn", "{seen}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "the first turn ended at the question: {seen}");
    let said: String = updates_of(&messages, "session/prompt", 0)
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert!(said.contains("Which color?\n- red\n- blue"), "{said:?}");
    // The results before the question, then the answer as its result, mentions read.
    let next = reqs[1].last_user();
    let listed = next.find("[list_files for '.'] Result:\nseen.txt").unwrap_or_else(|| panic!("{next}"));
    let answer = "[ask_followup_question for 'Which color?'] Result:\n<answer>\nblue, see 'seen.txt' (see below for file content)\n</answer>";
    let answered = next.find(answer).unwrap_or_else(|| panic!("{next}"));
    assert!(listed < answered && next.contains("<file_content path=\"seen.txt\">"), "{next}");
    assert!(!next.contains("<feedback>") && !next.contains("no answer"), "{next}");
}

/// Global hooks (in the documents folder of a home of the test's own: they run unasked) that
/// record their input and answer with a context naming them; `home` and `docs` are for the
/// agent's `HOME` and `XDG_DOCUMENTS_DIR`.
struct RecordingHooks {
    home: String,
    docs: String,
    out: PathBuf,
}

impl RecordingHooks {
    fn new(state: &Path, names: &[&str]) -> RecordingHooks {
        let home = state.join("home");
        let docs = home.join("Documents");
        let out = state.join("hooks-out");
        std::fs::create_dir_all(docs.join("Cline/Hooks")).unwrap();
        std::fs::create_dir(&out).unwrap();
        for name in names {
            let log = out.join(format!("{name}.jsonl"));
            let script = format!(
                "#!/bin/sh\ncat >> '{log}'\necho >> '{log}'\necho '{{\"contextModification\": \"{name} saw it\"}}'\n",
                log = log.display()
            );
            let path = docs.join("Cline/Hooks").join(name);
            std::fs::write(&path, script).unwrap();
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        }
        RecordingHooks { home: home.display().to_string(), docs: docs.display().to_string(), out }
    }

    /// The inputs hook `name` was given, in order.
    fn inputs(&self, name: &str) -> Vec<Value> {
        let text = std::fs::read_to_string(self.out.join(format!("{name}.jsonl"))).unwrap_or_default();
        text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
    }
}

/// In an editor the answer to a question is that call's result, so PostToolUse sees it (Cline's
/// ToolExecutor runs it after the question's handler returns the answer) and its context follows
/// the result; UserPromptSubmit does not, as no prompt was submitted (it saw the answer as one).
#[test]
fn an_answer_to_a_question_goes_to_post_tool_use_not_to_user_prompt_submit() {
    let ask = tool("ask_followup_question", &[("question", "Which color?")]);
    let server = Server::start(vec![anthropic(&ask), anthropic(&completion("painted blue"))]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let hooks = RecordingHooks::new(state.path(), &["PostToolUse", "UserPromptSubmit"]);
    let seen_by = |name: &str| hooks.inputs(name);
    let prompts = json!(["Paint it.", "blue"]).to_string();
    let env = [("ACP_PROMPTS", prompts.as_str()), ("HOME", &hooks.home), ("XDG_DOCUMENTS_DIR", &hooks.docs)];
    let (seen, _) = run_client_with("prompts", &env, &[], &server, &root, state.path());
    assert_eq!(seen["answers"][1]["stopReason"], "end_turn", "{seen}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{seen}");
    let next = reqs[1].last_user();
    let answered = "[ask_followup_question for 'Which color?'] Result:\n<answer>\nblue\n</answer>\n\n<hook_context source=\"PostToolUse\" type=\"general\">\nPostToolUse saw it\n</hook_context>";
    assert!(next.contains(answered), "{next}");
    assert!(!next.contains("UserPromptSubmit saw it"), "{next}");
    let post = seen_by("PostToolUse");
    assert_eq!(post.len(), 1, "{post:?}");
    assert_eq!(post[0]["postToolUse"]["toolName"], "ask_followup_question", "{post:?}");
    assert_eq!(post[0]["postToolUse"]["result"], "<answer>\nblue\n</answer>", "{post:?}");
    // UserPromptSubmit saw the task's prompt only.
    let submitted = seen_by("UserPromptSubmit");
    assert_eq!(submitted.len(), 1, "{submitted:?}");
    assert_eq!(submitted[0]["userPromptSubmit"]["prompt"], "Paint it.", "{submitted:?}");
}

/// Natively, the question's call is answered by the next prompt, paired by id (the scripted
/// server refuses a call left without its result, as Anthropic does), and a call after it in
/// the same reply is said not to have run.
#[test]
fn natively_the_next_prompt_is_the_question_s_result() {
    use common::native::{self, call, AnthropicReply};
    let calls = vec![
        call(
            "toolu_q",
            "ask_followup_question",
            &[r#"{"question": "Which color?", "options": "[\"red\", \"blue\"]"}"#],
        ),
        call("toolu_l", "list_files", &[r#"{"path": "."}"#]),
    ];
    let done = vec![call("toolu_d", "attempt_completion", &[r#"{"result": "painted blue"}"#])];
    let server = Server::start(vec![
        native::anthropic(AnthropicReply { calls, ..Default::default() }, 7),
        native::anthropic(AnthropicReply { calls: done, ..Default::default() }, 7),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let prompts = json!(["Paint it.", "blue"]).to_string();
    let hooks = RecordingHooks::new(state.path(), &["PostToolUse"]);
    let env = [("ACP_PROMPTS", prompts.as_str()), ("HOME", &hooks.home), ("XDG_DOCUMENTS_DIR", &hooks.docs)];
    let (seen, _) = run_client_with("prompts", &env, &["--tool-calls", "native"], &server, &root, state.path());
    assert_eq!(seen["answers"][0]["stopReason"], "end_turn", "{seen}");
    assert_eq!(seen["answers"][1]["stopReason"], "end_turn", "{seen}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{seen}");
    let results = &reqs[1].body["messages"].as_array().unwrap().last().unwrap()["content"];
    let result = |id: &str| {
        let r = results.as_array().unwrap().iter().find(|b| b["tool_use_id"] == id);
        text_of(&r.unwrap_or_else(|| panic!("no result for {id}: {results}"))["content"])
    };
    assert!(result("toolu_q").ends_with("<answer>\nblue\n</answer>"), "{results}");
    assert!(result("toolu_l").starts_with("This tool was not executed: ask_followup_question"), "{results}");
    // PostToolUse's context on the answer: a text block after the results, as in Cline.
    let context = "<hook_context source=\"PostToolUse\" type=\"general\">\nPostToolUse saw it\n</hook_context>";
    let texts: Vec<&Value> = results.as_array().unwrap().iter().filter(|b| b["type"] == "text").collect();
    assert_eq!(texts[0]["text"], context, "{results}");
}

/// An editor's stdio MCP server starts in the session's directory, not where the editor
/// started the agent: `server-filesystem .` serves the workspace.
#[test]
fn an_editor_s_stdio_mcp_server_starts_in_the_session_s_directory() {
    let fs = crate::run_mcp::node_server("server-filesystem");
    let mcp = json!([{"name": "fs", "command": "node", "args": [fs, "."], "env": []}]).to_string();
    let ask =
        tool("use_mcp_tool", &[("server_name", "fs"), ("tool_name", "list_allowed_directories"), ("arguments", "{}")]);
    let server = Server::start(vec![anthropic(&ask), anthropic(&completion("listed"))]);
    let ws = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let prompts = json!(["Which directories may you read?"]).to_string();
    let agent_cwd = elsewhere.path().to_str().unwrap();
    let env = [("ACP_PROMPTS", prompts.as_str()), ("ACP_MCP", mcp.as_str()), ("ACP_AGENT_CWD", agent_cwd)];
    let (seen, _) = run_client_with("prompts", &env, &[], &server, &root, state.path());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{seen}");
    let result = reqs[1].last_user();
    assert!(result.starts_with("[use_mcp_tool for 'fs'] Result:\nAllowed directories:"), "{result}");
    assert!(result.contains(root.to_str().unwrap()), "{result}");
    let other = std::fs::canonicalize(elsewhere.path()).unwrap();
    assert!(!result.contains(other.to_str().unwrap()), "{result}");
}

#[test]
fn a_completion_clears_the_mistake_count_for_the_next_prompt() {
    let server = Server::start(vec![
        anthropic("Thinking."),
        anthropic(&completion("done")),
        anthropic("Thinking again."),
        anthropic(&completion("done again")),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let prompts = json!(["Do it.", "Do it again."]).to_string();
    let env = [("ACP_PROMPTS", prompts.as_str())];
    let (seen, _) = run_client_with("prompts", &env, &["--max-mistakes", "2"], &server, &root, state.path());
    assert_eq!(server.requests().len(), 4, "the second prompt stopped at the mistake limit: {seen}");
}

#[test]
fn a_file_the_editor_embeds_is_not_read_for_mentions() {
    let server = Server::start(vec![anthropic(&completion("explained"))]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    std::fs::write(root.join("a.txt"), "alpha content").unwrap();
    std::fs::write(root.join("b.txt"), "bravo content").unwrap();
    let state = tempfile::tempdir().unwrap();
    let file = json!({"type": "resource", "resource": {"uri": "file:///notes.md", "text": "see @/b.txt", "mimeType": "text/markdown"}});
    let prompts = json!([[{"type": "text", "text": "Explain @/a.txt"}, file]]).to_string();
    let env = [("ACP_PROMPTS", prompts.as_str())];
    let (seen, _) = run_client("prompts", &env, &server, &root, state.path());
    assert_eq!(seen["answers"][0]["stopReason"], "end_turn", "{seen}");
    let first = text_of(&server.requests()[0].body["messages"][0]["content"]);
    assert!(first.contains("alpha content"), "the person's mention: {first}");
    assert!(first.contains("see @/b.txt") && !first.contains("bravo content"), "{first}");
}

/// Zed splits a typed message around its @-mentions: [text, resource, text]. The words reach
/// the model in order, the workspace's file named in place as Cline names a mention of it, its
/// text — the editor's, not the file on disk — after the task with the path from the root; a
/// file outside the workspace keeps its absolute path; binary content is named, not dropped.
#[test]
fn a_prompt_split_around_an_editors_mentions_keeps_its_words_in_order() {
    let server = Server::start(vec![anthropic(&completion("fixed"))]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    std::fs::write(root.join("src/a.rs"), "fn a() { saved }").unwrap();
    let state = tempfile::tempdir().unwrap();
    let uri = |rel: &str| format!("file://{}/{rel}", root.display());
    let text = |t: &str| json!({"type": "text", "text": t});
    let prompts = json!([[
        text("Fix the bug in "),
        {"type": "resource", "resource": {"uri": uri("src/a.rs"), "text": "fn a() { unsaved }", "mimeType": "text/x-rust"}},
        text(" where it crashes, as in "),
        {"type": "resource", "resource": {"uri": "file:///elsewhere/b.rs", "text": "fn b() {}"}},
        text(" and "),
        {"type": "resource", "resource": {"uri": uri("logo.png"), "blob": "iVBORw0KGgo=", "mimeType": "image/png"}},
        text("."),
    ]])
    .to_string();
    let env = [("ACP_PROMPTS", prompts.as_str())];
    let (seen, _) = run_client("prompts", &env, &server, &root, state.path());
    assert_eq!(seen["answers"][0]["stopReason"], "end_turn", "{seen}");
    let first = text_of(&server.requests()[0].body["messages"][0]["content"]);
    let task = "<task>\nFix the bug in 'src/a.rs' (see below for file content) where it crashes, as in \
                '/elsewhere/b.rs' (see below for file content) and 'logo.png' (see below for file content).\n</task>";
    assert!(first.contains(task), "{first}");
    let after = &first[first.find("</task>").unwrap()..];
    let a = after.find("<file_content path=\"src/a.rs\">\nfn a() { unsaved }\n</file_content>");
    let png = after.find("<file_content path=\"logo.png\">\n(Binary file, unable to display content)\n</file_content>");
    let b = after.find("<file_content path=\"/elsewhere/b.rs\">\nfn b() {}\n</file_content>");
    assert!(a.is_some() && png.is_some() && b.is_some(), "{first}");
    assert!(!first.contains("{ saved }"), "the file on disk was read: {first}");
}

/// Each `toolCallId` of a session's `tool_call`s, with the call's `rawInput`, in the order on
/// the wire; panics if an id is announced twice for different calls.
fn announced(messages: &[(String, Value)]) -> Vec<(&str, &Value)> {
    let mut seen: Vec<(&str, &Value)> = Vec::new();
    for (_, m) in messages.iter().filter(|(from, m)| from == "agent" && m["method"] == "session/update") {
        let u = &m["params"]["update"];
        if u["sessionUpdate"] == "tool_call" {
            let id = u["toolCallId"].as_str().unwrap();
            if let Some((_, earlier)) = seen.iter().find(|(i, _)| *i == id) {
                assert_eq!(*earlier, &u["rawInput"], "{id} announced for two calls");
            }
            seen.push((id, &u["rawInput"]));
        }
    }
    seen
}

/// The last status each `toolCallId` was given (by its `tool_call` or a `tool_call_update`).
fn last_statuses(messages: &[(String, Value)]) -> HashMap<String, String> {
    let mut last = HashMap::new();
    for (_, m) in messages.iter().filter(|(from, m)| from == "agent" && m["method"] == "session/update") {
        let u = &m["params"]["update"];
        if u["sessionUpdate"] == "tool_call" || u["sessionUpdate"] == "tool_call_update" {
            let status = u["status"].as_str().unwrap_or("pending"); // a tool_call's default
            if u["sessionUpdate"] == "tool_call" || u.get("status").is_some() {
                last.insert(u["toolCallId"].as_str().unwrap().to_string(), status.to_string());
            }
        }
    }
    last
}

/// A reply that fails mid-stream after announcing two calls is sent again, and the new reply's
/// calls are what the approvals are about. The failed attempt's calls stayed queued, and the
/// first of them was taken as the call asked about: the new call's permission request named
/// the old call's id (announced again for the new call), and "always" was stored for the old
/// command, so the second edit was asked again.
#[test]
fn after_a_retried_reply_the_permission_names_the_call_it_asks_about() {
    let first = format!(
        "I'll start.\n{}\n{}",
        tool("execute_command", &[("command", "echo one > one.txt"), ("requires_approval", "true")]),
        tool("write_to_file", &[("path", "a.txt"), ("content", "a")])
    );
    let mut body = anthropic_body(&first, 5, "end_turn");
    body.truncate(body.find("event: content_block_stop").unwrap());
    body.push_str("event: error\r\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\r\n\r\n");
    let failed = Resp { body: body.into_bytes(), ..anthropic("") };
    let second = format!(
        "I'll write both.\n{}\n{}",
        tool("write_to_file", &[("path", "b.txt"), ("content", "b")]),
        tool("write_to_file", &[("path", "c.txt"), ("content", "c")])
    );
    let server = Server::start(vec![failed, anthropic(&second), anthropic(&completion("wrote b.txt and c.txt"))]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let prompts = json!(["Write the files."]).to_string();
    let env = [("ACP_PROMPTS", prompts.as_str()), ("ACP_ANSWER", "allow_always")];
    let (seen, messages) = run_client("prompts", &env, &server, &root, state.path());
    assert_eq!(seen["answers"][0]["stopReason"], "end_turn", "{seen}");
    assert_eq!(server.requests().len(), 3);
    assert!(root.join("b.txt").exists() && root.join("c.txt").exists());
    assert!(!root.join("a.txt").exists() && !root.join("one.txt").exists());

    // No id is announced for two calls (`announced`); the failed attempt's calls failed.
    let calls = announced(&messages);
    assert_eq!(calls.len(), 4, "{calls:?}");
    let id_of = |key: &str, value: &str| calls.iter().find(|(_, input)| input[key] == value).unwrap().0;
    let last = last_statuses(&messages);
    assert_eq!(last[id_of("command", "echo one > one.txt")], "failed", "{last:?}");
    assert_eq!(last[id_of("path", "a.txt")], "failed", "{last:?}");
    assert_eq!(last[id_of("path", "b.txt")], "completed", "{last:?}");
    assert_eq!(last[id_of("path", "c.txt")], "completed", "{last:?}");

    // One request, about b.txt; its "always" covered c.txt's edit.
    let asked: Vec<&Value> = messages
        .iter()
        .filter(|(from, m)| from == "agent" && m["method"] == "session/request_permission")
        .map(|(_, m)| &m["params"]["toolCall"])
        .collect();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["toolCallId"], id_of("path", "b.txt"), "{asked:?} {calls:?}");
}

/// `--timeout` passing while a permission request waits for the editor ends the turn, with the
/// time limit's message, and the agent lives on. The request waited for an answer nothing woke,
/// and the watchdog ended the whole process 3 s later.
#[test]
fn the_time_limit_ends_a_turn_waiting_for_a_permission_and_the_agent_lives_on() {
    let server = Server::start(vec![anthropic(&tool("write_to_file", &[("path", "x.txt"), ("content", "x")]))]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let prompts = json!(["Write x.txt."]).to_string();
    let env = [("ACP_PROMPTS", prompts.as_str()), ("ACP_ANSWER", "never")];
    // (`run_client_with` asserts the agent exited 0 when the client closed its input.)
    let (seen, messages) = run_client_with("prompts", &env, &["--timeout", "2"], &server, &root, state.path());
    assert_eq!(seen["answers"][0]["stopReason"], "end_turn", "{seen}");
    assert_eq!(seen["permissions"].as_array().unwrap().len(), 1, "{seen}");
    assert!(!root.join("x.txt").exists());
    assert_eq!(server.requests().len(), 1);
    let said: String = updates_of(&messages, "session/prompt", 0)
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap_or_default())
        .collect();
    assert!(said.contains("the time limit was reached (--timeout 2s"), "{said}");
}

/// `--timeout` ends a turn waiting on an MCP call, and the session's stdio MCP server serves the
/// next prompt: the watchdog killed every child of the agent, the servers of every session with
/// them, so the next call started the server again (or found none).
#[test]
fn the_time_limit_ends_an_mcp_call_and_the_server_lives_on_for_the_next_prompt() {
    let call =
        |seconds: &str| tool("use_mcp_tool", &[("server_name", "py"), ("tool_name", "slow"), ("arguments", seconds)]);
    let server = Server::start(vec![
        anthropic(&call(r#"{"seconds": 600}"#)),
        anthropic(&call(r#"{"seconds": 0}"#)),
        anthropic(&completion("done")),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let (mcp, _) = slow_mcp_server(state.path());
    let prompts = json!(["Call the slow tool.", "Call it without waiting."]).to_string();
    let env = [("ACP_PROMPTS", prompts.as_str()), ("ACP_MCP", mcp.as_str())];
    let (seen, messages) = run_client_with("prompts", &env, &["--timeout", "5"], &server, &root, state.path());
    assert_eq!(seen["answers"][0]["stopReason"], "end_turn", "{seen}");
    assert_eq!(seen["answers"][1]["stopReason"], "end_turn", "{seen}");
    let said: String = updates_of(&messages, "session/prompt", 0)
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap_or_default())
        .collect();
    assert!(said.contains("the time limit was reached (--timeout 5s"), "{said}");
    // The call ended at the limit, the server told so; not by its death.
    let ended = updates_of(&messages, "session/prompt", 0)
        .into_iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "failed")
        .unwrap_or_else(|| panic!("the call did not end: {messages:?}"));
    let why = ended["content"][0]["content"]["text"].as_str().unwrap_or_default();
    assert!(why.contains("the time limit was reached (--timeout)"), "{ended}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "{seen}");
    assert!(reqs[2].last_user().contains("slept"), "{}", reqs[2].last_user());
    // One server process all along: not killed, so not started again.
    let pids = std::fs::read_to_string(state.path().join("pids")).unwrap();
    assert_eq!(pids.lines().count(), 1, "{pids}");
}

/// A session opened after a cancelled prompt connects its HTTP MCP servers. The cancel's mark
/// outlived the turn, and the curl of the new session's server was killed as it started, as
/// part of the cancelled turn.
#[test]
fn a_session_opened_after_a_cancelled_prompt_connects_its_http_mcp_server() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut py = Command::new(crate::run_mcp::python())
        .args([crate::run_mcp::py_script(), "streamable-http".into(), port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the Python SDK server");
    crate::run_mcp::wait_for("the HTTP server", || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
    // The first reply stalls after its first sentence until the client cancels it.
    let sentence = "Let me look first.";
    let mut stalled = anthropic_with(&format!("{sentence} Then more."), sentence.len(), "end_turn");
    let body = String::from_utf8(stalled.body.clone()).unwrap();
    let first = body.find("first.").expect("the first sentence's delta");
    stalled.stall_at = first + body[first..].find("\r\n\r\n").unwrap() + 4;
    stalled.stall = Duration::from_secs(300);
    let server = Server::start(vec![stalled, anthropic(&completion("done"))]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let web = json!([{"type": "http", "name": "web", "url": format!("http://127.0.0.1:{port}/mcp"), "headers": []}]);
    let web = web.to_string();
    let env = [
        ("ACP_PROMPT", "Look around."),
        ("ACP_WAIT_FOR", "first."),
        ("ACP_PROMPT2", "Say done."),
        ("ACP_MCP_AFTER", web.as_str()),
    ];
    let (seen, _) = run_client("interrupt", &env, &server, &root, state.path());
    let _ = py.kill();
    let _ = py.wait();
    assert_eq!(seen["first"]["stopReason"], "cancelled", "{seen}");
    assert_eq!(seen["second"]["stopReason"], "end_turn", "{seen}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let system = reqs[1].body["system"][0]["text"].as_str().unwrap();
    assert!(system.contains("## web\n\n### Available Tools\n- slow: "), "the server's tools are offered: {system}");
}

/// Loading a session that is open, with MCP servers the agent refuses, leaves the open session
/// as it was: it was closed first, and the editor lost it.
#[test]
fn a_refused_load_of_an_open_session_leaves_it_open() {
    let server = Server::start(vec![anthropic(&completion("one")), anthropic(&completion("two"))]);
    let (mut agent, root, _dirs) = Raw::fresh(&server);
    let session = agent.open_session(&root);
    agent.prompt(3, &session, "Say one.");
    assert_eq!(agent.until_answer(3).pop().unwrap()["result"]["stopReason"], "end_turn");
    let bad = json!([{"type": "http", "name": "x", "url": "ftp://example.com/mcp", "headers": []}]);
    let load = json!({"sessionId": session, "cwd": root, "mcpServers": bad});
    agent.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "session/load", "params": load}));
    let refused = agent.until_answer(4).pop().unwrap();
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    agent.prompt(5, &session, "Say two.");
    let answered = agent.until_answer(5).pop().unwrap();
    assert_eq!(answered["result"]["stopReason"], "end_turn", "{answered}");
    drop(agent.input.take());
    assert_eq!(wait_exit(&mut agent.child, LIMIT).code(), Some(0));
}

/// The editor's cancel during an MCP call over streamable HTTP tells the server
/// (`notifications/cancelled`), and the server's tool stops: the notification's curl was part
/// of the cancelled turn and was killed as it started, so the tool ran on.
#[test]
fn a_cancel_during_an_http_mcp_call_tells_the_server() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let pids = tempfile::tempdir().unwrap();
    let pidfile = pids.path().join("pids");
    let mut py = Command::new(crate::run_mcp::python())
        .args([crate::run_mcp::py_script(), "streamable-http".into(), port.to_string()])
        .env("PIDFILE", &pidfile)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the Python SDK server");
    crate::run_mcp::wait_for("the HTTP server", || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
    let call =
        tool("use_mcp_tool", &[("server_name", "web"), ("tool_name", "slow"), ("arguments", r#"{"seconds": 120}"#)]);
    let server = Server::start(vec![anthropic(&call), anthropic(&completion("done"))]);
    let (mut agent, root, _dirs) = Raw::fresh(&server);
    agent.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
    agent.until_answer(1);
    let web = json!([{"type": "http", "name": "web", "url": format!("http://127.0.0.1:{port}/mcp"), "headers": []}]);
    agent
        .send(&json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": root, "mcpServers": web}}));
    let answer = agent.until_answer(2).pop().unwrap();
    let session = answer["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{answer}")).to_string();
    agent.prompt(3, &session, "Call it.");
    let (asked, _) = agent.until_request("session/request_permission");
    let allow = asked["params"]["options"].as_array().unwrap().iter().find(|o| o["kind"] == "allow_once").unwrap();
    let outcome = json!({"outcome": "selected", "optionId": allow["optionId"]});
    agent.send(&json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"outcome": outcome}}));
    let calls = pids.path().join("pids.calls");
    let said = |word: &str| std::fs::read_to_string(&calls).is_ok_and(|c| c.contains(word));
    crate::run_mcp::wait_for("the slow tool to start", || said("slow"));
    agent.send(&json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}));
    let answered = agent.until_answer(3).pop().unwrap();
    assert_eq!(answered["result"]["stopReason"], "cancelled", "{answered}");
    crate::run_mcp::wait_for("the server's tool to be cancelled", || said("cancelled"));
    drop(agent.input.take());
    assert_eq!(wait_exit(&mut agent.child, LIMIT).code(), Some(0));
    let _ = py.kill();
    let _ = py.wait();
}

/// A call announced as its reply streamed, and never run because the turn was cancelled, is
/// resolved (failed) before the prompt is answered: the editor showed it pending for good.
#[test]
fn a_call_announced_but_not_run_is_failed_when_the_turn_ends() {
    let first = format!("I'll write it.\n{}", tool("write_to_file", &[("path", "a.txt"), ("content", "a")]));
    // The first delta holds the whole call; then the stream stalls until the client cancels.
    let mut stalled = anthropic_with(&format!("{first}\nAnd then more."), first.chars().count(), "end_turn");
    let body = String::from_utf8(stalled.body.clone()).unwrap();
    let delta = body.find("event: content_block_delta").unwrap();
    stalled.stall_at = delta + body[delta..].find("\r\n\r\n").unwrap() + 4;
    stalled.stall = Duration::from_secs(300);
    let server = Server::start(vec![stalled, anthropic(&completion("done"))]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let env = [("ACP_PROMPT", "Write a.txt."), ("ACP_WAIT_FOR", "Write a.txt"), ("ACP_PROMPT2", "Say done.")];
    let (seen, messages) = run_client("interrupt", &env, &server, &root, state.path());
    assert_eq!(seen["first"]["stopReason"], "cancelled", "{seen}");
    assert!(!root.join("a.txt").exists());
    // Before the cancelled prompt was answered.
    let first = updates_of(&messages, "session/prompt", 0);
    let call = first.iter().find(|u| u["sessionUpdate"] == "tool_call").expect("a tool_call");
    let resolved =
        first.iter().find(|u| u["sessionUpdate"] == "tool_call_update" && u["toolCallId"] == call["toolCallId"]);
    assert_eq!(resolved.map(|u| &u["status"]), Some(&json!("failed")), "{first:?}");
    let last = last_statuses(&messages);
    assert!(last.values().all(|s| s == "failed" || s == "completed"), "{last:?}");
}

/// A session that is not there is the protocol's "resource not found" (`-32002`, the session
/// id as data) in `session/prompt` and `session/load`; a `cwd` that is not a directory is
/// Invalid params. They were Invalid params and an Internal error.
#[test]
fn an_unknown_session_is_not_found_and_a_missing_cwd_is_invalid_params() {
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let file = root.join("file.txt");
    std::fs::write(&file, "").unwrap();
    let dir = state.path().join("tasks").display().to_string();
    let mut cmd = Command::new(bin());
    cmd.args(["acp", "--state-dir", &dir]).current_dir(&root);
    agent_env(&mut cmd, state.path()).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let text = json!([{"type": "text", "text": "hi"}]);
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": "nope", "prompt": text}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/load", "params": {"sessionId": "nope", "cwd": root, "mcpServers": []}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "session/new", "params": {"cwd": root.join("missing"), "mcpServers": []}}),
        json!({"jsonrpc": "2.0", "id": 5, "method": "session/new", "params": {"cwd": file, "mcpServers": []}}),
    ];
    let lines: String = requests.iter().map(|r| r.to_string() + "\n").collect();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), lines.as_bytes()).unwrap();
    let run = wait_limited(child, LIMIT);
    assert_eq!(run.code, Some(0), "{}", run.all());
    let answers: Vec<Value> = run.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let codes: Vec<(i64, i64)> =
        answers.iter().map(|a| (a["id"].as_i64().unwrap(), a["error"]["code"].as_i64().unwrap_or(0))).collect();
    assert_eq!(codes, [(1, 0), (2, -32002), (3, -32002), (4, -32602), (5, -32602)], "{answers:?}");
    assert_eq!(answers[1]["error"]["data"], json!({"sessionId": "nope"}), "{answers:?}");
    assert_eq!(answers[2]["error"]["data"], json!({"sessionId": "nope"}), "{answers:?}");
}

/// An editor's session guards what later runs trust as `run` does — here agent-min's config
/// directory, within the workspace: it guarded nothing, and a command planted MCP settings
/// there that every later run would start.
#[test]
fn a_session_guards_what_later_runs_trust_within_its_workspace() {
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    // The state and config directories inside the workspace (as a session in the home
    // directory has them).
    let state = root.join(".state");
    std::fs::create_dir(&state).unwrap();
    let cmd = "mkdir -p .state/config/agent-min && echo '{}' > .state/config/agent-min/mcp.json && echo PLANTED; \
               echo ok > inside.txt && echo INSIDE-OK";
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", cmd), ("requires_approval", "false")])),
        anthropic(&completion("done")),
    ]);
    let env = [("ACP_PROMPT", "t")];
    let (seen, _) = run_client_with("once", &env, &["--yolo"], &server, &root, &state);
    assert_eq!(seen["first"]["stopReason"], "end_turn", "{seen}");
    let told = server.requests()[1].last_user();
    assert!(told.contains("INSIDE-OK") && !told.lines().any(|l| l.starts_with("PLANTED")), "{told}");
    assert!(!state.join("config/agent-min/mcp.json").exists(), "planted");
}

/// `agent-min acp` spoken to line by line, as a faulty or departing client would: each line it
/// writes is read on a thread (a hung agent fails the test at LIMIT, not forever).
struct Raw {
    child: std::process::Child,
    input: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<Value>,
}

impl Raw {
    /// The agent, its model `server`, in the workspace `root`, its state in `state`.
    fn start(server: &Server, root: &Path, state: &Path) -> Raw {
        Raw::start_with(server, root, state, &[])
    }

    /// [`Raw::start`] with more options.
    fn start_with(server: &Server, root: &Path, state: &Path, more: &[&str]) -> Raw {
        use std::io::BufRead;
        let (url, tasks) = (server.anthropic_url(), state.join("tasks").display().to_string());
        let mut cmd = Command::new(bin());
        cmd.args(["acp", "--provider", "anthropic", "--base-url", &url, "--model", "claude-test"])
            .args(["--retry-delay", "0.05", "--state-dir", &tasks])
            .args(more)
            .current_dir(root);
        agent_env(&mut cmd, state).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        let mut child = cmd.spawn().unwrap();
        let input = child.stdin.take();
        let out = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                let msg = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
                let _ = tx.send(msg);
            }
        });
        Raw { child, input, lines }
    }

    /// The agent in a new workspace (its canonical root) with a new state directory, both kept
    /// as long as the caller holds the third value.
    fn fresh(server: &Server) -> (Raw, PathBuf, (tempfile::TempDir, tempfile::TempDir)) {
        let (ws, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let root = std::fs::canonicalize(ws.path()).unwrap();
        (Raw::start(server, &root, state.path()), root, (ws, state))
    }

    /// Writes one line.
    fn send(&mut self, msg: &Value) {
        let line = msg.to_string() + "\n";
        std::io::Write::write_all(self.input.as_mut().expect("the input is open"), line.as_bytes()).unwrap();
    }

    /// The next message the agent writes; `None` once its output has ended.
    fn next(&self) -> Option<Value> {
        match self.lines.recv_timeout(LIMIT) {
            Ok(m) => Some(m),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => None,
            Err(e) => panic!("the agent wrote nothing for {LIMIT:?}: {e}"),
        }
    }

    /// Every message until the agent's answer to the client's request `id` (included).
    fn until_answer(&self, id: u64) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let m = self.next().unwrap_or_else(|| panic!("request {id} was never answered: {seen:?}"));
            let answer = m["id"] == id && m.get("method").is_none();
            seen.push(m);
            if answer {
                return seen;
            }
        }
    }

    /// The next request of the agent's with this method, and the messages before it.
    fn until_request(&self, method: &str) -> (Value, Vec<Value>) {
        let mut seen = Vec::new();
        loop {
            let m = self.next().unwrap_or_else(|| panic!("no {method} came: {seen:?}"));
            if m["method"] == method && m.get("id").is_some() {
                return (m, seen);
            }
            seen.push(m);
        }
    }

    /// `initialize` and `session/new` in `root`: the session's id.
    fn open_session(&mut self, root: &Path) -> String {
        self.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}}));
        self.until_answer(1);
        self.new_session(2, root)
    }

    /// `session/new` in `root` as request `id`: the session's id.
    fn new_session(&mut self, id: u64, root: &Path) -> String {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "session/new", "params": {"cwd": root, "mcpServers": []}}),
        );
        let answer = self.until_answer(id).pop().unwrap();
        answer["result"]["sessionId"].as_str().unwrap_or_else(|| panic!("{answer}")).to_string()
    }

    /// Sends `session/prompt` with `text` as request `id`.
    fn prompt(&mut self, id: u64, session: &str, text: &str) {
        let prompt = json!([{"type": "text", "text": text}]);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": {"sessionId": session, "prompt": prompt}}));
    }
}

/// Under `--yolo` each session's commands are confined to its own workspace, whichever
/// session was opened last: a second session's ran under the first's policy, so they could
/// write the first project's `.git` (a hook that runs at its next commit) and not their own
/// workspace.
#[test]
fn each_sessions_commands_are_confined_to_its_own_workspace() {
    let (first, second, state) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, b) = (std::fs::canonicalize(first.path()).unwrap(), std::fs::canonicalize(second.path()).unwrap());
    // Each session's command: into the other's `.git`, and into its own workspace.
    let command = |own: &Path, other: &Path| {
        std::fs::create_dir_all(other.join(".git")).unwrap();
        let cmd =
            format!("touch '{}'; touch '{}'", other.join(".git/planted").display(), own.join("made.txt").display());
        anthropic(&tool("execute_command", &[("command", &cmd), ("requires_approval", "false")]))
    };
    let server = Server::start(vec![
        command(&b, &a),
        anthropic(&completion("done")),
        command(&a, &b),
        anthropic(&completion("done")),
    ]);
    let mut agent = Raw::start_with(&server, &a, state.path(), &["--yolo"]);
    let in_a = agent.open_session(&a);
    let in_b = agent.new_session(3, &b);
    for (id, session, own, other) in [(4, &in_b, &b, &a), (5, &in_a, &a, &b)] {
        agent.prompt(id, session, "Run it.");
        let answer = agent.until_answer(id).pop().unwrap();
        assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
        assert!(!other.join(".git/planted").exists(), "{session}: its command wrote the other workspace's .git");
        assert!(own.join("made.txt").exists(), "{session}: its command could not write its own workspace");
    }
}

/// A reply to a command that needs approval, and one after it.
fn a_command_to_approve() -> Vec<Resp> {
    vec![
        anthropic(&tool("execute_command", &[("command", "echo ran > ran.txt"), ("requires_approval", "true")])),
        anthropic(&completion("done")),
        anthropic(&completion("done again")),
    ]
}

/// A response to the agent's request with neither `result` nor `error` is a response (JSON-RPC
/// 2.0 §5: an id and no method): it fails the request it answers, as an error would — the
/// permission is not given — and is never answered. It was answered `-32600` with the client's
/// id (the same id as the agent's own request), and the request waited for good.
#[test]
fn a_response_with_neither_result_nor_error_fails_the_request_and_is_not_answered() {
    let server = Server::start(a_command_to_approve());
    let (mut agent, root, _dirs) = Raw::fresh(&server);
    let session = agent.open_session(&root);
    agent.prompt(3, &session, "Run the command.");
    let (asked, _) = agent.until_request("session/request_permission");
    agent.send(&json!({"jsonrpc": "2.0", "id": asked["id"]}));
    // (The agent's ids count from 0, the client's from 1: its answer to the prompt is no answer
    // to the response.)
    assert_ne!(asked["id"], 3);
    let mut after = Vec::new();
    loop {
        let m = agent.next().unwrap_or_else(|| panic!("the prompt was never answered: {after:?}"));
        let answers = |id: &Value| m.get("method").is_none() && &m["id"] == id;
        assert!(!answers(&asked["id"]), "the agent answered the client's response: {m}");
        let done = answers(&json!(3));
        after.push(m);
        if done {
            break;
        }
    }
    assert_eq!(after.last().unwrap()["result"]["stopReason"], "end_turn", "{after:?}");
    // Not allowed: the command did not run, and the model was told it was denied.
    assert!(!root.join("ran.txt").exists());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs[1].last_user().contains("The user denied this operation"), "{}", reqs[1].last_user());
    drop(agent.input.take());
    assert_eq!(wait_exit(&mut agent.child, LIMIT).code(), Some(0));
}

/// The editor closing the connection (the end of the agent's input) stops the turn as a cancel
/// does, and a prompt it sent before does not start: the agent exits at once. The pending
/// permission was taken as denied and the turn went on — making model requests, running what
/// needs no approval — and then the queued prompt ran as well.
#[test]
fn the_editor_closing_the_connection_stops_the_turn_and_no_queued_prompt_starts() {
    let server = Server::start(a_command_to_approve());
    let (mut agent, root, _dirs) = Raw::fresh(&server);
    let session = agent.open_session(&root);
    agent.prompt(3, &session, "Run the command.");
    agent.until_request("session/request_permission");
    // A second prompt waits behind the running one; then the editor goes.
    agent.prompt(4, &session, "Then say done.");
    drop(agent.input.take());
    assert_eq!(wait_exit(&mut agent.child, LIMIT).code(), Some(0));
    let mut said = Vec::new();
    while let Some(m) = agent.next() {
        said.push(m);
    }
    let stop = |id: u64| {
        let answer = said.iter().find(|m| m["id"] == id && m.get("method").is_none());
        answer.map(|a| a["result"]["stopReason"].clone()).unwrap_or_else(|| panic!("{id} not answered: {said:?}"))
    };
    assert_eq!((stop(3), stop(4)), (json!("cancelled"), json!("cancelled")), "{said:?}");
    assert!(!root.join("ran.txt").exists());
    assert_eq!(server.requests().len(), 1, "requests after the editor had gone");
}

/// `session/close` (advertised as `sessionCapabilities.close`) cancels the session's turn — its
/// pending permission request given up — and drops the session: its MCP server stops, and a
/// later prompt finds no session (`-32002`). The session can then be loaded; loading it again
/// while it is open replays its history again. Sessions were never closed: each kept its task
/// and its MCP servers until the process ended, and a load of an open one was refused.
#[test]
fn a_closed_session_stops_its_work_and_servers_and_can_be_loaded_again() {
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", "echo ran > ran.txt"), ("requires_approval", "true")])),
        anthropic(&completion("still here")),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    let (mcp, _) = slow_mcp_server(state.path());
    let pidfile = state.path().join("pids").display().to_string();
    let env = [
        ("ACP_MCP", mcp.as_str()),
        ("ACP_PIDFILE", pidfile.as_str()),
        ("ACP_ANSWER", "never"),
        ("ACP_PROMPT", "Run the command."),
        ("ACP_PROMPT2", "Are you still here?"),
    ];
    let (seen, messages) = run_client_failing("close", &env, &[], &["session/prompt"], &server, &root, state.path());
    assert_eq!(seen["initialize"]["agentCapabilities"]["sessionCapabilities"]["close"], json!({}), "{seen}");

    // The close cancelled the turn waiting for its permission, and stopped the MCP server.
    assert_eq!(seen["first"]["stopReason"], "cancelled", "{seen}");
    assert_eq!(seen["closed"], json!({}), "{seen}");
    assert_eq!((&seen["mcpAliveBeforeClose"], &seen["mcpAliveAfterClose"]), (&json!(true), &json!(false)), "{seen}");
    assert!(!root.join("ran.txt").exists());
    let id = seen["session"]["sessionId"].as_str().unwrap();
    assert_eq!(seen["afterClose"], json!({"code": -32002, "data": {"sessionId": id}}), "{seen}");

    // Loaded after the close, and again while open: the history both times.
    for n in 0..2 {
        let history = updates_of(&messages, "session/load", n);
        let words: Vec<&Value> = history
            .iter()
            .filter(|u| u["sessionUpdate"] == "user_message_chunk")
            .map(|u| &u["content"]["text"])
            .collect();
        assert_eq!(words, [&json!("Run the command.")], "load {n}: {history:?}");
    }
    assert_eq!(seen["second"]["stopReason"], "end_turn", "{seen}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{seen}");
    assert!(reqs[1].body["messages"][0].to_string().contains("Run the command."), "the conversation went on");
}
