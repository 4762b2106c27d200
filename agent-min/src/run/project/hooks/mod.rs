//! Cline's hooks (`core/hooks/`): executables named after one of eight events, in the global
//! hooks directory (`~/Documents/Cline/Hooks/`) and the workspace's `.clinerules/hooks/`.
//!
//! For an event, the global script runs, then the workspace's (Cline runs them concurrently
//! and merges the answers the same way: any `cancel` cancels, contexts are trimmed and joined
//! by blank lines, error messages by newlines). Each gets Cline's JSON on stdin ([`input`]) and
//! answers `{cancel, contextModification, errorMessage}` on stdout ([`output`]). A script that
//! fails — times out, exits non-zero without an answer, cannot start — is reported and the
//! event goes on as if there were no hook, as in Cline (a failure in one voids the merged
//! answer). A script that exits 0 without a valid answer is a warning, not an error.
//!
//! Workspace hooks are code from the repository: they run under `--yolo`, or once the person
//! approved that exact file content ([`approval`]); global hooks always run; `--no-hooks` turns
//! all of them off. Each run is a `hook` event under `--json`. `--yolo` approves the workspace
//! hooks as they were when the run started: a hook the model writes or edits during the run
//! (its commands are sandboxed, a hook is not) does not run.

pub mod approval;
pub mod input;
pub mod output;
pub mod process;
pub mod report;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::run::session::events::Events;
use crate::run::ui::term::Term;

/// Cline's `HOOK_EXECUTION_TIMEOUT_MS`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The eight hook events (named as in the `hook` event: `TaskStart`…).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub enum Hook {
    /// A new task starts.
    TaskStart,
    /// A saved task is resumed.
    TaskResume,
    /// The task is stopped: Ctrl-C, SIGTERM, a limit.
    TaskCancel,
    /// `attempt_completion`.
    TaskComplete,
    /// The person's prompt is sent (the task).
    UserPromptSubmit,
    /// Before a tool runs.
    PreToolUse,
    /// After a tool ran.
    PostToolUse,
    /// Before the context window is cut.
    PreCompact,
}

impl Hook {
    /// All of them.
    pub const ALL: [Hook; 8] = [
        Hook::TaskStart,
        Hook::TaskResume,
        Hook::TaskCancel,
        Hook::TaskComplete,
        Hook::UserPromptSubmit,
        Hook::PreToolUse,
        Hook::PostToolUse,
        Hook::PreCompact,
    ];

    /// The file name, which is also `hookName`.
    pub fn name(self) -> &'static str {
        match self {
            Hook::TaskStart => "TaskStart",
            Hook::TaskResume => "TaskResume",
            Hook::TaskCancel => "TaskCancel",
            Hook::TaskComplete => "TaskComplete",
            Hook::UserPromptSubmit => "UserPromptSubmit",
            Hook::PreToolUse => "PreToolUse",
            Hook::PostToolUse => "PostToolUse",
            Hook::PreCompact => "PreCompact",
        }
    }

    /// The key of the per-hook object in the input (`preToolUse`, …).
    pub fn data_key(self) -> &'static str {
        match self {
            Hook::TaskStart => "taskStart",
            Hook::TaskResume => "taskResume",
            Hook::TaskCancel => "taskCancel",
            Hook::TaskComplete => "taskComplete",
            Hook::UserPromptSubmit => "userPromptSubmit",
            Hook::PreToolUse => "preToolUse",
            Hook::PostToolUse => "postToolUse",
            Hook::PreCompact => "preCompact",
        }
    }
}

/// How hooks are run.
#[derive(Debug, Clone)]
pub struct Config {
    /// False under `--no-hooks`.
    pub enabled: bool,
    /// `--yolo`: workspace hooks run without asking.
    pub yolo: bool,
    /// Per script (`--hook-timeout`, default 30 s).
    pub timeout: Duration,
    /// The global hooks directory.
    pub global_dir: Option<PathBuf>,
    /// Where approvals are remembered.
    pub state_dir: Option<PathBuf>,
}

