//! JavaScript's `String.prototype.trim`, on UTF-8 byte offsets.
//!
//! Cline trims every text block and param value with JS `trim`, whose whitespace set differs from
//! Rust's `str::trim`: JS removes U+FEFF but keeps U+0085 (Rust does the opposite). Offsets given to
//! these functions are always char boundaries of valid UTF-8.

use crate::Span;

/// Is `c` in the set that JavaScript's `trim` removes (WhiteSpace + LineTerminator)?
pub const fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{D}'
            | ' '
            | '\u{A0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202F}'
            | '\u{205F}'
            | '\u{3000}'
            | '\u{FEFF}'
    )
}

/// Byte length of the JS whitespace character starting at `i`, or 0 if there is none.
#[inline]
fn ws_len_at(s: &[u8], i: usize) -> usize {
    match s[i] {
        b'\t'..=b'\r' | b' ' => 1,
        0xC2 if s.get(i + 1) == Some(&0xA0) => 2,
        0xE1 | 0xE2 | 0xE3 | 0xEF if i + 2 < s.len() => {
            let c = ((s[i] as u32 & 0x0F) << 12) | ((s[i + 1] as u32 & 0x3F) << 6) | (s[i + 2] as u32 & 0x3F);
            match char::from_u32(c) {
                Some(c) if is_js_whitespace(c) => 3,
                _ => 0,
            }
        }
        _ => 0,
    }
}

/// Byte length of the JS whitespace character ending just before `end`, or 0 if there is none.
#[inline]
fn ws_len_before(s: &[u8], end: usize) -> usize {
    let last = s[end - 1];
    if last < 0x80 {
        return usize::from(matches!(last, b'\t'..=b'\r' | b' '));
    }
    // Every non-ASCII JS whitespace character is 2 or 3 bytes long.
    for len in [2, 3] {
        if end >= len && s[end - len] >= 0xC0 {
            return if ws_len_at(s, end - len) == len { len } else { 0 };
        }
    }
    0
}

const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
const HIGH: u64 = 0x8080_8080_8080_8080;
const fn splat(b: u8) -> u64 {
    0x0101_0101_0101_0101 * b as u64
}

/// The high bit of each byte of `x` that is ASCII whitespace (`\t`..=`\r` or space), in one
/// word: no carry or borrow crosses a byte.
#[inline(always)]
fn ascii_ws_mask(x: u64) -> u64 {
    let ascii = !x & HIGH;
    // Bytes equal to a space: their XOR with 0x20 is zero, so adding 0x7F leaves the high bit clear.
    let t = x ^ splat(b' ');
    let not_space = ((t & LOW7).wrapping_add(LOW7) | t) & HIGH;
    // Bytes in 9..=13: (b | 0x80) - 9 has its high bit set (b >= 9) and low bits < 5.
    let y = (x | HIGH).wrapping_sub(splat(9));
    let in_range = y & !((y & LOW7).wrapping_add(splat(0x7B))) & HIGH;
    (!not_space | in_range) & ascii & HIGH
}

