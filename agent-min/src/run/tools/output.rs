//! A command's output kept as Cline's `CommandOrchestrator` keeps it — by lines, not bytes — in
//! bounded memory.
//!
//! Up to 1000 lines and 512 KB stay in memory; the model gets them all, or, over 500 lines, the
//! first and last 250 around `... (output truncated) ...` (`processOutput`). Past 1000 lines or
//! 512 KB, the whole output goes to a log file as it comes (byte for byte) and only the first
//! 100 lines and a ring of the last 100 are kept; the model gets those around `... (N lines
//! written to PATH) ...` and `Full output saved to: PATH`. Unlike Cline, a line in that ring is
//! kept to its first [`RING_LINE_KEEP`] bytes (Cline keeps whole lines, so one endless line is
//! all in memory); the log file has it whole, up to [`MAX_LOG_BYTES`] (Cline's has no
//! bound: an endless `yes` filled the disk). As Cline's `ClineTempManager`, log files older than
//! 50 hours, and the oldest beyond 2 GB in all, are removed when a new one is made.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Cline's `terminalOutputLineLimit` default: over this many lines, the middle is cut.
pub(crate) const LINE_LIMIT: usize = 500;
/// Cline's `MAX_LINES_BEFORE_FILE`.
pub(crate) const MAX_LINES_BEFORE_FILE: usize = 1000;
/// Cline's `MAX_BYTES_BEFORE_FILE`.
pub(crate) const MAX_BYTES_BEFORE_FILE: usize = 512 * 1024;
/// Cline's `SUMMARY_LINES_TO_KEEP`: the first and last lines shown once output is in a file.
pub(crate) const SUMMARY_LINES: usize = 100;
/// Bytes of a line kept in the ring of last lines (the log file has the rest).
pub(crate) const RING_LINE_KEEP: usize = 4096;
/// The most one log file holds; what comes after is counted, not kept.
pub(crate) const MAX_LOG_BYTES: u64 = 512 << 20;
/// Cline's `ClineTempManager`: log files older than this are removed…
const MAX_LOG_AGE: std::time::Duration = std::time::Duration::from_secs(50 * 3600);
/// …and the oldest, until all of them hold at most this much.
const MAX_LOGS_BYTES: u64 = 2 << 30;
/// The log files' names start so.
const LOG_PREFIX: &str = "agent-min-large-output-";

/// Where the log file went, or why it could not be written.
enum Log {
    Memory,
    /// `written` bytes are in the file; `dropped` more came after [`MAX_LOG_BYTES`].
    File {
        /// The file's path, or (not `made`) why it could not be created.
        path: PathBuf,
        /// Whether the file was created.
        made: bool,
        file: Option<File>,
        written: u64,
        dropped: u64,
    },
}

/// The output of one command, by lines.
pub(crate) struct Output {
    /// Complete lines, while in memory.
    lines: Vec<Vec<u8>>,
    /// The line being read (in file mode, only its first [`RING_LINE_KEEP`] bytes).
    cur: Vec<u8>,
    /// Bytes of complete lines (without their newlines), as Cline counts them.
    bytes: usize,
    /// Complete lines seen.
    total_lines: usize,
    log: Log,
    /// Where log files are created.
    dir: PathBuf,
    first: Vec<Vec<u8>>,
    last: VecDeque<Vec<u8>>,
    /// The most the log file holds ([`MAX_LOG_BYTES`]).
    log_cap: u64,
}

impl Output {
    /// An empty output whose log file, if one is needed, is created in `dir`.
    pub(crate) fn new(dir: &Path) -> Output {
        Output {
            lines: Vec::new(),
            cur: Vec::new(),
            bytes: 0,
            total_lines: 0,
            log: Log::Memory,
            dir: dir.to_path_buf(),
            first: Vec::new(),
            last: VecDeque::new(),
            log_cap: MAX_LOG_BYTES,
        }
    }

    /// The log file holding the whole output, once there is one.
    pub(crate) fn log_path(&self) -> Option<&Path> {
        match &self.log {
            Log::File { path, .. } => Some(path),
            Log::Memory => None,
        }
    }

    /// The log file this output created, if it did (not the reason it could not).
    pub(crate) fn log_file(&self) -> Option<&Path> {
        match &self.log {
            Log::File { path, made: true, .. } => Some(path),
            _ => None,
        }
    }

    /// Takes the next bytes of output.
    pub(crate) fn push(&mut self, mut b: &[u8]) {
        while !b.is_empty() {
            let (piece, ends) = match memchr(b) {
                Some(i) => (&b[..i], true),
                None => (b, false),
            };
            self.write(piece);
            self.take_partial(piece);
            if ends {
                self.write(b"\n");
                let line = std::mem::take(&mut self.cur);
                self.end_line(line, true);
                b = &b[piece.len() + 1..];
            } else {
                b = &[];
            }
        }
    }

