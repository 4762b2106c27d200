//! The agent's whole reply path on arbitrary server bytes: a provider's SSE decoder (Anthropic,
//! OpenAI-compatible, Ollama) → deltas → the streamed reply (parser, terminal, `--json` events,
//! the first complete tool), in the XML dialect or (first byte's high bit set) the native one
//! (streamed tool calls assembled by `native::reply`). It never panics, and:
//! - nothing the server sends reaches the terminal as a control character (escape sequences,
//!   BEL, a lone CR are shown escaped);
//! - XML: the tool it returns is exactly the first tool of a whole parse of the reply text;
//! - native: every call kept for history has a JSON object as its arguments text, and when
//!   there is a call, exactly one of "runs", "cut off", "invalid arguments" is decided for it;
//! - every `--json` line is one JSON object, and a complete `tool_call` event matches the tool.
#![no_main]

use std::io::Write;
use std::sync::{Arc, Mutex};

use agent_min::run::llm::providers::{Decoder, Provider};
use agent_min::run::llm::{ApiError, Delta, Flow, Message, Part, Transport};
use agent_min::run::native;
use agent_min::run::session::events::Events;
use agent_min::run::reply::{Reply, Screen};
use agent_min::run::stream::read_reply;
use agent_min::run::ui::term::Term;
use libfuzzer_sys::fuzz_target;
use parser_core::{parse, Block};

/// The server: `bytes` cut into chunks of `chunk` bytes, decoded as `provider` sends them.
struct Server<'a> {
    provider: Provider,
    bytes: &'a [u8],
    chunk: usize,
}

impl Transport for Server<'_> {
    fn send(&mut self, _: &str, _: &[Message], on: &mut dyn FnMut(Delta) -> Flow) -> Result<(), ApiError> {
        let mut decoder = Decoder::new(self.provider);
        for piece in self.bytes.chunks(self.chunk) {
            for d in decoder.push(piece) {
                if let Delta::Error(e) = d {
                    return Err(e);
                }
                if on(d).stops_now() {
                    return Ok(());
                }
            }
        }
        for d in decoder.finish() {
            if let Delta::Error(e) = d {
                return Err(e);
            }
            if on(d).stops_now() {
                break;
            }
        }
        Ok(())
    }
    fn provider(&self) -> &str {
        "fuzz"
    }
}

#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, bytes)) = data.split_first() else { return };
    // The high bit picks the dialect, so seed.py's seeds (first byte below 128) stay XML.
    let native = first & 0x80 != 0;
    let first = first & 0x7f;
    let provider = [Provider::Anthropic, Provider::OpenAi, Provider::Ollama][usize::from(first % 3)];
    let chunk = usize::from(first / 3).max(1);
    let (shown, json) = (Sink::default(), Sink::default());
    let mut term = Term::to_writer(Box::new(shown.clone()));
    let mut events = Events::to(Box::new(json.clone()));
    let mut screen = Screen { term: &mut term, events: &mut events, turn: 1 };
    let mut server = Server { provider, bytes, chunk };
    let read = if native {
        native::reply::read_reply(&mut server, "", &[], &mut screen)
    } else {
        read_reply(&mut server, "", &[], &mut screen)
    };
    let Ok(reply) = read else { return };

    let shown = String::from_utf8(shown.0.lock().unwrap().clone()).expect("the terminal gets UTF-8");
    assert!(
        !shown.chars().any(|c| c.is_control() && c != '\n' && c != '\t' && c != '\r'),
        "a control character reached the terminal: {shown:?}"
    );
    assert!(!shown.replace("\r\n", "\n").contains('\r'), "a lone CR reached the terminal: {shown:?}");

    if native {
        let calls: Vec<_> =
            reply.parts.iter().filter_map(|p| if let Part::ToolUse(t) = p { Some(t) } else { None }).collect();
        for c in &calls {
            let v: serde_json::Value = serde_json::from_str(&c.input).expect("a call's input is JSON");
            assert!(v.is_object(), "a call's input is not a JSON object: {:?}", c.input);
        }
        let decided = [reply.tool.is_some(), reply.open_tool.is_some(), reply.invalid_call.is_some()];
        assert_eq!(decided.iter().filter(|d| **d).count(), usize::from(!calls.is_empty()), "{decided:?}");
    } else {
        check_xml_tool(&reply);
    }
    check_events(&json, &reply);
});

/// XML dialect: the returned tool is the first tool of a whole parse of the reply text.
fn check_xml_tool(reply: &Reply) {
    let note = format!("\n\n{}", agent_min::run::prompt::INTERRUPTED_BY_TOOL);
    let text = reply.text.strip_suffix(note.as_str()).unwrap_or(&reply.text);
    let whole = parse(text);
    let first_tool = whole.blocks().into_iter().find_map(|b| match b {
        Block::ToolUse(t) => Some(t),
        _ => None,
    });
    if let Some(call) = &reply.tool {
        let t = first_tool.expect("the tool returned is in the reply text");
        assert!(!t.partial, "a partial tool was returned");
        assert_eq!(call.name, t.name);
        let params: Vec<(&str, &str)> = t.params().iter().map(|p| (p.name, p.value)).collect();
        let got: Vec<(&str, &str)> = call.params.iter().map(|p| (p.0.as_str(), p.1.as_str())).collect();
        assert_eq!(got, params);
    }
}

/// Every `--json` line is one JSON object; a complete `tool_call` event names the tool.
fn check_events(json: &Sink, reply: &Reply) {
    let json = String::from_utf8(json.0.lock().unwrap().clone()).expect("events are UTF-8");
    for line in json.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("each event is one JSON object");
        if v["type"] == "tool_call" && v["partial"] == false {
            assert_eq!(Some(v["tool"].as_str().unwrap()), reply.tool.as_ref().map(|c| c.name.as_str()));
        }
    }
}
