//! Builds the npm package with `build.sh` and runs its node tests (`test/*.test.js`): the whole
//! conformance corpus through `parseAssistantMessageV2` and `StreamParser`, UTF-16 edge cases,
//! custom names and memory. Fails — never skips — when node or the wasm toolchain is missing.

use std::path::{Path, PathBuf};
use std::process::Command;

fn run(cmd: &mut Command, what: &str) {
    let status = cmd.status().unwrap_or_else(|e| panic!("{what}: cannot start it ({e}); it is required by this test"));
    assert!(status.success(), "{what} failed: {status}");
}

#[test]
fn node_tests_pass_on_the_built_package() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let pkg = tmp.join("parser-core-wasm-pkg");
    // A target dir of its own: the outer `cargo test` may hold the workspace's build lock.
    run(
        Command::new("bash").arg(here.join("build.sh")).arg(&pkg).env("CARGO_TARGET_DIR", tmp.join("wasm-target")),
        "bash parser-core/wasm/build.sh",
    );
    run(
        Command::new("node")
            .arg("--test")
            .arg(here.join("test/conformance.test.js"))
            .arg(here.join("test/api.test.js"))
            .env("PARSER_CORE_WASM_PKG", &pkg),
        "node --test",
    );
}
