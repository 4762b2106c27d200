//! Cline's hooks (`core/hooks/`): executables named after one of eight events, in the global
//! hooks directory (`~/Documents/Cline/Hooks/`) and the workspace's `.clinerules/hooks/`.
//!
//! For an event, the global script runs, then the workspace's (Cline runs them concurrently
//! and merges the answers the same way: any `cancel` cancels, contexts are trimmed and joined
//! by blank lines, error messages by newlines). Each gets Cline's JSON on stdin ([`input`]) and
//! answers `{cancel, contextModification, errorMessage}` on stdout ([`output`]). A script that
//! fails — times out, exits non-zero without an answer, cannot start — is reported and the
//! event goes on as if it had no such script: the other scripts' answers stand, a `cancel`
//! included (Cline's `Promise.all` voids the merged answer, so a broken global hook would
//! switch off a workspace guard). A script that exits 0 without a valid answer is a warning,
//! not an error.
//!
//! Workspace hooks are code from the repository: they run once the person approved that exact
//! file content ([`approval`]), or under `--trust-workspace` as they were when the run started;
//! `--yolo` alone approves none (a run's commands, sandboxed, could have written them, and a
//! hook is not sandboxed). Global hooks always run; `--no-hooks` turns all of them off. Each
//! run is a `hook` event under `--json`.
//!
//! Every hook file is read once, from one descriptor (no FIFO, at most [`MAX_HOOK_BYTES`]; no
//! link in the workspace — a global hook, the person's own, is followed as in Cline), and its
//! bytes are kept in a sealed memory file (`sys.rs`) that is what gets executed: a hook
//! swapped, edited, made non-executable or removed during the run keeps running as it was
//! read, and the change is reported.
//!
//! Without the cargo feature `hooks` (the minimal build) no hook runs: the hook files present
//! are said once ([`Hooks::check`]), and every way to a script starts with [`BUILT_IN`], so the
//! optimizer leaves the running of scripts out of the binary.

pub(crate) mod approval;
pub(crate) mod input;
pub(crate) mod notification;
pub(crate) mod output;
pub(crate) mod process;
pub(crate) mod report;
mod sys;

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::run::session::events::Events;
use crate::run::ui::term::{visible, Term};

/// Whether this build runs hooks (the cargo feature `hooks`).
pub(crate) const BUILT_IN: bool = cfg!(feature = "hooks");

/// Cline's `HOOK_EXECUTION_TIMEOUT_MS`.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The eight hook events (named as in the `hook` event: `TaskStart`…).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub(crate) enum Hook {
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
    /// The run waits for the person, or the task is complete (observation only).
    Notification,
}

impl Hook {
    /// All of them.
    pub(crate) const ALL: [Hook; 9] = [
        Hook::TaskStart,
        Hook::TaskResume,
        Hook::TaskCancel,
        Hook::TaskComplete,
        Hook::UserPromptSubmit,
        Hook::PreToolUse,
        Hook::PostToolUse,
        Hook::PreCompact,
        Hook::Notification,
    ];

    /// The file name, which is also `hookName`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Hook::TaskStart => "TaskStart",
            Hook::TaskResume => "TaskResume",
            Hook::TaskCancel => "TaskCancel",
            Hook::TaskComplete => "TaskComplete",
            Hook::UserPromptSubmit => "UserPromptSubmit",
            Hook::PreToolUse => "PreToolUse",
            Hook::PostToolUse => "PostToolUse",
            Hook::PreCompact => "PreCompact",
            Hook::Notification => "Notification",
        }
    }

    /// The key of the per-hook object in the input (`preToolUse`, …).
    pub(crate) fn data_key(self) -> &'static str {
        match self {
            Hook::TaskStart => "taskStart",
            Hook::TaskResume => "taskResume",
            Hook::TaskCancel => "taskCancel",
            Hook::TaskComplete => "taskComplete",
            Hook::UserPromptSubmit => "userPromptSubmit",
            Hook::PreToolUse => "preToolUse",
            Hook::PostToolUse => "postToolUse",
            Hook::PreCompact => "preCompact",
            Hook::Notification => "notification",
        }
    }
}

