//! `list_files(path, recursive?)` as Cline's `listFiles` + `formatFilesList` answer it: at most
//! 200 entries, breadth first; recursively, ignored entries (`.gitignore` and the rules of
//! [`super::walk`]) are left out, and Cline's always-ignored directories (`node_modules`,
//! `__pycache__`, `venv`, `dist`, … and hidden ones) are left out, as globby's `**/DIR/**` ignore
//! patterns leave them out (the directory too, not only what it holds). The root and the
//! home directory are never listed. Sorted as Cline sorts: each directory's entries under it.

use std::cmp::Ordering;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{check_path, walk, Access, Call, Ctx, Outcome};
use crate::run::prompt;

/// Most entries returned (Cline's handler passes 200).
pub(crate) const MAX_ENTRIES: usize = 200;

/// Cline's `DEFAULT_IGNORE_DIRECTORIES`: left out of a recursive listing.
pub(crate) const NOT_ENTERED: &[&str] = &[
    "node_modules",
    "__pycache__",
    "env",
    "venv",
    "target/dependency",
    "build/dependencies",
    "dist",
    "out",
    "bundle",
    "vendor",
    "tmp",
    "temp",
    "deps",
    "Pods",
];

/// Cline gives up on a recursive listing after 10 s and returns what it has.
const DEADLINE: Duration = Duration::from_secs(10);

pub(super) fn run(call: &Call, ctx: &mut Ctx<'_>) -> Outcome {
    let path = call.param("path").unwrap_or_default();
    // Cline: `recursive?.toLowerCase() === "true"`.
    let recursive = call.param("recursive").is_some_and(|r| r.to_lowercase() == "true");
    ctx.term.tool("list_files", &format!("{path}{}", if recursive { " (recursive)" } else { "" }));
    // Cline counts a listing of an ignored path as a mistake, so that repeated attempts add up
    // to the limit (its read and write handlers do not count theirs).
    if let Err(Outcome::Failure { text, .. }) = super::refuse_ignored(ctx, path) {
        return Outcome::Failure { text, mistake: true };
    }
    let r = match check_path(ctx, path, Access::Read, &format!("List {path}"), None) {
        Ok(r) => r,
        Err(o) => return o,
    };
    let skipped = walk::Skipped::default();
    let (entries, truncated) = list(ctx.ws.root(), &r.abs, recursive, MAX_ENTRIES, &skipped);
    ctx.term.outcome(true, &format!("{} entries{}", entries.len(), if truncated { " (truncated)" } else { "" }));
    let notes = super::say_skipped(ctx.term, ctx.memory, &skipped);
    Outcome::Success(format!("{}{notes}", format_locked_listing(ctx.ws.root(), &r.abs, &entries, truncated)))
}

/// Cline's `formatFilesList` with its `.clineignore` controller: [`format_listing`], with 🔒
/// before each entry of `dir` that the workspace `root`'s `.clineignore` blocks. The lock goes
/// on after sorting, as in Cline, so a locked entry stays under its directory.
pub(crate) fn format_locked_listing(root: &Path, dir: &Path, entries: &[String], truncated: bool) -> String {
    let ignore = crate::run::tools::clineignore::ClineIgnore::load(root);
    let marked = ignore.mark(dir, sorted(entries).into_iter().map(str::to_string).collect());
    render(&marked.iter().map(String::as_str).collect::<Vec<_>>(), truncated)
}

/// Cline's `formatFilesList` without a `.clineignore`: sorted so each directory's entries
/// follow it, the truncation note, or `No files found.`.
#[cfg(test)]
fn format_listing(entries: &[String], truncated: bool) -> String {
    render(&sorted(entries), truncated)
}

/// The entries in Cline's order.
fn sorted(entries: &[String]) -> Vec<&str> {
    let mut sorted: Vec<&str> = entries.iter().map(String::as_str).collect();
    sorted.sort_by(|a, b| cline_order(a, b));
    sorted
}

/// Sorted entries as `formatFilesList` joins them.
fn render(sorted: &[&str], truncated: bool) -> String {
    if truncated {
        return format!("{}\n\n{}", sorted.join("\n"), prompt::FILE_LIST_TRUNCATED);
    }
    if sorted.is_empty() || sorted == [""] {
        return "No files found.".to_string();
    }
    sorted.join("\n")
}

