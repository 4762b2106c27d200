//! Link options for the `agent-min` binary.
//!
//! On Linux with glibc the binary's relative relocations are packed (`-z pack-relative-relocs`,
//! DT_RELR): a position-independent executable keeps its address randomisation, and its
//! relocation table shrinks from 24 bytes per pointer in static data to a bitmap (about 0.5 MB
//! of the default build, 0.2 MB of the minimal one). The linker adds a `GLIBC_ABI_DT_RELR`
//! version need, so a glibc older than 2.36 refuses to load the binary with a clear error
//! rather than misrunning it; linkers that cannot pack (or a glibc that cannot load it) leave
//! the relocations as they were. `AGENT_MIN_NO_RELR=1` builds without it (a binary to copy to
//! an older system).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=AGENT_MIN_NO_RELR");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let off = std::env::var_os("AGENT_MIN_NO_RELR").is_some_and(|v| !v.is_empty() && v != "0");
    if os == "linux" && env == "gnu" && !off {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
