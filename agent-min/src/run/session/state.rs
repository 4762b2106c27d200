//! Saved tasks: every task has an id, and after every turn its conversation and state are
//! written atomically (temp file, fsync, rename, fsync of the directory) to
//! `STATE_DIR/tasks/ID.json`, so a run killed at any moment — even by SIGKILL in the middle of a
//! streamed reply — leaves the last completed turn on disk for `agent-min resume`.
//!
//! What is saved: the task text, provider, model, base URL (without any user:password part or credential query parameter),
//! workspace, status, the conversation, the user message that was about to be sent
//! (`pending`), and the token/cost totals. Never the API key: it is not part of the state, and
//! as a second line of defence any occurrence of it (say, in a command's output that printed the
//! environment) is replaced by `[REDACTED]` before writing.
//!
//! The file is a `TaskFile` (serde): `agent-min/schemas/task.schema.json` is generated from
//! it. Fields added after the first version default when absent, so older saves load. Version
//! 2 added images (`read_file` of an image: an `image` part of a user message); a save holding
//! none is still written as version 1, which an agent-min from before images reads. Version 3
//! added a checkpoint's `workspace` (set only for a task resumed in another workspace, so any
//! other save keeps its older version). Version 4 added `task_progress`, the focus chain's
//! checklist (absent, and the save of an older version, while the model has given none).
//! Version 5 added what a server attaches to a reply to have it back: a call's `extra_content`
//! (Google's thought signatures) and a `reasoning_details` part (OpenRouter's). Version 6
//! added `cuts`, what each cut of the context window removed or changed, and a checkpoint's
//! `cuts` (how many came before it), so a task restore to a checkpoint taken before a cut gets
//! the conversation back as it was then (absent while no cut was made). Version 7 added
//! `file_context_warning`, the files a task-only checkpoint restore found changed since the
//! conversation it put back, for the next `resume` to name (Cline's pending file context warning;
//! absent when none, and once a resume has named them). Version 8 added a reply's `text_end`
//! parts, where its text stood among its thinking and calls when they came interleaved. A save
//! that does not fit — a missing field, a wrong type, an unknown role — is an error naming the
//! file and the field, never a task of empty strings.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::claim::{Busy, Claim};
use crate::run::budget::accounting::Totals;
pub(crate) use crate::run::budget::context::Undo;
use crate::run::llm::{ImagePart, Message, Part, Role, ToolUsePart};

/// File format version (the `version` field). A change to the format is a bump; this
/// agent-min reads every version from 1 up to it. A save is written with the oldest version
/// that has what it holds, so an older agent-min reads whatever it could.
pub(crate) const VERSION: u32 = 8;

/// The version of a save with a pending file context warning and no reply's text marks.
const VERSION_WITH_WARNING: u32 = 7;

/// The version of a save with cuts of the context window and no pending file context warning.
const VERSION_WITH_CUTS: u32 = 6;

/// The version of a save with what a server attached to a reply to have it back (Google's
/// `extra_content`, OpenRouter's `reasoning_details`) and no cut of the context window.
const VERSION_WITH_ECHOES: u32 = 5;

/// The version of a save with the focus chain's checklist and nothing a server attached to a
/// reply to have it back (version 5: Google's `extra_content`, OpenRouter's
/// `reasoning_details`).
const VERSION_WITH_PROGRESS: u32 = 4;

/// The version of a save with a checkpoint of another workspace and no checklist.
const VERSION_WITH_WORKSPACES: u32 = 3;

/// The version of a save with images and no checkpoint of another workspace.
const VERSION_WITH_IMAGES: u32 = 2;

/// The version of a save without images (the format before them, and the same file).
const VERSION_WITHOUT_IMAGES: u32 = 1;

/// The default state directory: `$XDG_STATE_HOME/agent-min`, else `~/.local/state/agent-min`.
pub(crate) fn default_dir() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("XDG_STATE_HOME")
        .filter(|p| p.is_absolute())
        .map(|p| p.join("agent-min"))
        .or_else(|| var("HOME").map(|h| h.join(".local/state/agent-min")))
}

/// A new task id: UTC date and time, then 6 hex digits (sorts by creation time).
pub fn new_id() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let stamp = crate::run::clock::format_utc(now.as_secs());
    // "2025-01-02 03:04:05 UTC" → "20250102-030405"
    let digits: String = stamp.chars().filter(char::is_ascii_digit).collect();
    let mix = (now.subsec_nanos() as u64) ^ (u64::from(std::process::id()) << 20);
    format!("{}-{}-{:06x}", &digits[..8], &digits[8..14], mix & 0xff_ffff)
}

/// Seconds since the Unix epoch.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// What identifies a task, fixed at its start.
#[derive(Debug, Clone, PartialEq)]
pub struct Meta {
    /// The task id.
    pub id: String,
    /// The task as given.
    pub task: String,
    /// When it was created (Unix seconds).
    pub created: u64,
    /// Provider name.
    pub provider: String,
    /// Model name.
    pub model: String,
    /// Base URL (no credentials).
    pub base_url: String,
    /// Absolute workspace root.
    pub cwd: String,
}

/// One checkpoint of the task's workspace (see `crate::run::checkpoints`), as saved in the task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckpointRecord {
    /// 1, 2, 3… within the task (what `agent-min checkpoints` commands take).
    pub number: u32,
    /// The request (turn) it belongs to.
    pub turn: u32,
    /// The shadow repository's commit.
    pub hash: String,
    /// When it was taken (Unix seconds).
    pub time: u64,
    /// The tool after which it was taken, `start` before a run's first edit or command, or
    /// `restore` before a restore.
    pub tool: String,
    /// How many files changed since the previous checkpoint.
    pub files_changed: u32,
    /// The first of those files.
    pub files: Vec<String>,
    /// Files left out (too large, unreadable).
    pub left_out: Vec<String>,
    /// How many messages the conversation had then (a task restore cuts it back to this).
    pub messages: u32,
    /// How many cuts of the context window came before it: a task restore undoes the later
    /// ones first (version 6; absent when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cuts: u32,
    /// The workspace it was taken in, when that is not the task's (`cwd`): the task was
    /// resumed in another workspace since (version 3; absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl CheckpointRecord {
    /// The workspace it was taken in, for a task whose workspace is `task_cwd`.
    pub(crate) fn workspace<'a>(&'a self, task_cwd: &'a str) -> &'a str {
        self.workspace.as_deref().unwrap_or(task_cwd)
    }
}

/// `records` of a task that worked in `was` and goes on in `now`: each checkpoint keeps naming
/// the workspace it was taken in (none for those of `now`).
pub(crate) fn moved_checkpoints(records: &mut [CheckpointRecord], was: &str, now: &str) {
    for r in records {
        let at = r.workspace.take().unwrap_or_else(|| was.to_string());
        r.workspace = (at != now).then_some(at);
    }
}

/// A task's status as saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Status {
    /// Not finished (or its run is gone: see [`Record::shown_status`]).
    Running,
    /// Ended with `attempt_completion`.
    Completed,
    /// Ended with an error or a limit.
    Failed,
    /// Stopped at a call that needed a person's answer, with no terminal to ask on.
    ApprovalNeeded,
}

impl Status {
    /// As saved.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::ApprovalNeeded => "approval_needed",
        }
    }

    fn parse(s: &str) -> Option<Status> {
        [Status::Running, Status::Completed, Status::Failed, Status::ApprovalNeeded].into_iter().find(|x| x.name() == s)
    }
}

