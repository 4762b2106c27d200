//! OpenAI-compatible Chat Completions: `POST {base}/chat/completions` with `stream: true` and
//! `stream_options.include_usage` (OpenAI, OpenRouter, vLLM, llama.cpp server, LM Studio).

use serde_json::{json, Value};

use super::{json_error_message, ApiConfig, HttpRequest};
use crate::run::llm::sse::SseEvent;
use crate::run::llm::tool_specs;
use crate::run::llm::types::{ApiError, BlockDelta, Delta, Message, StopReason, Usage};

/// Whether Cline's `OpenAiHandler` treats the model as a reasoning model: its id contains
/// `o1`, `o3`, `o4` or `gpt-5`, and not `chat`.
pub(crate) fn is_reasoning_family(model: &str) -> bool {
    ["o1", "o3", "o4", "gpt-5"].iter().any(|p| model.contains(p)) && !model.contains("chat")
}

/// OpenRouter-style ids whose prompt Cline marks for caching itself (`openrouter-stream.ts`,
/// `needsExplicitCacheControl`); other providers cache on their own.
fn needs_cache_marks(model: &str) -> bool {
    const EXPLICIT: &[&str] = &[
        "deepseek/deepseek-v3.2",
        "qwen/qwen-plus",
        "qwen/qwen3-max",
        "qwen/qwen3.6-plus",
        "qwen/qwen3.7-max",
        "qwen/qwen3-coder-plus",
        "qwen/qwen3-coder-flash",
    ];
    model.starts_with("anthropic/") || model.starts_with("minimax/") || EXPLICIT.contains(&model)
}

/// Builds the request as Cline's `OpenAiHandler.createMessage` does: `temperature: 0` (but
/// what Cline's own handler of the vendor sends for a few vendors' models: [`temperature`]) and
/// no `max_tokens`; for the reasoning families the system prompt as role `developer`, no
/// temperature and `reasoning_effort` (Cline's default `medium`); tools with
/// `tool_choice: "auto"` and `parallel_tool_calls: false` (`getOpenAIToolParams`). An explicit
/// `--max-tokens` goes as `max_tokens`, or `max_completion_tokens` for a reasoning model (the
/// API refuses `max_tokens` there). OpenRouter-style Anthropic ids get Cline's cache marks.
///
/// On OpenAI's own API ([`ApiConfig::openai_native`]) a model of Cline's table gets, instead,
/// what Cline's `OpenAiNativeHandler.createCompletionStream` sends: [`native_settings`].
pub(crate) fn request(cfg: &ApiConfig, system: &str, messages: &[Message]) -> HttpRequest {
    let native = cfg.openai_native && cfg.facts.known;
    let reasoning = is_reasoning_family(&cfg.model);
    let form = super::ChatForm { ollama: false, strings: cfg.string_contents, openai_native: cfg.openai_native };
    let mut msgs = super::chat_messages(system, messages, form);
    if native {
        msgs[0]["role"] = Value::from(cfg.facts.system_role.as_deref().unwrap_or("system"));
    } else if reasoning && !super::is_openrouter(&cfg.base_url) {
        msgs[0]["role"] = json!("developer");
    }
    if wants_reasoning_back(&cfg.model) {
        with_reasoning_content(&mut msgs, messages);
    }
    // Cache marks need lists of parts; a server taking strings only gets none.
    if needs_cache_marks(&cfg.model) && !cfg.string_contents && !native {
        mark_for_cache(&mut msgs, system);
    }
    let mut body = json!({"model": cfg.model, "messages": msgs});
    if let Some(model) = openrouter_1m(cfg) {
        // Cline's `:1m` ids are its own: OpenRouter gets the model's id, routed only to the
        // providers that serve its 1M window (`openrouter-stream.ts`), which the run's facts
        // assume.
        body["model"] = json!(model);
        body["provider"] = json!({"order": ["anthropic", "google-vertex/global"], "allow_fallbacks": false});
    }
    if native {
        native_settings(cfg, &mut body);
    } else {
        compatible_settings(cfg, reasoning, &mut body);
    }
    if cfg.no_stream {
        // The whole reply at once (OpenAI would not stream the model): its usage comes with it.
        body["stream"] = json!(false);
    } else {
        body["stream"] = json!(true);
        body["stream_options"] = json!({"include_usage": true});
    }
    streamed_post(cfg, "chat/completions", &body)
}

/// Cline's OpenRouter ids of Claude with its 1M window (`shared/api.ts`,
/// `openRouterClaude…1mModelId`): at OpenRouter, the id without its `:1m`.
fn openrouter_1m(cfg: &ApiConfig) -> Option<&str> {
    const IDS: [&str; 8] = [
        "anthropic/claude-sonnet-4:1m",
        "anthropic/claude-sonnet-4.5:1m",
        "anthropic/claude-sonnet-4.6:1m",
        "anthropic/claude-sonnet-5:1m",
        "anthropic/claude-opus-4.6:1m",
        "anthropic/claude-opus-4.7:1m",
        "anthropic/claude-opus-4.8:1m",
        "anthropic/claude-fable-5:1m",
    ];
    let model = cfg.model.as_str();
    (super::is_openrouter(&cfg.base_url) && IDS.contains(&model)).then(|| &model[..model.len() - ":1m".len()])
}

/// Whether the model's own API refuses a conversation in which a reply that made tool calls
/// comes back without its `reasoning_content`: DeepSeek's models (Cline's `deepSeekModels`;
/// 400, "The reasoning_content in the thinking mode must be passed back to the API",
/// api-docs.deepseek.com, "Thinking Mode") and Moonshot's Kimi models that think, all but the
/// `…-preview` ones (400, "thinking is enabled but reasoning_content is missing in assistant
/// tool call message at index N", Moonshot's K2 thinking guide). Their ids as those APIs name
/// them; a gateway's `vendor/…` id is not theirs.
fn wants_reasoning_back(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    crate::run::llm::models::is_deepseek_api_model(&m) || (m.starts_with("kimi-") && !m.ends_with("-preview"))
}

/// Each assistant message of `msgs` that made tool calls gets the reasoning it came with, as
/// `reasoning_content`, in every later request ([`wants_reasoning_back`]): its reasoning parts
/// joined by newlines, as Cline's `addReasoningContent` joins them; empty when there was none,
/// which the APIs take. Cline sends it for `deepseek-reasoner` only, and only after the last
/// user message — in a native task each tool turn's own, so never — and so fails from the
/// second request of a native task with these models. `msgs` holds one value per message of
/// `messages` that is the assistant's, in order.
fn with_reasoning_content(msgs: &mut [Value], messages: &[Message]) {
    use crate::run::llm::types::{Part, Role};
    let replies = messages.iter().filter(|m| m.role == Role::Assistant);
    for (v, m) in msgs.iter_mut().filter(|v| v["role"] == "assistant").zip(replies) {
        if m.tool_uses().next().is_none() {
            continue;
        }
        let thinking: Vec<&str> = m
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Thinking { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        v["reasoning_content"] = Value::String(thinking.join("\n"));
    }
}

/// A streamed `POST {base}/PATH` of `body` to an OpenAI-style server: JSON in, server-sent
/// events out, the key (if any) as a bearer token (as `api-key` at Azure OpenAI: [`azure_url`]).
/// Chat Completions and the Responses API.
pub(crate) fn streamed_post(cfg: &ApiConfig, path: &str, body: &Value) -> HttpRequest {
    let accept = if cfg.no_stream { "application/json" } else { "text/event-stream" };
    let mut headers =
        vec![("content-type".to_string(), "application/json".to_string()), ("accept".to_string(), accept.to_string())];
    let azure = azure_url(&cfg.base_url, &cfg.model, path);
    if let Some(k) = &cfg.api_key {
        headers.push(match azure {
            Some(_) => ("api-key".to_string(), k.clone()),
            None => ("authorization".to_string(), format!("Bearer {k}")),
        });
    }
    HttpRequest {
        url: azure.unwrap_or_else(|| format!("{}/{path}", cfg.base_url.trim_end_matches('/'))),
        headers,
        body: body.to_string().into_bytes(),
    }
}

/// Cline's default `azureApiVersion` (`azureOpenAiDefaultApiVersion`).
const AZURE_API_VERSION: &str = "2024-08-01-preview";

/// Where Cline's `AzureOpenAI` client posts `path`, when `base_url` is Azure OpenAI's: its host
/// under `azure.com` or `azure.us` (for a model other than DeepSeek's, which Azure serves in
/// OpenAI's own shape), or any base URL with an `api-version` in its query (Cline's
/// `azureApiVersion` setting). The model names the deployment, `…/deployments/MODEL/PATH`,
/// unless the base URL names one or is Azure's `v1` API; the `api-version` is the base URL's,
/// else Cline's default (none for `v1`, which takes none). The key then goes as `api-key`.
fn azure_url(base_url: &str, model: &str, path: &str) -> Option<String> {
    let (base, query) = match base_url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (base_url, None),
    };
    let versioned = query.is_some_and(|q| q.split('&').any(|kv| kv.starts_with("api-version=")));
    let host = super::host_of(base);
    let azure_host = host.ends_with(".azure.com") || host.ends_with(".azure.us");
    let azure_model = azure_host && !model.to_ascii_lowercase().contains("deepseek");
    if !versioned && !azure_model {
        return None;
    }
    let base = base.trim_end_matches('/');
    let v1 = base.ends_with("/v1");
    let mut url = base.to_string();
    if !v1 && !base.contains("/deployments/") {
        url.push_str("/deployments/");
        // A deployment's name is letters, digits, `-`, `_` and `.`; anything else is escaped.
        for b in model.bytes() {
            match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => url.push(b as char),
                _ => url.push_str(&format!("%{b:02X}")),
            }
        }
    }
    url.push('/');
    url.push_str(path);
    match query {
        Some(q) => {
            url.push('?');
            url.push_str(q);
        }
        None if !v1 => {
            url.push_str("?api-version=");
            url.push_str(AZURE_API_VERSION);
        }
        None => {}
    }
    Some(url)
}

