//! `--replay FILE`: a recorded session played back through the real loop and real tools.
//!
//! The recording is JSON lines. The first line describes the session; each further line is one
//! model reply, recorded either as the raw SSE body the provider sent or as plain reply text:
//!
//! ```text
//! {"type":"session","task":"…","files":{"hello.sh":"…"}}
//! {"type":"reply","provider":"anthropic","sse":"event: message_start\ndata: {…}\n\n…"}
//! {"type":"reply","provider":"openai-native","sse":"event: response.created\ndata: {…}\n\n…"}
//! {"type":"reply","text":"<list_files>\n<path>.</path>\n</list_files>"}
//! ```
//!
//! Replies are handed out in order, whatever the conversation says; SSE replies go through the
//! same decoder as a live stream: the provider's wire (`openai` Chat Completions, `anthropic`,
//! `ollama`), and for `openai-native` the Responses API's events.

use std::collections::VecDeque;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::run::llm::providers::{Decoder, Provider, Wire};
use crate::run::llm::{ApiError, Delta, Flow, Message, StopReason, Transport};
use crate::run::tools::paths::Workspace;

/// A loaded recording.
#[derive(Debug)]
pub(crate) struct Recording {
    /// The recorded task.
    pub task: Option<String>,
    /// Files to create in a fresh workspace: (relative path, content).
    pub files: Vec<(String, String)>,
    replies: VecDeque<Recorded>,
}

#[derive(Debug)]
enum Recorded {
    Text(String),
    Sse(Wire, String),
}

impl Recording {
    /// Reads and checks a recording.
    pub(crate) fn load(path: &Path) -> Result<Recording, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the replay file {}: {e}", path.display()))?;
        let mut rec = Recording { task: None, files: Vec::new(), replies: VecDeque::new() };
        for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let bad = |why: &str| format!("{}:{}: {why}", path.display(), n + 1);
            let v: Value = serde_json::from_str(line).map_err(|e| bad(&format!("not JSON: {e}")))?;
            match v.get("type").and_then(Value::as_str) {
                Some("session") => {
                    rec.task = v.get("task").and_then(Value::as_str).map(str::to_string);
                    if let Some(files) = v.get("files").and_then(Value::as_object) {
                        for (k, c) in files {
                            let c = c.as_str().ok_or_else(|| bad("file contents must be strings"))?;
                            rec.files.push((k.clone(), c.to_string()));
                        }
                    }
                }
                Some("reply") => {
                    let r = if let Some(t) = v.get("text").and_then(Value::as_str) {
                        Recorded::Text(t.to_string())
                    } else if let Some(s) = v.get("sse").and_then(Value::as_str) {
                        let p = v.get("provider").and_then(Value::as_str).unwrap_or("anthropic");
                        // The one provider name with two wires: a recording of OpenAI's own API
                        // holds the Responses API's events (Chat Completions replies are `openai`).
                        let wire = match p {
                            "openai-native" => Wire::Responses,
                            p => Wire::of_provider(Provider::parse(p).ok_or_else(|| bad("unknown provider"))?),
                        };
                        Recorded::Sse(wire, s.to_string())
                    } else {
                        return Err(bad("a reply needs \"text\" or \"sse\""));
                    };
                    rec.replies.push_back(r);
                }
                _ => return Err(bad("expected \"type\": \"session\" or \"reply\"")),
            }
        }
        if rec.replies.is_empty() {
            return Err(format!("{}: the recording has no replies", path.display()));
        }
        Ok(rec)
    }

    /// Writes the recording's files into `dir`, never overwriting an existing file. Every path
    /// is resolved like a tool's (`..`, symlinks) and must stay inside `dir`; if one does not,
    /// nothing is written.
    pub(crate) fn seed(&self, dir: &Path) -> std::io::Result<()> {
        let ws = Workspace::new(dir)?;
        let mut targets = Vec::new();
        for (rel, content) in &self.files {
            let r = ws.resolve(rel);
            if !r.inside {
                return Err(std::io::Error::other(format!(
                    "the recording's file {rel:?} resolves outside the workspace ({})",
                    r.abs.display()
                )));
            }
            targets.push((r.abs, content));
        }
        for (p, content) in targets {
            if std::fs::symlink_metadata(&p).is_ok() {
                continue;
            }
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(p, content)?;
        }
        Ok(())
    }

    /// Whether a recorded stream holds a native tool call (Anthropic's `tool_use` block, Chat
    /// Completions' or Ollama's `tool_calls`, the Responses API's `function_call` item): such a
    /// recording is read in the native dialect.
    pub(crate) fn has_native_calls(&self) -> bool {
        self.replies.iter().any(|r| match r {
            Recorded::Sse(_, body) => {
                ["\"tool_use\"", "\"tool_calls\"", "\"function_call\""].iter().any(|m| body.contains(m))
            }
            Recorded::Text(_) => false,
        })
    }

    /// Turns the recording into a transport that streams with `delay` between pieces.
    pub(crate) fn into_transport(self, delay: Duration) -> Replay {
        Replay { replies: self.replies, delay, served: 0 }
    }
}

