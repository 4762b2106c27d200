//! `write_to_file(path, content)` and `replace_in_file(path, diff)` as Cline's
//! `WriteToFileToolHandler` runs them: content clean-up, preview, approval, atomic write (temp
//! file + rename), and Cline's result texts (the saved file, or the diff error with the file).

use std::path::{Path, PathBuf};

use super::doc_form::{self, Form};
use super::{check_edit, check_path, editor, patch, tool_error, Access, Call, Ctx, Outcome};
use super::{diff, fsx, notebook, preview};
use crate::run::prompt;

pub(super) fn write_to_file(call: &Call, ctx: &mut Ctx<'_>) -> Outcome {
    let path = call.param("path").unwrap_or_default();
    let content =
        model_content_fixes(&strip_fences(call.untrimmed_param("content").unwrap_or_default()), ctx.model, path);
    ctx.term
        .tool("write_to_file", &format!("{path} ({})", crate::run::ui::count(content.lines().count() as u64, "line")));
    // Confinement first: nothing outside the workspace is even read under --yolo, nothing
    // `.clineignore` blocks is read for the preview.
    if let Err(o) = refuse_outside_under_yolo(ctx, path).and_then(|()| super::refuse_ignored(ctx, path)) {
        return o;
    }
    let abs = ctx.ws.resolve(path).abs;
    if let Err(o) = refuse_protected(ctx, &abs, path) {
        return o;
    }
    // Before the read: a write after it changes the stamp, and the edit is not saved over it.
    let stamp = fsx::stamp(&abs);
    let (old, in_buffer) = match current_content(ctx, &abs, path, Whole::Replaced) {
        Ok(read) => read,
        Err(o) => return o,
    };
    let verb = if old.is_some() { "Overwrite" } else { "Create" };
    let form = Form::of(old.as_deref());
    // Cline drops a BOM leading the new content (the file keeps its own: `doc_form`).
    let content = doc_form::without_bom(&content);
    let pv = preview::unified(doc_form::without_bom(old.as_deref().unwrap_or("")), &form.text(content), path);
    let edit = match check_edit(ctx, path, &format!("{verb} {path}"), Some(&pv)) {
        Ok((r, edit)) if r.abs == abs => edit,
        Ok((r, _)) => return moved(ctx, path, &abs, &r.abs),
        Err(o) => return denied_file_note(o, old.is_some()),
    };
    save(ctx, &abs, path, content, edit, form, Read { stamp, buffer: old.as_deref().filter(|_| in_buffer) })
}

/// The path led elsewhere when it was checked again (a directory on it swapped for a link, or
/// back): nothing is written, since no one check saw where the write would go.
fn moved(ctx: &mut Ctx<'_>, path: &str, before: &Path, now: &Path) -> Outcome {
    let msg = format!(
        "{path} changed while the edit was prepared: it now leads to {} rather than {}, so the file was not written. Check the path (list_files) and try again.",
        now.display(),
        before.display()
    );
    ctx.term.outcome(false, "the path changed before the write; nothing written");
    Outcome::Failure { text: tool_error(&msg), mistake: false }
}

/// The raw content with at most one leading and one trailing newline removed, so the first
/// line keeps its indentation (Cline's trim would lose it).
pub(crate) fn content_of(raw: &str) -> &str {
    let s = raw.strip_prefix("\r\n").or_else(|| raw.strip_prefix('\n')).unwrap_or(raw);
    s.strip_suffix("\r\n").or_else(|| s.strip_suffix('\n')).unwrap_or(s)
}

/// Cline's clean-up of a Markdown fence some models wrap file content in: a first line
/// starting with ```` ``` ```` (```` ```python ````) and a last line ending with one are dropped.
/// Cline drops each on its own, so a Markdown file that ends with a code block loses its
/// closing fence (and one that starts with one its opening line); here they are dropped only
/// as a pair around content whose own fences pair up ([`wrappable`]), which is how a wrapper
/// looks.
/// Cline then trims; we remove only the newline left at each end, as [`content_of`] does — but
/// look for the closing fence where Cline's trim leaves the end (whitespace after the fence
/// does not hide it: ```` ```\n\n ````), and drop a line's `\r` with it.
fn strip_fences(content: &str) -> String {
    let Some((_, rest)) = content.split_once('\n').filter(|_| content.starts_with("```")) else {
        return content.to_string();
    };
    let rest = content_of(rest);
    let body = super::v4a::js_trim_end(rest);
    let Some(head) = body.strip_suffix("```").map(|b| b.rsplit_once('\n').map_or("", |(head, _)| head)) else {
        return content.to_string();
    };
    if !wrappable(head) {
        return content.to_string();
    }
    content_of(head.strip_suffix('\r').unwrap_or(head)).to_string()
}

/// Whether `body` can sit inside a wrapping fence: its own fence lines pair up, each opened
/// with a language (```` ```sh ````) and closed by a bare ```` ``` ```` — a Markdown file the
/// model wrapped. A bare fence where one would open means the outer lines are the file's own
/// (a file that starts and ends with a code block), which are kept.
fn wrappable(body: &str) -> bool {
    let mut open = false;
    for fence in body.lines().map(|l| l.trim_end_matches('\r')).filter_map(|l| l.strip_prefix("```")) {
        let bare = fence.trim().is_empty();
        match (open, bare) {
            (false, false) => open = true,
            (true, true) => open = false,
            _ => return false,
        }
    }
    !open
}

/// Cline's `applyModelContentFixes`: for models other than Claude, HTML entities some models
/// emit are turned back into characters (not in `.xml` files, where they are syntax), and
/// U+FFFD replacement characters are removed.
pub(crate) fn model_content_fixes(text: &str, model: &str, path: &str) -> String {
    if model.contains("claude") {
        return text.to_string();
    }
    let mut s = text.to_string();
    if !path.to_lowercase().ends_with(".xml") {
        for (entity, c) in [("&gt;", ">"), ("&lt;", "<"), ("&quot;", "\""), ("&amp;", "&"), ("&apos;", "'")] {
            s = s.replace(entity, c);
        }
    }
    s.replace('\u{FFFD}', "")
}

/// Cline's denial of a file edit names what happened to the file.
fn denied_file_note(o: Outcome, exists: bool) -> Outcome {
    match o {
        Outcome::Denied { feedback, .. } => {
            let note = if exists {
                "The file was not updated, and maintains its original contents."
            } else {
                "The file was not created."
            };
            Outcome::Denied { text: format!("{} {note}", prompt::TOOL_DENIED), feedback }
        }
        other => other,
    }
}

