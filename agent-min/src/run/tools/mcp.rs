//! `use_mcp_tool(server_name, tool_name, arguments)` and `access_mcp_resource(server_name, uri)`:
//! Cline's two MCP tools, with its texts (`UseMcpToolHandler`, `AccessMcpResourceHandler`).
//!
//! Approval is like a command's: asked unless `--yolo` or the tool is in the server's
//! `autoApprove`. Each call is an `mcp_call` event (server, tool or URI, ok, milliseconds).

use std::time::Instant;

use serde_json::{json, Value};

use super::{ask, tool_error, Call, Ctx, Outcome};
use crate::run::mcp::hub::CallError;
use crate::run::mcp::texts;
use crate::run::prompt;
use crate::run::session::events::{By, Event};

/// Shown on the terminal for arguments: at most this many characters.
const SHOW: usize = 300;

fn missing(param: &str, ctx: &mut Ctx<'_>) -> Outcome {
    ctx.term.outcome(false, &format!("missing required parameter '{param}'"));
    Outcome::Failure { text: tool_error(&prompt::missing_param(param)), mistake: true }
}

/// `use_mcp_tool`.
pub(super) fn use_tool(call: &Call, ctx: &mut Ctx<'_>) -> Outcome {
    let (Some(server), Some(tool)) = (call.param("server_name"), call.param("tool_name")) else {
        ctx.term.tool("use_mcp_tool", "");
        return missing(if call.param("server_name").is_none() { "server_name" } else { "tool_name" }, ctx);
    };
    let raw_args = call.param("arguments");
    ctx.term.tool("use_mcp_tool", &format!("{server} {tool} {}", shorten(raw_args.unwrap_or(""))));
    let args = match arguments(call) {
        Some(v) => v,
        None => {
            ctx.decide(false, By::Policy, None);
            ctx.term.outcome(false, &format!("Cline tried to use {tool} with an invalid JSON argument. Retrying..."));
            return Outcome::Failure { text: tool_error(&texts::invalid_arguments(server, tool)), mistake: true };
        }
    };
    let auto = ctx.mcp.config(server).is_some_and(|c| c.auto_approve.iter().any(|t| t == tool));
    let what = format!("Use MCP tool {tool} on server {server} with arguments {}", shorten(raw_args.unwrap_or("{}")));
    // The question names the arguments shortened; the person sees them whole first.
    let whole = serde_json::to_string_pretty(&args).unwrap_or_default();
    if let Err(denied) = approve(ctx, auto, &what, Some(&whole)) {
        return denied;
    }
    let start = Instant::now();
    let result = ctx.mcp.call_tool(server, tool, args, ctx.events);
    let ms = start.elapsed().as_millis() as u64;
    // What the server logged meanwhile (Cline shows its notifications before and after).
    ctx.mcp.show_notes(ctx.term, ctx.events);
    if let Some(note) = ctx.mcp.garbage_note(server) {
        ctx.term.warn(&note);
    }
    match result {
        Ok(v) => {
            let (mut text, images) = texts::tool_result(&v);
            let sent = with_images(ctx, &mut text, &images);
            let text = texts::truncate(&text);
            let is_error = v.get("isError").and_then(Value::as_bool).unwrap_or(false);
            call_event(ctx, server, Target::Tool(tool), !is_error, ms, None);
            let shown = match sent.as_slice() {
                [] => summary(&text),
                sent => format!("{}\n    (with {})", summary(&text), sent.join("; ")),
            };
            ctx.term.outcome(!is_error, &shown);
            Outcome::Success(text)
        }
        Err(e) => {
            call_event(ctx, server, Target::Tool(tool), false, ms, Some(&e.message));
            ctx.term.outcome(false, &e.message);
            // Cline returns this text as is, not wrapped as a tool error.
            Outcome::Failure { text: with_note(format!("Error executing MCP tool: {}", e.message), &e), mistake: false }
        }
    }
}

/// The images of a tool's result (`data` of each), as Cline's handler passes them on: to a
/// model that takes images, each goes with the next user message, after the tool results (as a
/// read image file does), held to the same limits (one that is not sent is named in a note
/// after `text`, with why); a model that takes none gets Cline's note. Returns what each sent
/// image is, for the terminal.
fn with_images(ctx: &mut Ctx<'_>, text: &mut String, images: &[&str]) -> Vec<String> {
    if images.is_empty() {
        return Vec::new();
    }
    if !ctx.images {
        text.push_str(&texts::images_not_viewable(images.len()));
        return Vec::new();
    }
    let mut held = super::image::held_with(ctx.images_held, &ctx.memory.images);
    let mut sent = Vec::new();
    for (i, data) in images.iter().enumerate() {
        let image = super::image::from_base64(data)
            .and_then(|image| super::image::past_held(held, image.data.len()).map_or(Ok(image), Err));
        match image {
            Ok(image) => {
                held += image.data.len();
                sent.push(image.describe());
                ctx.memory.images.push(image);
            }
            Err(why) => text.push_str(&texts::image_not_sent(i + 1, why.trim_end_matches('.'))),
        }
    }
    sent
}

