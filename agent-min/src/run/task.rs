//! The Task: one instance per task, and Cline's recursive loop —
//! request → stream → parse → present → execute → recurse.
//!
//! Each turn is one frame of `Task::recursively_make_requests`; the work of a turn happens in
//! `Task::turn`, which returns before the recursion so frames stay small. The concerns around
//! the loop live in their own modules: `--json` events ([`crate::run::session::events`]), saving after every
//! turn ([`crate::run::session::state`]), the context window ([`crate::run::budget::context`]), tokens and cost
//! ([`crate::run::budget::accounting`]) and the run's limits ([`crate::run::budget::limits`]).

use std::ops::Range;
use std::time::Duration;

use crate::run::budget::accounting::{self, Accounting};
use crate::run::budget::context::{ContextWindow, Cut, Undo};
use crate::run::budget::limits::{self, Limits};
use crate::run::budget::mistakes::{Mistake, Mistakes};
use crate::run::dialect::{Dialect, Offer};
use crate::run::llm::providers::history::without_reminder;
use crate::run::llm::{backoff, ImagePart, Message, Part, Role, StopReason, Transport};
use crate::run::mcp;
use crate::run::output_schema::Verdict as Schema;
use crate::run::project::hooks::Hook;
use crate::run::project::lifecycle::{self, Gate};
use crate::run::project::workflows::{self, Expanded};
use crate::run::project::Project;
use crate::run::prompt;
use crate::run::prompt::focus_chain::FocusChain;
use crate::run::reply::{call_id, Planned, Reply, Screen};
use crate::run::session::events::{By, Events, NoticeKind};
use crate::run::session::state::{Meta, Record, Snapshot, Store};
use crate::run::tools::paths::Workspace;
use crate::run::tools::repeat::Verdict;
use crate::run::tools::{self, mentions, Call, Ctx, Outcome};
use crate::run::ui::term::{Style, Term};

/// Limits and policies of a run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Approve everything inside the workspace; never wait for a person.
    pub yolo: bool,
    /// Consecutive mistakes before stopping (`--yolo`) or asking for guidance.
    pub max_mistakes: u32,
    /// First retry delay (doubles each retry).
    pub retry_delay: Duration,
    /// Retries of a failed request (429, 5xx, overloaded, dropped).
    pub max_retries: u32,
    /// Default timeout of `execute_command`.
    pub command_timeout: Duration,
    /// The dialect tool calls are made in (`--tool-calls`, see `dialect/`).
    pub dialect: &'static dyn Dialect,
    /// `--one-tool-per-reply`: only a reply's first call runs (Cline's parallel tool calling
    /// off); otherwise every complete call does, in order.
    pub one_tool_per_reply: bool,
    /// The model takes images (Cline's `supportsImages`; never on a server sent string
    /// contents): `read_file` sends an image file's image.
    pub images: bool,
    /// Cline's focus chain (on by default; `--no-focus-chain`): the `task_progress` checklist.
    pub focus_chain: bool,
}

/// How a task ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// `attempt_completion` with this result.
    Completed(String),
    /// Stopped: why.
    Failed(String),
    /// Stopped at a question only a person can answer, with nobody to ask (no terminal): why,
    /// and how to let it go on. Resumable; the reply is asked for again.
    NeedsPerson(String),
    /// An editor's turn ended at the model's `ask_followup_question` (this question): the
    /// person's next prompt is its answer.
    Asked(String),
}

impl End {
    /// The process's exit code for this end (README: exit codes).
    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            End::Completed(_) => 0,
            End::Failed(_) => 1,
            End::NeedsPerson(_) | End::Asked(_) => 3,
        }
    }

    /// The result (completed) or the reason (otherwise).
    pub(crate) fn text(&self) -> &str {
        match self {
            End::Completed(t) | End::Failed(t) | End::NeedsPerson(t) | End::Asked(t) => t,
        }
    }

    /// The `status` of the `completion` event and of the saved task.
    pub(crate) fn status(&self) -> &'static str {
        match self {
            End::Completed(_) => "completed",
            End::Failed(_) => "failed",
            End::NeedsPerson(_) | End::Asked(_) => "approval_needed",
        }
    }
}

/// What a turn leads to.
enum Next {
    /// Send this as the next user message.
    Continue(String),
    /// Stop.
    End(End),
}

/// What surrounds the loop: events, saving, accounting, the context window and the limits.
pub struct Around {
    /// `--json` events (or none).
    pub events: Events,
    /// Where the task is saved after every turn (`None`: not saved, e.g. a replay).
    pub store: Option<Store>,
    /// The task's identity.
    pub meta: Meta,
    /// Tokens and cost.
    pub accounting: Accounting,
    /// The context window.
    pub context: ContextWindow,
    /// `--max-turns`, `--max-cost`, `--timeout`.
    pub limits: Limits,
    /// The workspace's checkpoints (off with `--no-checkpoints`).
    pub checkpoints: crate::run::checkpoints::Tracker,
    /// The workspace's rules, `.clineignore` and hooks.
    pub project: Project,
    /// The MCP servers, started before the first request.
    pub mcp: crate::run::mcp::Hub,
    /// `--output-schema`: the JSON Schema the final result must match.
    pub output_schema: Option<crate::run::output_schema::OutputSchema>,
}

/// A running task.
pub struct Task {
    settings: Settings,
    /// The command sandbox's policy for this task, current when it was made (its workspace's):
    /// made current again at each prompt, as an editor's sessions each have their own.
    sandbox: std::sync::Arc<crate::run::sandbox::Policy>,
    transport: Box<dyn Transport>,
    ws: Workspace,
    term: Term,
    around: Around,
    system: String,
    /// The system prompt before the project's rules (`system` is rebuilt from it every turn).
    base_system: String,
    /// Cline's prompt variant for this model and dialect (which tools are offered).
    family: crate::run::prompt::system::Family,
    /// The tokens of the last request that reported any (`# Context Window Usage`).
    last_request_tokens: u64,
    messages: Vec<Message>,
    /// The model's mistakes in a row (`--max-mistakes`), by kind.
    mistakes: Mistakes,
    /// Replies in a row that were offered tools and called none natively (recovered text
    /// calls count: the server may be ignoring the definitions); said once at 2.
    without_native_call: u32,
    /// What the tools remember across calls (Cline's loop detection, its file-read cache).
    memory: tools::Memory,
    /// Requests made by this run (what `--max-turns` counts).
    turns: u32,
    /// Requests made by earlier runs of a resumed task.
    earlier_turns: u32,
    /// The user message not yet answered when the task stopped (saved for `resume`).
    unsent: Option<String>,
    /// In the XML dialect, the results of the calls a reply ran before its `attempt_completion`:
    /// they go to the model before the feedback on the completion (Cline pushed them before it
    /// waited for the person's answer), and are saved as the unanswered message.
    completed_after: Option<String>,
    /// The editor's question the turn ended at (`End::Asked`), its place among the reply's
    /// calls and when it was asked: the next prompt answers it.
    asked: Option<(Call, usize, std::time::Instant)>,
    /// The images that go with the next user message (read by `read_file` since the last one,
    /// or left with an unsent one), after its text's results.
    next_parts: Vec<Part>,
    /// The question of the current call that nobody could answer (no terminal).
    unanswered: Option<String>,
    /// Calls of the reply being acted on that ran so far: a stop for a person's answer keeps
    /// the reply and their results.
    ran_in_reply: usize,
    /// A conversation (`agent-min acp`) has opened the task: later prompts continue it.
    conversing: bool,
    /// Whether the task was announced ([`Task::started`]): an editor's task opened again
    /// after its refused first prompt is not announced twice.
    began: bool,
    /// A saved task taken up by `session/load` (when it was saved): its next prompt resumes it.
    resumed_at: Option<u64>,
    /// The files an editor sent with the current prompt, (name, text): the text its mentions
    /// of them take (the editor's buffer), kept out of the words (its `@` are not mentions).
    attached: Vec<(String, String)>,
    /// What stopped the last prompt, when a limit (its `limit` name) or the model's refusal
    /// ([`REFUSAL`]) did: an editor's stop reason.
    stopped_by: Option<&'static str>,
    /// The text of the reply the client cancelled as it streamed (`session/cancel`).
    cancelled_reply: Option<String>,
    /// Cline's focus chain: the model's checklist and its reminders (`None`: off).
    focus: Option<FocusChain>,
    /// The focus chain before the last user message's reminder, if it carries one: taken back
    /// with the reminder if the message goes unanswered.
    focus_before: Option<FocusChain>,
    /// With the focus chain off, the checklist a resumed task was saved with, saved again.
    dormant_list: Option<String>,
    /// A hook cancelled the task (PreCompact, inside a turn): the stop runs `TaskCancel`.
    hook_cancelled: bool,
    /// What each cut of the context window removed or changed, oldest first (saved: a task
    /// restore to a checkpoint taken before a cut puts the conversation back as it was).
    cuts: Vec<Undo>,
    /// The files a task-only checkpoint restore found changed since the conversation's end
    /// (saved until a `resume` names them: Cline's pending file context warning).
    file_context_warning: Vec<String>,
    /// Empty replies in a row (Cline's `autoRetryAttempts`): the XML dialect waits longer
    /// after each.
    empty_replies: u32,
}

/// Puts `text` at the end of a user message's own content: before its environment details.
fn before_environment(user_content: &mut String, text: &str) {
    match user_content.rfind("<environment_details>") {
        Some(at) => user_content.insert_str(at, &format!("{text}\n\n")),
        None => user_content.push_str(&format!("\n\n{text}")),
    }
}

/// What [`Task::stopped_by`] says when the model refused to answer (a safety refusal).
pub(crate) const REFUSAL: &str = "refusal";

/// An editor's conversation before a prompt, and what the turns remember of it
/// ([`Task::roll_back`]).
struct BeforePrompt {
    messages: Vec<Message>,
    cuts: Vec<Undo>,
    checkpoints: usize,
    memory: tools::Memory,
    mistakes: Mistakes,
    file_context_warning: Vec<String>,
    empty_replies: u32,
    without_native_call: u32,
    unsent: Option<String>,
    completed_after: Option<String>,
    asked: Option<(Call, usize, std::time::Instant)>,
    next_parts: Vec<Part>,
    focus: Option<FocusChain>,
    last_request_tokens: u64,
    conversing: bool,
    resumed_at: Option<u64>,
    task: String,
}

