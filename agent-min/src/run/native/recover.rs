//! Tool calls written as text: a model behind a server that does not render the `tools` it was
//! sent (or a small local model) often writes its call in Cline's XML dialect in the reply text
//! instead of making a native call. Cline's parser finds it; the first complete call runs as if
//! it had been native. Its result goes back as the next user message's text (there is no native
//! call id to pair it with), as in the XML dialect.

use parser_core::Block;

use crate::run::tools::Call;

/// What the person is told after two replies in a row with tools sent and none called.
pub(crate) const TOOLS_IGNORED: &str = "Two replies in a row were sent the tool definitions and called none natively: the server may be ignoring `tools` (its chat template may not render them). Try --tool-calls xml, which puts the tools in the prompt.";

/// The tool calls written in Cline's XML in `text`, as Cline finds them in a native reply's text
/// (it parses every reply's text with `parseAssistantMessageV2`, and with no native call runs
/// what it found): the complete ones in order, and the name of a last one still open at the end
/// of the text, which does not run (as in the XML dialect; Cline runs it as far as it got).
pub(crate) fn text_calls(text: &str) -> (Vec<Call>, Option<String>) {
    let (mut calls, mut open) = (Vec::new(), None);
    for b in parser_core::parse(text).iter() {
        match b {
            Block::ToolUse(t) if t.partial => open = Some(t.name.to_string()),
            Block::ToolUse(t) => calls.push(Call::from_xml(&t)),
            Block::Text { .. } => {}
        }
    }
    (calls, open)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recovered_write_reads_its_content_as_the_xml_dialect_does() {
        let (calls, _) = text_calls("<write_to_file>\n<path>a</path>\n<content>\n  x\n</content>\n</write_to_file>");
        assert_eq!(calls[0].untrimmed_param("content"), Some("  x"), "the tags' line breaks go, the indentation stays");
    }

    #[test]
    fn every_complete_xml_call_in_text_is_found_in_order_and_an_open_one_is_named() {
        let text = "I will read it.\n<read_file>\n<path>a.txt</path>\n</read_file>\nthen more";
        let (calls, open) = text_calls(text);
        assert_eq!((calls[0].name.as_str(), calls[0].param("path"), open), ("read_file", Some("a.txt"), None));
        let (calls, open) = text_calls("<read_file>\n<path>a.txt</path>");
        assert!(calls.is_empty() && open.as_deref() == Some("read_file"), "still open");
        assert!(text_calls("no call here, just `read_file`").0.is_empty());
        let two = "<list_files><path>.</path></list_files><read_file><path>b</path></read_file><list_files><path>";
        let (calls, open) = text_calls(two);
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!((names, open.as_deref()), (vec!["list_files", "read_file"], Some("list_files")));
    }
}
