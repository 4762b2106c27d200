//! `<thinking>` tags in streamed native reply text, removed from what is shown as Cline's
//! presenter removes them (the XML path does the same in `stream.rs`). A delta may end inside a
//! tag, so a tail that could still become one is held back until the next delta says.

/// The tags removed, with the newline Cline removes beside each.
const TAGS: [&str; 4] = ["<thinking>\n", "\n</thinking>", "<thinking>", "</thinking>"];

/// What has been held back between deltas.
#[derive(Debug, Default)]
pub(crate) struct ThinkingTags {
    held: String,
}

impl ThinkingTags {
    /// The displayable text of the next delta.
    pub(crate) fn push(&mut self, s: &str) -> String {
        self.held.push_str(s);
        let mut text = std::mem::take(&mut self.held);
        // Hold back the longest tail that a later delta could still turn into a (longer) tag:
        // at most one tag's length, so the work stays O(1) per delta beyond the text itself.
        let longest = TAGS.iter().map(|t| t.len()).max().unwrap_or(0);
        let keep = (1..=text.len().min(longest)).rev().filter(|&n| text.is_char_boundary(text.len() - n)).find(|&n| {
            let tail = &text[text.len() - n..];
            TAGS.iter().any(|t| t.len() > tail.len() && t.starts_with(tail))
        });
        if let Some(n) = keep {
            self.held = text.split_off(text.len() - n);
        }
        strip(text)
    }

    /// What is still held back when the reply ends (an unfinished tag is text after all).
    pub(crate) fn finish(&mut self) -> String {
        strip(std::mem::take(&mut self.held))
    }
}

/// Removes the tags, in Cline's order.
fn strip(mut text: String) -> String {
    for t in TAGS {
        if text.contains(t) {
            text = text.replace(t, "");
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(deltas: &[&str]) -> String {
        let mut t = ThinkingTags::default();
        let mut out: String = deltas.iter().map(|d| t.push(d)).collect();
        out.push_str(&t.finish());
        out
    }

    #[test]
    fn tags_split_across_deltas_are_removed() {
        assert_eq!(shown(&["<think", "ing>\nplan</thi", "nking>\nDone."]), "plan\nDone.");
        assert_eq!(shown(&["a <", "b"]), "a <b");
        assert_eq!(shown(&["ends with <thi"]), "ends with <thi");
        assert_eq!(shown(&["é<", "/thinking>ü"]), "éü");
        assert_eq!(shown(&["<thin", "king>", "\nquic", "k</thinking>\nok"]), "quick\nok");
        assert_eq!(shown(&["x\n", "</thinking>"]), "x");
        assert_eq!(shown(&["<thinking>"]), "");
    }
}
