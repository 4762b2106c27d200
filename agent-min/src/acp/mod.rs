//! `agent-min acp`: the agent inside editors, over the Agent Client Protocol (v1) on stdin and
//! stdout — newline-delimited JSON-RPC 2.0, nothing else on stdout, the log on stderr.
//!
//! The protocol's messages are the official serde types (`agent-client-protocol-schema`). The
//! async `agent-client-protocol` crate is not used: its connection needs an async runtime and
//! `!Send` futures, and the Task loop is blocking and runs on the main thread; a reader thread
//! (`wire`) is all the concurrency the protocol needs here (`session/cancel` and permission
//! answers arriving during a turn).
//!
//! Each session is one [`Task`] set up from the run options as `run` sets one up, in the
//! session's `cwd`, with the client's MCP servers; each `session/prompt` runs the same loop
//! (`Task::converse`) through two ports: its events are tapped into `session/update`
//! notifications (`updates`), and its approvals are answered by the client through
//! `session/request_permission` (`approvals`) exactly where the terminal would ask. When the
//! client offers its file system, the file tools read and write text files through it (the
//! editor's buffers, `buffers`); otherwise on disk.

mod approvals;
mod buffers;
mod history;
mod updates;
mod wire;

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol_schema::v1::{
    AgentCapabilities, CloseSessionRequest, CloseSessionResponse, ContentBlock, EmbeddedResourceResource, Error,
    FileSystemCapabilities, Implementation, InitializeRequest, InitializeResponse, LoadSessionRequest,
    LoadSessionResponse, McpCapabilities, McpServer, NewSessionRequest, NewSessionResponse, PromptCapabilities,
    PromptRequest, PromptResponse, SessionCapabilities, SessionCloseCapabilities, SessionUpdate, StopReason,
};
use agent_client_protocol_schema::ProtocolVersion;
use serde_json::Value;

use crate::run::mcp::config::{Kind, ServerConfig};
use crate::run::session::state::Record;
use crate::run::task::{End, Task};
use crate::run::tools::mentions;
use crate::run::ui::term::Term;
use crate::run::{cli, session_task, SessionSetup};
use wire::{Incoming, Wire};

fn help() -> &'static str {
    crate::run::texts::AGENT_MIN_ACP_TXT.get()
}

/// Entry point of `agent-min acp`.
pub fn main(args: Vec<OsString>) -> ExitCode {
    let opts = match cli::parse(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("agent-min acp: {e}");
            return ExitCode::from(2);
        }
    };
    if opts.help {
        print!("{}", help());
        return ExitCode::SUCCESS;
    }
    if opts.task.is_some() || opts.replay.is_some() || opts.json {
        eprintln!("agent-min acp: the prompts come from the editor: give no task, --replay or --json");
        return ExitCode::from(2);
    }
    crate::run::ui::interrupt::install();
    // A prompt's time limit ends its turn, not the session's MCP servers.
    crate::run::ui::interrupt::keep_servers();
    let (wire, incoming) = Wire::start();
    let mut agent = Agent { opts, wire, sessions: HashMap::new(), fs: FileSystemCapabilities::default() };
    for message in incoming {
        agent.handle(message);
    }
    for (_, s) in agent.sessions.drain() {
        s.task.hang_up();
    }
    crate::run::sandbox::remove_private_tmp();
    ExitCode::SUCCESS
}

/// One session: its task and its cancel flag.
struct Live {
    task: Task,
    cancel: Arc<AtomicBool>,
    shared: Arc<Mutex<updates::Session>>,
}

struct Agent {
    opts: cli::Options,
    wire: Arc<Wire>,
    sessions: HashMap<String, Live>,
    /// What the client's file system offers (`initialize`): used where it does.
    fs: FileSystemCapabilities,
}

/// JSON-RPC's error codes.
const INVALID_PARAMS: i32 = -32602;
const METHOD_NOT_FOUND: i32 = -32601;
const INTERNAL_ERROR: i32 = -32603;

/// The error answering a request.
fn failure(code: i32, message: impl Into<String>) -> Error {
    Error::new(code, message)
}

/// The protocol's error for a session that is not there: `-32002` (resource not found), its id
/// as the error's data.
fn no_session(id: &str) -> Error {
    let mut e = Error::session_not_found(id.to_string());
    e.message = format!("no session {id}");
    e
}

