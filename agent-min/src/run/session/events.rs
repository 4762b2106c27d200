//! `--json`: the run as NDJSON events on stdout, one object per line with a `"type"` field.
//!
//! Every event carries `type`, `task_id` and `ts` (milliseconds since the Unix epoch). The
//! schema of each type is documented in `docs/agent.md` and checked field by field by the
//! end-to-end test `json_events_follow_the_schema`. Without `--json` every method is a no-op.
//! Partial `tool_call` events are rationed ([`PartialGate`]): a streamed file must not turn into
//! one event per delta, each carrying all of it.

use std::io::Write;

use serde_json::{json, Map, Value};

use crate::run::llm::{ApiError, Usage};

/// Where events go (nowhere without `--json`).
pub struct Events {
    out: Option<Box<dyn Write + Send>>,
    task_id: String,
    /// What this stream shares with its copies on other threads.
    shared: std::sync::Arc<Shared>,
}

/// The state of one event stream that its copies share.
#[derive(Default)]
struct Shared {
    /// The `completion` event went out: it is the last line, whoever writes after it.
    closed: std::sync::atomic::AtomicBool,
    /// The task's totals as of the last request (for a `completion` said from another thread).
    totals: std::sync::Mutex<Value>,
}

/// Least time between two partial `tool_call` events of one call.
pub const PARTIAL_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);

/// Most bytes of parameter values all partial `tool_call` events of one call may carry: a
/// streamed 4 MB file must not become gigabytes of events. The complete event is not counted.
pub const PARTIAL_BUDGET: usize = 1 << 20;

/// Decides which partial `tool_call` events of one call are sent: the first, then at most one
/// per [`PARTIAL_INTERVAL`], while they fit in [`PARTIAL_BUDGET`].
#[derive(Debug, Default, Clone)]
pub struct PartialGate {
    last: Option<std::time::Instant>,
    spent: usize,
}

impl PartialGate {
    /// Whether a partial event carrying `bytes` of values may go out at `now` (and counts it).
    pub fn admit(&mut self, now: std::time::Instant, bytes: usize) -> bool {
        let too_soon = self.last.is_some_and(|t| now.saturating_duration_since(t) < PARTIAL_INTERVAL);
        if too_soon || self.spent.saturating_add(bytes) > PARTIAL_BUDGET {
            return false;
        }
        self.last = Some(now);
        self.spent += bytes;
        true
    }
}

/// Who decided whether a tool call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    /// No approval needed: read-only inside the workspace, or a tool that changes nothing.
    Auto,
    /// `--yolo` approved it.
    Yolo,
    /// The person answered.
    User,
    /// Refused by policy (outside the workspace under `--yolo`).
    Policy,
}

impl By {
    fn name(self) -> &'static str {
        match self {
            By::Auto => "auto",
            By::Yolo => "yolo",
            By::User => "user",
            By::Policy => "policy",
        }
    }
}

impl Events {
    /// No events.
    pub fn off() -> Self {
        Events { out: None, task_id: String::new(), shared: Default::default() }
    }

    /// Events written to `out` (stdout for `--json`).
    pub fn to(out: Box<dyn Write + Send>) -> Self {
        Events { out: Some(out), task_id: String::new(), shared: Default::default() }
    }

    /// Events to stdout again, for another thread (the Ctrl-C handler): off if these are.
    pub fn for_other_thread(&self) -> Self {
        match self.out {
            Some(_) => Events {
                out: Some(Box::new(std::io::stdout())),
                task_id: self.task_id.clone(),
                shared: self.shared.clone(),
            },
            None => Events::off(),
        }
    }

    /// A hook script ran (fields: `run::project::hooks::report`).
    pub fn hook(&mut self, fields: Value) {
        self.emit("hook", fields);
    }

    /// Whether events go anywhere (`--json`).
    pub fn is_on(&self) -> bool {
        self.out.is_some()
    }

    /// Sets the task id stamped on every event.
    pub fn set_task_id(&mut self, id: &str) {
        self.task_id = id.to_string();
    }

    fn emit(&mut self, ty: &str, fields: Value) {
        let Some(out) = self.out.as_mut() else { return };
        if self.shared.closed.load(std::sync::atomic::Ordering::SeqCst) {
            return; // `completion` was the last line
        }
        let mut obj = Map::new();
        obj.insert("type".into(), ty.into());
        obj.insert("task_id".into(), self.task_id.clone().into());
        let ts = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        obj.insert("ts".into(), ts.into());
        if let Value::Object(f) = fields {
            obj.extend(f);
        }
        let mut line = crate::run::ui::redact::apply(&Value::Object(obj).to_string()).into_owned();
        line.push('\n');
        // A closed stdout (the reader went away) must not stop the task.
        let _ = out.write_all(line.as_bytes()).and_then(|_| out.flush());
    }

    /// An MCP event (`mcp_server`, `mcp_call`), built by `run::mcp` and `tools/mcp.rs`.
    pub fn mcp(&mut self, ty: &str, fields: Value) {
        self.emit(ty, fields);
    }

    /// The task started (or resumed).
    pub fn task_started(&mut self, provider: &str, model: &str, cwd: &str, task: &str, resumed: bool) {
        self.emit(
            "task_started",
            json!({"provider": provider, "model": model, "cwd": cwd, "task": task, "resumed": resumed}),
        );
    }

    /// Reply text as shown (thinking tags and partial tags removed).
    pub fn text(&mut self, turn: u32, text: &str) {
        self.emit("text", json!({"turn": turn, "text": text}));
    }

    /// Reasoning text from the model.
    pub fn reasoning(&mut self, turn: u32, text: &str) {
        self.emit("reasoning", json!({"turn": turn, "text": text}));
    }