impl Config {
    /// The global hooks directory Cline uses: `Cline/Hooks` in the documents directory.
    pub fn default_global_dir() -> Option<PathBuf> {
        super::rules::documents_dir().map(|d| d.join("Cline").join("Hooks"))
    }
}

/// Where a script comes from (`global` or `workspace` in the `hook` event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The global hooks directory.
    Global,
    /// The workspace's `.clinerules/hooks/`.
    Workspace,
}

/// The merged answer of an event's scripts (Cline's `HookExecutionResult`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer {
    /// Stop the task.
    pub cancel: bool,
    /// Context for the next request, when not blank.
    pub context: Option<String>,
    /// The hooks' message, when not blank.
    pub error_message: Option<String>,
}

/// The hooks of a run.
pub struct Hooks {
    cfg: Config,
    root: PathBuf,
    /// `taskId` and the model, for the input.
    pub meta: input::Meta,
    approvals: approval::Approvals,
    /// Workspace hook contents declined during this run (not asked again).
    declined: Vec<(String, String)>,
    /// Workspace hook contents approved during this run.
    accepted: Vec<(String, String)>,
    /// Whether the person may be asked (not from the Ctrl-C handler).
    ask: bool,
    /// Under `--yolo`: the workspace hooks present when the run started, by name and hash.
    at_start: Vec<(String, String)>,
}

impl Hooks {
    /// The hooks of workspace `root`.
    pub fn new(root: &Path, cfg: Config, meta: input::Meta) -> Hooks {
        let approvals = approval::Approvals::new(cfg.state_dir.as_deref());
        let mut hooks = Hooks {
            cfg,
            root: root.to_path_buf(),
            meta,
            approvals,
            declined: Vec::new(),
            accepted: Vec::new(),
            ask: true,
            at_start: Vec::new(),
        };
        if hooks.cfg.yolo {
            hooks.at_start = Hook::ALL
                .into_iter()
                .flat_map(|h| hooks.scripts(h).into_iter().map(move |(src, p)| (h, src, p)))
                .filter(|(_, src, _)| *src == Source::Workspace)
                .filter_map(|(h, _, p)| Some((h.name().to_string(), approval::file_hash(&p).ok()?)))
                .collect();
        }
        hooks
    }

    /// Hooks that never run (`--no-hooks`, tests).
    pub fn off(root: &Path) -> Hooks {
        let cfg = Config { enabled: false, yolo: false, timeout: DEFAULT_TIMEOUT, global_dir: None, state_dir: None };
        Hooks::new(root, cfg, input::Meta::default())
    }

    /// A copy for another thread (the Ctrl-C handler): the same configuration and approvals,
    /// and it never asks.
    pub fn detached(&self) -> Hooks {
        let mut h = Hooks::new(&self.root, self.cfg.clone(), self.meta.clone());
        h.accepted = self.accepted.clone();
        h.at_start = self.at_start.clone();
        h.ask = false;
        h
    }

    /// The scripts present for `hook`: global first, then the workspace's; executable regular
    /// files only (a file without the execute bit is not a hook, as in Cline).
    fn scripts(&self, hook: Hook) -> Vec<(Source, PathBuf)> {
        if !self.cfg.enabled {
            return Vec::new();
        }
        let dirs = [
            (Source::Global, self.cfg.global_dir.clone()),
            (Source::Workspace, Some(self.root.join(".clinerules").join("hooks"))),
        ];
        dirs.into_iter()
            .filter_map(|(src, dir)| Some((src, dir?.join(hook.name()))))
            .filter(|(_, p)| is_executable_file(p))
            .collect()
    }

    /// Whether any script exists for `hook`.
    pub fn has(&self, hook: Hook) -> bool {
        !self.scripts(hook).is_empty()
    }

