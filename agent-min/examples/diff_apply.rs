//! Applies SEARCH/REPLACE diffs with agent-min's engine, for comparing it with Cline's
//! (`agent-min/scripts/diff-vs-cline.sh`): each stdin line is `{"orig": …, "diff": …}`, each
//! stdout line `{"ok": new file}` or `{"err": message, "refusal": bool}`, with `"index_of"`:
//! the same for the engine with Cline's exact matching (`Matching::IndexOf`).

use std::io::BufRead;

use agent_min::run::tools::diff::{self, Matching};

fn main() {
    for line in std::io::stdin().lock().lines() {
        let line = line.expect("stdin");
        let v: serde_json::Value = serde_json::from_str(&line).expect("a JSON object per line");
        let (orig, diff) = (v["orig"].as_str().unwrap_or_default(), v["diff"].as_str().unwrap_or_default());
        let result = |matching| match diff::apply_matching(orig, diff, matching) {
            Ok(s) => serde_json::json!({ "ok": s }),
            Err(e) => serde_json::json!({ "err": e.to_string(), "refusal": e.is_refusal() }),
        };
        let mut out = result(Matching::WholeLines);
        out["index_of"] = result(Matching::IndexOf);
        println!("{out}");
    }
}
