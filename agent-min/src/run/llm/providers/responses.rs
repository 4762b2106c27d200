//! OpenAI's Responses API: `POST {base}/responses`, streamed — what Cline's `openai-native`
//! handler (`OpenAiNativeHandler.createResponseStream`, v4.0.10) sends for the models whose
//! `apiFormat` is `OPENAI_RESPONSES` or `OPENAI_RESPONSES_WEBSOCKET_MODE` (gpt-5.5, gpt-5.4 and
//! its mini and nano, the codex models), which the API refuses on `/chat/completions`.
//!
//! The request: `model`, the system prompt as `instructions`, the conversation as `input` items
//! (Cline's `convertToOpenAIResponsesInput`), `stream: true`, the tools flat
//! (`{type, name, description, parameters, strict}`, Cline's `mapResponseTools`), `store: true`
//! and `reasoning: {effort, summary: "auto"}` (effort `medium` unless `--reasoning-effort` says
//! otherwise — `high` for gpt-5-pro, which takes nothing else; `none` sends no `reasoning`). `max_output_tokens` only with `--max-tokens` (Cline
//! sends none). Every request carries the whole conversation: Cline chains with
//! `previous_response_id` only in its websocket mode (behind a feature flag), and a stateless
//! full request never loses data.
//!
//! Differences from Cline, each so the request is one the API accepts on every turn: the
//! previous replies' function calls go back with their `call_id` but without their item ids
//! (`fc_…`), and their reasoning items are not sent back (Cline sends a reasoning item by its
//! id when its summary is not empty, and drops it otherwise while still sending the call's
//! `fc_` id, which the API can refuse as "provided without its required reasoning item"; an
//! input `function_call`'s item id is optional). The summary is shown and saved as reasoning, as
//! on the Chat Completions wire.

use serde_json::Value;

use super::{history, obj, s, ApiConfig, HttpRequest};
use crate::run::llm::sse::SseEvent;
use crate::run::llm::tool_specs;
use crate::run::llm::types::{ApiError, BlockDelta, Delta, Message, Role, StopReason, Usage};

/// The least `max_output_tokens` the API takes (a smaller `--max-tokens` is sent as this).
const MIN_OUTPUT_TOKENS: u32 = 16;

/// Most function calls of one reply kept apart: events naming a call beyond them are left out
/// (no more than 64 calls of a reply are run; each event is matched to its call by a search).
const MAX_CALLS: usize = 256;

/// Whether an error refused the request's reasoning summary: OpenAI gives summaries only to
/// organisations it has verified ("Your organization must be verified to generate reasoning
/// summaries").
pub(crate) fn summary_refused(status: u16, message: &str) -> bool {
    status == 400 && message.contains("reasoning summaries")
}

/// The effort sent when `--reasoning-effort` says none: Cline's `medium`, but `high` for
/// gpt-5-pro, which "defaults to (and only supports) high reasoning effort" (OpenAI's API
/// reference) and refuses `medium` — Cline has no gpt-5-pro, so its default would be refused.
fn default_effort(model: &str) -> &'static str {
    match model.strip_prefix("gpt-5-pro") {
        Some(rest) if rest.is_empty() || rest.starts_with('-') => "high",
        _ => "medium",
    }
}

/// A `response` object asked for whole (`stream: false`) as the events its stream would have
/// sent, for [`Stream`] to read: each output item's text, refusal and reasoning summary as
/// deltas, each function call as its `done` item, then the response's last event, named by its
/// `status` (`completed`, `incomplete`, `failed`; an `error` object alone is an `error` event).
pub(crate) fn as_events(body: &str) -> Vec<SseEvent> {
    // (Built with `obj`, not `json!`: the providers are in the minimal agent, held to a size.)
    let ev = |kind: &str, mut fields: Vec<(&str, Value)>| {
        fields.insert(0, ("type", s(kind)));
        SseEvent { event: None, data: obj(fields).to_string() }
    };
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        let message = format!("the reply is not JSON: {}", body.chars().take(200).collect::<String>());
        let error = obj(vec![("error", obj(vec![("message", Value::String(message))]))]);
        return vec![ev("response.failed", vec![("response", error)])];
    };
    if v.get("output").is_none() && v.get("error").is_some_and(Value::is_object) {
        return vec![ev("error", vec![("error", v["error"].clone())])];
    }
    let mut events = Vec::new();
    for (i, item) in v["output"].as_array().into_iter().flatten().enumerate() {
        let at = || ("output_index", Value::from(i));
        let parts = |key: &str| item[key].as_array().cloned().unwrap_or_default();
        match item["type"].as_str() {
            Some("message") => {
                for part in parts("content") {
                    let (kind, key) = match part["type"].as_str() {
                        Some("output_text") => ("response.output_text.delta", "text"),
                        Some("refusal") => ("response.refusal.delta", "refusal"),
                        _ => continue,
                    };
                    events.push(ev(kind, vec![at(), ("delta", part[key].clone())]));
                }
            }
            Some("reasoning") => {
                for (k, part) in parts("summary").into_iter().enumerate() {
                    let kind = "response.reasoning_summary_part.added";
                    events.push(ev(kind, vec![at(), ("summary_index", Value::from(k)), ("part", part)]));
                }
            }
            Some("function_call") => events.push(ev("response.output_item.done", vec![at(), ("item", item.clone())])),
            _ => {}
        }
    }
    let last = match v["status"].as_str() {
        Some("incomplete") => "response.incomplete",
        Some("failed") => "response.failed",
        _ => "response.completed",
    };
    events.push(ev(last, vec![("response", v)]));
    events
}

