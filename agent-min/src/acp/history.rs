//! `session/load`: a saved conversation sent back to the editor as `session/update`
//! notifications, the way it streamed: the person's words (the task, each later prompt) as user
//! message chunks, the replies' text as agent message chunks, each tool call as a `tool_call`
//! (its kind, title and paths) already completed. What agent-min itself wrote into the
//! conversation (environment details, tool results, notices) is not the person's and is not
//! shown.

use agent_client_protocol_schema::v1::{ContentBlock, ContentChunk, SessionUpdate, TextContent, ToolCallStatus};
use indexmap::IndexMap;
use parser_core::Block;

use super::updates::{self, Session};
use crate::run::llm::{Message, Role};
use crate::run::tools::Call;

/// Sends `messages` to the editor as updates of `session`.
pub(crate) fn replay(session: &Session, messages: &[Message]) {
    let mut calls = 0;
    for m in messages {
        match m.role {
            Role::User => {
                if let Some(words) = persons_words(&m.content) {
                    session.update(SessionUpdate::UserMessageChunk(chunk(words)));
                }
            }
            Role::Assistant => {
                // The XML dialect's calls are in the text: it is cut as the stream was.
                for block in parser_core::parse(&m.content).iter() {
                    match block {
                        Block::Text { content, .. } => session.update(SessionUpdate::AgentMessageChunk(chunk(content))),
                        Block::ToolUse(t) => {
                            let read = Call::from_xml(&t);
                            call(session, &mut calls, t.name, &read.shown_params().into_iter().collect());
                        }
                    }
                }
                for t in m.tool_uses() {
                    // Read as it ran (`path || absolutePath`, `response` for `result`).
                    let read = Call::from_input(&t.name, &t.input);
                    call(session, &mut calls, &t.name, &read.shown_params().into_iter().collect());
                }
            }
        }
    }
}

/// A call of the history: said as text (a completion's result, a question) or shown as a
/// completed tool call.
fn call(session: &Session, calls: &mut usize, tool: &str, params: &IndexMap<String, String>) {
    if let Some(param) = updates::said(tool) {
        let text = params.get(param).cloned().unwrap_or_default();
        session.update(SessionUpdate::AgentMessageChunk(chunk(&text)));
        return;
    }
    *calls += 1;
    let id = format!("history_{calls}");
    let shown = updates::shown_call(&session.root, &id, tool, params).status(ToolCallStatus::Completed);
    session.update(SessionUpdate::ToolCall(shown));
}

/// The person's words in a user message: the task, or a later prompt (Cline's feedback); `None`
/// for a message of tool results.
fn persons_words(content: &str) -> Option<&str> {
    let inner = |open: &str, close: &str| {
        let start = content.find(open)? + open.len();
        let end = content[start..].find(close)? + start;
        Some(content[start..end].trim())
    };
    let words = match inner("<task>", "</task>") {
        Some(task) => task,
        None => {
            let start = content.rfind("<feedback>")? + "<feedback>".len();
            content[start..].split("</feedback>").next()?.trim()
        }
    };
    (!words.is_empty()).then_some(words)
}

fn chunk(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_persons_words_are_the_task_and_the_feedback_not_tool_results() {
        let first = "<task>\nWrite hello.txt\n</task>\n\n<environment_details>\n# Current Mode\nACT MODE\n</environment_details>";
        assert_eq!(persons_words(first), Some("Write hello.txt"));
        let later = "[attempt_completion] Result:\nThe user has provided feedback on the results.\n\n<feedback>\nNow other.txt\n</feedback>\n\n<environment_details>\n</environment_details>";
        assert_eq!(persons_words(later), Some("Now other.txt"));
        assert_eq!(persons_words("[write_to_file for 'a.txt'] Result:\nThe content was saved."), None);
        assert_eq!(persons_words("<task>\n\n</task>"), None);
    }
}
