//! MCP end to end, with real servers nobody here wrote: `@modelcontextprotocol/server-everything`
//! and `server-filesystem` from npm, and `tests/mcp/py_server.py` on the official Python SDK
//! (stdio and streamable HTTP). `agent-min/tests/mcp/install.sh` installs them (pinned, cached in
//! target/mcp-servers); the first test to need them runs it, and if it fails every test here
//! fails with its output.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};

const LIMIT: Duration = Duration::from_secs(90);

/// The installed servers: `install.sh` (pinned versions, cached; a no-op once installed) runs
/// once per test run, so `cargo test` works on a fresh machine; a failed install fails every
/// test here loudly, with the script's output.
fn servers() -> PathBuf {
    static INSTALLED: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    let installed = INSTALLED.get_or_init(|| {
        let dir = std::env::var_os("AGENT_MIN_MCP_SERVERS")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/mcp-servers"));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/install.sh");
        let out = Command::new("bash")
            .arg(&script)
            .env("AGENT_MIN_MCP_SERVERS", &dir)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        if !out.status.success() || !dir.join(".installed").is_file() {
            return Err(format!(
                "the MCP test servers could not be installed in {} by {} (needs node, npm and python3, and the npm and PyPI registries):\n{said}",
                dir.display(),
                script.display()
            ));
        }
        Ok(dir)
    });
    match installed {
        Ok(dir) => dir.clone(),
        Err(e) => panic!("{e}"),
    }
}

pub(crate) fn node_server(name: &str) -> String {
    let js = servers().join(format!("node/node_modules/@modelcontextprotocol/{name}/dist/index.js"));
    assert!(js.is_file(), "{} missing; run agent-min/tests/mcp/install.sh", js.display());
    js.display().to_string()
}

pub(crate) fn python() -> String {
    servers().join("venv/bin/python").display().to_string()
}

pub(crate) fn py_script() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/py_server.py").display().to_string()
}

/// Writes `{"mcpServers": servers}` to `dir/mcp.json`.
fn settings(dir: &Path, servers: Value) -> String {
    let f = dir.join("mcp.json");
    std::fs::write(&f, json!({ "mcpServers": servers }).to_string()).unwrap();
    f.display().to_string()
}

fn use_mcp(server: &str, tool_name: &str, args: &str) -> String {
    tool("use_mcp_tool", &[("server_name", server), ("tool_name", tool_name), ("arguments", args)])
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
        .unwrap_or(false)
}

fn pids(file: &Path) -> Vec<i32> {
    std::fs::read_to_string(file).unwrap_or_default().lines().filter_map(|l| l.trim().parse().ok()).collect()
}

