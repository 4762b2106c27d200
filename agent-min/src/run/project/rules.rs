//! The rules the model is told, from every source Cline reads, in Cline's order and headings
//! (`cline-rules.ts`, `external-rules.ts`, `user_instructions.ts`):
//!
//! 1. global rules: every file under Cline's global rules directory
//!    (`~/Documents/Cline/Rules`, the XDG documents directory on Linux), then under the Cline
//!    CLI's (`~/.cline/rules`), then agent-min's own (`$XDG_CONFIG_HOME/agent-min/rules`, else
//!    `~/.config/agent-min/rules`), then the cross-tool `~/.agents/AGENTS.md`;
//! 2. `--rules FILE` files, in the order given;
//! 3. the workspace's `.clinerules` file, or every file under its `.clinerules/` directory
//!    except `workflows/`, `hooks/` and `skills/`; then the Markdown and text files at the top
//!    of `.cline/rules/` (as in `~/.cline/rules`), where the Cline CLI keeps a project's rules (Cline v4.0.10's
//!    `docs/getting-started/config.mdx`; the extension itself reads only `.clinerules`);
//! 4. `.cursorrules`, then the `.mdc` files under `.cursor/rules/`;
//! 5. `.windsurfrules`;
//! 6. every `AGENTS.md` (any case) among the first 500 entries `list_files` finds recursively
//!    (breadth first), when there is one at the top.
//!
//! A rules file or directory itself may be a symlink (read where it leads, if that is inside
//! the workspace); files in a directory are read recursively, sorted by path, symlinks and OS
//! litter (`.DS_Store`, `Thumbs.db`, `desktop.ini`) skipped. Frontmatter and `paths:` conditionals
//! apply to `.clinerules`, the global directories, `--rules` files and `.cursor/rules` (the
//! latter evaluated without any request paths, as Cline evaluates it).

use std::path::{Path, PathBuf};

use super::cli_file;
use super::conditionals;
use super::frontmatter;
use super::texts;
use crate::run::trusted_file::{self, Links};

/// Most bytes read of one rule file; a larger one is skipped with a warning.
pub(crate) const MAX_RULE_FILE_BYTES: u64 = 1 << 20;

/// Most bytes of rules read for one request; files beyond it are skipped with a warning.
pub(crate) const MAX_RULES_TOTAL_BYTES: u64 = 4 << 20;

/// Reads rule files within the budget, confined where they must be, collecting warnings.
pub(crate) struct Reader {
    /// Files that could not be used, and why.
    pub warnings: Vec<String>,
    used: u64,
    /// The workspace root (canonical): a workspace rule file must resolve inside it.
    confine: Option<PathBuf>,
    /// The workspace's `.clineignore`: a workspace rule file must not lead to a file it blocks.
    ignore: Option<crate::run::tools::clineignore::ClineIgnore>,
}

impl Reader {
    /// A reader with the whole budget.
    pub(crate) fn new() -> Reader {
        Reader { warnings: Vec::new(), used: 0, confine: None, ignore: None }
    }

    /// From here on, files must resolve inside `root` (`None`: anywhere).
    pub(super) fn confine_to(&mut self, root: Option<&Path>) {
        self.confine = root.and_then(|r| r.canonicalize().ok());
        self.ignore = root.map(crate::run::tools::clineignore::ClineIgnore::load);
    }
}

impl Default for Reader {
    fn default() -> Self {
        Reader::new()
    }
}

/// Most entries looked at while searching for `AGENTS.md` (Cline's `listFiles` limit).
const AGENTS_SEARCH_LIMIT: usize = 500;

/// Files Cline's `readDirectory` leaves out.
const OS_GENERATED_FILES: &[&str] = &[".DS_Store", "Thumbs.db", "desktop.ini"];

/// Where rules come from, besides the workspace.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sources {
    /// Global rule directories (Cline's, the Cline CLI's, then agent-min's) and their layout.
    pub global_dirs: Vec<(PathBuf, Layout)>,
    /// The cross-tool global rules file, `~/.agents/AGENTS.md`.
    pub global_agents: Option<PathBuf>,
    /// `--rules FILE`, in order.
    pub extra_files: Vec<PathBuf>,
    /// `--no-rules`: no global or workspace rules (the `--rules` files still apply).
    pub no_rules: bool,
}

impl Sources {
    /// The default global directories, from the environment.
    pub(crate) fn from_env(extra_files: Vec<PathBuf>, no_rules: bool) -> Sources {
        let mut global_dirs = Vec::new();
        if let Some(docs) = documents_dir() {
            global_dirs.push((docs.join("Cline").join("Rules"), Layout::Extension));
        }
        global_dirs.extend(crate::run::places::cline_dir().map(|d| (d.join("rules"), Layout::Cli)));
        if let Some(cfg) = config_dir() {
            global_dirs.push((cfg.join("agent-min").join("rules"), Layout::Extension));
        }
        let global_agents = crate::run::places::home_dir().map(|h| h.join(".agents").join("AGENTS.md"));
        Sources { global_dirs, global_agents, extra_files, no_rules }
    }

