//! `apply_patch(input)`: Cline's `ApplyPatchHandler` for its GPT-5 native variants. The V4A
//! text is read by `v4a.rs`; here the files it names are confined to the workspace, checked
//! against `.clineignore` and the protected directories, read (regular files only, capped),
//! approved one by one with a diff, and written atomically — each file by a temp file and a
//! rename, and none before every file is approved — or removed, by the parent directory's
//! descriptor (`fsx::remove_no_follow`), with Cline's result and error texts.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::doc_form::{self, Form};
use super::v4a::{self, Change};
use super::{check_path, clineignore, fsx, notebook, preview, tool_error, Access, Call, Ctx, Outcome};

/// Cline's text when the person says no to a file of the patch.
pub(crate) const PATCH_DENIED: &str = "The user denied this patch operation.";

/// One file the patch writes or removes, ready once approved.
struct Step {
    /// The path as the patch names it (what the result shows).
    shown: String,
    abs: PathBuf,
    /// The new content; `None` removes the file.
    content: Option<String>,
    /// How it is saved: an updated file keeps its line ending and BOM, a new one (added, or
    /// the target of a move) is LF without BOM, as Cline's editor documents save them.
    form: Form,
    /// What `abs` was when the patch read it (`None`: nothing, for a file it makes), and the
    /// text an editor's buffer held: a file changed since is not written over.
    was: Option<fsx::Stamp>,
    buffer: Option<String>,
}

pub(super) fn run(call: &Call, ctx: &mut Ctx<'_>) -> Outcome {
    let input = call.untrimmed_param("input").unwrap_or_default();
    ctx.term.tool("apply_patch", &first_target(input));
    match prepare(input, ctx) {
        Ok((steps, fuzz)) => commit(steps, fuzz, ctx),
        Err(o) => o,
    }
}

/// The first file a patch names, for the tool line.
fn first_target(input: &str) -> String {
    targets(input).next().unwrap_or_default().to_string()
}

/// The files a patch names in its `*** Add File:`, `*** Update File:` and `*** Delete File:`
/// headers, in order (an editor shows them as the call's locations).
pub(crate) fn targets(input: &str) -> impl Iterator<Item = &str> {
    input
        .lines()
        .filter_map(|l| {
            ["*** Add File: ", "*** Update File: ", "*** Delete File: "].iter().find_map(|m| l.strip_prefix(m))
        })
        .map(str::trim)
}

/// A failure as Cline's handler throws it and `ToolExecutor.handleError` reports it: its count
/// of mistakes was reset before trying, and nothing counts one (`registry`'s
/// `throws_failures` keeps loop detection out of it too).
fn error(ctx: &mut Ctx<'_>, msg: &str) -> Outcome {
    ctx.term.outcome(false, msg);
    Outcome::Failure { text: tool_error(&format!("Error executing apply_patch: {msg}")), mistake: false }
}

