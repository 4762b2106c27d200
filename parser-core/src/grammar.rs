//! A grammar: which names are tools and which are params.

use crate::table::{TagTable, CLINE_PARAMS, CLINE_TOOLS};

/// The tool and param tables a parser recognises. Semantics are Cline's whatever the tables hold:
/// tool tags count only in text, param tags only directly inside a tool.
#[derive(Clone, Copy, Debug)]
pub struct Grammar<'a> {
    pub(crate) tools: TagTable<'a>,
    pub(crate) params: TagTable<'a>,
    /// Longest tag body worth looking at: `/` + the longest name (and `content`, which
    /// `write_to_file` always looks for).
    pub(crate) max_tag_body: usize,
    /// Bit set of the bytes that start some name (tools, params, and `content`).
    name_starts: [u64; 4],
}

impl<'a> Grammar<'a> {
    /// A grammar from a tool table and a param table.
    pub const fn new(tools: TagTable<'a>, params: TagTable<'a>) -> Self {
        let mut longest = tools.max_len();
        if params.max_len() > longest {
            longest = params.max_len();
        }
        if longest < b"content".len() {
            longest = b"content".len();
        }
        let mut name_starts = [0u64; 4];
        let c = b'c';
        name_starts[(c >> 6) as usize] |= 1 << (c & 63);
        let tables = [tools.names(), params.names()];
        let mut t = 0;
        while t < tables.len() {
            let mut i = 0;
            while i < tables[t].len() {
                let b = tables[t][i].as_bytes()[0];
                name_starts[(b >> 6) as usize] |= 1 << (b & 63);
                i += 1;
            }
            t += 1;
        }
        Grammar { tools, params, max_tag_body: longest + 1, name_starts }
    }

    /// Can `b` be the first byte of a tag name?
    #[inline]
    pub(crate) fn may_start_name(&self, b: u8) -> bool {
        self.name_starts[(b >> 6) as usize] & (1 << (b & 63)) != 0
    }

    /// The tool table.
    pub fn tools(&self) -> &TagTable<'a> {
        &self.tools
    }

    /// The param table.
    pub fn params(&self) -> &TagTable<'a> {
        &self.params
    }

    /// Cline v4.0.10's grammar: its 27 tools and 45 params, no MCP tools.
    pub fn cline() -> &'static Grammar<'static> {
        &CLINE
    }
}

/// Cline v4.0.10's grammar (see [`Grammar::cline`]).
pub static CLINE: Grammar<'static> = Grammar::new(CLINE_TOOLS.table(), CLINE_PARAMS.table());
