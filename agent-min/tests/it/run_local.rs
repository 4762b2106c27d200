//! A local model as a person meets one, replayed byte for byte from a scripted server on
//! 127.0.0.1: the replies of a real llama-cpp-python 0.3.36 server (`python -m llama_cpp.server`,
//! the PyPI Gemma 3 270M Q4_K_M GGUF, `--n_ctx 4096 --n_threads 1`), recorded in
//! `tests/fixtures/llama-cpp-python/gemma3-270m.jsonl` by `agent-min/scripts/record-proxy.py`
//! (one JSON line per exchange: a summary of the request, the status, the content type, the body
//! as the server sent it and the sizes of the reads it came in).
//!
//! The four requests (as `agent-min/scripts/record-local-fixture.sh` sends them: with curl through
//! the proxy; recorded on 2026-12-01) are shaped like agent-min's native ones
//! (a system and a user message, four function tools, `stream`, `stream_options.include_usage`,
//! `max_tokens`, temperature 0). That GGUF has no chat template, so the server falls back to the
//! llama-2 format: it renders no `tools`, and the model echoes its prompt.
//! 1. and 2. Two tasks in prose (`max_tokens` 32 and 24): the model echoes the task, and the
//!    reply is cut at the limit (`finish_reason` `length`). The first waited long enough for one
//!    of sse-starlette's `: ping` comments, mid-stream.
//! 3. The user message was a Cline XML call, `<list_files><path>.</path></list_files>`
//!    (`max_tokens` 40): the model wrote it back as text, twice, and was cut (`length`; with a
//!    `: ping`). This is the call a local model writes as text that native mode recovers.
//! 4. The same, with `"stop": ["[/INST]"]` (not in the proxy's request summary): the call once,
//!    `finish_reason` `stop`.
//!
//! No reply carries usage (the server ignores `stream_options`) or a native call (it ignores
//! `tools`); every stream ends with `data: [DONE]`.

use std::time::Duration;

use serde_json::Value;

use crate::common::{events, run_agent, Resp, Server};

const FIXTURE: &str = "tests/fixtures/llama-cpp-python/gemma3-270m.jsonl";

/// The recorded exchanges, in the order above; fails loudly if the fixture is missing or is not
/// the recording described there.
fn recorded() -> [Value; 4] {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (recorded by agent-min/scripts/record-local-fixture.sh)", path.display()));
    let all: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let n = all.len();
    let all: [Value; 4] = all.try_into().unwrap_or_else(|_| panic!("{}: {n} exchanges, not 4", path.display()));
    for e in &all {
        assert_eq!((e["method"].as_str(), e["path"].as_str()), (Some("POST"), Some("/v1/chat/completions")));
        assert_eq!(e["status"], 200, "{e}");
    }
    all
}

/// The `data:` payloads of a recorded stream, as JSON (`[DONE]` left out).
fn chunks(e: &Value) -> Vec<Value> {
    let body = e["body"].as_str().unwrap();
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str::<Value>(d).unwrap_or_else(|err| panic!("{err}: {d}")))
        .collect()
}

/// The reply text a recorded stream carries (its `delta.content`s joined).
fn content(e: &Value) -> String {
    chunks(e).iter().filter_map(|v| v["choices"][0]["delta"]["content"].as_str().map(str::to_string)).collect()
}

/// The stream's last `finish_reason`.
fn finish_reason(e: &Value) -> String {
    chunks(e).iter().rev().find_map(|v| v["choices"][0]["finish_reason"].as_str().map(str::to_string)).unwrap()
}

/// The first complete tool call the reply text holds in Cline's XML, by Cline's parser.
fn xml_call(text: &str) -> Option<(String, Vec<(String, String)>)> {
    let parsed = parser_core::parse(text);
    parsed.iter().find_map(|b| match b {
        parser_core::Block::ToolUse(t) if !t.partial => {
            Some((t.name.to_string(), t.params().iter().map(|p| (p.name.to_string(), p.value.to_string())).collect()))
        }
        _ => None,
    })
}

/// The recorded bytes, served as they came (in writes the size of the largest recorded read).
fn replay(e: &Value) -> Resp {
    let chunk = e["reads"].as_array().and_then(|r| r.iter().filter_map(Value::as_u64).max()).unwrap();
    Resp {
        status: 200,
        headers: vec![("Content-Type".into(), e["content_type"].as_str().unwrap().to_string())],
        body: e["body"].as_str().unwrap().as_bytes().to_vec(),
        chunk: chunk.clamp(1, 65536) as usize,
        stall: Duration::ZERO,
        stall_at: 0,
        gate: None,
    }
}

