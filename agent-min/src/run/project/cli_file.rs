//! A file of the Cline CLI's rules or workflows directories (`.cline/rules/`, `~/.cline/rules`,
//! `.cline/workflows/`, `~/.cline/workflows`), as the CLI reads it: its
//! `parseRuleConfigFromMarkdown` and `parseWorkflowConfigFromMarkdown`
//! (`sdk/packages/core/src/extensions/config/user-instruction-config-loader.ts`).
//!
//! The CLI names the file by its frontmatter's `name`, else by its file name without the
//! extension; leaves it out when the frontmatter says `disabled: true` (or `enabled: false`
//! without `disabled`); and refuses a file whose body is empty, or whose `name` or
//! `disabled`/`enabled` is not a string or a boolean. It refuses one whose frontmatter does not
//! parse too; here such a file is used, without its frontmatter, and said to be
//! ([`CliFile::unread`]): agent-min's YAML reader (`frontmatter.rs`) knows less than the CLI's,
//! and a rule is not dropped for what it cannot read. The extension's own directories
//! (`.clinerules/`) know none of this, and are not read here.

use super::frontmatter::{self, Value};

/// What the CLI reads of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CliFile {
    /// The name it is called by: the frontmatter's `name`, trimmed, else the fallback.
    pub name: String,
    /// Whether the frontmatter turns it off.
    pub disabled: bool,
    /// The text after the frontmatter, trimmed.
    pub instructions: String,
    /// Why its frontmatter could not be read (the file is used as if it had none).
    pub unread: Option<String>,
}

/// What kind of file it is, for the CLI's error texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A rule.
    Rule,
    /// A workflow.
    Workflow,
}

/// Reads `text` as the CLI reads a file of `kind` whose file name without the extension is
/// `fallback_name`; `Err` is the CLI's reason for not loading it.
pub(crate) fn read(text: &str, fallback_name: &str, kind: Kind) -> Result<CliFile, String> {
    // The CLI's regex wants `---` at the very start (the extension's allows white space first).
    let fm = if text.starts_with("---") { Some(frontmatter::parse(text)) } else { None };
    let unread = fm.as_ref().and_then(|f| f.parse_error.clone());
    let (data, body) = match &fm {
        Some(f) if unread.is_some() => (&[][..], frontmatter::after_block(text).unwrap_or(f.body)),
        Some(f) => (f.data.as_slice(), f.body),
        None => (&[][..], text),
    };
    let instructions = body.trim();
    let what = match kind {
        Kind::Rule => "rule",
        Kind::Workflow => "workflow",
    };
    if instructions.is_empty() {
        return Err(format!("Missing instructions body in {what} file."));
    }
    let field = |key: &str| data.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v);
    let name = match field("name") {
        None | Some(Value::Null) => None,
        Some(Value::Str(s)) => Some(s.trim()).filter(|s| !s.is_empty()),
        Some(_) => return Err("Frontmatter field 'name' must be a string.".into()),
    };
    let name = name.unwrap_or(fallback_name.trim());
    if name.is_empty() {
        return Err(format!("Missing {what} name."));
    }
    let boolean = |key: &str| match field(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(format!("Frontmatter field '{key}' must be a boolean.")),
    };
    let disabled = match boolean("disabled")? {
        Some(d) => d,
        None => boolean("enabled")? == Some(false),
    };
    Ok(CliFile { name: name.to_string(), disabled, instructions: instructions.to_string(), unread })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str) -> Result<CliFile, String> {
        read(text, "style", Kind::Rule)
    }

    /// The CLI's own cases (`user-instruction-config-loader.test.ts`, `runtime-commands.test.ts`):
    /// the name from the frontmatter or the file, `disabled`, and `enabled: false`.
    #[test]
    fn the_name_and_the_switch_are_read_as_the_cline_cli_reads_them() {
        let plain = rule("Use tabs.\n").unwrap();
        let want = CliFile { name: "style".into(), disabled: false, instructions: "Use tabs.".into(), unread: None };
        assert_eq!(plain, want);
        let named = read("---\nname:  ship \n---\nRun the ship workflow.", "deploy", Kind::Workflow).unwrap();
        assert_eq!(
            (named.name.as_str(), named.disabled, named.instructions.as_str()),
            ("ship", false, "Run the ship workflow.")
        );
        assert!(rule("---\ndisabled: true\n---\nOff.").unwrap().disabled);
        assert!(rule("---\nenabled: false\n---\nOff.").unwrap().disabled);
        assert!(!rule("---\ndisabled: false\nenabled: false\n---\nOn: disabled wins.").unwrap().disabled);
        assert!(!rule("---\ndisabled: null\n---\nOn.").unwrap().disabled);
        assert!(rule("---\ndisabled: True\n---\nOff.").unwrap().disabled);
        // An empty name falls back to the file's.
        assert_eq!(rule("---\nname: ''\n---\nx").unwrap().name, "style");
        // White space before `---`: no frontmatter for the CLI, the text whole.
        assert_eq!(rule("\n---\ndisabled: true\n---\nx").unwrap().instructions, "---\ndisabled: true\n---\nx");
    }

    #[test]
    fn what_the_cline_cli_refuses_is_refused_with_its_reason() {
        assert_eq!(rule("---\ndisabled: yes\n---\nx"), Err("Frontmatter field 'disabled' must be a boolean.".into()));
        assert_eq!(rule("---\nenabled: 0\n---\nx"), Err("Frontmatter field 'enabled' must be a boolean.".into()));
        assert_eq!(rule("---\nname: [a]\n---\nx"), Err("Frontmatter field 'name' must be a string.".into()));
        assert_eq!(rule("---\ndescription: only\n---\n \n"), Err("Missing instructions body in rule file.".into()));
        assert_eq!(read("", "w", Kind::Workflow), Err("Missing instructions body in workflow file.".into()));
    }

    /// Frontmatter this reader cannot read leaves the file used, without it, and says why.
    #[test]
    fn frontmatter_that_cannot_be_read_here_is_left_out_and_said() {
        let r = rule("---\npaths: [unclosed\n---\nUse tabs.").unwrap();
        assert_eq!((r.name.as_str(), r.disabled, r.instructions.as_str()), ("style", false, "Use tabs."));
        assert!(r.unread.is_some());
    }
}
