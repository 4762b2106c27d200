//! `search_files(path, regex, file_pattern?)` as Cline runs it — `rg --json -e REGEX --glob
//! PATTERN --context 1 DIR` — with ripgrep's own crates instead of its binary: the walker of
//! [`super::walk`] (hidden files skipped, as ripgrep does), `file_pattern` as ripgrep's `--glob`
//! (globset: linear in the name), ripgrep's searcher and regex engine (binary files stop at
//! their first NUL). Results are Cline's `formatResults`: grouped by file, one context line
//! each side, `│----` separators, at most 300 results and 0.25 MB.

use std::path::{Component, Path, PathBuf};

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::overrides::{Override, OverrideBuilder};

use crate::run::tools::fsx;
use crate::run::ui::interrupt;

use super::{check_path, tool_error, walk, Access, Call, Ctx, Outcome};

/// The most memory a search's lazy DFA may take for its cache (`dfa_size_limit`). ripgrep's
/// default, 1,000 MB, bounds a separate process in Cline, which it can kill; here it is the
/// agent's own memory: a short regex such as `a[ab]{22}c` over 4 MiB of text filled ~390 MB.
/// Past the limit the engine clears its cache and goes on (slower, never wrong).
const DFA_CACHE: usize = 16 << 20;

/// The most a compiled regex may take (`size_limit`): ripgrep's default, so that what Cline's
/// ripgrep accepts is accepted (`\w{1000}` takes more than 16 MiB); one over it is refused with
/// ripgrep's own error.
const COMPILED: usize = 100 << 20;

/// The matcher for the model's `regex`, as ripgrep builds it (lines end at `\n`), bounded in
/// memory ([`DFA_CACHE`], [`COMPILED`]).
fn matcher(pattern: &str) -> Result<RegexMatcher, grep_regex::Error> {
    RegexMatcherBuilder::new()
        .line_terminator(Some(b'\n'))
        .size_limit(COMPILED)
        .dfa_size_limit(DFA_CACHE)
        .build(pattern)
}

/// Cline's `MAX_RESULTS`.
pub(crate) const MAX_RESULTS: usize = 300;

/// Cline reads at most `MAX_RESULTS * 5` lines of ripgrep's JSON output.
const MAX_JSON_LINES: usize = MAX_RESULTS * 5;

/// Cline's `MAX_RIPGREP_MB`, in bytes.
const MAX_BYTES: usize = 256 * 1024;

/// The most the searcher holds of a file at once (`heap_limit`): files of any size are
/// streamed, as ripgrep searches them, but a line (with its context) longer than this ends that
/// file's search there, said in a note. Bounds the agent's memory where ripgrep's would be its
/// own process's.
const MAX_HELD: usize = fsx::MAX_FILE_BYTES as usize;

