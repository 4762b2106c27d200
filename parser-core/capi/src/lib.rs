//! A C ABI for parser-core (`parser_core.h`): a whole parse and a stream, into storage the caller
//! supplies, with blocks as byte spans into the caller's buffer. Nothing allocates; every error is
//! a return code; nothing panics across the boundary.
//!
//! All pointer handling is in [`raw`], each `unsafe` block with its `// SAFETY:` comment; the
//! functions here only check arguments and translate between C structs and parser-core.
#![allow(unsafe_code)] // the C ABI: raw pointers from C are the whole point of this crate
#![deny(unsafe_op_in_unsafe_fn)]
// The C names of the types are the header's.
#![allow(non_camel_case_types)]

use core::mem::{align_of, size_of};

use parser_core::fixed::{self, BlockSlot, ParamSlot, SlotStreamParser, StreamError};
use parser_core::{Block, Blocks, Grammar, Store};

mod raw;

/// Success.
pub const PC_OK: i32 = 0;
/// A required pointer is NULL.
pub const PC_ERR_NULL: i32 = -1;
/// The input is not UTF-8; the error offset says where the bad bytes start.
pub const PC_ERR_UTF8: i32 = -2;
/// The block slots are full; the error offset is the tag that did not fit.
pub const PC_ERR_BLOCKS_FULL: i32 = -3;
/// The param slots are full; the error offset is the tag that did not fit.
pub const PC_ERR_PARAMS_FULL: i32 = -4;
/// The stream's text buffer cannot take the chunk (nothing of it was taken).
pub const PC_ERR_TEXT_FULL: i32 = -5;
/// No block or param with that index.
pub const PC_ERR_RANGE: i32 = -6;
/// The stream ended inside a UTF-8 character.
pub const PC_ERR_INCOMPLETE: i32 = -7;

/// `pc_block.kind` of a text block.
pub const PC_TEXT: i32 = 0;
/// `pc_block.kind` of a tool use.
pub const PC_TOOL_USE: i32 = 1;

/// Words (8 bytes each) of opaque storage in a `pc_blocks` view.
pub const PC_BLOCKS_WORDS: usize = 16;
/// Words of opaque storage in a `pc_stream`.
pub const PC_STREAM_WORDS: usize = 48;
/// Words of opaque storage in one block or param slot.
pub const PC_SLOT_WORDS: usize = 6;

/// Storage for one block (opaque; any alignment of 8 will do, uninitialised is fine).
#[repr(C)]
pub struct pc_block_slot {
    opaque: [u64; PC_SLOT_WORDS],
}

/// Storage for one param (opaque, as `pc_block_slot`).
#[repr(C)]
pub struct pc_param_slot {
    opaque: [u64; PC_SLOT_WORDS],
}

/// A view of a reply's blocks (opaque). It points into the input (or the stream's text buffer)
/// and the slots; it is valid while they are unchanged.
#[repr(C)]
pub struct pc_blocks {
    opaque: [u64; PC_BLOCKS_WORDS],
}

/// A streaming parser living in caller memory (opaque).
#[repr(C)]
pub struct pc_stream {
    opaque: [u64; PC_STREAM_WORDS],
}

/// A byte range `[start, end)` of the input or of the stream's text buffer.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct pc_span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

/// One block.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct pc_block {
    /// `PC_TEXT` or `PC_TOOL_USE`.
    pub kind: i32,
    /// 1 while unfinished (trailing text, or a tool without its close tag).
    pub partial: i32,
    /// A text block's trimmed content, or a tool's name.
    pub span: pc_span,
    /// A tool's number of params (0 for text).
    pub param_count: usize,
    /// A tool's 0-based ordinal among the reply's tools (0 for text).
    pub ordinal: usize,
}

/// One param of a tool use.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct pc_param {
    /// The param's name.
    pub name: pc_span,
    /// Its value as Cline has it (trimmed).
    pub value: pc_span,
    /// Its untrimmed value.
    pub raw: pc_span,
}

/// Details of an error (each field meaningful for the codes named).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct pc_error {
    /// UTF8, BLOCKS_FULL, PARAMS_FULL, INCOMPLETE: the byte offset where it happened.
    pub offset: usize,
    /// TEXT_FULL: bytes the chunk needed.
    pub needed: usize,
    /// TEXT_FULL: bytes still free. BLOCKS_FULL, PARAMS_FULL: the store's capacity.
    pub available: usize,
}

