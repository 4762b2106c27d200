//! The fast parser equals the naive oracle (Cline's algorithm, character by character).
#![no_main]

use libfuzzer_sys::fuzz_target;
use parser_core::oracle::{self, NaiveBlock};
use parser_core::{parse, Block, CLINE_PARAM_NAMES, CLINE_TOOL_NAMES};

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else { return };
    let fast: Vec<NaiveBlock> = parse(input)
        .iter()
        .map(|b| match b {
            Block::Text { content, partial } => NaiveBlock::Text { content: content.into(), partial },
            Block::ToolUse(t) => NaiveBlock::Tool {
                name: t.name.into(),
                params: t.params().iter().map(|p| (p.name.into(), p.value.into())).collect(),
                partial: t.partial,
            },
        })
        .collect();
    assert_eq!(fast, oracle::parse(input, &CLINE_TOOL_NAMES, &CLINE_PARAM_NAMES), "input {input:?}");
});