pub(super) fn run(call: &Call, ctx: &mut Ctx<'_>) -> Outcome {
    let path = call.param("path").unwrap_or_default();
    let pattern = call.param("regex").unwrap_or_default();
    let glob = call.param("file_pattern");
    ctx.term
        .tool("search_files", &format!("/{pattern}/ in {path}{}", glob.map(|g| format!(" ({g})")).unwrap_or_default()));
    let matcher = match matcher(pattern) {
        Ok(m) => m,
        Err(e) => {
            let msg = format!("Error searching files: the regex {pattern:?} is not valid (ripgrep's Rust syntax): {e}");
            ctx.term.outcome(false, "invalid regex");
            return Outcome::Failure { text: tool_error(&msg), mistake: true };
        }
    };
    let r = match check_path(ctx, path, Access::Read, &format!("Search {path}"), None) {
        Ok(r) => r,
        Err(o) => return o,
    };
    if std::fs::symlink_metadata(&r.abs).is_err() {
        // Cline's ripgrep fails on a missing path and its handler counts a mistake (answering
        // `Found 0 results.`, which would tell the model the path holds no match).
        let msg = format!("Error searching files: File not found: {}", r.abs.display());
        ctx.term.outcome(false, "no such path");
        return Outcome::Failure { text: tool_error(&msg), mistake: true };
    }
    let ignored = crate::run::tools::clineignore::ClineIgnore::load(ctx.ws.root());
    // A `.clineignore` that cannot be used blocks every file: said so, not `Found 0 results.`,
    // which would tell the model the code holds no match.
    if let Some(why) = ignored.unusable() {
        ctx.term.outcome(false, &format!("blocked: {why}"));
        return Outcome::Failure {
            text: tool_error(&crate::run::prompt::cline_ignore_unusable(path, why)),
            mistake: false,
        };
    }
    let skipped = walk::Skipped::default();
    let found =
        match search(ctx.ws.root(), &r.abs, &matcher, glob.unwrap_or("*"), &|p| ignored.allows_path(p), &skipped) {
            Ok(found) => found,
            Err(e) => {
                let msg = format!("Error searching files: {e}");
                ctx.term.outcome(false, &msg);
                return Outcome::Failure { text: tool_error(&msg), mistake: true };
            }
        };
    ctx.term.outcome(true, &format!("{} results", found.hits.len()));
    let mut notes = super::say_skipped(ctx.term, ctx.memory, &skipped);
    for file in &found.cut_short {
        let shown = relative(ctx.ws.root(), file);
        let note = format!(
            "{shown} was searched only up to a line longer than {} MiB (the most agent-min holds of one file at once); matches after it are not shown.",
            MAX_HELD >> 20
        );
        ctx.term.warn(&note);
        notes.push_str(&format!("\n\nNote: {note}"));
    }
    Outcome::Success(format!("{}{notes}", format_results(&found.hits, ctx.ws.root())))
}

/// What a search found.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// The matches, in ripgrep's order.
    pub hits: Vec<Hit>,
    /// Files whose search stopped at a line over [`MAX_HELD`].
    pub cut_short: Vec<PathBuf>,
}

/// One match and the context lines Cline gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    file: PathBuf,
    text: String,
    /// The context line above a file's first match, shown before it in its own file's block
    /// (Cline gives it to the previous file's last match, in the wrong file's block).
    before: Vec<String>,
    /// Cline gives every context line to the latest match, as its `afterContext` (a context
    /// line above a match comes after the previous match in ripgrep's output, and has a larger
    /// line number).
    after: Vec<String>,
}

/// Collects a file's matches and context in ripgrep's order, counting the JSON lines ripgrep
/// would print (a `begin`, each match and context line, an `end`).
struct Collect<'a> {
    file: &'a Path,
    hits: &'a mut Vec<Hit>,
    json_lines: &'a mut usize,
    /// Bytes of line text kept so far, over all files.
    kept: &'a mut usize,
    /// The index in `hits` of this file's first match.
    first: usize,
    begun: bool,
    /// Context read before this file's first match.
    before: Vec<String>,
}

impl Collect<'_> {
    /// Counts one JSON line (and the file's `begin` before its first); false once Cline's cap
    /// is reached.
    fn line(&mut self) -> bool {
        let needed = if self.begun { 1 } else { 2 };
        self.begun = true;
        if *self.json_lines + needed > MAX_JSON_LINES {
            *self.json_lines = MAX_JSON_LINES;
            return false;
        }
        *self.json_lines += needed;
        true
    }
}

