//! Cline's loop detection (`core/task/loop-detection.ts`): the same tool called with identical
//! arguments several times in a row. At the 3rd identical call the model is warned (Cline's
//! `repeatedToolCall` text after the result); at the 5th the mistake count is set to its limit,
//! so the person is asked for guidance (or, under `--yolo`, the task stops).

use super::Call;
use crate::run::prompt;

/// At this many identical calls in a row the model is warned.
pub(crate) const SOFT_THRESHOLD: u32 = 3;
/// At this many the mistake limit is reached.
pub(crate) const HARD_THRESHOLD: u32 = 5;

/// What the latest call means for the loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Nothing to do.
    Fine,
    /// Send this warning after the result.
    Warn(String),
    /// Raise the mistake count to its limit.
    Escalate,
}

/// The previous call's signature and how many identical calls in a row there have been.
#[derive(Debug, Default, Clone)]
pub(crate) struct Repeats {
    last: Option<(String, String)>,
    count: u32,
}

impl Repeats {
    /// Counts an executed call (Cline counts after the tool ran, whatever its outcome).
    pub(crate) fn observe(&mut self, call: &Call) -> Verdict {
        let current = (call.name.clone(), signature(call));
        if self.last.as_ref() == Some(&current) {
            self.count += 1;
        } else {
            self.count = 1;
        }
        self.last = Some(current);
        match self.count {
            SOFT_THRESHOLD => Verdict::Warn(prompt::repeated_tool_call(&call.name, SOFT_THRESHOLD)),
            HARD_THRESHOLD => Verdict::Escalate,
            _ => Verdict::Fine,
        }
    }
}

/// The parameters as Cline compares them: sorted by name, `task_progress` left out, the last
/// value of a repeated parameter (a JSON object keeps one).
fn signature(call: &Call) -> String {
    let mut params: Vec<(&str, &str)> = Vec::new();
    for (name, value, _) in &call.params {
        if name == "task_progress" {
            continue;
        }
        match params.iter_mut().find(|p| p.0 == name) {
            Some(p) => p.1 = value,
            None => params.push((name, value)),
        }
    }
    params.sort();
    serde_json::to_string(&params).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::super::testutil::call;
    use super::*;

    #[test]
    fn warns_at_three_identical_calls_and_escalates_at_five() {
        let mut r = Repeats::default();
        let read = call("read_file", &[("path", "a.rs")]);
        let verdicts: Vec<Verdict> = (0..6).map(|_| r.observe(&read)).collect();
        assert_eq!(verdicts[..2], [Verdict::Fine, Verdict::Fine]);
        assert_eq!(
            verdicts[2],
            Verdict::Warn("Tool [read_file] has been called 3 times consecutively with identical arguments. This is not making progress. Please use a different tool or different arguments instead of repeating the same call.".into())
        );
        assert_eq!(verdicts[3..], [Verdict::Fine, Verdict::Escalate, Verdict::Fine]);
    }

    #[test]
    fn a_different_call_resets_and_key_order_and_task_progress_do_not_matter() {
        let mut r = Repeats::default();
        let a = call("search_files", &[("path", "."), ("regex", "x")]);
        let b = call("search_files", &[("regex", "x"), ("path", "."), ("task_progress", "- [x] one")]);
        assert_eq!(r.observe(&a), Verdict::Fine);
        assert_eq!(r.observe(&b), Verdict::Fine);
        assert!(matches!(r.observe(&a), Verdict::Warn(_)));
        // Same params, another tool: not identical.
        let mut r = Repeats::default();
        r.observe(&call("read_file", &[("path", "a")]));
        r.observe(&call("read_file", &[("path", "a")]));
        assert_eq!(r.observe(&call("list_files", &[("path", "a")])), Verdict::Fine);
    }
}
