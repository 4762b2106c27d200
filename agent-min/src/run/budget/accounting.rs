//! Tokens and cost: per request and in total, priced from `--price-*` flags or Cline's model
//! facts (`llm/models.rs`).
//!
//! Prices are US dollars per million tokens. How a request's usage is priced depends on the wire
//! format: Anthropic reports `input_tokens` *without* the cached part (cache reads and writes come
//! separately), OpenAI-compatible servers report `prompt_tokens` *including* the cached part.
//!
//! A model with price tiers (Cline's `:1m` Claude models) is priced per request by the size of
//! its prompt, as Cline's `calculateApiCostInternal` (`src/utils/cost.ts`) does: the whole
//! prompt — cached or not, `prompt_tokens` — picks the first tier (by ascending limit) whose
//! limit it does not exceed (the last tier past them all), and that tier's prices replace all
//! four (a price the tier leaves out stays the model's own).

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

/// A model's prices: one set for any request, or tiers by the size of the request's prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Pricing {
    /// The prices of a model without tiers; a tier's for any price it leaves out.
    pub base: Prices,
    /// `(most prompt tokens, prices)` by ascending limit (`u64::MAX`: no limit); empty: `base`
    /// for any prompt.
    pub tiers: Vec<(u64, Prices)>,
}

impl From<Prices> for Pricing {
    fn from(base: Prices) -> Self {
        Pricing { base, tiers: Vec::new() }
    }
}

impl Pricing {
    /// The prices of a request whose whole prompt is `prompt` tokens: the first tier whose limit
    /// is at least `prompt`, else the last tier (Cline's fallback), else `base`.
    pub fn at(&self, prompt: u64) -> Prices {
        let tier = self.tiers.iter().find(|(limit, _)| prompt <= *limit).or(self.tiers.last());
        tier.map_or(self.base, |(_, p)| *p)
    }
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
/// Cline's price tiers come along (sorted by limit, as Cline sorts them).
pub(crate) fn builtin(provider: Provider, model: &str) -> Option<Pricing> {
    if provider == Provider::Ollama {
        return Some(Prices { input: 0.0, output: 0.0, cache_read: 0.0, cache_write: 0.0 }.into());
    }
    let f = crate::run::llm::models::lookup(provider, model).facts;
    let base = Prices {
        input: f.input_price?,
        output: f.output_price?,
        cache_read: f.cache_reads_price.unwrap_or(0.0),
        cache_write: f.cache_writes_price.unwrap_or(0.0),
    };
    let mut tiers: Vec<(u64, Prices)> = f
        .tiers
        .iter()
        .map(|t| {
            let prices = Prices {
                input: t.input_price.unwrap_or(base.input),
                output: t.output_price.unwrap_or(base.output),
                cache_read: t.cache_reads_price.unwrap_or(base.cache_read),
                cache_write: t.cache_writes_price.unwrap_or(base.cache_write),
            };
            (t.context_window.unwrap_or(u64::MAX), prices)
        })
        .collect();
    tiers.sort_by_key(|(limit, _)| *limit);
    Some(Pricing { base, tiers })
}

/// The prices to use: flags override the built-in table field by field, in every tier of a
/// tiered model (a flag's price holds for any prompt size; the prices not flagged stay the
/// table's, tiered). With flags for an unknown model, cache reads and writes default to the
/// input price (the cautious choice).
pub(crate) fn resolve(
    table: Option<Pricing>,
    input: Option<f64>,
    output: Option<f64>,
    cache_read: Option<f64>,
    cache_write: Option<f64>,
) -> Option<Pricing> {
    let table = match (table, input, output) {
        (Some(t), ..) => t,
        (None, Some(i), Some(o)) => Prices { input: i, output: o, cache_read: i, cache_write: i }.into(),
        (None, ..) => return None,
    };
    let flagged = |p: Prices| Prices {
        input: input.unwrap_or(p.input),
        output: output.unwrap_or(p.output),
        cache_read: cache_read.unwrap_or(p.cache_read),
        cache_write: cache_write.unwrap_or(p.cache_write),
    };
    Some(Pricing {
        base: flagged(table.base),
        tiers: table.tiers.into_iter().map(|(limit, p)| (limit, flagged(p))).collect(),
    })
}

/// Whether the provider's prompt count includes the cached tokens (OpenAI-compatible: yes).
pub(crate) fn cache_in_prompt(provider: Option<Provider>) -> bool {
    matches!(provider, Some(Provider::OpenAi))
}

/// A request's tokens, prompt and output, each counted once: Cline adds the cache counts to
/// the input, which on the OpenAI-compatible wire already holds them (its prompt count includes
/// cached tokens, and DeepSeek's reads and writes are its hits and misses), so the "Context
/// Window Usage" it tells the model there is up to twice the real one.
pub(crate) fn request_tokens(u: &Usage, cache_in_prompt: bool) -> u64 {
    prompt_tokens(u, cache_in_prompt).saturating_add(u.output)
}

/// The whole prompt of a request in tokens (cached or not).
pub(crate) fn prompt_tokens(u: &Usage, cache_in_prompt: bool) -> u64 {
    if cache_in_prompt {
        u.input
    } else {
        // The server's counts: saturating, whatever it sends.
        u.input.saturating_add(u.cache_read).saturating_add(u.cache_write)
    }
}

/// The cost of one request's usage, at the prices of its prompt's size.
pub(crate) fn cost(u: &Usage, p: &Pricing, cache_in_prompt: bool) -> f64 {
    let p = p.at(prompt_tokens(u, cache_in_prompt));
    let cached = u.cache_read.saturating_add(u.cache_write);
    let uncached = if cache_in_prompt { u.input.saturating_sub(cached) } else { u.input };
    let m = 1_000_000.0;
    uncached as f64 * p.input / m
        + u.output as f64 * p.output / m
        + u.cache_read as f64 * p.cache_read / m
        + u.cache_write as f64 * p.cache_write / m
}

/// Running totals of a task (including earlier runs of a resumed task) and of this run.
#[derive(Debug, Clone, Default)]
pub struct Accounting {
    prices: Option<Pricing>,
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
    /// Whether costs are known without prices: a server's bill (see [`Usage::billed`]), or the
    /// saved totals of an earlier run that knew them.
    billed: bool,
    /// Requests of this run with usage but no cost (a resumed task priced by an earlier run's
    /// `--price-*` flags, resumed without them; a reply a billing gateway sent no bill for):
    /// the cost shown leaves them out.
    unpriced: u32,
}

impl Accounting {
    /// Empty totals, priced with `prices` (`None`: cost unknown).
    pub fn new(prices: Option<Pricing>, cache_in_prompt: bool) -> Self {
        Accounting { prices, cache_in_prompt, ..Accounting::default() }
    }

