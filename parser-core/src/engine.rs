//! The resumable state machine: Cline's `parseAssistantMessageV2`, one pass, stopping only at `<`.
//!
//! Cline tests every tag at every character, by the tag's *end*. A tag is `<`, a name without `<`
//! or `>`, then `>`, so each `>` ends at most one candidate, the one from the nearest `<` before
//! it. Jumping from `<` to `<` and reading forward to the next `>` therefore sees exactly the tags
//! Cline sees. The state after any offset depends only on the text before it, so the engine can
//! stop at the end of the input (or inside a tag cut by it) and resume when more text arrives;
//! only [`Engine::tail`] depends on where the input currently ends.

use crate::grammar::Grammar;
use crate::scan::{find_byte, find_either};
use crate::table::same_name;
use crate::trim::{trim, TrimCache};
use crate::Span;

const CONTENT: &[u8] = b"content";
const NONE: usize = usize::MAX;

/// A param as stored: where its name and value lie in the input, and its links in the store's
/// name index (see `store::BlockStore::set_param`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawParam {
    /// The untrimmed value.
    pub(crate) raw: Span,
    /// The value trimmed as Cline trims it.
    pub(crate) value: Span,
    /// Length of the name, which ends just before the `>` that precedes `raw`.
    name_len: u32,
    /// The name's index in the grammar's param table ([`NO_ID`] for a name outside it).
    pub(crate) id: u32,
    /// The next older param in the same hash bucket ([`NIL`] at the end).
    pub(crate) next: u32,
    /// As bucket number `i` of the index (for `i` below the bucket count): its newest param.
    pub(crate) head: u32,
}

/// No index: the end of a bucket's chain, or an empty bucket.
pub(crate) const NIL: u32 = u32::MAX;
/// The id of a param name that is not in the grammar's table (`write_to_file`'s re-taken
/// `content` with a table that lacks it).
pub(crate) const NO_ID: u32 = u32::MAX;

impl RawParam {
    /// `name` must end one byte (the open tag's `>`) before `raw` starts: names are at most
    /// `MAX_NAME_LEN` bytes, so the length fits.
    pub(crate) fn new(name: Span, raw: Span, value: Span, id: u32) -> Self {
        debug_assert_eq!(name.end + 1, raw.start);
        RawParam { raw, value, name_len: name.len() as u32, id, next: NIL, head: NIL }
    }

    /// Where the name lies: `<name>` ends where `raw` starts.
    #[inline]
    pub(crate) fn name(&self) -> Span {
        let end = self.raw.start - 1;
        Span { start: end - self.name_len as usize, end }
    }
}

/// Where the engine's events go: block storage that may run out of room.
pub(crate) trait Sink {
    type Error;
    /// A tool opens with its `<` at `at`; `text` is the non-empty trimmed text block before it.
    fn open_tool(&mut self, text: Option<Span>, name: Span, at: usize) -> Result<(), Self::Error>;
    /// Set a param of the open tool: overwrite a same-named one in place, or append.
    fn set_param(&mut self, input: &[u8], param: RawParam, at: usize) -> Result<(), Self::Error>;
    /// The open tool closes.
    fn close_tool(&mut self);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Text,
    Tool,
    Param,
}

/// The outcome of [`Engine::quick_check`].
enum Quick {
    /// Certainly not a tag that matters here.
    NotATag,
    /// The input ends before the check could decide.
    CutShort,
    /// The open param's close tag, whose `<` is the candidate.
    CloseParam(usize),
    /// Read on to the `>` to decide.
    Maybe,
}

/// What the end of the input adds to the stored blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tail {
    /// Nothing: the input ends in whitespace-only text, or inside a tool between params.
    Nothing,
    /// Trailing text (trimmed, non-empty): a `partial` text block.
    Text(Span),
    /// The open tool's open param, running to the end of the input.
    Param(RawParam),
}

/// How [`Engine::update_tail`] found the tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TailMove {
    /// As it was.
    Same,
    /// The same trailing text or open param, its spans moved (it grew).
    Grew,
    /// Another kind of tail, or another param.
    Other,
}

