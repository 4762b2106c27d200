//! Anthropic Messages API: `POST {base}/v1/messages` with `stream: true`.

use serde_json::{json, Value};

use super::{history, json_error_message, obj, s, ApiConfig, HttpRequest};
use crate::run::llm::sse::SseEvent;
use crate::run::llm::tool_specs;
use crate::run::llm::types::{ApiError, BlockDelta, Delta, Message, Part, Role, StopReason, Usage};

/// Builds the request as Cline's `AnthropicHandler.createMessage` does: `max_tokens` the
/// model's `maxTokens` (or `--max-tokens`), `temperature: 0` unless thinking, and for a model
/// that supports prompt caching the system prompt as a block marked `cache_control: ephemeral`,
/// the last two user messages marked the same way (`sanitizeAnthropicMessages`) and
/// `tool_choice: {"type": "any"}` when tools go out and thinking is off; for a model without it,
/// `tool_choice: {"type": "auto"}` (sent only with tools: the API refuses it without).
///
/// The models that think adaptively (Opus 4.6+, Sonnet 5: [`is_adaptive_thinking_model`]) get
/// no temperature (the API refuses it) and, when thinking is asked for, `thinking: {"type":
/// "adaptive"}` with `output_config.effort` (`--reasoning-effort`, else `high` for a
/// `--thinking-budget`) instead of a budget. A budget goes to no model that Cline's table says
/// cannot think. Cline's id suffixes `:fast` and `:1m` come off the id and become their betas.
pub(crate) fn request(cfg: &ApiConfig, system: &str, messages: &[Message]) -> HttpRequest {
    let cache = cfg.facts.supports_prompt_cache;
    let users: Vec<usize> = messages.iter().enumerate().filter(|(_, m)| m.role == Role::User).map(|(i, _)| i).collect();
    let marked = &users[users.len().saturating_sub(2)..];
    let msgs: Vec<Value> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let prev = i.checked_sub(1).map(|p| &messages[p]);
            let mut content = content(prev, m);
            if cache && marked.contains(&i) {
                mark_last_block(&mut content);
            }
            json!({
                "role": if m.role == Role::User { "user" } else { "assistant" },
                "content": content,
            })
        })
        .collect();
    let (model, fast, long) = split_suffixes(&cfg.model);
    let thinking = Thinking::of(cfg, model);
    let mut max_tokens = cfg.max_tokens.or(cfg.facts.max_output()).unwrap_or(8192);
    let mut body = json!({"model": model});
    match thinking {
        Thinking::Budget(mut budget) => {
            // The thinking budget counts towards max_tokens, which must exceed it: raised to
            // make room, but never past the maximum Cline's table gives the model (the API
            // refuses more), where the budget gives way instead.
            if budget >= max_tokens {
                max_tokens = budget.saturating_add(max_tokens);
                if let Some(cap) = cfg.facts.max_output().filter(|_| cfg.facts.known) {
                    max_tokens = max_tokens.min(cap);
                }
                budget = budget.min(max_tokens.saturating_sub(1));
            }
            body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
        }
        Thinking::Adaptive(_) => body["thinking"] = json!({"type": "adaptive"}),
        Thinking::Off | Thinking::OffAdaptive => {}
    }
    body["max_tokens"] = json!(max_tokens);
    if thinking == Thinking::Off {
        // MiniMax's Anthropic-format API takes (0, 1]: Cline's minimax.ts sends 1.
        let minimax = cfg.model.to_ascii_lowercase().starts_with("minimax-");
        body["temperature"] = json!(if minimax { 1 } else { 0 });
    }
    body["system"] = if cache {
        json!([{"text": system, "type": "text", "cache_control": {"type": "ephemeral"}}])
    } else {
        json!([{"text": system, "type": "text"}])
    };
    body["messages"] = Value::Array(msgs);
    body["stream"] = json!(true);
    let thinks = matches!(thinking, Thinking::Budget(_) | Thinking::Adaptive(_));
    if let Some(tools) = &cfg.tools {
        body["tools"] = tool_specs::anthropic(tools);
        if !thinks {
            // Cline forces a tool on a caching model. A model its table lacks may refuse that
            // (Claude Sonnet 5.5: "Forced tool use returns an error"): it gets `auto`.
            let forced = cache && cfg.facts.known;
            body["tool_choice"] = if forced { json!({"type": "any"}) } else { json!({"type": "auto"}) };
        }
    }
    if let Thinking::Adaptive(effort) = thinking {
        body["output_config"] = json!({"effort": effort});
    }
    let betas: Vec<&str> = [(fast, FAST_MODE_BETA), (long, CONTEXT_1M_BETA)]
        .into_iter()
        .filter_map(|(on, beta)| on.then_some(beta))
        .collect();
    if fast {
        body["speed"] = json!("fast");
    }
    let mut headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("anthropic-version".to_string(), "2023-06-01".to_string()),
        ("accept".to_string(), "text/event-stream".to_string()),
    ];
    if !betas.is_empty() {
        headers.push(("anthropic-beta".to_string(), betas.join(",")));
    }
    if let Some(k) = &cfg.api_key {
        headers.push(("x-api-key".to_string(), k.clone()));
    }
    HttpRequest {
        url: format!("{}/v1/messages", cfg.base_url.trim_end_matches('/')),
        headers,
        body: body.to_string().into_bytes(),
    }
}

