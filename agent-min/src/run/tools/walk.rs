//! Walking the workspace the way ripgrep does, with ripgrep's own `ignore` crate: `.gitignore`
//! (in a git repository or not), `.ignore`, `.git/info/exclude`, git's global excludes, the
//! ignore files of the directories between the workspace and the walk's root, and never a
//! symlink followed (a link inside the workspace may point anywhere).
//!
//! No ignore file above the workspace applies: ripgrep applies every one up to `/` outside a
//! repository (and up to the repository's top inside one), so a `.gitignore` of `*` in a parent
//! folder — a home directory kept in git, say — hid the whole project from listings and
//! searches, where Cline reads the listed directory's own and those below it. The crate applies
//! the root's and those below it (it reads every one above the root too, applying none: those
//! are bounded as well); the ones between the workspace and the root (a listing's deeper
//! levels, a search of a subdirectory) are matched here, under the root's own and those below.
//!
//! The ignore files are the repository's, so they are bounded before the crate reads them: it
//! reads each one whole and compiles every line into a glob (a 10 MB `.gitignore` of 300k glob
//! lines took 3.9 GB and 13 s; 1 MiB of crafted lines still takes about 0.5 GB), and it keeps a
//! directory's rules while it walks below it. So the rules that apply in one directory — its own
//! ignore files and those of every directory above it — hold at most [`MAX_IGNORE_BYTES`]
//! together, and an ignore file that is not a regular file (a FIFO would block the walk, a
//! device never end), or whose size is not what it holds (a link to `/proc`), is never read:
//! - a directory below the walk's root that would pass the bound is left out, not entered;
//! - the root and the directories above it are read before any filter runs, so there the kind
//!   of ignore file that passes the bound (`.gitignore`, `.ignore` or `.git/info/exclude`) is
//!   not applied in this walk at all, and what it would ignore is included.
//!
//! Each case is a warning in the walk's [`Skipped`], naming the file and the limit: a listing
//! or search never comes out partial without saying so.
//!
//! The sizes are those of the files the crate will open by path, links followed as it follows
//! them; a file that grows (or is swapped) between this check and the crate's read is read as it
//! is then — closing that race would need the crate to read from our descriptor, which it cannot.
//! The bound is against what the repository holds; a concurrent command can use memory anyway.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use ignore::{DirEntry, WalkBuilder};

use crate::run::trusted_file::{self, Links};

/// Most bytes of ignore rules that apply in one directory: its own ignore files and those of
/// the directories above it, together.
pub(crate) const MAX_IGNORE_BYTES: u64 = 1 << 20;

/// The limit as warnings name it.
fn limit() -> String {
    format!("{MAX_IGNORE_BYTES} bytes ({} MiB)", MAX_IGNORE_BYTES >> 20)
}

/// Most warnings a walk names one by one; the rest are counted (a repository of many FIFOs must
/// not flood the terminal and the model's context).
const NAMED: usize = 5;

/// What walks left out or did without because of the bound, as warnings (each once). Shared by
/// the walkers a caller builds (a listing builds one per directory).
#[derive(Clone, Debug, Default)]
pub(crate) struct Skipped(Arc<Mutex<Said>>);

#[derive(Debug, Default)]
struct Said {
    named: Vec<String>,
    /// The hashes of the warnings past [`NAMED`], for their count.
    more: std::collections::HashSet<u64>,
}

impl Skipped {
    fn push(&self, warning: String) {
        let mut said = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if said.named.contains(&warning) {
            return;
        }
        if said.named.len() < NAMED {
            said.named.push(warning);
        } else {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            std::hash::Hash::hash(&warning, &mut h);
            said.more.insert(std::hash::Hasher::finish(&h));
        }
    }

    /// The warnings so far, in the order they arose (past [`NAMED`], counted in a last one).
    pub(crate) fn warnings(&self) -> Vec<String> {
        let said = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let mut v = said.named.clone();
        if !said.more.is_empty() {
            v.push(format!(
                "And {} more ignore files over the limit of {} or not regular files, not named here: what they cover is left out or not ignored in the same way.",
                said.more.len(),
                limit()
            ));
        }
        v
    }
}

