//! The tools of a native request in each wire shape: the agent's own definitions ([`Tools`]'s
//! `builtin`, in OpenAI's shape as Cline v4.0.10's `cline_native_next_gen.tools.snap` has them —
//! each tool's declaration in `tools/registry.rs` holds its own), and definitions a run adds
//! ([`ToolSpec`], e.g. the connected MCP servers' tools from `mcp/native.rs`), each converted
//! the way Cline's `toolSpecFunctionDefinition` (OpenAI, Ollama) and `toolSpecInputSchema`
//! (Anthropic) convert a tool spec; the Responses API's flat shape is the OpenAI one's fields
//! lifted, as Cline's `mapResponseTools` lifts them.

use serde_json::{json, Map, Value};

/// What a native request offers; no `Tools` at all: the XML dialect, no definitions sent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tools {
    /// The agent's own tools, in OpenAI's `tools` shape, in order.
    pub builtin: Vec<Value>,
    /// Definitions added by the run (the MCP servers' tools).
    pub(crate) extra: Vec<ToolSpec>,
    /// Several calls may come in one reply: Cline's `enableParallelToolCalling` (default on;
    /// off with `--one-tool-per-reply`), which its OpenRouter handler sends as
    /// `parallel_tool_calls`.
    pub parallel: bool,
}

/// One extra tool definition, in neither wire shape yet: the parameters' schemas as Cline's
/// converters build them, and the required ones in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolSpec {
    /// The function name (at most 64 characters of `[a-zA-Z0-9_-]`, checked by the maker).
    pub name: String,
    /// What the model reads about the tool.
    pub description: String,
    /// Each parameter's JSON schema, by name, in order.
    pub properties: Map<String, Value>,
    /// The names of the required parameters.
    pub required: Vec<String>,
    /// The input schema's own definitions (`$defs`, `definitions`) that its parameters'
    /// `$ref`s point into (`#/$defs/…`): kept at the top of the parameters' schema, where they
    /// resolve.
    pub defs: Map<String, Value>,
}

impl ToolSpec {
    /// The OpenAI shape (`toolSpecFunctionDefinition`), with `items: {}` (any item) in every
    /// array schema that has none: OpenAI refuses the whole request for one such parameter
    /// ("array schema missing items"), which MCP servers often declare (Cline sends it as is).
    fn openai(&self) -> Value {
        let mut parameters = json!({"type": "object", "properties": self.properties, "required": self.required, "additionalProperties": false});
        self.with_defs(&mut parameters);
        // Every schema in it, the definitions' too.
        with_items(&mut parameters);
        json!({"type": "function", "function": {
            "name": self.name,
            "description": self.description,
            "strict": false,
            "parameters": parameters,
        }})
    }

    /// `schema` (the parameters' object schema) with the definitions its `$ref`s point into.
    fn with_defs(&self, schema: &mut Value) {
        for (k, v) in &self.defs {
            schema[k] = v.clone();
        }
    }

    /// The Anthropic shape (`toolSpecInputSchema`).
    fn anthropic(&self) -> Value {
        let mut input_schema = json!({"type": "object", "properties": self.properties, "required": self.required});
        self.with_defs(&mut input_schema);
        json!({"name": self.name, "description": self.description, "input_schema": input_schema})
    }
}

/// Gives every array schema in `schema` (itself, and those nested in it) that says nothing of
/// its items `items: {}`, which JSON Schema reads as the same thing: any item.
fn with_items(schema: &mut Value) {
    let Value::Object(o) = schema else { return };
    let array = |t: &Value| t == "array" || t.as_array().is_some_and(|ts| ts.iter().any(|t| t == "array"));
    if o.get("type").is_some_and(array) && !o.contains_key("items") && !o.contains_key("prefixItems") {
        o.insert("items".into(), json!({}));
    }
    for (key, value) in o.iter_mut() {
        match (key.as_str(), value) {
            ("properties" | "$defs" | "definitions" | "patternProperties", Value::Object(m)) => {
                m.values_mut().for_each(with_items)
            }
            ("items" | "additionalProperties" | "not" | "contains", v @ Value::Object(_)) => with_items(v),
            ("items" | "prefixItems" | "anyOf" | "oneOf" | "allOf", Value::Array(a)) => {
                a.iter_mut().for_each(with_items)
            }
            _ => {}
        }
    }
}

