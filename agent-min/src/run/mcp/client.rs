//! One MCP session over a [`Transport`]: the `initialize` handshake, requests with a deadline
//! (a timed-out request is cancelled with `notifications/cancelled`, and its late answer is
//! ignored), the paginated lists, `tools/call` and `resources/read`.
//!
//! While waiting for an answer, the server's own requests are answered (`ping`; anything else
//! is "method not found", since we declare no client capabilities, like Cline) and
//! `notifications/tools/list_changed` is remembered so the hub can fetch the new list.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::jsonrpc::{self, Incoming, McpError};
use super::Transport;
use crate::run::ui::interrupt;

/// How often a request looks for the editor's cancel and the time limit.
const CANCEL_CHECK: Duration = Duration::from_millis(50);

/// The protocol version we ask for.
pub(crate) const PROTOCOL_VERSION: &str = "2025-06-18";

/// Versions a server may answer with: those of the MCP SDK Cline uses (1.26, whose
/// `SUPPORTED_PROTOCOL_VERSIONS` adds 2025-11-25 and 2024-10-07); what agent-min uses of the
/// protocol (the handshake, lists, calls, resources, prompts, `list_changed`) is the same in
/// each.
const SUPPORTED: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"];

/// The reason a timed-out request's `notifications/cancelled` gives (the SDK's words).
const TIMED_OUT: &str = "McpError: MCP error -32001: Request timed out";

/// Pages followed per list (each page is one request); bounds a server that never stops.
const MAX_PAGES: usize = 100;

/// Items kept per list.
const MAX_ITEMS: usize = 10_000;

/// What names a listed item among its list: a resource's `uri`, a template's `uriTemplate`, a
/// tool's or prompt's `name` (an item with none of them is its whole text).
fn identity(item: &Value) -> String {
    ["uri", "uriTemplate", "name"]
        .iter()
        .find_map(|k| item.get(*k).and_then(Value::as_str))
        .map_or_else(|| item.to_string(), |id| id.to_string())
}

/// Most messages read from a server between requests, before each request.
const MAX_IDLE: usize = 64;

/// A server's log messages kept between two looks (a server logging in a loop is not kept
/// whole: the rest are counted).
const MAX_NOTES: usize = 20;

/// How long an answer to a server's request made between ours may take to send.
const IDLE_ANSWER: Duration = Duration::from_secs(2);

/// A connected session.
pub(crate) struct Client {
    transport: Box<dyn Transport>,
    next_id: u64,
    /// A `notifications/tools/list_changed` arrived since the last look.
    pub tools_changed: bool,
    /// The server's log messages (`notifications/message`) not yet shown: `(level, text)`, the
    /// first [`MAX_NOTES`] since the last look.
    pub notes: Vec<(String, String)>,
    /// Those past [`MAX_NOTES`] since the last look, counted.
    pub notes_dropped: usize,
    /// The handshake is done: before it, a request given up is not cancelled ("The
    /// `initialize` request MUST NOT be cancelled by clients").
    initialized: bool,
}

/// Why a request ends before its answer: the editor cancelled the turn, or the `--timeout`
/// watchdog stopped its work (in an editor the server itself lives on, for the next prompt).
fn turn_stopped() -> Option<&'static str> {
    if interrupt::turn_cancelled() {
        Some("the turn was cancelled (session/cancel)")
    } else if interrupt::work_stopped() {
        Some("the time limit was reached (--timeout)")
    } else {
        None
    }
}

