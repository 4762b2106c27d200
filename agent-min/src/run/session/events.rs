//! `--json`: the run as NDJSON events on stdout, one object per line.
//!
//! Every line is one `Event` — its `type` and fields — plus `version` (`VERSION`, the
//! schema's), `task_id` and `ts` (milliseconds since the Unix epoch). The format is these types:
//! `agent-min/schemas/events.schema.json` is generated from them (`session::schemas`) and the
//! end-to-end tests validate every event they read against that file. A change to an event is a
//! schema change and a bump of `VERSION`. Without `--json` every method is a no-op.
//! Partial `tool_call` events are rationed by bytes alone (`PartialGate`, one per call, here
//! for both dialects) and show at most 1 KiB of each value, with the sizes so far: a streamed
//! file must not turn into one event per delta, nor its progress into copies of it, and the
//! same reply gives the same events on a fast machine and a slow one, from a local server and
//! from a model that streams a few hundred bytes a second. A `tool_result` leaves out its echo
//! of a file the complete call carries (`LeftOut`). `text` and
//! `reasoning` deltas are coalesced in time (`Lines`: at most one event per `TEXT_INTERVAL`;
//! their concatenation is still exactly the text with its keys masked, any other event first
//! flushes what is pending, and so does a pause in the stream (`Delta::Quiet`); an end that may be a key's start waits for the next delta, see
//! `redact::Streamed`). The complete `tool_call` event is never dropped.

use std::io::Write;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::run::budget::accounting::Totals;
use crate::run::llm::{ApiError, Usage};

/// The version of the event format, in every event's `version` field.
pub(crate) const VERSION: u32 = 6;

/// Least time between two `text` (or `reasoning`) events of one stream: at most ten a second,
/// whatever the server's token rate.
pub(crate) const TEXT_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);

/// Pending text is flushed at this size even inside [`TEXT_INTERVAL`].
const TEXT_FLUSH_BYTES: usize = 64 * 1024;

/// Where events go (nowhere without `--json`).
pub struct Events {
    /// Whether lines are written (`--json`); the writer is in `shared`.
    writes: bool,
    /// Who else reads the events as they happen (the ACP front end turns them into session
    /// updates): every event, before the line is written, whatever `completion` closed.
    tap: Option<Tap>,
    task_id: String,
    /// What this stream shares with its copies on other threads.
    shared: std::sync::Arc<Shared>,
    /// The call whose partial `tool_call` events are being rationed (request, call number),
    /// and its gate.
    partial: Option<((u32, usize), PartialGate)>,
}

/// A reader of the events as they happen, in the loop's thread.
pub(crate) type Tap = Box<dyn FnMut(&Event) + Send>;

/// The state of one event stream that its copies share.
#[derive(Default)]
struct Shared {
    /// The task's totals as of the last request (for a `completion` said from another thread).
    totals: std::sync::Mutex<Totals>,
    /// The lines and the text held back for them, under one lock: a `completion` said from
    /// another thread (Ctrl-C, SIGTERM, the watchdog) first sends the text the loop's thread
    /// still held back, and no line goes out after it.
    lines: std::sync::Mutex<Lines>,
}

/// Where the lines go, and the text held back to bound them per second.
#[derive(Default)]
struct Lines {
    /// stdout for `--json`.
    out: Option<Box<dyn Write + Send>>,
    /// The `completion` event went out: it is the last line, whoever writes after it.
    closed: bool,
    /// Text not yet sent: (reasoning rather than text, turn, text).
    pending: Option<(bool, u32, String)>,
    /// The masking of the pending text's stream (a key split across two events), which holds
    /// back the end of what was sent that may be a key's start.
    masked: crate::run::ui::redact::Streamed,
    /// When the last `text` or `reasoning` event went out.
    last_text: Option<std::time::Instant>,
}

/// A partial `tool_call` event after the first of a call waits until the call's values have
/// grown by at least this fraction (1/N) of their size at its previous partial event...
pub(crate) const PARTIAL_GROWTH: usize = 4;

/// ...and by at least this many bytes.
pub(crate) const PARTIAL_MIN_BYTES: usize = 4096;

/// A partial event shows at most this many bytes of each value (its start, cut at a character
/// boundary), with every value's whole size so far (`sizes`): partial events show what a call
/// is and how far it has streamed, and the complete event carries the values whole, so a
/// streamed file is in the output once, not again in its progress events.
pub(crate) const PARTIAL_VALUE_BYTES: usize = 1024;

/// Decides which partial `tool_call` events of one call are sent: the first, then one each
/// time the values have grown by a [`PARTIAL_GROWTH`]th (at least [`PARTIAL_MIN_BYTES`]). By
/// bytes, never by time, so the output of a streamed write is the same on a loaded machine as
/// on an idle one; a value of `n` bytes gets about `log(n / 4 KiB) / log(1.25)` of them.
#[derive(Debug, Default, Clone)]
pub(crate) struct PartialGate {
    sent_any: bool,
    last: usize,
}

impl PartialGate {
    /// Whether a partial event may go out now that the call's names and values are `bytes`
    /// long (and counts it).
    pub(crate) fn admit(&mut self, bytes: usize) -> bool {
        let grown =
            !self.sent_any || bytes >= self.last.saturating_add(PARTIAL_MIN_BYTES.max(self.last / PARTIAL_GROWTH));
        if grown {
            self.sent_any = true;
            self.last = bytes;
        }
        grown
    }
}

/// A value as a partial event shows it: its first [`PARTIAL_VALUE_BYTES`] at most, cut after
/// the secrets in all of it are masked (a key across the cut would show its start), and
/// without an end that may be a key's start.
fn value_start(value: &str) -> String {
    // Still streaming: an end that may be the start of a key is not shown either.
    let masked = crate::run::ui::redact::shown_so_far(value);
    let mut end = masked.len().min(PARTIAL_VALUE_BYTES);
    while !masked.is_char_boundary(end) {
        end -= 1;
    }
    masked[..end].to_string()
}

