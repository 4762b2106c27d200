//! The shadow repository of one workspace: a git directory under
//! `STATE_DIR/checkpoints/HASH/.git` whose `core.worktree` is the workspace (the user's own
//! `.git` is never read or written). Taking a checkpoint stages what changed — leaving out
//! Cline's exclusions, `.gitignore`d files, files over the size limit and unreadable ones, each
//! reported — and commits it; restoring puts the workspace's tracked files back as they were.
//! Every operation holds the workspace's lock; the leftovers of a process killed mid-operation
//! (git's `index.lock`, disabled nested repositories, an unusable repository) are repaired when
//! the repository is next opened.

use std::fs;
use std::path::{Path, PathBuf};

use super::git::{find_git, first_lines, Git};
use super::{exclusions, lock, nested, place};

/// Above this many changed files, `git add` streams them into a pack.
const BULK_FILES: usize = 64;

/// git's empty tree, the "before" of a first checkpoint.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// The shadow repository's `info/attributes`, above every `.gitattributes` of the workspace:
/// files are stored and restored byte for byte — no end-of-line conversion (`text`, `eol`), no
/// `$Id$` expansion (`ident`), no clean/smudge program (`filter`: never run one a repository
/// names), no re-encoding (`working-tree-encoding`).
const ATTRIBUTES: &str = "* -text -eol -ident -filter -working-tree-encoding\n";

/// What a checkpoint looks at.
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    /// The whole workspace: after a command, a hook, an MCP tool, anything not known.
    All,
    /// Only these paths (absolute), all an edit tool wrote: everything else is as the previous
    /// checkpoint staged it. The whole scan is done instead where only it is exact.
    Paths(&'a [PathBuf]),
}

/// An opened shadow repository.
#[derive(Debug)]
pub struct Shadow {
    git: Git,
    /// `STATE_DIR/checkpoints/HASH`.
    dir: PathBuf,
    workspace: PathBuf,
}

/// One checkpoint taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taken {
    /// The commit.
    pub hash: String,
    /// Paths changed since the previous checkpoint (workspace-relative).
    pub files: Vec<String>,
    /// Paths left out: over the size limit, or unreadable (with why).
    pub left_out: Vec<String>,
    /// The paths of `left_out`, as bytes: a name need not be UTF-8, and a restore must match
    /// it exactly (read as text, it did not, and a restore deleted or overwrote the file).
    pub left_out_paths: Vec<Vec<u8>>,
}

impl Shadow {
    /// Opens (creating if needed) the shadow repository of `workspace` (absolute, canonical)
    /// under `state_dir`, refusing what Cline refuses, and repairing what a crash left.
    pub fn open(state_dir: &Path, workspace: &Path) -> Result<Shadow, String> {
        crate::run::spawn::distrust_programs_in(workspace);
        let program = find_git()
            .ok_or("git is not installed (or not on PATH); install git to get checkpoints, or pass --no-checkpoints")?;
        Shadow::open_with(program, state_dir, workspace)
    }

