//! The API keys this process knows, and their removal from anything it shows.
//!
//! Commands never see the keys (the sandbox's environment policy withholds them, and every
//! variable whose name says it is a secret, whose values are registered here too),
//! and saved tasks redact them ([`crate::run::session::state`]). As a second line of defence, the terminal and
//! the `--json` events pass what they print through [`apply`]. What streams out in pieces (the
//! model's text and reasoning, a tool call's values while they stream) goes through
//! [`split_streamed`] and [`end_streamed`] instead: a key split across two pieces would pass
//! [`apply`] half by half, so the end of what is shown is held back while it could be the start
//! of a key.

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

/// Streamed text so far (the pieces not shown yet), with every registered secret masked, cut
/// where a secret may be starting at its end: what can be shown now, and the rest to hold until
/// more text says whether it is one (then it is the start of the next call's text; at the end of
/// the stream, [`end_streamed`]). The rest is empty unless the text ends with a proper start of
/// a secret, so that joining what is shown gives the text masked exactly as [`apply`] masks it
/// whole.
pub(crate) fn split_streamed(text: &str) -> (String, String) {
    let masked = apply(text);
    let cut = secret_start(&masked);
    (masked[..cut].to_string(), masked[cut..].to_string())
}

/// The end of a stream: the text [`split_streamed`] held back, shown — masked if it is 8
/// characters or more of a secret's start (the stream ended inside a key: the rest of it must
/// not show most of it), as it is if shorter (a key's first few characters, often its public
/// prefix, as ordinary text ends with them too).
pub(crate) fn end_streamed(held: &str) -> &str {
    if held.len() >= 8 && secret_start(held) == 0 {
        MASK
    } else {
        held
    }
}

/// Where the longest end of `s` that is the start of a registered secret, shorter than the
/// secret, begins (`s.len()` when none is).
fn secret_start(s: &str) -> usize {
    let v = SECRETS.lock().unwrap_or_else(|e| e.into_inner());
    let bytes = s.as_bytes();
    let mut cut = s.len();
    for secret in v.iter() {
        // Each place within the secret's length of the end, earliest first: the first whose
        // end the secret starts with is the longest for this secret. (A secret starts with a
        // character's first byte, so a matching place is a character boundary of `s`.)
        let first = bytes.len().saturating_sub(secret.len() - 1).min(cut);
        if let Some(i) = (first..cut).find(|&i| secret.as_bytes().starts_with(&bytes[i..])) {
            cut = i;
        }
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_and_events_mask_registered_keys() {
        // Test keys start with "Qz": text that other tests stream, running alongside, does not
        // end with a start of them (it would be held back).
        add("Qz-redact-unit-test-1234");
        add("short");
        assert_eq!(apply("a Qz-redact-unit-test-1234 b short"), "a [REDACTED] b short");
        let buf = crate::run::ui::term::Captured::default();
        let mut term = crate::run::ui::term::Term::to_writer(Box::new(buf.clone()));
        term.text("key=Qz-redact-unit-test-1234\n");
        term.outcome(false, "Qz-redact-unit-test-1234");
        let mut ev = crate::run::session::events::Events::to(Box::new(buf.clone()));
        ev.tool_result("c1", "execute_command", true, "key=Qz-redact-unit-test-1234", None);
        let out = buf.text();
        assert!(!out.contains("Qz-redact-unit-test-1234"), "{out}");
        assert_eq!(out.matches(MASK).count(), 3, "{out}");
    }

    /// A stream as a terminal or the events show it: each piece's shown part, then the end.
    fn shown(pieces: &[&str]) -> String {
        let (mut out, mut held) = (String::new(), String::new());
        for piece in pieces {
            let (now, rest) = split_streamed(&(held + piece));
            out += &now;
            held = rest;
        }
        out + end_streamed(&held)
    }

    #[test]
    fn a_key_split_anywhere_across_streamed_pieces_is_masked_whole() {
        let key = "Qz-stream-split-key-0123456789";
        add(key);
        let text = format!("the key is {key}, said the file.");
        let want = text.replace(key, MASK);
        for a in 0..=text.len() {
            for b in a..=text.len() {
                let got = shown(&[&text[..a], &text[a..b], &text[b..]]);
                assert_eq!(got, want, "cut at {a} and {b}");
            }
        }
        // A stream that ends inside the key: 8 characters or more of it are masked, fewer shown.
        for end in 1..key.len() {
            let text = format!("key: {}", &key[..end]);
            let got = shown(&[&text[..text.len() - end / 2], &text[text.len() - end / 2..]]);
            let want = if end >= 8 { format!("key: {MASK}") } else { text.clone() };
            assert_eq!(got, want, "ends after {end} of the key");
        }
    }

    #[test]
    fn only_a_possible_start_of_a_key_is_held_back() {
        add("Qz-held-back-key-0123456789");
        assert_eq!(split_streamed("plain text."), ("plain text.".into(), String::new()));
        assert_eq!(split_streamed("a Qz-held"), ("a ".into(), "Qz-held".into()));
        // Not the key's start, or the whole key (masked at once): nothing held.
        assert_eq!(split_streamed("a Qz-hold"), ("a Qz-hold".into(), String::new()));
        assert_eq!(split_streamed("Qz-held-back-key-0123456789"), (MASK.into(), String::new()));
        // Multi-byte text before it is cut at a character boundary.
        assert_eq!(split_streamed("é→Q"), ("é→".into(), "Q".into()));
    }
}
