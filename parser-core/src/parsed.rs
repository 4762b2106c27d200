//! The blocks of one whole reply, in whatever storage parsed them (growable or fixed).

use crate::engine::{RawParam, Tail};
use crate::store::{BlockStore, RawBlock, Slots};
use crate::view::{Block, Blocks, BlocksIter};

/// The blocks of one reply: offsets into the input, in storage `B` (blocks) and `P` (params).
/// Use it through [`crate::Parsed`] (growable) or [`crate::fixed::Parsed`] (fixed capacities).
#[derive(Clone, Debug)]
pub struct ParsedIn<'a, B, P> {
    pub(crate) input: &'a str,
    pub(crate) store: BlockStore<B, P>,
    pub(crate) tail: Tail,
}

impl<B: Slots<RawBlock>, P: Slots<RawParam>> ParsedIn<'_, B, P> {
    /// A view of the blocks.
    pub fn blocks(&self) -> Blocks<'_> {
        Blocks::new(self.input, self.store.blocks.items(), self.store.params.items(), self.store.open, self.tail, 0)
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
