//! The connected servers' tools as native tool definitions, the way Cline v4.0.10 sends them
//! (`ClineToolSet.getNativeTools` / `mcpToolToClineToolSpec`): each tool is a function named
//! `uid + "0mcp0" + tool name`, described as `server: description`, its input schema's
//! properties carried over; beside them Cline's native `access_mcp_resource`. A call of such a
//! name becomes `use_mcp_tool` again in `native/mcp_call.rs`, through [`server_by_key`].
//!
//! The uid is Cline's shape (`c` and five characters of nanoid's alphabet, so that names stay
//! short), but derived from the server's name rather than drawn at random: the same server has
//! the same function names in every run, so a resumed or replayed task's calls still resolve.
//!
//! Function names the APIs refuse (over 64 characters — Cline leaves those tools out silently —
//! or characters outside `[a-zA-Z0-9_-]`, which Cline sends and the API rejects), and parameter
//! names Anthropic's API refuses (outside `[a-zA-Z0-9_.-]{1,64}`, which Cline sends too), are
//! left out with a warning naming the tool and the way to reach it (`--tool-calls xml`). The
//! input schema's `$defs` go with the parameters, so that their `$ref`s resolve.

use std::sync::Mutex;

use serde_json::{Map, Value};

use super::hub::Hub;
use crate::run::llm::tool_specs::ToolSpec;
use crate::run::ui::term::{visible, Term};

/// Cline's `CLINE_MCP_TOOL_IDENTIFIER`, between the server's uid and the tool's name.
pub(crate) const IDENTIFIER: &str = "0mcp0";

/// The longest function name Anthropic and OpenAI accept.
const MAX_NAME: usize = 64;

/// nanoid's URL-safe alphabet (what Cline's uids are drawn from).
const ALPHABET: &[u8; 64] = b"useandom-26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict";

/// Each server's uid and name (Cline's static `McpHub.mcpServerKeys`).
static KEYS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// Cline's `getMcpServerByKey`: the server a uid stands for, or the key itself when unknown.
pub(crate) fn server_by_key(key: &str) -> String {
    let keys = KEYS.lock().unwrap_or_else(|e| e.into_inner());
    keys.iter().find(|(k, _)| k == key).map_or_else(|| key.to_string(), |(_, name)| name.clone())
}

/// The uid of server `name` (Cline's `getMcpServerKey`): the one it already has, else a new
/// one unique among the servers of this process.
pub(crate) fn server_key(name: &str) -> String {
    let mut keys = KEYS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((k, _)) = keys.iter().find(|(_, n)| n == name) {
        return k.clone();
    }
    let key = (0u64..)
        .map(|salt| uid(name, salt))
        // A uid must not end in a prefix of the identifier (`c…0mcp` + `0mcp0` splits early).
        .find(|k| !keys.iter().any(|(old, _)| old == k) && format!("{k}{IDENTIFIER}").find(IDENTIFIER) == Some(k.len()))
        .expect("some salt gives a free uid");
    keys.push((key.clone(), name.to_string()));
    key
}

/// `c` and five characters from a 64-bit FNV-1a hash of the name and salt.
fn uid(name: &str, salt: u64) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes().chain(salt.to_le_bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let mut s = String::from("c");
    for i in 0..5 {
        s.push(ALPHABET[((h >> (6 * i)) & 63) as usize] as char);
    }
    s
}

/// The native definitions this run adds to the eight tools: Cline's `access_mcp_resource` (when
/// any server is configured) and every connected server's tools. Tools whose function name the
/// APIs would refuse are left out, each warned about once on `term`. `cwd` fills Cline's
/// `{{CWD}}` placeholder, which its converter replaces in every description.
///
/// `strict_names`: the request goes to an API that checks parameter names (Anthropic's, and
/// OpenRouter's, which passes the tools on to Anthropic's and Google's).
pub(crate) fn tool_specs(hub: &mut Hub, cwd: &str, term: &mut Term, strict_names: bool) -> Vec<ToolSpec> {
    if hub.is_empty() {
        return Vec::new();
    }
    let mut specs = vec![access_mcp_resource()];
    let mut refused = Vec::new();
    for (cfg, conn) in hub.connected() {
        let uid = server_key(&cfg.name);
        for tool in &conn.tools {
            match tool_spec(&cfg.name, &uid, tool, cwd, strict_names) {
                Ok(spec) => specs.push(spec),
                Err(why) => refused.push(why),
            }
        }
    }
    for why in refused {
        if !hub.native_refused.contains(&why) {
            term.warn(&visible(&why));
            hub.native_refused.push(why);
        }
    }
    specs
}

