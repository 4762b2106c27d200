//! Deterministic corpora and baselines shared by the divan benches (`benches/parse.rs`) and the
//! callgrind instruction counter (`src/bin/ipb.rs`, driven by `callgrind.sh`).

#[path = "../../parser-core/src/oracle.rs"]
#[allow(missing_docs)]
pub mod oracle;

use parser_core::{parse, StreamParser};

/// A small deterministic PRNG (xorshift64*), so every run measures the same bytes.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n as u64) as usize
    }
}

const PROSE: &[&str] = &[
    "Let me look at how the configuration is loaded before changing anything. ",
    "The failing test expects the parser to keep the first line's indentation, ",
    "so I will read the module, then make the smallest change that fixes it. ",
    "This function returns early when the buffer is empty, which hides the bug. ",
    "After the edit I'll run the test suite again to confirm nothing else broke. ",
];

const CODE: &[&str] = &[
    "    for (i, item) in items.iter().enumerate() {\n",
    "        if item.len() > limit && i % 2 == 0 {\n",
    "            total += item.len();\n",
    "        }\n",
    "    }\n",
    "    let map: HashMap<String, Vec<u8>> = HashMap::new();\n",
    "    if a < b { return Err(Error::TooSmall); }\n",
    "    // keep the indentation of the first line\n",
];

/// A typical reply of about 4 KB: prose, then a file read and a command.
pub fn typical_4k() -> String {
    let mut r = Rng(4);
    let mut s = String::new();
    while s.len() < 3000 {
        s.push_str(PROSE[r.below(PROSE.len())]);
        if r.below(6) == 0 {
            s.push_str("\n\n");
        }
    }
    s.push_str("\n\n<read_file>\n<path>src/config/loader.rs</path>\n</read_file>\n\n");
    while s.len() < 3900 {
        s.push_str(PROSE[r.below(PROSE.len())]);
    }
    s.push_str("\n<execute_command>\n<command>cargo test -p loader 2>&1 | tail -20</command>\n<requires_approval>false</requires_approval>\n</execute_command>");
    s
}

/// A 100 KB `write_to_file`: the reply Cline's re-parsing hurts most on.
pub fn write_100k() -> String {
    let mut r = Rng(100);
    let mut s =
        String::from("I'll write the new module.\n\n<write_to_file>\n<path>src/generated/table.rs</path>\n<content>\n");
    while s.len() < 100 * 1024 - 40 {
        s.push_str(CODE[r.below(CODE.len())]);
    }
    s.push_str("</content>\n</write_to_file>");
    s
}

/// 1 MiB of mixed prose, code and tool calls, about one `<` per 200 bytes.
pub fn mixed_1mib() -> String {
    let mut r = Rng(1 << 20);
    let mut s = String::new();
    while s.len() < (1 << 20) - 400 {
        // Weights tuned for about one `<` per 200 bytes, as in real replies.
        match r.below(40) {
            0..=29 => s.push_str(PROSE[r.below(PROSE.len())]),
            30..=37 => s.push_str(CODE[r.below(CODE.len())]),
            38 => s.push_str("\n<read_file>\n<path>src/lib.rs</path>\n</read_file>\n"),
            _ => {
                s.push_str("<replace_in_file>\n<path>src/a.rs</path>\n<diff>\n------- SEARCH\n");
                s.push_str(CODE[r.below(CODE.len())]);
                s.push_str("=======\n");
                s.push_str(CODE[r.below(CODE.len())]);
                s.push_str("+++++++ REPLACE\n</diff>\n</replace_in_file>\n");
            }
        }
    }
    s
}

/// Baseline: count `<` with `memchr_iter(..).count()`, which memchr turns into a vectorised
/// count (no per-match work at all). Not a find-next: a lower bound no parser can approach.
pub fn memchr_count(hay: &[u8]) -> usize {
    memchr::memchr_iter(b'<', hay).count()
}

/// Baseline: true memchr find-next, one `next()` per `<`, using each position (what a scanner
/// that stops at every `<` does at the least).
pub fn memchr_find_next(hay: &[u8]) -> usize {
    let mut sum = 0usize;
    let mut it = memchr::memchr_iter(b'<', hay);
    #[allow(clippy::while_let_on_iterator)] // `for` could be lowered to the vectorised count
    while let Some(i) = it.next() {
        sum = sum.wrapping_add(i);
    }
    sum
}

