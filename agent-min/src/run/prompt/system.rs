//! The system prompt: Cline v4.0.10's text for the model's family, cut to the tools agent-min
//! offers.
//!
//! The texts in `system/*.txt` are Cline's prompts as its snapshot tests print them
//! (`apps/vscode/src/core/prompts/system-prompt/__tests__/__snapshots__/*-no-browser.snap`:
//! `openai_gpt_3` for the generic family, `anthropic_claude_sonnet_4` for next-gen,
//! `openai_gpt_5` for GPT-5), with what agent-min does not have left out: the sections of tools
//! it lacks (MCP, `list_code_definition_names`, `plan_mode_respond`, `new_task`, …) and their
//! examples, MCP servers, plan mode, Cline's feedback section (`/reportbug`, `web_fetch`) and
//! every line naming one of those. The `task_progress` parameter and its section are kept, as
//! Cline's focus chain is on by default; `dialect::system::without_task_progress` takes them out
//! for `--no-focus-chain`. The
//! tools' sections (`## read_file` …) are their declarations' (`tools/registry.rs`, texts in
//! `tools/decl/`) and fill `{{tools}}`; the workspace, OS, shell and home directory fill the
//! other `{{…}}` places. The test
//! `agent-min/tests/it/system_prompt.rs` checks every section against Cline's snapshot.

use crate::run::texts;

/// Cline's prompt variants: the XML ones (`Generic`, `NextGen`, `Gpt5`) and the native ones
/// (`Native*`, whose tools travel as definitions beside the prompt).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// The fallback (`variants/generic`).
    Generic,
    /// Claude 4+, Gemini 2.5/3, Grok 4, GPT-5 chat, gpt-oss, MiniMax, DeepSeek chat/reasoner
    /// and 3.2 (`variants/next-gen`).
    NextGen,
    /// GPT-5 (not "chat") from a next-gen provider (`variants/gpt-5`).
    Gpt5,
    /// Native calls: Claude 4+, Gemini 2.5, Grok 4, DeepSeek… — every next-gen family but GPT-5
    /// (`variants/native-next-gen`).
    NativeNextGen,
    /// Native calls: GPT-5 before 5.1 (not "chat") and gpt-oss; edits with `apply_patch`
    /// (`variants/native-gpt-5`).
    NativeGpt5,
    /// Native calls: GPT-5.1 and later (not "chat"); edits with `apply_patch`
    /// (`variants/native-gpt-5-1`).
    NativeGpt51,
}

impl Family {
    /// Whether this variant edits files with `apply_patch` instead of `write_to_file` and
    /// `replace_in_file` (Cline's native GPT-5 variants).
    pub(crate) fn patches(self) -> bool {
        matches!(self, Family::NativeGpt5 | Family::NativeGpt51)
    }

    /// Whether this is one of Cline's native variants.
    pub(crate) fn is_native(self) -> bool {
        matches!(self, Family::NativeNextGen | Family::NativeGpt5 | Family::NativeGpt51)
    }
}

/// What fills the template's places.
#[derive(Debug, Clone)]
pub struct Env<'a> {
    /// The workspace root.
    pub cwd: &'a str,
    /// `Operating System:` in SYSTEM INFORMATION.
    pub os: &'a str,
    /// `IDE:`.
    pub ide: &'a str,
    /// `Default Shell:` (agent-min runs commands with `sh -c`).
    pub shell: &'a str,
    /// `Home Directory:`.
    pub home: &'a str,
    /// Whether several tool calls may come in one reply (Cline's `enableParallelToolCalling`,
    /// on by default): the native next-gen variant says so in three places.
    pub parallel: bool,
}

