//! `.clineignore`: Cline's `ClineIgnoreController`, on the `ignore` crate's gitignore matcher.
//!
//! The file sits at the workspace root, in gitignore syntax; `!include FILE` lines pull in
//! another file's patterns (a missing one is skipped), and `.clineignore` itself is always
//! blocked. It is read afresh for every tool call, so an edit during a task takes effect on
//! the next call (Cline watches the file for the same effect). Paths outside the workspace are
//! never blocked by it (confinement is `tools::paths`'s job).

use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::run::prompt as texts;
use crate::run::trusted_file::{self, Links};

/// Most bytes read of `.clineignore` (and of each included file).
pub(crate) const MAX_IGNORE_BYTES: u64 = 1 << 20;

/// The commands whose file arguments `validateCommand` checks.
const FILE_READING_COMMANDS: &[&str] =
    &["cat", "less", "more", "head", "tail", "grep", "awk", "sed", "get-content", "gc", "type", "select-string", "sls"];

/// The workspace's `.clineignore`, as loaded for one tool call.
pub(crate) struct ClineIgnore {
    root: PathBuf,
    /// The file's text (Cline's `clineIgnoreContent`); `None` when there is none.
    content: Option<String>,
    matcher: Gitignore,
}

impl ClineIgnore {
    /// Loads `root/.clineignore` (no file: everything is allowed).
    pub(crate) fn load(root: &Path) -> ClineIgnore {
        // Its text goes into the prompt: a symlink leading outside the workspace is not followed.
        // Judged on the descriptor read (a FIFO or a swap cannot block or fool it).
        let file = root.join(".clineignore");
        let content = root.canonicalize().ok().and_then(|r| {
            let opened = trusted_file::open(&file, Links::Follow).ok()?;
            opened.within(&r).then_some(opened)?.read(MAX_IGNORE_BYTES).ok()
        });
        let content = content.map(|b| String::from_utf8_lossy(&b).into_owned());
        let mut b = GitignoreBuilder::new(root);
        // Cline's `ignore()` matches without regard to case (the npm package's default
        // `ignorecase: true`): `.env*` blocks `.ENV` too, even on a case-sensitive file system.
        let _ = b.case_insensitive(true);
        if let Some(text) = &content {
            for line in expand_includes(root, text).lines() {
                // A line the matcher cannot compile (e.g. a bad character class) is skipped, as
                // the `ignore` npm package skips it.
                let _ = b.add_line(None, line);
            }
            let _ = b.add_line(None, ".clineignore");
        }
        let matcher = b.build().unwrap_or_else(|_| Gitignore::empty());
        ClineIgnore { root: root.to_path_buf(), content, matcher }
    }

    /// The file's text, for the prompt's instructions.
    pub(crate) fn content(&self) -> Option<&str> {
        self.content.as_deref()
    }

    /// Cline's `validateAccess`: false when `path` (relative to the root, or absolute) is
    /// ignored, itself or through a parent directory.
    pub(crate) fn allows(&self, path: &str) -> bool {
        if self.content.as_deref().is_none_or(str::is_empty) {
            return true;
        }
        let Some(rel) = self.relative(path) else { return true };
        if rel.is_empty() {
            return true;
        }
        // As the `ignore` npm package decides: a path is ignored when a parent directory is
        // (nothing below an excluded directory can be re-included), else by the last pattern
        // matching the path itself, which counts as a directory only when written with a `/`.
        let mut prefix = String::new();
        let parts: Vec<&str> = rel.split('/').collect();
        for part in &parts[..parts.len() - 1] {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(part);
            if self.matcher.matched(&prefix, true).is_ignore() {
                return false;
            }
        }
        !self.matcher.matched(&rel, path.ends_with('/')).is_ignore()
    }

    /// [`ClineIgnore::allows`] for a path on disk.
    pub(crate) fn allows_path(&self, path: &Path) -> bool {
        self.allows(&path.to_string_lossy())
    }

