//! The API keys this process knows, and their removal from anything it shows.
//!
//! Commands never see the keys (the sandbox's environment policy withholds them, and every
//! variable whose name says it is a secret, whose values are registered here too),
//! and saved tasks redact them ([`crate::run::session::state`]). As a second line of defence, the terminal and
//! the `--json` events pass what they print through [`apply`]. (A key split across two streamed
//! deltas is not caught here; the first line of defence is that nothing the model or a command
//! can reach holds it.)

use std::borrow::Cow;
use std::sync::Mutex;

/// The environment variables a key is read from; removed from every command's environment.
/// Each provider's declaration names its own (`llm/providers/registry.rs`); a test there fails
/// until a new provider's variable is listed here too (`ui` depends on nothing of `llm`).
pub(crate) const KEY_VARS: &[&str] = &["ANTHROPIC_API_KEY", "OPENAI_API_KEY"];

/// What a secret is replaced with.
pub(crate) const MASK: &str = "[REDACTED]";

static SECRETS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Registers a secret to be masked from now on. Very short values (under 8 characters) are not
/// registered: masking them would mangle ordinary text, and they are not real keys.
pub(crate) fn add(secret: &str) {
    let s = secret.trim();
    if s.len() < 8 {
        return;
    }
    let mut v = SECRETS.lock().unwrap_or_else(|e| e.into_inner());
    if !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

/// Registers the keys of [`KEY_VARS`] that are set.
pub(crate) fn add_from_env() {
    for k in KEY_VARS {
        if let Ok(v) = std::env::var(k) {
            add(&v);
        }
    }
}

/// `s` with every registered secret replaced by [`MASK`].
pub(crate) fn apply(s: &str) -> Cow<'_, str> {
    let v = SECRETS.lock().unwrap_or_else(|e| e.into_inner());
    let mut out = Cow::Borrowed(s);
    for secret in v.iter() {
        if out.contains(secret.as_str()) {
            out = Cow::Owned(out.replace(secret.as_str(), MASK));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_and_events_mask_registered_keys() {
        add("sk-redact-unit-test-1234");
        add("short");
        assert_eq!(apply("a sk-redact-unit-test-1234 b short"), "a [REDACTED] b short");
        let buf = crate::run::ui::term::Captured::default();
        let mut term = crate::run::ui::term::Term::to_writer(Box::new(buf.clone()));
        term.text("key=sk-redact-unit-test-1234\n");
        term.outcome(false, "sk-redact-unit-test-1234");
        let mut ev = crate::run::session::events::Events::to(Box::new(buf.clone()));
        ev.tool_result("c1", "execute_command", true, "key=sk-redact-unit-test-1234", None);
        let out = buf.text();
        assert!(!out.contains("sk-redact-unit-test-1234"), "{out}");
        assert_eq!(out.matches(MASK).count(), 3, "{out}");
    }
}
