//! Streaming one reply: feed each text delta to the streaming parser, show text as it arrives,
//! and collect every tool block as it closes — or, with `--one-tool-per-reply` (Cline's
//! parallel tool calling off), stop reading as soon as the first one closes.
//!
//! The XML dialect's side of a reply; everything after it sees a [`Reply`] (shared with the
//! native dialect, `native/reply.rs`).

use std::time::{Duration, Instant};

use parser_core::{Block, StreamParser};

use crate::run::llm::{ApiError, Delta, Flow, Message, Transport};
use crate::run::reply::{reply_too_long, request_bytes, Planned, Reply, Screen, MAX_REPLY_TEXT};
use crate::run::tools::{content_of, Call};
use crate::run::ui::shown::ShownText;

/// How long the rest of a reply is read, after its first tool closed, for the usage the
/// server sends at its end.
pub(crate) const USAGE_WAIT: Duration = Duration::from_secs(2);

/// Streams one reply from `transport`, presenting it on `screen`.
///
/// Linear in the reply: each delta is pushed into the parser once, text blocks are shown
/// from where they were left (`ShownText`), and the first tool's partial `tool_call` events
/// are built only when `--json` wants one (`Events::partial_tool_call`). Once the first tool closes, the
/// rest is read — never shown, parsed or run — only until the server's usage arrives or
/// `USAGE_WAIT` passes, so the token counts are the server's and not estimates.
pub fn read_reply(
    transport: &mut dyn Transport,
    system: &str,
    messages: &[Message],
    screen: &mut Screen<'_>,
) -> Result<Reply, ApiError> {
    let mut parser = StreamParser::new();
    let mut shown: Vec<ShownText> = Vec::new();
    let mut reply = Reply::default();
    let mut tool_at: Option<usize> = None;
    let mut drain_until: Option<Instant> = None;
    // A usage report counts as final once no text followed it (Anthropic sends one at the
    // start of a reply, with the input only, and the final one at its end).
    let mut usage_is_final = false;
    let mut too_long = false;
    transport.send(system, messages, &mut |delta| {
        if let Some(until) = drain_until {
            return match delta {
                Delta::Usage(u) => {
                    screen.usage = u;
                    reply.usage = u;
                    usage_is_final = true;
                    Flow::Stop
                }
                Delta::Stop(r) => {
                    reply.stop = Some(r);
                    Flow::Drain(until)
                }
                _ => Flow::Drain(until), // what follows the tool is discarded
            };
        }
        match delta {
            Delta::Text(s) => {
                usage_is_final = false;
                if parser.text().len() + s.len() > MAX_REPLY_TEXT {
                    too_long = true;
                    return Flow::Stop;
                }
                screen.said.push_str(&s);
                let progress = parser.push_str(&s);
                if !screen.one_tool {
                    // Every call runs: all text is shown, each tool block is taken as it closes.
                    present(&parser, progress.changed.start, None, &mut shown, screen);
                    for i in progress.completed.clone() {
                        if let Some(Block::ToolUse(t)) = parser.block(i) {
                            if !t.partial {
                                let call = Call::from_xml(&t);
                                screen.tool_call(t.ordinal, &call.name, &call.shown_params());
                                reply.calls.push(Planned { call, n: t.ordinal });
                            }
                        }
                    }
                    let last = parser.len().checked_sub(1);
                    let open = last.filter(|&i| matches!(parser.block(i), Some(Block::ToolUse(t)) if t.partial));
                    if let Some(i) = open.filter(|_| screen.events.is_on()) {
                        partial_tool_event(&parser, i, screen);
                    }
                    return Flow::Continue;
                }
                if tool_at.is_none() {
                    tool_at = (progress.changed.start..parser.len())
                        .find(|&i| matches!(parser.block(i), Some(Block::ToolUse(_))));
                }
                present(&parser, progress.changed.start, tool_at, &mut shown, screen);
                if let Some(call) = first_complete_tool(&parser, progress.completed) {
                    screen.tool_call(0, &call.name, &call.shown_params());
                    reply.calls.push(Planned { call, n: 0 });
                    let until = Instant::now() + USAGE_WAIT;
                    drain_until = Some(until);
                    return Flow::Drain(until);
                }
                if let Some(i) = tool_at.filter(|&i| i >= progress.changed.start && screen.events.is_on()) {
                    partial_tool_event(&parser, i, screen);
                }
            }
            Delta::Reasoning(s) => {
                screen.events.reasoning(screen.turn, &s);
                screen.term.reasoning(&s);
            }
            Delta::Usage(u) => {
                screen.usage = u;
                reply.usage = u;
                usage_is_final = true;
            }
            Delta::Stop(r) => reply.stop = Some(r),
            Delta::Quiet => screen.events.send_held_text(),
            Delta::Error(_) | Delta::Block(_) => {} // errors: the transport; blocks: native/
        }
        Flow::Continue
    })?;
    if too_long {
        screen.term.newline();
        return Err(reply_too_long());
    }
    let stopped_early = screen.one_tool && !reply.calls.is_empty();
    if !stopped_early {
        // Text pushed as `&str` cannot end inside a character, so `finish` cannot fail here; it
        // closes nothing (a tool still open stays partial), it only settles the last text block.
        let _ = parser.finish();
        present(&parser, 0, tool_at, &mut shown, screen);
    }
    screen.term.newline();
    let first_ran = stopped_early.then_some(0);
    for block in parser.blocks().iter() {
        if let Block::ToolUse(t) = block {
            match first_ran {
                Some(first) if t.ordinal > first => reply.extra_tools.push(t.name.to_string()),
                None if t.partial => reply.open_tool = Some(t.name.to_string()),
                _ => {}
            }
        }
    }
    reply.text = parser.text().to_string();
    if !usage_is_final {
        let received = reply.text.len();
        reply.estimate_usage(request_bytes(system, messages), received, transport.max_output());
    }
    // (Cline appends "[Response interrupted by a tool use result…]" to the message it shows,
    // not to the one its history keeps: what was read, as here.)
    Ok(reply)
}

