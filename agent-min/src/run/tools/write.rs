//! `write_to_file(path, content)` and `replace_in_file(path, diff)`: preview, approval, atomic
//! write (temp file + rename).

use std::path::Path;

use super::{check_path, tool_error, Access, Call, Ctx, Outcome};
use super::{diff, fsx, preview};

pub(super) fn write_to_file(call: &Call, ctx: &mut Ctx<'_>) -> Outcome {
    let path = call.param("path").unwrap_or_default();
    let content = content_of(call.raw_param("content").unwrap_or_default());
    ctx.term.tool("write_to_file", &format!("{path} ({} lines)", content.lines().count()));
    // Confinement first: nothing outside the workspace is even read under --yolo.
    if let Err(o) = refuse_outside_under_yolo(ctx, path) {
        return o;
    }
    let abs = ctx.ws.resolve(path).abs;
    let old = match current_content(ctx, &abs, path) {
        Ok(old) => old,
        Err(o) => return o,
    };
    let verb = if old.is_some() { "Overwrite" } else { "Create" };
    let pv = preview::unified(old.as_deref().unwrap_or(""), content, path);
    let r = match check_path(ctx, path, Access::Write, &format!("{verb} {path}"), Some(&pv)) {
        Ok(r) => r,
        Err(o) => return o,
    };
    save(ctx, &r.abs, path, content)
}

/// The raw content with at most one leading and one trailing newline removed, so the first
/// line keeps its indentation (Cline's trim would lose it).
pub(crate) fn content_of(raw: &str) -> &str {
    let s = raw.strip_prefix("\r\n").or_else(|| raw.strip_prefix('\n')).unwrap_or(raw);
    s.strip_suffix("\r\n").or_else(|| s.strip_suffix('\n')).unwrap_or(s)
}

pub(super) fn replace_in_file(call: &Call, ctx: &mut Ctx<'_>) -> Outcome {
    let path = call.param("path").unwrap_or_default();
    let diff_text = call.raw_param("diff").unwrap_or_default();
    ctx.term.tool("replace_in_file", path);
    // Confinement before reading: a failed diff sends the file's content to the model, so a
    // file outside the workspace is read only once a person has allowed it (never under --yolo).
    let resolved = ctx.ws.resolve(path);
    if !resolved.inside {
        let what = format!("Read {path} to edit it");
        if let Err(o) = check_path(ctx, path, Access::Read, &what, None) {
            return o;
        }
    }
    let original = match current_content(ctx, &resolved.abs, path) {
        Ok(s) => s.unwrap_or_default(),
        Err(o) => return o,
    };
    let new = match diff::apply(&original, diff_text) {
        Ok(n) => n,
        Err(e) => {
            ctx.term.outcome(false, "the diff did not apply; file left unchanged");
            return Outcome::Failure {
                text: tool_error(&diff_failure(&e.to_string(), path, &original)),
                mistake: true,
            };
        }
    };
    let pv = preview::unified(&original, &new, path);
    let r = match check_path(ctx, path, Access::Write, &format!("Edit {path}"), Some(&pv)) {
        Ok(r) => r,
        Err(o) => return o,
    };
    save(ctx, &r.abs, path, &new)
}

/// Refuses a path outside the workspace under `--yolo`, before anything is read from it.
fn refuse_outside_under_yolo(ctx: &mut Ctx<'_>, path: &str) -> Result<(), Outcome> {
    if ctx.yolo && !ctx.ws.resolve(path).inside {
        check_path(ctx, path, Access::Write, "", None)?;
    }
    Ok(())
}

/// The file's current text (`None` if it does not exist yet): only a regular file, at most
/// [`fsx::MAX_FILE_BYTES`].
fn current_content(ctx: &mut Ctx<'_>, abs: &Path, path: &str) -> Result<Option<String>, Outcome> {
    let fail = |ctx: &mut Ctx<'_>, msg: String| {
        ctx.term.outcome(false, &msg);
        Err(Outcome::Failure { text: tool_error(&msg), mistake: false })
    };
    match fsx::read_regular_no_follow(abs, fsx::MAX_FILE_BYTES) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(s) => Ok(Some(s)),
            Err(_) => fail(ctx, format!("{path} is not a UTF-8 text file; it cannot be edited with this tool.")),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
            fail(ctx, format!("{path} {e}; it cannot be edited."))
        }
        Err(e) => fail(ctx, format!("Error reading file {path}: {e}")),
    }
}

fn save(ctx: &mut Ctx<'_>, abs: &Path, path: &str, content: &str) -> Outcome {
    match fsx::atomic_write(abs, content.as_bytes()) {
        Ok(()) => {
            ctx.term.outcome(true, &format!("saved {path}"));
            Outcome::Success(format!("The content was successfully saved to {path}."))
        }
        Err(e) => {
            let msg = format!("Error writing file {path}: {e}");
            ctx.term.outcome(false, &msg);
            Outcome::Failure { text: tool_error(&msg), mistake: false }
        }
    }
}