/// Cline's choice of XML variant (`variants/*/config.ts` matchers, in registry order), for a
/// provider (`anthropic` | `openai` | `ollama`) and a model name, with Cline's
/// `nativeToolCallEnabled` on or off (`native_setting`). On — its default — a model gets XML
/// only where no native variant takes it (`gpt-5-chat`, a provider Cline does not call
/// next-gen), and then the `gpt-5` variant never matches and `next-gen` only off next-gen
/// providers: the rest falls back to generic.
pub(crate) fn family(provider: &str, model: &str, native_setting: bool) -> Family {
    let id = model.to_lowercase();
    // Cline's next-gen providers include anthropic and openai(-compatible), not ollama.
    let next_gen_provider = crate::run::llm::providers::registry::is_next_gen(provider);
    let gpt5 = id.contains("gpt-5") || id.contains("gpt5");
    // Cline tests "chat" on the model id as given, not lowercased.
    let chat = model.contains("chat");
    if native_setting {
        let next_gen = !next_gen_provider && is_next_gen_model(&id) && (!gpt5 || chat);
        return if next_gen { Family::NextGen } else { Family::Generic };
    }
    if gpt5 && !chat && next_gen_provider {
        return Family::Gpt5;
    }
    if is_next_gen_model(&id) {
        return Family::NextGen;
    }
    Family::Generic
}

/// Cline's `isNextGenModelFamily`, its open-source list (`kimi-k2`) included.
fn is_next_gen_model(id: &str) -> bool {
    claude_major(id).is_some_and(|v| v >= 4)
        || ["gemini-2.5", "grok-4", "gpt-5", "gpt5", "gpt-oss", "gpt_oss", "minimax", "gemini-3", "gemini3", "kimi-k2"]
            .iter()
            .any(|s| id.contains(s))
        || id.contains("deepseek-chat")
        || id.contains("deepseek-reasoner")
        || (id.contains("deepseek") && id.contains("3.2") && !id.contains("speciale"))
        || id.contains("laguna")
}

/// The major version of a Claude model name: the first number right after `claude`, `sonnet`,
/// `opus` or `haiku` (`claude-3-7-sonnet` → 3, `claude-sonnet-4-5` → 4); the bare aliases
/// `sonnet` and `opus` are Claude 4+.
fn claude_major(id: &str) -> Option<u32> {
    if id == "sonnet" || id == "opus" {
        return Some(4);
    }
    id.char_indices().find_map(|(i, _)| {
        let rest = &id[i..];
        let name = ["claude", "sonnet", "opus", "haiku"].into_iter().find(|n| rest.starts_with(n))?;
        let after = rest[name.len()..].strip_prefix(['-', '_', ' ', '.']).unwrap_or(&rest[name.len()..]);
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    })
}

/// The template of a family. The next-gen and GPT-5 XML prompts are built in as their
/// differences from the generic one (`system/*.patch`, see `prompt/patch.rs`).
pub(crate) fn template(family: Family) -> std::borrow::Cow<'static, str> {
    let patched = |patch: &str| {
        let text = super::patch::apply(generic(), patch);
        std::borrow::Cow::Owned(text.expect("prompt/system/*.patch fit generic.txt (tested)"))
    };
    match family {
        Family::Generic => generic().into(),
        Family::NextGen => patched(texts::NEXT_GEN_PATCH.get()),
        Family::Gpt5 => patched(texts::GPT_5_PATCH.get()),
        Family::NativeNextGen => texts::NATIVE_NEXT_GEN_TXT.get().into(),
        Family::NativeGpt5 => texts::NATIVE_GPT_5_TXT.get().into(),
        Family::NativeGpt51 => texts::NATIVE_GPT_5_1_TXT.get().into(),
    }
}

