//! The one way checkpoints run `git`: the shadow repository's `GIT_DIR` and the workspace as its
//! work tree, an empty environment (no user or system config, no hooks, no signing, no pager,
//! no credentials, no API key), a time limit, and bounded output.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::run::spawn;
use crate::run::ui::interrupt;

/// Longest a single git command may run before it is killed.
pub(crate) const GIT_TIMEOUT: Duration = Duration::from_secs(120);

/// Most bytes kept of a git command's stdout (a listing of every file of a huge workspace fits).
pub(crate) const MAX_OUTPUT: usize = 64 << 20;

/// Most bytes kept of a git command's stderr.
const MAX_STDERR: usize = 64 << 10;

/// Author and committer of every checkpoint commit (Cline's).
pub(crate) const AUTHOR: (&str, &str) = ("Cline Checkpoint", "checkpoint@cline.bot");

/// What a git command did.
#[derive(Debug)]
pub(crate) struct Output {
    /// Exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// Standard output, at most [`MAX_OUTPUT`] bytes.
    pub stdout: Vec<u8>,
    /// Standard error, at most 64 KiB, lossily decoded.
    pub stderr: String,
    /// Stdout was longer than [`MAX_OUTPUT`] and was cut.
    pub truncated: bool,
}

impl Output {
    /// Exit code 0.
    pub(crate) fn ok(&self) -> bool {
        self.code == Some(0)
    }

    /// Stdout as text (lossy).
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// A git invocation bound to one shadow repository and one work tree.
#[derive(Debug, Clone)]
pub(crate) struct Git {
    /// The `git` program (from `PATH`).
    program: PathBuf,
    git_dir: PathBuf,
    work_tree: PathBuf,
    /// The person's global gitignore, given to git (which reads no config of theirs).
    excludes_file: Option<PathBuf>,
}

/// Finds `git` on `PATH`; `None` if it is not installed.
pub(crate) fn find_git() -> Option<PathBuf> {
    spawn::find_git()
}

impl Git {
    /// Runs `program` against `git_dir` with `work_tree` as its work tree.
    pub(crate) fn new(program: PathBuf, git_dir: &Path, work_tree: &Path) -> Git {
        Git { program, git_dir: git_dir.to_path_buf(), work_tree: work_tree.to_path_buf(), excludes_file: None }
    }

    /// This git with `file` as `core.excludesFile` (the patterns git reads from the person's
    /// global gitignore; nothing else of their config).
    pub(crate) fn excluding(self, file: Option<PathBuf>) -> Git {
        Git { excludes_file: file, ..self }
    }

    /// The shadow repository's git directory.
    pub(crate) fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// Runs `git ARGS`, feeding `input` on stdin; pathspecs are literal.
    pub(crate) fn run(&self, args: &[&str], input: Option<&[u8]>) -> std::io::Result<Output> {
        self.run_with(args, input, true)
    }

    /// [`Git::run`], with pathspec magic (`:(exclude,literal)…`) allowed unless `literal`.
    pub(crate) fn run_with(&self, args: &[&str], input: Option<&[u8]>, literal: bool) -> std::io::Result<Output> {
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        self.run_os(&args, input, literal)
    }

