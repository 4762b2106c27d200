//! The C ABI from C: builds the static and the shared library, compiles `tests/c/conformance.c`
//! with the system `cc` (once under `-fsanitize=address,undefined`, once against the shared
//! library), runs it over every line of both conformance files (whole parse, and a stream fed one
//! byte at a time), and compares what it prints with Cline's expected blocks. Fails — never skips
//! — when `cc` or the conformance files are missing.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn conformance(file: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance").join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (the conformance files must sit beside the repository)", path.display()));
    text.split('\n').filter(|l| !l.is_empty()).map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
}

/// What the C program prints for these blocks.
fn render(blocks: &Value, out: &mut String) {
    let s = |out: &mut String, v: &Value| {
        let v = v.as_str().expect("a string");
        let _ = writeln!(out, "{}:{v}", v.len());
    };
    out.push_str("=\n");
    for b in blocks.as_array().expect("blocks") {
        let partial = u8::from(b["partial"].as_bool().expect("partial"));
        if b["type"] == "text" {
            let _ = writeln!(out, "T {partial}");
            s(out, &b["content"]);
        } else {
            let params = b["params"].as_object().expect("params");
            let _ = writeln!(out, "U {partial} {}", params.len());
            s(out, &b["name"]);
            for (k, v) in params {
                s(out, &Value::String(k.clone()));
                s(out, v);
            }
        }
    }
}

fn run(cmd: &mut Command, what: &str) -> Vec<u8> {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot start it ({e}); it is required by this test"));
    assert!(out.status.success(), "{what} failed: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    out.stdout
}

#[test]
fn c_program_matches_cline_on_both_conformance_files_under_sanitizers_and_shared() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capi");
    std::fs::create_dir_all(&tmp).unwrap();
    // A target dir of its own: the outer `cargo test` may hold the workspace's build lock.
    let target = tmp.join("target");
    run(
        Command::new(env!("CARGO"))
            .args(["build", "-p", "parser-core-capi", "--release", "--lib"])
            .env("CARGO_TARGET_DIR", &target),
        "cargo build -p parser-core-capi",
    );
    let lib_dir = target.join("release");

    // The cases, and what Cline's blocks look like in the program's output.
    let (mut cases, mut want, mut ids) = (Vec::new(), Vec::new(), Vec::new());
    for line in conformance("cline-v4.0.10.jsonl") {
        let input = line["input"].as_str().unwrap();
        cases.extend_from_slice(format!("W {}\n{input}\n", input.len()).as_bytes());
        let mut w = String::new();
        render(&line["expected"], &mut w);
        render(&line["expected"], &mut w);
        w.push_str("end\n");
        want.push(w);
        ids.push(line["id"].as_str().unwrap().to_string());
    }
    let prefixes = conformance("cline-v4.0.10-prefixes.jsonl");
    assert_eq!(prefixes.len(), 10760);
    let mut i = 0;
    while i < prefixes.len() {
        let base = prefixes[i]["id"].as_str().unwrap().rsplit_once('/').unwrap().0.to_string();
        let mut w = String::new();
        let mut last = "";
        while i < prefixes.len() && prefixes[i]["id"].as_str().unwrap().rsplit_once('/').unwrap().0 == base {
            render(&prefixes[i]["expected"], &mut w);
            last = prefixes[i]["input"].as_str().unwrap();
            i += 1;
        }
        cases.extend_from_slice(format!("P {}\n{last}\n", last.len()).as_bytes());
        w.push_str("end\n");
        want.push(w);
        ids.push(format!("{base} (every prefix)"));
    }
    assert_eq!(ids.len(), 3193 + 69);
    let cases_file = tmp.join("cases.txt");
    std::fs::write(&cases_file, &cases).unwrap();

    let source = here.join("tests/c/conformance.c");
    let include = here.join("include");
    let flags = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-g"];
    let asan = tmp.join("conformance-asan");
    run(
        Command::new("cc")
            .args(flags)
            .args(["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"])
            .arg("-I")
            .arg(&include)
            .arg(&source)
            .arg(lib_dir.join("libparser_core_c.a"))
            .args(["-lpthread", "-ldl", "-lm", "-o"])
            .arg(&asan),
        "cc -fsanitize=address,undefined (static library)",
    );
    let shared = tmp.join("conformance-shared");
    run(
        Command::new("cc")
            .args(flags)
            .arg("-I")
            .arg(&include)
            .arg(&source)
            .arg("-L")
            .arg(&lib_dir)
            // RPATH, not RUNPATH: searched before any LD_LIBRARY_PATH.
            .arg(format!("-Wl,--disable-new-dtags,-rpath,{}", lib_dir.display()))
            .args(["-lparser_core_c", "-o"])
            .arg(&shared),
        "cc (shared library)",
    );

    for (exe, what) in [(&asan, "sanitized static build"), (&shared, "shared-library build")] {
        let out = run(Command::new(exe).arg(&cases_file).env("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1"), what);
        // The program prints raw bytes; every input is UTF-8, so its output is too.
        let out = String::from_utf8(out).expect("UTF-8 output");
        // Record by record (a record cannot be split on "end\n", which inputs may contain).
        let mut at = 0;
        for (w, id) in want.iter().zip(&ids) {
            let g = out.get(at..at + w.len()).unwrap_or(&out[at..]);
            assert_eq!(g, w, "{what}: case {id}");
            at += w.len();
        }
        assert_eq!(at, out.len(), "{what}: output after the last case");
    }
}