    /// Checks the `--rules` files up front, so a typo stops the run before it starts.
    pub(crate) fn check(&self) -> Result<(), String> {
        for f in &self.extra_files {
            match std::fs::metadata(f) {
                Ok(m) if m.is_file() => {}
                Ok(_) => {
                    return Err(format!(
                        "--rules {}: not a regular file; give a rule file (Markdown or text)",
                        f.display()
                    ))
                }
                Err(e) => return Err(format!("--rules {}: {e}; give an existing rule file", f.display())),
            }
        }
        Ok(())
    }
}

/// The rule sections for one request, in Cline's order (each a heading and its content), and
/// warnings about files that could not be used.
pub(crate) fn sections(root: &Path, src: &Sources, paths: &[String], warn: &mut Reader) -> Vec<String> {
    let cwd = posix(root);
    let mut out = Vec::new();
    warn.confine_to(None);
    if !src.no_rules {
        for (dir, layout) in &src.global_dirs {
            if dir.is_dir() {
                let files = layout.files(dir, warn);
                let content = match layout {
                    Layout::Extension => total_content(&files, dir, paths, warn),
                    Layout::Cli => cli_content(&files, dir, paths, warn),
                };
                if !content.is_empty() {
                    out.push(texts::global_directory(&posix(dir), &content));
                }
            }
        }
        if let Some((file, text)) = src.global_agents.as_deref().and_then(|f| Some((f, read_trimmed(f, warn)?))) {
            out.push(texts::global_agents_file(&posix(file), &text));
        }
    }
    if !src.extra_files.is_empty() {
        let content = extra_content(&src.extra_files, paths, warn);
        if !content.is_empty() {
            out.push(format!("# --rules\n\nThe following is provided by rule files given on the command line (--rules), where the user has specified instructions for this task:\n\n{content}"));
        }
    }
    if src.no_rules {
        return out;
    }
    // From here on the files are the workspace's: a symlink must not lead the model outside it.
    warn.confine_to(Some(root));
    out.extend(local_cline_rules(root, &cwd, paths, warn));
    // In the home directory the workspace's `.cline/rules/` is the global one, already sent.
    let cli_rules = root.join(".cline").join("rules");
    if !src.global_dirs.iter().any(|(g, _)| same_dir(g, &cli_rules)) {
        out.extend(cline_cli_rules(&cli_rules, root, &cwd, paths, warn));
    }
    out.extend(cursor_rules(root, &cwd, warn));
    if let Some(text) = read_trimmed(&root.join(".windsurfrules"), warn) {
        out.push(texts::windsurf_file(&cwd, &text));
    }
    out.extend(agents_rules(root, &cwd, warn));
    out
}

fn local_cline_rules(root: &Path, cwd: &str, paths: &[String], warn: &mut Reader) -> Option<String> {
    let at = root.join(".clinerules");
    // Through a symlink as Cline's `fs.stat` goes (each file read is still confined).
    let meta = std::fs::metadata(&at).ok()?;
    if meta.is_dir() {
        if !directory_inside(&at, warn) {
            return None;
        }
        let files = read_directory(&at, &["workflows", "hooks", "skills"], warn);
        let content = total_content(&files, root, paths, warn);
        return (!content.is_empty()).then(|| texts::local_directory(cwd, &content));
    }
    let raw = read_trimmed(&at, warn)?;
    let fm = frontmatter::parse(&raw);
    if fm.had_frontmatter && fm.parse_error.is_some() {
        return Some(texts::local_file(cwd, &raw));
    }
    conditionals::passes(&fm.data, paths).then(|| texts::local_file(cwd, fm.body.trim()))
}

/// Whether `a` and `b` are the same existing directory.
fn same_dir(a: &Path, b: &Path) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// The rule files of `.cline/rules/` as the Cline CLI finds and reads them ([`Layout::Cli`],
/// [`cli_content`]).
fn cline_cli_rules(dir: &Path, root: &Path, cwd: &str, paths: &[String], warn: &mut Reader) -> Option<String> {
    if !dir.is_dir() || !directory_inside(dir, warn) {
        return None;
    }
    let files = Layout::Cli.files(dir, warn);
    let content = cli_content(&files, root, paths, warn);
    (!content.is_empty()).then(|| texts::cline_cli_directory(cwd, &content))
}

fn cursor_rules(root: &Path, cwd: &str, warn: &mut Reader) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(text) = read_trimmed(&root.join(".cursorrules"), warn) {
        out.push(texts::cursor_file(cwd, &text));
    }
    let dir = root.join(".cursor").join("rules");
    if dir.is_dir() && directory_inside(&dir, warn) {
        let files: Vec<PathBuf> =
            read_directory(&dir, &[], warn).into_iter().filter(|f| f.extension().is_some_and(|e| e == "mdc")).collect();
        // Cline evaluates these without the request's paths.
        let content = total_content(&files, root, &[], warn);
        if !content.is_empty() {
            out.push(texts::cursor_directory(cwd, &content));
        }
    }
    out
}

