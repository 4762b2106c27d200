//! `agent-min resume [TASK_ID | --last] [WORDS]`: continue a saved task (see [`crate::run::session::state`]).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::run::cli;
use crate::run::native::ToolCalls;

/// Entry point of `agent-min resume`.
pub fn main(args: Vec<OsString>) -> ExitCode {
    let mut opts = match cli::parse_resume(args) {
        Ok(o) => o,
        Err(e) => return usage_error(&e),
    };
    if opts.help {
        print!("{}", cli::resume_help());
        return ExitCode::SUCCESS;
    }
    // Open without the key for reading; `launch` reopens it with the key to redact on save.
    let store = match crate::run::open_store(&opts, None) {
        Ok(s) => s,
        Err(e) => return usage_error(&e),
    };
    let found = match opts.task.take() {
        Some(id) => store.load(&id),
        None => store.last_in(opts.cwd.as_deref().unwrap_or(std::path::Path::new("."))),
    };
    let record = match found {
        Ok(r) => r,
        Err(e) => return usage_error(&e),
    };
    let pending = record.pending.as_deref().is_some_and(|p| !p.trim().is_empty()) || !record.pending_parts.is_empty();
    if record.messages.is_empty() && !pending {
        return usage_error(&format!(
            "task {} has nothing to resume: its only prompt was refused by the provider's safety system in an editor, which leaves a refused prompt out of the conversation; start a new task with `agent-min run`",
            record.meta.id
        ));
    }
    // Said before anything else; the run holds the task itself once it starts (`Store::hold`).
    if let Err(busy) = store.claim(&record.meta.id) {
        return usage_error(&busy.refusal("resuming"));
    }
    if opts.last {
        eprintln!(
            "agent-min resume: the latest task of {}: {} — {}",
            crate::run::ui::term::visible(&record.meta.cwd),
            record.meta.id,
            short(&record.meta.task)
        );
    }
    // The saved task's provider, model, URL and workspace, unless given again.
    if opts.provider.is_none() {
        match crate::run::llm::providers::registry::named(&record.meta.provider) {
            Some(p) => {
                opts.provider = Some(p);
                opts.openai_native = record.meta.provider == crate::run::llm::providers::registry::NATIVE_OPENAI;
            }
            None => {
                return usage_error(&format!(
                    "task {} was run with {:?}, which cannot be resumed; give --provider",
                    record.meta.id, record.meta.provider
                ))
            }
        }
    }
    if opts.model.is_none() {
        opts.model = Some(record.meta.model.clone());
    }
    if opts.base_url.is_none() && !record.meta.base_url.is_empty() {
        opts.base_url = Some(record.meta.base_url.clone());
    }
    if opts.cwd.is_none() {
        opts.cwd = Some(PathBuf::from(&record.meta.cwd));
    }
    // A conversation with native calls goes on natively unless --tool-calls says otherwise.
    if opts.tool_calls == ToolCalls::Auto && record.messages.iter().any(|m| m.tool_uses().next().is_some()) {
        opts.tool_calls = ToolCalls::Native;
    }
    // What the person says with the resume: `-` reads it from standard input, and piped input
    // follows the words as context, as `run` takes a task. The saved task stays as it was.
    // Without words, piped input is what is said (`echo "go on" | agent-min resume --last`).
    let piped = cli::stdin_is_piped();
    match opts.words.take() {
        Some(w) => match cli::task_text(&w, std::io::stdin(), piped) {
            Ok(w) => opts.words = Some(w),
            Err(e) => return usage_error(&e),
        },
        None if piped => match cli::task_text("-", std::io::stdin(), true) {
            Ok(w) => opts.words = Some(w).filter(|w| !w.trim().is_empty()),
            Err(e) => return usage_error(&e),
        },
        None => {}
    }
    if record.status == "completed" {
        eprintln!("agent-min resume: task {} had completed; continuing it anyway.", record.meta.id);
    }
    crate::run::launch(&opts, Some(record))
}

/// The first line of a task, at most 60 characters, control characters visible.
pub(crate) fn short(task: &str) -> String {
    let line = task.lines().next().unwrap_or("");
    let cut: String = line.chars().take(60).collect();
    let more = if cut.len() < task.trim_end().len() { "…" } else { "" };
    format!("{}{more}", crate::run::ui::term::visible(&cut))
}

fn usage_error(msg: &str) -> ExitCode {
    eprintln!("agent-min resume: {msg}");
    ExitCode::from(2)
}
