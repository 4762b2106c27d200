//! A Jupyter notebook as Cline's `sanitizeNotebookForLLM(json, true)` gives it: every code
//! cell's `outputs` emptied, the rest kept, re-serialised as `JSON.stringify(nb, null, 1)`; a
//! text that is not such JSON is given as it is. `read_file` gives a notebook so (with the
//! `documents` feature: `documents/`), and so do the edit tools when they show one to the model
//! (the file after a failed edit, the file as saved), as Cline's `DiffViewProvider` does.

use serde_json::Value;

/// The notebook `json` for the model.
pub(crate) fn sanitize(json: &str) -> String {
    let Ok(mut nb) = serde_json::from_str::<Value>(json) else { return json.to_string() };
    let Some(cells) = nb.get_mut("cells").and_then(Value::as_array_mut) else { return json.to_string() };
    for cell in cells.iter_mut() {
        let Some(obj) = cell.as_object_mut() else { continue };
        if obj.get("cell_type").and_then(Value::as_str) == Some("code") {
            // `{...cell, outputs: []}`: an existing key keeps its place, a new one goes last.
            obj.insert("outputs".to_string(), Value::Array(Vec::new()));
        }
    }
    stringify(&nb).unwrap_or_else(|| json.to_string())
}

/// `text` for the model, sanitised if `path` names a notebook (Cline: a name ending in
/// `.ipynb`, in any case).
pub(crate) fn for_model(path: &str, text: &str) -> String {
    if path.to_lowercase().ends_with(".ipynb") {
        sanitize(text)
    } else {
        text.to_string()
    }
}

/// `JSON.stringify(value, null, 1)`.
fn stringify(v: &Value) -> Option<String> {
    let mut out = String::new();
    write(v, 0, &mut out).then_some(out)
}

fn write(v: &Value, depth: usize, out: &mut String) -> bool {
    let pad = |out: &mut String, d: usize| {
        out.push('\n');
        out.push_str(&" ".repeat(d));
    };
    match v {
        Value::Array(a) if !a.is_empty() => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                pad(out, depth + 1);
                if !write(x, depth + 1, out) {
                    return false;
                }
            }
            pad(out, depth);
            out.push(']');
        }
        Value::Object(o) if !o.is_empty() => {
            out.push('{');
            for (i, (k, x)) in o.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                pad(out, depth + 1);
                out.push_str(&Value::String(k.clone()).to_string());
                out.push_str(": ");
                if !write(x, depth + 1, out) {
                    return false;
                }
            }
            pad(out, depth);
            out.push('}');
        }
        Value::Number(n) if n.is_f64() => out.push_str(&js_number(n.as_f64().unwrap_or(0.0))),
        other => out.push_str(&other.to_string()),
    }
    true
}

/// A number as JavaScript's `String(n)` writes it (shortest round trip; exponent form from
/// 1e21 and below 1e-6).
pub(crate) fn js_number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if n == 0.0 {
        return "0".into();
    }
    let a = n.abs();
    if (1e-6..1e21).contains(&a) {
        return format!("{n}");
    }
    // Rust's `{:e}` is the shortest round trip too: `1e21`, `1.5e-7`; JavaScript adds a sign.
    let s = format!("{n:e}");
    match s.split_once('e') {
        Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e}"),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_outputs_are_stripped_and_the_rest_kept_with_one_space_indent() {
        let nb = br##"{"cells":[{"cell_type":"markdown","metadata":{},"source":["# T"]},{"cell_type":"code","execution_count":1,"metadata":{},"outputs":[{"output_type":"stream","name":"stdout","text":["hi\n"]}],"source":["print('hi')"]}],"metadata":{},"nbformat":4,"nbformat_minor":5}"##;
        assert_eq!(
            sanitize(std::str::from_utf8(nb).unwrap()),
            "{\n \"cells\": [\n  {\n   \"cell_type\": \"markdown\",\n   \"metadata\": {},\n   \"source\": [\n    \"# T\"\n   ]\n  },\n  {\n   \"cell_type\": \"code\",\n   \"execution_count\": 1,\n   \"metadata\": {},\n   \"outputs\": [],\n   \"source\": [\n    \"print('hi')\"\n   ]\n  }\n ],\n \"metadata\": {},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}"
        );
        assert_eq!(sanitize("not json"), "not json");
    }

    #[test]
    fn numbers_as_javascript_writes_them() {
        assert_eq!(js_number(3.0), "3");
        assert_eq!(js_number(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(js_number(-2.5), "-2.5");
        assert_eq!(js_number(1e21), "1e+21");
        assert_eq!(js_number(1.5e-7), "1.5e-7");
        assert_eq!(js_number(123456789012.0), "123456789012");
    }
}