/// Cline's OpenAI-compatible handler's settings (see [`request`]).
fn compatible_settings(cfg: &ApiConfig, reasoning: bool, body: &mut Value) {
    // Cline's OpenRouter handler (`openrouter-stream.ts`) is its own: a temperature for every
    // model, `max_tokens`, its own way to ask for reasoning ([`openrouter_reasoning`]).
    let openrouter = super::is_openrouter(&cfg.base_url);
    if !reasoning || openrouter {
        if let Some(t) = temperature(&cfg.model) {
            body["temperature"] = t;
        }
    }
    // DeepSeek's own API caps a reply of its chat model at 4K tokens unless told more; Cline's
    // `deepseek.ts` sends the table's limit (8,000). Its thinking models' own defaults are
    // larger than their table's: they get none.
    let m = cfg.model.to_ascii_lowercase();
    let deepseek_chat = crate::run::llm::models::is_deepseek_api_model(&m)
        && !m.contains("deepseek-reasoner")
        && !m.starts_with("deepseek-v4-");
    let limit = cfg.max_tokens.or(cfg.facts.max_output().filter(|_| deepseek_chat));
    match (limit, reasoning && !openrouter) {
        (Some(n), false) => body["max_tokens"] = json!(n),
        (Some(n), true) => body["max_completion_tokens"] = json!(n),
        (None, _) => {}
    }
    if openrouter {
        openrouter_reasoning(cfg, body);
        openrouter_claude_thinking(cfg, openrouter_1m(cfg).unwrap_or(&cfg.model), body);
        openrouter_model_settings(cfg, body);
    } else {
        // Cline's default for the reasoning families is medium, and `none` sends none; another
        // model gets the effort only when it is asked for.
        match (cfg.reasoning_effort.as_deref(), reasoning) {
            (Some("none"), _) if crate::run::llm::models::takes_effort_none(&cfg.model) => {
                body["reasoning_effort"] = json!("none")
            }
            (Some("none"), _) | (None, false) => {}
            (Some(effort), _) => body["reasoning_effort"] = json!(effort),
            (None, true) => body["reasoning_effort"] = json!("medium"),
        }
    }
    if let Some(tools) = &cfg.tools {
        body["tools"] = tool_specs::openai(tools);
        body["tool_choice"] = json!("auto");
        if !refuses_parallel_tool_calls(&cfg.model) {
            // Cline's OpenRouter handler: `getOpenAIToolParams(tools, enableParallelToolCalling)`
            // (`openrouter-stream.ts`); its generic one leaves the second argument out (false).
            let parallel = tools.parallel && super::is_openrouter(&cfg.base_url);
            body["parallel_tool_calls"] = json!(parallel);
        }
    }
}

/// How Cline's OpenRouter handler asks for reasoning: `reasoning: {effort}` when
/// `--reasoning-effort` names one and Cline deems that the model takes one
/// (`supportsReasoningEffortForModel`; no default effort, no OpenAI `reasoning_effort`), and
/// `include_reasoning` unless the effort is `none` or the model is one Cline asks for none
/// (`shouldSkipReasoningForModel`: grok-4, devstral). A Claude model's own ways follow
/// ([`openrouter_claude_thinking`]).
fn openrouter_reasoning(cfg: &ApiConfig, body: &mut Value) {
    let id = cfg.model.to_ascii_lowercase();
    const TAKE_EFFORT: [&str; 13] = [
        "deepseek", "gemini", "glm", "gpt", "kimi", "mimo", "minimax", "moonshot", "/o", "qwen", "z-ai", "zai", "grok",
    ];
    let takes = id.starts_with('o') || TAKE_EFFORT.iter().any(|p| id.contains(p));
    let effort = cfg.reasoning_effort.as_deref().filter(|_| takes);
    if let Some(e) = effort.filter(|e| *e != "none") {
        body["reasoning"] = json!({"effort": e});
    }
    let skipped = cfg.model.contains("grok-4") || cfg.model.contains("devstral");
    body["include_reasoning"] = json!(!skipped && effort != Some("none"));
}

/// Cline's OpenRouter ids of the Claude models that think with a budget (`openrouter-stream.ts`).
const OPENROUTER_BUDGETED_CLAUDE: [&str; 16] = [
    "anthropic/claude-haiku-4.5",
    "anthropic/claude-4.5-haiku",
    "anthropic/claude-sonnet-5",
    "anthropic/claude-5-sonnet",
    "anthropic/claude-sonnet-4.6",
    "anthropic/claude-4.6-sonnet",
    "anthropic/claude-sonnet-4.5",
    "anthropic/claude-4.5-sonnet",
    "anthropic/claude-sonnet-4",
    "anthropic/claude-opus-4.1",
    "anthropic/claude-opus-4",
    "anthropic/claude-3.7-sonnet",
    "anthropic/claude-3.7-sonnet:beta",
    "anthropic/claude-3.7-sonnet:thinking",
    "anthropic/claude-3-7-sonnet",
    "anthropic/claude-3-7-sonnet:beta",
];

/// How a Claude model thinks at OpenRouter, as Cline's OpenRouter handler asks it
/// (`openrouter-stream.ts`), where the Anthropic API's `thinking` is OpenRouter's `reasoning`:
/// one that thinks adaptively does at the effort Anthropic's would
/// ([`super::anthropic::adaptive_effort`]) — `reasoning: {enabled: true}`, the effort as
/// `verbosity`, and `include_reasoning` saying whether it thinks; one of Cline's models that think
/// with a budget does with `--thinking-budget`'s, as `reasoning: {max_tokens}`, and without a
/// temperature (extended thinking refuses one but 1). `id` is the model's id at OpenRouter.
fn openrouter_claude_thinking(cfg: &ApiConfig, id: &str, body: &mut Value) {
    let Some(fields) = body.as_object_mut() else { return };
    if super::anthropic::thinks_adaptively(id) {
        // The effort goes as Anthropic's, not as OpenAI's `reasoning_effort`.
        fields.remove("reasoning_effort");
        let effort = super::anthropic::adaptive_effort(cfg);
        fields.insert("include_reasoning".into(), json!(effort.is_some()));
        if let Some(effort) = effort {
            fields.insert("reasoning".into(), json!({"enabled": true}));
            fields.insert("verbosity".into(), json!(effort));
        }
        return;
    }
    // Nor is an effort sent for one (Cline's `supportsReasoningEffortForModel` is false for
    // Claude): with `temperature: 0` it would ask a thinking Claude for what it refuses.
    if id.starts_with("anthropic/") {
        fields.remove("reasoning_effort");
    }
    if let (Some(mut budget), true) = (cfg.thinking_budget.filter(|&b| b > 0), OPENROUTER_BUDGETED_CLAUDE.contains(&id))
    {
        fields.remove("temperature");
        fields.remove("reasoning_effort");
        // Anthropic refuses a `max_tokens` not above the budget, which OpenRouter passes on
        // (Cline sends no `max_tokens` here; `--max-tokens` does): raised as on Anthropic's
        // own wire, never past the model's maximum, where the budget gives way.
        if let Some(max) = fields.get("max_tokens").and_then(Value::as_u64).map(|m| m as u32) {
            if budget >= max {
                let mut raised = budget.saturating_add(max);
                if let Some(cap) = cfg.facts.max_output().filter(|_| cfg.facts.known) {
                    raised = raised.min(cap);
                }
                budget = budget.min(raised.saturating_sub(1));
                fields.insert("max_tokens".into(), json!(raised));
            }
        }
        fields.insert("reasoning".into(), json!({"max_tokens": budget}));
    }
}

