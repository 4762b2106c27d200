#!/usr/bin/env bash
# ClusterFuzzLite / OSS-Fuzz build: every cargo-fuzz target, with its dictionary and seed corpus,
# into $OUT. Runs in the base-builder-rust image (Docker), or directly (see test.sh):
#   SRC=... OUT=... WORK=... bash .clusterfuzzlite/build.sh
# with the repository at $SRC/parser-core. Uses the target dir cargo-fuzz uses (fuzz/target, or
# $CARGO_TARGET_DIR), so a build that fuzz/run.sh already made is reused, not redone.
set -euo pipefail
: "${SRC:?}" "${OUT:?}" "${WORK:?}"
cd "$SRC/parser-core/fuzz"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --version 0.13.2 --locked
mapfile -t targets < <(cargo fuzz list)
[ ${#targets[@]} -gt 0 ] || { echo "build.sh: no fuzz targets" >&2; exit 1; }
cargo fuzz build -O
bin_dir="${CARGO_TARGET_DIR:-$PWD/target}/x86_64-unknown-linux-gnu/release"
# Seed corpora: the conformance inputs when ../shared/conformance is there, else built-in replies.
FUZZ_CORPUS_DIR="$WORK/corpus" FUZZ_SEED_FALLBACK=1 python3 seed.py "${targets[@]}"
for t in "${targets[@]}"; do
  cp "$bin_dir/$t" "$OUT/$t"
  cp tags.dict "$OUT/$t.dict"
  # Python's zipfile, not zip(1): python3 is needed for seed.py anyway.
  (cd "$WORK/corpus/$t" && python3 -m zipfile -c "$OUT/${t}_seed_corpus.zip" .)
  # The oracle is quadratic-ish by design: keep its inputs small, as fuzz/run.sh does.
  max_len=65536
  [ "$t" = differential_naive ] && max_len=4096
  printf '[libfuzzer]\ndict = %s.dict\nmax_len = %s\n' "$t" "$max_len" >"$OUT/$t.options"
done
echo "build.sh: ${#targets[@]} targets in $OUT: ${targets[*]}"
