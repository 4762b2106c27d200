//! `.clineignore`: Cline's `ClineIgnoreController`, on the `ignore` crate's gitignore matcher.
//!
//! The file sits at the workspace root, in gitignore syntax; `!include FILE` lines pull in
//! another file's patterns (a missing one is skipped), and `.clineignore` itself is always
//! blocked. It is read afresh for every tool call, so an edit during a task takes effect on
//! the next call (Cline watches the file for the same effect); the compiled rules are kept while
//! the text they came from stays the same ([`cached`]). Paths outside the workspace are never
//! blocked by it (confinement is `tools::paths`'s job).
//!
//! Unlike Cline, rules that cannot be applied block everything rather than nothing: over
//! [`MAX_RULES_BYTES`] (the file and what it includes; bounding the memory and time a
//! repository's file may cost), or a rule too large to compile. The refusal says why.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::run::prompt as texts;
use crate::run::trusted_file::{self, Links};

/// Most bytes of rules: `.clineignore` and the files it includes, together. Compiled, the
/// costliest rules take about 0.5 KB each of these bytes (`benches`-free check: the test
/// `a_huge_clineignore_blocks_everything_and_says_why`), so a repository's file costs at most
/// some 150 MB and half a second, once.
pub(crate) const MAX_RULES_BYTES: u64 = 256 << 10;

/// Rules compiled together: the matcher's own size limit refuses a set of many costly
/// patterns (about 10,000), so they are compiled in groups, and a group it refuses in halves.
const GROUP: usize = 1024;

/// The commands whose file arguments `validateCommand` checks.
const FILE_READING_COMMANDS: &[&str] =
    &["cat", "less", "more", "head", "tail", "grep", "awk", "sed", "get-content", "gc", "type", "select-string", "sls"];

/// The workspace's `.clineignore`, as loaded for one tool call.
pub(crate) struct ClineIgnore {
    root: PathBuf,
    /// The file's text (Cline's `clineIgnoreContent`); `None` when there is none.
    content: Option<String>,
    rules: Arc<Rules>,
}

/// What the rules are, compiled.
enum Rules {
    /// Matchers in the order of their lines: the last one that matches a path decides, as the
    /// last matching line would in one matcher. None: nothing is blocked.
    Apply(Vec<Gitignore>),
    /// The rules cannot be applied (why, for the refusal): everything is blocked.
    Unusable(String),
}

impl ClineIgnore {
    /// Loads `root/.clineignore` (no file: everything is allowed).
    pub(crate) fn load(root: &Path) -> ClineIgnore {
        // Opened without blocking and judged on the descriptor: a FIFO cannot hang a tool call,
        // and no file swapped in after a check is read. Its text goes into the prompt only when
        // it lies inside the workspace (a link to a key is never sent); its rules apply wherever
        // it leads, as in Cline.
        let read = trusted_file::open(&root.join(".clineignore"), Links::Follow).and_then(|opened| {
            let inside = root.canonicalize().is_ok_and(|r| opened.within(&r));
            opened.read(MAX_RULES_BYTES).map(|bytes| (inside, bytes))
        });
        let unusable = |why: String| (None, Arc::new(Rules::Unusable(why)));
        let (content, rules) = match read {
            Ok((inside, bytes)) => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                let rules = match expand_includes(root, &text) {
                    Ok(all) => cached(root, all),
                    Err(why) => Arc::new(Rules::Unusable(why)),
                };
                (inside.then_some(text), rules)
            }
            Err(trusted_file::Error::Missing) => (None, Arc::new(Rules::Apply(Vec::new()))),
            Err(trusted_file::Error::TooLarge { size, .. }) => unusable(format!(
                "the .clineignore file is {size} bytes, over the {} KiB agent-min reads",
                MAX_RULES_BYTES >> 10
            )),
            Err(e) => unusable(format!("the .clineignore file cannot be read ({e})")),
        };
        ClineIgnore { root: root.to_path_buf(), content, rules }
    }

    /// Why the rules cannot be applied (every file is then blocked), if they cannot.
    pub(crate) fn unusable(&self) -> Option<&str> {
        match &*self.rules {
            Rules::Unusable(why) => Some(why),
            Rules::Apply(_) => None,
        }
    }

    /// Whether no path is blocked (no file, or one without rules).
    fn blocks_nothing(&self) -> bool {
        matches!(&*self.rules, Rules::Apply(groups) if groups.is_empty())
    }

    /// Whether the rules ignore `rel` (relative, `/`-separated); all do when unusable.
    fn ignores(&self, rel: &str, is_dir: bool) -> bool {
        match &*self.rules {
            Rules::Unusable(_) => true,
            Rules::Apply(groups) => groups
                .iter()
                .rev()
                .map(|g| g.matched(rel, is_dir))
                .find(|m| !m.is_none())
                .is_some_and(|m| m.is_ignore()),
        }
    }

    /// The file's text, for the prompt's instructions.
    pub(crate) fn content(&self) -> Option<&str> {
        self.content.as_deref()
    }

    /// Cline's `validateAccess`: false when `path` (relative to the root, or absolute) is
    /// ignored, itself or through a parent directory.
    pub(crate) fn allows(&self, path: &str) -> bool {
        if self.blocks_nothing() {
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
            if self.ignores(&prefix, true) {
                return false;
            }
        }
        !self.ignores(&rel, path.ends_with('/'))
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
        if self.blocks_nothing() {
            return None;
        }
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
        if self.blocks_nothing() {
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
        // As Cline's `path.resolve` then `path.relative`: `..` is resolved on the whole absolute
        // path, so `../ws/private/x` from `ws` is `private/x` (judged as outside, it was let
        // through), and only a path that ends up outside the root is outside.
        let mut resolved = std::path::PathBuf::from("/");
        for c in self.root.join(&path).components() {
            match c {
                std::path::Component::Normal(s) => resolved.push(s),
                std::path::Component::ParentDir => {
                    resolved.pop();
                }
                _ => {}
            }
        }
        let inside = resolved.strip_prefix(&self.root).ok()?;
        let parts: Vec<String> = inside.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        Some(parts.join("/"))
    }
}