    /// The end of the output: a last line without a newline counts as a line.
    pub(crate) fn finish(&mut self) {
        if !self.cur.is_empty() {
            let line = std::mem::take(&mut self.cur);
            self.end_line(line, false);
        }
        if let Log::File { file: Some(f), .. } = &mut self.log {
            let _ = f.flush();
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        if let Log::File { file, written, dropped, .. } = &mut self.log {
            let room = self.log_cap.saturating_sub(*written).min(bytes.len() as u64) as usize;
            *dropped += (bytes.len() - room) as u64;
            if let Some(f) = file {
                if f.write_all(&bytes[..room]).is_err() {
                    // A full disk: the summary is still right; the file is what could be written.
                    *file = None;
                }
            }
            *written += room as u64;
        }
    }

    fn take_partial(&mut self, piece: &[u8]) {
        if matches!(self.log, Log::File { .. }) {
            let room = RING_LINE_KEEP.saturating_sub(self.cur.len());
            self.cur.extend_from_slice(&piece[..piece.len().min(room)]);
            return;
        }
        self.cur.extend_from_slice(piece);
        // One endless line would otherwise stay in memory: Cline would move to a file once the
        // line ends (its bytes count), so move now; the result is the same.
        if self.bytes + self.cur.len() >= MAX_BYTES_BEFORE_FILE {
            let line = std::mem::take(&mut self.cur);
            self.move_to_file(&line);
            self.cur = line[..line.len().min(RING_LINE_KEEP)].to_vec();
        }
    }

    /// A complete line; `newline`: it ended with one (not the output's unfinished last line).
    fn end_line(&mut self, line: Vec<u8>, newline: bool) {
        self.bytes += line.len();
        self.total_lines += 1;
        if matches!(self.log, Log::Memory)
            && (self.lines.len() >= MAX_LINES_BEFORE_FILE || self.bytes >= MAX_BYTES_BEFORE_FILE)
        {
            // Cline checks before keeping the line: it goes to the file, and the summary.
            self.move_to_file(&line);
            if newline {
                self.write(b"\n");
            }
        }
        match self.log {
            Log::Memory => self.lines.push(line),
            Log::File { .. } => {
                self.last.push_back(line);
                if self.last.len() > SUMMARY_LINES {
                    self.last.pop_front();
                }
            }
        }
    }

    /// Switches to the log file: the lines so far, then `pending` (the line being read).
    fn move_to_file(&mut self, pending: &[u8]) {
        let (path, file) = match create_log(&self.dir) {
            Ok((p, f)) => (p, Some(f)),
            Err(e) => (PathBuf::from(format!("(the log file could not be created: {e})")), None),
        };
        let made = file.is_some();
        self.log = Log::File { path, made, file, written: 0, dropped: 0 };
        // What is in memory (under MAX_BYTES_BEFORE_FILE and a line) goes first.
        let lines = std::mem::take(&mut self.lines);
        for l in &lines {
            self.write(l);
            self.write(b"\n");
        }
        self.write(pending);
        self.first = lines.iter().take(SUMMARY_LINES).cloned().collect();
        // The last lines are those after the first ones: with fewer than twice SUMMARY_LINES
        // (the 512 KB limit reached first), Cline's take both from the same lines — the first
        // ones twice, and a negative count of lines written to the file between them.
        let from = lines.len().saturating_sub(SUMMARY_LINES).max(self.first.len());
        self.last = lines.into_iter().skip(from).collect();
    }

    /// The output as the model gets it (Cline's `processOutput`, or its file summary).
    pub(crate) fn render(&self) -> String {
        match &self.log {
            Log::Memory => process_output(&self.lines),
            Log::File { path, dropped, .. } => {
                let skipped = self.total_lines as i64 - self.first.len() as i64 - self.last.len() as i64;
                let mut summary: Vec<Vec<u8>> = self.first.clone();
                let cut = match dropped {
                    0 => String::new(),
                    n => format!("; the file stops after {} bytes, {n} more were not kept", self.log_cap),
                };
                summary.push(format!("\n... ({skipped} lines written to {}{cut}) ...\n", path.display()).into_bytes());
                summary.extend(self.last.iter().cloned());
                process_output(&summary)
            }
        }
    }
}

fn memchr(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\n')
}

/// Cline's `StandaloneTerminalManager.processOutput` with its default limit of 500 lines.
fn process_output(lines: &[Vec<u8>]) -> String {
    // A line kept to its first bytes may end inside a key (`redact::cut_end`); the others are
    // masked with the whole result (a key may span lines).
    let line = |l: &Vec<u8>| match String::from_utf8_lossy(l) {
        text if l.len() >= RING_LINE_KEEP => crate::run::ui::redact::cut_end(&text).into_owned(),
        text => text.into_owned(),
    };
    let join = |ls: &[Vec<u8>]| ls.iter().map(line).collect::<Vec<_>>().join("\n");
    let s = if lines.len() > LINE_LIMIT {
        let half = LINE_LIMIT / 2;
        format!("{}\n... (output truncated) ...\n{}", join(&lines[..half]), join(&lines[lines.len() - half..]))
    } else {
        join(lines)
    };
    s.trim_matches(parser_core::is_js_whitespace).to_string()
}

/// Removes this user's log files in `dir` older than [`MAX_LOG_AGE`], then the oldest until
/// the rest hold at most `MAX_LOGS_BYTES` (Cline's `ClineTempManager.cleanup`).
fn sweep_logs(dir: &Path, max_total: u64) {
    use std::os::unix::fs::MetadataExt;
    let uid = rustix::process::geteuid().as_raw();
    let now = std::time::SystemTime::now();
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut logs: Vec<(std::time::SystemTime, u64, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(LOG_PREFIX))
        .filter_map(|e| {
            let m = e.path().symlink_metadata().ok()?;
            (m.is_file() && m.uid() == uid).then(|| (m.modified().unwrap_or(now), m.len(), e.path()))
        })
        .collect();
    logs.sort();
    let mut total: u64 = logs.iter().map(|l| l.1).sum();
    for (modified, len, path) in logs {
        let old = now.duration_since(modified).is_ok_and(|age| age > MAX_LOG_AGE);
        if (old || total > max_total) && std::fs::remove_file(&path).is_ok() {
            total -= len;
        }
    }
}

/// A new log file in `dir`, readable by its owner only, never an existing file or a link.
fn create_log(dir: &Path) -> std::io::Result<(PathBuf, File)> {
    use std::os::unix::fs::OpenOptionsExt;
    sweep_logs(dir, MAX_LOGS_BYTES);
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    for attempt in 0..100u32 {
        let name = format!(
            "{LOG_PREFIX}{}-{}-{}.log",
            stamp.as_millis(),
            std::process::id(),
            stamp.subsec_nanos().wrapping_add(attempt)
        );
        let path = dir.join(name);
        match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path) {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no free name"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(text: &[u8], chunk: usize, dir: &Path) -> Output {
        let mut o = Output::new(dir);
        for c in text.chunks(chunk) {
            o.push(c);
        }
        o.finish();
        o
    }

    fn numbers(n: usize) -> String {
        (1..=n).map(|i| format!("{i}\n")).collect()
    }

    /// A log file that could not be created is said in its place, and is no file of this run
    /// (`read_file` may read only those: a path made of the reason is nobody's).
    #[test]
    fn a_log_file_that_could_not_be_made_is_no_log_file() {
        let d = tempfile::tempdir().unwrap();
        let o = feed(numbers(1200).as_bytes(), 4096, &d.path().join("missing"));
        assert!(o.log_path().is_some_and(|p| p.to_string_lossy().starts_with("(the log file could not be created")));
        assert_eq!(o.log_file(), None);
        let o = feed(numbers(1200).as_bytes(), 4096, d.path());
        assert!(o.log_file().is_some_and(Path::exists));
    }

    #[test]
    fn the_log_file_stops_at_its_cap_and_says_how_much_more_came() {
        let d = tempfile::tempdir().unwrap();
        let mut o = Output::new(d.path());
        o.log_cap = 10_000;
        let text = numbers(50_000);
        for c in text.as_bytes().chunks(777) {
            o.push(c);
        }
        o.finish();
        let path = o.log_path().unwrap().to_path_buf();
        let kept = std::fs::read(&path).unwrap();
        assert_eq!(kept, &text.as_bytes()[..10_000]);
        let shown = o.render();
        let more = text.len() - 10_000;
        assert!(shown.contains(&format!("the file stops after 10000 bytes, {more} more were not kept")), "{shown}");
        assert!(shown.ends_with("50000"), "the last lines are still shown");
    }

    #[test]
    fn old_logs_and_the_oldest_past_the_total_are_swept() {
        let d = tempfile::tempdir().unwrap();
        let make = |name: &str, len: u64, hours_ago: u64| {
            let p = d.path().join(format!("{LOG_PREFIX}{name}.log"));
            let f = File::create(&p).unwrap();
            f.set_len(len).unwrap();
            let t = std::time::SystemTime::now() - std::time::Duration::from_secs(hours_ago * 3600);
            f.set_modified(t).unwrap();
            p
        };
        let ancient = make("ancient", 10, 51);
        let (older, newer) = (make("older", 600, 3), make("newer", 600, 1));
        let other = d.path().join("not-ours.log");
        std::fs::write(&other, "x").unwrap();
        sweep_logs(d.path(), 1000);
        assert!(!ancient.exists() && !older.exists(), "over 50 hours, then the oldest past the total");
        assert!(newer.exists() && other.exists());
    }

    #[test]
    fn a_line_kept_to_its_first_bytes_shows_no_start_of_a_key() {
        crate::run::ui::redact::add("Qz-output-line-key-0123456789");
        let cut = format!("{}token=Qz-output-line-k", "x".repeat(RING_LINE_KEEP - 22));
        let lines = [b"ok".to_vec(), cut.into_bytes(), b"token=Qz-output-line-k".to_vec()];
        let got = process_output(&lines);
        assert!(got.ends_with("token=[REDACTED]\ntoken=Qz-output-line-k"), "{}", &got[got.len() - 60..]);
        // A key over several lines (a private key in a secret variable) is masked whole with the
        // result, not its first line alone.
        crate::run::ui::redact::add("Qz-pem-first-line\nQz-pem-second-line");
        let lines = [b"Qz-pem-first-line".to_vec(), b"Qz-pem-second-line".to_vec()];
        assert_eq!(crate::run::ui::redact::apply(&process_output(&lines)), "[REDACTED]");
    }

    #[test]
    fn up_to_500_lines_are_all_shown() {
        let d = tempfile::tempdir().unwrap();
        let o = feed(numbers(500).as_bytes(), 7, d.path());
        assert_eq!(o.render(), numbers(500).trim_end());
        assert!(o.log_path().is_none());
    }

    #[test]
    fn over_500_lines_the_first_and_last_250_are_shown() {
        let d = tempfile::tempdir().unwrap();
        let o = feed(numbers(1000).as_bytes(), 4096, d.path());
        let want = format!(
            "{}\n... (output truncated) ...\n{}",
            (1..=250).map(|i| i.to_string()).collect::<Vec<_>>().join("\n"),
            (751..=1000).map(|i| i.to_string()).collect::<Vec<_>>().join("\n")
        );
        assert_eq!(o.render(), want);
        assert!(o.log_path().is_none(), "1000 lines stay in memory");
    }

    #[test]
    fn past_1000_lines_the_whole_output_is_in_the_log_file() {
        let d = tempfile::tempdir().unwrap();
        let text = numbers(200_000);
        let o = feed(text.as_bytes(), 8192, d.path());
        let path = o.log_path().expect("a log file").to_path_buf();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text, "byte for byte");
        let want = format!(
            "{}\n\n... (199800 lines written to {}) ...\n\n{}",
            (1..=100).map(|i| i.to_string()).collect::<Vec<_>>().join("\n"),
            path.display(),
            (199_901..=200_000).map(|i| i.to_string()).collect::<Vec<_>>().join("\n")
        );
        assert_eq!(o.render(), want);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }

