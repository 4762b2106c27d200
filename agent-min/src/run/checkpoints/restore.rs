//! `agent-min checkpoints restore`: Cline's three choices — the workspace files as at a
//! checkpoint, the conversation cut back to it, or both — each undoable: the files are first
//! checkpointed as they are, and the conversation as it is is first copied aside.

use std::path::{Path, PathBuf};

use super::shadow::Shadow;
use crate::run::session::state::{now_secs, CheckpointRecord, Record, Snapshot, Store};

/// What a restore puts back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum What {
    /// The workspace's files (Cline's "Restore Files").
    Files,
    /// The conversation (Cline's "Restore Task Only").
    Task,
    /// Both (Cline's "Restore Files & Task"; the default).
    Both,
}

impl What {
    /// Includes the files.
    pub(crate) fn files(self) -> bool {
        self != What::Task
    }

    /// Includes the conversation.
    pub(crate) fn task(self) -> bool {
        self != What::Files
    }
}

/// What a restore did, for the person.
#[derive(Debug, Default)]
pub(crate) struct Done {
    /// The checkpoint of the files before the restore (restore it to undo).
    pub undo_files: Option<u32>,
    /// Where the conversation before the restore was copied.
    pub undo_task: Option<PathBuf>,
}

/// The conversation of `record` cut back to checkpoint `cp`: the messages it had then, and as
/// the pending message the one that answered its last reply (the tool's result), so `resume`
/// continues from there. The cuts of the context window made since the checkpoint are undone
/// first: the conversation is the one it had then, not a prefix of the cut one.
pub(crate) fn cut(record: &mut Record, cp: &CheckpointRecord) {
    let cuts_undone = record.cuts.len() > cp.cuts as usize;
    record.undo_cuts_since(cp.cuts as usize);
    let keep = (cp.messages as usize).min(record.messages.len());
    let following = record.messages.get(keep).map(|m| (m.content.clone(), m.parts.clone()));
    let ends_with_reply =
        record.messages.get(keep.wrapping_sub(1)).is_some_and(|m| m.role == crate::run::llm::Role::Assistant);
    // The images read with a result go with it.
    let pending = std::mem::take(&mut record.pending_parts);
    (record.pending, record.pending_parts) = match (ends_with_reply, following) {
        (true, Some((text, parts))) => (Some(text), parts),
        (true, None) => (record.pending.take(), pending),
        (false, _) => (None, Vec::new()),
    };
    // The last request's reported size was of the whole conversation: a resume would measure
    // the shorter one by it (and cut it for nothing). Unknown now, so estimated from the text.
    if keep < record.messages.len() || cuts_undone {
        record.last_request_tokens = 0;
    }
    record.messages.truncate(keep);
    record.turns = cp.turn;
    record.status = "running".into();
    record.outcome = None;
    // An earlier restore's undo checkpoint stays: it is the only way back to the files it
    // kept, and its number was printed as the way to undo (dropping it let the next restore
    // give its number to another state).
    record.checkpoints.retain(|c| c.number <= cp.number || c.tool == UNDO_TOOL);
}

/// How many messages the conversation of `record` has once cut back to checkpoint `cp`.
pub(crate) fn length_at(record: &Record, cp: &CheckpointRecord) -> usize {
    let mut r = record.clone();
    cut(&mut r, cp);
    r.messages.len()
}

/// The files changed after checkpoint `cp` of `record`, which the conversation cut back to it
/// does not know (Cline's `detectFilesEditedAfterMessage`): those each later checkpoint recorded,
/// in order, then those an earlier task restore found that no resume has named yet (also those
/// of an alert a resume sent that went unanswered, still in the pending message) — each once,
/// relative to `cp`'s workspace, or absolute when changed in another.
pub(crate) fn changed_after(record: &Record, cp: &CheckpointRecord) -> Vec<String> {
    let then = Path::new(cp.workspace(&record.meta.cwd));
    let seen_from = |ws: &str, f: &String| match Path::new(ws) == then {
        true => f.clone(),
        false => Path::new(ws).join(f).display().to_string(),
    };
    let later = record.checkpoints.iter().filter(|c| c.number > cp.number);
    let files = later.flat_map(|c| c.files.iter().map(move |f| seen_from(c.workspace(&record.meta.cwd), f)));
    let pending = record.file_context_warning.iter().map(|f| seen_from(&record.meta.cwd, f));
    let unsent = record.pending.as_deref().and_then(crate::run::prompt::file_context_warning_in);
    let unsent = unsent.map(crate::run::prompt::files_of_file_context_warning).unwrap_or_default();
    let mut seen = std::collections::HashSet::new();
    files.chain(pending).chain(unsent).filter(|f| seen.insert(f.clone())).collect()
}

