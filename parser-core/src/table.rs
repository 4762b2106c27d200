//! Tag tables: the tool and param names a parser recognises, behind a static perfect hash.
//!
//! A table is built by a `const fn`, so a table written as a `static` costs nothing at run time,
//! and the very same function builds tables from names only known at run time (Cline adds MCP tool
//! names with `setDynamicToolUseNames`).
//!
//! The hash is "hash and displace" (CHD, as in the phf crate): a name's hash picks a bucket, the
//! bucket's displacement picks the name's slot. Buckets are placed largest first, each trying
//! displacements until its names land in free slots, so building takes about linear time at a
//! slot load of one half. Lookup hashes the candidate once, reads one displacement and one slot,
//! and compares one name: O(1) whatever the number of names; a miss usually fails on the empty
//! slot or the length.

/// Why a table could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableError {
    /// A name is empty, contains `<` or `>`, or starts with `/`: it could never form a tag
    /// `<name>` / `</name>` that the parser's semantics allow. Holds the name's index.
    InvalidName(usize),
    /// A name is longer than [`MAX_NAME_LEN`] bytes. Holds the name's index.
    NameTooLong(usize),
    /// More names than the table can hold (its size must be a power of two, at least 4 × the
    /// number of names), or more than 65,534 names.
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
const SEED_TRIES: u32 = 64;
/// Largest displacement tried for one bucket (kept below the high bit, which marks scratch data).
const MAX_DISPLACEMENT: u16 = 0x7FFF;

/// Bytes `at..at + N` of `name` as a little-endian number (`N` is 4 or 8; the caller keeps it in
/// bounds). One load at run time, and usable in `const fn`.
#[inline(always)]
const fn load<const N: usize>(name: &[u8], at: usize) -> u64 {
    match name.split_at(at).1.first_chunk::<N>() {
        Some(c) => {
            let mut w = [0u8; 8];
            let mut i = 0;
            while i < N {
                w[i] = c[i];
                i += 1;
            }
            u64::from_le_bytes(w)
        }
        None => 0,
    }
}

/// One round: a multiply that carries every input bit into the high half.
#[inline(always)]
const fn mix(h: u64, w: u64) -> u64 {
    (h ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29)
}

