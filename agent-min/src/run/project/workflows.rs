//! Workflows: Cline's `parseSlashCommands` for workflow files (`slash-commands/index.ts`).
//!
//! `/NAME` in the task, a later prompt, a follow-up answer or feedback — NAME the file name of a file under the
//! workspace's `.clinerules/workflows/` (looked at first) or Cline's global
//! `Documents/Cline/Workflows/` — puts that file's text before the message, as
//! `<explicit_instructions type="NAME">`, and takes the command out of the text. The Cline
//! CLI's directories count too: the workspace's `.cline/workflows/` (after `.clinerules`'s) and
//! `~/.cline/workflows/` (after the documents folder's), their Markdown and text files at the
//! top, read as the CLI reads them (`cli_file`: sent without frontmatter, left out when it says
//! `disabled: true`); and when no file has the whole name, one the CLI calls NAME is taken (its
//! frontmatter's `name`, else its name without the extension). Only the
//! first command of the person's own words counts (Cline parses each block of the message; the
//! workspace's file listing and tool results are never read for commands here). Cline's built-in commands (`/newtask`, `/smol`, …) are not
//! workflows: agent-min has none of them, leaves their names as they are, and never runs a
//! workflow file of the same name in their place (Cline prefers its built-ins too).

use std::path::{Path, PathBuf};

use super::cli_file;
use super::rules::{self, Layout, Reader};

/// Cline's `SUPPORTED_DEFAULT_COMMANDS`.
const BUILT_IN: &[&str] = &["newtask", "smol", "compact", "newrule", "reportbug", "deep-planning", "explain-changes"];

/// A workflow command found in the person's words.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Expanded {
    /// `<explicit_instructions type="NAME">` with the workflow's text, and a newline: what goes
    /// before the message.
    pub instructions: String,
    /// The words without the command.
    pub words: String,
}

/// The workflow the first command of `words` (the person's own words: the task, or a later
/// prompt — never text a tool or the workspace put in the message) names, if it names one.
/// `global` holds the global workflows directories.
pub(crate) fn expand(words: &str, root: &Path, global: &[(PathBuf, Layout)], warn: &mut Reader) -> Option<Expanded> {
    let (at, name) = command(words)?;
    let body = workflow(name, root, global, warn)?;
    let instructions = format!("<explicit_instructions type=\"{name}\">\n{body}\n</explicit_instructions>\n");
    Some(Expanded::new(instructions, words, at))
}

impl Expanded {
    /// `instructions` before the message, and `words` without the command whose `/` is at `at`
    /// (as [`command`] found it).
    pub(crate) fn new(instructions: String, words: &str, at: usize) -> Expanded {
        let end = at + 1 + words[at + 1..].find(char::is_whitespace).unwrap_or(words.len() - at - 1);
        Expanded { instructions, words: format!("{}{}", &words[..at], &words[end..]) }
    }
}

