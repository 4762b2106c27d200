//! Tables built at run time from fuzzer-chosen names: the const-fn-built `TagSet` and the sized
//! `TagSetBuf` agree with each other and with the naive oracle given the same names; a name that
//! is not in the tables is text.
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use parser_core::oracle::{self, NaiveBlock};
use parser_core::{parse_with, Block, Grammar, TagSet, TagSetBuf};

#[derive(Arbitrary, Debug)]
struct Case<'a> {
    tools: Vec<&'a str>,
    params: Vec<&'a str>,
    text: &'a str,
}

fn owned<'a>(blocks: impl Iterator<Item = Block<'a>>) -> Vec<NaiveBlock> {
    blocks
        .map(|b| match b {
            Block::Text { content, partial } => NaiveBlock::Text { content: content.into(), partial },
            Block::ToolUse(t) => NaiveBlock::Tool {
                name: t.name.into(),
                params: t.params().iter().map(|p| (p.name.into(), p.value.into())).collect(),
                partial: t.partial,
            },
        })
        .collect()
}

fuzz_target!(|case: Case<'_>| {
    let (Ok(tools), Ok(params)) = (TagSetBuf::try_new(&case.tools), TagSetBuf::try_new(&case.params)) else {
        // Names refused by one builder are refused by the other (same validation).
        let both = TagSet::<64>::try_new(&case.tools).is_ok() && TagSet::<64>::try_new(&case.params).is_ok();
        assert!(!both, "TagSet accepted what TagSetBuf refused");
        return;
    };
    let grammar = Grammar::new(tools.table(), params.table());
    let got = owned(parse_with(case.text, &grammar).iter());
    assert_eq!(got, oracle::parse(case.text, &case.tools, &case.params), "{case:?}");
    if let (Ok(t), Ok(p)) = (TagSet::<64>::try_new(&case.tools), TagSet::<64>::try_new(&case.params)) {
        let fixed_grammar = Grammar::new(t.table(), p.table());
        assert_eq!(owned(parse_with(case.text, &fixed_grammar).iter()), got);
    }
});
