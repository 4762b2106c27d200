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
        Some(a) => match a.trim().parse::<usize>() {
            Ok(n) if n >= 1 && n <= options.len() => options[n - 1].clone(),
            _ => a,
        },
        None => "(no answer: input ended)".to_string(),
    };
    // The answer's mentions expanded (Cline's loadContext on the `<answer>` block).
    let answer = super::mentions::expand(ctx.ws.root(), &answer);
    Outcome::Success(format!("<answer>\n{}\n</answer>{}", answer.words, answer.blocks))
}

fn short(s: &str) -> String {
    if s.chars().count() > 100 {
        format!("{}...", crate::run::ui::redact::first_chars(s, 100))
    } else {
        s.to_string()
    }
}

/// Options are a JSON array of strings; anything else gives none.
pub(crate) fn parse_options(s: &str) -> Vec<String> {
    serde_json::from_str::<Vec<String>>(s).unwrap_or_default()
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
