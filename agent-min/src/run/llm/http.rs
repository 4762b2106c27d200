//! The real [`Transport`]: a provider's wire format ([`super::providers`]) over a `curl`
//! subprocess ([`super::curl`]), with errors classified for retrying and the retry backoff.

use std::time::{Duration, Instant};

use super::curl;
use super::providers::{self, ApiConfig};
use super::types::{ApiError, Delta, Flow, Message, Transport, QUIET_AFTER};
use crate::run::clock::MAX_WAIT;

/// Seconds a reply asked for whole may take to come (`--idle-timeout` if longer).
const WHOLE_REPLY_WAIT: u32 = 600;

/// The real thing: the provider's HTTP API through curl.
pub(crate) struct Http {
    /// Where and how to connect.
    pub cfg: ApiConfig,
    /// The server's words when it refused a request for its image (taken by
    /// [`Transport::images_refused`]).
    pub refused_images: Option<String>,
}

impl Http {
    /// The transport for `cfg`.
    pub(crate) fn new(cfg: ApiConfig) -> Http {
        Http { cfg, refused_images: None }
    }
}

impl Transport for Http {
    fn provider(&self) -> &str {
        self.cfg.declared.name
    }

    fn set_tools(&mut self, tools: super::tool_specs::Tools) {
        self.cfg.tools = Some(tools);
    }

    fn images_refused(&mut self) -> Option<String> {
        self.refused_images.take()
    }

    fn max_output(&self) -> Option<u64> {
        // The cap this request was sent with, else the model's own (none: no cap to hold to).
        match self.cfg.max_tokens {
            Some(n) => Some(u64::from(n)),
            None => self.cfg.facts.max_tokens.and_then(|n| u64::try_from(n).ok()),
        }
    }