/// Cline's `!include` handling: each `!include FILE` line (trimmed) is replaced by that file's
/// text (a missing file is skipped, as in Cline); other lines are kept. `Err`: the
/// whole is over [`MAX_RULES_BYTES`] (many lines may include one large file).
fn expand_includes(root: &Path, text: &str) -> Result<String, String> {
    if !text.contains("!include ") {
        return Ok(text.to_string());
    }
    let over = || {
        format!(
            "the .clineignore file and the files it includes hold over {} KiB of rules, what agent-min reads",
            MAX_RULES_BYTES >> 10
        )
    };
    let mut out = String::new();
    for (n, line) in text.lines().enumerate() {
        match line.trim().strip_prefix("!include ") {
            Some(file) => {
                let left = MAX_RULES_BYTES.saturating_sub(out.len() as u64);
                // Node's `path.join(cwd, file)`: an absolute name is still under the workspace
                // (Rust's `join` would replace the root with it).
                let file = file.trim().trim_start_matches('/');
                match trusted_file::read(&root.join(file), Links::Follow, left) {
                    Ok(bytes) => {
                        out.push('\n');
                        out.push_str(&String::from_utf8_lossy(&bytes));
                    }
                    Err(trusted_file::Error::Missing) => {}
                    Err(trusted_file::Error::TooLarge { .. }) => return Err(over()),
                    // (Cline's read throws, and its rules are left empty: nothing blocked.)
                    Err(e) => {
                        // By its line: the name is text of a file that may lie outside the
                        // workspace (a link), which the model does not see.
                        return Err(format!(
                            "the file that line {} of the .clineignore file includes cannot be read ({e})",
                            n + 1
                        ));
                    }
                }
            }
            None => {
                out.push('\n');
                out.push_str(line);
            }
        }
        if out.len() as u64 > MAX_RULES_BYTES {
            return Err(over());
        }
    }
    Ok(out)
}

/// The rules of `text` (the file with its includes) for `root`: the last ones compiled when the
/// text and root are the same (each tool call loads the file, some more than once; compiling a
/// long file costs far more than reading it).
fn cached(root: &Path, text: String) -> Arc<Rules> {
    static LAST: Mutex<Option<(PathBuf, String, Arc<Rules>)>> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((r, t, rules)) = &*last {
        if r == root && *t == text {
            return Arc::clone(rules);
        }
    }
    let rules = Arc::new(compile(root, &text));
    *last = Some((root.to_path_buf(), text, Arc::clone(&rules)));
    rules
}

