//! A rule file's YAML frontmatter, read as Cline's `parseYamlFrontmatter` reads it.
//!
//! Cline finds the block with `^\s*---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$` and loads it
//! with js-yaml's JSON schema; a block that does not load is a *parse error*, and the rule is
//! then used whole, frontmatter included ("fail-open"). Rules only ever use flat keys with
//! scalar or list values (and skills a `description` string), so this reader understands
//! exactly that much YAML — plain values (over several lines too), quoted, flow-list and
//! block-list values, comments, literal and folded block scalars, nested maps it skips — and calls
//! everything js-yaml rejects that a rule author is likely to write a parse error: unclosed
//! quotes or brackets, tabs for indentation, duplicate keys, `a: b: c`, a top-level line that
//! is not `key: value`, and tags (`!!js/function`, which the JSON schema refuses).

/// The deepest nesting of flow lists read (far beyond any rule's).
const MAX_DEPTH: usize = 1000;

/// A frontmatter value, as far as conditionals care.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    /// A string (quoted or plain).
    Str(String),
    /// A list of values.
    List(Vec<Value>),
    /// `true` or `false` (in js-yaml's spellings).
    Bool(bool),
    /// Null: `null`, `~`, or nothing after the key.
    Null,
    /// A number or map: present, but not a string, list, boolean or null.
    Other,
}

/// What [`parse`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frontmatter<'a> {
    /// The keys and values, in order (empty without frontmatter or on a parse error).
    pub data: Vec<(String, Value)>,
    /// The text after the block; the whole input without frontmatter or on a parse error.
    pub body: &'a str,
    /// True when a block was found, even if it did not parse.
    pub had_frontmatter: bool,
    /// Why the block did not parse.
    pub parse_error: Option<String>,
}

/// Splits `markdown` into frontmatter and body.
pub(crate) fn parse(markdown: &str) -> Frontmatter<'_> {
    let markdown = markdown.strip_prefix('\u{feff}').unwrap_or(markdown);
    let none = Frontmatter { data: Vec::new(), body: markdown, had_frontmatter: false, parse_error: None };
    let Some((yaml, body)) = split(markdown) else { return none };
    match load(yaml) {
        Ok(data) => Frontmatter { data, body, had_frontmatter: true, parse_error: None },
        Err(e) => Frontmatter { data: Vec::new(), body: markdown, had_frontmatter: true, parse_error: Some(e) },
    }
}

/// The text after a frontmatter block (`---` lines), whether or not the block parses.
pub(crate) fn after_block(markdown: &str) -> Option<&str> {
    split(markdown.strip_prefix('\u{feff}').unwrap_or(markdown)).map(|(_, body)| body)
}

/// The regex of Cline, by hand: (yaml, body).
fn split(s: &str) -> Option<(&str, &str)> {
    let t = s.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    let rest = t.strip_prefix("---")?;
    let rest = rest.strip_prefix("\r\n").or_else(|| rest.strip_prefix('\n'))?;
    // The lazy group ends at the first "\n---" that starts inside it.
    let close = rest.find("\n---")?;
    let yaml = rest[..close].strip_suffix('\r').unwrap_or(&rest[..close]);
    let after = &rest[close + 4..];
    let body = after.strip_prefix("\r\n").or_else(|| after.strip_prefix('\r')).unwrap_or(after);
    let body = body.strip_prefix('\n').unwrap_or(body);
    Some((yaml, body))
}

