//! parser-core as a WebAssembly module for Node.js and browsers, behind raw exports.
//!
//! The JavaScript glue (`js/index.cjs`) owns the strings. It encodes a JS string into this
//! module's input buffer with `TextEncoder.encodeInto` (a lone surrogate becomes U+FFFD, three
//! bytes), calls an export, and reads the answer: a list of `u32` words in which every text
//! position is a **UTF-16 offset into the caller's JS string**. The glue then slices its own
//! string, so the blocks hold exactly the JS characters Cline's parser would return — astral
//! characters and lone surrogates included — whatever UTF-8 the parser saw. (U+FFFD is neither
//! `<`, `>` nor whitespace, just like a lone surrogate, so the parse itself cannot differ.)
//!
//! There is no `unsafe` here: JavaScript writes into a `Vec<u8>` that Rust initialised and
//! resized, and Rust validates it as UTF-8 before parsing.
//!
//! Answer layout (`out_ptr()`, `out_len()` words), after a parse or a push:
//!
//! ```text
//! [total blocks, first block listed, completed.start, completed.end, moved,
//!  then for each listed block: kind (0 text, 1 tool) | partial << 1, start, end, params, ordinal,
//!  then for each param: name start, name end, value start, value end]
//! ```
//!
//! A text block's `start..end` is its content; a tool's is its name. A whole parse lists every
//! block; a push lists the blocks from `Progress::changed.start` on (the earlier ones are as the
//! previous push left them), with `moved` = [`NOT_MOVED`]. The usual push changes only the
//! growing string of the last block, which the previous answer listed already
//! (`Progress::grew_only`): its answer is then `moved` — 0 for a text's content, `1 + p` for
//! param `p`'s value — and that string's new start and end, instead of the block's words; the
//! glue rebuilds that block from its previous one. The next such push reads the string's new end
//! from the new bytes (trailing ASCII whitespace) instead of asking the parser again.
//!
//! The glue itself answers a push that surely only extends the growing string (no `>` in it
//! that could end a tag) and hands such chunks over later, several in one push: to this module a
//! push is any run of the stream's text.
#![allow(unsafe_code)] // only for `#[unsafe(no_mangle)]`: the exports JavaScript calls by name

use std::cell::RefCell;

use parser_core::{Block, Blocks, Grammar, StreamParser, TagSetBuf, CLINE_PARAMS, CLINE_TOOL_NAMES};

mod utf16;
use utf16::Utf16Index;

/// Error codes returned by exports as negative numbers (`i32`).
pub mod code {
    /// The bytes in the input buffer are not UTF-8 (the glue never does this).
    pub const BAD_UTF8: i32 = -1;
    /// No stream or grammar with that handle.
    pub const BAD_HANDLE: i32 = -2;
    /// A tag name is empty, contains `<` or `>`, or starts with `/`.
    pub const BAD_NAME: i32 = -3;
    /// A tag name is longer than `MAX_NAME_LEN`, or there are too many names.
    pub const TOO_MANY: i32 = -4;
    /// A length does not fit the input buffer.
    pub const BAD_LENGTH: i32 = -5;
}

/// The `moved` word of an answer that is not a one-string change.
pub const NOT_MOVED: u32 = u32::MAX;

struct Stream {
    parser: StreamParser<'static>,
    index: Utf16Index,
    /// The index of the last block the answers listed (the glue built it from their words).
    last: Option<usize>,
    /// The growing string the last answer moved, if it was not empty.
    grown: Option<Grown>,
}

/// A growing string an answer moved: of block `n - 1`, which one (`moved`), and its byte span.
#[derive(Clone, Copy)]
struct Grown {
    n: usize,
    moved: u32,
    start: usize,
    end: usize,
}

/// After a push that only grew the growing string `g` (`Progress::grew_only`: the same string,
/// which runs to the end of `text` and is trimmed as JavaScript's `trim` does): its new end, read
/// from the new bytes' ASCII whitespace alone. `None` when a non-ASCII character ends the text
/// (it may be whitespace to `trim`): then the parser says where the string ends.
fn grown_end(text: &[u8], g: &Grown) -> Option<usize> {
    let mut p = text.len();
    // `text[g.end - 1]` ends a non-empty trimmed string: not whitespace, so the scan stops there.
    while p > g.end {
        match text[p - 1] {
            b'\t'..=b'\r' | b' ' => p -= 1,
            0x80.. => return None,
            _ => break,
        }
    }
    Some(p)
}

