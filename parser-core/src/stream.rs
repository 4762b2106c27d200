//! Streaming: feed a reply chunk by chunk; after every push the blocks equal a whole parse of
//! everything pushed so far, for O(chunk) work per push (plus a tag cut by the chunk's end).

use core::ops::Range;

use crate::engine::{Engine, RawParam, Tail, TailMove};
use crate::grammar::Grammar;
use crate::scan::find_byte;
use crate::store::{BlockStore, RawBlock, Slots};
use crate::utf8::{HeldBytes, Utf8Error, Utf8ErrorKind};
use crate::view::Blocks;

/// What one push did, so a caller can present incrementally without diffing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Blocks in this range are new or may differ from before the push; blocks before
    /// `changed.start` are exactly as they were. Empty when the push changed nothing visible.
    pub changed: Range<usize>,
    /// Blocks that became complete (`partial == false`) in this push: final from now on. A tool
    /// in this range is ready to run.
    pub completed: Range<usize>,
    /// True when all the push changed is the growing end of the last block: its trailing text,
    /// or the value of the param being streamed ([`crate::Params::streaming`]). No block or param
    /// was added, completed or closed; `changed` is the last block alone. (The usual push: a
    /// caller can update that one string and nothing else.)
    pub grew_only: bool,
}

/// Where the accumulated text lives: a growable `String`, or a fixed caller-provided buffer.
/// Both take only `&str`, so the text is always valid UTF-8 without re-validation.
pub(crate) trait TextBuf {
    fn as_str(&self) -> &str;
    /// Total bytes it can hold.
    #[cfg(feature = "heapless")]
    fn capacity(&self) -> usize;
    /// What a full buffer reports (`Infallible` for a growable one).
    type Full: Copy;
    /// Room for `n` more bytes, or what is missing.
    fn check_room(&self, n: usize) -> Result<(), Self::Full>;
    /// Append (room was checked).
    fn append(&mut self, s: &str);
    /// Empty it, keeping its storage.
    fn clear_text(&mut self);
}

#[cfg(feature = "alloc")]
impl TextBuf for alloc::string::String {
    fn as_str(&self) -> &str {
        self
    }
    #[cfg(feature = "heapless")]
    fn capacity(&self) -> usize {
        usize::MAX
    }
    type Full = core::convert::Infallible;
    fn check_room(&self, _: usize) -> Result<(), Self::Full> {
        Ok(())
    }
    #[inline(always)]
    fn append(&mut self, s: &str) {
        crate::scan::push_short(self, s);
    }
    fn clear_text(&mut self) {
        self.clear();
    }
}

/// Growable text buffers can reserve room up front.
#[cfg(feature = "alloc")]
pub(crate) trait ReserveText {
    fn reserve_text(&mut self, bytes: usize);
}

#[cfg(feature = "alloc")]
impl ReserveText for alloc::string::String {
    fn reserve_text(&mut self, bytes: usize) {
        self.reserve(bytes);
    }
}

/// Why a push stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop<E, F> {
    Utf8(Utf8Error),
    /// The text buffer cannot take the chunk; nothing was consumed.
    BufferFull(F),
    Store(E),
}

/// A push that failed, with what it did before failing: blocks that the consumed part of the
/// chunk completed are reported in `progress`, so a tool that closed just before the bad bytes
/// can still be run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PushError<E> {
    /// What went wrong.
    pub error: E,
    /// What the push changed and completed before the error.
    pub progress: Progress,
}

/// The streaming parser over any text buffer and block storage.
#[derive(Clone, Debug)]
pub(crate) struct StreamCore<'g, T: TextBuf, B, P, E> {
    grammar: &'g Grammar<'g>,
    /// Valid UTF-8 only: everything pushed, minus `held`.
    text: T,
    held: HeldBytes,
    engine: Engine,
    store: BlockStore<B, P>,
    tail: Tail,
    call_seed: u64,
    /// The first error that broke the stream (invalid UTF-8, a full store): sticky, so that
    /// nothing after the hole is ever parsed and offsets stay true.
    failed: Option<Stop<E, T::Full>>,
}