fn load(yaml: &str) -> Result<Vec<(String, Value)>, String> {
    let lines: Vec<&str> = yaml.lines().collect();
    if let Some(first) = lines.iter().find(|l| !is_blank(l)).filter(|l| split_key(l).is_none()) {
        // Not a map: js-yaml loads a list or a plain text too, and Cline then finds no key in
        // it (the rule applies, without its frontmatter).
        if first == &"-" || first.starts_with("- ") {
            return block(&lines, 0).map(|_| Vec::new());
        }
        let text: Vec<String> = lines.iter().map(|l| strip_plain_comment(l).trim().to_string()).collect();
        if is_plain_start(first) && !first.starts_with([' ', '\t']) && plain(&fold(&text)).is_ok() {
            return Ok(Vec::new());
        }
    }
    let mut data: Vec<(String, Value)> = Vec::new();
    // The keys seen (a list searched per key made a block of 50,000 keys take 3 s).
    let mut seen = std::collections::HashSet::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let n = i + 1;
        i += 1;
        if is_blank(line) {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            return Err(format!("bad indentation of a mapping entry (line {n})"));
        }
        if line == "..." || line == "---" {
            return Err(format!("unexpected document marker (line {n})"));
        }
        let (key, rest) = split_key(line).ok_or_else(|| format!("expected `key: value` (line {n})"))?;
        if !seen.insert(key.clone()) {
            return Err(format!("duplicated mapping key {key:?} (line {n})"));
        }
        let raw_rest = strip_anchor(rest.trim_start()).map_err(|e| format!("{e} (line {n})"))?;
        let commented = strip_comment(raw_rest).len() < raw_rest.len();
        let rest = strip_comment(raw_rest).trim();
        let next = lines[i..].iter().position(|l| !is_blank(l)).map(|k| i + k);
        let value = if let Some(k) = next.filter(|&k| {
            rest.is_empty() && lines[k].starts_with(' ') && lines[k].trim_start().starts_with(['"', '\'', '[', '{'])
        }) {
            // A quoted or flow value on the lines after its key, over as many as it takes.
            i = k + 1;
            flow_over_lines(lines[k], &lines, &mut i).map_err(|e| format!("{e} (line {})", k + 1))?
        } else if rest.is_empty() {
            // A nested block: a list of scalars, a map (skipped), or nothing (null).
            let start = i;
            while i < lines.len() && (is_blank(lines[i]) || lines[i].starts_with([' ', '\t', '-'])) {
                if lines[i].starts_with('\t') {
                    return Err(format!("tab characters must not be used in indentation (line {})", i + 1));
                }
                i += 1;
            }
            block(&lines[start..i], start)?
        } else if rest.starts_with(['|', '>']) {
            // Its lines: up to the first one indented less than its first (js-yaml then refuses
            // that line: "bad indentation", below).
            let start = i;
            // An indentation digit gives it (the key is at the top level).
            let mut indent = strip_comment(rest).trim()[1..].chars().find_map(|c| c.to_digit(10).map(|d| d as usize));
            while i < lines.len() && (lines[i].trim().is_empty() || lines[i].starts_with(' ')) {
                let here = lines[i].len() - lines[i].trim_start_matches(' ').len();
                if !lines[i].trim().is_empty() && here < *indent.get_or_insert(here) {
                    break;
                }
                i += 1;
            }
            Value::Str(block_scalar(rest, &lines[start..i]).ok_or(format!("a line break is expected (line {n})"))?)
        } else if continues(&lines[i..]) && is_plain_start(rest) && !commented {
            // A plain scalar over several lines: folded, as js-yaml folds it.
            let start = i;
            while i < lines.len() && continues(&lines[i..]) {
                i += 1;
            }
            let mut parts = vec![rest.to_string()];
            let more = &lines[start..i];
            if let Some(k) = more[..more.len() - 1].iter().position(|l| strip_plain_comment(l).len() < l.len()) {
                // A comment ends the scalar; the lines after it are then out of place.
                return Err(format!("bad indentation of a mapping entry (line {})", start + k + 2));
            }
            parts.extend(more.iter().map(|l| strip_plain_comment(l).trim().to_string()));
            match plain(&fold(&parts)).map_err(|e| format!("{e} (line {n})"))? {
                Value::Other | Value::Bool(_) | Value::Null => Value::Str(fold(&parts)),
                v => v,
            }
        } else if rest.starts_with(['"', '\'', '[', '{']) {
            // A quoted or flow value goes on over the next lines until it closes, whatever
            // their indentation, as js-yaml reads it.
            flow_over_lines(raw_rest, &lines, &mut i).map_err(|e| format!("{e} (line {n})"))?
        } else {
            scalar_or_flow(rest).map_err(|e| format!("{e} (line {n})"))?
        };
        data.push((key, value));
    }
    Ok(data)
}

/// The value that starts `first` (a key's, or a list item's): a quoted or flow one read over
/// the lines from `lines[*i]` on until it closes (`*i` is left after its last line), whatever
/// their indentation, as js-yaml reads it; the text after it on its last line may only be a
/// comment. The lines it is tried on double until it closes, so a value costs about its own
/// length, not the rest of the block's (an unclosed quote over 20,000 lines took 34 s when the
/// lines were added one at a time, each try re-reading them all).
fn flow_over_lines(first: &str, lines: &[&str], i: &mut usize) -> Result<Value, String> {
    let head = strip_comment(first).trim();
    if !head.starts_with(['"', '\'', '[', '{']) {
        return scalar_or_flow(head);
    }
    let mut take = 0;
    loop {
        let mut raw = first.to_string();
        for l in &lines[*i..*i + take] {
            raw.push('\n');
            raw.push_str(l);
        }
        #[cfg(test)]
        tests::SCANNED.with(|n| n.set(n.get() + raw.len()));
        let text = strip_comments(&raw);
        let text = text.trim_start();
        match flow_value(text) {
            Err(e) if e.starts_with("unexpected end of the stream") && *i + take < lines.len() => {
                take = (take * 2).max(1).min(lines.len() - *i);
            }
            Err(e) => return Err(e),
            Ok((value, rest)) => {
                let used = text[..text.len() - rest.len()].matches('\n').count();
                if lines[*i..*i + used].iter().any(|l| l.starts_with("...")) {
                    return Err("unexpected end of the document".into());
                }
                *i += used;
                let after = rest.split('\n').next().unwrap_or("");
                return if ends(after) { Ok(value) } else { Err(format!("unexpected text after {}", what(text))) };
            }
        }
    }
}

/// What the flow value at the start of `s` is, for an error.
fn what(s: &str) -> &'static str {
    match s.as_bytes().first() {
        Some(b'[') => "a list",
        Some(b'{') => "a map",
        _ => "a quoted string",
    }
}

/// The quoted string, flow list or flow map at the start of `s`, and the text after it.
fn flow_value(s: &str) -> Result<(Value, &str), String> {
    match s.as_bytes().first() {
        Some(b'[') => flow_list(s, 0).map(|(items, rest)| (Value::List(items), rest)),
        Some(b'{') => {
            let end = matching(s, '{', '}').ok_or("unexpected end of the stream within a flow collection")?;
            Ok((Value::Other, &s[end + 1..]))
        }
        _ => quoted(s).map(|(v, rest)| (Value::Str(v), rest)),
    }
}

/// Whether the next lines continue the value on a `key: value` line: an indented line comes,
/// after blank lines if any (not a comment: js-yaml ends the scalar there).
fn continues(next: &[&str]) -> bool {
    let first = next.iter().find(|l| !l.trim().is_empty());
    first.is_some_and(|l| l.starts_with([' ', '\t']) && !l.trim_start().starts_with('#'))
        && next.first().is_some_and(|l| l.trim().is_empty() || l.starts_with([' ', '\t']))
}