/// What one push did.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct pc_progress {
    /// Blocks `[changed_start, changed_end)` are new or may have changed.
    pub changed_start: usize,
    /// See `changed_start`.
    pub changed_end: usize,
    /// Blocks `[completed_start, completed_end)` became complete in this push.
    pub completed_start: usize,
    /// See `completed_start`.
    pub completed_end: usize,
}

type Stream = SlotStreamParser<'static, 'static>;

// The opaque C types must hold the Rust values they stand for.
const _: () = {
    assert!(size_of::<BlockSlot>() <= size_of::<pc_block_slot>() && align_of::<BlockSlot>() <= 8);
    assert!(size_of::<ParamSlot>() <= size_of::<pc_param_slot>() && align_of::<ParamSlot>() <= 8);
    assert!(size_of::<Blocks<'static>>() <= size_of::<pc_blocks>() && align_of::<Blocks<'static>>() <= 8);
    assert!(size_of::<Stream>() <= size_of::<pc_stream>() && align_of::<Stream>() <= 8);
};

fn span_of(base: &str, s: &str) -> pc_span {
    let start = s.as_ptr() as usize - base.as_ptr() as usize;
    pc_span { start, end: start + s.len() }
}

fn capacity_code(e: fixed::CapacityError, err: &mut pc_error) -> i32 {
    *err = pc_error { offset: e.offset, needed: 0, available: e.capacity };
    match e.store {
        Store::Blocks => PC_ERR_BLOCKS_FULL,
        Store::Params => PC_ERR_PARAMS_FULL,
    }
}

fn stream_code(e: StreamError, err: &mut pc_error) -> i32 {
    match e {
        StreamError::BufferFull { needed, available } => {
            *err = pc_error { offset: 0, needed, available };
            PC_ERR_TEXT_FULL
        }
        StreamError::Capacity(c) => capacity_code(c, err),
        StreamError::Utf8(u) => {
            *err = pc_error { offset: u.offset, needed: 0, available: 0 };
            match u.kind {
                parser_core::Utf8ErrorKind::Invalid => PC_ERR_UTF8,
                parser_core::Utf8ErrorKind::Incomplete => PC_ERR_INCOMPLETE,
            }
        }
    }
}

/// Parse `len` bytes at `input` as one whole reply (Cline's grammar) into `block_cap` block slots
/// and `param_cap` param slots, and write a view of the blocks to `*out`. Returns `PC_OK`, or an
/// error code with details in `*error` (which may be NULL): after `PC_ERR_UTF8` or a full store,
/// `*out` holds the blocks of the input before `error->offset`.
///
/// # Safety
/// `input` must point to `len` readable bytes (it may be NULL when `len` is 0), `blocks` and
/// `params` to `block_cap` and `param_cap` writable slots (NULL when 0), `out` to writable
/// memory for a `pc_blocks`, and `error` to a writable `pc_error` or be NULL. The view in `*out`
/// borrows `input` and the slots: they must stay unchanged while it is used.
#[no_mangle]
pub unsafe extern "C" fn pc_parse(
    input: *const u8,
    len: usize,
    blocks: *mut pc_block_slot,
    block_cap: usize,
    params: *mut pc_param_slot,
    param_cap: usize,
    out: *mut pc_blocks,
    error: *mut pc_error,
) -> i32 {
    // SAFETY: the caller's contract above, passed on.
    let args =
        unsafe { (raw::bytes(input, len), raw::block_slots(blocks, block_cap), raw::param_slots(params, param_cap)) };
    let (Some(bytes), Some(blocks), Some(params)) = args else { return PC_ERR_NULL };
    if out.is_null() {
        return PC_ERR_NULL;
    }
    let mut err = pc_error::default();
    let (text, mut code) = match core::str::from_utf8(bytes) {
        Ok(t) => (t, PC_OK),
        Err(e) => {
            err.offset = e.valid_up_to();
            // The prefix before the bad bytes is valid UTF-8 by construction.
            (core::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or(""), PC_ERR_UTF8)
        }
    };
    let view = match fixed::parse_in_slots(text, blocks, params, Grammar::cline()) {
        Ok(v) => v,
        Err(o) => {
            code = capacity_code(o.error, &mut err);
            o.parsed
        }
    };
    // SAFETY: `out` is non-null and writable (contract above); `view` fits (const assertion).
    unsafe { raw::put_blocks(out, view) };
    if code != PC_OK {
        // SAFETY: `error` is NULL or writable (contract above).
        unsafe { raw::put(error, err) };
    }
    code
}