/// Cline's `OPENROUTER_PROVIDER_PREFERENCES` (`shared/api.ts`): the providers OpenRouter may
/// route these models to, in order, and no others (quantised or weak at tool calls).
const OPENROUTER_PROVIDER_ORDER: [(&str, &[&str]); 20] = {
    const QWEN: &[&str] = &["nebius", "baseten", "fireworks", "together", "deepinfra"];
    const GLM: &[&str] = &["z-ai", "novita", "baseten", "fireworks", "chutes"];
    [
        ("moonshotai/kimi-k2:exacto", &["groq", "moonshotai"]),
        ("z-ai/glm-4.6:exacto", &["z-ai", "novita"]),
        ("deepseek/deepseek-v3.1-terminus:exacto", &["novita", "deepinfra"]),
        ("qwen/qwen3-coder:exacto", &["baseten"]),
        ("openai/gpt-oss-120b:exacto", &["groq", "novita"]),
        ("moonshotai/kimi-k2", &["groq", "fireworks", "baseten", "parasail", "novita", "deepinfra"]),
        ("qwen/qwen3-coder", QWEN),
        ("qwen/qwen3-235b-a22b-thinking-2507", QWEN),
        ("qwen/qwen3-235b-a22b-07-25", QWEN),
        ("qwen/qwen3-30b-a3b-thinking-2507", QWEN),
        ("qwen/qwen3-30b-a3b-instruct-2507", QWEN),
        ("qwen/qwen3-30b-a3b:free", QWEN),
        ("qwen/qwen3-next-80b-a3b-thinking", QWEN),
        ("qwen/qwen3-next-80b-a3b-instruct", QWEN),
        ("qwen/qwen3-max", QWEN),
        ("deepseek/deepseek-v3.2-exp", &["deepseek", "novita", "fireworks", "nebius"]),
        ("z-ai/glm-4.6", GLM),
        ("z-ai/glm-4.5v", GLM),
        ("z-ai/glm-4.5", GLM),
        ("z-ai/glm-4.5-air", GLM),
    ]
};

/// What Cline's OpenRouter handler (`openrouter-stream.ts`) sends for some models beyond the
/// Claude ones: the providers of [`OPENROUTER_PROVIDER_ORDER`] (`provider: {order,
/// allow_fallbacks: false}`); DeepSeek's recommended `temperature: 0.7`, `top_p: 0.95` to the
/// R1 and QwQ models; and at most 8,192 output tokens to Gemini's Flash models
/// (`GEMINI_FLASH_MAX_OUTPUT_TOKENS`, unless `--max-tokens` says otherwise).
fn openrouter_model_settings(cfg: &ApiConfig, body: &mut Value) {
    let id = cfg.model.as_str();
    if let Some((_, order)) = OPENROUTER_PROVIDER_ORDER.iter().find(|(m, _)| *m == id) {
        body["provider"] = json!({"order": order, "allow_fallbacks": false});
    }
    if id.starts_with("deepseek/deepseek-r1")
        || ["perplexity/sonar-reasoning", "qwen/qwq-32b:free", "qwen/qwq-32b"].contains(&id)
    {
        body["temperature"] = json!(0.7);
        body["top_p"] = json!(0.95);
    }
    let m = id.to_ascii_lowercase();
    if (m.starts_with("google/gemini") || m.starts_with("gemini-")) && m.contains("flash") && cfg.max_tokens.is_none() {
        body["max_tokens"] = json!(8192);
    }
}

/// o1, o3 and o4 (the reasoning families before GPT-5): OpenAI refuses `parallel_tool_calls`
/// with them whatever its value ("Unsupported parameter: 'parallel_tool_calls' is not supported
/// with this model."), where Cline sends `false`; they make one call at a time anyway.
fn refuses_parallel_tool_calls(model: &str) -> bool {
    is_reasoning_family(&model.to_ascii_lowercase()) && !is_gpt5_family(model)
}

/// The temperature for a model that is not of the reasoning families (`None`: none at all):
/// Cline's OpenAI-compatible handler sends 0 to any, which some vendors' APIs refuse, so a
/// model of such a vendor gets what Cline's own handler for that vendor sends — Moonshot's Kimi
/// models their table's (`moonshot.ts`; `kimi-k2.5` refuses anything but 1), MiniMax's `MiniMax-…`
/// 1 (`minimax.ts`; its range is (0, 1]), Google's `gemini-…` 1 (`gemini.ts`, `?? 1`) and
/// OpenRouter's `google/gemini-3…` 1 (`openrouter-stream.ts`), and the Claude models that think
/// adaptively none (`openrouter-stream.ts`; Opus 4.7 refuses one; so do the Claude 5 models
/// newer than Cline's table).
fn temperature(model: &str) -> Option<Value> {
    let m = model.to_ascii_lowercase();
    if super::anthropic::thinks_adaptively(&m) {
        return None;
    }
    if let Some(t) = crate::run::llm::models::moonshot_temperature(&m) {
        return Some(js_number(t));
    }
    let one = ["minimax-", "gemini-", "google/gemini-3"].iter().any(|p| m.starts_with(p));
    Some(json!(if one { 1 } else { 0 }))
}

/// Cline's `openai-native` handler's Chat Completions settings, from the model's facts: the
/// system prompt's role (`systemRole`, else `system`, set by the caller), `reasoning_effort`
/// for a model that `supportsReasoningEffort` (`medium` unless given; `none` sends none), the
/// table's `temperature` when it has one (1 for the GPT-5 family, 0 for gpt-4.1 and gpt-4o), no
/// token limit unless `--max-tokens` gives one (as `max_completion_tokens`, which OpenAI takes
/// for every model), and tools with `parallel_tool_calls` true for the GPT-5 family
/// (`getOpenAIToolParams(tools, isGPT5ModelFamily(id))`).
fn native_settings(cfg: &ApiConfig, body: &mut Value) {
    let effort = cfg.reasoning_effort.as_deref().unwrap_or("medium");
    // Cline's table says gpt-5-chat-latest takes one; OpenAI refuses it ("Unsupported
    // parameter: 'reasoning.effort' is not supported with this model").
    let refuses = cfg.model.to_ascii_lowercase().starts_with("gpt-5-chat");
    let none_taken = effort == "none" && crate::run::llm::models::takes_effort_none(&cfg.model);
    if cfg.facts.supports_reasoning_effort && (effort != "none" || none_taken) && !refuses {
        body["reasoning_effort"] = Value::from(effort);
    }
    if let Some(t) = cfg.facts.temperature {
        body["temperature"] = js_number(t);
    }
    if let Some(n) = cfg.max_tokens {
        body["max_completion_tokens"] = Value::from(n);
    }
    if let Some(tools) = &cfg.tools {
        body["tools"] = tool_specs::openai(tools);
        body["tool_choice"] = Value::from("auto");
        if !refuses_parallel_tool_calls(&cfg.model) {
            body["parallel_tool_calls"] = Value::Bool(is_gpt5_family(&cfg.model));
        }
    }
}

/// `t` as JavaScript writes it: 1, not 1.0.
fn js_number(t: f64) -> Value {
    if t.fract() == 0.0 && t.abs() < 1e9 {
        Value::from(t as i64)
    } else {
        Value::from(t)
    }
}

/// Cline's `isGPT5ModelFamily`: the id contains `gpt-5` or `gpt5`.
pub(crate) fn is_gpt5_family(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    m.contains("gpt-5") || m.contains("gpt5")
}