/// How hooks are run.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// False under `--no-hooks`.
    pub enabled: bool,
    /// `--yolo`: nobody is asked (a workspace hook runs only if approved before or trusted).
    pub yolo: bool,
    /// `--trust-workspace`: the workspace hooks present when the run starts run unasked.
    pub trust: bool,
    /// Per script (`--hook-timeout`, default 30 s).
    pub timeout: Duration,
    /// The global hooks directory.
    pub global_dir: Option<PathBuf>,
    /// The Cline CLI's global hooks directory (`~/.cline/hooks`): its hooks are named, not run.
    pub cline_cli_dir: Option<PathBuf>,
    /// Where approvals are remembered.
    pub state_dir: Option<PathBuf>,
}

impl Config {
    /// The global hooks directory Cline uses: `Cline/Hooks` in the documents directory.
    pub(crate) fn default_global_dir() -> Option<PathBuf> {
        super::rules::documents_dir().map(|d| d.join("Cline").join("Hooks"))
    }

    /// The Cline CLI's global hooks directory: `hooks` in Cline's home folder.
    pub(crate) fn default_cline_cli_dir() -> Option<PathBuf> {
        crate::run::places::cline_dir().map(|d| d.join("hooks"))
    }
}

/// Where a script comes from (`global` or `workspace` in the `hook` event).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Source {
    /// The global hooks directory.
    Global,
    /// The workspace's `.clinerules/hooks/`.
    Workspace,
}

impl Source {
    /// As the `hook` event names it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Source::Global => "global",
            Source::Workspace => "workspace",
        }
    }
}

/// The merged answer of an event's scripts (Cline's `HookExecutionResult`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Answer {
    /// Stop the task.
    pub cancel: bool,
    /// Context for the next request, when not blank.
    pub context: Option<String>,
    /// The hooks' message, when not blank.
    pub error_message: Option<String>,
}

/// The largest hook file read: a script, or a compiled program (a Go guard is easily 10 MB; it
/// is read once into memory and copied into a sealed memory file).
pub(crate) const MAX_HOOK_BYTES: u64 = 64 << 20;

/// A hook script as read once: its hash is what is approved, and its bytes (in a sealed memory
/// file) are what runs, whatever the path holds later.
#[derive(Clone)]
struct Script {
    hook: Hook,
    src: Source,
    path: PathBuf,
    hash: String,
    sealed: Arc<OwnedFd>,
}

/// What a hook path holds now.
enum Found {
    /// No hook: no file, or a file without the execute bit (not a hook, as in Cline).
    None,
    /// A hook that cannot be used, and why (a link, a FIFO, too large).
    Unusable(String),
    /// A hook: its bytes and their SHA-256.
    Hook(Vec<u8>, String),
}

/// Reads a hook file once, from one descriptor: a regular executable file, at most
/// [`MAX_HOOK_BYTES`]; a workspace hook must not be a link (a global one, in the person's own
/// directory, is followed, as Cline follows it).
fn find(path: &Path, src: Source) -> Found {
    use crate::run::trusted_file::{open, Error, Links};
    let links = if src == Source::Global { Links::Follow } else { Links::Refuse };
    let opened = match open(path, links) {
        Ok(o) => o,
        Err(Error::Missing) => return Found::None,
        Err(e) => return Found::Unusable(e.to_string()),
    };
    // Executable by this user (Cline: `fs.access(X_OK)`), not merely by someone.
    if !opened.executable() {
        return Found::None;
    }
    match opened.read(MAX_HOOK_BYTES) {
        Ok(bytes) => {
            let hash = crate::run::digest::sha256(&bytes);
            Found::Hook(bytes, hash)
        }
        Err(e) => Found::Unusable(e.to_string()),
    }
}

