//! Test helpers: a scripted LLM server on 127.0.0.1 speaking the real Anthropic and OpenAI SSE
//! wire formats (split at awkward boundaries), and a runner for the built binary.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub mod events;
pub mod native;

/// The fake key used in tests; it must never show up on argv or in output.
pub const KEY: &str = "sk-test-SECRET-4f9c2b7e";

/// One scripted HTTP response.
#[derive(Clone)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Bytes per write (each write is flushed with TCP_NODELAY).
    pub chunk: usize,
    /// Pause before the body (to test the spinner / Ctrl-C) — or, with `stall_at`, after that
    /// many bytes of it (to stop a reply mid-stream).
    pub stall: Duration,
    /// Where in the body the stall happens (0: before it).
    pub stall_at: usize,
    /// Held before the body until the test opens it (see [`gated`]).
    pub gate: Option<Gate>,
}

/// A point a scripted response waits at until the test opens it: an event, not a time.
#[derive(Clone, Default)]
pub struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Gate {
    /// Lets the held response go on.
    pub fn open(&self) {
        *self.0 .0.lock().unwrap() = true;
        self.0 .1.notify_all();
    }

    fn wait(&self, stop: &AtomicBool) {
        let mut open = self.0 .0.lock().unwrap();
        while !*open && !stop.load(Ordering::Relaxed) {
            open = self.0 .1.wait_timeout(open, Duration::from_millis(50)).unwrap().0;
        }
    }
}

/// `resp` held before its body until the returned gate is opened.
pub fn gated(mut resp: Resp) -> (Resp, Gate) {
    let gate = Gate::default();
    resp.gate = Some(gate.clone());
    (resp, gate)
}

/// One request the server received.
#[derive(Clone, Debug)]
pub struct Req {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Req {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The content of the last message (the newest user message).
    pub fn last_user(&self) -> String {
        let msgs = self.body["messages"].as_array().expect("messages");
        text_of(&msgs.last().unwrap()["content"])
    }
}

/// A message's text: the string, or its blocks' texts (a message marked for prompt caching
/// goes as blocks) joined by blank lines.
pub fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            blocks.iter().filter_map(|b| b["text"].as_str().or(b["content"].as_str())).collect::<Vec<_>>().join("\n\n")
        }
        other => panic!("not a message's content: {other}"),
    }
}

/// A user message's text without the focus chain's reminder (Cline's `task_progress`
/// instructions, on by default, which the loop puts before `<environment_details>`): for the
/// tests about what else a message holds.
pub fn without_reminder(text: &str) -> String {
    let starts = ["\n\n\n# task_progress", "\n\n\n\n\t\t\t\t# TODO LIST UPDATE REQUIRED"];
    let Some(i) = starts.iter().filter_map(|s| text.rfind(s)).max() else { return text.to_string() };
    let end = text[i..].find("\n\n<environment_details>").map_or(text.len(), |j| i + j);
    format!("{}{}", &text[..i], &text[end..])
}

/// The requests received so far, and a signal for each new one.
type Received = Arc<(Mutex<Vec<Req>>, Condvar)>;

