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

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
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
