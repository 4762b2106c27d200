//! An image's format and dimensions from its header, for the three formats `read_file` sends
//! to a model (PNG, JPEG, WebP), read as Cline's `image-size` (2.0) reads them: the format by
//! its signature, never by the file's name. Bounded: only the header is read (a JPEG's
//! segments are walked by their lengths, never scanned), nothing is allocated.

/// A format `read_file` can send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// PNG.
    Png,
    /// JPEG.
    Jpeg,
    /// WebP (lossy, lossless or extended).
    Webp,
}

impl Format {
    /// The media type the APIs are told.
    pub(crate) fn media_type(self) -> &'static str {
        match self {
            Format::Png => "image/png",
            Format::Jpeg => "image/jpeg",
            Format::Webp => "image/webp",
        }
    }
}

/// What the header says, or why it says nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Header {
    /// The format and its width and height in pixels (either may be 0 when the header says so).
    Sized(Format, u32, u32),
    /// A known signature whose header is cut short or broken: no dimensions.
    Unsized(Format),
    /// None of the three signatures (image-size: `unsupported file type: undefined`).
    Unknown,
}

/// Reads the header of `b`.
pub(crate) fn read(b: &[u8]) -> Header {
    if b.len() >= 16 && &b[1..8] == b"PNG\r\n\x1a\n" && &b[12..16] == b"IHDR" {
        return size(Format::Png, png(b));
    }
    if b.starts_with(&[0xFF, 0xD8]) {
        return size(Format::Jpeg, jpeg(b));
    }
    if b.len() >= 12 && &b[0..4] == b"RIFF" && &b[8..12] == b"WEBP" {
        return size(Format::Webp, webp(b));
    }
    Header::Unknown
}

fn size(f: Format, wh: Option<(u32, u32)>) -> Header {
    match wh {
        Some((w, h)) => Header::Sized(f, w, h),
        None => Header::Unsized(f),
    }
}

fn be16(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?)))
}

fn le16(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?)))
}

fn le24(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 3)?;
    Some(u32::from(s[0]) | u32::from(s[1]) << 8 | u32::from(s[2]) << 16)
}

/// IHDR's width and height, right after the signature and the chunk's length and name.
fn png(b: &[u8]) -> Option<(u32, u32)> {
    let w = u32::from_be_bytes(b.get(16..20)?.try_into().ok()?);
    let h = u32::from_be_bytes(b.get(20..24)?.try_into().ok()?);
    Some((w, h))
}

/// The first start-of-frame segment's height and width, walking the segments from the start.
fn jpeg(b: &[u8]) -> Option<(u32, u32)> {
    let mut i = 2;
    loop {
        // Fill bytes (0xFF) may precede a marker.
        while *b.get(i)? == 0xFF && *b.get(i + 1)? == 0xFF {
            i += 1;
        }
        if *b.get(i)? != 0xFF {
            return None;
        }
        let marker = *b.get(i + 1)?;
        i += 2;
        match marker {
            // Markers without a length: TEM, RSTn, SOI.
            0x01 | 0xD0..=0xD8 => continue,
            // End of image, start of scan: no frame header before them.
            0xD9 | 0xDA => return None,
            _ => {}
        }
        let len = be16(b, i)? as usize;
        if len < 2 {
            return None;
        }
        // SOF0–SOF15 but DHT (C4), JPG (C8) and DAC (CC): precision, height, width.
        if matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC) {
            return Some((be16(b, i + 5)?, be16(b, i + 3)?));
        }
        i += len;
    }
}

