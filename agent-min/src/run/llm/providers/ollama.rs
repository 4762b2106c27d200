//! Ollama's native chat API: `POST {base}/api/chat`, NDJSON stream, with `options.num_ctx`
//! (its OpenAI-compatible endpoint silently truncates long prompts to a small default window).

use serde_json::{json, Value};

use super::{ApiConfig, HttpRequest};
use crate::run::llm::tool_specs;
use crate::run::llm::types::{ApiError, BlockDelta, Delta, Message, StopReason, Usage};

/// Builds the request as Cline's `OllamaHandler.createMessage` does: `options.num_ctx` and no
/// output limit (`num_predict` only when `--max-tokens` gives one).
pub(crate) fn request(cfg: &ApiConfig, system: &str, messages: &[Message]) -> HttpRequest {
    let msgs =
        super::chat_messages(system, messages, super::ChatForm { ollama: true, strings: true, openai_native: false });
    let mut body = json!({
        "model": cfg.model,
        "messages": msgs,
        "stream": true,
        "options": {"num_ctx": cfg.num_ctx},
    });
    if let Some(n) = cfg.max_tokens {
        body["options"]["num_predict"] = json!(n);
    }
    if let Some(tools) = &cfg.tools {
        body["tools"] = tool_specs::openai(tools);
    }
    let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
    // Cline's `ollamaApiKey`, for a server that asks for one (ollama.com's API).
    if let Some(k) = &cfg.api_key {
        headers.push(("authorization".to_string(), format!("Bearer {k}")));
    }
    HttpRequest {
        url: format!("{}/api/chat", cfg.base_url.trim_end_matches('/')),
        headers,
        body: body.to_string().into_bytes(),
    }
}

/// Decoder state: how many tool calls the reply has made (Ollama sends each whole, without an
/// id, so they are numbered here).
#[derive(Default)]
pub(crate) struct Stream {
    calls: usize,
    /// A line came.
    started: bool,
    /// The last line (`done: true`) or an error came.
    ended: bool,
}

impl Stream {
    /// The body ended: a reply begun without its `done: true` line (which Ollama always
    /// sends) was cut on the way, and is asked again rather than taken for a whole one.
    pub(crate) fn finish(&mut self) -> Vec<Delta> {
        if !self.started || std::mem::replace(&mut self.ended, true) {
            return Vec::new();
        }
        let message = "the stream ended before the reply did (no done: true)".to_string();
        vec![Delta::Error(ApiError { status: None, message, retryable: true, retry_after: None })]
    }

