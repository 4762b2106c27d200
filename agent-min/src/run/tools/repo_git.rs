//! git, run read-only in the person's repository (an `@git-changes` or commit mention, the
//! first turn's `# Workspace Configuration`): with the checkpoints' safety settings
//! (`spawn::GIT_SAFETY_CONFIG`), never a command of the repository's config (filters,
//! textconv, external diffs, fsmonitor, signatures, submodules), in the workspace, its output
//! and time bounded.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use super::clineignore::ClineIgnore;
use crate::run::spawn;
use crate::run::ui::interrupt;

/// Longest one git command may run.
const GIT_TIMEOUT: Duration = Duration::from_secs(30);

/// Most bytes kept of a git command's output (Cline then keeps 500 lines of it).
const GIT_MAX_OUTPUT: usize = 8 << 20;

/// git, run read-only in the workspace: the checkpoints' safety settings, and every command a
/// repository's config could start switched off.
pub(crate) struct Git {
    program: PathBuf,
    root: PathBuf,
    /// `-c` settings.
    config: Vec<String>,
    /// Settings added once the repository's filters are known, given to git in its
    /// environment (`GIT_CONFIG_KEY_n`): a `-c` key is cut at its first `=`, and a filter's name
    /// may hold one.
    overrides: Vec<(String, String)>,
    /// Whether the workspace is in a repository, once asked.
    repo: Option<bool>,
    /// Longest one command may run.
    timeout: Duration,
}

impl Git {
    /// git on `PATH`, in `root`; `None` when it is not installed.
    pub(crate) fn find(root: &Path) -> Option<Git> {
        let program = spawn::find_git()?;
        let config = [
            "log.showSignature=false",
            "diff.submodule=short",
            "status.submoduleSummary=false",
            "core.untrackedCache=false",
        ];
        let config = config.iter().flat_map(|c| ["-c".to_string(), c.to_string()]).collect();
        Some(Git { program, root: root.to_path_buf(), config, overrides: Vec::new(), repo: None, timeout: GIT_TIMEOUT })
    }

