//! The API keys this process knows, and their removal from anything it shows.
//!
//! Commands never see the keys (the sandbox's environment policy withholds them, and every
//! variable whose name says it is a secret, whose values are registered here too),
//! and saved tasks redact them ([`crate::run::session::state`]). As a second line of defence, the terminal and
//! the `--json` events pass what they print through [`apply`]. What streams out in pieces (the
//! model's text and reasoning, a command's output) goes through a [`Streamed`] instead, a
//! value still streaming through [`shown_so_far`], and a text cut short through [`cut_end`] or
//! [`cut_start`]: a key split across two pieces, or cut, would pass [`apply`] unseen.

use std::borrow::Cow;
use std::sync::Mutex;

/// The environment variables a key is read from; removed from every command's environment.
/// Each provider's declaration names its own (`llm/providers/registry.rs`); a test there fails
/// until a new provider's variable is listed here too (`ui` depends on nothing of `llm`).
pub(crate) const KEY_VARS: &[&str] = &["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "OLLAMA_API_KEY"];

/// What a secret is replaced with.
pub(crate) const MASK: &str = "[REDACTED]";

static SECRETS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Registers a secret to be masked from now on. Very short values (under 8 characters) are not
/// registered: masking them would mangle ordinary text, and they are not real keys. So is its
/// form inside a JSON string, if it differs (a line break, a quote, a backslash in it): the
/// events, the editor's messages and saved tasks are masked once serialized.
pub(crate) fn add(secret: &str) {
    let s = secret.trim();
    if s.len() < 8 {
        return;
    }
    let json = serde_json::to_string(s).ok();
    let escaped = json.as_deref().map(|q| &q[1..q.len() - 1]).filter(|e| *e != s);
    let mut v = SECRETS.lock().unwrap_or_else(|e| e.into_inner());
    for form in std::iter::once(s).chain(escaped) {
        if !v.iter().any(|x| x == form) {
            // Longest first: a secret inside another (a password inside a URL) goes with it.
            let at = v.iter().position(|x| x.len() < form.len()).unwrap_or(v.len());
            v.insert(at, form.to_string());
        }
    }
}

/// Name fragments that mark a variable as a secret (compared case-insensitively).
const SECRET_MARKERS: &[&str] = &["KEY", "SECRET", "TOKEN"];

/// Whether a variable's name contains `KEY`, `SECRET` or `TOKEN`, in any case: the sandbox
/// withholds it from commands.
pub(crate) fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_MARKERS.iter().any(|m| upper.contains(m))
}

/// The secret variables the sandbox wiped from the agent's own environment, by name, with
/// their values (the agent's memory cannot be read by another process: it is non-dumpable).
static WITHHELD: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// Keeps the value of the variable `name`, which is being wiped from the environment.
pub(crate) fn withhold(name: &str, value: &str) {
    let mut v = WITHHELD.lock().unwrap_or_else(|e| e.into_inner());
    v.retain(|(n, _)| n != name);
    v.push((name.to_string(), value.to_string()));
}

/// The variable `name` the agent was started with: from the environment, else as it was before
/// the sandbox withheld it ([`withhold`]).
pub(crate) fn withheld(name: &str) -> Option<String> {
    std::env::var(name).ok().or_else(|| {
        let v = WITHHELD.lock().unwrap_or_else(|e| e.into_inner());
        v.iter().find(|(n, _)| n == name).map(|(_, value)| value.clone())
    })
}

/// Registers the keys of [`KEY_VARS`] that are set.
pub(crate) fn add_from_env() {
    for k in KEY_VARS {
        if let Ok(v) = std::env::var(k) {
            add(&v);
        }
    }
}

/// The registered secrets (each form), for a search of what else may hold them.
pub(crate) fn secrets() -> Vec<String> {
    SECRETS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// `s` with every registered secret replaced by [`MASK`] (secrets that overlap, by one).
pub(crate) fn apply(s: &str) -> Cow<'_, str> {
    mask(s, None)
}

