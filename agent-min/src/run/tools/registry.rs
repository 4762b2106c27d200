//! The one registry of tools (codex's `ToolHandler` registry is the model): each tool is one
//! [`ToolDecl`] in [`BUILTIN`] — its name, required parameters, which parameters are paths
//! `.clineignore` guards, whether it may change files (a checkpoint after it), its handler, how
//! a call of it is described, its missing-parameter texts, its native definition and its
//! section of the XML system prompt. Every consumer reads it here: the dispatch
//! ([`super::run`]), [`super::missing_param`], [`super::Call::description`], the checkpoint
//! tracker (`checkpoints/tracker.rs`), `.clineignore` (`project/ignore.rs`), the native tool
//! definitions (`dialect/native.rs`) and the XML prompt's tool list (`prompt/system.rs`).
//!
//! A new tool: a handler in a file of its own in `tools/`, its two texts in `tools/decl/`
//! (`NAME.txt`, the prompt section; `NAME.json`, the native definition) and one entry here.

#[cfg(feature = "skills")]
use super::skill;
use super::{apply_patch, ask, exec, list, mcp, read, search, write, Call, Ctx, Outcome};
use crate::run::prompt;
use crate::run::prompt::system::Family;
use crate::run::texts;

/// A tool's text for a missing required parameter: (call, parameter, failures so far).
pub(crate) type MissingText = fn(&Call, &str, Failures) -> String;

/// What a missing-parameter text may tell: the failures in a row (this one counted), and how
/// full the context window was at the last request, in % (Cline's `contextUsagePercent`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Failures {
    /// The mistake count with this failure.
    pub count: u32,
    /// The last request's tokens over the context window, rounded, when the window is known.
    pub context_percent: Option<u64>,
}

/// One tool, declared once.
#[derive(Debug)]
pub(crate) struct ToolDecl {
    /// The name the model calls it by.
    pub name: &'static str,
    /// The required parameters, in the order their absence is reported.
    pub required: &'static [&'static str],
    /// The parameters naming a path `.clineignore` guards (Cline's read, write, edit and list
    /// handlers check theirs; searching leaves ignored files out, listing marks them too).
    pub paths: &'static [&'static str],
    /// Whether it may change files: a checkpoint is taken after it (and the run's first one
    /// waits for the initial checkpoint).
    pub mutates: bool,
    /// Whether valid parameters clear the mistake count, whatever then happens (a refused or
    /// blocked command, a denial, a server's error): Cline's handlers that reset
    /// `consecutiveMistakeCount` right after validating. The others clear it on success.
    pub valid_clears_mistakes: bool,
    /// Whether its failures are thrown, as Cline's `ApplyPatchHandler` throws them (and its
    /// `AccessMcpResourceHandler` a failed read): `ToolExecutor` then reports the error without
    /// loop detection or `PostToolUse` (nor a mistake counted).
    pub throws_failures: bool,
    /// Whether the `PreToolUse` hook runs before it: Cline's handlers that call
    /// `ToolHookUtils.runPreToolUseIfEnabled` (access_mcp_resource, apply_patch, execute_command,
    /// list_files, read_file, search_files, use_mcp_tool, write_to_file for replace_in_file too).
    /// Never for `ask_followup_question`, `use_skill` (their handlers run none) nor
    /// `attempt_completion` (skipped by name).
    pub pre_tool_use: bool,
    /// Whether a prompt variant offers it (in the prompt, the native definitions and
    /// "Available tools"): never for the MCP tools, which `mcp/` offers only when servers are
    /// connected, nor `use_skill`, offered only when there are skills (`project/skills.rs`); `apply_patch` only in Cline's GPT-5 native variants, which drop
    /// `write_to_file` and `replace_in_file` for it.
    pub offered: fn(Family) -> bool,
    /// Runs a call whose required parameters are present.
    pub run: fn(&Call, &mut Ctx<'_>) -> Outcome,
    /// Cline's `[name for '…']` description, put before `Result:`.
    pub describe: fn(&Call) -> String,
    /// Cline's text for a missing required parameter (`failures` counts this mistake).
    pub missing: MissingText,
    /// The native definition in OpenAI's `tools` shape (Cline's, with its focus chain's `task_progress`) for
    /// a family; `{{cwd}}` stands for the workspace.
    pub native: fn(Family) -> &'static str,
    /// The section of the XML system prompt's `# Tools` for a model family.
    pub prompt: fn(Family) -> &'static str,
}