/// Cline's betas for its model-id suffixes (`providers/anthropic.ts`).
const FAST_MODE_BETA: &str = "fast-mode-2026-02-01";
const CONTEXT_1M_BETA: &str = "context-1m-2025-08-07";

/// Most `tool_use` blocks of one reply kept apart: later ones are left out (no more than 64
/// calls of a reply are run; each argument delta is matched to its block by a search).
const MAX_TOOL_BLOCKS: usize = 256;

/// The id the API gets and whether Cline's `:fast` and `:1m` suffixes were on it
/// (`claude-opus-4-6:1m:fast` is both).
fn split_suffixes(model: &str) -> (&str, bool, bool) {
    let (base, fast) = model.strip_suffix(":fast").map_or((model, false), |b| (b, true));
    let (id, long) = base.strip_suffix(":1m").map_or((base, false), |b| (b, true));
    (id, fast, long)
}

/// Cline's `isClaudeAdaptiveThinkingModel` (`shared/utils/reasoning-support.ts`): the models
/// that decide how long to think (an effort, not a budget) and refuse a temperature.
pub(crate) fn is_adaptive_thinking_model(model: &str) -> bool {
    let id = model.to_lowercase();
    const VERSIONS: [&str; 6] = ["4-6", "4.6", "4-7", "4.7", "4-8", "4.8"];
    id.contains("claude-fable-5")
        || id.contains("claude-sonnet-5")
        || id.contains("claude-5-sonnet")
        || VERSIONS.iter().any(|v| id.contains(&format!("claude-opus-{v}")) || id.contains(&format!("claude-{v}-opus")))
}

/// Whether `model` thinks adaptively and refuses a temperature: Cline's
/// [`is_adaptive_thinking_model`], or a Claude model of generation 5 or later that Cline's
/// table does not hold (`claude-opus-5`, `claude-sonnet-5-5`, `anthropic/claude-opus-5.5`):
/// Anthropic refuses a sampling parameter from those (Cline would ask its default model
/// instead, so it has no rule for them).
pub(crate) fn thinks_adaptively(model: &str) -> bool {
    is_adaptive_thinking_model(model) || claude_generation(model).is_some_and(|g| g >= 5)
}

/// The generation of a Claude model id: the first number after `claude-`, in either naming
/// (`claude-opus-5-5` and `claude-3-5-sonnet` are 5 and 3).
fn claude_generation(model: &str) -> Option<u32> {
    let id = model.to_ascii_lowercase();
    let rest = &id[id.find("claude-")? + "claude-".len()..];
    // A generation is a small number (`claude-20250101-proxy` names a date, not one).
    rest.split(['-', '.', ':', '@']).find_map(|part| part.parse().ok()).filter(|&g| g < 100)
}

/// How the request thinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Thinking {
    /// Not at all: `temperature: 0`.
    Off,
    /// Not at all, on an adaptive model: no temperature either.
    OffAdaptive,
    /// Extended thinking with this budget.
    Budget(u32),
    /// Adaptive thinking at this effort.
    Adaptive(&'static str),
}

impl Thinking {
    /// As Cline decides it: an adaptive model thinks at `--reasoning-effort` (`none`: not at
    /// all), else at `high` when a budget is given; another model thinks with the budget when
    /// it can (Cline's `supportsReasoning`; a model not in its table is taken at its word).
    fn of(cfg: &ApiConfig, model: &str) -> Thinking {
        let budget = cfg.thinking_budget.filter(|&b| b > 0);
        if thinks_adaptively(model) {
            return adaptive_effort(cfg).map_or(Thinking::OffAdaptive, Thinking::Adaptive);
        }
        // The run's own facts decide (a second lookup, of the id without its `:1m`, could
        // find a model the facts are not of).
        match budget {
            Some(b) if cfg.facts.supports_reasoning || !cfg.facts.known => Thinking::Budget(b),
            _ => Thinking::Off,
        }
    }
}

/// The effort a model that thinks adaptively thinks at, as Cline's
/// `resolveClaudeAdaptiveThinking` decides it: `--reasoning-effort` (`none`: not at all), else
/// `high` when a budget is given; `None` when it does not think.
pub(crate) fn adaptive_effort(cfg: &ApiConfig) -> Option<&'static str> {
    let effort = match cfg.reasoning_effort.as_deref() {
        Some(e) => super::REASONING_EFFORTS.iter().find(|&&k| k == e).copied(),
        None => cfg.thinking_budget.filter(|&b| b > 0).map(|_| "high"),
    };
    effort.filter(|&e| e != "none")
}

/// Cline's `addCacheControl`: `cache_control: ephemeral` on the last block of a message (a
/// string becomes one text block), unless that block is thinking.
fn mark_last_block(content: &mut Value) {
    if let Value::String(text) = content {
        *content = json!([{"type": "text", "text": text}]);
    }
    if let Some(last) = content.as_array_mut().and_then(|blocks| blocks.last_mut()) {
        let ty = last.get("type").and_then(Value::as_str).unwrap_or("");
        if ty != "thinking" && ty != "redacted_thinking" {
            last["cache_control"] = json!({"type": "ephemeral"});
        }
    }
}

