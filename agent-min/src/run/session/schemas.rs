//! The JSON Schemas of the formats other programs read: the `--json` events, the saved task file
//! and `history --json` lines. They are generated from the serde types themselves (schemars), so
//! a format and its schema cannot drift apart; the files under `agent-min/schemas/` are these
//! schemas, and a test fails when they differ (regenerate them with
//! `AGENT_MIN_WRITE_SCHEMAS=1 cargo test -p agent-min --lib session::schemas`).
//!
//! What `agent-min` writes is described with serde's serialize contract (every field present,
//! `null` where optional); the saved task with the deserialize contract (what loads: fields added
//! in later versions may be absent). Closed objects say `"additionalProperties": false`.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{json, Map, Value};

use super::events::{self, Event};
use super::history::{self, Entry};
use super::state::{self, TaskFile};

/// A schema file: its name under `agent-min/schemas/`, and the schema.
type File = (&'static str, fn() -> Value);

/// The schema files.
pub(crate) const FILES: &[File] =
    &[("events.schema.json", events), ("task.schema.json", task), ("history.schema.json", history)];

fn generate<T: JsonSchema>(serialize: bool, description: &str) -> Value {
    let settings = SchemaSettings::draft2020_12();
    let settings = if serialize { settings.for_serialize() } else { settings.for_deserialize() };
    let mut v = settings.into_generator().into_root_schema_for::<T>().to_value();
    let root = v.as_object_mut().expect("a schema object");
    // `$schema` first, then what this is.
    let mut out = Map::new();
    out.extend(root.remove("$schema").map(|s| ("$schema".to_string(), s)));
    out.insert("description".into(), description.into());
    root.remove("description");
    out.extend(std::mem::take(root));
    Value::Object(out)
}

/// One `--json` line: an [`Event`] plus `version`, `task_id` and `ts`.
pub(crate) fn events() -> Value {
    let mut v = generate::<Event>(
        true,
        "One line of `agent-min run --json`: an event object. `version` is the version of this schema.",
    );
    let variants = v.get_mut("oneOf").and_then(Value::as_array_mut).expect("Event is an enum of objects");
    for variant in variants {
        let props = variant["properties"].as_object_mut().expect("properties");
        props.insert("version".into(), json!({"const": events::VERSION}));
        props.insert("task_id".into(), json!({"type": "string", "minLength": 1}));
        props.insert("ts".into(), json!({"type": "integer", "minimum": 0, "description": "ms since the Unix epoch"}));
        let required = variant["required"].as_array_mut().expect("required");
        required.extend(["version", "task_id", "ts"].map(Value::from));
        assert_eq!(variant["additionalProperties"], false, "every event is a closed object");
    }
    v
}

/// The saved task file, `STATE_DIR/tasks/ID.json`.
pub(crate) fn task() -> Value {
    let mut v = generate::<TaskFile>(
        false,
        "A task saved by agent-min (STATE_DIR/tasks/ID.json); fields added after version 1 may be absent. A save is written with the oldest version that has what it holds: 2 images, 3 a checkpoint of another workspace, 4 the focus chain's checklist, 5 what a server attached to a reply to have it back, 6 what a cut of the context window removed, 7 files a task-only checkpoint restore found changed, for the next resume to name, 8 where a reply's text stood among its interleaved thinking and calls; 1 none of these.",
    );
    v["properties"]["version"] = json!({"enum": (1..=state::VERSION).collect::<Vec<u32>>()});
    v
}

/// One line of `agent-min history --json`.
pub(crate) fn history() -> Value {
    let mut v = generate::<Entry>(true, "One line of `agent-min history --json`: one saved task.");
    v["properties"]["version"] = json!({"const": history::VERSION});
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed files are the generated schemas (or, with `AGENT_MIN_WRITE_SCHEMAS=1`,
    /// become them).
    #[test]
    fn the_committed_schema_files_are_the_generated_ones() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas");
        let write = std::env::var_os("AGENT_MIN_WRITE_SCHEMAS").is_some();
        for (name, schema) in FILES {
            let text = serde_json::to_string_pretty(&schema()).unwrap() + "\n";
            let path = dir.join(name);
            if write {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &text).unwrap();
            }
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            assert!(
                committed == text,
                "{} is not the schema of the types; regenerate it: AGENT_MIN_WRITE_SCHEMAS=1 cargo test -p agent-min --lib session::schemas",
                path.display()
            );
        }
    }

    #[test]
    fn every_event_type_is_a_closed_object_with_the_common_fields() {
        let v = events();
        let variants = v["oneOf"].as_array().unwrap();
        assert_eq!(variants.len(), 20);
        for e in variants {
            assert_eq!(e["additionalProperties"], false);
            for k in ["type", "version", "task_id", "ts"] {
                assert!(e["required"].as_array().unwrap().contains(&k.into()), "{k} in {e}");
            }
        }
        // Optional values are still always written: `null`, never absent.
        let approval = variants.iter().find(|e| e["properties"]["type"]["const"] == "approval").unwrap();
        assert!(approval["required"].as_array().unwrap().contains(&"feedback".into()));
        assert_eq!(task()["additionalProperties"], false);
        assert_eq!(history()["additionalProperties"], false);
    }

    /// The `hook` event names every hook it is sent for (`Notification` was missing: a stream
    /// with one failed validation against the published schema).
    #[test]
    fn the_hook_events_names_are_every_hooks() {
        let v = events();
        let hook = v["oneOf"].as_array().unwrap().iter().find(|e| e["properties"]["type"]["const"] == "hook").unwrap();
        let names: Vec<&str> =
            hook["properties"]["hook"]["enum"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
        let all: Vec<&str> = crate::run::project::hooks::Hook::ALL.iter().map(|h| h.name()).collect();
        assert_eq!(names, all);
    }

    /// Every event type is named where a script's author looks: `run --help`'s `--json` line,
    /// and a row of the README's and of docs/agent.md's tables (four were missing from the
    /// help, one from the README).
    #[test]
    fn every_event_type_is_named_in_the_help_and_both_tables() {
        let help = crate::run::texts::AGENT_MIN_RUN_TXT.get();
        let json_line = &help[help.find("    --json ").unwrap()..help.find("    --state-dir").unwrap()];
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let readme = std::fs::read_to_string(root.join("../README.md")).unwrap();
        let agent_md = std::fs::read_to_string(root.join("../docs/agent.md")).unwrap();
        let mut missing = Vec::new();
        for e in events()["oneOf"].as_array().unwrap() {
            let name = e["properties"]["type"]["const"].as_str().unwrap();
            let word = |w: &str| w.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_') == name;
            if !json_line.split_whitespace().any(word) {
                missing.push(format!("{name}: run --help"));
            }
            for (file, text) in [("README.md", &readme), ("docs/agent.md", &agent_md)] {
                if !text.contains(&format!("\n| `{name}` |")) {
                    missing.push(format!("{name}: {file}"));
                }
            }
        }
        assert!(missing.is_empty(), "event types not named: {missing:?}");
    }
}