/// `s` with every registered secret masked, and the bytes from `tail` on if given (a key's
/// start): each stretch of overlapping ones becomes one [`MASK`], so a secret that begins
/// inside another shows no part of either.
fn mask(s: &str, tail: Option<usize>) -> Cow<'_, str> {
    let mut spans: Vec<std::ops::Range<usize>> = tail.map(|t| t..s.len()).into_iter().collect();
    {
        let v = SECRETS.lock().unwrap_or_else(|e| e.into_inner());
        for secret in v.iter() {
            spans.extend(s.match_indices(secret.as_str()).map(|(i, m)| i..i + m.len()));
        }
    }
    if spans.is_empty() {
        return Cow::Borrowed(s);
    }
    spans.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    let mut spans = spans.into_iter();
    let mut cur = spans.next();
    while let Some(c) = cur {
        let mut end = c.end;
        cur = spans.next();
        while let Some(next) = cur.as_ref().filter(|n| n.start < end) {
            end = end.max(next.end);
            cur = spans.next();
        }
        out.push_str(&s[at..c.start]);
        out.push_str(MASK);
        at = end;
    }
    out.push_str(&s[at..]);
    Cow::Owned(out)
}

/// One stream's masking across its pieces (the model's text or reasoning, a command's output):
/// a key split across two pieces would pass [`apply`] half by half, so an end of the text that
/// may be a key's start is held back until the next piece says whether it is.
#[derive(Debug, Default)]
pub(crate) struct Streamed {
    /// The end of the text so far that may be a key's start, not shown yet.
    held: String,
    /// A possible key's start that an early [`Streamed::end`] had to show (as it is, under 8
    /// bytes) or mask (`open_masked`): should the next pieces complete that key, the rest of
    /// it is masked too.
    open: String,
    open_masked: bool,
}

impl Streamed {
    /// What can be shown now of `piece`, after what was held: the text with every secret
    /// masked, minus an end that may be a key's start. Joined, what is shown is the text
    /// masked as [`apply`] masks it whole.
    pub(crate) fn push(&mut self, piece: &str) -> String {
        let mut text = std::mem::take(&mut self.held);
        text.push_str(piece);
        let mut out = String::new();
        if !self.open.is_empty() {
            match continuation(&self.open, &text) {
                Continuation::Key(n) => {
                    if !self.open_masked {
                        out.push_str(MASK);
                    }
                    text.drain(..n);
                }
                Continuation::Maybe(_) => {
                    self.held = text;
                    return out;
                }
                Continuation::No => {}
            }
            self.open.clear();
            self.open_masked = false;
        }
        let cut = hold_from(&text);
        out.push_str(&apply(&text[..cut]));
        text.drain(..cut);
        self.held = text;
        out
    }

    /// Whether an end of the text is held back.
    pub(crate) fn holds(&self) -> bool {
        !self.held.is_empty()
    }

    /// What was held back, to show now: the stream ends, or something else is shown before its
    /// next piece. A key's start of 8 bytes or more is masked (the stream ended inside a key: its
    /// rest must not show most of it); a shorter one is shown as it is (a key's first few
    /// characters, often its public prefix, as ordinary text ends with them too). Either way,
    /// should the next pieces complete that key, the rest of it is masked.
    pub(crate) fn end(&mut self) -> String {
        let held = std::mem::take(&mut self.held);
        if held.is_empty() {
            return held;
        }
        if !self.open.is_empty() {
            // The held text may go on a key whose start was shown or masked already.
            if let Continuation::Maybe(len) = continuation(&self.open, &held) {
                self.open.push_str(&held);
                return if len < 8 {
                    held
                } else if std::mem::replace(&mut self.open_masked, true) {
                    String::new()
                } else {
                    MASK.to_string()
                };
            }
        }
        // Whole keys, then the start of one (with which they may overlap), as a text cut there.
        let start = secret_start(&held);
        self.open = held[start..].to_string();
        self.open_masked = held.len() - start >= 8;
        cut_end(&held).into_owned()
    }
}

/// How text goes on after an early end showed `shown`, a possible key's start.
enum Continuation {
    /// Its first `n` bytes end a key that `shown` began.
    Key(usize),
    /// All of it may go on such a key: a start of this many bytes so far.
    Maybe(usize),
    /// It goes on no key.
    No,
}