/// The `tool` of the checkpoint a files restore takes first, to undo it.
const UNDO_TOOL: &str = "restore";

/// Restores `what` of checkpoint `cp` of `record` (whose workspace `shadow` tracks), saving the
/// task in `store`.
pub(crate) fn restore(
    store: &Store,
    shadow: &Shadow,
    mut record: Record,
    cp: &CheckpointRecord,
    what: What,
) -> Result<Done, String> {
    let _held = shadow.lock()?;
    let mut done = Done::default();
    // The conversation is copied aside before anything changes: a copy that fails leaves the
    // files and the task as they were, as "not restored" says.
    if what.task() {
        done.undo_task = Some(copy_aside(store, shadow.dir(), &record)?);
    }
    let mut before_files = None;
    // A restore that failed after git began writing the files: the task keeps its conversation
    // and gets the undo checkpoint, which the error names.
    let mut failed = None;
    let here = shadow.workspace().display().to_string();
    if what.files() {
        let message = format!(
            "checkpoint-{}-{} before restore to {}",
            super::place::cwd_hash(shadow.workspace()),
            record.meta.id,
            cp.number
        );
        let ours = record.checkpoints.iter().rev().find(|c| c.workspace(&record.meta.cwd) == here);
        let since = ours.map(|c| c.hash.as_str());
        let taken = shadow.snapshot(&message, since, false)?.ok_or("the current state could not be checkpointed")?;
        match shadow.restore(&cp.hash, &cp.left_out, &taken) {
            Ok(()) => {}
            Err(f) if !f.touched => return Err(f.why),
            Err(f) => failed = Some(f.why),
        }
        before_files = Some(taken);
    }
    if what.task() && failed.is_none() {
        // Only a task-only restore leaves files the conversation does not know (Cline's
        // `restoreType === "task"`): the next `resume` names them.
        if !what.files() {
            record.file_context_warning = changed_after(&record, cp);
        }
        cut(&mut record, cp);
        // The conversation goes back to where it worked then: `resume` continues there.
        let (was, then) = (record.meta.cwd.clone(), cp.workspace(&record.meta.cwd).to_string());
        if then != was {
            crate::run::session::state::moved_checkpoints(&mut record.checkpoints, &was, &then);
            record.meta.cwd = then;
        }
    }
    if let Some(t) = before_files {
        let number = record.checkpoints.iter().map(|c| c.number).max().unwrap_or(0) + 1;
        record.checkpoints.push(CheckpointRecord {
            number,
            turn: record.turns,
            hash: t.hash,
            time: now_secs(),
            tool: UNDO_TOOL.into(),
            files_changed: t.files.len() as u32,
            files: t.files.into_iter().take(50).collect(),
            left_out: t.left_out,
            messages: record.messages.len() as u32,
            cuts: record.cuts.len() as u32,
            workspace: (here != record.meta.cwd).then(|| here.clone()),
        });
        done.undo_files = Some(number);
    }
    let snap = Snapshot {
        meta: &record.meta,
        status: &record.status,
        outcome: record.outcome.as_deref(),
        turns: record.turns,
        messages: &record.messages,
        pending: record.pending.as_deref(),
        pending_parts: &record.pending_parts,
        totals: record.totals.clone(),
        last_request_tokens: record.last_request_tokens,
        checkpoints: &record.checkpoints,
        task_progress: record.task_progress.as_deref(),
        cuts: &record.cuts,
        file_context_warning: &record.file_context_warning,
    };
    let saved = store.save(&snap);
    if let (Some(why), Some(undo)) = (failed, done.undo_files) {
        let id = &record.meta.id;
        let kept = match saved {
            Ok(()) => format!("checkpoint {undo} holds them as they were: `agent-min checkpoints restore {id} {undo} --files` puts them back"),
            Err(e) => format!("they were checkpointed first ({undo}), but the task could not be saved ({e})"),
        };
        return Err(format!("the restore failed midway ({why}); the files may be partly restored: {kept}; the conversation was left as it was"));
    }
    saved.map_err(|e| {
        format!("the files were restored but the task could not be saved in {} ({e})", store.dir().display())
    })?;
    Ok(done)
}

