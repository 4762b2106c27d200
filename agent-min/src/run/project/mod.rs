//! The project's own setup, as Cline reads it: rules (`rules`, with `frontmatter` and
//! `conditionals`; the Cline CLI's files as it reads them, `cli_file`), skills (`skills`), workflows (`workflows`) and hooks (`hooks`, called at
//! Cline's points by `lifecycle`). The texts
//! are Cline's (`texts`). `.clineignore`, which walls files off from the tools, is
//! `crate::run::tools::clineignore`; this module adds its section to the prompt.
//!
//! Owns: everything read from `.clinerules`, the other agents' rule files and the global Cline
//! directories. May use: [`crate::run::llm`] (message types), [`crate::run::tools`] (`Call`, the
//! tool names, `.clineignore`, the directories never entered), [`crate::run::session::events`],
//! [`crate::run::ui`], `crate::run::trusted_file` (reading what the workspace holds),
//! `crate::run::spawn` (running a hook), `crate::run::built` (what a build without hooks says),
//! `crate::run::places` (the home directory, Cline's home folder), `crate::run::digest` (a
//! hook approval's SHA-256), `crate::run::sandbox` (where commands may write: a global hook
//! there is approved as a workspace's).

mod cli_file;
pub(crate) mod conditionals;
mod context;
mod documents;
pub(crate) mod frontmatter;
pub(crate) mod hooks;
pub(crate) mod lifecycle;
mod post_process;
pub(crate) mod rules;
pub(crate) mod skills;
pub(crate) mod texts;
pub(crate) mod workflows;

use std::path::{Path, PathBuf};

use context::{latest_user_text, tool_paths};

use crate::run::llm::Message;
use crate::run::ui::term::Term;

/// The command-line flags of this module.
#[derive(Debug, Clone, Default)]
pub(crate) struct Flags {
    /// `--no-rules`.
    pub no_rules: bool,
    /// `--rules FILE`, in order.
    pub rules: Vec<PathBuf>,
    /// `--no-hooks`.
    pub no_hooks: bool,
    /// `--hook-timeout` (default 30 s).
    pub hook_timeout: Option<std::time::Duration>,
    /// `--trust-workspace`: the workspace's hooks (and `.cline/mcp.json`) as they are at the
    /// start run unasked.
    pub trust_workspace: bool,
}

impl Flags {
    /// Sets flag `--name` (with its value, for those that take one).
    pub(crate) fn set(&mut self, name: &str, value: Option<std::ffi::OsString>) -> Result<(), String> {
        match (name, value) {
            ("no-rules", _) => self.no_rules = true,
            ("no-hooks", _) => self.no_hooks = true,
            ("rules", Some(v)) => self.rules.push(PathBuf::from(v)),
            ("hook-timeout", Some(v)) => {
                let s = v.to_string_lossy();
                match s.parse::<f64>() {
                    Ok(x) if x.is_finite() && x > 0.0 && x <= 86_400.0 => {
                        self.hook_timeout = Some(std::time::Duration::from_secs_f64(x))
                    }
                    _ => return Err(format!("--hook-timeout expects a number of seconds (at most a day), got {s:?}")),
                }
            }
            (other, _) => return Err(format!("--{other} is not a project flag")),
        }
        Ok(())
    }

    /// The project at `root` for a run: under `yolo` nobody is asked; approvals are
    /// remembered in `state_dir`; `meta` names the task and model for the hooks' input.
    pub(crate) fn project(
        &self,
        root: &Path,
        yolo: bool,
        state_dir: Option<PathBuf>,
        meta: hooks::input::Meta,
    ) -> Result<Project, String> {
        let sources = rules::Sources::from_env(self.rules.clone(), self.no_rules);
        sources.check()?;
        let cfg = hooks::Config {
            enabled: !self.no_hooks,
            yolo,
            trust: self.trust_workspace,
            timeout: self.hook_timeout.unwrap_or(hooks::DEFAULT_TIMEOUT),
            global_dir: hooks::Config::default_global_dir(),
            cline_cli_dir: hooks::Config::default_cline_cli_dir(),
            state_dir,
        };
        Ok(Project::new(root, sources, hooks::Hooks::new(root, cfg, meta)))
    }
}

/// A workspace's rules, ignore file and hooks, for one run.
pub struct Project {
    root: PathBuf,
    sources: rules::Sources,
    /// The hooks.
    pub hooks: hooks::Hooks,
    /// Warnings already shown (each once per run).
    warned: Vec<String>,
}

