//! Cline's command permissions (`core/permissions/CommandPermissionController.ts`): the
//! `CLINE_COMMAND_PERMISSIONS` variable (`{"allow": [...], "deny": [...], "allowRedirects": b}`)
//! decides, before any approval, whether `execute_command` may run a command at all.
//!
//! Owns: reading the variable, splitting a command the way Cline's `shell-quote` parse does
//! (chained parts, subshells, redirects, dangerous characters), Cline's wildcard match, and the
//! refusal text. Where Cline's check lets a command through that the shell would then run past
//! the rules, we refuse instead (each place is marked "ours" and listed in docs/agent.md).

/// The variable Cline reads.
pub(crate) const VAR: &str = "CLINE_COMMAND_PERMISSIONS";

/// Subshells nested deeper than this are refused rather than parsed (ours: bounds the stack).
const MAX_DEPTH: usize = 64;

/// What the variable says.
#[derive(Debug)]
pub(crate) enum Config {
    /// Unset or empty: every command is allowed (Cline's backward compatibility).
    Unset,
    /// Rules to check each command against.
    Rules(Rules),
    /// Set but unusable: not JSON, not an object, a key Cline does not read, `allow`/`deny` not
    /// an array of strings (ours: Cline logs it or ignores it and allows everything; we refuse
    /// every command and say why, since a typo must not silently lift the user's restrictions).
    Broken(String),
}

/// The parsed rules.
#[derive(Debug, Default)]
pub(crate) struct Rules {
    allow: Option<Vec<String>>,
    deny: Option<Vec<String>>,
    allow_redirects: bool,
}

/// Cline's `PermissionValidationResult`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Verdict {
    /// Whether the command may run.
    pub allowed: bool,
    /// Cline's reason code (`no_config`, `allowed`, `denied`, `segment_no_match`, …).
    pub reason: &'static str,
    /// The pattern that matched, for `denied` and single-command `allowed`.
    pub matched_pattern: Option<String>,
    /// The operator found by the dangerous-character check (`\n`, `` ` ``, `U+2028`, …).
    pub detected_operator: Option<String>,
    /// The part of a chained command that failed.
    pub failed_segment: Option<String>,
}

impl Verdict {
    fn new(allowed: bool, reason: &'static str) -> Verdict {
        Verdict { allowed, reason, matched_pattern: None, detected_operator: None, failed_segment: None }
    }
    fn operator(op: &str) -> Verdict {
        Verdict { detected_operator: Some(op.to_string()), ..Verdict::new(false, "shell_operator_detected") }
    }
}

/// Reads the variable from agent-min's environment.
pub(crate) fn from_env() -> Config {
    match std::env::var(VAR) {
        Ok(v) => parse_config(&v),
        Err(std::env::VarError::NotPresent) => Config::Unset,
        Err(std::env::VarError::NotUnicode(_)) => Config::Broken(format!("{VAR} is not valid UTF-8")),
    }
}

/// Parses the variable's value as Cline does, refusing (ours) where Cline would drop the rules.
pub(crate) fn parse_config(value: &str) -> Config {
    if value.is_empty() {
        return Config::Unset;
    }
    let fix = format!(
        "fix or unset {VAR} (format: {{\"allow\": [\"npm *\"], \"deny\": [\"rm *\"], \"allowRedirects\": false}})"
    );
    let v: serde_json::Value = match serde_json::from_str(value) {
        Ok(v) => v,
        Err(e) => return Config::Broken(format!("{VAR} is not valid JSON ({e}); {fix}")),
    };
    if v.is_null() {
        return Config::Broken(format!("{VAR} is null; {fix}"));
    }
    // Ours: Cline reads `allow`, `deny` and `allowRedirects` off whatever was parsed, so a JSON
    // string (an object encoded twice), an array or a number gives no rule, and a misspelt key
    // (`Allow`) is ignored — every command runs. Both are refused here.
    let Some(object) = v.as_object() else {
        return Config::Broken(format!("{VAR} must be a JSON object, not {}; {fix}", json_kind(&v)));
    };
    if let Some(key) = object.keys().find(|k| !matches!(k.as_str(), "allow" | "deny" | "allowRedirects")) {
        return Config::Broken(format!(
            "{VAR}: unknown key {key:?} (the keys are \"allow\", \"deny\" and \"allowRedirects\"); {fix}"
        ));
    }
    let list = |key: &str| -> Result<Option<Vec<String>>, String> {
        match v.get(key) {
            None => Ok(None),
            Some(serde_json::Value::Array(items)) => items
                .iter()
                .map(|i| i.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .map(Some)
                .ok_or_else(|| format!("{VAR}: every entry of \"{key}\" must be a string; {fix}")),
            Some(_) => Err(format!("{VAR}: \"{key}\" must be an array of patterns; {fix}")),
        }
    };
    match (list("allow"), list("deny")) {
        (Ok(allow), Ok(deny)) => Config::Rules(Rules {
            allow,
            deny,
            // Cline: anything but a boolean counts as unset, i.e. redirects stay refused.
            allow_redirects: v.get("allowRedirects").and_then(serde_json::Value::as_bool).unwrap_or(false),
        }),
        (Err(e), _) | (_, Err(e)) => Config::Broken(e),
    }
}

/// What a JSON value is, for the refusal.
fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Null | serde_json::Value::Object(_) => "an object",
    }
}