/// The scripted server.
pub struct Server {
    pub addr: SocketAddr,
    requests: Received,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Server {
    /// Serves `script` in order, one response per request; after it runs out, answers 500
    /// "script exhausted".
    pub fn start(script: Vec<Resp>) -> Server {
        Server::start_answering_models(script, None)
    }

    /// [`Server::start`], answering `GET /v1/models` with `models` (as llama-cpp-python does:
    /// agent-min asks a local server this to know whether it takes only string contents).
    pub fn start_answering_models(script: Vec<Resp>, models: Option<Value>) -> Server {
        Server::start_with(script, models, false)
    }

    /// [`Server::start`] as a server whose model takes no images (llama-server without
    /// `--mmproj`): a request holding an image is refused with llama.cpp's error, without
    /// using up the script.
    #[cfg_attr(not(feature = "documents"), allow(dead_code))] // its tests read images
    pub fn start_text_only(script: Vec<Resp>) -> Server {
        Server::start_with(script, None, true)
    }

    fn start_with(script: Vec<Resp>, models: Option<Value>, text_only: bool) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let requests: Received = Arc::new((Mutex::new(Vec::new()), Condvar::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (reqs, flag) = (requests.clone(), stop.clone());
        let handle = std::thread::spawn(move || {
            let mut script: VecDeque<Resp> = script.into();
            let deadline = Instant::now() + Duration::from_secs(300);
            while !flag.load(Ordering::Relaxed) && Instant::now() < deadline {
                match listener.accept() {
                    Ok((stream, _)) => {
                        serve(stream, &mut script, &reqs, &flag, models.as_ref(), text_only);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(2))
                    }
                    Err(_) => break,
                }
            }
        });
        Server { addr, requests, stop, handle: Some(handle) }
    }

    pub fn requests(&self) -> Vec<Req> {
        self.requests.0.lock().unwrap().clone()
    }

    /// Waits until `n` requests have come (woken by each one); panics after `limit`.
    pub fn wait_for_requests(&self, n: usize, limit: Duration) {
        let (list, came) = &*self.requests;
        let (got, timeout) = came.wait_timeout_while(list.lock().unwrap(), limit, |r| r.len() < n).unwrap();
        assert!(!timeout.timed_out(), "{} of {n} requests came within {limit:?}", got.len());
    }

    pub fn anthropic_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn openai_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The questions agent-min asks a local OpenAI-compatible server about itself (its context
/// window: llama-server's, LM Studio's, Ollama's questions; its model list): the scripted server,
/// like the real APIs it stands for, does not know them (404, unless it was given a model list)
/// and answers them without using up its script.
fn window_question(method: &str, path: &str) -> bool {
    (method == "GET" && (path.ends_with("/props") || path.ends_with("/api/v0/models") || path.ends_with("/v1/models")))
        || (method == "POST" && path.ends_with("/api/show"))
}

/// Whether a request body holds an image in any wire's shape (`image_url`, `input_image`, an
/// Anthropic `image` block, Ollama's `images`).
fn has_image(body: &Value) -> bool {
    match body {
        Value::Object(o) => {
            matches!(o.get("type").and_then(Value::as_str), Some("image_url" | "input_image" | "image"))
                || o.get("images").and_then(Value::as_array).is_some_and(|a| !a.is_empty())
                || o.values().any(has_image)
        }
        Value::Array(a) => a.iter().any(has_image),
        _ => false,
    }
}

fn serve(
    stream: TcpStream,
    script: &mut VecDeque<Resp>,
    reqs: &(Mutex<Vec<Req>>, Condvar),
    stop: &AtomicBool,
    models: Option<&Value>,
    text_only: bool,
) -> Option<()> {
    stream.set_nonblocking(false).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    stream.set_nodelay(true).ok()?;
    let mut r = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    r.read_line(&mut line).ok()?;
    let method = line.split_whitespace().next()?.to_string();
    let path = line.split_whitespace().nth(1)?.to_string();
    let not_found = match models {
        Some(list) if method == "GET" && path == "/v1/models" => status(200, list.clone()),
        _ => status(404, json!({"error": {"code": 404, "message": "Not Found"}})),
    };
    let scripted = if window_question(&method, &path) {
        None
    } else {
        Some(
            script
                .pop_front()
                .unwrap_or_else(|| status(500, json!({"error": {"type": "api_error", "message": "script exhausted"}}))),
        )
    };
    let resp = scripted.as_ref().unwrap_or(&not_found);
    let mut headers = Vec::new();
    let mut len = 0usize;
    loop {
        line.clear();
        r.read_line(&mut line).ok()?;
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (n, v) = l.split_once(':')?;
        let (n, v) = (n.trim().to_string(), v.trim().to_string());
        if n.eq_ignore_ascii_case("content-length") {
            len = v.parse().ok()?;
        }
        headers.push((n, v));
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).ok()?;
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    // Like the real APIs, refuse a history whose tool calls and results do not pair up.
    // (Checked by route: Azure's carry their `api-version` in the query.)
    let route = path.split('?').next().unwrap_or("");
    let mut refusal = native::check(route, &body).map(|e| status(400, e));
    if text_only && refusal.is_none() && has_image(&body) {
        // llama.cpp's server without a multimodal projector (its words and status).
        let e = "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj";
        refusal = Some(status(500, json!({"error": {"code": 500, "message": e, "type": "server_error"}})));
        if let Some(s) = scripted.clone() {
            script.push_front(s);
        }
    }
    let resp = refusal.as_ref().unwrap_or(resp);
    if scripted.is_some() {
        reqs.0.lock().unwrap().push(Req { path, headers, body });
        reqs.1.notify_all();
    }
    let mut w = stream;
    let mut head = format!("HTTP/1.1 {} Scripted\r\nConnection: close\r\n", resp.status);
    for (n, v) in &resp.headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = w.write_all(head.as_bytes());
    let _ = w.flush();
    if let Some(g) = &resp.gate {
        g.wait(stop);
    }
    let at = resp.stall_at.min(resp.body.len());
    let (before, after) = resp.body.split_at(at);
    let mut ok = true;
    for c in before.chunks(resp.chunk.max(1)) {
        if w.write_all(c).and_then(|_| w.flush()).is_err() {
            ok = false;
            break;
        }
    }
    let until = Instant::now() + resp.stall;
    // A stall ends early when the client hangs up, as a real server notices.
    let _ = w.set_nonblocking(true);
    while ok && Instant::now() < until && !stop.load(Ordering::Relaxed) {
        if matches!(w.peek(&mut [0u8; 1]), Ok(0)) {
            ok = false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = w.set_nonblocking(false);
    for c in after.chunks(resp.chunk.max(1)) {
        if !ok || w.write_all(c).and_then(|_| w.flush()).is_err() {
            break;
        }
    }
    let _ = w.shutdown(std::net::Shutdown::Both);
    Some(())
}

/// Splits `s` into pieces of `n` characters (so deltas cut through tags).
pub fn pieces(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars.chunks(n.max(1)).map(|c| c.iter().collect()).collect()
}

pub(crate) fn sse(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(e) => format!("event: {e}\r\ndata: {data}\r\n\r\n"),
        None => format!("data: {data}\n\n"),
    }
}

/// An Anthropic Messages stream of `text` in deltas of `delta` characters.
pub fn anthropic_body(text: &str, delta: usize, stop_reason: &str) -> String {
    anthropic_body_usage(text, delta, stop_reason, 100, 7)
}

/// [`anthropic_body`] reporting `input` prompt tokens and `cache_read` cached ones.
pub fn anthropic_body_usage(text: &str, delta: usize, stop_reason: &str, input: u64, cache_read: u64) -> String {
    let mut b = String::new();
    b.push_str(&sse(
        Some("message_start"),
        &json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"usage":{"input_tokens":input,"output_tokens":1,"cache_read_input_tokens":cache_read}}}),
    ));
    b.push_str(&sse(
        Some("content_block_start"),
        &json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
    ));
    b.push_str(&sse(Some("ping"), &json!({"type":"ping"})));
    for p in pieces(text, delta) {
        b.push_str(&sse(
            Some("content_block_delta"),
            &json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":p}}),
        ));
    }
    b.push_str(&sse(Some("content_block_stop"), &json!({"type":"content_block_stop","index":0})));
    b.push_str(&sse(
        Some("message_delta"),
        &json!({"type":"message_delta","delta":{"stop_reason":stop_reason,"stop_sequence":null},"usage":{"output_tokens":42}}),
    ));
    b.push_str(&sse(Some("message_stop"), &json!({"type":"message_stop"})));
    b
}

/// A 200 Anthropic SSE response; deltas of 5 characters, written 7 bytes at a time.
pub fn anthropic(text: &str) -> Resp {
    anthropic_with(text, 5, "end_turn")
}

pub fn anthropic_with(text: &str, delta: usize, stop_reason: &str) -> Resp {
    Resp {
        status: 200,
        headers: vec![("Content-Type".into(), "text/event-stream".into())],
        body: anthropic_body(text, delta, stop_reason).into_bytes(),
        chunk: 7,
        stall: Duration::ZERO,
        stall_at: 0,
        gate: None,
    }
}

/// A 200 Anthropic SSE response whose usage reports `input` prompt tokens (no cache).
pub fn anthropic_usage(text: &str, input: u64) -> Resp {
    Resp { body: anthropic_body_usage(text, 5, "end_turn", input, 0).into_bytes(), ..anthropic("") }
}

/// An OpenAI Chat Completions stream (with an OpenRouter-style comment line and a usage chunk).
pub fn openai_with(text: &str, delta: usize, finish: &str) -> Resp {
    let mut b = String::from(": OPENROUTER PROCESSING\n\n");
    b.push_str(&sse(None, &json!({"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]})));
    for p in pieces(text, delta) {
        b.push_str(&sse(None, &json!({"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":p},"finish_reason":null}]})));
    }
    b.push_str(&sse(
        None,
        &json!({"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":finish}]}),
    ));
    b.push_str(&sse(None, &json!({"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":9,"total_tokens":59}})));
    b.push_str("data: [DONE]\n\n");
    Resp {
        status: 200,
        headers: vec![("Content-Type".into(), "text/event-stream".into())],
        body: b.into_bytes(),
        chunk: 7,
        stall: Duration::ZERO,
        stall_at: 0,
        gate: None,
    }
}