/// Whether `s` starts a plain (unquoted, not flow, not a block) scalar.
fn is_plain_start(s: &str) -> bool {
    !s.starts_with(['"', '\'', '[', '{', '|', '>', '&', '*', '!', '@', '`', '%', '#'])
}

/// Lines of a flow scalar folded as YAML folds them: a single line break is a space, each blank
/// line a line break.
fn fold(parts: &[String]) -> String {
    let mut out = String::new();
    let mut breaks = 0;
    for p in parts {
        if p.is_empty() {
            breaks += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(&if breaks == 0 { " ".to_string() } else { "\n".repeat(breaks) });
        }
        breaks = 0;
        out.push_str(p);
    }
    out
}

/// A block scalar (`|` literal, `>` folded, with `-`/`+` chomping and an indentation digit)
/// whose header is `header` and whose indented lines are `lines`, as js-yaml reads it; `None`
/// for a header it would refuse.
fn block_scalar(header: &str, lines: &[&str]) -> Option<String> {
    let head = strip_comment(header).trim_end();
    let literal = head.starts_with('|');
    let mut chomp = ' ';
    let mut indent = None;
    for c in head[1..].chars() {
        match c {
            '-' | '+' if chomp == ' ' => chomp = c,
            '1'..='9' if indent.is_none() => indent = c.to_digit(10).map(|d| d as usize),
            _ => return None,
        }
    }
    // The content's indentation: given, or the first line with text.
    let indent = indent.or_else(|| {
        let first = lines.iter().find(|l| !l.trim().is_empty())?;
        Some(first.len() - first.trim_start_matches(' ').len())
    });
    let body: Vec<&str> = lines
        .iter()
        .map(|l| if l.trim().is_empty() { "" } else { l.get(indent.unwrap_or(0)..).unwrap_or("") })
        .collect();
    let trailing = body.iter().rev().take_while(|l| l.is_empty()).count();
    let body = &body[..body.len() - trailing];
    let mut out = String::new();
    let mut breaks = 0;
    let mut prev_more = false;
    for (k, l) in body.iter().enumerate() {
        if l.is_empty() {
            breaks += 1;
            continue;
        }
        let more = l.starts_with([' ', '\t']);
        if k > breaks || !out.is_empty() {
            // Between two lines of text: literal keeps every break; folded makes a lone break
            // a space, except around more-indented lines.
            let n = if literal || more || prev_more { breaks + 1 } else { breaks };
            out.push_str(&if n == 0 { " ".to_string() } else { "\n".repeat(n) });
        } else {
            out.push_str(&"\n".repeat(breaks));
        }
        breaks = 0;
        prev_more = more;
        out.push_str(l);
    }
    if !body.is_empty() {
        match chomp {
            '-' => {}
            '+' => out.push_str(&"\n".repeat(1 + trailing)),
            _ => out.push('\n'),
        }
    } else if chomp == '+' {
        out.push_str(&"\n".repeat(trailing));
    }
    Some(out)
}

fn is_blank(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// `key: rest` (the key plain or quoted); `None` when the line is not a mapping entry.
fn split_key(line: &str) -> Option<(String, &str)> {
    if let Some(q) = line.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let end = line[1..].find(q)? + 1;
        let rest = line[end + 1..].strip_prefix(':')?;
        return (rest.is_empty() || rest.starts_with([' ', '\t'])).then(|| (line[1..end].to_string(), rest));
    }
    let colon = line.match_indices(':').map(|(i, _)| i).find(|&i| {
        let after = &line[i + 1..];
        after.is_empty() || after.starts_with([' ', '\t'])
    })?;
    let key = line[..colon].trim_end();
    if key.is_empty() || key.starts_with(['-', '[', '{', '!', '&', '*', '#', '|', '>', '%', '@', '`']) {
        return None;
    }
    Some((key.to_string(), &line[colon + 1..]))
}

/// A value's text without a trailing ` # comment` (outside quotes).
fn strip_comment(s: &str) -> &str {
    &s[..code_end(s, &mut None, &mut None)]
}

/// A plain value's line without its comment: a quote there is a character.
fn strip_plain_comment(s: &str) -> &str {
    &s[..code_end(s, &mut None, &mut Some('a'))]
}

/// Where a comment starts on `line` (its length if none): at a `#` at its start or after white
/// space, outside quotes. A quote opens a quoted scalar only where one can start — first in
/// the value or after `[`, `{`, `,` or `:` — so the `'` of `Don't` is a character.
/// `quote` and `prev` (the last character that was not white space) carry over from line to
/// line, for a value that spans lines.
fn code_end(line: &str, quote: &mut Option<char>, prev: &mut Option<char>) -> usize {
    let mut escaped = false;
    let mut last = ' ';
    for (i, c) in line.char_indices() {
        match *quote {
            Some('"') if escaped => escaped = false,
            Some('"') if c == '\\' => escaped = true,
            Some(q) if c == q => *quote = None,
            Some(_) => {}
            None if (c == '"' || c == '\'') && prev.is_none_or(|p| "[{,:".contains(p)) => *quote = Some(c),
            None if c == '#' && last.is_whitespace() => return i,
            None => {}
        }
        if !c.is_whitespace() {
            *prev = Some(c);
        }
        last = c;
    }
    line.len()
}

