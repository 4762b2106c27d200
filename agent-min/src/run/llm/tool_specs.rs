//! The eight tools as native tool definitions: Cline v4.0.10's JSON schemas and descriptions
//! (its `cline_native_next_gen.tools.snap`), cut to the tools this agent has and without the
//! `task_progress` parameter (this agent has no task-progress checklist to update; the
//! descriptions stay Cline's word for word, attempt_completion's mention of it included).

use serde_json::{json, Value};

/// Cline's definitions in the OpenAI `tools` shape (`{"type":"function","function":{…}}`).
const SPECS: &str = include_str!("tool_specs.json");

/// The definitions for OpenAI-compatible servers and Ollama.
pub fn openai() -> Value {
    serde_json::from_str(SPECS).expect("tool_specs.json is valid JSON (checked by a test)")
}

/// The definitions for Anthropic: `name`, `description`, `input_schema`.
pub fn anthropic() -> Value {
    let tools = openai();
    Value::Array(
        tools
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                let f = &t["function"];
                json!({"name": f["name"], "description": f["description"], "input_schema": f["parameters"]})
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eight_tools_with_clines_descriptions() {
        let names: Vec<String> =
            openai().as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap().to_string()).collect();
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
        let a = anthropic();
        let exec = a.as_array().unwrap().iter().find(|t| t["name"] == "execute_command").unwrap();
        assert!(exec["description"].as_str().unwrap().starts_with("Request to execute a CLI command on the system."));
        assert_eq!(exec["input_schema"]["required"], json!(["command", "requires_approval"]));
        for t in openai().as_array().unwrap() {
            assert!(t["function"]["parameters"]["properties"].get("task_progress").is_none());
        }
    }
}