/// The parser's resumable state. All offsets are into the whole input seen so far.
#[derive(Clone, Debug)]
pub(crate) struct Engine {
    /// Next offset to scan from.
    pos: usize,
    /// A `<` whose tag is cut by the end of the input: (offset of `<`, how far `>` was searched).
    pending: Option<(usize, usize)>,
    mode: Mode,
    text_start: usize,
    tool_name: Span,
    /// The open tool is `write_to_file`, whose `content` Cline re-takes when it closes.
    write_to_file: bool,
    /// Offset of the first `<content>` and of the last `</content>` in the open tool's body.
    content_open: usize,
    content_close: usize,
    param_name: Span,
    /// The open param's index in the grammar's param table.
    param_id: u32,
    value_start: usize,
    /// Trim work already done on the growing trailing text or open param.
    trim_cache: TrimCache,
}

impl Default for Engine {
    fn default() -> Self {
        Engine {
            pos: 0,
            pending: None,
            mode: Mode::Text,
            text_start: 0,
            tool_name: Span::EMPTY,
            write_to_file: false,
            content_open: NONE,
            content_close: NONE,
            param_name: Span::EMPTY,
            param_id: NO_ID,
            value_start: 0,
            trim_cache: TrimCache::default(),
        }
    }
}

#[inline]
fn bytes(s: &[u8], span: Span) -> &[u8] {
    &s[span.start..span.end]
}

impl Engine {
    /// Scan `s[self.pos..]`, sending blocks to `sink`. `s` is the whole input so far; call again
    /// with a longer `s` (same prefix) to continue. On a sink error the state stays at the tag
    /// that failed, so the blocks stored so far stay valid.
    ///
    /// Inlined into its callers: a stream's push whose new bytes hold no `<` (most of them) costs
    /// one search and returns, without entering the loop.
    #[inline]
    pub(crate) fn run<S: Sink>(&mut self, s: &[u8], g: &Grammar<'_>, sink: &mut S) -> Result<(), S::Error> {
        let lt = if self.pending.is_none() { find_byte(s, self.pos, b'<') } else { None };
        self.run_searched(s, lt, g, sink)
    }

    /// [`Engine::run`] for new bytes that hold no `<` (the input is now `len` bytes long):
    /// unless a tag was cut short before them, nothing happens but the position moving to the
    /// end. Returns false, having done nothing, when [`Engine::run_searched`] must run instead.
    #[inline(always)]
    pub(crate) fn run_plain(&mut self, len: usize) -> bool {
        if self.pending.is_some() {
            return false;
        }
        self.pos = len;
        true
    }

