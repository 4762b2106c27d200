//! The task's events as `session/update` notifications: reply text as agent message chunks,
//! reasoning as thought chunks, a complete tool call as `tool_call` (its kind, title, the paths
//! it touches, an edit's diff), its approval and result as `tool_call_update` (the result,
//! a command's output with it, as text content), the focus chain's checklist as the `plan`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agent_client_protocol_schema::v1::{
    Content, ContentBlock, ContentChunk, Diff, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus,
    SessionNotification, SessionUpdate, TextContent, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus,
    ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use indexmap::IndexMap;

use super::wire::Wire;
use crate::run::session::events::{Event, Tap};

/// What the updates and the approvals of one session share.
pub(crate) struct Session {
    pub wire: Arc<Wire>,
    pub id: String,
    /// The workspace, canonical: where the tools' paths are.
    pub root: PathBuf,
    /// The workspace as the editor named it (`cwd`, perhaps through a link): where the paths
    /// the editor is sent are, so they are the paths of its own worktree and buffers.
    pub shown_root: PathBuf,
    /// The complete tool calls announced and not yet resolved, by the loop's call id (which
    /// the tool asking for approval names: the call an approval is about).
    pub open: IndexMap<String, Call>,
    /// Every `toolCallId` announced in the session: a retried request streams its calls again
    /// under the loop's same ids, and the protocol's id names one call only.
    announced: HashSet<String>,
    /// Set while the turn is cancelled: nothing more is asked.
    pub cancel: Arc<std::sync::atomic::AtomicBool>,
}

/// A complete tool call.
#[derive(Clone)]
pub(crate) struct Call {
    /// Its `toolCallId` on the wire.
    pub id: String,
    pub tool: String,
    pub params: IndexMap<String, String>,
}

impl Session {
    pub(crate) fn new(wire: Arc<Wire>, root: PathBuf) -> Self {
        Session {
            wire,
            id: String::new(),
            shown_root: root.clone(),
            root,
            open: IndexMap::new(),
            announced: HashSet::new(),
            cancel: Arc::default(),
        }
    }

    /// `abs` (a path under [`Session::root`]) as the editor names it, under its `cwd` — while
    /// that `cwd` still leads to the workspace (a link retargeted since would lead the editor's
    /// write elsewhere, past the tools' checks): otherwise `abs` itself.
    pub(crate) fn for_editor(&self, abs: &std::path::Path) -> PathBuf {
        editor_path(&self.root, &self.shown_root, abs)
    }

    /// Sends one update of this session.
    pub(crate) fn update(&self, update: SessionUpdate) {
        self.wire.notify("session/update", SessionNotification::new(self.id.clone(), update));
    }

    /// A `toolCallId` for the loop's `call_id` not announced before in this session.
    fn fresh_id(&mut self, call_id: &str) -> String {
        let mut id = call_id.to_string();
        let mut n = 1;
        while self.announced.contains(&id) {
            n += 1;
            id = format!("{call_id}-{n}");
        }
        self.announced.insert(id.clone());
        id
    }

    /// Resolves every open call as failed, `why` being its content: it will not run.
    pub(crate) fn fail_open(&mut self, why: &str) {
        for (_, call) in std::mem::take(&mut self.open) {
            self.fail(call, why);
        }
    }

    fn fail(&self, call: Call, why: &str) {
        if said(&call.tool).is_some() {
            return; // never shown as a tool call
        }
        let text = ContentBlock::Text(TextContent::new(why));
        let fields = ToolCallUpdateFields::new()
            .status(ToolCallStatus::Failed)
            .content(vec![ToolCallContent::Content(Content::new(text))]);
        self.update(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(call.id, fields)));
    }

    /// The `toolCallId` the loop's `call_id` was announced under.
    fn wire_id(&self, call_id: &str) -> String {
        self.open.get(call_id).map_or_else(|| call_id.to_string(), |c| c.id.clone())
    }
}

/// How a call that ended is shown: failed unless `ok`, or for an MCP tool a server's error
/// (`isError`: the tool's answer to the model, a failure to the person), as a loaded session
/// shows it.
fn result_status(tool: &str, ok: bool, result: &str) -> ToolCallStatus {
    match ok && !(tool == "use_mcp_tool" && super::history::mcp_failed(result)) {
        true => ToolCallStatus::Completed,
        false => ToolCallStatus::Failed,
    }
}

