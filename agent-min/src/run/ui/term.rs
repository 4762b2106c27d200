//! Terminal output: streamed text, one line per tool call, approval prompts, a spinner.
//!
//! Colours only when stdout is a terminal and `NO_COLOR` is unset. The spinner runs on stderr,
//! only when stderr is a terminal.

use std::io::{self, BufRead, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// A colour / style.
#[derive(Clone, Copy)]
pub(crate) enum Style {
    /// Tool call lines.
    Tool,
    /// Success outcomes.
    Ok,
    /// Failures and warnings.
    Err,
    /// Secondary text (reasoning, command output).
    Dim,
    /// Headings (completion, replay banner).
    Bold,
}

impl Style {
    fn code(self) -> &'static str {
        match self {
            Style::Tool => "\x1b[36m",
            Style::Ok => "\x1b[32m",
            Style::Err => "\x1b[31m",
            Style::Dim => "\x1b[2m",
            Style::Bold => "\x1b[1m",
        }
    }
}

/// The person's answer to an approval prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Approval {
    /// Go ahead.
    Yes,
    /// Don't; optionally with feedback for the model.
    No(Option<String>),
    /// Go ahead with the proposal as the person is about to edit it (file edits only).
    Edit,
    /// Nobody can answer here (no terminal): the call does not run and the run stops, resumable.
    Unanswered,
}

/// Where a person's answers come from.
enum Input {
    /// Standard input, a terminal.
    Stdin,
    /// The controlling terminal, when standard input is a pipe or a file (context, or the task).
    Tty(io::BufReader<std::fs::File>),
    /// No terminal at all (CI, cron, a detached script): nobody can answer.
    Nobody,
}

impl Input {
    fn detect() -> Input {
        use std::os::unix::fs::OpenOptionsExt;
        if io::stdin().is_terminal() {
            return Input::Stdin;
        }
        let tty = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY | libc::O_CLOEXEC)
            .open("/dev/tty");
        match tty {
            Ok(f) if f.is_terminal() => Input::Tty(io::BufReader::new(f)),
            _ => Input::Nobody,
        }
    }
}

/// Lines of a checklist shown (`Term::checklist`).
pub(crate) const CHECKLIST_LINES: usize = 40;

/// Characters of a checklist's line shown.
const CHECKLIST_LINE_CHARS: usize = 200;
/// The terminal.
pub struct Term {
    sink: Box<dyn Write + Send>,
    color: bool,
    spinner_enabled: bool,
    at_line_start: bool,
    spinner: Option<Spinner>,
    /// What was streamed last, so reasoning and text never share a line.
    streaming: Option<Stream>,
    /// Where answers come from (found at the first question).
    input: Option<Input>,
    /// A question nobody could answer since the last [`Term::take_unanswered`].
    unanswered: Option<String>,
    /// Who answers instead of a person at this terminal (an editor over ACP), if anyone.
    asker: Option<Box<dyn Asker>>,
    /// The editor's buffers, when the editor offers to read or write files for the agent.
    buffers: Option<Box<dyn Buffers>>,
    /// The masking of what streams (a key split across two pieces): holds back an end that may
    /// be a key's start, shown before anything else is.
    masked: crate::run::ui::redact::Streamed,
    /// Told whenever the run waits for the person: the ask's kind and text (Cline's
    /// `Notification` hook, `project/lifecycle.rs`).
    attention: Option<Attention>,
}

/// Files as an editor holds them (ACP's `fs/read_text_file` and `fs/write_text_file`): its
/// buffers, unsaved changes included, and edits made through them. Only ever asked about a
/// path the tools have already checked (inside the workspace, not ignored, approved), and
/// only for a regular text file's contents: the checks stay the agent's.
pub(crate) trait Buffers: Send {
    /// The text of `abs` as the editor has it; `None`: the editor does not read files.
    fn read(&mut self, abs: &std::path::Path) -> Option<Result<String, String>>;
    /// Writes `text` to `abs` through the editor; `None`: the editor does not write files.
    fn write(&mut self, abs: &std::path::Path, text: &str) -> Option<Result<(), String>>;
}