impl Config {
    /// Cline's `validateCommand`.
    pub(crate) fn validate(&self, command: &str) -> Verdict {
        let rules = match self {
            Config::Unset => return Verdict::new(true, "no_config"),
            Config::Broken(_) => return Verdict::new(false, "invalid_config"),
            Config::Rules(r) => r,
        };
        rules.validate(command, 0)
    }
}

/// The message Cline says and sends (inside `permissionDeniedError`) for a refused command, or
/// `None` if it may run.
pub(crate) fn refusal(config: &Config, command: &str) -> Option<String> {
    let v = config.validate(command);
    if v.allowed {
        return None;
    }
    let head = format!("Command \"{command}\" was denied by {VAR}. ");
    Some(match (config, &v.failed_segment, &v.matched_pattern) {
        (Config::Broken(why), _, _) => format!("{head}Reason: {why}"),
        (_, Some(seg), _) => format!("{head}Segment \"{seg}\" {}.", v.reason),
        (_, None, Some(p)) => format!("{head}Reason: {} (matched pattern: {p})", v.reason),
        (_, None, None) => format!("{head}Reason: {}", v.reason),
    })
}

impl Rules {
    fn validate(&self, command: &str, depth: usize) -> Verdict {
        if let Some(op) = dangerous_char(command) {
            return Verdict::operator(op);
        }
        // Ours: Cline's parse keeps a double-quoted `$(…)` inside one word, so the command in it
        // was never checked (`echo "$(rm -rf x)"` matched `echo *`). Each is checked as a command.
        let Some(quoted) = substitutions_in_double_quotes(command) else {
            return Verdict::operator("parse_error");
        };
        for inner in quoted {
            if depth >= MAX_DEPTH {
                return Verdict::operator("parse_error");
            }
            let v = self.validate(&inner, depth + 1);
            if !v.allowed {
                return Verdict { failed_segment: v.failed_segment.or(Some(inner)), ..v };
            }
        }
        match split(&tokens(command)) {
            Some(parsed) => self.check_parsed(&parsed),
            // Ours: Cline's parse error leaves nothing to check and allows the command.
            None => Verdict::operator("parse_error"),
        }
    }

    fn check_parsed(&self, parsed: &Parsed) -> Verdict {
        if parsed.has_redirects && !self.allow_redirects {
            return Verdict::new(false, "redirect_detected");
        }
        let multi = parsed.segments.len() > 1 || !parsed.subshells.is_empty();
        for seg in &parsed.segments {
            let mut v = self.check_single(seg);
            if !v.allowed {
                if multi {
                    v.failed_segment = Some(seg.clone());
                    v.reason = match v.reason {
                        "denied" => "segment_denied",
                        "no_match_deny_default" => "segment_no_match",
                        r => r,
                    };
                }
                return v;
            }
        }
        for sub in &parsed.subshells {
            let v = self.check_parsed(sub);
            if !v.allowed {
                return v;
            }
        }
        Verdict::new(true, "allowed")
    }

