//! The SEARCH/REPLACE engine behind `replace_in_file`: Cline v4.0.10's `constructNewFileContent`
//! (the default "v1" algorithm its handler calls, with `isFinal = true`), as a pure function from
//! (file text, diff text) to the new file text — byte for byte the same result, except where
//! Cline's result silently loses or invents content: there [`apply`] refuses with a
//! [`DiffError`] that [`DiffError::is_refusal`] marks, and the file is left as it was.
//!
//! A diff is one or more blocks:
//!
//! ```text
//! ------- SEARCH
//! exact lines to find
//! =======
//! lines to put there
//! +++++++ REPLACE
//! ```
//!
//! Markers are whole lines: 3+ `-` (or `<`) then ` SEARCH`, 3+ `=`, 3+ `+` (or `>`) then
//! ` REPLACE`, the first and last optionally followed by `>`; anything else on the line
//! (trailing spaces, a `\r`) makes it an ordinary line, as in Cline. Each SEARCH part is found,
//! in Cline's order: exactly, from the end of the previous block's match; line by line with
//! JavaScript-trimmed lines; by its first and last lines (trimmed) as anchors; exactly anywhere
//! from the file's start (a block given out of order). An empty SEARCH part creates an empty
//! file's content. The last block may lack its `+++++++ REPLACE`.
//!
//! ```
//! use agent_min::run::tools::diff::apply;
//! let diff = "------- SEARCH\nb\n=======\nB\n+++++++ REPLACE";
//! assert_eq!(apply("a\nb\nc\n", diff).unwrap(), "a\nB\nc\n");
//! ```

use std::fmt;

use parser_core::{is_js_whitespace, js_trim};

/// Why a diff was not applied: one of Cline's own errors (same text), or a refusal where
/// Cline would silently lose or invent content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffError {
    /// Cline: an empty SEARCH part on a file that is not empty.
    EmptySearch,
    /// Cline: a SEARCH part matched nothing (`search` as accumulated, one `\n` per line).
    NoMatch {
        /// The SEARCH text.
        search: String,
    },
    /// Cline: a `+++++++ REPLACE` marker with no `=======` before it in its block.
    Malformed {
        /// The SEARCH text accumulated so far.
        search: String,
    },
    /// Refused: the diff's last line starts with `- + < > =`, sits inside a block never closed,
    /// and is not a marker fragment; Cline drops it silently.
    DroppedLastLine {
        /// The line.
        line: String,
    },
    /// Refused: a SEARCH marker inside a block; Cline silently restarts or drops that block.
    NestedSearch {
        /// 1-based block number of the block interrupted.
        block: usize,
    },
    /// Refused: a second `=======` inside REPLACE; Cline drops that line from the replacement.
    SeparatorInReplace {
        /// 1-based block number.
        block: usize,
    },
    /// Refused: the diff ends inside a SEARCH part; Cline ignores the block and reports success.
    OpenSearch {
        /// 1-based block number.
        block: usize,
    },
    /// Refused: no block at all; Cline leaves the file as it was and reports success.
    NoBlocks,
    /// Refused: two blocks match overlapping (or the same) text; Cline applies both, duplicating
    /// or losing text.
    Overlap {
        /// 1-based number of the later block in the file.
        block: usize,
    },
    /// Refused: a SEARCH of only whitespace matched the end of a non-empty file, where Cline
    /// would append the REPLACE text.
    WhitespaceSearchAtEnd {
        /// 1-based block number.
        block: usize,
    },
    /// Refused: finding this block's SEARCH part took the diff past its bound on searching
    /// ([`apply`]): a block that is not after the one before it is looked for in the whole file
    /// again, so many such blocks cost the file's length each (Cline searches on).
    TooMuchSearching {
        /// 1-based block number.
        block: usize,
    },
}

impl DiffError {
    /// Whether this is one of our refusals (a documented difference from Cline) rather than an
    /// error Cline raises too.
    pub fn is_refusal(&self) -> bool {
        !matches!(self, DiffError::EmptySearch | DiffError::NoMatch { .. } | DiffError::Malformed { .. })
    }
}

const CLOSE_ADVICE: &str = "The file was not changed. End every block with its own +++++++ REPLACE line, then retry.";

