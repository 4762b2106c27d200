//! Tag tables: the tool and param names a parser recognises, behind a static perfect hash.
//!
//! A table is built by a `const fn`, so a table written as a `static` costs nothing at run time,
//! and the very same function builds tables from names only known at run time (Cline adds MCP tool
//! names with `setDynamicToolUseNames`). Lookup hashes the candidate once and compares one entry:
//! O(1) whatever the number of names, and a miss usually fails on the empty slot or the length.

/// Why a table could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableError {
    /// A name is empty, contains `<` or `>`, or starts with `/`: it could never form a tag
    /// `<name>` / `</name>` that the parser's semantics allow. Holds the name's index.
    InvalidName(usize),
    /// A name is longer than [`MAX_NAME_LEN`] bytes. Holds the name's index.
    NameTooLong(usize),
    /// More names than the slot array can hold at a load of one half, or more than 65,535.
    TooManyNames,
    /// No seed was found that maps every name to its own slot; a larger slot array will do.
    NoPerfectSeed,
}

impl core::fmt::Display for TableError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            TableError::InvalidName(i) => write!(f, "tag name #{i} is empty, contains '<' or '>', or starts with '/'"),
            TableError::NameTooLong(i) => write!(f, "tag name #{i} is longer than {MAX_NAME_LEN} bytes"),
            TableError::TooManyNames => {
                f.write_str("too many tag names for the slot array (keep the load at most one half)")
            }
            TableError::NoPerfectSeed => f.write_str("no perfect-hash seed found; use a larger slot array"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for TableError {}

/// The longest tag name a table accepts, in bytes.
pub const MAX_NAME_LEN: usize = 128;

/// How many seeds the builder tries before giving up.
const SEED_TRIES: u32 = 100_000;

/// FNV-1a over the name, from a seed; the slot is taken from the mixed high bits.
#[inline(always)]
const fn hash(seed: u32, name: &[u8]) -> u32 {
    let mut h = 0x811c_9dc5 ^ seed;
    let mut i = 0;
    while i < name.len() {
        h = (h ^ name[i] as u32).wrapping_mul(0x0100_0193);
        i += 1;
    }
    h ^ (h >> 16)
}

const fn bytes_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Fill `slots` (length a power of two) with a perfect hash of `names`; returns (seed, max_len).
/// Duplicate names share one slot, as they do in Cline's `Map`.
const fn build(names: &[&str], slots: &mut [u16]) -> Result<(u32, usize), TableError> {
    if names.len() > u16::MAX as usize || names.len() * 2 > slots.len() || !slots.len().is_power_of_two() {
        return Err(TableError::TooManyNames);
    }
    let mut max_len = 0;
    let mut i = 0;
    while i < names.len() {
        let n = names[i].as_bytes();
        if n.is_empty() || n[0] == b'/' {
            return Err(TableError::InvalidName(i));
        }
        if n.len() > MAX_NAME_LEN {
            return Err(TableError::NameTooLong(i));
        }
        let mut j = 0;
        while j < n.len() {
            if n[j] == b'<' || n[j] == b'>' {
                return Err(TableError::InvalidName(i));
            }
            j += 1;
        }
        if n.len() > max_len {
            max_len = n.len();
        }
        i += 1;
    }
    let mask = slots.len() - 1;
    let mut seed = 0;
    'seeds: while seed < SEED_TRIES {
        let mut k = 0;
        while k < slots.len() {
            slots[k] = 0;
            k += 1;
        }
        let mut i = 0;
        while i < names.len() {
            let n = names[i].as_bytes();
            let slot = hash(seed, n) as usize & mask;
            if slots[slot] != 0 {
                if !bytes_eq(names[slots[slot] as usize - 1].as_bytes(), n) {
                    seed += 1;
                    continue 'seeds;
                }
            } else {
                slots[slot] = i as u16 + 1;
            }
            i += 1;
        }
        return Ok((seed, max_len));
    }
    Err(TableError::NoPerfectSeed)
}

/// A borrowed view of a built table: what the parser reads.
#[derive(Clone, Copy, Debug)]
pub struct TagTable<'a> {
    names: &'a [&'a str],
    /// Index + 1 into `names`, 0 for an empty slot. Length is a power of two.
    slots: &'a [u16],
    seed: u32,
    max_len: usize,
}

impl<'a> TagTable<'a> {
    /// Is `name` (the bytes between `<` or `</` and `>`) one of this table's names?
    #[inline]
    pub fn contains(&self, name: &[u8]) -> bool {
        if name.len() > self.max_len || name.is_empty() {
            return false;
        }
        let slot = self.slots[hash(self.seed, name) as usize & (self.slots.len() - 1)];
        slot != 0 && self.names[slot as usize - 1].as_bytes() == name
    }

    /// The names, in the order given (duplicates included).
    pub const fn names(&self) -> &'a [&'a str] {
        self.names
    }

    /// Length in bytes of the longest name (0 for an empty table).
    pub const fn max_len(&self) -> usize {
        self.max_len
    }
}

