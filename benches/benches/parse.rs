//! `cargo bench -p benches`: the parser against the scan limit, in one run so ratios are fair.

use std::hint::black_box;
use std::sync::LazyLock;

use benches::*;
use divan::counter::BytesCount;
use divan::Bencher;
use parser_core::{fixed, parse, Grammar, CLINE_PARAM_NAMES, CLINE_TOOL_NAMES};

static TYPICAL: LazyLock<String> = LazyLock::new(typical_4k);
static WRITE: LazyLock<String> = LazyLock::new(write_100k);
static MIXED: LazyLock<String> = LazyLock::new(mixed_1mib);
static SPACES: LazyLock<String> = LazyLock::new(spaces_1mib);

fn corpus(name: &str) -> &'static str {
    match name {
        "typical_4k" => &TYPICAL,
        "write_100k" => &WRITE,
        "spaces_1mib" => &SPACES,
        _ => &MIXED,
    }
}

const CORPORA: &[&str] = &["typical_4k", "write_100k", "mixed_1mib", "spaces_1mib"];

fn main() {
    divan::main();
}

#[divan::bench(args = CORPORA)]
fn whole_parse(b: Bencher, name: &str) {
    let s = corpus(name);
    b.counter(BytesCount::of_str(s)).bench(|| parse(black_box(s)).len());
}

#[divan::bench(args = CORPORA)]
fn heapless_whole_parse(b: Bencher, name: &str) {
    let s = corpus(name);
    let mut storage = Box::new(fixed::Storage::<8192, 16384>::new());
    b.counter(BytesCount::of_str(s))
        .bench_local(|| fixed::parse_into(black_box(s), &mut storage, Grammar::cline()).map_or(0, |b| b.len()));
}

/// `memchr_iter().count()`: memchr's vectorised count, not a find-next.
#[divan::bench(args = CORPORA)]
fn memchr_count_baseline(b: Bencher, name: &str) {
    let s = corpus(name);
    b.counter(BytesCount::of_str(s)).bench(|| memchr_count(black_box(s.as_bytes())));
}

/// True find-next: one `next()` per `<`.
#[divan::bench(args = CORPORA)]
fn memchr_find_next_baseline(b: Bencher, name: &str) {
    let s = corpus(name);
    b.counter(BytesCount::of_str(s)).bench(|| memchr_find_next(black_box(s.as_bytes())));
}

/// One tool carrying K run-time param names: linear in K (it was quadratic).
#[divan::bench(args = [1000, 4000, 16000, 64000], sample_count = 10)]
fn many_params_one_tool(b: Bencher, k: usize) {
    let (names, reply) = many_params(k);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let tools = parser_core::TagSetBuf::try_new(&["t"]).unwrap();
    let params = parser_core::TagSetBuf::try_new(&names).unwrap();
    let grammar = Grammar::new(tools.table(), params.table());
    b.counter(BytesCount::of_str(&reply)).bench(|| parser_core::parse_with(black_box(&reply), &grammar).len());
}

#[divan::bench(args = CORPORA)]
fn byte_loop_baseline(b: Bencher, name: &str) {
    let s = corpus(name);
    b.counter(BytesCount::of_str(s)).bench(|| byte_loop(black_box(s.as_bytes())));
}

#[divan::bench(args = [16, 64, 256])]
fn stream_mixed_1mib(b: Bencher, chunk: usize) {
    let s = corpus("mixed_1mib");
    b.counter(BytesCount::of_str(s)).bench(|| stream(black_box(s), chunk));
}

#[divan::bench(args = [16, 64, 256])]
fn stream_str_mixed_1mib(b: Bencher, chunk: usize) {
    let s = corpus("mixed_1mib");
    b.counter(BytesCount::of_str(s)).bench(|| stream_str(black_box(s), chunk));
}

#[divan::bench(args = [16, 64, 256])]
fn memchr_chunked_mixed_1mib(b: Bencher, chunk: usize) {
    let s = corpus("mixed_1mib");
    b.counter(BytesCount::of_str(s)).bench(|| memchr_chunked(black_box(s.as_bytes()), chunk));
}

#[divan::bench(args = [16, 64, 256])]
fn stream_write_100k(b: Bencher, chunk: usize) {
    let s = corpus("write_100k");
    b.counter(BytesCount::of_str(s)).bench(|| stream(black_box(s), chunk));
}

/// Cline's way: re-parse the whole accumulated text after each 16-byte chunk of a 200 KB write.
#[divan::bench(sample_count = 3, sample_size = 1)]
fn reparse_every_16_bytes_write_200k(b: Bencher) {
    let s = format!("{}{}", &*WRITE, &*WRITE);
    b.counter(BytesCount::of_str(&s)).bench(|| reparse_every_chunk(black_box(&s), 16));
}

#[divan::bench(sample_count = 20)]
fn stream_every_16_bytes_write_200k(b: Bencher) {
    let s = format!("{}{}", &*WRITE, &*WRITE);
    b.counter(BytesCount::of_str(&s)).bench(|| stream(black_box(&s), 16));
}

/// The naive oracle tests every tag at every character: only the 4 KB reply is worth timing.
#[divan::bench(sample_count = 10)]
fn naive_oracle_typical_4k(b: Bencher) {
    let s = corpus("typical_4k");
    b.counter(BytesCount::of_str(s)).bench(|| oracle::parse(black_box(s), &CLINE_TOOL_NAMES, &CLINE_PARAM_NAMES).len());
}