/// Who answers the agent's questions when they are not asked at this terminal: an editor over
/// the Agent Client Protocol. It is asked exactly where the terminal would ask, never elsewhere.
pub(crate) trait Asker: Send {
    /// Whether `what` may run (an edit, a command, a path outside the workspace): asked for the
    /// tool call `call` (its id in the events), or for none (the workspace's MCP servers).
    fn approve(&mut self, call: Option<&str>, what: &str) -> Approval;
    /// The answer to a question for the person (`None`: nobody answers it).
    fn answer(&mut self, question: &str) -> Option<String>;
}

/// What is told when the run waits for the person: the ask's kind and text.
pub(crate) type Attention = Box<dyn FnMut(&str, &str)>;

/// The two kinds of streamed model output.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stream {
    Text,
    Reasoning,
}

impl Term {
    /// Detects colour and spinner support from the environment.
    pub(crate) fn new() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Term {
            sink: Box::new(io::stdout()),
            color: io::stdout().is_terminal() && !no_color,
            spinner_enabled: io::stderr().is_terminal(),
            at_line_start: true,
            spinner: None,
            streaming: None,
            input: None,
            unanswered: None,
            asker: None,
            buffers: None,
            masked: Default::default(),
            attention: None,
        }
    }

    /// Human output on stderr (when stdout carries `--json` events): colours only if stderr is
    /// a terminal and `NO_COLOR` is unset.
    pub(crate) fn stderr() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let tty = io::stderr().is_terminal();
        Term {
            sink: Box::new(io::stderr()),
            color: tty && !no_color,
            spinner_enabled: tty,
            at_line_start: true,
            spinner: None,
            streaming: None,
            input: None,
            unanswered: None,
            asker: None,
            buffers: None,
            masked: Default::default(),
            attention: None,
        }
    }

    /// Output to any writer, without colours or spinner, and nobody to answer questions (for
    /// tests and in-process use).
    pub fn to_writer(sink: Box<dyn Write + Send>) -> Self {
        Term {
            sink,
            color: false,
            spinner_enabled: false,
            at_line_start: true,
            spinner: None,
            streaming: None,
            input: Some(Input::Nobody),
            unanswered: None,
            asker: None,
            buffers: None,
            masked: Default::default(),
            attention: None,
        }
    }

    /// Questions answered by `asker` instead of a person here: the terminal's input is never read.
    pub(crate) fn answered_by(mut self, asker: Box<dyn Asker>) -> Self {
        self.asker = Some(asker);
        self.input = Some(Input::Nobody);
        self
    }

    /// Files are read and written through an editor's buffers where it offers to.
    pub(crate) fn with_buffers(mut self, buffers: Box<dyn Buffers>) -> Self {
        self.buffers = Some(buffers);
        self
    }

    /// The text of `abs` as the editor has it, when an editor reads files for the agent.
    pub(crate) fn buffer_text(&mut self, abs: &std::path::Path) -> Option<Result<String, String>> {
        self.buffers.as_mut()?.read(abs)
    }

    /// Writes `text` to `abs` through the editor, when an editor writes files for the agent.
    pub(crate) fn buffer_write(&mut self, abs: &std::path::Path, text: &str) -> Option<Result<(), String>> {
        self.buffers.as_mut()?.write(abs, text)
    }

    fn paint(&self, style: Style, s: &str) -> String {
        if self.color {
            format!("{}{s}\x1b[0m", style.code())
        } else {
            s.to_string()
        }
    }

    /// Writes `s` after the streamed text held back, if any.
    fn out(&mut self, s: &str) {
        self.show_held();
        self.write(s);
    }

    fn write(&mut self, s: &str) {
        self.stop_spinner();
        if s.is_empty() {
            return;
        }
        let s = crate::run::ui::redact::apply(s);
        let _ = self.sink.write_all(s.as_bytes());
        let _ = self.sink.flush();
        self.at_line_start = s.ends_with('\n');
    }

    /// Ends the current line if something is on it.
    pub(crate) fn newline(&mut self) {
        self.show_held();
        if !self.at_line_start {
            self.write("\n");
        }
    }

    /// Streams model text (control characters made visible: the model must not drive the
    /// terminal); after reasoning, on a line of its own.
    pub(crate) fn text(&mut self, s: &str) {
        self.stream(Stream::Text, s);
    }

    /// Streams reasoning text (dimmed) — or a command's output, which the model controls as
    /// much as its own text: control characters are made visible; after text, on a line of
    /// its own.
    pub(crate) fn reasoning(&mut self, s: &str) {
        self.stream(Stream::Reasoning, s);
    }

    /// Writes a piece of stream `kind`, minus an end that may be the start of a key: a key
    /// split across two pieces would pass the masking half by half.
    fn stream(&mut self, kind: Stream, s: &str) {
        if s.is_empty() {
            return;
        }
        if self.streaming != Some(kind) {
            // After the other stream, on a line of its own (that stream's held text first, in
            // its style).
            if self.streaming.is_some() {
                self.newline();
            }
            self.streaming = Some(kind);
        }
        // The model answers: the spinner goes even when all of the piece is held back.
        self.stop_spinner();
        let now = self.masked.push(&visible(s));
        self.write_streamed(&now);
    }

    /// Shows the streamed text held back (the stream ended, or something else is shown).
    fn show_held(&mut self) {
        let held = self.masked.end();
        self.write_streamed(&held);
    }

    /// Writes streamed text in its stream's style.
    fn write_streamed(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        if self.streaming == Some(Stream::Reasoning) {
            let p = self.paint(Style::Dim, s);
            self.write(&p);
            self.at_line_start = s.ends_with('\n'); // not the colour reset after it
        } else {
            self.write(s);
        }
    }

    /// A full line in a style (control characters made visible: it may quote the model).
    pub(crate) fn line(&mut self, style: Style, s: &str) {
        self.newline();
        self.streaming = None;
        let p = self.paint(style, &visible(s));
        self.out(&format!("{p}\n"));
    }

    /// An informational line.
    pub(crate) fn info(&mut self, s: &str) {
        self.line(Style::Dim, s);
    }

    /// A warning line.
    pub(crate) fn warn(&mut self, s: &str) {
        self.line(Style::Err, s);
    }

    /// One line for a tool call: `● name  key params`.
    pub(crate) fn tool(&mut self, name: &str, summary: &str) {
        self.newline();
        let head = self.paint(Style::Tool, &format!("● {name}"));
        let sep = if summary.is_empty() { "" } else { " " };
        self.out(&format!("{head}{sep}{}\n", visible(summary)));
    }

    /// The outcome line under a tool call.
    pub(crate) fn outcome(&mut self, ok: bool, s: &str) {
        let (style, mark) = if ok { (Style::Ok, "✓") } else { (Style::Err, "✗") };
        self.line(style, &format!("  {mark} {s}"));
    }

    /// The focus chain's new checklist: its count, then its lines (the first
    /// `CHECKLIST_LINES`, each cut at `CHECKLIST_LINE_CHARS`; the model writes it, so it may be
    /// long).
    pub(crate) fn checklist(&mut self, list: &str, done: usize, total: usize) {
        self.line(Style::Dim, &format!("  ☰ Task progress: {done}/{total}"));
        let lines: Vec<&str> = list.lines().collect();
        for l in lines.iter().take(CHECKLIST_LINES) {
            // A line of it as long as a terminal line or so: the model may write one of any length.
            let cut = l.char_indices().nth(CHECKLIST_LINE_CHARS).map_or(l.len(), |(i, _)| i);
            let more = if cut < l.len() { "…" } else { "" };
            self.line(Style::Dim, &format!("    {}{more}", &l[..cut]));
        }
        if lines.len() > CHECKLIST_LINES {
            self.line(Style::Dim, &format!("    … {} more lines", lines.len() - CHECKLIST_LINES));
        }
    }

    /// Shows a block of text (a diff preview, command output), indented.
    pub(crate) fn block(&mut self, s: &str) {
        self.newline();
        let mut buf = String::new();
        for l in s.lines() {
            let style = if l.starts_with('+') && !l.starts_with("+++") {
                Style::Ok
            } else if l.starts_with('-') && !l.starts_with("---") {
                Style::Err
            } else {
                Style::Dim
            };
            buf.push_str("  │ ");
            buf.push_str(&self.paint(style, &visible(l)));
            buf.push('\n');
        }
        self.out(&buf);
    }

    /// Starts the "waiting for the model" spinner (no-op unless stderr is a terminal).
    pub(crate) fn start_spinner(&mut self, label: &str) {
        self.stop_spinner();
        if self.spinner_enabled {
            self.spinner = Some(Spinner::start(label.to_string()));
        }
    }

    /// Stops the spinner if it runs.
    pub(crate) fn stop_spinner(&mut self) {
        if let Some(s) = self.spinner.take() {
            s.stop();
        }
    }

    /// Asks a question and reads one line of the answer — from standard input when it is a
    /// terminal, else from the controlling terminal; `None` at end of input, or when there is no
    /// terminal at all.
    pub(crate) fn prompt(&mut self, question: &str) -> Option<String> {
        if let Some(asker) = self.asker.as_mut() {
            return asker.answer(question);
        }
        // Input typed before the question is shown is not its answer: a command could have
        // pushed `y⏎` into the terminal (TIOCSTI) to approve the next one itself. What is typed
        // once the question is visible is kept.
        match self.input.get_or_insert_with(Input::detect) {
            Input::Stdin => {
                let _ = rustix::termios::tcflush(io::stdin(), rustix::termios::QueueSelector::IFlush);
            }
            Input::Tty(tty) => {
                let _ = rustix::termios::tcflush(tty.get_ref(), rustix::termios::QueueSelector::IFlush);
            }
            Input::Nobody => {}
        }
        self.newline();
        let q = self.paint(Style::Bold, question);
        self.out(&q);
        self.at_line_start = true;
        let mut line = String::new();
        let read = match self.input.get_or_insert_with(Input::detect) {
            Input::Stdin => io::stdin().lock().read_line(&mut line),
            Input::Tty(tty) => tty.read_line(&mut line),
            Input::Nobody => Ok(0),
        };
        match read {
            Ok(0) | Err(_) => {
                self.out("\n");
                None
            }
            Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_string()),
        }
    }

    /// Whether the person answers a question with their next prompt rather than here: an
    /// editor answers approvals ([`Term::answered_by`]) but has no prompt in the middle of a turn.
    pub(crate) fn answers_with_next_prompt(&self) -> bool {
        self.asker.is_some()
    }

    /// Asks a person at this terminal a yes-or-no `question` (no by default), an ask of kind
    /// `source` ([`Term::attention`]): `None` when none can answer (no terminal, or an editor
    /// answers: it has no such question).
    pub(crate) fn ask_yes_no(&mut self, source: &str, question: &str) -> Option<bool> {
        if self.asker.is_some() || self.nobody_answers() {
            return None;
        }
        self.attention(source, question);
        let answer = self.prompt(&format!("  {} [y]es / [N]o: ", visible(question)))?;
        Some(matches!(answer.trim().to_lowercase().as_str(), "y" | "yes"))
    }

    /// Whether nobody can answer a question here: neither standard input nor the process has a
    /// terminal (an editor that answers does).
    pub(crate) fn nobody_answers(&mut self) -> bool {
        if self.asker.is_some() {
            return false;
        }
        matches!(self.input.get_or_insert_with(Input::detect), Input::Nobody)
    }

    /// Sets what is told when the run waits for the person ([`Term::attention`]).
    pub(crate) fn on_attention(&mut self, notify: Attention) {
        self.attention = Some(notify);
    }

    /// The run is about to wait for the person: an ask of kind `source` (Cline's ask types:
    /// `tool`, `command`, `use_mcp_server`, `followup`, `mistake_limit_reached`) saying
    /// `message`.
    pub(crate) fn attention(&mut self, source: &str, message: &str) {
        if let Some(notify) = self.attention.as_mut() {
            notify(source, message);
        }
    }

    /// Records that `question` needed a person and nobody could answer; the loop stops there.
    pub(crate) fn note_unanswered(&mut self, question: &str) {
        self.newline();
        let line = format!("  {} — needs a person's answer, and there is no terminal to ask on", visible(question));
        let line = self.paint(Style::Err, &line);
        self.out(&format!("{line}\n"));
        self.unanswered = Some(question.to_string());
    }

    /// The question nobody could answer since the last call, if any.
    pub(crate) fn take_unanswered(&mut self) -> Option<String> {
        self.unanswered.take()
    }

    /// Asks for approval: `y` approves; `n`, an empty line or end of input denies; any other text
    /// denies and is sent to the model as feedback. Without a terminal: [`Approval::Unanswered`].
    pub(crate) fn approve(&mut self, call: Option<&str>, what: &str) -> Approval {
        if let Some(asker) = self.asker.as_mut() {
            return asker.approve(call, what);
        }
        if self.nobody_answers() {
            self.note_unanswered(what);
            return Approval::Unanswered;
        }
        match self.prompt(&approval_question(what)) {
            None => Approval::No(None),
            Some(a) => match a.trim().to_lowercase().as_str() {
                "y" | "yes" => Approval::Yes,
                "" | "n" | "no" => Approval::No(None),
                _ => Approval::No(Some(a.trim().to_string())),
            },
        }
    }
}