/// A message's content. A user message is Cline's blocks: every answered call's `tool_result`
/// first, then its images (`read_file`'s, as Cline's `ensureToolResultsFollowToolUse` orders
/// them: after the results), then its text as Cline's separate text blocks (task, hook
/// contexts, environment details). An assistant message is a plain string, or blocks when it
/// carries thinking or calls — thinking first (unchanged, signatures included), then text,
/// then `tool_use`; a reply whose blocks came interleaved goes back block for block, as it
/// came (its text cut at its [`Part::TextEnd`] marks).
fn content(prev: Option<&Message>, m: &Message) -> Value {
    if m.role == Role::User {
        let (answers, rest) = history::answers(prev, m);
        let mut blocks: Vec<Value> = answers
            .iter()
            .map(|a| json!({"type": "tool_result", "tool_use_id": a.call.id, "content": a.content}))
            .collect();
        blocks.extend(m.images().map(|i| {
            let source = obj(vec![("type", s("base64")), ("media_type", s(&i.media_type)), ("data", s(&i.data))]);
            obj(vec![("type", s("image")), ("source", source)])
        }));
        if answers.is_empty() || !rest.trim().is_empty() {
            blocks.extend(history::text_blocks(&rest).into_iter().map(|t| json!({"type": "text", "text": t})));
        }
        if blocks.is_empty() {
            return json!(m.content);
        }
        return Value::Array(blocks);
    }
    if m.parts.is_empty() {
        return json!(m.content);
    }
    // The text goes where its marks put it (an interleaved reply, block for block), else
    // before the first call; marks that no longer fit the text put it there too.
    let marked = text_marks_fit(m);
    let mut blocks = Vec::new();
    let mut sent = if marked { 0 } else { usize::MAX }; // text bytes sent so far (MAX: none yet)
    let text = |blocks: &mut Vec<Value>, t: &str| {
        // The API refuses an empty or blank text block.
        if !t.trim().is_empty() {
            blocks.push(json!({"type": "text", "text": t}));
        }
    };
    for p in &m.parts {
        match p {
            // Only Anthropic's own thinking (signed) can go back; other providers' reasoning stays local.
            Part::Thinking { text, signature: Some(sig) } => {
                blocks.push(json!({"type": "thinking", "thinking": text, "signature": sig}))
            }
            Part::RedactedThinking { data } => blocks.push(json!({"type": "redacted_thinking", "data": data})),
            Part::TextEnd(end) if marked => {
                text(&mut blocks, &m.content[sent..*end]);
                sent = *end;
            }
            Part::ToolUse(t) => {
                if sent == usize::MAX {
                    text(&mut blocks, &m.content);
                    sent = m.content.len();
                }
                let input: Value = serde_json::from_str(&t.input).unwrap_or_else(|_| json!({}));
                blocks.push(json!({"type": "tool_use", "id": t.id, "name": t.name, "input": input}));
            }
            _ => {}
        }
    }
    match sent {
        usize::MAX => text(&mut blocks, &m.content),
        n => text(&mut blocks, &m.content[n..]),
    }
    if blocks.is_empty() {
        return json!(m.content);
    }
    Value::Array(blocks)
}

/// Whether `m` has text marks and they cut its text as it is: rising, on character boundaries,
/// the last at its end, as the reply left them (a text changed since — a reply that said
/// nothing is kept as Cline's "Failure: I did not provide a response." — is sent whole before
/// the calls instead).
fn text_marks_fit(m: &Message) -> bool {
    let mut last = None;
    for p in &m.parts {
        if let Part::TextEnd(end) = p {
            if last.is_some_and(|l| *end < l) || !m.content.is_char_boundary(*end) {
                return false;
            }
            last = Some(*end);
        }
    }
    last == Some(m.content.len())
}

/// Decoder state for one streamed message.
#[derive(Default)]
pub(crate) struct Stream {
    usage: Usage,
    /// Content block index → tool call number, for the `tool_use` blocks seen so far.
    tool_blocks: Vec<(u64, usize)>,
    /// `message_start` came.
    started: bool,
    /// The message's end came: its stop reason, `message_stop` or an `error`.
    ended: bool,
}

impl Stream {
    /// The body ended: a message begun and never ended (no stop reason, no `message_stop`,
    /// which Anthropic always sends) was cut on the way — by a proxy, say — and what came is
    /// not the whole reply: asked again, rather than taken for one without a tool.
    pub(crate) fn finish(&mut self) -> Vec<Delta> {
        if !self.started || std::mem::replace(&mut self.ended, true) {
            return Vec::new();
        }
        let message = "the stream ended before the message did (no message_stop)".to_string();
        vec![Delta::Error(ApiError { status: None, message, retryable: true, retry_after: None })]
    }

