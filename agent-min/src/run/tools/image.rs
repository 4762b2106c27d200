//! `read_file` of an image, as Cline's `extractImageContent` reads one: the extensions it
//! treats as images, the file read once (regular files only, bounded), its dimensions from the
//! header (`image_size`) with Cline's refusals, and the bytes as base64 for the model. Part of
//! the cargo feature `documents` (read_file's content of files other than text); a build
//! without it refuses an image naming the feature.

use std::path::Path;

use super::fsx;
use super::image_size::{self, Header};

/// Cline's image extensions (`extract-file-content.ts`), lower-case.
const EXTENSIONS: [&str; 4] = ["png", "jpg", "jpeg", "webp"];

/// Cline refuses an image wider or taller than this.
const MAX_SIDE: u32 = 7500;

/// The largest image file sent: 5 MiB once in base64, the most Anthropic's API takes for one
/// image (it refuses the request, and so every later one of the task, otherwise). Cline has no
/// limit.
pub(crate) const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024 / 4 * 3;

/// The most image bytes (in base64) a conversation holds: a read that would go past them is
/// refused. Every request carries all of them (Anthropic's API takes at most 32 MB in one), and
/// the context window does not see them: an image is counted by its pixels, so a 1x1 image
/// padded to 5 MB counts as one token, and read again and again it filled the memory, every
/// request and the saved task. Cline has no limit. History cut for the context window frees
/// its images.
pub(crate) const MAX_HELD_BYTES: usize = 20 * 1024 * 1024;

/// Why an image of `adding` bytes (base64) is not sent when the conversation holds `held`:
/// `None` when it fits under [`MAX_HELD_BYTES`].
pub(crate) fn past_held(held: usize, adding: usize) -> Option<String> {
    let mb = |n: usize| format!("{:.1} MB", n as f64 / (1024.0 * 1024.0));
    (held + adding > MAX_HELD_BYTES).then(|| {
        format!(
            "the conversation already holds {} of images, and this one ({}) would take it past {}, the most agent-min sends in one request",
            mb(held),
            mb(adding),
            mb(MAX_HELD_BYTES)
        )
    })
}

/// An image read for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Image {
    /// `image/png`, `image/jpeg` or `image/webp`: the format the bytes are in.
    pub media_type: &'static str,
    /// The file's bytes, in standard base64.
    pub data: String,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl Image {
    /// What the image is, without its bytes, for the terminal.
    pub(crate) fn describe(&self) -> String {
        format!("{}, {}x{} pixels", self.media_type, self.width, self.height)
    }
}

/// The bytes (base64) of images the conversation holds when a tool adds one: its messages'
/// and the next one's (`held`, counted when asked), and those read since (`read`).
pub(crate) fn held_with(held: &dyn Fn() -> usize, read: &[Image]) -> usize {
    held() + read.iter().map(|i| i.data.len()).sum::<usize>()
}

/// Whether `read_file` treats `abs` as an image (by its extension, as Cline does).
pub(crate) fn is_image(abs: &Path) -> bool {
    abs.extension().is_some_and(|e| EXTENSIONS.contains(&e.to_string_lossy().to_lowercase().as_str()))
}

/// Reads the image at `abs` for a model that takes images (`supported`); `Err` is the text
/// after Cline's `Error reading file: `.
pub(crate) fn read(abs: &Path, supported: bool) -> Result<Image, String> {
    if !abs.exists() {
        return Err(format!("File not found: {}", abs.display()));
    }
    if !supported {
        return Err("Current model does not support image input".to_string());
    }
    // A constant: the minimal build leaves the reading out (its size is held to a ceiling).
    if !cfg!(feature = "documents") {
        return Err(crate::run::built::not_built_in("documents", "Sending images to the model"));
    }
    // Resolved and checked by the caller: a link swapped in since is refused (as in read.rs).
    let bytes = fsx::read_checked(abs, MAX_IMAGE_BYTES).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidInput if e.to_string().starts_with("is too large") => format!(
            "Image file is too large to send to the model: {} {e}; 5 MB once in base64 is the most the APIs take for one image",
            abs.display()
        ),
        std::io::ErrorKind::InvalidInput => format!("{} {e}.", abs.display()),
        _ => e.to_string(),
    })?;
    sized(&bytes)
}

