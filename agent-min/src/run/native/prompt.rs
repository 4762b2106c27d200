//! What the model is told in the native dialect: Cline's system prompt with the native
//! variants' TOOL USE section (`variants/native-next-gen/template.ts`: the tools travel as
//! definitions, so no XML format and no tool catalogue), and the messages that differ from the
//! XML dialect's.

/// Cline's native TOOL USE section (parallel tool calling off).
pub(crate) const TOOL_USE: &str = "TOOL USE

You have access to a set of tools that are executed upon the user's approval. You will receive the results of all tool uses in the user's response.";

/// The system prompt for a workspace: the XML dialect's (`full`) with its TOOL USE section
/// (from its heading to the next `====` rule) replaced by Cline's native one.
pub(crate) fn system(full: String) -> String {
    let Some(start) = full.find("\nTOOL USE\n").map(|i| i + 1) else {
        return full; // no such section: nothing XML to remove
    };
    let end = full[start..].find("\n====\n").map_or(full.len(), |i| start + i);
    format!("{}{TOOL_USE}\n{}", &full[..start], &full[end..])
}

/// Cline's `noToolsUsed(true)`: the native variant, without the XML format reminder.
pub(crate) fn no_tools_used() -> String {
    "[ERROR] You did not use a tool in your previous response! Please retry with a tool use.



# Next Steps

If you have completed the user's task, use the attempt_completion tool. 
If you require additional information from the user, use the ask_followup_question tool. 
Otherwise, if you have not completed the task and do not need additional information, then proceed with the next step of the task. 
(This is an automated message, so do not respond to it conversationally.)"
        .to_string()
}

/// What the model hears when its reply ended inside a native call: cut by the output limit
/// (`cut`), or ended before the call's arguments were complete. (Ours, as the XML dialect's
/// `prompt::truncated_tool`, without tags and without naming edit tools: Cline's GPT-5
/// variants offer `apply_patch` instead of `write_to_file` and `replace_in_file`.)
pub(crate) fn truncated_tool(name: &str, cut: bool) -> String {
    if !cut {
        return format!(
            "[ERROR] Your previous response ended in the middle of the {name} tool call, before its arguments were complete. That incomplete tool call was NOT executed, and nothing was changed.

Please retry with one complete tool call."
        );
    }
    format!(
        "[ERROR] Your previous response was cut off because it reached the maximum output token limit, in the middle of the {name} tool call. That incomplete tool call was NOT executed, and nothing was changed.

Please continue in smaller steps: for example, change a file with a few targeted edits instead of rewriting it whole, or create a large file in several smaller parts. Keep your reply short and end it with one complete tool call."
    )
}

/// What the model hears when the output limit cut its native reply before any tool call: the
/// XML dialect's text without the XML format reminder (as Cline's `noToolsUsed(true)` leaves it
/// out).
pub(crate) fn truncated_text() -> String {
    "[ERROR] Your previous response was cut off because it reached the maximum output token limit before it used a tool. Please keep your reply shorter and end it with one complete tool call.".to_string()
}

/// What the model hears when its call's arguments are not one JSON object (Cline has no such
/// message: it salvages string fields with a regular expression; we refuse rather than run a
/// guess).
pub(crate) fn invalid_arguments(tool: &str, why: &str) -> String {
    format!(
        "The arguments of your {tool} call are not valid JSON ({why}). The tool was not executed. Please retry the call with its arguments as a single JSON object matching the tool's schema."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_prompt_drops_the_xml_tool_section_only() {
        let xml_prompt = crate::run::dialect::system::system(crate::run::prompt::system::Family::Generic, "/w", true);
        let native = system(xml_prompt.clone());
        assert!(xml_prompt.contains("Tool use is formatted using XML-style tags"));
        assert!(!native.contains("Tool use is formatted using XML-style tags"));
        assert!(!native.contains("<read_file>\n<path>"));
        assert!(native.contains(TOOL_USE));
        assert!(native.starts_with("You are Cline"));
        // Everything after the TOOL USE section is kept.
        let tail = &xml_prompt[xml_prompt.find("\n====\n\nRULES").unwrap()..];
        assert!(native.ends_with(tail) || native.contains(tail));
    }

    #[test]
    fn native_no_tools_message_has_no_xml_reminder() {
        assert!(!no_tools_used().contains("XML"));
        assert!(crate::run::prompt::no_tools_used().contains("XML-style tags"));
        assert!(no_tools_used().starts_with("[ERROR] You did not use a tool"));
    }
}
