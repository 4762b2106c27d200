//! Context-window management, after Cline's `ContextManager`.
//!
//! Before each request the prompt is estimated: the last request's reported usage (prompt plus
//! reply) plus about one token per 4 bytes of what was added since; with no usable report (the
//! first request, or just after a cut), the whole conversation at 4 bytes per token. Over
//! Cline's threshold (`max_allowed`), older full copies of a file (reads, written files' final
//! content, attached files) are replaced by Cline's notice first; unless that saved at least 30 % of the conversation's characters (Cline's
//! `attemptFileReadOptimizationCore` rule), half of the history after the first user/assistant pair
//! is removed (a quarter kept when the estimate is more than twice the threshold), ending on an
//! assistant message, and the first assistant message becomes Cline's truncation notice. When
//! the server still says the prompt is too long, `ContextWindow::cut_harder` keeps a quarter.

use crate::run::llm::providers::{history, Provider};
use crate::run::llm::{Message, Part, Role};

/// Cline's notice in place of an older read of a file that was read again later.
pub(crate) const DUPLICATE_READ_NOTICE: &str = "[[NOTE] This file read has been removed to save space in the context window. Refer to the latest file read for the most up to date version of this file.]";

/// Cline's notice, put in place of the first assistant message when history is removed.
/// (v4.0.10's `formatResponse.contextTruncationNotice`).
pub(crate) const TRUNCATION_NOTICE: &str = "[NOTE] Some previous conversation history with the user has been removed to maintain optimal context window length. The initial user task has been retained for continuity, while intermediate conversation history has been removed. Keep this in mind as you continue assisting the user. Pay special attention to the user's latest messages.";

/// The context window when `--context-window` is not given: Cline's model facts (`llm/models.rs`),
/// Cline's 128,000 for a model it does not know, Ollama's `num_ctx`.
pub(crate) fn default_window(provider: Option<Provider>, model: &str, num_ctx: u32) -> u64 {
    match provider {
        Some(Provider::Ollama) => u64::from(num_ctx),
        Some(p) => crate::run::llm::models::lookup(p, model).facts.context_window.unwrap_or(128_000),
        None => 128_000,
    }
}

/// Cline's `getContextWindowInfo`: the prompt size from which history is cut. Its
/// `contextWindow * 0.8` is fractional and a prompt is cut when it reaches it: the least
/// whole number of tokens at or above it (80 % of 16,384 is 13,107.2: 13,108).
pub(crate) fn max_allowed(window: u64) -> u64 {
    match window {
        64_000 => window - 27_000,
        128_000 => window - 30_000,
        200_000 => window - 40_000,
        // ⌈4w/5⌉, without overflow for any window.
        w => w.saturating_sub(40_000).max(w / 5 * 4 + (w % 5 * 4).div_ceil(5)),
    }
}

/// About 4 bytes of text per token.
pub(crate) fn estimate_tokens(bytes: usize) -> u64 {
    bytes.div_ceil(4) as u64
}

/// How much history to keep when cutting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// Remove half of what follows the first pair.
    Half,
    /// Remove three quarters.
    Quarter,
}

/// What a cut did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cut {
    /// `threshold` (estimate over the limit) or `context_error` (the server refused).
    pub reason: &'static str,
    /// The estimate that triggered it.
    pub estimated: u64,
    /// The threshold.
    pub limit: u64,
    /// Messages removed.
    pub removed: usize,
    /// Older full copies of files (reads, written files, attached files) replaced by the notice.
    pub deduplicated: usize,
    /// What it removed or changed, to put back: a task restore to a checkpoint taken before it.
    pub undo: Undo,
}

/// What one cut took from the conversation, kept so that a task restore to a checkpoint taken
/// before the cut gets the conversation back as it was then. Cline's cuts are a view over the
/// whole history it keeps (`conversationHistoryDeletedRange`); here the cut messages go, and
/// this keeps them (and the messages the cut changed: the first reply now the notice, the
/// older file reads now Cline's duplicate notice).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Undo {
    /// The conversation's length just after the cut.
    pub len: usize,
    /// Messages removed after the first pair (from index 2 on).
    pub removed: usize,
    /// Each message the cut removed or changed, as it was, by its index before the cut.
    pub was: Vec<(usize, Message)>,
}

impl Undo {
    /// What turned `before` into `after` by removing `removed` messages at index 2 and
    /// changing others in place.
    fn of(before: &[Message], after: &[Message], removed: usize) -> Undo {
        let now = |i: usize| match i {
            0 | 1 => Some(i),
            i if i < 2 + removed => None,
            i => Some(i - removed),
        };
        let was = before
            .iter()
            .enumerate()
            .filter(|(i, m)| now(*i).and_then(|j| after.get(j)) != Some(*m))
            .map(|(i, m)| (i, m.clone()))
            .collect();
        Undo { len: after.len(), removed, was }
    }

    /// The conversation as it was before the cut, from `now`, a conversation that went on from
    /// where the cut left it (only added to since).
    pub(crate) fn apply(&self, now: &[Message]) -> Vec<Message> {
        let mut m = now[..self.len.min(now.len())].to_vec();
        let at = 2.min(m.len());
        m.splice(at..at, std::iter::repeat_n(Message::user(""), self.removed));
        for (i, was) in &self.was {
            if let Some(slot) = m.get_mut(*i) {
                *slot = was.clone();
            }
        }
        m
    }
}

