//! What the model is told about MCP, as Cline's prompt says it with a server configured: its
//! `use_mcp_tool` and `access_mcp_resource` tool descriptions (XML), their two examples (XML),
//! its CAPABILITIES and RULES lines about MCP, and its "MCP SERVERS … # Connected MCP Servers"
//! section listing each connected server (name, command, tools with input schemas, resource
//! templates, direct resources; XML).
//!
//! Each goes where Cline's snapshots have it: the tools after `list_files` (before
//! `ask_followup_question`, or `attempt_completion` under `--yolo`), the examples after the
//! others, the lines last in their sections, the servers section after UPDATING TASK PROGRESS
//! (before EDITING FILES). Without any configured server the prompt is left as it is.

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

/// Cline's two examples of `use_mcp_tool`, after the others (`components/tool_use/examples.ts`).
const EXAMPLES: &str = "## Example 5: Requesting to use an MCP tool

<use_mcp_tool>
<server_name>weather-server</server_name>
<tool_name>get_forecast</tool_name>
<arguments>
{
  \"city\": \"San Francisco\",
  \"days\": 5
}
</arguments>
</use_mcp_tool>

## Example 6: Another example of using an MCP tool (where the server name is a unique identifier such as a URL)

<use_mcp_tool>
<server_name>github.com/modelcontextprotocol/servers/tree/main/src/github</server_name>
<tool_name>create_issue</tool_name>
<arguments>
{
  \"owner\": \"octocat2\",
  \"repo\": \"hello-world\",
  \"title\": \"Found a bug\",
  \"body\": \"I'm having a problem with this.\",
  \"labels\": [\"bug\", \"help wanted\"],
  \"assignees\": [\"octocat\"]
}
</arguments>
</use_mcp_tool>

";

/// Cline's CAPABILITIES line about MCP, the section's last (`components/capabilities.ts`).
pub(crate) const CAPABILITY: &str = "- You have access to MCP servers that may provide additional tools and resources. Each server may provide different capabilities that you can use to accomplish tasks more effectively.";

/// Cline's RULES line about MCP, the section's last (`components/rules.ts`, each variant's).
pub(crate) const RULE: &str = "- MCP operations should be used one at a time, similar to other tool usage. Wait for confirmation of success before proceeding with additional operations.";

/// `line` as the last line of the prompt's section `title` (if it has one).
fn end_section_with(prompt: &mut String, title: &str, line: &str) {
    let Some(start) = prompt.find(&format!("\n====\n\n{title}\n")) else { return };
    let end = prompt[start + 1..].find("\n\n====\n").map_or(prompt.len(), |i| start + 1 + i);
    prompt.insert_str(end, &format!("\n{line}"));
}

/// The CAPABILITIES and RULES lines, when a server is enabled.
fn insert_lines(prompt: &mut String, hub: &Hub) {
    if hub.servers().iter().any(|s| !s.cfg.disabled) {
        end_section_with(prompt, "CAPABILITIES", CAPABILITY);
        end_section_with(prompt, "RULES", RULE);
    }
}

/// The native dialect's share: Cline's native prompt has neither the two tools nor the
/// servers section (the tools travel as definitions: `super::native`), only its CAPABILITIES
/// and RULES lines.
pub(crate) fn insert_native(prompt: &mut String, hub: &mut Hub) {
    insert_lines(prompt, hub);
}

/// Adds the two tools and their examples (nothing without servers), the lines and the servers
/// section to a built XML prompt; the hub remembers the section so that [`update`] can replace
/// it. `task_progress`: the tools' `task_progress` lines are there (Cline's focus chain on).
pub(crate) fn insert_xml(prompt: &mut String, hub: &mut Hub, task_progress: bool) {
    if hub.is_empty() {
        return;
    }
    let tools = match task_progress {
        true => TOOLS.to_string(),
        false => TOOLS.split_inclusive('\n').filter(|l| !l.contains("task_progress")).collect(),
    };
    let after_list_files = ["## ask_followup_question\n", "## attempt_completion\n", "# Tool Use Examples"];
    match after_list_files.iter().find_map(|h| prompt.find(h)) {
        Some(i) => prompt.insert_str(i, &tools),
        None => prompt.push_str(&format!("\n\n# MCP Tools\n\n{tools}")),
    }
    if let Some(i) = prompt.find("# Tool Use Guidelines") {
        prompt.insert_str(i, EXAMPLES);
    }
    insert_lines(prompt, hub);
    // Cline's `getServers()` leaves disabled servers out; with none left there is no section.
    if !hub.servers().iter().any(|s| !s.cfg.disabled) {
        return;
    }
    let section = section(hub);
    const BEFORE: [&str; 2] = ["\n====\n\nEDITING FILES\n", "\n====\n\nRULES\n"];
    match BEFORE.iter().find_map(|b| prompt.find(b).map(|i| i + "\n====\n\n".len())) {
        Some(i) => prompt.insert_str(i, &section),
        None => prompt.push_str(&format!("\n\n====\n\n{section}")),
    }
    hub.shown_section = section;
}

