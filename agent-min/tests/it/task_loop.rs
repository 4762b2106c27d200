//! The Task loop's rules, driven in-process: a scripted [`Transport`] hands out fixed replies and
//! records every request, the workspace and state directory are temp dirs, the terminal and the
//! `--json` events write into buffers. No server, no curl, no sleeps: each test is a few
//! milliseconds and gives the same result on every run.
//!
//! The black-box suites (`run_*`) check the same rules through the real binary and wire formats;
//! these check the loop's decisions one by one.

use std::collections::VecDeque;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_min::run::budget::accounting::Accounting;
use agent_min::run::budget::context::ContextWindow;
use agent_min::run::budget::limits::Limits;
use agent_min::run::checkpoints::Tracker;
use agent_min::run::llm::{ApiError, Delta, Flow, Message, Role, StopReason, Transport, Usage};
use agent_min::run::mcp::Hub;
use agent_min::run::project::Project;
use agent_min::run::prompt;
use agent_min::run::session::events::Events;
use agent_min::run::session::state::{self, Meta, Record, Store};
use agent_min::run::task::{Around, End, Settings, Task};
use agent_min::run::tools::paths::Workspace;
use agent_min::run::ui::term::Term;
use serde_json::Value;

/// One scripted reply: what the transport hands the loop, delta by delta, or the error it
/// returns instead.
enum Step {
    Reply(Vec<Delta>),
    /// Hands out the deltas only once this long has passed since the request arrived (a
    /// timeout that fires while a reply streams: the request comes after the run's clock started,
    /// so its timeout has passed by then, whatever the machine's load).
    After(Duration, Vec<Delta>),
    Fail(ApiError),
}

/// A model that answers from a script and remembers what it was sent.
struct Scripted {
    steps: VecDeque<Step>,
    requests: Arc<Mutex<Vec<Vec<Message>>>>,
}

impl Transport for Scripted {
    fn send(&mut self, _system: &str, messages: &[Message], on: &mut dyn FnMut(Delta) -> Flow) -> Result<(), ApiError> {
        self.requests.lock().unwrap().push(messages.to_vec());
        let deltas = match self.steps.pop_front() {
            Some(Step::Reply(d)) => d,
            Some(Step::After(wait, d)) => {
                // Wait past the deadline itself (not a guess at how long something takes).
                let deadline = Instant::now() + wait;
                while Instant::now() < deadline {
                    std::thread::sleep(deadline - Instant::now());
                }
                d
            }
            Some(Step::Fail(e)) => return Err(e),
            None => return Err(ApiError::fatal("the script has no reply left")),
        };
        for d in deltas {
            if on(d).stops_now() {
                break;
            }
        }
        Ok(())
    }

    fn provider(&self) -> &str {
        "scripted"
    }
}

/// A reply of plain text in the XML dialect, ended as a server ends one, with its usage.
fn reply(text: &str) -> Step {
    reply_stopped(text, StopReason::EndTurn)
}

fn reply_stopped(text: &str, stop: StopReason) -> Step {
    reply_in(text, 7, stop)
}

/// A reply streamed `chunk` characters per text delta.
fn reply_in(text: &str, chunk: usize, stop: StopReason) -> Step {
    let mut deltas: Vec<Delta> = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(chunk) {
        deltas.push(Delta::Text(piece.iter().collect()));
    }
    deltas.push(Delta::Stop(stop));
    deltas.push(Delta::Usage(Usage { input: 100, output: 20, cache_read: 0, cache_write: 0, billed: None }));
    Step::Reply(deltas)
}

const DONE: &str = "<attempt_completion>\n<result>done</result>\n</attempt_completion>";

/// A writer into shared memory: the terminal and the events of a run, read after it.
#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Buf {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// Everything a test sets up: a workspace, a state directory, and the run's options.
struct Setup {
    ws: tempfile::TempDir,
    state: tempfile::TempDir,
    max_mistakes: u32,
    timeout: Option<Duration>,
    /// The native dialect (else XML).
    native: bool,
    /// `--one-tool-per-reply`.
    one_tool: bool,
    /// Cline's focus chain (on unless `--no-focus-chain`).
    focus_chain: bool,
}

impl Setup {
    fn new() -> Setup {
        Setup {
            ws: tempfile::tempdir().unwrap(),
            state: tempfile::tempdir().unwrap(),
            max_mistakes: 3,
            timeout: None,
            native: false,
            one_tool: false,
            focus_chain: true,
        }
    }