    /// Fifty lines of 12 KB pass 512 KB before 100 lines: each line is in the summary once, and
    /// no count is negative (Cline's shows the first lines twice and "(-N lines written to …)").
    #[test]
    fn past_512_kb_in_under_100_lines_each_line_is_shown_once() {
        let d = tempfile::tempdir().unwrap();
        let text: String = (0..50).map(|i| format!("L{i:02}{}\n", "y".repeat(12 * 1024))).collect();
        let o = feed(text.as_bytes(), 8192, d.path());
        assert!(o.log_path().is_some(), "past 512 KB: a log file");
        let r = o.render();
        for i in 0..50 {
            assert_eq!(r.matches(&format!("L{i:02}")).count(), 1, "line {i}");
        }
        assert!(r.contains("... (0 lines written to ") && !r.contains("(-"), "{}", &r[..80]);
    }

    #[test]
    fn past_512_kb_in_few_lines_the_output_goes_to_the_file_and_memory_stays_bounded() {
        let d = tempfile::tempdir().unwrap();
        // One 3 MB line without a newline, then two short ones.
        let mut text = vec![b'x'; 3 << 20];
        text.extend_from_slice(b"\nend\nlast");
        let mut o = Output::new(d.path());
        for c in text.chunks(8192) {
            o.push(c);
            assert!(o.cur.len() <= MAX_BYTES_BEFORE_FILE, "the endless line is not kept whole");
        }
        o.finish();
        let path = o.log_path().expect("a log file").to_path_buf();
        assert_eq!(std::fs::read(&path).unwrap(), text);
        let r = o.render();
        assert!(
            r.starts_with(&format!("\n... (0 lines written to {}) ...\n", path.display()).trim_start().to_string()),
            "{}",
            &r[..200]
        );
        assert!(r.ends_with("\nend\nlast"), "{}", &r[r.len() - 50..]);
        assert!(r.len() < RING_LINE_KEEP + 1000);
    }
}