/// The conversation as it was before the cuts `undos` (oldest first) were made, from `now`.
pub(crate) fn uncut(now: &[Message], undos: &[Undo]) -> Vec<Message> {
    undos.iter().rev().fold(now.to_vec(), |m, u| u.apply(&m))
}

/// The window and what is known about the current prompt's size.
#[derive(Debug, Clone)]
pub struct ContextWindow {
    window: u64,
    /// Tokens of the conversation up to `base_len` messages, from the last usage report.
    base: Option<(u64, usize)>,
    /// Where the size came from, when the person should hear it (said once at the start).
    note: Option<String>,
}

impl ContextWindow {
    /// A window of `window` tokens.
    pub fn new(window: u64) -> Self {
        ContextWindow { window, base: None, note: None }
    }

    /// A window whose size the person should hear about once (e.g. a fallback).
    pub(crate) fn noted(window: u64, note: String) -> Self {
        ContextWindow { window, base: None, note: Some(note) }
    }

    /// The note about the size, once.
    pub(crate) fn take_note(&mut self) -> Option<String> {
        self.note.take()
    }

    /// The window size.
    pub(crate) fn window(&self) -> u64 {
        self.window
    }

    /// Cline's threshold for this window.
    pub(crate) fn max_allowed(&self) -> u64 {
        max_allowed(self.window)
    }

    /// Records a reply's usage: the request's whole prompt and its output; the conversation now
    /// holds `len` messages (the reply included).
    pub(crate) fn observe(&mut self, prompt: u64, output: u64, len: usize) {
        self.base = (prompt > 0).then_some((prompt.saturating_add(output), len));
    }

    /// The estimated prompt of the next request: its text and parts at about 4 bytes a token
    /// (`history::request_bytes`: the calls' arguments, each call's result once and the
    /// reasoning sent back count, each image at its own estimate, never its base64 as text).
    pub(crate) fn estimate(&self, system: &str, messages: &[Message]) -> u64 {
        match self.base {
            Some((tokens, len)) if len <= messages.len() => {
                tokens.saturating_add(estimate_tokens(history::request_bytes(messages, len)))
            }
            _ => estimate_tokens(system.len() + history::request_bytes(messages, 0)),
        }
    }

    /// Before a request: if the estimate is over the threshold, drop repeated file reads, then,
    /// if still over, remove history. `None` when nothing had to change.
    pub(crate) fn fit(&mut self, system: &str, messages: &mut Vec<Message>) -> Option<Cut> {
        let limit = self.max_allowed();
        let estimated = self.estimate(system, messages);
        if estimated < limit {
            return None;
        }
        let was = messages.clone();
        let before = characters(messages);
        let deduplicated = dedupe_reads(messages);
        let after = characters(messages);
        let removed = if needs_truncation(deduplicated, before, after) {
            // Cline picks the share to keep from the usage before de-duplicating.
            // (`totalTokens / 2 > maxAllowedSize` in JavaScript's numbers: no rounding down.)
            let keep = if estimated > limit.saturating_mul(2) { Keep::Quarter } else { Keep::Half };
            truncate(messages, keep)
        } else {
            0
        };
        if deduplicated + removed == 0 {
            return None;
        }
        self.base = None;
        let undo = Undo::of(&was, messages, removed);
        Some(Cut { reason: "threshold", estimated, limit, removed, deduplicated, undo })
    }

    /// After the server said the prompt is too long: keep only a quarter of the history, as
    /// Cline's `handleContextWindowExceededError` does (history only: no file read is
    /// replaced). `None` when there is nothing left to remove.
    pub(crate) fn cut_harder(&mut self, system: &str, messages: &mut Vec<Message>) -> Option<Cut> {
        let estimated = self.estimate(system, messages);
        let was = messages.clone();
        let removed = truncate(messages, Keep::Quarter);
        if removed == 0 {
            return None;
        }
        self.base = None;
        let undo = Undo::of(&was, messages, removed);
        Some(Cut { reason: "context_error", estimated, limit: self.max_allowed(), removed, deduplicated: 0, undo })
    }
}

/// The characters of a conversation as Cline's 30 % rule counts them
/// (`countCharactersAndSavingsInRange`): each message's text and each image's base64, in
/// JavaScript's `length` (UTF-16 units: a CJK character is one, not three bytes).
fn characters(messages: &[Message]) -> usize {
    messages.iter().map(|m| m.content.encode_utf16().count() + m.images().map(|i| i.data.len()).sum::<usize>()).sum()
}

/// Cline's rule after de-duplicating file reads: history is still removed unless the
/// de-duplication saved at least 30 % of the conversation's characters (`before` and `after`
/// its size, `deduplicated` the reads replaced).
pub(crate) fn needs_truncation(deduplicated: usize, before: usize, after: usize) -> bool {
    deduplicated == 0 || before == 0 || (before.saturating_sub(after) as u128) * 10 < (before as u128) * 3
}

/// A result's header, Cline's `^\[([^\s]+) for '([^']+)'\] Result:`: the tool, the path, and
/// where the header ends.
fn result_header(content: &str) -> Option<(&str, &str, usize)> {
    let rest = content.strip_prefix('[')?;
    let (tool, rest) = rest.split_once(" for '")?;
    let quote = rest.find('\'')?;
    if tool.is_empty() || tool.contains(char::is_whitespace) || quote == 0 || !rest[quote..].starts_with("'] Result:") {
        return None;
    }
    Some((tool, &rest[..quote], 1 + tool.len() + " for '".len() + quote + "'] Result:".len()))
}

