//! Cline's response texts (`apps/vscode/src/core/prompts/responses.ts`, `formatResponse`): what
//! the model is told about tool results, errors and the loop, word for word. Texts of our own
//! (where Cline has none) are marked "ours".

/// Cline's reminder of the tool format (`toolUseInstructionsReminder`), appended to several
/// error messages.
pub(crate) const TOOL_USE_REMINDER: &str = "# Reminder: Instructions for Tool Use
Tool uses are formatted using XML-style tags. The tool name is enclosed in opening and closing tags, and each parameter is similarly enclosed within its own set of tags. Here's the structure:
<tool_name>
<parameter1_name>value1</parameter1_name>
<parameter2_name>value2</parameter2_name>
...
</tool_name>
For example:
<attempt_completion>
<result>
I have completed the task...
</result>
</attempt_completion>
Always adhere to this format for all tool uses to ensure proper parsing and execution.";

/// Cline's `toolError`: the wrapper of every failed tool's result.
pub(crate) fn tool_error(error: &str) -> String {
    format!("The tool execution failed with the following error:\n<error>\n{error}\n</error>")
}

/// Cline's `toolDenied`.
pub(crate) const TOOL_DENIED: &str = "The user denied this operation.";

/// How Cline frames a person's words given with an approval or a denial
/// (`ToolResultUtils.pushAdditionalToolFeedback`); a separate text block after the result.
pub(crate) fn user_feedback(feedback: &str) -> String {
    format!("{FEEDBACK_START}\n<feedback>\n{feedback}\n</feedback>")
}

/// How [`user_feedback`] begins.
const FEEDBACK_START: &str = "The user provided the following feedback:";

/// Whether `text` starts one of the parts that follow a tool's result in a user message (each
/// after a blank line here; a text block of its own in Cline): another call's result
/// (`[tool for '…']`, `[tool]`), a call not run ([`tool_already_used`], the skip after a
/// refusal, one after a completion, a cut-off call), the person's words after a stop
/// (feedback, guidance), a resumption notice and the words given with it, a hook's context, a slash command's
/// instructions, the focus chain's reminder (`focus_chain.rs`), the environment details.
pub(crate) fn starts_a_part(text: &str) -> bool {
    const STARTS: [&str; 14] = [
        // `tool_already_used` and `repeated_tool_call`.
        "Tool [",
        FEEDBACK_START,
        GUIDANCE_START,
        RESUMPTION_START,
        NEW_INSTRUCTIONS_START,
        SKIPPED_AFTER_REJECTION,
        NOT_RUN_AFTER_COMPLETION,
        NOT_RUN_AFTER_QUESTION,
        // `truncated_tool`, either way.
        "[ERROR] Your previous response ",
        "<environment_details>",
        "<hook_context source=\"",
        "<explicit_instructions",
        "# task_progress",
        "# TODO LIST UPDATE REQUIRED",
    ];
    if STARTS.iter().any(|s| text.starts_with(s)) {
        return true;
    }
    // A result's header: `[name for '` or `[name]` (a command's description may span lines).
    let Some(rest) = text.strip_prefix('[') else { return false };
    let name = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).unwrap_or(rest.len());
    name > 0 && (rest[name..].starts_with(" for '") || rest[name..].starts_with("] Result:"))
}

/// A later prompt of a conversation (`agent-min acp`) as the model reads it: after a
/// completion (`unsent` is `None`), Cline's feedback on the result of `attempt_completion`
/// (`AttemptCompletionHandler`); after a stop, what was left unsent if anything (without its
/// environment details: fresh ones follow) and then the person's words as feedback.
/// `instructions` (what a slash command in the words stands for, or "") go where Cline's
/// `parseSlashCommands` puts them: at the start of the text block holding the `<feedback>`.
pub(crate) fn follow_up(prompt: &str, unsent: Option<&str>, instructions: &str) -> String {
    match unsent.map(str::trim_end) {
        None => format!(
            "[attempt_completion] Result: Done\n\nThe user has provided feedback on the results. Consider their input to continue the task, and then attempt completion again.\n\n{instructions}<feedback>\n{prompt}\n</feedback>"
        ),
        Some(earlier) => after(earlier, &format!("{instructions}{}", user_feedback(prompt))),
    }
}

/// `words` after what was left `unsent` (its environment details dropped: fresh ones follow).
pub(crate) fn after_unsent(unsent: Option<&str>, words: &str) -> String {
    after(unsent.unwrap_or_default(), words)
}

