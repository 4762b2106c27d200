//! The V4A patch format of `apply_patch` (`*** Begin Patch` / `*** Add File:` / `*** Update
//! File:` / `*** Delete File:` / `*** Move to:` / `@@` / `*** End Patch`), read exactly as Cline
//! v4.0.10 reads it: `ApplyPatchHandler.ts` (`preprocessLines`, `stripBashWrapper`,
//! `extractFilesForOperations`, `applyChunks`) and `PatchParser.ts` (its fuzzy context search:
//! canonical Unicode punctuation, then trailing whitespace, then all surrounding whitespace,
//! then 66 % Levenshtein similarity). Strings are measured in UTF-16 code units, as JavaScript
//! measures them, so similarities and cut-offs are Cline's to the digit.
//!
//! Pure text in, text out; the tool around it (approval, confinement, writes) is
//! `apply_patch.rs`. `scripts/patch-vs-cline.sh` runs Cline's own parser on a corpus and
//! compares.

use std::collections::HashMap;

use unicode_normalization::UnicodeNormalization;

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const UPDATE: &str = "*** Update File: ";
const DELETE: &str = "*** Delete File: ";
const MOVE: &str = "*** Move to: ";
const END_FILE: &str = "*** End of File";
const BASH_WRAPPERS: [&str; 4] = ["%%bash", "apply_patch", "EOF", "```"];

/// Levenshtein cells one patch may compute (Cline's similarity pass is quadratic per line of
/// the file; beyond this the patch is refused instead of running for minutes).
const MAX_CELLS: u64 = 400_000_000;

/// What visiting one line of the file costs against [`MAX_CELLS`], besides its bytes: joining
/// and normalising a line costs about a thousand cells' time (~2 µs), however short it is, and
/// a search that finds nothing does not move on, so a patch of many such searches (`@@` lines
/// that match nothing, chunks whose context is nowhere) re-reads the whole file for each.
const LINE_VISIT: u64 = 1_000;

/// What a file becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A new file with this content.
    Add(String),
    /// The file is removed.
    Delete,
    /// The file's new content, and where it moves (`*** Move to:`).
    Update {
        /// The new content.
        content: String,
        /// The new path, if it moves.
        move_to: Option<String>,
    },
}

/// A parsed and applied patch.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// Each file's change, in the patch's order.
    pub changes: Vec<(String, Change)>,
    /// Cline's fuzz factor (0: every context matched exactly).
    pub fuzz: u64,
    /// Cline's warnings: chunks whose context was not found, which Cline skips.
    pub warnings: Vec<String>,
}

/// A chunk: at `orig` (a line of the original file), `del` lines out, `ins` lines in.
#[derive(Debug, Clone)]
struct Chunk {
    orig: i64,
    del: Vec<String>,
    ins: Vec<String>,
}

/// The files an `Update` or `Delete` names, as Cline's `extractFilesForOperations` finds them
/// (a path at the very end of the text is taken to be incomplete and left out).
pub fn files_to_load(text: &str) -> Vec<String> {
    marked_files(text).into_iter().map(|(file, _)| file).collect()
}

/// The files [`files_to_load`] names, each with whether the patch only deletes it (`*** Delete
/// File:`; its content is needed for nothing but showing what goes).
pub fn marked_files(text: &str) -> Vec<(String, bool)> {
    let lines: Vec<String> = text.split('\n').map(str::to_string).collect();
    let trimmed = js_trim(text);
    let mut files = Vec::new();
    for line in strip_bash_wrapper(lines) {
        for marker in [UPDATE, DELETE] {
            if let Some(rest) = line.strip_prefix(marker) {
                let file = js_trim(rest);
                if !trimmed.ends_with(file) {
                    files.push((file.to_string(), marker == DELETE));
                }
                break;
            }
        }
    }
    files
}

/// Cline's first check of a patch (`preprocessLines`, before any file is loaded): both
/// sentinels or neither. `Err` is Cline's message.
pub fn check_sentinels(text: &str) -> Result<(), String> {
    preprocess(text).map(drop)
}