fn agents_rules(root: &Path, cwd: &str, warn: &mut Reader) -> Option<String> {
    // Cline's `findAgentsMdFiles`: only when there is one at the top (a link to one counts, as
    // `fileExistsAtPath` follows it), then every `agents.md`, in any case, among the first 500
    // entries of `listFiles` (breadth first: a deep tree cannot hide a shallow one).
    if !root.join("AGENTS.md").exists() {
        return None;
    }
    let (entries, _, skipped) = crate::run::tools::list_entries(root, AGENTS_SEARCH_LIMIT);
    warn.warnings.extend(skipped.into_iter().map(|w| format!("the search for AGENTS.md files: {w}")));
    let mut found: Vec<PathBuf> = entries
        .iter()
        .filter(|e| !e.ends_with('/') && e.rsplit('/').next().is_some_and(|n| n.eq_ignore_ascii_case("agents.md")))
        .map(|e| root.join(e))
        .collect();
    // Cline's listing is breadth first: shallower files come first.
    found.sort_by_key(|p| (p.components().count(), p.clone()));
    let parts: Vec<String> = found
        .iter()
        .filter_map(|p| {
            let text = read_trimmed(p, warn)?;
            Some(format!("## {}\n\n{text}", relative(p, root)))
        })
        .collect();
    (!parts.is_empty()).then(|| texts::agents_files(cwd, &parts.join("\n\n")))
}

/// Whether a workspace rules directory `dir` (perhaps a symlink) lies inside the workspace the
/// reader is confined to, and is not its root; a warning otherwise. Judged before it is walked:
/// a link to `/` or to the home directory must not be read file by file on every request.
pub(super) fn directory_inside(dir: &Path, r: &mut Reader) -> bool {
    let Some(root) = &r.confine else { return true };
    match dir.canonicalize() {
        Ok(real) if real.starts_with(root) && real != *root => true,
        _ => {
            r.warnings.push(format!(
                "rules directory {} leads outside the workspace or to its root (a symlink); it was not read",
                dir.display()
            ));
            false
        }
    }
}

/// Which files of a rules or workflows directory count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Cline's extension (`readDirectory`): every file, subfolders included.
    Extension,
    /// The Cline CLI (`discoverRulesLikeFiles`): the `.md`, `.markdown` and `.txt` files at
    /// the top.
    Cli,
}

impl Layout {
    /// The files of `dir` that count, in the order they are read; none, with a warning, when
    /// it holds more than [`MAX_DIRECTORY_ENTRIES`] entries.
    pub(super) fn files(self, dir: &Path, warn: &mut Reader) -> Vec<PathBuf> {
        match self {
            Layout::Extension => read_directory(dir, &[], warn),
            Layout::Cli => {
                let markdown = |name: &str| {
                    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
                    ["md", "markdown", "txt"].iter().any(|m| ext.eq_ignore_ascii_case(m))
                };
                let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
                let Some(entries) = at_most(rd, MAX_DIRECTORY_ENTRIES) else {
                    warn.warnings.push(too_many(dir));
                    return Vec::new();
                };
                let mut files: Vec<_> = entries
                    .into_iter()
                    .filter_map(Result::ok)
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                    .filter(|e| e.file_name().to_str().is_some_and(markdown))
                    .collect();
                files.sort_by_key(|e| e.file_name());
                files.into_iter().map(|e| e.path()).collect()
            }
        }
    }
}

/// Most entries looked at under one rules (or workflows) directory, its subdirectories'
/// included. A directory holding more is not used at all, with a warning (Cline reads them
/// all): its files are taken in sorted order, and which come first is known only once all are
/// listed — the cost, on every request, that the cap is there to bound. Reading stops one
/// entry past it.
const MAX_DIRECTORY_ENTRIES: usize = 10_000;

/// The first `n` of `items`, or `None` when there are more; nothing past the `n + 1`th is read.
fn at_most<T>(items: impl Iterator<Item = T>, n: usize) -> Option<Vec<T>> {
    let first: Vec<T> = items.take(n.saturating_add(1)).collect();
    (first.len() <= n).then_some(first)
}

/// The warning for a directory past [`MAX_DIRECTORY_ENTRIES`].
fn too_many(dir: &Path) -> String {
    format!("{}: more than 10,000 entries; none of its files were used", dir.display())
}

/// Every regular file under `dir`, recursively, in the order of Node's recursive
/// `fs.readdir` (Cline's `readDirectory`): each directory's entries sorted by name (libuv sorts
/// them byte-wise), its files before anything under it, and its subdirectories taken from a
/// stack — the last first, each with everything under it before the one before it. `excluded`
/// subfolders of `dir` are left out. None, with a warning, when more than
/// [`MAX_DIRECTORY_ENTRIES`] entries are found under it (reading stops there).
pub(super) fn read_directory(dir: &Path, excluded: &[&str], warn: &mut Reader) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut left = MAX_DIRECTORY_ENTRIES;
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        let Some(entries) = at_most(rd, left) else {
            warn.warnings.push(too_many(dir));
            return Vec::new();
        };
        left -= entries.len();
        let mut entries: Vec<_> = entries.into_iter().filter_map(Result::ok).collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let Ok(t) = e.file_type() else { continue };
            let path = e.path();
            if t.is_dir() {
                let top = d == dir && e.file_name().to_str().is_some_and(|n| excluded.contains(&n));
                if !top {
                    stack.push(path);
                }
            } else if t.is_file() && !e.file_name().to_str().is_some_and(|n| OS_GENERATED_FILES.contains(&n)) {
                out.push(path);
            }
        }
    }
    out
}

