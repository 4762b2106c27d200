//! Context-window management end to end: the request sent after the threshold is crossed, and
//! one harder cut and a retry after a server's context-length error.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::{json, Value};

const LIMIT: Duration = Duration::from_secs(60);

// Cline v4.0.10's `contextTruncationNotice`, word for word.
const NOTICE: &str = "[NOTE] Some previous conversation history with the user has been removed to maintain optimal context window length. The initial user task has been retained for continuity, while intermediate conversation history has been removed. Keep this in mind as you continue assisting the user. Pay special attention to the user's latest messages.";
const DUP: &str = "[[NOTE] This file read has been removed to save space in the context window. Refer to the latest file read for the most up to date version of this file.]";

fn args_with<'a>(base: &'a [String], extra: &[&'a str]) -> Vec<&'a str> {
    base.iter().map(String::as_str).chain(extra.iter().copied()).collect()
}

fn contents(req: &Req) -> Vec<String> {
    req.body["messages"].as_array().unwrap().iter().map(|m| text_of(&m["content"])).collect()
}

#[test]
fn crossing_the_threshold_drops_repeated_reads_then_half_the_history() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "alpha\n").unwrap();
    let list = tool("list_files", &[("path", ".")]);
    let read = tool("read_file", &[("path", "a.txt")]);
    // A 10,000-token window: Cline's threshold is max(10000 - 40000, 80%) = 8000. The server
    // reports a growing prompt; the fifth reply's 7990 tokens plus what follows cross it.
    let server = Server::start(vec![
        anthropic_usage(&list, 1000),
        anthropic_usage(&list, 2000),
        anthropic_usage(&read, 3000),
        anthropic_usage(&list, 4000),
        anthropic_usage(&read, 7990),
        anthropic_usage(&completion("fits"), 3000),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--json", "--context-window", "10000", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 6);
    // Before the cut nothing was touched: request 5 carries the whole conversation.
    let before = contents(&reqs[4]);
    assert_eq!(before.len(), 9);
    assert!(!before.iter().any(|c| c.contains(NOTICE) || c.contains(DUP)));
    // The request after the cut: [task, notice, u3 (older read of a.txt, now the notice), a3,
    // u4, a4, u5 (the latest read of a.txt)] — half of the 9 messages after the first pair
    // removed (4, ending on an assistant message).
    let after = contents(&reqs[5]);
    assert_eq!(after.len(), 7, "{after:#?}");
    assert_eq!(after[0], before[0], "the task is kept");
    assert!(after[0].starts_with("<task>"));
    assert_eq!(after[1], NOTICE);
    assert!(
        after[2].starts_with("[read_file for 'a.txt'] Result:\n[[NOTE] This file read has been removed"),
        "{}",
        after[2]
    );
    assert!(!after[2].contains("1 | alpha"));
    assert!(after[2].contains("<environment_details>"));
    assert_eq!(after[3], before[7], "a3 is kept as it was");
    assert_eq!(after[4], before[8], "u4 is kept as it was");
    assert!(
        // Cline's file-read cache marks the second read of the unchanged file.
        after[6].starts_with("[read_file for 'a.txt'] Result:\n[File already read] The file 'a.txt' was already read earlier in this conversation. Returning content:\n1 | alpha"),
        "the latest read is kept: {}",
        after[6]
    );
    let roles: Vec<Value> = reqs[5].body["messages"].as_array().unwrap().iter().map(|m| m["role"].clone()).collect();
    assert_eq!(
        roles,
        [
            json!("user"),
            json!("assistant"),
            json!("user"),
            json!("assistant"),
            json!("user"),
            json!("assistant"),
            json!("user")
        ]
    );

    let events = events::parse(&r.stdout);
    let cut = events::of(&events, "context_truncated");
    assert_eq!(cut.len(), 1);
    assert_eq!(cut[0]["reason"], "threshold");
    assert_eq!(cut[0]["limit_tokens"], 8000);
    assert_eq!(cut[0]["removed_messages"], 4);
    assert_eq!(cut[0]["deduplicated_reads"], 1);
    assert!(cut[0]["estimated_tokens"].as_u64().unwrap() >= 8000);
    assert!(r.stderr.contains("Context window:"), "{}", r.stderr);
}

/// A conditional rule an edit turned on stays on after a cut removed the edit: Cline's
/// conditions read its messages, which its cuts never touch.
#[test]
fn a_rule_an_edit_turned_on_stays_on_after_the_cut_removes_the_edit() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join(".clinerules")).unwrap();
    std::fs::write(ws.path().join(".clinerules/web.md"), "---\npaths: [\"web/**\"]\n---\nWEBRULE: use tabs.").unwrap();
    let list = tool("list_files", &[("path", ".")]);
    let write = tool("write_to_file", &[("path", "web/a.txt"), ("content", "x")]);
    let read = tool("read_file", &[("path", ".clinerules/web.md")]);
    // As in the test above: the sixth request is cut, removing the second and third pairs —
    // the second reply is the write. (Its system prompt was made before the cut; the
    // seventh's is the first made after it.)
    let server = Server::start(vec![
        anthropic_usage(&list, 1000),
        anthropic_usage(&write, 2000),
        anthropic_usage(&list, 3000),
        anthropic_usage(&list, 4000),
        anthropic_usage(&list, 7990),
        anthropic_usage(&read, 3000),
        anthropic_usage(&completion("fits"), 3500),
    ]);
    let base = anthropic_args(&server);
    let r =
        run_agent(ws.path(), &args_with(&base, &["--json", "--yolo", "--context-window", "10000", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 7);
    assert_eq!(events::of(&events::parse(&r.stdout), "context_truncated").len(), 1);
    assert!(!contents(&reqs[6]).iter().any(|c| c.contains("web/a.txt")), "the write was cut");
    let rule_on: Vec<bool> =
        reqs.iter().map(|q| q.body["system"][0]["text"].as_str().unwrap().contains("WEBRULE")).collect();
    assert_eq!(rule_on, [false, false, true, true, true, true, true]);
}

#[test]
fn dropping_repeated_reads_alone_can_be_enough() {
    let ws = tempfile::tempdir().unwrap();
    let big: String = (1..=1000).map(|i| format!("line {i:05}\n")).collect(); // read back as ~18 kB, ~4.5k tokens
    std::fs::write(ws.path().join("big.txt"), &big).unwrap();
    let read = tool("read_file", &[("path", "big.txt")]);
    // A 30,000-token window: threshold 24,000. The second read adds ~4.5k tokens to the 20,500
    // reported, which crosses it; dropping the first read brings it back under, so no history
    // is removed.
    let server = Server::start(vec![
        anthropic_usage(&read, 1000),
        anthropic_usage(&read, 20_500),
        anthropic_usage(&completion("ok"), 15_000),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--json", "--context-window", "30000", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    let after = contents(&reqs[2]);
    assert_eq!(after.len(), 5, "no message removed");
    assert!(!after.contains(&NOTICE.to_string()));
    assert!(after[2].contains(DUP) && !after[2].contains("line 00001"), "the older read is dropped");
    assert!(after[4].contains("line 00001"), "the latest read is kept");
    let events = events::parse(&r.stdout);
    let cut = events::of(&events, "context_truncated");
    assert_eq!((cut[0]["removed_messages"].as_u64(), cut[0]["deduplicated_reads"].as_u64()), (Some(0), Some(1)));
}

/// On the default path (native calls), the older read is dropped from what goes out as its
/// call's `tool_result`, as Cline drops it from the text block it keeps there, and its copy is
/// not sent again as text; no history is removed.
#[test]
fn with_native_calls_dropping_repeated_reads_alone_can_be_enough() {
    use common::native::{self, AnthropicReply};
    let ws = tempfile::tempdir().unwrap();
    let big: String = (1..=1000).map(|i| format!("line {i:05}\n")).collect();
    std::fs::write(ws.path().join("big.txt"), &big).unwrap();
    let read = |id| vec![native::call(id, "read_file", &[r#"{"path":"big.txt"}"#])];
    let done = vec![native::call("t3", "attempt_completion", &[r#"{"result":"ok"}"#])];
    // As above: a 30,000-token window, threshold 24,000, crossed by the second read.
    let server = Server::start(vec![
        native::anthropic(AnthropicReply { calls: read("t1"), input_tokens: 1000, ..Default::default() }, 64),
        native::anthropic(AnthropicReply { calls: read("t2"), input_tokens: 20_500, ..Default::default() }, 64),
        native::anthropic(AnthropicReply { calls: done, input_tokens: 15_000, ..Default::default() }, 64),
    ]);
    let base = anthropic_args(&server);
    let extra = ["--tool-calls", "native", "--json", "--context-window", "30000", "t"];
    let r = run_agent(ws.path(), &args_with(&base, &extra), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    let messages = reqs[2].body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5, "no message removed");
    let sent = |m: &Value| m["content"].to_string();
    let older = sent(&messages[2]);
    assert!(older.contains(DUP) && !older.contains("line 00001"), "{}", &older[..older.len().min(400)]);
    assert!(sent(&messages[4]).contains("line 00001"), "the latest read is kept");
    let results: Vec<&Value> =
        messages[2]["content"].as_array().unwrap().iter().filter(|b| b["type"] == "tool_result").collect();
    assert_eq!(results.len(), 1);
    assert!(results[0].to_string().contains(DUP));
    let events = events::parse(&r.stdout);
    let cut = events::of(&events, "context_truncated");
    assert_eq!((cut[0]["removed_messages"].as_u64(), cut[0]["deduplicated_reads"].as_u64()), (Some(0), Some(1)));
}

#[test]
fn a_context_length_error_cuts_harder_once_and_retries() {
    let ws = tempfile::tempdir().unwrap();
    let list = tool("list_files", &[("path", ".")]);
    // llama.cpp server's error, through the OpenAI-compatible provider.
    let too_long = status(
        400,
        json!({"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}),
    );
    let server = Server::start(vec![
        openai(&list),
        openai(&list),
        openai(&list),
        openai(&list),
        too_long,
        openai(&completion("after the cut")),
    ]);
    let base = openai_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--json", "t"]), &[("OPENAI_API_KEY", KEY)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 6, "one retry");
    // OpenAI framing: messages[0] is the system prompt.
    let refused = &reqs[4].body["messages"].as_array().unwrap()[1..];
    let retried = &reqs[5].body["messages"].as_array().unwrap()[1..];
    assert_eq!(refused.len(), 9);
    // A quarter kept: 4 of the 7 messages after the first pair removed, ending on an assistant.
    assert_eq!(retried.len(), 5);
    assert_eq!(retried[0], refused[0]);
    assert_eq!(retried[1]["content"], NOTICE);
    assert_eq!(retried[2..], refused[6..]);
    let events = events::parse(&r.stdout);
    let cut = events::of(&events, "context_truncated");
    assert_eq!(cut.len(), 1);
    assert_eq!((cut[0]["reason"].as_str(), cut[0]["removed_messages"].as_u64()), (Some("context_error"), Some(4)));
    assert_eq!(events::of(&events, "retry").len(), 1);
}

/// Gemini's OpenAI-compatible endpoint refuses a long prompt with an array of one error whose
/// wording is none of the others ("input token count … exceeds the maximum number of tokens
/// allowed", one of Cline's patterns): the history is cut and the request sent again, rather
/// than the task failing.
#[test]
fn geminis_input_token_count_error_cuts_and_retries() {
    let ws = tempfile::tempdir().unwrap();
    let list = tool("list_files", &[("path", ".")]);
    let too_long = status(
        400,
        json!([{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]),
    );
    let server = Server::start(vec![openai(&list), openai(&list), openai(&list), too_long, openai(&completion("cut"))]);
    let base = openai_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--json", "t"]), &[("OPENAI_API_KEY", KEY)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 5, "one retry");
    let refused = reqs[3].body["messages"].as_array().unwrap().len();
    let retried = &reqs[4].body["messages"].as_array().unwrap()[1..];
    assert!(retried.len() < refused - 1, "{} of {refused}", retried.len());
    assert_eq!(retried[1]["content"], NOTICE);
    let events = events::parse(&r.stdout);
    let cut = events::of(&events, "context_truncated");
    assert_eq!(cut.len(), 1);
    assert_eq!(cut[0]["reason"], "context_error");
}

#[test]
fn context_errors_until_no_history_is_left_to_cut_fail_naming_the_fix() {
    let ws = tempfile::tempdir().unwrap();
    let list = tool("list_files", &[("path", ".")]);
    let too_long = status(
        400,
        json!({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}),
    );
    let mut script = vec![anthropic(&list), anthropic(&list), anthropic(&list)];
    script.extend(std::iter::repeat_n(too_long, 6));
    script.push(anthropic(&completion("never")));
    let server = Server::start(script);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["t"]), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    // 7 messages: cut to 5, then to 3, which is all Cline keeps; the next refusal ends it.
    let sizes: Vec<usize> =
        server.requests()[3..].iter().map(|r| r.body["messages"].as_array().unwrap().len()).collect();
    assert_eq!(sizes, [7, 5, 3], "cut while more than 3 messages were left, then stopped");
    assert!(r.stderr.contains("prompt is too long"), "{}", r.stderr);
    // Nothing more can be cut: a smaller --context-window would not help, and is not advised.
    assert!(r.stderr.contains("even with all older history removed: the system prompt"), "{}", r.stderr);
    assert!(!r.stderr.contains("--context-window"), "{}", r.stderr);
}

/// A refusal after a cut cuts again while history is left (Cline re-arms its cut when more than
/// 3 messages remain, and its automatic retries take it): a long task is not ended by a second
/// refusal. Anthropic's refusal of input + max_tokens over the window is one (it was not
/// recognised: the task failed at once).
#[test]
fn a_context_error_after_a_cut_cuts_again_while_history_is_left() {
    let ws = tempfile::tempdir().unwrap();
    let too_long = status(
        400,
        json!({"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 188059 + 64000 > 200000, decrease input length or `max_tokens` and try again"}}),
    );
    // Twelve different reads (the same call five times in a row is a loop, and stops a task).
    let mut script = Vec::new();
    for i in 0..12 {
        std::fs::write(ws.path().join(format!("f{i}.txt")), "x\n").unwrap();
        script.push(anthropic(&tool("read_file", &[("path", &format!("f{i}.txt"))])));
    }
    script.extend([too_long.clone(), too_long, anthropic(&completion("after two cuts"))]);
    let server = Server::start(script);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--json", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 15, "two cuts, each followed by a retry");
    let sizes: Vec<usize> = reqs[12..].iter().map(|r| r.body["messages"].as_array().unwrap().len()).collect();
    assert!(sizes[0] > sizes[1] && sizes[1] > sizes[2] && sizes[2] > 3, "{sizes:?}");
    let events = events::parse(&r.stdout);
    let cuts = events::of(&events, "context_truncated");
    assert_eq!(cuts.len(), 2);
    assert!(cuts.iter().all(|c| c["reason"] == "context_error"), "{cuts:?}");
}

#[test]
fn a_vllm_server_says_its_window_in_its_model_list() {
    // vLLM answers none of llama.cpp's, LM Studio's or Ollama's questions; its `/v1/models`
    // says each model's `max_model_len` (its ModelCard).
    let ws = tempfile::tempdir().unwrap();
    let models = json!({"object": "list", "data": [{"id": "gpt-test", "object": "model", "created": 1, "owned_by": "vllm", "root": "gpt-test", "parent": null, "max_model_len": 8192, "permission": []}]});
    let server = Server::start_answering_models(vec![openai(&completion("done"))], Some(models));
    let r = run_agent(ws.path(), &args_with(&openai_args(&server), &["t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stderr.contains("Context window: 8192 tokens, as the server's /v1/models says."), "{}", r.stderr);
}

#[test]
fn a_resumed_task_measures_its_first_request_from_the_saved_usage() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let list = tool("list_files", &[("path", ".")]);
    // A 100,000-token window: the threshold is 80,000. The third reply's prompt was 79,990
    // tokens; the run stops there (--max-turns 3), before its next request.
    let server =
        Server::start(vec![anthropic_usage(&list, 1000), anthropic_usage(&list, 2000), anthropic_usage(&list, 79_990)]);
    let base = anthropic_args(&server);
    let first = ["--context-window", "100000", "--state-dir", &state_dir, "--max-turns", "3", "t"];
    let r = run_agent(ws.path(), &args_with(&base, &first), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());

    // Resumed, the saved 79,990 tokens plus the resumed message cross the threshold: the first
    // request is cut as Cline's context manager cuts it from the saved usage. (Estimated from
    // the text alone, a few thousand tokens, it went out whole.)
    let server = Server::start(vec![anthropic(&completion("done"))]);
    let base = anthropic_args(&server);
    let again = ["--last", "--context-window", "100000", "--state-dir", &state_dir];
    let r = run_cmd("resume", ws.path(), &args_with(&base, &again), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let sent = contents(&server.requests()[0]);
    assert_eq!(sent.len(), 5, "{sent:#?}");
    assert_eq!(sent[1], NOTICE);
}

/// A task whose request failed just after a cut is resumed without a second cut: the saved
/// size was measured before the cut, so the resumed request is estimated from its text, as the
/// run would have sent it again.
#[test]
fn a_task_resumed_after_a_failed_request_that_followed_a_cut_is_not_cut_again() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    std::fs::write(ws.path().join("a.txt"), "alpha\n").unwrap();
    let list = tool("list_files", &[("path", ".")]);
    let read = tool("read_file", &[("path", "a.txt")]);
    let err = status(500, json!({"type":"error","error":{"type":"api_error","message":"boom"}}));
    // A 100,000-token window (threshold 80,000): the sixth request is cut (11 messages to 7),
    // then fails for good (four attempts). Its conversation is some 11,000 tokens of text.
    let server = Server::start(vec![
        anthropic_usage(&list, 10_000),
        anthropic_usage(&list, 20_000),
        anthropic_usage(&read, 30_000),
        anthropic_usage(&list, 40_000),
        anthropic_usage(&read, 79_990),
        err.clone(),
        err.clone(),
        err.clone(),
        err,
    ]);
    let base = anthropic_args(&server);
    let first = ["--json", "--context-window", "100000", "--state-dir", &state_dir, "t"];
    let r = run_agent(ws.path(), &args_with(&base, &first), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert_eq!(events::of(&events::parse(&r.stdout), "context_truncated").len(), 1);
    assert_eq!(contents(&server.requests()[5]).len(), 7);

    let server = Server::start(vec![anthropic(&completion("done"))]);
    let base = anthropic_args(&server);
    let again = ["--json", "--last", "--context-window", "100000", "--state-dir", &state_dir];
    let r = run_cmd("resume", ws.path(), &args_with(&base, &again), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(events::of(&events::parse(&r.stdout), "context_truncated"), Vec::<&Value>::new());
    assert_eq!(contents(&server.requests()[0]).len(), 7, "the cut conversation, not cut again");
}
