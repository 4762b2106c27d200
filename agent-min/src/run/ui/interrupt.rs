//! Ctrl-C and SIGTERM: kill what is running, remove what is half-written, say the final
//! words (the last `--json` event), exit 130 (SIGINT) or 143 (SIGTERM).
//!
//! A watcher thread waits for SIGINT/SIGTERM. Everything that must not outlive an interrupt is
//! registered here while it exists: the `curl` child, the process group of a running command, a
//! temporary file (the temp half of an atomic write). On the
//! signal the watcher kills and removes them all, prints one line and exits with 130 (143 for
//! SIGTERM). The main
//! thread never has to notice: blocking reads and waits simply end with the process.
#![allow(unsafe_code)] // kill(2) and the child set-up that ties a child's life to the agent's

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

static LIVE: Mutex<Live> = Mutex::new(Live {
    pids: Vec::new(),
    groups: Vec::new(),
    servers: Vec::new(),
    files: Vec::new(),
    renames: Vec::new(),
    turn: Vec::new(),
    at_exit: Vec::new(),
});

struct Live {
    pids: Vec<i32>,
    groups: Vec<i32>,
    /// The process groups of the MCP servers: they outlive turns (and an editor's prompts), so
    /// the `--timeout` watchdog leaves them; an interrupt or the process's end stops them.
    servers: Vec<i32>,
    /// What a cancelled turn stops (a curl request, a command's group), as `kill` targets.
    turn: Vec<i32>,
    files: Vec<PathBuf>,
    /// Put back on an interrupt.
    renames: Vec<Rename>,
    /// Removed (a directory and all it holds) at an interrupt's exit, after the final words
    /// (a replay's temporary workspace: the `TaskCancel` hook still runs in it).
    at_exit: Vec<PathBuf>,
}

/// Starts the watcher thread, and makes a panic clean up as an interrupt does. Call once,
/// early in `main`.
pub(crate) fn install() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        after_panic();
    }));
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return; // no handler: the default action (terminate) still leaves no half-written file
    };
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
            kill_everything();
            // The shell's conventions: 128 + the signal's number.
            let (how, ending) = if sig == SIGTERM {
                ("terminated (SIGTERM)", Ending::Terminated)
            } else {
                ("interrupted (Ctrl-C)", Ending::Interrupted)
            };
            eprintln!("\nagent-min: {how}; stopped curl and any running command.");
            if let Some(words) = take_last_words() {
                let last = ending.clone();
                std::thread::spawn(move || {
                    LAST_WORDS_THREAD.with(|t| t.set(true));
                    words();
                    finish(last);
                });
                // A second signal does not wait for them.
                let _ = signals.forever().next();
                kill_children();
            }
            finish(ending);
        }
    });
}

/// How the process is ending when its final words are said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Ctrl-C (SIGINT): exit 130.
    Interrupted,
    /// SIGTERM: exit 143.
    Terminated,
    /// The `--timeout` watchdog ended a loop that did not respond: exit 1, with this reason.
    Failed(String),
}

impl Ending {
    /// The exit code of this ending.
    pub(crate) fn code(&self) -> i32 {
        match self {
            Ending::Interrupted => 130,
            Ending::Terminated => 143,
            Ending::Failed(_) => 1,
        }
    }
}

/// What is said when the process ends from another thread (the final `completion` event, the
/// resume command): registered by the task, said once.
type FinalWords = Box<dyn FnOnce(&Ending) + Send>;
static FINAL_WORDS: Mutex<Option<FinalWords>> = Mutex::new(None);

/// Registers what is said when a signal or the watchdog ends the process, after everything
/// was stopped and the `TaskCancel` hook ran: the `--json` stream's last event, the resume
/// command. Replaces what was registered before.
pub(crate) fn on_exit(words: FinalWords) {
    *FINAL_WORDS.lock().unwrap_or_else(|e| e.into_inner()) = Some(words);
}

/// Forgets the final words (the task ended by itself and said its own).
pub(crate) fn clear_on_exit() {
    FINAL_WORDS.lock().unwrap_or_else(|e| e.into_inner()).take();
}