impl Task {
    /// A task in workspace `ws` talking through `transport`.
    pub fn new(
        settings: Settings,
        transport: Box<dyn Transport>,
        ws: Workspace,
        term: Term,
        mut around: Around,
    ) -> Self {
        let (meta, cwd) = (&around.meta, ws.root().display().to_string());
        let family = settings.dialect.family(&meta.provider, &meta.model);
        // Several tool calls per reply, Cline's default (`enableParallelToolCalling`).
        let parallel = !settings.one_tool_per_reply;
        let mut system = settings.dialect.system_prompt(family, &cwd, parallel);
        if !settings.focus_chain {
            system = crate::run::dialect::system::without_task_progress(&system);
        }
        if settings.yolo {
            system = crate::run::dialect::system::in_yolo_mode(&system);
        }
        settings.dialect.insert_mcp(&mut system, &mut around.mcp, settings.focus_chain);
        let focus = settings.focus_chain.then(FocusChain::default);
        around.events.set_task_id(&around.meta.id);
        Task {
            settings,
            sandbox: crate::run::sandbox::current(),
            transport,
            ws,
            term,
            around,
            base_system: system.clone(),
            system,
            family,
            last_request_tokens: 0,
            messages: Vec::new(),
            mistakes: Mistakes::default(),
            without_native_call: 0,
            empty_replies: 0,
            memory: tools::Memory::default(),
            turns: 0,
            earlier_turns: 0,
            unsent: None,
            resumed_at: None,
            completed_after: None,
            asked: None,
            next_parts: Vec::new(),
            unanswered: None,
            ran_in_reply: 0,
            conversing: false,
            began: false,
            attached: Vec::new(),
            stopped_by: None,
            cancelled_reply: None,
            focus,
            focus_before: None,
            dormant_list: None,
            hook_cancelled: false,
            cuts: Vec::new(),
            file_context_warning: Vec::new(),
        }
    }

    /// Runs a new task to its end.
    pub fn run(mut self) -> End {
        let start = self.open();
        self.finish(start)
    }

    /// One prompt of a conversation (`agent-min acp`): the first opens the task as `run` does,
    /// a later one continues it after its last end — as feedback on its completion, or after
    /// what a stop left unsent. The task stays for the next prompt.
    pub(crate) fn converse(&mut self, prompt: &str, attached: &[(String, String)]) -> End {
        crate::run::sandbox::activate(self.sandbox.clone());
        self.stopped_by = None;
        self.attached = attached.to_vec();
        self.around.limits.restart(self.turns, self.around.accounting.run_cost);
        let before = self.before_prompt();
        let start = match self.conversing {
            false => {
                self.conversing = true;
                self.around.meta.task = prompt.to_string();
                self.open()
            }
            true => match self.resumed_at.take() {
                // The first prompt after a `session/load`.
                Some(updated) => {
                    let next = self.unsent.take().unwrap_or_default();
                    self.resumption(next, updated, Some(prompt))
                }
                None => self.follow_up(prompt),
            },
        };
        let end = self.answer(start, Some(before));
        self.between_prompts();
        end
    }

    /// What the conversation is before a prompt, for [`Task::answer`] to roll back to.
    fn before_prompt(&self) -> BeforePrompt {
        BeforePrompt {
            messages: self.messages.clone(),
            cuts: self.cuts.clone(),
            checkpoints: self.around.checkpoints.records().len(),
            memory: self.memory.clone(),
            mistakes: self.mistakes.clone(),
            file_context_warning: self.file_context_warning.clone(),
            empty_replies: self.empty_replies,
            without_native_call: self.without_native_call,
            unsent: self.unsent.clone(),
            completed_after: self.completed_after.clone(),
            asked: self.asked.clone(),
            next_parts: self.next_parts.clone(),
            focus: self.focus.clone(),
            last_request_tokens: self.last_request_tokens,
            conversing: self.conversing,
            resumed_at: self.resumed_at,
            task: self.around.meta.task.clone(),
        }
    }

    /// The conversation as it was before the prompt the model refused, with what the turns
    /// remember of it (reads, watched files, mistakes): the protocol leaves that prompt and
    /// all after it out of the next one (an editor takes them out of its thread), and
    /// Anthropic asks for the context to be reset before going on. Files the turn changed stay
    /// changed; its checkpoints still restore them.
    fn roll_back(&mut self, b: BeforePrompt) {
        let at = crate::run::checkpoints::At { messages: b.messages.len(), cuts: b.cuts.len() as u32 };
        self.around.checkpoints.roll_back(b.checkpoints, at);
        (self.messages, self.cuts, self.unsent, self.completed_after) =
            (b.messages, b.cuts, b.unsent, b.completed_after);
        (self.memory, self.mistakes, self.file_context_warning) = (b.memory, b.mistakes, b.file_context_warning);
        (self.empty_replies, self.without_native_call) = (b.empty_replies, b.without_native_call);
        (self.asked, self.next_parts, self.focus) = (b.asked, b.next_parts, b.focus);
        (self.last_request_tokens, self.conversing, self.resumed_at) =
            (b.last_request_tokens, b.conversing, b.resumed_at);
        self.around.meta.task = b.task;
    }

    /// A conversation's task waits for its next prompt: the time limit stops counting.
    pub(crate) fn between_prompts(&mut self) {
        self.around.limits.idle();
    }

