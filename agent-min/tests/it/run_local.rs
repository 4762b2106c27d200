//! A local model as a person meets one, replayed byte for byte: the replies of a real
//! llama-cpp-python 0.3.36 server (`python -m llama_cpp.server`, Gemma 3 270M) recorded by
//! `agent-min/scripts/local-model-e2e.sh` (`AGENT_MIN_RECORD_FIXTURE`), served again from a
//! scripted server on 127.0.0.1. That server sends no usage (it ignores `stream_options`),
//! ignores the `tools` it is sent (its chat template does not render them), and streams its own
//! framing (`: ping` comments, `finish_reason` `length` / `stop`, `[DONE]`).

use std::time::Duration;

use serde_json::Value;

use crate::common::{events, run_agent, Resp, Server};

const FIXTURE: &str = "tests/fixtures/llama-cpp-python/gemma3-270m.jsonl";

/// The recorded exchanges with the chat endpoint, in order.
fn recorded() -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (recorded by agent-min/scripts/local-model-e2e.sh)", path.display()));
    text.lines().map(|l| serde_json::from_str(l).unwrap()).filter(|e: &Value| e["status"] == 200).collect()
}

/// The reply text a recorded stream carries (its `delta.content`s joined).
fn content(e: &Value) -> String {
    let body = e["body"].as_str().unwrap();
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .filter_map(|v| v["choices"][0]["delta"]["content"].as_str().map(str::to_string))
        .collect()
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

/// The recorded bytes, served as they came (in the recorded reads' size).
fn replay(e: &Value) -> Resp {
    let chunk = e["reads"].as_array().and_then(|r| r.iter().filter_map(Value::as_u64).max()).unwrap_or(1024);
    Resp {
        status: 200,
        headers: vec![("Content-Type".into(), e["content_type"].as_str().unwrap_or("text/event-stream").to_string())],
        body: e["body"].as_str().unwrap().as_bytes().to_vec(),
        chunk: chunk.clamp(1, 65536) as usize,
        stall: Duration::ZERO,
        stall_at: 0,
    }
}

#[test]
fn the_recording_is_a_server_that_sends_no_usage_ignores_tools_and_pings() {
    let all = recorded();
    assert!(all.len() >= 4, "{} recorded replies", all.len());
    for e in &all {
        let body = e["body"].as_str().unwrap();
        assert!(body.contains("data: [DONE]"), "every stream ends with [DONE]");
        assert!(!body.contains("\"usage\": {") && !body.contains("\"usage\":{"), "no usage: {body:.300}");
        assert!(!body.contains("\"tool_calls\""), "no native call, tools or not");
    }
    assert!(all.iter().any(|e| e["request"]["tools"].as_u64() > Some(0)), "native requests were recorded");
    assert!(all.iter().any(|e| e["body"].as_str().unwrap().contains(": ping")), "the server's pings are kept");
}

#[test]
fn a_native_run_on_the_real_servers_replies_estimates_says_each_request_recovers_text_calls_and_names_loop_detection() {
    let all = recorded();
    let native: Vec<&Value> =
        all.iter().filter(|e| e["request"]["tools"].as_u64() > Some(0) && xml_call(&content(e)).is_none()).collect();
    assert!(native.len() >= 2, "two native replies without a call were recorded");
    // A reply that holds a complete XML call, as the model wrote it (in an XML-dialect request:
    // the server ignores `tools` either way, so a native request gets the same kind of reply).
    let with_call = all
        .iter()
        .find(|e| xml_call(&content(e)).is_some_and(|(name, _)| name != "attempt_completion"))
        .expect("a recorded reply holds a complete XML tool call");
    let (tool, params) = xml_call(&content(with_call)).unwrap();

    // Two replies that ignore the tools, then the same call written as text five times.
    let mut script: Vec<Resp> = native[..2].iter().map(|e| replay(e)).collect();
    script.extend(std::iter::repeat_n(replay(with_call), 5));
    let server = Server::start(script);
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("hello.txt"), "hello from a local model\n").unwrap();
    let url = server.openai_url();
    let args = [
        "--provider",
        "openai",
        "--base-url",
        &url,
        "--model",
        "gemma-3-270m",
        "--tool-calls",
        "native",
        "--yolo",
        "--json",
        "--no-save",
        "--max-tokens",
        "200",
        "--max-mistakes",
        "3",
        "--retry-delay",
        "0.05",
        "List the files in this directory.",
    ];
    let run = run_agent(ws.path(), &args, &[], Duration::from_secs(120));
    let evs = events::parse(&run.stdout);
    for e in &evs {
        events::validate(e).unwrap_or_else(|why| panic!("{why}: {e}"));
    }
    let of = |t: &str| events::of(&evs, t);

    // Every request was sent with the tools, and answered.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 7, "{}", run.stderr);
    assert!(reqs.iter().all(|r| r.body["tools"].as_array().is_some_and(|t| !t.is_empty())));

    // One request_started per request, before its reply; every count estimated, within the cap.
    let (started, finished) = (of("request_started"), of("api_request"));
    assert_eq!((started.len(), finished.len()), (7, 7), "{}", run.stderr);
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
    assert_eq!((totals["requests"].as_u64(), totals["estimated_requests"].as_u64()), (Some(7), Some(7)));
    assert!(run.stderr.contains("the server reported no usage, so these counts are estimates"), "{}", run.stderr);
    assert!(!run.stderr.contains("stopped at their first tool"), "{}", run.stderr);

    // The server ignored the tools twice: the person is told, once, and what to try.
    let notices: Vec<&str> = of("notice").iter().map(|n| n["kind"].as_str().unwrap()).collect();
    assert_eq!(notices.iter().filter(|k| **k == "no_tool_used").count(), 2, "{notices:?}");
    assert_eq!(notices.iter().filter(|k| **k == "tools_ignored").count(), 1, "{notices:?}");
    assert!(run.stderr.contains("--tool-calls xml"), "{}", run.stderr);

    // The call written as text ran, each time, marked recovered, and the person saw it.
    let all_calls = of("tool_call");
    let calls: Vec<&Value> = all_calls.iter().copied().filter(|c| c["partial"] == false).collect();
    assert_eq!(calls.len(), 5, "{calls:?}");
    for c in &calls {
        assert_eq!((c["tool"].as_str(), &c["recovered"]), (Some(tool.as_str()), &Value::Bool(true)), "{c}");
        for (k, v) in &params {
            assert_eq!(c["params"][k].as_str(), Some(v.as_str()), "{c}");
        }
    }
    assert_eq!(of("tool_result").len(), 5);
    assert_eq!(notices.iter().filter(|k| **k == "tool_call_recovered").count(), 5, "{notices:?}");
    assert!(run.stderr.contains("recovered from the text"), "{}", run.stderr);

    // The fifth identical call: loop detection stops the run, and says so.
    let end = evs.last().unwrap();
    assert_eq!((end["type"].as_str(), end["status"].as_str()), (Some("completion"), Some("failed")));
    let reason = end["reason"].as_str().unwrap();
    assert!(reason.starts_with(&format!("loop detection: the model called {tool}")), "{reason}");
    assert!(!reason.contains("no tool used"), "{reason}");
    assert_eq!(run.code, Some(1));
}

#[test]
fn recovery_is_off_with_no_recover_text_calls() {
    let all = recorded();
    let with_call = all.iter().find(|e| xml_call(&content(e)).is_some()).expect("a reply holding an XML call");
    let server = Server::start(vec![replay(with_call); 3]);
    let ws = tempfile::tempdir().unwrap();
    let url = server.openai_url();
    let args = [
        "--provider",
        "openai",
        "--base-url",
        &url,
        "--model",
        "gemma-3-270m",
        "--tool-calls",
        "native",
        "--no-recover-text-calls",
        "--yolo",
        "--json",
        "--no-save",
        "--max-mistakes",
        "3",
        "List the files.",
    ];
    let run = run_agent(ws.path(), &args, &[], Duration::from_secs(120));
    let evs = events::parse(&run.stdout);
    assert!(events::of(&evs, "tool_call").is_empty(), "{}", run.stdout);
    let end = evs.last().unwrap();
    let reason = end["reason"].as_str().unwrap();
    assert!(reason.contains("3 replies without a tool call"), "{reason}");
    assert_eq!(run.code, Some(1));
}
