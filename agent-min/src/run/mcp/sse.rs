//! The older HTTP+SSE transport (MCP 2024-11-05), which Cline uses for a server with a `url`
//! and `"type": "sse"`, or a `url` and no type at all. Through curl: one long GET of the
//! server's URL carries an event stream; its first `endpoint` event names the URL that every
//! message is then POSTed to (answered `202 Accepted`); the server's messages, answers
//! included, arrive as the stream's `message` events.
//!
//! The GET is started by a reader thread (so a server that never answers is bounded by the
//! requests' deadlines, as with stdio), which decodes the stream and hands each message over a
//! bounded channel. As the official SDK's client does, an endpoint on another origin than the
//! stream's is refused: the config's headers (often a token) go only where the user sent them;
//! a later `endpoint` event replaces the first, as the TypeScript SDK's client takes it.
//! Headers and the URL go through curl's config pipe, never argv. The stream is not stopped when a turn is
//! cancelled; dropping the transport kills its curl, headers received or not.
//!
//! A stream that ended (the server restarted, a proxy cut it) is found before the next message
//! is sent, and a `404` for a message (the server forgot the session): both are a closed
//! connection, which the hub answers by starting the server's connection again, once.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TryRecvError};
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use super::http::MAX_BODY;
use super::jsonrpc::McpError;
use super::newest::Newest;
use super::Transport;
use crate::run::llm::curl;
use crate::run::llm::sse::SseDecoder;

/// Messages read ahead of the client, at most (the reader then waits: memory stays bounded).
/// They travel as text, each at most [`MAX_BODY`], and are parsed one at a time by the client:
/// a message's parsed form can be many times its text (`[0,0,…]`).
const QUEUE: usize = 8;

/// Most reports [`SseTransport::catch_up`] takes in one go: a server that keeps sending cannot
/// hold a send up (the rest wait in the channel).
const CATCH_UP: usize = 4 * QUEUE;

/// What the reader thread reports.
enum Read {
    /// The stream's `endpoint` event: where to POST (as the server wrote it).
    Endpoint(String),
    /// A message from the server, as its text (parsed by the client, one at a time).
    Message(String),
    /// The stream ended or could not start: why.
    End(String),
}

/// A server speaking the HTTP+SSE transport.
pub(crate) struct SseTransport {
    url: String,
    headers: Vec<(String, String)>,
    endpoint: Option<String>,
    from_reader: Receiver<Read>,
    /// Messages that arrived while no request was waiting (before the endpoint was known, or
    /// between requests): the newest [`QUEUE`] of them, at most [`MAX_BODY`] bytes together.
    early: Newest<String>,
    /// Why the stream ended, once it has.
    ended: Option<String>,
    /// Kills the stream's curl (see [`curl::Killer`]).
    curl: Arc<curl::Killer>,
}

impl SseTransport {
    /// Starts reading the event stream of `url`, with the config's extra `headers`.
    pub(crate) fn open(url: &str, headers: &[(String, String)]) -> Self {
        let (to_client, from_reader) = mpsc::sync_channel(QUEUE);
        let curl = Arc::new(curl::Killer::default());
        let (u, h, c) = (url.to_string(), headers.to_vec(), curl.clone());
        std::thread::spawn(move || read_stream(&u, &h, &c, &to_client));
        SseTransport {
            url: url.to_string(),
            headers: headers.to_vec(),
            endpoint: None,
            from_reader,
            early: Newest::new(QUEUE),
            ended: None,
            curl,
        }
    }

    /// What the reader has reported so far, without waiting: messages are kept for `recv`, a
    /// new endpoint replaces the old; `Err` when the stream has ended.
    fn catch_up(&mut self) -> Result<(), McpError> {
        for _ in 0..CATCH_UP {
            match self.from_reader.try_recv() {
                Ok(Read::Message(m)) => {
                    let bytes = m.len();
                    self.early.push(m, bytes)
                }
                Ok(Read::Endpoint(e)) => self.endpoint = Some(resolve(&self.url, &e)?),
                Ok(Read::End(why)) => self.ended = Some(why),
                Err(TryRecvError::Empty) => return Ok(()),
                Err(TryRecvError::Disconnected) => {
                    self.ended.get_or_insert_with(|| "the event stream ended".to_string());
                }
            }
            if let Some(why) = &self.ended {
                // Before anything was sent: nothing of the request reached the server.
                return Err(McpError::Expired(why.clone()));
            }
        }
        Ok(())
    }

