//! The hub: every configured server, started together before the first request (waiting at
//! most [`CONNECT_WAIT`], as Cline's `attemptApiRequest` does; one not up by then goes on
//! starting, as Cline's connection does, and is taken up by [`Hub::poll`] before a later
//! request), its tools, resources and templates listed, and the calls routed to it.
//!
//! A server that fails to start is kept as `Failed` with the reason (shown once, left out of
//! the prompt). A server that dies during the task is restarted once, and the model is told;
//! a second death leaves it stopped. Every server is stopped (its whole process group) when the
//! hub is dropped or [`Hub::stop`] is called — at the end of the task; Ctrl-C and SIGTERM reach
//! the groups through [`crate::run::ui::interrupt`].

use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::client::Client;
use super::config::{Kind, ServerConfig};
use super::http::HttpTransport;
use super::jsonrpc::McpError;
use super::sse::SseTransport;
use super::stdio::StdioTransport;
use super::Transport;
use crate::run::session::events::{Event, Events, McpServerEvent, McpState};

/// How long the first request waits for servers to connect by default (Cline:
/// `pWaitFor(…, 10_000)`); `--mcp-startup-timeout` and a server's `startupTimeout` change it.
/// A server not up by then goes on starting, as Cline's does, for [`INITIALIZE_TIMEOUT`].
pub(crate) const CONNECT_WAIT: Duration = Duration::from_secs(10);

/// How long a server has to answer `initialize`, whatever the first request waited: the MCP
/// SDK's `DEFAULT_REQUEST_TIMEOUT_MSEC`, which Cline's `client.connect` leaves as it is (an
/// `npx -y` server's first run downloads itself).
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(60);

/// Cline's `DEFAULT_REQUEST_TIMEOUT_MS` for the lists (and a prompt).
pub(crate) const LIST_TIMEOUT: Duration = Duration::from_secs(5);

/// The lists a server is asked for as it connects: tools, resources, templates, prompts.
const LISTS: u32 = 4;

/// How long a server that answered `initialize` may take to list what it offers: each list its
/// own time, and a moment for the answer to travel.
const LISTS_WAIT: Duration = LIST_TIMEOUT.saturating_mul(LISTS).saturating_add(Duration::from_millis(200));

/// The MCP SDK's `DEFAULT_REQUEST_TIMEOUT_MSEC`: what Cline's `readResource` waits.
const RESOURCE_TIMEOUT: Duration = Duration::from_secs(60);

/// What a call on a server asks: Cline's `callTool` (and prompts) and `readResource` word their
/// errors apart.
#[derive(Clone, Copy)]
enum Asked {
    Tool,
    Resource,
}

/// A connected server's session and what it offers.
pub(crate) struct Conn {
    client: Client,
    /// `tools/list`.
    pub tools: Vec<Value>,
    /// `resources/list`.
    pub resources: Vec<Value>,
    /// `resources/templates/list`.
    pub templates: Vec<Value>,
    /// `prompts/list` (listed in the prompt, as Cline does; not used by any tool).
    pub prompts: Vec<Value>,
    /// Lines of garbage already reported.
    garbage_told: usize,
}

/// Where a server stands.
pub(crate) enum State {
    /// Running and listed.
    Connected(Box<Conn>),
    /// Not up when the first request was made: its connection goes on in the background, and
    /// [`Hub::poll`] takes it up when it ends.
    Starting(Starting),
    /// Could not start, or stopped for good: why.
    Failed(String),
    /// `"disabled": true`.
    Disabled,
}

/// A server's start going on in the background.
pub(crate) struct Starting {
    /// What its thread reports.
    rx: mpsc::Receiver<Progress>,
    /// It answered `initialize`: its lists come within their own time, and are waited for.
    initialized: bool,
    /// Its process group (stdio), stopped with the hub.
    group: Option<i32>,
}

impl Starting {
    /// How the start ended, if it has: its thread's reports are read, each until the deadline
    /// `until(initialized)` gives (`None`: only what is there already), `initialized` being
    /// whether it answered `initialize`; `None` when it is still starting at that deadline.
    fn ended(&mut self, until: impl Fn(bool) -> Option<Instant>) -> Option<State> {
        loop {
            let next = match until(self.initialized) {
                Some(t) => self.rx.recv_timeout(t.saturating_duration_since(Instant::now())),
                None => self.rx.try_recv().map_err(|e| match e {
                    mpsc::TryRecvError::Empty => mpsc::RecvTimeoutError::Timeout,
                    mpsc::TryRecvError::Disconnected => mpsc::RecvTimeoutError::Disconnected,
                }),
            };
            match next {
                Ok(Progress::Initialized) => self.initialized = true,
                Ok(Progress::Done(r)) => return Some(ended(r)),
                Err(mpsc::RecvTimeoutError::Disconnected) => return Some(State::Failed("its start failed".into())),
                Err(mpsc::RecvTimeoutError::Timeout) => return None,
            }
        }
    }
}

