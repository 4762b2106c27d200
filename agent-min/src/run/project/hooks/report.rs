//! What one script run came to, for the terminal and the `hook` event: Cline's
//! `StdioHookRunner` outcomes (answer, no answer, failure) with `HookExecutionError`'s texts.

use std::time::Duration;

use super::output::{self, Output};
use super::process::Ran;
use super::{Hook, Source};
use crate::run::session::events::Event;
use crate::run::ui::term::Term;

/// Most characters of a script's stderr quoted in a failure.
const STDERR_SHOWN: usize = 2000;

/// One script's outcome.
pub(crate) struct Report {
    /// Its answer: valid JSON (whatever the exit code: a guard's `cancel` with exit 1 holds,
    /// where Cline's `HookProcess` drops every non-zero exit's answer — docs/agent.md lists the
    /// difference), or the empty answer of a script that exited 0 without one.
    pub answer: Option<Output>,
    /// It failed: could not start, timed out, or exited non-zero without an answer.
    pub failed: bool,
    /// A warning or error to show, if any.
    pub problem: Option<String>,
    /// The end of what it printed on stderr (shown under a successful run; part of `problem`
    /// for a failed one).
    stderr: String,
    hook: Hook,
    source: Source,
    script: String,
    ms: u64,
    code: Option<i32>,
    timed_out: bool,
}

impl Report {
    /// Judges a run.
    pub(crate) fn of(
        hook: Hook,
        source: Source,
        script: &str,
        ms: u64,
        ran: &Result<Ran, String>,
        timeout: Duration,
    ) -> Report {
        let mut r = Report {
            answer: None,
            failed: false,
            problem: None,
            hook,
            source,
            script: script.to_string(),
            ms,
            code: None,
            timed_out: false,
            stderr: String::new(),
        };
        let ran = match ran {
            Ok(ran) => ran,
            Err(e) => {
                r.failed = true;
                r.problem = Some(format!("{} hook failed: {e}", hook.name()));
                return r;
            }
        };
        r.code = ran.code;
        r.timed_out = ran.timed_out;
        r.stderr = last_lines(&ran.stderr);
        let stderr = tail(&ran.stderr);
        if ran.timed_out {
            r.failed = true;
            r.problem = Some(format!(
                "{} hook execution timed out after {}ms and was killed{stderr}",
                hook.name(),
                timeout.as_millis()
            ));
            return r;
        }
        match (output::parse(&ran.stdout), ran.code) {
            (Ok(answer), _) => r.answer = Some(answer),
            (Err(why), Some(0)) => {
                r.answer = Some(Output::default());
                r.problem = Some(format!(
                    "{} hook gave no valid answer ({why}); it was ignored. A hook answers on stdout with JSON like {{\"cancel\": false, \"contextModification\": \"\", \"errorMessage\": \"\"}}",
                    hook.name()
                ));
            }
            (Err(_), Some(code)) => {
                r.failed = true;
                r.problem = Some(format!("{} hook exited with code {code}{stderr}", hook.name()));
            }
            (Err(_), None) => {
                r.failed = true;
                r.problem = Some(format!("{} hook was killed by a signal{stderr}", hook.name()));
            }
        }
        if ran.truncated {
            let note = "its output exceeded 1 MB; only the last 1 MB of each stream was kept";
            r.problem =
                Some(r.problem.map_or_else(|| format!("{} hook: {note}", hook.name()), |p| format!("{p}; {note}")));
        }
        r
    }

    /// The outcome line under the hook's tool line (and, for a run that did not fail, the end
    /// of its stderr, where hooks tell the person what they did).
    pub(crate) fn show(&self, term: &mut Term) {
        if let Some(p) = &self.problem {
            term.outcome(!self.failed, p);
        }
        if !self.failed && !self.stderr.is_empty() {
            term.block(&self.stderr);
        }
        match &self.answer {
            Some(a) if a.cancel => {
                let why = if a.error_message.trim().is_empty() { "no reason given" } else { a.error_message.trim() };
                term.outcome(true, &format!("asks to cancel the task: {why}"));
            }
            Some(a) => {
                if !a.error_message.trim().is_empty() {
                    term.outcome(true, &format!("says: {}", a.error_message.trim()));
                }
                let n = a.context_modification.trim().chars().count();
                let what = if n > 0 { format!("added {n} characters of context") } else { "done".to_string() };
                term.outcome(true, &format!("{what} ({} ms)", self.ms));
            }
            None => {}
        }
    }

    /// The `--json` event.
    pub(crate) fn event(&self) -> Event {
        let a = self.answer.clone().unwrap_or_default();
        Event::Hook {
            hook: self.hook.name().into(),
            source: self.source.name().into(),
            script: self.script.clone(),
            ok: !self.failed,
            exit_code: self.code,
            timed_out: self.timed_out,
            duration_ms: self.ms,
            cancel: a.cancel,
            context_chars: a.context_modification.chars().count() as u64,
            error_message: a.error_message,
            problem: self.problem.clone(),
        }
    }
}

/// Most lines of a successful hook's stderr shown.
const STDERR_LINES: usize = 20;

fn last_lines(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.trim_end().lines().collect();
    let shown = &lines[lines.len().saturating_sub(STDERR_LINES)..];
    shown.iter().map(|l| crate::run::ui::redact::first_chars(l, STDERR_SHOWN)).collect::<Vec<_>>().join("\n")
}

fn tail(stderr: &str) -> String {
    let t = stderr.trim();
    if t.is_empty() {
        return String::new();
    }
    format!("; stderr:\n{}", crate::run::ui::redact::last_chars(t, STDERR_SHOWN))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(stdout: &str, code: Option<i32>) -> Result<Ran, String> {
        Ok(Ran { stdout: stdout.into(), stderr: "boom".into(), code, ..Ran::default() })
    }

    fn judge(r: &Result<Ran, String>) -> Report {
        Report::of(Hook::PreToolUse, Source::Workspace, ".clinerules/hooks/PreToolUse", 5, r, Duration::from_secs(30))
    }

    #[test]
    fn a_valid_answer_counts_whatever_the_exit_code() {
        let r = judge(&ran("{\"cancel\": true}", Some(2)));
        assert!(!r.failed && r.answer.unwrap().cancel);
    }

    #[test]
    fn no_answer_with_exit_0_is_a_warning_and_with_another_code_a_failure() {
        let r = judge(&ran("not valid json", Some(0)));
        assert!(!r.failed);
        assert_eq!(r.answer, Some(Output::default()));
        assert!(r.problem.unwrap().contains("no valid answer (its stdout is not JSON"));
        let r = judge(&ran("not valid json", Some(1)));
        assert!(r.failed && r.answer.is_none());
        assert_eq!(r.problem.unwrap(), "PreToolUse hook exited with code 1; stderr:\nboom");
    }

    #[test]
    fn timeouts_and_start_failures_fail() {
        let t = Ok(Ran { timed_out: true, ..Ran::default() });
        let r = judge(&t);
        assert!(r.failed);
        assert_eq!(r.problem.as_deref(), Some("PreToolUse hook execution timed out after 30000ms and was killed"));
        assert!(matches!(r.event(), crate::run::session::events::Event::Hook { timed_out: true, ok: false, .. }));
        let r = judge(&Err("x could not be started: it has no #! line".into()));
        assert!(r.failed && r.problem.unwrap().contains("no #! line"));
    }
}