/// Before a request: what the servers said since is read ([`Hub::poll`]); if what they offer
/// changed (`notifications/tools/list_changed`, a server died or came back), the prompt's
/// servers section is replaced by the current one.
pub(crate) fn update(prompt: &mut String, hub: &mut Hub) {
    hub.poll();
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

    /// Every MCP text of Cline's prompt with a server enabled, where its snapshots have it,
    /// followed by what follows it there, in every variant (the servers listed are the
    /// snapshots' own test server and agent-min's failed one, so the list itself differs).
    #[test]
    #[cfg(feature = "mcp")]
    fn every_mcp_text_is_where_clines_snapshots_have_it() {
        use crate::run::prompt::system::Family;
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cline-system-prompt");
        let hub = || {
            let cfg = crate::run::mcp::config::parse(
                r#"{"mcpServers": {"a": {"command": "/nonexistent/server"}}}"#,
                std::path::Path::new("m.json"),
            )
            .unwrap();
            Hub::start(cfg, crate::run::mcp::hub::CONNECT_WAIT, false)
        };
        let heading = "====\n\nMCP SERVERS\n";
        for (family, snap) in [
            (Family::Generic, "openai_gpt_3"),
            (Family::NextGen, "anthropic_claude_sonnet_4"),
            (Family::Gpt5, "openai_gpt_5"),
            (Family::NativeNextGen, "cline_claude_4_5_sonnet"),
            (Family::NativeGpt5, "openai_gpt_5_codex"),
            (Family::NativeGpt51, "openai_gpt_5_1"),
        ] {
            let cline = std::fs::read_to_string(dir.join(format!("{snap}-no-browser.snap"))).unwrap();
            let mut p = crate::run::dialect::system::system(family, "/w", true);
            let native = matches!(family, Family::NativeNextGen | Family::NativeGpt5 | Family::NativeGpt51);
            match native {
                true => insert_native(&mut p, &mut hub()),
                false => insert_xml(&mut p, &mut hub(), true),
            }
            // A piece of Cline's prompt and what follows it there, to the next line with text.
            let followed = |piece: &str| {
                let at = cline.find(piece).unwrap_or_else(|| panic!("{snap}: no {piece:?}"));
                let mut end = at + piece.len();
                while cline[end..].starts_with('\n') {
                    end += 1;
                }
                let end = cline[end..].find('\n').map_or(cline.len(), |i| end + i);
                cline[at..end].to_string()
            };
            for line in [CAPABILITY, RULE] {
                let want = followed(line);
                assert!(want.ends_with("\n\n===="), "{snap}: last of its section");
                assert!(p.contains(&want), "{family:?}: {want:?}\n{p}");
            }
            if native {
                assert!(!p.contains("use_mcp_tool") && !p.contains("MCP SERVERS"), "{family:?}");
                continue;
            }
            assert!(p.contains(&followed(TOOLS)), "{family:?}");
            assert!(p.contains(&followed(EXAMPLES)), "{family:?}");
            let (at, end) = (cline.find(heading).unwrap(), cline.find("contextual messages.\n\n").unwrap());
            let before = &cline[cline[..at - 1].rfind("\n\n").unwrap()..at];
            let head = &cline[at..end + "contextual messages.\n\n".len()];
            assert_eq!(&head[heading.len() - "MCP SERVERS\n".len()..], SECTION_HEAD, "{snap}");
            assert!(p.contains(&format!("{before}{head}\n\n====\n\nEDITING FILES\n")), "{family:?}: {p}");
        }
    }

    /// An enabled server that failed to start: the section, with nothing listed; only disabled
    /// ones: the tools, no section.
    #[test]
    #[cfg(feature = "mcp")]
    fn the_section_lists_enabled_servers_only() {
        let system = |mut hub: Hub| {
            let mut p = crate::run::dialect::system::system(crate::run::prompt::system::Family::Generic, "/w", true);
            insert_xml(&mut p, &mut hub, true);
            p
        };
        let hub = |json: &str| {
            let cfg = crate::run::mcp::config::parse(json, std::path::Path::new("m.json")).unwrap();
            Hub::start(cfg, crate::run::mcp::hub::CONNECT_WAIT, false)
        };
        let only_disabled = system(hub(r#"{"mcpServers": {"a": {"command": "x", "disabled": true}}}"#));
        assert!(only_disabled.contains("## use_mcp_tool\n") && !only_disabled.contains("MCP SERVERS"));
        assert!(!only_disabled.contains(CAPABILITY) && !only_disabled.contains(RULE));
        let p = system(hub(r#"{"mcpServers": {"a": {"command": "/nonexistent/server"}}}"#));
        assert!(
            p.contains("contextual messages.\n\n\n\n====\n\nEDITING FILES\n"),
            "no connected server: an empty list (one blank line once the prompt is tidied, as Cline's)"
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
            Hub::start(cfg, crate::run::mcp::hub::CONNECT_WAIT, false)
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
}