    /// Whether costs are known: from prices, or from what the server billed.
    pub(crate) fn priced(&self) -> bool {
        self.prices.is_some() || self.billed
    }

    /// A request's cost: what the server billed, else its usage at the model's prices.
    fn cost_of(&mut self, u: &Usage) -> Option<f64> {
        self.billed |= u.billed.is_some();
        let c = u.billed.or_else(|| self.prices.as_ref().map(|p| cost(u, p, self.cache_in_prompt)));
        self.unpriced += u32::from(c.is_none() && (u.input > 0 || u.output > 0));
        c
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
        let c = self.cost_of(u)?;
        self.cost += c;
        self.run_cost += c;
        Some(c)
    }

    /// Adds the usage a request reported before it failed: its tokens and cost count, as
    /// Cline counts them; it is not a request the model answered.
    pub(crate) fn record_failed(&mut self, u: &Usage) {
        self.usage.add(u);
        if let Some(c) = self.cost_of(u) {
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
        self.usage = Usage {
            input: t.tokens_in,
            output: t.tokens_out,
            cache_read: t.cache_read,
            cache_write: t.cache_write,
            billed: None,
        };
        self.requests = t.requests;
        self.estimated = t.estimated_requests;
        self.cost = t.cost_usd.unwrap_or(0.0);
        // A server's bill or an earlier run's `--price-*` flags: known once, kept (a resumed
        // run that fails before its first billed reply saved `null` over them).
        self.billed |= t.cost_usd.is_some();
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
            if self.unpriced > 0 {
                line.push_str(&format!(
                    " without {} request{} of this run, which had neither prices (--price-* flags, as an earlier run of the task may have had) nor a bill from the server",
                    self.unpriced,
                    if self.unpriced == 1 { "" } else { "s" }
                ));
            }
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

    /// Each token once: on the OpenAI-compatible wire the prompt count already holds the
    /// cached tokens (DeepSeek's hits and misses too), on Anthropic's it does not.
    #[test]
    fn a_requests_tokens_count_the_cached_ones_once() {
        let openai = Usage { input: 1000, output: 50, cache_read: 800, cache_write: 200, billed: None };
        assert_eq!(request_tokens(&openai, true), 1050);
        let anthropic = Usage { input: 200, output: 50, cache_read: 800, cache_write: 0, billed: None };
        assert_eq!(request_tokens(&anthropic, false), 1050);
        // A server's absurd counts saturate; they never wrap (nor panic where overflow is checked).
        let absurd =
            Usage { input: u64::MAX, output: u64::MAX, cache_read: u64::MAX, cache_write: u64::MAX, billed: None };
        assert_eq!((request_tokens(&absurd, false), request_tokens(&absurd, true)), (u64::MAX, u64::MAX));
        let mut a = Accounting::new(builtin(Provider::Anthropic, "claude-sonnet-4-5"), false);
        a.record(&absurd, false);
        a.record(&absurd, false);
        assert_eq!(a.usage.input, u64::MAX);
    }

    /// A resumed task keeps the cost its earlier runs knew, though this run has no prices
    /// (a model costed from the server's bill, or first run with `--price-*` flags).
    #[test]
    fn a_resumed_tasks_known_cost_is_kept_without_prices() {
        let saved = Totals { requests: 3, cost_usd: Some(0.5), ..Totals::default() };
        let mut a = Accounting::new(None, true);
        a.restore(&saved);
        assert_eq!(a.totals().cost_usd, Some(0.5));
        assert!(a.summary().contains("cost $0.5000"), "{}", a.summary());
        let mut unknown = Accounting::new(None, true);
        unknown.restore(&Totals { cost_usd: None, ..saved });
        assert_eq!(unknown.totals().cost_usd, None);
    }

    #[test]
    fn prices_come_from_clines_model_facts_and_openrouter_names() {
        let p = builtin(Provider::Anthropic, "claude-sonnet-4-5").unwrap().base;
        assert_eq!((p.input, p.output), (3.0, 15.0));
        let p = builtin(Provider::OpenAi, "anthropic/claude-opus-4.5").unwrap().base;
        assert_eq!(p.input, 5.0);
        assert_eq!(builtin(Provider::OpenAi, "gpt-4.1-mini").unwrap().base.input, 0.40);
        assert_eq!(builtin(Provider::OpenAi, "gpt-4.1").unwrap().base.input, 2.0);
        assert!(builtin(Provider::OpenAi, "my-local-model").is_none());
        assert_eq!(builtin(Provider::Ollama, "anything").unwrap().base.output, 0.0);
    }

    #[test]
    fn flags_override_and_price_unknown_models() {
        assert!(resolve(None, Some(1.0), None, None, None).is_none());
        let p = resolve(None, Some(1.0), Some(2.0), None, None).unwrap().base;
        assert_eq!((p.cache_read, p.cache_write), (1.0, 1.0));
        let t = builtin(Provider::Anthropic, "claude-sonnet-4").unwrap();
        let p = resolve(Some(t), None, Some(20.0), None, None).unwrap().base;
        assert_eq!((p.input, p.output, p.cache_read), (3.0, 20.0, 0.30));
    }

    #[test]
    fn a_price_flag_holds_at_every_tier_and_the_others_stay_tiered() {
        let t = builtin(Provider::Anthropic, "claude-sonnet-4-5:1m").unwrap();
        let p = resolve(Some(t), None, Some(20.0), None, None).unwrap();
        let (below, above) = (p.at(200_000), p.at(200_001));
        assert_eq!((below.input, below.output, below.cache_read), (3.0, 20.0, 0.3));
        assert_eq!((above.input, above.output, above.cache_read), (6.0, 20.0, 0.6));
        // All four flags: one price for any prompt.
        let t = builtin(Provider::Anthropic, "claude-sonnet-4-5:1m").unwrap();
        let p = resolve(Some(t), Some(1.0), Some(2.0), Some(0.1), Some(1.5)).unwrap();
        assert_eq!(p.at(10), p.at(900_000));
        assert_eq!(p.at(900_000), Prices { input: 1.0, output: 2.0, cache_read: 0.1, cache_write: 1.5 });
    }

    #[test]
    fn cost_follows_each_wire_format() {
        let p = Prices { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75 };
        let u = Usage { input: 1_000_000, output: 100_000, cache_read: 1_000_000, cache_write: 0, billed: None };
        let p = Pricing::from(p);
        // Anthropic: input excludes the cache.
        assert!((cost(&u, &p, false) - (3.0 + 1.5 + 0.3)).abs() < 1e-9);
        // OpenAI: prompt_tokens includes the cached part.
        assert!((cost(&u, &p, true) - (0.0 + 1.5 + 0.3)).abs() < 1e-9);
        assert_eq!(prompt_tokens(&u, false), 2_000_000);
        assert_eq!(prompt_tokens(&u, true), 1_000_000);
    }

    /// One request's cost on a fresh account for `model`, as `record` reports it.
    fn one_request(provider: Provider, model: &str, u: Usage) -> f64 {
        let mut a = Accounting::new(builtin(provider, model), cache_in_prompt(Some(provider)));
        a.record(&u, false).expect("a priced model")
    }

    #[test]
    fn a_1m_model_costs_its_upper_tier_above_200k_prompt_tokens_as_cline_prices_it() {
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        // Cline's CLAUDE_SONNET_1M_TIERS: up to 200,000 prompt tokens $3 in, $15 out, $0.30
        // cache read, $3.75 cache write; above, $6, $22.50, $0.60, $7.50. The prompt is
        // input + cache writes + cache reads on Anthropic's wire (calculateApiCostAnthropic).
        let below = Usage { input: 150_000, output: 2_000, cache_read: 40_000, cache_write: 5_000, billed: None };
        let c = one_request(Provider::Anthropic, "claude-sonnet-4-5:1m", below);
        assert!(near(c, 0.45 + 0.03 + 0.012 + 0.01875), "195,000 prompt tokens: {c}");
        let above = Usage { input: 150_000, output: 2_000, cache_read: 50_000, cache_write: 5_000, billed: None };
        let c = one_request(Provider::Anthropic, "claude-sonnet-4-5:1m", above);
        assert!(near(c, 0.9 + 0.045 + 0.03 + 0.0375), "205,000 prompt tokens: {c}");
        // The limit itself is the lower tier (Cline's `total <= contextWindow`).
        let at = |input| Usage { input, ..Usage::default() };
        assert!(near(one_request(Provider::Anthropic, "claude-sonnet-4-5:1m", at(200_000)), 0.6));
        assert!(near(one_request(Provider::Anthropic, "claude-sonnet-4-5:1m", at(200_001)), 1.200006));
        // The model without `:1m` has no tiers.
        assert!(near(one_request(Provider::Anthropic, "claude-sonnet-4-5", at(300_000)), 0.9));
        // OpenAI's wire (OpenRouter's name): `prompt_tokens` already includes the cached part,
        // and is what picks the tier (calculateApiCostOpenAI).
        let openai = Usage { input: 205_000, output: 2_000, cache_read: 50_000, cache_write: 0, billed: None };
        let c = one_request(Provider::OpenAi, "anthropic/claude-sonnet-4.5:1m", openai);
        assert!(near(c, 155_000.0 * 6.0 / 1e6 + 0.045 + 0.03), "{c}");
        // Opus's tiers: $5 → $10 input.
        assert!(near(one_request(Provider::Anthropic, "claude-opus-4-6:1m", at(300_000)), 3.0));
        // A tier replaces all four prices, even where the table's base prices differ from
        // its lower tier: claude-sonnet-5:1m lists $2 input but CLAUDE_SONNET_1M_TIERS's $3,
        // and Cline charges the tier's.
        assert!(near(one_request(Provider::Anthropic, "claude-sonnet-5:1m", at(100_000)), 0.3));
    }

    #[test]
    fn totals_round_trip() {
        let mut a = Accounting::new(builtin(Provider::Anthropic, "claude-sonnet-4"), false);
        a.record(&Usage { input: 1000, output: 10, cache_read: 5, cache_write: 0, billed: None }, true);
        let mut b = Accounting::new(None, false);
        b.restore(&a.totals());
        assert_eq!((b.usage, b.requests, b.estimated), (a.usage, 1, 1));
        assert!((b.cost - round(a.cost)).abs() < 1e-12);
        assert_eq!(b.run_cost, 0.0, "a restored total is not this run's spending");
        // Resumed without the prices: the earlier cost is kept, and the summary says what it
        // leaves out rather than showing a partial cost as whole.
        assert!(!b.summary().contains("without"), "{}", b.summary());
        b.record(&Usage { input: 400_000, output: 10, ..Usage::default() }, false);
        let line = b.summary();
        assert!(line.contains("without 1 request of this run, which had neither prices"), "{line}");
    }

    #[test]
    fn a_servers_bill_is_the_cost_with_or_without_prices() {
        let billed = Usage { input: 1_000_000, output: 0, billed: Some(0.5), ..Usage::default() };
        // Without prices, the bill makes the cost known.
        let mut a = Accounting::new(None, true);
        assert!(!a.priced());
        assert_eq!(a.record(&billed, false), Some(0.5));
        assert!(a.priced());
        assert_eq!((a.totals().cost_usd, a.run_cost), (Some(0.5), 0.5));
        assert!(a.summary().ends_with("; cost $0.5000"), "{}", a.summary());
        // With prices ($3 per million input tokens: $3 here), the bill still wins: it is what
        // the user pays. A request without a bill is priced.
        let mut a = Accounting::new(builtin(Provider::Anthropic, "claude-sonnet-4-5"), true);
        assert_eq!(a.record(&billed, false), Some(0.5));
        a.record_failed(&Usage { input: 1_000_000, ..Usage::default() });
        assert!((a.cost - 3.5).abs() < 1e-9, "{}", a.cost);
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