/// Builds the request (see the module's documentation).
pub(crate) fn request(cfg: &ApiConfig, system: &str, messages: &[Message]) -> HttpRequest {
    let mut body = vec![
        ("model", s(&cfg.model)),
        ("instructions", s(system)),
        ("input", Value::Array(input(messages))),
        ("stream", Value::Bool(!cfg.no_stream)),
    ];
    // Cline refuses to ask without tools; the XML dialect's request simply has none.
    if let Some(tools) = &cfg.tools {
        body.push(("tools", tool_specs::responses(tools)));
    }
    body.push(("store", Value::Bool(true)));
    // Cline's `normalizeOpenaiReasoningEffort`: medium unless given; `none` sends none.
    let effort = cfg.reasoning_effort.as_deref().unwrap_or(default_effort(&cfg.model));
    if effort == "none" && crate::run::llm::models::takes_effort_none(&cfg.model) {
        body.push(("reasoning", obj(vec![("effort", s("none"))])));
    } else if effort != "none" {
        let mut reasoning = vec![("effort", s(effort))];
        if !cfg.no_reasoning_summary {
            reasoning.push(("summary", s("auto")));
        }
        body.push(("reasoning", obj(reasoning)));
    }
    // The API refuses a `max_output_tokens` below 16.
    if let Some(n) = cfg.max_tokens {
        body.push(("max_output_tokens", Value::from(n.max(MIN_OUTPUT_TOKENS))));
    }
    super::openai::streamed_post(cfg, "responses", &obj(body))
}

/// The conversation as Responses `input` items, as Cline's `convertToOpenAIResponsesInput`
/// makes them: a reply's text as an assistant `message` of `output_text`, then each of its
/// calls as a `function_call`; a user message's results as `function_call_output` items (each
/// call answered, in order: `history::answers`), then its images (`input_image`) and text
/// blocks (`input_text`) as one user message.
fn input(messages: &[Message]) -> Vec<Value> {
    let mut items = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        if m.role == Role::Assistant {
            if !m.content.is_empty() {
                let text = vec![obj(vec![("type", s("output_text")), ("text", s(&m.content))])];
                items.push(obj(vec![
                    ("type", s("message")),
                    ("role", s("assistant")),
                    ("content", Value::Array(text)),
                ]));
            }
            for t in m.tool_uses() {
                let (id, name, args) = (s(&t.id), s(&t.name), s(&t.input));
                items.push(obj(vec![
                    ("type", s("function_call")),
                    ("call_id", id),
                    ("name", name),
                    ("arguments", args),
                ]));
            }
            continue;
        }
        let (answers, rest) = history::answers(i.checked_sub(1).map(|p| &messages[p]), m);
        for a in &answers {
            items.push(obj(vec![
                ("type", s("function_call_output")),
                ("call_id", s(&a.call.id)),
                ("output", s(&a.content)),
            ]));
        }
        if answers.is_empty() || !rest.is_empty() || m.images().next().is_some() {
            let mut blocks = history::text_blocks(&rest);
            if blocks.is_empty() && m.images().next().is_none() {
                blocks.push(&rest);
            }
            // Cline's `input_image` (detail `auto`, a data URL) for each image, before the text.
            let images = m.images().map(|i| {
                obj(vec![("type", s("input_image")), ("detail", s("auto")), ("image_url", Value::String(i.data_url()))])
            });
            let texts = blocks.into_iter().map(|t| obj(vec![("type", s("input_text")), ("text", s(t))]));
            items.push(obj(vec![("role", s("user")), ("content", Value::Array(images.chain(texts).collect()))]));
        }
    }
    items
}

/// One `function_call` output item of the reply being read.
struct Call {
    /// Its item id (`fc_…`), which the argument deltas name.
    item: String,
    /// Its place in the reply's output, which the deltas name too (a proxy may leave out the
    /// item id, or the `output_item.added` event that carries it).
    output_index: Option<u64>,
    /// Whether any of its arguments' text was passed on (the rest of a call announced whole,
    /// at its `done`, is passed on only if not).
    sent: bool,
    /// Whether its arguments came whole, in an item (deltas after that would repeat them).
    whole: bool,
    /// Whether its `call_id` was passed on.
    named: bool,
}

