//! A DOCX's text as mammoth's `extractRawText` gives it: each paragraph's text followed by a
//! blank line, `\t` for a tab; deleted text (`w:del`), field codes and the `mc:Choice` branch of
//! alternate content (mammoth reads the fallback) left out.

use quick_xml::events::Event;
use quick_xml::Reader;

use super::zipped::Archive;

/// The document's text.
pub(crate) fn text(bytes: &[u8]) -> Result<String, String> {
    let mut zip = Archive::open(bytes)?;
    let xml = zip.text("word/document.xml")?.ok_or("word/document.xml is missing")?;
    raw_text(&xml)
}

fn raw_text(xml: &str) -> Result<String, String> {
    let mut r = Reader::from_str(xml);
    let mut out = String::new();
    // Depth inside a skipped element (0: not skipping), and whether we are in a `w:t`.
    let (mut skip, mut in_t, mut in_body) = (0usize, false, false);
    loop {
        match r.read_event().map_err(|e| e.to_string())? {
            Event::Start(e) => {
                let name = e.name();
                let n = name.as_ref();
                if skip > 0 {
                    skip += 1;
                } else if matches!(n, b"w:del" | b"w:instrText" | b"mc:Choice" | b"w:delText") {
                    skip = 1;
                } else if n == b"w:body" {
                    in_body = true;
                } else if n == b"w:t" {
                    in_t = true;
                }
            }
            Event::Empty(e) if skip == 0 && in_body => match e.name().as_ref() {
                b"w:tab" => out.push('\t'),
                b"w:p" => out.push_str("\n\n"),
                _ => {}
            },
            Event::End(e) => {
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                match e.name().as_ref() {
                    b"w:t" => in_t = false,
                    b"w:p" if in_body => out.push_str("\n\n"),
                    b"w:body" => in_body = false,
                    _ => {}
                }
            }
            Event::Text(t) if in_t && skip == 0 => out.push_str(&t.unescape().map_err(|e| e.to_string())?),
            Event::CData(t) if in_t && skip == 0 => out.push_str(&String::from_utf8_lossy(&t)),
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_tabs_and_deletions_as_mammoth_reads_them() {
        let xml = r#"<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>Hello</w:t><w:tab/><w:t xml:space="preserve"> &amp; world</w:t></w:r></w:p><w:p/><w:p><w:del><w:r><w:delText>gone</w:delText></w:r></w:del><w:r><w:instrText>PAGE</w:instrText><w:t>kept</w:t></w:r></w:p></w:body></w:document>"#;
        assert_eq!(raw_text(xml).unwrap(), "Hello\t & world\n\n\n\nkept\n\n");
    }
}