    /// Whether what `path` resolves to (through symlinks) is allowed; true when it does not
    /// exist or lies outside the workspace.
    pub(crate) fn allows_target(&self, path: &str) -> bool {
        let (Ok(target), Ok(root)) = (self.root.join(path).canonicalize(), self.root.canonicalize()) else {
            return true;
        };
        match target.strip_prefix(&root) {
            Ok(rel) => self.allows(&rel.to_string_lossy()),
            Err(_) => true,
        }
    }

    /// Cline's `validateCommand`: the first argument of a file-reading command that is
    /// ignored, if any.
    pub(crate) fn blocked_by_command(&self, command: &str) -> Option<String> {
        self.content.as_ref()?;
        let mut parts = command.split_whitespace();
        let base = parts.next()?.to_lowercase();
        if !FILE_READING_COMMANDS.contains(&base.as_str()) {
            return None;
        }
        parts
            .filter(|a| !a.starts_with('-') && !a.starts_with('/') && !a.contains(':'))
            .find(|a| !self.allows(a))
            .map(str::to_string)
    }

    /// Puts Cline's 🔒 before every ignored entry of a listing of `dir` (entries relative to
    /// `dir`, directories ending in `/`). Like Cline, each entry is checked by its resolved path,
    /// which has no trailing `/`: a directory-only pattern (`private/`) locks what is inside the
    /// directory, not the directory's own line.
    pub(crate) fn mark(&self, dir: &Path, entries: Vec<String>) -> Vec<String> {
        if self.content.is_none() {
            return entries;
        }
        entries
            .into_iter()
            .map(|e| {
                let abs = dir.join(e.trim_end_matches('/'));
                if self.allows(&abs.display().to_string()) {
                    e
                } else {
                    format!("{} {e}", texts::LOCK)
                }
            })
            .collect()
    }

    /// The path relative to the root with `/` separators; `None` outside the root.
    fn relative(&self, path: &str) -> Option<String> {
        if path.contains('\0') {
            return None;
        }
        let path = path.replace('\\', "/");
        let joined = self.root.join(&path);
        let mut parts: Vec<String> = Vec::new();
        let inside = joined.strip_prefix(&self.root).ok()?;
        for c in inside.components() {
            match c {
                std::path::Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
                std::path::Component::ParentDir => {
                    parts.pop()?;
                }
                _ => {}
            }
        }
        Some(parts.join("/"))
    }
}

/// Cline's `!include` handling: each `!include FILE` line (trimmed) is replaced by that file's
/// text; other lines are kept.
fn expand_includes(root: &Path, text: &str) -> String {
    if !text.contains("!include ") {
        return text.to_string();
    }
    let mut out = String::new();
    for line in text.lines() {
        match line.trim().strip_prefix("!include ") {
            Some(file) => {
                if let Some(inc) = read_bounded(&root.join(file.trim())) {
                    out.push('\n');
                    out.push_str(&inc);
                }
            }
            None => {
                out.push('\n');
                out.push_str(line);
            }
        }
    }
    out
}