impl Collect<'_> {
    /// A line's text as the result shows it (trailing whitespace trimmed), within bounded
    /// memory: a line that could never fit the 0.25 MB result is cut (it still does not fit),
    /// and once the lines kept reach 0.25 MB the rest are kept empty — the result stops before
    /// them, so it is the same.
    fn keep(&mut self, bytes: &[u8]) -> String {
        if *self.kept >= MAX_BYTES {
            return String::new();
        }
        let text = String::from_utf8_lossy(bytes);
        let t = text.trim_end_matches(parser_core::is_js_whitespace);
        if t.len() > MAX_BYTES {
            let mut cut = MAX_BYTES;
            while !t.is_char_boundary(cut) {
                cut -= 1;
            }
            *self.kept += cut;
            // Kept to its first bytes, the line may end inside a key.
            return crate::run::ui::redact::cut_end(&t[..cut]).into_owned();
        }
        *self.kept += t.len();
        t.to_string()
    }
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        if !self.line() {
            return Ok(false);
        }
        let text = self.keep(m.bytes());
        let before = std::mem::take(&mut self.before);
        self.hits.push(Hit { file: self.file.to_path_buf(), text, before, after: Vec::new() });
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> Result<bool, Self::Error> {
        if !self.line() {
            return Ok(false);
        }
        // Context above a file's first match: Cline drops it for the first file and gives it
        // to the previous file's last match otherwise; we show it before that first match.
        let text = self.keep(c.bytes());
        if self.hits.len() > self.first {
            if let Some(h) = self.hits.last_mut() {
                h.after.push(text);
            }
        } else {
            self.before.push(text);
        }
        Ok(true)
    }

    fn finish(&mut self, _: &Searcher, _: &grep_searcher::SinkFinish) -> Result<(), Self::Error> {
        if self.begun && *self.json_lines < MAX_JSON_LINES {
            *self.json_lines += 1;
        }
        Ok(())
    }
}

/// Searches `root` (a directory or one file) the way Cline's ripgrep call does, with the ignore
/// rules from the workspace `top` down ([`walk::builder`]), over the files `allowed` accepts
/// (`.clineignore` leaves files out); what the bound on ignore files left out is said in
/// `skipped` ([`walk`]).
pub(crate) fn search(
    top: &Path,
    root: &Path,
    matcher: &RegexMatcher,
    glob: &str,
    allowed: &dyn Fn(&Path) -> bool,
    skipped: &walk::Skipped,
) -> Result<Found, String> {
    let bad = |e: ignore::Error| format!("the file_pattern {glob:?} is not a valid glob: {e}");
    let mut overrides = OverrideBuilder::new(root);
    overrides.add(glob).map_err(bad)?;
    let pattern = overrides.build().map_err(bad)?;
    // ripgrep's --glob overrides every ignore rule (Cline's `--glob *` searches .venv/ and
    // gitignored files); here it only filters the files the ignore rules let through.
    let walker = walk::builder(top, root, true, skipped).sort_by_file_path(|a, b| a.cmp(b)).build();
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .before_context(1)
        .after_context(1)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .heap_limit(Some(MAX_HELD))
        .build();
    let mut raw = Vec::new();
    let mut cut_short = Vec::new();
    let (mut json_lines, mut kept) = (0usize, 0usize);
    for entry in walker.filter_map(Result::ok) {
        if json_lines >= MAX_JSON_LINES || interrupt::work_stopped() {
            break;
        }
        // A file given as the path itself is searched whatever the pattern, as ripgrep does.
        let wanted = entry.depth() == 0 || globbed(&pattern, root, entry.path());
        if !entry.file_type().is_some_and(|t| t.is_file()) || !wanted || !allowed(entry.path()) {
            continue;
        }
        // Only regular files: never a FIFO or a device, nor a link swapped in since the walk
        // saw a file there (the walk follows none). Streamed from the one open file.
        let Ok(file) = fsx::open_checked(entry.path()) else { continue };
        let first = raw.len();
        let mut sink = Collect {
            file: entry.path(),
            hits: &mut raw,
            json_lines: &mut json_lines,
            kept: &mut kept,
            first,
            begun: false,
            before: Vec::new(),
        };
        if let Err(e) = searcher.search_reader(matcher, Stoppable(&file), &mut sink) {
            // The line buffer's limit (a read error is ripgrep's too: it goes on).
            if e.to_string().contains("allocation limit") {
                cut_short.push(entry.path().to_path_buf());
            }
        }
    }
    Ok(Found { hits: raw, cut_short })
}

