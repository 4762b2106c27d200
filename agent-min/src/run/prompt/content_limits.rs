//! Cline's `shared/content-limits.ts`: where a file's or an MCP result's text is cut for the
//! model, and the note that says so.

/// Cline's `MAX_CONTENT_SIZE_BYTES`: content beyond it (in UTF-16 units, as JavaScript counts
/// `content.length`) is cut.
pub(crate) const MAX_CONTENT: usize = 400 * 1024;

/// Cline's `truncateContent` for `text`: `None` when it is whole; else the byte offset to keep
/// up to (the first `MAX_CONTENT` UTF-16 units, never inside a character) and the note that
/// follows what is kept. The caller joins them (masking a key the cut went through).
pub(crate) fn cut(text: &str) -> Option<(usize, String)> {
    let units = text.encode_utf16().count();
    if units <= MAX_CONTENT {
        return None;
    }
    let mut seen = 0;
    let at = text
        .char_indices()
        .find(|(_, c)| {
            seen += c.len_utf16();
            seen > MAX_CONTENT
        })
        .map_or(text.len(), |(i, _)| i);
    let note = format!(
        "\n\n---\n\n[FILE TRUNCATED: This content is {} but only the first {} is shown ({} truncated). Use search_files to find specific patterns, or execute_command with grep/head/tail for targeted reading.]",
        format_bytes(units),
        format_bytes(MAX_CONTENT),
        format_bytes(units - MAX_CONTENT)
    );
    Some((at, note))
}

/// Cline's `formatBytes`.
fn format_bytes(n: usize) -> String {
    match n {
        n if n < 1024 => format!("{n} B"),
        n if n < 1024 * 1024 => format!("{} KB", to_fixed_1(n, 1024)),
        n => format!("{} MB", to_fixed_1(n, 1024 * 1024)),
    }
}

/// JavaScript's `(n / d).toFixed(1)` for a power of two `d`: `n / d` is exact as a double, and
/// `toFixed` rounds its exact value to the nearer tenth, a tie up (1.25 → "1.3"), where Rust's
/// `{:.1}` takes the even one ("1.2"). In integers, so no float rounding comes between.
fn to_fixed_1(n: usize, d: usize) -> String {
    let (tenths, rest) = ((n as u128 * 10) / d as u128, (n as u128 * 10) % d as u128);
    let tenths = if rest * 2 >= d as u128 { tenths + 1 } else { tenths };
    format!("{}.{}", tenths / 10, tenths % 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values `node -e 'console.log((n/1024).toFixed(1))'` prints; 401.25 and 1.25 are
    /// exact ties, which `{:.1}` rounds to even.
    #[test]
    fn sizes_round_as_javascripts_to_fixed() {
        let cases = [
            (410_880, "401.3 KB"),
            (1280, "1.3 KB"),
            (1075, "1.0 KB"),
            (1126, "1.1 KB"),
            (1023, "1023 B"),
            (5_295_309, "5.1 MB"),
            (2_673_868, "2.5 MB"),
            (1024 * 1024 - 1, "1024.0 KB"),
        ];
        for (n, js) in cases {
            assert_eq!(format_bytes(n), js, "{n}");
        }
        let text = "x".repeat(410_880);
        let (_, note) = cut(&text).unwrap();
        assert!(
            note.contains("This content is 401.3 KB but only the first 400.0 KB is shown (1.3 KB truncated)"),
            "{note}"
        );
    }
}
