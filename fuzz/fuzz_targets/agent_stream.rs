//! The agent's whole reply path on arbitrary server bytes: a provider's SSE decoder (Anthropic,
//! OpenAI-compatible, Ollama) → deltas → the streamed reply (parser, terminal, `--json` events,
//! the first complete tool), in the XML dialect or (first byte's high bit set) the native one
//! (streamed tool calls assembled by `native::reply`). It never panics, and:
//! - nothing the server sends reaches the terminal as a control character (escape sequences,
//!   BEL, a lone CR are shown escaped);
//! - XML: the calls it returns are exactly the complete tool blocks of a whole parse of the
//!   reply text (with `--one-tool-per-reply`, the first tool block if it is complete);
//! - native: every call kept for history has a JSON object as its arguments text, and each is
//!   decided once: it runs or the model is told why not;
//! - every `--json` line is one JSON object, and the complete `tool_call` events name the calls,
//!   besides those answered at once with a failed `tool_result` (native arguments that are not
//!   JSON), each of which has its complete event.
#![no_main]

use std::io::Write;
use std::sync::{Arc, Mutex};

use agent_min::run::llm::providers::{Decoder, Provider};
use agent_min::run::llm::{ApiError, Delta, Flow, Message, Part, Transport};
use agent_min::run::native;
use agent_min::run::reply::{Reply, Screen};
use agent_min::run::session::events::Events;
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
    // The high bit picks the dialect, so seed.py's seeds (first byte below 128) stay XML; the
    // next bit picks `--one-tool-per-reply`.
    let native = first & 0x80 != 0;
    let one_tool = first & 0x40 != 0;
    let first = first & 0x3f;
    let provider = [Provider::Anthropic, Provider::OpenAi, Provider::Ollama][usize::from(first % 3)];
    let chunk = usize::from(first / 3).max(1);
    let (shown, json) = (Sink::default(), Sink::default());
    let mut term = Term::to_writer(Box::new(shown.clone()));
    let mut events = Events::to(Box::new(json.clone()));
    let mut screen = Screen::new(&mut term, &mut events, 1, one_tool);
    let mut server = Server { provider, bytes, chunk };
    let read = if native {
        native::reply::read_reply(&mut server, "", &[], &mut screen, true)
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
    assert!(reply.calls.windows(2).all(|w| w[0].n < w[1].n), "calls run in reply order");
    assert!(!one_tool || reply.calls.len() <= 1, "one tool per reply ran {}", reply.calls.len());

    if native && !reply.recovered {
        check_native_calls(&reply, one_tool);
    } else {
        // XML, or a native reply whose calls were written as XML in its text (they all run,
        // as the XML dialect's do; with one tool per reply, the first).
        check_xml_calls(&reply, one_tool);
    }
    check_events(&json, &reply);
});

/// Native dialect: every call kept for history has a JSON object as its arguments text, and
/// each is decided once: it runs, or the model is told why not (cut off, invalid arguments,
/// one tool per reply). With one tool per reply the first is decided as runs, cut off
/// (`open_tool`) or invalid (`invalid_call`), and every further one is answered.
fn check_native_calls(reply: &Reply, one_tool: bool) {
    let calls: Vec<_> =
        reply.parts.iter().filter_map(|p| if let Part::ToolUse(t) = p { Some(t) } else { None }).collect();
    for (k, c) in calls.iter().enumerate() {
        let v: serde_json::Value = serde_json::from_str(&c.input).expect("a call's input is JSON");
        assert!(v.is_object(), "a call's input is not a JSON object: {:?}", c.input);
        let runs = reply.calls.iter().any(|p| p.n == k);
        if one_tool && k == 0 {
            let decided = [runs, reply.open_tool.is_some(), reply.invalid_call.is_some()];
            assert_eq!(decided.iter().filter(|d| **d).count(), 1, "{decided:?}");
        } else if one_tool {
            assert!(!runs && c.answer.is_some(), "call {k} after the first ran or was not answered");
        } else {
            assert_eq!(runs, c.answer.is_none(), "call {k}: runs {runs}, answer {:?}", c.answer);
        }
    }
    assert!(reply.calls.iter().all(|p| p.n < calls.len()), "a call runs that is not in the reply");
}