impl Agent {
    fn handle(&mut self, m: Incoming) {
        let Some(id) = m.id.clone() else { return }; // notifications other than cancel: none we act on
        let result = match m.method.as_str() {
            "initialize" => self.initialize(m.params),
            // `authMethods` is empty: no method exists to authenticate with.
            "authenticate" => Err(failure(INVALID_PARAMS, "agent-min offers no authentication methods (authMethods is empty); the provider's key comes from the environment".to_string())),
            "session/new" => self.new_session(m.params),
            "session/load" => self.load_session(m.params),
            "session/prompt" => self.prompt(m.params, m.cancels_before),
            "session/close" => self.close_session(m.params),
            other => Err(failure(METHOD_NOT_FOUND, format!("Method not found: {other}"))),
        };
        match result {
            Ok(v) => self.wire.respond(&id, v),
            Err(e) => self.wire.fail(&id, &e),
        }
    }

    fn initialize(&mut self, params: Value) -> Result<Value, Error> {
        let req: InitializeRequest =
            serde_json::from_value(params).map_err(|e| failure(INVALID_PARAMS, format!("Invalid params: {e}")))?;
        self.fs = req.client_capabilities.fs;
        // Sessions can be loaded when they are saved.
        Ok(serde_json::to_value(initialize(!self.opts.no_save)).unwrap_or(Value::Null))
    }

    fn new_session(&mut self, params: Value) -> Result<Value, Error> {
        let req: NewSessionRequest =
            serde_json::from_value(params).map_err(|e| failure(INVALID_PARAMS, format!("Invalid params: {e}")))?;
        let id = self.open(req.cwd, &req.mcp_servers, None)?;
        Ok(serde_json::to_value(NewSessionResponse::new(id)).unwrap_or(Value::Null))
    }

    /// `session/close`: the session's turn was cancelled as the request was read (`wire`); now
    /// that it has ended, the session is dropped — its task let go (free for `resume`), its MCP
    /// servers stopped. A later request naming it finds no session.
    fn close_session(&mut self, params: Value) -> Result<Value, Error> {
        let req: CloseSessionRequest =
            serde_json::from_value(params).map_err(|e| failure(INVALID_PARAMS, format!("Invalid params: {e}")))?;
        if !self.close(&req.session_id.0) {
            return Err(no_session(&req.session_id.0));
        }
        Ok(serde_json::to_value(CloseSessionResponse::new()).unwrap_or(Value::Null))
    }

    /// Drops session `id`, if open: its task let go, its MCP servers stopped.
    fn close(&mut self, id: &str) -> bool {
        let Some(live) = self.sessions.remove(id) else { return false };
        self.wire.forget(id);
        live.task.hang_up();
        true
    }

    /// `session/load`: the saved task of that id (every session is saved as a task, under its
    /// id, as `run` saves one) is set up again in its workspace, its conversation is sent back
    /// as `session/update` notifications, and the next prompt continues it. A session open in
    /// this process is closed first and loaded from what it saved (after each turn), as an
    /// editor reopening a thread it still holds expects its history again.
    fn load_session(&mut self, params: Value) -> Result<Value, Error> {
        let req: LoadSessionRequest =
            serde_json::from_value(params).map_err(|e| failure(INVALID_PARAMS, format!("Invalid params: {e}")))?;
        let id = req.session_id.0.to_string();
        if !is_session_id(&id) {
            return Err(failure(INVALID_PARAMS, format!("{id:?} is not a session id")));
        }
        let store = crate::run::open_store(&self.opts, None).map_err(|e| failure(INTERNAL_ERROR, e))?;
        // A session is named exactly (the store also finds a task by a prefix of its id).
        if !store.path(&id).is_file() {
            return Err(no_session(&id));
        }
        let saved = store.load(&id).map_err(|e| failure(INTERNAL_ERROR, format!("cannot load session {id}: {e}")))?;
        if saved.meta.id != id {
            return Err(no_session(&id));
        }
        let (want, have) = (std::fs::canonicalize(&req.cwd).ok(), PathBuf::from(&saved.meta.cwd));
        if want.as_deref() != Some(have.as_path()) {
            let msg = format!("session {id} belongs to the workspace {}, not {}", have.display(), req.cwd.display());
            return Err(failure(INVALID_PARAMS, msg));
        }
        // What the client sent is checked before an open session is let go: a load refused for
        // it left the editor without the session it had.
        for s in &req.mcp_servers {
            server_config(s, &req.cwd).map_err(|e| failure(INVALID_PARAMS, e))?;
        }
        // The open session holds the task (its claim): let go before it is taken up again.
        self.close(&id);
        self.open(req.cwd, &req.mcp_servers, Some(saved))?;
        let live = &self.sessions[&id];
        let shared = live.shared.lock().unwrap_or_else(|e| e.into_inner());
        history::replay(&shared, live.task.messages(), live.task.unsent());
        drop(shared);
        Ok(serde_json::to_value(LoadSessionResponse::new()).unwrap_or(Value::Null))
    }