    /// A tool call: `partial` while it streams, then once complete (before it runs).
    pub fn tool_call(&mut self, turn: u32, call_id: &str, tool: &str, params: &[(String, String)], partial: bool) {
        let params: Map<String, Value> = params.iter().map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect();
        self.emit(
            "tool_call",
            json!({"turn": turn, "call_id": call_id, "tool": tool, "partial": partial, "params": params}),
        );
    }

    /// Whether a tool call may run, and who decided.
    pub fn approval(&mut self, call_id: &str, tool: &str, approved: bool, by: By, feedback: Option<&str>) {
        self.emit(
            "approval",
            json!({"call_id": call_id, "tool": tool, "approved": approved, "by": by.name(), "feedback": feedback}),
        );
    }

    /// What a tool call gave back to the model.
    pub fn tool_result(&mut self, call_id: &str, tool: &str, ok: bool, result: &str) {
        self.emit("tool_result", json!({"call_id": call_id, "tool": tool, "ok": ok, "result": result}));
    }

    /// A model request finished: its tokens and cost, and the task's totals.
    pub fn api_request(&mut self, turn: u32, u: &Usage, estimated: bool, cost: Option<f64>, totals: Value) {
        *self.shared.totals.lock().unwrap_or_else(|e| e.into_inner()) = totals.clone();
        self.emit(
            "api_request",
            json!({
                "turn": turn,
                "tokens_in": u.input,
                "tokens_out": u.output,
                "cache_read": u.cache_read,
                "cache_write": u.cache_write,
                "estimated": estimated,
                "cost_usd": cost.map(crate::run::budget::accounting::round),
                "totals": totals,
            }),
        );
    }

    /// A failed request will be tried again after `delay_s` seconds.
    pub fn retry(&mut self, turn: u32, attempt: u32, max: u32, delay_s: f64, e: &ApiError) {
        self.emit(
            "retry",
            json!({"turn": turn, "attempt": attempt, "max_retries": max, "delay_s": delay_s, "status": e.status, "error": e.message}),
        );
    }

    /// Part of the history was dropped to fit the context window.
    pub fn context_truncated(
        &mut self,
        turn: u32,
        reason: &str,
        estimated_tokens: u64,
        limit: u64,
        removed: usize,
        dedup: usize,
    ) {
        self.emit(
            "context_truncated",
            json!({
                "turn": turn,
                "reason": reason,
                "estimated_tokens": estimated_tokens,
                "limit_tokens": limit,
                "removed_messages": removed,
                "deduplicated_reads": dedup,
            }),
        );
    }

    /// A checkpoint of the workspace was taken (see `crate::run::checkpoints`).
    pub fn checkpoint(&mut self, turn: u32, number: u32, hash: &str, tool: &str, files_changed: u32) {
        self.emit(
            "checkpoint",
            json!({"turn": turn, "number": number, "hash": hash, "tool": tool, "files_changed": files_changed}),
        );
    }

    /// The task failed: why, and which limit if a limit stopped it.
    pub fn error(&mut self, message: &str, limit: Option<&str>) {
        self.emit("error", json!({"message": message, "limit": limit}));
    }

    /// A tool call needs a person's approval and nobody can answer (no terminal): the run stops
    /// here, resumable; `fix` says how to let it go on.
    pub fn approval_needed(&mut self, call_id: &str, tool: &str, params: &[(String, String)], fix: &str) {
        let params: Map<String, Value> = params.iter().map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect();
        self.emit("approval_needed", json!({"call_id": call_id, "tool": tool, "params": params, "fix": fix}));
    }

    /// Notes the task's totals (before its first request: a resumed task's earlier ones).
    pub fn note_totals(&mut self, totals: Value) {
        *self.shared.totals.lock().unwrap_or_else(|e| e.into_inner()) = totals;
    }

    /// The task's totals as of its last request.
    pub fn last_totals(&self) -> Value {
        self.shared.totals.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The end, always the last event: how the run ended (`completed`, `failed`,
    /// `approval_needed`, `interrupted`, `terminated`), the result or the reason, the process's
    /// exit code and the task's totals. Said once: later events are dropped.
    pub fn completion(&mut self, end: &Ended<'_>, totals: Value) {
        let (result, reason) = match end.status {
            "completed" => (Some(end.text), None),
            _ => (None, Some(end.text)),
        };
        self.emit(
            "completion",
            json!({"status": end.status, "result": result, "reason": reason, "exit_code": end.exit_code, "totals": totals}),
        );
        self.shared.closed.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// How a run ended, as its `completion` event says it.
#[derive(Debug, Clone, Copy)]
pub struct Ended<'a> {
    /// `completed`, `failed`, `approval_needed`, `interrupted` or `terminated`.
    pub status: &'a str,
    /// The result (completed) or the reason (otherwise).
    pub text: &'a str,
    /// The process's exit code.
    pub exit_code: i32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_tool_calls_are_spaced_in_time_and_bounded_in_bytes() {
        use std::time::{Duration, Instant};
        let t0 = Instant::now();
        let mut gate = PartialGate::default();
        assert!(gate.admit(t0, 10), "the first partial event goes out");
        assert!(!gate.admit(t0 + Duration::from_millis(50), 10), "too soon after the last");
        assert!(gate.admit(t0 + PARTIAL_INTERVAL, 1000));
        // A value that grows to 4 MB, offered every 100 ms: the total stays within the budget.
        let (mut sent, mut events) = (0, 0);
        for i in 2..400u32 {
            let size = i as usize * 10_000;
            if gate.admit(t0 + PARTIAL_INTERVAL * i, size) {
                sent += size;
                events += 1;
            }
        }
        assert!(sent + 1010 <= PARTIAL_BUDGET && events > 3, "{events} events, {sent} bytes");
    }
}