/// Decoder state for one streamed response.
#[derive(Default)]
pub(crate) struct Stream {
    calls: Vec<Call>,
    done: bool,
    /// Whether a refusal's text began (it is marked once, at its start).
    refused: bool,
}

impl Stream {
    /// Handles one SSE event (its `data` holds the event object, `type` and all).
    pub(crate) fn event(&mut self, ev: &SseEvent) -> Vec<Delta> {
        let data = ev.data.trim();
        if self.done || data.is_empty() {
            return Vec::new();
        }
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            if ev.event.as_deref() == Some("error") {
                // The server's own words, not JSON: a failure of the stream, worth another try
                // (as on Chat Completions).
                self.done = true;
                let message = format!("the stream failed: {data}");
                return vec![Delta::Error(ApiError { status: None, message, retryable: true, retry_after: None })];
            }
            return Vec::new();
        };
        let kind = v.get("type").and_then(Value::as_str).or(ev.event.as_deref()).unwrap_or("");
        let text = |key: &str| v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
        let output_index = v.get("output_index").and_then(Value::as_u64);
        let mut out = Vec::new();
        match kind {
            "response.output_text.delta" => out.extend(text("delta").map(Delta::Text)),
            // A refusal is the reply's text, marked as Cline's Codex handler marks it (once
            // here, not before every delta); dropped, it left an empty reply.
            "response.refusal.delta" => {
                if let Some(delta) = text("delta") {
                    let mark = if std::mem::replace(&mut self.refused, true) { "" } else { "[Refusal] " };
                    out.push(Delta::Text(format!("{mark}{delta}")));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                out.extend(text("delta").map(Delta::Reasoning))
            }
            // Summary parts after the first are set apart, as paragraphs (shown only).
            "response.reasoning_summary_part.added" => {
                if v.get("summary_index").and_then(Value::as_u64).unwrap_or(0) > 0 {
                    out.push(Delta::Reasoning("\n\n".into()));
                }
                let part = v.pointer("/part/text").and_then(Value::as_str).unwrap_or("");
                if !part.is_empty() {
                    out.push(Delta::Reasoning(part.to_string()));
                }
            }
            "response.output_item.added" | "response.output_item.done" => {
                let item = &v["item"];
                if item["type"] == "function_call" {
                    out.extend(self.call_item(item, output_index));
                }
            }
            "response.function_call_arguments.delta" => {
                let item = v.get("item_id").and_then(Value::as_str).unwrap_or("");
                let delta = v.get("delta").and_then(Value::as_str).unwrap_or("");
                let index = self.index(item, output_index).filter(|i| !delta.is_empty() && !self.calls[*i].whole);
                if let Some(index) = index {
                    self.calls[index].sent = true;
                    out.push(tool_call(index, None, None, delta));
                }
            }
            "response.function_call_arguments.done" => {
                let item = v.get("item_id").and_then(Value::as_str).unwrap_or("");
                let index = self.index(item, output_index).filter(|i| !self.calls[*i].sent);
                if let (Some(index), Some(args)) = (index, text("arguments")) {
                    self.calls[index].sent = true;
                    out.push(tool_call(index, None, text("name"), &args));
                }
            }
            "response.completed" | "response.incomplete" => {
                self.done = true;
                let r = &v["response"];
                // The stop reason before the usage, as Anthropic's (`anthropic.rs`).
                out.push(Delta::Stop(if kind == "response.completed" {
                    StopReason::EndTurn
                } else {
                    match r.pointer("/incomplete_details/reason").and_then(Value::as_str) {
                        Some("max_output_tokens") => StopReason::MaxTokens,
                        Some(r @ "content_filter") => StopReason::Refused(r.to_string()),
                        Some(other) => StopReason::Other(other.to_string()),
                        None => StopReason::Other("incomplete".into()),
                    }
                }));
                if let Some(u) = r.get("usage").filter(|u| u.is_object()) {
                    let get = |p: &str| u.pointer(p).and_then(Value::as_u64).unwrap_or(0);
                    out.push(Delta::Usage(Usage {
                        input: get("/input_tokens"),
                        // Reasoning tokens are counted in output_tokens already.
                        output: get("/output_tokens"),
                        cache_read: get("/input_tokens_details/cached_tokens"),
                        cache_write: 0,
                        billed: None,
                    }));
                }
            }
            "response.failed" | "error" => {
                self.done = true;
                // `response.error` {code, message}; `{"type":"error","code":…,"message":…}`, or
                // its error nested.
                let nested = v.pointer("/response/error").filter(|e| e.is_object()).or(v.get("error"));
                let e = if kind == "error" { nested.unwrap_or(&v) } else { nested.unwrap_or(&Value::Null) };
                out.push(Delta::Error(if e.get("message").is_some() {
                    super::openai::stream_error(e)
                } else {
                    // A failure that says nothing more: the server's, worth another try.
                    ApiError {
                        status: None,
                        message: format!("the response failed ({kind})"),
                        retryable: true,
                        retry_after: None,
                    }
                }));
            }
            _ => {}
        }
        out
    }