/// A table that owns its slot array of `S` entries (a power of two, at least twice the number of
/// names). Build it at compile time with [`TagSet::new`], or at run time with [`TagSet::try_new`];
/// both run the same `const fn`.
///
/// ```
/// use parser_core::{Grammar, TagSet, CLINE_PARAMS};
/// static TOOLS: TagSet<'static, 16> = TagSet::new(&["read_file", "my_mcp_tool"]);
/// static GRAMMAR: Grammar<'static> = Grammar::new(TOOLS.table(), CLINE_PARAMS.table());
/// let blocks = parser_core::parse_with("<my_mcp_tool><path>x</path></my_mcp_tool>", &GRAMMAR);
/// assert_eq!(blocks.len(), 1);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct TagSet<'a, const S: usize> {
    names: &'a [&'a str],
    slots: [u16; S],
    seed: u32,
    max_len: usize,
}

impl<'a, const S: usize> TagSet<'a, S> {
    /// Build at compile time; an invalid table is a compile-time error (a panic in const evaluation).
    pub const fn new(names: &'a [&'a str]) -> Self {
        match Self::try_new(names) {
            Ok(t) => t,
            Err(TableError::InvalidName(_)) => panic!("tag name is empty, contains '<' or '>', or starts with '/'"),
            Err(TableError::NameTooLong(_)) => panic!("tag name is longer than MAX_NAME_LEN"),
            Err(TableError::TooManyNames) => {
                panic!("slot count S must be a power of two and at least twice the number of names")
            }
            Err(TableError::NoPerfectSeed) => panic!("no perfect-hash seed found; use a larger S"),
        }
    }

    /// Build from names known only at run time.
    pub const fn try_new(names: &'a [&'a str]) -> Result<Self, TableError> {
        let mut slots = [0u16; S];
        match build(names, &mut slots) {
            Ok((seed, max_len)) => Ok(TagSet { names, slots, seed, max_len }),
            Err(e) => Err(e),
        }
    }

    /// The view the parser reads.
    pub const fn table(&self) -> TagTable<'_> {
        TagTable { names: self.names, slots: &self.slots, seed: self.seed, max_len: self.max_len }
    }
}

/// A run-time table whose slot array is sized to fit (alloc only).
#[cfg(feature = "alloc")]
#[derive(Clone, Debug)]
pub struct TagSetBuf<'a> {
    names: &'a [&'a str],
    slots: alloc::vec::Vec<u16>,
    seed: u32,
    max_len: usize,
}

#[cfg(feature = "alloc")]
impl<'a> TagSetBuf<'a> {
    /// Build a table of any size (up to 65,535 names), e.g. Cline's tools plus MCP tool names.
    pub fn try_new(names: &'a [&'a str]) -> Result<Self, TableError> {
        let mut size = (names.len() * 4).next_power_of_two().max(16);
        loop {
            let mut slots = alloc::vec![0u16; size];
            match build(names, &mut slots) {
                Ok((seed, max_len)) => return Ok(TagSetBuf { names, slots, seed, max_len }),
                Err(TableError::NoPerfectSeed) if size < (1 << 20) => size *= 2,
                Err(e) => return Err(e),
            }
        }
    }

    /// The view the parser reads.
    pub fn table(&self) -> TagTable<'_> {
        TagTable { names: self.names, slots: &self.slots, seed: self.seed, max_len: self.max_len }
    }
}

/// The 27 tool names of Cline v4.0.10.
pub const CLINE_TOOL_NAMES: [&str; 27] = [
    "ask_followup_question",
    "attempt_completion",
    "execute_command",
    "replace_in_file",
    "read_file",
    "write_to_file",
    "search_files",
    "list_files",
    "list_code_definition_names",
    "browser_action",
    "use_mcp_tool",
    "access_mcp_resource",
    "load_mcp_documentation",
    "new_task",
    "plan_mode_respond",
    "act_mode_respond",
    "focus_chain",
    "web_fetch",
    "web_search",
    "condense",
    "summarize_task",
    "report_bug",
    "new_rule",
    "apply_patch",
    "generate_explanation",
    "use_skill",
    "use_subagents",
];

/// The 45 param names of Cline v4.0.10.
pub const CLINE_PARAM_NAMES: [&str; 45] = [
    "command",
    "requires_approval",
    "path",
    "absolutePath",
    "content",
    "diff",
    "regex",
    "file_pattern",
    "recursive",
    "action",
    "url",
    "coordinate",
    "text",
    "query",
    "allowed_domains",
    "blocked_domains",
    "prompt",
    "server_name",
    "tool_name",
    "arguments",
    "uri",
    "question",
    "options",
    "response",
    "result",
    "context",
    "title",
    "what_happened",
    "steps_to_reproduce",
    "api_request_output",
    "additional_context",
    "needs_more_exploration",
    "task_progress",
    "timeout",
    "input",
    "from_ref",
    "to_ref",
    "skill_name",
    "prompt_1",
    "prompt_2",
    "prompt_3",
    "prompt_4",
    "prompt_5",
    "start_line",
    "end_line",
];

/// Cline v4.0.10's tool table.
pub static CLINE_TOOLS: TagSet<'static, 128> = TagSet::new(&CLINE_TOOL_NAMES);
/// Cline v4.0.10's param table.
pub static CLINE_PARAMS: TagSet<'static, 256> = TagSet::new(&CLINE_PARAM_NAMES);
