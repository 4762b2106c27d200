//! The real [`Transport`]: a provider's wire format ([`super::providers`]) over a `curl`
//! subprocess ([`super::curl`]), with errors classified for retrying and the retry backoff.

use std::time::Duration;

use super::curl;
use super::providers::{self, ApiConfig};
use super::types::{ApiError, Delta, Flow, Message, Transport};
use crate::run::clock::MAX_WAIT;

/// The real thing: the provider's HTTP API through curl.
pub struct Http {
    /// Where and how to connect.
    pub cfg: ApiConfig,
}

impl Transport for Http {
    fn provider(&self) -> &str {
        self.cfg.provider.name()
    }

    fn set_extra_tools(&mut self, tools: Vec<super::tool_specs::ToolSpec>) {
        self.cfg.extra_tools = tools;
    }

    fn send(&mut self, system: &str, messages: &[Message], on: &mut dyn FnMut(Delta) -> Flow) -> Result<(), ApiError> {
        let req = providers::build_request(&self.cfg, system, messages);
        let mut resp = curl::post(&curl::Request {
            url: &req.url,
            headers: &req.headers,
            body: &req.body,
            connect_timeout: self.cfg.connect_timeout,
            idle_timeout: self.cfg.idle_timeout,
        })
        .map_err(curl_error)?;
        if !(200..300).contains(&resp.status) {
            let body = resp.read_rest(64 * 1024);
            let retry_after = resp.header("retry-after").and_then(|v| v.trim().parse::<f64>().ok());
            let status = resp.status;
            resp.abort();
            let message = providers::error_message(&body);
            return Err(ApiError::from_status(status, message, retry_after));
        }
        let mut decoder = providers::Decoder::new(self.cfg.provider);
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let n = match resp.read_chunk(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) => {
                    resp.abort();
                    return Err(dropped(e.to_string()));
                }
            };
            for d in decoder.push(&buf[..n]) {
                if let Delta::Error(e) = d {
                    resp.abort();
                    return Err(e);
                }
                if on(d) == Flow::Stop {
                    resp.abort();
                    return Ok(());
                }
            }
        }
        for d in decoder.finish() {
            if let Delta::Error(e) = d {
                return Err(e);
            }
            if on(d) == Flow::Stop {
                break;
            }
        }
        resp.finish().map_err(|e| dropped(e.to_string()))
    }
}

fn dropped(detail: String) -> ApiError {
    ApiError {
        status: None,
        message: format!("the connection dropped mid-stream ({detail})"),
        retryable: true,
        retry_after: None,
    }
}

/// curl's failure as an API error: retried unless trying again cannot help — 1 (unsupported
/// protocol), 3 (malformed URL), 6 (unknown host), 60 (certificate not trusted).
fn curl_error(e: curl::CurlError) -> ApiError {
    match e {
        curl::CurlError::Failed { code, .. } => ApiError {
            status: None,
            message: e.to_string(),
            retryable: !matches!(code, 1 | 3 | 6 | 60),
            retry_after: None,
        },
        other => ApiError::fatal(other.to_string()),
    }
}

/// The delay before retry number `attempt` (1-based): the server's `retry-after` if it gave one
/// (capped at 60 s), else `base`·2^(attempt-1) — 2, 4, 8 s by default.
pub fn backoff(base: Duration, attempt: u32, retry_after: Option<f64>) -> Duration {
    match retry_after {
        Some(s) if s.is_finite() && s >= 0.0 => Duration::from_secs_f64(s.min(60.0)),
        _ => base.checked_mul(2u32.saturating_pow(attempt.saturating_sub(1))).unwrap_or(MAX_WAIT).min(MAX_WAIT),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hopeless_curl_failures_are_not_retried() {
        let f = |code| curl_error(curl::CurlError::Failed { code, message: "x".into() }).retryable;
        assert!(f(7) && f(28) && f(52) && f(56), "connect failures, timeouts, drops are retried");
        assert!(!f(1) && !f(3) && !f(6) && !f(60));
    }

    #[test]
    fn classification_of_statuses() {
        for s in [429, 500, 502, 503, 529, 408] {
            assert!(ApiError::from_status(s, "x".into(), None).retryable, "{s}");
        }
        for s in [400, 401, 403, 404] {
            assert!(!ApiError::from_status(s, "x".into(), None).retryable, "{s}");
        }
        let quota = ApiError::from_status(429, "You exceeded your current quota (insufficient_quota)".into(), None);
        assert!(!quota.retryable);
    }

    #[test]
    fn context_overflow_errors_of_each_server_are_recognised() {
        let body = |s: &str| crate::run::llm::providers::error_message(s.as_bytes());
        let anthropic = body(
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
        );
        let openai = body(
            r#"{"error":{"message":"This model's context is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        );
        let llama = body(
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}"#,
        );
        for m in [anthropic, openai, llama] {
            assert!(ApiError::from_status(400, m.clone(), None).is_context_overflow(), "{m}");
        }
        assert!(!ApiError::from_status(400, "invalid x-api-key".into(), None).is_context_overflow());
    }

    #[test]
    fn backoff_doubles_and_honours_retry_after() {
        let b = Duration::from_secs(2);
        assert_eq!(backoff(b, 1, None), Duration::from_secs(2));
        assert_eq!(backoff(b, 2, None), Duration::from_secs(4));
        assert_eq!(backoff(b, 3, None), Duration::from_secs(8));
        assert_eq!(backoff(b, 1, Some(7.0)), Duration::from_secs(7));
        assert_eq!(backoff(b, 1, Some(1e9)), Duration::from_secs(60));
        let huge = Duration::from_secs(u64::MAX / 2);
        assert_eq!(backoff(huge, 3, None), crate::run::clock::MAX_WAIT);
    }
}
