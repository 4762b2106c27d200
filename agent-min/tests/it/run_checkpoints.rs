//! Checkpoints end to end: a `--yolo` task that writes, edits and deletes files over several
//! turns, put back to each of its checkpoints with `agent-min checkpoints restore` (files, then
//! files and conversation, then resumed from there); and the faults: git missing, the home
//! directory, a second agent holding the lock, `kill -9` in the middle of a checkpoint.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(120);

/// Every regular file of `dir` (relative path → content).
fn files(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read_to_string(&p).unwrap_or_default());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn state_of(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn checkpoints(state: &Path, ws: &Path, args: &[&str]) -> Run {
    let dir = state.display().to_string();
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--state-dir", &dir]);
    run_cmd("checkpoints", ws, &all, &[], LIMIT)
}

fn saved_task(state: &Path) -> Value {
    let tasks: Vec<PathBuf> = std::fs::read_dir(state.join("tasks")).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    serde_json::from_str(&std::fs::read_to_string(&tasks[0]).unwrap()).unwrap()
}

/// The scripted task: list (read-only), write a.txt, edit it, a command that deletes seed.txt
/// and creates c.txt, write b.txt, complete.
fn scripted_task() -> Vec<Resp> {
    let edit = "\n------- SEARCH\none\n=======\ntwo\n+++++++ REPLACE\n";
    vec![
        anthropic(&tool("list_files", &[("path", ".")])),
        anthropic(&tool("write_to_file", &[("path", "a.txt"), ("content", "one")])),
        anthropic(&tool("replace_in_file", &[("path", "a.txt"), ("diff", edit)])),
        anthropic(&tool(
            "execute_command",
            &[("command", "rm seed.txt && printf x > c.txt"), ("requires_approval", "false")],
        )),
        anthropic(&tool("write_to_file", &[("path", "b.txt"), ("content", "bee")])),
        anthropic(&completion("Done.")),
    ]
}

#[test]
fn a_yolo_task_is_put_back_to_each_checkpoint_files_and_conversation_then_resumed() {
    let ws_dir = tempfile::tempdir().unwrap();
    let ws = ws_dir.path().canonicalize().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    std::fs::write(ws.join("seed.txt"), "seed").unwrap();
    let server = Server::start(scripted_task());
    let base = anthropic_args(&server);
    let r = run_agent(&ws, &args_with(&base, &["--state-dir", &state_dir, "--json", "make files"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    // The events: the start checkpoint before the first write (not before list_files), then
    // one after each write, edit and command.
    let events = common::events::parse(&r.stdout);
    let cps: Vec<(u64, u64, String, u64)> = common::events::of(&events, "checkpoint")
        .iter()
        .map(|e| {
            (
                e["number"].as_u64().unwrap(),
                e["turn"].as_u64().unwrap(),
                e["tool"].as_str().unwrap().to_string(),
                e["files_changed"].as_u64().unwrap(),
            )
        })
        .collect();
    let expected = [
        (1, 2, "start", 1),
        (2, 2, "write_to_file", 1),
        (3, 3, "replace_in_file", 1),
        (4, 4, "execute_command", 2),
        (5, 5, "write_to_file", 1),
    ];
    assert_eq!(cps, expected.iter().map(|(n, t, tool, f)| (*n, *t, tool.to_string(), *f)).collect::<Vec<_>>());
    // The workspace as at each checkpoint.
    // replace_in_file ends a match on a last line without a newline with one, as Cline does.
    let at = [
        state_of(&[("seed.txt", "seed")]),
        state_of(&[("seed.txt", "seed"), ("a.txt", "one")]),
        state_of(&[("seed.txt", "seed"), ("a.txt", "two\n")]),
        state_of(&[("a.txt", "two\n"), ("c.txt", "x")]),
        state_of(&[("a.txt", "two\n"), ("c.txt", "x"), ("b.txt", "bee")]),
    ];
    assert_eq!(files(&ws), at[4]);
    assert_eq!(saved_task(state.path())["checkpoints"].as_array().unwrap().len(), 5);

    let list = checkpoints(state.path(), &ws, &["list", "--last"]);
    assert_eq!(list.code, Some(0), "{}", list.all());
    for tool in ["start", "write_to_file", "replace_in_file", "execute_command"] {
        assert!(list.stdout.contains(tool), "{}", list.stdout);
    }
    assert_eq!(list.stdout.lines().filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit())).count(), 5);

    let diff = checkpoints(state.path(), &ws, &["diff", "--last", "2", "3"]);
    assert!(diff.stdout.contains("\n-one\n") && diff.stdout.contains("\n+two\n"), "{}", diff.all());
    let diff_now = checkpoints(state.path(), &ws, &["diff", "--last", "1"]);
    assert!(
        diff_now.stdout.contains("deleted file mode") && diff_now.stdout.contains("+++ b/b.txt"),
        "{}",
        diff_now.all()
    );

    // Without --yes and nobody to answer, nothing is restored.
    let declined = checkpoints(state.path(), &ws, &["restore", "--last", "1"]);
    assert_eq!(declined.code, Some(1), "{}", declined.all());
    assert!(
        declined.stderr.contains("not restored") && declined.stderr.contains("delete  a.txt"),
        "{}",
        declined.stderr
    );
    assert_eq!(files(&ws), at[4]);

    // The files, put back to every checkpoint in turn (in no particular order).
    let mut undo = 0;
    for n in [4u32, 2, 5, 1, 3] {
        let r = checkpoints(state.path(), &ws, &["restore", "--last", &n.to_string(), "--files", "--yes"]);
        assert_eq!(r.code, Some(0), "{}", r.all());
        assert_eq!(files(&ws), at[n as usize - 1], "restored to {n}");
        let line = r.stderr.lines().find(|l| l.contains("undoes this")).expect("the undo is named");
        undo = line.split("checkpoint ").nth(1).unwrap().split(':').next().unwrap().parse::<u32>().unwrap();
    }
    // The last restore (to 3) is itself undone: back to the state at 1.
    let r = checkpoints(state.path(), &ws, &["restore", "--last", &undo.to_string(), "--files", "--yes"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(files(&ws), at[0]);

    // Files and conversation back to checkpoint 3 (after the edit, turn 3).
    let r = checkpoints(state.path(), &ws, &["restore", "--last", "3", "--yes"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(files(&ws), at[2]);
    let line = r.stderr.lines().find(|l| l.contains("undoes this")).expect("the undo is named");
    let undo_both = line.split("checkpoint ").nth(1).unwrap().split(':').next().unwrap().parse::<u64>().unwrap();
    let task = saved_task(state.path());
    assert_eq!(task["status"], "running");
    assert_eq!(task["turns"], 3);
    let messages = task["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 6, "task, then three exchanges up to the edit");
    assert!(text_of(&messages[5]["content"]).contains("replace_in_file"));
    assert!(task["pending"].as_str().unwrap().contains("[replace_in_file for 'a.txt'] Result:"));
    let numbers: Vec<u64> =
        task["checkpoints"].as_array().unwrap().iter().map(|c| c["number"].as_u64().unwrap()).collect();
    // The three kept, then every restore's undo checkpoint (the five above, the undo of the
    // undo, this one's): each is still the way back to the files it kept.
    assert_eq!(numbers, vec![1, 2, 3, 6, 7, 8, 9, 10, 11, 12]);
    assert_eq!(undo_both, 12);
    let copy = r.stderr.lines().find(|l| l.contains("conversation as it was is kept in")).expect("copy named");
    let copy = copy.rsplit(" in ").next().unwrap().trim_end_matches('.');
    assert_eq!(
        serde_json::from_str::<Value>(&std::fs::read_to_string(copy).unwrap()).unwrap()["messages"]
            .as_array()
            .unwrap()
            .len(),
        12
    );

    // `resume` continues from checkpoint 3: the edit's result is sent again, and the new
    // checkpoints continue the series.
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "d.txt"), ("content", "dee")])),
        anthropic(&completion("Resumed.")),
    ]);
    let base = anthropic_args(&server);
    let r = run_cmd("resume", &ws, &args_with(&base, &["--last", "--state-dir", &state_dir, "--json"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    let sent = reqs[0].body["messages"].as_array().unwrap();
    assert_eq!(sent.len(), 7);
    assert!(reqs[0].last_user().contains("[replace_in_file for 'a.txt'] Result:"));
    assert!(reqs[0].last_user().contains("[TASK RESUMPTION]"));
    let events = common::events::parse(&r.stdout);
    let new: Vec<(u64, String)> = common::events::of(&events, "checkpoint")
        .iter()
        .map(|e| (e["number"].as_u64().unwrap(), e["tool"].as_str().unwrap().to_string()))
        .collect();
    // After the restore's undo checkpoint (12): this run's start, and its write.
    assert_eq!(new, vec![(13, "start".to_string()), (14, "write_to_file".to_string())]);
    assert_eq!(files(&ws).get("d.txt").map(String::as_str), Some("dee"));

    // The conversation alone back to checkpoint 2 (after the first write): the files stay.
    let before = files(&ws);
    let r = checkpoints(state.path(), &ws, &["restore", "--last", "2", "--task", "--yes"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(files(&ws), before);
    assert!(!r.stderr.contains("undoes this"), "no file checkpoint for a task-only restore: {}", r.stderr);
    let task = saved_task(state.path());
    assert_eq!((task["turns"].as_u64(), task["messages"].as_array().unwrap().len()), (Some(2), 4));
    assert!(task["pending"].as_str().unwrap().contains("[write_to_file for 'a.txt'] Result:"));
    // The undo checkpoints stay listed (the run's 13 and 14 are cut): the files as they were
    // before the restore to 3 can still come back.
    let numbers: Vec<u64> =
        task["checkpoints"].as_array().unwrap().iter().map(|c| c["number"].as_u64().unwrap()).collect();
    assert_eq!(numbers, vec![1, 2, 6, 7, 8, 9, 10, 11, 12]);
    let r = checkpoints(state.path(), &ws, &["restore", "--last", "12", "--files", "--yes"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(files(&ws), at[0], "the files as they were before the restore to 3");
}

#[test]
fn without_git_checkpoints_are_off_with_one_warning_and_the_task_runs() {
    let ws = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    // PATH holds curl and sh, not git.
    for tool in ["curl", "sh"] {
        let found = which(tool);
        std::os::unix::fs::symlink(found, bin.path().join(tool)).unwrap();
    }
    let server = Server::start(scripted_task());
    let base = anthropic_args(&server);
    let path = bin.path().display().to_string();
    let r = run_agent(ws.path(), &args_with(&base, &["make files"]), &[("PATH", &path)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(r.stderr.matches("Checkpoints are off for this run").count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("git is not installed"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(ws.path().join("b.txt")).unwrap(), "bee");
}

#[test]
fn the_home_directory_is_refused_and_the_task_runs() {
    let home = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "a.txt"), ("content", "one")])),
        anthropic(&completion("Done.")),
    ]);
    let base = anthropic_args(&server);
    let home_path = home.path().canonicalize().unwrap().display().to_string();
    let r =
        run_agent(home.path(), &args_with(&base, &["--state-dir", &state_dir, "t"]), &[("HOME", &home_path)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stderr.contains("Cannot use checkpoints in home directory"), "{}", r.stderr);
    assert!(!state
        .path()
        .join("checkpoints")
        .join(agent_min::run::checkpoints::place::cwd_hash(Path::new(&home_path)))
        .join(".git")
        .exists());
    assert_eq!(std::fs::read_to_string(home.path().join("a.txt")).unwrap(), "one");
}

#[test]
fn no_checkpoints_takes_none() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let server = Server::start(scripted_task());
    let base = anthropic_args(&server);
    let r = run_agent(
        ws.path(),
        &args_with(&base, &["--state-dir", &state_dir, "--no-checkpoints", "--json", "t"]),
        &[],
        LIMIT,
    );
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(common::events::of(&common::events::parse(&r.stdout), "checkpoint").is_empty());
    assert!(!state.path().join("checkpoints").exists());
}

#[test]
fn a_second_agent_waits_for_the_lock_then_takes_its_checkpoint() {
    let ws_dir = tempfile::tempdir().unwrap();
    let ws = ws_dir.path().canonicalize().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let dir = state.path().join("checkpoints").join(agent_min::run::checkpoints::place::cwd_hash(&ws));
    std::fs::create_dir_all(&dir).unwrap();
    // Another agent holds the workspace's lock for 2 s.
    let held = agent_min::run::checkpoints::lock::acquire(&dir.join("lock"), Duration::ZERO).unwrap();
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(2));
        drop(held);
    });
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "a.txt"), ("content", "one")])),
        anthropic(&completion("Done.")),
    ]);
    let base = anthropic_args(&server);
    let start = Instant::now();
    let r = run_agent(&ws, &args_with(&base, &["--state-dir", &state_dir, "--json", "t"]), &[], LIMIT);
    releaser.join().unwrap();
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(start.elapsed() >= Duration::from_secs(2), "it waited for the other agent");
    let n = common::events::of(&common::events::parse(&r.stdout), "checkpoint").len();
    assert_eq!(n, 2, "start and after the write, once the lock was free: {}", r.stderr);
}

