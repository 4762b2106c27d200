//! Workflows: Cline's `parseSlashCommands` for workflow files (`slash-commands/index.ts`).
//!
//! `/NAME` in the task, or in a later prompt's feedback — NAME the file name of a file under
//! the workspace's `.clinerules/workflows/` (looked at first) or Cline's global
//! `Documents/Cline/Workflows/` — puts that file's text before the message, as
//! `<explicit_instructions type="NAME">`, and takes the command out of the text. One command
//! per message, the first found. Cline's built-in commands (`/newtask`, `/smol`, …) are not
//! workflows: agent-min has none of them, leaves their names as they are, and never runs a
//! workflow file of the same name in their place (Cline prefers its built-ins too).

use std::path::Path;

use super::rules::{self, Reader};

/// Cline's `SUPPORTED_DEFAULT_COMMANDS`.
const BUILT_IN: &[&str] = &["newtask", "smol", "compact", "newrule", "reportbug", "deep-planning", "explain-changes"];

/// The tags a command is looked for in, in Cline's order.
const TAGS: &[&str] = &["task", "feedback", "answer", "user_message"];

/// `text` with its first workflow command replaced by the workflow's instructions; unchanged
/// when it has none. `global` is the global workflows directory.
pub(crate) fn expand(text: &str, root: &Path, global: Option<&Path>, warn: &mut Reader) -> String {
    for tag in TAGS {
        let Some((start, content)) = tag_content(text, tag) else { continue };
        let Some((at, name)) = slash_command(content) else { continue };
        if BUILT_IN.contains(&name) {
            return text.to_string();
        }
        if let Some(body) = workflow(name, root, global, warn) {
            let (slash, end) = (start + at, start + at + 1 + name.len());
            return format!(
                "<explicit_instructions type=\"{name}\">\n{body}\n</explicit_instructions>\n{}{}",
                &text[..slash],
                &text[end..]
            );
        }
    }
    text.to_string()
}

/// Where the content of the first `<tag>…</tag>` (any case) starts in `text`, and the content.
fn tag_content<'a>(text: &'a str, tag: &str) -> Option<(usize, &'a str)> {
    let re = regex::RegexBuilder::new(&format!("<{tag}>((?s).*?)</{tag}>")).case_insensitive(true).build().ok()?;
    let m = re.captures(text)?.get(1)?;
    Some((m.start(), m.as_str()))
}

/// The first `/NAME` in `content` at its start or after whitespace, and followed by whitespace
/// or the end (Cline's `/(^|\s)\/([a-zA-Z0-9_.:@-]+)(?=\s|$)/`): where its `/` is, and NAME.
fn slash_command(content: &str) -> Option<(usize, &str)> {
    static COMMAND: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = COMMAND.get_or_init(|| regex::Regex::new(r"(?:^|\s)/([a-zA-Z0-9_.:@-]+)").unwrap());
    re.captures_iter(content).filter_map(|c| c.get(1)).find_map(|name| {
        let ends = content[name.end()..].chars().next().is_none_or(char::is_whitespace);
        ends.then(|| (name.start() - 1, name.as_str()))
    })
}

/// The trimmed text of the workflow file named `name`: the workspace's first, then the global
/// ones. A workspace file must resolve inside the workspace.
fn workflow(name: &str, root: &Path, global: Option<&Path>, warn: &mut Reader) -> Option<String> {
    let local = root.join(".clinerules").join("workflows");
    for (dir, workspace) in [(Some(local.as_path()), true), (global, false)] {
        let Some(dir) = dir.filter(|d| d.is_dir()) else { continue };
        warn.confine_to(if workspace { Some(root) } else { None });
        let files = rules::read_directory(dir, &[]);
        if let Some(file) = files.iter().find(|f| f.file_name().is_some_and(|n| n == name)) {
            return rules::read_trimmed(file, warn);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn run(text: &str, root: &Path, global: Option<&Path>) -> String {
        expand(text, root, global, &mut Reader::new())
    }

    #[test]
    fn a_workflow_named_in_the_task_goes_before_it_as_cline_puts_it() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), ".clinerules/workflows/release.md", "\n1. Bump.\n2. Tag.\n\n");
        let text = "<task>\n/release.md for v2\n</task>\n\n<environment_details>\nE\n</environment_details>";
        assert_eq!(
            run(text, d.path(), None),
            "<explicit_instructions type=\"release.md\">\n1. Bump.\n2. Tag.\n</explicit_instructions>\n<task>\n for v2\n</task>\n\n<environment_details>\nE\n</environment_details>"
        );
        // Anywhere in the text after whitespace, and in feedback too.
        let fb = "[attempt_completion] Result:\nok\n\n<feedback>\nnow run /release.md please\n</feedback>";
        assert!(run(fb, d.path(), None).ends_with("<feedback>\nnow run  please\n</feedback>"));
    }

    #[test]
    fn what_is_not_a_workflow_command_is_left_as_it_is() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), ".clinerules/workflows/release.md", "steps");
        write(d.path(), ".clinerules/workflows/newtask", "never: a built-in's name");
        for text in [
            "<task>\n/unknown.md\n</task>",
            "<task>\nsee src/release.md\n</task>",
            "<task>\n/release.md.\n</task>",
            "<task>\n/newtask\n</task>",
            "/release.md outside any tag",
        ] {
            assert_eq!(run(text, d.path(), None), text);
        }
    }

    #[test]
    fn the_workspace_comes_before_the_global_directory_and_subfolders_count() {
        let (d, g) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        write(d.path(), ".clinerules/workflows/deploy/ship.md", "local ship");
        write(g.path(), "ship.md", "global ship");
        write(g.path(), "audit.md", "global audit");
        assert!(run("<task>\n/ship.md\n</task>", d.path(), Some(g.path())).contains("\nlocal ship\n"));
        assert!(run("<task>\n/audit.md\n</task>", d.path(), Some(g.path())).contains("\nglobal audit\n"));
    }

    #[test]
    fn a_workspace_workflow_linked_outside_is_not_read() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        write(&ws, ".clinerules/workflows/keep", "");
        write(d.path(), "secret.md", "PRIVATE");
        std::os::unix::fs::symlink(d.path().join("secret.md"), ws.join(".clinerules/workflows/leak.md")).unwrap();
        let text = "<task>\n/leak.md\n</task>";
        assert_eq!(run(text, &ws, None), text);
    }
}