/// Copies the saved task as it is to `DIR/conversations/ID-before-restore-UNIX.json` (with
/// `-2`, `-3`, … when a copy of that second exists: a second restore in the same second must
/// not overwrite the first one's copy, the only one of the conversation as it was).
fn copy_aside(store: &Store, dir: &Path, record: &Record) -> Result<PathBuf, String> {
    use std::os::unix::fs::OpenOptionsExt;
    let from = store.dir().join("tasks").join(format!("{}.json", record.meta.id));
    let to_dir = dir.join("conversations");
    let stamp = format!("{}-before-restore-{}", record.meta.id, now_secs());
    let failed = |to: &Path, e: std::io::Error| {
        format!("not restored: cannot keep a copy of the conversation in {} ({e})", to.display())
    };
    std::fs::create_dir_all(&to_dir).map_err(|e| failed(&to_dir, e))?;
    for n in 1..=1000 {
        let to = to_dir.join(if n == 1 { format!("{stamp}.json") } else { format!("{stamp}-{n}.json") });
        let mut out = match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&to) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(failed(&to, e)),
        };
        let copied = std::fs::File::open(&from).and_then(|mut f| std::io::copy(&mut f, &mut out));
        return copied.map(|_| to.clone()).map_err(|e| failed(&to, e));
    }
    Err(format!("not restored: 1000 copies of the conversation from this second are in {}", to_dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::llm::{Message, Role};
    use crate::run::session::state::Meta;

    fn msg(role: Role, content: &str) -> Message {
        Message { role, content: content.into(), parts: Vec::new() }
    }

    fn cp(number: u32, turn: u32, messages: u32) -> CheckpointRecord {
        CheckpointRecord {
            number,
            turn,
            hash: "h".into(),
            time: 0,
            tool: "t".into(),
            files_changed: 0,
            files: vec![],
            left_out: vec![],
            messages,
            cuts: 0,
            workspace: None,
        }
    }

    fn record() -> Record {
        Record {
            meta: Meta {
                id: "i".into(),
                task: "t".into(),
                created: 0,
                provider: "p".into(),
                model: "m".into(),
                base_url: String::new(),
                cwd: "/w".into(),
            },
            status: "completed".into(),
            outcome: Some("done".into()),
            updated: 0,
            turns: 3,
            messages: vec![
                msg(Role::User, "task"),
                msg(Role::Assistant, "write a"),
                msg(Role::User, "result 1"),
                msg(Role::Assistant, "write b"),
                msg(Role::User, "result 2"),
                msg(Role::Assistant, "done"),
            ],
            pending: None,
            pending_parts: Vec::new(),
            totals: Default::default(),
            last_request_tokens: 0,
            owner: None,
            task_progress: None,
            checkpoints: vec![cp(1, 1, 1), cp(2, 1, 2), cp(3, 2, 4)],
            cuts: Vec::new(),
            file_context_warning: Vec::new(),
        }
    }

    #[test]
    fn copies_made_aside_in_the_same_second_are_all_kept() {
        let (d, shadow) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let store = Store::open(d.path(), None).unwrap();
        let path = store.dir().join("tasks").join("i.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let copies: Vec<PathBuf> = (0..3)
            .map(|k| {
                std::fs::write(&path, format!("version {k}")).unwrap();
                copy_aside(&store, shadow.path(), &record()).unwrap()
            })
            .collect();
        for (k, copy) in copies.iter().enumerate() {
            assert_eq!(std::fs::read_to_string(copy).unwrap(), format!("version {k}"), "{copies:?}");
        }
    }

    #[test]
    fn cutting_to_a_tool_checkpoint_keeps_its_call_and_makes_its_result_pending() {
        let mut r = record();
        let target = r.checkpoints[1].clone();
        cut(&mut r, &target);
        assert_eq!(r.messages.len(), 2);
        assert_eq!(r.pending.as_deref(), Some("result 1"));
        assert_eq!((r.turns, r.status.as_str(), r.outcome.is_none()), (1, "running", true));
        assert_eq!(r.checkpoints.iter().map(|c| c.number).collect::<Vec<_>>(), vec![1, 2]);
    }

    /// The last request's size was of the whole conversation: after a cut back it is unknown
    /// (a resume measured the restored conversation by it, and halved it for nothing).
    #[test]
    fn cutting_back_forgets_the_last_requests_size() {
        let mut r = record();
        r.last_request_tokens = 158_000;
        let target = r.checkpoints[1].clone();
        cut(&mut r, &target);
        assert_eq!(r.last_request_tokens, 0);
        // Cut to where it already is: the size still holds.
        let mut r = record();
        r.last_request_tokens = 158_000;
        r.checkpoints.push(cp(4, 3, 6));
        let target = r.checkpoints[3].clone();
        cut(&mut r, &target);
        assert_eq!(r.last_request_tokens, 158_000);
    }

    #[test]
    fn the_files_changed_after_a_checkpoint_are_those_its_later_checkpoints_recorded() {
        let mut r = record();
        r.checkpoints[1].files = vec!["a.txt".into()];
        r.checkpoints[2].files = vec!["b.txt".into(), "a.txt".into()];
        r.checkpoints.push(CheckpointRecord { workspace: Some("/v".into()), files: vec!["c".into()], ..cp(4, 3, 6) });
        r.file_context_warning = vec!["d.txt".into(), "b.txt".into()];
        let at_1 = r.checkpoints[0].clone();
        assert_eq!(changed_after(&r, &at_1), ["a.txt", "b.txt", "/v/c", "d.txt"]);
        // A checkpoint of another workspace: the task's files are named absolutely.
        let at_4 = r.checkpoints[3].clone();
        assert_eq!(changed_after(&r, &at_4), ["/w/d.txt", "/w/b.txt"]);
        // An alert a resume sent that went unanswered, in the pending message: its files too.
        let alert = crate::run::prompt::file_context_warning(&["e.txt".into()], Path::new("/w"));
        r.pending = Some(format!("[TASK RESUMPTION] …\n\n{alert}"));
        assert_eq!(changed_after(&r, &at_4), ["/w/d.txt", "/w/b.txt", "/w/e.txt"]);
    }

    #[test]
    fn cutting_keeps_the_undo_checkpoints_of_earlier_restores() {
        let mut r = record();
        let mut undo = cp(4, 3, 6);
        undo.tool = UNDO_TOOL.into();
        r.checkpoints.push(undo);
        r.checkpoints.push(cp(5, 3, 6));
        let target = r.checkpoints[0].clone();
        cut(&mut r, &target);
        assert_eq!(r.checkpoints.iter().map(|c| c.number).collect::<Vec<_>>(), vec![1, 4]);
    }

    #[test]
    fn cutting_to_a_checkpoint_before_a_context_cut_undoes_the_cut_first() {
        use crate::run::session::state::Undo;
        let mut r = record();
        let full = r.messages.clone();
        // Half of the history cut: [task, notice, result 2, done].
        r.messages = vec![full[0].clone(), msg(Role::Assistant, "notice"), full[4].clone(), full[5].clone()];
        // What the cut kept aside: the first reply (now the notice) and the two it removed.
        let was = vec![(1, full[1].clone()), (2, full[2].clone()), (3, full[3].clone())];
        r.cuts = vec![Undo { len: 4, removed: 2, was }];
        r.checkpoints.push(CheckpointRecord { cuts: 1, ..cp(4, 3, 4) });
        // A checkpoint after the cut: the cut conversation.
        let mut after = r.clone();
        let target = after.checkpoints[3].clone();
        cut(&mut after, &target);
        assert_eq!(after.messages, r.messages);
        assert_eq!(after.cuts.len(), 1);
        // Checkpoint 3 was taken before it: the conversation then, not a prefix of the cut one.
        let target = r.checkpoints[2].clone();
        cut(&mut r, &target);
        assert_eq!(r.messages, full[..4]);
        assert_eq!(r.pending.as_deref(), Some("result 2"));
        assert!(r.cuts.is_empty());
    }

    #[test]
    fn cutting_to_a_start_checkpoint_resends_the_request_before_the_tool() {
        let mut r = record();
        let target = r.checkpoints[0].clone();
        cut(&mut r, &target);
        assert_eq!(r.messages.len(), 1);
        assert_eq!(r.messages[0].role, Role::User);
        assert_eq!(r.pending, None, "resume resends the last user message itself");
    }
}
