//! The SEARCH/REPLACE applier behind `replace_in_file`: a pure function from (file text, diff
//! text) to the new file text.
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
//! (the legacy `<<<<<<< SEARCH` / `>>>>>>> REPLACE` markers work too). Each SEARCH part is
//! matched in Cline's order: exactly, after the previous block's match; line by line with
//! whitespace trimmed; by its first and last lines as anchors (blocks of 3+ lines); and finally
//! exactly anywhere from the file's start (blocks given out of order). If any block fails, the
//! whole diff fails: nothing is applied.
//!
//! ```
//! use agent_min::run::tools::diff::apply;
//! let diff = "------- SEARCH\nb\n=======\nB\n+++++++ REPLACE\n";
//! assert_eq!(apply("a\nb\nc\n", diff).unwrap(), "a\nB\nc\n");
//! ```

use std::fmt;
use std::ops::Range;

/// How a SEARCH part was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Byte-for-byte, after the previous block.
    Exact,
    /// Line by line, ignoring leading and trailing whitespace on each line.
    LineTrimmed,
    /// First and last lines (trimmed) match; the middle is taken on trust (3+ lines).
    BlockAnchor,
    /// Byte-for-byte, searching from the start of the file (a block given out of order).
    ExactFromStart,
    /// An empty SEARCH part on an empty file: the REPLACE part becomes the file.
    NewFile,
}

/// Why a diff could not be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiffError {
    /// The diff contains no complete SEARCH/REPLACE block.
    NoBlocks,
    /// Markers out of place (e.g. `=======` without a SEARCH, or a block never closed).
    Malformed {
        /// 1-based block number.
        block: usize,
        /// What is wrong.
        reason: String,
    },
    /// A SEARCH part matched nothing.
    NoMatch {
        /// 1-based block number.
        block: usize,
        /// The SEARCH text.
        search: String,
    },
    /// A block matched text that an earlier block already replaced.
    Overlap {
        /// 1-based block number.
        block: usize,
    },
    /// An empty SEARCH part on a file that is not empty.
    EmptySearch {
        /// 1-based block number.
        block: usize,
    },
}

impl fmt::Display for DiffError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiffError::NoBlocks => write!(
                f,
                "No SEARCH/REPLACE blocks were found in the diff. Each block must be:\n------- SEARCH\n[exact content to find]\n=======\n[new content]\n+++++++ REPLACE"
            ),
            DiffError::Malformed { block, reason } => {
                write!(f, "The diff is malformed at block {block}: {reason}")
            }
            DiffError::NoMatch { search, .. } => write!(
                f,
                "The SEARCH block:\n{}\n...does not match anything in the file.",
                search.trim_end()
            ),
            DiffError::Overlap { block } => write!(
                f,
                "SEARCH block {block} matches text that an earlier block already replaced."
            ),
            DiffError::EmptySearch { block } => write!(
                f,
                "Empty SEARCH block {block} with a non-empty file. This usually means a malformed SEARCH marker; put the exact lines to replace between the markers."
            ),
        }
    }
}

impl std::error::Error for DiffError {}

/// Applies `diff` to `original`. See the module docs.
pub fn apply(original: &str, diff: &str) -> Result<String, DiffError> {
    apply_detailed(original, diff).map(|(s, _)| s)
}

/// Like [`apply`], also telling which strategy matched each block.
pub fn apply_detailed(original: &str, diff: &str) -> Result<(String, Vec<Strategy>), DiffError> {
    let blocks = parse_blocks(diff)?;
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut strategies = Vec::new();
    let mut last = 0usize;
    for (i, (search, replace)) in blocks.iter().enumerate() {
        let n = i + 1;
        let (range, strategy) = if search.is_empty() {
            if !original.is_empty() {
                return Err(DiffError::EmptySearch { block: n });
            }
            (0..0, Strategy::NewFile)
        } else {
            find(original, search, last).ok_or_else(|| DiffError::NoMatch { block: n, search: search.clone() })?
        };
        if edits.iter().any(|(r, _)| range.start < r.end && r.start < range.end) {
            return Err(DiffError::Overlap { block: n });
        }
        let mut replacement = replace.clone();
        if !range.is_empty() && !original[range.clone()].ends_with('\n') && range.end == original.len() {
            // The match ran to a final line without a newline: keep it that way.
            if replacement.ends_with('\n') {
                replacement.pop();
            }
        }
        last = last.max(range.end);
        edits.push((range, replacement));
        strategies.push(strategy);
    }
    edits.sort_by_key(|(r, _)| r.start);
    let mut out = String::with_capacity(original.len());
    let mut pos = 0;
    for (r, rep) in edits {
        out.push_str(&original[pos..r.start]);
        out.push_str(&rep);
        pos = r.end;
    }
    out.push_str(&original[pos..]);
    Ok((out, strategies))
}

