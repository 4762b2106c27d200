//! `agent-min parse`: the parser from the command line — a conformance contract any language can
//! drive (`--jsonl`), and a readable view of one reply for a person debugging a model.

use std::ffi::OsString;
use std::io::{self, BufRead, BufWriter, Read, Write};
use std::process::ExitCode;

use parser_core::{parse, Block, Blocks, StreamParser};
use serde_json::{json, Map, Value};

fn help() -> &'static str {
    crate::run::texts::AGENT_MIN_PARSE_TXT.get()
}

struct Options {
    jsonl: bool,
    chunk_size: Option<usize>,
    every_chunk: bool,
    file: Option<OsString>,
}

fn options(args: Vec<OsString>) -> Result<Option<Options>, String> {
    use lexopt::prelude::*;
    let mut parser = lexopt::Parser::from_args(args);
    let mut o = Options { jsonl: false, chunk_size: None, every_chunk: false, file: None };
    while let Some(arg) = parser.next().map_err(|e| e.to_string())? {
        match arg {
            Long("jsonl") => o.jsonl = true,
            Long("chunk-size") => {
                let v = parser.value().map_err(|e| e.to_string())?;
                let n: usize =
                    v.parse().map_err(|_| format!("--chunk-size takes a positive number of characters, not {v:?}"))?;
                if n == 0 {
                    return Err("--chunk-size must be at least 1".into());
                }
                o.chunk_size = Some(n);
            }
            Long("every-chunk") => o.every_chunk = true,
            Short('h') | Long("help") => return Ok(None),
            Value(v) if o.file.is_none() => o.file = Some(v),
            other => return Err(other.unexpected().to_string()),
        }
    }
    if o.every_chunk && o.chunk_size.is_none() {
        return Err("--every-chunk needs --chunk-size N".into());
    }
    if (o.chunk_size.is_some() || o.every_chunk) && !o.jsonl {
        return Err("--chunk-size and --every-chunk go with --jsonl".into());
    }
    if o.jsonl && o.file.is_some() {
        return Err("--jsonl reads stdin; drop the FILE argument (or use `< FILE`)".into());
    }
    Ok(Some(o))
}

/// Entry point of `agent-min parse`.
pub fn main(args: Vec<OsString>) -> ExitCode {
    let o = match options(args) {
        Ok(Some(o)) => o,
        Ok(None) => {
            print!("{}", help());
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("agent-min parse: {e}\nRun `agent-min parse --help` for usage.");
            return ExitCode::from(2);
        }
    };
    let result = if o.jsonl { jsonl(&o) } else { view(o.file.as_ref()) };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A closed stdout (`| head`) is not an error worth a message.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("agent-min parse: {e}");
            ExitCode::from(1)
        }
    }
}

/// Blocks in the conformance schema; params in first-assignment order.
pub(crate) fn blocks_json<'a>(blocks: impl IntoIterator<Item = Block<'a>>) -> Value {
    blocks
        .into_iter()
        .map(|b| match b {
            Block::Text { content, partial } => json!({"type": "text", "content": content, "partial": partial}),
            Block::ToolUse(t) => {
                let params: Map<String, Value> = t.params().iter().map(|p| (p.name.into(), p.value.into())).collect();
                json!({"type": "tool_use", "name": t.name, "params": params, "partial": t.partial})
            }
        })
        .collect()
}

fn jsonl(o: &Options) -> io::Result<()> {
    let stdin = io::stdin().lock();
    let mut out = BufWriter::new(io::stdout().lock());
    // Split on '\n' only: U+2028/U+2029 may appear raw inside JSON strings.
    for (index, line) in stdin.split(b'\n').enumerate() {
        let line_no = index + 1;
        let line = line?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let bad = |what: String| io::Error::new(io::ErrorKind::InvalidData, format!("stdin line {line_no}: {what}"));
        let v: Value = serde_json::from_slice(&line).map_err(|e| bad(format!("not valid JSON ({e})")))?;
        let id = v.get("id").cloned().ok_or_else(|| bad("missing \"id\"".into()))?;
        let input = v
            .get("input")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("missing \"input\", or it is not a string".into()))?;
        match o.chunk_size {
            None => write_line(&mut out, id, parse(input).blocks())?,
            Some(n) => {
                let mut p = StreamParser::new();
                let sub_id = |k: usize| match &id {
                    Value::String(s) => Value::from(format!("{s}/{k}")),
                    other => Value::from(format!("{other}/{k}")),
                };
                if o.every_chunk {
                    write_line(&mut out, sub_id(0), p.blocks())?;
                }
                let mut consumed = 0;
                let mut rest = input;
                while !rest.is_empty() {
                    let cut = rest.char_indices().nth(n).map_or(rest.len(), |(i, _)| i);
                    let (chunk, tail) = rest.split_at(cut);
                    p.push_str(chunk);
                    consumed += chunk.chars().count();
                    rest = tail;
                    if o.every_chunk {
                        write_line(&mut out, sub_id(consumed), p.blocks())?;
                    }
                }
                if !o.every_chunk {
                    write_line(&mut out, id, p.blocks())?;
                }
            }
        }
    }
    out.flush()
}

fn write_line(out: &mut impl Write, id: Value, blocks: Blocks<'_>) -> io::Result<()> {
    let line = json!({"id": id, "blocks": blocks_json(blocks)});
    serde_json::to_writer(&mut *out, &line)?;
    out.write_all(b"\n")
}

fn view(file: Option<&OsString>) -> io::Result<()> {
    let text = match file {
        Some(path) => std::fs::read_to_string(path)
            .map_err(|e| io::Error::new(e.kind(), format!("cannot read {}: {e}", path.to_string_lossy())))?,
        None => {
            let mut s = String::new();
            io::stdin().read_to_string(&mut s).map_err(|e| io::Error::new(e.kind(), format!("stdin: {e}")))?;
            s
        }
    };
    let mut out = BufWriter::new(io::stdout().lock());
    let parsed = parse(&text);
    writeln!(out, "{} block(s) in {} bytes", parsed.len(), text.len())?;
    for (i, b) in parsed.iter().enumerate() {
        let state = |partial: bool| if partial { "partial" } else { "complete" };
        match b {
            Block::Text { content, partial } => {
                writeln!(out, "\n[{i}] text ({})", state(partial))?;
                indented(&mut out, content)?;
            }
            Block::ToolUse(t) => {
                writeln!(out, "\n[{i}] tool_use {} ({})", t.name, state(t.partial))?;
                for p in t.params() {
                    let lead = p.value_span.start - p.raw_span.start;
                    let trail = p.raw_span.end - p.value_span.end;
                    if lead + trail > 0 {
                        writeln!(
                            out,
                            "  {}:  (Cline trims; the raw value has {lead} more bytes before, {trail} after)",
                            p.name
                        )?;
                    } else {
                        writeln!(out, "  {}:", p.name)?;
                    }
                    indented(&mut out, p.value)?;
                }
            }
        }
    }
    out.flush()
}

/// Each line indented, with invisible characters (controls, zero-width, BOM, NEL) made visible.
fn indented(out: &mut impl Write, s: &str) -> io::Result<()> {
    for line in s.split('\n') {
        let mut shown = String::with_capacity(line.len() + 4);
        for c in line.chars() {
            let invisible = (c.is_control() && c != '\t')
                || matches!(
                    c,
                    '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{180E}' | '\u{2028}' | '\u{2029}'
                );
            if invisible {
                shown.extend(c.escape_unicode());
            } else {
                shown.push(c);
            }
        }
        writeln!(out, "    {shown}")?;
    }
    Ok(())
}
