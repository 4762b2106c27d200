//! UTF-8 byte offsets to UTF-16 offsets, in O(1) per query after O(n) work in all.

/// Checkpoints every [`STEP`] bytes: the UTF-16 length of the text before each.
const STEP: usize = 64;

/// Where each UTF-8 byte offset of a growing text falls in its UTF-16 form.
///
/// A character of 1–3 UTF-8 bytes is one UTF-16 unit, one of 4 bytes two units. (A lone
/// surrogate that the JS encoder turned into U+FFFD is three bytes and one unit, as it was.)
#[derive(Clone, Debug, Default)]
pub(crate) struct Utf16Index {
    /// `marks[k]` = UTF-16 units before byte `k * STEP`.
    marks: Vec<u32>,
    /// Bytes indexed so far.
    bytes: usize,
    /// UTF-16 units in those bytes.
    units: usize,
}

/// UTF-16 units that start in `bytes` (a slice that starts on a character boundary).
fn units(bytes: &[u8]) -> usize {
    bytes.iter().map(|&b| usize::from(b & 0xC0 != 0x80) + usize::from(b >= 0xF0)).sum()
}

impl Utf16Index {
    pub(crate) fn clear(&mut self) {
        self.marks.clear();
        self.bytes = 0;
        self.units = 0;
    }

    /// Index `text[self.bytes..]` (the text only ever grows). `ascii`: the new bytes are known
    /// to be ASCII, so no byte need be read.
    #[inline]
    pub(crate) fn extend(&mut self, text: &[u8], ascii: bool) {
        if self.bytes == self.units && ascii {
            // All ASCII so far: offsets are the identity, and no checkpoints are needed yet.
            self.bytes = text.len();
            self.units = text.len();
            return;
        }
        self.extend_slow(text, ascii);
    }

    #[inline(never)]
    fn extend_slow(&mut self, text: &[u8], ascii: bool) {
        let (start, end) = (self.bytes, text.len());
        if self.marks.len() * STEP < start {
            // The ASCII prefix had no checkpoints: they are the identity.
            let have = self.marks.len();
            self.marks.extend((have..start.div_ceil(STEP)).map(|k| (k * STEP) as u32));
        }
        let mut p = start;
        while p < end {
            if p % STEP == 0 {
                self.marks.push(self.units as u32);
            }
            let next = ((p / STEP + 1) * STEP).min(end);
            self.units += if ascii { next - p } else { units(&text[p..next]) };
            p = next;
        }
        self.bytes = end;
    }

    /// The UTF-16 offset of byte offset `offset` (a character boundary within the indexed text).
    #[inline]
    pub(crate) fn utf16(&self, text: &[u8], offset: usize) -> usize {
        if self.bytes == self.units {
            return offset;
        }
        let k = (offset / STEP).min(self.marks.len().saturating_sub(1));
        let base = self.marks.get(k).map_or(0, |&m| m as usize);
        base + units(&text[(k * STEP).min(offset)..offset])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(pieces: &[&str]) {
        let mut index = Utf16Index::default();
        let mut text = String::new();
        for piece in pieces {
            text.push_str(piece);
            index.extend(text.as_bytes(), piece.is_ascii());
        }
        for (offset, _) in text.char_indices().chain([(text.len(), ' ')]) {
            let want = text[..offset].encode_utf16().count();
            assert_eq!(index.utf16(text.as_bytes(), offset), want, "offset {offset} of {text:?}");
        }
    }

    #[test]
    fn ascii_only_is_the_identity() {
        check(&["abc", &"x".repeat(300), "<read_file>"]);
    }

    #[test]
    fn astral_and_bmp_characters_after_an_ascii_prefix_and_across_checkpoints() {
        let long = "é😀\u{FFFD}z".repeat(40);
        check(&[&"a".repeat(130), "😀", &long, &"b".repeat(70), "€", &"c".repeat(64)]);
        check(&["😀", &long]);
        check(&[&long, &"q".repeat(64), &long]);
    }
}