    /// Warns about hook files that will never run (no execute bit): Cline skips them silently.
    pub fn check(&self, term: &mut Term) {
        if !self.cfg.enabled {
            return;
        }
        let dirs = [self.cfg.global_dir.clone(), Some(self.root.join(".clinerules").join("hooks"))];
        for dir in dirs.into_iter().flatten() {
            for hook in Hook::ALL {
                let p = dir.join(hook.name());
                if p.is_file() && !is_executable_file(&p) {
                    term.warn(&format!(
                        "Hook {} is not executable, so it does not run; `chmod +x` it to enable it.",
                        p.display()
                    ));
                }
            }
        }
    }

    /// Runs `hook`'s scripts with `data` as the per-hook object.
    pub fn run(&mut self, hook: Hook, data: Value, term: &mut Term, events: &mut Events) -> Answer {
        let scripts: Vec<(Source, PathBuf)> =
            self.scripts(hook).into_iter().filter(|(src, p)| self.allowed(*src, p, hook, term)).collect();
        if scripts.is_empty() {
            return Answer::default();
        }
        let stdin = input::build(hook, &self.meta, &self.root, data).to_string();
        let mut answers = Vec::new();
        let mut failed = false;
        for (src, script) in &scripts {
            let shown = self.shown(script);
            term.tool("hook", &format!("{} ({shown})", hook.name()));
            let started = Instant::now();
            let ran = process::run(script, &self.root, &stdin, self.cfg.timeout);
            let ms = started.elapsed().as_millis() as u64;
            let report = report::Report::of(hook, *src, &shown, ms, &ran, self.cfg.timeout);
            report.show(term);
            events.emit(&report.event());
            match report.answer {
                Some(a) => answers.push(a),
                None => failed |= report.failed,
            }
        }
        if failed {
            return Answer::default();
        }
        merge(answers, scripts.len() > 1)
    }

    /// Whether a script may run: global always; workspace under `--yolo` (as it was when the
    /// run started) or once approved.
    fn allowed(&mut self, src: Source, script: &Path, hook: Hook, term: &mut Term) -> bool {
        if src == Source::Global {
            return true;
        }
        let Ok(hash) = approval::file_hash(script) else { return false };
        let this = (hook.name().to_string(), hash.clone());
        if self.accepted.contains(&this) || self.approvals.is_approved(&self.root, hook.name(), &hash) {
            return true;
        }
        if self.cfg.yolo {
            if self.at_start.contains(&this) {
                return true;
            }
            if !self.declined.contains(&this) {
                term.warn(&format!(
                    "Workspace hook {} was written or changed during this run and does not run: --yolo approves only the hooks present when the run started (run again to use it).",
                    crate::run::ui::term::visible(&self.shown(script))
                ));
                self.declined.push(this);
            }
            return false;
        }
        if !self.ask || self.declined.contains(&this) {
            return false;
        }
        let shown = self.shown(script);
        term.warn(&format!(
            "This workspace has a {} hook ({shown}, sha256 {}…): a program from the repository that agent-min would run on your behalf. Read it before approving; the approval is remembered until the file changes.",
            hook.name(),
            &hash[..12]
        ));
        let answer =
            term.prompt(&format!("  Run workspace hook {}? [y]es / [N]o: ", crate::run::ui::term::visible(&shown)));
        if answer.is_some_and(|a| matches!(a.trim(), "y" | "Y" | "yes" | "Yes")) {
            self.accepted.push(this);
            if let Err(e) = self.approvals.remember(&self.root, hook.name(), &hash) {
                term.warn(&format!("Could not remember the approval ({e}); you will be asked again next time."));
            }
            return true;
        }
        term.warn(&format!(
            "Workspace hook {shown} was not approved and does not run (approve it, pass --yolo, or --no-hooks to silence this)."
        ));
        self.declined.push(this);
        false
    }

    fn shown(&self, script: &Path) -> String {
        script.strip_prefix(&self.root).unwrap_or(script).display().to_string()
    }
}