impl fmt::Display for DiffError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let trim_end = |s: &str| s.trim_end_matches(is_js_whitespace).to_string();
        match self {
            DiffError::EmptySearch => f.write_str(
                "Empty SEARCH block detected with non-empty file. This usually indicates a malformed SEARCH marker.\nPlease ensure your SEARCH marker follows the correct format:\n- Use '------- SEARCH' (7+ dashes + space + SEARCH)\n",
            ),
            DiffError::NoMatch { search } => {
                write!(f, "The SEARCH block:\n{}\n...does not match anything in the file.", trim_end(search))
            }
            DiffError::Malformed { search } => write!(f, "The SEARCH block:\n{}\n...is malformatted.", trim_end(search)),
            DiffError::DroppedLastLine { line } => write!(
                f,
                "The diff's last line {line:?} is inside a SEARCH/REPLACE block that was never closed, and a last line starting with -, +, <, > or = would be taken for an unfinished marker and lost. {CLOSE_ADVICE}"
            ),
            DiffError::NestedSearch { block } => write!(
                f,
                "SEARCH/REPLACE block {block} contains another SEARCH marker before its +++++++ REPLACE marker, so that block would be lost. {CLOSE_ADVICE}"
            ),
            DiffError::SeparatorInReplace { block } => write!(
                f,
                "The REPLACE part of block {block} contains a second ======= line; it would be dropped from the replacement. The file was not changed. Use exactly one ======= per block, then retry."
            ),
            DiffError::OpenSearch { block } => write!(
                f,
                "The diff ends inside the SEARCH part of block {block}: it has no ======= and no REPLACE part, so nothing of it could be applied. {CLOSE_ADVICE}"
            ),
            DiffError::NoBlocks => f.write_str(
                "The diff contains no SEARCH/REPLACE block, so nothing would change. Each block must be:\n------- SEARCH\n[exact content to find]\n=======\n[new content to replace with]\n+++++++ REPLACE\nwith each marker alone on its line (no trailing spaces). The file was not changed.",
            ),
            DiffError::Overlap { block } => write!(
                f,
                "SEARCH/REPLACE block {block} matches text that another block of this diff also matches, so applying both would duplicate or lose text. The file was not changed. Give each part of the file in one block only, in file order, then retry."
            ),
            DiffError::WhitespaceSearchAtEnd { block } => write!(
                f,
                "The SEARCH part of block {block} contains only whitespace and matched nothing but the end of the file, where its REPLACE part would be appended. The file was not changed. Put the exact lines to replace in the SEARCH part, then retry."
            ),
            DiffError::TooMuchSearching { block } => write!(
                f,
                "Finding the SEARCH part of block {block} took this diff past agent-min's bound on searching the file (a block that is not after the one before it is looked for in the whole file again). The file was not changed. Give the blocks in file order, each part of the file in one block only, then retry."
            ),
        }
    }
}

impl std::error::Error for DiffError {}

/// A marker line: a run of 3+ `ch`, then `word` (if any), then an optional `>`.
fn marker(line: &str, ch: u8, word: &str) -> bool {
    let run = line.bytes().take_while(|&b| b == ch).count();
    let rest = &line[run..];
    run >= 3 && (rest == word || (!word.is_empty() && rest.strip_suffix('>') == Some(word)))
}

fn is_search_start(line: &str) -> bool {
    marker(line, b'-', " SEARCH") || marker(line, b'<', " SEARCH")
}

fn is_separator(line: &str) -> bool {
    marker(line, b'=', "")
}

fn is_replace_end(line: &str) -> bool {
    marker(line, b'+', " REPLACE") || marker(line, b'>', " REPLACE")
}

fn is_marker(line: &str) -> bool {
    is_search_start(line) || is_separator(line) || is_replace_end(line)
}

