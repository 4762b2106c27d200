//! `replace_in_file`'s engine against Cline v4.0.10's `constructNewFileContent`.
//!
//! `CLINE_CASES` are every case of Cline's two active diff test files,
//! `apps/vscode/src/core/assistant-message/diff.test.ts` and `diff_edge_cases.test.ts` (their
//! inputs and expected results, as facts; `diff_edge_cases2.test.ts` is commented out in Cline).
//! `RULES` are our own cases for each rule of Cline's algorithm those files do not pin down, and
//! `REFUSALS` the cases where Cline silently loses or invents content and we refuse instead
//! (listed in docs/agent.md).

use agent_min::run::tools::diff::{apply, DiffError};

/// What a case expects: the new file, or an error (Cline's, or one of our refusals).
enum Want {
    File(&'static str),
    ClineError,
    Refused(fn(&DiffError) -> bool),
}
use Want::*;

struct Case {
    name: &'static str,
    original: &'static str,
    diff: &'static str,
    want: Want,
}

const fn case(name: &'static str, original: &'static str, diff: &'static str, want: Want) -> Case {
    Case { name, original, diff, want }
}

fn check(cases: &[Case]) {
    let mut failures = Vec::new();
    for c in cases {
        let got = apply(c.original, c.diff);
        let ok = match (&c.want, &got) {
            (File(want), Ok(got)) => got == want,
            (ClineError, Err(e)) => !e.is_refusal(),
            (Refused(is), Err(e)) => e.is_refusal() && is(e),
            _ => false,
        };
        if !ok {
            failures.push(format!("{}: got {got:?}", c.name));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

const CLINE_CASES: &[Case] = &[
    // diff.test.ts, "constructNewFileContent" table
    case("empty file", "", "------- SEARCH\n=======\nnew content\n+++++++ REPLACE", File("new content\n")),
    case("malformed search - mixed symbols", "line1\nline2\nline3", "<<-- SEARCH\nline2\n=======\nreplaced\n+++++++ REPLACE", ClineError),
    case("malformed search - insufficient dashes", "line1\nline2\nline3", "-- SEARCH\nline2\n=======\nreplaced\n+++++++ REPLACE", ClineError),
    case("malformed search - missing space", "line1\nline2\nline3", "-------SEARCH\nline2\n=======\nreplaced\n+++++++ REPLACE", ClineError),
    case("exact match replacement", "line1\nline2\nline3", "------- SEARCH\nline2\n=======\nreplaced\n+++++++ REPLACE", File("line1\nreplaced\nline3")),
    case("line-trimmed match replacement", "line1\n line2 \nline3", "------- SEARCH\nline2\n=======\nreplaced\n+++++++ REPLACE", File("line1\nreplaced\nline3")),
    case("block anchor match replacement", "line1\nstart\nmiddle\nend\nline5", "------- SEARCH\nstart\nmiddle\nend\n=======\nreplaced\n+++++++ REPLACE", File("line1\nreplaced\nline5")),
    case("incremental processing", "line1\nline2\nline3", "------- SEARCH\nline2\n=======\nreplaced\n\n+++++++ REPLACE", File("line1\nreplaced\n\nline3")),
    case("final chunk with remaining content", "line1\nline2\nline3", "------- SEARCH\nline2\n=======\nreplaced\n+++++++ REPLACE", File("line1\nreplaced\nline3")),
    case("multiple ordered replacements", "First\nSecond\nThird\nFourth", "------- SEARCH\nFirst\n=======\n1st\n+++++++ REPLACE\n\n------- SEARCH\nThird\n=======\n3rd\n+++++++ REPLACE", File("1st\nSecond\n3rd\nFourth")),
    case("replace then delete", "line1\nline2\nline3\nline4", "------- SEARCH\nline2\n=======\nreplaced\n+++++++ REPLACE\n\n------- SEARCH\nline4\n=======\n+++++++ REPLACE", File("line1\nreplaced\nline3\n")),
    case("delete then replace", "line1\nline2\nline3\nline4", "------- SEARCH\nline1\n=======\n+++++++ REPLACE\n\n------- SEARCH\nline3\n=======\nreplaced\n+++++++ REPLACE", File("line2\nreplaced\nline4")),
    case("malformed diff - missing separator", "line1\nline2\nline3", "------- SEARCH\nline2\n+++++++ REPLACE\nreplaced", ClineError),
    case("malformed diff - trailing space on separator", "line1\nline2\nline3", "------- SEARCH\nline2\n======= \nreplaced\n+++++++ REPLACE", ClineError),
    case("malformed diff - double replace markers", "line1\nline2\nline3", "------- SEARCH\nline2\n+++++++ REPLACE\nfirst replacement\n+++++++ REPLACE", ClineError),
    case("malformed diff - malformed separator with dashes", "line1\nline2\nline3", "------- SEARCH\nline2\n------- =======\nreplaced\n+++++++ REPLACE", ClineError),
    // diff.test.ts, the single cases
    case("should throw error when no match found", "line1\nline2\nline3", "------- SEARCH\nnon-existent\n=======\nreplaced\n+++++++ REPLACE", ClineError),
    case("missing final REPLACE marker when isFinal is true", "line1\nline2\nline3", "------- SEARCH\nline2\n=======\nreplaced", File("line1\nreplaced\nline3")),
    case("missing final REPLACE marker with multiple lines of replacement", "function test() {\n\tconst a = 1;\n\treturn a;\n}", "------- SEARCH\n\tconst a = 1;\n\treturn a;\n=======\n\tconst a = 42;\n\tconsole.log('updated');\n\treturn a;", File("function test() {\n\tconst a = 42;\n\tconsole.log('updated');\n\treturn a;\n}")),
    // diff.test.ts, "Diff Format Out of Order Cases"
    case("out-of-order replacements with different positions", "first\nsecond\nthird\nfourth\n", "------- SEARCH\nfourth\n=======\nnew fourth\n+++++++ REPLACE\n------- SEARCH\nsecond\n=======\nnew second\n+++++++ REPLACE", File("first\nnew second\nthird\nnew fourth\n")),
    case("multiple out-of-order replacements", "one\ntwo\nthree\nfour\nfive\n", "------- SEARCH\nfour\n=======\nfourth\n+++++++ REPLACE\n------- SEARCH\ntwo\n=======\nsecond\n+++++++ REPLACE\n------- SEARCH\nfive\n=======\nfifth\n+++++++ REPLACE", File("one\nsecond\nthree\nfourth\nfifth\n")),
    case("out-of-order replacements with indentation", "function test() {\n\tconst a = 1;\n\tconst b = 2;\n\tconst c = 3;\n\n}", "------- SEARCH\n\tconst c = 3;\n=======\n\tconst c = 30;\n+++++++ REPLACE\n------- SEARCH\n\tconst a = 1;\n=======\n\tconst a = 10;\n+++++++ REPLACE", File("function test() {\n\tconst a = 10;\n\tconst b = 2;\n\tconst c = 30;\n\n}")),
    case("out-of-order replacements with empty lines", "header\n\nbody\n\nfooter\n", "------- SEARCH\nfooter\n=======\nnew footer\n+++++++ REPLACE\n------- SEARCH\n\nbody\n\n=======\nnew body content\n+++++++ REPLACE", File("header\nnew body content\nnew footer\n")),
    // diff_edge_cases.test.ts
    case("SEARCH prefix symbols - less than 7", "before\ncontent\nafter", "----- SEARCH\ncontent\n=======\nnew content\n+++++++ REPLACE", File("before\nnew content\nafter")),
    case("SEARCH prefix symbols - more than 7", "before\ncontent\nafter", "----------- SEARCH\ncontent\n=======\nnew content\n+++++++ REPLACE", File("before\nnew content\nafter")),
    case("SEARCH - less than 7 and REPLACE = less than 7", "before\ncontent\nafter", "----- SEARCH\ncontent\n=====\nnew content\n+++++++ REPLACE", File("before\nnew content\nafter")),
    case("SEARCH - less than 7 and REPLACE = more than 7", "before\ncontent\nafter", "----- SEARCH\ncontent\n========\nnew content\n+++++++ REPLACE", File("before\nnew content\nafter")),
    case("SEARCH - more than 7 and REPLACE = more than 7", "before\ncontent\nafter", "----------- SEARCH\ncontent\n==========\nnew content\n+++++++ REPLACE", File("before\nnew content\nafter")),
    case("SEARCH - more than 7 and REPLACE = less than 7", "before\ncontent\nafter", "----------- SEARCH\ncontent\n=====\nnew content\n+++++++ REPLACE", File("before\nnew content\nafter")),
    case("consecutive SEARCH-REPLACE with second block SEARCH - less than 7", "before\nfirst content\nafter\nsecond content\nend", "------- SEARCH\nfirst content\n=======\nfirst new content\n+++++++ REPLACE\n----- SEARCH\nsecond content\n=======\nsecond new content\n+++++++ REPLACE", File("before\nfirst new content\nafter\nsecond new content\nend")),
    case("consecutive SEARCH-REPLACE with second block SEARCH - less than 7 and REPLACE = less than 7", "before\nfirst content\nafter\nsecond content\nend", "------- SEARCH\nfirst content\n=======\nfirst new content\n+++++++ REPLACE\n----- SEARCH\nsecond content\n=====\nsecond new content\n+++++++ REPLACE", File("before\nfirst new content\nafter\nsecond new content\nend")),
];

#[test]
fn every_case_of_clines_active_diff_tests() {
    assert_eq!(CLINE_CASES.len(), 31);
    check(CLINE_CASES);
}

const RULES: &[Case] = &[
    // Matching order: exact beats line-trimmed even when a trimmed match comes earlier.
    case(
        "exact is tried before line-trimmed",
        "x \nx\n",
        "------- SEARCH\nx\n=======\ny\n+++++++ REPLACE",
        File("x \ny\n"),
    ),
    case(
        "an exact match may start mid-line",
        " x = f(a)\nz\n",
        "------- SEARCH\nf(a)\n=======\nf(b)\n+++++++ REPLACE",
        File(" x = f(b)\nz\n"),
    ),
    case(
        "line-trimmed before block anchor",
        "a\nb\n c\n",
        "------- SEARCH\na\nb\nc\n=======\nX\n+++++++ REPLACE",
        File("X\n"),
    ),
    case(
        "block anchor matches first and last lines only",
        "start\nfn f() {\n    old body\n}\nend\n",
        "------- SEARCH\nfn f() {\n    misremembered\n}\n=======\nfn f() {}\n+++++++ REPLACE",
        File("start\nfn f() {}\nend\n"),
    ),
    // Cline counts SEARCH lines before dropping the empty one after the final "\n": 2 lines qualify.
    case(
        "block anchor applies to two-line SEARCH parts",
        "a\nb\n",
        "------- SEARCH\n a \n b \n=======\nX\n+++++++ REPLACE",
        File("X\n"),
    ),
    case(
        "one-line SEARCH gets no block anchor",
        "a x\n",
        "------- SEARCH\na y\n=======\nX\n+++++++ REPLACE",
        ClineError,
    ),
    case(
        "exact search anywhere comes last (out of order)",
        "one\ntwo\nthree\n",
        "------- SEARCH\nthree\n=======\n3\n+++++++ REPLACE\n------- SEARCH\none\n=======\n1\n+++++++ REPLACE",
        File("1\ntwo\n3\n"),
    ),
    case(
        "repeated text matches after the previous block",
        "x\nmark\nx\n",
        "------- SEARCH\nmark\n=======\nMARK\n+++++++ REPLACE\n------- SEARCH\nx\n=======\nY\n+++++++ REPLACE",
        File("x\nMARK\nY\n"),
    ),
    case("legacy markers", "a\nb\n", "<<<<<<< SEARCH\nb\n=======\nB\n>>>>>>> REPLACE", File("a\nB\n")),
    case("markers may end in >", "a\nb\n", "------- SEARCH>\nb\n=======\nB\n+++++++ REPLACE>", File("a\nB\n")),
    case(
        "text between blocks is ignored",
        "a\nb\n",
        "some words\n------- SEARCH\nb\n=======\nB\n+++++++ REPLACE",
        File("a\nB\n"),
    ),
    // Markers with trailing whitespace or \r are ordinary lines.
    case(
        "SEARCH marker with a trailing space is not a marker",
        "a\nb\n",
        "------- SEARCH \nb\n=======\nB\n+++++++ REPLACE",
        ClineError,
    ),
    case(
        "CRLF markers are not markers",
        "a\nb\n",
        "------- SEARCH\r\nb\r\n=======\r\nB\r\n+++++++ REPLACE",
        ClineError,
    ),
    case(
        "REPLACE marker with \\r is content, then the block is unclosed",
        "a\nb\n",
        "------- SEARCH\nb\n=======\nB\n+++++++ REPLACE\r\nafter",
        File("a\nB\n+++++++ REPLACE\r\nafter\n"),
    ),
    // \r is kept inside SEARCH and REPLACE lines.
    case(
        "CRLF file, CRLF lines",
        "a\r\nb\r\nc\r\n",
        "------- SEARCH\nb\r\n=======\nB\r\n+++++++ REPLACE",
        File("a\r\nB\r\nc\r\n"),
    ),
    case(
        "CRLF file, LF SEARCH matches line-trimmed, LF REPLACE kept",
        "a\r\nb\r\nc\r\n",
        "------- SEARCH\nb\n=======\nB\n+++++++ REPLACE",
        File("a\r\nB\nc\r\n"),
    ),
    // End of file.
    case(
        "a match on a last line without newline gains one",
        "a\nb",
        "------- SEARCH\nb\n=======\nc\n+++++++ REPLACE",
        File("a\nc\n"),
    ),
    case(
        "a SEARCH ending in a blank line at end of file",
        "a\nb\n",
        "------- SEARCH\nb\n\n=======\nB\n+++++++ REPLACE",
        File("a\nB\n"),
    ),
    case("deletion with an empty REPLACE", "a\nb\nc\n", "------- SEARCH\nb\n=======\n+++++++ REPLACE", File("a\nc\n")),
    // A whitespace-only SEARCH on an empty file matches its one empty line: the file becomes the
    // REPLACE text (there is no end of content to append to).
    case("whitespace SEARCH on an empty file", "", "------- SEARCH\n\n=======\nx\n+++++++ REPLACE", File("x\n")),
    case(
        "blank SEARCH on an empty file",
        "",
        "------- SEARCH\n  \n=======\nprint(1)\n+++++++ REPLACE",
        File("print(1)\n"),
    ),
    case(
        "empty SEARCH on a non-empty file is Cline's error",
        "x\n",
        "------- SEARCH\n=======\ny\n+++++++ REPLACE",
        ClineError,
    ),
    // JavaScript's trim: U+FEFF is whitespace, U+0085 is not.
    case("U+FEFF is trimmed", "a\n\u{FEFF}b\n", "------- SEARCH\nb \n=======\nB\n+++++++ REPLACE", File("a\nB\n")),
    case("U+0085 is not trimmed", "a\nb\u{85}\n", "------- SEARCH\nb \n=======\nB\n+++++++ REPLACE", ClineError),
    // The last line Cline drops when it looks like an unfinished marker.
    case(
        "an unfinished REPLACE marker at the end is dropped",
        "a\nb\n",
        "------- SEARCH\nb\n=======\nB\n+++++++ REPL",
        File("a\nB\n"),
    ),
    case(
        "a REPLACE marker with trailing spaces at the end is dropped",
        "a\nb\n",
        "------- SEARCH\nb\n=======\nB\n+++++++ REPLACE  ",
        File("a\nB\n"),
    ),
    // Partial REPLACE markers (Cline's streaming artefacts) are dropped and the block applied.
    case("a bare run of pluses ends the block", "a\nb\n", "------- SEARCH\nb\n=======\nB\n+++", File("a\nB\n")),
    case(
        "a short REPLACE marker ends the block",
        "a\nb\n",
        "------- SEARCH\nb\n=======\nB\n++ REPLACE",
        File("a\nB\n"),
    ),
    case(
        "a REPLACE marker without its space ends the block",
        "a\nb\n",
        "------- SEARCH\nb\n=======\nB\n+++++++REPLACE",
        File("a\nB\n"),
    ),
    case(
        "a REPLACE marker typed with dashes ends the block",
        "a\nb\n",
        "------- SEARCH\nb\n=======\nB\n------- REPLACE",
        File("a\nB\n"),
    ),
    case(
        "a stray line after a closed block is dropped",
        "a\nb\n",
        "------- SEARCH\nb\n=======\nB\n+++++++ REPLACE\n- note",
        File("a\nB\n"),
    ),
    case(
        "a SEARCH without its first line's indentation edits that line",
        "def main():\n    run()\n\nrun()\n",
        "------- SEARCH\nrun()\n=======\nrun(verbose=True)\n+++++++ REPLACE",
        File("def main():\n    run(verbose=True)\n\nrun()\n"),
    ),
    case(
        "a match past the end leaves no line for the next block",
        "",
        "------- SEARCH\n\n=======\nA\n+++++++ REPLACE\n------- SEARCH\n\n=======\nB\n+++++++ REPLACE",
        ClineError,
    ),
    case(
        "unicode content",
        "héllo\nwörld ✓\n",
        "------- SEARCH\nwörld ✓\n=======\n🦀\n+++++++ REPLACE",
        File("héllo\n🦀\n"),
    ),
];

#[test]
fn clines_rules_hold() {
    check(RULES);
}

const REFUSALS: &[Case] = &[
    case(
        "content last line dropped in an unclosed REPLACE",
        "a\nb\n",
        "------- SEARCH\nb\n=======\nB\n- item",
        Refused(|e| matches!(e, DiffError::DroppedLastLine { line } if line == "- item")),
    ),
    case(
        "content last line dropped in an unclosed SEARCH",
        "a\nb\n",
        "------- SEARCH\nb\n=x",
        Refused(|e| matches!(e, DiffError::DroppedLastLine { .. })),
    ),
    case(
        "a Markdown rule as the last line of an unclosed REPLACE is text",
        "a\nb\n",
        "------- SEARCH\nb\n=======\nB\n---",
        Refused(|e| matches!(e, DiffError::DroppedLastLine { .. })),
    ),
    case(
        "SEARCH inside SEARCH restarts the block",
        "a\nb\n",
        "------- SEARCH\na\n------- SEARCH\nb\n=======\nB\n+++++++ REPLACE",
        Refused(|e| *e == DiffError::NestedSearch { block: 1 }),
    ),
    case(
        "SEARCH inside REPLACE drops the block",
        "a\nb\n",
        "------- SEARCH\na\n=======\nA\n------- SEARCH\nb\n=======\nB\n+++++++ REPLACE",
        Refused(|e| *e == DiffError::NestedSearch { block: 1 }),
    ),
    case(
        "======= inside REPLACE is dropped",
        "a\nb\n",
        "------- SEARCH\nb\n=======\ntitle\n=======\n+++++++ REPLACE",
        Refused(|e| *e == DiffError::SeparatorInReplace { block: 1 }),
    ),
    case(
        "an open SEARCH at the end",
        "a\nb\n",
        "------- SEARCH\na\n=======\nA\n+++++++ REPLACE\n------- SEARCH\nb",
        Refused(|e| *e == DiffError::OpenSearch { block: 2 }),
    ),
    case("no blocks at all", "a\n", "just some text", Refused(|e| *e == DiffError::NoBlocks)),
    case(
        "only a malformed marker (trailing space everywhere)",
        "a\n",
        "------- SEARCH \na\n======= \nb\n+++++++ REPLACE ",
        Refused(|e| *e == DiffError::NoBlocks),
    ),
    case(
        "overlapping blocks",
        "a\nb\nc\n",
        "------- SEARCH\na\nb\n=======\nx\n+++++++ REPLACE\n------- SEARCH\nb\nc\n=======\ny\n+++++++ REPLACE",
        Refused(|e| *e == DiffError::Overlap { block: 2 }),
    ),
    case(
        "the same block twice",
        "a\nb\nc\n",
        "------- SEARCH\nb\n=======\nB\n+++++++ REPLACE\n------- SEARCH\nb\n=======\nB\n+++++++ REPLACE",
        Refused(|e| *e == DiffError::Overlap { block: 2 }),
    ),
    case(
        "a whitespace-only SEARCH appending at the end",
        "a\nb\n",
        "------- SEARCH\n   \n=======\nappended\n+++++++ REPLACE",
        Refused(|e| *e == DiffError::WhitespaceSearchAtEnd { block: 1 }),
    ),
];

/// Where Cline's exact match starts inside a line though the same text starts a later line, it
/// edits the wrong line (and reports success); a SEARCH part is whole lines, so the line that
/// starts with it is edited (listed in docs/agent.md).
const WHOLE_LINES: &[Case] = &[
    case(
        "a line that ends with the SEARCH is not the line it names",
        "max_count = 0\ncount = 0\n",
        "------- SEARCH\ncount = 0\n=======\ncount = 10\n+++++++ REPLACE",
        File("max_count = 0\ncount = 10\n"),
    ),
    case(
        "a blank SEARCH line is a blank line, not a line's end",
        "import os\n\ndef f():\n    pass\n",
        "------- SEARCH\n\n=======\n# added\n+++++++ REPLACE",
        File("import os\n# added\ndef f():\n    pass\n"),
    ),
    case(
        "the first line-start place after the last block's match",
        "a x\nx\nx\n",
        "------- SEARCH\nx\n=======\ny\n+++++++ REPLACE\n------- SEARCH\nx\n=======\nz\n+++++++ REPLACE",
        File("a x\ny\nz\n"),
    ),
];

#[test]
fn a_search_names_whole_lines() {
    check(WHOLE_LINES);
}

/// Blocks in file order whose exact match starts inside a line with no line starting with it
/// later: each look for a line start goes to the file's end, and is counted against the bound
/// (100,000 of them took 6 s, 200,000 24 s).
#[test]
fn looks_for_a_line_start_are_bounded_too() {
    let original = "x = a\n".repeat(20_000);
    let diff = "------- SEARCH\na\n=======\nb\n+++++++ REPLACE\n".repeat(20_000);
    assert!(matches!(apply(&original, &diff), Err(DiffError::TooMuchSearching { .. })));
}

#[test]
fn where_cline_loses_content_we_refuse() {
    check(REFUSALS);
}

#[test]
fn clines_error_texts() {
    let no_match = apply("a\n", "------- SEARCH\nzzz  \n=======\nZ\n+++++++ REPLACE").unwrap_err();
    assert_eq!(no_match.to_string(), "The SEARCH block:\nzzz\n...does not match anything in the file.");
    let malformed = apply("a\n", "------- SEARCH\na\n+++++++ REPLACE").unwrap_err();
    assert_eq!(malformed.to_string(), "The SEARCH block:\na\n...is malformatted.");
    let empty = apply("a\n", "------- SEARCH\n=======\nb\n+++++++ REPLACE").unwrap_err();
    assert!(empty.to_string().starts_with("Empty SEARCH block detected with non-empty file."), "{empty}");
    assert!(!no_match.is_refusal() && !malformed.is_refusal() && !empty.is_refusal());
}
