//! Finding the next `<`, and text buffers that skip re-validation: all the `unsafe` in the crate.
//!
//! The parser only ever stops at a `<` (every tag starts with one), so its speed is the speed of
//! this search. On x86_64 SSE2 is part of the baseline, so the vector path needs no run-time
//! detection and works in `no_std`; elsewhere a portable SWAR path tests eight bytes per step.
//! Both are checked against a naive loop at every alignment (see the tests below) and under Miri.
#![allow(unsafe_code)] // the SIMD search for `<` and the buffers that skip re-validation (measured speed)

/// Offset of the first `needle` in `hay[from..]` (an offset into `hay`), or `None`.
#[inline]
pub(crate) fn find_byte(hay: &[u8], from: usize, needle: u8) -> Option<usize> {
    let found = find_impl(hay, from, needle);
    #[cfg(test)]
    counter::add(found.map_or(hay.len(), |i| i + 1).saturating_sub(from));
    found
}

/// Offset of the first `a` or `b` in `hay[from..end]`, or `end` if there is none
/// (`end <= hay.len()`). Reads a tag body: from after `<` to the next `>` (or `<`).
#[inline]
pub(crate) fn find_either(hay: &[u8], from: usize, end: usize, a: u8, b: u8) -> usize {
    let found = either_impl(hay, from, end, a, b);
    #[cfg(test)]
    counter::add((found + 1).min(end).saturating_sub(from));
    found
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline]
fn find_impl(hay: &[u8], from: usize, needle: u8) -> Option<usize> {
    // A short search (a stream's push) stays on the inlined SSE2 path. A long one (a whole
    // parse) looks at its first 16 bytes inline too, since the next `<` is often that close (as
    // after a tag), and calls the AVX2 path only beyond them.
    if hay.len() >= from && hay.len() - from >= avx2::WORTH && avx2::available() {
        // SAFETY: SSE2 is enabled for the whole build (this cfg); `from + 16 <= hay.len()`
        // (WORTH >= 16), so the 16 bytes read are inside `hay`.
        let m = unsafe { sse2::eq_mask(hay.as_ptr().add(from), core::arch::x86_64::_mm_set1_epi8(needle as i8)) };
        if m != 0 {
            return Some(from + m.trailing_zeros() as usize);
        }
        // SAFETY: `available` answered true only after the CPU and the OS said they support
        // AVX2 (or the whole build enables it).
        unsafe { avx2::find(hay, from + 16, needle) }
    } else {
        // SAFETY: this cfg holds only when SSE2 is enabled for the whole build (it is part of
        // the x86_64 baseline), so the CPU running this code has it.
        unsafe { sse2::find(hay, from, needle) }
    }
}
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
use swar::find as find_impl;

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline]
fn either_impl(hay: &[u8], from: usize, end: usize, a: u8, b: u8) -> usize {
    // SAFETY: as in `find_impl`: SSE2 is enabled for the whole build.
    unsafe { sse2::find_either(hay, from, end, a, b) }
}
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
use scalar_either as either_impl;

/// The portable path for `find_either` (tag bodies are short: a plain loop is enough).
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
fn scalar_either(hay: &[u8], from: usize, end: usize, a: u8, b: u8) -> usize {
    let end = end.min(hay.len());
    let from = from.min(end);
    hay[from..end].iter().position(|&c| c == a || c == b).map_or(end, |i| from + i)
}

/// `bytes` as `&str` when it is all ASCII: for a 16-byte chunk, much cheaper than full UTF-8
/// validation, which the streaming parser would otherwise pay on every push.
#[inline]
pub(crate) fn ascii_str(bytes: &[u8]) -> Option<&str> {
    if is_ascii(bytes) {
        // SAFETY: every ASCII byte sequence is valid UTF-8.
        Some(unsafe { core::str::from_utf8_unchecked(bytes) })
    } else {
        None
    }
}