    fn check_single(&self, command: &str) -> Verdict {
        for p in self.deny.iter().flatten() {
            if wildcard_match(p, command) {
                return Verdict { matched_pattern: Some(p.clone()), ..Verdict::new(false, "denied") };
            }
        }
        if let Some(allow) = self.allow.as_ref().filter(|a| !a.is_empty()) {
            return match allow.iter().find(|p| wildcard_match(p, command)) {
                Some(p) => Verdict { matched_pattern: Some(p.clone()), ..Verdict::new(true, "allowed") },
                None => Verdict::new(false, "no_match_deny_default"),
            };
        }
        Verdict::new(true, "no_config")
    }
}

/// Cline's `matchesPattern`: the whole command, case-sensitively; `*` is any run of characters
/// (`/` and newlines included), `?` exactly one UTF-16 unit (JavaScript's `.`), everything else
/// literal — not a file glob (`[`, `{` are literal), so not `globset`. Linear-time backtracking
/// over the last `*`, so a hostile command cannot make it explode.
fn wildcard_match(pattern: &str, command: &str) -> bool {
    let p: Vec<u16> = pattern.encode_utf16().collect();
    let s: Vec<u16> = command.encode_utf16().collect();
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && p[pi] == u16::from(b'*') {
            star = Some((pi, si));
            pi += 1;
        } else if pi < p.len() && (p[pi] == u16::from(b'?') || p[pi] == s[si]) {
            pi += 1;
            si += 1;
        } else if let Some((sp, ss)) = star {
            pi = sp + 1;
            si = ss + 1;
            star = Some((sp, ss + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == u16::from(b'*'))
}

/// Cline's `detectDangerousCharsOutsideQuotes`: line separators outside any quotes, backticks
/// outside single quotes.
fn dangerous_char(command: &str) -> Option<&'static str> {
    let (mut single, mut double, mut escaped) = (false, false, false);
    for c in command.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' if !single => escaped = true,
            '"' if !single => double = !double,
            '\'' if !double => single = !single,
            _ if !single && !double && line_separator(c).is_some() => return line_separator(c),
            '`' if !single => return Some("`"),
            _ => {}
        }
    }
    None
}