/// Parses `text` against the loaded `files` (path → content with `\r\n` made `\n`) and applies
/// it: Cline's `preprocessLines`, `PatchParser.parse` and `patchToCommit`. `Err` is Cline's
/// error message.
pub fn apply(text: &str, files: &HashMap<String, String>) -> Result<Applied, String> {
    let lines = preprocess(text)?;
    let mut p = Parser { lines, files, index: 0, fuzz: 0, actions: Vec::new(), warnings: Vec::new(), cells: 0 };
    p.parse()?;
    let mut changes = Vec::new();
    for (path, action) in p.actions {
        let change = match action {
            Action::Delete => Change::Delete,
            Action::Add(content) if content.is_empty() => return Err("ADD action without file content".into()),
            Action::Add(content) => Change::Add(content),
            Action::Update(chunks, move_to) => {
                let content = apply_chunks(&files[&path], &chunks, &path)?;
                Change::Update { content, move_to }
            }
        };
        changes.push((path, change));
    }
    Ok(Applied { changes, fuzz: p.fuzz, warnings: p.warnings })
}

enum Action {
    Add(String),
    Delete,
    Update(Vec<Chunk>, Option<String>),
}

struct Parser<'a> {
    lines: Vec<String>,
    files: &'a HashMap<String, String>,
    index: usize,
    fuzz: u64,
    actions: Vec<(String, Action)>,
    warnings: Vec<String>,
    cells: u64,
}

