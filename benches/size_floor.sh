#!/usr/bin/env bash
# The floor under the minimal agent's size: benches/size_floor/ links only what the minimal
# agent cannot do without (ripgrep's walker, globset and searcher, the regex engine,
# serde_json; with std) in agent-min's `release-min` settings (opt-level "z", LTO, one codegen
# unit, panic = "abort"; on Linux/glibc packed relative relocations and no unwind tables, as
# agent-min/build.rs does), and prints its stripped size in bytes. Versions are the workspace's
# (its Cargo.lock is copied). Usage:
# benches/size_floor.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$root/benches/size_floor/." "$tmp/"
cp "$root/Cargo.lock" "$tmp/Cargo.lock"
# The same condition as agent-min/build.rs: a linux-gnu target. (It was `ldd --version | grep
# -q glibc` under pipefail: grep left at the first line, ldd was killed by SIGPIPE writing the
# next, and the floor was built without packing on some runs, 1.98 MB instead of 1.80 MB.)
# The flags go in CARGO_ENCODED_RUSTFLAGS (separated by 0x1f), so that a checkout path with a
# space in it stays one argument.
flags=""
case "$(rustc -vV | sed -n 's/^host: //p')" in
  *-linux-gnu*) flags="-Clink-arg=-Wl,-z,pack-relative-relocs"$'\x1f'"-Clink-arg=-Wl,-T,$root/agent-min/no-unwind-tables.ld" ;;
esac
target=${CARGO_TARGET_DIR:-$root/target}/size-floor
CARGO_ENCODED_RUSTFLAGS="$flags" CARGO_TARGET_DIR="$target" cargo build -q --release --manifest-path "$tmp/Cargo.toml"
strip -o "$tmp/stripped" "$target/release/size-floor"
stat -c %s "$tmp/stripped"