    fn send(&mut self, system: &str, messages: &[Message], on: &mut dyn FnMut(Delta) -> Flow) -> Result<(), ApiError> {
        let req = providers::build_request(&self.cfg, system, messages);
        // A reply asked for whole says nothing until it is done: a model that thinks long
        // takes minutes (OpenAI's SDK waits 10 by default).
        let idle_timeout =
            if self.cfg.no_stream { self.cfg.idle_timeout.max(WHOLE_REPLY_WAIT) } else { self.cfg.idle_timeout };
        let mut resp = curl::post(&curl::Request {
            url: &req.url,
            headers: &req.headers,
            body: &req.body,
            connect_timeout: self.cfg.connect_timeout,
            idle_timeout,
        })
        .map_err(|e| curl_error(e, &shown_url(&req.url)))?;
        if !(200..300).contains(&resp.status) {
            let body = resp.read_rest(64 * 1024);
            let now =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
            let retry_after = retry_after(|name| resp.header(name), now);
            let status = resp.status;
            resp.abort();
            let message = providers::error_message(&body);
            // An organisation OpenAI has not verified gets no reasoning summaries (which Cline
            // always asks for, and fails on): ask again, once, without.
            let wire = providers::Wire::of(&self.cfg);
            if wire == providers::Wire::Responses
                && !self.cfg.no_reasoning_summary
                && providers::responses::summary_refused(status, &message)
            {
                self.cfg.no_reasoning_summary = true;
                return self.send(system, messages, on);
            }
            // Nor does it stream gpt-5, o3 and others to such an organisation: ask again, for
            // this request and the rest, for whole replies.
            if matches!(wire, providers::Wire::Responses | providers::Wire::ChatCompletions)
                && !self.cfg.no_stream
                && providers::stream_refused(status, &message)
            {
                self.cfg.no_stream = true;
                return self.send(system, messages, on);
            }
            // A server or model without image input refuses every request that holds one:
            // ask again with each image named in text (Cline fails here, and on every later
            // request of the task).
            if !self.cfg.no_images
                && messages.iter().any(|m| m.images().next().is_some())
                && providers::images_refused(status, &message)
            {
                self.cfg.no_images = true;
                self.refused_images = Some(message);
                return self.send(system, messages, on);
            }
            let message = match status_hint(&self.cfg, &shown_url(&req.url), status) {
                Some(hint) => format!("{message} — {hint}"),
                None => message,
            };
            return Err(ApiError::from_status(status, message, retry_after));
        }
        let wire = providers::Wire::of(&self.cfg);
        // A gateway may answer a streamed request with one JSON body: its error, or the whole
        // reply (`stream` ignored). OpenAI's wires read it as the whole reply it is.
        // (Labelled JSON and starting with `{` or `[`: some servers label a true event stream
        // `application/json` — Foundry Local — so the body's first byte decides.)
        let json = resp
            .header("content-type")
            .is_some_and(|t| t.trim_start().to_ascii_lowercase().starts_with("application/json"));
        let mut sniff = !self.cfg.no_stream
            && json
            && matches!(wire, providers::Wire::Responses | providers::Wire::ChatCompletions);
        let mut decoder =
            if self.cfg.no_stream { providers::Decoder::whole(wire) } else { providers::Decoder::of(wire) };
        // The body's start, to name a reply that held nothing to decode; whether it held any.
        let (mut head, mut decoded) = (Vec::new(), false);
        let mut buf = vec![0u8; 16 * 1024];
        let mut drain_until = None;
        // Whether the consumer heard of the pause since its last delta.
        let mut told_quiet = true;
        loop {
            // After the reply is decided, a silent server must not hold the turn up.
            if drain_until.is_some_and(|t| !resp.wait_readable(t)) {
                resp.abort();
                return Ok(());
            }
            if !told_quiet && drain_until.is_none() && !resp.wait_readable(Instant::now() + QUIET_AFTER) {
                told_quiet = true;
                if on(Delta::Quiet).stops_now() {
                    resp.abort();
                    return Ok(());
                }
                continue;
            }
            let n = match resp.read_chunk(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) => {
                    resp.abort();
                    return Err(dropped(e.to_string()));
                }
            };
            head.extend_from_slice(&buf[..n.min(HEAD_BYTES.saturating_sub(head.len()))]);
            let mut bytes = &buf[..n];
            if sniff {
                let Some(at) = bytes.iter().position(|b| !b.is_ascii_whitespace()) else { continue };
                if matches!(bytes[at], b'{' | b'[') {
                    decoder = providers::Decoder::whole(wire);
                }
                (sniff, bytes) = (false, &bytes[at..]);
            }
            for d in decoder.push(bytes) {
                (told_quiet, decoded) = (false, true);
                if let Delta::Error(e) = d {
                    resp.abort();
                    return Err(e);
                }
                let flow = on(d);
                if flow.stops_now() {
                    resp.abort();
                    return Ok(());
                }
                if let Flow::Drain(t) = flow {
                    drain_until = Some(t);
                }
            }
        }
        let mut ended = Ok(());
        for d in decoder.finish() {
            decoded = true;
            if let Delta::Error(e) = d {
                ended = Err(e);
                break;
            }
            if on(d).stops_now() {
                break;
            }
        }
        // A body cut short says why through curl (a timeout, a reset): that, rather than what
        // the decoder makes of the part that came.
        resp.finish().map_err(|e| dropped(e.to_string()))?;
        if !decoded && !head.iter().all(u8::is_ascii_whitespace) {
            // Not the stream asked for (a proxy's error as JSON, a page): a failure named by its
            // words, tried again, as Cline's "Invalid API Response" is — not an empty reply.
            return Err(ApiError {
                status: None,
                message: format!("the server's reply held no model output: {}", providers::error_message(&head)),
                retryable: true,
                retry_after: None,
            });
        }
        ended
    }
}

/// How much of a reply's body is kept to name it when it held nothing to decode.
const HEAD_BYTES: usize = 4096;