/// Ours: the commands of the `$(…)` substitutions that stand inside double quotes (the shell
/// runs them; `shell-quote` leaves them inside a word), at the outer level; `$((…))` counts
/// too. `None` when one is not closed.
fn substitutions_in_double_quotes(command: &str) -> Option<Vec<String>> {
    let s: Vec<char> = command.chars().collect();
    let (mut single, mut double) = (false, false);
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            '\\' if !single => i += 1,
            '"' if !single => double = !double,
            '\'' if !double => single = !single,
            '$' if double && s.get(i + 1) == Some(&'(') => {
                let end = substitution_end(&s, i + 2, 0)?;
                out.push(s[i + 2..end].iter().collect());
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
    Some(out)
}

/// The index of the `)` closing a substitution whose text starts at `start`: parentheses
/// counted outside quotes, quotes and backslashes as the shell reads them inside it.
fn substitution_end(s: &[char], start: usize, nested: usize) -> Option<usize> {
    if nested > MAX_DEPTH {
        return None;
    }
    let (mut single, mut double, mut depth) = (false, false, 1usize);
    let mut i = start;
    while i < s.len() {
        match s[i] {
            '\\' if !single => i += 1,
            '"' if !single => double = !double,
            '\'' if !double => single = !single,
            '$' if double && s.get(i + 1) == Some(&'(') => {
                i = substitution_end(s, i + 2, nested + 1)?;
            }
            '(' if !single && !double => depth += 1,
            ')' if !single && !double => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn line_separator(c: char) -> Option<&'static str> {
    Some(match c {
        '\n' => "\\n",
        '\r' => "\\r",
        '\u{2028}' => "U+2028",
        '\u{2029}' => "U+2029",
        '\u{85}' => "U+0085",
        _ => return None,
    })
}

/// A token of `shell-quote`'s `parse` (with an empty environment), as far as Cline looks at it.
#[derive(Debug, PartialEq, Eq)]
enum Token {
    Word(String),
    Op(&'static str),
    /// `parse` could not read the command (`${}`, an unclosed `${`).
    Error,
}

/// `shell-quote`'s control operators, longest first as its regular expression tries them.
const CONTROL: [&str; 16] = ["||", "&&", ";;", "|&", "<(", "<<<", ">>", ">&", "<&", "&", ";", "(", ")", "|", "<", ">"];

/// JavaScript's `\s`.
fn js_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{2028}' | '\u{2029}' | '\u{202f}' | '\u{205f}' | '\u{3000}' | '\u{feff}'
    )
}

fn meta(c: char) -> bool {
    matches!(c, '|' | '&' | ';' | '(' | ')' | '<' | '>' | ' ' | '\t')
}

/// The length of `shell-quote`'s quoted chunk (`"(\\"|[^"])*?"`, the same with `'`) at the
/// start of `s`, with the regular expression's backtracking: the first unescaped closing quote,
/// else the quote of the last `\q` pair.
fn quoted_len(s: &[char]) -> Option<usize> {
    let q = s[0];
    let (mut i, mut last_pair) = (1, None);
    while i < s.len() {
        if s[i] == q {
            return Some(i + 1);
        }
        if s[i] == '\\' && s.get(i + 1) == Some(&q) {
            last_pair = Some(i + 1);
            i += 2;
        } else {
            i += 1;
        }
    }
    last_pair.map(|p| p + 1)
}

/// `shell-quote`'s chunker: control operators and words (barewords and quoted parts glued).
fn chunks(s: &[char]) -> Vec<(usize, usize, bool)> {
    let mut out = Vec::new();
    let mut i = 0;
    'scan: while i < s.len() {
        for op in CONTROL {
            let n = op.len(); // ASCII: bytes are characters
            if s.len() - i >= n && op.chars().zip(&s[i..]).all(|(a, b)| a == *b) {
                out.push((i, i + n, true));
                i += n;
                continue 'scan;
            }
        }
        let start = i;
        loop {
            let bare_start = i;
            while i < s.len() {
                if s[i] == '\\' && s.get(i + 1).is_some_and(|&n| n == '\'' || n == '"' || meta(n)) {
                    i += 2;
                } else if !js_space(s[i]) && s[i] != '\'' && s[i] != '"' && !meta(s[i]) {
                    i += 1;
                } else {
                    break;
                }
            }
            if i > bare_start {
                continue;
            }
            match s.get(i) {
                Some('\'' | '"') => match quoted_len(&s[i..]) {
                    Some(n) => i += n,
                    None => break,
                },
                _ => break,
            }
        }
        if i > start {
            out.push((start, i, false));
        } else {
            i += 1; // whitespace or an unclosed quote: the regular expression skips it
        }
    }
    out
}

/// `shell-quote`'s `parse(command)`: words unquoted and `$VAR` expanded to nothing, as Cline
/// calls it; everything after a comment dropped.
fn tokens(command: &str) -> Vec<Token> {
    let s: Vec<char> = command.chars().collect();
    let mut out = Vec::new();
    for (start, end, is_op) in chunks(&s) {
        let w = &s[start..end];
        if is_op {
            let text: String = w.iter().collect();
            out.push(Token::Op(CONTROL.into_iter().find(|c| *c == text).unwrap_or(";")));
            continue;
        }
        match word(w) {
            Some((text, comment)) => {
                if !(comment && text.is_empty()) {
                    out.push(Token::Word(text));
                }
                if comment {
                    break;
                }
            }
            None => return vec![Token::Error],
        }
    }
    out
}

/// One word chunk: its text and whether a comment starts in it; `None` on a bad substitution.
fn word(s: &[char]) -> Option<(String, bool)> {
    let mut out = String::new();
    let (mut quote, mut esc) = (None::<char>, false);
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if esc {
            out.push(c);
            esc = false;
        } else if let Some(q) = quote {
            if c == q {
                quote = None;
            } else if q == '\'' {
                out.push(c);
            } else if c == '\\' {
                i += 1;
                match s.get(i) {
                    Some(&n @ ('"' | '\\' | '$')) => out.push(n),
                    Some(&n) => {
                        out.push('\\');
                        out.push(n);
                    }
                    None => out.push('\\'),
                }
            } else if c == '$' {
                out.push_str(&env_var(s, &mut i)?);
            } else {
                out.push(c);
            }
        } else if c == '"' || c == '\'' {
            quote = Some(c);
        } else if c == '#' && i == 0 {
            // Ours: only at the start of a word, as in the shell; `shell-quote` also starts a
            // comment mid-word (`a#b; rm x`), which hid the rest of the command from the check.
            return Some((out, true));
        } else if c == '\\' {
            esc = true;
        } else if c == '$' {
            out.push_str(&env_var(s, &mut i)?);
        } else {
            out.push(c);
        }
        i += 1;
    }
    Some((out, false))
}

