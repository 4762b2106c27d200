//! Raw byte chunks to text: a chunk may end inside a UTF-8 sequence, which is held back until the
//! next chunk completes it. Invalid UTF-8 is an error value with its offset; nothing is replaced.

/// A stream's bytes were not UTF-8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Utf8Error {
    /// Offset, in the whole stream, of the first byte that is not part of valid UTF-8. Every byte
    /// before it has been parsed; no byte from it on has been.
    pub offset: usize,
    /// Whether the bytes there are invalid, or merely cut short by the end of the stream.
    pub kind: Utf8ErrorKind,
}

/// What is wrong at [`Utf8Error::offset`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Utf8ErrorKind {
    /// A byte sequence that is not UTF-8.
    Invalid,
    /// The stream ended inside a multi-byte character.
    Incomplete,
}

impl core::fmt::Display for Utf8Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.kind {
            Utf8ErrorKind::Invalid => write!(f, "invalid UTF-8 at byte offset {}", self.offset),
            Utf8ErrorKind::Incomplete => {
                write!(f, "stream ended inside a UTF-8 character at byte offset {}", self.offset)
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Utf8Error {}

/// The incomplete end of the last chunk (at most 3 bytes of a 4-byte character).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct HeldBytes {
    buf: [u8; 4],
    len: usize,
}

/// The pieces a byte chunk turns into.
pub(crate) struct Decoded<'c> {
    /// A character completed from held bytes, then the chunk's valid text.
    pub(crate) completed: Option<char>,
    pub(crate) text: &'c str,
    /// Set when the chunk holds invalid UTF-8 at this offset *within `text`'s end*.
    pub(crate) invalid: bool,
}

fn char_width(lead: u8) -> usize {
    match lead {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => 1,
    }
}

impl HeldBytes {
    /// Bytes held back.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Forget the held bytes (after an error, they belong to the invalid sequence).
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    /// Split `chunk` into text that is valid so far and a new held tail. On invalid UTF-8,
    /// `invalid` is set and the text stops right before the bad sequence (held bytes included:
    /// if they are the bad part, nothing is completed and `text` is empty).
    pub(crate) fn decode<'c>(&mut self, mut chunk: &'c [u8]) -> Decoded<'c> {
        let mut completed = None;
        if self.len > 0 {
            let width = char_width(self.buf[0]);
            let take = (width - self.len).min(chunk.len());
            self.buf[self.len..self.len + take].copy_from_slice(&chunk[..take]);
            let have = self.len + take;
            match core::str::from_utf8(&self.buf[..have]) {
                Ok(c) => {
                    completed = c.chars().next();
                    self.len = 0;
                    chunk = &chunk[take..];
                }
                Err(e) if e.error_len().is_none() => {
                    self.len = have; // still incomplete, and valid so far
                    return Decoded { completed: None, text: "", invalid: false };
                }
                Err(_) => {
                    // The held bytes start the invalid sequence: drop them with it.
                    self.len = 0;
                    return Decoded { completed: None, text: "", invalid: true };
                }
            }
        }
        if let Some(text) = crate::scan::ascii_str(chunk) {
            return Decoded { completed, text, invalid: false };
        }
        match core::str::from_utf8(chunk) {
            Ok(text) => Decoded { completed, text, invalid: false },
            Err(e) => {
                let valid = e.valid_up_to();
                // `valid_up_to` marks a prefix that is valid UTF-8, so this cannot fail.
                let text = core::str::from_utf8(&chunk[..valid]).unwrap_or("");
                if e.error_len().is_none() {
                    let rest = &chunk[valid..];
                    self.buf[..rest.len()].copy_from_slice(rest);
                    self.len = rest.len();
                    Decoded { completed, text, invalid: false }
                } else {
                    Decoded { completed, text, invalid: true }
                }
            }
        }
    }
}
