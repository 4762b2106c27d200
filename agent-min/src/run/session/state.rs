//! Saved tasks: every task has an id, and after every turn its conversation and state are
//! written atomically (temp file, fsync, rename, fsync of the directory) to
//! `STATE_DIR/tasks/ID.json`, so a run killed at any moment — even by SIGKILL in the middle of a
//! streamed reply — leaves the last completed turn on disk for `agent-min resume`.
//!
//! What is saved: the task text, provider, model, base URL (without any user:password part),
//! workspace, status, the conversation, the user message that was about to be sent
//! (`pending`), and the token/cost totals. Never the API key: it is not part of the state, and
//! as a second line of defence any occurrence of it (say, in a command's output that printed the
//! environment) is replaced by `[REDACTED]` before writing.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::run::llm::{Message, Role};

/// File format version.
const VERSION: u64 = 1;

/// The default state directory: `$XDG_STATE_HOME/agent-min`, else `~/.local/state/agent-min`.
pub fn default_dir() -> Option<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("XDG_STATE_HOME")
        .filter(|p| p.is_absolute())
        .map(|p| p.join("agent-min"))
        .or_else(|| var("HOME").map(|h| h.join(".local/state/agent-min")))
}

/// A new task id: UTC date and time, then 6 hex digits (sorts by creation time).
pub fn new_id() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let stamp = crate::run::clock::format_utc(now.as_secs());
    // "2025-01-02 03:04:05 UTC" → "20250102-030405"
    let digits: String = stamp.chars().filter(char::is_ascii_digit).collect();
    let mix = (now.subsec_nanos() as u64) ^ (u64::from(std::process::id()) << 20);
    format!("{}-{}-{:06x}", &digits[..8], &digits[8..14], mix & 0xff_ffff)
}

/// Seconds since the Unix epoch.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// `https://user:pw@host/…` → `https://host/…`.
pub fn strip_userinfo(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let host_end = rest.find('/').unwrap_or(rest.len());
            match rest[..host_end].rfind('@') {
                Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
                None => url.to_string(),
            }
        }
        None => url.to_string(),
    }
}

/// What identifies a task, fixed at its start.
#[derive(Debug, Clone, PartialEq)]
pub struct Meta {
    /// The task id.
    pub id: String,
    /// The task as given.
    pub task: String,
    /// When it was created (Unix seconds).
    pub created: u64,
    /// Provider name.
    pub provider: String,
    /// Model name.
    pub model: String,
    /// Base URL (no credentials).
    pub base_url: String,
    /// Absolute workspace root.
    pub cwd: String,
}

/// A saved task, as read back.
#[derive(Debug, Clone)]
pub struct Record {
    /// Identity.
    pub meta: Meta,
    /// `running`, `completed` or `failed`.
    pub status: String,
    /// The result (completed) or the reason (failed).
    pub outcome: Option<String>,
    /// Last save (Unix seconds).
    pub updated: u64,
    /// Turns (requests) so far.
    pub turns: u32,
    /// The conversation: only completed turns.
    pub messages: Vec<Message>,
    /// The user message that was about to be sent (or was being answered) when last saved.
    pub pending: Option<String>,
    /// Token and cost totals (see `Accounting::totals_json`).
    pub totals: Value,
    /// The process that saved it: pid and start time (Linux clock ticks since boot).
    pub owner: Option<(u32, u64)>,
}

impl Record {
    /// The status to show: a task still `running` whose process is gone (Ctrl-C, SIGTERM,
    /// `kill -9`, a crash) is `interrupted`.
    pub fn shown_status(&self) -> &str {
        match self.owner {
            Some((pid, started)) if self.status == "running" && process_start(pid) != Some(started) => "interrupted",
            _ => &self.status,
        }
    }

    /// Requests the model answered (the token summary's count), over all runs of the task;
    /// a request that failed or was cut off by an interrupt is not one.
    pub fn requests(&self) -> u64 {
        self.totals.get("requests").and_then(Value::as_u64).unwrap_or(0)
    }
}

