//! `--tool-calls xml | native | auto`, and `auto`'s table: Cline v4.0.10 uses native tool calls
//! when its native prompt variants match (`variants/native-*/config.ts`): the provider is one of
//! its "next-gen" providers (`isNextGenModelProvider`: Anthropic, OpenAI, OpenAI-compatible,
//! OpenRouter, DeepSeek… — not Ollama or LM Studio) and the model one of its "next-gen"
//! families (`isNextGenModelFamily` in `utils/model-utils.ts`).

use crate::run::llm::providers::Provider;
use crate::run::prompt::system::Family;

/// Which dialect tool calls are made in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ToolCalls {
    /// Cline's XML tags in the reply text.
    Xml,
    /// The API's native tool calls.
    Native,
    /// Native for the model families Cline enables it for, XML otherwise.
    #[default]
    Auto,
}

impl ToolCalls {
    /// Parses a `--tool-calls` value.
    pub(crate) fn parse(s: &str) -> Option<ToolCalls> {
        match s {
            "xml" => Some(ToolCalls::Xml),
            "native" => Some(ToolCalls::Native),
            "auto" => Some(ToolCalls::Auto),
            _ => None,
        }
    }

    /// Whether this run uses native calls with `provider` and `model`: under `auto`, where
    /// Cline's would — one of its native variants takes the model (`gpt-5-chat`, a next-gen
    /// name none takes, gets XML).
    pub(crate) fn native(self, provider: Provider, model: &str) -> bool {
        match self {
            ToolCalls::Xml => false,
            ToolCalls::Native => true,
            ToolCalls::Auto => native_family(provider.decl().name, model).is_some(),
        }
    }
}

/// Cline's choice among its native variants (`variants/index.ts` order: `native-gpt-5`,
/// `native-gpt-5-1`, `gemini-3`, `native-next-gen`), or `None` where none matches (a provider
/// Cline does not call next-gen, a model outside its next-gen families, `gpt-5-chat`): there the
/// native dialect keeps the XML family's prompt with its TOOL USE section swapped. Gemini 3,
/// which Cline gives its own `gemini-3` variant, gets `native-next-gen`.
pub(crate) fn native_family(provider: &str, model: &str) -> Option<Family> {
    if !crate::run::llm::providers::registry::is_next_gen(provider) {
        return None;
    }
    let id = model.trim().to_lowercase();
    let gpt5 = id.contains("gpt-5") || id.contains("gpt5");
    // Cline tests "chat" on the model id as given, not lowercased.
    let chat = model.contains("chat");
    if id.contains("gpt-oss") || id.contains("gpt_oss") || (gpt5 && !is_gpt_51_plus(&id) && !chat) {
        return Some(Family::NativeGpt5);
    }
    if is_gpt_51_plus(&id) && !chat {
        return Some(Family::NativeGpt51);
    }
    (!gpt5 && is_next_gen_family(&id)).then_some(Family::NativeNextGen)
}

/// Cline's `isGPT51PlusModel`: GPT-5.1 to 5.6, dotted or dashed.
fn is_gpt_51_plus(id: &str) -> bool {
    (1..=6).any(|v| id.contains(&format!("gpt-5.{v}")) || id.contains(&format!("gpt-5-{v}")))
}

/// Cline's `isNextGenModelFamily`: Claude 4+, Gemini 2.5 and 3, Grok 4, GPT-5, gpt-oss,
/// MiniMax, Kimi K2, DeepSeek 3.2 (not Speciale), deepseek-chat / deepseek-reasoner, Laguna.
pub(crate) fn is_next_gen_family(model: &str) -> bool {
    let m = model.trim().to_lowercase();
    let has = |s: &str| m.contains(s);
    is_claude_4_plus(&m)
        || has("gemini-2.5")
        || has("grok-4")
        || has("gpt-5")
        || has("gpt5")
        || has("gpt-oss")
        || has("gpt_oss")
        || has("minimax")
        || has("gemini3")
        || has("gemini-3")
        || has("kimi-k2")
        || (has("deepseek") && has("3.2") && !has("speciale"))
        || has("deepseek-chat")
        || has("deepseek-reasoner")
        || has("laguna")
}

