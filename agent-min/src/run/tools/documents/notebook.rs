//! A Jupyter notebook as Cline's `sanitizeNotebookForLLM(json, true)` gives it: every code
//! cell's `outputs` emptied, the rest kept, re-serialised as `JSON.stringify(nb, null, 1)`; a
//! file that is not such JSON is given as it is.

use serde_json::Value;

/// The notebook's text for the model.
pub(crate) fn text(bytes: &[u8]) -> String {
    let raw = match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => super::decode_legacy(bytes).unwrap_or_else(|| String::from_utf8_lossy(bytes).into_owned()),
    };
    let Ok(mut nb) = serde_json::from_str::<Value>(&raw) else { return raw };
    let Some(cells) = nb.get_mut("cells").and_then(Value::as_array_mut) else { return raw };
    for cell in cells.iter_mut() {
        let Some(obj) = cell.as_object_mut() else { continue };
        if obj.get("cell_type").and_then(Value::as_str) == Some("code") {
            // `{...cell, outputs: []}`: an existing key keeps its place, a new one goes last.
            obj.insert("outputs".to_string(), Value::Array(Vec::new()));
        }
    }
    stringify(&nb).unwrap_or(raw)
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
        Value::Number(n) if n.is_f64() => out.push_str(&super::js_number(n.as_f64().unwrap_or(0.0))),
        other => out.push_str(&other.to_string()),
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_outputs_are_stripped_and_the_rest_kept_with_one_space_indent() {
        let nb = br##"{"cells":[{"cell_type":"markdown","metadata":{},"source":["# T"]},{"cell_type":"code","execution_count":1,"metadata":{},"outputs":[{"output_type":"stream","name":"stdout","text":["hi\n"]}],"source":["print('hi')"]}],"metadata":{},"nbformat":4,"nbformat_minor":5}"##;
        assert_eq!(
            text(nb),
            "{\n \"cells\": [\n  {\n   \"cell_type\": \"markdown\",\n   \"metadata\": {},\n   \"source\": [\n    \"# T\"\n   ]\n  },\n  {\n   \"cell_type\": \"code\",\n   \"execution_count\": 1,\n   \"metadata\": {},\n   \"outputs\": [],\n   \"source\": [\n    \"print('hi')\"\n   ]\n  }\n ],\n \"metadata\": {},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}"
        );
        assert_eq!(text(b"not json"), "not json");
    }
}
