//! The JSON a hook reads on stdin: Cline's `HookInput` (`proto/cline/hooks.proto`) as ts-proto
//! serialises it, camelCase, common fields first, then the event's own object.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::Hook;

/// The Cline version whose hook input this is.
pub(crate) const CLINE_VERSION: &str = "4.0.10";

/// What every input carries besides the event's data.
#[derive(Debug, Clone, Default)]
pub(crate) struct Meta {
    /// `taskId` (agent-min's task id, which is also sent as `ulid`).
    pub task_id: String,
    /// `model.provider`.
    pub provider: String,
    /// `model.slug`.
    pub model: String,
}

/// The whole input for `hook` with its per-hook object `data`.
pub(crate) fn build(hook: Hook, meta: &Meta, root: &Path, data: Value) -> Value {
    let unknown = |s: &str| if s.trim().is_empty() { "unknown".to_string() } else { s.trim().to_string() };
    let mut m = Map::new();
    m.insert("clineVersion".into(), json!(CLINE_VERSION));
    m.insert("hookName".into(), json!(hook.name()));
    m.insert("timestamp".into(), json!(now_ms().to_string()));
    m.insert("taskId".into(), json!(meta.task_id));
    m.insert("workspaceRoots".into(), json!([root.display().to_string()]));
    m.insert("userId".into(), json!(user_id()));
    m.insert("model".into(), json!({"provider": unknown(&meta.provider), "slug": unknown(&meta.model)}));
    m.insert(hook.data_key().into(), data);
    Value::Object(m)
}

/// `taskMetadata` with the task's id and ulid, and `extra` pairs.
pub(crate) fn task_metadata(meta: &Meta, extra: &[(&str, &str)]) -> Value {
    let mut m = Map::new();
    m.insert("taskId".into(), json!(meta.task_id));
    m.insert("ulid".into(), json!(meta.task_id));
    for (k, v) in extra {
        m.insert((*k).into(), json!(v));
    }
    Value::Object(m)
}

/// A tool call's parameters as the `map<string, string>` Cline sends.
pub(crate) fn parameters(params: &[(String, String)]) -> Value {
    Value::Object(params.iter().map(|(k, v)| (k.clone(), json!(v))).collect())
}

fn now_ms() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis())
}

/// Cline sends its user or machine id; agent-min has no account, so the id names the local user.
fn user_id() -> String {
    let uid = std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m)).unwrap_or(0);
    format!("agent-min-uid-{uid}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_fields_come_first_in_clines_order() {
        let meta = Meta { task_id: "t1".into(), provider: "anthropic".into(), model: String::new() };
        let data = json!({"toolName": "read_file", "parameters": parameters(&[("path".into(), "a.rs".into())])});
        let v = build(Hook::PreToolUse, &meta, Path::new("/ws"), data);
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["clineVersion", "hookName", "timestamp", "taskId", "workspaceRoots", "userId", "model", "preToolUse"]
        );
        assert_eq!(v["hookName"], "PreToolUse");
        assert_eq!(v["workspaceRoots"], json!(["/ws"]));
        assert_eq!(v["model"], json!({"provider": "anthropic", "slug": "unknown"}));
        assert_eq!(v["preToolUse"]["parameters"]["path"], "a.rs");
        assert!(v["timestamp"].as_str().unwrap().parse::<u128>().is_ok());
        let md = task_metadata(&meta, &[("initialTask", "do it")]);
        assert_eq!(md, json!({"taskId": "t1", "ulid": "t1", "initialTask": "do it"}));
    }
}