/// A later prompt after a stop at the mistake limit: Cline's answer to its
/// `mistake_limit_reached` ask — what was left unsent (without its environment details), then
/// the person's words as guidance ([`too_many_mistakes`]).
pub(crate) fn guidance_after(prompt: &str, unsent: Option<&str>, instructions: &str) -> String {
    after(unsent.unwrap_or_default(), &format!("{instructions}{}", too_many_mistakes(prompt)))
}

/// `earlier` (a user message left unsent, its environment details dropped: fresh ones follow)
/// and then `words`.
fn after(earlier: &str, words: &str) -> String {
    let earlier = earlier.trim_end();
    let earlier = match earlier.rfind("<environment_details>") {
        Some(i) if earlier.ends_with("</environment_details>") => earlier[..i].trim_end(),
        _ => earlier,
    };
    match earlier {
        "" => words.to_string(),
        _ => format!("{earlier}\n\n{words}"),
    }
}

/// Cline's `permissionDeniedError`.
pub(crate) fn permission_denied(reason: &str) -> String {
    format!(
        "Command execution blocked by CLINE_COMMAND_PERMISSIONS: {reason}. You must try a different approach or ask the user to update the permission settings."
    )
}

/// Cline's `repeatedToolCall`: the same tool with identical arguments `count` times in a row.
pub(crate) fn repeated_tool_call(name: &str, count: u32) -> String {
    format!(
        "Tool [{name}] has been called {count} times consecutively with identical arguments. This is not making progress. Please use a different tool or different arguments instead of repeating the same call."
    )
}

/// Cline's `replaceInFileMissingDiffError`.
pub(crate) fn replace_in_file_missing_diff(path: &str) -> String {
    format!(
        "Failed to edit '{path}': The 'diff' parameter was empty.\n\nThe diff parameter must contain SEARCH/REPLACE blocks in this format:\n<<<<<<< SEARCH\nexact lines to find\n=======\nreplacement lines\n>>>>>>> REPLACE\n\nRules:\n- The SEARCH block must match existing file content exactly (including whitespace and indentation)\n- You can include multiple SEARCH/REPLACE blocks in a single diff parameter\n- If you're unsure of the exact content, use read_file first to see the current file"
    )
}

/// Cline's `executeCommandMissingCommandError`.
pub(crate) fn execute_command_missing_command() -> String {
    "The 'command' parameter was empty. Provide the shell command to execute.\n\nExample:\n<execute_command>\n<command>cd /path && python -m pytest tests/</command>\n<requires_approval>false</requires_approval>\n</execute_command>".to_string()
}

/// Above this much of the context window used, a missing `content` is blamed on it too
/// (Cline's `CONTEXT_WINDOW_WARNING_THRESHOLD_PERCENT`).
const CONTEXT_WARNING_PERCENT: u64 = 50;

/// Cline's `writeToFileMissingContentError`, by the number of consecutive failures (Cline's
/// mistake count after this one) and how full the context window was at the last request.
pub(crate) fn write_to_file_missing_content(path: &str, failures: u32, context_percent: Option<u64>) -> String {
    let mut base = format!(
        "Failed to write to '{path}': The 'content' parameter was empty. This typically happens when the file content is too large to generate in a single response, or when output token limits are reached before the content parameter is fully written."
    );
    if let Some(percent) = context_percent.filter(|p| *p > CONTEXT_WARNING_PERCENT) {
        base.push_str(&format!("\n\nWarning: Context window is {percent}% full. The remaining output budget may be insufficient for large file writes. You MUST use a strategy that produces smaller outputs."));
    }
    if failures >= 3 {
        return format!(
            "{base}\n\nCRITICAL: You have failed to write this file {failures} times in a row. You MUST change your approach — do NOT retry write_to_file for this file again.\n\nRequired action — choose ONE of these strategies:\n1. **Create an empty file first, then use replace_in_file** to add content in small sections (recommended)\n2. **Break the file into multiple smaller files** if architecturally appropriate\n3. **Write a minimal skeleton** using write_to_file (just imports, class/function signatures, no implementations), then use replace_in_file to fill in each section one at a time\n\nEach replace_in_file call should add no more than 50-100 lines of content at a time."
        );
    }
    if failures >= 2 {
        let nth = if failures == 2 { "nd" } else { "rd" };
        return format!(
            "{base}\n\nThis is your {failures}{nth} failed attempt. The file content is likely too large to generate in one response. You must use a different strategy:\n\nRecommended approaches:\n1. **Use write_to_file with a minimal skeleton** (just the structure — imports, class/function signatures, no implementations), then use replace_in_file to fill in each section incrementally\n2. **Use replace_in_file with smaller chunks** — if the file already exists, make targeted edits instead of rewriting the entire file\n3. **Break the task into smaller steps** — write one function or section at a time\n\nDo NOT attempt to write the full file content in a single write_to_file call again."
        );
    }
    format!(
        "{base}\n\nSuggestions:\n- If the file is large, try breaking down the task into smaller steps. Write a skeleton first, then fill in sections using replace_in_file.\n- If the file already exists, prefer replace_in_file to make targeted edits instead of rewriting the entire file.\n- Ensure the 'content' parameter contains the complete file content before closing the tool tag.\n\n{TOOL_USE_REMINDER}"
    )
}

