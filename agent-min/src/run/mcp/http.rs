//! The streamable HTTP transport, through curl (the agent's only HTTP path): every message is
//! one POST to the server's URL with `Accept: application/json, text/event-stream`; the answer
//! is a JSON body, or an SSE stream whose `data:` events are messages, read until the answer to
//! our request arrives. The `Mcp-Session-Id` the server gives at `initialize` is sent with every
//! later request, with the negotiated `MCP-Protocol-Version`.
//!
//! Headers from the config (e.g. `Authorization`) go through curl's config pipe, never argv (the URL too).
//! Each POST is bounded by the request's deadline (curl gives up after that long without data),
//! and a body over [`MAX_BODY`] is refused.

use std::time::Instant;

use serde_json::Value;

use super::jsonrpc::McpError;
use super::newest::Newest;
use super::Transport;
use crate::run::llm::curl;
use crate::run::llm::sse::SseDecoder;

/// Largest response body read.
pub(crate) const MAX_BODY: usize = 16 << 20;

/// Most messages kept for the client (the newest: the answer a POST waited for is its last).
const MAX_QUEUED: usize = 64;

/// Most redirects followed for one message (`fetch` follows 20; a loop ends sooner here).
const MAX_REDIRECTS: u32 = 5;

/// `url`'s scheme and authority, lowercased: `http://host:port`.
fn origin(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    format!("{scheme}://{authority}").to_ascii_lowercase()
}

/// A `Location` header's URL, absolute or relative to `base`.
fn resolve(base: &str, location: &str) -> String {
    let location = location.trim();
    if location.contains("://") {
        return location.to_string();
    }
    let (scheme, rest) = base.split_once("://").unwrap_or(("http", base));
    let path_at = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..path_at];
    if let Some(from_root) = location.strip_prefix('/') {
        return match from_root.strip_prefix('/') {
            Some(network) => format!("{scheme}://{network}"), // `//host/path`
            None => format!("{scheme}://{authority}/{from_root}"),
        };
    }
    let path = &rest[path_at..];
    let path = &path[..path.find(['?', '#']).unwrap_or(path.len())];
    let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    let dir = if dir.is_empty() { "/" } else { dir };
    format!("{scheme}://{authority}{dir}{location}")
}

/// A streamable HTTP server.
pub(crate) struct HttpTransport {
    url: String,
    headers: Vec<(String, String)>,
    session: Option<String>,
    protocol: Option<String>,
    /// Messages the replies brought, each with the length of its text: the newest
    /// [`MAX_QUEUED`], at most [`MAX_BODY`] bytes together (a server's requests are answered
    /// by POSTs whose replies may bring more requests: kept without bound, they filled the
    /// memory for as long as a request waited).
    queue: Newest<Value>,
}

impl HttpTransport {
    /// A transport for `url` with the config's extra `headers`.
    pub(crate) fn new(url: &str, headers: &[(String, String)]) -> Self {
        HttpTransport {
            url: url.to_string(),
            headers: headers.to_vec(),
            session: None,
            protocol: None,
            queue: Newest::new(MAX_QUEUED),
        }
    }

    fn post(&mut self, msg: &Value, deadline: Instant) -> Result<(), McpError> {
        self.post_redirected(msg, deadline, 0)
    }

