//! The one registry of providers: each is one [`ProviderDecl`] in [`PROVIDERS`] — its name and
//! aliases, default base URL and model, the variable its key is read from (and so withheld from
//! children and masked in everything shown), when a key is required, and whether Cline counts
//! it among its "next-gen" providers. Every consumer reads it here: [`Provider`]'s names and
//! defaults, `run/mod.rs` (which provider, URL and key a live run uses), `llm/http.rs` (where
//! a 401's key came from), `ui/redact.rs` ([`KEY_VARS`]), `prompt/system.rs` and
//! `native/mode.rs` (Cline's next-gen providers).
//!
//! A new provider: a variant of [`Provider`], one entry here, and, for a wire format not yet
//! spoken, its module in `llm/providers/` (request and decoder).

use super::Provider;

/// One provider, declared once.
#[derive(Debug)]
pub(crate) struct ProviderDecl {
    /// Which one (its wire format: `super::build_request`, `super::Decoder`).
    pub provider: Provider,
    /// The name on the command line, in saved tasks and in messages.
    pub name: &'static str,
    /// Other `--provider` values meaning it.
    pub aliases: &'static [&'static str],
    /// The base URL without `--base-url`.
    pub default_base_url: &'static str,
    /// A variable giving the base URL when `--base-url` is not given.
    pub base_url_var: Option<&'static str>,
    /// The model without `--model`.
    pub default_model: &'static str,
    /// The variable the key is read from; `None`: it needs no key.
    pub key_var: Option<&'static str>,
    /// Where a key is required: every base URL (`Some("")`), base URLs whose host is this one
    /// or under it ([`ProviderDecl::key_required`]), or none (`None`: a key is sent when set).
    pub key_required_at: Option<&'static str>,
    /// What a run without its required key is told.
    pub missing_key: &'static str,
    /// One of Cline's next-gen providers (`isNextGenModelProvider`): next-gen prompt variants
    /// and, with `--tool-calls auto`, native tool calls for next-gen models.
    pub next_gen: bool,
    /// Whether its key, set alone, chooses it without `--provider`.
    pub chosen_by_key: bool,
}

impl ProviderDecl {
    /// Whether `base_url` needs this provider's key: every URL (`Some("")`), or one whose host is
    /// the one named or under it (`api.openai.com`, `ollama.com`; not `ollama.company.lan`).
    pub(crate) fn key_required(&self, base_url: &str) -> bool {
        self.key_required_at.is_some_and(|at| at.is_empty() || super::host_is(base_url, at))
    }
}

/// The providers; without `--provider`, the first chosen by its key whose key variable is set is
/// used, else OpenAI-compatible.
pub(crate) const PROVIDERS: &[ProviderDecl] = &[
    ProviderDecl {
        provider: Provider::Anthropic,
        name: "anthropic",
        aliases: &[],
        default_base_url: "https://api.anthropic.com",
        // As the Anthropic SDKs and Claude Code read it: without /v1.
        base_url_var: Some("ANTHROPIC_BASE_URL"),
        // Cline's `anthropicDefaultModelId`.
        default_model: "claude-sonnet-5",
        key_var: Some("ANTHROPIC_API_KEY"),
        key_required_at: Some(""),
        missing_key: "ANTHROPIC_API_KEY is not set; export your key, or choose another provider with --provider openai|ollama",
        next_gen: true,
        chosen_by_key: true,
    },
    ProviderDecl {
        provider: Provider::OpenAi,
        name: "openai",
        // `openai-native`: also when the base URL is not api.openai.com, its requests are those
        // of Cline's `openai-native` handler (`ApiConfig::openai_native`, [`NATIVE_OPENAI`]).
        aliases: &["openai-compatible", NATIVE_OPENAI],
        default_base_url: "https://api.openai.com/v1",
        base_url_var: Some("OPENAI_BASE_URL"),
        default_model: "gpt-4.1",
        key_var: Some("OPENAI_API_KEY"),
        key_required_at: Some("api.openai.com"),
        missing_key: "OPENAI_API_KEY is not set; export your key, or point --base-url at a local OpenAI-compatible server (which needs none)",
        next_gen: true,
        chosen_by_key: true,
    },
    // OpenRouter speaks OpenAI's wire format: its own URL and key variable (Cline's `openrouter`
    // provider, its CLI's `-P openrouter`).
    ProviderDecl {
        provider: Provider::OpenAi,
        name: "openrouter",
        aliases: &[],
        default_base_url: "https://openrouter.ai/api/v1",
        base_url_var: None,
        // Cline's `openRouterDefaultModelId`.
        default_model: "anthropic/claude-sonnet-5",
        key_var: Some("OPENROUTER_API_KEY"),
        key_required_at: Some("openrouter.ai"),
        missing_key: "OPENROUTER_API_KEY is not set; export your OpenRouter key, or choose another provider with --provider anthropic|openai|ollama",
        next_gen: true,
        chosen_by_key: true,
    },
    ProviderDecl {
        provider: Provider::Ollama,
        name: "ollama",
        aliases: &[],
        default_base_url: "http://127.0.0.1:11434",
        base_url_var: None,
        default_model: "qwen2.5-coder:7b",
        // Sent as a bearer token when set, as Cline's `ollamaApiKey` (an authenticated server,
        // Ollama's own cloud API at ollama.com, which needs one); a local server needs none, so
        // the key does not choose Ollama by itself.
        key_var: Some("OLLAMA_API_KEY"),
        key_required_at: Some("ollama.com"),
        missing_key: "OLLAMA_API_KEY is not set; export your Ollama key (ollama.com's API needs one), or point --base-url at a local Ollama server (which needs none)",
        next_gen: false,
        chosen_by_key: false,
    },
];