/// What a `tool_result` event's `result` leaves out of the text the model got, because the
/// complete `tool_call` event carries it already: a streamed write is then in the output once,
/// not twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum LeftOut {
    /// The body of the `<final_file_content path="…">` element (Cline's echo of the file as
    /// saved) is the call's `content` parameter byte for byte and is left out: the text the
    /// model got has `content` right after the first `">` and line break that follow the first
    /// `<final_file_content path="` of `result`.
    FinalFileContent,
}

/// Where the body of `result`'s first `<final_file_content path="…">` element is `content`
/// byte for byte (its byte range), if it is: the path must hold no `"` or line break, so the
/// body's place is found again from what precedes it ([`LeftOut::FinalFileContent`]).
fn final_file_content(result: &str, content: &str) -> Option<std::ops::Range<usize>> {
    const OPEN: &str = "<final_file_content path=\"";
    let path = result.find(OPEN)? + OPEN.len();
    let path_end = path + result[path..].find(['"', '\n'])?;
    let start = path_end + "\">\n".len();
    if !result[path_end..].starts_with("\">\n") {
        return None;
    }
    let end = start + content.len();
    (result.get(start..end)? == content && result[end..].starts_with("\n</final_file_content>")).then_some(start..end)
}

/// Who decided whether a tool call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum By {
    /// No approval needed: read-only inside the workspace, or a tool that changes nothing.
    Auto,
    /// `--yolo` approved it.
    Yolo,
    /// The person answered.
    User,
    /// Refused by policy (outside the workspace under `--yolo`).
    Policy,
}

/// What happened to an MCP server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum McpServerEvent {
    /// Started before the first request.
    Started,
    /// Died during the task.
    Crashed,
    /// Started again after a crash.
    Restarted,
    /// Stopped at the end.
    Stopped,
    /// Still starting at the first request (`starting`), it finished later: connected, or
    /// failed.
    Ready,
}

/// An MCP server's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum McpState {
    /// Running and listed.
    Connected,
    /// Still starting (its first run downloading itself, say): its tools are offered once it
    /// is connected (a `ready` event).
    Starting,
    /// Could not start, or died.
    Failed,
    /// `disabled` in the settings.
    Disabled,
}

/// What a `notice` event is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum NoticeKind {
    /// The reply called no tool; the model is reminded (Cline's `noToolsUsed`).
    NoToolUsed,
    /// The reply was cut at the output token limit, or ended inside a tool call.
    CutOff,
    /// The reply came back empty; it is asked for again.
    EmptyReply,
    /// Native dialect: a call written as XML text was recovered and runs.
    ToolCallRecovered,
    /// Native dialect: tools were sent and two replies in a row called none natively.
    ToolsIgnored,
    /// The context window: where its size came from, when it was not asked for.
    ContextWindow,
    /// Loop detection's warning, appended for the model after a call's result (the third
    /// identical call in a row).
    RepeatedCall,
    /// The server refused a request for its image: the request was sent again with each image
    /// named in text, as every later one is.
    ImagesRefused,
    /// Native dialect: the reply made more tool calls than one reply may; those past the
    /// limit were left out, and the model is told how many.
    CallsLeftOut,
}

