//! How a conversation with native tool calls goes on the wire: every call of an assistant
//! message is answered, in order, by the user message after it — the call Cline ran gets that
//! message's result text, a further call the answer decided when the reply was read (Cline's
//! `toolAlreadyUsed`), and any call left without one Cline's "result missing"
//! (`ensureToolResultsFollowToolUse`). Done here, when the request is built, so no saved task,
//! resume or context cut can ever send a call without its result: the APIs reject that.

use std::borrow::Cow;
use std::ops::Range;

use crate::run::llm::types::{Message, Part, Role, ToolUsePart};

/// Cline's placeholder for a call whose result was never recorded.
pub(crate) const RESULT_MISSING: &str = "result missing";

/// Cline's text for a tool that returned nothing.
const EMPTY_RESULT: &str = "(tool did not return anything)";

/// One call's result.
pub(crate) struct Answer<'a> {
    /// The call answered.
    pub call: &'a ToolUsePart,
    /// The result text.
    pub content: String,
}

/// The results a user message carries for the calls of `prev` (the message before it), and
/// the text left over (the environment details, and when every call has its own answer, the
/// text around the copies of those answers the message starts with: a hook's context or loop
/// detection's warning beside a result, a resumption notice, the person's words), which goes
/// out after them — as Cline's `ensureToolResultsFollowToolUse` puts every `tool_result` first
/// and the other blocks after, in their order.
pub(crate) fn answers<'a>(prev: Option<&'a Message>, user: &'a Message) -> (Vec<Answer<'a>>, Cow<'a, str>) {
    let calls: Vec<&ToolUsePart> = match prev {
        Some(p) if p.role == Role::Assistant && user.role == Role::User => p.tool_uses().collect(),
        _ => Vec::new(),
    };
    if calls.is_empty() {
        return (Vec::new(), Cow::Borrowed(&user.content));
    }
    let (result, rest) = split_results(&user.content);
    let mut result = Some(result);
    let out: Vec<Answer<'a>> = calls
        .into_iter()
        .map(|call| {
            let content = match &call.answer {
                Some(a) => a.clone(),
                None => match result.take() {
                    Some(r) if r.trim().is_empty() => EMPTY_RESULT.to_string(),
                    Some(r) => r.to_string(),
                    None => RESULT_MISSING.to_string(),
                },
            };
            Answer { call, content }
        })
        .collect();
    match result {
        // Every call was answered: the message's text starts with copies of the results of the
        // calls that ran (the loop writes them there too); what stands between and after them is
        // said as text.
        Some(head) => {
            let Copies { between, after, .. } = copies(head, out.iter().filter_map(|a| a.call.answer.as_deref()));
            // `head` starts the text: from `after` on, the text is contiguous.
            let tail = if after == head.len() { rest } else { &user.content[after..] };
            if between.is_empty() {
                return (out, Cow::Borrowed(tail));
            }
            let pieces: Vec<&str> =
                between.into_iter().map(|r| &head[r]).chain(Some(tail)).filter(|t| !t.is_empty()).collect();
            (out, Cow::Owned(pieces.join("\n\n")))
        }
        None => (out, Cow::Borrowed(rest)),
    }
}

/// Where `user`'s text holds copies of the recorded results of `prev`'s calls (the loop starts
/// the message with them, and [`answers`] sends each once, as its call's result): each copy's
/// call, as its index among `prev`'s parts, and the copy's byte range. Empty when a call has no
/// recorded result (the text is then the result itself).
pub(crate) fn copies_of_answers(prev: &Message, user: &Message) -> Vec<(usize, Range<usize>)> {
    let calls: Vec<(usize, &ToolUsePart)> = prev
        .parts
        .iter()
        .enumerate()
        .filter_map(|(k, p)| match p {
            Part::ToolUse(t) => Some((k, t)),
            _ => None,
        })
        .collect();
    if prev.role != Role::Assistant || user.role != Role::User || calls.iter().any(|(_, t)| t.answer.is_none()) {
        return Vec::new();
    }
    let (head, _) = split_results(&user.content);
    let found = copies(head, calls.iter().map(|(_, t)| t.answer.as_deref().unwrap_or_default())).found;
    found.into_iter().map(|(n, range)| (calls[n].0, range)).collect()
}

