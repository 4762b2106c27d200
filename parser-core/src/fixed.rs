//! Allocation-free parsing (feature `heapless`): the same engine over fixed-capacity storage.
//!
//! Capacities are chosen at compile time: `B` blocks per reply and `P` params per reply (shared by
//! all its tools — a text block costs no param slots). Trailing text, which Cline marks `partial`,
//! is computed from the end of the input and takes no block slot. Running out is a [`CapacityError`] value
//! naming the store and the byte offset of the tag that did not fit; the blocks returned with it
//! are exactly those of the input before that offset. Nothing panics, nothing is dropped silently.
//!
//! ```
//! use parser_core::fixed;
//! let reply = "Listing.<list_files><path>.</path></list_files>";
//! let parsed = fixed::parse::<4, 8>(reply).expect("fits in 4 blocks, 8 params");
//! assert_eq!(parsed.blocks().len(), 2);
//!
//! let err = fixed::parse::<1, 8>(reply).unwrap_err();
//! assert_eq!(err.error.store, parser_core::Store::Blocks);
//! assert_eq!(err.error.offset, 8); // the `<list_files>` that needed two more slots
//! assert_eq!(err.parsed.blocks().len(), 1); // "Listing." (partial: the text before the tag)
//! ```

use crate::engine::{Engine, RawParam, Tail};
use crate::grammar::Grammar;
use crate::store::{BlockStore, RawBlock, Store};
use crate::stream::{Progress, Stop, StreamCore, TextBuf};
use crate::utf8::Utf8Error;
use crate::view::Blocks;

/// A fixed store ran out of room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapacityError {
    /// Which store was full.
    pub store: Store,
    /// Byte offset of the tag (its `<`) that needed the room. The input before it is parsed.
    pub offset: usize,
    /// That store's capacity.
    pub capacity: usize,
}

impl core::fmt::Display for CapacityError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let what = match self.store {
            Store::Blocks => "block",
            Store::Params => "param",
        };
        write!(f, "{what} capacity {} exhausted at byte offset {}", self.capacity, self.offset)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for CapacityError {}

type FixedStore<const B: usize, const P: usize> = BlockStore<heapless::Vec<RawBlock, B>, heapless::Vec<RawParam, P>>;

/// The blocks of one reply in fixed storage.
#[derive(Clone, Debug)]
pub struct Parsed<'a, const B: usize, const P: usize> {
    input: &'a str,
    store: FixedStore<B, P>,
    tail: Tail,
}

impl<const B: usize, const P: usize> Parsed<'_, B, P> {
    /// A view of the blocks.
    pub fn blocks(&self) -> Blocks<'_> {
        Blocks::new(self.input, &self.store.blocks, &self.store.params, self.store.open, self.tail, 0)
    }
}

/// A reply that did not fit: the error, and the blocks of the input before [`CapacityError::offset`].
#[derive(Clone, Debug)]
pub struct Overflow<'a, const B: usize, const P: usize> {
    /// What overflowed, and where.
    pub error: CapacityError,
    /// The blocks of `input[..error.offset]`, exactly as a whole parse of that prefix.
    pub parsed: Parsed<'a, B, P>,
}

/// Parse a whole reply with Cline's tables into at most `B` blocks and `P` params.
// Both variants hold the fixed storage, and there is no allocator to box it into.
#[allow(clippy::result_large_err)]
pub fn parse<const B: usize, const P: usize>(input: &str) -> Result<Parsed<'_, B, P>, Overflow<'_, B, P>> {
    parse_with(input, Grammar::cline())
}

/// Parse a whole reply with your own tables into at most `B` blocks and `P` params.
#[allow(clippy::result_large_err)]
pub fn parse_with<'a, const B: usize, const P: usize>(
    input: &'a str,
    grammar: &Grammar<'_>,
) -> Result<Parsed<'a, B, P>, Overflow<'a, B, P>> {
    let mut engine = Engine::default();
    let mut store = FixedStore::<B, P>::default();
    match engine.run(input.as_bytes(), grammar, &mut store) {
        Ok(()) => {
            let tail = engine.tail(input.as_bytes());
            Ok(Parsed { input, store, tail })
        }
        Err(error) => {
            // The offset is a `<`, so a char boundary.
            let input = &input[..engine.position()];
            let tail = engine.tail(input.as_bytes());
            Err(Overflow { error, parsed: Parsed { input, store, tail } })
        }
    }
}

