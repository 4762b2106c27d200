//! Stable call ids (feature `nanorand`): Cline draws a fresh `nanoid(8)` on every re-parse, so a
//! tool's id changes while it streams. Here the id is a pure function of the stream's seed and the
//! tool's ordinal: the same at every push, reproducible in tests, and needing no entropy source.

use nanorand::{Rng, WyRand};

/// nanoid's URL-safe alphabet (64 symbols).
const ALPHABET: &[u8; 64] = b"useandom-26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict";

/// An 8-character call id from nanoid's alphabet.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CallId([u8; 8]);

impl CallId {
    /// The id for the tool use with `ordinal` in a stream seeded with `seed`.
    pub fn new(seed: u64, ordinal: usize) -> Self {
        // Mix the ordinal in with a large odd constant so neighbouring ordinals get unrelated seeds.
        let mut rng = WyRand::new_seed(seed ^ (ordinal as u64).wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut id = [0u8; 8];
        for c in &mut id {
            *c = ALPHABET[(rng.generate::<u64>() & 63) as usize];
        }
        CallId(id)
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        // Every byte comes from the ASCII alphabet above.
        core::str::from_utf8(&self.0).unwrap_or("")
    }
}

impl core::fmt::Display for CallId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl core::fmt::Debug for CallId {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "CallId({})", self.as_str())
    }
}

impl crate::ToolUse<'_> {
    /// This tool use's call id: the same at every push of a stream, for a given seed
    /// (see `StreamParser::with_call_seed`).
    pub fn call_id(&self) -> CallId {
        CallId::new(self.call_seed, self.ordinal)
    }
}