/// One `--json` event: its `type` and fields (the line adds `version`, `task_id`, `ts`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Event {
    /// The first event.
    TaskStarted {
        /// Provider name.
        provider: String,
        /// Model name.
        model: String,
        /// The workspace.
        cwd: String,
        /// The task as given.
        task: String,
        /// Whether this run resumes a saved task.
        resumed: bool,
    },
    /// Reply text as shown (thinking tags and partial tags removed).
    Text {
        /// The request number.
        turn: u32,
        /// The text.
        text: String,
    },
    /// Reasoning/thinking deltas.
    Reasoning {
        /// The request number.
        turn: u32,
        /// The text.
        text: String,
    },
    /// A tool call: `partial` while it streams, then once complete, before it runs.
    ToolCall {
        /// The request number.
        turn: u32,
        /// `call_N`.
        call_id: String,
        /// The tool.
        tool: String,
        /// Still streaming.
        partial: bool,
        /// Parameter values by name; in a partial event, each cut to its first 1 KiB.
        params: IndexMap<String, String>,
        /// Only in a partial event: each value's whole size so far, in bytes (UTF-8).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "IndexMap<String, u64>")]
        sizes: Option<IndexMap<String, u64>>,
        /// Native dialect: the model wrote this call as XML in its text instead of a native
        /// call, and it was recovered from there (`--no-recover-text-calls` turns this off).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        recovered: bool,
    },
    /// Whether the call runs, and who decided.
    Approval {
        /// `call_N`.
        call_id: String,
        /// The tool.
        tool: String,
        /// Whether it runs.
        approved: bool,
        /// Who decided.
        by: By,
        /// What the person said, if anything.
        feedback: Option<String>,
    },
    /// The text sent back to the model.
    ToolResult {
        /// `call_N`.
        call_id: String,
        /// The tool.
        tool: String,
        /// Whether it succeeded.
        ok: bool,
        /// The text (see `left_out`).
        result: String,
        /// What `result` leaves out of the text the model got; absent when nothing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schemars(with = "LeftOut")]
        left_out: Option<LeftOut>,
    },
    /// The focus chain's checklist changed: the model gave a new one in a call's
    /// `task_progress` (Cline's `task_progress` message).
    TaskProgress {
        /// The request number.
        turn: u32,
        /// The call that carried it (`call_N`).
        call_id: String,
        /// The checklist as the model wrote it (trimmed): Markdown `- [ ]` / `- [x]` items.
        list: String,
        /// Its items.
        total: u32,
        /// Its items ticked.
        done: u32,
    },
    /// A request to the model was sent; its reply (text, calls, `api_request`) follows. The
    /// wait for a local model's first token can be long: this says the run is not stuck.
    RequestStarted {
        /// The request number.
        turn: u32,
        /// 1 for the first try, then one more per retry of the same request.
        attempt: u32,
    },
    /// Something the person is told on the terminal about the run (the same text).
    Notice {
        /// The request number.
        turn: u32,
        /// What it is about.
        kind: NoticeKind,
        /// What the terminal shows.
        message: String,
    },
    /// A request finished with usage.
    ApiRequest {
        /// The request number.
        turn: u32,
        /// Prompt tokens.
        tokens_in: u64,
        /// Generated tokens.
        tokens_out: u64,
        /// Prompt tokens read from the cache.
        cache_read: u64,
        /// Prompt tokens written to the cache.
        cache_write: u64,
        /// The stream ended without the server's final counts.
        estimated: bool,
        /// US dollars; `null` for a model without prices.
        cost_usd: Option<f64>,
        /// The task's totals.
        totals: Totals,
    },
    /// A failed request will be tried again.
    Retry {
        /// The request number.
        turn: u32,
        /// Which attempt failed.
        attempt: u32,
        /// Most attempts.
        max_retries: u32,
        /// Seconds until the next.
        delay_s: f64,
        /// The HTTP status, if any.
        status: Option<u16>,
        /// What went wrong.
        error: String,
    },
    /// History was cut to fit the context window.
    ContextTruncated {
        /// The request number.
        turn: u32,
        /// `threshold` or `context_error`.
        #[schemars(extend("enum" = ["threshold", "context_error"]))]
        reason: String,
        /// The estimate that crossed the threshold.
        estimated_tokens: u64,
        /// The window's limit.
        limit_tokens: u64,
        /// Messages removed.
        removed_messages: u64,
        /// Repeated file reads dropped.
        deduplicated_reads: u64,
    },
    /// A checkpoint of the workspace was taken.
    Checkpoint {
        /// The request number.
        turn: u32,
        /// What `agent-min checkpoints` takes.
        number: u32,
        /// The shadow repository's commit.
        hash: String,
        /// The tool it followed (`start` before the first edit or command).
        tool: String,
        /// Files changed since the previous checkpoint.
        files_changed: u32,
    },
    /// The task failed.
    Error {
        /// Why.
        message: String,
        /// The limit that stopped it.
        #[schemars(extend("enum" = ["max_turns", "max_cost", "timeout", null]))]
        limit: Option<String>,
    },
    /// A hook script ran.
    Hook {
        /// Which hook.
        #[schemars(extend("enum" = ["TaskStart", "TaskResume", "TaskCancel", "TaskComplete", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact", "Notification"]))]
        hook: String,
        /// Where the script came from.
        #[schemars(extend("enum" = ["global", "workspace"]))]
        source: String,
        /// The script.
        script: String,
        /// It ran and answered.
        ok: bool,
        /// Its exit code, if it exited.
        exit_code: Option<i32>,
        /// It was stopped at its time limit.
        timed_out: bool,
        /// How long it ran.
        duration_ms: u64,
        /// It asked to cancel the task.
        cancel: bool,
        /// Characters of context it added.
        context_chars: u64,
        /// Its `errorMessage`.
        error_message: String,
        /// What went wrong.
        problem: Option<String>,
    },
    /// An MCP server's start, death, restart or stop.
    McpServer {
        /// Its name.
        server: String,
        /// What happened.
        event: McpServerEvent,
        /// Its state now.
        state: McpState,
        /// Tools listed.
        tools: u64,
        /// Resources plus templates listed.
        resources: u64,
        /// Why it failed.
        error: Option<String>,
    },
    /// A log message an MCP server sent (`notifications/message`), as Cline shows it
    /// (`mcp_notification`).
    McpNotification {
        /// The server.
        server: String,
        /// Its level (`debug`, `info`, `warning`, `error`, …; `info` when it gave none).
        level: String,
        /// `[logger] data`, as Cline writes it (cut to 2,000 characters).
        message: String,
    },
    /// A `use_mcp_tool` (`tool`) or `access_mcp_resource` (`uri`) call that reached the hub.
    McpCall {
        /// `call_N`.
        call_id: String,
        /// The server.
        server: String,
        /// It succeeded (not an error, a timeout, or a result with `isError`).
        ok: bool,
        /// How long it took.
        duration_ms: u64,
        /// What went wrong.
        error: Option<String>,
        /// The tool called (`use_mcp_tool`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool: Option<String>,
        /// The resource read (`access_mcp_resource`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uri: Option<String>,
    },
    /// A call needed a person's answer and there is no terminal: nothing ran, the run stops.
    ApprovalNeeded {
        /// The call.
        call_id: String,
        /// Its tool.
        tool: String,
        /// Its parameters (trimmed values).
        params: IndexMap<String, String>,
        /// How to let the run go on.
        fix: String,
    },
    /// The last event, however the run ends.
    Completion {
        /// How it ended.
        #[schemars(extend("enum" = ["completed", "failed", "approval_needed", "interrupted", "terminated"]))]
        status: String,
        /// The result (completed).
        result: Option<String>,
        /// The reason (otherwise).
        reason: Option<String>,
        /// The process's exit code.
        exit_code: i32,
        /// The task's totals.
        totals: Totals,
    },
}

/// One line of the stream: the event, then what every event carries.
#[derive(Serialize)]
struct Line<'a> {
    #[serde(flatten)]
    event: &'a Event,
    version: u32,
    task_id: &'a str,
    ts: u64,
}