/// Where the first result of a user message ends: at the next part that Cline sends as a text
/// block of its own, here after a blank line (`prompt::starts_a_part`: another result, a call
/// not run, the person's words, a hook's context, the reminder, the environment details…), so
/// that replacing the result replaces it alone, as Cline replaces its first block alone. (A
/// result whose own text holds such a line only keeps more of itself.)
fn first_result_end(content: &str, from: usize) -> usize {
    let mut at = from;
    while let Some(p) = content[at..].find("\n\n") {
        let p = at + p;
        let next = content[p + 2..].trim_start_matches(['\n', '\t']);
        if crate::run::prompt::starts_a_part(next) {
            return p;
        }
        // On past the run of line breaks: each of its blank lines leads to the same text (a
        // step of one would make a file of blank lines quadratic).
        at = content.len() - next.len();
    }
    content.len()
}

/// The first `<OPEN…>BODY</CLOSE>` element at or after `from` in `text` whose opening tag is
/// `<TAG path="PATH">`: its path and the ranges of its opening tag and body.
fn element(text: &str, from: usize, tag: &str) -> Option<(String, std::ops::Range<usize>, std::ops::Range<usize>)> {
    let open = format!("<{tag} path=\"");
    let start = from + text[from..].find(&open)?;
    let path_start = start + open.len();
    let path_end = path_start + text[path_start..].find('"')?;
    let rest = &text[path_end..];
    let body_start = path_end + rest.strip_prefix("\">").map(|_| 2)?;
    let body_end = body_start + text[body_start..].find(&format!("</{tag}>"))?;
    Some((text[path_start..path_end].to_string(), start..body_start, body_start..body_end))
}

/// The body of the first result's `<final_file_content>` (the result's header ends at
/// `header_end`): its opening tag must be in that result; the body may hold anything, a line
/// that looks like the start of another part too.
fn written_element(c: &str, header_end: usize) -> Option<std::ops::Range<usize>> {
    let (_, open, body) = element(c, header_end, "final_file_content")?;
    (open.start < first_result_end(c, header_end)).then_some(body)
}

/// A full copy of a file in a user message, made stale by a later copy of the same file.
enum Copy {
    /// A `read_file` result.
    Read,
    /// A `write_to_file` or `replace_in_file` result's `<final_file_content>`.
    Written,
    /// The `n`th `<file_content path=…>` block of the message (a file attached to a prompt).
    Mention(usize),
}

/// The full copies of files in user message `m`, in order, as Cline's
/// `getPossibleDuplicateFileReads` finds them: a `read_file` result; a `write_to_file` or
/// `replace_in_file` result with its `<final_file_content>`; otherwise (the message does not
/// start with one of those results) each `<file_content path=…>` block.
fn copies(m: &Message) -> Vec<(String, Copy)> {
    let c = &m.content;
    match result_header(c) {
        Some(("read_file", path, _)) => return vec![(path.to_string(), Copy::Read)],
        Some(("write_to_file" | "replace_in_file", path, end)) => {
            return written_element(c, end).map(|_| vec![(path.to_string(), Copy::Written)]).unwrap_or_default();
        }
        _ => {}
    }
    let mut found = Vec::new();
    let mut from = 0;
    while let Some((path, _, body)) = element(c, from, "file_content") {
        found.push((path, Copy::Mention(found.len())));
        from = body.end;
    }
    found
}

/// Where `copy` of a file is in `m`'s text, and what Cline's `ContextManager` puts there: a
/// read becomes its header and the notice; a written file's `<final_file_content>` holds
/// ` NOTICE ` (the rest of the result kept); a `<file_content>` block holds the notice. What
/// follows the result (other tools' notices, the environment details) is kept. `None` when
/// nothing would change (a copy already replaced is left as it is). `answered`: where `m`'s text
/// holds its calls' recorded results ([`history::copies_of_answers`]); a read's result ends
/// where its copy does (a file may hold a paragraph that looks like the start of the next part).
fn copy_replacement(
    m: &Message,
    copy: &Copy,
    answered: &[(usize, std::ops::Range<usize>)],
) -> Option<(std::ops::Range<usize>, String)> {
    let c = &m.content;
    let (body, with) = match copy {
        Copy::Read => {
            let (_, _, header_end) = result_header(c)?;
            let copied = answered.iter().find(|(_, r)| r.start == 0 && header_end <= r.end);
            let end = copied.map_or_else(|| first_result_end(c, header_end), |(_, r)| r.end);
            (header_end..end, format!("\n{DUPLICATE_READ_NOTICE}"))
        }
        Copy::Written => {
            let (_, _, header_end) = result_header(c)?;
            let body = written_element(c, header_end)?;
            (body, format!(" {DUPLICATE_READ_NOTICE} "))
        }
        Copy::Mention(n) => {
            let mut from = 0;
            let mut nth = None;
            for _ in 0..=*n {
                let (_, _, body) = element(c, from, "file_content")?;
                from = body.end;
                nth = Some(body);
            }
            let body = nth?;
            (body, DUPLICATE_READ_NOTICE.to_string())
        }
    };
    (c[body.clone()] != with).then_some((body, with))
}