    /// The next report of the reader, by `deadline`; `Err` when the stream has ended.
    fn next(&mut self, deadline: Instant) -> Result<Read, McpError> {
        if let Some(why) = &self.ended {
            return Err(McpError::Closed(why.clone()));
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.from_reader.recv_timeout(wait) {
            Ok(Read::End(why)) => {
                self.ended = Some(why.clone());
                Err(McpError::Closed(why))
            }
            Ok(read) => Ok(read),
            Err(RecvTimeoutError::Timeout) => Err(McpError::Timeout),
            Err(RecvTimeoutError::Disconnected) => {
                let why = "the event stream ended".to_string();
                self.ended = Some(why.clone());
                Err(McpError::Closed(why))
            }
        }
    }

    /// The URL to POST to, waiting for the stream's `endpoint` event until `deadline`.
    fn endpoint(&mut self, deadline: Instant) -> Result<String, McpError> {
        while self.endpoint.is_none() {
            match self.next(deadline) {
                Ok(Read::Endpoint(e)) => self.endpoint = Some(resolve(&self.url, &e)?),
                Ok(Read::Message(m)) => {
                    let bytes = m.len();
                    self.early.push(m, bytes)
                }
                Ok(Read::End(_)) => unreachable!("next() turns the end into an error"),
                Err(McpError::Closed(why)) => {
                    return Err(McpError::Transport(format!("SSE error: {why} (connecting to {})", named(&self.url))))
                }
                Err(e) => return Err(e),
            }
        }
        Ok(self.endpoint.clone().unwrap_or_default())
    }
}

/// The reader thread: GETs `url` and reports the endpoint, each message, then the end.
fn read_stream(url: &str, headers: &[(String, String)], killer: &curl::Killer, to_client: &SyncSender<Read>) {
    let why = stream(url, headers, killer, to_client);
    let _ = to_client.send(Read::End(why));
}

fn stream(url: &str, extra: &[(String, String)], killer: &curl::Killer, to_client: &SyncSender<Read>) -> String {
    let mut headers = vec![
        ("Accept".to_string(), "text/event-stream".to_string()),
        ("Cache-Control".to_string(), "no-cache".to_string()),
    ];
    headers.extend(extra.iter().cloned());
    // The stream may rightly be quiet for as long as no request is pending: curl's idle limit
    // is a week; each request's own deadline bounds the waits.
    let req = curl::Request { url, headers: &headers, body: b"", connect_timeout: 30, idle_timeout: 7 * 86_400 };
    let mut resp = match curl::get_stream(&req, killer) {
        Ok(r) => r,
        Err(e) => return format!("the event stream of {} could not be opened: {e}", named(url)),
    };
    let why = read_events(url, &mut resp, to_client);
    killer.reaped();
    resp.abort();
    why
}

/// Reads the stream's events until it ends or the client is gone: why it ended.
fn read_events(url: &str, resp: &mut curl::Response, to_client: &SyncSender<Read>) -> String {
    if !(200..300).contains(&resp.status) {
        let body = String::from_utf8_lossy(&resp.read_rest(4096)).trim().to_string();
        return format!("Non-200 status code ({}) from {}: {body}", resp.status, named(url));
    }
    if !resp.header("content-type").is_some_and(|c| c.starts_with("text/event-stream")) {
        return format!(
            "{} answered with no event stream (content type {:?})",
            named(url),
            resp.header("content-type")
        );
    }
    let mut decoder = SseDecoder::new();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match resp.read_chunk(&mut buf) {
            Ok(0) => return "the server closed the event stream".to_string(),
            Ok(n) => n,
            Err(e) => return format!("reading the event stream of {}: {e}", named(url)),
        };
        for ev in decoder.push(&buf[..n]) {
            let read = match ev.event.as_deref() {
                Some("endpoint") => Read::Endpoint(ev.data.trim().to_string()),
                None | Some("message") => Read::Message(ev.data),
                Some(_) => continue,
            };
            if to_client.send(read).is_err() {
                return "the client is gone".to_string();
            }
        }
        if decoder.overflowed() {
            return format!("an event of {}'s stream is larger than {} MiB", named(url), MAX_BODY >> 20);
        }
    }
}