/// The tools whose calls are said as text, not shown as tool calls.
pub(crate) fn said(tool: &str) -> Option<&'static str> {
    match tool {
        "attempt_completion" => Some("result"),
        "ask_followup_question" => Some("question"),
        _ => None,
    }
}

/// The events' reader that turns them into updates.
pub(crate) fn tap(session: Arc<Mutex<Session>>) -> Tap {
    Box::new(move |event: &Event| {
        let mut s = session.lock().unwrap_or_else(|e| e.into_inner());
        match event {
            Event::Text { text, .. } => s.update(SessionUpdate::AgentMessageChunk(chunk(text))),
            Event::Reasoning { text, .. } => s.update(SessionUpdate::AgentThoughtChunk(chunk(text))),
            // A retried request streams its reply again: what the failed attempt announced
            // will not run.
            Event::RequestStarted { attempt, .. } if *attempt > 1 => {
                s.fail_open("Not run: the reply failed and the request was sent again")
            }
            Event::ToolCall { call_id, tool, params, partial: false, .. } => {
                // (Never twice without a retry between; if it were, the first will not run.)
                if let Some(earlier) = s.open.shift_remove(call_id) {
                    s.fail(earlier, "Not run: announced again");
                }
                let id = s.fresh_id(call_id);
                s.open.insert(call_id.clone(), Call { id: id.clone(), tool: tool.clone(), params: params.clone() });
                match said(tool) {
                    Some(param) => {
                        let mut text = params.get(param).cloned().unwrap_or_default();
                        // A question's options, to choose from in the next prompt.
                        let options = params.get("options").filter(|_| tool == "ask_followup_question");
                        for o in crate::run::tools::ask::parse_options(options.map_or("[]", String::as_str)) {
                            text.push_str(&format!("\n- {o}"));
                        }
                        s.update(SessionUpdate::AgentMessageChunk(chunk(&format!("\n\n{text}"))));
                    }
                    None => {
                        let call = tool_call(&s.shown_root, &id, tool, params);
                        s.update(SessionUpdate::ToolCall(call));
                    }
                }
            }
            Event::Approval { call_id, tool, approved: true, .. } if said(tool).is_none() => {
                let fields = ToolCallUpdateFields::new().status(ToolCallStatus::InProgress);
                s.update(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(s.wire_id(call_id), fields)));
            }
            Event::ToolResult { call_id, tool, ok, result, .. } => {
                let id = s.wire_id(call_id);
                s.open.shift_remove(call_id);
                if said(tool).is_some() {
                    return;
                }
                // A call the person cancelled (a command killed by it) did not complete.
                let cancelled = s.cancel.load(std::sync::atomic::Ordering::SeqCst);
                let status = result_status(tool, *ok && !cancelled, result);
                let mut fields =
                    ToolCallUpdateFields::new().status(status).raw_output(serde_json::Value::String(result.clone()));
                // The update's content replaces the call's: an edit that was made keeps its
                // diff (the result, the whole file again, is its raw output).
                if !(status == ToolCallStatus::Completed && has_diff(tool)) {
                    let text = ContentBlock::Text(TextContent::new(result.clone()));
                    fields = fields.content(vec![ToolCallContent::Content(Content::new(text))]);
                }
                s.update(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id, fields)));
            }
            Event::TaskProgress { list, .. } => {
                let entry = |(done, text): (bool, &str)| {
                    let status = if done { PlanEntryStatus::Completed } else { PlanEntryStatus::Pending };
                    PlanEntry::new(text, PlanEntryPriority::Medium, status)
                };
                let entries = crate::run::prompt::focus_chain::items(list).map(entry).collect();
                s.update(SessionUpdate::Plan(Plan::new(entries)));
            }
            _ => {}
        }
    })
}

/// A text chunk (of the agent's message, the person's, or a thought).
pub(super) fn chunk(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
}

/// `abs`, under the workspace `root` (canonical), as under `shown_root` (the editor's `cwd`)
/// while that still leads to `root`; otherwise `abs` itself.
fn editor_path(root: &Path, shown_root: &Path, abs: &Path) -> PathBuf {
    let leads_here = shown_root == root || shown_root.canonicalize().is_ok_and(|r| r == root);
    match abs.strip_prefix(root) {
        Ok(rel) if leads_here => shown_root.join(rel),
        _ => abs.to_path_buf(),
    }
}

