//! The streaming contract: after every push, the blocks equal a whole parse of the text so far.
// The growable API (`parse`, `StreamParser`) is the default `alloc` feature.
#![cfg(feature = "alloc")]

mod support;

use std::collections::BTreeMap;

use parser_core::{parse, Block, StreamParser, Utf8ErrorKind};
use support::{char_chunks, load, same, to_json, Rng};

/// Every prefix of the 69 streamed replies, fed one character at a time: the blocks after push k
/// equal Cline's output for the prefix of k code points.
#[test]
fn one_char_at_a_time_matches_every_cline_prefix() {
    let cases = load("cline-v4.0.10-prefixes.jsonl");
    let mut by_base: BTreeMap<&str, BTreeMap<usize, &support::Case>> = BTreeMap::new();
    for c in &cases {
        let (base, k) = c.id.rsplit_once('/').expect("prefix id is base/k");
        by_base.entry(base).or_default().insert(k.parse().expect("k"), c);
    }
    assert_eq!(by_base.len(), 69);
    let mut checked = 0;
    for (base, prefixes) in &by_base {
        let full = &prefixes.values().last().unwrap().input;
        assert_eq!(prefixes.len(), full.chars().count() + 1, "{base}: every prefix present");
        let mut p = StreamParser::new();
        let mut k = 0;
        let check = |p: &StreamParser, k: usize| {
            let want = &prefixes[&k].expected;
            let got = to_json(p.blocks());
            assert!(same(&got, want), "{base}/{k}: expected {want}, got {got}");
        };
        check(&p, 0);
        for ch in full.chars() {
            p.push_str(ch.encode_utf8(&mut [0; 4]));
            k += 1;
            check(&p, k);
            checked += 1;
        }
        let finished = to_json(p.finish().expect("valid UTF-8"));
        assert!(same(&finished, &prefixes[&k].expected), "{base}: finish changed the blocks");
    }
    assert_eq!(checked + 69, cases.len());
}

/// Random chunkings of 1..=64 characters, every input of the main file, checked at every boundary.
#[test]
fn random_char_chunkings_equal_whole_parse_at_every_boundary() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    for c in load("cline-v4.0.10.jsonl") {
        let cuts = char_chunks(&c.input, &mut rng, 64);
        let mut p = StreamParser::new();
        for w in cuts.windows(2) {
            p.push_str(&c.input[w[0]..w[1]]);
            let text = &c.input[..w[1]];
            assert_eq!(p.text(), text);
            assert!(
                p.blocks() == parse(text).blocks(),
                "{} at byte {}: {:?} vs {:?}",
                c.id,
                w[1],
                p.blocks(),
                parse(text).blocks()
            );
        }
        assert!(same(&to_json(p.finish().unwrap()), &c.expected), "{}: final blocks", c.id);
    }
}

/// Raw byte chunks that split UTF-8 sequences anywhere: the held bytes wait for their character,
/// and the blocks always equal a whole parse of the complete characters so far.
#[test]
fn random_byte_chunkings_split_utf8_and_still_match() {
    let mut rng = Rng(0xb17e_5eed_0000_0002);
    let mut split_inside_a_char = 0;
    for c in load("cline-v4.0.10.jsonl") {
        let bytes = c.input.as_bytes();
        let mut p = StreamParser::new();
        let mut at = 0;
        while at < bytes.len() {
            let max = if rng.below(2) == 0 { 3 } else { 64 };
            let end = (at + 1 + rng.below(max)).min(bytes.len());
            p.push_bytes(&bytes[at..end]).expect("valid UTF-8");
            at = end;
            let mut valid = at;
            while !c.input.is_char_boundary(valid) {
                valid -= 1;
            }
            split_inside_a_char += usize::from(valid != at);
            assert_eq!(p.text(), &c.input[..valid]);
            assert!(p.blocks() == parse(&c.input[..valid]).blocks(), "{} at byte {at}", c.id);
        }
        assert!(same(&to_json(p.finish().unwrap()), &c.expected), "{}: final blocks", c.id);
    }
    assert!(split_inside_a_char > 1000, "chunkings split only {split_inside_a_char} characters");
}

