//! Cline's focus chain (`core/task/focus-chain/`): the model keeps a Markdown checklist of the
//! task in the `task_progress` parameter of its tool calls, and the loop reminds it to — on
//! the first request, while there is no list, and every `remindClineInterval` (6) requests
//! without an update. On by default in Cline (`DEFAULT_FOCUS_CHAIN_SETTINGS`), as here; off
//! with `--no-focus-chain`.
//!
//! What Cline does with a person editing the list (its Markdown file, watched) and with plan
//! mode has no counterpart here: agent-min has neither an editor-side list nor plan mode.

/// Cline's `remindClineInterval` default: requests without an update before a reminder.
pub(crate) const REMIND_INTERVAL: u32 = 6;

/// The checklist and Cline's counters (`TaskState.apiRequestCount`,
/// `apiRequestsSinceLastTodoUpdate`, `currentFocusChainChecklist`).
#[derive(Debug, Default, Clone)]
pub(crate) struct FocusChain {
    /// The model's last list (trimmed), if it gave one.
    list: Option<String>,
    /// Requests made by this run of the task (Cline's count restarts with its task object).
    requests: u32,
    /// Requests since the model last gave a list, or since the last reminder.
    since_update: u32,
}

/// A checklist's items and how many are ticked (Cline's `parseFocusChainListCounts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Lines that are items (`- [ ]`, `- [x]`, `- [X]` once trimmed).
    pub total: usize,
    /// Items ticked (`- [x]`, `- [X]`).
    pub done: usize,
}

/// Whether a trimmed line is an item (Cline's `isFocusChainItem`).
fn is_item(line: &str) -> bool {
    ["- [ ]", "- [x]", "- [X]"].iter().any(|p| line.starts_with(p))
}

/// Counts the items of `list` as Cline's `parseFocusChainListCounts` does.
pub(crate) fn counts(list: &str) -> Counts {
    let mut c = Counts { total: 0, done: 0 };
    for line in list.split('\n').map(str::trim) {
        if is_item(line) {
            c.total += 1;
            c.done += usize::from(line.starts_with("- [x]") || line.starts_with("- [X]"));
        }
    }
    c
}

/// The lines of `list` that are items (trimmed, `- [ ]`, `- [x]` or `- [X]`), as they are,
/// joined by line breaks (Cline's `extractFocusChainListFromText`).
fn item_lines(list: &str) -> String {
    let items = list.split('\n').filter(|l| is_item(l.trim()));
    items.collect::<Vec<_>>().join("\n")
}

/// The items of `list` as Cline's webview reads them (`parseFocusChainItem`,
/// `^-\s*\[([ xX])\]\s*(.+)$` on each trimmed line): whether each is ticked, and its text.
pub(crate) fn items(list: &str) -> impl Iterator<Item = (bool, &str)> {
    list.lines().filter_map(|line| {
        let rest = line.trim().strip_prefix('-')?.trim_start().strip_prefix('[')?;
        let mut chars = rest.chars();
        let mark = chars.next().filter(|c| matches!(c, ' ' | 'x' | 'X'))?;
        let text = chars.as_str().strip_prefix(']')?.trim();
        (!text.is_empty()).then_some((mark != ' ', text))
    })
}

impl FocusChain {
    /// A chain that goes on from a saved list (a resumed task).
    pub(crate) fn with_list(list: Option<String>) -> Self {
        FocusChain { list: list.filter(|l| !l.trim().is_empty()), ..Self::default() }
    }

    /// The current list.
    pub(crate) fn list(&self) -> Option<&str> {
        self.list.as_deref()
    }

    /// A request is about to be made (Cline counts at the top of `recursivelyMakeClineRequests`);
    /// returns the instructions its user content ends with, if they are due (Cline's
    /// `shouldIncludeFocusChainInstructions` and `generateFocusChainInstructions`, in
    /// `loadContext`), and then starts counting again.
    pub(crate) fn next_request(&mut self) -> Option<String> {
        self.requests += 1;
        self.since_update += 1;
        let due = self.since_update >= REMIND_INTERVAL
            || (self.requests == 1 && self.list.is_none())
            || (self.list.is_none() && self.requests >= 2);
        if !due {
            return None;
        }
        let text = self.instructions();
        if text.trim().is_empty() {
            return None;
        }
        self.since_update = 0;
        Some(text)
    }