impl Parser<'_> {
    fn line(&self, i: usize) -> Option<&str> {
        self.lines.get(i).map(String::as_str)
    }

    fn parse(&mut self) -> Result<(), String> {
        if self.line(0).is_some_and(|l| l.starts_with(BEGIN)) {
            self.index = 1;
        }
        while self.index < self.lines.len() && !self.lines[self.index].starts_with(END) {
            let line = self.lines[self.index].clone();
            if let Some(p) = line.strip_prefix(UPDATE) {
                self.update(js_trim(p).to_string())?;
            } else if let Some(p) = line.strip_prefix(DELETE) {
                self.delete(js_trim(p).to_string())?;
            } else if let Some(p) = line.strip_prefix(ADD) {
                self.add(js_trim(p).to_string())?;
            } else {
                return Err(format!("Unknown line while parsing: {line}"));
            }
        }
        Ok(())
    }

    fn check_duplicate(&self, path: &str, op: &str) -> Result<(), String> {
        if self.actions.iter().any(|(p, _)| p == path) {
            return Err(format!("Duplicate {op} for file: {path}"));
        }
        Ok(())
    }

    fn update(&mut self, path: String) -> Result<(), String> {
        self.check_duplicate(&path, "update")?;
        self.index += 1;
        let move_to = match self.line(self.index).and_then(|l| l.strip_prefix(MOVE)) {
            Some(m) => {
                let m = js_trim(m).to_string();
                self.index += 1;
                Some(m)
            }
            None => None,
        };
        let Some(text) = self.files.get(&path) else {
            return Err(format!("Update File Error: Missing File: {path}"));
        };
        let chunks = self.update_file(text, &path)?;
        self.actions.push((path, Action::Update(chunks, move_to)));
        Ok(())
    }

    fn update_file(&mut self, text: &str, path: &str) -> Result<Vec<Chunk>, String> {
        let file: Vec<&str> = text.split('\n').collect();
        let mut chunks = Vec::new();
        let mut index: i64 = 0;
        let stops = [END, UPDATE.trim(), DELETE.trim(), ADD.trim(), END_FILE];
        loop {
            let current = self.line(self.index);
            if current.is_some_and(|l| stops.iter().any(|m| l.starts_with(m))) {
                break;
            }
            let before = (self.index, index);
            let current = current.map(str::to_string);
            let def = current.as_deref().and_then(|l| l.strip_prefix("@@ ")).map(str::to_string);
            let section = current.as_deref() == Some("@@");
            if def.is_some() || section {
                self.index += 1;
            } else if index != 0 {
                return Err(format!("Invalid Line:\n{}", current.as_deref().unwrap_or("undefined")));
            }
            if let Some(def) = def.as_deref().map(js_trim).filter(|d| !d.is_empty()) {
                let canon_def = canonicalize(def);
                for (i, l) in file.iter().enumerate().skip(index.max(0) as usize) {
                    self.spend(LINE_VISIT + l.len() as u64)?;
                    if l.is_empty() {
                        continue;
                    }
                    let (whole, trimmed) = (canonicalize(l), canonicalize(js_trim(l)));
                    if whole == canon_def || trimmed == canon_def {
                        index = i as i64 + 1;
                        if trimmed == canon_def && whole != canon_def {
                            self.fuzz += 1;
                        }
                        break;
                    }
                }
            }
            let (context, mut found, end, eof) = peek(&self.lines, self.index)?;
            let (at, fuzz, similarity) = self.find_context(&file, &context, index, eof)?;
            if at == -1 {
                let ctx = context.join("\n");
                let shown = if utf16_len(&ctx) > 200 { format!("{}...", utf16_prefix(&ctx, 200)) } else { ctx };
                self.warnings.push(format!(
                    "{path}: chunk {}: Could not find matching context (similarity: {}). Chunk skipped.\n{shown}",
                    chunks.len(),
                    to_fixed_2(similarity)
                ));
            } else {
                self.fuzz += fuzz;
                for c in &mut found {
                    c.orig += at;
                }
                chunks.extend(found);
                index = at + context.len() as i64;
            }
            self.index = end;
            // Cline loops forever here (a blank line right after `*** Update File:`).
            if (self.index, index) == before {
                return Err(format!("Invalid Line:\n{}", self.line(self.index).unwrap_or("undefined")));
            }
        }
        Ok(chunks)
    }

    fn delete(&mut self, path: String) -> Result<(), String> {
        self.check_duplicate(&path, "delete")?;
        if !self.files.contains_key(&path) {
            return Err(format!("Delete File Error: Missing File: {path}"));
        }
        self.actions.push((path, Action::Delete));
        self.index += 1;
        Ok(())
    }

    fn add(&mut self, path: String) -> Result<(), String> {
        self.check_duplicate(&path, "add")?;
        if self.files.contains_key(&path) {
            return Err(format!("Add File Error: File already exists: {path}"));
        }
        self.index += 1;
        let stops = [END, UPDATE.trim(), DELETE.trim(), ADD.trim()];
        let mut lines = Vec::new();
        while let Some(line) = self.line(self.index) {
            if stops.iter().any(|m| line.starts_with(m)) {
                break;
            }
            let Some(l) = line.strip_prefix('+') else {
                return Err(format!("Invalid Add File line (missing '+'): {line}"));
            };
            lines.push(l.to_string());
            self.index += 1;
        }
        self.actions.push((path, Action::Add(lines.join("\n"))));
        Ok(())
    }

    /// Cline's `findContext`: (index or -1, fuzz, best similarity).
    fn find_context(
        &mut self,
        lines: &[&str],
        context: &[String],
        start: i64,
        eof: bool,
    ) -> Result<(i64, u64, f64), String> {
        if context.is_empty() {
            return Ok((start, 0, 1.0));
        }
        let mut best = 0.0;
        if eof {
            let r = self.find_core(lines, context, lines.len() as i64 - context.len() as i64, &mut best)?;
            if r.0 != -1 {
                return Ok(r);
            }
            let (i, f, s) = self.find_core(lines, context, start, &mut best)?;
            return Ok((i, f + 10_000, s));
        }
        self.find_core(lines, context, start, &mut best)
    }

    fn find_core(
        &mut self,
        lines: &[&str],
        context: &[String],
        start: i64,
        best: &mut f64,
    ) -> Result<(i64, u64, f64), String> {
        let n = context.len() as i64;
        let segment =
            |i: i64, f: fn(&str) -> &str| js_slice(lines, i, i + n).iter().map(|s| f(s)).collect::<Vec<_>>().join("\n");
        let canon_ctx = canonicalize(&context.join("\n"));
        let ctx16: Vec<u16> = canon_ctx.encode_utf16().collect();
        let visit = LINE_VISIT + canon_ctx.len() as u64;
        for i in start..lines.len() as i64 {
            self.spend(visit)?;
            let seg = canonicalize(&segment(i, |s| s));
            if seg == canon_ctx {
                return Ok((i, 0, 1.0));
            }
            let sim = self.similarity(&seg, &ctx16)?;
            if sim > *best {
                *best = sim;
            }
        }
        let ctx_end = canonicalize(&context.iter().map(|s| js_trim_end(s)).collect::<Vec<_>>().join("\n"));
        for i in start..lines.len() as i64 {
            self.spend(visit)?;
            if canonicalize(&segment(i, js_trim_end)) == ctx_end {
                return Ok((i, 1, 1.0));
            }
        }
        let ctx_trim = canonicalize(&context.iter().map(|s| js_trim(s)).collect::<Vec<_>>().join("\n"));
        for i in start..lines.len() as i64 {
            self.spend(visit)?;
            if canonicalize(&segment(i, js_trim)) == ctx_trim {
                return Ok((i, 100, 1.0));
            }
        }
        for i in start..lines.len() as i64 {
            self.spend(visit)?;
            let seg = canonicalize(&segment(i, |s| s));
            let sim = self.similarity(&seg, &ctx16)?;
            if sim >= 0.66 {
                return Ok((i, 1000, sim));
            }
            if sim > *best {
                *best = sim;
            }
        }
        Ok((-1, 0, *best))
    }

    /// Charges `units` of matching work to the patch's budget ([`MAX_CELLS`]).
    fn spend(&mut self, units: u64) -> Result<(), String> {
        self.cells += units;
        if self.cells > MAX_CELLS {
            return Err("The patch's context could not be matched within agent-min's bound on fuzzy matching (the file or the context is too large). Use more exact context lines, or smaller patches.".into());
        }
        Ok(())
    }

    /// Cline's `calculateSimilarity`, within the patch's budget.
    fn similarity(&mut self, a: &str, b16: &[u16]) -> Result<f64, String> {
        let a16: Vec<u16> = a.encode_utf16().collect();
        self.spend((a16.len() as u64 + 1) * (b16.len() as u64 + 1))?;
        let (longer, shorter) = if a16.len() > b16.len() { (&a16[..], b16) } else { (b16, &a16[..]) };
        if longer.is_empty() {
            return Ok(1.0);
        }
        let d = levenshtein(shorter, longer);
        Ok((longer.len() - d) as f64 / longer.len() as f64)
    }
}

