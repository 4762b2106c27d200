//! The four wire formats: Anthropic Messages, OpenAI-compatible Chat Completions (OpenAI,
//! OpenRouter, vLLM, llama.cpp server, LM Studio), OpenAI's own Responses API (`responses`) and
//! Ollama's native `/api/chat`.
//!
//! Each provider is declared once in `registry`. Each wire format's module has a `request`
//! function (URL, headers, JSON body) and a stream decoder turning server events into
//! [`Delta`]s; `Wire::of` says which one a request uses.

pub(crate) mod anthropic;
pub(crate) mod history;
pub(crate) mod ollama;
pub(crate) mod openai;
mod reasoning_details;
pub(crate) mod registry;
pub(crate) mod responses;

use serde_json::{json, Value};

use crate::run::llm::sse::{SseDecoder, SseEvent, MAX_EVENT_BYTES};
use crate::run::llm::tool_specs::Tools;
use crate::run::llm::types::{ApiError, Delta, ImagePart, Message, Part, Role};

/// Which API to talk to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// Anthropic Messages API.
    Anthropic,
    /// Any OpenAI-compatible Chat Completions API.
    OpenAi,
    /// Ollama's native chat API.
    Ollama,
}

impl Provider {
    /// Its declaration ([`registry`]).
    pub(crate) fn decl(self) -> &'static registry::ProviderDecl {
        registry::decl(self)
    }

    /// Parses a `--provider` value.
    pub(crate) fn parse(s: &str) -> Option<Provider> {
        registry::by_name(s)
    }
}

/// The wire format of a request: which module builds it and decodes its reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// Anthropic Messages.
    Anthropic,
    /// Chat Completions (`/chat/completions`).
    ChatCompletions,
    /// OpenAI's Responses API (`/responses`).
    Responses,
    /// Ollama's `/api/chat`.
    Ollama,
}

impl Wire {
    /// The wire format `cfg` asks with: the Responses API for the models Cline's `openai-native`
    /// handler asks through it (their facts' `apiFormat`), on OpenAI's own API only
    /// ([`ApiConfig::openai_native`]); every other OpenAI-compatible server gets Chat Completions.
    pub(crate) fn of(cfg: &ApiConfig) -> Wire {
        match cfg.provider() {
            Provider::Anthropic => Wire::Anthropic,
            Provider::OpenAi if cfg.openai_native && cfg.facts.responses_api() => Wire::Responses,
            Provider::OpenAi => Wire::ChatCompletions,
            Provider::Ollama => Wire::Ollama,
        }
    }

    /// The wire format a provider speaks to any server (a recording's replies, which name only
    /// the provider).
    pub(crate) fn of_provider(p: Provider) -> Wire {
        match p {
            Provider::Anthropic => Wire::Anthropic,
            Provider::OpenAi => Wire::ChatCompletions,
            Provider::Ollama => Wire::Ollama,
        }
    }
}

/// Whether `base_url` is OpenAI's own API (its host is `api.openai.com`, or one of its
/// data-residency hosts `us.api.openai.com`, `eu.api.openai.com`, …), where Cline's
/// `openai-native` handler, not its OpenAI-compatible one, is the one a person talks through.
pub(crate) fn is_openai_api(base_url: &str) -> bool {
    host_is(base_url, "api.openai.com")
}

/// Whether `base_url` is OpenRouter's API, which reports each request's cost in its usage
/// (`usage.cost`, in US dollars: "No additional parameters are required").
pub(crate) fn is_openrouter(base_url: &str) -> bool {
    host_is(base_url, "openrouter.ai")
}

/// Whether the host of `base_url` is `domain` or a host under it.
pub(super) fn host_is(base_url: &str, domain: &str) -> bool {
    let host = host_of(base_url);
    host.strip_suffix(domain).is_some_and(|sub| sub.is_empty() || sub.ends_with('.'))
}

