//! Whole-reply parsing into growable storage: two allocations (blocks, params), no text copied.

use alloc::vec::Vec;

use crate::engine::{Engine, RawParam, Tail};
use crate::grammar::Grammar;
use crate::store::{BlockStore, RawBlock};
use crate::view::{Block, Blocks, BlocksIter};

/// The blocks of one reply. Holds only offsets; the text is borrowed from the input.
#[derive(Clone, Debug)]
pub struct Parsed<'a> {
    input: &'a str,
    store: BlockStore<Vec<RawBlock>, Vec<RawParam>>,
    tail: Tail,
}

impl<'a> Parsed<'a> {
    /// A view of the blocks.
    pub fn blocks(&self) -> Blocks<'_> {
        Blocks::new(self.input, &self.store.blocks, &self.store.params, self.store.open, self.tail, 0)
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.blocks().len()
    }

    /// True when the reply has no blocks.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Block `i`.
    pub fn get(&self, i: usize) -> Option<Block<'_>> {
        self.blocks().get(i)
    }

    /// The blocks in order.
    pub fn iter(&self) -> BlocksIter<'_> {
        self.blocks().iter()
    }
}

/// Parse a whole reply as Cline v4.0.10's `parseAssistantMessageV2` does.
///
/// ```
/// use parser_core::{parse, Block};
/// let reply = parse("I'll read it.<read_file><path>src/a.rs</path></read_file>");
/// assert_eq!(reply.get(0), Some(Block::Text { content: "I'll read it.", partial: false }));
/// let Some(Block::ToolUse(tool)) = reply.get(1) else { panic!("a tool") };
/// assert_eq!(tool.param("path"), Some("src/a.rs"));
/// ```
pub fn parse(input: &str) -> Parsed<'_> {
    parse_with(input, Grammar::cline())
}

/// Parse a whole reply with your own tool and param tables.
pub fn parse_with<'a>(input: &'a str, grammar: &Grammar<'_>) -> Parsed<'a> {
    let mut engine = Engine::default();
    let mut store = BlockStore::<Vec<RawBlock>, Vec<RawParam>>::default();
    // Room for a block and a param per 512 bytes (typical replies have fewer), so that growing
    // the lists rarely copies them; a reply denser in tags grows them as usual.
    store.blocks.reserve(input.len() / 512);
    store.params.reserve(input.len() / 512);
    let Ok(()) = engine.run(input.as_bytes(), grammar, &mut store);
    let tail = engine.tail(input.as_bytes());
    Parsed { input, store, tail }
}
