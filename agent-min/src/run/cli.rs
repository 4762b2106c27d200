//! Command-line options of `agent-min run`.

use std::ffi::OsString;
use std::path::PathBuf;

/// The `--help` text.
pub(crate) fn help() -> &'static str {
    crate::run::texts::AGENT_MIN_RUN_TXT.get()
}

/// The `--help` text of `agent-min resume`.
pub(crate) fn resume_help() -> &'static str {
    crate::run::texts::AGENT_MIN_RESUME_TXT.get()
}

/// Parsed options.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    /// The task text.
    pub task: Option<String>,
    /// `--provider`: the declaration it names (`openrouter` is OpenAI's wire format with its
    /// own URL and key).
    pub provider: Option<&'static crate::run::llm::providers::registry::ProviderDecl>,
    /// `--provider openai-native`: the OpenAI-compatible base URL speaks OpenAI's own API.
    pub openai_native: bool,
    /// `--model`.
    pub model: Option<String>,
    /// `--base-url`.
    pub base_url: Option<String>,
    /// `--yolo`.
    pub yolo: bool,
    /// `--cwd`.
    pub cwd: Option<PathBuf>,
    /// `--max-mistakes`.
    pub max_mistakes: u32,
    /// `--max-turns`.
    pub max_turns: Option<u32>,
    /// `--max-tokens` (`None`: the provider's default, as Cline's).
    pub max_tokens: Option<u32>,
    /// `--one-tool-per-reply`: Cline's parallel tool calling off.
    pub one_tool_per_reply: bool,
    /// `--no-focus-chain`: Cline's focus chain (`task_progress`) off.
    pub no_focus_chain: bool,
    /// `--num-ctx` (default: `--context-window`, else 32768).
    pub num_ctx: Option<u32>,
    /// `--tool-calls`.
    pub tool_calls: crate::run::native::ToolCalls,
    /// `--no-recover-text-calls`.
    pub no_recover_text_calls: bool,
    /// `--no-images`.
    pub no_images: bool,
    /// `--thinking-budget` tokens.
    pub thinking_budget: Option<u32>,
    /// `--reasoning-effort`.
    pub reasoning_effort: Option<String>,
    /// `--command-timeout` seconds.
    pub command_timeout: f64,
    /// `--retry-delay` seconds.
    pub retry_delay: f64,
    /// `--connect-timeout` seconds.
    pub connect_timeout: u32,
    /// `--idle-timeout` seconds.
    pub idle_timeout: u32,
    /// `--replay`.
    pub replay: Option<PathBuf>,
    /// `--replay-delay` milliseconds.
    pub replay_delay_ms: u64,
    /// `--help` was asked for.
    pub help: bool,
    /// `--json`.
    pub json: bool,
    /// `--state-dir`.
    pub state_dir: Option<PathBuf>,
    /// `--no-save`.
    pub no_save: bool,
    /// `--no-checkpoints`.
    pub no_checkpoints: bool,
    /// `--context-window`.
    pub context_window: Option<u64>,
    /// `--max-cost` in dollars.
    pub max_cost: Option<f64>,
    /// `--timeout`.
    pub timeout: Option<std::time::Duration>,
    /// `--price-input`, `--price-output`, `--price-cache-read`, `--price-cache-write`.
    pub prices: [Option<f64>; 4],
    /// `--last` (resume).
    pub last: bool,
    /// What the person says with a resume (its argument after the id, or after `--last`; `-`
    /// reads it from standard input).
    pub words: Option<String>,
    /// `--sandbox`, `--sandbox-allow-write`, `--sandbox-network`, `--env-keep`, `--env-drop`.
    pub sandbox: crate::run::sandbox::Choice,
    /// `--no-rules`, `--rules FILE`…, `--no-hooks`, `--hook-timeout`, `--trust-workspace`.
    pub project: crate::run::project::Flags,
    /// `--keep`: keep a replay's temporary workspace.
    pub keep: bool,
    /// `--version` was asked for.
    pub version: bool,
    /// `--mcp-config FILE`, repeatable.
    pub mcp_config: Vec<PathBuf>,
    /// `-o` / `--output-last-message FILE`: the final result is written there.
    pub output_last_message: Option<PathBuf>,
    /// `--output-schema FILE`: the final result must be JSON valid against this schema.
    pub output_schema: Option<PathBuf>,
    /// `--profile NAME` of the config file.
    pub profile: Option<String>,
    /// `--no-config`: read no config file.
    pub no_config: bool,
    /// `--mcp-startup-timeout` seconds (default: each server's own, else 10).
    pub mcp_startup_timeout: Option<f64>,
}

/// Most bytes of a task read from standard input (`-`).
pub(crate) const MAX_STDIN_TASK: u64 = 1 << 20;

