//! What the loop sees of a model API: messages in, a stream of [`Delta`]s out, errors classified
//! for retrying. These types are shared by the providers' wire formats and by every
//! [`Transport`] (the HTTP one in `http.rs`, the replay one in `run/replay.rs`), so they
//! depend on nothing else in the agent.

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The person, or tool results sent on their behalf.
    User,
    /// The model.
    Assistant,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// What was said: the whole text (in the XML dialect, tool calls included).
    pub content: String,
    /// What a reply carried beside its text: thinking blocks and native tool calls, in the
    /// order the model produced them (none in the XML dialect); what a user message carries
    /// beside its text: the images `read_file` read, in order.
    pub parts: Vec<Part>,
}

impl Message {
    /// A user message of plain text.
    pub(crate) fn user(content: impl Into<String>) -> Self {
        Message { role: Role::User, content: content.into(), parts: Vec::new() }
    }

    /// An assistant message of plain text.
    pub(crate) fn assistant(content: impl Into<String>) -> Self {
        Message { role: Role::Assistant, content: content.into(), parts: Vec::new() }
    }

    /// The native tool calls of this message, in order.
    pub(crate) fn tool_uses(&self) -> impl Iterator<Item = &ToolUsePart> {
        self.parts.iter().filter_map(|p| match p {
            Part::ToolUse(t) => Some(t),
            _ => None,
        })
    }

    /// What this message weighs in a request, in bytes: its text and every part — thinking
    /// and signatures, calls' arguments and what a server attached to them, reasoning objects,
    /// an image as the bytes of its estimated tokens (about 4 a token), not as its base64. A
    /// call's result is the user message's after it (`providers::history::request_bytes`
    /// counts a conversation so, each result once).
    pub(crate) fn request_bytes(&self) -> usize {
        let part = |p: &Part| match p {
            Part::Thinking { text, signature } => text.len() + signature.as_ref().map_or(0, String::len),
            Part::RedactedThinking { data } => data.len(),
            Part::ToolUse(t) => t.name.len() + t.input.len() + t.extra.as_ref().map_or(0, json_bytes),
            Part::Image(i) => i.estimated_tokens() as usize * 4,
            Part::ReasoningDetails(d) => d.iter().map(json_bytes).sum(),
            Part::TextEnd(_) => 0,
        };
        self.content.len() + self.parts.iter().map(part).sum::<usize>()
    }

    /// The images of this (user) message, in order.
    pub(crate) fn images(&self) -> impl Iterator<Item = &ImagePart> {
        self.parts.iter().filter_map(|p| match p {
            Part::Image(i) => Some(i),
            _ => None,
        })
    }
}

/// The bytes of `v` as JSON text (what it weighs in a request, and against a reply's bounds).
pub(crate) fn json_bytes(v: &serde_json::Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// A block of a reply other than its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Reasoning. Anthropic's carries a `signature` that must go back unchanged with the
    /// thinking when tools are used; OpenAI-compatible reasoning has none, and goes back only to
    /// DeepSeek's and Kimi's models (`providers::openai`).
    Thinking {
        /// The reasoning text.
        text: String,
        /// Anthropic's signature, if any.
        signature: Option<String>,
    },
    /// Anthropic's encrypted thinking: opaque, sent back exactly as received.
    RedactedThinking {
        /// The encrypted data.
        data: String,
    },
    /// A native tool call.
    ToolUse(ToolUsePart),
    /// An image a user message carries (a `read_file` of an image), after its tool results.
    Image(ImagePart),
    /// Where the reply's text stood among its other blocks: its text since the previous mark,
    /// up to byte `.0` of the message's text, was one block here. Only a reply whose blocks
    /// came in another order than its thinking, its text, its calls has marks (Anthropic takes
    /// the thinking of such an interleaved reply back only block for block, where it stood); a
    /// message without them sends its text before its calls.
    TextEnd(usize),
    /// OpenRouter's `reasoning_details` of a reply, each object as streamed: what it needs back
    /// to go on reasoning through tool calls (Gemini 3's thought signatures among them; its
    /// "Preserving reasoning blocks"), sent back consolidated as Cline does.
    ReasoningDetails(Vec<serde_json::Value>),
}