/// The 64-bit key a seed stands for: the seed's bits spread over the whole word (splitmix64's
/// finaliser), so that the state the name's bytes are mixed into differs from seed to seed in
/// every bit.
const fn key(seed: u32) -> u64 {
    let mut z = (seed as u64).wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The name's hash under a seed's [`key`]: the name's bytes a word (8 bytes) at a time, the last
/// word overlapping the one before it (a name shorter than 8 bytes is one word made of two
/// overlapping halves, or of its first, middle and last byte), then its length. So a tag name of
/// up to 16 bytes costs one or two multiplies, where a byte-at-a-time hash costs one per byte.
///
/// The length goes in after the bytes, not with the seed before them: XORed into the starting
/// state, a length difference could be cancelled by a first word that differs in the same bits,
/// whatever the seed (`uuuuuuuuuu` and `tuuuuuuuuuu` hashed alike under every seed, so no table
/// held both). After the bytes, two names' states differ by a seed-dependent amount, and one seed
/// out of many separates them.
#[inline(always)]
const fn hash(key: u64, name: &[u8]) -> u32 {
    let n = name.len();
    let mut h = key;
    if n >= 8 {
        let mut i = 0;
        while i + 8 < n {
            h = mix(h, load::<8>(name, i));
            i += 8;
        }
        h = mix(h, load::<8>(name, n - 8));
    } else if n >= 4 {
        h = mix(h, load::<4>(name, 0) | load::<4>(name, n - 4) << 32);
    } else if n > 0 {
        h = mix(h, name[0] as u64 | (name[n / 2] as u64) << 8 | (name[n - 1] as u64) << 16);
    }
    let h = (h ^ n as u64 ^ (h >> 32)).wrapping_mul(0xD6E8_FEB8_6659_FD93);
    (h ^ (h >> 32)) as u32
}

/// The slot of a name with hash `h` in a bucket displaced by `d` (before masking). Uses the high
/// bits of `h`; the bucket uses the low ones.
#[inline(always)]
const fn displaced(h: u32, d: u16) -> usize {
    let x = (h.rotate_right(16) ^ (d as u32).wrapping_mul(0x9E37_79B1)).wrapping_mul(0x85EB_CA6B);
    (x ^ (x >> 15)) as usize
}

/// Number of buckets of a table of `size` entries: half of it, but no more than a `u16` can
/// index (the builder lists buckets in `u16` work space).
#[inline(always)]
const fn buckets(size: usize) -> usize {
    if size / 2 < 1 << 16 {
        size / 2
    } else {
        1 << 16
    }
}

/// Byte equality usable in `const fn`.
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

/// The lengths of a table's names: the longest, and which occur, so that a candidate of a length
/// no name has is turned away before it is hashed (as `<u8>` in code, or `<a>` in prose).
#[derive(Clone, Copy, Debug)]
struct Lengths {
    max: usize,
    /// Bit `min(len, 127)` is set for every name's length.
    present: u128,
}

impl Lengths {
    /// Might a name of `len` bytes be in the table? (False for 0 and for lengths no name has.)
    #[inline(always)]
    const fn admit(&self, len: usize) -> bool {
        let bit = if len < 127 { len } else { 127 };
        self.present >> bit & 1 != 0
    }
}

/// Check every name; returns their lengths.
const fn validate(names: &[&str]) -> Result<Lengths, TableError> {
    let mut max_len = 0;
    let mut present = 0u128;
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
        present |= 1 << if n.len() < 127 { n.len() } else { 127 };
        i += 1;
    }
    Ok(Lengths { max: max_len, present })
}

/// Build a table of `S = table.len()` entries (a power of two, at least 4 × the names): the first
/// half holds one displacement per bucket (up to 65,536 buckets), the second half the slots (name
/// index + 1, 0 = free).
/// `order` and `scratch` are work space of `S` entries each. Duplicate names share one slot, as
/// they do in Cline's `Map`. Returns (seed, the names' lengths).
const fn build(
    names: &[&str],
    table: &mut [u16],
    order: &mut [u16],
    scratch: &mut [u16],
) -> Result<(u32, Lengths), TableError> {
    let size = table.len();
    let n = names.len();
    if n >= u16::MAX as usize || size < 4 || !size.is_power_of_two() || n * 4 > size {
        return Err(TableError::TooManyNames);
    }
    let lengths = match validate(names) {
        Ok(m) => m,
        Err(e) => return Err(e),
    };
    let half = size / 2; // where the slots start, and how many there are
    let nb = buckets(size);
    let mut seed = 0;
    'seeds: while seed < SEED_TRIES {
        let seed_key = key(seed);
        // 1. Bucket sizes, then each bucket's first position in `order` (in `scratch[..half]`).
        let mut k = 0;
        while k < size {
            table[k] = 0;
            scratch[k] = 0;
            k += 1;
        }
        let mut i = 0;
        while i < n {
            let b = hash(seed_key, names[i].as_bytes()) as usize & (nb - 1);
            table[b] += 1;
            i += 1;
        }
        let mut b = 0;
        let mut at = 0u16;
        let mut largest = 0;
        while b < nb {
            scratch[b] = at;
            at += table[b];
            if table[b] > largest {
                largest = table[b];
            }
            table[b] = 0; // now: how many of the bucket are in `order`
            b += 1;
        }
        let mut i = 0;
        while i < n {
            let b = hash(seed_key, names[i].as_bytes()) as usize & (nb - 1);
            order[scratch[b] as usize + table[b] as usize] = i as u16;
            table[b] += 1;
            i += 1;
        }
        // 2. Buckets from the largest down (their list in `scratch[half..]`).
        let mut listed = 0;
        let mut want = largest;
        while want > 0 {
            let mut b = 0;
            while b < nb {
                if table[b] == want {
                    scratch[half + listed] = b as u16;
                    listed += 1;
                }
                b += 1;
            }
            want -= 1;
        }
        // 3. Place each bucket at the first displacement that puts all its names in free slots.
        //    The bucket sizes in `table[..half]` become displacements as buckets are placed.
        let mut k = half;
        while k < size {
            table[k] = 0;
            k += 1;
        }
        let mut l = 0;
        while l < listed {
            let b = scratch[half + l] as usize;
            let (first, count) = (scratch[b] as usize, table[b] as usize);
            let mut d: u16 = 0;
            loop {
                if d > MAX_DISPLACEMENT {
                    seed += 1;
                    continue 'seeds;
                }
                let mut placed = 0;
                while placed < count {
                    let i = order[first + placed] as usize;
                    let name = names[i].as_bytes();
                    let slot = half + (displaced(hash(seed_key, name), d) & (half - 1));
                    if table[slot] == 0 {
                        table[slot] = i as u16 + 1;
                    } else if !bytes_eq(names[table[slot] as usize - 1].as_bytes(), name) {
                        break; // taken by another name: undo and try the next displacement
                    }
                    placed += 1;
                }
                if placed == count {
                    break;
                }
                let mut u = 0;
                while u < placed {
                    let i = order[first + u] as usize;
                    let slot = half + (displaced(hash(seed_key, names[i].as_bytes()), d) & (half - 1));
                    if table[slot] == i as u16 + 1 {
                        table[slot] = 0;
                    }
                    u += 1;
                }
                d += 1;
            }
            table[b] = d;
            l += 1;
        }
        // Buckets that got no name keep displacement 0 (their size, 0, was never overwritten).
        return Ok((seed, lengths));
    }
    Err(TableError::NoPerfectSeed)
}

