//! The arguments of a native tool call, read as their JSON text streams in: each fragment is
//! scanned once (O(n) over the whole call, like the XML path's streaming parser), and the
//! parameters seen so far are always at hand as strings — the partial values shown while the
//! call streams. Fragments may end anywhere: inside a key, inside a `\n` or `\u00e9` escape,
//! between the two halves of a surrogate pair.
//!
//! The final values come from [`Args::finish`], which parses the text with serde_json, so
//! what runs is exactly what a JSON parser reads; the incremental reading is only for
//! display. As Cline's streaming parser, the first whole object is the arguments, whatever
//! follows it; raw line breaks and other control characters inside its strings are read as
//! the escapes JSON wants (Cline's salvage reads them so).

use serde_json::{Map, Value};

/// A tool call's arguments being read.
#[derive(Debug, Default)]
pub(crate) struct Args {
    raw: String,
    state: State,
    text: Text,
    /// Nesting depth inside a non-string value (`[`, `{`), and whether inside a string there.
    depth: u32,
    in_nested_string: bool,
    nested_escape: bool,
    params: Vec<(String, String)>,
    key: String,
    broken: bool,
    steps: usize,
    /// Characters of keys and values decoded so far.
    decoded: usize,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum State {
    #[default]
    Start,
    /// After `{` or `,`: a key or `}`.
    Key,
    InKey,
    Colon,
    Value,
    InString,
    InRaw,
    AfterValue,
    Done,
}

/// A JSON string being decoded, escapes included, across fragments.
#[derive(Debug, Default)]
struct Text {
    escape: bool,
    /// Hex digits of a `\u` escape read so far (`Some` while inside one).
    hex: Option<(u32, u8)>,
    /// A high surrogate waiting for its low half.
    high: Option<u32>,
}

/// What one character of a JSON string means.
enum Step {
    Char(char),
    Nothing,
    End,
}

impl Text {
    fn step(&mut self, c: char) -> Step {
        if let Some((acc, n)) = self.hex {
            let Some(d) = c.to_digit(16) else {
                // Not an escape after all (serde_json refuses it in the final text): the
                // character is read as itself, so a `"` still ends the string — swallowed, it
                // made a whole object look cut off.
                self.hex = None;
                self.high = None;
                return self.step(c);
            };
            let acc = acc * 16 + d;
            if n < 3 {
                self.hex = Some((acc, n + 1));
                return Step::Nothing;
            }
            self.hex = None;
            return match (self.high.take(), acc) {
                (Some(hi), 0xDC00..=0xDFFF) => {
                    Step::Char(char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (acc - 0xDC00)).unwrap_or('\u{FFFD}'))
                }
                (_, 0xD800..=0xDBFF) => {
                    self.high = Some(acc);
                    Step::Nothing
                }
                (_, cp) => Step::Char(char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER)),
            };
        }
        if self.escape {
            self.escape = false;
            let out = match c {
                'n' => '\n',
                't' => '\t',
                'r' => '\r',
                'b' => '\u{8}',
                'f' => '\u{c}',
                'u' => {
                    self.hex = Some((0, 0));
                    return Step::Nothing;
                }
                other => other, // `"`, `\`, `/`
            };
            return self.lone_high_then(out);
        }
        match c {
            '\\' => {
                self.escape = true;
                Step::Nothing
            }
            '"' => {
                self.high = None;
                Step::End
            }
            c => self.lone_high_then(c),
        }
    }

    /// A character after a high surrogate that found no low half: the surrogate is dropped
    /// from the display (it cannot be a Rust `char`; serde_json rejects it in the final text).
    fn lone_high_then(&mut self, c: char) -> Step {
        self.high = None;
        Step::Char(c)
    }
}

impl Args {
    /// Nothing read yet.
    pub(crate) fn new() -> Self {
        Args::default()
    }

    /// Reads the next fragment.
    pub(crate) fn push(&mut self, fragment: &str) {
        self.raw.push_str(fragment);
        for c in fragment.chars() {
            self.steps += 1;
            if !self.broken {
                self.char(c);
            }
        }
    }