/// Cline's `getRuleFilesTotalContentWithMetadata`: each file as `relative/name\nbody`, joined by
/// blank lines; a frontmatter that does not parse keeps the whole file; a failed conditional
/// leaves the file out.
fn total_content(files: &[PathBuf], base: &Path, paths: &[String], warn: &mut Reader) -> String {
    let parts: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let raw = read_trimmed(f, warn)?;
            rule_part(&relative(f, base), &raw, paths)
        })
        .collect();
    parts.join("\n\n")
}

/// The rule files of one of the Cline CLI's directories as it reads them ([`cli_file`]): a
/// file its frontmatter turns off (`disabled: true`) is left out, as is one the CLI refuses,
/// with a warning that says why; the others as `.clinerules/` files are read (frontmatter
/// conditionals applied).
fn cli_content(files: &[PathBuf], base: &Path, paths: &[String], warn: &mut Reader) -> String {
    let parts: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let raw = read_text(f, warn)?;
            let stem = f.file_stem().map(|s| s.to_string_lossy()).unwrap_or_default();
            match cli_file::read(&raw, &stem, cli_file::Kind::Rule) {
                Ok(rule) if rule.disabled => None,
                Ok(rule) if rule.unread.is_some() => {
                    let why = rule.unread.unwrap_or_default();
                    warn.warnings.push(format!(
                        "{}: its frontmatter could not be read ({why}); the rule was sent without it",
                        f.display()
                    ));
                    Some(format!("{}\n{}", relative(f, base), rule.instructions))
                }
                Ok(_) => rule_part(&relative(f, base), &raw, paths),
                Err(why) => {
                    warn.warnings.push(format!("{}: not used, as the Cline CLI does not use it: {why}", f.display()));
                    None
                }
            }
        })
        .collect();
    parts.join("\n\n")
}

fn extra_content(files: &[PathBuf], paths: &[String], warn: &mut Reader) -> String {
    let parts: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let raw = read_trimmed(f, warn)?;
            rule_part(&posix(f), &raw, paths)
        })
        .collect();
    parts.join("\n\n")
}

fn rule_part(name: &str, raw: &str, paths: &[String]) -> Option<String> {
    let fm = frontmatter::parse(raw);
    if fm.had_frontmatter && fm.parse_error.is_some() {
        return Some(format!("{name}\n{raw}"));
    }
    conditionals::passes(&fm.data, paths).then(|| format!("{name}\n{}", fm.body.trim()))
}

/// A regular file's text, trimmed as JavaScript trims; `None` when missing, empty or unusable.
pub(super) fn read_trimmed(path: &Path, r: &mut Reader) -> Option<String> {
    read_text(path, r).filter(|t| !t.is_empty())
}

/// A regular file's text, trimmed as JavaScript trims (empty for an empty file); `None` when
/// missing or unusable. One open without blocking (a FIFO is not a rule file), and every check
/// on that descriptor.
pub(super) fn read_text(path: &Path, r: &mut Reader) -> Option<String> {
    let opened = match trusted_file::open(path, Links::Follow) {
        Ok(o) => o,
        Err(trusted_file::Error::Missing | trusted_file::Error::NotRegular) => return None,
        Err(e) => {
            r.warnings.push(format!("could not read rule file {}: {e}", path.display()));
            return None;
        }
    };
    if let Some(root) = &r.confine {
        if !opened.within(root) {
            r.warnings.push(format!(
                "rule file {} leads outside the workspace (a symlink); it was not sent to the model",
                path.display()
            ));
            return None;
        }
    }
    // A link whose name .clineignore allows but whose target it blocks (`AGENTS.md -> .env`);
    // a rule file blocked by its own name is still sent, as Cline sends it. Rules that cannot
    // be applied cannot tell where a link may lead: no link is sent then.
    let is_link = || std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if r.ignore.as_ref().is_some_and(|ig| {
        (ig.allows_path(path) || (ig.unusable().is_some() && is_link())) && !ig.allows_target(&path.to_string_lossy())
    }) {
        r.warnings.push(format!(
            "rule file {} leads to a file .clineignore blocks (a symlink); it was not sent to the model",
            path.display()
        ));
        return None;
    }
    if opened.len() > MAX_RULE_FILE_BYTES {
        r.warnings.push(format!(
            "rule file {} is {} bytes, over the {MAX_RULE_FILE_BYTES}-byte limit; it was not sent to the model",
            path.display(),
            opened.len()
        ));
        return None;
    }
    if r.used + opened.len() > MAX_RULES_TOTAL_BYTES {
        r.warnings.push(format!(
            "rule file {} was not sent to the model: the rules together are over {MAX_RULES_TOTAL_BYTES} bytes",
            path.display()
        ));
        return None;
    }
    match opened.read(MAX_RULE_FILE_BYTES.min(MAX_RULES_TOTAL_BYTES - r.used)) {
        Ok(bytes) => {
            r.used += bytes.len() as u64;
            let text = String::from_utf8_lossy(&bytes);
            let t = text.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
            Some(t.to_string())
        }
        Err(e) => {
            r.warnings.push(format!("could not read rule file {}: {e}", path.display()));
            None
        }
    }
}

fn relative(p: &Path, base: &Path) -> String {
    posix(p.strip_prefix(base).unwrap_or(p))
}