/// Cline's OpenRouter cache marks: the system prompt as a text block with
/// `cache_control: ephemeral`, and the same mark on the last text part of the last two user
/// messages (a string becomes one text part).
fn mark_for_cache(msgs: &mut [Value], system: &str) {
    msgs[0]["content"] = json!([{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]);
    let users: Vec<usize> = msgs.iter().enumerate().filter(|(_, m)| m["role"] == "user").map(|(i, _)| i).collect();
    for &i in &users[users.len().saturating_sub(2)..] {
        if let Value::String(text) = &msgs[i]["content"] {
            msgs[i]["content"] = json!([{"type": "text", "text": text}]);
        }
        if let Some(parts) = msgs[i]["content"].as_array_mut() {
            if !parts.iter().any(|p| p["type"] == "text") {
                parts.push(json!({"type": "text", "text": "..."}));
            }
            if let Some(last) = parts.iter_mut().rev().find(|p| p["type"] == "text") {
                last["cache_control"] = json!({"type": "ephemeral"});
            }
        }
    }
}

/// Decoder state for one streamed completion.
#[derive(Default)]
pub(crate) struct Stream {
    done: bool,
    /// Whether a refusal's text began (it is marked once, at its start).
    refused: bool,
    /// A chunk came.
    started: bool,
    /// The completion's end came: a `finish_reason`, `[DONE]` or an error.
    ended: bool,
}

impl Stream {
    /// The streamed body ended: a completion begun with neither a `finish_reason` nor `[DONE]`
    /// (every server sends one or the other) was cut on the way — by a proxy, say — and what
    /// came is not the whole reply: asked again, rather than taken for one without a tool.
    pub(crate) fn finish(&mut self) -> Vec<Delta> {
        if !self.started || self.done || std::mem::replace(&mut self.ended, true) {
            return Vec::new();
        }
        let message = "the stream ended before the completion did (no finish_reason, no [DONE])".to_string();
        vec![Delta::Error(ApiError { status: None, message, retryable: true, retry_after: None })]
    }

    /// Handles one SSE event.
    pub(crate) fn event(&mut self, ev: &SseEvent) -> Vec<Delta> {
        let data = ev.data.trim();
        if self.done || data.is_empty() {
            return Vec::new();
        }
        if data == "[DONE]" {
            self.done = true;
            return Vec::new();
        }
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            if ev.event.as_deref() == Some("error") {
                // The server's own words, not JSON: a failure of the stream, worth another try.
                let message = format!("the stream failed: {data}");
                return vec![Delta::Error(ApiError { status: None, message, retryable: true, retry_after: None })];
            }
            return Vec::new();
        };
        // As the OpenAI SDK reads it: an `error` that is there and truthy (some gateways put
        // `"error": null` on every chunk); an `event: error` whatever its data.
        let truthy = |e: &Value| !matches!(e, Value::Null | Value::Bool(false)) && e != 0 && e != "";
        if v.get("error").is_some_and(truthy) || ev.event.as_deref() == Some("error") {
            self.ended = true;
            return vec![Delta::Error(stream_error(&v))];
        }
        self.started = true;
        let mut out = Vec::new();
        if let Some(choice) = v.pointer("/choices/0") {
            let delta = choice.get("delta").or_else(|| choice.get("message"));
            if let Some(d) = delta {
                // DeepSeek's and vLLM's `reasoning_content`, else OpenRouter's and newer vLLM's
                // `reasoning`: a server may send the same text under both names (vLLM's
                // compatibility), which is one reasoning, not two.
                let text = |key: &str| d.get(key).and_then(Value::as_str).filter(|s| !s.is_empty());
                if let Some(s) = text("reasoning_content").or_else(|| text("reasoning")) {
                    out.push(Delta::Reasoning(s.to_string()));
                }
                if let Some(s) = d.get("content").and_then(Value::as_str) {
                    if !s.is_empty() {
                        out.push(Delta::Text(s.to_string()));
                    }
                }
                // A refusal is the reply's text, marked as on the Responses API (dropped, as
                // Cline drops it, it left an empty reply that was asked again).
                if let Some(s) = d.get("refusal").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                    let mark = if std::mem::replace(&mut self.refused, true) { "" } else { "[Refusal] " };
                    out.push(Delta::Text(format!("{mark}{s}")));
                }
                // OpenRouter's reasoning objects, to be sent back with the reply (Gemini 3 and
                // Anthropic's thinking need theirs through tool calls).
                if let Some(details) = d.get("reasoning_details").and_then(Value::as_array).filter(|a| !a.is_empty()) {
                    out.push(Delta::Block(BlockDelta::ReasoningDetails(details.clone())));
                }
                for (pos, call) in d.get("tool_calls").and_then(Value::as_array).into_iter().flatten().enumerate() {
                    out.push(Delta::Block(tool_call(call, pos)));
                    // Google's thought signature of the call, which its API needs back.
                    if let Some(extra) = call.get("extra_content").filter(|e| e.is_object()) {
                        out.push(Delta::Block(BlockDelta::CallExtra {
                            index: call_index(call, pos),
                            extra: extra.clone(),
                        }));
                    }
                }
            }
            if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
                self.ended = true;
                out.push(Delta::Stop(match r {
                    "length" => StopReason::MaxTokens,
                    "stop" | "tool_calls" => StopReason::EndTurn,
                    "content_filter" => StopReason::Refused(r.to_string()),
                    // OpenRouter's reply that broke off at the provider (its error object,
                    // when it comes, is read above): not a whole reply, worth another try.
                    "error" => {
                        out.push(Delta::Error(ApiError {
                            status: None,
                            message: "the stream ended with finish_reason \"error\"".into(),
                            retryable: true,
                            retry_after: None,
                        }));
                        return out;
                    }
                    other => StopReason::Other(other.to_string()),
                }));
            }
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            let field = |p: &str| u.pointer(p).and_then(Value::as_u64);
            let get = |p: &str| field(p).unwrap_or(0);
            // DeepSeek's own counts, read as Cline's deepseek.ts reads them: the cache misses
            // as cache writes, which Cline's table prices (its `inputPrice` is 0). OpenRouter's
            // cache writes (Anthropic's models) and its bill, as Cline's openrouter.ts reads
            // them: `cost` plus, for a request on the user's own provider key, the
            // provider's `upstream_inference_cost`.
            let dollars = |p: &str| u.pointer(p).and_then(Value::as_f64).filter(|d| d.is_finite() && *d >= 0.0);
            out.push(Delta::Usage(Usage {
                input: get("/prompt_tokens"),
                output: get("/completion_tokens"),
                cache_read: field("/prompt_cache_hit_tokens")
                    .unwrap_or_else(|| get("/prompt_tokens_details/cached_tokens")),
                cache_write: field("/prompt_cache_miss_tokens")
                    .unwrap_or_else(|| get("/prompt_tokens_details/cache_write_tokens")),
                billed: dollars("/cost").map(|c| c + dollars("/cost_details/upstream_inference_cost").unwrap_or(0.0)),
            }));
        }
        out
    }
}

/// One `tool_calls[i]` delta: keyed by its `index` (its position in the array when a server
/// leaves that out); `id` and `function.name` come with the first fragment.
fn tool_call(call: &Value, pos: usize) -> BlockDelta {
    let text = |p: &str| call.pointer(p).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
    let arguments = match call.pointer("/function/arguments") {
        Some(Value::String(s)) => s.clone(),
        Some(v @ Value::Object(_)) => v.to_string(), // a server that sends the arguments parsed
        _ => String::new(),
    };
    BlockDelta::ToolCall { index: call_index(call, pos), id: text("/id"), name: text("/function/name"), arguments }
}

/// A `tool_calls[i]` delta's `index`, or its position in the array when a server leaves it out.
fn call_index(call: &Value, pos: usize) -> usize {
    call.get("index").and_then(Value::as_u64).map_or(pos, |i| i as usize)
}

