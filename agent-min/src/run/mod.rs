//! `agent-min run`: a minimal Cline-style coding agent.
//!
//! One [`task::Task`] per run drives Cline's recursive loop — request, stream, parse, present,
//! execute, recurse — over a model API reached only through a `curl` subprocess ([`llm`]), or
//! over a recorded session (`replay`).
//!
//! The loop is on top ([`task`], with [`stream`] for one streamed reply and [`prompt`] for what
//! the model is told); each concern below it has its own folder: [`llm`] (the model's API),
//! [`tools`] (the tools and their file helpers), [`session`] (saved tasks, `--json` events), [`budget`] (tokens, cost, limits, context window), [`ui`] (terminal,
//! signals, redaction). `docs/architecture.md` is the map.

pub mod budget;
pub(crate) mod built;
pub mod checkpoints;
pub(crate) mod cli;
pub(crate) mod clock;
pub(crate) mod config;
pub mod dialect;
pub(crate) mod digest;
#[cfg(feature = "output-schema")]
pub(crate) mod json_schema;
pub(crate) mod last_message;
pub mod llm;
pub mod mcp;
pub mod native;
pub(crate) mod output_schema;
pub(crate) mod places;
pub mod project;
pub mod prompt;
pub(crate) mod replay;
pub mod reply;
pub(crate) mod sandbox;
pub mod session;
pub(crate) mod spawn;
pub mod stream;
pub mod task;
#[cfg(test)]
pub(crate) mod test_files;
pub(crate) mod texts;
pub mod tools;
pub(crate) mod trusted_file;
pub mod ui;

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use budget::accounting::{self, Accounting};
use budget::context::{self, ContextWindow};
use budget::limits::Limits;
use llm::providers::{ApiConfig, Provider};
use llm::Transport;
use session::events::Events;
use session::state;
use session::state::{Meta, Record, Store};
use task::{Around, End, Settings, Task};
use tools::paths::Workspace;
use ui::term::{Style, Term};
use ui::{interrupt, redact};