/// A walker over `root` with those rules, `top` being the workspace (the directory above which
/// no ignore file applies; `root` itself when `root` is not inside it); `hidden` skips dot files
/// and directories too. What the bound on ignore files leaves out is said in `skipped`.
pub(crate) fn builder(top: &Path, root: &Path, hidden: bool, skipped: &Skipped) -> WalkBuilder {
    let (on, between, at_root) = above_and_at_root(top, root, skipped);
    let mut b = WalkBuilder::new(root);
    b.hidden(hidden)
        .parents(false)
        .ignore(on.ignore)
        .git_ignore(on.git_ignore)
        .git_global(true)
        .git_exclude(on.exclude)
        // A demanding user's .gitignore counts before `git init` too.
        .require_git(false)
        .follow_links(false);
    // The rules in force along the path walked: (directory, bytes of rules that apply there),
    // for the root and the directories below it that have ignore files.
    let applied = Mutex::new(HashMap::from([(root.to_path_buf(), at_root)]));
    let skipped = skipped.clone();
    b.filter_entry(move |e| !between.ignores(e) && admits(e, on, &applied, &skipped));
    b
}

/// The rules of the directories between the workspace and a walk's root, deepest first: each
/// directory's `.ignore`, `.gitignore` and (where it holds `.git`) `info/exclude`, in the
/// crate's order of precedence. The rules of the root and the directories below it rank above
/// them (the crate has applied those already; a `!` there brings back what these ignore), so
/// they are matched here too, read again once per directory, only when there are rules between.
struct Between {
    rules: Vec<ignore::gitignore::Gitignore>,
    root: PathBuf,
    on: On,
    /// The rules of the walk's directories along the path last asked about (those of the
    /// directories left behind are dropped, as the crate drops them: their total over a whole
    /// tree is unbounded, the bound is on one path's).
    own: Mutex<Vec<(PathBuf, Arc<ignore::gitignore::Gitignore>)>>,
}

impl Between {
    fn none(root: &Path) -> Between {
        Between { rules: Vec::new(), root: root.to_path_buf(), on: On::ALL, own: Mutex::default() }
    }

    /// Whether their rules ignore `e`: the deepest rule that matches decides, as in git.
    fn ignores(&self, e: &DirEntry) -> bool {
        if self.rules.is_empty() {
            return false;
        }
        let is_dir = e.file_type().is_some_and(|t| t.is_dir());
        let decided = |rules: &ignore::gitignore::Gitignore| match rules.matched(e.path(), is_dir) {
            ignore::Match::Ignore(_) => Some(true),
            ignore::Match::Whitelist(_) => Some(false),
            ignore::Match::None => None,
        };
        let Some(parent) = e.path().parent().filter(|p| p.starts_with(&self.root)) else {
            return self.rules.iter().find_map(decided).unwrap_or(false);
        };
        let mut own = self.own.lock().unwrap_or_else(PoisonError::into_inner);
        own.retain(|(dir, _)| parent.starts_with(dir));
        for dir in parent.ancestors() {
            let rules = match own.iter().find(|(d, _)| d == dir) {
                Some((_, rules)) => rules.clone(),
                None => {
                    let rules = Arc::new(self.own_rules(dir));
                    own.push((dir.to_path_buf(), rules.clone()));
                    rules
                }
            };
            if let Some(ignored) = decided(&rules) {
                return ignored;
            }
            if dir == self.root {
                break;
            }
        }
        self.rules.iter().find_map(decided).unwrap_or(false)
    }

    /// The rules of `dir`, a directory of the walk.
    fn own_rules(&self, dir: &Path) -> ignore::gitignore::Gitignore {
        let found = ignore_files(dir, self.on);
        let readable: Vec<&Found> = found.iter().filter(|f| self.on.reads(f.kind) && f.size.is_ok()).collect();
        rules_of(dir, &readable)
    }
}

