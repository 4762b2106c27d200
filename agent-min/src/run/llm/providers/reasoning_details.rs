//! OpenRouter's `reasoning_details`: the reasoning objects a reply streams (text pieces, a
//! summary, encrypted data such as Gemini 3's thought signatures, each with an `index`), which
//! must go back with the reply for the model to reason on through tool calls (OpenRouter's
//! "Preserving reasoning blocks"; Gemini 3 refuses a call without its signature). They go back
//! as Cline's `consolidateReasoningDetails` sends them: one object per index with its text
//! pieces joined, and the last encrypted object of that index.

use serde_json::{Map, Value};

use crate::run::llm::types::{Message, Part};

/// The reasoning objects of `m` (the assistant's), consolidated; empty when it has none.
pub(super) fn consolidated(m: &Message) -> Vec<Value> {
    let details: Vec<&Value> = m
        .parts
        .iter()
        .flat_map(|p| match p {
            Part::ReasoningDetails(d) => d.as_slice(),
            _ => &[],
        })
        .collect();
    // By index, in the order each index first appears (found through a map: a reply may hold
    // many thousands of objects).
    let mut groups: Vec<(u64, Vec<&Value>)> = Vec::new();
    let mut at: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    for d in details {
        // An encrypted object without its data (or with an empty one) would be refused
        // ("expected string, received undefined"); Cline drops it (`!detail.data`).
        if d["type"] == "reasoning.encrypted" && d["data"].as_str().is_none_or(str::is_empty) {
            continue;
        }
        let index = d["index"].as_u64().unwrap_or(0);
        let g = *at.entry(index).or_insert_with(|| {
            groups.push((index, Vec::new()));
            groups.len() - 1
        });
        groups[g].1.push(d);
    }
    let mut out = Vec::new();
    for (index, group) in groups {
        let text: String = group.iter().filter_map(|d| d["text"].as_str()).collect();
        // Of the group's objects, the last that has each.
        let last = |key: &str| group.iter().rev().map(|d| &d[key]).find(|v| v.as_str().is_some_and(|s| !s.is_empty()));
        if !text.is_empty() {
            let mut o = Map::new();
            o.insert("type".into(), last("type").cloned().unwrap_or_else(|| "reasoning.text".into()));
            o.insert("text".into(), Value::String(text));
            // (Absent keys stay absent, as JavaScript leaves out an undefined one.)
            for key in ["signature", "id"] {
                if let Some(v) = last(key) {
                    o.insert(key.into(), v.clone());
                }
            }
            o.insert("format".into(), last("format").cloned().unwrap_or_else(|| "unknown".into()));
            o.insert("index".into(), index.into());
            out.push(Value::Object(o));
        }
        if let Some(d) = group.iter().rev().find(|d| d["data"].as_str().is_some_and(|s| !s.is_empty())) {
            let mut o = Map::new();
            for key in ["type", "data", "signature", "id", "format"] {
                if !d[key].is_null() {
                    o.insert(key.into(), d[key].clone());
                }
            }
            o.insert("index".into(), index.into());
            out.push(Value::Object(o));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pieces_of_one_index_are_joined_and_encrypted_data_kept_last() {
        let mut m = Message::assistant("");
        m.parts = vec![
            Part::ReasoningDetails(vec![
                json!({"type": "reasoning.text", "text": "Let me ", "index": 0, "format": "google-gemini-v1"}),
                json!({"type": "reasoning.text", "text": "read it.", "index": 0, "format": "google-gemini-v1"}),
            ]),
            Part::ReasoningDetails(vec![
                json!({"type": "reasoning.encrypted", "index": 1}),
                // Empty data, dropped as Cline drops it: it would lend the text its type and id.
                json!({"type": "reasoning.encrypted", "data": "", "id": "lost", "index": 0}),
                json!({"type": "reasoning.encrypted", "data": "SIG1", "id": "tool_1", "index": 1, "format": "google-gemini-v1"}),
            ]),
        ];
        assert_eq!(
            consolidated(&m),
            [
                json!({"type": "reasoning.text", "text": "Let me read it.", "format": "google-gemini-v1", "index": 0}),
                json!({"type": "reasoning.encrypted", "data": "SIG1", "id": "tool_1", "format": "google-gemini-v1", "index": 1}),
            ]
        );
        assert!(consolidated(&Message::assistant("no reasoning")).is_empty());
    }
}