    /// [`HttpTransport::post`] after `redirects` redirects were followed.
    fn post_redirected(&mut self, msg: &Value, deadline: Instant, redirects: u32) -> Result<(), McpError> {
        let mut headers = vec![
            ("Content-Type".to_string(), "application/json".to_string()),
            ("Accept".to_string(), "application/json, text/event-stream".to_string()),
        ];
        if let Some(s) = &self.session {
            headers.push(("Mcp-Session-Id".to_string(), s.clone()));
        }
        if let Some(p) = &self.protocol {
            headers.push(("MCP-Protocol-Version".to_string(), p.clone()));
        }
        headers.extend(self.headers.iter().cloned());
        let body = msg.to_string();
        let secs = deadline.saturating_duration_since(Instant::now()).as_secs_f64().ceil().max(1.0) as u32;
        let req = curl::Request {
            url: &self.url,
            headers: &headers,
            body: body.as_bytes(),
            connect_timeout: secs.min(30),
            idle_timeout: secs,
        };
        // A notification is no part of the turn: the cancel of a cancelled turn must still go.
        let post = if msg.get("id").is_some() { curl::post } else { curl::post_beyond_turn };
        let mut resp = post(&req).map_err(|e| match e {
            // curl's "operation timed out": nothing came back before the deadline.
            curl::CurlError::Failed { code: 28, .. } => McpError::Timeout,
            e => McpError::Transport(format!("HTTP request to {} failed: {e}", super::sse::named(&self.url))),
        })?;
        if matches!(resp.status, 307 | 308) && redirects < MAX_REDIRECTS {
            // As `fetch` follows (the Python SDK's server sends `/mcp/` to `/mcp`): the same
            // POST, at the same origin only — the config's headers are not sent elsewhere.
            let (led, status) = (resp.header("location").map(|l| resolve(&self.url, l)), resp.status);
            resp.abort();
            return match led {
                Some(url) if origin(&url) == origin(&self.url) => {
                    self.url = url;
                    self.post_redirected(msg, deadline, redirects + 1)
                }
                Some(url) => Err(McpError::Transport(format!(
                    "{} redirects to another origin, {}, which is not followed (the settings' headers would go there); put that URL in the settings if it is the server's",
                    super::sse::named(&self.url),
                    super::sse::named(&url)
                ))),
                None => Err(McpError::Transport(format!(
                    "{} answered HTTP {status} without a Location",
                    super::sse::named(&self.url)
                ))),
            };
        }
        if let Some(s) = resp.header("mcp-session-id") {
            self.session = Some(s.to_string());
        }
        if resp.status == 404 && self.session.is_some() {
            resp.abort();
            return Err(McpError::Expired("the server ended the session (HTTP 404)".into()));
        }
        if resp.status == 202 || resp.status == 204 {
            resp.abort();
            return Ok(());
        }
        if !(200..300).contains(&resp.status) {
            let body = String::from_utf8_lossy(&resp.read_rest(4096)).trim().to_string();
            resp.abort();
            // The MCP SDK's `StreamableHTTPError` (its SSE transport's text names the status).
            return Err(McpError::Transport(format!("Streamable HTTP error: Error POSTing to endpoint: {body}")));
        }
        // curl's idle limit does not cover a server that sends nothing before its answer: a
        // watchdog kills curl at the deadline (cancelled before curl is reaped, so the pid is
        // still curl's).
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        let pid = resp.pid() as i32;
        let wait = deadline.saturating_duration_since(Instant::now());
        let watchdog = std::thread::spawn(move || {
            let fired = matches!(stopped.recv_timeout(wait), Err(std::sync::mpsc::RecvTimeoutError::Timeout));
            if fired {
                crate::run::ui::interrupt::send_signal(pid, libc::SIGKILL);
            }
            fired
        });
        let result = self.read_reply(&mut resp, msg);
        let _ = stop.send(());
        let fired = watchdog.join().unwrap_or(false);
        resp.abort();
        if fired {
            return Err(McpError::Timeout);
        }
        result
    }

    /// Reads the answer to `msg` (JSON, or SSE until the answer's event), queueing every message.
    fn read_reply(&mut self, resp: &mut curl::Response, msg: &Value) -> Result<(), McpError> {
        let sse = resp.header("content-type").is_some_and(|c| c.starts_with("text/event-stream"));
        let want = msg.get("id").and_then(Value::as_u64);
        let mut total = 0usize;
        let mut buf = vec![0u8; 16 * 1024];
        let mut plain = Vec::new();
        let mut decoder = SseDecoder::new();
        loop {
            let n = resp
                .read_chunk(&mut buf)
                .map_err(|e| McpError::Transport(format!("reading from {}: {e}", super::sse::named(&self.url))))?;
            if n == 0 {
                break;
            }
            total += n;
            if total > MAX_BODY {
                return Err(McpError::Transport(format!(
                    "the response from {} is larger than 16 MiB",
                    super::sse::named(&self.url)
                )));
            }
            if !sse {
                plain.extend_from_slice(&buf[..n]);
                continue;
            }
            let mut answered = false;
            for ev in decoder.push(&buf[..n]) {
                if ev.data.trim().is_empty() {
                    continue;
                }
                if let Ok(v) = serde_json::from_str::<Value>(&ev.data) {
                    answered |=
                        want.is_some() && v.get("id").and_then(Value::as_u64) == want && v.get("method").is_none();
                    self.queue.push(v, ev.data.len());
                }
            }
            if answered {
                return Ok(()); // the stream may stay open for more; we have what we asked for
            }
        }
        if !sse && !plain.is_empty() {
            match serde_json::from_slice::<Value>(&plain) {
                Ok(Value::Array(items)) => {
                    let each = plain.len() / items.len().max(1);
                    items.into_iter().for_each(|v| self.queue.push(v, each));
                }
                Ok(v) => self.queue.push(v, plain.len()),
                Err(e) => {
                    return Err(McpError::Transport(format!(
                        "the server at {} sent invalid JSON: {e}",
                        super::sse::named(&self.url)
                    )))
                }
            }
        }
        Ok(())
    }
}