/// The tools, in the order of Cline's XML prompt.
pub(crate) static BUILTIN: &[ToolDecl] = &[
    ToolDecl {
        name: "execute_command",
        required: &["command", "requires_approval"],
        paths: &[],
        mutates: true,
        valid_clears_mistakes: true,
        throws_failures: false,
        pre_tool_use: true,
        offered: |_| true,
        run: exec::run,
        describe: |c| format!("[execute_command for '{}']", js(c.given("command"))),
        missing: |c, p, n| match p {
            "command" => prompt::execute_command_missing_command(),
            _ => generic_missing(c, p, n),
        },
        native: |f| match f {
            Family::NativeGpt51 => texts::EXECUTE_COMMAND_GPT_5_1_JSON.get(),
            _ => texts::EXECUTE_COMMAND_JSON.get(),
        },
        prompt: |_| texts::EXECUTE_COMMAND_TXT.get(),
    },
    ToolDecl {
        name: "read_file",
        required: &["path"],
        paths: &["path"],
        mutates: false,
        valid_clears_mistakes: false,
        throws_failures: false,
        pre_tool_use: true,
        offered: |_| true,
        run: read::run,
        describe: describe_path,
        missing: generic_missing,
        native: |_| texts::READ_FILE_JSON.get(),
        prompt: |_| texts::READ_FILE_TXT.get(),
    },
    ToolDecl {
        name: "apply_patch",
        required: &["input"],
        paths: &[],
        mutates: true,
        valid_clears_mistakes: true,
        throws_failures: true,
        pre_tool_use: true,
        offered: Family::patches,
        run: apply_patch::run,
        describe: |_| "[apply_patch for patch application]".to_string(),
        missing: generic_missing,
        native: |_| texts::APPLY_PATCH_JSON.get(),
        // Offered by native variants only: no XML section.
        prompt: |_| "",
    },
    ToolDecl {
        name: "write_to_file",
        required: &["path", "content"],
        paths: &["path"],
        mutates: true,
        valid_clears_mistakes: false,
        throws_failures: false,
        pre_tool_use: true,
        offered: |f| !f.patches(),
        run: write::write_to_file,
        describe: describe_edit,
        missing: |c, p, n| match p {
            "content" => {
                prompt::write_to_file_missing_content(c.param("path").unwrap_or("unknown"), n.count, n.context_percent)
            }
            _ => generic_missing(c, p, n),
        },
        native: |_| texts::WRITE_TO_FILE_JSON.get(),
        prompt: |_| texts::WRITE_TO_FILE_TXT.get(),
    },
    ToolDecl {
        name: "replace_in_file",
        required: &["path", "diff"],
        paths: &["path"],
        mutates: true,
        valid_clears_mistakes: false,
        throws_failures: false,
        pre_tool_use: true,
        offered: |f| !f.patches(),
        run: write::replace_in_file,
        describe: describe_edit,
        missing: |c, p, n| match p {
            "diff" => prompt::replace_in_file_missing_diff(c.param("path").unwrap_or("unknown")),
            _ => generic_missing(c, p, n),
        },
        native: |_| texts::REPLACE_IN_FILE_JSON.get(),
        prompt: |_| texts::REPLACE_IN_FILE_TXT.get(),
    },
    ToolDecl {
        name: "search_files",
        required: &["path", "regex"],
        paths: &[],
        mutates: false,
        valid_clears_mistakes: false,
        throws_failures: false,
        pre_tool_use: true,
        offered: |_| true,
        run: search::run,
        describe: |c| match c.param("file_pattern") {
            Some(fp) => format!("[search_files for '{}' in '{fp}']", js(c.given("regex"))),
            None => format!("[search_files for '{}']", js(c.given("regex"))),
        },
        missing: generic_missing,
        native: |_| texts::SEARCH_FILES_JSON.get(),
        prompt: |_| texts::SEARCH_FILES_TXT.get(),
    },
    ToolDecl {
        name: "list_files",
        required: &["path"],
        paths: &["path"],
        mutates: false,
        valid_clears_mistakes: false,
        throws_failures: false,
        pre_tool_use: true,
        offered: |_| true,
        run: list::run,
        describe: describe_path,
        missing: generic_missing,
        native: |f| match f {
            Family::NativeGpt51 => texts::LIST_FILES_GPT_5_1_JSON.get(),
            _ => texts::LIST_FILES_JSON.get(),
        },
        prompt: |_| texts::LIST_FILES_TXT.get(),
    },
    ToolDecl {
        name: "ask_followup_question",
        required: &["question"],
        paths: &[],
        mutates: false,
        valid_clears_mistakes: true,
        throws_failures: false,
        pre_tool_use: false,
        offered: |_| true,
        run: ask::followup,
        describe: |c| format!("[ask_followup_question for '{}']", js(c.given("question"))),
        missing: generic_missing,
        native: |f| match f {
            Family::NativeGpt51 => texts::ASK_FOLLOWUP_QUESTION_GPT_5_1_JSON.get(),
            _ => texts::ASK_FOLLOWUP_QUESTION_JSON.get(),
        },
        prompt: |_| texts::ASK_FOLLOWUP_QUESTION_TXT.get(),
    },
    ToolDecl {
        name: "attempt_completion",
        required: &["result"],
        paths: &[],
        mutates: false,
        valid_clears_mistakes: true,
        throws_failures: false,
        pre_tool_use: false,
        offered: |_| true,
        run: ask::complete,
        describe: |_| "[attempt_completion]".to_string(),
        missing: generic_missing,
        native: |f| match f {
            Family::NativeGpt51 => texts::ATTEMPT_COMPLETION_GPT_5_1_JSON.get(),
            _ => texts::ATTEMPT_COMPLETION_JSON.get(),
        },
        prompt: |f| match f {
            Family::Gpt5 => texts::ATTEMPT_COMPLETION_GPT_5_TXT.get(),
            _ => texts::ATTEMPT_COMPLETION_TXT.get(),
        },
    },
    ToolDecl {
        name: "use_mcp_tool",
        required: &["server_name", "tool_name"],
        paths: &[],
        mutates: false,
        valid_clears_mistakes: true,
        throws_failures: false,
        pre_tool_use: true,
        offered: |_| false,
        run: mcp::use_tool,
        describe: describe_server,
        missing: generic_missing,
        native: |_| "",
        prompt: |_| "",
    },
    ToolDecl {
        name: "access_mcp_resource",
        required: &["server_name", "uri"],
        paths: &[],
        mutates: false,
        valid_clears_mistakes: true,
        throws_failures: true,
        pre_tool_use: true,
        offered: |_| false,
        run: mcp::access_resource,
        describe: describe_server,
        missing: generic_missing,
        native: |_| "",
        prompt: |_| "",
    },
    #[cfg(feature = "skills")]
    ToolDecl {
        name: "use_skill",
        // Its handler answers a missing name in its own words, as Cline's does.
        required: &[],
        paths: &[],
        mutates: false,
        // Cline resets it after finding skills ("No skills are available" leaves it); on success.
        valid_clears_mistakes: false,
        throws_failures: false,
        pre_tool_use: false,
        // Offered by the workspace's skills, when it has some (`project/skills.rs`).
        offered: |_| false,
        run: skill::run,
        describe: |c| match c.param("skill_name") {
            Some(name) => format!("[use_skill for \"{name}\"]"),
            None => "[use_skill]".to_string(),
        },
        missing: generic_missing,
        native: |_| texts::USE_SKILL_JSON.get(),
        prompt: |_| texts::USE_SKILL_TXT.get(),
    },
];