pub fn openai(text: &str) -> Resp {
    openai_with(text, 5, "stop")
}

/// A non-200 JSON response.
pub fn status(code: u16, body: Value) -> Resp {
    Resp {
        status: code,
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: body.to_string().into_bytes(),
        chunk: 4096,
        stall: Duration::ZERO,
        stall_at: 0,
        gate: None,
    }
}

/// A tool call in Cline's XML.
pub fn tool(name: &str, params: &[(&str, &str)]) -> String {
    let mut s = format!("<{name}>\n");
    for (k, v) in params {
        s.push_str(&format!("<{k}>{v}</{k}>\n"));
    }
    s.push_str(&format!("</{name}>"));
    s
}

pub fn completion(result: &str) -> String {
    format!("All done.\n{}", tool("attempt_completion", &[("result", result)]))
}

/// Result of running the binary.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn all(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

/// The binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_agent-min"))
}

/// Runs `agent-min run ARGS` in `cwd` with a clean, key-bearing environment; kills it after
/// `limit`.
pub fn run_agent(cwd: &Path, args: &[&str], envs: &[(&str, &str)], limit: Duration) -> Run {
    run_cmd("run", cwd, args, envs, limit)
}

/// Runs `agent-min SUB ARGS` like [`run_agent`]. Saved tasks go to a temporary
/// `XDG_STATE_HOME` (removed afterwards) unless `--state-dir` or `envs` say otherwise. The agent
/// runs in a session of its own (util-linux `setsid`), without a controlling terminal, as in
/// CI: nobody can answer a question, whatever terminal the tests were started from.
pub fn run_cmd(sub: &str, cwd: &Path, args: &[&str], envs: &[(&str, &str)], limit: Duration) -> Run {
    let state = tempfile::tempdir().unwrap();
    let child = agent_cmd(sub, cwd, args, envs, state.path()).stdin(Stdio::null()).spawn().expect("spawn agent-min");
    wait_limited(child, limit)
}