/// How a server's start goes, as its thread reports it.
pub(crate) enum Progress {
    /// It answered `initialize`; its lists are being asked for.
    Initialized,
    /// It connected and listed what it offers, or failed.
    Done(Result<Conn, String>),
}

/// One configured server.
pub(crate) struct Server {
    /// Its settings.
    pub cfg: ServerConfig,
    /// Its state.
    pub state: State,
    restarted: bool,
}

impl Server {
    /// Its state in one word, as `mcp list` and events show it.
    pub(crate) fn state_name(&self) -> &'static str {
        match self.state {
            State::Connected(_) => "connected",
            State::Starting(_) => "starting",
            State::Failed(_) => "failed",
            State::Disabled => "disabled",
        }
    }
}

/// Why a call got no result, and what else the model should know (a restart).
#[derive(Debug)]
pub(crate) struct CallError {
    /// The error, as Cline's texts embed it.
    pub message: String,
    /// A note on the server's fate, when it died.
    pub note: Option<String>,
}

/// All servers of a run.
#[derive(Default)]
pub struct Hub {
    servers: Vec<Server>,
    changed: bool,
    /// The servers section as last put into the system prompt (see `prompt::update`).
    pub(super) shown_section: String,
    /// Tools already warned about as not offered natively (`native::tool_specs`).
    pub(super) native_refused: Vec<String>,
    /// How long a (re)starting server may take unless its settings say otherwise.
    wait: Duration,
    /// Servers that were still starting and have finished since, to report ([`Hub::take_ready`]).
    ready: Vec<usize>,
}

impl Hub {
    /// No servers.
    pub fn none() -> Hub {
        Hub::default()
    }

    /// Starts every enabled server and waits (each at most its `startupTimeout`, else `wait`)
    /// for them to connect and list what they offer ([`Hub::report_started`] sends the
    /// outcomes as events).
    ///
    /// With `later` (a run), a server not up by then goes on starting in the background, given
    /// [`INITIALIZE_TIMEOUT`] at least to answer `initialize` ([`Hub::poll`] takes it up);
    /// without (`mcp list`), it fails at its wait.
    pub(crate) fn start(cfgs: Vec<ServerConfig>, wait: Duration, later: bool) -> Hub {
        // Each server's uid, in the settings' order (the order its tools are offered in): a
        // history loaded before any request names its native calls by uid, and shows the
        // server's name only if the uid is known.
        for cfg in &cfgs {
            super::native::server_key(&cfg.name);
        }
        if !super::BUILT_IN {
            return Hub::none(); // `sources` says why; nothing of the transports is built
        }
        let started = Instant::now();
        let mut servers = Vec::new();
        for cfg in cfgs {
            let state = if cfg.disabled {
                State::Disabled
            } else {
                // Spawned here, on the calling thread (the child's death signal is tied to it);
                // the handshakes run in parallel, each given at least the SDK's time to answer
                // `initialize` whatever the first request waits.
                match open(&cfg) {
                    Ok(t) => {
                        let (tx, rx) = mpsc::channel();
                        let group = t.server_group();
                        let own = cfg.startup_timeout.unwrap_or(wait);
                        let budget = if later { own.max(INITIALIZE_TIMEOUT) } else { own };
                        let by = (started + budget, started + own);
                        std::thread::spawn(move || {
                            let done = connect(t, by, budget, &|| {
                                let _ = tx.send(Progress::Initialized);
                            });
                            let _ = tx.send(Progress::Done(done));
                        });
                        State::Starting(Starting { rx, initialized: false, group })
                    }
                    Err(e) => State::Failed(e.to_string()),
                }
            };
            servers.push(Server { cfg, state, restarted: false });
        }
        // The first request waits for each at most its `startupTimeout`, else `wait`; a server
        // that answered `initialize` by then has each list's own time (`connect`), and without
        // `later` the thread's own verdict is waited for.
        for s in &mut servers {
            let State::Starting(st) = &mut s.state else { continue };
            let own = started + s.cfg.startup_timeout.unwrap_or(wait);
            let lists = own + LISTS_WAIT;
            if let Some(end) = st.ended(|initialized| Some(if initialized || !later { lists } else { own })) {
                s.state = end;
            }
        }
        Hub { servers, wait, ..Hub::default() }
    }

