//! Limits and accounting: `--max-cost`, `--max-turns` and `--timeout` each stop the run with
//! exit 1 and a message naming the limit; tokens and cost per request and in total.

use crate::common;

use std::time::{Duration, Instant};

use common::*;

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn max_cost_stops_before_the_request_that_would_exceed_it() {
    let ws = tempfile::tempdir().unwrap();
    let list = tool("list_files", &[("path", ".")]);
    let server = Server::start(vec![anthropic(&list), anthropic(&list), anthropic(&list), anthropic(&completion("x"))]);
    let base = anthropic_args(&server);
    // $10,000 per million tokens: each request's 100 input + 7 cached tokens cost $1.07, plus
    // its (estimated) output.
    let r = run_agent(
        ws.path(),
        &args_with(&base, &["--json", "--price-input", "10000", "--price-output", "10000", "--max-cost", "1.5", "t"]),
        &[],
        LIMIT,
    );
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert_eq!(server.requests().len(), 2, "stops before the third request");
    assert!(r.stderr.contains("the cost limit was reached"), "{}", r.stderr);
    assert!(r.stderr.contains("--max-cost 1.5"), "{}", r.stderr);
    let events = events::parse(&r.stdout);
    let costs: Vec<f64> = events::of(&events, "api_request").iter().map(|e| e["cost_usd"].as_f64().unwrap()).collect();
    assert_eq!(costs.len(), 2);
    assert!(costs.iter().all(|&c| c > 1.07 && c < 1.5), "{costs:?}");
    let err = events::of(&events, "error");
    assert_eq!(err[0]["limit"], "max_cost");
    let total = events.last().unwrap()["totals"]["cost_usd"].as_f64().unwrap();
    assert!((total - costs.iter().sum::<f64>()).abs() < 1e-5);
    assert!(r.stderr.contains(&format!("cost ${total:.4}")), "{}", r.stderr);
}

#[test]
fn max_cost_without_prices_is_a_usage_error_naming_the_flags() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--max-cost", "1", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(2), "{}", r.all());
    assert!(r.stderr.contains("--price-input") && r.stderr.contains("claude-test"), "{}", r.stderr);
    assert!(server.requests().is_empty());
}

