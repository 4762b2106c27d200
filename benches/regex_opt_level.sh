#!/usr/bin/env bash
# Why the regex engines (regex-automata, aho-corasick) stay at opt-level 3 in the release
# profile while the rest of agent-min is "z": builds agent-min twice (as it is, and with those
# two at "z" by `--config`, in target/regex-opt-z), prints both stripped sizes, then times
# `search_files` with each — a replay (no model, no key) of three searches over DIR, with
# regexes that hold no literal for a prefilter to find, so the regex engine scans every line —
# three times, the two builds taking turns (after one untimed run of each, for the file cache),
# and prints each run's CPU seconds (user + system) and the ratio of the means. Not part of
# goals.sh (it builds twice). Usage:
# benches/regex_opt_level.sh [DIR]   (default: cargo's registry sources, ~/.cargo/registry/src)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-${CARGO_HOME:-$HOME/.cargo}/registry/src}
[ -d "$dir" ] || { echo "regex_opt_level.sh: no directory $dir to search (pass one)" >&2; exit 2; }
target=${CARGO_TARGET_DIR:-$root/target}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cd "$root"
cargo build -q --release -p agent-min
cp "$target/release/agent-min" "$tmp/at-3"
CARGO_TARGET_DIR="$target/regex-opt-z" cargo build -q --release -p agent-min \
  --config 'profile.release.package.regex-automata.opt-level="z"' \
  --config 'profile.release.package.aho-corasick.opt-level="z"'
cp "$target/regex-opt-z/release/agent-min" "$tmp/at-z"
for b in at-3 at-z; do
  strip -o "$tmp/$b.stripped" "$tmp/$b"
  printf '%s stripped: %s B\n' "$b" "$(stat -c %s "$tmp/$b.stripped")"
done

# The recorded session: three search_files calls, then attempt_completion.
python3 - "$root/benches" "$tmp/search.jsonl" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[1])
from agent_stream import anthropic_reply  # the Anthropic SSE body of a text reply
def reply(text):
    return {"type": "reply", "provider": "anthropic", "sse": anthropic_reply(text).decode()}
lines = [{"type": "session", "task": "search", "files": {}}]
# None holds a literal every match must contain: grep-regex would search for that literal
# (memchr, aho-corasick) and the regex engine would see only the lines holding it.
for rx in [r"\b[A-Z][a-z]+[0-9]{5}\b", r"\b[a-z]{4}[0-9]{3}[A-Z]\b", r"[A-Z]{3}[a-z][0-9]{2}[a-z]{3}\b"]:
    lines.append(reply(f"<search_files>\n<path>.</path>\n<regex>{rx}</regex>\n</search_files>"))
lines.append(reply("<attempt_completion>\n<result>done</result>\n</attempt_completion>"))
with open(sys.argv[2], "w") as f:
    f.write("\n".join(json.dumps(l) for l in lines) + "\n")
EOF

# CPU seconds of one replay with binary $1 (the replay's own output goes to $tmp/out).
cpu() {
  /usr/bin/env python3 - "$1" "$tmp/search.jsonl" "$dir" "$tmp/out" <<'EOF'
import resource, subprocess, sys
binary, session, cwd, out = sys.argv[1:]
with open(out, "w") as f:
    r = subprocess.run([binary, "run", "--replay", session, "--cwd", cwd, "--replay-delay", "0", "-y"], stdout=f, stderr=subprocess.STDOUT)
if r.returncode != 0:
    sys.stderr.write(open(out).read())
    sys.exit(f"regex_opt_level.sh: the replay with {binary} failed ({r.returncode}); its output is above")
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{u.ru_utime + u.ru_stime:.2f}")
EOF
}
# One run of each first, untimed: the file cache warm for both.
cpu "$tmp/at-3" >/dev/null
cpu "$tmp/at-z" >/dev/null
s3=() sz=()
for round in 1 2 3; do
  s3+=("$(cpu "$tmp/at-3")")
  sz+=("$(cpu "$tmp/at-z")")
done
# The last replay ran its three searches (each says how many results it found).
[ "$(grep -c " results\?$" "$tmp/out")" = 3 ] || { cat "$tmp/out" >&2; echo "regex_opt_level.sh: the replay did not run its three searches" >&2; exit 1; }
echo "search_files CPU s, regex engines at 3:   ${s3[*]}"
echo "search_files CPU s, regex engines at z:   ${sz[*]}"
python3 -c 'import sys; a=[float(x) for x in sys.argv[1].split()]; b=[float(x) for x in sys.argv[2].split()]; print(f"z / 3: {sum(b)/sum(a):.2f}x")' "${s3[*]}" "${sz[*]}"