    /// [`Engine::run`] when the caller has already searched the new bytes `s[self.pos..]` for
    /// their first `<` (`lt`; ignored while a tag cut short is pending).
    #[inline(always)]
    pub(crate) fn run_searched<S: Sink>(
        &mut self,
        s: &[u8],
        lt: Option<usize>,
        g: &Grammar<'_>,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        if self.pending.is_none() {
            match lt {
                // A fresh candidate: the loop takes it as if a tag had been cut short there.
                Some(lt) => self.pending = Some((lt, lt + 1)),
                None => {
                    self.pos = s.len();
                    return Ok(());
                }
            }
        }
        self.run_tags(s, g, sink)
    }

    /// [`Engine::run`] from a candidate `<` (`pending` is set).
    #[inline(never)]
    fn run_tags<S: Sink>(&mut self, s: &[u8], g: &Grammar<'_>, sink: &mut S) -> Result<(), S::Error> {
        loop {
            let (lt, mut q) = match self.pending.take() {
                Some(p) => p,
                None => match find_byte(s, self.pos, b'<') {
                    Some(lt) => (lt, lt + 1),
                    None => {
                        self.pos = s.len();
                        return Ok(());
                    }
                },
            };
            if q == lt + 1 {
                // Fresh candidate: cheap checks before reading the tag body.
                match self.quick_check(s, g, lt) {
                    Quick::NotATag => {
                        self.pos = lt + 1;
                        continue;
                    }
                    Quick::CutShort => {
                        self.pending = Some((lt, lt + 1));
                        self.pos = lt;
                        return Ok(());
                    }
                    Quick::CloseParam(gt) => {
                        self.pos = gt + 1;
                        if let Err(e) = self.close_param(s, lt, sink) {
                            self.pos = lt;
                            return Err(e);
                        }
                        continue;
                    }
                    Quick::Maybe => {}
                }
            }
            // The tag body (`/`? + name) is at most `max_tag_body` bytes, then `>`.
            let window_end = lt + 2 + g.max_tag_body;
            let limit = window_end.min(s.len());
            q = find_either(s, q, limit, b'>', b'<');
            if q == limit && limit < window_end {
                // The input ends inside what may still become a tag.
                self.pending = Some((lt, q));
                self.pos = lt;
                return Ok(());
            }
            if q < limit && s[q] == b'>' {
                self.pos = q + 1;
                if let Err(e) = self.on_tag(s, g, lt, q, sink) {
                    self.pos = lt;
                    return Err(e);
                }
            } else {
                // A `<` inside (the next candidate) or no `>` within reach: not a tag.
                self.pos = q;
            }
        }
    }

    /// Decide cheaply about the `<` at `lt`, before reading up to a `>`.
    #[inline]
    fn quick_check(&self, s: &[u8], g: &Grammar<'_>, lt: usize) -> Quick {
        if self.mode == Mode::Param && !self.write_to_file {
            // Inside a param only `</name>` counts: compare it directly.
            let name = bytes(s, self.param_name);
            let end = lt + 2 + name.len();
            let have = &s[lt + 1..s.len().min(end + 1)];
            #[cfg(test)]
            crate::scan::counter::add(have.len());
            if have.len() == name.len() + 2 {
                // All of `/name>` is there (nearly always): compare it whole, inlined.
                let n = name.len();
                return if have[0] == b'/' && have[n + 1] == b'>' && same_name(&have[1..n + 1], name) {
                    Quick::CloseParam(end)
                } else {
                    Quick::NotATag
                };
            }
            // The input ends inside: is `have` a prefix of `/name>` as far as it goes?
            let matched = have.first().is_none_or(|&b| b == b'/')
                && have.get(1..).is_none_or(|rest| {
                    let k = rest.len().min(name.len());
                    rest[..k] == name[..k]
                })
                && have.get(1 + name.len()).is_none_or(|&b| b == b'>');
            return match (matched, have.len() == end + 1 - (lt + 1)) {
                (true, true) => Quick::CloseParam(end),
                (true, false) => Quick::CutShort,
                (false, _) => Quick::NotATag,
            };
        }
        // Elsewhere, what follows `<` (after an optional `/`) must start some name.
        let mut k = lt + 1;
        if s.get(k) == Some(&b'/') {
            k += 1;
        }
        #[cfg(test)]
        crate::scan::counter::add(k - lt);
        match s.get(k) {
            None => Quick::CutShort,
            Some(&b) if g.may_start_name(b) => Quick::Maybe,
            Some(_) => Quick::NotATag,
        }
    }

    /// A complete `<…>` at `lt..=gt`: act on it if it is a tag in the current state.
    fn on_tag<S: Sink>(
        &mut self,
        s: &[u8],
        g: &Grammar<'_>,
        lt: usize,
        gt: usize,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        let body = &s[lt + 1..gt];
        let (close, name) = match body {
            [b'/', rest @ ..] => (true, rest),
            _ => (false, body),
        };
        #[cfg(test)]
        crate::scan::counter::add(name.len());
        let name_span = Span { start: gt - name.len(), end: gt };
        match self.mode {
            Mode::Text => {
                if !close && g.tools.contains(name) {
                    let text = trim(s, Span { start: self.text_start, end: lt });
                    sink.open_tool((!text.is_empty()).then_some(text), name_span, lt)?;
                    self.mode = Mode::Tool;
                    self.tool_name = name_span;
                    self.write_to_file = same_name(name, b"write_to_file");
                    self.content_open = NONE;
                    self.content_close = NONE;
                }
            }
            Mode::Tool => {
                self.note_content_tag(close, name, lt);
                let id = if close { None } else { g.params.index(name) };
                if let Some(id) = id {
                    self.mode = Mode::Param;
                    self.param_name = name_span;
                    self.param_id = id;
                    self.value_start = gt + 1;
                } else if close && same_name(name, bytes(s, self.tool_name)) {
                    if let Some(content) = self.retaken_content(s, g) {
                        sink.set_param(s, content, lt)?;
                    }
                    sink.close_tool();
                    self.mode = Mode::Text;
                    self.text_start = gt + 1;
                }
            }
            Mode::Param => {
                self.note_content_tag(close, name, lt);
                if close && same_name(name, bytes(s, self.param_name)) {
                    self.close_param(s, lt, sink)?;
                }
            }
        }
        Ok(())
    }

    /// The open param's close tag starts at `lt`: store the value, back to between params.
    /// (Out of line: measured smaller and faster for both whole parses and short pushes.)
    #[inline(never)]
    fn close_param<S: Sink>(&mut self, s: &[u8], lt: usize, sink: &mut S) -> Result<(), S::Error> {
        let raw = Span { start: self.value_start, end: lt };
        sink.set_param(s, RawParam::new(self.param_name, raw, trim(s, raw), self.param_id), lt)?;
        self.mode = Mode::Tool;
        Ok(())
    }

    /// Inside `write_to_file`, remember the first `<content>` and the last `</content>`.
    #[inline]
    fn note_content_tag(&mut self, close: bool, name: &[u8], lt: usize) {
        if self.write_to_file && same_name(name, CONTENT) {
            if close {
                self.content_close = lt;
            } else if self.content_open == NONE {
                self.content_open = lt;
            }
        }
    }

    /// Cline's `write_to_file` rule: at the tool's close, `content` becomes everything from the
    /// first `<content>` to the last `</content>` of the body, if the latter comes after.
    /// (The check for another tool inlined, the rest out of line.)
    #[inline(always)]
    fn retaken_content(&self, s: &[u8], g: &Grammar<'_>) -> Option<RawParam> {
        if !self.write_to_file {
            return None;
        }
        self.retaken_write_content(s, g)
    }

    /// [`Engine::retaken_content`] inside `write_to_file`.
    #[inline(never)]
    fn retaken_write_content(&self, s: &[u8], g: &Grammar<'_>) -> Option<RawParam> {
        if self.content_open == NONE || self.content_close == NONE || self.content_close <= self.content_open {
            return None;
        }
        let name = Span { start: self.content_open + 1, end: self.content_open + 1 + CONTENT.len() };
        let raw = Span { start: name.end + 1, end: self.content_close };
        Some(RawParam::new(name, raw, trim(s, raw), g.params.index(CONTENT).unwrap_or(NO_ID)))
    }

    /// Where scanning stands: after a sink error, the offset of the tag that could not be stored.
    /// Everything before it is parsed.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// What the current end of the input adds: trailing text, or the open param's value so far.
    /// Repeated calls on a growing input only trim the new bytes.
    #[inline]
    pub(crate) fn tail(&mut self, s: &[u8]) -> Tail {
        match self.mode {
            Mode::Text => {
                let text = self.trim_cache.trim(s, self.text_start, s.len());
                if text.is_empty() {
                    Tail::Nothing
                } else {
                    Tail::Text(text)
                }
            }
            Mode::Tool => Tail::Nothing,
            Mode::Param => {
                let raw = Span { start: self.value_start, end: s.len() };
                let value = self.trim_cache.trim(s, self.value_start, s.len());
                Tail::Param(RawParam::new(self.param_name, raw, value, self.param_id))
            }
        }
    }

    /// Bring `tail` (what [`Engine::tail`] returned for a shorter input, or after a change of
    /// state) up to date with the input `s`, and say how it changed. Cheaper than comparing
    /// whole tails: within one region only the spans can change.
    #[inline(always)]
    pub(crate) fn update_tail(&mut self, s: &[u8], tail: &mut Tail) -> TailMove {
        let moved = |changed: bool| if changed { TailMove::Grew } else { TailMove::Same };
        match (self.mode, &mut *tail) {
            // The span is recomputed whole; a new text region starts only with a block event
            // (a tool's close), which the caller sees in the store.
            (Mode::Text, Tail::Text(span)) => {
                let text = self.trim_cache.trim(s, self.text_start, s.len());
                if text.is_empty() {
                    *tail = Tail::Nothing;
                    return TailMove::Other;
                }
                let changed = text.end != span.end || text.start != span.start;
                *span = text;
                moved(changed)
            }
            // The same open param (its value starts right after its own open tag).
            (Mode::Param, Tail::Param(p)) if p.raw.start == self.value_start => {
                let value = self.trim_cache.trim(s, self.value_start, s.len());
                let changed = p.raw.end != s.len() || p.value != value;
                p.raw.end = s.len();
                p.value = value;
                moved(changed)
            }
            (Mode::Tool, Tail::Nothing) => TailMove::Same,
            _ => {
                let new = self.tail(s);
                let changed = new != *tail;
                *tail = new;
                if changed {
                    TailMove::Other
                } else {
                    TailMove::Same
                }
            }
        }
    }
}