/// Number of blocks in a view.
///
/// # Safety
/// `blocks` must be NULL or point to a view written by `pc_parse` or `pc_stream_blocks`, whose
/// memory is still unchanged.
#[no_mangle]
pub unsafe extern "C" fn pc_blocks_len(blocks: *const pc_blocks) -> usize {
    // SAFETY: the caller's contract above.
    unsafe { raw::get_blocks(blocks) }.map_or(0, |b| b.len())
}

/// Block `i` of a view, into `*out`. Returns `PC_OK`, `PC_ERR_RANGE` or `PC_ERR_NULL`.
///
/// # Safety
/// As for `pc_blocks_len`; `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn pc_blocks_get(blocks: *const pc_blocks, i: usize, out: *mut pc_block) -> i32 {
    // SAFETY: the caller's contract above.
    let Some(view) = (unsafe { raw::get_blocks(blocks) }) else { return PC_ERR_NULL };
    if out.is_null() {
        return PC_ERR_NULL;
    }
    let base = view.input();
    let block = match view.get(i) {
        None => return PC_ERR_RANGE,
        Some(Block::Text { content, partial }) => pc_block {
            kind: PC_TEXT,
            partial: i32::from(partial),
            span: span_of(base, content),
            param_count: 0,
            ordinal: 0,
        },
        Some(Block::ToolUse(t)) => pc_block {
            kind: PC_TOOL_USE,
            partial: i32::from(t.partial),
            span: span_of(base, t.name),
            param_count: t.params().len(),
            ordinal: t.ordinal,
        },
    };
    // SAFETY: `out` is non-null and writable (contract above).
    unsafe { raw::put(out, block) };
    PC_OK
}

/// Param `j` of block `i` (a tool use) of a view, in Cline's key order, into `*out`. Returns
/// `PC_OK`, `PC_ERR_RANGE` (no such block, not a tool, or no such param) or `PC_ERR_NULL`.
///
/// # Safety
/// As for `pc_blocks_get`.
#[no_mangle]
pub unsafe extern "C" fn pc_blocks_param(blocks: *const pc_blocks, i: usize, j: usize, out: *mut pc_param) -> i32 {
    // SAFETY: the caller's contract above.
    let Some(view) = (unsafe { raw::get_blocks(blocks) }) else { return PC_ERR_NULL };
    if out.is_null() {
        return PC_ERR_NULL;
    }
    let Some(Block::ToolUse(t)) = view.get(i) else { return PC_ERR_RANGE };
    let Some(p) = t.params().iter().nth(j) else { return PC_ERR_RANGE };
    let span = |s: parser_core::Span| pc_span { start: s.start, end: s.end };
    let param = pc_param { name: span_of(view.input(), p.name), value: span(p.value_span), raw: span(p.raw_span) };
    // SAFETY: `out` is non-null and writable (contract above).
    unsafe { raw::put(out, param) };
    PC_OK
}

/// Set up a stream in `*stream` (Cline's grammar): its text goes into `text` (`text_cap`
/// bytes), its blocks and params into the slots. Returns `PC_OK` or `PC_ERR_NULL`.
///
/// # Safety
/// `stream` must point to writable memory for a `pc_stream`; `text`, `blocks` and `params` to
/// `text_cap`, `block_cap` and `param_cap` writable bytes or slots (NULL when 0). All of them
/// must stay valid, and be used through this stream only, until the stream is no longer used
/// (a `pc_stream` owns nothing and needs no freeing).
#[no_mangle]
pub unsafe extern "C" fn pc_stream_init(
    stream: *mut pc_stream,
    text: *mut u8,
    text_cap: usize,
    blocks: *mut pc_block_slot,
    block_cap: usize,
    params: *mut pc_param_slot,
    param_cap: usize,
) -> i32 {
    // SAFETY: the caller's contract above, passed on: the buffers outlive the stream.
    let args = unsafe {
        (raw::bytes_mut(text, text_cap), raw::block_slots(blocks, block_cap), raw::param_slots(params, param_cap))
    };
    let (Some(text), Some(blocks), Some(params)) = args else { return PC_ERR_NULL };
    if stream.is_null() {
        return PC_ERR_NULL;
    }
    let parser = Stream::new(Grammar::cline(), text, blocks, params);
    // SAFETY: `stream` is non-null and writable (contract above).
    unsafe { raw::put_stream(stream, parser) };
    PC_OK
}