impl Project {
    /// The project at `root`.
    pub(crate) fn new(root: &Path, sources: rules::Sources, hooks: hooks::Hooks) -> Project {
        Project { root: root.to_path_buf(), sources, hooks, warned: Vec::new() }
    }

    /// No rules beyond `.clineignore`, no hooks (replays of old recordings, tests).
    pub fn bare(root: &Path) -> Project {
        let sources = rules::Sources { no_rules: true, ..rules::Sources::default() };
        Project::new(root, sources, hooks::Hooks::off(root))
    }

    /// The workflow the first command (`/NAME`) of the person's `words` names, if it names one,
    /// as Cline's `parseSlashCommands` reads it (see `workflows.rs`).
    pub(crate) fn workflow(&mut self, words: &str, term: &mut Term) -> Option<workflows::Expanded> {
        let mut reader = rules::Reader::new();
        let found = workflows::expand(words, &self.root, &workflows::global_dirs(), &mut reader);
        self.warn(reader.warnings, term);
        found
    }

    /// The skills for the next request (none with `--no-rules`), read afresh as Cline reads
    /// them (see `skills.rs`).
    pub(crate) fn skills(&mut self, term: &mut Term) -> Vec<crate::run::tools::skill::Skill> {
        if self.sources.no_rules {
            return Vec::new();
        }
        let home = crate::run::places::home_dir();
        if !skills::BUILT_IN {
            if skills::any_folder(&self.root, home.as_deref()) {
                let why = crate::run::built::not_built_in("skills", "Skills (a skills folder is here)");
                self.warn(vec![why], term);
            }
            return Vec::new();
        }
        let mut reader = rules::Reader::new();
        let found = skills::discover(&self.root, home.as_deref(), &mut reader);
        self.warn(reader.warnings, term);
        found
    }

    /// Shows each warning about the project's files once per run.
    fn warn(&mut self, warnings: Vec<String>, term: &mut Term) {
        for w in warnings {
            if !self.warned.contains(&w) {
                term.warn(&format!("Rules: {w}"));
                self.warned.push(w);
            }
        }
    }

