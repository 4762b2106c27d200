//! A PDF's text (Cline: pdf-parse, pdf.js underneath; here `pdf-extract`), laid out as
//! pdf-parse lays it out: each page's text after a blank line (`\n\n`).
//!
//! The file is untrusted and the parser is not hardened: it panics on some malformed files,
//! and nothing bounds its time or memory. So it runs in a child — agent-min itself, as
//! `agent-min __pdf-text` — under the spawner's `Policy::Extractor` (no environment, a
//! minute of CPU time, 4 GiB of address space, killed with the agent). The child reads the
//! file from its stdin, gives up all file-system access (Landlock) before parsing, and answers
//! on its stdout with one JSON value. A file it panics, loops or swells on is refused with an
//! error; the agent goes on.

use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitCode, Stdio};

use serde::{Deserialize, Serialize};

use crate::run::spawn::{self, Policy};

/// The child's command: `agent-min __pdf-text` (not for people; not in `--help`).
pub(crate) const CHILD_COMMAND: &str = "__pdf-text";

/// Most bytes of answer taken from the child (a PDF's text rarely exceeds a few MB).
const MAX_ANSWER: u64 = 64 << 20;

/// What the child writes to its stdout.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Answer {
    /// Each page's text, as `pdf-extract` gives it.
    Pages(Vec<String>),
    /// The parser's error.
    Error(String),
}

/// The document's text.
pub(crate) fn text(bytes: &[u8]) -> Result<String, String> {
    match in_child(bytes) {
        Ok(pages) => Ok(layout(&pages)),
        Err(why) => Err(format!("Failed to extract text from PDF: {why}")),
    }
}

/// The pages, from a child that parsed `bytes`; why not, when it could not.
fn in_child(bytes: &[u8]) -> Result<Vec<String>, String> {
    // `/proc/self/exe` is this very executable, even when its file has since been replaced.
    let mut child = spawn::command("/proc/self/exe", Policy::Extractor)?
        .arg(CHILD_COMMAND)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("the extractor did not start: {e}"))?;
    // The child reads all of its input before it writes: writing it all first cannot block for
    // good. A child that ended early makes this fail; its exit status says why.
    let _ = child.stdin.take().map(|mut i| i.write_all(bytes));
    let mut answer = Vec::new();
    if let Some(out) = child.stdout.take() {
        let _ = out.take(MAX_ANSWER + 1).read_to_end(&mut answer);
    }
    if answer.len() as u64 > MAX_ANSWER {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("its text is larger than {} MiB", MAX_ANSWER >> 20));
    }
    let status = child.wait().map_err(|e| format!("the extractor was lost: {e}"))?;
    match (status.signal(), serde_json::from_slice::<Answer>(&answer)) {
        (None, Ok(Answer::Pages(pages))) if status.success() => Ok(pages),
        (None, Ok(Answer::Error(e))) => Err(e),
        // Its CPU time limit is the only reason it gets `SIGXCPU`.
        (Some(libc::SIGXCPU), _) => Err("reading it took more than a minute of CPU time".to_string()),
        _ => Err("the file could not be parsed".to_string()),
    }
}

/// `agent-min __pdf-text`: the child's side. Reads the file (at most read_file's limit for documents) from
/// stdin, gives up file access, parses, answers.
pub(crate) fn child_main() -> ExitCode {
    let mut input = Vec::new();
    let limit = crate::run::tools::read::MAX_DOCUMENT_BYTES;
    if std::io::stdin().lock().take(limit + 1).read_to_end(&mut input).is_err() || input.len() as u64 > limit {
        return ExitCode::from(2);
    }
    crate::run::sandbox::rules::give_up_files();
    let answer = match pdf_extract::extract_text_from_mem_by_pages(&input) {
        Ok(pages) => Answer::Pages(pages),
        Err(e) => Answer::Error(e.to_string()),
    };
    let mut out = std::io::stdout().lock();
    match serde_json::to_writer(&mut out, &answer).map_err(std::io::Error::from).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(2),
    }
}

/// pdf-parse's `"\n\n" + page` for each page. pdf-parse starts a line where the text's
/// vertical position changes, never leaving a blank line inside a page: pdf-extract's blank
/// lines (for larger gaps) and a page's leading and trailing breaks are removed.
fn layout(pages: &[String]) -> String {
    let breaks: &[char] = &['\n', '\r', '\u{c}'];
    let mut out = String::new();
    for page in pages {
        out.push_str("\n\n");
        let lines = page.split(breaks).filter(|l| !l.is_empty());
        out.push_str(&lines.collect::<Vec<_>>().join("\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_follow_a_blank_line_as_pdf_parse_gives_them() {
        assert_eq!(layout(&["\n\nOne.\n\nTwo.\n".into(), "\nThree.\n\u{c}".into()]), "\n\nOne.\nTwo.\n\nThree.");
    }

    #[test]
    fn the_childs_answer_is_one_json_value() {
        let pages = serde_json::to_string(&Answer::Pages(vec!["a".into()])).unwrap();
        assert_eq!(pages, r#"{"pages":["a"]}"#);
        assert!(matches!(serde_json::from_str(r#"{"error":"bad"}"#), Ok(Answer::Error(e)) if e == "bad"));
    }
}
