//! The eight tools, with Cline's names and parameters, and the approval policy around them.
//!
//! A tool gets a [`Call`] (the parsed tool block) and a `Ctx` (workspace, terminal, flags) and
//! returns an `Outcome`: the text that goes back to the model and whether it was a success.
//!
//! Owns: the tools and what they need — path confinement ([`paths`]), `.clineignore` (`clineignore`), file helpers (`fsx`), the
//! SEARCH/REPLACE engine ([`diff`]), how an edit is saved (`doc_form`: line ending, BOM),
//! ripgrep's walker (`walk`), the `@` mentions of a person's words (`mentions`: Cline's
//! `parseMentions`), git run read-only in the person's repository (`repo_git`), the approval preview
//! (`preview`), the patch of a person's edit (`patch`), their editor (`editor`), and what the
//! tools remember across calls (`Memory`: loop detection, `repeat`; the file-read cache; the files watched for changes, `watched`). The
//! texts they answer with are Cline's, from [`crate::run::prompt`]. May use: [`crate::run::ui`]
//! (prompts, tool lines, interrupts), [`crate::run::session::events`] (approval events),
//! `crate::run::prompt`, `crate::run::clock`, `crate::run::sandbox` (what a command may
//! reach), `crate::run::mcp` (the servers behind the MCP tools), `crate::run::trusted_file`
//! (reading `.clineignore`), `crate::run::spawn` (commands, the editor), `crate::run::built`
//! (what a build left out), `crate::run::texts` (the tools' declarations).

pub(crate) mod apply_patch;
pub(crate) mod clineignore;
pub mod diff;
pub(crate) mod fsx;
pub(crate) mod mentions;
pub(crate) mod patch;
pub mod paths;
pub(crate) mod preview;

pub(crate) mod repeat;
pub(crate) mod repo_git;

pub(crate) mod ask;
mod doc_form;
#[cfg(feature = "documents")]
mod documents;
mod editor;
mod exec;
pub(crate) mod image;
mod image_size;
mod list;
pub(crate) mod mcp;
mod notebook;
mod output;
mod permissions;
pub mod read;
pub(crate) mod registry;
mod search;
pub(crate) mod skill;
pub mod v4a;
mod walk;
pub(crate) mod watched;
mod write;

use std::time::Duration;

use crate::run::prompt;
use crate::run::session::events::{By, Events};
use crate::run::tools::paths::{Resolved, Workspace};
use crate::run::tools::registry::MissingText;
use crate::run::ui::term::{Approval, Term};

/// A complete tool block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// Tool name.
    pub name: String,
    /// (name, value, untrimmed value). Value: as Cline's handlers read it — trimmed in the XML
    /// dialect (its parser trims), a native call's JSON string as it is. Untrimmed: the same
    /// natively; in the XML dialect the text between the tags, but for `content` without the one
    /// line break at each end that the tags' layout adds (`content_of`).
    pub params: Vec<(String, String, String)>,
}