/// Cline's native `access_mcp_resource`, with its focus chain's `task_progress`.
fn access_mcp_resource() -> ToolSpec {
    let param = |d: &str| serde_json::json!({"type": "string", "description": d});
    let mut properties = Map::new();
    properties.insert("server_name".into(), param("The name of the MCP server providing the resource"));
    properties.insert("uri".into(), param("The URI identifying the specific resource to access"));
    properties.insert("task_progress".into(), param(TASK_PROGRESS));
    ToolSpec {
        name: "access_mcp_resource".into(),
        description: "Request to access a resource provided by a connected MCP server. Resources represent data sources that can be used as context, such as files, API responses, or system information. You must only use this tool if you have been informed of the MCP server and the resource you are trying to access.".into(),
        properties,
        required: vec!["server_name".into(), "uri".into()],
        defs: Map::new(),
    }
}

/// Cline's `TASK_PROGRESS_PARAMETER` instruction.
const TASK_PROGRESS: &str = "A checklist showing task progress after this tool use is completed. The task_progress parameter must be included as a separate parameter inside of the parent tool call, it must be separate from other parameters such as content, arguments, etc. (See 'UPDATING TASK PROGRESS' section for more details)";

/// `specs` with Cline's focus chain off: `access_mcp_resource` without `task_progress` (the
/// servers' own tools keep every property they declare).
pub(crate) fn drop_task_progress(specs: &mut [ToolSpec]) {
    for s in specs.iter_mut().filter(|s| s.name == "access_mcp_resource") {
        s.properties.shift_remove("task_progress");
    }
}

/// One MCP tool as Cline converts it: `mcpToolToClineToolSpec` makes each property a parameter
/// (its `description` the instruction, its `type` or "string", required if listed — or if the
/// property's own `required` is truthy, which Cline's copy of the other keys lets through),
/// then `toolSpecFunctionDefinition` builds each schema: `type`, `description`, `items` for
/// arrays, `properties` for objects, and every other key of the property (enum, format, …).
/// `Err` says why the tool cannot be offered.
fn tool_spec(server: &str, uid: &str, tool: &Value, cwd: &str, strict_names: bool) -> Result<ToolSpec, String> {
    let tool_name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
    let name = format!("{uid}{IDENTIFIER}{tool_name}");
    let valid = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    // JavaScript's length counts UTF-16 units; for the valid (ASCII) names that is bytes.
    if name.encode_utf16().count() > MAX_NAME {
        return Err(format!("MCP tool '{tool_name}' of server '{server}' is not offered as a native tool: its function name '{name}' is longer than {MAX_NAME} characters (as Cline, it is left out); run with --tool-calls xml to use it"));
    }
    if tool_name.is_empty() || !tool_name.chars().all(valid) {
        return Err(format!("MCP tool '{tool_name}' of server '{server}' is not offered as a native tool: function names may only hold a-z, A-Z, 0-9, '_' and '-', which the API checks; run with --tool-calls xml to use it"));
    }
    let mut properties = Map::new();
    let mut required = Vec::new();
    let schema = tool.get("inputSchema").and_then(Value::as_object);
    let listed: Vec<&str> = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let props = schema.and_then(|s| s.get("properties")).and_then(Value::as_object);
    for (key, prop) in props.into_iter().flatten() {
        let empty = Map::new();
        let prop = prop.as_object().unwrap_or(&empty);
        // Every key but these four overwrites the parameter's own (`name`, `required`, …).
        let name = prop.get("name").map_or_else(|| key.clone(), js_string);
        // Anthropic's API refuses every request that offers a tool with another property name
        // (Cline sends it, and the task fails on its first request); OpenAI's takes it.
        let fits = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
        if strict_names && (name.is_empty() || name.len() > MAX_NAME || !name.chars().all(fits)) {
            return Err(format!("MCP tool '{tool_name}' of server '{server}' is not offered as a native tool: its parameter '{name}' is not 1 to {MAX_NAME} characters of a-z, A-Z, 0-9, '_', '.' and '-', which the API checks; run with --tool-calls xml to use it"));
        }
        let is_required = prop.get("required").map_or(listed.contains(&key.as_str()), truthy);
        let instruction = match prop.get("instruction").or_else(|| prop.get("description")) {
            Some(Value::String(s)) => s.as_str(),
            _ => "",
        };
        // A schema given by reference or by alternatives has its type there: "string" beside
        // it (Cline's default) would tell the model a nested object is a string.
        let composed = ["$ref", "anyOf", "oneOf", "allOf"].iter().any(|k| prop.contains_key(*k));
        let ty = match prop.get("type").filter(|t| truthy(t)) {
            Some(t) => Some(t.clone()),
            None => (!composed).then(|| Value::from("string")),
        };
        let mut out = Map::new();
        if let Some(ty) = &ty {
            out.insert("type".into(), ty.clone());
        }
        out.insert("description".into(), Value::from(placeholders(instruction, cwd)));
        for (k, shape) in [("items", "array"), ("properties", "object")] {
            if let Some(v) = prop.get(k).filter(|v| truthy(v) && ty.as_ref().is_some_and(|t| t == shape)) {
                out.insert(k.into(), v.clone());
            }
        }
        const RESERVED: [&str; 10] = [
            "name",
            "required",
            "instruction",
            "usage",
            "dependencies",
            "description",
            "contextRequirements",
            "type",
            "items",
            "properties",
        ];
        for (k, v) in prop.iter().filter(|(k, _)| !RESERVED.contains(&k.as_str())) {
            out.insert(k.clone(), v.clone());
        }
        if is_required {
            required.push(name.clone());
        }
        properties.insert(name, Value::Object(out));
    }
    let description = match tool.get("description").and_then(Value::as_str).filter(|d| !d.is_empty()) {
        Some(d) => d,
        None => tool_name,
    };
    // The definitions the parameters' `$ref`s point into (Pydantic puts every nested model and
    // enum there), kept where `#/$defs/…` resolves: left behind, a reference points at nothing.
    let defs = ["$defs", "definitions"]
        .iter()
        .filter_map(|k| schema.and_then(|s| s.get(*k)).filter(|v| v.is_object()).map(|v| (k.to_string(), v.clone())))
        .collect();
    let description = placeholders(&format!("{server}: {description}"), cwd);
    Ok(ToolSpec { name, description, properties, required, defs })
}