impl Client {
    /// Performs the handshake: `initialize`, then `notifications/initialized`.
    pub(crate) fn connect(transport: Box<dyn Transport>, timeout: Duration) -> Result<Client, McpError> {
        let mut c = Client {
            transport,
            next_id: 0,
            tools_changed: false,
            notes: Vec::new(),
            notes_dropped: 0,
            initialized: false,
        };
        let params = json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "agent-min", "version": env!("CARGO_PKG_VERSION")},
        });
        let init = c.request("initialize", params, timeout)?;
        let version = init.get("protocolVersion").and_then(Value::as_str).unwrap_or("");
        if !SUPPORTED.contains(&version) {
            return Err(McpError::Transport(format!(
                "the server speaks MCP protocol version {version:?}, which agent-min does not support (it speaks {})",
                SUPPORTED.join(", ")
            )));
        }
        c.transport.negotiated(version);
        c.transport.send(&jsonrpc::notification("notifications/initialized", None), Instant::now() + timeout)?;
        c.initialized = true;
        Ok(c)
    }

    /// Sends `method` and waits up to `timeout` for its answer. The wait also ends when the
    /// editor cancels the turn (`session/cancel`) or the `--timeout` watchdog stops its work,
    /// the server told so as at a timeout. (A request over streamable HTTP is curl's, which
    /// both kill.)
    pub(crate) fn request(&mut self, method: &str, params: Value, timeout: Duration) -> Result<Value, McpError> {
        self.next_id += 1;
        let id = self.next_id;
        let deadline =
            Instant::now().checked_add(timeout).unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400));
        // Over streamable HTTP the whole wait is the send (curl's POST, ended at the deadline
        // or killed by a stopped turn): the server is told so then too — a dropped connection
        // is no cancel to it, and its tool would run on.
        match self.transport.send(&jsonrpc::request(id, method, params), deadline) {
            Ok(()) => {}
            Err(McpError::Timeout) => {
                self.given_up(id, TIMED_OUT);
                return Err(McpError::Timeout);
            }
            Err(e) => return Err(turn_stopped().map_or(e, |why| self.given_up(id, why))),
        }
        loop {
            // Waits in slices, to see the editor's cancel and the time limit.
            let until = deadline.min(Instant::now() + CANCEL_CHECK);
            let msg = match self.transport.recv(until) {
                Ok(m) => m,
                Err(McpError::Timeout) if until < deadline => match turn_stopped() {
                    None => continue,
                    Some(why) => return Err(self.given_up(id, why)),
                },
                Err(McpError::Timeout) => {
                    self.given_up(id, TIMED_OUT);
                    return Err(McpError::Timeout);
                }
                // The answer, most likely, dropped for its size: the request is given up, and
                // the server told (should it still be working on it, it stops; a late answer
                // is dropped), so that the model's call again does not run it twice.
                Err(McpError::Dropped(m)) => {
                    self.given_up(id, &m);
                    return Err(McpError::Dropped(m));
                }
                // A stopped turn's curl, killed mid-answer, ends the reply without one: the
                // server is told, as at any stop.
                Err(e) => return Err(turn_stopped().map_or(e, |why| self.given_up(id, why))),
            };
            match jsonrpc::classify(&msg) {
                Incoming::Response { id: got, result } if got == id => return result,
                Incoming::Response { .. } | Incoming::Invalid => {} // a late answer to a cancelled request
                Incoming::Notification(m) => self.noted(&m, &msg),
                Incoming::Request { id: their, method } => {
                    let _ = self.transport.send(&jsonrpc::answer(&their, &method), deadline);
                }
            }
            // A server that keeps talking never lets a wait time out: the cancel is looked for
            // after each of its messages too.
            if let Some(why) = turn_stopped() {
                return Err(self.given_up(id, why));
            }
            if Instant::now() >= deadline {
                self.given_up(id, TIMED_OUT);
                return Err(McpError::Timeout);
            }
        }
    }

    /// Reads what the server sent while no request waited for it (at most [`MAX_IDLE`]
    /// messages, none waited for): a `notifications/tools/list_changed` is noted, a request of
    /// the server's (a ping) answered, anything else (a late answer) dropped.
    pub(crate) fn poll(&mut self) {
        for _ in 0..MAX_IDLE {
            let Ok(msg) = self.transport.recv(Instant::now()) else { return };
            match jsonrpc::classify(&msg) {
                Incoming::Notification(m) => self.noted(&m, &msg),
                Incoming::Request { id, method } => {
                    let _ = self.transport.send(&jsonrpc::answer(&id, &method), Instant::now() + IDLE_ANSWER);
                }
                Incoming::Response { .. } | Incoming::Invalid => {}
            }
        }
    }

    /// A notification `method` (the whole message `msg`): a changed tool list noted, a log
    /// message kept for the person (at most [`MAX_NOTES`] between looks, the rest counted).
    fn noted(&mut self, method: &str, msg: &Value) {
        self.tools_changed |= method == "notifications/tools/list_changed";
        if let Some(note) = jsonrpc::log_message(msg) {
            match self.notes.len() < MAX_NOTES {
                true => self.notes.push(note),
                false => self.notes_dropped += 1,
            }
        }
    }

    /// Tells the server request `id` is given up (`notifications/cancelled`, with `reason`);
    /// the error a stopped turn's call ends with.
    fn given_up(&mut self, id: u64, reason: &str) -> McpError {
        if self.initialized {
            let cancel = json!({"requestId": id, "reason": reason});
            let soon = Instant::now() + Duration::from_secs(2);
            let _ = self.transport.send(&jsonrpc::notification("notifications/cancelled", Some(cancel)), soon);
        }
        McpError::Transport(reason.to_string())
    }

    /// Every item of a paginated list (`tools/list` → `tools`), following `nextCursor`; each
    /// page may take `timeout`, and all of them together end by `deadline`. Only the first
    /// page's failure fails the list (Cline reads that page alone): the pages already read are
    /// kept when a later one fails or the time runs out. An empty or already-followed cursor
    /// ends the list (a server answering `"nextCursor": ""` was asked for the same page a hundred
    /// times), and an item whose identity was already listed is dropped: two tools of one name
    /// become two functions of one name, which the model APIs refuse in every request.
    pub(crate) fn list_all(
        &mut self,
        method: &str,
        key: &str,
        timeout: Duration,
        deadline: Instant,
    ) -> Result<Vec<Value>, McpError> {
        let mut items = Vec::new();
        let mut listed = std::collections::HashSet::new();
        let mut followed = std::collections::HashSet::new();
        let mut cursor: Option<String> = None;
        for page_no in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let left = deadline.saturating_duration_since(Instant::now());
            let page = match left.is_zero() {
                true => Err(McpError::Timeout),
                false => self.request(method, params, timeout.min(left)),
            };
            let page = match page {
                Ok(page) => page,
                Err(e) if page_no == 0 => return Err(e),
                Err(_) => break,
            };
            if let Some(a) = page.get(key).and_then(Value::as_array) {
                let new = a.iter().filter(|v| v.is_object() && listed.insert(identity(v)));
                items.extend(new.cloned());
            }
            items.truncate(MAX_ITEMS);
            cursor = match page.get("nextCursor").and_then(Value::as_str) {
                Some(c) if !c.is_empty() && followed.insert(c.to_string()) => Some(c.to_string()),
                _ => None,
            };
            if cursor.is_none() || items.len() >= MAX_ITEMS {
                break;
            }
        }
        Ok(items)
    }

    /// `tools/call`.
    pub(crate) fn call_tool(&mut self, name: &str, arguments: Value, timeout: Duration) -> Result<Value, McpError> {
        self.request("tools/call", json!({"name": name, "arguments": arguments}), timeout)
    }

    /// `resources/read`.
    pub(crate) fn read_resource(&mut self, uri: &str, timeout: Duration) -> Result<Value, McpError> {
        self.request("resources/read", json!({"uri": uri}), timeout)
    }

    /// `prompts/get`, without arguments (as Cline asks for a prompt named in a slash command).
    pub(crate) fn get_prompt(&mut self, name: &str, timeout: Duration) -> Result<Value, McpError> {
        self.request("prompts/get", json!({"name": name}), timeout)
    }

    /// Lines of stdout that were not JSON-RPC, so far.
    pub(crate) fn garbage_lines(&self) -> usize {
        self.transport.garbage_lines()
    }
}