/// The start time of process `pid` (field 22 of `/proc/PID/stat`), which tells a live process
/// from a later one given the same pid.
pub fn process_start(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may contain anything: count after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// What to save after a turn.
pub struct Snapshot<'a> {
    /// Identity.
    pub meta: &'a Meta,
    /// `running`, `completed` or `failed`.
    pub status: &'a str,
    /// Result or reason.
    pub outcome: Option<&'a str>,
    /// Turns so far.
    pub turns: u32,
    /// The conversation.
    pub messages: &'a [Message],
    /// The next user message, not yet answered.
    pub pending: Option<&'a str>,
    /// Totals.
    pub totals: Value,
}

/// A state directory.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
    secret: Option<String>,
}

impl Store {
    /// Opens (creating, mode 0700) `dir`; `secret` is redacted from everything written.
    pub fn open(dir: &Path, secret: Option<String>) -> Result<Store, String> {
        let tasks = dir.join("tasks");
        fs::DirBuilder::new().recursive(true).mode(0o700).create(&tasks).map_err(|e| {
            format!(
                "cannot create the state directory {} ({e}); choose another with --state-dir DIR, or pass --no-save",
                tasks.display()
            )
        })?;
        Ok(Store { dir: dir.to_path_buf(), secret: secret.filter(|s| s.len() >= 8) })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join("tasks").join(format!("{id}.json"))
    }

