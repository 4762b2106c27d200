//! The agent's SEARCH/REPLACE applier (Cline v4.0.10's `constructNewFileContent`, v1), against
//! what `agent_min::run::tools::diff` documents and a naive reference of Cline's rules:
//! - it never panics, and is deterministic;
//! - a diff without a block (no SEARCH marker and no `=======` line) is an error, never a change;
//! - an error leaves nothing applied: a valid diff plus one block whose SEARCH line is found
//!   nowhere (not exactly, not trimmed) is an error as a whole, so no partial text exists;
//! - when every block's SEARCH part is found exactly, after the previous block's match (Cline's
//!   first strategy), the result is what a naive, position-by-position model gives — including
//!   Cline's rule that a match ending on a last line without a newline gains one (the REPLACE
//!   text keeps its final `\n`): with Cline's `indexOf` (`Matching::IndexOf`), and with
//!   agent-min's rule that a match after other text than indentation on its line yields to a
//!   later one that starts a line (`Matching::WholeLines`, what `apply` does).
#![no_main]

use agent_min::run::tools::diff;
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use parser_core::js_trim;

#[derive(Arbitrary, Debug)]
struct Case<'a> {
    original: &'a str,
    diff: &'a str,
    /// A structured diff: per block, (first line, line count) of the original and new lines.
    blocks: Vec<(u8, u8, Vec<&'a str>)>,
    missing: Option<&'a str>,
}

/// A run of 3+ `ch`, then `word`, then (only if `word` is not empty) an optional `>`: the
/// marker rule of diff.rs's docs, written out naively.
fn marker(line: &str, ch: char, word: &str) -> bool {
    let rest = line.trim_start_matches(ch);
    let run = line.len() - rest.len();
    run >= 3 && (rest == word || (!word.is_empty() && rest == format!("{word}>")))
}

/// Whether the diff parser reads `line` as a marker (or `line` would be split into two lines).
fn is_marker(line: &str) -> bool {
    line.contains('\n')
        || marker(line, '-', " SEARCH")
        || marker(line, '<', " SEARCH")
        || marker(line, '=', "")
        || marker(line, '+', " REPLACE")
        || marker(line, '>', " REPLACE")
}

/// One SEARCH/REPLACE block over whole lines, each ending in `\n`.
fn block(search: &[&str], replace: &[&str]) -> String {
    let mut s = String::from("------- SEARCH\n");
    for l in search {
        s.push_str(l);
        s.push('\n');
    }
    s.push_str("=======\n");
    for l in replace {
        s.push_str(l);
        s.push('\n');
    }
    s.push_str("+++++++ REPLACE\n");
    s
}

/// The naive model of Cline's first strategy: each SEARCH part (its lines, each with `\n`) is
/// looked for at every byte position from the end of the previous match. If it is not there but
/// is the file's last lines, the last one without its `\n`, Cline's trimmed-line search takes
/// it (and the REPLACE text keeps its final `\n`) — unless an earlier run of lines matches when
/// trimmed, which that search would take first. `None` when some block falls outside this case.
fn reference(original: &str, lines: &[&str], blocks: &[(String, String)], whole_lines: bool) -> Option<String> {
    let bytes = original.as_bytes();
    let mut out = String::new();
    let mut last = 0;
    let at = |i: usize, search: &str| bytes[i..].starts_with(search.as_bytes());
    let starts_a_line = |i: usize| i == 0 || bytes[i - 1] == b'\n';
    let after_text = |i: usize| {
        let line_start = (0..=i).rev().find(|&j| starts_a_line(j)).unwrap_or(0);
        bytes[line_start..i].iter().any(|b| !matches!(b, b' ' | b'\t'))
    };
    for (search, replace) in blocks {
        let mut exact = (last..=bytes.len()).find(|&i| at(i, search));
        if let Some(first) = exact.filter(|&i| whole_lines && after_text(i)) {
            exact = (first + 1..=bytes.len()).find(|&i| starts_a_line(i) && at(i, search)).or(exact);
        }
        let (start, end) = match exact {
            Some(i) => (i, i + search.len()),
            None => {
                let body = &search[..search.len() - 1];
                let at = original.len().checked_sub(body.len())?;
                let line_start = at == 0 || bytes[at - 1] == b'\n';
                if original.ends_with('\n') || !original.ends_with(body) || !line_start || at < last {
                    return None;
                }
                let want: Vec<&str> = body.split('\n').map(js_trim).collect();
                let mut line_at = 0;
                for i in 0..lines.len() {
                    let fits = i + want.len() <= lines.len();
                    if line_at >= last
                        && line_at < at
                        && fits
                        && lines[i..i + want.len()].iter().map(|l| js_trim(l)).eq(want.iter().copied())
                    {
                        return None;
                    }
                    line_at += lines[i].len() + 1;
                }
                (at, original.len())
            }
        };
        out.push_str(&original[last..start]);
        out.push_str(replace);
        last = end;
    }
    out.push_str(&original[last..]);
    Some(out)
}

fuzz_target!(|case: Case<'_>| {
    let original = case.original;
    let first = diff::apply(original, case.diff);
    assert_eq!(first, diff::apply(original, case.diff), "not deterministic");
    for empty in ["", "\n", "  \n\t\n", "stray text, no block\n"] {
        assert!(diff::apply(original, empty).is_err(), "{empty:?} was applied");
    }
    let opens_a_block = |l: &str| marker(l, '-', " SEARCH") || marker(l, '<', " SEARCH") || marker(l, '=', "");
    if !case.diff.split('\n').any(opens_a_block) {
        assert!(first.is_err(), "a diff without a block was applied: {:?}", case.diff);
    }

    // Structured diffs: SEARCH parts are runs of whole lines of the original.
    let mut lines: Vec<&str> = original.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    if lines.is_empty() || lines.iter().any(|l| is_marker(l)) {
        return;
    }
    let mut text = String::new();
    let mut parts = Vec::new();
    for (start, len, replace) in case.blocks.iter().take(4) {
        if replace.iter().any(|l| is_marker(l)) {
            return;
        }
        let start = usize::from(*start) % lines.len();
        let end = (start + 1 + usize::from(*len) % 3).min(lines.len());
        let search = &lines[start..end];
        text.push_str(&block(search, replace));
        let join = |ls: &[&str]| ls.iter().map(|l| format!("{l}\n")).collect::<String>();
        parts.push((join(search), join(replace)));
    }
    if parts.is_empty() {
        return;
    }
    let applied = diff::apply(original, &text);
    if let Some(expected) = reference(original, &lines, &parts, true) {
        assert_eq!(applied.as_deref(), Ok(expected.as_str()), "{text:?}");
    }
    if let Some(expected) = reference(original, &lines, &parts, false) {
        let as_cline = diff::apply_matching(original, &text, diff::Matching::IndexOf);
        assert_eq!(as_cline.as_deref(), Ok(expected.as_str()), "Cline's matching: {text:?}");
    }
    // One block that cannot match anywhere makes the whole diff fail: nothing is applied.
    if let (Ok(_), Some(missing)) = (&applied, case.missing) {
        let wanted = js_trim(missing);
        let found = original.contains(&format!("{missing}\n")) || original.split('\n').any(|l| js_trim(l) == wanted);
        if !is_marker(missing) && !wanted.is_empty() && !found {
            let bad = text.clone() + &block(&[missing], &["x"]);
            assert!(
                matches!(diff::apply(original, &bad), Err(diff::DiffError::NoMatch { .. })),
                "a block matching nothing was skipped: {bad:?}"
            );
        }
    }
});
