//! `search_files(path, regex, file_pattern?)`: a regex search over text files, at most 300
//! results, each `file:line: text`.

use std::path::Path;

use regex::Regex;

use crate::run::tools::fsx;

use super::{check_path, tool_error, Access, Call, Ctx, Outcome, SKIP_DIRS};

/// Most results returned.
pub const MAX_RESULTS: usize = 300;

pub(super) fn run(call: &Call, ctx: &mut Ctx<'_>) -> Outcome {
    let path = call.param("path").unwrap_or_default();
    let pattern = call.param("regex").unwrap_or_default();
    let glob = call.param("file_pattern");
    ctx.term
        .tool("search_files", &format!("/{pattern}/ in {path}{}", glob.map(|g| format!(" ({g})")).unwrap_or_default()));
    let re = match Regex::new(pattern) {
        Ok(r) => r,
        Err(e) => {
            let msg = format!("Invalid regex {pattern:?}: {e}");
            ctx.term.outcome(false, "invalid regex");
            return Outcome::Failure { text: tool_error(&msg), mistake: true };
        }
    };
    let r = match check_path(ctx, path, Access::Read, &format!("Search {path}"), None) {
        Ok(r) => r,
        Err(o) => return o,
    };
    let ignored = crate::run::project::ignore::ClineIgnore::load(ctx.ws.root());
    let (hits, truncated) = search_where(&r.abs, &re, glob, MAX_RESULTS, &|p| ignored.allows_path(p));
    ctx.term.outcome(true, &format!("{} results{}", hits.len(), if truncated { " (truncated)" } else { "" }));
    let mut s = match hits.len() {
        0 => "Found 0 results.".to_string(),
        1 => "Found 1 result.\n\n".to_string(),
        n if truncated => {
            format!("Showing first {n} results. Use a more specific search if necessary.\n\n")
        }
        n => format!("Found {n} results.\n\n"),
    };
    s.push_str(&hits.join("\n"));
    Outcome::Success(s)
}

/// Searches files under `root` (or `root` itself if it is a file). The walk never follows a
/// symlink (a link inside the workspace may point anywhere) and reads only regular files of at
/// most [`fsx::MAX_FILE_BYTES`]; `root` itself is already resolved and confined by the caller.
#[cfg(test)]
pub(crate) fn search(root: &Path, re: &Regex, glob: Option<&str>, max: usize) -> (Vec<String>, bool) {
    search_where(root, re, glob, max, &|_| true)
}

/// [`search`] over the files `allowed` accepts (`.clineignore` leaves files out).
pub(crate) fn search_where(
    root: &Path,
    re: &Regex,
    glob: Option<&str>,
    max: usize,
    allowed: &dyn Fn(&Path) -> bool,
) -> (Vec<String>, bool) {
    let mut hits = Vec::new();
    let Ok(meta) = std::fs::metadata(root) else {
        return (hits, false);
    };
    let base = if meta.is_file() { root.parent().unwrap_or(root) } else { root };
    let mut stack = vec![(root.to_path_buf(), meta.is_dir())];
    while let Some((p, is_dir)) = stack.pop() {
        if is_dir {
            let Ok(rd) = std::fs::read_dir(&p) else {
                continue;
            };
            // `file_type()` is the entry's own type: a symlink is a symlink, never its target.
            let mut kids: Vec<_> = rd
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_type().ok().map(|t| (e.path(), t)))
                .filter(|(_, t)| t.is_dir() || t.is_file())
                .map(|(k, t)| (k, t.is_dir()))
                .collect();
            kids.sort();
            for (k, dir) in kids.into_iter().rev() {
                let name = k.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                if dir && SKIP_DIRS.contains(&name.as_str()) {
                    continue;
                }
                stack.push((k, dir));
            }
            continue;
        }
        let rel = p.strip_prefix(base).unwrap_or(&p).to_string_lossy().into_owned();
        if let Some(g) = glob {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if !glob_match(g, if g.contains('/') { &rel } else { &name }) {
                continue;
            }
        }
        if !allowed(&p) {
            continue;
        }
        let Ok(bytes) = fsx::read_regular(&p, fsx::MAX_FILE_BYTES) else {
            continue;
        };
        if bytes[..bytes.len().min(8192)].contains(&0) {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        for (i, line) in text.lines().enumerate() {
            if re.is_match(line) {
                if hits.len() >= max {
                    return (hits, true);
                }
                let line: String = line.trim().chars().take(300).collect();
                hits.push(format!("{rel}:{}: {line}", i + 1));
            }
        }
    }
    (hits, false)
}