/// An image a tool's result carries as base64 (an MCP server's `image` item), held to what a
/// read image file is: at most 5 MB in base64, its format and dimensions from the decoded bytes
/// with Cline's refusals. The server's `mimeType` is not taken (the APIs refuse bytes of
/// another type than the one stated), and the bytes are encoded afresh: what the server sent
/// reaches a request only as valid base64. `Err` says why it is not sent.
pub(crate) fn from_base64(data: &str) -> Result<Image, String> {
    if data.len() as u64 > MAX_IMAGE_BYTES / 3 * 4 + 4 {
        return Err("it is larger than 5 MB in base64, the most the APIs take for one image".to_string());
    }
    let bytes = decode_base64(data).ok_or("its data is not base64")?;
    sized(&bytes)
}

/// The image `bytes` hold, for the model: Cline's `extractImageContent` refusals.
fn sized(bytes: &[u8]) -> Result<Image, String> {
    let (format, width, height) = match image_size::read(bytes) {
        Header::Sized(f, w, h) if w > 0 && h > 0 => (f, w, h),
        Header::Sized(..) | Header::Unsized(_) => {
            return Err("Could not determine image dimensions, so image could not be read".to_string())
        }
        // image-size's own error, as Cline's catch wraps it.
        Header::Unknown => return Err("Error reading image: unsupported file type: undefined".to_string()),
    };
    if width > MAX_SIDE || height > MAX_SIDE {
        return Err("Image dimensions exceed 7500px by 7500px, so image could not be read".to_string());
    }
    // The media type of the bytes, not of the name (Cline's `getMimeType` goes by the
    // extension, and the APIs refuse an image whose bytes are not its stated type).
    Ok(Image { media_type: format.media_type(), data: base64(bytes), width, height })
}

/// Standard base64 (RFC 4648 §4) decoded; ASCII whitespace is skipped (a MIME encoder's line
/// breaks) and padding may be left out. `None` for any other character, a character after
/// padding, or a length no encoder makes.
fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let (mut acc, mut bits, mut padded) = (0u32, 0u32, 0usize);
    for &c in s.as_bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => {
                padded += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' | b'\n' => continue,
            _ => return None,
        };
        if padded > 0 {
            return None;
        }
        acc = acc << 6 | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    // Six bits left over: one character past a whole group, which no encoder writes.
    (bits < 6 && padded <= 2).then_some(out)
}

