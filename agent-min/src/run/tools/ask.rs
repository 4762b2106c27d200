//! `ask_followup_question(question, options?)` and `attempt_completion(result, command?)`.

use super::{Call, Ctx, Outcome};
use crate::run::ui::term::Style;

pub(super) fn followup(call: &Call, ctx: &mut Ctx<'_>) -> Outcome {
    let question = call.param("question").unwrap_or_default();
    ctx.term.tool("ask_followup_question", "");
    ctx.term.line(Style::Bold, question);
    if ctx.yolo {
        ctx.term.info(&format!("[YOLO MODE] Auto-responding to question: \"{}\"", short(question)));
        return Outcome::Success(format!(
            "[YOLO MODE: User input is not available in non-interactive mode. You must use available tools (read_file, list_files, search_files, etc.) to gather the information you need instead of asking the user. Proceed with using tools to find the answer to your question: \"{question}\"]"
        ));
    }
    let options = parse_options(call.param("options").unwrap_or("[]"));
    // Cline's ask text: the question and its options as JSON.
    let asked = serde_json::json!({"question": question, "options": options}).to_string();
    ctx.term.attention("followup", &asked);
    if ctx.term.answers_with_next_prompt() {
        return Outcome::Asked(question.to_string());
    }
    if ctx.term.nobody_answers() {
        ctx.term.note_unanswered(question);
        return Outcome::Success(String::new()); // never sent: the loop stops here
    }
    for (i, o) in options.iter().enumerate() {
        ctx.term.info(&format!("  {}. {o}", i + 1));
    }
    let answer = match ctx.term.prompt("Your answer: ") {
        Some(a) => chosen(&options, a),
        None => "(no answer: input ended)".to_string(),
    };
    // The answer's mentions expanded (Cline's loadContext on the `<answer>` block).
    let answer = super::mentions::expand(ctx.ws.root(), &answer);
    // Each file it names is watched, as every mention is (Cline's `trackFileContext`).
    for (shown, abs) in &answer.files {
        ctx.memory.watched.saw(shown, abs);
    }
    Outcome::Success(format!("<answer>\n{}\n</answer>{}", answer.words, answer.blocks))
}

fn short(s: &str) -> String {
    if s.chars().count() > 100 {
        format!("{}...", crate::run::ui::redact::first_chars(s, 100))
    } else {
        s.to_string()
    }
}

/// The answer typed: an option's number is that option, unless what was typed is itself one
/// of the options (`2` among `["1", "2", "3"]` is 2, not the second option); anything else is
/// sent as typed, as Cline sends it.
fn chosen(options: &[String], typed: String) -> String {
    let t = typed.trim();
    if options.iter().any(|o| o.trim() == t) {
        return typed;
    }
    match t.parse::<usize>() {
        Ok(n) if n >= 1 && n <= options.len() => options[n - 1].clone(),
        _ => typed,
    }
}

/// Cline's `parsePartialArrayString`: a JSON array of strings, or, when that is not JSON, one
/// that starts with `["` split on `", "` (a model's array with a stray quote or an unfinished
/// end still gives its options); anything else gives none.
pub(crate) fn parse_options(s: &str) -> Vec<String> {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(s) {
        let items = v.as_array().map(|a| a.iter().filter_map(|o| o.as_str().map(str::to_string)).collect());
        return items.unwrap_or_default();
    }
    let Some(content) = s.trim().strip_prefix("[\"") else { return Vec::new() };
    let content = content.strip_suffix("\"]").unwrap_or(content);
    content.split("\", \"").map(str::trim).filter(|o| !o.is_empty()).map(str::to_string).collect()
}

pub(super) fn complete(call: &Call, ctx: &mut Ctx<'_>) -> Outcome {
    let result = call.param("result").unwrap_or_default();
    ctx.term.tool("attempt_completion", "");
    ctx.term.line(Style::Bold, "Task completed");
    ctx.term.text(&format!("{result}\n"));
    if let Some(cmd) = call.param("command") {
        ctx.term.info(&format!("Suggested command to see the result: {cmd}"));
    }
    Outcome::Complete(result.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_read_as_clines_parse_partial_array_string_reads_them() {
        assert_eq!(parse_options(r#"["a", "b"]"#), ["a", "b"]);
        assert_eq!(parse_options(r#"["say "hi"", "b"]"#), [r#"say "hi""#, "b"], "not JSON: split");
        assert_eq!(parse_options(r#"["a", "b"#), ["a", "b"], "unfinished");
        assert!(parse_options("a, b").is_empty() && parse_options("{}").is_empty());
    }

    #[test]
    fn a_typed_number_is_its_option_unless_it_is_an_option_itself() {
        let opts = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(chosen(&opts(&["red", "blue"]), "2".into()), "blue");
        assert_eq!(chosen(&opts(&["1", "3", "5"]), "3".into()), "3");
        assert_eq!(chosen(&opts(&["1", "3", "5"]), "2".into()), "3", "not an option: the second");
        assert_eq!(chosen(&opts(&["red"]), "green".into()), "green");
    }
}
