//! One model reply as the loop sees it, whichever dialect produced it: the XML dialect's
//! [`crate::run::stream`] and the native one's [`crate::run::native`] both return a [`Reply`]
//! and show it on a [`Screen`].

use crate::run::llm::{ApiError, StopReason, Usage};
pub(crate) use crate::run::session::events::call_id;
use crate::run::session::events::Events;
use crate::run::tools::Call;
use crate::run::ui::term::Term;

/// Where a streamed reply is shown: the terminal, and `--json` events for request `turn`.
pub struct Screen<'a> {
    /// Human output.
    pub term: &'a mut Term,
    /// Machine-readable events.
    pub events: &'a mut Events,
    /// The request number (1-based over the whole task), for events and call ids.
    pub turn: u32,
    /// `--one-tool-per-reply`: only the first call of a reply runs (Cline's parallel tool
    /// calling off); otherwise every complete call does.
    pub one_tool: bool,
    /// The reply's text so far as the model wrote it (in XML, its tool tags too): what stays
    /// in the history when the client cancels the reply (Cline's `abortStream`).
    pub said: String,
    /// The latest usage the stream reported: counted even when the reply then fails, as Cline
    /// counts a failed stream's tokens and cost.
    pub usage: Usage,
}

impl<'a> Screen<'a> {
    /// A screen for request `turn`, nothing said or reported yet.
    pub fn new(term: &'a mut Term, events: &'a mut Events, turn: u32, one_tool: bool) -> Self {
        Screen { term, events, turn, one_tool, said: String::new(), usage: Usage::default() }
    }

    /// Shows streamed text and sends it as a `text` event.
    pub(crate) fn text(&mut self, s: &str) {
        // The event first: text the person saw is in the `--json` stream when Ctrl-C comes.
        self.events.text(self.turn, s);
        self.term.text(s);
    }

    /// Sends the complete `tool_call` event for call `n` (0-based) of this request.
    pub(crate) fn tool_call(&mut self, n: usize, name: &str, params: &[(String, String)]) {
        self.events.tool_call(self.turn, &call_id(self.turn, n), name, params);
    }

    /// Sends the `tool_result` event of call `n`, one that did not run: `text` is what the model
    /// is told instead.
    pub(crate) fn tool_result(&mut self, n: usize, name: &str, text: &str) {
        self.events.tool_result(&call_id(self.turn, n), name, false, text, None);
    }

    /// Sends a partial `tool_call` event for call `n` while it streams, if its values (`bytes`
    /// of names and values) have grown enough ([`Events::partial_tool_call`]); `params` builds
    /// them only then.
    pub(crate) fn partial_tool_call<V: AsRef<str>>(
        &mut self,
        n: usize,
        name: &str,
        bytes: usize,
        params: impl FnOnce() -> Vec<(String, V)>,
    ) {
        self.events.partial_tool_call(self.turn, n, name, bytes, params);
    }
}

/// A complete call of a reply, to be run.
#[derive(Debug)]
pub struct Planned {
    /// The call.
    pub call: Call,
    /// Its position: the XML tool block's ordinal, or the native call's index among the
    /// reply's calls (`parts`), whose result it is.
    pub n: usize,
}

/// One reply, read as far as the loop needs it.
#[derive(Debug, Default)]
pub struct Reply {
    /// The reply text, as it goes into the conversation history.
    pub text: String,
    /// The complete calls to run, in order (only the first with `--one-tool-per-reply`).
    pub calls: Vec<Planned>,
    /// With `--one-tool-per-reply`: names of further XML tool blocks (never executed).
    pub extra_tools: Vec<String>,
    /// A tool block that was still open when the stream ended (never executed).
    pub open_tool: Option<String>,
    /// Why the model stopped, if the server said.
    pub stop: Option<StopReason>,
    /// This request's token usage.
    pub usage: Usage,
    /// True when the stream ended — or, after its first tool, the wait for the rest ran out —
    /// without the server's final usage: missing counts are then estimated at about 4
    /// characters per token.
    pub usage_estimated: bool,
    /// Native dialect: thinking blocks and every tool call, for history (see `native/`).
    pub parts: Vec<crate::run::llm::Part>,
    /// Native dialect: a call's arguments were not JSON and no call can run; what the model
    /// is told.
    pub invalid_call: Option<String>,
    /// Native dialect: `tool` was not a native call but one written as XML in the text.
    pub recovered: bool,
    /// Native dialect: calls past the most one reply may make, left out of it (never run, not
    /// in history); the model is told how many.
    pub dropped_calls: usize,
}

impl Reply {
    /// Whether its calls are answered in the next user message's text — the XML dialect's,
    /// or calls written as XML in a native reply's text — rather than each on its own native
    /// call (a native reply's reasoning alone does not make its calls native).
    pub(crate) fn answered_in_text(&self) -> bool {
        self.parts.is_empty() || self.recovered
    }

    /// Fills in the counts the server did not send (it sent no final usage): about 4 bytes per
    /// token of what was sent (`sent` bytes) and of what came back (`received` bytes), the
    /// output never above the request's cap, and marks the usage estimated.
    pub(crate) fn estimate_usage(&mut self, sent: usize, received: usize, cap: Option<u64>) {
        self.usage_estimated = true;
        let out = self.usage.output.max(estimate_tokens(received));
        self.usage.output = cap.map_or(out, |cap| out.min(cap));
        if self.usage.input == 0 {
            self.usage.input = estimate_tokens(sent);
        }
    }

    /// Nothing at all came back: no text, no call, no reasoning, and not cut by the output
    /// limit (a reply that only thought, or was cut while thinking, is answered, not asked
    /// again: the same request would be cut the same way).
    pub(crate) fn is_empty(&self) -> bool {
        self.says_nothing() && self.parts.is_empty() && self.stop != Some(StopReason::MaxTokens)
    }

    /// No text and no call: what goes into the history is [`crate::run::prompt::NO_RESPONSE`].
    pub(crate) fn says_nothing(&self) -> bool {
        self.text.trim().is_empty() && !self.parts.iter().any(|p| matches!(p, crate::run::llm::Part::ToolUse(_)))
    }
}

/// About 4 bytes of text per token.
pub(crate) fn estimate_tokens(bytes: usize) -> u64 {
    bytes.div_ceil(4) as u64
}

/// Bytes of a request: the system prompt and every message's text and parts, each call's
/// result once (`llm::providers::history::request_bytes`).
pub(crate) fn request_bytes(system: &str, messages: &[crate::run::llm::Message]) -> usize {
    system.len() + crate::run::llm::providers::history::request_bytes(messages, 0)
}

/// Most bytes of text one reply may stream before the first tool closes. A real model's
/// output limit is far below this; a server streaming without end is refused, not buffered.
pub(crate) const MAX_REPLY_TEXT: usize = 16 << 20;

/// A reply refused for passing [`MAX_REPLY_TEXT`] (text, or thinking in the native dialect)
/// before its first complete tool: fatal, never retried.
pub(crate) fn reply_too_long() -> ApiError {
    ApiError::fatal(format!(
        "the model's reply passed {} MiB of text without a complete tool call; it was refused (no model writes that much in one reply)",
        MAX_REPLY_TEXT >> 20
    ))
}