/// Cline's `fileEditWithoutUserChanges` (no auto-formatting, no diagnostics): the saved file,
/// byte for byte.
pub(crate) fn file_edit_without_user_changes(path: &str, final_content: &str) -> String {
    format!(
        "The content was successfully saved to {path}.\n\nHere is the full, updated content of the file that was saved:\n\n<final_file_content path=\"{path}\">\n{final_content}\n</final_file_content>\n\nIMPORTANT: For any future changes to this file, use the final_file_content shown above as your reference. This content reflects the current state of the file, including any auto-formatting (e.g., if you used single quotes but the formatter converted them to double quotes). Always base your SEARCH/REPLACE operations on this final version to ensure accuracy.\n\n"
    )
}

/// Cline's `fileEditWithUserChanges` (no auto-formatting, no diagnostics): `user_edits` is the
/// person's changes to the proposal as a patch.
pub(crate) fn file_edit_with_user_changes(path: &str, user_edits: &str, final_content: &str) -> String {
    format!(
        "The user made the following updates to your content:\n\n{user_edits}\n\nThe updated content, which includes both your original modifications and the additional edits, has been successfully saved to {path}. Here is the full, updated content of the file that was saved:\n\n<final_file_content path=\"{path}\">\n{final_content}\n</final_file_content>\n\nPlease note:\n1. You do not need to re-write the file with these changes, as they have already been applied.\n2. Proceed with the task using this updated file content as the new baseline.\n3. If the user's edits have addressed part of the task or changed the requirements, adjust your approach accordingly.4. IMPORTANT: For any future changes to this file, use the final_file_content shown above as your reference. This content reflects the current state of the file, including both user edits and any auto-formatting (e.g., if you used single quotes but the formatter converted them to double quotes). Always base your SEARCH/REPLACE operations on this final version to ensure accuracy.\n"
    )
}

/// The line ending Cline's `DiffViewProvider` uses for a text: CRLF if it has any.
pub(crate) fn eol_of(content: &str) -> &'static str {
    if content.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    }
}

/// A text as `DiffViewProvider.saveChanges` normalises it: every line ending made `eol`,
/// trailing whitespace trimmed (JavaScript's set), one `eol` added.
pub(crate) fn normalized(content: &str, eol: &str) -> String {
    let uniform = content.replace("\r\n", "\n").replace('\n', eol);
    format!("{}{eol}", uniform.trim_end_matches(parser_core::is_js_whitespace))
}

/// Cline's `diffError`: after a failed `replace_in_file`, the file as it is.
pub(crate) fn diff_error(path: &str, original: &str) -> String {
    format!(
        "This is likely because the SEARCH block content doesn't match exactly with what's in the file, or if you used multiple SEARCH/REPLACE blocks they may not have been in the order they appear in the file. (Please also ensure that when using the replace_in_file tool, Do NOT add extra characters to the markers (e.g., ------- SEARCH> is INVALID). Do NOT forget to use the closing +++++++ REPLACE marker. Do NOT modify the marker format in any way. Malformed XML will cause complete tool failure and break the entire editing process.)\n\nThe file was reverted to its original state:\n\n<file_content path=\"{path}\">\n{original}\n</file_content>\n\nNow that you have the latest state of the file, try the operation again with fewer, more precise SEARCH blocks. For large files especially, it may be prudent to try to limit yourself to <5 SEARCH/REPLACE blocks at a time, then wait for the user to respond with the result of the operation before following up with another replace_in_file call to make additional edits.\n(If you run into this error 3 times in a row, you may use the write_to_file tool as a fallback.)"
    )
}

/// Cline's `formatFilesList` note when a listing hit its cap.
pub(crate) const FILE_LIST_TRUNCATED: &str =
    "(File list truncated. Use list_files on specific subdirectories if you need to explore further.)";

/// Cline's nudge when a reply used no tool.
pub fn no_tools_used() -> String {
    format!(
        "[ERROR] You did not use a tool in your previous response! Please retry with a tool use.

{TOOL_USE_REMINDER}

# Next Steps

If you have completed the user's task, use the attempt_completion tool. 
If you require additional information from the user, use the ask_followup_question tool. 
Otherwise, if you have not completed the task and do not need additional information, then proceed with the next step of the task. 
(This is an automated message, so do not respond to it conversationally.)"
    )
}

