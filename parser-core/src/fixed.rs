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
use crate::scan::Slab;
use crate::scan::StrBuf;
pub use crate::store::CapacityError;
use crate::store::{BlockStore, RawBlock, Slots};
use crate::stream::{Progress, PushError, Stop, StreamCore, TextBuf};
use crate::utf8::Utf8Error;
use crate::view::Blocks;

type FixedStore<const B: usize, const P: usize> = BlockStore<heapless::Vec<RawBlock, B>, heapless::Vec<RawParam, P>>;

/// The blocks of one reply in fixed storage.
pub type Parsed<'a, const B: usize, const P: usize> =
    crate::ParsedIn<'a, heapless::Vec<RawBlock, B>, heapless::Vec<RawParam, P>>;

/// A reply that did not fit: the error, and the blocks of the input before [`CapacityError::offset`].
#[derive(Clone, Debug)]
pub struct Overflow<T> {
    /// What overflowed, and where.
    pub error: CapacityError,
    /// The blocks of `input[..error.offset]`, exactly as a whole parse of that prefix
    /// ([`Parsed`] from [`parse`], [`Blocks`] from [`parse_into`]).
    pub parsed: T,
}

/// Parse a whole reply with Cline's tables into at most `B` blocks and `P` params, returned by
/// value. For large capacities prefer [`parse_into`], which does not move the storage.
// Both variants hold the fixed storage, and there is no allocator to box it into.
#[allow(clippy::result_large_err)]
pub fn parse<const B: usize, const P: usize>(input: &str) -> Result<Parsed<'_, B, P>, Overflow<Parsed<'_, B, P>>> {
    parse_with(input, Grammar::cline())
}

