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
        n if n < 1024 * 1024 => format!("{:.1} KB", n as f64 / 1024.0),
        n => format!("{:.1} MB", n as f64 / (1024.0 * 1024.0)),
    }
}
