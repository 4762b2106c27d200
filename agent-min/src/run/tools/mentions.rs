//! Cline's `parseMentions` (`core/mentions/index.ts`, with `shared/context-mentions.ts`'s
//! `mentionRegex`): the `@` mentions in a person's words — the task, later prompts, feedback,
//! answers, the guidance at the mistake limit — replaced by Cline's short texts, and what they
//! stand for added after the block that holds the words:
//!
//! - `@/path/file` (or `@"/path with spaces/file"`): `<file_content path="…">` with the file's
//!   text, as `read_file` reads it (Cline's 20 MB and 400 KB rules), or Cline's
//!   `(Binary file, unable to display content)` (isbinaryfile's test of the first 512 bytes);
//! - `@/dir/`: `<folder_content path="…">`, the directory's entries and the text of its files
//!   (not recursive, binary files left out);
//! - `@git-changes`: `<git_working_state>`, `git status --short` and `git diff HEAD`;
//! - a commit hash (`@abc1234`, 7 to 40 hex digits): `<git_commit hash="…">`, its `git show`.
//!
//! Unlike Cline: a mention resolving outside the workspace (`@/../x`, `@//etc/x`, a link out) is
//! refused; a file `.clineignore` blocks is refused (and its content left out of a folder); git
//! runs read-only as `repo_git.rs` runs it, never a command of the repository's config, confined
//! to the workspace, its output bounded. `@problems`, `@terminal` and URLs need an
//! editor or a browser: they stay as written.
//!
//! Only the person's words go through here, never a tool's result or a file's content.

use std::path::Path;

use super::clineignore::{self, ClineIgnore};
use super::paths::Workspace;
use super::read;
use super::repo_git::Git;
use crate::run::ui::redact;

/// The person's words with their mentions expanded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Expansion {
    /// The words, each mention replaced by Cline's short text.
    pub words: String,
    /// What the mentions stand for (`\n\n<file_content …>…</file_content>`, one block per
    /// mention, in the order of first mention): it goes right after the block holding the words
    /// (after `</task>`, `</feedback>`, `</answer>`), as Cline appends it to that text block.
    pub blocks: String,
    /// The files whose text the mentions added: (the path as the mention gave it, the file).
    pub files: Vec<(String, std::path::PathBuf)>,
}

/// Expands the mentions of `text`, the person's words, in the workspace `root`.
pub(crate) fn expand(root: &Path, text: &str) -> Expansion {
    expand_with(root, text, &[])
}

/// Cline's text for a file whose binary content is left out.
pub(crate) const BINARY_FILE: &str = "(Binary file, unable to display content)";

/// [`expand`], with files an editor sent along with the words: (their name, their text). A file
/// mention naming one (`@/a.rs` for `a.rs`) takes that text rather than the file on disk (the
/// editor's buffer may be unsaved); those not mentioned follow the mentions' blocks, in order.
pub(crate) fn expand_with(root: &Path, text: &str, given: &[(String, String)]) -> Expansion {
    let found = find(text);
    if found.is_empty() && given.is_empty() {
        return Expansion { words: text.to_string(), ..Default::default() };
    }
    let mut used = vec![false; given.len()];
    let mut words = String::with_capacity(text.len());
    let mut mentions: Vec<&str> = Vec::new();
    let mut last = 0;
    for (at, end) in found {
        let mention = &text[at + 1..end];
        words.push_str(&text[last..at]);
        words.push_str(&replacement(mention).unwrap_or_else(|| text[at..end].to_string()));
        last = end;
        if !mentions.contains(&mention) {
            mentions.push(mention);
        }
    }
    words.push_str(&text[last..]);
    let mut blocks = String::new();
    let mut git: Option<Option<Git>> = None;
    let mut files = Vec::new();
    for mention in mentions {
        // Cline's guard: a bare `/` would be the whole workspace.
        if mention == "/" {
            continue;
        }
        if is_file_mention(mention) {
            let path = file_path(mention);
            let tag = if mention.ends_with('/') { "folder_content" } else { "file_content" };
            let sent = (tag == "file_content").then(|| given.iter().position(|(name, _)| *name == path)).flatten();
            if let Some(i) = sent {
                used[i] = true;
                files.push((path.clone(), root.join(&path)));
                blocks.push_str(&file_block(&path, &given[i].1));
                continue;
            }
            let content = match file_or_folder(root, &path) {
                Ok(content) => {
                    if tag == "file_content" {
                        files.push((path.clone(), root.join(&path)));
                    }
                    content
                }
                Err(e) => format!("Error fetching content: {e}"),
            };
            blocks.push_str(&content_block(tag, &path, &content));
        } else if mention == "git-changes" {
            let state = working_state(git.get_or_insert_with(|| Git::find(root)).as_mut());
            blocks.push_str(&format!("\n\n<git_working_state>\n{state}\n</git_working_state>"));
        } else if is_hash(mention) {
            let info = commit_info(git.get_or_insert_with(|| Git::find(root)).as_mut(), mention);
            blocks.push_str(&format!("\n\n<git_commit hash=\"{mention}\">\n{info}\n</git_commit>"));
        }
    }
    for ((name, content), _) in given.iter().zip(used).filter(|(_, used)| !used) {
        blocks.push_str(&file_block(name, content));
    }
    Expansion { words, blocks: redact::apply(&blocks).into_owned(), files }
}