#[cfg(test)]
impl Part {
    /// A `read_file` call `id` with empty arguments and no answer yet (for tests).
    pub(crate) fn read_file_call(id: &str) -> Part {
        Part::ToolUse(ToolUsePart {
            id: id.into(),
            name: "read_file".into(),
            input: "{}".into(),
            answer: None,
            extra: None,
        })
    }
}

/// An image as it is kept in history and sent: base64 of the file's bytes, never text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImagePart {
    /// `image/png`, `image/jpeg` or `image/webp`.
    pub media_type: String,
    /// The bytes in standard base64.
    pub data: String,
    /// Width in pixels (for the token estimate).
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl ImagePart {
    /// `data:MEDIA;base64,DATA`, as OpenAI's APIs take an image (Cline's `getImageDataUrl`).
    pub(crate) fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }

    /// What the image is, without its bytes: for the terminal, events and text-only servers.
    pub(crate) fn describe(&self) -> String {
        format!("{}, {}x{} pixels", self.media_type, self.width, self.height)
    }

    /// Its estimated tokens: Anthropic's documented `width × height / 750`, after the API's
    /// downscaling to a long side of at most 1568 pixels (so at most about 1,600 per image;
    /// OpenAI's tiles come to less). The base64 bytes are not text tokens: counted as text, a
    /// 1 MB screenshot would look like 330,000 tokens and cut the history for nothing.
    pub(crate) fn estimated_tokens(&self) -> u64 {
        let (w, h) = (f64::from(self.width.max(1)), f64::from(self.height.max(1)));
        let scale = (1568.0 / w.max(h)).min(1.0);
        ((w * scale) * (h * scale) / 750.0).ceil().min(1600.0) as u64
    }
}

/// A native tool call as it is kept in history and sent back to the API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolUsePart {
    /// The provider's call id (Anthropic `toolu_…`, OpenAI `call_…`; made up for Ollama).
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments as a JSON object text (always valid: `{}` when the model's were not).
    pub input: String,
    /// The result already decided when the reply was read (a further call answered with
    /// Cline's `toolAlreadyUsed`). `None`: the next user message is this call's result.
    pub answer: Option<String>,
    /// What the server attached to the call to have it back with it: Google's `extra_content`
    /// (Gemini 3's thought signature, without which its API refuses the next request).
    pub extra: Option<serde_json::Value>,
}

/// A piece of a reply beyond text and reasoning text: native tool calls and what Anthropic's
/// thinking blocks carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockDelta {
    /// A fragment of tool call number `index` (its position in the reply). `id` and `name`
    /// come with the first fragment; `arguments` is the next piece of its JSON text.
    ToolCall {
        /// Which call of the reply.
        index: usize,
        /// The call id, when the server sends it.
        id: Option<String>,
        /// The tool name, when the server sends it.
        name: Option<String>,
        /// The next piece of the arguments' JSON text.
        arguments: String,
    },
    /// A new thinking block starts (Anthropic `content_block_start` of type `thinking`).
    ThinkingStart,
    /// The signature of the current thinking block.
    Signature(String),
    /// A redacted thinking block, opaque.
    RedactedThinking(String),
    /// What the server attached to call number `index` (Google's `extra_content`).
    CallExtra {
        /// Which call of the reply.
        index: usize,
        /// The attached object.
        extra: serde_json::Value,
    },
    /// OpenRouter's `reasoning_details` objects of one delta.
    ReasoningDetails(Vec<serde_json::Value>),
}