/// Who said a saved message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SavedRole {
    /// The person, or tool results sent on their behalf.
    User,
    /// The model.
    Assistant,
}

/// A reply's thinking or native tool call, or a user message's image, as saved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum SavedPart {
    /// Reasoning, with Anthropic's signature if any.
    Thinking {
        /// The reasoning text.
        thinking: String,
        /// Anthropic's signature.
        signature: Option<String>,
    },
    /// Anthropic's encrypted thinking.
    RedactedThinking {
        /// The encrypted data.
        data: String,
    },
    /// A native tool call.
    ToolUse {
        /// The provider's call id.
        id: String,
        /// The tool name.
        name: String,
        /// The arguments: a JSON object's text.
        input: String,
        /// The result decided when the reply was read, if any.
        answer: Option<String>,
        /// What the server attached to the call to have it back (Google's `extra_content`:
        /// Gemini 3's thought signature; version 5).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        extra_content: Option<serde_json::Value>,
    },
    /// OpenRouter's `reasoning_details` of a reply, as streamed (version 5).
    ReasoningDetails {
        /// The reasoning objects, in order.
        details: Vec<serde_json::Value>,
    },
    /// Where the reply's text stood among its other blocks: the text since the previous mark,
    /// up to byte `end` of the message's text, was one block here (version 8; only a reply
    /// whose thinking, text and calls came interleaved has them).
    TextEnd {
        /// A byte offset into the message's text.
        end: usize,
    },
    /// An image a user message carries (version 2).
    Image {
        /// `image/png`, `image/jpeg` or `image/webp`.
        media_type: String,
        /// The bytes in standard base64.
        data: String,
        /// Width in pixels.
        width: u32,
        /// Height in pixels.
        height: u32,
    },
}

impl From<&Part> for SavedPart {
    fn from(p: &Part) -> Self {
        match p {
            Part::Thinking { text, signature } => {
                SavedPart::Thinking { thinking: text.clone(), signature: signature.clone() }
            }
            Part::RedactedThinking { data } => SavedPart::RedactedThinking { data: data.clone() },
            Part::ToolUse(t) => SavedPart::ToolUse {
                id: t.id.clone(),
                name: t.name.clone(),
                input: t.input.clone(),
                answer: t.answer.clone(),
                extra_content: t.extra.clone(),
            },
            Part::ReasoningDetails(d) => SavedPart::ReasoningDetails { details: d.clone() },
            Part::TextEnd(end) => SavedPart::TextEnd { end: *end },
            Part::Image(i) => SavedPart::Image {
                media_type: i.media_type.clone(),
                data: i.data.clone(),
                width: i.width,
                height: i.height,
            },
        }
    }
}

impl SavedPart {
    /// The part; `Err` names its field that is wrong and how.
    fn into_part(self) -> Result<Part, (&'static str, &'static str)> {
        Ok(match self {
            SavedPart::Thinking { thinking, signature } => Part::Thinking { text: thinking, signature },
            SavedPart::RedactedThinking { data } => Part::RedactedThinking { data },
            SavedPart::ToolUse { id, name, input, answer, extra_content } => {
                if serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&input).is_err() {
                    return Err(("input", "not the text of a JSON object"));
                }
                if extra_content.as_ref().is_some_and(|e| !e.is_object()) {
                    return Err(("extra_content", "not a JSON object"));
                }
                Part::ToolUse(ToolUsePart { id, name, input, answer, extra: extra_content })
            }
            SavedPart::ReasoningDetails { details } => Part::ReasoningDetails(details),
            SavedPart::TextEnd { end } => Part::TextEnd(end),
            SavedPart::Image { media_type, data, width, height } => {
                if !matches!(media_type.as_str(), "image/png" | "image/jpeg" | "image/webp") {
                    return Err(("media_type", "not image/png, image/jpeg or image/webp"));
                }
                Part::Image(ImagePart { media_type, data, width, height })
            }
        })
    }
}

/// Saved parts as parts; `Err` names the part's field (`parts[2].input`) and what is wrong.
fn into_parts(saved: Vec<SavedPart>) -> Result<Vec<Part>, (String, &'static str)> {
    saved
        .into_iter()
        .enumerate()
        .map(|(i, p)| p.into_part().map_err(|(field, what)| (format!("parts[{i}].{field}"), what)))
        .collect()
}

/// One message of the saved conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SavedMessage {
    /// Who said it.
    pub role: SavedRole,
    /// The whole text.
    pub content: String,
    /// Thinking and native tool calls, or images (absent in saves from before native tool calls).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<SavedPart>,
}

impl From<&Message> for SavedMessage {
    fn from(m: &Message) -> Self {
        let parts = m.parts.iter().map(SavedPart::from).collect();
        let role = match m.role {
            Role::User => SavedRole::User,
            Role::Assistant => SavedRole::Assistant,
        };
        SavedMessage { role, content: m.content.clone(), parts }
    }
}

impl SavedMessage {
    /// The message; `Err` names the field that is wrong and how (a tool call's input that is
    /// not a JSON object).
    fn into_message(self) -> Result<Message, (String, &'static str)> {
        let parts = into_parts(self.parts)?;
        let role = match self.role {
            SavedRole::User => Role::User,
            SavedRole::Assistant => Role::Assistant,
        };
        Ok(Message { role, content: self.content, parts })
    }
}

/// One cut of the context window: what it removed or changed, to put back (version 6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SavedCut {
    /// The conversation's length just after the cut.
    pub len: u32,
    /// How many messages it removed after the first user/assistant pair.
    pub removed: u32,
    /// Each message it removed or changed, as it was, by its index before the cut.
    pub was: Vec<SavedCutMessage>,
}

/// A message as it was before a cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SavedCutMessage {
    /// Its index in the conversation before the cut.
    pub index: u32,
    /// The message.
    pub message: SavedMessage,
}

impl From<&Undo> for SavedCut {
    fn from(u: &Undo) -> Self {
        let was = u.was.iter().map(|(i, m)| SavedCutMessage { index: *i as u32, message: m.into() }).collect();
        SavedCut { len: u.len as u32, removed: u.removed as u32, was }
    }
}

impl SavedCut {
    fn into_undo(self) -> Result<Undo, (String, &'static str)> {
        let was = self
            .was
            .into_iter()
            .enumerate()
            .map(|(k, w)| {
                let m =
                    w.message.into_message().map_err(|(field, what)| (format!("was[{k}].message.{field}"), what))?;
                Ok((w.index as usize, m))
            })
            .collect::<Result<_, _>>()?;
        Ok(Undo { len: self.len as usize, removed: self.removed as usize, was })
    }
}