const LOW: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// A short chunk (8 to 16 bytes, a stream's usual push) as two overlapping words.
#[inline(always)]
fn two_words(bytes: &[u8]) -> Option<(u64, u64)> {
    let n = bytes.len();
    if !(8..=16).contains(&n) {
        return None;
    }
    let word = |at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&bytes[at..at + 8]);
        u64::from_ne_bytes(w)
    };
    Some((word(0), word(n - 8)))
}

/// Does `w` hold the byte `b`? (Exact: the lowest flagged byte is a real match, and any match
/// flags some byte.)
#[inline(always)]
fn word_has(w: u64, b: u8) -> bool {
    let x = w ^ (LOW * b as u64);
    x.wrapping_sub(LOW) & !x & HIGH != 0
}

/// `bytes.is_ascii()`, a short chunk in two words.
#[inline]
fn is_ascii(bytes: &[u8]) -> bool {
    match two_words(bytes) {
        Some((a, b)) => (a | b) & HIGH == 0,
        None => bytes.is_ascii(),
    }
}

/// Do the ASCII words `a` and `b` hold no `<`? Their bytes are below 0x80, so XOR with `<` leaves
/// a byte below 0x80 that is zero only for a `<`, and adding 0x7F sets the high bit of every
/// other byte without a carry into the next: both words in a handful of instructions.
#[inline(always)]
fn ascii_words_no_lt(a: u64, b: u64) -> bool {
    const LT: u64 = LOW * b'<' as u64;
    const K: u64 = LOW * 0x7F;
    (a ^ LT).wrapping_add(K) & (b ^ LT).wrapping_add(K) & HIGH == HIGH
}

/// [`ascii_str`] and whether the chunk certainly holds no `<`, reading it once: decided exactly
/// for 8 to 64 bytes (a stream's usual push, which then needs no search), `false` otherwise.
#[inline]
pub(crate) fn ascii_str_no_lt(bytes: &[u8]) -> Option<(&str, bool)> {
    let no_lt = match two_words(bytes) {
        Some((a, b)) if (a | b) & HIGH == 0 => ascii_words_no_lt(a, b),
        Some(_) => return None,
        None => match medium_ascii_no_lt(bytes) {
            Some((true, no_lt)) => no_lt,
            Some((false, _)) => return None,
            None if bytes.is_ascii() => false,
            None => return None,
        },
    };
    // SAFETY: every ASCII byte sequence is valid UTF-8 (checked just above).
    Some((unsafe { core::str::from_utf8_unchecked(bytes) }, no_lt))
}

/// For a chunk of 17 to 64 bytes: (is it ASCII, does it hold no `<`), in one pass of four
/// overlapping 16-byte blocks, so that such a push without a `<` needs no search either.
#[inline(always)]
fn medium_ascii_no_lt(bytes: &[u8]) -> Option<(bool, bool)> {
    let n = bytes.len();
    if !(17..=64).contains(&n) {
        return None;
    }
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        use core::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        };
        let p = bytes.as_ptr();
        // SAFETY: SSE2 is enabled for the whole build (this cfg). Every block starts at most
        // at `n - 16` (16 < n), so each 16-byte load is inside `bytes`; together they cover it.
        unsafe {
            let load = |at: usize| _mm_loadu_si128(p.add(at).cast::<__m128i>());
            let (a, b, c, d) = (load(0), load(16.min(n - 16)), load(32.min(n - 16)), load(n - 16));
            let lt = _mm_set1_epi8(b'<' as i8);
            let any_lt = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(a, lt), _mm_cmpeq_epi8(b, lt)),
                _mm_or_si128(_mm_cmpeq_epi8(c, lt), _mm_cmpeq_epi8(d, lt)),
            );
            let high = _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d));
            Some((_mm_movemask_epi8(high) == 0, _mm_movemask_epi8(any_lt) == 0))
        }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    None
}