/// A caller-provided byte buffer that holds the accumulated text of a stream.
#[derive(Debug)]
pub(crate) struct SliceBuf<'buf> {
    buf: &'buf mut [u8],
    len: usize,
}

impl TextBuf for SliceBuf<'_> {
    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
    fn capacity(&self) -> usize {
        self.buf.len()
    }
    fn has_room(&self, n: usize) -> bool {
        self.buf.len() - self.len >= n
    }
    fn append(&mut self, b: &[u8]) {
        self.buf[self.len..self.len + b.len()].copy_from_slice(b);
        self.len += b.len();
    }
}

/// Why a push to a [`StreamParser`] failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamError {
    /// The text buffer cannot take the chunk; nothing of it was consumed.
    BufferFull {
        /// Bytes the chunk needed.
        needed: usize,
        /// Bytes still free.
        available: usize,
    },
    /// A block or param store is full. The text was taken; the blocks are those of the text
    /// before [`CapacityError::offset`], and stay so on later pushes.
    Capacity(CapacityError),
    /// The bytes were not UTF-8 (see [`Utf8Error`]).
    Utf8(Utf8Error),
}

impl core::fmt::Display for StreamError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            StreamError::BufferFull { needed, available } => {
                write!(f, "text buffer full: chunk needs {needed} bytes, {available} free")
            }
            StreamError::Capacity(e) => e.fmt(f),
            StreamError::Utf8(e) => e.fmt(f),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for StreamError {}

/// The streaming parser with no allocator: text in a caller's buffer, at most `B` blocks and `P`
/// params. Same contract as [`crate::StreamParser`]: after every push, the blocks equal a whole
/// parse of the text pushed so far.
///
/// ```
/// use parser_core::fixed::StreamParser;
/// let mut buf = [0u8; 256];
/// let mut p = StreamParser::<4, 8>::new(&mut buf);
/// for chunk in ["<read_file><pa", "th>a.txt</pa", "th></read_file>"] {
///     p.push_str(chunk).unwrap();
/// }
/// assert_eq!(p.blocks().len(), 1);
/// ```
#[derive(Debug)]
pub struct StreamParser<'g, 'buf, const B: usize, const P: usize> {
    core: StreamCore<'g, SliceBuf<'buf>, heapless::Vec<RawBlock, B>, heapless::Vec<RawParam, P>>,
}

impl<'buf, const B: usize, const P: usize> StreamParser<'static, 'buf, B, P> {
    /// A parser for Cline's tables, keeping the text in `buf`.
    pub fn new(buf: &'buf mut [u8]) -> Self {
        Self::with_grammar(Grammar::cline(), buf)
    }
}

impl<'g, 'buf, const B: usize, const P: usize> StreamParser<'g, 'buf, B, P> {
    /// A parser for your own tables, keeping the text in `buf`.
    pub fn with_grammar(grammar: &'g Grammar<'g>, buf: &'buf mut [u8]) -> Self {
        let text = SliceBuf { buf, len: 0 };
        StreamParser { core: StreamCore::new(grammar, text, heapless::Vec::new(), heapless::Vec::new(), 0) }
    }

    fn map(&self, stop: Stop<CapacityError>) -> StreamError {
        match stop {
            Stop::Utf8(e) => StreamError::Utf8(e),
            Stop::BufferFull { needed } => {
                StreamError::BufferFull { needed, available: self.core.capacity() - self.core.text().len() }
            }
            Stop::Store(e) => StreamError::Capacity(e),
        }
    }

    /// Append a chunk of text.
    pub fn push_str(&mut self, chunk: &str) -> Result<Progress, StreamError> {
        self.core.push_str(chunk).map_err(|e| self.map(e))
    }

    /// Append raw bytes (a chunk may end inside a UTF-8 character).
    pub fn push_bytes(&mut self, chunk: &[u8]) -> Result<Progress, StreamError> {
        self.core.push_bytes(chunk).map_err(|e| self.map(e))
    }

    /// End of stream: the final blocks.
    pub fn finish(&mut self) -> Result<Blocks<'_>, StreamError> {
        match self.core.finish() {
            Ok(_) => Ok(self.core.blocks()),
            Err(e) => Err(self.map(e)),
        }
    }

    /// The blocks now.
    pub fn blocks(&self) -> Blocks<'_> {
        self.core.blocks()
    }

    /// The text pushed so far.
    pub fn text(&self) -> &str {
        self.core.text()
    }
}
