//! The stdio transport: the server is our child, in its own process group, with a minimal
//! environment (never the agent's API keys); JSON-RPC messages are single lines on its stdin
//! and stdout; its stderr is kept (the last few kilobytes) for error reports.
//!
//! A writer thread feeds stdin (so a server that stops reading cannot block the agent), and a
//! reader thread turns stdout into messages (at most a few queued ahead). Lines that are not JSON (a server that prints
//! garbage) are counted and skipped, as the SDK's transport reports and skips them; a line over
//! [`MAX_LINE`] is dropped unread. Stopping closes stdin, sends SIGTERM to the whole group,
//! and SIGKILL after a grace period; the group is also registered with
//! [`crate::run::ui::interrupt`] so Ctrl-C and SIGTERM of the agent kill it, and the child dies
//! with the agent on `kill -9` (`PR_SET_PDEATHSIG`; it then also sees stdin close).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::jsonrpc::McpError;
use super::Transport;
use crate::run::spawn;
use crate::run::ui::interrupt;

/// Longest line read from a server (a tool result of a few megabytes is still fine).
pub(crate) const MAX_LINE: usize = 16 << 20;

/// Messages read ahead of the client.
const QUEUED: usize = 8;

/// Bytes of stderr kept for error reports.
const STDERR_KEEP: usize = 4096;

/// How long a stopping server gets between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_millis(500);

enum Line {
    Message(Value),
    Garbage,
    /// A line past [`MAX_LINE`], dropped unread.
    TooLong,
    Eof,
}

/// A running stdio server.
pub(crate) struct StdioTransport {
    child: Child,
    /// Lines for the writer thread, at most [`QUEUED`] waiting; dropping it closes the
    /// server's stdin.
    stdin: Option<mpsc::SyncSender<Vec<u8>>>,
    write_failed: Arc<AtomicBool>,
    lines: Receiver<Line>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    garbage: usize,
    exited: bool,
    _group: interrupt::Guard,
}

impl StdioTransport {
    /// Starts `command args` in `cwd` with `env` added to the minimal environment. Call from
    /// the main thread: the child's death signal is tied to the thread that spawns it.
    pub(crate) fn spawn(
        command: &str,
        args: &[String],
        env: &[(String, String)],
        cwd: Option<&std::path::Path>,
    ) -> Result<Self, McpError> {
        // A bare name is found on the server's own PATH when its settings set one, as Node's
        // `spawn` finds it in the child's environment (absolute directories only, as always);
        // else on the agent's. A minimal environment, its own process group, dies with the
        // agent, ptrace-scoped.
        let mut cmd =
            spawn::command_on(&spawn::path_for(env), command, spawn::Policy::McpServer).map_err(McpError::Transport)?;
        cmd.args(args);
        // The agent's own keys are not in that environment, and a `${env:…}` of one is refused
        // (`config.rs`); a value the settings write out is the person's own, as in Cline.
        for (k, v) in env {
            cmd.env(k, v);
        }
        if let Some(dir) = cwd {
            cmd.current_dir(dir);
        }
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().map_err(|e| {
            // The command was found already (`command_on`): a missing working directory, or a
            // script's missing interpreter, is what is not there.
            let hint = match (e.kind(), cwd) {
                (std::io::ErrorKind::NotFound, Some(dir)) if !dir.is_dir() => {
                    format!(" (its working directory {} does not exist; fix \"cwd\")", dir.display())
                }
                (std::io::ErrorKind::NotFound, _) => {
                    " (the program, or the interpreter its first line names, is missing)".to_string()
                }
                _ => String::new(),
            };
            McpError::Transport(format!("could not start `{command}`{hint}: {e}"))
        })?;
        let group = interrupt::track_server(child.id());
        let stdout = child.stdout.take().expect("piped stdout");
        // Bounded: a server that floods stdout between calls waits on its pipe instead of
        // filling our memory (at most this many messages of at most MAX_LINE each are held).
        let (tx, lines) = mpsc::sync_channel(QUEUED);
        std::thread::spawn(move || read_lines(stdout, tx));
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let err_pipe = child.stderr.take().expect("piped stderr");
        let keep = Arc::clone(&stderr);
        std::thread::spawn(move || keep_tail(err_pipe, keep));
        // Writes go through a thread: a server that stops reading its stdin (while it floods
        // stdout) can then never block the agent past a request's deadline. Bounded too: such a
        // server's own requests, each answered with its id (as long as a line), would otherwise
        // pile up answers in memory for as long as the request waits.
        let (to_server, outgoing) = mpsc::sync_channel::<Vec<u8>>(QUEUED);
        let write_failed = Arc::new(AtomicBool::new(false));
        let failed = Arc::clone(&write_failed);
        let stdin_pipe = child.stdin.take().expect("piped stdin");
        std::thread::spawn(move || write_lines(stdin_pipe, outgoing, failed));
        Ok(StdioTransport {
            stdin: Some(to_server),
            write_failed,
            child,
            lines,
            stderr,
            garbage: 0,
            exited: false,
            _group: group,
        })
    }

