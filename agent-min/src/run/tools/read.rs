//! `read_file(path, start_line?, end_line?)` as Cline's `ReadFileToolHandler` answers it: the
//! text cut at 400 KB with Cline's `[FILE TRUNCATED: …]` notice, `N | line` labels on at most
//! 1000 lines from `start_line`, Cline's `(Showing lines …)` / `(File has N lines total.)` note,
//! and its `[File already read]` / `[DUPLICATE READ]` prefixes when the same unchanged file is
//! read again. Binary files, FIFOs and devices are refused. An image (`.png`, `.jpg`, `.jpeg`,
//! `.webp`) is read as Cline reads one (`image.rs`): `Successfully read image`, and the image
//! itself for the next user message.

use std::collections::HashMap;
use std::path::Path;
use std::time::SystemTime;

use crate::run::tools::fsx;

use super::{check_path, tool_error, Access, Call, Ctx, Outcome};

/// Lines shown when no `end_line` is given (Cline's `DEFAULT_MAX_LINES`).
pub(crate) const MAX_LINES: usize = 1000;

/// Cline's `fileReadCache`: how many times each part of an unchanged file was read in this task.
///
/// Cline counts reads by path alone, so a model paging through a long file as its own result
/// asks (`Use start_line=1001 to continue reading.`) is told of lines it never saw that it
/// already has them, and the third page that it should "use the information you already have";
/// here a read counts as a repeat only when it shows the same lines.
#[derive(Debug, Default, Clone)]
pub(crate) struct ReadCache {
    reads: HashMap<(String, String), (u32, Option<SystemTime>)>,
}

impl ReadCache {
    /// Counts a successful read of `shown` (the lines shown, or an image's description) of
    /// `abs` as it is now; returns the count (1 for a fresh read).
    fn count(&mut self, abs: &Path, shown: &str) -> u32 {
        let mtime = std::fs::metadata(abs).and_then(|m| m.modified()).ok();
        let key = (abs.to_string_lossy().to_lowercase(), shown.to_string());
        let entry = self.reads.entry(key).or_insert((0, mtime));
        if entry.1 != mtime {
            *entry = (0, mtime);
        }
        entry.0 += 1;
        entry.0
    }

    /// Forgets `abs` (it was just edited), as Cline does after a save.
    pub(crate) fn forget(&mut self, abs: &Path) {
        let path = abs.to_string_lossy().to_lowercase();
        self.reads.retain(|(p, _), _| *p != path);
    }

    /// Forgets every read: a command may have changed any file, in ways an unchanged mtime
    /// does not show (Cline clears its cache after every command that ran).
    pub(crate) fn clear(&mut self) {
        self.reads.clear();
    }
}

pub(super) fn run(call: &Call, ctx: &mut Ctx<'_>) -> Outcome {
    let path = call.param("path").unwrap_or_default();
    let start = call.param("start_line").and_then(js_parse_int);
    let end = call.param("end_line").and_then(js_parse_int);
    ctx.term.tool("read_file", path);
    let r = match check_path(ctx, path, Access::Read, &format!("Read {path}"), None) {
        Ok(r) => r,
        Err(o) => return o,
    };
    let read = match super::image::is_image(&r.abs) {
        true => super::image::read(&r.abs, ctx.images).map(Read::Image),
        false => extract_text(&r.abs).and_then(|t| from_buffer(ctx, &r.abs, t)).map(Read::Text),
    };
    // Counted for an image only: the conversation's images are summed over every message.
    if let Ok(Read::Image(image)) = &read {
        let held = super::image::held_with(ctx.images_held, &ctx.memory.images);
        if let Some(why) = super::image::past_held(held, image.data.len()) {
            let e = format!(
                "Error reading file: {why}. Use what you learned from the images already read, or read a smaller image."
            );
            ctx.term.outcome(false, &e);
            // Nothing the model did wrong: not counted as a mistake.
            return Outcome::Failure { text: tool_error(&e), mistake: false };
        }
    }
    let (body, summary) = match read {
        Ok(Read::Text(text)) => with_line_numbers(&text, start, end),
        // No line numbers for an image (Cline's `buildReadResponse`); the image goes after the
        // results, in the same user message (Cline's `userMessageContent`), on every read of it.
        Ok(Read::Image(image)) => {
            let summary = image.describe();
            ctx.memory.images.push(image);
            ("Successfully read image".to_string(), summary)
        }
        Err(e) => {
            let e = format!("Error reading file: {e}");
            ctx.term.outcome(false, &e);
            // Cline counts a failed read as a mistake.
            return Outcome::Failure { text: tool_error(&e), mistake: true };
        }
    };
    ctx.term.outcome(true, &summary);
    ctx.memory.watched.saw(path, &r.abs);
    let prefix = match ctx.memory.reads.count(&r.abs, &summary) {
        1 => None,
        n if n >= 3 => Some(format!(
            "[DUPLICATE READ] You have already read '{path}' {n} times in this conversation. The content has not changed since your last read. Please use the information you already have and proceed with your task."
        )),
        _ => Some(format!("[File already read] The file '{path}' was already read earlier in this conversation. Returning content:")),
    };
    match prefix {
        Some(p) => Outcome::Repeated(format!("{p}\n{body}")),
        None => Outcome::Success(body),
    }
}