/// The task as given: the argument itself, or standard input when it is `-` (at most
/// [`MAX_STDIN_TASK`] bytes of UTF-8, without its final line ending). With a task argument,
/// piped standard input (`piped`: a pipe or a file, never a terminal) is context: it follows the
/// task after an empty line, trimmed, as the Cline CLI joins them. Approvals are then asked on
/// the controlling terminal, if there is one.
pub(crate) fn task_text(arg: &str, stdin: impl std::io::Read, piped: bool) -> Result<String, String> {
    if arg != "-" {
        if !piped {
            return Ok(arg.to_string());
        }
        let context = read_stdin(stdin, "the context on standard input")?;
        let context = context.trim();
        return Ok(if context.is_empty() { arg.to_string() } else { format!("{arg}\n\n{context}") });
    }
    let text = read_stdin(stdin, "the task on standard input")?;
    // The file's final line ending is not part of the task.
    Ok(text.strip_suffix('\n').map(|t| t.strip_suffix('\r').unwrap_or(t)).unwrap_or(&text).to_string())
}

/// At most [`MAX_STDIN_TASK`] bytes of UTF-8 text from standard input.
fn read_stdin(stdin: impl std::io::Read, what: &str) -> Result<String, String> {
    read_stdin_telling(stdin, what, STDIN_QUIET, &mut |line| eprintln!("{line}"))
}

/// How long standard input may give nothing before the person is told what is waited for.
const STDIN_QUIET: std::time::Duration = std::time::Duration::from_secs(3);

/// [`read_stdin`], saying once through `tell` when nothing came for `quiet`: a pipe left open
/// (`sleep 60 | agent-min run …`, a `while read` loop's file) would otherwise wait unexplained.
fn read_stdin_telling(
    stdin: impl std::io::Read,
    what: &str,
    quiet: std::time::Duration,
    tell: &mut (dyn FnMut(String) + Send),
) -> Result<String, String> {
    use std::io::Read;
    let (first_came, waited) = std::sync::mpsc::channel::<()>();
    let note = match std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        true => format!("agent-min: reading {what} from the terminal; end it with Ctrl-D"),
        false => format!(
            "agent-min: waiting for {what} (nothing came for {} s); if none is coming, run with </dev/null",
            quiet.as_secs_f64()
        ),
    };
    let mut buf = Vec::new();
    let mut stdin = stdin.take(MAX_STDIN_TASK + 1);
    let mut first = [0u8; 8192];
    let n = std::thread::scope(|scope| {
        scope.spawn(move || {
            if waited.recv_timeout(quiet) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                tell(note);
            }
        });
        let n = stdin.read(&mut first);
        drop(first_came);
        n
    })
    .map_err(|e| format!("cannot read {what}: {e}"))?;
    buf.extend_from_slice(&first[..n]);
    stdin.read_to_end(&mut buf).map_err(|e| format!("cannot read {what}: {e}"))?;
    if buf.len() as u64 > MAX_STDIN_TASK {
        return Err(format!("{what} is over {MAX_STDIN_TASK} bytes; shorten it or point the model at a file"));
    }
    String::from_utf8(buf).map_err(|_| format!("{what} is not UTF-8 text"))
}

/// Whether standard input is piped data (a pipe or a regular file), as the Cline CLI decides:
/// not a terminal, not `/dev/null` or another device, not closed.
pub(crate) fn stdin_is_piped() -> bool {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        return false;
    }
    match rustix::fs::fstat(std::io::stdin()) {
        Ok(st) => {
            let kind = rustix::fs::FileType::from_raw_mode(st.st_mode);
            kind == rustix::fs::FileType::Fifo || kind == rustix::fs::FileType::RegularFile
        }
        Err(_) => false,
    }
}

/// Parses the arguments after `run`, after those of the config file (unless `--no-config`).
/// Errors are one line naming the problem and the fix.
pub(crate) fn parse(args: Vec<OsString>) -> Result<Options, String> {
    parse_with(with_config(args, crate::run::config::default_path())?, false)
}

/// What the config file says (its top level), for the commands that read some of it without
/// running a task: `history` and `checkpoints` its `state_dir`, `mcp list` its `mcp_config`,
/// so that they look where `run` saved or started them. A file that does not parse is said in
/// a warning on stderr (naming the command) and passed over: these commands work without it.
pub(crate) fn from_config_file(command: &str) -> Options {
    match with_config(Vec::new(), crate::run::config::default_path()).and_then(|args| parse_with(args, false)) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("agent-min {command}: warning: the config file is passed over: {e}");
            Options::default()
        }
    }
}

