//! Path confinement: every path a tool touches is resolved against the workspace root —
//! `..` and symlinks included — before deciding whether it is inside the workspace.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

/// The workspace root (canonical).
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
}

/// A path resolved against the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// The absolute path with `..` and symlinks of its existing part resolved.
    pub abs: PathBuf,
    /// Whether `abs` is the root or below it.
    pub inside: bool,
    /// Why the path cannot be resolved (a symlink loop); `inside` is then false.
    pub error: Option<String>,
}

impl Workspace {
    /// A workspace rooted at `root`, which must exist.
    pub fn new(root: &Path) -> io::Result<Self> {
        Ok(Workspace { root: fs::canonicalize(root)? })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves `path` (relative to the root, or absolute). Symlinks in the part that exists are
    /// followed, so a link inside the workspace pointing outside resolves outside.
    pub(crate) fn resolve(&self, path: &str) -> Resolved {
        let joined = self.root.join(path);
        if joined.as_os_str().len() >= PATH_MAX {
            // Refused before any system call: resolving costs a call per component on the whole
            // prefix (a 200 KB path of `x/` took 4 s), and the system would refuse it anyway.
            let start: String = path.chars().take(60).collect();
            let error = format!(
                "{start}…: the path is {} bytes long; the system opens none longer than {} bytes",
                joined.as_os_str().len(),
                PATH_MAX - 1
            );
            return Resolved { abs: joined, inside: false, error: Some(error) };
        }
        let mut links = 0;
        match resolve_components(&joined, &mut links) {
            Some(abs) => {
                let inside = abs.starts_with(&self.root);
                Resolved { abs, inside, error: None }
            }
            None => Resolved {
                abs: joined,
                inside: false,
                error: Some(format!("{path}: too many levels of symbolic links (a symlink loop?)")),
            },
        }
    }

    /// How to show a resolved path: relative to the root when inside, absolute otherwise.
    #[cfg(test)]
    pub(crate) fn display(&self, abs: &Path) -> String {
        match abs.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => abs.to_string_lossy().into_owned(),
        }
    }
}

/// The longest path the system takes, its closing NUL included (Linux's `PATH_MAX`).
const PATH_MAX: usize = 4096;

/// Most symlinks followed while resolving one path (Linux's own limit).
const MAX_LINKS: u32 = 40;

/// Walks the components of an absolute path, canonicalising as it goes: after each step the
/// prefix is either fully resolved (it exists) or purely lexical (it does not exist yet).
/// `None` after following more than [`MAX_LINKS`] dangling links (a loop, or a chain the kernel
/// would refuse with ELOOP anyway).
fn resolve_components(p: &Path, links: &mut u32) -> Option<PathBuf> {
    let mut cur = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => cur.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                cur.pop();
            }
            Component::Normal(name) => {
                cur.push(name);
                match fs::canonicalize(&cur) {
                    Ok(real) => cur = real,
                    Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return None,
                    Err(_) => {
                        if let Ok(target) = fs::read_link(&cur) {
                            // A dangling symlink: follow it lexically so writes through it are
                            // judged by where they would land.
                            *links += 1;
                            if *links > MAX_LINKS {
                                return None;
                            }
                            cur.pop();
                            cur = resolve_components(&cur.join(target), links)?;
                        }
                    }
                }
            }
        }
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A path longer than the system takes is refused before it is resolved: resolving costs
    /// a system call per component on the whole prefix, so a model's 1 MB path of `x/` took
    /// ~95 s (and it was then judged inside the workspace).
    #[test]
    fn a_path_longer_than_the_system_takes_is_refused_unresolved() {
        let (_d, w) = ws();
        let long = "x/".repeat(50_000);
        let r = w.resolve(&long);
        assert!(!r.inside);
        let e = r.error.expect("an error");
        assert!(e.starts_with("x/x/") && e.contains("the path is") && e.contains("none longer than 4095 bytes"), "{e}");
        assert!(e.len() < 200, "{e}");
        // One that fits is resolved as before.
        let fits = "x/".repeat(1_000);
        assert!(w.resolve(&fits).error.is_none());
    }

    fn ws() -> (tempfile::TempDir, Workspace) {
        let d = tempfile::tempdir().unwrap();
        fs::create_dir_all(d.path().join("src/sub")).unwrap();
        fs::write(d.path().join("src/a.rs"), "x").unwrap();
        let w = Workspace::new(d.path()).unwrap();
        (d, w)
    }

    #[test]
    fn plain_relative_paths_are_inside() {
        let (_d, w) = ws();
        let r = w.resolve("src/a.rs");
        assert!(r.inside);
        assert_eq!(r.abs, w.root().join("src/a.rs"));
        assert!(w.resolve("new/dir/file.txt").inside);
        assert!(w.resolve(".").inside);
        assert_eq!(w.display(&w.resolve("src/sub/../a.rs").abs), "src/a.rs");
    }

    #[test]
    fn dot_dot_escaping_the_root_is_outside() {
        let (_d, w) = ws();
        assert!(!w.resolve("../x").inside);
        assert!(!w.resolve("src/../../x").inside);
        assert!(!w.resolve("nope/../../../etc/passwd").inside);
        assert!(w.resolve("src/../src/a.rs").inside);
    }

    #[test]
    fn absolute_paths_are_judged_by_location() {
        let (_d, w) = ws();
        assert!(!w.resolve("/etc/passwd").inside);
        let inside = w.root().join("src/a.rs");
        assert!(w.resolve(inside.to_str().unwrap()).inside);
    }

    #[test]
    fn symlink_pointing_outside_is_outside() {
        let (d, w) = ws();
        let outside = tempfile::tempdir().unwrap();
        symlink(outside.path(), d.path().join("link")).unwrap();
        assert!(!w.resolve("link/file.txt").inside);
        assert!(!w.resolve("link").inside);
    }

    #[test]
    fn dangling_symlink_pointing_outside_is_outside() {
        let (d, w) = ws();
        symlink("/nonexistent-agent-min-target/x", d.path().join("dangle")).unwrap();
        assert!(!w.resolve("dangle").inside);
    }

    #[test]
    fn symlink_inside_pointing_inside_is_inside() {
        let (d, w) = ws();
        symlink(d.path().join("src"), d.path().join("srclink")).unwrap();
        let r = w.resolve("srclink/a.rs");
        assert!(r.inside);
        assert_eq!(r.abs, w.root().join("src/a.rs"));
    }

    #[test]
    fn symlink_loops_are_an_error_not_a_crash() {
        let (d, w) = ws();
        symlink(d.path().join("b"), d.path().join("a")).unwrap();
        symlink(d.path().join("a"), d.path().join("b")).unwrap();
        symlink("self", d.path().join("self")).unwrap();
        for p in ["a", "a/x", "self", "self/../y"] {
            let r = w.resolve(p);
            assert!(!r.inside, "{p}");
            assert!(r.error.as_deref().unwrap_or("").contains("symbolic links"), "{p}: {r:?}");
        }
        assert_eq!(w.resolve("src/a.rs").error, None);
    }

    #[test]
    fn dot_dot_after_symlink_follows_the_real_parent() {
        let (d, w) = ws();
        let outside = tempfile::tempdir().unwrap();
        fs::create_dir(outside.path().join("deep")).unwrap();
        symlink(outside.path().join("deep"), d.path().join("l")).unwrap();
        // "l/.." is the parent of the link's target, which is outside.
        assert!(!w.resolve("l/../x").inside);
    }
}