fn continuation(shown: &str, text: &str) -> Continuation {
    let v = SECRETS.lock().unwrap_or_else(|e| e.into_inner());
    let joined = [shown.as_bytes(), text.as_bytes()].concat();
    // The first place that ends a key, and the first that may still go on one (the longest
    // secrets come first): a key that may still go on from as early wins (a password, then
    // the rest of the URL it is in), until the text says it does not.
    let (mut key, mut maybe) = (None, None);
    for i in (0..shown.len()).filter(|&i| shown.is_char_boundary(i)) {
        let rest = &joined[i..];
        for secret in v.iter().map(|s| s.as_bytes()) {
            if rest.starts_with(secret) && i + secret.len() > shown.len() {
                key = key.or(Some((i, i + secret.len() - shown.len())));
            } else if secret.len() > rest.len() && secret.starts_with(rest) {
                maybe = maybe.or(Some((i, rest.len())));
            }
        }
    }
    match (key, maybe) {
        (Some((k, _)), Some((m, len))) if m <= k => Continuation::Maybe(len),
        (Some((_, n)), _) => Continuation::Key(n),
        (None, Some((_, len))) => Continuation::Maybe(len),
        (None, None) => Continuation::No,
    }
}

/// A URL without what may be a credential, as it is saved and shown: `scheme://user:pw@host/…`
/// → `scheme://host/…` (the authority ends at the first `/`, `?` or `#`), and without the query
/// parameters whose names say they hold one (`?api-key=…`, `?token=…`, `?sig=…`, `?code=…`: a
/// gateway's key in its URL); others (`?api-version=…`) stay.
pub(crate) fn without_credentials(url: &str) -> String {
    let url = match url.split_once("://") {
        Some((scheme, rest)) => {
            let host_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            match rest[..host_end].rfind('@') {
                Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
                None => url.to_string(),
            }
        }
        None => url.to_string(),
    };
    let Some((before, query)) = url.split_once('?') else { return url };
    let (query, fragment) = query.split_once('#').map_or((query, None), |(q, f)| (q, Some(f)));
    let secret = |param: &&str| {
        let name = param.split('=').next().unwrap_or("").to_ascii_lowercase();
        ["key", "token", "secret", "sig", "pass", "auth", "code", "credential"].iter().any(|w| name.contains(w))
    };
    let kept: Vec<&str> = query.split('&').filter(|p| !secret(p)).collect();
    let mut out = before.to_string();
    if !kept.is_empty() && kept != [""] {
        out = format!("{out}?{}", kept.join("&"));
    }
    if let Some(f) = fragment {
        out = format!("{out}#{f}");
    }
    out
}

/// A value still streaming, as far as it can be shown: masked, without an end that may be a
/// key's start.
pub(crate) fn shown_so_far(value: &str) -> Cow<'_, str> {
    apply(&value[..hold_from(value)])
}

/// The start of a text cut short (a line or an output kept to its first bytes), masked, and
/// with an end that is 8 bytes or more of a key's start masked too: the cut went through a
/// key, which masking the text would not find.
pub(crate) fn cut_end(head: &str) -> Cow<'_, str> {
    let start = secret_start(head);
    mask(head, (head.len() - start >= 8).then_some(start))
}

/// The first `n` characters of `s`; if that cuts it short, a key the cut went through is
/// masked ([`cut_end`]).
pub(crate) fn first_chars(s: &str, n: usize) -> Cow<'_, str> {
    match s.char_indices().nth(n) {
        Some((at, _)) => Cow::Owned(cut_end(&s[..at]).into_owned()),
        None => Cow::Borrowed(s),
    }
}

/// The last `n` characters of `s`; if that cuts it short, a key the cut went through is
/// masked ([`cut_start`]).
pub(crate) fn last_chars(s: &str, n: usize) -> Cow<'_, str> {
    let skip = s.chars().count().saturating_sub(n);
    if skip == 0 {
        return Cow::Borrowed(s);
    }
    let at = s.char_indices().nth(skip).map_or(s.len(), |(i, _)| i);
    Cow::Owned(cut_start(&s[at..]).into_owned())
}