/// Cline's comparator: path parts in turn; where they first differ, an entry that ends there
/// comes before one that goes deeper, else the parts in locale order. Where the collation holds
/// two different parts equal (`A` and `a`, `a1` and `a01`) Cline returns "equal" there, which
/// is not an order (`A/` = `a/x` = `A/z`, but `A/` < `A/z`) and aborted Rust's sort; here the
/// next parts decide, so the result is Cline's wherever Cline's is not "equal", and entries
/// alike to the end keep their walk order (the sort is stable, as JavaScript's).
fn cline_order(a: &str, b: &str) -> Ordering {
    let (pa, pb): (Vec<&str>, Vec<&str>) = (a.split('/').collect(), b.split('/').collect());
    for i in 0..pa.len().min(pb.len()) {
        if pa[i] != pb[i] {
            if i + 1 == pa.len() && i + 1 < pb.len() {
                return Ordering::Less;
            }
            if i + 1 == pb.len() && i + 1 < pa.len() {
                return Ordering::Greater;
            }
            match locale_compare(pa[i], pb[i]) {
                Ordering::Equal => continue,
                decided => return decided,
            }
        }
    }
    pa.len().cmp(&pb.len())
}

/// An approximation of `localeCompare(b, undefined, { numeric: true, sensitivity: "base" })`
/// (ICU's root collation): whitespace, then punctuation in ICU's order, then digit runs
/// compared as numbers, then letters with case and common Latin accents ignored.
fn locale_compare(a: &str, b: &str) -> Ordering {
    const PUNCTUATION: &str = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";
    fn key(c: char) -> (u8, u32) {
        if let Some(i) = PUNCTUATION.find(c) {
            return (0, i as u32);
        }
        if c.is_ascii_digit() {
            return (1, 0);
        }
        if c.is_alphabetic() {
            return (2, base_letter(c) as u32);
        }
        (0, 1000 + c as u32)
    }
    let (mut x, mut y) = (a.chars().peekable(), b.chars().peekable());
    loop {
        match (x.peek().copied(), y.peek().copied()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let take = |it: &mut std::iter::Peekable<std::str::Chars<'_>>| {
                    let mut s = String::new();
                    while let Some(c) = it.next_if(char::is_ascii_digit) {
                        s.push(c);
                    }
                    s
                };
                let (m, n) = (take(&mut x), take(&mut y));
                let (m, n) = (m.trim_start_matches('0'), n.trim_start_matches('0'));
                match m.len().cmp(&n.len()).then_with(|| m.cmp(n)) {
                    Ordering::Equal => {}
                    o => return o,
                }
            }
            (Some(c), Some(d)) => {
                let o = key(c).cmp(&key(d));
                if o != Ordering::Equal {
                    return o;
                }
                x.next();
                y.next();
            }
        }
    }
}

/// A letter without case and, for Latin-1 letters, without accent.
fn base_letter(c: char) -> char {
    let l = c.to_lowercase().next().unwrap_or(c);
    match l {
        'à'..='å' => 'a',
        'ç' => 'c',
        'è'..='ë' => 'e',
        'ì'..='ï' => 'i',
        'ñ' => 'n',
        'ò'..='ö' | 'ø' => 'o',
        'ù'..='ü' => 'u',
        'ý' | 'ÿ' => 'y',
        other => other,
    }
}

/// Cline refuses to list the file system's root and the home directory.
fn restricted(dir: &Path) -> bool {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    dir == Path::new("/") || home.is_some_and(|h| h.canonicalize().unwrap_or(h) == dir)
}

/// Whether a recursive listing shows and enters directory `rel` (relative to the listed
/// directory).
fn enters(rel: &Path, hidden_allowed: bool) -> bool {
    let name = rel.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let rel = rel.to_string_lossy();
    let named =
        NOT_ENTERED
            .iter()
            .any(|d| if d.contains('/') { rel == *d || rel.ends_with(&format!("/{d}")) } else { name == *d });
    !named && (hidden_allowed || !name.starts_with('.'))
}

