//! The dialect tool calls are made in, as one interface ([`Dialect`]) with one implementation
//! per dialect: Cline's XML tags in the reply text (`xml::Xml`) or the API's native tool calls
//! (`native::Native`). The loop (`task.rs`) holds a `&'static dyn Dialect` and never asks
//! which one it is.
//!
//! Owns: what differs between the dialects — the system prompt, what the MCP servers add to it,
//! the tool definitions a request carries, how a reply's calls are read, the no-tool nudge and
//! which saved conversations can go on. May use: [`crate::run::prompt`], [`crate::run::native`],
//! [`crate::run::stream`], [`crate::run::mcp`] (prompt, native definitions),
//! `crate::run::tools::registry`, `crate::run::llm`, `crate::run::reply`, `crate::run::ui`
//! (the terminal a reply is shown on).

pub(crate) mod native;
pub mod system;
pub(crate) mod xml;

use crate::run::llm::{ApiError, Message, Transport};
use crate::run::mcp::Hub;
use crate::run::prompt::system::Family;
use crate::run::reply::{Reply, Screen};
use crate::run::ui::term::Term;

/// One way of making tool calls, from the prompt to the reply read.
pub trait Dialect: std::fmt::Debug + Sync {
    /// `xml` or `native`.
    fn name(&self) -> &'static str;

    /// Cline's prompt variant for `provider`'s `model` in this dialect.
    fn family(&self, provider: &str, model: &str) -> Family;

    /// The system prompt of `family` in workspace `cwd`, before the project's rules and the
    /// MCP servers; `parallel`: several tool calls may come in one reply.
    fn system_prompt(&self, family: Family, cwd: &str, parallel: bool) -> String;

    /// Adds what the MCP servers bring to a built prompt (nothing without servers);
    /// `task_progress`: Cline's focus chain is on.
    fn insert_mcp(&self, prompt: &mut String, hub: &mut Hub, task_progress: bool);

    /// Before each request: the tool definitions the transport sends for `family` (none in XML).
    fn offer_tools(
        &self,
        family: Family,
        transport: &mut dyn Transport,
        hub: &mut Hub,
        cwd: &str,
        offer: Offer,
        term: &mut Term,
    );

    /// Before each request: `prompt` with the skills' SKILLS `section` and, where the prompt
    /// lists the tools (XML), `use_skill`'s section; unchanged when `section` is empty.
    fn with_skills(&self, prompt: &str, section: &str) -> String;

    /// Streams one reply and reads its text and complete calls (only the first with
    /// `screen.one_tool`).
    fn read_reply(
        &self,
        transport: &mut dyn Transport,
        system: &str,
        messages: &[Message],
        screen: &mut Screen<'_>,
    ) -> Result<Reply, ApiError>;

    /// Cline's `noToolsUsed` in this dialect.
    fn no_tools_used(&self) -> String;

    /// What the model hears when its reply ended inside a call to `name`: cut by the output
    /// limit (`cut`) or not.
    fn truncated_tool(&self, name: &str, cut: bool) -> String;

    /// What the model hears when the output limit cut its reply before any call.
    fn truncated_text(&self) -> String;

    /// Whether a saved conversation can go on in this dialect; why not otherwise.
    fn check_resume(&self, messages: &[Message]) -> Result<(), String>;

    /// What the person is told when two replies in a row were offered tools and called none
    /// in this dialect's own way (`None`: the dialect offers no tools to ignore).
    fn tools_ignored_hint(&self) -> Option<&'static str> {
        None
    }
}

/// What a request's tools hold besides the declared ones.
#[derive(Debug, Clone, Copy)]
pub struct Offer {
    /// There are skills, and so `use_skill`.
    pub skills: bool,
    /// Cline's focus chain is on: the tools take its `task_progress` parameter.
    pub task_progress: bool,
    /// Several calls may come in one reply (not `--one-tool-per-reply`): Cline's
    /// `enableParallelToolCalling`.
    pub parallel: bool,
    /// `ask_followup_question` is offered: not under `--yolo` (Cline's spec requires
    /// `!yoloModeToggled`).
    pub ask: bool,
}

/// The dialect: native tool calls when `native` (recovering calls written as text), else XML.
pub fn of(native: bool) -> &'static dyn Dialect {
    of_run(native, true, false)
}

/// [`of`], with text-call recovery on or off (`--no-recover-text-calls`), and the XML dialect
/// chosen by `--tool-calls auto` (`native_setting`: Cline's native-calls setting on, no native
/// variant taking the model) or by `--tool-calls xml` (off).
pub(crate) fn of_run(native: bool, recover: bool, native_setting: bool) -> &'static dyn Dialect {
    match (native, recover, native_setting) {
        (true, true, _) => &native::Native { recover: true },
        (true, false, _) => &native::Native { recover: false },
        (false, _, true) => &xml::Xml { native_setting: true },
        (false, _, false) => &xml::Xml { native_setting: false },
    }
}

/// The native tool definitions `family` sends from workspace `cwd`, before the MCP servers'
/// (for the snapshot tests); `focus_chain`: with Cline's `task_progress` parameter; `yolo`: as
/// `--yolo` offers them.
pub fn native_definitions(family: Family, cwd: &str, focus_chain: bool, yolo: bool) -> Vec<serde_json::Value> {
    let offer = Offer { skills: false, task_progress: focus_chain, parallel: true, ask: !yolo };
    native::offered(family, cwd, offer)
}