/// Parse a whole reply with your own tables into at most `B` blocks and `P` params.
#[allow(clippy::result_large_err)]
pub fn parse_with<'a, const B: usize, const P: usize>(
    input: &'a str,
    grammar: &Grammar<'_>,
) -> Result<Parsed<'a, B, P>, Overflow<Parsed<'a, B, P>>> {
    let mut store = FixedStore::<B, P>::default();
    match run(input, grammar, &mut store) {
        Ok((input, tail)) => Ok(Parsed::<'a, B, P> { input, store, tail }),
        Err((error, input, tail)) => Err(Overflow { error, parsed: Parsed::<'a, B, P> { input, store, tail } }),
    }
}

/// Reusable storage for [`parse_into`]: put it in a `static`, on the stack, or in an arena.
#[derive(Clone, Debug)]
pub struct Storage<const B: usize, const P: usize> {
    store: FixedStore<B, P>,
}

impl<const B: usize, const P: usize> Storage<B, P> {
    /// Empty storage (usable in a `static`).
    pub const fn new() -> Self {
        Storage {
            store: BlockStore {
                blocks: heapless::Vec::new(),
                params: heapless::Vec::new(),
                open: false,
                tools: 0,
                changes: 0,
            },
        }
    }
}

impl<const B: usize, const P: usize> Default for Storage<B, P> {
    fn default() -> Self {
        Self::new()
    }
}

/// Parse a whole reply into caller-owned storage (cleared first), httparse-style: nothing is
/// moved or copied, whatever the capacities.
///
/// ```
/// use parser_core::{fixed, Grammar};
/// let storage = &mut fixed::Storage::<16, 32>::new();
/// let blocks = fixed::parse_into("Hi<read_file><path>a</path></read_file>", storage, Grammar::cline()).unwrap();
/// assert_eq!(blocks.len(), 2);
/// ```
// The error carries the same view as the success; there is no allocator to box it into.
#[allow(clippy::result_large_err)]
pub fn parse_into<'s, const B: usize, const P: usize>(
    input: &'s str,
    storage: &'s mut Storage<B, P>,
    grammar: &Grammar<'_>,
) -> Result<Blocks<'s>, Overflow<Blocks<'s>>> {
    // Clearing sets two lengths; assigning a fresh `Storage` would copy all of its capacity.
    storage.store.clear();
    let result = run(input, grammar, &mut storage.store);
    let store = &storage.store;
    let view = |input, tail| Blocks::new(input, &store.blocks, &store.params, store.open, tail, 0);
    match result {
        Ok((input, tail)) => Ok(view(input, tail)),
        Err((error, input, tail)) => Err(Overflow { error, parsed: view(input, tail) }),
    }
}

/// Run the engine over a whole input: the input the blocks cover (all of it, or the part before
/// the tag that did not fit) and what its end adds.
fn run<'a, B, P>(
    input: &'a str,
    grammar: &Grammar<'_>,
    store: &mut BlockStore<B, P>,
) -> Result<(&'a str, Tail), (CapacityError, &'a str, Tail)>
where
    B: Slots<RawBlock, Full = CapacityError>,
    P: Slots<RawParam, Full = CapacityError>,
{
    let mut engine = Engine::default();
    match engine.run(input.as_bytes(), grammar, store) {
        Ok(()) => Ok((input, engine.tail(input.as_bytes()))),
        Err(error) => {
            // The offset is a `<`, so a char boundary.
            let input = &input[..engine.position()];
            Err((error, input, engine.tail(input.as_bytes())))
        }
    }
}

/// One block's storage in caller memory, for [`parse_in_slots`] and [`SlotStreamParser`]: the
/// memory may be uninitialised (`MaybeUninit`), so a C caller can hand over any buffer of
/// suitably aligned bytes.
pub type BlockSlot = core::mem::MaybeUninit<RawBlock>;

/// One param's storage in caller memory (see [`BlockSlot`]).
pub type ParamSlot = core::mem::MaybeUninit<RawParam>;

/// Parse a whole reply into storage whose capacities are chosen at run time: at most
/// `blocks.len()` blocks and `params.len()` params, in memory the caller owns (uninitialised is
/// fine). Otherwise as [`parse_into`].
///
/// ```
/// use core::mem::MaybeUninit;
/// use parser_core::{fixed, Grammar};
/// let (mut blocks, mut params) = ([MaybeUninit::uninit(); 4], [MaybeUninit::uninit(); 4]);
/// let reply = "Hi<read_file><path>a</path></read_file>";
/// let parsed = fixed::parse_in_slots(reply, &mut blocks, &mut params, Grammar::cline()).unwrap();
/// assert_eq!(parsed.len(), 2);
/// let err = fixed::parse_in_slots(reply, &mut blocks[..1], &mut params, Grammar::cline()).unwrap_err();
/// assert_eq!((err.error.offset, err.parsed.len()), (2, 1));
/// ```
#[allow(clippy::result_large_err)]
pub fn parse_in_slots<'s>(
    input: &'s str,
    blocks: &'s mut [BlockSlot],
    params: &'s mut [ParamSlot],
    grammar: &Grammar<'_>,
) -> Result<Blocks<'s>, Overflow<Blocks<'s>>> {
    let mut store =
        BlockStore { blocks: Slab::new(blocks), params: Slab::new(params), open: false, tools: 0, changes: 0 };
    let result = run(input, grammar, &mut store);
    let open = store.open;
    let (blocks, params) = (store.blocks.into_slice(), store.params.into_slice());
    let view = |input, tail| Blocks::new(input, blocks, params, open, tail, 0);
    match result {
        Ok((input, tail)) => Ok(view(input, tail)),
        Err((error, input, tail)) => Err(Overflow { error, parsed: view(input, tail) }),
    }
}

/// A full text buffer: bytes a chunk needed, and bytes still free.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Full {
    needed: usize,
    available: usize,
}

impl TextBuf for StrBuf<'_> {
    type Full = Full;
    fn as_str(&self) -> &str {
        StrBuf::as_str(self)
    }
    fn capacity(&self) -> usize {
        StrBuf::capacity(self)
    }
    fn check_room(&self, needed: usize) -> Result<(), Full> {
        let available = self.capacity() - self.as_str().len();
        if available >= needed {
            Ok(())
        } else {
            Err(Full { needed, available })
        }
    }
    fn append(&mut self, s: &str) {
        // Room was checked by `check_room`.
        let _ = self.push_str(s);
    }
    fn clear_text(&mut self) {
        self.clear();
    }
}