#[test]
fn a_servers_bill_is_the_cost_of_a_model_without_prices() {
    // OpenRouter's usage chunk says what each request cost (`usage.cost`, US dollars; plus
    // `cost_details.upstream_inference_cost` on the user's own provider key), as Cline's
    // OpenRouter handler reads it: a model in no table (here gpt-test) has a cost after all.
    let billed = |r: Resp, cost: &str| {
        let body = String::from_utf8(r.body).unwrap();
        let body = body.replace(r#""total_tokens":59}"#, &format!(r#""total_tokens":59,{cost}}}"#));
        Resp { body: body.into_bytes(), ..r }
    };
    let ws = tempfile::tempdir().unwrap();
    let list = tool("list_files", &[("path", ".")]);
    let server = Server::start(vec![
        billed(openai(&list), r#""cost":0.0123"#),
        billed(openai(&completion("x")), r#""cost":0.001,"cost_details":{"upstream_inference_cost":0.02}"#),
    ]);
    let base = openai_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--json", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let events = events::parse(&r.stdout);
    let costs: Vec<f64> = events::of(&events, "api_request").iter().map(|e| e["cost_usd"].as_f64().unwrap()).collect();
    assert_eq!(costs, [0.0123, 0.021]);
    let total = events.last().unwrap()["totals"]["cost_usd"].as_f64().unwrap();
    assert!((total - 0.0333).abs() < 1e-12, "{total}");
    assert!(r.stderr.contains("over 2 requests; cost $0.0333"), "{}", r.stderr);
}

#[test]
fn exact_usage_is_priced_from_the_built_in_table() {
    // A reply read to its end reports its usage; claude-sonnet-4-5 costs $3 / $15 / $0.30 per
    // million input / output / cache-read tokens.
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![anthropic("no tool in this reply")]);
    let base = anthropic_args(&server);
    let r = run_agent(
        ws.path(),
        &args_with(&base, &["--json", "--model", "claude-sonnet-4-5", "--max-mistakes", "1", "t"]),
        &[],
        LIMIT,
    );
    assert_eq!(r.code, Some(1), "{}", r.all());
    let events = events::parse(&r.stdout);
    let req = events::of(&events, "api_request")[0];
    assert_eq!(
        (req["tokens_in"].as_u64(), req["tokens_out"].as_u64(), req["cache_read"].as_u64()),
        (Some(100), Some(42), Some(7))
    );
    assert_eq!(req["estimated"], false);
    let expected = (100.0 * 3.0 + 42.0 * 15.0 + 7.0 * 0.30) / 1e6;
    assert!((req["cost_usd"].as_f64().unwrap() - expected).abs() < 1e-9, "{req}");
    assert!(
        r.stderr.contains("Tokens: 100 in, 42 out (cache: 7 read, 0 written) over 1 request; cost $0.0009"),
        "{}",
        r.stderr
    );
}

#[test]
fn max_turns_stops_with_exit_1_naming_the_flag() {
    let ws = tempfile::tempdir().unwrap();
    let list = tool("list_files", &[("path", ".")]);
    let server = Server::start(vec![anthropic(&list), anthropic(&list), anthropic(&list)]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--max-turns", "2", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert_eq!(server.requests().len(), 2);
    assert!(r.stderr.contains("the turn limit was reached (2 requests; raise it with --max-turns)"), "{}", r.stderr);
}

#[test]
fn timeout_stops_a_stalled_stream_with_exit_1_naming_the_flag() {
    let ws = tempfile::tempdir().unwrap();
    let mut stalled = anthropic(&completion("too late"));
    stalled.stall = Duration::from_secs(30);
    let server = Server::start(vec![anthropic(&tool("list_files", &[("path", ".")])), stalled]);
    let base = anthropic_args(&server);
    let start = Instant::now();
    let r = run_agent(ws.path(), &args_with(&base, &["--json", "--timeout", "2s", "t"]), &[], LIMIT);
    let took = start.elapsed();
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(took < Duration::from_secs(15), "the stall was not cut short: {took:?}");
    assert!(took >= Duration::from_secs(2));
    assert!(r.stderr.contains("the time limit was reached (--timeout 2s"), "{}", r.stderr);
    assert!(!r.stderr.contains("too late"));
    let events = events::parse(&r.stdout);
    assert_eq!(events::of(&events, "error")[0]["limit"], "timeout");
    assert!(events::of(&events, "retry").is_empty(), "a timeout is not retried");
}

/// A retry that would wait past the deadline (a 429 asking for 60 s) stops at it, as any limit
/// does: an `error` event naming it — not the watchdog's hard exit for a loop that does not
/// respond.
#[test]
fn timeout_ends_a_retry_wait_cleanly() {
    let ws = tempfile::tempdir().unwrap();
    let mut limited =
        status(429, serde_json::json!({"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}));
    limited.headers.push(("retry-after".into(), "60".into()));
    let server = Server::start(vec![limited, anthropic(&completion("too late"))]);
    let base = anthropic_args(&server);
    let r = run_agent(ws.path(), &args_with(&base, &["--json", "--timeout", "1s", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(r.stderr.contains("the time limit was reached (--timeout 1s"), "{}", r.stderr);
    assert!(!r.stderr.contains("did not respond"), "{}", r.stderr);
    let events = events::parse(&r.stdout);
    assert_eq!(events::of(&events, "retry").len(), 1, "{}", r.stdout);
    assert_eq!(events::of(&events, "error")[0]["limit"], "timeout", "{}", r.stdout);
    assert_eq!(server.requests().len(), 1, "not retried past the deadline");
}

#[test]
fn timeout_kills_a_running_command() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![
        anthropic(&tool("execute_command", &[("command", "sleep 30; touch late.txt"), ("requires_approval", "false")])),
        anthropic(&completion("never")),
    ]);
    let base = anthropic_args(&server);
    let start = Instant::now();
    let r = run_agent(ws.path(), &args_with(&base, &["--timeout", "1.5s", "t"]), &[], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(start.elapsed() < Duration::from_secs(15));
    assert!(r.stderr.contains("the time limit was reached (--timeout 1.5s"), "{}", r.stderr);
    assert_eq!(server.requests().len(), 1);
    std::thread::sleep(Duration::from_millis(200));
    assert!(!ws.path().join("late.txt").exists());
}

#[test]
fn huge_durations_on_the_command_line_do_not_panic() {
    let ws = tempfile::tempdir().unwrap();
    let server = Server::start(vec![anthropic(&completion("done"))]);
    let base = anthropic_args(&server);
    let mut args: Vec<&str> = base.iter().map(String::as_str).collect();
    args.extend(["--command-timeout", "1e20", "--retry-delay", "1e300", "--timeout", "1e20", "t"]);
    let r = run_agent(ws.path(), &args, &[], Duration::from_secs(60));
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert!(r.code == Some(0) || r.code == Some(2), "{}", r.all());
    if r.code == Some(2) {
        assert!(r.stderr.contains("--timeout"), "{}", r.stderr);
    }
}

#[test]
fn timeout_stops_a_loop_blocked_outside_any_child_process() {
    // Without --yolo, ask_followup_question waits on stdin, which the test keeps open and
    // silent: killing curl and commands cannot unblock that read, so the watchdog must end the run.
    let ws = tempfile::tempdir().unwrap();
    let ask = tool("ask_followup_question", &[("question", "Which file?")]);
    let server = Server::start(vec![anthropic(&ask), anthropic(&completion("x"))]);
    let base: Vec<String> = anthropic_args(&server).into_iter().filter(|a| a != "--yolo").collect();
    let state = tempfile::tempdir().unwrap();
    // The person's terminal stays open and silent: the approval prompt blocks reading it.
    let (_terminal, tty) = pty();
    let mut cmd = std::process::Command::new(setsid());
    cmd.arg(bin())
        .arg("run")
        .args(&base)
        .args(["--timeout", "1s", "t"])
        .current_dir(ws.path())
        .env("XDG_STATE_HOME", state.path())
        .env("ANTHROPIC_API_KEY", KEY)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::from(tty))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    let start = Instant::now();
    let r = wait_limited(child, Duration::from_secs(30));
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert!(start.elapsed() < Duration::from_secs(15), "{:?}", start.elapsed());
    assert!(r.stderr.contains("the time limit was reached"), "{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
}

#[test]
fn a_1m_models_cost_and_max_cost_use_its_upper_tier_past_200k_prompt_tokens() {
    // claude-sonnet-4-5:1m, as Cline prices it (CLAUDE_SONNET_1M_TIERS): $3 in / $15 out up to
    // 200,000 prompt tokens, $6 / $22.50 above. At the base prices the two requests would cost
    // $1.20 and the third request would go out under --max-cost 1.5.
    let ws = tempfile::tempdir().unwrap();
    let list = tool("list_files", &[("path", ".")]);
    let server = Server::start(vec![
        anthropic_usage(&list, 150_000),
        anthropic_usage(&list, 250_000),
        anthropic_usage(&completion("x"), 1_000),
    ]);
    let base = anthropic_args(&server);
    let r = run_agent(
        ws.path(),
        &args_with(&base, &["--json", "--model", "claude-sonnet-4-5:1m", "--max-cost", "1.5", "t"]),
        &[],
        LIMIT,
    );
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert_eq!(server.requests().len(), 2, "stops before the third request");
    assert!(r.stderr.contains("the cost limit was reached"), "{}", r.stderr);
    let events = events::parse(&r.stdout);
    let costs: Vec<f64> = events::of(&events, "api_request").iter().map(|e| e["cost_usd"].as_f64().unwrap()).collect();
    let expected = [(150_000.0 * 3.0 + 42.0 * 15.0) / 1e6, (250_000.0 * 6.0 + 42.0 * 22.5) / 1e6];
    assert_eq!(costs.len(), 2, "{costs:?}");
    assert!(costs.iter().zip(expected).all(|(c, e)| (c - e).abs() < 1e-9), "{costs:?} vs {expected:?}");
}