    /// Handles one NDJSON line.
    pub(crate) fn line(&mut self, line: &str) -> Vec<Delta> {
        let line = line.trim();
        if line.is_empty() {
            return Vec::new();
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return Vec::new();
        };
        self.started = true;
        if let Some(e) = v.get("error") {
            self.ended = true;
            // Retried, as Cline's `OllamaHandler` retries every error (`retryAllErrors`): a
            // runner that died ("llama runner process has terminated") is started again.
            let message = e.as_str().map(str::to_string).unwrap_or_else(|| e.to_string());
            return vec![Delta::Error(ApiError { retryable: true, ..ApiError::fatal(message) })];
        }
        let mut out = Vec::new();
        if let Some(s) = v.pointer("/message/thinking").and_then(Value::as_str) {
            if !s.is_empty() {
                out.push(Delta::Reasoning(s.to_string()));
            }
        }
        if let Some(s) = v.pointer("/message/content").and_then(Value::as_str) {
            if !s.is_empty() {
                out.push(Delta::Text(s.to_string()));
            }
        }
        for call in v.pointer("/message/tool_calls").and_then(Value::as_array).into_iter().flatten() {
            let index = self.calls;
            self.calls += 1;
            let arguments = match call.pointer("/function/arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(v) if !v.is_null() => v.to_string(),
                _ => String::new(),
            };
            let name = call.pointer("/function/name").and_then(Value::as_str).map(str::to_string);
            out.push(Delta::Block(BlockDelta::ToolCall { index, id: None, name, arguments }));
        }
        if v.get("done").and_then(Value::as_bool) == Some(true) {
            self.ended = true;
            let get = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
            out.push(Delta::Usage(Usage {
                input: get("prompt_eval_count"),
                output: get("eval_count"),
                ..Usage::default()
            }));
            out.push(Delta::Stop(match v.get("done_reason").and_then(Value::as_str) {
                Some("length") => StopReason::MaxTokens,
                _ => StopReason::EndTurn,
            }));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_limit_only_when_asked_for() {
        let cfg = |max_tokens| ApiConfig {
            max_tokens,
            num_ctx: 32768,
            ..ApiConfig::test(super::super::Provider::Ollama, "qwen3")
        };
        let options = |max_tokens| {
            let body: Value =
                serde_json::from_slice(&request(&cfg(max_tokens), "SYS", &[Message::user("t")]).body).unwrap();
            body["options"].clone()
        };
        // Cline's ollama.ts sends num_ctx alone: the model writes as long as it needs.
        assert_eq!(options(None), json!({"num_ctx": 32768}));
        assert_eq!(options(Some(100)), json!({"num_ctx": 32768, "num_predict": 100}));
    }

    /// A reply cut on the way (no `done: true`) is a retryable error, not a whole reply.
    #[test]
    fn a_reply_without_its_last_line_is_a_cut_stream() {
        let mut s = Stream::default();
        s.line(r#"{"message":{"role":"assistant","content":"I will"},"done":false}"#);
        let cut = s.finish();
        assert!(matches!(&cut[..], [Delta::Error(e)] if e.retryable && e.message.contains("no done: true")), "{cut:?}");
        s.line(r#"{"message":{"role":"assistant","content":""},"done":true}"#);
        let mut whole = Stream::default();
        whole.line(r#"{"message":{"role":"assistant","content":"ok"},"done":true}"#);
        assert!(whole.finish().is_empty() && Stream::default().finish().is_empty());
    }

    #[test]
    fn ndjson_lines() {
        let mut s = Stream::default();
        let mut out = s.line(r#"{"message":{"role":"assistant","content":"Hi"},"done":false}"#);
        out.extend(s.line(r#"{"message":{"role":"assistant","content":""},"done":true,"done_reason":"length","prompt_eval_count":7,"eval_count":2}"#));
        assert_eq!(out[0], Delta::Text("Hi".into()));
        assert_eq!(out[1], Delta::Usage(Usage { input: 7, output: 2, ..Usage::default() }));
        assert_eq!(out[2], Delta::Stop(StopReason::MaxTokens));
    }

    /// A key, when there is one, goes as a bearer token, as Cline's `ollamaApiKey` does.
    #[test]
    fn a_key_is_sent_as_a_bearer_token_when_set() {
        let cfg = ApiConfig::test(super::super::Provider::Ollama, "qwen3");
        let auth = |cfg: &ApiConfig| {
            request(cfg, "s", &[]).headers.into_iter().find(|(n, _)| n == "authorization").map(|(_, v)| v)
        };
        assert_eq!(auth(&cfg), None);
        assert_eq!(auth(&ApiConfig { api_key: Some("k".into()), ..cfg }), Some("Bearer k".into()));
    }

    /// An error line in the stream is retried, as Cline retries every Ollama error.
    #[test]
    fn an_error_in_the_stream_is_retried() {
        let out = Stream::default().line(r#"{"error":"llama runner process has terminated: signal: killed"}"#);
        assert!(
            matches!(&out[..], [Delta::Error(e)] if e.retryable && e.message == "llama runner process has terminated: signal: killed"),
            "{out:?}"
        );
    }

    #[test]
    fn whole_tool_calls_are_numbered() {
        let mut s = Stream::default();
        let out = s.line(r#"{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"read_file","arguments":{"path":"a.txt"}}},{"function":{"name":"list_files","arguments":{}}}]},"done":false}"#);
        assert_eq!(
            out,
            vec![
                Delta::Block(BlockDelta::ToolCall {
                    index: 0,
                    id: None,
                    name: Some("read_file".into()),
                    arguments: r#"{"path":"a.txt"}"#.into()
                }),
                Delta::Block(BlockDelta::ToolCall {
                    index: 1,
                    id: None,
                    name: Some("list_files".into()),
                    arguments: "{}".into()
                }),
            ]
        );
    }
}
