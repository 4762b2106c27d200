//! What of a streamed text block is shown, pushed at a time, in time linear in the reply.
//!
//! Cline's presenter (`presentAssistantMessage`) re-derives the whole block on every chunk:
//! it removes `<thinking>`, `<think>` and `<function_calls>` with one optional whitespace after
//! them, their closing tags with one optional whitespace before, then drops an incomplete tag at
//! the very end. Doing that to the whole block for every 16-byte delta is quadratic; this does
//! it once per byte: it remembers how far the block has been shown and holds back only a tail
//! that the next bytes could still change (an incomplete tag, a tag whose optional whitespace
//! has not arrived yet). For a finished block nothing is held back.

/// Opening tags removed with one optional whitespace character after them.
const OPENING: &[&str] = &["<thinking>", "<think>", "<function_calls>"];
/// Closing tags removed with one optional whitespace character before them.
const CLOSING: &[&str] = &["</thinking>", "</think>", "</function_calls>"];

/// Longest tail held back as a possible incomplete tag (with the whitespace before it); a
/// longer one is no tag a model means, and is shown (so a block of `<` followed by a megabyte
/// of letters costs linear time, not quadratic).
const MAX_HELD: usize = 256;

/// How far one text block has been shown.
#[derive(Debug, Default, Clone)]
pub(crate) struct ShownText {
    /// Byte offset, in the whole reply, up to which the block's content has been shown (what
    /// follows is looked at again on the next push: at most a held-back tail).
    upto: usize,
    /// Whether anything of the block has been shown.
    started: bool,
}

impl ShownText {
    /// Whether anything of the block has been shown yet.
    pub(crate) fn started(&self) -> bool {
        self.started
    }

    /// The text newly shown for a block whose content is now `content`, a slice of `reply`
    /// (everything streamed so far); `partial` while it can still grow (or end earlier than it
    /// seems: the start of a tool tag is held back until it is known not to be one).
    pub(crate) fn advance(&mut self, reply: &str, content: &str, partial: bool) -> String {
        if content.is_empty() {
            return String::new(); // (an empty slice need not point into `reply`)
        }
        let start = (content.as_ptr() as usize).saturating_sub(reply.as_ptr() as usize);
        let from = self.upto.saturating_sub(start).min(content.len());
        let Some(region) = content.get(from..) else { return String::new() };
        let (out, used, removals) = remove_tags(region, partial);
        let mut keep = out.len();
        if partial {
            // Only the last MAX_HELD bytes can be held back, so this costs the same every push.
            let mut tail_from = out.len().saturating_sub(MAX_HELD);
            while !out.is_char_boundary(tail_from) {
                tail_from += 1;
            }
            let tail = &out[tail_from..];
            keep = tail_from + partial_tag_start(tail);
            if used < region.len() {
                // A tag is undecided after this: the whitespace before it may yet be cut with it.
                keep = keep.min(tail_from + tail.trim_end_matches(js_space).len());
            }
        }
        self.upto = start + from + raw_offset(&removals, keep);
        self.started |= keep > 0;
        let mut out = out;
        out.truncate(keep);
        out
    }
}

/// Where, in the text given to [`remove_tags`], its output offset `o` lies: before any tag
/// removed at that point. `removals` holds `(output length, input offset)` after each removal.
fn raw_offset(removals: &[(usize, usize)], o: usize) -> usize {
    match removals.iter().rev().find(|&&(out, _)| out < o) {
        Some(&(out, raw)) => raw + (o - out),
        None => o,
    }
}

/// Where Cline's presenter cuts a streaming block: before an incomplete tag at the very end
/// (`<`, `</`, or `<` and letters or underscores) and the whitespace before it.
fn partial_tag_start(s: &str) -> usize {
    let Some(lt) = s.rfind('<') else { return s.len() };
    let tag = &s[lt..];
    if tag.contains('>') {
        return s.len();
    }
    let name = tag.strip_prefix("</").or_else(|| tag.strip_prefix('<')).unwrap_or(tag).trim_matches(js_space);
    if tag == "<" || tag == "</" || (!name.is_empty() && name.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_')) {
        s[..lt].trim_end_matches(js_space).len()
    } else {
        s.len()
    }
}

/// JavaScript's `\s`.
fn js_space(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'..='\u{200a}')
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}')
}