/// Cline's message for a missing required parameter.
pub(crate) fn missing_param(param: &str) -> String {
    format!(
        "Missing value for required parameter '{param}'. Please retry with complete response.\n\n{TOOL_USE_REMINDER}"
    )
}

/// Cline's message for tool blocks after the first.
pub fn tool_already_used(name: &str) -> String {
    format!(
        "Tool [{name}] was not executed because a tool has already been used in this message. Only one tool may be used per message. You must assess the first tool's result before proceeding to use the next tool."
    )
}

/// What stands in the history for a reply that said nothing and called nothing but thought, or
/// was cut at the output limit (Cline's text for a reply with no content): the APIs refuse an
/// assistant message without content.
pub(crate) const NO_RESPONSE: &str = "Failure: I did not provide a response.";

/// Cline's result for a call after one the person refused in the same reply (`ToolExecutor`,
/// `didRejectTool`), followed by the call's description.
pub(crate) const SKIPPED_AFTER_REJECTION: &str = "Skipping tool due to user rejecting a previous tool.";

/// The result of a call that came after `attempt_completion` in the same reply: the task ended
/// before it ran. (Ours: Cline waits for the person's answer to the completion instead.)
pub(crate) const NOT_RUN_AFTER_COMPLETION: &str =
    "This tool was not executed: attempt_completion, earlier in the same message, ended the task.";

/// The result of a call that came after an editor's `ask_followup_question` in the same reply:
/// the turn ended at the question, which the person's next prompt answers. (Ours: Cline waits
/// for the answer, then runs the rest.)
pub(crate) const NOT_RUN_AFTER_QUESTION: &str =
    "This tool was not executed: ask_followup_question, earlier in the same message, waited for the user's answer. Call it again if it is still needed.";

/// A reply the client cancelled as it streamed, as Cline's `abortStream` keeps it (`said`: its
/// text so far, perhaps none).
pub(crate) fn interrupted_by_user(said: &str) -> String {
    format!("{said}\n\n[Response interrupted by user]")
}

/// What the model hears when its reply ended inside a tool call: cut by the output limit
/// (`cut`), or ended by the model itself before the closing tag. (Ours; XML. The native
/// dialect's own is `native::prompt::truncated_tool`.)
pub fn truncated_tool(name: &str, cut: bool) -> String {
    if !cut {
        return format!(
            "[ERROR] Your previous response ended in the middle of the <{name}> tool call, before its closing </{name}> tag. That incomplete tool call was NOT executed, and nothing was changed.

Please retry with one complete tool call, every parameter and the tool's closing tag included."
        );
    }
    format!(
        "[ERROR] Your previous response was cut off because it reached the maximum output token limit, in the middle of the <{name}> tool call. That incomplete tool call was NOT executed, and nothing was changed.

Please continue in smaller steps: for example, use replace_in_file with a few targeted SEARCH/REPLACE blocks instead of rewriting a whole file with write_to_file, or create a large file in several smaller parts. Keep your reply short and end it with one complete tool call."
    )
}

/// What the model hears when the output limit cut its reply before any tool call. (Ours, with
/// Cline's XML format reminder; the native dialect's is `native::prompt::truncated_text`.)
pub fn truncated_text() -> String {
    format!(
        "[ERROR] Your previous response was cut off because it reached the maximum output token limit before it used a tool. Please keep your reply shorter and end it with one complete tool call.\n\n{TOOL_USE_REMINDER}"
    )
}

/// Cline's message when the person gives guidance at the mistake limit.
pub(crate) fn too_many_mistakes(feedback: &str) -> String {
    format!(
        "{GUIDANCE_START} The user has provided the following feedback to help guide you:\n<feedback>\n{feedback}\n</feedback>"
    )
}

/// How [`too_many_mistakes`] begins.
const GUIDANCE_START: &str = "You seem to be having trouble proceeding.";