/// True when `bytes` certainly holds no `<` (decided only for short chunks, in two words; a
/// longer one answers false and is searched as usual). A stream's push that brings no `<` needs
/// no search at all.
#[inline]
pub(crate) fn surely_no_lt(bytes: &[u8]) -> bool {
    match two_words(bytes) {
        Some((a, b)) => !word_has(a, b'<') && !word_has(b, b'<'),
        None => false,
    }
}

/// `buf.push_str(s)`; a short `s` (8 to 16 bytes, a stream's usual push) is copied as two
/// overlapping words instead of through a call to `memcpy`, which costs more than the copy.
#[cfg(feature = "alloc")]
#[inline(always)]
pub(crate) fn push_short(buf: &mut alloc::string::String, s: &str) {
    let n = s.len();
    if !(8..=16).contains(&n) {
        buf.push_str(s);
        return;
    }
    buf.reserve(n);
    let len = buf.len();
    // SAFETY: the bytes written are a whole `&str`, appended after the valid UTF-8 already
    // there, so the string stays valid UTF-8. `reserve(n)` made room for `n` more bytes:
    // `len..len + n` is inside the allocation; both 8-byte copies (at 0 and at n - 8, 8 <= n)
    // read inside `s` and write inside that room, and `s` cannot overlap the string's
    // allocation, which `buf` borrows mutably. `set_len` then covers exactly the bytes written.
    unsafe {
        let v = buf.as_mut_vec();
        let (src, dst) = (s.as_ptr(), v.as_mut_ptr().add(len));
        core::ptr::copy_nonoverlapping(src, dst, 8);
        core::ptr::copy_nonoverlapping(src.add(n - 8), dst.add(n - 8), 8);
        v.set_len(len + n);
    }
}

/// A caller's byte buffer that holds text. It is filled only from `&str`, so its used part is
/// always valid UTF-8 and can be handed out as `&str` without re-validating (which would make
/// every `blocks()` call on a stream cost O(text)).
#[cfg(any(feature = "heapless", test))]
#[derive(Debug)]
pub(crate) struct StrBuf<'buf> {
    buf: &'buf mut [u8],
    len: usize,
}

#[cfg(any(feature = "heapless", test))]
impl<'buf> StrBuf<'buf> {
    pub(crate) fn new(buf: &'buf mut [u8]) -> Self {
        StrBuf { buf, len: 0 }
    }

    pub(crate) fn as_str(&self) -> &str {
        // SAFETY: `buf[..len]` is a concatenation of whole `&str`s (`push_str` is the only
        // writer), hence valid UTF-8.
        unsafe { core::str::from_utf8_unchecked(&self.buf[..self.len]) }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Forget the text (the buffer is kept).
    #[cfg_attr(not(feature = "heapless"), allow(dead_code))]
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    /// Append `s` if it fits; returns whether it did.
    pub(crate) fn push_str(&mut self, s: &str) -> bool {
        if self.buf.len() - self.len < s.len() {
            return false;
        }
        self.buf[self.len..self.len + s.len()].copy_from_slice(s.as_bytes());
        self.len += s.len();
        true
    }
}

/// A fixed-capacity list in a caller's possibly uninitialised memory (for callers that choose
/// capacities at run time, such as C): the first `len` slots are initialised, the rest may not be.
#[cfg(feature = "heapless")]
pub struct Slab<'a, T> {
    buf: &'a mut [core::mem::MaybeUninit<T>],
    len: usize,
}

#[cfg(feature = "heapless")]
impl<T> core::fmt::Debug for Slab<'_, T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Slab").field("len", &self.len).field("capacity", &self.buf.len()).finish()
    }
}