/// Cline's message when a diff fails: the error, the advice, and the file's current content.
fn diff_failure(error: &str, path: &str, original: &str) -> String {
    format!(
        "{error}\n\nThis is likely because the SEARCH block content doesn't match exactly with what's in the file, or if you used multiple SEARCH/REPLACE blocks they may not have been in the order they appear in the file. (Please also ensure that when using the replace_in_file tool, Do NOT add extra characters to the markers (e.g., ------- SEARCH> is INVALID). Do NOT forget to use the closing +++++++ REPLACE marker. Do NOT modify the marker format in any way. Malformed XML will cause complete tool failure and break the entire editing process.)\n\nThe file was reverted to its original state:\n\n<file_content path=\"{path}\">\n{original}\n</file_content>\n\nNow that you have the latest state of the file, try the operation again with fewer, more precise SEARCH blocks. For large files especially, it may be prudent to try to limit yourself to <5 SEARCH/REPLACE blocks at a time, then wait for the user to respond with the result of the operation before following up with another replace_in_file call to make additional edits.\n(If you run into this error 3 times in a row, you may use the write_to_file tool as a fallback.)"
    )
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::{run, Outcome};
    use super::*;
    use crate::run::tools::paths::Workspace;
    use std::os::unix::fs::FileTypeExt;

    #[test]
    fn content_keeps_first_line_indentation() {
        assert_eq!(content_of("\n    indented\n"), "    indented");
        assert_eq!(content_of("\n\nx\n\n"), "\nx\n");
        assert_eq!(content_of("x"), "x");
        assert_eq!(content_of("\r\n  a\r\n"), "  a");
    }

    #[test]
    fn write_creates_dirs_and_writes_raw_content() {
        let d = tempfile::tempdir().unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let out = with_ctx(&ws, |ctx| {
            run(&call("write_to_file", &[("path", "a/b/c.py"), ("content", "\n    x = 1\ny = 2\n")]), ctx)
        });
        assert!(matches!(out, Outcome::Success(_)), "{out:?}");
        assert_eq!(std::fs::read_to_string(d.path().join("a/b/c.py")).unwrap(), "    x = 1\ny = 2");
    }

    #[test]
    fn failed_replace_leaves_file_untouched_and_returns_its_content() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f.txt"), "alpha\nbeta\n").unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let diff =
            "------- SEARCH\nalpha\n=======\nA\n+++++++ REPLACE\n------- SEARCH\ngamma\n=======\nG\n+++++++ REPLACE\n";
        let out = with_ctx(&ws, |ctx| run(&call("replace_in_file", &[("path", "f.txt"), ("diff", diff)]), ctx));
        match out {
            Outcome::Failure { text, mistake } => {
                assert!(mistake);
                assert!(text.contains("gamma\n...does not match anything in the file."));
                assert!(text.contains("<file_content path=\"f.txt\">\nalpha\nbeta\n"));
            }
            o => panic!("{o:?}"),
        }
        assert_eq!(std::fs::read_to_string(d.path().join("f.txt")).unwrap(), "alpha\nbeta\n");
    }

    fn failing_diff() -> &'static str {
        "------- SEARCH\nnot there\n=======\nX\n+++++++ REPLACE"
    }

    #[test]
    fn replace_outside_the_workspace_never_returns_its_content() {
        let parent = tempfile::tempdir().unwrap();
        std::fs::create_dir(parent.path().join("ws")).unwrap();
        let secret = parent.path().join("secret.txt");
        std::fs::write(&secret, "TOP-SECRET-CONTENT\n").unwrap();
        let ws = Workspace::new(&parent.path().join("ws")).unwrap();
        let abs = secret.display().to_string();
        for path in ["../secret.txt", abs.as_str()] {
            let out =
                with_ctx(&ws, |ctx| run(&call("replace_in_file", &[("path", path), ("diff", failing_diff())]), ctx));
            match out {
                Outcome::Failure { text, mistake } => {
                    assert!(!text.contains("TOP-SECRET"), "{path}: {text}");
                    assert!(text.contains("outside the workspace"), "{text}");
                    assert!(!mistake);
                }
                o => panic!("{o:?}"),
            }
        }
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "TOP-SECRET-CONTENT\n");
    }

    #[test]
    fn replace_and_write_refuse_devices_and_fifos_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("f");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo takes a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        std::os::unix::fs::symlink("/dev/zero", d.path().join("zero")).unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let start = std::time::Instant::now();
        for path in ["f", "zero", "/dev/zero"] {
            let out =
                with_ctx(&ws, |ctx| run(&call("replace_in_file", &[("path", path), ("diff", failing_diff())]), ctx));
            assert!(matches!(out, Outcome::Failure { .. }), "{path}: {out:?}");
            let out = with_ctx(&ws, |ctx| run(&call("write_to_file", &[("path", path), ("content", "x")]), ctx));
            assert!(matches!(out, Outcome::Failure { .. }), "{path}: {out:?}");
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    }

    #[test]
    fn replace_refuses_files_over_the_size_cap() {
        let d = tempfile::tempdir().unwrap();
        let f = std::fs::File::create(d.path().join("big.txt")).unwrap();
        f.set_len(fsx::MAX_FILE_BYTES + 1).unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let out =
            with_ctx(&ws, |ctx| run(&call("replace_in_file", &[("path", "big.txt"), ("diff", failing_diff())]), ctx));
        match out {
            Outcome::Failure { text, .. } => assert!(text.contains("too large"), "{}", &text[..text.len().min(500)]),
            o => panic!("{:?}", o),
        }
    }

    #[test]
    fn replace_applies() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f.txt"), "alpha\nbeta\n").unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let diff = "------- SEARCH\nbeta\n=======\nBETA\n+++++++ REPLACE";
        let out = with_ctx(&ws, |ctx| run(&call("replace_in_file", &[("path", "f.txt"), ("diff", diff)]), ctx));
        assert!(matches!(out, Outcome::Success(_)), "{out:?}");
        assert_eq!(std::fs::read_to_string(d.path().join("f.txt")).unwrap(), "alpha\nBETA\n");
    }
}