/// `a == b` for tag names, inlined: a name is short, and comparing it as one or two (possibly
/// overlapping) words beats the call to `memcmp` that `==` on slices makes.
#[inline(always)]
pub(crate) fn same_name(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let w8 = |s: &[u8], at: usize| {
        let mut w = [0; 8];
        w.copy_from_slice(&s[at..at + 8]);
        u64::from_le_bytes(w)
    };
    let w4 = |s: &[u8], at: usize| {
        let mut w = [0; 4];
        w.copy_from_slice(&s[at..at + 4]);
        u32::from_le_bytes(w)
    };
    match n {
        8..=16 => w8(a, 0) == w8(b, 0) && w8(a, n - 8) == w8(b, n - 8),
        4..=7 => w4(a, 0) == w4(b, 0) && w4(a, n - 4) == w4(b, n - 4),
        0..=3 => a.iter().zip(b).all(|(x, y)| x == y),
        _ => a == b,
    }
}

/// A borrowed view of a built table: what the parser reads.
#[derive(Clone, Copy, Debug)]
pub struct TagTable<'a> {
    names: &'a [&'a str],
    /// Displacements (first half) and slots (second half: index + 1 into `names`, 0 = free).
    table: &'a [u16],
    /// The seed's [`key`], computed once for the lookups.
    key: u64,
    lengths: Lengths,
    /// `buckets(table.len()) - 1` and `table.len() / 2`, computed once for the lookups.
    bucket_mask: usize,
    half: usize,
}