/// The indented lines under `key:`.
fn block(lines: &[&str], first: usize) -> Result<Value, String> {
    let content: Vec<(usize, &str)> =
        lines.iter().enumerate().filter(|(_, l)| !is_blank(l)).map(|(j, l)| (first + j + 1, *l)).collect();
    let Some(&(_, head)) = content.first() else { return Ok(Value::Null) };
    let indent = head.len() - head.trim_start().len();
    if !head.trim_start().starts_with('-') {
        let text = head.trim_start();
        if split_key(text).is_some() || !is_plain_start(text) {
            return Ok(Value::Other); // a nested map (or a quoted, flow… value): not a rule's shape
        }
        // A plain value on the lines after its key: folded, as on the key's line.
        let parts: Vec<String> = lines.iter().map(|l| strip_plain_comment(l).trim().to_string()).collect();
        return plain(&fold(&parts));
    }
    let mut items = Vec::new();
    let mut j = 0;
    while j < lines.len() {
        let (n, l) = (first + j + 1, lines[j]);
        j += 1;
        if is_blank(l) {
            continue;
        }
        let here = l.len() - l.trim_start().len();
        if here > indent {
            continue; // a continuation or nested structure of the previous item
        }
        if here < indent {
            return Err(format!("bad indentation of a sequence entry (line {n})"));
        }
        let t = l.trim_start();
        let Some(item) = t.strip_prefix('-').filter(|r| r.is_empty() || r.starts_with(' ')) else {
            return Err(format!("bad indentation of a mapping entry (line {n})"));
        };
        let item = strip_anchor(item.trim_start()).map_err(|e| format!("{e} (line {n})"))?;
        items.push(if strip_comment(item).trim().is_empty() {
            Value::Null
        } else if let Some(more) = plain_item_lines(item, lines, indent, first, &mut j)? {
            // A plain item over several lines: folded, as a key's plain value is.
            let mut parts = vec![strip_plain_comment(item).trim().to_string()];
            parts.extend(more);
            match plain(&fold(&parts)).map_err(|e| format!("{e} (line {n})"))? {
                Value::Other | Value::Bool(_) | Value::Null => Value::Str(fold(&parts)),
                v => v,
            }
        } else {
            // A quoted or flow item may go on over the next lines; once it closes, nothing
            // may follow it indented under it.
            let v = flow_over_lines(item, lines, &mut j).map_err(|e| format!("{e} (line {n})"))?;
            let flow = strip_comment(item).trim_start().starts_with(['"', '\'', '[', '{']);
            if let Some(k) = lines[j..].iter().position(|l| !is_blank(l)).filter(|_| flow) {
                let l = lines[j + k];
                if l.len() - l.trim_start().len() > indent {
                    return Err(format!("bad indentation of a sequence entry (line {})", first + j + k + 1));
                }
            }
            v
        });
    }
    Ok(Value::List(items))
}

/// The lines that continue a plain list item (`item`, the text after its `- `) from
/// `lines[*j]` on: those indented deeper than its `-` (at `indent`), a blank one between them
/// as `""`; `*j` is left after the last. `None` when the item is not plain or nothing continues
/// it. As in js-yaml, a comment ends the item: a line continuing it after one is an error.
fn plain_item_lines(
    item: &str,
    lines: &[&str],
    indent: usize,
    first: usize,
    j: &mut usize,
) -> Result<Option<Vec<String>>, String> {
    if !is_plain_start(strip_comment(item).trim_start()) {
        return Ok(None);
    }
    let mut more = Vec::new();
    let mut commented = strip_plain_comment(item).len() < item.len();
    let (mut k, mut taken) = (*j, *j);
    while k < lines.len() {
        let l = lines[k];
        k += 1;
        let t = l.trim_start();
        if t.is_empty() {
            continue;
        }
        if l.len() - t.len() <= indent {
            break;
        }
        if t.starts_with('#') {
            commented = true;
            continue;
        }
        if commented {
            return Err(format!("bad indentation of a sequence entry (line {})", first + k));
        }
        more.extend(std::iter::repeat_n(String::new(), k - 1 - taken));
        let code = strip_plain_comment(l);
        commented = code.len() < l.len();
        more.push(code.trim().to_string());
        taken = k;
    }
    if more.is_empty() {
        return Ok(None);
    }
    *j = taken;
    Ok(Some(more))
}

/// A one-line value: quoted, flow list, flow map, or plain.
fn scalar_or_flow(s: &str) -> Result<Value, String> {
    if s.starts_with('!') {
        return Err(format!("unknown tag {:?}", s.split_whitespace().next().unwrap_or(s)));
    }
    let s = strip_anchor(s)?;
    if s.is_empty() {
        return Ok(Value::Null); // `&a` alone
    }
    if s.starts_with(['[', '{', '"', '\'']) {
        let (value, rest) = flow_value(s)?;
        return if ends(rest) { Ok(value) } else { Err(format!("unexpected text after {}", what(s))) };
    }
    plain(s)
}

/// Whether `rest`, after a closed quoted or flow value, ends it: nothing, or a comment (which
/// js-yaml takes there even without white space before its `#`).
fn ends(rest: &str) -> bool {
    rest.trim().is_empty() || rest.starts_with('#')
}

/// `s` without its anchor (`&name `, which js-yaml allows on any value and the value keeps);
/// an anchor without a name, or a second one, is js-yaml's error.
fn strip_anchor(s: &str) -> Result<&str, String> {
    let Some(anchored) = s.strip_prefix('&') else { return Ok(s) };
    let end = anchored.find([' ', '\t', ',', '[', ']', '{', '}']).unwrap_or(anchored.len());
    if end == 0 {
        return Err("name of an anchor node must contain at least one character".into());
    }
    let rest = anchored[end..].trim_start();
    if rest.starts_with('&') {
        return Err("duplication of an anchor property".into());
    }
    Ok(rest)
}