/// Compiles the lines of `text`, then `.clineignore` itself (when `text` has no rule, nothing).
fn compile(root: &Path, text: &str) -> Rules {
    if text.is_empty() {
        return Rules::Apply(Vec::new());
    }
    let mut lines: Vec<(usize, &str)> = text.lines().enumerate().collect();
    lines.push((lines.len(), ".clineignore"));
    let mut groups = Vec::new();
    for group in lines.chunks(GROUP) {
        if let Err(n) = compile_group(root, group, &mut groups) {
            // By its number only: the rules may come from a file outside the workspace (a link,
            // an include), whose text is not the model's to see.
            return Rules::Unusable(format!(
                "line {} of the .clineignore rules (its !include files in place) is too large to compile",
                n + 1
            ));
        }
    }
    Rules::Apply(groups)
}

/// Compiles `lines` into one matcher, or, when the matcher refuses them as too large, each half
/// on its own: `Err` with the index of a line it refuses alone.
fn compile_group(root: &Path, lines: &[(usize, &str)], out: &mut Vec<Gitignore>) -> Result<(), usize> {
    let mut b = GitignoreBuilder::new(root);
    // Cline's `ignore()` matches without regard to case (the npm package's default
    // `ignorecase: true`): `.env*` blocks `.ENV` too, even on a case-sensitive file system.
    let _ = b.case_insensitive(true);
    for (_, line) in lines {
        // A line the matcher cannot parse (e.g. a bad character class) is skipped, as the
        // `ignore` npm package skips it.
        let _ = b.add_line(None, line);
    }
    match b.build() {
        Ok(g) => {
            out.push(g);
            Ok(())
        }
        Err(_) if lines.len() > 1 => {
            let (a, b) = lines.split_at(lines.len() / 2);
            compile_group(root, a, out)?;
            compile_group(root, b, out)
        }
        Err(_) => Err(lines[0].0),
    }
}

/// A path or command `.clineignore` blocks: what the model is told, what the person sees.
pub(crate) struct Blocked {
    /// Cline's `clineIgnoreError`, or why every file is blocked.
    pub(crate) text: String,
    /// The call's outcome line.
    pub(crate) outcome: String,
}

impl ClineIgnore {
    /// How refusing `path` is said.
    fn blocked(&self, path: &str) -> Blocked {
        match self.unusable() {
            None => Blocked { text: texts::cline_ignore_error(path), outcome: "blocked by .clineignore".into() },
            Some(why) => Blocked { text: texts::cline_ignore_unusable(path, why), outcome: format!("blocked: {why}") },
        }
    }
}

/// What `tool` says when `.clineignore` blocks `path` (Cline's `clineIgnoreError`), if it does:
/// for the tools whose declaration names path parameters (`tools/registry.rs`).
/// Unlike Cline, a symlink is also judged by where it leads: a link to an ignored file is
/// blocked too.
pub(crate) fn refusal(root: &Path, tool: &str, path: &str) -> Option<Blocked> {
    if !crate::run::tools::registry::guards_paths(tool) {
        return None;
    }
    // Cline's validateAccess resolves the path first, which drops a trailing `/`: `list_files`
    // of `build/` with `build/` ignored lists it, its entries locked. Its refusal names the path
    // as the model gave it.
    let trimmed = path.trim_end_matches('/');
    refused(root, if trimmed.is_empty() { path } else { trimmed }, path)
}

/// Cline's `clineIgnoreError` if `.clineignore` blocks `path` (or where it leads), for any tool
/// (`apply_patch` names its paths inside the patch).
pub(crate) fn path_refusal(root: &Path, path: &str) -> Option<Blocked> {
    refused(root, path, path)
}

/// The refusal naming `named` if `.clineignore` blocks `judged` (or where it leads).
fn refused(root: &Path, judged: &str, named: &str) -> Option<Blocked> {
    let ig = ClineIgnore::load(root);
    (!ig.allows(judged) || !ig.allows_target(judged)).then(|| ig.blocked(named))
}

/// What `apply_patch` says when `.clineignore` blocks a file the patch updates or deletes, if
/// it does: Cline's `Access denied: PATH` (its `loadFiles`), or why every file is blocked.
pub(crate) fn patch_refusal(root: &Path, path: &str) -> Option<Blocked> {
    let ig = ClineIgnore::load(root);
    if ig.allows(path) && ig.allows_target(path) {
        return None;
    }
    Some(match ig.unusable() {
        None => Blocked { text: format!("Access denied: {path}"), outcome: "blocked by .clineignore".into() },
        Some(_) => ig.blocked(path),
    })
}