    /// Sets up a session's task in `cwd` with the client's MCP servers (a `saved` one taken
    /// up); returns the session's id, which is the task's.
    fn open(&mut self, cwd: PathBuf, servers: &[McpServer], saved: Option<Record>) -> Result<String, Error> {
        if !cwd.is_absolute() {
            return Err(failure(INVALID_PARAMS, format!("cwd must be an absolute path, got {}", cwd.display())));
        }
        // The client's mistake, not the agent's failure to set the session up.
        if !cwd.is_dir() {
            return Err(failure(INVALID_PARAMS, format!("cwd {} is not a directory", cwd.display())));
        }
        let config = |s: &McpServer| server_config(s, &cwd);
        let mcp = servers.iter().map(config).collect::<Result<Vec<_>, _>>().map_err(|e| failure(INVALID_PARAMS, e))?;
        let shared = Arc::new(Mutex::new(updates::Session::new(self.wire.clone(), cwd.clone())));
        let mut term = Term::stderr().answered_by(Box::new(approvals::Approvals::new(shared.clone())));
        if let Some(b) = buffers::EditorBuffers::offered(shared.clone(), &self.fs) {
            term = term.with_buffers(Box::new(b));
        }
        let events = crate::run::session::events::Events::tapped(updates::tap(shared.clone()));
        let setup = SessionSetup { cwd, mcp, term, events };
        let mut task = session_task(&self.opts, setup, saved.as_ref()).map_err(|e| failure(INTERNAL_ERROR, e))?;
        let id = task.id().to_string();
        let cancel = task.cancel_flag();
        if let Ok(mut s) = shared.lock() {
            s.id = id.clone();
            s.root = task.root().to_path_buf();
            s.cancel = cancel.clone();
        }
        if let Some(saved) = saved {
            task.restore(saved);
        }
        // The limits count from each prompt; a session waiting for one is not running out of time.
        task.between_prompts();
        self.wire.on_cancel(&id, cancel.clone());
        self.sessions.insert(id.clone(), Live { task, cancel, shared });
        Ok(id)
    }

