//! The editor's file system, when the client advertises it (`clientCapabilities.fs`): the file
//! tools read a text file's contents through `fs/read_text_file` (the editor's buffer, unsaved
//! changes included) and write through `fs/write_text_file` (the edit lands in the buffer and
//! the editor saves it). Everything else stays the agent's: which paths may be touched (the
//! workspace, `.clineignore`, the protected directories), approvals, the checks that a path is
//! a regular file, documents, deletions.

use std::path::Path;
use std::sync::{Arc, Mutex};

use agent_client_protocol_schema::v1::{
    FileSystemCapabilities, ReadTextFileRequest, ReadTextFileResponse, WriteTextFileRequest,
};

use super::updates::Session;
use crate::run::ui::term::Buffers;

/// The session's way to the editor's buffers, for what the client said it can do.
pub(crate) struct EditorBuffers {
    session: Arc<Mutex<Session>>,
    read: bool,
    write: bool,
}

impl EditorBuffers {
    /// `None` when the client offers neither reading nor writing.
    pub(crate) fn offered(session: Arc<Mutex<Session>>, fs: &FileSystemCapabilities) -> Option<Self> {
        (fs.read_text_file || fs.write_text_file).then(|| EditorBuffers {
            session,
            read: fs.read_text_file,
            write: fs.write_text_file,
        })
    }

    fn wire(&self) -> std::sync::Arc<super::wire::Wire> {
        self.session.lock().unwrap_or_else(|e| e.into_inner()).wire.clone()
    }

    fn session_id(&self) -> String {
        self.session.lock().unwrap_or_else(|e| e.into_inner()).id.clone()
    }

    /// `abs` as the editor names it (under the `cwd` it gave: its buffers are by that path).
    fn for_editor(&self, abs: &Path) -> std::path::PathBuf {
        self.session.lock().unwrap_or_else(|e| e.into_inner()).for_editor(abs)
    }
}

impl Buffers for EditorBuffers {
    fn read(&mut self, abs: &Path) -> Option<Result<String, String>> {
        if !self.read {
            return None;
        }
        let request = ReadTextFileRequest::new(self.session_id(), self.for_editor(abs));
        Some(self.wire().call("fs/read_text_file", request).and_then(|v| {
            serde_json::from_value::<ReadTextFileResponse>(v)
                .map(|r| r.content)
                .map_err(|e| format!("the editor's answer is not a ReadTextFileResponse: {e}"))
        }))
    }

    fn write(&mut self, abs: &Path, text: &str) -> Option<Result<(), String>> {
        if !self.write {
            return None;
        }
        let request = WriteTextFileRequest::new(self.session_id(), self.for_editor(abs), text.to_string());
        // The file's text as it is to be, keys it holds included (see `call_unmasked`).
        Some(self.wire().call_unmasked("fs/write_text_file", request).map(|_| ()))
    }
}
