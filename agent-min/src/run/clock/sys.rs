//! The machine's time zone, as Node's `Intl.DateTimeFormat` reads it for Cline's `# Current
//! Time`: its name (`TZ`, else the zone `/etc/localtime` links to) and its offset from UTC at a
//! moment (the C library's `localtime_r`, which reads the same settings).
#![allow(unsafe_code)]

/// The zone's offset from UTC at `secs` since the epoch, in seconds east (0 when the C library
/// cannot tell).
pub(crate) fn offset_at(secs: u64) -> i64 {
    let Ok(t) = libc::time_t::try_from(secs) else { return 0 };
    // SAFETY: an all-zero `tm` is a valid value of the plain C struct (its one pointer, the
    // zone's abbreviation, may be null); localtime_r only reads `t` and writes `tm`, both live
    // locals, and returns null on failure.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            return 0;
        }
        tm.tm_gmtoff
    }
}

/// The zone's name: `TZ` (without POSIX's leading `:`, a path taken after `zoneinfo/`), else
/// where `/etc/localtime` links; UTC's other names as `UTC`, as V8 gives them.
pub(crate) fn zone_name() -> String {
    let from_tz = std::env::var("TZ").ok().map(|tz| tz.trim_start_matches(':').to_string());
    let link = || std::fs::read_link("/etc/localtime").ok().map(|p| p.to_string_lossy().into_owned());
    // A copied or mounted /etc/localtime (Docker's `-v /etc/localtime:…`) is no link: Debian's
    // /etc/timezone may name it.
    let named = || {
        let text = std::fs::read_to_string("/etc/timezone").ok()?;
        Some(text.lines().next()?.trim().to_string())
    };
    let raw = match from_tz {
        Some(tz) if !tz.is_empty() => tz,
        Some(_) => String::new(),
        None => link().or_else(named).unwrap_or_default(),
    };
    canonical(&raw)
}

/// `raw` (a zone name or a path into the zone database) as the name V8 shows.
fn canonical(raw: &str) -> String {
    let name = raw.rsplit_once("zoneinfo/").map_or(raw, |(_, n)| n);
    const UTC: [&str; 10] =
        ["", "UTC", "GMT", "Etc/UTC", "Etc/GMT", "Etc/UCT", "UCT", "Etc/Universal", "Universal", "Zulu"];
    if UTC.iter().any(|u| u.eq_ignore_ascii_case(name)) {
        return "UTC".to_string();
    }
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_v8_shows_them() {
        assert_eq!(canonical("/usr/share/zoneinfo/Etc/UTC"), "UTC");
        assert_eq!(canonical("../usr/share/zoneinfo/America/New_York"), "America/New_York");
        assert_eq!(canonical("Europe/Paris"), "Europe/Paris");
        assert_eq!(canonical("GMT"), "UTC");
        assert_eq!(canonical(""), "UTC");
    }
}