/// Cline's message when a saved task is resumed; `ago` is e.g. "5 minutes ago" or "just now",
/// `was_recent` whether it was saved less than 30 s ago (`wasRecent`), `file_alert` whether
/// [`file_context_warning`] follows it (`hasPendingFileContextWarnings`).
pub(crate) fn task_resumption(ago: &str, cwd: &str, was_recent: bool, file_alert: bool) -> String {
    // Cline adds this when the task was saved less than 30 s ago and no file is known to have
    // changed since the conversation's end (a task-only checkpoint restore); here an
    // interrupted write never leaves a half-written file either (atomic saves, and a rename put
    // back on an interrupt).
    let recent = if was_recent && !file_alert {
        "\n\nIMPORTANT: If the last tool use was a replace_in_file or write_to_file that was interrupted, the file was reverted back to its original state before the interrupted edit, and you do NOT need to re-read the file as you already have its up-to-date contents."
    } else {
        ""
    };
    format!(
        "{RESUMPTION_START}{ago}. It may or may not be complete, so please reassess the task context. Be aware that the project state may have changed since then. The current working directory is now '{cwd}'. If the task has not been completed, retry the last step before interruption and proceed with completing the task.\n\nNote: If you previously attempted a tool use that the user did not provide a result for, you should assume the tool use was not successful and assess whether you should retry. If the last tool was a browser_action, the browser has been closed and you must launch a new browser if needed.{recent}"
    )
}

/// How [`task_resumption`] begins.
const RESUMPTION_START: &str = "[TASK RESUMPTION] This task was interrupted ";

/// Cline's words of the person given with a resume (`taskResumption`'s `userResponseMessage`,
/// act mode): a text block of its own after the notice.
pub(crate) fn new_instructions(words: &str) -> String {
    format!("{NEW_INSTRUCTIONS_START}\n<user_message>\n{words}\n</user_message>")
}

/// How [`new_instructions`] begins.
const NEW_INSTRUCTIONS_START: &str = "New instructions for task continuation:";

/// `text`, a message a resume left unsent, without its last resumption notice (the next resume
/// sends its own): what came before the notice (without an earlier `TaskResume` hook's context,
/// which comes afresh), then what the person said with that resume ([`new_instructions`], after
/// its slash command's instructions, with its mentions' files) and the file context alert that
/// followed it — each of those is said once only. What came after them (`UserPromptSubmit`'s
/// context, the environment details) is left out: it comes afresh.
pub(crate) fn without_resumption(text: &str) -> String {
    let Some(i) = last_resumption(text) else { return text.to_string() };
    let (words, alert) = said_after_the_notice(&text[i..]);
    let mut before = text[..i].trim();
    if before.starts_with("<hook_context source=\"TaskResume\"") {
        before = before.split_once("</hook_context>").map_or("", |(_, rest)| rest.trim_start());
    }
    let kept = [Some(before), words, alert];
    kept.into_iter().flatten().filter(|s| !s.is_empty()).collect::<Vec<_>>().join("\n\n")
}

/// What follows the resumption notice `text` begins with, as [`Task::resume`] puts it: the
/// person's words (`None` without them) and the file alert. Read from the end — the
/// environment details, then `UserPromptSubmit`'s context, then the alert are the message's
/// last parts — since the words' files (their mentions, piped text) may hold any of those
/// markers.
///
/// [`Task::resume`]: crate::run::task::Task::resume
fn said_after_the_notice(text: &str) -> (Option<&str>, Option<&str>) {
    const NOTICE_END: &str = "you must launch a new browser if needed.";
    const RECENT: &str = "\n\nIMPORTANT: If the last tool use was a replace_in_file or write_to_file that was interrupted, the file was reverted back to its original state before the interrupted edit, and you do NOT need to re-read the file as you already have its up-to-date contents.";
    let Some(end) = text.find(NOTICE_END).map(|e| e + NOTICE_END.len()) else { return (None, None) };
    let mut rest = text[end..].strip_prefix(RECENT).unwrap_or(&text[end..]).trim_end();
    // The last paragraph starting with `open` and ending with `close`, taken off `rest`.
    let mut last = |open: &str, close: &str| -> Option<&str> {
        if !rest.ends_with(close) {
            return None;
        }
        let at = rest.rfind(&format!("\n\n{open}"))?;
        let part = &rest[at + 2..];
        rest = rest[..at].trim_end();
        Some(part)
    };
    last("<environment_details>", "</environment_details>");
    last("<hook_context source=\"UserPromptSubmit\">", "</hook_context>");
    let alert = last(ALERT_START, ALERT_END);
    let words =
        rest.strip_prefix("\n\n").filter(|w| w.contains(&format!("{NEW_INSTRUCTIONS_START}\n<user_message>\n")));
    (words, alert)
}

/// Where the last resumption notice in `text` begins: one this agent wrote, at the start of the
/// text or of a paragraph — not those words inside a file a tool read.
pub(crate) fn last_resumption(text: &str) -> Option<usize> {
    text.match_indices(RESUMPTION_START)
        .map(|(i, _)| i)
        .filter(|&i| i == 0 || text[..i].ends_with("\n\n"))
        .filter(|&i| text[i..].contains("you must launch a new browser if needed."))
        .last()
}