/// `shell-quote`'s `parseEnvVar` with an empty environment: a named variable is empty, a bare
/// `$` stays. `*i` is at the `$` and is left where its loop continues (its quirk of skipping the
/// character after a special variable such as `$?` included).
fn env_var(s: &[char], i: &mut usize) -> Option<String> {
    *i += 1;
    match s.get(*i) {
        Some('{') => {
            *i += 1;
            if s.get(*i) == Some(&'}') {
                return None;
            }
            let end = s[*i..].iter().position(|&c| c == '}')?;
            *i += end;
            Some(String::new())
        }
        Some('*' | '@' | '#' | '?' | '$' | '!' | '_' | '-') => {
            *i += 1;
            Some(String::new())
        }
        _ => {
            let name = s[*i..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == '_').count();
            if *i + name == s.len() {
                *i = s.len();
            } else {
                *i = *i + name - 1;
            }
            Some(if name == 0 { "$".to_string() } else { String::new() })
        }
    }
}

/// Cline's `ParsedCommand`.
#[derive(Debug, Default)]
struct Parsed {
    segments: Vec<String>,
    subshells: Vec<Parsed>,
    has_redirects: bool,
}

/// Cline's `parseCommandSegments`; `None` when the command cannot be read.
fn split(tokens: &[Token]) -> Option<Parsed> {
    if tokens.contains(&Token::Error) {
        return None;
    }
    split_at_depth(tokens, 0)
}

fn split_at_depth(tokens: &[Token], depth: usize) -> Option<Parsed> {
    if depth > MAX_DEPTH {
        return None;
    }
    let opens = |t: &Token| matches!(t, Token::Op("(" | "<("));
    let mut out = Parsed::default();
    let mut parts: Vec<&str> = Vec::new();
    let flush = |parts: &mut Vec<&str>, out: &mut Parsed| {
        if !parts.is_empty() {
            out.segments.push(parts.join(" "));
            parts.clear();
        }
    };
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i] {
            t if opens(t) => {
                // Ours for `<(`: Cline reads process substitution as a redirect only and checks
                // its contents as arguments of the outer command.
                if *t == Token::Op("<(") {
                    out.has_redirects = true;
                }
                flush(&mut parts, &mut out);
                let (mut balance, mut j) = (1, i + 1);
                while j < tokens.len() {
                    if opens(&tokens[j]) {
                        balance += 1;
                    } else if tokens[j] == Token::Op(")") {
                        balance -= 1;
                        if balance == 0 {
                            break;
                        }
                    }
                    j += 1;
                }
                out.subshells.push(split_at_depth(&tokens[i + 1..j.min(tokens.len())], depth + 1)?);
                i = j + 1;
                continue;
            }
            // `&`, `|&` and `;;` are ours: Cline ignores them, gluing `a & b` into one part.
            Token::Op("&&" | "||" | "|" | ";" | "&" | ";;") => flush(&mut parts, &mut out),
            Token::Op("|&") => {
                out.has_redirects = true;
                flush(&mut parts, &mut out);
            }
            Token::Op(">" | ">>" | "<" | ">&" | "<&") => out.has_redirects = true,
            Token::Word(w) => parts.push(w),
            Token::Op(_) | Token::Error => {}
        }
        i += 1;
    }
    flush(&mut parts, &mut out);
    Some(out)
}

#[cfg(test)]
#[path = "permissions_tests.rs"]
mod tests;