/// Reads the files, parses and applies the patch in memory, and asks for each file.
fn prepare(input: &str, ctx: &mut Ctx<'_>) -> Result<(Vec<Step>, u64), Outcome> {
    // Cline checks the sentinels before loading any file.
    v4a::check_sentinels(input).map_err(|e| error(ctx, &e))?;
    let (mut files, mut forms, mut stamps, mut buffers) =
        (HashMap::new(), HashMap::new(), HashMap::new(), HashMap::new());
    for (path, deleted) in v4a::marked_files(input) {
        if let Some(blocked) = clineignore::patch_refusal(ctx.ws.root(), &path) {
            ctx.term.outcome(false, &blocked.outcome);
            let text = format!("Error executing apply_patch: {}", blocked.text);
            return Err(Outcome::Failure { text: tool_error(&text), mistake: false });
        }
        let abs = confined(ctx, &path)?;
        // Before the read: a write after it changes the stamp.
        stamps.insert(path.clone(), fsx::stamp(&abs));
        // A file the patch only deletes is only shown, in the deletion's preview: one of any size
        // or encoding is deleted, as Cline deletes it (editing is what takes UTF-8 text within the
        // limit).
        let text = match fsx::read_regular_no_follow(&abs, fsx::MAX_FILE_BYTES) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(e) if deleted => format!("({} bytes, not UTF-8 text)\n", e.as_bytes().len()),
                Err(_) => return Err(error(ctx, &format!("{path} is not a UTF-8 text file"))),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(error(ctx, &format!("File not found: {path}")))
            }
            Err(e) if deleted && abs.is_file() => format!("(the file {e})\n"),
            Err(e) => return Err(error(ctx, &format!("{path}: {e}"))),
        };
        if deleted {
            files.insert(path, text);
            continue;
        }
        // An editor's buffer may hold changes not yet saved: the patch applies to those. Line
        // endings are made LF to apply it, as Cline does; the file keeps its own.
        let text = match ctx.term.buffer_text(&abs) {
            None => text,
            Some(Ok(text)) => {
                still_there(ctx, &path, &abs).map_err(|e| error(ctx, &format!("{path}: {e}")))?;
                buffers.insert(path.clone(), text.clone());
                text
            }
            Some(Err(e)) => return Err(error(ctx, &format!("{path}: the editor could not read it: {e}"))),
        };
        forms.insert(path.clone(), Form::of(Some(&text)));
        files.insert(path, text.replace("\r\n", "\n"));
    }
    let applied = v4a::apply(input, &files).map_err(|e| error(ctx, &e))?;
    // Cline skips a chunk whose context it cannot find and reports success; the model would
    // believe a change was made that was not. We refuse the whole patch instead.
    if let Some(w) = applied.warnings.first() {
        let msg = format!("{w}\nNo file was changed: the patch must apply in full. Read the file again and retry with context lines copied from it.");
        return Err(error(ctx, &msg));
    }
    let mut steps = Vec::new();
    for (path, change) in applied.changes {
        let abs = confined(ctx, &path)?;
        let old = files.get(&path).map(String::as_str);
        match change {
            Change::Delete => {
                let abs = entry(ctx, &path, abs)?;
                let was = fsx::stamp(&abs);
                ask(ctx, &path, &format!("Delete {path}"), &preview::unified(old.unwrap_or(""), "", &path))?;
                steps.push(Step { shown: path, abs, content: None, form: Form::of(None), was, buffer: None });
            }
            Change::Add(content) => {
                // Cline overwrites a file that exists but was not named for update; we refuse.
                if abs.symlink_metadata().is_ok() {
                    return Err(error(ctx, &format!("Add File Error: File already exists: {path}")));
                }
                ask(ctx, &path, &format!("Create {path}"), &preview::unified("", &content, &path))?;
                steps.push(Step {
                    shown: path,
                    abs,
                    content: Some(content),
                    form: Form::of(None),
                    was: None,
                    buffer: None,
                });
            }
            Change::Update { content, move_to } => {
                if content.is_empty() {
                    return Err(error(ctx, &format!("UPDATE change for {path} has no new content")));
                }
                let pv = preview::unified(old.unwrap_or(""), &content, &path);
                match move_to {
                    None => {
                        ask(ctx, &path, &format!("Edit {path}"), &pv)?;
                        let form = forms.get(&path).copied().unwrap_or(Form::of(None));
                        let (was, buffer) = (stamps.get(&path).copied().flatten(), buffers.remove(&path));
                        steps.push(Step { shown: path, abs, content: Some(content), form, was, buffer });
                    }
                    Some(to) => {
                        let target = abs.clone();
                        let abs = entry(ctx, &path, abs)?;
                        // The stamp taken before the read, unless the move takes a link away.
                        let was = if abs == target { stamps.get(&path).copied().flatten() } else { fsx::stamp(&abs) };
                        let to_abs = confined(ctx, &to)?;
                        if to_abs.symlink_metadata().is_ok() {
                            return Err(error(ctx, &format!("Move target already exists: {to}")));
                        }
                        ask(ctx, &to, &format!("Move {path} to {to}"), &pv)?;
                        let form = Form::of(None);
                        steps.push(Step {
                            shown: to,
                            abs: to_abs,
                            content: Some(content),
                            form,
                            was: None,
                            buffer: None,
                        });
                        let buffer = buffers.remove(&path);
                        steps.push(Step { shown: path, abs, content: None, form, was, buffer });
                    }
                }
            }
        }
    }
    Ok((steps, applied.fuzz))
}