    fn prompt(&mut self, params: Value, cancels_before: u64) -> Result<Value, Error> {
        let req: PromptRequest =
            serde_json::from_value(params).map_err(|e| failure(INVALID_PARAMS, format!("Invalid params: {e}")))?;
        let live = self.sessions.get_mut(&*req.session_id.0).ok_or_else(|| no_session(&req.session_id.0))?;
        let root = live.shared.lock().unwrap_or_else(|e| e.into_inner()).root.clone();
        let (text, attached) = prompt_text(&req.prompt, &root);
        if text.trim().is_empty() {
            // As Cline's `prompt`: nothing to say, no turn. Said, as the blocks left out are.
            let said = "agent-min reads a prompt's text, resource links and embedded text resources; this one had none, so nothing was sent to the model.";
            let s = live.shared.lock().unwrap_or_else(|e| e.into_inner());
            s.update(SessionUpdate::AgentMessageChunk(updates::chunk(said)));
            return Ok(serde_json::to_value(PromptResponse::new(StopReason::EndTurn)).unwrap_or(Value::Null));
        }
        if !self.wire.turn_starts(&req.session_id.0, cancels_before) {
            // The editor is gone (its input ended): a turn now would make model requests and
            // run commands nobody sees.
            return Ok(serde_json::to_value(PromptResponse::new(StopReason::Cancelled)).unwrap_or(Value::Null));
        }
        let end = live.task.converse(&text, &attached);
        self.wire.turn_ends();
        let cancelled = live.cancel.load(Ordering::SeqCst);
        // The calls announced and not run (the stream stopped, the reply was too long, the loop
        // stopped before them) are resolved before the prompt is answered, as the protocol asks.
        let why = if cancelled { "Not run: the turn was cancelled" } else { "Not run: the turn ended first" };
        live.shared.lock().unwrap_or_else(|e| e.into_inner()).fail_open(why);
        // A refusal rolled the conversation back: said so even if a cancel came after it.
        let refused = live.task.stopped_by() == Some(crate::run::task::REFUSAL);
        let stop = if cancelled && !refused {
            StopReason::Cancelled
        } else {
            if let End::Failed(why) | End::NeedsPerson(why) = &end {
                let s = live.shared.lock().unwrap_or_else(|e| e.into_inner());
                let text = format!("\n\nTask failed: {why}");
                s.update(SessionUpdate::AgentMessageChunk(updates::chunk(&text)));
            }
            stop_reason(live.task.stopped_by())
        };
        Ok(serde_json::to_value(PromptResponse::new(stop)).unwrap_or(Value::Null))
    }
}

/// The protocol's stop reason for what stopped a turn (Cline's `--acp` answers its
/// `max_iterations` with `max_turn_requests`); any other stop ends the turn.
fn stop_reason(stopped_by: Option<&str>) -> StopReason {
    match stopped_by {
        Some("max_turns") => StopReason::MaxTurnRequests,
        Some(crate::run::task::REFUSAL) => StopReason::Refusal,
        _ => StopReason::EndTurn,
    }
}

/// A session id as agent-min makes them (a saved task's id: letters, digits, `-`, `_`), so a
/// client's id never names a path outside the state directory.
fn is_session_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// What the agent says it is and can do: only what is true.
fn initialize(load_session: bool) -> InitializeResponse {
    // Embedded text resources are read into the task (`prompt_text`); images and audio are not.
    let caps = AgentCapabilities::new()
        .load_session(load_session)
        .prompt_capabilities(PromptCapabilities::new().embedded_context(true))
        .mcp_capabilities(McpCapabilities::new().http(true).sse(true))
        .session_capabilities(SessionCapabilities::new().close(SessionCloseCapabilities::new()));
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(caps)
        .agent_info(Implementation::new("agent-min", env!("CARGO_PKG_VERSION")))
}

/// A piece of a prompt's words, in the order of its blocks.
enum Piece {
    Text(String),
    /// A file of the workspace (its path from the root): its mention, `@/path`; whether its
    /// text was sent.
    Mention(String, bool),
    /// Something else sent: Cline's text for a mentioned file, with its name.
    Named(String),
    /// Something else linked: its name.
    Link(String),
}