/// What a mentioned file adds after the words: `\n\n<file_content path="…">…</file_content>`.
pub(crate) fn file_block(path: &str, content: &str) -> String {
    content_block("file_content", path, content)
}

/// What a mentioned file or folder adds after the words: `\n\n<TAG path="…">…</TAG>`.
fn content_block(tag: &str, path: &str, content: &str) -> String {
    format!("\n\n<{tag} path=\"{path}\">\n{content}\n</{tag}>")
}

/// Cline's text in place of a mention of the file `shown`.
pub(crate) fn file_words(shown: &str) -> String {
    content_words(shown, "file")
}

/// Cline's text in place of a mention of the file or folder (`what`) `shown`.
fn content_words(shown: &str, what: &str) -> String {
    format!("'{shown}' (see below for {what} content)")
}

/// The mention of the workspace's file `rel` (`@/rel`, or `@"/rel"` for a path with spaces) to
/// go before `rest`, if the mention syntax reads exactly that back there. Only `rest`'s leading
/// `.,;:!?()` and the character after them matter (the regex's closing lookahead).
pub(crate) fn mention_of(rel: &str, rest: &str) -> Option<String> {
    let plain = format!("@/{rel}");
    let quoted = format!("@\"/{rel}\"");
    [plain, quoted].into_iter().find(|m| {
        let text = format!("{m}{rest}");
        find(&text).first() == Some(&(0, m.len())) && file_path(&text[1..m.len()]) == rel
    })
}

/// Cline's replacement of one mention (without its `@`); `None`: it stays as written (URLs,
/// `@problems`, `@terminal`: not there without an editor or a browser).
fn replacement(mention: &str) -> Option<String> {
    if mention.starts_with("http") {
        return None;
    }
    if is_file_mention(mention) {
        let path = file_path(mention);
        let shown = match parse_workspace_mention(mention) {
            Some((hint, _)) => format!("{hint}:{path}"),
            None => path.clone(),
        };
        let what = if path.ends_with('/') { "folder" } else { "file" };
        return Some(content_words(&shown, what));
    }
    match mention {
        "git-changes" => Some("Working directory changes (see below for details)".to_string()),
        m if is_hash(m) => Some(format!("Git commit '{m}' (see below for commit info)")),
        _ => None,
    }
}

// ---- Cline's mentionRegex ----

/// JavaScript's `\s`.
fn js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
    )
}

/// JavaScript's `\w` (without the `u` flag).
fn word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The end of the run of `class` characters from `at`.
fn run_end(text: &str, at: usize, class: impl Fn(char) -> bool) -> usize {
    at + text[at..].chars().take_while(|&c| class(c)).map(char::len_utf8).sum::<usize>()
}