/// Adds `extra` to the built-in `tools`: named tools (Cline's `access_mcp_resource`) before
/// attempt_completion — and before an ask_followup_question right before it, as Cline's GPT-5
/// variants list them — MCP servers' own tools (`…0mcp0…`) last.
fn with_extra(
    mut tools: Vec<Value>,
    extra: &[ToolSpec],
    shape: fn(&ToolSpec) -> Value,
    name: fn(&Value) -> &Value,
) -> Value {
    for spec in extra {
        let at = tools.iter().position(|t| name(t) == "attempt_completion");
        let at = at.map(|i| if i > 0 && name(&tools[i - 1]) == "ask_followup_question" { i - 1 } else { i });
        match at {
            Some(i) if !spec.name.contains("0mcp0") => tools.insert(i, shape(spec)),
            _ => tools.push(shape(spec)),
        }
    }
    Value::Array(tools)
}

/// The definitions for OpenAI-compatible servers and Ollama.
pub(crate) fn openai(tools: &Tools) -> Value {
    with_extra(tools.builtin.clone(), &tools.extra, ToolSpec::openai, |t| &t["function"]["name"])
}

/// The definitions for OpenAI's Responses API, flat, as Cline's `mapResponseTools` makes them
/// from the OpenAI shape: `type`, `name`, `description`, `parameters` and `strict` (`true` when
/// a definition does not say).
pub(crate) fn responses(tools: &Tools) -> Value {
    let Value::Array(all) = openai(tools) else { return Value::Array(Vec::new()) };
    let flat = all
        .iter()
        .filter(|t| t["type"] == "function")
        .map(|t| {
            let f = &t["function"];
            let mut flat = Map::new();
            flat.insert("type".into(), "function".into());
            for key in ["name", "description", "parameters"] {
                flat.insert(key.into(), f[key].clone());
            }
            flat.insert("strict".into(), f.get("strict").cloned().unwrap_or(Value::Bool(true)));
            Value::Object(flat)
        })
        .collect();
    Value::Array(flat)
}

