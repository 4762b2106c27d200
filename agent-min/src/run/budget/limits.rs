//! `--max-turns`, `--max-cost` and `--timeout`: the limits that stop a run cleanly (exit 1, a
//! message naming the limit, the task saved so it can be resumed).
//!
//! Turns and cost are checked before each request. The timeout is also enforced while waiting:
//! a watchdog thread, at the deadline, kills curl and any running command (as Ctrl-C does, but
//! without exiting), so a stalled stream or a long command ends at once and the loop stops at
//! its next check.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::run::ui::interrupt;

/// A limit that was reached.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Hit {
    /// `max_turns`, `max_cost` or `timeout` (the `limit` field of the `--json` error event).
    pub limit: &'static str,
    /// What to tell the person: which limit, and which flag raises it.
    pub message: String,
}

/// The limits of one run (a resumed task counts afresh), or of one prompt of an editor's
/// session (`Limits::restart`).
pub struct Limits {
    max_turns: Option<u32>,
    max_cost: Option<f64>,
    timeout: Option<Duration>,
    started: Instant,
    /// The requests made and dollars spent before the clock started (an earlier prompt's).
    before: (u32, f64),
    /// The clock's generation: bumped when it starts again, stops between prompts, or the run
    /// is over (dropped). A watchdog acts only on its own generation.
    generation: Arc<AtomicU64>,
    /// The generation whose deadline passed (0: none; generations start at 1).
    expired: Arc<AtomicU64>,
    /// Set by the ACP client's `session/cancel` (after curl and any command were killed): the
    /// turn stops at its next check, as after Ctrl-C, and the task stays for the next prompt.
    cancelled: Arc<AtomicBool>,
}

/// How often a [`Limits::pause`] looks for the client's cancel.
const CANCEL_CHECK: Duration = Duration::from_millis(50);

/// How long the watchdog waits, after the deadline, for the loop to stop by itself.
const GRACE: Duration = Duration::from_secs(3);

impl Drop for Limits {
    fn drop(&mut self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }
}

impl Limits {
    /// Starts the clock (and the watchdog, with a timeout).
    pub fn start(max_turns: Option<u32>, max_cost: Option<f64>, timeout: Option<Duration>) -> Self {
        let mut limits = Limits {
            max_turns,
            max_cost,
            timeout,
            started: Instant::now(),
            before: (0, 0.0),
            generation: Arc::new(AtomicU64::new(0)),
            expired: Arc::default(),
            cancelled: Arc::default(),
        };
        limits.arm();
        limits
    }

    /// Starts the limits afresh for an editor's prompt, given the requests made and dollars
    /// spent so far: each prompt gets the whole `--max-turns`, `--max-cost` and `--timeout`.
    pub(crate) fn restart(&mut self, turns: u32, spent: f64) {
        self.before = (turns, spent);
        self.started = Instant::now();
        self.arm();
    }

