//! Shared test support: the conformance files, blocks as conformance JSON, a small PRNG, and the
//! naive oracle (included by path: it is compiled into the library only for unit tests and fuzzing).
#![allow(dead_code)]

#[path = "../../src/oracle.rs"]
pub mod oracle;

pub mod gen;

use parser_core::Block;
use serde_json::{json, Map, Value};
use std::path::PathBuf;

/// One line of a conformance file.
pub struct Case {
    pub id: String,
    pub input: String,
    pub expected: Value,
}

/// `../shared/conformance/<name>` from the repo root. Missing files fail the test, loudly.
pub fn load(name: &str) -> Vec<Case> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "conformance file {} is missing ({e}); it must be at ../shared/conformance relative to the repo root",
            path.display()
        )
    });
    let cases: Vec<Case> = text
        .split('\n')
        .filter(|l| !l.is_empty())
        .enumerate()
        .map(|(n, line)| {
            let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{name} line {}: {e}", n + 1));
            Case {
                id: v["id"].as_str().expect("id").to_string(),
                input: v["input"].as_str().expect("input").to_string(),
                expected: v["expected"].clone(),
            }
        })
        .collect();
    assert!(cases.len() > 1000, "{name}: only {} cases", cases.len());
    cases
}

/// Blocks in the conformance schema (params in first-assignment order).
pub fn to_json<'a>(blocks: impl IntoIterator<Item = Block<'a>>) -> Value {
    Value::Array(
        blocks
            .into_iter()
            .map(|b| match b {
                Block::Text { content, partial } => json!({"type": "text", "content": content, "partial": partial}),
                Block::ToolUse(t) => {
                    let params: Map<String, Value> =
                        t.params().iter().map(|p| (p.name.to_string(), Value::from(p.value))).collect();
                    json!({"type": "tool_use", "name": t.name, "params": params, "partial": t.partial})
                }
            })
            .collect(),
    )
}

/// The oracle's blocks in the conformance schema.
pub fn naive_to_json(blocks: &[oracle::NaiveBlock]) -> Value {
    Value::Array(
        blocks
            .iter()
            .map(|b| match b {
                oracle::NaiveBlock::Text { content, partial } => {
                    json!({"type": "text", "content": content, "partial": partial})
                }
                oracle::NaiveBlock::Tool { name, params, partial } => {
                    let params: Map<String, Value> =
                        params.iter().map(|(k, v, _)| (k.clone(), Value::from(v.as_str()))).collect();
                    json!({"type": "tool_use", "name": name, "params": params, "partial": partial})
                }
            })
            .collect(),
    )
}

/// The fast parser's blocks in the oracle's form, raw values included.
pub fn to_naive<'a>(blocks: impl IntoIterator<Item = Block<'a>>) -> Vec<oracle::NaiveBlock> {
    blocks
        .into_iter()
        .map(|b| match b {
            Block::Text { content, partial } => oracle::NaiveBlock::Text { content: content.into(), partial },
            Block::ToolUse(t) => oracle::NaiveBlock::Tool {
                name: t.name.into(),
                params: t.params().iter().map(|p| (p.name.into(), p.value.into(), p.raw.into())).collect(),
                partial: t.partial,
            },
        })
        .collect()
}

/// JSON equality that also checks the order of object keys (serde_json's `==` does not).
pub fn same(a: &Value, b: &Value) -> bool {
    serde_json::to_string(a).unwrap() == serde_json::to_string(b).unwrap()
}

/// xorshift64*: deterministic randomness without a dependency.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// Byte offsets of a random chunking of `s` into runs of 1..=max chars.
pub fn char_chunks(s: &str, rng: &mut Rng, max: usize) -> Vec<usize> {
    let bounds: Vec<usize> = s.char_indices().map(|(i, _)| i).chain([s.len()]).collect();
    let mut cuts = vec![0];
    let mut k = 0;
    while k + 1 < bounds.len() {
        k = (k + 1 + rng.below(max)).min(bounds.len() - 1);
        cuts.push(bounds[k]);
    }
    cuts
}