/// Whether `path` holds a file (for a global hook, through a link too).
fn present(src: Source, path: &Path) -> bool {
    let meta = if src == Source::Global { path.metadata() } else { path.symlink_metadata() };
    meta.is_ok_and(|m| m.is_file())
}

/// The hooks of a run.
pub struct Hooks {
    cfg: Config,
    root: PathBuf,
    /// `taskId` and the model, for the input.
    pub(crate) meta: input::Meta,
    approvals: approval::Approvals,
    /// Workspace hook contents declined during this run (not asked again).
    declined: Vec<(String, String)>,
    /// Workspace hook contents approved during this run.
    accepted: Vec<(String, String)>,
    /// Whether the person may be asked (not from the Ctrl-C handler).
    ask: bool,
    /// The scripts read when the run started (and any that appeared later and ran): these
    /// bytes run for the whole run, whatever the files become.
    loaded: Vec<Script>,
    /// The workspace hooks present when the run started, by name and hash.
    at_start: Vec<(String, String)>,
    /// Warnings already given (each once per run).
    warned: Vec<String>,
    /// Built without hooks: the hook files present when the run started (said, never run).
    not_run: Vec<PathBuf>,
    /// The Cline CLI's hook directories holding a hook when the run started (said, never run).
    cline_cli: Vec<PathBuf>,
}

impl Hooks {
    /// Whether the run is `--yolo` (nobody is asked).
    pub(crate) fn yolo(&self) -> bool {
        self.cfg.yolo
    }

    /// The hooks of workspace `root`: every hook file is read now, once.
    pub(crate) fn new(root: &Path, cfg: Config, meta: input::Meta) -> Hooks {
        let approvals = approval::Approvals::new(cfg.state_dir.as_deref());
        let mut hooks = Hooks {
            cfg,
            root: root.to_path_buf(),
            meta,
            approvals,
            declined: Vec::new(),
            accepted: Vec::new(),
            ask: true,
            loaded: Vec::new(),
            at_start: Vec::new(),
            warned: Vec::new(),
            not_run: Vec::new(),
            cline_cli: Vec::new(),
        };
        if hooks.cfg.enabled {
            let dirs = [Some(root.join(".cline/hooks")), hooks.cfg.cline_cli_dir.clone()];
            hooks.cline_cli = dirs.into_iter().flatten().filter(|d| cline_cli_hooks(d)).collect();
            hooks.cline_cli.dedup();
        }
        if !BUILT_IN {
            hooks.not_run = Hook::ALL
                .into_iter()
                .flat_map(|h| hooks.paths(h))
                .filter(|(src, p)| present(*src, p))
                .map(|(_, p)| p)
                .collect();
            hooks.cfg.enabled = false;
            return hooks;
        }
        for hook in Hook::ALL {
            for (src, path) in hooks.paths(hook) {
                if let Found::Hook(bytes, hash) = find(&path, src) {
                    if let Ok(script) = hooks.seal(hook, src, path, &bytes, hash) {
                        if src == Source::Workspace {
                            hooks.at_start.push((hook.name().to_string(), script.hash.clone()));
                        }
                        hooks.loaded.push(script);
                    }
                }
            }
        }
        hooks
    }

    fn seal(&self, hook: Hook, src: Source, path: PathBuf, bytes: &[u8], hash: String) -> std::io::Result<Script> {
        let sealed = Arc::new(sys::sealed_copy(bytes)?);
        Ok(Script { hook, src, path, hash, sealed })
    }

    /// Hooks that never run (`--no-hooks`, tests).
    pub(crate) fn off(root: &Path) -> Hooks {
        let cfg = Config {
            enabled: false,
            yolo: false,
            trust: false,
            timeout: DEFAULT_TIMEOUT,
            global_dir: None,
            cline_cli_dir: None,
            state_dir: None,
        };
        Hooks::new(root, cfg, input::Meta::default())
    }

