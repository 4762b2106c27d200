//! Tokens and cost: per request and in total, priced from `--price-*` flags or Cline's model
//! facts (`llm/models.rs`).
//!
//! Prices are US dollars per million tokens. How a request's usage is priced depends on the wire
//! format: Anthropic reports `input_tokens` *without* the cached part (cache reads and writes come
//! separately), OpenAI-compatible servers report `prompt_tokens` *including* the cached part.

use crate::run::llm::providers::Provider;
use crate::run::llm::Usage;

/// US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prices {
    /// Uncached prompt tokens.
    pub input: f64,
    /// Generated tokens.
    pub output: f64,
    /// Prompt tokens read from the cache.
    pub cache_read: f64,
    /// Prompt tokens written to the cache.
    pub cache_write: f64,
}

/// A task's token and cost totals, over all its runs: in `api_request` and `completion` events
/// and in the saved task (field names are part of both formats).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Totals {
    /// Requests the model answered.
    pub requests: u32,
    /// Prompt tokens.
    pub tokens_in: u64,
    /// Generated tokens.
    pub tokens_out: u64,
    /// Prompt tokens read from the cache.
    pub cache_read: u64,
    /// Prompt tokens written to the cache.
    pub cache_write: u64,
    /// US dollars; `null` for a model without prices.
    pub cost_usd: Option<f64>,
    /// Requests whose counts are estimates (the stream ended before the server's usage).
    pub estimated_requests: u32,
}

/// Built-in prices for a model: Cline's, from the generated model facts
/// ([`crate::run::llm::models`]), or free for a local Ollama model. `None` when Cline's tables do
/// not price the model (its cost is then not reported unless prices are given with flags). A
/// price Cline leaves out (OpenAI's cache writes) is 0, as Cline's cost functions count it.
pub(crate) fn builtin(provider: Provider, model: &str) -> Option<Prices> {
    if provider == Provider::Ollama {
        return Some(Prices { input: 0.0, output: 0.0, cache_read: 0.0, cache_write: 0.0 });
    }
    let f = crate::run::llm::models::lookup(provider, model).facts;
    Some(Prices {
        input: f.input_price?,
        output: f.output_price?,
        cache_read: f.cache_reads_price.unwrap_or(0.0),
        cache_write: f.cache_writes_price.unwrap_or(0.0),
    })
}

/// The prices to use: flags override the built-in table field by field. With flags for an
/// unknown model, cache reads and writes default to the input price (the cautious choice).
pub(crate) fn resolve(
    table: Option<Prices>,
    input: Option<f64>,
    output: Option<f64>,
    cache_read: Option<f64>,
    cache_write: Option<f64>,
) -> Option<Prices> {
    let base = match (table, input, output) {
        (Some(t), ..) => t,
        (None, Some(i), Some(o)) => Prices { input: i, output: o, cache_read: i, cache_write: i },
        (None, ..) => return None,
    };
    Some(Prices {
        input: input.unwrap_or(base.input),
        output: output.unwrap_or(base.output),
        cache_read: cache_read.unwrap_or(base.cache_read),
        cache_write: cache_write.unwrap_or(base.cache_write),
    })
}

/// Whether the provider's prompt count includes the cached tokens (OpenAI-compatible: yes).
pub(crate) fn cache_in_prompt(provider: Option<Provider>) -> bool {
    matches!(provider, Some(Provider::OpenAi))
}

/// The whole prompt of a request in tokens (cached or not).
pub(crate) fn prompt_tokens(u: &Usage, cache_in_prompt: bool) -> u64 {
    if cache_in_prompt {
        u.input
    } else {
        u.input + u.cache_read + u.cache_write
    }
}

/// The cost of one request's usage.
pub(crate) fn cost(u: &Usage, p: &Prices, cache_in_prompt: bool) -> f64 {
    let uncached = if cache_in_prompt { u.input.saturating_sub(u.cache_read + u.cache_write) } else { u.input };
    let m = 1_000_000.0;
    uncached as f64 * p.input / m
        + u.output as f64 * p.output / m
        + u.cache_read as f64 * p.cache_read / m
        + u.cache_write as f64 * p.cache_write / m
}

/// Running totals of a task (including earlier runs of a resumed task) and of this run.
#[derive(Debug, Clone, Default)]
pub struct Accounting {
    prices: Option<Prices>,
    cache_in_prompt: bool,
    /// Token totals of the task.
    pub usage: Usage,
    /// Requests made for the task.
    pub requests: u32,
    /// Requests whose counts are partly estimated (the server's usage never came: it sends
    /// none, or the reply was stopped at its first tool before it).
    pub estimated: u32,
    /// Dollars spent on the task (0 when prices are unknown).
    pub cost: f64,
    /// Dollars spent by this run (what `--max-cost` limits).
    pub run_cost: f64,
}

impl Accounting {
    /// Empty totals, priced with `prices` (`None`: cost unknown).
    pub fn new(prices: Option<Prices>, cache_in_prompt: bool) -> Self {
        Accounting { prices, cache_in_prompt, ..Accounting::default() }
    }