/// Whether a last line Cline drops is only a marker, unfinished or with trailing whitespace,
/// so dropping it loses nothing: `+++++++ REPLACE ` or `+++++++ REPL`, never `- item`.
fn is_marker_fragment(line: &str) -> bool {
    let t = line.trim_end_matches(is_js_whitespace);
    if is_marker(t) {
        return true;
    }
    let Some(&ch) = t.as_bytes().first() else { return false };
    let word = match ch {
        b'-' | b'<' => " SEARCH>",
        b'+' | b'>' => " REPLACE>",
        _ => return false,
    };
    let run = t.bytes().take_while(|&b| b == ch).count();
    let rest = &t[run..];
    run >= 3 && rest.len() >= 2 && word.starts_with(rest)
}

/// Whether a last line ending a REPLACE part is a REPLACE marker the model was still streaming
/// or mistyped — `+++`, `++ REPLACE`, `+++++++REPLACE`, `------- REPLACE` — which Cline drops
/// before applying the block. A run of one marker character, optional spaces, then a prefix of
/// `REPLACE` (2+ letters, or none after a run of 3+ `+`/`>`): never text such as `- item`.
fn is_partial_replace_marker(line: &str) -> bool {
    let t = line.trim_end_matches(is_js_whitespace);
    let Some(&ch) = t.as_bytes().first() else { return false };
    if !matches!(ch, b'+' | b'>' | b'-' | b'<' | b'=') {
        return false;
    }
    let run = t.bytes().take_while(|&b| b == ch).count();
    let rest = t[run..].trim_start_matches(' ');
    let word = rest.strip_suffix('>').unwrap_or(rest);
    if word.is_empty() {
        // `---` or `===` alone may be text (a Markdown rule); `+++` is not.
        return run >= 3 && rest.is_empty() && matches!(ch, b'+' | b'>');
    }
    word.len() >= 2 && "REPLACE".starts_with(word)
}

/// A replacement found for one block: `start..end` of the original (`end` may pass the end of
/// a file without a final newline, as Cline's line arithmetic does).
struct Replacement {
    start: usize,
    end: usize,
    content: String,
    block: usize,
}

/// Where an exact match of a SEARCH part may start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Matching {
    /// Cline's `indexOf`: the first place, also inside a line.
    IndexOf,
    /// The first place that starts a line, else the first place (what [`apply`] does).
    WholeLines,
}

/// The SEARCH parts of `diff`, one after the other (what [`apply`] looks for in the file).
pub(crate) fn search_parts(diff: &str) -> String {
    let (mut in_search, mut parts) = (false, String::new());
    for line in diff.split('\n') {
        if is_search_start(line) {
            in_search = true;
        } else if is_separator(line) || is_replace_end(line) {
            in_search = false;
        } else if in_search {
            parts.push_str(line);
            parts.push('\n');
        }
    }
    parts
}

/// Applies `diff` to `original`, as Cline's `constructNewFileContent(diff, original, true)`
/// does, or refuses. See the module docs. The searches may scan `SEARCH_BOUND` (64) times the
/// file and the diff together (and 1 MiB more); past that the diff is refused
/// ([`DiffError::TooMuchSearching`]). An exact match is [`Matching::WholeLines`].
pub fn apply(original: &str, diff: &str) -> Result<String, DiffError> {
    apply_matching(original, diff, Matching::WholeLines)
}