/// `args` preceded by what the config file at `file` says (see [`crate::run::config`]), the
/// file's own options checked on their own so an error names it.
fn with_config(args: Vec<OsString>, file: Option<PathBuf>) -> Result<Vec<OsString>, String> {
    let (mut profile, mut no_config, mut it) = (None, false, args.iter());
    while let Some(a) = it.next() {
        match a.to_str() {
            // The help and the version need no config file: one that no longer parses (an
            // option renamed since) kept `--help` from showing the fix its error pointed to.
            Some("-h" | "--help" | "-V" | "--version") => return Ok(args),
            Some("--no-config") => no_config = true,
            Some("--profile") => profile = it.next().map(|p| p.to_string_lossy().into_owned()),
            Some(s) if s.starts_with("--profile=") => profile = Some(s["--profile=".len()..].to_string()),
            Some("--") => break,
            _ => {}
        }
    }
    let Some(file) = file.filter(|_| !no_config) else {
        return match (no_config, profile) {
            (false, Some(p)) => {
                Err(format!("--profile {p:?}: no config file (neither XDG_CONFIG_HOME nor HOME is set)"))
            }
            _ => Ok(args),
        };
    };
    // A value the option leaves unread becomes the task (`--yolo false`; `--auto-approve` and
    // `--thinking` read a value only when it is one of theirs).
    let refuses = |flag: &str, value: &str| {
        let given = vec![format!("--{flag}").into(), value.into()];
        parse_with(given, false).is_ok_and(|o| o.task.as_deref() == Some(value))
    };
    let from_file = crate::run::config::arguments(&file, profile.as_deref(), &refuses)?;
    match parse_with(from_file.clone(), false) {
        Err(e) => return Err(format!("in the config file {}: {e}", file.display())),
        Ok(o) if o.task.is_some() => {
            return Err(format!(
                "in the config file {}: {:?} is not the value of an option; a task cannot come from the config file",
                file.display(),
                o.task.unwrap_or_default()
            ))
        }
        Ok(_) => {}
    }
    Ok(from_file.into_iter().chain(args).collect())
}

/// Parses the arguments after `resume`: a task id and what to say with it (`--last` and what
/// to say), `--replay` not allowed.
pub(crate) fn parse_resume(args: Vec<OsString>) -> Result<Options, String> {
    let given = parse_with(args.clone(), true)?;
    let mut o = parse_with(with_config(args, crate::run::config::default_path())?, true)?;
    // The saved task's provider, model, URL and workspace hold unless the command line gives
    // them again: a config file's are for new tasks (its provider's key went to the server the
    // task was saved with, asking it for another model).
    if given.provider.is_none() {
        (o.provider, o.openai_native) = (None, false);
    }
    if given.model.is_none() {
        o.model = None;
    }
    if given.base_url.is_none() {
        o.base_url = None;
    }
    // (With `--last` the file's `cwd` says where to take the latest task from: that task's.)
    if given.cwd.is_none() && !o.last {
        o.cwd = None;
    }
    if o.replay.is_some() {
        return Err("--replay cannot be resumed (replays are not saved); run it again instead".to_string());
    }
    // With --last, the one argument is what to say (`codex exec resume --last "PROMPT"`).
    if o.last && o.task.is_some() {
        if o.words.is_some() {
            return Err(
                "give either a task id or --last, not both (and what to say as one quoted argument)".to_string()
            );
        }
        let said = o.task.take().unwrap_or_default();
        if looks_like_a_task_id(&said) {
            return Err(format!(
                "{said:?} looks like a task id: give either a task id or --last, not both (to say it to the model, put it in a sentence)"
            ));
        }
        o.words = Some(said);
    }
    if !o.last && o.task.is_none() && !o.help {
        return Err("which task? give its id (see `agent-min history`) or --last".to_string());
    }
    Ok(o)
}

/// Whether `s` is a saved task's id or the start of one (`20250102-030405-a1b2c3`: eight
/// digits, then six, then six hex digits, each after a `-`).
fn looks_like_a_task_id(s: &str) -> bool {
    let mut parts = s.split('-');
    let date = parts.next().unwrap_or("");
    let time = parts.next().unwrap_or("");
    let tail = parts.next().unwrap_or("");
    date.len() == 8
        && date.bytes().all(|b| b.is_ascii_digit())
        && time.len() <= 6
        && time.bytes().all(|b| b.is_ascii_digit())
        && tail.len() <= 6
        && tail.bytes().all(|b| b.is_ascii_hexdigit())
        && (tail.is_empty() || time.len() == 6)
        && parts.next().is_none()
}

/// The next raw argument, taken when `take` says it is this option's value (an option whose
/// value may be left out, as the Cline CLI reads `--auto-approve` and `--thinking`).
fn next_raw_if(p: &mut lexopt::Parser, take: impl FnOnce(&str) -> bool) -> Option<String> {
    let mut raw = p.try_raw_args()?;
    raw.next_if(|a| a.to_str().is_some_and(take)).and_then(|a| a.into_string().ok())
}

