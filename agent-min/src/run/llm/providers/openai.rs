//! OpenAI-compatible Chat Completions: `POST {base}/chat/completions` with `stream: true` and
//! `stream_options.include_usage` (OpenAI, OpenRouter, vLLM, llama.cpp server, LM Studio).

use serde_json::{json, Value};

use super::{json_error_message, ApiConfig, HttpRequest};
use crate::run::llm::sse::SseEvent;
use crate::run::llm::types::{ApiError, Delta, Message, StopReason, Usage};

/// Builds the request.
pub fn request(cfg: &ApiConfig, system: &str, messages: &[Message]) -> HttpRequest {
    let msgs = super::chat_messages(system, messages);
    let body = json!({
        "model": cfg.model,
        "messages": msgs,
        "max_tokens": cfg.max_tokens,
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    let mut headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("accept".to_string(), "text/event-stream".to_string()),
    ];
    if let Some(k) = &cfg.api_key {
        headers.push(("authorization".to_string(), format!("Bearer {k}")));
    }
    HttpRequest {
        url: format!("{}/chat/completions", cfg.base_url.trim_end_matches('/')),
        headers,
        body: body.to_string().into_bytes(),
    }
}

/// Decoder state for one streamed completion.
#[derive(Default)]
pub struct Stream {
    done: bool,
}

impl Stream {
    /// Handles one SSE event.
    pub fn event(&mut self, ev: &SseEvent) -> Vec<Delta> {
        let data = ev.data.trim();
        if self.done || data.is_empty() {
            return Vec::new();
        }
        if data == "[DONE]" {
            self.done = true;
            return Vec::new();
        }
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            return Vec::new();
        };
        if v.get("error").is_some() {
            return vec![Delta::Error(stream_error(&v))];
        }
        let mut out = Vec::new();
        if let Some(choice) = v.pointer("/choices/0") {
            let delta = choice.get("delta").or_else(|| choice.get("message"));
            if let Some(d) = delta {
                for key in ["reasoning_content", "reasoning"] {
                    if let Some(s) = d.get(key).and_then(Value::as_str) {
                        if !s.is_empty() {
                            out.push(Delta::Reasoning(s.to_string()));
                        }
                    }
                }
                if let Some(s) = d.get("content").and_then(Value::as_str) {
                    if !s.is_empty() {
                        out.push(Delta::Text(s.to_string()));
                    }
                }
            }
            if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
                out.push(Delta::Stop(match r {
                    "length" => StopReason::MaxTokens,
                    "stop" | "tool_calls" => StopReason::EndTurn,
                    other => StopReason::Other(other.to_string()),
                }));
            }
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            let get = |p: &str| u.pointer(p).and_then(Value::as_u64).unwrap_or(0);
            out.push(Delta::Usage(Usage {
                input: get("/prompt_tokens"),
                output: get("/completion_tokens"),
                cache_read: get("/prompt_tokens_details/cached_tokens"),
                cache_write: 0,
            }));
        }
        out
    }
}

/// `{"error":{"message":…,"type"|"code":…}}` mid-stream (OpenAI, OpenRouter).
fn stream_error(v: &Value) -> ApiError {
    let e = &v["error"];
    let message = json_error_message(v).unwrap_or_else(|| v.to_string());
    let code = e.get("code").and_then(Value::as_u64).map(|c| c as u16);
    let words = format!(
        "{} {} {}",
        e.get("type").and_then(Value::as_str).unwrap_or(""),
        e.get("code").and_then(Value::as_str).unwrap_or(""),
        message
    )
    .to_ascii_lowercase();
    let retryable = match code {
        Some(c) => c == 429 || c >= 500,
        None => {
            ["overloaded", "server_error", "rate_limit", "timeout", "unavailable"].iter().any(|w| words.contains(w))
        }
    } && !words.contains("insufficient_quota");
    ApiError { status: code, message, retryable, retry_after: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(s: &str) -> SseEvent {
        SseEvent { event: None, data: s.into() }
    }

    #[test]
    fn content_reasoning_finish_and_usage() {
        let mut s = Stream::default();
        let mut out = Vec::new();
        out.extend(s.event(&data(r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#)));
        out.extend(s.event(&data(r#"{"choices":[{"index":0,"delta":{"reasoning_content":"think"}}]}"#)));
        out.extend(s.event(&data(r#"{"choices":[{"index":0,"delta":{"content":"Hello"}}]}"#)));
        out.extend(s.event(&data(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#)));
        out.extend(s.event(&data(r#"{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":2}}}"#)));
        out.extend(s.event(&data("[DONE]")));
        out.extend(s.event(&data(r#"{"choices":[{"index":0,"delta":{"content":"after done"}}]}"#)));
        assert_eq!(
            out,
            vec![
                Delta::Reasoning("think".into()),
                Delta::Text("Hello".into()),
                Delta::Stop(StopReason::MaxTokens),
                Delta::Usage(Usage { input: 9, output: 3, cache_read: 2, cache_write: 0 }),
            ]
        );
    }

    #[test]
    fn mid_stream_error_objects_are_classified() {
        let mut s = Stream::default();
        let out = s.event(&data(r#"{"error":{"message":"Provider overloaded","code":502}}"#));
        assert!(matches!(&out[0], Delta::Error(e) if e.retryable && e.status == Some(502)));
        let out = s.event(&data(r#"{"error":{"message":"bad key","type":"invalid_request_error"}}"#));
        assert!(matches!(&out[0], Delta::Error(e) if !e.retryable));
    }
}