    /// With `--one-tool-per-reply` (Cline's parallel tool calling off).
    fn one_tool() -> Setup {
        Setup { one_tool: true, ..Setup::new() }
    }

    fn store(&self) -> Store {
        Store::open(self.state.path(), None).unwrap()
    }
}

/// What a run left behind.
struct Ran {
    end: End,
    /// Every request: the messages the model was sent.
    requests: Vec<Vec<Message>>,
    /// The terminal's output.
    shown: String,
    /// The `--json` events.
    events: Vec<Value>,
    id: String,
}

impl Ran {
    /// The last user message of request `n` (1-based).
    fn user(&self, n: usize) -> &str {
        let m = self.requests[n - 1].last().expect("a message");
        assert_eq!(m.role, Role::User);
        &m.content
    }

    fn events_of(&self, ty: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["type"] == ty).collect()
    }
}

/// Runs a new task (or resumes `saved`) through `steps`, under `--yolo`.
fn run(setup: &Setup, steps: Vec<Step>, saved: Option<Record>) -> Ran {
    let requests = Arc::new(Mutex::new(Vec::new()));
    let transport = Scripted { steps: steps.into(), requests: requests.clone() };
    let (shown, events) = (Buf::default(), Buf::default());
    let ws = Workspace::new(setup.ws.path()).unwrap();
    let meta = match &saved {
        Some(r) => r.meta.clone(),
        None => Meta {
            id: state::new_id(),
            task: "make the files".to_string(),
            created: state::now_secs(),
            provider: "scripted".to_string(),
            model: "script".to_string(),
            base_url: "script".to_string(),
            cwd: ws.root().display().to_string(),
        },
    };
    let id = meta.id.clone();
    let around = Around {
        events: Events::to(Box::new(events.clone())),
        store: Some(setup.store()),
        meta,
        accounting: Accounting::new(None, false),
        context: ContextWindow::new(200_000),
        limits: Limits::start(None, None, setup.timeout),
        checkpoints: Tracker::off(),
        project: Project::bare(ws.root()),
        mcp: Hub::none(),
        output_schema: None,
    };
    let settings = Settings {
        yolo: true,
        max_mistakes: setup.max_mistakes,
        retry_delay: Duration::ZERO,
        max_retries: 0,
        command_timeout: Duration::from_secs(30),
        dialect: agent_min::run::dialect::of(setup.native),
        one_tool_per_reply: setup.one_tool,
        images: true,
        focus_chain: setup.focus_chain,
    };
    let task = Task::new(settings, Box::new(transport), ws, Term::to_writer(Box::new(shown.clone())), around);
    let end = match saved {
        Some(record) => task.resume(record, None),
        None => task.run(),
    };
    let events = events.text().lines().map(|l| serde_json::from_str(l).expect("an event is JSON")).collect();
    let requests = requests.lock().unwrap().clone();
    Ran { end, requests, shown: shown.text(), events, id }
}

/// A file's content without trailing newlines (whether one is added is write_to_file's business).
fn read(ws: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(ws.join(name)).ok().map(|s| s.trim_end_matches('\n').to_string())
}

#[test]
fn a_tool_call_runs_and_its_result_is_the_next_request() {
    let s = Setup::new();
    let write = "I'll write it.\n<write_to_file>\n<path>a.txt</path>\n<content>\nhello\n</content>\n</write_to_file>";
    let r = run(&s, vec![reply(write), reply(DONE)], None);
    assert_eq!(r.end, End::Completed("done".to_string()), "{}", r.shown);
    assert_eq!(read(s.ws.path(), "a.txt").as_deref(), Some("hello"));
    assert_eq!(r.requests.len(), 2);
    assert!(r.user(1).starts_with("<task>\nmake the files\n</task>"), "{}", r.user(1));
    assert!(r.user(2).starts_with("[write_to_file for 'a.txt'] Result:"), "{}", r.user(2));
    assert!(r.user(2).contains("<environment_details>"), "{}", r.user(2));
    let types: Vec<&str> = r.events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"task_started"));
    assert_eq!(types.last(), Some(&"completion"));
    assert_eq!(r.events_of("tool_result").len(), 2, "the write, then the completion: {types:?}");
}