fn is_search_start(l: &str) -> bool {
    let l = l.trim_end();
    let l = l.strip_suffix('>').unwrap_or(l);
    for c in ['-', '<'] {
        if let Some(rest) = l.strip_suffix(" SEARCH") {
            if rest.len() >= 3 && rest.chars().all(|x| x == c) {
                return true;
            }
        }
    }
    false
}

fn is_separator(l: &str) -> bool {
    let l = l.trim_end();
    l.len() >= 3 && l.chars().all(|c| c == '=')
}

fn is_replace_end(l: &str) -> bool {
    let l = l.trim_end();
    let l = l.strip_suffix('>').unwrap_or(l);
    for c in ['+', '>'] {
        if let Some(rest) = l.strip_suffix(" REPLACE") {
            if rest.len() >= 3 && rest.chars().all(|x| x == c) {
                return true;
            }
        }
    }
    false
}

/// Splits the diff into (search, replace) pairs; each part is its lines joined with `\n`, with a
/// trailing `\n` when non-empty.
fn parse_blocks(diff: &str) -> Result<Vec<(String, String)>, DiffError> {
    enum State {
        Outside,
        Search(String),
        Replace(String, String),
    }
    let mut state = State::Outside;
    let mut blocks = Vec::new();
    for line in diff.lines() {
        let n = blocks.len() + 1;
        state = match state {
            State::Outside if is_search_start(line) => State::Search(String::new()),
            State::Outside if is_separator(line) || is_replace_end(line) => {
                return Err(DiffError::Malformed {
                    block: n,
                    reason: format!("found {:?} before a SEARCH marker", line.trim()),
                })
            }
            State::Outside => State::Outside, // stray text between blocks is ignored
            State::Search(s) if is_separator(line) => State::Replace(s, String::new()),
            State::Search(_) if is_search_start(line) || is_replace_end(line) => {
                return Err(DiffError::Malformed {
                    block: n,
                    reason: format!("found {:?} before the ======= separator", line.trim()),
                })
            }
            State::Search(mut s) => {
                s.push_str(line);
                s.push('\n');
                State::Search(s)
            }
            State::Replace(s, r) if is_replace_end(line) => {
                blocks.push((s, r));
                State::Outside
            }
            State::Replace(_, _) if is_search_start(line) || is_separator(line) => {
                return Err(DiffError::Malformed {
                    block: n,
                    reason: format!("found {:?} before the +++++++ REPLACE marker", line.trim()),
                })
            }
            State::Replace(s, mut r) => {
                r.push_str(line);
                r.push('\n');
                State::Replace(s, r)
            }
        };
    }
    match state {
        State::Outside if blocks.is_empty() => Err(DiffError::NoBlocks),
        State::Outside => Ok(blocks),
        _ => Err(DiffError::Malformed {
            block: blocks.len() + 1,
            reason: "the block is not closed with +++++++ REPLACE".to_string(),
        }),
    }
}

fn find(original: &str, search: &str, from: usize) -> Option<(Range<usize>, Strategy)> {
    if let Some(i) = original[from..].find(search) {
        return Some((from + i..from + i + search.len(), Strategy::Exact));
    }
    // The last line of the file may lack its newline.
    if let Some(body) = search.strip_suffix('\n') {
        if !body.is_empty() && original.ends_with(body) && original.len() - body.len() >= from {
            let start = original.len() - body.len();
            if start == 0 || original.as_bytes()[start - 1] == b'\n' {
                return Some((start..original.len(), Strategy::Exact));
            }
        }
    }
    if let Some(r) = line_trimmed(original, search, from) {
        return Some((r, Strategy::LineTrimmed));
    }
    if let Some(r) = block_anchor(original, search, from) {
        return Some((r, Strategy::BlockAnchor));
    }
    original.find(search).map(|i| (i..i + search.len(), Strategy::ExactFromStart))
}