impl Term {
    /// Asks for approval of a file edit: like [`Term::approve`], and `e` opens the proposal in
    /// the person's editor before it is saved.
    pub(crate) fn approve_edit(&mut self, call: &str, what: &str) -> Approval {
        if let Some(asker) = self.asker.as_mut() {
            return asker.approve(Some(call), what);
        }
        if self.nobody_answers() {
            self.note_unanswered(what);
            return Approval::Unanswered;
        }
        let q =
            format!("  {} — approve? [y]es / [n]o / [e]dit first / or type feedback for the model: ", visible(what));
        match self.prompt(&q) {
            None => Approval::No(None),
            Some(a) => match a.trim().to_lowercase().as_str() {
                "e" | "edit" => Approval::Edit,
                "y" | "yes" => Approval::Yes,
                "" | "n" | "no" => Approval::No(None),
                _ => Approval::No(Some(a.trim().to_string())),
            },
        }
    }
}

/// The approval prompt for `what`, with its control characters made visible.
fn approval_question(what: &str) -> String {
    format!("  {} — approve? [y]es / [n]o / or type feedback for the model: ", visible(what))
}

/// `s` with control characters other than `\n`, `\t` and the `\r` of a `\r\n` (a lone `\r` or
/// an escape sequence could overwrite what a prompt says will run, or retitle and reprogram the
/// terminal), and bidirectional overrides, shown escaped. Our own styling is added after this.
pub(crate) fn visible(s: &str) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| {
        (c.is_control() && c != '\n' && c != '\t') || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !s.contains(hidden) || !s.replace("\r\n", "\n").contains(hidden) {
        return s.into();
    }
    let mut out = String::with_capacity(s.len() + 8);
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => out.push(c),
            '\r' => out.push_str("\\r"),
            c if hidden(c) && (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if hidden(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out.into()
}

/// A line of JSON with the characters a terminal acts on that JSON leaves raw — C1 controls
/// (`U+009B` starts a CSI sequence) and the bidirectional overrides and isolates — written as
/// `\uXXXX` escapes: the same JSON value, safe on a terminal (`--json` read with `tail -f`).
/// JSON escapes every C0 control itself, and these characters can stand only inside strings.
pub(crate) fn json_visible(json: &str) -> std::borrow::Cow<'_, str> {
    let acted_on = |c: char| matches!(c, '\u{80}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !json.contains(acted_on) {
        return json.into();
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match c {
            c if acted_on(c) => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.into()
}

/// What a stream held back is shown when the terminal goes (the process ends with it).
impl Drop for Term {
    fn drop(&mut self) {
        self.show_held();
    }
}

impl Default for Term {
    fn default() -> Self {
        Self::new()
    }
}

struct Spinner {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<()>,
}

impl Spinner {
    fn start(label: String) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
            let mut i = 0;
            while !flag.load(Ordering::Relaxed) {
                eprint!("\r{} {label}", FRAMES[i % FRAMES.len()]);
                i += 1;
                std::thread::sleep(Duration::from_millis(80));
            }
            eprint!("\r\x1b[2K");
        });
        Spinner { stop, handle }
    }

    fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.handle.join();
    }
}