    /// `mcp list`, which waits for nothing later: a server still starting is given up (its
    /// thread stops it when its handshake ends), named as too slow for the wait.
    pub(crate) fn give_up_on_starting(&mut self) {
        let wait = self.wait;
        for s in &mut self.servers {
            if let State::Starting(_) = s.state {
                s.state = State::Failed(slow_start("did not finish starting", s.cfg.startup_timeout.unwrap_or(wait)));
            }
        }
    }

    /// The servers that were still starting at the first request and have finished since
    /// ([`Hub::poll`] takes them up): one `ready` event each, and each one's name with how it
    /// ended, for the person.
    pub(crate) fn take_ready(&mut self, events: &mut Events) -> Vec<(String, Result<usize, String>)> {
        let mut out = Vec::new();
        for i in std::mem::take(&mut self.ready) {
            let s = &self.servers[i];
            server_event(events, s, McpServerEvent::Ready);
            let how = match &s.state {
                State::Connected(c) => Ok(c.tools.len()),
                State::Failed(e) => Err(e.clone()),
                _ => continue,
            };
            out.push((s.cfg.name.clone(), how));
        }
        out
    }

    /// Shows the log messages (`notifications/message`) the servers sent since the last look,
    /// as Cline's task says each (`mcp_notification`: `[server] message`), on the terminal and
    /// as `mcp_notification` events; a server's messages past the most kept are counted.
    pub(crate) fn show_notes(&mut self, term: &mut crate::run::ui::term::Term, events: &mut Events) {
        for s in &mut self.servers {
            let State::Connected(conn) = &mut s.state else { continue };
            let (notes, dropped) =
                (std::mem::take(&mut conn.client.notes), std::mem::take(&mut conn.client.notes_dropped));
            let server = &s.cfg.name;
            for (level, message) in notes {
                let line = format!("MCP [{server}] {message}");
                match level.as_str() {
                    "warning" | "error" | "critical" | "alert" | "emergency" => term.warn(&line),
                    _ => term.info(&line),
                }
                events.emit(&Event::McpNotification { server: server.clone(), level, message });
            }
            if dropped > 0 {
                term.info(&format!("MCP [{server}] … and {dropped} more log messages, not shown"));
            }
        }
    }

    /// One `mcp_server` event per server with how its start went (after `task_started`).
    pub(crate) fn report_started(&self, events: &mut Events) {
        for s in &self.servers {
            server_event(events, s, McpServerEvent::Started);
        }
    }

    /// Every configured server.
    pub(crate) fn servers(&self) -> &[Server] {
        &self.servers
    }

    /// Whether any server is configured.
    pub(crate) fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The connected servers, in config order.
    pub(crate) fn connected(&self) -> impl Iterator<Item = (&ServerConfig, &Conn)> {
        self.servers.iter().filter_map(|s| match &s.state {
            State::Connected(c) => Some((&s.cfg, &**c)),
            _ => None,
        })
    }

    /// Whether what the prompt lists changed (a server's tools changed, one died or came back)
    /// since the last call.
    pub(crate) fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// A server's settings, if configured.
    pub(crate) fn config(&self, name: &str) -> Option<&ServerConfig> {
        self.servers.iter().find(|s| s.cfg.name == name).map(|s| &s.cfg)
    }

    /// `tools/call` on `server`, with the server's timeout.
    pub(crate) fn call_tool(
        &mut self,
        server: &str,
        tool: &str,
        args: Value,
        events: &mut Events,
    ) -> Result<Value, CallError> {
        let timeout = self.config(server).map_or(RESOURCE_TIMEOUT, |c| c.timeout);
        self.with_server(server, events, Asked::Tool, |c| c.call_tool(tool, args.clone(), timeout))
    }

    /// `resources/read` on `server`, within the MCP SDK's default request timeout (60 s), which
    /// Cline's `readResource` leaves as it is (a server's `timeout` is for its tool calls).
    pub(crate) fn read_resource(&mut self, server: &str, uri: &str, events: &mut Events) -> Result<Value, CallError> {
        self.with_server(server, events, Asked::Resource, |c| c.read_resource(uri, RESOURCE_TIMEOUT))
    }

