//! Block storage behind the engine: one implementation over any slot container, growable
//! (`Vec`, with the `alloc` feature) or fixed (`heapless::Vec`, with the `heapless` feature).

use crate::engine::{RawParam, Sink, NIL, NO_ID};
use crate::table::same_name;
use crate::Span;

/// A stored block. Text blocks in storage are always complete; only the last tool may be open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RawBlock {
    /// A complete text block (trimmed, non-empty).
    Text(Span),
    /// A tool use and the range of its params in the param store.
    Tool {
        /// The tool name as it stands in the input.
        name: Span,
        /// Index of its first param in the param store.
        first_param: usize,
        /// Number of params (distinct names).
        params: usize,
        /// 0, 1, 2… among the reply's tool uses: stable across pushes.
        ordinal: usize,
    },
}

/// Which store ran out of room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    /// The block store.
    Blocks,
    /// The param store.
    Params,
}

/// A fixed store ran out of room: what a fixed [`Slots`] container reports when full.
#[cfg(feature = "heapless")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapacityError {
    /// Which store was full.
    pub store: Store,
    /// Byte offset of the tag (its `<`) that needed the room. The input before it is parsed.
    pub offset: usize,
    /// That store's capacity.
    pub capacity: usize,
}

#[cfg(feature = "heapless")]
impl core::fmt::Display for CapacityError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let what = match self.store {
            Store::Blocks => "block",
            Store::Params => "param",
        };
        write!(f, "{what} capacity {} exhausted at byte offset {}", self.capacity, self.offset)
    }
}

#[cfg(all(feature = "std", feature = "heapless"))]
impl std::error::Error for CapacityError {}

/// A container the engine can store blocks or params in. Implemented for `Vec` (never full) and
/// `heapless::Vec` (full at its capacity); sealed.
pub trait Slots<T>: sealed::Sealed {
    /// What a full container reports.
    type Full;
    /// Room for `n` more items, or the error naming `store` and the input offset `at`.
    fn check_room(&self, n: usize, store: Store, at: usize) -> Result<(), Self::Full>;
    /// Append (room was checked).
    fn append(&mut self, item: T);
    /// The items.
    fn items(&self) -> &[T];
    /// The items, mutably.
    fn items_mut(&mut self) -> &mut [T];
    /// Remove every item (keeping the storage).
    fn clear_items(&mut self);
}

mod sealed {
    pub trait Sealed {}
    #[cfg(feature = "alloc")]
    impl<T> Sealed for alloc::vec::Vec<T> {}
    #[cfg(feature = "heapless")]
    impl<T, const N: usize> Sealed for heapless::Vec<T, N> {}
    #[cfg(feature = "heapless")]
    impl<T> Sealed for crate::scan::Slab<'_, T> {}
}

#[cfg(feature = "alloc")]
impl<T> Slots<T> for alloc::vec::Vec<T> {
    type Full = core::convert::Infallible;
    fn check_room(&self, _: usize, _: Store, _: usize) -> Result<(), Self::Full> {
        Ok(())
    }
    fn append(&mut self, item: T) {
        self.push(item);
    }
    fn items(&self) -> &[T] {
        self
    }
    fn items_mut(&mut self) -> &mut [T] {
        self
    }
    fn clear_items(&mut self) {
        self.clear();
    }
}

#[cfg(feature = "heapless")]
impl<T, const N: usize> Slots<T> for heapless::Vec<T, N> {
    type Full = CapacityError;
    fn check_room(&self, n: usize, store: Store, at: usize) -> Result<(), Self::Full> {
        if N - self.len() >= n {
            Ok(())
        } else {
            Err(CapacityError { store, offset: at, capacity: N })
        }
    }
    fn append(&mut self, item: T) {
        // Room was checked by `check_room`; a failure here would be a bug, and is ignored
        // rather than turned into a panic.
        let _ = self.push(item);
    }
    fn items(&self) -> &[T] {
        self
    }
    fn items_mut(&mut self) -> &mut [T] {
        self
    }
    fn clear_items(&mut self) {
        self.clear();
    }
}

#[cfg(feature = "heapless")]
impl<T: Copy> Slots<T> for crate::scan::Slab<'_, T> {
    type Full = CapacityError;
    fn check_room(&self, n: usize, store: Store, at: usize) -> Result<(), Self::Full> {
        if self.capacity() - self.as_slice().len() >= n {
            Ok(())
        } else {
            Err(CapacityError { store, offset: at, capacity: self.capacity() })
        }
    }
    fn append(&mut self, item: T) {
        // Room was checked by `check_room` (as for `heapless::Vec`).
        let _ = self.push(item);
    }
    fn items(&self) -> &[T] {
        self.as_slice()
    }
    fn items_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
    fn clear_items(&mut self) {
        self.clear();
    }
}