impl Events {
    fn new(out: Option<Box<dyn Write + Send>>, tap: Option<Tap>) -> Self {
        let writes = out.is_some();
        let shared = Shared { lines: std::sync::Mutex::new(Lines { out, ..Lines::default() }), ..Shared::default() };
        Events { writes, tap, task_id: String::new(), shared: std::sync::Arc::new(shared), partial: None }
    }

    /// No events.
    pub(crate) fn off() -> Self {
        Events::new(None, None)
    }

    /// Events written to `out` (stdout for `--json`).
    pub fn to(out: Box<dyn Write + Send>) -> Self {
        Events::new(Some(out), None)
    }

    /// Events given to `tap` as they happen, and written nowhere (the ACP front end).
    pub(crate) fn tapped(tap: Tap) -> Self {
        Events::new(None, Some(tap))
    }

    /// The same lines, for another thread (the Ctrl-C handler): its events go after the text
    /// this one holds back; off if these are not written.
    pub(crate) fn for_other_thread(&self) -> Self {
        match self.writes {
            true => Events {
                writes: true,
                tap: None,
                task_id: self.task_id.clone(),
                shared: self.shared.clone(),
                partial: None,
            },
            false => Events::off(),
        }
    }

    /// Whether events go anywhere (`--json`).
    pub(crate) fn is_on(&self) -> bool {
        self.writes || self.tap.is_some()
    }

    /// Sets the task id stamped on every event.
    pub(crate) fn set_task_id(&mut self, id: &str) {
        self.task_id = id.to_string();
    }

    /// Runs `f` with the lines locked: what it sends goes out together.
    fn with_lines<R>(&mut self, f: impl FnOnce(&mut Self, &mut Lines) -> R) -> R {
        let shared = self.shared.clone();
        // A thread that panicked while writing left the lines whole.
        let mut lines = shared.lines.lock().unwrap_or_else(|e| e.into_inner());
        f(self, &mut lines)
    }

    /// Writes one event (the hook and MCP events are built where they happen), after any text
    /// held back.
    pub(crate) fn emit(&mut self, event: &Event) {
        self.with_lines(|me, lines| {
            me.send_text(lines, true);
            me.write_as(lines, event, event);
        });
    }

    /// Sends the text held back to coalesce it, now (the stream paused: the client must not
    /// wait for the next byte to see it), but for an end that may be the start of a key.
    pub(crate) fn send_held_text(&mut self) {
        if self.is_on() {
            self.with_lines(|me, lines| me.send_text(lines, false));
        }
    }

    /// Sends the text held back, if any (as any other event does first).
    #[cfg(test)]
    fn flush_text(&mut self) {
        self.with_lines(|me, lines| me.send_text(lines, true));
    }

    /// Sends the text held back: all of it at the end of its stream (or before another event),
    /// else all but an end that may be the start of a key (a key across two events would pass
    /// the masking half by half; that end goes with the next).
    fn send_text(&mut self, lines: &mut Lines, end: bool) {
        let Some((reasoning, turn, text)) = lines.pending.take() else { return };
        let mut text = lines.masked.push(&text);
        if end {
            text += &lines.masked.end();
        } else if lines.masked.holds() {
            // An empty pending text keeps the stream's kind and turn for the held end.
            lines.pending = Some((reasoning, turn, String::new()));
        }
        if !text.is_empty() {
            lines.last_text = Some(std::time::Instant::now());
            let event = if reasoning { Event::Reasoning { turn, text } } else { Event::Text { turn, text } };
            self.write_as(lines, &event, &event);
        }
    }

    /// Adds streamed text (or reasoning) to what is held back, and sends it once
    /// [`TEXT_INTERVAL`] has passed since the last text event.
    fn push_text(&mut self, reasoning: bool, turn: u32, text: &str) {
        if !self.is_on() || text.is_empty() {
            return;
        }
        self.with_lines(|me, lines| {
            if lines.pending.as_ref().is_some_and(|(r, t, _)| (*r, *t) != (reasoning, turn)) {
                me.send_text(lines, true);
            }
            let pending = lines.pending.get_or_insert_with(|| (reasoning, turn, String::new()));
            pending.2.push_str(text);
            let due = lines.last_text.is_none_or(|t| t.elapsed() >= TEXT_INTERVAL);
            if due || pending.2.len() >= TEXT_FLUSH_BYTES {
                me.send_text(lines, false);
            }
        });
    }

    /// Gives `tapped` to the tap and writes `event` (the same event, told otherwise).
    fn write_as(&mut self, lines: &mut Lines, tapped: &Event, event: &Event) {
        if let Some(tap) = self.tap.as_mut() {
            tap(tapped);
        }
        if lines.closed {
            return; // `completion` was the last line
        }
        let Some(out) = lines.out.as_mut() else { return };
        let ts = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
        let line = Line { event, version: VERSION, task_id: &self.task_id, ts };
        let Ok(text) = serde_json::to_string(&line) else { return };
        let mut line = crate::run::ui::term::json_visible(&crate::run::ui::redact::apply(&text)).into_owned();
        line.push('\n');
        // A closed stdout (the reader went away) must not stop the task.
        let _ = out.write_all(line.as_bytes()).and_then(|_| out.flush());
    }

    /// The task started (or resumed).
    pub(crate) fn task_started(&mut self, provider: &str, model: &str, cwd: &str, task: &str, resumed: bool) {
        self.emit(&Event::TaskStarted {
            provider: provider.into(),
            model: model.into(),
            cwd: cwd.into(),
            task: task.into(),
            resumed,
        });
    }

    /// Reply text as shown (thinking tags and partial tags removed).
    pub(crate) fn text(&mut self, turn: u32, text: &str) {
        self.push_text(false, turn, text);
    }