    fn char(&mut self, c: char) {
        let ws = c.is_ascii_whitespace();
        match self.state {
            State::Start if ws => {}
            State::Start if c == '{' => self.state = State::Key,
            State::Key if ws || c == ',' => {}
            State::Key if c == '}' => self.state = State::Done,
            State::Key if c == '"' => {
                self.key.clear();
                self.text = Text::default();
                self.state = State::InKey;
            }
            State::InKey => match self.text.step(c) {
                Step::Char(ch) => self.key.push(ch),
                Step::Nothing => {}
                Step::End => self.state = State::Colon,
            },
            State::Colon if ws => {}
            State::Colon if c == ':' => self.state = State::Value,
            State::Value if ws => {}
            State::Value => {
                self.params.push((std::mem::take(&mut self.key), String::new()));
                if c == '"' {
                    self.text = Text::default();
                    self.state = State::InString;
                } else {
                    self.state = State::InRaw;
                    self.depth = 0;
                    self.in_nested_string = false;
                    self.raw_char(c);
                }
            }
            State::InString => match self.text.step(c) {
                Step::Char(ch) => self.value().push(ch),
                Step::Nothing => {}
                Step::End => self.state = State::AfterValue,
            },
            State::InRaw => self.raw_char(c),
            State::AfterValue if ws => {}
            State::AfterValue if c == ',' => self.state = State::Key,
            State::AfterValue if c == '}' => self.state = State::Done,
            // Anything after the object is not read: the first whole object is the arguments
            // (Cline's streaming JSON parser keeps it; a gateway that sends the arguments again
            // after their pieces made every call refused).
            State::Done => {}
            _ => self.broken = true,
        }
    }

    /// A character of a number, `true`/`false`/`null`, array or object value: kept as text.
    fn raw_char(&mut self, c: char) {
        if self.in_nested_string {
            if self.nested_escape {
                self.nested_escape = false;
            } else if c == '\\' {
                self.nested_escape = true;
            } else if c == '"' {
                self.in_nested_string = false;
            }
            self.value().push(c);
            return;
        }
        match c {
            '"' => self.in_nested_string = true,
            '[' | '{' => self.depth += 1,
            ']' | '}' if self.depth > 0 => self.depth -= 1,
            ',' | '}' if self.depth == 0 => {
                let v = self.value();
                v.truncate(v.trim_end().len());
                self.state = if c == ',' { State::Key } else { State::Done };
                return;
            }
            _ => {}
        }
        self.value().push(c);
    }

    fn value(&mut self) -> &mut String {
        self.decoded += 1;
        &mut self.params.last_mut().expect("a value follows its key").1
    }

    /// How many characters of values have been decoded (grows with every push that adds to one).
    pub(crate) fn decoded(&self) -> usize {
        self.decoded
    }

    /// The parameters read so far; the last one may still be growing.
    pub(crate) fn params(&self) -> &[(String, String)] {
        &self.params
    }

    /// The whole text so far.
    pub(crate) fn raw(&self) -> &str {
        &self.raw
    }

    /// Characters scanned so far (each exactly once).
    #[cfg(test)]
    pub(crate) fn steps(&self) -> usize {
        self.steps
    }

    /// Whether the text read so far is a whole object (more than whitespace may not follow).
    #[cfg(test)]
    pub(crate) fn is_complete(&self) -> bool {
        self.state == State::Done && !self.broken
    }