/// [`apply`] with exact matches found as `matching` says ([`Matching::IndexOf`] is Cline's
/// engine exactly, for comparing the two).
pub fn apply_matching(original: &str, diff: &str, matching: Matching) -> Result<String, DiffError> {
    let bound = SEARCH_BOUND * (original.len() + diff.len()) + (1 << 20);
    let mut scanned = 0;
    let mut diff_lines: Vec<&str> = diff.split('\n').collect();
    // Cline drops a last line that looks like an unfinished marker.
    let mut dropped = None;
    if let Some(last) = diff_lines.last() {
        if last.starts_with(['-', '<', '=', '+', '>']) && !is_marker(last) {
            dropped = diff_lines.pop();
        }
    }

    let (mut in_search, mut in_replace) = (false, false);
    let (mut search, mut replace) = (String::new(), String::new());
    let mut matched: Option<(usize, usize)> = None;
    let mut out_of_order = false;
    let mut last_processed = 0usize;
    let mut block = 0usize;
    let mut replacements: Vec<Replacement> = Vec::new();
    let mut lines: Option<Lines<'_>> = None;

    for line in diff_lines {
        if is_search_start(line) {
            if in_search || in_replace {
                return Err(DiffError::NestedSearch { block: block.max(1) });
            }
            block += 1;
            in_search = true;
            search.clear();
            replace.clear();
            continue;
        }
        if is_separator(line) {
            if in_replace {
                return Err(DiffError::SeparatorInReplace { block: block.max(1) });
            }
            in_search = false;
            in_replace = true;
            let (start, end) = if search.is_empty() {
                if !original.is_empty() {
                    return Err(DiffError::EmptySearch);
                }
                (0, 0)
            } else {
                let found = find(original, &mut lines, &search, last_processed, matching, &mut scanned);
                if scanned > bound {
                    return Err(DiffError::TooMuchSearching { block: block.max(1) });
                }
                let found = found.ok_or_else(|| DiffError::NoMatch { search: search.clone() })?;
                // (An empty file's one empty line is no end to append to: Cline's match of it
                // makes the file the REPLACE text, and so does ours.)
                if js_trim(&search).is_empty() && !original.is_empty() && found.0 >= original.len() {
                    return Err(DiffError::WhitespaceSearchAtEnd { block: block.max(1) });
                }
                found
            };
            out_of_order = start < last_processed;
            matched = Some((start, end));
            continue;
        }
        if is_replace_end(line) {
            let Some((start, end)) = matched.take() else {
                return Err(DiffError::Malformed { search: search.clone() });
            };
            replacements.push(Replacement { start, end, content: std::mem::take(&mut replace), block });
            if !out_of_order {
                last_processed = end;
            }
            (in_search, in_replace, out_of_order) = (false, false, false);
            search.clear();
            continue;
        }
        if in_search {
            search.push_str(line);
            search.push('\n');
        } else if in_replace {
            replace.push_str(line);
            replace.push('\n');
        }
    }

    if let Some(line) = dropped {
        let fragment = is_marker_fragment(line) || (in_replace && is_partial_replace_marker(line));
        if (in_search || in_replace) && !fragment {
            return Err(DiffError::DroppedLastLine { line: line.to_string() });
        }
    }
    if in_search {
        return Err(DiffError::OpenSearch { block });
    }
    // The last block may end without its REPLACE marker.
    if let (true, Some((start, end))) = (in_replace, matched) {
        replacements.push(Replacement { start, end, content: replace, block });
    }
    if replacements.is_empty() {
        return Err(DiffError::NoBlocks);
    }

    let len = original.len();
    // A stable sort, as JavaScript's.
    replacements.sort_by_key(|r| r.start);
    for pair in replacements.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        // (Two empty SEARCH parts on an empty file both insert at its start, in order, as in
        // Cline: no text is matched twice.)
        if b.start < a.end.min(len) || (a.start, a.end) == (b.start, b.end) && a.start < a.end {
            return Err(DiffError::Overlap { block: b.block.max(a.block) });
        }
    }
    let mut out = String::with_capacity(len);
    let mut pos = 0;
    for r in &replacements {
        out.push_str(&original[pos.min(len)..r.start.min(len)]);
        out.push_str(&r.content);
        pos = r.end;
    }
    out.push_str(&original[pos.min(len)..]);
    Ok(out)
}

/// How many times the file and the diff together the searches of one diff may scan. In file
/// order, each block's search starts where the last one's match ended, so a diff scans the file
/// about once; a block out of order (or matching what another did) is looked for again from the
/// file's start.
const SEARCH_BOUND: usize = 64;