impl Transport for HttpTransport {
    fn send(&mut self, msg: &Value, deadline: Instant) -> Result<(), McpError> {
        self.post(msg, deadline)
    }

    fn recv(&mut self, _deadline: Instant) -> Result<Value, McpError> {
        // Everything a POST brought back was queued by `send`; an empty queue means the
        // answer never came on that stream.
        self.queue.pop().ok_or(McpError::Transport("the server ended its reply without answering".into()))
    }

    fn negotiated(&mut self, protocol: &str) {
        self.protocol = Some(protocol.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead as _, BufReader, Read as _, Write as _};
    use std::time::Duration;

    #[test]
    fn a_location_is_resolved_against_the_url_and_its_origin_compared() {
        let base = "http://127.0.0.1:8000/api/mcp/?x=1";
        assert_eq!(resolve(base, "http://127.0.0.1:8000/api/mcp"), "http://127.0.0.1:8000/api/mcp");
        assert_eq!(resolve(base, "/mcp"), "http://127.0.0.1:8000/mcp");
        assert_eq!(resolve(base, "next"), "http://127.0.0.1:8000/api/mcp/next");
        assert_eq!(resolve("http://h", "mcp"), "http://h/mcp");
        assert_eq!(resolve(base, "//evil.example/mcp"), "http://evil.example/mcp");
        assert_eq!(origin("HTTP://Host:80/a?b"), "http://host:80");
        assert_ne!(origin(&resolve(base, "//evil.example/mcp")), origin(base));
        assert_ne!(origin("https://127.0.0.1:8000/mcp"), origin(base));
    }

    /// Reads one request (its head, and its body by `Content-Length`) from a test server's
    /// connection.
    fn read_request(s: &mut BufReader<std::net::TcpStream>) {
        let mut length = 0;
        loop {
            let mut line = String::new();
            s.read_line(&mut line).unwrap();
            if let Some((k, v)) = line.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap();
                }
            }
            if line.trim().is_empty() {
                break;
            }
        }
        s.read_exact(&mut vec![0; length]).unwrap();
    }

    #[test]
    fn messages_the_replies_bring_are_kept_within_bounds() {
        // A server answering every POST, our answers to its requests too, with 200 more
        // requests: each answer brought more to keep than it took, without end.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let events: String = (0..200)
                .map(|i| {
                    format!("event: message\ndata: {{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}}\n\n", i + 1000)
                })
                .collect();
            for conn in listener.incoming().take(6) {
                let mut s = BufReader::new(conn.unwrap());
                read_request(&mut s);
                let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
                let _ = s.get_mut().write_all(format!("{head}{events}").as_bytes());
            }
        });
        let mut t = HttpTransport::new(&format!("http://127.0.0.1:{port}/mcp"), &[]);
        let deadline = Instant::now() + Duration::from_secs(20);
        t.send(&super::super::jsonrpc::request(1, "initialize", serde_json::json!({})), deadline).unwrap();
        for _ in 0..5 {
            let m = t.recv(deadline).unwrap();
            assert_eq!(m["method"], "ping");
            t.send(&super::super::jsonrpc::answer(&m["id"], "ping"), deadline).unwrap();
        }
        assert!(t.queue.len() <= MAX_QUEUED, "{} messages kept", t.queue.len());
        // The newest are kept, their bytes counted.
        assert_eq!(t.queue.newest().unwrap()["id"], 1199);
        server.join().unwrap();
    }

    #[test]
    fn a_refused_post_is_worded_as_the_mcp_sdks_streamable_http_error() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let mut s = BufReader::new(listener.incoming().next().unwrap().unwrap());
            read_request(&mut s);
            let answer = "HTTP/1.1 401 Unauthorized\r\nContent-Length: 12\r\nConnection: close\r\n\r\nUnauthorized";
            let _ = s.get_mut().write_all(answer.as_bytes());
        });
        let mut t = HttpTransport::new(&format!("http://127.0.0.1:{port}/mcp"), &[]);
        let deadline = Instant::now() + Duration::from_secs(20);
        let e = t.send(&super::super::jsonrpc::request(1, "initialize", serde_json::json!({})), deadline).unwrap_err();
        assert_eq!(e.to_string(), "Streamable HTTP error: Error POSTing to endpoint: Unauthorized");
        server.join().unwrap();
    }
}
