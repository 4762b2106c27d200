//! `execute_command(command, requires_approval, timeout?)`: `sh -c` in the workspace, in its own
//! process group, under the sandbox policy ([`crate::run::sandbox`]: its environment, Landlock,
//! the network), stdout and stderr captured together by lines as Cline keeps them, in bounded
//! memory ([`super::output`]: the whole output in a log file past 1000 lines or 512 KB), a
//! timeout that kills the whole group, and the exit code reported — and a process that escaped
//! the group reported as still running.

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::output::Output;
use super::{ask, tool_error, Call, Ctx, Outcome};
use crate::run::clock;
use crate::run::sandbox::{self, Policy};
use crate::run::session::events::By;
use crate::run::spawn;
use crate::run::ui::interrupt;

/// How long output is still read after the shell exits.
const DRAIN_LIMIT: Duration = Duration::from_secs(2);

/// How long a command stopped at its time limit has to clean up after SIGTERM (Cline's
/// `gracefulTimeoutMs`).
const TERM_GRACE: Duration = Duration::from_secs(2);

/// Chunks (of at most 8 KiB) queued between the pipe reader and the agent.
const QUEUE_CHUNKS: usize = 16;

pub(super) fn run(call: &Call, ctx: &mut Ctx<'_>) -> Outcome {
    let command = gemini_command_fixes(call.param("command").unwrap_or_default(), ctx.model);
    let command = command.as_str();
    let timeout = command_timeout(call.param("timeout"), ctx.yolo, ctx.command_timeout);
    ctx.term.tool("execute_command", command);
    if let Some(refused) = refusal(command, ctx.ws.root()) {
        ctx.decide(false, By::Policy, None);
        ctx.term.outcome(false, &refused.outcome);
        return Outcome::Failure { text: tool_error(&refused.text), mistake: false };
    }
    if !ctx.yolo {
        // Cline's `command` ask says the command itself.
        ctx.term.attention("command", command);
        let flagged = call.param("requires_approval").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        if let Err(denied) = ask(ctx, &run_question(command, ctx.ws.root(), flagged)) {
            return denied;
        }
    }
    ctx.decide(true, By::Yolo, None);
    let policy = sandbox::current();
    // Cline's `CommandExecutor` drops a leading `cd <workspace> && `: the command runs there
    // anyway, and a workspace path with a space in it would make that `cd` fail.
    let prefix = format!("cd {} && ", ctx.ws.root().display());
    let command = command.strip_prefix(prefix.as_str()).unwrap_or(command);
    let ran = execute(command, ctx.ws.root(), timeout, &policy, &mut |chunk| ctx.term.reasoning(chunk));
    ctx.memory.reads.clear();
    match ran {
        Err(e) => {
            ctx.term.outcome(false, &e);
            Outcome::Failure { text: tool_error(&e), mistake: false }
        }
        Ok(r) => {
            ctx.term.newline();
            let summary = match (r.timed_out, r.code) {
                (true, _) => format!("timed out after {}s; process group killed", timeout.as_secs_f64()),
                (false, Some(0)) => "exit code 0".to_string(),
                (false, Some(c)) => format!("exit code {c}"),
                (false, None) => "killed by a signal".to_string(),
            };
            ctx.term.outcome(r.code == Some(0) && !r.timed_out, &summary);
            if let Some(log) = r.output.log_file().and_then(|p| std::fs::canonicalize(p).ok()) {
                // The model is pointed to it: `read_file` may read it, outside the workspace.
                ctx.memory.logs.push(log);
            }
            let mut text = r.to_result(timeout);
            if let Some(note) = sandbox::notice::for_failure(&policy, r.code, &text, ctx.yolo) {
                text.push_str("\n\n");
                text.push_str(&note);
            }
            Outcome::Success(text)
        }
    }
}

/// Why `command` (as it will run: after [`gemini_command_fixes`]) is refused before anything is
/// asked, as Cline's handler refuses it: by `CLINE_COMMAND_PERMISSIONS`, then `.clineignore`.
pub(super) fn refusal(command: &str, root: &std::path::Path) -> Option<super::clineignore::Blocked> {
    if let Some(why) = super::permissions::refusal(&super::permissions::from_env(), command) {
        return Some(super::clineignore::Blocked { text: crate::run::prompt::permission_denied(&why), outcome: why });
    }
    super::clineignore::command_refusal(root, command)
}

/// A `timeout` parameter in seconds, read as Cline reads it (`Number.parseInt(t, 10)`: after
/// leading whitespace and a sign, the digits up to the first other character: `30s` is 30,
/// `2.5` is 2, `1e3` is 1), if positive.
fn timeout_of(t: &str) -> Option<Duration> {
    let t = super::v4a::js_trim(t);
    let (negative, rest) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let secs: f64 = rest[..digits].parse().ok()?;
    (!negative && secs > 0.0).then(|| clock::clamped_secs(secs))
}

/// Cline's execute_command turns HTML entities back into characters and drops U+FFFD in the
/// commands of Gemini models (`applyModelContentFixes`), which write `&amp;&amp;` for `&&`.
pub(super) fn gemini_command_fixes(command: &str, model: &str) -> String {
    if model.contains("gemini") {
        super::write::model_content_fixes(command, "", "")
    } else {
        command.to_string()
    }
}