    /// A copy for another thread (the Ctrl-C handler): the same configuration, scripts and
    /// approvals, and it never asks.
    pub(crate) fn detached(&self) -> Hooks {
        Hooks {
            cfg: self.cfg.clone(),
            root: self.root.clone(),
            meta: self.meta.clone(),
            approvals: approval::Approvals::new(self.cfg.state_dir.as_deref()),
            declined: self.declined.clone(),
            accepted: self.accepted.clone(),
            ask: false,
            loaded: self.loaded.clone(),
            at_start: self.at_start.clone(),
            warned: self.warned.clone(),
            not_run: self.not_run.clone(),
            cline_cli: self.cline_cli.clone(),
        }
    }

    /// Where `hook`'s scripts would be: global first, then the workspace's.
    fn paths(&self, hook: Hook) -> Vec<(Source, PathBuf)> {
        if !self.cfg.enabled {
            return Vec::new();
        }
        let dirs = [
            (Source::Global, self.cfg.global_dir.clone()),
            (Source::Workspace, Some(self.root.join(".clinerules").join("hooks"))),
        ];
        dirs.into_iter().filter_map(|(src, dir)| Some((src, dir?.join(hook.name())))).collect()
    }

    /// The scripts of `hook` for this event: those read at the start run as they were read (a
    /// change to the file is reported once); one that appeared since is read now.
    fn scripts(&mut self, hook: Hook, term: &mut Term) -> Vec<Script> {
        let mut out = Vec::new();
        for (src, path) in self.paths(hook) {
            let found = find(&path, src);
            if let Some(s) = self.loaded.iter().find(|s| s.hook == hook && s.src == src).cloned() {
                let now = match &found {
                    Found::Hook(_, h) if *h == s.hash => None,
                    Found::Hook(..) => Some("its content changed".to_string()),
                    Found::None if present(src, &path) => Some("it is no longer executable".to_string()),
                    Found::None => Some("it was removed".to_string()),
                    Found::Unusable(why) => Some(format!("it cannot be read: {why}")),
                };
                if let Some(what) = now {
                    self.warn_once(
                        term,
                        format!(
                            "Hook {} changed during this run ({what}); the version read when the run started (sha256 {}…) keeps running until the run ends.",
                            visible(&self.shown(&path)),
                            &s.hash[..12]
                        ),
                    );
                }
                out.push(s);
                continue;
            }
            match found {
                Found::None => {}
                Found::Unusable(why) => self
                    .warn_once(term, format!("Hook {} does not run: {}.", visible(&self.shown(&path)), visible(&why))),
                Found::Hook(bytes, hash) => match self.seal(hook, src, path.clone(), &bytes, hash) {
                    Ok(s) => out.push(s),
                    Err(e) => self.warn_once(
                        term,
                        format!("Hook {} does not run: it could not be copied ({e}).", visible(&self.shown(&path))),
                    ),
                },
            }
        }
        out
    }

    /// Whether a hook lies where this run's tools and commands may write — the workspace (a
    /// run in Cline's documents folder itself) or a `--sandbox-allow-write` directory — and is
    /// not kept read-only to them there: a global one then is approved as a workspace's is (a
    /// command could have written it, and it runs outside the sandbox).
    fn within_reach(&self, path: &Path) -> bool {
        let real = crate::run::sandbox::guarded::real_path(path);
        let root = crate::run::sandbox::guarded::real_path(&self.root);
        let policy = crate::run::sandbox::current();
        (real.starts_with(&root) || policy.writable.iter().any(|w| real.starts_with(w)))
            && policy.guarded_dir(&root, &real).is_none()
    }

    fn warn_once(&mut self, term: &mut Term, message: String) {
        if !self.warned.contains(&message) {
            term.warn(&message);
            self.warned.push(message);
        }
    }