/// What a read gave.
enum Read {
    /// The file's text (not yet cut into numbered lines).
    Text(String),
    /// An image.
    Image(super::image::Image),
}

/// A text file's contents as the editor's buffer holds them (unsaved changes included), when
/// an editor reads files for the agent; documents are always extracted from the disk.
fn from_buffer(ctx: &mut Ctx<'_>, abs: &Path, from_disk: String) -> Result<String, String> {
    let ext = abs.extension().map(|e| format!(".{}", e.to_string_lossy().to_lowercase())).unwrap_or_default();
    if is_document(&ext) {
        return Ok(from_disk);
    }
    match ctx.term.buffer_text(abs) {
        None => Ok(from_disk),
        Some(Ok(text)) => Ok(truncate_content(text)),
        Some(Err(e)) => Err(format!("the editor could not read it: {e}")),
    }
}

/// JavaScript's `Number.parseInt(s, 10)`: optional whitespace and sign, then digits.
fn js_parse_int(s: &str) -> Option<i64> {
    let t = s.trim_start_matches(parser_core::is_js_whitespace);
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let n: String = digits.chars().take_while(char::is_ascii_digit).take(18).collect();
    let v: i64 = n.parse().ok()?;
    Some(if neg { -v } else { v })
}

/// Cline's limit on reading a text file (`20 * 1000 * 1024` bytes).
pub(crate) const MAX_READ_BYTES: u64 = 20 * 1000 * 1024;

/// agent-min's limit on a document read for its text (PDF, DOCX, XLSX, `.ipynb`). Cline
/// applies none (its 20 MB is for other files); the whole file is held and parsed in memory,
/// so there is one, generous.
pub(crate) const MAX_DOCUMENT_BYTES: u64 = 100 << 20;

/// The documents read for their text (Cline's `callTextExtractionFunctions` cases), by
/// lower-case dotted extension.
fn is_document(ext: &str) -> bool {
    matches!(ext, ".pdf" | ".docx" | ".ipynb" | ".xlsx")
}

/// The file's text, as Cline's `extractTextFromFile` gives it: DOCX, `.ipynb` and XLSX as
/// text, legacy encodings decoded (with the `documents` feature), PDF as text (with `pdf`; a
/// build without the feature a PDF, DOCX or XLSX needs refuses it naming the feature); refused
/// when it is not a regular file, binary, or over Cline's 20 MB (a document: over
/// `MAX_DOCUMENT_BYTES`); cut at Cline's 400 KB with Cline's notice.
pub fn extract_text(abs: &Path) -> Result<String, String> {
    if !abs.exists() {
        return Err(format!("File not found: {}", abs.display()));
    }
    text_of(abs, read_bytes(abs)?)
}