/// Said of a process that left the command's group and outlived it.
const SURVIVOR_NOTE: &str = "\nNote: a process it started left its process group (setsid or a daemon) and is still running; its further output is not read.";

/// What a command did.
pub(crate) struct Ran {
    output: Output,
    code: Option<i32>,
    signal: Option<i32>,
    timed_out: bool,
    background_killed: bool,
    /// Something it started left its process group (`setsid`, a daemon) and still held the
    /// output open when reading stopped: it is still running.
    survivor: bool,
}

impl Ran {
    /// Cline's result text (`CommandOrchestrator`), plus our note on background processes.
    fn to_result(&self, timeout: Duration) -> String {
        let out = self.output.render();
        // Cline's `logFileMsg`.
        let log =
            self.output.log_path().map(|p| format!("\nFull output saved to: {}", p.display())).unwrap_or_default();
        if self.timed_out {
            let so_far = if out.is_empty() { String::new() } else { format!("\nOutput so far:\n{out}") };
            // Cline's text, where the command goes on running in the person's terminal; here it
            // was stopped, which the model must know (a server it started is not there to ask).
            let escaped = if self.survivor { SURVIVOR_NOTE } else { "" };
            return format!(
                "Command execution timed out after {} seconds. It was stopped: its processes were killed.{escaped}{so_far}{log}",
                timeout.as_secs_f64()
            );
        }
        let mut s = match (self.code, self.signal) {
            (Some(0), _) => "Command executed successfully (exit code 0).".to_string(),
            (Some(c), _) => format!("Command failed with exit code {c}."),
            (None, Some(sig)) => format!("Command terminated by signal {}.", crate::run::prompt::signal_name(sig)),
            (None, None) => "Command executed.".to_string(),
        };
        if self.survivor {
            s.push_str(SURVIVOR_NOTE);
        } else if self.background_killed {
            s.push_str("\nNote: processes it left running in the background were stopped.");
        }
        if !out.is_empty() {
            s.push_str(&format!("\nOutput:\n{out}"));
        }
        s.push_str(&log);
        s
    }
}

/// Runs `command` with `sh -c` in `cwd` under `policy` (its environment, its sandbox); calls
/// `show` with output as it arrives.
pub(crate) fn execute(
    command: &str,
    cwd: &std::path::Path,
    timeout: Duration,
    policy: &Policy,
    show: &mut dyn FnMut(&str),
) -> Result<Ran, String> {
    // stdout and stderr are one pipe, so their order is kept (the command is the shell's
    // script as written: its errors name the model's own line numbers).
    let (mut stdout, writer) = std::io::pipe().map_err(|e| format!("could not make a pipe: {e}"))?;
    let stderr = writer.try_clone().map_err(|e| format!("could not make a pipe: {e}"))?;
    // No secrets (`env` would print them), its own session, and the sandbox if one is on.
    let mut cmd = spawn::command("sh", spawn::Policy::Command { sandbox: policy, workspace: cwd })
        .map_err(|e| format!("could not prepare the sandbox: {e}"))?;
    cmd.arg("-c").arg(command).current_dir(cwd).stdin(Stdio::null()).stdout(writer).stderr(stderr);
    let spawned = cmd.spawn();
    // The pipe's writing ends go with `cmd`: then only the command's processes hold them, and
    // reading ends when the last of them exits.
    drop(cmd);
    let mut child = spawned.map_err(|e| format!("could not start `sh`: {e}"))?;
    let pgid = child.id() as i32;
    let _guard = interrupt::track_group(child.id());
    interrupt::part_of_turn(-pgid);
    // A bounded queue: a command printing faster than the output is shown waits for it, so
    // memory stays at a few chunks plus the kept head and tail, whatever it prints.
    let (tx, rx) = mpsc::sync_channel::<Vec<u8>>(QUEUE_CHUNKS);
    // Set when the pipe is closed: what is left to take is the queue's, not a writer's.
    let at_end = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader_end = at_end.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                reader_end.store(true, std::sync::atomic::Ordering::Release);
                break;
            }
            if tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut output = Output::new(&std::env::temp_dir());
    let mut shown = ShownText::default();
    let mut take = |chunk: Vec<u8>, show: &mut dyn FnMut(&str)| {
        let text = shown.push(&chunk);
        if !text.is_empty() {
            show(&text);
        }
        output.push(&chunk);
    };
    let deadline = Instant::now().checked_add(timeout).unwrap_or_else(|| Instant::now() + clock::MAX_WAIT);
    let mut timed_out = false;
    let status = loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(chunk) => take(chunk, show),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            // The output is closed (`exec >log 2>&1; make`) and the command runs on: the queue
            // answers at once from now on, so the wait for the command is here (it spun a core).
            Err(mpsc::RecvTimeoutError::Disconnected) => std::thread::sleep(Duration::from_millis(50)),
        }
        if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
            break st;
        }
        if Instant::now() >= deadline {
            timed_out = true;
            // As Cline stops a command (`terminateProcessTree`): SIGTERM, up to 2 s to clean up
            // (a clone removes its half-made directory, git its index.lock) while the output is
            // still read, then SIGKILL for what is left of the group.
            interrupt::send_signal(-pgid, libc::SIGTERM);
            let grace = Instant::now() + TERM_GRACE;
            while Instant::now() < grace {
                match rx.recv_timeout(Duration::from_millis(20)) {
                    Ok(chunk) => take(chunk, show),
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                }
            }
            interrupt::send_signal(-pgid, libc::SIGKILL);
            break child.wait().map_err(|e| e.to_string())?;
        }
    };
    // The shell is gone; collect what is left. Something it started in the background may still
    // hold the pipe open: give it a moment, then stop the whole group — whether it is quiet or
    // writing all along. A process that left the group (setsid) cannot be stopped that way and
    // may write forever: the drain has a deadline, after which the rest is not read — unless
    // the pipe is closed already and only the queue, bounded, is left to show, or what could
    // have been on its way when the shell exited (a bounded number of chunks) is still coming.
    let (mut background_killed, mut survivor) = (false, true);
    let now = Instant::now();
    let (drain_until, give_up) = (now + Duration::from_millis(300), now + DRAIN_LIMIT);
    let mut group_killed = false;
    // What may have been written before the shell exited and is still on its way — the queue,
    // the chunk the reader holds, a pipe's buffer at its largest (1 MiB, 8 KiB a read) — in
    // chunks: taking it may outlast the deadline on a slow terminal, and is no sign of a writer
    // still running. Counted in chunks, not bytes, so that a survivor writing a line at a time
    // is cut off after as many chunks, whatever its pace.
    let backlog = QUEUE_CHUNKS + 1 + (1 << 20) / 8192;
    // Chunks taken since the shell exited.
    let (mut after_exit, mut idle) = (0usize, false);
    loop {
        let now = Instant::now();
        let backlogged = !idle && after_exit <= backlog;
        if now >= give_up && !at_end.load(std::sync::atomic::Ordering::Acquire) && !backlogged {
            break;
        }
        if now >= drain_until && !group_killed {
            // Said only when something of the group was still there to stop.
            background_killed = !timed_out && interrupt::group_alive(pgid);
            interrupt::send_signal(-pgid, libc::SIGKILL);
            group_killed = true;
        }
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(chunk) => {
                (idle, after_exit) = (false, after_exit + 1);
                take(chunk, show)
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                survivor = false;
                break;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => idle = true,
        }
    }
    let rest = shown.finish();
    if !rest.is_empty() {
        show(&rest);
    }
    output.finish();
    Ok(Ran { output, code: status.code(), signal: status.signal(), timed_out, background_killed, survivor })
}