#[test]
fn header_constants_match_the_rust_side() {
    let header = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("include/parser_core.h")).unwrap();
    let rust: &[(&str, i64)] = &[
        ("PC_OK", parser_core_c::PC_OK.into()),
        ("PC_ERR_NULL", parser_core_c::PC_ERR_NULL.into()),
        ("PC_ERR_UTF8", parser_core_c::PC_ERR_UTF8.into()),
        ("PC_ERR_BLOCKS_FULL", parser_core_c::PC_ERR_BLOCKS_FULL.into()),
        ("PC_ERR_PARAMS_FULL", parser_core_c::PC_ERR_PARAMS_FULL.into()),
        ("PC_ERR_TEXT_FULL", parser_core_c::PC_ERR_TEXT_FULL.into()),
        ("PC_ERR_RANGE", parser_core_c::PC_ERR_RANGE.into()),
        ("PC_ERR_INCOMPLETE", parser_core_c::PC_ERR_INCOMPLETE.into()),
        ("PC_TEXT", parser_core_c::PC_TEXT.into()),
        ("PC_TOOL_USE", parser_core_c::PC_TOOL_USE.into()),
        ("PC_SLOT_WORDS", parser_core_c::PC_SLOT_WORDS as i64),
        ("PC_BLOCKS_WORDS", parser_core_c::PC_BLOCKS_WORDS as i64),
        ("PC_STREAM_WORDS", parser_core_c::PC_STREAM_WORDS as i64),
    ];
    let mut defined = 0;
    for line in header.lines() {
        let Some(rest) = line.strip_prefix("#define PC_") else { continue };
        let mut parts = rest.split_whitespace();
        let name = format!("PC_{}", parts.next().unwrap());
        let value: i64 = parts.next().unwrap().trim_matches(|c| c == '(' || c == ')').parse().unwrap();
        let (_, want) =
            rust.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("{name} is not on the Rust side"));
        assert_eq!(value, *want, "{name}");
        defined += 1;
    }
    assert_eq!(defined, rust.len(), "every constant is in the header");
    // The structs the C side reads field by field have the layout the header declares.
    assert_eq!(std::mem::size_of::<parser_core_c::pc_block>(), 8 + 2 * 8 + 2 * 8);
    assert_eq!(std::mem::size_of::<parser_core_c::pc_param>(), 6 * 8);
    assert_eq!(std::mem::size_of::<parser_core_c::pc_progress>(), 4 * 8);
}