/// Bytes `s[at..at + 8]` as a little-endian word.
#[inline(always)]
fn word(s: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&s[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Whitespace characters stepped over one at a time before a run is skipped a word at a time
/// (most runs are a newline or two, for which a word's mask costs more than it saves).
const BYTE_STEPS: u32 = 8;

/// First offset in `from..end` that does not start a JS whitespace character (`end` if none).
#[inline]
pub(crate) fn skip_ws_forward(s: &[u8], mut from: usize, end: usize) -> usize {
    let mut steps = 0;
    while from < end {
        if plainly_visible(s[from]) {
            break;
        }
        if steps == BYTE_STEPS {
            return skip_long_run_forward(s, from, end);
        }
        steps += 1;
        #[cfg(test)]
        crate::scan::counter::add(1);
        // ASCII whitespace (nearly all of it) without the call for the rest.
        let n = if is_ascii_ws(s[from]) { 1 } else { ws_len_at(&s[..end], from) };
        if n == 0 {
            break;
        }
        from += n;
    }
    from
}

/// Is `b` ASCII whitespace as JavaScript's `trim` sees it?
#[inline(always)]
fn is_ascii_ws(b: u8) -> bool {
    matches!(b, b'\t'..=b'\r' | b' ')
}

/// [`skip_ws_forward`] for a long run: ASCII whitespace a word at a time.
#[inline(never)]
fn skip_long_run_forward(s: &[u8], mut from: usize, end: usize) -> usize {
    while from < end {
        while from + 8 <= end {
            #[cfg(test)]
            crate::scan::counter::add(1);
            let w = word(s, from);
            if w == splat(b' ') {
                from += 8;
                continue;
            }
            let other = !ascii_ws_mask(w) & HIGH;
            if other != 0 {
                from += (other.trailing_zeros() / 8) as usize;
                break;
            }
            from += 8;
        }
        if from >= end || plainly_visible(s[from]) {
            break;
        }
        #[cfg(test)]
        crate::scan::counter::add(1);
        let n = ws_len_at(&s[..end], from);
        if n == 0 {
            break;
        }
        from += n;
    }
    from
}

/// Last offset in `floor..=end` after which only JS whitespace remains up to `end` (`floor` if all is).
#[inline]
pub(crate) fn skip_ws_backward(s: &[u8], floor: usize, mut end: usize) -> usize {
    let mut steps = 0;
    while end > floor {
        if plainly_visible(s[end - 1]) {
            break;
        }
        if steps == BYTE_STEPS {
            return skip_long_run_backward(s, floor, end);
        }
        steps += 1;
        #[cfg(test)]
        crate::scan::counter::add(1);
        let n = if is_ascii_ws(s[end - 1]) { 1 } else { ws_len_before(s, end) };
        if n == 0 {
            break;
        }
        end -= n;
    }
    end
}

/// [`skip_ws_backward`] for a long run: ASCII whitespace a word at a time.
#[inline(never)]
fn skip_long_run_backward(s: &[u8], floor: usize, mut end: usize) -> usize {
    while end > floor {
        while end >= floor + 8 {
            #[cfg(test)]
            crate::scan::counter::add(1);
            let w = word(s, end - 8);
            if w == splat(b' ') {
                end -= 8;
                continue;
            }
            let other = !ascii_ws_mask(w) & HIGH;
            if other != 0 {
                end -= (other.leading_zeros() / 8) as usize;
                break;
            }
            end -= 8;
        }
        if end <= floor || plainly_visible(s[end - 1]) {
            break;
        }
        #[cfg(test)]
        crate::scan::counter::add(1);
        let n = ws_len_before(s, end);
        if n == 0 {
            break;
        }
        end -= n;
    }
    end
}

/// `span` with JS whitespace removed from both ends (an empty span at `span.end` if nothing is left).
#[inline(always)]
pub(crate) fn trim(s: &[u8], span: Span) -> Span {
    // Inline for the usual ends (a visible byte, or one ASCII whitespace byte before one, such
    // as a newline); the general walks only for the rest.
    let mut start = span.start;
    if start < span.end && is_ascii_ws(s[start]) {
        start += 1;
    }
    if start < span.end && !plainly_visible(s[start]) {
        start = skip_ws_forward(s, start, span.end);
    }
    let mut end = span.end;
    if end > start && is_ascii_ws(s[end - 1]) {
        end -= 1;
    }
    if end > start && !plainly_visible(s[end - 1]) {
        end = skip_ws_backward(s, start, end);
    }
    Span { start, end }
}

/// Is `b` a byte that is not whitespace on its own and starts no whitespace character?
#[inline(always)]
fn plainly_visible(b: u8) -> bool {
    b > b' ' && b < 0x80
}

/// Remembers how far the trim of a growing region (the trailing text or open param of a stream)
/// has been computed, so that re-trimming after each push only looks at the new bytes.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TrimCache {
    region_start: usize,
    /// First non-whitespace offset, or how far the leading whitespace has been checked.
    lead: usize,
    /// End offset the last result was computed for.
    checked_end: usize,
    /// Trimmed end found for `checked_end`.
    trail: usize,
    valid: bool,
}

impl TrimCache {
    /// Trim `region_start..end`, reusing the work done for an earlier, shorter `end` of the same region.
    #[inline(always)]
    pub(crate) fn trim(&mut self, s: &[u8], region_start: usize, end: usize) -> Span {
        // The common case of a stream: the leading trim is known and the region grew by text
        // that ends in a visible ASCII character (one compare per push, inlined).
        if self.valid && self.region_start == region_start && self.lead < self.checked_end && end > self.checked_end {
            // `lead < checked_end < end`, so `end - 2 >= lead`: a visible byte there ends the trim.
            let trail = if plainly_visible(s[end - 1]) {
                end
            } else if matches!(s[end - 1], b'\t'..=b'\r' | b' ') && plainly_visible(s[end - 2]) {
                end - 1
            } else {
                return self.trim_slow(s, region_start, end);
            };
            self.trail = trail;
            self.checked_end = end;
            return Span { start: self.lead, end: trail };
        }
        self.trim_slow(s, region_start, end)
    }

    #[inline(never)]
    fn trim_slow(&mut self, s: &[u8], region_start: usize, end: usize) -> Span {
        if !self.valid || self.region_start != region_start || end < self.checked_end {
            *self = TrimCache {
                region_start,
                lead: region_start,
                checked_end: region_start,
                trail: region_start,
                valid: true,
            };
        }
        let lead_was_done = self.lead < self.checked_end;
        // Fast path: the leading trim is known and the text ends in a visible ASCII character.
        if lead_was_done && end > self.checked_end && s[end - 1] > b' ' && s[end - 1] < 0x80 {
            self.trail = end;
            self.checked_end = end;
            return Span { start: self.lead, end };
        }
        if !lead_was_done {
            self.lead = skip_ws_forward(s, self.lead, end);
        }
        let floor = self.checked_end.max(self.lead);
        let back = skip_ws_backward(s, floor, end);
        if back > floor || floor == self.lead {
            self.trail = back;
        }
        self.checked_end = end;
        Span { start: self.lead, end: self.trail.max(self.lead) }
    }
}

/// JavaScript's `String.prototype.trim` on a `&str`.
pub fn js_trim(s: &str) -> &str {
    let span = trim(s.as_bytes(), Span { start: 0, end: s.len() });
    &s[span.start..span.end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_mask_marks_exactly_the_ascii_whitespace_bytes() {
        for b in 0..=255u8 {
            for pos in 0..8 {
                let mut bytes = [b'x'; 8];
                bytes[pos] = b;
                let want = if matches!(b, b'\t'..=b'\r' | b' ') { 0x80u64 << (8 * pos) } else { 0 };
                assert_eq!(ascii_ws_mask(u64::from_le_bytes(bytes)), want, "byte {b:#x} at {pos}");
                let mut spaces = [b' '; 8];
                spaces[pos] = b;
                let others = if want == 0 { 0x80u64 << (8 * pos) } else { 0 };
                assert_eq!(!ascii_ws_mask(u64::from_le_bytes(spaces)) & HIGH, others, "byte {b:#x} in spaces");
            }
        }
    }

    #[test]
    fn word_skips_agree_with_the_char_by_char_trim_at_every_length_and_offset() {
        let pieces =
            [" ", "\n", "\t", "\r", "\u{b}", "\u{c}", "\u{a0}", "\u{feff}", "\u{2028}", "\u{85}", "x", "é", "\u{3000}"];
        let mut state = 7u32;
        for _ in 0..3000 {
            let mut s = std::string::String::new();
            for _ in 0..(state % 40) {
                state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
                // Mostly ASCII whitespace, so that word steps happen.
                let k = (state >> 16) as usize % (pieces.len() * 3);
                s.push_str(pieces[if k < pieces.len() { k } else { k % 4 }]);
            }
            let want = s.trim_matches(is_js_whitespace);
            assert_eq!(js_trim(&s), want, "{s:?}");
        }
    }
}