fn levenshtein(a: &[u16], b: &[u16]) -> usize {
    let mut prev: Vec<usize> = (0..=a.len()).collect();
    let mut cur = vec![0; a.len() + 1];
    for (i, cb) in b.iter().enumerate() {
        cur[0] = i + 1;
        for (j, ca) in a.iter().enumerate() {
            cur[j + 1] = if ca == cb { prev[j] } else { 1 + prev[j].min(cur[j]).min(prev[j + 1]) };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[a.len()]
}

/// Cline's `peek`: the next section's context lines, its chunks, where it ends, and whether it
/// ends the file (`*** End of File`).
type Peeked = (Vec<String>, Vec<Chunk>, usize, bool);

fn peek(lines: &[String], start: usize) -> Result<Peeked, String> {
    let mut index = start;
    let (mut old, mut del, mut ins, mut chunks) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let stops = ["@@", END, UPDATE.trim(), DELETE.trim(), ADD.trim(), END_FILE];
    #[derive(PartialEq, Clone, Copy)]
    enum Mode {
        Keep,
        Add,
        Delete,
    }
    let mut mode = Mode::Keep;
    while let Some(s) = lines.get(index) {
        if s.is_empty() || stops.iter().any(|m| s.starts_with(m)) || s == "***" {
            break;
        }
        if s.starts_with("***") {
            return Err(format!("Invalid line: {s}"));
        }
        index += 1;
        let last = mode;
        let line = match s.as_bytes()[0] {
            b'+' => {
                mode = Mode::Add;
                &s[1..]
            }
            b'-' => {
                mode = Mode::Delete;
                &s[1..]
            }
            b' ' => {
                mode = Mode::Keep;
                &s[1..]
            }
            _ => {
                mode = Mode::Keep;
                &s[..]
            }
        };
        if mode == Mode::Keep && last != mode && (!ins.is_empty() || !del.is_empty()) {
            let orig = (old.len() - del.len()) as i64;
            chunks.push(Chunk { orig, del: std::mem::take(&mut del), ins: std::mem::take(&mut ins) });
        }
        match mode {
            Mode::Delete => {
                del.push(line.to_string());
                old.push(line.to_string());
            }
            Mode::Add => ins.push(line.to_string()),
            Mode::Keep => old.push(line.to_string()),
        }
    }
    if !ins.is_empty() || !del.is_empty() {
        chunks.push(Chunk { orig: (old.len() - del.len()) as i64, del, ins });
    }
    if lines.get(index).is_some_and(|l| l == END_FILE) {
        return Ok((old, chunks, index + 1, true));
    }
    Ok((old, chunks, index, false))
}

/// Cline's `applyChunks`.
fn apply_chunks(content: &str, chunks: &[Chunk], path: &str) -> Result<String, String> {
    if chunks.is_empty() {
        return Ok(content.to_string());
    }
    let lines: Vec<&str> = content.split('\n').collect();
    let mut out: Vec<&str> = Vec::new();
    let mut cur: i64 = 0;
    for c in chunks {
        if c.orig > lines.len() as i64 {
            return Err(format!("{path}: chunk.origIndex {} > lines.length {}", c.orig, lines.len()));
        }
        if cur > c.orig {
            return Err(format!("{path}: currentIndex {cur} > chunk.origIndex {}", c.orig));
        }
        out.extend(js_slice(&lines, cur, c.orig));
        out.extend(c.ins.iter().map(String::as_str));
        cur = c.orig + c.del.len() as i64;
    }
    out.extend(js_slice(&lines, cur, lines.len() as i64));
    Ok(out.join("\n"))
}

/// Cline's `preprocessLines`: `\r` off each line's end, the shell wrapper off, both sentinels
/// or neither (then added).
fn preprocess(text: &str) -> Result<Vec<String>, String> {
    let lines: Vec<String> = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l).to_string()).collect();
    let mut lines = strip_bash_wrapper(lines);
    let has_begin = lines.first().is_some_and(|l| l.starts_with(BEGIN));
    let has_end = lines.last().is_some_and(|l| l == END);
    match (has_begin, has_end) {
        (false, false) => {
            lines.insert(0, BEGIN.to_string());
            lines.push(END.to_string());
            Ok(lines)
        }
        (true, true) => Ok(lines),
        _ => Err("Invalid patch text - incomplete sentinels. Try breaking it into smaller patches.".into()),
    }
}