    /// The model's `task_progress` of a complete call (Cline's `updateFCListFromToolResponse`):
    /// a non-blank one becomes the list and restarts the count. Returns the new list when it
    /// differs from the one before (what is shown and reported). A call without one leaves
    /// the list's items alone: Cline reads its list back from its Markdown file then
    /// (`readFocusChainFromDisk`), which keeps only the item lines.
    pub(crate) fn update(&mut self, task_progress: Option<&str>) -> Option<&str> {
        let Some(given) = task_progress.map(str::trim).filter(|t| !t.is_empty()) else {
            if let Some(list) = &mut self.list {
                let kept = item_lines(list);
                if !kept.is_empty() {
                    *list = kept;
                }
            }
            return None;
        };
        self.since_update = 0;
        if self.list.as_deref() == Some(given) {
            return None;
        }
        self.list = Some(given.to_string());
        self.list.as_deref()
    }

    /// Cline's `generateFocusChainInstructions` (act mode, the list never edited by a person).
    fn instructions(&self) -> String {
        let Some(list) = &self.list else {
            return if self.requests < 10 {
                RECOMMENDED.to_string()
            } else {
                API_REQUEST_COUNT.replace("{{apiRequestCount}}", &self.requests.to_string())
            };
        };
        let Counts { total, done } = counts(list);
        // As Cline's `Math.round((completedItems / totalItems) * 100)`: divided first (23 of 40
        // is 57.49999…%, 57).
        let percent = if total > 0 { (done as f64 / total as f64 * 100.0).round() as usize } else { 0 };
        let stub = if done == 0 && total > 0 {
            "\n\n**Note:** No items are marked complete yet. As you work through the task, remember to mark items as complete when finished.".to_string()
        } else if (25..50).contains(&percent) {
            format!("\n\n**Note:** {percent}% of items are complete.")
        } else if (50..75).contains(&percent) {
            format!("\n\n**Note:** {percent}% of items are complete. Proceed with the task.")
        } else if percent >= 75 {
            format!("\n\n**Note:** {percent}% of items are complete! Focus on finishing the remaining items.")
        } else {
            // Cline's "all items completed" text sits in a branch its `>= 75` branch always
            // takes first: it is never sent, here either.
            String::new()
        };
        // Cline's template literal, its indentation included.
        format!(
            "\n\n\t\t\t\t# TODO LIST UPDATE REQUIRED - You MUST include the task_progress parameter in your NEXT tool call.\n\n\t\t\t\t**Current Progress: {done}/{total} items completed ({percent}%)**\n\n\t\t\t\t{list}\n\n\t\t\t\t\n\n\t\t\t\t{REMINDER}\n\n\t\t\t\t{stub}\n\n\t\t\t\t"
        )
    }
}

/// Cline's `FocusChainPrompts.reminder` (a macro, so that `API_REQUEST_COUNT` holds it as
/// Cline's template does).
macro_rules! reminder {
    () => {
        "
1. To create or update a todo list, include the task_progress parameter in the next tool call
2. Review each item and update its status:
   - Mark completed items with: - [x]
   - Keep incomplete items as: - [ ]
   - Add new items if you discover additional steps
3. Modify the list as needed:
\t\t- Add any new steps you've discovered
\t\t- Reorder if the sequence has changed
4. Ensure the list accurately reflects the current state

**Remember:** Keeping the task_progress list updated helps track progress and ensures nothing is missed."
    };
}
const REMINDER: &str = reminder!();

/// Cline's `FocusChainPrompts.recommended` (with `listInstructionsRecommended`).
const RECOMMENDED: &str = "
# task_progress RECOMMENDED

When starting a new task, it is recommended to include a todo list using the task_progress parameter.


1. Include a todo list using the task_progress parameter in your next tool call
2. Create a comprehensive checklist of all steps needed
3. Use markdown format: - [ ] for incomplete, - [x] for complete

**Benefits of creating a todo/task_progress list now:**
\t- Clear roadmap for implementation
\t- Progress tracking throughout the task
\t- Nothing gets forgotten or missed
\t- Users can see, monitor, and edit the plan

