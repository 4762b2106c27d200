//! The hooks at Cline's points in a task, with Cline's per-hook data and the wrapping of what
//! they add (`Task.startTask`, `resumeTaskFromHistory`, `abortTask`, `ToolHookUtils`,
//! `ToolExecutor.runPostToolUseHook`, `AttemptCompletionHandler`, `precompact-executor`).
//! Each returns a [`Gate`]: go on (with text for the next user message) or stop the task.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;

use serde_json::json;

use super::hooks::{self, input, notification, tool_context, Answer, Hook, Hooks};
use crate::run::llm::Message;
use crate::run::session::events::Events;
use crate::run::tools::Call;
use crate::run::ui::term::{visible, Term};

/// What the task does after a hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Gate {
    /// Go on; the text (empty for none) joins the next user message.
    Go(String),
    /// A hook cancelled the task: this says which and why.
    Stop(String),
}

fn stop(hook: Hook, a: &Answer) -> Gate {
    let why = a.error_message.as_deref().map(str::trim).unwrap_or("no reason given");
    // Shown on the terminal: the hook may echo what the model wrote.
    Gate::Stop(format!("the {} hook cancelled the task: {}", hook.name(), visible(why)))
}

/// `TaskStart`, then `UserPromptSubmit` with the task, as a new task starts: the first user
/// message, with the hooks' contexts after the `<task>` block, in that order; the caller adds
/// the environment details, built once the hooks have run (as Cline's `loadContext` builds
/// them), so that they show what a hook changed. The hooks see the person's `task`; the block
/// holds `told`, the task as the model is told it (with `--output-schema`'s instructions).
pub(crate) fn task_start(h: &mut Hooks, task: &str, told: &str, term: &mut Term, events: &mut Events) -> Gate {
    let md = input::task_metadata(&h.meta, &[("initialTask", task)]);
    let a = h.run(Hook::TaskStart, json!({ "taskMetadata": md }), term, events);
    if a.cancel {
        return stop(Hook::TaskStart, &a);
    }
    let prompt = prompt_of(&format!("<task>\n{task}\n</task>"));
    let block = format!("<task>\n{told}\n</task>");
    let mut parts = vec![block];
    if let Some(c) = a.context.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
        parts.push(format!("<hook_context source=\"TaskStart\">\n{c}\n</hook_context>"));
    }
    if let Err(why) = user_prompt(h, &prompt, &mut parts, term, events) {
        return Gate::Stop(why);
    }
    Gate::Go(parts.join("\n\n"))
}

/// `UserPromptSubmit` with a later prompt of a conversation (`agent-min acp`): the message
/// `head` (built from the prompt), then the hook's context; the environment details after the
/// hook are the caller's. The
/// hook's `prompt` is read from the prompt as Cline reads feedback (`<feedback>` around it).
pub(crate) fn follow_up(h: &mut Hooks, prompt: &str, head: String, term: &mut Term, events: &mut Events) -> Gate {
    let mut parts = vec![head];
    let prompt = prompt_of(&format!("<feedback>\n{prompt}\n</feedback>"));
    if let Err(why) = user_prompt(h, &prompt, &mut parts, term, events) {
        return Gate::Stop(why);
    }
    Gate::Go(parts.join("\n\n"))
}

/// What Cline's `extractUserPromptFromContent` makes of one text block for `UserPromptSubmit`'s
/// `prompt`: nothing if it holds a system marker, else the trimmed text inside its `<task>`,
/// `<feedback>`, `<answer>` and `<user_message>` tags (in that order, tags matched ignoring
/// case, empty ones left out, joined by a blank line), else the trimmed block.
fn prompt_of(block: &str) -> String {
    const MARKERS: [&str; 4] = ["[TASK RESUMPTION]", "<hook_context", "[Response interrupted", "Task was interrupted"];
    const TAGS: [&str; 4] = ["task", "feedback", "answer", "user_message"];
    if MARKERS.iter().any(|m| block.contains(m)) {
        return String::new();
    }
    // ASCII lowercasing keeps every byte offset.
    let lower = block.to_ascii_lowercase();
    if !TAGS.iter().any(|t| lower.contains(&format!("<{t}>"))) {
        return block.trim().to_string();
    }
    let mut found = Vec::new();
    for tag in TAGS {
        let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
        let mut from = 0;
        while let Some(start) = lower[from..].find(&open).map(|i| from + i + open.len()) {
            let Some(end) = lower[start..].find(&close).map(|i| start + i) else { break };
            let inner = block[start..end].trim();
            if !inner.is_empty() {
                found.push(inner);
            }
            from = end + close.len();
        }
    }
    found.join("\n\n").trim().to_string()
}