/// A partial `tool_call` event for the streaming tool block `i`, if the call's gate lets one
/// through now (`Events::partial_tool_call`): its size is taken from the parser's borrowed
/// view, and the values are copied only for an event that is sent.
fn partial_tool_event(parser: &StreamParser, i: usize, screen: &mut Screen<'_>) {
    let Some(Block::ToolUse(t)) = parser.block(i) else { return };
    if !t.partial {
        return;
    }
    let bytes: usize = t.params().iter().map(|p| p.name.len() + p.value.len()).sum();
    // Borrowed: the event copies at most the start of each value.
    screen.partial_tool_call(t.ordinal, t.name, bytes, || {
        t.params().iter().map(|p| (p.name.to_string(), shown_so_far(&p))).collect::<Vec<_>>()
    });
}

/// A streaming parameter's value as a partial event shows it: `content` as write_to_file reads
/// it and the complete event shows it (untrimmed), the others as Cline's parser has them.
fn shown_so_far<'a>(p: &parser_core::Param<'a>) -> &'a str {
    match p.name {
        "content" => content_of(strip_partial_closing_tag(p.name, p.raw)),
        _ => strip_partial_closing_tag(p.name, p.value),
    }
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

/// The first tool block (ordinal 0) if it is among the blocks completed by this push.
fn first_complete_tool(parser: &StreamParser, completed: std::ops::Range<usize>) -> Option<Call> {
    completed.into_iter().find_map(|i| match parser.block(i)? {
        Block::ToolUse(t) if !t.partial && t.ordinal == 0 => Some(Call::from_xml(&t)),
        _ => None,
    })
}