impl Call {
    /// A complete XML tool block as the tools read it.
    pub(crate) fn from_xml(t: &parser_core::ToolUse<'_>) -> Call {
        let untrimmed = |p: &parser_core::Param<'_>| match p.name {
            "content" => content_of(p.raw).to_string(),
            _ => p.raw.to_string(),
        };
        Call::read_as_cline(
            t.name,
            t.params().iter().map(|p| (p.name.to_string(), p.value.to_string(), untrimmed(&p))).collect(),
        )
    }

    /// A native call of `name` from the input history keeps (its JSON object, as sent), read
    /// as it ran.
    pub(crate) fn from_input(name: &str, input: &str) -> Call {
        let input: serde_json::Map<String, serde_json::Value> = serde_json::from_str(input).unwrap_or_default();
        let value = |v: serde_json::Value| match v {
            serde_json::Value::String(s) => s,
            other => other.to_string(),
        };
        Call::read_as_cline(
            name,
            input.into_iter().map(|(k, v)| (k, value(v))).map(|(k, v)| (k, v.clone(), v)).collect(),
        )
    }

    /// A call of `name` with `params`, read as Cline's tool executor and handlers read it, in
    /// either dialect: `write_to_file` and `replace_in_file` take `path || absolutePath` (the
    /// native schemas name it `absolutePath`); an `attempt_completion` without a `result` but
    /// with a `response` (`canonicalizeAttemptCompletionParams`) has that as its result.
    pub(crate) fn read_as_cline(name: &str, mut params: Vec<(String, String, String)>) -> Call {
        let given =
            |params: &[(String, String, String)], key: &str| params.iter().any(|p| p.0 == key && !p.1.is_empty());
        let alias = match name {
            "write_to_file" | "replace_in_file" => Some(("absolutePath", "path")),
            "attempt_completion" => Some(("response", "result")),
            _ => None,
        };
        // Added, not renamed: hooks get the parameters as sent, as Cline's do (`block.params`).
        if let Some((from, to)) = alias.filter(|(from, to)| !given(&params, to) && given(&params, from)) {
            let value = params.iter().find(|p| p.0 == from).cloned().expect("given");
            params.retain(|p| p.0 != to);
            params.push((to.to_string(), value.1, value.2));
        }
        Call { name: name.to_string(), params }
    }

    /// A parameter's value (trimmed in the XML dialect); `None` when absent or empty (as Cline
    /// treats it).
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|p| p.0 == name).map(|p| p.1.as_str()).filter(|v| !v.is_empty())
    }

    /// A parameter as the call gave it, empty or not (Cline's `block.params.NAME`); `None`
    /// when the call left it out.
    pub(crate) fn given(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|p| p.0 == name).map(|p| p.1.as_str())
    }

    /// (name, value) of every parameter, as Cline's handlers read them (to hooks).
    pub(crate) fn cline_params(&self) -> Vec<(String, String)> {
        self.params.iter().map(|p| (p.0.clone(), p.1.clone())).collect()
    }

    /// (name, value) of every parameter as the `--json` events of a complete call show them:
    /// as the tools read them, `content` untrimmed in both dialects (as `write_to_file`
    /// receives it), so that the event says what will be written.
    pub(crate) fn shown_params(&self) -> Vec<(String, String)> {
        let value = |p: &(String, String, String)| if p.0 == "content" { &p.2 } else { &p.1 }.to_string();
        self.params.iter().map(|p| (p.0.clone(), value(p))).collect()
    }

    /// A parameter's untrimmed value (see [`Call::params`]).
    pub(crate) fn untrimmed_param(&self, name: &str) -> Option<&str> {
        self.params.iter().find(|p| p.0 == name).map(|p| p.2.as_str())
    }

    /// Cline's description of the call, used before `Result:` (the tool's declaration says it).
    pub(crate) fn description(&self) -> String {
        registry::find(&self.name).map_or_else(|| registry::describe_unknown(self), |t| (t.describe)(self))
    }
}

/// What came of a tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// It worked; the text is the result for the model. Resets the mistake count.
    Success(String),
    /// It worked, as a repeat of an earlier answer: Cline's read of a file it already read
    /// (`[File already read]`, `[DUPLICATE READ]`) returns before its handler resets the
    /// mistake count, so the count stays as it is.
    Repeated(String),
    /// It failed; `mistake` says whether this counts toward `--max-mistakes`.
    Failure {
        /// The result for the model (usually via [`tool_error`]).
        text: String,
        /// Whether this is the model's mistake.
        mistake: bool,
    },
    /// The person said no: Cline's denial text, and the person's words if they gave any.
    Denied {
        /// The result for the model (Cline's `toolDenied`, or a file tool's own wording).
        text: String,
        /// What the person said, framed by [`feedback_paragraph`] as Cline does.
        feedback: Option<String>,
    },
    /// `attempt_completion`: the task is done with this result.
    Complete(String),
    /// `ask_followup_question` where the person answers with their next prompt (an editor):
    /// the turn ends at this question, which the answer then answers.
    Asked(String),
}