/// Cline's `fileContextWarning`: the files changed since the conversation's end (a task-only
/// checkpoint restore), each made absolute against `root` as Cline's `path.resolve` does.
pub(crate) fn file_context_warning(files: &[String], root: &std::path::Path) -> String {
    let (verb, these, they) = match files.len() {
        1 => ("file has", "this file", "it"),
        _ => ("files have", "these files", "they"),
    };
    let list: Vec<String> = files.iter().map(|f| format!(" {}", root.join(f).display())).collect();
    format!(
        "{ALERT_START}{} {verb} been externally modified since your last interaction. Your cached understanding of {these} is now stale and unreliable. Before making ANY modifications to {these}, you must execute read_file to obtain the current state, as {they} may contain completely different content than what you expect:\n{}\n{ALERT_END}",
        files.len(),
        list.join("\n")
    )
}

/// How [`file_context_warning`] begins.
const ALERT_START: &str = "<explicit_instructions>\nCRITICAL FILE STATE ALERT: ";

/// How [`file_context_warning`] ends.
const ALERT_END: &str = "Failure to re-read before editing will result in replace_in_file edit errors, requiring subsequent attempts and wasting tokens. You DO NOT need to re-read these files after subsequent edits, unless instructed to do so.\n</explicit_instructions>";

/// The [`file_context_warning`] a paragraph of `text` is, if one is.
pub(crate) fn file_context_warning_in(text: &str) -> Option<&str> {
    let start = text.match_indices(ALERT_START).map(|(i, _)| i).find(|&i| i == 0 || text[..i].ends_with("\n\n"))?;
    let end = start + text[start..].find(ALERT_END)? + ALERT_END.len();
    Some(&text[start..end])
}

/// The files a [`file_context_warning`] names, as it names them (absolute).
pub(crate) fn files_of_file_context_warning(alert: &str) -> Vec<String> {
    let list = alert.split_once("than what you expect:\n").map_or("", |(_, rest)| rest);
    let list = list.strip_suffix(ALERT_END).unwrap_or(list);
    list.lines().filter_map(|l| l.strip_prefix(' ')).map(str::to_string).collect()
}

/// Cline's "ago" text for the resumption message.
pub(crate) fn ago(seconds: u64) -> String {
    let (minutes, hours, days) = (seconds / 60, seconds / 3600, seconds / 86_400);
    let plural = |n: u64, unit: &str| format!("{n} {unit}{} ago", if n > 1 { "s" } else { "" });
    if days > 0 {
        plural(days, "day")
    } else if hours > 0 {
        plural(hours, "hour")
    } else if minutes > 0 {
        plural(minutes, "minute")
    } else {
        "just now".to_string()
    }
}

/// A signal's name as Node reports it in Cline's `Command terminated by signal …` text (its
/// `signo_string` on Linux: SIGIO for 29, SIGABRT for 6); a real-time signal by its number.
pub(crate) fn signal_name(sig: i32) -> String {
    const NAMES: [&str; 31] = [
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ];
    match usize::try_from(sig).ok().and_then(|n| n.checked_sub(1)).and_then(|i| NAMES.get(i)) {
        Some(name) => name.to_string(),
        None => sig.to_string(),
    }
}

/// What a tool says when `.clineignore` cannot be applied (`why`), so that it blocks every file.
pub(crate) fn cline_ignore_unusable(path: &str, why: &str) -> String {
    format!("Access to {path} is blocked: {why}, so which files it blocks cannot be told, and every file of the workspace is blocked until it is fixed. You must try to continue in the task without using files, or ask the user to fix the .clineignore file.")
}

/// The lock Cline puts before an ignored entry in a file listing (`LOCK_TEXT_SYMBOL`).
pub(crate) const LOCK: &str = "\u{1F512}";

/// `formatResponse.clineIgnoreError`: what a tool says when `.clineignore` blocks a path.
pub(crate) fn cline_ignore_error(path: &str) -> String {
    format!("Access to {path} is blocked by the .clineignore file settings. You must try to continue in the task without using this file, or ask the user to update the .clineignore file.")
}

/// `formatResponse.clineIgnoreInstructions`: the prompt's `.clineignore` section.
pub(crate) fn cline_ignore_instructions(content: &str) -> String {
    format!("# .clineignore\n\n(The following is provided by a root-level .clineignore file where the user has specified files and directories that should not be accessed. When using list_files, you'll notice a {LOCK} next to files that are blocked. Attempting to access the file's contents e.g. through read_file will result in an error.)\n\n{content}\n.clineignore")
}