/// A file read until the turn is stopped ([`interrupt::work_stopped`]: a cancel, the
/// `--timeout` watchdog): a search through gigabytes ends with the turn, as a command does.
struct Stoppable<'a>(&'a std::fs::File);

impl std::io::Read for Stoppable<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if interrupt::work_stopped() {
            return Err(std::io::Error::other("the turn was stopped"));
        }
        (&mut &*self.0).read(buf)
    }
}

/// Whether ripgrep's `--glob` set `pattern` lets it search `file` under `root`: neither the file
/// nor a directory on the way to it is excluded (`Match::Ignore`: a `!` glob matches it, or —
/// for a file — the set has globs to include and none matches). With only `!` globs, every
/// other file is searched (`Match::None`), as ripgrep's `--glob '!*.md'` searches all but
/// Markdown.
fn globbed(pattern: &Override, root: &Path, file: &Path) -> bool {
    if pattern.matched(file, false).is_ignore() {
        return false;
    }
    let dirs = file.ancestors().skip(1).take_while(|d| *d != root && d.starts_with(root));
    dirs.map(|d| pattern.matched(d, true)).all(|m| !m.is_ignore())
}

/// `path.relative(from, to)` for absolute, normalised paths.
fn relative(from: &Path, to: &Path) -> String {
    let (f, t): (Vec<Component<'_>>, Vec<Component<'_>>) = (from.components().collect(), to.components().collect());
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); f.len() - common];
    parts.extend(t[common..].iter().map(|c| c.as_os_str().to_string_lossy().into_owned()));
    parts.join("/")
}

/// `key` as a JavaScript array index (`0`, or digits without a leading zero, below 2³² − 1),
/// which an object lists before its other keys.
fn array_index(key: &str) -> Option<u32> {
    let canonical = key == "0" || (!key.starts_with('0') && !key.is_empty() && key.bytes().all(|b| b.is_ascii_digit()));
    key.parse::<u32>().ok().filter(|&n| canonical && n < u32::MAX)
}