/// What `messages[from..]` weigh in a request, in bytes ([`Message::request_bytes`]), as they go
/// on the wire: each call's result once, in its `tool_result`, and of a user message that
/// answers calls only the text sent after the results (the loop also starts that text with
/// copies of them, which are not sent again).
pub(crate) fn request_bytes(messages: &[Message], from: usize) -> usize {
    (from..messages.len())
        .map(|i| {
            let m = &messages[i];
            let (results, rest) = answers(i.checked_sub(1).map(|j| &messages[j]), m);
            if results.is_empty() {
                return m.request_bytes();
            }
            let sent: usize = results.iter().map(|a| a.content.len()).sum();
            m.request_bytes() - m.content.len() + sent + rest.len()
        })
        .sum()
}

/// Where a user message's text holds copies of its calls' answers ([`copies`]).
struct Copies {
    /// Each copy's index among the answers, and its range.
    found: Vec<(usize, Range<usize>)>,
    /// The stretches of text before and between the copies (what the loop writes beside a
    /// result: a hook's context, loop detection's warning), without the blank line that ends each.
    between: Vec<Range<usize>>,
    /// Where the text after them starts.
    after: usize,
}

/// The copies of `answers` that `head` holds: some of them, in order, each a paragraph of its
/// own (at the start or after a blank line, followed by a blank line or the end), none after a
/// later answer's copy (an answer the text has no copy of — a call's refusal recorded on it
/// alone — may still appear inside a later result, which is not its copy).
fn copies<'b>(head: &str, answers: impl Iterator<Item = &'b str>) -> Copies {
    let answers: Vec<&str> = answers.collect();
    // Where `a`'s first copy in `head[at..end]` starts.
    let first = |a: &str, at: usize, end: usize| {
        let paragraph = |p: usize| {
            (p == at || head[..p].ends_with("\n\n"))
                && (head.len() == p + a.len() || head[p + a.len()..].starts_with("\n\n"))
        };
        head[at..end].match_indices(a).map(|(i, _)| at + i).find(|&p| paragraph(p))
    };
    let (mut at, mut found, mut between) = (0, Vec::new(), Vec::new());
    for (n, a) in answers.iter().enumerate() {
        if a.is_empty() {
            continue;
        }
        let Some(p) = first(a, at, head.len()) else { continue };
        // (Only the text skipped is searched for the later ones: usually none, or a hook's
        // context — a copy that starts before `p` ends by `p` plus its length.)
        let end = |b: &str| (p + b.len()..=head.len()).find(|&e| head.is_char_boundary(e)).unwrap_or(head.len());
        let before = |b: &&str| !b.is_empty() && first(b, at, end(b)).is_some_and(|q| q < p);
        if p > at && answers[n + 1..].iter().any(before) {
            continue;
        }
        if p > at {
            between.push(at..(p - 2).max(at));
        }
        found.push((n, p..p + a.len()));
        at = (p + a.len() + 2).min(head.len());
    }
    Copies { found, between, after: at }
}

/// A user message's text cut where its results end: before the focus chain's reminder, which
/// is never part of a result (it goes out as text after them), or else before the environment
/// details; and the text after them.
fn split_results(text: &str) -> (&str, &str) {
    let (result, rest) = split_environment(text);
    match reminder_start(result) {
        Some(i) => (&result[..i], &text[i + 2..]),
        None => (result, rest),
    }
}

