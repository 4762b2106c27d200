//! End-to-end: the real binary, real curl, a scripted LLM server on 127.0.0.1, a temp workspace.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::json;

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn anthropic_task_lists_reads_writes_edits_runs_a_command_and_completes() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("hello.sh"), "#!/bin/sh\necho \"Hello, $1\"\n").unwrap();
    let write_content = "\n    indented first line ✓\nsecond\n";
    let diff = "\n------- SEARCH\necho \"Hello, $1\"\n=======\necho \"Hello, $1!\"\n+++++++ REPLACE\n";
    let server = Server::start(vec![
        anthropic(&format!("<thinking>Look first.</thinking>\n{}", tool("list_files", &[("path", ".")]))),
        anthropic(&tool("read_file", &[("path", "hello.sh")])),
        anthropic(&tool("write_to_file", &[("path", "notes/n.txt"), ("content", write_content)])),
        anthropic(&tool("replace_in_file", &[("path", "hello.sh"), ("diff", diff)])),
        anthropic(&tool("execute_command", &[("command", "sh hello.sh Ada"), ("requires_approval", "false")])),
        anthropic(&completion("Greeting fixed.")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["make hello.sh excited"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());

    // The tools really ran.
    assert_eq!(std::fs::read_to_string(ws.path().join("notes/n.txt")).unwrap(), "    indented first line ✓\nsecond");
    assert_eq!(std::fs::read_to_string(ws.path().join("hello.sh")).unwrap(), "#!/bin/sh\necho \"Hello, $1!\"\n");

    // And each result went back to the model as the next user message, in Cline's framing.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 6);
    assert_eq!(reqs[0].path, "/v1/messages");
    assert_eq!(reqs[0].header("x-api-key"), Some(KEY));
    assert_eq!(reqs[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(reqs[0].body["stream"], true);
    assert!(reqs[0].body["system"][0]["text"].as_str().unwrap().contains("## replace_in_file"));
    let first = reqs[0].last_user();
    assert!(first.starts_with("<task>\nmake hello.sh excited\n</task>"), "{first}");
    assert!(first.contains("<environment_details>") && first.contains("hello.sh"), "{first}");
    let r1 = reqs[1].last_user();
    assert!(r1.starts_with("[list_files for '.'] Result:\nhello.sh"), "{r1}");
    let r2 = reqs[2].last_user();
    assert!(r2.contains("[read_file for 'hello.sh'] Result:\n1 | #!/bin/sh\n2 | echo"), "{r2}");
    assert!(reqs[3]
        .last_user()
        .contains("[write_to_file for 'notes/n.txt'] Result:\nThe content was successfully saved"));
    assert!(reqs[4]
        .last_user()
        .contains("[replace_in_file for 'hello.sh'] Result:\nThe content was successfully saved"));
    let r5 = reqs[5].last_user();
    assert!(
        r5.contains(
            "[execute_command for 'sh hello.sh Ada'] Result:\nCommand executed successfully (exit code 0).\nOutput:\nHello, Ada!"
        ),
        "{r5}"
    );
    // The assistant's own reply is in the history.
    let hist = reqs[5].body["messages"].as_array().unwrap();
    assert_eq!(hist.len(), 11);
    assert!(hist[1]["content"].as_str().unwrap().contains("<list_files>"));

    // The terminal: tool lines, the result, token usage; <thinking> tags stripped.
    assert!(r.stderr.contains("● list_files ."), "{}", r.stderr);
    assert!(r.stderr.contains("● execute_command sh hello.sh Ada"));
    assert!(r.stderr.contains("Greeting fixed."));
    assert!(r.stderr.contains("Look first."));
    assert!(!r.stderr.contains("<thinking>"));
    // Anthropic reports input tokens up front and output tokens at the end, after the tool: the
    // loop reads on (discarding the rest) until they arrive, so nothing is estimated.
    assert!(r.stderr.contains("Tokens: 600 in, 252 out (cache: 42 read, 0 written) over 6 requests\n"), "{}", r.stderr);
    assert!(!r.stderr.contains("estimate"), "{}", r.stderr);
}

#[test]
fn openai_compatible_task_completes_with_bearer_key_and_usage() {
    openai_task_completes_with_bearer_key_and_usage("openai", "OPENAI_API_KEY");
}

/// `--provider openrouter` (the Cline CLI's `-P openrouter`) is OpenAI's wire format with
/// OpenRouter's key: it was `openai`'s, at api.openai.com unless `--base-url` said otherwise.
#[test]
fn openrouter_is_openai_s_wire_format_with_its_own_key() {
    openai_task_completes_with_bearer_key_and_usage("openrouter", "OPENROUTER_API_KEY");
    // Without its key, and without --base-url, it names its own variable.
    let ws = tempfile::tempdir().unwrap();
    let r = run_agent(ws.path(), &["--provider", "openrouter", "--no-save", "t"], &[("OPENAI_API_KEY", KEY)], LIMIT);
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert!(r.stderr.contains("OPENROUTER_API_KEY is not set"), "{}", r.stderr);
    // Without --model, Cline's default there; a 401 names OpenRouter's variable.
    let unauthorized = status(401, serde_json::json!({"error": {"message": "No auth credentials found", "code": 401}}));
    let server = Server::start(vec![unauthorized]);
    let args = ["-P", "openrouter", "--base-url", &server.openai_url(), "--no-save", "t"];
    let r = run_agent(ws.path(), &args, &[("OPENROUTER_API_KEY", KEY), ("ANTHROPIC_API_KEY", "")], LIMIT);
    assert_eq!(server.requests()[0].body["model"], "anthropic/claude-sonnet-5");
    assert!(r.stderr.contains("openrouter API error: HTTP 401"), "{}", r.stderr);
    assert!(r.stderr.contains("the key sent was read from OPENROUTER_API_KEY"), "{}", r.stderr);
    // Without --provider, a server named by --base-url is not sent OpenRouter's key.
    let server = Server::start(vec![openai(&completion("done"))]);
    let args = ["--base-url", &server.openai_url(), "--model", "m", "--no-save", "t"];
    let r = run_agent(ws.path(), &args, &[("OPENROUTER_API_KEY", KEY), ("ANTHROPIC_API_KEY", "")], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(server.requests()[0].header("authorization"), None);
}

/// Without --provider, a server named by --base-url is OpenAI-compatible (unless its host is
/// one provider's own): the Anthropic key, set for other work, is not sent there — it was, as
/// `x-api-key` on `/v1/messages`, because Anthropic's key was the first one set.
#[test]
fn a_server_named_by_base_url_is_never_sent_the_anthropic_key_because_it_is_set() {
    let ws = tempfile::tempdir().unwrap();
    const GROQ: &str = "gsk-other-provider-key-123";
    let server = Server::start(vec![openai(&completion("done")), openai(&completion("done"))]);
    let args = ["--base-url", &server.openai_url(), "--model", "m", "--no-save", "t"];
    for envs in [vec![("ANTHROPIC_API_KEY", KEY)], vec![("ANTHROPIC_API_KEY", KEY), ("OPENAI_API_KEY", GROQ)]] {
        let r = run_agent(ws.path(), &args, &envs, LIMIT);
        assert_eq!(r.code, Some(0), "{}", r.all());
    }
    let reqs = server.requests();
    for req in &reqs {
        assert_eq!(req.path, "/v1/chat/completions");
        assert!(!format!("{:?}", req.headers).contains(KEY), "{:?}", req.headers);
    }
    assert_eq!(reqs[0].header("authorization"), None);
    assert_eq!(reqs[1].header("authorization"), Some(format!("Bearer {GROQ}").as_str()));
}

fn openai_task_completes_with_bearer_key_and_usage(provider: &str, key_var: &str) {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        openai(&tool("write_to_file", &[("path", "a.txt"), ("content", "héllo 🦀\n")])),
        openai(&completion("wrote a.txt")),
    ]);
    let mut base = openai_args(&server);
    base[1] = provider.to_string();
    let r =
        run_agent(ws.path(), &args_with(&base, &["write a file"]), &[(key_var, KEY), ("ANTHROPIC_API_KEY", "")], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(std::fs::read_to_string(ws.path().join("a.txt")).unwrap(), "héllo 🦀");
    let reqs = server.requests();
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    assert_eq!(reqs[0].header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    assert_eq!(reqs[0].body["stream_options"]["include_usage"], true);
    assert_eq!(reqs[0].body["messages"][0]["role"], "system");
    // The usage chunk after the tool is read: the server's counts, not estimates.
    assert!(r.stderr.contains("Tokens: 100 in, 18 out (cache: 0 read, 0 written) over 2 requests\n"), "{}", r.stderr);
}

#[test]
fn usage_from_complete_streams_is_exact() {
    // A reply without a tool is read to its end: the server's usage is reported as is.
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![openai("thinking aloud, no tool")]);
    let base = openai_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--max-mistakes", "1", "t"]), &[("OPENAI_API_KEY", KEY)], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    let line = r.stderr.lines().find(|l| l.starts_with("Tokens:")).unwrap();
    assert_eq!(line, "Tokens: 50 in, 9 out (cache: 0 read, 0 written) over 1 request");
}

#[test]
fn no_tool_reply_gets_clines_nudge_and_counts_a_mistake() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![anthropic("I think the answer is 42."), anthropic(&completion("42"))]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["what is it"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let nudge = reqs[1].last_user();
    assert!(
        nudge.starts_with("[ERROR] You did not use a tool in your previous response! Please retry with a tool use."),
        "{nudge}"
    );
    assert!(nudge.contains("# Reminder: Instructions for Tool Use"));
}

#[test]
fn mistake_limit_under_yolo_stops_with_exit_1() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        anthropic("no tool here"),
        anthropic(&tool("read_file", &[])), // missing required 'path'
        anthropic("still no tool"),
        anthropic(&completion("never reached")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--max-mistakes", "3", "loop"]), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(r.stderr.contains("3 mistakes in a row"), "{}", r.stderr);
    assert!(r.stderr.contains("--max-mistakes 3"));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "must stop before a 4th request");
    let missing = reqs[2].last_user();
    assert!(missing.contains("[read_file for 'undefined'] Result:\nThe tool execution failed with the following error:\n<error>\nMissing value for required parameter 'path'. Please retry with complete response."), "{missing}");
}

/// As in Cline: listing a path `.clineignore` blocks counts as a mistake (ListFilesToolHandler
/// counts it "so repeated attempts at blocked paths accumulate"); reading one does not.
#[test]
fn listing_an_ignored_path_is_a_mistake_and_reading_one_is_not() {
    for (name, stops) in [("list_files", true), ("read_file", false)] {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join(".clineignore"), "secrets/\n").unwrap();
        std::fs::create_dir(ws.path().join("secrets")).unwrap();
        std::fs::create_dir(ws.path().join("secrets/sub")).unwrap();
        std::fs::write(ws.path().join("secrets/a"), "x").unwrap();
        let server = Server::start(vec![
            anthropic(&tool(name, &[("path", "secrets/a")])),
            anthropic(&tool(name, &[("path", "secrets/sub")])),
            anthropic(&completion("done")),
        ]);
        let base = anthropic_args(&server);
        let r = run_agent(ws.path(), &args_with(&base, &["--max-mistakes", "2", "t"]), &[], LIMIT);
        let reqs = server.requests();
        assert!(reqs[1].last_user().contains("blocked by the .clineignore file"), "{name}: {}", reqs[1].last_user());
        if stops {
            assert_eq!((r.code, reqs.len()), (Some(1), 2), "{name}: {}", r.all());
            assert!(r.stderr.contains("2 mistakes in a row"), "{name}: {}", r.stderr);
        } else {
            assert_eq!((r.code, reqs.len()), (Some(0), 3), "{name}: {}", r.all());
        }
    }
}

#[test]
fn a_successful_tool_resets_the_mistake_count() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        anthropic("no tool"),
        anthropic(&tool("list_files", &[("path", ".")])),
        anthropic("no tool"),
        anthropic(&completion("ok")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--max-mistakes", "2", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
}

#[test]
fn http_429_is_retried_then_succeeds() {
    let ws = tempfile::tempdir().unwrap();
    let mut limited = status(429, json!({"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}));
    limited.headers.push(("retry-after".into(), "0".into()));
    let server = Server::start(vec![limited, anthropic(&completion("after retry"))]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(server.requests().len(), 2);
    assert!(r.stderr.contains("HTTP 429: slow down"), "{}", r.stderr);
    assert!(r.stderr.contains("retry 1 of 3"));
}

#[test]
fn persistent_500_exits_1_naming_provider_status_and_message() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let err = status(500, json!({"type":"error","error":{"type":"api_error","message":"Internal server boom"}}));
    let server = Server::start(vec![err.clone(), err.clone(), err.clone(), err.clone(), anthropic(&completion("x"))]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--state-dir", &state_dir, "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert_eq!(server.requests().len(), 4, "1 try + 3 retries");
    let last = r.stderr.lines().find(|l| l.starts_with("Task failed:")).unwrap_or_else(|| panic!("{}", r.stderr));
    assert!(last.contains("anthropic API error: HTTP 500: Internal server boom"), "{last}");
    assert!(last.contains("gave up after 4 attempts"));
    // Where Cline asks whether to retry, the task is saved: `resume` asks again, the same task.
    let r = run_cmd("resume", ws.path(), &args_with(&base, &["--last", "--state-dir", &state_dir]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 5);
    let first = text_of(&reqs[4].body["messages"][0]["content"]);
    assert!(first.contains("<task>\nt\n</task>"), "{first}");
}

/// At a terminal, when the retries run out the person is asked whether to try again, as
/// Cline's `api_req_failed` asks; yes tries again (and its retries afresh), no ends the task.
#[test]
fn at_a_terminal_a_request_that_failed_asks_whether_to_retry() {
    let ws = tempfile::tempdir().unwrap();
    let err = status(500, json!({"type":"error","error":{"type":"api_error","message":"Internal server boom"}}));
    let mut script = vec![err.clone(); 4];
    script.push(anthropic(&completion("recovered")));
    let server = Server::start(script);
    let base = anthropic_args(&server);
    let r = run_interactive(ws.path(), &args_with(&base, &["--no-save", "t"]), b"y\n", LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(server.requests().len(), 5, "4 attempts, then the one the person asked for");
    assert!(
        r.all()
            .contains("HTTP 500: Internal server boom (api_error) (gave up after 4 attempts) — retry? [y]es / [N]o: "),
        "{}",
        r.all()
    );
    // No ends it, as before.
    let server = Server::start(vec![err.clone(); 4]);
    let base = anthropic_args(&server);
    let r = run_interactive(ws.path(), &args_with(&base, &["--no-save", "t"]), b"n\n", LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert_eq!(server.requests().len(), 4);
}

#[test]
fn http_401_is_not_retried() {
    let ws = tempfile::tempdir().unwrap();
    let err =
        status(401, json!({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}));
    let server = Server::start(vec![err, anthropic(&completion("x"))]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["t"]), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert_eq!(server.requests().len(), 1);
    assert!(r.stderr.contains("HTTP 401: invalid x-api-key"), "{}", r.stderr);
}

#[test]
fn mid_stream_overloaded_error_is_retried() {
    let ws = tempfile::tempdir().unwrap();
    let mut body = anthropic_body("Partial text that will be discarded", 5, "end_turn");
    let cut = body.find("event: content_block_stop").unwrap();
    body.truncate(cut);
    body.push_str("event: error\r\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\r\n\r\n");
    let overloaded = Resp { body: body.into_bytes(), ..anthropic("") };
    let server = Server::start(vec![overloaded, anthropic(&completion("second time lucky"))]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(server.requests().len(), 2);
    assert!(r.stderr.contains("HTTP 529: Overloaded"), "{}", r.stderr);
    // The discarded attempt is not in the history.
    let hist = server.requests()[1].body["messages"].as_array().unwrap().len();
    assert_eq!(hist, 1);
}

/// Cline retries any failure of the stream but a spend limit: a `timeout_error` too (it was
/// not retried, and the task failed).
#[test]
fn mid_stream_timeout_error_is_retried() {
    let ws = tempfile::tempdir().unwrap();
    let mut body = anthropic_body("Partial text that will be discarded", 5, "end_turn");
    let cut = body.find("event: content_block_stop").unwrap();
    body.truncate(cut);
    body.push_str("event: error\r\ndata: {\"type\":\"error\",\"error\":{\"type\":\"timeout_error\",\"message\":\"Request timed out\"}}\r\n\r\n");
    let timed_out = Resp { body: body.into_bytes(), ..anthropic("") };
    let server = Server::start(vec![timed_out, anthropic(&completion("second time lucky"))]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(server.requests().len(), 2);
    assert!(r.stderr.contains("Request timed out"), "{}", r.stderr);
}

/// OpenRouter's mid-stream failures (a timeout with its status, a message with no type, a
/// reply that ends with `finish_reason: "error"`) are sent again, as Cline sends again any
/// stream that failed; they ended the task. A gateway's `"error": null` on every chunk is no
/// error (every request to it failed).
#[test]
fn openai_mid_stream_failures_are_retried_and_a_null_error_is_none() {
    let broken = |tail: &str| {
        // The first few chunks of a reply, then the failure.
        let whole = String::from_utf8(openai(&completion("discarded")).body).unwrap();
        let mut body = whole[..whole.match_indices("data: ").nth(4).unwrap().0].to_string();
        body.push_str(tail);
        Resp { body: body.into_bytes(), ..openai("") }
    };
    let timed_out = broken("data: {\"error\":{\"code\":408,\"message\":\"Request timed out\"}}\n\n");
    let gone = broken("data: {\"error\":{\"message\":\"Provider disconnected unexpectedly\"}}\n\n");
    let ended =
        broken("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"error\"}]}\n\ndata: [DONE]\n\n");
    let mut nulls = String::from_utf8(openai(&completion("second time lucky")).body).unwrap();
    nulls =
        nulls.replace("\"object\":\"chat.completion.chunk\"", "\"object\":\"chat.completion.chunk\",\"error\":null");
    assert!(nulls.contains("\"error\":null"));
    let fine = Resp { body: nulls.into_bytes(), ..openai("") };
    let server = Server::start(vec![timed_out, gone, ended, fine]);
    let ws = tempfile::tempdir().unwrap();
    let r = run_agent(ws.path(), &args_with(&openai_args(&server), &["t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(server.requests().len(), 4, "{}", r.stderr);
    assert!(r.stdout.contains("second time lucky"), "{}", r.all());
    // The same request each time: nothing of a discarded attempt is kept.
    let bodies: Vec<_> = server.requests().iter().map(|q| q.body.clone()).collect();
    assert!(bodies.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn tool_cut_by_max_tokens_is_not_executed() {
    let ws = tempfile::tempdir().unwrap();
    let cut = "I'll write it.\n<write_to_file>\n<path>big.txt</path>\n<content>\nline 1\nline 2\n";
    let server =
        Server::start(vec![anthropic_with(cut, 5, "max_tokens"), anthropic(&completion("gave up on big file"))]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["write big"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!ws.path().join("big.txt").exists(), "a cut-off write_to_file must never run");
    let reqs = server.requests();
    let told = reqs[1].last_user();
    assert!(told.contains("cut off because it reached the maximum output token limit"), "{told}");
    assert!(told.contains("<write_to_file> tool call. That incomplete tool call was NOT executed"));
    assert!(told.contains("replace_in_file"));
    assert!(r.stderr.contains("it was not executed"), "{}", r.stderr);
}

#[test]
fn openai_length_finish_also_blocks_the_cut_tool() {
    let ws = tempfile::tempdir().unwrap();
    let cut =
        "<execute_command>\n<command>touch should-not-exist</command>\n<requires_approval>false</requires_approval>\n";
    let server = Server::start(vec![openai_with(cut, 3, "length"), openai(&completion("ok"))]);
    let base = openai_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["t"]), &[("OPENAI_API_KEY", KEY)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!ws.path().join("should-not-exist").exists());
}

#[test]
fn with_one_tool_per_reply_a_second_tool_in_one_reply_is_not_executed_and_the_model_is_told() {
    let ws = tempfile::tempdir().unwrap();
    // Both tools arrive in one delta, so the parser sees both before the loop stops reading.
    let two = format!(
        "{}\n{}",
        tool("list_files", &[("path", ".")]),
        tool("write_to_file", &[("path", "second.txt"), ("content", "x")])
    );
    let server = Server::start(vec![anthropic_with(&two, 10_000, "end_turn"), anthropic(&completion("ok"))]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--one-tool-per-reply", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!ws.path().join("second.txt").exists());
    let next = server.requests()[1].last_user();
    assert!(next.starts_with("[list_files for '.'] Result:"), "{next}");
    assert!(next.contains("Tool [write_to_file] was not executed because a tool has already been used in this message. Only one tool may be used per message."), "{next}");
    let hist = server.requests()[1].body["messages"][1]["content"].as_str().unwrap().to_string();
    assert!(!hist.contains("[Response interrupted by a tool use result."), "only shown, as in Cline: {hist}");
}

#[test]
fn failed_edit_is_a_mistake_and_returns_the_file() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("f.txt"), "alpha\n").unwrap();
    let diff = "------- SEARCH\nnot there\n=======\nx\n+++++++ REPLACE";
    let server = Server::start(vec![
        anthropic(&tool("replace_in_file", &[("path", "f.txt"), ("diff", diff)])),
        anthropic(&completion("ok")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(std::fs::read_to_string(ws.path().join("f.txt")).unwrap(), "alpha\n");
    let next = server.requests()[1].last_user();
    assert!(next.contains("does not match anything in the file."), "{next}");
    assert!(next.contains("<file_content path=\"f.txt\">\nalpha\n"), "{next}");
}

#[test]
fn yolo_refuses_paths_outside_the_workspace() {
    let outer = tempfile::tempdir().unwrap();
    let ws = outer.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(outer.path().join("secret.txt"), "top secret").unwrap();
    std::os::unix::fs::symlink(outer.path().join("secret.txt"), ws.join("link.txt")).unwrap();
    let server = Server::start(vec![
        anthropic(&tool("read_file", &[("path", "../secret.txt")])),
        anthropic(&tool("write_to_file", &[("path", "link.txt"), ("content", "overwritten")])),
        anthropic(&completion("ok")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(&ws, &args_with(&base, &["t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert!(reqs[1].last_user().contains("outside the workspace"));
    assert!(!reqs[1].last_user().contains("top secret"));
    assert!(reqs[2].last_user().contains("outside the workspace"));
    assert_eq!(std::fs::read_to_string(outer.path().join("secret.txt")).unwrap(), "top secret");
}

#[test]
fn ask_followup_under_yolo_gets_clines_auto_answer() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        anthropic(&tool("ask_followup_question", &[("question", "Which file?")])),
        anthropic(&completion("ok")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let next = server.requests()[1].last_user();
    assert!(next.contains("[YOLO MODE: User input is not available in non-interactive mode."), "{next}");
    assert!(next.contains("\"Which file?\""));
}

#[test]
fn interactive_denial_with_feedback_goes_back_to_the_model() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "a.txt"), ("content", "x")])),
        anthropic(&completion("ok")),
    ]);
    let url = server.anthropic_url();
    let args = ["--no-save", "--provider", "anthropic", "--base-url", &url, "--tool-calls", "xml", "t"];
    let r = run_interactive(ws.path(), &args, b"please use b.txt instead\n", LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!ws.path().join("a.txt").exists());
    assert!(r.stderr.contains("Create a.txt — approve?"), "{}", r.stderr);
    assert!(r.stderr.contains("+x"), "diff preview missing: {}", r.stderr);
    let next = server.requests()[1].last_user();
    // Cline's framing: the feedback (pushed while asking), then the result.
    let framed = "The user provided the following feedback:\n<feedback>\nplease use b.txt instead\n</feedback>\n\n[write_to_file for 'a.txt'] Result:\nThe user denied this operation. The file was not created.";
    assert!(next.starts_with(framed), "{next}");
}

/// A file the denial's words mention follows `</feedback>`, in the feedback's block, before the
/// result, as Cline's `parseMentions` appends it to that block (it came after the result).
#[test]
fn a_file_mentioned_in_denial_feedback_follows_the_feedback() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("b.txt"), "the layout\n").unwrap();
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "a.txt"), ("content", "x")])),
        anthropic(&completion("ok")),
    ]);
    let url = server.anthropic_url();
    let args = ["--no-save", "--provider", "anthropic", "--base-url", &url, "--tool-calls", "xml", "t"];
    let r = run_interactive(ws.path(), &args, b"use the layout in @/b.txt\n", LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let next = server.requests()[1].last_user();
    let feedback = next.find("</feedback>\n\n<file_content path=\"b.txt\">").unwrap_or_else(|| panic!("{next}"));
    let content = next.find("</file_content>").unwrap();
    let result = next.find("[write_to_file for 'a.txt'] Result:").unwrap();
    assert!(feedback < content && content < result, "{next}");
}

/// Cline answers an empty reply as one without a tool: the no-tool reminder and a mistake (in
/// XML after its wait), never the same request again; --yolo stops at the mistake limit.
#[test]
fn an_empty_reply_is_answered_as_one_without_a_tool_and_counts_a_mistake() {
    for dialect in ["native", "xml"] {
        let ws = tempfile::tempdir().unwrap();
        let server = Server::start(vec![anthropic(""), anthropic(""), anthropic(""), anthropic(&completion("x"))]);
        let base = anthropic_args(&server);
        let r = run_agent(ws.path(), &args_with(&base, &["--tool-calls", dialect, "t"]), &[], LIMIT);
        assert_eq!(r.code, Some(1), "{dialect}: {}", r.all());
        assert!(r.stderr.contains("3 mistakes in a row"), "{dialect}: {}", r.stderr);
        let requests = server.requests();
        assert_eq!(requests.len(), 3, "{dialect}: no request after the third mistake");
        let next = requests[1].last_user();
        assert!(next.starts_with("[ERROR] You did not use a tool in your previous response!"), "{dialect}: {next}");
        let msgs = requests[1].body["messages"].as_array().unwrap();
        assert_eq!(text_of(&msgs[msgs.len() - 2]["content"]), "Failure: I did not provide a response.", "{dialect}");
    }
}

#[test]
fn turn_limit_exits_1() {
    let ws = tempfile::tempdir().unwrap();
    let list = tool("list_files", &[("path", ".")]);
    let server = Server::start(vec![anthropic(&list), anthropic(&list), anthropic(&list)]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--max-turns", "2", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(r.stderr.contains("turn limit"), "{}", r.stderr);
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn five_hundred_turns_do_not_exhaust_the_main_thread_stack() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("f.txt"), "x\n").unwrap();
    // Two spellings of the path in turn: Cline's loop detection stops identical calls in a row.
    let path = |i: usize| if i.is_multiple_of(2) { "f.txt" } else { "./f.txt" };
    let mut script: Vec<Resp> =
        (0..499).map(|i| anthropic_with(&tool("read_file", &[("path", path(i))]), 40, "end_turn")).collect();
    script.push(anthropic(&completion("500 turns")));
    let server = Server::start(script);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["t"]), &[], Duration::from_secs(280));
    assert_eq!(r.code, Some(0), "{}", r.all().chars().rev().take(2000).collect::<String>());
    assert_eq!(server.requests().len(), 500);
    assert!(r.stderr.contains("over 500 requests"));
}

#[test]
fn interactive_mistake_limit_asks_for_guidance_and_sends_clines_feedback() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![anthropic("no tool"), anthropic("no tool"), anthropic(&completion("ok"))]);
    let url = server.anthropic_url();
    let args =
        ["--no-save", "--provider", "anthropic", "--base-url", &url, "--tool-calls", "xml", "--max-mistakes", "2", "t"];
    let r = run_interactive(ws.path(), &args, b"Try breaking it into smaller steps\n", LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stderr.contains("mistakes in a row"), "{}", r.stderr);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let next = reqs[2].last_user();
    assert!(next.contains("You seem to be having trouble proceeding. The user has provided the following feedback to help guide you:\n<feedback>\nTry breaking it into smaller steps\n</feedback>"), "{next}");
    // Before the environment details, as Cline's loadContext puts them after it.
    let (guidance, env) = (next.find("<feedback>\nTry").unwrap(), next.find("<environment_details>").unwrap());
    assert!(guidance < env, "{next}");
}

/// As Cline (`consecutiveIdenticalToolCount = 0` with the guidance): after the person's
/// guidance at the limit that loop detection raised, three more identical calls are warned of
/// again.
#[test]
fn guidance_at_the_limit_rearms_loop_detection() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("f.txt"), "x\n").unwrap();
    let read = tool("read_file", &[("path", "f.txt")]);
    let mut script: Vec<Resp> = (0..8).map(|_| anthropic(&read)).collect();
    script.push(anthropic(&completion("ok")));
    let server = Server::start(script);
    let url = server.anthropic_url();
    let args = ["--no-save", "--provider", "anthropic", "--base-url", &url, "--tool-calls", "xml", "t"];
    let r = run_interactive(ws.path(), &args, b"Read another file\n", LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 9, "{}", r.all());
    assert!(reqs[5].last_user().contains("<feedback>\nRead another file\n</feedback>"), "{}", reqs[5].last_user());
    let warning = "Tool [read_file] has been called 3 times consecutively with identical arguments.";
    assert!(!reqs[7].last_user().contains(warning), "{}", reqs[7].last_user());
    assert!(
        reqs[8].last_user().contains(warning),
        "the third identical call after the guidance: {}",
        reqs[8].last_user()
    );
}

#[test]
fn ollama_native_chat_streams_ndjson_with_num_ctx() {
    let ws = tempfile::tempdir().unwrap();
    let ndjson = |text: &str| {
        let mut body = String::new();
        for p in pieces(text, 6) {
            body.push_str(&json!({"model":"m","message":{"role":"assistant","content":p},"done":false}).to_string());
            body.push('\n');
        }
        body.push_str(&json!({"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":30,"eval_count":5}).to_string());
        body.push('\n');
        Resp {
            status: 200,
            headers: vec![("Content-Type".into(), "application/x-ndjson".into())],
            body: body.into_bytes(),
            chunk: 5,
            stall: Duration::ZERO,
            stall_at: 0,
            gate: None,
        }
    };
    let server = Server::start(vec![ndjson(&completion("from ollama")), ndjson(&completion("with a key"))]);
    let url = server.anthropic_url();
    let args =
        ["--provider", "ollama", "--base-url", &url, "--model", "qwen-test", "--num-ctx", "16384", "--yolo", "t"];
    let r = run_agent(ws.path(), &args, &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stderr.contains("from ollama"));
    let req = &server.requests()[0];
    assert_eq!(req.path, "/api/chat");
    assert_eq!(req.body["options"]["num_ctx"], 16384);
    assert_eq!(req.body["model"], "qwen-test");
    assert!(req.header("authorization").is_none() && req.header("x-api-key").is_none());
    // OLLAMA_API_KEY goes as a bearer token (Cline's `ollamaApiKey`), and is never shown.
    let key = "ollama-secret-key-123";
    let r = run_agent(ws.path(), &args, &[("OLLAMA_API_KEY", key)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(server.requests()[1].header("authorization"), Some(format!("Bearer {key}").as_str()));
    assert!(!r.all().contains(key));
}

/// Ollama's cloud API needs a key: a run there without one stops before any request, naming the
/// variable.
#[test]
fn ollamas_cloud_api_needs_its_key() {
    let ws = tempfile::tempdir().unwrap();
    let args = ["--provider", "ollama", "--base-url", "https://ollama.com", "--model", "gpt-oss:120b", "t"];
    let r = run_agent(ws.path(), &args, &[], LIMIT);
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert!(r.stderr.contains("OLLAMA_API_KEY is not set"), "{}", r.stderr);
}

#[test]
fn identical_calls_are_warned_at_three_and_stop_at_five_under_yolo() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("f.txt"), "x\n").unwrap();
    let read = tool("read_file", &[("path", "f.txt")]);
    let script: Vec<Resp> = (0..6).map(|_| anthropic(&read)).collect();
    let server = Server::start(script);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["t"]), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    let reqs = server.requests();
    // Request 4 answers the third identical call: Cline's warning follows the result.
    let warning = "Tool [read_file] has been called 3 times consecutively with identical arguments. This is not making progress. Please use a different tool or different arguments instead of repeating the same call.";
    let third = reqs[3].last_user();
    let (result, warned) = (third.find("[read_file for 'f.txt'] Result:"), third.find(warning));
    assert!(result.is_some() && warned > result, "{third}");
    assert!(!reqs[2].last_user().contains(warning));
    // The fifth identical call reaches the mistake limit: no sixth request under --yolo.
    assert_eq!(reqs.len(), 5, "{}", r.all());
}

/// Files made by real tools (python-docx, openpyxl, fpdf2, nbformat; legacy encodings by
/// Python's codecs): `scripts/make-document-fixtures.py`. (Two of them are PDFs: `pdf`, which
/// brings `documents`.)
#[cfg(feature = "pdf")]
#[test]
fn read_file_gives_the_text_of_documents_and_legacy_encodings_as_cline() {
    let ws = tempfile::tempdir().unwrap();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/documents");
    let names =
        ["report.docx", "sales.xlsx", "analysis.ipynb", "latin1.txt", "two-pages.pdf", "utf16.txt", "reportlab.pdf"];
    let mut replies = Vec::new();
    for n in names {
        std::fs::copy(fixtures.join(n), ws.path().join(n)).unwrap();
        replies.push(anthropic(&tool("read_file", &[("path", n)])));
    }
    replies.push(anthropic(&completion("Read them all.")));
    let server = Server::start(replies);
    let r = run_agent(ws.path(), &args_with(&anthropic_args(&server), &["read the documents"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    let result = |i: usize| reqs[i + 1].last_user();
    let docx = result(0);
    assert!(
        docx.starts_with("[read_file for 'report.docx'] Result:\n1 | Quarterly report\n2 | \n3 | Revenue rose 12 % in Q3.\n4 | \n5 | Item\tValue\n6 | \n7 | Region\n"),
        "{docx}"
    );
    let xlsx = result(1);
    assert!(
        xlsx.starts_with("[read_file for 'sales.xlsx'] Result:\n1 | --- Sheet: Sales ---\n2 | Region\tUnits\tPrice\tDate\tPaid\n3 | Nord\t12\t2.5\t2024-03-01\ttrue\n4 | Süd\t7\t0.1\t2023-12-31\tfalse\n5 | Total\t[Formula: SUM(B2:B3)]\n6 | \n7 | --- Sheet: Notes ---\n8 | \tonly B2\n"),
        "{xlsx}"
    );
    assert!(!xlsx.contains("hidden value"), "a hidden sheet is left out: {xlsx}");
    let nb = result(2);
    assert!(nb.contains("\"outputs\": [],") && nb.contains("\"x = 1 + 1\\n\",") && !nb.contains("stdout"), "{nb}");
    assert!(result(3).contains("1 | Le café et la crème brûlée sont très appréciés à Genève."), "{}", result(3));
    // As pdf-parse lays pages out (each after a blank line).
    let pdf = result(4);
    assert!(
        pdf.contains("1 | \n2 | \n3 | Hello from page one.\n4 | Second line.\n5 | \n6 | Page two says goodbye.\n"),
        "{pdf}"
    );
    assert!(result(5).contains("1 | Grüße aus Köln"), "{}", result(5));
    let pdf = result(6);
    assert!(
        pdf.contains("1 | \n2 | \n3 | Invoice 2024-001\n4 | Total due: 1,234.50 EUR\n5 | \n6 | Thank you.\n"),
        "{pdf}"
    );
    assert!(!reqs.iter().any(|q| q.last_user().contains("Cannot read text")));
}

/// The PDF parser runs in a child process (agent-min itself): a file it panics on — here a
/// real PDF whose pages lack their required `/MediaBox` — is refused with an error, and the run
/// goes on (a release build aborts on a panic, so in-process it would end the agent); a file the
/// parser refuses gets its error.
#[cfg(feature = "pdf")]
#[test]
fn a_pdf_the_parser_panics_on_is_refused_and_the_run_goes_on() {
    let ws = tempfile::tempdir().unwrap();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/documents");
    let good = std::fs::read(fixtures.join("two-pages.pdf")).unwrap();
    let at = good.windows(9).position(|w| w == b"/MediaBox").expect("the fixture has a /MediaBox");
    let mut bad = good.clone();
    bad[at + 1] = b'0';
    std::fs::write(ws.path().join("bad.pdf"), &bad).unwrap();
    std::fs::write(ws.path().join("good.pdf"), &good).unwrap();
    std::fs::write(ws.path().join("junk.pdf"), b"%PDF-1.4 not really").unwrap();
    let server = Server::start(vec![
        anthropic(&tool("read_file", &[("path", "bad.pdf")])),
        anthropic(&tool("read_file", &[("path", "good.pdf")])),
        anthropic(&tool("read_file", &[("path", "junk.pdf")])),
        anthropic(&completion("Read what could be read.")),
    ]);
    let r = run_agent(ws.path(), &args_with(&anthropic_args(&server), &["read the pdfs"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    let bad = reqs[1].last_user();
    assert!(bad.contains("Failed to extract text from PDF: the file could not be parsed"), "{bad}");
    assert!(reqs[2].last_user().contains("3 | Hello from page one."), "{}", reqs[2].last_user());
    // The parser's own error, as the child answers it.
    let junk = reqs[3].last_user();
    assert!(junk.contains("Failed to extract text from PDF: PDF error:"), "{junk}");
}

/// Issue 22's tool results, through the real binary: the saved file byte for byte, a partial
/// REPLACE marker applied, hidden and node_modules directories out of a recursive listing, a
/// file's leading context line in its own block.
#[test]
fn tool_results_match_clines_where_issue_22_found_them_different() {
    let ws = tempfile::Builder::new().prefix("ws").tempdir().unwrap();
    for (p, body) in [(".hidden/h.txt", "x\n"), ("node_modules/m/i.js", "x\n"), ("src/a.rs", "fn a() { hit(); }\n")] {
        std::fs::create_dir_all(ws.path().join(p).parent().unwrap()).unwrap();
        std::fs::write(ws.path().join(p), body).unwrap();
    }
    std::fs::write(ws.path().join("src/b.rs"), "// above\nfn b() { hit(); }\n").unwrap();
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "w.txt"), ("content", "one\ntwo  ")])),
        anthropic(&tool("replace_in_file", &[("path", "w.txt"), ("diff", "------- SEARCH\none\n=======\nONE\n+++")])),
        anthropic(&tool("list_files", &[("path", "."), ("recursive", "true")])),
        anthropic(&tool("search_files", &[("path", "src"), ("regex", "hit")])),
        anthropic(&completion("done")),
    ]);
    let r = run_agent(ws.path(), &args_with(&anthropic_args(&server), &["t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    let write = reqs[1].last_user();
    assert!(write.contains("<final_file_content path=\"w.txt\">\none\ntwo  \n</final_file_content>"), "{write}");
    assert_eq!(std::fs::read_to_string(ws.path().join("w.txt")).unwrap(), "ONE\ntwo  ");
    assert!(reqs[2].last_user().contains("[replace_in_file for 'w.txt'] Result:\nThe content was successfully saved"));
    let list = reqs[3].last_user();
    assert!(list.starts_with("[list_files for '.'] Result:\nw.txt\nsrc/\nsrc/a.rs\nsrc/b.rs"), "{list}");
    assert!(!list.contains(".hidden") && !list.contains("node_modules"), "{list}");
    let search = reqs[4].last_user();
    assert!(
        search.contains(
            "src/a.rs\n│----\n│fn a() { hit(); }\n│----\n\nsrc/b.rs\n│----\n│// above\n│fn b() { hit(); }\n│----"
        ),
        "{search}"
    );
}

/// Cline's `# Recently Modified Files`: a file the agent read, then changed by a command, is
/// reported once in the next environment details; a file the agent wrote itself is not.
#[test]
fn a_file_changed_behind_the_agents_back_is_reported_once_as_recently_modified() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    let server = Server::start(vec![
        anthropic(&tool("read_file", &[("path", "a.txt")])),
        anthropic(&tool("execute_command", &[("command", "echo two >> a.txt"), ("requires_approval", "false")])),
        anthropic(&tool("write_to_file", &[("path", "b.txt"), ("content", "mine\n")])),
        anthropic(&completion("ok")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let users: Vec<String> = server.requests().iter().map(|q| q.last_user()).collect();
    let section = "# Recently Modified Files\nThese files have been modified since you last accessed them (file was just edited so you may need to re-read it before editing):\na.txt\n\n# Current Time";
    assert!(!users[1].contains("# Recently Modified Files"), "after the read: {}", users[1]);
    assert!(users[2].contains(section), "after the command changed it: {}", users[2]);
    assert!(!users[3].contains("# Recently Modified Files"), "once, and not for the agent's own write: {}", users[3]);
}

/// The usage a reply reported before it failed is counted (Cline counts a failed stream's
/// tokens and cost): a prompt of 100,000 tokens refused mid-reply was paid for, and
/// `--max-cost` and the totals must know it.
#[test]
fn a_failed_attempts_reported_usage_is_in_the_totals() {
    let ws = tempfile::tempdir().unwrap();
    let mut body = anthropic_body_usage("Partial text that will be discarded", 5, "end_turn", 100_000, 0);
    body.truncate(body.find("event: content_block_stop").unwrap());
    body.push_str("event: error\r\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\r\n\r\n");
    let overloaded = Resp { body: body.into_bytes(), ..anthropic("") };
    let server = Server::start(vec![overloaded, anthropic(&completion("second time lucky"))]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--json", "--retry-delay", "0.05", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let events = events::parse(&r.stdout);
    let totals = &events::of(&events, "completion")[0]["totals"];
    // 100,000 from the failed attempt, 100 from the answered one; one request answered.
    assert_eq!((totals["tokens_in"].as_u64(), totals["requests"].as_u64()), (Some(100_100), Some(1)), "{totals}");
}

/// A short regex whose lazy DFA keeps growing (`a[ab]{22}c` over random `a`/`b` text: ~2^22
/// states) leaves the agent's memory bounded. With ripgrep's default cache limit (1,000 MB: a
/// separate process's in Cline, which it can kill; here the agent's own) the search of 4 MiB
/// took ~390 MB. The peak is the agent's own, as its parent, a small python3, reads it.
#[test]
fn a_search_whose_regex_keeps_growing_its_dfa_stays_bounded_in_memory() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    // 4 MiB of a and b in lines of 100, from a fixed xorshift: every run searches the same.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut text = Vec::with_capacity(4 << 20);
    for i in 0..(4usize << 20) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        text.push(if i % 101 == 100 {
            b'\n'
        } else if x & 1 == 0 {
            b'a'
        } else {
            b'b'
        });
    }
    std::fs::write(ws.path().join("data.txt"), &text).unwrap();
    let reply = |text: &str| json!({"type": "reply", "text": text}).to_string();
    let rec = state.path().join("search.jsonl");
    let lines = [
        json!({"type": "session", "task": "search", "files": {}}).to_string(),
        reply("<search_files>\n<path>.</path>\n<regex>a[ab]{22}c</regex>\n</search_files>"),
        reply("<attempt_completion>\n<result>done</result>\n</attempt_completion>"),
    ];
    std::fs::write(&rec, lines.join("\n") + "\n").unwrap();
    let measure = "import resource, subprocess, sys\n\
                   r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n\
                   print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)";
    let mut cmd = std::process::Command::new("python3");
    cmd.arg("-c").arg(measure).arg(bin()).arg("run").current_dir(ws.path());
    cmd.args(["--replay", rec.to_str().unwrap(), "--cwd", ws.path().to_str().unwrap(), "--replay-delay", "0", "-y"]);
    let out = agent_env(&mut cmd, state.path()).output().expect("python3 runs");
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut words = said.split_whitespace();
    assert_eq!(words.next(), Some("0"), "the replay failed: {said}{}", String::from_utf8_lossy(&out.stderr));
    let peak_kib: u64 = words.next().and_then(|w| w.parse().ok()).expect("a peak in KiB");
    assert!(peak_kib < 128 << 10, "the agent peaked at {} MiB searching 4 MiB", peak_kib >> 10);
}

/// Cline's `writeToFileMissingContentError` blames a full context window too, past half of it:
/// the last request's tokens (70,000 in + 42 out, of the reply that called it) over
/// `--context-window` (100,000), rounded.
#[test]
fn a_write_without_content_late_in_a_long_task_warns_of_the_full_context_window() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "small.rs")])),
        anthropic_usage(&tool("write_to_file", &[("path", "big.rs")]), 70_000),
        anthropic(&completion("ok")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--context-window", "100000", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    let warning = "Warning: Context window is 70% full. The remaining output budget may be insufficient for large file writes. You MUST use a strategy that produces smaller outputs.";
    assert!(!reqs[1].last_user().contains("Context window is"), "{}", reqs[1].last_user());
    let next = reqs[2].last_user();
    assert!(next.contains(&format!("before the content parameter is fully written.\n\n{warning}\n\n")), "{next}");
}

/// Anthropic's safety classifiers end a reply with `stop_reason: "refusal"`, and the API says the
/// conversation must be reset before continuing: nudging the model to use a tool would be
/// refused turn after turn. The task stops at once, saying why.
#[test]
fn a_reply_the_providers_safety_system_refused_stops_the_task() {
    let ws = tempfile::tempdir().unwrap();
    let server =
        Server::start(vec![anthropic_with("I can't help with", 5, "refusal"), anthropic(&completion("never reached"))]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["t"]), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(r.stderr.contains("safety system ended the model's reply (stop reason \"refusal\")"), "{}", r.stderr);
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn under_yolo_execute_command_offers_its_timeout_as_cline_does() {
    // Cline's generic execute_command spec has its optional `timeout` only in yolo mode
    // (`contextRequirements: yoloModeToggled`); agent-min reads the parameter either way.
    for yolo in [true, false] {
        let ws = tempfile::tempdir().unwrap();
        let server = Server::start(vec![anthropic(&completion("done"))]);
        let base: Vec<String> = anthropic_args(&server).into_iter().filter(|a| yolo || a != "--yolo").collect();
        let r = run_agent(ws.path(), &args_with(&base, &["t"]), &[], LIMIT);
        assert_eq!(r.code, Some(0), "{}", r.all());
        let system = server.requests()[0].body["system"][0]["text"].as_str().unwrap().to_string();
        assert!(system.contains("## execute_command\n"), "{system}");
        let offered = system.contains("\n- timeout: (optional) Integer representing the timeout in seconds for how long to run the terminal command, before timing out and continuing the task.\nUsage:\n");
        assert_eq!(
            (offered, system.contains("</requires_approval>\n<timeout>30</timeout>\n")),
            (yolo, yolo),
            "--yolo {yolo}"
        );
    }
}

#[test]
fn a_task_on_the_desktop_gets_clines_note_instead_of_its_files() {
    let server = Server::start(vec![anthropic(&completion("done"))]);
    let home = tempfile::tempdir().unwrap();
    let desktop = home.path().join("Desktop");
    std::fs::create_dir(&desktop).unwrap();
    std::fs::write(desktop.join("private.pdf"), "x").unwrap();
    let home_s = home.path().display().to_string();
    let r = run_agent(&desktop, &args_with(&anthropic_args(&server), &["tidy up"]), &[("HOME", &home_s)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let first = server.requests()[0].last_user();
    assert!(
        first.contains(") Files\n(Desktop files not shown automatically. Use list_files to explore if needed.)"),
        "{first}"
    );
    assert!(!first.contains("private.pdf"), "{first}");
}

/// `# Current Time` is the machine's local time with its zone, as Cline's Node gives it.
#[test]
fn the_current_time_is_in_the_machines_time_zone() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![anthropic(&completion("ok"))]);
    let base = anthropic_args(&server);
    // A POSIX rule, 5 h 30 min east of UTC all year: no zone database needed on the machine.
    let r = run_agent(ws.path(), &args_with(&base, &["t"]), &[("TZ", "IST-5:30")], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let first = server.requests()[0].last_user();
    let time = first.split("# Current Time\n").nth(1).and_then(|t| t.lines().next()).expect(&first);
    assert!(time.ends_with(" (IST-5:30, UTC+5.5:00)"), "{time}");
}
