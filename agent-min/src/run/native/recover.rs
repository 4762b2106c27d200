//! Tool calls written as text: a model behind a server that does not render the `tools` it was
//! sent (or a small local model) often writes its call in Cline's XML dialect in the reply text
//! instead of making a native call. Cline's parser finds it; the first complete call runs as if
//! it had been native. Its result goes back as the next user message's text (there is no native
//! call id to pair it with), as in the XML dialect.

use parser_core::Block;

use crate::run::tools::Call;

/// What the person is told after two replies in a row with tools sent and none called.
pub(crate) const TOOLS_IGNORED: &str = "Two replies in a row were sent the tool definitions and called none natively: the server may be ignoring `tools` (its chat template may not render them). Try --tool-calls xml, which puts the tools in the prompt.";

/// The first complete tool call written in Cline's XML in `text`, if any. A call still open at
/// the end of the text is not complete and does not run.
pub(crate) fn text_call(text: &str) -> Option<Call> {
    let parsed = parser_core::parse(text);
    parsed.iter().find_map(|b| match b {
        Block::ToolUse(t) if !t.partial => Some(Call::from_xml(&t)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recovered_write_reads_its_content_as_the_xml_dialect_does() {
        let call = text_call("<write_to_file>\n<path>a</path>\n<content>\n  x\n</content>\n</write_to_file>").unwrap();
        assert_eq!(call.untrimmed_param("content"), Some("  x"), "the tags' line breaks go, the indentation stays");
    }

    #[test]
    fn a_complete_xml_call_in_text_is_found_and_an_open_one_is_not() {
        let text = "I will read it.\n<read_file>\n<path>a.txt</path>\n</read_file>\nthen more";
        let call = text_call(text).expect("a complete call");
        assert_eq!((call.name.as_str(), call.param("path")), ("read_file", Some("a.txt")));
        assert!(text_call("<read_file>\n<path>a.txt</path>").is_none(), "still open");
        assert!(text_call("no call here, just `read_file`").is_none());
        let two = "<list_files><path>.</path></list_files><read_file><path>b</path></read_file>";
        assert_eq!(text_call(two).unwrap().name, "list_files", "the first one");
    }
}
