//! Which workspace hooks the person has approved: `hook-approvals.json` in the state
//! directory maps a workspace root to the SHA-256 of each approved hook file, so an edited
//! hook (or one added later) asks again. Global hooks are the person's own and need none.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// The approvals file.
pub(crate) struct Approvals {
    file: Option<PathBuf>,
}

impl Approvals {
    /// Approvals kept in `state_dir` (`None`: nothing is remembered).
    pub(crate) fn new(state_dir: Option<&Path>) -> Approvals {
        Approvals { file: state_dir.map(|d| d.join("hook-approvals.json")) }
    }

    /// Whether `hash` is the approved content of hook `name` in workspace `root`.
    pub(crate) fn is_approved(&self, root: &Path, name: &str, hash: &str) -> bool {
        self.load().get(&key(root)).and_then(|m| m.get(name)).and_then(Value::as_str) == Some(hash)
    }

    /// Remembers an approval. A failure to write is returned for a warning.
    pub(crate) fn remember(&self, root: &Path, name: &str, hash: &str) -> Result<(), String> {
        let Some(file) = &self.file else { return Ok(()) };
        let mut all = self.load();
        let entry = all.entry(key(root)).or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(m) = entry {
            m.insert(name.to_string(), Value::String(hash.to_string()));
        }
        let text = serde_json::to_string_pretty(&Value::Object(all.into_iter().collect())).unwrap_or_default();
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let tmp = file.with_extension("json.tmp");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, file))
            .map_err(|e| format!("{}: {e}", file.display()))
    }

    fn load(&self) -> BTreeMap<String, Value> {
        let Some(text) = self.file.as_ref().and_then(|f| std::fs::read_to_string(f).ok()) else {
            return BTreeMap::new();
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => m.into_iter().collect(),
            _ => BTreeMap::new(),
        }
    }
}

fn key(root: &Path) -> String {
    root.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approvals_are_per_workspace_per_hook_and_per_content() {
        let state = tempfile::tempdir().unwrap();
        let a = Approvals::new(Some(state.path()));
        let (ws1, ws2) = (Path::new("/ws/one"), Path::new("/ws/two"));
        assert!(!a.is_approved(ws1, "PreToolUse", "h1"));
        a.remember(ws1, "PreToolUse", "h1").unwrap();
        a.remember(ws1, "TaskStart", "h2").unwrap();
        let again = Approvals::new(Some(state.path()));
        assert!(again.is_approved(ws1, "PreToolUse", "h1"));
        assert!(again.is_approved(ws1, "TaskStart", "h2"));
        assert!(!again.is_approved(ws1, "PreToolUse", "h-edited"), "an edited hook asks again");
        assert!(!again.is_approved(ws2, "PreToolUse", "h1"), "another workspace asks again");
        assert!(!Approvals::new(None).is_approved(ws1, "PreToolUse", "h1"));
    }
}
