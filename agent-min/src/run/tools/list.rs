//! `list_files(path, recursive?)`: at most 200 entries, breadth first, never descending into
//! `.git`, `target` or `node_modules`.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use super::{check_path, tool_error, Access, Call, Ctx, Outcome, SKIP_DIRS};

/// Most entries returned.
pub const MAX_ENTRIES: usize = 200;

pub(super) fn run(call: &Call, ctx: &mut Ctx<'_>) -> Outcome {
    let path = call.param("path").unwrap_or_default();
    let recursive = call.param("recursive") == Some("true");
    ctx.term.tool("list_files", &format!("{path}{}", if recursive { " (recursive)" } else { "" }));
    let r = match check_path(ctx, path, Access::Read, &format!("List {path}"), None) {
        Ok(r) => r,
        Err(o) => return o,
    };
    if !r.abs.is_dir() {
        let msg = format!("{path} is not a directory.");
        ctx.term.outcome(false, &msg);
        return Outcome::Failure { text: tool_error(&msg), mistake: false };
    }
    let (entries, truncated) = list(&r.abs, recursive, MAX_ENTRIES);
    let entries = crate::run::project::ignore::ClineIgnore::load(ctx.ws.root()).mark(&r.abs, entries);
    ctx.term.outcome(true, &format!("{} entries{}", entries.len(), if truncated { " (truncated)" } else { "" }));
    Outcome::Success(format_listing(&entries, truncated))
}

/// Formats a listing as Cline does.
pub fn format_listing(entries: &[String], truncated: bool) -> String {
    if entries.is_empty() {
        return "No files found.".to_string();
    }
    let mut s = entries.join("\n");
    if truncated {
        s.push_str(
            "\n\n(File list truncated. Use list_files on specific subdirectories if you need to explore further.)",
        );
    }
    s
}

/// Lists `dir` (relative names, directories with a trailing `/`), breadth first, sorted per
/// directory. Returns (entries, whether the limit cut the listing).
pub(crate) fn list(dir: &Path, recursive: bool, max: usize) -> (Vec<String>, bool) {
    let mut out = Vec::new();
    let mut queue: VecDeque<PathBuf> = VecDeque::from([PathBuf::new()]);
    while let Some(rel) = queue.pop_front() {
        let Ok(rd) = std::fs::read_dir(dir.join(&rel)) else {
            continue;
        };
        let mut items: Vec<(String, bool)> = rd
            .filter_map(|e| e.ok())
            .map(|e| {
                let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false);
                (e.file_name().to_string_lossy().into_owned(), is_dir)
            })
            .collect();
        items.sort();
        for (name, is_dir) in items {
            if out.len() >= max {
                return (out, true);
            }
            let path = rel.join(&name);
            let shown = path.to_string_lossy().into_owned();
            if is_dir {
                out.push(format!("{shown}/"));
                if recursive && !SKIP_DIRS.contains(&name.as_str()) {
                    queue.push_back(path);
                }
            } else {
                out.push(shown);
            }
        }
    }
    (out, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recursive_listing_skips_ignored_dirs_contents() {
        let d = tempfile::tempdir().unwrap();
        for p in ["src/a.rs", "src/deep/b.rs", ".git/HEAD", "target/x", "node_modules/m/i.js", "README"] {
            let p = d.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "").unwrap();
        }
        let (e, t) = list(d.path(), true, 200);
        assert!(!t);
        assert_eq!(
            e,
            [".git/", "README", "node_modules/", "src/", "target/", "src/a.rs", "src/deep/", "src/deep/b.rs"]
        );
        let (e, _) = list(d.path(), false, 200);
        assert_eq!(e.len(), 5);
    }

    #[test]
    fn caps_at_the_limit() {
        let d = tempfile::tempdir().unwrap();
        for i in 0..250 {
            std::fs::write(d.path().join(format!("f{i:03}")), "").unwrap();
        }
        let (e, t) = list(d.path(), false, MAX_ENTRIES);
        assert_eq!(e.len(), 200);
        assert!(t);
        assert!(format_listing(&e, t).contains("(File list truncated."));
    }
}