#[cfg(feature = "heapless")]
impl<'a, T: Copy> Slab<'a, T> {
    pub(crate) fn new(buf: &'a mut [core::mem::MaybeUninit<T>]) -> Self {
        Slab { buf, len: 0 }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Append if there is room; returns whether there was.
    pub(crate) fn push(&mut self, item: T) -> bool {
        match self.buf.get_mut(self.len) {
            Some(slot) => {
                slot.write(item);
                self.len += 1;
                true
            }
            None => false,
        }
    }

    pub(crate) fn clear(&mut self) {
        // `T: Copy`: nothing to drop.
        self.len = 0;
    }

    pub(crate) fn as_slice(&self) -> &[T] {
        // SAFETY: `push` is the only writer and `len` counts the slots it wrote: `buf[..len]`
        // holds initialised `T`s, and `MaybeUninit<T>` has the layout of `T`.
        unsafe { core::slice::from_raw_parts(self.buf.as_ptr().cast::<T>(), self.len) }
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as in `as_slice`; the `&mut self` borrow makes the slice unique.
        unsafe { core::slice::from_raw_parts_mut(self.buf.as_mut_ptr().cast::<T>(), self.len) }
    }

    /// The initialised items, borrowed for as long as the memory itself.
    pub(crate) fn into_slice(self) -> &'a [T] {
        // SAFETY: as in `as_slice`; `self` (the only handle on the memory) is consumed, so the
        // shared borrow for `'a` cannot alias a mutable one.
        unsafe { core::slice::from_raw_parts(self.buf.as_ptr().cast::<T>(), self.len) }
    }
}

/// The naive oracle for the search paths.
#[cfg(test)]
fn find_naive(hay: &[u8], from: usize, needle: u8) -> Option<usize> {
    hay.get(from..)?.iter().position(|&b| b == needle).map(|i| i + from)
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod sse2 {
    use core::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };

    /// Bit i set where byte i of the 16 at `p` equals the splatted byte `n`.
    ///
    /// # Safety
    /// `p..p + 16` must be readable (any alignment).
    #[inline]
    #[target_feature(enable = "sse2")]
    pub(super) unsafe fn eq_mask(p: *const u8, n: __m128i) -> u32 {
        // SAFETY: the caller guarantees 16 readable bytes; `loadu` has no alignment requirement.
        let v = unsafe { _mm_loadu_si128(p.cast::<__m128i>()) };
        _mm_movemask_epi8(_mm_cmpeq_epi8(v, n)) as u32
    }

    #[target_feature(enable = "sse2")]
    pub(super) fn find(hay: &[u8], from: usize, needle: u8) -> Option<usize> {
        let len = hay.len();
        if from >= len {
            return None;
        }
        if len < 16 {
            return super::swar::find(hay, from, needle);
        }
        let p = hay.as_ptr();
        let n = _mm_set1_epi8(needle as i8);
        let mut i = from;
        // 64 bytes per step while nothing matches: one movemask per step on the common path.
        while i + 64 <= len {
            // SAFETY: i + 64 <= len, so the four 16-byte loads at p+i .. p+i+64 are inside `hay`.
            let (a, b, c, d) = unsafe {
                let load = |k: usize| _mm_cmpeq_epi8(_mm_loadu_si128(p.add(i + k).cast::<__m128i>()), n);
                (load(0), load(16), load(32), load(48))
            };
            if _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d))) != 0 {
                for (k, v) in [a, b, c, d].into_iter().enumerate() {
                    let m = _mm_movemask_epi8(v);
                    if m != 0 {
                        return Some(i + 16 * k + m.trailing_zeros() as usize);
                    }
                }
            }
            i += 64;
        }
        while i + 16 <= len {
            // SAFETY: i + 16 <= len: the load is inside `hay`.
            let m = unsafe { eq_mask(p.add(i), n) };
            if m != 0 {
                return Some(i + m.trailing_zeros() as usize);
            }
            i += 16;
        }
        if i < len {
            // The last 16 bytes, overlapping what was checked; bits before `i` are dropped.
            let base = len - 16;
            // SAFETY: len >= 16 (checked above), so base..len is inside `hay`.
            let m = unsafe { eq_mask(p.add(base), n) } >> (i - base);
            if m != 0 {
                return Some(i + m.trailing_zeros() as usize);
            }
        }
        None
    }

    #[target_feature(enable = "sse2")]
    pub(super) fn find_either(hay: &[u8], from: usize, end: usize, a: u8, b: u8) -> usize {
        let end = end.min(hay.len());
        let (na, nb) = (_mm_set1_epi8(a as i8), _mm_set1_epi8(b as i8));
        let mut i = from;
        while i < end {
            if i + 16 > hay.len() {
                return super::scalar_either(hay, i, end, a, b);
            }
            // SAFETY: i + 16 <= hay.len(): the load is inside `hay`.
            let m = unsafe { eq_mask(hay.as_ptr().add(i), na) | eq_mask(hay.as_ptr().add(i), nb) };
            if m != 0 {
                return (i + m.trailing_zeros() as usize).min(end);
            }
            i += 16;
        }
        end
    }
}