pub(super) fn replace_in_file(call: &Call, ctx: &mut Ctx<'_>) -> Outcome {
    let path = call.param("path").unwrap_or_default();
    // Cline's handler sees the parser's trimmed value, or a native call's as sent.
    let diff_text = model_content_fixes(call.param("diff").unwrap_or_default(), ctx.model, path);
    ctx.term.tool("replace_in_file", path);
    // Confinement before reading: a failed diff sends the file's content to the model, so a
    // file `.clineignore` blocks is never read, and one outside the workspace only once a
    // person has allowed it (never under --yolo).
    if let Err(o) = super::refuse_ignored(ctx, path) {
        return o;
    }
    let resolved = ctx.ws.resolve(path);
    if let Err(o) = refuse_protected(ctx, &resolved.abs, path) {
        return o;
    }
    if !resolved.inside {
        let what = format!("Read {path} to edit it");
        if let Err(o) = check_path(ctx, path, Access::Read, &what, None) {
            // Cline asks once, and its refusal says what became of the file.
            return denied_file_note(o, resolved.abs.exists());
        }
    }
    let stamp = fsx::stamp(&resolved.abs);
    let (existing, in_buffer) = match current_content(ctx, &resolved.abs, path, Whole::Edited) {
        Ok(read) => read,
        Err(o) => return o,
    };
    let form = Form::of(existing.as_deref());
    // Cline edits the text as decoded: without the BOM.
    let original = doc_form::without_bom(existing.as_deref().unwrap_or_default()).to_string();
    // A SEARCH that quotes entities the file holds (`Tom &amp; Jerry` in HTML) is applied as
    // written when it matches so: the clean-up made it text the model never wrote, which
    // matched nothing (or the wrong place), and the entities of its REPLACE were lost.
    let raw = call.param("diff").unwrap_or_default();
    let searched = diff::search_parts(raw);
    let as_written = (model_content_fixes(&searched, ctx.model, path) != searched)
        .then(|| diff::apply(&original, raw).ok())
        .flatten();
    let new = match as_written.map_or_else(|| diff::apply(&original, &diff_text), Ok) {
        Ok(n) => n,
        // Cline edits a missing file as an empty one: only an empty SEARCH can apply. (A diff
        // refused for its own faults says so, not that the file is missing.)
        Err(diff::DiffError::NoMatch { .. }) if existing.is_none() => {
            let msg = format!(
                "The file {path} does not exist, so replace_in_file cannot edit it. Use write_to_file to create it, or check the path with list_files."
            );
            ctx.term.outcome(false, &format!("{path} does not exist"));
            return Outcome::Failure { text: tool_error(&msg), mistake: true };
        }
        Err(e) => {
            ctx.term.outcome(false, "the diff did not apply; file left unchanged");
            return Outcome::Failure {
                text: tool_error(&format!(
                    "{e}\n\n{}",
                    prompt::diff_error(path, &notebook::for_model(path, &original))
                )),
                mistake: true,
            };
        }
    };
    let pv = preview::unified(&original, &form.text(&new), path);
    let edit = match check_edit(ctx, path, &format!("Edit {path}"), Some(&pv)) {
        Ok((r, edit)) if r.abs == resolved.abs => edit,
        Ok((r, _)) => return moved(ctx, path, &resolved.abs, &r.abs),
        Err(o) => return denied_file_note(o, existing.is_some()),
    };
    let read = Read { stamp, buffer: existing.as_deref().filter(|_| in_buffer) };
    save(ctx, &resolved.abs, path, doc_form::without_bom(&new), edit, form, read)
}

/// Refuses a file under `.git/` (anywhere), `.clinerules/hooks/` or `.cline/` of the workspace,
/// or in a directory outside any project that later runs trust (`sandbox::guarded`): what is
/// there runs later outside any sandbox (git's hooks and config, Cline's hooks, the project's
/// MCP servers) or is trusted by every later run, so neither the tools nor sandboxed commands
/// write there.
pub(super) fn refuse_protected(ctx: &mut Ctx<'_>, abs: &Path, path: &str) -> Result<(), Outcome> {
    let root = ctx.ws.root();
    let real = crate::run::sandbox::guarded::real_path(abs);
    // Judged by where the path leads and by the path as written: `.git` may be a link (Android's
    // `repo` makes it one, into `.repo/`), and where it leads may be named without `.git`.
    let rel = abs.strip_prefix(root).unwrap_or(abs);
    let written = lexical(root, path);
    let git = [rel, written.as_path()].iter().any(|p| p.components().any(|c| c.as_os_str() == ".git"))
        || in_git_dir(root, &real);
    let in_workspace = crate::run::spawn::PROTECTED
        .iter()
        .find(|p| {
            rel.starts_with(p)
                || written.starts_with(p)
                || std::fs::canonicalize(root.join(p)).is_ok_and(|t| real.starts_with(t))
        })
        .copied()
        .or(git.then_some(".git"));
    let (dir, holds) = if let Some(dir) = crate::run::sandbox::current().guarded_dir(root, &real) {
        (dir.display().to_string(), "it holds settings, approvals, hooks or rules that every later run trusts")
    } else if let Some(dir) = in_workspace {
        (
            format!("{dir}/"),
            "files there run later outside the sandbox (git hooks and config, Cline hooks, MCP server settings)",
        )
    } else {
        return Ok(());
    };
    ctx.term.outcome(false, &format!("{path} is in {dir}, which agent-min does not write"));
    let msg = format!(
        "{path} is inside {dir}, which agent-min never writes: {holds}. If this change is needed, ask the user to make it themselves."
    );
    Err(Outcome::Failure { text: tool_error(&msg), mistake: false })
}