/// Token counts of one request (fields are totals for that request), and what the server
/// billed for it when it says.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    /// Prompt tokens.
    pub input: u64,
    /// Generated tokens.
    pub output: u64,
    /// Prompt tokens read from the cache.
    pub cache_read: u64,
    /// Prompt tokens written to the cache.
    pub cache_write: u64,
    /// US dollars the server says the request cost (OpenRouter's `usage.cost`): what the user
    /// pays, used instead of the model's prices.
    pub billed: Option<f64>,
}

impl Usage {
    /// Adds another request's usage to this total.
    pub(crate) fn add(&mut self, o: &Usage) {
        // Counts are the server's: saturating, so that no figure it sends can wrap a total.
        self.input = self.input.saturating_add(o.input);
        self.output = self.output.saturating_add(o.output);
        self.cache_read = self.cache_read.saturating_add(o.cache_read);
        self.cache_write = self.cache_write.saturating_add(o.cache_write);
        self.billed = match (self.billed, o.billed) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// It finished its turn.
    EndTurn,
    /// It hit the output token limit: the reply is cut.
    MaxTokens,
    /// The provider's safety system ended the reply (Anthropic's `refusal`, OpenAI's
    /// `content_filter`), in its word: the same conversation would be refused again.
    Refused(String),
    /// Anything else the server said.
    Other(String),
}

/// One piece of a streamed reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Delta {
    /// Reply text.
    Text(String),
    /// Reasoning / thinking text (shown dimmed; sent back only as Anthropic thinking with its
    /// signature).
    Reasoning(String),
    /// Native tool calls and thinking-block structure.
    Block(BlockDelta),
    /// The usage of this request so far (a full snapshot, not an increment).
    Usage(Usage),
    /// The stop reason.
    Stop(StopReason),
    /// A mid-stream error object.
    Error(ApiError),
    /// No byte of the stream came for [`QUIET_AFTER`] after the last delta: what the consumer
    /// holds back to coalesce can go out now, not when the next byte comes.
    Quiet,
}

/// How long a stream may pause before the consumer hears [`Delta::Quiet`].
pub const QUIET_AFTER: std::time::Duration = std::time::Duration::from_millis(100);

/// What the consumer wants after a delta.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Keep reading.
    Continue,
    /// Stop reading the stream now.
    Stop,
    /// The reply is decided (a tool block closed): read on only to learn its final usage, and
    /// stop at this instant at the latest, even if no byte arrives.
    Drain(std::time::Instant),
}

impl Flow {
    /// Whether the transport must stop reading now.
    pub fn stops_now(self) -> bool {
        match self {
            Flow::Continue => false,
            Flow::Stop => true,
            Flow::Drain(until) => std::time::Instant::now() >= until,
        }
    }
}

/// An API failure, classified.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status, if the failure had one.
    pub status: Option<u16>,
    /// The server's (or curl's) message.
    pub message: String,
    /// Whether trying again may help (429, 529/overloaded, 5xx, dropped connections).
    pub retryable: bool,
    /// The server's `retry-after`, in seconds.
    pub retry_after: Option<f64>,
}

impl ApiError {
    /// A failure that retrying will not fix.
    pub fn fatal(message: impl Into<String>) -> Self {
        ApiError { status: None, message: message.into(), retryable: false, retry_after: None }
    }

    /// Classifies an HTTP error status and its body's message.
    pub(crate) fn from_status(status: u16, message: String, retry_after: Option<f64>) -> Self {
        let lower = message.to_ascii_lowercase();
        // Out of money, by the servers' own codes and wordings — not any mention of billing:
        // Groq's per-minute limit ends "Upgrade to Dev Tier today at …/settings/billing", and
        // clears in seconds.
        let quota = [
            "insufficient_quota",
            "exceeded your current quota",
            "credit balance",
            "billing_error",
            "billing_not_active",
            "billing_hard_limit",
            "check your billing details",
        ]
        .iter()
        .any(|w| lower.contains(w));
        // The statuses Anthropic's and OpenAI's SDKs retry: 408, 409 (a lock conflict), 429, 5xx.
        let retryable = !quota && (matches!(status, 408 | 409 | 429) || status >= 500);
        ApiError { status: Some(status), message, retryable, retry_after }
    }
}

