//! The scripted server's native wire shapes: Anthropic `tool_use` blocks streamed as
//! `input_json_delta` fragments, thinking with `signature_delta`, redacted thinking; OpenAI
//! `tool_calls[i].function.arguments` fragments keyed by index (parallel calls interleaved),
//! `reasoning_content` deltas; OpenAI's Responses API events (a reasoning summary, output text,
//! `function_call` items with their argument deltas, `response.completed` with usage); Ollama's
//! whole `message.tool_calls`. And the check every real API makes of a request's history: each
//! call answered by exactly one result right after it (and, with Anthropic thinking on, each
//! calling turn's signed thinking sent back; on the Responses API each `function_call` and
//! `function_call_output` paired by `call_id`) — a request that breaks it gets the API's 400.

use serde_json::{json, Value};

use super::{sse, Resp};

/// One native tool call of a scripted reply: id, name, and its arguments' JSON text in the
/// fragments the server sends.
pub struct Call<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub fragments: Vec<&'a str>,
}

/// A call whose arguments come in `fragments`.
pub fn call<'a>(id: &'a str, name: &'a str, fragments: &[&'a str]) -> Call<'a> {
    Call { id, name, fragments: fragments.to_vec() }
}

/// What an Anthropic reply streams, in order: thinking (text, signature), redacted thinking,
/// text, then the calls.
#[derive(Default)]
pub struct AnthropicReply<'a> {
    pub thinking: Option<(&'a str, &'a str)>,
    pub redacted: Option<&'a str>,
    pub text: &'a str,
    pub calls: Vec<Call<'a>>,
    pub stop: Option<&'a str>,
    /// The prompt's tokens the server reports (80 when 0).
    pub input_tokens: u64,
}

fn event_stream(body: String, chunk: usize) -> Resp {
    Resp {
        status: 200,
        headers: vec![("Content-Type".into(), "text/event-stream".into())],
        body: body.into_bytes(),
        chunk,
        stall: std::time::Duration::ZERO,
        stall_at: 0,
        gate: None,
    }
}

