//! Cline's texts for MCP results and errors (`UseMcpToolHandler`, `AccessMcpResourceHandler`,
//! `formatResponse`, `truncateContent`), and for a prompt named in a slash command
//! (`parseSlashCommands`, `formatMcpPromptResponse`).

use serde_json::Value;

/// The server and prompt a slash command `mcp:SERVER:PROMPT` names (colons allowed in PROMPT),
/// as Cline's `parseSlashCommands` splits it.
pub(crate) fn prompt_command(name: &str) -> Option<(&str, &str)> {
    let (server, prompt) = name.strip_prefix("mcp:")?.split_once(':')?;
    Some((server, prompt))
}

/// A prompt (`prompts/get`'s result) as it goes before the person's message: Cline's
/// `<mcp_prompt>` block with its `formatMcpPromptResponse` text, and a newline.
pub(crate) fn prompt_block(server: &str, prompt: &str, result: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(d) = result.get("description").and_then(Value::as_str).filter(|d| !d.is_empty()) {
        parts.push(format!("Description: {d}"));
    }
    let messages = result.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    for m in messages {
        let role = if m.get("role").and_then(Value::as_str) == Some("user") { "User" } else { "Assistant" };
        let c = m.get("content").unwrap_or(&Value::Null);
        let field = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("undefined").to_string();
        match c.get("type").and_then(Value::as_str) {
            Some("text") => parts.push(format!("[{role}]\n{}", field(c, "text"))),
            Some("image") => parts.push(format!("[{role}]\n[Image: {}]", field(c, "mimeType"))),
            Some("audio") => parts.push(format!("[{role}]\n[Audio: {}]", field(c, "mimeType"))),
            Some("resource") => {
                let r = c.get("resource").unwrap_or(&Value::Null);
                match r.get("text").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                    Some(t) => parts.push(format!("[{role}]\n[Resource: {}]\n{t}", field(r, "uri"))),
                    None => parts.push(format!("[{role}]\n[Resource: {}]", field(r, "uri"))),
                }
            }
            _ => {}
        }
    }
    format!("<mcp_prompt server=\"{server}\" prompt=\"{prompt}\">\n{}\n</mcp_prompt>\n", parts.join("\n\n"))
}

/// `formatResponse.invalidMcpToolArgumentError`.
pub(crate) fn invalid_arguments(server: &str, tool: &str) -> String {
    format!(
        "Invalid JSON argument used with {server} for {tool}. Please retry with a properly formatted JSON argument."
    )
}

/// A `tools/call` result as the model reads it: text items as text, resources as their JSON
/// (without `blob`), `isError` prefixed with `Error:` (not yet cut: [`truncate`] it once the
/// caller has added its notes). Returns the text and the `data` of each image item, in order.
pub(crate) fn tool_result(result: &Value) -> (String, Vec<&str>) {
    let items = result.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let mut parts = Vec::new();
    let mut images = Vec::new();
    for item in items {
        match item.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(t) = item.get("text").and_then(Value::as_str).filter(|t| !t.is_empty()) {
                    parts.push(t.to_string());
                }
            }
            Some("resource") => {
                let mut r = item.get("resource").cloned().unwrap_or(Value::Null);
                if let Some(o) = r.as_object_mut() {
                    o.shift_remove("blob");
                }
                parts.push(serde_json::to_string_pretty(&as_javascript(r)).unwrap_or_default());
            }
            Some("image") => images.push(item.get("data").and_then(Value::as_str).unwrap_or("")),
            // A link to a resource (protocol 2025-06-18), which Cline drops: the model was told
            // links follow and got none, then guessed URIs. Given as its JSON, as a resource is.
            Some("resource_link") => {
                let mut link = item.clone();
                if let Some(o) = link.as_object_mut() {
                    o.shift_remove("type");
                }
                parts.push(serde_json::to_string_pretty(&as_javascript(link)).unwrap_or_default());
            }
            _ => {}
        }
    }
    let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
    let joined = parts.join("\n\n");
    let text = match (is_error, joined.is_empty()) {
        (true, true) => "Error:\n".to_string(),
        (true, false) => format!("Error:\n{joined}"),
        (false, true) => "(No response)".to_string(),
        (false, false) => joined,
    };
    (text, images)
}

/// Cline's note after a result's text when the model takes no images.
pub(crate) fn images_not_viewable(count: usize) -> String {
    format!(
        "\n\n[{count} images were provided in the response, and while they are displayed to the user, you do not have the ability to view them.]"
    )
}

/// The note after a result's text for an image the model takes but is not sent (`why`).
pub(crate) fn image_not_sent(number: usize, why: &str) -> String {
    format!("\n\n[Image {number} of the response was not sent to you: {why}.]")
}

/// A `resources/read` result: the text of each content item (blobs are skipped, as Cline does).
pub(crate) fn resource_result(result: &Value) -> String {
    let items = result.get("contents").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let parts: Vec<&str> =
        items.iter().filter_map(|i| i.get("text").and_then(Value::as_str)).filter(|t| !t.is_empty()).collect();
    let text = if parts.is_empty() { "(Empty response)".to_string() } else { parts.join("\n\n") };
    truncate(&text)
}

/// `value` as JavaScript holds it after `JSON.parse`: a number is a double, and `JSON.stringify`
/// writes a whole one without a fraction (`1.0` as `1`, `-0.0` as `0`). So a schema or a result
/// reads as Cline shows it, and arguments reach the server as Cline sends them.
pub(crate) fn as_javascript(value: Value) -> Value {
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(0.0);
            // Within JavaScript's safe integers, a whole double is written as an integer.
            if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
                Value::from(f as i64)
            } else {
                Value::Number(n)
            }
        }
        Value::Array(items) => Value::Array(items.into_iter().map(as_javascript).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, as_javascript(v))).collect()),
        other => other,
    }
}

