//! What callers see: blocks that borrow the input. Nothing here copies text.

use crate::engine::{RawParam, Tail};
use crate::store::RawBlock;
use crate::Span;

/// One block of a reply, as Cline's parser returns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block<'a> {
    /// Prose between tool uses, trimmed as JavaScript trims.
    Text {
        /// The text, trimmed; never empty.
        content: &'a str,
        /// True for text at the end of the input (even when the reply is finished, as in Cline).
        partial: bool,
    },
    /// A tool use.
    ToolUse(ToolUse<'a>),
}

impl Block<'_> {
    /// True while the block is unfinished: trailing text, or a tool whose close tag has not come.
    pub fn partial(&self) -> bool {
        match self {
            Block::Text { partial, .. } => *partial,
            Block::ToolUse(t) => t.partial,
        }
    }
}

/// A tool use: its name, its params, and whether its close tag has been seen. Two tool uses are
/// equal when they parse the same (name, params, flags, ordinal), whatever stream they came from.
#[derive(Clone, Copy, Debug)]
pub struct ToolUse<'a> {
    /// The tool's name.
    pub name: &'a str,
    /// True until `</name>` has been seen.
    pub partial: bool,
    /// 0 for the reply's first tool use, 1 for the next…: stable while a reply streams in.
    pub ordinal: usize,
    /// Seed of the stream this block came from, for [`ToolUse::call_id`].
    #[cfg_attr(not(feature = "nanorand"), allow(dead_code))]
    pub(crate) call_seed: u64,
    params: Params<'a>,
}

impl PartialEq for ToolUse<'_> {
    fn eq(&self, other: &Self) -> bool {
        (self.name, self.partial, self.ordinal, self.params) == (other.name, other.partial, other.ordinal, other.params)
    }
}
impl Eq for ToolUse<'_> {}

impl<'a> ToolUse<'a> {
    /// The params, in the order Cline's object holds them (first assignment).
    pub fn params(&self) -> Params<'a> {
        self.params
    }

    /// Cline's (trimmed) value of param `name`.
    pub fn param(&self, name: &str) -> Option<&'a str> {
        self.params.iter().find(|p| p.name == name).map(|p| p.value)
    }

    /// The untrimmed value of param `name`: Cline's trim loses a file's first-line indentation.
    pub fn raw_param(&self, name: &str) -> Option<&'a str> {
        self.params.iter().find(|p| p.name == name).map(|p| p.raw)
    }
}

/// One param of a tool use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param<'a> {
    /// The param's name.
    pub name: &'a str,
    /// The value as Cline has it: trimmed with JavaScript's whitespace set.
    pub value: &'a str,
    /// The value exactly as it stands between the tags (for `write_to_file`'s re-taken
    /// `content`, between the first `<content>` and the last `</content>`).
    pub raw: &'a str,
    /// Where `value` lies in the input, in bytes.
    pub value_span: Span,
    /// Where `raw` lies in the input, in bytes.
    pub raw_span: Span,
}

/// The params of a tool use (an iterator view; copying it is cheap).
#[derive(Clone, Copy)]
pub struct Params<'a> {
    input: &'a str,
    closed: &'a [RawParam],
    /// The param still being streamed, if any, and which closed param it overwrites.
    open: Option<(RawParam, Option<usize>)>,
}

impl<'a> Params<'a> {
    /// Number of params.
    pub fn len(&self) -> usize {
        self.closed.len() + usize::from(matches!(self.open, Some((_, None))))
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The index of the param still being streamed (its close tag not seen yet), if any: the
    /// one whose value grows as text arrives. It may be an earlier param's name set again, as
    /// in Cline, which keeps that param's position.
    pub fn streaming(&self) -> Option<usize> {
        self.open.map(|(_, over)| over.unwrap_or(self.closed.len()))
    }

    /// The params in order.
    pub fn iter(&self) -> ParamsIter<'a> {
        ParamsIter { params: *self, next: 0 }
    }

