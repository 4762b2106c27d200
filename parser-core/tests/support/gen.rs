//! Random replies from the tag vocabulary, whitespace, Unicode and noise: the generator behind the
//! property tests (fast parser == naive oracle, stream == whole, fixed == alloc).

use super::Rng;
use parser_core::{CLINE_PARAM_NAMES, CLINE_TOOL_NAMES};

const WS: &[&str] = &[
    " ", "\n", "\t", "\r\n", "\u{a0}", "\u{feff}", "\u{85}", "\u{3000}", "\u{2028}", "\u{200b}", "\u{180e}", "\u{1c}",
];
const TEXT: &[&str] = &[
    "I'll",
    "read",
    "the file",
    "a < b",
    "x > y",
    "é",
    "日本語",
    "😀",
    "e\u{301}",
    "\u{10ffff}",
    "\0",
    "`code`",
    "&lt;",
    "fn main() {}",
    "<",
    ">",
    "</",
    "<<",
    ">>",
    "/",
    "<>",
    "</>",
];

/// Tool names plus a few that are not tools.
fn tool(rng: &mut Rng, tools: &[&str]) -> String {
    match rng.below(10) {
        0 => "Read_File".into(),
        1 => "unknown_tool".into(),
        2 => tools[rng.below(tools.len())].to_uppercase(),
        _ => tools[rng.below(tools.len())].to_string(),
    }
}

fn param(rng: &mut Rng, params: &[&str]) -> String {
    match rng.below(12) {
        _ if params.is_empty() => "content".into(),
        0 => "prompt_6".into(),
        1 => "absolutepath".into(),
        2 | 3 => "content".into(),
        _ => params[rng.below(params.len())].to_string(),
    }
}

/// One reply, built from the given tables (so custom grammars can be exercised too).
pub fn reply_with(rng: &mut Rng, tools: &[&str], params: &[&str]) -> String {
    let mut s = String::new();
    let pieces = 1 + rng.below(24);
    let mut open_tools: Vec<String> = Vec::new();
    let mut open_params: Vec<String> = Vec::new();
    for _ in 0..pieces {
        match rng.below(16) {
            0 | 1 => s.push_str(WS[rng.below(WS.len())]),
            2 | 3 => s.push_str(TEXT[rng.below(TEXT.len())]),
            4 => {
                let t = if rng.below(4) == 0 { "write_to_file".to_string() } else { tool(rng, tools) };
                s.push_str(&format!("<{t}>"));
                open_tools.push(t);
            }
            5 => {
                let t = open_tools.pop().unwrap_or_else(|| tool(rng, tools));
                s.push_str(&format!("</{t}>"));
            }
            6 | 7 => {
                let p = param(rng, params);
                s.push_str(&format!("<{p}>"));
                open_params.push(p);
            }
            8 | 9 => {
                let p = open_params.pop().unwrap_or_else(|| param(rng, params));
                s.push_str(&format!("</{p}>"));
            }
            10 => {
                // A tag cut short, or with a space, slash or attribute.
                let name = if rng.below(2) == 0 { tool(rng, tools) } else { param(rng, params) };
                let mut cut = rng.below(name.len() + 1);
                while !name.is_char_boundary(cut) {
                    cut -= 1;
                }
                let forms = [
                    format!("<{}", &name[..cut]),
                    format!("</{}", &name[..cut]),
                    format!("<{name} >"),
                    format!("<{name}/>"),
                    format!("< {name}>"),
                ];
                let k = rng.below(forms.len());
                s.push_str(&forms[k]);
            }
            11 => s.push_str(&"x".repeat(rng.below(40))),
            12 => {
                let ws = WS[rng.below(WS.len())];
                s.push_str(&ws.repeat(1 + rng.below(4)));
            }
            _ => {
                let word = TEXT[rng.below(TEXT.len())];
                let ws = WS[rng.below(WS.len())];
                s.push_str(word);
                s.push_str(ws);
            }
        }
    }
    s
}

/// One reply with Cline's tables.
pub fn reply(rng: &mut Rng) -> String {
    reply_with(rng, &CLINE_TOOL_NAMES, &CLINE_PARAM_NAMES)
}
