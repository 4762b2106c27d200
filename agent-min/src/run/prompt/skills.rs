//! Cline's texts for skills (`components/skills.ts`, `UseSkillToolHandler.ts`, v4.0.10): the
//! prompt's SKILLS section, where it goes, and what `use_skill` answers. The skills themselves
//! are found by `project/skills.rs` and loaded by `tools/skill.rs`.

/// Cline's SKILLS section for skills `(name, description)`, its blank lines collapsed as
/// Cline's `PromptBuilder.postProcess` collapses the whole prompt's (a folded or literal
/// description ends in a line break).
pub(crate) fn section<'a>(skills: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    if !cfg!(feature = "skills") {
        return String::new();
    }
    let list: Vec<String> =
        skills.into_iter().map(|(name, description)| format!("  - \"{name}\": {description}")).collect();
    collapse_blank_lines(&format!(
        "SKILLS\n\nThe following skills provide specialized instructions for specific tasks. When a user's request matches a skill description, use the use_skill tool to load and activate the skill.\n\nAvailable skills:\n{}\n\nTo use a skill:\n1. Match the user's request to a skill based on its description\n2. Call use_skill with the skill_name parameter set to the exact skill name\n3. Follow the instructions returned by the tool",
        list.join("\n")
    ))
}

/// JavaScript's `s.replace(/\n\s*\n\s*\n/g, "\n\n")`: a run of whitespace holding three or
/// more line breaks, from its first to its last, becomes one blank line.
fn collapse_blank_lines(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if b[i] == b'\n' {
            let run = s[i..].find(|c: char| !c.is_whitespace()).map_or(s.len(), |n| i + n);
            if s[i..run].matches('\n').count() >= 3 {
                out.push_str("\n\n");
                i += s[i..run].rfind('\n').unwrap_or(0) + 1;
                continue;
            }
        }
        let c = s[i..].chars().next().unwrap_or('\n');
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// `prompt` with `section` (the SKILLS section; empty: none, and `prompt` unchanged) before
/// RULES — where Cline's templates have it, after CAPABILITIES (what agent-min leaves out of
/// Cline's prompt, its FEEDBACK section, stood between them) — and `tool`, the XML prompt's
/// section of `use_skill`, if given, as the last of the tools.
pub(crate) fn insert(prompt: &str, section: &str, tool: Option<&str>) -> String {
    if !cfg!(feature = "skills") || section.is_empty() {
        return prompt.to_string();
    }
    let mut s = prompt.to_string();
    if let Some(tool) = tool {
        match s.find("# Tool Use Examples") {
            Some(i) => s.insert_str(i, &format!("{tool}\n\n")),
            None => s.push_str(&format!("\n\n{tool}")),
        }
    }
    const BEFORE: &str = "\n====\n\nRULES\n";
    // The last: what an MCP server says sits before RULES, and may hold the same line.
    match s.rfind(BEFORE) {
        Some(i) => s.insert_str(i + BEFORE.len() - "RULES\n".len(), &format!("{section}\n\n====\n\n")),
        None => s.push_str(&format!("\n\n====\n\n{section}")),
    }
    s
}

/// What `use_skill` answers for skill `name` whose `SKILL.md` is at `path`.
#[cfg_attr(not(feature = "skills"), allow(dead_code))]
pub(crate) fn activated(name: &str, instructions: &str, path: &str) -> String {
    let dir = path.strip_suffix("SKILL.md").unwrap_or(path);
    format!(
        "# Skill \"{name}\" is now active\n\n{instructions}\n\n---\nIMPORTANT: The skill is now loaded. Do NOT call use_skill again for this task. Simply follow the instructions above to complete the user's request. You may access other files in the skill directory at: {dir}"
    )
}

#[cfg(all(test, feature = "skills"))]
mod tests {
    use super::*;

    #[test]
    fn the_section_goes_before_rules_and_the_tool_after_the_others() {
        let prompt = "# Tools\n\n## attempt_completion\nX\n\n# Tool Use Examples\n\nE\n\n====\n\nCAPABILITIES\n\nC\n\n====\n\nRULES\n\nR";
        assert_eq!(insert(prompt, "", Some("## use_skill")), prompt);
        let section = section([("pdf", "pdf help"), ("docx", "docx help")]);
        let got = insert(prompt, &section, Some("## use_skill\nU"));
        assert_eq!(
            got,
            "# Tools\n\n## attempt_completion\nX\n\n## use_skill\nU\n\n# Tool Use Examples\n\nE\n\n====\n\nCAPABILITIES\n\nC\n\n====\n\nSKILLS\n\nThe following skills provide specialized instructions for specific tasks. When a user's request matches a skill description, use the use_skill tool to load and activate the skill.\n\nAvailable skills:\n  - \"pdf\": pdf help\n  - \"docx\": docx help\n\nTo use a skill:\n1. Match the user's request to a skill based on its description\n2. Call use_skill with the skill_name parameter set to the exact skill name\n3. Follow the instructions returned by the tool\n\n====\n\nRULES\n\nR"
        );
        assert!(!insert(prompt, &section, None).contains("## use_skill"));
        // A folded description ends in a line break: runs of blank lines collapse to one, as
        // Cline's whole prompt's do (this output checked with node against Cline's regex).
        let folded = super::section([("a", "A\n"), ("b", "B\n\n\nmore\n")]);
        assert!(folded.contains("skills:\n  - \"a\": A\n\n  - \"b\": B\n\nmore\n\nTo use a skill:"), "{folded:?}");
        assert_eq!(
            activated("pdf", "Step 1.", "/w/.cline/skills/pdf/SKILL.md"),
            "# Skill \"pdf\" is now active\n\nStep 1.\n\n---\nIMPORTANT: The skill is now loaded. Do NOT call use_skill again for this task. Simply follow the instructions above to complete the user's request. You may access other files in the skill directory at: /w/.cline/skills/pdf/"
        );
    }
}
