//! Streaming one reply: feed each text delta to the streaming parser, show text as it arrives,
//! and stop reading as soon as the first tool block closes.
//!
//! This is the only module that uses `parser_core`; everything after it sees a [`Reply`].

use parser_core::{display::strip_partial_tag, Block, StreamParser};

use crate::run::llm::{ApiError, Delta, Flow, Message, StopReason, Transport, Usage};
use crate::run::prompt;
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
}

impl Screen<'_> {
    fn text(&mut self, s: &str) {
        self.term.text(s);
        self.events.text(self.turn, s);
    }

    fn tool_call(&mut self, name: &str, params: &[(String, String)], partial: bool) {
        self.events.tool_call(self.turn, &call_id(self.turn), name, params, partial);
    }
}

/// The id of the tool call of request `turn` (one tool runs per request).
pub fn call_id(turn: u32) -> String {
    format!("call_{turn}")
}

/// One reply, read as far as the loop needs it.
#[derive(Debug, Default)]
pub struct Reply {
    /// The reply text, as it goes into the conversation history.
    pub text: String,
    /// The first complete tool block, if one closed.
    pub tool: Option<Call>,
    /// Names of further tool blocks seen in the same reply (never executed).
    pub extra_tools: Vec<String>,
    /// A tool block that was still open when the stream ended (never executed).
    pub open_tool: Option<String>,
    /// Why the model stopped, if the server said.
    pub stop: Option<StopReason>,
    /// This request's token usage.
    pub usage: Usage,
    /// True when the stream was stopped (at the first tool) before the server sent its final
    /// usage: missing counts are then estimated at about 4 characters per token.
    pub usage_estimated: bool,
    /// Native dialect: thinking blocks and every tool call, for history (see `native/`).
    pub parts: Vec<crate::run::llm::Part>,
    /// Native dialect: the first call's arguments were not JSON; what the model is told.
    pub invalid_call: Option<String>,
}

impl Reply {
    /// Nothing at all came back.
    pub fn is_empty(&self) -> bool {
        self.text.trim().is_empty() && !self.parts.iter().any(|p| matches!(p, crate::run::llm::Part::ToolUse(_)))
    }
}

/// Streams one reply from `transport`, presenting it on `screen`.
pub fn read_reply(
    transport: &mut dyn Transport,
    system: &str,
    messages: &[Message],
    screen: &mut Screen<'_>,
) -> Result<Reply, ApiError> {
    let mut parser = StreamParser::new();
    let mut shown: Vec<String> = Vec::new();
    let mut reply = Reply::default();
    let mut stopped_early = false;
    transport.send(system, messages, &mut |delta| {
        match delta {
            Delta::Text(s) => {
                let progress = parser.push_str(&s);
                present(&parser, progress.changed.start, &mut shown, screen);
                if let Some(call) = first_complete_tool(&parser, progress.completed) {
                    screen.tool_call(&call.name, &call.trimmed_params(), false);
                    reply.tool = Some(call);
                    stopped_early = true;
                    return Flow::Stop;
                }
                if let Some(partial) = first_tool_if_changed(&parser, progress.changed.start) {
                    let params: Vec<(String, String)> = partial
                        .trimmed_params()
                        .into_iter()
                        .map(|(name, value)| {
                            let value = strip_partial_closing_tag(&name, &value).to_string();
                            (name, value)
                        })
                        .collect();
                    screen.tool_call(&partial.name, &params, true);
                }
            }
            Delta::Reasoning(s) => {
                screen.term.reasoning(&s);
                screen.events.reasoning(screen.turn, &s);
            }
            Delta::Usage(u) => reply.usage = u,
            Delta::Stop(r) => reply.stop = Some(r),
            Delta::Error(_) | Delta::Block(_) => {} // errors: the transport; blocks: native/
        }
        Flow::Continue
    })?;
    if !stopped_early {
        // Text pushed as `&str` cannot end inside a character, so `finish` cannot fail here; it
        // closes nothing (a tool still open stays partial), it only settles the last text block.
        let _ = parser.finish();
        present(&parser, 0, &mut shown, screen);
    }
    screen.term.newline();
    let first_ordinal = reply.tool.as_ref().map(|_| 0);
    for block in parser.blocks().iter() {
        if let Block::ToolUse(t) = block {
            match first_ordinal {
                Some(first) if t.ordinal > first => reply.extra_tools.push(t.name.to_string()),
                None if t.partial => reply.open_tool = Some(t.name.to_string()),
                _ => {}
            }
        }
    }
    reply.text = parser.text().to_string();
    if stopped_early && reply.stop.is_none() {
        reply.usage_estimated = true;
        let sent: usize = messages.iter().map(|m| m.content.len()).sum::<usize>() + system.len();
        reply.usage.output = reply.usage.output.max(estimate_tokens(reply.text.len()));
        if reply.usage.input == 0 {
            reply.usage.input = estimate_tokens(sent);
        }
    }
    if stopped_early && parser.len() > tool_index(&parser).map_or(0, |i| i + 1) {
        reply.text.push_str("\n\n");
        reply.text.push_str(prompt::INTERRUPTED_BY_TOOL);
    }
    Ok(reply)
}