/// A parameter as Cline's handlers put it in a description (`${block.params.path}`):
/// `undefined` when the call left it out.
fn js(param: Option<&str>) -> &str {
    param.unwrap_or("undefined")
}

/// `[name for 'path']`: the description of most tools (Cline's read and list handlers).
fn describe_path(call: &Call) -> String {
    format!("[{} for '{}']", call.name, js(call.given("path")))
}

/// Cline's `WriteToFileToolHandler` (also `replace_in_file`'s): `path || absolutePath`, so an
/// empty path is described as a missing one.
fn describe_edit(call: &Call) -> String {
    format!("[{} for '{}']", call.name, js(call.param("path")))
}

/// A tool the registry does not hold: `[name for 'path']`, or `[name]` without a path.
pub(crate) fn describe_unknown(call: &Call) -> String {
    match call.param("path") {
        Some(path) => format!("[{} for '{path}']", call.name),
        None => format!("[{}]", call.name),
    }
}

fn describe_server(call: &Call) -> String {
    format!("[{} for '{}']", call.name, js(call.given("server_name")))
}

/// Cline's generic `missingToolParameterError` text.
pub(crate) fn generic_missing(_call: &Call, param: &str, _failures: Failures) -> String {
    prompt::missing_param(param)
}

/// Every declared tool (in tests, with the ones [`register`]ed on this thread after them).
pub(crate) fn all() -> Vec<&'static ToolDecl> {
    let all = BUILTIN.iter();
    #[cfg(test)]
    let all = all.chain(TEST_TOOLS.with(|t| t.borrow().clone()));
    all.collect()
}