/// Replaces every full copy of a file but the latest — a `read_file` result, a
/// `write_to_file` or `replace_in_file` result's `<final_file_content>`, a `<file_content>`
/// block attached to a prompt: one latest copy per path for all three, as Cline's
/// `ContextManager` keeps — with Cline's notice, after the first user/assistant pair (Cline
/// starts after it). Returns how many were replaced. The result of a native call is replaced
/// too, as Cline replaces the text block it keeps it in: in the message's text and in the
/// answer recorded on the call, which is what goes out as its `tool_result`.
pub(crate) fn dedupe_reads(messages: &mut [Message]) -> usize {
    const START: usize = 2;
    let mut found: Vec<(usize, String, Copy)> = Vec::new();
    for (i, m) in messages.iter().enumerate().skip(START) {
        if m.role == Role::User {
            found.extend(copies(m).into_iter().map(|(path, copy)| (i, path, copy)));
        }
    }
    let mut latest: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (k, (_, path, _)) in found.iter().enumerate() {
        latest.insert(path, k);
    }
    let stale: Vec<(usize, &Copy)> = found
        .iter()
        .enumerate()
        .filter(|(k, (_, p, _))| latest.get(p.as_str()) != Some(k))
        .map(|(_, (i, _, c))| (*i, c))
        .collect();
    let mut replaced = 0;
    for (i, copy) in stale {
        // The copy of a call's result it falls in: the call's recorded answer changes alike. One
        // across a result's copy and what follows it (a `<file_content>` opened in one result and
        // closed in the next) is no copy of a file, and is left as it is (Cline reads each result
        // on its own); one after the copies (words with a mention) is the text's alone.
        let answered = history::copies_of_answers(&messages[i - 1], &messages[i]);
        let Some((old, with)) = copy_replacement(&messages[i], copy, &answered) else { continue };
        let within = answered.iter().find(|(_, r)| r.start <= old.start && old.end <= r.end).cloned();
        if within.is_none() && answered.iter().any(|(_, r)| old.start < r.end && r.start < old.end) {
            continue;
        }
        let (removed, inserted) = (old.len(), with.len());
        messages[i].content.replace_range(old, &with);
        if let Some((k, r)) = within {
            let answer = messages[i].content[r.start..r.end - removed + inserted].to_string();
            if let Some(Part::ToolUse(t)) = messages[i - 1].parts.get_mut(k) {
                t.answer = Some(answer);
            }
        }
        replaced += 1;
    }
    replaced
}