/// Cline's four searches for a non-empty SEARCH part, in order; `lines` is the original's
/// lines, split on first use and kept for the next blocks. Adds the bytes each search looked
/// through (to its match's end, or to the file's) to `scanned`.
fn find<'a>(
    original: &'a str,
    lines: &mut Option<Lines<'a>>,
    search: &str,
    from: usize,
    matching: Matching,
    scanned: &mut usize,
) -> Option<(usize, usize)> {
    let len = original.len();
    // `from` may be one past the end (a match of a last line without `\n`): then, as in Cline,
    // no line is left for the line searches, and `indexOf` finds nothing but an empty text.
    let at = from.min(len);
    // Each search looks from `at` (the last from the start) to its match's end, or to the end.
    // (The exact search's look for a match that starts a line is charged by `exact` itself.)
    let exact_from =
        |from, scanned: &mut usize| exact(original, search, from, matching, scanned).map(|i| (i, i + search.len()));
    let found = exact_from(at, scanned);
    let mut charge = |start: usize, m: Option<(usize, usize)>| {
        *scanned += m.map_or(len, |(_, end)| end.min(len)).saturating_sub(start) + search.len();
        m
    };
    if let Some(m) = charge(at, found) {
        return Some(m);
    }
    let lines = lines.get_or_insert_with(|| Lines::new(original));
    if let Some(m) = charge(at, line_trimmed(lines, search, from)) {
        return Some(m);
    }
    if let Some(m) = charge(at, block_anchor(lines, search, from)) {
        return Some(m);
    }
    let found = exact_from(0, scanned);
    *scanned += found.map_or(len, |(_, end)| end.min(len)) + search.len();
    found
}

/// Where `search` is found at or after `from`: its first place, as Cline's `indexOf` finds it,
/// unless text other than indentation comes before it on its line and a later place starts a
/// line — then that one. A SEARCH part is whole lines (Cline's prompt: "The system requires
/// exact line matches and cannot match partial lines"), but `indexOf` matches inside a line, so
/// Cline edits `max_count = 0` for SEARCH `count = 0` when `count = 0` is the next line, and
/// puts a blank line's replacement at the end of the line before it, and reports success. (A
/// SEARCH that left out its first line's indentation still matches that line, as in Cline.)
/// The look for a later place is added to `scanned` (to its match, or to the end).
fn exact(original: &str, search: &str, from: usize, matching: Matching, scanned: &mut usize) -> Option<usize> {
    let first = from + original[from..].find(search)?;
    let line_start = original[..first].rfind('\n').map_or(0, |i| i + 1);
    *scanned += first - line_start;
    if matching == Matching::IndexOf || original[line_start..first].trim_matches([' ', '\t']).is_empty() {
        return Some(first);
    }
    let at_line_start = original[first..].find(&format!("\n{search}")).map(|i| first + i + 1);
    *scanned += at_line_start.map_or(original.len(), |i| i + search.len()) - first;
    Some(at_line_start.unwrap_or(first))
}

/// The original split on `\n` as JavaScript's `split` does (a final empty line after a last
/// `\n`), with each line's start offset and its JavaScript-trimmed text.
struct Lines<'a> {
    starts: Vec<usize>,
    lines: Vec<&'a str>,
    trimmed: Vec<&'a str>,
}

impl<'a> Lines<'a> {
    fn new(s: &'a str) -> Self {
        let lines: Vec<&str> = s.split('\n').collect();
        let mut starts = Vec::with_capacity(lines.len());
        let mut at = 0;
        for l in &lines {
            starts.push(at);
            at += l.len() + 1;
        }
        let trimmed = lines.iter().map(|l| js_trim(l)).collect();
        Lines { starts, lines, trimmed }
    }

    /// The first line starting at or after `from` (Cline's walk over line lengths).
    fn first_line_from(&self, from: usize) -> usize {
        self.starts.partition_point(|&s| s < from)
    }

    /// The byte range of `n` lines from line `i`, each counted with its `\n` (so the end may
    /// pass the end of the text by one, as in Cline).
    fn span(&self, i: usize, n: usize) -> (usize, usize) {
        let end = self.starts[i + n - 1] + self.lines[i + n - 1].len() + 1;
        (self.starts[i], end)
    }
}

/// SEARCH split on `\n`, minus the empty string after its final `\n`.
fn search_lines(search: &str) -> Vec<&str> {
    let mut v: Vec<&str> = search.split('\n').collect();
    if v.last() == Some(&"") {
        v.pop();
    }
    v
}

fn line_trimmed(o: &Lines<'_>, search: &str, from: usize) -> Option<(usize, usize)> {
    let want: Vec<&str> = search_lines(search).into_iter().map(js_trim).collect();
    let n = want.len();
    let first = o.first_line_from(from);
    if o.lines.len() < n || first > o.lines.len() - n {
        return None;
    }
    // Cline tries every start line in turn; the first match is found here in linear time.
    find_sequence(&o.trimmed[first..], &want).map(|i| o.span(first + i, n))
}