/// Everything a tool may use.
pub(crate) struct Ctx<'a> {
    /// The workspace root.
    pub ws: &'a Workspace,
    /// The terminal.
    pub term: &'a mut Term,
    /// Approve everything inside the workspace; never wait for a person.
    pub yolo: bool,
    /// Default timeout for `execute_command`.
    pub command_timeout: Duration,
    /// `--json` events.
    pub events: &'a mut Events,
    /// The id of this call (for events).
    pub call_id: &'a str,
    /// The tool's name (for events).
    pub tool: &'a str,
    /// Whether an approval decision was already reported for this call.
    pub decided: bool,
    /// The model's name: Cline repairs some models' HTML-escaped file content (not Claude's).
    pub model: &'a str,
    /// What the tools remember across calls of this task.
    pub memory: &'a mut Memory,
    /// The run's MCP servers (`use_mcp_tool`, `access_mcp_resource`).
    pub mcp: &'a mut crate::run::mcp::Hub,
    /// The run's prompt variant: which tools it offers.
    pub family: crate::run::prompt::system::Family,
    /// The model takes images (Cline's `supportsImages`): `read_file` sends an image file's
    /// image rather than refusing it.
    pub images: bool,
    /// The bytes (in base64) of the images the conversation holds: its messages' and the next
    /// one's, not counting those read since it was last asked (`memory.images`). Counted when
    /// asked: only `read_file` needs it.
    pub images_held: &'a dyn Fn() -> usize,
    /// The skills as they are now: `use_skill` reads them when it runs, as Cline's handler
    /// does (one written earlier in the same reply included).
    pub skills_now: &'a mut dyn FnMut(&mut Term) -> Vec<skill::Skill>,
}

/// What the tools remember across the calls of one task.
#[derive(Debug, Default, Clone)]
pub(crate) struct Memory {
    /// Cline's loop detection.
    pub repeats: repeat::Repeats,
    /// Cline's `fileReadCache`.
    pub reads: read::ReadCache,
    /// The files read or edited, for `# Recently Modified Files` (Cline's `FileContextTracker`).
    pub watched: watched::Watched,
    /// The skills offered with the latest request (`use_skill`).
    pub skills: Vec<skill::Skill>,
    /// The images read since the last user message, for the next one (the image blocks
    /// Cline's `read_file` pushes to its `userMessageContent`).
    pub images: Vec<image::Image>,
    /// What walks left out because of the bound on ignore files, already told the person.
    pub walk_warned: Vec<String>,
    /// The log files of long command output this task wrote (canonical): the results point
    /// the model to them, so reading one is allowed outside the workspace, also under `--yolo`.
    pub logs: Vec<std::path::PathBuf>,
}

/// Says what the bound on ignore files left out of a walk ([`walk`]): each warning once per
/// task on the terminal, and every time to the model, as notes after the result it returns (a
/// listing or search never comes out partial without saying so). `""` when nothing was.
pub(crate) fn say_skipped(term: &mut Term, memory: &mut Memory, skipped: &walk::Skipped) -> String {
    let warnings = skipped.warnings();
    for w in &warnings {
        if !memory.walk_warned.contains(w) {
            term.warn(w);
            memory.walk_warned.push(w.clone());
        }
    }
    warnings.iter().map(|w| format!("\n\nNote: {w}")).collect()
}

impl Ctx<'_> {
    /// Reports who decided whether the call runs (once per call).
    pub(crate) fn decide(&mut self, approved: bool, by: By, feedback: Option<&str>) {
        if !self.decided {
            self.decided = true;
            self.events.approval(self.call_id, self.tool, approved, by, feedback);
        }
    }
}

/// The first required parameter missing from the call, if any.
pub(crate) fn missing_param(call: &Call) -> Option<&'static str> {
    let decl = registry::find(&call.name)?;
    decl.required.iter().copied().find(|p| match *p {
        // Empty content is a legitimate (empty) file.
        "content" => call.untrimmed_param(p).is_none(),
        // Cline's assertRequiredParams: a path of whitespace is missing (a native value is
        // not trimmed), for the tools that check it so.
        "path" if matches!(call.name.as_str(), "read_file" | "list_files" | "search_files") => {
            call.param(p).is_none_or(|v| v4a::js_trim(v).is_empty())
        }
        _ => call.param(p).is_none(),
    })
}