/// `path` relative to `root` as written (`..` taken lexically, no link followed).
fn lexical(root: &Path, path: &str) -> PathBuf {
    let joined = root.join(path);
    let mut out = PathBuf::new();
    for c in joined.strip_prefix(root).unwrap_or(&joined).components() {
        match c {
            std::path::Component::Normal(s) => out.push(s),
            std::path::Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    out
}

/// Whether `real` lies in a git directory inside `root` (canonical, as the workspace's is) by
/// another name than `.git` (a link's target such as `.repo/projects/x.git`, a bare
/// repository): a directory holding `HEAD`, `objects/` and `refs/`, git's own test for one.
fn in_git_dir(root: &Path, real: &Path) -> bool {
    real.ancestors()
        .skip(1)
        .take_while(|d| d.starts_with(root))
        .any(|d| d.join("HEAD").is_file() && d.join("objects").is_dir() && d.join("refs").is_dir())
}

/// Refuses a path outside the workspace under `--yolo`, before anything is read from it.
fn refuse_outside_under_yolo(ctx: &mut Ctx<'_>, path: &str) -> Result<(), Outcome> {
    if ctx.yolo && !ctx.ws.resolve(path).inside {
        check_path(ctx, path, Access::Write, "", None)?;
    }
    Ok(())
}

/// What becomes of the file's current content.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Whole {
    /// Replaced whole (`write_to_file`): any content will do; text that is not UTF-8 is shown
    /// in the preview as far as it decodes, as Cline overwrites any file.
    Replaced,
    /// Edited in place (`replace_in_file`): it must be UTF-8 text, or the edit would rewrite
    /// the bytes around it in another encoding.
    Edited,
}

/// The file's current text (`None` if it does not exist yet): only a regular file, at most
/// [`fsx::MAX_FILE_BYTES`]; and whether an editor's buffer gave it.
fn current_content(ctx: &mut Ctx<'_>, abs: &Path, path: &str, whole: Whole) -> Result<(Option<String>, bool), Outcome> {
    let fail = |ctx: &mut Ctx<'_>, msg: String| {
        ctx.term.outcome(false, &msg);
        Err(Outcome::Failure { text: tool_error(&msg), mistake: false })
    };
    match fsx::read_regular_no_follow(abs, fsx::MAX_FILE_BYTES) {
        Ok(bytes) => match String::from_utf8(bytes) {
            // An editor's buffer may hold changes not yet saved: the edit applies to those.
            Ok(s) => match ctx.term.buffer_text(abs) {
                None => Ok((Some(s), false)),
                Some(Ok(text)) => Ok((Some(text), true)),
                Some(Err(e)) => fail(ctx, format!("Error reading file {path} from the editor: {e}")),
            },
            Err(e) if whole == Whole::Replaced => Ok((Some(String::from_utf8_lossy(e.as_bytes()).into_owned()), false)),
            Err(_) => fail(
                ctx,
                format!("{path} is not a UTF-8 text file; it cannot be edited with this tool (write_to_file can replace it whole)."),
            ),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((None, false)),
        // A file where a folder should be (`a.txt/b.txt`): said now, before any preview or
        // approval of a file that cannot be made.
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {
            fail(ctx, format!("Error writing file {path}: {e}; nothing was written."))
        }
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => {
            fail(ctx, format!("{path} {e}; it cannot be edited."))
        }
        Err(e) => fail(ctx, format!("Error reading file {path}: {e}")),
    }
}

/// The file as the edit read it: its stamp on disk, taken before the read, and the text an
/// editor's buffer gave (`None`: read from disk, or not there).
struct Read<'a> {
    stamp: Option<fsx::Stamp>,
    buffer: Option<&'a str>,
}

/// Whether the file at `abs` changed since it was read: in an editor, when its buffer gave
/// the text (`buffer`), whether the buffer's text differs (the edit goes there); else whether
/// its stamp on disk differs from `stamp`. Shared with `apply_patch`.
pub(super) fn changed_since(ctx: &mut Ctx<'_>, abs: &Path, stamp: Option<fsx::Stamp>, buffer: Option<&str>) -> bool {
    match buffer.map(|was| (was, ctx.term.buffer_text(abs))) {
        Some((was, Some(Ok(now)))) => now != was,
        _ => fsx::stamp(abs) != stamp,
    }
}