    /// [`Git::run_with`] with arguments that need not be UTF-8 (a path named in bytes).
    pub(crate) fn run_os(&self, args: &[&OsStr], input: Option<&[u8]>, literal: bool) -> std::io::Result<Output> {
        // Only the environment set here; dies with the agent (an orphan git still writing the
        // shadow repository after a kill -9, its lock released, could race the next run's
        // repair); ptrace-scoped.
        let mut cmd = spawn::command(&self.program, spawn::Policy::Git).map_err(std::io::Error::other)?;
        // Settings that must hold whatever the repository's config says.
        cmd.args(spawn::GIT_SAFETY_CONFIG).envs(spawn::GIT_SAFETY_ENV.iter().copied());
        cmd.args([
            "-c",
            "core.autocrlf=false",
            "-c",
            "core.quotePath=false",
            "-c",
            "gc.autoDetach=false",
            // The index of a large workspace is written whole by every `add` and `write-tree`;
            // split, only the entries that changed are (an edit's checkpoint costs the change).
            "-c",
            "core.splitIndex=true",
        ]);
        if let Some(file) = &self.excludes_file {
            cmd.arg("-c").arg(super::global_ignore::config_arg(file));
        }
        cmd.args(args)
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_LITERAL_PATHSPECS", if literal { "1" } else { "0" })
            .env("GIT_AUTHOR_NAME", AUTHOR.0)
            .env("GIT_AUTHOR_EMAIL", AUTHOR.1)
            .env("GIT_COMMITTER_NAME", AUTHOR.0)
            .env("GIT_COMMITTER_EMAIL", AUTHOR.1)
            .current_dir(&self.work_tree)
            .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn()?;
        let _guard = interrupt::track_pid(child.id());
        let feeder = input.map(|bytes| {
            let mut stdin = child.stdin.take().expect("piped stdin");
            let bytes = bytes.to_vec();
            std::thread::spawn(move || {
                let _ = stdin.write_all(&bytes);
            })
        });
        let mut out = child.stdout.take().expect("piped stdout");
        let mut err = child.stderr.take().expect("piped stderr");
        let reader = std::thread::spawn(move || read_capped(&mut out, MAX_OUTPUT));
        let err_reader = std::thread::spawn(move || read_capped(&mut err, MAX_STDERR));
        let start = Instant::now();
        let status = loop {
            if let Some(st) = child.try_wait()? {
                break Some(st);
            }
            if start.elapsed() > GIT_TIMEOUT {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        if let Some(f) = feeder {
            let _ = f.join();
        }
        let (stdout, truncated) = reader.join().unwrap_or_default();
        let (stderr, _) = err_reader.join().unwrap_or_default();
        let Some(status) = status else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "git {} took longer than {}s and was stopped",
                    args.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" "),
                    GIT_TIMEOUT.as_secs()
                ),
            ));
        };
        Ok(Output { code: status.code(), stdout, stderr: String::from_utf8_lossy(&stderr).into_owned(), truncated })
    }

    /// Runs `git ARGS` and fails (with git's own message) unless it exits 0 with all its output.
    pub(crate) fn check(&self, args: &[&str], input: Option<&[u8]>) -> Result<Output, String> {
        let out = self.run(args, input).map_err(|e| format!("cannot run git: {e}"))?;
        if out.truncated {
            return Err(format!("git {} printed more than {} MiB", args.join(" "), MAX_OUTPUT >> 20));
        }
        if !out.ok() {
            let msg = out.stderr.trim();
            return Err(format!("git {} failed: {}", args.first().unwrap_or(&""), first_lines(msg, 3)));
        }
        Ok(out)
    }
}

/// Reads at most `cap` bytes, then drains (so the child never blocks on a full pipe).
fn read_capped(r: &mut impl Read, cap: usize) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut buf = [0u8; 64 << 10];
    let mut truncated = false;
    while let Ok(n) = r.read(&mut buf) {
        if n == 0 {
            break;
        }
        let room = cap.saturating_sub(kept.len());
        kept.extend_from_slice(&buf[..n.min(room)]);
        truncated |= n > room;
    }
    (kept, truncated)
}

/// The first `n` lines of `s`.
pub(crate) fn first_lines(s: &str, n: usize) -> String {
    s.lines().take(n).collect::<Vec<_>>().join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_sees_no_user_config_and_no_secret_environment() {
        let d = tempfile::tempdir().unwrap();
        let git = Git::new(find_git().expect("git is installed"), &d.path().join(".git"), d.path());
        git.check(&["init", "-q"], None).unwrap();
        // What git's own children see: nothing of ours (cargo sets CARGO_* and HOME for tests).
        assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
        let env = git.check(&["-c", "alias.env=!env", "env"], None).unwrap().text();
        assert!(env.contains("GIT_CONFIG_NOSYSTEM=1"), "{env}");
        assert!(!env.contains("CARGO_MANIFEST_DIR") && !env.contains("HOME="), "{env}");
        let out = git.check(&["var", "GIT_AUTHOR_IDENT"], None).unwrap();
        assert!(out.text().starts_with("Cline Checkpoint <checkpoint@cline.bot>"), "{}", out.text());
        let hooks = git.check(&["config", "core.hooksPath"], None).unwrap();
        assert_eq!(hooks.text().trim(), "/dev/null");
        let global = git.run(&["config", "--global", "--list"], None).unwrap();
        assert!(global.stdout.is_empty(), "the global config is /dev/null: {:?}", global.text());
    }

    #[test]
    fn output_is_capped_and_the_rest_drained() {
        let data = vec![b'x'; 300_000];
        let (kept, truncated) = read_capped(&mut &data[..], 1000);
        assert_eq!(kept.len(), 1000);
        assert!(truncated);
        let (kept, truncated) = read_capped(&mut &data[..10], 1000);
        assert_eq!((kept.len(), truncated), (10, false));
    }
}
