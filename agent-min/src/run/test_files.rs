//! Unit tests' file fixtures.

use std::path::Path;

/// Writes `text` to `root/rel`, making its directories.
pub(crate) fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A temporary directory holding `files` (path, text). Not dot-named (tempdir's default), which
/// would make the directory hidden itself: Cline's listing enters hidden directories when the
/// listed directory is hidden.
pub(crate) fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::Builder::new().prefix("ws").tempdir().unwrap();
    for (rel, text) in files {
        write(d.path(), rel, text);
    }
    d
}
