//! Link options for the `agent-min` binary, on Linux with glibc.
//!
//! - The relative relocations are packed (`-z pack-relative-relocs`, DT_RELR): a
//!   position-independent executable keeps its address randomisation, and its relocation table
//!   shrinks from 24 bytes per pointer in static data to a bitmap (about 0.5 MB of the default
//!   build, 0.2 MB of the minimal one). The linker adds a `GLIBC_ABI_DT_RELR` version need, so a
//!   glibc older than 2.36 refuses to load the binary with a clear error rather than misrunning
//!   it. `AGENT_MIN_NO_RELR=1` builds without it (a binary to copy to an older system).
//! - In the release profiles (`release`, `release-min`: `panic = "abort"`), the unwind tables
//!   (`.eh_frame`, `.gcc_except_table`) are left out by a linker script (about 0.34 MB of either
//!   build; the script is `no-unwind-tables.ld`). A panic aborts after its hook has run, so nothing unwinds: the tables only served
//!   the frames of a `RUST_BACKTRACE` backtrace, which is then empty (the message and its source
//!   line are still printed). Stable cargo cannot pass `-C force-unwind-tables=no` to one profile
//!   alone; the test builds (which unwind) keep their tables. The script needs rust-lld (Rust's
//!   default linker here) or GNU ld; it is not passed when the flags choose gold or mold, which
//!   cannot read it. `AGENT_MIN_UNWIND_TABLES=1` keeps the tables (for a profiler that walks the
//!   stack by DWARF, or another linker).
//!
//! On every target it also deflates the long texts built in (`TEXTS`: the system prompts, the
//! tools' declarations, the model facts, the commands' `--help`; 142 KB, 28 KB deflated) into `$OUT_DIR/texts.deflate`,
//! with `$OUT_DIR/texts.rs` naming each one's place in the whole (`src/run/texts.rs` reads them).

use std::fmt::Write as _;
use std::path::Path;

/// The texts built in, deflated as one: directories (every file in them but those listed after
/// them, which only tests read) and files, from the crate's root.
const TEXTS: &[(&str, &[&str])] = &[
    ("src/run/prompt/system", &["next_gen.txt", "gpt_5.txt"]),
    ("src/run/tools/decl", &[]),
    ("data/models.json", &[]),
    ("help", &[]),
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    texts();
    println!("cargo:rerun-if-changed=no-unwind-tables.ld");
    println!("cargo:rerun-if-env-changed=AGENT_MIN_NO_RELR");
    println!("cargo:rerun-if-env-changed=AGENT_MIN_UNWIND_TABLES");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0");
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "gnu" {
        return;
    }
    if !set("AGENT_MIN_NO_RELR") {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    // `PROFILE` is "release" for every profile that inherits from release. The binary contains
    // no `catch_unwind`; were it built to unwind all the same, a panic would abort, as here.
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    let other_linker = ["gold", "mold"].iter().any(|l| flags.contains(l));
    if var("PROFILE") == "release" && !set("AGENT_MIN_UNWIND_TABLES") && !other_linker {
        let script = Path::new(&var("CARGO_MANIFEST_DIR")).join("no-unwind-tables.ld");
        println!("cargo:rustc-link-arg-bins=-Wl,-T,{}", script.display());
    }
}

/// Deflates `TEXTS` into `$OUT_DIR/texts.deflate` and names each text's range of the inflated
/// whole in `$OUT_DIR/texts.rs`: a `Text` constant per file, named after the file
/// (`read_file.json`: `READ_FILE_JSON`).
fn texts() {
    let root = Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).to_path_buf();
    let mut files = Vec::new();
    for (entry, skip) in TEXTS {
        let path = root.join(entry);
        println!("cargo:rerun-if-changed={}", path.display());
        if path.is_dir() {
            let mut names: Vec<String> = std::fs::read_dir(&path)
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                // Texts only: an editor's backup or a `.DS_Store` left there is not built in.
                .filter(|n| !n.starts_with('.') && [".txt", ".json", ".patch"].iter().any(|e| n.ends_with(e)))
                .filter(|n| !skip.contains(&n.as_str()))
                .collect();
            names.sort();
            files.extend(names.into_iter().map(|n| format!("{entry}/{n}")));
        } else {
            files.push(entry.to_string());
        }
    }
    let mut whole = String::new();
    let mut consts = String::new();
    let mut seen = std::collections::BTreeSet::new();
    for file in &files {
        let text = std::fs::read_to_string(root.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let name = file.rsplit('/').next().unwrap().to_uppercase().replace(['.', '-'], "_");
        assert!(
            name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'),
            "{file}: a text's file name makes its constant's name (letters, digits, `_`, `-`, `.`)"
        );
        assert!(seen.insert(name.clone()), "two texts are named {name}");
        let start = whole.len();
        whole.push_str(&text);
        writeln!(
            consts,
            "/// `agent-min/{file}`.\npub(crate) const {name}: Text = Text {{ start: {start}, end: {} }};",
            whole.len()
        )
        .unwrap();
    }
    writeln!(consts, "/// The inflated length of all the texts.\nconst WHOLE_LEN: usize = {};", whole.len()).unwrap();
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).to_path_buf();
    std::fs::write(out.join("texts.deflate"), miniz_oxide::deflate::compress_to_vec(whole.as_bytes(), 10)).unwrap();
    std::fs::write(out.join("texts.rs"), consts).unwrap();
}