/// The matcher of the ignore files `found` of directory `dir`, read within the bound (each was
/// checked already; one that has changed into something else since is left out).
fn rules_of(dir: &Path, found: &[&Found]) -> ignore::gitignore::Gitignore {
    let mut b = ignore::gitignore::GitignoreBuilder::new(dir);
    // The crate's precedence within a directory: `.ignore` over `.gitignore` over the exclude
    // file; within one matcher the last matching line wins, so the weakest go in first.
    for kind in [Kind::Exclude, Kind::GitIgnore, Kind::Ignore] {
        for f in found.iter().filter(|f| f.kind == kind) {
            let Ok(bytes) = trusted_file::read(&f.path, Links::Follow, MAX_IGNORE_BYTES) else { continue };
            for line in String::from_utf8_lossy(&bytes).lines() {
                let _ = b.add_line(Some(f.path.clone()), line);
            }
        }
    }
    b.build().unwrap_or_else(|_| ignore::gitignore::Gitignore::empty())
}

/// The kinds of ignore file a walk reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    GitIgnore,
    Ignore,
    Exclude,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::GitIgnore => ".gitignore",
            Kind::Ignore => ".ignore",
            Kind::Exclude => ".git/info/exclude",
        }
    }
}

/// Which kinds a walk reads.
#[derive(Clone, Copy, Debug)]
struct On {
    git_ignore: bool,
    ignore: bool,
    exclude: bool,
}

impl On {
    const ALL: On = On { git_ignore: true, ignore: true, exclude: true };

    fn reads(self, k: Kind) -> bool {
        match k {
            Kind::GitIgnore => self.git_ignore,
            Kind::Ignore => self.ignore,
            Kind::Exclude => self.exclude,
        }
    }

    fn stop(&mut self, k: Kind) {
        match k {
            Kind::GitIgnore => self.git_ignore = false,
            Kind::Ignore => self.ignore = false,
            Kind::Exclude => self.exclude = false,
        }
    }
}

/// One ignore file the crate would read for a directory.
struct Found {
    kind: Kind,
    path: PathBuf,
    /// Its size, or why it is never read.
    size: Result<u64, &'static str>,
}

const NOT_REGULAR: &str = "is not a regular file (a FIFO, device or socket)";

/// A "regular file" of size 0 that reads as more (`/proc`'s: `/proc/self/pagemap` would read as
/// one line of gigabytes of zeros).
const UNSIZED: &str = "has a size of 0 but is not empty (a file of /proc or /sys)";

/// The ignore files of the kinds `on` reads that the crate would read for `dir`, with their
/// sizes (links followed, as the crate opens them).
fn ignore_files(dir: &Path, on: On) -> Vec<Found> {
    let mut found = Vec::new();
    for kind in [Kind::GitIgnore, Kind::Ignore] {
        if on.reads(kind) {
            let path = dir.join(kind.name());
            if let Some(size) = size_of(&path) {
                found.push(Found { kind, path, size });
            }
        }
    }
    if on.reads(Kind::Exclude) {
        match exclude_file(dir) {
            Ok(Some(path)) => {
                if let Some(size) = size_of(&path) {
                    found.push(Found { kind: Kind::Exclude, path, size });
                }
            }
            Ok(None) => {}
            Err((path, why)) => found.push(Found { kind: Kind::Exclude, path, size: Err(why) }),
        }
    }
    found
}

/// The size the crate would read at `path`: `None` where it reads nothing (no such file, or a
/// directory, whose read fails); `Err` for what it must never read.
fn size_of(path: &Path) -> Option<Result<u64, &'static str>> {
    let m = std::fs::metadata(path).ok()?;
    if m.is_dir() {
        None
    } else if !m.is_file() {
        Some(Err(NOT_REGULAR))
    } else if m.len() == 0 && !is_empty(path) {
        Some(Err(UNSIZED))
    } else {
        Some(Ok(m.len()))
    }
}

/// Whether the regular file at `path`, of size 0, reads as nothing (one byte is read at most).
fn is_empty(path: &Path) -> bool {
    !matches!(trusted_file::read(path, Links::Follow, 0), Err(trusted_file::Error::TooLarge { .. }))
}

/// Where the crate looks for `dir`'s `info/exclude` (its `resolve_git_commondir`): in `.git/`,
/// or, when `.git` is a file (a worktree, a submodule), under the `commondir` of its `gitdir:`.
/// Both one-line files are read here within the bound (the crate reads their first line whole);
/// `Err` names one that must not be read.
fn exclude_file(dir: &Path) -> Result<Option<PathBuf>, (PathBuf, &'static str)> {
    let dot_git = dir.join(".git");
    let Ok(m) = std::fs::metadata(&dot_git) else { return Ok(None) };
    if !m.is_file() {
        return Ok(Some(dot_git.join("info/exclude")));
    }
    let Some(line) = first_line(&dot_git)? else { return Ok(None) };
    let Some(git_dir) = line.strip_prefix("gitdir: ").map(PathBuf::from) else { return Ok(None) };
    let common = git_dir.join("commondir");
    let Some(line) = first_line(&common)? else { return Ok(None) };
    let common = if line.starts_with('.') { git_dir.join(line) } else { PathBuf::from(line) };
    Ok(Some(common.join("info/exclude")))
}

