//! Reads JSON lines `{"patch": "...", "files": {"path": "content"}}` and prints, for each,
//! agent-min's V4A result as `scripts/patch-vs-cline.sh` compares it with Cline's.

use std::collections::HashMap;
use std::io::BufRead;

use agent_min::run::tools::v4a::{apply, files_to_load, Change};
use serde_json::{json, Value};

fn main() {
    for line in std::io::stdin().lock().lines() {
        let case: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let patch = case["patch"].as_str().unwrap();
        let given: HashMap<String, String> = serde_json::from_value(case["files"].clone()).unwrap();
        let mut files = HashMap::new();
        let mut missing = None;
        for f in files_to_load(patch) {
            match given.get(&f) {
                Some(c) => {
                    files.insert(f, c.replace("\r\n", "\n"));
                }
                None => {
                    missing = Some(format!("File not found: {f}"));
                    break;
                }
            }
        }
        let out = match missing {
            Some(e) => json!({ "err": e }),
            None => match apply(patch, &files) {
                Ok(a) => {
                    let changes: Vec<Value> = a
                        .changes
                        .iter()
                        .map(|(p, c)| match c {
                            Change::Add(t) => json!([p, "add", t, null]),
                            Change::Delete => json!([p, "delete", null, null]),
                            Change::Update { content, move_to } => json!([p, "update", content, move_to]),
                        })
                        .collect();
                    json!({ "ok": { "changes": changes, "fuzz": a.fuzz, "warnings": a.warnings } })
                }
                Err(e) => json!({ "err": e }),
            },
        };
        println!("{out}");
    }
}
