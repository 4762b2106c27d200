//! One hook script run: Cline's `HookProcess`. The script is executed directly (its `#!` line
//! picks the interpreter), in its own process group, with the workspace root as working
//! directory, Cline's JSON on stdin and no API key in its environment. The last 1 MB of each
//! stream is kept: Cline caps what it shows at 1 MB of both together but keeps all of stdout
//! and looks for the answer from its end, so neither a hook's logging on stderr nor a long log
//! before its answer on stdout may crowd the answer out (a guard's `cancel` would be lost, and
//! the call run). Between the pipes and the agent a queue of a few chunks: a hook printing
//! faster than the agent keeps its last megabyte waits for it, so the agent's memory is bounded
//! whatever the hook prints. At the timeout the whole group is killed. What a hook that exited
//! left running in the background (a TaskStart hook's dev server) runs on, as in Cline, until
//! the agent ends, when the watchdog kills its group.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::run::spawn;
use crate::run::ui::interrupt;

/// Cline's `MAX_HOOK_OUTPUT_SIZE`, here for each of stdout and stderr (the last this many bytes
/// of each are kept).
pub(crate) const MAX_OUTPUT_BYTES: usize = 1024 * 1024;

/// How long output is still read after the script exited (something it left in the
/// background may hold the pipes open).
const DRAIN: Duration = Duration::from_secs(1);

/// Chunks (of up to 8 KiB) queued between the pipes and the agent, as `execute_command`'s.
const QUEUE_CHUNKS: usize = 16;

/// What a finished run left.
#[derive(Debug, Default)]
pub(crate) struct Ran {
    /// The end of stdout (its last [`MAX_OUTPUT_BYTES`]).
    pub stdout: String,
    /// The end of stderr (its last [`MAX_OUTPUT_BYTES`]).
    pub stderr: String,
    /// The exit code; `None` when killed by a signal.
    pub code: Option<i32>,
    /// The timeout killed it.
    pub timed_out: bool,
    /// The start of a stream longer than the cap was dropped.
    pub truncated: bool,
}

/// Runs `script` (named `shown` in messages) with `input` on stdin. `Err` when it could not be
/// started at all.
pub(crate) fn run(script: &Path, shown: &Path, cwd: &Path, input: &str, timeout: Duration) -> Result<Ran, String> {
    if spawn::lacks_interpreter_line(script) {
        return Err(start_error(shown, &std::io::Error::from_raw_os_error(libc::ENOEXEC)));
    }
    // No API key, its own process group, killed with the agent, ptrace-scoped.
    let (program, args) = launch(script);
    let mut cmd = spawn::command(&program, spawn::Policy::Hook)?;
    cmd.args(args).current_dir(cwd).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    // ETXTBSY: a child another thread forked while the script's file was open for writing
    // still holds that descriptor until it execs; it is gone in moments.
    let mut started = cmd.spawn();
    for wait_ms in [1, 4, 16, 64] {
        match &started {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                std::thread::sleep(Duration::from_millis(wait_ms));
                started = cmd.spawn();
            }
            _ => break,
        }
    }
    let mut child = started.map_err(|e| start_error(shown, &e))?;
    let pgid = child.id() as i32;
    let _guard = interrupt::track_group(child.id());
    let mut stdin = child.stdin.take().expect("piped");
    let input = input.as_bytes().to_vec();
    // A hook that never reads its input must not block us: write from a thread.
    std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    // Bounded: a reader that gets ahead waits, and so does the hook writing into its pipe.
    let (tx, rx) = mpsc::sync_channel::<(bool, Vec<u8>)>(QUEUE_CHUNKS);
    for (is_err, mut pipe) in [
        (false, Box::new(child.stdout.take().expect("piped")) as Box<dyn Read + Send>),
        (true, Box::new(child.stderr.take().expect("piped"))),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 || tx.send((is_err, buf[..n].to_vec())).is_err() {
                    break;
                }
            }
        });
    }
    drop(tx);
    let (mut out, mut err, mut ran) = (VecDeque::new(), VecDeque::new(), Ran::default());
    let mut take = |(is_err, chunk): (bool, Vec<u8>), ran: &mut Ran| {
        ran.truncated |= keep_last(if is_err { &mut err } else { &mut out }, &chunk);
    };
    let deadline = Instant::now() + timeout;
    let status = loop {
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(piece) => take(piece, &mut ran),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            // Both pipes closed, the hook running on: the queue answers at once now.
            Err(mpsc::RecvTimeoutError::Disconnected) => std::thread::sleep(Duration::from_millis(20)),
        }
        if let Some(st) = child.try_wait().map_err(|e| e.to_string())? {
            break st;
        }
        if Instant::now() >= deadline {
            ran.timed_out = true;
            interrupt::send_signal(-pgid, libc::SIGKILL);
            break child.wait().map_err(|e| e.to_string())?;
        }
    };
    let until = Instant::now() + DRAIN;
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(piece) => take(piece, &mut ran),
            Err(_) => break,
        }
    }
    ran.code = status.code();
    ran.stdout = String::from_utf8_lossy(out.make_contiguous()).into_owned();
    ran.stderr = String::from_utf8_lossy(err.make_contiguous()).into_owned();
    Ok(ran)
}