/// Lines of `s` with their byte ranges (each range includes its `\n`, if any).
fn line_spans(s: &str) -> Vec<Range<usize>> {
    let mut v = Vec::new();
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        if b == b'\n' {
            v.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < s.len() {
        v.push(start..s.len());
    }
    v
}

fn search_lines(search: &str) -> Vec<&str> {
    search.strip_suffix('\n').unwrap_or(search).split('\n').collect()
}

fn line_trimmed(original: &str, search: &str, from: usize) -> Option<Range<usize>> {
    let spans = line_spans(original);
    let want = search_lines(search);
    let first = spans.iter().position(|r| r.end > from)?;
    if want.len() > spans.len() {
        return None;
    }
    (first..=spans.len() - want.len()).find_map(|i| {
        let ok = want.iter().zip(&spans[i..]).all(|(w, r)| original[r.clone()].trim() == w.trim());
        ok.then(|| spans[i].start..spans[i + want.len() - 1].end)
    })
}

fn block_anchor(original: &str, search: &str, from: usize) -> Option<Range<usize>> {
    let want = search_lines(search);
    if want.len() < 3 {
        return None;
    }
    let spans = line_spans(original);
    let first = spans.iter().position(|r| r.end > from)?;
    if want.len() > spans.len() {
        return None;
    }
    let (head, tail) = (want[0].trim(), want[want.len() - 1].trim());
    (first..=spans.len() - want.len()).find_map(|i| {
        let last = i + want.len() - 1;
        (original[spans[i].clone()].trim() == head && original[spans[last].clone()].trim() == tail)
            .then(|| spans[i].start..spans[last].end)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(search: &str, replace: &str) -> String {
        format!("------- SEARCH\n{search}=======\n{replace}+++++++ REPLACE\n")
    }

    #[test]
    fn exact_match() {
        let (out, s) = apply_detailed("fn a() {}\nfn b() {}\n", &block("fn b() {}\n", "fn c() {}\n")).unwrap();
        assert_eq!(out, "fn a() {}\nfn c() {}\n");
        assert_eq!(s, [Strategy::Exact]);
    }

    #[test]
    fn legacy_markers() {
        let diff = "<<<<<<< SEARCH\nb\n=======\nB\n>>>>>>> REPLACE\n";
        assert_eq!(apply("a\nb\n", diff).unwrap(), "a\nB\n");
    }

    #[test]
    fn line_trimmed_match_ignores_indentation_differences() {
        let original = "fn main() {\n    let x = 1;\n    let y = 2;\n}\n";
        let diff = block("let x = 1;\n  let y = 2;\n", "    let x = 10;\n    let y = 20;\n");
        let (out, s) = apply_detailed(original, &diff).unwrap();
        assert_eq!(out, "fn main() {\n    let x = 10;\n    let y = 20;\n}\n");
        assert_eq!(s, [Strategy::LineTrimmed]);
    }

    #[test]
    fn block_anchor_match_uses_first_and_last_lines() {
        let original = "start\nfn f() {\n    old body\n}\nend\n";
        let diff = block("fn f() {\n    something the model misremembered\n}\n", "fn f() {}\n");
        let (out, s) = apply_detailed(original, &diff).unwrap();
        assert_eq!(out, "start\nfn f() {}\nend\n");
        assert_eq!(s, [Strategy::BlockAnchor]);
    }

    #[test]
    fn block_anchor_needs_three_lines() {
        let original = "a\nb\nc\n";
        let diff = block("a\nX\n", "z\n");
        assert!(matches!(apply(original, &diff), Err(DiffError::NoMatch { block: 1, .. })));
    }

    #[test]
    fn out_of_order_blocks_match_from_the_start() {
        let original = "one\ntwo\nthree\n";
        let diff = format!("{}{}", block("three\n", "3\n"), block("one\n", "1\n"));
        let (out, s) = apply_detailed(original, &diff).unwrap();
        assert_eq!(out, "1\ntwo\n3\n");
        assert_eq!(s, [Strategy::Exact, Strategy::ExactFromStart]);
    }

    #[test]
    fn multiple_blocks_in_order() {
        let original = "a\nb\nc\nd\n";
        let diff = format!("{}{}", block("b\n", "B\n"), block("d\n", "D\n"));
        assert_eq!(apply(original, &diff).unwrap(), "a\nB\nc\nD\n");
    }

    #[test]
    fn repeated_text_matches_after_the_previous_block() {
        let original = "x\nmark\nx\n";
        let diff = format!("{}{}", block("mark\n", "MARK\n"), block("x\n", "Y\n"));
        assert_eq!(apply(original, &diff).unwrap(), "x\nMARK\nY\n");
    }

    #[test]
    fn an_empty_line_is_not_found_again_as_nothing_at_the_end_of_the_file() {
        // Found by the diff_apply fuzz target: the second block matched an empty range at EOF.
        let twice = format!("{}{}", block("\n", ""), block("\n", ""));
        assert!(matches!(apply("\n", &twice), Err(DiffError::Overlap { block: 2 })), "{:?}", apply("\n", &twice));
    }

    #[test]
    fn last_line_without_newline() {
        let original = "a\nb";
        assert_eq!(apply(original, &block("b\n", "c\n")).unwrap(), "a\nc");
    }

    #[test]
    fn deletion_with_empty_replace() {
        assert_eq!(apply("a\nb\nc\n", &block("b\n", "")).unwrap(), "a\nc\n");
    }

    #[test]
    fn empty_search_on_empty_file_creates_content() {
        let (out, s) = apply_detailed("", &block("", "new\n")).unwrap();
        assert_eq!(out, "new\n");
        assert_eq!(s, [Strategy::NewFile]);
    }

    #[test]
    fn empty_search_on_non_empty_file_fails() {
        assert_eq!(apply("x\n", &block("", "y\n")), Err(DiffError::EmptySearch { block: 1 }));
    }

    #[test]
    fn no_match_fails_whole_diff_and_names_the_block() {
        let original = "a\nb\n";
        let diff = format!("{}{}", block("a\n", "A\n"), block("zzz\n", "Z\n"));
        match apply(original, &diff) {
            Err(e @ DiffError::NoMatch { block: 2, .. }) => {
                assert!(e.to_string().contains("zzz\n...does not match anything in the file."))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unclosed_block_is_malformed() {
        let diff = "------- SEARCH\na\n=======\nb\n";
        assert!(matches!(apply("a\n", diff), Err(DiffError::Malformed { block: 1, .. })));
        let diff = "------- SEARCH\na\n";
        assert!(matches!(apply("a\n", diff), Err(DiffError::Malformed { .. })));
    }

    #[test]
    fn separator_without_search_is_malformed() {
        assert!(matches!(apply("a\n", "=======\nb\n+++++++ REPLACE\n"), Err(DiffError::Malformed { .. })));
    }

    #[test]
    fn no_blocks() {
        assert_eq!(apply("a\n", "just text"), Err(DiffError::NoBlocks));
    }

    #[test]
    fn overlapping_blocks_fail() {
        let original = "a\nb\nc\n";
        let diff = format!("{}{}", block("a\nb\n", "x\n"), block("b\nc\n", "y\n"));
        assert_eq!(apply(original, &diff), Err(DiffError::Overlap { block: 2 }));
    }

    #[test]
    fn marker_with_trailing_angle_and_longer_runs() {
        let diff = "-------- SEARCH>\nb\n==========\nB\n++++++++ REPLACE>\n";
        assert_eq!(apply("a\nb\n", diff).unwrap(), "a\nB\n");
    }

    #[test]
    fn unicode_content() {
        let original = "héllo\nwörld ✓\n";
        assert_eq!(apply(original, &block("wörld ✓\n", "🦀\n")).unwrap(), "héllo\n🦀\n");
    }
}
