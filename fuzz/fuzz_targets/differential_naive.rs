//! The fast parser equals the naive oracle (Cline's algorithm, character by character).
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use parser_core::oracle;
use parser_core::{parse, CLINE_PARAM_NAMES, CLINE_TOOL_NAMES};

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else { return };
    let fast = common::owned(parse(input).iter());
    assert_eq!(fast, oracle::parse(input, &CLINE_TOOL_NAMES, &CLINE_PARAM_NAMES), "input {input:?}");
});