/// Below this many params, a tool's params are scanned instead of hashed.
const LINEAR: usize = 16;

/// Buckets of the param index for a tool with `n` params: 0 below [`LINEAR`], else the largest
/// power of two ≤ `n` (so every bucket is the `head` field of one of its params).
fn bucket_count(n: usize) -> usize {
    if n < LINEAR {
        0
    } else {
        1 << n.ilog2()
    }
}

/// The bucket of a name's table index (Fibonacci hashing; `buckets` a power of two ≥ 2).
#[inline]
fn bucket(id: u32, buckets: usize) -> usize {
    (id.wrapping_mul(0x9E37_79B9) >> (32 - buckets.trailing_zeros())) as usize
}

/// Re-chain a tool's params (`tool`, the first at index `first` of the store) into `buckets`
/// buckets.
fn rebuild(tool: &mut [RawParam], first: usize, buckets: usize) {
    for p in &mut tool[..buckets] {
        p.head = NIL;
    }
    for i in 0..tool.len() {
        let b = bucket(tool[i].id, buckets);
        tool[i].next = tool[b].head;
        tool[b].head = (first + i) as u32;
    }
}

/// Blocks and params of one reply, as the engine reported them.
#[derive(Clone, Debug, Default)]
pub(crate) struct BlockStore<B, P> {
    pub(crate) blocks: B,
    pub(crate) params: P,
    /// The last stored block is a tool still open.
    pub(crate) open: bool,
    pub(crate) tools: usize,
    /// Bumped on every change, so a stream can tell whether a push changed anything.
    pub(crate) changes: u64,
}

impl<B, P, E> BlockStore<B, P>
where
    B: Slots<RawBlock, Full = E>,
    P: Slots<RawParam, Full = E>,
{
    /// Empty, for a new reply, without touching the storage itself.
    #[cfg_attr(not(feature = "heapless"), allow(dead_code))]
    pub(crate) fn clear(&mut self) {
        self.blocks.clear_items();
        self.params.clear_items();
        self.open = false;
        self.tools = 0;
        self.changes += 1;
    }
}

impl<B, P, E> BlockStore<B, P>
where
    B: Slots<RawBlock, Full = E>,
    P: Slots<RawParam, Full = E>,
{
    /// A param was appended to the open tool (the last block).
    #[inline(always)]
    fn count_new_param(&mut self) {
        if let Some(RawBlock::Tool { params, .. }) = self.blocks.items_mut().last_mut() {
            *params += 1;
        }
        self.changes += 1;
    }

    /// [`Sink::set_param`] for a tool that has `count > 0` params already, the first at index
    /// `first` of the param store.
    #[inline(never)]
    fn set_later_param(
        &mut self,
        input: &[u8],
        mut param: RawParam,
        at: usize,
        first: usize,
        count: usize,
    ) -> Result<(), E> {
        let name = param.name();
        let name = &input[name.start..name.end];
        let stored = self.params.items();
        let n = stored.len();
        let buckets = bucket_count(count);
        // One table index is one name; only names outside the table (`NO_ID`) are compared.
        let same_name =
            |p: &RawParam| p.id == param.id && (p.id != NO_ID || same_name(&input[p.name().start..p.name().end], name));
        let same = if buckets == 0 {
            #[cfg(test)]
            crate::scan::counter::add_probes(count);
            stored[first..first + count].iter().position(same_name).map(|k| first + k)
        } else {
            let mut i = stored[first + bucket(param.id, buckets)].head;
            loop {
                #[cfg(test)]
                crate::scan::counter::add_probes(1);
                if i == NIL {
                    break None;
                }
                let p = &stored[i as usize];
                if same_name(p) {
                    break Some(i as usize);
                }
                i = p.next;
            }
        };
        match same {
            // Cline assigns into an object: the value changes, the key keeps its first position.
            Some(k) => {
                let old = &mut self.params.items_mut()[k];
                old.raw = param.raw;
                old.value = param.value;
            }
            None => {
                self.params.check_room(1, Store::Params, at)?;
                if buckets > 0 {
                    param.next = stored[first + bucket(param.id, buckets)].head;
                }
                self.params.append(param);
                let tool = &mut self.params.items_mut()[first..];
                if buckets > 0 {
                    tool[bucket(param.id, buckets)].head = n as u32;
                }
                if bucket_count(count + 1) != buckets {
                    rebuild(tool, first, bucket_count(count + 1));
                }
                self.count_new_param();
                return Ok(());
            }
        }
        self.changes += 1;
        Ok(())
    }
}

