//! One streamed reply in the native dialect: text shown as it comes, reasoning shown dimmed and
//! kept (with Anthropic's signatures), and the streamed tool calls assembled into the same
//! [`Call`] the XML path produces — partial `tool_call` events while the first call's
//! arguments stream, then one event per complete call. The whole reply is read (parallel calls
//! and the final usage come at its end); every call runs in order, or, with
//! `--one-tool-per-reply`, the first one does and every further call gets Cline's
//! `toolAlreadyUsed` as its result.

use crate::run::llm::{
    json_bytes, ApiError, BlockDelta, Delta, Flow, Message, Part, StopReason, ToolUsePart, Transport,
};
use crate::run::native::args::{self, Args, Invalid};
use crate::run::native::mcp_call;
use crate::run::native::thinking_tags::ThinkingTags;
use crate::run::prompt;
use crate::run::reply::{call_id, reply_too_long, request_bytes, Planned, Reply, Screen, MAX_REPLY_TEXT};
use crate::run::tools::{self, Call};
use crate::run::ui::term::visible;

/// Most argument text kept per reply (all calls together); beyond it a call is refused.
pub(crate) const MAX_ARGUMENTS: usize = 8 << 20;

/// Most thinking kept per reply (blocks, signatures, redacted data); past it, as past
/// [`MAX_REPLY_TEXT`] of text, the reply is refused rather than cut (a cut thinking block or a
/// lost signature would be sent back wrong).
const MAX_THINKING: usize = 8 << 20;

/// Most tool calls kept per reply (each needs a result in history).
const MAX_CALLS: usize = 64;

/// What the model is told of the `n` calls of its reply past [`MAX_CALLS`]: they never ran
/// (Cline runs every call; a reply of more is rare, and a server streaming calls without end
/// must not grow the reply without bound).
pub(crate) fn calls_left_out(n: usize) -> String {
    let (calls, were, them) = if n == 1 { ("call", "was", "it") } else { ("calls", "were", "them") };
    format!(
        "[{n} more tool {calls} of your reply {were} not run: at most {MAX_CALLS} tool calls of one reply are run. Make {them} again if still needed.]"
    )
}

/// Most thinking blocks kept per reply.
const MAX_THINKING_BLOCKS: usize = 256;

/// Most of OpenRouter's reasoning objects kept per reply (a reply streams one or two per delta).
const MAX_DETAILS: usize = 100_000;

/// What a kept JSON object is charged against [`MAX_THINKING`] beyond its text: about what it
/// holds in memory besides (its map, its entries' headers), so that a server streaming many
/// tiny objects (`{"a":0}`, 7 bytes of text) is bounded in memory, not only in text.
const DETAIL_OVERHEAD: usize = 128;

/// A call being streamed, in the order calls started.
struct Pending {
    /// The server's index for it.
    index: usize,
    id: Option<String>,
    name: String,
    args: Args,
    too_big: bool,
    /// What the server attached to it (Google's `extra_content`).
    extra: Option<serde_json::Value>,
}

/// A block of a reply, in the order the blocks started.
enum Slot {
    /// The next of [`Assembly::thinking`].
    Thinking,
    /// [`Assembly::calls`]`[n]`.
    Call(usize),
    /// The text up to this byte was a block before what follows.
    TextEnd(usize),
}

/// Everything a native reply streams besides its usage and stop reason.
#[derive(Default)]
struct Assembly {
    text: String,
    /// Thinking and redacted thinking, in order.
    thinking: Vec<Part>,
    /// OpenRouter's reasoning objects (a part of their own after the thinking, so that the
    /// reasoning text streamed between them stays one block).
    details: Vec<serde_json::Value>,
    /// Bytes kept in `thinking`, `details` and the calls' `extra`.
    thinking_bytes: usize,
    calls: Vec<Pending>,
    arguments: usize,
    /// The first call's parameter count and decoded size when it was last shown.
    shown: (usize, usize),
    /// The blocks in the order they started, and where the text stood among them.
    order: Vec<Slot>,
    /// The text's length at the last [`Slot::TextEnd`].
    marked: usize,
    /// Calls past [`MAX_CALLS`], left out (the model is told how many), and the server's index
    /// and id of the last one, whose further fragments are not counted again.
    dropped: usize,
    last_dropped: Option<(usize, Option<String>)>,
    /// Whether the last fragment was a dropped call's.
    dropping: bool,
}

