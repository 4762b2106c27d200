//! `--output-schema FILE`: the final result must be JSON valid against the user's JSON Schema
//! (codex's `--output-schema`, `claude -p --json-schema`).
//!
//! The model is told the schema with the task. A result that does not validate goes back to it
//! once with the validation errors; a second one fails the run. What is valid is printed and
//! written (`-o`) as compact JSON. `$ref`s are resolved only inside the file: nothing is fetched.
//!
//! The validator (`json_schema.rs`) is the cargo feature `output-schema`; without it (`validator`
//! below is the one gate) `--output-schema` is refused before the run starts, naming the
//! feature: a result is never passed off as checked.

use std::path::{Path, PathBuf};

/// Most bytes of a schema file.
const MAX_SCHEMA: u64 = 1 << 20;
/// Validation errors shown to the model, at most.
const MAX_ERRORS: usize = 10;

/// A compiled schema and how often the model missed it.
pub struct OutputSchema {
    file: PathBuf,
    text: String,
    validator: validator::Validator,
    misses: u32,
}

/// What came of checking a final result.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Valid: the result as compact JSON.
    Valid(String),
    /// Invalid, first time: this goes back to the model as the tool's error.
    Retry(String),
    /// Invalid again: the run fails with this reason.
    Fail(String),
}

impl OutputSchema {
    /// Reads and compiles the schema in `file`; an error names the file and the problem.
    pub(crate) fn load(file: &Path) -> Result<Self, String> {
        let shown = file.display();
        validator::built_in().map_err(|e| format!("--output-schema {shown}: {e}"))?;
        let text = read(file).map_err(|e| format!("--output-schema {shown}: cannot read it ({e})"))?;
        let schema: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("--output-schema {shown}: not JSON ({e})"))?;
        let validator = validator::compile(&schema).map_err(|e| format!("--output-schema {shown}: {e}"))?;
        Ok(OutputSchema { file: file.to_path_buf(), text, validator, misses: 0 })
    }

    /// What the model is told with the task.
    pub(crate) fn instructions(&self) -> String {
        format!(
            "IMPORTANT: When you call attempt_completion, its result must be only a JSON value (no prose, no code fence) that is valid against this JSON Schema:\n{}",
            self.text.trim()
        )
    }

    /// Checks a final result.
    pub(crate) fn check(&mut self, result: &str) -> Verdict {
        let errors = match serde_json::from_str::<serde_json::Value>(unfenced(result)) {
            Err(e) => vec![format!("the result is not JSON ({e})")],
            Ok(value) => {
                let errors = validator::errors(&self.validator, &value, MAX_ERRORS);
                if errors.is_empty() {
                    return Verdict::Valid(value.to_string());
                }
                errors
            }
        };
        self.misses += 1;
        let list = errors.join("; ");
        if self.misses == 1 {
            Verdict::Retry(format!(
                "The result does not match the required JSON Schema (--output-schema): {list}. Call attempt_completion again with a result that is only a JSON value valid against the schema."
            ))
        } else {
            Verdict::Fail(format!(
                "the final result is not valid against --output-schema {} ({list}), after one retry",
                self.file.display()
            ))
        }
    }
}

/// The one place the JSON Schema validator is named: ours (`json_schema.rs`) with the feature,
/// else nothing (a schema is refused before the run, with how to get a build that checks it).
#[cfg(feature = "output-schema")]
mod validator {
    pub(super) use crate::run::json_schema::Validator;

    /// Built in.
    pub(super) fn built_in() -> Result<(), String> {
        Ok(())
    }

    /// The compiled schema, or why it is not usable.
    pub(super) fn compile(schema: &serde_json::Value) -> Result<Validator, String> {
        Validator::new(schema).map_err(|e| format!("not a usable JSON Schema ({e})"))
    }

    /// At most `max` validation errors of `value`, each with where it is.
    pub(super) fn errors(v: &Validator, value: &serde_json::Value, max: usize) -> Vec<String> {
        v.errors(value, max)
    }
}