/// `Progress` tells, without diffing, what a push changed and what it completed.
#[test]
fn progress_reports_exactly_the_changed_and_completed_blocks() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for c in load("cline-v4.0.10.jsonl").iter().filter(|c| c.input.len() < 20_000) {
        let mut p = StreamParser::new();
        let mut before: Vec<String> = Vec::new();
        let mut before_partial: Vec<bool> = Vec::new();
        for w in char_chunks(&c.input, &mut rng, 16).windows(2) {
            let progress = p.push_str(&c.input[w[0]..w[1]]);
            let now: Vec<String> = p.blocks().iter().map(|b| format!("{b:?}")).collect();
            let partial: Vec<bool> = p
                .blocks()
                .iter()
                .map(|b| match b {
                    Block::Text { partial, .. } => partial,
                    Block::ToolUse(t) => t.partial,
                })
                .collect();
            assert_eq!(progress.changed.end.max(now.len()), now.len(), "{}", c.id);
            // Everything before `changed.start` is untouched.
            for (i, block) in now.iter().enumerate().take(progress.changed.start) {
                assert_eq!(before.get(i), Some(block), "{}: block {i} changed but was reported unchanged", c.id);
            }
            // An empty `changed` means nothing visible changed at all.
            if progress.changed.is_empty() {
                assert_eq!(before, now, "{}: reported no change", c.id);
            }
            // `completed` is exactly the blocks that are complete now and were not before.
            let newly: Vec<usize> =
                (0..now.len()).filter(|&i| !partial[i] && before_partial.get(i).is_none_or(|&p| p)).collect();
            let reported: Vec<usize> = progress.completed.clone().collect();
            assert_eq!(reported, newly, "{}: completed blocks", c.id);
            before = now;
            before_partial = partial;
        }
    }
}

#[test]
fn invalid_utf8_is_an_error_with_its_offset_and_keeps_what_came_before() {
    let mut p = StreamParser::new();
    p.push_bytes(b"Hi <read_file><path>a").unwrap();
    let err = p.push_bytes(b"b\xffc</path>").unwrap_err();
    assert_eq!((err.error.offset, err.error.kind), (22, Utf8ErrorKind::Invalid));
    assert_eq!(p.text(), "Hi <read_file><path>ab");
    assert!(p.blocks() == parse("Hi <read_file><path>ab").blocks());

    // A lone continuation byte after a held lead byte.
    let mut p = StreamParser::new();
    p.push_bytes(b"x\xe2\x82").unwrap();
    assert_eq!(p.text(), "x");
    let err = p.push_bytes(b"A").unwrap_err();
    assert_eq!((err.error.offset, err.error.kind), (1, Utf8ErrorKind::Invalid));

    // A stream that ends inside a character.
    let mut p = StreamParser::new();
    p.push_bytes("é".as_bytes().split_at(1).0).unwrap();
    let err = p.finish().unwrap_err();
    assert_eq!((err.offset, err.kind), (0, Utf8ErrorKind::Incomplete));
}

/// Found in review: after an error nothing more may be parsed, or the text would have a hole
/// and offsets would lie. Errors are sticky until `reset`.
#[test]
fn a_broken_stream_refuses_everything_after_the_hole() {
    // Bytes, then invalid bytes, then more: the error stays the first one, at its true offset.
    let mut p = StreamParser::new();
    assert_eq!(p.push_bytes(b"ab\xffcd").unwrap_err().error.offset, 2);
    assert_eq!(p.push_bytes(b"ef").unwrap_err().error.offset, 2);
    assert_eq!(p.push_bytes(b"\xff").unwrap_err().error.offset, 2);
    assert_eq!(p.text(), "ab");
    assert!(p.push_str("gh").changed.is_empty());
    assert_eq!(p.text(), "ab");
    assert_eq!(p.finish().unwrap_err().offset, 2);

    // A `&str` cannot complete held bytes: the stream breaks there; the chunk is not taken.
    let mut p = StreamParser::new();
    p.push_bytes(b"<read_file><path>ok\xf0\x9f").unwrap();
    let progress = p.push_str("more");
    assert!(progress.changed.is_empty() && progress.completed.is_empty());
    let progress = p.push_str("</path></read_file>");
    assert!(progress.completed.is_empty(), "no tool may complete after the hole");
    assert_eq!(p.text(), "<read_file><path>ok");
    assert_eq!(p.error().map(|e| e.offset), Some(19));
    assert_eq!(p.finish().unwrap_err().offset, 19);

    // `reset` starts a new reply.
    p.reset();
    assert!(p.error().is_none() && p.text().is_empty() && p.is_empty());
    p.push_str("<read_file><path>x</path></read_file>");
    assert_eq!(p.len(), 1);
}

/// Found in review: a tool that closes before invalid bytes in the same chunk is still reported
/// complete, in the error's `progress`.
#[test]
fn an_error_still_reports_what_the_push_completed() {
    let mut p = StreamParser::new();
    let err = p.push_bytes(b"<read_file><path>a</path></read_file>\xff").unwrap_err();
    assert_eq!(err.error.offset, 37);
    assert_eq!(err.progress.completed, 0..1);
    assert_eq!(err.progress.changed, 0..1);
}