/// The `--provider` name that says the OpenAI-compatible base URL speaks OpenAI's own API (as
/// `api.openai.com` does: Cline's `openai-native` handler, the Responses API for its models).
pub(crate) const NATIVE_OPENAI: &str = "openai-native";

/// The provider used when `--provider` is not given and no declared key variable is set.
pub(crate) const FALLBACK: Provider = Provider::OpenAi;

/// The declaration of `p`'s wire format (the first that speaks it).
pub(crate) fn decl(p: Provider) -> &'static ProviderDecl {
    PROVIDERS.iter().find(|d| d.provider == p).expect("every Provider is declared in PROVIDERS")
}

/// The provider a server named by `--base-url` without `--provider` is: the one whose own API
/// is at that host (`api.anthropic.com`, `openrouter.ai`, `api.openai.com`); Anthropic's wire
/// format for an Anthropic-compatible endpoint — a path with an `/anthropic` segment (z.ai,
/// DeepSeek, Moonshot, MiniMax), or `anthropic_base_url` (`$ANTHROPIC_BASE_URL`) or a URL under
/// it; else an OpenAI-compatible one ([`FALLBACK`]). Never the first whose key is set,
/// which sent the Anthropic key to whatever server the URL named.
pub(crate) fn by_url(base_url: &str, anthropic_base_url: Option<&str>) -> &'static ProviderDecl {
    let host = super::host_of(base_url);
    if let Some(home) =
        PROVIDERS.iter().find(|d| d.chosen_by_key && !host.is_empty() && super::host_of(d.default_base_url) == host)
    {
        return home;
    }
    let path = base_url.split_once("://").map_or(base_url, |(_, r)| r).split(['?', '#']).next().unwrap_or("");
    let anthropic_path = path.split('/').skip(1).any(|segment| segment.eq_ignore_ascii_case("anthropic"));
    // `$ANTHROPIC_BASE_URL` itself, or a URL under it: scheme, host, port and path (a host alone
    // would take another port of the same machine — llama.cpp beside a proxy — for it).
    let anthropic_url = anthropic_base_url.map(|u| u.trim_end_matches('/')).is_some_and(|u| {
        let given = base_url.trim_end_matches('/');
        !u.is_empty() && given.get(..u.len()).is_some_and(|p| p.eq_ignore_ascii_case(u)) && {
            let rest = &given[u.len()..];
            rest.is_empty() || rest.starts_with('/')
        }
    });
    match anthropic_path || anthropic_url {
        true => decl(Provider::Anthropic),
        false => FALLBACK.decl(),
    }
}

/// The provider a `--provider` value (or a saved task's provider) names.
pub(crate) fn by_name(s: &str) -> Option<Provider> {
    named(s).map(|d| d.provider)
}

/// The declaration a `--provider` value (or a saved task's provider) names.
pub(crate) fn named(s: &str) -> Option<&'static ProviderDecl> {
    PROVIDERS.iter().find(|d| d.name == s || d.aliases.contains(&s))
}

/// Whether `name` (a provider's name) is one of Cline's next-gen providers.
pub(crate) fn is_next_gen(name: &str) -> bool {
    by_name(name).is_some_and(|p| decl(p).next_gen)
}

/// The variables keys are read from: withheld from every child, their values masked.
#[cfg(test)]
pub(crate) const KEY_VARS: &[&str] = &key_vars::<{ key_var_count() }>();

#[cfg(test)]
const fn key_var_count() -> usize {
    let (mut i, mut n) = (0, 0);
    while i < PROVIDERS.len() {
        if PROVIDERS[i].key_var.is_some() {
            n += 1;
        }
        i += 1;
    }
    n
}