/// A call's `arguments` as Cline reads them: parsed only when given; absent ones become `{}`,
/// and so does `null` (its `arguments: toolArguments ?? {}`); `None` when they are not a JSON
/// object.
fn arguments(call: &Call) -> Option<Value> {
    match call.param("arguments").map(serde_json::from_str::<Value>) {
        None | Some(Ok(Value::Null)) => Some(json!({})),
        Some(Ok(v)) if v.is_object() => Some(texts::as_javascript(v)),
        Some(_) => None,
    }
}

/// Whether `use_mcp_tool`'s `arguments` are refused (not a JSON object), as Cline's handler
/// refuses them before its `PreToolUse` hook.
pub(super) fn invalid_arguments(call: &Call) -> bool {
    arguments(call).is_none()
}

/// `access_mcp_resource`.
pub(super) fn access_resource(call: &Call, ctx: &mut Ctx<'_>) -> Outcome {
    let (Some(server), Some(uri)) = (call.param("server_name"), call.param("uri")) else {
        ctx.term.tool("access_mcp_resource", "");
        return missing(if call.param("server_name").is_none() { "server_name" } else { "uri" }, ctx);
    };
    ctx.term.tool("access_mcp_resource", &format!("{server} {}", shorten(uri)));
    if let Err(denied) = approve(ctx, false, &format!("Access MCP resource {uri} on server {server}"), None) {
        return denied;
    }
    let start = Instant::now();
    let result = ctx.mcp.read_resource(server, uri, ctx.events);
    let ms = start.elapsed().as_millis() as u64;
    match result {
        Ok(v) => {
            let text = texts::resource_result(&v);
            call_event(ctx, server, Target::Uri(uri), true, ms, None);
            ctx.term.outcome(true, &summary(&text));
            Outcome::Success(text)
        }
        Err(e) => {
            call_event(ctx, server, Target::Uri(uri), false, ms, Some(&e.message));
            ctx.term.outcome(false, &e.message);
            let text = tool_error(&format!("Error executing access_mcp_resource: {}", e.message));
            Outcome::Failure { text: with_note(text, &e), mistake: false }
        }
    }
}

/// Approval like a command: `--yolo` or `autoApprove` run it, otherwise the person is asked
/// (`Err`: Cline's denial text, with their feedback if they gave some).
fn approve(ctx: &mut Ctx<'_>, auto: bool, what: &str, whole: Option<&str>) -> Result<(), Outcome> {
    if auto {
        ctx.decide(true, By::Auto, None);
    } else if ctx.yolo {
        ctx.decide(true, By::Yolo, None);
    } else {
        if let Some(whole) = whole.filter(|w| w.len() > SHOW || w.contains('\n')) {
            ctx.term.block(whole);
        }
        ask(ctx, what)?;
    }
    Ok(())
}

fn with_note(text: String, e: &CallError) -> String {
    match &e.note {
        Some(n) => format!("{text}\n\n{n}"),
        None => text,
    }
}

/// What an MCP call was about: a tool, or a resource.
enum Target<'a> {
    Tool(&'a str),
    Uri(&'a str),
}

fn call_event(ctx: &mut Ctx<'_>, server: &str, what: Target<'_>, ok: bool, ms: u64, error: Option<&str>) {
    let (tool, uri) = match what {
        Target::Tool(t) => (Some(t.to_string()), None),
        Target::Uri(u) => (None, Some(u.to_string())),
    };
    ctx.events.emit(&Event::McpCall {
        call_id: ctx.call_id.to_string(),
        server: server.to_string(),
        ok,
        duration_ms: ms,
        error: error.map(str::to_string),
        tool,
        uri,
    });
}

fn shorten(s: &str) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match one.char_indices().nth(SHOW) {
        Some((i, _)) => format!("{}…", &one[..i]),
        None => one,
    }
}

/// Lines of a result shown on the terminal, at most.
const SHOW_LINES: usize = 5;

/// The start of a result as the person sees it: its first lines (each shortened), and how many
/// more there are.
fn summary(s: &str) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut shown: Vec<String> = lines.iter().take(SHOW_LINES).map(|l| shorten(l)).collect();
    if lines.len() > SHOW_LINES {
        let more = lines.len() - SHOW_LINES;
        shown.push(format!("… ({more} more {})", if more == 1 { "line" } else { "lines" }));
    }
    shown.join("\n    ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_summary_shows_the_first_lines_and_counts_the_rest() {
        assert_eq!(super::summary("one\n\ntwo"), "one\n    two");
        let many: String = (1..=8).map(|i| format!("line {i}\n")).collect();
        let s = super::summary(&many);
        assert!(s.starts_with("line 1\n    line 2") && s.contains("line 5") && !s.contains("line 6"), "{s}");
        assert!(s.ends_with("… (3 more lines)"), "{s}");
    }
}