    /// How the server ended, with the end of its stderr.
    fn death(&mut self) -> String {
        let status = match self.child.wait_timeout(Duration::from_millis(300)) {
            Some(s) => format!("the server exited ({s})"),
            None => "the server closed its output".to_string(),
        };
        let tail = self.stderr_tail();
        if tail.is_empty() {
            status
        } else {
            format!("{status}; its stderr ends with:\n{tail}")
        }
    }

    /// The last bytes the server wrote to stderr.
    pub(crate) fn stderr_tail(&self) -> String {
        let b = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        let v: Vec<u8> = b.iter().copied().collect();
        String::from_utf8_lossy(&v).trim().to_string()
    }
}

trait WaitTimeout {
    fn wait_timeout(&mut self, d: Duration) -> Option<std::process::ExitStatus>;
}

impl WaitTimeout for Child {
    fn wait_timeout(&mut self, d: Duration) -> Option<std::process::ExitStatus> {
        let until = Instant::now() + d;
        loop {
            if let Ok(Some(s)) = self.try_wait() {
                return Some(s);
            }
            if Instant::now() >= until {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn read_lines(stdout: impl Read, tx: mpsc::SyncSender<Line>) {
    let mut r = BufReader::new(stdout);
    loop {
        let mut line = Vec::new();
        let n: usize = (&mut r).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut line).unwrap_or_default();
        if n == 0 {
            let _ = tx.send(Line::Eof);
            return;
        }
        if line.len() > MAX_LINE && !line.ends_with(b"\n") {
            // Too long: skip to the end of this line without keeping it.
            let mut sink = Vec::new();
            loop {
                sink.clear();
                match (&mut r).take(1 << 16).read_until(b'\n', &mut sink) {
                    Ok(0) | Err(_) => break,
                    Ok(_) if sink.ends_with(b"\n") => break,
                    Ok(_) => {}
                }
            }
            if tx.send(Line::TooLong).is_err() {
                return;
            }
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        if text.trim().is_empty() {
            continue;
        }
        let item = match serde_json::from_str::<Value>(text.trim()) {
            Ok(v) if v.is_object() => Line::Message(v),
            _ => Line::Garbage,
        };
        if tx.send(item).is_err() {
            return;
        }
    }
}

fn write_lines(mut stdin: ChildStdin, outgoing: mpsc::Receiver<Vec<u8>>, failed: Arc<AtomicBool>) {
    for line in outgoing {
        if stdin.write_all(&line).and_then(|_| stdin.flush()).is_err() {
            failed.store(true, Ordering::SeqCst);
            return;
        }
    }
}

fn keep_tail(mut err: impl Read, keep: Arc<Mutex<VecDeque<u8>>>) {
    let mut buf = [0u8; 4096];
    while let Ok(n) = err.read(&mut buf) {
        if n == 0 {
            return;
        }
        let mut k = keep.lock().unwrap_or_else(|e| e.into_inner());
        k.extend(&buf[..n]);
        while k.len() > STDERR_KEEP {
            k.pop_front();
        }
    }
}

impl Transport for StdioTransport {
    fn send(&mut self, msg: &Value, deadline: Instant) -> Result<(), McpError> {
        if self.exited {
            return Err(McpError::Closed(self.death()));
        }
        let mut line = msg.to_string();
        line.push('\n');
        let mut line = line.into_bytes();
        let sent = loop {
            let Some(w) = &self.stdin else { break false };
            match w.try_send(line) {
                Ok(()) => break true,
                Err(TrySendError::Disconnected(_)) => break false,
                // The server is not reading its stdin: wait for it, until the deadline (or the
                // editor's cancel, or the time limit).
                Err(TrySendError::Full(back)) if Instant::now() < deadline && !interrupt::work_stopped() => {
                    line = back;
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(TrySendError::Full(_)) => return Err(McpError::Timeout),
            }
        };
        if !sent || self.write_failed.load(Ordering::SeqCst) {
            self.exited = true;
            return Err(McpError::Closed(self.death()));
        }
        Ok(())
    }

    fn recv(&mut self, deadline: Instant) -> Result<Value, McpError> {
        loop {
            if self.exited {
                return Err(McpError::Closed(self.death()));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(Line::Message(v)) => return Ok(v),
                Ok(Line::Garbage) => self.garbage += 1,
                // Most likely the answer waited for: said now, not at the timeout as "Request
                // timed out" (as the HTTP transports say their limit).
                Ok(Line::TooLong) => {
                    return Err(McpError::Dropped(format!(
                        "the server sent a message larger than {} MiB, the most agent-min reads (most likely this call's answer); it was dropped",
                        MAX_LINE >> 20
                    )))
                }
                Ok(Line::Eof) | Err(RecvTimeoutError::Disconnected) => self.exited = true,
                Err(RecvTimeoutError::Timeout) => return Err(McpError::Timeout),
            }
        }
    }

    fn garbage_lines(&self) -> usize {
        self.garbage
    }

    fn server_group(&self) -> Option<i32> {
        // Its own group, led by it (`spawn::Policy::McpServer`).
        i32::try_from(self.child.id()).ok()
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        drop(self.stdin.take()); // the spec's first step: close its input
        let pgid = self.child.id() as i32;
        if self.child.wait_timeout(Duration::from_millis(100)).is_none() {
            interrupt::send_signal(-pgid, libc::SIGTERM);
            if self.child.wait_timeout(GRACE).is_none() {
                let _ = self.child.kill();
            }
        }
        // Whatever it started in its group goes too.
        interrupt::send_signal(-pgid, libc::SIGKILL);
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_that_reads_nothing_cannot_pile_up_answers_to_its_requests() {
        // It never reads its stdin and sends requests without end, each with an id of 64 KiB:
        // every answer (its id echoed) was queued for the writer, which waited on the full pipe,
        // for as long as the request waited (1.6 GB in a start's 8 s with ids of 1 MiB).
        let script = r#"big=$(head -c 65536 /dev/zero | tr '\0' A); while :; do printf '{"jsonrpc":"2.0","id":"%s","method":"ping"}\n' "$big"; done"#;
        let mut t = StdioTransport::spawn("sh", &["-c".to_string(), script.to_string()], &[], None).unwrap();
        let deadline = Instant::now() + Duration::from_secs(3);
        let mut answered = 0;
        let mut last = None;
        for _ in 0..300 {
            let m = match t.recv(deadline) {
                Ok(m) => m,
                Err(e) => {
                    last = Some(e);
                    break;
                }
            };
            match t.send(&super::super::jsonrpc::answer(&m["id"], "ping"), deadline) {
                Ok(()) => answered += 1,
                Err(e) => {
                    last = Some(e);
                    break;
                }
            }
        }
        assert!(answered <= QUEUED + 2, "{answered} answers queued");
        assert!(matches!(last, Some(McpError::Timeout)), "{last:?}");
    }
}
