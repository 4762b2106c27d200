//! Whole-reply parsing into growable storage: two allocations (blocks, params), no text copied.

use alloc::vec::Vec;

use crate::engine::{Engine, RawParam};
use crate::grammar::Grammar;
use crate::parsed::ParsedIn;
use crate::store::{BlockStore, RawBlock};

/// The blocks of one reply in growable storage. Holds only offsets; the text is borrowed from
/// the input.
pub type Parsed<'a> = ParsedIn<'a, Vec<RawBlock>, Vec<RawParam>>;

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
    // the lists rarely copies them; a reply denser in tags grows them as usual. Capped, so that
    // a huge reply with few tags does not reserve much.
    let guess = (input.len() / 512).min(4096);
    store.blocks.reserve(guess);
    store.params.reserve(guess);
    let Ok(()) = engine.run(input.as_bytes(), grammar, &mut store);
    let tail = engine.tail(input.as_bytes());
    ParsedIn { input, store, tail }
}
