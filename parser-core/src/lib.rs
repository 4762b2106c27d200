//! A Cline-exact parser of tool-tagged LLM replies: `no_std`, zero dependencies, zero-copy.
//!
//! An LLM streams prose mixed with XML-style tool calls:
//! `I'll read it.<read_file><path>src/a.rs</path></read_file>`. Cline's `parseAssistantMessageV2`
//! cuts that into text and tool-use blocks, marking the unfinished one `partial`. This crate
//! returns byte-for-byte the same blocks (checked against Cline v4.0.10 on 13,953 replies and
//! prefixes), in one pass that stops only at `<` (AVX2 or SSE2 on x86_64, SWAR elsewhere), with
//! tag names looked up in a compile-time perfect hash.
//!
//! - [`parse`] / [`parse_with`]: a whole reply (feature `alloc`, on by default).
//! - [`StreamParser`]: chunk by chunk (`&str` or raw bytes); after every push the blocks equal a
//!   whole parse of the text so far, for work proportional to the chunk, not the reply.
//! - [`fixed`] (feature `heapless`): both, with no allocator at all.
//! - [`Grammar`], [`TagSet`]: your own tool and param names, at compile time or run time.
//! - [`display`]: what Cline's presenter strips from partial blocks before showing them.
//!
//! ```
//! use parser_core::{parse, Block};
//!
//! let reply = parse("Let me look.\n<read_file>\n<path>src/main.rs</path>\n</read_file>");
//! let blocks: Vec<Block> = reply.iter().collect();
//! assert_eq!(blocks[0], Block::Text { content: "Let me look.", partial: false });
//! match blocks[1] {
//!     Block::ToolUse(tool) => {
//!         assert_eq!(tool.name, "read_file");
//!         assert_eq!(tool.param("path"), Some("src/main.rs"));
//!         assert!(!tool.partial);
//!     }
//!     _ => unreachable!(),
//! }
//! ```
//!
//! Values are trimmed as JavaScript's `String.prototype.trim` trims (U+FEFF is whitespace, U+0085
//! is not); [`Param::raw`] gives the untrimmed value, which a file write needs.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]
// With neither `alloc` nor `heapless` there is no block storage: only the tables and helpers remain.
#![cfg_attr(not(any(feature = "alloc", feature = "heapless")), allow(dead_code))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(any(feature = "std", test))]
extern crate std;

#[cfg(feature = "nanorand")]
mod call_id;
pub mod display;
mod engine;
#[cfg(feature = "heapless")]
pub mod fixed;
mod grammar;
#[cfg(all(feature = "alloc", any(test, fuzzing)))]
#[doc(hidden)]
pub mod oracle;
#[cfg(feature = "alloc")]
mod parse;
mod parsed;
mod scan;
mod store;
mod stream;
mod table;
mod trim;
mod utf8;
mod view;

#[cfg(feature = "nanorand")]
pub use call_id::CallId;
#[doc(hidden)]
pub use engine::RawParam;
pub use grammar::{Grammar, CLINE};
#[cfg(feature = "alloc")]
pub use parse::{parse, parse_with, Parsed};
pub use parsed::ParsedIn;
pub use store::Store;
#[doc(hidden)]
pub use store::{RawBlock, Slots};
#[cfg(feature = "alloc")]
pub use stream::StreamParser;
pub use stream::{Progress, PushError};
#[cfg(feature = "alloc")]
pub use table::TagSetBuf;
pub use table::{
    TableError, TagSet, TagTable, CLINE_PARAMS, CLINE_PARAM_NAMES, CLINE_TOOLS, CLINE_TOOL_NAMES, MAX_NAME_LEN,
};
pub use trim::{is_js_whitespace, js_trim};
pub use utf8::{Utf8Error, Utf8ErrorKind};
pub use view::{Block, Blocks, BlocksIter, Param, Params, ParamsIter, ToolUse};

/// A byte range of the input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    pub(crate) const EMPTY: Span = Span { start: 0, end: 0 };

    /// Length in bytes (0 for an inverted range).
    pub const fn len(&self) -> usize {
        self.end.saturating_sub(self.start)
    }

    /// True for an empty range.
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod footprint {
    //! The sizes the README documents for 64-bit targets; this test keeps it honest. (The 32-bit
    //! figures are checked by const assertions in `examples/no_main`, built for thumbv7em.)
    use core::mem::size_of;

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn documented_sizes_on_64_bit() {
        assert_eq!(size_of::<crate::RawBlock>(), 48);
        assert_eq!(size_of::<crate::RawParam>(), 48);
        assert_eq!(size_of::<crate::engine::Engine>(), 144);
        #[cfg(feature = "heapless")]
        assert_eq!(size_of::<crate::fixed::StreamParser<'static, 'static, 8, 16>>(), 1472);
    }
}