    /// Whether any script exists for `hook`.
    pub(crate) fn has(&self, hook: Hook) -> bool {
        self.loaded.iter().any(|s| s.hook == hook) || self.paths(hook).iter().any(|(src, p)| present(*src, p))
    }

    /// Warns about hook files that will never run (no execute bit, a link, too large): Cline
    /// skips a file without the execute bit silently.
    /// Settles now, on this thread, whether `hook`'s scripts may run — asking the person about
    /// an unapproved workspace script as a run of it would — for a copy that runs them later
    /// where nobody is asked ([`Hooks::detached`]); whether any may. None under `--yolo`, where
    /// nobody is asked anything.
    pub(crate) fn settle(&mut self, hook: Hook, term: &mut Term) -> bool {
        if !BUILT_IN || self.cfg.yolo {
            return false;
        }
        let scripts = self.scripts(hook, term);
        // Every script is settled (no short cut after the first allowed).
        let mut any = false;
        for s in &scripts {
            any |= self.allowed(s, term);
        }
        any
    }

    pub(crate) fn check(&mut self, term: &mut Term) {
        for dir in self.cline_cli.clone() {
            self.warn_once(
                term,
                format!(
                    "The hooks in {} are the Cline CLI's (its own events and input) and do not run: agent-min runs only Cline's extension hooks, from `.clinerules/hooks/` and `Documents/Cline/Hooks/`.",
                    visible(&self.shown(&dir))
                ),
            );
        }
        if !self.not_run.is_empty() {
            let files: Vec<String> = self.not_run.iter().map(|p| visible(&self.shown(p)).into_owned()).collect();
            let why = crate::run::built::not_built_in("hooks", "running hooks");
            self.warn_once(
                term,
                format!("Hooks do not run in this build: {} will not run, because {why}.", files.join(", ")),
            );
        }
        for hook in Hook::ALL {
            for (src, p) in self.paths(hook) {
                let shown = visible(&p.display().to_string()).into_owned();
                match find(&p, src) {
                    Found::None if present(src, &p) => self.warn_once(
                        term,
                        format!("Hook {shown} is not executable, so it does not run; `chmod +x` it to enable it."),
                    ),
                    Found::Unusable(why) => {
                        self.warn_once(term, format!("Hook {shown} does not run: {}.", visible(&why)))
                    }
                    _ => {}
                }
            }
        }
    }

    /// Runs `hook`'s scripts with `data` as the per-hook object.
    pub(crate) fn run(&mut self, hook: Hook, data: Value, term: &mut Term, events: &mut Events) -> Answer {
        if !BUILT_IN {
            return Answer::default();
        }
        let found = self.scripts(hook, term);
        let scripts: Vec<Script> = found.into_iter().filter(|s| self.allowed(s, term)).collect();
        if scripts.is_empty() {
            return Answer::default();
        }
        for s in &scripts {
            if !self.loaded.iter().any(|l| l.hook == s.hook && l.src == s.src) {
                self.loaded.push(s.clone());
            }
        }
        let stdin = input::build(hook, &self.meta, &self.root, data).to_string();
        let mut answers = Vec::new();
        for script in &scripts {
            let shown = self.shown(&script.path);
            term.tool("hook", &format!("{} ({shown})", hook.name()));
            let started = Instant::now();
            let ran = sys::inheritable(&script.sealed)
                .map_err(|e| format!("{shown} could not be started: {e}"))
                .and_then(|fd| {
                    let program = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
                    process::run(&program, Path::new(&shown), &self.root, &stdin, self.cfg.timeout)
                });
            let ms = started.elapsed().as_millis() as u64;
            let report = report::Report::of(hook, script.src, &shown, ms, &ran, self.cfg.timeout);
            report.show(term);
            events.emit(&report.event());
            // A failed script (no answer) adds nothing; the others' answers stand, a `cancel`
            // above all (ours: Cline's `Promise.all` drops them all, so one broken hook would
            // switch another's guard off).
            answers.extend(report.answer);
        }
        merge(answers, scripts.len() > 1)
    }

