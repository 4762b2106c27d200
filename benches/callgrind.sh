#!/usr/bin/env bash
# Instructions per byte, counted by valgrind's callgrind (deterministic, unlike wall time on a
# shared 2-core machine). Each workload's count minus a run that only builds the corpus, divided
# by the corpus size. Usage: benches/callgrind.sh [CORPUS...]   (default: all four)
# memchr_count is memchr_iter().count() (vectorised count); memchr_next is true find-next.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
cargo build --release -q -p benches --bin ipb
bin=target/release/ipb
corpora=("$@")
[ ${#corpora[@]} -gt 0 ] || corpora=(typical_4k write_100k mixed_1mib spaces_1mib)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
count() { # MODE CORPUS -> total instructions
  valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$bin" "$1" "$2" >/dev/null 2>&1
  awk '/^summary:/ {print $2}' "$tmp/out"
}
printf '%-12s %-10s %14s %10s\n' corpus mode instructions 'instr/byte'
for c in "${corpora[@]}"; do
  bytes=$("$bin" info "$c")
  base=$(count none "$c")
  for m in memchr_count memchr_next whole fixed stream256 stream64 stream16; do
    total=$(count "$m" "$c")
    awk -v c="$c" -v m="$m" -v t="$total" -v b="$base" -v n="$bytes" \
      'BEGIN { printf "%-12s %-10s %14d %10.3f\n", c, m, t - b, (t - b) / n }'
  done
done