#[cfg(test)]
const fn key_vars<const N: usize>() -> [&'static str; N] {
    let mut out = [""; N];
    let (mut i, mut n) = (0, 0);
    while i < PROVIDERS.len() {
        if let Some(v) = PROVIDERS[i].key_var {
            out[n] = v;
            n += 1;
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run without `--model` asks a model Cline's table knows (its facts, its prices), and on
    /// Anthropic Cline's own default (`anthropicDefaultModelId`), not a retired one.
    #[test]
    fn the_default_models_are_in_clines_table() {
        assert_eq!(decl(Provider::Anthropic).default_model, "claude-sonnet-5");
        for d in PROVIDERS.iter().filter(|d| d.provider != Provider::Ollama) {
            let found = crate::run::llm::models::lookup(d.provider, d.default_model);
            assert!(found.facts.known, "{}: {}", d.name, d.default_model);
        }
    }

    /// A key is required at the host named, or under it, not wherever its name appears.
    #[test]
    fn a_url_given_without_a_provider_is_the_provider_at_its_host_else_openai_compatible() {
        for (url, name) in [
            ("https://api.anthropic.com", "anthropic"),
            ("https://openrouter.ai/api/v1", "openrouter"),
            ("https://api.openai.com/v1", "openai"),
            ("https://api.groq.com/openai/v1", "openai"),
            ("http://127.0.0.1:8080/v1", "openai"),
            ("https://api.anthropic.com.evil.example/v1", "openai"),
            ("", "openai"),
            // Anthropic-compatible endpoints.
            ("https://api.z.ai/api/anthropic", "anthropic"),
            ("https://api.deepseek.com/anthropic", "anthropic"),
            ("https://gateway.example/v1?route=anthropic", "openai"),
            ("https://anthropic.example/v1", "openai"),
        ] {
            assert_eq!(by_url(url, None).name, name, "{url}");
        }
        // $ANTHROPIC_BASE_URL itself, or under it; not another path or port of its host.
        let gateway = Some("https://llm.corp.example/claude/");
        assert_eq!(by_url("https://llm.corp.example/claude", gateway).name, "anthropic");
        assert_eq!(by_url("https://llm.corp.example/claude/v1", gateway).name, "anthropic");
        assert_eq!(by_url("https://llm.corp.example/claudette", gateway).name, "openai");
        assert_eq!(by_url("https://llm.corp.example/v1", gateway).name, "openai");
        assert_eq!(by_url("https://other.example/v1", gateway).name, "openai");
        let proxy = Some("http://localhost:4000");
        assert_eq!(by_url("http://localhost:8080/v1", proxy).name, "openai", "llama.cpp beside a proxy");
        assert_eq!(by_url("http://[::1]:8080/v1", Some("http://[::2]:4000")).name, "openai");
    }

    #[test]
    fn a_key_is_required_by_host() {
        let ollama = named("ollama").unwrap();
        for needs in
            ["https://ollama.com", "https://ollama.com/", "https://OLLAMA.com:443/api", "https://eu.ollama.com"]
        {
            assert!(ollama.key_required(needs), "{needs}");
        }
        for local in [
            "http://127.0.0.1:11434",
            "http://ollama.company.lan:11434",
            "https://my-ollama.com",
            "http://x/ollama.com",
        ] {
            assert!(!ollama.key_required(local), "{local}");
        }
        assert!(named("openai").unwrap().key_required("https://api.openai.com/v1"));
        assert!(!named("openai").unwrap().key_required("http://127.0.0.1:8080/v1"));
        assert!(named("anthropic").unwrap().key_required("http://127.0.0.1:9/"));
    }

    #[test]
    fn every_provider_is_declared_once_and_its_key_variable_is_masked() {
        for d in PROVIDERS {
            let names = PROVIDERS.iter().flat_map(|e| std::iter::once(&e.name).chain(e.aliases));
            assert_eq!(names.filter(|n| **n == d.name).count(), 1, "{}", d.name);
            assert_eq!(named(d.name).map(|n| (n.name, n.default_base_url)), Some((d.name, d.default_base_url)));
        }
        for p in [Provider::Anthropic, Provider::OpenAi, Provider::Ollama] {
            assert_eq!(by_name(decl(p).name), Some(p));
        }
        assert_eq!(
            named("openrouter").map(|d| (d.default_base_url, d.key_var)),
            Some(("https://openrouter.ai/api/v1", Some("OPENROUTER_API_KEY")))
        );
        assert_eq!(KEY_VARS, ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "OLLAMA_API_KEY"]);
        assert_eq!(crate::run::ui::redact::KEY_VARS, KEY_VARS);
        assert_eq!(by_name("openrouter"), Some(Provider::OpenAi));
        assert_eq!(by_name(NATIVE_OPENAI), Some(Provider::OpenAi));
        assert!(is_next_gen("openai") && !is_next_gen("ollama") && !is_next_gen("replay"));
    }
}