    /// [`Shadow::open`] with `program` as git.
    fn open_with(program: PathBuf, state_dir: &Path, workspace: &Path) -> Result<Shadow, String> {
        place::refuse(workspace, place::home_dir().as_deref())?;
        // git runs in the workspace: a relative GIT_DIR would name another folder there.
        let state_dir = std::path::absolute(state_dir)
            .map_err(|e| format!("cannot make the state directory {} absolute ({e})", state_dir.display()))?;
        let git_dir = place::shadow_git_dir(&state_dir, workspace);
        let dir = git_dir.parent().expect("HASH/.git has a parent").to_path_buf();
        use std::os::unix::fs::DirBuilderExt;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| format!("cannot create {} ({e})", dir.display()))?;
        let git = Git::new(program, &git_dir, workspace).excluding(super::global_ignore::path());
        let shadow = Shadow { git, dir, workspace: workspace.to_path_buf() };
        shadow.check_version()?;
        let _held = shadow.lock()?;
        shadow.repair()?;
        if git_dir.join("HEAD").exists() {
            let wt = shadow.git.check(&["config", "core.worktree"], None)?.text();
            if Path::new(wt.trim()) != workspace {
                return Err(format!(
                    "Checkpoints can only be used in the original workspace: {} (the shadow repository {} belongs to it; its path has the same hash as this one)",
                    wt.trim(),
                    git_dir.display()
                ));
            }
        } else {
            shadow.init()?;
        }
        let info = git_dir.join("info");
        // A state directory inside the workspace (`--state-dir .agent`) is left out: its saved
        // tasks must not be committed, or restored over, and its shadow `.git` is not a nested
        // project to disable.
        let exclude = exclusions::exclude_file(workspace, shadow.state_dir_inside().as_deref());
        for (name, text) in [("exclude", exclude), ("attributes", ATTRIBUTES.to_string())] {
            fs::create_dir_all(&info)
                .and_then(|_| fs::write(info.join(name), text))
                .map_err(|e| format!("cannot write {} ({e})", info.join(name).display()))?;
        }
        Ok(shadow)
    }

    /// git 2.28 or newer (`--pathspec-from-file`, `--initial-branch`).
    fn check_version(&self) -> Result<(), String> {
        let out = self.git.run(&["--version"], None).map_err(|e| format!("cannot run git: {e}"))?;
        let text = out.text();
        let version =
            parse_version(&text).ok_or_else(|| format!("cannot tell git's version from {:?}", text.trim()))?;
        if version < (2, 28) {
            return Err(format!(
                "{} is too old for checkpoints; install git 2.28 or newer, or pass --no-checkpoints",
                text.trim()
            ));
        }
        Ok(())
    }

    fn init(&self) -> Result<(), String> {
        let ws = self.workspace.to_string_lossy();
        self.git.check(&["init", "-q", "--template=", "--initial-branch=checkpoints"], None)?;
        for (k, v) in [
            ("core.worktree", ws.as_ref()),
            ("commit.gpgSign", "false"),
            ("user.name", super::git::AUTHOR.0),
            ("user.email", super::git::AUTHOR.1),
        ] {
            self.git.check(&["config", k, v], None)?;
        }
        Ok(())
    }

    /// The folder holding the shadow repository, its lock and its journal.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The workspace.
    pub(crate) fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// Takes the workspace's checkpoint lock (Cline's wait). With it held no git of ours can be
    /// writing the shadow repository, so git's own lock files left by one killed (at its time
    /// limit, by Ctrl-C) are removed: every later checkpoint of the run failed on them
    /// ("index.lock: File exists").
    pub fn lock(&self) -> Result<lock::Held, String> {
        let held = lock::acquire(&self.dir.join("lock"), lock::WAIT)?;
        for stale in ["index.lock", "HEAD.lock", "config.lock", "refs/heads/checkpoints.lock", "packed-refs.lock"] {
            let _ = fs::remove_file(self.git.git_dir().join(stale));
        }
        Ok(held)
    }

    fn journal(&self) -> PathBuf {
        self.dir.join("nested-disabled")
    }

    /// The state directory (`STATE_DIR` of `STATE_DIR/checkpoints/HASH`), resolved.
    fn state_dir(&self) -> PathBuf {
        let state = self.dir.parent().and_then(Path::parent).unwrap_or(&self.dir);
        fs::canonicalize(state).unwrap_or_else(|_| state.to_path_buf())
    }

    /// The state directory's path in the workspace (empty: it is the workspace), if it is
    /// inside it.
    fn state_dir_inside(&self) -> Option<PathBuf> {
        self.state_dir().strip_prefix(&self.workspace).ok().map(Path::to_path_buf)
    }

    /// With the lock held: whatever a killed process left is put right. Nested repositories are
    /// re-enabled (git's stale lock files went as the lock was taken), and a
    /// repository git positively reports as damaged is moved aside whole — its checkpoints
    /// kept — so a fresh series starts. Any other failure (git could not run, was killed, timed
    /// out, said something else) is an error: nothing is moved.
    fn repair(&self) -> Result<(), String> {
        nested::repair(&self.journal())?;
        let git_dir = self.git.git_dir();
        if git_dir.join("HEAD").exists() {
            if let Some(why) = self.damage()? {
                let aside = self.dir.join(format!(".git.broken-{}", crate::run::session::state::now_secs()));
                fs::rename(git_dir, &aside)
                    .map_err(|e| format!("cannot move the unusable {} aside ({e})", git_dir.display()))?;
                crate::run::ui::term::Term::stderr().warn(&format!(
                    "The checkpoint repository was damaged ({why}); it was moved to {} and a new series starts.",
                    aside.display()
                ));
            }
        }
        Ok(())
    }

    /// What is damaged in the repository, as git reports it: `Ok(None)` when it reads fine,
    /// `Err` when git could not tell (it did not run to the end, or failed for another reason).
    fn damage(&self) -> Result<Option<String>, String> {
        let head = fs::read(self.git.git_dir().join("HEAD"))
            .map_err(|e| format!("cannot read the checkpoint repository's HEAD ({e})"))?;
        let head = String::from_utf8_lossy(&head);
        let head = head.trim();
        if !(head.starts_with("ref: refs/") || (head.len() >= 40 && head.bytes().all(|b| b.is_ascii_hexdigit()))) {
            return Ok(Some("its HEAD is not a reference".into()));
        }
        let run = |args: &[&str]| -> Result<super::git::Output, String> {
            let out = self.git.run(args, None).map_err(|e| format!("cannot run git: {e}"))?;
            match out.code {
                Some(_) => Ok(out),
                None => Err(format!("git {} was killed", args.join(" "))),
            }
        };
        let commit = run(&["rev-parse", "--verify", "-q", "HEAD^{commit}"])?;
        match commit.code {
            Some(0) => {}
            // No such commit: either no checkpoint yet, or the branch names an object that is gone.
            Some(1) if commit.stderr.trim().is_empty() => {
                let named = run(&["rev-parse", "--verify", "-q", "HEAD"])?;
                if named.ok() {
                    return Ok(Some(format!("its last checkpoint {} is missing", named.text().trim())));
                }
            }
            _ => return corrupt_or_unknown(&commit.stderr),
        }
        // Reading the index checks its checksum; the pathspec keeps the output empty.
        let index = run(&["ls-files", "-z", "--", ".git/no such file"])?;
        if !index.ok() {
            return corrupt_or_unknown(&index.stderr);
        }
        Ok(None)
    }

    /// The current commit, if any.
    pub(crate) fn head(&self) -> Option<String> {
        let out = self.git.run(&["rev-parse", "--verify", "-q", "HEAD^{commit}"], None).ok()?;
        out.ok().then(|| out.text().trim().to_string())
    }

    /// Stages the workspace as it is now (lock held by the caller). Returns what was left out;
    /// a path left out is not in the index at all (not even as an earlier checkpoint staged
    /// it), so no checkpoint holds a stale copy of it and no restore deletes it.
    fn stage(&self) -> Result<(Vec<String>, Vec<Vec<u8>>), String> {
        self.sync_index()?;
        let _nested = nested::disable(&self.workspace, &self.state_dir().join("checkpoints"), &self.journal())?;
        let listing = self.git.check(&["ls-files", "-z", "--others", "--modified", "--exclude-standard"], None)?;
        let mut paths: Vec<&[u8]> = listing.stdout.split(|b| *b == 0).filter(|p| !p.is_empty()).collect();
        paths.sort_unstable();
        paths.dedup();
        let mut left_out = Vec::new();
        let mut untrack: Vec<Vec<u8>> = Vec::new();
        // Everything but the files over the limit: `.` and one exclusion each (a pathspec per
        // file would make git match every path against every pathspec).
        let mut input = b".\0".to_vec();
        for p in &paths {
            use std::os::unix::ffi::OsStrExt;
            let rel = Path::new(std::ffi::OsStr::from_bytes(p));
            if let Ok(m) = fs::symlink_metadata(self.workspace.join(rel)) {
                if m.is_file() && m.len() > exclusions::MAX_FILE_BYTES {
                    left_out.push(format!("{} (over {} MiB)", rel.display(), exclusions::MAX_FILE_BYTES >> 20));
                    input.extend_from_slice(b":(exclude,literal)");
                    input.extend_from_slice(p);
                    input.push(0);
                    untrack.push(p.to_vec());
                }
            }
        }
        if !paths.is_empty() {
            // Many new files (a first checkpoint): git streams them into one pack instead of
            // writing a file per object — 5x faster for 10,000 files. Only for `add`: the same
            // setting would make `diff` treat every file as binary.
            let threshold =
                if paths.len() > BULK_FILES { "core.bigFileThreshold=1" } else { "core.bigFileThreshold=512m" };
            let args =
                ["-c", threshold, "add", "-A", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul"];
            let out = self.git.run_with(&args, Some(&input), false).map_err(|e| format!("cannot run git: {e}"))?;
            for (path, entry) in unreadable(&out.stderr)? {
                untrack.push(path.into_bytes());
                left_out.push(entry);
            }
        }
        // An earlier checkpoint may have staged the path when it was small (or readable).
        self.untrack(&untrack)?;
        Ok((left_out, untrack))
    }

    /// Removes `paths` (workspace-relative) from the index, leaving the files as they are.
    fn untrack(&self, paths: &[Vec<u8>]) -> Result<(), String> {
        if paths.is_empty() {
            return Ok(());
        }
        let mut input = Vec::new();
        for path in paths {
            // Mode 0 removes the entry (a path not in the index is no error).
            input.extend_from_slice(b"0 0000000000000000000000000000000000000000\t");
            input.extend_from_slice(path);
            input.push(0);
        }
        self.git.check(&["update-index", "-z", "--index-info"], Some(&input))?;
        Ok(())
    }

    /// The checkpoint of only `paths` (absolute, as an edit tool wrote them) over `base`, the
    /// series' previous checkpoint, built from `base`'s trees along each path without reading
    /// the index (which grows with the workspace). `None` when only the whole scan is exact:
    /// `base` is not the last commit (another process took one, or a restore), a path that is
    /// gone, a directory or a symlink, unreadable, a `.gitignore` or `.gitattributes` (which
    /// files are left out may have changed), inside a nested repository.
    fn commit_paths(&self, paths: &[PathBuf], base: &str, message: &str) -> Result<Option<Taken>, String> {
        use std::os::unix::fs::PermissionsExt;
        // Before anything is read: a file made before this instant was there when it was taken.
        let taken = files_clock();
        if self.head().as_deref() != Some(base) {
            return Ok(None);
        }
        let mut tree = self.git.check(&["rev-parse", "--verify", &format!("{base}^{{tree}}")], None)?.text();
        tree.truncate(tree.trim_end().len());
        let (mut files, mut left_out, mut left_out_paths) = (Vec::new(), Vec::new(), Vec::new());
        for abs in paths {
            // Written outside the workspace: nothing of it is checkpointed.
            let Some(rel) = self.relative(abs) else { continue };
            let Some(rel_text) = rel.to_str().filter(|t| !t.contains('\n')) else { return Ok(None) };
            let name = rel.file_name().unwrap_or_default();
            if name == ".gitignore" || name == ".gitattributes" || self.in_nested_repository(&rel) {
                return Ok(None);
            }
            let mode = match fs::symlink_metadata(self.workspace.join(&rel)) {
                Ok(m) if m.is_file() && m.len() > exclusions::MAX_FILE_BYTES => {
                    // Its earlier, small copy must leave the checkpoint: the whole scan does it.
                    let old = self.git.run(&["cat-file", "-e", &format!("{tree}:{rel_text}")], None);
                    if old.map_err(|e| format!("cannot run git: {e}"))?.ok() {
                        return Ok(None);
                    }
                    left_out.push(format!("{rel_text} (over {} MiB)", exclusions::MAX_FILE_BYTES >> 20));
                    left_out_paths.push(rel_text.as_bytes().to_vec());
                    continue;
                }
                // git's own rule: executable when its owner may execute it.
                Ok(m) if m.is_file() && m.permissions().mode() & 0o100 != 0 => "100755",
                Ok(m) if m.is_file() => "100644",
                _ => return Ok(None),
            };
            // The folders from the root down to the file's, as they are in `tree`.
            let dirs: Vec<&str> =
                std::iter::once("").chain(rel_text.match_indices('/').map(|(i, _)| &rel_text[..i])).collect();
            let mut listings = Vec::new();
            for dir in &dirs {
                let out = self.git.run(&["ls-tree", "-z", &format!("{tree}:{dir}")], None);
                let out = out.map_err(|e| format!("cannot run git: {e}"))?;
                // A folder not in the tree yet is empty. One naming a file in bytes that are
                // not UTF-8 is left to the whole scan: its name, read as text, went back into
                // the tree mangled (U+FFFD), and a restore then wrote the mangled name.
                listings.push(match out.ok() {
                    false => String::new(),
                    true => match String::from_utf8(out.stdout) {
                        Ok(listing) => listing,
                        Err(_) => return Ok(None),
                    },
                });
            }
            let leaf = rel_text.rsplit('/').next().unwrap_or(rel_text);
            let tracked = entry(&listings[dirs.len() - 1], leaf).is_some();
            if !tracked {
                // As in the whole scan: an untracked ignored or excluded file is not added.
                // (check-ignore refuses the literal-pathspecs setting: exit 128 on every path;
                // without it `./` keeps a name like `:foo` from being read as pathspec magic.)
                let path = format!("./{rel_text}");
                let out = self.git.run_with(&["check-ignore", "-q", "--no-index", "--", &path], None, false);
                match out.map_err(|e| format!("cannot run git: {e}"))?.code {
                    Some(0) => continue,
                    Some(1) => {}
                    _ => return Ok(None),
                }
            }
            let blob = self.git.run(&["hash-object", "-w", "--no-filters", "--", rel_text], None);
            let blob = blob.map_err(|e| format!("cannot run git: {e}"))?;
            if !blob.ok() {
                return Ok(None);
            }
            let blob = blob.text().trim().to_string();
            if entry(&listings[dirs.len() - 1], leaf) == Some((mode.to_string(), blob.clone())) {
                continue;
            }
            // Bottom up: each folder's listing with the new entry, written as a tree.
            let (mut child_mode, mut child_type, mut child, mut child_name) = (mode, "blob", blob, leaf);
            for (i, dir) in dirs.iter().enumerate().rev() {
                let mut input = Vec::new();
                for line in listings[i].split('\0').filter(|l| !l.is_empty()) {
                    if line.split_once('\t').map(|(_, n)| n) != Some(child_name) {
                        input.extend_from_slice(line.as_bytes());
                        input.push(0);
                    }
                }
                input.extend_from_slice(format!("{child_mode} {child_type} {child}\t{child_name}\0").as_bytes());
                child = self.git.check(&["mktree", "-z"], Some(&input))?.text().trim().to_string();
                (child_mode, child_type) = ("040000", "tree");
                child_name = dir.rsplit('/').next().unwrap_or(dir);
            }
            tree = child;
            files.push(rel_text.to_string());
        }
        let marked = format!(
            "{}\n\n{TAKEN_AT}{}.{:09}\n{PATHS_ONLY}",
            with_left_out(message, &left_out, &left_out_paths),
            taken.tv_sec,
            taken.tv_nsec
        );
        // The message on stdin: its list of left-out files may be longer than one argument may.
        let hash = self.git.check(&["commit-tree", &tree, "-p", base, "-F", "-"], Some(marked.as_bytes()))?;
        let hash = hash.text().trim().to_string();
        self.git.check(&["update-ref", "-m", message, "HEAD", &hash, base], None)?;
        files.sort();
        files.dedup();
        Ok(Some(Taken { hash, files, left_out, left_out_paths }))
    }

    /// Before the whole scan: the index brought back to the last commit where checkpoints of
    /// paths only moved past it (their entries' stat data emptied, so `git add` reads them).
    fn sync_index(&self) -> Result<(), String> {
        let Some(head) = self.head() else { return Ok(()) };
        let out = self.git.check(&["diff-index", "--cached", "--no-renames", "--name-only", "-z", &head], None)?;
        if out.stdout.is_empty() {
            return Ok(());
        }
        let mut input = Vec::new();
        let listed = self.git.check(&["ls-tree", "-r", "-z", "--full-tree", &head], None);
        let listed = listed?.stdout;
        let differ: std::collections::HashSet<&[u8]> =
            out.stdout.split(|b| *b == 0).filter(|p| !p.is_empty()).collect();
        let mut in_head = std::collections::HashSet::new();
        for line in listed.split(|b| *b == 0).filter(|l| !l.is_empty()) {
            let Some(tab) = line.iter().position(|b| *b == b'\t') else { continue };
            let path = &line[tab + 1..];
            if differ.contains(path) {
                in_head.insert(path);
                input.extend_from_slice(line);
                input.push(0);
            }
        }
        for path in differ.iter().filter(|p| !in_head.contains(*p)) {
            // Mode 0 removes the entry.
            input.extend_from_slice(b"0 0000000000000000000000000000000000000000\t");
            input.extend_from_slice(path);
            input.push(0);
        }
        self.git.check(&["update-index", "-z", "--index-info"], Some(&input))?;
        Ok(())
    }

    /// `abs` relative to the workspace, its directory's symlinks resolved; `None` if outside.
    fn relative(&self, abs: &Path) -> Option<PathBuf> {
        let name = abs.file_name()?;
        let dir = abs.parent()?;
        let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        let rel = dir.strip_prefix(&self.workspace).ok()?.join(name);
        rel.components().all(|c| matches!(c, std::path::Component::Normal(_))).then_some(rel)
    }

    /// Whether a folder above `rel` (below the workspace) holds a `.git`.
    fn in_nested_repository(&self, rel: &Path) -> bool {
        rel.ancestors().skip(1).filter(|a| !a.as_os_str().is_empty()).any(|a| {
            a.file_name() == Some(".git".as_ref()) || fs::symlink_metadata(self.workspace.join(a).join(".git")).is_ok()
        })
    }

    /// Takes a checkpoint of the whole workspace with `message`; its files are those changed
    /// since `since` (the series' previous checkpoint; everything for the first, or if that
    /// commit is gone). `None` when `skip_unchanged` and nothing changed since `since`. The
    /// caller holds the lock.
    pub fn snapshot(&self, message: &str, since: Option<&str>, skip_unchanged: bool) -> Result<Option<Taken>, String> {
        self.snapshot_of(Scope::All, message, since, skip_unchanged)
    }

    /// [`Shadow::snapshot`] looking at `scope` only: after an edit tool, the paths it wrote.
    pub fn snapshot_of(
        &self,
        scope: Scope<'_>,
        message: &str,
        since: Option<&str>,
        skip_unchanged: bool,
    ) -> Result<Option<Taken>, String> {
        if let (Scope::Paths(paths), Some(base), false) = (scope, since, skip_unchanged) {
            if let Some(taken) = self.commit_paths(paths, base, message)? {
                return Ok(Some(taken));
            }
        }
        let (left_out, left_out_paths) = self.stage()?;
        let since =
            since.filter(|h| self.git.run(&["cat-file", "-e", &format!("{h}^{{commit}}")], None).is_ok_and(|o| o.ok()));
        // The commit from the index as staged: `git commit` would first re-examine every file
        // of the workspace again (5x slower on 10,000 files).
        let tree = self.git.check(&["write-tree"], None)?.text().trim().to_string();
        // Tree against tree: only the subtrees that differ are read.
        let files = self.changed_between(since.unwrap_or(EMPTY_TREE), &tree)?;
        if skip_unchanged && files.is_empty() && since.is_some() {
            return Ok(None);
        }
        let head = self.head();
        let full = with_left_out(message, &left_out, &left_out_paths);
        let mut args = vec!["commit-tree", tree.as_str(), "-F", "-"];
        if let Some(parent) = &head {
            args.extend(["-p", parent.as_str()]);
        }
        let hash = self.git.check(&args, Some(full.as_bytes()))?.text().trim().to_string();
        let old = head.unwrap_or_default();
        self.git.check(&["update-ref", "-m", message, "HEAD", &hash, &old], None)?;
        Ok(Some(Taken { hash, files, left_out, left_out_paths }))
    }

    /// `(status letter, path)` of each file that differs between `from` and `to`, or between
    /// `from` and the workspace now (`to` = `None`; stages the workspace, lock held by the caller).
    pub(crate) fn changes(&self, from: &str, to: Option<&str>) -> Result<Vec<(char, String)>, String> {
        let mut args = vec!["diff", "--no-renames", "--name-status", "-z"];
        match to {
            Some(to) => args.extend([from, to]),
            None => {
                self.stage()?;
                args.extend(["--cached", from]);
            }
        }
        let out = self.git.check(&args, None)?;
        let mut fields = out.stdout.split(|b| *b == 0).filter(|p| !p.is_empty());
        let mut v = Vec::new();
        while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
            v.push((status.first().map_or('?', |c| *c as char), String::from_utf8_lossy(path).into_owned()));
        }
        Ok(v)
    }

    /// Paths that differ between commits (or trees) `from` and `to`.
    pub(crate) fn changed_between(&self, from: &str, to: &str) -> Result<Vec<String>, String> {
        let out = self.git.check(&["diff-tree", "-r", "--no-renames", "--name-only", "-z", from, to], None)?;
        Ok(nul_paths(&out.stdout).collect())
    }

    /// A unified diff from `from` to `to` (or to the workspace now; lock held by the caller).
    pub(crate) fn diff(&self, from: &str, to: Option<&str>) -> Result<Vec<u8>, String> {
        let mut args = vec!["diff", "--no-color", "--no-ext-diff", "--no-renames", "--binary"];
        match to {
            Some(to) => args.extend([from, to]),
            None => {
                self.stage()?;
                args.extend(["--cached", from]);
            }
        }
        // `diff --cached X` compares X (the old side) with the index (the workspace now).
        Ok(self.git.check(&args, None)?.stdout)
    }

    /// The tree of what the shadow repository knew the workspace to be after commit `at`: its
    /// own tree, or, when `at` is the checkpoint a files restore took first, the tree that
    /// restore put back (what Cline's index holds after its `git reset --hard`).
    fn known_tree(&self, at: &str) -> String {
        let restored = fs::read_to_string(self.restored_file()).unwrap_or_default();
        match restored.split_whitespace().collect::<Vec<_>>()[..] {
            [undo, target] if undo == at => target.to_string(),
            _ => at.to_string(),
        }
    }

    /// Where the last files restore notes `UNDO TARGET`: its pre-restore checkpoint and the
    /// checkpoint it put back.
    fn restored_file(&self) -> PathBuf {
        self.dir.join("restored")
    }

    /// After [`Shadow::changes`] to the workspace now: the files created since the last
    /// checkpoint (of any task of the workspace) or files restore, which a restore leaves
    /// alone unless the checkpoint restored has them.
    pub(crate) fn created_since_last(&self) -> Result<std::collections::HashSet<String>, String> {
        let Some(head) = self.head() else { return Ok(Default::default()) };
        let known = self.known_tree(&head);
        let args = ["diff-index", "--cached", "--no-renames", "--diff-filter=A", "--name-only", "-z", &known];
        let out = self.git.check(&args, None)?;
        Ok(nul_paths(&out.stdout).collect())
    }

    /// Paths (bytes) in `to` but not in `from` (trees or commits).
    fn added(&self, from: &str, to: &str) -> Result<std::collections::HashSet<Vec<u8>>, String> {
        let args = ["diff-tree", "-r", "--no-renames", "--diff-filter=A", "--name-only", "-z", from, to];
        let out = self.git.check(&args, None)?;
        Ok(out.stdout.split(|b| *b == 0).filter(|p| !p.is_empty()).map(<[u8]>::to_vec).collect())
    }

    /// The whole message of commit `c`: what a checkpoint records beside its tree (the files
    /// it left out, when an edit's was taken).
    fn message_of(&self, c: &str) -> Result<String, String> {
        Ok(self.git.check(&["log", "-1", "--format=%B", c], None)?.text())
    }

    /// What checkpoint `hash` left out: every entry its commit message lists (the task's
    /// record keeps only the first 50), and `recorded`, the record's (a checkpoint taken before
    /// the message listed them).
    fn left_out_at(&self, hash: &str, recorded: &[String]) -> Result<Vec<Vec<u8>>, String> {
        let message = self.message_of(hash)?;
        let mut all: Vec<Vec<u8>> = message.lines().filter_map(left_out_line).collect();
        all.extend(recorded.iter().map(|e| left_out_path(e).as_bytes().to_vec()));
        Ok(all)
    }

    /// The files that were there when checkpoint `hash` was taken though it does not hold
    /// them: when it holds the edited paths only, those the first whole scan after it (on the
    /// way to `now`) found new and that were made before it was taken, by their birth time —
    /// all of them where the file system keeps none, or the checkpoint's message says no time
    /// (the safe side: a file kept, never one lost). A restore to `hash` leaves them, as
    /// Cline's checkpoint — a whole scan — would have held them (a note the person wrote before
    /// an edit was deleted); what a command made after it goes, as in Cline, and so does a
    /// file a command moved (its birth time is its old path's: both would stay). Empty for a
    /// whole scan.
    fn unknown_at(&self, hash: &str, now: &str) -> Result<std::collections::HashSet<Vec<u8>>, String> {
        let message = |c: &str| self.message_of(c);
        let first = message(hash)?;
        if !first.trim_end().ends_with(PATHS_ONLY) {
            return Ok(Default::default());
        }
        let taken = first.lines().find_map(|l| l.strip_prefix(TAKEN_AT)).and_then(parse_instant);
        let later = self.git.check(&["rev-list", "--reverse", "--ancestry-path", &format!("{hash}..{now}")], None)?;
        for c in later.text().lines() {
            if message(c)?.trim_end().ends_with(PATHS_ONLY) {
                continue;
            }
            let mut found = self.added(&format!("{c}^"), c)?;
            let moved = self.moved_to(hash, c)?;
            found.retain(|p| {
                use std::os::unix::ffi::OsStrExt;
                let on_disk = self.workspace.join(std::ffi::OsStr::from_bytes(p));
                let born = fs::symlink_metadata(on_disk).ok().and_then(|m| m.created().ok());
                !moved.contains(p)
                    && match (taken, born) {
                        (Some(taken), Some(born)) => born < taken,
                        _ => true,
                    }
            });
            return Ok(found);
        }
        Ok(Default::default())
    }

    /// The paths of `to` that are a file of `from` moved there, whole (`git diff-tree -M100%`).
    fn moved_to(&self, from: &str, to: &str) -> Result<std::collections::HashSet<Vec<u8>>, String> {
        let args = ["diff-tree", "-r", "-z", "-M100%", "--diff-filter=R", "--name-status", from, to];
        let out = self.git.check(&args, None)?;
        let fields: Vec<&[u8]> = out.stdout.split(|b| *b == 0).collect();
        // `R100 NUL old NUL new NUL` per move.
        Ok(fields.chunks(3).filter(|f| f.len() == 3 && f[0].starts_with(b"R")).map(|f| f[2].to_vec()).collect())
    }

    /// Puts the workspace's files back as at `hash` (lock held by the caller): files tracked
    /// now but not then are removed — except those created since the last checkpoint, left
    /// alone as Cline's `git reset --hard` leaves untracked files, and those the checkpoint had
    /// to leave out (`left_out_then`, its record's: they existed then, and deleting them would
    /// lose what the checkpoint never held); excluded, ignored and left-out files are never
    /// touched. Refuses, naming them, if it would overwrite files the pre-restore checkpoint
    /// `before` had to leave out.
    pub(crate) fn restore(&self, hash: &str, left_out_then: &[String], before: &Taken) -> Result<(), RestoreFailed> {
        self.prepare_restore(hash, left_out_then, before).map_err(|why| RestoreFailed { why, touched: false })?;
        let _nested = nested::disable(&self.workspace, &self.state_dir().join("checkpoints"), &self.journal())
            .map_err(|why| RestoreFailed { why, touched: false })?;
        // From here the workspace may change: git writes file after file, and one it cannot
        // write (a folder made read-only) or a kill ends it midway.
        let written = self.git.check(&["read-tree", "-u", "--reset", hash], None);
        // Without this note the next restore takes `before` as what was known: it then deletes
        // more of what is new, which `before` and its own pre-restore checkpoint still hold —
        // or, after a restore that failed midway, leaves the files it wrote.
        let _ = fs::write(self.restored_file(), format!("{} {hash}\n", before.hash));
        written.map(|_| ()).map_err(|why| RestoreFailed { why, touched: true })
    }

    /// What a restore checks and sets up before it changes the workspace: refuses what would
    /// lose files no checkpoint holds, and untracks what it leaves alone.
    fn prepare_restore(&self, hash: &str, left_out_then: &[String], before: &Taken) -> Result<(), String> {
        self.git.check(&["cat-file", "-e", &format!("{hash}^{{commit}}")], None).map_err(|_| {
            format!("checkpoint commit {hash} is not in the shadow repository {}", self.git.git_dir().display())
        })?;
        let mut unsaved = Vec::new();
        for (entry, path) in before.left_out.iter().zip(&before.left_out_paths) {
            use std::os::unix::ffi::OsStrExt;
            let args = ["ls-tree", "--name-only", hash, "--"].map(std::ffi::OsStr::new);
            let out = self.git.run_os(&[&args[..], &[std::ffi::OsStr::from_bytes(path)]].concat(), None, true);
            let out = out.map_err(|e| format!("cannot run git: {e}"))?;
            if !out.ok() {
                return Err(format!("git ls-tree failed: {}", first_lines(out.stderr.trim(), 3)));
            }
            if !out.stdout.is_empty() {
                unsaved.push(entry.clone());
            }
        }
        if !unsaved.is_empty() {
            return Err(format!(
                "not restored: it would overwrite files the checkpoint of the current state could not save: {}; move them away first",
                unsaved.join(", ")
            ));
        }
        // Created since the last checkpoint (in `before`, not in what was known before it) and
        // not in the checkpoint restored: untracked, so `read-tree` neither deletes nor writes it.
        let parent = self.git.run(&["rev-parse", "--verify", "-q", &format!("{}^", before.hash)], None);
        let parent = parent.map_err(|e| format!("cannot run git: {e}"))?;
        let known = if parent.ok() { self.known_tree(parent.text().trim()) } else { EMPTY_TREE.to_string() };
        let not_in_target = self.added(hash, &before.hash)?;
        let mut new: Vec<Vec<u8>> =
            self.added(&known, &before.hash)?.into_iter().filter(|p| not_in_target.contains(p)).collect();
        new.extend(kept_left_out(&self.left_out_at(hash, left_out_then)?, &not_in_target));
        new.extend(self.unknown_at(hash, &before.hash)?.into_iter().filter(|p| not_in_target.contains(p)));
        new.sort();
        new.dedup();
        let lost = self.lost_with_folders(hash, &before.hash)?;
        if !lost.is_empty() {
            return Err(format!(
                "not restored: where the checkpoint has a file the workspace now has a folder, and putting the file back would delete what no checkpoint holds in it: {}; move them away first",
                lost.join(", ")
            ));
        }
        self.untrack(&new)
    }

    /// The files a restore to `hash` (whose checkpoint left out `left_out_then`) leaves as they
    /// are: those created since the last checkpoint, those the checkpoint left out that a
    /// later one saved (`git` would delete them), and those it cannot know of
    /// ([`Shadow::unknown_at`]). Lock held by the caller.
    pub(crate) fn kept_by_restore(&self, hash: &str, left_out_then: &[String]) -> Result<Vec<String>, String> {
        let head =
            self.git.run(&["rev-parse", "--verify", "-q", "HEAD"], None).map_err(|e| format!("cannot run git: {e}"))?;
        let now = if head.ok() { head.text().trim().to_string() } else { return Ok(Vec::new()) };
        let not_in_target = self.added(hash, &now)?;
        let mut kept = kept_left_out(&self.left_out_at(hash, left_out_then)?, &not_in_target);
        kept.extend(self.unknown_at(hash, &now)?.into_iter().filter(|p| not_in_target.contains(p)));
        kept.sort();
        kept.dedup();
        Ok(kept.into_iter().map(|p| String::from_utf8_lossy(&p).into_owned()).collect())
    }

    /// What restoring `hash` over `before` would delete that no checkpoint holds (at most
    /// [`LOST_NAMED`] of them): where `hash` has a file or link and the workspace a folder,
    /// `read-tree` removes the whole folder — its ignored, excluded and left-out files, a
    /// nested repository's `.git` — as Cline's `reset --hard` does. (Files created since the
    /// last checkpoint go too, though a restore leaves them elsewhere: `before` holds them.)
    fn lost_with_folders(&self, hash: &str, before: &str) -> Result<Vec<String>, String> {
        use std::os::unix::ffi::OsStrExt;
        let mut folders = Vec::new();
        for p in self.added(before, hash)? {
            let on_disk = self.workspace.join(std::ffi::OsStr::from_bytes(&p));
            if fs::symlink_metadata(&on_disk).is_ok_and(|m| m.is_dir()) {
                folders.push(p);
            }
        }
        if folders.is_empty() {
            return Ok(Vec::new());
        }
        let listed = self.git.check(&["ls-tree", "-r", "--name-only", "-z", before], None)?;
        let saved: std::collections::HashSet<&[u8]> =
            listed.stdout.split(|b| *b == 0).filter(|p| !p.is_empty()).collect();
        let mut lost = Vec::new();
        for folder in folders {
            unsaved_under(&self.workspace, folder, &saved, &mut lost);
        }
        Ok(lost)
    }

    /// git's own housekeeping when it is due (`gc --auto`: over 6,700 loose objects or 50
    /// packs), as Cline's `git commit` does after every checkpoint; our plumbing (`commit-tree`,
    /// `hash-object`, bulk `add`s into packs of their own) starts none, so the repository grew
    /// for good. Returned to be run on a thread of its own that no tool waits for; it takes the
    /// lock, so no checkpoint runs beside it (git warns that gc beside a writer may prune an
    /// object just written, and the lock's clean-up of stale lock files would take its own). A
    /// failure, or the end of the process, only leaves it untidy.
    pub fn tidy(&self) -> impl FnOnce() + Send + 'static {
        self.tidy_with(&[])
    }

    fn tidy_with(&self, settings: &[&str]) -> impl FnOnce() + Send + 'static {
        let git = self.git.clone();
        let mut args: Vec<String> = settings.iter().map(|s| s.to_string()).collect();
        args.extend(["gc", "--auto", "--quiet"].map(String::from));
        let lock_file = self.dir.join("lock");
        move || {
            let Ok(_held) = lock::acquire(&lock_file, lock::WAIT) else { return };
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let _ = git.run(&args, None);
        }
    }

    /// Bytes the shadow repository takes on disk.
    pub fn disk_bytes(&self) -> u64 {
        fn walk(p: &Path) -> u64 {
            let Ok(m) = fs::symlink_metadata(p) else { return 0 };
            if !m.is_dir() {
                use std::os::unix::fs::MetadataExt;
                return m.blocks() * 512;
            }
            fs::read_dir(p).map(|es| es.flatten().map(|e| walk(&e.path())).sum()).unwrap_or(0)
        }
        walk(self.git.git_dir())
    }
}