#[derive(Default)]
struct State {
    input: Vec<u8>,
    out: Vec<u32>,
    /// Grammars by handle; handle 0 is Cline's. A run-time grammar is leaked: it must outlive
    /// every stream that uses it, and programs set their tool names once or a few times.
    grammars: Vec<&'static Grammar<'static>>,
    streams: Vec<Option<Stream>>,
    /// Scratch index for whole parses (kept so that its storage is reused).
    index: Utf16Index,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State { grammars: vec![Grammar::cline()], ..State::default() });
}

fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    STATE.with(|s| f(&mut s.borrow_mut()))
}

/// Make the input buffer hold at least `bytes` bytes and return its address; the glue writes
/// the UTF-8 of its string there. The address changes when the buffer grows.
#[no_mangle]
pub extern "C" fn input_buffer(bytes: u32) -> u32 {
    with(|s| {
        if s.input.len() < bytes as usize {
            s.input.resize(bytes as usize, 0);
        }
        s.input.as_mut_ptr() as usize as u32
    })
}

/// Copy `bytes` into the input buffer: what the glue does with `input_buffer`, for native
/// callers such as the benchmarks (`benches/`), where an address does not fit a `u32`.
#[doc(hidden)]
pub fn set_input(bytes: &[u8]) {
    with(|s| {
        s.input.clear();
        s.input.extend_from_slice(bytes);
    })
}

/// Number of words in the last answer, and the answer: for native callers (see [`set_input`]).
#[doc(hidden)]
pub fn answer_len() -> usize {
    with(|s| s.out.len())
}

/// Address of the last answer's words.
#[no_mangle]
pub extern "C" fn out_ptr() -> u32 {
    with(|s| s.out.as_ptr() as usize as u32)
}

/// Number of words in the last answer.
#[no_mangle]
pub extern "C" fn out_len() -> u32 {
    with(|s| s.out.len() as u32)
}

fn input_str(input: &[u8], len: u32) -> Result<&str, i32> {
    let bytes = input.get(..len as usize).ok_or(code::BAD_LENGTH)?;
    core::str::from_utf8(bytes).map_err(|_| code::BAD_UTF8)
}

/// Parse the `len` bytes in the input buffer as one whole reply with grammar `grammar`
/// (0: Cline's). `ascii` is nonzero when the glue knows the text is ASCII (UTF-16 offsets are
/// then byte offsets). Returns the number of blocks, or a negative error code.
#[no_mangle]
pub extern "C" fn parse(len: u32, ascii: u32, grammar: u32) -> i32 {
    with(|s| {
        let State { input, out, grammars, index, .. } = s;
        let Some(&g) = grammars.get(grammar as usize) else { return code::BAD_HANDLE };
        let text = match input_str(input, len) {
            Ok(t) => t,
            Err(e) => return e,
        };
        index.clear();
        index.extend(text.as_bytes(), ascii != 0);
        let blocks = parser_core::parse_with(text, g);
        let blocks = blocks.blocks();
        let n = blocks.len();
        write_answer(out, &blocks, 0, 0..n, index);
        n as i32
    })
}

/// Build a grammar from names in the input buffer: `tools` tool names then `params` param
/// names, each followed by a NUL byte, `len` bytes in all. Returns its handle (> 0) or a
/// negative error code.
#[no_mangle]
pub extern "C" fn grammar_new(len: u32, tools: u32, params: u32) -> i32 {
    with(|s| {
        let text = match input_str(&s.input, len) {
            Ok(t) => t,
            Err(e) => return e,
        };
        let names: Vec<&str> = text.split_terminator('\0').collect();
        if names.len() != (tools + params) as usize {
            return code::BAD_LENGTH;
        }
        let owned: &'static [&'static str] = Box::leak(
            names.iter().map(|n| &*Box::leak(String::from(*n).into_boxed_str())).collect::<Vec<_>>().into_boxed_slice(),
        );
        let (tool_names, param_names) = owned.split_at(tools as usize);
        let table = |names: &'static [&'static str]| match TagSetBuf::try_new(names) {
            Ok(t) => Ok(Box::leak(Box::new(t))),
            Err(parser_core::TableError::InvalidName(_)) => Err(code::BAD_NAME),
            Err(_) => Err(code::TOO_MANY),
        };
        let tools = match table(tool_names) {
            Ok(t) => t.table(),
            Err(e) => return e,
        };
        let params = match table(param_names) {
            Ok(t) => t.table(),
            Err(e) => return e,
        };
        let g: &'static Grammar<'static> = Box::leak(Box::new(Grammar::new(tools, params)));
        s.grammars.push(g);
        (s.grammars.len() - 1) as i32
    })
}