    /// Where each param's name and (trimmed) value lie in the input, in order, without making
    /// the strings: for bindings that hand out offsets (the WebAssembly package).
    pub fn spans(&self) -> impl Iterator<Item = (Span, Span)> + 'a {
        let params = *self;
        (0..self.len()).filter_map(move |i| {
            let (raw, name) = match (params.closed.get(i), params.open) {
                (Some(p), Some((open, Some(k)))) if k == i => (open, p.name()),
                (Some(p), _) => (*p, p.name()),
                (None, Some((open, None))) if i == params.closed.len() => (open, open.name()),
                _ => return None,
            };
            Some((name, raw.value))
        })
    }

    fn get(&self, i: usize) -> Option<Param<'a>> {
        let s = |span: Span| &self.input[span.start..span.end];
        let (raw, name) = match (self.closed.get(i), self.open) {
            (Some(p), Some((open, Some(k)))) if k == i => (open, p.name()),
            (Some(p), _) => (*p, p.name()),
            (None, Some((open, None))) if i == self.closed.len() => (open, open.name()),
            _ => return None,
        };
        Some(Param { name: s(name), value: s(raw.value), raw: s(raw.raw), value_span: raw.value, raw_span: raw.raw })
    }
}

impl PartialEq for Params<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}
impl Eq for Params<'_> {}

impl core::fmt::Debug for Params<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_map().entries(self.iter().map(|p| (p.name, p.value))).finish()
    }
}

impl<'a> IntoIterator for Params<'a> {
    type Item = Param<'a>;
    type IntoIter = ParamsIter<'a>;
    fn into_iter(self) -> ParamsIter<'a> {
        self.iter()
    }
}

/// Iterator over [`Params`].
#[derive(Clone, Debug)]
pub struct ParamsIter<'a> {
    params: Params<'a>,
    next: usize,
}

impl<'a> Iterator for ParamsIter<'a> {
    type Item = Param<'a>;
    fn next(&mut self) -> Option<Param<'a>> {
        let p = self.params.get(self.next)?;
        self.next += 1;
        Some(p)
    }
    // Random access: `skip(k)` and `nth(k)` cost O(1), not k steps.
    fn nth(&mut self, n: usize) -> Option<Param<'a>> {
        self.next = self.next.saturating_add(n);
        self.next()
    }
}

/// A consistent view of a reply's blocks: what is stored plus what the end of the input adds.
#[derive(Clone, Copy)]
pub struct Blocks<'a> {
    input: &'a str,
    stored: &'a [RawBlock],
    params: &'a [RawParam],
    open: bool,
    tail: Tail,
    call_seed: u64,
}

impl<'a> Blocks<'a> {
    pub(crate) fn new(
        input: &'a str,
        stored: &'a [RawBlock],
        params: &'a [RawParam],
        open: bool,
        tail: Tail,
        call_seed: u64,
    ) -> Self {
        Blocks { input, stored, params, open, tail, call_seed }
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.stored.len() + usize::from(matches!(self.tail, Tail::Text(_)))
    }

    /// True for a reply with no blocks (empty or whitespace-only).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Block `i`.
    pub fn get(&self, i: usize) -> Option<Block<'a>> {
        let s = |span: Span| &self.input[span.start..span.end];
        match self.stored.get(i) {
            Some(RawBlock::Text(span)) => Some(Block::Text { content: s(*span), partial: false }),
            Some(&RawBlock::Tool { name, first_param, params, ordinal }) => {
                let last_open = self.open && i + 1 == self.stored.len();
                let closed = &self.params[first_param..first_param + params];
                let open = match self.tail {
                    Tail::Param(p) if last_open => Some((p, self.same_name(closed, &p))),
                    _ => None,
                };
                let params = Params { input: self.input, closed, open };
                Some(Block::ToolUse(ToolUse {
                    name: s(name),
                    partial: last_open,
                    ordinal,
                    call_seed: self.call_seed,
                    params,
                }))
            }
            None => match self.tail {
                Tail::Text(span) if i == self.stored.len() => Some(Block::Text { content: s(span), partial: true }),
                _ => None,
            },
        }
    }

    /// The blocks in order.
    pub fn iter(&self) -> BlocksIter<'a> {
        BlocksIter { blocks: *self, next: 0 }
    }

    /// The string that grows as text arrives, if the input ends inside one, and where it lies:
    /// the trailing text block's content (`None`), or the value of the param being streamed in
    /// the last tool (`Some` of its index, [`Params::streaming`]). What a push with
    /// [`crate::Progress::grew_only`] moved; O(1), without making the block.
    pub fn growing(&self) -> Option<(Option<usize>, Span)> {
        match self.tail {
            Tail::Text(span) => Some((None, span)),
            Tail::Param(p) if self.open => match self.stored.last() {
                Some(&RawBlock::Tool { first_param, params, .. }) => {
                    let closed = &self.params[first_param..first_param + params];
                    let k = self.same_name(closed, &p).unwrap_or(closed.len());
                    Some((Some(k), p.value))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// The closed param of `closed` with the name of the open param `p`, if any.
    fn same_name(&self, closed: &[RawParam], p: &RawParam) -> Option<usize> {
        // Compared as bytes: names are whole tags, no need to check boundaries.
        let b = |span: Span| &self.input.as_bytes()[span.start..span.end];
        let name = b(p.name());
        closed.iter().position(|c| crate::table::same_name(b(c.name()), name))
    }

    /// The last block, if any.
    pub fn last(&self) -> Option<Block<'a>> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }

    /// The input these blocks borrow from.
    pub fn input(&self) -> &'a str {
        self.input
    }

    /// The same blocks with call ids drawn from `seed` (see `ToolUse::call_id`, feature
    /// `nanorand`): for whole parses, whose seed is otherwise 0.
    pub fn with_call_seed(mut self, seed: u64) -> Self {
        self.call_seed = seed;
        self
    }

    /// The blocks collected into a `Vec`.
    #[cfg(feature = "alloc")]
    pub fn to_vec(&self) -> alloc::vec::Vec<Block<'a>> {
        self.iter().collect()
    }
}

impl PartialEq for Blocks<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl core::fmt::Debug for Blocks<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> IntoIterator for Blocks<'a> {
    type Item = Block<'a>;
    type IntoIter = BlocksIter<'a>;
    fn into_iter(self) -> BlocksIter<'a> {
        self.iter()
    }
}

