//! Every reference output of Cline v4.0.10, through the whole-reply API and the naive oracle.
// The growable API (`parse`, `StreamParser`) is the default `alloc` feature.
#![cfg(feature = "alloc")]

mod support;

use parser_core::{parse, CLINE_PARAM_NAMES, CLINE_TOOL_NAMES};
use support::{load, naive_to_json, oracle, same, to_json};

fn check_whole(file: &str) {
    let cases = load(file);
    let mut failures = Vec::new();
    for c in &cases {
        let got = to_json(parse(&c.input).iter());
        if !same(&got, &c.expected) {
            failures
                .push(format!("{}:\n  input    {:?}\n  expected {}\n  got      {}", c.id, c.input, c.expected, got));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases of {file} differ:\n{}",
        failures.len(),
        cases.len(),
        failures.iter().take(10).cloned().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn whole_replies_match_cline() {
    check_whole("cline-v4.0.10.jsonl");
}

#[test]
fn every_prefix_parsed_whole_matches_cline() {
    check_whole("cline-v4.0.10-prefixes.jsonl");
}

/// The oracle must itself be right, or the property tests prove nothing. It tests every tag at
/// every character, so it is slow: the long.* cases (up to 80 KB) are left to the fast parser.
#[test]
fn naive_oracle_matches_cline() {
    let mut checked = 0;
    for c in load("cline-v4.0.10.jsonl").iter().filter(|c| c.input.len() <= 16 * 1024) {
        let got = naive_to_json(&oracle::parse(&c.input, &CLINE_TOOL_NAMES, &CLINE_PARAM_NAMES));
        assert!(same(&got, &c.expected), "{}: oracle gives {got}, Cline {}", c.id, c.expected);
        checked += 1;
    }
    assert!(checked > 3000, "only {checked} cases checked");
}