/// Why a push to a [`StreamParser`] failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamError {
    /// The text buffer cannot take the chunk; nothing of it was consumed, and the stream goes on.
    BufferFull {
        /// Bytes the chunk needed.
        needed: usize,
        /// Bytes still free.
        available: usize,
    },
    /// A block or param store is full. The text was taken; the blocks are those of the text
    /// before [`CapacityError::offset`]. The stream is broken: later pushes return this again.
    Capacity(CapacityError),
    /// The bytes were not UTF-8 (see [`Utf8Error`]); everything before them was parsed. The
    /// stream is broken: later pushes return this again.
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

fn stream_error(stop: Stop<CapacityError, Full>) -> StreamError {
    match stop {
        Stop::Utf8(e) => StreamError::Utf8(e),
        Stop::BufferFull(Full { needed, available }) => StreamError::BufferFull { needed, available },
        Stop::Store(e) => StreamError::Capacity(e),
    }
}

/// The methods both fixed stream parsers share: each wraps the same `StreamCore`, over
/// `heapless::Vec` storage or over caller slots.
macro_rules! fixed_stream_methods {
    () => {
        /// Seed for [`crate::ToolUse::call_id`] (feature `nanorand`); the default is 0.
        pub fn with_call_seed(mut self, seed: u64) -> Self {
            self.core.set_call_seed(seed);
            self
        }

        /// Append a chunk of text. On an error, what the push completed before it is in the error's
        /// `progress`.
        #[inline]
        pub fn push_str(&mut self, chunk: &str) -> Result<Progress, PushError<StreamError>> {
            self.core.push_str(chunk).map_err(|e| PushError { error: stream_error(e.error), progress: e.progress })
        }

        /// Append raw bytes (a chunk may end inside a UTF-8 character).
        #[inline]
        pub fn push_bytes(&mut self, chunk: &[u8]) -> Result<Progress, PushError<StreamError>> {
            self.core.push_bytes(chunk).map_err(|e| PushError { error: stream_error(e.error), progress: e.progress })
        }

        /// End of stream: the final blocks.
        pub fn finish(&mut self) -> Result<Blocks<'_>, StreamError> {
            self.core.finish().map_err(stream_error)?;
            Ok(self.core.blocks())
        }

        /// The error that broke the stream, if any.
        pub fn error(&self) -> Option<StreamError> {
            self.core.failed().map(stream_error)
        }

        /// Start a new reply in the same buffer and storage.
        pub fn reset(&mut self) {
            self.core.reset();
        }

        /// The blocks now.
        pub fn blocks(&self) -> Blocks<'_> {
            self.core.blocks()
        }

        /// The text pushed so far.
        pub fn text(&self) -> &str {
            self.core.text()
        }

        /// Bytes the text buffer holds at most.
        pub fn capacity(&self) -> usize {
            self.core.capacity()
        }
    };
}

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
    core: StreamCore<'g, StrBuf<'buf>, heapless::Vec<RawBlock, B>, heapless::Vec<RawParam, P>, CapacityError>,
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
        let text = StrBuf::new(buf);
        StreamParser { core: StreamCore::new(grammar, text, heapless::Vec::new(), heapless::Vec::new()) }
    }

    fixed_stream_methods!();
}

