//! `--max-turns`, `--max-cost` and `--timeout`: the limits that stop a run cleanly (exit 1, a
//! message naming the limit, the task saved so it can be resumed).
//!
//! Turns and cost are checked before each request. The timeout is also enforced while waiting:
//! a watchdog thread, at the deadline, kills curl and any running command (as Ctrl-C does, but
//! without exiting), so a stalled stream or a long command ends at once and the loop stops at
//! its next check.

use std::sync::atomic::{AtomicBool, Ordering};
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

/// The limits of one run (a resumed task counts afresh).
pub struct Limits {
    max_turns: Option<u32>,
    max_cost: Option<f64>,
    timeout: Option<Duration>,
    started: Instant,
    expired: Arc<AtomicBool>,
    /// Set by the ACP client's `session/cancel` (after curl and any command were killed): the
    /// turn stops at its next check, as after Ctrl-C, and the task stays for the next prompt.
    cancelled: Arc<AtomicBool>,
    /// Set when the run is over (dropped): the watchdog must not exit then.
    done: Arc<AtomicBool>,
}

/// How often a [`Limits::pause`] looks for the client's cancel.
const CANCEL_CHECK: Duration = Duration::from_millis(50);

/// How long the watchdog waits, after the deadline, for the loop to stop by itself.
const GRACE: Duration = Duration::from_secs(3);

impl Drop for Limits {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
    }
}

impl Limits {
    /// Starts the clock (and the watchdog, with a timeout).
    pub fn start(max_turns: Option<u32>, max_cost: Option<f64>, timeout: Option<Duration>) -> Self {
        let expired = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        if let Some(t) = timeout {
            let (flag, done) = (expired.clone(), done.clone());
            std::thread::spawn(move || {
                std::thread::sleep(t);
                if done.load(Ordering::SeqCst) {
                    return;
                }
                flag.store(true, Ordering::SeqCst);
                interrupt::kill_children();
                // The loop stops at its next check. If it is blocked where killing children
                // cannot reach (a read of a terminal or a FIFO), end the process: the task was
                // saved after its last completed turn and can be resumed.
                std::thread::sleep(GRACE);
                if !done.load(Ordering::SeqCst) {
                    let hit = timeout_hit(t, started);
                    interrupt::exit_now(&format!(
                        "task failed: {} (the loop did not respond; the task is saved as of its last completed turn)",
                        hit.message
                    ));
                }
            });
        }
        Limits { max_turns, max_cost, timeout, started, expired, cancelled: Arc::default(), done }
    }

    /// The flag that cancels the current turn (`session/cancel`); cleared before each prompt.
    pub(crate) fn cancel_flag(&self) -> Arc<AtomicBool> {
        self.cancelled.clone()
    }

    /// Whether the timeout has passed.
    pub(crate) fn timed_out(&self) -> bool {
        self.expired.load(Ordering::SeqCst) || self.timeout.is_some_and(|t| self.started.elapsed() >= t)
    }

    /// Whether the client cancelled the turn.
    pub(crate) fn cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// The first limit reached, given the requests made and dollars spent by this run.
    pub(crate) fn check(&self, turns: u32, spent: f64) -> Option<Hit> {
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
        let (expired, done) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
        let l = Limits { max_turns: None, max_cost: None, timeout, started, expired, cancelled: Arc::default(), done };
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(l.check(0, 0.0).unwrap().limit, "timeout");
    }
}