/// What the Cline CLI's options that agent-min lacks are here, to say with the error.
fn cline_cli_hint(arg: &lexopt::Arg) -> &'static str {
    use lexopt::Arg::{Long, Short};
    match arg {
        Short('p') | Long("plan") => "agent-min has no plan mode (it always acts; --yolo or approvals decide what runs); ",
        Long("id") => "to go on with a saved task: agent-min resume ID; ",
        Short('k') | Long("key") => "the key is read from the provider's variable (ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY, OLLAMA_API_KEY), never from the command line; ",
        Long("acp") => "for editors: agent-min acp; ",
        Short('c') => "the working directory is -C DIR or --cwd DIR here; ",
        Short('a') | Long("act") => "agent-min always acts (there is no plan mode to leave): drop it; ",
        // codex exec's and claude -p's everyday flags, by what does their job here.
        Long("full-auto" | "dangerously-skip-permissions" | "dangerously-bypass-approvals-and-sandbox") => {
            "to approve edits and commands inside the workspace: -y / --yolo; "
        }
        Long("output-format") => "for events as JSON lines: --json (the result alone is stdout's when it is not a terminal); ",
        Long("continue" | "resume") => "to go on with a saved task: agent-min resume --last (or resume ID); ",
        Long("append-system-prompt") => "for your own instructions: --rules FILE, or a .clinerules file; ",
        _ => "",
    }
}

