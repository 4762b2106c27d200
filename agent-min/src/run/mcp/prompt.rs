//! What the model is told about MCP: Cline's `use_mcp_tool` and `access_mcp_resource` tool
//! descriptions, and its "MCP SERVERS … # Connected MCP Servers" section listing each connected
//! server (name, command, tools with input schemas, resource templates, direct resources).
//!
//! Both are inserted into the base system prompt (`crate::run::dialect::system::system`): the tools
//! before "# Tool Use Examples", the section before "RULES" (where Cline's generic prompt puts
//! it). Without any configured server the prompt is left as it is.

use serde_json::Value;

use super::hub::Hub;

const TOOLS: &str = "## use_mcp_tool
Description: Request to use a tool provided by a connected MCP server. Each MCP server can provide multiple tools with different capabilities. Tools have defined input schemas that specify required and optional parameters.
Parameters:
- server_name: (required) The name of the MCP server providing the tool
- tool_name: (required) The name of the tool to execute
- arguments: (required) A JSON object containing the tool's input parameters, following the tool's input schema
- task_progress: (optional) A checklist showing task progress after this tool use is completed. The task_progress parameter must be included as a separate parameter inside of the parent tool call, it must be separate from other parameters such as content, arguments, etc. (See 'UPDATING TASK PROGRESS' section for more details)
Usage:
<use_mcp_tool>
<server_name>server name here</server_name>
<tool_name>tool name here</tool_name>
<arguments>
{
  \"param1\": \"value1\",
  \"param2\": \"value2\"
}
</arguments>
<task_progress>Checklist here (optional)</task_progress>
</use_mcp_tool>

## access_mcp_resource
Description: Request to access a resource provided by a connected MCP server. Resources represent data sources that can be used as context, such as files, API responses, or system information.
Parameters:
- server_name: (required) The name of the MCP server providing the resource
- uri: (required) The URI identifying the specific resource to access
- task_progress: (optional) A checklist showing task progress after this tool use is completed. The task_progress parameter must be included as a separate parameter inside of the parent tool call, it must be separate from other parameters such as content, arguments, etc. (See 'UPDATING TASK PROGRESS' section for more details)
Usage:
<access_mcp_resource>
<server_name>server name here</server_name>
<uri>resource URI here</uri>
<task_progress>Checklist here (optional)</task_progress>
</access_mcp_resource>

";

const SECTION_HEAD: &str = "MCP SERVERS

The Model Context Protocol (MCP) enables communication between the system and locally running MCP servers that provide additional tools, resources, and prompts to extend your capabilities.

# Connected MCP Servers

When a server is connected, you can use the server's tools via the `use_mcp_tool` tool, and access the server's resources via the `access_mcp_resource` tool.

Servers may also provide prompts - predefined templates that can be invoked by users to generate contextual messages.

";

/// Cline's native variants' one MCP line, the last of their RULES when a server is enabled.
pub(crate) const NATIVE_RULE: &str = "- MCP operations should be used one at a time, similar to other tool usage. Wait for confirmation of success before proceeding with additional operations.";

/// The native dialect's share: Cline's prompt has neither the two tools nor the servers
/// section (the tools travel as definitions: `super::native`), only [`NATIVE_RULE`] at the end
/// of RULES when a server is enabled.
pub(crate) fn insert_native(prompt: &mut String, hub: &mut Hub) {
    if hub.servers().iter().any(|s| !s.cfg.disabled) {
        let rules = prompt.find("\n====\n\nRULES\n").unwrap_or(0);
        let end = prompt[rules + 1..].find("\n\n====\n").map_or(prompt.len(), |i| rules + 1 + i);
        prompt.insert_str(end, &format!("\n{NATIVE_RULE}"));
    }
}

/// Adds the two tools and the servers section to a built XML prompt (nothing without
/// servers); the hub remembers the section so that [`update`] can replace it. `task_progress`:
/// the tools' `task_progress` lines are there (Cline's focus chain on).
pub(crate) fn insert_xml(prompt: &mut String, hub: &mut Hub, task_progress: bool) {
    if hub.is_empty() {
        return;
    }
    let tools = match task_progress {
        true => TOOLS.to_string(),
        false => TOOLS.split_inclusive('\n').filter(|l| !l.contains("task_progress")).collect(),
    };
    match prompt.find("# Tool Use Examples") {
        Some(i) => prompt.insert_str(i, &tools),
        None => prompt.push_str(&format!("\n\n# MCP Tools\n\n{tools}")),
    }
    // Cline's `getServers()` leaves disabled servers out; with none left there is no section.
    if !hub.servers().iter().any(|s| !s.cfg.disabled) {
        return;
    }
    let section = section(hub);
    const BEFORE: &str = "\n====\n\nRULES\n";
    match prompt.find(BEFORE) {
        Some(i) => prompt.insert_str(i + BEFORE.len() - "RULES\n".len(), &section),
        None => prompt.push_str(&format!("\n\n====\n\n{section}")),
    }
    hub.shown_section = section;
}