/// A block as owned values, for comparing a push's blocks with the previous push's.
#[derive(Clone, Debug, PartialEq)]
enum Owned {
    Text(String, bool),
    /// Name, partial, ordinal, params (name, value), the streaming param.
    Tool(String, bool, usize, Vec<(String, String)>, Option<usize>),
}

fn owned(p: &StreamParser<'_>) -> Vec<Owned> {
    p.blocks()
        .iter()
        .map(|b| match b {
            Block::Text { content, partial } => Owned::Text(content.into(), partial),
            Block::ToolUse(t) => Owned::Tool(
                t.name.into(),
                t.partial,
                t.ordinal,
                t.params().iter().map(|p| (p.name.into(), p.value.into())).collect(),
                t.params().streaming(),
            ),
        })
        .collect()
}

/// `Progress::grew_only` is true only when the last block's growing string is all that moved
/// (and it is true for most pushes, so that this test cannot pass by never claiming it).
#[test]
fn grew_only_means_only_the_last_blocks_growing_string_moved() {
    let mut rng = Rng(0x5eed);
    let (mut pushes, mut grew) = (0, 0);
    for c in load("cline-v4.0.10.jsonl").iter().filter(|c| c.input.len() < 20_000) {
        let mut p = StreamParser::new();
        let mut before: Vec<Owned> = Vec::new();
        for w in char_chunks(&c.input, &mut rng, 16).windows(2) {
            let progress = p.push_str(&c.input[w[0]..w[1]]);
            let now = owned(&p);
            pushes += 1;
            // `Blocks::growing` names the same string as the blocks do.
            let blocks = p.blocks();
            let want = match blocks.last() {
                Some(Block::Text { content, partial: true }) => Some((None, content)),
                Some(Block::ToolUse(t)) if t.partial => {
                    t.params().streaming().map(|k| (Some(k), t.params().iter().nth(k).expect("streaming param").value))
                }
                _ => None,
            };
            let got = blocks.growing().map(|(k, span)| (k, &p.text()[span.start..span.end]));
            assert_eq!(got, want, "{}", c.id);
            if progress.grew_only {
                grew += 1;
                let n = now.len();
                assert_eq!((before.len(), progress.changed.clone()), (n, n - 1..n), "{}", c.id);
                assert!(progress.completed.is_empty(), "{}", c.id);
                assert_eq!(before[..n - 1], now[..n - 1], "{}", c.id);
                match (&before[n - 1], &now[n - 1]) {
                    (Owned::Text(_, a), Owned::Text(_, b)) => assert_eq!(a, b, "{}", c.id),
                    (Owned::Tool(name0, partial0, ord0, params0, s0), Owned::Tool(name, partial, ord, params, s)) => {
                        assert_eq!((name0, partial0, ord0, s0), (name, partial, ord, s), "{}", c.id);
                        let k = s.expect("a tool that grew streams a param");
                        assert_eq!(params0.len(), params.len(), "{}", c.id);
                        for (i, (a, b)) in params0.iter().zip(params).enumerate() {
                            assert_eq!(a.0, b.0, "{}: param names", c.id);
                            if i != k {
                                assert_eq!(a.1, b.1, "{}: param {i} moved, but {k} streams", c.id);
                            }
                        }
                    }
                    (a, b) => panic!("{}: the last block changed kind: {a:?} -> {b:?}", c.id),
                }
            }
            before = now;
        }
    }
    assert!(grew * 2 > pushes, "grew_only on {grew} of {pushes} pushes");
}

/// `Progress` with raw bytes splitting UTF-8, checked against consecutive whole parses.
#[test]
fn progress_from_byte_pushes_matches_the_diff_of_whole_parses() {
    let mut rng = Rng(0xabcdef);
    for c in load("cline-v4.0.10.jsonl").iter().filter(|c| c.input.len() < 8_000) {
        let mut p = StreamParser::new();
        let bytes = c.input.as_bytes();
        let mut before: Vec<(String, bool)> = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            let end = (at + 1 + rng.below(9)).min(bytes.len());
            let progress = p.push_bytes(&bytes[at..end]).unwrap();
            at = end;
            let now: Vec<(String, bool)> = p
                .blocks()
                .iter()
                .map(|b| {
                    let done = !match b {
                        Block::Text { partial, .. } => partial,
                        Block::ToolUse(t) => t.partial,
                    };
                    (format!("{b:?}"), done)
                })
                .collect();
            for (i, b) in now.iter().enumerate().take(progress.changed.start) {
                assert_eq!(before.get(i), Some(b), "{}: block {i} reported unchanged", c.id);
            }
            if progress.changed.is_empty() {
                assert_eq!(before, now, "{}", c.id);
            }
            let newly: Vec<usize> =
                (0..now.len()).filter(|&i| now[i].1 && !before.get(i).is_some_and(|b| b.1)).collect();
            assert_eq!(progress.completed.clone().collect::<Vec<_>>(), newly, "{}", c.id);
            before = now;
        }
    }
}

