#!/usr/bin/env bash
# replace_in_file against Cline's own constructNewFileContent (v1), on random diffs.
#
#   agent-min/scripts/diff-vs-cline.sh CLINE_GIT_DIR [N]
#
# CLINE_GIT_DIR is a clone of github.com/cline/cline (bare or not) with tag v4.0.10; N random
# (file, diff) pairs (default 20000). Needs node (18+) and python3. Prints how many results are
# byte-identical (or the same error text), how many agent-min refuses, how many it edits at a
# line start where Cline's indexOf matched inside a line (its documented differences,
# docs/agent.md; the engine with Cline's matching gives Cline's result there) and how many
# differ — which must be 0.
set -euo pipefail
cline=${1:?usage: $0 CLINE_GIT_DIR [N]}
n=${2:-20000}
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

git --git-dir="$cline" show v4.0.10:apps/vscode/src/core/assistant-message/diff.ts 2>/dev/null >"$work/diff.ts" ||
  git -C "$cline" show v4.0.10:apps/vscode/src/core/assistant-message/diff.ts >"$work/diff.ts"

# Cline's v1 algorithm with its TypeScript types stripped (the part before the v2 state machine).
python3 - "$work" <<'PY'
import re, sys
w = sys.argv[1]
s = open(f"{w}/diff.ts").read()
s = s[: s.index("enum ProcessingState")].replace("export ", "").replace("async function", "function")
s = re.sub(r"\)\s*:\s*Promise<\{[^}]*\}>\s*\{", ") {", s)                 # return types
s = re.sub(r"\)\s*:\s*(\[number, number\] \| false|number|boolean|string)\s*\{", ") {", s)
s = re.sub(r"(\w+)\s*:\s*(string|number|boolean)\b", r"\1", s)     # parameter types
s = re.sub(r'version\s*:\s*"v1"\s*\|\s*"v2"\s*=\s*"v1"', 'version = "v1"', s)
s = re.sub(r"const constructNewFileContentVersionMapping\s*:\s*Record<[\s\S]*?>\s*=\s*\{", "const constructNewFileContentVersionMapping = {", s)
s = s.replace("} as const", "}").replace("v2: constructNewFileContentV2,", "")
s = re.sub(r"const replacements\s*:\s*Array<[^>]*>\s*=", "const replacements =", s)
open(f"{w}/v1.js", "w").write(s + "\nmodule.exports = { constructNewFileContent }\n")
PY

python3 - "$work" "$n" <<'PY'
import json, random, sys
w, n = sys.argv[1], int(sys.argv[2])
random.seed(7)
toks = ["a", "b", "c", " a", "b ", "\t\tc", "", "  ", "\r", "a\r", "\ufeffb", "x\u0085"]
marks = ["------- SEARCH", "<<<<<<< SEARCH", "=======", "+++++++ REPLACE", ">>>>>>> REPLACE", "----- SEARCH",
         "===", "+++++++ REPLACE ", "- item", "+", "=x", "------- SEARCH>"]
with open(f"{w}/cases.jsonl", "w") as out:
    for _ in range(n):
        orig = "\n".join(random.choice(toks) for _ in range(random.randint(0, 6)))
        if random.random() < 0.5:
            orig += "\n"
        lines = []
        for _ in range(random.randint(1, 4)):
            lines.append("------- SEARCH")
            lines += [random.choice(toks) for _ in range(random.randint(0, 3))]
            lines.append("=======")
            lines += [random.choice(toks) for _ in range(random.randint(0, 2))]
            if random.random() < 0.85:
                lines.append("+++++++ REPLACE")
        for _ in range(random.randint(0, 2)):
            lines.insert(random.randint(0, len(lines)), random.choice(marks + toks))
        # The parser's trimmed value, as Cline's handler sees it (JavaScript's whitespace).
        diff = "\n".join(lines).strip(" \t\n\r\ufeff\u00a0\u000b\u000c")
        out.write(json.dumps({"orig": orig, "diff": diff}) + "\n")
PY

node -e '
const { constructNewFileContent } = require(process.argv[1] + "/v1.js");
const lines = require("fs").readFileSync(process.argv[1] + "/cases.jsonl", "utf8").trim().split("\n");
(async () => { for (const l of lines) { const c = JSON.parse(l); let r;
  try { r = { ok: (await constructNewFileContent(c.diff, c.orig, true)).newContent } } catch (e) { r = { err: e.message } }
  console.log(JSON.stringify(r)) } })()' "$work" >"$work/cline.out"

cargo run -q --release -p agent-min --example diff_apply <"$work/cases.jsonl" >"$work/ours.out"

python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
cline = [json.loads(l) for l in open(f"{w}/cline.out")]
ours = [json.loads(l) for l in open(f"{w}/ours.out")]
def agree(c, o):
    return ("ok" in c and c.get("ok") == o.get("ok")) or ("err" in c and "err" in o and c["err"].strip() == o["err"].strip())
same = refused = whole_lines = differ = 0
for c, o in zip(cline, ours):
    if o.get("refusal"):
        refused += 1
    elif agree(c, o):
        same += 1
    elif agree(c, o["index_of"]) and not o["index_of"].get("refusal"):
        # Cline's exact match started inside a line where a later one starts a line: the
        # engine with Cline's indexOf gives Cline's result, ours edits the line.
        whole_lines += 1
    else:
        differ += 1
print(f"{len(ours)} diffs: {same} identical to Cline, {refused} refused (documented), "
      f"{whole_lines} matched at a line start where Cline matched inside a line (documented), {differ} different")
sys.exit(1 if differ else 0)
PY