impl<B, P, E> Sink for BlockStore<B, P>
where
    B: Slots<RawBlock, Full = E>,
    P: Slots<RawParam, Full = E>,
{
    type Error = E;

    fn open_tool(&mut self, text: Option<Span>, name: Span, at: usize) -> Result<(), E> {
        self.blocks.check_room(1 + usize::from(text.is_some()), Store::Blocks, at)?;
        if let Some(text) = text {
            self.blocks.append(RawBlock::Text(text));
        }
        let first_param = self.params.items().len();
        self.blocks.append(RawBlock::Tool { name, first_param, params: 0, ordinal: self.tools });
        self.tools += 1;
        self.open = true;
        self.changes += 1;
        Ok(())
    }

    /// Inlined for a tool's first param (most tools have one or two), which has nothing to
    /// look for or index; the rest is [`BlockStore::set_later_param`].
    ///
    /// O(1) per param, whatever the number of names: once the open tool has [`LINEAR`] params,
    /// its params are chained in a hash index keyed by the name's table index, with no storage
    /// beyond the params themselves. With `c` params in the tool, the buckets are the `head`
    /// fields of its first `b` params, `b` the largest power of two ≤ `c` (rebuilt when `c`
    /// reaches the next one: amortised O(1)). Below [`LINEAR`] params (nearly every real tool)
    /// they are simply scanned, as before, and the index costs nothing.
    #[inline]
    fn set_param(&mut self, input: &[u8], param: RawParam, at: usize) -> Result<(), E> {
        let Some(RawBlock::Tool { first_param, params, .. }) = self.blocks.items().last() else {
            return Ok(()); // the engine only sets params inside a tool
        };
        let (first, count) = (*first_param, *params);
        if count == 0 {
            self.params.check_room(1, Store::Params, at)?;
            self.params.append(param);
            self.count_new_param();
            return Ok(());
        }
        self.set_later_param(input, param, at, first, count)
    }

    fn close_tool(&mut self) {
        self.open = false;
        self.changes += 1;
    }
}

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use crate::scan::counter;
    use crate::{Block, Grammar, TagSetBuf};
    use alloc::format;
    use alloc::string::String;
    use alloc::vec::Vec;

    /// One tool carrying `k` distinct run-time param names, each set twice (the second time
    /// overwrites), and the params compared while storing them.
    fn probes_for(k: usize) -> usize {
        let names: Vec<String> = (0..k).map(|i| format!("p{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let tools = TagSetBuf::try_new(&["t"]).unwrap();
        let params = TagSetBuf::try_new(&names).unwrap();
        let grammar = Grammar::new(tools.table(), params.table());
        let mut reply = String::from("<t>");
        for round in 0..2 {
            for n in &names {
                reply.push_str(&format!("<{n}>{round}</{n}>"));
            }
        }
        reply.push_str("</t>");
        counter::take_probes();
        let parsed = crate::parse_with(&reply, &grammar);
        let probes = counter::take_probes();
        let Some(Block::ToolUse(t)) = parsed.get(0) else { panic!("a tool") };
        assert_eq!(t.params().len(), k);
        assert!(t.params().iter().zip(&names).all(|(p, n)| p.name == *n && p.value == "1"), "order and overwrite");
        #[cfg(feature = "heapless")]
        {
            // The allocation-free store uses the same index in its own slots.
            let (mut b, mut p) =
                (alloc::vec![core::mem::MaybeUninit::uninit(); 2], alloc::vec![core::mem::MaybeUninit::uninit(); k]);
            counter::take_probes();
            let fixed = crate::fixed::parse_in_slots(&reply, &mut b, &mut p, &grammar).unwrap();
            assert_eq!(counter::take_probes(), probes);
            assert!(fixed == parsed.blocks());
        }
        probes
    }

    #[test]
    fn params_of_one_tool_cost_o1_each_whatever_their_number() {
        let small = probes_for(1000);
        for k in [4000, 16000, 64000] {
            let big = probes_for(k);
            std::eprintln!("{k} params, each set twice: {big} params compared");
            // Linear: at most a few comparisons per set, and the same per param at every size
            // (a quadratic search compares about k / 2 per set: 2,000× more at 64k).
            assert!(big <= 4 * 2 * k, "{big} comparisons for {k} params");
            assert!(big * 1000 <= small * k * 2, "{big} for {k} params against {small} for 1000");
        }
    }
}