/// Where the focus chain's reminder (`prompt/focus_chain.rs`) starts in `head`, the text
/// before the environment details, after the blank line before it: Cline sends a reminder as a
/// text block of its own, after the content's and before the environment's. Each of its texts
/// is known by how it starts and ends (a list inside one may hold another's start).
fn reminder_start(head: &str) -> Option<usize> {
    const KINDS: [(&str, &str); 2] = [
        ("\n\n\n# task_progress", "ensures nothing is missed.\n"),
        ("\n\n\n\n\t\t\t\t# TODO LIST UPDATE REQUIRED", "\n\n\t\t\t\t"),
    ];
    KINDS.iter().filter_map(|(start, end)| head.rfind(start).filter(|&i| head[i..].ends_with(end))).max()
}

/// `text` without a reminder of an earlier request at its end, before `<environment_details>`
/// (a message taken up again: the request that sends it adds its own).
pub(crate) fn without_reminder(text: &str) -> String {
    let (head, tail) = match text.rfind("\n\n<environment_details>") {
        Some(i) => text.split_at(i),
        None => (text, ""),
    };
    match reminder_start(head) {
        Some(i) => format!("{}{tail}", &head[..i]),
        None => text.to_string(),
    }
}

/// The text blocks Cline sends for a user message's text (`task/index.ts`: the `<task>` block,
/// each `<hook_context>` block, the focus chain's reminder, and the environment details "as its
/// own text block, separate from tool results"), in order. Empty for an empty text.
pub(crate) fn text_blocks(text: &str) -> Vec<&str> {
    let (mut head, env) = split_environment(text);
    let mut blocks = Vec::new();
    if !env.is_empty() {
        blocks.push(env);
        if let Some(i) = reminder_start(head) {
            blocks.push(&head[i + 2..]);
            head = &head[..i];
        }
    }
    while head.ends_with("</hook_context>") {
        let Some(i) = head.rfind("\n\n<hook_context source=\"") else { break };
        blocks.push(&head[i + 2..]);
        head = &head[..i];
    }
    if !head.is_empty() {
        blocks.push(head);
    }
    blocks.reverse();
    blocks
}

