//! A PDF's text (Cline: pdf-parse, pdf.js underneath; here `pdf-extract`), laid out as
//! pdf-parse lays it out: each page's text after a blank line (`\n\n`). A malformed file the
//! parser panics on is refused with an error, never a crash.

/// The document's text.
pub(crate) fn text(bytes: &[u8]) -> Result<String, String> {
    let owned = bytes.to_vec();
    match std::panic::catch_unwind(move || pdf_extract::extract_text_from_mem_by_pages(&owned)) {
        Ok(Ok(pages)) => Ok(layout(&pages)),
        Ok(Err(e)) => Err(format!("Failed to extract text from PDF: {e}")),
        Err(_) => Err("Failed to extract text from PDF: the file could not be parsed".to_string()),
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
        assert!(text(b"%PDF-1.4 not really").unwrap_err().starts_with("Failed to extract text from PDF"));
    }
}