/// The tools `family` offers the model, in order.
pub(crate) fn offered(family: Family) -> Vec<&'static ToolDecl> {
    all().into_iter().filter(|t| (t.offered)(family)).collect()
}

/// Every prompt variant.
#[cfg(test)]
const ALL_FAMILIES: [Family; 6] =
    [Family::Generic, Family::NextGen, Family::Gpt5, Family::NativeNextGen, Family::NativeGpt5, Family::NativeGpt51];

/// The declaration of `name`, if it is a tool.
pub(crate) fn find(name: &str) -> Option<&'static ToolDecl> {
    all().into_iter().find(|t| t.name == name)
}

/// Whether valid parameters of a call of `name` clear the mistake count ([`ToolDecl::valid_clears_mistakes`]).
pub(crate) fn valid_clears_mistakes(name: &str) -> bool {
    find(name).is_some_and(|t| t.valid_clears_mistakes)
}

/// Whether a failure of `name` is thrown in Cline ([`ToolDecl::throws_failures`]).
pub(crate) fn throws_failures(name: &str) -> bool {
    find(name).is_some_and(|t| t.throws_failures)
}

/// Whether the `PreToolUse` hook runs before a call of `name` ([`ToolDecl::pre_tool_use`]).
pub(crate) fn runs_pre_tool_use(name: &str) -> bool {
    find(name).is_some_and(|t| t.pre_tool_use)
}

/// Whether a call of `name` may change files (checkpointed).
pub(crate) fn mutates(name: &str) -> bool {
    find(name).is_some_and(|t| t.mutates)
}

/// Whether `.clineignore` guards the paths `name` is given.
pub(crate) fn guards_paths(name: &str) -> bool {
    find(name).is_some_and(|t| !t.paths.is_empty())
}

/// The `# Tools` sections of the XML prompt for `family`, in order.
pub(crate) fn prompt_sections(family: Family) -> String {
    offered(family).iter().map(|t| (t.prompt)(family)).collect::<Vec<_>>().join("\n\n")
}