    /// Writes a snapshot atomically: temp file (0600) in the same directory, fsync, rename,
    /// fsync of the directory.
    pub fn save(&self, s: &Snapshot<'_>) -> std::io::Result<()> {
        let messages: Vec<Value> = s
            .messages
            .iter()
            .map(|m| json!({"role": if m.role == Role::User { "user" } else { "assistant" }, "content": m.content}))
            .collect();
        let m = s.meta;
        let v = json!({
            "version": VERSION,
            "id": m.id,
            "task": m.task,
            "created": m.created,
            "updated": now_secs(),
            "status": s.status,
            "outcome": s.outcome,
            "provider": m.provider,
            "model": m.model,
            "base_url": strip_userinfo(&m.base_url),
            "cwd": m.cwd,
            "turns": s.turns,
            "totals": s.totals,
            "pending": s.pending,
            "pid": std::process::id(),
            "started": process_start(std::process::id()),
            "messages": messages,
        });
        let mut text = serde_json::to_string_pretty(&v).map_err(std::io::Error::other)?;
        if let Some(k) = &self.secret {
            if text.contains(k.as_str()) {
                text = text.replace(k.as_str(), "[REDACTED]");
            }
        }
        let path = self.path(&m.id);
        let tmp = self.dir.join("tasks").join(format!(".{}.json.tmp.{}", m.id, std::process::id()));
        let _guard = crate::run::ui::interrupt::track_file(tmp.clone());
        let result = (|| {
            let mut f = OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            fs::rename(&tmp, &path)?;
            fs::File::open(self.dir.join("tasks"))?.sync_all()
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    }

    /// Loads a task by id (or a unique prefix of one).
    pub fn load(&self, id: &str) -> Result<Record, String> {
        let exact = self.path(id);
        if exact.exists() {
            return read(&exact);
        }
        let matches: Vec<Record> = self.list()?.into_iter().filter(|r| r.meta.id.starts_with(id)).collect();
        match matches.len() {
            1 => Ok(matches.into_iter().next().expect("one")),
            0 => Err(format!("no saved task {id:?} in {}; list them with `agent-min history`", self.dir.display())),
            n => Err(format!("{n} saved tasks start with {id:?}; give more of the id (see `agent-min history`)")),
        }
    }

    /// The most recently saved task.
    pub fn last(&self) -> Result<Record, String> {
        self.list()?
            .into_iter()
            .max_by(|a, b| (a.updated, &a.meta.id).cmp(&(b.updated, &b.meta.id)))
            .ok_or_else(|| format!("no saved tasks in {}; start one with `agent-min run`", self.dir.display()))
    }

    /// Every saved task, oldest first (unreadable files are skipped).
    pub fn list(&self) -> Result<Vec<Record>, String> {
        let dir = self.dir.join("tasks");
        let entries = fs::read_dir(&dir).map_err(|e| format!("cannot read {} ({e})", dir.display()))?;
        let mut v: Vec<Record> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.extension().is_some_and(|x| x == "json")
                    && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            .filter_map(|p| read(&p).ok())
            .collect();
        v.sort_by(|a, b| (a.meta.created, &a.meta.id).cmp(&(b.meta.created, &b.meta.id)));
        Ok(v)
    }
}

fn read(path: &Path) -> Result<Record, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("cannot read {} ({e})", path.display()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{} is not a saved task ({e})", path.display()))?;
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    if n("version") != VERSION || s("id").is_empty() {
        return Err(format!("{} is not a saved task of this version", path.display()));
    }
    let messages = v
        .get("messages")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|m| Message {
                    role: if m["role"] == "assistant" { Role::Assistant } else { Role::User },
                    content: m["content"].as_str().unwrap_or_default().to_string(),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Record {
        meta: Meta {
            id: s("id"),
            task: s("task"),
            created: n("created"),
            provider: s("provider"),
            model: s("model"),
            base_url: s("base_url"),
            cwd: s("cwd"),
        },
        status: s("status"),
        outcome: v.get("outcome").and_then(Value::as_str).map(str::to_string),
        updated: n("updated"),
        turns: n("turns") as u32,
        messages,
        pending: v.get("pending").and_then(Value::as_str).map(str::to_string),
        totals: v.get("totals").cloned().unwrap_or(Value::Null),
        owner: v
            .get("pid")
            .and_then(Value::as_u64)
            .zip(v.get("started").and_then(Value::as_u64))
            .map(|(p, t)| (p as u32, t)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(id: &str) -> Meta {
        Meta {
            id: id.into(),
            task: "t".into(),
            created: 1,
            provider: "anthropic".into(),
            model: "m".into(),
            base_url: "https://user:pw@example.test/v1".into(),
            cwd: "/w".into(),
        }
    }

    #[test]
    fn save_load_round_trip_redacts_the_key_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(d.path(), Some("sk-SECRET-123456".into())).unwrap();
        let msgs = vec![
            Message { role: Role::User, content: "<task>t</task>".into() },
            Message { role: Role::Assistant, content: "env shows sk-SECRET-123456".into() },
        ];
        let m = meta("20250101-000000-abcdef");
        let snap = Snapshot {
            meta: &m,
            status: "running",
            outcome: None,
            turns: 1,
            messages: &msgs,
            pending: Some("next"),
            totals: json!({"requests": 1}),
        };
        store.save(&snap).unwrap();
        let raw = fs::read_to_string(store.path(&m.id)).unwrap();
        assert!(!raw.contains("sk-SECRET") && raw.contains("[REDACTED]"));
        assert!(!raw.contains("user:pw"));
        let r = store.load("20250101").unwrap();
        assert_eq!(r.messages.len(), 2);
        assert_eq!(r.messages[1].role, Role::Assistant);
        assert_eq!(r.pending.as_deref(), Some("next"));
        assert_eq!(r.meta.base_url, "https://example.test/v1");
        assert_eq!(fs::read_dir(d.path().join("tasks")).unwrap().count(), 1);
        assert_eq!(store.last().unwrap().meta.id, m.id);
        assert!(store.load("nope").unwrap_err().contains("agent-min history"));
    }

    #[test]
    fn a_running_task_whose_process_is_gone_shows_as_interrupted() {
        let d = tempfile::tempdir().unwrap();
        let store = Store::open(d.path(), None).unwrap();
        let m = meta("20250101-000000-aaaaaa");
        let snap = Snapshot {
            meta: &m,
            status: "running",
            outcome: None,
            turns: 3,
            messages: &[],
            pending: None,
            totals: json!({"requests": 2}),
        };
        store.save(&snap).unwrap();
        let mut r = store.load(&m.id).unwrap();
        // Saved by this live process: running.
        assert_eq!(r.owner.map(|o| o.0), Some(std::process::id()));
        assert_eq!(r.shown_status(), "running");
        assert_eq!(r.requests(), 2);
        // The same pid started at another time is another process: the saver is gone.
        r.owner = r.owner.map(|(p, t)| (p, t + 1));
        assert_eq!(r.shown_status(), "interrupted");
        r.status = "failed".into();
        assert_eq!(r.shown_status(), "failed");
    }

    #[test]
    fn ids_are_dated_and_distinct() {
        let a = new_id();
        assert_eq!(a.len(), "20250101-000000-abcdef".len());
        assert!(a.starts_with("20"));
    }

    #[test]
    fn userinfo_is_stripped() {
        assert_eq!(strip_userinfo("http://a:b@h:1/x@y"), "http://h:1/x@y");
        assert_eq!(strip_userinfo("http://h/v1"), "http://h/v1");
    }
}