const TWO_WRITES: &str = "<write_to_file>\n<path>a.txt</path>\n<content>\none\n</content>\n</write_to_file>\n\
                          <write_to_file>\n<path>b.txt</path>\n<content>\ntwo\n</content>\n</write_to_file>";

#[test]
fn with_one_tool_per_reply_of_two_tool_calls_in_one_delta_only_the_first_runs_and_the_model_is_told() {
    let s = Setup::one_tool();
    let r = run(&s, vec![reply_in(TWO_WRITES, usize::MAX, StopReason::EndTurn), reply(DONE)], None);
    assert_eq!(r.end, End::Completed("done".to_string()), "{}", r.shown);
    assert_eq!(read(s.ws.path(), "a.txt").as_deref(), Some("one"));
    assert_eq!(read(s.ws.path(), "b.txt"), None, "the second call must not run");
    // The history keeps what the model said as it was read, as Cline v4.0.10's does (its
    // "[Response interrupted by a tool use result…]" note is only shown).
    let assistant = &r.requests[1][r.requests[1].len() - 2];
    assert_eq!(assistant.role, Role::Assistant);
    assert_eq!(assistant.content, TWO_WRITES, "{}", assistant.content);
    assert!(r.user(2).contains(&prompt::tool_already_used("write_to_file")), "{}", r.user(2));
    assert_eq!(r.events_of("tool_result").len(), 2, "one write and the completion");
}

#[test]
fn with_one_tool_per_reply_of_two_tool_calls_streamed_the_first_ends_the_reply_and_the_second_is_never_read() {
    let s = Setup::one_tool();
    let r = run(&s, vec![reply(TWO_WRITES), reply(DONE)], None);
    assert_eq!(r.end, End::Completed("done".to_string()), "{}", r.shown);
    assert_eq!(read(s.ws.path(), "a.txt").as_deref(), Some("one"));
    assert_eq!(read(s.ws.path(), "b.txt"), None, "the second call must not run");
    // Reading stopped at the first tool's close (as Cline stops the stream after a tool): the
    // history holds the reply up to there, and nothing of the second call.
    let assistant = &r.requests[1][r.requests[1].len() - 2];
    assert!(assistant.content.trim_end().ends_with("</write_to_file>"), "{}", assistant.content);
    assert!(!assistant.content.contains("b.txt"), "{}", assistant.content);
    let calls: Vec<&Value> = r.events_of("tool_call").into_iter().filter(|e| e["partial"] == false).collect();
    assert_eq!(calls.len(), 2, "the first write and the completion: {calls:?}");
}

#[test]
fn two_tool_calls_in_one_reply_both_run_in_order_each_with_its_own_result() {
    let s = Setup::new();
    let r = run(&s, vec![reply(TWO_WRITES), reply(DONE)], None);
    assert_eq!(r.end, End::Completed("done".to_string()), "{}", r.shown);
    assert_eq!(read(s.ws.path(), "a.txt").as_deref(), Some("one"));
    assert_eq!(read(s.ws.path(), "b.txt").as_deref(), Some("two"), "the second call runs too");
    // The reply is kept whole (Cline does not cut the stream when several calls may run).
    let assistant = &r.requests[1][r.requests[1].len() - 2];
    assert_eq!(assistant.content, TWO_WRITES);
    let next = r.user(2);
    let (a, b) = (next.find("[write_to_file for 'a.txt'] Result:"), next.find("[write_to_file for 'b.txt'] Result:"));
    assert!(matches!((a, b), (Some(a), Some(b)) if a < b), "both results, in order: {next}");
    assert!(!next.contains("was not executed"), "{next}");
    let ids: Vec<&str> = r.events_of("tool_result").iter().map(|e| e["call_id"].as_str().unwrap_or_default()).collect();
    assert_eq!(ids, ["call_1", "call_1_2", "call_2"], "each call its own id");
}

/// A native reply: `calls` as (id, tool, JSON arguments), then the stop and usage.
fn native_reply(calls: &[(&str, &str, &str)]) -> Step {
    use agent_min::run::llm::BlockDelta;
    let mut deltas = vec![Delta::Text("On it.".into())];
    for (index, (id, name, args)) in calls.iter().enumerate() {
        deltas.push(Delta::Block(BlockDelta::ToolCall {
            index,
            id: Some(id.to_string()),
            name: Some(name.to_string()),
            arguments: args.to_string(),
        }));
    }
    deltas.push(Delta::Stop(StopReason::EndTurn));
    deltas.push(Delta::Usage(Usage { input: 100, output: 20, cache_read: 0, cache_write: 0, billed: None }));
    Step::Reply(deltas)
}