/// Runs a tool whose required parameters are present: its declaration's handler.
pub(crate) fn run(call: &Call, ctx: &mut Ctx<'_>) -> Outcome {
    if let Some(decl) = registry::find(&call.name) {
        return (decl.run)(call, ctx);
    }
    let names: Vec<_> = registry::offered(ctx.family).iter().map(|t| t.name).collect();
    ctx.term.outcome(false, &format!("{} is not available", call.name));
    Outcome::Failure {
        text: tool_error(&format!(
            "The tool '{}' is not available in this environment. Available tools: {}.",
            call.name,
            names.join(", ")
        )),
        mistake: true,
    }
}

pub(crate) use crate::run::prompt::tool_error;

/// Whether `call` meets a refusal its tool makes before asking or doing anything, which Cline's
/// handlers make before they run the `PreToolUse` hook: a path `.clineignore` blocks (read,
/// write, edit and list), a command `CLINE_COMMAND_PERMISSIONS` or `.clineignore` refuses, a
/// patch with incomplete sentinels or updating or deleting a `.clineignore`d file, an MCP call
/// whose `arguments` are not a JSON object (`UseMcpToolHandler`). Such a call
/// reaches no `PreToolUse` hook; the tool then refuses it as usual.
pub(crate) fn refused_before_hooks(call: &Call, root: &std::path::Path, model: &str) -> bool {
    if call.name == "apply_patch" {
        return apply_patch::refused_before_hooks(call.untrimmed_param("input").unwrap_or_default(), root);
    }
    if call.name == "execute_command" {
        let command = exec::gemini_command_fixes(call.param("command").unwrap_or_default(), model);
        return exec::refusal(&command, root).is_some();
    }
    if call.name == "use_mcp_tool" {
        return mcp::invalid_arguments(call);
    }
    let path = call.param("path").unwrap_or_default();
    clineignore::refusal(root, &call.name, path).is_some()
}

/// The result of a required parameter's absence, in Cline's words for that tool; `failures`
/// counts this mistake (Cline's consecutive-mistake count after it).
pub(crate) fn missing_param_result(call: &Call, param: &str, failures: registry::Failures) -> String {
    let missing: MissingText = registry::find(&call.name).map_or(registry::generic_missing, |t| t.missing);
    tool_error(&missing(call, param, failures))
}

/// The user message part for a tool's result, framed as Cline does: `[description] Result:` and
/// the text (the person's feedback, pushed while asking, goes before it: [`feedback_paragraph`]).
pub(crate) fn result_message(call: &Call, text: &str) -> String {
    let text = if text.is_empty() { "(tool did not return anything)" } else { text };
    format!("{} Result:\n{text}", call.description())
}

/// The person's feedback on a call, said before its result: Cline's `<feedback>` block, what its
/// words' mentions stand for right after `</feedback>`, and the blank line that ends the paragraph.
pub(crate) fn feedback_paragraph(words: &str, blocks: &str) -> String {
    format!("{}{blocks}\n\n", prompt::user_feedback(words))
}

/// How much a tool touching a path needs approval.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    /// Reading.
    Read,
    /// Changing files or running things.
    Write,
}

/// Resolves a path and applies the approval policy: reads inside the workspace run; writes
/// inside ask (unless `--yolo`); anything outside asks, and is refused under `--yolo`.
/// `preview` is shown before asking.
pub(crate) fn check_path(
    ctx: &mut Ctx<'_>,
    path: &str,
    access: Access,
    what: &str,
    preview: Option<&str>,
) -> Result<Resolved, Outcome> {
    refuse_ignored(ctx, path)?;
    let r = ctx.ws.resolve(path);
    if let Some(e) = &r.error {
        ctx.decide(false, By::Policy, None);
        ctx.term.outcome(false, e);
        return Err(Outcome::Failure { text: tool_error(e), mistake: false });
    }
    if !r.inside {
        let canonical = || std::fs::canonicalize(&r.abs).unwrap_or_else(|_| r.abs.clone());
        if access == Access::Read && !ctx.memory.logs.is_empty() && ctx.memory.logs.contains(&canonical()) {
            // A command's log file this task wrote, which its result names (`Full output saved
            // to:`): ours, not the person's files.
            return Ok(r);
        }
        if ctx.yolo {
            ctx.decide(false, By::Policy, None);
            let msg = format!(
                "Access to '{}' was refused: it resolves outside the workspace ({}). --yolo never approves paths outside the workspace.",
                r.abs.display(),
                ctx.ws.root().display()
            );
            ctx.term.outcome(false, "refused: outside the workspace");
            return Err(Outcome::Failure { text: tool_error(&msg), mistake: false });
        }
        if let Some(p) = preview {
            ctx.term.block(p);
        }
        let q = format!("{what}{OUTSIDE_THE_WORKSPACE}{}", r.abs.display());
        ask(ctx, &q)?;
        return Ok(r);
    }
    if access == Access::Write && !ctx.yolo {
        if let Some(p) = preview {
            ctx.term.block(p);
        }
        ask(ctx, what)?;
    }
    let by = if access == Access::Write { By::Yolo } else { By::Auto };
    ctx.decide(true, by, None);
    Ok(r)
}

