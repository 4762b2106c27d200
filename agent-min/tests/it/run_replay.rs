//! `--replay`: the shipped demo session runs through the real loop and tools, with no key and no
//! network, clearly labelled as a replay.

use crate::common;

use std::path::PathBuf;
use std::process::Command;

use common::bin;

const LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

fn demo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sessions/demo.jsonl")
}

/// (exit code, the transcript, stdout).
fn replay(args: &[&str]) -> (Option<i32>, String, String) {
    // PATH holds only `sh`: no curl anywhere, so a replay provably makes no HTTP request.
    let only_sh = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/bin/sh", only_sh.path().join("sh")).unwrap();
    let out = Command::new(bin())
        .arg("run")
        .args(args)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env("NO_COLOR", "1")
        .env("PATH", only_sh.path())
        .output()
        .unwrap();
    // stdout is not a terminal: the transcript is on stderr, stdout holds the final result.
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn demo_session_edits_writes_runs_and_completes_in_a_given_workspace() {
    let ws = tempfile::tempdir().unwrap();
    let d = demo();
    let (code, out, err) = replay(&[
        "--replay",
        d.to_str().unwrap(),
        "--cwd",
        ws.path().to_str().unwrap(),
        "--yolo",
        "--replay-delay",
        "0",
    ]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(out.starts_with("▶ REPLAY of "), "{out}");
    assert!(out.contains("no model was called"));
    for line in [
        "● list_files . (recursive)",
        "● read_file hello.sh",
        "● replace_in_file hello.sh",
        "● write_to_file test.sh",
        "● execute_command sh test.sh",
    ] {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }
    assert!(out.contains("ok: Hello, Ada!"), "the command's real output: {out}");
    let hello = std::fs::read_to_string(ws.path().join("hello.sh")).unwrap();
    assert!(hello.contains("echo \"Hello, $name!\""), "{hello}");
    let test = std::fs::read_to_string(ws.path().join("test.sh")).unwrap();
    assert!(test.contains("\n    echo \"ok: $out\"\n"), "indentation kept: {test}");
}

#[test]
fn demo_session_runs_in_a_fresh_temporary_workspace_removed_unless_keep() {
    let d = demo();
    let workspace = |out: &str| {
        let line = out.lines().find(|l| l.trim_start().starts_with("workspace: ")).unwrap();
        PathBuf::from(line.trim_start().trim_start_matches("workspace: ").split(" (").next().unwrap())
    };
    let (code, out, err) = replay(&["--replay", d.to_str().unwrap(), "--replay-delay", "0"]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    let dir = workspace(&out);
    assert!(!dir.exists(), "{} left behind", dir.display());
    assert!(
        out.contains(&format!("removed the temporary workspace {} (pass --keep to keep it)", dir.display())),
        "{out}"
    );

    let (code, out, err) = replay(&["--replay", d.to_str().unwrap(), "--replay-delay", "0", "--keep"]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    let dir = workspace(&out);
    assert!(dir.join("test.sh").exists(), "{}", dir.display());
    assert!(out.contains(&format!("workspace kept: {}", dir.display())), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_recording_that_runs_out_fails_clearly() {
    let ws = tempfile::tempdir().unwrap();
    let rec = ws.path().join("short.jsonl");
    std::fs::write(&rec, "{\"type\":\"session\",\"task\":\"t\"}\n{\"type\":\"reply\",\"text\":\"<list_files>\\n<path>.</path>\\n</list_files>\"}\n").unwrap();
    let (code, out, err) = replay(&["--replay", rec.to_str().unwrap(), "--cwd", ws.path().to_str().unwrap(), "--yolo"]);
    assert_eq!(code, Some(1), "{out}\n{err}");
    assert!(out.contains("the recording has no reply left for request 2"), "{out}");
}

/// A recording of a native session (the default for Claude 4+ and GPT-5) replays: its streams'
/// tool calls are read in the native dialect. They were dropped, the reply called empty, and
/// the replay ran out of replies.
#[test]
fn a_recording_of_native_tool_calls_replays() {
    let anthropic = [
        r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"attempt_completion","input":{}}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"result\":\"done natively\"}"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}"#,
        r#"{"type":"message_stop"}"#,
    ];
    let anthropic: String = anthropic
        .iter()
        .map(|d| {
            let kind = serde_json::from_str::<serde_json::Value>(d).unwrap()["type"].as_str().unwrap().to_string();
            format!("event: {kind}\ndata: {d}\n\n")
        })
        .collect();
    let openai = [
        r#"{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"attempt_completion","arguments":"{\"result\":\"done natively\"}"}}]}}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        "[DONE]",
    ];
    let openai: String = openai.iter().map(|d| format!("data: {d}\n\n")).collect();
    for (provider, sse) in [("anthropic", anthropic), ("openai", openai)] {
        let ws = tempfile::tempdir().unwrap();
        let rec = ws.path().join("native.jsonl");
        let lines = [
            serde_json::json!({"type": "session", "task": "t"}).to_string(),
            serde_json::json!({"type": "reply", "provider": provider, "sse": sse}).to_string(),
        ];
        std::fs::write(&rec, lines.join("\n") + "\n").unwrap();
        let (code, out, result) =
            replay(&["--replay", rec.to_str().unwrap(), "--cwd", ws.path().to_str().unwrap(), "--yolo"]);
        assert_eq!(code, Some(0), "{provider}: {out}");
        assert_eq!(result, "done natively\n", "{provider}: {out}");
    }
}

#[test]
fn a_broken_recording_is_a_usage_error() {
    let ws = tempfile::tempdir().unwrap();
    let rec = ws.path().join("bad.jsonl");
    std::fs::write(&rec, "{\"type\":\"reply\"}\n").unwrap();
    let (code, out, _) = replay(&["--replay", rec.to_str().unwrap()]);
    assert_eq!(code, Some(2));
    assert!(out.contains("bad.jsonl:1"), "{out}");
}

#[test]
fn a_recording_whose_files_are_refused_leaves_no_temporary_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("escape.jsonl");
    let reply = "{\"type\":\"reply\",\"text\":\"<attempt_completion>\\n<result>d</result>\\n</attempt_completion>\"}";
    std::fs::write(
        &rec,
        format!("{{\"type\":\"session\",\"task\":\"t\",\"files\":{{\"../out.txt\":\"x\"}}}}\n{reply}\n"),
    )
    .unwrap();
    let (code, err) = refused_replay(&["--replay", rec.to_str().unwrap()]);
    assert_ne!(code, Some(0), "{err}");
    assert!(err.contains("cannot write the recording's files"), "{err}");
}

/// Runs a replay that is refused, with a temporary directory of its own (`TMPDIR`): its exit
/// code and stderr, once the test has checked that the directory was left empty.
fn refused_replay(args: &[&str]) -> (Option<i32>, String) {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .arg("run")
        .args(args)
        .env_remove("ANTHROPIC_API_KEY")
        .env("NO_COLOR", "1")
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(left.is_empty(), "left behind: {left:?}\n{err}");
    (out.status.code(), err)
}

#[test]
fn a_replay_refused_after_its_workspace_was_made_leaves_no_temporary_workspace() {
    // `--max-cost` needs prices, and a replay has none: refused once the workspace exists
    // (as CI's minimal build refuses a sandboxed replay).
    let d = demo();
    let (code, err) = refused_replay(&["--replay", d.to_str().unwrap(), "--max-cost", "1"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--max-cost needs prices"), "{err}");
}

/// Ctrl-C while a replay's command runs: the command is stopped and the temporary workspace
/// removed (it used to be left in the temporary directory) — after the `TaskCancel` hook,
/// which runs in it.
#[test]
fn an_interrupted_replay_leaves_no_temporary_workspace() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let hooks = home.path().join("Documents/Cline/Hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let seen = home.path().join("cancel-saw");
    let hook = hooks.join("TaskCancel");
    std::fs::write(&hook, format!("#!/bin/sh\ncat >/dev/null\nls > '{}'\n", seen.display())).unwrap();
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("waits.jsonl");
    let cmd = "touch started; while :; do sleep 1; done";
    let reply = format!(
        "<execute_command>\\n<command>{cmd}</command>\\n<requires_approval>false</requires_approval>\\n</execute_command>"
    );
    std::fs::write(
        &rec,
        format!("{{\"type\":\"session\",\"task\":\"t\"}}\n{{\"type\":\"reply\",\"text\":\"{reply}\"}}\n"),
    )
    .unwrap();
    let mut child = Command::new(bin())
        .args(["run", "--replay", rec.to_str().unwrap(), "--replay-delay", "0"])
        .env_remove("ANTHROPIC_API_KEY")
        .env("NO_COLOR", "1")
        .env("TMPDIR", tmp.path())
        .env("HOME", home.path())
        .env("XDG_DOCUMENTS_DIR", home.path().join("Documents"))
        .env_remove("XDG_CONFIG_HOME")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The command has started once `started` is in the workspace (wherever it is below TMPDIR).
    let started = || std::fs::read_dir(tmp.path()).unwrap().flatten().any(|e| e.path().join("started").exists());
    let deadline = std::time::Instant::now() + LIMIT;
    while !started() {
        assert!(std::time::Instant::now() < deadline, "the command never started");
        assert!(child.try_wait().unwrap().is_none(), "the replay ended before its command started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let out = common::wait_limited(child, LIMIT);
    assert_eq!(out.code, Some(130), "{}", out.all());
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(left.is_empty(), "left behind: {left:?}\n{}", out.all());
    let listed =
        std::fs::read_to_string(&seen).unwrap_or_else(|e| panic!("the hook did not run ({e}):\n{}", out.all()));
    assert!(listed.lines().any(|l| l == "started"), "the hook ran in the workspace: {listed:?}");
}
