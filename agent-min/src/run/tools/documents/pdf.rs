//! A PDF's text (Cline: pdf-parse, pdf.js underneath; here `pdf-extract`). A malformed file the
//! parser panics on is refused with an error, never a crash.

/// The document's text.
pub fn text(bytes: &[u8]) -> Result<String, String> {
    let owned = bytes.to_vec();
    match std::panic::catch_unwind(move || pdf_extract::extract_text_from_mem(&owned)) {
        Ok(Ok(text)) => Ok(text),
        Ok(Err(e)) => Err(format!("Failed to extract text from PDF: {e}")),
        Err(_) => Err("Failed to extract text from PDF: the file could not be parsed".to_string()),
    }
}