/// Appends `chunk` to `kept`, dropping from the front what goes beyond [`MAX_OUTPUT_BYTES`]:
/// the end of the output, where Cline looks for the answer, is what stays. True if anything
/// was dropped.
fn keep_last(kept: &mut VecDeque<u8>, chunk: &[u8]) -> bool {
    kept.extend(chunk);
    let over = kept.len().saturating_sub(MAX_OUTPUT_BYTES);
    kept.drain(..over);
    over > 0
}

/// How `script` (a `/proc/self/fd/N` of its sealed copy) is started: executed itself, its
/// `#!` line choosing the interpreter — except Node, which resolves its main script's real path
/// and finds none for a memory file (`ENOENT … '/memfd:agent-min-hook (deleted)'`: every
/// `#!/usr/bin/env node` hook failed). Node is started as the kernel would start it, with
/// `--preserve-symlinks-main` before the script, which keeps the path as given; nothing else
/// changes (an environment variable would reach the Node programs the hook runs).
fn launch(script: &Path) -> (PathBuf, Vec<OsString>) {
    use std::io::Read;
    let mut head = [0u8; 256]; // the kernel's BINPRM_BUF_SIZE: all of the `#!` line it reads
    let n = std::fs::File::open(script).and_then(|mut f| f.read(&mut head)).unwrap_or(0);
    match node_line(&head[..n]) {
        Some((interpreter, mut args)) => {
            args.push(script.as_os_str().to_owned());
            (interpreter, args)
        }
        None => (script.to_path_buf(), Vec::new()),
    }
}

/// The flag that keeps Node's main script at the path it is given.
const PRESERVE: &[u8] = b"--preserve-symlinks-main";

/// For a `#!` line that starts Node — `#!/usr/bin/node [arg]`, `#!/usr/bin/env node`,
/// `#!/usr/bin/env -S node …` — its interpreter and the arguments to put before the script,
/// with [`PRESERVE`] right after Node's name (in `-S`'s one string, which `env` splits: after
/// `node`, so neither a `--` nor a `#` comment that follows takes it). The line is read as the
/// kernel reads it: up to its line feed or the 256th byte, the interpreter up to a blank, the
/// rest, trimmed of blanks (not of a `\r`), as one argument. `None` for any other line.
fn node_line(head: &[u8]) -> Option<(PathBuf, Vec<OsString>)> {
    use std::os::unix::ffi::OsStrExt;
    let line = head.strip_prefix(b"#!")?;
    // The kernel reads `#!` and 253 bytes more (BINPRM_BUF_SIZE less its terminating NUL).
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len().min(253))];
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let trim = |s: &[u8]| -> std::ops::Range<usize> {
        let start = s.iter().position(|b| !blank(b)).unwrap_or(s.len());
        let end = s.iter().rposition(|b| !blank(b)).map_or(start, |i| i + 1);
        start..end.max(start)
    };
    let line = &line[trim(line)];
    let (interpreter, rest) = line.split_at(line.iter().position(blank).unwrap_or(line.len()));
    if !interpreter.contains(&b'/') {
        return None; // the kernel resolves it against the working directory: left to it
    }
    let rest = &rest[trim(rest)];
    let name = |word: &[u8]| word.rsplit(|&b| b == b'/').next().unwrap_or(word).to_vec();
    let is_node = |word: &[u8]| matches!(name(word).as_slice(), b"node" | b"nodejs");
    let arg = |bytes: &[u8]| OsStr::from_bytes(bytes).to_owned();
    let interpreter_path = PathBuf::from(OsStr::from_bytes(interpreter));
    let args = if is_node(interpreter) {
        [Some(arg(PRESERVE)), (!rest.is_empty()).then(|| arg(rest))].into_iter().flatten().collect()
    } else if name(interpreter) != b"env" {
        return None;
    } else if is_node(rest) {
        vec![arg(rest), arg(PRESERVE)]
    } else {
        let after_s = rest.strip_prefix(b"-S")?;
        let skip = after_s.iter().position(|b| !blank(b)).unwrap_or(after_s.len());
        let split = &after_s[skip..];
        let node_end = split.iter().position(blank).unwrap_or(split.len());
        if !is_node(&split[..node_end]) {
            return None;
        }
        // `-S`, the node word, the flag, then the rest as written.
        let at = 2 + skip + node_end;
        vec![arg(&[&rest[..at], b" ", PRESERVE, &rest[at..]].concat())]
    };
    Some((interpreter_path, args))
}