/// Cline's tool names followed by `extra` ones (NUL-terminated in the input buffer, `len`
/// bytes), with Cline's params: what `setDynamicToolUseNames` makes. Returns a grammar handle or
/// a negative error code.
#[no_mangle]
pub extern "C" fn grammar_with_tools(len: u32) -> i32 {
    let extra: Vec<String> = with(|s| match input_str(&s.input, len) {
        Ok(t) => Ok(t.split_terminator('\0').map(String::from).collect()),
        Err(e) => Err(e),
    })
    .unwrap_or_default();
    let mut all: Vec<&str> = CLINE_TOOL_NAMES.to_vec();
    for e in &extra {
        if !all.contains(&e.as_str()) {
            all.push(e);
        }
    }
    let owned: &'static [&'static str] = Box::leak(
        all.iter().map(|n| &*Box::leak(String::from(*n).into_boxed_str())).collect::<Vec<_>>().into_boxed_slice(),
    );
    let tools = match TagSetBuf::try_new(owned) {
        Ok(t) => Box::leak(Box::new(t)).table(),
        Err(parser_core::TableError::InvalidName(_)) => return code::BAD_NAME,
        Err(_) => return code::TOO_MANY,
    };
    let g: &'static Grammar<'static> = Box::leak(Box::new(Grammar::new(tools, CLINE_PARAMS.table())));
    with(|s| {
        s.grammars.push(g);
        (s.grammars.len() - 1) as i32
    })
}

/// A new stream with grammar `grammar`: its handle (≥ 0) or a negative error code.
#[no_mangle]
pub extern "C" fn stream_new(grammar: u32) -> i32 {
    with(|s| {
        let Some(&g) = s.grammars.get(grammar as usize) else { return code::BAD_HANDLE };
        let stream =
            Stream { parser: StreamParser::with_grammar(g), index: Utf16Index::default(), last: None, grown: None };
        match s.streams.iter().position(Option::is_none) {
            Some(free) => {
                s.streams[free] = Some(stream);
                free as i32
            }
            None => {
                s.streams.push(Some(stream));
                (s.streams.len() - 1) as i32
            }
        }
    })
}

/// Drop stream `handle`, freeing its text and blocks; the handle may be reused.
#[no_mangle]
pub extern "C" fn stream_free(handle: u32) -> i32 {
    with(|s| match s.streams.get_mut(handle as usize) {
        Some(slot @ Some(_)) => {
            *slot = None;
            while s.streams.last().is_some_and(Option::is_none) {
                s.streams.pop();
            }
            0
        }
        _ => code::BAD_HANDLE,
    })
}

/// Start a new reply on stream `handle`, keeping its storage.
#[no_mangle]
pub extern "C" fn stream_reset(handle: u32) -> i32 {
    with(|s| match s.streams.get_mut(handle as usize) {
        Some(Some(st)) => {
            st.parser.reset();
            st.index.clear();
            st.last = None;
            st.grown = None;
            0
        }
        _ => code::BAD_HANDLE,
    })
}

