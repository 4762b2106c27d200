//! Ollama's native chat API: `POST {base}/api/chat`, NDJSON stream, with `options.num_ctx`
//! (its OpenAI-compatible endpoint silently truncates long prompts to a small default window).

use serde_json::{json, Value};

use super::{ApiConfig, HttpRequest};
use crate::run::llm::types::{ApiError, Delta, Message, StopReason, Usage};

/// Builds the request.
pub fn request(cfg: &ApiConfig, system: &str, messages: &[Message]) -> HttpRequest {
    let msgs = super::chat_messages(system, messages);
    let body = json!({
        "model": cfg.model,
        "messages": msgs,
        "stream": true,
        "options": {"num_ctx": cfg.num_ctx, "num_predict": cfg.max_tokens},
    });
    HttpRequest {
        url: format!("{}/api/chat", cfg.base_url.trim_end_matches('/')),
        headers: vec![("content-type".to_string(), "application/json".to_string())],
        body: body.to_string().into_bytes(),
    }
}

/// Decoder state (stateless; kept for symmetry with the other providers).
#[derive(Default)]
pub struct Stream;

impl Stream {
    /// Handles one NDJSON line.
    pub fn line(&mut self, line: &str) -> Vec<Delta> {
        let line = line.trim();
        if line.is_empty() {
            return Vec::new();
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return Vec::new();
        };
        if let Some(e) = v.get("error") {
            let message = e.as_str().map(str::to_string).unwrap_or_else(|| e.to_string());
            return vec![Delta::Error(ApiError::fatal(message))];
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
        if v.get("done").and_then(Value::as_bool) == Some(true) {
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
    fn ndjson_lines() {
        let mut s = Stream;
        let mut out = s.line(r#"{"message":{"role":"assistant","content":"Hi"},"done":false}"#);
        out.extend(s.line(r#"{"message":{"role":"assistant","content":""},"done":true,"done_reason":"length","prompt_eval_count":7,"eval_count":2}"#));
        assert_eq!(out[0], Delta::Text("Hi".into()));
        assert_eq!(out[1], Delta::Usage(Usage { input: 7, output: 2, ..Usage::default() }));
        assert_eq!(out[2], Delta::Stop(StopReason::MaxTokens));
    }
}
