//! The config file: `$XDG_CONFIG_HOME/agent-min/config.toml` (else `~/.config/agent-min/`).
//!
//! Its keys are `run`'s long options with `_` or `-` (`model = "…"`, `max_cost = 0.5`,
//! `yolo = true`, `rules = ["a.md", "b.md"]`); `[profiles.NAME]` tables hold more of them,
//! chosen by `--profile NAME` or the file's own `profile = "NAME"`. The file becomes arguments
//! placed before the command line's, so one parser reads both and a flag beats the file. A
//! relative path in the file is read from the file's folder (`rules = ["team.md"]` is the
//! one beside it, wherever the agent is started), as a path in a file usually is.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Most bytes of a config file.
const MAX_CONFIG: u64 = 1 << 20;

/// Options that cannot come from the file: they name one task, one run, or the file itself.
const NOT_IN_THE_FILE: &[&str] = &["help", "version", "replay", "last", "profile", "no-config", "output-last-message"];

/// Options whose values are paths: relative ones are read from the config file's folder.
const PATHS: &[&str] = &["cwd", "output-schema", "state-dir", "rules", "mcp-config", "sandbox-allow-write"];

/// The default config file, if a home is known.
pub(crate) fn default_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("agent-min").join("config.toml"))
}

/// The arguments the config file at `path` stands for, with profile `profile` (or the file's
/// own `profile` key) applied over its top level. A missing file is no arguments; a file that
/// does not parse, an unknown profile or a value of the wrong kind is an error naming the file
/// and the key. `refuses(flag, value)` says whether the option leaves `value` unread (`--yolo`
/// takes none; `--auto-approve` takes `true` or `false` only): such a key must be `true` or
/// `false`, since the value would become the task.
pub(crate) fn arguments(
    path: &Path,
    profile: Option<&str>,
    refuses: &dyn Fn(&str, &str) -> bool,
) -> Result<Vec<OsString>, String> {
    let shown = path.display();
    let text = match read_bounded(path) {
        Ok(Some(t)) => t,
        Ok(None) if profile.is_none() => return Ok(Vec::new()),
        Ok(None) => return Err(format!("--profile {:?}: there is no config file {shown}", profile.unwrap_or(""))),
        Err(e) => return Err(format!("cannot read the config file {shown}: {e}")),
    };
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        format!("the config file {shown} is not valid TOML: {}", one_line(&e.to_string()))
    })?;
    let chosen =
        profile.map(str::to_string).or_else(|| table.get("profile").and_then(|v| v.as_str()).map(String::from));
    // Each key once: a profile's value replaces the top level's (so `yolo = false` in a
    // profile turns off a top-level `yolo = true`, which as flags could only add).
    let mut merged: Vec<(&String, &toml::Value, String)> = Vec::new();
    for (key, value) in &table {
        if key == "profile" || key == "profiles" {
            continue;
        }
        merged.push((key, value, format!("{shown}")));
    }
    if let Some(name) = chosen {
        let profiles = table.get("profiles").and_then(|p| p.as_table());
        let Some(p) = profiles.and_then(|p| p.get(&name)).and_then(|p| p.as_table()) else {
            let known: Vec<&str> = profiles.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
            return Err(format!(
                "profile {name:?} is not in the config file {shown} (it has: {}); add a [profiles.{name}] table",
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            ));
        };
        for (key, value) in p {
            let at = format!("{shown} [profiles.{name}]");
            let same = |k: &str| k.replace('_', "-") == key.replace('_', "-");
            match merged.iter_mut().find(|(k, ..)| same(k)) {
                Some(entry) => *entry = (key, value, at),
                None => merged.push((key, value, at)),
            }
        }
    }
    let folder = path.parent().unwrap_or(Path::new(""));
    let mut args = Vec::new();
    for (key, value, at) in merged {
        push(&mut args, key, value, &at, folder, refuses)?;
    }
    Ok(args)
}

/// `key = value` as the long option it stands for; a relative path is joined to `folder`.
fn push(
    args: &mut Vec<OsString>,
    key: &str,
    value: &toml::Value,
    at: &str,
    folder: &Path,
    refuses: &dyn Fn(&str, &str) -> bool,
) -> Result<(), String> {
    let flag = key.replace('_', "-");
    if NOT_IN_THE_FILE.contains(&flag.as_str()) || flag.is_empty() || flag.starts_with('-') {
        return Err(format!("{at}: `{key}` cannot be set in the config file; give --{flag} on the command line"));
    }
    let long = OsString::from(format!("--{flag}"));
    let given = match value {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(n) => Some(n.to_string()),
        toml::Value::Float(x) => Some(x.to_string()),
        _ => None,
    };
    if let Some(given) = given.filter(|g| refuses(&flag, g)) {
        let shown = value.as_str().map_or(given.clone(), |s| format!("{s:?}"));
        return Err(format!(
            "{at}: `{key}` does not take {shown} (it would become the task); a switch is true or false, without quotes"
        ));
    }
    let path = |s: &str| -> OsString {
        if !PATHS.contains(&flag.as_str()) || s.is_empty() {
            return s.into();
        }
        // `~/…` is the home's, as a shell would have it.
        let home = std::env::var_os("HOME").filter(|h| !h.is_empty());
        match (s.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => Path::new(&home).join(rest).into(),
            _ if Path::new(s).is_relative() => folder.join(s).into(),
            _ => s.into(),
        }
    };
    match value {
        toml::Value::Boolean(true) => args.push(long),
        toml::Value::Boolean(false) => {}
        toml::Value::String(s) => args.extend([long, path(s)]),
        toml::Value::Integer(n) => args.extend([long, n.to_string().into()]),
        toml::Value::Float(x) => args.extend([long, x.to_string().into()]),
        toml::Value::Array(items) => {
            for item in items {
                let Some(s) = item.as_str() else {
                    return Err(format!("{at}: `{key}` must be a list of strings"));
                };
                args.extend([long.clone(), path(s)]);
            }
        }
        _ => return Err(format!("{at}: `{key}` must be a string, a number, true/false or a list of strings")),
    }
    Ok(())
}