/// util-linux `setsid`, found on the tests' own `PATH` (a test may give the agent another).
pub fn setsid() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("setsid"))
        .find(|p| p.is_file())
        .expect("util-linux `setsid` is needed by the tests (apt-get install util-linux)")
}

/// `agent-min SUB ARGS` in `cwd`, without a controlling terminal, with a clean key-bearing
/// environment, `XDG_STATE_HOME` and `XDG_CONFIG_HOME` under `state` (unless `envs` set them),
/// stdout and stderr piped; stdin is the caller's to set.
pub fn agent_cmd(sub: &str, cwd: &Path, args: &[&str], envs: &[(&str, &str)], state: &Path) -> Command {
    let mut cmd = Command::new(setsid());
    cmd.arg(bin()).arg(sub).args(args).current_dir(cwd);
    agent_env(&mut cmd, state).stdout(Stdio::piped()).stderr(Stdio::piped());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd
}

/// The tests' environment for agent-min (or a program that starts it): `XDG_STATE_HOME`,
/// `XDG_CONFIG_HOME` and Cline's home folder (`CLINE_DIR`: the Cline CLI's rules, workflows and
/// MCP servers) under `state`, the test key, no other provider's key or base URL, no colour.
pub fn agent_env<'a>(cmd: &'a mut Command, state: &Path) -> &'a mut Command {
    cmd.env("XDG_STATE_HOME", state)
        .env("XDG_CONFIG_HOME", state.join("config"))
        .env("CLINE_DIR", state.join("cline"))
        .env_remove("CLINE_DATA_DIR")
        .env_remove("CLINE_MCP_SETTINGS_PATH")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENROUTER_API_KEY")
        .env_remove("OLLAMA_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_BASE_URL")
        .env("ANTHROPIC_API_KEY", KEY)
        .env("NO_COLOR", "1")
}

/// Waits for `child` as [`wait_exit`] does, with its stdout and stderr.
pub fn wait_limited(mut child: Child, limit: Duration) -> Run {
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t1 = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t2 = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = wait_exit(&mut child, limit);
    Run { code: status.code(), stdout: t1.join().unwrap(), stderr: t2.join().unwrap() }
}

/// Waits for `child` to exit; kills it and panics after `limit`. Its output is the caller's to
/// read (on other threads: a full pipe would stop it).
pub fn wait_exit(child: &mut Child, limit: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("agent-min did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Ctrl-C, as a terminal sends it: SIGINT to `child`.
pub fn ctrl_c(child: &Child) {
    let sent = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sent.success(), "kill -INT {}", child.id());
}

/// What the agent prints when it waits for a person's answer.
const QUESTIONS: [&str; 4] = [" — approve? [", "Your answer: ", "Guidance for the model", "? [y]es / [N]o: "];

/// Runs `agent-min run ARGS` in `cwd` as a person at a terminal would: standard input is a
/// pseudo-terminal, and each line of `input` is typed when the next question appears (never
/// ahead of it); after the last one the terminal is closed (end of input). stdout and stderr
/// stay separate pipes.
pub fn run_interactive(cwd: &Path, args: &[&str], input: &[u8], limit: Duration) -> Run {
    run_interactive_env(cwd, args, &[], input, limit)
}

/// A pseudo-terminal: (the end a person types into, the end a program reads as its terminal).
pub fn pty() -> (std::fs::File, std::fs::File) {
    use rustix::pty::{grantpt, openpt, ptsname, unlockpt, OpenptFlags};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).expect("a pseudo-terminal");
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(Path::new(std::ffi::OsStr::from_bytes(name.as_bytes())))
        .expect("the terminal's other end");
    (std::fs::File::from(master), slave)
}