/// Streams one native reply from `transport`, presenting it on `screen`.
///
/// With `recover`, a reply that made no native call but wrote a complete call in Cline's XML
/// in its text runs that call (`Reply::recovered`, and its `tool_call` event says so).
pub fn read_reply(
    transport: &mut dyn Transport,
    system: &str,
    messages: &[Message],
    screen: &mut Screen<'_>,
    recover: bool,
) -> Result<Reply, ApiError> {
    let mut a = Assembly::default();
    let mut reply = Reply::default();
    let mut tags = ThinkingTags::default();
    let mut too_long = false;
    // Some servers never send usage (llama-cpp-python ignores `stream_options`).
    let mut got_usage = false;
    transport.send(system, messages, &mut |delta| {
        match delta {
            Delta::Text(s) => {
                if a.text.len() + s.len() > MAX_REPLY_TEXT {
                    too_long = true;
                    return Flow::Stop;
                }
                a.text.push_str(&s);
                screen.said.push_str(&s);
                show(screen, &tags.push(&s));
            }
            Delta::Reasoning(s) => {
                if !a.reasoning(&s) {
                    too_long = true;
                    return Flow::Stop;
                }
                screen.events.reasoning(screen.turn, &s);
                screen.term.reasoning(&visible(&s));
            }
            Delta::Block(BlockDelta::ThinkingStart) => {
                if !a.block(Part::Thinking { text: String::new(), signature: None }) {
                    too_long = true;
                    return Flow::Stop;
                }
            }
            Delta::Block(BlockDelta::Signature(sig)) => {
                if !a.signature(sig) {
                    too_long = true;
                    return Flow::Stop;
                }
            }
            Delta::Block(BlockDelta::RedactedThinking(data)) => {
                if !a.block(Part::RedactedThinking { data }) {
                    too_long = true;
                    return Flow::Stop;
                }
            }
            Delta::Block(BlockDelta::CallExtra { index, extra }) => {
                if !a.call_extra(index, extra) {
                    too_long = true;
                    return Flow::Stop;
                }
            }
            Delta::Block(BlockDelta::ReasoningDetails(details)) => {
                if !a.reasoning_details(details) {
                    too_long = true;
                    return Flow::Stop;
                }
            }
            Delta::Block(BlockDelta::ToolCall { index, id, name, arguments }) => {
                if let Some((name, params)) = a.call(index, id, name, &arguments) {
                    let (name, params) = partial_call(name, params);
                    let bytes = params.iter().map(|(k, v)| k.len() + v.len()).sum();
                    screen.partial_tool_call(0, &name, bytes, || params);
                }
            }
            Delta::Usage(u) => {
                screen.usage = u;
                reply.usage = u;
                got_usage = true;
            }
            Delta::Stop(r) => reply.stop = Some(r),
            Delta::Quiet => screen.events.send_held_text(),
            Delta::Error(_) => {} // handled by the transport
        }
        Flow::Continue
    })?;
    if too_long {
        screen.term.newline();
        return Err(reply_too_long());
    }
    if reply.stop.is_none() && a.calls.iter().any(|c| !c.too_big && c.args.finish() == Err(Invalid::Incomplete)) {
        // Every API says why a reply stopped; a stream that closed inside a call without
        // saying so was cut in transit (a proxy closing it, a connection that ended cleanly).
        // Asked again, as a dropped connection is, rather than blamed on the model.
        screen.term.newline();
        return Err(ApiError {
            status: None,
            message: "the stream ended inside a tool call without a stop reason (cut in transit)".to_string(),
            retryable: true,
            retry_after: None,
        });
    }
    show(screen, &tags.finish());
    screen.term.newline();
    let received = a.text.len() + a.thinking_bytes + a.arguments;
    let no_calls = a.calls.is_empty();
    a.finish(&mut reply, screen);
    if recover && no_calls {
        // Every call of the text runs, in order, as Cline's do (with one tool per reply, the
        // first; the others get Cline's toolAlreadyUsed).
        let (calls, open) = super::recover::text_calls(&reply.text);
        for (n, call) in calls.into_iter().enumerate() {
            if screen.one_tool && n > 0 {
                reply.extra_tools.push(call.name);
                continue;
            }
            let id = call_id(screen.turn, n);
            screen.events.tool_call_as(screen.turn, &id, &call.name, &call.shown_params(), true);
            reply.calls.push(Planned { call, n });
        }
        reply.recovered = !reply.calls.is_empty();
        match open {
            Some(name) if screen.one_tool && reply.recovered => reply.extra_tools.push(name),
            open => reply.open_tool = open,
        }
    }
    if !got_usage {
        reply.estimate_usage(request_bytes(system, messages), received, transport.max_output());
    }
    Ok(reply)
}