/// What an approval's question says of a path outside the workspace, before the path (an
/// editor's "always" answer never covers such a question beyond its path: `acp::approvals`).
pub(crate) const OUTSIDE_THE_WORKSPACE: &str = " — OUTSIDE the workspace: ";

/// Refuses a path `.clineignore` blocks (Cline's `validateAccess`), before anything reads it.
pub(crate) fn refuse_ignored(ctx: &mut Ctx<'_>, path: &str) -> Result<(), Outcome> {
    match crate::run::tools::clineignore::refusal(ctx.ws.root(), ctx.tool, path) {
        None => Ok(()),
        Some(blocked) => {
            ctx.decide(false, By::Policy, None);
            ctx.term.outcome(false, &blocked.outcome);
            Err(Outcome::Failure { text: tool_error(&blocked.text), mistake: false })
        }
    }
}

/// Asks the person; `Err(Denied)` with Cline's wording when they say no.
pub(crate) fn ask(ctx: &mut Ctx<'_>, what: &str) -> Result<(), Outcome> {
    // (execute_command tells of its ask itself, with the command.)
    if ctx.tool != "execute_command" {
        ctx.term.attention(ask_type(ctx.tool), what);
    }
    match ctx.term.approve(Some(ctx.call_id), what) {
        Approval::Yes | Approval::Edit => {
            ctx.decide(true, By::User, None);
            Ok(())
        }
        Approval::No(feedback) => Err(denied(ctx, feedback)),
        Approval::Unanswered => Err(unanswered(ctx)),
    }
}

/// The kind of Cline's ask for approving `tool` (its `ClineAsk`).
fn ask_type(tool: &str) -> &'static str {
    match tool {
        "execute_command" => "command",
        "use_mcp_tool" | "access_mcp_resource" => "use_mcp_server",
        _ => "tool",
    }
}

/// A file edit's approval: as [`check_path`] with [`Access::Write`], and inside the workspace
/// without `--yolo` the person may edit the proposal first (`Ok((_, true))`).
pub(crate) fn check_edit(
    ctx: &mut Ctx<'_>,
    path: &str,
    what: &str,
    preview: Option<&str>,
) -> Result<(Resolved, bool), Outcome> {
    let r = ctx.ws.resolve(path);
    if r.error.is_some() || !r.inside || ctx.yolo {
        return check_path(ctx, path, Access::Write, what, preview).map(|r| (r, false));
    }
    if let Some(p) = preview {
        // This prompt offers `e`, which shows what a cut preview left out.
        ctx.term.block(&preview::with_edit_hint(p));
    }
    ctx.term.attention(ask_type(ctx.tool), what);
    match ctx.term.approve_edit(ctx.call_id, what) {
        Approval::Yes => {
            ctx.decide(true, By::User, None);
            Ok((r, false))
        }
        Approval::Edit => {
            ctx.decide(true, By::User, None);
            Ok((r, true))
        }
        Approval::No(feedback) => Err(denied(ctx, feedback)),
        Approval::Unanswered => Err(unanswered(ctx)),
    }
}

/// Nobody could answer the approval (no terminal): the call does not run, and the loop stops
/// before anything goes back to the model (`Term::take_unanswered`); no approval is reported.
fn unanswered(ctx: &mut Ctx<'_>) -> Outcome {
    ctx.decided = true;
    Outcome::Denied { text: prompt::TOOL_DENIED.to_string(), feedback: None }
}