/// [`StreamParser`] with capacities chosen at run time: text in `text`, blocks and params in
/// caller memory (uninitialised is fine; see [`BlockSlot`]). Same contract and errors.
///
/// ```
/// use core::mem::MaybeUninit;
/// use parser_core::{fixed, Grammar};
/// let (mut text, mut blocks, mut params) = ([0u8; 256], [MaybeUninit::uninit(); 4], [MaybeUninit::uninit(); 8]);
/// let mut p = fixed::SlotStreamParser::new(Grammar::cline(), &mut text, &mut blocks, &mut params);
/// for chunk in ["<read_file><pa", "th>a.txt</pa", "th></read_file>"] {
///     p.push_str(chunk).unwrap();
/// }
/// assert_eq!(p.blocks().len(), 1);
/// ```
#[derive(Debug)]
pub struct SlotStreamParser<'g, 'buf> {
    core: StreamCore<'g, StrBuf<'buf>, Slab<'buf, RawBlock>, Slab<'buf, RawParam>, CapacityError>,
}

impl<'g, 'buf> SlotStreamParser<'g, 'buf> {
    /// A parser for `grammar`, keeping the text in `text` and the blocks and params in `blocks`
    /// and `params`.
    pub fn new(
        grammar: &'g Grammar<'g>,
        text: &'buf mut [u8],
        blocks: &'buf mut [BlockSlot],
        params: &'buf mut [ParamSlot],
    ) -> Self {
        SlotStreamParser { core: StreamCore::new(grammar, StrBuf::new(text), Slab::new(blocks), Slab::new(params)) }
    }

    fixed_stream_methods!();
}

#[cfg(test)]
mod tests {
    //! Small enough to run under Miri, which checks the unsafe text buffer in real use.
    use super::*;
    use crate::Block;

    #[test]
    fn byte_stream_in_a_fixed_buffer_matches_the_whole_parse() {
        let reply = "Ünïcode first.<write_to_file><path>é.txt</path><content>\n  x</content>y</content></write_to_file> 😀 tail <read_fi";
        let mut buf = [0u8; 256];
        let mut p = StreamParser::<4, 4>::new(&mut buf);
        for chunk in reply.as_bytes().chunks(3) {
            p.push_bytes(chunk).unwrap();
        }
        let mut storage = Storage::<4, 4>::new();
        let whole = parse_into(reply, &mut storage, Grammar::cline()).unwrap();
        let streamed = p.finish().unwrap();
        assert!(streamed == whole);
        assert_eq!(streamed.len(), 3);
        let Some(Block::ToolUse(t)) = streamed.get(1) else { panic!("a tool") };
        assert_eq!(t.param("content"), Some("x</content>y"));
        assert_eq!(t.raw_param("content"), Some("\n  x</content>y"));
        assert_eq!(streamed.get(2), Some(Block::Text { content: "😀 tail <read_fi", partial: true }));
    }

    #[test]
    fn slot_storage_in_uninitialised_memory_matches_the_const_generic_storage() {
        use core::mem::MaybeUninit;
        let reply = "Ünïcode.<write_to_file><path>é</path><content>\n x</content>y</content></write_to_file> tail <read_file><path>a";
        let (mut b, mut p) = ([MaybeUninit::uninit(); 4], [MaybeUninit::uninit(); 4]);
        let mut storage = Storage::<4, 4>::new();
        let want = parse_into(reply, &mut storage, Grammar::cline()).unwrap();
        assert!(parse_in_slots(reply, &mut b, &mut p, Grammar::cline()).unwrap() == want);
        let (mut text, mut b2, mut p2) = ([0u8; 256], [MaybeUninit::uninit(); 4], [MaybeUninit::uninit(); 4]);
        let mut s = SlotStreamParser::new(Grammar::cline(), &mut text, &mut b2, &mut p2);
        for chunk in reply.as_bytes().chunks(3) {
            s.push_bytes(chunk).unwrap();
        }
        assert!(s.finish().unwrap() == want);
        s.reset();
        assert_eq!(s.blocks().len(), 0);
        // Two params fill the store: the third tag is refused at its offset.
        let (mut b3, mut p3) = ([MaybeUninit::uninit(); 4], [MaybeUninit::uninit(); 1]);
        let err = parse_in_slots(reply, &mut b3, &mut p3, Grammar::cline()).unwrap_err();
        assert_eq!((err.error.store, err.error.capacity), (crate::Store::Params, 1));
    }
}