/// Splits a user message at its last `<environment_details>` block: the tool result before it,
/// the details after.
fn split_environment(text: &str) -> (&str, &str) {
    match text.rfind("\n\n<environment_details>") {
        Some(i) => (&text[..i], &text[i + 2..]),
        None if text.starts_with("<environment_details>") => ("", text),
        None => (text, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, answer: Option<&str>) -> Part {
        Part::ToolUse(ToolUsePart {
            id: id.into(),
            name: "read_file".into(),
            input: "{}".into(),
            answer: answer.map(str::to_string),
            extra: None,
        })
    }

    #[test]
    fn every_call_gets_exactly_one_answer_in_order() {
        let mut a = Message::assistant("");
        a.parts = vec![call("t1", None), call("t2", Some("Tool [read_file] was not executed")), call("t3", None)];
        let u = Message::user("[read_file for 'a'] Result:\nA\n\n<environment_details>\nE\n</environment_details>");
        let (ans, rest) = answers(Some(&a), &u);
        let got: Vec<(&str, &str)> = ans.iter().map(|x| (x.call.id.as_str(), x.content.as_str())).collect();
        assert_eq!(
            got,
            [
                ("t1", "[read_file for 'a'] Result:\nA"),
                ("t2", "Tool [read_file] was not executed"),
                ("t3", RESULT_MISSING)
            ]
        );
        assert_eq!(rest, "<environment_details>\nE\n</environment_details>");
    }

    /// A conversation's weight counts each native call's result once, as it goes on the wire
    /// (the loop records it on the call and copies it to the next message's text).
    #[test]
    fn a_calls_result_weighs_once() {
        let result = format!("[read_file for 'a'] Result:\n{}", "x".repeat(40_000));
        let env = "<environment_details>\nE\n</environment_details>";
        let mut a = Message::assistant("");
        a.parts = vec![call("t1", Some(&result)), call("t2", Some("short"))];
        let u = Message::user(format!("{result}\n\nshort\n\n{env}"));
        let task = Message::user("task");
        let messages = [task.clone(), a.clone(), u.clone()];
        let once = task.content.len() + "read_file{}".len() * 2 + result.len() + "short".len() + env.len();
        assert_eq!(request_bytes(&messages, 0), once);
        // After the reply, as the estimate after a usage counts (its calls still read); plain text.
        assert_eq!(request_bytes(&messages, 2), result.len() + "short".len() + env.len());
        let plain = [Message::user("hi"), Message::assistant("hello")];
        assert_eq!(request_bytes(&plain, 0), 7);
    }

    /// When every call has its own answer, the text after the copies of their results is said:
    /// a resumed task's notice, the person's words after a stop — not dropped with the copies.
    #[test]
    fn text_after_the_copies_of_the_answers_is_kept() {
        let mut a = Message::assistant("");
        let (r1, r2) = ("[read_file for 'a'] Result:\nA", "[list_files for '.'] Result:\nB");
        a.parts = vec![call("t1", Some(r1)), call("t2", Some("not valid JSON")), call("t3", Some(r2))];
        let env = "<environment_details>\nE\n</environment_details>";
        // The loop's own message: the copies, then the details.
        let u = Message::user(format!("{r1}\n\n{r2}\n\n{env}"));
        let (ans, rest) = answers(Some(&a), &u);
        assert_eq!(ans.iter().map(|x| x.content.as_str()).collect::<Vec<_>>(), [r1, "not valid JSON", r2]);
        assert_eq!(rest, env);
        // Resumed: the old details and the notice follow the copies, then fresh details.
        let said = "<environment_details>\nold\n</environment_details>\n\n[TASK RESUMPTION] go on";
        let u = Message::user(format!("{r1}\n\n{r2}\n\n{said}\n\n{env}"));
        assert_eq!(answers(Some(&a), &u).1, format!("{said}\n\n{env}"));
        // Nothing but new text (a kept reply's notice; no copies).
        let u = Message::user(format!("[TASK RESUMPTION] go on\n\n{env}"));
        assert_eq!(answers(Some(&a), &u).1, u.content);
        // A copy is only a whole result: one that merely starts alike is text.
        let u = Message::user(format!("{r1}X\n\n{env}"));
        assert_eq!(answers(Some(&a), &u).1, u.content);
    }

    /// What the loop writes beside a result (a hook's context before or after it, loop
    /// detection's warning) is not the call's answer: it goes out after all the results, in
    /// order; the copies are still found, for the context's cuts.
    #[test]
    fn text_beside_the_copies_goes_after_the_results() {
        let mut a = Message::assistant("");
        let (r1, r2) = ("[read_file for 'a'] Result:\nA", "[read_file for 'b'] Result:\nB");
        a.parts = vec![call("t1", Some(r1)), call("t2", Some(r2))];
        let pre = "<hook_context source=\"PreToolUse\" type=\"general\">\np\n</hook_context>";
        let warn = "Tool [read_file] has been called 3 times consecutively with identical arguments.";
        let post = "<hook_context source=\"PostToolUse\" type=\"general\">\nq\n</hook_context>";
        let env = "<environment_details>\nE\n</environment_details>";
        let u = Message::user(format!("{pre}\n\n{r1}\n\n{warn}\n\n{post}\n\n{pre}\n\n{r2}\n\n{post}\n\n{env}"));
        let (ans, rest) = answers(Some(&a), &u);
        assert_eq!(ans.iter().map(|x| x.content.as_str()).collect::<Vec<_>>(), [r1, r2]);
        assert_eq!(rest, format!("{pre}\n\n{warn}\n\n{post}\n\n{pre}\n\n{post}\n\n{env}"));
        let found: Vec<&str> = copies_of_answers(&a, &u).into_iter().map(|(_, r)| &u.content[r]).collect();
        assert_eq!(found, [r1, r2]);
        // A task saved before: each answer held what stood beside it, and is found whole.
        let (w1, w2) = (format!("{pre}\n\n{r1}\n\n{post}"), format!("{r2}\n\n{post}"));
        a.parts = vec![call("t1", Some(&w1)), call("t2", Some(&w2))];
        let u = Message::user(format!("{w1}\n\n{w2}\n\n{env}"));
        let (ans, rest) = answers(Some(&a), &u);
        assert_eq!(ans.iter().map(|x| x.content.as_str()).collect::<Vec<_>>(), [w1.as_str(), w2.as_str()]);
        assert_eq!(rest, env);
    }

    /// An answer the text has no copy of (a call's refusal, recorded on it alone) is not taken
    /// from inside a later call's result that happens to hold the same words as a paragraph.
    #[test]
    fn an_answer_without_a_copy_is_not_found_inside_a_later_result() {
        let mut a = Message::assistant("");
        let refused = "The arguments are not valid JSON.";
        let r2 = format!("[read_file for 'notes.md'] Result:\nfirst\n\n{refused}\n\nlast");
        a.parts = vec![call("t1", Some(refused)), call("t2", Some(&r2))];
        let env = "<environment_details>\nE\n</environment_details>";
        let u = Message::user(format!("{r2}\n\n{env}"));
        let (ans, rest) = answers(Some(&a), &u);
        assert_eq!(ans.iter().map(|x| x.content.as_str()).collect::<Vec<_>>(), [refused, r2.as_str()]);
        assert_eq!(rest, env);
        let found: Vec<usize> = copies_of_answers(&a, &u).into_iter().map(|(k, _)| k).collect();
        assert_eq!(found, [1]);
        // The text skipped is searched up to a character's boundary.
        a.parts = vec![call("t1", Some("A")), call("t2", Some("zzzz"))];
        let u = Message::user("ab\n\nA\n\n\u{e9}");
        assert_eq!(answers(Some(&a), &u).1, "ab\n\n\u{e9}");
        a.parts = vec![call("t1", Some(refused)), call("t2", Some(&r2))];
        // A stray newline after a copy's blank line: the text between is empty, not a panic.
        let u = Message::user(format!("{refused}\n\n\n{r2}"));
        let (ans, _) = answers(Some(&a), &u);
        assert_eq!(ans.len(), 2);
    }

    #[test]
    fn a_first_message_is_clines_separate_text_blocks() {
        let first = "<task>\nt\n\n</task>\n\n<hook_context source=\"TaskStart\">\nh\n</hook_context>\n\n<hook_context source=\"UserPromptSubmit\">\nu\n</hook_context>\n\n<environment_details>\nE\n</environment_details>";
        assert_eq!(
            text_blocks(first),
            [
                "<task>\nt\n\n</task>",
                "<hook_context source=\"TaskStart\">\nh\n</hook_context>",
                "<hook_context source=\"UserPromptSubmit\">\nu\n</hook_context>",
                "<environment_details>\nE\n</environment_details>"
            ]
        );
        assert_eq!(text_blocks("[x] Result:\nr\n\n<environment_details>\nE\n</environment_details>").len(), 2);
        assert_eq!(text_blocks("hello"), ["hello"]);
        assert!(text_blocks("").is_empty());
    }

    #[test]
    fn plain_messages_answer_nothing() {
        let u = Message::user("hello");
        let hi = Message::assistant("hi");
        let (ans, rest) = answers(Some(&hi), &u);
        assert!(ans.is_empty());
        assert_eq!(rest, "hello");
        let mut a = Message::assistant("");
        a.parts = vec![call("t1", None)];
        let env = Message::user("<environment_details>\nE\n</environment_details>");
        let (ans, rest) = answers(Some(&a), &env);
        assert_eq!(ans[0].content, EMPTY_RESULT);
        assert!(rest.starts_with("<environment_details>"));
    }
}