/// Whether Cline's handler refuses the patch before its `PreToolUse` hook for a reason known
/// without reading a file: incomplete sentinels, or a file it updates or deletes that
/// `.clineignore` blocks.
pub(super) fn refused_before_hooks(input: &str, root: &Path) -> bool {
    v4a::check_sentinels(input).is_err()
        || v4a::files_to_load(input).iter().any(|p| clineignore::patch_refusal(root, p).is_some())
}

/// A patch path: inside the workspace, not `.clineignore`d, not protected. Cline drops a file
/// the patch adds that `.clineignore` blocks without a word (the model would believe it made);
/// it is refused here, as are files outside the workspace (Cline asks) and protected ones.
fn confined(ctx: &mut Ctx<'_>, path: &str) -> Result<PathBuf, Outcome> {
    if let Some(blocked) = clineignore::path_refusal(ctx.ws.root(), path) {
        ctx.term.outcome(false, &blocked.outcome);
        return Err(Outcome::Failure { text: tool_error(&blocked.text), mistake: false });
    }
    let r = ctx.ws.resolve(path);
    if let Some(e) = r.error {
        return Err(error(ctx, &e));
    }
    if !r.inside {
        let msg = format!(
            "{path} is outside the workspace ({}); apply_patch only changes files inside it.",
            ctx.ws.root().display()
        );
        ctx.term.outcome(false, "refused: outside the workspace");
        return Err(Outcome::Failure { text: tool_error(&msg), mistake: false });
    }
    super::write::refuse_protected(ctx, &r.abs, path)?;
    Ok(r.abs)
}

/// What a removal of `path` (deleted, or moved away) unlinks: a symbolic link itself, as Cline's
/// `fs.rm` of the path removes it — not `target`, the file it leads to ([`confined`]'s answer,
/// which would leave the link dangling and lose the file, an `AGENTS.md` that `CLAUDE.md` links
/// to, say). The link's own name is judged as any patch path is.
fn entry(ctx: &mut Ctx<'_>, path: &str, target: PathBuf) -> Result<PathBuf, Outcome> {
    let p = Path::new(path);
    let (Some(name), Some(parent)) = (p.file_name(), p.parent()) else { return Ok(target) };
    let dir = ctx.ws.resolve(&parent.to_string_lossy());
    let link = dir.abs.join(name);
    if dir.error.is_some() || !dir.inside || !link.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) {
        return Ok(target);
    }
    super::write::refuse_protected(ctx, &link, path)?;
    Ok(link)
}

/// Whether `path` still leads to `abs`, where it was checked. An editor's reads and writes
/// follow links (ours never do): a directory on the path swapped for a link since the check (a
/// command left running can do it during the approval prompt) would lead them where no check
/// looked, `.git/config` say. Looked at again at the last moment, as `write_to_file` does.
fn still_there(ctx: &Ctx<'_>, path: &str, abs: &Path) -> Result<(), String> {
    let now = ctx.ws.resolve(path).abs;
    match now == abs {
        true => Ok(()),
        false => Err(format!(
            "the path changed while the patch was prepared: it now leads to {} rather than {}, so it was not written",
            now.display(),
            abs.display()
        )),
    }
}

/// One file's approval (automatic under `--yolo`); a denial is Cline's patch denial.
fn ask(ctx: &mut Ctx<'_>, path: &str, what: &str, pv: &str) -> Result<(), Outcome> {
    // Each file is approved on its own; the call's event reports the first decision.
    ctx.decided = false;
    match check_path(ctx, path, Access::Write, what, Some(pv)) {
        Ok(_) => Ok(()),
        Err(Outcome::Denied { feedback, .. }) => Err(Outcome::Denied { text: PATCH_DENIED.to_string(), feedback }),
        Err(o) => Err(o),
    }
}