impl<'g, T, B, P, E> StreamCore<'g, T, B, P, E>
where
    T: TextBuf,
    B: Slots<RawBlock, Full = E>,
    P: Slots<RawParam, Full = E>,
    E: Copy,
{
    pub(crate) fn new(grammar: &'g Grammar<'g>, text: T, blocks: B, params: P) -> Self {
        StreamCore {
            grammar,
            text,
            held: HeldBytes::default(),
            engine: Engine::default(),
            store: BlockStore { blocks, params, open: false, tools: 0, changes: 0 },
            tail: Tail::Nothing,
            call_seed: 0,
            failed: None,
        }
    }

    pub(crate) fn set_call_seed(&mut self, seed: u64) {
        self.call_seed = seed;
    }

    /// Start a new reply: forget the text, blocks and any error; keep the storage.
    pub(crate) fn reset(&mut self) {
        self.text.clear_text();
        self.held.clear();
        self.engine = Engine::default();
        self.store.clear();
        self.tail = Tail::Nothing;
        self.failed = None;
    }

    /// The error that broke the stream, if any.
    pub(crate) fn failed(&self) -> Option<Stop<E, T::Full>> {
        self.failed
    }

    #[cfg(feature = "heapless")]
    pub(crate) fn capacity(&self) -> usize {
        self.text.capacity()
    }

    #[cfg(feature = "alloc")]
    pub(crate) fn reserve(&mut self, bytes: usize)
    where
        T: ReserveText,
    {
        self.text.reserve_text(bytes);
    }

    /// The text pushed so far (held-back bytes of an incomplete character excluded).
    pub(crate) fn text(&self) -> &str {
        self.text.as_str()
    }

    pub(crate) fn blocks(&self) -> Blocks<'_> {
        Blocks::new(
            self.text(),
            self.store.blocks.items(),
            self.store.params.items(),
            self.store.open,
            self.tail,
            self.call_seed,
        )
    }

    /// Nothing changed, nothing completed.
    pub(crate) fn no_progress(&self) -> Progress {
        let len = self.blocks().len();
        Progress { changed: len..len, completed: len..len, grew_only: false }
    }

    fn refuse(&self, stop: Stop<E, T::Full>) -> PushError<Stop<E, T::Full>> {
        PushError { error: stop, progress: self.no_progress() }
    }

    #[inline]
    pub(crate) fn push_str(&mut self, chunk: &str) -> Result<Progress, PushError<Stop<E, T::Full>>> {
        if self.held.len() > 0 {
            // A `&str` starts on a character boundary, so it cannot complete held bytes.
            return self.push_bytes_slow(chunk.as_bytes());
        }
        self.push_whole(chunk, crate::scan::surely_no_lt(chunk.as_bytes()))
    }

    /// Push text while nothing is held; `no_lt`: the chunk is known to hold no `<`.
    #[inline(always)]
    fn push_whole(&mut self, chunk: &str, no_lt: bool) -> Result<Progress, PushError<Stop<E, T::Full>>> {
        if let Some(stop) = self.failed {
            return Err(self.refuse(stop));
        }
        if let Err(full) = self.text.check_room(chunk.len()) {
            return Err(self.refuse(Stop::BufferFull(full)));
        }
        let from = self.text.as_str().len();
        self.text.append(chunk);
        let s = self.text.as_str().as_bytes();
        // The new bytes' first `<`, searched once here (a short chunk in two words).
        let lt = if no_lt { None } else { find_byte(s, from, b'<') };
        if lt.is_none() && self.engine.run_plain(s.len()) {
            return Ok(self.plain_progress());
        }
        // Appending leaves the store as it was: these are the marks from before the push.
        let before = self.marks();
        let result = self.engine.run_searched(s, lt, self.grammar, &mut self.store);
        self.finish_scan(before, result, None)
    }

    /// After new bytes that moved only the end of the input (no tag in them, none cut short):
    /// no block was stored or closed, only the tail may have grown.
    #[inline(always)]
    fn plain_progress(&mut self) -> Progress {
        let s = self.text.as_str().as_bytes();
        let moved = self.engine.update_tail(s, &mut self.tail);
        let n = self.store.blocks.items().len();
        let len = n + usize::from(matches!(self.tail, Tail::Text(_)));
        let first = n - usize::from(self.store.open);
        Progress {
            changed: if moved != TailMove::Same { first..len } else { len..len },
            completed: first..first,
            grew_only: moved == TailMove::Grew,
        }
    }

    #[inline]
    pub(crate) fn push_bytes(&mut self, chunk: &[u8]) -> Result<Progress, PushError<Stop<E, T::Full>>> {
        // Nothing held and an ASCII chunk (most chunks): a `&str` already, with no decoding.
        if self.held.len() == 0 {
            if let Some((text, no_lt)) = crate::scan::ascii_str_no_lt(chunk) {
                return self.push_whole(text, no_lt);
            }
        }
        self.push_bytes_slow(chunk)
    }

    #[inline(never)]
    fn push_bytes_slow(&mut self, chunk: &[u8]) -> Result<Progress, PushError<Stop<E, T::Full>>> {
        if let Some(stop) = self.failed {
            return Err(self.refuse(stop));
        }
        if let Err(full) = self.text.check_room(self.held.len() + chunk.len()) {
            return Err(self.refuse(Stop::BufferFull(full)));
        }
        let before = self.marks();
        let decoded = self.held.decode(chunk);
        if let Some(c) = decoded.completed {
            self.text.append(c.encode_utf8(&mut [0; 4]));
        }
        self.text.append(decoded.text);
        let invalid = decoded.invalid.then(|| {
            // Everything before the bad sequence was taken; it starts where the text ends.
            Stop::Utf8(Utf8Error { offset: self.text.as_str().len(), kind: Utf8ErrorKind::Invalid })
        });
        self.scan(before, invalid)
    }

    /// End of stream: the blocks are final. An incomplete character still held is an error.
    pub(crate) fn finish(&mut self) -> Result<(), Stop<E, T::Full>> {
        if let Some(stop) = self.failed {
            return Err(stop);
        }
        if self.held.len() > 0 {
            let offset = self.text.as_str().len();
            let stop = Stop::Utf8(Utf8Error { offset, kind: Utf8ErrorKind::Incomplete });
            self.failed = Some(stop);
            return Err(stop);
        }
        Ok(())
    }

    #[inline]
    fn marks(&self) -> (usize, bool, u64) {
        (self.store.blocks.items().len(), self.store.open, self.store.changes)
    }

    /// Scan the new bytes, recompute the tail, and report what changed; then the first error,
    /// if the engine's store or the chunk's bytes (`invalid`) failed. Errors are sticky.
    fn scan(
        &mut self,
        marks: (usize, bool, u64),
        invalid: Option<Stop<E, T::Full>>,
    ) -> Result<Progress, PushError<Stop<E, T::Full>>> {
        let s = self.text.as_str().as_bytes();
        let result = self.engine.run(s, self.grammar, &mut self.store);
        self.finish_scan(marks, result, invalid)
    }

    /// After the engine ran on the new bytes (`result`): recompute the tail and report what
    /// changed since `marks`; then the first error, as for [`StreamCore::scan`].
    #[inline(never)]
    fn finish_scan(
        &mut self,
        (n0, open0, changes0): (usize, bool, u64),
        result: Result<(), E>,
        invalid: Option<Stop<E, T::Full>>,
    ) -> Result<Progress, PushError<Stop<E, T::Full>>> {
        let s = self.text.as_str().as_bytes();
        // After a storage error the blocks are those of the text before the tag that did not fit.
        let end = if result.is_ok() { s.len() } else { self.engine.position() };
        let moved = self.engine.update_tail(&s[..end], &mut self.tail);
        let n1 = self.store.blocks.items().len();
        let len = n1 + usize::from(matches!(self.tail, Tail::Text(_)));
        let first = n0 - usize::from(open0);
        let stored = self.store.changes != changes0;
        let changed = if stored || moved != TailMove::Same { first..len } else { len..len };
        let completed = first..n1 - usize::from(self.store.open);
        let progress = Progress { changed, completed, grew_only: !stored && moved == TailMove::Grew };
        // A store error comes first in the stream: it stops at a tag inside the taken text.
        match result.err().map(Stop::Store).or(invalid) {
            None => Ok(progress),
            Some(stop) => {
                self.failed = Some(stop);
                Err(PushError { error: stop, progress })
            }
        }
    }
}