/// Where the regex's closing `(?=[.,;:!?()]*(?=[\s\r\n]|$))` holds, at each byte offset of
/// `text`: found once, from the end, so that trying a match at every offset stays linear.
fn closing(text: &str) -> Vec<bool> {
    let mut at = vec![false; text.len() + 1];
    at[text.len()] = true;
    for (i, c) in text.char_indices().rev() {
        at[i] = js_space(c) || (".,;:!?()".contains(c) && at[i + c.len_utf8()]);
    }
    at
}

/// The regex's closing lookahead at `at` ([`closing`] of the text).
fn closes(cl: &[bool], at: usize) -> bool {
    cl[at]
}

/// `\b` at `at`, after a word character.
fn boundary(text: &str, at: usize) -> bool {
    !text[at..].chars().next().is_some_and(word)
}

/// A lazy `[^\s]{min,}?` from `at` and the closing lookahead: the end of the shortest match.
fn lazy_non_space(text: &str, cl: &[bool], at: usize, min: usize) -> Option<usize> {
    let (mut end, mut n) = (at, 0);
    let mut chars = text[at..].chars();
    loop {
        if n >= min && closes(cl, end) {
            return Some(end);
        }
        match chars.next() {
            Some(c) if !js_space(c) => (end, n) = (end + c.len_utf8(), n + 1),
            _ => return None,
        }
    }
}

/// `[^"]*?"` from `at` and the closing lookahead.
fn quoted(text: &str, cl: &[bool], at: usize) -> Option<usize> {
    let end = at + text[at..].find('"')? + 1;
    closes(cl, end).then_some(end)
}

/// The end of a mention whose `@` is just before `p`: Cline's alternatives, in its order.
fn match_at(text: &str, cl: &[bool], p: usize) -> Option<usize> {
    let rest = &text[p..];
    // `[\w-]+:/[^\s]*?` and `[\w-]+:"\/[^"]*?"` (the run cannot give back: `:` is not in it).
    let w = run_end(text, p, |c| word(c) || c == '-');
    if w > p {
        if text[w..].starts_with(":/") {
            if let Some(e) = lazy_non_space(text, cl, w + 2, 0) {
                return Some(e);
            }
        }
        if text[w..].starts_with(":\"/") {
            if let Some(e) = quoted(text, cl, w + 3) {
                return Some(e);
            }
        }
    }
    // `/[^\s]*?`
    if rest.starts_with('/') {
        if let Some(e) = lazy_non_space(text, cl, p + 1, 0) {
            return Some(e);
        }
    }
    // `"\/[^"]*?"`
    if rest.starts_with("\"/") {
        if let Some(e) = quoted(text, cl, p + 2) {
            return Some(e);
        }
    }
    // `(?:\w+:\/\/)[^\s]+?`
    let w = run_end(text, p, word);
    if w > p && text[w..].starts_with("://") {
        if let Some(e) = lazy_non_space(text, cl, w + 3, 1) {
            return Some(e);
        }
    }
    // `[a-f0-9]{7,40}\b`, giving back digits as a greedy count does.
    let hex = rest.bytes().take(40).take_while(|b| matches!(b, b'a'..=b'f' | b'0'..=b'9')).count();
    for len in (7..=hex).rev() {
        if boundary(text, p + len) && closes(cl, p + len) {
            return Some(p + len);
        }
    }
    // `problems\b`, `terminal\b`, `git-changes\b`
    ["problems", "terminal", "git-changes"]
        .into_iter()
        .filter(|k| rest.starts_with(k))
        .map(|k| p + k.len())
        .find(|&e| boundary(text, e) && closes(cl, e))
}

/// Every match of Cline's `mentionRegexGlobal` in `text`: (where its `@` is, where it ends).
fn find(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let (mut i, cl) = (0, closing(text));
    while let Some(off) = text[i..].find('@') {
        let at = i + off;
        match match_at(text, &cl, at + 1) {
            Some(end) => {
                out.push((at, end));
                i = end;
            }
            None => i = at + 1,
        }
    }
    out
}

// ---- What a mention names ----