/// The canvas of an extended WebP (`VP8X`), or the frame of a lossy (`VP8 `) or lossless
/// (`VP8L`) one, as image-size reads them.
fn webp(b: &[u8]) -> Option<(u32, u32)> {
    match b.get(12..16)? {
        b"VP8X" => {
            let flags = *b.get(20)?;
            // Reserved bits set: image-size's "Invalid WebP".
            if flags & 0xC0 != 0 || flags & 0x01 != 0 {
                return None;
            }
            Some((1 + le24(b, 24)?, 1 + le24(b, 27)?))
        }
        b"VP8 " if *b.get(20)? != 0x2F => Some((le16(b, 26)? & 0x3FFF, le16(b, 28)? & 0x3FFF)),
        b"VP8L" if b.get(23..26) != Some(&[0x9D, 0x01, 0x2A][..]) => {
            let s = b.get(21..25)?;
            let (s0, s1, s2, s3) = (u32::from(s[0]), u32::from(s[1]), u32::from(s[2]), u32::from(s[3]));
            let w = 1 + (((s1 & 0x3F) << 8) | s0);
            let h = 1 + (((s3 & 0xF) << 10) | (s2 << 2) | ((s1 & 0xC0) >> 6));
            Some((w, h))
        }
        _ => None,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A real 1×1 RGBA PNG (what `zlib`-compressing one transparent pixel gives), with its
    /// IHDR's width and height replaced.
    pub(crate) fn png_of(w: u32, h: u32) -> Vec<u8> {
        let mut ihdr = b"IHDR".to_vec();
        ihdr.extend_from_slice(&w.to_be_bytes());
        ihdr.extend_from_slice(&h.to_be_bytes());
        ihdr.extend_from_slice(&[8, 6, 0, 0, 0]);
        let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
        for (name_and_data, len) in [(ihdr, 13u32), (b"IDAT\x78\x9c\x63\x60\x00\x02\x00\x00\x05\x00\x01".to_vec(), 11)]
        {
            out.extend_from_slice(&len.to_be_bytes());
            out.extend_from_slice(&name_and_data);
            out.extend_from_slice(&crc32(&name_and_data).to_be_bytes());
        }
        out.extend_from_slice(&0u32.to_be_bytes());
        out.extend_from_slice(b"IEND");
        out.extend_from_slice(&crc32(b"IEND").to_be_bytes());
        out
    }

    /// PNG's CRC-32 (so the test files are valid PNGs, not just headers).
    fn crc32(bytes: &[u8]) -> u32 {
        let mut c = 0xFFFF_FFFFu32;
        for &b in bytes {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
            }
        }
        !c
    }

    /// A baseline JPEG's segments up to its frame header: SOI, an APP0 (JFIF), a DQT, then SOF0.
    pub(crate) fn jpeg_of(w: u16, h: u16) -> Vec<u8> {
        let mut v = vec![0xFF, 0xD8];
        v.extend_from_slice(&[0xFF, 0xE0, 0x00, 0x10, b'J', b'F', b'I', b'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
        v.extend_from_slice(&[0xFF, 0xDB, 0x00, 0x43, 0x00]);
        v.extend_from_slice(&[1u8; 64]);
        v.extend_from_slice(&[0xFF, 0xC0, 0x00, 0x0B, 8]);
        v.extend_from_slice(&h.to_be_bytes());
        v.extend_from_slice(&w.to_be_bytes());
        v.extend_from_slice(&[1, 1, 0x11, 0]);
        v.extend_from_slice(&[0xFF, 0xD9]);
        v
    }

    fn riff(chunk: &[u8; 4], payload: &[u8]) -> Vec<u8> {
        let mut v = b"RIFF".to_vec();
        v.extend_from_slice(&(4 + 8 + payload.len() as u32).to_le_bytes());
        v.extend_from_slice(b"WEBP");
        v.extend_from_slice(chunk);
        v.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        v.extend_from_slice(payload);
        v
    }

    #[test]
    fn png_dimensions_come_from_ihdr() {
        assert_eq!(read(&png_of(1, 1)), Header::Sized(Format::Png, 1, 1));
        assert_eq!(read(&png_of(7501, 20)), Header::Sized(Format::Png, 7501, 20));
        assert_eq!(read(&png_of(0, 5)), Header::Sized(Format::Png, 0, 5));
        // The signature and IHDR's name, but no dimensions.
        assert_eq!(read(&png_of(3, 4)[..18]), Header::Unsized(Format::Png));
    }

    #[test]
    fn jpeg_dimensions_come_from_the_first_frame_header() {
        assert_eq!(read(&jpeg_of(640, 480)), Header::Sized(Format::Jpeg, 640, 480));
        // Fill bytes before a marker are skipped.
        let mut filled = jpeg_of(2, 3);
        filled.splice(2..2, [0xFF, 0xFF]);
        assert_eq!(read(&filled), Header::Sized(Format::Jpeg, 2, 3));
        // A DHT (C4) is a table, not a frame: walked over.
        let mut dht = vec![0xFF, 0xD8, 0xFF, 0xC4, 0x00, 0x04, 9, 9];
        dht.extend_from_slice(&jpeg_of(7, 8)[2..]);
        assert_eq!(read(&dht), Header::Sized(Format::Jpeg, 7, 8));
        // Cut inside the segments, or a scan before any frame.
        assert_eq!(read(&jpeg_of(640, 480)[..40]), Header::Unsized(Format::Jpeg));
        assert_eq!(read(&[0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02]), Header::Unsized(Format::Jpeg));
        assert_eq!(read(&[0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x00]), Header::Unsized(Format::Jpeg));
    }

    #[test]
    fn webp_dimensions_in_its_three_kinds() {
        // Lossy: a key frame's tag, the start code, 14-bit width and height.
        let lossy = riff(b"VP8 ", &[0x10, 0x02, 0x00, 0x9D, 0x01, 0x2A, 0x40, 0x01, 0xF0, 0x00]);
        assert_eq!(read(&lossy), Header::Sized(Format::Webp, 320, 240));
        // Lossless: the 0x2F signature, then width-1 and height-1 in 14 bits each.
        let (w, h) = (400u32 - 1, 300u32 - 1);
        let bits = w | (h << 14);
        let lossless = riff(b"VP8L", &[0x2F, bits as u8, (bits >> 8) as u8, (bits >> 16) as u8, (bits >> 24) as u8]);
        assert_eq!(read(&lossless), Header::Sized(Format::Webp, 400, 300));
        // Extended: flags, 3 reserved bytes, canvas width-1 and height-1 in 24 bits each.
        let ext = riff(b"VP8X", &[0x10, 0, 0, 0, 0x3F, 0x1F, 0x00, 0x0F, 0x27, 0x00]);
        assert_eq!(read(&ext), Header::Sized(Format::Webp, 8000, 10000));
        let bad = riff(b"VP8X", &[0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(read(&bad), Header::Unsized(Format::Webp));
        assert_eq!(read(&riff(b"ALPH", &[0; 10])), Header::Unsized(Format::Webp));
    }

    /// Real files, as Pillow 12.3 writes a 3×2 image: WebP lossy, lossless, and extended (with
    /// alpha); and the start of its baseline JPEG (APP0, two DQTs, then SOF0) — the header is
    /// all that is read.
    #[test]
    fn real_files_of_each_kind() {
        let lossy = b"\x52\x49\x46\x46\x3c\x00\x00\x00\x57\x45\x42\x50\x56\x50\x38\x20\x30\x00\x00\x00\xd0\x01\x00\x9d\x01\x2a\x03\x00\x02\x00\x01\x40\x26\x25\xa0\x02\x74\xba\x01\xf8\x00\x03\xb0\x00\xfe\xf2\xeb\x7f\xfc\xd8\x15\xcd\x73\xef\xf7\xff\xd2\xe0\xfd\x2e\x0f\xd2\xe0\xff\xd2\x90\x00\x00";
        let lossless = b"\x52\x49\x46\x46\x1c\x00\x00\x00\x57\x45\x42\x50\x56\x50\x38\x4c\x0f\x00\x00\x00\x2f\x02\x40\x00\x00\x07\x10\xfd\x8f\xfe\x07\x22\xa2\xff\x01\x00";
        let extended = b"\x52\x49\x46\x46\x5e\x00\x00\x00\x57\x45\x42\x50\x56\x50\x38\x58\x0a\x00\x00\x00\x10\x00\x00\x00\x02\x00\x00\x01\x00\x00\x41\x4c\x50\x48\x07\x00\x00\x00\x00\x80\x80\x80\x80\x80\x80\x00";
        for webp in [&lossy[..], &lossless[..], &extended[..]] {
            assert_eq!(read(webp), Header::Sized(Format::Webp, 3, 2));
        }
        let mut jpeg = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00".to_vec();
        for table in 0..2u8 {
            jpeg.extend_from_slice(&[0xFF, 0xDB, 0x00, 0x43, table]);
            jpeg.extend_from_slice(&[16u8; 64]);
        }
        jpeg.extend_from_slice(b"\xff\xc0\x00\x11\x08\x00\x02\x00\x03\x03\x01\x22\x00\x02\x11\x01\x03\x11\x01");
        assert_eq!(read(&jpeg), Header::Sized(Format::Jpeg, 3, 2));
    }

    #[test]
    fn other_bytes_are_no_image() {
        assert_eq!(read(b""), Header::Unknown);
        assert_eq!(read(b"GIF89a\x01\x00\x01\x00"), Header::Unknown);
        assert_eq!(read(b"hello, not an image at all"), Header::Unknown);
    }
}