fn parse_with(args: Vec<OsString>, resume: bool) -> Result<Options, String> {
    use lexopt::prelude::*;
    let mut o = Options {
        max_mistakes: 3,
        command_timeout: 600.0,
        retry_delay: 2.0,
        connect_timeout: 30,
        idle_timeout: 300,
        replay_delay_ms: 15,
        ..Options::default()
    };
    // An argument that starts with '-' and holds a space is a task, not an option.
    let dashed_task = args.iter().any(|a| a.to_str().is_some_and(|s| s.starts_with('-') && s.contains(' ')));
    let mut p = lexopt::Parser::from_args(args);
    let err = |e: lexopt::Error| e.to_string();
    while let Some(arg) = p.next().map_err(err)? {
        match arg {
            Short('h') | Long("help") => o.help = true,
            Short('V') | Long("version") => o.version = true,
            Long("keep") => o.keep = true,
            Short('P') | Long("provider") => {
                let v = p.value().map_err(err)?.string().map_err(err)?;
                o.provider = Some(
                    crate::run::llm::providers::registry::named(&v)
                        .ok_or_else(|| format!("unknown provider {v:?}; use --provider {}", provider_names()))?,
                );
                o.openai_native = v == crate::run::llm::providers::registry::NATIVE_OPENAI;
            }
            Short('m') | Long("model") => o.model = Some(p.value().map_err(err)?.string().map_err(err)?),
            Long("base-url") => o.base_url = Some(p.value().map_err(err)?.string().map_err(err)?),
            Short('y') | Long("yolo") => o.yolo = true,
            // `--cd` is codex's spelling; `--skip-git-repo-check` its consent to a folder that is
            // no git repository, which agent-min never asks for.
            Short('C') | Long("cwd" | "cd") => o.cwd = Some(p.value().map_err(err)?.into()),
            Long("skip-git-repo-check") => {}
            Short('o') | Long("output-last-message") => o.output_last_message = Some(p.value().map_err(err)?.into()),
            Long("output-schema") => o.output_schema = Some(p.value().map_err(err)?.into()),
            Long("profile") => o.profile = Some(p.value().map_err(err)?.string().map_err(err)?),
            Long("no-config") => o.no_config = true,
            Long("mcp-startup-timeout") => o.mcp_startup_timeout = Some(seconds(&mut p, "--mcp-startup-timeout")?),
            // `--retries`: the Cline CLI's name for it.
            Long(f @ ("max-mistakes" | "retries")) => {
                let f = format!("--{f}");
                o.max_mistakes = number(&mut p, &f)?
            }
            Long("max-turns") => o.max_turns = Some(number(&mut p, "--max-turns")?),
            Long("max-tokens") => o.max_tokens = Some(number(&mut p, "--max-tokens")?),
            Long("one-tool-per-reply") => o.one_tool_per_reply = true,
            Long("no-focus-chain") => o.no_focus_chain = true,
            Long("num-ctx") => o.num_ctx = Some(number(&mut p, "--num-ctx")?),
            Long("tool-calls") => {
                let v = p.value().map_err(err)?.string().map_err(err)?;
                o.tool_calls = crate::run::native::ToolCalls::parse(&v)
                    .ok_or_else(|| format!("unknown --tool-calls {v:?}; use xml, native or auto"))?;
            }
            Long("thinking-budget") => {
                let n: u32 = number(&mut p, "--thinking-budget")?;
                if n < 1024 {
                    return Err(format!("--thinking-budget {n} is too small; Anthropic needs at least 1024 tokens"));
                }
                o.thinking_budget = Some(n);
            }
            Long("auto-approve") => {
                // The Cline CLI's: `true` (also bare) approves every tool, as --yolo.
                let boolean = |a: &str| matches!(a.to_lowercase().as_str(), "true" | "false");
                let v = p.optional_value().map(|v| v.to_string_lossy().to_lowercase());
                if let Some(v) = v.as_deref().filter(|v| !boolean(v)) {
                    return Err(format!("--auto-approve takes true or false, got {v:?}"));
                }
                let v = v.or_else(|| next_raw_if(&mut p, boolean));
                o.yolo = v.is_none_or(|v| v.eq_ignore_ascii_case("true"));
            }
            Long(f @ ("reasoning-effort" | "thinking")) => {
                let f = f.to_string();
                // The Cline CLI's `--thinking`, bare: medium.
                let v = match p.optional_value() {
                    Some(v) => v.string().map_err(err)?,
                    // Only a level is taken as its value: a task after a bare `--thinking` (the
                    // config file's `thinking = true` goes before the command line) stays the task.
                    None if f == "thinking" => {
                        let level = |a: &str| crate::run::llm::providers::REASONING_EFFORTS.contains(&a);
                        next_raw_if(&mut p, level).unwrap_or("medium".into())
                    }
                    None => p.value().map_err(err)?.string().map_err(err)?,
                };
                if !crate::run::llm::providers::REASONING_EFFORTS.contains(&v.as_str()) {
                    return Err(format!(
                        "unknown --{f} {v:?}; use one of {} (Cline's values)",
                        crate::run::llm::providers::REASONING_EFFORTS.join(", ")
                    ));
                }
                o.reasoning_effort = Some(v);
            }
            Long("json") => o.json = true,
            Long("state-dir") => o.state_dir = Some(absolute(p.value().map_err(err)?.into())?),
            Long("no-save") => o.no_save = true,
            Long("no-checkpoints") => o.no_checkpoints = true,
            Long("no-recover-text-calls") => o.no_recover_text_calls = true,
            Long("no-images") => o.no_images = true,
            Long("context-window") => {
                let n: u64 = number(&mut p, "--context-window")?;
                if n < 1024 {
                    return Err(format!(
                        "--context-window {n} is too small; give the model's window in tokens (e.g. 128000)"
                    ));
                }
                o.context_window = Some(n);
            }
            Long("max-cost") => o.max_cost = Some(dollars(&mut p, "--max-cost")?),
            Short('t') | Long("timeout") => {
                let v = p.value().map_err(err)?;
                o.timeout = Some(crate::run::budget::limits::parse_duration(&v.to_string_lossy())?);
            }
            Long("price-input") => o.prices[0] = Some(dollars(&mut p, "--price-input")?),
            Long("price-output") => o.prices[1] = Some(dollars(&mut p, "--price-output")?),
            Long("price-cache-read") => o.prices[2] = Some(dollars(&mut p, "--price-cache-read")?),
            Long("price-cache-write") => o.prices[3] = Some(dollars(&mut p, "--price-cache-write")?),
            Long("last") if resume => o.last = true,
            Long("no-rules") => o.project.no_rules = true,
            Long("no-hooks") => o.project.no_hooks = true,
            Long("trust-workspace") => o.project.trust_workspace = true,
            Long(f @ ("rules" | "hook-timeout")) => {
                let name = f.to_string();
                o.project.set(&name, Some(p.value().map_err(err)?))?;
            }
            Long("mcp-config") => o.mcp_config.push(p.value().map_err(err)?.into()),
            Long("command-timeout") => o.command_timeout = seconds(&mut p, "--command-timeout")?,
            Long("retry-delay") => o.retry_delay = seconds(&mut p, "--retry-delay")?,
            Long("connect-timeout") => o.connect_timeout = number(&mut p, "--connect-timeout")?,
            Long("idle-timeout") => o.idle_timeout = number(&mut p, "--idle-timeout")?,
            Long("replay") => o.replay = Some(p.value().map_err(err)?.into()),
            Long(f @ ("sandbox" | "sandbox-allow-write" | "sandbox-network" | "env-keep" | "env-drop")) => {
                let f = f.to_string();
                crate::run::sandbox::flag(&mut o.sandbox, &f, &mut p)?
            }
            Long("replay-delay") => o.replay_delay_ms = number::<u64>(&mut p, "--replay-delay")?,
            Value(v) if o.task.is_none() => o.task = Some(v.string().map_err(err)?),
            Value(v) if resume && o.words.is_none() => o.words = Some(v.string().map_err(err)?),
            Value(v) if resume => {
                return Err(format!(
                    "unexpected extra argument {v:?}; give a task id and what to say, in one quoted argument"
                ))
            }
            Value(v) => {
                return Err(format!("unexpected extra argument {:?}; put the whole task in one quoted argument", v))
            }
            other => {
                let hint = match cline_cli_hint(&other) {
                    "" if dashed_task => {
                        "a task that starts with '-' goes after `--`: agent-min run -- \"-v is broken\"; "
                    }
                    hint => hint,
                };
                return Err(format!("{}; {hint}see `agent-min run --help`", other.unexpected()));
            }
        }
    }
    if o.max_mistakes == 0 {
        return Err("--max-mistakes must be at least 1".to_string());
    }
    if o.max_turns == Some(0) {
        return Err("--max-turns must be at least 1 (it counts the requests to the model)".to_string());
    }
    Ok(o)
}

