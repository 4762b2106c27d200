//! Every raw-pointer operation of the C ABI, each with the condition it relies on. The public
//! functions' `# Safety` sections state what the C caller guarantees.

use core::mem::MaybeUninit;

use parser_core::fixed::{BlockSlot, ParamSlot};
use parser_core::Blocks;

use crate::{pc_block_slot, pc_blocks, pc_param_slot, pc_stream, Stream};

/// `len` bytes at `p` (NULL allowed when `len` is 0).
///
/// # Safety
/// `p` points to `len` readable bytes that stay unchanged for `'a`, or `len` is 0.
pub(crate) unsafe fn bytes<'a>(p: *const u8, len: usize) -> Option<&'a [u8]> {
    if len == 0 {
        return Some(&[]);
    }
    if p.is_null() {
        return None;
    }
    // SAFETY: non-null, and `len` readable bytes valid for `'a` (the function's contract).
    Some(unsafe { core::slice::from_raw_parts(p, len) })
}

/// `len` writable bytes at `p`, used only through the result for `'a`.
///
/// # Safety
/// `p` points to `len` writable bytes, not otherwise accessed during `'a`, or `len` is 0.
pub(crate) unsafe fn bytes_mut<'a>(p: *mut u8, len: usize) -> Option<&'a mut [u8]> {
    if len == 0 {
        return Some(&mut []);
    }
    if p.is_null() {
        return None;
    }
    // SAFETY: as in `bytes`, and exclusive for `'a` (the function's contract). Bytes have no
    // invalid values; C memory handed to us is treated as initialised bytes, as C sees it.
    Some(unsafe { core::slice::from_raw_parts_mut(p, len) })
}

/// `n` slots of `S` bytes at `p` as `n` possibly uninitialised `T`s (`T` no larger and no more
/// aligned than `S`, checked by the crate's const assertions).
///
/// # Safety
/// `p` points to `n` writable `S`, not otherwise accessed during `'a`, or `n` is 0.
unsafe fn slots<'a, S, T>(p: *mut S, n: usize) -> Option<&'a mut [MaybeUninit<T>]> {
    if n == 0 {
        return Some(&mut []);
    }
    if p.is_null() || !(p as usize).is_multiple_of(core::mem::align_of::<T>()) {
        return None;
    }
    // SAFETY: `n` writable `S` start at `p`, aligned for `T`; `size_of::<T>() <= size_of::<S>()`,
    // so `n` `T`s fit in them; `MaybeUninit` makes any content valid; exclusive for `'a`.
    Some(unsafe { core::slice::from_raw_parts_mut(p.cast::<MaybeUninit<T>>(), n) })
}

/// Block slots (see `slots`).
///
/// # Safety
/// As for `slots`.
pub(crate) unsafe fn block_slots<'a>(p: *mut pc_block_slot, n: usize) -> Option<&'a mut [BlockSlot]> {
    // SAFETY: the function's contract.
    unsafe { slots::<pc_block_slot, parser_core::RawBlock>(p, n) }
}

/// Param slots (see `slots`).
///
/// # Safety
/// As for `slots`.
pub(crate) unsafe fn param_slots<'a>(p: *mut pc_param_slot, n: usize) -> Option<&'a mut [ParamSlot]> {
    // SAFETY: the function's contract.
    unsafe { slots::<pc_param_slot, parser_core::RawParam>(p, n) }
}

/// Write `value` to `p` unless `p` is NULL.
///
/// # Safety
/// `p` is NULL or points to writable memory for a `T`, aligned.
pub(crate) unsafe fn put<T>(p: *mut T, value: T) {
    if !p.is_null() {
        // SAFETY: non-null, writable and aligned (contract). `write` drops nothing.
        unsafe { p.write(value) };
    }
}

/// Store a view in a `pc_blocks`, forgetting its lifetime (the C caller keeps the memory alive).
///
/// # Safety
/// `p` is non-null and writable (alignment of `pc_blocks` is 8, at least `Blocks`'s).
pub(crate) unsafe fn put_blocks(p: *mut pc_blocks, view: Blocks<'_>) {
    // SAFETY: `Blocks` fits in `pc_blocks` and needs no more alignment (const assertions);
    // `p` is writable (contract). `Blocks` is `Copy`, so nothing is leaked or dropped.
    unsafe { p.cast::<Blocks<'_>>().write(view) }
}

/// The view stored by `put_blocks`, or None for NULL.
///
/// # Safety
/// `p` is NULL or holds a view written by `put_blocks` whose memory is still valid and unchanged.
pub(crate) unsafe fn get_blocks<'a>(p: *const pc_blocks) -> Option<Blocks<'a>> {
    if p.is_null() {
        return None;
    }
    // SAFETY: `put_blocks` wrote a `Blocks` there (contract); it is `Copy`.
    Some(unsafe { p.cast::<Blocks<'a>>().read() })
}

/// Store a stream in a `pc_stream`.
///
/// # Safety
/// `p` is non-null and writable.
pub(crate) unsafe fn put_stream(p: *mut pc_stream, stream: Stream) {
    // SAFETY: `Stream` fits in `pc_stream` with no more alignment (const assertions); `p` is
    // writable (contract). Whatever was there is overwritten, not dropped: a stream owns nothing.
    unsafe { p.cast::<Stream>().write(stream) }
}

/// The stream stored by `put_stream`, or None for NULL.
///
/// # Safety
/// `p` is NULL or was set up by `put_stream`, and is not otherwise accessed during `'a`.
pub(crate) unsafe fn get_stream<'a>(p: *mut pc_stream) -> Option<&'a mut Stream> {
    if p.is_null() {
        return None;
    }
    // SAFETY: `put_stream` wrote a `Stream` there (contract), aligned; exclusive for `'a`.
    Some(unsafe { &mut *p.cast::<Stream>() })
}
