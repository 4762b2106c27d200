//! Block storage behind the engine: one implementation over any slot container, growable
//! (`Vec`, with the `alloc` feature) or fixed (`heapless::Vec`, with the `heapless` feature).

use crate::engine::{RawParam, Sink};
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

    fn set_param(&mut self, input: &[u8], param: RawParam, at: usize) -> Result<(), E> {
        let Some(RawBlock::Tool { first_param, params, .. }) = self.blocks.items_mut().last_mut() else {
            return Ok(()); // the engine only sets params inside a tool
        };
        let (first, count) = (*first_param, *params);
        let name = &input[param.name.start..param.name.end];
        let same =
            self.params.items()[first..first + count].iter().position(|p| &input[p.name.start..p.name.end] == name);
        match same {
            // Cline assigns into an object: the value changes, the key keeps its first position.
            Some(k) => {
                let old = &mut self.params.items_mut()[first + k];
                old.raw = param.raw;
                old.value = param.value;
            }
            None => {
                self.params.check_room(1, Store::Params, at)?;
                self.params.append(param);
                if let Some(RawBlock::Tool { params, .. }) = self.blocks.items_mut().last_mut() {
                    *params += 1;
                }
            }
        }
        self.changes += 1;
        Ok(())
    }

    fn close_tool(&mut self) {
        self.open = false;
        self.changes += 1;
    }
}