fn number<T: std::str::FromStr>(p: &mut lexopt::Parser, flag: &str) -> Result<T, String> {
    let v = p.value().map_err(|e| e.to_string())?;
    let s = v.to_string_lossy();
    s.parse().map_err(|_| format!("{flag} expects a whole number, got {s:?}"))
}

fn dollars(p: &mut lexopt::Parser, flag: &str) -> Result<f64, String> {
    let v = p.value().map_err(|e| e.to_string())?;
    let s = v.to_string_lossy();
    match s.trim_start_matches('$').parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("{flag} expects an amount in US dollars like 0.50, got {s:?}")),
    }
}

fn seconds(p: &mut lexopt::Parser, flag: &str) -> Result<f64, String> {
    let v = p.value().map_err(|e| e.to_string())?;
    let s = v.to_string_lossy();
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("{flag} expects a number of seconds, got {s:?}")),
    }
}

/// The declared providers' names, as a sentence lists them ("a, b or c").
fn provider_names() -> String {
    use crate::run::llm::providers::registry::{NATIVE_OPENAI, PROVIDERS};
    // `openai-native` (Cline's handler for OpenAI's own API) is named too: it is not `openai`'s
    // plain alias, it asks the Responses API for the models Cline asks it for.
    let names: Vec<&str> = PROVIDERS.iter().map(|d| d.name).chain([NATIVE_OPENAI]).collect();
    or_list(&names)
}

