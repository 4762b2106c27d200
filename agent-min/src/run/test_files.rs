//! Unit tests' file fixtures (and what they measure of themselves).

use std::path::Path;

/// Writes `text` to `root/rel`, making its directories.
pub(crate) fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A temporary directory holding `files` (path, text). Not dot-named (tempdir's default), which
/// would make the directory hidden itself: Cline's listing enters hidden directories when the
/// listed directory is hidden.
pub(crate) fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::Builder::new().prefix("ws").tempdir().unwrap();
    for (rel, text) in files {
        write(d.path(), rel, text);
    }
    d
}

/// Runs `git ARGS` in `dir` as a test's author, without the person's config: its output.
pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    use crate::run::spawn;
    let out = spawn::command(spawn::find_git().unwrap(), spawn::Policy::Git)
        .unwrap()
        .args(["-c", "user.name=T", "-c", "user.email=t@e", "-c", "commit.gpgSign=false"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The CPU time the calling thread has used, in clock ticks (utime + stime of
/// `/proc/thread-self/stat`, counted at 100 a second): what a wait spent, whatever else the
/// test process runs meanwhile.
pub(crate) fn thread_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}