/// A writer whose bytes a test reads back (a `Term` or `Events` built on a clone of it).
#[cfg(test)]
#[derive(Clone, Default)]
pub(crate) struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);

#[cfg(test)]
impl Write for Captured {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
impl Captured {
    /// Everything written so far, as text.
    pub(crate) fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checklist_is_shown_bounded_and_escaped() {
        let buf = Captured::default();
        let mut t = Term::to_writer(Box::new(buf.clone()));
        let long = "é".repeat(5000);
        let mut list = vec![format!("- [x] {long}"), "- [ ] \x1b[31mred".to_string()];
        list.extend((0..100).map(|i| format!("- [ ] item {i}")));
        t.checklist(&list.join("\n"), 1, 102);
        let out = buf.text();
        assert!(out.starts_with("  ☰ Task progress: 1/102\n"), "{out}");
        let first = out.lines().nth(1).unwrap();
        assert_eq!(first, format!("    - [x] {}…", "é".repeat(194)));
        assert!(!out.contains('\x1b'), "control characters are made visible: {out:?}");
        assert_eq!(out.lines().count(), 1 + CHECKLIST_LINES + 1, "{out}");
        assert!(out.ends_with("    … 62 more lines\n"), "{out}");
    }

    #[test]
    fn reasoning_and_text_never_share_a_line() {
        let buf = Captured::default();
        let mut t = Term::to_writer(Box::new(buf.clone()));
        t.reasoning("Look ");
        t.reasoning("first.");
        t.text("Let me ");
        t.text("read it.");
        t.reasoning("Hmm.\n");
        t.text("Done.");
        let out = buf.text();
        assert_eq!(out, "Look first.\nLet me read it.\nHmm.\nDone.");
    }

