//! Text that is not UTF-8: a BOM says its encoding, else `chardetng` guesses it (Cline:
//! jschardet), and `encoding_rs` decodes it (Cline: iconv-lite) — a Latin-1 `caf\xe9` reads as
//! `café`.

/// Decodes `bytes` whose encoding is not UTF-8; `None` for binary data (a NUL in the first
/// 8 KB without a UTF-16 BOM).
pub(crate) fn decode_legacy(bytes: &[u8]) -> Option<String> {
    if let Some((enc, bom)) = encoding_rs::Encoding::for_bom(bytes) {
        return Some(enc.decode_without_bom_handling(&bytes[bom..]).0.into_owned());
    }
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return None;
    }
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(bytes, true);
    let enc = detector.guess(None, chardetng::Utf8Detection::Allow);
    Some(enc.decode_without_bom_handling(bytes).0.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin_1_and_windows_1252_read_as_text() {
        assert_eq!(decode_legacy(b"caf\xe9 cr\xe8me br\xfbl\xe9e\n").unwrap(), "café crème brûlée\n");
        assert_eq!(decode_legacy(b"\x93quoted\x94 \x80 5").unwrap(), "\u{201c}quoted\u{201d} € 5");
    }

    #[test]
    fn utf_16_with_a_bom_is_decoded_and_binary_is_not() {
        let utf16: Vec<u8> = [0xFF, 0xFE].into_iter().chain("hé".encode_utf16().flat_map(u16::to_le_bytes)).collect();
        assert_eq!(decode_legacy(&utf16).unwrap(), "hé");
        assert_eq!(decode_legacy(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), None);
    }
}
