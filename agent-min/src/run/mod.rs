//! `agent-min run`: a minimal Cline-style coding agent (issue 5).
//!
//! One [`task::Task`] per run drives Cline's recursive loop — request, stream, parse, present,
//! execute, recurse — over a model API reached only through a `curl` subprocess
//! ([`curl`], [`providers`]), or over a recorded session ([`replay`]).

pub mod api;
pub mod cli;
pub mod clock;
pub mod curl;
pub mod diff;
pub mod fsx;
pub mod interrupt;
pub mod paths;
pub mod preview;
pub mod prompt;
pub mod providers;
pub mod replay;
pub mod sse;
pub mod stream;
pub mod task;
pub mod term;
pub mod tools;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use api::Transport;
use paths::Workspace;
use providers::{ApiConfig, Provider};
use task::{End, Settings, Task};
use term::{Style, Term};

/// Entry point of `agent-min run`.
pub fn main(args: Vec<OsString>) -> ExitCode {
    let opts = match cli::parse(args) {
        Ok(o) => o,
        Err(e) => return usage_error(&e),
    };
    if opts.help {
        print!("{}", cli::HELP);
        return ExitCode::SUCCESS;
    }
    interrupt::install();
    let mut term = Term::new();
    let setup = match &opts.replay {
        Some(file) => replay_setup(&opts, file, &mut term),
        None => live_setup(&opts),
    };
    let (transport, root, task_text, yolo) = match setup {
        Ok(s) => s,
        Err(e) => return usage_error(&e),
    };
    let ws = match Workspace::new(&root) {
        Ok(ws) => ws,
        Err(e) => {
            return usage_error(&format!(
                "the workspace {} is not usable ({e}); pass an existing directory with --cwd",
                root.display()
            ))
        }
    };
    let settings = Settings {
        yolo,
        max_mistakes: opts.max_mistakes,
        max_turns: opts.max_turns,
        retry_delay: Duration::from_secs_f64(opts.retry_delay),
        max_retries: 3,
        command_timeout: Duration::from_secs_f64(opts.command_timeout),
    };
    let replaying = opts.replay.is_some();
    let end = Task::new(settings, transport, ws, term).run(&task_text);
    if replaying {
        Term::new().line(Style::Bold, "▶ End of replay: no model was called; the tools ran for real.");
    }
    match end {
        End::Completed(_) => ExitCode::SUCCESS,
        End::Failed(why) => {
            eprintln!("agent-min: task failed: {why}");
            ExitCode::from(1)
        }
    }
}

fn usage_error(msg: &str) -> ExitCode {
    eprintln!("agent-min run: {msg}");
    ExitCode::from(2)
}

type Setup = (Box<dyn Transport>, PathBuf, String, bool);

/// A live run: provider, key, URL, workspace.
fn live_setup(opts: &cli::Options) -> Result<Setup, String> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let Some(task) = opts.task.clone().filter(|t| !t.trim().is_empty()) else {
        return Err("no task given; usage: agent-min run [OPTIONS] \"<task>\" (see --help), or try --replay agent-min/sessions/demo.jsonl".to_string());
    };
    let provider = opts.provider.unwrap_or(if env("ANTHROPIC_API_KEY").is_some() {
        Provider::Anthropic
    } else {
        Provider::OpenAi
    });
    let base_url = opts
        .base_url
        .clone()
        .or_else(|| (provider == Provider::OpenAi).then(|| env("OPENAI_BASE_URL")).flatten())
        .unwrap_or_else(|| provider.default_base_url().to_string());
    let api_key = match provider {
        Provider::Anthropic => Some(env("ANTHROPIC_API_KEY").ok_or(
            "ANTHROPIC_API_KEY is not set; export your key, or choose another provider with --provider openai|ollama",
        )?),
        Provider::OpenAi => {
            let key = env("OPENAI_API_KEY");
            if key.is_none() && base_url.contains("api.openai.com") {
                return Err("OPENAI_API_KEY is not set; export your key, or point --base-url at a local OpenAI-compatible server (which needs none)".to_string());
            }
            key
        }
        Provider::Ollama => None,
    };
    let cfg = ApiConfig {
        provider,
        model: opts.model.clone().unwrap_or_else(|| provider.default_model().to_string()),
        base_url,
        api_key,
        max_tokens: opts.max_tokens,
        num_ctx: opts.num_ctx,
        connect_timeout: opts.connect_timeout,
        idle_timeout: opts.idle_timeout,
    };
    let root = opts.cwd.clone().unwrap_or_else(|| PathBuf::from("."));
    Ok((Box::new(api::Http { cfg }), root, task, opts.yolo))
}

/// A replay: the recording, and its workspace (a fresh seeded temp dir unless `--cwd`).
fn replay_setup(opts: &cli::Options, file: &std::path::Path, term: &mut Term) -> Result<Setup, String> {
    let rec = replay::Recording::load(file)?;
    let task =
        opts.task.clone().or_else(|| rec.task.clone()).ok_or("the recording has no task; give one as an argument")?;
    let (root, yolo) = match &opts.cwd {
        Some(dir) => (dir.clone(), opts.yolo),
        None => {
            let secs =
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
            let dir = std::env::temp_dir().join(format!("agent-min-replay-{secs}-{}", std::process::id()));
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("cannot create a workspace in {}: {e}", dir.display()))?;
            (dir, true)
        }
    };
    rec.seed(&root).map_err(|e| format!("cannot write the recording's files into {}: {e}", root.display()))?;
    term.line(Style::Bold, &format!("▶ REPLAY of {} — recorded model replies, real loop and tools", file.display()));
    term.info(&format!(
        "  workspace: {}{}",
        root.display(),
        if opts.cwd.is_none() { " (temporary; everything inside is approved)" } else { "" }
    ));
    let transport = rec.into_transport(Duration::from_millis(opts.replay_delay_ms));
    Ok((Box::new(transport), root, task, yolo))
}
