//! The `--json` event format as the repository publishes it: every event the tests read is
//! validated against `agent-min/schemas/events.schema.json` (a JSON Schema generated from the
//! event types; a unit test keeps the file equal to them) by the `jsonschema` crate.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{json, Value};

/// A compiled schema file of `agent-min/schemas/`.
pub fn schema(name: &str) -> jsonschema::Validator {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
    jsonschema::validator_for(&v).unwrap_or_else(|e| panic!("{} is not a valid schema: {e}", path.display()))
}

/// Every error of `v` against `schema`, one per line.
pub fn errors(schema: &jsonschema::Validator, v: &Value) -> Result<(), String> {
    let errors: Vec<String> = schema.iter_errors(v).map(|e| format!("at {}: {e}", e.instance_path())).collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n"))
    }
}

struct Events {
    /// The whole schema: one of the event types.
    all: jsonschema::Validator,
    /// Each type's own schema, for an error that says what is wrong rather than "none matched".
    by_type: HashMap<String, jsonschema::Validator>,
}

fn events_schema() -> &'static Events {
    static S: OnceLock<Events> = OnceLock::new();
    S.get_or_init(|| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/events.schema.json");
        let root: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let by_type = root["oneOf"]
            .as_array()
            .expect("events.schema.json: oneOf the event types")
            .iter()
            .map(|variant| {
                let ty = variant["properties"]["type"]["const"].as_str().expect("each type has a const").to_string();
                let mut one = variant.clone();
                one["$schema"] = root["$schema"].clone();
                one["$defs"] = root.get("$defs").cloned().unwrap_or(json!({}));
                (ty, jsonschema::validator_for(&one).unwrap())
            })
            .collect();
        Events { all: schema("events.schema.json"), by_type }
    })
}

/// Checks one event against the schema.
pub fn validate(v: &Value) -> Result<(), String> {
    let s = events_schema();
    let ty = v.get("type").and_then(Value::as_str).ok_or_else(|| format!("no \"type\": {v}"))?;
    let one = s.by_type.get(ty).ok_or_else(|| format!("unknown event type {ty:?}: {v}"))?;
    errors(one, v).map_err(|e| format!("{ty}: {e}\nin {v}"))?;
    errors(&s.all, v).map_err(|e| format!("{e}\nin {v}"))
}

/// Parses NDJSON stdout; panics unless every line is an event that follows the schema.
pub fn parse(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let v: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("stdout line {} is not JSON ({e}): {line:?}", i + 1));
            if let Err(e) = validate(&v) {
                panic!("stdout line {}: {e}", i + 1);
            }
            v
        })
        .collect()
}

/// The events of one type.
pub fn of<'a>(events: &'a [Value], ty: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == ty).collect()
}