/// Append `len` bytes (UTF-8, which may be cut anywhere) to the stream. Returns `PC_OK`, or an
/// error code with details in `*error`; `*progress` (either may be NULL) says what the push
/// changed and completed, also on an error. Errors other than `PC_ERR_TEXT_FULL` are sticky:
/// later pushes return them again until `pc_stream_reset`.
///
/// # Safety
/// `stream` must have been set up by `pc_stream_init`; `chunk` must point to `len` readable
/// bytes (NULL when 0); `progress` and `error` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn pc_stream_push(
    stream: *mut pc_stream,
    chunk: *const u8,
    len: usize,
    progress: *mut pc_progress,
    error: *mut pc_error,
) -> i32 {
    // SAFETY: the caller's contract above.
    let (Some(s), Some(chunk)) = (unsafe { (raw::get_stream(stream), raw::bytes(chunk, len)) }) else {
        return PC_ERR_NULL;
    };
    let (p, code) = match s.push_bytes(chunk) {
        Ok(p) => (p, PC_OK),
        Err(e) => {
            let mut err = pc_error::default();
            let code = stream_code(e.error, &mut err);
            // SAFETY: `error` is NULL or writable (contract above).
            unsafe { raw::put(error, err) };
            (e.progress, code)
        }
    };
    let p = pc_progress {
        changed_start: p.changed.start,
        changed_end: p.changed.end,
        completed_start: p.completed.start,
        completed_end: p.completed.end,
    };
    // SAFETY: `progress` is NULL or writable (contract above).
    unsafe { raw::put(progress, p) };
    code
}

/// End of stream. Returns `PC_OK`, or the stream's error (`PC_ERR_INCOMPLETE` when it ended
/// inside a UTF-8 character), with details in `*error` (which may be NULL).
///
/// # Safety
/// As for `pc_stream_push`.
#[no_mangle]
pub unsafe extern "C" fn pc_stream_finish(stream: *mut pc_stream, error: *mut pc_error) -> i32 {
    // SAFETY: the caller's contract above.
    let Some(s) = (unsafe { raw::get_stream(stream) }) else { return PC_ERR_NULL };
    match s.finish() {
        Ok(_) => PC_OK,
        Err(e) => {
            let mut err = pc_error::default();
            let code = stream_code(e, &mut err);
            // SAFETY: `error` is NULL or writable (contract above).
            unsafe { raw::put(error, err) };
            code
        }
    }
}

/// Start a new reply in the same buffers (and forget any error).
///
/// # Safety
/// As for `pc_stream_push`.
#[no_mangle]
pub unsafe extern "C" fn pc_stream_reset(stream: *mut pc_stream) -> i32 {
    // SAFETY: the caller's contract above.
    let Some(s) = (unsafe { raw::get_stream(stream) }) else { return PC_ERR_NULL };
    s.reset();
    PC_OK
}

/// The stream's text so far (its bytes are in the caller's text buffer, from its start): returns
/// its address and writes its length to `*len` (NULL for a NULL stream). The spans of the
/// stream's blocks are offsets into it. Valid until the next push or reset.
///
/// # Safety
/// As for `pc_stream_push`; `len` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn pc_stream_text(stream: *const pc_stream, len: *mut usize) -> *const u8 {
    // SAFETY: the caller's contract above.
    let Some(s) = (unsafe { raw::get_stream(stream as *mut pc_stream) }) else { return core::ptr::null() };
    let text = s.text();
    // SAFETY: `len` is NULL or writable (contract above).
    unsafe { raw::put(len, text.len()) };
    text.as_ptr()
}

/// A view of the stream's blocks now, into `*out`; spans are into the stream's text buffer. The
/// view is valid until the next push or reset.
///
/// # Safety
/// As for `pc_stream_push`; `out` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn pc_stream_blocks(stream: *const pc_stream, out: *mut pc_blocks) -> i32 {
    // SAFETY: the caller's contract above.
    let Some(s) = (unsafe { raw::get_stream(stream as *mut pc_stream) }) else { return PC_ERR_NULL };
    if out.is_null() {
        return PC_ERR_NULL;
    }
    let view: Blocks<'_> = s.blocks();
    // SAFETY: `out` is non-null and writable; the view borrows only the caller's buffers, which
    // outlive the stream (contract of `pc_stream_init`), not the `pc_stream` itself.
    unsafe { raw::put_blocks(out, view) };
    PC_OK
}

#[cfg(test)]
mod tests {
    //! The ABI through its raw pointers, in uninitialised memory, small enough for Miri
    //! (`cargo +nightly miri test -p parser-core-capi --lib`), which checks `raw`'s `unsafe`.
    use super::*;
    use core::mem::MaybeUninit;

