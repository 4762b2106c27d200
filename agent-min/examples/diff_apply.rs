//! Applies SEARCH/REPLACE diffs with agent-min's engine, for comparing it with Cline's
//! (`agent-min/scripts/diff-vs-cline.sh`): each stdin line is `{"orig": …, "diff": …}`, each
//! stdout line `{"ok": new file}` or `{"err": message, "refusal": bool}`.

use std::io::BufRead;

fn main() {
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin");
        let v: serde_json::Value = serde_json::from_str(&line).expect("a JSON object per line");
        let (orig, diff) = (v["orig"].as_str().unwrap_or_default(), v["diff"].as_str().unwrap_or_default());
        let out = match agent_min::run::tools::diff::apply(orig, diff) {
            Ok(s) => serde_json::json!({ "ok": s }),
            Err(e) => serde_json::json!({ "err": e.to_string(), "refusal": e.is_refusal() }),
        };
        println!("{out}");
    }
}