/// Why a files restore failed, and whether the workspace may have changed by then (partly
/// restored: the pre-restore checkpoint is then the way back).
#[derive(Debug)]
pub(crate) struct RestoreFailed {
    /// What went wrong.
    pub why: String,
    /// Whether git had begun writing the workspace.
    pub touched: bool,
}

/// The last line of the message of a checkpoint of the edited paths only (`commit_paths`).
const PATHS_ONLY: &str = "Scope: the edited paths only";

/// The line of an edit's checkpoint's message that says when it was taken (the clock file
/// times are written by: `seconds.nanoseconds`).
const TAKEN_AT: &str = "Taken at: ";

/// Now, by the clock the kernel stamps files with (`CLOCK_REALTIME_COARSE`): a file made
/// after this instant never has an earlier birth time.
fn files_clock() -> rustix::time::Timespec {
    rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse)
}

/// `seconds.nanoseconds` as an instant.
fn parse_instant(text: &str) -> Option<std::time::SystemTime> {
    let (secs, nanos) = text.trim().split_once('.')?;
    let at = std::time::Duration::new(secs.parse().ok()?, nanos.parse().ok()?);
    Some(std::time::UNIX_EPOCH + at)
}

/// The start of each line of a checkpoint's message that names a file it left out.
const LEFT_OUT: &str = "Left out: ";
/// The same, for a name that is not UTF-8 or holds a line break: written escaped (`\\`, `\n`,
/// `\xHH` for each byte that is not UTF-8).
const LEFT_OUT_ESCAPED: &str = "Left out, escaped: ";

