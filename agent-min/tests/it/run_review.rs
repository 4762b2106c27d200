//! The adversarial review of the merged main, end to end: each test is one finding, run through
//! the real binary, the real curl and the scripted server, as the user who relies on the agent
//! and the attacker who controls the model (or its server).

use crate::common;

use std::time::Duration;

use common::*;

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn a_server_streaming_one_endless_sse_line_is_refused_not_buffered() {
    let ws = tempfile::tempdir().unwrap();
    let mut body = b"event: content_block_delta\ndata: ".to_vec();
    body.resize(body.len() + 40 * 1024 * 1024, b'x');
    let endless = Resp { body, chunk: 1024 * 1024, ..anthropic("") };
    let server = Server::start(vec![endless]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--no-save", "t"]), &[("ANTHROPIC_API_KEY", KEY)], LIMIT);
    assert_ne!(r.code, Some(0), "{}", r.all());
    assert!(r.all().contains("stream line longer than 16 MiB"), "{}", r.all());
    assert_eq!(server.requests().len(), 1, "a refused stream is not retried");
}

#[test]
fn under_yolo_a_hook_the_model_writes_during_the_run_does_not_run_outside_the_sandbox() {
    let ws = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let plant = "mkdir -p .clinerules/hooks && printf '#!/bin/sh\\ntouch hook-ran\\necho {}\\n' > .clinerules/hooks/PreToolUse && chmod +x .clinerules/hooks/PreToolUse";
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", plant), ("requires_approval", "false")])),
        anthropic(&tool("list_files", &[("path", ".")])),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let h = home.path().display().to_string();
    let state = format!("{h}/.state");
    let envs = [("ANTHROPIC_API_KEY", KEY), ("HOME", h.as_str()), ("XDG_STATE_HOME", state.as_str())];
    let r = run_agent(ws.path(), &args_with(&base, &["--sandbox", "off", "t"]), &envs, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(ws.path().join(".clinerules/hooks/PreToolUse").is_file(), "the command planted the hook: {}", r.all());
    assert!(!ws.path().join("hook-ran").exists(), "a hook planted by the model ran unasked: {}", r.all());
    assert!(r.all().contains("does not approve the workspace's hooks"), "{}", r.all());
    // Issue 25, finding 5: the next --yolo run does not approve it either (a run wrote it);
    // only the person does, here with --trust-workspace.
    let again = Server::start(vec![anthropic(&tool("list_files", &[("path", ".")])), anthropic(&completion("done"))]);
    let base = anthropic_args(&again);
    let r = run_agent(ws.path(), &args_with(&base, &["--sandbox", "off", "t"]), &envs, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!ws.path().join("hook-ran").exists(), "{}", r.all());
    assert!(r.all().contains("--yolo does not approve the workspace's hooks"), "{}", r.all());
    let again = Server::start(vec![anthropic(&tool("list_files", &[("path", ".")])), anthropic(&completion("done"))]);
    let base = anthropic_args(&again);
    let r = run_agent(ws.path(), &args_with(&base, &["--sandbox", "off", "--trust-workspace", "t"]), &envs, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(ws.path().join("hook-ran").exists(), "{}", r.all());
}

#[test]
fn history_shows_a_saved_task_with_its_escape_sequences_escaped() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = Server::start(vec![anthropic(&completion("done"))]);
    let base = anthropic_args(&server);
    let st = state.path().display().to_string();
    let envs = [("ANTHROPIC_API_KEY", KEY), ("XDG_STATE_HOME", st.as_str())];
    let task = "fix it\x1b]0;owned\x07\x1b[2J now";
    let r = run_agent(ws.path(), &args_with(&base, &[task]), &envs, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let h = run_cmd("history", ws.path(), &[], &envs, LIMIT);
    assert_eq!(h.code, Some(0), "{}", h.all());
    assert!(h.stdout.contains("fix it\\x1b]0;owned\\x07\\x1b[2J now"), "{}", h.stdout);
    assert!(!h.stdout.contains('\x1b') && !h.stdout.contains('\x07'), "{:?}", h.stdout);
}

#[test]
fn a_reply_streaming_text_without_end_is_refused_at_its_cap() {
    let ws = tempfile::tempdir().unwrap();
    let big = "All work and no play. ".repeat(20 * 1024 * 1024 / 22);
    let endless = Resp { chunk: 1 << 20, ..anthropic_with(&big, 64 * 1024, "end_turn") };
    let server = Server::start(vec![endless]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--no-save", "t"]), &[("ANTHROPIC_API_KEY", KEY)], LIMIT);
    assert_ne!(r.code, Some(0), "{}", &r.stderr);
    assert!(r.stderr.contains("passed 16 MiB of text without a complete tool call"), "{}", &r.stderr);
    assert_eq!(server.requests().len(), 1, "a refused reply is not retried");
}

#[test]
fn a_native_reply_streaming_text_without_end_is_refused_at_the_same_cap() {
    // Native replies used to keep 8 MiB of text and drop the rest without a word.
    let ws = tempfile::tempdir().unwrap();
    let big = "All work and no play. ".repeat(20 * 1024 * 1024 / 22);
    let endless = Resp { chunk: 1 << 20, ..anthropic_with(&big, 64 * 1024, "end_turn") };
    let server = Server::start(vec![endless]);
    let base = anthropic_args(&server);
    let args = args_with(&base, &["--no-save", "--tool-calls", "native", "t"]);
    let r = run_agent(ws.path(), &args, &[("ANTHROPIC_API_KEY", KEY)], LIMIT);
    assert_ne!(r.code, Some(0), "{}", &r.stderr);
    assert!(r.stderr.contains("passed 16 MiB of text without a complete tool call"), "{}", &r.stderr);
    assert_eq!(server.requests().len(), 1, "a refused reply is not retried");
}

#[test]
fn mcp_list_starts_curl_for_an_http_server_without_the_api_keys_in_its_environment() {
    let ws = tempfile::tempdir().unwrap();
    let tools = tempfile::tempdir().unwrap();
    let (bin, log) = (tools.path().join("bin"), tools.path().join("curl-env.log"));
    std::fs::create_dir_all(&bin).unwrap();
    // A curl that records its environment and fails as an unreachable server would.
    std::fs::write(bin.join("curl"), format!("#!/bin/sh\nenv >> '{}'\nexit 7\n", log.display())).unwrap();
    std::fs::set_permissions(bin.join("curl"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config = tools.path().join("mcp.json");
    let servers =
        r#"{"mcpServers": {"web": {"type": "streamableHttp", "url": "http://127.0.0.1:9/mcp", "timeout": 3}}}"#;
    std::fs::write(&config, servers).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let openai_key = "sk-openai-SECRET-77aa11";
    let cfg = config.display().to_string();
    let envs = [("PATH", path.as_str()), ("OPENAI_API_KEY", openai_key)];
    let r = run_cmd("mcp", ws.path(), &["list", "--mcp-config", &cfg], &envs, LIMIT);
    let env = std::fs::read_to_string(&log).unwrap_or_else(|_| panic!("the curl wrapper never ran: {}", r.all()));
    assert!(env.contains("PATH="), "{env}");
    assert!(!env.contains(KEY) && !env.contains(openai_key), "curl's environment holds a key:\n{env}");
}
