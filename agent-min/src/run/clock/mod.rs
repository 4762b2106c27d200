//! The current time for `<environment_details>`, without a date crate (the machine's time
//! zone from the C library, `sys.rs`); durations from untrusted numbers of seconds.
//!
//! May use: nothing else of the agent.

use std::time::Duration;

mod sys;

/// The machine's time zone at `secs`: its name as Node shows it, and its offset east of UTC
/// in seconds.
pub(crate) fn local_zone(secs: u64) -> (String, i64) {
    named_zone(sys::zone_name(), sys::offset_at(secs))
}

/// A zone's name with its offset: never "UTC" away from UTC (a zone file that names nothing),
/// but ICU's `Etc/Unknown` then.
fn named_zone(name: String, offset: i64) -> (String, i64) {
    match name == "UTC" && offset != 0 {
        true => ("Etc/Unknown".to_string(), offset),
        false => (name, offset),
    }
}

/// The longest wait a number of seconds turns into (a command's timeout, a retry delay).
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(24 * 3600);

/// `secs` as a duration between zero and [`MAX_WAIT`]: the model's `<timeout>` and the flags
/// may say 1e20, which `Duration::from_secs_f64` (and `Instant + d`) would panic on.
pub(crate) fn clamped_secs(secs: f64) -> Duration {
    Duration::try_from_secs_f64(secs).unwrap_or(if secs > 0.0 { MAX_WAIT } else { Duration::ZERO }).min(MAX_WAIT)
}

/// Formats seconds since the Unix epoch.
pub(crate) fn format_utc(secs: u64) -> String {
    let (y, m, d, hh, mm, ss) = civil(secs);
    format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}:{ss:02} UTC")
}

/// Seconds since the Unix epoch as UTC (year, month, day, hour, minute, second):
/// civil-from-days, Howard Hinnant's algorithm.
pub(crate) fn civil(secs: u64) -> (i64, i64, i64, u64, u64, u64) {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_dates() {
        assert_eq!(super::format_utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(super::format_utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(super::format_utc(1_700_000_000), "2023-11-14 22:13:20 UTC");
    }

    #[test]
    fn utc_is_never_named_away_from_utc() {
        assert_eq!(super::named_zone("UTC".into(), 3600), ("Etc/Unknown".to_string(), 3600));
        assert_eq!(super::named_zone("UTC".into(), 0), ("UTC".to_string(), 0));
        assert_eq!(super::named_zone("Europe/Paris".into(), 3600), ("Europe/Paris".to_string(), 3600));
    }
}