/// Cline's `CombinedHookRunner` merge (one script: its answer as is), then `fromHookOutput`.
fn merge(answers: Vec<output::Output>, combined: bool) -> Answer {
    let (cancel, context, error) = if combined {
        let join = |f: fn(&output::Output) -> &str, sep: &str| {
            answers.iter().map(|a| f(a).trim()).filter(|s| !s.is_empty()).collect::<Vec<_>>().join(sep)
        };
        (answers.iter().any(|a| a.cancel), join(|a| &a.context_modification, "\n\n"), join(|a| &a.error_message, "\n"))
    } else {
        let a = answers.into_iter().next().unwrap_or_default();
        (a.cancel, a.context_modification, a.error_message)
    };
    let keep = |s: String| (!s.trim().is_empty()).then_some(s);
    Answer { cancel, context: keep(context), error_message: keep(error) }
}

fn is_executable_file(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `<hook_context source="…" type="…">` as Cline's tool hooks wrap a context: a first line
/// `TYPE: text` names the type (lower-cased), else it is `general`.
pub fn tool_context(source: &str, context: &str) -> Option<String> {
    let text = context.trim();
    if text.is_empty() {
        return None;
    }
    let mut lines = text.split('\n');
    let first = lines.next().unwrap_or_default();
    let (ty, content) = match typed_first_line(first) {
        Some((ty, rest)) => {
            let others: Vec<&str> = lines.filter(|l| !l.trim().is_empty()).collect();
            let content = if rest.is_empty() {
                others.join("\n")
            } else {
                std::iter::once(rest).chain(others).collect::<Vec<_>>().join("\n")
            };
            (ty.to_lowercase(), content)
        }
        None => ("general".to_string(), text.to_string()),
    };
    Some(format!("<hook_context source=\"{source}\" type=\"{ty}\">\n{content}\n</hook_context>"))
}

/// `/^([A-Z_]+):\s*(.*)/` on one line.
fn typed_first_line(line: &str) -> Option<(&str, &str)> {
    let end = line.find(|c: char| !(c.is_ascii_uppercase() || c == '_'))?;
    if end == 0 || !line[end..].starts_with(':') {
        return None;
    }
    Some((&line[..end], line[end + 1..].trim_start()))
}

/// A value for `json!` that is the string, or "".
pub fn text(s: Option<&str>) -> Value {
    json!(s.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_contexts_are_wrapped_with_their_type() {
        assert_eq!(
            tool_context("PreToolUse", "  Be careful with src/.  "),
            Some(
                "<hook_context source=\"PreToolUse\" type=\"general\">\nBe careful with src/.\n</hook_context>".into()
            )
        );
        assert_eq!(
            tool_context("PostToolUse", "WORKSPACE_RULES: use tabs\n\nand spaces\n"),
            Some(
                "<hook_context source=\"PostToolUse\" type=\"workspace_rules\">\nuse tabs\nand spaces\n</hook_context>"
                    .into()
            )
        );
        assert_eq!(
            tool_context("PreToolUse", "NOTE:\nline one\n\nline two"),
            Some("<hook_context source=\"PreToolUse\" type=\"note\">\nline one\nline two\n</hook_context>".into())
        );
        assert_eq!(tool_context("PreToolUse", " \n "), None);
        assert!(tool_context("PreToolUse", "Note: mixed case is not a type").unwrap().contains("type=\"general\""));
    }

    #[test]
    fn answers_merge_as_clines_combined_runner() {
        let o = |c: bool, ctx: &str, e: &str| output::Output {
            cancel: c,
            context_modification: ctx.into(),
            error_message: e.into(),
        };
        let m = merge(vec![o(false, " one ", ""), o(true, "two", " stop ")], true);
        assert_eq!(m, Answer { cancel: true, context: Some("one\n\ntwo".into()), error_message: Some("stop".into()) });
        let single = merge(vec![o(false, " kept as is ", "  ")], false);
        assert_eq!(single, Answer { cancel: false, context: Some(" kept as is ".into()), error_message: None });
    }
}