/// Whether the symlink `link` leads to a directory: globby (`markDirectories`, following
/// links) shows it as one, with a `/`. Only its target's type is looked at.
fn to_a_dir(link: &Path) -> bool {
    std::fs::metadata(link).is_ok_and(|m| m.is_dir())
}

/// Lists `dir` (names relative to it, directories with a trailing `/`), breadth first, at most
/// `max`, with the ignore rules from the workspace `top` down ([`walk::builder`]). Returns
/// (entries, whether the limit was reached — Cline's `length >= limit`); what the bound on
/// ignore files left out is said in `skipped` ([`walk`]).
pub(crate) fn list(
    top: &Path,
    dir: &Path,
    recursive: bool,
    max: usize,
    skipped: &walk::Skipped,
) -> (Vec<String>, bool) {
    // Cline lists nothing (`No files found.`) for the root, the home directory, a file or a
    // path that does not exist.
    if restricted(dir) || !dir.is_dir() {
        return (Vec::new(), false);
    }
    let mut out = Vec::new();
    if !recursive {
        // Cline: globby("*", { dot: true }) — every entry, no ignore rules.
        let Ok(rd) = std::fs::read_dir(dir) else { return (out, false) };
        let mut items: Vec<String> = rd
            .filter_map(Result::ok)
            .map(|e| {
                let is_dir = e.file_type().is_ok_and(|t| t.is_dir() || t.is_symlink() && to_a_dir(&e.path()));
                format!("{}{}", e.file_name().to_string_lossy(), if is_dir { "/" } else { "" })
            })
            .collect();
        items.sort();
        items.truncate(max);
        let hit = items.len() >= max;
        return (items, hit);
    }
    // A directory outside the workspace (an approved listing) is its own top.
    let top = if dir.starts_with(top) { top } else { dir };
    let hidden_allowed = dir.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
    let started = Instant::now();
    let mut queue: VecDeque<PathBuf> = VecDeque::from([PathBuf::new()]);
    while let Some(rel) = queue.pop_front() {
        let level = walk::builder(top, &dir.join(&rel), false, skipped)
            .max_depth(Some(1))
            .sort_by_file_name(|a, b| a.cmp(b))
            .build();
        for entry in level.filter_map(Result::ok).filter(|e| e.depth() == 1) {
            if out.len() >= max || started.elapsed() > DEADLINE {
                return (out, true);
            }
            let path = rel.join(entry.file_name());
            let kind = entry.file_type();
            let is_dir = kind.is_some_and(|t| t.is_dir());
            let link_to_dir = kind.is_some_and(|t| t.is_symlink()) && to_a_dir(entry.path());
            let shown = path.to_string_lossy().into_owned();
            if is_dir || link_to_dir {
                // Cline's ignore patterns leave these out entirely, so they use no slot of the
                // cap. A link is shown as the directory it leads to, but not entered.
                if enters(&path, hidden_allowed) {
                    out.push(format!("{shown}/"));
                    if is_dir {
                        queue.push_back(path);
                    }
                }
            } else {
                out.push(shown);
            }
        }
    }
    let hit = out.len() >= max;
    (out, hit)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order is an order on names the collation holds equal: it was not (`A/` = `a/x` =
    /// `A/z`, but `A/` < `A/z`), and sorting a listing of such names aborted the agent.
    #[test]
    fn clines_order_is_an_order_when_the_collation_ties() {
        let names = [
            "A/", "a/", "a/x", "A/z", "A/x", "a", "A", "a1", "a01", "a1/b", "a01/b", "\u{e1}/", "\u{e1}/a", "Docs/",
            "docs/x", "docs/", "b", "B/", "b/a/c", "B/a",
        ];
        for a in names {
            for b in names {
                let ab = cline_order(a, b);
                assert_eq!(ab, cline_order(b, a).reverse(), "{a} {b}");
                for c in names {
                    if ab.is_le() && cline_order(b, c).is_le() {
                        assert!(cline_order(a, c).is_le(), "{a} <= {b} <= {c}");
                    }
                }
            }
        }
        // A listing of many such names sorts (Rust's sort panicked on the old order).
        let mut many: Vec<String> = Vec::new();
        for (i, top) in ["A", "a", "a1", "a01", "\u{e1}", "Docs", "docs"].iter().enumerate() {
            many.push(format!("{top}/"));
            for (j, sub) in ["X", "x", "b2", "b02"].iter().enumerate() {
                many.push(format!("{top}/{sub}/"));
                many.push(format!("{top}/{sub}/f{}", i * 7 + j));
            }
        }
        many.sort_by(|a, b| cline_order(a, b));
        assert!(many.windows(2).all(|w| cline_order(&w[0], &w[1]).is_le()));
        // Where Cline's comparator decides, this one decides alike: a file before a directory's
        // entries, then the next part in locale order.
        assert_eq!(cline_order("A", "a/x"), Ordering::Less);
        assert_eq!(cline_order("a/x", "A/z"), Ordering::Less);
        assert_eq!(cline_order("A/", "A/z"), Ordering::Less);
        assert_eq!(cline_order("a1", "a01"), Ordering::Equal);
    }

    fn tree(files: &[&str]) -> tempfile::TempDir {
        crate::run::test_files::tree(&files.iter().map(|p| (*p, "")).collect::<Vec<_>>())
    }

    #[test]
    fn recursive_listing_leaves_out_ignored_hidden_and_clines_directories() {
        let d = tree(&[
            "src/a.rs",
            "src/deep/b.rs",
            ".git/HEAD",
            ".venv/lib/x.py",
            "node_modules/m/i.js",
            "dist/bundle.js",
            "README",
            ".env",
            "build/out.o",
            "logs/a.log",
            "notes.log",
        ]);
        std::fs::write(d.path().join(".gitignore"), "build/\n*.log\n").unwrap();
        std::fs::write(d.path().join(".ignore"), "README\n").unwrap();
        let (e, t) = list(d.path(), d.path(), true, 200, &walk::Skipped::default());
        assert!(!t);
        assert_eq!(
            format_listing(&e, t),
            // Cline's comparator puts a level's files before its directories; hidden files stay
            // (globby's `**/.*/**` matches directories only).
            ".env\n.gitignore\n.ignore\nlogs/\nsrc/\nsrc/a.rs\nsrc/deep/\nsrc/deep/b.rs"
        );
    }

    /// Each level of a listing is walked on its own: the rules of the levels above apply there,
    /// under the level's own (a `!` there brings a file back), also in a directory outside the
    /// workspace.
    #[test]
    fn every_level_has_the_rules_above_it_under_its_own() {
        let d = tree(&["src/x.zlog", "src/keep.zlog", "src/deep/y.zlog", "a.zlog", "b.rs"]);
        std::fs::write(d.path().join(".gitignore"), "*.zlog\n").unwrap();
        std::fs::write(d.path().join("src/.gitignore"), "!keep.zlog\n").unwrap();
        let expected = ".gitignore\nb.rs\nsrc/\nsrc/.gitignore\nsrc/keep.zlog\nsrc/deep/";
        let (e, t) = list(d.path(), d.path(), true, 200, &walk::Skipped::default());
        assert_eq!(format_listing(&e, t), expected);
        let elsewhere = tempfile::tempdir().unwrap();
        let (e, t) = list(elsewhere.path(), d.path(), true, 200, &walk::Skipped::default());
        assert_eq!(format_listing(&e, t), expected, "outside the workspace");
    }

    #[test]
    fn recursive_is_read_as_cline_reads_it() {
        use crate::run::tools::testutil::{call, with_ctx};
        let d = tree(&["src/a.rs"]);
        let ws = crate::run::tools::paths::Workspace::new(d.path()).unwrap();
        // Cline: `recursive?.toLowerCase() === "true"`.
        for (r, deep) in [("true", true), ("True", true), ("TRUE", true), ("false", false), ("yes", false)] {
            let out = with_ctx(&ws, |ctx| run(&call("list_files", &[("path", "."), ("recursive", r)]), ctx));
            let Outcome::Success(text) = out else { panic!("{out:?}") };
            assert_eq!(text.contains("src/a.rs"), deep, "recursive={r}: {text}");
        }
    }

    #[test]
    fn a_hidden_directory_listed_itself_is_entered() {
        let d = tree(&[".config/app/x", ".config/.cache/y"]);
        let (e, _) = list(d.path(), &d.path().join(".config"), true, 200, &walk::Skipped::default());
        assert_eq!(format_listing(&e, false), ".cache/\n.cache/y\napp/\napp/x");
    }

    #[test]
    fn a_nested_gitignore_counts_below_its_directory() {
        let d = tree(&["pkg/gen/x.rs", "pkg/keep.rs", "gen/y.rs"]);
        std::fs::write(d.path().join("pkg/.gitignore"), "gen/\n").unwrap();
        let (e, _) = list(d.path(), d.path(), true, 200, &walk::Skipped::default());
        assert!(e.contains(&"gen/y.rs".to_string()) && !e.iter().any(|p| p.starts_with("pkg/gen")), "{e:?}");
    }

    #[test]
    fn top_level_listing_shows_everything() {
        let d = tree(&["a", ".hidden", "node_modules/x", "ignored.log"]);
        std::fs::write(d.path().join(".gitignore"), "*.log\n").unwrap();
        let (e, _) = list(d.path(), d.path(), false, 200, &walk::Skipped::default());
        assert_eq!(format_listing(&e, false), ".gitignore\n.hidden\na\nignored.log\nnode_modules/");
    }

    #[test]
    fn symlinks_are_listed_never_followed() {
        let outside = tree(&["secret/s.txt"]);
        let d = tree(&["a.txt"]);
        std::os::unix::fs::symlink(outside.path().join("secret"), d.path().join("link")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret/s.txt"), d.path().join("file-link")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("gone"), d.path().join("dangling")).unwrap();
        // A link to a directory is marked as one (globby's markDirectories follows links).
        let (e, _) = list(d.path(), d.path(), true, 200, &walk::Skipped::default());
        assert_eq!(sorted(&e), ["a.txt", "dangling", "file-link", "link/"]);
        let (e, _) = list(d.path(), d.path(), false, 200, &walk::Skipped::default());
        assert_eq!(e, ["a.txt", "dangling", "file-link", "link/"]);
    }

    #[test]
    fn caps_at_the_limit_with_clines_note() {
        let d = tempfile::tempdir().unwrap();
        for i in 0..250 {
            std::fs::write(d.path().join(format!("f{i:03}")), "").unwrap();
        }
        let (e, t) = list(d.path(), d.path(), true, MAX_ENTRIES, &walk::Skipped::default());
        assert_eq!(e.len(), 200);
        assert!(t);
        assert!(format_listing(&e, t).ends_with(
            "\n\n(File list truncated. Use list_files on specific subdirectories if you need to explore further.)"
        ));
        assert_eq!(format_listing(&[], false), "No files found.");
    }

    #[test]
    fn sorted_as_cline_sorts() {
        let e: Vec<String> = ["b.txt", "a/", "a/z", "A2", "a10", "a9", "_x", "c/d/", "c/d/e", "c/"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        // Expected orders computed with Cline's comparator under node 20 (ICU).
        assert_eq!(format_listing(&e, false), "_x\nA2\na9\na10\nb.txt\na/\na/z\nc/\nc/d/\nc/d/e");
        let e: Vec<String> = ["a-b", "a_b", "a.b", "ab", "a b", "A", "a", "Z", "é", "e", "f1.txt", "f01.txt", "F1.txt"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(format_listing(&e, false).replace('\n', "|"), "A|a|a b|a_b|a-b|a.b|ab|é|e|f1.txt|f01.txt|F1.txt|Z");
    }

    #[test]
    fn the_root_home_files_and_missing_paths_list_nothing_as_in_cline() {
        assert_eq!(list(Path::new("/"), Path::new("/"), true, 200, &walk::Skipped::default()), (vec![], false));
        let d = tree(&["f.txt"]);
        assert_eq!(list(d.path(), &d.path().join("f.txt"), true, 200, &walk::Skipped::default()), (vec![], false));
        assert_eq!(list(d.path(), &d.path().join("missing"), false, 200, &walk::Skipped::default()), (vec![], false));
        assert_eq!(format_listing(&[], false), "No files found.");
    }
}
