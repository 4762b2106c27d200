//! Cline's `PromptBuilder.postProcess`, which runs over the whole system prompt — the user's
//! custom instructions (the rules) included: runs of blank lines become one, lines that are
//! only `##` go, empty `====` sections are dropped, and a `====` line gets a blank line on
//! each side unless the text around it looks like a diff.

use regex::{Captures, Regex};
use std::sync::OnceLock;

struct Patterns {
    blank_lines: Regex,
    trailing_rule: Regex,
    empty_between: Regex,
    consecutive: Regex,
    empty_header: Regex,
    empty_header_mid: Regex,
    rule_then_text: Regex,
    text_then_rule: Regex,
    diff_like: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        let r = |s: &str| Regex::new(s).expect("pattern");
        Patterns {
            blank_lines: r(r"\n\s*\n\s*\n"),
            trailing_rule: r(r"====+\s*\z"),
            empty_between: r(r"\n====+\s*\n+\s*====+\n"),
            consecutive: r(r"====\s*\n\s*====\s*\n"),
            empty_header: r(r"(?m)^##\s*$[\r\n]*"),
            empty_header_mid: r(r"(?m)\n##\s*$[\r\n]*"),
            // JavaScript's `(?!\n)` lookaheads are implied here by what follows them.
            rule_then_text: r(r"====+\n[^\n]"),
            text_then_rule: r(r"[^\n]\n====+"),
            diff_like: r(r"SEARCH|REPLACE|\+\+\+\+\+\+\+|-------"),
        }
    })
}

/// JavaScript's `trim`: white space and the byte order mark.
fn trim(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}

/// The 50 characters before and after byte `at` of `s`, as one text (Cline's context check).
fn around(s: &str, at: usize) -> String {
    let before: String = s[..at].chars().rev().take(50).collect::<Vec<_>>().into_iter().rev().collect();
    let after: String = s[at..].chars().take(50).collect();
    before + &after
}

/// `prompt` as Cline's `postProcess` leaves it.
pub(crate) fn post_process(prompt: &str) -> String {
    let p = patterns();
    let s = p.blank_lines.replace_all(prompt, "\n\n");
    let s = trim(&s).to_string();
    let s = p.trailing_rule.replace(&s, "").into_owned();
    let s = p.empty_between.replace_all(&s, "\n====\n").into_owned();
    let s = p.consecutive.replace_all(&s, "====\n").into_owned();
    let s = p.empty_header.replace_all(&s, "").into_owned();
    let s = p.empty_header_mid.replace_all(&s, "").into_owned();
    // A blank line added at the match's first line break, unless the text around looks like a
    // diff.
    let spaced = |re: &Regex, s: &str| {
        re.replace_all(s, |c: &Captures<'_>| {
            let m = c.get(0).expect("match");
            if p.diff_like.is_match(&around(s, m.start())) {
                m.as_str().to_string()
            } else {
                m.as_str().replacen('\n', "\n\n", 1)
            }
        })
        .into_owned()
    };
    let s = spaced(&p.rule_then_text, &s);
    let s = spaced(&p.text_then_rule, &s);
    let s = p.blank_lines.replace_all(&s, "\n\n");
    trim(&s).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Cline's `postProcess` makes of a prompt whose rules have runs of blank lines, a
    /// bare `##` line and a `====` line without blank lines around it (checked with node).
    #[test]
    fn blank_lines_bare_headers_and_rules_are_tidied_as_cline_tidies_them() {
        let rules =
            "BASE\n\n====\n\nUSER'S CUSTOM INSTRUCTIONS\n\nrule.md\nOne.\n\n\n\nTwo.\n##\nThree.\nabove\n====\nbelow\n";
        let want =
            "BASE\n\n====\n\nUSER'S CUSTOM INSTRUCTIONS\n\nrule.md\nOne.\n\nTwo.\nThree.\nabove\n\n====\n\nbelow";
        assert_eq!(post_process(rules), want);
        // Around a diff's markers `=======` stays as it is.
        let diff = "x\n------- SEARCH\na\n=======\nb\n+++++++ REPLACE\n";
        assert_eq!(post_process(diff), diff.trim());
    }
}