/// A line terminator, which JavaScript's `.` does not match.
fn line_end(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// Cline's `parseWorkspaceMention`: `name:/path` or `name:"/path"` → (name, path).
fn parse_workspace_mention(mention: &str) -> Option<(&str, &str)> {
    let (hint, path) = mention.split_once(':')?;
    if hint.is_empty() || !hint.chars().all(|c| word(c) || c == '-') || path.is_empty() || path.contains(line_end) {
        return None;
    }
    if mention.contains("://") {
        return None;
    }
    let path = match path.strip_prefix('"').and_then(|p| p.strip_suffix('"')) {
        Some(inner) => inner,
        None => path,
    };
    Some((hint, path))
}

/// Cline's `isFileMention`.
fn is_file_mention(mention: &str) -> bool {
    parse_workspace_mention(mention).is_some() || mention.starts_with('/') || mention.starts_with("\"/")
}

/// Cline's `getFilePathFromMention`: without quotes and the leading `/`.
fn file_path(mention: &str) -> String {
    if let Some((_, path)) = parse_workspace_mention(mention) {
        return path.strip_prefix('/').unwrap_or(path).to_string();
    }
    let path = match mention.strip_prefix('"').and_then(|p| p.strip_suffix('"')) {
        Some(inner) if !inner.contains(line_end) => inner,
        _ => mention,
    };
    path.get(1..).unwrap_or("").to_string()
}

/// A commit hash as Cline tells one (`/^[a-f0-9]{7,40}$/`).
fn is_hash(mention: &str) -> bool {
    (7..=40).contains(&mention.len()) && mention.bytes().all(|b| matches!(b, b'a'..=b'f' | b'0'..=b'9'))
}

/// isbinaryfile's test (the package Cline asks) on a file's first 512 bytes: NUL bytes, a PDF,
/// or over 10% of bytes that are neither text nor UTF-8. (Its protocol-buffer test is left out.)
fn is_binary(bytes: &[u8]) -> bool {
    let b = &bytes[..bytes.len().min(512)];
    let n = b.len();
    if n == 0 {
        return false;
    }
    let starts = |p: &[u8]| b.starts_with(p);
    if starts(&[0xef, 0xbb, 0xbf])
        || starts(&[0, 0, 0xfe, 0xff])
        || starts(&[0xff, 0xfe, 0, 0])
        || starts(&[0x84, 0x31, 0x95, 0x33])
    {
        return false;
    }
    if starts(b"%PDF-") {
        return true;
    }
    if starts(&[0xfe, 0xff]) || starts(&[0xff, 0xfe]) {
        return false;
    }
    let cont = |i: usize| b.get(i).is_some_and(|&c| (0x80..=0xbf).contains(&c));
    let mut suspicious = 0;
    let mut i = 0;
    while i < n {
        let c = b[i];
        if c == 0 {
            return true;
        }
        if (!(7..=14).contains(&c)) && !(32..=127).contains(&c) {
            if (0xc0..=0xdf).contains(&c) && i + 1 < n {
                i += 1;
                if cont(i) {
                    i += 1;
                    continue;
                }
            } else if (0xe0..=0xef).contains(&c) && i + 2 < n {
                i += 1;
                if cont(i) && cont(i + 1) {
                    i += 2;
                    continue;
                }
            } else if (0xf0..=0xf7).contains(&c) && i + 3 < n {
                i += 1;
                if cont(i) && cont(i + 1) && cont(i + 2) {
                    i += 3;
                    continue;
                }
            }
            suspicious += 1;
            if i >= 32 && suspicious * 100 > 10 * n {
                return true;
            }
        }
        i += 1;
    }
    suspicious * 100 > 10 * n
}

/// Node's `path.join(dir, name)` of a mention's folder and an entry, with `/`.
fn join(dir: &str, name: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in dir.split('/').chain([name]) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    }
}