/// Shows reply text (control characters made visible) and sends it as an event.
fn show(screen: &mut Screen<'_>, s: &str) {
    if !s.is_empty() {
        // The event first, as `Screen::text` does.
        screen.events.text(screen.turn, s);
        screen.term.text(&visible(s));
    }
}

impl Assembly {
    /// Starts a thinking or redacted thinking block; false past the bounds on their number and
    /// total size.
    fn block(&mut self, part: Part) -> bool {
        let size = match &part {
            Part::Thinking { text, signature } => text.len() + signature.as_ref().map_or(0, String::len),
            Part::RedactedThinking { data } => data.len(),
            Part::ToolUse(_) | Part::Image(_) | Part::ReasoningDetails(_) | Part::TextEnd(_) => 0,
        };
        if self.thinking.len() >= MAX_THINKING_BLOCKS || self.thinking_bytes + size > MAX_THINKING {
            return false;
        }
        self.thinking_bytes += size;
        self.thinking.push(part);
        self.starts(Slot::Thinking);
        true
    }

    /// A block other than text starts: the text streamed since the last one was a block of
    /// its own before it.
    fn starts(&mut self, slot: Slot) {
        if self.text.len() > self.marked {
            self.marked = self.text.len();
            self.order.push(Slot::TextEnd(self.marked));
        }
        self.order.push(slot);
    }

    /// Whether the blocks came as the parts of a message without marks are sent: thinking,
    /// then text, then calls (each of them may be missing).
    fn in_usual_order(&self) -> bool {
        let mut stage = 0; // 0 thinking, 1 text, 2 calls
        for slot in &self.order {
            let at = match slot {
                Slot::Thinking => 0,
                Slot::TextEnd(_) => 1,
                Slot::Call(_) => 2,
            };
            if at < stage || at == 1 && stage == 1 {
                return false;
            }
            stage = at;
        }
        // Text after a call.
        !(stage == 2 && self.text.len() > self.marked)
    }

    /// Adds reasoning to the open thinking block (opening one); false past the bounds.
    fn reasoning(&mut self, s: &str) -> bool {
        if !matches!(self.thinking.last(), Some(Part::Thinking { .. }))
            && !self.block(Part::Thinking { text: String::new(), signature: None })
        {
            return false;
        }
        if self.thinking_bytes + s.len() > MAX_THINKING {
            return false;
        }
        if let Some(Part::Thinking { text, .. }) = self.thinking.last_mut() {
            self.thinking_bytes += s.len();
            text.push_str(s);
        }
        true
    }

    /// Adds OpenRouter's reasoning objects of one delta to the reply's (objects only: nothing
    /// else is one); false past the bounds on thinking, which charge each object what it holds
    /// in memory, not only its text ([`DETAIL_OVERHEAD`]), and on their number.
    fn reasoning_details(&mut self, details: Vec<serde_json::Value>) -> bool {
        for d in details.into_iter().filter(serde_json::Value::is_object) {
            let size = json_bytes(&d) + DETAIL_OVERHEAD;
            if self.thinking_bytes + size > MAX_THINKING || self.details.len() >= MAX_DETAILS {
                return false;
            }
            self.thinking_bytes += size;
            self.details.push(d);
        }
        true
    }

    /// Keeps what the server attached to call `index` (the last call at that index; a later
    /// object replaces an earlier one); false past the bounds on thinking, which it counts in.
    fn call_extra(&mut self, index: usize, extra: serde_json::Value) -> bool {
        let Some(call) = self.calls.iter_mut().rev().find(|c| c.index == index) else { return true };
        let old = call.extra.as_ref().map_or(0, |e| json_bytes(e) + DETAIL_OVERHEAD);
        let size = json_bytes(&extra) + DETAIL_OVERHEAD;
        if self.thinking_bytes - old + size > MAX_THINKING {
            return false;
        }
        self.thinking_bytes = self.thinking_bytes - old + size;
        call.extra = Some(extra);
        true
    }