impl<'a> TagTable<'a> {
    const fn new(names: &'a [&'a str], table: &'a [u16], seed: u32, lengths: Lengths) -> Self {
        let bucket_mask = buckets(table.len()).saturating_sub(1);
        TagTable { names, table, key: key(seed), lengths, bucket_mask, half: table.len() / 2 }
    }

    /// The slot (0 = free, else index + 1 into `names`) where `name` would be: one hash, one
    /// displacement, one slot.
    #[inline(always)]
    fn slot(&self, name: &[u8]) -> u16 {
        let h = hash(self.key, name);
        let d = self.table[h as usize & self.bucket_mask];
        self.table[self.half + (displaced(h, d) & (self.half.wrapping_sub(1)))]
    }

    /// Is `name` (the bytes between `<` or `</` and `>`) one of this table's names?
    #[inline(never)]
    pub fn contains(&self, name: &[u8]) -> bool {
        if !self.lengths.admit(name.len()) {
            return false;
        }
        let slot = self.slot(name);
        slot != 0 && same_name(self.names[slot as usize - 1].as_bytes(), name)
    }

    /// The index in [`TagTable::names`] of `name`, if it is one of this table's names: the perfect
    /// hash's slot, found with the same single probe as [`TagTable::contains`].
    #[inline]
    pub fn index(&self, name: &[u8]) -> Option<u32> {
        if !self.lengths.admit(name.len()) {
            return None;
        }
        let slot = self.slot(name);
        (slot != 0 && same_name(self.names[slot as usize - 1].as_bytes(), name)).then(|| u32::from(slot) - 1)
    }

    /// The names, in the order given (duplicates included).
    pub const fn names(&self) -> &'a [&'a str] {
        self.names
    }

    /// Length in bytes of the longest name (0 for an empty table).
    pub const fn max_len(&self) -> usize {
        self.lengths.max
    }
}

/// A table that owns its array of `S` entries: `S` is a power of two, at least 4 × the number of
/// names (half of it holds bucket displacements, half the slots, at a load of at most one half);
/// 2 bytes an entry. Build it at compile time with [`TagSet::new`], or at run time with
/// [`TagSet::try_new`]; both run the same `const fn`.
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
    table: [u16; S],
    seed: u32,
    lengths: Lengths,
}

impl<'a, const S: usize> TagSet<'a, S> {
    /// Build at compile time; an invalid table is a compile-time error (a panic in const evaluation).
    pub const fn new(names: &'a [&'a str]) -> Self {
        match Self::try_new(names) {
            Ok(t) => t,
            Err(TableError::InvalidName(_)) => panic!("tag name is empty, contains '<' or '>', or starts with '/'"),
            Err(TableError::NameTooLong(_)) => panic!("tag name is longer than MAX_NAME_LEN"),
            Err(TableError::TooManyNames) => {
                panic!("S must be a power of two and at least 4 times the number of names")
            }
            Err(TableError::NoPerfectSeed) => panic!("no perfect-hash seed found; use a larger S"),
        }
    }

    /// Build from names known only at run time.
    pub const fn try_new(names: &'a [&'a str]) -> Result<Self, TableError> {
        let mut table = [0u16; S];
        let (mut order, mut scratch) = ([0u16; S], [0u16; S]);
        match build(names, &mut table, &mut order, &mut scratch) {
            Ok((seed, lengths)) => Ok(TagSet { names, table, seed, lengths }),
            Err(e) => Err(e),
        }
    }

    /// The view the parser reads.
    pub const fn table(&self) -> TagTable<'_> {
        TagTable::new(self.names, &self.table, self.seed, self.lengths)
    }
}

/// A run-time table sized to fit (alloc only): 16 bytes a name at most.
#[cfg(feature = "alloc")]
#[derive(Clone, Debug)]
pub struct TagSetBuf<'a> {
    names: &'a [&'a str],
    table: alloc::vec::Vec<u16>,
    seed: u32,
    lengths: Lengths,
}