/// Cline's `getFileOrFolderContent` of `path` (relative to the workspace): the file's text, or
/// the folder's listing and its files' texts; `Err` is what follows `Error fetching content: `.
fn file_or_folder(root: &Path, path: &str) -> Result<String, String> {
    let failed = |why: String| format!("Failed to access path \"{path}\": {why}");
    // As written (`keys/` is a directory to `.clineignore`), and below as a directory if it is one.
    if let Some(blocked) = clineignore::path_refusal(root, path) {
        return Err(blocked.text);
    }
    let ws = Workspace::new(root).map_err(|e| failed(e.to_string()))?;
    let r = ws.resolve(path);
    if let Some(e) = r.error {
        return Err(failed(e));
    }
    if !r.inside {
        return Err(failed(format!(
            "it resolves outside the workspace ({}), and agent-min reads mentioned files only inside it",
            ws.root().display()
        )));
    }
    let meta = std::fs::metadata(&r.abs).map_err(|e| failed(super::fsx::node_error(&e, "stat", &r.abs)))?;
    if meta.is_file() {
        let bytes = read::read_bytes(&r.abs).map_err(failed)?;
        if is_binary(&bytes) {
            return Ok(BINARY_FILE.to_string());
        }
        return read::text_of(&r.abs, bytes).map_err(failed);
    }
    if !meta.is_dir() {
        return Ok(format!("(Failed to read contents of {path})"));
    }
    let trimmed = path.trim_end_matches('/');
    if !trimmed.is_empty() {
        if let Some(blocked) = clineignore::path_refusal(root, &format!("{trimmed}/")) {
            return Err(blocked.text);
        }
    }
    let mut entries: Vec<(std::ffi::OsString, std::fs::FileType)> = std::fs::read_dir(&r.abs)
        .map_err(|e| failed(super::fsx::node_error(&e, "scandir", &r.abs)))?
        .filter_map(|e| e.ok().and_then(|e| Some((e.file_name(), e.file_type().ok()?))))
        .collect();
    // libuv sorts a directory's names byte-wise.
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let ig = ClineIgnore::load(ws.root());
    let names =
        entries.iter().map(|(n, t)| format!("{}{}", n.to_string_lossy(), if t.is_dir() { "/" } else { "" })).collect();
    let shown = ig.mark(&r.abs, names);
    let mut listing = String::new();
    let mut texts = Vec::new();
    for (i, ((name, kind), line)) in entries.iter().zip(shown).enumerate() {
        let prefix = if i + 1 == entries.len() { "└── " } else { "├── " };
        listing.push_str(&format!("{prefix}{line}\n"));
        let abs = r.abs.join(name);
        if !kind.is_file() || !ig.allows_path(&abs) {
            continue;
        }
        let Ok(bytes) = read::read_bytes(&abs) else { continue };
        if is_binary(&bytes) {
            continue;
        }
        if let Ok(text) = read::text_of(&abs, bytes) {
            let at = join(path, &name.to_string_lossy());
            texts.push(format!("<file_content path=\"{at}\">\n{text}\n</file_content>"));
        }
    }
    Ok(format!("{listing}\n{}", texts.join("\n\n")).trim_matches(js_space).to_string())
}

// ---- git (Cline's utils/git.ts) ----

/// Cline's `GIT_OUTPUT_LINE_LIMIT`.
const GIT_OUTPUT_LINE_LIMIT: usize = 500;

/// Cline's `truncateOutput`: the first 20% and last 80% of 500 lines.
fn truncate_output(content: &str) -> String {
    let lines: Vec<&str> = content.split('\n').collect();
    if lines.len() <= GIT_OUTPUT_LINE_LIMIT {
        return content.to_string();
    }
    let before = GIT_OUTPUT_LINE_LIMIT / 5;
    let after = GIT_OUTPUT_LINE_LIMIT - before;
    let omitted = format!("\n[...{} lines omitted...]\n", lines.len() - GIT_OUTPUT_LINE_LIMIT);
    let mut out: Vec<&str> = lines[..before].to_vec();
    out.push(&omitted);
    out.extend_from_slice(&lines[lines.len() - after..]);
    out.join("\n")
}

/// JavaScript's `trim()`.
fn js_trim(s: &str) -> &str {
    s.trim_matches(js_space)
}