fn read_bounded(path: &Path) -> Option<String> {
    let bytes = trusted_file::read(path, Links::Follow, MAX_IGNORE_BYTES).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// What `tool` says when `.clineignore` blocks `path` (Cline's `clineIgnoreError`), if it does:
/// for the tools whose declaration names path parameters (`tools/registry.rs`).
/// Unlike Cline, a symlink is also judged by where it leads: a link to an ignored file is
/// blocked too.
pub(crate) fn refusal(root: &Path, tool: &str, path: &str) -> Option<String> {
    if !crate::run::tools::registry::guards_paths(tool) {
        return None;
    }
    // Cline's validateAccess resolves the path first, which drops a trailing `/`: `list_files`
    // of `build/` with `build/` ignored lists it, its entries locked.
    let trimmed = path.trim_end_matches('/');
    path_refusal(root, if trimmed.is_empty() { path } else { trimmed })
}

/// Cline's `clineIgnoreError` if `.clineignore` blocks `path` (or where it leads), for any tool
/// (`apply_patch` names its paths inside the patch).
pub(crate) fn path_refusal(root: &Path, path: &str) -> Option<String> {
    let ig = ClineIgnore::load(root);
    (!ig.allows(path) || !ig.allows_target(path)).then(|| texts::cline_ignore_error(path))
}

/// What `execute_command` says when the command reads an ignored file, if it does.
pub(crate) fn command_refusal(root: &Path, command: &str) -> Option<String> {
    ClineIgnore::load(root).blocked_by_command(command).map(|p| texts::cline_ignore_error(&p))
}

/// The prompt's `.clineignore` section, when the workspace has one.
pub(crate) fn instructions(root: &Path) -> Option<String> {
    let ig = ClineIgnore::load(root);
    ig.content().filter(|c| !c.is_empty()).map(texts::cline_ignore_instructions)
}

#[cfg(test)]
mod tests {
    //! Cline's `ClineIgnoreController.test.ts` cases, plus the negation cases it left disabled.
    use super::*;

    fn setup(lines: &[&str]) -> (tempfile::TempDir, ClineIgnore) {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(".clineignore"), lines.join("\n")).unwrap();
        let ig = ClineIgnore::load(d.path());
        (d, ig)
    }

    const DEFAULT: &[&str] = &[
        ".env",
        "*.secret",
        "private/",
        "# This is a comment",
        "",
        "temp.*",
        "file-with-space-at-end.* ",
        "**/.git/**",
    ];

    #[test]
    fn patterns_match_whatever_the_case_as_the_ignore_package_does() {
        let (_d, ig) = setup(&[".env*", "*.pem", "secrets/", "config/keys/"]);
        for p in [".ENV", ".Env.local", "KEY.PEM", "Secrets/x.txt", "config/Keys/k.json", "CONFIG/KEYS/k.json"] {
            assert!(!ig.allows(p), "{p}");
        }
        assert!(!ig.allows(".CLINEIGNORE"));
        assert!(ig.allows("config/key.json") && ig.allows("src/env.rs"));
    }

    #[test]
    fn regular_files_are_allowed_and_clineignore_itself_is_blocked() {
        let (_d, ig) = setup(DEFAULT);
        for p in ["src/index.ts", "README.md", "package.json"] {
            assert!(ig.allows(p), "{p}");
        }
        assert!(!ig.allows(".clineignore"));
    }

    #[test]
    fn custom_patterns_block_files_and_directories_at_any_depth() {
        let (_d, ig) = setup(DEFAULT);
        for p in [
            "config.secret",
            "private/data.txt",
            "temp.json",
            "nested/deep/file.secret",
            "private/nested/deep/file.txt",
        ] {
            assert!(!ig.allows(p), "{p} should be blocked");
        }
        for p in ["public/data.txt", "config.json", "src/temp/file.ts", "nested/deep/file.txt", "not-private/data.txt"]
        {
            assert!(ig.allows(p), "{p} should be allowed");
        }
        assert!(!ig.allows("file-with-space-at-end.txt"), "trailing spaces are trimmed");
        assert!(!ig.allows(".git/config"));
    }

    #[test]
    fn pattern_edge_cases() {
        let (_d, ig) = setup(&["*.secret", "private/", "*.tmp", "data-*.json", "temp/*"]);
        assert!(!ig.allows("data-123.json"));
        assert!(ig.allows("data.json"));
        assert!(!ig.allows("script.tmp"));
        assert!(!ig.allows("temp/x.txt"));
    }

    #[test]
    fn negations_anchors_and_directory_only_patterns() {
        let (_d, ig) = setup(&[
            "temp/*",
            "!temp/allowed/",
            "docs/**/*.md",
            "!docs/README.md",
            "!docs/CONTRIBUTING.md",
            "/build",
            "logs/",
        ]);
        assert!(!ig.allows("temp/file.txt"));
        assert!(ig.allows("temp/allowed/file.txt"), "a re-included directory");
        assert!(!ig.allows("docs/guide.md"));
        assert!(ig.allows("docs/README.md"));
        assert!(ig.allows("docs/CONTRIBUTING.md"));
        assert!(!ig.allows("docs/api/guide.md"));
        assert!(!ig.allows("build/out.js"), "anchored at the root");
        assert!(ig.allows("src/build/out.js"), "anchored: not deeper");
        assert!(!ig.allows("a/logs/x.log"), "a directory pattern matches at any depth");
        assert!(ig.allows("logs"), "logs/ matches only a path written as a directory");
        assert!(!ig.allows("logs/"));
    }

    #[test]
    fn a_parent_directory_cannot_be_re_included_into_by_a_later_negation() {
        // gitignore (and the `ignore` npm package): once a directory is excluded, nothing
        // below it can be re-included.
        let (_d, ig) = setup(&["assets/", "!assets/public/", "!assets/public/*.png"]);
        assert!(!ig.allows("assets/logo.png"));
        assert!(!ig.allows("assets/public/logo.png"));
    }

    #[test]
    fn comments_are_ignored() {
        let (_d, ig) = setup(&["# Comment line", "*.secret", "private/", "temp.*"]);
        assert!(!ig.allows("test.secret"));
        assert!(ig.allows("# Comment line"));
    }

    #[test]
    fn absolute_dot_relative_and_backslash_paths() {
        let (d, ig) = setup(DEFAULT);
        let abs = |p: &str| d.path().join(p).display().to_string();
        assert!(ig.allows(&abs("src/file.ts")));
        assert!(!ig.allows(&abs("config.secret")));
        assert!(!ig.allows(&abs("private/data.txt")));
        assert!(ig.allows("./src/file.ts"));
        assert!(!ig.allows("./config.secret"));
        assert!(!ig.allows("./private/data.txt"));
        assert!(ig.allows("src\\file.ts"));
        assert!(!ig.allows("src/../private/data.txt"));
        assert!(ig.allows("../outside.secret"), "outside the workspace: not this file's business");
        assert!(ig.allows("\0invalid"));
    }

    #[test]
    fn filtering_a_batch_of_paths() {
        let (_d, ig) = setup(DEFAULT);
        let kept: Vec<&str> = ["src/index.ts", ".env", "lib/utils.ts", ".git/config", "dist/bundle.js"]
            .into_iter()
            .filter(|p| ig.allows(p))
            .collect();
        assert_eq!(kept, ["src/index.ts", "lib/utils.ts", "dist/bundle.js"]);
    }

    #[test]
    fn missing_or_empty_file_allows_everything() {
        let d = tempfile::tempdir().unwrap();
        let ig = ClineIgnore::load(d.path());
        assert!(ig.allows("file.txt") && ig.content().is_none());
        assert!(instructions(d.path()).is_none());
        let (_d, ig) = setup(&[]);
        assert!(ig.allows("regular-file.txt"));
    }

    #[test]
    fn include_directives() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(".gitignore"), "*.log\ndebug/").unwrap();
        std::fs::write(d.path().join(".clineignore"), "!include .gitignore\nsecret.txt").unwrap();
        let ig = ClineIgnore::load(d.path());
        assert!(!ig.allows("server.log"));
        assert!(!ig.allows("debug/app.js"));
        assert!(!ig.allows("secret.txt"));
        assert!(ig.allows("app.js"));
        std::fs::write(d.path().join(".clineignore"), "!include missing-file.txt").unwrap();
        assert!(ClineIgnore::load(d.path()).allows("regular-file.txt"));
        std::fs::write(d.path().join(".clineignore"), "!include non-existent.txt\n*.tmp").unwrap();
        let ig = ClineIgnore::load(d.path());
        assert!(!ig.allows("file.tmp"));
        assert!(ig.allows("file.log"));
    }

    #[test]
    fn file_reading_commands_are_checked_argument_by_argument() {
        let (_d, ig) = setup(DEFAULT);
        assert_eq!(ig.blocked_by_command("cat .env"), Some(".env".to_string()));
        assert_eq!(ig.blocked_by_command("  GREP -n key config.secret README.md"), Some("config.secret".to_string()));
        assert_eq!(ig.blocked_by_command("head -n 5 private/data.txt"), Some("private/data.txt".to_string()));
        assert_eq!(ig.blocked_by_command("Get-Content private/x"), Some("private/x".to_string()));
        assert_eq!(ig.blocked_by_command("cat README.md"), None);
        assert_eq!(ig.blocked_by_command("ls private/"), None, "not a file-reading command");
        assert_eq!(ig.blocked_by_command("cat -Path:.env"), None, "parameter names are skipped");
        assert_eq!(ig.blocked_by_command("cat /abs/.env"), None, "slash-led arguments are skipped as flags");
        let d = tempfile::tempdir().unwrap();
        assert_eq!(ClineIgnore::load(d.path()).blocked_by_command("cat .env"), None);
    }

    #[test]
    fn listings_get_the_lock() {
        let (d, ig) = setup(DEFAULT);
        std::fs::create_dir(d.path().join("private")).unwrap();
        let marked =
            ig.mark(d.path(), vec!["private/".into(), "a.secret".into(), "src/".into(), ".clineignore".into()]);
        assert_eq!(marked, ["private/", "🔒 a.secret", "src/", "🔒 .clineignore"]);
        let sub = ig.mark(&d.path().join("private"), vec!["data.txt".into()]);
        assert_eq!(sub, ["🔒 data.txt"]);
    }

    #[test]
    fn edits_take_effect_on_the_next_load() {
        let (d, ig) = setup(&["a.txt"]);
        assert!(!ig.allows("a.txt"));
        std::fs::write(d.path().join(".clineignore"), "b.txt").unwrap();
        let ig = ClineIgnore::load(d.path());
        assert!(ig.allows("a.txt") && !ig.allows("b.txt"));
    }

    #[test]
    fn a_clineignore_symlinked_outside_the_workspace_is_not_read() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        std::fs::write(d.path().join("secret"), "PRIVATE KEY").unwrap();
        std::os::unix::fs::symlink(d.path().join("secret"), ws.join(".clineignore")).unwrap();
        assert!(ClineIgnore::load(&ws).content().is_none());
        assert!(instructions(&ws).is_none());
    }

    #[test]
    fn a_symlink_to_an_ignored_file_is_refused_too() {
        let (d, _) = setup(&["secrets/"]);
        std::fs::create_dir(d.path().join("secrets")).unwrap();
        std::fs::write(d.path().join("secrets/token.txt"), "x").unwrap();
        std::os::unix::fs::symlink(d.path().join("secrets/token.txt"), d.path().join("link.txt")).unwrap();
        std::fs::write(d.path().join("plain.txt"), "y").unwrap();
        assert!(refusal(d.path(), "read_file", "link.txt").unwrap().starts_with("Access to link.txt is blocked"));
        assert!(refusal(d.path(), "read_file", "plain.txt").is_none());
        assert!(refusal(d.path(), "list_files", "secrets/token.txt").is_some(), "list_files refuses, as in Cline");
        // The path resolved as Cline resolves it: `secrets/` names the directory, which a
        // directory-only pattern does not block (its entries are locked in the listing).
        assert!(refusal(d.path(), "list_files", "secrets/").is_none());
        assert!(refusal(d.path(), "search_files", "secrets/token.txt").is_none(), "search leaves files out instead");
        assert!(refusal(d.path(), "write_to_file", "secrets/new.txt").is_some());
    }

    #[test]
    fn the_prompt_section_is_clines() {
        let (d, _) = setup(&["*.secret"]);
        assert_eq!(
            instructions(d.path()).unwrap(),
            "# .clineignore\n\n(The following is provided by a root-level .clineignore file where the user has specified files and directories that should not be accessed. When using list_files, you'll notice a 🔒 next to files that are blocked. Attempting to access the file's contents e.g. through read_file will result in an error.)\n\n*.secret\n.clineignore"
        );
    }
}
