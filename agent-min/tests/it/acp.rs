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
        "session/prompt" => ("PromptRequest", Some("PromptResponse")),
        "session/cancel" => ("CancelNotification", None),
        "session/update" => ("SessionNotification", None),
        "session/request_permission" => ("RequestPermissionRequest", Some("RequestPermissionResponse")),
        other => panic!("a method the scenario does not use: {other}"),
    }
}

/// Checks every line of the transcript: JSON-RPC 2.0, the sender's branch of the schema, and
/// the params or result of its method; returns the messages by sender.
fn validate(transcript: &str) -> Vec<(String, Value)> {
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
                assert!(msg.get("error").is_none(), "{from} answered {method} with an error: {msg}");
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

/// The updates of one prompt (between the client's marks).
fn updates_of<'a>(seen: &'a Value, prompt: &str) -> Vec<&'a Value> {
    let all = seen["updates"].as_array().unwrap();
    let start = all.iter().position(|u| u["mark"] == prompt).unwrap() + 1;
    all[start..].iter().take_while(|u| u.get("mark").is_none()).map(|u| &u["update"]).collect()
}

fn kinds<'a>(updates: &[&'a Value]) -> Vec<&'a str> {
    updates.iter().map(|u| u["sessionUpdate"].as_str().unwrap()).collect()
}

#[test]
fn an_editor_grants_rejects_and_cancels_over_acp_with_the_official_sdk() {
    let sdk = sdk();
    let server = Server::start(vec![
        // Prompt 1: an edit, approved; then done.
        anthropic(&format!(
            "I'll write it.\n{}",
            tool("write_to_file", &[("path", "hello.txt"), ("content", "Hello from ACP")])
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
    let state = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let transcript = state.path().join("transcript.ndjson");
    let (url, tasks) = (server.anthropic_url(), state.path().join("tasks").display().to_string());
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
        .arg(&root)
        .arg(bin())
        .arg("acp")
        .args(agent_args)
        .current_dir(ws.path())
        .env("XDG_STATE_HOME", state.path())
        .env("XDG_CONFIG_HOME", state.path().join("config"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_BASE_URL")
        .env("ANTHROPIC_API_KEY", KEY)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().expect("node");
    let run = wait_limited(child, LIMIT);
    assert_eq!(run.code, Some(0), "the client failed:\n{}", run.all());
    let seen: Value = serde_json::from_str(run.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {}", run.all()));
    assert_eq!(seen["exit"]["code"], 0, "agent-min acp did not exit cleanly: {}", run.all());

    // Every message, both ways, follows the ACP v1 schema.
    let messages = validate(&std::fs::read_to_string(&transcript).unwrap());
    assert!(messages.iter().any(|(from, m)| from == "agent" && m["method"] == "session/request_permission"));

    assert_eq!(seen["initialize"]["protocolVersion"], 1);
    assert_eq!(seen["initialize"]["agentCapabilities"]["loadSession"], false);

    // 1: granted — the file is written; tool_call (an edit, its path, its diff), its updates and
    // the reply's text were streamed; the turn ended.
    assert_eq!(seen["first"]["stopReason"], "end_turn", "{seen}");
    assert_eq!(std::fs::read_to_string(root.join("hello.txt")).unwrap(), "Hello from ACP");
    let first = updates_of(&seen, "prompt 1");
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
    let asked = &seen["permissions"][0];
    assert_eq!(asked["toolCall"]["toolCallId"], *id);
    let options: Vec<&str> = asked["options"].as_array().unwrap().iter().map(|o| o["kind"].as_str().unwrap()).collect();
    assert_eq!(options, ["allow_once", "allow_always", "reject_once", "reject_always"]);

    // 2: the same conversation, rejected — nothing written, the call failed, the model told.
    assert_eq!(seen["second"]["stopReason"], "end_turn", "{seen}");
    assert!(!root.join("other.txt").exists());
    let second = updates_of(&seen, "prompt 2");
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
    assert_eq!(server.requests().len(), 5);
}
