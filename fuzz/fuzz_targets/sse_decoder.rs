//! The agent's SSE decoder never panics, and how the bytes are chunked never changes the events.
#![no_main]

use agent_min::run::llm::sse::SseDecoder;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&cut, stream)) = data.split_first() else { return };
    let mut whole = SseDecoder::new();
    let mut expected = whole.push(stream);
    expected.extend(whole.finish());
    let mut chunked = SseDecoder::new();
    let mut got = Vec::new();
    for chunk in stream.chunks(usize::from(cut).max(1)) {
        got.extend(chunked.push(chunk));
    }
    got.extend(chunked.finish());
    assert_eq!(got, expected);
});