/// Cline's denial, with the person's words if any.
fn denied(ctx: &mut Ctx<'_>, feedback: Option<String>) -> Outcome {
    ctx.decide(false, By::User, feedback.as_deref());
    ctx.term.outcome(false, if feedback.is_some() { "denied, with feedback" } else { "denied" });
    Outcome::Denied { text: prompt::TOOL_DENIED.to_string(), feedback }
}

/// How many calls the results in `text` (an XML dialect's user message) say were not run:
/// each skipped after a refusal or refused as a further tool of its reply.
pub(crate) fn not_run_in(text: &str) -> usize {
    let already = prompt::tool_already_used("");
    let already = &already["Tool [".len()..];
    text.matches(prompt::SKIPPED_AFTER_REJECTION).count() + text.matches(already).count()
}

/// Whether a native call whose recorded answer is `answer` was put to the tools: not one
/// answered with Cline's `toolAlreadyUsed`, nor one skipped after a refusal.
pub(crate) fn was_run(answer: &str) -> bool {
    // toolAlreadyUsed's text after the tool's name: "] was not executed because …".
    let already = prompt::tool_already_used("");
    let already = &already["Tool [".len()..];
    !(answer.starts_with(prompt::SKIPPED_AFTER_REJECTION) || answer.ends_with(already))
}