/// How long a command may run: `--command-timeout` (`bound`), or the model's `timeout` when it
/// is shorter (it may never pass the person's bound) — under `--yolo` only, as Cline reads it
/// only in yolo mode (`resolveCommandTimeoutSeconds`): a command the person approved is not cut
/// short by a number the model wrote (one from a resumed yolo conversation, say).
fn command_timeout(param: Option<&str>, yolo: bool, bound: Duration) -> Duration {
    param.filter(|_| yolo).and_then(timeout_of).map_or(bound, |t| t.min(bound))
}

/// What the person is asked before a command runs; `flagged`: the model's `requires_approval`
/// was true, which Cline's approval says in its own words.
fn run_question(command: &str, root: &std::path::Path, flagged: bool) -> String {
    let note = if flagged { " (the model has determined this command requires explicit approval)" } else { "" };
    let shown = compact(command);
    let lines = shown.lines().count();
    if lines > QUESTION_LINES || shown.chars().count() > QUESTION_CHARS {
        // Its start would scroll out of sight above the question: said again right before it.
        let first = shown.lines().find(|l| !l.trim().is_empty()).unwrap_or_default();
        let start: String = first.chars().take(QUESTION_START).collect();
        let cut = if start.len() < first.len() { "…" } else { "" };
        let size = match lines {
            1 => format!("{} characters", command.chars().count()),
            n => format!("{n} lines"),
        };
        return format!(
            "Run the command shown above ({size}), which starts `{start}{cut}`, in {}{note}",
            root.display()
        );
    }
    format!("Run `{shown}` in {}{note}", root.display())
}

/// Most lines of a command the approval question shows whole.
const QUESTION_LINES: usize = 24;

/// Most characters of a command the approval question shows whole (a terminal screen or so).
const QUESTION_CHARS: usize = 2000;

/// Characters of a long command's first line the question repeats.
const QUESTION_START: usize = 200;

/// `command` for the approval question: a run of blank lines (three or more) or of blanks (40
/// or more) said by its length, so that padding cannot push what the command does out of sight
/// above the question (the tool line above shows it as written).
fn compact(command: &str) -> String {
    let mut out = String::with_capacity(command.len().min(4096));
    let lines: Vec<&str> = command.split('\n').collect();
    let mut k = 0;
    while k < lines.len() {
        if k > 0 {
            out.push('\n');
        }
        let blank_run = lines[k..].iter().take_while(|l| l.trim().is_empty()).count();
        if blank_run >= 3 {
            out.push_str(&format!("⟨{blank_run} blank lines⟩"));
            k += blank_run;
            continue;
        }
        out.push_str(&compact_blanks(lines[k]));
        k += 1;
    }
    out
}

