//! Anthropic Messages API: `POST {base}/v1/messages` with `stream: true`.

use serde_json::{json, Value};

use super::{json_error_message, ApiConfig, HttpRequest};
use crate::run::llm::sse::SseEvent;
use crate::run::llm::types::{ApiError, Delta, Message, Role, StopReason, Usage};

/// Builds the request.
pub fn request(cfg: &ApiConfig, system: &str, messages: &[Message]) -> HttpRequest {
    let msgs: Vec<Value> = messages
        .iter()
        .map(|m| {
            json!({
                "role": if m.role == Role::User { "user" } else { "assistant" },
                "content": m.content,
            })
        })
        .collect();
    let body = json!({
        "model": cfg.model,
        "max_tokens": cfg.max_tokens,
        "system": system,
        "messages": msgs,
        "stream": true,
    });
    let mut headers = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("anthropic-version".to_string(), "2023-06-01".to_string()),
        ("accept".to_string(), "text/event-stream".to_string()),
    ];
    if let Some(k) = &cfg.api_key {
        headers.push(("x-api-key".to_string(), k.clone()));
    }
    HttpRequest {
        url: format!("{}/v1/messages", cfg.base_url.trim_end_matches('/')),
        headers,
        body: body.to_string().into_bytes(),
    }
}

/// Decoder state for one streamed message.
#[derive(Default)]
pub struct Stream {
    usage: Usage,
}

impl Stream {
    /// Handles one SSE event.
    pub fn event(&mut self, ev: &SseEvent) -> Vec<Delta> {
        let Ok(v) = serde_json::from_str::<Value>(&ev.data) else {
            return Vec::new();
        };
        let ty = v.get("type").and_then(Value::as_str).or(ev.event.as_deref()).unwrap_or("");
        match ty {
            "message_start" => {
                if let Some(u) = v.pointer("/message/usage") {
                    self.read_usage(u);
                }
                vec![Delta::Usage(self.usage)]
            }
            "content_block_start" => match v.pointer("/content_block/type").and_then(Value::as_str) {
                Some("text") => text_of(&v, "/content_block/text", Delta::Text),
                _ => Vec::new(),
            },
            "content_block_delta" => match v.pointer("/delta/type").and_then(Value::as_str) {
                Some("text_delta") => text_of(&v, "/delta/text", Delta::Text),
                Some("thinking_delta") => text_of(&v, "/delta/thinking", Delta::Reasoning),
                _ => Vec::new(),
            },
            "message_delta" => {
                let mut out = Vec::new();
                if let Some(u) = v.get("usage") {
                    self.read_usage(u);
                    out.push(Delta::Usage(self.usage));
                }
                if let Some(r) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    out.push(Delta::Stop(match r {
                        "max_tokens" => StopReason::MaxTokens,
                        "end_turn" | "stop_sequence" | "tool_use" => StopReason::EndTurn,
                        other => StopReason::Other(other.to_string()),
                    }));
                }
                out
            }
            "error" => vec![Delta::Error(stream_error(&v))],
            _ => Vec::new(),
        }
    }

    fn read_usage(&mut self, u: &Value) {
        let get = |k: &str| u.get(k).and_then(Value::as_u64);
        if let Some(n) = get("input_tokens") {
            self.usage.input = n;
        }
        if let Some(n) = get("output_tokens") {
            self.usage.output = n;
        }
        if let Some(n) = get("cache_read_input_tokens") {
            self.usage.cache_read = n;
        }
        if let Some(n) = get("cache_creation_input_tokens") {
            self.usage.cache_write = n;
        }
    }
}

fn text_of(v: &Value, ptr: &str, f: fn(String) -> Delta) -> Vec<Delta> {
    match v.pointer(ptr).and_then(Value::as_str) {
        Some(s) if !s.is_empty() => vec![f(s.to_string())],
        _ => Vec::new(),
    }
}

/// `event: error` — `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`.
fn stream_error(v: &Value) -> ApiError {
    let kind = v.pointer("/error/type").and_then(Value::as_str).unwrap_or("");
    let message = json_error_message(v).unwrap_or_else(|| v.to_string());
    let (status, retryable) = match kind {
        "overloaded_error" => (Some(529), true),
        "rate_limit_error" => (Some(429), true),
        "api_error" => (Some(500), true),
        _ => (None, false),
    };
    ApiError { status, message, retryable, retry_after: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(name: &str, data: &str) -> SseEvent {
        SseEvent { event: Some(name.into()), data: data.into() }
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
    fn request_puts_key_in_headers_and_system_in_body() {
        let cfg = ApiConfig {
            provider: super::super::Provider::Anthropic,
            model: "m".into(),
            base_url: "http://x/".into(),
            api_key: Some("sk-test".into()),
            max_tokens: 100,
            num_ctx: 0,
            connect_timeout: 1,
            idle_timeout: 1,
        };
        let r = request(&cfg, "SYS", &[Message { role: Role::User, content: "hi".into() }]);
        assert_eq!(r.url, "http://x/v1/messages");
        assert!(r.headers.contains(&("x-api-key".into(), "sk-test".into())));
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(body["system"], "SYS");
        assert_eq!(body["stream"], true);
        assert_eq!(body["messages"][0]["content"], "hi");
        assert!(!String::from_utf8_lossy(&r.body).contains("sk-test"));
    }
}