    /// `prompts/get` of `prompt` on `server` (a slash command's `/mcp:SERVER:PROMPT`), within
    /// Cline's `DEFAULT_REQUEST_TIMEOUT_MS` (5 s).
    pub(crate) fn get_prompt(&mut self, server: &str, prompt: &str, events: &mut Events) -> Result<Value, CallError> {
        self.with_server(server, events, Asked::Tool, |c| c.get_prompt(prompt, LIST_TIMEOUT))
    }

    fn with_server(
        &mut self,
        name: &str,
        events: &mut Events,
        asked: Asked,
        mut f: impl FnMut(&mut Client) -> Result<Value, McpError>,
    ) -> Result<Value, CallError> {
        let plain = |message: String| CallError { message, note: None };
        if !super::BUILT_IN {
            // No server was started (`start`); this also leaves the clients out of the build.
            return Err(plain(crate::run::built::not_built_in("mcp", "MCP servers")));
        }
        // Cline's `callTool` and `readResource` word these apart.
        let Some(i) = self.servers.iter().position(|s| s.cfg.name == name) else {
            return Err(plain(match asked {
                Asked::Tool => format!("No connection found for server: {name}. Please make sure to use MCP servers available under 'Connected MCP Servers'."),
                Asked::Resource => format!("No connection found for server: {name}"),
            }));
        };
        let s = &mut self.servers[i];
        let conn = match &mut s.state {
            State::Connected(c) => c,
            State::Disabled => {
                return Err(plain(match asked {
                    Asked::Tool => format!("Server \"{name}\" is disabled and cannot be used"),
                    Asked::Resource => format!("Server \"{name}\" is disabled"),
                }))
            }
            State::Failed(why) => return Err(plain(format!("Server \"{name}\" is not connected: {why}"))),
            State::Starting(_) => {
                return Err(plain(format!(
                    "Server \"{name}\" is still starting; its tools are offered once it is ready. Try again later."
                )))
            }
        };
        let mut result = f(&mut conn.client);
        if let Err(McpError::Expired(how)) = &result {
            // The request was not processed: a new session, and the request once more (Cline's
            // transport reconnects too). Not a crash: the server's one restart is kept.
            let how = how.clone();
            result = match reconnect(&s.cfg, self.wait) {
                Ok(fresh) => {
                    let changed = fresh.tools != conn.tools;
                    **conn = fresh;
                    self.changed |= changed;
                    f(&mut conn.client)
                }
                Err(e) => Err(McpError::Closed(format!("{how}, and a new session could not be made: {e}"))),
            };
        }
        self.changed |= relist_if_changed(conn);
        match result {
            Ok(v) => Ok(v),
            Err(e @ McpError::Closed(_)) => {
                let McpError::Closed(how) = &e else { unreachable!() };
                let note = self.restart_once(i, how, events);
                Err(CallError { message: e.to_string(), note: Some(note) })
            }
            Err(e) => Err(plain(e.to_string())),
        }
    }

    /// Before a request: what each server said while no call waited (its `tools/list_changed`
    /// sat in the pipe until the server was next called, and a server that announced its tools
    /// later never had them offered); a server whose tools changed is listed again.
    pub(crate) fn poll(&mut self) {
        if !super::BUILT_IN {
            return; // no server was started (and the clients stay out of the build)
        }
        for (i, s) in self.servers.iter_mut().enumerate() {
            if let State::Starting(st) = &mut s.state {
                // One that answered `initialize` is waited for while it lists, as the first
                // request waits (each list has its own time): its tools go with this request.
                let lists = Instant::now() + LISTS_WAIT;
                let Some(end) = st.ended(|initialized| initialized.then_some(lists)) else { continue };
                s.state = end;
                self.ready.push(i);
                self.changed = true;
            }
            if let State::Connected(conn) = &mut s.state {
                conn.client.poll();
                self.changed |= relist_if_changed(conn);
            }
        }
    }