    /// The body ended: without its last event (`response.completed`, `.incomplete`, `.failed`
    /// or `error`, one of which OpenAI always sends) the response was cut on the way — by a
    /// proxy, say — and what came is not the whole reply: asked again.
    pub(crate) fn finish(&mut self) -> Vec<Delta> {
        if self.done {
            return Vec::new();
        }
        self.done = true;
        let message = "the stream ended before the response did (no response.completed)".to_string();
        vec![Delta::Error(ApiError { status: None, message, retryable: true, retry_after: None })]
    }

    /// A `function_call` item, as added (`arguments` usually empty) or done (whole): its id,
    /// name and arguments — only what was not passed on yet.
    fn call_item(&mut self, item: &Value, output_index: Option<u64>) -> Option<Delta> {
        let s = |k: &str| item.get(k).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
        let index = self.index(&s("id").unwrap_or_default(), output_index)?;
        let call = &mut self.calls[index];
        let args = s("arguments").filter(|_| !call.sent).unwrap_or_default();
        if !args.is_empty() {
            call.sent = true;
            call.whole = true;
        }
        let (id, name) = (s("call_id"), s("name"));
        // Its call id and name, unless passed on already (its arguments may have come first,
        // from a server that sends no `output_item.added`).
        let naming = !call.named && (id.is_some() || name.is_some());
        call.named |= id.is_some();
        (naming || !args.is_empty()).then(|| tool_call(index, id, name, &args))
    }

    /// The call index of item `id` at `output_index` (a new call when neither was seen; `None`
    /// for a new one beyond [`MAX_CALLS`]).
    fn index(&mut self, id: &str, output_index: Option<u64>) -> Option<usize> {
        let same =
            |c: &Call| (!id.is_empty() && c.item == id) || (output_index.is_some() && c.output_index == output_index);
        if let Some(i) = self.calls.iter().position(same) {
            let c = &mut self.calls[i];
            if c.item.is_empty() {
                c.item = id.to_string();
            }
            c.output_index = c.output_index.or(output_index);
            return Some(i);
        }
        if self.calls.len() >= MAX_CALLS {
            return None;
        }
        self.calls.push(Call { item: id.to_string(), output_index, sent: false, whole: false, named: false });
        Some(self.calls.len() - 1)
    }
}

