//! `agent-min parse` as a conformance contract: the reference files piped through the real binary.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn conformance(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{} is missing ({e}); the conformance files must be at ../shared/conformance from the repo root",
            path.display()
        )
    })
}

fn run(args: &[&str], stdin: String) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-min"))
        .arg("parse")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run agent-min");
    let mut pipe = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(stdin.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn lines(s: &str) -> Vec<Value> {
    s.split('\n').filter(|l| !l.is_empty()).map(|l| serde_json::from_str(l).expect("JSON line")).collect()
}

/// Expected lines are compared as serialized text, so param order counts too.
fn check_file(name: &str) {
    let text = conformance(name);
    let cases = lines(&text);
    let out = run(&["--jsonl"], text);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got = lines(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(got.len(), cases.len());
    for (g, c) in got.iter().zip(&cases) {
        assert_eq!(g["id"], c["id"]);
        assert_eq!(g["blocks"].to_string(), c["expected"].to_string(), "{}", c["id"]);
    }
}

#[test]
fn jsonl_matches_every_whole_reply() {
    check_file("cline-v4.0.10.jsonl");
}

#[test]
fn jsonl_matches_every_prefix() {
    check_file("cline-v4.0.10-prefixes.jsonl");
}

#[test]
fn one_char_chunks_line_up_with_the_prefix_file() {
    let text = conformance("cline-v4.0.10-prefixes.jsonl");
    let expected: HashMap<String, Value> =
        lines(&text).into_iter().map(|c| (c["id"].as_str().unwrap().to_string(), c["expected"].clone())).collect();
    // The full input of each base is its longest prefix.
    let mut full: HashMap<String, String> = HashMap::new();
    for c in lines(&text) {
        let (base, _) = c["id"].as_str().unwrap().rsplit_once('/').unwrap();
        let input = c["input"].as_str().unwrap();
        let e = full.entry(base.to_string()).or_default();
        if input.len() >= e.len() {
            *e = input.to_string();
        }
    }
    let stdin: String = full
        .iter()
        .map(|(id, input)| serde_json::json!({"id": id, "input": input, "ignored": 1}).to_string() + "\n")
        .collect();
    let out = run(&["--jsonl", "--chunk-size", "1", "--every-chunk"], stdin);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got = lines(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(got.len(), expected.len(), "one line per prefix");
    for g in &got {
        let id = g["id"].as_str().unwrap();
        let want = expected.get(id).unwrap_or_else(|| panic!("unexpected id {id}"));
        assert_eq!(g["blocks"].to_string(), want.to_string(), "{id}");
    }
}

#[test]
fn chunked_without_every_chunk_prints_the_final_blocks() {
    let input = r#"{"id": 7, "input": "Hi <read_file><path>x</path></read_file> bye"}"#;
    let whole = run(&["--jsonl"], input.into());
    let chunked = run(&["--jsonl", "--chunk-size", "3"], input.into());
    assert!(whole.status.success() && chunked.status.success());
    assert_eq!(whole.stdout, chunked.stdout);
    assert_eq!(lines(&String::from_utf8(whole.stdout).unwrap())[0]["id"], 7);
}

#[test]
fn a_malformed_line_names_its_number_and_fails() {
    let input = "{\"id\":\"ok\",\"input\":\"a\"}\n{\"id\":\"x\",\"input\":3}\n";
    let out = run(&["--jsonl"], input.into());
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 2") && err.contains("input"), "{err}");
    let out = run(&["--jsonl"], "not json\n".into());
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 1"));
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn usage_errors_exit_2_and_point_to_help() {
    let out = run(&["--every-chunk", "--jsonl"], String::new());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--chunk-size"));
    let out = run(&["--help"], String::new());
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains("EXAMPLES"));
}

#[test]
fn readable_view_of_the_shipped_sample() {
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/reply.txt");
    let out = Command::new(env!("CARGO_BIN_EXE_agent-min")).arg("parse").arg(&sample).output().unwrap();
    assert!(out.status.success());
    let view = String::from_utf8(out.stdout).unwrap();
    assert!(view.starts_with("6 block(s)"), "{view}");
    assert!(view.contains("[1] tool_use read_file (complete)\n  path:\n    src/main.rs"), "{view}");
    assert!(view.contains("[5] tool_use execute_command (partial)"), "{view}");
    let missing =
        Command::new(env!("CARGO_BIN_EXE_agent-min")).args(["parse", "/nonexistent/reply.txt"]).output().unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/reply.txt"));
}