/// Cline's generic prompt, which the next-gen and GPT-5 ones are patches of.
fn generic() -> &'static str {
    texts::GENERIC_TXT.get()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::dialect::system::render;

    #[test]
    fn families_follow_clines_matchers() {
        // With Cline's native-calls setting off (`--tool-calls xml`).
        let xml_off = |p: &str, m: &str| family(p, m, false);
        assert_eq!(xml_off("openai", "gpt-5"), Family::Gpt5);
        assert_eq!(xml_off("openai", "gpt-5-mini"), Family::Gpt5);
        assert_eq!(xml_off("openai", "gpt-5-chat-latest"), Family::NextGen);
        assert_eq!(xml_off("ollama", "gpt-5"), Family::NextGen);
        assert_eq!(xml_off("anthropic", "claude-sonnet-4-5"), Family::NextGen);
        assert_eq!(xml_off("openai", "anthropic/claude-opus-4.1"), Family::NextGen);
        assert_eq!(xml_off("anthropic", "claude-3-7-sonnet-latest"), Family::Generic);
        assert_eq!(xml_off("anthropic", "claude-3-5-haiku"), Family::Generic);
        assert_eq!(xml_off("openai", "gpt-4.1"), Family::Generic);
        assert_eq!(xml_off("ollama", "qwen2.5-coder:7b"), Family::Generic);
        assert_eq!(xml_off("openai", "deepseek-chat"), Family::NextGen);
        assert_eq!(xml_off("openai", "gemini-2.5-pro"), Family::NextGen);
        // Cline's `isNextGenOpenSourceModelFamily`: the next-gen XML variant, on Ollama too.
        assert_eq!(xml_off("openai", "kimi-k2-0905-preview"), Family::NextGen);
        assert_eq!(xml_off("openai", "moonshotai/kimi-k2.5"), Family::NextGen);
        assert_eq!(xml_off("ollama", "kimi-k2:1t-cloud"), Family::NextGen);
        // "chat" is looked for in the name as given.
        assert_eq!(xml_off("openai", "GPT-5-Chat"), Family::Gpt5);
        // With it on (its default; `--tool-calls auto`), for the models no native variant
        // takes: Cline falls back to generic where the next-gen and gpt-5 variants want it off.
        let xml_on = |p: &str, m: &str| family(p, m, true);
        assert_eq!(xml_on("openai", "gpt-5-chat-latest"), Family::Generic);
        assert_eq!(xml_on("ollama", "gpt-5"), Family::Generic);
        assert_eq!(xml_on("ollama", "gpt-5-chat"), Family::NextGen);
        assert_eq!(xml_on("ollama", "kimi-k2:1t-cloud"), Family::NextGen);
        assert_eq!(xml_on("ollama", "qwen2.5-coder:7b"), Family::Generic);
        assert_eq!(xml_on("anthropic", "claude-3-7-sonnet-latest"), Family::Generic);
    }

    /// The patches built in are the differences of the texts in the repository: regenerate
    /// them with `AGENT_MIN_WRITE_PATCHES=1 cargo test -p agent-min --lib prompt::system`.
    #[test]
    fn the_patched_prompts_are_their_texts() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/run/prompt/system");
        for (family, name, text) in [
            (Family::NextGen, "next_gen", include_str!("system/next_gen.txt")),
            (Family::Gpt5, "gpt_5", include_str!("system/gpt_5.txt")),
        ] {
            let patch = crate::run::prompt::patch::diff(generic(), text);
            let file = dir.join(format!("{name}.patch"));
            if std::env::var_os("AGENT_MIN_WRITE_PATCHES").is_some() {
                std::fs::write(&file, &patch).unwrap();
            }
            let committed = std::fs::read_to_string(&file).unwrap_or_default();
            assert_eq!(committed, patch, "{} is not {name}.txt's difference from generic.txt; regenerate it: AGENT_MIN_WRITE_PATCHES=1 cargo test -p agent-min --lib prompt::system", file.display());
            assert!(template(family) == text, "{name}: the built-in patch does not give {name}.txt");
        }
    }

    #[test]
    fn places_are_all_filled() {
        let env = Env { cwd: "/w", os: "Linux", ide: "i", shell: "/bin/sh", home: "/h", parallel: true };
        for f in [Family::Generic, Family::NextGen, Family::Gpt5] {
            let s = render(f, &env);
            assert!(!s.contains("{{"), "{f:?}");
            assert!(s.contains("Current Working Directory: /w\n") && s.contains("Default Shell: /bin/sh\n"), "{f:?}");
            assert!(s.contains("You are stuck operating from '/w'"), "{f:?}");
        }
        for f in [Family::NativeNextGen, Family::NativeGpt5, Family::NativeGpt51] {
            for parallel in [true, false] {
                let s = render(f, &Env { parallel, ..env.clone() });
                assert!(!s.contains("{{"), "{f:?}");
                assert!(
                    s.contains("Current Working Directory: /w\n") && s.contains("Default Shell: /bin/sh\n"),
                    "{f:?}"
                );
            }
        }
    }
}