/// Iterator over [`Blocks`].
#[derive(Clone)]
pub struct BlocksIter<'a> {
    blocks: Blocks<'a>,
    next: usize,
}

impl<'a> Iterator for BlocksIter<'a> {
    type Item = Block<'a>;
    fn next(&mut self) -> Option<Block<'a>> {
        let b = self.blocks.get(self.next)?;
        self.next += 1;
        Some(b)
    }
    // Random access: `skip(k)` and `nth(k)` cost O(1), not k steps, so a streaming caller that
    // lists only the blocks from the first changed one pays for those alone.
    fn nth(&mut self, n: usize) -> Option<Block<'a>> {
        self.next = self.next.saturating_add(n);
        self.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.blocks.len().saturating_sub(self.next);
        (n, Some(n))
    }
}

impl ExactSizeIterator for BlocksIter<'_> {}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use alloc::vec::Vec;

    #[test]
    fn nth_and_skip_land_on_the_block_and_param_that_next_would_reach() {
        let reply = "a <read_file><path>x</path></read_file> b <execute_command><command>ls</command>\
                     <requires_approval>false</requires_approval></execute_command> c <write_to_file><path>y</path><con";
        let parsed = crate::parse(reply);
        let blocks = parsed.blocks();
        let all: Vec<_> = blocks.iter().collect();
        assert_eq!(all.len(), 6);
        for k in 0..=all.len() + 1 {
            assert_eq!(blocks.iter().nth(k), all.get(k).copied(), "nth({k})");
            assert_eq!(blocks.iter().skip(k).collect::<Vec<_>>(), all[k.min(all.len())..], "skip({k})");
            let mut it = blocks.iter();
            it.nth(k);
            assert_eq!(it.next(), all.get(k + 1).copied(), "next after nth({k})");
            assert_eq!(it.len(), all.len().saturating_sub(k + 2), "len after nth({k})");
        }
        assert_eq!(blocks.iter().nth(usize::MAX), None);
        let crate::Block::ToolUse(tool) = all[3] else { panic!("block 3 is execute_command") };
        let params: Vec<_> = tool.params().iter().collect();
        for k in 0..=params.len() {
            assert_eq!(tool.params().iter().nth(k), params.get(k).copied(), "param nth({k})");
        }
        // spans() names the same bytes as the params, also for the open block's params.
        for b in &all {
            let crate::Block::ToolUse(tool) = b else { continue };
            let by_spans: Vec<_> =
                tool.params().spans().map(|(n, v)| (&reply[n.start..n.end], &reply[v.start..v.end])).collect();
            let by_params: Vec<_> = tool.params().iter().map(|p| (p.name, p.value)).collect();
            assert_eq!(by_spans, by_params);
        }
    }
}