/// `{"error":{"message":…,"type"|"code":…}}` mid-stream (OpenAI, OpenRouter), or the error
/// object itself (the Responses API's `response.failed` and `error` events).
pub(crate) fn stream_error(v: &Value) -> ApiError {
    let e = v.get("error").filter(|e| e.is_object()).unwrap_or(v);
    let message = json_error_message(v).unwrap_or_else(|| v.to_string());
    let code = e.get("code").and_then(Value::as_u64).map(|c| c as u16);
    // Cline sends a request whose stream failed again, whatever the failure but a spend limit
    // (`task/index.ts`, 3 times): here every failure but the request's own faults — by its
    // status as an HTTP error's (4xx but 408, 409 and 429; a quota), else by a type or code that
    // names such a fault (the same request gets the same answer). The message's prose is not
    // read for it: "an invalid response upstream" is no fault of the request.
    let retryable = match code {
        Some(c) if c >= 400 => ApiError::from_status(c, message.clone(), None).retryable,
        _ => {
            let kind = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_ascii_lowercase();
            let words = format!("{} {}", kind("type"), kind("code"));
            let faults = [
                "invalid",
                "authentication",
                "unauthorized",
                "permission",
                "forbidden",
                "not_found",
                "quota",
                "billing",
            ];
            !faults.iter().any(|w| words.contains(w))
        }
    };
    ApiError { status: code, message, retryable, retry_after: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(s: &str) -> SseEvent {
        SseEvent { event: None, data: s.into() }
    }

    /// A completion cut on the way is a retryable error, not a whole reply without a tool; one
    /// ended by its `finish_reason` or by `[DONE]` is whole.
    #[test]
    fn a_completion_without_its_end_is_a_cut_stream() {
        let text = data(r#"{"choices":[{"index":0,"delta":{"content":"I will now"}}]}"#);
        let mut s = Stream::default();
        s.event(&text);
        let cut = s.finish();
        assert!(
            matches!(&cut[..], [Delta::Error(e)] if e.retryable && e.message.contains("no finish_reason")),
            "{cut:?}"
        );
        let stop = data(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#);
        for end in [stop, data("[DONE]")] {
            let mut s = Stream::default();
            s.event(&text);
            s.event(&end);
            assert!(s.finish().is_empty());
        }
        assert!(Stream::default().finish().is_empty());
    }

    /// A reply the content filter ended is refused, in the server's word (it is not "no tool").
    #[test]
    fn a_content_filter_stop_is_a_refusal() {
        let mut s = Stream::default();
        let out = s.event(&data(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]}"#));
        assert_eq!(out, vec![Delta::Stop(StopReason::Refused("content_filter".into()))]);
    }

    #[test]
    fn a_refusal_is_text_marked_once() {
        let mut s = Stream::default();
        let mut out = Vec::new();
        out.extend(
            s.event(&data(r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":""}}]}"#)),
        );
        out.extend(s.event(&data(r#"{"choices":[{"index":0,"delta":{"refusal":"I can't "}}]}"#)));
        out.extend(s.event(&data(r#"{"choices":[{"index":0,"delta":{"refusal":"help."}}]}"#)));
        assert_eq!(out, vec![Delta::Text("[Refusal] I can't ".into()), Delta::Text("help.".into())]);
    }

    #[test]
    fn openrouters_bill_and_cache_writes_are_read_as_clines_openrouter_handler_reads_them() {
        // OpenRouter's documented usage chunk: `cost`, `cost_details.upstream_inference_cost`
        // (a request on the user's own provider key), `prompt_tokens_details.cache_write_tokens`.
        let mut s = Stream::default();
        let out = s.event(&data(
            r#"{"choices":[],"usage":{"prompt_tokens":194,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":50,"cache_write_tokens":100},"cost":0.95,"cost_details":{"upstream_inference_cost":19}}}"#,
        ));
        let u = Usage { input: 194, output: 2, cache_read: 50, cache_write: 100, billed: Some(19.95) };
        assert_eq!(out, vec![Delta::Usage(u)]);
        // Without the upstream part, the cost alone; no cost (or a nonsensical one), no bill.
        for (usage, billed) in [
            (r#"{"prompt_tokens":1,"cost":0.25}"#, Some(0.25)),
            (r#"{"prompt_tokens":1,"cost":0.25,"cost_details":{"upstream_inference_cost":null}}"#, Some(0.25)),
            (r#"{"prompt_tokens":1}"#, None),
            (r#"{"prompt_tokens":1,"cost":"0.25"}"#, None),
            (r#"{"prompt_tokens":1,"cost":-1}"#, None),
        ] {
            let out = Stream::default().event(&data(&format!(r#"{{"choices":[],"usage":{usage}}}"#)));
            assert!(matches!(&out[..], [Delta::Usage(u)] if u.billed == billed), "{usage}: {out:?}");
        }
    }

    #[test]
    fn deepseeks_cache_misses_are_cache_writes_and_cost_what_clines_table_says() {
        let mut s = Stream::default();
        let out = s.event(&data(
            r#"{"choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":10,"prompt_cache_hit_tokens":600,"prompt_cache_miss_tokens":400}}"#,
        ));
        let u = Usage { input: 1000, output: 10, cache_read: 600, cache_write: 400, billed: None };
        assert_eq!(out, vec![Delta::Usage(u)]);
        // deepseek-chat: uncached input at $0.27/M (Cline's `cacheWritesPrice`; `inputPrice` 0),
        // hits at $0.07/M, output at $1.10/M. With the misses read as nothing, it cost $0.
        let p = crate::run::budget::accounting::builtin(super::super::Provider::OpenAi, "deepseek-chat").unwrap();
        let cost = crate::run::budget::accounting::cost(&u, &p, true);
        assert!((cost - (400.0 * 0.27 + 600.0 * 0.07 + 10.0 * 1.1) / 1e6).abs() < 1e-12, "{cost}");
    }

    #[test]
    fn content_reasoning_finish_and_usage() {
        let mut s = Stream::default();
        let mut out = Vec::new();
        out.extend(s.event(&data(r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#)));
        out.extend(s.event(&data(r#"{"choices":[{"index":0,"delta":{"reasoning_content":"think"}}]}"#)));
        // vLLM sends its reasoning under both names: one reasoning.
        out.extend(
            s.event(&data(r#"{"choices":[{"index":0,"delta":{"reasoning_content":" more","reasoning":" more"}}]}"#)),
        );
        out.extend(s.event(&data(r#"{"choices":[{"index":0,"delta":{"reasoning":" then"}}]}"#)));
        out.extend(s.event(&data(r#"{"choices":[{"index":0,"delta":{"content":"Hello"}}]}"#)));
        out.extend(s.event(&data(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#)));
        out.extend(s.event(&data(r#"{"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":2}}}"#)));
        out.extend(s.event(&data("[DONE]")));
        out.extend(s.event(&data(r#"{"choices":[{"index":0,"delta":{"content":"after done"}}]}"#)));
        assert_eq!(
            out,
            vec![
                Delta::Reasoning("think".into()),
                Delta::Reasoning(" more".into()),
                Delta::Reasoning(" then".into()),
                Delta::Text("Hello".into()),
                Delta::Stop(StopReason::MaxTokens),
                Delta::Usage(Usage { input: 9, output: 3, cache_read: 2, cache_write: 0, billed: None }),
            ]
        );
    }

    #[test]
    fn tool_call_fragments_are_keyed_by_index() {
        let mut s = Stream::default();
        let mut out = Vec::new();
        out.extend(s.event(&data(r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":""}}]}}]}"#)));
        out.extend(s.event(&data(r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","function":{"name":"list_files","arguments":"{}"}}]}}]}"#)));
        out.extend(s.event(&data(
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}}]}"#,
        )));
        out.extend(s.event(&data(r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#)));
        let call = |index: usize, id: Option<&str>, name: Option<&str>, arguments: &str| {
            Delta::Block(BlockDelta::ToolCall {
                index,
                id: id.map(str::to_string),
                name: name.map(str::to_string),
                arguments: arguments.to_string(),
            })
        };
        assert_eq!(
            out,
            vec![
                call(0, Some("call_a"), Some("read_file"), ""),
                call(1, Some("call_b"), Some("list_files"), "{}"),
                call(0, None, None, "{\"path\":"),
                Delta::Stop(StopReason::EndTurn),
            ]
        );
    }

    /// An OpenAI-compatible config for `model` with Cline's native tools.
    fn native_cfg(model: &str) -> ApiConfig {
        ApiConfig {
            base_url: "http://x/v1".into(),
            tools: Some(crate::run::llm::tool_specs::Tools {
                parallel: true,
                builtin: crate::run::dialect::native::definitions(
                    crate::run::prompt::system::Family::NativeNextGen,
                    "/w",
                ),
                extra: Vec::new(),
            }),
            ..ApiConfig::test(super::super::Provider::OpenAi, model)
        }
    }

    #[test]
    fn native_request_sends_tools_effort_and_tool_messages() {
        use crate::run::llm::types::{Part, ToolUsePart};
        let cfg = ApiConfig { max_tokens: Some(100), reasoning_effort: Some("high".into()), ..native_cfg("m") };
        let mut a = Message::assistant("");
        a.parts = vec![Part::ToolUse(ToolUsePart {
            id: "call_a".into(),
            name: "list_files".into(),
            input: r#"{"path":"."}"#.into(),
            answer: None,
            extra: None,
        })];
        let msgs = [
            Message::user("task"),
            a,
            Message::user("[list_files for '.'] Result:\nx\n\n<environment_details>\nE\n</environment_details>"),
        ];
        let body: Value = serde_json::from_slice(&request(&cfg, "SYS", &msgs).body).unwrap();
        assert_eq!(body["reasoning_effort"], "high");
        assert_eq!(body["tools"].as_array().unwrap().len(), 8);
        // `none` sends none, for any model; a reasoning family's default is medium.
        let effort = |model: &str, e: Option<&str>| {
            let cfg = ApiConfig { model: model.into(), reasoning_effort: e.map(str::to_string), ..cfg.clone() };
            let body: Value = serde_json::from_slice(&request(&cfg, "SYS", &msgs).body).unwrap();
            body.get("reasoning_effort").cloned()
        };
        assert_eq!(effort("gpt-5", Some("none")), None);
        assert_eq!(effort("gpt-5", None), Some(json!("medium")));
        assert_eq!(effort("gpt-4.1", None), None);
        assert_eq!(effort("gpt-4.1", Some("none")), None);
        // A model that takes `none` is sent it, also behind a gateway's prefix: a newer GPT
        // behind a Chat Completions proxy refuses function tools with any other effort.
        assert_eq!(effort("azure/gpt-5.5", Some("none")), Some(json!("none")));
        assert_eq!(effort("gpt-5.1", Some("none")), Some(json!("none")));
        assert_eq!(effort("gpt-5.1-codex", Some("none")), None);
        let m = body["messages"].as_array().unwrap();
        assert_eq!(m[2]["tool_calls"][0]["id"], "call_a");
        assert_eq!(m[2]["tool_calls"][0]["function"]["arguments"], r#"{"path":"."}"#);
        assert!(m[2]["content"].is_null());
        assert_eq!(
            m[3],
            json!({"role": "tool", "tool_call_id": "call_a", "content": "[list_files for '.'] Result:\nx"})
        );
        assert_eq!(
            m[4],
            json!({"role": "user", "content": [{"type": "text", "text": "<environment_details>\nE\n</environment_details>"}]})
        );
    }

    /// DeepSeek's own models get each tool-calling reply's reasoning back, in every later request
    /// (its thinking mode refuses the request otherwise); no other model, nor a reply without
    /// calls, nor a gateway's `deepseek/…` id, gets the field.
    #[test]
    fn deepseek_models_get_the_reasoning_of_each_reply_that_made_calls() {
        use crate::run::llm::types::Part;
        let call = Part::read_file_call;
        let thinking = |t: &str| Part::Thinking { text: t.into(), signature: None };
        let mut a1 = Message::assistant("");
        a1.parts = vec![thinking("first"), thinking("second"), call("c1")];
        let mut a2 = Message::assistant("reading");
        a2.parts = vec![call("c2")];
        let mut a3 = Message::assistant("done");
        a3.parts = vec![thinking("no calls")];
        let msgs = [
            Message::user("task"),
            a1,
            Message::user("[read_file] Result:\nx"),
            a2,
            Message::user("[read_file] Result:\ny"),
            a3,
            Message::user("more"),
        ];
        let sent = |model: &str| -> Vec<Option<Value>> {
            let cfg = native_cfg(model);
            let body: Value = serde_json::from_slice(&request(&cfg, "SYS", &msgs).body).unwrap();
            body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] == "assistant")
                .map(|m| m.get("reasoning_content").cloned())
                .collect()
        };
        let both = vec![Some(json!("first\nsecond")), Some(json!("")), None];
        assert_eq!(sent("deepseek-reasoner"), both);
        assert_eq!(sent("deepseek-v4-pro"), both);
        assert_eq!(sent("DeepSeek-Chat"), both);
        assert_eq!(sent("kimi-k2.6"), both);
        assert_eq!(sent("kimi-k2-thinking"), both);
        for other in ["gpt-4.1", "deepseek/deepseek-reasoner", "deepseek-r1:7b", "qwen3", "kimi-k2-0905-preview"] {
            assert_eq!(sent(other), vec![None, None, None], "{other}");
        }
    }

    /// Cline's `:1m` OpenRouter ids are its own: OpenRouter gets the model's id and the route
    /// to the providers with the 1M window (`openrouter-stream.ts`).
    #[test]
    fn openrouter_gets_clines_1m_ids_without_the_suffix_and_routed_as_cline_does() {
        let asked = |base: &str, model: &str| -> Value {
            let cfg = ApiConfig {
                base_url: base.to_string(),
                facts: crate::run::llm::models::lookup(super::super::Provider::OpenAi, model).facts,
                ..ApiConfig::test(super::super::Provider::OpenAi, model)
            };
            serde_json::from_slice(&request(&cfg, "SYS", &[Message::user("hi")]).body).unwrap()
        };
        let b = asked("https://openrouter.ai/api/v1", "anthropic/claude-sonnet-4.5:1m");
        assert_eq!(b["model"], "anthropic/claude-sonnet-4.5");
        assert_eq!(b["provider"], json!({"order": ["anthropic", "google-vertex/global"], "allow_fallbacks": false}));
        let b = asked("https://openrouter.ai/api/v1", "anthropic/claude-sonnet-4.5");
        assert_eq!((b["model"].as_str(), b.get("provider")), (Some("anthropic/claude-sonnet-4.5"), None));
        // Elsewhere the id is the server's own business.
        let b = asked("http://127.0.0.1:4000/v1", "anthropic/claude-sonnet-4.5:1m");
        assert_eq!((b["model"].as_str(), b.get("provider")), (Some("anthropic/claude-sonnet-4.5:1m"), None));
    }

    /// At OpenRouter some models get what Cline's OpenRouter handler sends them: their
    /// providers in order, DeepSeek's sampling for R1 and QwQ, Flash's output limit; elsewhere
    /// none of it.
    #[test]
    fn openrouter_gets_clines_per_model_settings() {
        let asked = |base: &str, model: &str, max: Option<u32>| -> Value {
            let cfg = ApiConfig {
                base_url: base.to_string(),
                max_tokens: max,
                ..ApiConfig::test(super::super::Provider::OpenAi, model)
            };
            serde_json::from_slice(&request(&cfg, "SYS", &[Message::user("hi")]).body).unwrap()
        };
        let or = "https://openrouter.ai/api/v1";
        let kimi = asked(or, "moonshotai/kimi-k2", None);
        let order = ["groq", "fireworks", "baseten", "parasail", "novita", "deepinfra"];
        assert_eq!(kimi["provider"], json!({"order": order, "allow_fallbacks": false}));
        assert_eq!(asked(or, "qwen/qwen3-coder:exacto", None)["provider"]["order"], json!(["baseten"]));
        let r1 = asked(or, "deepseek/deepseek-r1-0528", None);
        assert_eq!((&r1["temperature"], &r1["top_p"], r1.get("provider")), (&json!(0.7), &json!(0.95), None));
        assert_eq!(asked(or, "google/gemini-2.5-flash", None)["max_tokens"], 8192);
        assert_eq!(asked(or, "google/gemini-2.5-flash", Some(1000))["max_tokens"], 1000);
        assert_eq!(asked(or, "google/gemini-2.5-pro", None).get("max_tokens"), None);
        let local = "http://127.0.0.1:4000/v1";
        let plain = asked(local, "moonshotai/kimi-k2", None);
        assert_eq!((plain.get("provider"), plain.get("top_p")), (None, None));
        assert_eq!(asked(local, "deepseek/deepseek-r1", None).get("top_p"), None);
        assert_eq!(asked(local, "google/gemini-2.5-flash", None).get("max_tokens"), None);
    }

    /// At OpenRouter a Claude model thinks as Cline's OpenRouter handler asks it to: with
    /// `--thinking-budget` as `reasoning: {max_tokens}` and no temperature, or adaptively as
    /// `reasoning: {enabled: true}` with the effort as `verbosity`. Elsewhere the budget is
    /// Anthropic's alone.
    #[test]
    fn openrouter_claude_thinks_with_the_budget_or_effort_as_clines_openrouter_handler_asks() {
        let asked = |base: &str, model: &str, budget: Option<u32>, effort: Option<&str>| -> Value {
            let cfg = ApiConfig {
                base_url: base.to_string(),
                thinking_budget: budget,
                reasoning_effort: effort.map(str::to_string),
                ..ApiConfig::test(super::super::Provider::OpenAi, model)
            };
            serde_json::from_slice(&request(&cfg, "SYS", &[Message::user("hi")]).body).unwrap()
        };
        let or = "https://openrouter.ai/api/v1";
        let b = asked(or, "anthropic/claude-sonnet-4.5", Some(2048), None);
        assert_eq!(b["reasoning"], json!({"max_tokens": 2048}));
        assert_eq!((b.get("temperature"), b.get("reasoning_effort")), (None, None));
        let b = asked(or, "anthropic/claude-sonnet-4.5", None, None);
        assert_eq!((b.get("reasoning"), &b["temperature"]), (None, &json!(0)));
        // An effort alone is not Claude's at OpenRouter (as Cline): none is sent.
        let b = asked(or, "anthropic/claude-sonnet-4.5", None, Some("high"));
        assert_eq!((b.get("reasoning"), b.get("reasoning_effort")), (None, None));
        // With `--max-tokens` not above the budget, raised past it (Anthropic refuses less).
        let cfg = ApiConfig {
            base_url: or.to_string(),
            thinking_budget: Some(4096),
            max_tokens: Some(2000),
            ..ApiConfig::test(super::super::Provider::OpenAi, "anthropic/claude-sonnet-4.5")
        };
        let b: Value = serde_json::from_slice(&request(&cfg, "SYS", &[Message::user("hi")]).body).unwrap();
        assert_eq!((&b["max_tokens"], &b["reasoning"]), (&json!(6096), &json!({"max_tokens": 4096})));
        // The 1M id is the model's at OpenRouter.
        let b = asked(or, "anthropic/claude-sonnet-4.5:1m", Some(1024), None);
        assert_eq!(b["reasoning"], json!({"max_tokens": 1024}));
        // Adaptive: a budget alone is `high`; an effort is said as `verbosity`; none, no thinking.
        let b = asked(or, "anthropic/claude-opus-4.7", Some(2048), None);
        assert_eq!(
            (&b["reasoning"], &b["verbosity"], &b["include_reasoning"]),
            (&json!({"enabled": true}), &json!("high"), &json!(true))
        );
        let b = asked(or, "anthropic/claude-opus-4.7", None, Some("low"));
        assert_eq!(
            (&b["reasoning"], &b["verbosity"], b.get("reasoning_effort")),
            (&json!({"enabled": true}), &json!("low"), None)
        );
        let b = asked(or, "anthropic/claude-opus-4.7", Some(2048), Some("none"));
        assert_eq!((b.get("reasoning"), b.get("verbosity"), &b["include_reasoning"]), (None, None, &json!(false)));
        assert_eq!(b.get("temperature"), None);
        // Elsewhere (a LiteLLM proxy, say) the body is as before.
        let b = asked("http://127.0.0.1:4000/v1", "anthropic/claude-sonnet-4.5", Some(2048), None);
        assert_eq!((b.get("reasoning"), &b["temperature"]), (None, &json!(0)));
    }

    /// At OpenRouter a model is asked as Cline's OpenRouter handler asks it, not as its generic
    /// OpenAI-compatible one: the system prompt as `system` and a temperature for GPT-5 too,
    /// `max_tokens`, the effort only when given, as `reasoning: {effort}`, and
    /// `include_reasoning`. Elsewhere a reasoning model keeps OpenAI's own settings.
    #[test]
    fn openrouter_asks_for_reasoning_as_clines_openrouter_handler_does() {
        let asked = |base: &str, model: &str, effort: Option<&str>, max: Option<u32>| -> Value {
            let cfg = ApiConfig {
                base_url: base.to_string(),
                reasoning_effort: effort.map(str::to_string),
                max_tokens: max,
                ..ApiConfig::test(super::super::Provider::OpenAi, model)
            };
            serde_json::from_slice(&request(&cfg, "SYS", &[Message::user("hi")]).body).unwrap()
        };
        let or = "https://openrouter.ai/api/v1";
        let b = asked(or, "openai/gpt-5", None, Some(4000));
        assert_eq!(b["messages"][0]["role"], "system");
        assert_eq!(
            (&b["temperature"], &b["include_reasoning"], &b["max_tokens"]),
            (&json!(0), &json!(true), &json!(4000))
        );
        for absent in ["reasoning", "reasoning_effort", "max_completion_tokens"] {
            assert_eq!(b.get(absent), None, "{absent}");
        }
        let b = asked(or, "openai/gpt-5", Some("high"), None);
        assert_eq!((&b["reasoning"], b.get("reasoning_effort")), (&json!({"effort": "high"}), None));
        let b = asked(or, "deepseek/deepseek-v3.2", Some("none"), None);
        assert_eq!((b.get("reasoning"), &b["include_reasoning"]), (None, &json!(false)));
        // A model Cline deems without an effort: none sent, and its reasoning still included.
        let b = asked(or, "meta-llama/llama-4-maverick", Some("none"), None);
        assert_eq!((b.get("reasoning"), &b["include_reasoning"]), (None, &json!(true)));
        assert_eq!(asked(or, "x-ai/grok-4", Some("high"), None)["include_reasoning"], json!(false));
        // Elsewhere: OpenAI's reasoning-model settings.
        let b = asked("http://127.0.0.1:4000/v1", "openai/gpt-5", None, Some(4000));
        assert_eq!(b["messages"][0]["role"], "developer");
        assert_eq!((&b["reasoning_effort"], &b["max_completion_tokens"]), (&json!("medium"), &json!(4000)));
        assert_eq!((b.get("temperature"), b.get("include_reasoning")), (None, None));
    }

    /// Cline's OpenRouter handler sends `parallel_tool_calls` from its parallel-calling
    /// setting (on unless `--one-tool-per-reply`); its generic OpenAI-compatible one false.
    #[test]
    fn openrouter_gets_parallel_tool_calls_as_clines_openrouter_handler_sends_them() {
        let asked = |base: &str, parallel: bool| -> Value {
            let cfg = ApiConfig {
                base_url: base.to_string(),
                tools: Some(crate::run::llm::tool_specs::Tools {
                    parallel,
                    builtin: crate::run::dialect::native::definitions(
                        crate::run::prompt::system::Family::NativeNextGen,
                        "/w",
                    ),
                    extra: Vec::new(),
                }),
                ..ApiConfig::test(super::super::Provider::OpenAi, "anthropic/claude-sonnet-4.5")
            };
            serde_json::from_slice::<Value>(&request(&cfg, "SYS", &[Message::user("hi")]).body).unwrap()
                ["parallel_tool_calls"]
                .clone()
        };
        assert_eq!(asked("https://openrouter.ai/api/v1", true), json!(true));
        assert_eq!(asked("https://openrouter.ai/api/v1", false), json!(false));
        assert_eq!(asked("http://127.0.0.1:4000/v1", true), json!(false));
    }

    /// Azure OpenAI as Cline's `AzureOpenAI` client asks it: the deployment in the path, the
    /// `api-version` in the query, the key as `api-key`; everything else as before.
    #[test]
    fn azure_openai_gets_its_deployment_path_api_version_and_api_key() {
        let url = |base: &str, model: &str| azure_url(base, model, "chat/completions");
        assert_eq!(
            url("https://acme.openai.azure.com/openai", "gpt-4o-prod").as_deref(),
            Some("https://acme.openai.azure.com/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-08-01-preview")
        );
        assert_eq!(
            url("https://acme.openai.azure.us/openai/?api-version=2025-04-01-preview", "my deploy").as_deref(),
            Some("https://acme.openai.azure.us/openai/deployments/my%20deploy/chat/completions?api-version=2025-04-01-preview")
        );
        assert_eq!(
            url("https://acme.cognitiveservices.azure.com/openai/deployments/d1", "x").as_deref(),
            Some("https://acme.cognitiveservices.azure.com/openai/deployments/d1/chat/completions?api-version=2024-08-01-preview")
        );
        assert_eq!(
            url("https://acme.openai.azure.com/openai/v1", "gpt-5").as_deref(),
            Some("https://acme.openai.azure.com/openai/v1/chat/completions")
        );
        // An explicit api-version makes any server Azure-shaped (a proxy, a test server).
        assert_eq!(
            url("http://127.0.0.1:9/openai?api-version=2024-10-21", "d").as_deref(),
            Some("http://127.0.0.1:9/openai/deployments/d/chat/completions?api-version=2024-10-21")
        );
        for (base, model) in [
            ("https://api.openai.com/v1", "gpt-4o"),
            ("https://openrouter.ai/api/v1", "azure/gpt-4o"),
            ("https://notazure.com.example/v1", "m"),
            ("https://acme.services.ai.azure.com/models", "DeepSeek-R1"),
        ] {
            assert_eq!(url(base, model), None, "{base}");
        }
        let cfg = ApiConfig {
            base_url: "https://acme.openai.azure.com/openai".into(),
            api_key: Some("K".into()),
            ..native_cfg("gpt-4o-prod")
        };
        let req = request(&cfg, "SYS", &[Message::user("t")]);
        assert!(req.url.ends_with("/deployments/gpt-4o-prod/chat/completions?api-version=2024-08-01-preview"));
        assert!(req.headers.contains(&("api-key".into(), "K".into())));
        assert!(!req.headers.iter().any(|(n, _)| n == "authorization"));
        let plain = request(&ApiConfig { api_key: Some("K".into()), ..native_cfg("m") }, "SYS", &[Message::user("t")]);
        assert_eq!(plain.url, "http://x/v1/chat/completions");
        assert!(plain.headers.contains(&("authorization".into(), "Bearer K".into())));
    }

    /// At OpenAI's own API, the settings of Cline's `openai-native` handler, from each model's
    /// facts; elsewhere (and for a model not in Cline's table) the OpenAI-compatible ones.
    #[test]
    fn openai_native_chat_settings_come_from_the_models_facts() {
        let body = |model: &str, native: bool, effort: Option<&str>| {
            let cfg = ApiConfig {
                base_url: "https://api.openai.com/v1".into(),
                facts: crate::run::llm::models::lookup(super::super::Provider::OpenAi, model).facts,
                openai_native: native,
                reasoning_effort: effort.map(str::to_string),
                tools: Some(crate::run::llm::tool_specs::Tools {
                    parallel: true,
                    builtin: crate::run::dialect::native::definitions(
                        crate::run::prompt::system::Family::NativeGpt5,
                        "/w",
                    ),
                    extra: Vec::new(),
                }),
                ..ApiConfig::test(super::super::Provider::OpenAi, model)
            };
            let b: Value = serde_json::from_slice(&request(&cfg, "SYS", &[Message::user("t")]).body).unwrap();
            let get = |k: &str| b.get(k).cloned().unwrap_or(Value::Null);
            (get("parallel_tool_calls"), get("temperature"), get("reasoning_effort"), b["messages"][0]["role"].clone())
        };
        let row = |p: bool, t: Value, e: Value, r: &str| (json!(p), t, e, json!(r));
        // o1, o3, o4: no `parallel_tool_calls` at all (OpenAI refuses it with them).
        let row_o = |t: Value, e: Value| (Value::Null, t, e, json!("developer"));
        assert_eq!(body("gpt-5", true, None), row(true, json!(1), json!("medium"), "developer"));
        assert_eq!(body("gpt-5", false, None), row(false, Value::Null, json!("medium"), "developer"));
        assert_eq!(body("gpt-5-mini", true, Some("none")), row(true, json!(1), Value::Null, "developer"));
        assert_eq!(body("gpt-5.1", true, Some("none")), row(true, json!(1), json!("none"), "developer"));
        assert_eq!(body("gpt-4.1", true, None), row(false, json!(0), Value::Null, "system"));
        assert_eq!(body("o3", true, Some("high")), row_o(Value::Null, json!("high")));
        assert_eq!(body("o4-mini", true, None), row_o(Value::Null, json!("medium")));
        assert_eq!(body("o3-mini", false, None), row_o(Value::Null, json!("medium")));
        // Cline's table gives gpt-5-chat-latest a reasoning effort, which OpenAI refuses.
        assert_eq!(body("gpt-5-chat-latest", true, None).2, Value::Null);
        // Cline's table gives gpt-5.2-chat-latest no reasoning effort.
        assert_eq!(body("gpt-5.2-chat-latest", true, None), row(true, json!(1), Value::Null, "developer"));
        // Not in Cline's table: the OpenAI-compatible settings.
        assert_eq!(body("o3-pro-next", true, None), row_o(Value::Null, json!("medium")));
    }

    #[test]
    fn vendors_that_refuse_temperature_0_get_what_clines_handler_for_them_sends() {
        let temperature = |model: &str| {
            let b: Value =
                serde_json::from_slice(&request(&native_cfg(model), "SYS", &[Message::user("t")]).body).unwrap();
            b.get("temperature").cloned()
        };
        // Moonshot: "invalid temperature: only 1 is allowed for this model".
        for one in [
            "kimi-k2.5",
            "kimi-k2.6",
            "kimi-k2-thinking",
            "kimi-k2-thinking-turbo",
            "MiniMax-M2.5",
            "gemini-2.5-pro",
            "google/gemini-3-pro-preview",
        ] {
            assert_eq!(temperature(one), Some(json!(1)), "{one}");
        }
        assert_eq!(temperature("kimi-k2-0905-preview"), Some(json!(0.6)));
        // Opus 4.7 refuses a temperature ("temperature is deprecated for this model").
        for none in ["anthropic/claude-opus-4.7", "anthropic/claude-sonnet-5", "claude-opus-4-6"] {
            assert_eq!(temperature(none), None, "{none}");
        }
        // Everything else as Cline's OpenAI-compatible handler: 0 (OpenRouter's Gemini 2.5,
        // Kimi and MiniMax too, as Cline's OpenRouter handler sends them).
        for zero in [
            "gpt-4o",
            "qwen3-coder",
            "google/gemini-2.5-pro",
            "moonshotai/kimi-k2.5",
            "minimax/minimax-m2",
            "anthropic/claude-sonnet-4.5",
        ] {
            assert_eq!(temperature(zero), Some(json!(0)), "{zero}");
        }
    }

    #[test]
    fn mid_stream_error_objects_are_classified() {
        let mut s = Stream::default();
        let out = s.event(&data(r#"{"error":{"message":"Provider overloaded","code":502}}"#));
        assert!(matches!(&out[0], Delta::Error(e) if e.retryable && e.status == Some(502)));
        let out = s.event(&data(r#"{"error":{"message":"bad key","type":"invalid_request_error"}}"#));
        assert!(matches!(&out[0], Delta::Error(e) if !e.retryable));
        // OpenRouter's mid-stream shapes: a timeout with its status, a message it has no type
        // for; both are sent again, as Cline sends again any stream that failed.
        for retried in [
            r#"{"error":{"code":408,"message":"Request timed out"}}"#,
            r#"{"error":{"message":"Provider disconnected unexpectedly"}}"#,
            r#"{"error":{"code":409,"message":"conflict"}}"#,
        ] {
            let out = Stream::default().event(&data(retried));
            assert!(matches!(&out[..], [Delta::Error(e)] if e.retryable), "{retried}: {out:?}");
        }
        for refused in [
            r#"{"error":{"code":402,"message":"Insufficient credits"}}"#,
            r#"{"error":{"code":400,"message":"bad"}}"#,
            r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota"}}"#,
            r#"{"error":{"message":"Incorrect API key","code":"invalid_api_key"}}"#,
        ] {
            let out = Stream::default().event(&data(refused));
            assert!(matches!(&out[..], [Delta::Error(e)] if !e.retryable), "{refused}: {out:?}");
        }
        // A reply that broke off at the provider is not a whole reply.
        let out = Stream::default()
            .event(&data(r#"{"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"error"}]}"#));
        assert!(matches!(&out[..], [Delta::Text(_), Delta::Error(e)] if e.retryable), "{out:?}");
        // An SSE `error` event is an error whatever its data says, JSON or not.
        for data in [r#"{"message":"upstream reset"}"#, "upstream reset"] {
            let ev = SseEvent { event: Some("error".into()), data: data.into() };
            let out = Stream::default().event(&ev);
            assert!(
                matches!(&out[..], [Delta::Error(e)] if e.retryable && e.message.contains("upstream reset")),
                "{out:?}"
            );
        }
        // A server's status decides, not the prose of its message.
        for retried in [
            r#"{"error":{"code":502,"message":"Upstream returned an invalid response"}}"#,
            r#"{"error":{"message":"stream suspended"}}"#,
        ] {
            let out = Stream::default().event(&data(retried));
            assert!(matches!(&out[..], [Delta::Error(e)] if e.retryable), "{retried}: {out:?}");
        }
    }

    #[test]
    fn a_null_error_on_a_chunk_is_no_error() {
        // The OpenAI SDK throws only for a truthy `error`; some gateways send `"error": null`
        // on every chunk, and every request to them failed.
        let out = Stream::default().event(&data(r#"{"choices":[{"index":0,"delta":{"content":"a"}}],"error":null}"#));
        assert_eq!(out, vec![Delta::Text("a".into())]);
        let out = Stream::default().event(&data(r#"{"choices":[{"index":0,"delta":{"content":"b"}}],"error":false}"#));
        assert_eq!(out, vec![Delta::Text("b".into())]);
    }
}