/// The bytes of the file at `abs` (resolved), read once from one descriptor, at most Cline's
/// 20 MB (a document: [`MAX_DOCUMENT_BYTES`]), with [`extract_text`]'s refusals.
pub(crate) fn read_bytes(abs: &Path) -> Result<Vec<u8>, String> {
    let ext = abs.extension().map(|e| format!(".{}", e.to_string_lossy().to_lowercase())).unwrap_or_default();
    let limit = if is_document(&ext) { MAX_DOCUMENT_BYTES } else { MAX_READ_BYTES };
    // `abs` is resolved (every link followed, checked to be where it may be read): opened
    // without following a link, so a link swapped in since the check is refused, not read.
    fsx::read_checked(abs, limit).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidInput if e.to_string().starts_with("is too large") && is_document(&ext) => {
            format!(
                "File is too large to read into context (agent-min reads documents of at most {} MiB).",
                limit >> 20
            )
        }
        std::io::ErrorKind::InvalidInput if e.to_string().starts_with("is too large") => {
            "File is too large to read into context.".to_string()
        }
        std::io::ErrorKind::InvalidInput => format!("{} {e}.", abs.display()),
        // Node's words, as Cline's `fs.readFile` fails (`EACCES: permission denied, open '…'`).
        _ => super::fsx::node_error(&e, "open", abs),
    })
}

/// [`extract_text`] of bytes already read from `abs` (its extension decides how).
pub(crate) fn text_of(abs: &Path, bytes: Vec<u8>) -> Result<String, String> {
    let ext = abs.extension().map(|e| format!(".{}", e.to_string_lossy().to_lowercase())).unwrap_or_default();
    if let Some(feature) = left_out(&ext) {
        return Err(crate::run::built::not_built_in(feature, &format!("Reading the text of {ext} files")));
    }
    #[cfg(feature = "documents")]
    let document = super::documents::extract(&ext, &bytes);
    #[cfg(not(feature = "documents"))]
    let document: Option<Result<String, String>> = None;
    if let Some(text) = document {
        return text.map(truncate_content);
    }
    let has_nul = bytes[..bytes.len().min(8192)].contains(&0);
    let text = match String::from_utf8(bytes) {
        // Without its BOM, as Cline's iconv decodes it.
        Ok(t) if !has_nul && t.starts_with('\u{FEFF}') => super::doc_form::without_bom(&t).to_string(),
        Ok(t) if !has_nul => t,
        #[cfg(feature = "documents")]
        Err(e) => match super::documents::decode_legacy(e.as_bytes()) {
            Some(t) => t,
            None => return Err(format!("Cannot read text for file type: {ext}")),
        },
        _ => return Err(format!("Cannot read text for file type: {ext}")),
    };
    Ok(truncate_content(text))
}

/// The cargo feature that reads documents with extension `ext` (lower-case, dotted), when this
/// build left it out: such a file is refused naming it, not read as a file without text.
fn left_out(ext: &str) -> Option<&'static str> {
    match ext {
        ".pdf" if !cfg!(feature = "pdf") => Some("pdf"),
        ".docx" | ".xlsx" if !cfg!(feature = "documents") => Some("documents"),
        _ => None,
    }
}

/// Runs agent-min's internal document command when this process was started as one (by
/// [`extract_text`], in a child: `agent-min __pdf-text`), and gives its exit status; `None`
/// otherwise. Every program that reads documents with [`extract_text`] calls it first thing.
pub fn as_extractor() -> Option<std::process::ExitCode> {
    #[cfg(feature = "pdf")]
    if std::env::args_os().nth(1).is_some_and(|a| a == super::documents::PDF_CHILD_COMMAND) {
        return Some(super::documents::pdf_child_main());
    }
    None
}

/// Cline's `truncateContent` (`prompt/content_limits.rs`). A key the cut went through is masked.
fn truncate_content(text: String) -> String {
    match crate::run::prompt::content_limits::cut(&text) {
        None => text,
        Some((at, note)) => format!("{}{note}", crate::run::ui::redact::cut_end(&text[..at])),
    }
}

const TRUNCATED_MARKER: &str = "\n\n---\n\n[FILE TRUNCATED:";