    /// Whether a script may run: global always; workspace once its content was approved (here
    /// or in an earlier run), or under `--trust-workspace` as it was when the run started.
    /// `--yolo` alone approves none: a run's commands could have written them.
    fn allowed(&mut self, script: &Script, term: &mut Term) -> bool {
        if script.src == Source::Global && !self.within_reach(&script.path) {
            return true;
        }
        let (hook, hash) = (script.hook, script.hash.clone());
        let this = (hook.name().to_string(), hash.clone());
        if self.accepted.contains(&this) || self.approvals.is_approved(&self.root, hook.name(), &hash) {
            return true;
        }
        if self.cfg.trust && self.at_start.contains(&this) {
            return true;
        }
        let shown = self.shown(&script.path);
        if self.cfg.yolo || !self.ask {
            if self.ask && !self.declined.contains(&this) {
                let why = if self.cfg.trust {
                    "was written or changed during this run and does not run: --trust-workspace trusts only the hooks present when the run started"
                } else {
                    "is not approved and does not run: --yolo does not approve the workspace's hooks (a run's commands can write them); approve it in a run without --yolo, or pass --trust-workspace"
                };
                term.warn(&format!("Workspace hook {} {why}.", visible(&shown)));
                self.declined.push(this);
            }
            return false;
        }
        if self.declined.contains(&this) {
            return false;
        }
        term.warn(&format!(
            "This workspace has a {} hook ({shown}, sha256 {}…): a program from the repository that agent-min would run on your behalf. Read it before approving; the approval is remembered until the file changes.",
            hook.name(),
            &hash[..12]
        ));
        let answer = term.prompt(&format!("  Run workspace hook {}? [y]es / [N]o: ", visible(&shown)));
        if answer.is_some_and(|a| matches!(a.trim(), "y" | "Y" | "yes" | "Yes")) {
            self.accepted.push(this);
            if let Err(e) = self.approvals.remember(&self.root, hook.name(), &hash) {
                term.warn(&format!("Could not remember the approval ({e}); you will be asked again next time."));
            }
            return true;
        }
        term.warn(&format!(
            "Workspace hook {shown} was not approved and does not run (approve it, pass --trust-workspace, or --no-hooks to silence this)."
        ));
        self.declined.push(this);
        false
    }

    fn shown(&self, script: &Path) -> String {
        script.strip_prefix(&self.root).unwrap_or(script).display().to_string()
    }
}

