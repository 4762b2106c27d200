//! The Task: one instance per task, and Cline's recursive loop —
//! request → stream → parse → present → execute → recurse.
//!
//! Each turn is one frame of `Task::recursively_make_requests`; the work of a turn happens in
//! `Task::turn`, which returns before the recursion so frames stay small.

use std::time::Duration;

use super::api::{backoff, Message, Role, StopReason, Transport, Usage};
use super::paths::Workspace;
use super::prompt;
use super::stream::{self, Reply};
use super::term::{Style, Term};
use super::tools::{self, Call, Ctx, Outcome};

/// Limits and policies of a run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Approve everything inside the workspace; never wait for a person.
    pub yolo: bool,
    /// Consecutive mistakes before stopping (`--yolo`) or asking for guidance.
    pub max_mistakes: u32,
    /// Requests before giving up; `None` for no limit.
    pub max_turns: Option<u32>,
    /// First retry delay (doubles each retry).
    pub retry_delay: Duration,
    /// Retries of a failed request (429, 5xx, overloaded, dropped).
    pub max_retries: u32,
    /// Default timeout of `execute_command`.
    pub command_timeout: Duration,
}

/// How a task ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// `attempt_completion` with this result.
    Completed(String),
    /// Stopped: why.
    Failed(String),
}

/// What a turn leads to.
enum Next {
    /// Send this as the next user message.
    Continue(String),
    /// Stop.
    End(End),
}

/// A running task.
pub struct Task {
    settings: Settings,
    transport: Box<dyn Transport>,
    ws: Workspace,
    term: Term,
    system: String,
    messages: Vec<Message>,
    mistakes: u32,
    turns: u32,
    usage: Usage,
    estimated_replies: u32,
}

/// Empty replies tolerated (each retried) before failing.
const MAX_EMPTY_REPLIES: u32 = 2;

impl Task {
    /// A task in workspace `ws` talking through `transport`.
    pub fn new(settings: Settings, transport: Box<dyn Transport>, ws: Workspace, term: Term) -> Self {
        let system = prompt::system(&ws.root().display().to_string());
        Task {
            settings,
            transport,
            ws,
            term,
            system,
            messages: Vec::new(),
            mistakes: 0,
            turns: 0,
            usage: Usage::default(),
            estimated_replies: 0,
        }
    }

    /// Runs the task to its end.
    pub fn run(mut self, task: &str) -> End {
        let first = format!("<task>\n{task}\n</task>\n\n{}", self.environment_details(true));
        let end = self.recursively_make_requests(first);
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
        if self.mistakes >= self.settings.max_mistakes {
            match self.ask_for_guidance() {
                Some(guidance) => {
                    user_content = format!("{user_content}\n\n{}", prompt::too_many_mistakes(&guidance));
                    self.mistakes = 0;
                }
                None => return Next::End(End::Failed(self.mistake_limit_message())),
            }
        }
        if let Some(limit) = self.settings.max_turns.filter(|&l| self.turns >= l) {
            return Next::End(End::Failed(format!(
                "the turn limit was reached ({limit} requests; raise it with --max-turns)"
            )));
        }
        self.turns += 1;
        self.messages.push(Message { role: Role::User, content: user_content });

        // Request, stream, parse, present.
        let reply = match self.stream_reply() {
            Ok(reply) => reply,
            Err(why) => return Next::End(End::Failed(why)),
        };
        self.messages.push(Message { role: Role::Assistant, content: reply.text.clone() });

        // Execute, and build the next user message.
        let (result, end) = self.act_on(&reply);
        if let Some(end) = end {
            return Next::End(end);
        }
        Next::Continue(format!("{result}\n\n{}", self.environment_details(false)))
    }

    /// Streams the reply, retrying classified API errors and empty replies.
    fn stream_reply(&mut self) -> Result<Reply, String> {
        let (mut retries, mut empties) = (0, 0);
        loop {
            self.term.start_spinner("waiting for the model…");
            let result = stream::read_reply(&mut *self.transport, &self.system, &self.messages, &mut self.term);
            self.term.stop_spinner();
            match result {
                Ok(reply) => {
                    self.usage.add(&reply.usage);
                    self.estimated_replies += u32::from(reply.usage_estimated);
                    if !reply.is_empty() {
                        return Ok(reply);
                    }
                    empties += 1;
                    if empties > MAX_EMPTY_REPLIES {
                        return Err(format!(
                            "the model returned an empty reply {empties} times in a row; check the model name and the server"
                        ));
                    }
                    self.term.warn(&format!(
                        "The model returned an empty reply; asking again ({empties} of {MAX_EMPTY_REPLIES})."
                    ));
                }
                Err(e) if e.retryable && retries < self.settings.max_retries => {
                    retries += 1;
                    let wait = backoff(self.settings.retry_delay, retries, e.retry_after);
                    self.term.warn(&format!(
                        "{} API error: {e} — retrying in {:.1}s (retry {retries} of {}); any partial reply above is discarded",
                        self.transport.provider(),
                        wait.as_secs_f64(),
                        self.settings.max_retries
                    ));
                    std::thread::sleep(wait);
                }
                Err(e) => {
                    let tries =
                        if e.retryable { format!(" (gave up after {} attempts)", retries + 1) } else { String::new() };
                    return Err(format!("{} API error: {e}{tries}", self.transport.provider()));
                }
            }
        }
    }

