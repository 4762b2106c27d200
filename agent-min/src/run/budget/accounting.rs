//! Tokens and cost: per request and in total, priced from `--price-*` flags or a small built-in
//! table of well-known models.
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

/// The built-in table: (model name fragment, input, output, cache read, cache write). The first
/// fragment contained in the (lower-cased) model name wins, so longer names come first.
const TABLE: &[(&str, f64, f64, f64, f64)] = &[
    ("claude-opus-4-5", 5.0, 25.0, 0.50, 6.25),
    ("claude-opus-4.5", 5.0, 25.0, 0.50, 6.25),
    ("claude-opus-4", 15.0, 75.0, 1.50, 18.75),
    ("claude-sonnet-4", 3.0, 15.0, 0.30, 3.75),
    ("claude-3-7-sonnet", 3.0, 15.0, 0.30, 3.75),
    ("claude-3-5-sonnet", 3.0, 15.0, 0.30, 3.75),
    ("claude-haiku-4-5", 1.0, 5.0, 0.10, 1.25),
    ("claude-haiku-4.5", 1.0, 5.0, 0.10, 1.25),
    ("claude-3-5-haiku", 0.80, 4.0, 0.08, 1.0),
    ("gpt-4.1-nano", 0.10, 0.40, 0.025, 0.10),
    ("gpt-4.1-mini", 0.40, 1.60, 0.10, 0.40),
    ("gpt-4.1", 2.0, 8.0, 0.50, 2.0),
    ("gpt-4o-mini", 0.15, 0.60, 0.075, 0.15),
    ("gpt-4o", 2.50, 10.0, 1.25, 2.50),
    ("gpt-5-nano", 0.05, 0.40, 0.005, 0.05),
    ("gpt-5-mini", 0.25, 2.0, 0.025, 0.25),
    ("gpt-5", 1.25, 10.0, 0.125, 1.25),
    ("o4-mini", 1.10, 4.40, 0.275, 1.10),
    ("o3", 2.0, 8.0, 0.50, 2.0),
];

/// Built-in prices for a model: the table above, or free for a local Ollama model. `None` when
/// the model is unknown (its cost is then not reported unless prices are given with flags).
pub(crate) fn builtin(provider: Provider, model: &str) -> Option<Prices> {
    if provider == Provider::Ollama {
        return Some(Prices { input: 0.0, output: 0.0, cache_read: 0.0, cache_write: 0.0 });
    }
    let m = model.to_ascii_lowercase();
    let name = m.rsplit('/').next().unwrap_or(&m); // OpenRouter: "anthropic/claude-…"
    TABLE.iter().find(|row| name.starts_with(row.0)).map(|&(_, input, output, cache_read, cache_write)| Prices {
        input,
        output,
        cache_read,
        cache_write,
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
    fn table_matches_longest_names_first_and_openrouter_prefixes() {
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