/// XML: the calls returned are exactly the complete tool blocks of a whole parse of the reply
/// text, in order (`first_only`: the first tool block, and only if it is complete).
fn check_xml_calls(reply: &Reply, first_only: bool) {
    let whole = parse(&reply.text);
    let tools: Vec<_> = whole
        .blocks()
        .into_iter()
        .filter_map(|b| match b {
            Block::ToolUse(t) => Some(t),
            _ => None,
        })
        .collect();
    let expected: Vec<_> = if first_only {
        tools.into_iter().take(1).filter(|t| !t.partial).collect()
    } else {
        tools.into_iter().filter(|t| !t.partial).collect()
    };
    assert_eq!(reply.calls.len(), expected.len(), "calls returned vs complete tool blocks");
    for (planned, t) in reply.calls.iter().zip(&expected) {
        assert_eq!(planned.call.name, t.name);
        let params = read_as_cline(t.name, t.params().iter().map(|p| (p.name, p.value)).collect());
        let got: Vec<(&str, &str)> = planned.call.params.iter().map(|p| (p.0.as_str(), p.1.as_str())).collect();
        assert_eq!(got, params);
    }
}

/// A tool block's params as Cline's executor reads them: `write_to_file` and `replace_in_file`
/// take `path || absolutePath`, and an `attempt_completion` without a `result` but with a
/// `response` has that as its result (`canonicalizeAttemptCompletionParams`), added after the
/// params as sent.
fn read_as_cline<'a>(name: &str, mut params: Vec<(&'a str, &'a str)>) -> Vec<(&'a str, &'a str)> {
    let alias = match name {
        "write_to_file" | "replace_in_file" => Some(("absolutePath", "path")),
        "attempt_completion" => Some(("response", "result")),
        _ => None,
    };
    let given = |params: &[(&str, &str)], key: &str| params.iter().any(|p| p.0 == key && !p.1.is_empty());
    if let Some((from, to)) = alias.filter(|(from, to)| !given(&params, to) && given(&params, from)) {
        let value = params.iter().find(|p| p.0 == from).expect("given").1;
        params.retain(|p| p.0 != to);
        params.push((to, value));
    }
    params
}

/// Every `--json` line is one JSON object; the complete `tool_call` events name the calls
/// returned, in order, besides the calls answered at once with a failed `tool_result` (not
/// run: native arguments that are not JSON), each of which has its complete event.
fn check_events(json: &Sink, reply: &Reply) {
    let json = String::from_utf8(json.0.lock().unwrap().clone()).expect("events are UTF-8");
    let (mut complete, mut answered) = (Vec::new(), Vec::new());
    for line in json.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("each event is one JSON object");
        let id = v["call_id"].as_str().unwrap_or_default().to_string();
        if v["type"] == "tool_call" && v["partial"] == false {
            complete.push((id, v["tool"].as_str().expect("a tool_call names its tool").to_string()));
        } else if v["type"] == "tool_result" {
            assert_eq!(v["ok"], false, "only a call that did not run is answered while the reply streams");
            answered.push(id);
        }
    }
    for id in &answered {
        assert!(complete.iter().any(|(c, _)| c == id), "a tool_result for {id} without its complete tool_call");
    }
    let run: Vec<&str> =
        complete.iter().filter(|(id, _)| !answered.contains(id)).map(|(_, tool)| tool.as_str()).collect();
    let calls: Vec<&str> = reply.calls.iter().map(|p| p.call.name.as_str()).collect();
    assert_eq!(run, calls, "complete tool_call events vs the calls returned");
}
