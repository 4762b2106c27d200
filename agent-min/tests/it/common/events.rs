//! The `--json` event schema, written out by hand from docs/agent.md, and a strict checker:
//! every event must have exactly the fields of its type, each of the documented kind.

use serde_json::Value;

/// The kind of a field.
#[derive(Clone, Copy, Debug)]
pub enum K {
    Str,
    NonEmptyStr,
    U64,
    Num,
    Bool,
    /// An object whose values are all strings.
    StrMap,
    Totals,
    OneOf(&'static [&'static str]),
    Nullable(&'static K),
}

use K::*;

const COMMON: &[(&str, K)] = &[("type", NonEmptyStr), ("task_id", NonEmptyStr), ("ts", U64)];

const TOTALS: &[(&str, K)] = &[
    ("requests", U64),
    ("tokens_in", U64),
    ("tokens_out", U64),
    ("cache_read", U64),
    ("cache_write", U64),
    ("cost_usd", Nullable(&Num)),
    ("estimated_requests", U64),
];

/// The fields of each event type (besides `type`, `task_id`, `ts`).
pub const SCHEMA: &[(&str, &[(&str, K)])] = &[
    (
        "task_started",
        &[("provider", NonEmptyStr), ("model", NonEmptyStr), ("cwd", NonEmptyStr), ("task", Str), ("resumed", Bool)],
    ),
    ("text", &[("turn", U64), ("text", NonEmptyStr)]),
    ("reasoning", &[("turn", U64), ("text", NonEmptyStr)]),
    (
        "tool_call",
        &[("turn", U64), ("call_id", NonEmptyStr), ("tool", NonEmptyStr), ("partial", Bool), ("params", StrMap)],
    ),
    (
        "approval",
        &[
            ("call_id", NonEmptyStr),
            ("tool", NonEmptyStr),
            ("approved", Bool),
            ("by", OneOf(&["auto", "yolo", "user", "policy"])),
            ("feedback", Nullable(&Str)),
        ],
    ),
    ("tool_result", &[("call_id", NonEmptyStr), ("tool", NonEmptyStr), ("ok", Bool), ("result", Str)]),
    (
        "api_request",
        &[
            ("turn", U64),
            ("tokens_in", U64),
            ("tokens_out", U64),
            ("cache_read", U64),
            ("cache_write", U64),
            ("estimated", Bool),
            ("cost_usd", Nullable(&Num)),
            ("totals", Totals),
        ],
    ),
    (
        "retry",
        &[
            ("turn", U64),
            ("attempt", U64),
            ("max_retries", U64),
            ("delay_s", Num),
            ("status", Nullable(&U64)),
            ("error", Str),
        ],
    ),
    (
        "context_truncated",
        &[
            ("turn", U64),
            ("reason", OneOf(&["threshold", "context_error"])),
            ("estimated_tokens", U64),
            ("limit_tokens", U64),
            ("removed_messages", U64),
            ("deduplicated_reads", U64),
        ],
    ),
    (
        "checkpoint",
        &[("turn", U64), ("number", U64), ("hash", NonEmptyStr), ("tool", NonEmptyStr), ("files_changed", U64)],
    ),
    (
        "hook",
        &[
            (
                "hook",
                OneOf(&[
                    "TaskStart",
                    "TaskResume",
                    "TaskCancel",
                    "TaskComplete",
                    "UserPromptSubmit",
                    "PreToolUse",
                    "PostToolUse",
                    "PreCompact",
                ]),
            ),
            ("source", OneOf(&["global", "workspace"])),
            ("script", NonEmptyStr),
            ("ok", Bool),
            ("exit_code", Nullable(&U64)),
            ("timed_out", Bool),
            ("duration_ms", U64),
            ("cancel", Bool),
            ("context_chars", U64),
            ("error_message", Str),
            ("problem", Nullable(&NonEmptyStr)),
        ],
    ),
    ("error", &[("message", NonEmptyStr), ("limit", Nullable(&OneOf(&["max_turns", "max_cost", "timeout"])))]),
    ("approval_needed", &[("call_id", NonEmptyStr), ("tool", NonEmptyStr), ("params", StrMap), ("fix", NonEmptyStr)]),
    (
        "completion",
        &[
            ("status", OneOf(&["completed", "failed", "approval_needed", "interrupted", "terminated"])),
            ("result", Nullable(&Str)),
            ("reason", Nullable(&NonEmptyStr)),
            ("exit_code", U64),
            ("totals", Totals),
        ],
    ),
];

fn check_kind(v: &Value, k: K, at: &str) -> Result<(), String> {
    let ok = match k {
        Str => v.is_string(),
        NonEmptyStr => v.as_str().is_some_and(|s| !s.is_empty()),
        U64 => v.is_u64(),
        Num => v.is_number(),
        Bool => v.is_boolean(),
        StrMap => v.as_object().is_some_and(|o| o.values().all(Value::is_string)),
        Totals => return check_fields(v, TOTALS, at),
        OneOf(options) => v.as_str().is_some_and(|s| options.contains(&s)),
        Nullable(inner) => return if v.is_null() { Ok(()) } else { check_kind(v, *inner, at) },
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{at}: {v} is not {k:?}"))
    }
}

fn check_fields(v: &Value, fields: &[(&str, K)], at: &str) -> Result<(), String> {
    let obj = v.as_object().ok_or_else(|| format!("{at}: not an object: {v}"))?;
    for (name, kind) in fields {
        let f = obj.get(*name).ok_or_else(|| format!("{at}: missing field {name:?} in {v}"))?;
        check_kind(f, *kind, &format!("{at}.{name}"))?;
    }
    if let Some(extra) = obj.keys().find(|k| !fields.iter().any(|(n, _)| n == k)) {
        return Err(format!("{at}: undocumented field {extra:?} in {v}"));
    }
    Ok(())
}

/// Checks one event against the schema.
pub fn validate(v: &Value) -> Result<(), String> {
    let ty = v.get("type").and_then(Value::as_str).ok_or_else(|| format!("no \"type\": {v}"))?;
    let (_, fields) = SCHEMA.iter().find(|(t, _)| *t == ty).ok_or_else(|| format!("unknown event type {ty:?}"))?;
    let all: Vec<(&str, K)> = COMMON.iter().chain(fields.iter()).copied().collect();
    check_fields(v, &all, ty)
}

/// Parses NDJSON stdout; panics unless every line is an event that follows the schema.
pub fn parse(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let v: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("stdout line {} is not JSON ({e}): {line:?}", i + 1));
            if let Err(e) = validate(&v) {
                panic!("stdout line {}: {e}", i + 1);
            }
            v
        })
        .collect()
}

/// The events of one type.
pub fn of<'a>(events: &'a [Value], ty: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == ty).collect()
}
