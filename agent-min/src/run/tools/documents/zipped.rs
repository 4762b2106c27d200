//! One member of a zip archive (DOCX, XLSX), read to at most [`super::MAX_MEMBER`] bytes.

use std::io::{Cursor, Read};

/// An opened archive.
pub(crate) struct Archive<'a>(zip::ZipArchive<Cursor<&'a [u8]>>);

impl<'a> Archive<'a> {
    /// Opens `bytes` as a zip archive.
    pub(crate) fn open(bytes: &'a [u8]) -> Result<Self, String> {
        zip::ZipArchive::new(Cursor::new(bytes)).map(Archive).map_err(|e| format!("not a valid archive ({e})"))
    }

    /// The member `name` as text; `None` when the archive has no such member.
    pub(crate) fn text(&mut self, name: &str) -> Result<Option<String>, String> {
        let member = match self.0.by_name(name) {
            Ok(m) => m,
            Err(zip::result::ZipError::FileNotFound) => return Ok(None),
            Err(e) => return Err(format!("{name}: {e}")),
        };
        let mut out = Vec::new();
        member.take(super::MAX_MEMBER + 1).read_to_end(&mut out).map_err(|e| format!("{name}: {e}"))?;
        if out.len() as u64 > super::MAX_MEMBER {
            return Err(format!("{name} is over {} MiB once inflated", super::MAX_MEMBER >> 20));
        }
        String::from_utf8(out).map(Some).map_err(|_| format!("{name} is not UTF-8"))
    }
}