    /// Handles one SSE event.
    pub(crate) fn event(&mut self, ev: &SseEvent) -> Vec<Delta> {
        let Ok(v) = serde_json::from_str::<Value>(&ev.data) else {
            return Vec::new();
        };
        let ty = v.get("type").and_then(Value::as_str).or(ev.event.as_deref()).unwrap_or("");
        match ty {
            "message_start" => {
                self.started = true;
                if let Some(u) = v.pointer("/message/usage") {
                    self.read_usage(u);
                }
                vec![Delta::Usage(self.usage)]
            }
            "content_block_start" => match v.pointer("/content_block/type").and_then(Value::as_str) {
                Some("text") => {
                    // As Cline's anthropic.ts: a line break before a text block that is not the
                    // reply's first block (several text blocks would otherwise run together).
                    let later = v.get("index").and_then(Value::as_u64).is_some_and(|i| i > 0);
                    let mut out = if later { vec![Delta::Text("\n".into())] } else { Vec::new() };
                    out.extend(text_of(&v, "/content_block/text", Delta::Text));
                    out
                }
                Some("thinking") => {
                    let mut out = vec![Delta::Block(BlockDelta::ThinkingStart)];
                    out.extend(text_of(&v, "/content_block/thinking", Delta::Reasoning));
                    out.extend(text_of(&v, "/content_block/signature", |s| Delta::Block(BlockDelta::Signature(s))));
                    out
                }
                Some("redacted_thinking") => {
                    text_of(&v, "/content_block/data", |s| Delta::Block(BlockDelta::RedactedThinking(s)))
                }
                Some("tool_use") => self.tool_use_start(&v).into_iter().collect(),
                _ => Vec::new(),
            },
            "content_block_delta" => match v.pointer("/delta/type").and_then(Value::as_str) {
                Some("text_delta") => text_of(&v, "/delta/text", Delta::Text),
                Some("thinking_delta") => text_of(&v, "/delta/thinking", Delta::Reasoning),
                Some("signature_delta") => text_of(&v, "/delta/signature", |s| Delta::Block(BlockDelta::Signature(s))),
                Some("input_json_delta") => {
                    let block = v.get("index").and_then(Value::as_u64).unwrap_or(0);
                    let Some(&(_, index)) = self.tool_blocks.iter().find(|(b, _)| *b == block) else {
                        return Vec::new();
                    };
                    let arguments = v.pointer("/delta/partial_json").and_then(Value::as_str).unwrap_or("");
                    vec![Delta::Block(BlockDelta::ToolCall {
                        index,
                        id: None,
                        name: None,
                        arguments: arguments.into(),
                    })]
                }
                _ => Vec::new(),
            },
            "message_delta" => {
                // The stop reason before the usage: a reply drained after its first tool call
                // (`stream.rs`) stops reading at the usage, and must not miss a refusal.
                let mut out = Vec::new();
                if let Some(r) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.ended = true;
                    out.push(Delta::Stop(match r {
                        // Cut at the context window rather than the output limit (Sonnet 4.5
                        // and later stop there rather than refuse the request): cut all the
                        // same, so a call it cut is never run, and the next request, too long,
                        // is cut to fit.
                        "max_tokens" | "model_context_window_exceeded" => StopReason::MaxTokens,
                        "end_turn" | "stop_sequence" | "tool_use" => StopReason::EndTurn,
                        "refusal" => StopReason::Refused(r.to_string()),
                        other => StopReason::Other(other.to_string()),
                    }));
                }
                if let Some(u) = v.get("usage") {
                    self.read_usage(u);
                    out.push(Delta::Usage(self.usage));
                }
                out
            }
            "message_stop" => {
                self.ended = true;
                Vec::new()
            }
            "error" => {
                self.ended = true;
                vec![Delta::Error(stream_error(&v))]
            }
            _ => Vec::new(),
        }
    }

    /// `content_block_start` of a `tool_use` block: its id and name. Its `input` is `{}` when the
    /// arguments follow as `input_json_delta`s; a proxy that sends them whole puts them here.
    /// `None` past [`MAX_TOOL_BLOCKS`].
    fn tool_use_start(&mut self, v: &Value) -> Option<Delta> {
        let block = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        let index = self.tool_blocks.len();
        if index >= MAX_TOOL_BLOCKS {
            return None;
        }
        self.tool_blocks.push((block, index));
        let text = |p: &str| v.pointer(p).and_then(Value::as_str).map(str::to_string);
        let arguments = match v.pointer("/content_block/input") {
            Some(Value::Object(o)) if !o.is_empty() => Value::Object(o.clone()).to_string(),
            _ => String::new(),
        };
        Some(Delta::Block(BlockDelta::ToolCall {
            index,
            id: text("/content_block/id"),
            name: text("/content_block/name"),
            arguments,
        }))
    }

    /// The usage of `message_start` or `message_delta`. The counts are cumulative, so each is
    /// the largest seen: a server that writes `"input_tokens": 0` in its `message_delta`
    /// (sglang's `/v1/messages`, some gateways) no longer erases the prompt's count, which the
    /// context window and `--max-cost` go by (Cline takes the input counts from
    /// `message_start` alone).
    fn read_usage(&mut self, u: &Value) {
        let get = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
        let usage = &mut self.usage;
        usage.input = usage.input.max(get("input_tokens"));
        usage.output = usage.output.max(get("output_tokens"));
        usage.cache_read = usage.cache_read.max(get("cache_read_input_tokens"));
        usage.cache_write = usage.cache_write.max(get("cache_creation_input_tokens"));
    }
}

fn text_of(v: &Value, ptr: &str, f: impl Fn(String) -> Delta) -> Vec<Delta> {
    match v.pointer(ptr).and_then(Value::as_str) {
        Some(s) if !s.is_empty() => vec![f(s.to_string())],
        _ => Vec::new(),
    }
}