    /// Whether costs can be computed.
    pub(crate) fn priced(&self) -> bool {
        self.prices.is_some()
    }

    /// Whether the provider's prompt count includes the cached tokens.
    pub(crate) fn cache_in_prompt(&self) -> bool {
        self.cache_in_prompt
    }

    /// Adds one request; returns its cost if prices are known.
    pub(crate) fn record(&mut self, u: &Usage, estimated: bool) -> Option<f64> {
        self.usage.add(u);
        self.requests += 1;
        self.estimated += u32::from(estimated);
        let c = self.prices.map(|p| cost(u, &p, self.cache_in_prompt))?;
        self.cost += c;
        self.run_cost += c;
        Some(c)
    }

    /// Adds the usage a request reported before it failed: its tokens and cost count, as
    /// Cline counts them; it is not a request the model answered.
    pub(crate) fn record_failed(&mut self, u: &Usage) {
        self.usage.add(u);
        if let Some(c) = self.prices.map(|p| cost(u, &p, self.cache_in_prompt)) {
            self.cost += c;
            self.run_cost += c;
        }
    }

    /// The totals (for `--json` events and the saved state).
    pub(crate) fn totals(&self) -> Totals {
        Totals {
            requests: self.requests,
            tokens_in: self.usage.input,
            tokens_out: self.usage.output,
            cache_read: self.usage.cache_read,
            cache_write: self.usage.cache_write,
            cost_usd: self.priced().then_some(round(self.cost)),
            estimated_requests: self.estimated,
        }
    }

    /// Restores totals saved by an earlier run (see [`Accounting::totals`]).
    pub(crate) fn restore(&mut self, t: &Totals) {
        self.usage =
            Usage { input: t.tokens_in, output: t.tokens_out, cache_read: t.cache_read, cache_write: t.cache_write };
        self.requests = t.requests;
        self.estimated = t.estimated_requests;
        self.cost = t.cost_usd.unwrap_or(0.0);
    }

    /// The end-of-run summary line.
    pub(crate) fn summary(&self) -> String {
        let u = &self.usage;
        let mut line = format!(
            "Tokens: {} in, {} out (cache: {} read, {} written) over {} request{}",
            u.input,
            u.output,
            u.cache_read,
            u.cache_write,
            self.requests,
            if self.requests == 1 { "" } else { "s" }
        );
        if self.priced() {
            line.push_str(&format!("; cost ${:.4}", self.cost));
        }
        if self.estimated > 0 && self.estimated >= self.requests {
            line.push_str("; the server reported no usage, so these counts are estimates (~4 characters per token)");
        } else if self.estimated > 0 {
            line.push_str(&format!(
                "; the server's usage did not arrive for {} of them, so those counts are estimates (~4 characters per token)",
                self.estimated
            ));
        }
        line
    }
}

/// Dollars rounded to a billionth, so JSON shows `0.0009321` rather than float noise.
pub(crate) fn round(usd: f64) -> f64 {
    (usd * 1e9).round() / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_come_from_clines_model_facts_and_openrouter_names() {
        let p = builtin(Provider::Anthropic, "claude-sonnet-4-5").unwrap();
        assert_eq!((p.input, p.output), (3.0, 15.0));
        let p = builtin(Provider::OpenAi, "anthropic/claude-opus-4.5").unwrap();
        assert_eq!(p.input, 5.0);
        assert_eq!(builtin(Provider::OpenAi, "gpt-4.1-mini").unwrap().input, 0.40);
        assert_eq!(builtin(Provider::OpenAi, "gpt-4.1").unwrap().input, 2.0);
        assert!(builtin(Provider::OpenAi, "my-local-model").is_none());
        assert_eq!(builtin(Provider::Ollama, "anything").unwrap().output, 0.0);
    }

    #[test]
    fn flags_override_and_price_unknown_models() {
        assert!(resolve(None, Some(1.0), None, None, None).is_none());
        let p = resolve(None, Some(1.0), Some(2.0), None, None).unwrap();
        assert_eq!((p.cache_read, p.cache_write), (1.0, 1.0));
        let t = builtin(Provider::Anthropic, "claude-sonnet-4").unwrap();
        let p = resolve(Some(t), None, Some(20.0), None, None).unwrap();
        assert_eq!((p.input, p.output, p.cache_read), (3.0, 20.0, 0.30));
    }

    #[test]
    fn cost_follows_each_wire_format() {
        let p = Prices { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75 };
        let u = Usage { input: 1_000_000, output: 100_000, cache_read: 1_000_000, cache_write: 0 };
        // Anthropic: input excludes the cache.
        assert!((cost(&u, &p, false) - (3.0 + 1.5 + 0.3)).abs() < 1e-9);
        // OpenAI: prompt_tokens includes the cached part.
        assert!((cost(&u, &p, true) - (0.0 + 1.5 + 0.3)).abs() < 1e-9);
        assert_eq!(prompt_tokens(&u, false), 2_000_000);
        assert_eq!(prompt_tokens(&u, true), 1_000_000);
    }

    #[test]
    fn totals_round_trip() {
        let mut a = Accounting::new(builtin(Provider::Anthropic, "claude-sonnet-4"), false);
        a.record(&Usage { input: 1000, output: 10, cache_read: 5, cache_write: 0 }, true);
        let mut b = Accounting::new(None, false);
        b.restore(&a.totals());
        assert_eq!((b.usage, b.requests, b.estimated), (a.usage, 1, 1));
        assert!((b.cost - round(a.cost)).abs() < 1e-12);
        assert_eq!(b.run_cost, 0.0, "a restored total is not this run's spending");
    }

    #[test]
    fn the_summary_says_why_counts_are_estimates_without_blaming_tools() {
        let mut a = Accounting::new(None, false);
        let u = Usage { input: 100, output: 10, ..Usage::default() };
        a.record(&u, true);
        a.record(&u, true);
        let line = a.summary();
        assert!(line.contains("the server reported no usage, so these counts are estimates"), "{line}");
        assert!(!line.contains("tool"), "{line}");
        a.record(&u, false);
        let line = a.summary();
        assert!(line.contains("the server's usage did not arrive for 2 of them"), "{line}");
    }
}