fn posix(p: &Path) -> String {
    p.to_string_lossy().replace('\\', "/")
}

pub(crate) use super::documents::{deciding_file, documents_dir};

/// `$XDG_CONFIG_HOME`, else `~/.config`.
pub(super) fn config_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| Some(crate::run::places::home_dir()?.join(".config")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::test_files::write;

    fn none() -> Sources {
        Sources::default()
    }

    #[test]
    fn a_clinerules_directory_is_read_sorted_without_hooks_workflows_or_skills() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        write(r, ".clinerules/b.md", "  Second rule.  \n");
        write(r, ".clinerules/a.md", "First rule.");
        write(r, ".clinerules/sub/c.txt", "Nested rule.");
        write(r, ".clinerules/empty.md", "  \n");
        write(r, ".clinerules/.DS_Store", "junk");
        write(r, ".clinerules/hooks/PreToolUse", "#!/bin/sh\n");
        write(r, ".clinerules/workflows/release.md", "Workflow.");
        write(r, ".clinerules/skills/s/SKILL.md", "Skill.");
        let s = sections(r, &none(), &[], &mut Reader::new());
        let cwd = posix(r);
        assert_eq!(
            s,
            [format!("# .clinerules/\n\nThe following is provided by a root-level .clinerules/ directory where the user has specified instructions for this working directory ({cwd})\n\n.clinerules/a.md\nFirst rule.\n\n.clinerules/b.md\nSecond rule.\n\n.clinerules/sub/c.txt\nNested rule.")]
        );
    }

    /// The order Node 20's `fs.readdir(dir, { withFileTypes: true, recursive: true })` gives
    /// this tree (checked with node): names byte-wise, a directory's files first, its
    /// subdirectories last to first, each with all under it.
    #[test]
    fn a_rules_directory_is_read_in_nodes_recursive_readdir_order() {
        let d = tempfile::tempdir().unwrap();
        let files = [
            "0.md",
            "B.md",
            "a.md",
            "b.md",
            "zz.md",
            "z/d.md",
            "sub/b.md",
            "sub/c.md",
            "sub/zz.md",
            "sub/inner/g.md",
            "sub/inner/x/h.md",
            "sub/a2/i.md",
            "a-dir/e.md",
            "a-dir/deep/f.md",
        ];
        for f in files.iter().rev() {
            write(d.path(), f, "x");
        }
        let got = read_directory(d.path(), &[], &mut Reader::new());
        let got: Vec<_> = got.iter().map(|p| p.strip_prefix(d.path()).unwrap().to_str().unwrap()).collect();
        assert_eq!(got, files);
    }

    /// A rules directory of more than 10,000 entries is not used, and a warning says so: it was
    /// listed and sorted whole on every request before the cap applied. The Cline CLI's
    /// directory alike.
    #[test]
    fn a_rules_directory_past_the_entry_cap_is_left_out_with_a_warning() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        let many = r.join("many");
        std::fs::create_dir_all(&many).unwrap();
        for i in 0..20_000 {
            std::fs::write(many.join(format!("{i:05}.md")), "rule").unwrap();
        }
        for (at, name) in [(".clinerules", ".clinerules"), (".cline/rules", "rules")] {
            std::fs::create_dir_all(r.join(at).parent().unwrap()).unwrap();
            std::fs::rename(&many, r.join(at)).unwrap();
            let mut reader = Reader::new();
            let s = sections(r, &none(), &[], &mut reader);
            assert!(s.is_empty(), "{at}: {}", s.join("\n").len());
            let w = reader.warnings.join("\n");
            assert!(w.contains(&format!("{name}: more than 10,000 entries")), "{at}: {w}");
            std::fs::rename(r.join(at), &many).unwrap();
        }
    }

    /// The cap bounds the reading, not only what is kept: nothing past one entry more is read,
    /// however many there are.
    #[test]
    fn the_entry_cap_reads_one_entry_past_it_and_no_further() {
        let mut read = 0;
        assert!(at_most((0..).inspect(|_| read += 1), 10_000).is_none());
        assert_eq!(read, 10_001);
        assert_eq!(at_most(0..10_000, 10_000).map(|v| v.len()), Some(10_000));
    }

    #[test]
    fn a_clinerules_file_uses_its_body_and_its_conditionals() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        write(r, ".clinerules", "---\npaths: [\"src/**\"]\n---\n\nUse tabs.\n");
        assert!(sections(r, &none(), &[], &mut Reader::new()).is_empty(), "no path evidence: not applied");
        let s = sections(r, &none(), &["src/a.rs".into()], &mut Reader::new());
        assert_eq!(s.len(), 1);
        assert!(s[0].starts_with("# .clinerules\n\nThe following is provided by a root-level .clinerules file"));
        assert!(s[0].ends_with(")\n\nUse tabs."), "{}", s[0]);
    }

    #[test]
    fn a_frontmatter_that_does_not_parse_is_sent_whole() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        write(r, ".clinerules/x.md", "---\npaths: [src/**\n---\nScoped rule.");
        let s = sections(r, &none(), &[], &mut Reader::new());
        assert!(s[0].ends_with("\n\n.clinerules/x.md\n---\npaths: [src/**\n---\nScoped rule."), "{}", s[0]);
    }

    #[test]
    fn cursor_windsurf_and_agents_files_in_clines_order() {
        // A workspace whose own name is not hidden (as a temporary directory's `.tmpXXXX` is):
        // Cline's listFiles enters hidden directories only below a hidden one.
        let d = tempfile::tempdir().unwrap();
        let r = &d.path().join("ws");
        write(r, ".cursorrules", "cursor file");
        write(r, ".cursor/rules/a.mdc", "---\ndescription: x\nglobs: src/*\nalwaysApply: false\n---\ncursor dir");
        write(r, ".cursor/rules/skip.md", "not mdc");
        write(r, ".cursor/rules/scoped.mdc", "---\npaths: [\"**\"]\n---\nnever: no paths for cursor rules");
        write(r, ".windsurfrules", "windsurf");
        write(r, "AGENTS.md", "top agents");
        write(r, "pkg/agents.md", "nested agents");
        write(r, "node_modules/m/AGENTS.md", "not searched");
        write(r, ".hidden/AGENTS.md", "not searched");
        let s = sections(r, &none(), &["src/a".into()], &mut Reader::new());
        let heads: Vec<&str> = s.iter().map(|x| x.lines().next().unwrap()).collect();
        assert_eq!(heads, ["# .cursorrules", "# .cursor/rules", "# .windsurfrules", "# AGENTS.md"]);
        assert!(s[1].ends_with("\n\n.cursor/rules/a.mdc\ncursor dir"), "{}", s[1]);
        assert!(s[3].ends_with("\n\n## AGENTS.md\n\ntop agents\n\n## pkg/agents.md\n\nnested agents"), "{}", s[3]);
    }

    #[test]
    fn rules_reached_through_links_inside_the_workspace_are_read_as_cline_reads_them() {
        let d = tempfile::tempdir().unwrap();
        let r = &d.path().join("ws");
        write(r, "CLAUDE.md", "shared agents");
        std::os::unix::fs::symlink("CLAUDE.md", r.join("AGENTS.md")).unwrap();
        write(r, "sub/AGENTS.md", "sub agents");
        write(r, "shared-rules/style.md", "style rule");
        std::os::unix::fs::symlink("shared-rules", r.join(".clinerules")).unwrap();
        write(r, "cursor-rules/a.mdc", "cursor rule");
        std::fs::create_dir(r.join(".cursor")).unwrap();
        std::os::unix::fs::symlink("../cursor-rules", r.join(".cursor/rules")).unwrap();
        let mut reader = Reader::new();
        let s = sections(r, &none(), &[], &mut reader);
        let heads: Vec<&str> = s.iter().map(|x| x.lines().next().unwrap()).collect();
        assert_eq!(heads, ["# .clinerules/", "# .cursor/rules", "# AGENTS.md"], "{s:?}");
        assert!(s[0].ends_with("\n\n.clinerules/style.md\nstyle rule"), "{}", s[0]);
        assert!(s[1].ends_with("cursor rule"), "{}", s[1]);
        assert!(s[2].ends_with("\n\n## AGENTS.md\n\nshared agents\n\n## sub/AGENTS.md\n\nsub agents"), "{}", s[2]);
        assert!(reader.warnings.is_empty(), "{:?}", reader.warnings);
    }

    #[test]
    fn a_rules_directory_linked_outside_or_to_the_root_is_not_walked_and_a_link_to_an_ignored_file_is_not_sent() {
        let d = tempfile::tempdir().unwrap();
        let r = &d.path().join("ws");
        write(&d.path().join("outside"), "a.md", "OUTSIDE RULE");
        write(r, ".env", "SECRET=1");
        write(r, ".clineignore", ".env\n");
        std::os::unix::fs::symlink(d.path().join("outside"), r.join(".clinerules")).unwrap();
        std::fs::create_dir(r.join(".cursor")).unwrap();
        std::os::unix::fs::symlink("..", r.join(".cursor/rules")).unwrap();
        std::os::unix::fs::symlink(".env", r.join("AGENTS.md")).unwrap();
        let mut reader = Reader::new();
        let s = sections(r, &none(), &[], &mut reader);
        assert!(s.is_empty(), "{s:?}");
        let w = reader.warnings.join("\n");
        assert_eq!(w.matches("rules directory").count(), 2, "{w}");
        assert!(w.contains("AGENTS.md leads to a file .clineignore blocks"), "{w}");
    }

    #[test]
    fn with_a_clineignore_that_cannot_be_applied_no_linked_rule_file_is_sent() {
        // Every path is then blocked, the link's own name included: "blocked by its own name,
        // still sent" would send `.env` by the name AGENTS.md.
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        write(r, ".env", "SECRET=1");
        write(r, ".clinerules", "plain rule");
        std::fs::create_dir(r.join(".clineignore")).unwrap();
        std::os::unix::fs::symlink(".env", r.join("AGENTS.md")).unwrap();
        let mut reader = Reader::new();
        let s = sections(r, &none(), &[], &mut reader).join("\n");
        assert!(!s.contains("SECRET") && s.contains("plain rule"), "{s}");
        assert!(
            reader.warnings.join("\n").contains("AGENTS.md leads to a file .clineignore blocks"),
            "{:?}",
            reader.warnings
        );
    }

    #[test]
    fn a_nested_agents_md_is_found_breadth_first_past_a_large_sibling_tree() {
        let d = tempfile::tempdir().unwrap();
        let r = &d.path().join("ws");
        write(r, "AGENTS.md", "top");
        for i in 0..600 {
            write(r, &format!("apps/web/src/f{i:03}.ts"), "x");
        }
        write(r, "packages/api/AGENTS.md", "api");
        let s = sections(r, &none(), &[], &mut Reader::new());
        assert_eq!(s.len(), 1, "{s:?}");
        assert!(s[0].ends_with("\n\n## AGENTS.md\n\ntop\n\n## packages/api/AGENTS.md\n\napi"), "{}", s[0]);
    }

    #[test]
    fn agents_md_is_only_searched_when_one_is_at_the_top() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "pkg/AGENTS.md", "nested only");
        assert!(sections(d.path(), &none(), &[], &mut Reader::new()).is_empty());
    }

    #[test]
    fn global_dirs_then_rules_files_then_the_workspace_and_no_rules_keeps_only_rules_files() {
        let d = tempfile::tempdir().unwrap();
        let (g, r) = (d.path().join("global"), d.path().join("ws"));
        write(&g, "style.md", "global style");
        write(d.path(), ".agents/AGENTS.md", " everywhere \n");
        write(&r, ".clinerules/local.md", "local");
        write(d.path(), "extra.md", "extra rule");
        let extra = d.path().join("extra.md");
        let agents = d.path().join(".agents/AGENTS.md");
        let src = Sources {
            global_dirs: vec![(g.clone(), Layout::Extension)],
            global_agents: Some(agents.clone()),
            extra_files: vec![extra.clone()],
            no_rules: false,
        };
        let s = sections(&r, &src, &[], &mut Reader::new());
        assert_eq!(s.len(), 4);
        assert_eq!(s[0], format!("# .clinerules/\n\nThe following is provided by a global .clinerules/ directory, located at {}, where the user has specified instructions for all working directories:\n\nstyle.md\nglobal style", posix(&g)));
        assert_eq!(s[1], format!("# AGENTS.md\n\nThe following is provided by a global AGENTS.md file, located at {}, where the user has specified instructions for all working directories:\n\neverywhere", posix(&agents)));
        assert!(s[2].starts_with("# --rules\n") && s[2].ends_with(&format!("{}\nextra rule", posix(&extra))));
        assert!(s[3].starts_with("# .clinerules/\n"));
        let s = sections(&r, &Sources { no_rules: true, ..src }, &[], &mut Reader::new());
        assert_eq!(s.len(), 1);
        assert!(s[0].starts_with("# --rules\n"));
    }

    /// A project set up for the Cline CLI keeps its rules in `.cline/rules/`: they follow
    /// `.clinerules`, Markdown and text files only, conditionals applied.
    #[test]
    fn the_cline_clis_rules_directory_follows_clinerules() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        write(r, ".clinerules/a.md", "classic");
        write(r, ".cline/rules/b.md", "cli rule");
        write(r, ".cline/rules/c.TXT", "text rule");
        write(r, ".cline/rules/sub/d.md", "not at the top: the CLI leaves it out");
        write(r, ".cline/rules/notes.json", "{}");
        write(r, ".cline/rules/docs.md", "---\npaths: [\"docs/**\"]\n---\nDocs rule.");
        write(r, ".cline/mcp.json", "{}");
        write(r, ".windsurfrules", "wind");
        let cwd = posix(r);
        let s = sections(r, &none(), &[], &mut Reader::new());
        assert_eq!(s.len(), 3, "{s:?}");
        assert!(s[0].starts_with("# .clinerules/\n"));
        assert_eq!(
            s[1],
            format!("# .cline/rules/\n\nThe following is provided by a root-level .cline/rules/ directory where the user has specified instructions for this working directory ({cwd})\n\n.cline/rules/b.md\ncli rule\n\n.cline/rules/c.TXT\ntext rule")
        );
        assert!(s[2].starts_with("# .windsurfrules\n"));
        let s = sections(r, &none(), &["docs/a.md".to_string()], &mut Reader::new());
        assert!(s[1].ends_with("\n\n.cline/rules/docs.md\nDocs rule."), "{}", s[1]);
        // The global `~/.cline/rules` is read the same way.
        let src = Sources { global_dirs: vec![(r.join(".cline/rules"), Layout::Cli)], ..Sources::default() };
        let s = sections(&r.join(".clinerules"), &src, &[], &mut Reader::new());
        assert!(s[0].ends_with("\n\nb.md\ncli rule\n\nc.TXT\ntext rule"), "{}", s[0]);
    }

    /// A rule the Cline CLI turns off (`disabled: true`, `enabled: false`) or refuses (a
    /// `disabled` that is no boolean, no body) is not sent from its directories, the refused
    /// ones named in a warning; one whose frontmatter this reader cannot read is sent without
    /// it, and said to be; `.clinerules/` files, which the extension reads, keep theirs.
    #[test]
    fn the_cline_clis_rules_that_it_turns_off_or_refuses_are_not_sent() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        write(r, ".clinerules/off.md", "---\ndisabled: true\n---\nthe extension reads it");
        write(r, ".cline/rules/a.md", "---\nname: kept\ndisabled: false\n---\nkept rule");
        write(r, ".cline/rules/b.md", "---\ndisabled: true\n---\nturned off");
        write(r, ".cline/rules/c.md", "---\nenabled: false\n---\nturned off too");
        write(r, ".cline/rules/d.md", "---\ndisabled: yes\n---\nrefused");
        write(r, ".cline/rules/e.md", "---\ntags:\n  - name: a\n---\nsent without what is not read here");
        write(r, ".cline/rules/f.md", "---\ndescription: nothing else\n---\n");
        let mut warn = Reader::new();
        let s = sections(r, &none(), &[], &mut warn);
        assert_eq!(s.len(), 2, "{s:?}");
        assert!(s[0].ends_with("off.md\nthe extension reads it"), "{}", s[0]);
        assert!(
            s[1].ends_with("\n\n.cline/rules/a.md\nkept rule\n\n.cline/rules/e.md\nsent without what is not read here"),
            "{}",
            s[1]
        );
        let refused: Vec<&String> = warn.warnings.iter().filter(|w| w.contains("not used, as the Cline CLI")).collect();
        assert_eq!(refused.len(), 2, "{:?}", warn.warnings);
        assert!(refused[0].contains("d.md") && refused[0].ends_with("Frontmatter field 'disabled' must be a boolean."));
        assert!(refused[1]
            .ends_with("f.md: not used, as the Cline CLI does not use it: Missing instructions body in rule file."));
        assert!(
            warn.warnings.iter().any(|w| w.contains("e.md: its frontmatter could not be read (")),
            "{:?}",
            warn.warnings
        );
    }

    /// In the home directory, the workspace's `.cline/rules/` is the global `~/.cline/rules`:
    /// sent once, as the global rules.
    #[test]
    fn the_home_directorys_cline_rules_are_sent_once() {
        let home = tempfile::tempdir().unwrap();
        write(home.path(), ".cline/rules/me.md", "mine");
        let src = Sources { global_dirs: vec![(home.path().join(".cline/rules"), Layout::Cli)], ..Sources::default() };
        let s = sections(home.path(), &src, &[], &mut Reader::new());
        assert_eq!(s.len(), 1, "{s:?}");
        assert!(s[0].contains("a global .clinerules/ directory") && s[0].ends_with("me.md\nmine"), "{}", s[0]);
    }

    #[test]
    fn a_cline_rules_directory_linked_outside_is_not_read() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        write(&d.path().join("outside"), "x.md", "OUTSIDE");
        std::fs::create_dir_all(ws.join(".cline")).unwrap();
        std::os::unix::fs::symlink(d.path().join("outside"), ws.join(".cline/rules")).unwrap();
        let mut reader = Reader::new();
        assert!(sections(&ws, &none(), &[], &mut reader).is_empty());
        assert!(reader.warnings.iter().any(|w| w.contains("not read")), "{:?}", reader.warnings);
    }

    #[test]
    fn an_oversized_rule_file_is_reported_not_sent() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), ".clinerules/big.md", &"x".repeat(MAX_RULE_FILE_BYTES as usize + 1));
        let mut r = Reader::new();
        assert!(sections(d.path(), &none(), &[], &mut r).is_empty());
        assert!(r.warnings[0].contains("big.md") && r.warnings[0].contains("limit"), "{:?}", r.warnings);
    }

    #[test]
    fn the_rules_together_are_bounded() {
        let d = tempfile::tempdir().unwrap();
        let chunk = "x".repeat(MAX_RULE_FILE_BYTES as usize - 1);
        for i in 0..5 {
            write(d.path(), &format!(".clinerules/{i}.md"), &chunk);
        }
        let mut r = Reader::new();
        let s = sections(d.path(), &none(), &[], &mut r);
        assert_eq!(s[0].matches(&chunk).count(), 4);
        assert!(r.warnings[0].contains("4.md") && r.warnings[0].contains("together"), "{:?}", r.warnings);
    }

    #[test]
    fn a_workspace_rule_symlinked_outside_is_not_sent() {
        let d = tempfile::tempdir().unwrap();
        let (ws, secret) = (d.path().join("ws"), d.path().join("id_rsa"));
        std::fs::create_dir(&ws).unwrap();
        std::fs::write(&secret, "PRIVATE KEY").unwrap();
        std::os::unix::fs::symlink(&secret, ws.join("AGENTS.md")).unwrap();
        std::os::unix::fs::symlink(&secret, ws.join(".cursorrules")).unwrap();
        std::os::unix::fs::symlink(&secret, ws.join(".clinerules")).unwrap();
        write(&ws, "inside.md", "fine");
        std::os::unix::fs::symlink(ws.join("inside.md"), ws.join(".windsurfrules")).unwrap();
        let mut r = Reader::new();
        let s = sections(&ws, &none(), &[], &mut r);
        assert!(!s.iter().any(|x| x.contains("PRIVATE KEY")), "{s:?}");
        assert_eq!(s.len(), 1, "a link inside the workspace is fine: {s:?}");
        assert!(s[0].ends_with("\n\nfine"));
        assert!(
            r.warnings.iter().any(|w| w.contains(".cursorrules") && w.contains("outside the workspace")),
            "{:?}",
            r.warnings
        );
    }
}