/// The tools whose call shows the edit's diff.
fn has_diff(tool: &str) -> bool {
    matches!(tool, "write_to_file" | "replace_in_file")
}

/// A complete call as the client shows it: kind, title, the paths it touches, an edit's diff.
pub(crate) fn tool_call(root: &Path, id: &str, tool: &str, params: &IndexMap<String, String>) -> ToolCall {
    let mut call = shown_call(root, id, tool, params);
    let path = params.get("path").map(|rel| root.join(rel));
    if let Some(diff) = path.and_then(|path| diff(tool, &path, params)) {
        call = call.content(vec![ToolCallContent::Diff(diff)]);
    }
    call
}

/// A call as the client shows it, without an edit's diff: kind, title, the path it touches.
pub(crate) fn shown_call(root: &Path, id: &str, tool: &str, params: &IndexMap<String, String>) -> ToolCall {
    let p = |name: &str| params.get(name).map(String::as_str).unwrap_or_default();
    let path = params.get("path").map(|rel| root.join(rel));
    // The files a patch names, in its title and as its locations.
    let patched: Vec<&str> = match tool {
        "apply_patch" => crate::run::tools::apply_patch::targets(p("input")).collect(),
        _ => Vec::new(),
    };
    let (kind, title) = match tool {
        "read_file" => (ToolKind::Read, format!("Read {}", p("path"))),
        "write_to_file" => (ToolKind::Edit, format!("Write {}", p("path"))),
        "replace_in_file" => (ToolKind::Edit, format!("Edit {}", p("path"))),
        "list_files" => (ToolKind::Search, format!("List {}", p("path"))),
        "list_code_definition_names" => (ToolKind::Search, format!("List definitions in {}", p("path"))),
        "search_files" => (ToolKind::Search, format!("Search {} in {}", p("regex"), p("path"))),
        "execute_command" => (ToolKind::Execute, format!("Run `{}`", p("command"))),
        "apply_patch" => (ToolKind::Edit, format!("Patch {}", patched.join(", "))),
        "use_mcp_tool" => (ToolKind::Other, format!("{} ({})", p("tool_name"), p("server_name"))),
        "access_mcp_resource" => (ToolKind::Fetch, format!("{} ({})", p("uri"), p("server_name"))),
        other => (ToolKind::Other, other.to_string()),
    };
    let raw: serde_json::Map<String, serde_json::Value> =
        params.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect();
    let mut call = ToolCall::new(id.to_string(), title)
        .kind(kind)
        .status(ToolCallStatus::Pending)
        .raw_input(serde_json::Value::Object(raw));
    if let Some(path) = path {
        call = call.locations(vec![ToolCallLocation::new(path)]);
    } else if !patched.is_empty() {
        call = call.locations(patched.iter().map(|f| ToolCallLocation::new(root.join(f))).collect());
    }
    call
}

/// The largest file an edit's diff carries (its old and new text).
const MAX_DIFF_FILE: u64 = 1 << 20;

/// An edit's diff: the file as it is and as the edit would leave it.
fn diff(tool: &str, path: &Path, params: &IndexMap<String, String>) -> Option<Diff> {
    let old = read_small(path);
    // A file that is there but not shown (large, not UTF-8, unreadable) gets no diff: one
    // without its old text says the file is new (the schema's `oldText`: "None for new files").
    if old.is_none() && path.symlink_metadata().is_ok() {
        return None;
    }
    let new = match tool {
        _ if !has_diff(tool) => return None,
        "write_to_file" => params.get("content")?.clone(),
        "replace_in_file" => {
            let old = old.as_deref()?;
            crate::run::tools::diff::apply(old, params.get("diff")?).ok()?
        }
        _ => return None,
    };
    Some(Diff::new(path.to_path_buf(), new).old_text(old))
}