/// Runs agent-min against `server` as the recorded model, in `dialect`, with `rest` after.
fn run_local(server: &Server, ws: &std::path::Path, dialect: &str, rest: &[&str]) -> crate::common::Run {
    let url = server.openai_url();
    let mut args = vec!["--provider", "openai", "--base-url", &url, "--model", "gemma-3-270m", "--tool-calls", dialect];
    args.extend_from_slice(rest);
    run_agent(ws, &args, &[], Duration::from_secs(120))
}

#[test]
fn the_recording_is_a_server_that_sends_no_usage_ignores_tools_and_pings() {
    let all = recorded();
    for e in &all {
        let body = e["body"].as_str().unwrap();
        assert!(body.ends_with("data: [DONE]\n\n"), "every stream ends with [DONE]");
        assert!(e["content_type"].as_str().unwrap().starts_with("text/event-stream"), "{e}");
        assert!(!body.contains("\"usage\""), "no usage: {body:.300}");
        assert!(!body.contains("\"tool_calls\""), "no native call");
        assert_eq!(e["request"]["tools"], 4, "the tools were sent");
        assert_eq!(e["request"]["stream_options"]["include_usage"], true, "usage was asked for");
    }
    let finish: Vec<String> = all.iter().map(finish_reason).collect();
    assert_eq!(finish, ["length", "length", "length", "stop"]);
    let pinged: Vec<bool> = all.iter().map(|e| e["body"].as_str().unwrap().contains("\n\n: ping - ")).collect();
    assert_eq!(pinged, [true, false, true, false], "sse-starlette's keep-alive comments, mid-stream");
    assert_eq!(xml_call(&content(&all[0])), None);
    assert_eq!(xml_call(&content(&all[1])), None);
    let list = Some(("list_files".to_string(), vec![("path".to_string(), ".".to_string())]));
    assert_eq!(xml_call(&content(&all[2])), list, "{:?}", content(&all[2]));
    assert_eq!(xml_call(&content(&all[3])), list, "{:?}", content(&all[3]));
}

/// Replays the real replies: the two cut-off prose replies (1, 2), then reply 3 (the XML call
/// the model wrote as text, twice) two times and reply 4 (the call once): five identical calls,
/// every one run as Cline runs a native reply's text calls. Every request is one the server
/// would answer the same way: it ignores the tools and the usage request whatever the history.
/// (Reply 3 five times would never stop: the sixth call's success clears loop detection's
/// escalation at the fifth in the same reply, as Cline's handler resets its count.)
#[test]
fn a_native_run_on_the_real_servers_replies_estimates_says_each_request_recovers_text_calls_and_names_loop_detection() {
    let [prose1, prose2, echoed, once] = recorded();
    let script = vec![replay(&prose1), replay(&prose2), replay(&echoed), replay(&echoed), replay(&once)];
    let server = Server::start(script);
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("hello.txt"), "hello from a local model\n").unwrap();
    let rest = ["--yolo", "--json", "--no-save", "--max-tokens", "200", "--max-mistakes", "3", "--retry-delay", "0.05"];
    let run = run_local(&server, ws.path(), "native", &[&rest[..], &["List the files in this directory."]].concat());
    let evs = events::parse(&run.stdout);
    for e in &evs {
        events::validate(e).unwrap_or_else(|why| panic!("{why}: {e}"));
    }
    let of = |t: &str| events::of(&evs, t);

    // Every request was sent with the tools, and answered.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 5, "{}", run.stderr);
    assert!(reqs.iter().all(|r| r.body["tools"].as_array().is_some_and(|t| !t.is_empty())));

    // One request_started per request, before its reply; every count estimated, within the cap.
    let (started, finished) = (of("request_started"), of("api_request"));
    assert_eq!((started.len(), finished.len()), (5, 5), "{}", run.stderr);
    for r in &finished {
        let turn = &r["turn"];
        let s = evs.iter().position(|e| e["type"] == "request_started" && &e["turn"] == turn).unwrap();
        let f = evs.iter().position(|e| e["type"] == "api_request" && &e["turn"] == turn).unwrap();
        assert!(s < f, "request {turn} started after it finished");
        assert_eq!(r["estimated"], true, "{r}");
        let (tin, tout) = (r["tokens_in"].as_u64().unwrap(), r["tokens_out"].as_u64().unwrap());
        assert!(tin > 1000 && tout > 0 && tout <= 200, "request {turn}: {tin} in, {tout} out");
    }
    let totals = &evs.last().unwrap()["totals"];
    assert_eq!((totals["requests"].as_u64(), totals["estimated_requests"].as_u64()), (Some(5), Some(5)));
    assert!(run.stderr.contains("the server reported no usage, so these counts are estimates"), "{}", run.stderr);
    assert!(!run.stderr.contains("stopped at their first tool"), "{}", run.stderr);

    // The two prose replies were cut at the server's limit and called nothing; the server
    // ignored the tools twice: the person is told, once, and what to try.
    let notices: Vec<&str> = of("notice").iter().map(|n| n["kind"].as_str().unwrap()).collect();
    assert_eq!(notices.iter().filter(|k| **k == "cut_off").count(), 2, "{notices:?}");
    assert_eq!(notices.iter().filter(|k| **k == "tools_ignored").count(), 1, "{notices:?}");
    assert!(run.stderr.contains("--tool-calls xml"), "{}", run.stderr);

    // Every call written as text ran, marked recovered, and the person saw it (once a reply).
    let all_calls = of("tool_call");
    let calls: Vec<&Value> = all_calls.iter().copied().filter(|c| c["partial"] == false).collect();
    assert_eq!(calls.len(), 5, "{calls:?}");
    for c in &calls {
        assert_eq!((c["tool"].as_str(), &c["recovered"]), (Some("list_files"), &Value::Bool(true)), "{c}");
        assert_eq!(c["params"]["path"].as_str(), Some("."), "{c}");
    }
    let results = of("tool_result");
    assert_eq!(results.len(), 5);
    assert!(results.iter().all(|r| r["result"].as_str().unwrap().contains("hello.txt")), "{results:?}");
    assert_eq!(notices.iter().filter(|k| **k == "tool_call_recovered").count(), 3, "{notices:?}");
    assert!(run.stderr.contains("recovered from the text"), "{}", run.stderr);

    // The fifth identical call: loop detection stops the run, and says so.
    let end = evs.last().unwrap();
    assert_eq!((end["type"].as_str(), end["status"].as_str()), (Some("completion"), Some("failed")));
    let reason = end["reason"].as_str().unwrap();
    assert!(reason.starts_with("loop detection: the model called list_files"), "{reason}");
    assert!(!reason.contains("without a tool call") && !reason.contains("cut off"), "{reason}");
    assert_eq!(run.code, Some(1));
}