/// The first line of a regular file of at most [`MAX_IGNORE_BYTES`] (`None`: no such file, or
/// nothing the crate would use).
fn first_line(path: &Path) -> Result<Option<String>, (PathBuf, &'static str)> {
    match trusted_file::read(path, Links::Follow, MAX_IGNORE_BYTES) {
        Ok(bytes) => Ok(String::from_utf8(bytes).ok().and_then(|s| s.lines().next().map(str::to_string))),
        Err(trusted_file::Error::NotRegular) => Err((path.to_path_buf(), NOT_REGULAR)),
        Err(trusted_file::Error::TooLarge { .. }) => Err((path.to_path_buf(), "is too large to be read")),
        Err(_) => Ok(None),
    }
}

/// Checks the ignore files the crate reads before any filter runs — those of every directory
/// above the canonical root (read, though with `parents(false)` never applied) and the root's
/// own — and those of the directories between `top` and the root, which [`Between`] matches:
/// the kinds to read (a kind that would pass the bound is not read, and that is said in
/// `skipped`), the rules between, and the bytes of rules held at the root (the files between
/// count twice: the crate reads them too).
fn above_and_at_root(top: &Path, root: &Path, skipped: &Skipped) -> (On, Between, u64) {
    let mut on = On::ALL;
    if !root.is_dir() {
        // A file walked alone: the crate reads no ignore file for it.
        return (on, Between::none(root), 0);
    }
    let canonical = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut read: Vec<&Path> = canonical.ancestors().skip(1).collect();
    read.reverse();
    read.push(root);
    // Between `top` and the root (the root left out), deepest first.
    let between: Vec<&Path> = match root.strip_prefix(top) {
        Ok(rel) if rel.components().all(|c| matches!(c, std::path::Component::Normal(_))) => {
            root.ancestors().skip(1).take(rel.components().count()).collect()
        }
        _ => Vec::new(),
    };
    // Each file with the index in `between` of its directory, if it is one of those.
    let found: Vec<(Option<usize>, Found)> = read
        .iter()
        .flat_map(|d| ignore_files(d, on).into_iter().map(|f| (None, f)))
        .chain(between.iter().enumerate().flat_map(|(i, d)| ignore_files(d, on).into_iter().map(move |f| (Some(i), f))))
        .collect();
    for (_, f) in &found {
        if let (Err(why), true) = (f.size, on.reads(f.kind)) {
            on.stop(f.kind);
            skipped.push(format!(
                "{} {why}: no {} file was applied, so what they ignore is included.",
                f.path.display(),
                f.kind.name()
            ));
        }
    }
    let bytes = |on: On, k: Option<Kind>| -> u64 {
        let of = |f: &&Found| on.reads(f.kind) && k.is_none_or(|k| f.kind == k);
        found.iter().map(|(_, f)| f).filter(of).filter_map(|f| f.size.ok()).sum()
    };
    // Over the bound: the kind holding the most bytes is not read, until the rest fits.
    while bytes(on, None) > MAX_IGNORE_BYTES {
        let Some(kind) = [Kind::GitIgnore, Kind::Ignore, Kind::Exclude]
            .into_iter()
            .filter(|k| on.reads(*k))
            .max_by_key(|k| bytes(on, Some(*k)))
        else {
            break;
        };
        let largest = found.iter().map(|(_, f)| f).filter(|f| f.kind == kind).max_by_key(|f| f.size.unwrap_or(0));
        if let Some(f) = largest {
            skipped.push(format!(
                "{} is {} bytes: with it the ignore rules that apply here exceed the limit of {}, so no {} file was applied and what they ignore is included.",
                f.path.display(),
                f.size.unwrap_or(0),
                limit(),
                kind.name()
            ));
        }
        on.stop(kind);
    }
    let rules = (0..between.len())
        .filter_map(|i| {
            let own: Vec<&Found> = found
                .iter()
                .filter(|(d, f)| *d == Some(i) && on.reads(f.kind) && f.size.is_ok())
                .map(|(_, f)| f)
                .collect();
            (!own.is_empty()).then(|| rules_of(between[i], &own))
        })
        .collect();
    let between = Between { rules, root: root.to_path_buf(), on, own: Mutex::default() };
    (on, between, bytes(on, None))
}

