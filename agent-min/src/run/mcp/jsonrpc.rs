//! JSON-RPC 2.0 as MCP uses it: the messages we send, what an incoming message is, and the
//! errors a request can end with (worded as the MCP TypeScript SDK words them, since Cline's
//! texts embed those messages).

use serde_json::{json, Value};

/// Why a request got no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum McpError {
    /// No answer within the timeout (the SDK's -32001).
    Timeout,
    /// The server went away: its process exited or its stream closed. `detail` says how
    /// (exit status, the end of its stderr).
    Closed(String),
    /// The server answered with a JSON-RPC error.
    Rpc {
        /// The error code.
        code: i64,
        /// The server's message.
        message: String,
    },
    /// Could not talk to it at all (spawn failed, HTTP error, a broken reply).
    Transport(String),
    /// The server no longer knows the session (HTTP 404 to its id, or the event stream of an
    /// SSE server ended before the request went out): the request was not processed, and a
    /// new session may be made for it (the specification's "MUST start a new session").
    Expired(String),
    /// A message of the server's was dropped unread (past the size agent-min reads): most
    /// likely the answer waited for, which will not come. The message says so.
    Dropped(String),
}

impl McpError {}

impl std::fmt::Display for McpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            McpError::Timeout => write!(f, "MCP error -32001: Request timed out"),
            McpError::Closed(_) => write!(f, "MCP error -32000: Connection closed"),
            McpError::Rpc { code, message } => write!(f, "MCP error {code}: {message}"),
            McpError::Transport(m) => write!(f, "{m}"),
            McpError::Expired(why) => write!(f, "MCP error -32000: Connection closed ({why})"),
            McpError::Dropped(m) => write!(f, "{m}"),
        }
    }
}

/// A request line.
pub(crate) fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A notification line.
pub(crate) fn notification(method: &str, params: Option<Value>) -> Value {
    match params {
        Some(p) => json!({"jsonrpc": "2.0", "method": method, "params": p}),
        None => json!({"jsonrpc": "2.0", "method": method}),
    }
}

/// What a message from the server is.
#[derive(Debug, PartialEq)]
pub(crate) enum Incoming {
    /// The answer to our request `id`.
    Response {
        /// Our id.
        id: u64,
        /// `result`, or the error.
        result: Result<Value, McpError>,
    },
    /// A notification (`method`).
    Notification(String),
    /// The server asks us something (`ping`, `roots/list`, …).
    Request {
        /// Its id, echoed in our answer.
        id: Value,
        /// What it asks.
        method: String,
    },
    /// Not JSON-RPC (or an answer to an id we never sent).
    Invalid,
}

/// The most characters of a server's log message shown.
const MAX_LOG_CHARS: usize = 2000;

/// A `notifications/message` (a server's log message) as Cline's McpHub shows it: its
/// `level` (`info` when absent), and `[logger] data` (the logger when given; `data`, else
/// `message`). Cline's schema takes a string `data` only and drops any other; here any other
/// value is shown as its JSON. Cut to [`MAX_LOG_CHARS`] characters. `None` for any other message.
pub(crate) fn log_message(msg: &Value) -> Option<(String, String)> {
    if msg.get("method").and_then(Value::as_str) != Some("notifications/message") || msg.get("id").is_some() {
        return None;
    }
    let params = msg.get("params").cloned().unwrap_or(Value::Null);
    let text = |k: &str| params.get(k).and_then(Value::as_str).map(str::to_string);
    // A level is a word (RFC 5424's, in the protocol): a longer one is cut.
    let level: String = text("level").unwrap_or_else(|| "info".to_string()).chars().take(16).collect();
    let data = match params.get("data") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(v) if !v.is_null() && !v.is_string() => v.to_string(),
        _ => text("message").unwrap_or_default(),
    };
    let message = match text("logger").filter(|l| !l.is_empty()) {
        Some(logger) => format!("[{logger}] {data}"),
        None => data,
    };
    let message = match message.char_indices().nth(MAX_LOG_CHARS) {
        Some((at, _)) => format!("{}…", &message[..at]),
        None => message,
    };
    Some((level, message))
}