/// A streaming parameter value without the start of its closing tag (`.</pat` → `.`), as
/// Cline's `removeClosingTag` shows partial values.
fn strip_partial_closing_tag<'a>(name: &str, value: &'a str) -> &'a str {
    let close = format!("</{name}>");
    match value.rfind('<') {
        Some(i) if close.starts_with(&value[i..]) => value[..i].trim_end(),
        _ => value,
    }
}

/// About 4 bytes of text per token.
fn estimate_tokens(bytes: usize) -> u64 {
    bytes.div_ceil(4) as u64
}

/// Index of the first tool block.
fn tool_index(parser: &StreamParser) -> Option<usize> {
    parser.blocks().iter().position(|b| matches!(b, Block::ToolUse(_)))
}

/// The first tool block (ordinal 0) if it is among the blocks completed by this push.
fn first_complete_tool(parser: &StreamParser, completed: std::ops::Range<usize>) -> Option<Call> {
    completed.into_iter().find_map(|i| match parser.block(i)? {
        Block::ToolUse(t) if !t.partial && t.ordinal == 0 => Some(to_call(&t)),
        _ => None,
    })
}

/// The first tool block while it is still streaming, if this push changed it.
fn first_tool_if_changed(parser: &StreamParser, changed_from: usize) -> Option<Call> {
    let i = tool_index(parser).filter(|&i| i >= changed_from)?;
    match parser.block(i)? {
        Block::ToolUse(t) if t.partial => Some(to_call(&t)),
        _ => None,
    }
}

fn to_call(t: &parser_core::ToolUse<'_>) -> Call {
    Call {
        name: t.name.to_string(),
        params: t.params().iter().map(|p| (p.name.to_string(), p.value.to_string(), p.raw.to_string())).collect(),
    }
}

/// Prints what is new in the text blocks from `from` on. `shown[i]` is what has been printed
/// for block `i`; text only ever grows on screen.
fn present(parser: &StreamParser, from: usize, shown: &mut Vec<String>, screen: &mut Screen<'_>) {
    if tool_index(parser).is_some_and(|t| t < from) {
        return; // nothing after the first tool is shown: it will not be acted on
    }
    for i in from..parser.len() {
        let Some(block) = parser.block(i) else { break };
        let Block::Text { content, partial } = block else {
            if matches!(block, Block::ToolUse(_)) {
                return;
            }
            continue;
        };
        let text = display_text(content, partial);
        while shown.len() <= i {
            shown.push(String::new());
        }
        let done = &shown[i];
        if text.len() > done.len() && text.starts_with(done.as_str()) {
            if done.is_empty() && i > 0 {
                screen.term.newline();
            }
            screen.text(&text[done.len()..]);
            shown[i] = text;
        }
    }
}