/// Cline's `stripBashWrapper`: the `%%bash` / `apply_patch <<"EOF"` / fence lines around a
/// patch dropped.
fn strip_bash_wrapper(lines: Vec<String>) -> Vec<String> {
    let mut result = Vec::new();
    let (mut inside, mut found_begin, mut found_content) = (false, false, false);
    let last = lines.len().saturating_sub(1);
    for (i, line) in lines.iter().enumerate() {
        if !inside && BASH_WRAPPERS.iter().any(|w| line.starts_with(w)) {
            continue;
        }
        if line.starts_with(BEGIN) {
            inside = true;
            found_begin = true;
            result.push(line.clone());
            continue;
        }
        if line == END {
            inside = false;
            result.push(line.clone());
            continue;
        }
        let content = is_patch_line(line);
        if content && i != last {
            found_content = true;
        }
        if inside || (!found_begin && content) || (line.is_empty() && found_content) {
            result.push(line.clone());
        }
    }
    while result.last().is_some_and(|l: &String| l.is_empty()) {
        result.pop();
    }
    if !found_begin && !found_content {
        lines
    } else {
        result
    }
}

fn is_patch_line(line: &str) -> bool {
    [ADD, UPDATE, DELETE, MOVE, "@@", "+", "-", " "].iter().any(|m| line.starts_with(m)) || line == "***"
}