/// The replay transport.
pub(crate) struct Replay {
    replies: VecDeque<Recorded>,
    delay: Duration,
    served: usize,
}

impl Transport for Replay {
    fn provider(&self) -> &str {
        "replay"
    }

    fn send(
        &mut self,
        _system: &str,
        _messages: &[Message],
        on: &mut dyn FnMut(Delta) -> Flow,
    ) -> Result<(), ApiError> {
        // After Ctrl-C no request is made (a live one's curl would not start).
        crate::run::ui::interrupt::hold_if_ending();
        let Some(reply) = self.replies.pop_front() else {
            return Err(ApiError::fatal(format!(
                "the recording has no reply left for request {} (it holds {})",
                self.served + 1,
                self.served
            )));
        };
        self.served += 1;
        let deltas = match reply {
            Recorded::Text(t) => {
                let mut v: Vec<Delta> = pieces(&t, 12).map(|p| Delta::Text(p.to_string())).collect();
                v.push(Delta::Stop(StopReason::EndTurn));
                v
            }
            Recorded::Sse(wire, body) => {
                let mut d = Decoder::of(wire);
                let mut v = Vec::new();
                for chunk in body.as_bytes().chunks(40) {
                    v.extend(d.push(chunk));
                }
                v.extend(d.finish());
                v
            }
        };
        for delta in deltas {
            if let Delta::Error(e) = delta {
                return Err(e);
            }
            let is_text = matches!(delta, Delta::Text(_));
            if on(delta).stops_now() {
                break;
            }
            if is_text && !self.delay.is_zero() {
                std::thread::sleep(self.delay);
            }
        }
        Ok(())
    }
}

/// Splits text into pieces of about `n` characters, on character boundaries.
fn pieces(s: &str, n: usize) -> impl Iterator<Item = &str> {
    let mut rest = s;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = rest.char_indices().nth(n).map_or(rest.len(), |(i, _)| i);
        let (a, b) = rest.split_at(cut);
        rest = b;
        Some(a)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Responses API stream saying "from responses".
    const RESPONSES: &str = "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"from responses\"}\n\nevent: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":2}}}\n\n";

    #[test]
    fn loads_text_and_sse_replies_and_serves_them_in_order() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.jsonl");
        let sse = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"from sse ✓\"}}\n\n";
        let lines = [
            serde_json::json!({"type":"session","task":"t","files":{"a/b.txt":"x"}}).to_string(),
            serde_json::json!({"type":"reply","text":"héllo wörld, a longer reply"}).to_string(),
            serde_json::json!({"type":"reply","provider":"anthropic","sse":sse}).to_string(),
            serde_json::json!({"type":"reply","provider":"openai-native","sse":RESPONSES}).to_string(),
        ];
        std::fs::write(&p, lines.join("\n")).unwrap();
        let rec = Recording::load(&p).unwrap();
        assert_eq!(rec.task.as_deref(), Some("t"));
        rec.seed(d.path()).unwrap();
        assert_eq!(std::fs::read_to_string(d.path().join("a/b.txt")).unwrap(), "x");
        let mut t = rec.into_transport(Duration::ZERO);
        let mut got = String::new();
        t.send("", &[], &mut |d| {
            if let Delta::Text(s) = d {
                got.push_str(&s);
            }
            Flow::Continue
        })
        .unwrap();
        assert_eq!(got, "héllo wörld, a longer reply");
        got.clear();
        t.send("", &[], &mut |d| {
            if let Delta::Text(s) = d {
                got.push_str(&s);
            }
            Flow::Continue
        })
        .unwrap();
        assert_eq!(got, "from sse ✓");
        // `openai-native`: the Responses API's events (they decoded to nothing as Chat Completions).
        got.clear();
        t.send("", &[], &mut |d| {
            if let Delta::Text(s) = d {
                got.push_str(&s);
            }
            Flow::Continue
        })
        .unwrap();
        assert_eq!(got, "from responses");
        let e = t.send("", &[], &mut |_| Flow::Continue).unwrap_err();
        assert!(e.message.contains("no reply left"));
    }

    #[test]
    fn seed_refuses_paths_outside_the_workspace() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("ws");
        std::fs::create_dir(&dir).unwrap();
        let abs = parent.path().join("abs.txt").display().to_string();
        for bad in ["../escape.txt", abs.as_str(), "sub/../../escape2.txt"] {
            let rec = Recording { task: None, files: vec![(bad.to_string(), "x".into())], replies: VecDeque::new() };
            let e = rec.seed(&dir).unwrap_err();
            assert!(e.to_string().contains("outside"), "{bad}: {e}");
        }
        let names: Vec<_> = std::fs::read_dir(parent.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["ws"]);
    }

    #[test]
    fn rejects_bad_lines_with_their_number() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r.jsonl");
        std::fs::write(&p, "{\"type\":\"reply\",\"text\":\"a\"}\nnot json\n").unwrap();
        assert!(Recording::load(&p).unwrap_err().contains("r.jsonl:2"));
    }
}