    /// Reasoning text from the model.
    pub(crate) fn reasoning(&mut self, turn: u32, text: &str) {
        self.push_text(true, turn, text);
    }

    /// The focus chain's checklist changed (`call_id` carried it).
    pub(crate) fn task_progress(&mut self, turn: u32, call_id: &str, list: &str, total: u32, done: u32) {
        self.emit(&Event::TaskProgress { turn, call_id: call_id.into(), list: list.into(), total, done });
    }

    /// A request was sent (`attempt` 1, or a retry).
    pub(crate) fn request_started(&mut self, turn: u32, attempt: u32) {
        // A retried request streams its calls again, under the same ids: each starts afresh.
        self.partial = None;
        self.emit(&Event::RequestStarted { turn, attempt });
    }

    /// What the terminal was told about the run.
    pub(crate) fn notice(&mut self, turn: u32, kind: NoticeKind, message: &str) {
        self.emit(&Event::Notice { turn, kind, message: message.into() });
    }

    /// A complete tool call, once, before it runs (while it streams: [`Events::partial_tool_call`]).
    pub(crate) fn tool_call(&mut self, turn: u32, call_id: &str, tool: &str, params: &[(String, String)]) {
        self.tool_call_as(turn, call_id, tool, params, false);
    }

    /// A partial `tool_call` event for call `n` (0-based) of request `turn`, still streaming,
    /// if the call's [`PartialGate`] admits `bytes` (the size of its names and values so far),
    /// each value cut to [`PARTIAL_VALUE_BYTES`]. Called on every delta: the call id and the
    /// values (`params`) are built only for an event that goes out.
    pub(crate) fn partial_tool_call<V: AsRef<str>>(
        &mut self,
        turn: u32,
        n: usize,
        tool: &str,
        bytes: usize,
        params: impl FnOnce() -> Vec<(String, V)>,
    ) {
        if !self.is_on() {
            return;
        }
        let gate = match &mut self.partial {
            Some((call, gate)) if *call == (turn, n) => gate,
            slot => &mut slot.insert(((turn, n), PartialGate::default())).1,
        };
        if gate.admit(bytes) {
            let params = params();
            let sizes = params.iter().map(|(k, v)| (k.clone(), v.as_ref().len() as u64)).collect();
            self.emit(&Event::ToolCall {
                turn,
                call_id: call_id(turn, n),
                tool: tool.into(),
                partial: true,
                params: params.iter().map(|(k, v)| (k.clone(), value_start(v.as_ref()))).collect(),
                sizes: Some(sizes),
                recovered: false,
            });
        }
    }

    /// A complete `tool_call` event, saying whether the call was recovered from the reply's text.
    pub(crate) fn tool_call_as(
        &mut self,
        turn: u32,
        call_id: &str,
        tool: &str,
        params: &[(String, String)],
        recovered: bool,
    ) {
        if !self.is_on() {
            return;
        }
        self.emit(&Event::ToolCall {
            turn,
            call_id: call_id.into(),
            tool: tool.into(),
            partial: false,
            params: params.iter().cloned().collect(),
            sizes: None,
            recovered,
        });
    }

    /// Whether a tool call may run, and who decided.
    pub(crate) fn approval(&mut self, call_id: &str, tool: &str, approved: bool, by: By, feedback: Option<&str>) {
        self.emit(&Event::Approval {
            call_id: call_id.into(),
            tool: tool.into(),
            approved,
            by,
            feedback: feedback.map(Into::into),
        });
    }

    /// What a tool call gave back to the model. `content` is the call's `content` parameter,
    /// if it has one: when the result echoes it as the file's final content, the `--json` line
    /// leaves the echo out ([`LeftOut`]); the tap (the editor) gets the whole text.
    pub(crate) fn tool_result(&mut self, call_id: &str, tool: &str, ok: bool, result: &str, content: Option<&str>) {
        if !self.is_on() {
            return;
        }
        let whole =
            Event::ToolResult { call_id: call_id.into(), tool: tool.into(), ok, result: result.into(), left_out: None };
        // An empty `content` leaves nothing out.
        match content.filter(|c| !c.is_empty()).and_then(|c| final_file_content(result, c)) {
            Some(r) => {
                let line = Event::ToolResult {
                    call_id: call_id.into(),
                    tool: tool.into(),
                    ok,
                    result: [&result[..r.start], &result[r.end..]].concat(),
                    left_out: Some(LeftOut::FinalFileContent),
                };
                self.with_lines(|me, lines| {
                    me.send_text(lines, true);
                    me.write_as(lines, &whole, &line);
                });
            }
            None => self.emit(&whole),
        }
    }

    /// A model request finished: its tokens and cost, and the task's totals.
    pub(crate) fn api_request(&mut self, turn: u32, u: &Usage, estimated: bool, cost: Option<f64>, totals: Totals) {
        *self.shared.totals.lock().unwrap_or_else(|e| e.into_inner()) = totals.clone();
        self.emit(&Event::ApiRequest {
            turn,
            tokens_in: u.input,
            tokens_out: u.output,
            cache_read: u.cache_read,
            cache_write: u.cache_write,
            estimated,
            cost_usd: cost.map(crate::run::budget::accounting::round),
            totals,
        });
    }

    /// A failed request will be tried again after `delay_s` seconds.
    pub(crate) fn retry(&mut self, turn: u32, attempt: u32, max: u32, delay_s: f64, e: &ApiError) {
        self.emit(&Event::Retry {
            turn,
            attempt,
            max_retries: max,
            delay_s,
            status: e.status,
            error: e.message.clone(),
        });
    }