#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    pub(crate) fn call(name: &str, params: &[(&str, &str)]) -> Call {
        Call {
            name: name.to_string(),
            params: params.iter().map(|(n, v)| (n.to_string(), v.trim().to_string(), v.to_string())).collect(),
        }
    }

    pub(crate) fn with_ctx<R>(ws: &Workspace, f: impl FnOnce(&mut Ctx<'_>) -> R) -> R {
        with_ctx_on(ws, Term::new(), f)
    }

    /// As [`with_ctx`], the tools talking to `term`.
    pub(crate) fn with_ctx_on<R>(ws: &Workspace, mut term: Term, f: impl FnOnce(&mut Ctx<'_>) -> R) -> R {
        let mut memory = Memory::default();
        let mut events = Events::off();
        let mut hub = crate::run::mcp::Hub::none();
        let mut ctx = Ctx {
            ws,
            term: &mut term,
            yolo: true,
            command_timeout: Duration::from_secs(30),
            events: &mut events,
            call_id: "call_1",
            tool: "test",
            decided: false,
            model: "test-model",
            memory: &mut memory,
            mcp: &mut hub,
            family: crate::run::prompt::system::Family::NextGen,
            images: true,
            images_held: &|| 0,
            skills_now: &mut |_| Vec::new(),
        };
        f(&mut ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::*;
    use super::*;

    #[test]
    fn descriptions_follow_cline() {
        assert_eq!(call("read_file", &[("path", "a.rs")]).description(), "[read_file for 'a.rs']");
        assert_eq!(call("execute_command", &[("command", "ls")]).description(), "[execute_command for 'ls']");
        assert_eq!(
            call("search_files", &[("regex", "x"), ("file_pattern", "*.rs")]).description(),
            "[search_files for 'x' in '*.rs']"
        );
        assert_eq!(call("attempt_completion", &[]).description(), "[attempt_completion]");
        // A parameter left out is JavaScript's `undefined` in Cline's template strings; an
        // empty path is an edit's `path || absolutePath`, so `undefined` too.
        assert_eq!(call("read_file", &[]).description(), "[read_file for 'undefined']");
        assert_eq!(call("read_file", &[("path", "")]).description(), "[read_file for '']");
        assert_eq!(call("write_to_file", &[("path", "")]).description(), "[write_to_file for 'undefined']");
        assert_eq!(call("search_files", &[("file_pattern", "")]).description(), "[search_files for 'undefined']");
        assert_eq!(call("use_mcp_tool", &[]).description(), "[use_mcp_tool for 'undefined']");
        assert_eq!(call("unknown_tool", &[]).description(), "[unknown_tool]");
        // ApplyPatchHandler.getDescription.
        assert_eq!(call("apply_patch", &[("input", "x")]).description(), "[apply_patch for patch application]");
    }

    #[test]
    fn missing_params_are_found_in_order() {
        assert_eq!(missing_param(&call("read_file", &[])), Some("path"));
        assert_eq!(missing_param(&call("read_file", &[("path", "  ")])), Some("path"));
        assert_eq!(missing_param(&call("write_to_file", &[("path", "a")])), Some("content"));
        assert_eq!(missing_param(&call("write_to_file", &[("path", "a"), ("content", "")])), None);
        assert_eq!(missing_param(&call("execute_command", &[("command", "ls")])), Some("requires_approval"));
        // Read as Cline reads them, in either dialect (and from history's input).
        let xml = |text: &str| {
            let parsed = parser_core::parse(text);
            let Some(parser_core::Block::ToolUse(t)) = parsed.iter().next() else { panic!("a tool block") };
            Call::from_xml(&t)
        };
        let w = xml("<write_to_file>\n<absolutePath>/w/a</absolutePath>\n<content>x</content>\n</write_to_file>");
        assert_eq!((w.param("path"), w.param("absolutePath")), (Some("/w/a"), Some("/w/a")), "a hook sees both");
        let done = xml("<attempt_completion>\n<response>Done.</response>\n</attempt_completion>");
        assert_eq!((done.param("result"), missing_param(&done)), (Some("Done."), None));
        let native = Call::from_input("attempt_completion", r#"{"result":"","response":"Done."}"#);
        assert_eq!(native.param("result"), Some("Done."));
        assert_eq!(
            Call::from_input("attempt_completion", r#"{"result":"R","response":"D"}"#).param("result"),
            Some("R")
        );
        assert_eq!(missing_param(&Call::from_input("attempt_completion", "{}")), Some("result"));
        let w = Call::from_input("write_to_file", r#"{"absolutePath":"/w/a","content":"x"}"#);
        assert_eq!(w.param("path"), Some("/w/a"));
        assert_eq!(Call::from_input("read_file", r#"{"path":"a","start_line":3}"#).param("start_line"), Some("3"));
        // Cline's assertRequiredParams: a path of whitespace is missing.
        assert_eq!(missing_param(&call("read_file", &[("path", " \t")])), Some("path"));
        assert_eq!(missing_param(&call("read_file", &[("path", " a.txt")])), None);
    }

    #[test]
    fn yolo_refuses_paths_outside_the_workspace() {
        let d = tempfile::tempdir().unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let out = with_ctx(&ws, |ctx| run(&call("read_file", &[("path", "../../etc/passwd")]), ctx));
        match out {
            Outcome::Failure { text, .. } => {
                assert!(text.contains("outside the workspace"), "{text}")
            }
            o => panic!("{o:?}"),
        }
    }
}

/// The first-turn file listing of the workspace (recursive, capped like `list_files`), as
/// Cline's `formatFilesList` writes it; what the bound on ignore files left out is said as
/// [`say_skipped`] says it.
pub(crate) fn workspace_listing(root: &std::path::Path, term: &mut Term, memory: &mut Memory) -> String {
    if is_desktop(root) {
        // Cline lists no Desktop (on a Mac, reading it asks the person's permission).
        return "(Desktop files not shown automatically. Use list_files to explore if needed.)".to_string();
    }
    let skipped = walk::Skipped::default();
    let (entries, truncated) = list::list(root, root, true, list::MAX_ENTRIES, &skipped);
    let notes = say_skipped(term, memory, &skipped);
    format!("{}{notes}", list::format_locked_listing(root, root, &entries, truncated))
}

/// Whether `root` is the person's Desktop (Cline's `getDesktopDir`: `~/Desktop`).
fn is_desktop(root: &std::path::Path) -> bool {
    let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) else { return false };
    let desktop = std::path::Path::new(&home).join("Desktop");
    root == desktop || std::fs::canonicalize(&desktop).is_ok_and(|d| d == root)
}

/// Cline's `listFiles(dir, true, max)`: `dir`'s entries as `list_files` finds them recursively
/// (breadth first, relative, directories ending in `/`), whether `max` was reached, and what
/// the bound on ignore files left out ([`walk`]'s warnings).
pub(crate) fn list_entries(dir: &std::path::Path, max: usize) -> (Vec<String>, bool, Vec<String>) {
    let skipped = walk::Skipped::default();
    let (entries, truncated) = list::list(dir, dir, true, max, &skipped);
    (entries, truncated, skipped.warnings())
}
pub(crate) use write::content_of;