/// The endpoint `e` (absolute, or relative to the stream's `url`) as a URL on the stream's
/// origin; another origin is refused, as the official SDK's client refuses it.
fn resolve(url: &str, e: &str) -> Result<String, McpError> {
    let base = origin(url);
    let full = if e.starts_with("http://") || e.starts_with("https://") {
        e.to_string()
    } else if e.starts_with("//") {
        format!("{}:{e}", url.split(':').next().unwrap_or("http"))
    } else if e.starts_with('/') {
        format!("{base}{e}")
    } else {
        // Relative to the stream URL's directory (its query and fragment left out).
        let path = url.split(['?', '#']).next().unwrap_or(url);
        let dir = if path.len() > base.len() { &path[..path.rfind('/').unwrap_or(path.len()) + 1] } else { path };
        let dir = if dir.ends_with('/') { dir.to_string() } else { format!("{dir}/") };
        format!("{dir}{e}")
    };
    if origin(&full) != base || full.contains(char::is_whitespace) {
        return Err(McpError::Transport(format!(
            "the server's endpoint {e:?} is not on the origin of the server's URL ({}); refused (its headers would go elsewhere)",
            named(url)
        )));
    }
    Ok(full)
}

/// How a server's URL is named in errors, which reach the model, events and saved tasks: its
/// origin without `user:password@` — its path, query and user part may hold a token
/// (`/api/mcp/s/<secret>/mcp`, `?api_key=…`) that no redaction knows of.
pub(super) fn named(url: &str) -> String {
    let o = origin(url);
    match (o.split_once("://"), o.rfind('@')) {
        (Some((scheme, _)), Some(at)) => format!("{scheme}://{}", &o[at + 1..]),
        _ => o,
    }
}

/// `scheme://host[:port]` of a URL (with any `user:password@`), lower-cased.
fn origin(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    format!("{}://{}", scheme.to_ascii_lowercase(), host.to_ascii_lowercase())
}

impl Transport for SseTransport {
    fn send(&mut self, msg: &Value, deadline: Instant) -> Result<(), McpError> {
        // A stream that ended since the last message: the session is gone with it.
        self.catch_up()?;
        let endpoint = self.endpoint(deadline)?;
        let mut headers = vec![("Content-Type".to_string(), "application/json".to_string())];
        headers.extend(self.headers.iter().cloned());
        let body = msg.to_string();
        let secs = deadline.saturating_duration_since(Instant::now()).as_secs_f64().ceil().max(1.0) as u32;
        let req = curl::Request {
            url: &endpoint,
            headers: &headers,
            body: body.as_bytes(),
            connect_timeout: secs.min(30),
            idle_timeout: secs,
        };
        let post = if msg.get("id").is_some() { curl::post } else { curl::post_beyond_turn };
        let mut resp = post(&req).map_err(|e| match e {
            curl::CurlError::Failed { code: 28, .. } => McpError::Timeout,
            e => McpError::Transport(format!("HTTP request to {} failed: {e}", named(&endpoint))),
        })?;
        let status = resp.status;
        let body = if (200..300).contains(&status) { Vec::new() } else { resp.read_rest(4096) };
        resp.abort();
        if !(200..300).contains(&status) {
            let text = String::from_utf8_lossy(&body).trim().to_string();
            if status == 404 {
                return Err(McpError::Expired(format!("the server does not know the session (HTTP 404: {text})")));
            }
            return Err(McpError::Transport(format!("Error POSTing to endpoint (HTTP {status}): {text}")));
        }
        Ok(())
    }