    /// Stops the clock between an editor's prompts: a session waiting for its next prompt is
    /// not running out of time.
    pub(crate) fn idle(&mut self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// A new generation of the clock, with its watchdog when there is a timeout.
    fn arm(&mut self) {
        let mine = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        let Some(t) = self.timeout else { return };
        let (started, generation, expired) = (self.started, self.generation.clone(), self.expired.clone());
        std::thread::spawn(move || {
            std::thread::sleep(t);
            if generation.load(Ordering::SeqCst) != mine {
                return;
            }
            expired.store(mine, Ordering::SeqCst);
            interrupt::kill_children();
            // The loop stops at its next check. If it is blocked where killing children
            // cannot reach (a read of a terminal or a FIFO), end the process: the task was
            // saved after its last completed turn and can be resumed.
            std::thread::sleep(GRACE);
            if generation.load(Ordering::SeqCst) == mine {
                let hit = timeout_hit(t, started);
                interrupt::exit_now(&format!(
                    "task failed: {} (the loop did not respond; the task is saved as of its last completed turn)",
                    hit.message
                ));
            }
        });
    }

    /// The flag that cancels the current turn (`session/cancel`); cleared before each prompt.
    pub(crate) fn cancel_flag(&self) -> Arc<AtomicBool> {
        self.cancelled.clone()
    }

    /// Whether the timeout has passed.
    pub(crate) fn timed_out(&self) -> bool {
        let generation = self.generation.load(Ordering::SeqCst);
        self.expired.load(Ordering::SeqCst) == generation || self.timeout.is_some_and(|t| self.started.elapsed() >= t)
    }

    /// Whether the client cancelled the turn.
    pub(crate) fn cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// The first limit reached, given the requests made and dollars spent by this run.
    pub(crate) fn check(&self, turns: u32, spent: f64) -> Option<Hit> {
        let (turns, spent) = (turns.saturating_sub(self.before.0), spent - self.before.1);
        if self.cancelled() {
            return Some(cancelled_hit());
        }
        if self.timed_out() {
            return Some(self.timeout_hit());
        }
        if let Some(limit) = self.max_turns.filter(|&l| turns >= l) {
            return Some(Hit {
                limit: "max_turns",
                message: format!("the turn limit was reached ({limit} requests; raise it with --max-turns)"),
            });
        }
        if let Some(max) = self.max_cost.filter(|&m| spent >= m) {
            return Some(Hit {
                limit: "max_cost",
                message: format!(
                    "the cost limit was reached (${spent:.4} spent by this run, --max-cost {max}); raise it with --max-cost"
                ),
            });
        }
        None
    }

    /// What ended a wait early, if anything: the client's cancel, or the timeout.
    pub(crate) fn stopped_now(&self) -> Option<Hit> {
        if self.cancelled() {
            return Some(cancelled_hit());
        }
        self.timed_out().then(|| self.timeout_hit())
    }

    /// Waits `d` (a retry's delay), or less when the timeout or the client's cancel comes first:
    /// what ended it early, if anything. (A `retry-after` of minutes must not outlast
    /// `--timeout`, and the deadline must not need the watchdog's hard exit.)
    pub(crate) fn pause(&self, d: Duration) -> Option<Hit> {
        let end = Instant::now() + d;
        loop {
            if let Some(hit) = self.stopped_now() {
                return Some(hit);
            }
            let now = Instant::now();
            if now >= end {
                return None;
            }
            let mut slice = (end - now).min(CANCEL_CHECK);
            if let Some(t) = self.timeout {
                // Wake at the deadline itself.
                slice = slice.min((self.started + t).saturating_duration_since(now).max(Duration::from_millis(1)));
            }
            std::thread::sleep(slice);
        }
    }

    /// The timeout as a [`Hit`].
    pub(crate) fn timeout_hit(&self) -> Hit {
        timeout_hit(self.timeout.unwrap_or_default(), self.started)
    }
}

/// The limit a client's `session/cancel` names.
pub(crate) const CANCELLED: &str = "cancelled";

/// The client's `session/cancel` as a [`Hit`] (only ever under `agent-min acp`, which writes no
/// `--json` events).
pub(crate) fn cancelled_hit() -> Hit {
    Hit { limit: CANCELLED, message: "the client cancelled the turn (session/cancel)".to_string() }
}

fn timeout_hit(t: Duration, started: Instant) -> Hit {
    Hit {
        limit: "timeout",
        message: format!(
            "the time limit was reached (--timeout {}; stopped after {:.1}s, killing curl and any running command); raise it with --timeout",
            format_duration(t),
            started.elapsed().as_secs_f64()
        ),
    }
}

/// Parses `90`, `90s`, `1.5m`, `2h`, `1h30m`, `500ms` (a plain number is seconds).
pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("--timeout expects a duration like 90s, 5m, 1h30m or a number of seconds, got {s:?}");
    let t = s.trim();
    if t.is_empty() {
        return Err(bad());
    }
    if let Ok(secs) = t.parse::<f64>() {
        return (secs.is_finite() && secs > 0.0)
            .then(|| Duration::try_from_secs_f64(secs).ok())
            .flatten()
            .ok_or_else(bad);
    }
    let mut total = 0.0;
    let mut rest = t;
    while !rest.is_empty() {
        let num_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).ok_or_else(bad)?;
        let n: f64 = rest[..num_len].parse().map_err(|_| bad())?;
        rest = &rest[num_len..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        total += n * scale;
        rest = &rest[unit_len..];
    }
    (total > 0.0).then(|| Duration::try_from_secs_f64(total).ok()).flatten().ok_or_else(bad)
}

/// `90s`, `1.5s`, `2m30s`.
pub(crate) fn format_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 || s.fract() != 0.0 {
        format!("{}s", (s * 1000.0).round() / 1000.0)
    } else {
        let s = s as u64;
        match (s / 3600, s % 3600 / 60, s % 60) {
            (0, m, 0) => format!("{m}m"),
            (0, m, sec) => format!("{m}m{sec}s"),
            (h, m, sec) => format!("{h}h{m}m{sec}s"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("1.5m").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        for bad in ["", "x", "5 min", "-3", "0", "3d", "m"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert_eq!(format_duration(Duration::from_secs(2)), "2s");
        assert_eq!(format_duration(Duration::from_secs(150)), "2m30s");
    }

    #[test]
    fn each_limit_names_its_flag() {
        let l = Limits::start(Some(2), Some(0.5), None);
        assert_eq!(l.check(1, 0.1), None);
        assert!(l.check(2, 0.1).unwrap().message.contains("--max-turns"));
        let hit = l.check(1, 0.5).unwrap();
        assert_eq!(hit.limit, "max_cost");
        assert!(hit.message.contains("--max-cost 0.5"));
        // Without the watchdog thread: it would kill every child of the test process (other
        // tests' git, hooks, commands) when it fires.
        let timeout = Some(Duration::from_millis(1));
        let started = Instant::now();
        let l = Limits {
            max_turns: None,
            max_cost: None,
            timeout,
            started,
            before: (0, 0.0),
            generation: Arc::new(AtomicU64::new(1)),
            expired: Arc::default(),
            cancelled: Arc::default(),
        };
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(l.check(0, 0.0).unwrap().limit, "timeout");
    }

    #[test]
    fn an_editors_prompt_gets_the_whole_limits_afresh() {
        let mut l = Limits::start(Some(2), Some(0.5), None);
        assert!(l.check(2, 0.0).is_some());
        l.restart(2, 0.4);
        assert_eq!(l.check(3, 0.8), None, "one request and $0.40 of this prompt");
        assert_eq!(l.check(4, 0.8).unwrap().limit, "max_turns");
        assert_eq!(l.check(3, 0.9).unwrap().limit, "max_cost");
    }

    #[test]
    fn a_deadline_of_an_earlier_generation_is_not_this_ones() {
        let mut l = Limits::start(None, None, None);
        // What a watchdog of the first generation records at its deadline.
        l.expired.store(l.generation.load(Ordering::SeqCst), Ordering::SeqCst);
        assert!(l.timed_out());
        l.idle();
        l.restart(0, 0.0);
        assert!(!l.timed_out(), "a new prompt's clock");
    }
}