**Example structure:**```
- [ ] Analyze requirements
- [ ] Set up necessary files
- [ ] Implement main functionality
- [ ] Handle edge cases
- [ ] Test the implementation
- [ ] Verify results```

Keeping the task_progress list updated helps track progress and ensures nothing is missed.
";

/// Cline's `FocusChainPrompts.apiRequestCount` (with `reminder`).
const API_REQUEST_COUNT: &str = concat!(
    "
# task_progress

You've made {{apiRequestCount}} API requests without a task_progress parameter. It is strongly recomended that you create one to track remaining work.

",
    reminder!(),
    "\n"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_items_as_cline_does() {
        let l = "- [x] a\n  - [X] b\n- [ ] c\n-[ ] not an item\n* [ ] nor this\n- [ ]d";
        assert_eq!(counts(l), Counts { total: 4, done: 2 });
        assert_eq!(counts(""), Counts { total: 0, done: 0 });
    }

    #[test]
    fn items_are_read_as_clines_webview_reads_them() {
        let l = "- [x] a\n  -  [ ]  b  \n- [X]c\n- [ ]\n- [y] no\n* [ ] no\ntext";
        assert_eq!(items(l).collect::<Vec<_>>(), [(true, "a"), (false, "b"), (true, "c")]);
    }

    #[test]
    fn reminds_on_the_first_request_then_while_there_is_no_list() {
        let mut fc = FocusChain::default();
        let first = fc.next_request().unwrap();
        assert!(first.starts_with("\n# task_progress RECOMMENDED\n"), "{first}");
        // No list after the first request: every request is reminded.
        assert!(fc.next_request().unwrap().contains("RECOMMENDED"));
        for _ in 3..10 {
            assert!(fc.next_request().is_some());
        }
        let tenth = fc.next_request().unwrap();
        assert!(tenth.contains("You've made 10 API requests without a task_progress parameter."), "{tenth}");
    }

    #[test]
    fn with_a_list_reminds_every_sixth_request_without_an_update() {
        let mut fc = FocusChain::default();
        fc.next_request();
        assert_eq!(
            fc.update(Some("  - [x] one\n- [ ] two\n- [ ] three\n- [ ] four  ")),
            Some("- [x] one\n- [ ] two\n- [ ] three\n- [ ] four")
        );
        for _ in 0..5 {
            assert_eq!(fc.next_request(), None);
        }
        let due = fc.next_request().unwrap();
        assert!(due.contains("**Current Progress: 1/4 items completed (25%)**"), "{due}");
        assert!(due.contains("**Note:** 25% of items are complete."), "{due}");
        assert!(due.contains("\n\n\t\t\t\t- [x] one\n- [ ] two"), "{due}");
        // The reminder restarts the count; an update does too, a blank one does not.
        for _ in 0..4 {
            assert_eq!(fc.next_request(), None);
        }
        assert_eq!(fc.update(Some("   ")), None);
        assert_eq!(fc.next_request(), None);
        assert!(fc.next_request().is_some());
        for _ in 0..3 {
            fc.next_request();
        }
        // The same list again is no change to show, but it is an update.
        assert_eq!(fc.update(Some("- [x] one\n- [ ] two\n- [ ] three\n- [ ] four")), None);
        for _ in 0..5 {
            assert_eq!(fc.next_request(), None);
        }
    }

    #[test]
    fn a_call_without_a_list_keeps_only_the_items_as_cline_reads_its_file_back() {
        let mut fc = FocusChain::default();
        fc.update(Some("## Plan\n- [x] a\n  - [ ] b\nNotes: x"));
        assert_eq!(fc.list(), Some("## Plan\n- [x] a\n  - [ ] b\nNotes: x"));
        assert_eq!(fc.update(None), None);
        assert_eq!(fc.list(), Some("- [x] a\n  - [ ] b"));
        // A list without items stays as it is (Cline's file read gives nothing then).
        let mut fc = FocusChain::with_list(Some("just words".into()));
        fc.update(Some("  "));
        assert_eq!(fc.list(), Some("just words"));
    }

    #[test]
    fn percentages_round_as_clines_do() {
        let mut list: Vec<&str> = vec!["- [x] i"; 23];
        list.extend(vec!["- [ ] i"; 17]);
        let mut fc = FocusChain::with_list(Some(list.join("\n")));
        let due = (0..REMIND_INTERVAL).find_map(|_| fc.next_request()).unwrap();
        assert!(due.contains("**Current Progress: 23/40 items completed (57%)**"), "{due}");
    }

    #[test]
    fn progress_notes_follow_clines_thresholds() {
        let note = |list: &str| {
            let mut fc = FocusChain::with_list(Some(list.to_string()));
            (0..REMIND_INTERVAL).find_map(|_| fc.next_request()).unwrap()
        };
        assert!(note("- [ ] a\n- [ ] b").contains("No items are marked complete yet"));
        assert!(note("- [x] a\n- [ ] b").contains("50% of items are complete. Proceed with the task."));
        assert!(note("- [x] a\n- [x] b\n- [x] c\n- [ ] d").contains("75% of items are complete! Focus"));
        assert!(note("- [x] a").contains("100% of items are complete! Focus on finishing the remaining items."));
        assert!(!note("- [x] a\n- [ ] b\n- [ ] c\n- [ ] d\n- [ ] e\n- [ ] f").contains("**Note:**"));
    }
}