    /// Part of the history was dropped to fit the context window.
    pub(crate) fn context_truncated(
        &mut self,
        turn: u32,
        reason: &str,
        estimated_tokens: u64,
        limit: u64,
        removed: usize,
        dedup: usize,
    ) {
        self.emit(&Event::ContextTruncated {
            turn,
            reason: reason.into(),
            estimated_tokens,
            limit_tokens: limit,
            removed_messages: removed as u64,
            deduplicated_reads: dedup as u64,
        });
    }

    /// A checkpoint of the workspace was taken (see `crate::run::checkpoints`).
    pub(crate) fn checkpoint(&mut self, turn: u32, number: u32, hash: &str, tool: &str, files_changed: u32) {
        self.emit(&Event::Checkpoint { turn, number, hash: hash.into(), tool: tool.into(), files_changed });
    }

    /// The task failed: why, and which limit if a limit stopped it.
    pub(crate) fn error(&mut self, message: &str, limit: Option<&str>) {
        self.emit(&Event::Error { message: message.into(), limit: limit.map(Into::into) });
    }

    /// A tool call needs a person's approval and nobody can answer (no terminal): the run stops
    /// here, resumable; `fix` says how to let it go on.
    pub(crate) fn approval_needed(&mut self, call_id: &str, tool: &str, params: &[(String, String)], fix: &str) {
        self.emit(&Event::ApprovalNeeded {
            call_id: call_id.into(),
            tool: tool.into(),
            params: params.iter().cloned().collect(),
            fix: fix.into(),
        });
    }

    /// Notes the task's totals (before its first request: a resumed task's earlier ones).
    pub(crate) fn note_totals(&mut self, totals: Totals) {
        *self.shared.totals.lock().unwrap_or_else(|e| e.into_inner()) = totals;
    }