/// Where the CPU has AVX2 (nearly every x86_64 CPU since 2013), 32 bytes per compare: the
/// long stretches of text between tags cost half the instructions of the SSE2 path. Detected
/// once at run time with `cpuid` (and `xgetbv`: the OS must save the registers), so a build for
/// the x86_64 baseline still uses it; a build with AVX2 enabled skips the check.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod avx2 {
    use core::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256, _mm256_set1_epi8,
    };

    /// Below this many bytes to search, the call costs more than the wider compares save.
    pub(super) const WORTH: usize = 128;

    /// Can the AVX2 path run here? (Cached: one load and compare after the first call.)
    #[inline(always)]
    pub(super) fn available() -> bool {
        #[cfg(target_feature = "avx2")]
        return true;
        #[cfg(not(target_feature = "avx2"))]
        {
            use core::sync::atomic::{AtomicU8, Ordering};
            /// 0: not asked yet, 1: no, 2: yes.
            static STATE: AtomicU8 = AtomicU8::new(0);
            match STATE.load(Ordering::Relaxed) {
                0 => {
                    let yes = detect();
                    STATE.store(1 + u8::from(yes), Ordering::Relaxed);
                    yes
                }
                s => s == 2,
            }
        }
    }

    /// AVX2 in the CPU, and its registers saved by the OS. Miri cannot run `cpuid`: there the
    /// path is used only where the build enables AVX2 (and the tests call it directly).
    #[cfg(not(target_feature = "avx2"))]
    #[cold]
    fn detect() -> bool {
        #[cfg(miri)]
        return false;
        #[cfg(not(miri))]
        {
            use core::arch::x86_64::{__cpuid, __cpuid_count, _xgetbv};
            #[allow(unused_unsafe)] // `__cpuid` became a safe function in later Rust versions
            // SAFETY: `cpuid` exists on every x86_64 CPU; leaf 7 is asked only if leaf 0 lists it.
            let (leaf1, max_leaf) = unsafe { (__cpuid(1), __cpuid(0).eax) };
            let (osxsave, avx) = (leaf1.ecx & (1 << 27) != 0, leaf1.ecx & (1 << 28) != 0);
            if max_leaf < 7 || !osxsave || !avx {
                return false;
            }
            #[allow(unused_unsafe)]
            // SAFETY: as above; leaf 7 exists (max_leaf >= 7).
            let leaf7 = unsafe { __cpuid_count(7, 0) };
            #[target_feature(enable = "xsave")]
            fn xcr0() -> u64 {
                // SAFETY: `xgetbv` is available: the caller checked OSXSAVE.
                unsafe { _xgetbv(0) }
            }
            // SAFETY: OSXSAVE is set, so `xgetbv` (the `xsave` feature) is usable.
            let xcr0 = unsafe { xcr0() };
            // The OS saves the SSE (bit 1) and AVX (bit 2) register state.
            leaf7.ebx & (1 << 5) != 0 && xcr0 & 0b110 == 0b110
        }
    }

    /// Bit i set where byte i of the 32 at `p` equals the splatted byte in `n`.
    ///
    /// # Safety
    /// `p..p + 32` must be readable (any alignment); AVX2 must be available.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn eq_mask(p: *const u8, n: __m256i) -> u32 {
        // SAFETY: the caller guarantees 32 readable bytes; `loadu` has no alignment requirement.
        let v = unsafe { _mm256_loadu_si256(p.cast::<__m256i>()) };
        _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, n)) as u32
    }

    /// # Safety
    /// AVX2 must be available.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn find(hay: &[u8], from: usize, needle: u8) -> Option<usize> {
        let len = hay.len();
        if from >= len {
            return None;
        }
        if len - from < 32 {
            // (SSE2 is part of the build: the cfg of this module.)
            return super::sse2::find(hay, from, needle);
        }
        let p = hay.as_ptr();
        let n = _mm256_set1_epi8(needle as i8);
        // SAFETY: from + 32 <= len: the load is inside `hay`.
        let m = unsafe { eq_mask(p.add(from), n) };
        if m != 0 {
            return Some(from + m.trailing_zeros() as usize);
        }
        let mut i = from + 32;
        // 128 bytes per step while nothing matches: one movemask per step on the common path.
        while i + 128 <= len {
            // SAFETY: i + 128 <= len, so the four 32-byte loads at p+i .. p+i+128 are inside `hay`.
            let (a, b, c, d) = unsafe {
                let load = |k: usize| _mm256_cmpeq_epi8(_mm256_loadu_si256(p.add(i + k).cast::<__m256i>()), n);
                (load(0), load(32), load(64), load(96))
            };
            if _mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, d))) != 0 {
                let low = _mm256_movemask_epi8(a) as u32 as u64 | (_mm256_movemask_epi8(b) as u32 as u64) << 32;
                if low != 0 {
                    return Some(i + low.trailing_zeros() as usize);
                }
                let high = _mm256_movemask_epi8(c) as u32 as u64 | (_mm256_movemask_epi8(d) as u32 as u64) << 32;
                return Some(i + 64 + high.trailing_zeros() as usize);
            }
            i += 128;
        }
        while i + 32 <= len {
            // SAFETY: i + 32 <= len: the load is inside `hay`.
            let m = unsafe { eq_mask(p.add(i), n) };
            if m != 0 {
                return Some(i + m.trailing_zeros() as usize);
            }
            i += 32;
        }
        if i < len {
            // The last 32 bytes, overlapping what was checked; bits before `i` are dropped.
            let base = len - 32;
            // SAFETY: len - from >= 32 (checked above), so base..len is inside `hay`.
            let m = unsafe { eq_mask(p.add(base), n) } >> (i - base);
            if m != 0 {
                return Some(i + m.trailing_zeros() as usize);
            }
        }
        None
    }
}