/// Cline's `formatResults`, paths relative to the workspace root.
pub(crate) fn format_results(results: &[Hit], cwd: &Path) -> String {
    let mut out = if results.len() >= MAX_RESULTS {
        format!("Showing first {MAX_RESULTS} of {MAX_RESULTS}+ results. Use a more specific search if necessary.\n\n")
    } else if results.len() == 1 {
        "Found 1 result.\n\n".to_string()
    } else {
        format!("Found {} results.\n\n", results.len())
    };
    // Grouped by file, in the order files first appear.
    let mut groups: Vec<(String, Vec<&Hit>)> = Vec::new();
    for h in results.iter().take(MAX_RESULTS) {
        let rel = relative(cwd, &h.file);
        match groups.iter_mut().find(|g| g.0 == rel) {
            Some(g) => g.1.push(h),
            None => groups.push((rel, vec![h])),
        }
    }
    // Cline walks them with `Object.entries`, which lists a name that is an array index (a
    // root-level file called `2`) first, by its number.
    groups.sort_by_key(|(file, _)| array_index(file).map_or((1, 0), |n| (0, n)));
    let mut limit_reached = false;
    'files: for (file, hits) in &groups {
        let head = format!("{file}\n│----\n");
        if out.len() + head.len() >= MAX_BYTES {
            limit_reached = true;
            break;
        }
        out.push_str(&head);
        for (i, h) in hits.iter().enumerate() {
            let mut block = String::new();
            for line in h.before.iter().chain([&h.text]).chain(&h.after) {
                let l = format!("│{}\n", line.trim_end_matches(parser_core::is_js_whitespace));
                if out.len() + block.len() + l.len() >= MAX_BYTES {
                    limit_reached = true;
                    break 'files;
                }
                block.push_str(&l);
            }
            out.push_str(&block);
            if i + 1 < hits.len() {
                if out.len() + "│----\n".len() >= MAX_BYTES {
                    limit_reached = true;
                    break 'files;
                }
                out.push_str("│----\n");
            }
            if out.len() >= MAX_BYTES {
                limit_reached = true;
                break 'files;
            }
        }
        if out.len() + "│----\n\n".len() >= MAX_BYTES {
            limit_reached = true;
            break;
        }
        out.push_str("│----\n\n");
    }
    if limit_reached {
        let note =
            "\n[Results truncated due to exceeding the 0.25MB size limit. Please use a more specific search pattern.]";
        if out.len() + note.len() < MAX_BYTES {
            out.push_str(note);
        }
    }
    out.trim_matches(parser_core::is_js_whitespace).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::test_files::tree;

    fn matcher(re: &str) -> RegexMatcher {
        super::matcher(re).unwrap()
    }

    fn run_search(d: &Path, re: &str, glob: &str) -> String {
        format_results(&search(d, d, &matcher(re), glob, &|_| true, &walk::Skipped::default()).unwrap().hits, d)
    }

    #[test]
    fn clines_format_with_context_and_separators() {
        let d = tree(&[("src/a.rs", "one\ntodo first\nthree\nfour\nfive\ntodo second\n"), ("b.txt", "todo b\n")]);
        assert_eq!(
            run_search(d.path(), "todo", "*"),
            // As Cline shows ripgrep's output: every context line after the latest match (so
            // "five", above the second match, ends the first), except a file's leading one,
            // shown before its first match in its own block.
            "Found 3 results.\n\nb.txt\n│----\n│todo b\n│----\n\nsrc/a.rs\n│----\n│one\n│todo first\n│three\n│five\n│----\n│todo second\n│----"
        );
    }

    #[test]
    fn a_files_leading_context_line_is_in_its_own_block() {
        // Cline would show "above b" in a.txt's block, after "hit a".
        let d = tree(&[("a.txt", "hit a\n"), ("b.txt", "above b\nhit b\n")]);
        assert_eq!(
            run_search(d.path(), "hit", "*"),
            "Found 2 results.\n\na.txt\n│----\n│hit a\n│----\n\nb.txt\n│----\n│above b\n│hit b\n│----"
        );
    }

    #[test]
    fn adjacent_matches_share_context_as_ripgrep_emits_it() {
        let d = tree(&[("a", "x\nhit 1\nhit 2\ny\n")]);
        assert_eq!(
            run_search(d.path(), "hit", "*"),
            "Found 2 results.\n\na\n│----\n│x\n│hit 1\n│----\n│hit 2\n│y\n│----"
        );
    }

    #[test]
    fn respects_gitignore_ignore_hidden_and_the_glob() {
        let d = tree(&[
            (".venv/lib/site.py", "needle\n"),
            ("build/gen.rs", "needle\n"),
            ("docs/x.md", "needle\n"),
            ("src/main.rs", "needle\n"),
            ("src/deep/lib.rs", "needle\n"),
            ("notes.txt", "needle\n"),
        ]);
        std::fs::write(d.path().join(".gitignore"), "build/\n").unwrap();
        std::fs::write(d.path().join(".ignore"), "docs/\n").unwrap();
        let all = run_search(d.path(), "needle", "*");
        assert!(all.starts_with("Found 3 results."), "{all}");
        assert!(!all.contains(".venv") && !all.contains("build/") && !all.contains("docs/"), "{all}");
        let rs = run_search(d.path(), "needle", "*.rs");
        assert!(rs.starts_with("Found 2 results.") && rs.contains("src/deep/lib.rs"), "{rs}");
        let anchored = run_search(d.path(), "needle", "src/*.rs");
        assert!(anchored.starts_with("Found 1 result.") && anchored.contains("src/main.rs"), "{anchored}");
    }

    #[test]
    fn a_glob_that_only_excludes_searches_everything_else_as_ripgrep_does() {
        let d = tree(&[
            ("docs/x.md", "needle\n"),
            ("src/main.rs", "needle\n"),
            ("src/gen/out.rs", "needle\n"),
            ("notes.txt", "needle\n"),
        ]);
        let no_md = run_search(d.path(), "needle", "!*.md");
        assert!(no_md.starts_with("Found 3 results.") && !no_md.contains("x.md"), "{no_md}");
        // An excluded directory is not entered (ripgrep prunes it).
        let no_gen = run_search(d.path(), "needle", "!gen");
        assert!(no_gen.starts_with("Found 3 results.") && !no_gen.contains("out.rs"), "{no_gen}");
    }

    #[test]
    fn files_of_any_size_are_searched_and_a_line_over_the_bound_is_said() {
        let d = tempfile::tempdir().unwrap();
        let mut big = "filler line\n".repeat((fsx::MAX_FILE_BYTES as usize) / 12 + 1000);
        big.push_str("needle at the end\n");
        std::fs::write(d.path().join("big.log"), &big).unwrap();
        let mut one_line = "x".repeat(MAX_HELD + 1);
        one_line.push_str("\nneedle after it\n");
        std::fs::write(d.path().join("long.min.js"), &one_line).unwrap();
        let found = search(d.path(), d.path(), &matcher("needle"), "*", &|_| true, &walk::Skipped::default()).unwrap();
        let text = format_results(&found.hits, d.path());
        assert!(
            text.starts_with("Found 1 result.") && text.contains("big.log\n│----\n│filler line\n│needle at the end"),
            "{text}"
        );
        assert_eq!(found.cut_short, [d.path().join("long.min.js")]);
    }

    #[test]
    fn caps_at_300_results_with_clines_header() {
        let body: String = (0..400).map(|i| format!("hit {i}\n")).collect();
        let d = tree(&[("many.txt", &body)]);
        let out = run_search(d.path(), "hit", "*");
        assert!(
            out.starts_with(
                "Showing first 300 of 300+ results. Use a more specific search if necessary.\n\nmany.txt\n"
            ),
            "{}",
            &out[..200]
        );
        assert_eq!(out.matches("│hit ").count(), 300);
    }

    #[test]
    fn no_results_and_bad_globs() {
        let d = tree(&[("a", "x\n")]);
        assert_eq!(run_search(d.path(), "nothing", "*"), "Found 0 results.");
        assert!(search(d.path(), d.path(), &matcher("x"), "a{", &|_| true, &walk::Skipped::default()).is_err());
    }

    #[allow(unsafe_code)] // mkfifo(3): the FIFO this test needs
    #[test]
    fn never_follows_symlinks_nor_opens_fifos_and_stops_binary_files_at_nul() {
        let outside = tree(&[("secret.txt", "needle\n")]);
        let d = tree(&[("bin", "needle\n\0needle\n"), ("text", "needle\n")]);
        std::os::unix::fs::symlink(outside.path(), d.path().join("out")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.txt"), d.path().join("s.txt")).unwrap();
        let c = std::ffi::CString::new(d.path().join("fifo").to_str().unwrap()).unwrap();
        // SAFETY: mkfifo takes a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let out = run_search(d.path(), "needle", "*");
        assert!(!out.contains("secret") && !out.contains("s.txt"), "{out}");
        // A binary file found by the walk is skipped at its NUL, as ripgrep does.
        assert_eq!(out, "Found 1 result.\n\ntext\n│----\n│needle\n│----");
    }

    #[test]
    fn a_file_given_as_the_path_is_searched_whatever_the_pattern() {
        let d = tree(&[("src/a.rs", "needle\n"), (".hidden.txt", "needle\n")]);
        let one = |rel: &str, glob: &str| {
            format_results(
                &search(d.path(), &d.path().join(rel), &matcher("needle"), glob, &|_| true, &walk::Skipped::default())
                    .unwrap()
                    .hits,
                d.path(),
            )
        };
        assert_eq!(one("src/a.rs", "*"), "Found 1 result.\n\nsrc/a.rs\n│----\n│needle\n│----");
        // As ripgrep does with a path given explicitly: no glob or hidden rule applies to it.
        assert!(one("src/a.rs", "*.md").starts_with("Found 1 result."));
        assert!(one(".hidden.txt", "*").starts_with("Found 1 result."));
    }

    /// Cline's `Object.entries` lists a file whose name is an array index first, by number.
    #[test]
    fn files_named_as_array_indices_come_first_as_in_javascript() {
        let hit = |f: &str| Hit { file: PathBuf::from("/w").join(f), text: "x".into(), before: vec![], after: vec![] };
        let hits: Vec<Hit> = ["a.txt", "10", "007", "2", "sub/3", "4294967295", "0"].into_iter().map(hit).collect();
        let out = format_results(&hits, Path::new("/w"));
        let files: Vec<&str> = out.lines().skip(2).filter(|l| !l.is_empty() && !l.starts_with('│')).collect();
        assert_eq!(files, ["0", "2", "10", "a.txt", "007", "sub/3", "4294967295"]);
        assert_eq!((array_index("4294967294"), array_index("-1"), array_index("1e3")), (Some(4294967294), None, None));
    }

    #[test]
    fn huge_lines_are_cut_to_the_result_cap_and_the_result_is_unchanged() {
        let long = "x".repeat(600 * 1024);
        let d = tree(&[("a.min.js", &format!("needle {long}\n")), ("b.txt", "needle\n")]);
        let hits =
            search(d.path(), d.path(), &matcher("needle"), "*", &|_| true, &walk::Skipped::default()).unwrap().hits;
        assert!(hits.iter().all(|h| h.text.len() <= MAX_BYTES), "kept within the cap");
        let out = format_results(&hits, d.path());
        // The long line never fits (as in Cline): the result stops there with the note.
        assert!(
            out.starts_with("Found 2 results.\n\na.min.js\n│----")
                && out.ends_with("0.25MB size limit. Please use a more specific search pattern.]"),
            "{}",
            &out[..200.min(out.len())]
        );
    }

    #[test]
    fn a_missing_path_is_a_mistake_not_zero_results() {
        use crate::run::tools::testutil::{call, with_ctx};
        let d = tree(&[("a.rs", "needle\n")]);
        let ws = crate::run::tools::paths::Workspace::new(d.path()).unwrap();
        let search =
            |path: &str| with_ctx(&ws, |ctx| run(&call("search_files", &[("path", path), ("regex", "needle")]), ctx));
        let out = search("nonexistent");
        let Outcome::Failure { text, mistake: true } = out else { panic!("{out:?}") };
        assert!(text.contains("Error searching files: File not found: ") && text.contains("nonexistent"), "{text}");
        assert!(matches!(search("."), Outcome::Success(t) if t.starts_with("Found 1 result.")));
    }

    /// A `.clineignore` that cannot be used (over 256 KiB) blocks every file; the search says
    /// so rather than `Found 0 results.`, which would tell the model the code holds no match.
    #[test]
    fn an_unusable_clineignore_is_named_not_zero_results() {
        use crate::run::tools::testutil::{call, with_ctx};
        let big = "# padding\n".repeat(30_000);
        let d = tree(&[("src/a.rs", "needle\n"), (".clineignore", &big)]);
        let ws = crate::run::tools::paths::Workspace::new(d.path()).unwrap();
        let out = with_ctx(&ws, |ctx| run(&call("search_files", &[("path", "src"), ("regex", "needle")]), ctx));
        let Outcome::Failure { text, mistake: false } = out else { panic!("{out:?}") };
        assert!(text.contains("Access to src is blocked: the .clineignore file"), "{text}");
    }

    #[test]
    fn a_pathological_glob_takes_linear_time() {
        let name = "a".repeat(200);
        let d = tree(&[(&name, "needle\n")]);
        let glob = "*a*a*a*a*a*a*a*a*a*a*a*b";
        // globset compiles the glob to a regex: no backtracking, whatever the name.
        assert_eq!(run_search(d.path(), "needle", glob), "Found 0 results.");
    }
}