/// The first index where `needle` occurs in `hay` (Knuth–Morris–Pratt: linear in both, so a
/// model's SEARCH part cannot make the edit quadratic in the file).
fn find_sequence(hay: &[&str], needle: &[&str]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    let mut fail = vec![0usize; needle.len()];
    let mut k = 0;
    for i in 1..needle.len() {
        while k > 0 && needle[i] != needle[k] {
            k = fail[k - 1];
        }
        if needle[i] == needle[k] {
            k += 1;
        }
        fail[i] = k;
    }
    let mut k = 0;
    for (i, h) in hay.iter().enumerate() {
        while k > 0 && *h != needle[k] {
            k = fail[k - 1];
        }
        if *h == needle[k] {
            k += 1;
            if k == needle.len() {
                return Some(i + 1 - k);
            }
        }
    }
    None
}

fn block_anchor(o: &Lines<'_>, search: &str, from: usize) -> Option<(usize, usize)> {
    // Cline counts the lines before dropping the final empty one: 2-line SEARCH parts qualify.
    if search.split('\n').count() < 3 {
        return None;
    }
    let want = search_lines(search);
    let n = want.len();
    let (head, tail) = (js_trim(want[0]), js_trim(want[n - 1]));
    let last = o.lines.len().checked_sub(n)?;
    (o.first_line_from(from)..=last)
        .find(|&i| o.trimmed[i] == head && o.trimmed[i + n - 1] == tail)
        .map(|i| o.span(i, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_search_finds_the_first_occurrence() {
        let hay = ["a", "a", "b", "a", "a", "a", "b"];
        assert_eq!(find_sequence(&hay, &["a", "a", "b"]), Some(0));
        assert_eq!(find_sequence(&hay, &["a", "a", "a", "b"]), Some(3));
        assert_eq!(find_sequence(&hay, &["b", "b"]), None);
        assert_eq!(find_sequence(&hay[..0], &["a"]), None);
    }

    /// Blocks that each send the search back to the file's start cost the file's length each:
    /// 24,000 of them (a 960 KB diff) on a 129 KB file took 2 s, and Cline searches on. The
    /// searches are bounded by the sizes of the file and the diff together.
    #[test]
    fn blocks_out_of_order_are_refused_past_the_bound_on_searching() {
        let original: String = (0..10_000).map(|i| format!("line {i}\n")).collect::<String>() + "END\n";
        let block = |s: &str| format!("------- SEARCH\n{s}\n=======\nx\n+++++++ REPLACE\n");
        let many = block("END") + &block("line 9999").repeat(2_000);
        // Refused at a block well before the last, once the bound is passed.
        let r = apply(&original, &many);
        assert!(matches!(r, Err(DiffError::TooMuchSearching { block }) if block < 200), "{r:?}");
        // A few blocks out of order are still applied, as in Cline.
        let few = block("line 9999") + &block("line 5000") + &block("line 10");
        let out = apply(&original, &few).unwrap();
        assert!(out.starts_with("line 0\n") && out.contains("\nx\nline 5001\n") && out.ends_with("x\nEND\n"));
        assert!(out.contains("line 9\nx\nline 11\n"), "{out}");
    }

    #[test]
    fn a_search_of_many_near_matches_stays_linear() {
        // 200,000 identical lines and a 2,000-line SEARCH that fails on its last line: a naive
        // scan would compare 400 million lines.
        let original = "    a\n".repeat(200_000);
        let diff = format!("------- SEARCH\n{}b\n=======\nx\n+++++++ REPLACE", "a\n".repeat(2_000));
        assert!(matches!(apply(&original, &diff), Err(DiffError::NoMatch { .. })));
    }

    /// Two empty SEARCH parts on an empty file both insert, in order, as Cline's do.
    #[test]
    fn two_empty_searches_on_an_empty_file_both_insert() {
        let diff =
            "------- SEARCH\n=======\nfirst\n+++++++ REPLACE\n------- SEARCH\n=======\nsecond\n+++++++ REPLACE\n";
        assert_eq!(apply("", diff).unwrap(), "first\nsecond\n");
    }
}