/// A line with each run of 40 or more blanks (spaces, tabs, any Unicode space) said by its
/// length.
fn compact_blanks(line: &str) -> std::borrow::Cow<'_, str> {
    if line.chars().filter(|c| c.is_whitespace()).count() < 40 {
        return line.into();
    }
    let mut out = String::new();
    let mut run = String::new();
    let flush = |run: &mut String, out: &mut String| {
        if run.chars().count() >= 40 {
            out.push_str(&format!("⟨{} blanks⟩", run.chars().count()));
        } else {
            out.push_str(run);
        }
        run.clear();
    };
    for c in line.chars() {
        if c.is_whitespace() {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out.into()
}

/// The output as text for the terminal, whole characters only: a character (or a `\r\n`)
/// cut between two reads is held until the next, not shown as two replacement marks.
#[derive(Default)]
struct ShownText {
    held: Vec<u8>,
}

impl ShownText {
    /// The text of `chunk` after what was held, but for an unfinished character or `\r` at its end.
    fn push(&mut self, chunk: &[u8]) -> String {
        self.held.extend_from_slice(chunk);
        let mut keep = match std::str::from_utf8(&self.held) {
            Ok(_) => self.held.len(),
            // Cut inside a character (`error_len` is None): its start waits for the rest.
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.held.len(),
        };
        if keep > 0 && self.held[keep - 1] == b'\r' {
            keep -= 1;
        }
        let rest = self.held.split_off(keep);
        let text = String::from_utf8_lossy(&self.held).into_owned();
        self.held = rest;
        text
    }

    /// What is still held, at the end of the output.
    fn finish(&mut self) -> String {
        String::from_utf8_lossy(&std::mem::take(&mut self.held)).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_and_line_ends_cut_between_reads_are_shown_whole() {
        let mut s = ShownText::default();
        let bytes = "é\r\n✓".as_bytes();
        let mut shown = String::new();
        for b in bytes {
            shown.push_str(&s.push(std::slice::from_ref(b)));
        }
        shown.push_str(&s.finish());
        assert_eq!(shown, "é\r\n✓");
        assert_eq!(s.push(b"a\xffb"), "a\u{fffd}b", "an invalid byte is not held");
        assert_eq!((s.push(b"\xe2\x9c"), s.finish()), (String::new(), "\u{fffd}".to_string()));
    }

    #[test]
    fn the_question_says_when_the_model_flagged_the_command() {
        let root = std::path::Path::new("/w");
        assert_eq!(run_question("rm -rf build", root, false), "Run `rm -rf build` in /w");
        assert_eq!(
            run_question("rm -rf build", root, true),
            "Run `rm -rf build` in /w (the model has determined this command requires explicit approval)"
        );
    }

    #[test]
    fn padding_cannot_push_a_command_out_of_sight_of_its_question() {
        let root = std::path::Path::new("/w");
        let padded = format!("curl x | sh;{}\nls", "\n".repeat(300));
        assert_eq!(run_question(&padded, root, false), "Run `curl x | sh;\n⟨300 blank lines⟩\nls` in /w");
        let wide = format!("rm -rf ~;{}ls", " ".repeat(50_000));
        assert_eq!(run_question(&wide, root, false), "Run `rm -rf ~;⟨50000 blanks⟩ls` in /w");
        let long: String = (0..40).map(|i| format!("echo {i}\n")).collect();
        let q = run_question(&format!("rm -rf build\n{long}"), root, false);
        assert_eq!(q, "Run the command shown above (41 lines), which starts `rm -rf build`, in /w");
        // One long line, or blanks of other kinds, cannot do it either.
        let q = run_question(&format!("rm -rf ~/.ssh; echo {}", "QUJD".repeat(15_000)), root, false);
        assert!(
            q.starts_with("Run the command shown above (60020 characters), which starts `rm -rf ~/.ssh; echo QUJD"),
            "{q}"
        );
        assert!(q.ends_with("…`, in /w") && q.chars().count() < 320, "{q}");
        let nbsp = format!("rm -rf ~;{}ls", "\u{a0}\u{3000}".repeat(100));
        assert_eq!(run_question(&nbsp, root, false), "Run `rm -rf ~;⟨200 blanks⟩ls` in /w");
        let trailing = format!("rm -rf ~{}", "\n".repeat(300));
        assert_eq!(run_question(&trailing, root, false), "Run `rm -rf ~\n⟨300 blank lines⟩` in /w");
        // An ordinary script is shown as written.
        assert_eq!(run_question("cd a\n\nmake", root, false), "Run `cd a\n\nmake` in /w");
    }

    #[test]
    fn a_slow_terminal_is_no_background_process() {
        let d = tempfile::tempdir().unwrap();
        // Each piece shown takes 100 ms: what was queued when the shell exited takes longer to
        // show than the drain's 2 s, and nothing of the command was left running.
        let mut show = |_: &str| std::thread::sleep(Duration::from_millis(100));
        let command = "head -c 300000 /dev/zero | tr '\\0' a";
        let r = execute(command, d.path(), Duration::from_secs(600), &Policy::default(), &mut show).unwrap();
        assert_eq!((r.background_killed, r.survivor), (false, false));
        assert_eq!(r.output.render().matches('a').count(), 300000);
    }

    fn run_sh(cmd: &str, timeout_ms: u64) -> Ran {
        let d = tempfile::tempdir().unwrap();
        execute(cmd, d.path(), Duration::from_millis(timeout_ms), &Policy::default(), &mut |_| {}).unwrap()
    }

    #[test]
    fn the_models_timeout_counts_under_yolo_only_and_never_past_the_bound() {
        let bound = Duration::from_secs(600);
        assert_eq!(command_timeout(Some("30"), true, bound), Duration::from_secs(30));
        assert_eq!(command_timeout(Some("30"), false, bound), bound, "an approved command runs its course");
        assert_eq!(command_timeout(Some("9000"), true, bound), bound);
        assert_eq!(command_timeout(None, true, bound), bound);
    }

    #[test]
    fn a_timeout_is_read_as_clines_parse_int_reads_it() {
        let secs = |s: f64| Some(clock::clamped_secs(s));
        assert_eq!(timeout_of(" 30\n"), secs(30.0));
        assert_eq!((timeout_of("30s"), timeout_of("+45 seconds")), (secs(30.0), secs(45.0)));
        assert_eq!((timeout_of("2.5"), timeout_of("1e3")), (secs(2.0), secs(1.0)));
        assert_eq!(timeout_of("99999999999999999999999"), secs(1e23));
        assert_eq!(
            (
                timeout_of("0"),
                timeout_of("-1"),
                timeout_of("soon"),
                timeout_of("NaN"),
                timeout_of(""),
                timeout_of("- 5")
            ),
            (None, None, None, None, None, None)
        );
    }

    #[test]
    fn a_shell_error_names_the_commands_own_line() {
        let r = run_sh("if then fi", 10_000);
        assert_eq!(r.code, Some(2));
        assert!(r.output.render().starts_with("sh: 1: Syntax error"), "{}", r.output.render());
    }

    #[test]
    fn commands_get_clines_environment_without_pagers_or_an_editor_waiting() {
        let r = run_sh("echo \"$TERM|$PAGER|$GIT_PAGER|$MANPAGER|[$SYSTEMD_PAGER]|$EDITOR\"", 10_000);
        let editor = std::env::var("EDITOR").unwrap_or_else(|_| "cat".into());
        assert_eq!(r.output.render(), format!("xterm-256color|cat|cat|cat|[]|{editor}"));
    }

    #[test]
    fn a_gemini_models_command_gets_clines_entity_fixes() {
        let fixed = gemini_command_fixes("make &amp;&amp; echo &quot;ok&quot; &gt; out\u{FFFD}", "gemini-2.5-pro");
        assert_eq!(fixed, "make && echo \"ok\" > out");
        // Other models' commands run as written (Cline fixes only Gemini's).
        assert_eq!(gemini_command_fixes("echo &amp;", "gpt-5"), "echo &amp;");
    }

    #[test]
    fn captures_stdout_and_stderr_in_order_with_exit_code() {
        let r = run_sh("echo one; echo two >&2; echo three; exit 3", 10_000);
        assert_eq!(r.output.render(), "one\ntwo\nthree");
        assert_eq!(r.code, Some(3));
        let text = r.to_result(Duration::from_secs(1));
        assert_eq!(text, "Command failed with exit code 3.\nOutput:\none\ntwo\nthree");
    }

    /// A command that closes its output and runs on is waited for, not polled without a pause:
    /// the wait spun a core for as long as the command ran.
    #[test]
    fn a_command_that_closed_its_output_is_waited_for_without_spinning() {
        let d = tempfile::tempdir().unwrap();
        let before = crate::run::test_files::thread_ticks();
        let cmd = "exec >/dev/null 2>&1; sleep 2";
        let r = execute(cmd, d.path(), Duration::from_secs(30), &Policy::default(), &mut |_| {}).unwrap();
        assert_eq!(r.code, Some(0));
        // Two seconds of polling without a pause cost about 200 ticks; a wait costs a few.
        let used = crate::run::test_files::thread_ticks() - before;
        assert!(used < 30, "{used} ticks of CPU for a 2 s command that printed nothing");
    }

    #[test]
    fn runs_in_the_workspace() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("marker.txt"), "").unwrap();
        let r = execute("ls", d.path(), Duration::from_secs(10), &Policy::default(), &mut |_| {}).unwrap();
        assert_eq!(r.output.render(), "marker.txt");
    }

    #[test]
    fn timeout_kills_the_whole_process_group() {
        let d = tempfile::tempdir().unwrap();
        let pidfile = d.path().join("child.pid");
        let cmd = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
        let start = Instant::now();
        let r = execute(&cmd, d.path(), Duration::from_millis(500), &Policy::default(), &mut |_| {}).unwrap();
        assert!(r.timed_out);
        assert!(start.elapsed() < Duration::from_secs(10));
        let pid: i32 = std::fs::read_to_string(&pidfile).unwrap().trim().parse().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        // The grandchild `sleep` must be gone (kill -0 fails), not just the shell.
        // (A killed process may linger as a zombie until it is reaped; that is not alive.)
        let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
            .unwrap_or(false);
        assert!(!alive, "background sleep {pid} survived the timeout");
        assert!(r
            .to_result(Duration::from_millis(500))
            .starts_with("Command execution timed out after 0.5 seconds. It was stopped: its processes were killed."));
    }

    #[test]
    fn a_huge_timeout_from_the_model_is_clamped_not_a_panic() {
        use super::super::testutil::{call, with_ctx};
        let d = tempfile::tempdir().unwrap();
        let ws = crate::run::tools::paths::Workspace::new(d.path()).unwrap();
        for t in ["1e20", "1e300", "18446744073709551616"] {
            let c = call("execute_command", &[("command", "echo ok"), ("requires_approval", "false"), ("timeout", t)]);
            let out = with_ctx(&ws, |ctx| super::super::run(&c, ctx));
            assert!(matches!(&out, Outcome::Success(s) if s.contains("ok")), "{t}: {out:?}");
        }
    }

    #[test]
    fn the_models_timeout_never_passes_command_timeout() {
        use super::super::testutil::{call, with_ctx};
        let d = tempfile::tempdir().unwrap();
        let ws = crate::run::tools::paths::Workspace::new(d.path()).unwrap();
        let c = call("execute_command", &[("command", "sleep 30"), ("requires_approval", "false"), ("timeout", "100")]);
        let out = with_ctx(&ws, |ctx| {
            ctx.command_timeout = Duration::from_millis(300);
            super::super::run(&c, ctx)
        });
        let text = match &out {
            Outcome::Success(s) | Outcome::Failure { text: s, .. } => s.clone(),
            other => panic!("{other:?}"),
        };
        assert!(text.contains("Command execution timed out after 0.3 seconds. It was stopped"), "{text}");
    }

    /// A leading `cd <workspace> && ` is dropped, as Cline's `CommandExecutor` drops it: with a
    /// space in the workspace's path that `cd` would fail (`sh -c`), though the command runs
    /// there anyway.
    #[test]
    fn a_leading_cd_to_the_workspace_is_dropped() {
        use super::super::testutil::{call, with_ctx};
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("my proj");
        std::fs::create_dir(&root).unwrap();
        let ws = crate::run::tools::paths::Workspace::new(&root).unwrap();
        let command = format!("cd {} && pwd", ws.root().display());
        let c = call("execute_command", &[("command", &command), ("requires_approval", "false")]);
        let out = with_ctx(&ws, |ctx| {
            ctx.yolo = true;
            super::super::run(&c, ctx)
        });
        let Outcome::Success(text) = &out else { panic!("{out:?}") };
        assert!(text.contains(&format!("{}", ws.root().display())) && !text.contains("can't cd"), "{text}");
    }

    #[test]
    fn the_log_file_a_result_names_can_be_read_under_yolo_and_no_other_outside_file() {
        use super::super::testutil::{call, with_ctx};
        let d = tempfile::tempdir().unwrap();
        let ws = crate::run::tools::paths::Workspace::new(d.path()).unwrap();
        let seq = call("execute_command", &[("command", "seq 1 1200"), ("requires_approval", "false")]);
        let (ran, read, other) = with_ctx(&ws, |ctx| {
            let Outcome::Success(ran) = super::super::run(&seq, ctx) else { panic!("the command ran") };
            let path = ran.rsplit("Full output saved to: ").next().unwrap().trim().to_string();
            let read = super::super::run(&call("read_file", &[("path", &path), ("start_line", "1200")]), ctx);
            let other = super::super::run(&call("read_file", &[("path", "/etc/hostname")]), ctx);
            (ran, read, other)
        });
        assert!(ran.contains("Full output saved to: "), "{ran}");
        assert!(matches!(&read, Outcome::Success(t) if t.contains("1200 | 1200")), "{read:?}");
        assert!(
            matches!(&other, Outcome::Failure { text, .. } if text.contains("--yolo never approves paths outside"))
        );
        let log = ran.rsplit("Full output saved to: ").next().unwrap().trim();
        let _ = std::fs::remove_file(log);
    }

    #[test]
    fn a_file_read_after_a_command_is_a_fresh_read_as_in_cline() {
        use super::super::testutil::{call, with_ctx};
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f.txt"), "one\n").unwrap();
        let ws = crate::run::tools::paths::Workspace::new(d.path()).unwrap();
        let read = call("read_file", &[("path", "f.txt")]);
        let true_ = call("execute_command", &[("command", "true"), ("requires_approval", "false")]);
        let texts = with_ctx(&ws, |ctx| {
            let mut texts = Vec::new();
            for c in [&read, &read, &true_, &read] {
                if let Outcome::Success(s) | Outcome::Repeated(s) = super::super::run(c, ctx) {
                    texts.push(s);
                }
            }
            texts
        });
        assert!(texts[1].starts_with("[File already read]"), "{texts:?}");
        assert_eq!(texts[3], texts[0], "the command may have changed it: read afresh");
    }

    /// A job left in the background holding the output open (`npm run dev &`) is stopped with
    /// the command's group once the shell has exited, and the model is told so.
    #[test]
    fn background_jobs_holding_the_pipe_are_stopped_and_reported() {
        let d = tempfile::tempdir().unwrap();
        let cmd = "sleep 60 & echo $! > job.pid; echo started";
        let r = execute(cmd, d.path(), Duration::from_secs(60), &Policy::default(), &mut |_| {}).unwrap();
        let out = r.to_result(Duration::ZERO);
        assert!(r.background_killed && !r.survivor, "{out}");
        assert!(out.starts_with("Command executed successfully (exit code 0)."), "{out}");
        assert!(out.contains("Note: processes it left running in the background were stopped."), "{out}");
        assert!(out.contains("started"), "{out}");
        // The job dies (gone, or a zombie its new parent has not reaped yet): SIGKILL is
        // delivered asynchronously, so its end is waited for, not assumed.
        let pid = std::fs::read_to_string(d.path().join("job.pid")).unwrap();
        let stat = || std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
        let dead = |s: &str| matches!(s.rsplit(") ").next().and_then(|r| r.chars().next()), None | Some('Z' | 'X'));
        let limit = Instant::now() + Duration::from_secs(30);
        while !dead(&stat()) && Instant::now() < limit {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(dead(&stat()), "the job still runs: {}", stat());
    }

    /// A job in the command's group that writes without a pause (`npm test &` with a lot to
    /// say) is stopped with the group too: it was waited for until a quiet moment that never
    /// came, left running, and reported as a process that had left the group.
    #[test]
    fn a_background_job_writing_all_along_is_stopped_too() {
        let d = tempfile::tempdir().unwrap();
        let cmd = "sh -c 'while :; do echo tick; done' & echo started";
        let r = execute(cmd, d.path(), Duration::from_secs(60), &Policy::default(), &mut |_| {}).unwrap();
        let out = r.to_result(Duration::ZERO);
        assert!(r.background_killed && !r.survivor, "{}", &out[..out.len().min(300)]);
        assert!(!out.contains("left its process group"));
    }

    /// A command stopped at its time limit gets SIGTERM and time to clean up before SIGKILL, as
    /// Cline's `terminateProcessTree` gives it (a clone removing its half-made directory).
    #[test]
    fn a_timed_out_command_may_clean_up() {
        let d = tempfile::tempdir().unwrap();
        let cmd = "trap 'echo cleaned > t; exit 1' TERM; sleep 30 & wait";
        let r = execute(cmd, d.path(), Duration::from_millis(300), &Policy::default(), &mut |_| {}).unwrap();
        assert!(r.timed_out);
        assert_eq!(std::fs::read_to_string(d.path().join("t")).unwrap_or_default(), "cleaned\n");
    }

    /// A command stopped at its time limit that left a process outside its group says so: not
    /// all its processes were killed.
    #[test]
    fn a_timed_out_command_names_the_process_that_outlived_it() {
        let d = tempfile::tempdir().unwrap();
        let cmd = "setsid sh -c 'while :; do echo tick; sleep 0.2; done' & echo $! > esc.pid; sleep 30";
        let r = execute(cmd, d.path(), Duration::from_millis(500), &Policy::default(), &mut |_| {});
        if let Ok(pid) = std::fs::read_to_string(d.path().join("esc.pid")) {
            crate::run::ui::interrupt::send_signal(pid.trim().parse().unwrap_or(0), libc::SIGKILL);
        }
        let out = r.unwrap().to_result(Duration::from_millis(500));
        assert!(out.starts_with("Command execution timed out after 0.5 seconds."), "{out}");
        assert!(out.contains("is still running"), "{out}");
    }

    #[test]
    fn a_child_escaping_the_process_group_does_not_hang_the_drain() {
        let d = tempfile::tempdir().unwrap();
        let cmd = "setsid sh -c 'while :; do echo tick; sleep 0.2; done' & echo $! > esc.pid; echo started";
        let start = Instant::now();
        let (tx, rx) = mpsc::channel();
        let dir = d.path().to_path_buf();
        std::thread::spawn(move || {
            let _ = tx.send(
                execute(cmd, &dir, Duration::from_secs(60), &Policy::default(), &mut |_| {})
                    .map(|r| r.to_result(Duration::ZERO)),
            );
        });
        let got = rx.recv_timeout(Duration::from_secs(15));
        if let Ok(pid) = std::fs::read_to_string(d.path().join("esc.pid")) {
            crate::run::ui::interrupt::send_signal(pid.trim().parse().unwrap_or(0), libc::SIGKILL);
        }
        let out = got.expect("execute did not return: the drain follows the escaped child forever").unwrap();
        assert!(out.contains("started"), "{out}");
        assert!(out.contains("is still running"), "the survivor is reported as stopped: {out}");
        assert!(!out.contains("were stopped"), "{out}");
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn huge_output_is_summarised_by_lines_and_saved_whole_as_cline_does() {
        let r = run_sh("seq 1 200000", 30_000);
        let log = r.output.log_path().expect("a log file").to_path_buf();
        let text = r.to_result(Duration::from_secs(1));
        let _ = std::fs::remove_file(&log);
        let head: String = (1..=100).map(|i| format!("{i}\n")).collect();
        let tail = (199_901..=200_000).map(|i| i.to_string()).collect::<Vec<_>>().join("\n");
        assert_eq!(
            text,
            format!(
                "Command executed successfully (exit code 0).\nOutput:\n{head}\n... (199800 lines written to {p}) ...\n\n{tail}\nFull output saved to: {p}",
                p = log.display()
            )
        );
    }

    #[test]
    fn over_500_lines_the_middle_is_cut_as_cline_cuts_it() {
        let r = run_sh("seq 1 600", 30_000);
        assert!(r.output.log_path().is_none());
        let out = r.output.render();
        assert!(out.starts_with("1\n2\n") && out.ends_with("\n600"));
        assert!(out.contains("\n250\n... (output truncated) ...\n351\n"), "{out}");
        assert_eq!(out.lines().count(), 501);
    }

    /// Workspace-write confinement to `ws` alone (not even the temp directory), network off.
    fn sandboxed(ws: &std::path::Path, network: bool) -> Policy {
        let ws = std::fs::canonicalize(ws).unwrap();
        Policy { mode: sandbox::Mode::WorkspaceWrite, writable: vec![ws], network, ..Policy::default() }
    }

    #[test]
    #[cfg(feature = "sandbox")]
    fn a_sandboxed_command_writes_in_the_workspace_and_nowhere_else() {
        let (ws, outside) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let target = outside.path().join("escaped.txt");
        let cmd = format!("echo in > inside.txt && cat inside.txt; echo out > '{}'; echo rc=$?", target.display());
        let run = |p: &Policy| execute(&cmd, ws.path(), Duration::from_secs(20), p, &mut |_| {}).unwrap();
        let r = run(&sandboxed(ws.path(), false));
        let out = r.output.render();
        assert!(out.starts_with("in\n"), "{out}");
        assert!(out.contains("Permission denied") && out.contains("rc=2"), "{out}");
        assert!(!target.exists(), "the sandbox let a command write outside the workspace");
        let note = sandbox::notice::for_failure(&sandboxed(ws.path(), false), Some(1), &out, false).unwrap();
        assert!(note.contains("--sandbox-allow-write DIR") && note.contains("no network"), "{note}");
        // The same command unconfined does write there: the refusal above is the sandbox's.
        run(&Policy::default());
        assert!(target.exists());
    }

    #[test]
    #[cfg(feature = "sandbox")]
    fn a_sandboxed_command_cannot_connect_to_a_local_listener_unless_network_is_allowed() {
        let ws = tempfile::tempdir().unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let cmd = format!("curl -sS --max-time 3 -o /dev/null http://127.0.0.1:{port}/; echo curl=$?");
        let connected = |policy: &Policy| {
            let r = execute(&cmd, ws.path(), Duration::from_secs(20), policy, &mut |_| {}).unwrap();
            let mut any = false;
            while let Ok((c, _)) = listener.accept() {
                any = true;
                drop(c);
            }
            (any, r.output.render())
        };
        let (reached, out) = connected(&sandboxed(ws.path(), false));
        assert!(!reached, "a sandboxed command reached 127.0.0.1:{port}: {out}");
        assert!(out.contains("curl=7"), "curl could not connect: {out}");
        let (reached, out) = connected(&sandboxed(ws.path(), true));
        assert!(reached, "with --sandbox-network the command connects: {out}");
    }

    #[test]
    #[cfg(feature = "sandbox")]
    fn a_small_python_project_builds_and_runs_under_the_sandbox() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join("pkg")).unwrap();
        std::fs::write(ws.path().join("pkg/__init__.py"), "").unwrap();
        std::fs::write(ws.path().join("pkg/calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
        let cmd = "python3 -m compileall -q pkg && python3 -c 'from pkg.calc import add; print(add(2, 3))'";
        let r = execute(cmd, ws.path(), Duration::from_secs(60), &sandboxed(ws.path(), false), &mut |_| {}).unwrap();
        assert_eq!((r.code, r.output.render().as_str()), (Some(0), "5"));
        assert!(ws.path().join("pkg/__pycache__").is_dir(), "the build wrote its bytecode in the workspace");
    }

    #[test]
    #[cfg(feature = "sandbox")]
    fn a_small_cargo_project_builds_and_runs_under_the_sandbox() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join("src")).unwrap();
        std::fs::write(
            ws.path().join("Cargo.toml"),
            "[package]\nname = \"hello\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        )
        .unwrap();
        std::fs::write(ws.path().join("src/main.rs"), "fn main() { println!(\"built {}\", 6 * 7); }\n").unwrap();
        let mut policy = sandboxed(ws.path(), false);
        let tmp = tempfile::tempdir().unwrap();
        policy.tmp = Some(tmp.path().to_path_buf()); // rustc's temporary files, as under --yolo
        let cmd = "CARGO_TARGET_DIR=target cargo run --offline -q 2>&1";
        let r = execute(cmd, ws.path(), Duration::from_secs(300), &policy, &mut |_| {}).unwrap();
        assert_eq!((r.code, r.output.render().as_str()), (Some(0), "built 42"));
    }
}