    fn text(base: &[u8], s: pc_span) -> &str {
        core::str::from_utf8(&base[s.start..s.end]).unwrap()
    }

    #[test]
    fn whole_parse_and_stream_in_uninitialised_caller_memory() {
        let reply =
            "Hi é<write_to_file><path>a</path><content>\n x</content>y</content></write_to_file> tail".as_bytes();
        let mut blocks = [const { MaybeUninit::<pc_block_slot>::uninit() }; 4];
        let mut params = [const { MaybeUninit::<pc_param_slot>::uninit() }; 4];
        let mut view = MaybeUninit::<pc_blocks>::uninit();
        let mut err = MaybeUninit::<pc_error>::uninit();
        // SAFETY: every pointer is to live memory of the right size; the view is read only while
        // `reply` and the slots are unchanged.
        unsafe {
            let code = pc_parse(
                reply.as_ptr(),
                reply.len(),
                blocks.as_mut_ptr().cast(),
                4,
                params.as_mut_ptr().cast(),
                4,
                view.as_mut_ptr(),
                err.as_mut_ptr(),
            );
            assert_eq!(code, PC_OK);
            assert_eq!(pc_blocks_len(view.as_ptr()), 3);
            let mut b = pc_block::default();
            assert_eq!(pc_blocks_get(view.as_ptr(), 1, &mut b), PC_OK);
            assert_eq!((b.kind, b.partial, b.param_count, text(reply, b.span)), (PC_TOOL_USE, 0, 2, "write_to_file"));
            let mut p = pc_param::default();
            assert_eq!(pc_blocks_param(view.as_ptr(), 1, 1, &mut p), PC_OK);
            assert_eq!(
                (text(reply, p.name), text(reply, p.value), text(reply, p.raw)),
                ("content", "x</content>y", "\n x</content>y")
            );
            assert_eq!(pc_blocks_get(view.as_ptr(), 3, &mut b), PC_ERR_RANGE);
            // One block slot: the tool's tag is refused at its offset, the text before it kept.
            let code = pc_parse(
                reply.as_ptr(),
                reply.len(),
                blocks.as_mut_ptr().cast(),
                1,
                params.as_mut_ptr().cast(),
                4,
                view.as_mut_ptr(),
                err.as_mut_ptr(),
            );
            assert_eq!((code, err.assume_init().offset, pc_blocks_len(view.as_ptr())), (PC_ERR_BLOCKS_FULL, 5, 1));

            let mut stream = MaybeUninit::<pc_stream>::uninit();
            let mut buf = [0u8; 128];
            let mut sb = [const { MaybeUninit::<pc_block_slot>::uninit() }; 4];
            let mut sp = [const { MaybeUninit::<pc_param_slot>::uninit() }; 4];
            let s = stream.as_mut_ptr();
            assert_eq!(
                pc_stream_init(s, buf.as_mut_ptr(), 128, sb.as_mut_ptr().cast(), 4, sp.as_mut_ptr().cast(), 4),
                PC_OK
            );
            let mut progress = pc_progress::default();
            for chunk in reply.chunks(3) {
                assert_eq!(pc_stream_push(s, chunk.as_ptr(), chunk.len(), &mut progress, core::ptr::null_mut()), PC_OK);
            }
            assert_eq!(pc_stream_finish(s, core::ptr::null_mut()), PC_OK);
            assert_eq!(pc_stream_blocks(s, view.as_mut_ptr()), PC_OK);
            assert_eq!(pc_blocks_len(view.as_ptr()), 3);
            assert_eq!(pc_blocks_get(view.as_ptr(), 2, &mut b), PC_OK);
            // Read the text through the stream (C may read its buffer directly; in Rust that
            // would be a second borrow of memory the stream holds uniquely).
            let mut len = 0;
            let at = pc_stream_text(s, &mut len);
            let streamed = core::slice::from_raw_parts(at, len);
            assert_eq!(streamed, reply);
            assert_eq!((b.partial, text(streamed, b.span)), (1, "tail"));
            assert_eq!(pc_stream_reset(s), PC_OK);
            assert_eq!(pc_stream_push(s, [0xFFu8].as_ptr(), 1, &mut progress, err.as_mut_ptr()), PC_ERR_UTF8);
            assert_eq!(pc_stream_push(s, b"a".as_ptr(), 1, &mut progress, core::ptr::null_mut()), PC_ERR_UTF8);
            assert_eq!(
                pc_stream_push(core::ptr::null_mut(), b"a".as_ptr(), 1, &mut progress, core::ptr::null_mut()),
                PC_ERR_NULL
            );
        }
    }
}