#[cfg(feature = "alloc")]
impl<'a> TagSetBuf<'a> {
    /// Build a table of up to 65,534 names in about linear time, e.g. Cline's tools plus the
    /// tool names of every MCP server.
    pub fn try_new(names: &'a [&'a str]) -> Result<Self, TableError> {
        let mut size = (names.len() * 4).next_power_of_two().max(16);
        loop {
            let mut table = alloc::vec![0u16; size];
            let (mut order, mut scratch) = (alloc::vec![0u16; size], alloc::vec![0u16; size]);
            match build(names, &mut table, &mut order, &mut scratch) {
                Ok((seed, lengths)) => return Ok(TagSetBuf { names, table, seed, lengths }),
                Err(TableError::NoPerfectSeed) if size < (1 << 19) => size *= 2,
                Err(e) => return Err(e),
            }
        }
    }

    /// The view the parser reads.
    pub fn table(&self) -> TagTable<'_> {
        TagTable::new(self.names, &self.table, self.seed, self.lengths)
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

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::string::String;
    use alloc::vec::Vec;

    /// 100 names at compile time (this failed to build with a plain single-hash table).
    static HUNDRED: TagSet<'static, 512> = TagSet::new(&[
        "t00", "t01", "t02", "t03", "t04", "t05", "t06", "t07", "t08", "t09", "t10", "t11", "t12", "t13", "t14", "t15",
        "t16", "t17", "t18", "t19", "t20", "t21", "t22", "t23", "t24", "t25", "t26", "t27", "t28", "t29", "t30", "t31",
        "t32", "t33", "t34", "t35", "t36", "t37", "t38", "t39", "t40", "t41", "t42", "t43", "t44", "t45", "t46", "t47",
        "t48", "t49", "t50", "t51", "t52", "t53", "t54", "t55", "t56", "t57", "t58", "t59", "t60", "t61", "t62", "t63",
        "t64", "t65", "t66", "t67", "t68", "t69", "t70", "t71", "t72", "t73", "t74", "t75", "t76", "t77", "t78", "t79",
        "t80", "t81", "t82", "t83", "t84", "t85", "t86", "t87", "t88", "t89", "t90", "t91", "t92", "t93", "t94", "t95",
        "t96", "t97", "t98", "t99",
    ]);

    fn check_exact(t: &TagTable<'_>, names: &[&str]) {
        for n in names {
            assert!(t.contains(n.as_bytes()), "{n} missing");
            let mut other = String::from(*n);
            other.push('x');
            assert!(
                !names.contains(&other.as_str()) && !t.contains(other.as_bytes()) || names.contains(&other.as_str())
            );
        }
        for miss in ["", "zz", "t100", "T00", "t0", "mcp__none"] {
            assert_eq!(t.contains(miss.as_bytes()), names.contains(&miss), "{miss:?}");
        }
    }

    #[test]
    fn a_hundred_names_at_compile_time_are_all_found() {
        let names = HUNDRED.table().names();
        assert_eq!(names.len(), 100);
        check_exact(&HUNDRED.table(), names);
    }

    #[test]
    fn large_run_time_tables_build_and_find_every_name() {
        for count in [1, 7, 1_000, 20_000, 65_534] {
            let owned: Vec<String> = (0..count).map(|i| format!("mcp__server{}__tool_{i}", i % 97)).collect();
            let names: Vec<&str> = owned.iter().map(String::as_str).collect();
            let set = TagSetBuf::try_new(&names).unwrap_or_else(|e| panic!("{count} names: {e}"));
            let t = set.table();
            let missing: Vec<usize> = (0..names.len()).filter(|&i| !t.contains(names[i].as_bytes())).collect();
            assert!(
                missing.is_empty(),
                "{count} names: {} missing, first {:?}, size {}",
                missing.len(),
                &missing[..missing.len().min(5)],
                t.table.len()
            );
            assert!(!t.contains(b"mcp__server1__tool_65535"));
            assert!(t.table.len() <= 8 * count.max(4), "{count} names took {} entries", t.table.len());
        }
    }

    #[test]
    fn same_name_is_slice_equality_at_every_length_and_difference() {
        for len in 0..=40usize {
            let a: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(same_name(&a, &a.clone()));
            assert!(!same_name(&a, &a[..len.saturating_sub(1)]) || len == 0);
            for at in 0..len {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!same_name(&a, &b), "len {len}, byte {at}");
            }
        }
    }

    #[test]
    fn names_are_found_at_every_length_up_to_the_longest_allowed() {
        let owned: Vec<String> = (1..=MAX_NAME_LEN).step_by(7).chain([126, 127, 128]).map(|n| "n".repeat(n)).collect();
        let names: Vec<&str> = owned.iter().map(String::as_str).collect();
        let set = TagSetBuf::try_new(&names).unwrap();
        let t = set.table();
        for len in 0..=MAX_NAME_LEN + 2 {
            let candidate = "n".repeat(len);
            assert_eq!(t.contains(candidate.as_bytes()), names.contains(&candidate.as_str()), "length {len}");
            assert_eq!(t.index(candidate.as_bytes()).is_some(), names.contains(&candidate.as_str()), "length {len}");
            // Same length, other bytes: the length filter lets it through, the compare does not.
            assert!(!t.contains("m".repeat(len).as_bytes()), "length {len}");
        }
        assert_eq!(t.max_len(), MAX_NAME_LEN);
    }

    /// The fuzzer's find (CI stop 30): `uuuuuuuuuu` and `tuuuuuuuuuu` hashed alike under every
    /// seed, the length XORed into the starting state cancelled by the first byte, so no table of
    /// any size held both. Every such pair of lengths up to 24, with several fillers, must now
    /// get the smallest table and be told apart.
    #[test]
    fn names_whose_first_byte_cancels_their_length_difference_get_a_table() {
        for n in 1..=24usize {
            for m in n + 1..=24 {
                for fill in [b'u', b'a', b'_', b'0'] {
                    let first = b'a' | 0x40; // a letter, so that first ^ (n ^ m) stays printable
                    let other = first ^ (n ^ m) as u8;
                    if other == b'<' || other == b'>' || other == b'/' || other >= 0x80 {
                        continue;
                    }
                    let mut a = alloc::vec![fill; n];
                    a[0] = first;
                    let mut b = alloc::vec![fill; m];
                    b[0] = other;
                    let (a, b) = (String::from_utf8(a).unwrap(), String::from_utf8(b).unwrap());
                    let names = [a.as_str(), b.as_str()];
                    let set = TagSet::<16>::try_new(&names).unwrap_or_else(|e| panic!("{names:?}: {e}"));
                    check_exact(&set.table(), &names);
                }
            }
        }
        let fuzzed = ["ONuuuuuuuu", "uuuuuuuuuuuuu", "uuuuuuuuuu", "uuuuuuuuuuuuu", "uuuuuuuuuu", "tuuuuuuuuuu"];
        let set = TagSetBuf::try_new(&fuzzed).unwrap();
        assert_eq!(set.table().table.len(), 32, "the smallest table holds them");
        check_exact(&set.table(), &fuzzed);
    }

    #[test]
    fn duplicates_share_a_slot() {
        let t: TagSet<'static, 16> = TagSet::new(&["a", "b", "a", "b"]);
        check_exact(&t.table(), &["a", "b"]);
    }

    #[test]
    fn every_table_error_is_reported() {
        assert_eq!(TagSet::<16>::try_new(&["ok", ""]).err(), Some(TableError::InvalidName(1)));
        assert_eq!(TagSet::<16>::try_new(&["a<b"]).err(), Some(TableError::InvalidName(0)));
        assert_eq!(TagSet::<16>::try_new(&["a>b"]).err(), Some(TableError::InvalidName(0)));
        assert_eq!(TagSet::<16>::try_new(&["/close"]).err(), Some(TableError::InvalidName(0)));
        let long = "x".repeat(MAX_NAME_LEN + 1);
        assert_eq!(TagSetBuf::try_new(&[long.as_str()]).err(), Some(TableError::NameTooLong(0)));
        assert_eq!(TagSet::<16>::try_new(&["a", "b", "c", "d", "e"]).err(), Some(TableError::TooManyNames));
        assert_eq!(TagSet::<24>::try_new(&["a"]).err(), Some(TableError::TooManyNames), "not a power of two");
        let too_many: Vec<&str> = core::iter::repeat_n("n", 65_535).collect();
        assert_eq!(TagSetBuf::try_new(&too_many).err(), Some(TableError::TooManyNames));
        // NoPerfectSeed cannot be provoked with distinct names at a load of one half; it stays
        // in the enum for tables built from adversarial hashes.
    }
}