    fn recv(&mut self, deadline: Instant) -> Result<Value, McpError> {
        loop {
            let text = match self.early.pop() {
                Some(m) => m,
                None => match self.next(deadline)? {
                    Read::Message(m) => m,
                    Read::Endpoint(e) => {
                        self.endpoint = Some(resolve(&self.url, &e)?);
                        continue;
                    }
                    Read::End(_) => continue,
                },
            };
            // Not a JSON-RPC message: ignored, as the SDK logs and drops it.
            if let Ok(v) = serde_json::from_str::<Value>(&text) {
                return Ok(v);
            }
            if Instant::now() >= deadline {
                return Err(McpError::Timeout);
            }
        }
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.curl.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read as _, Write as _};
    use std::time::Duration;

    #[test]
    fn messages_sent_while_no_request_waits_are_kept_within_bounds() {
        // A server that sends messages without end and never names its endpoint: the start
        // waits for the endpoint until its deadline, and every message it read kept in memory
        // then (there were 400 here, and a fast server sends gigabytes in the 10 s).
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let _ = s.read(&mut [0u8; 4096]);
            let mut out = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n".to_vec();
            for i in 0..400 {
                let m =
                    format!("{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"n\":{i}}}}}");
                out.extend_from_slice(format!("event: message\ndata: {m}\n\n").as_bytes());
            }
            s.write_all(&out).unwrap();
            std::thread::sleep(Duration::from_secs(3));
        });
        let mut t = SseTransport::open(&format!("http://127.0.0.1:{port}/sse"), &[]);
        let e = t.endpoint(Instant::now() + Duration::from_secs(2)).unwrap_err();
        assert!(matches!(e, McpError::Timeout), "{e}");
        assert!(t.early.len() <= QUEUE, "{} messages kept", t.early.len());
        // The newest are the ones kept, and read as messages.
        let last = t.early.newest().cloned().unwrap_or_default();
        assert!(last.contains("\"n\":399"), "{last}");
        let m = t.recv(Instant::now() + Duration::from_secs(1)).unwrap();
        assert_eq!(m["params"]["n"], 400 - QUEUE as u64);
        drop(t);
        server.join().unwrap();
    }

    /// Errors name a server by its origin alone, a token in its user part left out too.
    #[test]
    fn a_server_is_named_by_its_origin_without_its_user_part() {
        assert_eq!(named("https://u:Tok@H.example:8443/mcp?k=1"), "https://h.example:8443");
        assert_eq!(named("http://127.0.0.1:1/api/mcp/s/SEKRET/sse"), "http://127.0.0.1:1");
    }

    #[test]
    fn endpoints_resolve_against_the_stream_url_and_stay_on_its_origin() {
        let u = "http://127.0.0.1:8000/sse?x=1";
        let ok = |e: &str| resolve(u, e).unwrap();
        assert_eq!(ok("/messages/?session_id=ab"), "http://127.0.0.1:8000/messages/?session_id=ab");
        assert_eq!(ok("messages?s=1"), "http://127.0.0.1:8000/messages?s=1");
        assert_eq!(resolve("https://h.example/a/b/sse", "post").unwrap(), "https://h.example/a/b/post");
        assert_eq!(resolve("https://h.example", "post").unwrap(), "https://h.example/post");
        assert_eq!(ok("http://127.0.0.1:8000/m"), "http://127.0.0.1:8000/m");
        assert_eq!(resolve("https://H.example/sse", "//h.example/m").unwrap(), "https://h.example/m");
        for bad in ["http://evil.example/m", "http://127.0.0.1:8001/m", "https://127.0.0.1:8000/m", "//evil/m", "/a b"]
        {
            assert!(resolve(u, bad).is_err(), "{bad}");
        }
    }
}