/// `s` without the thinking and function-call tags, and how many bytes of `s` that covers:
/// when `more` may follow, it stops before anything the next bytes could turn into a removal.
fn remove_tags(s: &str, more: bool) -> (String, usize, Vec<(usize, usize)>) {
    let mut out = String::with_capacity(s.len());
    let mut removals = Vec::new();
    let mut i = 0;
    'scan: while let Some(c) = s[i..].chars().next() {
        let rest = &s[i..];
        for tag in OPENING {
            if let Some(after) = rest.strip_prefix(tag) {
                match after.chars().next() {
                    None if more => break 'scan, // its optional whitespace is still to come
                    Some(w) if js_space(w) => i += tag.len() + w.len_utf8(),
                    _ => i += tag.len(),
                }
                removals.push((out.len(), i));
                continue 'scan;
            }
            if more && tag.starts_with(rest) {
                break 'scan;
            }
        }
        let (lead, tail) = if js_space(c) { (c.len_utf8(), &rest[c.len_utf8()..]) } else { (0, rest) };
        for tag in CLOSING {
            if tail.starts_with(tag) {
                i += lead + tag.len();
                removals.push((out.len(), i));
                continue 'scan;
            }
            if more && tag.starts_with(tail) {
                break 'scan; // a closing tag (and the whitespace before it) may be arriving
            }
        }
        out.push(c);
        i += c.len_utf8();
    }
    (out, i, removals)
}

#[cfg(test)]
mod tests {
    use super::*;
    use parser_core::display::strip_partial_tag;

    /// Cline's presenter on a whole block, transcribed naively (regex passes in its order).
    fn cline(content: &str, partial: bool) -> String {
        static PASSES: std::sync::LazyLock<Vec<regex::Regex>> = std::sync::LazyLock::new(|| {
            let ws =
                r"[\t\n\x0B\x0C\r \u{a0}\u{1680}\u{2000}-\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{feff}]?";
            ["thinking", "think", "function_calls"]
                .iter()
                .flat_map(|t| [format!("<{t}>{ws}"), format!("{ws}</{t}>")])
                .map(|p| regex::Regex::new(&p).unwrap())
                .collect()
        });
        let mut s = content.to_string();
        for pass in PASSES.iter() {
            s = pass.replace_all(&s, "").into_owned();
        }
        if partial {
            s = strip_partial_tag(&s).to_string();
        }
        s
    }

    /// Shows `text` pushed in pieces of `n` bytes; returns everything shown, and checks that
    /// what is on screen is always a prefix of Cline's rendering of the whole block so far.
    fn stream(text: &str, n: usize) -> String {
        let mut shown = ShownText::default();
        let mut screen = String::new();
        let mut end = 0;
        while end < text.len() {
            end = (end + n).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            let partial = end < text.len();
            screen.push_str(&shown.advance(text, &text[..end], partial));
            // Cline's view of a streaming block also drops whitespace at its start (it re-renders;
            // a terminal cannot take back what it printed): compare after the leading whitespace.
            let whole = cline(&text[..end], partial);
            let (whole, on_screen) = (whole.trim_start_matches(js_space), screen.trim_start_matches(js_space));
            assert!(whole.starts_with(on_screen), "{text:?} at {end}: screen {screen:?}, Cline {whole:?}");
        }
        screen
    }

    #[test]
    fn shown_incrementally_equals_clines_rendering_of_the_whole_block() {
        let cases = [
            "<thinking>\nplan it\n</thinking>\n\nDone.",
            "<thinking>plan it</thinking>\nDone.",
            "a <b and c > d <think> x </think> y",
            "code: if a < b { x <<= 1 } </function_calls>",
            "ends with <thinking>",
            "tab\t</thinking>\tafter <thinkin",
            "unicode é\u{a0}</think>ü <",
        ];
        for text in cases {
            for n in [1, 2, 3, 5, 16, 1000] {
                assert_eq!(stream(text, n), cline(text, false), "{text:?} in pieces of {n}");
            }
        }
    }

    #[test]
    fn random_blocks_stream_to_clines_rendering() {
        let atoms = ["<thinking>", "</thinking>", "<think>", "</think>", "\n", " ", "a", "<", "</", "b>", "é"];
        let mut seed = 0x9e37_79b9_u64;
        for _ in 0..3000 {
            let mut text = String::new();
            for _ in 0..(seed % 12) {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                text.push_str(atoms[(seed >> 33) as usize % atoms.len()]);
            }
            let n = 1 + (seed >> 40) as usize % 7;
            let got = stream(&text, n);
            // Sequential regex passes can create a match by removing another (`<thi<think>nking>`);
            // one left-to-right pass does not. Everything else is identical.
            if !text.contains("<thi<") && !text.contains("</thi<") {
                assert_eq!(got, cline(&text, false), "{text:?} in pieces of {n}");
            }
        }
    }

    #[test]
    fn a_long_block_is_shown_as_it_streams() {
        // A block of 2 MB pushed 16 bytes at a time: all of it but a held-back tail is shown.
        let text = "word ".repeat(400_000);
        let mut shown = ShownText::default();
        let mut total = 0;
        for end in (16..=text.len()).step_by(16) {
            total += shown.advance(&text, &text[..end], true).len();
        }
        assert!(total >= text.len() - 32, "{total}");
    }
}