/// [`run_interactive`] with more environment variables.
pub fn run_interactive_env(cwd: &Path, args: &[&str], envs: &[(&str, &str)], input: &[u8], limit: Duration) -> Run {
    let state = tempfile::tempdir().unwrap();
    type_answers(agent_cmd("run", cwd, args, envs, state.path()), input, limit)
}

/// Runs `cmd` (stdout and stderr piped) with a pseudo-terminal as standard input, typing each
/// line of `input` when the next question appears, as [`run_interactive`] does.
pub fn type_answers(mut cmd: Command, input: &[u8], limit: Duration) -> Run {
    let (master, slave) = pty();
    let mut child = cmd.stdin(Stdio::from(slave)).spawn().expect("spawn agent-min");
    let (out, err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let seen = Arc::new(Mutex::new(String::new()));
    let readers = [Box::new(out) as Box<dyn Read + Send>, Box::new(err)].map(|mut r| {
        let seen = seen.clone();
        std::thread::spawn(move || {
            let (mut mine, mut buf) = (Vec::new(), [0u8; 4096]);
            while let Ok(n) = r.read(&mut buf) {
                if n == 0 {
                    break;
                }
                mine.extend_from_slice(&buf[..n]);
                seen.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
            String::from_utf8_lossy(&mine).into_owned()
        })
    });
    let asked = || {
        let s = seen.lock().unwrap();
        QUESTIONS.iter().map(|q| s.matches(q).count()).sum::<usize>()
    };
    let start = Instant::now();
    let mut master = master;
    let mut status = None;
    for (typed, line) in input.split_inclusive(|&b| b == b'\n').enumerate() {
        // Wait for question number `typed + 1`, or for the end of the run.
        while asked() <= typed && status.is_none() {
            status = child.try_wait().unwrap();
            assert!(start.elapsed() < limit, "agent-min did not ask question {} within {limit:?}", typed + 1);
            std::thread::sleep(Duration::from_millis(5));
        }
        if status.is_some() {
            break;
        }
        master.write_all(line).expect("type the answer");
    }
    // The terminal stays open while the last answer is read (closing it would drop what is not
    // read yet); a question beyond the answers given gets the end of input.
    let typed = input.split_inclusive(|&b| b == b'\n').count();
    let mut master = Some(master);
    let status = match status {
        Some(s) => s,
        None => loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            if master.is_some() && asked() > typed {
                master = None; // end of input
            }
            if start.elapsed() > limit {
                let _ = child.kill();
                let _ = child.wait();
                panic!("agent-min did not finish within {limit:?}");
            }
            std::thread::sleep(Duration::from_millis(10));
        },
    };
    drop(master);
    let [out, err] = readers.map(|t| t.join().unwrap());
    Run { code: status.code(), stdout: out, stderr: err }
}

/// Base arguments followed by test-specific ones.
pub fn args_with<'a>(base: &'a [String], extra: &[&'a str]) -> Vec<&'a str> {
    base.iter().map(String::as_str).chain(extra.iter().copied()).collect()
}

/// Standard flags for a scripted run against `server`.
pub fn anthropic_args(server: &Server) -> Vec<String> {
    vec![
        "--provider".into(),
        "anthropic".into(),
        "--base-url".into(),
        server.anthropic_url(),
        "--model".into(),
        "claude-test".into(),
        "--retry-delay".into(),
        "0.05".into(),
        "--yolo".into(),
    ]
}

pub fn openai_args(server: &Server) -> Vec<String> {
    vec![
        "--provider".into(),
        "openai".into(),
        "--base-url".into(),
        server.openai_url(),
        "--model".into(),
        "gpt-test".into(),
        "--retry-delay".into(),
        "0.05".into(),
        "--yolo".into(),
    ]
}

/// Runs `git ARGS` in `dir`, which must succeed, without the person's or the system's git
/// configuration (a committer named, no signing).
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=T", "-c", "user.email=t@e", "-c", "commit.gpgSign=false"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}