/// A URL as messages show it: without the `user:password@` curl sends as Basic auth.
fn shown_url(url: &str) -> String {
    crate::run::ui::redact::without_credentials(url)
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
/// protocol), 3 (malformed URL), 7 (connection refused: nothing listens there), 60
/// (certificate not trusted). An unknown host (6) is retried, as Cline retries any failed
/// request: a resolver's hiccup must not end a long run.
fn curl_error(e: curl::CurlError, url: &str) -> ApiError {
    match e {
        curl::CurlError::Failed { code: 7, .. } => ApiError::fatal(format!(
            "nothing is listening at {url} (connection refused); start the server, or check --base-url"
        )),
        curl::CurlError::Failed { code, .. } => {
            ApiError { status: None, message: e.to_string(), retryable: !matches!(code, 1 | 3 | 60), retry_after: None }
        }
        other => ApiError::fatal(other.to_string()),
    }
}

/// What to tell a user about an HTTP error that is usually theirs to fix: a 404 names the URL
/// posted (and a base URL given with `/v1` to Anthropic, which adds its own); a 401 names the
/// variable the key came from, or says that no key was sent.
fn status_hint(cfg: &ApiConfig, url: &str, status: u16) -> Option<String> {
    let var = cfg.declared.key_var;
    match status {
        404 if cfg.provider() == providers::Provider::Anthropic && cfg.base_url.trim_end_matches('/').ends_with("/v1") => {
            Some(format!(
                "posted to {url}; agent-min adds /v1/messages to an Anthropic base URL itself, so drop /v1 from --base-url ({})",
                shown_url(cfg.base_url.trim_end_matches('/').trim_end_matches("/v1"))
            ))
        }
        404 => Some(format!("posted to {url}; check --base-url and --model")),
        401 => Some(match (var, &cfg.api_key) {
            (Some(var), Some(_)) => format!("the key sent was read from {var}; check that it is valid for this server"),
            (Some(var), None) => format!("no key was sent ({var} is not set)"),
            (None, _) => "no key was sent".to_string(),
        }),
        _ => None,
    }
}

/// The wait a refused request's headers ask for, in seconds, as Cline's `withRetry` reads it:
/// `retry-after`, else `x-ratelimit-reset`, else `ratelimit-reset` (the first one present);
/// delta seconds, or a Unix time when the number is past `now` (seconds since the epoch).
fn retry_after<'a>(header: impl Fn(&str) -> Option<&'a str>, now: f64) -> Option<f64> {
    let value = ["retry-after", "x-ratelimit-reset", "ratelimit-reset"]
        .iter()
        .find_map(|name| header(name).map(str::trim).filter(|v| !v.is_empty()))?;
    let n = value.parse::<f64>().ok().filter(|n| n.is_finite())?;
    Some(if n > now { n - now } else { n })
}