    /// Decides what a reply means: run its first tool, or tell the model what went wrong.
    /// Returns the next user message's result part, or the end of the task.
    fn act_on(&mut self, reply: &Reply) -> (String, Option<End>) {
        let cut = reply.stop == Some(StopReason::MaxTokens);
        let Some(call) = &reply.tool else {
            let message = match (&reply.open_tool, cut) {
                (Some(name), _) => {
                    self.term.warn(&format!(
                        "The reply ended inside a <{name}> tool call{}; it was not executed.",
                        if cut { " (cut at the output token limit)" } else { "" }
                    ));
                    prompt::truncated_tool(name)
                }
                (None, true) => {
                    self.term.warn("The reply was cut at the output token limit before any tool call.");
                    prompt::truncated_text()
                }
                (None, false) => {
                    self.term.warn("The model did not use a tool; reminding it.");
                    prompt::no_tools_used()
                }
            };
            self.mistakes += 1;
            return (message, None);
        };
        let (text, end) = match self.execute(call) {
            Outcome::Complete(done) => (String::new(), Some(End::Completed(done))),
            Outcome::Success(t) => {
                self.mistakes = 0;
                (t, None)
            }
            Outcome::Failure { text, mistake } => {
                self.mistakes += u32::from(mistake);
                (text, None)
            }
            Outcome::Denied(t) => (t, None),
        };
        let mut result = format!("{} Result:\n{text}", call.description());
        for name in &reply.extra_tools {
            result.push_str(&format!("\n\n{}", prompt::tool_already_used(name)));
        }
        (result, end)
    }

    /// Runs one tool call: checks its parameters, then hands it to the tool.
    fn execute(&mut self, call: &Call) -> Outcome {
        if let Some(param) = tools::missing_param(call) {
            self.term.tool(&call.name, "");
            self.term.outcome(false, &format!("missing required parameter '{param}'"));
            return Outcome::Failure { text: tools::tool_error(&prompt::missing_param(param)), mistake: true };
        }
        let mut ctx = Ctx {
            ws: &self.ws,
            term: &mut self.term,
            yolo: self.settings.yolo,
            command_timeout: self.settings.command_timeout,
        };
        tools::run(call, &mut ctx)
    }

    /// At the mistake limit: under `--yolo`, nobody to ask (`None`); otherwise the person's
    /// guidance, or `None` if they give none.
    fn ask_for_guidance(&mut self) -> Option<String> {
        if self.settings.yolo {
            return None;
        }
        self.term.warn(&format!(
            "The model has made {} mistakes in a row. This may indicate a failure in its thought process or inability to use a tool properly, which can be mitigated with some guidance (e.g. \"Try breaking down the task into smaller steps\").",
            self.mistakes
        ));
        self.term.prompt("Guidance for the model (empty line to stop the task): ").filter(|g| !g.trim().is_empty())
    }

    fn mistake_limit_message(&self) -> String {
        format!(
            "the model made {} mistakes in a row (no tool used, missing parameters, or failed edits); stopping at --max-mistakes {}",
            self.mistakes, self.settings.max_mistakes
        )
    }

    /// `<environment_details>`: working directory (with a capped file listing on the first turn)
    /// and the current time.
    fn environment_details(&self, first: bool) -> String {
        let root = self.ws.root().display();
        let mut s = String::from("<environment_details>\n");
        if first {
            let (entries, truncated) = tools::list_workspace(self.ws.root());
            s.push_str(&format!(
                "# Current Working Directory ({root}) Files\n{}\n\n",
                tools::format_listing(&entries, truncated)
            ));
        } else {
            s.push_str(&format!("# Current Working Directory\n{root}\n\n"));
        }
        s.push_str(&format!("# Current Time\n{}\n</environment_details>", super::clock::now_utc()));
        s
    }

    /// Prints the end of the task and the token usage.
    fn report(&mut self, end: &End) {
        if let End::Failed(why) = end {
            self.term.line(Style::Err, &format!("Task failed: {why}"));
        }
        let u = &self.usage;
        let mut line = format!(
            "Tokens: {} in, {} out (cache: {} read, {} written) over {} request{}",
            u.input,
            u.output,
            u.cache_read,
            u.cache_write,
            self.turns,
            if self.turns == 1 { "" } else { "s" }
        );
        if self.estimated_replies > 0 {
            line.push_str(&format!(
                "; {} of them stopped at their first tool before the server reported usage, so those counts are estimates (~4 characters per token)",
                self.estimated_replies
            ));
        }
        self.term.info(&line);
    }
}
