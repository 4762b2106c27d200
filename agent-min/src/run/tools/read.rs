//! `read_file(path, start_line?, end_line?)`: numbered lines, at most 1000 per call with a note of
//! the range shown; binary files are refused clearly.

use crate::run::tools::fsx;

use super::{check_path, tool_error, Access, Call, Ctx, Outcome};

/// Most lines returned by one call.
pub const MAX_LINES: usize = 1000;

/// Most bytes shown of one line.
pub const MAX_LINE_BYTES: usize = 2000;

/// Most bytes of numbered lines returned by one call.
pub const MAX_CALL_BYTES: usize = 100_000;

pub(super) fn run(call: &Call, ctx: &mut Ctx<'_>) -> Outcome {
    let path = call.param("path").unwrap_or_default();
    let start = call.param("start_line").and_then(|s| s.parse::<usize>().ok());
    let end = call.param("end_line").and_then(|s| s.parse::<usize>().ok());
    ctx.term.tool("read_file", path);
    let r = match check_path(ctx, path, Access::Read, &format!("Read {path}"), None) {
        Ok(r) => r,
        Err(o) => return o,
    };
    match read(&r.abs, start, end) {
        Ok((text, note)) => {
            ctx.term.outcome(true, &note);
            Outcome::Success(text)
        }
        Err(e) => {
            ctx.term.outcome(false, &e);
            Outcome::Failure { text: tool_error(&e), mistake: false }
        }
    }
}

/// Returns (numbered text, short summary).
pub(crate) fn read(
    abs: &std::path::Path,
    start: Option<usize>,
    end: Option<usize>,
) -> Result<(String, String), String> {
    let shown = abs.display();
    if abs.is_dir() {
        return Err(format!("{shown} is a directory; use list_files to see what it contains."));
    }
    // Only regular files: a FIFO would block the loop, a device may never end.
    let bytes = fsx::read_regular(abs, fsx::MAX_FILE_BYTES).map_err(|e| match e.kind() {
        std::io::ErrorKind::InvalidInput => format!("Cannot read {shown}: it {e}."),
        _ => format!("Error reading file {shown}: {e}"),
    })?;
    let sniff = &bytes[..bytes.len().min(8192)];
    let text = match std::str::from_utf8(&bytes) {
        Ok(t) if !sniff.contains(&0) => t,
        _ => {
            return Err(format!(
                "Cannot read binary file {shown} ({} bytes): read_file only returns text.",
                bytes.len()
            ))
        }
    };
    let lines: Vec<&str> = text.lines().collect();
    let total = lines.len();
    if total == 0 {
        return Ok(("(the file is empty)".to_string(), "empty file".to_string()));
    }
    let first = start.unwrap_or(1).max(1);
    if first > total {
        return Err(format!("start_line {first} is past the end of {shown}, which has {total} lines."));
    }
    let mut last = end.unwrap_or(total).min(total).min(first + MAX_LINES - 1);
    if last < first {
        return Err(format!("end_line {last} is before start_line {first}."));
    }
    let width = last.to_string().len();
    let mut out = String::new();
    for (i, l) in lines[first - 1..last].iter().enumerate() {
        let n = first + i;
        let line = capped_line(l);
        if i > 0 && out.len() + line.len() + width + 4 > MAX_CALL_BYTES {
            last = n - 1;
            break;
        }
        out.push_str(&format!("{n:>width$} | {line}\n"));
    }
    if first != 1 || last != total {
        out.push_str(&format!(
            "[Showing lines {first}-{last} of {total}. Use start_line and end_line to read other parts.]\n"
        ));
    }
    Ok((out, format!("lines {first}-{last} of {total}")))
}

/// A line cut to at most [`MAX_LINE_BYTES`] (on a character boundary), with a note of the rest.
fn capped_line(l: &str) -> std::borrow::Cow<'_, str> {
    if l.len() <= MAX_LINE_BYTES {
        return l.into();
    }
    let mut cut = MAX_LINE_BYTES;
    while !l.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}[... {} more bytes of this line not shown]", &l[..cut], l.len() - cut).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_lines() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a.txt");
        std::fs::write(&p, "  indented\nsecond\n").unwrap();
        let (t, _) = read(&p, None, None).unwrap();
        assert_eq!(t, "1 |   indented\n2 | second\n");
    }

    #[test]
    fn caps_at_1000_lines_with_a_note() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("big.txt");
        let body: String = (1..=2500).map(|i| format!("l{i}\n")).collect();
        std::fs::write(&p, body).unwrap();
        let (t, _) = read(&p, None, None).unwrap();
        assert_eq!(t.lines().count(), 1001);
        assert!(t.contains("1000 | l1000\n"));
        assert!(!t.contains("l1001"));
        assert!(t.contains("[Showing lines 1-1000 of 2500."));
        let (t, _) = read(&p, Some(2400), None).unwrap();
        assert!(t.starts_with("2400 | l2400\n"));
        assert!(t.contains("[Showing lines 2400-2500 of 2500."));
        let (t, _) = read(&p, Some(10), Some(12)).unwrap();
        assert_eq!(t.lines().count(), 4);
    }

    #[test]
    fn refuses_fifos_and_devices_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("pipe");
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo takes a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(read(&p, None, None).unwrap_err().contains("not a regular file"));
        assert!(read(std::path::Path::new("/dev/zero"), None, None).unwrap_err().contains("not a regular file"));
    }

    #[test]
    fn caps_bytes_per_line_and_per_call() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("one-line.min.js");
        std::fs::write(&p, "é".repeat(2_500_000)).unwrap(); // 5 MB on one line
        let (t, _) = read(&p, None, None).unwrap();
        assert!(t.len() < MAX_LINE_BYTES + 200, "{}", t.len());
        assert!(t.contains("more bytes of this line not shown"), "{}", &t[t.len() - 200..]);
        let p = d.path().join("wide.txt");
        std::fs::write(&p, format!("{}\n", "x".repeat(1000)).repeat(900)).unwrap();
        let (t, _) = read(&p, None, None).unwrap();
        assert!(t.len() <= MAX_CALL_BYTES + 200, "{}", t.len());
        let shown = t.lines().filter(|l| l.contains(" | ")).count();
        assert!(shown < 900);
        assert!(t.contains(&format!("[Showing lines 1-{shown} of 900.")), "{}", &t[t.len() - 200..]);
    }

    #[test]
    fn refuses_binary_and_directories() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("b.bin");
        std::fs::write(&p, [0x7f, b'E', b'L', b'F', 0, 1, 2]).unwrap();
        assert!(read(&p, None, None).unwrap_err().contains("Cannot read binary file"));
        assert!(read(d.path(), None, None).unwrap_err().contains("is a directory"));
        assert!(read(&d.path().join("missing"), None, None).is_err());
    }
}