/// Cline's `getWorkingState`.
fn working_state(git: Option<&mut Git>) -> String {
    let Some(git) = git else { return "Git is not installed".to_string() };
    if !git.in_repo() {
        return "Not a git repository".to_string();
    }
    let failed = |e: String| format!("Failed to get working state: {e}");
    let changed = git.run(
        "git status --porcelain -z",
        &["status", "--porcelain", "-z", "--untracked-files=all", "--ignore-submodules=all", "--", "."],
    );
    let changed = match changed {
        Ok(c) => c,
        Err(e) => return failed(e),
    };
    // `XY path`, and a rename's or copy's former path as an entry of its own.
    let (mut paths, mut entries) = (Vec::new(), changed.split('\0'));
    while let Some(entry) = entries.next() {
        if let Some(path) = entry.get(3..) {
            paths.push(path);
            if matches!(entry.as_bytes()[0], b'R' | b'C') {
                paths.extend(entries.next());
            }
        }
    }
    let specs = git.confined(&paths.join("\0"));
    let specs: Vec<&str> = specs.iter().map(String::as_str).collect();
    let status = match git
        .run("git status --short", &[&["status", "--short", "--ignore-submodules=all", "--"], &specs[..]].concat())
    {
        Ok(s) => s,
        Err(e) => return failed(e),
    };
    if js_trim(&status).is_empty() {
        return "No changes in working directory".to_string();
    }
    if !git.has_commits() {
        return format!("Working directory changes (new repository):\n\n{status}");
    }
    let args =
        [&["diff", "HEAD", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--"], &specs[..]].concat();
    match git.run("git diff HEAD", &args) {
        Ok(diff) => truncate_output(js_trim(&format!("Working directory changes:\n\n{status}\n\n{diff}"))),
        Err(e) => failed(e),
    }
}

/// Cline's `getCommitInfo`.
fn commit_info(git: Option<&mut Git>, hash: &str) -> String {
    let Some(git) = git else { return "Git is not installed".to_string() };
    if !git.in_repo() {
        return "Not a git repository".to_string();
    }
    if !git.has_commits() {
        return "Repository has no commits yet".to_string();
    }
    let failed = |e: String| format!("Failed to get commit info: {e}");
    // A commit only: `git show` of a blob or tree prints it whatever the pathspecs say
    // (a `.clineignore`d file's content).
    let commit = format!("{hash}^{{commit}}");
    if let Err(e) = git.run(&format!("git rev-parse --verify {commit}"), &["rev-parse", "--verify", "--quiet", &commit])
    {
        return failed(e);
    }
    let format = "--format=%H%n%h%n%s%n%an%n%ad%n%b";
    let shown = format!("git show --format=\"%H%n%h%n%s%n%an%n%ad%n%b\" --no-patch {hash}");
    let info = match git.run(&shown, &["show", format, "--no-patch", hash, "--"]) {
        Ok(i) => i,
        Err(e) => return failed(e),
    };
    let lines: Vec<&str> = js_trim(&info).split('\n').collect();
    let at = |i: usize| lines.get(i).copied().unwrap_or("undefined");
    let body = lines.get(5).copied().unwrap_or("");
    let changed = git
        .run("git show --name-only", &["show", "--name-only", "-z", "--format=", "--no-ext-diff", hash, "--"])
        .unwrap_or_default();
    let specs = git.confined(&changed);
    let specs: Vec<&str> = specs.iter().map(String::as_str).collect();
    let stat_args =
        [&["show", "--stat", "--format=", "--no-ext-diff", "--no-textconv", hash, "--"], &specs[..]].concat();
    let stats = match git.run(&format!("git show --stat --format=\"\" {hash}"), &stat_args) {
        Ok(s) => s,
        Err(e) => return failed(e),
    };
    let diff_args = [&["show", "--format=", "--no-ext-diff", "--no-textconv", hash, "--"], &specs[..]].concat();
    let diff = match git.run(&format!("git show --format=\"\" {hash}"), &diff_args) {
        Ok(d) => d,
        Err(e) => return failed(e),
    };
    let summary = [
        format!("Commit: {} ({})", at(1), at(0)),
        format!("Author: {}", at(3)),
        format!("Date: {}", at(4)),
        format!("\nMessage: {}", at(2)),
        if body.is_empty() { String::new() } else { format!("\nDescription:\n{body}") },
        "\nFiles Changed:".to_string(),
        js_trim(&stats).to_string(),
        "\nFull Changes:".to_string(),
    ]
    .join("\n");
    truncate_output(&format!("{summary}\n\n{}", js_trim(&diff)))
}

#[cfg(test)]
#[path = "mentions_tests.rs"]
mod tests;