/// Prints what is new in the text blocks from `from` on, up to the first tool block
/// (`tool_at`): nothing after it is shown, since it will not be acted on.
fn present(
    parser: &StreamParser,
    from: usize,
    tool_at: Option<usize>,
    shown: &mut Vec<ShownText>,
    screen: &mut Screen<'_>,
) {
    let end = tool_at.unwrap_or(parser.len());
    for i in from..end {
        let Some(Block::Text { content, partial }) = parser.block(i) else { continue };
        if shown.len() <= i {
            shown.resize_with(i + 1, ShownText::default);
        }
        let started = shown[i].started();
        let new = shown[i].advance(parser.text(), content, partial);
        if !new.is_empty() {
            if !started && i > 0 {
                screen.term.newline();
            }
            screen.text(&new);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::run::llm::{StopReason, Usage};
    use crate::run::session::events::Events;
    use crate::run::ui::term::Term;

    /// Replays fixed deltas; records how many it handed out before being told to stop.
    struct Fake {
        deltas: Vec<Delta>,
        handed: usize,
    }

    impl Transport for Fake {
        fn send(&mut self, _: &str, _: &[Message], on: &mut dyn FnMut(Delta) -> Flow) -> Result<(), ApiError> {
            for d in self.deltas.clone() {
                self.handed += 1;
                if on(d).stops_now() {
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
        read_with(deltas, stop, None)
    }

    fn read_with(deltas: &[&str], stop: Option<StopReason>, usage: Option<Usage>) -> (Reply, String, usize, usize) {
        let mut d: Vec<Delta> = deltas.iter().map(|s| Delta::Text(s.to_string())).collect();
        if let Some(r) = stop {
            d.push(Delta::Stop(r));
        }
        if let Some(u) = usage {
            d.push(Delta::Usage(u));
            d.push(Delta::Text("after the usage".into()));
        }
        let total = d.len();
        let mut fake = Fake { deltas: d, handed: 0 };
        let out = Shared::default();
        let mut term = Term::to_writer(Box::new(out.clone()));
        let mut events = Events::off();
        let mut screen = Screen::new(&mut term, &mut events, 1, true);
        let reply = read_reply(&mut fake, "", &[], &mut screen).unwrap();
        let shown = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        (reply, shown, fake.handed, total)
    }

    const READ: [&str; 5] =
        ["I'll read it.\n<read_fi", "le>\n<path>src/a", ".rs</path>\n</read_file>", "\nmore text", " <list_files>"];

    #[test]
    fn after_the_first_tool_the_rest_is_read_for_its_usage_but_never_shown_or_parsed() {
        let usage = Usage { input: 1200, output: 34, cache_read: 5, cache_write: 0, billed: None };
        let (reply, shown, handed, total) = read_with(&READ, Some(StopReason::EndTurn), Some(usage));
        let call = reply.calls.into_iter().next().expect("a tool").call;
        assert_eq!(call.name, "read_file");
        assert_eq!(call.params, [("path".to_string(), "src/a.rs".to_string(), "src/a.rs".to_string())]);
        assert_eq!(handed, total - 1, "read up to the usage, and not beyond");
        assert_eq!(shown, "I'll read it.\n", "partial tags and what follows the tool are never shown");
        assert!(!reply.text.contains("more text") && reply.extra_tools.is_empty(), "{:?}", reply.text);
        assert_eq!(reply.usage, usage);
        assert!(!reply.usage_estimated, "the server's usage arrived after the tool");
    }

    #[test]
    fn a_reply_that_ends_without_usage_is_estimated() {
        let (reply, _, handed, total) = read(&READ, Some(StopReason::EndTurn));
        assert!(!reply.calls.is_empty());
        assert_eq!(handed, total, "read to the end, looking for the usage");
        assert!(reply.usage_estimated);
        assert!(reply.usage.output > 0);
        let (reply, ..) = read(&["No tools here."], Some(StopReason::EndTurn));
        assert!(reply.usage_estimated, "no usage at all");
        let early = Usage { input: 10, output: 1, ..Usage::default() };
        let d = vec![Delta::Usage(early), Delta::Text("text after the first report".into())];
        let mut fake = Fake { deltas: d, handed: 0 };
        let (mut term, mut events) = (Term::to_writer(Box::new(Shared::default())), Events::off());
        let mut screen = Screen::new(&mut term, &mut events, 1, true);
        let reply = read_reply(&mut fake, "", &[], &mut screen).unwrap();
        assert!(reply.usage_estimated, "a usage report followed by more text is not the final one");
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
        let usage = Some(Usage { input: 3, output: 4, ..Usage::default() });
        let (reply, shown, ..) =
            read_with(&["<thinking>plan", " it</thinking>\nDone", "."], Some(StopReason::EndTurn), usage);
        assert!(reply.calls.is_empty());
        assert_eq!(shown, "plan it\nDone.after the usage\n");
        assert!(reply.usage_estimated, "text came after the usage report");
    }

    #[test]
    fn a_tool_still_open_at_the_end_is_reported_not_returned() {
        let (reply, ..) = read(&["<write_to_file>\n<path>a</path>\n<content>\nhalf"], Some(StopReason::MaxTokens));
        assert!(reply.calls.is_empty());
        assert_eq!(reply.open_tool.as_deref(), Some("write_to_file"));
        assert_eq!(reply.stop, Some(StopReason::MaxTokens));
    }

    #[test]
    fn further_tools_in_the_same_delta_are_listed() {
        let two = "<list_files>\n<path>.</path>\n</list_files>\n<read_file>\n<path>x</path>\n</read_file>";
        let (reply, ..) = read(&[two], None);
        assert_eq!(reply.calls[0].call.name, "list_files");
        assert_eq!(reply.extra_tools, ["read_file"]);
        assert!(reply.text.ends_with("</read_file>"), "kept as read, without a note: {}", reply.text);
    }

    #[test]
    fn write_content_keeps_its_untrimmed_value() {
        let (reply, ..) =
            read(&["<write_to_file>\n<path>a.py</path>\n<content>\n    x = 1\n\n</content>\n</write_to_file>"], None);
        let call = reply.calls.into_iter().next().unwrap().call;
        let untrimmed = call.untrimmed_param("content").unwrap();
        assert_eq!(untrimmed, "    x = 1\n", "the indentation kept; one line break at each end is the tags'");
    }
}
