//! A Server-Sent Events decoder that accepts the byte stream in chunks of any size.
//!
//! It follows the WHATWG event-stream rules that matter for LLM APIs: lines end in `\n`, `\r\n`
//! or a lone `\r` (even when the `\r` and `\n` arrive in different chunks); `data:` lines of one
//! event are joined with `\n`; lines starting with `:` are comments (OpenRouter sends
//! `: OPENROUTER PROCESSING` keep-alives); `event:` names the event; a blank line dispatches it.
//! Bytes are buffered until a line is complete, so a chunk boundary inside a UTF-8 character or
//! inside `data:` never corrupts anything. The server is untrusted: a line or an event longer
//! than `MAX_EVENT_BYTES` is not buffered further, and `SseDecoder::overflowed` says so.
//!
//! ```
//! use agent_min::run::llm::sse::SseDecoder;
//! let mut d = SseDecoder::new();
//! let mut events = d.push(b"event: ping\r\nda");
//! events.extend(d.push(b"ta: {}\r\n\r\n"));
//! assert_eq!(events[0].event.as_deref(), Some("ping"));
//! assert_eq!(events[0].data, "{}");
//! ```

/// Most bytes one line, or one event's joined `data:`, may hold. Real deltas are a few hundred
/// bytes; a whole tool call sent in one delta stays far below this.
pub(crate) const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if the event had one.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Incremental SSE decoder: feed it bytes with [`SseDecoder::push`], get complete events back.
#[derive(Debug, Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    skip_lf: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    overflowed: bool,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds a chunk of bytes; returns the events completed by it, in order.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        if self.overflowed {
            return out;
        }
        for &b in chunk {
            if self.skip_lf {
                self.skip_lf = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' => self.end_line(&mut out),
                b'\r' => {
                    self.skip_lf = true;
                    self.end_line(&mut out);
                }
                _ if self.line.len() >= MAX_EVENT_BYTES => {
                    self.overflow();
                    return out;
                }
                _ => self.line.push(b),
            }
            if self.data.len() > MAX_EVENT_BYTES {
                self.overflow();
                return out;
            }
        }
        out
    }

    /// Whether a line or an event exceeded [`MAX_EVENT_BYTES`]; the decoder then ignores the rest
    /// of the stream, and the reply must be treated as failed.
    pub(crate) fn overflowed(&self) -> bool {
        self.overflowed
    }

    fn overflow(&mut self) {
        self.overflowed = true;
        self.line = Vec::new();
        self.data = String::new();
        self.has_data = false;
    }

    /// Ends the stream: a final event without its blank line is still dispatched (servers that
    /// close right after the last `data:` line exist).
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        if self.overflowed {
            return out;
        }
        if !self.line.is_empty() {
            self.end_line(&mut out);
        }
        self.dispatch(&mut out);
        out
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return; // comment / keep-alive
        }
        let text = String::from_utf8_lossy(&line);
        let (field, value) = match text.find(':') {
            Some(i) => {
                let v = &text[i + 1..];
                (&text[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (&text[..], ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_string()),
            _ => {} // id, retry and unknown fields are ignored
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if !self.has_data {
            return;
        }
        self.has_data = false;
        out.push(SseEvent { event, data: std::mem::take(&mut self.data) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_at_once(input: &[u8]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut v = d.push(input);
        v.extend(d.finish());
        v
    }

    fn split_everywhere_matches(input: &[u8]) {
        let whole = all_at_once(input);
        for cut in 0..=input.len() {
            let mut d = SseDecoder::new();
            let mut v = d.push(&input[..cut]);
            v.extend(d.push(&input[cut..]));
            v.extend(d.finish());
            assert_eq!(v, whole, "split at byte {cut}");
        }
        let mut d = SseDecoder::new();
        let mut v = Vec::new();
        for b in input {
            v.extend(d.push(std::slice::from_ref(b)));
        }
        v.extend(d.finish());
        assert_eq!(v, whole, "byte by byte");
    }

    #[test]
    fn decodes_named_events_and_data() {
        let ev = all_at_once(b"event: message_start\ndata: {\"a\":1}\n\nevent: ping\ndata: {}\n\n");
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0].event.as_deref(), Some("message_start"));
        assert_eq!(ev[0].data, "{\"a\":1}");
        assert_eq!(ev[1].event.as_deref(), Some("ping"));
    }

    #[test]
    fn crlf_and_lone_cr_line_endings() {
        let ev = all_at_once(b"data: one\r\n\r\ndata: two\r\rdata: three\n\n");
        let data: Vec<_> = ev.iter().map(|e| e.data.as_str()).collect();
        assert_eq!(data, ["one", "two", "three"]);
    }

    #[test]
    fn multi_line_data_is_joined_with_newline() {
        let ev = all_at_once(b"data: first\ndata: second\ndata:third\n\n");
        assert_eq!(ev[0].data, "first\nsecond\nthird");
    }

    #[test]
    fn comments_are_ignored() {
        let ev = all_at_once(b": OPENROUTER PROCESSING\n\n: ping\ndata: x\n\n");
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].data, "x");
        assert_eq!(ev[0].event, None);
    }

    #[test]
    fn done_marker_is_plain_data() {
        let ev = all_at_once(b"data: {\"x\":1}\n\ndata: [DONE]\n\n");
        assert_eq!(ev[1].data, "[DONE]");
    }

    #[test]
    fn event_name_does_not_leak_into_next_event() {
        let ev = all_at_once(b"event: error\ndata: {}\n\ndata: {}\n\n");
        assert_eq!(ev[0].event.as_deref(), Some("error"));
        assert_eq!(ev[1].event, None);
    }

    #[test]
    fn unterminated_final_event_is_dispatched_on_finish() {
        let mut d = SseDecoder::new();
        assert!(d.push(b"data: tail").is_empty());
        assert_eq!(d.finish()[0].data, "tail");
    }

    #[test]
    fn any_chunk_boundary_gives_the_same_events() {
        let input = "event: content_block_delta\r\ndata: {\"text\":\"héllo ✓ 🦀\"}\r\n\r\n: keep\r\ndata: a\r\ndata: b\r\n\r\ndata: [DONE]\r\n\r\n";
        split_everywhere_matches(input.as_bytes());
        let ev = all_at_once(input.as_bytes());
        assert_eq!(ev[0].data, "{\"text\":\"héllo ✓ 🦀\"}");
        assert_eq!(ev[1].data, "a\nb");
    }

    #[test]
    fn cr_and_lf_in_different_chunks_are_one_line_end() {
        let mut d = SseDecoder::new();
        let mut v = d.push(b"data: a\r");
        v.extend(d.push(b"\ndata: b\r"));
        v.extend(d.push(b"\n\r"));
        v.extend(d.push(b"\n"));
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].data, "a\nb");
    }

    #[test]
    fn an_endless_line_stops_being_buffered() {
        let mut d = SseDecoder::new();
        let chunk = vec![b'x'; 1024 * 1024];
        assert!(d.push(b"data: ").is_empty());
        for _ in 0..=MAX_EVENT_BYTES / chunk.len() {
            assert!(d.push(&chunk).is_empty());
        }
        assert!(d.overflowed());
        assert!(d.line.capacity() == 0 && d.push(b"\n\ndata: y\n\n").is_empty());
        assert!(d.finish().is_empty());
    }

    #[test]
    fn an_endless_event_of_short_lines_stops_being_buffered() {
        let mut d = SseDecoder::new();
        let chunk = b"data: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n".repeat(16 * 1024);
        // Twice the cap of raw bytes: the `data: ` prefixes are not part of the event.
        for _ in 0..2 * MAX_EVENT_BYTES / chunk.len() {
            assert!(d.push(&chunk).is_empty());
        }
        assert!(d.overflowed());
        assert!(d.data.capacity() == 0);
    }

    #[test]
    fn a_large_but_bounded_event_still_arrives() {
        let big = "y".repeat(MAX_EVENT_BYTES - 16);
        let ev = all_at_once(format!("data: {big}\n\n").as_bytes());
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].data.len(), big.len());
    }

    #[test]
    fn field_without_colon_and_without_space() {
        let ev = all_at_once(b"data\n\ndata:x\n\n");
        assert_eq!(ev[0].data, "");
        assert_eq!(ev[1].data, "x");
    }
}