impl ApiError {
    /// Whether the server refused the prompt as longer than the model's context window:
    /// Anthropic "prompt is too long" and "input length and `max_tokens` exceed context limit",
    /// OpenAI `context_length_exceeded`, llama.cpp `exceed_context_size_error`, and the
    /// wordings of other servers Cline's `context-error-handling.ts` knows (context length or
    /// window, maximum context, tokens exceed, too many tokens, Cerebras' "reduce the length";
    /// Gemini's "input token count … exceeds the maximum number of tokens allowed", "input is
    /// too long", "requested input length … exceeds … maximum input length", and Bedrock's
    /// "total number of tokens … exceeds … limit", "requested … tokens … exceeds … limit").
    pub(crate) fn is_context_overflow(&self) -> bool {
        // As Cline: a refusal of the request (400; 413 from some proxies), or an error in the
        // stream (no status) — never a rate limit or a server error that mentions a context.
        if !matches!(self.status, None | Some(400) | Some(413)) {
            return false;
        }
        let m = self.message.to_ascii_lowercase();
        // Each wording's words in order, with anything between them (Cline's `.*`), each as
        // words (Cline's `\b`): `max_tokens exceeds` is not `tokens exceed`.
        let said = |words: &&[&str]| {
            let mut from = 0;
            words.iter().all(|w| {
                let at = m[from..]
                    .match_indices(*w)
                    .map(|(i, _)| from + i)
                    .find(|&i| !m[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_'));
                at.map(|i| from = i + w.len()).is_some()
            })
        };
        let wordings: &[&[&str]] = &[
            &["prompt is too long"],
            &["exceed context limit"],
            &["context_length_exceeded"],
            &["exceed_context_size_error"],
            &["maximum context"],
            &["context window"],
            &["context length"],
            &["exceeds the available context size"],
            &["tokens exceed"],
            &["too many tokens"],
            &["reduce", "length", "messages", "completion"],
            &["input is too long"],
            // Gemini: "The input token count (1200000) exceeds the maximum number of tokens
            // allowed (1048576)." (Cline's pattern has "count exceeds" side by side.)
            &["input token count", "exceeds", "maximum", "tokens allowed"],
            &["input token count", "exceeds", "maximum", "token allowed"],
            &["requested input length", "exceeds", "maximum input length"],
            &["total number of tokens", "exceeds", "limit"],
            &["requested", "tokens", "exceeds", "limit"],
        ];
        wordings.iter().any(said)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.status {
            Some(s) => write!(f, "HTTP {s}: {}", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

/// A way to get the model's reply to a conversation.
pub trait Transport {
    /// Streams one reply, calling `on` for each delta until it returns [`Flow::Stop`], the
    /// instant of a [`Flow::Drain`] passes, or the reply ends.
    fn send(&mut self, system: &str, messages: &[Message], on: &mut dyn FnMut(Delta) -> Flow) -> Result<(), ApiError>;

    /// The provider name used in messages (e.g. "anthropic").
    fn provider(&self) -> &str;

    /// The native tool definitions to send from the next request on (the native dialect sets
    /// them before every request); a transport without a wire of its own ignores them.
    fn set_tools(&mut self, _tools: super::tool_specs::Tools) {}

    /// The most output tokens a request asks for (`--max-tokens`), if this transport sets one:
    /// an estimated count never says more than the server was allowed to send.
    fn max_output(&self) -> Option<u64> {
        None
    }

    /// The server's words, once, if it refused a request for its image and the transport sent
    /// it again with the images named in text, as it will from then on.
    fn images_refused(&mut self) -> Option<String> {
        None
    }
}