/// The delay before retry number `attempt` (1-based): the server's `retry-after` if it gave one
/// (capped at 60 s), else `base`·2^(attempt-1) — 2, 4, 8 s by default.
pub(crate) fn backoff(base: Duration, attempt: u32, retry_after: Option<f64>) -> Duration {
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
        let f = |code| curl_error(curl::CurlError::Failed { code, message: "x".into() }, "http://h/").retryable;
        assert!(f(28) && f(52) && f(56), "timeouts and drops are retried");
        assert!(f(6), "an unknown host is retried, as Cline retries a failed request");
        assert!(!f(1) && !f(3) && !f(7) && !f(60));
        let refused =
            curl_error(curl::CurlError::Failed { code: 7, message: "x".into() }, "http://127.0.0.1:9/v1/messages");
        assert_eq!(
            refused.message,
            "nothing is listening at http://127.0.0.1:9/v1/messages (connection refused); start the server, or check --base-url"
        );
    }

    /// A body cut short (here: fewer bytes than its `Content-Length`) is named by curl's
    /// failure — the connection dropped — not by what the decoder makes of the part that came
    /// (a Responses stream without its last event, a whole reply that is not JSON).
    #[test]
    fn a_body_cut_short_is_reported_as_the_dropped_connection() {
        use std::io::{Read, Write};
        for (model, whole) in [("gpt-5.5", false), ("gpt-5", true)] {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let addr = listener.local_addr().unwrap();
            let server = std::thread::spawn(move || {
                let (mut c, _) = listener.accept().unwrap();
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                // The request: its headers, then its body (whatever it holds).
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    let n = c.read(&mut buf).unwrap();
                    seen.extend_from_slice(&buf[..n]);
                }
                let part = "data: {\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"Hal\"}\n\n";
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {}\r\n\r\n",
                    part.len() + 500
                );
                c.write_all(head.as_bytes()).unwrap();
                c.write_all(part.as_bytes()).unwrap();
                // Closed here, 500 bytes short.
            });
            let mut cfg = ApiConfig {
                base_url: format!("http://{addr}/v1"),
                facts: crate::run::llm::models::lookup(providers::Provider::OpenAi, model).facts,
                openai_native: true,
                no_stream: whole,
                connect_timeout: 5,
                idle_timeout: 30,
                ..ApiConfig::test(providers::Provider::OpenAi, model)
            };
            cfg.tools = None;
            let mut http = Http::new(cfg);
            let e = http.send("SYS", &[Message::user("hi")], &mut |_| Flow::Continue).unwrap_err();
            server.join().unwrap();
            assert!(
                e.retryable && e.message.starts_with("the connection dropped mid-stream"),
                "{model}: {}",
                e.message
            );
        }
    }

    #[test]
    fn classification_of_statuses() {
        let body = |s: &str| crate::run::llm::providers::error_message(s.as_bytes());
        for s in [429, 500, 502, 503, 529, 408, 409] {
            assert!(ApiError::from_status(s, "x".into(), None).retryable, "{s}");
        }
        for s in [400, 401, 403, 404] {
            assert!(!ApiError::from_status(s, "x".into(), None).retryable, "{s}");
        }
        let quota = ApiError::from_status(429, "You exceeded your current quota (insufficient_quota)".into(), None);
        assert!(!quota.retryable);
        let inactive =
            "Your account is not active, please check your billing details on our website. (billing_not_active)";
        assert!(!ApiError::from_status(429, inactive.into(), None).retryable);
        // Groq's per-minute limit: it points at the billing page, and clears in seconds.
        let groq = body(
            r#"{"error":{"message":"Rate limit reached for model `llama-3.3-70b-versatile` in organization `org_1` service tier `on_demand` on tokens per minute (TPM): Limit 6000, Used 5034, Requested 1443. Please try again in 4.77s. Need more tokens? Upgrade to Dev Tier today at https://console.groq.com/settings/billing","type":"tokens","code":"rate_limit_exceeded"}}"#,
        );
        let limit = ApiError::from_status(429, groq, Some(4.77));
        assert!(limit.retryable, "{limit:?}");
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
        // Anthropic when the prompt fits but not with max_tokens beside it.
        let anthropic_max = body(
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 188059 + 64000 > 200000, decrease input length or `max_tokens` and try again"}}"#,
        );
        let openrouter =
            body(r#"{"error":{"code":400,"message":"Input tokens exceed the configured limit of 272000 tokens."}}"#);
        // Gemini's OpenAI-compatible endpoint: an array of one error.
        let gemini = body(
            r#"[{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]"#,
        );
        assert_eq!(gemini, "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).");
        // The other wordings of Cline's `context-error-handling.ts`: Vercel's, then Bedrock's.
        let others = [
            "The input token count exceeds the maximum number of tokens allowed (1048576).",
            "Input is too long for requested model.",
            "The requested input length 300000 exceeds the maximum input length 262144",
            "The total number of tokens in the request (210000) exceeds the limit of 200000",
            "You requested 250000 tokens, which exceeds the model's limit of 200000",
            "Please reduce the length of the messages or completion.",
        ];
        for m in
            [anthropic, anthropic_max, openai, llama, openrouter, gemini].into_iter().chain(others.map(String::from))
        {
            assert!(ApiError::from_status(400, m.clone(), None).is_context_overflow(), "{m}");
        }
        // Cline takes any Anthropic `invalid_request_error` for an overflow, and Bedrock's
        // refusal of too large a max_tokens too: cutting the history fixes neither.
        let empty_block = body(
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0.text: text content blocks must be non-empty"}}"#,
        );
        let bedrock_max = "The maximum tokens you requested exceeds the model limit of 4096";
        for m in [empty_block.as_str(), bedrock_max, "requested max_tokens exceeds the limit"] {
            assert!(!ApiError::from_status(400, m.into(), None).is_context_overflow(), "{m}");
        }
        assert!(!ApiError::from_status(400, "invalid x-api-key".into(), None).is_context_overflow());
        // A limit on max_tokens, and a rate limit that mentions a context, are not.
        let max = "max_tokens exceed the model's output limit of 8192";
        assert!(!ApiError::from_status(400, max.into(), None).is_context_overflow());
        let busy = "too many tokens per minute in this context window; slow down";
        assert!(!ApiError::from_status(429, busy.into(), None).is_context_overflow());
        assert!(ApiError::from_status(400, busy.into(), None).is_context_overflow());
    }

    /// Cline's `withRetry` reads three headers, and a number past now as a Unix time.
    #[test]
    fn the_wait_a_refusal_asks_for_is_read_from_three_headers_as_cline_reads_it() {
        let now = 1_800_000_000.0;
        let wait = |headers: &[(&str, &str)]| {
            retry_after(|name| headers.iter().find(|(n, _)| *n == name).map(|(_, v)| *v), now)
        };
        assert_eq!(wait(&[("retry-after", "3")]), Some(3.0));
        assert_eq!(wait(&[("x-ratelimit-reset", "5")]), Some(5.0));
        assert_eq!(wait(&[("ratelimit-reset", "1800000020")]), Some(20.0), "a Unix time");
        assert_eq!(wait(&[("ratelimit-reset", "9"), ("retry-after", "2")]), Some(2.0), "retry-after first");
        assert_eq!(wait(&[("retry-after", ""), ("x-ratelimit-reset", "4")]), Some(4.0));
        assert_eq!(wait(&[("retry-after", "Wed, 21 Oct 2026 07:28:00 GMT")]), None, "then the backoff");
        assert_eq!(wait(&[]), None);
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