/// A checkpoint's message: `message`, then a line per file it left out (all of them: a
/// restore to it leaves them alone, and the task's record keeps only the first 50), its name
/// written so that it reads back as the same bytes.
fn with_left_out(message: &str, left_out: &[String], paths: &[Vec<u8>]) -> String {
    let mut full = message.to_string();
    if !left_out.is_empty() {
        full.push('\n');
    }
    for (entry, path) in left_out.iter().zip(paths) {
        match std::str::from_utf8(path) {
            Ok(name) if !name.contains('\n') && entry.starts_with(name) => {
                full.push_str(&format!("\n{LEFT_OUT}{entry}"));
            }
            _ => {
                let why = &entry[entry.rfind(" (").unwrap_or(entry.len())..];
                full.push_str(&format!("\n{LEFT_OUT_ESCAPED}{}{}", escape_name(path), why.replace('\n', " ")));
            }
        }
    }
    full
}

/// The path a line of a checkpoint's message names as left out, if it names one.
fn left_out_line(line: &str) -> Option<Vec<u8>> {
    if let Some(entry) = line.strip_prefix(LEFT_OUT) {
        return Some(left_out_path(entry).as_bytes().to_vec());
    }
    line.strip_prefix(LEFT_OUT_ESCAPED).map(|entry| unescape_name(left_out_path(entry)))
}