/// A block of an Anthropic reply, for [`anthropic_blocks`].
pub enum Block<'a> {
    /// Thinking: its text and signature.
    Thinking(&'a str, &'a str),
    /// Redacted thinking's data.
    Redacted(&'a str),
    /// Text.
    Text(&'a str),
    /// A tool call.
    Call(Call<'a>),
}

/// An Anthropic stream, written `chunk` bytes at a time (1–3 cut through UTF-8 characters).
pub fn anthropic(r: AnthropicReply<'_>, chunk: usize) -> Resp {
    let mut blocks = Vec::new();
    blocks.extend(r.thinking.map(|(t, sig)| Block::Thinking(t, sig)));
    blocks.extend(r.redacted.map(Block::Redacted));
    if !r.text.is_empty() {
        blocks.push(Block::Text(r.text));
    }
    let calls = !r.calls.is_empty();
    blocks.extend(r.calls.into_iter().map(Block::Call));
    let stop = r.stop.unwrap_or(if calls { "tool_use" } else { "end_turn" });
    anthropic_stream(&blocks, stop, r.input_tokens, chunk)
}

/// An Anthropic stream of `blocks` in the order given (interleaved thinking: thinking between
/// calls), ending `tool_use` when it holds a call.
pub fn anthropic_blocks(blocks: &[Block<'_>], chunk: usize) -> Resp {
    let calls = blocks.iter().any(|b| matches!(b, Block::Call(_)));
    anthropic_stream(blocks, if calls { "tool_use" } else { "end_turn" }, 0, chunk)
}

fn anthropic_stream(blocks: &[Block<'_>], stop: &str, input_tokens: u64, chunk: usize) -> Resp {
    let ev = |b: &mut String, name: &str, data: Value| b.push_str(&sse(Some(name), &data));
    let mut b = String::new();
    ev(
        &mut b,
        "message_start",
        json!({"type":"message_start","message":{"id":"msg_n","type":"message","role":"assistant","content":[],"model":"claude-test","usage":{"input_tokens":if input_tokens == 0 { 80 } else { input_tokens },"output_tokens":1}}}),
    );
    for (index, block) in blocks.iter().enumerate() {
        let start = |b: &mut String, block: Value| {
            ev(b, "content_block_start", json!({"type":"content_block_start","index":index,"content_block":block}))
        };
        let delta = |b: &mut String, delta: Value| {
            ev(b, "content_block_delta", json!({"type":"content_block_delta","index":index,"delta":delta}))
        };
        match block {
            Block::Thinking(text, sig) => {
                start(&mut b, json!({"type":"thinking","thinking":""}));
                for p in super::pieces(text, 4) {
                    delta(&mut b, json!({"type":"thinking_delta","thinking":p}));
                }
                delta(&mut b, json!({"type":"signature_delta","signature":sig}));
            }
            Block::Redacted(data) => start(&mut b, json!({"type":"redacted_thinking","data":data})),
            Block::Text(text) => {
                start(&mut b, json!({"type":"text","text":""}));
                for p in super::pieces(text, 5) {
                    delta(&mut b, json!({"type":"text_delta","text":p}));
                }
            }
            Block::Call(c) => {
                start(&mut b, json!({"type":"tool_use","id":c.id,"name":c.name,"input":{}}));
                for f in &c.fragments {
                    delta(&mut b, json!({"type":"input_json_delta","partial_json":f}));
                }
            }
        }
        ev(&mut b, "content_block_stop", json!({"type":"content_block_stop","index":index}));
    }
    ev(
        &mut b,
        "message_delta",
        json!({"type":"message_delta","delta":{"stop_reason":stop},"usage":{"output_tokens":30}}),
    );
    ev(&mut b, "message_stop", json!({"type":"message_stop"}));
    event_stream(b, chunk)
}

/// An OpenAI-compatible stream: `reasoning` as `reasoning_content` deltas, `text`, then the
/// calls' fragments interleaved round-robin (parallel calls), keyed by index.
pub fn openai(reasoning: &str, text: &str, calls: &[Call<'_>], chunk: usize) -> Resp {
    openai_signed(reasoning, text, calls, chunk, Signed::No)
}

/// How a Gemini 3 reply signs its first call (`thought_signature(id)`), which the API needs
/// back with it ([`gemini_problem`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Signed {
    /// Not at all (any other model).
    No,
    /// Google's OpenAI-compatible endpoint: the call's `extra_content.google.thought_signature`.
    Google,
    /// OpenRouter: the reasoning as `reasoning` and `reasoning_details` text pieces (index 0),
    /// then a `reasoning.encrypted` object whose `id` is the call's (index 1).
    OpenRouter,
}

/// The thought signature the scripted Gemini gives the call `id`.
pub fn thought_signature(id: &str) -> String {
    format!("sig-{id}")
}

/// [`openai`], with the first call signed as `signed` says.
pub fn openai_signed(reasoning: &str, text: &str, calls: &[Call<'_>], chunk: usize, signed: Signed) -> Resp {
    let chunk_of = |delta: Value, finish: Value| {
        sse(
            None,
            &json!({"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":delta,"finish_reason":finish}]}),
        )
    };
    let mut b = chunk_of(json!({"role":"assistant","content":""}), Value::Null);
    for p in super::pieces(reasoning, 4) {
        b.push_str(&chunk_of(
            if signed == Signed::OpenRouter {
                json!({"reasoning": p, "reasoning_details": [{"type": "reasoning.text", "text": p, "format": "google-gemini-v1", "index": 0}]})
            } else {
                json!({"reasoning_content": p})
            },
            Value::Null,
        ));
    }
    for p in super::pieces(text, 5) {
        b.push_str(&chunk_of(json!({"content": p}), Value::Null));
    }
    for (i, c) in calls.iter().enumerate() {
        let mut call = json!({"index":i,"id":c.id,"type":"function","function":{"name":c.name,"arguments":""}});
        if i == 0 && signed == Signed::Google {
            call["extra_content"] = json!({"google": {"thought_signature": thought_signature(c.id)}});
        }
        let mut delta = json!({"tool_calls": [call]});
        if i == 0 && signed == Signed::OpenRouter {
            delta["reasoning_details"] = json!([{"type": "reasoning.encrypted", "data": thought_signature(c.id), "id": c.id, "format": "google-gemini-v1", "index": 1}]);
        }
        b.push_str(&chunk_of(delta, Value::Null));
    }
    let longest = calls.iter().map(|c| c.fragments.len()).max().unwrap_or(0);
    for k in 0..longest {
        for (i, c) in calls.iter().enumerate() {
            if let Some(f) = c.fragments.get(k) {
                b.push_str(&chunk_of(json!({"tool_calls":[{"index":i,"function":{"arguments":f}}]}), Value::Null));
            }
        }
    }
    let finish = if calls.is_empty() { "stop" } else { "tool_calls" };
    b.push_str(&chunk_of(json!({}), json!(finish)));
    b.push_str(&sse(None, &json!({"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":9}})));
    b.push_str("data: [DONE]\n\n");
    event_stream(b, chunk)
}

/// An OpenAI Responses API stream (`POST /v1/responses`, `stream: true`), as the API sends it:
/// each event named in `event:` and again in its `type`, numbered by `sequence_number`; a
/// reasoning item whose summary is `reasoning`, a message of `text`, then each call as a
/// `function_call` item (`fc_<n>`, its `call_id` the call's id) whose arguments come as
/// `response.function_call_arguments.delta` fragments, and `response.completed` with usage.
pub fn responses(reasoning: &str, text: &str, calls: &[Call<'_>], chunk: usize) -> Resp {
    let mut b = String::new();
    let mut seq = 0;
    let mut ev = |data: Value| {
        let mut data = data;
        data["sequence_number"] = json!(seq);
        seq += 1;
        b.push_str(&format!(
            "event: {}
data: {data}

",
            data["type"].as_str().unwrap()
        ));
    };
    let response = |status: &str, output: Value, usage: Value| {
        json!({"id":"resp_1","object":"response","created_at":1760000000,"status":status,"model":"gpt-5.5-2026-04-23",
               "output":output,"usage":usage})
    };
    ev(json!({"type":"response.created","response":response("in_progress", json!([]), Value::Null)}));
    ev(json!({"type":"response.in_progress","response":response("in_progress", json!([]), Value::Null)}));
    let mut output = Vec::new();
    let mut at = 0;
    if !reasoning.is_empty() {
        ev(
            json!({"type":"response.output_item.added","output_index":at,"item":{"id":"rs_1","type":"reasoning","summary":[]}}),
        );
        let part = json!({"type":"summary_text","text":""});
        ev(
            json!({"type":"response.reasoning_summary_part.added","item_id":"rs_1","output_index":at,"summary_index":0,"part":part}),
        );
        for p in super::pieces(reasoning, 4) {
            ev(
                json!({"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":at,"summary_index":0,"delta":p}),
            );
        }
        ev(
            json!({"type":"response.reasoning_summary_text.done","item_id":"rs_1","output_index":at,"summary_index":0,"text":reasoning}),
        );
        let part = json!({"type":"summary_text","text":reasoning});
        ev(
            json!({"type":"response.reasoning_summary_part.done","item_id":"rs_1","output_index":at,"summary_index":0,"part":part}),
        );
        let item = json!({"id":"rs_1","type":"reasoning","summary":[part]});
        ev(json!({"type":"response.output_item.done","output_index":at,"item":item}));
        output.push(item);
        at += 1;
    }
    if !text.is_empty() {
        let item = |status: &str, content: Value| json!({"id":"msg_1","type":"message","status":status,"role":"assistant","content":content});
        ev(json!({"type":"response.output_item.added","output_index":at,"item":item("in_progress", json!([]))}));
        let part = |t: &str| json!({"type":"output_text","annotations":[],"logprobs":[],"text":t});
        ev(
            json!({"type":"response.content_part.added","item_id":"msg_1","output_index":at,"content_index":0,"part":part("")}),
        );
        for p in super::pieces(text, 5) {
            ev(
                json!({"type":"response.output_text.delta","item_id":"msg_1","output_index":at,"content_index":0,"delta":p,"logprobs":[]}),
            );
        }
        ev(
            json!({"type":"response.output_text.done","item_id":"msg_1","output_index":at,"content_index":0,"text":text,"logprobs":[]}),
        );
        ev(
            json!({"type":"response.content_part.done","item_id":"msg_1","output_index":at,"content_index":0,"part":part(text)}),
        );
        let done = item("completed", json!([part(text)]));
        ev(json!({"type":"response.output_item.done","output_index":at,"item":done}));
        output.push(done);
        at += 1;
    }
    for (n, c) in calls.iter().enumerate() {
        let id = format!("fc_{n}");
        let item = |status: &str, args: &str| json!({"id":id,"type":"function_call","status":status,"arguments":args,"call_id":c.id,"name":c.name});
        ev(json!({"type":"response.output_item.added","output_index":at,"item":item("in_progress", "")}));
        for f in &c.fragments {
            ev(json!({"type":"response.function_call_arguments.delta","item_id":id,"output_index":at,"delta":f}));
        }
        let args: String = c.fragments.concat();
        ev(json!({"type":"response.function_call_arguments.done","item_id":id,"output_index":at,"arguments":args}));
        ev(json!({"type":"response.output_item.done","output_index":at,"item":item("completed", &args)}));
        output.push(item("completed", &args));
        at += 1;
    }
    let usage = json!({"input_tokens":900,"input_tokens_details":{"cached_tokens":768},"output_tokens":60,
                       "output_tokens_details":{"reasoning_tokens":20},"total_tokens":960});
    ev(json!({"type":"response.completed","response":response("completed", Value::Array(output), usage)}));
    event_stream(b, chunk)
}

/// An Ollama `/api/chat` NDJSON stream: `text` in pieces, then each call whole (as Ollama
/// sends them: arguments as an object, no id), then `done`.
pub fn ollama(text: &str, calls: &[(&str, Value)], chunk: usize) -> Resp {
    let mut b = String::new();
    for p in super::pieces(text, 5) {
        b.push_str(&json!({"model":"m","message":{"role":"assistant","content":p},"done":false}).to_string());
        b.push('\n');
    }
    if !calls.is_empty() {
        let tc: Vec<Value> = calls.iter().map(|(n, a)| json!({"function":{"name":n,"arguments":a}})).collect();
        b.push_str(
            &json!({"model":"m","message":{"role":"assistant","content":"","tool_calls":tc},"done":false}).to_string(),
        );
        b.push('\n');
    }
    b.push_str(&json!({"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":40,"eval_count":8}).to_string());
    b.push('\n');
    Resp { headers: vec![("Content-Type".into(), "application/x-ndjson".into())], ..event_stream(b, chunk) }
}

/// What the real API answers a request whose history breaks its rules, or `None`.
pub fn check(path: &str, body: &Value) -> Option<Value> {
    if path.ends_with("/responses") {
        let problem = responses_problem(body)
            .or_else(|| tool_name_problem(body))
            .or_else(|| tool_schema_problem(body))
            .or_else(|| image_problem(path, body));
        return problem
            .map(|m| json!({"error":{"message":m,"type":"invalid_request_error","param":"input","code":null}}));
    }
    let msgs = body.get("messages")?.as_array()?;
    let problem = settings_problem(path, body).or_else(|| tool_name_problem(body)).or_else(|| {
        if path.ends_with("/v1/messages") {
            anthropic_problem(body, msgs)
        } else {
            chat_problem(msgs)
                .or_else(|| reasoning_back_problem(body, msgs))
                .or_else(|| gemini_problem(body, msgs))
                .or_else(|| path.ends_with("/chat/completions").then(|| tool_schema_problem(body)).flatten())
        }
    });
    let problem = problem.or_else(|| image_problem(path, body));
    problem.map(|m| json!({"type":"error","error":{"type":"invalid_request_error","message":m}}))
}

/// The request settings the real APIs refuse, in their words: on OpenAI's reasoning models
/// `max_tokens` and a temperature other than 1; on Anthropic's a temperature or forced tool use
/// with thinking, `max_tokens` not above the thinking budget, `tool_choice` without tools, more
/// than 4 `cache_control` marks.
fn settings_problem(path: &str, body: &Value) -> Option<String> {
    let model = body["model"].as_str().unwrap_or("");
    if path.ends_with("/chat/completions") && ONLY_RESPONSES.contains(&model) {
        return Some("This model is only supported in v1/responses and not in v1/chat/completions.".into());
    }
    if path.ends_with("/chat/completions") {
        let reasoning = ["o1", "o3", "o4", "gpt-5"].iter().any(|p| model.starts_with(p)) && !model.contains("chat");
        if reasoning && body.get("max_tokens").is_some() {
            return Some("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.".into());
        }
        if reasoning && body.get("temperature").is_some_and(|t| t.as_f64() != Some(1.0)) {
            return Some(format!("Unsupported value: 'temperature' does not support {} with this model. Only the default (1) value is supported.", body["temperature"]));
        }
        return None;
    }
    if !path.ends_with("/v1/messages") {
        return None;
    }
    let thinking = body.pointer("/thinking/type").and_then(Value::as_str) == Some("enabled");
    if thinking && body.get("temperature").is_some_and(|t| t.as_f64() != Some(1.0)) {
        return Some("`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#important-considerations-when-using-extended-thinking".into());
    }
    let forced = matches!(body.pointer("/tool_choice/type").and_then(Value::as_str), Some("any") | Some("tool"));
    if thinking && forced {
        return Some("Thinking may not be enabled when tool_choice forces tool use.".into());
    }
    // Claude Sonnet 5.5 (and Opus 5.5, Fable 5.1) refuse forced tool use ("Forced tool use
    // returns an error", Anthropic's "What's new in Claude Sonnet 5.5"); Opus 4.7 and the
    // Claude 5 models refuse a sampling parameter (Opus 4.7's own wording).
    let newest = ["claude-sonnet-5-5", "claude-opus-5-5", "claude-fable-5-1"].iter().any(|p| model.starts_with(p));
    if newest && forced {
        return Some("tool_choice: forced tool use is not supported for this model; use `auto`.".into());
    }
    let no_sampling =
        ["claude-opus-4-7", "claude-opus-5", "claude-sonnet-5", "claude-fable-5"].iter().any(|p| model.starts_with(p));
    if no_sampling && body.get("temperature").is_some() {
        return Some("`temperature` is deprecated for this model.".into());
    }
    let budget = body.pointer("/thinking/budget_tokens").and_then(Value::as_u64).unwrap_or(0);
    if thinking && body["max_tokens"].as_u64().unwrap_or(0) <= budget {
        return Some("`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size".into());
    }
    if body.get("tool_choice").is_some() && body.get("tools").is_none() {
        return Some("tool_choice may only be specified while providing tools.".into());
    }
    let marks = body.to_string().matches("\"cache_control\"").count();
    if marks > 4 {
        return Some(format!("A maximum of 4 blocks with cache_control may be provided. Found {marks}."));
    }
    None
}

/// OpenAI's models that its API serves on `/v1/responses` only (Cline's `apiFormat`
/// `OPENAI_RESPONSES*`; the real API refuses the codex models with 404 and gpt-5.4/5.5 with
/// function tools and reasoning effort with 400 — here each with a 400 naming /v1/responses).
const ONLY_RESPONSES: &[&str] = &[
    "gpt-5.5",
    "gpt-5.4",
    "gpt-5.4-mini",
    "gpt-5.4-nano",
    "gpt-5.3-codex",
    "gpt-5.2-codex",
    "gpt-5.1-codex",
    "gpt-5-codex",
    // Served there only, and not in Cline's table.
    "o3-pro",
    "gpt-5-pro",
    "gpt-5.1-codex-max",
    "codex-mini-latest",
];

/// What the Responses API refuses, in its words: Chat Completions' fields, a
/// `max_output_tokens` below 16, an `input` whose
/// `function_call` and `function_call_output` items do not pair up by `call_id` (each output
/// after its call, each call answered), items it does not
/// know, and tools in Chat Completions' nested shape.
fn responses_problem(body: &Value) -> Option<String> {
    for key in ["messages", "max_tokens", "max_completion_tokens", "stream_options", "reasoning_effort"] {
        if body.get(key).is_some() {
            return Some(format!("Unsupported parameter: '{key}'."));
        }
    }
    let effort = body.pointer("/reasoning/effort").and_then(Value::as_str);
    if body["model"] == "gpt-5-pro" && effort.is_some_and(|e| e != "high") {
        let e = effort.unwrap_or("");
        return Some(format!(
            "Unsupported value: '{e}' is not supported with the 'gpt-5-pro' model. Supported values are: 'high'."
        ));
    }
    if let Some(n) = body.get("max_output_tokens").and_then(Value::as_u64).filter(|&n| n < 16) {
        return Some(format!(
            "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got {n} instead."
        ));
    }
    if let Some(t) =
        body.get("tools").and_then(Value::as_array).and_then(|a| a.iter().find(|t| t.get("function").is_some()))
    {
        return Some(format!("Missing required parameter: 'tools[0].name'. (got a Chat Completions tool: {t})"));
    }
    let input = body.get("input")?.as_array()?;
    let mut called: Vec<&str> = Vec::new();
    let mut answered: Vec<&str> = Vec::new();
    for (i, item) in input.iter().enumerate() {
        let ty = item.get("type").and_then(Value::as_str).unwrap_or("message");
        match ty {
            "function_call" => called.push(item["call_id"].as_str().unwrap_or("")),
            "function_call_output" => {
                let id = item["call_id"].as_str().unwrap_or("");
                if !called.contains(&id) {
                    return Some(format!("No tool call found for function call output with call_id {id}."));
                }
                answered.push(id);
            }
            "message" | "reasoning" => {
                let role = item.get("role").and_then(Value::as_str).unwrap_or("");
                if ty == "message" && !["user", "assistant", "system", "developer"].contains(&role) {
                    return Some(format!("Invalid value: '{role}'. Supported values are: 'assistant', 'system', 'developer', and 'user'. (input[{i}].role)"));
                }
            }
            other => return Some(format!("Invalid value: '{other}'. (input[{i}].type)")),
        }
    }
    called.iter().find(|id| !answered.contains(id)).map(|id| format!("No tool output found for function call {id}."))
}

/// Both APIs refuse a function name that is not 1 to 64 of `[a-zA-Z0-9_-]`, in OpenAI's words.
fn tool_name_problem(body: &Value) -> Option<String> {
    let tools = body.get("tools")?.as_array()?;
    tools.iter().enumerate().find_map(|(i, t)| {
        let name = t["name"].as_str().or(t["function"]["name"].as_str()).unwrap_or("");
        let ok = (1..=64).contains(&name.len())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        (!ok).then(|| format!("Invalid 'tools[{i}].name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]{{1,64}}$'."))
    })
}

/// OpenAI refuses a function whose parameters hold an array schema without `items` (with
/// `strict: false` too), in its words; Anthropic and Ollama take it.
fn tool_schema_problem(body: &Value) -> Option<String> {
    fn missing(schema: &Value, at: &mut Vec<String>) -> bool {
        let Some(o) = schema.as_object() else { return false };
        let array = |t: &Value| t == "array" || t.as_array().is_some_and(|ts| ts.iter().any(|t| t == "array"));
        if o.get("type").is_some_and(array) && !o.contains_key("items") && !o.contains_key("prefixItems") {
            return true;
        }
        for key in ["properties", "$defs"] {
            for (name, sub) in o.get(key).and_then(Value::as_object).into_iter().flatten() {
                at.extend([key.to_string(), name.clone()]);
                if missing(sub, at) {
                    return true;
                }
                at.truncate(at.len() - 2);
            }
        }
        at.push("items".into());
        let found = o.get("items").is_some_and(|i| missing(i, at));
        if !found {
            at.pop();
        }
        found
    }
    let tools = body.get("tools")?.as_array()?;
    tools.iter().find_map(|t| {
        let (name, params) = match t.get("function") {
            Some(f) => (&f["name"], &f["parameters"]),
            None => (&t["name"], &t["parameters"]),
        };
        let mut at = Vec::new();
        missing(params, &mut at).then(|| {
            let context: Vec<String> = at.iter().map(|k| format!("'{k}'")).collect();
            format!(
                "Invalid schema for function '{}': In context=({}), array schema missing items.",
                name.as_str().unwrap_or(""),
                context.join(", ")
            )
        })
    })
}

/// What Anthropic's API refuses in a tool's `input_schema`: a property name outside its
/// pattern, in its words, and a local `$ref` that resolves to nothing in the schema.
fn anthropic_tool_problem(body: &Value) -> Option<String> {
    fn refs<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
        match v {
            Value::Object(o) => {
                out.extend(o.get("$ref").and_then(Value::as_str));
                o.values().for_each(|v| refs(v, out));
            }
            Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    let fits = |k: &str| {
        (1..=64).contains(&k.len()) && k.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    };
    for (n, t) in body.get("tools")?.as_array()?.iter().enumerate() {
        let schema = &t["input_schema"];
        let keys = schema["properties"].as_object().into_iter().flat_map(|p| p.keys());
        if keys.clone().any(|k| !fits(k)) {
            return Some(format!("tools.{n}.custom.input_schema.properties: Property keys should match pattern '^[a-zA-Z0-9_.-]{{1,64}}$'"));
        }
        let mut found = Vec::new();
        refs(schema, &mut found);
        for r in found {
            let resolved = r.strip_prefix('#').is_some_and(|p| schema.pointer(p).is_some());
            if !resolved {
                return Some(format!(
                    "tools.{n}.custom.input_schema: JSON schema is invalid: reference {r:?} could not be resolved"
                ));
            }
        }
    }
    None
}

fn anthropic_problem(body: &Value, msgs: &[Value]) -> Option<String> {
    if let Some(problem) = anthropic_tool_problem(body) {
        return Some(problem);
    }
    let thinking = body.pointer("/thinking/type").and_then(Value::as_str) == Some("enabled");
    let has_tools = body.get("tools").is_some_and(|t| t.as_array().is_some_and(|a| !a.is_empty()));
    for (i, m) in msgs.iter().enumerate() {
        let blocks = m["content"].as_array().cloned().unwrap_or_default();
        let empty =
            m["content"].as_str().is_some_and(str::is_empty) || m["content"].as_array().is_some_and(Vec::is_empty);
        if empty && !(i + 1 == msgs.len() && m["role"] == "assistant") {
            return Some(format!("messages.{i}: all messages must have non-empty content except for the optional final assistant message"));
        }
        if blocks.iter().any(|b| b["type"] == "text" && b["text"].as_str().is_some_and(str::is_empty)) {
            return Some(format!("messages.{i}: text content blocks must be non-empty"));
        }
        let ids: Vec<&str> =
            blocks.iter().filter(|b| b["type"] == "tool_use").filter_map(|b| b["id"].as_str()).collect();
        if m["role"] == "assistant" && !ids.is_empty() {
            if !has_tools {
                return Some("Requests which include `tool_use` or `tool_result` blocks must define tools.".into());
            }
            if thinking && !matches!(blocks[0]["type"].as_str(), Some("thinking") | Some("redacted_thinking")) {
                return Some(format!("messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{}`. When `thinking` is enabled, a final `assistant` message must start with a thinking block.", blocks[0]["type"]));
            }
            if blocks.iter().any(|b| b["type"] == "thinking" && b["signature"].as_str().unwrap_or("").is_empty()) {
                return Some(format!("messages.{i}: thinking block without a signature"));
            }
            // The API knows from a signature where its block stood in the reply; a test's
            // signature says it as `@content.N`. In the latest assistant message a block moved
            // is refused.
            let latest = msgs.iter().rposition(|m| m["role"] == "assistant") == Some(i);
            for (k, b) in blocks.iter().enumerate().filter(|_| latest) {
                let sealed = b["signature"].as_str().or(b["data"].as_str()).unwrap_or("");
                let stood = sealed.split("@content.").nth(1).and_then(|n| n.parse::<usize>().ok());
                if stood.is_some_and(|n| n != k) {
                    return Some(format!("messages.{i}.content.{k}: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response."));
                }
            }
            let next = msgs.get(i + 1).and_then(|n| n["content"].as_array().cloned()).unwrap_or_default();
            let results: Vec<&str> = next
                .iter()
                .take_while(|b| b["type"] == "tool_result")
                .filter_map(|b| b["tool_use_id"].as_str())
                .collect();
            if results != ids {
                return Some(format!("messages.{}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i + 1, ids.join(", ")));
            }
        }
        if m["role"] == "user" {
            let prev_ids: Vec<&str> = i
                .checked_sub(1)
                .and_then(|p| msgs[p]["content"].as_array())
                .map(|a| a.iter().filter(|b| b["type"] == "tool_use").filter_map(|b| b["id"].as_str()).collect())
                .unwrap_or_default();
            for b in blocks.iter().filter(|b| b["type"] == "tool_result") {
                if !prev_ids.contains(&b["tool_use_id"].as_str().unwrap_or("")) {
                    return Some(format!("messages.{i}: unexpected `tool_use_id` found in `tool_result` blocks: {}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", b["tool_use_id"]));
                }
            }
        }
    }
    None
}

fn chat_problem(msgs: &[Value]) -> Option<String> {
    for (i, m) in msgs.iter().enumerate() {
        let ids: Vec<&str> =
            m["tool_calls"].as_array().map(|a| a.iter().filter_map(|c| c["id"].as_str()).collect()).unwrap_or_default();
        if m["role"] == "assistant" && !ids.is_empty() {
            let answered: Vec<&str> = msgs[i + 1..]
                .iter()
                .take_while(|n| n["role"] == "tool")
                .filter_map(|n| n["tool_call_id"].as_str())
                .collect();
            if answered != ids {
                return Some(format!("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}", ids.join(", ")));
            }
        }
        if m["role"] == "tool" {
            let ok = msgs[..i].iter().rev().find(|p| p["role"] != "tool").is_some_and(|p| {
                p["tool_calls"].as_array().is_some_and(|a| a.iter().any(|c| c["id"] == m["tool_call_id"]))
            });
            // Ollama's tool messages carry no id.
            if !ok && m.get("tool_name").is_none() {
                return Some("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.".into());
            }
        }
    }
    None
}

/// DeepSeek's thinking mode (`deepseek-reasoner`, and the V4 models, where it is on by
/// default) and Moonshot's thinking Kimi models refuse an assistant message that made tool
/// calls without its `reasoning_content`, in every later request, each in its own words
/// (api-docs.deepseek.com, "Thinking Mode": tool calls; Moonshot's K2 thinking guide).
fn reasoning_back_problem(body: &Value, msgs: &[Value]) -> Option<String> {
    let model = body["model"].as_str().unwrap_or("");
    let deepseek = model == "deepseek-reasoner" || model.starts_with("deepseek-v4");
    let kimi = model.starts_with("kimi-k2.") || model.starts_with("kimi-k2-thinking");
    if !deepseek && !kimi {
        return None;
    }
    let i = msgs.iter().position(|m| {
        m["role"] == "assistant" && m.get("tool_calls").is_some() && !m["reasoning_content"].is_string()
    })?;
    Some(if deepseek {
        "The reasoning_content in the thinking mode must be passed back to the API.".to_string()
    } else {
        format!("thinking is enabled but reasoning_content is missing in assistant tool call message at index {i}")
    })
}

/// Gemini 3 refuses a conversation whose replies' first calls come back without the thought
/// signature it gave them, in Google's words: on its OpenAI-compatible endpoint the call's
/// `extra_content.google.thought_signature`, through OpenRouter an encrypted
/// `reasoning_details` object of the call's id (ai.google.dev, "Thought signatures"; the real
/// API checks the current turn's calls, this server every reply's).
fn gemini_problem(body: &Value, msgs: &[Value]) -> Option<String> {
    if !body["model"].as_str().unwrap_or("").contains("gemini-3") {
        return None;
    }
    for (i, m) in msgs.iter().enumerate() {
        let Some(first) = m["tool_calls"].as_array().and_then(|c| c.first()) else { continue };
        let want = thought_signature(first["id"].as_str().unwrap_or(""));
        let google = first.pointer("/extra_content/google/thought_signature").and_then(Value::as_str) == Some(&want);
        let openrouter = m["reasoning_details"].as_array().is_some_and(|d| {
            d.iter().any(|d| d["type"] == "reasoning.encrypted" && d["id"] == first["id"] && d["data"] == want.as_str())
        });
        if !google && !openrouter {
            return Some(format!("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:{}` , position {i}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", first["function"]["name"].as_str().unwrap_or("")));
        }
    }
    None
}

/// What the APIs refuse of an image, in their words: on Anthropic's an `image` block outside a
/// user message, a source that is not base64 of one of its four types, or bytes of another type
/// than the one stated; on Chat Completions an image part in any but a user message (a `tool`
/// message takes text only: openai-node's `ChatCompletionToolMessageParam`) or an `image_url`
/// that is not `{url}` with a data URL of those types; on the Responses API an `input_image`
/// outside a user message, without `detail`, or whose `image_url` is not such a string (an
/// object is refused); Ollama's `images` must be plain base64 (Go decodes them into bytes).
fn image_problem(path: &str, body: &Value) -> Option<String> {
    let items = body.get("messages").or(body.get("input")).and_then(Value::as_array)?;
    for (i, m) in items.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or("");
        if let Some(images) = m.get("images").and_then(Value::as_array) {
            for img in images {
                if decode_base64(img.as_str().unwrap_or("-")).is_none() {
                    return Some("illegal base64 data at input byte 4".into());
                }
            }
        }
        let Some(parts) = m["content"].as_array() else { continue };
        for (k, p) in parts.iter().enumerate() {
            let at = format!("{}[{i}].content[{k}]", if body.get("input").is_some() { "input" } else { "messages" });
            match p["type"].as_str().unwrap_or("") {
                "image" if path.ends_with("/v1/messages") => {
                    if role != "user" {
                        return Some(format!("{at}: image blocks are only allowed in user messages"));
                    }
                    let (ty, media, data) = (&p["source"]["type"], &p["source"]["media_type"], &p["source"]["data"]);
                    if ty != "base64" {
                        return Some(format!("{at}.source.type: Input should be 'base64'"));
                    }
                    let media = media.as_str().unwrap_or("");
                    if let Some(problem) = image_bytes_problem(media, data.as_str().unwrap_or("")) {
                        return Some(format!("{at}.source.base64: {problem}"));
                    }
                }
                "image_url" => {
                    if role != "user" {
                        return Some(format!("Invalid '{at}': Image URLs are only allowed for messages with role 'user', but this message with role '{role}' contains an image URL."));
                    }
                    let url = p["image_url"]["url"].as_str().unwrap_or("");
                    if let Some(problem) = data_url_problem(url) {
                        return Some(format!("Invalid '{at}.image_url.url': {problem}"));
                    }
                }
                "input_image" => {
                    if role != "user" {
                        return Some(format!("Invalid '{at}': input_image is only allowed in user messages."));
                    }
                    if !matches!(p["detail"].as_str(), Some("low" | "high" | "auto")) {
                        return Some(format!("Missing required parameter: '{at}.detail'."));
                    }
                    let Some(url) = p["image_url"].as_str() else {
                        return Some(format!(
                            "Invalid type for '{at}.image_url': expected a string, but got {} instead.",
                            p["image_url"]
                        ));
                    };
                    if let Some(problem) = data_url_problem(url) {
                        return Some(format!("Invalid '{at}.image_url': {problem}"));
                    }
                }
                _ => {}
            }
        }
    }
    None
}

fn data_url_problem(url: &str) -> Option<String> {
    let Some((media, data)) = url.strip_prefix("data:").and_then(|r| r.split_once(";base64,")) else {
        return Some(format!("Invalid image URL: {}…", url.chars().take(40).collect::<String>()));
    };
    image_bytes_problem(media, data)
}

/// Base64 of an image of the stated media type.
fn image_bytes_problem(media: &str, data: &str) -> Option<String> {
    if !["image/jpeg", "image/png", "image/gif", "image/webp"].contains(&media) {
        return Some(format!(
            "media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp' (got {media:?})"
        ));
    }
    let Some(bytes) = decode_base64(data) else { return Some("Invalid base64 data".into()) };
    let actual = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        "image/png"
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        "image/jpeg"
    } else if bytes.starts_with(b"GIF8") {
        "image/gif"
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        "image/webp"
    } else {
        return Some("Could not process image".into());
    };
    (actual != media).then(|| {
        format!("The image was specified using the {media} media type, but the image appears to be a {actual} image")
    })
}

/// Strict standard base64 (padding required), as the APIs decode it.
pub fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    if !s.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    for chunk in s.as_bytes().chunks(4) {
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 {
            return None;
        }
        let mut n = 0u32;
        for &c in &chunk[..4 - pad] {
            n = n << 6 | u32::from(val(c)?);
        }
        n <<= 6 * pad as u32;
        out.extend_from_slice(&n.to_be_bytes()[1..4 - pad]);
    }
    Some(out)
}