    /// After a server died: starts it again the first time, and says what happened.
    fn restart_once(&mut self, i: usize, how: &str, events: &mut Events) -> String {
        let run_wait = self.wait;
        self.changed = true;
        let s = &mut self.servers[i];
        let name = s.cfg.name.clone();
        if s.restarted {
            s.state = State::Failed(format!("stopped again ({how}); it is restarted only once per task"));
            server_event(events, s, McpServerEvent::Stopped);
            return format!(
                "The MCP server \"{name}\" stopped ({how}). It was already restarted once in this task, so it is not restarted again and its tools are no longer available."
            );
        }
        s.restarted = true;
        s.state = State::Failed(how.to_string());
        server_event(events, s, McpServerEvent::Crashed);
        s.state = match reconnect(&s.cfg, run_wait) {
            Ok(c) => State::Connected(Box::new(c)),
            Err(e) => State::Failed(e),
        };
        server_event(events, s, McpServerEvent::Restarted);
        match &s.state {
            State::Connected(_) => format!(
                "The MCP server \"{name}\" stopped during the call ({how}). It has been restarted; the call was not retried, so check whether it took effect before using the tool again."
            ),
            State::Failed(e) => {
                format!("The MCP server \"{name}\" stopped during the call ({how}) and could not be restarted: {e}")
            }
            State::Disabled | State::Starting(_) => format!("The MCP server \"{name}\" stopped during the call ({how})."),
        }
    }

    /// A warning, once per new batch, when `server` printed lines on stdout that are not
    /// JSON-RPC (they were skipped).
    pub(crate) fn garbage_note(&mut self, server: &str) -> Option<String> {
        if !super::BUILT_IN {
            return None;
        }
        let s = self.servers.iter_mut().find(|s| s.cfg.name == server)?;
        let State::Connected(c) = &mut s.state else { return None };
        let n = c.client.garbage_lines();
        if n <= c.garbage_told {
            return None;
        }
        let new = n - c.garbage_told;
        c.garbage_told = n;
        Some(format!(
            "MCP server \"{server}\" printed {} on stdout that are not JSON-RPC messages; they were ignored.",
            crate::run::ui::count(new as u64, "line")
        ))
    }

    /// Stops every server (closing stdin, then SIGTERM and SIGKILL to each process group).
    pub(crate) fn stop(&mut self, events: &mut Events) {
        for s in &mut self.servers {
            if let State::Starting(Starting { group: Some(g), .. }) = s.state {
                // Its handshake fails at once, and its thread lets it go.
                crate::run::ui::interrupt::send_signal(-g, libc::SIGKILL);
            }
            if matches!(s.state, State::Connected(_) | State::Starting(_)) {
                s.state = State::Failed("stopped at the end of the task".into());
                server_event(events, s, McpServerEvent::Stopped);
            }
        }
    }
}

/// Starts a server's transport (for stdio, its process).
fn open(cfg: &ServerConfig) -> Result<Box<dyn Transport>, McpError> {
    Ok(match &cfg.kind {
        Kind::Stdio { command, args, env, cwd } => Box::new(StdioTransport::spawn(command, args, env, cwd.as_deref())?),
        Kind::Http { url, headers, sse: false } => Box::new(HttpTransport::new(url, headers)),
        Kind::Http { url, headers, sse: true } => Box::new(SseTransport::open(url, headers)),
    })
}

/// A connection's outcome as a state.
fn ended(r: Result<Conn, String>) -> State {
    match r {
        Ok(c) => State::Connected(Box::new(c)),
        Err(e) => State::Failed(e),
    }
}

/// Why a server is not up after `budget`, and the likely cause and fix.
fn slow_start(what: &str, budget: Duration) -> String {
    let secs = budget.as_secs_f64();
    format!(
        "{what} within {secs} seconds. A server started with npx or uvx may still be downloading itself (its first run can take a minute): give it longer with --mcp-startup-timeout 120, or \"startupTimeout\": 120 in its settings"
    )
}