/// A workspace with a nested repository and enough changed files for a checkpoint to take a
/// while, and an agent caught in the middle of that checkpoint: its `git add` running, the
/// nested repository disabled.
struct MidCheckpoint {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    ws: PathBuf,
    state: PathBuf,
    child: std::process::Child,
    _server: Server,
    /// The task run to completion in the workspace before.
    earlier: String,
}

fn agent_mid_checkpoint() -> MidCheckpoint {
    let ws_dir = tempfile::tempdir().unwrap();
    let ws = ws_dir.path().canonicalize().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    std::fs::create_dir_all(ws.join("lib/.git")).unwrap();
    std::fs::write(ws.join("lib/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
    for i in 0..2_000 {
        let d = ws.join(format!("src/m{}", i % 100));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(format!("f{i}.txt")), format!("{i}\n")).unwrap();
    }
    // An earlier task with its checkpoints.
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "z.txt"), ("content", "zed")])),
        anthropic(&completion("Done.")),
    ]);
    let r =
        run_agent(&ws, &args_with(&anthropic_args(&server), &["--state-dir", &state_dir, "--json", "t0"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let earlier = common::events::parse(&r.stdout)[0]["task_id"].as_str().unwrap().to_string();
    // Enough changed since (2,000 files of 16 kB) for the next checkpoint's `git add` to be
    // caught running.
    for i in 0..2_000 {
        let text: String = (0..1_000).map(|l| format!("{i:05} {l:05} changed\n")).collect();
        std::fs::write(ws.join(format!("src/m{}/f{i}.txt", i % 100)), text).unwrap();
    }
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "a.txt"), ("content", "one")])),
        anthropic(&completion("Done.")),
    ]);
    let base = anthropic_args(&server);
    let mut child = Command::new(bin())
        .arg("run")
        .args(args_with(&base, &["--state-dir", &state_dir, "t"]))
        .current_dir(&ws)
        .env("ANTHROPIC_API_KEY", KEY)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    // Stopped while its `git add` runs, the nested repository disabled.
    let adding = |ws: &Path| processes_in(ws).iter().any(|c| c.contains(" add -A "));
    while !(ws.join("lib/.git_disabled").exists() && adding(&ws)) {
        assert!(start.elapsed() < LIMIT, "the checkpoint never started");
        assert!(child.try_wait().unwrap().is_none(), "the agent ended before its checkpoint");
        std::thread::sleep(Duration::from_micros(200));
    }
    MidCheckpoint { ws, state: state.path().to_path_buf(), child, _server: server, _dirs: (ws_dir, state), earlier }
}

