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
#[cfg(feature = "pdf")]
mod pdf;
mod xlsx;
mod zipped;

pub(crate) use encoding::decode_legacy;
// XLSX numbers are written as JavaScript writes them, as a notebook's are.
use super::notebook::js_number;
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
        ".ipynb" => Ok(super::notebook::sanitize(&notebook_text(bytes))),
        ".xlsx" => xlsx::text(bytes).map_err(|e| format!("Failed to extract text from Excel: {e}")),
        _ => return None,
    })
}

/// A notebook's text as Cline's `iconv.decode` gives it: UTF-8 without its BOM (`JSON.parse`
/// would refuse one), else its legacy encoding, else as far as it decodes.
fn notebook_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => super::doc_form::without_bom(s).to_string(),
        Err(_) => decode_legacy(bytes).unwrap_or_else(|| String::from_utf8_lossy(bytes).into_owned()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_notebook_with_a_bom_is_read_as_a_notebook() {
        let nb = b"\xEF\xBB\xBF{\"cells\":[{\"cell_type\":\"code\",\"outputs\":[1],\"source\":[]}]}";
        let text = super::extract(".ipynb", nb).unwrap().unwrap();
        assert!(text.starts_with("{\n \"cells\"") && text.contains("\"outputs\": []"), "{text}");
    }
}