/// The wire: a reminder is a text block of its own, between the content's and the environment
/// details' (`llm/providers/history.rs` finds it by how Cline's texts start and end).
#[cfg(test)]
mod wire_tests {
    use super::*;
    use crate::run::llm::providers::history::{text_blocks, without_reminder};

    #[test]
    fn each_reminder_is_its_own_text_block_before_the_environment_details() {
        let env = "<environment_details>\nE\n</environment_details>";
        let hook = "<hook_context source=\"TaskStart\">\nh\n</hook_context>";
        let mut with_list = FocusChain::with_list(Some("- [x] a\n- [ ] b".into()));
        let todo = (0..REMIND_INTERVAL).find_map(|_| with_list.next_request()).unwrap();
        let mut without = FocusChain::default();
        let recommended = without.next_request().unwrap();
        let mut late = FocusChain::default();
        let count = (0..10).filter_map(|_| late.next_request()).last().unwrap();
        assert!(count.contains("You've made 10 API requests"));
        for note in [&todo, &recommended, &count] {
            // As `Task::remind_of_the_checklist` puts it: before the environment details.
            let text = format!("<task>\nt\n</task>\n\n{hook}\n\n{note}\n\n{env}");
            assert_eq!(text_blocks(&text), ["<task>\nt\n</task>", hook, note.as_str(), env], "{note:?}");
        }
        assert_eq!(text_blocks(&format!("r\n\n{env}")), ["r", env]);
    }

    #[test]
    fn an_earlier_reminder_is_taken_out_of_a_message_taken_up_again() {
        let env = "\n\n<environment_details>\nE\n</environment_details>";
        let mut with_list = FocusChain::with_list(Some("- [ ] a\n\n\n# task_progress\n".into()));
        let todo = (0..REMIND_INTERVAL).find_map(|_| with_list.next_request()).unwrap();
        let recommended = FocusChain::default().next_request().unwrap();
        for note in [todo, recommended] {
            let text = format!("r\n\n{note}{env}");
            assert_eq!(without_reminder(&text), format!("r{env}"), "{note:?}");
        }
        // Text that only looks like a reminder's start stays.
        let text = format!("r\n\n\n# task_progress is a word{env}");
        assert_eq!(without_reminder(&text), text);
    }

    /// A call the loop gave no answer of its own (arguments that are not JSON) is answered
    /// with the text before the reminder; the reminder goes out after it, as its own block.
    #[test]
    fn a_reminder_is_never_part_of_a_calls_result() {
        use crate::run::llm::providers::history::answers;
        use crate::run::llm::types::{Message, Part, ToolUsePart};
        let note = FocusChain::default().next_request().unwrap();
        let env = "<environment_details>\nE\n</environment_details>";
        let mut a = Message::assistant("");
        let call =
            ToolUsePart { id: "t1".into(), name: "read_file".into(), input: "{}".into(), answer: None, extra: None };
        a.parts = vec![Part::ToolUse(call)];
        let u = Message::user(format!("not JSON\n\n{note}\n\n{env}"));
        let (ans, rest) = answers(Some(&a), &u);
        assert_eq!(ans[0].content, "not JSON");
        assert_eq!(text_blocks(&rest), [note.as_str(), env]);
    }
}