/// A small glob: `*` (within a path segment), `**` (any depth), `?`, and `{a,b}` alternatives.
pub(crate) fn glob_match(glob: &str, s: &str) -> bool {
    if let (Some(open), Some(close)) = (glob.find('{'), glob.find('}')) {
        if open < close {
            return glob[open + 1..close]
                .split(',')
                .any(|alt| glob_match(&format!("{}{alt}{}", &glob[..open], &glob[close + 1..]), s));
        }
    }
    fn m(g: &[u8], s: &[u8]) -> bool {
        match (g.first(), s.first()) {
            (None, None) => true,
            (Some(b'*'), _) if g.get(1) == Some(&b'*') => {
                let rest = g[2..].strip_prefix(b"/").unwrap_or(&g[2..]);
                (0..=s.len()).any(|i| m(rest, &s[i..]))
            }
            (Some(b'*'), _) => (0..=s.len()).take_while(|&i| i == 0 || s[i - 1] != b'/').any(|i| m(&g[1..], &s[i..])),
            (Some(b'?'), Some(c)) if *c != b'/' => m(&g[1..], &s[1..]),
            (Some(a), Some(b)) if a == b => m(&g[1..], &s[1..]),
            _ => false,
        }
    }
    m(glob.as_bytes(), s.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("*.rs", "main.rs"));
        assert!(!glob_match("*.rs", "main.py"));
        assert!(glob_match("*.{ts,tsx}", "a.tsx"));
        assert!(glob_match("src/**/*.rs", "src/a/b/c.rs"));
        assert!(glob_match("src/**/*.rs", "src/c.rs"));
        assert!(!glob_match("src/*.rs", "src/a/c.rs"));
        assert!(glob_match("?.md", "a.md"));
    }

    #[test]
    fn never_follows_symlinks_nor_opens_fifos() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "SECRET-OUTSIDE\n").unwrap();
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("mine.txt"), "SECRET-INSIDE\n").unwrap();
        std::os::unix::fs::symlink(outside.path(), d.path().join("dirlink")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.txt"), d.path().join("filelink")).unwrap();
        let fifo = std::ffi::CString::new(d.path().join("pipe").to_str().unwrap()).unwrap();
        // SAFETY: mkfifo takes a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let re = Regex::new("SECRET").unwrap();
        let (h, _) = search(d.path(), &re, None, 300);
        assert_eq!(h, ["mine.txt:1: SECRET-INSIDE"]);
        let (h, _) = search(&d.path().join("pipe"), &re, None, 300);
        assert!(h.is_empty());
    }

    #[test]
    fn finds_matches_with_file_and_line() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("src")).unwrap();
        std::fs::create_dir_all(d.path().join("target")).unwrap();
        std::fs::write(d.path().join("src/a.rs"), "fn main() {\n    todo!()\n}\n").unwrap();
        std::fs::write(d.path().join("src/b.py"), "# todo!() here\n").unwrap();
        std::fs::write(d.path().join("target/x.rs"), "todo!()\n").unwrap();
        let re = Regex::new(r"todo!\(\)").unwrap();
        let (h, t) = search(d.path(), &re, Some("*.rs"), 300);
        assert_eq!(h, ["src/a.rs:2: todo!()"]);
        assert!(!t);
        let (h, _) = search(d.path(), &re, None, 300);
        assert_eq!(h.len(), 2);
        let (h, t) = search(d.path(), &re, None, 1);
        assert_eq!(h.len(), 1);
        assert!(t);
    }
}
