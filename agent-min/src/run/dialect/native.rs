//! The native dialect: the tools travel as definitions beside the prompt (each tool's from its
//! declaration, then the MCP servers'), a call is a `tool_use` / `tool_calls` part of the reply
//! ([`crate::run::native`]).

use serde_json::Value;

use super::Dialect;
use crate::run::llm::tool_specs::Tools;
use crate::run::llm::{ApiError, Message, Transport};
use crate::run::mcp::Hub;
use crate::run::native;
use crate::run::prompt::system::Family;
use crate::run::reply::{Reply, Screen};
use crate::run::tools::registry;
use crate::run::ui::term::Term;

/// Tool calls as the API's own.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Native {
    /// A reply with no native call runs a complete XML call written in its text.
    pub recover: bool,
}

/// The native definitions of the tools `family` offers, in the order of Cline's variant:
/// `native-next-gen` lists `ask_followup_question` first and the rest as its XML prompt does;
/// the GPT-5 variants list them as declared (`apply_patch` after `read_file`); `{{cwd}}` in a
/// definition is the workspace `cwd`.
pub(crate) fn definitions(family: Family, cwd: &str) -> Vec<Value> {
    let (mut first, rest): (Vec<_>, Vec<_>) =
        registry::offered(family).into_iter().partition(|t| t.name == "ask_followup_question" && !family.patches());
    first.extend(rest);
    first
        .iter()
        .map(|t| {
            let text = (t.native)(family).replace("{{cwd}}", &json_str(cwd));
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("tools/decl/{}.json: {e}", t.name))
        })
        .collect()
}

/// `defs` without Cline's `task_progress` parameter (its focus chain off).
pub(crate) fn drop_task_progress(defs: &mut [Value]) {
    for d in defs {
        if let Some(p) = d["function"]["parameters"]["properties"].as_object_mut() {
            p.shift_remove("task_progress");
        }
    }
}

/// The declared tools' definitions `family` offers from `cwd` as `offer` says: without
/// `ask_followup_question` in yolo mode (`!offer.ask`), where GPT-5.1's `execute_command` takes
/// a `timeout` (Cline has no native GPT-5.1 spec of it and falls back to the generic one, whose
/// `timeout` its `contextRequirements` offer in yolo mode; its native GPT-5 and next-gen specs
/// have none); without `task_progress` when the focus chain is off.
pub(crate) fn offered(family: Family, cwd: &str, offer: super::Offer) -> Vec<Value> {
    let mut defs = definitions(family, cwd);
    if !offer.ask {
        defs.retain(|d| d["function"]["name"] != "ask_followup_question");
        for d in defs.iter_mut().filter(|d| family == Family::NativeGpt51 && d["function"]["name"] == "execute_command")
        {
            if let Some(p) = d["function"]["parameters"]["properties"].as_object_mut() {
                let timeout = "Integer representing the timeout in seconds for how long to run the terminal command, before timing out and continuing the task.";
                p.insert("timeout".into(), serde_json::json!({"type": "integer", "description": timeout}));
            }
        }
    }
    if !offer.task_progress {
        drop_task_progress(&mut defs);
    }
    defs
}

/// `s` as the inside of a JSON string.
fn json_str(s: &str) -> String {
    let quoted = Value::String(s.to_string()).to_string();
    quoted[1..quoted.len() - 1].to_string()
}

impl Dialect for Native {
    fn name(&self) -> &'static str {
        "native"
    }

    fn family(&self, provider: &str, model: &str) -> Family {
        super::system::family(true, true, provider, model)
    }

    /// Cline's native variant; elsewhere the XML family's prompt with TOOL USE swapped.
    fn system_prompt(&self, family: Family, cwd: &str, parallel: bool) -> String {
        let prompt = super::system::system(family, cwd, parallel);
        if family.is_native() {
            prompt
        } else {
            native::system(prompt)
        }
    }

    fn insert_mcp(&self, prompt: &mut String, hub: &mut Hub, _task_progress: bool) {
        crate::run::mcp::prompt::insert_native(prompt, hub);
    }

    fn offer_tools(
        &self,
        family: Family,
        transport: &mut dyn Transport,
        hub: &mut Hub,
        cwd: &str,
        offer: super::Offer,
        term: &mut Term,
    ) {
        let strict_names = matches!(transport.provider(), "anthropic" | "openrouter");
        let mut extra = crate::run::mcp::native::tool_specs(hub, cwd, term, strict_names);
        let mut builtin = offered(family, cwd, offer);
        if !offer.task_progress {
            crate::run::mcp::native::drop_task_progress(&mut extra);
        }
        // Last, as in Cline's variants (after attempt_completion).
        if let Some(t) = registry::find("use_skill").filter(|_| offer.skills) {
            builtin.push(serde_json::from_str((t.native)(family)).expect("tools/decl/use_skill.json parses"));
        }
        transport.set_tools(Tools { builtin, extra, parallel: offer.parallel });
    }

    fn with_skills(&self, prompt: &str, section: &str) -> String {
        crate::run::prompt::skills::insert(prompt, section, None)
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

    fn truncated_tool(&self, name: &str, cut: bool) -> String {
        native::truncated_tool(name, cut)
    }

    fn truncated_text(&self) -> String {
        native::truncated_text()
    }

    fn check_resume(&self, _messages: &[Message]) -> Result<(), String> {
        Ok(())
    }

    fn tools_ignored_hint(&self) -> Option<&'static str> {
        Some(native::TOOLS_IGNORED)
    }
}