/// The host of `base_url`, lowercased, without user info or port.
pub(super) fn host_of(base_url: &str) -> String {
    let rest = base_url.split_once("://").map_or(base_url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit('@').next().unwrap_or("");
    host.split(':').next().unwrap_or("").to_ascii_lowercase()
}

/// `--reasoning-effort`'s values: Cline's (`OPENAI_REASONING_EFFORT_OPTIONS`).
pub(crate) const REASONING_EFFORTS: &[&str] = &["none", "low", "medium", "high", "xhigh"];

/// Everything needed to make a request.
#[derive(Debug, Clone)]
pub(crate) struct ApiConfig {
    /// Model name.
    pub model: String,
    /// Base URL (see `--help` for what each provider expects).
    pub base_url: String,
    /// API key, if any. Never printed.
    pub api_key: Option<String>,
    /// `--max-tokens`; `None`: each wire format's default, as Cline's providers have it.
    pub max_tokens: Option<u32>,
    /// What Cline's tables say of the model (`llm/models.rs`).
    pub facts: crate::run::llm::models::Facts,
    /// Ollama's context window (`options.num_ctx`).
    pub num_ctx: u32,
    /// Seconds allowed to connect.
    pub connect_timeout: u32,
    /// Seconds of silence before giving up on a stream.
    pub idle_timeout: u32,
    /// Anthropic extended thinking's `budget_tokens` (`--thinking-budget`).
    pub thinking_budget: Option<u32>,
    /// OpenAI-compatible `reasoning_effort` (`--reasoning-effort`).
    pub reasoning_effort: Option<String>,
    /// Each message's content as one string, never a list of parts (llama-cpp-python, whose
    /// built-in chat formats render a list as nothing; `llm/server_window.rs` recognises it).
    pub string_contents: bool,
    /// The native tool definitions sent with each request; `None` in the XML dialect (set
    /// before each request by the native one).
    pub tools: Option<Tools>,
    /// The OpenAI-compatible base URL is OpenAI's own API (its host is `api.openai.com`, or
    /// `--provider openai-native` says so): the requests are those of Cline's `openai-native`
    /// handler — the Responses API for the models whose facts say so, otherwise its Chat
    /// Completions settings ([`openai::request`]).
    pub openai_native: bool,
    /// Responses requests leave out `reasoning.summary`: the API refused it (for an
    /// organisation OpenAI has not verified) and [`super::Http`] asked again without it.
    pub no_reasoning_summary: bool,
    /// The model takes no images (`--no-images`, or the server refused one and [`super::Http`]
    /// asked again without): each image goes as a line of text saying it was not sent.
    pub no_images: bool,
    /// OpenAI requests ask for the whole reply at once (`stream: false`): OpenAI refused to
    /// stream the model to this organisation ([`stream_refused`]) and [`super::Http`] asked
    /// again so; the reply is read by [`Decoder::whole`].
    pub no_stream: bool,
    /// The provider as declared (`openrouter` speaks `openai`'s wire): its name in messages,
    /// the variable its key came from.
    pub declared: &'static registry::ProviderDecl,
}

impl ApiConfig {
    /// Which wire format (the declared provider's).
    pub(crate) fn provider(&self) -> Provider {
        self.declared.provider
    }
}

#[cfg(test)]
impl ApiConfig {
    /// A configuration for tests: `provider`'s wire, `model`, no key, Cline's settings,
    /// unknown facts; each test sets what it is about with `..ApiConfig::test(…)`.
    pub(crate) fn test(provider: Provider, model: &str) -> Self {
        ApiConfig {
            declared: provider.decl(),
            model: model.into(),
            base_url: "http://x".into(),
            api_key: None,
            max_tokens: None,
            facts: Default::default(),
            num_ctx: 0,
            connect_timeout: 1,
            idle_timeout: 1,
            thinking_budget: None,
            reasoning_effort: None,
            string_contents: false,
            tools: None,
            openai_native: false,
            no_reasoning_summary: false,
            no_images: false,
            no_stream: false,
        }
    }
}

/// A request ready for curl.
pub(crate) struct HttpRequest {
    /// Full URL.
    pub url: String,
    /// Headers (may include the key).
    pub headers: Vec<(String, String)>,
    /// JSON body.
    pub body: Vec<u8>,
}

/// How a server takes the chat format ([`chat_messages`]).
#[derive(Clone, Copy, Default)]
pub(crate) struct ChatForm {
    /// Ollama: a call's arguments as an object, no ids, string contents.
    pub ollama: bool,
    /// String contents alone (llama-cpp-python).
    pub strings: bool,
    /// OpenAI's own API: call ids of at most 40 characters ([`chat_call_id`]).
    pub openai_native: bool,
}

/// The conversation in the chat format OpenAI-compatible servers and Ollama share: the system
/// prompt first, then each message with its role. Native calls go out as `assistant.tool_calls`
/// and their results as `role: "tool"` messages, then the rest of the user message as Cline's
/// text parts, as the server takes them (`form`).
pub(crate) fn chat_messages(system: &str, messages: &[Message], form: ChatForm) -> Vec<Value> {
    let ollama = form.ollama;
    let strings = form.strings;
    let mut msgs = vec![json!({"role": "system", "content": system})];
    for (i, m) in messages.iter().enumerate() {
        if m.role == Role::Assistant {
            msgs.push(chat_assistant(m, form));
            continue;
        }
        let (answers, rest) = history::answers(i.checked_sub(1).map(|p| &messages[p]), m);
        for a in &answers {
            msgs.push(if ollama {
                json!({"role": "tool", "tool_name": a.call.name, "content": a.content})
            } else {
                json!({"role": "tool", "tool_call_id": chat_call_id(&a.call.id, form.openai_native), "content": a.content})
            });
        }
        let images: Vec<&ImagePart> = m.images().collect();
        if answers.is_empty() || !rest.is_empty() || !images.is_empty() {
            msgs.push(chat_user(&rest, &images, ollama, strings));
        }
    }
    msgs
}

/// A user message's text and images after its calls' results. Chat Completions: Cline's text
/// blocks as text parts (`convertToOpenAiMessages`), each image before them as an `image_url`
/// part with a data URL (the `tool` messages take text only). Ollama: one string, the images
/// as its `images` (plain base64, as Ollama's API takes them). llama-cpp-python (`strings`):
/// one string, each image named in it as not sent — its model is told it takes no images, so
/// only a task saved with another server holds any, and the model learns one was there.
fn chat_user(rest: &str, images: &[&ImagePart], ollama: bool, strings: bool) -> Value {
    let blocks = history::text_blocks(rest);
    let content = if ollama || images.is_empty() && (strings || blocks.is_empty()) {
        s(rest)
    } else if strings {
        let mut text: Vec<String> = images.iter().map(|i| not_sent(i)).collect();
        text.push(rest.to_string());
        s(text.join("\n\n").trim_end())
    } else {
        let url = |i: &&ImagePart| obj(vec![("url", Value::String(i.data_url()))]);
        let images = images.iter().map(|i| obj(vec![("type", s("image_url")), ("image_url", url(i))]));
        let texts = blocks.into_iter().map(|t| obj(vec![("type", s("text")), ("text", s(t))]));
        Value::Array(images.chain(texts).collect())
    };
    let mut fields = vec![("role", s("user")), ("content", content)];
    if ollama && !images.is_empty() {
        fields.push(("images", Value::Array(images.iter().map(|i| s(&i.data)).collect())));
    }
    obj(fields)
}

/// A JSON object of these fields, in order (without `json!`'s code for every field of every
/// literal: the providers are in the minimal agent, whose size is held to a ceiling).
pub(super) fn obj(fields: Vec<(&str, Value)>) -> Value {
    Value::Object(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// A JSON string.
pub(super) fn s(text: &str) -> Value {
    Value::String(text.to_string())
}

/// A call's id as Cline's `transformToolCallIdForNativeApi` sends it in Chat Completions (the
/// same for the call and its result, or the server refuses the pair): an id of OpenAI's
/// Responses API (`fc_` and 53 characters: a task begun there) as `call_` and its last 35
/// characters, to any server; to OpenAI's own API (`openai_native`) any id cut to its first 40
/// characters, OpenAI's limit (vLLM's `chatcmpl-tool-…` ids, say, have 46).
fn chat_call_id(id: &str, openai_native: bool) -> String {
    const MAX: usize = 40;
    let chars = id.chars().count();
    if id.starts_with("fc_") && chars == 53 {
        return format!("call_{}", id.chars().skip(chars - (MAX - 5)).collect::<String>());
    }
    if openai_native && chars > MAX {
        return id.chars().take(MAX).collect();
    }
    id.to_string()
}

fn chat_assistant(m: &Message, form: ChatForm) -> Value {
    let ollama = form.ollama;
    let calls: Vec<Value> = m
        .tool_uses()
        .map(|t| {
            if ollama {
                let args: Value = serde_json::from_str(&t.input).unwrap_or_else(|_| json!({}));
                json!({"function": {"name": t.name, "arguments": args}})
            } else {
                let id = chat_call_id(&t.id, form.openai_native);
                let mut call =
                    json!({"id": id, "type": "function", "function": {"name": t.name, "arguments": t.input}});
                // Back to the server that attached it (Google's thought signature).
                if let Some(extra) = &t.extra {
                    call["extra_content"] = extra.clone();
                }
                call
            }
        })
        .collect();
    let details = if ollama { Vec::new() } else { reasoning_details::consolidated(m) };
    let mut msg = if calls.is_empty() {
        json!({"role": "assistant", "content": m.content})
    } else {
        let content = if m.content.is_empty() && !ollama { Value::Null } else { Value::String(m.content.clone()) };
        json!({"role": "assistant", "content": content, "tool_calls": calls})
    };
    // OpenRouter's reasoning objects, never an empty list (Cline: "sending [] can trigger
    // provider validation issues").
    if !details.is_empty() {
        msg["reasoning_details"] = Value::Array(details);
    }
    msg
}

/// Builds the provider's request for this conversation.
pub(crate) fn build_request(cfg: &ApiConfig, system: &str, messages: &[Message]) -> HttpRequest {
    let text_only;
    let messages = if cfg.no_images && messages.iter().any(|m| m.images().next().is_some()) {
        text_only = without_images(messages);
        &text_only[..]
    } else {
        messages
    };
    let limited;
    let wire = Wire::of(cfg);
    let messages = match wire {
        Wire::Anthropic => match within_anthropics_image_limits(messages) {
            Some(fewer) => {
                limited = fewer;
                &limited[..]
            }
            None => messages,
        },
        _ => messages,
    };
    match wire {
        Wire::Anthropic => anthropic::request(cfg, system, messages),
        Wire::ChatCompletions => openai::request(cfg, system, messages),
        Wire::Responses => responses::request(cfg, system, messages),
        Wire::Ollama => ollama::request(cfg, system, messages),
    }
}

/// `messages` with each image taken out and named at the end of its message's text (after the
/// environment details, where no tool result is looked for), for a model that takes none.
fn without_images(messages: &[Message]) -> Vec<Message> {
    named_instead(messages, |i| Some(not_sent(i)))
}

/// `messages` with each image `why` gives a line for (asked in the conversation's order)
/// taken out and that line put at the end of its message's text.
fn named_instead(messages: &[Message], mut why: impl FnMut(&ImagePart) -> Option<String>) -> Vec<Message> {
    messages
        .iter()
        .map(|m| {
            let mut names = Vec::new();
            let parts: Vec<Part> = m
                .parts
                .iter()
                .filter(|p| {
                    let Part::Image(i) = p else { return true };
                    why(i).map(|line| names.push(line)).is_none()
                })
                .cloned()
                .collect();
            if names.is_empty() {
                return m.clone();
            }
            let content = format!("{}\n\n{}", m.content.trim_end(), names.join("\n\n"));
            Message { role: m.role, content, parts }
        })
        .collect()
}

/// Anthropic's limits on the images of one request: at most 100, and in a request of more
/// than 20, none over 2000 pixels a side ("At least one of the image dimensions exceed max
/// allowed size for many-image requests"). Every request carries the whole history, so once a
/// task had read its 21st large screenshot every later request — and every resume — was
/// refused. Past 20 images, those over 2000 pixels a side are named instead of sent (and past
/// 100 the oldest, twenty at a time, so the history's start changes — and its prompt cache is
/// written again — once every twenty images, not with each); when the latest message holds a
/// large image, at most the newest 20 are sent whatever their size (the older ones named
/// twenty at a time too), it among them. `None` when the request is within the limits.
fn within_anthropics_image_limits(messages: &[Message]) -> Option<Vec<Message>> {
    const MANY: usize = 20;
    const MANY_SIDE: u32 = 2000;
    const MOST: usize = 100;
    let images: Vec<&ImagePart> = messages.iter().flat_map(Message::images).collect();
    if images.len() <= MANY {
        return None;
    }
    let large = |i: &ImagePart| i.width.max(i.height) > MANY_SIDE;
    let latest_large = messages.last().is_some_and(|m| m.images().any(large));
    // Whether each image goes, in the conversation's order, and why.
    let why: Vec<Option<String>> = if latest_large {
        // Twenty at a time too (each later image moved the start by one); what is left is at
        // most 20, the latest message's among them unless it holds more than 20 itself.
        let first_kept = (images.len() - MANY).div_ceil(MANY) * MANY;
        let old = |i: &ImagePart| {
            format!("[Image not sent ({}): Anthropic takes an image over {MANY_SIDE} pixels a side only in a request of at most {MANY} images; this is one of the oldest]", i.describe())
        };
        images.iter().enumerate().map(|(k, i)| (k < first_kept).then(|| old(i))).collect()
    } else {
        let small = images.iter().filter(|i| !large(i)).count();
        let mut too_old = small.saturating_sub(MOST).div_ceil(MANY) * MANY;
        let named = |i: &ImagePart, too_old: &mut usize| {
            if large(i) {
                return Some(format!(
                    "[Image not sent ({}): over {MANY_SIDE} pixels a side, which Anthropic refuses in a request of more than {MANY} images]",
                    i.describe()
                ));
            }
            (*too_old > 0).then(|| {
                *too_old -= 1;
                format!("[Image not sent ({}): Anthropic takes at most {MOST} images in a request; this is one of the oldest]", i.describe())
            })
        };
        images.iter().map(|i| named(i, &mut too_old)).collect()
    };
    let mut at = 0;
    Some(named_instead(messages, |_| {
        at += 1;
        why[at - 1].clone()
    }))
}

/// The line that stands for an image a server is not sent.
fn not_sent(i: &ImagePart) -> String {
    format!("[Image not sent ({}): this server takes text only]", i.describe())
}

/// Whether an error refused the request for its image: a server or model without image input
/// (llama.cpp's "image input is not supported - hint: … mmproj", LM Studio's "Model does not
/// support images", vLLM's "At most 0 image(s)", OpenAI's "image_url is only supported by
/// certain models", OpenRouter's "No endpoints found that support image input").
pub(crate) fn images_refused(status: u16, message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    // vLLM's prompt-too-long error speaks of "multimodal tokens" and "image inputs".
    let too_long = ["too long", "context length", "max_model_len", "maximum context"].iter().any(|w| m.contains(w));
    (400..600).contains(&status)
        && !too_long
        && m.contains("image")
        && ["not support", "support image", "only supported", "mmproj", "at most 0"].iter().any(|w| m.contains(w))
}

/// Pulls a readable message out of an error response body (any provider's shape).
pub(crate) fn error_message(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text.trim()) {
        if let Some(m) = json_error_message(&v) {
            return m;
        }
    }
    let t = text.trim();
    if t.is_empty() {
        "(empty response body)".to_string()
    } else {
        crate::run::ui::redact::first_chars(t, 500).into_owned()
    }
}

/// `{"error":{"message":…}}`, `{"error":"…"}`, `{"message":…}`, and any of them as the one
/// element of an array (Gemini's OpenAI-compatible endpoint: `[{"error":{…}}]`).
pub(crate) fn json_error_message(v: &serde_json::Value) -> Option<String> {
    let v = match v.as_array().map(Vec::as_slice) {
        Some([one]) => one,
        _ => v,
    };
    let e = v.get("error").unwrap_or(v);
    if let Some(s) = e.as_str() {
        return Some(s.to_string());
    }
    let msg = e.get("message").and_then(|m| m.as_str())?;
    // The type and a textual code (OpenAI's `context_length_exceeded`) both name the problem.
    let kinds: Vec<&str> = [e.get("type"), e.get("code")]
        .into_iter()
        .flatten()
        .filter_map(|t| t.as_str())
        .filter(|k| !k.is_empty() && *k != "error" && !msg.contains(k))
        .collect();
    Some(if kinds.is_empty() { msg.to_string() } else { format!("{msg} ({})", kinds.join(", ")) })
}

/// Whether an error refused to stream the model: OpenAI streams gpt-5, o3 and others only to
/// organisations it has verified ("Your organization must be verified to stream this model"),
/// and answers the same request without `stream` (Cline fails on every request).
pub(crate) fn stream_refused(status: u16, message: &str) -> bool {
    status == 400 && message.contains("verified to stream")
}

/// A stream decoder for one reply: SSE for Anthropic and OpenAI's two, NDJSON for Ollama; or
/// one whole JSON reply of OpenAI's two ([`Decoder::whole`]).
pub struct Decoder {
    sse: SseDecoder,
    lines: Vec<u8>,
    kind: Kind,
    /// The body so far, for a reply asked for whole: read at its end.
    whole: Option<Vec<u8>>,
}

enum Kind {
    Anthropic(anthropic::Stream),
    OpenAi(openai::Stream),
    Responses(responses::Stream),
    Ollama(ollama::Stream),
}

impl Decoder {
    /// A decoder for a new reply of the wire format `p` speaks to any server
    /// (`Wire::of_provider`).
    pub fn new(p: Provider) -> Self {
        Decoder::of(Wire::of_provider(p))
    }

    /// A decoder for a new reply in wire format `w`.
    pub fn of(w: Wire) -> Self {
        let kind = match w {
            Wire::Anthropic => Kind::Anthropic(anthropic::Stream::default()),
            Wire::ChatCompletions => Kind::OpenAi(openai::Stream::default()),
            Wire::Responses => Kind::Responses(responses::Stream::default()),
            Wire::Ollama => Kind::Ollama(ollama::Stream::default()),
        };
        Decoder { sse: SseDecoder::new(), lines: Vec::new(), kind, whole: None }
    }

    /// A decoder for one reply asked for whole (`stream: false`, `ApiConfig::no_stream`) in
    /// wire format `w`: Chat Completions' `chat.completion` or the Responses API's `response`
    /// object, read when the body ends, as the deltas its stream would have given.
    pub fn whole(w: Wire) -> Self {
        Decoder { whole: Some(Vec::new()), ..Decoder::of(w) }
    }

    /// Feeds raw body bytes.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Delta> {
        if let Some(body) = &mut self.whole {
            if body.len() + bytes.len() > MAX_EVENT_BYTES {
                self.whole = Some(Vec::new());
                return vec![overflow()];
            }
            body.extend_from_slice(bytes);
            return Vec::new();
        }
        if let Kind::Ollama(s) = &mut self.kind {
            let mut out = Vec::new();
            for piece in bytes.split_inclusive(|&b| b == b'\n') {
                if self.lines.len() + piece.len() > MAX_EVENT_BYTES {
                    return vec![overflow()];
                }
                self.lines.extend_from_slice(piece);
                if piece.ends_with(b"\n") {
                    let line = std::mem::take(&mut self.lines);
                    out.extend(s.line(&String::from_utf8_lossy(&line)));
                }
            }
            return out;
        }
        let events = self.sse.push(bytes);
        let mut out = self.events(events);
        if self.sse.overflowed() {
            out.push(overflow());
        }
        out
    }

    /// The body ended.
    pub fn finish(&mut self) -> Vec<Delta> {
        if let Some(body) = self.whole.take() {
            let data = String::from_utf8_lossy(&body).trim().to_string();
            let events = match &self.kind {
                Kind::Responses(_) => responses::as_events(&data),
                // Not JSON (a gateway's page, a stream after all): a failure worth another try,
                // as the stream decoder reads an `error` event's words.
                _ if serde_json::from_str::<serde::de::IgnoredAny>(&data).is_err() => {
                    let start: String = data.chars().take(200).collect();
                    vec![SseEvent { event: Some("error".into()), data: format!("the reply is not JSON: {start}") }]
                }
                _ => vec![SseEvent { event: None, data }],
            };
            let mut out = self.events(events);
            if let Kind::Responses(s) = &mut self.kind {
                out.extend(s.finish());
            }
            return out;
        }
        if let Kind::Ollama(s) = &mut self.kind {
            let rest = std::mem::take(&mut self.lines);
            let mut out = s.line(&String::from_utf8_lossy(&rest));
            out.extend(s.finish());
            return out;
        }
        let events = self.sse.finish();
        let mut out = self.events(events);
        // A stream without its last event was cut on the way.
        out.extend(match &mut self.kind {
            Kind::Anthropic(s) => s.finish(),
            Kind::OpenAi(s) => s.finish(),
            Kind::Responses(s) => s.finish(),
            Kind::Ollama(_) => Vec::new(),
        });
        out
    }

    fn events(&mut self, events: Vec<SseEvent>) -> Vec<Delta> {
        let mut out = Vec::new();
        for ev in &events {
            match &mut self.kind {
                Kind::Anthropic(s) => out.extend(s.event(ev)),
                Kind::OpenAi(s) => out.extend(s.event(ev)),
                Kind::Responses(s) => out.extend(s.event(ev)),
                Kind::Ollama(_) => {}
            }
        }
        out
    }
}

/// The server sent one line (or one event) larger than any real delta: the reply is refused
/// rather than buffered without end.
fn overflow() -> Delta {
    Delta::Error(ApiError::fatal(format!(
        "the server sent a stream line longer than {} MiB; the reply was refused (is --base-url a \
         real model API?)",
        MAX_EVENT_BYTES / (1024 * 1024)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::llm::{Part, ToolUsePart};

    #[test]
    fn openrouter_is_known_by_its_host_alone() {
        assert!(is_openrouter("https://openrouter.ai/api/v1"));
        assert!(is_openrouter("https://OpenRouter.ai:443/api/v1/"));
        assert!(!is_openrouter("https://openrouter.ai.evil.example/api/v1"));
        assert!(!is_openrouter("http://127.0.0.1:8080/v1?openrouter.ai"));
        assert!(!is_openrouter("https://api.openai.com/v1"));
    }

    /// A native read of an image: the reply's call, then its result, the image and the details.
    fn image_read() -> [Message; 3] {
        let mut a = Message::assistant("");
        let input = r#"{"path":"p.png"}"#.into();
        a.parts = vec![Part::ToolUse(ToolUsePart {
            id: "t1".into(),
            name: "read_file".into(),
            input,
            answer: None,
            extra: None,
        })];
        let mut u = Message::user("[read_file for 'p.png'] Result:\nSuccessfully read image\n\n<environment_details>\nE\n</environment_details>");
        let (media_type, data) = ("image/png".to_string(), "iVBORw0KGgo=".to_string());
        u.parts = vec![Part::Image(ImagePart { media_type, data, width: 1, height: 1 })];
        [Message::user("<task>\nt\n</task>"), a, u]
    }

    fn body_for(provider: Provider, model: &str, openai_native: bool, string_contents: bool) -> Value {
        let cfg = ApiConfig {
            base_url: "http://127.0.0.1:1".into(),
            facts: crate::run::llm::models::lookup(provider, model).facts,
            num_ctx: 1,
            string_contents,
            openai_native,
            ..ApiConfig::test(provider, model)
        };
        serde_json::from_slice(&build_request(&cfg, "SYS", &image_read()).body).unwrap()
    }

    /// Anthropic's image limits: past 20 images in a request none over 2000 pixels a side, at
    /// most 100 — every request carries the whole history, so a task that read its 21st large
    /// screenshot was refused for good. Those images are named instead, the newest kept.
    #[test]
    fn a_request_to_anthropic_keeps_within_its_image_limits() {
        let image = |side: u32| {
            Part::Image(ImagePart { media_type: "image/png".into(), data: "AA==".into(), width: side, height: 900 })
        };
        let reads = |sides: &[u32]| {
            let mut history = vec![Message::user("<task>\nt\n</task>")];
            for side in sides {
                history.push(Message::assistant("looking"));
                let mut u = Message::user("[read_file for 'p.png'] Result:\nSuccessfully read image");
                u.parts = vec![image(*side)];
                history.push(u);
            }
            history
        };
        let cfg = ApiConfig::test(Provider::Anthropic, "claude-sonnet-4-5");
        let sent = |history: &[Message]| -> (usize, String) {
            let body: Value = serde_json::from_slice(&build_request(&cfg, "SYS", history).body).unwrap();
            let text = body["messages"].to_string();
            let blocks = body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default());
            let images = blocks.filter(|b| b["type"] == "image").count();
            (images, text)
        };
        // 20 large ones: as they are.
        let (n, text) = sent(&reads(&[2880; 20]));
        assert_eq!(n, 20);
        assert!(!text.contains("Image not sent"));
        // 21 large and 3 small: the small ones only, the others named.
        let mut sides = vec![2880; 21];
        sides.extend([800, 2000, 1200]);
        let (n, text) = sent(&reads(&sides));
        assert_eq!(n, 3);
        assert_eq!(text.matches("[Image not sent (image/png, 2880x900 pixels): over 2000 pixels a side, which Anthropic refuses in a request of more than 20 images]").count(), 21);
        // 105 small: the oldest twenty go (the history's start then stays as it is for the
        // next twenty images).
        let history = reads(&[1000; 105]);
        let (n, text) = sent(&history);
        assert_eq!(n, 85);
        assert_eq!(
            text.matches("Anthropic takes at most 100 images in a request; this is one of the oldest").count(),
            20
        );
        assert_eq!(sent(&reads(&[1000; 120])).0, 100);
        assert_eq!(sent(&reads(&[1000; 121])).0, 81);
        // The latest read is a large screenshot: the newest 20 go as they are, it among them.
        let mut sides = vec![800; 25];
        sides.push(2880);
        let latest_large = reads(&sides);
        let (n, text) = sent(&latest_large);
        assert_eq!(n, 6, "26 images: the oldest 20 named, as one step");
        assert_eq!(text.matches("only in a request of at most 20 images; this is one of the oldest").count(), 20);
        let mut sides = vec![800; 40];
        sides.push(2880);
        assert_eq!(sent(&reads(&sides)).0, 1, "41: the oldest 40");
        sides.pop();
        sides.extend([800, 2880]);
        assert_eq!(sent(&reads(&sides)).0, 2, "42: the same 40, the history's start unchanged");
        let body: Value = serde_json::from_slice(&build_request(&cfg, "SYS", &latest_large).body).unwrap();
        let last = body["messages"].as_array().unwrap().last().unwrap().to_string();
        assert!(last.contains("\"type\":\"image\"") && !last.contains("not sent"), "{last}");
        let body: Value = serde_json::from_slice(&build_request(&cfg, "SYS", &history).body).unwrap();
        let last = body["messages"].as_array().unwrap().last().unwrap().to_string();
        assert!(last.contains("\"type\":\"image\"") && !last.contains("not sent"), "{last}");
    }

    /// Call ids as Cline's `transformToolCallIdForNativeApi` makes them: a task begun on the
    /// Responses API (`fc_…`) or on vLLM (`chatcmpl-tool-…`, 46 characters) goes on at OpenAI's
    /// Chat Completions, which refuses ids over 40 characters; the call and its result keep one id.
    #[test]
    fn call_ids_fit_openais_limit_and_stay_paired() {
        let fc = format!("fc_{}", "0123456789abcdef".repeat(4).get(..50).unwrap());
        let vllm = format!("chatcmpl-tool-{}", "a1".repeat(16));
        assert_eq!((fc.len(), vllm.len()), (53, 46));
        let mut a = Message::assistant("");
        let part = |id: &str| {
            let (name, input, answer, extra) = ("list_files".into(), "{}".into(), Some("[r] Result:\nok".into()), None);
            Part::ToolUse(ToolUsePart { id: id.into(), name, input, answer, extra })
        };
        a.parts = vec![part(&fc), part(&vllm), part("call_short")];
        let u = Message::user("[r] Result:\nok\n\n[r] Result:\nok\n\n[r] Result:\nok");
        let history = [Message::user("<task>\nt\n</task>"), a, u];
        let fc_as = format!("call_{}", &fc[53 - 35..]);
        for (native, want) in [(true, [fc_as.clone(), vllm[..40].to_string()]), (false, [fc_as.clone(), vllm.clone()])]
        {
            let msgs = chat_messages("SYS", &history, ChatForm { openai_native: native, ..ChatForm::default() });
            let calls: Vec<&str> =
                msgs[2]["tool_calls"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
            let answered: Vec<&str> = msgs[3..6].iter().map(|m| m["tool_call_id"].as_str().unwrap()).collect();
            assert_eq!(calls, [want[0].as_str(), want[1].as_str(), "call_short"], "native {native}");
            assert_eq!(answered, calls, "native {native}: each result names its call");
            assert!(!native || calls.iter().all(|id| id.len() <= 40));
        }
    }

    /// A model that takes no images gets each one named after its message's text, on every
    /// wire; the call and its result stay paired.
    #[test]
    fn without_images_each_is_named_in_text_on_every_wire() {
        let named = "[Image not sent (image/png, 1x1 pixels): this server takes text only]";
        for (provider, model, native) in [
            (Provider::Anthropic, "claude-sonnet-4-5", false),
            (Provider::OpenAi, "gpt-4o", false),
            (Provider::OpenAi, "gpt-5", true),
            (Provider::Ollama, "llama3", false),
        ] {
            let mut cfg = ApiConfig {
                base_url: "http://127.0.0.1:1".into(),
                facts: crate::run::llm::models::lookup(provider, model).facts,
                num_ctx: 1,
                openai_native: native,
                no_images: true,
                ..ApiConfig::test(provider, model)
            };
            let body = String::from_utf8(build_request(&cfg, "SYS", &image_read()).body).unwrap();
            assert!(!body.contains("iVBORw0KGgo"), "{model}: {body}");
            assert!(body.contains(named), "{model}: {body}");
            assert!(body.contains("Successfully read image"), "{model}: {body}");
            cfg.no_images = false;
            let body = String::from_utf8(build_request(&cfg, "SYS", &image_read()).body).unwrap();
            assert!(body.contains("iVBORw0KGgo") && !body.contains(named), "{model}: {body}");
        }
    }

    #[test]
    fn refusals_of_an_image_are_told_from_other_errors() {
        for (status, m) in [
            (500, "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj"),
            (400, "Model does not support images. Please use a model that does."),
            (400, "Invalid content type. image_url is only supported by certain models."),
            (404, "No endpoints found that support image input"),
            (400, "At most 0 image(s) may be provided in one request."),
        ] {
            assert!(images_refused(status, m), "{m}");
        }
        for (status, m) in [
            (400, "image exceeds 5 MB maximum: 6000000 bytes > 5242880 bytes"),
            (429, "Rate limit reached"),
            (400, "This model's maximum context length is 8192 tokens"),
            (
                400,
                "The prompt (total length 40000) is too long to fit into the model (context length 32768). Make sure that `max_model_len` is no smaller than the number of text tokens plus multimodal tokens. For image inputs, the number of image tokens depends on the number of images, and possibly their aspect ratios as well.",
            ),
            (200, "image input is not supported"),
        ] {
            assert!(!images_refused(status, m), "{m}");
        }
    }

    /// Each wire carries the image as Cline's converters do, after the call's result.
    #[test]
    fn an_image_goes_after_the_results_on_every_wire() {
        let url = "data:image/png;base64,iVBORw0KGgo=";
        let env = "<environment_details>\nE\n</environment_details>";
        let result = "[read_file for 'p.png'] Result:\nSuccessfully read image";
        let b = body_for(Provider::Anthropic, "claude-sonnet-4-5", false, false);
        let last = &b["messages"][2]["content"];
        assert_eq!(last[0]["type"], "tool_result");
        assert_eq!(
            last[1],
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}})
        );
        assert_eq!(last[2]["text"], env);
        let b = body_for(Provider::OpenAi, "gpt-4o", false, false);
        assert_eq!(b["messages"][3], json!({"role": "tool", "tool_call_id": "t1", "content": result}));
        assert_eq!(
            b["messages"][4],
            json!({"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}, {"type": "text", "text": env}]})
        );
        let b = body_for(Provider::OpenAi, "gpt-5.5", true, false);
        let input = b["input"].as_array().unwrap();
        assert_eq!(input[input.len() - 2]["type"], "function_call_output");
        assert_eq!(
            input[input.len() - 1],
            json!({"role": "user", "content": [{"type": "input_image", "detail": "auto", "image_url": url}, {"type": "input_text", "text": env}]})
        );
        let b = body_for(Provider::Ollama, "llava", false, false);
        assert_eq!(b["messages"][4], json!({"role": "user", "content": env, "images": ["iVBORw0KGgo="]}));
        // A server that takes strings only hears that an image was there, not its bytes.
        let b = body_for(Provider::OpenAi, "local", false, true);
        assert_eq!(
            b["messages"][4]["content"],
            format!("[Image not sent (image/png, 1x1 pixels): this server takes text only]\n\n{env}")
        );
    }

    fn is_overflow(d: &[Delta]) -> bool {
        matches!(d, [Delta::Error(e)] if !e.retryable && e.message.contains("longer than 16 MiB"))
    }

    #[test]
    fn an_ollama_line_split_anywhere_still_arrives_whole() {
        let line = br#"{"message":{"role":"assistant","content":"hi there"},"done":false}"#;
        let mut d = Decoder::new(Provider::Ollama);
        let mut got = d.push(&line[..7]);
        got.extend(d.push(&line[7..]));
        got.extend(d.push(b"\n"));
        assert!(matches!(&got[..], [Delta::Text(t)] if t == "hi there"), "{got:?}");
    }

    #[test]
    fn an_endless_line_is_refused_for_every_wire_format() {
        let chunk = vec![b'x'; 1 << 20];
        for w in [Wire::Ollama, Wire::Anthropic, Wire::ChatCompletions, Wire::Responses] {
            let mut d = Decoder::of(w);
            let mut last = d.push(b"data: ");
            for _ in 0..=MAX_EVENT_BYTES / chunk.len() {
                if !last.is_empty() {
                    break;
                }
                last = d.push(&chunk);
            }
            assert!(is_overflow(&last), "{w:?}: {last:?}");
        }
    }
}

/// The first request of a native task for the four models of the default path, as Cline's
/// providers build it: the settings part of each body.
#[cfg(test)]
mod first_request {
    use serde_json::{json, Value};

    use super::*;
    use crate::run::llm::models;
    use crate::run::llm::tool_specs::Tools;

    pub(crate) fn body(provider: Provider, model: &str, max_tokens: Option<u32>, thinking: Option<u32>) -> Value {
        let cfg = ApiConfig {
            max_tokens,
            facts: models::lookup(provider, model).facts,
            thinking_budget: thinking,
            tools: Some(Tools {
                parallel: true,
                builtin: crate::run::dialect::native::definitions(
                    crate::run::dialect::system::family(true, true, provider.decl().name, model),
                    "/w",
                ),
                extra: Vec::new(),
            }),
            ..ApiConfig::test(provider, model)
        };
        let msgs = [Message::user("<task>\nt\n</task>\n\n<environment_details>\nE\n</environment_details>")];
        serde_json::from_slice(&build_request(&cfg, "SYS", &msgs).body).unwrap()
    }

    /// The body without what is the same for every model (messages' text, tool definitions).
    fn settings(mut b: Value) -> Value {
        let o = b.as_object_mut().unwrap();
        o.remove("tools");
        o.remove("messages");
        o.remove("system");
        b
    }

    #[test]
    fn deepseek_chat_gets_its_tables_output_limit_as_clines_deepseek_provider_sends() {
        // DeepSeek's API stops its chat model at 4K tokens unless told more.
        assert_eq!(body(Provider::OpenAi, "deepseek-chat", None, None)["max_tokens"], json!(8000));
        assert_eq!(body(Provider::OpenAi, "deepseek-chat", Some(2000), None)["max_tokens"], json!(2000));
        // Its thinking models' defaults are above their table's: none sent.
        for model in ["deepseek-reasoner", "deepseek-v4-pro", "gpt-4o"] {
            let b = body(Provider::OpenAi, model, None, None);
            assert_eq!((b.get("max_tokens"), b.get("max_completion_tokens")), (None, None), "{model}");
        }
    }

    #[test]
    fn claude_sonnet_4_5_as_clines_anthropic_provider() {
        let b = body(Provider::Anthropic, "claude-sonnet-4-5", None, None);
        assert_eq!(b["system"], json!([{"text": "SYS", "type": "text", "cache_control": {"type": "ephemeral"}}]));
        // Cline's separate text blocks (task, then environment details), the last one marked.
        assert_eq!(
            b["messages"],
            json!([{"role": "user", "content": [
                {"type": "text", "text": "<task>\nt\n</task>"},
                {"type": "text", "text": "<environment_details>\nE\n</environment_details>", "cache_control": {"type": "ephemeral"}}
            ]}])
        );
        assert_eq!(
            settings(b),
            json!({"model": "claude-sonnet-4-5", "max_tokens": 64000, "temperature": 0, "stream": true,
                   "tool_choice": {"type": "any"}})
        );
        // Thinking: no temperature, no forced tool use.
        let t = settings(body(Provider::Anthropic, "claude-sonnet-4-5", None, Some(2048)));
        assert_eq!(
            t,
            json!({"model": "claude-sonnet-4-5", "thinking": {"type": "enabled", "budget_tokens": 2048},
                   "max_tokens": 64000, "stream": true})
        );
    }

    #[test]
    fn claude_3_7_sonnet_as_clines_anthropic_provider() {
        let b = body(Provider::Anthropic, "claude-3-7-sonnet-20250219", None, None);
        assert_eq!(b["system"][0]["cache_control"], json!({"type": "ephemeral"}));
        assert_eq!(
            settings(b),
            json!({"model": "claude-3-7-sonnet-20250219", "max_tokens": 128000, "temperature": 0, "stream": true,
                   "tool_choice": {"type": "any"}})
        );
    }

    #[test]
    fn gpt_5_as_clines_openai_compatible_provider() {
        let b = body(Provider::OpenAi, "gpt-5", None, None);
        assert_eq!(b["messages"][0], json!({"role": "developer", "content": "SYS"}));
        assert_eq!(
            settings(b),
            json!({"model": "gpt-5", "reasoning_effort": "medium", "stream": true,
                   "stream_options": {"include_usage": true}, "tool_choice": "auto", "parallel_tool_calls": false})
        );
        // --max-tokens on a reasoning model: the parameter the API takes for it.
        let m = body(Provider::OpenAi, "gpt-5", Some(1000), None);
        assert_eq!((m.get("max_tokens"), &m["max_completion_tokens"]), (None, &json!(1000)));
    }

    #[test]
    fn gpt_4o_as_clines_openai_compatible_provider() {
        let b = body(Provider::OpenAi, "gpt-4o", None, None);
        assert_eq!(b["messages"][0], json!({"role": "system", "content": "SYS"}));
        assert_eq!(
            b["messages"][1],
            json!({"role": "user", "content": [
                {"type": "text", "text": "<task>\nt\n</task>"},
                {"type": "text", "text": "<environment_details>\nE\n</environment_details>"}
            ]})
        );
        assert_eq!(
            settings(b),
            json!({"model": "gpt-4o", "temperature": 0, "stream": true, "stream_options": {"include_usage": true},
                   "tool_choice": "auto", "parallel_tool_calls": false})
        );
    }

    #[test]
    fn openrouter_anthropic_models_are_marked_for_caching_as_cline_does() {
        let b = body(Provider::OpenAi, "anthropic/claude-sonnet-4.5", None, None);
        assert_eq!(b["messages"][0]["content"][0]["cache_control"], json!({"type": "ephemeral"}));
        assert_eq!(b["messages"][1]["content"][0].get("cache_control"), None);
        assert_eq!(b["messages"][1]["content"][1]["cache_control"], json!({"type": "ephemeral"}));
        let plain = body(Provider::OpenAi, "gpt-4o", None, None);
        assert!(!plain.to_string().contains("cache_control"));
    }

    #[test]
    fn the_last_two_user_messages_are_marked_on_anthropic() {
        let cfg = ApiConfig {
            facts: models::lookup(Provider::Anthropic, "claude-sonnet-4-5").facts,
            ..ApiConfig::test(Provider::Anthropic, "claude-sonnet-4-5")
        };
        let msgs = [
            Message::user("1"),
            Message::assistant("a"),
            Message::user("2"),
            Message::assistant("b"),
            Message::user("3"),
        ];
        let b: Value = serde_json::from_slice(&build_request(&cfg, "SYS", &msgs).body).unwrap();
        let marked: Vec<bool> =
            (0..5).map(|i| b["messages"][i]["content"].to_string().contains("cache_control")).collect();
        assert_eq!(marked, [false, false, true, false, true]);
    }
}
