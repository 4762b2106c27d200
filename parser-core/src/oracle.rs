//! The naive oracle: Cline's `parseAssistantMessageV2` transcribed character by character, every
//! tag tested at every position, by its end, exactly as the TypeScript does. Slow on purpose and
//! kept only for tests and fuzzing (`cfg(test)` or `cfg(fuzzing)`; integration tests include this
//! file by path). It shares no code with the fast parser, not even the trim.

extern crate alloc;

use alloc::string::String;
use alloc::vec::Vec;

/// JavaScript's `String.prototype.trim`: WhiteSpace and LineTerminator code points (ECMA-262).
fn js_trim(s: &str) -> &str {
    s.trim_matches(|c: char| {
        matches!(
            c,
            '\t' | '\n'
                | '\u{B}'
                | '\u{C}'
                | '\r'
                | ' '
                | '\u{A0}'
                | '\u{1680}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
        ) || ('\u{2000}'..='\u{200A}').contains(&c)
    })
}

/// A block as the oracle builds it: owned, like the JavaScript objects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NaiveBlock {
    /// `{type: "text", content, partial}`
    Text {
        /// Trimmed text.
        content: String,
        /// Partial flag.
        partial: bool,
    },
    /// `{type: "tool_use", name, params, partial}`; params in first-assignment order.
    Tool {
        /// Tool name.
        name: String,
        /// Params in object-key order.
        params: Vec<NaiveParam>,
        /// Partial flag.
        partial: bool,
    },
}

fn starts_with_at(chars: &[char], at: isize, tag: &[char]) -> bool {
    at >= 0 && chars.len() >= at as usize + tag.len() && &chars[at as usize..at as usize + tag.len()] == tag
}

fn slice(chars: &[char], from: usize, to: usize) -> String {
    chars[from..to.max(from)].iter().collect()
}

/// A param: (name, value, raw value before the trim).
pub type NaiveParam = (String, String, String);

/// `params[name] = raw.trim()`, keeping the raw value too.
fn set(params: &mut Vec<NaiveParam>, name: &str, raw: String) {
    let value = String::from(js_trim(&raw));
    match params.iter_mut().find(|(k, _, _)| k == name) {
        Some((_, v, r)) => (*v, *r) = (value, raw),
        None => params.push((name.into(), value, raw)),
    }
}

fn index_of(hay: &[char], needle: &[char]) -> Option<usize> {
    (0..=hay.len().checked_sub(needle.len())?).find(|&i| &hay[i..i + needle.len()] == needle)
}

fn last_index_of(hay: &[char], needle: &[char]) -> Option<usize> {
    (0..=hay.len().checked_sub(needle.len())?).rev().find(|&i| &hay[i..i + needle.len()] == needle)
}

/// Parse `input` with the given tool and param names.
pub fn parse(input: &str, tool_names: &[&str], param_names: &[&str]) -> Vec<NaiveBlock> {
    let chars: Vec<char> = input.chars().collect();
    let tag = |open: bool, name: &str| -> Vec<char> {
        let s: String = if open { alloc::format!("<{name}>") } else { alloc::format!("</{name}>") };
        s.chars().collect()
    };
    let tool_tags: Vec<(Vec<char>, &str)> = tool_names.iter().map(|n| (tag(true, n), *n)).collect();
    let param_tags: Vec<(Vec<char>, &str)> = param_names.iter().map(|n| (tag(true, n), *n)).collect();

    let mut blocks = Vec::new();
    let mut text_start = 0usize;
    let mut tool: Option<(String, Vec<NaiveParam>)> = None;
    let mut tool_start = 0usize;
    let mut param: Option<String> = None;
    let mut value_start = 0usize;

    for i in 0..chars.len() {
        let ends_here = |t: &[char]| starts_with_at(&chars, i as isize - t.len() as isize + 1, t);
        if let (Some((_, params)), Some(p)) = (&mut tool, &param) {
            let close = tag(false, p);
            if ends_here(&close) {
                let value = slice(&chars, value_start, i + 1 - close.len());
                set(params, p, value);
                param = None;
            }
            continue;
        }
        if let Some((name, params)) = &mut tool {
            if let Some((t, p)) = param_tags.iter().find(|(t, _)| ends_here(t)) {
                param = Some(String::from(*p));
                value_start = i + 1;
                let _ = t;
                continue;
            }
            let close = tag(false, name);
            if ends_here(&close) {
                let body: Vec<char> = chars[tool_start..i + 1 - close.len()].to_vec();
                if name == "write_to_file" && index_of(&body, &tag(true, "content")).is_some() {
                    let open_at = index_of(&body, &tag(true, "content"));
                    let close_at = last_index_of(&body, &tag(false, "content"));
                    if let (Some(a), Some(b)) = (open_at, close_at) {
                        if b > a {
                            let v = slice(&body, a + "<content>".len(), b);
                            set(params, "content", v);
                        }
                    }
                }
                let (name, params) = tool.take().unwrap_or_default();
                blocks.push(NaiveBlock::Tool { name, params, partial: false });
                text_start = i + 1;
            }
            continue;
        }
        if let Some((t, n)) = tool_tags.iter().find(|(t, _)| ends_here(t)) {
            let text = slice(&chars, text_start, i + 1 - t.len());
            let text = js_trim(&text);
            if !text.is_empty() {
                blocks.push(NaiveBlock::Text { content: text.into(), partial: false });
            }
            tool = Some((String::from(*n), Vec::new()));
            tool_start = i + 1;
        }
    }
    if let (Some((_, params)), Some(p)) = (&mut tool, &param) {
        let value = slice(&chars, value_start, chars.len());
        set(params, p, value);
    }
    match tool {
        Some((name, params)) => blocks.push(NaiveBlock::Tool { name, params, partial: true }),
        None => {
            let text = slice(&chars, text_start, chars.len());
            let text = js_trim(&text);
            if !text.is_empty() {
                blocks.push(NaiveBlock::Text { content: text.into(), partial: true });
            }
        }
    }
    blocks
}
