//! The person's global gitignore, found as git finds it: `core.excludesFile` in the global
//! config (`$GIT_CONFIG_GLOBAL`, or `$XDG_CONFIG_HOME/git/config` then `~/.gitconfig`, the
//! later winning), else `$XDG_CONFIG_HOME/git/ignore` (`~/.config/git/ignore`). Cline's git
//! inherits the person's environment and honours it; ours runs without the person's config (so
//! nothing it names ever runs), so the file is found here and handed to git alone. Only that one
//! key is read, as text: nothing is run, `[include]`s are not followed.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Biggest git config file read (a bigger one is not looked into).
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The global excludes file, if there is one (from this process's environment).
pub(crate) fn path() -> Option<PathBuf> {
    find(|k| std::env::var_os(k).filter(|v| !v.is_empty()))
}

/// [`path`] with `env` as the environment.
fn find(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let home = env("HOME").map(PathBuf::from);
    let xdg = env("XDG_CONFIG_HOME").map(PathBuf::from).or_else(|| home.as_ref().map(|h| h.join(".config")));
    let configs: Vec<PathBuf> = match env("GIT_CONFIG_GLOBAL") {
        Some(file) => vec![PathBuf::from(file)],
        None => xdg.iter().map(|x| x.join("git/config")).chain(home.iter().map(|h| h.join(".gitconfig"))).collect(),
    };
    let named = configs
        .iter()
        .filter_map(|c| super::read_small(c, MAX_CONFIG_BYTES).ok())
        .filter_map(|text| excludes_file(&text))
        .next_back();
    let file = match named {
        // git's `~/` expansion of a path setting.
        Some(v) => match v.strip_prefix("~/") {
            Some(rest) => home?.join(rest),
            None => PathBuf::from(v),
        },
        None => xdg?.join("git/ignore"),
    };
    // A regular file only (git would wait on a FIFO); a relative path, which git would resolve
    // against each workspace, is not followed.
    (file.is_absolute() && file.is_file()).then_some(file)
}

/// The last `core.excludesFile` value of a git config file's text (`None`: not set there;
/// an empty value unsets it, as in git).
fn excludes_file(text: &str) -> Option<String> {
    let mut in_core = false;
    let mut found = None;
    for line in text.lines() {
        let mut rest = line.trim_start();
        if let Some(after) = rest.strip_prefix('[') {
            let Some((section, tail)) = after.split_once(']') else { continue };
            in_core = section.trim().eq_ignore_ascii_case("core");
            rest = tail.trim_start();
        }
        if !in_core {
            continue;
        }
        let (key, value) = rest.split_once('=').unwrap_or((rest, ""));
        if key.trim().eq_ignore_ascii_case("excludesfile") {
            found = Some(value_of(value));
        }
    }
    found.filter(|v| !v.is_empty())
}

/// A config value as git reads it: quotes removed, `\"`, `\\`, `\t`, `\n` unescaped, an
/// unquoted `#` or `;` starting a comment, outer blanks trimmed.
fn value_of(raw: &str) -> String {
    let (mut out, mut quoted, mut chars) = (String::new(), false, raw.trim().chars());
    // Trailing blanks outside quotes are dropped; inside quotes they are kept.
    let mut kept_len = 0;
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' => match chars.next() {
                Some('t') => out.push('\t'),
                Some('n') => out.push('\n'),
                Some(c) => out.push(c),
                None => {}
            },
            '#' | ';' if !quoted => break,
            c => out.push(c),
        }
        if quoted || !c.is_whitespace() {
            kept_len = out.len();
        }
    }
    out.truncate(kept_len);
    out
}

/// `PATH` as the `-c core.excludesFile=PATH` argument.
pub(crate) fn config_arg(path: &Path) -> OsString {
    let mut arg = OsString::from("core.excludesFile=");
    arg.push(path);
    arg
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn only_core_excludes_file_is_read_as_git_reads_it() {
        assert_eq!(excludes_file("[core]\n\texcludesFile = ~/.gitignore_global\n"), Some("~/.gitignore_global".into()));
        let text = "[Core] ExcludesFile = \"/a b/ign\" ; comment\n[alias]\n\texcludesfile = /no\n";
        assert_eq!(excludes_file(text), Some("/a b/ign".into()));
        assert_eq!(excludes_file("[core] excludesfile = /x # c\n[core]\n\texcludesfile = /y\n"), Some("/y".into()));
        assert_eq!(excludes_file("[core \"sub\"]\n\texcludesfile = /no\n[user]\n\tname = x\n"), None);
        assert_eq!(excludes_file("[core]\n\texcludesfile = /x\n\texcludesfile =\n"), None, "unset again");
    }

    #[test]
    fn the_file_is_found_where_git_looks() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        let vars = |pairs: &[(&str, &Path)]| -> HashMap<String, OsString> {
            pairs.iter().map(|(k, v)| (k.to_string(), v.as_os_str().to_owned())).collect()
        };
        let get = |m: &HashMap<String, OsString>| find(|k| m.get(k).cloned());
        let base = vars(&[("HOME", h)]);
        assert_eq!(get(&base), None, "no file");
        std::fs::create_dir_all(h.join(".config/git")).unwrap();
        std::fs::write(h.join(".config/git/ignore"), "notes/\n").unwrap();
        assert_eq!(get(&base), Some(h.join(".config/git/ignore")));
        // XDG_CONFIG_HOME moves the default.
        std::fs::create_dir_all(h.join("xdg/git")).unwrap();
        std::fs::write(h.join("xdg/git/ignore"), "x\n").unwrap();
        assert_eq!(get(&vars(&[("HOME", h), ("XDG_CONFIG_HOME", &h.join("xdg"))])), Some(h.join("xdg/git/ignore")));
        // ~/.gitconfig wins over the XDG config; `~/` is the home.
        std::fs::write(h.join("mine"), "y\n").unwrap();
        std::fs::write(h.join(".config/git/config"), "[core]\n\texcludesFile = /nowhere\n").unwrap();
        std::fs::write(h.join(".gitconfig"), "[core]\n\texcludesFile = ~/mine\n").unwrap();
        assert_eq!(get(&base), Some(h.join("mine")));
        // GIT_CONFIG_GLOBAL replaces both.
        std::fs::write(h.join("g"), "[core]\n\texcludesFile = ~/.config/git/ignore\n").unwrap();
        assert_eq!(get(&vars(&[("HOME", h), ("GIT_CONFIG_GLOBAL", &h.join("g"))])), Some(h.join(".config/git/ignore")));
    }
}