#[test]
fn ctrl_c_during_a_checkpoint_puts_the_nested_repository_back_at_once() {
    let mut m = agent_mid_checkpoint();
    let pid = m.child.id().to_string();
    assert!(Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let status = m.child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(m.ws.join("lib/.git/HEAD").is_file() && !m.ws.join("lib/.git_disabled").exists());
}

#[test]
fn kill_9_during_a_checkpoint_is_repaired_by_the_next_run_and_earlier_checkpoints_kept() {
    let MidCheckpoint { ws, state, mut child, _dirs, _server, earlier } = agent_mid_checkpoint();
    let state_dir = state.display().to_string();
    let dir = state.join("checkpoints").join(agent_min::run::checkpoints::place::cwd_hash(&ws));
    let journal = dir.join("nested-disabled");
    // Its git dies with it (git runs in the workspace). Stopped first, git cannot finish its
    // work by itself however long it is given: only the agent's death signal can end it.
    for pid in pids_in(&ws).into_iter().filter(|&p| p != child.id()) {
        let _ = Command::new("kill").args(["-STOP", &pid.to_string()]).status();
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(journal.exists() && !ws.join("lib/.git").exists(), "killed mid-checkpoint, as intended");
    let start = Instant::now();
    while !processes_in(&ws).is_empty() {
        assert!(start.elapsed() < LIMIT, "git outlived the agent: {:?}", processes_in(&ws));
        std::thread::sleep(Duration::from_millis(20));
    }

    // The next run (another task in the same workspace) repairs and goes on.
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "b.txt"), ("content", "bee")])),
        anthropic(&completion("Done.")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(&ws, &args_with(&base, &["--state-dir", &state_dir, "--json", "t2"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(ws.join("lib/.git/HEAD").is_file() && !ws.join("lib/.git_disabled").exists(), "nested repository put back");
    assert!(!journal.exists());
    let events = common::events::parse(&r.stdout);
    assert_eq!(common::events::of(&events, "checkpoint").len(), 2, "{}", r.stderr);
    // (By id: both tasks may have been saved within the same second, so `--last` could be either.)
    let id = events[0]["task_id"].as_str().unwrap();
    let list = checkpoints(&state, &ws, &["list", id]);
    assert!(list.stdout.contains("write_to_file"), "{}", list.all());
    let diff = checkpoints(&state, &ws, &["diff", id, "1", "2"]);
    assert!(diff.stdout.contains("+++ b/b.txt"), "{}", diff.all());
    // The earlier task's checkpoints are all still there.
    let diff = checkpoints(&state, &ws, &["diff", &earlier, "1", "2"]);
    assert!(diff.stdout.contains("+++ b/z.txt") && diff.stdout.contains("+zed"), "{}", diff.all());
}

/// Processes whose working directory is `dir`.
fn pids_in(dir: &Path) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse::<u32>().ok()?, e.path())))
        .filter(|(_, p)| std::fs::read_link(p.join("cwd")).is_ok_and(|c| c == dir))
        .map(|(pid, _)| pid)
        .collect()
}

fn processes_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()))
        .filter(|e| std::fs::read_link(e.path().join("cwd")).is_ok_and(|c| c == dir))
        .map(|e| std::fs::read_to_string(e.path().join("cmdline")).unwrap_or_default().replace('\0', " "))
        .collect()
}

fn which(tool: &str) -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{tool} is needed by this test and is not on PATH"))
}

#[test]
fn an_unreadable_file_is_left_out_and_reported() {
    use std::os::unix::fs::PermissionsExt;
    let ws_dir = tempfile::tempdir().unwrap();
    let ws = ws_dir.path().canonicalize().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    std::fs::write(ws.join("a.txt"), "readable").unwrap();
    std::fs::write(ws.join("secret.txt"), "nobody may read this").unwrap();
    std::fs::set_permissions(ws.join("secret.txt"), std::fs::Permissions::from_mode(0o000)).unwrap();
    // root reads everything: as root, the agent runs as `nobody` (owning the workspace and the
    // state, but not secret.txt), through util-linux's setpriv.
    let root = running_as_root();
    if root {
        for p in [ws.as_path(), ws.join("a.txt").as_path(), state.path()] {
            std::os::unix::fs::chown(p, Some(65534), Some(65534)).unwrap();
        }
    }
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "b.txt"), ("content", "bee")])),
        anthropic(&completion("Done.")),
    ]);
    let base = anthropic_args(&server);
    let mut cmd = if root {
        let mut c = Command::new(which("setpriv"));
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]).arg(bin());
        c
    } else {
        Command::new(bin())
    };
    cmd.arg("run")
        .args(args_with(&base, &["--state-dir", &state_dir, "--json", "t"]))
        .current_dir(&ws)
        .env("HOME", state.path())
        .env("ANTHROPIC_API_KEY", KEY)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let r = wait_limited(cmd.spawn().unwrap(), LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stderr.contains("left out: secret.txt (unreadable: Permission denied)"), "{}", r.stderr);
    let events = common::events::parse(&r.stdout);
    assert_eq!(common::events::of(&events, "checkpoint").len(), 2, "{}", r.stderr);
    let list = checkpoints(state.path(), &ws, &["list", "--last"]);
    assert!(list.stdout.contains("left out: secret.txt (unreadable: Permission denied)"), "{}", list.all());
    // (Between the run's checkpoints: `diff N` alone would stage the workspace as whoever
    // runs it, and root can read secret.txt.)
    let diff = checkpoints(state.path(), &ws, &["diff", "--last", "1", "2"]);
    assert!(diff.stdout.contains("+++ b/b.txt") && !diff.stdout.contains("secret"), "{}", diff.all());
}

/// Whether the tests run as root (`id -u`, so no `unsafe` FFI is needed here).
fn running_as_root() -> bool {
    let out = Command::new("id").arg("-u").output().expect("run id -u");
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

/// `len` hex digits of xorshift64: incompressible enough that git's object of them stays far
/// above 64 kB.
fn noise(len: usize) -> String {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from(b"0123456789abcdef"[(x >> 60) as usize])
        })
        .collect()
}

/// `agent-min ARGS` in `ws` with a 64 kB limit on every file it and its git write, as on a
/// full disk (EFBIG instead of ENOSPC; SIGXFSZ ignored so the write fails rather than killing
/// git).
fn with_64_kb_files(ws: &Path, args: &[String]) -> Run {
    let mut cmd = Command::new("bash");
    cmd.args(["-c", "trap '' XFSZ; ulimit -f 64; exec \"$0\" \"$@\""])
        .arg(bin())
        .args(args)
        .current_dir(ws)
        .env("ANTHROPIC_API_KEY", KEY)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    wait_limited(cmd.spawn().unwrap(), LIMIT)
}