/// Classifies a message.
pub(crate) fn classify(msg: &Value) -> Incoming {
    let method = msg.get("method").and_then(Value::as_str);
    match (method, msg.get("id")) {
        (Some(m), Some(id)) if !id.is_null() => Incoming::Request { id: id.clone(), method: m.to_string() },
        (Some(m), _) => Incoming::Notification(m.to_string()),
        (None, Some(id)) => {
            let Some(id) = id.as_u64() else { return Incoming::Invalid };
            let result = match (msg.get("result"), msg.get("error")) {
                (_, Some(e)) => Err(McpError::Rpc {
                    code: e.get("code").and_then(Value::as_i64).unwrap_or(-32603),
                    message: e.get("message").and_then(Value::as_str).unwrap_or("(no message)").to_string(),
                }),
                (Some(r), None) => Ok(r.clone()),
                (None, None) => return Incoming::Invalid,
            };
            Incoming::Response { id, result }
        }
        (None, None) => Incoming::Invalid,
    }
}

/// Our answer to a server's request: `{}` for `ping`, "method not found" for anything else
/// (we declare no client capabilities, as Cline does).
pub(crate) fn answer(id: &Value, method: &str) -> Value {
    if method == "ping" {
        json!({"jsonrpc": "2.0", "id": id, "result": {}})
    } else {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("Method not found: {method}")}})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_message_reads_as_cline_shows_it() {
        let log = |params: Value| {
            log_message(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/message", "params": params}))
        };
        let pair = |l: &str, m: &str| Some((l.to_string(), m.to_string()));
        assert_eq!(
            log(serde_json::json!({"level": "error", "logger": "db", "data": "down"})),
            pair("error", "[db] down")
        );
        assert_eq!(log(serde_json::json!({"message": "old style"})), pair("info", "old style"));
        assert_eq!(log(serde_json::json!({"level": "debug", "data": {"n": 1}})), pair("debug", "{\"n\":1}"));
        assert_eq!(log(Value::Null), pair("info", ""));
        assert_eq!(log(serde_json::json!({"level": "x".repeat(1000), "data": "d"})), pair(&"x".repeat(16), "d"));
        let long = log(serde_json::json!({"data": "é".repeat(3000)})).unwrap().1;
        assert_eq!(long.chars().count(), 2001);
        assert!(long.ends_with('…'));
        let other = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}});
        assert_eq!(log_message(&other), None);
    }

    #[test]
    fn classifies_responses_errors_notifications_and_requests() {
        let r = classify(&json!({"jsonrpc": "2.0", "id": 3, "result": {"ok": 1}}));
        assert_eq!(r, Incoming::Response { id: 3, result: Ok(json!({"ok": 1})) });
        let e = classify(&json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "bad"}}));
        assert_eq!(e, Incoming::Response { id: 4, result: Err(McpError::Rpc { code: -32602, message: "bad".into() }) });
        let n = classify(&json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
        assert_eq!(n, Incoming::Notification("notifications/tools/list_changed".into()));
        let q = classify(&json!({"jsonrpc": "2.0", "id": "s1", "method": "ping"}));
        assert_eq!(q, Incoming::Request { id: json!("s1"), method: "ping".into() });
        assert_eq!(classify(&json!({"hello": 1})), Incoming::Invalid);
        assert_eq!(classify(&json!([1, 2])), Incoming::Invalid);
    }

    #[test]
    fn errors_read_like_the_sdk_s() {
        assert_eq!(McpError::Timeout.to_string(), "MCP error -32001: Request timed out");
        assert_eq!(McpError::Closed("exit 1".into()).to_string(), "MCP error -32000: Connection closed");
        assert_eq!(answer(&json!(7), "ping"), json!({"jsonrpc": "2.0", "id": 7, "result": {}}));
        assert_eq!(answer(&json!(8), "roots/list")["error"]["code"], -32601);
    }
}