    /// The task's totals as of its last request.
    pub(crate) fn last_totals(&self) -> Totals {
        self.shared.totals.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The end, always the last event: how the run ended (`completed`, `failed`,
    /// `approval_needed`, `interrupted`, `terminated`), the result or the reason, the process's
    /// exit code and the task's totals. Said once: later events are dropped.
    pub(crate) fn completion(&mut self, end: &Ended<'_>, totals: Totals) {
        let (result, reason) = match end.status {
            "completed" => (Some(end.text.to_string()), None),
            _ => (None, Some(end.text.to_string())),
        };
        let event = Event::Completion { status: end.status.into(), result, reason, exit_code: end.exit_code, totals };
        self.with_lines(|me, lines| {
            me.send_text(lines, true);
            me.write_as(lines, &event, &event);
            lines.closed = true;
        });
    }
}

/// How a run ended, as its `completion` event says it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ended<'a> {
    /// `completed`, `failed`, `approval_needed`, `interrupted` or `terminated`.
    pub status: &'a str,
    /// The result (completed) or the reason (otherwise).
    pub text: &'a str,
    /// The process's exit code.
    pub exit_code: i32,
}

/// The id of call `n` (0-based) of request `turn` in events: `call_3` for the first,
/// `call_3_2` for the second.
pub(crate) fn call_id(turn: u32, n: usize) -> String {
    if n == 0 {
        format!("call_{turn}")
    } else {
        format!("call_{turn}_{}", n + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_tool_calls_are_rationed_by_bytes_not_time() {
        let mut gate = PartialGate::default();
        assert!(gate.admit(10), "the first partial event goes out");
        assert!(!gate.admit(100), "too little growth");
        assert!(gate.admit(10 + PARTIAL_MIN_BYTES));
        // A value that grows 16 bytes at a time to `n`: progress every quarter of growth (a
        // few dozen events for any size), each showing at most 1 KiB of it.
        for (n, most) in [(50_000usize, 12), (262_144, 20), (1 << 20, 26), (64 << 20, 45)] {
            let mut gate = PartialGate::default();
            let events = (0..=n).step_by(16).filter(|&size| gate.admit(size)).count();
            assert!((3..=most).contains(&events), "{n}: {events} events");
        }
    }

    #[test]
    fn a_partial_event_shows_the_start_of_each_value_and_every_size() {
        let sink = Sink::default();
        let mut events = Events::to(Box::new(sink.clone()));
        let long = format!("{}é{}", "x".repeat(PARTIAL_VALUE_BYTES - 1), "y".repeat(5000));
        let params = || vec![("path".to_string(), "a.rs".to_string()), ("content".to_string(), long.clone())];
        events.partial_tool_call(1, 0, "write_to_file", 4 + long.len(), params);
        events.tool_call(1, "call_1", "write_to_file", &params());
        let got = sink.events();
        assert_eq!(got[0]["partial"], true);
        assert_eq!(got[0]["params"]["path"], "a.rs");
        // Cut at a character boundary: the two-byte é would cross the limit.
        assert_eq!(got[0]["params"]["content"], "x".repeat(PARTIAL_VALUE_BYTES - 1));
        assert_eq!(got[0]["sizes"], serde_json::json!({"path": 4, "content": long.len()}));
        assert_eq!((&got[1]["partial"], &got[1]["params"]["content"]), (&false.into(), &long.as_str().into()));
        assert!(got[1].get("sizes").is_none(), "the complete event carries the values whole");
        // A key across the cut is masked before the cut, not shown in part.
        let key = "Qz-partial-cut-test-0123456789";
        crate::run::ui::redact::add(key);
        let value = format!("{}{key}{}", "x".repeat(PARTIAL_VALUE_BYTES - 10), "y".repeat(100));
        events.partial_tool_call(2, 0, "write_to_file", value.len(), || vec![("content".to_string(), value.as_str())]);
        let shown = sink.events()[2]["params"]["content"].as_str().unwrap().to_string();
        assert!(shown.ends_with("[REDACTED]") && !shown.contains("Qz-par"), "{}", &shown[1000..]);
    }

    /// What a test reads back: the event lines.
    type Sink = crate::run::ui::term::Captured;

    impl Sink {
        fn events(&self) -> Vec<serde_json::Value> {
            let text = self.text();
            text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
        }
    }

    #[test]
    fn text_is_coalesced_exactly_and_flushed_before_any_other_event() {
        let sink = Sink::default();
        let mut events = Events::to(Box::new(sink.clone()));
        let deltas: Vec<String> = (0..2000).map(|i| format!("tok{i} ")).collect();
        for d in &deltas {
            events.text(1, d);
        }
        events.tool_call(1, "call_1", "read_file", &[("path".into(), "a".into())]);
        let got = sink.events();
        let texts: Vec<&serde_json::Value> = got.iter().filter(|e| e["type"] == "text").collect();
        let joined: String = texts.iter().map(|e| e["text"].as_str().unwrap()).collect();
        assert_eq!(joined, deltas.concat(), "the text events together are exactly the text");
        assert!(texts.len() < 50, "{} text events for 2000 deltas sent within moments", texts.len());
        assert_eq!(got.last().unwrap()["type"], "tool_call", "pending text went out before the call");
        // A new turn's text does not join the previous turn's.
        events.text(2, "a");
        events.reasoning(2, "b");
        events.text(3, "c");
        events.flush_text();
        let tail: Vec<(String, u64)> = sink.events()[got.len()..]
            .iter()
            .map(|e| (e["type"].as_str().unwrap().to_string(), e["turn"].as_u64().unwrap()))
            .collect();
        assert_eq!(tail, [("text".into(), 2), ("reasoning".into(), 2), ("text".into(), 3)]);
    }

    #[test]
    fn a_key_split_across_deltas_is_in_no_event_even_in_part() {
        let key = "Qz-events-split-key-0123456789";
        crate::run::ui::redact::add(key);
        let sink = Sink::default();
        let mut events = Events::to(Box::new(sink.clone()));
        // The first delta is sent at once (no text event yet): the key's start is held back.
        events.text(1, "key: Qz-events-sp");
        events.text(1, "lit-key-0123456789 ok");
        // So is the end of a value that streams: the key's start is not shown, its size is.
        let value = "k=Qz-events-split-k";
        events.partial_tool_call(1, 0, "write_to_file", value.len(), || vec![("content".to_string(), value)]);
        let got = sink.events();
        let texts: Vec<&str> =
            got.iter().filter(|e| e["type"] == "text").map(|e| e["text"].as_str().unwrap()).collect();
        assert_eq!(texts, ["key: ", "[REDACTED] ok"], "{got:?}");
        let call = got.last().unwrap();
        assert_eq!((&call["params"]["content"], &call["sizes"]["content"]), (&"k=".into(), &value.len().into()));
        // A stream that ends inside the key: what was held is masked, not shown.
        events.reasoning(2, "think Qz-events-split");
        events.flush_text();
        let thought: String = sink.events()[got.len()..].iter().map(|e| e["text"].as_str().unwrap()).collect();
        assert_eq!(thought, "think [REDACTED]");
    }

    /// Ctrl-C ends the run from another thread: its `completion` goes out after the text the
    /// loop's thread still held back (by time, and a key's start, masked as the stream ended
    /// there), and is the last line.
    #[test]
    fn a_completion_from_another_thread_sends_the_held_text_first() {
        let key = "Qz-events-other-thread-0123456789";
        crate::run::ui::redact::add(key);
        let sink = Sink::default();
        let mut events = Events::to(Box::new(sink.clone()));
        events.text(1, "Hello"); // the first text event goes out at once
        events.text(1, " world, Qz-events-other"); // within 100 ms, and a key's start
        let mut other = events.for_other_thread();
        let ended = Ended { status: "interrupted", text: "interrupted with Ctrl-C (SIGINT)", exit_code: 130 };
        std::thread::spawn(move || other.completion(&ended, Totals::default())).join().unwrap();
        events.text(1, "-thread-0123456789 and on");
        events.emit(&Event::RequestStarted { turn: 2, attempt: 1 });
        let got = sink.events();
        let text: String = got.iter().filter(|e| e["type"] == "text").map(|e| e["text"].as_str().unwrap()).collect();
        assert_eq!(text, "Hello world, [REDACTED]", "{got:?}");
        assert_eq!(got.last().unwrap()["type"], "completion", "{got:?}");
        assert_eq!(got.last().unwrap()["exit_code"], 130);
    }

    #[test]
    fn partial_calls_are_rationed_but_the_first_and_the_complete_one_always_go_out() {
        let sink = Sink::default();
        let mut events = Events::to(Box::new(sink.clone()));
        let mut built = 0;
        for n in 0..500 {
            let params = || {
                built += 1;
                vec![("content".to_string(), "x".repeat(n))]
            };
            events.partial_tool_call(1, 0, "write_to_file", "content".len() + n, params);
        }
        events.tool_call(1, "call_1", "write_to_file", &[("content".into(), "x".repeat(500))]);
        events.partial_tool_call(2, 0, "write_to_file", 8, || vec![("content".to_string(), "y")]);
        let calls = sink.events();
        let partial = calls.iter().filter(|e| e["partial"] == true && e["call_id"] == "call_1").count();
        assert_eq!(partial, 1, "500 bytes never grow to the second partial event's 4 KiB");
        assert_eq!(built, 1, "the values are built only for an event that goes out");
        assert_eq!(calls.iter().filter(|e| e["partial"] == false).count(), 1);
        assert_eq!(calls.last().unwrap()["call_id"], "call_2", "a new call's first partial event goes out");
        assert!(calls.iter().all(|e| e.get("recovered").is_none()), "not recovered: the field is left out");
        // A retry of request 2 streams call_2 again: its first partial event goes out again.
        events.partial_tool_call(2, 0, "write_to_file", 9, || vec![("content".to_string(), "yy")]);
        events.request_started(2, 2);
        events.partial_tool_call(2, 0, "write_to_file", 8, || vec![("content".to_string(), "y")]);
        let calls = sink.events();
        let retried: Vec<_> =
            calls.iter().filter(|e| e["call_id"] == "call_2").map(|e| &e["params"]["content"]).collect();
        assert_eq!(retried, ["y", "y"], "the retry's first partial event, not the first attempt's second");
    }

    /// A write's result echoes the file as saved; when that is the call's `content` byte for
    /// byte, the `--json` line leaves the echo out (the complete call carries it) and says so,
    /// and the text the model got is found again from the two. A tap gets it whole.
    #[test]
    fn a_result_that_echoes_the_written_content_leaves_it_out_of_the_line() {
        let echo = |path: &str, body: &str| {
            format!("Saved to {path}.\n\n<final_file_content path=\"{path}\">\n{body}\n</final_file_content>\n\nIMPORTANT: …")
        };
        let content = "fn main() {\n    println!(\"<final_file_content path=\\\"x\\\">\");\n}\n";
        let sink = Sink::default();
        let mut events = Events::to(Box::new(sink.clone()));
        let cases = [
            (echo("src/main.rs", content), Some(content), true),
            (echo("src/main.rs", "formatted"), Some(content), false), // saved otherwise: all of it
            (echo("a\"b.rs", content), Some(content), false),         // no sure place for it
            (echo("a\nb.rs", content), Some(content), false),
            (echo("e.rs", ""), Some(""), false), // nothing to leave out
            (format!("{}\n</final_file_content>", echo("e.rs", content)), Some(""), false),
            (echo("src/main.rs", content), None, false), // a call without `content`
            ("Command executed.".to_string(), Some(content), false),
        ];
        for (result, content, _) in &cases {
            events.tool_result("call_1", "write_to_file", true, result, *content);
        }
        for ((result, content, left_out), line) in cases.iter().zip(sink.events()) {
            let shown = line["result"].as_str().unwrap();
            if *left_out {
                assert_eq!(line["left_out"], "final_file_content", "{result:?}");
                // Put back as the field's documentation says.
                let at = shown.find("<final_file_content path=\"").unwrap();
                let at = at + shown[at..].find("\">\n").unwrap() + 3;
                assert_eq!([&shown[..at], content.unwrap(), &shown[at..]].concat(), *result);
                assert!(shown.len() + content.unwrap().len() == result.len());
            } else {
                assert!(line.get("left_out").is_none(), "{result:?}");
                assert_eq!(shown, result);
            }
        }
        // The editor's tap shows the result as the model got it.
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let into = seen.clone();
        let mut tapped = Events::tapped(Box::new(move |e| into.lock().unwrap().push(e.clone())));
        tapped.tool_result("call_1", "write_to_file", true, &cases[0].0, Some(content));
        let seen = seen.lock().unwrap();
        assert!(matches!(&seen[0], Event::ToolResult { result, left_out: None, .. } if *result == cases[0].0));
    }

    /// A streamed write gives the same partial events however fast it streams: they depend on
    /// the bytes alone. (They were spaced in time as well, so a local server's fast stream got
    /// one or two of them and a model's slow stream every one the bytes allowed: the --json
    /// output of a write differed by half the file between the two.)
    #[test]
    fn partial_events_depend_on_bytes_not_on_time() {
        let run = || {
            let sink = Sink::default();
            let mut events = Events::to(Box::new(sink.clone()));
            let n = 1 << 20;
            for size in (0..=n).step_by(16) {
                let params = || vec![("content".to_string(), "x".repeat(size - "content".len().min(size)))];
                events.partial_tool_call(1, 0, "write_to_file", size, params);
            }
            sink.events().iter().map(|e| e["sizes"]["content"].as_u64().unwrap() as usize).collect::<Vec<_>>()
        };
        let sizes = run();
        let mut gate = PartialGate::default();
        let expected: Vec<usize> = (0..=1usize << 20)
            .step_by(16)
            .filter(|&size| gate.admit(size))
            .map(|size| size - "content".len().min(size))
            .collect();
        assert_eq!(sizes, expected, "every partial event the bytes allow, within moments");
        assert!(sizes.len() >= 5, "{sizes:?}");
        assert_eq!(run(), sizes, "the same events on a second run");
    }

    /// The bytes of one event as `--json` writes it.
    fn line(e: &Event) -> serde_json::Value {
        let l = Line { event: e, version: VERSION, task_id: "T", ts: 5 };
        serde_json::from_str(&serde_json::to_string(&l).unwrap()).unwrap()
    }

    #[test]
    fn an_event_line_has_its_type_and_fields_then_version_task_and_time() {
        let v = line(&Event::Text { turn: 2, text: "hi".into() });
        assert_eq!(
            v,
            serde_json::json!({"type": "text", "turn": 2, "text": "hi", "version": VERSION, "task_id": "T", "ts": 5})
        );
        let v = line(&Event::McpCall {
            call_id: "call_1".into(),
            server: "s".into(),
            ok: true,
            duration_ms: 3,
            error: None,
            tool: None,
            uri: Some("file:///a".into()),
        });
        assert_eq!(v["uri"], "file:///a");
        assert!(v.get("tool").is_none(), "{v}");
        // Events read back as the same typed value; an unknown field is refused.
        let e = Event::Approval { call_id: "c".into(), tool: "t".into(), approved: true, by: By::Yolo, feedback: None };
        let back: Event = serde_json::from_value(serde_json::to_value(&e).unwrap()).unwrap();
        assert_eq!(back, e);
        let mut extra = serde_json::to_value(&e).unwrap();
        extra["surprise"] = 1.into();
        assert!(serde_json::from_value::<Event>(extra).is_err());
    }
}
