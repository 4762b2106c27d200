//! The paths a request's conditional rules are evaluated against, as Cline's
//! `RuleContextBuilder.getRulePathContext` gathers them from its messages: the person's latest
//! words (the task, feedback, a follow-up answer or the words given with a resume: Cline's latest `say "task"` or
//! `"user_feedback"`) and the paths of the tool calls Cline asks about (`ask "tool"`) or reports
//! as edits (`say "tool"` with `editedExistingFile`, `newFileCreated`, `fileDeleted`).

use std::path::Path;

use crate::run::llm::{Message, Role};
use crate::run::tools::paths::Workspace;
use crate::run::tools::Call;

/// The latest text the person wrote: their latest feedback or follow-up answer, else the task;
/// as they wrote it, their `@` mentions as mentions (Cline reads its `say` text, from before
/// `parseMentions`, where `@/src/a.rs` is no path: an `@` may not start one).
pub(super) fn latest_user_text(messages: &[Message]) -> String {
    static MENTION: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re =
        MENTION.get_or_init(|| regex::Regex::new(r"'([^'\n]*)' \(see below for (?:file|folder) content\)").unwrap());
    re.replace_all(&latest_words(messages), "@/$1").into_owned()
}

/// [`latest_user_text`] with the mentions as `parseMentions` wrote them.
fn latest_words(messages: &[Message]) -> String {
    for m in messages.iter().rev().filter(|m| m.role == Role::User) {
        // All are Cline's `say "user_feedback"` (the words given with a resume too); within a
        // message the later one is the latest.
        // Each as the agent frames it (a file a tool read may hold the tags too).
        const FEEDBACK: [&str; 3] = ["following feedback:\n", "to help guide you:\n", "attempt completion again.\n\n"];
        let feedback = between(&m.content, &FEEDBACK, "<feedback>\n", "\n</feedback>");
        // An answer's slash command goes before it (`command_in_answer`).
        const ANSWER: [&str; 3] = ["] Result:\n", "</explicit_instructions>\n", "</mcp_prompt>\n"];
        let answer = between(&m.content, &ANSWER, "<answer>\n", "\n</answer>");
        let resumed = between(&m.content, &["continuation:\n"], "<user_message>\n", "\n</user_message>");
        if let Some((_, text)) = feedback.into_iter().chain(answer).chain(resumed).max_by_key(|(at, _)| *at) {
            return text.to_string();
        }
    }
    messages
        .iter()
        .find(|m| m.role == Role::User)
        .and_then(|m| between(&m.content, &[""], "<task>\n", "\n</task>"))
        .map(|(_, t)| t)
        .unwrap_or_default()
        .to_string()
}

/// The last `open … close` of `s` right after one of `after`: where it starts, and what is
/// between.
fn between<'a>(s: &'a str, after: &[&str], open: &str, close: &str) -> Option<(usize, &'a str)> {
    let at = s.rmatch_indices(open).map(|(i, _)| i).find(|&i| after.iter().any(|a| s[..i].ends_with(a)))?;
    let start = at + open.len();
    let end = s[start..].find(close)? + start;
    Some((at, &s[start..end]))
}

/// The paths of the tool calls the model made that Cline's rule context counts: every call that
/// was put to the tools (Cline asks about or reports each one, its parallel tool calling on by
/// default) — in the XML dialect each complete tool use of a reply but the last ones its next
/// message says were skipped (after a refusal, or with one tool per reply), in native mode every
/// call kept in the reply's parts that was answered with its result, or not yet answered — not
/// one answered with `toolAlreadyUsed` or skipped after a refusal: those never ran, and Cline
/// asks about none of them. `asked_reads`: whether a read outside the workspace is asked about
/// (not under `--yolo`).
pub(super) fn tool_paths(messages: &[Message], root: &Path, asked_reads: bool) -> Vec<String> {
    let ws = Workspace::new(root).ok();
    let mut paths = Vec::new();
    for (i, m) in messages.iter().enumerate().filter(|(_, m)| m.role == Role::Assistant) {
        let parsed = parser_core::parse(&m.content);
        let complete = parsed.iter().filter_map(|b| match b {
            parser_core::Block::ToolUse(t) if !t.partial => {
                // Only the params read here: this runs on every request, over the whole
                // history, and must not copy every write's content.
                let wanted =
                    |n: &str| matches!(n, "path" | "absolutePath") || (t.name == "apply_patch" && n == "input");
                let params = t.params().iter().filter(|p| wanted(p.name));
                let params = params.map(|p| (p.name.to_string(), p.value.to_string(), p.raw.to_string())).collect();
                Some(Call::read_as_cline(t.name, params))
            }
            _ => None,
        });
        let xml: Vec<Call> = complete.collect();
        // Those are the reply's last calls.
        let skipped = messages.get(i + 1).map_or(0, |next| crate::run::tools::not_run_in(&next.content));
        // The calls after a completion or a question never run (and leave no result saying so).
        let ends = xml.iter().position(|c| matches!(c.name.as_str(), "attempt_completion" | "ask_followup_question"));
        let ran = xml.len().saturating_sub(skipped).min(ends.map_or(usize::MAX, |i| i + 1));
        let native = m.tool_uses().filter(|t| t.answer.as_deref().is_none_or(crate::run::tools::was_run));
        let calls = xml.into_iter().take(ran).chain(native.map(|t| Call::from_input(&t.name, &t.input)));
        for call in calls {
            paths.extend(call_paths(&call, ws.as_ref(), asked_reads));
        }
    }
    paths
}

/// The paths of one call that count. Cline asks about every edit under its default settings
/// (and reports each one done with its path under `--yolo`); a read, listing or search inside
/// the workspace is approved without asking and reported as `readFile`, `listFilesTopLevel`, …,
/// which count not: only one outside the workspace is asked about, so only that one counts.
fn call_paths(call: &Call, ws: Option<&Workspace>, asked_reads: bool) -> Vec<String> {
    if call.name == "apply_patch" {
        return call.untrimmed_param("input").map(patch_paths).unwrap_or_default();
    }
    let Some(path) = call.param("path") else { return Vec::new() };
    let read = matches!(call.name.as_str(), "read_file" | "list_files" | "list_code_definition_names" | "search_files");
    if read && !(asked_reads && ws.is_some_and(|ws| !ws.resolve(path).inside)) {
        return Vec::new();
    }
    vec![path.to_string()]
}

/// The files a V4A patch names: Cline's `extractPathsFromApplyPatch` reads the `*** Add File:`,
/// `*** Update File:` and `*** Delete File:` headers of the asked patch, and the edits it
/// reports afterwards name a moved file by where it went (`*** Move to:`).
fn patch_paths(input: &str) -> Vec<String> {
    const HEADERS: [&str; 4] = ["*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "];
    input
        .lines()
        .filter_map(|l| HEADERS.iter().find_map(|h| l.strip_prefix(h)))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}