/// Entry point of `agent-min run`.
pub fn main(args: Vec<OsString>) -> ExitCode {
    let opts = match cli::parse(args) {
        Ok(o) => o,
        Err(e) => return usage_error("run", &e),
    };
    if opts.help {
        print!("{}", cli::help());
        return ExitCode::SUCCESS;
    }
    if opts.version {
        println!("agent-min {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    launch(&opts, None)
}

/// Runs a task: a new one, or `saved` resumed. Shared by `run` and `resume`.
pub(crate) fn launch(opts: &cli::Options, saved: Option<Record>) -> ExitCode {
    let code = launch_inner(opts, saved);
    sandbox::remove_private_tmp();
    code
}

fn launch_inner(opts: &cli::Options, saved: Option<Record>) -> ExitCode {
    let cmd = if saved.is_some() { "resume" } else { "run" };
    interrupt::install();
    // stdout carries what a script reads — the events, or the final result — and nothing else
    // when it is not a terminal; the transcript then goes to stderr.
    let human_on_stderr = opts.json || !std::io::stdout().is_terminal();
    let mut term = if human_on_stderr { Term::stderr() } else { Term::new() };
    let events = if opts.json { Events::to(Box::new(std::io::stdout())) } else { Events::off() };
    // A workspace that cannot be is said before anything else (the key, the recording).
    if let Some(Err(e)) = opts.cwd.as_deref().map(existing_dir) {
        return usage_error(cmd, &e);
    }
    // `-o`'s folder, opened before any command runs (and a missing one said now, not after).
    let last_message = match opts.output_last_message.as_deref().map(last_message::LastMessage::open).transpose() {
        Ok(opened) => opened,
        Err(e) => return usage_error(cmd, &e),
    };
    let setup = match &opts.replay {
        Some(file) => replay_setup(opts, file, &mut term),
        None => live_setup(opts, saved.as_ref()),
    };
    let setup = match setup {
        Ok(s) => s,
        Err(e) => return usage_error(cmd, &e),
    };
    // From here a replay's temporary workspace exists: a refusal removes it (unless --keep).
    let temporary = setup.temporary.then(|| setup.root.clone());
    // Ctrl-C and SIGTERM remove it too, once what runs in it is stopped and the final words
    // (a `TaskCancel` hook, which runs in it) are said.
    let _gone_on_interrupt =
        temporary.as_ref().filter(|_| !opts.keep).map(|root| interrupt::track_until_exit(root.clone()));
    let refuse = |e: &str| {
        if let (Some(root), false) = (&temporary, opts.keep) {
            let _ = std::fs::remove_dir_all(root);
        }
        usage_error(cmd, e)
    };
    if let Some(Err(e)) = saved.as_ref().map(|r| setup.dialect.check_resume(&r.messages)) {
        return refuse(&e);
    }
    let ws = match open_workspace(&setup.root, &mut term) {
        Ok(ws) => ws,
        Err(e) => return refuse(&e),
    };
    let state_dir = if opts.no_save { None } else { opts.state_dir.clone().or_else(state::default_dir) };
    if let Some(w) = sandbox::guarded::home_warning(ws.root(), checkpoints::place::home_dir().as_deref()) {
        term.warn(&w);
    }
    let trusted = trusted_places(state_dir.as_deref());
    let policy = opts.sandbox.resolve(setup.yolo, ws.root()).map(|mut p| {
        p.guard(&trusted, &Vec::from_iter(project::rules::deciding_file()), ws.root());
        p
    });
    match policy.and_then(sandbox::configure) {
        Ok(line) => line.iter().for_each(|l| term.info(l)),
        Err(e) => return refuse(&e),
    }
    let mut around = match surroundings(opts, &setup, &ws, saved.as_ref().map(|r| &r.meta), events) {
        Ok(a) => a,
        Err(e) => return refuse(&e),
    };
    let mcp_wait = opts.mcp_startup_timeout.map_or(mcp::hub::CONNECT_WAIT, clock::clamped_secs);
    let trust = opts.project.trust_workspace.then_some("--trust-workspace");
    around.mcp = match mcp::sources::start(&opts.mcp_config, ws.root(), setup.yolo, trust, mcp_wait, &mut term) {
        Ok(hub) => hub,
        Err(e) => return refuse(&e),
    };
    // Emptied now, when the task is about to run (the piped input read, the setup done): a run
    // that ends without a result (failed, stopped, killed) leaves no earlier run's result there
    // for a script to take for this one's — codex writes an empty file then.
    if let Some(Err(e)) = last_message.as_ref().map(|f| f.write("")) {
        let shown = opts.output_last_message.as_deref().unwrap_or(std::path::Path::new("")).display();
        return refuse(&format!("-o {shown}: cannot be written ({e})"));
    }
    let settings = task_settings(opts, &setup);
    let replaying = opts.replay.is_some();
    let task = Task::new(settings, setup.transport, ws, term, around);
    let end = match saved {
        Some(record) => task.resume(record, opts.words.as_deref()),
        None => task.run(),
    };
    if replaying {
        let mut t = if human_on_stderr { Term::stderr() } else { Term::new() };
        t.line(Style::Bold, "▶ End of replay: no model was called; the tools ran for real.");
        if let Some(root) = &temporary {
            end_temporary_workspace(root, opts.keep, &mut t);
        }
    }
    match (&end, &last_message) {
        (End::Completed(result), Some(file)) => {
            if let Err(e) = file.write(result) {
                eprintln!("agent-min: could not write the final result to {} ({e})", file.path().display());
                return ExitCode::from(1);
            }
        }
        (_, Some(file)) => eprintln!("agent-min: no final result; {} is left empty", file.path().display()),
        (_, None) => {}
    }
    match &end {
        End::Completed(result) => {
            if !opts.json && !std::io::stdout().is_terminal() {
                print_result(result);
            }
            ExitCode::SUCCESS
        }
        // (`Asked` is an editor's end of a turn: never here.)
        End::Failed(why) | End::NeedsPerson(why) | End::Asked(why) => {
            // The task's own "Task failed" line is already where a person looks — on stderr
            // when stdout is not a terminal, on the terminal when both streams are one: say it
            // once.
            let said = human_on_stderr || std::io::stderr().is_terminal();
            if !said {
                eprintln!("agent-min: task failed: {}", ui::term::visible(&redact::apply(why)));
            }
            ExitCode::from(end.exit_code() as u8)
        }
    }
}

/// The final result on stdout, for a script (stdout is not a terminal), with one final newline;
/// control characters made visible as on a terminal (a script's output is often shown on one).
fn print_result(result: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let text = ui::term::visible(&redact::apply(result)).into_owned();
    let _ = out.write_all(text.as_bytes());
    if !text.ends_with('\n') {
        let _ = out.write_all(b"\n");
    }
    let _ = out.flush();
}

/// The workspace, or why `root` cannot be one (a usage error: exit 2). A workspace the user
/// cannot write to is said up front: edits and new files would fail there.
fn open_workspace(root: &std::path::Path, term: &mut Term) -> Result<Workspace, String> {
    let shown = root.display();
    existing_dir(root)?;
    let ws = Workspace::new(root)
        .map_err(|e| format!("the workspace {shown} is not usable ({e}); pass an existing directory with --cwd"))?;
    crate::run::spawn::distrust_programs_in(ws.root());
    if let Err(e) = probe_writable(ws.root()) {
        term.warn(&format!(
            "the workspace {} is not writable ({e}): write_to_file, replace_in_file and commands that write there will fail",
            ws.root().display()
        ));
    }
    Ok(ws)
}

/// The directories outside any project whose contents later runs trust (see
/// [`sandbox::guarded`]): agent-min's config directory, Cline's documents folder, Cline's home
/// folder and the shared `~/.agents`, the state directory.
fn trusted_places(state_dir: Option<&std::path::Path>) -> Vec<std::path::PathBuf> {
    let home = places::home_dir();
    let mut out = Vec::new();
    // The config file's directory and the MCP settings' are the same but for a relative
    // `XDG_CONFIG_HOME`, which only the config file takes: both, once if equal.
    out.extend(config::default_path().and_then(|f| f.parent().map(std::path::Path::to_path_buf)));
    out.extend(mcp::sources::config_dir());
    out.extend(project::rules::documents_dir().map(|d| d.join("Cline")));
    out.extend(state_dir.map(std::path::Path::to_path_buf));
    // Cline's home folder (its global skills, and the Cline CLI's rules, workflows and MCP
    // settings) and the shared folder of skills and `AGENTS.md`; the folders read inside it
    // too, for a `--sandbox-allow-write` inside it (`~/.cline/data`, where the CLI keeps its
    // sessions) leaves the folder itself unguarded.
    out.extend(home.iter().flat_map(|h| [h.join(".cline"), h.join(".cline").join("skills"), h.join(".agents")]));
    if let Some(cline) = places::cline_dir() {
        out.push(cline.clone());
        out.extend(["rules", "workflows", "skills", "hooks"].map(|d| cline.join(d)));
    }
    out.extend(mcp::sources::cline_cli_file().and_then(|f| f.parent().map(std::path::Path::to_path_buf)));
    out
}

/// Why `root` cannot be a workspace, if it cannot: it must be an existing directory.
fn existing_dir(root: &std::path::Path) -> Result<(), String> {
    let shown = root.display();
    let meta = std::fs::metadata(root)
        .map_err(|e| format!("the workspace {shown} is not usable ({e}); pass an existing directory with --cwd"))?;
    if !meta.is_dir() {
        return Err(format!("the workspace {shown} is not a directory; pass a directory with --cwd"));
    }
    Ok(())
}

/// Creates and removes a probe file: the only test that sees read-only mounts and ACLs.
fn probe_writable(dir: &std::path::Path) -> std::io::Result<()> {
    let probe = dir.join(format!(".agent-min-write-probe-{}", std::process::id()));
    std::fs::OpenOptions::new().write(true).create_new(true).open(&probe)?;
    std::fs::remove_file(&probe)
}

/// A replay's temporary workspace: removed unless `--keep`, and said where it is either way.
fn end_temporary_workspace(root: &std::path::Path, keep: bool, term: &mut Term) {
    if keep {
        term.info(&format!("  workspace kept: {}", root.display()));
        return;
    }
    match std::fs::remove_dir_all(root) {
        Ok(()) => term.info(&format!("  removed the temporary workspace {} (pass --keep to keep it)", root.display())),
        Err(e) => term.warn(&format!("could not remove the temporary workspace {}: {e}", root.display())),
    }
}

fn usage_error(cmd: &str, msg: &str) -> ExitCode {
    eprintln!("agent-min {cmd}: {msg}");
    ExitCode::from(2)
}

/// What a run talks to, where, and about what.
struct Setup {
    transport: Box<dyn Transport>,
    root: PathBuf,
    task: String,
    yolo: bool,
    /// The provider as declared (`openrouter` speaks `openai`'s wire format); `None`: a replay.
    declared: Option<&'static llm::providers::registry::ProviderDecl>,
    model: String,
    base_url: String,
    api_key: Option<String>,
    num_ctx: u32,
    /// A replay's own temporary workspace (removed at the end unless `--keep`).
    temporary: bool,
    /// The dialect of tool calls (`--tool-calls`, resolved for this provider and model).
    dialect: &'static dyn dialect::Dialect,
    /// The model takes images (`read_file` of an image sends it).
    images: bool,
}

impl Setup {
    /// Its wire format; `None`: a replay.
    fn provider(&self) -> Option<Provider> {
        self.declared.map(|d| d.provider)
    }
}

/// Events, saving, accounting, context window and limits for a run.
fn surroundings(
    opts: &cli::Options,
    setup: &Setup,
    ws: &Workspace,
    saved: Option<&Meta>,
    events: Events,
) -> Result<Around, String> {
    let provider_name = match setup.provider() {
        // Saved as named, so a resume asks the same server as OpenAI's own API again.
        Some(Provider::OpenAi) if opts.openai_native => llm::providers::registry::NATIVE_OPENAI,
        _ => setup.declared.map_or("replay", |d| d.name),
    }
    .to_string();
    let meta = Meta {
        id: saved.map_or_else(state::new_id, |m| m.id.clone()),
        task: setup.task.clone(),
        created: saved.map_or_else(state::now_secs, |m| m.created),
        provider: provider_name,
        model: setup.model.clone(),
        base_url: setup.base_url.clone(),
        cwd: ws.root().display().to_string(),
    };
    let store = if opts.no_save || opts.replay.is_some() {
        None
    } else {
        let mut store = open_store(opts, setup.api_key.clone())?;
        store.hold(&meta.id).map_err(|busy| busy.refusal(if saved.is_some() { "continuing" } else { "running" }))?;
        Some(store)
    };
    let table = setup.provider().and_then(|p| accounting::builtin(p, &setup.model));
    let [pi, po, pr, pw] = opts.prices;
    let prices = accounting::resolve(table, pi, po, pr, pw);
    // OpenRouter bills each request in its usage report: its cost is known without prices.
    let billed = setup.provider() == Some(Provider::OpenAi) && llm::providers::is_openrouter(&setup.base_url);
    if opts.max_cost.is_some() && prices.is_none() && !billed {
        return Err(format!(
            "--max-cost needs prices, and model {:?} is not in the built-in table; pass --price-input and --price-output (US dollars per million tokens)",
            setup.model
        ));
    }
    let accounting = Accounting::new(prices, accounting::cache_in_prompt(setup.provider()));
    let checkpoints = match &store {
        Some(s) if !opts.no_checkpoints => {
            checkpoints::Tracker::new(s.dir().to_path_buf(), ws.root().to_path_buf(), &meta.id)
        }
        _ => checkpoints::Tracker::off(),
    };
    let context = match opts.context_window {
        Some(window) => ContextWindow::new(window),
        None => asked_window(setup),
    };
    let hooks_meta = project::hooks::input::Meta {
        task_id: meta.id.clone(),
        provider: meta.provider.clone(),
        model: meta.model.clone(),
    };
    let project =
        opts.project.project(ws.root(), setup.yolo, opts.state_dir.clone().or_else(state::default_dir), hooks_meta)?;
    Ok(Around {
        project,
        events,
        store,
        meta,
        accounting,
        context,
        limits: Limits::start(opts.max_turns, opts.max_cost, opts.timeout),
        checkpoints,
        mcp: mcp::Hub::none(),
        output_schema: opts.output_schema.as_deref().map(output_schema::OutputSchema::load).transpose()?,
    })
}

/// What an editor's session (`agent-min acp`) brings to a task: its workspace, its MCP servers,
/// and where what the task says and asks goes.
pub(crate) struct SessionSetup {
    /// The session's `cwd`.
    pub cwd: PathBuf,
    /// The client's MCP servers, started with the settings files' ones.
    pub mcp: Vec<mcp::config::ServerConfig>,
    /// The log (stderr) and who answers approvals (the editor).
    pub term: Term,
    /// The events, tapped by the front end.
    pub events: Events,
}

/// A task for an editor's session, set up from the run options exactly as `run` sets one up
/// (provider, sandbox, rules, hooks, MCP, saving); its prompts come later ([`Task::converse`]).
/// A `saved` task keeps its identity (its id, its first prompt); [`Task::restore`] takes up its
/// conversation.
pub(crate) fn session_task(opts: &cli::Options, s: SessionSetup, saved: Option<&Record>) -> Result<Task, String> {
    let SessionSetup { cwd, mcp: client_mcp, mut term, events } = s;
    let opts = cli::Options { cwd: Some(cwd), ..opts.clone() };
    let mut setup = live_setup_for(&opts, saved.map(|r| r.meta.task.clone()).unwrap_or_default())?;
    setup.root = opts.cwd.clone().unwrap_or_default();
    if let Some(Err(e)) = saved.map(|r| setup.dialect.check_resume(&r.messages)) {
        return Err(e);
    }
    let ws = open_workspace(&setup.root, &mut term)?;
    // Guarded as for `run`: the trusted places are the same for every session, and the policy
    // guards them in each session's workspace (each session's policy is current in its turns:
    // `Task::converse`).
    let state_dir = if opts.no_save { None } else { opts.state_dir.clone().or_else(state::default_dir) };
    let trusted = trusted_places(state_dir.as_deref());
    let policy = opts.sandbox.resolve(setup.yolo, ws.root()).map(|mut p| {
        p.guard(&trusted, &Vec::from_iter(project::rules::deciding_file()), ws.root());
        p
    });
    let line = policy.and_then(sandbox::configure)?;
    line.iter().for_each(|l| term.info(l));
    let mut around = surroundings(&opts, &setup, &ws, saved.map(|r| &r.meta), events)?;
    let mcp_wait = opts.mcp_startup_timeout.map_or(mcp::hub::CONNECT_WAIT, clock::clamped_secs);
    let trust = opts.project.trust_workspace.then_some("--trust-workspace");
    around.mcp =
        mcp::sources::start_with(&opts.mcp_config, client_mcp, ws.root(), setup.yolo, trust, mcp_wait, &mut term)?;
    let settings = task_settings(&opts, &setup);
    Ok(Task::new(settings, setup.transport, ws, term, around))
}

/// The loop's settings from the options, the same for `run`, `resume` and an ACP session.
fn task_settings(opts: &cli::Options, setup: &Setup) -> Settings {
    Settings {
        yolo: setup.yolo,
        max_mistakes: opts.max_mistakes,
        retry_delay: clock::clamped_secs(opts.retry_delay),
        max_retries: 3,
        command_timeout: clock::clamped_secs(opts.command_timeout),
        dialect: setup.dialect,
        one_tool_per_reply: opts.one_tool_per_reply,
        images: setup.images,
        focus_chain: !opts.no_focus_chain,
    }
}

/// The context window without `--context-window`: what a local OpenAI-compatible server says
/// (`llm/server_window.rs`), or OpenRouter's model list for a model in none of the tables, else
/// the model facts' fallback — said once, since a local server's window is often far smaller
/// than the fallback.
fn asked_window(setup: &Setup) -> ContextWindow {
    let fallback = context::default_window(setup.provider(), &setup.model, setup.num_ctx);
    let Some(provider) = setup.provider().filter(|p| *p == Provider::OpenAi) else {
        return ContextWindow::new(fallback);
    };
    let (base, model) = (&setup.base_url, &setup.model);
    let shown = ui::redact::without_credentials(base);
    let (said, unsaid) = if llm::server_window::is_local(base) {
        let unsaid = format!("the server at {shown} did not say its size (asked /props, /api/v0/models, /api/show, /v1/models); assuming {fallback} tokens. Pass --context-window N (the server's context size)");
        (llm::server_window::ask(provider, base, model), unsaid)
    } else if llm::providers::is_openrouter(base) && !llm::models::lookup(provider, model).facts.known {
        // OpenRouter's own list knows the models Cline's tables do not (Cline's OpenRouter
        // provider reads every model's facts from it).
        let list = format!("{}/models", shown.trim_end_matches('/'));
        let unsaid = format!("OpenRouter's model list (GET {list}) did not answer for {model}; assuming {fallback} tokens. Pass --context-window N (the model's context length)");
        (llm::server_window::ask_openrouter(base, model), unsaid)
    } else {
        return ContextWindow::new(fallback);
    };
    match said {
        Some(said) => ContextWindow::noted(
            said.tokens,
            format!("Context window: {} tokens, as {} says.", said.tokens, said.source),
        ),
        None => ContextWindow::noted(
            fallback,
            format!("Context window: {unsaid} so history is cut before the server refuses it."),
        ),
    }
}

/// The state directory from `--state-dir` or the default; `secret` is redacted from saves.
pub(crate) fn open_store(opts: &cli::Options, secret: Option<String>) -> Result<Store, String> {
    let dir = opts
        .state_dir
        .clone()
        .or_else(state::default_dir)
        .ok_or("no state directory: neither XDG_STATE_HOME nor HOME is set; pass --state-dir DIR (or --no-save)")?;
    Store::open(&dir, secret)
}

/// A live run: provider, key, URL, workspace; the task the one given, or the `saved` one's.
fn live_setup(opts: &cli::Options, saved: Option<&Record>) -> Result<Setup, String> {
    if let Some(r) = saved {
        return live_setup_for(opts, r.meta.task.clone());
    }
    let piped = cli::stdin_is_piped();
    // Without a task, piped input is the task, as the Cline CLI, `claude -p` and `codex exec`
    // take it (`echo "fix the bug" | agent-min run`).
    let task = match (opts.task.as_deref(), piped) {
        (Some(t), _) => Some(cli::task_text(t, std::io::stdin(), piped)?),
        (None, true) => Some(cli::task_text("-", std::io::stdin(), true)?),
        (None, false) => None,
    };
    let Some(task) = task.filter(|t| !t.trim().is_empty()) else {
        return Err("no task given; usage: agent-min run [OPTIONS] \"<task>\" (see --help), or pipe it: echo \"<task>\" | agent-min run [OPTIONS]; or try --replay agent-min/sessions/demo.jsonl".to_string());
    };
    live_setup_for(opts, task)
}

/// A live run of `task`: provider, key, URL, workspace.
fn live_setup_for(opts: &cli::Options, task: String) -> Result<Setup, String> {
    // A key wiped from the environment by an earlier session's hardening is read as it was.
    let env = |k: &str| redact::withheld(k).filter(|v| !v.trim().is_empty());
    redact::add_from_env();
    // Everything about the provider comes from its declaration (`llm/providers/registry.rs`).
    let declared = llm::providers::registry::PROVIDERS;
    // Without --provider, a server named by --base-url is the provider at its host, else an
    // OpenAI-compatible one; without either, the first whose key is set — but a server named by
    // OPENAI_BASE_URL is not sent OpenRouter's key, nor the task sent to OpenRouter instead.
    let elsewhere = opts.base_url.is_some() || env("OPENAI_BASE_URL").is_some();
    let decl = opts.provider.unwrap_or_else(|| match &opts.base_url {
        Some(url) => llm::providers::registry::by_url(url, env("ANTHROPIC_BASE_URL").as_deref()),
        None => {
            let chosen = |d: &&llm::providers::registry::ProviderDecl| {
                d.chosen_by_key
                    && d.key_var.is_some_and(|v| env(v).is_some())
                    && !(elsewhere && d.base_url_var.is_none())
            };
            declared.iter().find(chosen).unwrap_or(llm::providers::registry::FALLBACK.decl())
        }
    });
    let provider = decl.provider;
    let base_url = opts
        .base_url
        .clone()
        .or_else(|| decl.base_url_var.and_then(env).map(|u| u.trim_end_matches('/').to_string()))
        .unwrap_or_else(|| decl.default_base_url.to_string());
    let api_key = decl.key_var.and_then(env);
    if api_key.is_none() && decl.key_required(&base_url) {
        if opts.provider.is_none() && !elsewhere {
            // No provider asked for and no key found: every variable that would have chosen one
            // (with a server named by URL, only its provider's key is read: its message says so).
            let vars: Vec<&str> = declared.iter().filter(|d| d.chosen_by_key).filter_map(|d| d.key_var).collect();
            return Err(format!(
                "no API key found: set {} (the first set picks the provider), or use --provider ollama, or --base-url URL for a local OpenAI-compatible server (which needs none)",
                cli::or_list(&vars)
            ));
        }
        return Err(decl.missing_key.to_string());
    }
    let model = opts.model.clone().unwrap_or_else(|| decl.default_model.to_string());
    // Ollama's window is what we ask it for: --num-ctx, else --context-window, else 32768.
    let num_ctx =
        opts.num_ctx.or_else(|| opts.context_window.map(|w| w.min(u64::from(u32::MAX)) as u32)).unwrap_or(32768);
    // llama-cpp-python reads only string contents (asked only of a server on this machine).
    // The question runs curl, before the workspace is opened: never one of the workspace's
    // (an activated `.venv/bin` on PATH, say; it would run before the keys are wiped).
    if let Ok(real) = opts.cwd.as_deref().unwrap_or(std::path::Path::new(".")).canonicalize() {
        crate::run::spawn::distrust_programs_in(&real);
    }
    let string_contents = provider == Provider::OpenAi && llm::server_window::takes_only_strings(&base_url);
    let cfg = ApiConfig {
        string_contents,
        declared: decl,
        model: model.clone(),
        base_url: base_url.clone(),
        api_key: api_key.clone(),
        max_tokens: opts.max_tokens,
        facts: llm::models::lookup(provider, &model).facts,
        num_ctx,
        connect_timeout: opts.connect_timeout,
        idle_timeout: opts.idle_timeout,
        thinking_budget: opts.thinking_budget,
        tools: None,
        reasoning_effort: opts.reasoning_effort.clone(),
        // OpenAI's own API: Cline's `openai-native` handler's requests (the Responses API for
        // the models Cline's table says).
        openai_native: provider == Provider::OpenAi && (opts.openai_native || llm::providers::is_openai_api(&base_url)),
        no_reasoning_summary: false,
        no_stream: false,
        no_images: opts.no_images,
    };
    // A server sent string contents has no place for an image: its model is told it takes none.
    let images = cfg.facts.takes_images() && !string_contents && !opts.no_images;
    let root = opts.cwd.clone().unwrap_or_else(|| PathBuf::from("."));
    Ok(Setup {
        images,
        dialect: dialect::of_run(
            opts.tool_calls.native(provider, &model),
            !opts.no_recover_text_calls,
            opts.tool_calls != crate::run::native::ToolCalls::Xml,
        ),
        transport: Box::new(llm::Http::new(cfg)),
        root,
        task,
        yolo: opts.yolo,
        declared: Some(decl),
        model,
        base_url,
        api_key,
        num_ctx,
        temporary: false,
    })
}

/// A new directory for a replay's workspace in the temporary directory, this user's only
/// (0700): made here, never one that already exists (a name in a shared `/tmp` can be taken,
/// or be a link someone else planted).
fn new_temporary_workspace() -> Result<PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let mut last = None;
    for attempt in 0..100u32 {
        let name =
            format!("agent-min-replay-{}-{}-{}", now.as_secs(), std::process::id(), now.subsec_nanos() ^ attempt);
        let dir = std::env::temp_dir().join(name);
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(format!("cannot create a workspace in {}: {e}", dir.display())),
        }
    }
    Err(format!(
        "cannot create a workspace in {}: {}",
        std::env::temp_dir().display(),
        last.map_or(String::new(), |e| e.to_string())
    ))
}

