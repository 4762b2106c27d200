//! Small file helpers: atomic writes, and reading regular files only.

use std::fs::{self, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::run::ui::interrupt;

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn unique_name(prefix: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    format!("{prefix}.{}.{n}.{nanos:x}", std::process::id())
}

/// Most bytes a tool reads from one file (a file the model reads, edits or searches).
pub const MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;

/// Reads `path` if it is a regular file of at most `max` bytes. Nothing else is opened for
/// reading: a FIFO would block forever, `/dev/zero` never ends. The type is checked before
/// opening, and again on the open file (opened non-blocking, so a FIFO swapped in between the
/// two checks cannot block either).
pub fn read_regular(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let not_regular = |m: &fs::Metadata| {
        let what = if m.is_dir() { "is a directory" } else { "is not a regular file (a FIFO, device or socket)" };
        io::Error::new(io::ErrorKind::InvalidInput, what)
    };
    let meta = fs::metadata(path)?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let f = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let too_large = |n: u64| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("is too large ({n} bytes; the limit is {max} bytes)"))
    };
    if meta.len() > max {
        return Err(too_large(meta.len()));
    }
    let mut v = Vec::with_capacity(meta.len() as usize);
    f.take(max + 1).read_to_end(&mut v)?;
    if v.len() as u64 > max {
        return Err(too_large(v.len() as u64));
    }
    Ok(v)
}

/// Writes `contents` to `path` atomically: a temp file in the same directory, fsync, rename.
/// Keeps the permissions of an existing file. Creates missing parent directories.
pub fn atomic_write(path: &Path, contents: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    fs::create_dir_all(dir)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(unique_name(&format!(".{name}.agent-min-tmp")));
    let _guard = interrupt::track_file(tmp.clone());
    let result = (|| {
        let mut f = OpenOptions::new().write(true).create_new(true).mode(0o644).open(&tmp)?;
        f.write_all(contents)?;
        if let Ok(meta) = fs::metadata(path) {
            f.set_permissions(meta.permissions())?;
        }
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_creates_dirs_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a/b/c.txt");
        atomic_write(&p, b"hello").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "hello");
        atomic_write(&p, b"again").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "again");
        let names: Vec<_> = fs::read_dir(d.path().join("a/b")).unwrap().collect();
        assert_eq!(names.len(), 1);
    }
}