/// `UserPromptSubmit` with `prompt`; its context is pushed onto `parts`.
fn user_prompt(
    h: &mut Hooks,
    prompt: &str,
    parts: &mut Vec<String>,
    term: &mut Term,
    events: &mut Events,
) -> Result<(), String> {
    let a = h.run(Hook::UserPromptSubmit, json!({ "prompt": prompt, "attachments": [] }), term, events);
    if a.cancel {
        return match stop(Hook::UserPromptSubmit, &a) {
            Gate::Stop(why) => Err(why),
            Gate::Go(_) => Ok(()),
        };
    }
    if let Some(c) = a.context {
        parts.push(format!("<hook_context source=\"UserPromptSubmit\">\n{c}\n</hook_context>"));
    }
    Ok(())
}

/// `TaskResume`, then `UserPromptSubmit` (with the person's `words` given with the resume, ""
/// for none, as Cline's runs it with only those), as a saved task continues: the resumption
/// message `body` with `TaskResume`'s context first, `UserPromptSubmit`'s after it; the
/// environment details after the hooks are the caller's. `cut`: whether the saved history was
/// ever cut (Cline's `conversationHistoryDeleted`).
pub(crate) fn task_resume(
    h: &mut Hooks,
    (messages, updated_secs, cut): (&[Message], u64, bool),
    body: &str,
    words: &str,
    term: &mut Term,
    events: &mut Events,
) -> Gate {
    let md = input::task_metadata(&h.meta, &[]);
    // `messageCount`: Cline counts its UI messages (clineMessages), which agent-min has none
    // of; the saved history's messages stand for them.
    let previous = json!({
        "lastMessageTs": (u128::from(updated_secs) * 1000).to_string(),
        "messageCount": messages.len().to_string(),
        // Cline: whether a deleted range was ever set; `cut`: whether the history was cut.
        "conversationHistoryDeleted": cut.to_string(),
    });
    let a = h.run(Hook::TaskResume, json!({ "taskMetadata": md, "previousState": previous }), term, events);
    if a.cancel {
        return stop(Hook::TaskResume, &a);
    }
    let mut parts = Vec::new();
    if let Some(c) = a.context {
        parts.push(format!("<hook_context source=\"TaskResume\" type=\"general\">\n{c}\n</hook_context>"));
    }
    parts.push(body.trim_end().to_string());
    // Cline's `buildUserFeedbackContent`: the words as feedback (none: no block).
    let prompt = if words.is_empty() { String::new() } else { prompt_of(&format!("<feedback>\n{words}\n</feedback>")) };
    if let Err(why) = user_prompt(h, &prompt, &mut parts, term, events) {
        return Gate::Stop(why);
    }
    Gate::Go(parts.join("\n\n"))
}

/// `PreToolUse` once a call is about to run, for the tools whose handlers in Cline run it
/// (`ToolDecl::pre_tool_use`: not `ask_followup_question`, `use_skill` or
/// `attempt_completion`). Its context comes before the tool's result.
pub(crate) fn pre_tool(h: &mut Hooks, call: &Call, term: &mut Term, events: &mut Events) -> Gate {
    if !crate::run::tools::registry::runs_pre_tool_use(&call.name) || !h.has(Hook::PreToolUse) {
        return Gate::Go(String::new());
    }
    let data = json!({ "toolName": call.name, "parameters": input::parameters(&call.cline_params()) });
    let a = h.run(Hook::PreToolUse, data, term, events);
    if a.cancel {
        return stop(Hook::PreToolUse, &a);
    }
    Gate::Go(a.context.and_then(|c| tool_context("PreToolUse", &c)).unwrap_or_default())
}