    /// The system prompt for the next request: `base` with Cline's "USER'S CUSTOM
    /// INSTRUCTIONS" (rules, then `.clineignore`) appended, read afresh from disk with the
    /// conditionals evaluated against the conversation so far.
    pub(crate) fn system_prompt(&mut self, base: &str, messages: &[Message], term: &mut Term) -> String {
        let asked_reads = !self.hooks.yolo();
        let tools = tool_paths(messages, &self.root, asked_reads);
        let paths = conditionals::candidates(&latest_user_text(messages), &tools, &self.root);
        let mut reader = rules::Reader::new();
        let mut sections = rules::sections(&self.root, &self.sources, &paths, &mut reader);
        sections.extend(crate::run::tools::clineignore::instructions(&self.root));
        self.warn(reader.warnings, term);
        // Cline's prompt builder tidies the whole prompt, with or without rules (what MCP servers
        // say of themselves included).
        if sections.is_empty() {
            return post_process::post_process(base);
        }
        post_process::post_process(&format!("{}{}", base.trim_end(), texts::user_instructions(&sections)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::llm::Role;

    /// A build without skills offers none, and says so once when a skills folder is there.
    #[cfg(not(feature = "skills"))]
    #[test]
    fn a_build_without_skills_names_the_feature_once() {
        let ws = crate::run::test_files::tree(&[(".cline/skills/x/SKILL.md", "---\nname: x\ndescription: d\n---\nX")]);
        let mut p = Project::bare(ws.path());
        p.sources.no_rules = false;
        let mut term = Term::to_writer(Box::new(std::io::sink()));
        assert!(p.skills(&mut term).is_empty());
        assert!(p.skills(&mut term).is_empty());
        assert_eq!(p.warned.len(), 1, "{:?}", p.warned);
        assert!(p.warned[0].contains("cargo feature `skills`"), "{:?}", p.warned);
    }

    fn msg(role: Role, content: &str) -> Message {
        Message { role, content: content.to_string(), parts: Vec::new() }
    }

    /// A workspace whose `.clinerules/web.md` applies to `web/**`, with `more` rule files.
    fn web_rule_project(more: &[(&str, &str)]) -> (tempfile::TempDir, Project) {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join(".clinerules")).unwrap();
        std::fs::write(d.path().join(".clinerules/web.md"), "---\npaths: [\"web/**\"]\n---\nWeb rule.").unwrap();
        for (name, text) in more {
            std::fs::write(d.path().join(".clinerules").join(name), text).unwrap();
        }
        let p = Project::new(d.path(), rules::Sources::default(), hooks::Hooks::off(d.path()));
        (d, p)
    }

    #[test]
    fn conditional_rules_follow_the_conversation() {
        let (_d, mut p) = web_rule_project(&[("all.md", "Always.")]);
        let mut term = Term::to_writer(Box::new(std::io::sink()));
        let mut history = vec![msg(Role::User, "<task>\nfix the bug\n</task>\n\n<environment_details>…")];
        let s = p.system_prompt("BASE\n", &history, &mut term);
        assert!(s.starts_with("BASE\n\n====\n\nUSER'S CUSTOM INSTRUCTIONS\n\n"), "{s}");
        assert!(s.contains(".clinerules/all.md\nAlways.") && !s.contains("Web rule."), "{s}");
        history.push(msg(Role::Assistant, "<replace_in_file>\n<path>web/app.ts</path>\n</replace_in_file>"));
        assert!(p.system_prompt("BASE\n", &history, &mut term).contains(".clinerules/web.md\nWeb rule."));
        // Every call of an XML reply runs (Cline's parallel tool calling, on by default), so
        // an edit after a read counts too — but not one its results say was skipped.
        let mut later = history[..1].to_vec();
        let read_then_edit = "<read_file>\n<path>README.md</path>\n</read_file>\n<replace_in_file>\n<path>web/app.ts</path>\n</replace_in_file>";
        later.push(msg(Role::Assistant, read_then_edit));
        assert!(p.system_prompt("BASE\n", &later, &mut term).contains("Web rule."));
        later.push(msg(Role::User, "[read_file for 'README.md'] Result:\nThe user denied this operation.\n\nSkipping tool due to user rejecting a previous tool. [replace_in_file for 'web/app.ts']"));
        assert!(!p.system_prompt("BASE\n", &later, &mut term).contains("Web rule."));
        // Nor one after a question, which ends the reply's calls.
        let mut asked = history[..1].to_vec();
        let ask_then_edit = "<ask_followup_question>\n<question>Which?</question>\n</ask_followup_question>\n<write_to_file>\n<path>web/app.ts</path>\n<content>x</content>\n</write_to_file>";
        asked.push(msg(Role::Assistant, ask_then_edit));
        assert!(!p.system_prompt("BASE\n", &asked, &mut term).contains("Web rule."));
        // Named by the person in the task: active from the first request.
        let named = vec![msg(Role::User, "<task>\nfix web/app.ts\n</task>")];
        assert!(p.system_prompt("BASE\n", &named, &mut term).contains("Web rule."));
    }

    #[test]
    fn conditional_rules_follow_native_tool_calls() {
        use crate::run::llm::{Part, ToolUsePart};
        let (_d, mut p) = web_rule_project(&[]);
        let mut term = Term::to_writer(Box::new(std::io::sink()));
        let mut history = vec![msg(Role::User, "<task>\nfix the bug\n</task>")];
        assert!(!p.system_prompt("BASE\n", &history, &mut term).contains("Web rule."));
        let mut reply = msg(Role::Assistant, "Reading it.");
        let call = |path: &str, answer: Option<String>| {
            Part::ToolUse(ToolUsePart {
                id: "toolu_1".into(),
                name: "replace_in_file".into(),
                input: format!("{{\"path\":\"{path}\"}}"),
                answer,
                extra: None,
            })
        };
        // A call answered with toolAlreadyUsed, or skipped after a refusal, never ran: it
        // activates nothing.
        let already = "Tool [read_file] was not executed because a tool has already been used in this message. Only one tool may be used per message. You must assess the first tool's result before proceeding to use the next tool.";
        reply.parts.push(call("web/skipped.ts", Some(already.into())));
        let skipped = "Skipping tool due to user rejecting a previous tool. [read_file for 'web/x.ts']";
        reply.parts.push(call("web/x.ts", Some(skipped.into())));
        history.push(reply.clone());
        assert!(!p.system_prompt("BASE\n", &history, &mut term).contains("Web rule."));
        // One that ran (answered with its result) does, as one still waiting for it does.
        let mut ran = reply.clone();
        ran.parts.push(call("web/app.ts", Some("[read_file for 'web/app.ts'] Result:\nx".into())));
        let rule = |h: &[Message], p: &mut Project, t: &mut Term| {
            p.system_prompt("BASE\n", h, t).contains(".clinerules/web.md\nWeb rule.")
        };
        assert!(rule(&[history.clone(), vec![ran]].concat(), &mut p, &mut term));
        reply.parts.push(call("web/app.ts", None));
        history.push(reply);
        assert!(rule(&history, &mut p, &mut term));
    }

    /// A file tool's `absolutePath` (Cline's native schemas name it so) is its path, in either
    /// dialect, as the tool read it.
    #[test]
    fn conditional_rules_follow_a_write_by_absolute_path() {
        use crate::run::llm::{Part, ToolUsePart};
        let (_d, mut p) = web_rule_project(&[]);
        let mut term = Term::to_writer(Box::new(std::io::sink()));
        let task = msg(Role::User, "<task>\nfix the bug\n</task>");
        let mut native = msg(Role::Assistant, "");
        native.parts.push(Part::ToolUse(ToolUsePart {
            id: "toolu_1".into(),
            name: "write_to_file".into(),
            input: r#"{"absolutePath":"web/new.ts","content":"x"}"#.into(),
            answer: None,
            extra: None,
        }));
        let xml = msg(
            Role::Assistant,
            "<write_to_file>\n<absolutePath>web/new.ts</absolutePath>\n<content>x</content>\n</write_to_file>",
        );
        for reply in [native, xml] {
            let history = vec![task.clone(), reply];
            assert!(p.system_prompt("BASE\n", &history, &mut term).contains("Web rule."));
        }
    }

    /// Cline's rule context reads the file headers of an `apply_patch` (and reports a moved
    /// file by where it went).
    #[test]
    fn conditional_rules_follow_the_files_of_a_patch() {
        let (_d, mut p) = web_rule_project(&[]);
        let mut term = Term::to_writer(Box::new(std::io::sink()));
        let task = msg(Role::User, "<task>\nfix the bug\n</task>");
        for header in ["*** Update File: web/app.ts", "*** Add File: web/new.ts", "*** Delete File: web/old.ts"] {
            let patch = format!("*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n{header}\n+x\n*** End Patch");
            let reply = msg(Role::Assistant, &format!("<apply_patch>\n<input>\n{patch}\n</input>\n</apply_patch>"));
            assert!(p.system_prompt("BASE\n", &[task.clone(), reply], &mut term).contains("Web rule."), "{header}");
        }
        let moved = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: web/a.txt\n@@\n-a\n+b\n*** End Patch";
        let native = crate::run::llm::Part::ToolUse(crate::run::llm::ToolUsePart {
            id: "toolu_1".into(),
            name: "apply_patch".into(),
            input: serde_json::json!({ "input": moved }).to_string(),
            answer: None,
            extra: None,
        });
        let mut reply = msg(Role::Assistant, "");
        reply.parts.push(native);
        assert!(p.system_prompt("BASE\n", &[task.clone(), reply], &mut term).contains("Web rule."));
        let other = msg(
            Role::Assistant,
            "<apply_patch>\n<input>\n*** Begin Patch\n*** Add File: b.txt\n+x\n*** End Patch\n</input>\n</apply_patch>",
        );
        assert!(!p.system_prompt("BASE\n", &[task, other], &mut term).contains("Web rule."));
    }

    /// Cline approves reads, listings and searches inside the workspace without asking and
    /// counts only asked tools and edits: reading `web/app.ts` does not switch `web/**` on; a
    /// read outside the workspace is asked about and counts (not under `--yolo`, which asks
    /// nothing).
    #[test]
    fn reads_inside_the_workspace_switch_no_rule_on() {
        let (d, mut p) = web_rule_project(&[("far.md", "---\npaths: [\"**/far.ts\"]\n---\nFar rule.")]);
        let mut term = Term::to_writer(Box::new(std::io::sink()));
        let task = msg(Role::User, "<task>\nfix the bug\n</task>");
        for tool in ["read_file", "list_files", "search_files", "list_code_definition_names"] {
            let reply = msg(Role::Assistant, &format!("<{tool}>\n<path>web/app.ts</path>\n</{tool}>"));
            let s = p.system_prompt("BASE\n", &[task.clone(), reply], &mut term);
            assert!(!s.contains("Web rule."), "{tool}: {s}");
        }
        let outside = tempfile::tempdir().unwrap();
        let far = outside.path().join("far.ts").display().to_string();
        let reply = msg(Role::Assistant, &format!("<read_file>\n<path>{far}</path>\n</read_file>"));
        let history = [task, reply];
        assert!(p.system_prompt("BASE\n", &history, &mut term).contains("Far rule."));
        let cfg = hooks::Config {
            enabled: false,
            yolo: true,
            trust: false,
            timeout: hooks::DEFAULT_TIMEOUT,
            global_dir: None,
            cline_cli_dir: None,
            state_dir: None,
        };
        let hooks = hooks::Hooks::new(d.path(), cfg, Default::default());
        let mut yolo = Project::new(d.path(), rules::Sources::default(), hooks);
        assert!(!yolo.system_prompt("BASE\n", &history, &mut term).contains("Far rule."));
    }

    /// Cline's prompt builder tidies the rules with the rest of the prompt.
    #[test]
    fn the_rules_are_tidied_as_clines_prompt_builder_tidies_them() {
        let (_d, mut p) = web_rule_project(&[("a.md", "One.\n\n\n\nTwo.\n##\nThree.\n====\nFour.")]);
        let mut term = Term::to_writer(Box::new(std::io::sink()));
        let s = p.system_prompt("BASE\n", &[], &mut term);
        assert!(s.ends_with(".clinerules/a.md\nOne.\n\nTwo.\nThree.\n\n====\n\nFour."), "{s}");
    }

    /// Cline's prompt builder tidies every prompt, rules or none: what an MCP server says of
    /// itself (runs of blank lines, `##` lines) reaches the model tidied either way.
    #[test]
    fn without_rules_the_prompt_is_tidied_all_the_same() {
        let d = tempfile::tempdir().unwrap();
        let mut p = Project::bare(d.path());
        let mut term = Term::to_writer(Box::new(std::io::sink()));
        assert_eq!(
            p.system_prompt("BASE\n\n\n\n- server: says\n##\nmore\n", &[], &mut term),
            "BASE\n\n- server: says\nmore"
        );
        std::fs::write(d.path().join(".clineignore"), "*.key").unwrap();
        let s = p.system_prompt("BASE\n", &[], &mut term);
        assert!(s.ends_with("\n\n*.key\n.clineignore") && s.contains("# .clineignore"), "{s}");
    }

    #[test]
    fn the_latest_feedback_wins_over_the_task() {
        let h = vec![
            msg(Role::User, "<task>\nedit a.md\n</task>"),
            msg(
                Role::User,
                "The user denied this operation.\n\nThe user provided the following feedback:\n<feedback>\nuse b.md instead\n</feedback>\n\n<environment_details>",
            ),
        ];
        assert_eq!(latest_user_text(&h), "use b.md instead");
        // A follow-up answer is the person's feedback too (Cline's `say "user_feedback"`).
        let mut h = h;
        h.push(msg(Role::User, "[ask_followup_question for 'which?'] Result:\n<answer>\nweb/c.md\n</answer>"));
        assert_eq!(latest_user_text(&h), "web/c.md");
        let slash = "[ask_followup_question for 'which?'] Result:\n<explicit_instructions type=\"w\">\nW\n</explicit_instructions>\n<answer>\n web/d.md\n</answer>";
        h.push(msg(Role::User, slash));
        assert_eq!(latest_user_text(&h), " web/d.md", "an answer after its slash command's instructions");
        // So are the words given with a resume (Cline's `resumeTaskFromHistory` says them so).
        let said = "New instructions for task continuation:\n<user_message>\nnow fix web/app.ts\n</user_message>";
        h.push(msg(
            Role::User,
            &format!("[TASK RESUMPTION] This task was interrupted…\n\n{said}\n\n<environment_details>"),
        ));
        assert_eq!(latest_user_text(&h), "now fix web/app.ts");
        // A mention is no path to Cline's rule context: it reads the words before
        // `parseMentions` wrote `'web/c.md' (see below for file content)` for `@/web/c.md`.
        h.push(msg(Role::User, "The user provided the following feedback:\n<feedback>\nsee 'web/c.md' (see below for file content) and 'web/' (see below for folder content)\n</feedback>"));
        assert_eq!(latest_user_text(&h), "see @/web/c.md and @/web/");
        // Tags a file holds are not the person's words.
        h.push(msg(Role::User, "[read_file for 'x.md'] Result:\n<feedback>\nweb/z.md\n</feedback>"));
        assert_eq!(latest_user_text(&h), "see @/web/c.md and @/web/");
        assert!(conditionals::candidates(&latest_user_text(&h), &[], std::path::Path::new("/w")).is_empty());
    }
}
