//! Finding the next `<`: the only `unsafe` in the crate.
//!
//! The parser only ever stops at a `<` (every tag starts with one), so its speed is the speed of
//! this search. On x86_64 SSE2 is part of the baseline, so the vector path needs no run-time
//! detection and works in `no_std`; elsewhere a portable SWAR path tests eight bytes per step.
//! Both are checked against a naive loop at every alignment (see the tests below) and under Miri.

/// Offset of the first `needle` in `hay[from..]` (an offset into `hay`), or `None`.
#[inline]
pub(crate) fn find_byte(hay: &[u8], from: usize, needle: u8) -> Option<usize> {
    let found = find_impl(hay, from, needle);
    #[cfg(test)]
    counter::add(found.map_or(hay.len(), |i| i + 1).saturating_sub(from));
    found
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline]
fn find_impl(hay: &[u8], from: usize, needle: u8) -> Option<usize> {
    // SAFETY: this cfg holds only when SSE2 is enabled for the whole build (it is part of the
    // x86_64 baseline), so the CPU running this code has it.
    unsafe { sse2::find(hay, from, needle) }
}
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
use swar::find as find_impl;

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

    /// Load 16 bytes from `hay[at..at + 16]`.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn load(hay: &[u8], at: usize) -> __m128i {
        let chunk: &[u8; 16] = hay[at..at + 16].try_into().expect("16-byte slice");
        // SAFETY: `chunk` is a valid, readable 16-byte array (the slice above was bounds-checked);
        // `_mm_loadu_si128` has no alignment requirement; SSE2 is enabled at compile time (cfg).
        unsafe { _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>()) }
    }

    #[target_feature(enable = "sse2")]
    pub(super) fn find(hay: &[u8], from: usize, needle: u8) -> Option<usize> {
        let len = hay.len();
        let mut i = from;
        let n = _mm_set1_epi8(needle as i8);
        // 64 bytes per step while no match: one movemask per step on the common path.
        while i + 64 <= len {
            let a = _mm_cmpeq_epi8(load(hay, i), n);
            let b = _mm_cmpeq_epi8(load(hay, i + 16), n);
            let c = _mm_cmpeq_epi8(load(hay, i + 32), n);
            let d = _mm_cmpeq_epi8(load(hay, i + 48), n);
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
            let m = _mm_movemask_epi8(_mm_cmpeq_epi8(load(hay, i), n));
            if m != 0 {
                return Some(i + m.trailing_zeros() as usize);
            }
            i += 16;
        }
        super::swar::find(hay, i, needle)
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

    pub(crate) fn add(n: usize) {
        EXAMINED.with(|c| c.set(c.get() + n));
    }
    /// Bytes examined on this thread since the last `take`.
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
        for start in 0..buf.len().min(80) {
            let hay = &buf[start..];
            for from in 0..=hay.len().min(70) {
                let want = find_naive(hay, from, b'<');
                assert_eq!(swar::find(hay, from, b'<'), want, "swar start={start} from={from}");
                #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
                // SAFETY: the cfg above guarantees SSE2.
                assert_eq!(unsafe { sse2::find(hay, from, b'<') }, want, "sse2 start={start} from={from}");
                assert_eq!(find_byte(hay, from, b'<'), want, "dispatch start={start} from={from}");
            }
        }
    }

    #[test]
    fn every_alignment_and_position_matches_naive() {
        let len = if cfg!(miri) { 90 } else { 200 };
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
    fn empty_and_out_of_range() {
        assert_eq!(find_byte(b"", 0, b'<'), None);
        assert_eq!(find_byte(b"abc", 3, b'<'), None);
        assert_eq!(find_byte(b"abc", 7, b'<'), None);
        assert_eq!(swar::find(b"abc", 7, b'<'), None);
    }
}