/// A prompt's content as the task's words and the files sent with it, (name, text) — what
/// the words' mentions of them take (`Task::converse`). The blocks stay in order: an editor
/// splits one typed message around its mentions, so text blocks join as they are. A file of
/// the workspace `root` is its mention in place, `@/path` as the person would type it (an
/// embedded one's text is the editor's, maybe unsaved; a linked one's is read from disk); any
/// other resource is named in place with Cline's words for a mention (a file outside the
/// workspace by its absolute path, anything else by its URI), its text following the words. A
/// resource is parted by a space from text glued to it. Binary content is not read: Cline's
/// note for a binary file says so.
fn prompt_text(blocks: &[ContentBlock], root: &Path) -> (String, Vec<(String, String)>) {
    let mut pieces = Vec::new();
    let mut given = Vec::new();
    for b in blocks {
        let (uri, content) = match b {
            ContentBlock::Text(t) => {
                pieces.push(Piece::Text(t.text.clone()));
                continue;
            }
            ContentBlock::ResourceLink(l) => (l.uri.as_str(), None),
            ContentBlock::Resource(r) => match &r.resource {
                EmbeddedResourceResource::TextResourceContents(t) => (t.uri.as_str(), Some(t.text.clone())),
                EmbeddedResourceResource::BlobResourceContents(b) => {
                    (b.uri.as_str(), Some(mentions::BINARY_FILE.to_string()))
                }
                _ => continue,
            },
            _ => continue, // images and audio: not offered (`initialize`)
        };
        let (mut name, inside) = resource_name(uri, root);
        // A selection's text (Zed's `file:///p/a.rs#L2:3`) is those lines, not the file: named
        // with them, never as a mention of the whole file.
        let part = content.as_ref().and(selected_lines(uri));
        if let Some(lines) = &part {
            name = format!("{name} ({lines})");
        }
        pieces.push(match (inside && part.is_none(), &content) {
            (true, _) => Piece::Mention(name.clone(), content.is_some()),
            (false, Some(_)) => Piece::Named(name.clone()),
            (false, None) => Piece::Link(name.clone()),
        });
        given.extend(content.map(|c| (name, c)));
    }
    // From the end, so a mention is written as the text after it lets it be read back. A
    // resource is a word of its own: a space parts it from text glued to it (a typed mention
    // before it would take it in; a word after it, into its mention). The words after a piece
    // are kept as parts, last first, and joined once: only their head is ever looked at.
    let mut after: Vec<String> = Vec::new();
    let mut resource_after = false;
    for piece in pieces.into_iter().rev() {
        let resource = !matches!(piece, Piece::Text(_));
        if resource && head(&after).starts_with(|c: char| !c.is_whitespace() && !".,;:!?()".contains(c)) {
            after.push(" ".to_string());
        }
        let text = match piece {
            Piece::Text(t) if resource_after && t.ends_with(|c: char| !c.is_whitespace()) => format!("{t} "),
            Piece::Text(t) => t,
            Piece::Link(name) => name,
            Piece::Mention(rel, sent) => match mentions::mention_of(&rel, &head(&after)) {
                Some(mention) => mention,
                // Not to be written as a mention there (a quote and a space in its path):
                // named as a mention would be, its text following; a link, by its path.
                None if sent => mentions::file_words(&rel),
                None => rel,
            },
            Piece::Named(name) => mentions::file_words(&name),
        };
        after.push(text);
        resource_after = resource;
    }
    after.reverse();
    (after.concat(), given)
}

/// The head of the words whose parts are `after` (last first) that decides how a mention
/// before them reads ([`mentions::mention_of`]): up to their first character that is not
/// `.,;:!?()`. Only a resource reads it, and the parts after one up to the next resource or
/// other word, so a prompt of many blocks is read in linear time.
fn head(after: &[String]) -> String {
    let mut head = String::new();
    for c in after.iter().rev().flat_map(|part| part.chars()) {
        head.push(c);
        if !".,;:!?()".contains(c) {
            break;
        }
    }
    head
}

/// The lines a URI's fragment names (Zed's selections: `#L10:20`, also `#L10-20` and `#L10`),
/// as words: `lines 10-20`, `line 10`.
fn selected_lines(uri: &str) -> Option<String> {
    let lines = uri.rsplit_once('#')?.1.strip_prefix('L')?;
    let number = |s: &str| (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.to_string());
    match lines.split_once([':', '-']) {
        Some((a, b)) => {
            let (a, b) = (number(a)?, number(b.trim_start_matches('L'))?);
            Some(if a == b { format!("line {a}") } else { format!("lines {a}-{b}") })
        }
        None => number(lines).map(|a| format!("line {a}")),
    }
}

/// How a prompt names the resource at `uri`: a file of the workspace `root` by its path from
/// the root (`true`), another file by its absolute path, anything else by its URI.
fn resource_name(uri: &str, root: &Path) -> (String, bool) {
    // A query and a fragment are no part of the path: Zed names a selection
    // `file:///p/a.rs#L10:20` and a symbol `…?symbol=f#L1:5` (a `#` or `?` in a file's name is
    // written `%23`, `%3F`).
    let path = uri.strip_prefix("file://").and_then(|p| {
        let p = p.split(['?', '#']).next().unwrap_or(p);
        crate::run::json_schema::percent_decode(p.strip_prefix("localhost").unwrap_or(p))
    });
    let Some(path) = path.map(PathBuf::from).filter(|p| p.is_absolute()) else { return (uri.to_string(), false) };
    // The root is canonical; the editor's path may go through a link to it.
    let rel = |p: &Path| {
        let r = p.strip_prefix(root).ok()?;
        let plain = r.components().all(|c| matches!(c, std::path::Component::Normal(_)));
        (plain && !r.as_os_str().is_empty()).then(|| r.to_string_lossy().into_owned())
    };
    let canonical = || std::fs::canonicalize(&path).ok();
    match rel(&path).or_else(|| canonical().as_deref().and_then(rel)) {
        Some(rel) => (rel, true),
        None => (path.display().to_string(), false),
    }
}