/// The saved task file, `STATE_DIR/tasks/ID.json`: the format itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TaskFile {
    /// The format's version ([`VERSION`]).
    pub version: u32,
    /// The task id.
    pub id: String,
    /// The task as given.
    pub task: String,
    /// When it was created (Unix seconds).
    pub created: u64,
    /// Last save (Unix seconds).
    pub updated: u64,
    /// Where it stands.
    pub status: Status,
    /// The result (completed) or the reason (failed).
    pub outcome: Option<String>,
    /// Provider name.
    pub provider: String,
    /// Model name.
    pub model: String,
    /// Base URL (no credentials).
    pub base_url: String,
    /// Absolute workspace root.
    pub cwd: String,
    /// Turns (requests) so far.
    pub turns: u32,
    /// Token and cost totals over all runs.
    pub totals: Totals,
    /// The tokens of the last request that reported any (prompt, output and cache): what
    /// `# Context Window Usage` shows after a resume, as Cline reads it from its saved messages
    /// (absent in earlier saves).
    #[serde(default)]
    pub last_request_tokens: u64,
    /// The user message about to be sent (or being answered) when saved.
    pub pending: Option<String>,
    /// The images that go with `pending` (version 2; absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_parts: Vec<SavedPart>,
    /// The process that saved it (absent in early saves).
    #[serde(default)]
    pub pid: Option<u32>,
    /// That process's start time (Linux clock ticks since boot; absent in early saves).
    #[serde(default)]
    pub started: Option<u64>,
    /// The conversation: only completed turns.
    pub messages: Vec<SavedMessage>,
    /// The workspace's checkpoints (absent in saves from before checkpoints).
    #[serde(default)]
    pub checkpoints: Vec<CheckpointRecord>,
    /// The focus chain's checklist, the model's last `task_progress` (version 4; absent when
    /// it gave none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_progress: Option<String>,
    /// The cuts of the context window so far, oldest first: what each removed or changed
    /// (version 6; absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cuts: Vec<SavedCut>,
    /// The files a task-only checkpoint restore found changed since the conversation it put
    /// back (relative to `cwd`, or absolute), for the next `resume` to name (Cline's pending
    /// file context warning; version 7; absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub file_context_warning: Vec<String>,
}

/// A saved task, as read back.
#[derive(Debug, Clone)]
pub struct Record {
    /// Identity.
    pub meta: Meta,
    /// `running`, `completed` or `failed`.
    pub status: String,
    /// The result (completed) or the reason (failed).
    pub outcome: Option<String>,
    /// Last save (Unix seconds).
    pub updated: u64,
    /// Turns (requests) so far.
    pub turns: u32,
    /// The conversation: only completed turns.
    pub messages: Vec<Message>,
    /// The user message that was about to be sent (or was being answered) when last saved.
    pub pending: Option<String>,
    /// The images that go with it.
    pub pending_parts: Vec<Part>,
    /// Token and cost totals (see `Accounting::totals`).
    pub totals: Totals,
    /// The tokens of the last request that reported any.
    pub last_request_tokens: u64,
    /// The workspace's checkpoints taken by this task (none in tasks saved before checkpoints).
    pub checkpoints: Vec<CheckpointRecord>,
    /// The process that saved it: pid and start time (Linux clock ticks since boot).
    pub owner: Option<(u32, u64)>,
    /// The focus chain's checklist when saved.
    pub task_progress: Option<String>,
    /// The cuts of the context window so far, oldest first.
    pub(crate) cuts: Vec<Undo>,
    /// The files changed since the conversation's end, for the next resume to name.
    pub file_context_warning: Vec<String>,
}

impl Record {
    /// The status to show: a task still `running` whose process is gone (Ctrl-C, SIGTERM,
    /// `kill -9`, a crash) is `interrupted`.
    pub(crate) fn shown_status(&self) -> &str {
        match self.owner {
            Some(_) if self.status == "running" && self.running_in().is_none() => "interrupted",
            _ => &self.status,
        }
    }

    /// The process running the task now, if one is: a `running` task whose saving process is
    /// still alive (the same pid and start time).
    pub(crate) fn running_in(&self) -> Option<u32> {
        match self.owner {
            Some((pid, started)) if self.status == "running" && process_start(pid) == Some(started) => Some(pid),
            _ => None,
        }
    }

    /// Undoes the cuts of the context window from the `since`th on (the conversation as it was
    /// before them), and forgets them.
    pub(crate) fn undo_cuts_since(&mut self, since: usize) {
        let since = since.min(self.cuts.len());
        self.messages = crate::run::budget::context::uncut(&self.messages, &self.cuts[since..]);
        self.cuts.truncate(since);
    }

    /// Requests the model answered (the token summary's count), over all runs of the task;
    /// a request that failed or was cut off by an interrupt is not one.
    pub(crate) fn requests(&self) -> u64 {
        u64::from(self.totals.requests)
    }
}

/// The start time of process `pid` (field 22 of `/proc/PID/stat`), which tells a live process
/// from a later one given the same pid.
pub(crate) fn process_start(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may contain anything: count after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// What to save after a turn.
pub(crate) struct Snapshot<'a> {
    /// Identity.
    pub meta: &'a Meta,
    /// `running`, `completed` or `failed`.
    pub status: &'a str,
    /// Result or reason.
    pub outcome: Option<&'a str>,
    /// Turns so far.
    pub turns: u32,
    /// The conversation.
    pub messages: &'a [Message],
    /// The next user message, not yet answered.
    pub pending: Option<&'a str>,
    /// The images that go with it.
    pub pending_parts: &'a [Part],
    /// Totals.
    pub totals: Totals,
    /// The tokens of the last request that reported any.
    pub last_request_tokens: u64,
    /// The task's checkpoints.
    pub checkpoints: &'a [CheckpointRecord],
    /// The focus chain's checklist.
    pub task_progress: Option<&'a str>,
    /// The cuts of the context window so far.
    pub cuts: &'a [Undo],
    /// The files the next resume names as changed.
    pub file_context_warning: &'a [String],
}

/// A state directory.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
    secret: Option<String>,
    /// What became of the saves so far, for an honest last line.
    saves: std::cell::RefCell<Saves>,
    /// The task this store saves, held for this process ([`Store::hold`]).
    held: Option<std::sync::Arc<Claim>>,
}

/// What became of the saves so far.
#[derive(Debug, Clone, Default)]
struct Saves {
    /// At least one save succeeded.
    any_ok: bool,
    /// The error of the latest save, if it failed.
    last_error: Option<String>,
}

impl Store {
    /// Opens (creating, mode 0700) `dir`; `secret` is redacted from everything written.
    pub fn open(dir: &Path, secret: Option<String>) -> Result<Store, String> {
        let tasks = dir.join("tasks");
        fs::DirBuilder::new().recursive(true).mode(0o700).create(&tasks).map_err(|e| {
            format!(
                "cannot create the state directory {} ({e}); choose another with --state-dir DIR, or pass --no-save",
                tasks.display()
            )
        })?;
        sweep_stale_temps(&tasks);
        Ok(Store {
            dir: dir.to_path_buf(),
            secret: secret.filter(|s| s.len() >= 8),
            saves: Default::default(),
            held: None,
        })
    }

    /// The last line of a run: where the task is saved and how to continue it — or, if saving
    /// failed, exactly that. `Err` holds a warning.
    pub(crate) fn closing_line(&self, id: &str, failed: bool) -> Result<String, String> {
        let dir = self.dir.display();
        let saves = self.saves.borrow();
        match (&saves.last_error, saves.any_ok) {
            (None, _) => {
                let how = if failed { "Resume it with" } else { "Continue it with" };
                Ok(format!("Saved as {id} in {dir}. {how} `agent-min resume {id}`."))
            }
            (Some(e), true) => Err(format!(
                "The end of task {id} could NOT be saved in {dir} ({e}); `agent-min resume {id}` would continue from the last turn that was saved, before the failure."
            )),
            (Some(e), false) => Err(format!(
                "Task {id} was NOT saved: every save in {dir} failed ({e}); it cannot be resumed. Free space or fix the directory, or choose another with --state-dir."
            )),
        }
    }