/// Cline's `getNextTruncationRange`: keeps the first user/assistant pair, removes half (or three
/// quarters) of the rest — an even number of messages, ending on an assistant message — and
/// puts the truncation notice in place of the first assistant message. Returns how many
/// messages were removed.
pub(crate) fn truncate(messages: &mut Vec<Message>, keep: Keep) -> usize {
    const START: usize = 2;
    if messages.len() <= START {
        return 0;
    }
    let rest = messages.len() - START;
    let remove = match keep {
        Keep::Half => rest / 4 * 2,
        Keep::Quarter => rest * 3 / 4 / 2 * 2,
    };
    if remove == 0 {
        return 0;
    }
    let mut end = START + remove - 1;
    if messages[end].role != Role::Assistant {
        end -= 1;
    }
    if end < START {
        return 0;
    }
    messages.drain(START..=end);
    if messages[1].role == Role::Assistant {
        messages[1].content = TRUNCATION_NOTICE.to_string();
        // Its calls' results were removed with the history: a notice calls nothing. The user
        // message now after it answers no call, so it goes out as plain text, as Cline's
        // `applyContextHistoryUpdates` drops the orphaned tool_results.
        messages[1].parts.clear();
    }
    end - START + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(n_pairs: usize) -> Vec<Message> {
        let mut v = Vec::new();
        for i in 0..n_pairs {
            v.push(Message::user(format!("u{i}")));
            v.push(Message::assistant(format!("a{i}")));
        }
        v.push(Message::user("last"));
        v
    }

    #[test]
    fn default_windows_by_model_family() {
        assert_eq!(default_window(Some(Provider::Anthropic), "claude-sonnet-4-5", 0), 200_000);
        assert_eq!(default_window(Some(Provider::OpenAi), "anthropic/claude-opus-4.5", 0), 200_000);
        assert_eq!(default_window(Some(Provider::OpenAi), "gpt-4.1-mini", 0), 1_047_576);
        assert_eq!(default_window(Some(Provider::OpenAi), "gpt-4o", 0), 128_000);
        assert_eq!(default_window(Some(Provider::OpenAi), "deepseek-chat", 0), 128_000);
        assert_eq!(default_window(Some(Provider::OpenAi), "some-local-model", 0), 128_000);
        assert_eq!(default_window(Some(Provider::Ollama), "qwen2.5-coder:7b", 16_384), 16_384);
    }

    #[test]
    fn clines_thresholds() {
        assert_eq!(max_allowed(200_000), 160_000);
        assert_eq!(max_allowed(128_000), 98_000);
        assert_eq!(max_allowed(64_000), 37_000);
        assert_eq!(max_allowed(1_000_000), 960_000);
        assert_eq!(max_allowed(10_000), 8_000);
        assert_eq!(
            (max_allowed(16_384), max_allowed(8_192), max_allowed(u64::MAX)),
            (13_108, 6_554, u64::MAX - 40_000)
        );
    }

    #[test]
    fn truncate_half_keeps_first_pair_and_ends_on_assistant() {
        let mut m = conv(5); // u0 a0 u1 a1 u2 a2 u3 a3 u4 a4 last
        assert_eq!(truncate(&mut m, Keep::Half), 4);
        let c: Vec<_> = m.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(c, ["u0", TRUNCATION_NOTICE, "u3", "a3", "u4", "a4", "last"]);
        let mut m = conv(5);
        assert_eq!(truncate(&mut m, Keep::Quarter), 6);
        assert_eq!(
            m.iter().map(|m| m.content.as_str()).collect::<Vec<_>>(),
            ["u0", TRUNCATION_NOTICE, "u4", "a4", "last"]
        );
        let mut m = conv(1);
        assert_eq!(truncate(&mut m, Keep::Half), 0);
    }

    #[test]
    fn a_cut_never_leaves_a_call_without_its_result() {
        use crate::run::llm::providers::history::answers;
        use crate::run::llm::Part;
        let call = Part::read_file_call;
        let mut m = conv(5);
        for (i, msg) in m.iter_mut().enumerate().filter(|(_, x)| x.role == Role::Assistant) {
            msg.parts = vec![call(&format!("t{i}"))];
        }
        assert_eq!(truncate(&mut m, Keep::Half), 4);
        // The notice calls nothing, so the user message after it answers nothing…
        assert!(m[1].parts.is_empty());
        assert!(answers(Some(&m[1]), &m[2]).0.is_empty());
        // …and every call still in the history is answered by the message after it.
        for i in (1..m.len() - 1).filter(|&i| m[i].tool_uses().next().is_some()) {
            let (ans, _) = answers(Some(&m[i]), &m[i + 1]);
            assert_eq!(ans.len(), 1);
            assert_eq!(ans[0].content, m[i + 1].content);
        }
    }

    /// Cline keeps a native call's result as a text block on Anthropic and Chat Completions (it
    /// never has a `call_id` there) and replaces it as any other; here the result goes out as the
    /// answer recorded on the call, so that is replaced with the copy in the message's text.
    #[test]
    fn results_of_native_calls_are_deduplicated_in_the_answers_that_are_sent() {
        use crate::run::llm::providers::history::answers;
        use crate::run::llm::ToolUsePart;
        let call = |id: &str, name: &str, answer: &str| {
            let input = r#"{"path":"big.txt"}"#.into();
            Part::ToolUse(ToolUsePart {
                id: id.into(),
                name: name.into(),
                input,
                answer: Some(answer.into()),
                extra: None,
            })
        };
        let read = "[read_file for 'big.txt'] Result:\nthe whole file";
        let listed = "[list_files for '.'] Result:\nbig.txt";
        let env = "<environment_details>\nE\n</environment_details>";
        let mut m = vec![Message::user("read it twice"), Message::assistant("")];
        m.push(Message::user(format!("{listed}\n\n{env}")));
        let mut first = Message::assistant("");
        first.parts = vec![call("t1", "read_file", read), call("t2", "list_files", listed)];
        m.extend([first, Message::user(format!("{read}\n\n{listed}\n\n{env}"))]);
        let mut second = Message::assistant("");
        second.parts = vec![call("t3", "read_file", read)];
        m.extend([second, Message::user(format!("{read}\n\n{env}"))]);
        assert_eq!(dedupe_reads(&mut m), 1);
        let notice = format!("[read_file for 'big.txt'] Result:\n{DUPLICATE_READ_NOTICE}");
        assert_eq!(m[4].content, format!("{notice}\n\n{listed}\n\n{env}"));
        let (sent, rest) = answers(Some(&m[3]), &m[4]);
        let sent: Vec<&str> = sent.iter().map(|a| a.content.as_str()).collect();
        assert_eq!(sent, [notice.as_str(), listed]);
        assert_eq!(rest, env, "the copies are not sent again as text");
        assert_eq!(answers(Some(&m[5]), &m[6]).0[0].content, read, "the latest copy is kept");
        assert_eq!(dedupe_reads(&mut m), 0, "idempotent");
    }

    /// A native read's result is replaced to its end, however the file reads: a paragraph in it
    /// that looks like the start of the next part (`Tool [`…, `[x for 'y'] Result:`) used to end
    /// the replacement there, leaving the stale file's tail after the notice.
    #[test]
    fn a_native_read_is_replaced_whole_whatever_the_file_holds() {
        use crate::run::llm::providers::history::answers;
        use crate::run::llm::ToolUsePart;
        let call = |id: &str, answer: &str| {
            let (name, input, extra) = ("read_file".into(), r#"{"path":"doc.md"}"#.into(), None);
            Part::ToolUse(ToolUsePart { id: id.into(), name, input, answer: Some(answer.into()), extra })
        };
        let read = "[read_file for 'doc.md'] Result:\n# Doc\n\nTool [x] is described here\nSTALE_TAIL\n\n[list_files for '.'] Result:\nSTALE_TOO";
        let env = "<environment_details>\nE\n</environment_details>";
        let mut m = vec![Message::user("task"), Message::assistant("")];
        let (mut first, mut second) = (Message::assistant(""), Message::assistant(""));
        first.parts = vec![call("t1", read)];
        second.parts = vec![call("t2", read)];
        m.extend([Message::user(format!("x\n\n{env}")), first, Message::user(format!("{read}\n\n{env}"))]);
        m.extend([second, Message::user(format!("{read}\n\n{env}"))]);
        assert_eq!(dedupe_reads(&mut m), 1);
        let notice = format!("[read_file for 'doc.md'] Result:\n{DUPLICATE_READ_NOTICE}");
        assert_eq!(m[4].content, format!("{notice}\n\n{env}"));
        assert_eq!(answers(Some(&m[3]), &m[4]).0[0].content, notice);
        assert!(m[6].content.contains("STALE_TAIL"), "the latest copy is kept whole");
    }

    /// A `<file_content>` found across two native results (opened in one, closed in the next)
    /// is no copy of a file: left as it was, so the copies still match the recorded answers.
    #[test]
    fn a_file_content_across_two_native_results_is_left_alone() {
        use crate::run::llm::providers::history::answers;
        use crate::run::llm::ToolUsePart;
        let call = |id: &str, answer: &str| {
            Part::ToolUse(ToolUsePart {
                id: id.into(),
                name: "search_files".into(),
                input: "{}".into(),
                answer: Some(answer.into()),
                extra: None,
            })
        };
        let (r1, r2) = (
            "[search_files for 'a'] Result:\n<file_content path=\"p\">",
            "[search_files for 'b'] Result:\n</file_content>",
        );
        let env = "<environment_details>\nE\n</environment_details>";
        let mut m = vec![Message::user("task"), Message::assistant("")];
        let mut a = Message::assistant("");
        a.parts = vec![call("t1", r1), call("t2", r2)];
        m.extend([Message::user(format!("x\n\n{env}")), a, Message::user(format!("{r1}\n\n{r2}\n\n{env}"))]);
        m.extend([Message::assistant("again"), Message::user("<file_content path=\"p\">new</file_content>")]);
        let was = m.clone();
        assert_eq!(dedupe_reads(&mut m), 0);
        assert_eq!(m, was);
        assert_eq!(answers(Some(&m[3]), &m[4]).1, env, "the copies still match the answers");
    }

    /// Characters are counted as JavaScript's `length`: UTF-16 units, not UTF-8 bytes.
    #[test]
    fn characters_are_counted_in_utf16_units() {
        assert_eq!(characters(&[Message::user("漢字ab😀")]), 6);
    }

    #[test]
    fn deduplication_is_enough_only_when_it_saved_30_percent() {
        assert!(needs_truncation(0, 1000, 1000));
        assert!(needs_truncation(1, 1000, 701), "29.9 % saved");
        assert!(!needs_truncation(1, 1000, 700), "30 % saved");
        assert!(!needs_truncation(2, 1000, 100));
    }

    #[test]
    fn a_small_deduplication_still_truncates() {
        // Two reads of a small file in a long conversation: the saving is far below 30 %, so
        // Cline removes history too, although the estimate would now fit.
        let mut m = conv(10);
        let read = "[read_file for 'a.rs'] Result:\nfn a() {}\n".to_string();
        m[2].content = read.clone();
        m[4].content = read;
        for msg in m.iter_mut() {
            if !msg.content.starts_with("[read_file") {
                msg.content.push_str(&"x".repeat(1000));
            }
        }
        let mut w = ContextWindow::new(64_000);
        w.observe(w.max_allowed(), 0, m.len());
        let cut = w.fit("", &mut m).expect("a cut");
        assert_eq!(cut.deduplicated, 1);
        assert!(cut.removed > 0, "{cut:?}");
        assert_eq!(m[1].content, TRUNCATION_NOTICE);
    }

    #[test]
    fn only_the_latest_read_of_a_file_is_kept() {
        let read = |p: &str, body: &str| {
            Message::user(format!(
                "[read_file for '{p}'] Result:\n{body}\n\n<environment_details>\nX\n</environment_details>"
            ))
        };
        let a = |s: &str| Message::assistant(s);
        let mut m = vec![
            Message::user("task"),
            a("0"),
            read("a.rs", "old a"),
            a("1"),
            read("b.rs", "b"),
            a("2"),
            read("a.rs", "new a"),
            a("3"),
        ];
        assert_eq!(dedupe_reads(&mut m), 1);
        assert!(m[2].content.starts_with("[read_file for 'a.rs'] Result:\n[[NOTE] This file read has been removed"));
        assert!(m[2].content.ends_with("<environment_details>\nX\n</environment_details>"));
        assert!(!m[2].content.contains("old a"));
        assert!(m[4].content.contains("\nb\n") && m[6].content.contains("new a"));
        assert_eq!(dedupe_reads(&mut m), 0, "idempotent");
    }

    #[test]
    fn a_replaced_result_is_that_result_alone_not_what_follows_it_in_the_message() {
        // Several calls per reply: their results, and what Cline sends as blocks of their own
        // after them, share one user message here. Only the first block of a message is
        // Cline's candidate, and replacing it leaves the rest.
        let env = "<environment_details>\nX\n</environment_details>";
        let hook = "<hook_context source=\"PostToolUse\" type=\"x\">\nsaw it\n</hook_context>";
        let a = |s: &str| Message::assistant(s);
        let first = format!(
            "[read_file for 'a.rs'] Result:\nOLD a\n\n{hook}\n\n[read_file for 'b.rs'] Result:\nB\n\n\
             [execute_command for 'ls\n-l'] Result:\nout\n\nTool [list_files] has been called 3 times\n\n{env}"
        );
        let mut m = vec![
            Message::user("task"),
            a("0"),
            Message::user(first.clone()),
            a("1"),
            Message::user(format!("[read_file for 'a.rs'] Result:\nnew a\n\n{env}")),
            a("2"),
        ];
        assert_eq!(dedupe_reads(&mut m), 1);
        assert_eq!(m[2].content, first.replace("OLD a", DUPLICATE_READ_NOTICE));
        // A failed edit then a write of another file: the write's <final_file_content> is not
        // the failed edit's, so a later read of a.rs replaces nothing of b.rs.
        let wrote = crate::run::prompt::responses::file_edit_without_user_changes("b.rs", "B2");
        let edits = format!(
            "[replace_in_file for 'a.rs'] Result:\nfailed\n\n[write_to_file for 'b.rs'] Result:\n{wrote}\n\n{env}"
        );
        let mut m = vec![
            Message::user("task"),
            a("0"),
            Message::user(edits.clone()),
            a("1"),
            Message::user("[read_file for 'a.rs'] Result:\nA"),
            a("2"),
        ];
        assert_eq!(dedupe_reads(&mut m), 0);
        assert_eq!(m[2].content, edits);
    }

    #[test]
    fn the_persons_words_after_unsent_results_are_kept_and_a_saved_file_is_replaced_whatever_it_holds() {
        let env = "<environment_details>\nX\n</environment_details>";
        let a = |s: &str| Message::assistant(s);
        let read = |body: &str| Message::user(format!("[read_file for 'a.rs'] Result:\n{body}"));
        for words in [
            "The user provided the following feedback:\n<feedback>\nkeep me\n</feedback>",
            "You seem to be having trouble proceeding. The user has provided the following feedback to help guide you:\n<feedback>\nkeep me\n</feedback>",
            "[TASK RESUMPTION] This task was interrupted just now. keep me",
        ] {
            let first = format!("[read_file for 'a.rs'] Result:\nOLD\n\n{words}\n\n{env}");
            let mut m = vec![Message::user("task"), a("0"), Message::user(first.clone()), a("1"), read("NEW"), a("2")];
            assert_eq!(dedupe_reads(&mut m), 1);
            assert_eq!(m[2].content, first.replace("OLD", DUPLICATE_READ_NOTICE), "{words}");
        }
        // A saved file whose text holds what looks like the start of another part.
        let body = "x\n\n<hook_context source=\"y\">\n\n[link for 'z'] Result:";
        let wrote = crate::run::prompt::responses::file_edit_without_user_changes("a.rs", body);
        let first = format!("[write_to_file for 'a.rs'] Result:\n{wrote}");
        let mut m = vec![Message::user("task"), a("0"), Message::user(first), a("1"), read("NEW"), a("2")];
        assert_eq!(dedupe_reads(&mut m), 1);
        assert!(!m[2].content.contains("[link for 'z']") && m[2].content.contains(DUPLICATE_READ_NOTICE));
    }

    #[test]
    fn a_result_of_many_blank_lines_is_read_in_linear_time() {
        // Each blank line of a run used to scan the rest of it: a million took hours.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let c = format!("[read_file for 'a.rs'] Result:\n{}x\n\n<environment_details>", "\n".repeat(1_000_000));
            tx.send(first_result_end(&c, 0) == c.len() - "\n\n<environment_details>".len()).unwrap();
        });
        assert!(rx.recv_timeout(std::time::Duration::from_secs(60)).expect("it ended"));
    }

    #[test]
    fn a_second_cut_removes_history_only_as_clines() {
        let read = |p: &str, body: &str| Message::user(format!("[read_file for '{p}'] Result:\n{body}"));
        let mut m = conv(6);
        m[10] = read("a.rs", "old a");
        m.extend([Message::assistant("a6"), read("a.rs", "new a")]);
        let mut w = ContextWindow::new(1000);
        let cut = w.cut_harder("", &mut m).expect("a cut");
        assert_eq!((cut.deduplicated, cut.removed), (0, 8));
        assert!(m.iter().any(|x| x.content.ends_with("old a")), "the older read is kept");
    }

    #[test]
    fn images_count_toward_the_30_percent_rule_as_their_base64() {
        use crate::run::llm::{ImagePart, Part};
        // The de-duplication saves 40 % of the text, but the image's base64 makes it far less
        // of the whole: history is removed too, as in Cline.
        let body = "x".repeat(4000);
        let read = |b: &str| Message::user(format!("[read_file for 'a.rs'] Result:\n{b}"));
        let mut m = vec![Message::user("task"), Message::assistant("0"), read(&body), Message::assistant("1")];
        let mut shot = Message::user("y".repeat(1000));
        shot.parts.push(Part::Image(ImagePart {
            media_type: "image/png".into(),
            data: "A".repeat(100_000),
            width: 10,
            height: 10,
        }));
        m.extend([shot, Message::assistant("2"), read(&body), Message::assistant("3")]);
        let mut w = ContextWindow::new(1000);
        w.observe(w.max_allowed(), 0, m.len());
        let cut = w.fit("", &mut m).expect("a cut");
        assert_eq!(cut.deduplicated, 1);
        assert!(cut.removed > 0, "{cut:?}");
    }

    #[test]
    fn written_files_and_attached_files_share_the_latest_copy_with_reads_as_in_cline() {
        use crate::run::prompt::responses;
        let env = "\n\n<environment_details>\nX\n</environment_details>";
        let user = |s: String| Message::user(format!("{s}{env}"));
        let read = |p: &str, body: &str| user(format!("[read_file for '{p}'] Result:\n{body}"));
        let wrote = |tool: &str, p: &str, body: &str| {
            user(format!("[{tool} for '{p}'] Result:\n{}", responses::file_edit_without_user_changes(p, body)))
        };
        let attached =
            |p: &str, body: &str| user(format!("see <file_content path=\"{p}\">\n{body}\n</file_content> please"));
        let a = |s: &str| Message::assistant(s);
        let mut m = vec![
            // The first pair is never touched (Cline starts after it).
            Message::user("<task>\nfix <file_content path=\"a.rs\">\nA0\n</file_content>\n</task>"),
            a("0"),
            read("a.rs", "A1"),
            a("1"),
            wrote("write_to_file", "a.rs", "A2"),
            a("2"),
            attached("b.rs", "B1"),
            a("3"),
            wrote("replace_in_file", "b.rs", "B2"),
            a("4"),
            // A failed edit shows the file as <file_content>, which Cline does not count.
            user("[replace_in_file for 'a.rs'] Result:\n<file_content path=\"a.rs\">\nA3\n</file_content>".into()),
            a("5"),
            attached("a.rs", "A4"),
            a("6"),
        ];
        let was = m.clone();
        assert_eq!(dedupe_reads(&mut m), 3);
        assert_eq!(m[0], was[0]);
        assert_eq!(m[2].content, format!("[read_file for 'a.rs'] Result:\n{DUPLICATE_READ_NOTICE}{env}"));
        // Cline's `$1 NOTICE $2`: the element keeps its tags, the rest of the result stays.
        let written = format!("<final_file_content path=\"a.rs\"> {DUPLICATE_READ_NOTICE} </final_file_content>");
        assert_eq!(
            m[4].content,
            was[4].content.replace("<final_file_content path=\"a.rs\">\nA2\n</final_file_content>", &written)
        );
        assert!(m[4].content.starts_with("[write_to_file for 'a.rs'] Result:\nThe content was successfully saved"));
        assert!(m[4].content.contains("IMPORTANT: For any future changes") && m[4].content.ends_with(env));
        assert_eq!(
            m[6].content,
            format!("see <file_content path=\"b.rs\">{DUPLICATE_READ_NOTICE}</file_content> please{env}")
        );
        assert_eq!(m[8..], was[8..], "the latest copies, and the failed edit's, are kept");
        assert_eq!(dedupe_reads(&mut m), 0, "idempotent");
    }

    /// Cline keeps a quarter when the tokens are more than twice the limit, in JavaScript's
    /// numbers: one token over is enough.
    #[test]
    fn one_token_over_twice_the_limit_keeps_a_quarter() {
        let removed = |tokens: u64| {
            let mut w = ContextWindow::new(10_000);
            let mut m = conv(8);
            w.observe(tokens, 0, m.len());
            assert_eq!(w.max_allowed(), 8_000);
            w.fit("", &mut m).expect("a cut").removed
        };
        assert_eq!((removed(16_000), removed(16_001)), (6, 10));
    }

    #[test]
    fn each_cut_can_be_undone_to_the_conversation_it_cut() {
        let read = |p: &str, body: &str| Message::user(format!("[read_file for '{p}'] Result:\n{body}"));
        let mut original = conv(6);
        original[2] = read("a.rs", "old a");
        original[6] = read("a.rs", "new a");
        original[10] = read("b.rs", "b");
        for m in original.iter_mut().skip(1) {
            m.content.push_str(&"x".repeat(400));
        }
        let mut w = ContextWindow::new(1000);
        let mut m = original.clone();
        let first = w.fit("", &mut m).expect("a cut");
        assert!(first.deduplicated == 1 && first.removed > 0, "{first:?}");
        assert_ne!(m, original);
        // The conversation goes on, and is cut again (the server refused it).
        m.extend([Message::assistant("more"), read("b.rs", "b again")]);
        let between = m.clone();
        let second = w.cut_harder("", &mut m).expect("a second cut");
        m.extend([Message::assistant("later"), Message::user("latest")]);
        assert_eq!(uncut(&m, std::slice::from_ref(&second.undo)), between);
        assert_eq!(uncut(&m, &[first.undo, second.undo]), original);
        assert_eq!(uncut(&m, &[]), m, "nothing to undo");
    }

    #[test]
    fn an_image_counts_as_its_tokens_not_its_base64() {
        use crate::run::llm::{ImagePart, Part};
        let image =
            |w, h| ImagePart { media_type: "image/png".into(), data: "A".repeat(4_000_000), width: w, height: h };
        assert_eq!(image(1, 1).estimated_tokens(), 1);
        assert_eq!(image(1000, 750).estimated_tokens(), 1000);
        // Scaled to a long side of 1568, and never above Anthropic's ~1,600.
        assert_eq!(image(7500, 7500).estimated_tokens(), 1600);
        let mut m = Message::user("abcd");
        m.parts.push(Part::Image(image(1000, 750)));
        let w = ContextWindow::new(200_000);
        assert_eq!(w.estimate("", &[m]), 1 + 1000);
    }

    #[test]
    fn a_native_calls_arguments_and_the_reasoning_sent_back_count() {
        use crate::run::llm::{Part, ToolUsePart};
        // A write_to_file's content is in its arguments, not in the message's text; DeepSeek's
        // reasoning and OpenRouter's objects go back with every request.
        let mut reply = Message::assistant("");
        reply.parts = vec![
            Part::Thinking { text: "t".repeat(4000), signature: None },
            Part::ReasoningDetails(vec![serde_json::json!({"text": "r".repeat(3990)})]),
            Part::ToolUse(ToolUsePart {
                id: "c".into(),
                name: "write_to_file".into(),
                input: "w".repeat(4000),
                answer: None,
                extra: None,
            }),
        ];
        let w = ContextWindow::new(200_000);
        assert!(w.estimate("", &[Message::user("task"), reply]) >= 3000, "each part counted");
    }

    #[test]
    fn estimate_uses_the_last_report_plus_what_was_added() {
        let mut cw = ContextWindow::new(10_000);
        let mut m = conv(1);
        assert_eq!(cw.estimate("", &m), estimate_tokens(2 + 2 + 4));
        cw.observe(5000, 100, 2);
        m.push(Message::user("x".repeat(400)));
        assert_eq!(cw.estimate("", &m), 5100 + 1 + 100);
    }
}