    /// Signs the open thinking block (or a new one); false past the bounds.
    fn signature(&mut self, sig: String) -> bool {
        if self.thinking_bytes + sig.len() > MAX_THINKING {
            return false;
        }
        match self.thinking.last_mut() {
            Some(Part::Thinking { signature, .. }) => {
                self.thinking_bytes += sig.len();
                *signature = Some(sig);
                true
            }
            _ => self.block(Part::Thinking { text: String::new(), signature: Some(sig) }),
        }
    }

    /// Adds a fragment of call `index`. Returns the first call's name and params when this
    /// fragment changed what they show (for a partial event).
    fn call(
        &mut self,
        index: usize,
        id: Option<String>,
        name: Option<String>,
        arguments: &str,
    ) -> Option<(String, Vec<(String, String)>)> {
        // The server's index names the call; a new id at an index already used is a new call
        // (some OpenAI-compatible servers send every call whole at index 0).
        // A fragment without an id right after a dropped call, at its index, is its rest.
        if id.is_none() && self.dropping && self.last_dropped.as_ref().is_some_and(|(i, _)| *i == index) {
            return None;
        }
        let known = self.calls.iter().rposition(|c| c.index == index);
        let same = |p: &usize| match (&id, &self.calls[*p].id) {
            (Some(new), Some(old)) => new == old,
            _ => true,
        };
        let pos = match known.filter(same) {
            Some(p) => p,
            None if self.calls.len() >= MAX_CALLS => {
                let this = (index, id);
                let new = match &self.last_dropped {
                    Some((i, old)) => *i != this.0 || (this.1.is_some() && *old != this.1),
                    None => true,
                };
                if new {
                    self.dropped += 1;
                    self.last_dropped = Some(this);
                }
                self.dropping = true;
                return None;
            }
            None => {
                self.starts(Slot::Call(self.calls.len()));
                self.calls.push(Pending {
                    index,
                    id: None,
                    name: String::new(),
                    args: Args::new(),
                    too_big: false,
                    extra: None,
                });
                self.calls.len() - 1
            }
        };
        self.dropping = false;
        let call = &mut self.calls[pos];
        if let Some(id) = id {
            call.id.get_or_insert(id);
        }
        if let Some(name) = name {
            if call.name.is_empty() {
                call.name = name;
            }
        }
        if self.arguments + arguments.len() > MAX_ARGUMENTS {
            call.too_big = true;
        } else {
            self.arguments += arguments.len();
            call.args.push(arguments);
        }
        // The parameters are offered for a partial event when one starts or the values have
        // doubled since the last offer: each offer copies them, so the copies add up to O(n)
        // per call (`Events::partial_tool_call` then sends those its byte gate admits).
        let first = self.calls.first()?;
        let now = (first.args.params().len(), first.args.decoded());
        let grew = now.0 > self.shown.0 || now.1 >= self.shown.1.saturating_mul(2).max(1);
        if pos != 0 || first.name.is_empty() || !grew {
            return None;
        }
        self.shown = now;
        Some((first.name.clone(), first.args.params().to_vec()))
    }

