//! Native tool calls and reasoning, end to end: the real binary, real curl, the scripted server
//! speaking Anthropic's, OpenAI's and Ollama's native wire shapes — and refusing, as the real
//! APIs do, any request whose calls and results do not pair up.

use crate::common;

use std::time::Duration;

use common::native::{self, call, AnthropicReply};
use common::*;
use serde_json::{json, Value};

const LIMIT: Duration = Duration::from_secs(60);

fn with_mode<'a>(base: &'a [String], mode: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = args_with(base, &["--tool-calls", mode]);
    v.extend_from_slice(extra);
    v
}

/// An Anthropic reply of `calls` alone, in 5-byte writes.
fn reply(calls: Vec<native::Call<'_>>) -> Resp {
    native::anthropic(AnthropicReply { calls, ..Default::default() }, 5)
}

fn ollama_args(server: &Server) -> Vec<String> {
    ["--provider", "ollama", "--base-url", &server.anthropic_url(), "--model", "qwen3-test", "--yolo"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// The write both dialects perform: its content has an escaped quote, a newline, an é, an
/// emoji and a ✓ — and in the native replies its JSON arguments are split inside `\"`, inside
/// `\u00e9` and between the two `\ud83d\ude00` halves, while the body is written 2 or 3 bytes
/// at a time, cutting through the raw ✓ (3 bytes of UTF-8).
const CONTENT: &str = "say \"h\u{e9}llo\" \u{1f600} \u{2713}\n";
const WRITE_FRAGMENTS: [&str; 7] = [
    r#"{"absolutePath": "out.txt", "con"#,
    r#"tent": "say \"#,
    r#""h\u00"#,
    r#"e9llo\"#,
    r#"" \ud83d"#,
    "\\ude00 \u{2713}\\",
    r#"n"}"#,
];

#[test]
fn the_same_task_runs_in_xml_and_native_mode_on_all_three_wire_formats() {
    for (provider, mode) in [
        ("anthropic", "xml"),
        ("anthropic", "native"),
        ("openai", "xml"),
        ("openai", "native"),
        ("ollama", "xml"),
        ("ollama", "native"),
    ] {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("notes.txt"), "remember the milk\n").unwrap();
        let xml_write = tool("write_to_file", &[("path", "out.txt"), ("content", CONTENT)]);
        let script = match (provider, mode) {
            ("anthropic", "xml") => vec![
                anthropic(&tool("read_file", &[("path", "notes.txt")])),
                anthropic(&xml_write),
                anthropic(&completion("wrote it")),
            ],
            ("openai", "xml") => vec![
                openai(&tool("read_file", &[("path", "notes.txt")])),
                openai(&xml_write),
                openai(&completion("wrote it")),
            ],
            ("ollama", "xml") => vec![
                native::ollama(&tool("read_file", &[("path", "notes.txt")]), &[], 7),
                native::ollama(&xml_write, &[], 7),
                native::ollama(&completion("wrote it"), &[], 7),
            ],
            ("anthropic", _) => vec![
                native::anthropic(
                    AnthropicReply {
                        text: "Reading first.",
                        calls: vec![call("toolu_01", "read_file", &[r#"{"pa"#, r#"th": "notes"#, r#".txt"}"#])],
                        ..Default::default()
                    },
                    3,
                ),
                native::anthropic(
                    AnthropicReply {
                        calls: vec![call("toolu_02", "write_to_file", &WRITE_FRAGMENTS)],
                        ..Default::default()
                    },
                    2,
                ),
                native::anthropic(
                    AnthropicReply {
                        calls: vec![call("toolu_03", "attempt_completion", &[r#"{"result": "wrote it"}"#])],
                        ..Default::default()
                    },
                    7,
                ),
            ],
            ("openai", _) => vec![
                native::openai(
                    "",
                    "Reading first.",
                    &[call("call_01", "read_file", &[r#"{"path":"#, r#""notes.txt"}"#])],
                    3,
                ),
                native::openai("", "", &[call("call_02", "write_to_file", &WRITE_FRAGMENTS)], 2),
                native::openai("", "", &[call("call_03", "attempt_completion", &[r#"{"result":"wrote it"}"#])], 7),
            ],
            _ => vec![
                native::ollama("Reading first.", &[("read_file", json!({"path": "notes.txt"}))], 3),
                native::ollama("", &[("write_to_file", json!({"absolutePath": "out.txt", "content": CONTENT}))], 2),
                native::ollama("", &[("attempt_completion", json!({"result": "wrote it"}))], 7),
            ],
        };
        let server = Server::start(script);
        let base = match provider {
            "anthropic" => anthropic_args(&server),
            "openai" => openai_args(&server),
            _ => ollama_args(&server),
        };
        let r = run_agent(ws.path(), &with_mode(&base, mode, &["--json", "copy the notes"]), &[], LIMIT);
        let what = format!("{provider} {mode}");
        assert_eq!(r.code, Some(0), "{what}: {}", r.all());
        let written = std::fs::read_to_string(ws.path().join("out.txt")).unwrap();
        // JSON values are written exactly, the final line break too (as Cline writes them); in
        // XML the line breaks around the value are the tags' layout.
        let want = if mode == "native" { CONTENT } else { CONTENT.trim_end() };
        assert_eq!(written, want, "{what}");
        let events = events::parse(&r.stdout);
        let done = events::of(&events, "completion");
        assert_eq!(done[0]["result"], "wrote it", "{what}");
        let calls = events::of(&events, "tool_call");
        assert!(calls.iter().any(|c| c["tool"] == "write_to_file" && c["partial"] == false), "{what}");

        let reqs = server.requests();
        assert_eq!(reqs.len(), 3, "{what}");
        let sent_tools = reqs[0].body.get("tools").is_some();
        assert_eq!(sent_tools, mode == "native", "{what}: tools are sent only in native mode");
        let system = match provider {
            "anthropic" => reqs[0].body["system"][0]["text"].as_str().unwrap().to_string(),
            _ => reqs[0].body["messages"][0]["content"].as_str().unwrap().to_string(),
        };
        assert_eq!(system.contains("Tool use is formatted using XML-style tags"), mode == "xml", "{what}");
        // The read's result reached the model in the second request, in Cline's framing.
        let second = reqs[1].body.to_string();
        assert!(second.contains("[read_file for 'notes.txt'] Result:"), "{what}: {second}");
        assert!(second.contains("remember the milk"), "{what}");
    }
}

/// Claude models newer than Cline's table (Cline would ask its default model instead) are
/// asked as the API takes them: no forced tool, no temperature — the scripted server refuses
/// both from them, as Anthropic does.
#[test]
fn claude_models_newer_than_clines_table_are_asked_as_the_api_takes_them() {
    for model in ["claude-sonnet-5-5", "claude-opus-5-5"] {
        let ws = tempfile::tempdir().unwrap();
        let server = Server::start(vec![
            reply(vec![call("toolu_A", "list_files", &[r#"{"path":"."}"#])]),
            reply(vec![call("toolu_B", "attempt_completion", &[r#"{"result":"ok"}"#])]),
        ]);
        let mut base = anthropic_args(&server);
        let at = base.iter().position(|a| a == "claude-test").unwrap();
        base[at] = model.to_string();
        let r = run_agent(ws.path(), &args_with(&base, &["list it"]), &[], LIMIT);
        assert_eq!(r.code, Some(0), "{model}: {}", r.all());
        let reqs = server.requests();
        assert_eq!(reqs.len(), 2, "{model}: native under auto");
        assert_eq!(reqs[0].body["tool_choice"], json!({"type": "auto"}), "{model}");
    }
}

/// Under `--yolo` nobody answers a question: as in Cline's yolo mode, `ask_followup_question`
/// is not among the definitions and the prompt never invites one, in both dialects.
#[test]
fn under_yolo_no_question_is_offered_or_invited() {
    for (mode, yolo) in [("native", true), ("xml", true), ("native", false), ("xml", false)] {
        let ws = tempfile::tempdir().unwrap();
        let done = match mode {
            "native" => reply(vec![call("toolu_B", "attempt_completion", &[r#"{"result":"ok"}"#])]),
            _ => anthropic(&completion("ok")),
        };
        let server = Server::start(vec![done]);
        let mut base = anthropic_args(&server);
        base.retain(|a| yolo || a != "--yolo");
        let r = run_agent(ws.path(), &with_mode(&base, mode, &["do it"]), &[], LIMIT);
        assert_eq!(r.code, Some(0), "{mode}: {}", r.all());
        let body = &server.requests()[0].body;
        let system = text_of(&body["system"]);
        assert_eq!(system.contains("ask_followup_question"), !yolo, "{mode}, yolo {yolo}: {system}");
        assert_eq!(system.contains("without asking the user any followup questions"), yolo, "{mode}: {system}");
        if mode == "native" {
            let names: Vec<&str> =
                body["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
            assert_eq!(names.contains(&"ask_followup_question"), !yolo, "{names:?}");
            assert!(names.contains(&"attempt_completion"), "{names:?}");
        }
    }
}

#[test]
fn anthropic_history_carries_tool_use_and_tool_result_with_matching_ids() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "milk\n").unwrap();
    let server = Server::start(vec![
        native::anthropic(
            AnthropicReply {
                text: "Reading.",
                calls: vec![call("toolu_A", "read_file", &[r#"{"path":"notes.txt","#, r#""start_line":1}"#])],
                ..Default::default()
            },
            5,
        ),
        native::anthropic(
            AnthropicReply {
                calls: vec![call("toolu_B", "attempt_completion", &[r#"{"result":"ok"}"#])],
                ..Default::default()
            },
            5,
        ),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &with_mode(&base, "native", &["read the notes"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    let tools = reqs[0].body["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 7, "under --yolo, without ask_followup_question");
    let read = tools.iter().find(|t| t["name"] == "read_file").unwrap();
    assert!(read["description"].as_str().unwrap().starts_with("Request to read the contents of a file"));
    assert_eq!(read["input_schema"]["required"], json!(["path"]));
    // Cline's focus chain (on by default): a task_progress parameter on every tool but
    // execute_command.
    assert_eq!(read["input_schema"]["properties"]["task_progress"]["type"], "string");
    let m = reqs[1].body["messages"].as_array().unwrap();
    assert_eq!(
        m[1]["content"],
        json!([
            {"type": "text", "text": "Reading."},
            // The input as the model sent it, types and all (as Cline keeps it).
            {"type": "tool_use", "id": "toolu_A", "name": "read_file", "input": {"path": "notes.txt", "start_line": 1}},
        ])
    );
    let result = &m[2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_A");
    assert!(result["content"].as_str().unwrap().starts_with("[read_file for 'notes.txt'] Result:\n1 | milk"));
    // No checklist yet: Cline's reminder, a text block of its own before the environment's.
    assert!(m[2]["content"][1]["text"].as_str().unwrap().starts_with("\n# task_progress RECOMMENDED\n"));
    assert!(m[2]["content"][2]["text"].as_str().unwrap().starts_with("<environment_details>"));
    assert_eq!(m[2]["content"].as_array().unwrap().len(), 3);
}

/// Each call's `tool_result` holds its own result; what hooks say beside it goes out as text
/// blocks after all the results, in order, as Cline's `ensureToolResultsFollowToolUse` orders
/// them (it was inside the `tool_result`, the PreToolUse context before `[read_file …] Result:`).
#[test]
fn hook_contexts_go_after_the_tool_results_not_inside_them() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "milk\n").unwrap();
    std::fs::write(ws.path().join("b.txt"), "eggs\n").unwrap();
    // Global hooks, in a home of the test's own: they run unasked.
    let home = tempfile::tempdir().unwrap();
    let docs = home.path().join("Documents");
    std::fs::create_dir_all(docs.join("Cline/Hooks")).unwrap();
    for name in ["PreToolUse", "PostToolUse"] {
        let hook = docs.join("Cline/Hooks").join(name);
        let answer = format!(r#"{{"contextModification": "{name} on it"}}"#);
        std::fs::write(&hook, format!("#!/bin/sh\ncat >/dev/null\necho '{answer}'\n")).unwrap();
        std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let server = Server::start(vec![
        reply(vec![
            call("toolu_A", "read_file", &[r#"{"path":"a.txt"}"#]),
            call("toolu_B", "read_file", &[r#"{"path":"b.txt"}"#]),
        ]),
        reply(vec![call("toolu_C", "attempt_completion", &[r#"{"result":"ok"}"#])]),
    ]);
    let base = anthropic_args(&server);
    let (h, d) = (home.path().to_str().unwrap(), docs.to_str().unwrap());
    let envs = [("HOME", h), ("XDG_DOCUMENTS_DIR", d)];
    let r = run_agent(ws.path(), &with_mode(&base, "native", &["read both"]), &envs, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    let content = reqs[1].body["messages"][2]["content"].as_array().unwrap().clone();
    for (k, (id, file, line)) in [("toolu_A", "a.txt", "milk"), ("toolu_B", "b.txt", "eggs")].into_iter().enumerate() {
        assert_eq!(content[k]["type"], "tool_result", "{content:?}");
        assert_eq!(content[k]["tool_use_id"], id);
        let result = content[k]["content"].as_str().unwrap();
        let own = format!("[read_file for '{file}'] Result:\n1 | {line}");
        assert!(result.starts_with(&own) && !result.contains("hook_context"), "{result}");
    }
    let context =
        |source: &str| format!("<hook_context source=\"{source}\" type=\"general\">\n{source} on it\n</hook_context>");
    let texts: Vec<&str> = content[2..].iter().map(|b| b["text"].as_str().unwrap()).collect();
    let (pre, post) = (context("PreToolUse"), context("PostToolUse"));
    assert_eq!(texts[..4], [pre.as_str(), post.as_str(), pre.as_str(), post.as_str()], "{texts:?}");
    assert!(texts.last().unwrap().starts_with("<environment_details>"), "{texts:?}");
}

#[test]
fn with_one_tool_per_reply_parallel_calls_get_tool_already_used_and_bad_arguments_are_mistakes() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "A\n").unwrap();
    let server = Server::start(vec![
        // Two parallel calls, their fragments interleaved: the first runs, the second is answered.
        native::openai(
            "",
            "",
            &[
                call("call_1", "read_file", &[r#"{"pa"#, r#"th":"a.txt"}"#]),
                call("call_2", "list_files", &[r#"{"path":"#, r#"".", "recursive": true}"#]),
            ],
            3,
        ),
        // A call with empty arguments: a missing parameter, answered as a mistake.
        native::openai("", "", &[call("call_3", "read_file", &[""])], 7),
        // Arguments that are not JSON.
        native::openai("", "", &[call("call_4", "read_file", &[r#"{"path": a.txt}"#])], 7),
        native::openai("", "", &[call("call_5", "attempt_completion", &[r#"{"result":"fine"}"#])], 7),
    ]);
    let base = openai_args(&server);
    let r = run_agent(ws.path(), &with_mode(&base, "native", &["--one-tool-per-reply", "look around"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4);
    let m = reqs[1].body["messages"].as_array().unwrap();
    let calls = m[2]["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["function"]["arguments"], r#"{"path":"a.txt"}"#);
    assert_eq!(calls[1]["id"], "call_2");
    assert_eq!(m[3]["role"], "tool");
    assert_eq!(m[3]["tool_call_id"], "call_1");
    assert!(m[3]["content"].as_str().unwrap().starts_with("[read_file for 'a.txt'] Result:\n1 | A"));
    assert_eq!(
        m[4],
        json!({"role": "tool", "tool_call_id": "call_2", "content": "Tool [list_files] was not executed because a tool has already been used in this message. Only one tool may be used per message. You must assess the first tool's result before proceeding to use the next tool."})
    );
    assert_eq!(m[5]["role"], "user");
    assert!(!a_dir_listing_ran(&r.stdout));

    let m = reqs[2].body["messages"].as_array().unwrap();
    let last_tool = m.iter().rev().find(|x| x["role"] == "tool").unwrap();
    assert_eq!(last_tool["tool_call_id"], "call_3");
    let missing = last_tool["content"].as_str().unwrap();
    assert!(missing.contains("Missing value for required parameter 'path'"), "{missing}");
    // Without Cline's reminder that tool uses are XML tags: these calls are native.
    assert!(
        !missing.contains("XML-style tags") && missing.ends_with("Please retry with complete response.\n</error>"),
        "{missing}"
    );
    // Once: the text after the results does not say it again, with the reminder or without.
    let after: String = m.iter().skip_while(|x| x["tool_call_id"] != "call_3").skip(1).map(|x| x.to_string()).collect();
    assert!(!after.contains("Missing value") && !after.contains("XML-style tags"), "{after}");

    let m = reqs[3].body["messages"].as_array().unwrap();
    let last_tool = m.iter().rev().find(|x| x["role"] == "tool").unwrap();
    assert_eq!(last_tool["tool_call_id"], "call_4");
    let text = last_tool["content"].as_str().unwrap();
    assert!(text.contains("The arguments of your read_file call are not valid JSON"), "{text}");
    // History can only carry JSON: the call goes back with what could be read of it.
    let call4 = m.iter().find(|x| x["tool_calls"][0]["id"] == "call_4").unwrap();
    let sent: Value = serde_json::from_str(call4["tool_calls"][0]["function"]["arguments"].as_str().unwrap()).unwrap();
    assert!(sent.is_object(), "{sent}");
}

fn a_dir_listing_ran(stdout: &str) -> bool {
    stdout.contains("● list_files")
}

/// `resume --last` of the task saved in `sd` (thinking on) against a server that completes, as
/// Anthropic insists on the signed thinking and the results: the request's messages.
fn resumed_with_thinking(ws: &std::path::Path, sd: &str) -> Vec<Value> {
    let done = call("toolu_Z", "attempt_completion", &[r#"{"result":"done"}"#]);
    let server = Server::start(vec![native::anthropic(AnthropicReply { calls: vec![done], ..Default::default() }, 5)]);
    let base = anthropic_args(&server);
    let args = with_mode(&base, "native", &["--thinking-budget", "2048", "--state-dir", sd, "--last"]);
    let r = run_cmd("resume", ws, &args, &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    server.requests()[0].body["messages"].as_array().unwrap().clone()
}

#[test]
fn thinking_signatures_survive_a_tool_turn_and_a_resume() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "A\n").unwrap();
    let server = Server::start(vec![native::anthropic(
        AnthropicReply {
            thinking: Some(("I should read a.txt first.", "SIG-abc123")),
            redacted: Some("ENCRYPTED-opaque=="),
            text: "",
            calls: vec![call("toolu_T", "read_file", &[r#"{"path":"a.txt"}"#])],
            ..Default::default()
        },
        4,
    )]);
    let base = anthropic_args(&server);
    let sd = state.path().to_str().unwrap();
    let args = with_mode(
        &base,
        "native",
        &["--thinking-budget", "2048", "--max-turns", "1", "--state-dir", sd, "--json", "t"],
    );
    let r = run_agent(ws.path(), &args, &[], LIMIT);
    assert_eq!(r.code, Some(1), "stops at --max-turns 1: {}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs[0].body["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));
    // As Cline: the model's max_tokens (8192 for one not in its table), the budget within it.
    assert_eq!(reqs[0].body["max_tokens"], 8192);
    assert_eq!(reqs[0].body.get("temperature"), None, "no temperature with thinking");
    let events = events::parse(&r.stdout);
    let reasoning: String = events::of(&events, "reasoning").iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(reasoning, "I should read a.txt first.");
    assert!(events::of(&events, "text").iter().all(|e| !e["text"].as_str().unwrap().contains("read a.txt first")));
    drop(server);

    // Resume against a server that, like Anthropic, insists on the signed thinking and the result.
    let m = resumed_with_thinking(ws.path(), sd);
    assert_eq!(
        m[1]["content"],
        json!([
            {"type": "thinking", "thinking": "I should read a.txt first.", "signature": "SIG-abc123"},
            {"type": "redacted_thinking", "data": "ENCRYPTED-opaque=="},
            {"type": "tool_use", "id": "toolu_T", "name": "read_file", "input": {"path": "a.txt"}},
        ])
    );
    assert_eq!(m[2]["content"][0]["tool_use_id"], "toolu_T");
    assert!(m[2]["content"][0]["content"].as_str().unwrap().starts_with("[read_file for 'a.txt'] Result:"));
    // The saved text of the reply holds no reasoning.
    let saved = std::fs::read_dir(state.path().join("tasks")).unwrap().next().unwrap().unwrap().path();
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(saved).unwrap()).unwrap();
    assert_eq!(saved["messages"][1]["content"], "");
    assert_eq!(saved["messages"][1]["parts"][0]["signature"], "SIG-abc123");
}

/// An adaptive model's reply with thinking between its calls (interleaved thinking) goes back
/// block for block as it came — Anthropic refuses a thinking block moved — through a resume
/// too (the saved parts keep where the text stood).
#[test]
fn an_interleaved_replys_thinking_goes_back_where_it_stood() {
    use native::Block;
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "A\n").unwrap();
    std::fs::write(ws.path().join("b.txt"), "B\n").unwrap();
    let blocks = [
        Block::Thinking("Read a first.", "SIG-one@content.0"),
        Block::Text("Reading both."),
        Block::Call(call("toolu_A", "read_file", &[r#"{"path":"a.txt"}"#])),
        Block::Thinking("Now b.", "SIG-two@content.3"),
        Block::Call(call("toolu_B", "read_file", &[r#"{"path":"b.txt"}"#])),
        Block::Text("Both asked."),
    ];
    let server = Server::start(vec![native::anthropic_blocks(&blocks, 6)]);
    let sd = state.path().to_str().unwrap();
    let base = anthropic_args(&server);
    let args = with_mode(&base, "native", &["--thinking-budget", "2048", "--max-turns", "1", "--state-dir", sd, "t"]);
    let r = run_agent(ws.path(), &args, &[], LIMIT);
    assert_eq!(r.code, Some(1), "stops at --max-turns 1: {}", r.all());
    drop(server);
    let m = resumed_with_thinking(ws.path(), sd);
    assert_eq!(
        m[1]["content"],
        json!([
            {"type": "thinking", "thinking": "Read a first.", "signature": "SIG-one@content.0"},
            // Cline's line break before a text block that is not the reply's first.
            {"type": "text", "text": "\nReading both."},
            {"type": "tool_use", "id": "toolu_A", "name": "read_file", "input": {"path": "a.txt"}},
            {"type": "thinking", "thinking": "Now b.", "signature": "SIG-two@content.3"},
            {"type": "tool_use", "id": "toolu_B", "name": "read_file", "input": {"path": "b.txt"}},
            {"type": "text", "text": "\nBoth asked."},
        ])
    );
    let ids: Vec<&str> = m[2]["content"].as_array().unwrap().iter().filter_map(|b| b["tool_use_id"].as_str()).collect();
    assert_eq!(ids, ["toolu_A", "toolu_B"]);
    let saved = std::fs::read_dir(state.path().join("tasks")).unwrap().next().unwrap().unwrap().path();
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(saved).unwrap()).unwrap();
    assert_eq!(saved["version"], 8, "a save with text marks is version 8");
    assert_eq!(saved["messages"][1]["content"], "\nReading both.\nBoth asked.");
}

/// Two replies whose native calls the token limit cut are still native calls: the person is
/// not told the server may be ignoring `tools` (and to try `--tool-calls xml`).
#[test]
fn calls_cut_at_the_token_limit_do_not_count_as_tools_ignored() {
    let ws = tempfile::tempdir().unwrap();
    let cut = |id| {
        native::anthropic(
            AnthropicReply {
                calls: vec![call(id, "write_to_file", &[r#"{"absolutePath":"big.txt","content":"lots of"#])],
                stop: Some("max_tokens"),
                ..Default::default()
            },
            5,
        )
    };
    let server = Server::start(vec![
        cut("toolu_1"),
        cut("toolu_2"),
        reply(vec![call("toolu_3", "attempt_completion", &[r#"{"result":"ok"}"#])]),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &with_mode(&base, "native", &["--json", "--yolo", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let notices: Vec<String> = events::of(&events::parse(&r.stdout), "notice")
        .iter()
        .map(|n| n["kind"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(notices.iter().filter(|k| *k == "cut_off").count(), 2, "{notices:?}");
    assert!(!notices.iter().any(|k| k == "tools_ignored"), "{notices:?}");
}

#[test]
fn a_call_cut_at_the_token_limit_still_gets_its_result() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        native::anthropic(
            AnthropicReply {
                calls: vec![call("toolu_C", "write_to_file", &[r#"{"absolutePath":"big.txt","content":"lots of"#])],
                stop: Some("max_tokens"),
                ..Default::default()
            },
            5,
        ),
        reply(vec![call("toolu_D", "attempt_completion", &[r#"{"result":"ok"}"#])]),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &with_mode(&base, "native", &["write big"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!ws.path().join("big.txt").exists(), "a cut-off call never runs");
    let m = server.requests()[1].body["messages"].as_array().unwrap().clone();
    assert_eq!(m[1]["content"][0]["input"], json!({"absolutePath": "big.txt", "content": "lots of"}));
    assert_eq!(m[2]["content"][0]["tool_use_id"], "toolu_C");
    let text = m[2]["content"][0]["content"].as_str().unwrap();
    assert!(text.contains("write_to_file"), "{text}");
}

/// The calls of a reply after its `attempt_completion` do not run (the task ends), and each
/// still gets its result: in `--json` every complete `tool_call` has its `tool_result`, and
/// the person is told which were not run.
#[test]
fn calls_after_attempt_completion_in_the_same_reply_are_answered_not_run() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "alpha\n").unwrap();
    let server = Server::start(vec![reply(vec![
        call("toolu_A", "read_file", &[r#"{"path":"a.txt"}"#]),
        call("toolu_B", "attempt_completion", &[r#"{"result":"done"}"#]),
        call("toolu_C", "write_to_file", &[r#"{"absolutePath":"late.txt","content":"x"}"#]),
    ])]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &with_mode(&base, "native", &["--json", "read"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!ws.path().join("late.txt").exists(), "a call after the completion never runs");
    let events = events::parse(&r.stdout);
    let complete: Vec<String> = events::of(&events, "tool_call")
        .into_iter()
        .filter(|e| e["partial"] == false)
        .map(|e| e["call_id"].as_str().unwrap().to_string())
        .collect();
    let results: Vec<(String, bool)> = events::of(&events, "tool_result")
        .into_iter()
        .map(|e| (e["call_id"].as_str().unwrap().to_string(), e["ok"].as_bool().unwrap()))
        .collect();
    assert_eq!(complete.len(), 3, "{}", r.stdout);
    for id in &complete {
        assert!(results.iter().any(|(r, _)| r == id), "{id} has no tool_result:\n{}", r.stdout);
    }
    let late = events::of(&events, "tool_result").into_iter().find(|e| e["tool"] == "write_to_file").unwrap();
    assert_eq!(late["ok"], false);
    assert!(late["result"].as_str().unwrap().contains("attempt_completion"), "{late}");
    assert!(r.stderr.contains("were not run (write_to_file)"), "{}", r.stderr);
}

/// A stream that closes inside a call with no stop reason (no `message_delta`, no
/// `message_stop`: a proxy cut it) is asked again as a dropped connection is, not answered as
/// the model's mistake: the retry's whole call runs.
#[test]
fn a_stream_closed_inside_a_call_without_a_stop_reason_is_asked_again() {
    let ws = tempfile::tempdir().unwrap();
    let mut cut = native::anthropic(
        AnthropicReply {
            calls: vec![call("toolu_C", "write_to_file", &[r#"{"absolutePath":"a.txt","content":"hal"#])],
            ..Default::default()
        },
        5,
    );
    let body = String::from_utf8(cut.body).unwrap();
    cut.body = body.as_bytes()[..body.find("event: message_delta").unwrap()].to_vec();
    let server = Server::start(vec![
        cut,
        reply(vec![call("toolu_D", "write_to_file", &[r#"{"absolutePath":"a.txt","content":"whole\n"}"#])]),
        reply(vec![call("toolu_E", "attempt_completion", &[r#"{"result":"ok"}"#])]),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &with_mode(&base, "native", &["write"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(std::fs::read_to_string(ws.path().join("a.txt")).unwrap(), "whole\n");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "{}", r.all());
    assert_eq!(reqs[1].body["messages"], reqs[0].body["messages"], "the same request, asked again");
    assert!(r.all().contains("the stream ended before the message did (no message_stop)"), "{}", r.all());
}

/// A text reply cut on the way (a proxy closing mid-sentence, no stop reason, no
/// `message_stop`) is asked again, as one cut inside a call is: it was taken for a whole reply
/// without a tool, a mistake with Cline's reminder.
#[test]
fn a_stream_closed_inside_text_without_a_stop_reason_is_asked_again() {
    let ws = tempfile::tempdir().unwrap();
    let mut cut = native::anthropic(AnthropicReply { text: "I will now write the file", ..Default::default() }, 5);
    let body = String::from_utf8(cut.body).unwrap();
    cut.body = body.as_bytes()[..body.find("event: content_block_stop").unwrap()].to_vec();
    let server = Server::start(vec![cut, reply(vec![call("toolu_E", "attempt_completion", &[r#"{"result":"ok"}"#])])]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &with_mode(&base, "native", &["write"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{}", r.all());
    assert_eq!(reqs[1].body["messages"], reqs[0].body["messages"], "the same request, asked again");
    assert!(r.all().contains("no message_stop"), "{}", r.all());
}

/// The cut-off texts of the native dialect name no XML (no tags, no format reminder: Cline's
/// `noToolsUsed(true)` leaves the reminder out too) and no edit tool the model may not have:
/// gpt-5's native tools have `apply_patch`, not `replace_in_file` or `write_to_file`.
#[test]
fn native_cut_off_texts_name_no_xml_and_no_tool_the_model_lacks() {
    // gpt-5: an apply_patch call cut at the output limit ("length").
    let ws = tempfile::tempdir().unwrap();
    let mut cut = native::openai("", "", &[call("c1", "apply_patch", &[r#"{"input":"*** Begin Patch\n*** Add"#])], 7);
    let body = String::from_utf8(cut.body).unwrap();
    assert!(body.contains(r#""finish_reason":"tool_calls""#));
    cut.body = body.replace(r#""finish_reason":"tool_calls""#, r#""finish_reason":"length""#).into_bytes();
    let server = Server::start(vec![
        cut,
        native::openai("", "", &[call("c2", "attempt_completion", &[r#"{"result":"ok"}"#])], 7),
    ]);
    let url = server.openai_url();
    let args = ["--provider", "openai-native", "--base-url", &url, "--model", "gpt-5", "--yolo", "--no-save", "t"];
    let r = run_agent(ws.path(), &args, &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let m = server.requests()[1].body["messages"].as_array().unwrap().clone();
    let tools: Vec<_> =
        server.requests()[0].body["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].clone()).collect();
    assert!(tools.contains(&json!("apply_patch")) && !tools.contains(&json!("replace_in_file")), "{tools:?}");
    let answer = m.iter().find(|x| x["role"] == "tool").expect("the cut call's result");
    let text = answer["content"].as_str().unwrap();
    assert!(text.contains("maximum output token limit") && text.contains("apply_patch"), "{text}");
    for foreign in ["replace_in_file", "write_to_file", "<", ">"] {
        assert!(!text.contains(foreign), "{foreign:?} in {text}");
    }

    // Claude, natively: a reply of text alone cut at max_tokens.
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        native::anthropic(
            AnthropicReply { text: "Let me explain at length", stop: Some("max_tokens"), ..Default::default() },
            5,
        ),
        reply(vec![call("toolu_D", "attempt_completion", &[r#"{"result":"ok"}"#])]),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &with_mode(&base, "native", &["explain"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let m = server.requests()[1].body["messages"].as_array().unwrap().clone();
    let told = m[2]["content"][0]["text"].as_str().unwrap();
    assert!(told.starts_with("[ERROR] Your previous response was cut off because it reached the maximum output token limit before it used a tool."), "{told}");
    assert!(!told.contains("XML") && !told.contains("<attempt_completion>"), "{told}");
}

/// A reply of three calls: one that runs, one with arguments that are not JSON, one cut at the
/// output limit. Each is answered; `--json` pairs every complete call with a result and says
/// the reply was cut (the notice used to come only when no call completed).
#[test]
fn after_a_complete_call_a_bad_one_and_a_cut_one_are_each_reported() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "alpha\n").unwrap();
    let server = Server::start(vec![
        native::anthropic(
            AnthropicReply {
                calls: vec![
                    call("toolu_A", "read_file", &[r#"{"path":"a.txt"}"#]),
                    call("toolu_B", "list_files", &[r#"{"path": }"#]),
                    call("toolu_C", "write_to_file", &[r#"{"absolutePath":"big.txt","content":"lots of"#]),
                ],
                stop: Some("max_tokens"),
                ..Default::default()
            },
            5,
        ),
        reply(vec![call("toolu_D", "attempt_completion", &[r#"{"result":"ok"}"#])]),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &with_mode(&base, "native", &["--json", "read"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!ws.path().join("big.txt").exists(), "a cut-off call never runs");
    let events = events::parse(&r.stdout);
    let cut: Vec<_> = events::of(&events, "notice").into_iter().filter(|e| e["kind"] == "cut_off").collect();
    assert_eq!(cut.len(), 1, "{}", r.stdout);
    assert!(cut[0]["message"].as_str().unwrap().contains("<write_to_file>"), "{}", cut[0]);
    assert!(r.stderr.contains("The reply ended inside a <write_to_file> tool call"), "{}", r.stderr);
    let complete: Vec<_> = events::of(&events, "tool_call")
        .into_iter()
        .filter(|e| e["partial"] == false)
        .map(|e| e["call_id"].as_str().unwrap().to_string())
        .collect();
    let results: Vec<_> = events::of(&events, "tool_result")
        .into_iter()
        .map(|e| (e["call_id"].as_str().unwrap().to_string(), e["ok"].as_bool().unwrap()))
        .collect();
    assert_eq!(complete, ["call_1", "call_1_2", "call_2"], "{}", r.stdout);
    assert_eq!(
        results,
        [("call_1_2".to_string(), false), ("call_1".to_string(), true), ("call_2".to_string(), true)],
        "{}",
        r.stdout
    );
    let bad = events::of(&events, "tool_result")[0]["result"].as_str().unwrap().to_string();
    assert!(bad.contains("not valid JSON"), "{bad}");
    // The model got the same: each call answered by id.
    let m = server.requests()[1].body["messages"].as_array().unwrap().clone();
    let answers: Vec<_> = m[2]["content"].as_array().unwrap().iter().filter(|b| b["type"] == "tool_result").collect();
    assert_eq!(answers.len(), 3);
    assert!(answers[1]["content"].as_str().unwrap().contains("not valid JSON"), "{:?}", answers[1]);
}

/// Native: a stop for a person's answer after a call of the reply ran keeps the reply with that
/// call's result; `resume` sends them paired, and the waiting call gets the resumption notice.
#[test]
fn a_stop_for_a_person_after_a_native_call_ran_resumes_after_it() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("r.txt"), "read me once\n").unwrap();
    let state = tempfile::tempdir().unwrap();
    let sd = state.path().to_str().unwrap();
    let server = Server::start(vec![
        reply(vec![
            call("toolu_R", "read_file", &[r#"{"path":"r.txt"}"#]),
            call("toolu_W", "write_to_file", &[r#"{"absolutePath":"a.txt","content":"hello\n"}"#]),
        ]),
        reply(vec![call("toolu_D", "attempt_completion", &[r#"{"result":"ok"}"#])]),
    ]);
    let base: Vec<String> = anthropic_args(&server).into_iter().filter(|a| a != "--yolo").collect();
    let r = run_agent(ws.path(), &with_mode(&base, "native", &["--state-dir", sd, "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(3), "{}", r.all());
    assert!(!ws.path().join("a.txt").exists());
    let r = run_cmd("resume", ws.path(), &["--last", "--state-dir", sd, "--yolo"], &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let m = reqs[1].body["messages"].as_array().unwrap();
    assert_eq!(m.len(), 3, "the task, the kept reply (not asked for again), the results: {m:?}");
    let calls: Vec<_> = m[1]["content"].as_array().unwrap().iter().map(|b| b["id"].clone()).collect();
    assert_eq!(calls, [json!("toolu_R"), json!("toolu_W")]);
    let results = m[2]["content"].as_array().unwrap();
    assert_eq!((&results[0]["tool_use_id"], &results[1]["tool_use_id"]), (&json!("toolu_R"), &json!("toolu_W")));
    assert!(results[0]["content"].as_str().unwrap().contains("read me once"), "{:?}", results[0]);
    assert!(results[1]["content"].as_str().unwrap().contains("[TASK RESUMPTION]"), "{:?}", results[1]);
}

/// Resumed after a limit (the reply's calls all answered): the request sends each result with
/// its call and then Cline's resumption notice as text — the notice used to be dropped with
/// the copies of the results the saved message starts with.
#[test]
fn a_resumed_native_task_gets_the_resumption_notice_after_its_results() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("r.txt"), "read me\n").unwrap();
    let state = tempfile::tempdir().unwrap();
    let sd = state.path().to_str().unwrap();
    let server = Server::start(vec![
        reply(vec![call("toolu_R", "read_file", &[r#"{"path":"r.txt"}"#])]),
        reply(vec![call("toolu_D", "attempt_completion", &[r#"{"result":"ok"}"#])]),
    ]);
    let base = anthropic_args(&server);
    let r =
        run_agent(ws.path(), &with_mode(&base, "native", &["--state-dir", sd, "--max-turns", "1", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    let r = run_cmd("resume", ws.path(), &["--last", "--state-dir", sd, "--yolo"], &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let m = server.requests()[1].body["messages"].as_array().unwrap().clone();
    assert_eq!(m.len(), 3, "{m:?}");
    let blocks = m[2]["content"].as_array().unwrap();
    assert_eq!(blocks[0]["tool_use_id"], "toolu_R");
    assert!(blocks[0]["content"].as_str().unwrap().contains("read me"), "{:?}", blocks[0]);
    let texts: Vec<&str> = blocks[1..].iter().map(|b| b["text"].as_str().unwrap()).collect();
    assert_eq!(texts.iter().filter(|t| t.contains("[TASK RESUMPTION]")).count(), 1, "{texts:?}");
    assert!(texts.iter().all(|t| !t.contains("[read_file for")), "the result is not said twice: {texts:?}");
    assert!(texts.last().unwrap().starts_with("<environment_details>"), "{texts:?}");
}

/// Ctrl-C while the second call of a reply runs: the first call's result was saved with it, so
/// `resume` sends it — it used to be lost, and the resumption notice went out as its result.
#[test]
fn ctrl_c_in_a_later_call_keeps_the_earlier_calls_results() {
    use std::process::{Command, Stdio};
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("r.txt"), "read me\n").unwrap();
    let state = tempfile::tempdir().unwrap();
    let sd = state.path().to_str().unwrap();
    let started = ws.path().join("started");
    let cmd = format!(r#"{{"command":"touch {} && sleep 60","requires_approval":false}}"#, started.display());
    let server = Server::start(vec![
        reply(vec![
            call("toolu_R", "read_file", &[r#"{"path":"r.txt"}"#]),
            call("toolu_X", "execute_command", &[&cmd]),
        ]),
        reply(vec![call("toolu_D", "attempt_completion", &[r#"{"result":"ok"}"#])]),
    ]);
    let base = anthropic_args(&server);
    let args = with_mode(&base, "native", &["--state-dir", sd, "--sandbox", "off", "t"]);
    let child = agent_cmd("run", ws.path(), &args, &[], state.path()).stdin(Stdio::null()).spawn().unwrap();
    let start = std::time::Instant::now();
    while !started.exists() {
        assert!(start.elapsed() < LIMIT, "the command never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let r = wait_limited(child, LIMIT);
    assert_eq!(r.code, Some(130), "{}", r.all());
    let r = run_cmd("resume", ws.path(), &["--last", "--state-dir", sd, "--yolo"], &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let m = server.requests()[1].body["messages"].as_array().unwrap().clone();
    let results = m[2]["content"].as_array().unwrap();
    assert_eq!((&results[0]["tool_use_id"], &results[1]["tool_use_id"]), (&json!("toolu_R"), &json!("toolu_X")));
    assert!(results[0]["content"].as_str().unwrap().contains("read me"), "{:?}", results[0]);
    assert!(results[1]["content"].as_str().unwrap().contains("[TASK RESUMPTION]"), "{:?}", results[1]);
}

#[test]
fn openai_reasoning_is_shown_as_reasoning_never_as_text_and_effort_is_sent() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = Server::start(vec![native::openai(
        "Let me think: the answer is 4.",
        "Done thinking.",
        &[call("call_R", "attempt_completion", &[r#"{"result":"4"}"#])],
        3,
    )]);
    let base = openai_args(&server);
    let sd = state.path().to_str().unwrap();
    let args = with_mode(&base, "native", &["--reasoning-effort", "high", "--json", "--state-dir", sd, "2+2?"]);
    let r = run_agent(ws.path(), &args, &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(server.requests()[0].body["reasoning_effort"], "high");
    let events = events::parse(&r.stdout);
    let reasoning: String = events::of(&events, "reasoning").iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(reasoning, "Let me think: the answer is 4.");
    let text: String = events::of(&events, "text").iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(text, "Done thinking.");
    let saved = std::fs::read_dir(state.path().join("tasks")).unwrap().next().unwrap().unwrap().path();
    let saved = std::fs::read_to_string(saved).unwrap();
    let saved: Value = serde_json::from_str(&saved).unwrap();
    assert_eq!(saved["messages"][1]["content"], "Done thinking.");
}

#[test]
fn the_scripted_server_refuses_a_call_without_its_result() {
    // The check the tests above rely on can fail: a history with a tool_use and no tool_result
    // gets Anthropic's 400, one with a tool_call and no tool message OpenAI's.
    let bad_anthropic = json!({"tools": [{"name": "x"}], "messages": [
        {"role": "user", "content": "t"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}]},
        {"role": "user", "content": "no result"},
    ]});
    let e = native::check("/v1/messages", &bad_anthropic).expect("refused");
    assert!(e["error"]["message"].as_str().unwrap().contains("without `tool_result` blocks"));
    let bad_openai = json!({"messages": [
        {"role": "user", "content": "t"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "x", "arguments": "{}"}}]},
        {"role": "user", "content": "no result"},
    ]});
    let e = native::check("/v1/chat/completions", &bad_openai).expect("refused");
    assert!(e["error"]["message"].as_str().unwrap().contains("call_1"));
    let unsigned = json!({"tools": [{"name": "x"}], "thinking": {"type": "enabled", "budget_tokens": 1024}, "messages": [
        {"role": "user", "content": "t"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "r"}]},
    ]});
    assert!(native::check("/v1/messages", &unsigned).is_some(), "thinking must come back first");
}

#[test]
fn a_denied_native_call_is_answered_with_the_denial() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        native::anthropic(
            AnthropicReply {
                calls: vec![call("toolu_W", "write_to_file", &[r#"{"absolutePath":"a.txt","content":"x\n"}"#])],
                ..Default::default()
            },
            5,
        ),
        native::anthropic(
            AnthropicReply {
                calls: vec![call("toolu_Z", "attempt_completion", &[r#"{"result":"ok"}"#])],
                ..Default::default()
            },
            5,
        ),
    ]);
    let url = server.anthropic_url();
    let args = ["--no-save", "--provider", "anthropic", "--base-url", &url, "--tool-calls", "native", "t"];
    let r = run_interactive(ws.path(), &args, b"please use b.txt instead\n", LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!ws.path().join("a.txt").exists());
    assert!(r.stderr.contains("Create a.txt — approve?"), "{}", r.stderr);
    let m = server.requests()[1].body["messages"].as_array().unwrap().clone();
    assert_eq!(m[2]["content"][0]["tool_use_id"], "toolu_W");
    let text = m[2]["content"][0]["content"].as_str().unwrap();
    // Cline's order: the denial in the `tool_result`, the person's feedback (a text block Cline
    // pushed while asking) after the results, as its `ensureToolResultsFollowToolUse` puts it.
    assert!(text.starts_with("[write_to_file for 'a.txt'] Result:\nThe user denied this operation."), "{text}");
    assert!(!text.contains("<feedback>"), "{text}");
    let after = m[2]["content"][1]["text"].as_str().unwrap();
    assert!(
        after.starts_with(
            "The user provided the following feedback:\n<feedback>\nplease use b.txt instead\n</feedback>"
        ),
        "{}",
        m[2]
    );
}

#[test]
fn auto_picks_native_for_claude_4_5_and_xml_for_older_models() {
    for (model, native_expected) in [("claude-sonnet-4-5", true), ("claude-3-7-sonnet-20250219", false)] {
        let ws = tempfile::tempdir().unwrap();
        let reply = if native_expected {
            native::anthropic(
                AnthropicReply {
                    text: "<thinking>\nquick</thinking>\nAll set.",
                    calls: vec![call("toolu_Q", "attempt_completion", &[r#"{"result":"ok"}"#])],
                    ..Default::default()
                },
                3,
            )
        } else {
            anthropic(&completion("ok"))
        };
        let server = Server::start(vec![reply]);
        let base = anthropic_args(&server);
        let r = run_agent(ws.path(), &args_with(&base, &["--model", model, "--json", "t"]), &[], LIMIT);
        assert_eq!(r.code, Some(0), "{model}: {}", r.all());
        let body = &server.requests()[0].body;
        assert_eq!(body.get("tools").is_some(), native_expected, "{model}");
        if native_expected {
            let events = events::parse(&r.stdout);
            let text: String = events::of(&events, "text").iter().map(|e| e["text"].as_str().unwrap()).collect();
            assert_eq!(text, "quick\nAll set.", "thinking tags are not shown");
        }
    }
}

#[test]
fn a_native_task_resumes_natively_and_refuses_the_xml_dialect() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "A\n").unwrap();
    let server =
        Server::start(vec![native::openai("", "", &[call("call_N", "read_file", &[r#"{"path":"a.txt"}"#])], 5)]);
    let base = openai_args(&server); // gpt-test: XML under auto
    let sd = state.path().to_str().unwrap();
    let r =
        run_agent(ws.path(), &with_mode(&base, "native", &["--max-turns", "1", "--state-dir", sd, "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());

    let r = run_cmd("resume", ws.path(), &["--last", "--state-dir", sd, "--tool-calls", "xml"], &[], LIMIT);
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert!(r.stderr.contains("run with native tool calls; resume it with --tool-calls native"), "{}", r.stderr);

    let server = Server::start(vec![native::openai(
        "",
        "",
        &[call("call_M", "attempt_completion", &[r#"{"result":"ok"}"#])],
        5,
    )]);
    let url = server.openai_url();
    let r = run_cmd("resume", ws.path(), &["--last", "--state-dir", sd, "--base-url", &url, "--yolo"], &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let body = &server.requests()[0].body;
    assert!(body.get("tools").is_some(), "auto resumes a native task natively");
    let m = body["messages"].as_array().unwrap();
    assert_eq!(m[2]["tool_calls"][0]["id"], "call_N");
    assert_eq!(m[3]["tool_call_id"], "call_N");
}

/// Two native write calls in one Anthropic reply, then the completion.
fn two_native_writes() -> Vec<Resp> {
    vec![
        native::anthropic(
            AnthropicReply {
                text: "Writing both.",
                calls: vec![
                    call("toolu_A", "write_to_file", &[r#"{"absolutePath":"a.txt","#, r#""content":"one\n"}"#]),
                    call("toolu_B", "write_to_file", &[r#"{"absolutePath":"b.txt","content":"two\n"}"#]),
                ],
                ..Default::default()
            },
            5,
        ),
        native::anthropic(
            AnthropicReply {
                calls: vec![call("toolu_Z", "attempt_completion", &[r#"{"result":"ok"}"#])],
                ..Default::default()
            },
            5,
        ),
    ]
}

#[test]
fn two_native_calls_in_one_reply_both_run_and_each_result_goes_back_by_its_id() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(two_native_writes());
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &with_mode(&base, "native", &["write both"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(std::fs::read_to_string(ws.path().join("a.txt")).unwrap().trim_end(), "one");
    assert_eq!(std::fs::read_to_string(ws.path().join("b.txt")).unwrap().trim_end(), "two");
    let reqs = server.requests();
    let m = reqs[1].body["messages"].as_array().unwrap();
    let results = m[2]["content"].as_array().unwrap();
    assert_eq!(results[0]["tool_use_id"], "toolu_A");
    assert!(results[0]["content"].as_str().unwrap().starts_with("[write_to_file for 'a.txt'] Result:"));
    assert_eq!(results[1]["tool_use_id"], "toolu_B");
    assert!(results[1]["content"].as_str().unwrap().starts_with("[write_to_file for 'b.txt'] Result:"));
    assert!(
        results[2]["text"].as_str().unwrap().starts_with("\n# task_progress RECOMMENDED\n"),
        "then the focus chain's reminder"
    );
    assert!(results[3]["text"].as_str().unwrap().starts_with("<environment_details>"), "then the environment's");
    // Prompt caching as Cline marks it: the system block and the last block of the last two
    // user messages.
    assert_eq!(reqs[1].body["system"][0]["cache_control"], json!({"type": "ephemeral"}));
    assert_eq!(results[3]["cache_control"], json!({"type": "ephemeral"}));
    assert_eq!(m[0]["content"].as_array().unwrap().last().unwrap()["cache_control"], json!({"type": "ephemeral"}));
}

#[test]
fn a_denial_skips_the_rest_of_the_reply_with_clines_text() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(two_native_writes());
    let url = server.anthropic_url();
    let args = ["--no-save", "--provider", "anthropic", "--base-url", &url, "--tool-calls", "native", "--json", "t"];
    let r = run_interactive(ws.path(), &args, b"n\n", LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!ws.path().join("a.txt").exists() && !ws.path().join("b.txt").exists(), "{}", r.all());
    assert_eq!(r.stderr.matches("approve?").count(), 1, "one question, for the first call: {}", r.stderr);
    // In `--json`, the skipped call's result is said too: every complete call has one.
    let events = events::parse(&r.stdout);
    let skipped: Vec<_> =
        events::of(&events, "tool_result").into_iter().filter(|e| e["call_id"] == "call_1_2").collect();
    assert_eq!(skipped.len(), 1, "{}", r.stdout);
    assert_eq!(
        (&skipped[0]["ok"], skipped[0]["result"].as_str().unwrap()),
        (&json!(false), "Skipping tool due to user rejecting a previous tool. [write_to_file for 'b.txt']")
    );
    let m = server.requests()[1].body["messages"].as_array().unwrap().clone();
    let results = m[2]["content"].as_array().unwrap();
    assert!(results[0]["content"].as_str().unwrap().contains("The user denied this operation."));
    assert_eq!(results[1]["tool_use_id"], "toolu_B");
    assert_eq!(
        results[1]["content"],
        "Skipping tool due to user rejecting a previous tool. [write_to_file for 'b.txt']"
    );
}

#[test]
fn two_xml_calls_in_one_reply_both_run_and_a_denial_skips_the_rest() {
    let both = format!(
        "Two files.\n{}\n{}",
        tool("write_to_file", &[("path", "a.txt"), ("content", "one")]),
        tool("write_to_file", &[("path", "b.txt"), ("content", "two")])
    );
    // Approved (under --yolo): both run, their results follow each other.
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![anthropic(&both), anthropic(&completion("ok"))]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &with_mode(&base, "xml", &["write both"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(ws.path().join("a.txt").exists() && ws.path().join("b.txt").exists(), "{}", r.all());
    let m = server.requests()[1].body["messages"].as_array().unwrap().clone();
    assert_eq!(m[1]["content"], both, "the reply is kept whole");
    let next = m[2]["content"][0]["text"].as_str().unwrap();
    let a = next.find("[write_to_file for 'a.txt'] Result:").expect(next);
    let b = next.find("[write_to_file for 'b.txt'] Result:").expect(next);
    assert!(a < b, "{next}");
    let reminder = m[2]["content"][1]["text"].as_str().unwrap();
    assert!(reminder.starts_with("\n# task_progress RECOMMENDED\n"), "then the focus chain's reminder: {reminder}");
    let env = m[2]["content"][2]["text"].as_str().unwrap();
    assert!(env.starts_with("<environment_details>"), "then the details, as a block of their own: {env}");
    // Refused: the first is denied, the second skipped.
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![anthropic(&both), anthropic(&completion("ok"))]);
    let url = server.anthropic_url();
    let args = [
        "--no-save",
        "--provider",
        "anthropic",
        "--base-url",
        &url,
        "--model",
        "claude-test",
        "--tool-calls",
        "xml",
        "t",
    ];
    let r = run_interactive(ws.path(), &args, b"n\n", LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!ws.path().join("a.txt").exists() && !ws.path().join("b.txt").exists(), "{}", r.all());
    let m = server.requests()[1].body["messages"].as_array().unwrap().clone();
    let next = m[2]["content"][0]["text"].as_str().unwrap();
    assert!(next.contains("The user denied this operation."), "{next}");
    assert!(
        next.contains("Skipping tool due to user rejecting a previous tool. [write_to_file for 'b.txt']"),
        "{next}"
    );
}

#[test]
fn the_first_request_carries_clines_settings_and_a_reasoning_model_gets_max_completion_tokens() {
    let ws = tempfile::tempdir().unwrap();
    let server =
        Server::start(vec![native::openai("", "", &[call("c1", "attempt_completion", &[r#"{"result":"ok"}"#])], 7)]);
    let url = server.openai_url();
    let args = ["--provider", "openai", "--base-url", &url, "--model", "gpt-5", "--yolo", "--max-tokens", "1000", "t"];
    let r = run_agent(ws.path(), &args, &[], LIMIT);
    assert_eq!(r.code, Some(0), "accepted by a server that refuses what OpenAI refuses: {}", r.all());
    let body = &server.requests()[0].body;
    assert_eq!(body["messages"][0]["role"], "developer");
    assert_eq!((body.get("max_tokens"), body.get("temperature")), (None, None));
    assert_eq!(body["max_completion_tokens"], 1000);
}

#[test]
fn the_scripted_server_refuses_the_settings_the_real_apis_refuse() {
    let reasoning = json!({"model": "gpt-5", "max_tokens": 100, "messages": [{"role": "user", "content": "t"}]});
    let e = native::check("/v1/chat/completions", &reasoning).expect("refused");
    assert!(e["error"]["message"].as_str().unwrap().contains("Use 'max_completion_tokens' instead"));
    let temp = json!({"model": "o3", "temperature": 0, "messages": []});
    assert!(native::check("/v1/chat/completions", &temp).is_some());
    let ok = json!({"model": "gpt-4o", "max_tokens": 100, "temperature": 0, "messages": []});
    assert!(native::check("/v1/chat/completions", &ok).is_none());
    let thinking = json!({"model": "claude", "max_tokens": 64000, "temperature": 0,
        "thinking": {"type": "enabled", "budget_tokens": 2048}, "messages": []});
    assert!(native::check("/v1/messages", &thinking).is_some(), "no temperature with thinking");
    let forced = json!({"model": "claude", "max_tokens": 64000, "tools": [{"name": "x"}], "tool_choice": {"type": "any"},
        "thinking": {"type": "enabled", "budget_tokens": 2048}, "messages": []});
    assert!(native::check("/v1/messages", &forced).is_some(), "no forced tool use with thinking");
}

/// The four models of the default path (`--tool-calls auto`), each with the reply shape its
/// dialect gets: two calls in one reply both run, and the next request answers both.
#[test]
fn on_the_default_path_two_calls_in_one_reply_both_run_for_the_four_models() {
    let add = |p: &str, text: &str| {
        serde_json::to_string(&json!({"input": format!("*** Begin Patch\n*** Add File: {p}\n+{text}\n*** End Patch")}))
            .unwrap()
    };
    let (patch_a, patch_b) = (add("a.txt", "one"), add("b.txt", "two"));
    let xml_both = format!(
        "Two files.\n{}\n{}",
        tool("write_to_file", &[("path", "a.txt"), ("content", "one")]),
        tool("write_to_file", &[("path", "b.txt"), ("content", "two")])
    );
    let done = [r#"{"result":"ok"}"#];
    for (provider, model, native_calls) in [
        ("anthropic", "claude-sonnet-4-5", true),
        ("anthropic", "claude-3-7-sonnet", false),
        ("openai", "gpt-5", true),
        ("openai", "gpt-4o", false),
    ] {
        let script = match (provider, native_calls) {
            ("anthropic", true) => two_native_writes(),
            ("anthropic", false) => vec![anthropic(&xml_both), anthropic(&completion("ok"))],
            (_, true) => vec![
                native::openai(
                    "",
                    "Adding both.",
                    &[call("c_A", "apply_patch", &[&patch_a]), call("c_B", "apply_patch", &[&patch_b])],
                    7,
                ),
                native::openai("", "", &[call("c_Z", "attempt_completion", &done)], 7),
            ],
            (_, false) => vec![openai(&xml_both), openai(&completion("ok"))],
        };
        let ws = tempfile::tempdir().unwrap();
        let server = Server::start(script);
        let url = if provider == "anthropic" { server.anthropic_url() } else { server.openai_url() };
        let args = ["--provider", provider, "--base-url", &url, "--model", model, "--yolo", "--no-save", "write both"];
        let r = run_agent(ws.path(), &args, &[], LIMIT);
        assert_eq!(r.code, Some(0), "{model}: {}", r.all());
        let read = |f: &str| std::fs::read_to_string(ws.path().join(f)).map(|s| s.trim_end().to_string());
        assert_eq!(
            (read("a.txt").ok(), read("b.txt").ok()),
            (Some("one".into()), Some("two".into())),
            "{model}: {}",
            r.all()
        );
        let reqs = server.requests();
        assert_eq!(reqs.len(), 2, "{model}");
        let first = &reqs[0].body;
        assert_eq!(first.get("tools").is_some(), native_calls, "{model}: the dialect of the default path");
        let m = reqs[1].body["messages"].as_array().unwrap();
        if !native_calls {
            // XML: both results in the next user message, in order, then the details.
            let last = text_of(&m.last().unwrap()["content"]);
            let a = last.find("[write_to_file for 'a.txt'] Result:").expect(&last);
            let b = last.find("[write_to_file for 'b.txt'] Result:").expect(&last);
            assert!(a < b, "{model}: {last}");
        } else if provider == "anthropic" {
            let results = m[2]["content"].as_array().unwrap();
            assert_eq!(
                (&results[0]["tool_use_id"], &results[1]["tool_use_id"]),
                (&json!("toolu_A"), &json!("toolu_B"))
            );
        } else {
            let ids: Vec<&Value> = m.iter().filter(|x| x["role"] == "tool").map(|x| &x["tool_call_id"]).collect();
            assert_eq!(ids, [&json!("c_A"), &json!("c_B")], "{model}");
            let results: Vec<&str> =
                m.iter().filter(|x| x["role"] == "tool").filter_map(|x| x["content"].as_str()).collect();
            assert!(results.iter().all(|t| t.contains("Successfully applied patch")), "{model}: {results:?}");
        }
    }
}

/// OpenAI's own API (`--provider openai-native` says the scripted server is it), gpt-5.5,
/// Cline's default: the Responses API. Two calls in one reply both run and go back as
/// `function_call_output` items with their `call_id`s (the server refuses any that do not
/// pair up, as OpenAI does), then attempt_completion ends the task.
#[test]
fn gpt_5_5_on_openais_own_api_asks_the_responses_api_and_both_calls_go_back_by_call_id() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "alpha\n").unwrap();
    std::fs::write(ws.path().join("b.txt"), "beta\n").unwrap();
    let server = Server::start(vec![
        native::responses(
            "**Reading** both files.",
            "Reading both.",
            &[
                call("call_A", "read_file", &[r#"{"path":"#, r#""a.txt"}"#]),
                call("call_B", "read_file", &[r#"{"path":"b.txt"}"#]),
            ],
            3,
        ),
        native::responses("", "", &[call("call_Z", "attempt_completion", &[r#"{"result":"read both"}"#])], 7),
    ]);
    let url = server.openai_url();
    let args = [
        "--provider",
        "openai-native",
        "--base-url",
        &url,
        "--model",
        "gpt-5.5",
        "--yolo",
        "--no-save",
        "--json",
        "read both",
    ];
    let r = run_agent(ws.path(), &args, &[("OPENAI_API_KEY", KEY)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{}", r.all());
    assert!(reqs.iter().all(|q| q.path == "/v1/responses"), "{:?}", reqs.iter().map(|q| &q.path).collect::<Vec<_>>());
    assert_eq!(reqs[0].header("authorization"), Some(format!("Bearer {KEY}").as_str()));
    let first = &reqs[0].body;
    // Cline's `buildResponseCreateParams`: no token limit, no temperature, no Chat Completions
    // fields; the effort with a summary; the tools flat.
    for absent in [
        "max_tokens",
        "max_completion_tokens",
        "max_output_tokens",
        "temperature",
        "messages",
        "previous_response_id",
        "parallel_tool_calls",
        "tool_choice",
    ] {
        assert_eq!(first.get(absent), None, "{absent}");
    }
    assert_eq!(
        (&first["model"], &first["stream"], &first["store"], &first["reasoning"]),
        (&json!("gpt-5.5"), &json!(true), &json!(true), &json!({"effort": "medium", "summary": "auto"}))
    );
    // The system prompt goes as `instructions`, not as an input item.
    assert!(first["instructions"].as_str().unwrap().starts_with("You are Cline"));
    let tools = first["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["name"] == "read_file"));
    assert!(tools
        .iter()
        .all(|t| t["type"] == "function" && t.get("function").is_none() && t["parameters"]["type"] == "object"));
    let input = first["input"].as_array().unwrap();
    assert_eq!(input.len(), 1);
    assert_eq!(input[0]["role"], "user");
    assert!(input[0]["content"][0]["text"].as_str().unwrap().starts_with("<task>\nread both"));
    // The second request: the whole conversation again, the reply's text and calls, then each
    // call's result by its call_id, then the environment details.
    let input = reqs[1].body["input"].as_array().unwrap();
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap_or("message")).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "message",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output",
            "message"
        ]
    );
    assert_eq!(
        input[1],
        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Reading both."}]})
    );
    assert_eq!(
        input[2],
        json!({"type": "function_call", "call_id": "call_A", "name": "read_file", "arguments": r#"{"path":"a.txt"}"#})
    );
    assert_eq!(input[3]["call_id"], "call_B");
    let out = |i: usize| (input[i]["call_id"].as_str().unwrap(), input[i]["output"].as_str().unwrap());
    assert_eq!(out(4).0, "call_A");
    assert!(out(4).1.starts_with("[read_file for 'a.txt'] Result:") && out(4).1.contains("alpha"), "{}", out(4).1);
    assert_eq!(out(5).0, "call_B");
    assert!(out(5).1.starts_with("[read_file for 'b.txt'] Result:") && out(5).1.contains("beta"), "{}", out(5).1);
    assert_eq!(input[6]["role"], "user");
    assert!(input[6]["content"][0]["text"].as_str().unwrap().starts_with("\n# task_progress RECOMMENDED\n"));
    assert!(input[6]["content"][1]["text"].as_str().unwrap().starts_with("<environment_details>"));
    // The summary is shown as reasoning, never as text; usage from response.completed.
    let events = events::parse(&r.stdout);
    let reasoning: String = events::of(&events, "reasoning").iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(reasoning, "**Reading** both files.");
    let text: String = events::of(&events, "text").iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(text, "Reading both.");
}

/// OpenAI gives reasoning summaries only to organisations it has verified, and refuses the
/// request of one it has not (Cline asks for them always, and fails): the same request goes
/// again, once, without `summary`, and the task goes on. A `--max-tokens` under the API's
/// least (16) is sent as 16.
#[test]
fn a_refused_reasoning_summary_is_asked_again_without_it() {
    let ws = tempfile::tempdir().unwrap();
    let unverified = json!({"error": {"message": "Your organization must be verified to generate reasoning summaries. Please go to: https://platform.openai.com/settings/organization/general and click on Verify Organization. If you just verified, it can take up to 15 minutes for access to propagate.", "type": "invalid_request_error", "param": "reasoning.summary", "code": "unsupported_value"}});
    let server = Server::start(vec![
        common::status(400, unverified),
        native::responses("", "", &[call("call_A", "list_files", &[r#"{"path":"."}"#])], 7),
        native::responses("", "", &[call("call_Z", "attempt_completion", &[r#"{"result":"ok"}"#])], 7),
    ]);
    let url = server.openai_url();
    let args = [
        "--provider",
        "openai-native",
        "--base-url",
        &url,
        "--model",
        "gpt-5.5",
        "--max-tokens",
        "8",
        "--yolo",
        "--no-save",
        "t",
    ];
    let r = run_agent(ws.path(), &args, &[("OPENAI_API_KEY", KEY)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "{}", r.all());
    let reasoning: Vec<&Value> = reqs.iter().map(|q| &q.body["reasoning"]).collect();
    assert_eq!(
        reasoning,
        [&json!({"effort": "medium", "summary": "auto"}), &json!({"effort": "medium"}), &json!({"effort": "medium"})]
    );
    // The retry is the same request otherwise.
    let (mut a, mut b) = (reqs[0].body.clone(), reqs[1].body.clone());
    a.as_object_mut().unwrap().remove("reasoning");
    b.as_object_mut().unwrap().remove("reasoning");
    assert_eq!(a, b);
    assert!(reqs.iter().all(|q| q.body["max_output_tokens"] == 16));
    assert!(!r.stderr.contains("verified"), "{}", r.all());
}

/// OpenAI streams gpt-5, o3 and others only to organisations it has verified, and refuses the
/// stream of one it has not (Cline streams always, and fails on every request): the request
/// goes again asking for the whole reply (`stream: false`), and so do the rest of the task's,
/// on Chat Completions (gpt-5) and on the Responses API (gpt-5.5) alike — the reply read from
/// OpenAI's `chat.completion` and `response` objects, calls, reasoning and usage included.
#[test]
fn a_refused_stream_is_asked_again_for_whole_replies() {
    let unverified = json!({"error": {"message": "Your organization must be verified to stream this model. Please go to: https://platform.openai.com/settings/organization/general and click on Verify Organization. If you just verified, it can take up to 15 minutes for access to propagate.", "type": "invalid_request_error", "param": "stream", "code": "unsupported_value"}});
    let chat = |call: Value, finish: &str| {
        json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-5-2025-08-07",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "refusal": null, "tool_calls": [call]}, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1200, "completion_tokens": 80, "prompt_tokens_details": {"cached_tokens": 1024}}})
    };
    let function = |id: &str, name: &str, args: &str| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}});
    let response = |output: Value| {
        json!({"id": "resp_1", "object": "response", "status": "completed", "model": "gpt-5.5", "output": output,
            "usage": {"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 1024}, "output_tokens": 80}})
    };
    let item = |id: &str, name: &str, args: &str| json!({"id": format!("fc_{id}"), "type": "function_call", "status": "completed", "call_id": id, "name": name, "arguments": args});
    let thought =
        json!({"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "**Listing** first."}]});
    let said = json!({"id": "msg_1", "type": "message", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "Listing.", "annotations": []}]});
    let cases = [
        (
            "gpt-5",
            "/v1/chat/completions",
            common::status(200, chat(function("call_A", "list_files", r#"{"path":"."}"#), "tool_calls")),
            common::status(200, chat(function("call_Z", "attempt_completion", r#"{"result":"listed"}"#), "tool_calls")),
        ),
        (
            "gpt-5.5",
            "/v1/responses",
            common::status(200, response(json!([thought, said, item("call_A", "list_files", r#"{"path":"."}"#)]))),
            common::status(200, response(json!([item("call_Z", "attempt_completion", r#"{"result":"listed"}"#)]))),
        ),
    ];
    for (model, path, first, second) in cases {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("a.txt"), "alpha\n").unwrap();
        let server = Server::start(vec![common::status(400, unverified.clone()), first, second]);
        let url = server.openai_url();
        let args =
            ["--provider", "openai-native", "--base-url", &url, "--model", model, "--yolo", "--no-save", "--json", "t"];
        let r = run_agent(ws.path(), &args, &[("OPENAI_API_KEY", KEY)], LIMIT);
        assert_eq!(r.code, Some(0), "{model}: {}", r.all());
        let reqs = server.requests();
        assert_eq!(reqs.len(), 3, "{model}: {}", r.all());
        assert!(reqs.iter().all(|q| q.path == path), "{model}");
        let streamed: Vec<&Value> = reqs.iter().map(|q| &q.body["stream"]).collect();
        assert_eq!(streamed, [&json!(true), &json!(false), &json!(false)], "{model}");
        assert!(reqs[1..].iter().all(|q| q.body.get("stream_options").is_none()), "{model}");
        // The retry is the same request otherwise.
        let (mut a, mut b) = (reqs[0].body.clone(), reqs[1].body.clone());
        for body in [&mut a, &mut b] {
            body.as_object_mut().unwrap().remove("stream");
            body.as_object_mut().unwrap().remove("stream_options");
        }
        assert_eq!(a, b, "{model}");
        // The listing went back as the call's result, and the run ended with the completion.
        assert!(reqs[2].body.to_string().contains("a.txt"), "{model}: {}", reqs[2].body);
        let events = events::parse(&r.stdout);
        let done = events::of(&events, "completion");
        assert_eq!(done.last().map(|e| e["result"].as_str()), Some(Some("listed")), "{model}: {}", r.stdout);
        let usage = events::of(&events, "api_request");
        assert_eq!(usage.len(), 2, "{model}: {}", r.stdout);
        assert!(
            usage.iter().all(|u| u["tokens_out"] == 80 && u["cache_read"] == 1024 && u["estimated"] == false),
            "{model}: {usage:?}"
        );
        if model == "gpt-5.5" {
            let reasoning: String =
                events::of(&events, "reasoning").iter().map(|e| e["text"].as_str().unwrap_or("")).collect();
            assert!(reasoning.contains("Listing** first."), "{model}: {}", r.stdout);
        }
    }
}

/// OpenAI's models that only the Responses API serves and that Cline's table does not list
/// (so Cline itself would ask its default model instead) go there at OpenAI's own API.
#[test]
fn responses_only_models_cline_does_not_list_ask_the_responses_api() {
    for model in ["o3-pro", "gpt-5.1-codex-max", "gpt-5.5-2026-04-23"] {
        let ws = tempfile::tempdir().unwrap();
        let server = Server::start(vec![native::responses(
            "",
            "",
            &[call("c1", "attempt_completion", &[r#"{"result":"ok"}"#])],
            7,
        )]);
        let url = server.openai_url();
        // (o3-pro is not of Cline's native-call families: asked for them here, to read the reply.)
        let args = [
            "--provider",
            "openai-native",
            "--base-url",
            &url,
            "--model",
            model,
            "--tool-calls",
            "native",
            "--yolo",
            "--no-save",
            "t",
        ];
        let r = run_agent(ws.path(), &args, &[], LIMIT);
        assert_eq!(r.code, Some(0), "{model}: {}", r.all());
        let req = &server.requests()[0];
        assert_eq!((req.path.as_str(), &req.body["model"]), ("/v1/responses", &json!(model)));
    }
}

/// At the same base URL, a model Cline asks through Chat Completions still goes there: gpt-4.1
/// with Cline's `openai-native` settings (temperature 0 from its table, no parallel calls).
#[test]
fn gpt_4_1_on_openais_own_api_still_asks_chat_completions() {
    let ws = tempfile::tempdir().unwrap();
    let server =
        Server::start(vec![native::openai("", "", &[call("c1", "attempt_completion", &[r#"{"result":"ok"}"#])], 7)]);
    let url = server.openai_url();
    let args = [
        "--provider",
        "openai-native",
        "--base-url",
        &url,
        "--model",
        "gpt-4.1",
        "--tool-calls",
        "native",
        "--yolo",
        "--no-save",
        "t",
    ];
    let r = run_agent(ws.path(), &args, &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let req = &server.requests()[0];
    assert_eq!(req.path, "/v1/chat/completions");
    let b = &req.body;
    assert_eq!(
        (&b["temperature"], &b["parallel_tool_calls"], &b["tool_choice"]),
        (&json!(0), &json!(false), &json!("auto"))
    );
    assert_eq!((b.get("reasoning_effort"), b.get("max_tokens"), b.get("max_completion_tokens")), (None, None, None));
    assert_eq!(b["messages"][0]["role"], "system");
}

/// GPT-5 on OpenAI's own API is asked through Chat Completions as Cline's `openai-native`
/// handler asks it — parallel tool calls on (`getOpenAIToolParams(tools,
/// isGPT5ModelFamily(id))`), its table's temperature 1 — while the same server named plain
/// `openai` (any OpenAI-compatible server) gets Cline's OpenAI-compatible settings.
#[test]
fn gpt_5_on_openais_own_api_gets_parallel_tool_calls_as_cline_sends_them() {
    for (provider, parallel, temperature) in [("openai-native", true, Some(json!(1))), ("openai", false, None)] {
        let ws = tempfile::tempdir().unwrap();
        let server = Server::start(vec![native::openai(
            "",
            "",
            &[call("c1", "attempt_completion", &[r#"{"result":"ok"}"#])],
            7,
        )]);
        let url = server.openai_url();
        let args = ["--provider", provider, "--base-url", &url, "--model", "gpt-5", "--yolo", "--no-save", "t"];
        let r = run_agent(ws.path(), &args, &[], LIMIT);
        assert_eq!(r.code, Some(0), "{provider}: {}", r.all());
        let req = &server.requests()[0];
        assert_eq!(req.path, "/v1/chat/completions", "{provider}");
        let b = &req.body;
        assert_eq!(b["parallel_tool_calls"], json!(parallel), "{provider}");
        assert_eq!(b.get("temperature").cloned(), temperature, "{provider}");
        assert_eq!(
            (&b["reasoning_effort"], &b["messages"][0]["role"]),
            (&json!("medium"), &json!("developer")),
            "{provider}"
        );
        assert_eq!((b.get("max_tokens"), b.get("max_completion_tokens")), (None, None), "{provider}");
    }
}

#[test]
fn the_scripted_server_refuses_what_the_responses_api_refuses() {
    let call = json!({"type": "function_call", "call_id": "call_A", "name": "read_file", "arguments": "{}"});
    let output = json!({"type": "function_call_output", "call_id": "call_A", "output": "x"});
    let user = json!({"role": "user", "content": [{"type": "input_text", "text": "t"}]});
    let body = |input: Value| json!({"model": "gpt-5.5", "input": input, "stream": true});
    assert!(native::check("/v1/responses", &body(json!([user, call, output, user]))).is_none());
    let e = native::check("/v1/responses", &body(json!([user, call, user]))).expect("a call without its output");
    assert_eq!(e["error"]["message"], "No tool output found for function call call_A.");
    let e = native::check("/v1/responses", &body(json!([user, output, user]))).expect("an output without its call");
    assert!(e["error"]["message"].as_str().unwrap().starts_with("No tool call found for function call output"));
    let mut limited = body(json!([user]));
    limited["max_tokens"] = json!(100);
    assert!(native::check("/v1/responses", &limited).is_some());
    let mut small = body(json!([user]));
    small["max_output_tokens"] = json!(15);
    let e = native::check("/v1/responses", &small).expect("below 16");
    assert!(e["error"]["message"].as_str().unwrap().contains("Expected a value >= 16, but got 15"));
    small["max_output_tokens"] = json!(16);
    assert!(native::check("/v1/responses", &small).is_none());
    let chat = json!({"model": "gpt-5.5", "messages": [{"role": "user", "content": "t"}]});
    let e = native::check("/v1/chat/completions", &chat).expect("gpt-5.5 is not served there");
    assert!(e["error"]["message"].as_str().unwrap().contains("only supported in v1/responses"));
}

/// A task run with `--provider openai-native` is saved so: `resume` asks the same server as
/// OpenAI's own API again — the Responses API, the earlier call and its result paired.
#[test]
fn a_responses_task_resumes_on_the_responses_api() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let sd = state.path().to_str().unwrap();
    std::fs::write(ws.path().join("a.txt"), "alpha\n").unwrap();
    let server = Server::start(vec![
        native::responses("", "", &[call("call_A", "read_file", &[r#"{"path":"a.txt"}"#])], 7),
        native::responses("", "", &[call("call_Z", "attempt_completion", &[r#"{"result":"done"}"#])], 7),
        native::responses("", "", &[call("call_Y", "attempt_completion", &[r#"{"result":"again"}"#])], 7),
    ]);
    let url = server.openai_url();
    let args = [
        "--provider",
        "openai-native",
        "--base-url",
        &url,
        "--model",
        "gpt-5.5",
        "--yolo",
        "--state-dir",
        sd,
        "read a",
    ];
    let r = run_agent(ws.path(), &args, &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let r = run_cmd("resume", ws.path(), &["--last", "--state-dir", sd, "--yolo"], &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "{}", r.all());
    assert_eq!(reqs[2].path, "/v1/responses");
    let input = reqs[2].body["input"].as_array().unwrap();
    let pairs: Vec<(&str, &str)> = input
        .iter()
        .filter(|i| i["type"] == "function_call" || i["type"] == "function_call_output")
        .map(|i| (i["type"].as_str().unwrap(), i["call_id"].as_str().unwrap()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("function_call", "call_A"),
            ("function_call_output", "call_A"),
            ("function_call", "call_Z"),
            ("function_call_output", "call_Z")
        ]
    );
}

#[test]
fn deepseek_and_kimi_thinking_models_get_each_calls_reasoning_back_in_every_later_request() {
    // DeepSeek's thinking mode and Moonshot's thinking Kimi models refuse (400) a request in
    // which an assistant message that made tool calls lacks its `reasoning_content`; Cline sends
    // it only for `deepseek-reasoner` and only within the current turn, so a native task failed
    // at its second request.
    for (model, words) in [
        ("deepseek-v4-pro", "The reasoning_content in the thinking mode must be passed back"),
        ("kimi-k2.6", "reasoning_content is missing in assistant tool call message at index 1"),
    ] {
        let missing = json!({"model": model, "messages": [
            {"role": "user", "content": "t"},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "x", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "r"},
        ]});
        let e = native::check("/v1/chat/completions", &missing).expect("refused");
        assert!(e["error"]["message"].as_str().unwrap().contains(words), "{e}");
    }
    for model in ["deepseek-reasoner", "kimi-k2.6"] {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("a.txt"), "A").unwrap();
        std::fs::write(ws.path().join("b.txt"), "B").unwrap();
        let server = Server::start(vec![
            native::openai("I should read a.txt.", "", &[call("call_1", "read_file", &[r#"{"path":"a.txt"}"#])], 5),
            native::openai("Now b.", "", &[call("call_2", "read_file", &[r#"{"path":"b.txt"}"#])], 5),
            native::openai(
                "Both read.",
                "",
                &[call("call_3", "attempt_completion", &[r#"{"result":"read both"}"#])],
                5,
            ),
        ]);
        let base: Vec<String> =
            openai_args(&server).into_iter().map(|a| if a == "gpt-test" { model.into() } else { a }).collect();
        let r = run_agent(ws.path(), &args_with(&base, &["--no-save", "read a.txt and b.txt"]), &[], LIMIT);
        assert_eq!(r.code, Some(0), "{model}: {}", r.all());
        let requests = server.requests();
        assert_eq!(requests.len(), 3, "{model}");
        let reasoning = |k: usize| -> Vec<Value> {
            let msgs = requests[k].body["messages"].as_array().unwrap().clone();
            msgs.into_iter().filter(|m| m["role"] == "assistant").map(|m| m["reasoning_content"].clone()).collect()
        };
        assert_eq!(reasoning(1), [json!("I should read a.txt.")], "{model}");
        assert_eq!(reasoning(2), [json!("I should read a.txt."), json!("Now b.")], "{model}");
    }
}

#[test]
fn gemini_3_gets_its_thought_signatures_back_from_googles_endpoint_and_through_openrouter() {
    // Gemini 3 refuses (400) a conversation whose calls come back without the thought signature
    // it gave them: Google's OpenAI-compatible endpoint attaches it to the call
    // (`extra_content`), OpenRouter sends it among the reply's `reasoning_details`. Both were
    // dropped, so a native task failed at its second request.
    let unsigned = json!({"model": "gemini-3-pro-preview", "messages": [
        {"role": "user", "content": "t"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "r"},
    ]});
    let e = native::check("/v1/chat/completions", &unsigned).expect("refused");
    assert!(e["error"]["message"].as_str().unwrap().contains("missing a thought_signature"), "{e}");
    for (model, signed) in
        [("gemini-3-pro-preview", native::Signed::Google), ("google/gemini-3-pro-preview", native::Signed::OpenRouter)]
    {
        let ws = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("a.txt"), "A").unwrap();
        std::fs::write(ws.path().join("b.txt"), "B").unwrap();
        let two =
            [call("c1", "read_file", &[r#"{"path":"a.txt"}"#]), call("c2", "read_file", &[r#"{"path":"b.txt"}"#])];
        let server = Server::start(vec![
            native::openai_signed("Read both.", "", &two, 5, signed),
            native::openai_signed("Done.", "", &[call("c3", "attempt_completion", &[r#"{"result":"ok"}"#])], 5, signed),
        ]);
        let base: Vec<String> =
            openai_args(&server).into_iter().map(|a| if a == "gpt-test" { model.into() } else { a }).collect();
        let sd = state.path().to_str().unwrap();
        let r = run_agent(ws.path(), &args_with(&base, &["--state-dir", sd, "read a.txt and b.txt"]), &[], LIMIT);
        assert_eq!(r.code, Some(0), "{model}: {}", r.all());
        let sent = &server.requests()[1].body["messages"];
        let reply = sent.as_array().unwrap().iter().find(|m| m["role"] == "assistant").unwrap();
        if signed == native::Signed::Google {
            assert_eq!(reply["tool_calls"][0]["extra_content"], json!({"google": {"thought_signature": "sig-c1"}}));
            assert!(reply["tool_calls"][1].get("extra_content").is_none() && reply.get("reasoning_details").is_none());
        } else {
            assert_eq!(
                reply["reasoning_details"],
                json!([
                    {"type": "reasoning.text", "text": "Read both.", "format": "google-gemini-v1", "index": 0},
                    {"type": "reasoning.encrypted", "data": "sig-c1", "id": "c1", "format": "google-gemini-v1", "index": 1},
                ])
            );
        }
        // Kept in the saved task, for a resume to send back.
        let saved = std::fs::read_dir(state.path().join("tasks")).unwrap().next().unwrap().unwrap().path();
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(saved).unwrap()).unwrap();
        assert_eq!(saved["version"], 5, "{model}");
        // The reasoning, streamed in pieces beside its objects, is one thinking part.
        let thinking: Vec<&Value> =
            saved["messages"][1]["parts"].as_array().unwrap().iter().filter(|p| p["type"] == "thinking").collect();
        assert_eq!(thinking.len(), 1, "{model}: {thinking:?}");
        assert_eq!(thinking[0]["thinking"], "Read both.", "{model}");
    }
}

#[test]
fn azure_openai_is_asked_at_its_deployment_with_its_api_version_and_api_key() {
    // A Cline user's Azure OpenAI settings (base URL, deployment as the model, a key) were asked
    // as plain OpenAI: `…/openai/chat/completions` with a bearer token, which Azure answers
    // 404. Cline's AzureOpenAI client puts the deployment in the path, the `api-version` in
    // the query and the key in `api-key`; an `api-version` in the base URL says "Azure" for
    // any host, as Cline's `azureApiVersion` setting does (here, the scripted server).
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        native::openai("", "", &[call("c1", "list_files", &[r#"{"path":"."}"#])], 5),
        native::openai("", "", &[call("c2", "attempt_completion", &[r#"{"result":"listed"}"#])], 5),
        native::openai("", "", &[call("c3", "attempt_completion", &[r#"{"result":"again"}"#])], 5),
    ]);
    let base_url = format!("{}/openai?api-version=2024-10-21", server.anthropic_url());
    let sd = state.path().to_str().unwrap();
    let args = [
        "--provider",
        "openai",
        "--base-url",
        &base_url,
        "--model",
        "gpt-4o-prod",
        "--tool-calls",
        "native",
        "--retry-delay",
        "0.05",
        "--yolo",
        "--state-dir",
        sd,
        "list the files",
    ];
    let r = run_agent(ws.path(), &args, &[("OPENAI_API_KEY", KEY)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    // A resume asks the same deployment the same way (the base URL is saved with its query).
    let r = run_cmd(
        "resume",
        ws.path(),
        &["--last", "--state-dir", sd, "--yolo", "--retry-delay", "0.05"],
        &[("OPENAI_API_KEY", KEY)],
        LIMIT,
    );
    assert_eq!(r.code, Some(0), "{}", r.all());
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for req in &requests {
        assert_eq!(req.path, "/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21");
        let header = |n: &str| req.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(n)).map(|(_, v)| v.as_str());
        assert_eq!((header("api-key"), header("authorization")), (Some(KEY), None));
    }
}

/// A reply that only thought before the output limit cut it is answered, as Cline answers it in
/// native mode (a reply with content, no tool: a mistake and a nudge): asking the same request
/// again would be cut the same way. The history keeps its thinking and Cline's text for a reply
/// with nothing said (Anthropic refuses an assistant message without content).
#[test]
fn a_reply_cut_while_thinking_is_answered_not_asked_again() {
    let ws = tempfile::tempdir().unwrap();
    let thought = AnthropicReply {
        thinking: Some(("Let me plan the whole file", "sig-1")),
        stop: Some("max_tokens"),
        ..Default::default()
    };
    let server = Server::start(vec![
        native::anthropic(thought, 7),
        reply(vec![call("toolu_02", "attempt_completion", &[r#"{"result": "done"}"#])]),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &with_mode(&base, "native", &["--thinking-budget", "2000", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stderr.contains("cut at the output token limit before any tool call"), "{}", r.stderr);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{}", r.all());
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    let answer = &msgs[msgs.len() - 2];
    assert_eq!(answer["role"], "assistant");
    assert_eq!(
        answer["content"],
        json!([{"type": "thinking", "thinking": "Let me plan the whole file", "signature": "sig-1"}, {"type": "text", "text": "Failure: I did not provide a response."}])
    );
    assert!(
        reqs[1].last_user().contains("was cut off because it reached the maximum output token limit"),
        "{}",
        reqs[1].last_user()
    );
}

/// A call the output limit cut right after its name (no argument bytes) is a cut call, not a
/// call without arguments: the model hears that it was cut, not that a parameter is missing.
#[test]
fn a_call_cut_before_its_arguments_is_reported_as_cut() {
    let ws = tempfile::tempdir().unwrap();
    let cut = AnthropicReply {
        calls: vec![call("toolu_01", "write_to_file", &[])],
        stop: Some("max_tokens"),
        ..Default::default()
    };
    let server = Server::start(vec![
        native::anthropic(cut, 7),
        reply(vec![call("toolu_02", "attempt_completion", &[r#"{"result": "done"}"#])]),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &with_mode(&base, "native", &["t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{}", r.all());
    let next = reqs[1].last_user();
    assert!(
        next.contains("reached the maximum output token limit, in the middle of the write_to_file tool call"),
        "{next}"
    );
    assert!(!next.contains("Missing value for required parameter"), "{next}");
}

/// Calls written as XML in a native reply's text run as in XML, and a stop in a later one keeps
/// the results of those that ran for `resume`: it did not when the reply also carried
/// reasoning, which made the reply look native (its calls answered on the calls, of which it
/// had none).
#[test]
fn recovered_text_calls_that_ran_are_kept_when_the_reply_also_reasoned() {
    let text = "<read_file>\n<path>a.txt</path>\n</read_file>\n\n<write_to_file>\n<path>b.txt</path>\n<content>\nx\n</content>\n</write_to_file>";
    for reasoning in ["", "Reading first, then writing."] {
        let ws = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("a.txt"), "alpha\n").unwrap();
        let server = Server::start(vec![native::openai(reasoning, text, &[], 5)]);
        // Not --yolo, nobody at the terminal: the write's approval stops the task.
        let base: Vec<String> = openai_args(&server).into_iter().filter(|a| a != "--yolo").collect();
        let state_dir = state.path().display().to_string();
        let r = run_agent(
            ws.path(),
            &args_with(&base, &["--tool-calls", "native", "--state-dir", &state_dir, "t"]),
            &[],
            LIMIT,
        );
        assert_eq!(r.code, Some(3), "{reasoning:?}: {}", r.all());
        assert!(!ws.path().join("b.txt").exists());
        let tasks: Vec<_> = std::fs::read_dir(state.path().join("tasks")).unwrap().flatten().collect();
        assert_eq!(tasks.len(), 1);
        let task: Value = serde_json::from_str(&std::fs::read_to_string(tasks[0].path()).unwrap()).unwrap();
        let pending = task["pending"].as_str().unwrap_or_default();
        assert!(
            pending.contains("[read_file for 'a.txt'] Result:") && pending.contains("alpha"),
            "{reasoning:?}: {task}"
        );
    }
}

/// A gateway that answers a streamed request with one JSON body and a 200 — its error, or the
/// whole reply with `stream` ignored — is read as such: the error is retried and named (it
/// was an empty reply, answered "You did not use a tool"), the whole reply's call is run; an
/// event stream labelled JSON is still a stream (the body's first byte decides). On
/// Anthropic's wire a 200 body that holds no event is a failure named by its words, retried.
#[test]
fn a_streamed_request_answered_with_one_json_body_is_read_whole() {
    let chat = json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-5",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "call_A", "type": "function", "function": {"name": "list_files", "arguments": "{\"path\":\".\"}"}}]}}],
        "usage": {"prompt_tokens": 1200, "completion_tokens": 80}});
    // And a true event stream labelled `application/json` (Foundry Local labels its so): a stream.
    let mut labelled = openai(&completion("listed"));
    labelled.headers.retain(|(k, _)| !k.eq_ignore_ascii_case("content-type"));
    labelled.headers.push(("Content-Type".into(), "application/json".into()));
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        common::status(200, json!({"error": {"message": "upstream timeout", "code": 504}})),
        common::status(200, chat),
        labelled,
    ]);
    let base = openai_args(&server);
    let args = args_with(&base, &["--tool-calls", "native", "--no-save", "--json", "t"]);
    let r = run_agent(ws.path(), &args, &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let events = events::parse(&r.stdout);
    let retries = events::of(&events, "retry");
    assert_eq!(retries.len(), 1, "{}", r.stdout);
    assert!(retries[0]["error"].as_str().unwrap().contains("upstream timeout"), "{}", retries[0]);
    let calls: Vec<&Value> = events::of(&events, "tool_result").into_iter().map(|e| &e["tool"]).collect();
    assert_eq!(calls, [&json!("list_files"), &json!("attempt_completion")]);
    let reqs = server.requests();
    assert!(reqs.iter().all(|q| !q.body.to_string().contains("You did not use a tool")), "{}", r.all());

    let server = Server::start(vec![
        common::status(200, json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})),
        anthropic(&completion("done")),
    ]);
    let base = anthropic_args(&server);
    let args = args_with(&base, &["--no-save", "--json", "t"]);
    let r = run_agent(ws.path(), &args, &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let events = events::parse(&r.stdout);
    let retries = events::of(&events, "retry");
    assert_eq!(retries.len(), 1, "{}", r.stdout);
    assert!(retries[0]["error"].as_str().unwrap().contains("Overloaded"), "{}", retries[0]);
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn calls_past_the_64th_of_a_reply_are_left_out_and_the_model_is_told_how_many() {
    let ws = tempfile::tempdir().unwrap();
    // Distinct files: the same read three times in a row would be loop detection's business.
    let ids: Vec<(String, String)> =
        (0..70).map(|k| (format!("toolu_{k:02}"), format!(r#"{{"path":"f{k}.txt"}}"#))).collect();
    for k in 0..70 {
        std::fs::write(ws.path().join(format!("f{k}.txt")), "a\n").unwrap();
    }
    let calls = ids.iter().map(|(id, args)| call(id, "read_file", &[args.as_str()])).collect();
    let done = vec![call("toolu_Z", "attempt_completion", &[r#"{"result":"ok"}"#])];
    let server = Server::start(vec![reply(calls), reply(done)]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &with_mode(&base, "native", &["--json", "read it"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    let m = reqs[1].body["messages"].as_array().unwrap();
    let (said, answers) = (&m[1]["content"], m[2]["content"].as_array().unwrap());
    let uses: Vec<&Value> = said.as_array().unwrap().iter().filter(|p| p["type"] == "tool_use").collect();
    assert_eq!(uses.len(), 64, "the first 64 calls are kept");
    let results: Vec<&Value> = answers.iter().filter(|p| p["type"] == "tool_result").collect();
    assert_eq!(results.len(), 64, "each kept call is answered");
    let note = "[6 more tool calls of your reply were not run: at most 64 tool calls of one reply are run. Make them again if still needed.]";
    assert!(answers.iter().any(|p| p["text"].as_str().is_some_and(|t| t.contains(note))), "{answers:?}");
    let events = events::parse(&r.stdout);
    let notices = events::of(&events, "notice").into_iter().filter(|e| e["kind"] == "calls_left_out").count();
    assert_eq!(notices, 1, "{}", r.stdout);
}
