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
//! `session/request_permission` (`approvals`) exactly where the terminal would ask.

mod approvals;
mod updates;
mod wire;

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol_schema::v1::{
    AgentCapabilities, ContentBlock, EmbeddedResourceResource, Implementation, InitializeResponse, McpCapabilities,
    McpServer, NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse, SessionUpdate, StopReason,
};
use agent_client_protocol_schema::ProtocolVersion;
use serde_json::Value;

use crate::run::mcp::config::{Kind, ServerConfig};
use crate::run::task::{End, Task};
use crate::run::ui::term::Term;
use crate::run::{cli, session_task, SessionSetup};
use wire::{Incoming, Wire};

const HELP: &str = "\
agent-min acp — the agent inside an editor, over the Agent Client Protocol

USAGE:
    agent-min acp [RUN OPTIONS]

Speaks ACP v1 (newline-delimited JSON-RPC 2.0) on standard input and output; the log goes to
standard error. The editor starts it: each session's cwd is the workspace, each prompt a turn
of the task, approvals are asked in the editor. The run options (--provider, --model,
--base-url, --sandbox, --yolo, rules, hooks, --mcp-config, --state-dir...) mean what they
mean for `agent-min run` (see `agent-min run --help`); no task is given here.
";

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
        print!("{HELP}");
        return ExitCode::SUCCESS;
    }
    if opts.task.is_some() || opts.replay.is_some() || opts.json {
        eprintln!("agent-min acp: the prompts come from the editor: give no task, --replay or --json");
        return ExitCode::from(2);
    }
    crate::run::ui::interrupt::install();
    let (wire, incoming) = Wire::start();
    let mut agent = Agent { opts, wire, sessions: HashMap::new() };
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
}

/// JSON-RPC's error codes.
const INVALID_PARAMS: i64 = -32602;
const METHOD_NOT_FOUND: i64 = -32601;
const INTERNAL_ERROR: i64 = -32603;

impl Agent {
    fn handle(&mut self, m: Incoming) {
        let Some(id) = m.id.clone() else { return }; // notifications other than cancel: none we act on
        let result = match m.method.as_str() {
            "initialize" => Ok(serde_json::to_value(initialize()).unwrap_or(Value::Null)),
            "authenticate" => Ok(serde_json::json!({})),
            "session/new" => self.new_session(m.params),
            "session/prompt" => self.prompt(m.params),
            other => Err((METHOD_NOT_FOUND, format!("Method not found: {other}"))),
        };
        match result {
            Ok(v) => self.wire.respond(&id, v),
            Err((code, message)) => self.wire.fail(&id, code, &message),
        }
    }

    fn new_session(&mut self, params: Value) -> Result<Value, (i64, String)> {
        let req: NewSessionRequest =
            serde_json::from_value(params).map_err(|e| (INVALID_PARAMS, format!("Invalid params: {e}")))?;
        if !req.cwd.is_absolute() {
            return Err((INVALID_PARAMS, format!("cwd must be an absolute path, got {}", req.cwd.display())));
        }
        let mcp = req
            .mcp_servers
            .iter()
            .map(server_config)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| (INVALID_PARAMS, e))?;
        let id = crate::run::session::state::new_id();
        let shared = Arc::new(Mutex::new(updates::Session {
            wire: self.wire.clone(),
            id: id.clone(),
            root: req.cwd.clone(),
            pending: Default::default(),
            cancel: Arc::default(),
        }));
        let term = Term::stderr().answered_by(Box::new(approvals::Approvals::new(shared.clone())));
        let events = crate::run::session::events::Events::tapped(updates::tap(shared.clone()));
        let setup = SessionSetup { cwd: req.cwd.clone(), mcp, term, events };
        let task = session_task(&self.opts, setup).map_err(|e| (INTERNAL_ERROR, e))?;
        if let Ok(mut s) = shared.lock() {
            s.root = task.root().to_path_buf();
        }
        let cancel = task.cancel_flag();
        self.wire.on_cancel(&id, cancel.clone());
        if let Ok(mut s) = shared.lock() {
            s.cancel = cancel.clone();
        }
        self.sessions.insert(id.clone(), Live { task, cancel, shared });
        Ok(serde_json::to_value(NewSessionResponse::new(id)).unwrap_or(Value::Null))
    }

    fn prompt(&mut self, params: Value) -> Result<Value, (i64, String)> {
        let req: PromptRequest =
            serde_json::from_value(params).map_err(|e| (INVALID_PARAMS, format!("Invalid params: {e}")))?;
        let live = self
            .sessions
            .get_mut(&*req.session_id.0)
            .ok_or_else(|| (INVALID_PARAMS, format!("no session {}", req.session_id.0)))?;
        let text = prompt_text(&req.prompt);
        // A call a cancelled turn left unanswered is no longer what an approval is about.
        live.shared.lock().unwrap_or_else(|e| e.into_inner()).pending.clear();
        let end = live.task.converse(&text);
        let stop = if live.cancel.load(Ordering::SeqCst) {
            StopReason::Cancelled
        } else {
            if let End::Failed(why) | End::NeedsPerson(why) = &end {
                let s = live.shared.lock().unwrap_or_else(|e| e.into_inner());
                let text = format!("\n\nTask failed: {why}");
                s.update(SessionUpdate::AgentMessageChunk(agent_client_protocol_schema::v1::ContentChunk::new(
                    ContentBlock::Text(agent_client_protocol_schema::v1::TextContent::new(text)),
                )));
            }
            StopReason::EndTurn
        };
        Ok(serde_json::to_value(PromptResponse::new(stop)).unwrap_or(Value::Null))
    }
}

/// What the agent says it is and can do: only what is true.
fn initialize() -> InitializeResponse {
    let caps = AgentCapabilities::new().load_session(false).mcp_capabilities(McpCapabilities::new().http(true));
    InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(caps)
        .agent_info(Implementation::new("agent-min", env!("CARGO_PKG_VERSION")))
}

/// A prompt's content as the task's text: its text, a linked resource by its URI, an embedded
/// text resource with its URI.
fn prompt_text(blocks: &[ContentBlock]) -> String {
    let parts: Vec<String> = blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.clone()),
            ContentBlock::ResourceLink(l) => Some(l.uri.clone()),
            ContentBlock::Resource(r) => match &r.resource {
                EmbeddedResourceResource::TextResourceContents(t) => {
                    Some(format!("<file_content path=\"{}\">\n{}\n</file_content>", t.uri, t.text))
                }
                _ => None,
            },
            _ => None,
        })
        .collect();
    parts.join("\n")
}

/// A client's MCP server as the settings files' servers are: stdio or streamable HTTP.
fn server_config(s: &McpServer) -> Result<ServerConfig, String> {
    let (name, kind) = match s {
        McpServer::Stdio(s) => (
            s.name.clone(),
            Kind::Stdio {
                command: s.command.display().to_string(),
                args: s.args.clone(),
                env: s.env.iter().map(|e| (e.name.clone(), e.value.clone())).collect(),
                cwd: None,
            },
        ),
        McpServer::Http(h) => (
            h.name.clone(),
            Kind::Http {
                url: h.url.clone(),
                headers: h.headers.iter().map(|h| (h.name.clone(), h.value.clone())).collect(),
            },
        ),
        _ => return Err("only stdio and HTTP MCP servers are supported (mcpCapabilities.sse is false)".to_string()),
    };
    Ok(ServerConfig {
        name,
        file: PathBuf::from("the ACP client's session/new"),
        kind,
        disabled: false,
        auto_approve: Vec::new(),
        timeout: Duration::from_secs(60),
        startup_timeout: None,
    })
}