#[cfg(test)]
mod missing_content_tests {
    /// Cline's text, its warning only past half of the window.
    #[test]
    fn a_full_context_window_is_named_past_half_of_it() {
        let warning = "\n\nWarning: Context window is 51% full. The remaining output budget may be insufficient for large file writes. You MUST use a strategy that produces smaller outputs.\n\n";
        assert!(super::write_to_file_missing_content("a.rs", 1, Some(51)).contains(warning));
        for quiet in [Some(50), Some(0), None] {
            assert!(!super::write_to_file_missing_content("a.rs", 3, quiet).contains("Warning: Context window"));
        }
    }
}

#[cfg(test)]
mod signal_tests {
    /// Every signal Node names, by the number this system gives it (`kill -FPE` is SIGFPE).
    #[test]
    fn signals_are_named_as_node_names_them() {
        let known = [
            (libc::SIGHUP, "SIGHUP"),
            (libc::SIGILL, "SIGILL"),
            (libc::SIGTRAP, "SIGTRAP"),
            (libc::SIGABRT, "SIGABRT"),
            (libc::SIGBUS, "SIGBUS"),
            (libc::SIGFPE, "SIGFPE"),
            (libc::SIGKILL, "SIGKILL"),
            (libc::SIGUSR1, "SIGUSR1"),
            (libc::SIGSEGV, "SIGSEGV"),
            (libc::SIGUSR2, "SIGUSR2"),
            (libc::SIGPIPE, "SIGPIPE"),
            (libc::SIGTERM, "SIGTERM"),
            (libc::SIGSTKFLT, "SIGSTKFLT"),
            (libc::SIGXCPU, "SIGXCPU"),
            (libc::SIGXFSZ, "SIGXFSZ"),
            (libc::SIGIO, "SIGIO"),
            (libc::SIGPWR, "SIGPWR"),
            (libc::SIGSYS, "SIGSYS"),
        ];
        for (n, name) in known {
            assert_eq!(super::signal_name(n), name);
        }
        assert_eq!(super::signal_name(libc::SIGRTMIN() + 1), (libc::SIGRTMIN() + 1).to_string());
        assert_eq!((super::signal_name(0), super::signal_name(-3)), ("0".to_string(), "-3".to_string()));
    }
}

#[cfg(test)]
mod truncation_tests {
    #[test]
    fn an_unclosed_tool_blames_the_token_limit_only_when_it_was_hit() {
        assert!(super::truncated_tool("write_to_file", true).contains("maximum output token limit"));
        let t = super::truncated_tool("write_to_file", false);
        assert!(!t.contains("token limit"), "{t}");
        assert!(t.contains("</write_to_file>") && t.contains("NOT executed"), "{t}");
    }
}

#[cfg(test)]
mod follow_up_tests {
    use super::*;

    /// A stop that left nothing unsent (a reply kept with its calls, a cancelled turn) is not a
    /// completion: the next prompt is the person's feedback, not on an `attempt_completion`.
    #[test]
    fn a_follow_up_is_feedback_on_a_completion_only_after_one() {
        // Cline's AttemptCompletionHandler: its blocks `[attempt_completion] Result: Done`, the
        // feedback note and the feedback, each a block of its own (here after a blank line).
        assert_eq!(
            follow_up("more", None, ""),
            "[attempt_completion] Result: Done\n\nThe user has provided feedback on the results. Consider their input to continue the task, and then attempt completion again.\n\n<feedback>\nmore\n</feedback>"
        );
        assert_eq!(follow_up("more", Some(""), ""), user_feedback("more"));
        let env = "<environment_details>\nx\n</environment_details>";
        assert_eq!(follow_up("more", Some(env), ""), user_feedback("more"));
        assert_eq!(
            follow_up("more", Some(&format!("results\n\n{env}")), ""),
            format!("results\n\n{}", user_feedback("more"))
        );
    }

    /// A slash command's instructions open the block holding the `<feedback>`, as Cline's
    /// `parseSlashCommands` writes them into it: after the completion's result and note (they
    /// went before `[attempt_completion] Result:`), after what was left unsent.
    #[test]
    fn a_slash_commands_instructions_open_the_feedbacks_block() {
        let ins = "<explicit_instructions type=\"w.md\">\nDo w.\n</explicit_instructions>\n";
        assert_eq!(
            follow_up("more", None, ins),
            format!("[attempt_completion] Result: Done\n\nThe user has provided feedback on the results. Consider their input to continue the task, and then attempt completion again.\n\n{ins}<feedback>\nmore\n</feedback>")
        );
        assert_eq!(follow_up("more", Some("results"), ins), format!("results\n\n{ins}{}", user_feedback("more")));
        assert_eq!(
            guidance_after("more", Some("results"), ins),
            format!("results\n\n{ins}{}", too_many_mistakes("more"))
        );
    }
}

