//! `--max-mistakes`: the model's mistakes in a row, by kind, so that a run stopped at the limit
//! says which condition fired — Cline's loop detection (one call repeated), replies without a
//! tool, or failed calls — instead of listing every condition that could have.

/// One kind of mistake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mistake {
    /// A reply called no tool.
    NoTool,
    /// A reply was cut off (output limit) or ended inside a tool call.
    CutOff,
    /// A call was invalid: missing parameters, arguments that are not JSON.
    InvalidCall,
    /// A tool failed in a way Cline counts (a failed edit, read or search).
    FailedTool,
}

impl Mistake {
    /// How a count of this kind reads (`n` of them).
    fn describe(self, n: usize) -> String {
        let (one, many) = match self {
            Mistake::NoTool => ("reply without a tool call", "replies without a tool call"),
            Mistake::CutOff => ("reply cut off", "replies cut off"),
            Mistake::InvalidCall => ("invalid tool call", "invalid tool calls"),
            Mistake::FailedTool => ("failed edit, read or search", "failed edits, reads or searches"),
        };
        format!("{n} {}", if n == 1 { one } else { many })
    }
}

/// The mistakes since the last success (or guidance).
#[derive(Debug, Default, Clone)]
pub(crate) struct Mistakes {
    kinds: Vec<Mistake>,
    /// Loop detection fired on this tool: the count is at its limit whatever it was.
    looped: Option<(String, u32)>,
}

impl Mistakes {
    /// Counts one mistake.
    pub(crate) fn add(&mut self, kind: Mistake) {
        self.kinds.push(kind);
    }

    /// Loop detection fired: `tool` was called `times` in a row with the same arguments.
    pub(crate) fn looped(&mut self, tool: &str, times: u32) {
        self.looped = Some((tool.to_string(), times));
    }

    /// Forgets them (a success, or the person's guidance).
    pub(crate) fn clear(&mut self) {
        *self = Mistakes::default();
    }

    /// The count as the limit sees it: at the limit once loop detection fired.
    pub(crate) fn count(&self, limit: u32) -> u32 {
        let n = self.kinds.len().min(u32::MAX as usize) as u32;
        if self.looped.is_some() {
            n.max(limit)
        } else {
            n
        }
    }

    /// Why the run stops at `limit`, naming the condition that fired.
    pub(crate) fn stop_reason(&self, limit: u32) -> String {
        if let Some((tool, times)) = &self.looped {
            return format!(
                "loop detection: the model called {tool} with the same arguments {times} times in a row; stopping (Cline's limit, as at --max-mistakes {limit})"
            );
        }
        let mut counts: Vec<(Mistake, usize)> = Vec::new();
        for k in &self.kinds {
            match counts.iter_mut().find(|(c, _)| c == k) {
                Some((_, n)) => *n += 1,
                None => counts.push((*k, 1)),
            }
        }
        let what: Vec<String> = counts.iter().map(|(k, n)| k.describe(*n)).collect();
        format!(
            "the model made {} mistakes in a row ({}); stopping at --max-mistakes {limit}",
            self.kinds.len(),
            what.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stop_reason_names_the_condition_that_fired() {
        let mut m = Mistakes::default();
        for _ in 0..3 {
            m.add(Mistake::NoTool);
        }
        assert_eq!(m.count(3), 3);
        assert_eq!(
            m.stop_reason(3),
            "the model made 3 mistakes in a row (3 replies without a tool call); stopping at --max-mistakes 3"
        );
        m.clear();
        m.add(Mistake::NoTool);
        m.add(Mistake::FailedTool);
        assert!(m.stop_reason(3).contains("(1 reply without a tool call, 1 failed edit, read or search)"));
        m.clear();
        m.looped("execute_command", 5);
        assert_eq!(m.count(3), 3, "loop detection puts the count at the limit");
        let why = m.stop_reason(3);
        assert!(why.starts_with("loop detection: the model called execute_command"), "{why}");
        assert!(!why.contains("no tool"), "{why}");
    }
}