pub(crate) fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < Duration::from_secs(15), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A raw JSON-RPC MCP server on stdio (Python's standard library alone, quick to start on a
/// loaded machine), for what no SDK server does: written to `dir/NAME.py`, answering
/// `initialize` with `CAPS` (and `VERSION` if `body` sets one, else the version asked for) and
/// every other request with `answer(method, params)`, or an error if that raises `Refuse`.
/// Returns its settings entry.
fn raw_server(dir: &Path, name: &str, body: &str) -> Value {
    let script = dir.join(format!("{name}.py"));
    let prelude = r#"import json, sys, time
start = time.monotonic()
class Refuse(Exception):
    pass
VERSION = None
NOTIFIED = []
"#;
    let lp = r#"
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        NOTIFIED.append(m["method"])
        continue
    if m["method"] == "initialize":
        info = {"name": "raw", "version": "1"}
        out = {"result": {"protocolVersion": VERSION or m["params"]["protocolVersion"], "capabilities": CAPS, "serverInfo": info}}
    else:
        try:
            out = {"result": answer(m["method"], m.get("params") or {})}
        except Refuse as e:
            out = {"error": {"code": -32603, "message": str(e)}}
    out.update(jsonrpc="2.0", id=m["id"])
    print(json.dumps(out), flush=True)
"#;
    std::fs::write(&script, format!("{prelude}{body}{lp}")).unwrap();
    json!({"command": "python3", "args": [script.display().to_string()]})
}

#[test]
fn a_scripted_model_calls_real_servers_and_gets_their_real_answers() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "filesystem says hello\n").unwrap();
    let cfg_dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap().display().to_string();
    let cfg = settings(
        cfg_dir.path(),
        json!({
            // A key the settings write out is the person's own: the server gets it, as in Cline.
            "everything": {"command": "node", "args": [node_server("server-everything"), "stdio"],
                           "env": {"OPENAI_API_KEY": "sk-the-servers-own"}},
            "fs": {"command": "node", "args": [node_server("server-filesystem"), &root], "autoApprove": ["read_text_file"]},
        }),
    );
    let notes = format!("{root}/notes.txt");
    let server = Server::start(vec![
        anthropic(&use_mcp("everything", "echo", r#"{"message": "hi from the model"}"#)),
        anthropic(&use_mcp("everything", "get-sum", r#"{"a": 2, "b": 40}"#)),
        anthropic(&use_mcp("everything", "get-sum", r#"{"a": "two"}"#)),
        anthropic(&use_mcp("everything", "echo", "{not json")),
        anthropic(&use_mcp("everything", "get-env", "{}")),
        anthropic(&tool(
            "access_mcp_resource",
            &[("server_name", "everything"), ("uri", "demo://resource/dynamic/text/7")],
        )),
        anthropic(&use_mcp("fs", "read_text_file", &json!({ "path": notes }).to_string())),
        anthropic(&use_mcp("nosuch", "echo", "{}")),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--mcp-config", &cfg, "--json", "use the servers"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 9, "{}", r.all());

    // The prompt lists the connected servers the way Cline does.
    let system = reqs[0].body["system"][0]["text"].as_str().unwrap();
    assert!(system.contains("## use_mcp_tool\nDescription: Request to use a tool provided by a connected MCP server."));
    assert!(system.contains("# Connected MCP Servers\n\nWhen a server is connected, you can use the server's tools via the `use_mcp_tool` tool"));
    assert!(system.contains(&format!("## everything (`node {} stdio`)\n\n### Available Tools\n- echo: Echoes back the input string\n    Input Schema:\n    {{", node_server("server-everything"))), "{system}");
    assert!(system
        .contains("### Resource Templates\n- demo://resource/dynamic/text/{resourceId} (Dynamic Text Resource): "));
    assert!(
        system.contains("### Direct Resources\n- demo://resource/static/document/architecture.md (architecture.md)")
    );
    assert!(system.contains("### Available Prompts\n- simple-prompt (Simple Prompt): A prompt with no arguments\n- args-prompt (Arguments Prompt): A prompt with two arguments, one required and one optional\n    Arguments: city (required): Name of the city, state\n"), "{system}");
    assert!(system.find("# Connected MCP Servers").unwrap() < system.find("RULES\n").unwrap());

    // Each real answer is in the next request.
    let r1 = common::without_reminder(&reqs[1].last_user());
    assert!(
        r1.starts_with("[use_mcp_tool for 'everything'] Result:\nEcho: hi from the model\n\n<environment_details>"),
        "{r1}"
    );
    let r2 = reqs[2].last_user();
    assert!(r2.starts_with("[use_mcp_tool for 'everything'] Result:\nThe sum of 2 and 40 is 42."), "{r2}");
    let r3 = reqs[3].last_user();
    assert!(r3.starts_with("[use_mcp_tool for 'everything'] Result:\nError:\n"), "isError is reported: {r3}");
    assert!(r3.contains("-32602") || r3.to_lowercase().contains("invalid"), "{r3}");
    let r4 = reqs[4].last_user();
    assert!(r4.contains("The tool execution failed with the following error:\n<error>\nInvalid JSON argument used with everything for echo. Please retry with a properly formatted JSON argument.\n</error>"), "{r4}");
    let r5 = reqs[5].last_user();
    assert!(r5.contains("\"PATH\""), "get-env shows the server's environment: {r5}");
    assert!(!r5.contains(KEY) && !r5.contains("ANTHROPIC_API_KEY"), "the API key reached an MCP server: {r5}");
    assert!(r5.contains("sk-the-servers-own"), "the server's own key from its settings: {r5}");
    let r6 = reqs[6].last_user();
    assert!(
        r6.starts_with("[access_mcp_resource for 'everything'] Result:\nResource 7: This is a plaintext resource"),
        "{r6}"
    );
    let r7 = reqs[7].last_user();
    assert!(r7.starts_with("[use_mcp_tool for 'fs'] Result:\nfilesystem says hello"), "{r7}");
    let r8 = reqs[8].last_user();
    assert!(r8.starts_with("[use_mcp_tool for 'nosuch'] Result:\nError executing MCP tool: No connection found for server: nosuch. Please make sure to use MCP servers available under 'Connected MCP Servers'."), "{r8}");

    // --json: the servers' start and stop, and each call.
    let events = common::events::parse(&r.stdout);
    let of = |ty: &str| events.iter().filter(|e| e["type"] == ty).cloned().collect::<Vec<_>>();
    let servers = of("mcp_server");
    assert_eq!(events[0]["type"], "task_started", "task_started is still the first event");
    assert_eq!((events[1]["type"].as_str(), events[2]["type"].as_str()), (Some("mcp_server"), Some("mcp_server")));
    assert!(
        servers.iter().any(|e| e["server"] == "everything"
            && e["event"] == "started"
            && e["state"] == "connected"
            && e["tools"].as_u64() > Some(5)),
        "{servers:?}"
    );
    assert!(servers.iter().any(|e| e["server"] == "fs" && e["event"] == "stopped"), "{servers:?}");
    // Exactly the fields docs/agent.md documents.
    let keys = |e: &Value| {
        let mut k: Vec<String> = e.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k.join(",")
    };
    for e in &servers {
        assert_eq!(keys(e), "error,event,resources,server,state,task_id,tools,ts,type,version", "{e}");
        assert!(e["task_id"].as_str().is_some_and(|t| !t.is_empty()), "{e}");
    }
    for e in of("mcp_call") {
        let what = if e.get("uri").is_some() { "uri" } else { "tool" };
        assert_eq!(
            keys(&e).split(',').filter(|k| *k != what).collect::<Vec<_>>().join(","),
            "call_id,duration_ms,error,ok,server,task_id,ts,type,version",
            "{e}"
        );
    }
    let calls = of("mcp_call");
    assert_eq!(calls.len(), 7, "{calls:?}"); // the invalid-JSON call never reached a server
    assert_eq!(calls[0]["tool"], "echo");
    assert_eq!(calls[0]["ok"], true);
    assert_eq!(calls[1]["ok"], true);
    assert_eq!(calls[2]["ok"], false, "isError");
    assert_eq!(calls[4]["uri"], "demo://resource/dynamic/text/7");
    let approvals = of("approval");
    assert!(
        approvals.iter().any(|a| a["tool"] == "use_mcp_tool" && a["by"] == "auto"),
        "fs read_text_file is in autoApprove: {approvals:?}"
    );
    assert!(approvals.iter().any(|a| a["tool"] == "use_mcp_tool" && a["by"] == "yolo"));
}

/// Writes the executable hook `ws/.clinerules/hooks/NAME`: it appends its input to `log` (a line
/// each) and prints `answer`.
fn mcp_hook(ws: &Path, name: &str, log: &Path, answer: &str) {
    use std::os::unix::fs::PermissionsExt;
    let dir = ws.join(".clinerules/hooks");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(
        &p,
        format!("#!/bin/sh\ninput=$(cat)\nprintf '%s\\n' \"$input\" >> '{}'\n{answer}\n", log.display()),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn tool_hooks_see_mcp_calls_and_a_pre_tool_use_hook_can_block_one() {
    // As Cline's UseMcpToolHandler and AccessMcpResourceHandler run PreToolUse (and its
    // ToolExecutor PostToolUse): a hook guarding a server's tools is not bypassed.
    let ws = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (pre_log, post_log) = (out.path().join("pre.jsonl"), out.path().join("post.jsonl"));
    let block = r#"case "$input" in *'"tool_name":"get-env"'*) echo '{"cancel": true, "errorMessage": "get-env is not allowed"}';; *) echo '{"contextModification": "checked"}';; esac"#;
    mcp_hook(ws.path(), "PreToolUse", &pre_log, block);
    mcp_hook(ws.path(), "PostToolUse", &post_log, "echo '{}'");
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = settings(
        cfg_dir.path(),
        json!({"everything": {"command": "node", "args": [node_server("server-everything"), "stdio"]}}),
    );
    let server = Server::start(vec![
        anthropic(&use_mcp("everything", "echo", r#"{"message": "hi"}"#)),
        anthropic(&tool(
            "access_mcp_resource",
            &[("server_name", "everything"), ("uri", "demo://resource/dynamic/text/3")],
        )),
        anthropic(&use_mcp("everything", "get-env", "{}")),
    ]);
    let base = anthropic_args(&server);
    let args = args_with(&base, &["--mcp-config", &cfg, "--trust-workspace", "--json", "use the server"]);
    let r = run_agent(ws.path(), &args, &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(r.stderr.contains("the PreToolUse hook cancelled the task: get-env is not allowed"), "{}", r.stderr);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "{}", r.all());
    let r1 = reqs[1].last_user();
    assert!(
        r1.starts_with("<hook_context source=\"PreToolUse\" type=\"general\">\nchecked\n</hook_context>\n\n[use_mcp_tool for 'everything'] Result:\nEcho: hi"),
        "{r1}"
    );
    let read = |p: &Path| -> Vec<Value> {
        std::fs::read_to_string(p).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    let pre = read(&pre_log);
    assert_eq!(pre.len(), 3, "{pre:?}");
    assert_eq!(
        pre[0]["preToolUse"],
        json!({"toolName": "use_mcp_tool", "parameters": {"server_name": "everything", "tool_name": "echo", "arguments": "{\"message\": \"hi\"}"}})
    );
    assert_eq!(
        pre[1]["preToolUse"],
        json!({"toolName": "access_mcp_resource", "parameters": {"server_name": "everything", "uri": "demo://resource/dynamic/text/3"}})
    );
    assert_eq!(pre[2]["preToolUse"]["parameters"]["tool_name"], "get-env");
    let post = read(&post_log);
    assert_eq!(post.len(), 2, "the blocked call never ran: {post:?}");
    assert_eq!(post[0]["postToolUse"]["toolName"], "use_mcp_tool");
    assert_eq!(post[0]["postToolUse"]["result"], "Echo: hi");
    assert_eq!(post[1]["postToolUse"]["toolName"], "access_mcp_resource");
    let events = common::events::parse(&r.stdout);
    let calls: Vec<&Value> = events.iter().filter(|e| e["type"] == "mcp_call").collect();
    assert_eq!(calls.len(), 2, "get-env never reached the server: {calls:?}");
}

#[test]
fn a_slash_command_names_an_mcp_prompt_and_its_messages_go_before_the_task() {
    // Cline's `/mcp:SERVER:PROMPT`: prompts/get, its messages in an <mcp_prompt> block before
    // the message, the command out of the words; one that cannot be read stays as written.
    let ws = tempfile::tempdir().unwrap();
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = settings(
        cfg_dir.path(),
        json!({"everything": {"command": "node", "args": [node_server("server-everything"), "stdio"]}}),
    );
    let server = Server::start(vec![anthropic(&completion("done")), anthropic(&completion("done"))]);
    let base = anthropic_args(&server);
    let run =
        |task: &str| run_agent(ws.path(), &args_with(&base, &["--mcp-config", &cfg, "--no-save", task]), &[], LIMIT);
    let r = run("please /mcp:everything:simple-prompt now");
    assert_eq!(r.code, Some(0), "{}", r.all());
    let r2 = run("/mcp:everything:args-prompt");
    assert_eq!(r2.code, Some(0), "{}", r2.all());
    let reqs = server.requests();
    let first = reqs[0].body["messages"][0]["content"][0]["text"].as_str().unwrap().to_string();
    assert!(
        first.starts_with("<mcp_prompt server=\"everything\" prompt=\"simple-prompt\">\n[User]\nThis is a simple prompt without arguments.\n</mcp_prompt>\n<task>\nplease  now\n</task>"),
        "{first}"
    );
    // args-prompt needs an argument Cline never sends: the server refuses, the text stays.
    assert!(
        r2.stderr.contains("/mcp:everything:args-prompt: the MCP prompt could not be read: MCP error"),
        "{}",
        r2.stderr
    );
    let second = reqs[1].body["messages"][0]["content"][0]["text"].as_str().unwrap().to_string();
    assert!(second.starts_with("<task>\n/mcp:everything:args-prompt\n</task>"), "{second}");
}

#[test]
fn python_sdk_server_timeout_garbage_crash_restart_once_and_pagination() {
    let ws = tempfile::tempdir().unwrap();
    let cfg_dir = tempfile::tempdir().unwrap();
    let pidfile = cfg_dir.path().join("pids");
    let cfg = settings(
        cfg_dir.path(),
        json!({"py": {"command": python(), "args": [py_script()], "timeout": 3,
                      "env": {"PIDFILE": pidfile.display().to_string()}}}),
    );
    let server = Server::start(vec![
        anthropic(&use_mcp("py", "zz_last_page", r#"{"x": 7}"#)),
        anthropic(&use_mcp("py", "slow", r#"{"seconds": 30}"#)),
        anthropic(&use_mcp("py", "garbage", "{}")),
        anthropic(&use_mcp("py", "fail", "{}")),
        anthropic(&use_mcp("py", "crash", "{}")),
        anthropic(&use_mcp("py", "zz_last_page", r#"{"x": 8}"#)),
        anthropic(&use_mcp("py", "crash", "{}")),
        anthropic(&use_mcp("py", "zz_last_page", r#"{"x": 9}"#)),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let start = Instant::now();
    let r = run_agent(ws.path(), &args_with(&base, &["--mcp-config", &cfg, "test the server"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 9, "{}", r.all());

    // Pagination: tools/list returns two tools a page; the last page's tool is listed and callable.
    let system = reqs[0].body["system"][0]["text"].as_str().unwrap();
    // `log` is alone on the last page: reading every page is what lists it.
    for t in ["- slow: ", "- crash: ", "- garbage: ", "- fail: ", "- zz_last_page: Only on a later page", "- log: "] {
        assert!(system.contains(t), "{t} missing from the prompt");
    }
    assert!(reqs[1].last_user().starts_with("[use_mcp_tool for 'py'] Result:\nlast page 7"), "{}", reqs[1].last_user());
    // The slow tool hits the 3 s timeout from the settings.
    let r2 = reqs[2].last_user();
    assert!(
        r2.starts_with(
            "[use_mcp_tool for 'py'] Result:\nError executing MCP tool: MCP error -32001: Request timed out"
        ),
        "{r2}"
    );
    // Garbage on stdout is skipped; the answer that follows arrives.
    assert!(
        reqs[3].last_user().starts_with("[use_mcp_tool for 'py'] Result:\nanswered after garbage"),
        "{}",
        reqs[3].last_user()
    );
    assert!(
        r.stderr
            .contains("MCP server \"py\" printed 3 lines on stdout that are not JSON-RPC messages; they were ignored."),
        "{}",
        r.stderr
    );
    let r4 = reqs[4].last_user();
    assert!(
        r4.starts_with("[use_mcp_tool for 'py'] Result:\nError:\n") && r4.contains("the tool failed on purpose"),
        "{r4}"
    );
    // A crash mid-call: Connection closed, the server's stderr, and a restart.
    let r5 = reqs[5].last_user();
    assert!(r5.starts_with("[use_mcp_tool for 'py'] Result:\nError executing MCP tool: MCP error -32000: Connection closed\n\nThe MCP server \"py\" stopped during the call"), "{r5}");
    assert!(r5.contains("crashing on purpose") && r5.contains("It has been restarted"), "{r5}");
    assert!(
        reqs[6].last_user().starts_with("[use_mcp_tool for 'py'] Result:\nlast page 8"),
        "the restarted server answers: {}",
        reqs[6].last_user()
    );
    // A second crash: not restarted again.
    let r7 = reqs[7].last_user();
    assert!(r7.contains("It was already restarted once in this task, so it is not restarted again"), "{r7}");
    let r8 = reqs[8].last_user();
    assert!(r8.contains("Error executing MCP tool: Server \"py\" is not connected: stopped again"), "{r8}");
    assert!(start.elapsed() < Duration::from_secs(60));

    // Both server processes (the first and the restarted one) are gone.
    let started = pids(&pidfile);
    assert_eq!(started.len(), 2, "{started:?}");
    for p in started {
        wait_for("the server to be gone", || !alive(p));
    }
}

#[test]
fn a_tools_list_changed_notification_updates_the_next_prompt() {
    let ws = tempfile::tempdir().unwrap();
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = settings(cfg_dir.path(), json!({"py": {"command": python(), "args": [py_script()]}}));
    let server = Server::start(vec![
        anthropic(&use_mcp("py", "grow", "{}")),
        anthropic(&use_mcp("py", "grown", "{}")),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--mcp-config", &cfg, "grow"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    let grown = "- grown: Appeared after list_changed.";
    assert!(!reqs[0].body["system"][0]["text"].as_str().unwrap().contains(grown));
    assert!(reqs[1].last_user().starts_with("[use_mcp_tool for 'py'] Result:\ngrew"), "{}", reqs[1].last_user());
    assert!(reqs[1].body["system"][0]["text"].as_str().unwrap().contains(grown), "the new tool is in the next prompt");
    assert!(reqs[2].last_user().starts_with("[use_mcp_tool for 'py'] Result:\ngrown"), "{}", reqs[2].last_user());
}

#[test]
fn a_workspace_approval_is_remembered_until_the_file_changes() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join(".cline")).unwrap();
    let file = ws.path().join(".cline/mcp.json");
    let write = |name: &str| {
        let s = json!({"mcpServers": {name: {"command": "node", "args": [node_server("server-everything"), "stdio"]}}});
        std::fs::write(&file, s.to_string()).unwrap();
    };
    write("repo");
    let cwd = ws.path().display().to_string();
    let list = |input: &[u8]| {
        let mut cmd = Command::new(setsid());
        cmd.arg(bin())
            .args(["mcp", "list", "--cwd", &cwd])
            .env("XDG_CONFIG_HOME", home.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        type_answers(cmd, input, LIMIT)
    };
    let r = list(b"y\n");
    assert!(r.stdout.contains("repo [connected]"), "approved: {}", r.all());
    let r = list(b"");
    assert!(r.stdout.contains("repo [connected]"), "remembered, nobody asked: {}", r.all());
    assert!(!r.stderr.contains("approve?"), "{}", r.stderr);
    write("changed");
    let r = list(b"");
    assert!(
        r.stderr.contains("approve?") && r.stderr.contains("were not started"),
        "a changed file asks again: {}",
        r.all()
    );
    assert!(!r.stdout.contains("[connected]"));
}

/// A run against the Python SDK server over HTTP (`mode`: `streamable-http` with SSE or
/// `streamable-http-json` with JSON answers, or the older HTTP+SSE transport, `sse`): a
/// paginated list, a call, a call that times out — the server told so, and its tool stopped —
/// and a call after it on the same session.
fn http_run(mode: &str) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let pids = tempfile::tempdir().unwrap();
    let mut py = py_server(mode, port, Some(&pids.path().join("pids")));
    let ws = tempfile::tempdir().unwrap();
    let cfg_dir = tempfile::tempdir().unwrap();
    // SSE as a Cline user writes it most often: a `url` and no type, which Cline takes for SSE.
    let web = match mode {
        "sse" => json!({"url": format!("http://127.0.0.1:{port}/sse"), "timeout": 3}),
        _ => json!({"type": "streamableHttp", "url": format!("http://127.0.0.1:{port}/mcp"), "timeout": 3}),
    };
    let cfg = settings(cfg_dir.path(), json!({ "web": web }));
    let server = Server::start(vec![
        anthropic(&use_mcp("web", "zz_last_page", r#"{"x": 3}"#)),
        anthropic(&use_mcp("web", "slow", r#"{"seconds": 30}"#)),
        anthropic(&use_mcp("web", "zz_last_page", r#"{"x": 4}"#)),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--mcp-config", &cfg, "--json", "over http"]), &[], LIMIT);
    let _ = py.kill();
    let _ = py.wait();
    assert_eq!(r.code, Some(0), "{mode}: {}", r.all());
    let reqs = server.requests();
    assert!(
        reqs[0].body["system"][0]["text"].as_str().unwrap().contains("## web\n\n### Available Tools\n- slow: "),
        "{mode}"
    );
    let r1 = reqs[1].last_user();
    assert!(r1.starts_with("[use_mcp_tool for 'web'] Result:\nlast page 3"), "{mode}: {r1}");
    let r2 = reqs[2].last_user();
    assert!(
        r2.starts_with(
            "[use_mcp_tool for 'web'] Result:\nError executing MCP tool: MCP error -32001: Request timed out"
        ),
        "{mode}: {r2}"
    );
    // The server got `notifications/cancelled`: its tool stopped (over streamable HTTP the
    // request was given up without telling it, and the tool ran on).
    let calls = pids.path().join("pids.calls");
    wait_for("the slow tool's cancel", || std::fs::read_to_string(&calls).is_ok_and(|c| c.contains("cancelled")));
    // The session outlives a timed-out request (its late answer, if any, is ignored).
    let r3 = reqs[3].last_user();
    assert!(r3.starts_with("[use_mcp_tool for 'web'] Result:\nlast page 4"), "{mode}: {r3}");
    let events = common::events::parse(&r.stdout);
    let started: Vec<&Value> = events.iter().filter(|e| e["type"] == "mcp_server" && e["event"] == "started").collect();
    assert_eq!(started.len(), 1, "one connection, never restarted: {started:?}");
}

#[test]
fn streamable_http_server_with_sse_answers_through_curl() {
    http_run("streamable-http");
}

#[test]
fn streamable_http_server_with_json_answers_through_curl() {
    http_run("streamable-http-json");
}

/// A URL the server redirects (the Python SDK's server sends `/mcp/` to `/mcp` with a 307) is
/// followed at the same origin, as Cline's `fetch` follows it: the tool is listed and called.
#[test]
fn a_streamable_http_server_that_redirects_its_url_is_followed() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut py = py_server("streamable-http", port, None);
    let ws = tempfile::tempdir().unwrap();
    let cfg_dir = tempfile::tempdir().unwrap();
    let web = json!({"type": "streamableHttp", "url": format!("http://127.0.0.1:{port}/mcp/")});
    let cfg = settings(cfg_dir.path(), json!({ "web": web }));
    let server =
        Server::start(vec![anthropic(&use_mcp("web", "zz_last_page", r#"{"x": 3}"#)), anthropic(&completion("done"))]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--mcp-config", &cfg, "--no-save", "t"]), &[], LIMIT);
    let _ = py.kill();
    let _ = py.wait();
    assert_eq!(r.code, Some(0), "{}", r.all());
    let r1 = server.requests()[1].last_user();
    assert!(r1.starts_with("[use_mcp_tool for 'web'] Result:\nlast page 3"), "{r1}\n{}", r.all());
}

#[test]
fn an_sse_server_a_url_without_type_is_reached_through_curl() {
    http_run("sse");
}

/// The Python SDK server in `mode` on `port`, listening; recording its tools' processes in
/// `pidfile`, if given.
fn py_server(mode: &str, port: u16, pidfile: Option<&Path>) -> std::process::Child {
    let mut cmd = Command::new(python());
    cmd.args([py_script(), mode.into(), port.to_string()]).stdout(Stdio::null()).stderr(Stdio::null());
    if let Some(f) = pidfile {
        cmd.env("PIDFILE", f);
    }
    let py = cmd.spawn().expect("start the Python SDK server");
    wait_for("the Python SDK server", || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
    py
}

/// A server restarted between two calls (a redeploy) no longer knows the session: over SSE its
/// stream has ended, over streamable HTTP it answers the old `Mcp-Session-Id` with a 404. The
/// request was not processed, so a new session is made and it goes again — the
/// specification's "MUST start a new session" — without counting as a crash: twice in a task,
/// and the server is still there (it was lost for the task at the second, its one restart used).
fn a_server_restarted_between_calls_gets_a_new_session(mode: &str) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut py = py_server(mode, port, None);
    let ws = tempfile::tempdir().unwrap();
    let cfg_dir = tempfile::tempdir().unwrap();
    let web = match mode {
        "sse" => json!({"url": format!("http://127.0.0.1:{port}/sse")}),
        _ => json!({"type": "streamableHttp", "url": format!("http://127.0.0.1:{port}/mcp")}),
    };
    let cfg = settings(cfg_dir.path(), json!({ "web": web }));
    let (second, gate2) = gated(anthropic(&use_mcp("web", "zz_last_page", r#"{"x": 4}"#)));
    let (third, gate3) = gated(anthropic(&use_mcp("web", "zz_last_page", r#"{"x": 5}"#)));
    let server = Server::start(vec![
        anthropic(&use_mcp("web", "zz_last_page", r#"{"x": 3}"#)),
        second,
        third,
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let state = tempfile::tempdir().unwrap();
    let args = args_with(&base, &["--mcp-config", &cfg, "--json", "--no-save", "over http"]);
    let child = agent_cmd("run", ws.path(), &args, &[], state.path()).stdin(Stdio::null()).spawn().unwrap();
    // While the model's next answer is held: the server restarts (a new process, no sessions).
    for (n, gate) in [(2, gate2), (3, gate3)] {
        server.wait_for_requests(n, LIMIT);
        let _ = py.kill();
        let _ = py.wait();
        py = py_server(mode, port, None);
        gate.open();
    }
    let r = wait_limited(child, LIMIT);
    let _ = py.kill();
    let _ = py.wait();
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    for (n, page) in [(1, 3), (2, 4), (3, 5)] {
        let said = reqs[n].last_user();
        assert!(said.starts_with(&format!("[use_mcp_tool for 'web'] Result:\nlast page {page}")), "{mode}: {said}");
    }
    let events = common::events::parse(&r.stdout);
    let kinds: Vec<&str> =
        events.iter().filter(|e| e["type"] == "mcp_server").map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["started", "stopped"], "{mode}: {kinds:?}");
}

#[test]
fn an_sse_server_restarted_between_calls_gets_a_new_session() {
    a_server_restarted_between_calls_gets_a_new_session("sse");
}

#[test]
fn a_streamable_http_server_restarted_between_calls_gets_a_new_session() {
    a_server_restarted_between_calls_gets_a_new_session("streamable-http");
}

#[test]
fn an_sse_stream_that_never_answers_leaves_no_curl_behind() {
    // A server that takes the connection and never sends headers: the start gives up at its
    // timeout and the stream's curl is killed then, not at the end of the run.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = std::thread::spawn(move || listener.accept().map(|(s, _)| s));
    let ws = tempfile::tempdir().unwrap();
    let cfg_dir = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{port}/sse");
    let cfg = settings(cfg_dir.path(), json!({"mute": {"url": url, "startupTimeout": 1}}));
    let (reply, gate) = gated(anthropic(&completion("done")));
    let server = Server::start(vec![reply]);
    let base = anthropic_args(&server);
    let state = tempfile::tempdir().unwrap();
    let args = args_with(&base, &["--mcp-config", &cfg, "--no-save", "t"]);
    let child = agent_cmd("run", ws.path(), &args, &[], state.path()).stdin(Stdio::null()).spawn().unwrap();
    // The model is asked once the servers are settled: the mute one has failed by then.
    server.wait_for_requests(1, LIMIT);
    let _socket = held.join().unwrap().unwrap();
    let curls = || -> usize {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .filter(|c| c.split(|b| *b == 0).any(|a| a == url.as_bytes()))
            .count()
    };
    wait_for("the stream's curl to be gone", || curls() == 0);
    gate.open();
    let r = wait_limited(child, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
}

#[test]
fn mcp_list_shows_states_tools_and_resources_and_bad_settings_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = settings(
        dir.path(),
        json!({
            "everything": {"command": "node", "args": [node_server("server-everything"), "stdio"]},
            "broken": {"command": "/nonexistent/mcp-server"},
            "mute": {"command": "sh", "args": ["-c", format!("sleep 60 & echo $! > {}; echo not json-rpc; wait", dir.path().join("mute.pid").display())]},
            "off": {"command": "node", "disabled": true},
        }),
    );
    let start = Instant::now();
    let r = run_cmd("mcp", dir.path(), &["list", "--mcp-config", &cfg], &[], LIMIT);
    assert_eq!(r.code, Some(1), "a server failed: {}", r.all());
    let took = start.elapsed();
    assert!(took >= Duration::from_secs(10) && took < Duration::from_secs(20), "waited {took:?}");
    assert!(r.stdout.contains("everything [connected] node "), "{}", r.stdout);
    assert!(r.stdout.contains("    echo — Echoes back the input string\n"));
    assert!(r.stdout.contains("    demo://resource/static/document/features.md (features.md)\n"));
    assert!(
        r.stdout
            .contains("broken [failed] /nonexistent/mcp-server\n  error: could not start `/nonexistent/mcp-server`"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("off [disabled]"));
    // A server that never answers `initialize`: failed after Cline's 10 s wait, and stopped.
    assert!(
        r.stdout.contains("mute [failed] sh -c ")
            && r.stdout.contains("  error: no answer to `initialize` within 10 seconds"),
        "{}",
        r.stdout
    );
    let mute: i32 = std::fs::read_to_string(dir.path().join("mute.pid")).unwrap().trim().parse().unwrap();
    // (the pid is the server's own child: the whole process group is gone, not just the server)
    wait_for("the silent server's group to be killed", || !alive(mute));
    assert!(r.stderr.contains("MCP: server \"broken\""), "failures are reported once: {}", r.stderr);

    let only = settings(
        dir.path(),
        json!({"everything": {"command": "node", "args": [node_server("server-everything"), "stdio"]}}),
    );
    let r = run_cmd("mcp", dir.path(), &["list", "--json", "--mcp-config", &only], &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let first: Value = serde_json::from_str(r.stdout.lines().next().unwrap()).unwrap();
    assert_eq!(first["server"], "everything");
    assert!(first["tools"].as_array().unwrap().iter().any(|t| t == "get-sum"));

    let bad = settings(dir.path(), json!({"db": {"command": "x", "autoApprove": "all"}}));
    let r = run_cmd("mcp", dir.path(), &["list", "--mcp-config", &bad], &[], LIMIT);
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.contains(&format!("{bad}: server \"db\": field \"autoApprove\": must be a list of strings")),
        "{}",
        r.stderr
    );
    // The same error stops a run before any request.
    let r = run_agent(dir.path(), &["--mcp-config", &bad, "t"], &[], LIMIT);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("field \"autoApprove\""), "{}", r.stderr);
}

/// A person who set up MCP servers with the Cline CLI has them under agent-min too, in the
/// CLI's shape (the transport nested); agent-min's own file wins a name both define.
#[test]
fn the_cline_clis_settings_file_is_read_after_agent_mins_own() {
    let (ws, home, cfg) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let cline = home.path().join(".cline/data/settings");
    std::fs::create_dir_all(&cline).unwrap();
    let everything = json!({"type": "stdio", "command": "node", "args": [node_server("server-everything"), "stdio"]});
    let servers = json!({
        "everything": {"transport": everything},
        "off": {"transport": {"type": "stdio", "command": "cline-cli-off"}, "disabled": true},
    });
    std::fs::write(cline.join("cline_mcp_settings.json"), json!({ "mcpServers": servers }).to_string()).unwrap();
    std::fs::create_dir_all(cfg.path().join("agent-min")).unwrap();
    settings(&cfg.path().join("agent-min"), json!({"off": {"command": "agent-min-off", "disabled": true}}));
    let (h, c) = (home.path().display().to_string(), cfg.path().display().to_string());
    let cline_dir = format!("{h}/.cline");
    let env = [("HOME", h.as_str()), ("XDG_CONFIG_HOME", c.as_str()), ("CLINE_DIR", cline_dir.as_str())];
    let r = run_cmd("mcp", ws.path(), &["list"], &env, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stdout.contains("everything [connected] node "), "{}", r.stdout);
    assert!(r.stdout.contains("off [disabled] agent-min-off") && !r.stdout.contains("cline-cli-off"), "{}", r.stdout);
    assert!(r.stderr.contains("MCP: server \"off\" of ") && r.stderr.contains("is left out"), "{}", r.stderr);
    // A file agent-min cannot read is said and left out; the run goes on with its own.
    std::fs::write(cline.join("cline_mcp_settings.json"), r#"{"mcpServers": {"x": {"transport": 1}}}"#).unwrap();
    let r = run_cmd("mcp", ws.path(), &["list"], &env, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(
        r.stderr.contains("MCP: the Cline CLI's settings are left out: ") && r.stderr.contains("\"transport\""),
        "{}",
        r.stderr
    );
    assert!(r.stdout.contains("off [disabled] agent-min-off"), "{}", r.stdout);
    // `CLINE_MCP_SETTINGS_PATH` names the CLI's file elsewhere, as the CLI reads it.
    let elsewhere = settings(
        ws.path(),
        json!({"moved": {"transport": {"type": "stdio", "command": "moved-off"}, "disabled": true}}),
    );
    let env2 = [env[0], env[1], env[2], ("CLINE_MCP_SETTINGS_PATH", elsewhere.as_str())];
    let r = run_cmd("mcp", ws.path(), &["list"], &env2, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stdout.contains("moved [disabled] moved-off"), "{}", r.stdout);
    // The workspace's own file wins a name over the CLI's too (it was "defined twice").
    std::fs::create_dir_all(ws.path().join(".cline")).unwrap();
    let mine = json!({"mcpServers": {"moved": {"command": "ws-moved", "disabled": true}}});
    std::fs::write(ws.path().join(".cline/mcp.json"), mine.to_string()).unwrap();
    let r = run_cmd("mcp", ws.path(), &["list", "--yolo"], &env2, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stdout.contains("moved [disabled] ws-moved") && !r.stdout.contains("moved-off"), "{}", r.stdout);
    assert!(r.stderr.contains("MCP: server \"moved\" of ") && r.stderr.contains("is left out"), "{}", r.stderr);
    std::fs::remove_file(ws.path().join(".cline/mcp.json")).unwrap();
    // `--mcp-config` replaces both default files.
    let only = settings(ws.path(), json!({}));
    let r = run_cmd("mcp", ws.path(), &["list", "--mcp-config", &only], &env, LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(r.stderr.contains("no MCP servers are configured") && !r.stdout.contains("everything"), "{}", r.all());
}

#[test]
fn a_workspace_s_own_settings_start_nothing_until_approved() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join(".cline")).unwrap();
    let marker = ws.path().join("ran");
    let script = format!("touch {}; exec node {} stdio", marker.display(), node_server("server-everything"));
    std::fs::write(
        ws.path().join(".cline/mcp.json"),
        json!({"mcpServers": {"repo": {"command": "sh", "args": ["-c", script]}}}).to_string(),
    )
    .unwrap();
    let cfg_home = home.path().display().to_string();
    let env = [("XDG_CONFIG_HOME", cfg_home.as_str())];
    let cwd = ws.path().display().to_string();
    // Nobody to approve (stdin closed): not started.
    let r = run_cmd("mcp", ws.path(), &["list", "--cwd", &cwd], &env, LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(
        r.stderr.contains("they would run these programs") && r.stderr.contains("were not started"),
        "{}",
        r.stderr
    );
    assert!(!marker.exists(), "a program from the repository ran without approval");
    // A run with nobody to approve goes on without them: the question is not left for its first
    // call to stop at (a read used to end it with exit 3, showing the MCP question).
    std::fs::write(ws.path().join("a.txt"), "alpha\n").unwrap();
    let server = Server::start(vec![anthropic(&tool("read_file", &[("path", "a.txt")])), anthropic(&completion("ok"))]);
    let asking: Vec<String> = anthropic_args(&server).into_iter().filter(|a| a != "--yolo").collect();
    let r = run_agent(ws.path(), &args_with(&asking, &["--no-save", "t"]), &env, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stderr.contains("were not started (approve them in a run at a terminal"), "{}", r.stderr);
    assert!(!marker.exists(), "a program from the repository ran without approval");
    // `mcp list --trust-workspace` (the person at the prompt) approves it for that listing,
    // and says so by the option's name; `--yolo`, which it took before, the same.
    for option in ["--trust-workspace", "--yolo"] {
        let _ = std::fs::remove_file(&marker);
        let r = run_cmd("mcp", ws.path(), &["list", "--cwd", &cwd, option], &env, LIMIT);
        assert_eq!(r.code, Some(0), "{}", r.all());
        assert!(r.stdout.contains("repo [connected]"));
        assert!(r.stderr.contains(&format!("(approved by {option}).")), "{}", r.stderr);
        assert!(marker.exists());
    }
    // Nothing was recorded: asked again.
    let r = run_cmd("mcp", ws.path(), &["list", "--cwd", &cwd], &env, LIMIT);
    assert!(r.stderr.contains("they would run these programs"), "{}", r.stderr);
}

/// Starts a run whose MCP call is under way and returns (agent, the server's pid, what must
/// live until the end of the test).
fn run_during_a_slow_call() -> (std::process::Child, i32, [tempfile::TempDir; 2], Server) {
    let ws = tempfile::tempdir().unwrap();
    let cfg_dir = tempfile::tempdir().unwrap();
    let pidfile = cfg_dir.path().join("pids");
    let cfg = settings(
        cfg_dir.path(),
        json!({"py": {"command": python(), "args": [py_script()], "timeout": 60,
                      "env": {"PIDFILE": pidfile.display().to_string()}}}),
    );
    let server = Server::start(vec![anthropic(&use_mcp("py", "slow", r#"{"seconds": 60}"#))]);
    let base = anthropic_args(&server);
    let child = Command::new(bin())
        .arg("run")
        .args(args_with(&base, &["--mcp-config", &cfg, "t"]))
        .current_dir(ws.path())
        .env("ANTHROPIC_API_KEY", KEY)
        .env("XDG_STATE_HOME", cfg_dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the first request", || !server.requests().is_empty());
    wait_for("the server's pid", || !pids(&pidfile).is_empty());
    let calls = cfg_dir.path().join("pids.calls");
    wait_for("the slow call to be under way", || std::fs::read_to_string(&calls).is_ok_and(|c| c.contains("slow")));
    let pid = pids(&pidfile)[0];
    assert!(alive(pid));
    (child, pid, [ws, cfg_dir], server)
}

#[test]
fn sigterm_during_a_call_stops_the_server_s_process_group() {
    let (child, pid, _dirs, _server) = run_during_a_slow_call();
    Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    let r = wait_limited(child, Duration::from_secs(15));
    assert_eq!(r.code, Some(143), "SIGTERM: 128 + 15: {}", r.all());
    wait_for("the MCP server to be killed with the agent", || !alive(pid));
}

#[test]
fn kill_9_of_the_agent_takes_the_server_with_it() {
    let (mut child, pid, _dirs, _server) = run_during_a_slow_call();
    child.kill().unwrap(); // SIGKILL: no handler runs
    let _ = child.wait();
    wait_for("the MCP server to die with the agent", || !alive(pid));
}

#[test]
fn approval_is_asked_unless_the_tool_is_auto_approved() {
    let ws = tempfile::tempdir().unwrap();
    // Longer than the question shows: the arguments are shown whole before it.
    let long = "x".repeat(400);
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = settings(
        cfg_dir.path(),
        json!({"everything": {"command": "node", "args": [node_server("server-everything"), "stdio"], "autoApprove": ["get-sum"]}}),
    );
    let server = Server::start(vec![
        anthropic(&use_mcp("everything", "echo", r#"{"message": "one"}"#)),
        anthropic(&use_mcp("everything", "echo", &format!(r#"{{"message": "two {long} END"}}"#))),
        anthropic(&use_mcp("everything", "get-sum", r#"{"a": 1, "b": 1}"#)),
        anthropic(&tool(
            "access_mcp_resource",
            &[("server_name", "everything"), ("uri", "demo://resource/dynamic/text/1")],
        )),
        anthropic(&completion("done")),
    ]);
    let base: Vec<String> = anthropic_args(&server).into_iter().filter(|a| a != "--yolo").collect();
    let args = args_with(&base, &["--mcp-config", &cfg, "--no-save", "t"]);
    // No to the first echo, yes to the second (in capitals, as Cline's CLI takes it); get-sum
    // is auto-approved; feedback for the resource.
    let r = run_interactive(ws.path(), &args, b"n\nYES\nnot that one\n", LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs[1].last_user().lines().nth(1), Some("The user denied this operation."), "{}", reqs[1].last_user());
    assert!(reqs[2].last_user().contains(&format!("Result:\nEcho: two {long} END")), "{}", reqs[2].last_user());
    let whole = r.stderr.find(&format!("\"message\": \"two {long} END\"")).expect(&r.stderr);
    assert!(whole < r.stderr.rfind("with arguments {\"message\": \"two xxx").expect(&r.stderr), "{}", r.stderr);
    assert!(reqs[3].last_user().contains("Result:\nThe sum of 1 and 1 is 2."), "{}", reqs[3].last_user());
    // Cline's framing: the person's feedback first, then the denied tool's result.
    assert!(reqs[4].last_user().starts_with("The user provided the following feedback:\n<feedback>\nnot that one\n</feedback>\n\n[access_mcp_resource for 'everything'] Result:\nThe user denied this operation."), "{}", reqs[4].last_user());
    assert!(
        r.stderr.contains("Use MCP tool echo on server everything with arguments {\"message\": \"one\"} — approve?"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stderr.matches("— approve?").count(), 3, "get-sum is auto-approved: {}", r.stderr);
}

/// The `uid` of the function named `uid0mcp0{tool}` in a request's tool list, and that definition.
fn mcp_function<'a>(tools: &'a [Value], name_of: fn(&Value) -> &Value, tool: &str) -> (String, &'a Value) {
    let suffix = format!("0mcp0{tool}");
    let t = tools
        .iter()
        .find(|t| name_of(t).as_str().is_some_and(|n| n.ends_with(&suffix)))
        .unwrap_or_else(|| panic!("no function for MCP tool {tool} in {tools:?}"));
    let name = name_of(t).as_str().unwrap();
    (name[..name.len() - suffix.len()].to_string(), t)
}

#[test]
fn native_mode_offers_each_mcp_tool_as_a_function_and_runs_its_calls_on_the_real_server() {
    let ws = tempfile::tempdir().unwrap();
    let cfg_dir = tempfile::tempdir().unwrap();
    let everything =
        json!({"command": "node", "args": [node_server("server-everything"), "stdio"], "autoApprove": ["echo"]});
    let cfg = settings(cfg_dir.path(), json!({ "everything": everything }));
    let done = r#"{"result": "done"}"#;

    // A first run only completes: its request shows the definitions and the server's uid.
    let server = Server::start(vec![native::anthropic(
        native::AnthropicReply {
            calls: vec![native::call("toolu_0", "attempt_completion", &[done])],
            ..Default::default()
        },
        7,
    )]);
    let native_args = ["--tool-calls", "native", "--mcp-config", &cfg];
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &[&native_args[..], &["echo"]].concat()), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let req = &server.requests()[0].body;
    let tools = req["tools"].as_array().unwrap();
    let (uid, echo) = mcp_function(tools, |t| &t["name"], "echo");
    assert!(uid.len() == 6 && uid.starts_with('c'), "Cline's uid shape: {uid}");
    assert_eq!(
        echo,
        &json!({"name": format!("{uid}0mcp0echo"), "description": "everything: Echoes back the input string",
            "input_schema": {"type": "object", "properties": {"message": {"type": "string", "description": "Message to echo"}},
                "required": ["message"]}})
    );
    let (_, sum) = mcp_function(tools, |t| &t["name"], "get-sum");
    assert_eq!(sum["input_schema"]["required"], json!(["a", "b"]));
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"access_mcp_resource") && !names.contains(&"use_mcp_tool"), "{names:?}");
    let system = req["system"][0]["text"].as_str().unwrap();
    assert!(!system.contains("use_mcp_tool") && !system.contains("# Connected MCP Servers"), "{system}");
    assert!(system.contains("\n- MCP operations should be used one at a time, similar to other tool usage. Wait for confirmation of success before proceeding with additional operations.\n\n===="));

    // Then, on both wire formats, the model calls `<uid>0mcp0echo` natively and the real
    // server's answer comes back as that call's result.
    let echo_call = format!("{uid}0mcp0echo");
    let fragments = [r#"{"mess"#, r#"age": "hi \u00e9 from"#, r#" native"}"#];
    let resource = r#"{"server_name": "everything", "uri": "demo://resource/dynamic/text/7"}"#;
    for provider in ["anthropic", "openai"] {
        let script = if provider == "anthropic" {
            let reply = |calls| native::AnthropicReply { calls, ..Default::default() };
            vec![
                native::anthropic(reply(vec![native::call("toolu_1", &echo_call, &fragments)]), 3),
                native::anthropic(reply(vec![native::call("toolu_r", "access_mcp_resource", &[resource])]), 5),
                native::anthropic(reply(vec![native::call("toolu_2", "attempt_completion", &[done])]), 7),
            ]
        } else {
            vec![
                native::openai("", "", &[native::call("call_1", &echo_call, &fragments)], 3),
                native::openai("", "", &[native::call("call_r", "access_mcp_resource", &[resource])], 5),
                native::openai("", "", &[native::call("call_2", "attempt_completion", &[done])], 7),
            ]
        };
        let server = Server::start(script);
        let base = if provider == "anthropic" { anthropic_args(&server) } else { openai_args(&server) };
        let r = run_agent(ws.path(), &args_with(&base, &[&native_args[..], &["--json", "echo"]].concat()), &[], LIMIT);
        assert_eq!(r.code, Some(0), "{provider}: {}", r.all());
        let reqs = server.requests();
        assert_eq!(reqs.len(), 3, "{provider}: {}", r.all());
        // Cline's native access_mcp_resource reads a real resource too.
        let resource_result = if provider == "anthropic" {
            reqs[2].body["messages"].as_array().unwrap().last().unwrap()["content"][0]["content"].clone()
        } else {
            let m = reqs[2].body["messages"].as_array().unwrap();
            m.iter().rev().find(|x| x["role"] == "tool").unwrap()["content"].clone()
        };
        assert!(
            resource_result.as_str().unwrap().starts_with(
                "[access_mcp_resource for 'everything'] Result:\nResource 7: This is a plaintext resource"
            ),
            "{provider}: {resource_result}"
        );
        let answer = "[use_mcp_tool for 'everything'] Result:\nEcho: hi \u{e9} from native";
        if provider == "anthropic" {
            let (same_uid, _) = mcp_function(reqs[0].body["tools"].as_array().unwrap(), |t| &t["name"], "echo");
            assert_eq!(same_uid, uid, "the same server has the same uid in every run");
            let m = reqs[1].body["messages"].as_array().unwrap();
            assert_eq!(
                m[1]["content"],
                json!([{"type": "tool_use", "id": "toolu_1", "name": echo_call, "input": {"message": "hi \u{e9} from native"}}])
            );
            let result = &m[2]["content"][0];
            assert_eq!(
                (result["type"].as_str(), result["tool_use_id"].as_str()),
                (Some("tool_result"), Some("toolu_1"))
            );
            assert_eq!(result["content"], answer);
        } else {
            let tools = reqs[0].body["tools"].as_array().unwrap();
            let (same_uid, def) = mcp_function(tools, |t| &t["function"]["name"], "echo");
            assert_eq!(same_uid, uid);
            assert_eq!(
                def,
                &json!({"type": "function", "function": {"name": echo_call, "description": "everything: Echoes back the input string",
                    "strict": false, "parameters": {"type": "object", "properties": {"message": {"type": "string", "description": "Message to echo"}},
                        "required": ["message"], "additionalProperties": false}}})
            );
            let m = reqs[1].body["messages"].as_array().unwrap();
            let call = &m[2]["tool_calls"][0];
            assert_eq!(
                (call["id"].as_str(), call["function"]["name"].as_str()),
                (Some("call_1"), Some(echo_call.as_str()))
            );
            assert_eq!(m[3]["role"], "tool");
            assert_eq!(m[3]["tool_call_id"], "call_1");
            assert_eq!(m[3]["content"], answer);
        }
        // One code path with the XML dialect: the same events, server name and all.
        let events = common::events::parse(&r.stdout);
        let call =
            events.iter().find(|e| e["type"] == "tool_call" && e["partial"] == false).expect("a tool_call event");
        assert_eq!(call["tool"], "use_mcp_tool", "{call}");
        assert!(events.iter().any(|e| e["type"] == "tool_call" && e["partial"] == true && e["tool"] == "use_mcp_tool"));
        let calls = events.iter().filter(|e| e["type"] == "tool_call");
        assert!(
            calls.clone().count() >= 2 && calls.clone().all(|e| !e["tool"].as_str().unwrap().contains("0mcp0")),
            "{}",
            r.stdout
        );
        assert!(
            events.iter().any(|e| e["type"] == "mcp_call"
                && e["server"] == "everything"
                && e["tool"] == "echo"
                && e["ok"] == true),
            "{}",
            r.stdout
        );
    }
}

#[test]
fn native_mode_leaves_out_tool_names_the_apis_refuse_and_says_so() {
    let ws = tempfile::tempdir().unwrap();
    let cfg_dir = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/py_names_server.py");
    let cfg = settings(cfg_dir.path(), json!({"names": {"command": python(), "args": [script]}}));
    let done = |id| native::call(id, "attempt_completion", &[r#"{"result": "done"}"#]);
    let reply = |id| native::AnthropicReply { calls: vec![done(id)], ..Default::default() };
    // A reply without a tool call, so that there is a second request.
    let chat = native::AnthropicReply { text: "Let me see.", ..Default::default() };
    let server = Server::start(vec![native::anthropic(chat, 7), native::anthropic(reply("toolu_2"), 7)]);
    let base = anthropic_args(&server);
    let r =
        run_agent(ws.path(), &args_with(&base, &["--tool-calls", "native", "--mcp-config", &cfg, "go"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "the scripted server refuses bad names as the APIs do: {}", r.all());
    let reqs = server.requests();
    let names: Vec<&str> =
        reqs[0].body["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.iter().any(|n| n.ends_with("0mcp0plain")), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("files.read") || n.contains("a_tool_name")), "{names:?}");
    assert_eq!(reqs.len(), 2, "{}", r.all());
    let out = r.all();
    let said = |needle: &str| out.matches(needle).count();
    assert_eq!(said("MCP tool 'files.read' of server 'names' is not offered as a native tool: function names may only hold a-z, A-Z, 0-9, '_' and '-'"), 1, "{}", r.all());
    assert_eq!(said("MCP tool 'a_tool_name_that_is_long_enough_to_pass_sixty_four_with_prefix' of server 'names' is not offered as a native tool"), 1, "once, not every turn: {}", r.all());
    assert!(out.contains("longer than 64 characters") && out.contains("run with --tool-calls xml to use it"), "{out}");
}

/// A server that answers `initialize` within its startup budget still has Cline's 5 s for each
/// list: its tools, listed after the budget ran out, are there (they were not: the lists shared
/// the budget, and the server stayed connected without tools). A raw JSON-RPC server, quick to
/// start on a loaded machine: it answers `tools/list` a second after its budget ends.
#[test]
fn a_server_listing_its_tools_after_its_startup_budget_still_lists_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut late = raw_server(
        dir.path(),
        "late",
        r#"CAPS = {"tools": {}}
def answer(method, params):
    time.sleep(max(0.0, start + 4 - time.monotonic()))
    return {"tools": [{"name": "plain", "description": "d", "inputSchema": {"type": "object"}}]}
"#,
    );
    late["startupTimeout"] = json!(3);
    let cfg = settings(dir.path(), json!({ "late": late }));
    let r = run_cmd("mcp", dir.path(), &["list", "--mcp-config", &cfg], &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stdout.contains("late [connected]") && r.stdout.contains("plain"), "{}", r.all());
}

/// An MCP tool with an array parameter that says nothing of its items (common: many servers
/// declare `{"type": "array"}`) is offered to OpenAI with `items: {}`: the API refuses a request
/// holding such a schema ("array schema missing items"), so one such tool failed every request.
#[test]
fn an_array_parameter_without_items_does_not_get_every_openai_request_refused() {
    let ws = tempfile::tempdir().unwrap();
    let cfg_dir = tempfile::tempdir().unwrap();
    let tags = raw_server(
        cfg_dir.path(),
        "tags",
        r#"CAPS = {"tools": {}}
def answer(method, params):
    if method != "tools/list":
        return {}
    schema = {"type": "object", "properties": {"tags": {"type": "array", "description": "Tags"}}}
    return {"tools": [{"name": "tag", "description": "Tags things", "inputSchema": schema}]}
"#,
    );
    let cfg = settings(cfg_dir.path(), json!({ "tags": tags }));
    let done = r#"{"result":"ok"}"#;
    let server =
        Server::start(vec![native::openai("", "", &[native::call("call_1", "attempt_completion", &[done])], 5)]);
    let base = openai_args(&server);
    let args = args_with(&base, &["--tool-calls", "native", "--mcp-config", &cfg, "t"]);
    let r = run_agent(ws.path(), &args, &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    let tools = reqs[0].body["tools"].as_array().unwrap();
    let (_, tag) = mcp_function(tools, |t| &t["function"]["name"], "tag");
    assert_eq!(
        tag["function"]["parameters"]["properties"]["tags"],
        json!({"type": "array", "description": "Tags", "items": {}})
    );
}

/// Two tools Anthropic's API would refuse every request for, as Cline sends them: one with a
/// parameter name outside its pattern (left out, with a warning naming it and the way to use
/// it), one whose parameters refer into the schema's `$defs` (Pydantic's shape: the
/// definitions go along, so the references resolve, and the model sends the nested object
/// whole to the server).
#[test]
fn tools_anthropic_would_refuse_every_request_for_are_fixed_or_left_out() {
    let ws = tempfile::tempdir().unwrap();
    let cfg_dir = tempfile::tempdir().unwrap();
    let shop = raw_server(
        cfg_dir.path(),
        "shop",
        r##"CAPS = {"tools": {}}
def answer(method, params):
    if method == "tools/call":
        return {"content": [{"type": "text", "text": "got " + json.dumps(params["arguments"], sort_keys=True)}]}
    if method != "tools/list":
        return {}
    odd = {"type": "object", "properties": {"StartTime<": {"type": "string"}}}
    paint = {"type": "object", "required": ["box"], "$defs": {"Box": {"type": "object", "properties": {"w": {"type": "integer"}}}},
             "properties": {"box": {"$ref": "#/$defs/Box"}}}
    return {"tools": [{"name": "calls", "description": "Lists calls", "inputSchema": odd},
                      {"name": "paint", "description": "Paints a box", "inputSchema": paint}]}
"##,
    );
    let cfg = settings(cfg_dir.path(), json!({ "shop": shop }));
    let reply = |calls| native::anthropic(native::AnthropicReply { calls, ..Default::default() }, 5);
    let done = || reply(vec![native::call("toolu_2", "attempt_completion", &[r#"{"result":"ok"}"#])]);
    // The first run shows the definitions (and the server's uid, for the second to call).
    let server = Server::start(vec![done()]);
    let base = anthropic_args(&server);
    let args = args_with(&base, &["--tool-calls", "native", "--mcp-config", &cfg, "--yolo", "t"]);
    let r = run_agent(ws.path(), &args, &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(
        r.stderr
            .contains("MCP tool 'calls' of server 'shop' is not offered as a native tool: its parameter 'StartTime<'"),
        "{}",
        r.stderr
    );
    let tools = server.requests()[0].body["tools"].as_array().unwrap().clone();
    let (uid, def) = mcp_function(&tools, |t| &t["name"], "paint");
    assert_eq!(def["input_schema"]["properties"]["box"], json!({"description": "", "$ref": "#/$defs/Box"}));
    assert_eq!(def["input_schema"]["$defs"]["Box"]["properties"]["w"], json!({"type": "integer"}));
    // The model sends the nested object, and the server gets it whole.
    let paint = format!("{uid}0mcp0paint");
    let server = Server::start(vec![reply(vec![native::call("toolu_1", &paint, &[r#"{"box": {"w": 2}}"#])]), done()]);
    let base = anthropic_args(&server);
    let args = args_with(&base, &["--tool-calls", "native", "--mcp-config", &cfg, "--yolo", "t"]);
    let r = run_agent(ws.path(), &args, &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    let result = reqs[1].body["messages"].as_array().unwrap().last().unwrap()["content"][0]["content"].clone();
    assert!(result.as_str().unwrap().contains(r#"got {"box": {"w": 2}}"#), "{result}");
}

#[test]
fn native_mode_follows_tools_list_changed_in_the_next_request() {
    let ws = tempfile::tempdir().unwrap();
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = settings(
        cfg_dir.path(),
        json!({"py": {"command": python(), "args": [py_script()], "autoApprove": ["grow", "grown"]}}),
    );
    let uid = {
        // The uid comes from the server's name; a first request shows it.
        let server = Server::start(vec![native::anthropic(
            native::AnthropicReply {
                calls: vec![native::call("t0", "attempt_completion", &[r#"{"result":"x"}"#])],
                ..Default::default()
            },
            7,
        )]);
        let base = anthropic_args(&server);
        let r =
            run_agent(ws.path(), &args_with(&base, &["--tool-calls", "native", "--mcp-config", &cfg, "x"]), &[], LIMIT);
        assert_eq!(r.code, Some(0), "{}", r.all());
        mcp_function(server.requests()[0].body["tools"].as_array().unwrap(), |t| &t["name"], "grow").0
    };
    let (grow, grown) = (format!("{uid}0mcp0grow"), format!("{uid}0mcp0grown"));
    let reply =
        |id, name| native::AnthropicReply { calls: vec![native::call(id, name, &["{}"])], ..Default::default() };
    let server = Server::start(vec![
        native::anthropic(reply("t1", &grow), 7),
        native::anthropic(reply("t2", &grown), 7),
        native::anthropic(reply("t3", "attempt_completion"), 7),
    ]);
    let base = anthropic_args(&server);
    let r =
        run_agent(ws.path(), &args_with(&base, &["--tool-calls", "native", "--mcp-config", &cfg, "grow"]), &[], LIMIT);
    let reqs = server.requests();
    assert!(reqs.len() >= 3, "{}", r.all());
    let names = |i: usize| -> Vec<String> {
        reqs[i].body["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str().map(String::from)).collect()
    };
    assert!(!names(0).contains(&grown), "not there before the notification");
    assert!(names(1).contains(&grown), "the next request carries the new tool: {:?}", names(1));
    let result = &reqs[2].body["messages"].as_array().unwrap()[4]["content"][0];
    assert_eq!(
        (result["tool_use_id"].as_str(), result["content"].as_str()),
        (Some("t2"), Some("[use_mcp_tool for 'py'] Result:\ngrown"))
    );
}

/// A server may answer `initialize` with any version the MCP SDK Cline uses supports
/// (2025-11-25 was refused); one it does not is refused, naming it.
#[test]
fn a_server_answering_with_a_newer_protocol_version_the_sdk_supports_connects() {
    let dir = tempfile::tempdir().unwrap();
    for (version, connects) in [("2025-11-25", true), ("2024-10-07", true), ("2099-01-01", false)] {
        let body = format!(
            r#"CAPS = {{"tools": {{}}}}
VERSION = "{version}"
def answer(method, params):
    return {{"tools": [{{"name": "t", "description": "d", "inputSchema": {{"type": "object"}}}}]}}
"#
        );
        let cfg = settings(dir.path(), json!({ "n": raw_server(dir.path(), "newer", &body) }));
        let r = run_cmd("mcp", dir.path(), &["list", "--mcp-config", &cfg], &[], LIMIT);
        let out = r.all();
        assert_eq!(out.contains("n [connected] "), connects, "{version}: {out}");
        assert_eq!(out.contains(&format!("protocol version \"{version}\"")), !connects, "{version}: {out}");
    }
}

#[test]
fn a_server_whose_tool_list_fails_stays_connected_with_its_resources() {
    // Cline's `fetchToolsList` answers a failed `tools/list` with no tools: the server stays
    // connected and its resources listed. (A raw JSON-RPC server: no SDK fails this list.)
    let dir = tempfile::tempdir().unwrap();
    let half = raw_server(
        dir.path(),
        "half",
        r#"CAPS = {"tools": {}, "resources": {}}
def answer(method, params):
    if method == "resources/list":
        return {"resources": [{"uri": "half://notes", "name": "notes"}]}
    if method == "resources/templates/list":
        return {"resourceTemplates": []}
    raise Refuse("no tools today")
"#,
    );
    let cfg = settings(dir.path(), json!({ "half": half }));
    let r = run_cmd("mcp", dir.path(), &["list", "--mcp-config", &cfg], &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stdout.contains("half [connected] "), "{}", r.stdout);
    assert!(r.stdout.contains("    half://notes (notes)\n"), "{}", r.stdout);
}

/// A list is read as far as it goes: a page that fails after the first keeps the pages read, an
/// empty or repeated cursor ends it, and a tool named twice is listed once (a server answering
/// `"nextCursor": ""` was asked for its first page a hundred times, each tool listed a hundred
/// times, and two functions of one name get every model request refused; a failed second page
/// lost the first). The lists are asked for even when the server declared no capabilities, as
/// Cline's SDK asks.
#[test]
fn a_paginated_list_ends_at_an_empty_or_repeated_cursor_and_keeps_what_was_read() {
    let dir = tempfile::tempdir().unwrap();
    let server = |name: &str, pages: &str| {
        let body = format!(
            r#"CAPS = {{}}
PAGES = {pages}
def answer(method, params):
    if method != "tools/list":
        raise Refuse("not here")
    page = PAGES[int(params.get("cursor") or 0)]
    if page is None:
        raise Refuse("page lost")
    tools = [{{"name": n, "description": "d", "inputSchema": {{"type": "object"}}}} for n in page[0]]
    return {{"tools": tools, "nextCursor": page[1]}}
"#
        );
        raw_server(dir.path(), name, &body)
    };
    let cfg = settings(
        dir.path(),
        json!({
            "empty": server("empty", r#"[(["e1", "e2"], "")]"#),
            "same": server("same", r#"[(["s0"], "1"), (["s1", "s0"], "1")]"#),
            "lost": server("lost", r#"[(["l0"], "1"), None]"#),
        }),
    );
    let r = run_cmd("mcp", dir.path(), &["list", "--mcp-config", &cfg], &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let listed = |tool: &str| r.stdout.lines().filter(|l| l.trim_start().starts_with(&format!("{tool} "))).count();
    for (tool, times) in [("e1", 1), ("e2", 1), ("s0", 1), ("s1", 1), ("l0", 1)] {
        assert_eq!(listed(tool), times, "{tool} in:\n{}", r.stdout);
    }
}

/// A server's URL may hold a token in its path or query (Zapier's `/api/mcp/s/<secret>/mcp`,
/// `?api_key=`), which no redaction knows of: a failure names the server's origin only — its
/// text reaches the model, the events and the saved task. Nothing listens on port 1.
#[test]
fn a_failure_names_the_servers_origin_not_a_token_in_its_url() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = settings(
        dir.path(),
        json!({
            "http": {"type": "streamableHttp", "url": "http://127.0.0.1:1/mcp?api_key=SEKRETSEKRET"},
            "sse": {"type": "sse", "url": "http://127.0.0.1:1/api/mcp/s/SEKRETSEKRET/sse"},
        }),
    );
    let r = run_cmd("mcp", dir.path(), &["list", "--json", "--mcp-config", &cfg], &[], LIMIT);
    let errors: Vec<String> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["error"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(errors.len(), 2, "{}", r.all());
    for e in &errors {
        assert!(e.contains("http://127.0.0.1:1") && !e.contains("SEKRET"), "{e}");
    }
}

/// A server's settings may give it its own `PATH` (`"env": {"PATH": …}`, an nvm's `npx`): a
/// bare command is found there, as the program's environment has it — it was looked up on the
/// agent's PATH alone and not found. A relative entry there finds nothing, as on the agent's.
#[test]
fn a_servers_own_path_finds_its_command() {
    let tools = tempfile::tempdir().unwrap();
    let bin = tools.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let node = String::from_utf8(Command::new("sh").args(["-c", "command -v node"]).output().unwrap().stdout).unwrap();
    let script = bin.join("only-here-everything");
    std::fs::write(&script, format!("#!/bin/sh\nexec {} {} stdio\n", node.trim(), node_server("server-everything")))
        .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let cfg = settings(
        tools.path(),
        json!({"mine": {"command": "only-here-everything", "env": {"PATH": path}},
               "relative": {"command": "only-here-everything", "env": {"PATH": "bin:/usr/bin"}}}),
    );
    let r = run_cmd("mcp", tools.path(), &["list", "--mcp-config", &cfg], &[], LIMIT);
    assert!(r.stdout.contains("mine [connected]"), "{}", r.all());
    assert!(!r.stdout.contains("relative [connected]"), "{}", r.all());
}

/// The real `get-tiny-image` tool (a 20×20 PNG between two texts): a model that takes images
/// (Claude Sonnet 4.5, Cline's `supportsImages`) gets the image, in the user message after the
/// result, and no note saying it cannot see it; a model that takes none (`--no-images`) gets
/// Cline's note, and no image.
#[test]
fn an_mcp_tools_image_reaches_a_model_that_takes_images() {
    let js = std::fs::read_to_string(
        Path::new(&node_server("server-everything")).parent().unwrap().join("tools/get-tiny-image.js"),
    )
    .unwrap();
    let tiny = js.split("MCP_TINY_IMAGE = \"").nth(1).and_then(|s| s.split('"').next()).unwrap().to_string();
    assert!(tiny.starts_with("iVBORw0KGgo"), "the server's image is a PNG in base64");
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = settings(
        cfg_dir.path(),
        json!({"everything": {"command": "node", "args": [node_server("server-everything"), "stdio"]}}),
    );
    for (model, sees) in [("claude-sonnet-4-5", true), ("claude-test", false)] {
        let ws = tempfile::tempdir().unwrap();
        let server = Server::start(vec![
            anthropic(&use_mcp("everything", "get-tiny-image", "{}")),
            anthropic(&completion("done")),
        ]);
        let url = server.anthropic_url();
        let mut args = vec!["--provider", "anthropic", "--base-url", &url, "--model", model, "--tool-calls", "xml"];
        if !sees {
            args.push("--no-images");
        }
        args.extend(["--yolo", "--no-save", "--mcp-config", &cfg, "show me the logo"]);
        let r = run_agent(ws.path(), &args, &[], LIMIT);
        assert_eq!(r.code, Some(0), "{}", r.all());
        assert!(!r.all().contains("iVBORw0KGgo"), "no base64 on the terminal: {}", r.all());
        let reqs = server.requests();
        assert_eq!(reqs.len(), 2, "{}", r.all());
        let content = reqs[1].body["messages"].as_array().unwrap().last().unwrap()["content"].clone();
        let text = text_of(&content);
        assert!(
            text.starts_with("[use_mcp_tool for 'everything'] Result:\nHere's the image you requested:\n\nThe image above is the MCP logo."),
            "{text}"
        );
        let images: Vec<&Value> =
            content.as_array().map(|b| b.iter().filter(|b| b["type"] == "image").collect()).unwrap_or_default();
        if sees {
            assert!(r.all().contains("image/png, 20x20 pixels"), "the terminal names the image: {}", r.all());
            assert!(!text.contains("images were provided"), "{text}");
            assert_eq!(images.len(), 1, "{content}");
            assert_eq!(images[0]["source"], json!({"type": "base64", "media_type": "image/png", "data": tiny}));
        } else {
            assert!(text.contains("The image above is the MCP logo.\n\n[1 images were provided in the response, and while they are displayed to the user, you do not have the ability to view them.]"), "{text}");
            assert!(images.is_empty(), "{content}");
        }
    }
}

/// A server that never answers `initialize`: the start gives up at its timeout without
/// cancelling it ("The `initialize` request MUST NOT be cancelled by clients"; an HTTP server
/// with no session yet answers such a cancel with a 400). The server logs every line it gets
/// until its stdin closes (SIGTERM ignored, so that what was sent before the stop is read).
#[test]
fn an_initialize_given_up_is_not_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("got.log");
    let script = dir.path().join("mute.py");
    std::fs::write(
        &script,
        format!(
            "import signal, sys\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwith open({:?}, 'a') as f:\n    for line in sys.stdin:\n        f.write(line)\n        f.flush()\n    f.write('EOF\\n')\n",
            log.display().to_string()
        ),
    )
    .unwrap();
    let cfg = settings(
        dir.path(),
        json!({"mute": {"command": "python3", "args": [script.display().to_string()], "startupTimeout": 1}}),
    );
    let r = run_cmd("mcp", dir.path(), &["list", "--mcp-config", &cfg], &[], LIMIT);
    assert!(r.stdout.contains("mute") && !r.stdout.contains("[connected]"), "{}", r.all());
    wait_for("the server's stdin to close", || std::fs::read_to_string(&log).is_ok_and(|l| l.ends_with("EOF\n")));
    let got = std::fs::read_to_string(&log).unwrap();
    assert!(got.contains("\"initialize\""), "{got}");
    assert!(!got.contains("notifications/cancelled"), "{got}");
}

/// An answer line over the 16 MiB agent-min reads from a stdio server is said at once (it was
/// dropped, and the call waited out its whole timeout to be told "Request timed out"), the
/// request given up with `notifications/cancelled`; the server's next answer is read as usual.
#[test]
fn a_stdio_answer_over_the_line_limit_fails_its_call_at_once() {
    let ws = tempfile::tempdir().unwrap();
    let cfg_dir = tempfile::tempdir().unwrap();
    let mut big = raw_server(
        cfg_dir.path(),
        "big",
        r#"CAPS = {"tools": {}}
def answer(method, params):
    if method == "tools/list":
        return {"tools": [{"name": "dump", "description": "d", "inputSchema": {"type": "object"}}]}
    if method == "tools/call":
        size = params["arguments"].get("mib", 0) << 20
        return {"content": [{"type": "text", "text": "x" * size + "small answer after " + ", ".join(NOTIFIED)}]}
    return {}
"#,
    );
    big["timeout"] = json!(3600);
    let cfg = settings(cfg_dir.path(), json!({ "big": big }));
    let server = Server::start(vec![
        anthropic(&use_mcp("big", "dump", r#"{"mib": 17}"#)),
        anthropic(&use_mcp("big", "dump", r#"{"mib": 0}"#)),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--mcp-config", &cfg, "--yolo", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    let r1 = reqs[1].last_user();
    assert!(
        r1.starts_with(
            "[use_mcp_tool for 'big'] Result:\nError executing MCP tool: the server sent a message larger than 16 MiB"
        ),
        "{r1}"
    );
    let r2 = reqs[2].last_user();
    // The first call was given up, and the server told so before the next.
    assert!(
        r2.starts_with(
            "[use_mcp_tool for 'big'] Result:\nsmall answer after notifications/initialized, notifications/cancelled"
        ),
        "{r2}"
    );
}

/// A server that announces its tools later, while nothing calls it (`tools/list_changed` sent
/// between requests): the next request offers them. The notification sat unread until the
/// server was next called, so a tool it added was never offered.
#[test]
fn tools_a_server_announces_while_idle_reach_the_next_request() {
    let ws = tempfile::tempdir().unwrap();
    let cfg_dir = tempfile::tempdir().unwrap();
    let go = cfg_dir.path().join("go");
    let sent = cfg_dir.path().join("sent");
    let body = format!(
        r#"import os, threading
CAPS = {{"tools": {{"listChanged": True}}}}
late = []
def watch():
    while not os.path.exists({go:?}):
        time.sleep(0.02)
    late.append({{"name": "late_tool", "description": "Added later", "inputSchema": {{"type": "object"}}}})
    print(json.dumps({{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}}), flush=True)
    open({sent:?}, "w").close()
threading.Thread(target=watch, daemon=True).start()
def answer(method, params):
    if method == "tools/list":
        return {{"tools": [{{"name": "early_tool", "description": "There from the start", "inputSchema": {{"type": "object"}}}}] + late}}
    return {{}}
"#,
        go = go.display().to_string(),
        sent = sent.display().to_string()
    );
    let later = raw_server(cfg_dir.path(), "later", &body);
    let cfg = settings(cfg_dir.path(), json!({ "later": later }));
    let (first, gate) = gated(anthropic(&tool("list_files", &[("path", ".")])));
    let server = Server::start(vec![first, anthropic(&completion("done"))]);
    let base = anthropic_args(&server);
    let args = args_with(&base, &["--mcp-config", &cfg, "--yolo", "--no-save", "t"]);
    let state = tempfile::tempdir().unwrap();
    let child = agent_cmd("run", ws.path(), &args, &[], state.path()).stdin(Stdio::null()).spawn().unwrap();
    // While the first reply is held: the server adds its tool and says so.
    server.wait_for_requests(1, LIMIT);
    std::fs::write(&go, "").unwrap();
    wait_for("the server's notification", || sent.exists());
    gate.open();
    let r = wait_limited(child, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    let system = |n: usize| reqs[n].body["system"][0]["text"].as_str().unwrap().to_string();
    assert!(system(0).contains("early_tool") && !system(0).contains("late_tool"), "{}", system(0));
    assert!(system(1).contains("- late_tool: Added later"), "{}", system(1));
}

/// A server's log messages (`notifications/message`, the Python SDK's `send_log_message`) are
/// shown, as Cline's task says them (`mcp_notification`), on stderr and as events.
#[test]
fn a_servers_log_messages_are_shown() {
    let ws = tempfile::tempdir().unwrap();
    let cfg_dir = tempfile::tempdir().unwrap();
    let cfg = settings(cfg_dir.path(), json!({"py": {"command": python(), "args": [py_script()]}}));
    let server = Server::start(vec![anthropic(&use_mcp("py", "log", "{}")), anthropic(&completion("done"))]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--mcp-config", &cfg, "--yolo", "--json", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stderr.contains("MCP [py] [steps] half way\n"), "{}", r.stderr);
    assert!(r.stderr.contains("MCP [py] {\"done\":2}\n"), "{}", r.stderr);
    let ev = events::parse(&r.stdout);
    let notes = events::of(&ev, "mcp_notification");
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert_eq!(
        (&notes[0]["server"], &notes[0]["level"], &notes[0]["message"]),
        (&json!("py"), &json!("warning"), &json!("[steps] half way"))
    );
    assert_eq!(notes[1]["level"], "info");
    assert!(server.requests()[1].last_user().contains("logged"));
}

/// A server still starting when the task ends is stopped with what it started (its process
/// group), and said so: it had no test of its own.
#[test]
fn a_server_still_starting_when_the_task_ends_is_stopped_with_its_children() {
    let ws = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // In the workspace: the model's command waits for it (however slowly Python starts).
    let pidfile = ws.path().join("PIDS");
    let body = format!(
        r#"import os, subprocess
CAPS = {{}}
child = subprocess.Popen(["sleep", "600"])
with open({pids:?}, "w") as f:
    f.write(f"{{os.getpid()}}\n{{child.pid}}\n")
while True:
    time.sleep(0.05)
"#,
        pids = pidfile.display().to_string()
    );
    let never = raw_server(dir.path(), "never", &body);
    let cfg = settings(dir.path(), json!({"never": never}));
    let wait = r#"for i in $(seq 600); do [ "$(grep -c . PIDS 2>/dev/null)" = 2 ] && break; sleep 0.1; done"#;
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", wait), ("requires_approval", "false")])),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let args =
        args_with(&base, &["--mcp-config", &cfg, "--mcp-startup-timeout", "1", "--json", "--no-save", "--yolo", "t"]);
    let r = run_agent(ws.path(), &args, &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let started = pids(&pidfile);
    assert_eq!(started.len(), 2, "the server and its child started: {}", r.all());
    let ev = events::parse(&r.stdout);
    let said: Vec<(String, String)> = events::of(&ev, "mcp_server")
        .iter()
        .map(|e| (e["event"].as_str().unwrap().to_string(), e["state"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(said.first().map(|(e, s)| (e.as_str(), s.as_str())), Some(("started", "starting")), "{said:?}");
    assert_eq!(said.last().map(|(e, _)| e.as_str()), Some("stopped"), "{said:?}");
    for pid in started {
        wait_for("the server's group to be gone", || !alive(pid));
    }
}

#[test]
fn a_workspace_s_settings_cannot_auto_approve_their_own_tools() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join(".cline")).unwrap();
    let everything =
        json!({"command": "node", "args": [node_server("server-everything"), "stdio"], "autoApprove": ["get-sum"]});
    std::fs::write(ws.path().join(".cline/mcp.json"), json!({"mcpServers": {"everything": everything}}).to_string())
        .unwrap();
    let cfg_home = home.path().display().to_string();
    let env = [("XDG_CONFIG_HOME", cfg_home.as_str())];
    let server = Server::start(vec![
        anthropic(&use_mcp("everything", "get-sum", r#"{"a": 1, "b": 1}"#)),
        anthropic(&completion("done")),
    ]);
    let base: Vec<String> = anthropic_args(&server).into_iter().filter(|a| a != "--yolo").collect();
    let args = args_with(&base, &["--trust-workspace", "--no-save", "t"]);
    let r = run_interactive_env(ws.path(), &args, &env, b"n\n", LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stderr.contains("Use MCP tool get-sum on server everything with arguments"), "asked: {}", r.stderr);
    let reqs = server.requests();
    assert_eq!(reqs[1].last_user().lines().nth(1), Some("The user denied this operation."), "{}", reqs[1].last_user());
    // The consent names what is not honoured.
    let cwd = ws.path().display().to_string();
    let r = run_cmd("mcp", ws.path(), &["list", "--cwd", &cwd], &env, LIMIT);
    assert!(r.stderr.contains("its autoApprove is not honoured from a repository's settings"), "{}", r.stderr);
}

/// `mcp list --json` stays JSON whatever a server names its tools (a bidirectional override,
/// which a terminal acts on, in JSON's own escape), and a server whose `cwd` is missing is told
/// by its directory, not as a program not found on PATH.
#[test]
fn mcp_list_json_is_json_with_a_servers_odd_names_and_a_missing_cwd_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let odd = raw_server(
        dir.path(),
        "odd",
        "CAPS = {\"tools\": {}}\ndef answer(method, params):\n    return {\"tools\": [{\"name\": \"a\\u202eb\\u009b\", \"inputSchema\": {\"type\": \"object\"}}]}\n",
    );
    let mut lost = raw_server(dir.path(), "lost", "CAPS = {}\ndef answer(method, params):\n    return {}\n");
    lost["cwd"] = json!("/nonexistent-agent-min-dir");
    let cfg = settings(dir.path(), json!({"odd": odd, "lost": lost}));
    let r = run_cmd("mcp", dir.path(), &["list", "--json", "--mcp-config", &cfg], &[], LIMIT);
    let lines: Vec<Value> =
        r.stdout.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:?}"))).collect();
    let odd = lines.iter().find(|s| s["server"] == "odd").expect(&r.stdout);
    assert_eq!(odd["tools"], json!(["a\u{202e}b\u{9b}"]), "{}", r.stdout);
    assert!(!r.stdout.contains('\u{202e}') && !r.stdout.contains('\u{9b}'), "escaped: {}", r.stdout);
    let lost = lines.iter().find(|s| s["server"] == "lost").expect(&r.stdout);
    let error = lost["error"].as_str().unwrap_or_default();
    assert!(error.contains("its working directory /nonexistent-agent-min-dir does not exist"), "{}", r.stdout);
}

/// A server not up when the first request goes out (an `npx -y` server's first run downloads
/// itself) goes on starting, as Cline's does: its tools are offered from the request after it
/// is ready (a `ready` event), and a call before then is told it is still starting. The server
/// waits for a file the model's command writes, and writes one as it lists: no step waits for
/// a time.
#[test]
fn a_server_slower_than_the_startup_wait_is_offered_once_it_is_ready() {
    let ws = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // In the workspace: the model's command may write there (the sandbox keeps it there).
    let (go, ready) = (ws.path().join("GO"), ws.path().join("READY"));
    let body = format!(
        r#"import os
CAPS = {{"tools": {{}}}}
while not os.path.exists({go:?}):
    time.sleep(0.02)
def answer(method, params):
    if method == "tools/list":
        return {{"tools": [{{"name": "late_tool", "description": "Arrived late.", "inputSchema": {{"type": "object"}}}}]}}
    if method == "prompts/list":
        open({ready:?}, "w").close()
        return {{"prompts": []}}
    if method == "resources/list":
        return {{"resources": []}}
    return {{"resourceTemplates": []}}
"#,
        go = go.display().to_string(),
        ready = ready.display().to_string()
    );
    let late = raw_server(dir.path(), "late", &body);
    let cfg = settings(dir.path(), json!({"late": late}));
    let start = "touch GO; for i in $(seq 600); do [ -e READY ] && break; sleep 0.1; done".to_string();
    let server = Server::start(vec![
        anthropic(&use_mcp("late", "late_tool", "{}")),
        anthropic(&tool("execute_command", &[("command", &start), ("requires_approval", "false")])),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let args = args_with(&base, &["--mcp-config", &cfg, "--mcp-startup-timeout", "1", "--json", "t"]);
    let r = run_agent(ws.path(), &args, &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stderr.contains("MCP: server \"late\""), "{}", r.stderr);
    assert!(r.stderr.contains("it goes on starting"), "{}", r.stderr);
    let reqs = server.requests();
    let system = |k: usize| reqs[k].body["system"][0]["text"].as_str().unwrap().to_string();
    assert!(!system(0).contains("late_tool"), "not offered before it is ready");
    assert!(
        reqs[1].last_user().contains("Server \"late\" is still starting"),
        "a call before then: {}",
        reqs[1].last_user()
    );
    // READY is written while it lists, after it answered `initialize`: the next request waits
    // for its lists and offers its tool, after a `ready` event.
    assert!(system(2).contains("late_tool"), "the request after it is ready offers its tool");
    let events = events::parse(&r.stdout);
    let ready_at = events
        .iter()
        .position(|e| e["type"] == "mcp_server" && e["event"] == "ready")
        .unwrap_or_else(|| panic!("no ready event: {}", r.stdout));
    assert_eq!(events[ready_at]["state"], "connected", "{}", events[ready_at]);
    let first = events::of(&events, "mcp_server")[0].clone();
    assert_eq!((first["event"].as_str(), first["state"].as_str()), (Some("started"), Some("starting")));
    let before = events[..ready_at].iter().filter(|e| e["type"] == "request_started").count();
    assert_eq!(before, 2, "ready before the third request");
}