/// The walk's filter: whether to enter the directory `e` (anything else passes). It is left
/// out when one of its ignore files must not be read, or when its rules would bring those that
/// apply in it over the bound; `applied` keeps the bytes in force along the path walked.
fn admits(e: &DirEntry, on: On, applied: &Mutex<HashMap<PathBuf, u64>>, skipped: &Skipped) -> bool {
    if !e.file_type().is_some_and(|t| t.is_dir()) {
        return true;
    }
    let found = ignore_files(e.path(), on);
    if found.is_empty() {
        return true;
    }
    let dir = e.path().display();
    if let Some((f, why)) = found.iter().find_map(|f| f.size.err().map(|why| (f, why))) {
        skipped.push(format!("{dir}/ was left out: {} {why}, and is never read as ignore rules.", f.path.display()));
        return false;
    }
    let mut applied = applied.lock().unwrap_or_else(PoisonError::into_inner);
    let above = e.path().ancestors().skip(1).find_map(|a| applied.get(a).copied()).unwrap_or(0);
    let own: u64 = found.iter().filter_map(|f| f.size.ok()).sum();
    if above + own > MAX_IGNORE_BYTES {
        if let Some(f) = found.iter().max_by_key(|f| f.size.unwrap_or(0)) {
            skipped.push(format!(
                "{dir}/ was left out: {} is {} bytes, and with it the ignore rules that apply there would exceed the limit of {}.",
                f.path.display(),
                f.size.unwrap_or(0),
                limit()
            ));
        }
        return false;
    }
    if own > 0 {
        applied.insert(e.path().to_path_buf(), above + own);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An ignore file of more than `bytes` whose first rule is `rule`, padded with comment
    /// lines (cheap to compile: the test itself stays small; what it checks is that the rule is
    /// not applied, i.e. the file was not read).
    fn padded(rule: &str, bytes: u64) -> String {
        let mut s = format!("{rule}\n");
        while s.len() as u64 <= bytes {
            s.push_str("# padding padding padding padding padding padding padding padding\n");
        }
        s
    }

    /// The entries of a walk of the workspace `root` (relative, sorted) and its warnings.
    fn walked(root: &Path) -> (Vec<String>, Vec<String>) {
        walked_below(root, root)
    }

    /// The same for a walk of `root` in the workspace `top`.
    fn walked_below(top: &Path, root: &Path) -> (Vec<String>, Vec<String>) {
        let skipped = Skipped::default();
        let mut names: Vec<String> = builder(top, root, false, &skipped)
            .build()
            .filter_map(Result::ok)
            .filter(|e| e.depth() > 0)
            .map(|e| e.path().strip_prefix(root).unwrap().to_string_lossy().into_owned())
            .collect();
        names.sort();
        (names, skipped.warnings())
    }

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        crate::run::test_files::tree(files)
    }

    #[test]
    fn an_oversize_gitignore_at_the_root_or_above_is_not_applied_and_said_once() {
        let big = padded("*.log", MAX_IGNORE_BYTES);
        let d = tree(&[(".gitignore", &big), (".ignore", "*.tmp\n"), ("a.log", ""), ("b.tmp", ""), ("deep/d.log", "")]);
        let (names, warnings) = walked(d.path());
        // Its rules are not applied; the other kinds of ignore file still are.
        assert_eq!(names, [".gitignore", ".ignore", "a.log", "deep", "deep/d.log"]);
        let file = d.path().join(".gitignore").display().to_string();
        assert_eq!(
            warnings,
            [format!(
                "{file} is {} bytes: with it the ignore rules that apply here exceed the limit of 1048576 bytes (1 MiB), so no .gitignore file was applied and what they ignore is included.",
                big.len()
            )]
        );
        // Walking a directory below it: the file is between the workspace and the walk's root.
        let (names, warnings) = walked_below(d.path(), &d.path().join("deep"));
        assert_eq!(names, ["d.log"]);
        assert!(warnings.len() == 1 && warnings[0].starts_with(&file), "{warnings:?}");
    }

    #[test]
    fn a_directory_with_an_oversize_gitignore_is_left_out_and_said() {
        let big = padded("*.txt", MAX_IGNORE_BYTES);
        let d = tree(&[
            (".gitignore", "*.log\n"),
            ("sub/.gitignore", &big),
            ("sub/x.rs", ""),
            ("sub/deeper/y.rs", ""),
            ("other/y.txt", ""),
            ("z.log", ""),
        ]);
        let (names, warnings) = walked(d.path());
        // The root's rules still apply; `sub` is not entered (nor listed).
        assert_eq!(names, [".gitignore", "other", "other/y.txt"]);
        let sub = d.path().join("sub");
        assert_eq!(
            warnings,
            [format!(
                "{}/ was left out: {} is {} bytes, and with it the ignore rules that apply there would exceed the limit of 1048576 bytes (1 MiB).",
                sub.display(),
                sub.join(".gitignore").display(),
                big.len()
            )]
        );
    }

    /// Files each under the bound, which pass it together along one path, are bounded too: the
    /// walk keeps a directory's rules while it walks below it.
    #[test]
    fn the_bound_is_on_the_rules_along_the_path_not_on_each_file() {
        let most = padded("*.a", MAX_IGNORE_BYTES / 2 + 1);
        let d = tree(&[
            (".gitignore", &most),
            ("one/.ignore", "*.b\n"),
            ("one/two/.gitignore", &most),
            ("one/two/f", ""),
            ("one/f.a", ""),
            ("one/f.b", ""),
            ("side/.gitignore", "*.c\n"),
            ("side/g.c", ""),
        ]);
        let (names, warnings) = walked(d.path());
        assert_eq!(names, [".gitignore", "one", "one/.ignore", "side", "side/.gitignore"]);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with(&format!("{}/ was left out", d.path().join("one/two").display())));
    }

    /// A FIFO (or a device) as an ignore file would block the walk (or never end): it is never
    /// opened, and that is said.
    #[test]
    fn an_ignore_file_that_is_not_a_regular_file_is_never_opened() {
        let d = tree(&[("sub/x", ""), ("top/.gitignore", "x\n"), ("top/x", ""), ("top/y", "")]);
        let fifo = |p: &Path| {
            rustix::fs::mknodat(rustix::fs::CWD, p, rustix::fs::FileType::Fifo, rustix::fs::Mode::RUSR, 0).unwrap()
        };
        fifo(&d.path().join("sub/.ignore"));
        let (names, warnings) = walked_in_time(d.path());
        assert_eq!(names, ["top", "top/.gitignore", "top/y"]);
        let sub = d.path().join("sub");
        assert_eq!(
            warnings,
            [format!(
                "{}/ was left out: {} is not a regular file (a FIFO, device or socket), and is never read as ignore rules.",
                sub.display(),
                sub.join(".ignore").display()
            )]
        );
        // Above the root, between the workspace and it or above the workspace (the crate reads
        // every directory's above the root, though it applies none of them): that kind of
        // file is not read in this walk (`top/.gitignore` neither).
        fifo(&d.path().join(".gitignore"));
        let warned = [format!(
            "{} is not a regular file (a FIFO, device or socket): no .gitignore file was applied, so what they ignore is included.",
            d.path().join(".gitignore").display()
        )];
        let top = d.path().join("top");
        for workspace in [d.path(), &top] {
            let (names, warnings) = walked_below_in_time(workspace, &top);
            assert_eq!(names, [".gitignore", "x", "y"], "{}", workspace.display());
            assert_eq!(warnings, warned);
        }
    }

    /// A link to a file of /proc, whose size says 0 whatever it holds (`/proc/self/pagemap`
    /// reads as gigabytes without a line break): never read; an empty file is read as before.
    #[test]
    fn a_file_whose_size_is_not_its_content_is_never_read() {
        let d = tree(&[("sub/f", ""), ("ok/.gitignore", ""), ("ok/g", "")]);
        std::os::unix::fs::symlink("/proc/self/status", d.path().join("sub/.gitignore")).unwrap();
        let (names, warnings) = walked(d.path());
        assert_eq!(names, ["ok", "ok/.gitignore", "ok/g"]);
        assert_eq!(
            warnings,
            [format!(
                "{}/ was left out: {} has a size of 0 but is not empty (a file of /proc or /sys), and is never read as ignore rules.",
                d.path().join("sub").display(),
                d.path().join("sub/.gitignore").display()
            )]
        );
    }

    /// No ignore file above the workspace applies, in a repository or not: a `.gitignore` of
    /// `*` in a parent folder (a home directory kept in git) hid the whole project. Those
    /// between the workspace and the walk's root do, deepest first.
    #[test]
    fn ignore_files_above_the_workspace_never_apply_those_between_it_and_the_root_do() {
        let d = tree(&[
            (".gitignore", "*\n"),
            (".ignore", "*.zrs\n"),
            ("ws/.gitignore", "*.zlog\n"),
            ("ws/a.txt", ""),
            ("ws/c.zrs", ""),
            // A `!` below the rules between brings back what they ignore, as in git.
            ("ws/src/.gitignore", "*.ztmp\n!keep.zlog\n"),
            ("ws/src/b.txt", ""),
            ("ws/src/x.zlog", ""),
            ("ws/src/keep.zlog", ""),
            ("ws/src/y.ztmp", ""),
            ("ws/src/deep/z.zlog", ""),
        ]);
        let ws = d.path().join("ws");
        let all = [".gitignore", "a.txt", "c.zrs", "src", "src/.gitignore", "src/b.txt", "src/deep", "src/keep.zlog"];
        for git in [false, true] {
            if git {
                std::fs::create_dir_all(ws.join(".git/info")).unwrap();
                std::fs::write(ws.join(".git/info/exclude"), "b.txt\n").unwrap();
            }
            let (mut names, warnings) = walked(&ws);
            names.retain(|n| n != ".git" && !n.starts_with(".git/"));
            let expected: Vec<&str> = all.iter().copied().filter(|n| !(git && *n == "src/b.txt")).collect();
            assert_eq!(names, expected, "git: {git}");
            assert!(warnings.is_empty(), "{warnings:?}");
            // Walking `src` in the workspace: the workspace's rules (and its repository's
            // exclude file) still apply there, under `src`'s own.
            let (names, _) = walked_below(&ws, &ws.join("src"));
            let expected: &[&str] =
                if git { &[".gitignore", "deep", "keep.zlog"] } else { &[".gitignore", "b.txt", "deep", "keep.zlog"] };
            assert_eq!(names, expected, "git: {git}");
        }
    }

    /// Many directories left out are named up to a few, and counted past them.
    #[test]
    fn many_warnings_are_counted_past_a_few() {
        let d = tree(&[("keep/f", "")]);
        for i in 0..12 {
            let dir = d.path().join(format!("d{i:02}"));
            std::fs::create_dir_all(&dir).unwrap();
            rustix::fs::mknodat(
                rustix::fs::CWD,
                dir.join(".gitignore"),
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::RUSR,
                0,
            )
            .unwrap();
        }
        let (names, warnings) = walked_in_time(d.path());
        assert_eq!(names, ["keep", "keep/f"]);
        assert_eq!(warnings.len(), NAMED + 1, "{warnings:?}");
        assert!(warnings[..NAMED].iter().all(|w| w.contains("/ was left out:")), "{warnings:?}");
        assert!(warnings[NAMED].starts_with("And 7 more ignore files over the limit of 1048576 bytes (1 MiB)"));
    }

    /// [`walked`] on a thread, waited for: a walk blocked on a FIFO fails the test instead of
    /// hanging it.
    fn walked_in_time(root: &Path) -> (Vec<String>, Vec<String>) {
        walked_below_in_time(root, root)
    }

    fn walked_below_in_time(top: &Path, root: &Path) -> (Vec<String>, Vec<String>) {
        let (top, root) = (top.to_path_buf(), root.to_path_buf());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(walked_below(&top, &root)).unwrap());
        rx.recv_timeout(std::time::Duration::from_secs(60)).expect("the walk ended")
    }
}