#[cfg(feature = "alloc")]
pub use alloc_stream::StreamParser;

#[cfg(feature = "alloc")]
mod alloc_stream {
    use super::*;
    use alloc::string::String;
    use alloc::vec::Vec;
    use core::convert::Infallible;

    /// The streaming parser (growable storage). After every push, [`StreamParser::blocks`] equals
    /// [`crate::parse`] of everything pushed so far; each push scans only the new bytes.
    ///
    /// ```
    /// use parser_core::{Block, StreamParser};
    /// let mut p = StreamParser::new();
    /// p.push_str("Reading it.<read_file><path>src/a");
    /// let progress = p.push_str(".rs</path></read_file>");
    /// assert_eq!(progress.completed, 1..2); // the tool is complete: run it now
    /// let Some(Block::ToolUse(tool)) = p.blocks().get(1) else { panic!() };
    /// assert_eq!((tool.name, tool.param("path"), tool.partial), ("read_file", Some("src/a.rs"), false));
    /// ```
    ///
    /// Errors (only possible with [`StreamParser::push_bytes`]: invalid UTF-8) are sticky: the
    /// stream keeps the blocks of everything before the bad bytes, refuses further input with the
    /// same error, and [`StreamParser::reset`] starts a new reply.
    #[derive(Clone, Debug)]
    pub struct StreamParser<'g> {
        core: StreamCore<'g, String, Vec<RawBlock>, Vec<RawParam>, Infallible>,
    }

    impl Default for StreamParser<'static> {
        fn default() -> Self {
            Self::new()
        }
    }

    impl StreamParser<'static> {
        /// A parser for Cline v4.0.10's tools and params.
        pub fn new() -> Self {
            Self::with_grammar(Grammar::cline())
        }
    }

    /// The only errors a growable stream can meet are UTF-8 errors.
    fn utf8(stop: Stop<Infallible, Infallible>) -> Utf8Error {
        match stop {
            Stop::Utf8(e) => e,
            Stop::BufferFull(never) | Stop::Store(never) => match never {},
        }
    }

    impl<'g> StreamParser<'g> {
        /// A parser for your own tool and param tables.
        pub fn with_grammar(grammar: &'g Grammar<'g>) -> Self {
            StreamParser { core: StreamCore::new(grammar, String::new(), Vec::new(), Vec::new()) }
        }

        /// Reserve room for a reply of about `bytes` bytes up front, so the accumulated text is
        /// never copied while it grows.
        pub fn with_capacity(mut self, bytes: usize) -> Self {
            self.core.reserve(bytes);
            self
        }

        /// Seed for [`crate::ToolUse::call_id`] (feature `nanorand`); the default is 0.
        pub fn with_call_seed(mut self, seed: u64) -> Self {
            self.core.set_call_seed(seed);
            self
        }

        /// Append a chunk of text. A `&str` is always valid, so this cannot fail, except after a
        /// misuse: if [`StreamParser::push_bytes`] left an incomplete UTF-8 character, a `&str`
        /// cannot complete it; the stream then fails at that offset (see [`StreamParser::error`]),
        /// this chunk is not taken, and the returned `Progress` is empty.
        #[inline]
        pub fn push_str(&mut self, chunk: &str) -> Progress {
            match self.core.push_str(chunk) {
                Ok(p) => p,
                Err(e) => e.progress,
            }
        }

        /// Append raw bytes; a chunk may end inside a UTF-8 character. Invalid UTF-8 is an error
        /// with its stream offset: the bytes before it were parsed (and what they completed is in
        /// the error's `progress`), none from it on.
        #[inline]
        pub fn push_bytes(&mut self, chunk: &[u8]) -> Result<Progress, PushError<Utf8Error>> {
            self.core.push_bytes(chunk).map_err(|e| PushError { error: utf8(e.error), progress: e.progress })
        }

        /// End of stream. The blocks are final (trailing text stays `partial`, as in Cline).
        /// Fails if the stream broke, or ended inside a UTF-8 character pushed as bytes.
        pub fn finish(&mut self) -> Result<Blocks<'_>, Utf8Error> {
            self.core.finish().map_err(utf8)?;
            Ok(self.core.blocks())
        }

        /// The error that broke the stream, if any.
        pub fn error(&self) -> Option<Utf8Error> {
            self.core.failed().map(utf8)
        }

        /// Start a new reply, keeping the allocations.
        pub fn reset(&mut self) {
            self.core.reset();
        }

        /// The blocks now: equal to `parse(self.text())`.
        pub fn blocks(&self) -> Blocks<'_> {
            self.core.blocks()
        }

        /// Number of blocks now.
        pub fn len(&self) -> usize {
            self.core.blocks().len()
        }

        /// True while there are no blocks.
        pub fn is_empty(&self) -> bool {
            self.len() == 0
        }

        /// Block `i` now.
        pub fn block(&self, i: usize) -> Option<crate::Block<'_>> {
            self.core.blocks().get(i)
        }

        /// The text pushed so far.
        pub fn text(&self) -> &str {
            self.core.text()
        }
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use crate::scan::counter;
    use alloc::string::String;

    /// About 1 MB of replies: prose, code full of `<`, tools, a long file write, long whitespace.
    fn megabyte_reply() -> String {
        let mut s = String::new();
        let mut i = 0;
        while s.len() < 1 << 20 {
            s.push_str("I'll check the loop: `for i in 0..n { if a[i] < b { x <<= 1 } }` and then\n\n");
            s.push_str("<read_file>\n<path>src/lib.rs</path>\n</read_file>\n");
            s.push_str("<write_to_file>\n<path>out.rs</path>\n<content>\nfn f<T: Ord>(a: Vec<T>) -> Option<T> {\n    a.into_iter().max() // a < b\n}\n</content>\n</write_to_file>\n");
            s.push_str("<execute_command><command>cargo test 2>&1 | head</command><requires_approval>false</requires_approval></execute_command>");
            if i % 50 == 0 {
                s.push_str(&" \n\t".repeat(2000));
                s.push_str("<<<<>>>><read_fi <pat </ </path");
            }
            i += 1;
        }
        s
    }

    #[test]
    fn bytes_examined_are_linear_for_one_byte_pushes() {
        let reply = megabyte_reply();
        counter::take();
        let whole = crate::parse(&reply);
        let whole_examined = counter::take();

        let mut p = StreamParser::new();
        for b in reply.as_bytes().chunks(1) {
            let _ = p.push_bytes(b);
        }
        let streamed = counter::take();
        assert!(p.blocks() == whole.blocks());
        let n = reply.len();
        std::eprintln!("bytes examined for {n} input bytes: whole parse {whole_examined}, 1-byte pushes {streamed}");
        assert!(whole_examined <= 2 * n, "whole parse examined {whole_examined} bytes of {n}");
        assert!(streamed <= 3 * n, "1-byte pushes examined {streamed} bytes of {n}");
    }

    #[test]
    fn the_counter_sees_a_quadratic_rescan() {
        // Re-parsing the accumulated text after every byte (what Cline does) is caught.
        let reply = &megabyte_reply()[..20_000];
        counter::take();
        for end in (1..=reply.len()).filter(|&e| reply.is_char_boundary(e)) {
            let _ = crate::parse(&reply[..end]);
        }
        let examined = counter::take();
        assert!(examined > 1000 * reply.len(), "examined {examined}");
    }
}