#[cfg(test)]
mod file_context_warning_tests {
    use super::*;

    /// Cline's words, singular and plural, each path made absolute and set off by a space.
    #[test]
    fn the_alert_names_each_file_by_its_absolute_path() {
        let root = std::path::Path::new("/ws");
        assert_eq!(
            file_context_warning(&["a.txt".into()], root),
            "<explicit_instructions>\nCRITICAL FILE STATE ALERT: 1 file has been externally modified since your last interaction. Your cached understanding of this file is now stale and unreliable. Before making ANY modifications to this file, you must execute read_file to obtain the current state, as it may contain completely different content than what you expect:\n /ws/a.txt\nFailure to re-read before editing will result in replace_in_file edit errors, requiring subsequent attempts and wasting tokens. You DO NOT need to re-read these files after subsequent edits, unless instructed to do so.\n</explicit_instructions>"
        );
        let two = file_context_warning(&["src/b.rs".into(), "/elsewhere/c".into()], root);
        assert!(two.contains(": 2 files have been externally modified since your last interaction. Your cached understanding of these files is now stale and unreliable. Before making ANY modifications to these files, you must execute read_file to obtain the current state, as they may contain"), "{two}");
        assert!(two.contains("expect:\n /ws/src/b.rs\n /elsewhere/c\nFailure"), "{two}");
        let text =
            format!("result\n\n{}\n\n{two}\n\n<environment_details>", task_resumption("just now", "/ws", true, true));
        assert_eq!(file_context_warning_in(&text), Some(two.as_str()));
        assert_eq!(files_of_file_context_warning(&two), ["/ws/src/b.rs", "/elsewhere/c"]);
        assert_eq!(file_context_warning_in(&format!("a file: {two}")), None, "not a paragraph of its own");
    }

    #[test]
    fn the_alert_leaves_out_the_recent_notes_reassurance() {
        let reassurance = "IMPORTANT: If the last tool use was a replace_in_file";
        assert!(task_resumption("just now", "/ws", true, false).contains(reassurance));
        assert!(!task_resumption("just now", "/ws", true, true).contains(reassurance));
        assert!(!task_resumption("1 day ago", "/ws", false, false).contains(reassurance));
    }
}

#[cfg(test)]
mod resumption_tests {
    use super::*;

    /// What a resume left unsent loses its notice, keeps the words and the alert said with it
    /// (once each), and drops what came after them (a hook's context, the environment details).
    #[test]
    fn an_unsent_resume_keeps_the_words_and_alert_it_carried() {
        let notice = task_resumption("just now", "/ws", true, false);
        let words = format!(
            "<explicit_instructions type=\"w\">\nx\n</explicit_instructions>\n{}\n\n<file_content path=\"a\">\nA\n</file_content>",
            new_instructions("go on")
        );
        let alert = file_context_warning(&["a".into()], std::path::Path::new("/ws"));
        let after = "<hook_context source=\"UserPromptSubmit\">\nh\n</hook_context>\n\n<environment_details>\nE\n</environment_details>";
        let unsent = format!("[r] Result:\nok\n\n{notice}\n\n{words}\n\n{alert}\n\n{after}");
        assert_eq!(without_resumption(&unsent), format!("[r] Result:\nok\n\n{words}\n\n{alert}"));
        assert_eq!(without_resumption(&format!("{notice}\n\n{words}\n\n{after}")), words);
        assert_eq!(without_resumption(&format!("[r] Result:\nok\n\n{notice}\n\n{after}")), "[r] Result:\nok");
        // Words a file holds after the notice are not the person's.
        let read = format!("{notice}\n\n<environment_details>\n{}\n</environment_details>", new_instructions("no"));
        assert_eq!(without_resumption(&read), "");
        assert!(starts_a_part(&new_instructions("go on")));
        // A mentioned file may hold any of the markers: the words are read from the end.
        let file = "<file_content path=\"log.txt\">\nx\n\n<environment_details>\ny\n\n<hook_context source=\"UserPromptSubmit\">\n</file_content>";
        let words = format!("{}\n\n{file}", new_instructions("see @/log.txt"));
        let hook = "<hook_context source=\"TaskResume\" type=\"general\">\nT\n</hook_context>";
        let unsent = format!("{hook}\n\n[r] Result:\nok\n\n{notice}\n\n{words}\n\n{alert}\n\n{after}");
        // (An earlier TaskResume context goes too: the next resume adds its own.)
        assert_eq!(without_resumption(&unsent), format!("[r] Result:\nok\n\n{words}\n\n{alert}"));
    }
}