/// 1 MiB of spaces with one visible character in the middle and a tool tag at the end: the
/// text block's leading and trailing trims each run over half a mebibyte of whitespace.
pub fn spaces_1mib() -> String {
    let half = " ".repeat(1 << 19);
    format!("{half}x{half}<read_file>")
}

/// Names `p0`, `p1`, … and one tool `t` carrying all `k` of them (each set once), for the
/// many-params corner: `(param names, reply)`.
pub fn many_params(k: usize) -> (Vec<String>, String) {
    let names: Vec<String> = (0..k).map(|i| format!("p{i}")).collect();
    let mut reply = String::from("<t>");
    for n in &names {
        reply.push_str(&format!("<{n}>v</{n}>"));
    }
    reply.push_str("</t>");
    (names, reply)
}

/// Baseline: a plain byte loop finding each next `<`.
pub fn byte_loop(hay: &[u8]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while let Some(k) = hay[i..].iter().position(|&b| b == b'<') {
        n += 1;
        i += k + 1;
    }
    n
}

/// Baseline for streaming: true memchr find-next fed the same chunks (per-call cost included).
pub fn memchr_chunked(hay: &[u8], chunk: usize) -> usize {
    hay.chunks(chunk).map(memchr_find_next).fold(0, usize::wrapping_add)
}

/// Stream `text` in `chunk`-byte chunks (raw bytes, so UTF-8 may be split); returns the blocks.
pub fn stream(text: &str, chunk: usize) -> usize {
    // Reserve like a caller that knows the reply's size would (e.g. from max_tokens), so that
    // growing the text buffer does not copy it.
    let mut p = StreamParser::new().with_capacity(text.len());
    for c in text.as_bytes().chunks(chunk) {
        let _ = p.push_bytes(c);
    }
    p.finish().map_or(0, |b| b.len())
}

/// Stream `text` as `&str` chunks of about `chunk` bytes (cut on char boundaries): what an agent
/// that receives text deltas does; no UTF-8 validation is needed.
pub fn stream_str(text: &str, chunk: usize) -> usize {
    let mut p = StreamParser::new().with_capacity(text.len());
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + chunk).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        p.push_str(&text[at..end]);
        at = end;
    }
    p.blocks().len()
}

/// What Cline does: parse the whole accumulated text again after every chunk.
pub fn reparse_every_chunk(text: &str, chunk: usize) -> usize {
    let mut blocks = 0;
    let mut end = 0;
    while end < text.len() {
        end = (end + chunk).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        blocks = parse(&text[..end]).len();
    }
    blocks
}

/// The WebAssembly package's benchmark reply (`parser-core/wasm/bench/bench.js`,
/// `benches/wasm_goals.js`): a `write_to_file` of Rust-like code, about `bytes` bytes.
pub fn write_code(bytes: usize) -> String {
    const LINES: [&str; 3] = [
        "    for (i, item) in items.iter().enumerate() { if *item < limit && i > 0 { total += item; } }\n",
        "    let v: Vec<Option<u32>> = input.lines().map(|l| l.parse().ok()).collect();\n",
        "    // compare a < b, then shift x <<= 2 and print \"<done>\"\n",
    ];
    let mut body = String::new();
    let mut i = 0;
    while body.len() < bytes {
        body.push_str(LINES[i % 3]);
        i += 1;
    }
    format!(
        "I'll write the file.\n<write_to_file>\n<path>src/lib.rs</path>\n<content>\n{body}</content>\n</write_to_file>"
    )
}

/// A reply of `n` tool calls, each after a line of prose (2n blocks), as in `benches/wasm_goals.js`.
pub fn many_tools(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!("Now file {i}.\n<read_file>\n<path>src/module_{i}.rs</path>\n</read_file>\n"));
    }
    s
}

/// Stream `text` through the WebAssembly package's exported layer (compiled natively): per
/// chunk what the JS glue asks of it — copy the chunk in, push, produce the answer words.
pub fn wasm_stream(text: &str, chunk: usize) -> usize {
    let h = parser_core_wasm::stream_new(0) as u32;
    let mut words = 0;
    for c in text.as_bytes().chunks(chunk) {
        parser_core_wasm::set_input(c);
        parser_core_wasm::stream_push(h, c.len() as u32, u32::from(c.is_ascii()));
        words += parser_core_wasm::answer_len();
    }
    parser_core_wasm::stream_free(h);
    words
}