/// The end of a text whose start was cut off, masked, and with a start that is 8 bytes or
/// more of a key's end masked too.
pub(crate) fn cut_start(tail: &str) -> Cow<'_, str> {
    let end = {
        let v = SECRETS.lock().unwrap_or_else(|e| e.into_inner());
        // The longest proper end of a secret that `tail` starts with.
        v.iter()
            .filter_map(|s| {
                (1..s.len()).find(|&j| s.is_char_boundary(j) && tail.starts_with(&s[j..])).map(|j| s.len() - j)
            })
            .max()
            .unwrap_or(0)
    };
    if end >= 8 {
        Cow::Owned(format!("{MASK}{}", apply(&tail[end..])))
    } else {
        apply(tail)
    }
}

/// Where the text to hold back begins: the longest end of `text` that is a proper start of a
/// secret, moved back to the start of a whole secret that it would cut (secrets can overlap).
fn hold_from(text: &str) -> usize {
    let mut cut = secret_start(text);
    if cut == text.len() {
        return cut;
    }
    let v = SECRETS.lock().unwrap_or_else(|e| e.into_inner());
    let bytes = text.as_bytes();
    loop {
        let before = cut;
        for secret in v.iter().map(|s| s.as_bytes()) {
            let from = cut.saturating_sub(secret.len() - 1);
            let across = bytes[from..].windows(secret.len()).position(|w| w == secret).map(|p| from + p);
            if let Some(p) = across.filter(|&p| p < cut) {
                cut = p;
            }
        }
        if cut == before {
            return cut;
        }
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
        let head = secret.as_bytes()[0];
        if let Some(i) = (first..cut).find(|&i| bytes[i] == head && secret.as_bytes().starts_with(&bytes[i..])) {
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

    /// A stream as a terminal or the events show it, `ends[i]` saying whether something else
    /// was shown (an early end) after piece `i`.
    fn shown_with(pieces: &[&str], ends: &[bool]) -> String {
        let mut s = Streamed::default();
        let mut out = String::new();
        for (i, piece) in pieces.iter().enumerate() {
            out += &s.push(piece);
            if ends.get(i) == Some(&true) {
                out += &s.end();
            }
        }
        out + &s.end()
    }

    fn shown(pieces: &[&str]) -> String {
        shown_with(pieces, &[])
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
        // A stream that ends inside the key: 8 bytes or more of it are masked, fewer shown.
        for end in 1..key.len() {
            let text = format!("key: {}", &key[..end]);
            let got = shown(&[&text[..text.len() - end / 2], &text[text.len() - end / 2..]]);
            let want = if end >= 8 { format!("key: {MASK}") } else { text.clone() };
            assert_eq!(got, want, "ends after {end} of the key");
        }
    }

    #[test]
    fn after_an_early_end_no_eight_bytes_of_a_key_show_wherever_the_pieces_fall() {
        let key = "Qz-early-end-key-0123456789";
        add(key);
        let text = format!("a {key} b");
        let windows: Vec<&str> = (0..=key.len() - 8).map(|i| &key[i..i + 8]).collect();
        // Every three pieces, with something else shown after any of the first two.
        for a in 0..=text.len() {
            for b in a..=text.len() {
                for ends in [[true, false], [false, true], [true, true]] {
                    let got = shown_with(&[&text[..a], &text[a..b], &text[b..]], &ends);
                    assert!(!windows.iter().any(|w| got.contains(w)), "{a} {b} {ends:?}: {got}");
                    assert!(got.starts_with("a ") && got.ends_with(" b") && got.contains(MASK), "{got}");
                }
            }
        }
        // A start masked early, then the rest of the key: masked once.
        assert_eq!(shown_with(&["a Qz-early-e", "nd-key-0123456789 b"], &[true]), format!("a {MASK} b"));
        // A short start shown early, then the rest of the key: the rest is masked.
        assert_eq!(shown_with(&["a Qz-ea", "rly-end-key-0123456789 b"], &[true]), format!("a Qz-ea{MASK} b"));
        // ... or not the key after all: nothing is lost.
        assert_eq!(shown_with(&["a Qz-ea", "sy b"], &[true]), "a Qz-easy b");
    }

    #[test]
    fn a_secret_inside_another_is_masked_with_it_and_a_cut_one_too() {
        add("Qz-inner-pass-word");
        add("Qz-url://Qz-inner-pass-word@db.example/app");
        let text = "url Qz-url://Qz-inner-pass-word@db.example/app end";
        assert_eq!(apply(text), format!("url {MASK} end"));
        for a in 0..=text.len() {
            assert_eq!(shown(&[&text[..a], &text[a..]]), format!("url {MASK} end"), "cut at {a}");
        }
        // Cut short through a key: its start (8 bytes or more) is masked, and so is an end.
        assert_eq!(cut_end("head Qz-inner-pass"), format!("head {MASK}"));
        assert_eq!(cut_end("head Qz-inne"), "head Qz-inne");
        assert_eq!(cut_start("ner-pass-word tail"), format!("{MASK} tail"));
        assert_eq!(cut_start("word tail"), "word tail");
        assert_eq!(shown_so_far("v=Qz-inner-pa"), "v=");
        // By characters: a cut through a key masks it, a text not cut is as it is.
        assert_eq!(first_chars("head Qz-inner-pass-word-and-more", 18), format!("head {MASK}"));
        assert_eq!(first_chars("é short", 100), "é short");
        assert_eq!(last_chars("x Qz-inner-pass-word tail", 18), format!("{MASK} tail"));
        assert_eq!((last_chars("é tail", 6), last_chars("é tail", 0)), ("é tail".into(), "".into()));
    }

    #[test]
    fn keys_that_share_a_start_or_overlap_show_no_part_after_an_early_end() {
        // A key, and a longer one it begins: the longer may still go on, so nothing is shown.
        add("Qz-pass-0123456789");
        add("Qz-pass-0123456789-extra-tail");
        let got = shown_with(&["key Qz-pa", "ss-0123456789-ext", "ra-tail."], &[true]);
        assert_eq!(got, format!("key Qz-pa{MASK}."));
        // A password inside a URL that is a secret too, the URL's start masked early.
        add("Qz-hunter2-hunter2");
        add("Qz-url://app:Qz-hunter2-hunter2@db.internal/prod");
        let got = shown_with(&["url Qz-url://app:Qz-hun", "ter2-hunter2@db", ".internal/prod ok"], &[true]);
        assert_eq!(got, format!("url {MASK} ok"));
        // A key that begins inside another: one mask for both, whole or streamed.
        add("Qz-alpha-Qz-beta-01");
        add("Qz-beta-01-gamma-99");
        assert_eq!(apply("x Qz-alpha-Qz-beta-01-gamma-99 y"), format!("x {MASK} y"));
        assert_eq!(shown_with(&["x Qz-alpha-Qz-beta-01-gam", "ma-99 y"], &[true]), format!("x {MASK} y"));
        let text = "x Qz-alpha-Qz-beta-01-gamma-99 y";
        for a in 0..=text.len() {
            assert_eq!(shown(&[&text[..a], &text[a..]]), format!("x {MASK} y"), "cut at {a}");
        }
    }

    #[test]
    fn a_key_with_a_line_break_or_a_quote_is_masked_in_json_lines_too() {
        let key = "Qz-json-\"quoted\"\nsecond-line";
        add(key);
        let buf = crate::run::ui::term::Captured::default();
        let mut ev = crate::run::session::events::Events::to(Box::new(buf.clone()));
        ev.tool_result("c1", "execute_command", true, &format!("out {key} end"), None);
        let line = buf.text();
        assert!(line.contains(r#""result":"out [REDACTED] end""#), "{line}");
        assert!(!line.contains("quoted"), "{line}");
    }

    #[test]
    fn only_a_possible_start_of_a_key_is_held_back() {
        add("Qz-held-back-key-0123456789");
        let mut s = Streamed::default();
        assert_eq!(s.push("plain text."), "plain text.");
        assert_eq!(s.push(" a Qz-held"), " a ");
        // Not the key's start after all: shown, and nothing held.
        assert_eq!(s.push("-forth"), "Qz-held-forth");
        assert_eq!(s.end(), "");
        assert_eq!(s.push("Qz-held-back-key-0123456789"), MASK);
        // Multi-byte text before it is cut at a character boundary.
        assert_eq!(s.push("é→Q"), "é→");
        assert_eq!(s.end(), "Q");
    }
}