/// `event: error` — `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`.
/// Retryable unless it is one of the request's own faults (Anthropic's 4xx types): Cline
/// retries any failure of the stream (`task/index.ts`, three times) but a spend limit.
fn stream_error(v: &Value) -> ApiError {
    let kind = v.pointer("/error/type").and_then(Value::as_str).unwrap_or("");
    let message = json_error_message(v).unwrap_or_else(|| v.to_string());
    let (status, retryable) = match kind {
        "overloaded_error" => (Some(529), true),
        "rate_limit_error" => (Some(429), true),
        "api_error" => (Some(500), true),
        "timeout_error" => (Some(504), true),
        // No status: a context overflow (`invalid_request_error`) is recognised by its text.
        "invalid_request_error"
        | "authentication_error"
        | "permission_error"
        | "not_found_error"
        | "request_too_large"
        | "billing_error" => (None, false),
        _ => (None, true),
    };
    ApiError { status, message, retryable, retry_after: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_use_blocks_of_one_reply_are_bounded() {
        // Each block was kept, and searched for every argument delta: 100,000 blocks and as
        // many deltas naming none of them (20 MB) took 6.5 s (optimized build), ten times as
        // many some ten minutes.
        let mut s = Stream::default();
        let ev = |data: String| SseEvent { event: None, data };
        for i in 0..20_000 {
            let start = format!(
                r#"{{"type":"content_block_start","index":{i},"content_block":{{"type":"tool_use","id":"t{i}","name":"n","input":{{}}}}}}"#
            );
            let out = s.event(&ev(start));
            assert_eq!(out.len(), usize::from(i < MAX_TOOL_BLOCKS), "{i}");
        }
        assert_eq!(s.tool_blocks.len(), MAX_TOOL_BLOCKS);
        let delta = |i: u64| {
            format!(
                r#"{{"type":"content_block_delta","index":{i},"delta":{{"type":"input_json_delta","partial_json":"{{}}"}}}}"#
            )
        };
        assert!(s.event(&ev(delta(19_999))).is_empty());
        let first = s.event(&ev(delta(0)));
        assert!(matches!(&first[..], [Delta::Block(BlockDelta::ToolCall { index: 0, .. })]), "{first:?}");
    }

    fn ev(name: &str, data: &str) -> SseEvent {
        SseEvent { event: Some(name.into()), data: data.into() }
    }

    /// A message cut on the way (a proxy closing mid-text) is a retryable error, not a whole
    /// reply without a tool (a mistake); one that ended, or never began, is not.
    #[test]
    fn a_message_without_its_end_is_a_cut_stream() {
        let start = ev("message_start", r#"{"type":"message_start","message":{"usage":{"input_tokens":3}}}"#);
        let text = ev(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"I will now"}}"#,
        );
        let mut s = Stream::default();
        s.event(&start);
        s.event(&text);
        let cut = s.finish();
        assert!(
            matches!(&cut[..], [Delta::Error(e)] if e.retryable && e.message.contains("no message_stop")),
            "{cut:?}"
        );
        assert!(s.finish().is_empty(), "said once");
        let stop = ev(
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}"#,
        );
        for end in [stop, ev("message_stop", r#"{"type":"message_stop"}"#)] {
            let mut s = Stream::default();
            s.event(&start);
            s.event(&text);
            s.event(&end);
            assert!(s.finish().is_empty());
        }
        assert!(Stream::default().finish().is_empty());
    }

    /// A `message_delta` with zeros for the prompt's counts (sglang, some gateways) keeps those
    /// of `message_start`: the counts are cumulative.
    #[test]
    fn zeros_in_the_final_usage_keep_the_prompts_counts() {
        let mut s = Stream::default();
        let start = r#"{"type":"message_start","message":{"usage":{"input_tokens":5000,"output_tokens":1,"cache_read_input_tokens":100000,"cache_creation_input_tokens":7}}}"#;
        s.event(&ev("message_start", start));
        let delta = r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":0,"output_tokens":50,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}"#;
        let out = s.event(&ev("message_delta", delta));
        let usage = out.iter().find_map(|d| if let Delta::Usage(u) = d { Some(*u) } else { None }).unwrap();
        assert_eq!((usage.input, usage.output, usage.cache_read, usage.cache_write), (5000, 50, 100000, 7));
    }

    #[test]
    fn text_usage_and_stop_reason() {
        let mut s = Stream::default();
        let mut out = Vec::new();
        out.extend(s.event(&ev("message_start", r#"{"type":"message_start","message":{"usage":{"input_tokens":12,"output_tokens":1,"cache_read_input_tokens":5}}}"#)));
        out.extend(s.event(&ev(
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        )));
        out.extend(s.event(&ev(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
        )));
        out.extend(s.event(&ev(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#,
        )));
        out.extend(s.event(&ev("ping", r#"{"type":"ping"}"#)));
        out.extend(s.event(&ev(
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":40}}"#,
        )));
        assert!(out.contains(&Delta::Text("Hi".into())));
        assert!(out.contains(&Delta::Reasoning("hmm".into())));
        assert!(out.contains(&Delta::Stop(StopReason::MaxTokens)));
        let full = r#"{"type":"message_delta","delta":{"stop_reason":"model_context_window_exceeded"},"usage":{"output_tokens":4}}"#;
        assert_eq!(Stream::default().event(&ev("message_delta", full))[0], Delta::Stop(StopReason::MaxTokens));
        let last_usage = out
            .iter()
            .rev()
            .find_map(|d| match d {
                Delta::Usage(u) => Some(*u),
                _ => None,
            })
            .unwrap();
        assert_eq!((last_usage.input, last_usage.output, last_usage.cache_read), (12, 40, 5));
    }

    #[test]
    fn a_text_block_after_the_first_block_starts_on_a_new_line() {
        let mut s = Stream::default();
        let mut text = String::new();
        for (i, t) in [(0, "I'll read a."), (1, "Now b.")] {
            let start =
                format!(r#"{{"type":"content_block_start","index":{i},"content_block":{{"type":"text","text":""}}}}"#);
            let delta =
                format!(r#"{{"type":"content_block_delta","index":{i},"delta":{{"type":"text_delta","text":"{t}"}}}}"#);
            for d in s
                .event(&ev("content_block_start", &start))
                .into_iter()
                .chain(s.event(&ev("content_block_delta", &delta)))
            {
                if let Delta::Text(t) = d {
                    text.push_str(&t);
                }
            }
        }
        assert_eq!(text, "I'll read a.\nNow b.");
    }

    #[test]
    fn tool_use_thinking_signature_and_redacted_blocks() {
        let mut s = Stream::default();
        let mut out = Vec::new();
        for (name, data) in [
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"plan"}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"SIG"}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"OPAQUE"}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"read_file","input":{}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"pa"}}"#,
            ),
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_2","name":"list_files","input":{}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{}"}}"#,
            ),
        ] {
            out.extend(s.event(&ev(name, data)));
        }
        let call = |index, id: Option<&str>, name: Option<&str>, a: &str| {
            Delta::Block(BlockDelta::ToolCall {
                index,
                id: id.map(str::to_string),
                name: name.map(str::to_string),
                arguments: a.into(),
            })
        };
        assert_eq!(
            out,
            vec![
                Delta::Block(BlockDelta::ThinkingStart),
                Delta::Reasoning("plan".into()),
                Delta::Block(BlockDelta::Signature("SIG".into())),
                Delta::Block(BlockDelta::RedactedThinking("OPAQUE".into())),
                call(0, Some("toolu_1"), Some("read_file"), ""),
                call(0, None, None, "{\"pa"),
                call(1, Some("toolu_2"), Some("list_files"), ""),
                call(1, None, None, "{}"),
            ]
        );
    }

    #[test]
    fn history_blocks_keep_thinking_then_text_then_calls_and_results_first() {
        use crate::run::llm::types::ToolUsePart;
        let mut a = Message::assistant("Reading.");
        a.parts = vec![
            Part::Thinking { text: "plan".into(), signature: Some("SIG".into()) },
            Part::RedactedThinking { data: "OPAQUE".into() },
            Part::Thinking { text: "unsigned reasoning".into(), signature: None },
            Part::ToolUse(ToolUsePart {
                id: "toolu_1".into(),
                name: "read_file".into(),
                input: r#"{"path":"a"}"#.into(),
                answer: None,
                extra: None,
            }),
        ];
        let u = Message::user("[read_file for 'a'] Result:\nA\n\n<environment_details>\nE\n</environment_details>");
        let c = content(None, &a);
        assert_eq!(
            c,
            json!([
                {"type": "thinking", "thinking": "plan", "signature": "SIG"},
                {"type": "redacted_thinking", "data": "OPAQUE"},
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}},
            ])
        );
        assert_eq!(
            content(Some(&a), &u),
            json!([
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "[read_file for 'a'] Result:\nA"},
                {"type": "text", "text": "<environment_details>\nE\n</environment_details>"},
            ])
        );
        // A user message is always blocks, as Cline's user content is (its `userContent` array).
        assert_eq!(content(None, &Message::user("plain")), json!([{"type": "text", "text": "plain"}]));
        assert_eq!(content(None, &Message::assistant("plain")), json!("plain"));
    }

    #[test]
    fn an_interleaved_reply_goes_back_block_for_block_unless_its_text_changed() {
        let call = Part::read_file_call;
        let think = |s: &str| Part::Thinking { text: s.into(), signature: Some(format!("SIG-{s}")) };
        let mut a = Message::assistant("One.\nTwo.");
        a.parts = vec![think("a"), Part::TextEnd(4), call("t1"), think("b"), call("t2"), Part::TextEnd(9)];
        let blocks = |m: &Message| -> Vec<String> {
            content(None, m)
                .as_array()
                .unwrap()
                .iter()
                .map(|b| match b["type"].as_str().unwrap() {
                    "text" => format!("text {:?}", b["text"].as_str().unwrap()),
                    "thinking" => format!("thinking {}", b["thinking"].as_str().unwrap()),
                    _ => format!("tool_use {}", b["id"].as_str().unwrap()),
                })
                .collect()
        };
        assert_eq!(
            blocks(&a),
            ["thinking a", "text \"One.\"", "tool_use t1", "thinking b", "tool_use t2", "text \"\\nTwo.\""]
        );
        // A mark past the text, inside a character, or short of its end (the text was replaced
        // since, by Cline's "Failure: I did not provide a response." of a reply that said
        // nothing), and the text goes whole before the calls.
        for text in ["One.", "\u{e9}\u{e9}\u{e9}\u{e9}\u{e9}", "One.\nTwo. And more."] {
            a.content = text.into();
            let want = format!("text {text:?}");
            assert_eq!(blocks(&a), ["thinking a", &want, "tool_use t1", "thinking b", "tool_use t2"], "{text}");
        }
    }

    #[test]
    fn overloaded_error_event_is_retryable() {
        let mut s = Stream::default();
        let out =
            s.event(&ev("error", r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#));
        match &out[0] {
            Delta::Error(e) => {
                assert!(e.retryable);
                assert!(e.message.contains("Overloaded"));
            }
            d => panic!("{d:?}"),
        }
        let out = s.event(&ev("error", r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}"#));
        assert!(matches!(&out[0], Delta::Error(e) if !e.retryable));
    }

    #[test]
    fn timeout_and_unknown_error_events_are_retryable_the_requests_own_faults_are_not() {
        let kind = |k: &str| {
            let out = Stream::default()
                .event(&ev("error", &format!(r#"{{"type":"error","error":{{"type":"{k}","message":"m"}}}}"#)));
            match &out[..] {
                [Delta::Error(e)] => (e.retryable, e.status),
                d => panic!("{d:?}"),
            }
        };
        assert_eq!(kind("timeout_error"), (true, Some(504)));
        assert_eq!(kind("some_future_error"), (true, None));
        for fault in ["invalid_request_error", "authentication_error", "permission_error", "billing_error"] {
            assert_eq!(kind(fault), (false, None), "{fault}");
        }
    }

    #[test]
    fn request_puts_key_in_headers_and_system_in_body() {
        let cfg = ApiConfig {
            base_url: "http://x/".into(),
            api_key: Some("sk-test".into()),
            max_tokens: Some(100),
            ..ApiConfig::test(super::super::Provider::Anthropic, "m")
        };
        let r = request(&cfg, "SYS", &[Message::user("hi")]);
        assert_eq!(r.url, "http://x/v1/messages");
        assert!(r.headers.contains(&("x-api-key".into(), "sk-test".into())));
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(body["system"], json!([{"text": "SYS", "type": "text"}]));
        assert_eq!(body["stream"], true);
        assert_eq!(body["messages"][0]["content"], json!([{"type": "text", "text": "hi"}]));
        assert!(!String::from_utf8_lossy(&r.body).contains("sk-test"));
    }

    /// The request for `model` (its facts from Cline's table) with these thinking flags: its
    /// body and its `anthropic-beta` header.
    fn asked(model: &str, budget: Option<u32>, effort: Option<&str>) -> (Value, Option<String>) {
        let cfg = ApiConfig {
            facts: crate::run::llm::models::lookup(super::super::Provider::Anthropic, model).facts,
            thinking_budget: budget,
            reasoning_effort: effort.map(str::to_string),
            tools: Some(crate::run::llm::tool_specs::Tools {
                parallel: true,
                builtin: crate::run::dialect::native::definitions(
                    crate::run::prompt::system::Family::NativeNextGen,
                    "/w",
                ),
                extra: Vec::new(),
            }),
            ..ApiConfig::test(super::super::Provider::Anthropic, model)
        };
        let r = request(&cfg, "SYS", &[Message::user("hi")]);
        let beta = r.headers.iter().find(|(k, _)| k == "anthropic-beta").map(|(_, v)| v.clone());
        (serde_json::from_slice(&r.body).unwrap(), beta)
    }

    /// MiniMax's Anthropic-format API refuses 0 (its range is (0, 1]); Cline's minimax.ts sends 1.
    #[test]
    fn minimax_models_get_temperature_1() {
        assert_eq!(asked("MiniMax-M2.5", None, None).0["temperature"], json!(1));
        assert_eq!(asked("claude-sonnet-4-5", None, None).0["temperature"], json!(0));
    }

    #[test]
    fn adaptive_models_get_no_temperature_and_think_by_effort() {
        // Opus 4.7 refuses a temperature ("temperature is deprecated for this model").
        for model in ["claude-opus-4-7", "claude-opus-4-6", "claude-sonnet-5", "claude-opus-4-8"] {
            let (body, _) = asked(model, None, None);
            assert_eq!(body.get("temperature"), None, "{model}");
            assert_eq!(body.get("thinking"), None, "{model}");
            assert_eq!(body["tool_choice"], json!({"type": "any"}), "{model}");
        }
        let (body, _) = asked("claude-opus-4-7", None, Some("xhigh"));
        assert_eq!(body["thinking"], json!({"type": "adaptive"}));
        assert_eq!(body["output_config"], json!({"effort": "xhigh"}));
        assert_eq!((body.get("tool_choice"), body.get("temperature")), (None, None));
        // A budget turns thinking on at effort high; `none` turns it off.
        let (body, _) = asked("claude-opus-4-7", Some(4096), None);
        assert_eq!(
            (&body["thinking"], &body["output_config"]),
            (&json!({"type": "adaptive"}), &json!({"effort": "high"}))
        );
        let (body, _) = asked("claude-opus-4-7", Some(4096), Some("none"));
        assert_eq!((body.get("thinking"), body.get("output_config"), body.get("temperature")), (None, None, None));
    }

    #[test]
    fn claude_models_newer_than_clines_table_get_neither_a_temperature_nor_a_forced_tool() {
        // Anthropic refuses both from these ("Forced tool use returns an error" on Sonnet 5.5;
        // Claude 5 models refuse sampling parameters). Cline would ask its default model.
        for model in ["claude-sonnet-5-5", "claude-opus-5", "claude-opus-5-5", "claude-haiku-5-5"] {
            let (body, _) = asked(model, None, None);
            assert_eq!(body.get("temperature"), None, "{model}");
            assert_eq!(body["tool_choice"], json!({"type": "auto"}), "{model}");
            let (body, _) = asked(model, None, Some("high"));
            assert_eq!(
                (&body["thinking"], &body["output_config"]),
                (&json!({"type": "adaptive"}), &json!({"effort": "high"}))
            );
        }
        // Older ones, and the generations in either naming.
        assert_eq!(asked("claude-3-5-sonnet-20241022", None, None).0["tool_choice"], json!({"type": "any"}));
        assert_eq!(claude_generation("claude-3-5-sonnet-20241022"), Some(3));
        assert_eq!(claude_generation("anthropic/claude-opus-5.5"), Some(5));
        assert_eq!(claude_generation("claude-test"), None);
        assert_eq!(claude_generation("claude-20250101-proxy"), None);
        assert!(!thinks_adaptively("claude-sonnet-4-5-20250929") && thinks_adaptively("anthropic/claude-opus-5.5"));
    }

    #[test]
    fn a_budget_goes_only_to_a_model_that_can_think() {
        let (body, _) = asked("claude-sonnet-4-5", Some(2048), None);
        assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));
        assert_eq!((body.get("temperature"), body.get("tool_choice")), (None, None));
        // Claude 3.5 Haiku has no extended thinking (the API refuses it): as Cline, none asked.
        let (body, _) = asked("claude-3-5-haiku-20241022", Some(2048), None);
        assert_eq!(body.get("thinking"), None);
        assert_eq!(body["temperature"], 0);
        // A model Cline's table does not know is taken at its word.
        let (body, _) = asked("claude-test", Some(2048), None);
        assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));
    }

    #[test]
    fn a_budget_goes_to_a_suffixed_model_and_by_the_runs_own_facts() {
        // `claude-sonnet-4-5:1m` had an unknown model's facts while the id without `:1m` was
        // looked up again and found: the budget was silently dropped.
        let (body, beta) = asked("claude-sonnet-4-5:1m", Some(2048), None);
        assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));
        assert_eq!((body["model"].as_str(), body["max_tokens"].as_i64()), (Some("claude-sonnet-4-5"), Some(64_000)));
        assert_eq!(beta.as_deref(), Some("context-1m-2025-08-07"));
        // Facts of no table (the fallback) take the model at its word, whatever its id.
        let cfg = ApiConfig {
            thinking_budget: Some(2048),
            ..ApiConfig::test(super::super::Provider::Anthropic, "claude-3-5-haiku-20241022")
        };
        assert_eq!(Thinking::of(&cfg, &cfg.model), Thinking::Budget(2048));
    }

    #[test]
    fn a_budget_at_the_models_maximum_never_asks_more_tokens_than_the_model_has() {
        // Claude Sonnet 4.5 writes at most 64,000 tokens: 64,000 + 64,000 was a sure 400.
        let cap =
            crate::run::llm::models::lookup(super::super::Provider::Anthropic, "claude-sonnet-4-5").facts.max_output();
        assert_eq!(cap, Some(64_000));
        let (body, _) = asked("claude-sonnet-4-5", Some(64_000), None);
        assert_eq!(body["max_tokens"], 64_000);
        assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 63_999}));
        let (body, _) = asked("claude-sonnet-4-5", Some(100_000), None);
        assert_eq!((&body["max_tokens"], &body["thinking"]["budget_tokens"]), (&json!(64_000), &json!(63_999)));
        // Below the maximum, as before: max_tokens raised by the budget.
        let (body, _) = asked("claude-sonnet-4-5", Some(2048), None);
        assert_eq!((&body["max_tokens"], &body["thinking"]["budget_tokens"]), (&json!(64_000), &json!(2048)));
        // A model the table does not know: no maximum known, the sum is asked.
        let (body, _) = asked("claude-test", Some(10_000), None);
        assert_eq!((&body["max_tokens"], &body["thinking"]["budget_tokens"]), (&json!(18_192), &json!(10_000)));
    }

    #[test]
    fn clines_fast_and_1m_suffixes_become_betas() {
        let (body, beta) = asked("claude-opus-4-6:1m", None, None);
        assert_eq!((body["model"].as_str(), beta.as_deref()), (Some("claude-opus-4-6"), Some("context-1m-2025-08-07")));
        assert_eq!(body.get("speed"), None);
        let (body, beta) = asked("claude-opus-4-6:1m:fast", None, None);
        assert_eq!(body["model"], "claude-opus-4-6");
        assert_eq!(beta.as_deref(), Some("fast-mode-2026-02-01,context-1m-2025-08-07"));
        assert_eq!(body["speed"], "fast");
        let (body, beta) = asked("claude-sonnet-4-5", None, None);
        assert_eq!((body["model"].as_str(), beta), (Some("claude-sonnet-4-5"), None));
        assert_eq!(body["temperature"], 0);
    }
}
