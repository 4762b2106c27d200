//! The allocation-free mode equals the alloc mode when it fits, and otherwise returns a capacity
//! error whose blocks are exactly those of the input before the offending tag. Never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use parser_core::{fixed, parse};

fn check<const B: usize, const P: usize>(input: &str) {
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
    for chunk in input.as_bytes().chunks(5) {
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
    let Ok(input) = std::str::from_utf8(data) else { return };
    check::<1, 1>(input);
    check::<3, 2>(input);
    check::<16, 16>(input);
});
