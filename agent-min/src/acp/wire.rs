//! The connection: newline-delimited JSON-RPC 2.0 on stdin and stdout, and nothing else on
//! stdout. A reader thread sorts what arrives: requests for the main loop, responses to the
//! agent's own requests (`session/request_permission`), and `session/cancel`, which is acted on
//! at once — the session's cancel flag set, curl and any running command killed, a pending
//! permission request given up — while the main thread is busy with the turn. The end of the
//! input (the editor closed the connection) stops the running turn the same way, and no prompt
//! starts after it.

use std::collections::HashMap;
use std::io::{BufRead, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::run::ui::{interrupt, redact};

/// The longest line read (a prompt with embedded files); a longer one ends the connection.
const MAX_LINE: u64 = 64 << 20;

/// How often a request waiting for its answer looks whether the turn's work was stopped.
const STOP_CHECK: Duration = Duration::from_millis(50);

/// A request or notification from the client.
pub(crate) struct Incoming {
    /// `None` for a notification.
    pub id: Option<Value>,
    pub method: String,
    pub params: Value,
    /// For a `session/prompt`: how many cancels of its session had been read before it
    /// ([`Wire::turn_starts`]).
    pub cancels_before: u64,
}

/// What answers one of the agent's own requests.
enum Answer {
    Response(Value),
    /// This turn (by number) was cancelled.
    Cancelled(u64),
}

/// The agent's side of the connection.
pub(crate) struct Wire {
    out: Mutex<std::io::Stdout>,
    answers: Mutex<Receiver<Answer>>,
    next_id: AtomicI64,
    /// The number of the current turn (`session/prompt`s started so far).
    turn: AtomicU64,
    /// The session whose turn is running, if any: a cancel for another session stops nothing
    /// of it.
    running: Mutex<Option<String>>,
    /// Each session's cancel flag, by session id.
    cancels: Arc<Mutex<HashMap<String, Arc<AtomicBool>>>>,
    /// How many `session/cancel`s of each session were read.
    cancels_read: Mutex<HashMap<String, u64>>,
    /// The input ended: nothing more will be read, so no answer to the agent's requests, and
    /// no turn starts (set under `running`, which [`Wire::turn_starts`] holds).
    closed: AtomicBool,
}

/// A response to one of the agent's requests: an object with an id and no method (JSON-RPC
/// 2.0 §5). One with neither a result nor an error is still a response — a faulty one, which
/// fails the request it answers; it is never answered itself (the TS SDK's `handleResponse`
/// does the same).
fn is_response(msg: &Value) -> bool {
    msg.is_object() && msg.get("method").is_none() && msg.get("id").is_some()
}

impl Wire {
    /// Starts reading stdin; the requests arrive on the returned receiver, which ends with the
    /// input.
    pub(crate) fn start() -> (Arc<Wire>, Receiver<Incoming>) {
        let (requests, incoming) = mpsc::channel();
        let (answer_tx, answers) = mpsc::channel();
        let cancels: Arc<Mutex<HashMap<String, Arc<AtomicBool>>>> = Arc::default();
        let wire = Arc::new(Wire {
            out: Mutex::new(std::io::stdout()),
            answers: Mutex::new(answers),
            next_id: AtomicI64::new(0),
            turn: AtomicU64::new(0),
            running: Mutex::new(None),
            cancels: cancels.clone(),
            cancels_read: Mutex::default(),
            closed: AtomicBool::new(false),
        });
        let reader = wire.clone();
        std::thread::spawn(move || reader.read(requests, answer_tx));
        (wire, incoming)
    }

    fn read(&self, requests: Sender<Incoming>, answers: Sender<Answer>) {
        let mut stdin = std::io::stdin().lock();
        let mut line = Vec::new();
        loop {
            line.clear();
            match (&mut stdin).take(MAX_LINE).read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return self.disconnected(&answers),
                Ok(_) if !line.ends_with(b"\n") && line.len() as u64 >= MAX_LINE => {
                    eprintln!("agent-min acp: a message longer than {MAX_LINE} bytes; closing the connection");
                    return self.disconnected(&answers);
                }
                Ok(_) => {}
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let mut msg: Value = match serde_json::from_slice(&line) {
                Ok(v) => v,
                Err(e) => {
                    self.send(&json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": format!("Parse error: {e}")}}));
                    continue;
                }
            };
            let id = msg.get("id").cloned();
            let method = msg.get("method").and_then(Value::as_str).map(str::to_string);
            match method.as_deref() {
                Some("session/cancel") if id.is_none() => self.cancel(&msg["params"], &answers),
                Some(method) => {
                    // Taken, not copied: a prompt's params can be most of a 64 MiB line.
                    let params = msg.get_mut("params").map(Value::take).unwrap_or(Value::Null);
                    // `session/close` cancels the session's work now, as `session/cancel` does;
                    // the main thread, free once the turn has ended, then drops the session.
                    if method == "session/close" && id.is_some() {
                        self.cancel(&params, &answers);
                    }
                    let session = params.get("sessionId").and_then(Value::as_str).unwrap_or_default();
                    let cancels_before = self.cancels_read(session);
                    if requests.send(Incoming { id, method: method.to_string(), params, cancels_before }).is_err() {
                        return;
                    }
                }
                None if is_response(&msg) => {
                    let _ = answers.send(Answer::Response(msg));
                }
                // Neither a request, a notification nor a response (a batch, a method that is
                // not a string, a bare value): JSON-RPC's Invalid Request, so the client does
                // not wait for an answer that never comes.
                None => {
                    let id =
                        msg.get("id").filter(|id| id.is_string() || id.is_number()).cloned().unwrap_or(Value::Null);
                    let what = "Invalid Request: not a JSON-RPC 2.0 request, notification or response object";
                    self.send(&json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600, "message": what}}));
                }
            }
        }
    }

    /// The input ended (or a line was too long to read on): the editor is gone. Every session
    /// is cancelled and the running turn stopped as `session/cancel` stops it — curl and a
    /// running command killed, a pending request given up — rather than left to go on making
    /// model requests and running auto-approved commands nobody will see; no prompt read
    /// before the end starts ([`Wire::turn_starts`]).
    fn disconnected(&self, answers: &Sender<Answer>) {
        let running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        self.closed.store(true, Ordering::SeqCst);
        for flag in self.cancels.lock().unwrap_or_else(|e| e.into_inner()).values() {
            flag.store(true, Ordering::SeqCst);
        }
        if running.is_some() {
            interrupt::kill_turn();
            let _ = answers.send(Answer::Cancelled(self.turn.load(Ordering::SeqCst)));
        }
    }

    /// How many cancels of `session` were read so far.
    fn cancels_read(&self, session: &str) -> u64 {
        self.cancels_read.lock().unwrap_or_else(|e| e.into_inner()).get(session).copied().unwrap_or(0)
    }

    /// The main thread starts `session`'s prompt, read after `cancels_before` cancels of it:
    /// what a cancel of that session stops now. The prompt is cancelled if a cancel was read
    /// after it (the client cancelled it before it started), not by one read before it, in the
    /// order the client sent them — which the turn it cancelled kept seeing until it ended
    /// (the flag was cleared as the next prompt was read, and a cancelled turn went on).
    /// `false`, and nothing starts, once the input has ended: the editor that sent the prompt
    /// is gone.
    pub(crate) fn turn_starts(&self, session: &str, cancels_before: u64) -> bool {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if self.closed.load(Ordering::SeqCst) {
            return false;
        }
        if let Some(flag) = self.cancels.lock().unwrap_or_else(|e| e.into_inner()).get(session) {
            flag.store(self.cancels_read(session) > cancels_before, Ordering::SeqCst);
        }
        *running = Some(session.to_string());
        self.turn.fetch_add(1, Ordering::SeqCst);
        interrupt::turn_begins();
        true
    }

    /// The prompt's turn has ended: a cancel stops nothing more until the next one.
    pub(crate) fn turn_ends(&self) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        *running = None;
        interrupt::turn_ends();
    }

    /// `session/cancel`: stops the session's turn as Ctrl-C stops a run, without exiting. Only
    /// that session's: its flag is set (a prompt of it read but not yet started ends at once),
    /// and curl, a command and a pending request are stopped only when its turn is the one
    /// running.
    fn cancel(&self, params: &Value, answers: &Sender<Answer>) {
        let session = params.get("sessionId").and_then(Value::as_str).unwrap_or_default();
        let flag = self.cancels.lock().unwrap_or_else(|e| e.into_inner()).get(session).cloned();
        if let Some(flag) = flag {
            let running = self.running.lock().unwrap_or_else(|e| e.into_inner());
            *self.cancels_read.lock().unwrap_or_else(|e| e.into_inner()).entry(session.to_string()).or_default() += 1;
            flag.store(true, Ordering::SeqCst);
            if running.as_deref() == Some(session) {
                interrupt::kill_turn();
                let _ = answers.send(Answer::Cancelled(self.turn.load(Ordering::SeqCst)));
            }
        }
    }

    /// Registers a session's cancel flag.
    pub(crate) fn on_cancel(&self, session: &str, flag: Arc<AtomicBool>) {
        self.cancels.lock().unwrap_or_else(|e| e.into_inner()).insert(session.to_string(), flag);
    }

    /// Forgets a closed session's cancel flag. Its count of cancels read stays: a prompt read
    /// after the close (of the session loaded again) was counted against it.
    pub(crate) fn forget(&self, session: &str) {
        self.cancels.lock().unwrap_or_else(|e| e.into_inner()).remove(session);
    }

    /// One message, one line; keys masked as in everything the agent shows.
    pub(crate) fn send(&self, msg: &Value) {
        self.send_line(msg, true);
    }

    /// One message, one line, keys masked when `mask`.
    fn send_line(&self, msg: &Value, mask: bool) {
        let Ok(text) = serde_json::to_string(msg) else { return };
        let mut line = if mask { redact::apply(&text).into_owned() } else { text };
        line.push('\n');
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let _ = out.write_all(line.as_bytes()).and_then(|_| out.flush());
    }

    /// A notification.
    pub(crate) fn notify(&self, method: &str, params: impl serde::Serialize) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// A successful response.
    pub(crate) fn respond(&self, id: &Value, result: impl serde::Serialize) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// An error response.
    pub(crate) fn fail(&self, id: &Value, error: &agent_client_protocol_schema::v1::Error) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "error": error}));
    }

    /// Sends a request and waits for its result: `None` if the turn was cancelled or stopped
    /// (`--timeout`) meanwhile, the client answered with an error, or the connection ended.
    pub(crate) fn request(&self, method: &str, params: impl serde::Serialize) -> Option<Value> {
        self.call(method, params).ok()
    }

    /// Sends a request and waits for its result, or says why there is none: the turn was
    /// cancelled or stopped meanwhile, the client answered with an error (its message), or the
    /// connection ended.
    pub(crate) fn call(&self, method: &str, params: impl serde::Serialize) -> Result<Value, String> {
        self.call_with(method, params, true)
    }

    /// [`Wire::call`] for a request that carries a file's own text back to it
    /// (`fs/write_text_file`): not masked, or a key the file holds (a `.env`) would be
    /// replaced by the mask in the file itself. It shows nothing the file did not hold.
    pub(crate) fn call_unmasked(&self, method: &str, params: impl serde::Serialize) -> Result<Value, String> {
        self.call_with(method, params, false)
    }

    fn call_with(&self, method: &str, params: impl serde::Serialize, mask: bool) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        self.send_line(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}), mask);
        let answers = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let answer = match answers.recv_timeout(STOP_CHECK) {
                Ok(a) => a,
                // The `--timeout` watchdog stopped the turn's work: the turn ends rather than
                // wait for an answer (the watchdog ends the process if it does not).
                Err(RecvTimeoutError::Timeout) if interrupt::work_stopped() => {
                    return Err("the turn was stopped".to_string())
                }
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => return Err("the editor closed the connection".to_string()),
            };
            match answer {
                Answer::Cancelled(turn) if turn == self.turn.load(Ordering::SeqCst) => {
                    return Err("the turn was cancelled".to_string())
                }
                Answer::Cancelled(_) => {} // an earlier turn's
                Answer::Response(r) if r.get("id") == Some(&json!(id)) => {
                    return match (r.get("result"), r.get("error")) {
                        (Some(result), None) => Ok(result.clone()),
                        (_, Some(e)) => Err(match e.get("message").and_then(Value::as_str) {
                            Some(m) => format!("the editor answered: {m}"),
                            None => format!("the editor answered with an error: {e}"),
                        }),
                        // A faulty response fails the request, as an error would.
                        (None, None) => Err("the editor's answer has neither a result nor an error".to_string()),
                    };
                }
                Answer::Response(_) => {} // an answer to nothing pending
            }
        }
    }
}
