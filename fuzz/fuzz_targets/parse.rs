//! Whole parse never panics; every slice it returns lies inside the input (on char boundaries, as
//! `&str` slices must); only the last block can be partial; trailing text is always partial.
#![no_main]

use libfuzzer_sys::fuzz_target;
use parser_core::{parse, Block};

fn inside(outer: &str, inner: &str) -> bool {
    let (o, i) = (outer.as_ptr() as usize, inner.as_ptr() as usize);
    i >= o && i + inner.len() <= o + outer.len()
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else { return };
    let parsed = parse(input);
    let n = parsed.len();
    for (i, block) in parsed.iter().enumerate() {
        let last = i + 1 == n;
        match block {
            Block::Text { content, partial } => {
                assert!(inside(input, content) && !content.is_empty());
                assert_eq!(partial, last, "text is partial exactly when it is trailing");
                assert_eq!(parser_core::js_trim(content), content, "text is trimmed");
            }
            Block::ToolUse(t) => {
                assert!(inside(input, t.name));
                assert!(!t.partial || last, "only the last block may be partial");
                for p in t.params() {
                    assert!(inside(input, p.name) && inside(input, p.value) && inside(input, p.raw));
                    assert!(inside(p.raw, p.value), "the value is the trimmed raw value");
                    assert_eq!(parser_core::js_trim(p.raw), p.value);
                }
            }
        }
    }
});