    /// What stopped the last prompt, when a limit (`max_turns`, `max_cost`, `timeout`,
    /// `cancelled`) or the model's refusal ([`REFUSAL`]) did.
    pub(crate) fn stopped_by(&self) -> Option<&'static str> {
        self.stopped_by
    }

    /// The workspace's root.
    pub(crate) fn root(&self) -> &std::path::Path {
        self.ws.root()
    }

    /// The flag that cancels the current turn (`session/cancel`; see `budget::limits`).
    pub(crate) fn cancel_flag(&self) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
        self.around.limits.cancel_flag()
    }

    /// Ends a conversation: its MCP servers stop.
    pub(crate) fn hang_up(mut self) {
        self.around.mcp.stop(&mut self.around.events);
    }

    /// The first user message of a new task (after the `TaskStart` hook).
    fn open(&mut self) -> Next {
        let task = match &self.around.output_schema {
            Some(schema) => format!("{}\n\n{}", self.around.meta.task, schema.instructions()),
            None => self.around.meta.task.clone(),
        };
        if !self.began {
            self.started(false);
        }
        let hooks = &mut self.around.project.hooks;
        let person = &self.around.meta.task;
        let start = match lifecycle::task_start(hooks, person, &task, &mut self.term, &mut self.around.events) {
            Gate::Go(first) => {
                // A prompt or workflow named in the task goes before its `<task>` block, the
                // command out of it; the words' mentions expanded after the block.
                let (instructions, words) =
                    self.slash_command(&task).map_or((String::new(), task.clone()), |w| (w.instructions, w.words));
                let m = self.expand_mentions(&words);
                let first = match first.strip_prefix(&format!("<task>\n{task}\n</task>")) {
                    Some(rest) => format!("{instructions}<task>\n{}\n</task>{}{rest}", m.words, m.blocks),
                    None => first,
                };
                // After the hooks, as Cline's `loadContext`: the listing shows what they made.
                let first = format!("{first}\n\n{}", self.environment_details(true));
                self.save("running", None, Some(&first));
                Next::Continue(first)
            }
            Gate::Stop(why) => {
                let env = self.environment_details(true);
                self.hook_stop(why, format!("<task>\n{task}\n</task>\n\n{env}"))
            }
        };
        start
    }

    /// The `@` mentions of the prompt's `words` expanded, with the files an editor sent with it.
    fn expand_mentions(&mut self, words: &str) -> mentions::Expansion {
        let attached = std::mem::take(&mut self.attached);
        let m = self.mentions_with(words, &attached);
        self.attached = attached;
        m
    }

    /// The `@` mentions of `words` expanded; the files whose text they added are watched, as
    /// Cline's `parseMentions` tracks them (`file_mentioned`), for `# Recently Modified Files`.
    fn mentions(&mut self, words: &str) -> mentions::Expansion {
        self.mentions_with(words, &[])
    }

    /// [`Task::mentions`], with the files an editor sent (`mentions::expand_with`).
    fn mentions_with(&mut self, words: &str, given: &[(String, String)]) -> mentions::Expansion {
        let m = mentions::expand_with(self.ws.root(), words, given);
        for (shown, abs) in &m.files {
            self.memory.watched.saw(shown, abs);
        }
        m
    }

    /// The user message of a later prompt of a conversation: after the `UserPromptSubmit` hook;
    /// an answer to the question the turn ended at after `PostToolUse` (it is that call's
    /// result, as in Cline's ToolExecutor), guidance after a stop at the mistake limit after
    /// none (Cline asks for it and runs no hook).
    fn follow_up(&mut self, text: &str) -> Next {
        let unsent = self.unsent.take();
        let completed_after = self.completed_after.take();
        // After a stop at the mistake limit the prompt answers Cline's `mistake_limit_reached`
        // ask: it is the person's guidance, and the counts start afresh.
        let guidance = self.mistakes.count(self.settings.max_mistakes) >= self.settings.max_mistakes;
        if guidance {
            self.mistakes.clear();
            self.memory.repeats = Default::default();
        }
        let follow_up = if guidance { prompt::guidance_after } else { prompt::follow_up };
        let asked = self.asked.take();
        let (blocks, mut reply) = match &asked {
            // The answer to the question the turn ended at, as its result (the terminal's
            // `<answer>`: mentions expanded, then a slash command before it), PostToolUse's
            // context after it, after what a hook's stop left unsent.
            Some((call, n, at)) => {
                let m = self.expand_mentions(text);
                let answer = self.command_in_answer(format!("<answer>\n{}\n</answer>{}", m.words, m.blocks));
                let ms = at.elapsed().as_millis() as u64;
                let hooks = &mut self.around.project.hooks;
                let post =
                    match lifecycle::post_tool(hooks, call, &answer, true, ms, &mut self.term, &mut self.around.events)
                    {
                        Gate::Go(hooked) => hooked,
                        Gate::Stop(why) => {
                            self.asked = asked;
                            return self.hook_stop(why, unsent.or(completed_after).unwrap_or_default());
                        }
                    };
                // Natively the call's own result, PostToolUse's context after the results.
                let own = tools::result_message(call, &answer);
                self.answer_in_history(*n, &own);
                let result = format!("{own}{}", before(&post));
                (String::new(), prompt::after_unsent(unsent.as_deref(), &result))
            }
            // A slash command's instructions open the block of the person's words (Cline's
            // `parseSlashCommands`).
            None => {
                let (instructions, m) = self.read_words(text);
                (m.blocks, follow_up(&m.words, unsent.as_deref(), &instructions))
            }
        };
        if let (None, Some(results)) = (&unsent, &completed_after) {
            reply = format!("{results}\n\n{reply}");
        }
        let head = format!("{reply}{blocks}");
        if asked.is_some() || guidance {
            return Next::Continue(format!("{head}\n\n{}", self.environment_details(false)));
        }
        let hooks = &mut self.around.project.hooks;
        match lifecycle::follow_up(hooks, text, head, &mut self.term, &mut self.around.events) {
            Gate::Go(next) => Next::Continue(format!("{next}\n\n{}", self.environment_details(false))),
            Gate::Stop(why) => {
                // The question still waits for its answer.
                self.asked = asked;
                self.hook_stop(why, unsent.or(completed_after).unwrap_or_default())
            }
        }
    }

    /// What the first slash command of the person's `words` stands for, as Cline's
    /// `parseSlashCommands` reads it: an MCP server's prompt (`/mcp:SERVER:PROMPT`), else a
    /// workflow file. A prompt that cannot be read is said, and the command stays as written.
    fn slash_command(&mut self, words: &str) -> Option<Expanded> {
        let (at, name) = workflows::command(words)?;
        if let Some((server, prompt)) = mcp::texts::prompt_command(name) {
            match self.around.mcp.get_prompt(server, prompt, &mut self.around.events) {
                Ok(v) => return Some(Expanded::new(mcp::texts::prompt_block(server, prompt, &v), words, at)),
                Err(e) => self.term.warn(&format!("/{name}: the MCP prompt could not be read: {}", e.message)),
            }
        }
        self.around.project.workflow(words, &mut self.term)
    }

    /// Takes the first slash command out of the person's `words` (their mentions already
    /// expanded: Cline's `loadContext` runs `parseMentions`, then `parseSlashCommands`) and
    /// returns what it stands for, to go before the block holding them ("" for none).
    fn command_in(&mut self, words: &mut String) -> String {
        match self.slash_command(words) {
            Some(w) => {
                *words = w.words;
                w.instructions
            }
            None => String::new(),
        }
    }

    /// An `ask_followup_question` result: a slash command in the `<answer>` goes before it.
    fn command_in_answer(&mut self, text: String) -> String {
        let Some(rest) = text.strip_prefix("<answer>\n") else { return text };
        // The first close, as Cline's `/<answer>([\s\S]*?)<\/answer>/` takes it.
        let (words, after) = rest.split_once("\n</answer>").unwrap_or((rest, ""));
        let (mut words, after) = (words.to_string(), after.to_string());
        match self.command_in(&mut words) {
            c if c.is_empty() => text,
            c => format!("{c}<answer>\n{words}\n</answer>{after}"),
        }
    }

    /// Continues a saved task with Cline's `[TASK RESUMPTION]` message, followed by the
    /// person's `words` if any (Cline's `New instructions for task continuation:`).
    pub fn resume(mut self, saved: Record, words: Option<&str>) -> End {
        let saved = self.read_again(saved);
        let updated = saved.updated;
        let next = self.take_up(saved);
        self.started(true);
        let start = self.resumption(next, updated, words);
        self.finish(start)
    }

    /// The first request of a resumed task: what was about to be sent (`next`), Cline's
    /// `[TASK RESUMPTION]` notice for a task saved at `updated`, the person's `words`, the file
    /// alert, with the `TaskResume` and `UserPromptSubmit` hooks.
    fn resumption(&mut self, next: String, updated: u64, words: Option<&str>) -> Next {
        let ago = prompt::ago(crate::run::session::state::now_secs().saturating_sub(updated));
        let recent = crate::run::session::state::now_secs().saturating_sub(updated) < 30;
        // Cline's `retrieveAndClearPendingFileContextWarning`: named after the notice, once (the
        // next save has it no more; a hook that stops the resume keeps it).
        let files = std::mem::take(&mut self.file_context_warning);
        let root = self.ws.root().display().to_string();
        let resumption = prompt::task_resumption(&ago, &root, recent, !files.is_empty());
        let alert = match files.is_empty() {
            true => String::new(),
            false => format!("\n\n{}", prompt::file_context_warning(&files, self.ws.root())),
        };
        let earlier = if next.trim().is_empty() { String::new() } else { format!("{}\n\n", next.trim_end()) };
        // The person's words, their slash command and mentions read as in any of their words
        // (Cline's `loadContext` reads `<user_message>` as it reads `<feedback>`).
        let words = words.filter(|w| !w.trim().is_empty());
        let body = match words.map(|w| self.resumed_words(w)) {
            Some(said) => format!("{earlier}{resumption}\n\n{said}"),
            None => format!("{earlier}{resumption}"),
        };
        // A cut puts Cline's truncation notice in place of the first reply, which the saved
        // history keeps.
        let notice = crate::run::budget::context::TRUNCATION_NOTICE;
        let cut = self.messages.get(1).is_some_and(|m| m.role == Role::Assistant && m.content == notice);
        let (hooks, history) = (&mut self.around.project.hooks, (&self.messages[..], updated, cut));
        let (said, events) = (format!("{body}{alert}"), &mut self.around.events);
        match lifecycle::task_resume(hooks, history, &said, words.unwrap_or(""), &mut self.term, events) {
            Gate::Go(next) => {
                // Saved before the request, as a new task's first message is: a Ctrl-C while it
                // runs keeps the person's words for the next resume.
                let first = format!("{next}\n\n{}", self.environment_details(true));
                self.save("running", None, Some(&first));
                Next::Continue(first)
            }
            Gate::Stop(why) => {
                self.file_context_warning = files;
                let env = self.environment_details(true);
                self.hook_stop(why, format!("{body}\n\n{env}"))
            }
        }
    }

    /// The person's `words` given with a resume, as Cline sends them: a slash command's
    /// instructions, then [`prompt::new_instructions`], then the files their mentions name.
    fn resumed_words(&mut self, words: &str) -> String {
        let (instructions, m) = self.read_words(words);
        format!("{instructions}{}{}", prompt::new_instructions(&m.words), m.blocks)
    }

    /// A later message of the person's, read as Cline's `loadContext` reads it: the prompt or
    /// workflow its first slash command names (to go before the message; the command taken out
    /// of the words), then its mentions expanded.
    fn read_words(&mut self, words: &str) -> (String, mentions::Expansion) {
        let workflow = self.slash_command(words);
        let m = self.expand_mentions(workflow.as_ref().map_or(words, |w| &w.words));
        (workflow.map(|w| w.instructions).unwrap_or_default(), m)
    }

    /// Takes up a saved conversation (`session/load` of `agent-min acp`): the next prompt
    /// resumes it as Cline's `resumeTaskFromHistory` does — what was left unsent, the
    /// `[TASK RESUMPTION]` notice, the prompt as new instructions ([`Task::resume`]).
    pub(crate) fn restore(&mut self, saved: Record) {
        let saved = self.read_again(saved);
        // After anything but a completion, something was left unsent, if only the notice's place.
        let completed = saved.status == "completed";
        let updated = saved.updated;
        let next = self.take_up(saved);
        self.started(true);
        if self.messages.is_empty() && next.trim().is_empty() && self.next_parts.is_empty() {
            return; // its only prompt was refused (`roll_back`): the next one opens the task
        }
        self.unsent = (!completed || !next.trim().is_empty()).then(|| next.trim_end().to_string());
        self.resumed_at = Some(updated);
        self.conversing = true;
    }

    /// The saved task as saved now that this process holds it (`Store::hold`): a process that
    /// held it may have saved a last turn after it was first read.
    fn read_again(&self, saved: Record) -> Record {
        let again = self.around.store.as_ref().and_then(|s| s.load(&saved.meta.id).ok());
        again.filter(|r| r.meta.id == saved.meta.id).unwrap_or(saved)
    }

    /// The saved task's history, turns, checkpoints and totals; returns what was about to be
    /// sent when it stopped (its last user message and what was pending), without an earlier
    /// resumption notice but with the person's words and the file context alert that followed
    /// it (nor an earlier request's focus chain reminder: the next one adds its own).
    fn take_up(&mut self, saved: Record) -> String {
        self.messages = saved.messages;
        self.cuts = saved.cuts;
        self.file_context_warning = saved.file_context_warning;
        self.earlier_turns = saved.turns;
        let mut checkpoints = saved.checkpoints;
        let here = self.ws.root().display().to_string();
        crate::run::session::state::moved_checkpoints(&mut checkpoints, &saved.meta.cwd, &here);
        self.around.checkpoints.resume(checkpoints);
        self.around.accounting.restore(&saved.totals);
        self.last_request_tokens = saved.last_request_tokens;
        match self.focus {
            Some(_) => self.focus = Some(FocusChain::with_list(saved.task_progress)),
            None => self.dormant_list = saved.task_progress,
        }
        let mut next = without_reminder(&saved.pending.unwrap_or_default());
        self.next_parts = saved.pending_parts;
        if self.messages.last().is_some_and(|m| m.role == Role::User) {
            let last = self.unsend();
            next = if next.is_empty() { last } else { format!("{last}\n\n{next}") };
        }
        // An earlier resume's notice goes; the words and file alert it carried stay.
        next = prompt::without_resumption(&next);
        // The last request's reported size, as Cline's context manager reads it from the saved
        // messages: the first request after a resume is measured from it (and cut if it must
        // be), not estimated from the text alone.
        // Not when a cut came after that request (its request failed): the size was of the
        // conversation before the cut, which is estimated afresh, as the run would have.
        if let Some(i) = self.messages.iter().rposition(|m| m.role == Role::Assistant) {
            if self.cuts.last().is_none_or(|cut| cut.len <= i + 1) {
                self.around.context.observe(self.last_request_tokens, 0, i + 1);
            }
        }
        next
    }

    /// The task's id (its saved state's name).
    pub(crate) fn id(&self) -> &str {
        &self.around.meta.id
    }

    /// The conversation so far.
    pub(crate) fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// What a stop left to send with the next request (a taken-up task's: the results of its
    /// last reply's calls that ran), if anything.
    pub(crate) fn unsent(&self) -> Option<&str> {
        self.unsent.as_deref()
    }

    fn started(&mut self, resumed: bool) {
        self.began = true;
        let m = &self.around.meta;
        self.around.events.task_started(&m.provider, &m.model, &m.cwd, &m.task, resumed);
        self.around.mcp.report_started(&mut self.around.events);
        if self.around.store.is_some() {
            let verb = if resumed { "Resuming" } else { "Task" };
            self.term.info(&format!("{verb} {} (resume with `agent-min resume {}`)", m.id, m.id));
        }
        self.around.project.hooks.check(&mut self.term);
        lifecycle::cancel_on_interrupt(&self.around.project.hooks, &self.around.events);
        lifecycle::notify_on_attention(&mut self.around.project.hooks, &self.around.events, &mut self.term);
        self.around.events.note_totals(self.around.accounting.totals());
        if let Some(note) = self.around.context.take_note() {
            self.notice(NoticeKind::ContextWindow, &note);
        }
        self.last_words_on_a_signal();
    }

    /// Ctrl-C, SIGTERM or the unresponsive-loop watchdog end the process from another thread:
    /// the `--json` stream still ends with `completion`, and the person learns how to go on.
    fn last_words_on_a_signal(&mut self) {
        use crate::run::ui::interrupt::{self, Ending};
        let mut events = self.around.events.for_other_thread();
        let saved = self.around.store.as_ref().map(|_| self.around.meta.id.clone());
        interrupt::on_exit(Box::new(move |ending: &Ending| {
            if let Some(id) = &saved {
                eprintln!("agent-min: the task is saved; continue it with `agent-min resume {id}`");
            }
            let (status, text) = match ending {
                Ending::Interrupted => ("interrupted", "interrupted with Ctrl-C (SIGINT)"),
                Ending::Terminated => ("terminated", "terminated by SIGTERM"),
                Ending::Failed(why) => ("failed", why.as_str()),
            };
            let totals = events.last_totals();
            let ended = crate::run::session::events::Ended { status, text, exit_code: ending.code() };
            events.completion(&ended, totals);
        }));
    }

    /// Runs the loop from `start`, then ends the task: its servers stopped, its last event.
    fn finish(mut self, start: Next) -> End {
        let end = self.answer(start, None);
        self.around.mcp.stop(&mut self.around.events);
        // From here the task says its own last words.
        crate::run::ui::interrupt::clear_on_exit();
        let (status, text) = (end.status(), end.text());
        let totals = self.around.accounting.totals();
        let ended = crate::run::session::events::Ended { status, text, exit_code: end.exit_code() };
        self.around.events.completion(&ended, totals);
        end
    }

    /// Runs the loop from `start` (unless a hook already ended it), then saves and reports the end.
    /// The prompt's turns, to their end; an editor's conversation is rolled back to `before`
    /// if the model refused.
    fn answer(&mut self, start: Next, before: Option<BeforePrompt>) -> End {
        let end = match start {
            Next::Continue(first) => self.recursively_make_requests(first),
            Next::End(end) => end,
        };
        if let Some(before) = before.filter(|_| self.stopped_by == Some(REFUSAL)) {
            self.roll_back(before);
        }
        let unsent = self.unsent.clone().or_else(|| self.completed_after.clone());
        self.save(end.status(), Some(end.text()), unsent.as_deref());
        self.report(&end);
        end
    }

    /// One frame per turn.
    fn recursively_make_requests(&mut self, user_content: String) -> End {
        match self.turn(user_content) {
            Next::Continue(next) => self.recursively_make_requests(next),
            Next::End(end) => end,
        }
    }

    /// One turn: request, stream, parse, present, execute — and what to send next.
    #[inline(never)]
    fn turn(&mut self, mut user_content: String) -> Next {
        if self.mistakes.count(self.settings.max_mistakes) >= self.settings.max_mistakes {
            match self.ask_for_guidance() {
                Some(guidance) => {
                    // Before the environment details, as Cline's `loadContext` adds them after.
                    let mut m = self.mentions(&guidance);
                    let command = self.command_in(&mut m.words);
                    let words = format!("{command}{}{}", prompt::too_many_mistakes(&m.words), m.blocks);
                    before_environment(&mut user_content, &words);
                    // As Cline: the guidance starts the counts afresh, loop detection's too.
                    self.mistakes.clear();
                    self.memory.repeats = Default::default();
                    // The person's words are kept if the request that follows is stopped.
                    self.save("running", None, Some(&user_content));
                }
                None => {
                    let why = self.mistake_limit_message();
                    return self.stop(why, None, user_content);
                }
            }
        }
        if let Some(hit) = self.around.limits.check(self.turns, self.around.accounting.run_cost) {
            return self.stop(hit.message, Some(hit.limit), user_content);
        }
        // The initial checkpoint starts with the first request, after the task's hooks (Cline's
        // `initialCheckpointCommitPromise`); a no-op later.
        self.around.checkpoints.begin();
        // The servers' section lives in the base prompt, which the project's rules extend each turn.
        crate::run::mcp::prompt::update(&mut self.base_system, &mut self.around.mcp);
        for (name, how) in self.around.mcp.take_ready(&mut self.around.events) {
            match how {
                Ok(tools) => {
                    self.term.info(&format!("MCP: {name} is ready ({tools} tools), offered from this request on"))
                }
                Err(e) => self.term.warn(&format!("MCP: server \"{name}\" failed to start and is left out: {e}")),
            }
        }
        // What the servers logged while no call waited (read by `prompt::update`'s poll).
        self.around.mcp.show_notes(&mut self.term, &mut self.around.events);
        // Cline's skills, read afresh: listed in the prompt, loaded with use_skill.
        self.memory.skills = self.around.project.skills(&mut self.term);
        let skills = !self.memory.skills.is_empty();
        let (cwd, hub) = (self.ws.root().display().to_string(), &mut self.around.mcp);
        let offer = Offer {
            skills,
            task_progress: self.focus.is_some(),
            parallel: !self.settings.one_tool_per_reply,
            ask: !self.settings.yolo,
        };
        self.settings.dialect.offer_tools(self.family, &mut *self.transport, hub, &cwd, offer, &mut self.term);
        self.turns += 1;
        self.remind_of_the_checklist(&mut user_content);
        let parts = std::mem::take(self.next_parts());
        self.messages.push(Message { parts, ..Message::user(user_content) });
        let section = if skills {
            prompt::skills::section(self.memory.skills.iter().map(|s| (&*s.name, &*s.description)))
        } else {
            String::new()
        };
        let base = self.settings.dialect.with_skills(&self.base_system, &section);
        // The rules' conditions read the whole task, as Cline's read its never-cut messages:
        // a cut must not turn off a rule an edit it removed turned on.
        let whole = match self.cuts.is_empty() {
            true => std::borrow::Cow::Borrowed(&self.messages[..]),
            false => std::borrow::Cow::Owned(crate::run::budget::context::uncut(&self.messages, &self.cuts)),
        };
        self.system = self.around.project.system_prompt(&base, &whole, &mut self.term);
        if let Err(why) = self.fit_context() {
            let unsent = self.unsend();
            return self.stop(why, None, unsent);
        }

        // Request, stream, parse, present.
        let reply = match self.stream_reply() {
            Ok(reply) => reply,
            Err((why, limit)) => {
                let unsent = match self.cancelled_reply.take() {
                    // As Cline's abortStream: the request stays answered by the reply so far,
                    // marked, so the next prompt's words (often about what the model was
                    // saying) meet it in the history, and nothing is left to send again.
                    Some(said) => {
                        self.messages.push(Message::assistant(prompt::interrupted_by_user(&said)));
                        String::new()
                    }
                    None => self.unsend(),
                };
                return self.stop(why, limit, unsent);
            }
        };
        let said = if reply.says_nothing() { prompt::NO_RESPONSE.to_string() } else { reply.text.clone() };
        self.messages.push(Message { parts: reply.parts.clone(), ..Message::assistant(said) });
        // Saved before the tool runs: a task stopped during it (Ctrl-C in a long command) keeps
        // the answered, billed request, and `resume` continues after it as Cline does (its
        // resumption notice covers a call left without a result) instead of asking again.
        self.save("running", None, None);

        // Execute, and build the next user message.
        let (result, end) = self.act_on(&reply);
        if let Some(end) = end {
            return Next::End(end);
        }
        let next = format!("{result}\n\n{}", self.environment_details(false));
        self.save("running", None, Some(&next));
        Next::Continue(next)
    }

    /// Takes the last message back off the conversation (it was not answered): its text, and its
    /// images back to go with the next one, before any read since. The focus chain's reminder
    /// it carried comes out (`without_reminder`, also for a message saved unanswered, in
    /// `take_up`), and its count goes back: the request that sends it again is reminded in turn.
    fn unsend(&mut self) -> String {
        let Some(m) = self.messages.pop() else { return String::new() };
        let later = std::mem::replace(&mut self.next_parts, m.parts);
        self.next_parts.extend(later);
        if let Some(before) = self.focus_before.take() {
            self.focus = Some(before);
        }
        without_reminder(&m.content)
    }

    /// Cline's focus chain before a request: counts it, and when a reminder is due puts it at
    /// the end of the user content, before `<environment_details>` (Cline's `loadContext` adds
    /// it as a text block after the content's, and the environment's after it).
    fn remind_of_the_checklist(&mut self, user_content: &mut String) {
        let before = self.focus.clone();
        self.focus_before = None;
        let Some(note) = self.focus.as_mut().and_then(FocusChain::next_request) else { return };
        before_environment(user_content, &note);
        self.focus_before = before;
    }

    /// Cline's `updateFCListFromToolResponse` after call `n` was handled: a new checklist in its
    /// `task_progress` is shown, reported and kept.
    fn take_progress(&mut self, call: &Call, n: usize) {
        let turn = self.turn_number();
        let Some(focus) = self.focus.as_mut() else { return };
        let Some(list) = focus.update(call.param("task_progress")) else { return };
        let c = crate::run::prompt::focus_chain::counts(list);
        self.around.events.task_progress(turn, &call_id(turn, n), list, c.total as u32, c.done as u32);
        self.term.checklist(list, c.done, c.total);
    }

    /// The images for the next user message, with those the tools read since it was last asked.
    fn next_parts(&mut self) -> &mut Vec<Part> {
        for i in self.memory.images.drain(..) {
            let (media_type, data) = (i.media_type.to_string(), i.data);
            self.next_parts.push(Part::Image(ImagePart { media_type, data, width: i.width, height: i.height }));
        }
        &mut self.next_parts
    }

    /// Ends the task as failed; `unsent` is kept for `resume`. A limit, or a hook's cancel
    /// (`hook_cancelled`), runs the `TaskCancel` hook, as Cline's `cancelTask` → `abortTask` does.
    fn stop(&mut self, why: String, limit: Option<&'static str>, unsent: String) -> Next {
        self.unsent = Some(unsent);
        self.stopped_by = limit.or(self.stopped_by);
        self.around.events.error(&why, limit);
        if limit.is_some() || std::mem::take(&mut self.hook_cancelled) {
            lifecycle::task_cancel(&mut self.around.project.hooks, &mut self.term, &mut self.around.events);
        }
        Next::End(End::Failed(why))
    }

    /// Ends the task a hook cancelled ([`Self::stop`], with `TaskCancel`).
    fn hook_stop(&mut self, why: String, unsent: String) -> Next {
        self.hook_cancelled = true;
        self.stop(why, None, unsent)
    }

    /// Stops where only a person could go on and nobody can answer (no terminal), and the
    /// `--json` stream names the call and the fix. If no call of the reply ran yet, the reply
    /// is dropped with its request, which `resume` sends again; otherwise the reply stays with
    /// the results of the calls that ran (`act_on` keeps them), and `resume` goes on after them
    /// — what ran is not run again.
    fn wait_for_a_person(&mut self, call: &Call, n: usize, question: &str) -> End {
        let ran = self.ran_in_reply;
        if ran == 0 {
            self.messages.pop(); // the reply holding the call
            let unsent = self.unsend();
            self.unsent = Some(unsent);
        }
        let saved = self.around.store.is_some();
        let id = &self.around.meta.id;
        // The model's question is answered with words, which --yolo cannot give (it answers
        // that no person is there, and the model asks again); an approval, by a policy.
        let fix = if call.name == "ask_followup_question" {
            match saved {
                true => format!("answer it: `agent-min resume {id} \"your answer\"`, or run at a terminal"),
                false => "run at a terminal to answer it".to_string(),
            }
        } else {
            let resume = match saved {
                true => {
                    format!("; the task is saved: continue it with `agent-min resume {id} --yolo`, or at a terminal")
                }
                false => String::new(),
            };
            format!(
                "run at a terminal to answer, or let a policy decide: --yolo approves edits and commands inside the workspace (CLINE_COMMAND_PERMISSIONS refuses commands by pattern, as in Cline; it approves none){resume}"
            )
        };
        let id = call_id(self.turn_number(), n);
        self.around.events.approval_needed(&id, &call.name, &call.shown_params(), &fix);
        // Resumed, the reply stays as it was: this call and any after it are not run then
        // either; the model is told they were not, and asks again under the new policy.
        let later = "; on resume the model learns that this call (and any after it) did not run, and may ask again";
        let what_ran = match ran {
            0 => "nothing was run".to_string(),
            1 => format!("it was not run; the reply's call before it was handled, and its result is kept{later}"),
            k => format!(
                "it was not run; the reply's {k} calls before it were handled, and their results are kept{later}"
            ),
        };
        End::NeedsPerson(format!(
            "{} needs a person's answer ({}), and there is no terminal to ask on; {what_ran}. To go on: {fix}",
            call.name,
            crate::run::ui::term::visible(question).trim()
        ))
    }

    /// The request number of the current turn over the whole task.
    fn turn_number(&self) -> u32 {
        self.earlier_turns + self.turns
    }

    /// Before a request: keeps the prompt under the context window's threshold (after the
    /// `PreCompact` hook, which may stop the task: `Err`).
    fn fit_context(&mut self) -> Result<(), String> {
        let strategy = ("standard-truncation-half", self.usage_now());
        let (system, context) = (&self.system, &mut self.around.context);
        let (hooks, events) = (&mut self.around.project.hooks, &mut self.around.events);
        let cut = lifecycle::guarded_cut(hooks, &mut self.term, events, &mut self.messages, strategy, |m| {
            context.fit(system, m)
        });
        let cut = cut.inspect_err(|_| self.hook_cancelled = true)?;
        if let Some(cut) = cut {
            self.report_cut(cut);
        }
        Ok(())
    }

    /// The task's token totals so far, for the `PreCompact` hook.
    fn usage_now(&self) -> [u64; 4] {
        let u = &self.around.accounting.usage;
        [u.input, u.output, u.cache_read, u.cache_write]
    }

    /// Tells of a cut, and keeps what it removed or changed.
    fn report_cut(&mut self, cut: Cut) {
        let why = if cut.reason == "threshold" {
            format!(
                "the prompt is estimated at {} tokens, over {} for a {}-token context window",
                cut.estimated,
                cut.limit,
                self.around.context.window()
            )
        } else {
            "the server said the prompt is too long".to_string()
        };
        self.term.warn(&format!(
            "Context window: {why}; replaced {} and removed {} of history.",
            crate::run::ui::count(cut.deduplicated as u64, "older file read"),
            crate::run::ui::count(cut.removed as u64, "message")
        ));
        let turn = self.turn_number();
        self.around.events.context_truncated(turn, cut.reason, cut.estimated, cut.limit, cut.removed, cut.deduplicated);
        self.cuts.push(cut.undo);
    }

    /// Saves the task (if it is saved at all); a failure to save is reported, not fatal.
    fn save(&mut self, status: &str, outcome: Option<&str>, pending: Option<&str>) {
        if self.around.store.is_none() {
            return;
        }
        self.next_parts();
        let Some(store) = &self.around.store else { return };
        let snap = Snapshot {
            meta: &self.around.meta,
            status,
            outcome,
            turns: self.earlier_turns + self.turns,
            messages: &self.messages,
            pending,
            pending_parts: &self.next_parts,
            totals: self.around.accounting.totals(),
            last_request_tokens: self.last_request_tokens,
            checkpoints: self.around.checkpoints.records(),
            task_progress: self.focus.as_ref().and_then(FocusChain::list).or(self.dormant_list.as_deref()),
            cuts: &self.cuts,
            file_context_warning: &self.file_context_warning,
        };
        if let Err(e) = store.save(&snap) {
            let dir = store.dir().display().to_string();
            self.term.warn(&format!("Could not save the task in {dir} ({e}); it cannot be resumed from this turn."));
        }
    }

    /// Streams the reply, retrying classified API errors, and cutting the
    /// history when the server says the prompt is too long (again on each refusal, while more
    /// than 3 messages are left, at most 1 + the retries). An error names the limit hit, if a
    /// limit (the timeout) ended it.
    fn stream_reply(&mut self) -> Result<Reply, (String, Option<&'static str>)> {
        let (mut retries, mut cuts) = (0, 0);
        let max_cuts = self.settings.max_retries;
        let turn = self.turn_number();
        let mut attempt = 0;
        loop {
            attempt += 1;
            self.around.events.request_started(turn, attempt);
            self.term.start_spinner("waiting for the model…");
            let one_tool = self.settings.one_tool_per_reply;
            let mut screen = Screen::new(&mut self.term, &mut self.around.events, turn, one_tool);
            let result =
                self.settings.dialect.read_reply(&mut *self.transport, &self.system, &self.messages, &mut screen);
            let (said, reported) = (std::mem::take(&mut screen.said), screen.usage);
            self.term.stop_spinner();
            if let Some(why) = self.transport.images_refused() {
                // From now on read_file refuses images as for a model without image input.
                self.settings.images = false;
                let text = format!(
                    "The server refused the request for its image ({why}); it was sent again with each image named in text, as every later request will be, and read_file now refuses images (--no-images does this from the start)."
                );
                self.notice(NoticeKind::ImagesRefused, &text);
            }
            let stopped = self.around.limits.stopped_now();
            if result.is_err() || stopped.is_some() {
                // What a failed or stopped attempt cost (Cline counts a failed or aborted
                // stream's usage too).
                self.around.accounting.record_failed(&reported);
                // The totals a Ctrl-C's last words and the completion event report.
                self.around.events.note_totals(self.around.accounting.totals());
            }
            if let Some(hit) = stopped {
                if hit.limit == limits::CANCELLED {
                    self.cancelled_reply = Some(said);
                }
                return Err((hit.message, Some(hit.limit)));
            }
            match result {
                Ok(reply) => {
                    self.account(&reply, turn);
                    if let Some(StopReason::Refused(word)) = &reply.stop {
                        // Anthropic: "you must reset the conversation context before continuing";
                        // answering it would be refused again, turn after turn.
                        self.stopped_by = Some(REFUSAL);
                        return Err((refused(word), None));
                    }
                    if !reply.is_empty() {
                        self.empty_replies = 0;
                        return Ok(reply);
                    }
                    // Answered as a reply without a tool (`act_on`), not asked again as it was.
                    // In XML Cline first waits 2, 4, 8 s ("No assistant message was received"),
                    // natively it goes on at once.
                    self.empty_replies += 1;
                    if self.settings.dialect.name() == "xml" {
                        // At most Cline's third wait (8 s), however many follow.
                        let wait = backoff(self.settings.retry_delay, self.empty_replies.min(3), None);
                        if let Some(hit) = self.around.limits.pause(wait) {
                            return Err((hit.message, Some(hit.limit)));
                        }
                    }
                    return Ok(reply);
                }
                // Cut again on each refusal while more than Cline's 3 messages are left (Cline
                // re-arms its cut then, and its automatic retries take it).
                Err(e) if e.is_context_overflow() && cuts <= max_cuts && (cuts == 0 || self.messages.len() > 3) => {
                    cuts += 1;
                    let strategy = ("standard-truncation-lastquarter", self.usage_now());
                    let (system, context) = (&self.system, &mut self.around.context);
                    let (hooks, events) = (&mut self.around.project.hooks, &mut self.around.events);
                    let harder = |m: &mut Vec<Message>| context.cut_harder(system, m);
                    let cut =
                        lifecycle::guarded_cut(hooks, &mut self.term, events, &mut self.messages, strategy, harder);
                    let cut = cut.inspect_err(|_| self.hook_cancelled = true);
                    let Some(cut) = cut.map_err(|why| (why, None))? else {
                        return Err((self.overflow_message(&e), None));
                    };
                    self.report_cut(cut);
                    self.around.events.retry(turn, cuts, max_cuts + 1, 0.0, &e);
                }
                Err(e) if e.is_context_overflow() => return Err((self.overflow_message(&e), None)),
                Err(e) if e.retryable && retries < self.settings.max_retries => {
                    retries += 1;
                    let wait = backoff(self.settings.retry_delay, retries, e.retry_after);
                    self.term.warn(&format!(
                        "{} API error: {e} — retrying in {:.1}s (retry {retries} of {}); any partial reply above is discarded",
                        self.transport.provider(),
                        wait.as_secs_f64(),
                        self.settings.max_retries
                    ));
                    self.around.events.retry(turn, retries, self.settings.max_retries, wait.as_secs_f64(), &e);
                    if let Some(hit) = self.around.limits.pause(wait) {
                        return Err((hit.message, Some(hit.limit)));
                    }
                }
                Err(e) => {
                    let tries =
                        if e.retryable { format!(" (gave up after {} attempts)", retries + 1) } else { String::new() };
                    let failed = format!("{} API error: {e}{tries}", self.transport.provider());
                    // Cline's `api_req_failed`: once the retries of a failure that may pass ran
                    // out, a person is asked whether to try again (without one the task ends,
                    // saved, and `resume` asks again). A failure sent again gets the same answer
                    // (a key refused, a malformed request): it is said at once, as before.
                    let question = format!("{failed} — retry?");
                    if e.retryable && self.term.ask_yes_no("api_req_failed", &question) == Some(true) {
                        retries = 0;
                        continue;
                    }
                    return Err((failed, None));
                }
            }
        }
    }

    fn overflow_message(&self, e: &crate::run::llm::ApiError) -> String {
        let provider = self.transport.provider();
        // All that can go is gone (the task, its first reply and the latest message are kept):
        // a smaller window cannot help; what those hold is too big.
        if self.messages.len() <= 3 {
            return format!(
                "{provider} API error: {e} — the prompt is too long for the model even with all older history removed: the system prompt (rules, MCP servers' tools, skills), the task's own message (with the files and input attached to it) or the latest tool result is too large; start a new task with less in it, or use a model with a larger context window"
            );
        }
        format!(
            "{provider} API error: {e} — the prompt is still too long for the model after removing older history; pass a smaller --context-window (now {} tokens) so history is cut earlier, or start a new task",
            self.around.context.window()
        )
    }

    /// Counts a reply's tokens and cost, and tells the context window what the prompt weighed.
    fn account(&mut self, reply: &Reply, turn: u32) {
        let acct = &mut self.around.accounting;
        let cost = acct.record(&reply.usage, reply.usage_estimated);
        let u = &reply.usage;
        // Cline's "last request" is the last one with tokens.
        let tokens = accounting::request_tokens(u, acct.cache_in_prompt());
        if tokens > 0 {
            self.last_request_tokens = tokens;
        }
        let prompt = accounting::prompt_tokens(&reply.usage, acct.cache_in_prompt());
        self.around.context.observe(prompt, reply.usage.output, self.messages.len() + 1);
        let totals = acct.totals();
        self.around.events.api_request(turn, &reply.usage, reply.usage_estimated, cost, totals);
    }

    /// Decides what a reply means: run its calls in order (each with its own result, approvals
    /// one by one, and after a refusal Cline's "Skipping tool…" for the rest), or tell the model
    /// what went wrong. Returns the next user message's results part, or the end of the task.
    fn act_on(&mut self, reply: &Reply) -> (String, Option<End>) {
        let acted = self.act_on_calls(reply);
        self.checkpoint_after_reply();
        acted
    }

    /// [`Self::act_on`]'s work, before the reply's checkpoint.
    fn act_on_calls(&mut self, reply: &Reply) -> (String, Option<End>) {
        let cut = reply.stop == Some(StopReason::MaxTokens);
        self.watch_native_calls(reply);
        if reply.is_empty() {
            // Cline: a native reply with nothing in it is one without a tool; in XML, after its
            // wait, its loop sends the same reminder and counts the mistake.
            let text = "The model returned an empty reply; reminding it to use a tool (a mistake, as in Cline).";
            self.notice(NoticeKind::EmptyReply, text);
            self.mistakes.add(Mistake::NoTool);
            return (self.settings.dialect.no_tools_used(), None);
        }
        if reply.calls.is_empty() {
            if let Some(message) = &reply.invalid_call {
                self.mistakes.add(Mistake::InvalidCall);
                return (message.clone(), None);
            }
            let (message, kind) = match (&reply.open_tool, cut) {
                (Some(name), _) => {
                    self.notice(NoticeKind::CutOff, &cut_off(name, cut));
                    (self.settings.dialect.truncated_tool(name, cut), Mistake::CutOff)
                }
                (None, true) => {
                    self.notice(
                        NoticeKind::CutOff,
                        "The reply was cut at the output token limit before any tool call.",
                    );
                    (self.settings.dialect.truncated_text(), Mistake::CutOff)
                }
                (None, false) => {
                    self.notice(NoticeKind::NoToolUsed, "The model did not use a tool; reminding it.");
                    (self.settings.dialect.no_tools_used(), Mistake::NoTool)
                }
            };
            self.mistakes.add(kind);
            return (message, None);
        }
        let mut results = Vec::with_capacity(reply.calls.len());
        let mut rejected = false;
        self.ran_in_reply = 0;
        for (k, planned) in reply.calls.iter().enumerate() {
            let (text, own) = if rejected {
                let text = format!("{} {}", prompt::SKIPPED_AFTER_REJECTION, planned.call.description());
                // Its complete `tool_call` event went out: its result is said too.
                let id = call_id(self.turn_number(), planned.n);
                self.around.events.tool_result(&id, &planned.call.name, false, &text, None);
                let all = 0..text.len();
                (text, all)
            } else {
                let (text, own, end, denied) = self.run_call(&planned.call, planned.n);
                if let Some(End::Completed(_) | End::Asked(_)) = &end {
                    self.not_run_after(&reply.calls[k + 1..], matches!(end, Some(End::Asked(_))));
                    if reply.answered_in_text() && !results.is_empty() {
                        // XML: the results of the calls before it (natively they are answered).
                        self.completed_after = Some(results.join("\n\n"));
                    }
                }
                if end.is_some() {
                    let stopped = !matches!(end, Some(End::Completed(_) | End::Asked(_)));
                    if stopped && self.ran_in_reply > 0 && reply.answered_in_text() {
                        // XML: the results of the calls that ran (a person was needed, a hook or
                        // --output-schema stopped the task) are the next user message's start.
                        self.unsent = Some(results.join("\n\n"));
                    }
                    return (results.join("\n\n"), end);
                }
                self.ran_in_reply += 1;
                rejected = denied;
                match reply.answered_in_text() {
                    true => (text, own),
                    false => without_xml_reminder(text, own),
                }
            };
            self.answer_in_history(planned.n, &text[own]);
            results.push(text);
            if k + 1 < reply.calls.len() && !rejected {
                // Saved with each result while more calls follow: a task stopped in a later one
                // (Ctrl-C, SIGTERM, the --timeout watchdog) keeps it for `resume` — natively on
                // the call, in XML as the start of the next user message.
                let pending = reply.answered_in_text().then(|| results.join("\n\n"));
                self.save("running", None, pending.as_deref());
            }
        }
        for name in &reply.extra_tools {
            results.push(prompt::tool_already_used(name));
        }
        if reply.dropped_calls > 0 {
            let text = crate::run::native::calls_left_out(reply.dropped_calls);
            self.notice(NoticeKind::CallsLeftOut, &text);
            results.push(text);
        }
        if let (Some(name), false) = (&reply.open_tool, self.settings.one_tool_per_reply) {
            // Said after the reply's complete calls too: part of what the model meant did not run.
            self.notice(NoticeKind::CutOff, &cut_off(name, cut));
            if reply.answered_in_text() {
                // XML, or written as XML in a native reply's text; a native one is answered already.
                results.push(self.settings.dialect.truncated_tool(name, cut));
            }
        }
        (results.join("\n\n"), None)
    }

    /// The calls of a reply after the `attempt_completion` that ended the task: each gets its
    /// result (in `--json` every complete call has one; in history the model learns why, should
    /// the conversation go on), and the person is told.
    fn not_run_after(&mut self, later: &[Planned], question: bool) {
        if later.is_empty() {
            return;
        }
        let text = if question { prompt::NOT_RUN_AFTER_QUESTION } else { prompt::NOT_RUN_AFTER_COMPLETION };
        for planned in later {
            let id = call_id(self.turn_number(), planned.n);
            self.around.events.tool_result(&id, &planned.call.name, false, text, None);
            self.answer_in_history(planned.n, text);
        }
        let names: Vec<&str> = later.iter().map(|p| p.call.name.as_str()).collect();
        let (tool, why) = match question {
            true => ("ask_followup_question", "the turn ended at the question"),
            false => ("attempt_completion", "the task ended with the completion"),
        };
        self.term.warn(&format!("The reply's calls after {tool} were not run ({}): {why}.", names.join(", ")));
    }

    /// Native calls: call `n`'s result goes into history with the call itself, so each call is
    /// paired with its own result by id on the wire (`llm/providers/history.rs`).
    fn answer_in_history(&mut self, n: usize, text: &str) {
        let Some(reply) = self.messages.last_mut().filter(|m| m.role == Role::Assistant) else { return };
        if let Some(Part::ToolUse(t)) = reply.parts.iter_mut().filter(|p| matches!(p, Part::ToolUse(_))).nth(n) {
            t.answer = Some(text.to_string());
        }
    }

    /// Runs call `n` of the reply with its hooks: its result text, the part of it that is the
    /// call's own result (natively its `tool_result`; a hook's context and loop detection's
    /// warning around it go out as text after the results, as in Cline), the end of the task if
    /// it ended it, and whether the person refused it.
    fn run_call(&mut self, call: &Call, n: usize) -> (String, Range<usize>, Option<End>, bool) {
        if tools::missing_param(call).is_none() {
            // Before its PreToolUse hook too, as Cline waits for the initial checkpoint before the
            // handler: the hook must not run while the start checkpoint has nested repositories'
            // `.git` renamed away.
            self.checkpoint_before(call);
        }
        let hooks = &mut self.around.project.hooks;
        // Cline's handlers check parameters, `.clineignore` and the command permissions before
        // their PreToolUse hook: a call refused so reaches no hook.
        let (root, model) = (self.ws.root(), &self.around.meta.model);
        let pre = match tools::missing_param(call) {
            None if !tools::refused_before_hooks(call, root, model) => {
                lifecycle::pre_tool(hooks, call, &mut self.term, &mut self.around.events)
            }
            _ => Gate::Go(String::new()),
        };
        let pre = match pre {
            Gate::Go(hooked) => hooked,
            Gate::Stop(why) => {
                return (String::new(), 0..0, Some(self.hook_stop(why, String::new()).into_end()), false)
            }
        };
        // A turn the client cancelled (or the timeout ended) — during an earlier call of the
        // reply, or this call's hook — runs no more of it: the call's edit or command would
        // still happen after the person pressed Stop.
        if let Some(hit) = self.around.limits.stopped_now() {
            return (
                String::new(),
                0..0,
                Some(self.stop(hit.message, Some(hit.limit), String::new()).into_end()),
                false,
            );
        }
        let started = std::time::Instant::now();
        let outcome = self.execute(call, n);
        if let Some(question) = self.unanswered.take() {
            return (String::new(), 0..0, Some(self.wait_for_a_person(call, n, &question)), false);
        }
        if let Outcome::Asked(question) = outcome {
            // An editor's person answers with the next prompt (`follow_up`); its hooks and
            // loop detection then have nothing to look at yet.
            self.asked = Some((call.clone(), n, started));
            self.mistakes.clear();
            return (String::new(), 0..0, Some(End::Asked(question)), false);
        }
        let outcome = match (outcome, self.around.output_schema.as_mut()) {
            (Outcome::Complete(done), Some(schema)) => match schema.check(&done) {
                Schema::Valid(json) => Outcome::Complete(json),
                Schema::Retry(text) => {
                    self.term.warn("The result does not match --output-schema; asking the model once more.");
                    Outcome::Failure { text: tools::tool_error(&text), mistake: false }
                }
                Schema::Fail(why) => {
                    return (String::new(), 0..0, Some(self.stop(why, None, String::new()).into_end()), false)
                }
            },
            (outcome, _) => outcome,
        };
        let ms = started.elapsed().as_millis() as u64;
        let (ok, shown) = match &outcome {
            Outcome::Success(t) | Outcome::Repeated(t) => (true, t.as_str()),
            Outcome::Failure { text, .. } | Outcome::Denied { text, .. } => (false, text.as_str()),
            Outcome::Complete(_) | Outcome::Asked(_) => (true, ""),
        };
        // As Cline's ToolExecutor: loop detection once the result is in, before PostToolUse, so
        // its warning comes before PostToolUse's context; a thrown failure skips it.
        // (A missing parameter is the handler's own answer, never thrown.)
        let thrown = matches!(outcome, Outcome::Failure { .. })
            && tools::registry::throws_failures(&call.name)
            && tools::missing_param(call).is_none();
        let repeated = if thrown { Verdict::Fine } else { self.memory.repeats.observe(call) };
        let warning = match &repeated {
            Verdict::Warn(warning) => {
                // Appended to the result for the model (not in `tool_result`): said as a notice.
                self.around.events.notice(self.turn_number(), NoticeKind::RepeatedCall, warning);
                format!("\n\n{warning}")
            }
            Verdict::Escalate | Verdict::Fine => String::new(),
        };
        let hooks = &mut self.around.project.hooks;
        // A thrown failure runs no PostToolUse either (Cline's `toolWasExecuted` is false).
        let post = match thrown {
            true => Gate::Go(String::new()),
            false => lifecycle::post_tool(hooks, call, shown, ok, ms, &mut self.term, &mut self.around.events),
        };
        let post = match post {
            Gate::Go(hooked) => hooked,
            Gate::Stop(why) => {
                return (String::new(), 0..0, Some(self.hook_stop(why, String::new()).into_end()), false)
            }
        };
        // As Cline's ToolExecutor, which takes a call's `task_progress` after it returns: a
        // thrown failure never gets there (a failed patch's list would tick what failed).
        if !thrown {
            self.take_progress(call, n);
        }
        if matches!(outcome, Outcome::Complete(_)) {
            lifecycle::task_complete(&mut self.around.project.hooks, call, &mut self.term, &mut self.around.events);
        }
        let denied = matches!(outcome, Outcome::Denied { .. });
        // A success clears the mistake count; so does any other outcome of a call with valid
        // parameters that does not itself count a mistake, for the tools Cline resets it for.
        let clears = match &outcome {
            Outcome::Success(_) => true,
            Outcome::Repeated(_) => false,
            Outcome::Failure { mistake, .. } => !mistake && tools::registry::valid_clears_mistakes(&call.name),
            Outcome::Denied { .. } => tools::registry::valid_clears_mistakes(&call.name),
            // Cline's AttemptCompletionHandler resets it; an editor's next prompt starts afresh.
            Outcome::Complete(_) | Outcome::Asked(_) => true,
        };
        if clears {
            self.mistakes.clear();
        }
        let (text, feedback, end) = match outcome {
            Outcome::Complete(done) => (String::new(), None, Some(End::Completed(done))),
            Outcome::Asked(question) => (String::new(), None, Some(End::Asked(question))),
            Outcome::Success(t) | Outcome::Repeated(t) => (t, None, None),
            Outcome::Failure { text, mistake } => {
                if mistake {
                    let invalid = tools::missing_param(call).is_some();
                    self.mistakes.add(if invalid { Mistake::InvalidCall } else { Mistake::FailedTool });
                }
                (text, None, None)
            }
            Outcome::Denied { text, feedback } => (text, feedback, None),
        };
        // The person's words in feedback or an answer: mentions, then a slash command (Cline's
        // loadContext), the command's text before the block that holds them.
        let mut feedback = feedback.map(|f| self.mentions(&f));
        let command = feedback.as_mut().map(|f| self.command_in(&mut f.words)).unwrap_or_default();
        let text = if call.name == "ask_followup_question" { self.command_in_answer(text) } else { text };
        // The person's feedback comes before the result it was given on, in a paragraph of its
        // own: natively it is text after the results (Cline pushes it as a text block, which
        // its `ensureToolResultsFollowToolUse` puts after them), not part of the `tool_result`.
        let said = feedback.as_ref().map(|f| tools::feedback_paragraph(&f.words, &f.blocks)).unwrap_or_default();
        let body = tools::result_message(call, &crate::run::ui::redact::apply(&text));
        // A refused call ran nothing: what PreToolUse said about running it is not passed on
        // (Cline runs that hook only once the call is approved).
        let pre = after(if denied { "" } else { pre.as_str() });
        let start = pre.len() + command.len() + said.len();
        let own = start..start + body.len();
        let result = format!("{pre}{command}{said}{body}{warning}{}", before(&post));
        // After the handler's reset of the count, as in Cline.
        if matches!(repeated, Verdict::Escalate) {
            self.mistakes.looped(&call.name, tools::repeat::HARD_THRESHOLD);
        }
        (result, own, end, denied)
    }

    /// Runs one tool call: checks its parameters, then hands it to the tool.
    fn execute(&mut self, call: &Call, n: usize) -> Outcome {
        let id = call_id(self.turn_number(), n);
        let outcome = if let Some(param) = tools::missing_param(call) {
            self.term.tool(&call.name, "");
            self.term.outcome(false, &format!("missing required parameter '{param}'"));
            let count = self.mistakes.count(self.settings.max_mistakes) + 1;
            let window = self.around.context.window();
            let percent = crate::run::prompt::environment::usage_percent;
            let context_percent = (window > 0).then(|| percent(self.last_request_tokens, window));
            let failures = tools::registry::Failures { count, context_percent };
            Outcome::Failure { text: tools::missing_param_result(call, param, failures), mistake: true }
        } else {
            let (messages, next) = (&self.messages, &self.next_parts);
            let images_held = || {
                let next = next.iter().filter_map(|p| if let Part::Image(i) = p { Some(i) } else { None });
                messages.iter().flat_map(Message::images).chain(next).map(|i| i.data.len()).sum()
            };
            let project = &mut self.around.project;
            let mut skills_now = |term: &mut Term| project.skills(term);
            let mut ctx = Ctx {
                ws: &self.ws,
                term: &mut self.term,
                yolo: self.settings.yolo,
                command_timeout: self.settings.command_timeout,
                events: &mut self.around.events,
                call_id: &id,
                tool: &call.name,
                decided: false,
                model: &self.around.meta.model,
                memory: &mut self.memory,
                mcp: &mut self.around.mcp,
                family: self.family,
                images: self.settings.images,
                images_held: &images_held,
                skills_now: &mut skills_now,
            };
            let outcome = tools::run(call, &mut ctx);
            // Tools that change nothing (ask, complete) need no approval.
            ctx.decide(true, By::Auto, None);
            if let Some(question) = self.term.take_unanswered() {
                self.unanswered = Some(question);
                return outcome; // nothing ran and nothing goes back to the model
            }
            // A refused or failed file tool changed nothing; a failed command may have.
            let changed_nothing = match &outcome {
                Outcome::Denied { .. } => true,
                Outcome::Failure { .. } => matches!(call.name.as_str(), "write_to_file" | "replace_in_file"),
                _ => false,
            };
            if !changed_nothing {
                self.changed_by(call);
            }
            outcome
        };
        let (ok, text) = match &outcome {
            Outcome::Success(t) | Outcome::Repeated(t) | Outcome::Complete(t) | Outcome::Asked(t) => (true, t.as_str()),
            Outcome::Failure { text, .. } => (false, text.as_str()),
            Outcome::Denied { text, .. } => (false, text.as_str()),
        };
        self.around.events.tool_result(&id, &call.name, ok, text, call.untrimmed_param("content"));
        outcome
    }

    /// Cline's checkpoint before a tool: the run's first, before its first edit or command.
    fn checkpoint_before(&mut self, call: &Call) {
        let (turn, tool) = (self.turn_number(), call.name.as_str());
        let at = crate::run::checkpoints::At { messages: self.messages.len(), cuts: self.cuts.len() as u32 };
        self.around.checkpoints.before(tool, turn, at, &mut self.term, &mut self.around.events);
    }

    /// A call of the reply ran (and may have changed files): the reply's checkpoint covers it
    /// — of the one path it wrote, after an edit tool, unless a hook may have changed others.
    fn changed_by(&mut self, call: &Call) {
        let hooked = Hook::ALL.into_iter().any(|h| self.around.project.hooks.has(h));
        let wrote = match call.name.as_str() {
            "write_to_file" | "replace_in_file" if !hooked => call.param("path").map(|p| self.ws.resolve(p).abs),
            _ => None,
        };
        self.around.checkpoints.ran(&call.name, wrote);
    }

    /// Cline's checkpoint after a reply's calls have all run, when one of them may have
    /// changed files.
    fn checkpoint_after_reply(&mut self) {
        let turn = self.turn_number();
        let at = crate::run::checkpoints::At { messages: self.messages.len(), cuts: self.cuts.len() as u32 };
        self.around.checkpoints.after_reply(turn, at, &mut self.term, &mut self.around.events);
    }

    /// At the mistake limit: under `--yolo`, nobody to ask (`None`); otherwise the person's
    /// guidance, or `None` if they give none.
    fn ask_for_guidance(&mut self) -> Option<String> {
        if self.settings.yolo {
            return None;
        }
        self.term.warn(&format!(
            "The model has made {} mistakes in a row. This may indicate a failure in its thought process or inability to use a tool properly, which can be mitigated with some guidance (e.g. \"Try breaking down the task into smaller steps\").",
            self.mistakes.count(self.settings.max_mistakes)
        ));
        self.term.attention(
            "mistake_limit_reached",
            "Cline hit repeated tool call failures. Try guiding it with a new prompt.",
        );
        self.term.prompt("Guidance for the model (empty line to stop the task): ").filter(|g| !g.trim().is_empty())
    }

    fn mistake_limit_message(&self) -> String {
        self.mistakes.stop_reason(self.settings.max_mistakes)
    }

    /// Tells the person (terminal) and the `--json` reader (a `notice` event) the same thing.
    fn notice(&mut self, kind: NoticeKind, text: &str) {
        self.term.warn(text);
        self.around.events.notice(self.turn_number(), kind, text);
    }

    /// A recovered text call is shown; and after two replies in a row that were offered tools
    /// and called none natively, the person learns the server may be ignoring them (once).
    fn watch_native_calls(&mut self, reply: &Reply) {
        if reply.recovered {
            let names: Vec<&str> = reply.calls.iter().map(|p| p.call.name.as_str()).collect();
            let (calls, they) = if names.len() == 1 { ("call", "it was") } else { ("calls", "they were") };
            let text = format!(
                "The model wrote its {} {calls} as text instead of native tool calls; {they} recovered from the text and run (--no-recover-text-calls turns this off).",
                names.join(", ")
            );
            self.notice(NoticeKind::ToolCallRecovered, &text);
        }
        let Some(hint) = self.settings.dialect.tools_ignored_hint() else { return };
        // The providers' own APIs never drop `tools`: there a reply without a call is the model's
        // choice, answered as Cline answers it, and `--tool-calls xml` would be bad advice.
        let own_api = ["https://api.anthropic.com", "https://api.openai.com"]
            .iter()
            .any(|u| self.around.meta.base_url.trim_end_matches('/').starts_with(u));
        if own_api {
            return;
        }
        // A call cut at the token limit, or one the reply made invalid, was still made natively.
        let native_call = reply.parts.iter().any(|p| matches!(p, Part::ToolUse(_))) && !reply.recovered
            || reply.invalid_call.is_some();
        self.without_native_call = if native_call { 0 } else { self.without_native_call.saturating_add(1) };
        if self.without_native_call == 2 {
            self.notice(NoticeKind::ToolsIgnored, hint);
        }
    }

    /// Cline's `<environment_details>` (`prompt/environment.rs`): the files read or edited that
    /// something else changed since, the time, on the first turn the workspace's files (capped)
    /// and the CLI tools found, the context window's use when Cline shows it, the mode.
    fn environment_details(&mut self, first: bool) -> String {
        use crate::run::prompt::environment::{self, Details};
        let root = self.ws.root().display().to_string();
        let listing = first.then(|| tools::workspace_listing(self.ws.root(), &mut self.term, &mut self.memory));
        let (tokens, window) = (self.last_request_tokens, self.around.context.window());
        let model = &self.around.meta.model;
        let next_gen = crate::run::native::mode::is_claude_4_plus(&model.to_lowercase())
            || model.to_lowercase().contains("gpt-5")
            || model.to_lowercase().contains("gpt5");
        environment::render(&Details {
            now: crate::run::session::state::now_secs(),
            files: listing.as_deref().map(|l| (root.as_str(), l)),
            workspace: first.then(|| {
                let (remotes, head) = tools::repo_git::remotes_and_head(self.ws.root());
                environment::workspace_configuration(&root, remotes, head)
            }),
            cli_tools: first.then(environment::detect_cli_tools),
            context: environment::shows_context_usage(next_gen, tokens, window).then_some((tokens, window)),
            modified: self.memory.watched.take_modified(),
        })
    }

    /// Prints the end of the task and the token usage.
    fn report(&mut self, end: &End) {
        match end {
            End::Failed(why) => self.term.line(Style::Err, &format!("Task failed: {why}")),
            End::NeedsPerson(why) => self.term.line(Style::Err, &format!("Task stopped: {why}")),
            End::Completed(_) | End::Asked(_) => {}
        }
        if self.around.accounting.requests > 0 {
            let line = self.around.accounting.summary();
            self.term.info(&line);
        }
        if let Some(store) = &self.around.store {
            match store.closing_line(&self.around.meta.id, !matches!(end, End::Completed(_))) {
                Ok(line) => self.term.info(&line),
                Err(warning) => self.term.warn(&warning),
            }
        }
    }
}

