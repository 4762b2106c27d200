#!/usr/bin/env bash
# Runs .clusterfuzzlite/build.sh directly (no Docker) with $SRC, $OUT and $WORK in temp folders,
# then checks that every target binary in $OUT runs a seed from its corpus, with its dictionary.
# CI runs it right after fuzz/run.sh, whose build it reuses (same command, same target dir).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src" "$tmp/out" "$tmp/work"
ln -s "$root" "$tmp/src/parser-core"
SRC="$tmp/src" OUT="$tmp/out" WORK="$tmp/work" RUSTUP_TOOLCHAIN="${RUSTUP_TOOLCHAIN:-nightly}" \
  CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/fuzz/target}" bash "$root/.clusterfuzzlite/build.sh"
mapfile -t targets < <(cd "$root/fuzz" && cargo +nightly fuzz list)
[ ${#targets[@]} -gt 0 ] || { echo "no fuzz targets" >&2; exit 1; }
for t in "${targets[@]}"; do
  for f in "$t" "$t.dict" "${t}_seed_corpus.zip" "$t.options"; do
    test -s "$tmp/out/$f" || { echo "FAIL: \$OUT/$f missing or empty" >&2; exit 1; }
  done
  test -x "$tmp/out/$t" || { echo "FAIL: $t is not executable" >&2; exit 1; }
  mkdir -p "$tmp/seeds/$t"
  python3 -m zipfile -e "$tmp/out/${t}_seed_corpus.zip" "$tmp/seeds/$t"
  mapfile -t seeds < <(find "$tmp/seeds/$t" -type f | sort)
  [ ${#seeds[@]} -gt 0 ] || { echo "FAIL: $t has an empty seed corpus" >&2; exit 1; }
  seed=${seeds[0]}
  # libFuzzer runs the given file once and exits 0 when the target does not crash on it.
  if ! "$tmp/out/$t" -dict="$tmp/out/$t.dict" "$seed" >"$tmp/$t.log" 2>&1; then
    tail -n 30 "$tmp/$t.log"
    echo "FAIL: $t on its seed $(basename "$seed")" >&2
    exit 1
  fi
  grep -q "Executed .* in" "$tmp/$t.log" || { cat "$tmp/$t.log"; echo "FAIL: $t did not run its seed" >&2; exit 1; }
  echo "ok: $t runs seed $(basename "$seed") (${#seeds[@]} seeds)"
done
echo "clusterfuzzlite: ${#targets[@]} targets built into \$OUT, each ran a seed"