fn plain(s: &str) -> Result<Value, String> {
    if let Some(name) = s.strip_prefix('*') {
        // An alias: `*.tsx` unquoted is one, and js-yaml knows no anchor of that name.
        let name = name.split([' ', ',', '[', ']', '{', '}']).next().unwrap_or_default();
        return Err(format!("unidentified alias {name:?}"));
    }
    if s == "-" || s.starts_with("- ") {
        // A sequence entry cannot start a plain value (`paths: - src/**`).
        return Err("bad indentation of a mapping entry".into());
    }
    if s.contains(": ") || s.ends_with(':') {
        return Err("incomplete explicit mapping pair; a key node is missed".into());
    }
    if s.starts_with(['@', '`', '%']) {
        return Err(format!("a plain value cannot start with {:?}", &s[..1]));
    }
    // (Rust reads `inf` and `NaN` as numbers; js-yaml's JSON schema does not.)
    let number = s.parse::<f64>().is_ok() && !s.chars().any(|c| c.is_ascii_alphabetic() && !matches!(c, 'e' | 'E'));
    Ok(match s {
        "null" | "Null" | "NULL" | "~" => Value::Null,
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        _ if number => Value::Other,
        _ => Value::Str(s.to_string()),
    })
}

/// A quoted string at the start of `s`: (value, rest). Over several lines it is folded as
/// js-yaml folds it: a line break and the next line's leading white space are one space, each
/// blank line after it a line break (the white space before a break is kept, as js-yaml keeps
/// it), and in double quotes a `\` before the break joins the lines.
fn quoted(s: &str) -> Result<(String, &str), String> {
    let q = s.as_bytes()[0] as char;
    let kind = if q == '"' { "double" } else { "single" };
    let mut out = String::new();
    let mut chars = s[1..].char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == q {
            if q == '\'' && s[1 + i + 1..].starts_with('\'') {
                out.push('\'');
                chars.next();
                continue;
            }
            return Ok((out, &s[1 + i + 1..]));
        }
        if c == '\n' {
            let mut breaks = 1;
            while let Some(&(_, w)) = chars.peek().filter(|(_, w)| matches!(w, ' ' | '\t' | '\n')) {
                breaks += usize::from(w == '\n');
                chars.next();
            }
            out.push_str(&if breaks == 1 { " ".to_string() } else { "\n".repeat(breaks - 1) });
            continue;
        }
        if c == '\\' && q == '"' {
            let Some((_, e)) = chars.next() else { break };
            let hex = |chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>, n: usize| {
                let mut v = 0u32;
                for _ in 0..n {
                    let d = chars.next().and_then(|(_, h)| h.to_digit(16));
                    v = v * 16 + d.ok_or("expected hexadecimal character")?;
                }
                char::from_u32(v).ok_or_else(|| format!("not a character: {v:#x}"))
            };
            out.push(match e {
                '\n' => {
                    // An escaped line break: the lines join, blank ones after it too.
                    while chars.peek().is_some_and(|(_, w)| matches!(w, ' ' | '\t' | '\n')) {
                        chars.next();
                    }
                    continue;
                }
                '0' => '\0',
                'a' => '\x07',
                'b' => '\x08',
                't' | '\t' => '\t',
                'n' => '\n',
                'v' => '\x0b',
                'f' => '\x0c',
                'r' => '\r',
                'e' => '\x1b',
                ' ' | '"' | '/' | '\\' => e,
                'N' => '\u{85}',
                '_' => '\u{a0}',
                'L' => '\u{2028}',
                'P' => '\u{2029}',
                'x' => hex(&mut chars, 2)?,
                'u' => hex(&mut chars, 4)?,
                'U' => hex(&mut chars, 8)?,
                _ => return Err("unknown escape sequence".into()),
            });
            continue;
        }
        out.push(c);
    }
    Err(format!("unexpected end of the stream within a {kind} quoted scalar"))
}

/// `text` (a value over several lines) without its comments.
fn strip_comments(text: &str) -> String {
    let (mut quote, mut prev) = (None, None);
    let lines: Vec<&str> = text.split('\n').map(|l| &l[..code_end(l, &mut quote, &mut prev)]).collect();
    lines.join("\n")
}

/// `[a, "b", [c]]` at the start of `s`: (items, rest).
fn flow_list(s: &str, depth: usize) -> Result<(Vec<Value>, &str), String> {
    // Each level is a call: a file of nothing but `[` would overflow the stack. (js-yaml
    // 4.1.1 in node reads 1,500 levels and fails at 3,000; no rule nests a tenth as deep.)
    if depth >= MAX_DEPTH {
        return Err(format!("lists nested more than {MAX_DEPTH} deep"));
    }
    let mut items = Vec::new();
    let mut rest = s[1..].trim_start();
    loop {
        if let Some(r) = rest.strip_prefix(']') {
            return Ok((items, r));
        }
        if rest.is_empty() {
            return Err("unexpected end of the stream within a flow collection".into());
        }
        rest = strip_anchor(rest)?;
        let (item, r) = if rest.starts_with(['"', '\'']) {
            let (v, r) = quoted(rest)?;
            (Value::Str(v), r)
        } else if rest.starts_with('[') {
            let (v, r) = flow_list(rest, depth + 1)?;
            (Value::List(v), r)
        } else if rest.starts_with('{') {
            let end = matching(rest, '{', '}').ok_or("unexpected end of the stream within a flow collection")?;
            (Value::Other, &rest[end + 1..])
        } else {
            // (A plain value in a flow list ends at any flow indicator.)
            let end =
                rest.find([',', ']', '[', '{', '}']).ok_or("unexpected end of the stream within a flow collection")?;
            let lines: Vec<String> = rest[..end].split('\n').map(|l| l.trim().to_string()).collect();
            (plain(&fold(&lines))?, &rest[end..])
        };
        items.push(item);
        rest = r.trim_start();
        if let Some(r) = rest.strip_prefix(',') {
            rest = r.trim_start();
        } else if rest.is_empty() {
            return Err("unexpected end of the stream within a flow collection".into());
        } else if !rest.starts_with(']') {
            return Err("missed comma between flow collection entries".into());
        }
    }
}