/// Cline's `isClaude4PlusModelFamily`: `sonnet` / `opus` aliases, or a Claude name (a key of
/// Cline's Anthropic table, as `claude-fable-5`, or one with sonnet, opus or haiku in it:
/// `isAnthropicModelId`) whose version — the first `[-_ ]D` or `[-_ ]D.0` / `D.5`
/// (`CLAUDE_VERSION_MATCH_REGEX`) — is at least 4.
pub(crate) fn is_claude_4_plus(m: &str) -> bool {
    if m == "sonnet" || m == "opus" {
        return true;
    }
    let claude =
        crate::run::llm::models::in_anthropic_table(m) || ["sonnet", "opus", "haiku"].iter().any(|s| m.contains(s));
    if !claude {
        return false;
    }
    let b = m.as_bytes();
    for i in 0..b.len().saturating_sub(1) {
        if matches!(b[i], b'-' | b'_' | b' ') && b[i + 1].is_ascii_digit() {
            let major = f64::from(b[i + 1] - b'0');
            let minor = match (b.get(i + 2), b.get(i + 3)) {
                (Some(b'.'), Some(b'0')) => 0.0,
                (Some(b'.'), Some(b'5')) => 0.5,
                _ => 0.0,
            };
            return major + minor >= 4.0;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clines_next_gen_families() {
        for m in [
            "claude-sonnet-4-5",
            "claude-opus-4-1-20250805",
            "anthropic/claude-sonnet-4.5",
            "claude-haiku-4-5",
            "claude-fable-5",
            "claude-fable-5:1m",
            "sonnet",
            "gpt-5",
            "openai/gpt-5.1-codex",
            "gpt-oss-120b",
            "deepseek-chat",
            "deepseek-reasoner",
            "deepseek/deepseek-v3.2-exp",
            "moonshotai/kimi-k2-instruct",
            "gemini-2.5-pro",
            "google/gemini-3-pro-preview",
            "x-ai/grok-4",
            "MiniMax-M2",
        ] {
            assert!(is_next_gen_family(m), "{m}");
        }
        for m in [
            "claude-3-7-sonnet-20250219",
            "claude-3-5-haiku",
            "gpt-4.1",
            "gpt-4o",
            "qwen3-coder:30b",
            "qwen/qwen3-coder",
            "deepseek-v3.2-speciale",
            "llama3.1",
            "claude-test",
        ] {
            assert!(!is_next_gen_family(m), "{m}");
        }
    }

    #[test]
    fn auto_is_xml_for_ollama_and_explicit_modes_win() {
        assert!(ToolCalls::Auto.native(Provider::Anthropic, "claude-sonnet-4-5"));
        assert!(ToolCalls::Auto.native(Provider::OpenAi, "gpt-5"));
        assert!(ToolCalls::Auto.native(Provider::Anthropic, "claude-fable-5"));
        assert!(!ToolCalls::Auto.native(Provider::Ollama, "gpt-oss:20b"));
        assert!(!ToolCalls::Auto.native(Provider::OpenAi, "gpt-4.1"));
        // No native variant of Cline's takes it, so Cline sends it XML (the generic prompt).
        assert!(!ToolCalls::Auto.native(Provider::OpenAi, "gpt-5-chat-latest"));
        assert!(ToolCalls::Auto.native(Provider::OpenAi, "gpt-5.1"));
        assert!(ToolCalls::Native.native(Provider::Ollama, "qwen3"));
        assert!(!ToolCalls::Xml.native(Provider::Anthropic, "claude-sonnet-4-5"));
        assert_eq!(ToolCalls::parse("auto"), Some(ToolCalls::Auto));
        assert_eq!(ToolCalls::parse("json"), None);
    }
}