/// Replays reply 4 (the XML call as text, ended by `stop`) three times with recovery off: no call
/// runs, and the run stops at three replies without one.
#[test]
fn recovery_is_off_with_no_recover_text_calls() {
    let [_, _, _, echoed] = recorded();
    let server = Server::start(vec![replay(&echoed); 3]);
    let ws = tempfile::tempdir().unwrap();
    let rest = ["--no-recover-text-calls", "--yolo", "--json", "--no-save", "--max-mistakes", "3", "List the files."];
    let run = run_local(&server, ws.path(), "native", &rest);
    let evs = events::parse(&run.stdout);
    assert_eq!(server.requests().len(), 3, "{}", run.stderr);
    assert!(events::of(&evs, "tool_call").is_empty(), "{}", run.stdout);
    let notices: Vec<&str> = events::of(&evs, "notice").iter().map(|n| n["kind"].as_str().unwrap()).collect();
    assert!(!notices.contains(&"tool_call_recovered"), "{notices:?}");
    let end = evs.last().unwrap();
    let reason = end["reason"].as_str().unwrap();
    assert!(reason.contains("(3 replies without a tool call)"), "{reason}");
    assert_eq!(run.code, Some(1));
}

/// llama-cpp-python's built-in chat formats read a message's content only as a string (a list
/// of parts renders as nothing: the model would see no task). A local server whose model list
/// is llama-cpp-python's (`owned_by: "me"`, as its `/v1/models` answers) gets string contents;
/// any other gets Cline's text parts.
#[test]
fn llama_cpp_python_is_sent_string_contents_and_other_servers_text_parts() {
    let [.., called] = recorded();
    let models = serde_json::json!({"object": "list", "data": [
        {"id": "gemma-3-270m", "object": "model", "owned_by": "me", "permissions": []}
    ]});
    for llama_cpp_python in [true, false] {
        let server = Server::start_answering_models(vec![replay(&called)], llama_cpp_python.then(|| models.clone()));
        let ws = tempfile::tempdir().unwrap();
        let run = run_local(
            &server,
            ws.path(),
            "xml",
            &["--yolo", "--no-save", "--retry-delay", "0.05", "List the files here."],
        );
        let reqs = server.requests();
        assert!(!reqs.is_empty(), "{}", run.stderr);
        let user = &reqs[0].body["messages"][1];
        assert_eq!(user["role"], "user");
        if llama_cpp_python {
            let text = user["content"].as_str().unwrap_or_else(|| panic!("a string: {user}"));
            assert!(text.contains("<task>\nList the files here.\n</task>"), "{text}");
            assert!(text.contains("# Current Working Directory"), "the environment details too: {text}");
        } else {
            let parts = user["content"].as_array().unwrap_or_else(|| panic!("text parts: {user}"));
            assert!(parts.len() >= 2 && parts.iter().all(|p| p["type"] == "text"), "{user}");
        }
    }
}