/// Standard base64 with padding (RFC 4648 §4).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::image_size::tests::png_of;
    use super::*;

    #[test]
    fn base64_decodes_what_it_encodes_and_nothing_else() {
        for n in 0..40u8 {
            let bytes: Vec<u8> = (0..n).map(|i| i.wrapping_mul(97)).collect();
            let text = base64(&bytes);
            assert_eq!(decode_base64(&text), Some(bytes.clone()), "{text}");
            assert_eq!(decode_base64(text.trim_end_matches('=')), Some(bytes.clone()), "unpadded {text}");
            let wrapped: String = text
                .chars()
                .enumerate()
                .flat_map(|(i, c)| (i % 5 == 4).then_some('\n').into_iter().chain([c]))
                .collect();
            assert_eq!(decode_base64(&wrapped), Some(bytes), "{wrapped:?}");
        }
        for bad in ["A", "AAAAA", "Zg==Zg", "Zm9v!", "Zg===", "data:image/png;base64,Zg=="] {
            assert_eq!(decode_base64(bad), None, "{bad}");
        }
    }

    #[test]
    fn an_image_in_base64_is_checked_as_a_read_one_and_its_type_taken_from_its_bytes() {
        let png = png_of(3, 2);
        let image = from_base64(&base64(&png)).unwrap();
        assert_eq!((image.media_type, image.width, image.height), ("image/png", 3, 2));
        assert_eq!(image.data, base64(&png));
        assert_eq!(
            from_base64("R0lGODlhAQABAAAAACw=").unwrap_err(),
            "Error reading image: unsupported file type: undefined"
        );
        assert_eq!(from_base64("not base64!").unwrap_err(), "its data is not base64");
        assert!(from_base64(&base64(&png_of(8000, 1))).unwrap_err().starts_with("Image dimensions exceed 7500px"));
        let big = "A".repeat(5 * 1024 * 1024 + 8);
        assert!(from_base64(&big).unwrap_err().contains("larger than 5 MB"));
    }

    #[test]
    fn base64_is_rfc_4648() {
        let cases: [(&[u8], &str); 7] = [
            (b"", ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"fooba", "Zm9vYmE="),
            (b"\xff\xfe\x00", "//4A"),
        ];
        for (input, want) in cases {
            assert_eq!(base64(input), want);
        }
    }

    #[test]
    fn extensions_are_clines_in_any_case() {
        for name in ["a.png", "b.JPG", "c.jpeg", "d.WebP"] {
            assert!(is_image(Path::new(name)), "{name}");
        }
        for name in ["a.gif", "b.svg", "png", "c.png.txt"] {
            assert!(!is_image(Path::new(name)), "{name}");
        }
    }

    /// Run by `.ci/run fast` in the minimal build.
    #[cfg(not(feature = "documents"))]
    #[test]
    fn a_build_without_documents_refuses_an_image_naming_the_feature() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.png");
        std::fs::write(&p, png_of(1, 1)).unwrap();
        let e = read(&p, true).unwrap_err();
        assert!(e.starts_with("Sending images to the model is not built into") && e.contains("`documents`"), "{e}");
        assert_eq!(read(&p, false).unwrap_err(), "Current model does not support image input");
    }

    #[cfg(feature = "documents")]
    #[test]
    fn reads_or_refuses_with_clines_texts() {
        let d = tempfile::tempdir().unwrap();
        let put = |name: &str, bytes: &[u8]| {
            let p = d.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            p
        };
        let rd = |p: &Path| read(p, true);
        let png = png_of(2, 3);
        let img = rd(&put("a.png", &png)).unwrap();
        assert_eq!((img.media_type, img.width, img.height), ("image/png", 2, 3));
        assert_eq!(img.data, base64(&png));
        // A JPEG named .png is sent as what it is.
        let jpeg_of = super::super::image_size::tests::jpeg_of;
        assert_eq!(rd(&put("j.png", &jpeg_of(4, 5))).unwrap().media_type, "image/jpeg");
        assert_eq!(
            rd(&put("big.png", &png_of(7501, 10))).unwrap_err(),
            "Image dimensions exceed 7500px by 7500px, so image could not be read"
        );
        assert!(rd(&put("edge.png", &png_of(7500, 7500))).is_ok());
        assert_eq!(
            rd(&put("zero.png", &png_of(0, 10))).unwrap_err(),
            "Could not determine image dimensions, so image could not be read"
        );
        assert_eq!(
            rd(&put("cut.jpg", &jpeg_of(4, 5)[..30])).unwrap_err(),
            "Could not determine image dimensions, so image could not be read"
        );
        assert_eq!(
            rd(&put("text.webp", b"not an image")).unwrap_err(),
            "Error reading image: unsupported file type: undefined"
        );
        let missing = d.path().join("missing.png");
        assert_eq!(rd(&missing).unwrap_err(), format!("File not found: {}", missing.display()));
        assert!(rd(d.path()).unwrap_err().contains("is a directory"));
        // Cline checks the file exists before it asks whether the model takes images.
        assert_eq!(read(&missing, false).unwrap_err(), format!("File not found: {}", missing.display()));
        assert_eq!(read(&put("a.png", &png), false).unwrap_err(), "Current model does not support image input");
        let mut huge = png_of(10, 10);
        huge.resize(MAX_IMAGE_BYTES as usize + 1, 0);
        let e = rd(&put("huge.png", &huge)).unwrap_err();
        assert!(e.starts_with("Image file is too large to send to the model"), "{e}");
        huge.truncate(MAX_IMAGE_BYTES as usize);
        assert_eq!(rd(&put("huge.png", &huge)).unwrap().data.len(), 5 * 1024 * 1024);
    }
}