/// A client's MCP server as the settings files' servers are: stdio, streamable HTTP or SSE. A
/// stdio server starts in the session's `cwd` (the protocol's "working directory for this
/// session"), where `server-filesystem .` means the workspace, not where the editor started
/// the agent.
fn server_config(s: &McpServer, cwd: &std::path::Path) -> Result<ServerConfig, String> {
    let (name, kind) = match s {
        McpServer::Stdio(s) => (
            s.name.clone(),
            Kind::Stdio {
                command: s.command.display().to_string(),
                args: s.args.clone(),
                env: s.env.iter().map(|e| (e.name.clone(), e.value.clone())).collect(),
                cwd: Some(cwd.to_path_buf()),
            },
        ),
        McpServer::Http(h) => (
            h.name.clone(),
            Kind::Http {
                url: h.url.clone(),
                headers: h.headers.iter().map(|h| (h.name.clone(), h.value.clone())).collect(),
                sse: false,
            },
        ),
        McpServer::Sse(h) => (
            h.name.clone(),
            Kind::Http {
                url: h.url.clone(),
                headers: h.headers.iter().map(|h| (h.name.clone(), h.value.clone())).collect(),
                sse: true,
            },
        ),
        _ => return Err("only stdio, HTTP and SSE MCP servers are supported (not ACP transport)".to_string()),
    };
    if let Kind::Http { url, .. } = &kind {
        if !(url.starts_with("http://") || url.starts_with("https://")) || url.contains(char::is_whitespace) {
            return Err(format!("MCP server {name:?}: its URL must be http:// or https://, got {url:?}"));
        }
    }
    let written = match &kind {
        Kind::Stdio { command, args, .. } if args.is_empty() => command.clone(),
        Kind::Stdio { command, args, .. } => format!("{command} {}", args.join(" ")),
        Kind::Http { url, .. } => url.clone(),
    };
    Ok(ServerConfig {
        name,
        written,
        file: PathBuf::from("the ACP client's session/new"),
        kind,
        disabled: false,
        auto_approve: Vec::new(),
        auto_approve_ignored: Vec::new(),
        timeout: Duration::from_secs(60),
        startup_timeout: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_editor_s_mcp_servers_are_stdio_http_or_sse_at_an_http_url() {
        use agent_client_protocol_schema::v1::{McpServerHttp, McpServerSse};
        let w = std::path::Path::new("/w");
        let sse = server_config(&McpServer::Sse(McpServerSse::new("s", "http://127.0.0.1:1/sse")), w).unwrap();
        assert!(matches!(sse.kind, Kind::Http { sse: true, .. }));
        let http = server_config(&McpServer::Http(McpServerHttp::new("h", "https://h/mcp")), w).unwrap();
        assert!(matches!(http.kind, Kind::Http { sse: false, .. }));
        for bad in ["file:///etc/passwd", "http://h/a b", "ftp://h/"] {
            let e = server_config(&McpServer::Sse(McpServerSse::new("s", bad)), w).unwrap_err();
            assert!(e.contains("must be http:// or https://"), "{e}");
        }
    }

    #[test]
    fn a_prompt_s_resources_are_words_of_their_own_in_place() {
        let blocks: Vec<ContentBlock> = serde_json::from_value(serde_json::json!([
            {"type": "text", "text": "Explain @/a.txt"},
            {"type": "resource_link", "uri": "file:///ws/b.txt", "name": "b.txt"},
            {"type": "text", "text": " then "},
            {"type": "resource", "resource": {"uri": "file:///ws/my%20file.rs", "text": "x"}},
            {"type": "text", "text": "'s bug, "},
            {"type": "resource_link", "uri": "https://example.com/x", "name": "x"},
            {"type": "resource", "resource": {"uri": "file:///ws/../etc/p", "text": "p"}},
            {"type": "resource", "resource": {"uri": "file:///ws/i.png", "blob": "AA=="}},
        ]))
        .unwrap();
        let (words, given) = prompt_text(&blocks, Path::new("/ws"));
        assert_eq!(
            words,
            "Explain @/a.txt @/b.txt then @\"/my file.rs\" 's bug, https://example.com/x \
             '/ws/../etc/p' (see below for file content) @/i.png"
        );
        let given: Vec<(&str, &str)> = given.iter().map(|(n, t)| (n.as_str(), t.as_str())).collect();
        assert_eq!(given, [("my file.rs", "x"), ("/ws/../etc/p", "p"), ("i.png", mentions::BINARY_FILE)]);
    }

    /// A mention is written only where the words after it, across as many blocks as their
    /// leading punctuation spans, read it back: `.` `)` `more` would stretch `@/a.txt` into
    /// `@/a.txt.)more`, so the file is named by its path there; `.` `)` ` ` would not.
    #[test]
    fn a_mention_looks_past_blocks_of_punctuation_after_it() {
        let prompt = |last: &str| -> Vec<ContentBlock> {
            serde_json::from_value(serde_json::json!([
                {"type": "resource_link", "uri": "file:///ws/a.txt", "name": "a.txt"},
                {"type": "text", "text": "."},
                {"type": "text", "text": ""},
                {"type": "text", "text": ")"},
                {"type": "text", "text": last},
            ]))
            .unwrap()
        };
        assert_eq!(prompt_text(&prompt("more"), Path::new("/ws")).0, "a.txt.)more");
        assert_eq!(prompt_text(&prompt(" more"), Path::new("/ws")).0, "@/a.txt.) more");
    }

    /// Zed's mentions of a selection and of a symbol name the file with a fragment and a query:
    /// the file is the path alone (`a.rs#L10:20` was taken for a file of that name).
    #[test]
    fn a_selection_or_symbol_uri_names_its_file() {
        for uri in ["file:///ws/src/a.rs#L10:20", "file:///ws/src/a.rs?symbol=f#L1:5", "file:///ws/src/a.rs"] {
            assert_eq!(resource_name(uri, Path::new("/ws")), ("src/a.rs".to_string(), true), "{uri}");
        }
        assert_eq!(resource_name("file:///ws/a%23b.rs", Path::new("/ws")), ("a#b.rs".to_string(), true));
    }

    /// The text of a selection is named as those lines of the file, never as the file: the
    /// model took `fn b` and `fn c` for the whole of `big.rs`.
    #[test]
    fn a_selections_text_is_named_as_those_lines() {
        let blocks: Vec<ContentBlock> = serde_json::from_value(serde_json::json!([
            {"type": "text", "text": "Why "},
            {"type": "resource", "resource": {"uri": "file:///ws/big.rs#L2:3", "text": "fn b() {}\nfn c() {}"}},
            {"type": "text", "text": " and "},
            {"type": "resource", "resource": {"uri": "file:///ws/big.rs?symbol=e#L5:5", "text": "fn e() {}"}},
        ]))
        .unwrap();
        let (words, given) = prompt_text(&blocks, Path::new("/ws"));
        assert_eq!(
            words,
            "Why 'big.rs (lines 2-3)' (see below for file content) and 'big.rs (line 5)' (see below for file content)"
        );
        assert_eq!(given[0], ("big.rs (lines 2-3)".to_string(), "fn b() {}\nfn c() {}".to_string()));
        assert_eq!(selected_lines("file:///a.rs#L10-20").as_deref(), Some("lines 10-20"));
        assert_eq!(selected_lines("file:///a.rs#L7").as_deref(), Some("line 7"));
        assert_eq!(selected_lines("file:///a.rs#intro"), None);
    }

    #[test]
    fn a_session_id_to_load_names_no_path() {
        assert!(is_session_id("20261201-223630-da5d7f"));
        for bad in ["", "../tasks/x", "a/b", ".hidden", "x.json", "a b", &"a".repeat(65)] {
            assert!(!is_session_id(bad), "{bad:?}");
        }
    }
}