/// Cline's `canonicalize`: NFC, Unicode dashes, quotes and no-break spaces as ASCII, and
/// escaped quotes and backticks unescaped.
fn canonicalize(s: &str) -> String {
    let mapped: String = s
        .nfc()
        .map(|c| match c {
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2212}' => '-',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{00AB}' | '\u{00BB}' => '"',
            '\u{2018}' | '\u{2019}' | '\u{201B}' => '\'',
            '\u{00A0}' | '\u{202F}' => ' ',
            c => c,
        })
        .collect();
    mapped.replace("\\`", "`").replace("\\'", "'").replace("\\\"", "\"")
}

/// JavaScript's whitespace (`String.prototype.trim`).
fn is_js_space(c: char) -> bool {
    matches!(
        c,
        '\u{9}' | '\u{a}' | '\u{b}' | '\u{c}' | '\u{d}' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
    )
}

/// `s` trimmed as JavaScript's `trim()` does.
pub(crate) fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_space)
}

/// `s` trimmed at its end as JavaScript's `trimEnd()` does.
pub(crate) fn js_trim_end(s: &str) -> &str {
    s.trim_end_matches(is_js_space)
}

/// JavaScript's `Array.prototype.slice(start, end)`: negative indices count from the end.
fn js_slice<T>(v: &[T], start: i64, end: i64) -> &[T] {
    let len = v.len() as i64;
    let norm = |i: i64| if i < 0 { (len + i).max(0) } else { i.min(len) };
    let (s, e) = (norm(start), norm(end));
    if s >= e {
        &v[0..0]
    } else {
        &v[s as usize..e as usize]
    }
}

fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// The first `n` UTF-16 units of `s` (a split surrogate pair becomes U+FFFD, as it would print).
fn utf16_prefix(s: &str, n: usize) -> String {
    let units: Vec<u16> = s.encode_utf16().take(n).collect();
    String::from_utf16_lossy(&units)
}

