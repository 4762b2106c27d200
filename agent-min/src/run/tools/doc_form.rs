//! How an edited file is saved, as Cline's edits are saved through VS Code's document of the
//! file: in the document's line ending, with the file's BOM.
//!
//! VS Code gives a document opened on a file the line ending most of its line breaks have
//! (CRLF when more than half are CRLF; LF on Linux for a file without any, or a new one) and
//! converts text put into it to that ending; it reads a UTF-8 file without its BOM and saves it
//! back with it. Cline's `DiffViewProvider` also drops a BOM leading the new content. A lone CR
//! is left alone here (VS Code counts it as a line break): in a file, it is more likely content,
//! and the edit engines split lines at LF only.

/// The byte order mark, as text.
const BOM: char = '\u{FEFF}';

/// A file's form as its editor document holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Form {
    /// The document's line ending.
    eol: &'static str,
    /// Whether the file starts with a UTF-8 BOM.
    bom: bool,
}

impl Form {
    /// The form of a file holding `original` (its decoded text, BOM included); `None`: a new
    /// file (LF, no BOM).
    pub(crate) fn of(original: Option<&str>) -> Form {
        let Some(text) = original else { return Form { eol: "\n", bom: false } };
        let crlf = text.matches("\r\n").count();
        let lf = text.matches('\n').count() - crlf;
        Form { eol: if crlf > lf { "\r\n" } else { "\n" }, bom: text.starts_with(BOM) }
    }

    /// `new` as the document holds it: without a leading BOM, its line breaks the document's.
    pub(crate) fn text(&self, new: &str) -> String {
        with_eol(without_bom(new), self.eol)
    }

    /// The bytes saved for `text` (as [`Form::text`] gives it): after the BOM if the file had one.
    pub(crate) fn bytes(&self, text: &str) -> Vec<u8> {
        let bom = if self.bom { "\u{FEFF}" } else { "" };
        [bom.as_bytes(), text.as_bytes()].concat()
    }
}

/// `text` without a leading BOM (as Cline's decoding reads a file).
pub(crate) fn without_bom(text: &str) -> &str {
    text.strip_prefix(BOM).unwrap_or(text)
}

/// `text` with every line break (`\r\n` or `\n`) made `eol`.
pub(crate) fn with_eol(text: &str, eol: &str) -> String {
    let lf = text.replace("\r\n", "\n");
    if eol == "\n" {
        lf
    } else {
        lf.replace('\n', eol)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_takes_the_majority_line_ending_and_new_text_is_converted_to_it() {
        // The review's case: replace_in_file's engine leaves the replaced line with LF.
        assert_eq!(Form::of(Some("a\r\nb\r\nc\r\n")).text("a\r\nB\nc\r\n"), "a\r\nB\r\nc\r\n");
        // More than half CRLF: CRLF; half or fewer: LF; a file without line breaks, or a new
        // one: LF.
        assert_eq!(Form::of(Some("a\r\nb\r\nc\n")).text("x\ny\r\n"), "x\r\ny\r\n");
        assert_eq!(Form::of(Some("a\r\nb\n")).text("x\r\ny\r\n"), "x\ny\n");
        assert_eq!(Form::of(Some("one line")).text("x\r\ny"), "x\ny");
        assert_eq!(Form::of(None).text("x\r\ny\n"), "x\ny\n");
        // A lone CR stays.
        assert_eq!(Form::of(Some("a\r\n")).text("x\ry\n"), "x\ry\r\n");
    }

    #[test]
    fn a_bom_is_kept_for_a_file_that_had_one_and_never_added() {
        let bom = Form::of(Some("\u{FEFF}a\n"));
        assert_eq!(bom.bytes(&bom.text("b\n")), b"\xEF\xBB\xBFb\n");
        assert_eq!(bom.bytes(&bom.text("\u{FEFF}b\n")), b"\xEF\xBB\xBFb\n");
        let plain = Form::of(Some("a\n"));
        assert_eq!(plain.bytes(&plain.text("\u{FEFF}b\n")), b"b\n");
        assert_eq!(Form::of(None).bytes(&Form::of(None).text("\u{FEFF}b")), b"b");
        assert_eq!(without_bom("\u{FEFF}x\u{FEFF}"), "x\u{FEFF}");
    }
}