/// Cline's `formatFileContentWithLineNumbers`; returns (text for the model, short summary).
pub(crate) fn with_line_numbers(content: &str, start: Option<i64>, end: Option<i64>) -> (String, String) {
    if content.is_empty() {
        return (String::new(), "empty file".to_string());
    }
    let (body, notice) = match content.find(TRUNCATED_MARKER) {
        Some(i) => content.split_at(i),
        None => (content, ""),
    };
    let mut lines: Vec<&str> = body.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    if body.ends_with('\n') {
        lines.pop();
    }
    let total = lines.len() as i64;
    let requested_start = start.unwrap_or(1).max(1);
    let requested_end = match end {
        Some(e) => e.max(1),
        None => requested_start + MAX_LINES as i64 - 1,
    };
    let swap = end.is_some() && requested_end < requested_start;
    let first = if swap { requested_end } else { requested_start };
    let last = total.min(if swap { requested_start } else { requested_end });
    let shown = if first <= last { &lines[(first - 1) as usize..last as usize] } else { &[][..] };
    let labeled: Vec<String> = shown.iter().enumerate().map(|(i, l)| format!("{} | {l}", first + i as i64)).collect();
    let suffix = if !notice.is_empty() {
        notice.to_string()
    } else if last < total {
        format!("\n\n(Showing lines {first}-{last} of {total} total. Use start_line={} to continue reading.)", last + 1)
    } else {
        format!("\n\n(File has {total} lines total.)")
    };
    (format!("{}{suffix}", labeled.join("\n")), format!("lines {first}-{last} of {total}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(content: &str, start: Option<i64>, end: Option<i64>) -> String {
        with_line_numbers(content, start, end).0
    }

    /// A file that cannot be opened is named in Node's words, as Cline's `fs.readFile` fails:
    /// the code, what it means, the call and the path (the running user may be root, whom no
    /// mode keeps out, so a file gone after its check stands in for an unreadable one).
    #[test]
    fn a_failed_open_is_worded_as_node_words_it() {
        let d = tempfile::tempdir().unwrap();
        let gone = d.path().join("gone.txt");
        assert_eq!(read_bytes(&gone), Err(format!("ENOENT: no such file or directory, open '{}'", gone.display())));
        let denied = std::io::Error::from_raw_os_error(libc::EACCES);
        assert_eq!(
            super::super::fsx::node_error(&denied, "open", &gone),
            format!("EACCES: permission denied, open '{}'", gone.display())
        );
    }

    #[test]
    fn labels_lines_as_cline_does() {
        assert_eq!(
            numbered("  indented\r\nsecond\n", None, None),
            "1 |   indented\n2 | second\n\n(File has 2 lines total.)"
        );
        assert_eq!(
            numbered("a\nb\nc", Some(2), Some(2)),
            "2 | b\n\n(Showing lines 2-2 of 3 total. Use start_line=3 to continue reading.)"
        );
        // end before start: Cline swaps them.
        assert_eq!(numbered("a\nb\nc", Some(3), Some(2)), "2 | b\n3 | c\n\n(File has 3 lines total.)");
        // start past the end: no lines, the total.
        assert_eq!(numbered("a\n", Some(5), None), "\n\n(File has 1 lines total.)");
        assert_eq!(numbered("", None, None), "");
    }

    #[test]
    fn shows_1000_lines_then_says_where_to_continue() {
        let body: String = (1..=2500).map(|i| format!("l{i}\n")).collect();
        let t = numbered(&body, None, None);
        assert_eq!(t.lines().filter(|l| l.contains(" | ")).count(), 1000);
        assert!(t.contains(
            "\n1000 | l1000\n\n(Showing lines 1-1000 of 2500 total. Use start_line=1001 to continue reading.)"
        ));
        assert!(numbered(&body, Some(2400), None).starts_with("2400 | l2400\n"));
    }

    #[test]
    fn parses_line_numbers_as_javascript_does() {
        assert_eq!(js_parse_int(" 12abc"), Some(12));
        assert_eq!(js_parse_int("-3"), Some(-3));
        assert_eq!(js_parse_int("x"), None);
    }

    #[test]
    fn cuts_at_400_kb_with_clines_notice() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("one-line.min.js");
        std::fs::write(&p, "é".repeat(500 * 1024)).unwrap();
        let t = extract_text(&p).unwrap();
        assert!(t.ends_with("[FILE TRUNCATED: This content is 500.0 KB but only the first 400.0 KB is shown (100.0 KB truncated). Use search_files to find specific patterns, or execute_command with grep/head/tail for targeted reading.]"), "{}", &t[t.len() - 300..]);
        let shown = numbered(&t, None, None);
        assert!(shown.starts_with("1 | éé") && shown.contains("\n\n---\n\n[FILE TRUNCATED:"));
        assert!(!shown.contains("(File has"));
    }

    /// Cline's iconv drops a UTF-8 BOM (only the leading one).
    #[test]
    fn a_utf8_bom_is_not_part_of_the_text() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("bom.txt");
        std::fs::write(&p, "\u{FEFF}hello\n\u{FEFF}\n").unwrap();
        let t = extract_text(&p).unwrap();
        assert_eq!(t, "hello\n\u{FEFF}\n");
        assert!(numbered(&t, None, None).starts_with("1 | hello\n"));
    }

    /// Run by `.ci/run fast` in the minimal build and in one with `documents` but not `pdf`.
    #[test]
    fn a_document_this_build_cannot_read_is_refused_naming_its_feature() {
        let d = tempfile::tempdir().unwrap();
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/documents");
        let kinds = [
            ("two-pages.pdf", "pdf", cfg!(feature = "pdf")),
            ("report.docx", "documents", cfg!(feature = "documents")),
            ("sales.xlsx", "documents", cfg!(feature = "documents")),
        ];
        for (name, feature, built) in kinds {
            let p = d.path().join(name);
            std::fs::copy(fixtures.join(name), &p).unwrap();
            let read = extract_text(&p);
            let wanted = format!("it was built without the cargo feature `{feature}`");
            if !built {
                let e = read.unwrap_err();
                assert!(e.starts_with("Reading the text of .") && e.contains(&wanted), "{name}: {e}");
            } else if feature != "pdf" {
                // (A PDF is read by a child, `agent-min __pdf-text`, which a unit test binary is
                // not: run_e2e's document test reads it.)
                assert!(read.is_ok_and(|t| !t.is_empty()), "{name}");
            }
        }
        assert_eq!(left_out(".pdf").is_some(), !cfg!(feature = "pdf"));
        assert_eq!(left_out(".docx").is_some(), !cfg!(feature = "documents"));
        assert_eq!(left_out(".xlsx").is_some(), !cfg!(feature = "documents"));
        assert_eq!(left_out(".txt"), None);
    }

    #[cfg(feature = "documents")]
    #[test]
    fn legacy_encodings_are_decoded_and_clines_size_limit_holds() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("menu.txt");
        std::fs::write(&p, b"caf\xe9\n").unwrap();
        assert_eq!(extract_text(&p).unwrap(), "café\n");
        let big = d.path().join("big.txt");
        std::fs::write(&big, vec![b'a'; MAX_READ_BYTES as usize + 1]).unwrap();
        assert_eq!(extract_text(&big).unwrap_err(), "File is too large to read into context.");
        std::fs::write(&big, vec![b'a'; MAX_READ_BYTES as usize]).unwrap();
        assert!(extract_text(&big).unwrap().contains("[FILE TRUNCATED:"));
    }

    /// Cline's 20 MB is for text files only: a larger notebook is read (up to agent-min's own
    /// bound for documents).
    #[cfg(feature = "documents")]
    #[test]
    fn documents_over_20_mb_are_read_up_to_their_own_bound() {
        let d = tempfile::tempdir().unwrap();
        let nb = d.path().join("big.ipynb");
        let source = format!("\"{}\"", "a".repeat(MAX_READ_BYTES as usize));
        let json = format!(
            r#"{{"cells":[{{"cell_type":"code","source":[{source}],"outputs":[]}}],"metadata":{{}},"nbformat":4,"nbformat_minor":5}}"#
        );
        std::fs::write(&nb, json).unwrap();
        assert!(extract_text(&nb).unwrap().contains("[FILE TRUNCATED:"));
        std::fs::write(&nb, vec![b' '; MAX_DOCUMENT_BYTES as usize + 1]).unwrap();
        assert_eq!(
            extract_text(&nb).unwrap_err(),
            "File is too large to read into context (agent-min reads documents of at most 100 MiB)."
        );
    }

    #[allow(unsafe_code)] // mkfifo(3): the FIFO this test needs
    #[test]
    fn refuses_fifos_and_devices_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("pipe");
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo takes a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(extract_text(&p).unwrap_err().contains("not a regular file"));
        assert!(extract_text(Path::new("/dev/zero")).unwrap_err().contains("not a regular file"));
    }

    /// The path is resolved and checked before the read: a file swapped for a link since (to a
    /// secret outside the workspace, say) is refused, not followed.
    #[test]
    fn a_file_swapped_for_a_link_after_the_check_is_not_read() {
        let d = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret.txt");
        std::fs::write(&secret, "the secret\n").unwrap();
        let p = d.path().canonicalize().unwrap().join("notes.txt");
        std::fs::write(&p, "notes\n").unwrap();
        assert_eq!(extract_text(&p).unwrap(), "notes\n");
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink(&secret, &p).unwrap();
        let e = extract_text(&p).unwrap_err();
        assert!(e.contains("is a symbolic link") && e.contains("nothing was read"), "{e}");
        // A directory on the way swapped for a link is refused too.
        let sub = d.path().canonicalize().unwrap().join("sub");
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(sub.join("f.txt"), "f\n").unwrap();
        std::fs::rename(&sub, d.path().join("real")).unwrap();
        std::os::unix::fs::symlink(outside.path(), &sub).unwrap();
        std::fs::write(outside.path().join("f.txt"), "outside\n").unwrap();
        let e = extract_text(&sub.join("f.txt")).unwrap_err();
        assert!(e.contains("now a symbolic link") && e.contains("nothing was read"), "{e}");
    }

    #[test]
    fn refuses_binary_missing_and_directories() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("b.bin");
        std::fs::write(&p, [0x7f, b'E', b'L', b'F', 0, 1, 2]).unwrap();
        assert_eq!(extract_text(&p).unwrap_err(), "Cannot read text for file type: .bin");
        assert!(extract_text(d.path()).unwrap_err().contains("is a directory"));
        let missing = d.path().join("missing");
        assert_eq!(extract_text(&missing).unwrap_err(), format!("File not found: {}", missing.display()));
    }

    #[test]
    fn repeated_reads_of_an_unchanged_file_are_counted_and_an_edit_resets() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, "x").unwrap();
        let mut c = ReadCache::default();
        let all = "lines 1-1 of 1";
        assert_eq!([c.count(&p, all), c.count(&p, all), c.count(&p, all)], [1, 2, 3]);
        c.forget(&p);
        assert_eq!(c.count(&p, all), 1);
    }

    /// A model paging through a long file as the result itself asks is shown each page as a
    /// fresh read (Cline says "[DUPLICATE READ] … use the information you already have" of the
    /// third page, lines the model never saw); reading a page again is still a repeat.
    #[test]
    fn paging_through_a_long_file_is_not_a_repeated_read() {
        use super::super::testutil::{call, with_ctx};
        let d = tempfile::tempdir().unwrap();
        let text: String = (1..=2500).map(|i| format!("line {i}\n")).collect();
        std::fs::write(d.path().join("long.txt"), text).unwrap();
        let ws = crate::run::tools::paths::Workspace::new(d.path()).unwrap();
        let page = |start: &str| call("read_file", &[("path", "long.txt"), ("start_line", start)]);
        let texts = with_ctx(&ws, |ctx| {
            [page("1"), page("1001"), page("2001"), page("1001")].map(|c| match super::super::run(&c, ctx) {
                Outcome::Success(s) => format!("fresh: {s}"),
                Outcome::Repeated(s) => format!("repeated: {s}"),
                _ => panic!("the read failed"),
            })
        });
        assert!(texts[0].starts_with("fresh: 1 | line 1\n"), "{}", &texts[0][..40]);
        assert!(texts[0].ends_with("Use start_line=1001 to continue reading.)"));
        assert!(texts[1].starts_with("fresh: 1001 | line 1001\n"), "{}", &texts[1][..40]);
        assert!(texts[2].starts_with("fresh: 2001 | line 2001\n"), "{}", &texts[2][..40]);
        assert!(texts[3].starts_with("repeated: [File already read]"), "{}", &texts[3][..40]);
    }
}