/// JavaScript's `toFixed(2)`: the nearest, ties away from zero.
fn to_fixed_2(x: f64) -> String {
    let thousandths = x * 1000.0;
    if thousandths.fract() == 0.0 && (thousandths as i64) % 10 == 5 {
        let hundredths = (thousandths as i64 + 5) / 10;
        return format!("{}.{:02}", hundredths / 100, hundredths % 100);
    }
    format!("{x:.2}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> HashMap<String, String> {
        list.iter().map(|(p, c)| (p.to_string(), c.to_string())).collect()
    }

    #[test]
    fn add_update_delete_and_move() {
        let patch = "*** Begin Patch\n*** Add File: new.txt\n+hello\n+world\n*** Update File: a.py\n*** Move to: b.py\n@@ def f():\n     x = 1\n-    return x\n+    return x + 1\n*** Delete File: gone.txt\n*** End Patch";
        let f = files(&[("a.py", "import os\ndef f():\n    x = 1\n    return x\n"), ("gone.txt", "bye")]);
        assert_eq!(files_to_load(patch), ["a.py", "gone.txt"]);
        let a = apply(patch, &f).unwrap();
        assert_eq!(a.fuzz, 0);
        assert_eq!(a.changes[0], ("new.txt".into(), Change::Add("hello\nworld".into())));
        assert_eq!(
            a.changes[1],
            (
                "a.py".into(),
                Change::Update {
                    content: "import os\ndef f():\n    x = 1\n    return x + 1\n".into(),
                    move_to: Some("b.py".into())
                }
            )
        );
        assert_eq!(a.changes[2], ("gone.txt".into(), Change::Delete));
    }

    #[test]
    fn fuzzy_context_counts_fuzz_and_unfound_context_is_a_warning() {
        let f = files(&[("a", "one  \ntwo\nthree\n")]);
        let a = apply("*** Update File: a\n one\n-two\n+2\n three", &f).unwrap();
        assert_eq!(a.changes[0].1, Change::Update { content: "one  \n2\nthree\n".into(), move_to: None });
        assert_eq!(a.fuzz, 1);
        let a = apply("*** Update File: a\n zzzzzzzz\n-qqqq\n+2", &f).unwrap();
        assert_eq!(a.warnings.len(), 1, "{a:?}");
        assert!(a.warnings[0].contains("Could not find matching context (similarity: "), "{:?}", a.warnings);
    }

    /// Searches that find nothing are charged to the patch's budget by the line: each re-reads
    /// the file from where the last match left it, and only their Levenshtein cells were
    /// counted (one-character lines cost ~6 cells a visit but ~2 µs), so `@@` lines that match
    /// nothing, or chunks whose context is nowhere, took minutes on a large file.
    #[test]
    fn searches_that_find_nothing_are_charged_to_the_budget_by_the_line() {
        let budget = "The patch's context could not be matched within agent-min's bound on fuzzy matching";
        let f = files(&[("a", &"a\n".repeat(20_000))]);
        let defs = format!("*** Update File: a\n{}", "@@ nomatch\n".repeat(400));
        assert!(apply(&defs, &f).unwrap_err().starts_with(budget));
        let chunks = format!("*** Update File: a\n{}", "@@\n zz\n+x\n".repeat(40));
        assert!(apply(&chunks, &f).unwrap_err().starts_with(budget));
        // A patch whose searches find what they look for, in order, stays well within it.
        let text: String = (0..20_000).map(|i| format!("fn f{i}() {{}}\n")).collect();
        let f = files(&[("a", &text)]);
        let edits: String = (0..200)
            .map(|k| format!("@@ fn f{}() {{}}\n-fn f{}() {{}}\n+fn g() {{}}\n", k * 100, k * 100 + 1))
            .collect();
        let a = apply(&format!("*** Update File: a\n{edits}"), &f).unwrap();
        assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    }

    #[test]
    fn clines_errors() {
        let f = files(&[("a", "x\n")]);
        assert_eq!(
            apply("*** Begin Patch\n*** Add File: b\n+x", &f).unwrap_err(),
            "Invalid patch text - incomplete sentinels. Try breaking it into smaller patches."
        );
        assert_eq!(
            apply("*** Begin Patch\n*** Add File: b\nx\n*** End Patch", &f).unwrap_err(),
            "Invalid Add File line (missing '+'): x"
        );
        // Without sentinels, Cline's wrapper stripping drops the unprefixed line first.
        assert_eq!(apply("*** Add File: b\nx", &f).unwrap_err(), "ADD action without file content");
        assert_eq!(apply("*** Update File: c\n-x", &f).unwrap_err(), "Update File Error: Missing File: c");
        assert_eq!(apply("*** Add File: a\n+x", &f).unwrap_err(), "Add File Error: File already exists: a");
        assert_eq!(apply("*** Add File: b\n+", &f).unwrap_err(), "ADD action without file content");
        assert_eq!(apply("hello", &f).unwrap_err(), "Unknown line while parsing: hello");
        // Where Cline would loop forever.
        assert!(apply("*** Update File: a\n\n+x", &f).unwrap_err().starts_with("Invalid Line:"));
    }

    #[test]
    fn wrappers_and_js_details() {
        let f = files(&[("a", "x")]);
        let wrapped = "%%bash\napply_patch <<\"EOF\"\n*** Begin Patch\n*** Update File: a\n-x\n+y\n*** End Patch\nEOF";
        assert_eq!(apply(wrapped, &f).unwrap().changes[0].1, Change::Update { content: "y".into(), move_to: None });
        assert_eq!(to_fixed_2(0.125), "0.13");
        assert_eq!(to_fixed_2(0.5), "0.50");
        assert_eq!(to_fixed_2(0.666), "0.67");
        assert_eq!(js_slice(&[1, 2, 3], -2, 1), &[] as &[i32]);
        assert_eq!(js_slice(&[1, 2, 3], -2, 3), &[2, 3]);
        assert_eq!(canonicalize("\u{201C}a\u{2014}b\\`"), "\"a-b`");
    }
}
