//! The environment a command gets: the agent's own, minus every variable whose name says it
//! holds a secret (like codex's `shell_environment_policy` default excludes), adjusted by
//! `--env-keep NAME` and `--env-drop NAME`.

pub(crate) use crate::run::ui::redact::looks_secret;

/// Variables that lead a command to a process outside the sandbox through a socket or a
/// display (an ssh or gpg agent, the session bus, docker, tmux or screen, X or Wayland):
/// withheld by default, like secrets.
pub(crate) const SOCKET_VARS: &[&str] = &[
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "DOCKER_HOST",
    "TMUX",
    "TMUX_PANE",
    "STY",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
];

/// Which variables a command inherits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct EnvPolicy {
    /// Passed although their names look secret (`--env-keep`).
    pub keep: Vec<String>,
    /// Removed although their names look harmless (`--env-drop`).
    pub drop: Vec<String>,
}

impl EnvPolicy {
    /// Whether a command may see the variable `name`. The agent's own API keys never pass,
    /// whatever `--env-keep` says: a command has no business with them.
    pub(crate) fn passes(&self, name: &str) -> bool {
        if crate::run::ui::redact::KEY_VARS.contains(&name) || self.drop.iter().any(|d| d == name) {
            return false;
        }
        let withheld = looks_secret(name) || SOCKET_VARS.contains(&name);
        !withheld || self.keep.iter().any(|k| k == name)
    }

    /// The names of the variables of this process that a command does not get. A name that is
    /// not UTF-8 is judged by its text with the odd bytes replaced: `MY_TOKEN\xff` is withheld
    /// like `MY_TOKEN`.
    pub(crate) fn withheld(&self) -> Vec<std::ffi::OsString> {
        Self::withheld_of(self, std::env::vars_os().map(|(k, _)| k))
    }

    fn withheld_of(&self, names: impl Iterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
        names.filter(|k| !self.passes(&k.to_string_lossy())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_names_are_withheld_unless_kept() {
        let p = EnvPolicy::default();
        for name in ["OPENROUTER_API_KEY", "GITHUB_TOKEN", "aws_secret_access_key", "MyKeyFile"] {
            assert!(!p.passes(name), "{name}");
        }
        for name in ["PATH", "HOME", "LANG", "CARGO_HOME"] {
            assert!(p.passes(name), "{name}");
        }
        for name in ["SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS", "TMUX", "DISPLAY"] {
            assert!(!p.passes(name), "{name}");
        }
        assert!(EnvPolicy { keep: vec!["SSH_AUTH_SOCK".into()], drop: vec![] }.passes("SSH_AUTH_SOCK"));
        let p = EnvPolicy { keep: vec!["GITHUB_TOKEN".into(), "ANTHROPIC_API_KEY".into()], drop: vec!["HOME".into()] };
        assert!(p.passes("GITHUB_TOKEN"));
        assert!(!p.passes("ANTHROPIC_API_KEY"), "the agent's own key never passes");
        assert!(!p.passes("HOME"));
        assert!(!p.passes("NPM_TOKEN"));
    }

    #[test]
    fn a_name_that_is_not_utf8_is_judged_by_its_text() {
        use std::os::unix::ffi::OsStringExt;
        let odd = |s: &[u8]| std::ffi::OsString::from_vec(s.to_vec());
        let names = [odd(b"MY_TOKEN\xff"), odd(b"\xfeAPI_KEY"), odd(b"PLAIN\xff"), odd(b"PATH")];
        let out = EnvPolicy::default().withheld_of(names.into_iter());
        assert_eq!(out, [odd(b"MY_TOKEN\xff"), odd(b"\xfeAPI_KEY")]);
    }
}