    /// Turns the streamed calls into the reply: every valid call runs in order (only the first
    /// with `--one-tool-per-reply`), one cut off or invalid is answered with why; all of them
    /// go into history, each with an id.
    fn finish(mut self, reply: &mut Reply, screen: &mut Screen<'_>) {
        let mut calls = Vec::with_capacity(self.calls.len());
        for (n, c) in self.calls.iter().enumerate() {
            let id = c.id.clone().unwrap_or_else(|| format!("call_{}_{n}", screen.turn));
            let name = if c.name.is_empty() { "unknown".to_string() } else { c.name.clone() };
            let mut as_sent = None;
            // The output limit cut the reply right after the last call's name: no arguments is
            // not "a call without arguments" then, but one cut before them.
            let cut_before_arguments = reply.stop == Some(StopReason::MaxTokens)
                && n + 1 == self.calls.len()
                && c.args.raw().trim().is_empty();
            let outcome = if c.too_big {
                Err(Invalid::Malformed(format!("the arguments are longer than {MAX_ARGUMENTS} bytes")))
            } else if cut_before_arguments {
                Err(Invalid::Incomplete)
            } else {
                c.args.finish().map(|(params, sent)| {
                    as_sent = Some(sent);
                    params
                })
            };
            let mcp = outcome.as_ref().ok().and_then(|_| mcp_call::to_call(&name, c.args.raw()));
            let input = match (&mcp, as_sent) {
                // An MCP tool's input goes back as the model sent it, types and all.
                (Some(call), _) => call.untrimmed_param("arguments").unwrap_or("{}").to_string(),
                // So does every other valid call's, as Cline keeps it: `false`, not "false".
                (None, Some(sent)) => sent,
                (None, None) => args::object_text(c.args.params()),
            };
            // With one tool per reply, a further call is answered with Cline's toolAlreadyUsed;
            // otherwise every valid call runs, and one that cannot is answered here with why.
            let one_tool_extra = screen.one_tool && n > 0;
            let mut answer = one_tool_extra.then(|| prompt::tool_already_used(mcp_call::tool_name(&name)));
            if !one_tool_extra {
                match outcome {
                    Ok(params) => {
                        let call = mcp.unwrap_or_else(|| to_call(&name, params));
                        screen.tool_call(n, &call.name, &call.shown_params());
                        reply.calls.push(Planned { call, n });
                    }
                    Err(Invalid::Incomplete) => {
                        let shown = mcp_call::tool_name(&name).to_string();
                        if !screen.one_tool {
                            answer = Some(super::truncated_tool(&shown, reply.stop == Some(StopReason::MaxTokens)));
                        }
                        reply.open_tool.get_or_insert(shown);
                    }
                    Err(Invalid::Malformed(why)) => {
                        screen.term.warn(&format!(
                            "The model's {name} call has invalid JSON arguments ({why}); it was not executed."
                        ));
                        let text = tools::tool_error(&super::invalid_arguments(&name, &why));
                        // In `--json` as every call is: what could be read of it (an MCP tool's as
                        // `use_mcp_tool`), and its result.
                        let (shown, params) = partial_call(name.clone(), c.args.params().to_vec());
                        screen.tool_call(n, &shown, &params);
                        screen.tool_result(n, &shown, &text);
                        if !screen.one_tool {
                            answer = Some(text.clone());
                        }
                        reply.invalid_call.get_or_insert(text);
                    }
                }
            }
            calls.push(Some(Part::ToolUse(ToolUsePart { id, name, input, answer, extra: c.extra.clone() })));
        }
        let details = (!self.details.is_empty()).then(|| Part::ReasoningDetails(std::mem::take(&mut self.details)));
        // Only sealed thinking (Anthropic's, signed or redacted) must go back where it stood.
        let sealed = self
            .thinking
            .iter()
            .any(|p| matches!(p, Part::Thinking { signature: Some(_), .. } | Part::RedactedThinking { .. }));
        let usual = !sealed || self.in_usual_order();
        let mut thinking = std::mem::take(&mut self.thinking).into_iter();
        let mut parts = Vec::new();
        if usual {
            parts.extend(thinking.by_ref());
            parts.extend(details);
        } else {
            // Block for block, as they came: Anthropic refuses the thinking of an interleaved
            // reply moved ("`thinking` or `redacted_thinking` blocks in the latest assistant
            // message cannot be modified").
            for slot in &self.order {
                match slot {
                    Slot::Thinking => parts.extend(thinking.next()),
                    Slot::Call(n) => parts.extend(calls.get_mut(*n).and_then(Option::take)),
                    Slot::TextEnd(end) => parts.push(Part::TextEnd(*end)),
                }
            }
            if self.text.len() > self.marked {
                parts.push(Part::TextEnd(self.text.len()));
            }
            parts.extend(thinking);
            parts.extend(details);
        }
        parts.extend(calls.into_iter().flatten());
        reply.text = self.text;
        reply.parts = parts;
        reply.dropped_calls = self.dropped;
    }
}