#[test]
fn a_full_disk_makes_checkpoints_fail_loudly_the_task_go_on_and_earlier_ones_survive() {
    let ws_dir = tempfile::tempdir().unwrap();
    let ws = ws_dir.path().canonicalize().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let one_write = |path: &str| {
        Server::start(vec![
            anthropic(&tool("write_to_file", &[("path", path), ("content", "x")])),
            anthropic(&completion("Done.")),
        ])
    };
    let server = one_write("a.txt");
    let base = anthropic_args(&server);
    let r = run_agent(&ws, &args_with(&base, &["--state-dir", &state_dir, "--json", "first"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let first_id = common::events::parse(&r.stdout)[0]["task_id"].as_str().unwrap().to_string();

    // A 600 kB file the next checkpoint must store, and a 64 kB limit on every file the agent
    // and its git write: git's object cannot be written, as on a full disk (EFBIG instead of
    // ENOSPC; SIGXFSZ ignored so the write fails rather than killing git).
    std::fs::write(ws.join("big.txt"), noise(600_000)).unwrap();
    let server = one_write("b.txt");
    let base = anthropic_args(&server);
    let mut args = vec!["run".to_string()];
    args.extend(args_with(&base, &["--state-dir", &state_dir, "second"]).iter().map(|a| a.to_string()));
    let r = with_64_kb_files(&ws, &args);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(
        r.stderr.contains(
            "The initial checkpoint failed: git add failed: fatal: unable to write loose object file: File too large"
        ),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("Checkpoint after write_to_file failed"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(ws.join("b.txt")).unwrap(), "x");

    // The first task's checkpoints are intact, and with room again checkpoints work.
    let diff = checkpoints(state.path(), &ws, &["diff", &first_id, "1", "2"]);
    assert!(diff.stdout.contains("+++ b/a.txt"), "{}", diff.all());
    let server = one_write("c.txt");
    let base = anthropic_args(&server);
    let r = run_agent(&ws, &args_with(&base, &["--state-dir", &state_dir, "--json", "third"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let cps = common::events::of(&common::events::parse(&r.stdout), "checkpoint").len();
    assert_eq!(cps, 2, "{}", r.stderr);
}

/// A scripted run in `ws` that writes each of `paths`, then completes; its checkpoint events
/// as (tool, files changed).
fn write_run(
    cwd: &Path,
    ws: &Path,
    state_dir: &str,
    paths: &[&str],
    envs: &[(&str, &str)],
) -> (Run, Vec<(String, u64)>) {
    let mut script: Vec<Resp> =
        paths.iter().map(|p| anthropic(&tool("write_to_file", &[("path", p), ("content", p)]))).collect();
    script.push(anthropic(&completion("Done.")));
    let server = Server::start(script);
    let base = anthropic_args(&server);
    let ws_arg = ws.display().to_string();
    let r = run_agent(
        cwd,
        &args_with(&base, &["--cwd", &ws_arg, "--state-dir", state_dir, "--json", "--trust-workspace", "t"]),
        envs,
        LIMIT,
    );
    assert_eq!(r.code, Some(0), "{}", r.all());
    let events = common::events::parse(&r.stdout);
    let cps = common::events::of(&events, "checkpoint")
        .iter()
        .map(|e| (e["tool"].as_str().unwrap().to_string(), e["files_changed"].as_u64().unwrap()))
        .collect();
    (r, cps)
}

#[test]
fn a_relative_state_dir_keeps_one_series_outside_the_workspace() {
    let top_dir = tempfile::tempdir().unwrap();
    let top = top_dir.path().canonicalize().unwrap();
    let ws = top.join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("seed.txt"), "seed").unwrap();
    // Run from `top` on the workspace `ws`: `state` is top/state.
    for path in ["a.txt", "b.txt"] {
        let (r, cps) = write_run(&top, &ws, "state", &[path], &[]);
        assert!(!r.all().contains("damaged") && !r.all().contains("failed"), "{}", r.all());
        assert_eq!(cps.len(), 2, "{}", r.all());
    }
    assert!(!ws.join("state").exists(), "nothing of the state directory in the workspace");
    let git_dir = top.join("state/checkpoints").join(agent_min::run::checkpoints::place::cwd_hash(&ws)).join(".git");
    let out =
        Command::new("git").arg("--git-dir").arg(&git_dir).args(["rev-list", "--count", "HEAD"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "4", "both runs' checkpoints in one series");
}

#[test]
fn a_checkpoints_command_puts_back_a_nested_repository_a_killed_checkpoint_left_disabled() {
    let ws_dir = tempfile::tempdir().unwrap();
    let ws = ws_dir.path().canonicalize().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.join("lib/.git")).unwrap();
    std::fs::write(ws.join("lib/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
    write_run(&ws, &ws, &state.path().display().to_string(), &["a.txt"], &[]);
    // What `kill -9` in the middle of a checkpoint leaves (the kill itself: the test above).
    let journal = state
        .path()
        .join("checkpoints")
        .join(agent_min::run::checkpoints::place::cwd_hash(&ws))
        .join("nested-disabled");
    std::fs::rename(ws.join("lib/.git"), ws.join("lib/.git_disabled")).unwrap();
    std::fs::write(&journal, format!("{}\0", ws.join("lib/.git").display())).unwrap();
    let list = checkpoints(state.path(), &ws, &["list", "--last"]);
    assert_eq!(list.code, Some(0), "{}", list.all());
    assert!(ws.join("lib/.git/HEAD").is_file() && !ws.join("lib/.git_disabled").exists(), "put back");
    assert!(!journal.exists());
}

#[test]
fn no_program_the_workspace_or_the_users_git_config_names_runs_in_checkpoints() {
    let ws_dir = tempfile::tempdir().unwrap();
    let ws = ws_dir.path().canonicalize().unwrap();
    let state = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let marker = |n: &str| home.path().join(format!("ran-{n}"));
    let touch = |n: &str| format!("touch '{}'", marker(n).display());
    // The workspace names drivers; the user's git config (and environment) defines them.
    std::fs::write(ws.join(".gitattributes"), "* filter=evil diff=evil\n").unwrap();
    std::fs::write(ws.join("a.txt"), "one\n").unwrap();
    let hooks = home.path().join("hooks");
    std::fs::create_dir(&hooks).unwrap();
    for name in ["pre-commit", "post-commit", "post-checkout", "reference-transaction", "post-index-change"] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(hooks.join(name), format!("#!/bin/sh\n{}\n", touch("hook"))).unwrap();
        std::fs::set_permissions(hooks.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let config = format!(
        "[filter \"evil\"]\n\tclean = \"{}; cat\"\n\tsmudge = \"{}; cat\"\n\trequired = true\n[diff \"evil\"]\n\ttextconv = \"{}; cat\"\n\tcommand = \"{}\"\n[core]\n\tfsmonitor = \"{}\"\n\thooksPath = {}\n\tpager = \"{}; cat\"\n",
        touch("clean"),
        touch("smudge"),
        touch("textconv"),
        touch("diff"),
        touch("fsmonitor"),
        hooks.display(),
        touch("pager"),
    );
    std::fs::write(home.path().join(".gitconfig"), &config).unwrap();
    std::fs::create_dir_all(home.path().join(".config/git")).unwrap();
    std::fs::write(home.path().join(".config/git/config"), &config).unwrap();
    let fsmonitor = touch("env");
    let envs = [
        ("HOME", home.path().to_str().unwrap()),
        ("XDG_CONFIG_HOME", &*home.path().join(".config").display().to_string()),
        ("GIT_CONFIG_COUNT", "1"),
        ("GIT_CONFIG_KEY_0", "core.fsmonitor"),
        ("GIT_CONFIG_VALUE_0", &fsmonitor),
    ]
    .map(|(k, v)| (k, v.to_string()));
    let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let state_dir = state.path().display().to_string();
    let (r, cps) = write_run(&ws, &ws, &state_dir, &["a.txt", "b.txt"], &envs);
    assert_eq!(cps.len(), 3, "{}", r.all());
    for args in
        [&["diff", "--last", "1"][..], &["diff", "--last", "1", "3"], &["restore", "--last", "1", "--files", "--yes"]]
    {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--state-dir", &state_dir]);
        let c = run_cmd("checkpoints", &ws, &all, &envs, LIMIT);
        assert_eq!(c.code, Some(0), "{}", c.all());
    }
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "one\n", "restored");
    let ran: Vec<_> = std::fs::read_dir(home.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("ran-"))
        .collect();
    assert!(ran.is_empty(), "configured programs ran: {ran:?}");
}

#[test]
fn after_a_hook_ran_an_edits_checkpoint_scans_the_whole_workspace() {
    use std::os::unix::fs::PermissionsExt;
    let ws_dir = tempfile::tempdir().unwrap();
    let ws = ws_dir.path().canonicalize().unwrap();
    let state = tempfile::tempdir().unwrap();
    // A hook that changes a file after every tool (`.clinerules/` itself is left out).
    let hooks = ws.join(".clinerules/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let script =
        format!("#!/bin/sh\ncat > /dev/null\necho ran >> '{}'\necho '{{}}'\n", ws.join("hooked.txt").display());
    std::fs::write(hooks.join("PostToolUse"), script).unwrap();
    std::fs::set_permissions(hooks.join("PostToolUse"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let (r, cps) = write_run(&ws, &ws, &state.path().display().to_string(), &["a.txt", "b.txt"], &[]);
    assert!(ws.join("hooked.txt").is_file(), "the hook ran: {}", r.all());
    // Each reply's checkpoint, taken once its calls and their hooks have run, holds the file
    // the hook changed as well as the one written.
    let expected = [("start", 0), ("write_to_file", 2), ("write_to_file", 2)];
    assert_eq!(cps, expected.map(|(t, n)| (t.to_string(), n)), "{}", r.all());
}

#[test]
fn a_task_resumed_in_another_workspace_keeps_each_checkpoint_restorable_where_it_was_taken() {
    let (a_dir, b_dir, state) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, b) = (a_dir.path().canonicalize().unwrap(), b_dir.path().canonicalize().unwrap());
    let state_dir = state.path().display().to_string();
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "a.txt"), ("content", "one")])),
        anthropic(&completion("Done.")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(&a, &args_with(&base, &["--state-dir", &state_dir, "write a"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let id = saved_task(state.path())["id"].as_str().unwrap().to_string();
    // Resumed in B (the repository moved, or another checkout): its own checkpoints there.
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "b.txt"), ("content", "bee")])),
        anthropic(&completion("Done.")),
    ]);
    let base = anthropic_args(&server);
    let b_arg = b.display().to_string();
    let r = run_cmd("resume", &b, &args_with(&base, &[&id, "--cwd", &b_arg, "--state-dir", &state_dir]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!r.stderr.contains("failed"), "{}", r.stderr);
    let cps = saved_task(state.path())["checkpoints"].as_array().unwrap().clone();
    assert_eq!(cps.len(), 4, "{cps:?}");
    let list = checkpoints(state.path(), &b, &["list", &id]);
    assert_eq!(list.code, Some(0), "{}", list.all());
    assert!(list.stdout.contains(&a.display().to_string()) && list.stdout.contains(&b_arg), "{}", list.stdout);

    // Checkpoint 2 was taken in A: restored there, whatever the task's workspace is now.
    std::fs::write(a.join("a.txt"), "changed").unwrap();
    let r = checkpoints(state.path(), &b, &["restore", &id, "2", "--files", "--yes"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(files(&a), state_of(&[("a.txt", "one")]));
    assert_eq!(files(&b), state_of(&[("b.txt", "bee")]), "B is left alone");
    // Checkpoint 4 in B.
    std::fs::write(b.join("b.txt"), "changed").unwrap();
    let r = checkpoints(state.path(), &a, &["restore", &id, "4", "--files", "--yes"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(files(&b), state_of(&[("b.txt", "bee")]));
    assert_eq!(files(&a), state_of(&[("a.txt", "one")]));
    // Checkpoints of two workspaces are not compared.
    let r = checkpoints(state.path(), &a, &["diff", &id, "2", "4"]);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(r.stderr.contains("different workspaces"), "{}", r.stderr);
    // A task restore to checkpoint 2 takes the task back to A, where it worked then.
    let r = checkpoints(state.path(), &a, &["restore", &id, "2", "--task", "--yes"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let saved = saved_task(state.path());
    assert_eq!(saved["cwd"], a.display().to_string());
    let ws: Vec<Value> = saved["checkpoints"].as_array().unwrap().iter().map(|c| c["workspace"].clone()).collect();
    // 1 and 2 are A's (the task's own again); the undo checkpoints of the file restores keep theirs.
    assert_eq!(ws[..2], [Value::Null, Value::Null], "{saved}");
    assert!(ws[2..].iter().any(|w| *w == Value::String(b_arg.clone())), "{saved}");
    // A workspace that is gone is named.
    drop(b_dir);
    let last = saved["checkpoints"].as_array().unwrap().last().unwrap()["number"].to_string();
    let r = checkpoints(state.path(), &a, &["restore", &id, &last, "--files", "--yes"]);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(r.stderr.contains(&format!("was taken in {b_arg}, which is not there any more")), "{}", r.stderr);
}

/// A cut of the context window does not lose the conversation a checkpoint taken before it had:
/// Cline's cuts are a view over the whole history, and a task restore puts back the history as
/// it was then. Eight writes in an 18,000-token window (threshold 14,400): the seventh reply's
/// reported 15,000 tokens make the history be cut before the eighth request.
#[test]
fn a_task_restore_to_a_checkpoint_before_a_context_cut_gets_that_conversation_back() {
    let ws_dir = tempfile::tempdir().unwrap();
    let ws = ws_dir.path().canonicalize().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let write = |i: u32| tool("write_to_file", &[("path", &format!("f{i}.txt")), ("content", &format!("file {i}"))]);
    let mut script: Vec<Resp> =
        (1..=8).map(|i| anthropic_usage(&write(i), if i == 7 { 15_000 } else { 1000 })).collect();
    script.push(anthropic(&completion("Done.")));
    let server = Server::start(script);
    let base = anthropic_args(&server);
    let args = ["--state-dir", &state_dir, "--json", "--context-window", "18000", "write eight files"];
    let r = run_agent(&ws, &args_with(&base, &args), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let events = common::events::parse(&r.stdout);
    assert_eq!(common::events::of(&events, "context_truncated").len(), 1, "one cut");
    let task = saved_task(state.path());
    let id = task["id"].as_str().unwrap().to_string();
    let cut_conversation: Vec<String> =
        task["messages"].as_array().unwrap().iter().map(|m| text_of(&m["content"])).collect();
    assert!(cut_conversation[1].starts_with("[NOTE] Some previous conversation history"), "{cut_conversation:#?}");
    // Checkpoints: 1 the start, 2..=9 after each write (9 after f8's, since the cut).
    assert_eq!(task["checkpoints"].as_array().unwrap().len(), 9);

    // A checkpoint taken after the cut: the cut conversation, up to the eighth write.
    let r = checkpoints(state.path(), &ws, &["restore", &id, "9", "--task", "--yes"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let task = saved_task(state.path());
    let messages: Vec<String> = task["messages"].as_array().unwrap().iter().map(|m| text_of(&m["content"])).collect();
    assert_eq!(messages[..], cut_conversation[..cut_conversation.len() - 2], "the cut history, up to write f8");
    assert!(task["pending"].as_str().unwrap().contains("[write_to_file for 'f8.txt'] Result:"));

    // Checkpoint 3 (after the second write) was taken before the cut: files f1 and f2, and the
    // conversation as it was then — the task and the first two writes, not the cut history.
    let r = checkpoints(state.path(), &ws, &["restore", &id, "3", "--yes"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(files(&ws), state_of(&[("f1.txt", "file 1"), ("f2.txt", "file 2")]));
    let task = saved_task(state.path());
    let messages: Vec<String> = task["messages"].as_array().unwrap().iter().map(|m| text_of(&m["content"])).collect();
    assert_eq!(messages.len(), 4, "{messages:#?}");
    assert!(messages[0].contains("write eight files"));
    assert!(messages[1].contains("f1.txt") && messages[3].contains("f2.txt"), "{messages:#?}");
    assert!(messages[2].contains("[write_to_file for 'f1.txt'] Result:"), "{messages:#?}");
    assert!(!messages.iter().any(|m| m.contains("[NOTE] Some previous conversation history")));
    assert!(task["pending"].as_str().unwrap().contains("[write_to_file for 'f2.txt'] Result:"));
    assert!(task.get("cuts").is_none(), "no cut is left in the conversation restored: {}", task["cuts"]);

    // Resumed, the request carries that conversation.
    let server = Server::start(vec![anthropic(&completion("Resumed."))]);
    let base = anthropic_args(&server);
    let r = run_cmd("resume", &ws, &args_with(&base, &[&id, "--state-dir", &state_dir]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let sent = server.requests()[0].body["messages"].as_array().unwrap().clone();
    assert_eq!(sent.len(), 5);
    assert_eq!(text_of(&sent[1]["content"]), messages[1]);
}

#[test]
fn a_reply_of_several_edits_has_one_checkpoint_after_all_of_them() {
    let ws_dir = tempfile::tempdir().unwrap();
    let ws = ws_dir.path().canonicalize().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let server = Server::start(vec![
        anthropic(&format!(
            "{}{}",
            tool("write_to_file", &[("path", "a.txt"), ("content", "a")]),
            tool("write_to_file", &[("path", "b.txt"), ("content", "b")])
        )),
        anthropic(&tool("execute_command", &[("command", "echo c > c.txt"), ("requires_approval", "false")])),
        anthropic(&completion("Done.")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(&ws, &args_with(&base, &["--state-dir", &state_dir, "--json", "--yolo", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let events = common::events::parse(&r.stdout);
    let cps: Vec<(String, u64)> = common::events::of(&events, "checkpoint")
        .iter()
        .map(|e| (e["tool"].as_str().unwrap().to_string(), e["files_changed"].as_u64().unwrap()))
        .collect();
    let expected = [("start", 0), ("write_to_file", 2), ("execute_command", 1)];
    assert_eq!(cps, expected.map(|(t, n)| (t.to_string(), n)), "{}", r.all());

    // A restore to it undoes no part of what the results the model reads next say was done.
    let c = run_cmd("checkpoints", &ws, &["restore", "--last", "2", "--yes", "--state-dir", &state_dir], &[], LIMIT);
    assert_eq!(c.code, Some(0), "{}", c.all());
    assert!(ws.join("a.txt").is_file() && ws.join("b.txt").is_file() && !ws.join("c.txt").exists());
}

/// A file that grew over the size limit after a checkpoint captured it small is never deleted
/// (nor overwritten) by a restore: no checkpoint keeps its stale small copy.
#[test]
fn a_file_grown_over_the_size_limit_is_never_deleted_by_a_restore() {
    let ws_dir = tempfile::tempdir().unwrap();
    let ws = ws_dir.path().canonicalize().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    std::fs::write(ws.join("seed.txt"), "seed").unwrap();
    const BIG: u64 = 11 << 20;
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "data.txt"), ("content", "small")])),
        anthropic(&tool(
            "execute_command",
            &[("command", &format!("head -c {BIG} /dev/zero > data.txt")), ("requires_approval", "false")],
        )),
        anthropic(&completion("Done.")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(&ws, &args_with(&base, &["--state-dir", &state_dir, "--json", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stderr.contains("left out: data.txt (over 10 MiB)"), "{}", r.stderr);
    assert_eq!(saved_task(state.path())["checkpoints"].as_array().unwrap().len(), 3);
    let size = || std::fs::metadata(ws.join("data.txt")).map(|m| m.len()).ok();
    // Checkpoint 1 had no data.txt: the restore leaves the file alone, it does not delete it.
    let r = checkpoints(state.path(), &ws, &["restore", "--last", "1", "--files", "--yes"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(!r.stderr.contains("data.txt"), "{}", r.stderr);
    assert_eq!(size(), Some(BIG), "the file left out was deleted");
    // Checkpoint 2 had it small: overwriting it is refused.
    let r = checkpoints(state.path(), &ws, &["restore", "--last", "2", "--files", "--yes"]);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(r.stderr.contains("not restored") && r.stderr.contains("data.txt"), "{}", r.stderr);
    assert_eq!(size(), Some(BIG));
    // The undo checkpoint of the first restore does not hold the stale small copy either.
    let undo = saved_task(state.path())["checkpoints"].as_array().unwrap().last().unwrap()["number"].to_string();
    let r = checkpoints(state.path(), &ws, &["restore", "--last", &undo, "--files", "--yes"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(size(), Some(BIG));
    assert_eq!(std::fs::read_to_string(ws.join("seed.txt")).unwrap(), "seed");
}

/// A files restore that fails midway (git cannot write a file: here a 64 kB limit on file
/// size, as a full disk; a kill at the time limit or Ctrl-C lands the same way) leaves the
/// files partly restored: the error says so and names the undo checkpoint, which the task now
/// holds (it had none, and the files as they were could not be named), and which puts them
/// back.
#[test]
fn a_restore_that_fails_midway_names_the_checkpoint_that_undoes_it() {
    let ws_dir = tempfile::tempdir().unwrap();
    let ws = ws_dir.path().canonicalize().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    std::fs::write(ws.join("a.txt"), "one").unwrap();
    std::fs::write(ws.join("big.txt"), noise(600_000)).unwrap();
    let (r, cps) = write_run(&ws, &ws, &state_dir, &["x.txt"], &[]);
    assert_eq!(cps.len(), 2, "{}", r.all());
    std::fs::write(ws.join("a.txt"), "two").unwrap();
    std::fs::remove_file(ws.join("big.txt")).unwrap();
    let before = files(&ws);
    let restore = ["checkpoints", "restore", "--last", "1", "--files", "--yes", "--state-dir", &state_dir];
    let r = with_64_kb_files(&ws, &restore.map(String::from));
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "one", "written before git failed");
    let task = saved_task(state.path());
    let undo = task["checkpoints"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(undo["tool"], "restore", "{task}");
    let n = undo["number"].to_string();
    assert!(
        r.stderr.contains("the restore failed midway") && r.stderr.contains(&format!(" {n} --files` puts them back")),
        "{}",
        r.stderr
    );
    let r = checkpoints(state.path(), &ws, &["restore", "--last", &n, "--files", "--yes"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(files(&ws), before);
}

/// As Cline's `git reset --hard`: a files restore leaves alone the files created since the
/// last checkpoint (none of them is in the checkpoint restored either); the undo checkpoint
/// still keeps them.
#[test]
fn a_files_restore_leaves_files_created_since_the_last_checkpoint_alone() {
    let ws_dir = tempfile::tempdir().unwrap();
    let ws = ws_dir.path().canonicalize().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    std::fs::write(ws.join("seed.txt"), "seed").unwrap();
    let (r, cps) = write_run(&ws, &ws, &state_dir, &["a.txt"], &[]);
    assert_eq!(cps.len(), 2, "{}", r.all());
    std::fs::create_dir(ws.join("new")).unwrap();
    std::fs::write(ws.join("new/later.txt"), "mine").unwrap();
    std::fs::write(ws.join("seed.txt"), "edited").unwrap();
    let declined = checkpoints(state.path(), &ws, &["restore", "--last", "1", "--files"]);
    assert_eq!(declined.code, Some(1), "{}", declined.all());
    assert!(declined.stderr.contains("delete  a.txt"), "{}", declined.stderr);
    assert!(!declined.stderr.contains("delete  new/later.txt"), "{}", declined.stderr);
    let r = checkpoints(state.path(), &ws, &["restore", "--last", "1", "--files", "--yes"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(files(&ws), state_of(&[("seed.txt", "seed"), ("new/later.txt", "mine")]));
    // The undo checkpoint has everything as it was, the new file too; restoring it and then
    // checkpoint 1 again deletes what it brought back (it is known to the checkpoints now).
    let undo = saved_task(state.path())["checkpoints"].as_array().unwrap().last().unwrap()["number"].to_string();
    let r = checkpoints(state.path(), &ws, &["restore", "--last", &undo, "--files", "--yes"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let all = state_of(&[("seed.txt", "edited"), ("a.txt", "a.txt"), ("new/later.txt", "mine")]);
    assert_eq!(files(&ws), all);
    let r = checkpoints(state.path(), &ws, &["restore", "--last", "1", "--files", "--yes"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(files(&ws), state_of(&[("seed.txt", "seed")]));
}

/// The person's global gitignore (`~/.config/git/ignore`, or `core.excludesFile` in
/// `~/.gitconfig`) applies, as git run by Cline in the person's environment honours it —
/// without running anything the person's git config names.
#[test]
fn the_persons_global_gitignore_applies_to_checkpoints() {
    for how in ["xdg", "gitconfig"] {
        let ws_dir = tempfile::tempdir().unwrap();
        let ws = ws_dir.path().canonicalize().unwrap();
        let (state, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let state_dir = state.path().display().to_string();
        std::fs::create_dir(ws.join("notes")).unwrap();
        std::fs::write(ws.join("notes/todo.md"), "buy milk").unwrap();
        let xdg = home.path().join(".config");
        std::fs::create_dir_all(xdg.join("git")).unwrap();
        if how == "xdg" {
            std::fs::write(xdg.join("git/ignore"), "notes/\n").unwrap();
        } else {
            std::fs::write(home.path().join("my ignore"), "notes/\n").unwrap();
            let config = "[user]\n\tname = me\n[core]\n\texcludesFile = \"~/my ignore\"\n";
            std::fs::write(home.path().join(".gitconfig"), config).unwrap();
        }
        let envs = [("HOME", home.path().to_str().unwrap()), ("XDG_CONFIG_HOME", xdg.to_str().unwrap())];
        let (r, cps) = write_run(&ws, &ws, &state_dir, &["a.txt"], &envs);
        assert_eq!(cps, vec![("start".to_string(), 0), ("write_to_file".to_string(), 1)], "{how}: {}", r.all());
        std::fs::write(ws.join("notes/todo.md"), "buy bread").unwrap();
        let mut args = vec!["restore", "--last", "1", "--files", "--yes", "--state-dir", &state_dir];
        let c = run_cmd("checkpoints", &ws, &args, &envs, LIMIT);
        assert_eq!(c.code, Some(0), "{how}: {}", c.all());
        assert_eq!(files(&ws), state_of(&[("notes/todo.md", "buy bread")]), "{how}");
        args[0] = "diff";
        args.truncate(3);
        args.extend(["--state-dir", &state_dir]);
        let c = run_cmd("checkpoints", &ws, &args, &envs, LIMIT);
        assert!(!c.stdout.contains("notes"), "{how}: {}", c.all());
    }
}

/// A task of three edits (checkpoints: 1 start, 2 after writing a.txt, 3 after writing b.txt,
/// 4 after editing a.txt), restored `--task` to checkpoint 2: the conversation knows a.txt as
/// first written, and nothing of b.txt. Returns the workspace, the state directory and the id.
fn restored_task_only_after_edits() -> (tempfile::TempDir, tempfile::TempDir, String) {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let edit = "\n------- SEARCH\none\n=======\ntwo\n+++++++ REPLACE\n";
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "a.txt"), ("content", "one")])),
        anthropic(&tool("write_to_file", &[("path", "b.txt"), ("content", "bee")])),
        anthropic(&tool("replace_in_file", &[("path", "a.txt"), ("diff", edit)])),
        anthropic(&completion("Done.")),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--state-dir", &state_dir, "edit files"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let id = saved_task(state.path())["id"].as_str().unwrap().to_string();
    assert_eq!(saved_task(state.path())["checkpoints"].as_array().unwrap().len(), 4);
    let r = checkpoints(state.path(), ws.path(), &["restore", &id, "2", "--task", "--yes"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(
        r.stderr.contains("files changed since, which `resume` tells the model to read again: b.txt, a.txt"),
        "{}",
        r.stderr
    );
    let task = saved_task(state.path());
    assert_eq!((task["version"].as_u64(), task["file_context_warning"].clone()), (Some(7), json(&["b.txt", "a.txt"])));
    (ws, state, id)
}

fn json(files: &[&str]) -> Value {
    Value::from(files.to_vec())
}

/// Cline's `fileContextWarning` for a.txt and b.txt of `ws`, word for word.
fn file_alert(ws: &Path) -> String {
    let (b, a) = (ws.join("b.txt").display().to_string(), ws.join("a.txt").display().to_string());
    format!(
        "<explicit_instructions>\nCRITICAL FILE STATE ALERT: 2 files have been externally modified since your last interaction. Your cached understanding of these files is now stale and unreliable. Before making ANY modifications to these files, you must execute read_file to obtain the current state, as they may contain completely different content than what you expect:\n {b}\n {a}\nFailure to re-read before editing will result in replace_in_file edit errors, requiring subsequent attempts and wasting tokens. You DO NOT need to re-read these files after subsequent edits, unless instructed to do so.\n</explicit_instructions>"
    )
}

/// Cline's `taskResumption` (act mode) for a task saved just now; `recent_note`: with its
/// "IMPORTANT" reassurance, which a pending file alert leaves out.
fn resumption(ws: &Path, recent_note: bool) -> String {
    let note = if recent_note {
        "\n\nIMPORTANT: If the last tool use was a replace_in_file or write_to_file that was interrupted, the file was reverted back to its original state before the interrupted edit, and you do NOT need to re-read the file as you already have its up-to-date contents."
    } else {
        ""
    };
    format!(
        "[TASK RESUMPTION] This task was interrupted just now. It may or may not be complete, so please reassess the task context. Be aware that the project state may have changed since then. The current working directory is now '{}'. If the task has not been completed, retry the last step before interruption and proceed with completing the task.\n\nNote: If you previously attempted a tool use that the user did not provide a result for, you should assume the tool use was not successful and assess whether you should retry. If the last tool was a browser_action, the browser has been closed and you must launch a new browser if needed.{note}",
        ws.display()
    )
}

/// A request's last user message without the focus chain's reminder, up to its (fresh)
/// environment details; the notice's time said as "just now" and without the "IMPORTANT"
/// reassurance a recent save adds (both depend on the seconds since the save, which a loaded
/// machine can stretch), except where a pending alert leaves that reassurance out: `alert`.
fn before_environment(req: &Req, alert: bool) -> String {
    let last = without_reminder(&req.last_user());
    let last = last.rsplit_once("\n\n<environment_details>").expect("environment details").0.to_string();
    let ago = regex::Regex::new(r"This task was interrupted [^.]*?(ago|just now)\.").unwrap();
    let last = ago.replace(&last, "This task was interrupted just now.").into_owned();
    let note = resumption(Path::new(""), true).split_once("browser if needed.").unwrap().1.to_string();
    if alert {
        last
    } else {
        last.replace(&note, "")
    }
}

/// How many times the alert is in the whole of a request's conversation.
fn alerts_in(req: &Req) -> usize {
    req.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| text_of(&m["content"]).matches("CRITICAL FILE STATE ALERT").count())
        .sum()
}

/// Cline's "CRITICAL FILE STATE ALERT": after a task-only restore, the next resume names the
/// files changed since the checkpoint (absolutely, in the order they changed) after its
/// resumption notice, which leaves out its "IMPORTANT" reassurance; the alert is then cleared
/// (and saved so), and a second resume does not repeat it.
#[test]
fn a_task_only_restore_has_the_next_resume_name_the_files_changed_since_once() {
    let (ws, state, id) = restored_task_only_after_edits();
    let ws = ws.path().canonicalize().unwrap();
    let state_dir = state.path().display().to_string();
    let server = Server::start(vec![anthropic(&completion("Resumed."))]);
    let r = run_cmd("resume", &ws, &args_with(&anthropic_args(&server), &[&id, "--state-dir", &state_dir]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let first = &server.requests()[0];
    let sent = before_environment(first, true);
    let result = "[write_to_file for 'a.txt'] Result:";
    assert!(sent.starts_with(result), "{sent}");
    assert!(sent.ends_with(&format!("\n\n{}\n\n{}", resumption(&ws, false), file_alert(&ws))), "{sent}");
    assert_eq!(alerts_in(first), 1);
    assert!(saved_task(state.path()).get("file_context_warning").is_none(), "cleared, and saved so");

    let server = Server::start(vec![anthropic(&completion("Again."))]);
    let r = run_cmd("resume", &ws, &args_with(&anthropic_args(&server), &[&id, "--state-dir", &state_dir]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let second = &server.requests()[0];
    assert_eq!(before_environment(second, false), resumption(&ws, false));
    assert_eq!(alerts_in(second), 1, "only in the first resume's message, in the history");
}

/// A resume whose request failed leaves its message unsent, and the next resume sends it again
/// with a fresh notice: the alert it carried stays with it, once.
#[test]
fn the_file_alert_of_a_resume_that_failed_is_sent_by_the_next_one() {
    let (ws, state, id) = restored_task_only_after_edits();
    let ws = ws.path().canonicalize().unwrap();
    let state_dir = state.path().display().to_string();
    let unauthorized =
        status(401, serde_json::json!({"type":"error","error":{"type":"authentication_error","message":"no"}}));
    let server = Server::start(vec![unauthorized]);
    let r = run_cmd("resume", &ws, &args_with(&anthropic_args(&server), &[&id, "--state-dir", &state_dir]), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert_eq!(server.requests().len(), 1, "{}", r.all());
    assert_eq!(alerts_in(&server.requests()[0]), 1);

    let server = Server::start(vec![anthropic(&completion("Resumed."))]);
    let r = run_cmd("resume", &ws, &args_with(&anthropic_args(&server), &[&id, "--state-dir", &state_dir]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let sent = before_environment(&server.requests()[0], false);
    // The alert after the unsent result, then the latest notice (Cline sends the earlier one,
    // the alert and their environment details before it).
    assert!(sent.ends_with(&format!("\n\n{}\n\n{}", file_alert(&ws), resumption(&ws, false))), "{sent}");
    assert_eq!(alerts_in(&server.requests()[0]), 1);
}

/// A file an MCP server's tool changed is in a checkpoint: the reply's checkpoint after an MCP
/// call looks at the whole workspace, as after a command (a run that changed files only through
/// MCP had no checkpoint at all, nothing to restore), and the start checkpoint is taken first.
#[test]
fn a_file_an_mcp_tool_changed_is_checkpointed() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("f.txt"), "before\n").unwrap();
    let state = tempfile::tempdir().unwrap();
    let cfg_dir = tempfile::tempdir().unwrap();
    let script = cfg_dir.path().join("writer.py");
    std::fs::write(
        &script,
        r#"import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    p = m.get("params") or {}
    if m["method"] == "initialize":
        out = {"protocolVersion": p["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "w", "version": "1"}}
    elif m["method"] == "tools/list":
        out = {"tools": [{"name": "write", "description": "Writes a file", "inputSchema": {"type": "object"}}]}
    elif m["method"] == "tools/call":
        with open(p["arguments"]["path"], "w") as f:
            f.write(p["arguments"]["text"])
        out = {"content": [{"type": "text", "text": "written"}]}
    else:
        out = {}
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": out}), flush=True)
"#,
    )
    .unwrap();
    let cfg = cfg_dir.path().join("mcp.json");
    let servers =
        serde_json::json!({"mcpServers": {"w": {"command": "python3", "args": [script.display().to_string()]}}});
    std::fs::write(&cfg, servers.to_string()).unwrap();
    let target = ws.path().join("f.txt").display().to_string();
    let args = serde_json::json!({"path": target, "text": "after\n"}).to_string();
    let server = Server::start(vec![
        anthropic(&tool("use_mcp_tool", &[("server_name", "w"), ("tool_name", "write"), ("arguments", &args)])),
        anthropic(&completion("Done.")),
    ]);
    let base = anthropic_args(&server);
    let sd = state.path().display().to_string();
    let cfg = cfg.display().to_string();
    let r = run_agent(
        ws.path(),
        &args_with(&base, &["--state-dir", &sd, "--mcp-config", &cfg, "--yolo", "--json", "t"]),
        &[],
        LIMIT,
    );
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(std::fs::read_to_string(ws.path().join("f.txt")).unwrap(), "after\n");
    let events = common::events::parse(&r.stdout);
    let taken: Vec<(String, u64)> = common::events::of(&events, "checkpoint")
        .iter()
        .map(|c| (c["tool"].as_str().unwrap().to_string(), c["files_changed"].as_u64().unwrap()))
        .collect();
    assert_eq!(taken, [("start".to_string(), 1), ("use_mcp_tool".to_string(), 1)], "{}", r.all());
}