/// The file's text, `None` if it does not exist: at most [`MAX_CONFIG`] bytes of UTF-8, read
/// once from one descriptor that is a regular file (a FIFO put there cannot block the start).
fn read_bounded(path: &Path) -> Result<Option<String>, String> {
    use crate::run::trusted_file::{read, Error, Links};
    match read(path, Links::Follow, MAX_CONFIG) {
        Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| "not UTF-8 text".to_string()),
        Err(Error::Missing) => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `arguments` with `yolo` the one switch.
    fn args(f: &Path, profile: Option<&str>) -> Result<Vec<OsString>, String> {
        arguments(f, profile, &|flag, _| flag == "yolo")
    }

    fn strings(a: &[OsString]) -> Vec<String> {
        a.iter().map(|s| s.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn keys_become_flags_and_a_profiles_values_replace_the_top_levels() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("config.toml");
        std::fs::write(
            &f,
            "model = \"m1\"\nmax_tokens = 100\nyolo = false\nrules = [\"/a.md\", \"/b.md\"]\n\n[profiles.ci]\nyolo = true\nmodel = \"m2\"\nmax-cost = 0.5\n",
        )
        .unwrap();
        // Keys in the file's tables come in name order; a profile's replace the top level's
        // (`max-cost` and `max_cost` are one key), its others come after.
        assert_eq!(
            strings(&args(&f, None).unwrap()),
            ["--max-tokens", "100", "--model", "m1", "--rules", "/a.md", "--rules", "/b.md"]
        );
        let ci = strings(&args(&f, Some("ci")).unwrap());
        assert_eq!(
            ci,
            [
                "--max-tokens",
                "100",
                "--model",
                "m2",
                "--rules",
                "/a.md",
                "--rules",
                "/b.md",
                "--yolo",
                "--max-cost",
                "0.5"
            ]
        );
        let e = args(&f, Some("nope")).unwrap_err();
        assert!(e.contains("profile \"nope\"") && e.contains("it has: ci"), "{e}");
        // A profile turns off what the top level turns on.
        std::fs::write(&f, "yolo = true\nmax_cost = 1\n\n[profiles.careful]\nyolo = false\nmax-cost = 0.5\n").unwrap();
        assert_eq!(strings(&args(&f, None).unwrap()), ["--max-cost", "1", "--yolo"]);
        assert_eq!(strings(&args(&f, Some("careful")).unwrap()), ["--max-cost", "0.5"]);
    }

    #[test]
    fn errors_name_the_file_and_the_key() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("config.toml");
        assert!(args(&f, None).unwrap().is_empty(), "no file, no arguments");
        assert!(args(&f, Some("x")).unwrap_err().contains("there is no config file"));
        std::fs::write(&f, "model = ").unwrap();
        assert!(args(&f, None).unwrap_err().contains("is not valid TOML"));
        std::fs::write(&f, "replay = \"x.jsonl\"").unwrap();
        let e = args(&f, None).unwrap_err();
        assert!(e.contains("`replay` cannot be set") && e.contains(&f.display().to_string()), "{e}");
        std::fs::write(&f, "[profiles.a]\nmodel = { x = 1 }").unwrap();
        assert!(args(&f, Some("a")).unwrap_err().contains("[profiles.a]: `model` must be"));
    }

    #[test]
    fn a_switch_given_a_string_is_refused_not_made_the_task() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("config.toml");
        for bad in ["yolo = \"false\"", "yolo = 0", "[profiles.p]\nyolo = \"true\""] {
            std::fs::write(&f, bad).unwrap();
            let e = args(&f, Some("p").filter(|_| bad.contains("profiles"))).unwrap_err();
            assert!(
                e.contains("`yolo` does not take")
                    && e.contains("a switch is true or false")
                    && e.contains(&f.display().to_string()),
                "{e}"
            );
        }
    }

    #[test]
    fn relative_paths_are_read_from_the_files_folder() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("config.toml");
        let text = "rules = [\"team.md\", \"/etc/x.md\", \"~/r.md\"]\nmcp_config = \"mcp.json\"\nmodel = \"a/b\"\n";
        std::fs::write(&f, text).unwrap();
        let dir = d.path().display();
        let home = std::env::var("HOME").unwrap();
        assert_eq!(
            strings(&args(&f, None).unwrap()),
            [
                "--mcp-config",
                &format!("{dir}/mcp.json"),
                "--model",
                "a/b",
                "--rules",
                &format!("{dir}/team.md"),
                "--rules",
                "/etc/x.md",
                "--rules",
                &format!("{home}/r.md")
            ]
        );
    }

    #[test]
    fn a_fifo_in_its_place_does_not_block() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("config.toml");
        use rustix::fs::{FileType, Mode, CWD};
        rustix::fs::mknodat(CWD, &f, FileType::Fifo, Mode::RUSR | Mode::WUSR, 0).unwrap();
        assert!(args(&f, None).unwrap_err().contains("not a regular file"));
    }
}