/// Append the `len` bytes in the input buffer to stream `handle` (`ascii` as for [`parse`]).
/// Bytes that are not UTF-8 are an error that breaks the stream (every later push fails too,
/// until [`stream_reset`]).
/// Returns where the answer is (its address in words, as [`out_ptr`] / 4: one call per push
/// instead of two), or a negative error code; the answer lists the blocks from the first that
/// changed (its first word is the number of blocks now).
#[no_mangle]
pub extern "C" fn stream_push(handle: u32, len: u32, ascii: u32) -> i32 {
    with(|s| {
        let State { input, out, streams, .. } = s;
        let Some(Some(st)) = streams.get_mut(handle as usize) else { return code::BAD_HANDLE };
        let Some(chunk) = input.get(..len as usize) else { return code::BAD_LENGTH };
        // The parser checks the bytes itself (an ASCII chunk with no decoding): invalid UTF-8,
        // which the glue never sends, breaks the stream for good, as it does in Rust.
        let progress = match st.parser.push_bytes(chunk) {
            Ok(progress) => progress,
            Err(_) => return code::BAD_UTF8,
        };
        st.index.extend(st.parser.text().as_bytes(), ascii != 0);
        let blocks = st.parser.blocks();
        let n = blocks.len();
        let bytes = blocks.input().as_bytes();
        // The usual push: the growing string of the last block, which the glue has, moved. The
        // same string as the last answer's (then only its end moved), or the parser finds it.
        let grown = if progress.grew_only && st.last == Some(n - 1) {
            let again = st.grown.filter(|g| g.n == n).and_then(|g| Some(Grown { end: grown_end(bytes, &g)?, ..g }));
            again.or_else(|| {
                blocks.growing().map(|(param, span)| Grown {
                    n,
                    moved: param.map_or(0, |k| 1 + k as u32),
                    start: span.start,
                    end: span.end,
                })
            })
        } else {
            None
        };
        st.grown = grown.filter(|g| g.start < g.end);
        match grown {
            Some(g) => {
                let u = |offset: usize| st.index.utf16(bytes, offset) as u32;
                let done = progress.completed;
                let words =
                    [n as u32, (n - 1) as u32, done.start as u32, done.end as u32, g.moved, u(g.start), u(g.end)];
                out.clear();
                out.extend_from_slice(&words);
            }
            None => {
                if write_answer(out, &blocks, progress.changed.start, progress.completed, &st.index) {
                    st.last = Some(n - 1);
                }
            }
        }
        (out.as_ptr() as usize / 4) as i32
    })
}

/// Write the answer words for `blocks[from..]`; returns whether it listed any (then the last
/// block among them).
fn write_answer(
    out: &mut Vec<u32>,
    blocks: &Blocks<'_>,
    from: usize,
    completed: core::ops::Range<usize>,
    index: &Utf16Index,
) -> bool {
    let text = blocks.input();
    let bytes = text.as_bytes();
    let base = text.as_ptr() as usize;
    let u = |offset: usize| index.utf16(bytes, offset) as u32;
    // Names and text contents are slices of `text`; their offsets follow from their addresses.
    let span = |s: &str| {
        let start = s.as_ptr() as usize - base;
        (u(start), u(start + s.len()))
    };
    let n = blocks.len();
    out.clear();
    // Word by word into reserved room: `extend_from_slice` of a few words is a call to memcpy each.
    out.reserve(4 + 5 * n.saturating_sub(from));
    for w in [n as u32, from as u32, completed.start as u32, completed.end as u32, NOT_MOVED] {
        out.push(w);
    }
    let mut listed = false;
    // Only the blocks from `from` on: each is O(1) to get, so a push costs its changed blocks,
    // never the ones before (a reply of 4,000 tools costs 4x one of 1,000).
    for i in from..n {
        let Some(b) = blocks.get(i) else { break };
        listed = true;
        match b {
            Block::Text { content, partial } => {
                let (start, end) = span(content);
                for w in [u32::from(partial) << 1, start, end, 0, 0] {
                    out.push(w);
                }
            }
            Block::ToolUse(tool) => {
                let (start, end) = span(tool.name);
                let params = tool.params();
                for w in [1 | u32::from(tool.partial) << 1, start, end, params.len() as u32, tool.ordinal as u32] {
                    out.push(w);
                }
                out.reserve(4 * params.len());
                for (name, value) in params.spans() {
                    for w in [u(name.start), u(name.end), u(value.start), u(value.end)] {
                        out.push(w);
                    }
                }
            }
        }
    }
    listed
}
