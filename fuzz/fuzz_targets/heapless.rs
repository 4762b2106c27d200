//! The allocation-free mode equals the alloc mode when it fits, and otherwise returns a capacity
//! error whose blocks are exactly those of the input before the offending tag. Never a panic.
//! The stream is fed in chunks of sizes the fuzzer chooses (the first byte seeds them).
#![no_main]

use libfuzzer_sys::fuzz_target;
use parser_core::{fixed, parse};

fn check<const B: usize, const P: usize>(input: &str, sizes: &[u8]) {
    match fixed::parse::<B, P>(input) {
        Ok(p) => assert!(p.blocks() == parse(input).blocks()),
        Err(over) => {
            let at = over.error.offset;
            assert_eq!(input.as_bytes()[at], b'<');
            assert!(over.parsed.blocks() == parse(&input[..at]).blocks());
        }
    }
    let mut buf = [0u8; 512];
    let mut s = fixed::StreamParser::<B, P>::new(&mut buf);
    let bytes = input.as_bytes();
    let (mut at, mut k) = (0, 0);
    while at < bytes.len() {
        let size = usize::from(sizes.get(k % sizes.len().max(1)).copied().unwrap_or(5)).max(1);
        k += 1;
        let chunk = &bytes[at..(at + size).min(bytes.len())];
        at += chunk.len();
        match s.push_bytes(chunk).map_err(|e| e.error) {
            Ok(_) => assert!(s.blocks() == parse(s.text()).blocks()),
            Err(fixed::StreamError::BufferFull { .. }) => return,
            Err(fixed::StreamError::Capacity(e)) => {
                assert!(s.blocks() == parse(&s.text()[..e.offset]).blocks());
                // Sticky: the next push is refused with the same error and takes nothing.
                let len = s.text().len();
                let again = s.push_bytes(b"<read_file>").unwrap_err().error;
                assert_eq!(again, fixed::StreamError::Capacity(e));
                assert_eq!(s.text().len(), len);
                return;
            }
            Err(fixed::StreamError::Utf8(e)) => panic!("valid input reported invalid: {e}"),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&n, rest)) = data.split_first() else { return };
    let (sizes, text) = rest.split_at(usize::from(n % 8).min(rest.len()));
    let Ok(input) = std::str::from_utf8(text) else { return };
    check::<1, 1>(input, sizes);
    check::<3, 2>(input, sizes);
    check::<16, 16>(input, sizes);
});