#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
mod swar {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;

    pub(super) fn find(hay: &[u8], from: usize, needle: u8) -> Option<usize> {
        let rep = LO * needle as u64;
        let mut i = from;
        while i + 8 <= hay.len() {
            let word = u64::from_le_bytes(hay[i..i + 8].try_into().expect("8-byte slice"));
            let x = word ^ rep;
            // The lowest flagged byte is exactly the first zero byte of `x` (borrows only run upward).
            let zero = x.wrapping_sub(LO) & !x & HI;
            if zero != 0 {
                return Some(i + (zero.trailing_zeros() / 8) as usize);
            }
            i += 8;
        }
        hay.get(i..)?.iter().position(|&b| b == needle).map(|k| k + i)
    }
}

/// Test-only instrumentation: how many bytes the parser examined, per thread.
#[cfg(test)]
pub(crate) mod counter {
    extern crate std;
    use core::cell::Cell;
    std::thread_local!(static EXAMINED: Cell<usize> = const { Cell::new(0) });
    std::thread_local!(static PROBES: Cell<usize> = const { Cell::new(0) });

    /// Params compared while looking for a same-named one (`BlockStore::set_param`).
    pub(crate) fn add_probes(n: usize) {
        PROBES.with(|c| c.set(c.get() + n));
    }
    /// Params compared on this thread since the last `take_probes`.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn take_probes() -> usize {
        PROBES.with(|c| c.replace(0))
    }

    pub(crate) fn add(n: usize) {
        EXAMINED.with(|c| c.set(c.get() + n));
    }
    /// Bytes examined on this thread since the last `take`.
    #[cfg_attr(not(feature = "alloc"), allow(dead_code))]
    pub(crate) fn take() -> usize {
        EXAMINED.with(|c| c.replace(0))
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    /// Every path, every alignment, every needle position (memchr's harness style).
    fn check_all_paths(buf: &[u8]) {
        // Under Miri (slow), 17 starts still cover every alignment mod 16.
        let (starts, froms, step) = if cfg!(miri) { (17, 40, 3) } else { (80, 70, 1) };
        for start in 0..buf.len().min(starts) {
            let hay = &buf[start..];
            for from in (0..=hay.len().min(froms)).step_by(step) {
                let want = find_naive(hay, from, b'<');
                assert_eq!(swar::find(hay, from, b'<'), want, "swar start={start} from={from}");
                #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
                // SAFETY: the cfg above guarantees SSE2.
                assert_eq!(unsafe { sse2::find(hay, from, b'<') }, want, "sse2 start={start} from={from}");
                #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
                if avx2::available() {
                    // SAFETY: AVX2 is available (detected, or enabled for the whole build).
                    assert_eq!(unsafe { avx2::find(hay, from, b'<') }, want, "avx2 start={start} from={from}");
                }
                assert_eq!(find_byte(hay, from, b'<'), want, "dispatch start={start} from={from}");
            }
        }
    }

    #[test]
    fn every_alignment_and_position_matches_naive() {
        let len = if cfg!(miri) { 170 } else { 300 };
        for pos in (0..len).step_by(if cfg!(miri) { 23 } else { 1 }) {
            let mut buf: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            buf[pos] = b'<';
            check_all_paths(&buf);
        }
    }

    #[test]
    fn no_needle_and_bytes_that_differ_by_one_bit() {
        // 0x3C ^ 0x80 and neighbours stress the SWAR borrow logic.
        let buf: Vec<u8> = (0..150).map(|i| [0x3D, 0xBC, 0x3B, 0x00, 0xFF, 0x1C][i % 6]).collect();
        check_all_paths(&buf);
        let mut two = buf.clone();
        two[70] = b'<';
        two[71] = b'<';
        check_all_paths(&two);
    }

    #[test]
    fn find_either_every_path_every_window() {
        let len = if cfg!(miri) { 40 } else { 90 };
        for (x, y) in [(5, 30), (20, 21), (0, 70), (70, 3)] {
            let mut buf: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            if x < len {
                buf[x] = b'>';
            }
            if y < len {
                buf[y] = b'<';
            }
            for start in 0..len.min(if cfg!(miri) { 3 } else { 20 }) {
                let hay = &buf[start..];
                for from in 0..hay.len() {
                    for end in from..=hay.len() {
                        let want =
                            hay[from..end].iter().position(|&c| c == b'>' || c == b'<').map_or(end, |i| from + i);
                        assert_eq!(scalar_either(hay, from, end, b'>', b'<'), want, "scalar {start} {from} {end}");
                        assert_eq!(find_either(hay, from, end, b'>', b'<'), want, "dispatch {start} {from} {end}");
                    }
                }
            }
        }
    }

    #[test]
    fn str_buf_holds_whole_strs_and_refuses_what_does_not_fit() {
        let mut raw = [0u8; 8];
        let mut b = StrBuf::new(&mut raw);
        assert!(b.push_str("é<"));
        assert!(b.push_str("😀"));
        assert!(!b.push_str("abc"));
        assert_eq!((b.as_str(), b.capacity()), ("é<😀", 8));
        assert_eq!(ascii_str(b"a<b"), Some("a<b"));
        assert_eq!(ascii_str("é".as_bytes()), None);
    }

    #[test]
    fn short_chunks_see_every_high_byte_and_every_lt_at_every_length_and_position() {
        for len in 0..=if cfg!(miri) { 66 } else { 80 } {
            let plain: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert_eq!(ascii_str_no_lt(&plain).map(|(s, _)| s.len()), Some(len));
            // "No `<`" is only ever claimed when true (and always for 8 to 16 bytes).
            assert_eq!(surely_no_lt(&plain), (8..=16).contains(&len), "len {len}");
            for at in 0..len {
                for (b, ascii) in
                    [(b'<', true), (0x80, false), (0xFF, false), (0xBC, false), (0x3D, true), (0x3B, true)]
                {
                    let mut chunk = plain.clone();
                    chunk[at] = b;
                    assert_eq!(ascii_str(&chunk).is_some(), ascii, "len {len} byte {b:#x} at {at}");
                    let both = ascii_str_no_lt(&chunk);
                    assert_eq!(both.is_some(), ascii, "len {len} byte {b:#x} at {at}");
                    let has_lt = b == b'<';
                    if surely_no_lt(&chunk) || both.is_some_and(|(_, no_lt)| no_lt) {
                        assert!(!has_lt, "len {len}: a `<` at {at} was missed");
                    }
                    if (8..=64).contains(&len) && ascii {
                        // Decided exactly for 8 to 64 bytes (two words, or 16-byte blocks).
                        assert_eq!(both.map(|(_, no_lt)| no_lt), Some(!has_lt), "len {len} byte {b:#x} at {at}");
                    }
                }
            }
        }
    }

    #[test]
    #[cfg(feature = "alloc")]
    fn push_short_appends_exactly_what_push_str_does() {
        use alloc::string::String;
        let text = "ab<cdé😀fgh\u{2028}ijklmnopqrstuvwxyz0123456789";
        let cuts: Vec<usize> = (0..=text.len()).filter(|&i| text.is_char_boundary(i)).collect();
        for (k, &from) in cuts.iter().enumerate() {
            for &to in &cuts[k..] {
                let piece = &text[from..to];
                // Full, and with room to spare, so that both the growing and the in-place copy run.
                for mut got in [String::new(), String::with_capacity(64)] {
                    got.push('x');
                    let mut want = got.clone();
                    push_short(&mut got, piece);
                    push_short(&mut got, piece);
                    want.push_str(piece);
                    want.push_str(piece);
                    assert_eq!(got, want, "{from}..{to}");
                }
            }
        }
    }

    #[test]
    fn empty_and_out_of_range() {
        assert_eq!(find_byte(b"", 0, b'<'), None);
        assert_eq!(find_byte(b"abc", 3, b'<'), None);
        assert_eq!(find_byte(b"abc", 7, b'<'), None);
        assert_eq!(swar::find(b"abc", 7, b'<'), None);
    }

    #[test]
    #[cfg(feature = "heapless")]
    fn slab_in_uninitialised_memory_hands_out_only_what_was_written() {
        use core::mem::MaybeUninit;
        let mut raw = [MaybeUninit::<(u32, u8)>::uninit(); 3];
        let mut s = Slab::new(&mut raw);
        assert_eq!((s.as_slice(), s.capacity()), (&[][..], 3));
        assert!(s.push((1, 2)) && s.push((3, 4)));
        s.as_mut_slice()[0].1 = 9;
        assert!(s.push((5, 6)));
        assert!(!s.push((7, 8)));
        assert_eq!(s.as_slice(), &[(1, 9), (3, 4), (5, 6)]);
        s.clear();
        assert!(s.push((10, 11)));
        assert_eq!(s.into_slice(), &[(10, 11)]);
    }
}
