//! The documents directory Cline's global `Cline/Rules`, `Cline/Workflows` and `Cline/Hooks`
//! live in (`getDocumentsPath` in `storage/disk.ts`): on Linux, when `which xdg-user-dir`
//! finds the command, what `xdg-user-dir DOCUMENTS` prints; else (or when it prints nothing)
//! `~/Documents`.
//!
//! The command is not run, only emulated: it sources `${XDG_CONFIG_HOME:-~/.config}/user-dirs.dirs`
//! and prints `${XDG_DOCUMENTS_DIR:-$HOME}` — `$HOME` itself when the variable is unset.

use std::path::{Path, PathBuf};

use crate::run::trusted_file::{self, Links};

/// The documents directory, as Cline finds it; `None` without `$HOME`.
pub(crate) fn documents_dir() -> Option<PathBuf> {
    let home = crate::run::places::home_dir()?;
    let path = std::env::var_os("PATH").unwrap_or_default();
    if cfg!(target_os = "linux") && on_path("xdg-user-dir", &path) {
        let dirs = super::rules::config_dir().map(|c| c.join("user-dirs.dirs"));
        let read = |f: PathBuf| trusted_file::read(&f, Links::Follow, 1 << 16).ok();
        let text = dirs.and_then(read).map(|b| String::from_utf8_lossy(&b).into_owned());
        let env = std::env::var("XDG_DOCUMENTS_DIR").ok();
        return Some(xdg_user_dir_documents(&home, text.as_deref(), env.as_deref()));
    }
    Some(home.join("Documents"))
}

/// The file that decides where the documents directory is (`user-dirs.dirs`): what a run's
/// commands write there would decide whose global hooks the next run trusts, so it is kept
/// read-only to them (`sandbox::guarded`).
pub(crate) fn deciding_file() -> Option<PathBuf> {
    super::rules::config_dir().map(|c| c.join("user-dirs.dirs"))
}

/// What `xdg-user-dir DOCUMENTS` prints for `home`, the text of `user-dirs.dirs` and the
/// variable's value in the environment: the file's last assignment (sourced, it overrides the
/// environment), `$HOME` expanded; `home` when unset or empty. Ours: a value that is not an
/// absolute path (the command would print it, and Cline read it from its working directory) is
/// taken as unset, so that the workspace cannot become the global rules.
fn xdg_user_dir_documents(home: &Path, dirs: Option<&str>, env: Option<&str>) -> PathBuf {
    let mut assigned =
        dirs.into_iter().flat_map(str::lines).filter_map(|l| l.trim().strip_prefix("XDG_DOCUMENTS_DIR="));
    let value = assigned.next_back().or(env).map(|v| v.trim().trim_matches('"')).unwrap_or_default();
    let expanded = ["$HOME", "${HOME}"].iter().find_map(|h| value.strip_prefix(h)).map_or_else(
        || PathBuf::from(value),
        |rest| {
            let mut p = home.as_os_str().to_owned();
            p.push(rest);
            PathBuf::from(p)
        },
    );
    if expanded.is_absolute() {
        expanded
    } else {
        home.to_path_buf()
    }
}

/// Whether `which NAME` finds an executable file in the directories of `path` (`$PATH`).
fn on_path(name: &str, path: &std::ffi::OsStr) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(name))
        .any(|f| std::fs::metadata(f).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without `XDG_DOCUMENTS_DIR`, `xdg-user-dir DOCUMENTS` prints `$HOME`, so Cline reads
    /// `~/Cline/Rules`; a value set in the file wins over the environment's.
    #[test]
    fn xdg_user_dir_prints_home_when_the_documents_dir_is_unset() {
        let home = Path::new("/home/me");
        assert_eq!(xdg_user_dir_documents(home, None, None), home);
        assert_eq!(xdg_user_dir_documents(home, Some("XDG_DESKTOP_DIR=\"$HOME/Desk\"\n"), None), home);
        assert_eq!(xdg_user_dir_documents(home, Some("XDG_DOCUMENTS_DIR=\"$HOME\"\n"), None), home);
        let both = "# set\nXDG_DOCUMENTS_DIR=\"$HOME/Docs\"\nXDG_DOCUMENTS_DIR=\"$HOME/Dokumente\"\n";
        assert_eq!(xdg_user_dir_documents(home, Some(both), Some("/env")), Path::new("/home/me/Dokumente"));
        assert_eq!(xdg_user_dir_documents(home, None, Some("/data/docs")), Path::new("/data/docs"));
        assert_eq!(xdg_user_dir_documents(home, None, Some("")), home);
        assert_eq!(xdg_user_dir_documents(home, Some("XDG_DOCUMENTS_DIR=docs\n"), None), home);
    }

    /// Cline runs the command only when `which` finds it: an executable file on `$PATH`.
    #[test]
    fn the_command_counts_only_when_an_executable_is_on_the_path() {
        use std::os::unix::fs::PermissionsExt;
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let path = std::env::join_paths([a.path(), b.path()]).unwrap();
        assert!(!on_path("xdg-user-dir", &path));
        let f = b.path().join("xdg-user-dir");
        std::fs::write(&f, "#!/bin/sh\n").unwrap();
        assert!(!on_path("xdg-user-dir", &path), "not executable");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(on_path("xdg-user-dir", &path));
        assert!(!on_path("xdg-user-dir", std::ffi::OsStr::new("")));
    }
}
