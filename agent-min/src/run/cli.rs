//! Command-line options of `agent-min run`.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::run::llm::providers::Provider;

/// The `--help` text.
pub(crate) const HELP: &str = "\
agent-min run — run a coding task with a Cline-style agent

USAGE:
    agent-min run [OPTIONS] \"<task>\"
    agent-min run [OPTIONS] -  < task.md       the task read from standard input
    git diff | agent-min run [OPTIONS] \"<task>\"   piped input is context, after the task
    agent-min run --replay FILE [OPTIONS]

The agent sends your task to a model, streams its reply, runs the one tool it asks for
(list, read, write, edit, search, run a command, ask you, finish), sends back the result, and
repeats until the model calls attempt_completion. Edits and commands ask for your approval
(y / n / e to edit a file first in $EDITOR / or type feedback for the model) unless you
pass --yolo. Answers are read from the terminal (standard input, or the controlling terminal
when input is piped); with no terminal at all (CI, cron) a call that needs an answer stops the
run with exit code 3 — let a policy decide instead: --yolo (with CLINE_COMMAND_PERMISSIONS
to refuse commands by pattern).

MODEL:
    --provider NAME       anthropic | openai | ollama
                          (default: anthropic if ANTHROPIC_API_KEY is set, else openai).
                          `openai` is any OpenAI-compatible server: OpenAI, OpenRouter, vLLM,
                          llama.cpp server, LM Studio. At api.openai.com (or any base URL with
                          `openai-native`) as Cline's openai-native: gpt-5.5, gpt-5.4, codex
                          models on the Responses API (/v1/responses)
    -m, --model NAME      model name (defaults: claude-sonnet-5, gpt-4.1, qwen2.5-coder:7b)
    --base-url URL        anthropic: without /v1 (default https://api.anthropic.com)
                          openai:    with /v1 (default $OPENAI_BASE_URL or https://api.openai.com/v1);
                                     Azure: https://RESOURCE.openai.azure.com/openai, the model
                                     naming the deployment (?api-version=V to choose a version)
                          ollama:    default http://127.0.0.1:11434 (native /api/chat)
    --max-tokens N        output token limit per reply. Default as Cline: anthropic sends the
                          model's maxTokens from Cline's model table (agent-min/data/models.json:
                          64000 for claude-sonnet-4-5; 8192 for a model not in it); openai sends
                          none (with N: max_tokens, or max_completion_tokens for the reasoning
                          families o1/o3/o4/gpt-5, or max_output_tokens on the Responses
                          API); ollama none (with N: options.num_predict)
    --one-tool-per-reply  run only the first tool call of a reply (Cline's parallel tool
                          calling setting off): the XML reply is cut after it, and any further
                          call is answered with Cline's toolAlreadyUsed text.
                          Default: every complete call of a reply runs, in order
    --no-focus-chain      no task_progress checklist (Cline's focus chain, on by default as in
                          Cline): by default the tools take a task_progress parameter, the
                          model is reminded to keep the checklist (on its first request, while
                          it has none, and after 6 requests without an update), and each new
                          list is shown, saved and sent as a task_progress event
    --num-ctx N           Ollama context window, options.num_ctx (default 32768)
    --tool-calls MODE     xml | native | auto (default auto). native: the tools go to the API as
                          JSON-schema definitions and the model calls them natively; xml:
                          Cline's XML tags in the reply text. auto: native for the model
                          families Cline enables it for (Claude 4+, GPT-5, gpt-oss, DeepSeek
                          chat/reasoner/3.2, Kimi K2, Gemini 2.5/3, Grok 4, MiniMax) on
                          anthropic and openai, XML otherwise and on ollama (docs/agent.md).
                          In native mode each MCP tool is a function of its own
                          (<uid>0mcp0<tool>); one the API cannot name is left out, with a warning
    --no-recover-text-calls   native mode: do not run a tool call the model wrote as Cline's XML
                          in its text (by default a reply with no native call whose text holds a
                          complete call runs it, marked recovered; local models often do this)
    --no-images           the model takes no images (Cline's \"Supports Images\" unchecked):
                          read_file of an image gets Cline's refusal, and an image already in
                          a resumed task goes as a line saying one was there. Without it, a
                          request a server refuses for its image (llama.cpp without --mmproj,
                          a text-only model) is sent again that way, and the run goes on so
    --thinking-budget N   anthropic: extended thinking with N budget tokens (at least 1024),
                          within max_tokens (as Cline); thinking is shown dimmed and sent back with
                          its signature. Not sent to a model Cline's table says cannot think; on
                          Opus 4.6+ and Sonnet 5 (adaptive thinking) it turns on thinking at effort
                          high
    --reasoning-effort E  none | low | medium | high | xhigh: the effort of OpenAI's reasoning
                          models (o1, o3, o4, gpt-5: medium unless given; none sends none) and of
                          Anthropic's adaptive thinking (Opus 4.6+, Sonnet 5: off unless given)
    Keys come from ANTHROPIC_API_KEY / OPENAI_API_KEY (Ollama needs none; a local
    OpenAI-compatible server works without OPENAI_API_KEY). The key is passed to curl through
    a pipe, never on a command line nor in a file, and is never printed.

WORKSPACE AND SAFETY:
    -C, --cwd DIR         workspace root (default: the current directory). Paths resolving
                          outside it (via .. or symlinks) need explicit approval.
    -y, --yolo            approve everything inside the workspace and never wait for a person
                          (for scripts and CI); paths outside the workspace are refused.
    --command-timeout S   seconds before a command's whole process group is killed (default 600)
    CLINE_COMMAND_PERMISSIONS='{\"allow\": [\"npm *\", \"git *\"], \"deny\": [\"git push*\"]}'
                          as in Cline: a command runs only if every part of it (split at &&,
                          ||, |, ;, &, subshells) matches an allow and no deny pattern; redirects
                          need \"allowRedirects\": true. Refused commands never run.

COMMAND SANDBOX (Linux Landlock; not in Cline):
    --sandbox MODE        workspace-write: commands read everywhere but write only in the
                          workspace, the temp directory and --sandbox-allow-write dirs
                          (the default under --yolo); read-only: write nowhere; off (or
                          codex's danger-full-access): no confinement (the default when you
                          approve each command). Without
                          Landlock in the kernel, a sandbox is refused: pass --sandbox off.
    --sandbox-allow-write DIR   also let commands write in DIR (repeatable)
    --sandbox-network     let sandboxed commands use the network (off by default: they run in
                          an empty network namespace, so `curl evil | sh` cannot phone home)
    --env-keep NAME       pass variable NAME to commands although its name contains KEY,
                          SECRET or TOKEN (such variables are withheld by default; the
                          agent's own ANTHROPIC_API_KEY / OPENAI_API_KEY never pass)
    --env-drop NAME       withhold variable NAME from commands too (repeatable, like --env-keep)

MCP SERVERS:
    --mcp-config FILE     Cline's MCP settings ({\"mcpServers\": {...}}); repeatable. Default:
                          $XDG_CONFIG_HOME/agent-min/mcp.json. The workspace's .cline/mcp.json
                          is used once you approve it, or under --trust-workspace (--yolo alone
                          does not approve it). See `agent-min mcp --help`.
    --mcp-startup-timeout S   seconds each server may take to start and list its tools
                          (default 10, Cline's; a server's own \"startupTimeout\" wins). `npx -y`
                          and `uvx` download the server on its first run: give 120.

LIMITS:
    --max-mistakes N      consecutive mistakes (no tool used, missing parameter, failed edit,
                          cut-off tool call) before stopping under --yolo, or asking you for
                          guidance otherwise (default 3)
    --max-turns N         stop after N model requests by this run (default: no limit)
    --max-cost USD        stop before a request once this run has spent USD dollars
                          (needs prices: the built-in table or the --price-* flags)
    --timeout DURATION    stop after this long, e.g. 90s, 10m, 1h30m; curl and any running
                          command are killed at the deadline (default: no limit)
                          Each limit stops cleanly: exit 1, a message naming the limit, and
                          the task saved so `agent-min resume` can continue it.
    --retry-delay S       first retry delay in seconds; doubles each retry (default 2).
                          429, 5xx, overloaded and dropped streams are retried 3 times,
                          honouring retry-after; 400/401/403 and quota errors are not.
    --connect-timeout S   seconds to connect (default 30)
    --idle-timeout S      seconds without any data before a stream is abandoned (default 300)

CONTEXT WINDOW, TOKENS AND COST:
    --context-window N    the model's context window in tokens (default: the model's in Cline's
                          table, agent-min/data/models.json — claude 200000, gpt-4.1 1047576,
                          gpt-5 272000, gpt-4o 128000; 128000 for a model not in it; ollama
                          --num-ctx; a local OpenAI-compatible server is asked first: llama.cpp
                          /props, LM Studio, Ollama). Before each request the prompt is estimated; over Cline's
                          threshold (e.g. 160000 of 200000) older reads of a file read again
                          are dropped, then half of the history after the first exchange.
                          A \"prompt is too long\" error cuts harder once and retries.
    --price-input USD     price per million uncached input tokens  (defaults: a built-in
    --price-output USD    price per million output tokens           table of well-known
    --price-cache-read USD   per million cache-read tokens          Anthropic and OpenAI
    --price-cache-write USD  per million cache-write tokens         models; Ollama is free)
                          A flag's price holds at any prompt size (a :1m model's table
                          prices rise past 200000 prompt tokens, as Cline's tiers).
    Tokens and cost are shown per request (--json) and in total at the end.

PROJECT SETUP (read as Cline reads it; see docs/agent.md):
    Rules go into the system prompt: .clinerules (a file, or a directory of rule files;
    hooks/, workflows/ and skills/ excluded), .cursorrules, .cursor/rules/*.mdc,
    .windsurfrules, every AGENTS.md (when there is one at the top), and the global rules in
    ~/Documents/Cline/Rules and $XDG_CONFIG_HOME/agent-min/rules. A rule with YAML
    frontmatter `paths: [\"src/**\"]` applies only while the task touches a matching path.
    .clineignore (gitignore syntax) walls files off from the tools.
    Hooks: executables named TaskStart, TaskResume, TaskCancel, TaskComplete,
    UserPromptSubmit, PreToolUse, PostToolUse, PreCompact in ~/Documents/Cline/Hooks/
    (always run) and .clinerules/hooks/ (code from the repository: run once you approve that
    exact content, kept in the state directory, or under --trust-workspace). Each runs as it was
    when the run started, whatever the file becomes during the run.
    --rules FILE          add a rule file (repeatable)
    --no-rules            no global or workspace rules or skills (--rules files
                          still apply); .clineignore still applies
    --no-hooks            run no hooks at all
    --trust-workspace     run the workspace's hooks and start its .cline/mcp.json servers as
                          they are when the run starts, without asking (--yolo does not: a
                          run's commands could have written them)
    --hook-timeout S      seconds before a hook is killed (default 30, Cline's)

OUTPUT AND STATE:
    stdout carries what a script reads: when it is not a terminal, only the final result (the
    transcript goes to stderr); with --json, only the events.
    -o, --output-last-message FILE   write the final result to FILE when the task completes
    --output-schema FILE  the final result must be JSON valid against this JSON Schema: the
                          model is told; an invalid result goes back to it once with the
                          errors, then the run fails (exit 1)
    --json                NDJSON events on stdout, one per line (task_started, text,
                          reasoning, tool_call, approval, tool_result, api_request, retry,
                          context_truncated, checkpoint, hook, mcp_server, mcp_call, error,
                          completion); the human-readable output moves to stderr. The schema
                          is agent-min/schemas/events.schema.json (docs/agent.md).
    --state-dir DIR       where tasks are saved after every turn (default
                          $XDG_STATE_HOME/agent-min or ~/.local/state/agent-min); see
                          `agent-min history` and `agent-min resume --help`
    --no-save             do not save the task (and take no checkpoints)
    --no-checkpoints      do not save the workspace in a shadow git repository before the
                          first edit or command and after each one (see
                          `agent-min checkpoints --help`: list, diff, restore)

REPLAY (no key, no network):
    --replay FILE         replay a recorded session (JSON lines: the model's replies) through
                          the real loop and real tools. Without --cwd it runs in a new temporary
                          workspace seeded with the recording's files and approves everything
                          there. The task defaults to the recorded one.
    --replay-delay MS     pause between streamed pieces of a replayed reply (default 15)
    --keep                keep the temporary workspace of a replay (it is removed at the end
                          otherwise; its path is printed either way)

CONFIG FILE:
    $XDG_CONFIG_HOME/agent-min/config.toml (else ~/.config/agent-min/config.toml): the long
    options above as keys, e.g.  provider = \"openai\"  model = \"gpt-5\"  max_cost = 2.0
    sandbox_network = true  rules = [\"team.md\"];  [profiles.NAME] tables hold more, chosen
    with --profile NAME (or the file's own profile = \"NAME\"). Flags beat the file.
    --profile NAME        use [profiles.NAME] of the config file
    --no-config           read no config file
    ANTHROPIC_BASE_URL and OPENAI_BASE_URL are honoured like --base-url.

EXIT CODES:
    0   the model called attempt_completion
    1   the task failed: mistake limit, API error after retries, a limit (turns, cost, timeout),
        empty replies, a result invalid against --output-schema
    2   usage error (bad flag, missing key, missing task, unusable --cwd, bad config file)
    3   a call needed a person's answer and there was no terminal to ask on: it was not run
        (nor anything after it), the task is saved; resume it with --yolo or at a terminal
    130 interrupted with Ctrl-C; 143 terminated by SIGTERM (curl and any running command are
        killed; the task is saved; --json ends with a completion event either way)

EXAMPLES:
    agent-min run --replay agent-min/sessions/demo.jsonl
    ANTHROPIC_API_KEY=... agent-min run \"add a --verbose flag to src/main.rs\"
    OPENAI_API_KEY=... agent-min run --provider openai --model gpt-4.1 --yolo \"fix the failing test\"
    agent-min run --provider ollama --model qwen2.5-coder:7b \"explain this repo\"
    agent-min run --json --yolo --max-cost 0.50 --timeout 20m \"fix the failing test\" > events.ndjson
    git diff | agent-min run -y -o review.md \"review this change\"
";

/// The `--help` text of `agent-min resume`.
pub(crate) const RESUME_HELP: &str = "\
agent-min resume — continue a saved task

USAGE:
    agent-min resume [TASK_ID | --last] [OPTIONS]

Every `agent-min run` saves its task after each turn (see `agent-min history` for the ids).
`resume` loads the conversation and sends the model Cline's [TASK RESUMPTION] message with the
message that was about to be sent when the run stopped — after Ctrl-C, a crash, kill -9, a
limit, or a failed request. A unique prefix of the id is enough; --last takes the latest task
run in the current directory (or in --cwd DIR), and says which one.

The provider, model, base URL and workspace are those of the saved task unless given again;
the key comes from the environment as for `run` (it is never saved). Every option of
`agent-min run` works here (--yolo, --json, --max-cost, --timeout, --context-window, …);
limits count this run afresh, the totals shown include the earlier runs.

OPTIONS:
    --last                resume the latest task of the current directory (or of --cwd DIR)
    --state-dir DIR       where tasks are saved (default $XDG_STATE_HOME/agent-min or
                          ~/.local/state/agent-min)

EXAMPLES:
    agent-min resume --last --yolo
    agent-min resume 20250102-030405 --max-turns 20
";

/// Parsed options.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    /// The task text.
    pub task: Option<String>,
    /// `--provider`.
    pub provider: Option<Provider>,
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
    use std::io::Read;
    let mut buf = Vec::new();
    stdin.take(MAX_STDIN_TASK + 1).read_to_end(&mut buf).map_err(|e| format!("cannot read {what}: {e}"))?;
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

/// `args` preceded by what the config file at `file` says (see [`crate::run::config`]), the
/// file's own options checked on their own so an error names it.
fn with_config(args: Vec<OsString>, file: Option<PathBuf>) -> Result<Vec<OsString>, String> {
    let (mut profile, mut no_config, mut it) = (None, false, args.iter());
    while let Some(a) = it.next() {
        match a.to_str() {
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
    let from_file = crate::run::config::arguments(&file, profile.as_deref())?;
    if let Err(e) = parse_with(from_file.clone(), false) {
        return Err(format!("in the config file {}: {e}", file.display()));
    }
    Ok(from_file.into_iter().chain(args).collect())
}

/// Parses the arguments after `resume`: the positional argument is a task id, `--last` is
/// allowed, `--replay` is not.
pub(crate) fn parse_resume(args: Vec<OsString>) -> Result<Options, String> {
    let o = parse_with(with_config(args, crate::run::config::default_path())?, true)?;
    if o.replay.is_some() {
        return Err("--replay cannot be resumed (replays are not saved); run it again instead".to_string());
    }
    if o.last && o.task.is_some() {
        return Err("give either a task id or --last, not both".to_string());
    }
    if !o.last && o.task.is_none() && !o.help {
        return Err("which task? give its id (see `agent-min history`) or --last".to_string());
    }
    Ok(o)
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
    let mut p = lexopt::Parser::from_args(args);
    let err = |e: lexopt::Error| e.to_string();
    while let Some(arg) = p.next().map_err(err)? {
        match arg {
            Short('h') | Long("help") => o.help = true,
            Short('V') | Long("version") => o.version = true,
            Long("keep") => o.keep = true,
            Long("provider") => {
                let v = p.value().map_err(err)?.string().map_err(err)?;
                o.provider = Some(
                    Provider::parse(&v)
                        .ok_or_else(|| format!("unknown provider {v:?}; use --provider {}", provider_names()))?,
                );
                o.openai_native = v == crate::run::llm::providers::registry::NATIVE_OPENAI;
            }
            Short('m') | Long("model") => o.model = Some(p.value().map_err(err)?.string().map_err(err)?),
            Long("base-url") => o.base_url = Some(p.value().map_err(err)?.string().map_err(err)?),
            Short('y') | Long("yolo") => o.yolo = true,
            Short('C') | Long("cwd") => o.cwd = Some(p.value().map_err(err)?.into()),
            Short('o') | Long("output-last-message") => o.output_last_message = Some(p.value().map_err(err)?.into()),
            Long("output-schema") => o.output_schema = Some(p.value().map_err(err)?.into()),
            Long("profile") => o.profile = Some(p.value().map_err(err)?.string().map_err(err)?),
            Long("no-config") => o.no_config = true,
            Long("mcp-startup-timeout") => o.mcp_startup_timeout = Some(seconds(&mut p, "--mcp-startup-timeout")?),
            Long("max-mistakes") => o.max_mistakes = number(&mut p, "--max-mistakes")?,
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
            Long("reasoning-effort") => {
                let v = p.value().map_err(err)?.string().map_err(err)?;
                if !crate::run::llm::providers::REASONING_EFFORTS.contains(&v.as_str()) {
                    return Err(format!(
                        "unknown --reasoning-effort {v:?}; use one of {} (Cline's values)",
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
            Long("timeout") => {
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
            Value(v) if resume => return Err(format!("unexpected extra argument {v:?}; give one task id")),
            Value(v) => {
                return Err(format!("unexpected extra argument {:?}; put the whole task in one quoted argument", v))
            }
            other => return Err(format!("{}; see `agent-min run --help`", other.unexpected())),
        }
    }
    if o.max_mistakes == 0 {
        return Err("--max-mistakes must be at least 1".to_string());
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
    let names: Vec<&str> = crate::run::llm::providers::registry::PROVIDERS.iter().map(|d| d.name).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
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

    fn args(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    #[test]
    fn parses_flags_and_task() {
        let o = parse(args(&["--provider", "openai", "--yolo", "--max-turns", "5", "do it"])).unwrap();
        assert_eq!(o.provider, Some(Provider::OpenAi));
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
        assert!(parse_resume(args(&["a", "--last"])).unwrap_err().contains("not both"));
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