/// Cline's `replacer`, applied to every description it converts.
fn placeholders(s: &str, cwd: &str) -> String {
    s.replace("{{BROWSER_VIEWPORT_WIDTH}}", "900")
        .replace("{{BROWSER_VIEWPORT_HEIGHT}}", "600")
        .replace("{{CWD}}", cwd)
        .replace("{{MULTI_ROOT_HINT}}", "")
}

/// JavaScript's truthiness of a JSON value.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// A value used as an object key, as JavaScript turns it into one.
fn js_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn uids_are_clines_shape_stable_and_resolve_back() {
        let a = server_key("native-test-everything");
        assert_eq!(a.len(), 6);
        assert!(a.starts_with('c') && a.bytes().all(|b| ALPHABET.contains(&b)));
        assert_eq!(server_key("native-test-everything"), a, "a server keeps its uid");
        assert_eq!(uid("native-test-everything", 0), a, "derived from the name, the same in every run");
        let b = server_key("native-test-other");
        assert_ne!(a, b);
        assert_eq!(server_by_key(&a), "native-test-everything");
        assert_eq!(server_by_key("cZZZZZ"), "cZZZZZ", "an unknown key stands for itself, as in Cline");
    }

    /// The servers' uids are known once the settings are read, before any request: a history
    /// loaded first (an editor's `session/load` after a restart) named an MCP call's server by
    /// its uid.
    #[test]
    fn a_configured_servers_uid_resolves_before_any_request() {
        let name = "native-test-configured";
        let key = uid(name, 0);
        assert_eq!(server_by_key(&key), key, "not known before its settings are read");
        let cfg = super::super::config::ServerConfig {
            name: name.into(),
            file: "/w/.cline/mcp.json".into(),
            kind: super::super::config::Kind::Stdio { command: "true".into(), args: vec![], env: vec![], cwd: None },
            disabled: true,
            auto_approve: vec![],
            auto_approve_ignored: vec![],
            timeout: std::time::Duration::from_secs(60),
            startup_timeout: None,
            written: String::new(),
        };
        let _hub = Hub::start(vec![cfg], std::time::Duration::ZERO, false);
        assert_eq!(server_by_key(&key), name);
    }

    #[test]
    fn a_tool_becomes_clines_definition() {
        let tool = json!({
            "name": "pick",
            "description": "Picks in {{CWD}}",
            "inputSchema": {"type": "object", "required": ["choice"], "properties": {
                "choice": {"type": "string", "enum": ["a", "b"], "description": "Which one"},
                "count": {"type": "integer", "minimum": 1},
                "tags": {"type": "array", "items": {"type": "string"}, "description": "Tags"},
                "opts": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]},
                "any": {"description": "Untyped"}
            }}
        });
        let spec = tool_spec("srv", "cabcde", &tool, "/w", true).unwrap();
        assert_eq!(spec.name, "cabcde0mcp0pick");
        assert_eq!(spec.description, "srv: Picks in /w");
        assert_eq!(
            Value::Object(spec.properties),
            json!({
                "choice": {"type": "string", "description": "Which one", "enum": ["a", "b"]},
                "count": {"type": "integer", "description": "", "minimum": 1},
                "tags": {"type": "array", "description": "Tags", "items": {"type": "string"}},
                "opts": {"type": "object", "description": "", "properties": {"x": {"type": "number"}}},
                "any": {"type": "string", "description": "Untyped"}
            })
        );
        // `opts` has a `required` of its own, which Cline's copy makes the parameter's.
        assert_eq!(spec.required, ["choice", "opts"]);
        let bare = tool_spec("srv", "cabcde", &json!({"name": "ping"}), "/w", true).unwrap();
        assert_eq!((bare.description.as_str(), bare.properties.len()), ("srv: ping", 0));
    }

    /// Pydantic's shape (FastMCP): nested models and enums in `$defs`, referred to by `$ref`,
    /// optional fields as `anyOf` with null. The definitions go along; no "string" beside them.
    #[test]
    fn referenced_definitions_go_with_the_parameters() {
        let tool = json!({"name": "paint", "inputSchema": {"type": "object", "required": ["color"],
        "$defs": {"Color": {"enum": ["red", "blue"], "type": "string"}, "Box": {"type": "object", "properties": {"w": {"type": "integer"}}}},
        "properties": {
            "color": {"$ref": "#/$defs/Color"},
            "box": {"$ref": "#/$defs/Box", "description": "Where"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}
        }}});
        let spec = tool_spec("srv", "cabcde", &tool, "/w", true).unwrap();
        assert_eq!(
            Value::Object(spec.properties),
            json!({
                "color": {"description": "", "$ref": "#/$defs/Color"},
                "box": {"description": "Where", "$ref": "#/$defs/Box"},
                "note": {"description": "", "anyOf": [{"type": "string"}, {"type": "null"}], "default": null}
            })
        );
        assert_eq!(Value::Object(spec.defs), json!({"$defs": tool["inputSchema"]["$defs"]}));
    }

    #[test]
    fn names_the_apis_refuse_are_left_out_with_the_reason() {
        let long = json!({"name": "x".repeat(MAX_NAME - 10)});
        let why = tool_spec("srv", "cabcde", &long, "/w", true).unwrap_err();
        assert!(why.contains("longer than 64 characters") && why.contains("--tool-calls xml"), "{why}");
        let fits = json!({"name": "x".repeat(MAX_NAME - 11)});
        assert_eq!(tool_spec("srv", "cabcde", &fits, "/w", true).unwrap().name.len(), MAX_NAME);
        let dotted = tool_spec("srv", "cabcde", &json!({"name": "github.create_issue"}), "/w", true).unwrap_err();
        assert!(dotted.contains("'github.create_issue'") && dotted.contains("a-z, A-Z, 0-9"), "{dotted}");
        // Parameter names Anthropic refuses (Twilio's `StartTime<`, `settings[include_credits]`).
        for bad in ["StartTime<", "settings[include_credits]", "", &"p".repeat(65)] {
            let tool = json!({"name": "t", "inputSchema": {"properties": {bad: {"type": "string"}}}});
            let why = tool_spec("srv", "cabcde", &tool, "/w", true).unwrap_err();
            assert!(why.contains(&format!("its parameter '{bad}'")) && why.contains("--tool-calls xml"), "{why}");
        }
        // OpenAI's API takes them.
        let odd = json!({"name": "t", "inputSchema": {"properties": {"StartTime<": {"type": "string"}}}});
        assert!(tool_spec("srv", "cabcde", &odd, "/w", false).is_ok());
        let fine = json!({"name": "t", "inputSchema": {"properties": {"a.b-c_D9": {}, &"p".repeat(64): {}}}});
        assert_eq!(tool_spec("srv", "cabcde", &fine, "/w", true).unwrap().properties.len(), 2);
    }
}