/// `name` as text: `\` and a line break escaped, and each byte that is not UTF-8 as `\xHH`.
fn escape_name(name: &[u8]) -> String {
    let mut out = String::new();
    for chunk in name.utf8_chunks() {
        out.push_str(&chunk.valid().replace('\\', "\\\\").replace('\n', "\\n"));
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// The bytes [`escape_name`] wrote as `text`.
fn unescape_name(text: &str) -> Vec<u8> {
    let (bytes, mut out) = (text.as_bytes(), Vec::new());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        let hex = rest.get(2..4).and_then(|h| std::str::from_utf8(h).ok()).and_then(|h| u8::from_str_radix(h, 16).ok());
        match (rest, hex) {
            ([b'\\', b'x', ..], Some(b)) => (out.push(b), i += 4),
            ([b'\\', b'n', ..], _) => (out.push(b'\n'), i += 2),
            ([b'\\', b'\\', ..], _) => (out.push(b'\\'), i += 2),
            _ => (out.push(rest[0]), i += 1),
        };
    }
    out
}

/// Files of a restore's loss named, at most.
const LOST_NAMED: usize = 10;

/// Adds to `lost` the files under the workspace's folder `rel` (links not followed) that are
/// not in `saved`; a `.git` folder is named whole, unread.
fn unsaved_under(ws: &Path, rel: Vec<u8>, saved: &std::collections::HashSet<&[u8]>, lost: &mut Vec<String>) {
    use std::os::unix::ffi::OsStrExt;
    let Ok(entries) = fs::read_dir(ws.join(std::ffi::OsStr::from_bytes(&rel))) else { return };
    for e in entries.flatten() {
        if lost.len() >= LOST_NAMED {
            return;
        }
        let mut path = rel.clone();
        path.push(b'/');
        path.extend_from_slice(e.file_name().as_bytes());
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && e.file_name() != ".git" {
            unsaved_under(ws, path, saved, lost);
        } else if is_dir || !saved.contains(path.as_slice()) {
            lost.push(String::from_utf8_lossy(&path).into_owned());
        }
    }
}

/// Re-enables the nested repositories a killed checkpoint left disabled, in every workspace
/// with checkpoints under `state_dir` (what `agent-min checkpoints` does first, whichever task
/// it is asked about). A workspace whose lock is held is skipped: its checkpoint is still
/// running and puts them back itself. Returns what could not be done.
pub(crate) fn reenable_nested(state_dir: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let Ok(entries) = fs::read_dir(state_dir.join("checkpoints")) else { return problems };
    for dir in entries.flatten().map(|e| e.path()) {
        let journal = dir.join("nested-disabled");
        if !journal.is_file() {
            continue;
        }
        let Ok(_held) = lock::acquire(&dir.join("lock"), std::time::Duration::ZERO) else { continue };
        if let Err(e) = nested::repair(&journal) {
            problems.push(e);
        }
    }
    problems
}

/// The `(mode, object)` of `name` in an `ls-tree -z` listing.
fn entry(listing: &str, name: &str) -> Option<(String, String)> {
    listing.split('\0').find_map(|line| {
        let (meta, n) = line.split_once('\t')?;
        let mut parts = meta.split(' ');
        (n == name).then(|| (parts.next().unwrap_or("").to_string(), parts.nth(1).unwrap_or("").to_string()))
    })
}

/// git's own words for a damaged repository (`Ok(Some)`), or anything else as an error.
fn corrupt_or_unknown(stderr: &str) -> Result<Option<String>, String> {
    const DAMAGE: [&str; 8] = [
        "corrupt",
        "bad signature",
        "smaller than expected",
        "unable to unpack",
        "inflate:",
        "bad object",
        "invalid object",
        "unknown index entry format",
    ];
    let said = first_lines(stderr.trim(), 2);
    if DAMAGE.iter().any(|d| stderr.contains(d)) {
        Ok(Some(said))
    } else {
        Err(format!("git cannot read the checkpoint repository: {said}"))
    }
}

/// `git version 2.47.3` → `(2, 47)`.
fn parse_version(text: &str) -> Option<(u32, u32)> {
    let v = text.trim().strip_prefix("git version ")?;
    let mut parts = v.split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// The files `git add --ignore-errors` could not read, from its messages
/// (`error: open("b"): Permission denied`), as (path, what to report); an error for anything
/// fatal.
fn unreadable(stderr: &str) -> Result<Vec<(String, String)>, String> {
    let mut v = Vec::new();
    for line in stderr.lines() {
        if let Some(rest) = line.strip_prefix("error: open(\"") {
            let (path, why) = rest.split_once("\"):").unwrap_or((rest, ""));
            v.push((path.to_string(), format!("{path} (unreadable:{why})")));
        } else if line.starts_with("fatal:") {
            return Err(format!("git add failed: {}", first_lines(line, 1)));
        }
    }
    Ok(v)
}

/// The paths of git's `-z` output (NUL-separated).
fn nul_paths(out: &[u8]) -> impl Iterator<Item = String> + '_ {
    out.split(|b| *b == 0).filter(|p| !p.is_empty()).map(|p| String::from_utf8_lossy(p).into_owned())
}

/// The path of a checkpoint's `left_out` entry ("path (why)").
fn left_out_path(entry: &str) -> &str {
    entry.rsplit_once(" (").map_or(entry, |(p, _)| p)
}

/// Of the paths a checkpoint left out, those a restore to it would delete (tracked since, not
/// in it: `not_in_target`), to be left alone.
fn kept_left_out(left_out_then: &[Vec<u8>], not_in_target: &std::collections::HashSet<Vec<u8>>) -> Vec<Vec<u8>> {
    left_out_then.iter().filter(|p| not_in_target.contains(*p)).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::test_files::write;

    #[test]
    fn git_versions_are_read() {
        assert_eq!(parse_version("git version 2.47.3\n"), Some((2, 47)));
        assert_eq!(parse_version("git version 2.39.5 (Apple Git-154)"), Some((2, 39)));
        assert_eq!(parse_version("hub version 1"), None);
    }

    #[test]
    fn unreadable_files_are_reported_from_gits_own_messages() {
        // What git 2.47 prints for a mode-000 file when not run as root (checked by hand).
        let stderr = "error: open(\"b\"): Permission denied\nerror: unable to index file 'b'\n";
        assert_eq!(unreadable(stderr).unwrap(), vec![("b".into(), "b (unreadable: Permission denied)".into())]);
        assert!(unreadable("fatal: index file corrupt\n").unwrap_err().contains("index file corrupt"));
    }

    struct Fixture {
        _dirs: (tempfile::TempDir, tempfile::TempDir),
        state: PathBuf,
        ws: PathBuf,
    }

    fn fixture() -> Fixture {
        let (s, w) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let ws = w.path().canonicalize().unwrap();
        Fixture { state: s.path().to_path_buf(), ws, _dirs: (s, w) }
    }

    fn snap(s: &Shadow, msg: &str) -> Taken {
        let _held = s.lock().unwrap();
        s.snapshot(msg, None, false).unwrap().unwrap()
    }

    #[test]
    fn exclusions_gitignore_and_the_size_limit_apply_and_the_users_git_is_untouched() {
        let f = fixture();
        write(&f.ws, "src/a.rs", "fn a() {}");
        write(&f.ws, "node_modules/x/index.js", "x");
        write(&f.ws, "photo.png", "png");
        write(&f.ws, ".gitignore", "secret.txt\n");
        write(&f.ws, "secret.txt", "s");
        write(&f.ws, ".git/HEAD", "ref: refs/heads/main\n");
        fs::write(f.ws.join("big.txt"), vec![b'x'; (exclusions::MAX_FILE_BYTES + 1) as usize]).unwrap();
        let before = fs::read(f.ws.join(".git/HEAD")).unwrap();
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        let t = snap(&s, "one");
        assert_eq!(t.files, vec![".gitignore", "src/a.rs"]);
        assert_eq!(t.left_out, vec!["big.txt (over 10 MiB)"]);
        assert_eq!(fs::read(f.ws.join(".git/HEAD")).unwrap(), before);
        assert_eq!(fs::read_dir(f.ws.join(".git")).unwrap().count(), 1, "nothing written in the user's .git");
        assert!(f.state.join("checkpoints").join(place::cwd_hash(&f.ws)).join(".git/HEAD").is_file());
    }

    #[test]
    fn a_state_directory_inside_the_workspace_is_left_out_and_its_repository_left_alone() {
        let w = tempfile::tempdir().unwrap();
        let ws = w.path().canonicalize().unwrap();
        let state = ws.join(".agent state");
        write(&ws, "src/a.rs", "fn a() {}");
        write(&state, "tasks/t1.json", "{}");
        let s = Shadow::open(&state, &ws).unwrap();
        let first = snap(&s, "one");
        assert_eq!(first.files, vec!["src/a.rs"]);
        write(&ws, "src/a.rs", "fn b() {}");
        write(&state, "tasks/t1.json", "{\"turns\": 2}");
        let _held = s.lock().unwrap();
        let second = s.snapshot("two", Some(&first.hash), false).unwrap().unwrap();
        assert_eq!(second.files, vec!["src/a.rs"]);
        assert!(state.join("checkpoints").join(place::cwd_hash(&ws)).join(".git/HEAD").is_file());
    }

    #[test]
    fn a_state_directory_that_is_the_workspace_leaves_its_tasks_and_repositories_out() {
        let w = tempfile::tempdir().unwrap();
        let ws = w.path().canonicalize().unwrap();
        write(&ws, "src/a.rs", "fn a() {}");
        write(&ws, "tasks/t1.json", "{}");
        // The person's hook approvals: a files restore must not roll them back.
        write(&ws, "hook-approvals.json", "{}");
        let s = Shadow::open(&ws, &ws).unwrap();
        assert_eq!(snap(&s, "one").files, vec!["src/a.rs"]);
    }

    #[test]
    fn many_new_files_go_into_one_pack_and_still_diff_as_text() {
        let f = fixture();
        for i in 0..(BULK_FILES + 10) {
            write(&f.ws, &format!("src/f{i}.txt"), &format!("line {i}\n"));
        }
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        let first = snap(&s, "first");
        assert_eq!(first.files.len(), BULK_FILES + 10);
        let loose = |s: &Shadow| {
            fs::read_dir(s.git.git_dir().join("objects"))
                .unwrap()
                .flatten()
                .filter(|e| e.file_name().len() == 2)
                .map(|e| fs::read_dir(e.path()).unwrap().count())
                .sum::<usize>()
        };
        // Only the trees and the commit are loose; the blobs are in a pack.
        assert!(loose(&s) <= 3, "{} loose objects", loose(&s));
        write(&f.ws, "src/f1.txt", "changed\n");
        let _held = s.lock().unwrap();
        let second = s.snapshot("second", Some(&first.hash), false).unwrap().unwrap();
        let diff = String::from_utf8(s.diff(&first.hash, Some(&second.hash)).unwrap()).unwrap();
        assert!(diff.contains("\n-line 1\n+changed\n"), "{diff}");
    }

    /// Packs and loose objects are gathered when git's limits are passed (here one pack).
    #[test]
    fn housekeeping_gathers_the_packs_once_due() {
        let f = fixture();
        let packs = |s: &Shadow| {
            let dir = s.git.git_dir().join("objects/pack");
            fs::read_dir(dir).unwrap().flatten().filter(|e| e.file_name().to_string_lossy().ends_with(".pack")).count()
        };
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        let mut last = None;
        for round in 0..3 {
            for i in 0..(BULK_FILES + 1) {
                write(&f.ws, &format!("r{round}/f{i}.txt"), &format!("{round} {i}\n"));
            }
            let _held = s.lock().unwrap();
            last = Some(s.snapshot("bulk", last.as_deref(), false).unwrap().unwrap().hash);
        }
        assert_eq!(packs(&s), 3, "a pack per bulk add");
        s.tidy()();
        assert_eq!(packs(&s), 3, "not due by git's own limits");
        s.tidy_with(&["-c", "gc.autoPackLimit=2"])();
        assert_eq!(packs(&s), 1);
        let _held = s.lock().unwrap();
        assert_eq!(s.snapshot("again", last.as_deref(), true).unwrap(), None, "everything is still there");
        let listed = s.git.check(&["ls-tree", "-r", "--name-only", last.as_deref().unwrap()], None).unwrap().text();
        assert_eq!(listed.lines().count(), 3 * (BULK_FILES + 1));
    }

    #[test]
    fn the_repository_grows_with_the_change_not_with_the_workspace() {
        let f = fixture();
        for i in 0..500 {
            write(&f.ws, &format!("src/m{}/f{i}.txt", i % 10), &format!("{i}\n").repeat(100));
        }
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        let mut last = snap(&s, "first").hash;
        let objects = |s: &Shadow| -> usize {
            let out = s.git.check(&["count-objects", "-v"], None).unwrap().text();
            let n = |k: &str| out.lines().find_map(|l| l.strip_prefix(k)).unwrap().trim().parse::<usize>().unwrap();
            n("count:") + n("in-pack:")
        };
        for round in 0..3 {
            let before = objects(&s);
            write(&f.ws, "src/m3/f3.txt", &format!("round {round}\n"));
            let _held = s.lock().unwrap();
            let t = s.snapshot("one file", Some(&last), false).unwrap().unwrap();
            assert_eq!(t.files, vec!["src/m3/f3.txt"]);
            // The file, the trees above it (src/m3, src, the root) and the commit: nothing else.
            assert_eq!(objects(&s) - before, 5, "round {round}");
            last = t.hash;
        }
    }

    /// A file the checkpoint left out (over 10 MiB then) that a later one saved (small since)
    /// is left as it is by a restore to it, and the plan says so: git would delete it, though
    /// it existed at the checkpoint (Cline, with no size limit, puts its content back).
    #[test]
    fn a_file_left_out_of_the_checkpoint_is_left_alone_by_a_restore_to_it() {
        let f = fixture();
        write(&f.ws, "a.txt", "one");
        fs::write(f.ws.join("data.txt"), vec![b'x'; (exclusions::MAX_FILE_BYTES + 1) as usize]).unwrap();
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        let first = snap(&s, "first");
        assert_eq!(first.left_out, vec![format!("data.txt (over {} MiB)", exclusions::MAX_FILE_BYTES >> 20)]);
        write(&f.ws, "data.txt", "small now");
        write(&f.ws, "a.txt", "two");
        let _held = s.lock().unwrap();
        let second = s.snapshot("second", Some(&first.hash), false).unwrap().unwrap();
        assert_eq!(second.files, vec!["a.txt", "data.txt"]);
        assert_eq!(s.kept_by_restore(&first.hash, &first.left_out).unwrap(), ["data.txt"]);
        let before = s.snapshot("before restore", None, false).unwrap().unwrap();
        s.restore(&first.hash, &first.left_out, &before).unwrap();
        assert_eq!(fs::read_to_string(f.ws.join("a.txt")).unwrap(), "one");
        assert_eq!(fs::read_to_string(f.ws.join("data.txt")).unwrap(), "small now");
    }

    /// A left-out file whose name is not UTF-8 is known by its bytes: a restore to the
    /// checkpoint that left it out leaves it alone, and one that would overwrite it while the
    /// current state leaves it out is refused. Its name read as text matched nothing, and the
    /// first restore deleted it, the second overwrote it.
    #[test]
    fn a_left_out_file_whose_name_is_not_utf8_is_known_by_its_bytes() {
        use std::os::unix::ffi::OsStrExt;
        // Not UTF-8, and with what the message's escapes and its "(why)" could be confused by.
        let name = std::ffi::OsStr::from_bytes(b"caf\xe9 (1)\\x41.txt");
        let f = fixture();
        // Sparse: over the limit without taking the disk.
        let big = || fs::File::create(f.ws.join(name)).unwrap().set_len(exclusions::MAX_FILE_BYTES + 1).unwrap();
        write(&f.ws, "a.txt", "one");
        big();
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        let first = snap(&s, "first");
        assert_eq!(first.left_out_paths, vec![name.as_bytes().to_vec()]);
        fs::write(f.ws.join(name), "small now").unwrap();
        write(&f.ws, "a.txt", "two");
        let _held = s.lock().unwrap();
        let second = s.snapshot("second", Some(&first.hash), false).unwrap().unwrap();
        let before = s.snapshot("before restore", None, false).unwrap().unwrap();
        s.restore(&first.hash, &first.left_out, &before).unwrap();
        assert_eq!(fs::read_to_string(f.ws.join("a.txt")).unwrap(), "one");
        assert_eq!(fs::read(f.ws.join(name)).unwrap(), b"small now");
        big();
        let before = s.snapshot("before restore", None, false).unwrap().unwrap();
        let refused = s.restore(&second.hash, &second.left_out, &before).unwrap_err();
        assert!(refused.why.contains("could not save") && !refused.touched, "{}", refused.why);
        assert_eq!(fs::metadata(f.ws.join(name)).unwrap().len(), exclusions::MAX_FILE_BYTES + 1);
    }

    /// A file the person made before an edit's checkpoint (which holds the edited paths only)
    /// and which the next whole scan saved is left alone by a restore to that checkpoint: it
    /// was deleted, though Cline's checkpoint, a whole scan, would have held it. What an edit
    /// or a command made after the checkpoint is still removed.
    #[test]
    fn a_restore_to_an_edits_checkpoint_keeps_the_files_it_could_not_know_of() {
        let f = fixture();
        write(&f.ws, "a.rs", "one");
        write(&f.ws, "old.txt", "moved by a command later");
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        let first = snap(&s, "first");
        let _held = s.lock().unwrap();
        write(&f.ws, "notes.md", "the person's notes");
        // The edit comes after the file clock has moved past the note's birth (seconds later,
        // in a real task: the model's turn).
        let born = fs::symlink_metadata(f.ws.join("notes.md")).unwrap().created().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let clock_now = || {
            let t = files_clock(); // one reading: seconds and nanoseconds of the same instant
            parse_instant(&format!("{}.{:09}", t.tv_sec, t.tv_nsec)).unwrap()
        };
        while clock_now() <= born {
            assert!(std::time::Instant::now() < deadline, "the file clock did not move");
            std::thread::yield_now();
        }
        write(&f.ws, "a.rs", "two");
        let edit = s.snapshot_of(Scope::Paths(&[f.ws.join("a.rs")]), "edit", Some(&first.hash), false);
        let edit = edit.unwrap().unwrap();
        assert_eq!(edit.files, vec!["a.rs"]);
        write(&f.ws, "later.rs", "written by the next edit");
        let next = s.snapshot_of(Scope::Paths(&[f.ws.join("later.rs")]), "edit 2", Some(&edit.hash), false);
        let next = next.unwrap().unwrap();
        // A command then writes a file, and moves one (which keeps its birth time): made or
        // moved after the edit's checkpoint, they go, as in Cline.
        write(&f.ws, "made.txt", "a command's output");
        fs::rename(f.ws.join("old.txt"), f.ws.join("new.txt")).unwrap();
        let command = s.snapshot("command", Some(&next.hash), false).unwrap().unwrap();
        assert_eq!(command.files, vec!["made.txt", "new.txt", "notes.md", "old.txt"]);
        assert_eq!(s.kept_by_restore(&edit.hash, &[]).unwrap(), ["notes.md"]);
        assert!(s.kept_by_restore(&first.hash, &[]).unwrap().is_empty(), "a whole scan knows");
        let before = s.snapshot("before restore", None, false).unwrap().unwrap();
        s.restore(&edit.hash, &[], &before).unwrap();
        assert_eq!(fs::read_to_string(f.ws.join("notes.md")).unwrap(), "the person's notes");
        assert_eq!(fs::read_to_string(f.ws.join("a.rs")).unwrap(), "two");
        assert!(!f.ws.join("later.rs").exists(), "made after the checkpoint");
        assert!(!f.ws.join("made.txt").exists(), "made after the checkpoint, by a command");
        assert!(!f.ws.join("new.txt").exists(), "moved after the checkpoint");
        assert_eq!(fs::read_to_string(f.ws.join("old.txt")).unwrap(), "moved by a command later");
    }

    /// The task's record keeps the first 50 files a checkpoint left out; a restore leaves all
    /// of them alone (it deleted the 51st and later ones).
    #[test]
    fn every_file_left_out_is_left_alone_though_the_record_names_fifty() {
        let f = fixture();
        write(&f.ws, "a.txt", "one");
        let names: Vec<String> = (0..55).map(|i| format!("data{i:02}.txt")).collect();
        for n in &names {
            // Sparse: over the limit without taking the disk.
            fs::File::create(f.ws.join(n)).unwrap().set_len(exclusions::MAX_FILE_BYTES + 1).unwrap();
        }
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        let first = snap(&s, "first");
        assert_eq!(first.left_out.len(), 55);
        for n in &names {
            write(&f.ws, n, "small now");
        }
        let _held = s.lock().unwrap();
        s.snapshot("second", Some(&first.hash), false).unwrap().unwrap();
        let recorded = &first.left_out[..50];
        assert_eq!(s.kept_by_restore(&first.hash, recorded).unwrap(), names);
        let before = s.snapshot("before restore", None, false).unwrap().unwrap();
        s.restore(&first.hash, recorded, &before).unwrap();
        for n in &names {
            assert_eq!(fs::read_to_string(f.ws.join(n)).unwrap(), "small now", "{n}");
        }
    }

    #[test]
    fn restore_puts_back_edited_and_deleted_files_and_removes_created_ones() {
        let f = fixture();
        write(&f.ws, "a.txt", "one");
        write(&f.ws, "keep.log", "excluded, never touched");
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        let first = snap(&s, "first");
        write(&f.ws, "a.txt", "two");
        write(&f.ws, "b/new.txt", "new");
        let _held = s.lock().unwrap();
        let second = s.snapshot("second", Some(&first.hash), false).unwrap().unwrap();
        drop(_held);
        assert_eq!(second.files, vec!["a.txt", "b/new.txt"]);
        // Unchanged since `second`: nothing to take when asked to skip.
        let _held = s.lock().unwrap();
        assert_eq!(s.snapshot("again", Some(&second.hash), true).unwrap(), None);
        drop(_held);
        fs::remove_file(f.ws.join("a.txt")).unwrap();
        write(&f.ws, "keep.log", "changed, still never touched");
        let _held = s.lock().unwrap();
        let changes = s.changes(&first.hash, None).unwrap();
        assert_eq!(changes, vec![('D', "a.txt".to_string()), ('A', "b/new.txt".to_string())]);
        let before = s.snapshot("before restore", None, false).unwrap().unwrap();
        s.restore(&first.hash, &[], &before).unwrap();
        assert_eq!(fs::read_to_string(f.ws.join("a.txt")).unwrap(), "one");
        assert!(!f.ws.join("b/new.txt").exists());
        assert_eq!(fs::read_to_string(f.ws.join("keep.log")).unwrap(), "changed, still never touched");
        // The restore is itself undoable: the pre-restore checkpoint holds the later state.
        let now = s.snapshot("after", None, false).unwrap().unwrap();
        s.restore(&before.hash, &[], &now).unwrap();
        assert!(!f.ws.join("a.txt").exists());
        assert_eq!(fs::read_to_string(f.ws.join("b/new.txt")).unwrap(), "new");
        let diff = String::from_utf8(s.diff(&first.hash, Some(&second.hash)).unwrap()).unwrap();
        assert!(diff.contains("\n-one\n") && diff.contains("\n+two\n") && diff.contains("+++ b/b/new.txt"), "{diff}");
    }

    #[test]
    fn a_restore_never_writes_through_a_directory_since_swapped_for_a_link_outside() {
        let f = fixture();
        let outside = tempfile::tempdir().unwrap();
        write(&f.ws, "sub/a.txt", "checkpointed");
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        let first = snap(&s, "first");
        fs::remove_dir_all(f.ws.join("sub")).unwrap();
        write(outside.path(), "a.txt", "the user's own file outside");
        std::os::unix::fs::symlink(outside.path(), f.ws.join("sub")).unwrap();
        let _held = s.lock().unwrap();
        let before = s.snapshot("before", None, false).unwrap().unwrap();
        s.restore(&first.hash, &[], &before).unwrap();
        let outside_file = fs::read_to_string(outside.path().join("a.txt")).unwrap();
        assert_eq!(outside_file, "the user's own file outside", "the restore wrote outside the workspace");
        assert!(fs::symlink_metadata(f.ws.join("sub")).unwrap().is_dir(), "the link became the directory again");
        assert_eq!(fs::read_to_string(f.ws.join("sub/a.txt")).unwrap(), "checkpointed");
    }

    #[test]
    fn a_restore_that_would_overwrite_an_unsaved_file_is_refused() {
        let f = fixture();
        write(&f.ws, "data.txt", "small");
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        let first = snap(&s, "first");
        fs::write(f.ws.join("data.txt"), vec![b'y'; (exclusions::MAX_FILE_BYTES + 1) as usize]).unwrap();
        let _held = s.lock().unwrap();
        let before = s.snapshot("before", None, false).unwrap().unwrap();
        let err = s.restore(&first.hash, &[], &before).unwrap_err().why;
        assert!(err.contains("data.txt") && err.contains("not restored"), "{err}");
        assert_eq!(fs::metadata(f.ws.join("data.txt")).unwrap().len(), exclusions::MAX_FILE_BYTES + 1);
    }

    /// Where the checkpoint has a file and the workspace now a folder, the restore would
    /// delete the folder whole, with what no checkpoint holds (an excluded log, a nested
    /// repository's `.git`, its history with it): refused, naming them, nothing touched. A
    /// folder holding only saved files is replaced, as before.
    #[test]
    fn a_restore_that_would_delete_unsaved_files_with_their_folder_is_refused() {
        let f = fixture();
        write(&f.ws, "lib", "a file at first");
        write(&f.ws, "tool", "a file at first");
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        let first = snap(&s, "first");
        for name in ["lib", "tool"] {
            fs::remove_file(f.ws.join(name)).unwrap();
            write(&f.ws, &format!("{name}/a.c"), "int a;");
        }
        write(&f.ws, "lib/run.log", "excluded: in no checkpoint");
        write(&f.ws, "lib/.git/HEAD", "ref: refs/heads/main\n");
        let _held = s.lock().unwrap();
        let before = s.snapshot("before", None, false).unwrap().unwrap();
        let err = s.restore(&first.hash, &[], &before).unwrap_err().why;
        assert!(err.contains("lib/run.log") && err.contains("lib/.git") && !err.contains("a.c"), "{err}");
        assert!(f.ws.join("lib/.git/HEAD").is_file() && f.ws.join("lib/run.log").is_file());
        fs::remove_dir_all(f.ws.join("lib")).unwrap();
        write(&f.ws, "lib", "a file at first");
        let before = s.snapshot("before", None, false).unwrap().unwrap();
        s.restore(&first.hash, &[], &before).unwrap();
        assert_eq!(fs::read_to_string(f.ws.join("tool")).unwrap(), "a file at first");
    }

    #[test]
    fn nested_repositories_files_are_tracked_and_their_git_put_back() {
        let f = fixture();
        write(&f.ws, "lib/.git/HEAD", "ref: refs/heads/main\n");
        write(&f.ws, "lib/src.c", "int x;");
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        let t = snap(&s, "one");
        assert_eq!(t.files, vec!["lib/src.c"]);
        assert!(f.ws.join("lib/.git/HEAD").is_file() && !f.ws.join("lib/.git_disabled").exists());
    }

    #[test]
    fn the_leftovers_of_a_killed_checkpoint_are_repaired_and_earlier_checkpoints_kept() {
        let f = fixture();
        write(&f.ws, "a.txt", "one");
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        let first = snap(&s, "first");
        // What `kill -9` in the middle of `git add` leaves: git's index lock, and a nested
        // repository still disabled, with its journal.
        fs::write(s.git.git_dir().join("index.lock"), "").unwrap();
        write(&f.ws, "lib/.git_disabled/HEAD", "ref: refs/heads/main\n");
        fs::write(s.journal(), format!("{}\0", f.ws.join("lib/.git").display())).unwrap();
        drop(s);
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        assert!(f.ws.join("lib/.git/HEAD").is_file(), "the nested repository is enabled again");
        write(&f.ws, "a.txt", "two");
        let second = snap(&s, "second");
        assert_eq!(second.files, vec!["a.txt"]);
        let diff = String::from_utf8(s.diff(&first.hash, Some(&second.hash)).unwrap()).unwrap();
        assert!(diff.contains("\n-one\n") && diff.contains("\n+two\n"), "the earlier checkpoint survived: {diff}");
    }

    /// A git of ours killed during the run (its time limit, Ctrl-C during a command) leaves its
    /// `index.lock`: the next checkpoint still is taken (every later one failed on it).
    #[test]
    fn a_git_killed_during_the_run_does_not_fail_the_checkpoints_after_it() {
        let f = fixture();
        write(&f.ws, "a.txt", "one");
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        snap(&s, "first");
        fs::write(s.git.git_dir().join("index.lock"), "").unwrap();
        write(&f.ws, "a.txt", "two");
        assert_eq!(snap(&s, "second").files, vec!["a.txt"]);
    }

    #[test]
    fn a_damaged_repository_is_moved_aside_and_a_fresh_series_starts() {
        let f = fixture();
        write(&f.ws, "a.txt", "one");
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        snap(&s, "first");
        let git_dir = s.git.git_dir().to_path_buf();
        // The branch points at a commit whose object is gone.
        fs::write(git_dir.join("refs/heads/checkpoints"), format!("{}\n", "1".repeat(40))).unwrap();
        drop(s);
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        let aside: Vec<_> = fs::read_dir(s.dir())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(".git.broken-"))
            .collect();
        assert_eq!(aside.len(), 1, "the damaged repository is kept, not deleted");
        assert_eq!(snap(&s, "fresh").files, vec!["a.txt"]);
    }

    #[test]
    fn another_workspace_with_the_same_hash_is_refused() {
        let f = fixture();
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        s.git.check(&["config", "core.worktree", "/somewhere/else"], None).unwrap();
        let err = Shadow::open(&f.state, &f.ws).unwrap_err();
        assert!(err.contains("Checkpoints can only be used in the original workspace: /somewhere/else"), "{err}");
    }

    #[test]
    fn a_restore_is_byte_exact_whatever_the_workspaces_gitattributes_say() {
        let f = fixture();
        write(&f.ws, ".gitattributes", "* text=auto eol=lf\n*.txt ident\n*.enc working-tree-encoding=UTF-16\n");
        write(&f.ws, "crlf.txt", "one\r\ntwo\r\n");
        write(&f.ws, "id.txt", "$Id$\n");
        write(&f.ws, "x.enc", "plain\n");
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        let first = snap(&s, "first");
        let stored = s.git.check(&["cat-file", "blob", &format!("{}:crlf.txt", first.hash)], None).unwrap();
        assert_eq!(stored.stdout, b"one\r\ntwo\r\n", "stored as it was");
        for f2 in ["crlf.txt", "id.txt", "x.enc"] {
            write(&f.ws, f2, "changed\n");
        }
        let _held = s.lock().unwrap();
        let before = s.snapshot("before", None, false).unwrap().unwrap();
        s.restore(&first.hash, &[], &before).unwrap();
        assert_eq!(fs::read(f.ws.join("crlf.txt")).unwrap(), b"one\r\ntwo\r\n");
        assert_eq!(fs::read(f.ws.join("id.txt")).unwrap(), b"$Id$\n");
        assert_eq!(fs::read(f.ws.join("x.enc")).unwrap(), b"plain\n");
    }

    #[test]
    fn a_filter_the_workspace_names_never_runs_even_if_configured() {
        let f = fixture();
        let marker = f.state.join("filter-ran");
        write(&f.ws, ".gitattributes", "* filter=evil\n");
        write(&f.ws, "a.txt", "one\n");
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        // Even a driver in the shadow repository's own config (a user's doing) is not run.
        for k in ["filter.evil.clean", "filter.evil.smudge", "filter.evil.process"] {
            let cmd = format!("touch '{}'; cat", marker.display());
            s.git.check(&["config", k, &cmd], None).unwrap();
        }
        let first = snap(&s, "first");
        write(&f.ws, "a.txt", "two\n");
        let _held = s.lock().unwrap();
        let before = s.snapshot("before", None, false).unwrap().unwrap();
        s.restore(&first.hash, &[], &before).unwrap();
        s.diff(&first.hash, None).unwrap();
        assert_eq!(fs::read_to_string(f.ws.join("a.txt")).unwrap(), "one\n");
        assert!(!marker.exists(), "a filter ran");
    }

    /// A repository with one commit at `dir` (its git directory `git_dir`).
    fn real_repo(git_dir: &Path, dir: &Path) {
        fs::create_dir_all(dir).unwrap();
        let git = Git::new(find_git().unwrap(), git_dir, dir);
        git.check(&["init", "-q"], None).unwrap();
        git.check(&["commit", "-q", "--allow-empty", "-m", "x"], None).unwrap();
    }

    #[test]
    fn files_of_a_submodule_or_a_linked_git_are_checkpointed() {
        let f = fixture();
        let outside = tempfile::tempdir().unwrap();
        // A submodule: `.git` is a file naming the real git directory.
        real_repo(&outside.path().join("sub.git"), &f.ws.join("sub"));
        write(&f.ws, "sub/.git", &format!("gitdir: {}\n", outside.path().join("sub.git").display()));
        write(&f.ws, "sub/file.txt", "in the submodule");
        // A `.git` symlink to a repository elsewhere.
        real_repo(&outside.path().join("linked.git"), &f.ws.join("linked"));
        std::os::unix::fs::symlink(outside.path().join("linked.git"), f.ws.join("linked/.git")).unwrap();
        write(&f.ws, "linked/file.txt", "in the linked one");
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        let t = snap(&s, "one");
        assert_eq!(t.files, vec!["linked/file.txt", "sub/file.txt"], "{:?}", t.left_out);
        let tree = s.git.check(&["ls-tree", "-r", &t.hash], None).unwrap().text();
        assert!(!tree.contains("160000"), "no gitlink: {tree}");
        assert!(
            f.ws.join("sub/.git").is_file() && fs::symlink_metadata(f.ws.join("linked/.git")).unwrap().is_symlink()
        );
        assert!(!f.ws.join("sub/.git_disabled").exists() && !f.ws.join("linked/.git_disabled").exists());
    }

    #[test]
    fn a_git_failure_that_is_not_damage_moves_nothing_aside() {
        use std::os::unix::fs::PermissionsExt;
        let f = fixture();
        write(&f.ws, "a.txt", "one");
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        let first = snap(&s, "first");
        let git_dir = s.git.git_dir().to_path_buf();
        drop(s);
        // A git that fails transiently (out of processes) whenever it reads the repository.
        let bin = tempfile::tempdir().unwrap();
        let fake = bin.path().join("git");
        let script = format!(
            "#!/bin/sh\ncase \"$*\" in *rev-parse*|*ls-files*) echo 'fatal: unable to fork' >&2; exit 128;; esac\nexec '{}' \"$@\"\n",
            find_git().unwrap().display()
        );
        fs::write(&fake, script).unwrap();
        fs::set_permissions(&fake, fs::Permissions::from_mode(0o755)).unwrap();
        let err = Shadow::open_with(fake, &f.state, &f.ws).unwrap_err();
        assert!(err.contains("unable to fork"), "{err}");
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        assert_eq!(s.git.git_dir(), git_dir);
        assert_eq!(s.head().as_deref(), Some(first.hash.as_str()), "the series is kept");
        assert!(!fs::read_dir(s.dir()).unwrap().flatten().any(|e| e.file_name().to_string_lossy().contains("broken")));
    }

    #[test]
    fn an_edits_checkpoint_of_the_paths_it_wrote_equals_the_whole_scan() {
        let f = fixture();
        write(&f.ws, ".gitignore", "ignored/\n");
        write(&f.ws, "src/a.rs", "a");
        write(&f.ws, "src/b.rs", "b");
        write(&f.ws, "lib/.git/HEAD", "ref: refs/heads/main\n");
        write(&f.ws, "lib/x.c", "x");
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        let first = snap(&s, "first");
        let _held = s.lock().unwrap();
        let mut last = first.hash;
        // (what the tool wrote, paths it names)
        let big = vec![b'x'; (exclusions::MAX_FILE_BYTES + 1) as usize];
        let cases: Vec<(&str, Vec<u8>, Vec<&str>)> = vec![
            ("src/a.rs", b"a2".to_vec(), vec!["src/a.rs"]),
            ("src/new/c.rs", b"c".to_vec(), vec!["src/new/c.rs"]),
            ("x.log", b"excluded".to_vec(), vec![]),
            ("ignored/y.txt", b"ignored".to_vec(), vec![]),
            // Its small copy leaves the checkpoint.
            ("src/b.rs", big, vec!["src/b.rs"]),
            ("lib/x.c", b"x2".to_vec(), vec!["lib/x.c"]),
            (".gitignore", b"".to_vec(), vec![".gitignore", "ignored/y.txt"]),
        ];
        for (path, bytes, changed) in cases {
            let abs = f.ws.join(path);
            fs::create_dir_all(abs.parent().unwrap()).unwrap();
            fs::write(&abs, &bytes).unwrap();
            let t = s.snapshot_of(Scope::Paths(&[abs]), path, Some(&last), false).unwrap().unwrap();
            assert_eq!(t.files, changed, "{path}");
            if path == "src/b.rs" {
                assert_eq!(t.left_out, vec!["src/b.rs (over 10 MiB)"]);
            }
            // The whole scan finds nothing more.
            assert_eq!(s.snapshot("whole", Some(&t.hash), true).unwrap(), None, "{path}");
            last = t.hash;
        }
        assert!(f.ws.join("lib/.git/HEAD").is_file());
        // An executable file keeps its mode, as the whole scan stores it.
        {
            use std::os::unix::fs::PermissionsExt;
            write(&f.ws, "run.sh", "#!/bin/sh\n");
            fs::set_permissions(f.ws.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        }
        let t = s.snapshot_of(Scope::Paths(&[f.ws.join("run.sh")]), "x", Some(&last), false).unwrap().unwrap();
        assert_eq!(t.files, vec!["run.sh"]);
        assert_eq!(s.snapshot("whole", Some(&t.hash), true).unwrap(), None);
        last = t.hash;
        // Another process took a checkpoint since (or a restore ran): the whole scan instead.
        write(&f.ws, "src/a.rs", "a3");
        let other = s.snapshot("another agent", None, false).unwrap().unwrap();
        write(&f.ws, "src/new/c.rs", "c1");
        let t = s.snapshot_of(Scope::Paths(&[f.ws.join("src/new/c.rs")]), "c", Some(&last), false).unwrap().unwrap();
        assert_eq!(t.files, vec!["src/a.rs", "src/new/c.rs"], "since {last}, not {}", other.hash);
        last = t.hash;
        // A change the edit did not make is left for the next whole scan.
        write(&f.ws, "src/a.rs", "behind the back");
        write(&f.ws, "src/new/c.rs", "c2");
        let t = s.snapshot_of(Scope::Paths(&[f.ws.join("src/new/c.rs")]), "c", Some(&last), false).unwrap().unwrap();
        assert_eq!(t.files, vec!["src/new/c.rs"]);
        let whole = s.snapshot("whole", Some(&t.hash), false).unwrap().unwrap();
        assert_eq!(whole.files, vec!["src/a.rs"]);
        // So is one beside a new file: the paths are checked against the ignore files without
        // the whole scan (which every new file fell back to).
        write(&f.ws, "src/a.rs", "behind the back again");
        write(&f.ws, "src/new/d.rs", "d");
        let t = s.snapshot_of(Scope::Paths(&[f.ws.join("src/new/d.rs")]), "d", Some(&whole.hash), false).unwrap();
        let t = t.unwrap();
        assert_eq!(t.files, vec!["src/new/d.rs"]);
        // A new file whose name looks like pathspec magic is checked as the name it is.
        write(&f.ws, ".gitignore", "");
        let t = s.snapshot("whole", Some(&t.hash), false).unwrap().unwrap();
        write(&f.ws, ".gitignore", "foo\n");
        let t = s.snapshot("whole", Some(&t.hash), false).unwrap().unwrap();
        write(&f.ws, ":foo", "not ignored");
        let t = s.snapshot_of(Scope::Paths(&[f.ws.join(":foo")]), "colon", Some(&t.hash), false).unwrap();
        assert_eq!(t.unwrap().files, vec![":foo"]);
    }

    /// An edit's checkpoint next to a file whose name is not UTF-8 keeps that name's bytes (it
    /// went back into the tree as `caf\u{fffd}.txt`, and a restore wrote that name).
    #[test]
    fn an_edits_checkpoint_keeps_the_names_beside_it_byte_for_byte() {
        use std::os::unix::ffi::OsStrExt;
        let f = fixture();
        let latin1 = std::ffi::OsStr::from_bytes(b"caf\xe9.txt");
        fs::write(f.ws.join(latin1), "latin-1 name").unwrap();
        write(&f.ws, "a.txt", "one");
        let s = Shadow::open(&f.state, &f.ws).unwrap();
        let first = snap(&s, "first");
        let _held = s.lock().unwrap();
        write(&f.ws, "a.txt", "two");
        let t = s.snapshot_of(Scope::Paths(&[f.ws.join("a.txt")]), "a", Some(&first.hash), false).unwrap().unwrap();
        let names = s.git.check(&["ls-tree", "--name-only", "-z", &t.hash], None).unwrap().stdout;
        assert_eq!(names, b"a.txt\0caf\xe9.txt\0");
        assert_eq!(s.snapshot("whole", Some(&t.hash), true).unwrap(), None, "the whole scan finds nothing more");
    }
}
