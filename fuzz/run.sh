#!/usr/bin/env bash
# Run every fuzz target for SECONDS each (default 60); fail on any crash.
# -len_control=0 and the long seeds of seed.py let libFuzzer try long inputs from the start.
# Usage: fuzz/run.sh [SECONDS] [TARGET...]
# Needs nightly (for AddressSanitizer) and cargo-fuzz; installs cargo-fuzz if missing.
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-60}
shift || true
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --version 0.13.2 --locked
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo +nightly fuzz list)
fi
python3 seed.py "${targets[@]}"
cargo +nightly fuzz build -O
mkdir -p logs
for t in "${targets[@]}"; do
  echo "--- fuzz $t for ${secs}s"
  # The oracle tests every tag at every character: keep its inputs small.
  max_len=65536
  [ "$t" = differential_naive ] && max_len=4096
  set +e
  cargo +nightly fuzz run -O "$t" "corpus/$t" -- \
    -dict=tags.dict -max_total_time="$secs" -max_len="$max_len" -len_control=0 -timeout=20 -rss_limit_mb=4096 \
    -print_final_stats=1 >"logs/$t.log" 2>&1
  status=$?
  set -e
  grep -E '^#[0-9]+' "logs/$t.log" | tail -n 1 || true
  grep -E '^stat::(number_of_executed_units|peak_rss_mb)|^Done' "logs/$t.log" || true
  if [ "$status" -ne 0 ]; then
    tail -n 40 "logs/$t.log"
    echo "fuzz target $t failed (exit $status); the crashing input is in fuzz/artifacts/$t/"
    exit 1
  fi
done
