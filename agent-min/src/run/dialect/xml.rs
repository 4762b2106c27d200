//! Cline's XML dialect: the tools are sections of the system prompt, a call is a tag in the
//! reply text, cut out by parser-core as it streams ([`crate::run::stream`]).

use super::Dialect;
use crate::run::llm::{ApiError, Message, Transport};
use crate::run::mcp::Hub;
use crate::run::prompt::system::Family;
use crate::run::reply::{Reply, Screen};
use crate::run::stream;
use crate::run::ui::term::Term;

/// Tool calls as XML tags in the reply text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Xml {
    /// Cline's `nativeToolCallEnabled` (on by default; off under `--tool-calls xml`): on, XML is
    /// what a model no native variant takes gets, and Cline's matchers give it another prompt.
    pub native_setting: bool,
}

impl Dialect for Xml {
    fn name(&self) -> &'static str {
        "xml"
    }

    fn family(&self, provider: &str, model: &str) -> Family {
        super::system::family(false, self.native_setting, provider, model)
    }

    fn system_prompt(&self, family: Family, cwd: &str, parallel: bool) -> String {
        super::system::system(family, cwd, parallel)
    }

    fn insert_mcp(&self, prompt: &mut String, hub: &mut Hub, task_progress: bool) {
        crate::run::mcp::prompt::insert_xml(prompt, hub, task_progress);
    }

    fn offer_tools(&self, _: Family, _: &mut dyn Transport, _: &mut Hub, _: &str, _: super::Offer, _: &mut Term) {}

    fn with_skills(&self, prompt: &str, section: &str) -> String {
        let tool = crate::run::tools::registry::find("use_skill").map(|t| (t.prompt)(Family::Generic));
        crate::run::prompt::skills::insert(prompt, section, tool)
    }

    fn read_reply(
        &self,
        transport: &mut dyn Transport,
        system: &str,
        messages: &[Message],
        screen: &mut Screen<'_>,
    ) -> Result<Reply, ApiError> {
        stream::read_reply(transport, system, messages, screen)
    }

    fn no_tools_used(&self) -> String {
        crate::run::prompt::no_tools_used()
    }

    fn truncated_tool(&self, name: &str, cut: bool) -> String {
        crate::run::prompt::truncated_tool(name, cut)
    }

    fn truncated_text(&self) -> String {
        crate::run::prompt::truncated_text()
    }

    /// A saved conversation with native calls cannot go on in XML: the APIs refuse `tool_use`
    /// history without tool definitions, and an XML reply could not answer the open call.
    fn check_resume(&self, messages: &[Message]) -> Result<(), String> {
        if messages.iter().any(|m| m.tool_uses().next().is_some()) {
            return Err(
                "this task was run with native tool calls; resume it with --tool-calls native or auto (the default)"
                    .to_string(),
            );
        }
        Ok(())
    }
}