#[cfg(test)]
thread_local! {
    static TEST_TOOLS: std::cell::RefCell<Vec<&'static ToolDecl>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Adds `decl` to the registry for the rest of this test's thread: a unit test declares a
/// tool exactly as [`BUILTIN`] does and sees what every consumer makes of it.
#[cfg(test)]
pub(crate) fn register(decl: ToolDecl) {
    let leaked: &'static ToolDecl = Box::leak(Box::new(decl));
    TEST_TOOLS.with(|t| t.borrow_mut().push(leaked));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_offered_tool_has_both_texts() {
        let mut names: Vec<&str> = all().iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all().len());
        for f in ALL_FAMILIES {
            for t in offered(f) {
                let def: serde_json::Value = serde_json::from_str(&(t.native)(f).replace("{{cwd}}", "/w")).unwrap();
                assert_eq!(def["function"]["name"], t.name);
                if !f.is_native() {
                    assert!((t.prompt)(f).starts_with(&format!("## {}\n", t.name)), "{}", t.name);
                }
            }
        }
    }

    /// The dummy tool: touches a file, declared as `docs/architecture.md` says a new tool is.
    fn touch(call: &Call, ctx: &mut Ctx<'_>) -> Outcome {
        let path = call.param("path").unwrap_or_default();
        let r = match super::super::check_path(ctx, path, super::super::Access::Write, "Touch", None) {
            Ok(r) => r,
            Err(o) => return o,
        };
        match std::fs::write(&r.abs, "touched") {
            Ok(()) => Outcome::Success(format!("touched {path}")),
            Err(e) => Outcome::Failure { text: e.to_string(), mistake: false },
        }
    }

    fn dummy() -> ToolDecl {
        ToolDecl {
            name: "touch_file",
            required: &["path"],
            paths: &["path"],
            mutates: true,
            valid_clears_mistakes: false,
            throws_failures: false,
            pre_tool_use: true,
            offered: |_| true,
            run: touch,
            describe: describe_path,
            missing: generic_missing,
            native: |_| {
                r#"{"type": "function", "function": {"name": "touch_file", "description": "Touch a file.", "strict": false,
                "parameters": {"type": "object", "properties": {"path": {"type": "string", "description": "The file"}},
                "required": ["path"], "additionalProperties": false}}}"#
            },
            prompt: |_| {
                "## touch_file\nDescription: Touch a file.\nParameters:\n- path: (required) The file\nUsage:\n<touch_file>\n<path>File path here</path>\n</touch_file>"
            },
        }
    }

    /// A tool added by one declaration is listed (XML prompt, native definitions, "Available
    /// tools"), dispatched, described, checked for missing parameters, checkpointed after it
    /// runs and refused a path `.clineignore` blocks — every consumer reads the registry.
    #[test]
    #[cfg(feature = "checkpoints")]
    fn a_tool_declared_once_is_listed_checkpointed_and_clineignore_checked() {
        use super::super::testutil::{call, with_ctx};
        use crate::run::checkpoints::Tracker;
        use crate::run::dialect::system::render;
        use crate::run::prompt::system::Env;
        use crate::run::tools::paths::Workspace;

        assert!(find("touch_file").is_none());
        register(dummy());

        // Listed: the XML prompt's `# Tools`, before the examples; the native definitions; the
        // tools named to a model that calls an unknown one.
        let env = Env { cwd: "/w", os: "Linux", ide: "i", shell: "/bin/sh", home: "/h", parallel: true };
        let xml = render(Family::NextGen, &env);
        let at = xml.find("\n\n## touch_file\nDescription: Touch a file.").expect("in the XML prompt");
        assert!(at > xml.find("## attempt_completion").unwrap() && at < xml.find("# Tool Use Examples").unwrap());
        let native = crate::run::dialect::native::definitions(Family::NativeNextGen, "/w");
        assert!(native.iter().any(|d| d["function"]["name"] == "touch_file"), "in the native definitions");

        let root = tempfile::tempdir().unwrap();
        let ws = Workspace::new(root.path()).unwrap();
        std::fs::write(root.path().join(".clineignore"), "secret.txt\n").unwrap();
        let unknown = with_ctx(&ws, |ctx| super::super::run(&call("no_such_tool", &[]), ctx));
        assert!(matches!(&unknown, Outcome::Failure { text, .. } if text.contains("attempt_completion, touch_file.")));

        // Its parameters, its description.
        assert_eq!(super::super::missing_param(&call("touch_file", &[])), Some("path"));
        assert_eq!(call("touch_file", &[("path", "a.txt")]).description(), "[touch_file for 'a.txt']");

        // `.clineignore`-checked: its path is refused, with Cline's text, and nothing is written.
        let refused = with_ctx(&ws, |ctx| {
            ctx.tool = "touch_file";
            super::super::run(&call("touch_file", &[("path", "secret.txt")]), ctx)
        });
        match refused {
            Outcome::Failure { text, .. } => {
                assert!(text.contains("Access to secret.txt is blocked by the .clineignore"), "{text}")
            }
            o => panic!("{o:?}"),
        }
        assert!(!root.path().join("secret.txt").exists());

        // Checkpointed: a run's tracker takes the initial checkpoint before it and one after it.
        let state = tempfile::tempdir().unwrap();
        let mut tracker = Tracker::new(state.path().to_path_buf(), root.path().to_path_buf(), "t1");
        let (mut term, mut events) = (crate::run::ui::term::Term::new(), crate::run::session::events::Events::off());
        let at = crate::run::checkpoints::At { messages: 2, cuts: 0 };
        tracker.before("touch_file", 1, at, &mut term, &mut events);
        let done = with_ctx(&ws, |ctx| {
            ctx.tool = "touch_file";
            super::super::run(&call("touch_file", &[("path", "a.txt")]), ctx)
        });
        assert_eq!(done, Outcome::Success("touched a.txt".into()));
        tracker.ran("touch_file", None);
        tracker.after_reply(1, at, &mut term, &mut events);
        let tools: Vec<&str> = tracker.records().iter().map(|r| r.tool.as_str()).collect();
        assert_eq!(tools, ["start", "touch_file"]);
        assert_eq!(tracker.records()[1].files, ["a.txt"]);
    }
}