impl Next {
    /// The end this is (a stop always is one).
    fn into_end(self) -> End {
        match self {
            Next::End(end) => end,
            Next::Continue(_) => End::Failed("the task stopped".to_string()),
        }
    }
}

/// A hook's text placed before what follows it (`"text\n\n"`), or nothing.
fn after(hooked: &str) -> String {
    if hooked.is_empty() {
        String::new()
    } else {
        format!("{hooked}\n\n")
    }
}

/// A hook's text placed after what precedes it (`"\n\ntext"`), or nothing.
fn before(hooked: &str) -> String {
    if hooked.is_empty() {
        String::new()
    } else {
        format!("\n\n{hooked}")
    }
}

/// A native call's result without Cline's reminder that tool uses are XML tags (after a missing
/// parameter, a cut write): it tells a model that calls natively the wrong format, as Cline's own
/// native texts (`noToolsUsed(true)`) know. Taken out of the whole text, with `own` (the call's
/// own result in it) shortened to match, so the result goes out once: the history finds the
/// call's answer in the message text by its words.
fn without_xml_reminder(text: String, own: Range<usize>) -> (String, Range<usize>) {
    let reminder = format!("\n\n{}", prompt::TOOL_USE_REMINDER);
    match text[own.clone()].find(&reminder) {
        Some(at) => {
            let at = own.start + at;
            let text = format!("{}{}", &text[..at], &text[at + reminder.len()..]);
            (text, own.start..own.end - reminder.len())
        }
        None => (text, own),
    }
}

/// Why the task stopped when the provider's safety system ended the reply (`word`: its stop
/// reason). The reply is dropped with its request, which `resume` sends again; in an editor
/// the whole prompt is (`Task::roll_back`).
fn refused(word: &str) -> String {
    format!(
        "the provider's safety system ended the model's reply (stop reason \"{word}\"); the same conversation would be refused again, so the task stopped. Start a new task with different instructions (in an editor, the next prompt goes on from before this one)"
    )
}

/// What the person is told of a reply that ended inside a `<name>` call (`cut`: at the output
/// token limit).
fn cut_off(name: &str, cut: bool) -> String {
    let at_limit = if cut { " (cut at the output token limit)" } else { "" };
    format!("The reply ended inside a <{name}> tool call{at_limit}; it was not executed.")
}