/// Before a request: if what the servers offer changed (`notifications/tools/list_changed`, a
/// server died or came back), the prompt's servers section is replaced by the current one.
pub(crate) fn update(prompt: &mut String, hub: &mut Hub) {
    if !hub.take_changed() || hub.shown_section.is_empty() {
        return;
    }
    let new = section(hub);
    if let Some(i) = prompt.find(&hub.shown_section) {
        prompt.replace_range(i..i + hub.shown_section.len(), &new);
        hub.shown_section = new;
    }
}

fn section(hub: &Hub) -> String {
    format!("{SECTION_HEAD}{}\n\n====\n\n", servers_list(hub))
}

/// Cline's `formatMcpServersList`, for the connected servers.
pub(crate) fn servers_list(hub: &Hub) -> String {
    let list: Vec<String> = hub
        .connected()
        .map(|(cfg, conn)| {
            let text = |v: &Value, k: &str| match v.get(k) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => "undefined".to_string(), // JavaScript's `${undefined}`
                Some(other) => other.to_string(),
            };
            let tools: Vec<String> = conn
                .tools
                .iter()
                .map(|t| {
                    let schema = match t.get("inputSchema") {
                        Some(s) if !s.is_null() => {
                            let pretty = serde_json::to_string_pretty(&super::texts::as_javascript(s.clone()))
                                .unwrap_or_default();
                            format!("    Input Schema:\n    {}", pretty.split('\n').collect::<Vec<_>>().join("\n    "))
                        }
                        _ => String::new(),
                    };
                    format!("- {}: {}\n{schema}", text(t, "name"), text(t, "description"))
                })
                .collect();
            let templates: Vec<String> = conn
                .templates
                .iter()
                .map(|t| format!("- {} ({}): {}", text(t, "uriTemplate"), text(t, "name"), text(t, "description")))
                .collect();
            let resources: Vec<String> = conn
                .resources
                .iter()
                .map(|r| format!("- {} ({}): {}", text(r, "uri"), text(r, "name"), text(r, "description")))
                .collect();
            let prompts: Vec<String> = conn
                .prompts
                .iter()
                .map(|p| {
                    let args: Vec<String> = p
                        .get("arguments")
                        .and_then(Value::as_array)
                        .map(Vec::as_slice)
                        .unwrap_or(&[])
                        .iter()
                        .map(|a| {
                            let req = if a.get("required").and_then(Value::as_bool) == Some(true) {
                                " (required)"
                            } else {
                                ""
                            };
                            let desc = match a.get("description").and_then(Value::as_str) {
                                Some(d) if !d.is_empty() => format!(": {d}"),
                                _ => String::new(),
                            };
                            format!("{}{req}{desc}", text(a, "name"))
                        })
                        .collect();
                    let args =
                        if args.is_empty() { String::new() } else { format!("\n    Arguments: {}", args.join(", ")) };
                    let title = match p.get("title").and_then(Value::as_str) {
                        Some(t) if !t.is_empty() => format!(" ({t})"),
                        _ => String::new(),
                    };
                    let desc = p
                        .get("description")
                        .and_then(Value::as_str)
                        .filter(|d| !d.is_empty())
                        .unwrap_or("No description");
                    format!("- {}{title}: {desc}{args}", text(p, "name"))
                })
                .collect();
            let mut s = format!("## {}", cfg.name);
            if let super::config::Kind::Stdio { .. } = cfg.kind {
                s.push_str(&format!(" (`{}`)", cfg.command_line()));
            }
            if !tools.is_empty() {
                s.push_str(&format!("\n\n### Available Tools\n{}", tools.join("\n\n")));
            }
            if !templates.is_empty() {
                s.push_str(&format!("\n\n### Resource Templates\n{}", templates.join("\n")));
            }
            if !resources.is_empty() {
                s.push_str(&format!("\n\n### Direct Resources\n{}", resources.join("\n")));
            }
            if !prompts.is_empty() {
                s.push_str(&format!("\n\n### Available Prompts\n{}", prompts.join("\n")));
            }
            s
        })
        .collect();
    list.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(feature = "mcp")]
    fn the_section_sits_between_tool_use_and_rules_like_clines() {
        let system = |cwd: &str, mut hub: Hub| {
            let mut p = crate::run::dialect::system::system(crate::run::prompt::system::Family::Generic, cwd, true);
            insert_xml(&mut p, &mut hub, true);
            p
        };
        let hub = |json: &str| {
            let cfg = crate::run::mcp::config::parse(json, std::path::Path::new("m.json")).unwrap();
            Hub::start(cfg, crate::run::mcp::hub::CONNECT_WAIT)
        };
        let only_disabled = system("/w", hub(r#"{"mcpServers": {"a": {"command": "x", "disabled": true}}}"#));
        assert!(only_disabled.contains("## use_mcp_tool\n") && !only_disabled.contains("MCP SERVERS"));
        // An enabled server that failed to start: the section, with nothing listed.
        let p = system("/w", hub(r#"{"mcpServers": {"a": {"command": "/nonexistent/server"}}}"#));
        let (tools, examples) = (p.find("## use_mcp_tool\n").unwrap(), p.find("# Tool Use Examples").unwrap());
        let (section, rules) = (p.find("====\n\nMCP SERVERS\n").unwrap(), p.find("====\n\nRULES\n").unwrap());
        assert!(p.find("## attempt_completion").unwrap() < tools && tools < examples);
        assert!(p.find("# Tool Use Guidelines").unwrap() < section && section < rules);
        assert!(
            p.contains("contextual messages.\n\n\n\n====\n\nRULES\n"),
            "no connected server: an empty list, as Cline's"
        );
    }

    /// The two tools' sections are Cline's (its next-gen snapshot, taken with its focus chain
    /// on); off, without their `task_progress` lines.
    #[test]
    #[cfg(feature = "mcp")]
    fn the_tools_are_clines_with_and_without_task_progress() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cline-system-prompt");
        let snap = std::fs::read_to_string(dir.join("anthropic_claude_sonnet_4-no-browser.snap")).unwrap();
        let start = snap.find("## use_mcp_tool\n").unwrap();
        let end = snap.find("## ask_followup_question\n").unwrap();
        let cline = &snap[start..end];
        let hub = || {
            let json = r#"{"mcpServers": {"a": {"command": "x", "disabled": true}}}"#;
            let cfg = crate::run::mcp::config::parse(json, std::path::Path::new("m.json")).unwrap();
            Hub::start(cfg, crate::run::mcp::hub::CONNECT_WAIT)
        };
        for on in [true, false] {
            let mut p = "# Tool Use Examples".to_string();
            insert_xml(&mut p, &mut hub(), on);
            let want: String = cline.split_inclusive('\n').filter(|l| on || !l.contains("task_progress")).collect();
            assert_eq!(p, format!("{want}# Tool Use Examples"), "focus chain {on}");
        }
    }

    #[test]
    fn without_servers_the_prompt_is_unchanged() {
        let base = crate::run::dialect::system::system(crate::run::prompt::system::Family::Generic, "/w", true);
        let mut p = base.clone();
        insert_xml(&mut p, &mut Hub::none(), true);
        assert_eq!(p, base);
    }

    #[test]
    #[cfg(feature = "mcp")]
    fn the_native_prompt_has_only_clines_rule_line() {
        let base = crate::run::native::system(crate::run::dialect::system::system(
            crate::run::prompt::system::Family::NextGen,
            "/w",
            true,
        ));
        let cfg = crate::run::mcp::config::parse(
            r#"{"mcpServers": {"a": {"command": "/nonexistent/server"}}}"#,
            std::path::Path::new("m.json"),
        )
        .unwrap();
        let mut p = base.clone();
        insert_native(&mut p, &mut Hub::start(cfg, crate::run::mcp::hub::CONNECT_WAIT));
        assert!(!p.contains("use_mcp_tool") && !p.contains("MCP SERVERS"), "{p}");
        let rules = p.find("\n====\n\nRULES\n").unwrap();
        let line = p.find(NATIVE_RULE).unwrap();
        let next = rules + 1 + p[rules + 1..].find("\n\n====\n").unwrap();
        assert_eq!(line + NATIVE_RULE.len(), next, "the last line of RULES");
        assert_eq!(p.replace(&format!("\n{NATIVE_RULE}"), ""), base);
    }
}