/// `items` as a sentence lists them: "a, b or c".
pub(crate) fn or_list(items: &[&str]) -> String {
    match items.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// `path` made absolute against the current directory, now: the shadow repository's git runs
/// in the workspace, where a relative state directory would name another folder.
pub(crate) fn absolute(path: PathBuf) -> Result<PathBuf, String> {
    std::path::absolute(&path).map_err(|e| format!("cannot make {} absolute ({e})", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::llm::providers::Provider;

    fn args(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    #[test]
    fn parses_flags_and_task() {
        let o = parse(args(&["--provider", "openai", "--yolo", "--max-turns", "5", "do it"])).unwrap();
        assert_eq!(o.provider.map(|d| d.provider), Some(Provider::OpenAi));
        assert!(o.yolo);
        assert_eq!(o.max_turns, Some(5));
        assert_eq!(o.task.as_deref(), Some("do it"));
        assert_eq!(o.max_mistakes, 3);
    }

    #[test]
    fn errors_name_the_problem() {
        assert!(parse(args(&["--provider", "foo"])).unwrap_err().contains("unknown provider"));
        assert!(parse(args(&["--max-turns", "x"])).unwrap_err().contains("--max-turns expects"));
        assert!(parse(args(&["a", "b"])).unwrap_err().contains("one quoted argument"));
        assert!(parse(args(&["--bogus"])).unwrap_err().contains("--bogus"));
        assert!(parse(args(&["--tool-calls", "json"])).unwrap_err().contains("xml, native or auto"));
        assert!(parse(args(&["--thinking-budget", "100"])).unwrap_err().contains("at least 1024"));
        assert!(parse(args(&["--reasoning-effort", "max"])).unwrap_err().contains("none, low, medium, high, xhigh"));
        let o = parse(args(&["--tool-calls", "native", "--thinking-budget", "2048", "--reasoning-effort", "low", "t"]))
            .unwrap();
        assert_eq!(o.tool_calls, crate::run::native::ToolCalls::Native);
        assert_eq!((o.thinking_budget, o.reasoning_effort.as_deref()), (Some(2048), Some("low")));
        assert!(parse(args(&["--timeout", "soon"])).unwrap_err().contains("--timeout expects"));
        assert!(parse(args(&["--max-cost", "lots"])).unwrap_err().contains("--max-cost expects"));
        assert!(parse(args(&["--last"])).is_err(), "--last is only for resume");
        assert!(parse_resume(args(&[])).unwrap_err().contains("--last"));
        assert!(parse_resume(args(&["a", "b", "--last"])).unwrap_err().contains("not both"));
        assert!(parse_resume(args(&["a", "b", "c"])).unwrap_err().contains("one quoted argument"));
    }

    /// As `codex exec resume`: an id and what to say, or `--last` and what to say.
    #[test]
    fn resume_takes_what_to_say_after_the_id_or_with_last() {
        let o = parse_resume(args(&["20250102", "go on with the tests"])).unwrap();
        assert_eq!((o.task.as_deref(), o.words.as_deref()), (Some("20250102"), Some("go on with the tests")));
        for given in [&["--last", "go on"][..], &["go on", "--last"][..]] {
            let o = parse_resume(args(given)).unwrap();
            assert_eq!((o.task.as_deref(), o.words.as_deref(), o.last), (None, Some("go on"), true));
        }
        let o = parse_resume(args(&["--last"])).unwrap();
        assert_eq!((o.task, o.words), (None, None));
        // An id given with --last is a mistake, not words for the model.
        for id in ["20250102-030405-a1b2c3", "20250102-030405", "20250102"] {
            let e = parse_resume(args(&[id, "--last"])).unwrap_err();
            assert!(e.contains("looks like a task id"), "{id}: {e}");
        }
        assert!(parse_resume(args(&["--last", "20250102 is the day it broke"])).is_ok());
    }

    #[test]
    fn a_dash_reads_the_task_from_stdin_bounded() {
        assert_eq!(task_text("fix it", &b"ignored"[..], false).unwrap(), "fix it");
        assert_eq!(task_text("-", &b"from a pipe\n\nsecond line\r\n"[..], true).unwrap(), "from a pipe\n\nsecond line");
        let big = vec![b'x'; MAX_STDIN_TASK as usize + 1];
        assert!(task_text("-", &big[..], true).unwrap_err().contains("over 1048576 bytes"));
        assert!(task_text("-", &[0xff_u8][..], true).unwrap_err().contains("not UTF-8"));
        let o = parse(args(&["--keep", "-V", "-"])).unwrap();
        assert!(o.keep && o.version);
        assert_eq!(o.task.as_deref(), Some("-"));
    }

    #[test]
    fn a_relative_state_dir_is_made_absolute() {
        // git runs with the workspace as its directory: a relative path would name another folder.
        let o = parse(args(&["--state-dir", "rel/state", "t"])).unwrap();
        assert_eq!(o.state_dir.unwrap(), std::env::current_dir().unwrap().join("rel/state"));
    }

    #[test]
    fn a_quiet_standard_input_is_said_once_and_a_prompt_one_not_at_all() {
        // A pipe that stays open and quiet until the note was said, then gives the task.
        let (r, mut w) = std::io::pipe().unwrap();
        let (said_tx, said_rx) = std::sync::mpsc::channel();
        let writer = std::thread::spawn(move || {
            let line: String = said_rx.recv().unwrap();
            std::io::Write::write_all(&mut w, b"late task\n").unwrap();
            line
        });
        let quiet = std::time::Duration::from_millis(10);
        let mut tell = move |line: String| said_tx.send(line).unwrap();
        let text = read_stdin_telling(r, "the task on standard input", quiet, &mut tell).unwrap();
        assert_eq!(text, "late task\n");
        let line = writer.join().unwrap();
        assert!(line.contains("waiting for the task on standard input") && line.ends_with("</dev/null"), "{line}");
        // Input already there: nothing said.
        let mut told = Vec::new();
        let mut tell = |line: String| told.push(line);
        let long = std::time::Duration::from_secs(600);
        assert_eq!(read_stdin_telling(&b"now"[..], "x", long, &mut tell).unwrap(), "now");
        assert!(told.is_empty());
    }

    #[test]
    fn piped_input_beside_a_task_is_context_as_the_cline_cli_joins_it() {
        assert_eq!(
            task_text("review this", &b"\ndiff --git a b\n+x\n\n"[..], true).unwrap(),
            "review this\n\ndiff --git a b\n+x"
        );
        assert_eq!(task_text("review this", &b"  \n"[..], true).unwrap(), "review this");
        let big = vec![b'x'; MAX_STDIN_TASK as usize + 1];
        assert!(task_text("t", &big[..], true).unwrap_err().contains("the context on standard input is over"));
    }

    #[test]
    fn short_flags_and_codex_aliases() {
        let o = parse_with(
            args(&["-y", "-m", "m1", "-C", "/w", "-o", "last.txt", "--sandbox", "danger-full-access", "t"]),
            false,
        )
        .unwrap();
        assert!(o.yolo);
        assert_eq!(o.model.as_deref(), Some("m1"));
        assert_eq!(o.cwd.as_deref(), Some(std::path::Path::new("/w")));
        assert_eq!(o.output_last_message.as_deref(), Some(std::path::Path::new("last.txt")));
    }

    /// The Cline CLI's spellings (`apps/cli/src/commands/program.ts`, `normalizeCliArgs`).
    #[test]
    fn the_cline_cli_s_flags_mean_here_what_they_mean_there() {
        let o = parse(args(&["-P", "openai", "-t", "90", "--retries", "6", "--thinking", "high", "t"])).unwrap();
        assert_eq!(o.provider.map(|d| d.provider), Some(Provider::OpenAi));
        assert_eq!(o.timeout, Some(std::time::Duration::from_secs(90)));
        assert_eq!((o.max_mistakes, o.reasoning_effort.as_deref(), o.task.as_deref()), (6, Some("high"), Some("t")));
        // Bare `--thinking` is medium; the task after it is not taken for a level.
        let o = parse(args(&["--thinking", "--yolo", "t"])).unwrap();
        assert_eq!((o.reasoning_effort.as_deref(), o.yolo), (Some("medium"), true));
        assert!(parse(args(&["--thinking=lots", "t"])).unwrap_err().contains("unknown --thinking \"lots\""));
        // A task after a bare --thinking is the task (the config file's `thinking = true`).
        let o = parse(args(&["--thinking", "fix it"])).unwrap();
        assert_eq!((o.reasoning_effort.as_deref(), o.task.as_deref()), (Some("medium"), Some("fix it")));
        assert!(parse(args(&["--auto-approve=yes", "t"])).unwrap_err().contains("takes true or false"));
        assert!(parse(args(&["--retries", "x", "t"])).unwrap_err().contains("--retries expects"));
        // `--auto-approve` bare or true approves all, as --yolo; false does not; the task stays the task.
        for (given, yolo) in [(&["--auto-approve", "t"][..], true), (&["--auto-approve", "TRUE", "t"], true)] {
            let o = parse(args(given)).unwrap();
            assert_eq!((o.yolo, o.task.as_deref()), (yolo, Some("t")), "{given:?}");
        }
        for given in [&["-y", "--auto-approve", "false", "t"][..], &["-y", "--auto-approve=false", "t"]] {
            let o = parse(args(given)).unwrap();
            assert_eq!((o.yolo, o.task.as_deref()), (false, Some("t")), "{given:?}");
        }
        // What has no counterpart here says so.
        assert!(parse(args(&["-p", "t"])).unwrap_err().contains("no plan mode"));
        assert!(parse(args(&["--id", "x"])).unwrap_err().contains("agent-min resume ID"));
        assert!(parse(args(&["-k", "sk-x", "t"])).unwrap_err().contains("never from the command line"));
        assert!(parse(args(&["-c", "/tmp", "t"])).unwrap_err().contains("-C DIR or --cwd DIR"));
        assert!(parse(args(&["--act", "t"])).unwrap_err().contains("agent-min always acts"));
        // codex exec's and claude -p's.
        assert!(parse(args(&["--full-auto", "t"])).unwrap_err().contains("-y / --yolo"));
        assert!(parse(args(&["--output-format", "json", "t"])).unwrap_err().contains("--json"));
        assert!(parse(args(&["--continue"])).unwrap_err().contains("agent-min resume --last"));
        let o = parse(args(&["--cd", "/tmp", "--skip-git-repo-check", "t"])).unwrap();
        assert_eq!((o.cwd.as_deref(), o.task.as_deref()), (Some(std::path::Path::new("/tmp")), Some("t")));
        for task in ["--verbose should print more", "-v is broken"] {
            let e = parse(args(&[task])).unwrap_err();
            assert!(e.contains("goes after `--`"), "{e}");
        }
        assert_eq!(parse(args(&["--", "-v is broken"])).unwrap().task.as_deref(), Some("-v is broken"));
        assert!(parse(args(&["--max-turns", "0", "t"])).unwrap_err().contains("--max-turns must be at least 1"));
        let e = parse(args(&["--provider", "gemini"])).unwrap_err();
        assert!(e.ends_with("use --provider anthropic, openai, openrouter, ollama or openai-native"), "{e}");
    }

    #[test]
    fn the_config_file_goes_first_and_flags_beat_it() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("config.toml");
        std::fs::write(&f, "model = \"from-file\"\nmax_tokens = 100\n[profiles.ci]\nyolo = true\n").unwrap();
        let o = parse_with(with_config(args(&["--model", "from-flag", "t"]), Some(f.clone())).unwrap(), false).unwrap();
        assert_eq!((o.model.as_deref(), o.max_tokens, o.yolo), (Some("from-flag"), Some(100), false));
        let o = parse_with(with_config(args(&["--profile", "ci", "t"]), Some(f.clone())).unwrap(), false).unwrap();
        assert!(o.yolo && o.model.as_deref() == Some("from-file"));
        let o = parse_with(with_config(args(&["--no-config", "t"]), Some(f.clone())).unwrap(), false).unwrap();
        assert_eq!(o.max_tokens, None, "--no-config reads no file");
        std::fs::write(&f, "max_tokens = \"lots\"\n").unwrap();
        let e = with_config(args(&["t"]), Some(f.clone())).unwrap_err();
        assert!(e.contains("in the config file") && e.contains("--max-tokens expects"), "{e}");
    }

    #[test]
    fn parses_the_new_flags() {
        let o = parse(args(&["--json", "--max-cost", "$0.25", "--timeout", "2m", "--context-window", "8192", "t"]))
            .unwrap();
        assert!(o.json);
        assert_eq!(o.max_cost, Some(0.25));
        assert_eq!(o.timeout, Some(std::time::Duration::from_secs(120)));
        assert_eq!(o.context_window, Some(8192));
        let o = parse_resume(args(&["--last", "--state-dir", "/s"])).unwrap();
        assert!(o.last && o.state_dir.is_some());
    }
}
