//! The native dialect: the tools travel as definitions beside the prompt (each tool's from its
//! declaration, then the MCP servers'), a call is a `tool_use` / `tool_calls` part of the reply
//! ([`crate::run::native`]).

use serde_json::Value;

use super::Dialect;
use crate::run::llm::tool_specs::Tools;
use crate::run::llm::{ApiError, Message, Transport};
use crate::run::mcp::Hub;
use crate::run::native;
use crate::run::reply::{Reply, Screen};
use crate::run::tools::registry;
use crate::run::ui::term::Term;

/// Tool calls as the API's own.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Native {
    /// A reply with no native call runs a complete XML call written in its text.
    pub recover: bool,
}

/// The declared tools' native definitions in the order of Cline's native variants, which list
/// `ask_followup_question` first and the rest as its XML prompt does.
pub(crate) fn definitions() -> Vec<Value> {
    let (mut first, rest): (Vec<_>, Vec<_>) =
        registry::offered().into_iter().partition(|t| t.name == "ask_followup_question");
    first.extend(rest);
    first
        .iter()
        .map(|t| serde_json::from_str(t.native).unwrap_or_else(|e| panic!("tools/decl/{}.json: {e}", t.name)))
        .collect()
}

impl Dialect for Native {
    fn name(&self) -> &'static str {
        "native"
    }

    fn system_prompt(&self, provider: &str, model: &str, cwd: &str) -> String {
        native::system(super::system::system(provider, model, cwd))
    }

    fn insert_mcp(&self, prompt: &mut String, hub: &mut Hub) {
        crate::run::mcp::prompt::insert_native(prompt, hub);
    }

    fn offer_tools(&self, transport: &mut dyn Transport, hub: &mut Hub, cwd: &str, term: &mut Term) {
        let extra = crate::run::mcp::native::tool_specs(hub, cwd, term);
        transport.set_tools(Tools { builtin: definitions(), extra });
    }

    fn read_reply(
        &self,
        transport: &mut dyn Transport,
        system: &str,
        messages: &[Message],
        screen: &mut Screen<'_>,
    ) -> Result<Reply, ApiError> {
        native::read_reply(transport, system, messages, screen, self.recover)
    }

    fn no_tools_used(&self) -> String {
        native::no_tools_used()
    }

    fn check_resume(&self, _messages: &[Message]) -> Result<(), String> {
        Ok(())
    }

    fn tools_ignored_hint(&self) -> Option<&'static str> {
        Some(native::TOOLS_IGNORED)
    }
}
