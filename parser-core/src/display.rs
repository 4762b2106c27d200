//! Display hygiene for partial blocks, as Cline's presenter applies it before showing them.
//! The blocks themselves stay exact; these helpers only shape what a person sees.

/// Drop a trailing incomplete tag (`<`, `</`, `<read_fi`, `</pa`) from partial text, as Cline's
/// `presentAssistantMessage` does: the last `<` with no `>` after it, if what follows is a bare
/// `<`/`</` or looks like a tag name (ASCII letters and `_`), is cut, and the rest is trimmed.
pub fn strip_partial_tag(s: &str) -> &str {
    let Some(lt) = s.rfind('<') else { return s };
    let tag = &s[lt..];
    if tag.contains('>') {
        return s;
    }
    let name = tag.strip_prefix("</").or_else(|| tag.strip_prefix('<')).unwrap_or(tag);
    let name = crate::trim::js_trim(name);
    let bare = tag == "<" || tag == "</";
    if bare || (!name.is_empty() && name.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_')) {
        crate::trim::js_trim(&s[..lt])
    } else {
        s
    }
}

/// Drop a cut-off close tag from a partial param value, as Cline's `removeClosingTag` does with
/// the pattern `\s?</?p?a?r?a?m?$`: `a.txt</pa` and `a.txt <` show as `a.txt`.
pub fn strip_partial_close_tag<'a>(value: &'a str, param: &str) -> &'a str {
    let Some(lt) = value.rfind('<') else { return value };
    let after = &value[lt + 1..];
    let after = after.strip_prefix('/').unwrap_or(after);
    // Every character of the pattern's name is optional: what follows must be a subsequence of it.
    let mut name = param.chars();
    if !after.chars().all(|c| name.any(|n| n == c)) {
        return value;
    }
    let before = &value[..lt];
    match before.chars().next_back() {
        Some(c) if crate::trim::is_js_whitespace(c) => &before[..before.len() - c.len_utf8()],
        _ => before,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_tags_are_cut_from_text() {
        assert_eq!(strip_partial_tag("Hello <read_fi"), "Hello");
        assert_eq!(strip_partial_tag("Hello </"), "Hello");
        assert_eq!(strip_partial_tag("Hello <"), "Hello");
        assert_eq!(strip_partial_tag("a < b"), "a"); // Cline trims " b" and takes it for a tag name
        assert_eq!(strip_partial_tag("a < 3"), "a < 3");
        assert_eq!(strip_partial_tag("x <b> y"), "x <b> y");
        assert_eq!(strip_partial_tag("no tag"), "no tag");
    }

    #[test]
    fn cut_close_tags_are_cut_from_values() {
        assert_eq!(strip_partial_close_tag("a.txt</pa", "path"), "a.txt");
        assert_eq!(strip_partial_close_tag("a.txt <", "path"), "a.txt");
        assert_eq!(strip_partial_close_tag("a.txt", "path"), "a.txt");
        assert_eq!(strip_partial_close_tag("a.txt<pth", "path"), "a.txt");
        assert_eq!(strip_partial_close_tag("a</x", "path"), "a</x");
        assert_eq!(strip_partial_close_tag("if a < b", "path"), "if a < b");
    }
}