/// A replay: the recording, and its workspace (a fresh seeded temp dir unless `--cwd`).
fn replay_setup(opts: &cli::Options, file: &std::path::Path, term: &mut Term) -> Result<Setup, String> {
    let rec = replay::Recording::load(file)?;
    let given = opts.task.as_deref().map(|t| cli::task_text(t, std::io::stdin(), cli::stdin_is_piped())).transpose()?;
    let task = given.or_else(|| rec.task.clone()).ok_or("the recording has no task; give one as an argument")?;
    let (root, yolo) = match &opts.cwd {
        Some(dir) => (dir.clone(), opts.yolo),
        None => (new_temporary_workspace()?, true),
    };
    if let Err(e) = rec.seed(&root) {
        // A workspace made for this replay goes with it (a recording it refused leaves nothing).
        if opts.cwd.is_none() && !opts.keep {
            let _ = std::fs::remove_dir_all(&root);
        }
        return Err(format!("cannot write the recording's files into {}: {e}", root.display()));
    }
    term.line(Style::Bold, &format!("▶ REPLAY of {} — recorded model replies, real loop and tools", file.display()));
    term.info(&format!(
        "  workspace: {}{}",
        root.display(),
        match (opts.cwd.is_none(), opts.keep) {
            (true, false) => " (temporary: removed at the end, pass --keep to keep it; everything inside is approved)",
            (true, true) => " (temporary, kept after the end: --keep; everything inside is approved)",
            (false, _) => "",
        }
    ));
    // A recording's replies are read as they were made: in the native dialect when its streams
    // hold native calls (`--tool-calls` says otherwise), else as Cline's XML.
    let native = match opts.tool_calls {
        crate::run::native::ToolCalls::Native => true,
        crate::run::native::ToolCalls::Xml => false,
        crate::run::native::ToolCalls::Auto => rec.has_native_calls(),
    };
    let transport = rec.into_transport(Duration::from_millis(opts.replay_delay_ms));
    Ok(Setup {
        transport: Box::new(transport),
        root,
        task,
        yolo,
        declared: None,
        model: "replay".to_string(),
        base_url: file.display().to_string(),
        api_key: None,
        num_ctx: 32768,
        temporary: opts.cwd.is_none(),
        dialect: dialect::of_run(native, !opts.no_recover_text_calls, native),
        images: true, // a recording's model is asked nothing
    })
}
