//! `session/load`: a saved conversation sent back to the editor as `session/update`
//! notifications, the way it streamed: the person's words (the task, each later prompt) as user
//! message chunks, the replies' text as agent message chunks, each tool call as a `tool_call`
//! (its kind, title and paths) already completed. What agent-min itself wrote into the
//! conversation (environment details, tool results, notices) is not the person's and is not
//! shown.

use agent_client_protocol_schema::v1::{SessionUpdate, ToolCallStatus};
use std::path::Path;

use indexmap::IndexMap;
use parser_core::Block;

use super::updates::{self, chunk, Session};
use crate::run::llm::{Message, Role};
use crate::run::tools::Call;

/// Sends `messages` to the editor as updates of `session`.
pub(crate) fn replay(session: &Session, messages: &[Message]) {
    for update in updates_of(&session.root, messages) {
        session.update(update);
    }
}

/// The updates that tell `messages` (a workspace at `root`).
fn updates_of(root: &Path, messages: &[Message]) -> Vec<SessionUpdate> {
    let mut out = Vec::new();
    let mut calls = 0;
    for m in messages {
        match m.role {
            Role::User => {
                if let Some(words) = persons_words(&m.content) {
                    out.push(SessionUpdate::UserMessageChunk(chunk(words)));
                }
            }
            Role::Assistant if m.tool_uses().next().is_some() => {
                // Native calls: the text is text, whatever tags it shows (an example of a
                // call in prose never ran).
                if !m.content.trim().is_empty() {
                    out.push(SessionUpdate::AgentMessageChunk(chunk(m.content.trim())));
                }
                for t in m.tool_uses() {
                    // Read as it ran (`path || absolutePath`, `response` for `result`; an MCP
                    // tool's function as the `use_mcp_tool` it ran as, shown as live).
                    let read = crate::run::native::mcp_call::to_call(&t.name, &t.input)
                        .unwrap_or_else(|| Call::from_input(&t.name, &t.input));
                    call(&mut out, root, &mut calls, &read.name, &read.shown_params().into_iter().collect());
                }
            }
            Role::Assistant => {
                // The XML dialect's calls are in the text (and a native reply's without a native
                // call: recovered from its text): it is cut as the stream was.
                for block in parser_core::parse(&m.content).iter() {
                    match block {
                        Block::Text { content, .. } => out.push(SessionUpdate::AgentMessageChunk(chunk(content))),
                        Block::ToolUse(t) => {
                            let read = Call::from_xml(&t);
                            call(&mut out, root, &mut calls, t.name, &read.shown_params().into_iter().collect());
                        }
                    }
                }
            }
        }
    }
    out
}

/// A call of the history: said as text (a completion's result, a question) or shown as a
/// completed tool call.
fn call(out: &mut Vec<SessionUpdate>, root: &Path, calls: &mut usize, tool: &str, params: &IndexMap<String, String>) {
    if let Some(param) = updates::said(tool) {
        let text = params.get(param).cloned().unwrap_or_default();
        out.push(SessionUpdate::AgentMessageChunk(chunk(&text)));
        return;
    }
    *calls += 1;
    let id = format!("history_{calls}");
    let shown = updates::shown_call(root, &id, tool, params).status(ToolCallStatus::Completed);
    out.push(SessionUpdate::ToolCall(shown));
}

/// The person's words in a user message: the task, or a later prompt (Cline's feedback, or the
/// new instructions of the first prompt after a load); `None` for a message of tool results.
fn persons_words(content: &str) -> Option<&str> {
    let inner = |open: &str, close: &str| {
        let start = content.find(open)? + open.len();
        let end = content[start..].find(close)? + start;
        Some(content[start..end].trim())
    };
    // The later of the two a message may hold (a resume after a stop keeps the feedback it
    // carried before its notice).
    let last = |open: &str, close: &str| {
        let at = content.rfind(open)?;
        let words = content[at + open.len()..].split(close).next()?.trim();
        Some((at, words))
    };
    let words = match inner("<task>", "</task>") {
        Some(task) => task,
        None => {
            let resumed = last("continuation:\n<user_message>", "</user_message>");
            let feedback = last("<feedback>", "</feedback>");
            feedback.into_iter().chain(resumed).max_by_key(|(at, _)| *at)?.1
        }
    };
    (!words.is_empty()).then_some(words)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol_schema::v1::ContentBlock;

    #[test]
    fn the_persons_words_are_the_task_and_the_feedback_not_tool_results() {
        let first = "<task>\nWrite hello.txt\n</task>\n\n<environment_details>\n# Current Mode\nACT MODE\n</environment_details>";
        assert_eq!(persons_words(first), Some("Write hello.txt"));
        let later = "[attempt_completion] Result: Done\n\nThe user has provided feedback on the results. Consider their input to continue the task, and then attempt completion again.\n\n<feedback>\nNow other.txt\n</feedback>\n\n<environment_details>\n</environment_details>";
        assert_eq!(persons_words(later), Some("Now other.txt"));
        let resumed = "[TASK RESUMPTION] This task was interrupted just now.\n\nNew instructions for task continuation:\n<user_message>\nGo on\n</user_message>\n\n<environment_details>\n</environment_details>";
        assert_eq!(persons_words(resumed), Some("Go on"));
        assert_eq!(persons_words("[write_to_file for 'a.txt'] Result:\nThe content was saved."), None);
        assert_eq!(persons_words("<task>\n\n</task>"), None);
    }

    #[test]
    fn a_native_replys_text_is_text_whatever_tags_it_shows() {
        use crate::run::llm::{Part, ToolUsePart};
        let prose = "For example:\n<execute_command>\n<command>rm -rf /</command>\n</execute_command>";
        let mut native = Message::assistant(prose);
        native.parts = vec![Part::ToolUse(ToolUsePart {
            id: "toolu_1".into(),
            name: "attempt_completion".into(),
            input: r#"{"result":"explained"}"#.into(),
            answer: None,
            extra: None,
        })];
        let xml = Message::assistant("Listing.\n<list_files>\n<path>.</path>\n</list_files>");
        let shown: Vec<String> = updates_of(Path::new("/w"), &[native, xml])
            .iter()
            .map(|u| match u {
                SessionUpdate::AgentMessageChunk(c) => match &c.content {
                    ContentBlock::Text(t) => format!("text: {}", t.text),
                    other => format!("{other:?}"),
                },
                SessionUpdate::ToolCall(t) => format!("call: {}", t.title),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(shown.len(), 4, "{shown:?}");
        assert_eq!(shown[0], format!("text: {prose}"));
        assert_eq!(shown[1], "text: explained");
        assert_eq!(shown[2], "text: Listing.");
        assert!(shown[3].starts_with("call: "), "{shown:?}");
    }

    #[test]
    fn a_native_mcp_call_is_shown_as_it_was_live() {
        use crate::run::llm::{Part, ToolUsePart};
        let uid = crate::run::mcp::native::server_key("history-test-search");
        let mut m = Message::assistant("");
        m.parts = vec![Part::ToolUse(ToolUsePart {
            id: "toolu_1".into(),
            name: format!("{uid}0mcp0search"),
            input: r#"{"q":"x"}"#.into(),
            answer: None,
            extra: None,
        })];
        let titles: Vec<String> = updates_of(Path::new("/w"), &[m])
            .into_iter()
            .filter_map(|u| match u {
                SessionUpdate::ToolCall(t) => Some(t.title),
                _ => None,
            })
            .collect();
        assert_eq!(titles, ["search (history-test-search)"]);
    }
}