fn start_error(script: &Path, e: &std::io::Error) -> String {
    let shown = script.display();
    match e.raw_os_error() {
        Some(libc::ENOEXEC) => {
            format!("{shown} could not be started: it has no #! line; make its first line e.g. `#!/usr/bin/env bash`")
        }
        Some(libc::EACCES) => format!("{shown} could not be started: permission denied; make it executable (chmod +x)"),
        Some(libc::ENOENT) => format!(
            "{shown} could not be started: its #! interpreter was not found (or the file is gone); check its first line"
        ),
        _ => format!("{shown} could not be started: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn script(dir: &Path, body: &str) -> std::path::PathBuf {
        let p = dir.join("Hook");
        std::fs::write(&p, body).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn node_is_started_with_its_main_script_kept_at_the_path_given() {
        let line = |head: &str| {
            node_line(head.as_bytes()).map(|(p, a)| {
                let args: Vec<String> = a.iter().map(|x| x.to_string_lossy().into_owned()).collect();
                format!("{} {}", p.display(), args.join("|"))
            })
        };
        let flag = "--preserve-symlinks-main";
        assert_eq!(line("#!/usr/bin/env node\nx"), Some(format!("/usr/bin/env node|{flag}")));
        assert_eq!(
            line("#! /usr/local/bin/node  --no-warnings \nx"),
            Some(format!("/usr/local/bin/node {flag}|--no-warnings"))
        );
        assert_eq!(line("#!/usr/bin/node --\n"), Some(format!("/usr/bin/node {flag}|--")));
        assert_eq!(line("#!/opt/n/bin/nodejs\n"), Some(format!("/opt/n/bin/nodejs {flag}")));
        assert_eq!(
            line("#!/usr/bin/env -S node --no-warnings\n"),
            Some(format!("/usr/bin/env -S node {flag} --no-warnings"))
        );
        assert_eq!(line("#!/usr/bin/env -S node # why\n"), Some(format!("/usr/bin/env -S node {flag} # why")));
        // No line feed in the first 256 bytes, or none at all: the line is what there is.
        assert_eq!(line("#!/usr/bin/env node"), Some(format!("/usr/bin/env node|{flag}")));
        for other in [
            "#!/bin/sh\n",
            "#!/usr/bin/env python3\n",
            "#!/usr/bin/env -S deno run\n",
            "#!node\n",
            "echo\n",
            "#!/usr/bin/nodemon\n",
            "#!/usr/bin/env node\r\n",
        ] {
            assert_eq!(line(other), None, "{other:?}");
        }
    }

    #[test]
    fn input_on_stdin_output_and_exit_code_back() {
        let d = tempfile::tempdir().unwrap();
        let s = script(d.path(), "#!/bin/sh\nread line\necho \"got $line\"\necho oops >&2\npwd >&2\nexit 3\n");
        let r = run(&s, &s, d.path(), "{\"a\":1}\n", Duration::from_secs(10)).unwrap();
        assert_eq!(r.stdout, "got {\"a\":1}\n");
        assert!(r.stderr.starts_with("oops\n"));
        assert!(r.stderr.contains(&d.path().canonicalize().unwrap().display().to_string()), "runs in the workspace");
        assert_eq!(r.code, Some(3));
        assert!(!r.timed_out && !r.truncated);
    }

    /// A hook that closes its output and runs on is waited for, not polled without a pause.
    #[test]
    fn a_hook_that_closed_its_output_is_waited_for_without_spinning() {
        let d = tempfile::tempdir().unwrap();
        let s = script(d.path(), "#!/bin/sh\nexec >/dev/null 2>&1\nsleep 2\n");
        let before = crate::run::test_files::thread_ticks();
        let r = run(&s, &s, d.path(), "{}\n", Duration::from_secs(30)).unwrap();
        assert_eq!(r.code, Some(0));
        let used = crate::run::test_files::thread_ticks() - before;
        assert!(used < 30, "{used} ticks of CPU for a 2 s hook that printed nothing");
    }

    #[test]
    fn the_timeout_kills_the_hook_and_what_it_started() {
        let d = tempfile::tempdir().unwrap();
        let marker = d.path().join("survived");
        let s = script(d.path(), &format!("#!/bin/sh\n(sleep 3; touch {}) &\nsleep 30\n", marker.display()));
        let t = Instant::now();
        let r = run(&s, &s, d.path(), "", Duration::from_millis(300)).unwrap();
        assert!(r.timed_out && r.code.is_none());
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
        std::thread::sleep(Duration::from_millis(3500));
        assert!(!marker.exists(), "the background child was killed with the group");
    }

    /// Whether process `pid` has ended (gone, or a zombie nobody reaped yet).
    fn ended(pid: i32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
        }
    }

    /// What a hook that exited started in the background runs on, as in Cline (a TaskStart
    /// hook's dev server): only the timeout, or the agent's end, kills its group.
    #[test]
    fn what_a_hook_left_in_the_background_runs_on() {
        let d = tempfile::tempdir().unwrap();
        let quiet = d.path().join("quiet.pid");
        let s = script(
            d.path(),
            &format!("#!/bin/sh\nsleep 1000 >/dev/null 2>&1 </dev/null & echo $! > '{}'\necho done\n", quiet.display()),
        );
        let r = run(&s, &s, d.path(), "", Duration::from_secs(20)).unwrap();
        assert_eq!((r.stdout.as_str(), r.code, r.timed_out), ("done\n", Some(0), false));
        let pid: i32 = std::fs::read_to_string(&quiet).unwrap().trim().parse().unwrap();
        let alive = !ended(pid);
        interrupt::send_signal(pid, libc::SIGKILL);
        assert!(alive, "the hook's background process was killed when the hook exited");
    }

    #[test]
    fn output_is_capped() {
        let d = tempfile::tempdir().unwrap();
        let s = script(d.path(), "#!/bin/sh\nhead -c 3000000 /dev/zero | tr '\\0' x\n");
        let r = run(&s, &s, d.path(), "", Duration::from_secs(20)).unwrap();
        assert!(r.truncated);
        assert_eq!(r.stdout.len(), MAX_OUTPUT_BYTES);
    }

    /// A hook that logs more than the cap on stderr still gives its answer on stdout.
    #[test]
    fn stderr_does_not_crowd_out_the_answer() {
        let d = tempfile::tempdir().unwrap();
        let s = script(d.path(), "#!/bin/sh\nhead -c 1500000 /dev/zero | tr '\\0' x >&2\necho '{\"cancel\": true}'\n");
        let r = run(&s, &s, d.path(), "", Duration::from_secs(20)).unwrap();
        assert!(r.truncated);
        assert_eq!(r.stderr.len(), MAX_OUTPUT_BYTES);
        assert_eq!(r.stdout, "{\"cancel\": true}\n");
    }

    /// A hook that prints more than the cap before its answer still gives it: the last 1 MB of
    /// stdout is kept, where Cline scans for the answer from the end.
    #[test]
    fn the_answer_after_more_than_the_cap_is_kept() {
        let d = tempfile::tempdir().unwrap();
        let s =
            script(d.path(), "#!/bin/sh\nhead -c 1100000 /dev/zero | tr '\\0' x\necho\necho '{\"cancel\": true}'\n");
        let r = run(&s, &s, d.path(), "", Duration::from_secs(20)).unwrap();
        assert!(r.truncated);
        assert_eq!(r.stdout.len(), MAX_OUTPUT_BYTES);
        assert!(r.stdout.ends_with("x\n{\"cancel\": true}\n"), "{:?}", &r.stdout[r.stdout.len() - 40..]);
        assert!(super::super::output::parse(&r.stdout).unwrap().cancel);
    }

    #[test]
    fn a_missing_shebang_is_named() {
        let d = tempfile::tempdir().unwrap();
        let s = script(d.path(), "echo hi\n");
        let e = run(&s, &s, d.path(), "", Duration::from_secs(5)).unwrap_err();
        assert!(e.contains("no #! line"), "{e}");
    }
}