/// Text as Cline's presenter shows it: `<thinking>` tags removed, and a trailing incomplete tag
/// dropped while the block is still streaming.
fn display_text(content: &str, partial: bool) -> String {
    let content = if partial { strip_partial_tag(content) } else { content };
    content
        .replace("<thinking>\n", "")
        .replace("<thinking>", "")
        .replace("\n</thinking>", "")
        .replace("</thinking>", "")
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// Replays fixed deltas; records how many it handed out before being told to stop.
    struct Fake {
        deltas: Vec<Delta>,
        handed: usize,
    }

    impl Transport for Fake {
        fn send(&mut self, _: &str, _: &[Message], on: &mut dyn FnMut(Delta) -> Flow) -> Result<(), ApiError> {
            for d in self.deltas.clone() {
                self.handed += 1;
                if on(d) == Flow::Stop {
                    break;
                }
            }
            Ok(())
        }
        fn provider(&self) -> &str {
            "fake"
        }
    }

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn read(deltas: &[&str], stop: Option<StopReason>) -> (Reply, String, usize, usize) {
        let mut d: Vec<Delta> = deltas.iter().map(|s| Delta::Text(s.to_string())).collect();
        if let Some(r) = stop {
            d.push(Delta::Stop(r));
        }
        let total = d.len();
        let mut fake = Fake { deltas: d, handed: 0 };
        let out = Shared::default();
        let mut term = Term::to_writer(Box::new(out.clone()));
        let mut events = Events::off();
        let mut screen = Screen { term: &mut term, events: &mut events, turn: 1 };
        let reply = read_reply(&mut fake, "", &[], &mut screen).unwrap();
        let shown = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        (reply, shown, fake.handed, total)
    }

    #[test]
    fn stops_reading_when_the_first_tool_closes() {
        let (reply, shown, handed, total) = read(
            &["I'll read it.\n<read_fi", "le>\n<path>src/a", ".rs</path>\n</read_file>", "\nmore text", " never read"],
            Some(StopReason::EndTurn),
        );
        let call = reply.tool.expect("a tool");
        assert_eq!(call.name, "read_file");
        assert_eq!(call.params, [("path".to_string(), "src/a.rs".to_string(), "src/a.rs".to_string())]);
        assert_eq!(handed, 3, "nothing after the closing tag is read");
        assert!(handed < total);
        assert_eq!(shown, "I'll read it.\n", "partial tags are never shown");
        assert!(reply.usage_estimated);
    }

    #[test]
    fn partial_values_lose_the_start_of_their_closing_tag() {
        assert_eq!(strip_partial_closing_tag("path", "src/a.rs</pa"), "src/a.rs");
        assert_eq!(strip_partial_closing_tag("path", "src/a.rs <"), "src/a.rs");
        assert_eq!(strip_partial_closing_tag("path", "a < b"), "a < b");
        assert_eq!(strip_partial_closing_tag("content", "<div>"), "<div>");
    }

    #[test]
    fn thinking_tags_are_not_shown() {
        let (reply, shown, ..) = read(&["<thinking>plan", " it</thinking>\nDone", "."], Some(StopReason::EndTurn));
        assert!(reply.tool.is_none());
        assert_eq!(shown, "plan it\nDone.\n");
        assert!(!reply.usage_estimated);
    }

    #[test]
    fn a_tool_still_open_at_the_end_is_reported_not_returned() {
        let (reply, ..) = read(&["<write_to_file>\n<path>a</path>\n<content>\nhalf"], Some(StopReason::MaxTokens));
        assert!(reply.tool.is_none());
        assert_eq!(reply.open_tool.as_deref(), Some("write_to_file"));
        assert_eq!(reply.stop, Some(StopReason::MaxTokens));
    }

    #[test]
    fn further_tools_in_the_same_delta_are_listed() {
        let two = "<list_files>\n<path>.</path>\n</list_files>\n<read_file>\n<path>x</path>\n</read_file>";
        let (reply, ..) = read(&[two], None);
        assert_eq!(reply.tool.unwrap().name, "list_files");
        assert_eq!(reply.extra_tools, ["read_file"]);
        assert!(reply.text.ends_with(prompt::INTERRUPTED_BY_TOOL));
    }

    #[test]
    fn write_content_keeps_its_raw_value() {
        let (reply, ..) =
            read(&["<write_to_file>\n<path>a.py</path>\n<content>\n    x = 1\n</content>\n</write_to_file>"], None);
        let call = reply.tool.unwrap();
        let raw = &call.params.iter().find(|p| p.0 == "content").unwrap().2;
        assert_eq!(raw, "\n    x = 1\n");
    }
}