/// A 10-turn task priced from the usage the servers report, decoded from their own wire
/// formats, with and without prompt caching.
#[cfg(test)]
mod ten_turns {
    use super::*;
    use crate::run::llm::providers::{Decoder, Provider};
    use crate::run::llm::Delta;

    /// The usage one reply reports, decoded from the server's SSE bytes.
    fn decoded(p: Provider, sse: &str) -> Usage {
        let mut d = Decoder::new(p);
        let mut out = d.push(sse.as_bytes());
        out.extend(d.finish());
        out.iter().rev().find_map(|x| if let Delta::Usage(u) = x { Some(*u) } else { None }).expect("a usage")
    }

    /// Turn `k` (0-based): a 12,000-token prompt (system + tools) plus 3,000 tokens per earlier
    /// turn, 400 output tokens; with caching everything before the newest user message is read
    /// from the cache and the newest 3,000 are written (Anthropic), or read (OpenAI: automatic).
    fn task_cost(p: Provider, model: &str, cached: bool) -> (f64, Usage) {
        let prices = builtin(p, model).unwrap();
        let mut acct = Accounting::new(Some(prices), cache_in_prompt(Some(p)));
        for k in 0..10u64 {
            let prompt = 12_000 + 3_000 * k;
            let (read, write) = match (cached, k) {
                (false, _) => (0, 0),
                (true, 0) => (0, prompt),
                (true, _) => (prompt - 3_000, 3_000),
            };
            let sse = match p {
                Provider::Anthropic => format!(
                    "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"usage\":{{\"input_tokens\":{},\"output_tokens\":1,\"cache_creation_input_tokens\":{write},\"cache_read_input_tokens\":{read}}}}}}}\n\n\
                     event: message_delta\ndata: {{\"type\":\"message_delta\",\"delta\":{{\"stop_reason\":\"end_turn\"}},\"usage\":{{\"output_tokens\":400}}}}\n\n",
                    prompt - read - write
                ),
                _ => format!(
                    "data: {{\"choices\":[],\"usage\":{{\"prompt_tokens\":{prompt},\"completion_tokens\":400,\"prompt_tokens_details\":{{\"cached_tokens\":{}}}}}}}\n\ndata: [DONE]\n\n",
                    if cached { read } else { 0 }
                ),
            };
            acct.record(&decoded(p, &sse), false);
        }
        (acct.cost, acct.usage)
    }

    #[test]
    fn caching_cuts_the_cost_of_a_ten_turn_task() {
        for (p, model) in [
            (Provider::Anthropic, "claude-sonnet-4-5"),
            (Provider::Anthropic, "claude-3-7-sonnet-20250219"),
            (Provider::OpenAi, "gpt-5"),
            (Provider::OpenAi, "gpt-4o"),
        ] {
            let (plain, u0) = task_cost(p, model, false);
            let (cached, u1) = task_cost(p, model, true);
            println!(
                "{model}: 10 turns without caching ${plain:.4} ({} in, {} out); with caching ${cached:.4} (cache read {}, cache write {})",
                u0.input, u0.output, u1.cache_read, u1.cache_write
            );
            assert!(u1.cache_read > 0, "{model}: the cache reads are read back");
            assert!(cached < plain * 0.65, "{model}: {cached} vs {plain}");
        }
        // The arithmetic, for claude-sonnet-4-5 ($3 in, $15 out, $0.30 read, $3.75 write):
        // without caching 255,000 × $3 + 4,000 × $15 per million.
        let (plain, _) = task_cost(Provider::Anthropic, "claude-sonnet-4-5", false);
        assert!((plain - (0.765 + 0.06)).abs() < 1e-9, "{plain}");
        // with caching 216,000 read × $0.30 + 39,000 written × $3.75 + 4,000 × $15.
        let (cached, _) = task_cost(Provider::Anthropic, "claude-sonnet-4-5", true);
        assert!((cached - (0.0648 + 0.14625 + 0.06)).abs() < 1e-9, "{cached}");
    }
}