/// The handshake by `deadline` (`budget` after the start), then the lists, each within
/// [`LIST_TIMEOUT`] of its start or by `deadline` if that is later, as Cline gives each list its
/// own 5 s (a server that answered `initialize` late in its budget would otherwise have no time
/// left to list its tools, and stay connected without them). The error names the failure and
/// adds the server's stderr.
/// `by`: the handshake's deadline, and the one the lists may use up (the first request's wait);
/// `initialized` is called once the handshake is done.
fn connect(
    t: Box<dyn Transport>,
    by: (Instant, Instant),
    budget: Duration,
    initialized: &dyn Fn(),
) -> Result<Conn, String> {
    let (handshake, deadline) = by;
    let left = handshake.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
    let mut client = match Client::connect(t, left) {
        Ok(c) => c,
        Err(McpError::Closed(how)) => return Err(format!("the server stopped during the handshake: {how}")),
        Err(McpError::Timeout) => return Err(slow_start("no answer to `initialize`", budget)),
        Err(e) => return Err(e.to_string()),
    };
    initialized();
    // Every list is asked for whatever capabilities the server declared, as Cline's MCP SDK
    // (strict capabilities off) asks: a server that serves tools under `capabilities: {}`
    // listed none here; one without a list answers "method not found", read as empty.
    let list = |c: &mut Client, method: &str, key: &str| {
        let by = deadline.max(Instant::now() + LIST_TIMEOUT);
        c.list_all(method, key, LIST_TIMEOUT, by).map_err(|e| format!("{method} failed: {e}"))
    };
    // Cline treats a failed list as empty (`fetchToolsList` too: the server stays connected,
    // its resources usable, without tools).
    // A change said while the tools are listed or after is kept: the next look lists them again
    // (it was cleared after the other lists, and a change said meanwhile was lost).
    client.tools_changed = false;
    let tools = list(&mut client, "tools/list", "tools").unwrap_or_default();
    let resources = list(&mut client, "resources/list", "resources").unwrap_or_default();
    let templates = list(&mut client, "resources/templates/list", "resourceTemplates").unwrap_or_default();
    let prompts = list(&mut client, "prompts/list", "prompts").unwrap_or_default();
    Ok(Conn { client, tools, resources, templates, prompts, garbage_told: 0 })
}

/// A server started or connected again (its transport opened, the handshake and the lists),
/// within its startup timeout or the run's `wait`.
fn reconnect(cfg: &ServerConfig, wait: Duration) -> Result<Conn, String> {
    let wait = cfg.startup_timeout.unwrap_or(wait);
    let t = open(cfg).map_err(|e| e.to_string())?;
    let by = Instant::now() + wait;
    connect(t, (by, by), wait, &|| {})
}

/// Lists `conn`'s tools again if the server said they changed; whether they were listed.
fn relist_if_changed(conn: &mut Conn) -> bool {
    if !conn.client.tools_changed {
        return false;
    }
    conn.client.tools_changed = false;
    let by = Instant::now() + LIST_TIMEOUT;
    match conn.client.list_all("tools/list", "tools", LIST_TIMEOUT, by) {
        Ok(tools) => {
            conn.tools = tools;
            true
        }
        Err(_) => false,
    }
}

fn server_event(events: &mut Events, s: &Server, event: McpServerEvent) {
    let (state, tools, resources, error) = match &s.state {
        State::Connected(c) => (McpState::Connected, c.tools.len(), c.resources.len() + c.templates.len(), None),
        State::Starting(_) => (McpState::Starting, 0, 0, None),
        State::Failed(e) => (McpState::Failed, 0, 0, Some(e.clone())),
        State::Disabled => (McpState::Disabled, 0, 0, None),
    };
    events.emit(&Event::McpServer {
        server: s.cfg.name.clone(),
        event,
        state,
        tools: tools as u64,
        resources: resources as u64,
        error,
    });
}

#[cfg(all(test, feature = "mcp"))]
mod tests {
    use super::*;

    #[test]
    fn a_resource_reads_errors_are_worded_as_clines_read_resource_words_them() {
        let cfg = crate::run::mcp::config::parse(
            r#"{"mcpServers": {"d": {"command": "never-started", "disabled": true}}}"#,
            std::path::Path::new("/cfg/mcp.json"),
        )
        .unwrap();
        let mut hub = Hub::start(cfg, Duration::from_secs(1), true);
        let mut events = Events::off();
        let message = |r: Result<Value, CallError>| r.unwrap_err().message;
        // Cline's `readResource`…
        assert_eq!(message(hub.read_resource("d", "file:///x", &mut events)), "Server \"d\" is disabled");
        assert_eq!(
            message(hub.read_resource("nosuch", "file:///x", &mut events)),
            "No connection found for server: nosuch"
        );
        // …and its `callTool`.
        assert_eq!(
            message(hub.call_tool("d", "t", Value::Null, &mut events)),
            "Server \"d\" is disabled and cannot be used"
        );
        assert_eq!(
            message(hub.call_tool("nosuch", "t", Value::Null, &mut events)),
            "No connection found for server: nosuch. Please make sure to use MCP servers available under 'Connected MCP Servers'."
        );
    }
}