/// Set by [`kill_turn`] until the turn ends: what registers meanwhile is killed at once
/// (a command that was about to start when the turn was cancelled).
static TURN_CANCELLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Stops the current turn (the ACP client's `session/cancel`), without exiting: curl's request
/// and a running command's group are killed, as Ctrl-C kills them — and so is any that starts
/// before the turn ends; MCP servers and hooks live on.
pub(crate) fn kill_turn() {
    TURN_CANCELLED.store(true, std::sync::atomic::Ordering::SeqCst);
    WORK_STOPPED.store(true, std::sync::atomic::Ordering::SeqCst);
    for &target in &lock().turn {
        send_signal(target, libc::SIGKILL);
    }
}

/// Set with [`kill_turn`] and [`kill_children`] (a cancel, the `--timeout` watchdog), until the
/// turn ends or the next begins: long work in the agent's own process (a search through a huge file) stops
/// where it is, as the killed children do.
static WORK_STOPPED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether work in this process should stop now ([`WORK_STOPPED`]).
pub(crate) fn work_stopped() -> bool {
    WORK_STOPPED.load(std::sync::atomic::Ordering::SeqCst)
}

/// Whether [`kill_turn`] stopped the current turn (until it ends).
pub(crate) fn turn_cancelled() -> bool {
    TURN_CANCELLED.load(std::sync::atomic::Ordering::SeqCst)
}

/// A new turn begins: [`kill_turn`] no longer applies.
pub(crate) fn turn_begins() {
    TURN_CANCELLED.store(false, std::sync::atomic::Ordering::SeqCst);
    WORK_STOPPED.store(false, std::sync::atomic::Ordering::SeqCst);
}

/// The turn has ended: [`kill_turn`] no longer applies either — what starts before the next
/// turn (the HTTP MCP servers of a new session, whose curl is no turn's) must not be killed.
pub(crate) fn turn_ends() {
    turn_begins();
}

/// Marks a registered curl process (`pid`) or command group (`-pgid`) as part of the turn:
/// [`kill_turn`] stops it (at once, if the turn was already cancelled). Unmarked with the guard
/// that registered it.
pub(crate) fn part_of_turn(target: i32) {
    lock().turn.push(target);
    if TURN_CANCELLED.load(std::sync::atomic::Ordering::SeqCst) {
        send_signal(target, libc::SIGKILL);
    }
}

fn finish(ending: Ending) -> ! {
    let words = FINAL_WORDS.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(words) = words {
        words(&ending);
    }
    remove_at_exit(&lock());
    std::process::exit(ending.code());
}

fn remove_at_exit(live: &Live) {
    for dir in &live.at_exit {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Kills curl and any running command or hook, without exiting (the `--timeout` watchdog): the
/// blocked reads and waits of the main thread then end, and the loop stops at its next check
/// (an MCP request sees [`work_stopped`]). The MCP servers too, unless [`keep_servers`] was
/// called: an editor's sessions keep theirs for the next prompt.
pub(crate) fn kill_children() {
    WORK_STOPPED.store(true, std::sync::atomic::Ordering::SeqCst);
    let live = lock();
    kill_registered(&live);
    if !SERVERS_KEPT.load(std::sync::atomic::Ordering::SeqCst) {
        kill_servers(&live);
    }
}

/// Set by [`keep_servers`].
static SERVERS_KEPT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The MCP servers outlive a prompt the `--timeout` watchdog stops (`agent-min acp`: a session
/// keeps its servers for its next prompt). A run ends at its time limit, and its servers with it.
pub(crate) fn keep_servers() {
    SERVERS_KEPT.store(true, std::sync::atomic::Ordering::SeqCst);
}

fn kill_registered(live: &Live) {
    for &pid in &live.pids {
        send_signal(pid, libc::SIGKILL);
    }
    for &pgid in &live.groups {
        send_signal(-pgid, libc::SIGKILL);
    }
}

/// Kills curl and any running command, removes temporary files, prints `message` and exits
/// with 1 — for a main thread that cannot be reached any other way (the `--timeout`
/// watchdog when the loop is blocked).
pub(crate) fn exit_now(message: &str) -> ! {
    INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
    kill_everything();
    eprintln!("\nagent-min: {message}");
    if let Some(words) = take_last_words() {
        LAST_WORDS_THREAD.with(|t| t.set(true));
        words();
    }
    finish(Ending::Failed(message.to_string()))
}

/// Set once a signal (or the unresponsive-loop watchdog) is ending the run.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// What runs after an interrupt has stopped everything and before the exit.
type LastWords = Box<dyn FnOnce() + Send>;
static LAST_WORDS: Mutex<Option<LastWords>> = Mutex::new(None);

thread_local! {
    /// True on the thread running the last words: it may still start processes.
    static LAST_WORDS_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Registers what runs after Ctrl-C, SIGTERM or the watchdog stopped everything, before the
/// exit (the `TaskCancel` hook). Meanwhile the main thread is stopped at its next attempt to
/// start a process or write a file; a second signal exits at once.
pub(crate) fn on_interrupt(words: LastWords) {
    *LAST_WORDS.lock().unwrap_or_else(|e| e.into_inner()) = Some(words);
}

fn take_last_words() -> Option<LastWords> {
    LAST_WORDS.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// After an interrupt, a thread about to do more work that starts no process (a replay's next
/// request) waits here for the exit, as one starting a process would: the loop must not go on
/// to a request, nor end the task as failed, while the final words are said.
pub(crate) fn hold_if_ending() {
    if INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) && !LAST_WORDS_THREAD.with(|t| t.get()) {
        loop {
            std::thread::park();
        }
    }
}

/// After an interrupt, any thread but the last words' one is stopped here: what it just
/// registered is killed or removed, and it waits for the exit.
fn freeze_if_interrupted(item: &Item) {
    if !INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) || LAST_WORDS_THREAD.with(|t| t.get()) {
        return;
    }
    match item {
        Item::Pid(p) => send_signal(*p, libc::SIGKILL),
        Item::Group(g) | Item::Server(g) => send_signal(-*g, libc::SIGKILL),
        Item::File(f) => {
            let _ = std::fs::remove_file(f);
        }
        Item::Rename(id) => {
            if let Some(r) = lock().renames.iter().find(|r| r.id == *id) {
                r.undo();
            }
        }
        Item::AtExit(_) => {} // the exit removes it
    }
    loop {
        std::thread::park();
    }
}

fn kill_everything() {
    WORK_STOPPED.store(true, std::sync::atomic::Ordering::SeqCst);
    let live = lock();
    kill_registered(&live);
    kill_servers(&live);
    remove_half_written(&live);
}

fn kill_servers(live: &Live) {
    for &pgid in &live.servers {
        send_signal(-pgid, libc::SIGKILL);
    }
}

/// Removes the registered temporary files and puts back what was renamed.
fn remove_half_written(live: &Live) {
    for f in &live.files {
        if std::fs::remove_file(f).is_err() {
            let _ = std::fs::remove_dir_all(f); // a private temporary directory
        }
    }
    for r in &live.renames {
        r.undo();
    }
}

/// What a panic leaves behind is undone as after Ctrl-C: the release build aborts on a panic
/// (no unwinding, so no `Drop` runs), and a curl request, a command's group, a half-written
/// file or a renamed nested repository would outlive it. Skipped when the panicking thread
/// holds the registry itself (the watchdogs and the nested repositories' journal still apply).
fn after_panic() {
    if let Ok(live) = LIVE.try_lock() {
        kill_registered(&live);
        kill_servers(&live);
        remove_half_written(&live);
        remove_at_exit(&live);
    }
}

/// Sends `sig` to a process (`target > 0`) or a whole process group (`target < 0`).
pub(crate) fn send_signal(target: i32, sig: i32) {
    if target == 0 || target == -1 {
        return; // never signal our own group or every process
    }
    // SAFETY: kill(2) has no memory-safety preconditions; it only takes integers.
    unsafe {
        libc::kill(target, sig);
    }
}

/// Whether process group `pgid` still has a process (a zombie not yet reaped counts).
pub(crate) fn group_alive(pgid: i32) -> bool {
    if pgid <= 1 {
        return false;
    }
    // SAFETY: kill(2) with signal 0 sends nothing and only checks that the group exists; it
    // takes integers alone.
    unsafe { libc::kill(-pgid, 0) == 0 }
}

/// What a [`Guard`] unregisters when dropped.
enum Item {
    Pid(i32),
    Group(i32),
    Server(i32),
    File(PathBuf),
    Rename(u64),
    AtExit(PathBuf),
}

/// A temporary rename inside one folder, held open: `renamed` is renamed back to `original`
/// there, wherever the folder's path now leads.
struct Rename {
    id: u64,
    dir: Arc<OwnedFd>,
    renamed: OsString,
    original: OsString,
}

impl Rename {
    fn undo(&self) {
        let _ = rustix::fs::renameat(&*self.dir, &self.renamed, &*self.dir, &self.original);
    }
}

/// Keeps a process, process group or file registered until dropped.
pub(crate) struct Guard(Item);

/// Registers a child process to be killed on Ctrl-C.
pub(crate) fn track_pid(pid: u32) -> Guard {
    let pid = pid as i32;
    lock().pids.push(pid);
    freeze_if_interrupted(&Item::Pid(pid));
    Guard(Item::Pid(pid))
}

/// Registers a process group (a child in a group or session of its own) to be killed on Ctrl-C.
pub(crate) fn track_group(pgid: u32) -> Guard {
    let pgid = pgid as i32;
    lock().groups.push(pgid);
    freeze_if_interrupted(&Item::Group(pgid));
    Guard(Item::Group(pgid))
}

/// Registers an MCP server's process group, to be killed on Ctrl-C and at the process's end
/// (by the `--timeout` watchdog only when not kept: [`keep_servers`]).
pub(crate) fn track_server(pgid: u32) -> Guard {
    let pgid = pgid as i32;
    lock().servers.push(pgid);
    freeze_if_interrupted(&Item::Server(pgid));
    Guard(Item::Server(pgid))
}

/// Registers a temporary file to be removed on Ctrl-C.
pub(crate) fn track_file(path: PathBuf) -> Guard {
    lock().files.push(path.clone());
    freeze_if_interrupted(&Item::File(path.clone()));
    Guard(Item::File(path))
}

/// Registers a directory to be removed, with all it holds, when an interrupt (or the
/// watchdog) ends the process — after the final words, which may still run in it.
pub(crate) fn track_until_exit(dir: PathBuf) -> Guard {
    lock().at_exit.push(dir.clone());
    freeze_if_interrupted(&Item::AtExit(dir.clone()));
    Guard(Item::AtExit(dir))
}

/// Registers a temporary rename in the open folder `dir` (a nested repository disabled during a
/// checkpoint) to be undone on Ctrl-C: `renamed` is renamed back to `original` there.
pub(crate) fn track_rename(dir: Arc<OwnedFd>, renamed: OsString, original: OsString) -> Guard {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    lock().renames.push(Rename { id, dir, renamed, original });
    freeze_if_interrupted(&Item::Rename(id));
    Guard(Item::Rename(id))
}

fn lock() -> std::sync::MutexGuard<'static, Live> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

impl Drop for Guard {
    fn drop(&mut self) {
        let mut live = lock();
        match &self.0 {
            Item::Pid(p) => {
                live.pids.retain(|x| x != p);
                live.turn.retain(|x| x != p);
            }
            Item::Group(g) => {
                live.groups.retain(|x| x != g);
                live.turn.retain(|x| *x != -g);
            }
            Item::Server(g) => live.servers.retain(|x| x != g),
            Item::File(f) => live.files.retain(|x| x != f),
            Item::Rename(id) => live.renames.retain(|r| r.id != *id),
            Item::AtExit(d) => live.at_exit.retain(|x| x != d),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_panic_leaves_half_written_is_removed_or_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let (tmp, renamed, original) =
            (dir.path().join("f.tmp"), dir.path().join(".git_disabled"), dir.path().join(".git"));
        std::fs::write(&tmp, "half").unwrap();
        std::fs::create_dir(&renamed).unwrap();
        // A registry of its own: the global one belongs to the other tests running meanwhile.
        let live = Live {
            pids: Vec::new(),
            groups: Vec::new(),
            servers: Vec::new(),
            turn: Vec::new(),
            at_exit: Vec::new(),
            files: vec![tmp.clone()],
            renames: vec![Rename {
                id: 0,
                dir: Arc::new(
                    rustix::fs::open(dir.path(), rustix::fs::OFlags::DIRECTORY, rustix::fs::Mode::empty()).unwrap(),
                ),
                renamed: ".git_disabled".into(),
                original: ".git".into(),
            }],
        };
        remove_half_written(&live);
        assert!(!tmp.exists() && !renamed.exists() && original.is_dir());
    }
}