    /// Runs `git ARGS`: stdout when it exits 0, else Node's `exec` message (`Command failed:
    /// CMD\nSTDERR`, `shown` being the command as Cline writes it).
    pub(crate) fn run(&self, shown: &str, args: &[&str]) -> Result<String, String> {
        let mut cmd = spawn::command(&self.program, spawn::Policy::Git)?;
        cmd.args(spawn::GIT_SAFETY_CONFIG)
            .args(&self.config)
            .args(args)
            .envs(spawn::GIT_SAFETY_ENV.iter().copied())
            // No index refresh written into the person's repository, no objects fetched.
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_NO_LAZY_FETCH", "1")
            .env("GIT_CONFIG_COUNT", self.overrides.len().to_string())
            .current_dir(&self.root)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (i, (key, value)) in self.overrides.iter().enumerate() {
            cmd.env(format!("GIT_CONFIG_KEY_{i}"), key).env(format!("GIT_CONFIG_VALUE_{i}"), value);
        }
        let mut child = cmd.spawn().map_err(|e| format!("cannot run git: {e}"))?;
        let _guard = interrupt::track_pid(child.id());
        let mut out = child.stdout.take().expect("piped stdout");
        let mut err = child.stderr.take().expect("piped stderr");
        let reader = std::thread::spawn(move || capped(&mut out, GIT_MAX_OUTPUT));
        let err_reader = std::thread::spawn(move || capped(&mut err, 64 << 10));
        let start = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(st)) => break Some(st),
                Ok(None) if start.elapsed() <= self.timeout => std::thread::sleep(Duration::from_millis(2)),
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
            }
        };
        let stdout = reader.join().unwrap_or_default();
        let stderr = err_reader.join().unwrap_or_default();
        match status {
            Some(st) if st.success() => Ok(String::from_utf8_lossy(&stdout).into_owned()),
            Some(_) => Err(format!("Command failed: {shown}\n{}", String::from_utf8_lossy(&stderr))),
            None => Err(format!(
                "Command failed: {shown}\ngit took longer than {}s and was stopped",
                self.timeout.as_secs()
            )),
        }
    }

    /// Whether the workspace is in a git repository (`git rev-parse --git-dir`) whose work
    /// tree holds it; then the repository's filter drivers are switched off for the commands
    /// that follow. A repository whose `core.worktree` (or `.git` file) puts its work tree
    /// elsewhere would show files outside the workspace: it counts as none.
    pub(crate) fn in_repo(&mut self) -> bool {
        if let Some(known) = self.repo {
            return known;
        }
        let holds_workspace = self.holds_workspace();
        self.repo = Some(holds_workspace);
        if !holds_workspace {
            return false;
        }
        let filters = self.run("git config", &["config", "-z", "--name-only", "--get-regexp", r"^filter\."]);
        let mut names: Vec<String> = Vec::new();
        for key in filters.unwrap_or_default().split('\0') {
            let Some(name) = key.strip_prefix("filter.").and_then(|k| k.rsplit_once('.')).map(|(n, _)| n) else {
                continue;
            };
            if !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
        for name in names {
            for (key, value) in [("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")] {
                self.overrides.push((format!("filter.{name}.{key}"), value.to_string()));
            }
        }
        true
    }

    /// Whether the workspace is in a git repository whose work tree holds it.
    fn holds_workspace(&self) -> bool {
        let top = self.run("git rev-parse --show-toplevel", &["rev-parse", "--show-toplevel"]);
        top.is_ok_and(|t| {
            let top = std::fs::canonicalize(t.trim_end_matches('\n'));
            let root = std::fs::canonicalize(&self.root);
            matches!((top, root), (Ok(top), Ok(root)) if root.starts_with(&top))
        })
    }

    /// Whether the repository has a commit (`git rev-parse HEAD`).
    pub(crate) fn has_commits(&self) -> bool {
        self.run("git rev-parse HEAD", &["rev-parse", "HEAD"]).is_ok()
    }

    /// The pathspecs that confine a command to the workspace, less the files among `changed`
    /// (paths from the repository's top) that `.clineignore` blocks.
    pub(crate) fn confined(&self, changed: &str) -> Vec<String> {
        let mut specs = vec![".".to_string()];
        let ig = ClineIgnore::load(&self.root);
        let prefix = self.run("git rev-parse --show-prefix", &["rev-parse", "--show-prefix"]).unwrap_or_default();
        let prefix = prefix.trim_end_matches('\n');
        for path in changed.split('\0').map(|p| p.trim_matches('\n')).filter(|p| !p.is_empty()) {
            let Some(rel) = path.strip_prefix(prefix) else { continue };
            if !ig.allows(rel) {
                specs.push(format!(":(top,exclude,literal){path}"));
            }
        }
        specs
    }
}

/// Reads at most `cap` bytes, then drains (so the child never blocks on a full pipe).
fn capped(r: &mut impl Read, cap: usize) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut buf = [0u8; 64 << 10];
    while let Ok(n) = r.read(&mut buf) {
        if n == 0 {
            break;
        }
        let room = cap.saturating_sub(kept.len());
        kept.extend_from_slice(&buf[..n.min(room)]);
    }
    kept
}

/// Most remotes named in `# Workspace Configuration` (Cline names all), and the most bytes of
/// one's URL: a repository's config could otherwise fill the first request.
const MAX_REMOTES: usize = 20;
const MAX_URL: usize = 1024;