/// Writes the file in its `form` — after the person's edits, when they chose to edit the
/// proposal — and gives the model Cline's success text with the file as saved (and the
/// person's changes as a patch, when they made any). `abs` is where `path` led when it was
/// checked (`refuse_protected`, the preview, the approval): the file is written there or
/// nowhere. Nor is it written if it changed since `read`.
fn save(ctx: &mut Ctx<'_>, abs: &Path, path: &str, proposed: &str, edit: bool, form: Form, read: Read<'_>) -> Outcome {
    let content = if edit {
        match editor::edit(proposed, path) {
            Ok(edited) => edited,
            Err(e) => {
                ctx.term.outcome(false, &e);
                let msg = format!("The person's editor failed ({e}); the file was not changed.");
                return Outcome::Failure { text: tool_error(&msg), mistake: false };
            }
        }
    } else {
        proposed.to_string()
    };
    // As VS Code's document saves it: its line ending, the file's BOM.
    let saved = form.text(&content);
    // A directory on the path swapped for a link since it was checked (a command left running
    // can do it while the preview is built or the person reads it) would lead the write where
    // no check looked, `.git/config` say; our own write refuses a link on the way, but an
    // editor's follows links, so it is looked at again at the last moment.
    let now = ctx.ws.resolve(path).abs;
    if now != abs {
        return moved(ctx, path, abs, &now);
    }
    // Written meanwhile (the person saved their own change while asked, or a command did):
    // saving the edit would lose that change, which no checkpoint holds. (Cline's VS Code
    // document takes the person's edits in; its headless writer overwrites them.)
    // In an editor the edit goes to its buffer: its text is what must be as read (the person
    // saving it to disk meanwhile changed nothing the edit would lose).
    // (A file read from disk is not asked of the editor: a file that was not there would be
    // answered an error, one not UTF-8 decoded otherwise than here.)
    if changed_since(ctx, abs, read.stamp, read.buffer) {
        let msg = format!(
            "{path} was changed (by the person or a program) while this edit waited, so the edit was not saved: saving it would have overwritten that change. Read the file again and make the edit on what it holds now."
        );
        ctx.term.outcome(false, "the file changed meanwhile; the edit was not saved");
        return Outcome::Failure { text: tool_error(&msg), mistake: false };
    }
    let written = match ctx.term.buffer_write(abs, &saved) {
        Some(through_editor) => through_editor,
        None => fsx::atomic_write(abs, &form.bytes(&saved)).map_err(|e| e.to_string()),
    };
    if let Err(e) = written {
        let msg = format!("Error writing file {path}: {e}");
        ctx.term.outcome(false, &msg);
        return Outcome::Failure { text: tool_error(&msg), mistake: false };
    }
    ctx.memory.reads.forget(abs);
    ctx.memory.watched.saw(path, abs);
    ctx.term.outcome(true, &format!("saved {path}"));
    // Cline normalises both texts with the proposal's line ending before comparing them. The
    // model is shown the file as saved in the proposal's line ending, as Cline shows it, but
    // otherwise byte for byte (Cline's normalised text may have a final newline the file does
    // not). A notebook is shown without its outputs, as Cline shows it.
    let eol = prompt::eol_of(proposed);
    let (normal_proposed, normal_saved) = (prompt::normalized(proposed, eol), prompt::normalized(&content, eol));
    let shown = notebook::for_model(path, &doc_form::with_eol(&saved, eol));
    if normal_proposed == normal_saved {
        return Outcome::Success(prompt::file_edit_without_user_changes(path, &shown));
    }
    // Cline's `user_edited`: the file is listed under the next details' Recently Modified Files.
    ctx.memory.watched.edited_by_person(path, abs);
    let changes = patch::pretty_patch(&normal_proposed, &normal_saved)
        .unwrap_or_else(|| "(the changes are too many to show as a patch)".to_string());
    Outcome::Success(prompt::file_edit_with_user_changes(path, &changes, &shown))
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
        // XML: the line break after `<content>` and the one before `</content>` are the tags'.
        let parsed = parser_core::parse(
            "<write_to_file>\n<path>a/b/c.py</path>\n<content>\n    x = 1\ny = 2\n</content>\n</write_to_file>",
        );
        let Some(parser_core::Block::ToolUse(t)) = parsed.iter().next() else { panic!("a tool block") };
        let out = with_ctx(&ws, |ctx| run(&Call::from_xml(&t), ctx));
        assert!(matches!(out, Outcome::Success(_)), "{out:?}");
        assert_eq!(std::fs::read_to_string(d.path().join("a/b/c.py")).unwrap(), "    x = 1\ny = 2");
        // Native: the JSON string is the file, its final line break too (as Cline writes it).
        let out = with_ctx(&ws, |ctx| {
            run(&call("write_to_file", &[("path", "n.py"), ("content", "\n    x = 1\ny = 2\n")]), ctx)
        });
        assert!(matches!(out, Outcome::Success(_)), "{out:?}");
        assert_eq!(std::fs::read_to_string(d.path().join("n.py")).unwrap(), "\n    x = 1\ny = 2\n");
    }

    /// Swaps `dir` for a link to `to` when the edit reads the file's current text (between the
    /// checks and the write); writes nothing itself.
    struct SwapOnRead {
        dir: PathBuf,
        to: PathBuf,
    }

    impl crate::run::ui::term::Buffers for SwapOnRead {
        fn read(&mut self, _: &Path) -> Option<Result<String, String>> {
            if !self.dir.is_symlink() {
                std::fs::rename(&self.dir, self.dir.with_extension("old")).unwrap();
                std::os::unix::fs::symlink(&self.to, &self.dir).unwrap();
            }
            None
        }
        fn write(&mut self, _: &Path, _: &str) -> Option<Result<(), String>> {
            None
        }
    }

    #[test]
    fn a_directory_swapped_for_a_link_after_the_checks_does_not_lead_the_write_elsewhere() {
        // A command left running swaps `ok` for a link to `.git` while the edit is prepared:
        // the checks judged `ok/config`, and the write went to `.git/config` (a core.fsmonitor
        // there runs at the person's next `git status`).
        for tool in ["write_to_file", "replace_in_file"] {
            let d = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(d.path().join(".git")).unwrap();
            std::fs::write(d.path().join(".git/config"), "[core]\n").unwrap();
            std::fs::create_dir(d.path().join("ok")).unwrap();
            std::fs::write(d.path().join("ok/config"), "[core]\n").unwrap();
            let ws = Workspace::new(d.path()).unwrap();
            let swap = SwapOnRead { dir: d.path().join("ok"), to: d.path().join(".git") };
            let term = crate::run::ui::term::Term::new().with_buffers(Box::new(swap));
            let evil = "[core]\n\tfsmonitor = \"touch pwned; false\"\n";
            let diff = format!("------- SEARCH\n[core]\n=======\n{evil}+++++++ REPLACE");
            let params = match tool {
                "write_to_file" => [("path", "ok/config"), ("content", evil)],
                _ => [("path", "ok/config"), ("diff", diff.as_str())],
            };
            let out = with_ctx_on(&ws, term, |ctx| run(&call(tool, &params), ctx));
            let Outcome::Failure { text, .. } = out else { panic!("{tool}: written: {out:?}") };
            assert!(text.contains("changed while the edit was prepared"), "{text}");
            assert_eq!(std::fs::read_to_string(d.path().join(".git/config")).unwrap(), "[core]\n", "{tool}");
            assert_eq!(std::fs::read_to_string(d.path().join("ok.old/config")).unwrap(), "[core]\n", "{tool}");
        }
    }

    /// Swaps a link for a directory and back, on the read and on the approval: the checks
    /// see `ok` in turn outside, inside (asked about as inside), outside.
    struct Flip {
        ok: PathBuf,
        outside: PathBuf,
    }

    impl Flip {
        fn to_dir(&self) {
            std::fs::remove_file(&self.ok).unwrap();
            std::fs::create_dir(&self.ok).unwrap();
            std::fs::write(self.ok.join("f"), "inside\n").unwrap();
        }
        fn to_link(&self) {
            std::fs::remove_dir_all(&self.ok).unwrap();
            std::os::unix::fs::symlink(&self.outside, &self.ok).unwrap();
        }
    }

    impl crate::run::ui::term::Buffers for std::sync::Arc<Flip> {
        fn read(&mut self, _: &Path) -> Option<Result<String, String>> {
            self.to_dir();
            None
        }
        fn write(&mut self, _: &Path, _: &str) -> Option<Result<(), String>> {
            None
        }
    }

    impl crate::run::ui::term::Asker for std::sync::Arc<Flip> {
        fn approve(&mut self, _: Option<&str>, what: &str) -> crate::run::ui::term::Approval {
            // (replace_in_file asks first to read the file, outside: a read, said so.)
            if !what.contains("OUTSIDE") {
                self.to_link();
            }
            crate::run::ui::term::Approval::Yes
        }
        fn answer(&mut self, _: &str) -> Option<String> {
            None
        }
    }

    #[test]
    fn an_edit_asked_about_as_inside_is_not_written_where_the_path_led_before() {
        // The path led outside when it was resolved for the write, inside when it was checked
        // and asked about, outside again at the write: it was written outside, unasked.
        for tool in ["write_to_file", "replace_in_file"] {
            let parent = tempfile::tempdir().unwrap();
            let (root, outside) = (parent.path().join("ws"), parent.path().join("outside"));
            std::fs::create_dir_all(&root).unwrap();
            std::fs::create_dir_all(&outside).unwrap();
            std::fs::write(outside.join("f"), "inside\n").unwrap();
            std::os::unix::fs::symlink(&outside, root.join("ok")).unwrap();
            let ws = Workspace::new(&root).unwrap();
            let flip = std::sync::Arc::new(Flip { ok: ws.root().join("ok"), outside: outside.clone() });
            let term = crate::run::ui::term::Term::new()
                .answered_by(Box::new(flip.clone()))
                .with_buffers(Box::new(flip.clone()));
            let diff = "------- SEARCH\ninside\n=======\nwritten\n+++++++ REPLACE";
            let params = match tool {
                "write_to_file" => [("path", "ok/f"), ("content", "written\n")],
                _ => [("path", "ok/f"), ("diff", diff)],
            };
            let out = with_ctx_on(&ws, term, |ctx| {
                ctx.yolo = false;
                run(&call(tool, &params), ctx)
            });
            assert!(matches!(&out, Outcome::Failure { text, .. } if text.contains("changed while")), "{tool}: {out:?}");
            assert_eq!(std::fs::read_to_string(outside.join("f")).unwrap(), "inside\n", "{tool}: written outside");
        }
    }

    /// Saves its own line to the file while it is asked about the edit, on disk or (`buffer`)
    /// in the editor's buffer, as a person would.
    struct SavesMeanwhile {
        file: PathBuf,
        buffer: std::sync::Mutex<Option<String>>,
        in_editor: bool,
        /// Only saves the editor's buffer to disk, changing nothing in it.
        saves_buffer: bool,
    }

    impl crate::run::ui::term::Asker for std::sync::Arc<SavesMeanwhile> {
        fn approve(&mut self, _: Option<&str>, _: &str) -> crate::run::ui::term::Approval {
            if self.saves_buffer {
                std::fs::write(&self.file, self.buffer.lock().unwrap().clone().unwrap()).unwrap();
            } else if self.in_editor {
                self.buffer.lock().unwrap().as_mut().unwrap().push_str("mine\n");
            } else {
                let mut text = std::fs::read_to_string(&self.file).unwrap();
                text.push_str("mine\n");
                std::fs::write(&self.file, text).unwrap();
            }
            crate::run::ui::term::Approval::Yes
        }
        fn answer(&mut self, _: &str) -> Option<String> {
            None
        }
    }

    impl crate::run::ui::term::Buffers for std::sync::Arc<SavesMeanwhile> {
        fn read(&mut self, _: &Path) -> Option<Result<String, String>> {
            self.in_editor.then(|| Ok(self.buffer.lock().unwrap().clone().unwrap()))
        }
        fn write(&mut self, _: &Path, text: &str) -> Option<Result<(), String>> {
            self.in_editor.then(|| {
                *self.buffer.lock().unwrap() = Some(text.to_string());
                Ok(())
            })
        }
    }

    /// `tool`'s edit of `m.txt` (`one\ntwo\n` on disk; `buffer` in the editor, `in_editor`)
    /// as [`SavesMeanwhile`] answers it: the outcome, and what the buffer (in the editor) or the
    /// file then holds.
    fn edit_while_asked(tool: &'static str, buffer: &str, in_editor: bool, saves_buffer: bool) -> (Outcome, String) {
        let d = tempfile::tempdir().unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let file = ws.root().join("m.txt");
        std::fs::write(&file, "one\ntwo\n").unwrap();
        let person = std::sync::Arc::new(SavesMeanwhile {
            file: file.clone(),
            buffer: std::sync::Mutex::new(Some(buffer.to_string())),
            in_editor,
            saves_buffer,
        });
        let term = crate::run::ui::term::Term::new()
            .answered_by(Box::new(person.clone()))
            .with_buffers(Box::new(person.clone()));
        let diff = "------- SEARCH\none\n=======\nONE\n+++++++ REPLACE";
        let patch = "*** Begin Patch\n*** Update File: m.txt\n-one\n+ONE\n two\n*** End Patch";
        let params: &[(&str, &str)] = match tool {
            "write_to_file" => &[("path", "m.txt"), ("content", "ONE\ntwo\n")],
            "replace_in_file" => &[("path", "m.txt"), ("diff", diff)],
            _ => &[("input", patch)],
        };
        let out = with_ctx_on(&ws, term, |ctx| {
            (ctx.tool, ctx.yolo) = (tool, false);
            run(&call(tool, params), ctx)
        });
        let now = match in_editor {
            true => person.buffer.lock().unwrap().clone().unwrap(),
            false => std::fs::read_to_string(&file).unwrap(),
        };
        (out, now)
    }

    /// An editor that decodes a file by its own encoding, asked nothing meanwhile.
    struct Latin1Editor;

    impl crate::run::ui::term::Buffers for Latin1Editor {
        fn read(&mut self, _: &Path) -> Option<Result<String, String>> {
            Some(Ok("café\n".to_string()))
        }
        fn write(&mut self, _: &Path, _: &str) -> Option<Result<(), String>> {
            Some(Ok(()))
        }
    }

    impl crate::run::ui::term::Asker for Latin1Editor {
        fn approve(&mut self, _: Option<&str>, _: &str) -> crate::run::ui::term::Approval {
            crate::run::ui::term::Approval::Yes
        }
        fn answer(&mut self, _: &str) -> Option<String> {
            None
        }
    }

    /// In an editor, a file that is not UTF-8 on disk (read from disk, decoded here) is
    /// overwritten when nothing changed: its check was against the editor's own decoding, which
    /// never matched, and every try was refused as changed meanwhile.
    #[test]
    fn a_file_read_from_disk_in_an_editor_is_checked_on_disk() {
        let d = tempfile::tempdir().unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        std::fs::write(d.path().join("l.txt"), b"caf\xe9\n").unwrap();
        let term =
            crate::run::ui::term::Term::new().answered_by(Box::new(Latin1Editor)).with_buffers(Box::new(Latin1Editor));
        let out = with_ctx_on(&ws, term, |ctx| {
            ctx.yolo = false;
            run(&call("write_to_file", &[("path", "l.txt"), ("content", "new\n")]), ctx)
        });
        assert!(matches!(out, Outcome::Success(_)), "{out:?}");
    }

    /// A change saved to the file while the person is asked about an edit (by them, in their
    /// editor, or by a command) is not overwritten: the edit is refused and the model told to
    /// read the file again. It was overwritten, and the model told the edit succeeded.
    #[test]
    fn a_change_saved_while_the_edit_is_asked_about_is_not_overwritten() {
        for tool in ["write_to_file", "replace_in_file", "apply_patch"] {
            for in_editor in [false, true] {
                let (out, now) = edit_while_asked(tool, "one\ntwo\n", in_editor, false);
                let said = format!("{tool}, in the editor: {in_editor}: {out:?}");
                assert!(
                    matches!(&out, Outcome::Failure { text, mistake: false } if text.contains("Read the file again")),
                    "{said}"
                );
                assert_eq!(now, "one\ntwo\nmine\n", "{said}");
            }
        }
    }

    /// In an editor, the person saving the buffer the edit was made from (its unsaved lines
    /// written to disk) while asked loses nothing: the edit goes to the buffer, as it was read.
    #[test]
    fn a_buffer_saved_to_disk_while_the_edit_is_asked_about_is_still_edited() {
        for tool in ["replace_in_file", "apply_patch"] {
            let (out, now) = edit_while_asked(tool, "one\ntwo\nunsaved\n", true, true);
            assert!(matches!(out, Outcome::Success(_)), "{tool}: {out:?}");
            assert_eq!(now, "ONE\ntwo\nunsaved\n", "{tool}");
        }
    }

    #[test]
    fn the_tools_never_write_git_hooks_cline_hooks_or_mcp_settings() {
        // A --yolo run could plant .git/hooks/pre-commit, a hook and an MCP
        // server that later ran unsandboxed.
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(".git/hooks")).unwrap();
        std::fs::create_dir_all(d.path().join("sub/.git")).unwrap();
        std::fs::write(d.path().join(".cline-notes.md"), "a\n").unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        for path in [
            ".git/hooks/pre-commit",
            ".git/config",
            ".clinerules/hooks/TaskResume",
            ".cline/mcp.json",
            "sub/.git/config",
        ] {
            let out = with_ctx(&ws, |ctx| {
                run(&call("write_to_file", &[("path", path), ("content", "#!/bin/sh\ntouch pwned\n")]), ctx)
            });
            let Outcome::Failure { text, .. } = out else { panic!("{path} was written: {out:?}") };
            assert!(text.contains("agent-min never writes") && text.contains("ask the user"), "{text}");
            assert!(!d.path().join(path).exists(), "{path}");
        }
        std::fs::write(d.path().join(".git/config"), "[core]\n").unwrap();
        let diff = "------- SEARCH\n[core]\n=======\n[core]\n\tfsmonitor = ./x\n+++++++ REPLACE";
        let out = with_ctx(&ws, |ctx| run(&call("replace_in_file", &[("path", ".git/config"), ("diff", diff)]), ctx));
        assert!(matches!(out, Outcome::Failure { .. }), "{out:?}");
        assert_eq!(std::fs::read_to_string(d.path().join(".git/config")).unwrap(), "[core]\n");
        // Neighbours with similar names are ordinary files.
        for path in [".cline-notes.md", ".clinerules/rules.md", ".github/x.yml"] {
            let out = with_ctx(&ws, |ctx| run(&call("write_to_file", &[("path", path), ("content", "ok")]), ctx));
            assert!(matches!(out, Outcome::Success(_)), "{path}: {out:?}");
        }
    }

    #[test]
    fn a_file_that_is_not_utf8_is_replaced_whole_as_in_cline_and_never_edited_in_place() {
        let d = tempfile::tempdir().unwrap();
        let latin1 = b"caf\xe9 = 1\n";
        std::fs::write(d.path().join("menu.txt"), latin1).unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let diff = "------- SEARCH\n= 1\n=======\n= 2\n+++++++ REPLACE";
        let out = with_ctx(&ws, |ctx| run(&call("replace_in_file", &[("path", "menu.txt"), ("diff", diff)]), ctx));
        let Outcome::Failure { text, .. } = out else { panic!("edited in place: {out:?}") };
        assert!(text.contains("not a UTF-8 text file") && text.contains("write_to_file"), "{text}");
        assert_eq!(std::fs::read(d.path().join("menu.txt")).unwrap(), latin1);
        let out =
            with_ctx(&ws, |ctx| run(&call("write_to_file", &[("path", "menu.txt"), ("content", "café = 2\n")]), ctx));
        assert!(matches!(out, Outcome::Success(_)), "{out:?}");
        assert_eq!(std::fs::read_to_string(d.path().join("menu.txt")).unwrap(), "café = 2\n");
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

    #[test]
    fn a_failed_replace_never_returns_a_clineignored_files_content() {
        // A SEARCH that matches nothing sends the file back: a file .clineignore blocks is
        // refused before it is read, through a symlinked directory too.
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join(".clineignore"),
            ".env
secrets/
",
        )
        .unwrap();
        std::fs::write(
            d.path().join(".env"),
            "DB_PASSWORD=hunter2
",
        )
        .unwrap();
        std::fs::create_dir(d.path().join("secrets")).unwrap();
        std::fs::write(
            d.path().join("secrets/a.txt"),
            "DB_PASSWORD=hunter2
",
        )
        .unwrap();
        std::os::unix::fs::symlink("secrets", d.path().join("sd")).unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        for path in [".env", "sd/a.txt", "./secrets/a.txt"] {
            for tool in ["replace_in_file", "write_to_file"] {
                let params: &[(&str, &str)] = if tool == "write_to_file" {
                    &[("path", path), ("content", "x")]
                } else {
                    &[("path", path), ("diff", failing_diff())]
                };
                let out = with_ctx(&ws, |ctx| {
                    ctx.tool = tool; // as the loop sets it
                    run(&call(tool, params), ctx)
                });
                match out {
                    Outcome::Failure { text, .. } => {
                        assert!(text.contains(".clineignore") && !text.contains("hunter2"), "{tool} {path}: {text}")
                    }
                    o => panic!("{tool} {path}: {o:?}"),
                }
            }
        }
        assert_eq!(
            std::fs::read_to_string(d.path().join(".env")).unwrap(),
            "DB_PASSWORD=hunter2
"
        );
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

    /// A person who refuses the edit of a file outside the workspace is refused once, as in
    /// Cline, whose refusal says the file was left as it was.
    #[test]
    fn refusing_an_edit_outside_the_workspace_says_the_file_was_not_updated() {
        struct No;
        impl crate::run::ui::term::Asker for No {
            fn approve(&mut self, _: Option<&str>, _: &str) -> crate::run::ui::term::Approval {
                crate::run::ui::term::Approval::No(None)
            }
            fn answer(&mut self, _: &str) -> Option<String> {
                None
            }
        }
        let parent = tempfile::tempdir().unwrap();
        std::fs::create_dir(parent.path().join("ws")).unwrap();
        std::fs::write(parent.path().join("kept.txt"), "kept\n").unwrap();
        let ws = Workspace::new(&parent.path().join("ws")).unwrap();
        let diff = "------- SEARCH\nkept\n=======\nX\n+++++++ REPLACE";
        for (path, note) in [
            ("../kept.txt", "The file was not updated, and maintains its original contents."),
            ("../new.txt", "The file was not created."),
        ] {
            let out = with_ctx(&ws, |ctx| {
                ctx.yolo = false;
                *ctx.term = crate::run::ui::term::Term::new().answered_by(Box::new(No));
                run(&call("replace_in_file", &[("path", path), ("diff", diff)]), ctx)
            });
            match out {
                Outcome::Denied { text, .. } => assert_eq!(text, format!("{} {note}", prompt::TOOL_DENIED)),
                o => panic!("{path}: {o:?}"),
            }
        }
        assert_eq!(std::fs::read_to_string(parent.path().join("kept.txt")).unwrap(), "kept\n");
    }

    #[allow(unsafe_code)] // mkfifo(3): the FIFO this test needs
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

    #[test]
    fn success_sends_clines_text_with_the_saved_file() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f.txt"), "alpha\r\nbeta\r\n").unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let diff = "------- SEARCH\nbeta\r\n=======\nBETA\r\n+++++++ REPLACE";
        let out = with_ctx(&ws, |ctx| run(&call("replace_in_file", &[("path", "f.txt"), ("diff", diff)]), ctx));
        let Outcome::Success(text) = out else { panic!("{out:?}") };
        assert_eq!(
            text,
            "The content was successfully saved to f.txt.\n\nHere is the full, updated content of the file that was saved:\n\n<final_file_content path=\"f.txt\">\nalpha\r\nBETA\r\n\n</final_file_content>\n\nIMPORTANT: For any future changes to this file, use the final_file_content shown above as your reference. This content reflects the current state of the file, including any auto-formatting (e.g., if you used single quotes but the formatter converted them to double quotes). Always base your SEARCH/REPLACE operations on this final version to ensure accuracy.\n\n"
        );
        assert_eq!(std::fs::read_to_string(d.path().join("f.txt")).unwrap(), "alpha\r\nBETA\r\n");
    }

    #[test]
    fn the_diff_is_the_trimmed_value() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f.txt"), "a\nb\n").unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        // Untrimmed, the last line would be "  " (not a marker) after the block: trimmed, the
        // REPLACE marker is the last line.
        let diff = "\n------- SEARCH\nb\n=======\nB\n+++++++ REPLACE\n  ";
        let out = with_ctx(&ws, |ctx| run(&call("replace_in_file", &[("path", "f.txt"), ("diff", diff)]), ctx));
        assert!(matches!(out, Outcome::Success(_)), "{out:?}");
        assert_eq!(std::fs::read_to_string(d.path().join("f.txt")).unwrap(), "a\nB\n");
    }

    #[test]
    fn replace_in_a_missing_file_says_it_does_not_exist() {
        let d = tempfile::tempdir().unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let out =
            with_ctx(&ws, |ctx| run(&call("replace_in_file", &[("path", "nope.txt"), ("diff", failing_diff())]), ctx));
        match out {
            Outcome::Failure { text, .. } => assert!(text.contains("The file nope.txt does not exist"), "{text}"),
            o => panic!("{o:?}"),
        }
        assert!(!d.path().join("nope.txt").exists());
        // A diff refused for its own fault says that fault, not only that the file is missing.
        let unclosed = "------- SEARCH\n=======\nnew\n------- SEARCH\n";
        let out = with_ctx(&ws, |ctx| run(&call("replace_in_file", &[("path", "nope.txt"), ("diff", unclosed)]), ctx));
        assert!(matches!(&out, Outcome::Failure { text, .. } if !text.contains("does not exist")), "{out:?}");
        // An empty SEARCH creates it, as in Cline.
        let diff = "------- SEARCH\n=======\nnew\n+++++++ REPLACE";
        let out = with_ctx(&ws, |ctx| run(&call("replace_in_file", &[("path", "nope.txt"), ("diff", diff)]), ctx));
        assert!(matches!(out, Outcome::Success(_)), "{out:?}");
        assert_eq!(std::fs::read_to_string(d.path().join("nope.txt")).unwrap(), "new\n");
        // So does a SEARCH of a blank line: it matches the empty file's one empty line.
        let diff = "------- SEARCH\n\n=======\nprint(1)\n+++++++ REPLACE";
        let out = with_ctx(&ws, |ctx| run(&call("replace_in_file", &[("path", "blank.py"), ("diff", diff)]), ctx));
        assert!(matches!(out, Outcome::Success(_)), "{out:?}");
        assert_eq!(std::fs::read_to_string(d.path().join("blank.py")).unwrap(), "print(1)\n");
    }

    #[test]
    fn a_failed_diff_that_cline_would_apply_silently_leaves_the_file_and_says_why() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f.txt"), "a\nb\n").unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let diff = "------- SEARCH\nb\n=======\nB\n- item";
        let out = with_ctx(&ws, |ctx| run(&call("replace_in_file", &[("path", "f.txt"), ("diff", diff)]), ctx));
        match out {
            Outcome::Failure { text, mistake: true } => {
                assert!(text.contains("\"- item\" is inside a SEARCH/REPLACE block that was never closed"), "{text}");
                assert!(text.contains("<file_content path=\"f.txt\">\na\nb\n\n</file_content>"), "{text}");
            }
            o => panic!("{o:?}"),
        }
        assert_eq!(std::fs::read_to_string(d.path().join("f.txt")).unwrap(), "a\nb\n");
    }

    /// A file where a folder should be is said before any preview or approval: the person was
    /// asked to approve creating `a.txt/b.txt`, and without a terminal the run stopped for it.
    #[test]
    fn a_file_in_place_of_a_folder_is_refused_before_the_approval() {
        struct NeverAsked;
        impl crate::run::ui::term::Asker for NeverAsked {
            fn approve(&mut self, _: Option<&str>, what: &str) -> crate::run::ui::term::Approval {
                panic!("asked: {what}")
            }
            fn answer(&mut self, _: &str) -> Option<String> {
                None
            }
        }
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.txt"), "a").unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let term = crate::run::ui::term::Term::new().answered_by(Box::new(NeverAsked));
        let out = with_ctx_on(&ws, term, |ctx| {
            ctx.yolo = false;
            run(&call("write_to_file", &[("path", "a.txt/b.txt"), ("content", "b")]), ctx)
        });
        let Outcome::Failure { text, .. } = out else { panic!("{out:?}") };
        assert!(text.contains("a.txt is a file, not a directory; nothing was written."), "{text}");
    }

    #[test]
    fn fences_are_dropped_and_entities_repaired_for_non_claude_models() {
        assert_eq!(strip_fences("```python\n    x = 1\n```"), "    x = 1");
        assert_eq!(strip_fences("plain\n"), "plain\n");
        // Where Cline's trim leaves the end: blank lines or spaces after the closing fence, CRLF.
        assert_eq!(strip_fences("```python\ncode\n```\n\n"), "code");
        assert_eq!(strip_fences("```python\ncode\n``` \n"), "code");
        assert_eq!(strip_fences("```python\r\ncode\r\n```\r\n"), "code");
        // Without an opening fence Cline does not trim: a fence line followed by more stays.
        assert_eq!(strip_fences("code\n```\n\n"), "code\n```\n\n");
        // Only a pair wrapping the content is dropped: a Markdown file that ends (or starts)
        // with a code block keeps its fences, where Cline drops the closing (or opening) line.
        let readme = "# Title\n\n```sh\nmake\n```";
        assert_eq!(strip_fences(readme), readme);
        let starts = "```sh\nmake\n```\n\nThen run it.";
        assert_eq!(strip_fences(starts), starts);
        let both = "```sh\nmake\n```\n\nor\n\n```sh\nmake all\n```";
        assert_eq!(strip_fences(both), both);
        // A Markdown file the model wrapped, its own code blocks inside: unwrapped, as in Cline.
        let wrapped = "```markdown\n# Tool\n\n```sh\nmake\n```\n\nDone.\n```";
        assert_eq!(strip_fences(wrapped), "# Tool\n\n```sh\nmake\n```\n\nDone.");
        assert_eq!(strip_fences("```python\ncode"), "```python\ncode");
        assert_eq!(strip_fences("```\n```"), "");
        assert_eq!(model_content_fixes("a &lt;b&gt; &amp;lt; \u{FFFD}", "gpt-4.1", "x.html"), "a <b> &lt; ");
        assert_eq!(model_content_fixes("&lt;a/&gt;", "gpt-4.1", "pom.XML"), "&lt;a/&gt;");
        assert_eq!(model_content_fixes("&lt; \u{FFFD}", "claude-sonnet-4-5", "x.html"), "&lt; \u{FFFD}");
    }

    /// A non-Claude model's SEARCH that quotes the file's entities is applied as written; one
    /// that matches only once cleaned up (a model that escaped the file's `<`) as Cline does.
    /// The first failed ("does not match anything", quoting a SEARCH the model never wrote).
    #[test]
    fn a_search_quoting_the_files_entities_is_applied_as_written() {
        let d = tempfile::tempdir().unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        std::fs::write(d.path().join("a.html"), "<p>Tom &amp; Jerry</p>\n").unwrap();
        std::fs::write(d.path().join("b.html"), "<b>x</b>\n").unwrap();
        for (path, search, replace, after) in [
            ("a.html", "<p>Tom &amp; Jerry</p>", "<p>Tom &amp; Jerry!</p>", "<p>Tom &amp; Jerry!</p>\n"),
            ("b.html", "&lt;b&gt;x&lt;/b&gt;", "&lt;b&gt;y&lt;/b&gt;", "<b>y</b>\n"),
        ] {
            let diff = format!("------- SEARCH\n{search}\n=======\n{replace}\n+++++++ REPLACE");
            let out = with_ctx(&ws, |ctx| {
                ctx.model = "gemini-2.5-pro";
                run(&call("replace_in_file", &[("path", path), ("diff", &diff)]), ctx)
            });
            assert!(matches!(out, Outcome::Success(_)), "{path}: {out:?}");
            assert_eq!(std::fs::read_to_string(d.path().join(path)).unwrap(), after);
        }
    }

    /// A new file is LF (VS Code's document for it on Linux); the model is shown it in the
    /// proposal's line ending, as Cline shows it, otherwise byte for byte.
    #[test]
    fn the_saved_file_is_shown_in_the_proposals_line_ending() {
        let d = tempfile::tempdir().unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let out =
            with_ctx(&ws, |ctx| run(&call("write_to_file", &[("path", "f.txt"), ("content", "a\r\nb  \n\n  x")]), ctx));
        let Outcome::Success(text) = out else { panic!("{out:?}") };
        assert_eq!(std::fs::read(d.path().join("f.txt")).unwrap(), b"a\nb  \n\n  x");
        assert!(
            text.contains("<final_file_content path=\"f.txt\">\na\r\nb  \r\n\r\n  x\n</final_file_content>"),
            "{text:?}"
        );
    }

    fn edit(ws: &Workspace, tool: &str, path: &str, text: &str) -> String {
        let param = if tool == "write_to_file" { "content" } else { "diff" };
        match with_ctx(ws, |ctx| run(&call(tool, &[("path", path), (param, text)]), ctx)) {
            Outcome::Success(t) => t,
            o => panic!("{o:?}"),
        }
    }

    /// As Cline's edits through VS Code's document: the file keeps the line ending most of its
    /// line breaks have, the model sees the proposal's.
    #[test]
    fn an_edit_keeps_the_files_line_ending_on_disk() {
        let d = tempfile::tempdir().unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        std::fs::write(d.path().join("r.txt"), "a\r\nb\r\nc\r\n").unwrap();
        let text = edit(&ws, "replace_in_file", "r.txt", "------- SEARCH\nb\n=======\nB\n+++++++ REPLACE");
        assert_eq!(std::fs::read(d.path().join("r.txt")).unwrap(), b"a\r\nB\r\nc\r\n");
        assert!(text.contains("\">\na\r\nB\r\nc\r\n\n</final_file_content>"), "{text:?}");
        std::fs::write(d.path().join("w.txt"), "old\r\nlines\r\n").unwrap();
        let text = edit(&ws, "write_to_file", "w.txt", "x\ny\n");
        assert_eq!(std::fs::read(d.path().join("w.txt")).unwrap(), b"x\r\ny\r\n");
        assert!(text.contains("\">\nx\ny\n\n</final_file_content>"), "{text:?}");
        // Mostly LF: the document is LF, and so is the whole file once saved.
        std::fs::write(d.path().join("m.txt"), "a\nb\nc\r\n").unwrap();
        edit(&ws, "replace_in_file", "m.txt", "------- SEARCH\na\n=======\nA\n+++++++ REPLACE");
        assert_eq!(std::fs::read(d.path().join("m.txt")).unwrap(), b"A\nb\nc\n");
    }

    const NOTEBOOK: &str = "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"outputs\": [{\"text\": \"OUTPUT\"}],\n   \"source\": [\"x = 1\"]\n  }\n ]\n}\n";

    /// Cline sends a notebook back without its outputs (`sanitizeNotebookForLLM`): after a
    /// failed edit and once saved; the file keeps them.
    #[test]
    fn a_notebook_is_shown_without_its_outputs() {
        let d = tempfile::tempdir().unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        std::fs::write(d.path().join("nb.ipynb"), NOTEBOOK).unwrap();
        let out =
            with_ctx(&ws, |ctx| run(&call("replace_in_file", &[("path", "nb.ipynb"), ("diff", failing_diff())]), ctx));
        let Outcome::Failure { text, .. } = out else { panic!("{out:?}") };
        assert!(text.contains("\"outputs\": []") && !text.contains("OUTPUT"), "{text}");
        let diff = "------- SEARCH\n   \"source\": [\"x = 1\"]\n=======\n   \"source\": [\"x = 2\"]\n+++++++ REPLACE";
        let text = edit(&ws, "replace_in_file", "nb.ipynb", diff);
        assert!(text.contains("\"outputs\": []") && text.contains("x = 2") && !text.contains("OUTPUT"), "{text}");
        assert_eq!(std::fs::read_to_string(d.path().join("nb.ipynb")).unwrap(), NOTEBOOK.replace("x = 1", "x = 2"));
        let text = edit(&ws, "write_to_file", "b.IPYNB", NOTEBOOK);
        assert!(text.contains("\"outputs\": []") && !text.contains("OUTPUT"), "{text}");
    }

    /// Cline reads a file without its BOM, drops one leading the new content, and VS Code saves
    /// the file with the BOM it had.
    #[test]
    fn an_edit_keeps_the_files_bom_and_never_adds_one() {
        let d = tempfile::tempdir().unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        std::fs::write(d.path().join("r.txt"), "\u{FEFF}first\nsecond\n").unwrap();
        // Matched by the trimmed-line fallback, which would take the BOM with the line.
        let text = edit(&ws, "replace_in_file", "r.txt", "------- SEARCH\nfirst \n=======\n1st\n+++++++ REPLACE");
        assert_eq!(std::fs::read(d.path().join("r.txt")).unwrap(), b"\xEF\xBB\xBF1st\nsecond\n");
        assert!(text.contains("\">\n1st\nsecond\n\n</final_file_content>"), "{text:?}");
        std::fs::write(d.path().join("w.txt"), "\u{FEFF}old\n").unwrap();
        edit(&ws, "write_to_file", "w.txt", "new\n");
        assert_eq!(std::fs::read(d.path().join("w.txt")).unwrap(), b"\xEF\xBB\xBFnew\n");
        edit(&ws, "write_to_file", "n.txt", "\u{FEFF}new\n");
        assert_eq!(std::fs::read(d.path().join("n.txt")).unwrap(), b"new\n");
    }

    #[test]
    fn normalised_texts_decide_whether_the_person_changed_it() {
        assert_eq!(prompt::normalized("a\nb", "\n"), "a\nb\n");
        assert_eq!(prompt::normalized("a\r\nb\n\n  \n", "\r\n"), "a\r\nb\r\n");
        // JavaScript's trimEnd: U+FEFF goes, U+0085 stays.
        assert_eq!(prompt::normalized("x\u{85}\u{FEFF}", "\n"), "x\u{85}\n");
    }
}