fn tool_call(index: usize, id: Option<String>, name: Option<String>, arguments: &str) -> Delta {
    Delta::Block(BlockDelta::ToolCall { index, id, name, arguments: arguments.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::llm::providers::{Decoder, Wire};
    use crate::run::llm::types::{Part, ToolUsePart};
    use serde_json::json;

    fn sse(data: Value) -> String {
        format!("event: {}\ndata: {data}\n\n", data["type"].as_str().unwrap())
    }

    /// A reply as OpenAI streams it: a reasoning summary in two parts, text, two function
    /// calls (the second's arguments only in its `done` events), usage.
    fn body() -> String {
        let events = [
            json!({"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","output":[]}}),
            json!({"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}),
            json!({"type":"response.reasoning_summary_part.added","sequence_number":2,"item_id":"rs_1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}),
            json!({"type":"response.reasoning_summary_text.delta","sequence_number":3,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"**Plan** read é"}),
            json!({"type":"response.reasoning_summary_part.added","sequence_number":4,"item_id":"rs_1","output_index":0,"summary_index":1,"part":{"type":"summary_text","text":""}}),
            json!({"type":"response.reasoning_summary_text.delta","sequence_number":5,"item_id":"rs_1","output_index":0,"summary_index":1,"delta":"then write"}),
            json!({"type":"response.output_item.done","sequence_number":6,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"**Plan** read é"}]}}),
            json!({"type":"response.output_item.added","sequence_number":7,"output_index":1,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}}),
            json!({"type":"response.output_text.delta","sequence_number":8,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"Two ✓ "}),
            json!({"type":"response.output_text.delta","sequence_number":9,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"calls."}),
            json!({"type":"response.output_item.added","sequence_number":10,"output_index":2,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_A","name":"read_file"}}),
            json!({"type":"response.function_call_arguments.delta","sequence_number":11,"item_id":"fc_1","output_index":2,"delta":"{\"path\":"}),
            json!({"type":"response.function_call_arguments.delta","sequence_number":12,"item_id":"fc_1","output_index":2,"delta":"\"a.txt\"}"}),
            json!({"type":"response.function_call_arguments.done","sequence_number":13,"item_id":"fc_1","output_index":2,"arguments":"{\"path\":\"a.txt\"}"}),
            json!({"type":"response.output_item.done","sequence_number":14,"output_index":2,"item":{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"path\":\"a.txt\"}","call_id":"call_A","name":"read_file"}}),
            json!({"type":"response.output_item.added","sequence_number":15,"output_index":3,"item":{"id":"fc_2","type":"function_call","status":"in_progress","arguments":"","call_id":"call_B","name":"list_files"}}),
            json!({"type":"response.function_call_arguments.done","sequence_number":16,"item_id":"fc_2","output_index":3,"arguments":"{\"path\":\".\"}"}),
            json!({"type":"response.output_item.done","sequence_number":17,"output_index":3,"item":{"id":"fc_2","type":"function_call","status":"completed","arguments":"{\"path\":\".\"}","call_id":"call_B","name":"list_files"}}),
            json!({"type":"response.completed","sequence_number":18,"response":{"id":"resp_1","status":"completed","usage":{"input_tokens":120,"input_tokens_details":{"cached_tokens":100},"output_tokens":40,"output_tokens_details":{"reasoning_tokens":25},"total_tokens":160}}}),
            // Nothing after the end counts.
            json!({"type":"response.output_text.delta","sequence_number":19,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"late"}),
        ];
        events.into_iter().map(sse).collect()
    }

    fn call(index: usize, id: Option<&str>, name: Option<&str>, arguments: &str) -> Delta {
        tool_call(index, id.map(str::to_string), name.map(str::to_string), arguments)
    }

    #[test]
    fn a_reply_decodes_to_text_reasoning_two_calls_and_usage() {
        let mut d = Decoder::of(Wire::Responses);
        let mut got = d.push(body().as_bytes());
        got.extend(d.finish());
        assert_eq!(
            got,
            vec![
                Delta::Reasoning("**Plan** read é".into()),
                Delta::Reasoning("\n\n".into()),
                Delta::Reasoning("then write".into()),
                Delta::Text("Two ✓ ".into()),
                Delta::Text("calls.".into()),
                call(0, Some("call_A"), Some("read_file"), ""),
                call(0, None, None, "{\"path\":"),
                call(0, None, None, "\"a.txt\"}"),
                call(1, Some("call_B"), Some("list_files"), ""),
                call(1, None, None, "{\"path\":\".\"}"),
                Delta::Stop(StopReason::EndTurn),
                Delta::Usage(Usage { input: 120, output: 40, cache_read: 100, cache_write: 0, billed: None }),
            ]
        );
    }

    #[test]
    fn split_at_every_byte_the_deltas_are_the_same() {
        let b = body();
        let whole = {
            let mut d = Decoder::of(Wire::Responses);
            let mut v = d.push(b.as_bytes());
            v.extend(d.finish());
            v
        };
        // Concatenated, the pieces of text are the same whatever the cut.
        let joined = |v: &[Delta]| format!("{v:?}");
        for cut in 0..=b.len() {
            let mut d = Decoder::of(Wire::Responses);
            let mut v = d.push(&b.as_bytes()[..cut]);
            v.extend(d.push(&b.as_bytes()[cut..]));
            v.extend(d.finish());
            assert_eq!(joined(&v), joined(&whole), "cut at byte {cut}");
        }
    }

    /// A call whose item already carries its arguments (a proxy's stream) is not doubled by
    /// deltas after it, and a call known only from its `done` item arrives whole.
    #[test]
    fn arguments_arrive_once() {
        let mut s = Stream::default();
        let ev = |v: Value| SseEvent { event: None, data: v.to_string() };
        let mut out = s.event(&ev(
            json!({"type":"response.output_item.added","item":{"id":"fc_1","type":"function_call","arguments":"{}","call_id":"c1","name":"list_files"}}),
        ));
        out.extend(
            s.event(&ev(json!({"type":"response.function_call_arguments.delta","item_id":"fc_1","delta":"{}"}))),
        );
        out.extend(s.event(&ev(
            json!({"type":"response.output_item.done","item":{"id":"fc_2","type":"function_call","arguments":"{\"a\":1}","call_id":"c2","name":"read_file"}}),
        )));
        assert_eq!(
            out,
            vec![call(0, Some("c1"), Some("list_files"), "{}"), call(1, Some("c2"), Some("read_file"), "{\"a\":1}")]
        );
    }

    /// A proxy that sends no `output_item.added`: the arguments come first, keyed by item id or
    /// only by output index, and the call's id and name come with its `done` item.
    #[test]
    fn a_call_named_only_at_its_done_item_keeps_its_id_and_name() {
        let mut s = Stream::default();
        let ev = |v: Value| SseEvent { event: None, data: v.to_string() };
        let mut out = Vec::new();
        for e in [
            json!({"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{\"path\":"}),
            json!({"type":"response.function_call_arguments.delta","output_index":0,"delta":"\"a\"}"}),
            json!({"type":"response.function_call_arguments.delta","output_index":1,"delta":"{}"}),
            json!({"type":"response.output_item.done","output_index":0,"item":{"id":"fc_1","type":"function_call","arguments":"{\"path\":\"a\"}","call_id":"c1","name":"read_file"}}),
            json!({"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","arguments":"{}","call_id":"c2","name":"list_files"}}),
        ] {
            out.extend(s.event(&ev(e)));
        }
        assert_eq!(
            out,
            vec![
                call(0, None, None, "{\"path\":"),
                call(0, None, None, "\"a\"}"),
                call(1, None, None, "{}"),
                call(0, Some("c1"), Some("read_file"), ""),
                call(1, Some("c2"), Some("list_files"), ""),
            ]
        );
    }

    /// A refusal is the reply's text, marked once (it was dropped: an empty reply).
    #[test]
    fn a_refusal_is_text_marked_once() {
        let mut s = Stream::default();
        let ev = |v: Value| SseEvent { event: None, data: v.to_string() };
        let mut out = Vec::new();
        for d in ["I can't ", "help with that."] {
            out.extend(s.event(&ev(
                json!({"type":"response.refusal.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":d}),
            )));
        }
        assert_eq!(out, vec![Delta::Text("[Refusal] I can't ".into()), Delta::Text("help with that.".into())]);
    }

    #[test]
    fn calls_named_by_ever_new_items_are_bounded() {
        // Each event naming an item not seen was a new call: kept and searched on every later
        // event (memory without bound, time quadratic in the events), though no more than 64
        // calls of a reply are ever run.
        let mut s = Stream::default();
        for i in 0..50_000 {
            let v = json!({"type":"response.function_call_arguments.delta","item_id":format!("fc_{i}"),"delta":""});
            assert!(s.event(&SseEvent { event: None, data: v.to_string() }).is_empty());
        }
        assert_eq!(s.calls.len(), MAX_CALLS);
        // Unbounded, these 5 MB of events took 3.9 s (optimized build); 50 MB, some 400 s.
        // A call beyond the bound is left out; the first ones are still read.
        let v = json!({"type":"response.output_item.added","output_index":99_999,"item":{"id":"fc_new","type":"function_call","arguments":"{}","call_id":"c","name":"n"}});
        assert!(s.event(&SseEvent { event: None, data: v.to_string() }).is_empty());
        let v = json!({"type":"response.function_call_arguments.delta","item_id":"fc_0","delta":"{}"});
        assert_eq!(s.event(&SseEvent { event: None, data: v.to_string() }), vec![call(0, None, None, "{}")]);
    }

    #[test]
    fn a_cut_reply_a_failure_and_an_error_event() {
        let mut s = Stream::default();
        let ev = |v: Value| SseEvent { event: None, data: v.to_string() };
        let out = s.event(&ev(
            json!({"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":5,"output_tokens":7}}}),
        ));
        assert_eq!(out[0], Delta::Stop(StopReason::MaxTokens));
        let mut s = Stream::default();
        let out = s.event(&ev(
            json!({"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"The server had an error"}}}),
        ));
        assert!(matches!(&out[..], [Delta::Error(e)] if e.retryable && e.message.contains("The server had an error")));
        let mut s = Stream::default();
        let out = s.event(&ev(
            json!({"type":"error","code":"invalid_prompt","message":"Invalid prompt","param":null,"sequence_number":1}),
        ));
        assert!(matches!(&out[..], [Delta::Error(e)] if !e.retryable && e.message.contains("Invalid prompt")));
        // The server's words, not JSON: tried again.
        let mut s = Stream::default();
        let out = s.event(&SseEvent { event: Some("error".into()), data: "upstream exploded".into() });
        assert!(matches!(&out[..], [Delta::Error(e)] if e.retryable && e.message.contains("upstream exploded")));
        assert_eq!(s.finish(), vec![], "ended by its error");
    }

    /// A `response` asked for whole reads as its stream would: a cut one is a cut reply, an
    /// error object an error, a body that is not JSON a failure worth another try.
    #[test]
    fn a_whole_response_reads_as_its_stream() {
        let read = |body: Value| {
            let mut d = super::super::Decoder::whole(Wire::Responses);
            let text = body.to_string();
            let (a, b) = text.split_at(text.len() / 2);
            assert_eq!((d.push(a.as_bytes()), d.push(b.as_bytes())), (vec![], vec![]), "nothing before the end");
            d.finish()
        };
        let cut = read(json!({"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
            "output": [{"type": "message", "content": [{"type": "output_text", "text": "Half"}]}]}));
        assert_eq!(cut[..2], [Delta::Text("Half".into()), Delta::Stop(StopReason::MaxTokens)]);
        let failed = read(json!({"error": {"message": "The server had an error", "code": "server_error"}}));
        assert!(
            matches!(&failed[..], [Delta::Error(e)] if e.retryable && e.message.contains("The server had an error")),
            "{failed:?}"
        );
        for wire in [Wire::Responses, Wire::ChatCompletions] {
            let mut d = super::super::Decoder::whole(wire);
            d.push(b"<html>Bad gateway</html>");
            assert!(matches!(&d.finish()[..], [Delta::Error(e)] if e.retryable && e.message.contains("Bad gateway")));
        }
    }

    /// A body that ends without the response's last event was cut on the way: what came is not
    /// the whole reply, and it is asked again rather than taken as one.
    #[test]
    fn a_stream_cut_before_its_last_event_is_asked_again() {
        let ev = |v: Value| SseEvent { event: None, data: v.to_string() };
        let text = json!({"type":"response.output_text.delta","output_index":0,"delta":"Half a thou"});
        let mut s = Stream::default();
        assert_eq!(s.event(&ev(text.clone())), vec![Delta::Text("Half a thou".into())]);
        assert!(
            matches!(&s.finish()[..], [Delta::Error(e)] if e.retryable && e.message.contains("response.completed"))
        );
        let mut s = Stream::default();
        s.event(&ev(text));
        s.event(&ev(json!({"type":"response.completed","response":{"status":"completed"}})));
        assert_eq!(s.finish(), vec![]);
    }

    fn cfg(model: &str) -> ApiConfig {
        ApiConfig {
            base_url: "https://api.openai.com/v1/".into(),
            api_key: Some("k".into()),
            facts: crate::run::llm::models::lookup(super::super::Provider::OpenAi, model).facts,
            openai_native: true,
            tools: Some(crate::run::llm::tool_specs::Tools {
                parallel: true,
                builtin: crate::run::dialect::native::definitions(
                    crate::run::prompt::system::Family::NativeGpt51,
                    "/w",
                ),
                extra: Vec::new(),
            }),
            ..ApiConfig::test(super::super::Provider::OpenAi, model)
        }
    }

    #[test]
    fn the_request_is_clines_with_the_whole_conversation_as_input_items() {
        let c = cfg("gpt-5.5");
        assert_eq!(Wire::of(&c), Wire::Responses);
        let mut a = Message::assistant("Reading both.");
        a.parts = vec![
            Part::Thinking { text: "plan".into(), signature: None },
            Part::ToolUse(ToolUsePart {
                id: "call_A".into(),
                name: "read_file".into(),
                input: r#"{"path":"a"}"#.into(),
                answer: None,
                extra: None,
            }),
            Part::ToolUse(ToolUsePart {
                id: "call_B".into(),
                name: "read_file".into(),
                input: r#"{"path":"b"}"#.into(),
                answer: Some("[read_file for 'b'] Result:\nB".into()),
                extra: None,
            }),
        ];
        let env = "<environment_details>\nE\n</environment_details>";
        let msgs = [
            Message::user(format!("<task>\nt\n</task>\n\n{env}")),
            a,
            Message::user(format!("[read_file for 'a'] Result:\nA\n\n{env}")),
        ];
        let req = request(&c, "SYS", &msgs);
        assert_eq!(req.url, "https://api.openai.com/v1/responses");
        assert!(req.headers.contains(&("authorization".into(), "Bearer k".into())));
        let b: Value = serde_json::from_slice(&req.body).unwrap();
        assert_eq!(
            b["input"],
            json!([
                {"role": "user", "content": [{"type": "input_text", "text": "<task>\nt\n</task>"}, {"type": "input_text", "text": env}]},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Reading both."}]},
                {"type": "function_call", "call_id": "call_A", "name": "read_file", "arguments": "{\"path\":\"a\"}"},
                {"type": "function_call", "call_id": "call_B", "name": "read_file", "arguments": "{\"path\":\"b\"}"},
                {"type": "function_call_output", "call_id": "call_A", "output": "[read_file for 'a'] Result:\nA"},
                {"type": "function_call_output", "call_id": "call_B", "output": "[read_file for 'b'] Result:\nB"},
                {"role": "user", "content": [{"type": "input_text", "text": env}]},
            ])
        );
        let tools = b["tools"].as_array().unwrap();
        let keys: Vec<&String> = tools[0].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["type", "name", "description", "parameters", "strict"]);
        assert!(tools.iter().all(|t| t["type"] == "function" && t["strict"] == false && t.get("function").is_none()));
        let order: Vec<&String> = b.as_object().unwrap().keys().collect();
        assert_eq!(order, ["model", "instructions", "input", "stream", "tools", "store", "reasoning"], "Cline's order");
        let mut settings = b.clone();
        for k in ["input", "tools", "instructions"] {
            settings.as_object_mut().unwrap().remove(k);
        }
        assert_eq!(b["instructions"], "SYS");
        assert_eq!(
            settings,
            json!({"model": "gpt-5.5", "stream": true, "store": true, "reasoning": {"effort": "medium", "summary": "auto"}})
        );
        // `none` is sent as `none` to a model that takes it (Cline sends no reasoning, which
        // leaves the model's default), else as no reasoning; --max-tokens goes as
        // max_output_tokens.
        let c2 = ApiConfig { reasoning_effort: Some("none".into()), max_tokens: Some(500), ..c.clone() };
        let b2: Value = serde_json::from_slice(&request(&c2, "SYS", &msgs).body).unwrap();
        assert_eq!((&b2["reasoning"], &b2["max_output_tokens"]), (&json!({"effort": "none"}), &json!(500)));
        let c2 = ApiConfig { model: "gpt-5.1-codex".into(), reasoning_effort: Some("none".into()), ..c.clone() };
        let b2: Value = serde_json::from_slice(&request(&c2, "SYS", &msgs).body).unwrap();
        assert_eq!(b2.get("reasoning"), None);
        let c3 = ApiConfig { reasoning_effort: Some("xhigh".into()), ..c };
        let b3: Value = serde_json::from_slice(&request(&c3, "SYS", &msgs).body).unwrap();
        assert_eq!(b3["reasoning"], json!({"effort": "xhigh", "summary": "auto"}));
    }

    /// gpt-5-pro takes `high` only (the API refuses `medium`, the others' default).
    #[test]
    fn gpt_5_pro_thinks_hard_unless_told() {
        let effort = |model: &str, given: Option<&str>| {
            let c = ApiConfig { reasoning_effort: given.map(String::from), ..cfg(model) };
            let b: Value = serde_json::from_slice(&request(&c, "SYS", &[Message::user("t")]).body).unwrap();
            b["reasoning"]["effort"].clone()
        };
        assert_eq!(effort("gpt-5-pro", None), "high");
        assert_eq!(effort("gpt-5-pro-2025-10-06", None), "high");
        assert_eq!(effort("gpt-5-pro", Some("low")), "low", "what the person says goes, for the API to judge");
        assert_eq!(effort("gpt-5-professional", None), "medium");
        assert_eq!(effort("gpt-5.5", None), "medium");
    }

    #[test]
    fn only_clines_responses_models_on_openais_own_api_use_it() {
        assert_eq!(Wire::of(&cfg("gpt-5-codex")), Wire::Responses);
        assert_eq!(Wire::of(&cfg("gpt-5.4-mini")), Wire::Responses);
        assert_eq!(Wire::of(&cfg("gpt-5")), Wire::ChatCompletions);
        assert_eq!(Wire::of(&cfg("gpt-4.1")), Wire::ChatCompletions);
        // Newer than Cline's table: /chat/completions refuses their tools with reasoning.
        for newer in ["gpt-5.6-terra", "gpt-5.6-luna-2026-09-01", "gpt-6-astra", "gpt-5.10"] {
            assert_eq!(Wire::of(&cfg(newer)), Wire::Responses, "{newer}");
        }
        for older in ["gpt-5.6-chat-latest", "gpt-5.2", "gpt-5.3-chat-latest", "gpt-4o-mini", "gpt-oss-120b"] {
            assert_eq!(Wire::of(&cfg(older)), Wire::ChatCompletions, "{older}");
        }
        let elsewhere = ApiConfig { openai_native: false, ..cfg("gpt-5.5") };
        assert_eq!(Wire::of(&elsewhere), Wire::ChatCompletions);
        assert!(super::super::is_openai_api("https://api.openai.com/v1"));
        assert!(super::super::is_openai_api("https://API.openai.com:443"));
        assert!(!super::super::is_openai_api("https://openrouter.ai/api/v1"));
        assert!(!super::super::is_openai_api("https://api.openai.com.evil.example/v1"));
        assert!(!super::super::is_openai_api("http://127.0.0.1:8080/v1?api.openai.com"));
        // OpenAI's data-residency hosts; not a look-alike.
        assert!(super::super::is_openai_api("https://eu.api.openai.com/v1"));
        assert!(!super::super::is_openai_api("https://evilapi.openai.com/v1"));
        assert!(!super::super::is_openai_api("https://eu.api.openai.com.evil.example/v1"));
    }
}