#[test]
fn a_split_four_byte_character_waits_for_its_last_byte() {
    let emoji = "<read_file><path>😀</path></read_file>";
    let mut p = StreamParser::new();
    for b in emoji.as_bytes() {
        p.push_bytes(std::slice::from_ref(b)).unwrap();
        assert!(emoji.starts_with(p.text()));
    }
    let Some(Block::ToolUse(t)) = p.block(0) else { panic!("a tool") };
    assert_eq!((t.param("path"), t.partial), (Some("😀"), false));
}

#[test]
fn ordinals_are_stable_while_a_reply_streams() {
    let reply = "a<read_file><path>x</path></read_file> b <list_files><path>.</path></list_files>";
    let mut p = StreamParser::new();
    let mut seen: BTreeMap<usize, String> = BTreeMap::new();
    for ch in reply.chars() {
        p.push_str(ch.encode_utf8(&mut [0; 4]));
        for b in p.blocks() {
            if let Block::ToolUse(t) = b {
                let prev = seen.entry(t.ordinal).or_insert_with(|| t.name.to_string());
                assert_eq!(prev, t.name, "ordinal {} changed tool", t.ordinal);
            }
        }
    }
    assert_eq!(seen.len(), 2);
}

#[cfg(feature = "nanorand")]
#[test]
fn call_ids_never_change_across_pushes_and_follow_the_seed() {
    let reply = "<read_file><path>x</path></read_file><read_file><path>y</path></read_file>";
    let mut p = StreamParser::new().with_call_seed(42);
    let mut ids: BTreeMap<usize, String> = BTreeMap::new();
    for ch in reply.chars() {
        p.push_str(ch.encode_utf8(&mut [0; 4]));
        for b in p.blocks() {
            if let Block::ToolUse(t) = b {
                let id = t.call_id().to_string();
                assert_eq!(id.len(), 8);
                assert!(id.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-'));
                assert_eq!(ids.entry(t.ordinal).or_insert_with(|| id.clone()), &id);
            }
        }
    }
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[&0], ids[&1]);
    let mut other = StreamParser::new().with_call_seed(43);
    other.push_str(reply);
    let Some(Block::ToolUse(t)) = other.block(0) else { panic!() };
    assert_ne!(t.call_id().to_string(), ids[&0], "a different seed gives different ids");
}

/// Found by the `streaming` fuzz target: cutting short replies every possible way (all cut sets of
/// the first 16 gaps, and every pair of cuts anywhere).
#[test]
fn every_chunking_of_short_replies_matches() {
    let check = |input: &str, cuts: &[usize]| {
        let mut p = StreamParser::new();
        let mut start = 0;
        for &i in cuts.iter().chain([&input.len()]) {
            p.push_str(&input[start..i]);
            start = i;
            assert!(
                p.blocks() == parse(&input[..i]).blocks(),
                "{input:?} cut at {cuts:?}, wrong at {i}: {:?}",
                p.blocks()
            );
        }
    };
    for input in [
        "<read_file><path>",
        "a<read_file><path>x</path></read_file>b",
        "<write_to_file><content>x</content></write_to_file>",
    ] {
        let n = input.len();
        for mask in 0u32..1 << (n - 1).min(16) {
            let cuts: Vec<usize> = (1..n).filter(|i| i - 1 < 32 && mask & (1 << (i - 1)) != 0).collect();
            check(input, &cuts);
        }
        for i in 1..n {
            for j in i + 1..n {
                check(input, &[i, j]);
            }
        }
    }
}

/// Found by the `streaming` fuzz target: blocks from a seeded stream compare equal to a whole
/// parse (the call seed is not part of what was parsed).
#[test]
fn a_call_seed_does_not_change_what_the_blocks_are() {
    let mut p = StreamParser::new().with_call_seed(99);
    p.push_str("<read_file><path>");
    assert!(p.blocks() == parse("<read_file><path>").blocks());
}