/// Whether `dir` holds a file the Cline CLI would take for a hook (its `toHookConfigFileName`:
/// a regular file named after an event in any case, with no extension or a script's).
fn cline_cli_hooks(dir: &Path) -> bool {
    const EVENTS: [&str; 10] = [
        "taskstart",
        "taskresume",
        "taskcancel",
        "taskcomplete",
        "taskerror",
        "pretooluse",
        "posttooluse",
        "userpromptsubmit",
        "precompact",
        "sessionshutdown",
    ];
    const EXTENSIONS: [&str; 12] = ["", "sh", "bash", "zsh", "js", "mjs", "cjs", "ts", "mts", "cts", "py", "ps1"];
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    entries.filter_map(Result::ok).take(1000).any(|e| {
        let name = e.file_name().to_string_lossy().to_ascii_lowercase();
        let (stem, ext) = match name.rsplit_once('.') {
            Some((stem, ext)) if !stem.is_empty() => (stem.to_string(), ext.to_string()),
            _ => (name.clone(), String::new()),
        };
        e.file_type().is_ok_and(|t| t.is_file()) && EVENTS.contains(&stem.trim()) && EXTENSIONS.contains(&ext.as_str())
    })
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

/// `<hook_context source="…" type="…">` as Cline's tool hooks wrap a context: a first line
/// `TYPE: text` names the type (lower-cased), else it is `general`.
pub(crate) fn tool_context(source: &str, context: &str) -> Option<String> {
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

#[cfg(all(test, not(feature = "hooks")))]
mod not_built_in {
    use super::*;

    #[test]
    fn without_the_feature_a_workspaces_hooks_are_said_and_never_run() {
        use std::os::unix::fs::PermissionsExt;
        let ws = tempfile::tempdir().unwrap();
        let dir = ws.path().join(".clinerules/hooks");
        std::fs::create_dir_all(&dir).unwrap();
        let marker = ws.path().join("ran");
        let script = dir.join("TaskStart");
        std::fs::write(&script, format!("#!/bin/sh\ntouch '{}'\necho '{{\"cancel\": true}}'\n", marker.display()))
            .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let cfg = Config {
            enabled: true,
            yolo: true,
            trust: true,
            timeout: DEFAULT_TIMEOUT,
            global_dir: None,
            cline_cli_dir: None,
            state_dir: None,
        };
        let mut hooks = Hooks::new(ws.path(), cfg, input::Meta::default());
        let buf = crate::run::ui::term::Captured::default();
        let mut term = Term::to_writer(Box::new(buf.clone()));
        hooks.check(&mut term);
        let said = buf.text();
        assert!(said.contains(".clinerules/hooks/TaskStart") && said.contains("`hooks`"), "{said}");
        let answer = hooks.run(Hook::TaskStart, serde_json::json!({}), &mut term, &mut Events::off());
        assert_eq!(answer, Answer::default());
        assert!(!hooks.has(Hook::TaskStart));
        assert!(!marker.exists(), "a hook ran in a build without hooks");
    }
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

    /// A project set up for the Cline CLI may have hooks in `.cline/hooks/`, written for the
    /// CLI's events and input: said once, never run; `.clinerules/hooks/` is not affected.
    #[test]
    fn the_cline_clis_hooks_are_said_not_to_run() {
        let ws = tempfile::tempdir().unwrap();
        crate::run::test_files::write(ws.path(), ".cline/hooks/PreToolUse.sh", "#!/bin/sh\nexit 0\n");
        for not_a_hook in ["README.md", "PreToolUse.md", "TaskStart.sh.bak", "TaskCancel/x"] {
            crate::run::test_files::write(ws.path(), &format!(".cline/hooks/{not_a_hook}"), "");
        }
        let cfg = Config {
            enabled: true,
            yolo: true,
            trust: false,
            timeout: DEFAULT_TIMEOUT,
            global_dir: None,
            cline_cli_dir: None,
            state_dir: None,
        };
        let mut hooks = Hooks::new(ws.path(), cfg.clone(), input::Meta::default());
        let buf = crate::run::ui::term::Captured::default();
        let mut term = Term::to_writer(Box::new(buf.clone()));
        hooks.check(&mut term);
        hooks.check(&mut term);
        let said = buf.text();
        assert_eq!(said.matches("The hooks in .cline/hooks are the Cline CLI's").count(), 1, "{said}");
        assert!(said.contains("do not run"), "{said}");
        // Only an event's name counts, and `--no-hooks` says nothing.
        std::fs::remove_file(ws.path().join(".cline/hooks/PreToolUse.sh")).unwrap();
        let buf = crate::run::ui::term::Captured::default();
        let mut term = Term::to_writer(Box::new(buf.clone()));
        Hooks::new(ws.path(), cfg.clone(), input::Meta::default()).check(&mut term);
        assert!(!buf.text().contains(".cline/hooks"), "{}", buf.text());
        crate::run::test_files::write(ws.path(), ".cline/hooks/taskstart", "");
        Hooks::new(ws.path(), Config { enabled: false, ..cfg.clone() }, input::Meta::default()).check(&mut term);
        assert!(!buf.text().contains(".cline/hooks"), "{}", buf.text());
        // The CLI's global directory (`~/.cline/hooks`) is named by its whole path.
        let global = tempfile::tempdir().unwrap();
        crate::run::test_files::write(global.path(), "TaskComplete.py", "");
        let cfg = Config { cline_cli_dir: Some(global.path().to_path_buf()), ..cfg };
        Hooks::new(ws.path(), cfg, input::Meta::default()).check(&mut term);
        let said = buf.text();
        assert!(said.contains(&format!("The hooks in {} are the Cline CLI's", global.path().display())), "{said}");
    }

    /// An executable file `body` at `path`.
    #[cfg(feature = "hooks")]
    fn executable(path: &Path, body: &str) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(path, body).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// Hooks of `ws` (workspace hooks trusted, nobody asked) with the global hooks of `global`.
    #[cfg(feature = "hooks")]
    fn trusting(ws: &Path, global: &Path) -> Hooks {
        let cfg = Config {
            enabled: true,
            yolo: true,
            trust: true,
            timeout: DEFAULT_TIMEOUT,
            global_dir: Some(global.to_path_buf()),
            cline_cli_dir: None,
            state_dir: None,
        };
        Hooks::new(ws, cfg, input::Meta::default())
    }

    /// One failing script (global: exit 1, no answer) does not void another's cancel
    /// (workspace); the failed one only adds nothing, the other's context and message stay.
    #[cfg(feature = "hooks")]
    #[test]
    fn a_failing_hook_does_not_void_another_hooks_cancel() {
        let (ws, global) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let dir = ws.path().join(".clinerules/hooks");
        std::fs::create_dir_all(&dir).unwrap();
        let guard = "#!/bin/sh\ncat >/dev/null\necho '{\"cancel\": true, \"contextModification\": \"kept\", \"errorMessage\": \"blocked\"}'\n";
        let broken = "#!/bin/sh\ncat >/dev/null\necho 'no answer'\nexit 1\n";
        // Both orders: the failing script first (global) and last (workspace).
        for (g, w) in [(broken, guard), (guard, broken)] {
            executable(&global.path().join("PreToolUse"), g);
            executable(&dir.join("PreToolUse"), w);
            let mut hooks = trusting(ws.path(), global.path());
            let mut term = Term::to_writer(Box::new(crate::run::ui::term::Captured::default()));
            let a = hooks.run(Hook::PreToolUse, serde_json::json!({}), &mut term, &mut Events::off());
            assert_eq!(a, Answer { cancel: true, context: Some("kept".into()), error_message: Some("blocked".into()) });
        }
    }

    /// A global hook that is a link (dotfiles) runs, as in Cline; a workspace one is refused.
    #[cfg(feature = "hooks")]
    #[test]
    fn a_linked_global_hook_runs_and_a_linked_workspace_hook_does_not() {
        let (ws, global, real) =
            (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let dir = ws.path().join(".clinerules/hooks");
        std::fs::create_dir_all(&dir).unwrap();
        let (guard, ctx) = (real.path().join("guard"), real.path().join("ctx"));
        executable(&guard, "#!/bin/sh\ncat >/dev/null\necho '{\"cancel\": true}'\n");
        executable(&ctx, "#!/bin/sh\ncat >/dev/null\necho '{\"contextModification\": \"from the workspace\"}'\n");
        std::os::unix::fs::symlink(&guard, global.path().join("PreToolUse")).unwrap();
        std::os::unix::fs::symlink(&ctx, dir.join("PreToolUse")).unwrap();
        let mut hooks = trusting(ws.path(), global.path());
        assert!(hooks.has(Hook::PreToolUse));
        let buf = crate::run::ui::term::Captured::default();
        let mut term = Term::to_writer(Box::new(buf.clone()));
        let a = hooks.run(Hook::PreToolUse, serde_json::json!({}), &mut term, &mut Events::off());
        assert_eq!(a, Answer { cancel: true, context: None, error_message: None });
        let said = buf.text();
        assert!(said.contains("does not run: it is a symbolic link"), "{said}");
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