    /// The final arguments: the whole text parsed as one JSON object, each value a string
    /// (strings as they are, anything else as compact JSON, as Cline's `JSON.stringify`), and
    /// the object as sent, compact, types and all (`"start_line":1`, not `"1"`: what history
    /// keeps, as Cline does). Empty text is an empty object (a call without arguments).
    pub(crate) fn finish(&self) -> Result<(Vec<(String, String)>, String), Invalid> {
        if self.raw.trim().is_empty() {
            return Ok((Vec::new(), "{}".to_string()));
        }
        if !self.broken && self.state != State::Done {
            return Err(Invalid::Incomplete);
        }
        let map = first_object(&self.raw)
            .or_else(|e| first_object(&with_control_characters_escaped(&self.raw)).map_err(|_| e))
            .map_err(Invalid::Malformed)?;
        let compact = serde_json::to_string(&map).map_err(|e| Invalid::Malformed(e.to_string()))?;
        let params = map
            .into_iter()
            .map(|(k, v)| {
                let s = match v {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                (k, s)
            })
            .collect();
        Ok((params, compact))
    }
}

/// The first JSON object of `text`, whatever follows it (as Cline's `@streamparser/json`
/// reads a call's arguments: `{"a":1}{"a":1}` is `{"a":1}`); serde_json's message when there
/// is none.
fn first_object(text: &str) -> Result<Map<String, Value>, String> {
    match serde_json::Deserializer::from_str(text).into_iter::<Map<String, Value>>().next() {
        Some(Ok(map)) => Ok(map),
        Some(Err(e)) => Err(e.to_string()),
        None => Err("no JSON object".to_string()),
    }
}

/// `text` with each raw control character inside a string written as its escape (`\n`, `\t`,
/// `\u001b`): a model that writes a file's line breaks raw inside the JSON string means them,
/// and Cline's salvage of such arguments reads them so; JSON refuses them.
fn with_control_characters_escaped(text: &str) -> String {
    let (mut out, mut in_string, mut escape) = (String::with_capacity(text.len()), false, false);
    for c in text.chars() {
        match c {
            _ if escape => escape = false,
            '\\' if in_string => escape = true,
            '"' => in_string = !in_string,
            '\n' if in_string => {
                out.push_str("\\n");
                continue;
            }
            '\t' if in_string => {
                out.push_str("\\t");
                continue;
            }
            '\r' if in_string => {
                out.push_str("\\r");
                continue;
            }
            c if in_string && c < ' ' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

/// Why arguments cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Invalid {
    /// The text stopped before the object closed (the reply was cut, or ended).
    Incomplete,
    /// Not a JSON object: serde_json's message.
    Malformed(String),
}

/// The parameters as one JSON object text (for history: always valid JSON).
pub(crate) fn object_text(params: &[(String, String)]) -> String {
    let map: Map<String, Value> = params.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
    Value::Object(map).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// Feeds `text` one character at a time, checking the partial values only ever grow.
    fn stream(text: &str) -> Args {
        let mut a = Args::new();
        let mut last: Vec<(String, String)> = Vec::new();
        let mut buf = [0u8; 4];
        for c in text.chars() {
            a.push(c.encode_utf8(&mut buf));
            let now = a.params().to_vec();
            for (i, (k, v)) in last.iter().enumerate() {
                assert_eq!(&now[i].0, k);
                assert!(now[i].1.starts_with(v.as_str()) || now[i].1 == v.trim_end(), "{v:?} → {:?}", now[i].1);
            }
            last = now;
        }
        a
    }

    #[test]
    fn split_inside_escapes_and_surrogate_pairs() {
        let text = r#"{"path": "a\"b\\c\n\u00e9\ud83d\ude00.txt", "content":"x"}"#;
        for cut in 1..text.len() {
            let mut a = Args::new();
            a.push(&text[..cut]);
            a.push(&text[cut..]);
            assert_eq!(a.params(), pairs(&[("path", "a\"b\\c\né😀.txt"), ("content", "x")]), "cut at {cut}");
            assert_eq!(a.finish().unwrap().0, a.params());
        }
        let a = stream(text);
        assert!(a.is_complete());
    }

    #[test]
    fn partial_values_while_streaming() {
        let mut a = Args::new();
        a.push(r#"{"path":"src/ma"#);
        assert_eq!(a.params(), pairs(&[("path", "src/ma")]));
        assert!(!a.is_complete());
        assert_eq!(a.finish(), Err(Invalid::Incomplete));
        a.push(r#"in.rs","recursive":tr"#);
        assert_eq!(a.params(), pairs(&[("path", "src/main.rs"), ("recursive", "tr")]));
        a.push("ue}");
        assert_eq!(a.finish().unwrap().0, pairs(&[("path", "src/main.rs"), ("recursive", "true")]));
    }

    #[test]
    fn non_string_values_become_compact_json() {
        let a = stream(r#"{ "options" : [ "a", "b,}" ], "n": 3, "o": {"k": [1, {"x": "}"}]} }"#);
        assert!(a.is_complete());
        let (params, as_sent) = a.finish().unwrap();
        assert_eq!(params, pairs(&[("options", r#"["a","b,}"]"#), ("n", "3"), ("o", r#"{"k":[1,{"x":"}"}]}"#)]));
        assert_eq!(
            as_sent, r#"{"options":["a","b,}"],"n":3,"o":{"k":[1,{"x":"}"}]}}"#,
            "compact, types kept, in order"
        );
    }

    #[test]
    fn empty_arguments_are_an_empty_call_and_garbage_is_malformed() {
        assert_eq!(Args::new().finish().unwrap(), (Vec::<(String, String)>::new(), "{}".to_string()));
        let mut a = Args::new();
        a.push("{}");
        assert_eq!(a.finish().unwrap().0, Vec::<(String, String)>::new());
        for bad in ["[1]", "{\"a\" 1}", "nope", "{\"path\":\"a\\u12\"}"] {
            let mut a = Args::new();
            a.push(bad);
            assert!(matches!(a.finish(), Err(Invalid::Malformed(_))), "{bad}");
        }
    }

    /// As Cline's streaming JSON parser reads a call's arguments: the first whole object,
    /// whatever follows (a gateway that sends the arguments again after their pieces made
    /// every call refused).
    #[test]
    fn the_first_whole_object_is_the_arguments() {
        for text in [r#"{"path":"a.txt"}{"path":"a.txt"}"#, r#"{"path":"a.txt"} done"#, r#"{"path":"a.txt"}}"#] {
            let mut a = Args::new();
            for piece in [&text[..5], &text[5..]] {
                a.push(piece);
            }
            assert_eq!(a.finish().unwrap(), (pairs(&[("path", "a.txt")]), r#"{"path":"a.txt"}"#.to_string()), "{text}");
            assert_eq!(a.params(), pairs(&[("path", "a.txt")]), "{text}");
        }
    }

    /// Line breaks and tabs written raw inside a string (JSON wants them escaped) are what the
    /// model meant, as Cline's salvage reads them; the object kept is valid JSON.
    #[test]
    fn raw_control_characters_inside_strings_are_read_as_meant() {
        let mut a = Args::new();
        a.push("{\"absolutePath\":\"a.py\",\"content\":\"def f():\n\treturn \\\"x\\\"\u{1b}\n\"}");
        let (params, compact) = a.finish().unwrap();
        assert_eq!(params, pairs(&[("absolutePath", "a.py"), ("content", "def f():\n\treturn \"x\"\u{1b}\n")]));
        assert_eq!(compact, r#"{"absolutePath":"a.py","content":"def f():\n\treturn \"x\"\u001b\n"}"#);
    }

    /// A `\u` with a character that is no hex digit does not swallow the closing quote: the
    /// object is whole (and malformed), not cut off.
    #[test]
    fn a_bad_unicode_escape_leaves_the_string_its_end() {
        let mut a = Args::new();
        a.push(r#"{"path":"a\u12"}"#);
        assert!(a.is_complete());
        assert!(matches!(a.finish(), Err(Invalid::Malformed(_))));
    }

    #[test]
    fn each_character_is_scanned_once() {
        let big = format!("{{\"content\":\"{}\"}}", "é\\n".repeat(10_000));
        let mut a = Args::new();
        let chars: Vec<char> = big.chars().collect();
        for piece in chars.chunks(7) {
            a.push(&piece.iter().collect::<String>());
        }
        assert_eq!(a.steps(), chars.len());
        assert_eq!(a.params()[0].1.chars().count(), 20_000);
    }

    #[test]
    fn object_text_is_valid_json() {
        let t = object_text(&pairs(&[("path", "a\"b")]));
        assert_eq!(t, r#"{"path":"a\"b"}"#);
    }
}
