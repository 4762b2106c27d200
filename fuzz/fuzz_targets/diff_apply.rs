//! The agent's SEARCH/REPLACE applier, against what its documentation promises and a naive
//! reference of the exact rules:
//! - it never panics, and is deterministic;
//! - a diff without a block (empty, blank, or only stray text) is an error, never a change;
//! - a block whose SEARCH part cannot match (a line found nowhere, even trimmed, in a block too
//!   short for the first/last-line anchor) fails the whole diff: no partial result;
//! - when every block is found exactly — after the previous one, or else from the start — the
//!   result is what a naive, position-by-position model of those rules gives.
#![no_main]

use agent_min::run::tools::diff::{self, Strategy};
use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Case<'a> {
    original: &'a str,
    diff: &'a str,
    /// A structured diff over lines of the original (indices) and new lines.
    blocks: Vec<(Vec<u8>, Vec<&'a str>)>,
    missing: Option<&'a str>,
}

/// A line the diff parser reads as a marker (or that would break a line apart).
fn unusable(l: &str) -> bool {
    let t = l.trim();
    l.contains(['\n', '\r']) || ["---", "===", "+++", "<<<", ">>>"].iter().any(|m| t.starts_with(m))
}

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

/// The exact rules, naively: each SEARCH part is looked for at every position from the end of
/// the previous match, else at every position from the start; overlapping matches fail. Also
/// says whether every block was found after the previous one (no other rule could apply then).
fn reference(original: &str, blocks: &[(String, String)]) -> Option<(String, bool)> {
    let find_from = |s: &str, from: usize| {
        (from..=original.len()).find(|&i| original.is_char_boundary(i) && original[i..].starts_with(s))
    };
    let mut edits: Vec<(usize, usize, &str)> = Vec::new();
    let mut last = 0;
    let mut forward = true;
    for (search, replace) in blocks {
        // The last line of the file may lack its newline.
        let body = &search[..search.len() - 1];
        let at_end = original.len().checked_sub(body.len()).filter(|&s| {
            !body.is_empty() && s >= last && original.ends_with(body) && (s == 0 || original.as_bytes()[s - 1] == b'\n')
        });
        let (start, end) = match find_from(search, last) {
            Some(s) => (s, s + search.len()),
            None => match at_end {
                Some(s) => (s, original.len()),
                None => {
                    forward = false;
                    find_from(search, 0).map(|s| (s, s + search.len()))?
                }
            },
        };
        let replace = if end == original.len() && !original[start..end].ends_with('\n') && end > start {
            &replace[..replace.len().saturating_sub(usize::from(replace.ends_with('\n')))]
        } else {
            replace.as_str()
        };
        if edits.iter().any(|&(s, e, _)| start < e && s < end) {
            return None;
        }
        last = last.max(end);
        edits.push((start, end, replace));
    }
    edits.sort();
    let mut out = String::new();
    let mut pos = 0;
    for (s, e, r) in edits {
        out.push_str(&original[pos..s]);
        out.push_str(r);
        pos = e;
    }
    out.push_str(&original[pos..]);
    Some((out, forward))
}

fuzz_target!(|case: Case<'_>| {
    let original = case.original;
    if let Ok(new) = diff::apply(original, case.diff) {
        assert_eq!(diff::apply(original, case.diff).ok().as_deref(), Some(new.as_str()));
    }
    for empty in ["", "\n", "  \n\t\n", "stray text, no block\n"] {
        assert!(diff::apply(original, empty).is_err(), "{empty:?} was applied");
    }
    if !case.diff.lines().any(|l| l.trim_end().trim_end_matches('>').ends_with(" SEARCH")) {
        assert!(diff::apply(original, case.diff).is_err(), "a diff without a SEARCH marker was applied");
    }

    // Structured diffs: SEARCH parts are runs of whole lines of the original.
    let lines: Vec<&str> =
        original.split_inclusive('\n').filter(|l| l.ends_with('\n')).map(|l| &l[..l.len() - 1]).collect();
    if lines.is_empty() || lines.iter().any(|l| unusable(l)) {
        return;
    }
    let mut text = String::new();
    let mut parts = Vec::new();
    for (picks, replace) in case.blocks.iter().take(4) {
        if replace.iter().any(|l| unusable(l)) {
            return;
        }
        let start = usize::from(*picks.first().unwrap_or(&0)) % lines.len();
        let len = 1 + usize::from(*picks.get(1).unwrap_or(&0)) % 3;
        let search: Vec<&str> = lines[start..(start + len).min(lines.len())].to_vec();
        text.push_str(&block(&search, replace));
        let join = |ls: &[&str]| ls.iter().map(|l| format!("{l}\n")).collect::<String>();
        parts.push((join(&search), join(replace)));
    }
    if parts.is_empty() {
        return;
    }
    if let Ok((new, strategies)) = diff::apply_detailed(original, &text) {
        if strategies.iter().all(|s| matches!(s, Strategy::Exact | Strategy::ExactFromStart)) {
            assert_eq!(Some(new), reference(original, &parts).map(|r| r.0), "{text:?}");
        }
    } else if let Some((_, true)) = reference(original, &parts) {
        panic!("a diff whose blocks are found in order was refused: {text:?}");
    }
    // One block that cannot match anywhere makes the whole diff fail.
    if let Some(missing) = case.missing.filter(|m| !unusable(m) && !m.trim().is_empty()) {
        if !original.contains(missing.trim()) {
            let bad = text.clone() + &block(&[missing], &["x"]);
            assert!(diff::apply(original, &bad).is_err(), "a block matching nothing was skipped: {bad:?}");
        }
    }
});