/// A call still streaming as its partial event shows it: an MCP tool's function as
/// `use_mcp_tool`, whose `arguments` are its values so far in one JSON text — each cut first
/// where it may end with a key's start ([`crate::run::ui::redact::shown_so_far`]), which would
/// no longer be at the end of the value the event cuts.
fn partial_call(name: String, params: Vec<(String, String)>) -> (String, Vec<(String, String)>) {
    if mcp_call::tool_name(&name) == name {
        return (name, params);
    }
    let shown: Vec<_> =
        params.iter().map(|(k, v)| (k.clone(), crate::run::ui::redact::shown_so_far(v).into_owned())).collect();
    match mcp_call::params(&name, &args::object_text(&shown)) {
        Some(p) => ("use_mcp_tool".to_string(), p),
        None => (name, params),
    }
}

/// A native call as the tools expect it: the values as the model sent them (Cline's handlers
/// use a native call's JSON strings as they are, where the XML dialect's parser trims them).
fn to_call(name: &str, params: Vec<(String, String)>) -> Call {
    Call::read_as_cline(name, params.into_iter().map(|(k, v)| (k, v.clone(), v)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_keyed_by_index_and_a_new_id_at_a_used_index_is_a_new_call() {
        let mut a = Assembly::default();
        assert!(a.call(0, Some("c1".into()), Some("read_file".into()), "").is_none(), "nothing to show yet");
        a.call(1, Some("c2".into()), Some("list_files".into()), r#"{"path":"."}"#);
        let shown = a.call(0, None, None, r#"{"path":"a"#).expect("the first call's params changed");
        assert_eq!(shown, ("read_file".to_string(), vec![("path".to_string(), "a".to_string())]));
        assert!(a.call(1, None, None, " ").is_none(), "only the first call is shown while streaming");
        assert!(a.call(0, None, None, "").is_none(), "nothing new");
        a.call(0, None, None, r#"b"}"#);
        a.call(0, Some("c3".into()), Some("search_files".into()), "{}");
        let ids: Vec<_> = a.calls.iter().map(|c| c.id.clone().unwrap()).collect();
        assert_eq!(ids, ["c1", "c2", "c3"]);
        assert_eq!(a.calls[0].args.finish().unwrap().0, vec![("path".to_string(), "ab".to_string())]);
    }

    #[test]
    fn calls_past_the_most_are_counted_once_each_whatever_their_fragments() {
        let mut a = Assembly::default();
        for k in 0..MAX_CALLS + 3 {
            a.call(k, Some(format!("c{k}")), Some("read_file".into()), r#"{"path":"#);
            a.call(k, None, None, r#""a"}"#);
        }
        // Some servers send every call at index 0, each with a new id.
        a.call(0, Some("d1".into()), Some("read_file".into()), "{}");
        a.call(0, None, None, " ");
        a.call(0, Some("d2".into()), Some("read_file".into()), "{}");
        assert_eq!((a.calls.len(), a.dropped), (MAX_CALLS, 5));
        assert_eq!(a.calls[0].args.raw(), r#"{"path":"a"}"#, "a dropped call's rest went to no kept call");
        assert_eq!(calls_left_out(1), format!("[1 more tool call of your reply was not run: at most {MAX_CALLS} tool calls of one reply are run. Make it again if still needed.]"));
    }

    #[test]
    fn a_streaming_mcp_call_shows_no_start_of_a_key_inside_its_arguments() {
        crate::run::ui::redact::add("Qz-mcp-partial-key-0123456789");
        let name = format!("{}0mcp0login", crate::run::mcp::native::server_key("mcp-partial-test"));
        let params = vec![("user".to_string(), "me".to_string()), ("token".to_string(), "Qz-mcp-par".to_string())];
        let (shown, values) = partial_call(name, params.clone());
        assert_eq!(shown, "use_mcp_tool");
        let arguments = &values.iter().find(|(k, _)| k == "arguments").unwrap().1;
        assert_eq!(arguments, r#"{"user":"me","token":""}"#);
        assert_eq!(partial_call("write_to_file".into(), params.clone()), ("write_to_file".to_string(), params));
    }

    #[test]
    fn partial_events_copy_o_n_in_total() {
        let mut a = Assembly::default();
        a.call(0, Some("c".into()), Some("write_to_file".into()), r#"{"absolutePath":"f","content":""#);
        let mut copied = 0;
        let n = 100_000;
        for _ in 0..n {
            if let Some((_, params)) = a.call(0, None, None, "x") {
                copied += params.iter().map(|(k, v)| k.len() + v.len()).sum::<usize>();
            }
        }
        assert!(copied <= 4 * n, "copied {copied} bytes of partial params for {n} bytes of arguments");
        assert!(copied >= n, "the partial values were shown as they grew");
    }

    #[test]
    fn reasoning_objects_stay_apart_from_the_thinking_and_are_bounded_in_number_and_memory() {
        let mut a = Assembly::default();
        // OpenRouter streams each piece of reasoning both as text and as an object.
        for piece in ["Read ", "both."] {
            assert!(a.reasoning(piece));
            assert!(a.reasoning_details(vec![serde_json::json!({"type": "reasoning.text", "text": piece}), 7.into()]));
        }
        assert_eq!(a.thinking, [Part::Thinking { text: "Read both.".into(), signature: None }], "one block");
        assert_eq!(a.details.len(), 2, "objects only");
        // A server streaming tiny objects is refused at the bound, charged their memory.
        let tiny = || vec![serde_json::json!({"a": 0}); 1000];
        let mut rounds = 0;
        while a.reasoning_details(tiny()) {
            rounds += 1;
            assert!(rounds <= MAX_DETAILS / 1000, "never refused");
        }
        assert!(a.details.len() <= MAX_DETAILS && a.thinking_bytes <= MAX_THINKING);
        assert!(a.details.len() * (7 + DETAIL_OVERHEAD) <= MAX_THINKING);
    }

    #[test]
    fn thinking_is_kept_in_order_with_signatures_and_bounded() {
        let mut a = Assembly::default();
        a.block(Part::Thinking { text: String::new(), signature: None });
        a.reasoning("plan ");
        a.reasoning("it");
        a.signature("S1".into());
        a.block(Part::RedactedThinking { data: "R".into() });
        a.reasoning("unsigned");
        assert_eq!(
            a.thinking,
            [
                Part::Thinking { text: "plan it".into(), signature: Some("S1".into()) },
                Part::RedactedThinking { data: "R".into() },
                Part::Thinking { text: "unsigned".into(), signature: None },
            ]
        );
        let big = "x".repeat(MAX_THINKING / 2 + 1);
        assert!(a.reasoning(&big));
        assert!(!a.reasoning(&big), "past the bound: refused, not cut");
        assert!(a.thinking_bytes <= MAX_THINKING);
        let kept =
            (0..2 * MAX_THINKING_BLOCKS).filter(|_| a.block(Part::RedactedThinking { data: String::new() })).count();
        assert_eq!(a.thinking.len(), MAX_THINKING_BLOCKS);
        assert_eq!(kept, MAX_THINKING_BLOCKS - 3, "every block past the bound is refused");
    }

    #[test]
    fn absolute_path_is_the_tools_path() {
        let pairs = |p: &[(&str, &str)]| p.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>();
        let c = to_call("write_to_file", pairs(&[("absolutePath", "/w/a"), ("content", "x\n")]));
        assert_eq!((c.param("path"), c.param("content")), (Some("/w/a"), Some("x\n")));
        // Cline's `path || absolutePath`: a non-empty `path` wins, an empty one does not.
        let both = to_call("write_to_file", pairs(&[("absolutePath", "/w/a"), ("path", "b"), ("content", "")]));
        assert_eq!(both.param("path"), Some("b"));
        let empty = to_call("replace_in_file", pairs(&[("path", ""), ("absolutePath", "/w/a"), ("diff", "d")]));
        assert_eq!(empty.param("path"), Some("/w/a"));
        // Only the file tools read it (Cline's read_file has `path` alone).
        assert_eq!(to_call("read_file", pairs(&[("absolutePath", "/w/a")])).param("path"), None);
    }

    /// Cline's handlers use a native call's values as the model sent them: a regex of spaces,
    /// a path with a space, a command's trailing newline are not trimmed (the XML dialect's
    /// parser trims them).
    #[test]
    fn native_values_are_used_as_sent() {
        let c = to_call("search_files", vec![("path".into(), ".".into()), ("regex".into(), " +$".into())]);
        assert_eq!(c.param("regex"), Some(" +$"));
        assert_eq!(to_call("search_files", vec![("regex".into(), "\t".into())]).param("regex"), Some("\t"));
    }
}