/// Index of the bracket closing the one at `s[0]`, quotes respected.
fn matching(s: &str, open: char, close: char) -> Option<usize> {
    let (mut depth, mut quote) = (0usize, None);
    for (i, c) in s.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == open => depth += 1,
            None if c == close => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            None => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// The bytes the reads of values over several lines went through.
        pub(super) static SCANNED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    fn paths(f: &Frontmatter<'_>) -> Option<Value> {
        f.data.iter().find(|(k, _)| k == "paths").map(|(_, v)| v.clone())
    }

    /// The value of key `d` in frontmatter `yaml`, which must parse.
    fn v(yaml: &str) -> Value {
        let text = format!("---\n{yaml}\n---\nB");
        let f = parse(&text);
        assert_eq!(f.parse_error, None, "{yaml}");
        f.data.into_iter().find(|(k, _)| k == "d").map(|(_, v)| v).unwrap()
    }

    fn s(t: &str) -> Value {
        Value::Str(t.to_string())
    }

    fn strs(v: &[&str]) -> Value {
        Value::List(v.iter().map(|s| Value::Str(s.to_string())).collect())
    }

    /// As js-yaml 4.1.1 reads them (checked with node): an unquoted `*…` is an alias, which it
    /// cannot resolve (so Cline sends the rule whole); an anchor is allowed on any value, which
    /// keeps it; `paths: - x` is refused; a list or a plain text is a document without keys.
    #[test]
    fn aliases_anchors_and_documents_that_are_not_maps_read_as_js_yaml_reads_them() {
        for yaml in [
            "paths:\n  - *.tsx",
            "paths: *.tsx",
            "paths: [*.tsx]",
            "paths:\n  - \"web/**\"\n  - **/*.ts",
            "paths: - src/**",
            "paths: -",
            "paths: & x",
            "paths: &a &b x",
        ] {
            let text = format!("---\n{yaml}\n---\nBody");
            let f = parse(&text);
            assert!(f.parse_error.is_some() && f.body == text, "{yaml}: {f:?}");
        }
        assert_eq!(v("d: &a\n  - web/**"), strs(&["web/**"]));
        assert_eq!(v("d:\n  - &a web/**\n  - &b\n  - b"), Value::List(vec![s("web/**"), Value::Null, s("b")]));
        assert_eq!(v("d: &a [web/**, &b \"x\"]"), strs(&["web/**", "x"]));
        assert_eq!(v("d: &a web/**"), s("web/**"));
        assert_eq!(v("d: &a 'q'"), s("q"));
        assert_eq!(v("d: &a"), Value::Null);
        assert_eq!(v("d: a*b"), s("a*b"));
        assert_eq!(v("d: -a"), s("-a"));
        for yaml in ["- a", "paths:[\"src/**\"]", "just text"] {
            let text = format!("---\n{yaml}\n---\nBody");
            let f = parse(&text);
            assert_eq!((f.parse_error, f.data, f.body), (None, Vec::new(), "Body"), "{yaml}");
        }
    }

    #[test]
    fn text_without_frontmatter_is_all_body() {
        let f = parse("Just text");
        assert!(!f.had_frontmatter && f.data.is_empty() && f.parse_error.is_none());
        assert_eq!(f.body, "Just text");
    }

    #[test]
    fn block_list_of_quoted_globs() {
        let f = parse("---\npaths:\n  - \"src/**\"\n---\n\nHello");
        assert!(f.had_frontmatter && f.parse_error.is_none());
        assert_eq!(paths(&f), Some(strs(&["src/**"])));
        assert_eq!(f.body.trim(), "Hello");
    }

    #[test]
    fn flow_lists_plain_values_and_comments() {
        let f = parse("---\n# scope\npaths: [src/**, 'docs/*.md'] # two\ndescription: Frontend rules\n---\nBody");
        assert_eq!(f.parse_error, None);
        assert_eq!(paths(&f), Some(strs(&["src/**", "docs/*.md"])));
        assert_eq!(f.data[1], ("description".to_string(), Value::Str("Frontend rules".into())));
        assert_eq!(f.body, "Body");
    }

    /// The Cline CLI reads `disabled:` and `enabled:` as booleans, and a null as absent.
    #[test]
    fn booleans_and_nulls_in_js_yamls_spellings() {
        for (text, want) in [
            ("true", Value::Bool(true)),
            ("TRUE", Value::Bool(true)),
            ("False", Value::Bool(false)),
            ("~", Value::Null),
            ("Null", Value::Null),
            ("", Value::Null),
            ("yes", Value::Str("yes".into())),
            ("'true'", Value::Str("true".into())),
            ("[true, null]", Value::List(vec![Value::Bool(true), Value::Null])),
        ] {
            assert_eq!(parse(&format!("---\nd: {text}\n---\nx")).data[0].1, want, "{text:?}");
        }
    }

    #[test]
    fn json_values_are_not_strings() {
        let f = parse("---\ncount: 42\nenabled: true\ntags:\n  - \"a\"\n  - \"b\"\n---\nContent");
        assert_eq!(f.parse_error, None);
        assert_eq!(f.data[0].1, Value::Other);
        assert_eq!(f.data[1].1, Value::Bool(true));
        assert_eq!(f.data[2].1, strs(&["a", "b"]));
    }

    #[test]
    fn malformed_yaml_fails_open_with_the_whole_text_as_body() {
        for input in [
            "---\npaths: [invalid\n---\nBody",
            "---\nfoo: !!js/function 'function(){ return 1 }'\n---\nBody",
            "---\nfoo: !!python/object:os.system 'echo pwned'\n---\nBody",
            "---\npaths: \"src/**\n---\nBody",
            "---\na: b: c\n---\nBody",
            "---\npaths: a\npaths: b\n---\nBody",
            "---\njust words\nmore: x\n---\nBody",
            "---\n\tpaths: x\n---\nBody",
        ] {
            let f = parse(input);
            assert!(f.had_frontmatter, "{input:?}");
            assert!(f.parse_error.is_some(), "{input:?} should not parse");
            assert!(f.data.is_empty());
            assert_eq!(f.body, input);
        }
    }

    #[test]
    fn the_close_is_the_first_dashes_line_and_crlf_works() {
        let f = parse("---\r\npaths:\r\n  - a/*\r\n---\r\nBody\n---\nmore");
        assert_eq!(f.parse_error, None);
        assert_eq!(paths(&f), Some(strs(&["a/*"])));
        assert_eq!(f.body, "Body\n---\nmore");
        // An unclosed block is no frontmatter at all.
        let f = parse("---\npaths: [a]\nBody");
        assert!(!f.had_frontmatter);
        assert_eq!(f.body, "---\npaths: [a]\nBody");
    }

    #[test]
    fn nested_maps_are_skipped_and_block_scalars_read() {
        let f = parse("---\nmeta:\n  owner: web\ndescription: >\n  long\n  text\npaths: [x]\n---\nB");
        assert_eq!(f.parse_error, None);
        assert_eq!(f.data.len(), 3);
        assert_eq!(f.data[1].1, Value::Str("long text\n".into()));
        assert_eq!(paths(&f), Some(strs(&["x"])));
    }

    /// What js-yaml 4.1.1 gives for each (checked with its `load`, JSON schema).
    #[test]
    fn block_scalars_and_multi_line_plain_values_read_as_js_yaml_reads_them() {
        assert_eq!(v("d: |\n  one\n  two\n\n  # not a comment\nx: 1"), s("one\ntwo\n\n# not a comment\n"));
        assert_eq!(v("d: |-\n  one\n  two\n\n"), s("one\ntwo"));
        assert_eq!(v("d: |+\n  one\n\n"), s("one\n\n"));
        assert_eq!(v("d: >\n  one\n  two\n\n  three\n    more\n  four"), s("one two\nthree\n  more\nfour\n"));
        assert_eq!(v("d: >-\n  Use when\n  asked."), s("Use when asked."));
        assert_eq!(v("d: |2\n   indented\n  base"), s(" indented\nbase\n"));
        assert_eq!(v("d: a\n  b # c"), s("a b"));
        assert_eq!(v("d:\n  Long text\n  more\nx: 1"), s("Long text more"));
        assert_eq!(v("d: inf"), s("inf"));
        assert_eq!(v("d: NaN"), s("NaN"));
        assert_eq!(v("d: 1e3"), Value::Other);
        assert_eq!(
            v("d: Extract text from PDFs. Use when\n  working with PDF files\n\n  or forms.\nx: 1"),
            s("Extract text from PDFs. Use when working with PDF files\nor forms.")
        );
        assert_eq!(v("d: Don't use it # for now"), s("Don't use it"));
        // A plain list item over several lines (it was read as its first line only).
        assert_eq!(v("d:\n  - a\n    b\n"), strs(&["a b"]));
        assert_eq!(v("d:\n- a\n b\n"), strs(&["a b"]));
        assert_eq!(v("d:\n  - a\n    - b\n"), strs(&["a - b"]));
        assert_eq!(v("d:\n  - a\n\n    b\n  - c\n"), strs(&["a\nb", "c"]));
        assert_eq!(v("d:\n  - a\n   b\n"), strs(&["a b"]));
        assert_eq!(v("d:\n  - a\n    \"b\"\n"), strs(&["a \"b\""]));
        assert_eq!(v("d:\n  - a\n    b\nq: 1\n"), strs(&["a b"]));
        assert_eq!(v("d:\n  - a\n        b\n   \n    c\n"), strs(&["a b\nc"]));
        assert_eq!(v("d:\n  - src/*.rs # Rust\n  - b\n"), strs(&["src/*.rs", "b"]));
        assert_eq!(v("d: [it's, b] # c"), Value::List(vec![s("it's"), s("b")]));
        // What js-yaml refuses: a comment ends a plain value; a bad block header.
        for bad in [
            "d: a # c\n  b",
            "d: a\n  b # c\n  d",
            "d: |x\n  a",
            "d: |\n  one\n two",
            "d: >\n    a\n  b",
            "d:\n  - a # c\n    b",
            "d:\n  - a\n    b: c",
            "d:\n  - a\n  b",
            "d:\n  - a\n    # c\n    b",
            "d:\n  - \"a\"\n    b",
        ] {
            let text = format!("---\n{bad}\n---\nB");
            assert!(parse(&text).parse_error.is_some(), "{bad}");
        }
    }

    /// Quoted and flow values over several lines, and js-yaml's escapes: what js-yaml 4.1.1
    /// gives for each (its `load`, JSON schema). They were parse errors, so a rule whose
    /// `paths` list took several lines was used whole, for every file.
    #[test]
    fn quoted_and_flow_values_over_several_lines_read_as_js_yaml_reads_them() {
        assert_eq!(v("d: \"one\n  two\""), s("one two"));
        assert_eq!(v("d: \"one\ntwo\"\nx: 1"), s("one two"));
        assert_eq!(v("d: 'one\n  two\n\n  three'"), s("one two\nthree"));
        assert_eq!(v("d: \"a \\\n  b\""), s("a b"));
        assert_eq!(v("d: \"a\\\n\n  b\""), s("ab"));
        assert_eq!(
            v(r#"d: "caf\u00e9 \x41\e\0\N\_\L\P\ \a\b\v\f\r\t\/\U0001F600""#),
            s("café A\x1b\0\u{85}\u{a0}\u{2028}\u{2029} \x07\x08\x0b\x0c\r\t/😀")
        );
        assert_eq!(v("d: 'one  \n   two  '"), s("one   two  "));
        assert_eq!(v("d: \"one\n\n\n  two\""), s("one\n\ntwo"));
        assert_eq!(v("d: \"one\n  \n  two\""), s("one\ntwo"));
        assert_eq!(v("d: \"one\n  two\" # c"), s("one two"));
        assert_eq!(v("d: 'it''s\n  fine'"), s("it's fine"));
        assert_eq!(v("d: \"one\n  # not a comment\n  two\""), s("one # not a comment two"));
        assert_eq!(v(r#"d: "a \" # b""#), s("a \" # b"));
        assert_eq!(v("d: \"one\nkey: two\""), s("one key: two"));
        let ab = |a: &str, b: &str| Value::List(vec![s(a), s(b)]);
        assert_eq!(v("d: [\n  \"src/**/*.ts\", # c\n  tests/**\n]\nx: 1"), ab("src/**/*.ts", "tests/**"));
        assert_eq!(v("d: [ # c\n  \"a\",\n  b\n  ]"), ab("a", "b"));
        assert_eq!(v("d: [a\n  b, c]"), ab("a b", "c"));
        assert_eq!(v("d: [\n  \"a\n  b\"]"), Value::List(vec![s("a b")]));
        assert_eq!(v("d:\n  [\"a\", \"b\"]"), ab("a", "b"));
        assert_eq!(v("d:\n  \"one\n  two\""), s("one two"));
        assert_eq!(v("d: {a: 1,\n  b: 2}\nx: 1"), Value::Other);
        assert_eq!(v("d: \"s\"#c"), s("s"));
        assert_eq!(v("d: [a]#c\nx: 1"), Value::List(vec![s("a")]));
        assert_eq!(v("d: b c\n  'y #c"), s("b c 'y"));
        assert_eq!(v("d: a\n  'b # c"), s("a 'b"));
        assert_eq!(v("d:\n  true"), Value::Bool(true));
        assert_eq!(v("d:\n  1\n  2"), s("1 2"));
        // In a block list, and on the lines after the key.
        assert_eq!(v("d:\n  - \"a\n    b\"\n  - c"), ab("a b", "c"));
        assert_eq!(v("d:\n  - \"a\n  b\"\n  - c"), ab("a b", "c"));
        assert_eq!(v("d:\n  - [a,\n    b]\n  - c"), Value::List(vec![ab("a", "b"), s("c")]));
        assert_eq!(v("d:\n  - \"a # b\"\n  - 'c' # d"), ab("a # b", "c"));
        assert_eq!(v("d:\n- a\n- \"b\n  c\"\nx: 1"), ab("a", "b c"));
        assert_eq!(v("d:\n  [\n    \"a\",\n    \"b\"\n]\nx: 1"), ab("a", "b"));
        // The key after a value that took several lines is read too.
        let f = parse("---\npaths: [\n  \"src/**\",\n  \"docs/**\"\n]\ndescription: x\n---\nB");
        assert_eq!(f.parse_error, None);
        assert_eq!(paths(&f), Some(strs(&["src/**", "docs/**"])));
        assert_eq!(f.data[1], ("description".to_string(), s("x")));
        // An unclosed quote over many lines is read through about its length of bytes, not its
        // length squared (added a line at a time, each try re-reading them all, 20,000 lines
        // took 34 s).
        let long = format!("---\nd: \"{}---\nB", "word word\n".repeat(20_000));
        SCANNED.with(|n| n.set(0));
        let f = parse(&long);
        assert!(f.parse_error.is_some_and(|e| e.starts_with("unexpected end of the stream")));
        let scanned = SCANNED.with(|n| n.get());
        assert!(scanned <= 4 * long.len(), "{scanned} bytes read for {}", long.len());
        // Lists nested past any rule's are refused, not a stack overflow; many keys cost each
        // key's own length (duplicates found by a set).
        assert!(parse(&format!("---\nd: {}\n---\nB", "[".repeat(200_000))).parse_error.is_some());
        let keys: String = (0..50_000).map(|i| format!("k{i}: v\n")).collect();
        assert_eq!(parse(&format!("---\n{keys}---\nB")).data.len(), 50_000);
        assert!(parse(&format!("---\n{keys}k7: again\n---\nB")).parse_error.is_some_and(|e| e.contains("duplicated")));
        // What js-yaml refuses.
        for bad in [
            "d:\n  - \"a\n  b\"\n    c\n  - z",
            "d:\n  - [a,\n  b c\n  [x]]",
            "d: \"one\n  two\" x",
            "d: \"s\"x",
            r#"d: "\q""#,
            r#"d: "\u00g1""#,
            "d: \"open\n  x: 1",
            "d: [a,\n  b",
            "d: \"x\n...\n\"",
        ] {
            let text = format!("---\n{bad}\n---\nB");
            assert!(parse(&text).parse_error.is_some(), "{bad}");
        }
    }
}
