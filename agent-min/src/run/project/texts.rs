//! Cline v4.0.10's texts for the project's own setup, word for word (`formatResponse` in
//! `core/prompts/responses.ts`, `components/user_instructions.ts`): the rule headings and the
//! custom-instructions section they sit in (the `.clineignore` texts are in `prompt/responses.rs`).

/// `formatResponse.clineRulesGlobalDirectoryInstructions`.
pub(crate) fn global_directory(dir: &str, content: &str) -> String {
    format!("# .clinerules/\n\nThe following is provided by a global .clinerules/ directory, located at {dir}, where the user has specified instructions for all working directories:\n\n{content}")
}

/// `formatResponse.clineRulesLocalDirectoryInstructions`.
pub(crate) fn local_directory(cwd: &str, content: &str) -> String {
    format!("# .clinerules/\n\nThe following is provided by a root-level .clinerules/ directory where the user has specified instructions for this working directory ({cwd})\n\n{content}")
}

/// `formatResponse.clineRulesLocalFileInstructions`.
pub(crate) fn local_file(cwd: &str, content: &str) -> String {
    format!("# .clinerules\n\nThe following is provided by a root-level .clinerules file where the user has specified instructions for this working directory ({cwd})\n\n{content}")
}

/// Ours, in the words of `clineRulesLocalDirectoryInstructions`: the Cline CLI's `.cline/rules/`.
pub(crate) fn cline_cli_directory(cwd: &str, content: &str) -> String {
    format!("# .cline/rules/\n\nThe following is provided by a root-level .cline/rules/ directory where the user has specified instructions for this working directory ({cwd})\n\n{content}")
}

/// Ours, in the words of `clineRulesGlobalDirectoryInstructions`: `~/.agents/AGENTS.md`.
pub(crate) fn global_agents_file(file: &str, content: &str) -> String {
    format!("# AGENTS.md\n\nThe following is provided by a global AGENTS.md file, located at {file}, where the user has specified instructions for all working directories:\n\n{content}")
}

/// `formatResponse.windsurfRulesLocalFileInstructions`.
pub(crate) fn windsurf_file(cwd: &str, content: &str) -> String {
    format!("# .windsurfrules\n\nThe following is provided by a root-level .windsurfrules file where the user has specified instructions for this working directory ({cwd})\n\n{content}")
}

/// `formatResponse.cursorRulesLocalFileInstructions`.
pub(crate) fn cursor_file(cwd: &str, content: &str) -> String {
    format!("# .cursorrules\n\nThe following is provided by a root-level .cursorrules file where the user has specified instructions for this working directory ({cwd})\n\n{content}")
}

/// `formatResponse.cursorRulesLocalDirectoryInstructions`.
pub(crate) fn cursor_directory(cwd: &str, content: &str) -> String {
    format!("# .cursor/rules\n\nThe following is provided by a root-level .cursor/rules directory where the user has specified instructions for this working directory ({cwd})\n\n{content}")
}

/// `formatResponse.agentsRulesLocalFileInstructions`.
pub(crate) fn agents_files(cwd: &str, content: &str) -> String {
    format!("# AGENTS.md\n\nThe following is provided by AGENTS.md files found recursively throughout this working directory ({cwd}) where the user has specified instructions. Nested AGENTS.md will be combined below, and you should only apply the instructions for each AGENTS.md file that is directly applicable to the current task, i.e. if you are reading or writing to a file in that directory.\n\n{content}")
}

/// `USER_CUSTOM_INSTRUCTIONS_TEMPLATE_TEXT` with its sections joined, and the `====` separator
/// that puts it last in Cline's generic system prompt.
pub(crate) fn user_instructions(sections: &[String]) -> String {
    format!(
        "\n\n====\n\nUSER'S CUSTOM INSTRUCTIONS\n\nThe following additional instructions are provided by the user, and should be followed to the best of your ability without interfering with the TOOL USE guidelines.\n\n{}",
        sections.join("\n\n")
    )
}
