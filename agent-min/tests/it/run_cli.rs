//! What a new user hits first: an unusable `--cwd`, a read-only workspace, `--version`, a task
//! piped on standard input.

use crate::common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use serde_json::json;

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn an_unusable_cwd_is_a_usage_error_naming_it() {
    let here = tempfile::tempdir().unwrap();
    let r = run_agent(here.path(), &["--cwd", "/etc/passwd", "--no-save", "hi"], &[], LIMIT);
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert!(
        r.stderr.contains("the workspace /etc/passwd is not a directory; pass a directory with --cwd"),
        "{}",
        r.stderr
    );
    let missing = here.path().join("nope");
    let r = run_agent(here.path(), &["--cwd", missing.to_str().unwrap(), "--no-save", "hi"], &[], LIMIT);
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert!(r.stderr.contains("is not usable (No such file or directory"), "{}", r.stderr);
}

#[test]
fn a_workspace_that_is_not_writable_is_said_up_front() {
    // /proc refuses new files to everyone, root included.
    let server = Server::start(vec![anthropic(&completion("done"))]);
    let here = tempfile::tempdir().unwrap();
    let r =
        run_agent(here.path(), &args_with(&anthropic_args(&server), &["--cwd", "/proc", "--no-save", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let warning = "the workspace /proc is not writable (";
    let at = r.all().find(warning).unwrap_or_else(|| panic!("no warning: {}", r.all()));
    assert!(r.all()[at..].contains("write_to_file, replace_in_file and commands that write there will fail"));
    assert!(at < r.all().find("Task completed").unwrap_or(usize::MAX), "said before the task ran");
}

#[test]
fn version_is_printed_by_the_binary_and_by_run() {
    for args in [&["--version"][..], &["-V"], &["run", "--version"]] {
        let out = Command::new(bin()).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("agent-min {}\n", env!("CARGO_PKG_VERSION")),
            "{args:?}"
        );
    }
}

/// The first user message of `run ARGS` against a model that completes at once, with `input`
/// piped on standard input.
fn first_message_with_piped(args: &[&str], input: &[u8]) -> String {
    let server = Server::start(vec![anthropic(&completion("done"))]);
    let ws = tempfile::tempdir().unwrap();
    let mut child = Command::new(bin())
        .arg("run")
        .args(args_with(&anthropic_args(&server), args))
        .current_dir(ws.path())
        .env("ANTHROPIC_API_KEY", KEY)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let r = wait_limited(child, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    server.requests()[0].last_user().to_string()
}

#[test]
fn a_dash_reads_the_task_from_standard_input() {
    let first = first_message_with_piped(&["--no-save", "-"], b"Refactor the parser.\nKeep the tests green.\n");
    assert!(first.starts_with("<task>\nRefactor the parser.\nKeep the tests green.\n</task>"), "{first}");
}

/// As the Cline CLI, `claude -p` and `codex exec` take it: piped input without a task is the task.
#[test]
fn piped_input_without_a_task_is_the_task() {
    let first = first_message_with_piped(&["--no-save"], b"Fix the failing test.\n");
    assert!(first.starts_with("<task>\nFix the failing test.\n</task>"), "{first}");
}

#[test]
fn anthropic_404_names_the_url_and_suggests_dropping_v1() {
    let server = Server::start(vec![status(
        404,
        serde_json::json!({"type":"error","error":{"type":"not_found_error","message":"Not Found"}}),
    )]);
    let ws = tempfile::tempdir().unwrap();
    let base = format!("{}/v1", server.anthropic_url());
    let r =
        run_agent(ws.path(), &["--provider", "anthropic", "--base-url", &base, "--yolo", "--no-save", "t"], &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert_eq!(server.requests()[0].path, "/v1/v1/messages");
    let want = format!(
        "posted to {base}/v1/messages; agent-min adds /v1/messages to an Anthropic base URL itself, so drop /v1 from --base-url ({})",
        server.anthropic_url()
    );
    assert!(r.stderr.contains(&want), "{}", r.stderr);
}

#[test]
fn http_401_says_where_the_key_came_from_or_that_none_was_sent() {
    let unauthorized = || status(401, serde_json::json!({"error":{"message":"Unauthorized","type":"auth"}}));
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![unauthorized()]);
    let r = run_agent(ws.path(), &args_with(&anthropic_args(&server), &["--no-save", "t"]), &[], LIMIT);
    assert!(r.stderr.contains("the key sent was read from ANTHROPIC_API_KEY; check that it is valid"), "{}", r.stderr);
    let server = Server::start(vec![unauthorized()]);
    let r = run_agent(ws.path(), &args_with(&openai_args(&server), &["--no-save", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(r.stderr.contains("no key was sent (OPENAI_API_KEY is not set)"), "{}", r.stderr);
}

#[test]
fn a_refused_connection_is_not_retried_and_says_nothing_listens() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let base = format!("http://127.0.0.1:{port}");
    let ws = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let r = run_agent(
        ws.path(),
        &["--provider", "anthropic", "--base-url", &base, "--yolo", "--no-save", "--json", "t"],
        &[],
        LIMIT,
    );
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(
        r.stderr.contains(&format!(
            "nothing is listening at {base}/v1/messages (connection refused); start the server, or check --base-url"
        )),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("\"type\":\"retry\""), "{}", r.stdout);
    // The default retry delays (2 + 4 + 8 s) were not waited for.
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// A base URL's `user:password@` (curl sends it as Basic auth) is never shown: not in the
/// refused connection's message nor a 404's hint, on the terminal or in the events, short
/// password or long.
#[test]
fn a_base_urls_credentials_are_not_in_its_errors() {
    let ws = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let server = Server::start(vec![status(404, serde_json::json!({"error": {"message": "no such route"}}))]);
    let found = server.openai_url().replacen("http://", "http://me:pw5x@", 1);
    for (base, said) in [
        (format!("http://me:Qz-basepw-0123@127.0.0.1:{port}/v1"), "nothing is listening at http://127.0.0.1:"),
        (found, "posted to http://127.0.0.1:"),
    ] {
        let args = ["--provider", "openai", "--model", "m", "--base-url", &base, "--yolo", "--no-save", "--json", "t"];
        let r = run_agent(ws.path(), &args, &[], LIMIT);
        assert_eq!(r.code, Some(1), "{}", r.all());
        assert!(r.stderr.contains(said), "{}", r.stderr);
        for secret in ["Qz-basepw-0123", "pw5x", "me:pw", "me:Qz"] {
            assert!(!r.all().contains(secret), "{secret}: {}", r.all());
        }
    }
}

/// Runs agent-min on a pseudo-terminal (util-linux `script`), as a person sees it; nobody types
/// (a question would wait: the run is bounded by `LIMIT`).
fn on_a_terminal(ws: &std::path::Path, args: &[&str]) -> (Option<i32>, String) {
    let quoted: Vec<String> = std::iter::once(bin().display().to_string())
        .chain(std::iter::once("run".to_string()))
        .chain(args.iter().map(|a| a.to_string()))
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect();
    let child = Command::new("script")
        .args(["-q", "-e", "-c", &quoted.join(" "), "/dev/null"])
        .current_dir(ws)
        .env("ANTHROPIC_API_KEY", KEY)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("util-linux `script` is needed to run agent-min on a terminal (apt-get install util-linux)");
    let r = wait_limited(child, LIMIT);
    (r.code, r.stdout)
}

#[test]
fn on_a_terminal_a_failure_is_said_once_without_an_empty_token_line() {
    let server = Server::start(vec![status(
        401,
        serde_json::json!({"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}),
    )]);
    let ws = tempfile::tempdir().unwrap();
    let (code, screen) = on_a_terminal(ws.path(), &args_with(&anthropic_args(&server), &["--no-save", "t"]));
    assert_eq!(code, Some(1), "{screen}");
    assert_eq!(screen.matches("invalid x-api-key").count(), 1, "{screen}");
    assert!(!screen.contains("Tokens:"), "{screen}");
}

// ---- In scripts and CI ----

/// A write the model asks for; it needs approval without --yolo.
fn write_reply() -> Resp {
    anthropic(&tool("write_to_file", &[("path", "a.txt"), ("content", "hello")]))
}

/// The base flags of `anthropic_args` without `--yolo`.
fn asking_args(server: &Server) -> Vec<String> {
    anthropic_args(server).into_iter().filter(|a| a != "--yolo").collect()
}

#[test]
fn without_a_terminal_a_needed_approval_stops_the_run_with_exit_3_and_it_resumes() {
    let server = Server::start(vec![write_reply(), write_reply(), anthropic(&completion("written"))]);
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let sd = state.path().to_str().unwrap();
    let r =
        run_agent(ws.path(), &args_with(&asking_args(&server), &["--json", "--state-dir", sd, "write a"]), &[], LIMIT);
    assert_eq!(r.code, Some(3), "never a green run over refused work: {}", r.all());
    assert!(!ws.path().join("a.txt").exists(), "nothing ran");
    assert!(r.stderr.contains("write_to_file needs a person's answer") && r.stderr.contains("--yolo"), "{}", r.stderr);
    let events = events::parse(&r.stdout);
    let needed = events::of(&events, "approval_needed");
    assert_eq!(needed.len(), 1, "{}", r.stdout);
    assert_eq!(
        (needed[0]["tool"].as_str(), needed[0]["params"]["path"].as_str()),
        (Some("write_to_file"), Some("a.txt"))
    );
    let last = events.last().unwrap();
    assert_eq!(
        (last["type"].as_str(), last["status"].as_str(), last["exit_code"].as_u64()),
        (Some("completion"), Some("approval_needed"), Some(3))
    );
    assert!(
        events::of(&events, "approval").is_empty() && events::of(&events, "tool_result").is_empty(),
        "{}",
        r.stdout
    );
    // The task is saved as of the request before the call; --yolo lets it go on.
    let r = run_cmd("resume", ws.path(), &["--last", "--state-dir", sd, "--yolo"], &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stderr.contains("the latest task of"), "resume says which task: {}", r.stderr);
    assert_eq!(std::fs::read_to_string(ws.path().join("a.txt")).unwrap(), "hello");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs[1].last_user().contains("[TASK RESUMPTION]"), "{}", reqs[1].last_user());
}

/// A reply whose first call runs by itself (a read) and whose second needs a person: the stop
/// keeps the reply and the read's result, says so, and `resume` goes on after them — the read
/// is not asked for again. (It used to drop both and say "nothing was run".)
#[test]
fn without_a_terminal_a_stop_after_a_call_that_ran_keeps_its_result_for_resume() {
    let both = format!(
        "Reading, then writing.\n{}\n{}",
        tool("read_file", &[("path", "r.txt")]),
        tool("write_to_file", &[("path", "a.txt"), ("content", "hello")])
    );
    let server = Server::start(vec![anthropic(&both), write_reply(), anthropic(&completion("written"))]);
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("r.txt"), "read me once\n").unwrap();
    let state = tempfile::tempdir().unwrap();
    let sd = state.path().to_str().unwrap();
    let r =
        run_agent(ws.path(), &args_with(&asking_args(&server), &["--json", "--state-dir", sd, "write a"]), &[], LIMIT);
    assert_eq!(r.code, Some(3), "{}", r.all());
    assert!(!ws.path().join("a.txt").exists());
    assert!(r.stderr.contains("the reply's call before it was handled, and its result is kept; on resume the model learns that this call (and any after it) did not run"), "{}", r.stderr);
    assert!(!r.stderr.contains("nothing was run"), "{}", r.stderr);
    let events = events::parse(&r.stdout);
    assert_eq!(events::of(&events, "tool_result").len(), 1, "the read ran: {}", r.stdout);
    let r = run_cmd("resume", ws.path(), &["--last", "--state-dir", sd, "--yolo"], &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(std::fs::read_to_string(ws.path().join("a.txt")).unwrap(), "hello");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let m = reqs[1].body["messages"].as_array().unwrap();
    assert_eq!(m.len(), 3, "the task, the kept reply, then its result and the resumption: {m:?}");
    assert_eq!(m[1]["content"], both, "{m:?}");
    let next = reqs[1].last_user();
    let (read, resumption) = (next.find("[read_file for 'r.txt'] Result:"), next.find("[TASK RESUMPTION]"));
    assert!(read.is_some() && read < resumption && next.contains("read me once"), "{next}");
}

#[test]
fn without_a_terminal_a_followup_question_stops_the_run_too() {
    let ask = anthropic(&tool("ask_followup_question", &[("question", "Which file?")]));
    let server = Server::start(vec![ask]);
    let ws = tempfile::tempdir().unwrap();
    let r = run_agent(ws.path(), &args_with(&asking_args(&server), &["--no-save", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(3), "{}", r.all());
    assert!(r.stderr.contains("Which file?"), "{}", r.stderr);
    assert_eq!(server.requests().len(), 1, "no answer was invented for the model");
    assert!(r.stderr.contains("run at a terminal to answer it"), "{}", r.stderr);
    assert!(!r.stderr.contains("--yolo"), "--yolo cannot answer a question: {}", r.stderr);

    // Saved, the way to answer is named, and following it gives the model the answer.
    let ask = anthropic(&tool("ask_followup_question", &[("question", "Which file?")]));
    let server = Server::start(vec![ask, anthropic(&completion("done"))]);
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let r = run_agent(ws.path(), &args_with(&asking_args(&server), &["--state-dir", &state_dir, "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(3), "{}", r.all());
    let advice = r.stderr.split("answer it: `agent-min resume ").nth(1).unwrap_or_else(|| panic!("{}", r.stderr));
    let id = advice.split(' ').next().unwrap();
    assert!(advice.starts_with(&format!("{id} \"your answer\"`")), "{}", r.stderr);
    let r = run_cmd("resume", ws.path(), &[id, "src/a.rs", "--state-dir", &state_dir], &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let sent = server.requests()[1].last_user();
    assert!(sent.contains("<user_message>\nsrc/a.rs\n</user_message>"), "{sent}");
}

#[test]
fn at_a_terminal_the_person_answers_on_standard_input() {
    let server = Server::start(vec![write_reply(), anthropic(&completion("written"))]);
    let ws = tempfile::tempdir().unwrap();
    let r = run_interactive(ws.path(), &args_with(&asking_args(&server), &["--no-save", "write a"]), b"y\n", LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(std::fs::read_to_string(ws.path().join("a.txt")).unwrap(), "hello");
}

/// Runs `agent-min run ARGS` with `input` piped on standard input and no terminal.
fn run_piped(ws: &std::path::Path, args: &[&str], envs: &[(&str, &str)], input: &[u8]) -> Run {
    let state = tempfile::tempdir().unwrap();
    let mut child = agent_cmd("run", ws, args, envs, state.path()).stdin(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    wait_limited(child, LIMIT)
}

#[test]
fn piped_input_beside_a_task_is_context_and_stdout_carries_only_the_result() {
    let server = Server::start(vec![anthropic(&completion("Looks fine: one line added."))]);
    let ws = tempfile::tempdir().unwrap();
    let out = ws.path().join("review.md");
    let base = anthropic_args(&server);
    let args = args_with(&base, &["--no-save", "-o", out.to_str().unwrap(), "review this"]);
    let r = run_piped(ws.path(), &args, &[], b"diff --git a/x b/x\n+one line\n");
    assert_eq!(r.code, Some(0), "{}", r.all());
    let first = server.requests()[0].last_user();
    assert!(first.starts_with("<task>\nreview this\n\ndiff --git a/x b/x\n+one line\n</task>"), "{first}");
    assert_eq!(r.stdout, "Looks fine: one line added.\n", "stdout is the result alone");
    assert!(r.stderr.contains("Task completed"), "the transcript is on stderr: {}", r.stderr);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "Looks fine: one line added.");
    // A folder that is not there is said before the task runs (no request made), not after.
    let args = args_with(&base, &["--no-save", "-o", "/nonexistent-agent-min/review.md", "review this"]);
    let r = run_piped(ws.path(), &args, &[], b"");
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert!(
        r.stderr.contains("-o /nonexistent-agent-min/review.md: its folder /nonexistent-agent-min cannot be opened"),
        "{}",
        r.stderr
    );
    assert_eq!(server.requests().len(), 1, "no second request");
    // A run that ends without a result leaves the file empty, not the last run's result there.
    let refusing = Server::start(vec![status(
        401,
        json!({"type":"error","error":{"type":"authentication_error","message":"no"}}),
    )]);
    let base = anthropic_args(&refusing);
    let args = args_with(&base, &["--no-save", "-o", out.to_str().unwrap(), "review this"]);
    let r = run_piped(ws.path(), &args, &[], b"");
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "", "no earlier result is left for this run's");
    assert!(r.stderr.contains(&format!("no final result; {} is left empty", out.display())), "{}", r.stderr);
}

#[test]
fn sigterm_and_sigint_end_the_json_stream_with_completion_and_exit_143_or_130() {
    use rustix::process::{kill_process, Pid, Signal};
    for (signal, code, status) in [(Signal::TERM, 143, "terminated"), (Signal::INT, 130, "interrupted")] {
        // The reply stalls after its first text delta, until the signal comes.
        let mut slow = anthropic("I will look at the files now, one by one.");
        let body = String::from_utf8(slow.body.clone()).unwrap();
        let delta = body.find("text_delta").expect("a text delta");
        slow.stall_at = delta + body[delta..].find("\r\n\r\n").unwrap() + 4;
        slow.stall = Duration::from_secs(60);
        let server = Server::start(vec![slow]);
        let ws = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let base = anthropic_args(&server);
        let args = args_with(&base, &["--json", "t"]);
        let mut child = agent_cmd("run", ws.path(), &args, &[], state.path()).stdin(Stdio::null()).spawn().unwrap();
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        // Wait for the request to be under way: its first text event.
        let mut seen = String::new();
        let mut line = String::new();
        while std::io::BufRead::read_line(&mut stdout, &mut line).unwrap() > 0 {
            seen.push_str(&line);
            if line.contains("\"type\":\"text\"") {
                break;
            }
            line.clear();
        }
        assert!(seen.contains("\"type\":\"text\""), "{seen}");
        kill_process(Pid::from_raw(child.id() as i32).unwrap(), signal).unwrap();
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        let r = Run { code: child.wait().unwrap().code(), stdout: String::new(), stderr };
        assert_eq!(r.code, Some(code), "{seen}{rest}");
        let events = events::parse(&format!("{seen}{rest}"));
        let last = events.last().unwrap();
        assert_eq!(
            (last["type"].as_str(), last["status"].as_str(), last["exit_code"].as_u64()),
            (Some("completion"), Some(status), Some(code as u64)),
            "{rest}"
        );
        assert!(r.stderr.contains("continue it with `agent-min resume"), "the resume command is shown: {}", r.stderr);
    }
}

#[test]
fn output_schema_retries_an_invalid_result_once_then_prints_valid_json() {
    let schema = r#"{"type":"object","properties":{"todos":{"type":"array","items":{"type":"string"}}},"required":["todos"],"additionalProperties":false}"#;
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("s.json"), schema).unwrap();
    let server = Server::start(vec![
        anthropic(&completion("There are two TODOs.")),
        anthropic(&completion("{\"todos\": [\"a\", \"b\"]}")),
    ]);
    let base = anthropic_args(&server);
    // Global hooks (in a home of the test's own) that record what they are given.
    let home = tempfile::tempdir().unwrap();
    let (hooks, out) = (home.path().join("Documents/Cline/Hooks"), home.path().join("out"));
    std::fs::create_dir_all(&hooks).unwrap();
    for name in ["TaskStart", "UserPromptSubmit"] {
        let script = format!("#!/bin/sh\ncat > '{}.{name}.json'\n", out.display());
        std::fs::write(hooks.join(name), script).unwrap();
        std::fs::set_permissions(hooks.join(name), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let docs = home.path().join("Documents");
    let envs = [("HOME", home.path().to_str().unwrap()), ("XDG_DOCUMENTS_DIR", docs.to_str().unwrap())];
    let args = args_with(&base, &["--no-save", "--output-schema", "s.json", "list the TODOs"]);
    let r = run_piped(ws.path(), &args, &envs, b"");
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(r.stdout, "{\"todos\":[\"a\",\"b\"]}\n");
    let reqs = server.requests();
    assert!(reqs[0].last_user().contains("valid against this JSON Schema"), "the model is told");
    // The hooks are given the person's task, without agent-min's instructions.
    let given = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(format!("{}.{name}.json", out.display())).unwrap()).unwrap()
    };
    assert_eq!(given("TaskStart")["taskStart"]["taskMetadata"]["initialTask"], "list the TODOs");
    assert_eq!(given("UserPromptSubmit")["userPromptSubmit"]["prompt"], "list the TODOs");
    assert!(reqs[1].last_user().contains("does not match the required JSON Schema"), "{}", reqs[1].last_user());
    // Invalid twice: the run fails.
    let server = Server::start(vec![anthropic(&completion("no")), anthropic(&completion("{\"todos\": 3}"))]);
    let base = anthropic_args(&server);
    let args = args_with(&base, &["--no-save", "--output-schema", "s.json", "list the TODOs"]);
    let r = run_piped(ws.path(), &args, &[], b"");
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains("not valid against --output-schema"), "{}", r.stderr);
}

#[test]
fn short_flags_a_config_profile_and_anthropic_base_url() {
    let server = Server::start(vec![
        anthropic(&tool("write_to_file", &[("path", "a.txt"), ("content", "x")])),
        anthropic(&completion("ok")),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    std::fs::create_dir(config.path().join("agent-min")).unwrap();
    std::fs::write(
        config.path().join("agent-min/config.toml"),
        "provider = \"anthropic\"\nmodel = \"from-the-file\"\nretry_delay = 0.05\n\n[profiles.ci]\nmodel = \"from-the-profile\"\nno_save = true\n",
    )
    .unwrap();
    let url = server.anthropic_url();
    let cfg = config.path().to_str().unwrap();
    let envs = [("XDG_CONFIG_HOME", cfg), ("ANTHROPIC_BASE_URL", url.as_str())];
    let r = run_piped(ws.path(), &["-y", "--profile", "ci", "-C", ws.path().to_str().unwrap(), "t"], &envs, b"");
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(server.requests()[0].body["model"], "from-the-profile");
    assert!(ws.path().join("a.txt").exists(), "-y approved the write");
    // A flag beats the file; a broken file is named.
    let server = Server::start(vec![anthropic(&completion("ok"))]);
    let url = server.anthropic_url();
    let envs = [("XDG_CONFIG_HOME", cfg), ("ANTHROPIC_BASE_URL", url.as_str())];
    let r = run_piped(ws.path(), &["-y", "-m", "from-the-flag", "--profile", "ci", "t"], &envs, b"");
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert_eq!(server.requests()[0].body["model"], "from-the-flag");
    let r = run_piped(ws.path(), &["--profile", "nightly", "t"], &envs, b"");
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert!(
        r.stderr.contains("profile \"nightly\" is not in the config file") && r.stderr.contains("it has: ci"),
        "{}",
        r.stderr
    );
}

/// A switch written as a string (`yolo = "false"`) was a `--yolo` and a task "false": now the
/// run stops before anything, naming the file and the key; a relative path in the file is the
/// file's neighbour wherever the agent starts.
/// `history`, `checkpoints` and `mcp list` look where `run` saved and started things: the
/// config file's `state_dir` and `mcp_config` (they read only their own flags, and said there
/// was no task, and no server).
#[test]
fn history_checkpoints_and_mcp_list_read_the_config_file_as_run_does() {
    let (ws, config, state) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::create_dir(config.path().join("agent-min")).unwrap();
    let servers = r#"{"mcpServers": {"team": {"command": "/nonexistent/team-server"}}}"#;
    std::fs::write(config.path().join("agent-min/team-mcp.json"), servers).unwrap();
    let toml = format!("state_dir = {:?}\nmcp_config = [\"team-mcp.json\"]\n", state.path().display().to_string());
    std::fs::write(config.path().join("agent-min/config.toml"), toml).unwrap();
    let envs = [("XDG_CONFIG_HOME", config.path().to_str().unwrap())];
    let server = Server::start(vec![anthropic(&completion("done"))]);
    let r = run_agent(ws.path(), &args_with(&anthropic_args(&server), &["remember me"]), &envs, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let history = run_cmd("history", ws.path(), &[], &envs, LIMIT);
    assert!(history.stdout.contains("remember me"), "{}", history.all());
    let list = run_cmd("checkpoints", ws.path(), &["list", "--last"], &envs, LIMIT);
    assert_eq!(list.code, Some(0), "{}", list.all());
    let mcp = run_cmd("mcp", ws.path(), &["list"], &envs, LIMIT);
    assert!(mcp.all().contains("team"), "{}", mcp.all());
}

/// A config file that no longer parses (an option renamed since) still lets `--help` and
/// `--version` answer: the error pointed to the help, which the same error kept from showing.
#[test]
fn help_and_version_answer_whatever_the_config_file_says() {
    let (ws, config) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::create_dir(config.path().join("agent-min")).unwrap();
    std::fs::write(config.path().join("agent-min/config.toml"), "modle = \"x\"\n").unwrap();
    let envs = [("XDG_CONFIG_HOME", config.path().to_str().unwrap())];
    for (sub, args) in [("run", ["--help"]), ("run", ["--version"]), ("resume", ["--help"]), ("acp", ["--help"])] {
        let r = run_cmd(sub, ws.path(), &args, &envs, LIMIT);
        assert_eq!(r.code, Some(0), "{sub} {args:?}: {}", r.all());
        assert!(!r.stdout.is_empty(), "{sub} {args:?}");
    }
    let r = run_cmd("run", ws.path(), &["t"], &envs, LIMIT);
    assert_eq!(r.code, Some(2), "the broken file is still refused for a run: {}", r.all());
    assert!(r.stderr.contains("--modle"), "{}", r.stderr);
    // The commands that only read what a run left work without it, saying so.
    let r = run_cmd("history", ws.path(), &[], &envs, LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(
        r.stderr.contains("warning: the config file is passed over") && r.stderr.contains("--modle"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_config_files_quoted_switch_is_refused_and_its_paths_are_its_own() {
    let ws = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let file = config.path().join("agent-min/config.toml");
    std::fs::create_dir(config.path().join("agent-min")).unwrap();
    std::fs::write(&file, "yolo = \"false\"\n").unwrap();
    let cfg = config.path().to_str().unwrap();
    let server = Server::start(vec![anthropic(&completion("ok"))]);
    let url = server.anthropic_url();
    let envs = [("XDG_CONFIG_HOME", cfg), ("ANTHROPIC_BASE_URL", url.as_str())];
    let r = run_piped(ws.path(), &["-P", "anthropic", "-m", "claude-test", "--no-save", "list the files"], &envs, b"");
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert!(
        r.stderr.contains(&format!("{}: `yolo` does not take \"false\" (it would become the task)", file.display())),
        "{}",
        r.stderr
    );
    assert!(server.requests().is_empty());
    // An option whose value is optional takes its own values from the file, quoted or not.
    std::fs::write(&file, "auto_approve = \"true\"\n").unwrap();
    let r = run_piped(ws.path(), &["-P", "anthropic", "-m", "claude-test", "--no-save", "t"], &envs, b"");
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(r.stderr.contains("Commands run sandboxed"), "auto_approve = \"true\" approves: {}", r.stderr);
    std::fs::write(&file, "auto_approve = \"maybe\"\n").unwrap();
    let r = run_piped(ws.path(), &["-P", "anthropic", "-m", "claude-test", "--no-save", "t"], &envs, b"");
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert!(r.stderr.contains("`auto_approve` does not take \"maybe\""), "{}", r.stderr);
    let server = Server::start(vec![anthropic(&completion("ok"))]);
    let url = server.anthropic_url();
    let envs = [("XDG_CONFIG_HOME", cfg), ("ANTHROPIC_BASE_URL", url.as_str())];
    std::fs::write(&file, "rules = [\"team.md\"]\n").unwrap();
    std::fs::write(config.path().join("agent-min/team.md"), "Always answer in French.\n").unwrap();
    let r = run_piped(ws.path(), &["-P", "anthropic", "-m", "claude-test", "--no-save", "t"], &envs, b"");
    assert_eq!(r.code, Some(0), "{}", r.all());
    let system = server.requests()[0].body["system"][0]["text"].as_str().unwrap().to_string();
    assert!(system.contains("Always answer in French."), "{system}");
}

#[test]
fn checkpoints_and_resume_last_take_the_latest_task_of_the_current_directory() {
    let state = tempfile::tempdir().unwrap();
    let sd = state.path().to_str().unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let run_in = |ws: &std::path::Path| {
        let server = Server::start(vec![write_reply(), anthropic(&completion("ok"))]);
        let r = run_agent(ws, &args_with(&anthropic_args(&server), &["--state-dir", sd, "t"]), &[], LIMIT);
        assert_eq!(r.code, Some(0), "{}", r.all());
        r.stderr.split("Saved as ").nth(1).and_then(|s| s.split_whitespace().next()).unwrap().to_string()
    };
    // One task so far: from `/` it is the latest elsewhere (saves are dated to the second, so
    // two tasks of one second would tie).
    let first = run_in(a.path());
    let r = run_cmd("checkpoints", std::path::Path::new("/"), &["list", "--state-dir", sd], &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(
        r.stderr.contains("no saved task was run in /") && r.stderr.contains(&first),
        "names the latest elsewhere: {}",
        r.stderr
    );
    // A task in another directory does not become the first directory's.
    run_in(b.path());
    let r = run_cmd("checkpoints", a.path(), &["list", "--state-dir", sd], &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    assert!(
        r.stderr.contains(&format!("the latest task of {}: {}", a.path().canonicalize().unwrap().display(), first)),
        "{}",
        r.stderr
    );
}

#[test]
fn help_run_is_run_help_and_history_has_a_header() {
    let out = Command::new(bin()).args(["help", "run"]).output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.starts_with("agent-min run —") && help.contains("-o, --output-last-message"), "{help}");
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let sd = state.path().to_str().unwrap();
    let server = Server::start(vec![anthropic(&completion("ok"))]);
    run_agent(ws.path(), &args_with(&anthropic_args(&server), &["--state-dir", sd, "t"]), &[], LIMIT);
    let r = run_cmd("history", ws.path(), &["--state-dir", sd], &[], LIMIT);
    let first = r.stdout.lines().next().unwrap_or("");
    assert!(first.starts_with("ID ") && first.contains("STATUS") && first.contains("REQUESTS"), "{}", r.stdout);
}

#[test]
fn readme_scripts_section_runs() {
    // The commands of the README's "In scripts and CI" block, run as written against a scripted
    // server (ANTHROPIC_BASE_URL), in a git repository with a change to review.
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let block = readme.split("<!-- README-SCRIPTS:").nth(1).expect("the README's scripts block");
    let block = block.split("```sh\n").nth(1).unwrap().split("```").next().unwrap();
    let commands: Vec<&str> = block.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(commands.len(), 4, "{block}");
    let server = Server::start(vec![
        anthropic(&completion("Added --verbose.")),
        anthropic(&completion("The change looks right.")),
        anthropic(&completion("Fixed.")),
        anthropic(&completion("{\"todos\": [\"write docs\"]}")),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let sh = |script: &str| {
        let out = Command::new("sh").args(["-c", script]).current_dir(ws.path()).output().unwrap();
        assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
    };
    sh("git init -q . && git config user.email t@t && git config user.name t && echo a > f && git add f && git commit -qm a && echo b >> f");
    std::fs::write(ws.path().join("todos.schema.json"), r#"{"type":"object","required":["todos"]}"#).unwrap();
    let bin_dir = bin().parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let url = server.anthropic_url();
    let config = tempfile::tempdir().unwrap();
    // The scripted server replies in Cline's XML dialect: a model name the config file gives
    // that `--tool-calls auto` does not send native tools to.
    std::fs::create_dir(config.path().join("agent-min")).unwrap();
    std::fs::write(config.path().join("agent-min/config.toml"), "model = \"claude-test\"\n").unwrap();
    for c in &commands {
        let script = c.split("  #").next().unwrap();
        let out = Command::new(setsid())
            .args(["sh", "-c", script])
            .current_dir(ws.path())
            .env("PATH", &path)
            .env("ANTHROPIC_API_KEY", KEY)
            .env("ANTHROPIC_BASE_URL", &url)
            .env("XDG_STATE_HOME", config.path())
            .env("XDG_CONFIG_HOME", config.path())
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{script}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let read = |f: &str| std::fs::read_to_string(ws.path().join(f)).unwrap();
    assert_eq!(read("result.txt"), "Added --verbose.\n");
    assert_eq!(read("review.md"), "The change looks right.");
    assert!(server.requests()[1].last_user().contains("+b"), "git diff reached the model as context");
    assert!(read("events.ndjson").lines().last().unwrap().contains("\"type\":\"completion\""));
    assert_eq!(read("todos.json"), "{\"todos\":[\"write docs\"]}\n");
}

/// A workspace whose name holds a terminal escape is named escaped when `resume --last` and
/// `checkpoints list --last` say which task they took (it reached the terminal raw).
#[test]
fn the_latest_tasks_workspace_is_named_escaped() {
    let d = tempfile::tempdir().unwrap();
    let ws = d.path().join("ws\x1b]0;owned\x07");
    std::fs::create_dir(&ws).unwrap();
    let state = tempfile::tempdir().unwrap();
    let sd = state.path().to_str().unwrap();
    let server = Server::start(vec![anthropic(&completion("done")), anthropic(&completion("again"))]);
    let base = anthropic_args(&server);
    let r = run_agent(&ws, &args_with(&base, &["--state-dir", sd, "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let r = run_cmd("checkpoints", &ws, &["list", "--last", "--state-dir", sd], &[], LIMIT);
    assert!(r.stderr.contains("the latest task of"), "{}", r.all());
    assert!(!r.all().contains('\x1b'), "{:?}", r.all());
    let r = run_cmd("resume", &ws, &["--last", "--state-dir", sd, "--yolo"], &[], LIMIT);
    assert!(r.stderr.contains("the latest task of"), "{}", r.all());
    assert!(!r.stderr.contains('\x1b'), "{:?}", r.stderr);
}
