#!/usr/bin/env bash
# The floor under the minimal agent's size: benches/size_floor/ links only what the minimal
# agent cannot do without (ripgrep's walker, globset and searcher, the regex engine,
# serde_json; with std) in agent-min's `release-min` settings (opt-level "z", LTO, one codegen
# unit, panic = "abort", packed relative relocations on Linux/glibc), and prints its stripped
# size in bytes. Versions are the workspace's (its Cargo.lock is copied). Usage:
# benches/size_floor.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$root/benches/size_floor/." "$tmp/"
cp "$root/Cargo.lock" "$tmp/Cargo.lock"
flags=""
if [ "$(uname -s)" = Linux ] && ldd --version 2>&1 | grep -qi 'glibc\|gnu libc'; then
  flags="-C link-arg=-Wl,-z,pack-relative-relocs"
fi
target=${CARGO_TARGET_DIR:-$root/target}/size-floor
RUSTFLAGS="$flags" CARGO_TARGET_DIR="$target" cargo build -q --release --manifest-path "$tmp/Cargo.toml"
strip -o "$tmp/stripped" "$target/release/size-floor"
stat -c %s "$tmp/stripped"