const NATIVE_TWO_WRITES: &[(&str, &str, &str)] = &[
    ("toolu_a", "write_to_file", r#"{"absolutePath":"a.txt","content":"one"}"#),
    ("toolu_b", "write_to_file", r#"{"absolutePath":"b.txt","content":"two"}"#),
];

const NATIVE_DONE: &[(&str, &str, &str)] = &[("toolu_z", "attempt_completion", r#"{"result":"done"}"#)];

/// The native calls of the assistant message before request `n`'s last message: (id, answer).
fn answers(r: &Ran, n: usize) -> Vec<(String, Option<String>)> {
    let msgs = &r.requests[n - 1];
    let assistant = &msgs[msgs.len() - 2];
    let calls = assistant.parts.iter().filter_map(|p| match p {
        agent_min::run::llm::Part::ToolUse(t) => Some((t.id.clone(), t.answer.clone())),
        _ => None,
    });
    calls.collect()
}

#[test]
fn two_native_calls_in_one_reply_both_run_and_each_id_gets_its_own_result() {
    let s = Setup { native: true, ..Setup::new() };
    let r = run(&s, vec![native_reply(NATIVE_TWO_WRITES), native_reply(NATIVE_DONE)], None);
    assert_eq!(r.end, End::Completed("done".to_string()), "{}", r.shown);
    assert_eq!(read(s.ws.path(), "a.txt").as_deref(), Some("one"));
    assert_eq!(read(s.ws.path(), "b.txt").as_deref(), Some("two"));
    let got = answers(&r, 2);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].0, "toolu_a");
    assert!(got[0].1.as_deref().unwrap().starts_with("[write_to_file for 'a.txt'] Result:"), "{got:?}");
    assert_eq!(got[1].0, "toolu_b");
    assert!(got[1].1.as_deref().unwrap().starts_with("[write_to_file for 'b.txt'] Result:"), "{got:?}");
}

#[test]
fn with_one_tool_per_reply_a_second_native_call_is_answered_with_clines_text() {
    let s = Setup { native: true, ..Setup::one_tool() };
    let r = run(&s, vec![native_reply(NATIVE_TWO_WRITES), native_reply(NATIVE_DONE)], None);
    assert_eq!(r.end, End::Completed("done".to_string()), "{}", r.shown);
    assert_eq!(read(s.ws.path(), "a.txt").as_deref(), Some("one"));
    assert_eq!(read(s.ws.path(), "b.txt"), None, "the second call must not run");
    let got = answers(&r, 2);
    assert_eq!(got[1].1.as_deref(), Some(prompt::tool_already_used("write_to_file").as_str()));
}

/// A native reply with no calls whose text holds Cline's XML calls runs all of them, in order,
/// as Cline's parser and executor do; with one tool per reply, the first.
#[test]
fn every_call_a_native_reply_wrote_as_xml_text_runs_in_order() {
    let text = "Both.\n<write_to_file>\n<path>a.txt</path>\n<content>\none\n</content>\n</write_to_file>\n<write_to_file>\n<path>b.txt</path>\n<content>\ntwo\n</content>\n</write_to_file>";
    let s = Setup { native: true, ..Setup::new() };
    let r = run(&s, vec![reply(text), native_reply(NATIVE_DONE)], None);
    assert_eq!(r.end, End::Completed("done".to_string()), "{}", r.shown);
    assert_eq!(
        (read(s.ws.path(), "a.txt").as_deref(), read(s.ws.path(), "b.txt").as_deref()),
        (Some("one"), Some("two"))
    );
    let next = r.user(2);
    let (a, b) = (next.find("[write_to_file for 'a.txt'] Result:"), next.find("[write_to_file for 'b.txt'] Result:"));
    assert!(a.is_some() && a < b, "{next}");
    let recovered = r.events_of("tool_call").iter().filter(|e| e["recovered"] == true).count();
    assert_eq!(recovered, 2);

    let s = Setup { native: true, ..Setup::one_tool() };
    let r = run(&s, vec![reply(text), native_reply(NATIVE_DONE)], None);
    assert_eq!(r.end, End::Completed("done".to_string()), "{}", r.shown);
    assert_eq!(read(s.ws.path(), "b.txt"), None, "the second call must not run");
    assert!(r.user(2).contains(&prompt::tool_already_used("write_to_file")), "{}", r.user(2));
}

/// An empty reply is answered as one without a tool (Cline), in both dialects: the reminder,
/// a mistake, and `Failure: I did not provide a response.` in its place in the history.
#[test]
fn an_empty_reply_gets_the_no_tool_reminder_and_counts_a_mistake() {
    for native in [true, false] {
        let s = Setup { native, max_mistakes: 2, ..Setup::new() };
        let empty = || Step::Reply(vec![Delta::Stop(StopReason::EndTurn)]);
        let r = run(&s, vec![empty(), empty(), reply(DONE)], None);
        let End::Failed(why) = &r.end else { panic!("{:?}\n{}", r.end, r.shown) };
        assert!(why.contains("2 mistakes in a row"), "{why}");
        assert_eq!(r.requests.len(), 2, "the same request is not sent again");
        let history = &r.requests[1];
        assert_eq!(history[history.len() - 2].content, "Failure: I did not provide a response.");
        assert!(r.user(2).starts_with("[ERROR] You did not use a tool in your previous response!"), "{}", r.user(2));
        assert_eq!(r.events_of("notice").iter().filter(|e| e["kind"] == "empty_reply").count(), 2);
    }
}

#[test]
fn consecutive_mistakes_stop_the_task_at_the_limit() {
    let s = Setup { max_mistakes: 3, ..Setup::new() };
    let no_tool = || reply("I think the answer is 42.");
    let r = run(&s, vec![no_tool(), no_tool(), no_tool(), reply(DONE)], None);
    let End::Failed(why) = &r.end else { panic!("{:?}\n{}", r.end, r.shown) };
    assert!(why.contains("3 mistakes in a row") && why.contains("--max-mistakes 3"), "{why}");
    assert_eq!(r.requests.len(), 3, "no request after the third mistake");
    for n in [2, 3] {
        assert!(r.user(n).starts_with(&prompt::no_tools_used()), "request {n}: {}", r.user(n));
    }
    assert_eq!(r.events_of("error").len(), 1);
    assert_eq!(r.events_of("completion")[0]["status"], "failed");
}

#[test]
fn a_success_between_mistakes_resets_the_count() {
    let s = Setup { max_mistakes: 2, ..Setup::new() };
    let no_tool = || reply("Thinking.");
    let list = "<list_files>\n<path>.</path>\n</list_files>";
    let r = run(&s, vec![no_tool(), reply(list), no_tool(), reply(DONE)], None);
    assert_eq!(r.end, End::Completed("done".to_string()), "{}", r.shown);
    assert_eq!(r.requests.len(), 4);
}

/// Cline's `ApplyPatchHandler` resets the mistake count before trying and throws its failures,
/// which `ToolExecutor` reports without counting a mistake or detecting a loop.
#[test]
fn failed_patches_count_no_mistake_and_no_repeated_call() {
    let s = Setup { max_mistakes: 2, native: true, ..Setup::new() };
    let patch = || native_reply(&[("toolu_p", "apply_patch", r#"{"input":"*** Update File: nope.txt\n-x\n+y"}"#)]);
    let r = run(&s, vec![patch(), patch(), patch(), native_reply(NATIVE_DONE)], None);
    assert_eq!(r.end, End::Completed("done".to_string()), "{}", r.shown);
    assert_eq!(r.requests.len(), 4);
    let third = answers(&r, 4);
    let answer = third[0].1.as_deref().unwrap();
    assert!(answer.contains("Error executing apply_patch: File not found: nope.txt"), "{answer}");
    assert!(!r.user(4).contains("has been called 3 times"), "{}", r.user(4));
}

/// A thrown failure's `task_progress` is not taken, as Cline's ToolExecutor takes the list only
/// after the handler returns: a failed patch's list ticked what had failed. A failure that is
/// the tool's answer (a missing file for read_file) still gives its list.
#[test]
fn a_failed_patch_s_task_progress_is_not_the_checklist() {
    let s = Setup { native: true, ..Setup::new() };
    let patch = r#"{"input":"*** Update File: nope.txt\n-x\n+y","task_progress":"- [x] Patch\n- [ ] Test"}"#;
    let read = r#"{"path":"nope.txt","task_progress":"- [ ] Patch\n- [ ] Test"}"#;
    let r = run(
        &s,
        vec![
            native_reply(&[("toolu_p", "apply_patch", patch)]),
            native_reply(&[("toolu_r", "read_file", read)]),
            native_reply(NATIVE_DONE),
        ],
        None,
    );
    assert_eq!(r.end, End::Completed("done".to_string()), "{}", r.shown);
    let lists: Vec<_> = r.events_of("task_progress").iter().map(|e| e["list"].clone()).collect();
    assert_eq!(lists, ["- [ ] Patch\n- [ ] Test"], "{}", r.shown);
}

#[test]
fn a_repeated_read_does_not_reset_the_count() {
    // Cline's read handler returns a cached read (`[File already read]`) before its reset.
    let s = Setup { max_mistakes: 2, ..Setup::new() };
    std::fs::write(s.ws.path().join("f.txt"), "one\n").unwrap();
    let no_tool = || reply("Thinking.");
    let read_f = || reply("<read_file>\n<path>f.txt</path>\n</read_file>");
    let r = run(&s, vec![read_f(), no_tool(), read_f(), no_tool(), reply(DONE)], None);
    assert!(r.user(4).starts_with("[read_file for 'f.txt'] Result:\n[File already read]"), "{}", r.user(4));
    let End::Failed(why) = &r.end else { panic!("{:?}\n{}", r.end, r.shown) };
    assert!(why.contains("2 mistakes in a row"), "{why}");
    assert_eq!(r.requests.len(), 4, "no request after the second mistake");
}

#[test]
fn a_reply_cut_at_the_token_limit_inside_a_tool_call_never_runs_it() {
    let s = Setup::new();
    let cut = "<write_to_file>\n<path>a.txt</path>\n<content>\nhalf of the fi";
    let r = run(&s, vec![reply_stopped(cut, StopReason::MaxTokens), reply(DONE)], None);
    assert_eq!(r.end, End::Completed("done".to_string()), "{}", r.shown);
    assert_eq!(read(s.ws.path(), "a.txt"), None, "a cut tool call is never executed");
    assert!(r.user(2).starts_with(&prompt::truncated_tool("write_to_file", true)), "{}", r.user(2));
    assert!(r.shown.contains("cut at the output token limit"), "{}", r.shown);
    assert!(r.events_of("tool_result").iter().all(|e| e["tool"] != "write_to_file"));
}

#[test]
fn a_reply_cut_at_the_token_limit_before_any_tool_is_answered_with_cline_s_text() {
    let s = Setup::new();
    let r = run(&s, vec![reply_stopped("Let me explain at length", StopReason::MaxTokens), reply(DONE)], None);
    assert_eq!(r.end, End::Completed("done".to_string()));
    assert!(r.user(2).starts_with(&prompt::truncated_text()), "{}", r.user(2));
}

#[test]
fn a_timeout_while_a_reply_streams_cancels_the_task_without_running_the_reply() {
    let timeout = Duration::from_millis(100);
    let s = Setup { timeout: Some(timeout), ..Setup::new() };
    // The reply comes a whole timeout after its request, which the run sent after its clock
    // started: the deadline has passed when it comes.
    let write = "<write_to_file>\n<path>late.txt</path>\n<content>\nx\n</content>\n</write_to_file>";
    let Step::Reply(deltas) = reply(write) else { unreachable!() };
    let r = run(&s, vec![Step::After(timeout, deltas), reply(DONE)], None);
    let End::Failed(why) = &r.end else { panic!("{:?}", r.end) };
    assert!(why.contains("time limit was reached"), "{why}");
    assert_eq!(read(s.ws.path(), "late.txt"), None, "a reply that arrived after the deadline is not acted on");
    assert_eq!(r.requests.len(), 1);
    let errors = r.events_of("error");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["limit"], "timeout");
    // Saved as failed, with the unanswered message kept for `resume`.
    let saved = s.store().load(&r.id).unwrap();
    assert_eq!(saved.status, "failed");
    assert!(saved.pending.as_deref().is_some_and(|p| p.contains("make the files")), "{:?}", saved.pending);
}

#[test]
fn a_saved_task_resumes_where_it_stopped() {
    let s = Setup::new();
    let list = "<list_files>\n<path>.</path>\n</list_files>";
    std::fs::write(s.ws.path().join("seen.txt"), "x").unwrap();
    let first = run(&s, vec![reply(list), Step::Fail(ApiError::fatal("the server went away"))], None);
    let End::Failed(why) = &first.end else { panic!("{:?}", first.end) };
    assert!(why.contains("the server went away"), "{why}");
    let record = s.store().load(&first.id).unwrap();
    assert_eq!(record.turns, 2);

    let again = run(&s, vec![reply(DONE)], Some(record));
    assert_eq!(again.end, End::Completed("done".to_string()), "{}", again.shown);
    assert_eq!(again.requests.len(), 1);
    let sent = &again.requests[0];
    // The earlier conversation, then one user message: the unanswered result and Cline's notice.
    assert!(sent[0].content.starts_with("<task>\nmake the files\n</task>"), "{}", sent[0].content);
    assert_eq!(sent[1].role, Role::Assistant);
    assert!(sent[1].content.contains("<list_files>"));
    let last = again.user(1);
    assert!(last.starts_with("[list_files for '.'] Result:"), "{last}");
    assert!(last.contains("seen.txt"), "{last}");
    assert!(last.contains("[TASK RESUMPTION]"), "{last}");
    assert_eq!(last.matches("[TASK RESUMPTION]").count(), 1);
    assert_eq!(again.events[0]["type"], "task_started");
    assert_eq!(again.events[0]["resumed"], true);
    let done = s.store().load(&first.id).unwrap();
    assert_eq!(done.status, "completed");
    assert_eq!(done.turns, 3, "requests of both runs");
}

/// A message taken up again carries no reminder of the focus chain from its first sending
/// (checkpoint restore copies a user message into `pending`): the request adds its own, once.
#[test]
fn a_resumed_message_has_one_focus_chain_reminder() {
    let s = Setup::new();
    let list = "<list_files>\n<path>.</path>\n</list_files>";
    let first = run(&s, vec![reply(list), Step::Fail(ApiError::fatal("the server went away"))], None);
    let mut record = s.store().load(&first.id).unwrap();
    // The unanswered message as it was sent, reminder and all, as the pending one.
    let sent = first.user(2).to_string();
    assert_eq!(sent.matches("# task_progress RECOMMENDED").count(), 1, "{sent}");
    record.pending = Some(sent);
    let again = run(&s, vec![reply(DONE)], Some(record));
    assert_eq!(again.end, End::Completed("done".to_string()), "{}", again.shown);
    let last = again.user(1);
    assert_eq!(last.matches("# task_progress RECOMMENDED").count(), 1, "{last}");
    assert!(last.find("# task_progress RECOMMENDED") > last.find("[TASK RESUMPTION]"), "{last}");
}

/// A task read before this process held it (`resume` reads it, then the run takes it) is read
/// again: a process that held it in between may have saved more turns, which a resume from the
/// first reading would save over.
#[test]
fn a_resume_goes_on_from_the_task_as_saved_when_it_is_taken_not_as_first_read() {
    let s = Setup::new();
    let list = "<list_files>\n<path>.</path>\n</list_files>";
    let first = run(&s, vec![reply(list), Step::Fail(ApiError::fatal("the server went away"))], None);
    assert!(matches!(first.end, End::Failed(_)), "{:?}", first.end);
    let stale = s.store().load(&first.id).unwrap();
    // Another process resumes it first and saves two more turns.
    let read = "<read_file>\n<path>seen.txt</path>\n</read_file>";
    std::fs::write(s.ws.path().join("seen.txt"), "x").unwrap();
    let other = run(&s, vec![reply(read), Step::Fail(ApiError::fatal("gone again"))], Some(stale.clone()));
    assert!(matches!(other.end, End::Failed(_)), "{:?}", other.end);
    let newer = s.store().load(&first.id).unwrap();
    assert!(newer.turns > stale.turns && newer.messages.len() > stale.messages.len());

    let again = run(&s, vec![reply(DONE)], Some(stale));
    assert_eq!(again.end, End::Completed("done".to_string()), "{}", again.shown);
    let sent = &again.requests[0];
    assert!(sent.iter().any(|m| m.content.contains("<read_file>")), "the other run's turns are kept: {sent:?}");
    assert_eq!(s.store().load(&first.id).unwrap().turns, newer.turns + 1);
}
