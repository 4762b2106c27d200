//! Property tests on generated replies: the fast parser equals the naive oracle, with Cline's
//! tables and with tables built at run time; streaming equals whole parsing.
// The growable API (`parse`, `StreamParser`) is the default `alloc` feature.
#![cfg(feature = "alloc")]

mod support;

use parser_core::{parse, parse_with, Grammar, StreamParser, TagSetBuf, CLINE_PARAM_NAMES, CLINE_TOOL_NAMES};
use support::gen::{reply, reply_with};
use support::{char_chunks, naive_to_json, oracle, same, to_json, to_naive, Rng};

#[test]
fn fast_parser_equals_naive_oracle_on_20000_random_replies() {
    let mut rng = Rng(0x0dd_ba11_cafe_f00d);
    let mut tools_seen = 0;
    for n in 0..20_000 {
        let input = reply(&mut rng);
        let naive = oracle::parse(&input, &CLINE_TOOL_NAMES, &CLINE_PARAM_NAMES);
        let (want, got) = (naive_to_json(&naive), to_json(parse(&input).iter()));
        assert!(same(&got, &want), "reply #{n} {input:?}:\n naive {want}\n fast  {got}");
        // Raw (untrimmed) values too, which the conformance files do not record.
        assert_eq!(to_naive(parse(&input).iter()), naive, "reply #{n} {input:?}: raw values");
        tools_seen += got.as_array().unwrap().iter().filter(|b| b["type"] == "tool_use").count();
    }
    assert!(tools_seen > 5_000, "the generator made only {tools_seen} tool blocks");
}

#[test]
fn run_time_tables_behave_like_the_oracle_with_the_same_names() {
    let mut rng = Rng(0xfeed_0000_1111_2222);
    let pool =
        ["do_it", "mcp__github__create_issue", "x", "a.b-c", "über", "ask", "path", "write_to_file", "长名字", "k9"];
    for n in 0..3_000 {
        let mut tools: Vec<&str> = pool.iter().copied().filter(|_| rng.below(2) == 0).collect();
        let mut params: Vec<&str> = pool.iter().copied().filter(|_| rng.below(2) == 0).collect();
        tools.push("read_file");
        if rng.below(2) == 0 {
            // `write_to_file` re-takes `content` even when `content` is not a param name.
            params.push("content");
        }
        let (tool_set, param_set) = (TagSetBuf::try_new(&tools).unwrap(), TagSetBuf::try_new(&params).unwrap());
        let grammar = Grammar::new(tool_set.table(), param_set.table());
        let input = reply_with(&mut rng, &tools, &params);
        let want = naive_to_json(&oracle::parse(&input, &tools, &params));
        let got = to_json(parse_with(&input, &grammar).iter());
        assert!(
            same(&got, &want),
            "case {n} tools {tools:?} params {params:?} {input:?}:\n naive {want}\n fast  {got}"
        );
    }
}

#[test]
fn streaming_equals_whole_parse_on_random_replies_and_chunkings() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for _ in 0..5_000 {
        let input = reply(&mut rng);
        let mut p = StreamParser::new();
        for w in char_chunks(&input, &mut rng, 8).windows(2) {
            p.push_str(&input[w[0]..w[1]]);
            assert!(p.blocks() == parse(&input[..w[1]]).blocks(), "{input:?} at {}", w[1]);
        }
    }
}

#[test]
fn the_oracle_and_the_parser_can_disagree_when_the_tables_differ() {
    // Guards the property tests against a comparison that cannot fail.
    let input = "<read_file><path>a</path></read_file>";
    let naive = naive_to_json(&oracle::parse(input, &["list_files"], &CLINE_PARAM_NAMES));
    assert!(!same(&naive, &to_json(parse(input).iter())));
}

#[test]
fn tools_with_many_repeated_params_match_the_oracle_whole_and_streamed() {
    // Past 16 params a tool's same-name search goes through a hash index: exercise it with
    // repeats, several tools per reply, a re-taken `content`, and streams cut anywhere.
    let names: Vec<String> = (0..60).map(|i| format!("p{i}")).chain(["content".to_string()]).collect();
    let params: Vec<&str> = names.iter().map(String::as_str).collect();
    let tools = ["t", "write_to_file"];
    let (tool_set, param_set) = (TagSetBuf::try_new(&tools).unwrap(), TagSetBuf::try_new(&params).unwrap());
    let grammar = Grammar::new(tool_set.table(), param_set.table());
    let mut rng = Rng(0x5eed_0017_0000_0001);
    for n in 0..400 {
        let mut input = String::new();
        for _ in 0..1 + rng.below(3) {
            let tool = tools[rng.below(2)];
            input.push_str(&format!("pre {n} <{tool}>"));
            for _ in 0..rng.below(120) {
                let p = params[rng.below(params.len())];
                input.push_str(&format!("<{p}> v{} </{p}>", rng.below(1000)));
            }
            if rng.below(4) > 0 {
                input.push_str(&format!("</{tool}>"));
            }
        }
        let want = naive_to_json(&oracle::parse(&input, &tools, &params));
        let whole = parse_with(&input, &grammar);
        let got = to_json(whole.iter());
        assert!(same(&got, &want), "case {n} {input:?}:\n naive {want}\n fast  {got}");
        let mut p = StreamParser::with_grammar(&grammar);
        for w in char_chunks(&input, &mut rng, 40).windows(2) {
            p.push_str(&input[w[0]..w[1]]);
        }
        assert!(p.blocks() == whole.blocks(), "case {n}: streamed");
    }
}