/// Cline's `truncateContent`: the first 400 KB (in UTF-16 units, as JavaScript counts) and a
/// note, as for a file.
pub(crate) fn truncate(s: &str) -> String {
    match crate::run::prompt::content_limits::cut(s) {
        None => s.to_string(),
        Some((at, note)) => format!("{}{note}", crate::run::ui::redact::cut_end(&s[..at])),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_prompt_is_clines_mcp_prompt_block() {
        assert_eq!(prompt_command("mcp:srv:a:b"), Some(("srv", "a:b")));
        assert_eq!(prompt_command("mcp:srv"), None);
        assert_eq!(prompt_command("release.md"), None);
        let result = serde_json::json!({
            "description": "Review code",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Review this."}},
                {"role": "assistant", "content": {"type": "image", "mimeType": "image/png", "data": "AA=="}},
                {"role": "user", "content": {"type": "resource", "resource": {"uri": "file:///a.rs", "text": "fn a() {}"}}},
                {"role": "user", "content": {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AA=="}}},
                {"role": "user", "content": {"type": "audio", "mimeType": "audio/wav", "data": "AA=="}},
                {"role": "user", "content": {"type": "resource_link", "uri": "file:///c"}}
            ]
        });
        assert_eq!(
            prompt_block("srv", "review", &result),
            "<mcp_prompt server=\"srv\" prompt=\"review\">\nDescription: Review code\n\n[User]\nReview this.\n\n[Assistant]\n[Image: image/png]\n\n[User]\n[Resource: file:///a.rs]\nfn a() {}\n\n[User]\n[Resource: file:///b.bin]\n\n[User]\n[Audio: audio/wav]\n</mcp_prompt>\n"
        );
        assert_eq!(
            prompt_block("s", "p", &serde_json::json!({"messages": []})),
            "<mcp_prompt server=\"s\" prompt=\"p\">\n\n</mcp_prompt>\n"
        );
    }

    #[test]
    fn tool_results_follow_cline() {
        let r = json!({"content": [{"type": "text", "text": "a"}, {"type": "image", "data": "x", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "f://x", "text": "t", "blob": "zzz"}}]});
        let (text, images) = tool_result(&r);
        assert_eq!(images, ["x"]);
        assert_eq!(text, "a\n\n{\n  \"uri\": \"f://x\",\n  \"text\": \"t\"\n}");
        assert_eq!(
            images_not_viewable(1),
            "\n\n[1 images were provided in the response, and while they are displayed to the user, you do not have the ability to view them.]"
        );
        assert_eq!(tool_result(&json!({"content": [], "isError": true})).0, "Error:\n");
        assert_eq!(
            tool_result(&json!({"content": [{"type": "text", "text": "bad"}], "isError": true})).0,
            "Error:\nbad"
        );
        assert_eq!(tool_result(&json!({"content": []})).0, "(No response)");
        // The rest in its order, as Cline's `{blob, ...rest}` leaves it.
        let middle = json!({"content": [{"type": "resource", "resource": {"uri": "u", "blob": "b", "mimeType": "m", "text": "t"}}]});
        assert_eq!(tool_result(&middle).0, "{\n  \"uri\": \"u\",\n  \"mimeType\": \"m\",\n  \"text\": \"t\"\n}");
        assert_eq!(resource_result(&json!({"contents": [{"uri": "u", "blob": "b"}]})), "(Empty response)");
    }

    /// A result's links to resources reach the model as their JSON (Cline drops them, and the
    /// model read "Here are 2 resource links" followed by none).
    #[test]
    fn a_results_resource_links_are_given_not_dropped() {
        let r = json!({"content": [{"type": "text", "text": "Links:"},
            {"type": "resource_link", "uri": "demo://a", "name": "a", "mimeType": "text/plain"}]});
        assert_eq!(
            tool_result(&r).0,
            "Links:\n\n{\n  \"uri\": \"demo://a\",\n  \"name\": \"a\",\n  \"mimeType\": \"text/plain\"\n}"
        );
    }

    #[test]
    fn numbers_read_as_javascript_writes_them() {
        let v = json!({"default": 1.0, "min": -0.0, "step": 0.5, "big": 1e300, "list": [2.0, 3], "n": {"k": 10.0}});
        assert_eq!(
            as_javascript(v).to_string(),
            r#"{"default":1,"min":0,"step":0.5,"big":1e+300,"list":[2,3],"n":{"k":10}}"#
        );
    }

    #[test]
    fn long_results_are_cut_with_clines_note_counting_as_javascript_does() {
        // 500 KB of characters (UTF-16 units, as Cline's `content.length` counts them).
        let t = truncate(&"é".repeat(500 * 1024));
        assert_eq!(t.chars().take_while(|&c| c == 'é').count(), 400 * 1024);
        assert!(t.ends_with("(100.0 KB truncated). Use search_files to find specific patterns, or execute_command with grep/head/tail for targeted reading.]"), "{}", &t[t.len() - 300..]);
        assert!(t.contains("This content is 500.0 KB but only the first 400.0 KB is shown"));
        // 300 K characters of two bytes each are under Cline's limit: whole.
        let whole = "é".repeat(300 * 1024);
        assert_eq!(truncate(&whole), whole);
    }
}
