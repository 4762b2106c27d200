//! Approvals through `session/request_permission`: asked exactly where the terminal would ask
//! (the tools call [`Asker::approve`] where they would prompt a person; the permission rules,
//! `.clineignore`, the sandbox and `--yolo` decide first, as for `run`), with four options —
//! allow or reject, once or always. "Always" is remembered for the session ([`key`]): for a
//! command, that exact command; for an MCP tool, that server's tool (Cline's per-tool
//! `autoApprove`); for a path outside the workspace, that very path (Cline keeps
//! `editFilesExternally` apart from `editFiles`); for any other tool, the tool.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_client_protocol_schema::v1::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, ToolCallUpdate, ToolCallUpdateFields,
};

use super::updates::Session;
use crate::run::ui::term::{Approval, Asker};

/// The session's approvals and what it said "always" to.
pub(crate) struct Approvals {
    session: Arc<Mutex<Session>>,
    /// What to do without asking, by [`key`].
    always: HashMap<String, bool>,
}

impl Approvals {
    pub(crate) fn new(session: Arc<Mutex<Session>>) -> Self {
        Approvals { session, always: HashMap::new() }
    }
}

/// What an "always" answer to `what` about `tool` with `params` covers.
fn key(tool: &str, params: &indexmap::IndexMap<String, String>, what: &str) -> String {
    let p = |name: &str| params.get(name).map_or("", String::as_str);
    if what.contains(crate::run::tools::OUTSIDE_THE_WORKSPACE) {
        // (The mark is the tools' own; a model's path holding it only narrows the key.)
        return format!("{tool}\n{what}");
    }
    match tool {
        "execute_command" => format!("execute_command\n{}", p("command")),
        "use_mcp_tool" => format!("use_mcp_tool\n{}\n{}", p("server_name"), p("tool_name")),
        "access_mcp_resource" => format!("access_mcp_resource\n{}", p("server_name")),
        _ => tool.to_string(),
    }
}

const OPTIONS: [(&str, &str, PermissionOptionKind); 4] = [
    ("allow_once", "Allow", PermissionOptionKind::AllowOnce),
    ("allow_always", "Always allow", PermissionOptionKind::AllowAlways),
    ("reject_once", "Reject", PermissionOptionKind::RejectOnce),
    ("reject_always", "Always reject", PermissionOptionKind::RejectAlways),
];

impl Asker for Approvals {
    fn approve(&mut self, call: Option<&str>, what: &str) -> Approval {
        let (wire, session_id, call) = {
            let s = self.session.lock().unwrap_or_else(|e| e.into_inner());
            if s.cancel.load(std::sync::atomic::Ordering::SeqCst) {
                return Approval::No(None); // the turn is over: nothing more runs
            }
            (s.wire.clone(), s.id.clone(), call.and_then(|c| s.open.get(c)).cloned())
        };
        // The protocol asks only about a tool call the client was shown.
        let Some(call) = call else { return Approval::No(None) };
        let key = key(&call.tool, &call.params, what);
        match self.always.get(&key) {
            Some(true) => return Approval::Yes,
            Some(false) => return Approval::No(None),
            None => {}
        }
        // The call by its id alone: an editor applies the request's fields to the call's card
        // (Zed does), and a title here would rename it. The card already shows the call: its
        // title, the paths it touches (an outside path whole), its diff or command.
        let fields = ToolCallUpdateFields::new();
        let options = OPTIONS.iter().map(|(id, name, kind)| PermissionOption::new(*id, *name, *kind)).collect();
        let request = RequestPermissionRequest::new(session_id, ToolCallUpdate::new(call.id.clone(), fields), options);
        let answer = wire
            .request("session/request_permission", request)
            .and_then(|v| serde_json::from_value::<RequestPermissionResponse>(v).ok());
        let chosen = match answer.map(|a| a.outcome) {
            Some(RequestPermissionOutcome::Selected(s)) => s.option_id.0.to_string(),
            _ => return Approval::No(None), // cancelled, or no answer
        };
        match chosen.as_str() {
            "allow_once" => Approval::Yes,
            "allow_always" => {
                self.always.insert(key, true);
                Approval::Yes
            }
            "reject_always" => {
                self.always.insert(key, false);
                Approval::No(None)
            }
            _ => Approval::No(None),
        }
    }

    /// An editor has no prompt for a question in the middle of a turn.
    fn answer(&mut self, _question: &str) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn always_covers_the_command_the_mcp_tool_or_the_outside_path_not_the_whole_tool() {
        let params = |kv: &[(&str, &str)]| kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let inside = key("write_to_file", &params(&[("path", "src/a.rs")]), "Write src/a.rs");
        assert_eq!(inside, key("write_to_file", &params(&[("path", "src/b.rs")]), "Write src/b.rs"));
        let outside = |p: &str| {
            let what = format!("Write {p}{}/home/u/{p}", crate::run::tools::OUTSIDE_THE_WORKSPACE);
            key("write_to_file", &params(&[("path", p)]), &what)
        };
        assert_ne!(outside("../.bashrc"), inside, "an inside approval never covers an outside path");
        assert_ne!(outside("../.bashrc"), outside("../.profile"));
        let mcp = |server: &str, tool: &str| {
            key("use_mcp_tool", &params(&[("server_name", server), ("tool_name", tool)]), "Use a tool")
        };
        assert_eq!(mcp("fs", "read"), mcp("fs", "read"));
        assert_ne!(mcp("fs", "read"), mcp("fs", "delete"));
        assert_ne!(mcp("fs", "read"), mcp("web", "read"));
        let cmd = |c: &str| key("execute_command", &params(&[("command", c)]), c);
        assert_ne!(cmd("ls"), cmd("rm -rf x"));
    }
}