/// The first slash command of the person's `words`, unless it is one of Cline's built-ins
/// (which Cline prefers to anything of the same name): where its `/` is, and its name.
pub(crate) fn command(words: &str) -> Option<(usize, &str)> {
    slash_command(words).filter(|(_, name)| !BUILT_IN.contains(name))
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

/// The global workflow directories in this environment, and which of their files count:
/// Cline's `Documents/Cline/Workflows`, then the Cline CLI's `~/.cline/workflows`.
pub(crate) fn global_dirs() -> Vec<(PathBuf, Layout)> {
    let documents = rules::documents_dir().map(|d| (d.join("Cline").join("Workflows"), Layout::Extension));
    let cli = crate::run::places::cline_dir().map(|d| (d.join("workflows"), Layout::Cli));
    documents.into_iter().chain(cli).collect()
}

/// The trimmed text (maybe empty) of the workflow file named `name`, looked for in the
/// workspace's `.clinerules/workflows/`, its `.cline/workflows/` (the Cline CLI's), then the
/// global directories: by whole file name first; failing that anywhere, by the name the Cline
/// CLI calls it by (a file of the extension's directories: its name without the extension). A
/// file of the CLI's directories is read as the CLI reads it ([`cli_file`]): called by its
/// frontmatter's `name` or else its name without the extension, sent without its frontmatter,
/// never when that says `disabled: true`, and not when the CLI refuses it (a warning says why;
/// frontmatter that cannot be read here is left out, and said to be). A workspace file must
/// resolve inside the workspace.
fn workflow(name: &str, root: &Path, global: &[(PathBuf, Layout)], warn: &mut Reader) -> Option<String> {
    let local = [
        (root.join(".clinerules").join("workflows"), Layout::Extension, true),
        (root.join(".cline").join("workflows"), Layout::Cli, true),
    ];
    let global = global.iter().map(|(d, l)| (d.clone(), *l, false));
    let mut listed = Vec::new();
    for (dir, layout, workspace) in local.into_iter().chain(global) {
        if !dir.is_dir() {
            continue;
        }
        warn.confine_to(if workspace { Some(root) } else { None });
        if workspace && !rules::directory_inside(&dir, warn) {
            continue;
        }
        listed.push((layout.files(&dir, warn), layout, workspace));
    }
    let whole = |f: &PathBuf| f.file_name().is_some_and(|n| n == name);
    let stem = |f: &PathBuf| f.file_stem().is_some_and(|n| n == name);
    for by_whole_name in [true, false] {
        for (files, layout, workspace) in &listed {
            warn.confine_to(if *workspace { Some(root) } else { None });
            for file in files {
                if *layout == Layout::Extension {
                    if by_whole_name && whole(file) || !by_whole_name && stem(file) {
                        // An empty file is a workflow too: Cline sends empty instructions.
                        return rules::read_text(file, warn);
                    }
                    continue;
                }
                // The CLI's name is the frontmatter's `name`, else the stem: only a file of
                // the whole name can be passed over unread.
                if by_whole_name && !whole(file) {
                    continue;
                }
                // Only a file that may be the one asked for is worth a warning: the others are
                // read only to learn their names.
                let named_alike = by_whole_name || stem(file);
                let warned = warn.warnings.len();
                let Some(text) = rules::read_text(file, warn) else {
                    if !named_alike {
                        warn.warnings.truncate(warned);
                    }
                    continue;
                };
                let fallback = file.file_stem().map(|s| s.to_string_lossy()).unwrap_or_default();
                match cli_file::read(&text, &fallback, cli_file::Kind::Workflow) {
                    Ok(w) if !w.disabled && (by_whole_name || w.name == name) => {
                        if let Some(why) = w.unread {
                            warn.warnings.push(format!(
                                "{}: its frontmatter could not be read ({why}); the workflow was sent without it",
                                file.display()
                            ));
                        }
                        return Some(w.instructions);
                    }
                    Ok(_) => {}
                    Err(why) if named_alike => {
                        warn.warnings
                            .push(format!("{}: not used, as the Cline CLI does not use it: {why}", file.display()));
                    }
                    Err(_) => {}
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::test_files::write;

    fn run(words: &str, root: &Path, global: Option<&Path>) -> Option<Expanded> {
        let global: Vec<_> = global.map(|g| (g.to_path_buf(), Layout::Extension)).into_iter().collect();
        expand(words, root, &global, &mut Reader::new())
    }

    #[test]
    fn a_workflow_named_in_the_words_is_put_before_them_as_cline_puts_it() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), ".clinerules/workflows/release.md", "\n1. Bump.\n2. Tag.\n\n");
        let e = run("/release.md for v2", d.path(), None).unwrap();
        assert_eq!(
            e.instructions,
            "<explicit_instructions type=\"release.md\">\n1. Bump.\n2. Tag.\n</explicit_instructions>\n"
        );
        assert_eq!(e.words, " for v2");
        // Anywhere after whitespace; only the first command counts.
        assert_eq!(run("now run /release.md please", d.path(), None).unwrap().words, "now run  please");
        assert_eq!(run("é\n/release.md", d.path(), None).unwrap().words, "é\n");
    }

    /// Cline expands an empty workflow file to empty instructions and takes the command out.
    #[test]
    fn an_empty_workflow_is_expanded_to_empty_instructions() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), ".clinerules/workflows/empty.md", " \n");
        let e = run("/empty.md now", d.path(), None).unwrap();
        assert_eq!(e.instructions, "<explicit_instructions type=\"empty.md\">\n\n</explicit_instructions>\n");
        assert_eq!(e.words, " now");
    }

    #[test]
    fn what_is_not_a_workflow_command_is_left_as_it_is() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), ".clinerules/workflows/release.md", "steps");
        write(d.path(), ".clinerules/workflows/newtask", "never: a built-in's name");
        for words in
            ["/unknown.md", "see src/release.md", "/release.md.", "/newtask", "/unknown.md then /release.md", ""]
        {
            assert_eq!(run(words, d.path(), None), None, "{words:?}");
        }
    }

    #[test]
    fn the_workspace_comes_before_the_global_directory_and_subfolders_count() {
        let (d, g) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        write(d.path(), ".clinerules/workflows/deploy/ship.md", "local ship");
        write(g.path(), "ship.md", "global ship");
        write(g.path(), "audit.md", "global audit");
        assert!(run("/ship.md", d.path(), Some(g.path())).unwrap().instructions.contains("\nlocal ship\n"));
        assert!(run("/audit.md", d.path(), Some(g.path())).unwrap().instructions.contains("\nglobal audit\n"));
    }

    #[test]
    fn a_workspace_workflows_directory_linked_outside_is_not_read() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        write(&d.path().join("outside"), "x.md", "OUTSIDE");
        std::fs::create_dir_all(ws.join(".clinerules")).unwrap();
        std::os::unix::fs::symlink(d.path().join("outside"), ws.join(".clinerules/workflows")).unwrap();
        let mut reader = Reader::new();
        assert_eq!(expand("/x.md", &ws, &[], &mut reader), None);
        assert!(reader.warnings.iter().any(|w| w.contains("not read")), "{:?}", reader.warnings);
    }

    #[test]
    fn a_workspace_workflow_linked_outside_is_not_read() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        write(&ws, ".clinerules/workflows/keep", "");
        write(d.path(), "secret.md", "PRIVATE");
        std::os::unix::fs::symlink(d.path().join("secret.md"), ws.join(".clinerules/workflows/leak.md")).unwrap();
        assert_eq!(run("/leak.md", &ws, None), None);
    }

    /// A project or person set up for the Cline CLI keeps workflows in `.cline/workflows/`
    /// and `~/.cline/workflows/` (the Markdown and text files at their top), their frontmatter
    /// left out; the CLI calls every workflow by its name without the extension, which is
    /// looked for once no file has the whole name; the extension's `.clinerules/workflows/`
    /// comes first.
    #[test]
    fn the_cline_clis_workflow_directories_and_names() {
        let (d, g) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        write(d.path(), ".cline/workflows/release.md", "---\ndescription: ship it\n---\n\nTag and push.\n");
        write(d.path(), ".cline/workflows/both.md", "cli both");
        write(d.path(), ".cline/workflows/deploy.sh", "not a workflow of the CLI");
        write(d.path(), ".cline/workflows/sub/nested.md", "not at the top");
        write(d.path(), ".clinerules/workflows/both.md", "classic both");
        write(d.path(), ".clinerules/workflows/plain.md", "---\nkept: yes\n---\nplain");
        write(g.path(), "audit.md", "global audit");
        write(g.path(), "release", "not a workflow of the CLI");
        let global = [(g.path().to_path_buf(), Layout::Cli)];
        let expand = |words: &str| expand(words, d.path(), &global, &mut Reader::new()).map(|e| e.instructions);
        let tagged = |name: &str, body: &str| {
            Some(format!("<explicit_instructions type=\"{name}\">\n{body}\n</explicit_instructions>\n"))
        };
        assert_eq!(expand("/release.md now"), tagged("release.md", "Tag and push."));
        assert_eq!(expand("/both.md"), tagged("both.md", "classic both"));
        assert_eq!(expand("/both"), tagged("both", "classic both"));
        assert_eq!(expand("/audit"), tagged("audit", "global audit"));
        // The extension's directory keeps its text whole.
        assert_eq!(expand("/plain"), tagged("plain", "---\nkept: yes\n---\nplain"));
        for none in ["/deploy", "/deploy.sh", "/nested", "/nested.md"] {
            assert_eq!(expand(none), None, "{none}");
        }
        // The global `release` has no Markdown or text extension, so it is not one of the CLI's
        // workflows: `/release` is the workspace's `release.md`.
        assert_eq!(expand("/release"), tagged("release", "Tag and push."));
    }

    /// The Cline CLI calls a workflow by its frontmatter's `name` (else its file's name without
    /// the extension), leaves out one that says `disabled: true` or `enabled: false`, and
    /// refuses one without a body or with a `disabled` that is no boolean (a warning says why).
    #[test]
    fn the_cline_clis_workflow_names_and_switches_from_the_frontmatter() {
        let (d, g) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        write(d.path(), ".cline/workflows/deploy.md", "---\nname: ship\n---\nRun the ship workflow.");
        write(d.path(), ".cline/workflows/off.md", "---\ndisabled: true\n---\nDo not run this workflow.");
        write(d.path(), ".cline/workflows/off2.md", "---\nenabled: false\n---\nNor this one.");
        write(d.path(), ".cline/workflows/bad.md", "---\ndisabled: maybe\n---\nRefused.");
        write(d.path(), ".cline/workflows/empty.md", "---\ndescription: no body\n---\n");
        write(g.path(), "audit.md", "---\nname: review\ndisabled: true\n---\nOff, so the next one counts.");
        write(g.path(), "review.md", "Review it.");
        // Read only to learn its name, a file that may not be read is not worth a warning.
        write(d.path(), ".cline/workflows/shared.md", &"x".repeat(rules::MAX_RULE_FILE_BYTES as usize + 1));
        let global = [(g.path().to_path_buf(), Layout::Cli)];
        let mut warn = Reader::new();
        let mut expand = |words: &str| expand(words, d.path(), &global, &mut warn).map(|e| e.instructions);
        let tagged = |name: &str, body: &str| {
            Some(format!("<explicit_instructions type=\"{name}\">\n{body}\n</explicit_instructions>\n"))
        };
        assert_eq!(expand("/ship now"), tagged("ship", "Run the ship workflow."));
        // Its file's whole name still finds it, as every workflow file is found.
        assert_eq!(expand("/deploy.md"), tagged("deploy.md", "Run the ship workflow."));
        assert_eq!(expand("/deploy"), None, "named `ship` by its frontmatter");
        for off in ["/off", "/off.md", "/off2", "/bad", "/empty"] {
            assert_eq!(expand(off), None, "{off}");
        }
        assert_eq!(expand("/review"), tagged("review", "Review it."));
        let refused: Vec<&String> = warn.warnings.iter().filter(|w| w.contains("not used, as the Cline CLI")).collect();
        assert_eq!(refused.len(), 2, "{:?}", warn.warnings);
        assert!(!warn.warnings.iter().any(|w| w.contains("shared.md")), "{:?}", warn.warnings);
        assert!(
            refused[0].contains("bad.md") && refused[0].ends_with("Frontmatter field 'disabled' must be a boolean.")
        );
        assert!(refused[1].ends_with(
            "empty.md: not used, as the Cline CLI does not use it: Missing instructions body in workflow file."
        ));
    }
}