    #[test]
    fn a_key_split_across_streamed_pieces_never_shows_in_part() {
        crate::run::ui::redact::add("Qz-term-split-key-0123456789");
        let buf = Captured::default();
        let mut t = Term::to_writer(Box::new(buf.clone()));
        t.color = true;
        t.text("key=Qz-term-sp");
        assert_eq!(buf.text(), "key=", "the key's start is held back");
        t.text("lit-key-0123456789 ok\n");
        // Held text that was not a key goes out before anything else, in its stream's style.
        t.reasoning("so Q");
        t.tool("read_file", "a.rs");
        let out = buf.text();
        assert_eq!(
            out, "key=[REDACTED] ok\n\x1b[2mso \x1b[0m\x1b[2mQ\x1b[0m\n\x1b[36m● read_file\x1b[0m a.rs\n",
            "{out:?}"
        );
        // A stream that ends inside a key shows no part of it, when the terminal goes too.
        t.text("last Qz-term-split-k");
        drop(t);
        assert!(buf.text().ends_with("last [REDACTED]"), "{:?}", buf.text());
    }

    #[test]
    fn what_is_shown_for_approval_cannot_hide_behind_control_characters() {
        let evil = "rm -rf ~\r\x1b[2Kls -l\x1b]0;t\x07 \u{202e}txt.sh";
        let q = approval_question(evil);
        assert!(!q.contains(['\r', '\x1b', '\x07', '\u{202e}']), "{q:?}");
        assert!(q.contains("rm -rf ~\\r\\x1b[2Kls -l"), "{q:?}");
        let buf = Captured::default();
        let mut t = Term::to_writer(Box::new(buf.clone()));
        t.block("+ok\tline\n+x\ry\x1b[1A");
        t.tool("execute_command", evil);
        let out = buf.text();
        assert!(!out.contains(['\r', '\x1b', '\x07', '\u{202e}']), "{out:?}");
        assert!(out.contains("+ok\tline\n") && out.contains("x\\ry\\x1b[1A"), "{out:?}");
    }

    #[test]
    fn model_text_and_command_output_cannot_drive_the_terminal() {
        let buf = Captured::default();
        let mut t = Term::to_writer(Box::new(buf.clone()));
        t.color = true; // our own styling stays
        t.text("title\x1b]0;pwned\x07 \x1b[2J\r\nnext\tline\rover\u{202e}\n");
        t.reasoning("out\x1b[31mred\x1bc\n");
        let out = buf.text();
        let escapes: Vec<_> = out.match_indices('\x1b').map(|(i, _)| &out[i..(i + 4).min(out.len())]).collect();
        assert_eq!(escapes, ["\x1b[2m", "\x1b[0m"], "only our dim style and its reset: {out:?}");
        assert!(!out.contains(['\x07', '\u{202e}']), "{out:?}");
        assert!(out.contains("title\\x1b]0;pwned\\x07 \\x1b[2J\r\nnext\tline\\rover"), "{out:?}");
        assert!(out.contains("out\\x1b[31mred\\x1bc\n"), "{out:?}");
    }
}
