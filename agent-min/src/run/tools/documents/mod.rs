//! Text from documents for `read_file`, as Cline's `integrations/misc/extract-text.ts` gives it:
//! PDF (Cline: pdf-parse), DOCX (mammoth's raw text), `.ipynb` (the notebook with its code
//! cells' outputs stripped: `sanitizeNotebookForLLM`), XLSX (exceljs, one tab-separated line per
//! row with content) and text in legacy encodings (Cline: jschardet + iconv-lite; here
//! `chardetng` + `encoding_rs`). Behind the default cargo feature `documents`, PDF behind `pdf`
//! (a build without it refuses a PDF naming the feature: `tools/read.rs`, `left_out`).
//!
//! Everything read is untrusted: an archive member is read to at most [`MAX_MEMBER`] bytes
//! (a zip bomb stops there), and a PDF is parsed in a child process (`pdf`): one the parser
//! panics, loops or swells on is refused, not fatal.

mod docx;
mod encoding;
mod notebook;
#[cfg(feature = "pdf")]
mod pdf;
mod xlsx;
mod zipped;

pub(crate) use encoding::decode_legacy;
#[cfg(feature = "pdf")]
pub(crate) use pdf::{child_main as pdf_child_main, CHILD_COMMAND as PDF_CHILD_COMMAND};

/// Most bytes read from one member of a DOCX or XLSX archive once inflated.
pub(crate) const MAX_MEMBER: u64 = 64 << 20;

/// The text of a document by its (lower-case, dotted) extension: `None` for a plain file.
pub(crate) fn extract(ext: &str, bytes: &[u8]) -> Option<Result<String, String>> {
    Some(match ext {
        #[cfg(feature = "pdf")]
        ".pdf" => pdf::text(bytes),
        ".docx" => docx::text(bytes),
        ".ipynb" => Ok(notebook::text(bytes)),
        ".xlsx" => xlsx::text(bytes).map_err(|e| format!("Failed to extract text from Excel: {e}")),
        _ => return None,
    })
}

/// A number as JavaScript's `String(n)` writes it (shortest round trip; exponent form from
/// 1e21 and below 1e-6).
pub(crate) fn js_number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if n == 0.0 {
        return "0".into();
    }
    let a = n.abs();
    if (1e-6..1e21).contains(&a) {
        return format!("{n}");
    }
    // Rust's `{:e}` is the shortest round trip too: `1e21`, `1.5e-7`; JavaScript adds a sign.
    let s = format!("{n:e}");
    match s.split_once('e') {
        Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e}"),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_javascript_writes_them() {
        assert_eq!(js_number(3.0), "3");
        assert_eq!(js_number(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(js_number(-2.5), "-2.5");
        assert_eq!(js_number(1e21), "1e+21");
        assert_eq!(js_number(1.5e-7), "1.5e-7");
        assert_eq!(js_number(123456789012.0), "123456789012");
    }
}
