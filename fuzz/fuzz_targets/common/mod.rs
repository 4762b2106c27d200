//! Shared by the targets that compare with the naive oracle: the fast parser's blocks in the
//! oracle's owned form, raw values included.

use parser_core::oracle::NaiveBlock;
use parser_core::Block;

pub fn owned<'a>(blocks: impl IntoIterator<Item = Block<'a>>) -> Vec<NaiveBlock> {
    blocks
        .into_iter()
        .map(|b| match b {
            Block::Text { content, partial } => NaiveBlock::Text { content: content.into(), partial },
            Block::ToolUse(t) => NaiveBlock::Tool {
                name: t.name.into(),
                params: t.params().iter().map(|p| (p.name.into(), p.value.into(), p.raw.into())).collect(),
                partial: t.partial,
            },
        })
        .collect()
}
