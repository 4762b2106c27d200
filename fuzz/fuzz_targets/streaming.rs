//! The fuzzer chooses the chunking, as `&str` or raw bytes that split UTF-8 anywhere: after every
//! chunk the streaming parser equals a whole parse of the text so far, and call ids never change.
//! Then the same parser, `reset()`, takes arbitrary bytes (invalid UTF-8 included): it parses
//! exactly the valid prefix, the error is sticky (nothing after the hole is parsed), and a
//! second `reset()` gives a parser equal to a new one.
#![no_main]

use std::collections::HashMap;

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use parser_core::{parse, Block, StreamParser};

#[derive(Arbitrary, Debug)]
struct Case<'a> {
    text: &'a str,
    /// Arbitrary bytes for the same parser after `reset()`.
    bytes: &'a [u8],
    /// Chunk lengths in bytes, used in turn (0 is read as 1).
    chunks: Vec<u8>,
    raw_bytes: bool,
    seed: u64,
}

fuzz_target!(|case: Case<'_>| {
    let text = case.text;
    let mut p = StreamParser::new().with_call_seed(case.seed);
    let mut ids: HashMap<usize, String> = HashMap::new();
    let mut at = 0;
    let mut k = 0;
    while at < text.len() {
        let want = case.chunks.get(k % case.chunks.len().max(1)).copied().unwrap_or(7).max(1) as usize;
        k += 1;
        let mut end = (at + want).min(text.len());
        if case.raw_bytes {
            p.push_bytes(&text.as_bytes()[at..end]).expect("valid UTF-8 in, no error out");
        } else {
            while !text.is_char_boundary(end) {
                end += 1;
            }
            p.push_str(&text[at..end]);
        }
        at = end;
        let mut valid = at;
        while !text.is_char_boundary(valid) {
            valid -= 1;
        }
        assert_eq!(p.text(), &text[..valid]);
        assert!(p.blocks() == parse(&text[..valid]).blocks(), "at byte {at} of {text:?}");
        for b in p.blocks() {
            if let Block::ToolUse(t) = b {
                let id = t.call_id().to_string();
                assert_eq!(ids.entry(t.ordinal).or_insert_with(|| id.clone()), &id, "call id changed");
            }
        }
    }
    assert!(p.finish().expect("complete") == parse(text).blocks());

    // Reused after reset(): arbitrary bytes, in the same chunking.
    p.reset();
    assert!(p.text().is_empty() && p.blocks() == parse("").blocks());
    let bytes = case.bytes;
    let valid = match std::str::from_utf8(bytes) {
        Ok(s) => s.len(),
        Err(e) => e.valid_up_to(),
    };
    let mut at = 0;
    let mut k = 0;
    let mut failed = false;
    while at < bytes.len() {
        let want = case.chunks.get(k % case.chunks.len().max(1)).copied().unwrap_or(7).max(1) as usize;
        k += 1;
        let end = (at + want).min(bytes.len());
        let pushed = p.push_bytes(&bytes[at..end]);
        at = end;
        if failed {
            assert!(pushed.is_err(), "the error is sticky");
        }
        failed |= pushed.is_err();
        // Everything parsed is valid text, and never past the first invalid byte.
        assert!(p.text().len() <= valid && bytes.starts_with(p.text().as_bytes()));
        assert!(p.blocks() == parse(p.text()).blocks(), "after a push of bytes up to {at}");
    }
    match (p.finish(), std::str::from_utf8(bytes)) {
        (Ok(blocks), Ok(s)) => assert!(blocks == parse(s).blocks()),
        (Ok(_), Err(e)) => panic!("invalid UTF-8 accepted: {e}"),
        (Err(e), Ok(_)) => panic!("valid UTF-8 refused: {e:?}"),
        (Err(_), Err(_)) => assert_eq!(p.text(), std::str::from_utf8(&bytes[..p.text().len()]).unwrap()),
    }
    p.reset();
    assert!(p.error().is_none() && p.text().is_empty(), "reset() clears the error");
    p.push_str(text);
    assert!(p.blocks() == parse(text).blocks(), "a reset parser equals a new one");
});