/// Writes every approved file and gives Cline's result.
fn commit(steps: Vec<Step>, fuzz: u64, ctx: &mut Ctx<'_>) -> Outcome {
    // Written meanwhile (the person saved their own change while asked, or a command did):
    // nothing is written, as writing would lose that change, which no checkpoint holds.
    // (A path that leads elsewhere now is refused below, saying so.)
    for s in &steps {
        // In an editor a file read from its buffer is written there: the buffer's text must be
        // as read (saving it to disk meanwhile loses nothing).
        if still_there(ctx, &s.shown, &s.abs).is_ok()
            && super::write::changed_since(ctx, &s.abs, s.was, s.buffer.as_deref())
        {
            let msg = format!(
                "{} was changed (by the person or a program) while this patch waited, so no file was changed: applying it would have overwritten that change. Read the file again and make the patch on what it holds now.",
                s.shown
            );
            return error(ctx, &msg);
        }
    }
    let mut lines = vec!["Successfully applied patch to the following files:".to_string()];
    for (i, s) in steps.iter().enumerate() {
        // ACP has no delete: a file deleted by the patch is deleted on disk.
        let saved = s.content.as_deref().map(|c| s.form.text(c));
        let done = match &saved {
            Some(c) => match still_there(ctx, &s.shown, &s.abs).map(|()| ctx.term.buffer_write(&s.abs, c)) {
                Err(e) => Err(e),
                Ok(Some(through_editor)) => through_editor,
                Ok(None) => fsx::atomic_write(&s.abs, &s.form.bytes(c)).map_err(|e| e.to_string()),
            },
            // By the parent's descriptor: a directory swapped for a link since the check (during
            // the prompt) makes it fail instead of removing a file outside the workspace.
            None => fsx::remove_no_follow(&s.abs).map_err(|e| e.to_string()),
        };
        ctx.memory.reads.forget(&s.abs);
        ctx.memory.watched.saw(&s.shown, &s.abs);
        if let Err(e) = done {
            let written: Vec<&str> = steps[..i].iter().map(|s| s.shown.as_str()).collect();
            let msg = format!(
                "{}: {e}. Files already changed by this patch: {}.",
                s.shown,
                if written.is_empty() { "none".to_string() } else { written.join(", ") }
            );
            return error(ctx, &msg);
        }
        // Cline shows the saved file in the patch's line ending (LF), a notebook without outputs.
        match (&s.content, &saved) {
            (Some(c), Some(saved)) => {
                let shown = doc_form::with_eol(saved, crate::run::prompt::eol_of(c));
                let shown = notebook::for_model(&s.shown, &shown);
                lines.push(format!("\n<final_file_content path=\"{}\">\n{shown}\n</final_file_content>", s.shown))
            }
            _ => lines.push(format!("\n{}: [deleted]", s.shown)),
        }
    }
    if fuzz > 0 {
        lines.push(format!("\nNote: Patch applied with fuzz factor {fuzz}"));
    }
    ctx.term.outcome(true, &format!("patched {}", crate::run::ui::count(steps.len() as u64, "file")));
    Outcome::Success(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use super::super::{run, Outcome};
    use crate::run::tools::paths::Workspace;

    #[test]
    fn a_patch_adds_updates_moves_and_deletes_with_clines_text() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("a.py"), "def f():\n    return 1\n").unwrap();
        std::fs::write(root.path().join("old.txt"), "x").unwrap();
        let ws = Workspace::new(root.path()).unwrap();
        let patch = "*** Begin Patch\n*** Add File: dir/new.txt\n+hi\n*** Update File: a.py\n def f():\n-    return 1\n+    return 2\n*** Delete File: old.txt\n*** End Patch";
        let out = with_ctx(&ws, |ctx| {
            ctx.yolo = true;
            ctx.tool = "apply_patch";
            run(&call("apply_patch", &[("input", patch)]), ctx)
        });
        assert_eq!(
            out,
            Outcome::Success("Successfully applied patch to the following files:\n\n<final_file_content path=\"dir/new.txt\">\nhi\n</final_file_content>\n\n<final_file_content path=\"a.py\">\ndef f():\n    return 2\n\n</final_file_content>\n\nold.txt: [deleted]".into())
        );
        assert_eq!(std::fs::read_to_string(root.path().join("dir/new.txt")).unwrap(), "hi");
        assert_eq!(std::fs::read_to_string(root.path().join("a.py")).unwrap(), "def f():\n    return 2\n");
        assert!(!root.path().join("old.txt").exists());
    }

    /// An editor whose reads and writes follow links, as a real one's do, and the person at
    /// its prompt; a command left running swaps `dir` for a link to `to` on the editor's read
    /// of the file (`on_read`) or while the person is asked.
    struct SwappedUnderTheEditor {
        dir: std::path::PathBuf,
        to: std::path::PathBuf,
        on_read: bool,
    }

    impl SwappedUnderTheEditor {
        fn swap(&self) {
            if !self.dir.is_symlink() {
                std::fs::rename(&self.dir, self.dir.with_extension("old")).unwrap();
                std::os::unix::fs::symlink(&self.to, &self.dir).unwrap();
            }
        }
    }

    impl crate::run::ui::term::Buffers for std::sync::Arc<SwappedUnderTheEditor> {
        fn read(&mut self, path: &std::path::Path) -> Option<Result<String, String>> {
            if self.on_read {
                self.swap();
            }
            Some(std::fs::read_to_string(path).map_err(|e| e.to_string()))
        }
        fn write(&mut self, path: &std::path::Path, text: &str) -> Option<Result<(), String>> {
            Some(std::fs::write(path, text).map_err(|e| e.to_string()))
        }
    }

    impl crate::run::ui::term::Asker for std::sync::Arc<SwappedUnderTheEditor> {
        fn approve(&mut self, _: Option<&str>, _: &str) -> crate::run::ui::term::Approval {
            self.swap();
            crate::run::ui::term::Approval::Yes
        }
        fn answer(&mut self, _: &str) -> Option<String> {
            None
        }
    }

    /// A directory swapped for a link to `.git` while the patch is prepared — during its
    /// approval prompt, or as the editor reads the file — leads neither the editor's write to
    /// `.git/config` (a `core.fsmonitor` there runs at the person's next `git status`) nor its
    /// read there.
    #[test]
    fn a_directory_swapped_for_a_link_does_not_lead_the_editor_elsewhere() {
        for on_read in [false, true] {
            let d = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(d.path().join(".git")).unwrap();
            std::fs::write(d.path().join(".git/config"), "[core]\n").unwrap();
            std::fs::create_dir(d.path().join("ok")).unwrap();
            std::fs::write(d.path().join("ok/config"), "[core]\n").unwrap();
            let ws = Workspace::new(d.path()).unwrap();
            let swap = std::sync::Arc::new(SwappedUnderTheEditor {
                dir: d.path().join("ok"),
                to: d.path().join(".git"),
                on_read,
            });
            let term =
                crate::run::ui::term::Term::new().with_buffers(Box::new(swap.clone())).answered_by(Box::new(swap));
            let patch = "*** Begin Patch\n*** Update File: ok/config\n [core]\n+\tfsmonitor = \"touch pwned; false\"\n*** End Patch";
            let out = with_ctx_on(&ws, term, |ctx| {
                (ctx.tool, ctx.yolo) = ("apply_patch", false);
                run(&call("apply_patch", &[("input", patch)]), ctx)
            });
            let Outcome::Failure { text, .. } = out else { panic!("written: {out:?}") };
            assert!(text.contains("ok/config: the path changed while the patch was prepared"), "{on_read}: {text}");
            assert_eq!(std::fs::read_to_string(d.path().join(".git/config")).unwrap(), "[core]\n");
            assert_eq!(std::fs::read_to_string(d.path().join("ok.old/config")).unwrap(), "[core]\n");
        }
    }

    /// Deleting or moving away a symbolic link removes the link, as Cline's `fs.rm` of the path
    /// does; the file it leads to (`CLAUDE.md -> AGENTS.md`, a common layout) stays whole.
    #[test]
    fn deleting_or_moving_a_link_removes_the_link_not_its_file() {
        for patch in [
            "*** Begin Patch\n*** Delete File: CLAUDE.md\n*** End Patch",
            "*** Begin Patch\n*** Update File: CLAUDE.md\n*** Move to: NOTES.md\n # Rules\n+more\n*** End Patch",
        ] {
            let root = tempfile::tempdir().unwrap();
            std::fs::write(root.path().join("AGENTS.md"), "# Rules\n").unwrap();
            std::os::unix::fs::symlink("AGENTS.md", root.path().join("CLAUDE.md")).unwrap();
            let ws = Workspace::new(root.path()).unwrap();
            let out = with_ctx(&ws, |ctx| {
                ctx.yolo = true;
                ctx.tool = "apply_patch";
                run(&call("apply_patch", &[("input", patch)]), ctx)
            });
            assert!(matches!(&out, Outcome::Success(t) if t.contains("CLAUDE.md: [deleted]")), "{patch}: {out:?}");
            assert!(root.path().join("CLAUDE.md").symlink_metadata().is_err(), "{patch}: the link is gone");
            assert_eq!(std::fs::read_to_string(root.path().join("AGENTS.md")).unwrap(), "# Rules\n", "{patch}");
        }
    }

    /// A file the patch deletes is deleted whatever it holds, binary or over the size limit, as
    /// Cline deletes it; only editing needs UTF-8 text within the limit.
    #[test]
    fn a_binary_or_large_file_is_deleted_as_any() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("logo.png"), [0x89, b'P', b'N', b'G', 0xff, 0x00]).unwrap();
        let big = std::fs::File::create(root.path().join("app.log")).unwrap();
        big.set_len(crate::run::tools::fsx::MAX_FILE_BYTES + 1).unwrap();
        let ws = Workspace::new(root.path()).unwrap();
        let patch = "*** Begin Patch\n*** Delete File: logo.png\n*** Delete File: app.log\n*** End Patch";
        let out = with_ctx(&ws, |ctx| {
            ctx.yolo = true;
            ctx.tool = "apply_patch";
            run(&call("apply_patch", &[("input", patch)]), ctx)
        });
        assert!(
            matches!(&out, Outcome::Success(t) if t.ends_with("logo.png: [deleted]\n\napp.log: [deleted]")),
            "{out:?}"
        );
        assert!(!root.path().join("logo.png").exists() && !root.path().join("app.log").exists());
        // Editing one still needs UTF-8 text.
        std::fs::write(root.path().join("logo.png"), [0xff, b'\n']).unwrap();
        let patch = "*** Begin Patch\n*** Update File: logo.png\n@@\n+x\n*** End Patch";
        let out = with_ctx(&ws, |ctx| {
            ctx.yolo = true;
            ctx.tool = "apply_patch";
            run(&call("apply_patch", &[("input", patch)]), ctx)
        });
        assert!(matches!(&out, Outcome::Failure { text, .. } if text.contains("is not a UTF-8 text file")), "{out:?}");
    }

    #[test]
    fn nothing_is_written_when_any_part_fails_or_leaves_the_workspace() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("a.txt"), "one\ntwo\n").unwrap();
        std::fs::write(root.path().join("b.txt"), "keep").unwrap();
        let ws = Workspace::new(root.path()).unwrap();
        let run_patch = |patch: &str| {
            with_ctx(&ws, |ctx| {
                ctx.yolo = true;
                ctx.tool = "apply_patch";
                run(&call("apply_patch", &[("input", patch)]), ctx)
            })
        };
        // A chunk whose context is nowhere: Cline would skip it and report success.
        let out = run_patch("*** Update File: a.txt\n-one\n+1\n@@\n-zzzzzzzzzzzzzzzzzzzz\n+2");
        assert!(
            matches!(&out, Outcome::Failure { text, .. } if text.contains("Could not find matching context")),
            "{out:?}"
        );
        assert_eq!(std::fs::read_to_string(root.path().join("a.txt")).unwrap(), "one\ntwo\n");
        // Adding over an existing file; moving onto one; leaving the workspace.
        let out = run_patch("*** Add File: b.txt\n+new");
        assert!(
            matches!(&out, Outcome::Failure { text, .. } if text.contains("Add File Error: File already exists: b.txt")),
            "{out:?}"
        );
        let out = run_patch("*** Update File: a.txt\n*** Move to: b.txt\n-one\n+1");
        assert!(
            matches!(&out, Outcome::Failure { text, .. } if text.contains("Move target already exists: b.txt")),
            "{out:?}"
        );
        let out = run_patch("*** Add File: ../escape.txt\n+x");
        assert!(matches!(&out, Outcome::Failure { text, .. } if text.contains("outside the workspace")), "{out:?}");
        assert!(!root.path().parent().unwrap().join("escape.txt").exists());
        assert_eq!(std::fs::read_to_string(root.path().join("b.txt")).unwrap(), "keep");
        // Cline's error text for a file that is not there.
        let out = run_patch("*** Update File: nope.txt\n-x\n+y");
        assert!(
            matches!(&out, Outcome::Failure { text, .. } if text.contains("Error executing apply_patch: File not found: nope.txt")),
            "{out:?}"
        );
    }

    /// Cline applies the patch to LF text and saves it through the file's VS Code document: the
    /// file keeps its line ending and BOM, a moved file is new (LF); the model sees LF.
    #[test]
    fn a_patched_file_keeps_its_line_ending_and_bom() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("crlf.txt"), "one\r\ntwo\r\n").unwrap();
        std::fs::write(root.path().join("bom.txt"), "\u{FEFF}head\nbody\n").unwrap();
        std::fs::write(root.path().join("m.txt"), "x\r\ny\r\n").unwrap();
        let ws = Workspace::new(root.path()).unwrap();
        let patch = "*** Begin Patch\n*** Update File: crlf.txt\n one\n-two\n+2\n+3\n*** Update File: bom.txt\n-head\n+HEAD\n body\n*** Update File: m.txt\n*** Move to: moved.txt\n-x\n+X\n*** End Patch";
        let out = with_ctx(&ws, |ctx| {
            ctx.yolo = true;
            ctx.tool = "apply_patch";
            run(&call("apply_patch", &[("input", patch)]), ctx)
        });
        let Outcome::Success(text) = out else { panic!("{out:?}") };
        assert_eq!(std::fs::read(root.path().join("crlf.txt")).unwrap(), b"one\r\n2\r\n3\r\n");
        assert_eq!(std::fs::read(root.path().join("bom.txt")).unwrap(), b"\xEF\xBB\xBFHEAD\nbody\n");
        assert_eq!(std::fs::read(root.path().join("moved.txt")).unwrap(), b"X\ny\n");
        assert!(text.contains("\"crlf.txt\">\none\n2\n3\n\n</final"), "{text:?}");
        assert!(text.contains("\"bom.txt\">\nHEAD\nbody\n\n</final"), "{text:?}");
    }

    /// As Cline's `DiffViewProvider` shows it: a notebook's outputs are left out of the echo.
    #[test]
    fn a_patched_notebook_is_shown_without_its_outputs() {
        let root = tempfile::tempdir().unwrap();
        let nb = "{\n \"cells\": [\n  {\n   \"cell_type\": \"code\",\n   \"outputs\": [{\"text\": \"OUTPUT\"}],\n   \"source\": [\"x = 1\"]\n  }\n ]\n}\n";
        std::fs::write(root.path().join("nb.ipynb"), nb).unwrap();
        let ws = Workspace::new(root.path()).unwrap();
        let patch = "*** Update File: nb.ipynb\n-   \"source\": [\"x = 1\"]\n+   \"source\": [\"x = 2\"]";
        let out = with_ctx(&ws, |ctx| {
            ctx.yolo = true;
            ctx.tool = "apply_patch";
            run(&call("apply_patch", &[("input", patch)]), ctx)
        });
        let Outcome::Success(text) = out else { panic!("{out:?}") };
        assert!(text.contains("\"outputs\": []") && text.contains("x = 2") && !text.contains("OUTPUT"), "{text}");
        assert!(std::fs::read_to_string(root.path().join("nb.ipynb")).unwrap().contains("OUTPUT"));
    }

    /// Cline's `preprocessLines` runs before its `loadFiles`: a patch without its end sentinel
    /// is reported as such even when the file it updates is missing. Like every failure of
    /// Cline's handler, it is thrown: no mistake is counted.
    #[test]
    fn the_sentinels_are_checked_before_the_files_and_no_failure_is_a_mistake() {
        let root = tempfile::tempdir().unwrap();
        let ws = Workspace::new(root.path()).unwrap();
        let out = with_ctx(&ws, |ctx| {
            ctx.yolo = true;
            ctx.tool = "apply_patch";
            let patch = "*** Begin Patch\n*** Update File: nope.txt\n@@\n-x\n+y";
            run(&call("apply_patch", &[("input", patch)]), ctx)
        });
        let text = "Error executing apply_patch: Invalid patch text - incomplete sentinels. Try breaking it into smaller patches.";
        assert_eq!(out, Outcome::Failure { text: super::super::tool_error(text), mistake: false });
    }

    /// A directory that is already a link out of the workspace when the patch comes is
    /// refused at the check (the removal's own guard is `fsx::remove_no_follow`'s test).
    #[test]
    fn a_delete_through_a_link_out_of_the_workspace_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let (root, outside) = (d.path().join("ws"), d.path().join("outside"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("victim.txt"), "outside").unwrap();
        std::os::unix::fs::symlink("../outside", root.join("sub")).unwrap();
        let ws = Workspace::new(&root).unwrap();
        for patch in [
            "*** Begin Patch\n*** Delete File: sub/victim.txt\n*** End Patch",
            "*** Begin Patch\n*** Update File: sub/victim.txt\n*** Move to: moved.txt\n-outside\n+x\n*** End Patch",
        ] {
            let out = with_ctx(&ws, |ctx| {
                ctx.yolo = true;
                ctx.tool = "apply_patch";
                run(&call("apply_patch", &[("input", patch)]), ctx)
            });
            assert!(matches!(&out, Outcome::Failure { text, .. } if text.contains("outside the workspace")), "{out:?}");
            assert_eq!(std::fs::read_to_string(outside.join("victim.txt")).unwrap(), "outside");
            assert!(!root.join("moved.txt").exists());
        }
    }

    /// A file the patch updates or deletes gets Cline's `Access denied` (before its hook:
    /// `refused_before_hooks`); one it adds, which Cline drops silently, is refused visibly.
    #[test]
    fn clineignored_files_are_refused() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join(".clineignore"), "secret.txt\nnew/\n").unwrap();
        std::fs::write(root.path().join("secret.txt"), "s").unwrap();
        let ws = Workspace::new(root.path()).unwrap();
        let run_patch = |patch: &str| {
            with_ctx(&ws, |ctx| {
                ctx.yolo = true;
                ctx.tool = "apply_patch";
                run(&call("apply_patch", &[("input", patch)]), ctx)
            })
        };
        let denied = super::super::tool_error("Error executing apply_patch: Access denied: secret.txt");
        for patch in
            ["*** Update File: secret.txt\n-s\n+t", "*** Begin Patch\n*** Delete File: secret.txt\n*** End Patch"]
        {
            assert_eq!(run_patch(patch), Outcome::Failure { text: denied.clone(), mistake: false });
            assert!(super::refused_before_hooks(patch, root.path()));
        }
        assert_eq!(std::fs::read_to_string(root.path().join("secret.txt")).unwrap(), "s");
        let out = run_patch("*** Add File: new/a.txt\n+x");
        assert!(matches!(&out, Outcome::Failure { text, .. } if text.contains(".clineignore")), "{out:?}");
        assert!(!root.path().join("new").exists());
        assert!(!super::refused_before_hooks("*** Update File: a.txt\n-s\n+t", root.path()));
    }
}
