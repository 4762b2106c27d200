//! Runs one workload once, for `callgrind.sh` to count its instructions.
//! Usage: ipb MODE CORPUS, MODE in
//! none|info|whole|fixed|stream16|stream64|stream256|memchr_count|memchr_next|wasm_stream16|
//! wasm_stream64 (the WebAssembly package's exported layer, compiled natively), CORPUS in
//! typical_4k|write_100k|mixed_1mib|spaces_1mib|write_200k|tools_1k|tools_4k|params_K (one tool
//! carrying K run-time param names). Prints the corpus size in bytes.

use std::hint::black_box;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (mode, corpus) = match args.as_slice() {
        [_, m, c] => (m.as_str(), c.as_str()),
        _ => {
            eprintln!("usage: ipb MODE CORPUS");
            std::process::exit(2);
        }
    };
    let text = match corpus {
        "typical_4k" => benches::typical_4k(),
        "write_100k" => benches::write_100k(),
        "mixed_1mib" => benches::mixed_1mib(),
        "spaces_1mib" => benches::spaces_1mib(),
        "write_200k" => benches::write_code(200 * 1024),
        "tools_1k" => benches::many_tools(1000),
        "tools_4k" => benches::many_tools(4000),
        other => match other.strip_prefix("params_").and_then(|k| k.parse::<usize>().ok()) {
            Some(k) => benches::many_params(k).1,
            None => {
                eprintln!("unknown corpus {other}");
                std::process::exit(2);
            }
        },
    };
    let s = black_box(text.as_str());
    // params_K: a run-time grammar of K param names, built in every mode (so the baseline
    // subtracts it); mode `whole` then parses with it.
    let names = corpus.strip_prefix("params_").map(|k| benches::many_params(k.parse().unwrap_or(0)).0);
    let names: Vec<&str> = names.iter().flatten().map(String::as_str).collect();
    let tools = parser_core::TagSetBuf::try_new(&["t"]).expect("one tool name");
    let params = black_box(parser_core::TagSetBuf::try_new(&names).expect("param names"));
    let grammar = parser_core::Grammar::new(tools.table(), params.table());
    // Made in every mode, so that the baseline run subtracts its construction from `fixed`.
    let mut storage = black_box(Box::new(parser_core::fixed::Storage::<8192, 16384>::new()));
    let n = match mode {
        "none" | "info" => 0,
        "whole" if !names.is_empty() => parser_core::parse_with(s, &grammar).len(),
        "whole" => parser_core::parse(s).len(),
        "fixed" => {
            parser_core::fixed::parse_into(s, &mut storage, parser_core::Grammar::cline()).map_or(0, |b| b.len())
        }
        "stream16" => benches::stream(s, 16),
        "stream64" => benches::stream(s, 64),
        "stream256" => benches::stream(s, 256),
        "wasm_stream16" => benches::wasm_stream(s, 16),
        "wasm_stream64" => benches::wasm_stream(s, 64),
        "memchr_count" => benches::memchr_count(s.as_bytes()),
        "memchr_next" => benches::memchr_find_next(s.as_bytes()),
        other => {
            eprintln!("unknown mode {other}");
            std::process::exit(2);
        }
    };
    black_box(n);
    if mode == "info" {
        let lt = text.bytes().filter(|&b| b == b'<').count();
        eprintln!("{corpus}: {} bytes, one `<` per {} bytes", text.len(), text.len() / lt.max(1));
    }
    println!("{}", text.len());
}