/// A file's text, if it is a small regular UTF-8 file.
fn read_small(path: &Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_DIFF_FILE + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > MAX_DIFF_FILE {
        return None;
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A patch is an edit of the files its headers name: the editor shows them as its title
    /// and locations (it was `other`, titled `apply_patch`, with none).
    #[test]
    fn a_patch_is_an_edit_of_the_files_it_names() {
        let input = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: b.txt\n+hi\n*** End Patch";
        let params: IndexMap<String, String> = [("input".to_string(), input.to_string())].into_iter().collect();
        let call = shown_call(Path::new("/w"), "c1", "apply_patch", &params);
        let v = serde_json::to_value(&call).unwrap();
        assert_eq!((v["kind"].as_str(), v["title"].as_str()), (Some("edit"), Some("Patch src/a.rs, b.txt")), "{v}");
        let paths: Vec<&str> = v["locations"].as_array().unwrap().iter().map(|l| l["path"].as_str().unwrap()).collect();
        assert_eq!(paths, ["/w/src/a.rs", "/w/b.txt"]);
    }

    /// An MCP call the server answered with an error, or that failed, is shown failed, live and
    /// when the session is loaded again (it was `completed` live and `failed` loaded, and the
    /// other way round); a file that says `Error:` is no failure of read_file.
    #[test]
    fn an_mcp_calls_error_is_a_failure_live_and_loaded() {
        use crate::run::tools::Outcome;
        let cases = [
            ("use_mcp_tool", Outcome::Success("Error:\nMCP error -32602: Tool nope not found".into())),
            ("use_mcp_tool", Outcome::Failure { text: "Error executing MCP tool: timed out".into(), mistake: false }),
            ("use_mcp_tool", Outcome::Success("It worked.".into())),
            ("read_file", Outcome::Success("Error:\nin the file".into())),
        ];
        let expected =
            [ToolCallStatus::Failed, ToolCallStatus::Failed, ToolCallStatus::Completed, ToolCallStatus::Completed];
        for ((tool, outcome), expected) in cases.iter().zip(expected) {
            let (ok, text) = match outcome {
                Outcome::Success(t) => (true, t.as_str()),
                Outcome::Failure { text, .. } => (false, text.as_str()),
                _ => unreachable!(),
            };
            assert_eq!(result_status(tool, ok, text), expected, "live: {tool} {text}");
            let answer = format!("[{tool} for 'x'] Result:\n{text}");
            let loaded = super::super::history::status_of(tool, answer.split_once(" Result:").unwrap().1);
            assert_eq!(loaded, expected, "loaded: {tool} {text}");
        }
    }

    /// A path goes to the editor under its `cwd` only while that link leads to the workspace:
    /// retargeted, the editor would write where no check looked.
    #[test]
    fn a_path_goes_under_the_editors_cwd_only_while_it_leads_to_the_workspace() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap().join("real");
        let other = root.with_file_name("other");
        std::fs::create_dir(&root).unwrap();
        std::fs::create_dir(&other).unwrap();
        let link = root.with_file_name("link");
        std::os::unix::fs::symlink(&root, &link).unwrap();
        let abs = root.join("a.txt");
        assert_eq!(editor_path(&root, &link, &abs), link.join("a.txt"));
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink(&other, &link).unwrap();
        assert_eq!(editor_path(&root, &link, &abs), abs);
    }

    /// An overwrite of a file not shown in a diff (over 1 MiB, not UTF-8) carries no diff: one
    /// without old text says the file is new. A new file's diff has none; a small file's has it.
    #[test]
    fn a_file_too_large_or_binary_to_show_gets_no_diff_rather_than_a_new_files() {
        let d = tempfile::tempdir().unwrap();
        let params: IndexMap<String, String> = [("content".to_string(), "x".to_string())].into_iter().collect();
        std::fs::write(d.path().join("big.txt"), "a".repeat(2 << 20)).unwrap();
        std::fs::write(d.path().join("bin.dat"), [0xff, 0xfe, 0x00]).unwrap();
        std::fs::write(d.path().join("small.txt"), "old").unwrap();
        for name in ["big.txt", "bin.dat"] {
            assert!(diff("write_to_file", &d.path().join(name), &params).is_none(), "{name}");
        }
        let new = serde_json::to_value(diff("write_to_file", &d.path().join("new.txt"), &params).unwrap()).unwrap();
        assert_eq!(new.get("oldText"), None, "{new}");
        let small = serde_json::to_value(diff("write_to_file", &d.path().join("small.txt"), &params).unwrap()).unwrap();
        assert_eq!(small["oldText"], "old");
    }
}