/// Cline's `getGitRemoteUrls` and `getLatestGitCommitHash` of the workspace `root`: each
/// remote's fetch URL as `name: url` (a URL's user, password, query and fragment left out: a
/// token there is not the model's to see; at most [`MAX_REMOTES`]), and the `HEAD` commit;
/// nothing when git is not installed or the workspace is in no repository. Each git command
/// may take 5 s (it runs before every task's first request).
pub(crate) fn remotes_and_head(root: &Path) -> (Vec<String>, Option<String>) {
    let Some(mut git) = Git::find(root) else { return (Vec::new(), None) };
    git.timeout = Duration::from_secs(5);
    if !git.holds_workspace() {
        return (Vec::new(), None);
    }
    let remotes = git.run("git remote -v", &["remote", "-v"]).unwrap_or_default();
    let remotes = remotes
        .trim()
        .split('\n')
        .filter_map(|line| {
            // Cline's /^(\S+)\s+(\S+)\s+\(fetch\)$/.
            let mut words = line.split_whitespace();
            let (name, url, kind) = (words.next()?, words.next()?, words.next()?);
            (kind == "(fetch)" && words.next().is_none() && line.ends_with("(fetch)") && url.len() <= MAX_URL)
                .then(|| format!("{name}: {}", without_credentials(url)))
        })
        .take(MAX_REMOTES)
        .collect();
    let head = git.run("git rev-parse HEAD", &["rev-parse", "HEAD"]).ok();
    let head = head.map(|h| h.trim().to_string()).filter(|h| !h.is_empty());
    (remotes, head)
}

/// A remote's URL without what may be a credential: `scheme://user:password@host/path?query#f`
/// as `scheme://host/path`, and an scp-like `user:password@host:path` as `host:path` (a plain
/// `git@host:path` stays).
fn without_credentials(url: &str) -> String {
    if let Some(scheme_end) = url.find("://").map(|s| s + 3) {
        let end = url[scheme_end..].find(['?', '#']).map_or(url.len(), |e| scheme_end + e);
        return crate::run::ui::redact::without_credentials(&url[..end]);
    }
    let first_slash = url.find('/').unwrap_or(url.len());
    match url[..first_slash].rfind('@') {
        Some(at) if url[..at].contains(':') => url[at + 1..].to_string(),
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::run::test_files::{git, tree};

    /// As Cline's `getGitRemoteUrls` and `getLatestGitCommitHash` give them: each remote's
    /// fetch URL by name, in git's order, and HEAD; nothing outside a repository, no commit in
    /// one without commits.
    #[test]
    fn remotes_and_head_as_cline_reads_them() {
        let ws = tree(&[("a.txt", "a")]);
        assert_eq!(remotes_and_head(ws.path()), (Vec::new(), None));
        git(ws.path(), &["init", "-q"]);
        assert_eq!(remotes_and_head(ws.path()), (Vec::new(), None));
        git(ws.path(), &["remote", "add", "origin", "https://tok:x-oauth@github.com/o/r.git"]);
        git(ws.path(), &["remote", "add", "up", "git@h:o/r.git"]);
        git(ws.path(), &["add", "a.txt"]);
        git(ws.path(), &["commit", "-qm", "a"]);
        let head = git(ws.path(), &["rev-parse", "HEAD"]).trim().to_string();
        let remotes = vec!["origin: https://github.com/o/r.git".to_string(), "up: git@h:o/r.git".to_string()];
        assert_eq!(remotes_and_head(ws.path()), (remotes.clone(), Some(head.clone())));
        // A subdirectory of the repository is in it (Cline's `git rev-parse --git-dir`).
        std::fs::create_dir(ws.path().join("sub")).unwrap();
        assert_eq!(remotes_and_head(&ws.path().join("sub")), (remotes, Some(head)));
    }

    #[test]
    fn a_remotes_credentials_are_left_out() {
        let cases = [
            ("https://user:ghp_x@github.com/o/r.git", "https://github.com/o/r.git"),
            ("https://ghp_x@github.com/o/r.git", "https://github.com/o/r.git"),
            ("https://github.com/o/r.git", "https://github.com/o/r.git"),
            ("https://host/r.git?private_token=x#frag", "https://host/r.git"),
            ("https://host?token=a@b/c", "https://host"),
            ("git@github.com:o/r.git", "git@github.com:o/r.git"),
            ("user:secret@host:o/r.git", "host:o/r.git"),
            ("ssh://git@host:22/o/r@2.git", "ssh://host:22/o/r@2.git"),
            ("/srv/repos/r.git", "/srv/repos/r.git"),
            ("../up@2/r.git", "../up@2/r.git"),
        ];
        for (url, shown) in cases {
            assert_eq!(without_credentials(url), shown, "{url}");
        }
    }
}
