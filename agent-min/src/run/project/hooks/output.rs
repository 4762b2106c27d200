//! A hook's stdout, read as Cline's `StdioHookRunner` reads it: the whole of it as JSON, else
//! the last complete `{…}` in it (hooks may print debug lines first); `shouldContinue` and
//! wrongly typed fields make it invalid; `contextModification` is cut at 50 000 characters.

use serde_json::Value;

/// Cline's `MAX_CONTEXT_MODIFICATION_SIZE` (JavaScript string length: UTF-16 units).
pub(crate) const MAX_CONTEXT_CHARS: usize = 50_000;

/// What Cline appends to a cut context.
pub(crate) const TRUNCATED_NOTE: &str = "\n\n[... context truncated due to size limit ...]";

/// A hook's answer (`HookOutput`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Output {
    /// Stop the task.
    pub cancel: bool,
    /// Text for the next request ("" for none).
    pub context_modification: String,
    /// Shown to the person ("" for none).
    pub error_message: String,
}

/// Parses stdout. `Err` says why no valid answer was found.
pub(crate) fn parse(stdout: &str) -> Result<Output, String> {
    match serde_json::from_str::<Value>(stdout.trim()) {
        Ok(v) if !v.is_null() => from_value(&v),
        _ => match last_object(stdout) {
            Some(candidate) => match serde_json::from_str::<Value>(&candidate) {
                Ok(v) => from_value(&v),
                Err(_) => Err(no_json(stdout)),
            },
            None => Err(no_json(stdout)),
        },
    }
}

fn no_json(stdout: &str) -> String {
    if stdout.trim().is_empty() {
        "it printed nothing on stdout".to_string()
    } else {
        let first = crate::run::ui::redact::first_chars(stdout.trim(), 80);
        format!("its stdout is not JSON (it begins {first:?})")
    }
}

fn from_value(v: &Value) -> Result<Output, String> {
    if v.get("shouldContinue").is_some() {
        return Err("the 'shouldContinue' field has been removed; use \"cancel\": true instead".to_string());
    }
    let field = |name: &str, want: &str, ok: fn(&Value) -> bool| match v.get(name) {
        Some(x) if !ok(x) => Err(format!("'{name}' must be a {want}")),
        _ => Ok(()),
    };
    field("cancel", "boolean", Value::is_boolean)?;
    field("contextModification", "string", Value::is_string)?;
    field("errorMessage", "string", Value::is_string)?;
    let text = |name: &str| v.get(name).and_then(Value::as_str).unwrap_or_default().to_string();
    Ok(Output {
        cancel: v.get("cancel").and_then(Value::as_bool).unwrap_or(false),
        context_modification: cap(text("contextModification")),
        error_message: text("errorMessage"),
    })
}

/// Cuts `s` at [`MAX_CONTEXT_CHARS`] UTF-16 units, as `String.prototype.slice` does.
fn cap(s: String) -> String {
    let mut units = 0;
    for (i, c) in s.char_indices() {
        units += c.len_utf16();
        if units > MAX_CONTEXT_CHARS {
            return format!("{}{TRUNCATED_NOTE}", &s[..i]);
        }
    }
    s
}

/// Cline's scan from the end: lines are collected from the last one holding a `}` until the
/// braces balance; the text from the first `{` of that block is the candidate.
fn last_object(stdout: &str) -> Option<String> {
    let mut candidate = String::new();
    let (mut depth, mut collecting) = (0i64, false);
    for line in stdout.split('\n').rev() {
        let line = line.trim_end();
        for c in line.chars().rev() {
            if c == '}' {
                depth += 1;
                collecting = true;
            } else if c == '{' {
                depth -= 1;
            }
        }
        if collecting {
            candidate = format!("{line}\n{candidate}");
        }
        if collecting && depth == 0 {
            break;
        }
    }
    let t = candidate.trim();
    if t.is_empty() {
        return None;
    }
    Some(t.find('{').map_or(t, |i| &t[i..]).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_answer() {
        let o = parse(
            "{\"cancel\": true, \"contextModification\": \"\", \"errorMessage\": \"Tool execution blocked by hook\"}\n",
        )
        .unwrap();
        assert_eq!(
            o,
            Output {
                cancel: true,
                context_modification: String::new(),
                error_message: "Tool execution blocked by hook".into()
            }
        );
        assert_eq!(parse("{}").unwrap(), Output::default());
    }

    #[test]
    fn debug_lines_before_the_answer_are_skipped() {
        let out = "starting\n{\"x\": 1}\nchecking {not json\n{\n  \"cancel\": false,\n  \"contextModification\": \"WORKSPACE_RULES: be nice\"\n}\n";
        assert_eq!(parse(out).unwrap().context_modification, "WORKSPACE_RULES: be nice");
    }

    #[test]
    fn malformed_answers_are_errors_that_say_why() {
        assert!(parse("not valid json\n").unwrap_err().contains("not JSON"));
        assert!(parse("").unwrap_err().contains("nothing"));
        assert!(parse("{\"shouldContinue\": false}").unwrap_err().contains("shouldContinue"));
        assert!(parse("{\"cancel\": \"yes\"}").unwrap_err().contains("'cancel' must be a boolean"));
        assert!(parse("{\"contextModification\": 5}").unwrap_err().contains("must be a string"));
        assert!(parse("{\"errorMessage\": null}").unwrap_err().contains("must be a string"));
    }

    #[test]
    fn a_long_context_is_cut_at_50000_utf16_units() {
        let o = parse(&serde_json::json!({"contextModification": "é".repeat(60_000)}).to_string()).unwrap();
        assert_eq!(o.context_modification, format!("{}{TRUNCATED_NOTE}", "é".repeat(50_000)));
        let emoji = "😀".repeat(30_000); // two units each
        let o = parse(&serde_json::json!({"contextModification": emoji}).to_string()).unwrap();
        assert_eq!(o.context_modification, format!("{}{TRUNCATED_NOTE}", "😀".repeat(25_000)));
        let exact = "a".repeat(50_000);
        assert_eq!(
            parse(&serde_json::json!({"contextModification": exact}).to_string()).unwrap().context_modification,
            exact
        );
    }
}