/// What `execute_command` says when the command reads an ignored file, if it does.
pub(crate) fn command_refusal(root: &Path, command: &str) -> Option<Blocked> {
    let ig = ClineIgnore::load(root);
    ig.blocked_by_command(command).map(|p| ig.blocked(&p))
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
        // Out through `..` and back in is in (a file not yet there, so no link to judge it by:
        // write_to_file created it): `..` is resolved on the whole path, as Cline's
        // `path.resolve` does.
        let name = d.path().file_name().unwrap().to_string_lossy().into_owned();
        assert!(!ig.allows(&format!("../{name}/private/new.txt")));
        assert!(!ig.allows(&format!("../{name}/new.secret")));
        assert!(!ig.allows(&abs(&format!("../{name}/private/new.txt"))));
        assert!(!ig.allows(&format!("{}/../{name}/private/x", d.path().display())));
        assert!(ig.allows(&format!("../{name}/src/new.ts")));
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
        // An absolute name is the workspace's file, as Node's `path.join` makes it.
        std::fs::write(d.path().join(".clineignore"), "!include /.gitignore\n").unwrap();
        assert!(!ClineIgnore::load(d.path()).allows("server.log"));
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
    fn a_clineignore_linked_outside_the_workspace_applies_but_is_not_sent() {
        // Cline follows the link: a shared ignore file kept outside the project still guards
        // it (it used to block nothing here); its text stays out of the prompt, where a link
        // to a key would otherwise send the key.
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        std::fs::write(d.path().join("shared-ignore"), ".env\nsecrets/\n").unwrap();
        std::os::unix::fs::symlink(d.path().join("shared-ignore"), ws.join(".clineignore")).unwrap();
        let ig = ClineIgnore::load(&ws);
        assert!(ig.content().is_none() && instructions(&ws).is_none());
        assert!(!ig.allows(".env") && !ig.allows("secrets/a.txt") && ig.allows("src/lib.rs"));
        assert!(refusal(&ws, "read_file", ".env")
            .unwrap()
            .text
            .starts_with("Access to .env is blocked by the .clineignore"));
    }

    #[test]
    fn a_clineignore_that_cannot_be_read_blocks_everything() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join(".clineignore")).unwrap();
        let ig = ClineIgnore::load(d.path());
        assert!(!ig.allows("src/lib.rs"));
        assert!(ig.unusable().unwrap().starts_with("the .clineignore file cannot be read ("), "{:?}", ig.unusable());
        // An include that cannot be read (Cline's read throws, leaving it no rules at all).
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("adir")).unwrap();
        std::fs::write(d.path().join(".clineignore"), ".env\n!include adir\n").unwrap();
        let ig = ClineIgnore::load(d.path());
        assert!(!ig.allows("src/lib.rs"));
        let why = ig.unusable().unwrap();
        assert!(why.starts_with("the file that line 2 of the .clineignore file includes cannot be read ("), "{why}");
        assert!(!why.contains("adir"), "{why}");
        // A dangling link is no file, as in Cline (`fileExistsAtPath` follows it).
        let d = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(d.path().join("gone"), d.path().join(".clineignore")).unwrap();
        assert!(ClineIgnore::load(d.path()).allows("src/lib.rs"));
    }

    #[test]
    fn a_symlink_to_an_ignored_file_is_refused_too() {
        let (d, _) = setup(&["secrets/"]);
        std::fs::create_dir(d.path().join("secrets")).unwrap();
        std::fs::write(d.path().join("secrets/token.txt"), "x").unwrap();
        std::os::unix::fs::symlink(d.path().join("secrets/token.txt"), d.path().join("link.txt")).unwrap();
        std::fs::write(d.path().join("plain.txt"), "y").unwrap();
        assert!(refusal(d.path(), "read_file", "link.txt").unwrap().text.starts_with("Access to link.txt is blocked"));
        assert!(refusal(d.path(), "read_file", "plain.txt").is_none());
        assert!(refusal(d.path(), "list_files", "secrets/token.txt").is_some(), "list_files refuses, as in Cline");
        // The path resolved as Cline resolves it: `secrets/` names the directory, which a
        // directory-only pattern does not block (its entries are locked in the listing).
        assert!(refusal(d.path(), "list_files", "secrets/").is_none());
        assert!(refusal(d.path(), "search_files", "secrets/token.txt").is_none(), "search leaves files out instead");
        assert!(refusal(d.path(), "write_to_file", "secrets/new.txt").is_some());
    }

    /// Cline's refusal names the path as the model gave it, its trailing `/` too.
    #[test]
    fn a_refusal_names_the_path_as_given() {
        let (d, _) = setup(&["build"]);
        std::fs::create_dir(d.path().join("build")).unwrap();
        let text = refusal(d.path(), "list_files", "build/").unwrap().text;
        assert!(text.starts_with("Access to build/ is blocked by the .clineignore file settings"), "{text}");
    }

    #[test]
    fn thousands_of_costly_rules_still_block_what_they_name() {
        // 11,000 globs with `**`, `*` and `?`: one matcher of them all is over the regex
        // engine's size limit, which made the whole file block nothing.
        let mut lines = vec![".env".to_string()];
        lines.extend((0..11_000).map(|i| format!("src/**/mod{i}*x?.rs")));
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let (_d, ig) = setup(&refs);
        assert!(ig.unusable().is_none());
        assert!(!ig.allows(".env") && !ig.allows(".ENV"));
        assert!(!ig.allows("src/a/b/mod10999_zx1.rs") && !ig.allows("src/mod7zx1.rs"));
        assert!(ig.allows("src/lib.rs") && ig.allows("src/mod7.rs"));
        assert!(!ig.allows(".clineignore"));
        // The last matching line decides across the groups the rules are compiled in.
        lines.push("!src/keep/mod3zx1.rs".into());
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let (_d, ig) = setup(&refs);
        assert!(ig.allows("src/keep/mod3zx1.rs") && !ig.allows("src/other/mod3zx1.rs"));
    }

    #[test]
    fn a_huge_clineignore_blocks_everything_and_says_why() {
        // Over the bound, Cline's way would be to read it all; blocking nothing (what a file
        // too large to read did) would expose what it names.
        let body: String = (0..20_000).map(|i| format!("secret{i}.txt\n")).collect();
        assert!(body.len() as u64 > MAX_RULES_BYTES);
        let (d, ig) = setup(&[&body]);
        assert!(!ig.allows("src/lib.rs") && !ig.allows(".env") && ig.allows("../outside.txt"));
        let why = ig.unusable().unwrap();
        assert!(why.contains("over the 256 KiB"), "{why}");
        let b = refusal(d.path(), "read_file", "src/lib.rs").unwrap();
        assert!(
            b.text.starts_with("Access to src/lib.rs is blocked: the .clineignore file is ")
                && b.text.contains("ask the user to fix the .clineignore file"),
            "{}",
            b.text
        );
        assert!(b.outcome.starts_with("blocked: the .clineignore file is "), "{}", b.outcome);
        assert!(command_refusal(d.path(), "cat README.md").is_some());
        assert_eq!(ig.mark(d.path(), vec!["a.txt".into()]), ["🔒 a.txt"]);
    }

    #[test]
    fn includes_are_bounded_together_and_a_rule_too_large_blocks_everything() {
        // Each include under the bound, many of them over it (one line each: a 1 MiB file of
        // `!include` lines used to read ~95,000 times its include).
        let d = tempfile::tempdir().unwrap();
        let part: String = (0..5_000).map(|i| format!("k{i}.txt\n")).collect();
        std::fs::write(d.path().join("part.txt"), &part).unwrap();
        let includes = "!include part.txt\n".repeat((MAX_RULES_BYTES as usize / part.len()) + 1);
        std::fs::write(d.path().join(".clineignore"), format!("{includes}.env\n")).unwrap();
        let ig = ClineIgnore::load(d.path());
        assert!(!ig.allows("src/lib.rs"));
        assert!(ig.unusable().unwrap().contains("the files it includes hold over 256 KiB"), "{:?}", ig.unusable());
        std::fs::write(d.path().join(".clineignore"), "!include part.txt\n.env\n").unwrap();
        let ig = ClineIgnore::load(d.path());
        assert!(ig.unusable().is_none() && ig.allows("src/lib.rs") && !ig.allows("k4999.txt") && !ig.allows(".env"));
        // One rule the matcher cannot compile within its size limit.
        let huge = "?".repeat(200_000);
        std::fs::write(d.path().join(".clineignore"), format!(".env\n{huge}\n")).unwrap();
        let ig = ClineIgnore::load(d.path());
        assert!(!ig.allows(".env") && !ig.allows("src/lib.rs"));
        let why = ig.unusable().unwrap();
        assert_eq!(why, "line 2 of the .clineignore rules (its !include files in place) is too large to compile");
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