    /// Claims task `id` for this process while the claim lives (see [`super::claim`]).
    pub(crate) fn claim(&self, id: &str) -> Result<Option<Claim>, Busy> {
        super::claim::claim(&self.dir.join("tasks"), id)
    }

    /// Holds task `id` for as long as this store lives: the store of a process running it.
    pub(crate) fn hold(&mut self, id: &str) -> Result<(), Busy> {
        self.held = self.claim(id)?.map(std::sync::Arc::new);
        Ok(())
    }

    /// The directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the task `id` is saved.
    pub(crate) fn path(&self, id: &str) -> PathBuf {
        self.dir.join("tasks").join(format!("{id}.json"))
    }

    /// Writes a snapshot atomically: temp file (0600) in the same directory, fsync, rename,
    /// fsync of the directory.
    pub(crate) fn save(&self, s: &Snapshot<'_>) -> std::io::Result<()> {
        let m = s.meta;
        let images = s.pending_parts.iter().chain(s.messages.iter().flat_map(|m| &m.parts));
        let has_images = images.into_iter().any(|p| matches!(p, Part::Image(_)));
        let echoes = |p: &Part| match p {
            Part::ToolUse(t) => t.extra.is_some(),
            Part::ReasoningDetails(_) => true,
            _ => false,
        };
        let has_echoes = s.messages.iter().flat_map(|m| &m.parts).any(echoes);
        let v = TaskFile {
            version: if s
                .messages
                .iter()
                .chain(s.cuts.iter().flat_map(|c| c.was.iter().map(|(_, m)| m)))
                .flat_map(|m| &m.parts)
                .any(|p| matches!(p, Part::TextEnd(_)))
            {
                VERSION
            } else if !s.file_context_warning.is_empty() {
                VERSION_WITH_WARNING
            } else if !s.cuts.is_empty() || s.checkpoints.iter().any(|c| c.cuts > 0) {
                VERSION_WITH_CUTS
            } else if has_echoes {
                VERSION_WITH_ECHOES
            } else if s.task_progress.is_some() {
                VERSION_WITH_PROGRESS
            } else if s.checkpoints.iter().any(|c| c.workspace.is_some()) {
                VERSION_WITH_WORKSPACES
            } else if has_images {
                VERSION_WITH_IMAGES
            } else {
                VERSION_WITHOUT_IMAGES
            },
            id: m.id.clone(),
            task: m.task.clone(),
            created: m.created,
            updated: now_secs(),
            status: Status::parse(s.status).ok_or_else(|| std::io::Error::other(format!("status {:?}", s.status)))?,
            outcome: s.outcome.map(str::to_string),
            provider: m.provider.clone(),
            model: m.model.clone(),
            base_url: crate::run::ui::redact::without_credentials(&m.base_url),
            cwd: m.cwd.clone(),
            turns: s.turns,
            totals: s.totals.clone(),
            last_request_tokens: s.last_request_tokens,
            pending: s.pending.map(str::to_string),
            pending_parts: s.pending_parts.iter().map(SavedPart::from).collect(),
            pid: Some(std::process::id()),
            started: process_start(std::process::id()),
            messages: s.messages.iter().map(SavedMessage::from).collect(),
            checkpoints: s.checkpoints.to_vec(),
            task_progress: s.task_progress.map(str::to_string),
            cuts: s.cuts.iter().map(SavedCut::from).collect(),
            file_context_warning: s.file_context_warning.to_vec(),
        };
        let text = serde_json::to_string_pretty(&v).map_err(std::io::Error::other)?;
        // Every secret this process knows (the key, secret-looking variables it withheld from
        // commands), then the key this store was opened with.
        let mut text = crate::run::ui::redact::apply(&text).into_owned();
        if let Some(k) = &self.secret {
            if text.contains(k.as_str()) {
                text = text.replace(k.as_str(), "[REDACTED]");
            }
        }
        let path = self.path(&m.id);
        let tmp = self.dir.join("tasks").join(format!(".{}.json.tmp.{}", m.id, std::process::id()));
        let _guard = crate::run::ui::interrupt::track_file(tmp.clone());
        let result = (|| {
            let mut f = OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            fs::rename(&tmp, &path)?;
            fs::File::open(self.dir.join("tasks"))?.sync_all()
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        let mut saves = self.saves.borrow_mut();
        saves.any_ok |= result.is_ok();
        saves.last_error = result.as_ref().err().map(ToString::to_string);
        result
    }

    /// Loads a task by id (or a unique prefix of one).
    pub fn load(&self, id: &str) -> Result<Record, String> {
        let exact = self.path(id);
        if exact.exists() {
            return read(&exact);
        }
        // By file name, so that a file that cannot be read is named with its error.
        let mut matches: Vec<PathBuf> = self.files()?.into_iter().filter(|p| stem(p).starts_with(id)).collect();
        match matches.len() {
            1 => read(&matches.remove(0)),
            0 => Err(format!("no saved task {id:?} in {}; list them with `agent-min history`", self.dir.display())),
            n => Err(format!("{n} saved tasks start with {id:?}; give more of the id (see `agent-min history`)")),
        }
    }

    /// The most recently saved task.
    #[cfg(test)]
    pub(crate) fn last(&self) -> Result<Record, String> {
        self.list()?
            .into_iter()
            .max_by(|a, b| (a.updated, &a.meta.id).cmp(&(b.updated, &b.meta.id)))
            .ok_or_else(|| format!("no saved tasks in {}; start one with `agent-min run`", self.dir.display()))
    }

    /// The most recently saved task whose workspace is `dir` (the Cline CLI's `--continue`); the
    /// error names the most recent task elsewhere, if there is one.
    pub(crate) fn last_in(&self, dir: &Path) -> Result<Record, String> {
        let here = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let (all, unreadable) = self.list_all()?;
        let newest =
            |v: Vec<Record>| v.into_iter().max_by(|a, b| (a.updated, &a.meta.id).cmp(&(b.updated, &b.meta.id)));
        let (mine, others): (Vec<Record>, Vec<Record>) =
            all.into_iter().partition(|r| Path::new(&r.meta.cwd) == here.as_path());
        let found = newest(mine);
        // A newer save that cannot be read may be this workspace's latest task: choosing an older
        // one instead would resume (or restore the files of) the wrong task.
        let since = found.as_ref().map_or(0, |r| r.updated);
        // One whose workspace can still be read, and is another, is not this one's.
        let maybe_here = |p: &Path| workspace_of_unreadable(p).is_none_or(|cwd| Path::new(&cwd) == here.as_path());
        if let Some((path, why)) = unreadable.iter().find(|(p, _)| modified_secs(p) >= since && maybe_here(p)) {
            return Err(format!(
                "{why}; it may be the latest task here, so none was chosen: give a task id (see `agent-min history`), or move {} away",
                path.display()
            ));
        }
        found.ok_or_else(|| match newest(others) {
            Some(r) => format!(
                "no saved task was run in {}; the most recent one elsewhere is {} (in {}): give its id",
                here.display(),
                r.meta.id,
                r.meta.cwd
            ),
            None => format!("no saved tasks in {}; start one with `agent-min run`", self.dir.display()),
        })
    }

    /// Every saved task, oldest first, and the files that could not be read, each with why.
    pub(crate) fn list_all(&self) -> Result<(Vec<Record>, Vec<Unreadable>), String> {
        let (mut v, mut bad) = (Vec::new(), Vec::new());
        for p in self.files()? {
            match read(&p) {
                Ok(r) => v.push(r),
                Err(why) => bad.push((p, why)),
            }
        }
        v.sort_by(|a, b| (a.meta.created, &a.meta.id).cmp(&(b.meta.created, &b.meta.id)));
        Ok((v, bad))
    }

    /// Every saved task, oldest first (unreadable files are skipped).
    #[cfg(test)]
    pub(crate) fn list(&self) -> Result<Vec<Record>, String> {
        self.list_all().map(|(v, _)| v)
    }

    /// The saved tasks' files (not the temporary files of saves under way).
    fn files(&self) -> Result<Vec<PathBuf>, String> {
        let dir = self.dir.join("tasks");
        let entries = fs::read_dir(&dir).map_err(|e| format!("cannot read {} ({e})", dir.display()))?;
        Ok(entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.extension().is_some_and(|x| x == "json")
                    && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .collect())
    }
}

/// The workspace a saved task's file names, read from a file that is not a valid task as a
/// whole (cut short, say): the first `"cwd"` key's string, if there is one.
fn workspace_of_unreadable(path: &Path) -> Option<String> {
    let text = fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&text);
    let after = &text[text.find("\"cwd\"")? + "\"cwd\"".len()..];
    let value = after.trim_start().strip_prefix(':')?;
    serde_json::Deserializer::from_str(value).into_iter::<String>().next()?.ok()
}

/// A saved task's file that could not be read, and why (the error names the file).
pub(crate) type Unreadable = (PathBuf, String);

/// A saved task's id: its file's name without `.json`.
fn stem(p: &Path) -> String {
    p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// When a file was last written, in seconds since the epoch (0 if unknown).
fn modified_secs(p: &Path) -> u64 {
    fs::metadata(p)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs())
}

/// Removes the temporary files (`.ID.json.tmp.PID`) of saves that were interrupted by a
/// crash or `kill -9`: those whose process is gone. A running agent's are left alone.
fn sweep_stale_temps(tasks: &Path) {
    let Ok(entries) = fs::read_dir(tasks) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some((_, pid)) = name.strip_prefix('.').and_then(|n| n.rsplit_once(".json.tmp.")) else { continue };
        let alive = pid.parse::<u32>().is_ok_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
        if !alive {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// Reads and checks one saved task: every error names the file, and the field where there is one.
fn read(path: &Path) -> Result<Record, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("cannot read {} ({e})", path.display()))?;
    let bad = |field: &str, what: &dyn std::fmt::Display| {
        format!("{} is not a valid saved task: field {field}: {what}", path.display())
    };
    let f: TaskFile = serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_str(&text))
        .map_err(|e| bad(&e.path().to_string(), e.inner()))?;
    if !(VERSION_WITHOUT_IMAGES..=VERSION).contains(&f.version) {
        return Err(bad(
            "version",
            &format!(
                "format version {} (this agent-min reads versions {VERSION_WITHOUT_IMAGES} to {VERSION}); use the agent-min that saved it",
                f.version
            ),
        ));
    }
    if f.id.is_empty() {
        return Err(bad("id", &"empty"));
    }
    let messages = f
        .messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| m.into_message().map_err(|(field, what)| bad(&format!("messages[{i}].{field}"), &what)))
        .collect::<Result<Vec<_>, _>>()?;
    let pending_parts = into_parts(f.pending_parts).map_err(|(field, what)| bad(&format!("pending_{field}"), &what))?;
    let cuts = f
        .cuts
        .into_iter()
        .enumerate()
        .map(|(i, c)| c.into_undo().map_err(|(field, what)| bad(&format!("cuts[{i}].{field}"), &what)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Record {
        meta: Meta {
            id: f.id,
            task: f.task,
            created: f.created,
            provider: f.provider,
            model: f.model,
            base_url: f.base_url,
            cwd: f.cwd,
        },
        status: f.status.name().to_string(),
        outcome: f.outcome,
        updated: f.updated,
        turns: f.turns,
        messages,
        pending: f.pending,
        pending_parts,
        totals: f.totals,
        last_request_tokens: f.last_request_tokens,
        checkpoints: f.checkpoints,
        owner: f.pid.zip(f.started),
        task_progress: f.task_progress,
        cuts,
        file_context_warning: f.file_context_warning,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn meta(id: &str) -> Meta {
        Meta {
            id: id.into(),
            task: "t".into(),
            created: 1,
            provider: "anthropic".into(),
            model: "m".into(),
            base_url: "https://user:pw@example.test/v1".into(),
            cwd: "/w".into(),
        }
    }

    #[test]
    fn save_load_round_trip_redacts_the_key_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(d.path(), Some("sk-SECRET-123456".into())).unwrap();
        let msgs = vec![Message::user("<task>t</task>"), Message::assistant("env shows sk-SECRET-123456")];
        let m = meta("20250101-000000-abcdef");
        let snap = Snapshot {
            meta: &m,
            status: "running",
            outcome: None,
            turns: 1,
            messages: &msgs,
            pending: Some("next"),
            pending_parts: &[],
            totals: Totals { requests: 1, ..Totals::default() },
            last_request_tokens: 1234,
            checkpoints: &[],
            task_progress: None,
            cuts: &[],
            file_context_warning: &[],
        };
        store.save(&snap).unwrap();
        let raw = fs::read_to_string(store.path(&m.id)).unwrap();
        assert!(!raw.contains("sk-SECRET") && raw.contains("[REDACTED]"));
        assert!(!raw.contains("user:pw"));
        let r = store.load("20250101").unwrap();
        assert_eq!(r.messages.len(), 2);
        assert_eq!(r.messages[1].role, Role::Assistant);
        assert_eq!(r.pending.as_deref(), Some("next"));
        assert_eq!(r.last_request_tokens, 1234);
        assert_eq!(r.meta.base_url, "https://example.test/v1");
        assert_eq!(fs::read_dir(d.path().join("tasks")).unwrap().count(), 1);
        assert_eq!(store.last().unwrap().meta.id, m.id);
        assert!(store.load("nope").unwrap_err().contains("agent-min history"));
    }

    /// Checkpoints keep naming the workspace they were taken in as a task moves, and a save
    /// holding such a checkpoint is version 3.
    #[test]
    fn moved_checkpoints_name_their_workspace_and_make_version_3() {
        let cp = |n: u32, ws: Option<&str>| CheckpointRecord {
            number: n,
            turn: 1,
            hash: "h".into(),
            time: 0,
            tool: "t".into(),
            files_changed: 0,
            files: vec![],
            left_out: vec![],
            messages: 0,
            cuts: 0,
            workspace: ws.map(str::to_string),
        };
        let mut v = vec![cp(1, None), cp(2, None)];
        moved_checkpoints(&mut v, "/a", "/b");
        assert_eq!(v.iter().map(|c| c.workspace.as_deref()).collect::<Vec<_>>(), [Some("/a"), Some("/a")]);
        v.push(cp(3, None));
        moved_checkpoints(&mut v, "/b", "/a");
        assert_eq!(v.iter().map(|c| c.workspace.as_deref()).collect::<Vec<_>>(), [None, None, Some("/b")]);
        moved_checkpoints(&mut v, "/a", "/a");
        assert_eq!(v[2].workspace(".."), "/b");
        assert_eq!(v[0].workspace("/a"), "/a");

        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), None).unwrap();
        let m = meta("20250101-000000-abcdef");
        let save = |checkpoints: &[CheckpointRecord]| save_bare(&store, &m, checkpoints, None);
        let (version, r) = save(&v);
        assert_eq!(version, 3);
        assert_eq!(r.checkpoints, v);
        let (version, _) = save(&v[..2]);
        assert_eq!(version, 1, "no workspace of another: the older format");
    }

    /// Saves a task of no messages with these checkpoints and checklist: the file's `version`,
    /// and the task read back.
    fn save_bare(
        store: &Store,
        m: &Meta,
        checkpoints: &[CheckpointRecord],
        task_progress: Option<&str>,
    ) -> (Value, Record) {
        store.save(&Snapshot { checkpoints, task_progress, ..snapshot_of(m) }).unwrap();
        let raw: Value = serde_json::from_str(&fs::read_to_string(store.path(&m.id)).unwrap()).unwrap();
        (raw["version"].clone(), store.load(&m.id).unwrap())
    }

    /// A save holding the focus chain's checklist is version 4 and gives it back; without one
    /// it keeps the older version.
    #[test]
    fn a_checklist_round_trips_as_version_4() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), None).unwrap();
        let m = meta("20250101-000000-abcdef");
        let save = |task_progress: Option<&str>| save_bare(&store, &m, &[], task_progress);
        let (version, r) = save(Some("- [x] a\n- [ ] b"));
        assert_eq!(version, 4);
        assert_eq!(r.task_progress.as_deref(), Some("- [x] a\n- [ ] b"));
        let (version, r) = save(None);
        assert_eq!(version, 1);
        assert_eq!(r.task_progress, None);
    }

    /// A pending file context warning round-trips as version 7; without one a save keeps its
    /// older version (and a resume that named the files saves it without).
    #[test]
    fn a_file_context_warning_round_trips_as_version_7() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), None).unwrap();
        let m = meta("20250101-000000-abcdef");
        let files = ["a.txt".to_string(), "/elsewhere/b".to_string()];
        store.save(&Snapshot { file_context_warning: &files, ..snapshot_of(&m) }).unwrap();
        let raw: Value = serde_json::from_str(&fs::read_to_string(store.path(&m.id)).unwrap()).unwrap();
        assert_eq!(raw["version"], 7);
        assert_eq!(store.load(&m.id).unwrap().file_context_warning, files);
        let (version, r) = save_bare(&store, &m, &[], None);
        assert_eq!(version, 1);
        assert!(r.file_context_warning.is_empty());
    }

    /// A reply's text marks round-trip as version 8 — also when only a cut of the context
    /// window still holds the reply (an older agent-min would fail on the part there).
    #[test]
    fn text_marks_round_trip_as_version_8_also_in_a_cut() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), None).unwrap();
        let m = meta("20250101-000000-abcdef");
        let mut reply = Message::assistant("ab");
        reply.parts = vec![
            Part::Thinking { text: "t".into(), signature: Some("S".into()) },
            Part::TextEnd(1),
            Part::RedactedThinking { data: "R".into() },
            Part::TextEnd(2),
        ];
        let msgs = [Message::user("<task>t</task>"), reply.clone()];
        store.save(&Snapshot { messages: &msgs, ..snapshot_of(&m) }).unwrap();
        let raw: Value = serde_json::from_str(&fs::read_to_string(store.path(&m.id)).unwrap()).unwrap();
        assert_eq!(raw["version"], 8);
        assert_eq!(store.load(&m.id).unwrap().messages[1].parts, reply.parts);
        let cuts = [Undo { len: 1, removed: 0, was: vec![(1, reply)] }];
        store.save(&Snapshot { messages: &msgs[..1], cuts: &cuts, ..snapshot_of(&m) }).unwrap();
        let raw: Value = serde_json::from_str(&fs::read_to_string(store.path(&m.id)).unwrap()).unwrap();
        assert_eq!(raw["version"], 8);
    }

    /// What a server attached to a reply to have it back (a call's `extra_content`, OpenRouter's
    /// `reasoning_details`) round-trips, as version 5; a save without keeps its older version.
    #[test]
    fn what_a_server_attached_to_a_reply_round_trips_as_version_5() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), None).unwrap();
        let m = meta("20250101-000000-abcdef");
        let details = vec![serde_json::json!({"type": "reasoning.encrypted", "data": "SIG", "id": "c1", "index": 0})];
        let extra = serde_json::json!({"google": {"thought_signature": "TS"}});
        let mut reply = Message::assistant("");
        reply.parts = vec![
            Part::ReasoningDetails(details),
            Part::ToolUse(ToolUsePart {
                id: "c1".into(),
                name: "read_file".into(),
                input: "{}".into(),
                answer: None,
                extra: Some(extra),
            }),
        ];
        let msgs = [Message::user("<task>t</task>"), reply];
        let save = |messages: &[Message]| {
            store.save(&Snapshot { messages, ..snapshot_of(&m) }).unwrap();
            let raw: Value = serde_json::from_str(&fs::read_to_string(store.path(&m.id)).unwrap()).unwrap();
            (raw["version"].clone(), store.load(&m.id).unwrap())
        };
        let (version, r) = save(&msgs);
        assert_eq!(version, 5);
        assert_eq!(r.messages[1].parts, msgs[1].parts);
        let (version, _) = save(&msgs[..1]);
        assert_eq!(version, 1);
    }

    /// A save with images is version 2 and gives them back; one without stays version 1, which
    /// an agent-min from before images reads.
    #[test]
    fn images_round_trip_as_version_2_and_a_save_without_stays_version_1() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(d.path(), None).unwrap();
        let image = |data: &str| {
            Part::Image(ImagePart { media_type: "image/png".into(), data: data.into(), width: 2, height: 1 })
        };
        let mut read = Message::user("[read_file for 'p.png'] Result:\nSuccessfully read image");
        read.parts = vec![image("AAAA")];
        let msgs = vec![Message::user("<task>t</task>"), Message::assistant("a"), read, Message::assistant("b")];
        let m = meta("20250101-000000-abcdef");
        let pending = [image("BBBB")];
        let snap = |messages: &[Message], pending_parts: &[Part]| {
            store
                .save(&Snapshot {
                    meta: &m,
                    status: "running",
                    outcome: None,
                    turns: 2,
                    messages,
                    pending: Some("next"),
                    pending_parts,
                    totals: Totals::default(),
                    last_request_tokens: 0,
                    checkpoints: &[],
                    task_progress: None,
                    cuts: &[],
                    file_context_warning: &[],
                })
                .unwrap();
            let raw: serde_json::Value = serde_json::from_str(&fs::read_to_string(store.path(&m.id)).unwrap()).unwrap();
            (raw["version"].clone(), store.load(&m.id).unwrap())
        };
        let (version, r) = snap(&msgs, &pending);
        assert_eq!(version, 2);
        let parts = |ms: &[Message]| ms.iter().map(|m| (m.content.clone(), m.parts.clone())).collect::<Vec<_>>();
        assert_eq!(parts(&r.messages), parts(&msgs));
        assert_eq!(r.pending_parts, pending);
        let (version, r) = snap(&msgs[..2], &[]);
        assert_eq!(version, 1);
        assert!(r.pending_parts.is_empty());
        let (version, _) = snap(&msgs[..2], &pending);
        assert_eq!(version, 2, "an image waiting to be sent counts");
    }

    #[test]
    fn checkpoints_round_trip_and_a_task_saved_before_them_still_loads() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(d.path(), None).unwrap();
        let m = meta("20250101-000000-abcdef");
        let cp = CheckpointRecord {
            number: 1,
            turn: 2,
            hash: "a".repeat(40),
            time: 5,
            tool: "write_to_file".into(),
            files_changed: 1,
            files: vec!["a.txt".into()],
            left_out: vec![],
            messages: 4,
            cuts: 0,
            workspace: None,
        };
        let snap = Snapshot {
            meta: &m,
            status: "running",
            outcome: None,
            turns: 2,
            messages: &[],
            pending: None,
            pending_parts: &[],
            totals: Totals::default(),
            last_request_tokens: 77,
            checkpoints: std::slice::from_ref(&cp),
            task_progress: None,
            cuts: &[],
            file_context_warning: &[],
        };
        store.save(&snap).unwrap();
        assert_eq!(store.load(&m.id).unwrap().checkpoints, vec![cp]);
        // A file written before checkpoints (or the last request's tokens) has no such field.
        let mut old: Value = serde_json::from_str(&fs::read_to_string(store.path(&m.id)).unwrap()).unwrap();
        old.as_object_mut().unwrap().remove("checkpoints");
        old.as_object_mut().unwrap().remove("last_request_tokens");
        fs::write(store.path(&m.id), old.to_string()).unwrap();
        let r = store.load(&m.id).unwrap();
        assert!(r.checkpoints.is_empty());
        assert_eq!(r.last_request_tokens, 0);
        assert_eq!(r.turns, 2);
    }

    #[test]
    fn native_parts_round_trip_and_old_saves_still_load() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(d.path(), None).unwrap();
        let mut a = Message::assistant("Reading.");
        a.parts = vec![
            Part::Thinking { text: "plan".into(), signature: Some("SIG".into()) },
            Part::RedactedThinking { data: "OPAQUE".into() },
            Part::ToolUse(ToolUsePart {
                id: "toolu_1".into(),
                name: "read_file".into(),
                input: r#"{"path":"a"}"#.into(),
                answer: None,
                extra: None,
            }),
            Part::ToolUse(ToolUsePart {
                id: "toolu_2".into(),
                name: "list_files".into(),
                input: "{}".into(),
                answer: Some("Tool [list_files] was not executed".into()),
                extra: None,
            }),
        ];
        let msgs = vec![Message::user("t"), a.clone()];
        let m = meta("20250101-000000-aaaaaa");
        let snap = Snapshot {
            meta: &m,
            status: "running",
            outcome: None,
            turns: 1,
            messages: &msgs,
            pending: None,
            pending_parts: &[],
            totals: Totals::default(),
            last_request_tokens: 0,
            checkpoints: &[],
            task_progress: None,
            cuts: &[],
            file_context_warning: &[],
        };
        store.save(&snap).unwrap();
        let r = store.load(&m.id).unwrap();
        assert_eq!(r.messages[1].parts, a.parts);
        assert!(r.messages[0].parts.is_empty());

        // A task saved before native calls existed: no `parts` anywhere.
        let mut old: Value = serde_json::from_str(OLD_SAVE).unwrap();
        old["id"] = "20240101-000000-bbbbbb".into();
        for m in old["messages"].as_array_mut().unwrap() {
            m.as_object_mut().unwrap().remove("parts");
        }
        fs::write(store.path("20240101-000000-bbbbbb"), old.to_string()).unwrap();
        let r = store.load("20240101").unwrap();
        assert_eq!(r.messages.len(), 3);
        assert!(r.messages.iter().all(|m| m.parts.is_empty()));
        assert!(!fs::read_to_string(store.path(&m.id)).unwrap().contains("\"parts\": []"));
    }

    /// A task saved by agent-min before the format was typed (commit e15e7d9), with every kind
    /// of field: native parts, a checkpoint, totals, a pending message.
    const OLD_SAVE: &str = include_str!("../../../tests/fixtures/saved-task-v1.json");

    #[test]
    fn a_save_written_before_the_typed_format_loads_unchanged() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(d.path(), None).unwrap();
        fs::write(store.path("20250101-000000-abcdef"), OLD_SAVE).unwrap();
        let r = store.load("20250101-000000-abcdef").unwrap();
        assert_eq!(
            (r.meta.task.as_str(), r.meta.model.as_str(), r.status.as_str()),
            ("read a.txt", "claude-sonnet-4-5", "completed")
        );
        assert_eq!((r.outcome.as_deref(), r.pending.as_deref(), r.turns), (Some("done"), Some("next"), 2));
        assert_eq!(
            r.totals,
            Totals {
                requests: 2,
                tokens_in: 100,
                tokens_out: 20,
                cost_usd: Some(0.0006),
                estimated_requests: 1,
                ..Totals::default()
            }
        );
        assert_eq!(r.messages.len(), 3);
        assert_eq!(r.messages[1].role, Role::Assistant);
        assert_eq!(r.messages[1].parts.len(), 3);
        assert!(matches!(&r.messages[1].parts[2], Part::ToolUse(t) if t.input == r#"{"path":"a.txt"}"#));
        assert_eq!(r.checkpoints[0].hash, "a".repeat(40));
        // Saved again, it is the same file but for the time and the process.
        let snap = Snapshot {
            meta: &r.meta,
            status: &r.status,
            outcome: r.outcome.as_deref(),
            turns: r.turns,
            messages: &r.messages,
            pending: r.pending.as_deref(),
            pending_parts: &r.pending_parts,
            totals: r.totals.clone(),
            last_request_tokens: r.last_request_tokens,
            checkpoints: &r.checkpoints,
            task_progress: None,
            cuts: &[],
            file_context_warning: &[],
        };
        store.save(&snap).unwrap();
        let strip = |t: &str| {
            let mut v: Value = serde_json::from_str(t).unwrap();
            for k in ["updated", "pid", "started"] {
                v.as_object_mut().unwrap().remove(k);
            }
            v
        };
        // Saved again, it gains the one field added since, at its default.
        let mut again = strip(&fs::read_to_string(store.path(&r.meta.id)).unwrap());
        assert_eq!(again.as_object_mut().unwrap().remove("last_request_tokens"), Some(Value::from(0)));
        assert_eq!(again, strip(OLD_SAVE));
    }

    #[test]
    fn a_corrupt_save_is_an_error_naming_the_file_and_the_field() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(d.path(), None).unwrap();
        let id = "20250101-000000-abcdef";
        let path = store.path(id);
        let with = |edit: &dyn Fn(&mut Value)| {
            let mut v: Value = serde_json::from_str(OLD_SAVE).unwrap();
            edit(&mut v);
            fs::write(&path, v.to_string()).unwrap();
            store.load(id).unwrap_err()
        };
        let file = path.display().to_string();
        let e = with(&|v| v["messages"][2]["role"] = "system".into());
        assert!(e.starts_with(&file) && e.contains("field messages[2].role: unknown variant `system`"), "{e}");
        let e = with(&|v| v["task"] = 5.into());
        assert!(e.starts_with(&file) && e.contains("field task: invalid type: integer `5`, expected a string"), "{e}");
        let e = with(&|v| drop(v.as_object_mut().unwrap().remove("status")));
        assert!(e.contains("missing field `status`"), "{e}");
        let e = with(&|v| v["status"] = "paused".into());
        assert!(e.contains("field status: unknown variant `paused`"), "{e}");
        let e = with(&|v| v["messages"][1]["parts"][2]["input"] = "[1]".into());
        assert!(e.contains("field messages[1].parts[2].input: not the text of a JSON object"), "{e}");
        let e = with(&|v| v["checkpoints"][0]["surprise"] = true.into());
        assert!(e.contains("field checkpoints[0]") && e.contains("unknown field `surprise`"), "{e}");
        let e = with(&|v| v["messages"][1]["parts"][2]["extra_content"] = "TS".into());
        assert!(e.contains("field messages[1].parts[2].extra_content: not a JSON object"), "{e}");
        let e = with(&|v| v["version"] = 9.into());
        assert!(e.contains("field version: format version 9 (this agent-min reads versions 1 to 8)"), "{e}");
        fs::write(&path, "{\"version\": 1, \"id\": ").unwrap();
        let e = store.load(id).unwrap_err();
        assert!(e.starts_with(&file) && e.contains("EOF"), "{e}");
    }

    #[test]
    fn a_running_task_whose_process_is_gone_shows_as_interrupted() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(d.path(), None).unwrap();
        let m = meta("20250101-000000-aaaaaa");
        let snap = Snapshot {
            meta: &m,
            status: "running",
            outcome: None,
            turns: 3,
            messages: &[],
            pending: None,
            pending_parts: &[],
            totals: Totals { requests: 2, ..Totals::default() },
            last_request_tokens: 0,
            checkpoints: &[],
            task_progress: None,
            cuts: &[],
            file_context_warning: &[],
        };
        store.save(&snap).unwrap();
        let mut r = store.load(&m.id).unwrap();
        // Saved by this live process: running.
        assert_eq!(r.owner.map(|o| o.0), Some(std::process::id()));
        assert_eq!(r.shown_status(), "running");
        assert_eq!(r.requests(), 2);
        // The same pid started at another time is another process: the saver is gone.
        r.owner = r.owner.map(|(p, t)| (p, t + 1));
        assert_eq!(r.shown_status(), "interrupted");
        r.status = "failed".into();
        assert_eq!(r.shown_status(), "failed");
    }

    #[test]
    fn ids_are_dated_and_distinct() {
        let a = new_id();
        assert_eq!(a.len(), "20250101-000000-abcdef".len());
        assert!(a.starts_with("20"));
    }

    #[test]
    fn credentials_in_the_url_are_stripped() {
        use crate::run::ui::redact::without_credentials;
        assert_eq!(without_credentials("http://a:b@h:1/x@y"), "http://h:1/x@y");
        assert_eq!(without_credentials("http://h/v1"), "http://h/v1");
        assert_eq!(without_credentials("http://h?k=a@b/c"), "http://h?k=a@b/c", "the authority ends at `?`");
        // A gateway's key in the query is not saved; its other parameters are.
        let azure = "https://x.openai.azure.com/openai/deployments/d?api-version=2024-10-21&api-key=SECRET1#f";
        assert_eq!(
            without_credentials(azure),
            "https://x.openai.azure.com/openai/deployments/d?api-version=2024-10-21#f"
        );
        assert_eq!(without_credentials("https://gw/v1?token=S&x=1&sig=S2"), "https://gw/v1?x=1");
        assert_eq!(without_credentials("https://gw/v1?access_token=S"), "https://gw/v1");
    }

    fn snapshot_of(m: &Meta) -> Snapshot<'_> {
        Snapshot {
            meta: m,
            status: "running",
            outcome: None,
            turns: 1,
            messages: &[],
            pending: None,
            pending_parts: &[],
            checkpoints: &[],
            task_progress: None,
            totals: Totals::default(),
            last_request_tokens: 0,
            cuts: &[],
            file_context_warning: &[],
        }
    }

    #[test]
    fn a_newer_save_cut_short_passes_the_latest_task_over_only_when_it_names_another_workspace() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(d.path(), None).unwrap();
        let (here, there) = (d.path().join("here"), d.path().join("there"));
        fs::create_dir_all(&here).unwrap();
        fs::create_dir_all(&there).unwrap();
        let mine = Meta { cwd: here.display().to_string(), ..meta("20250101-000000-aaaaaa") };
        store.save(&snapshot_of(&mine)).unwrap();
        // A later task of another workspace, its file cut short after its `cwd`.
        let other = Meta { cwd: there.display().to_string(), ..meta("20250102-000000-bbbbbb") };
        store.save(&snapshot_of(&other)).unwrap();
        let text = fs::read_to_string(store.path(&other.id)).unwrap();
        let cut = text.find("\"turns\"").unwrap();
        fs::write(store.path(&other.id), &text[..cut]).unwrap();
        assert_eq!(store.last_in(&here).unwrap().meta.id, mine.id);
        // Cut before its `cwd`: it may be this workspace's latest task.
        fs::write(store.path(&other.id), &text[..text.find("\"cwd\"").unwrap()]).unwrap();
        let err = store.last_in(&here).unwrap_err();
        assert!(err.contains("none was chosen") && err.contains(&format!("{}.json", other.id)), "{err}");
    }

    #[test]
    fn the_closing_line_tells_whether_the_saves_worked() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(d.path(), None).unwrap();
        let m = meta("20250101-000000-abcdef");
        store.save(&snapshot_of(&m)).unwrap();
        assert!(store.closing_line(&m.id, false).unwrap().starts_with("Saved as 20250101-000000-abcdef"));
        // The state directory disappears (a full or unmounted disk behaves alike): saves fail.
        fs::remove_dir_all(d.path().join("tasks")).unwrap();
        fs::write(d.path().join("tasks"), "not a directory").unwrap();
        assert!(store.save(&snapshot_of(&m)).is_err());
        let warn = store.closing_line(&m.id, false).unwrap_err();
        assert!(warn.contains("could NOT be saved") && !warn.contains("Saved as"), "{warn}");
        let never = Store { saves: Default::default(), ..store.clone() };
        assert!(never.save(&snapshot_of(&m)).is_err());
        let warn = never.closing_line(&m.id, true).unwrap_err();
        assert!(warn.contains("was NOT saved") && warn.contains("cannot be resumed"), "{warn}");
    }

    #[test]
    fn temp_files_of_dead_processes_are_swept_on_open() {
        let d = tempfile::tempdir().unwrap();
        let tasks = d.path().join("tasks");
        fs::create_dir_all(&tasks).unwrap();
        let stale = tasks.join(".20250101-000000-abcdef.json.tmp.4194305"); // above pid_max: no such process
        let live = tasks.join(format!(".20250101-000000-abcdef.json.tmp.{}", std::process::id()));
        let task = tasks.join("20250101-000000-abcdef.json");
        for f in [&stale, &live, &task] {
            fs::write(f, "{}").unwrap();
        }
        Store::open(d.path(), None).unwrap();
        assert!(!stale.exists(), "a dead process's temp file was left");
        assert!(live.exists(), "a running save's temp file was removed");
        assert!(task.exists());
    }
}
