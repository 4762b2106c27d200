//! The allocation-free mode (feature `heapless`) against the alloc mode.
#![cfg(all(feature = "heapless", feature = "alloc"))] // compared with (or checked against) the alloc mode

mod support;

use parser_core::fixed::{self, StreamError};
use parser_core::{parse, Store};
use support::{char_chunks, load, same, to_json, Rng};

#[test]
fn whole_parse_matches_cline_on_every_vector_that_fits() {
    let mut fitted = 0;
    for file in ["cline-v4.0.10.jsonl", "cline-v4.0.10-prefixes.jsonl"] {
        for c in load(file) {
            match fixed::parse::<640, 320>(&c.input) {
                Ok(p) => {
                    assert!(same(&to_json(p.blocks()), &c.expected), "{}", c.id);
                    fitted += 1;
                }
                Err(over) => panic!("{}: {} (raise the test capacities)", c.id, over.error),
            }
        }
    }
    assert_eq!(fitted, 3193 + 10760);
}

#[test]
fn overflow_names_the_store_and_offset_and_keeps_the_prefix_blocks() {
    let mut overflowed = [0usize; 2];
    for c in load("cline-v4.0.10.jsonl") {
        if let Err(over) = fixed::parse::<2, 1>(&c.input) {
            let offset = over.error.offset;
            assert_eq!(&c.input[offset..offset + 1], "<", "{}: the offset is the tag's `<`", c.id);
            assert!(over.parsed.blocks() == parse(&c.input[..offset]).blocks(), "{}: blocks before the offset", c.id);
            let capacity = match over.error.store {
                Store::Blocks => 2,
                Store::Params => 1,
            };
            assert_eq!(over.error.capacity, capacity);
            overflowed[(over.error.store == Store::Params) as usize] += 1;
        } else if let Ok(fitted) = fixed::parse::<2, 1>(&c.input) {
            // What fits is exactly the alloc result (trailing text and an open param need no slot).
            assert!(fitted.blocks() == parse(&c.input).blocks(), "{}: fitted blocks", c.id);
        }
    }
    assert!(overflowed[0] > 100 && overflowed[1] > 100, "both stores overflowed: {overflowed:?}");
}

#[test]
fn fixed_stream_equals_alloc_parse_at_every_boundary() {
    let mut rng = Rng(77);
    let mut buf = vec![0u8; 200_000];
    for c in load("cline-v4.0.10.jsonl") {
        let mut p = fixed::StreamParser::<640, 320>::new(&mut buf);
        for w in char_chunks(&c.input, &mut rng, 32).windows(2) {
            p.push_bytes(&c.input.as_bytes()[w[0]..w[1]]).unwrap();
            assert!(p.blocks() == parse(&c.input[..w[1]]).blocks(), "{} at {}", c.id, w[1]);
        }
        assert!(same(&to_json(p.finish().unwrap()), &c.expected), "{}", c.id);
    }
}

#[test]
fn a_full_buffer_is_an_error_and_consumes_nothing() {
    let mut buf = [0u8; 16];
    let mut p = fixed::StreamParser::<4, 4>::new(&mut buf);
    p.push_str("<read_file>").unwrap();
    let err = p.push_str("<path>a</path>").unwrap_err().error;
    assert_eq!(err, StreamError::BufferFull { needed: 14, available: 5 });
    assert_eq!(p.text(), "<read_file>");
    p.push_str("<path").unwrap(); // what fits still goes in
    assert_eq!(p.text(), "<read_file><path");
}

#[test]
fn a_full_block_store_in_a_stream_keeps_the_blocks_before_the_tag() {
    let mut buf = [0u8; 256];
    let mut p = fixed::StreamParser::<1, 4>::new(&mut buf);
    let first = p.push_str("Hi <read_file><path>a</path></read_file>").unwrap_err().error;
    let err = p.push_str(" more").unwrap_err().error;
    assert_eq!(err, first, "the error is sticky");
    assert!(matches!(err, StreamError::Capacity(e) if e.store == Store::Blocks && e.offset == 3), "{err:?}");
    assert!(p.blocks() == parse("Hi ").blocks());
    assert_eq!(p.text(), "Hi <read_file><path>a</path></read_file>", "nothing after the error was taken");
}

#[test]
fn parse_into_reuses_caller_storage_and_matches_parse() {
    let mut storage = Box::new(fixed::Storage::<640, 320>::new());
    for c in load("cline-v4.0.10.jsonl") {
        let blocks = fixed::parse_into(&c.input, &mut storage, parser_core::Grammar::cline()).expect("fits");
        assert!(same(&to_json(blocks), &c.expected), "{}", c.id);
    }
    let mut tiny = fixed::Storage::<1, 1>::new();
    let input = "a<read_file><path>x</path><diff>y</diff></read_file>";
    let over = fixed::parse_into(input, &mut tiny, parser_core::Grammar::cline()).unwrap_err();
    assert_eq!((over.error.store, over.error.offset), (Store::Blocks, 1));
    assert!(over.parsed == parse("a").blocks());
}

/// Found in review: in a fixed stream, a capacity error is sticky, and what the push completed
/// before it is reported.
#[test]
fn a_capacity_error_reports_the_tool_that_completed_before_it() {
    let mut buf = [0u8; 128];
    let mut p = fixed::StreamParser::<1, 4>::new(&mut buf);
    let err = p.push_str("<read_file><path>a</path></read_file> then <list_files>").unwrap_err();
    assert!(matches!(err.error, StreamError::Capacity(e) if e.offset == 43));
    assert_eq!(err.progress.completed, 0..1);
    // Invalid bytes after a capacity error neither sneak in nor change the error.
    let again = p.push_bytes(b"\xe2\x82").unwrap_err();
    assert_eq!(again.error, err.error);
    assert!(p.text().ends_with("<list_files>"));
    p.reset();
    assert!(p.error().is_none());
    p.push_str("<list_files><path>.</path></list_files>").unwrap();
    assert_eq!(p.blocks().len(), 1);
}