/// The definitions for Anthropic: `name`, `description`, `input_schema` — as Cline's
/// `toolSpecInputSchema` builds them: `type`, `properties`, `required`, without the
/// `additionalProperties` and `strict` of its OpenAI shape.
pub(crate) fn anthropic(tools: &Tools) -> Value {
    let builtin = tools
        .builtin
        .iter()
        .map(|t| {
            let (f, p) = (&t["function"], &t["function"]["parameters"]);
            let schema = json!({"type": "object", "properties": p["properties"], "required": p["required"]});
            json!({"name": f["name"], "description": f["description"], "input_schema": schema})
        })
        .collect();
    with_extra(builtin, &tools.extra, ToolSpec::anthropic, |t| &t["name"])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The agent's own definitions (as the native dialect sends them) and `extra`.
    fn ours(extra: &[ToolSpec]) -> Tools {
        Tools {
            parallel: true,
            builtin: crate::run::dialect::native::definitions(crate::run::prompt::system::Family::NativeNextGen, "/w"),
            extra: extra.to_vec(),
        }
    }

    #[test]
    fn the_eight_tools_with_clines_descriptions() {
        let names: Vec<String> = openai(&ours(&[]))
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(
            sorted,
            [
                "ask_followup_question",
                "attempt_completion",
                "execute_command",
                "list_files",
                "read_file",
                "replace_in_file",
                "search_files",
                "write_to_file"
            ]
        );
        let a = anthropic(&ours(&[]));
        let exec = a.as_array().unwrap().iter().find(|t| t["name"] == "execute_command").unwrap();
        assert!(exec["description"].as_str().unwrap().starts_with("Request to execute a CLI command on the system."));
        assert_eq!(exec["input_schema"]["required"], json!(["command", "requires_approval"]));
        // toolSpecInputSchema's keys only: no additionalProperties (that is the OpenAI shape's).
        let keys: Vec<&String> = exec["input_schema"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["type", "properties", "required"]);
        // Cline's focus chain parameter, on every tool but execute_command (as in its snapshots).
        for t in openai(&ours(&[])).as_array().unwrap() {
            let progress = t["function"]["parameters"]["properties"].get("task_progress").is_some();
            assert_eq!(progress, t["function"]["name"] != "execute_command", "{t}");
        }
    }

    #[test]
    fn extra_definitions_take_clines_shapes_and_places() {
        let mut properties = Map::new();
        properties.insert("message".into(), json!({"type": "string", "description": "Message to echo"}));
        let spec = |name: &str| ToolSpec {
            name: name.into(),
            description: "srv: Echoes".into(),
            properties: properties.clone(),
            required: vec!["message".into()],
            defs: Map::new(),
        };
        let extra = [spec("access_mcp_resource"), spec("cabcde0mcp0echo")];
        let o = openai(&ours(&extra));
        let names: Vec<&str> = o.as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
        let at = names.iter().position(|n| *n == "attempt_completion").unwrap();
        assert_eq!(names[at - 1], "access_mcp_resource");
        assert_eq!(names.last(), Some(&"cabcde0mcp0echo"));
        assert_eq!(
            o[names.len() - 1],
            json!({"type": "function", "function": {"name": "cabcde0mcp0echo", "description": "srv: Echoes", "strict": false,
                "parameters": {"type": "object", "properties": {"message": {"type": "string", "description": "Message to echo"}},
                    "required": ["message"], "additionalProperties": false}}})
        );
        let a = anthropic(&ours(&extra));
        assert_eq!(
            a.as_array().unwrap().last().unwrap(),
            &json!({"name": "cabcde0mcp0echo", "description": "srv: Echoes",
                "input_schema": {"type": "object", "properties": {"message": {"type": "string", "description": "Message to echo"}},
                    "required": ["message"]}})
        );
        assert_eq!(a.as_array().unwrap().len(), 10);
        // The Responses API's flat shape, each function's fields lifted.
        let r = responses(&ours(&extra));
        assert_eq!(
            r.as_array().unwrap().last().unwrap(),
            &json!({"type": "function", "name": "cabcde0mcp0echo", "description": "srv: Echoes", "strict": false,
                "parameters": {"type": "object", "properties": {"message": {"type": "string", "description": "Message to echo"}},
                    "required": ["message"], "additionalProperties": false}})
        );
        assert_eq!(r.as_array().unwrap().len(), 10);
    }

    /// OpenAI refuses a request whose tools hold an array schema without `items` ("array schema
    /// missing items"), as MCP servers often declare them; Anthropic takes them as they are.
    #[test]
    fn array_schemas_without_items_get_any_item_for_openai() {
        let properties: Map<String, Value> = serde_json::from_value(json!({
            "tags": {"type": "array", "description": "Tags"},
            "rows": {"type": "array", "items": {"type": "array"}},
            "maybe": {"type": ["array", "null"]},
            "filter": {"type": "object", "properties": {"ids": {"type": "array"}}},
            "pair": {"type": "array", "prefixItems": [{"type": "string"}]},
            "named": {"type": "array", "items": {"type": "string"}},
        }))
        .unwrap();
        let defs = serde_json::from_value(json!({"$defs": {"Row": {"type": "array"}}})).unwrap();
        let spec = ToolSpec { name: "c0mcp0t".into(), description: "d".into(), properties, required: vec![], defs };
        let want = json!({
            "tags": {"type": "array", "description": "Tags", "items": {}},
            "rows": {"type": "array", "items": {"type": "array", "items": {}}},
            "maybe": {"type": ["array", "null"], "items": {}},
            "filter": {"type": "object", "properties": {"ids": {"type": "array", "items": {}}}},
            "pair": {"type": "array", "prefixItems": [{"type": "string"}]},
            "named": {"type": "array", "items": {"type": "string"}},
        });
        let o = openai(&ours(std::slice::from_ref(&spec)));
        assert_eq!(o.as_array().unwrap().last().unwrap()["function"]["parameters"]["properties"], want);
        // The definitions go beside the properties, their arrays given items too.
        let defs = &o.as_array().unwrap().last().unwrap()["function"]["parameters"]["$defs"];
        assert_eq!(defs, &json!({"Row": {"type": "array", "items": {}}}));
        let r = responses(&ours(std::slice::from_ref(&spec)));
        assert_eq!(r.as_array().unwrap().last().unwrap()["parameters"]["properties"], want);
        let a = anthropic(&ours(std::slice::from_ref(&spec)));
        assert_eq!(a.as_array().unwrap().last().unwrap()["input_schema"]["properties"], Value::Object(spec.properties));
    }
}