/// Built without the feature `output-schema`: no validator, so no schema is ever accepted.
#[cfg(not(feature = "output-schema"))]
mod validator {
    /// No value: a schema is never compiled in this build.
    pub(super) enum Validator {}

    /// Refused, naming the feature.
    pub(super) fn built_in() -> Result<(), String> {
        Err(crate::run::built::not_built_in("output-schema", "checking the final result against a JSON Schema"))
    }

    /// Unreachable after [`built_in`].
    pub(super) fn compile(_: &serde_json::Value) -> Result<Validator, String> {
        built_in().map(|()| unreachable!())
    }

    /// Unreachable: there is no validator.
    pub(super) fn errors(v: &Validator, _: &serde_json::Value, _: usize) -> Vec<String> {
        match *v {}
    }
}

/// The JSON inside one Markdown code fence, if the whole result is one; else the result.
fn unfenced(s: &str) -> &str {
    let t = s.trim();
    let Some(rest) = t.strip_prefix("```") else { return t };
    let Some(body) = rest.strip_suffix("```") else { return t };
    body.split_once('\n')
        .map_or(body, |(lang, b)| if lang.trim().chars().all(|c| c.is_ascii_alphanumeric()) { b } else { body })
        .trim()
}

/// The schema's text: one regular file of at most [`MAX_SCHEMA`] bytes of UTF-8, read once.
fn read(path: &Path) -> Result<String, String> {
    let bytes = crate::run::trusted_file::read(path, crate::run::trusted_file::Links::Follow, MAX_SCHEMA)
        .map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())
}

#[cfg(all(test, not(feature = "output-schema")))]
mod not_built_in {
    #[test]
    fn without_the_feature_a_schema_is_refused_naming_it() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("s.json");
        std::fs::write(&f, r#"{"type":"object"}"#).unwrap();
        let e = super::OutputSchema::load(&f).err().unwrap();
        assert!(e.contains("--output-schema") && e.contains("`output-schema`") && e.contains("--features"), "{e}");
    }
}

#[cfg(all(test, feature = "output-schema"))]
mod tests {
    use super::*;

    fn schema(text: &str) -> OutputSchema {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("s.json");
        std::fs::write(&f, text).unwrap();
        OutputSchema::load(&f).unwrap()
    }

    const S: &str = r#"{"type":"object","properties":{"ok":{"type":"boolean"},"n":{"type":"integer"}},"required":["ok"],"additionalProperties":false}"#;

    #[test]
    fn valid_results_come_back_compact_and_fenced_ones_are_read() {
        let mut s = schema(S);
        assert_eq!(s.check("{ \"ok\": true,\n \"n\": 3 }"), Verdict::Valid(r#"{"ok":true,"n":3}"#.into()));
        assert_eq!(s.check("```json\n{\"ok\": false}\n```"), Verdict::Valid(r#"{"ok":false}"#.into()));
    }

    #[test]
    fn an_invalid_result_is_retried_once_then_fails() {
        let mut s = schema(S);
        match s.check(r#"{"n": "x"}"#) {
            Verdict::Retry(t) => assert!(t.contains("\"ok\" is a required property") && t.contains("/n"), "{t}"),
            v => panic!("{v:?}"),
        }
        match s.check("All done!") {
            Verdict::Fail(t) => assert!(t.contains("not JSON") && t.contains("after one retry"), "{t}"),
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn a_bad_schema_file_is_named() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("s.json");
        std::fs::write(&f, "{not json").unwrap();
        assert!(OutputSchema::load(&f).err().unwrap().contains("not JSON"));
        std::fs::write(&f, r#"{"type": 12}"#).unwrap();
        assert!(OutputSchema::load(&f).err().unwrap().contains("not a usable JSON Schema"));
        assert!(OutputSchema::load(&d.path().join("none")).err().unwrap().contains("cannot read it"));
    }
}