/// `PostToolUse` after a call ran (never for `attempt_completion`). Its context comes after
/// the tool's result.
pub(crate) fn post_tool(
    h: &mut Hooks,
    call: &Call,
    result: &str,
    success: bool,
    ms: u64,
    term: &mut Term,
    events: &mut Events,
) -> Gate {
    // `use_skill` too: Cline runs PostToolUse after every tool (its skill handler runs no
    // PreToolUse).
    if !is_tool(call) || !h.has(Hook::PostToolUse) {
        return Gate::Go(String::new());
    }
    let data = json!({
        "toolName": call.name,
        "parameters": input::parameters(&call.cline_params()),
        "result": result,
        "success": success,
        "executionTimeMs": ms,
    });
    let a = h.run(Hook::PostToolUse, data, term, events);
    if a.cancel {
        let why = a.error_message.as_deref().map(str::trim).unwrap_or("Hook requested task cancellation");
        return Gate::Stop(format!("the PostToolUse hook cancelled the task: {}", visible(why)));
    }
    Gate::Go(a.context.and_then(|c| tool_context("PostToolUse", &c)).unwrap_or_default())
}

/// Whether the tool hooks see `call`: a declared tool other than `attempt_completion`, the
/// MCP servers' two included (an unknown tool never reaches a handler in Cline, so no hook
/// sees it).
fn is_tool(call: &Call) -> bool {
    call.name != "attempt_completion" && crate::run::tools::registry::find(&call.name).is_some()
}

/// `TaskComplete`, then the `Notification` of a complete task (both observation only), as
/// Cline's AttemptCompletionHandler runs them.
pub(crate) fn task_complete(h: &mut Hooks, call: &Call, term: &mut Term, events: &mut Events) {
    let result = call.param("result").unwrap_or("");
    let extra = [("result", result), ("command", call.param("command").unwrap_or(""))];
    let md = input::task_metadata(&h.meta, &extra);
    h.run(Hook::TaskComplete, json!({ "taskMetadata": md }), term, events);
    if hooks::BUILT_IN {
        let n = notification::Notification::task_complete(result);
        h.run(Hook::Notification, n.data(), term, events);
    }
}

/// Arranges for the `Notification` hook (`user_attention`) to run whenever the run waits for
/// the person (`Term::attention`): an approval, a question, guidance at the mistake limit. An
/// unapproved workspace script is asked about now, as the run starts (not in the middle of an
/// ask).
pub(crate) fn notify_on_attention(h: &mut Hooks, events: &Events, term: &mut Term) {
    if !hooks::BUILT_IN || !h.settle(Hook::Notification, term) {
        return;
    }
    let (mut h, mut events) = (h.detached(), events.for_other_thread());
    term.on_attention(Box::new(move |source, message| {
        let n = notification::Notification::user_attention(source, message);
        h.run(Hook::Notification, n.data(), &mut Term::stderr(), &mut events);
    }));
}

/// `TaskCancel` (cannot cancel anything).
pub(crate) fn task_cancel(h: &mut Hooks, term: &mut Term, events: &mut Events) {
    let md = input::task_metadata(&h.meta, &[("completionStatus", "cancelled")]);
    h.run(Hook::TaskCancel, json!({ "taskMetadata": md }), term, events);
}

/// Arranges for `TaskCancel` to run when Ctrl-C, SIGTERM or the watchdog ends the run.
pub(crate) fn cancel_on_interrupt(h: &Hooks, events: &Events) {
    if !h.has(Hook::TaskCancel) {
        return;
    }
    let (mut h, mut events) = (h.detached(), events.for_other_thread());
    crate::run::ui::interrupt::on_interrupt(Box::new(move || {
        let mut term = Term::stderr();
        task_cancel(&mut h, &mut term, &mut events);
    }));
}

/// What is about to be cut from the context window.
pub(crate) struct Compaction<'a> {
    /// The history before the cut.
    pub messages: &'a [Message],
    /// "standard-truncation-half" (over the threshold) or "standard-truncation-lastquarter"
    /// (the server said the prompt is too long), Cline's names.
    pub strategy: &'a str,
    /// Input, output, cache-read, cache-write tokens of the last request.
    pub tokens: [u64; 4],
    /// The range of messages removed (inclusive; (0, 0) for none).
    pub deleted: (usize, usize),
}

