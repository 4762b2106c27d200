//! Command-line options of `agent-min run`.

use std::ffi::OsString;
use std::path::PathBuf;

use super::providers::Provider;

/// The `--help` text.
pub const HELP: &str = "\
agent-min run — run a coding task with a Cline-style agent

USAGE:
    agent-min run [OPTIONS] \"<task>\"
    agent-min run --replay FILE [OPTIONS]

The agent sends your task to a model, streams its reply, runs the one tool it asks for
(list, read, write, edit, search, run a command, ask you, finish), sends back the result, and
repeats until the model calls attempt_completion. Edits and commands ask for your approval
(y / n / or type feedback for the model) unless you pass --yolo.

MODEL:
    --provider NAME       anthropic | openai | ollama
                          (default: anthropic if ANTHROPIC_API_KEY is set, else openai).
                          `openai` is any OpenAI-compatible server: OpenAI, OpenRouter, vLLM,
                          llama.cpp server, LM Studio.
    --model NAME          model name (defaults: claude-sonnet-4-5, gpt-4.1, qwen2.5-coder:7b)
    --base-url URL        anthropic: without /v1 (default https://api.anthropic.com)
                          openai:    with /v1 (default $OPENAI_BASE_URL or https://api.openai.com/v1)
                          ollama:    default http://127.0.0.1:11434 (native /api/chat)
    --max-tokens N        output token limit per reply (default 8192)
    --num-ctx N           Ollama context window, options.num_ctx (default 32768)
    Keys come from ANTHROPIC_API_KEY / OPENAI_API_KEY (Ollama needs none; a local
    OpenAI-compatible server works without OPENAI_API_KEY). The key is passed to curl in a
    private temporary file, never on a command line, and is never printed.

WORKSPACE AND SAFETY:
    --cwd DIR             workspace root (default: the current directory). Paths resolving
                          outside it (via .. or symlinks) need explicit approval.
    --yolo                approve everything inside the workspace and never wait for a person
                          (for scripts and CI); paths outside the workspace are refused.
    --command-timeout S   seconds before a command's whole process group is killed (default 600)

LIMITS:
    --max-mistakes N      consecutive mistakes (no tool used, missing parameter, failed edit,
                          cut-off tool call) before stopping under --yolo, or asking you for
                          guidance otherwise (default 3)
    --max-turns N         stop after N model requests (default: no limit)
    --retry-delay S       first retry delay in seconds; doubles each retry (default 2).
                          429, 5xx, overloaded and dropped streams are retried 3 times,
                          honouring retry-after; 400/401/403 and quota errors are not.
    --connect-timeout S   seconds to connect (default 30)
    --idle-timeout S      seconds without any data before a stream is abandoned (default 300)

REPLAY (no key, no network):
    --replay FILE         replay a recorded session (JSON lines: the model's replies) through
                          the real loop and real tools. Without --cwd it runs in a new temporary
                          workspace seeded with the recording's files and approves everything
                          there. The task defaults to the recorded one.
    --replay-delay MS     pause between streamed pieces of a replayed reply (default 15)

EXIT CODES:
    0   the model called attempt_completion
    1   the task failed: mistake limit, API error after retries, turn limit, empty replies
    2   usage error (bad flag, missing key, missing task)
    130 interrupted with Ctrl-C (curl and any running command are killed)

EXAMPLES:
    agent-min run --replay agent-min/sessions/demo.jsonl
    ANTHROPIC_API_KEY=... agent-min run \"add a --verbose flag to src/main.rs\"
    OPENAI_API_KEY=... agent-min run --provider openai --model gpt-4.1 --yolo \"fix the failing test\"
    agent-min run --provider ollama --model qwen2.5-coder:7b \"explain this repo\"
";

/// Parsed options.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The task text.
    pub task: Option<String>,
    /// `--provider`.
    pub provider: Option<Provider>,
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
    /// `--max-tokens`.
    pub max_tokens: u32,
    /// `--num-ctx`.
    pub num_ctx: u32,
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
}

/// Parses the arguments after `run`. Errors are one line naming the problem and the fix.
pub fn parse(args: Vec<OsString>) -> Result<Options, String> {
    use lexopt::prelude::*;
    let mut o = Options {
        max_mistakes: 3,
        max_tokens: 8192,
        num_ctx: 32768,
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
            Long("provider") => {
                let v = p.value().map_err(err)?.string().map_err(err)?;
                o.provider =
                    Some(Provider::parse(&v).ok_or_else(|| {
                        format!("unknown provider {v:?}; use --provider anthropic, openai or ollama")
                    })?);
            }
            Long("model") => o.model = Some(p.value().map_err(err)?.string().map_err(err)?),
            Long("base-url") => o.base_url = Some(p.value().map_err(err)?.string().map_err(err)?),
            Long("yolo") => o.yolo = true,
            Long("cwd") => o.cwd = Some(p.value().map_err(err)?.into()),
            Long("max-mistakes") => o.max_mistakes = number(&mut p, "--max-mistakes")?,
            Long("max-turns") => o.max_turns = Some(number(&mut p, "--max-turns")?),
            Long("max-tokens") => o.max_tokens = number(&mut p, "--max-tokens")?,
            Long("num-ctx") => o.num_ctx = number(&mut p, "--num-ctx")?,
            Long("command-timeout") => o.command_timeout = seconds(&mut p, "--command-timeout")?,
            Long("retry-delay") => o.retry_delay = seconds(&mut p, "--retry-delay")?,
            Long("connect-timeout") => o.connect_timeout = number(&mut p, "--connect-timeout")?,
            Long("idle-timeout") => o.idle_timeout = number(&mut p, "--idle-timeout")?,
            Long("replay") => o.replay = Some(p.value().map_err(err)?.into()),
            Long("replay-delay") => o.replay_delay_ms = number::<u64>(&mut p, "--replay-delay")?,
            Value(v) if o.task.is_none() => o.task = Some(v.string().map_err(err)?),
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

fn seconds(p: &mut lexopt::Parser, flag: &str) -> Result<f64, String> {
    let v = p.value().map_err(|e| e.to_string())?;
    let s = v.to_string_lossy();
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("{flag} expects a number of seconds, got {s:?}")),
    }
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
    }
}