/// `PreCompact` before the context window is cut. The history is in two files (JSON and plain
/// text, readable only by the user) for the hook's life, then removed.
pub(crate) fn pre_compact(h: &mut Hooks, c: &Compaction<'_>, term: &mut Term, events: &mut Events) -> Gate {
    if !h.has(Hook::PreCompact) {
        return Gate::Go(String::new());
    }
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis());
    let base = std::env::temp_dir().join(format!("agent-min-{}-conversation_history_{stamp}", std::process::id()));
    let (json_path, raw_path) = (base.with_extension("json"), base.with_extension("txt"));
    let history: Vec<_> = c.messages.iter().map(|m| json!({"role": role(m), "content": m.content})).collect();
    let raw: String = c.messages.iter().map(|m| format!("{}: {}\n\n", role(m), m.content)).collect();
    let written = private_write(&json_path, &serde_json::to_string_pretty(&history).unwrap_or_default())
        .and_then(|()| private_write(&raw_path, &raw));
    if let Err(e) = &written {
        term.warn(&format!("PreCompact: could not write the history for the hook ({e}); it gets no file paths."));
    }
    let path = |p: &std::path::Path| if written.is_ok() { p.display().to_string() } else { String::new() };
    let data = json!({
        "taskId": h.meta.task_id,
        "ulid": h.meta.task_id,
        "contextSize": c.messages.len(),
        "compactionStrategy": c.strategy,
        // Cline's index of its last `api_req_started` UI message, which agent-min has none
        // of: the history's last message, in the file the hook is given.
        "previousApiReqIndex": c.messages.len().saturating_sub(1),
        "tokensIn": c.tokens[0],
        "tokensOut": c.tokens[1],
        // Cline's `extractTokenUsageFromMessage`: cache writes as `tokensInCache`, cache reads
        // as `tokensOutCache`.
        "tokensInCache": c.tokens[3],
        "tokensOutCache": c.tokens[2],
        "deletedRangeStart": c.deleted.0,
        "deletedRangeEnd": c.deleted.1,
        "contextJsonPath": path(&json_path),
        "contextRawPath": path(&raw_path),
    });
    let a = h.run(Hook::PreCompact, data, term, events);
    let _ = std::fs::remove_file(&json_path);
    let _ = std::fs::remove_file(&raw_path);
    if a.cancel {
        return stop(Hook::PreCompact, &a);
    }
    Gate::Go(String::new())
}

/// Cuts the history with `cut`, running `PreCompact` first when there is such a hook: the cut
/// is computed on a copy, the hook sees the history before it, and a cancel leaves the history
/// as it was. `Err` is the hook's reason to stop the task.
pub(crate) fn guarded_cut<C>(
    h: &mut Hooks,
    term: &mut Term,
    events: &mut Events,
    messages: &mut Vec<Message>,
    (strategy, tokens): (&str, [u64; 4]),
    cut: impl FnOnce(&mut Vec<Message>) -> Option<C>,
) -> Result<Option<C>, String> {
    if !h.has(Hook::PreCompact) {
        return Ok(cut(messages));
    }
    let mut fitted = messages.clone();
    let Some(done) = cut(&mut fitted) else { return Ok(None) };
    // The cut keeps the first exchange and removes a run after it (`budget::context::truncate`):
    // Cline's inclusive range; (0, 0) when only older file reads were replaced.
    let removed = messages.len().saturating_sub(fitted.len());
    let deleted = if removed > 0 { (2, 1 + removed) } else { (0, 0) };
    let c = Compaction { messages, strategy, tokens, deleted };
    match pre_compact(h, &c, term, events) {
        Gate::Stop(why) => Err(why),
        Gate::Go(_) => {
            *messages = fitted;
            Ok(Some(done))
        }
    }
}

fn role(m: &Message) -> &'static str {
    match m.role {
        crate::run::llm::Role::User => "user",
        crate::run::llm::Role::Assistant => "assistant",
    }
}

fn private_write(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    f.write_all(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::prompt_of;

    #[test]
    fn the_prompt_is_read_from_a_block_as_clines_extract_user_prompt_from_content_reads_it() {
        assert_eq!(prompt_of("<task>\n  fix the build \n</task>"), "fix the build");
        assert_eq!(prompt_of("<feedback>\nmore tests\n\n</feedback>"), "more tests");
        // Tags in any case, each tag's matches in order, the tags in Cline's order.
        assert_eq!(prompt_of("<feedback>b</feedback> <TASK> a </Task> <task>c</task>"), "a\n\nc\n\nb");
        // A block with a system marker is left out whole.
        assert_eq!(prompt_of("<task>\nsee <hook_context x\n</task>"), "");
        assert_eq!(prompt_of("<task>\n[TASK RESUMPTION] go on\n</task>"), "");
        // No tag: the trimmed block; an unclosed tag: nothing.
        assert_eq!(prompt_of("  plain words \n"), "plain words");
        assert_eq!(prompt_of("<task>\nno end"), "");
    }
}
