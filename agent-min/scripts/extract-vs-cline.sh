#!/usr/bin/env bash
# read_file's document text against Cline's own extract-text.ts, under node, on files made by
# real tools (agent-min/tests/fixtures/documents/, see make-document-fixtures.py).
#
#   agent-min/scripts/extract-vs-cline.sh CLINE_GIT_DIR [FILE...]
#
# CLINE_GIT_DIR is a clone of github.com/cline/cline (bare or not) with tag v4.0.10. Cline's
# extract-text.ts, notebook-utils.ts and content-limits.ts are taken from it and compiled by
# TypeScript as they are (only the Logger is a stub); the npm packages are the versions
# Cline's package-lock.json pins (pdf-parse 1.1.4, mammoth 1.11.0, exceljs 4.4.0, jschardet
# 3.1.4, iconv-lite 0.6.3, isbinaryfile 5.0.7). Needs node (18+), npm and cargo. For each file
# it prints `same`, or `DIFFERENT` with both texts; the exit code is the number that differ.
set -euo pipefail
cline=${1:?usage: $0 CLINE_GIT_DIR [FILE...]}
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
files=("$@")
[ ${#files[@]} -gt 0 ] || files=("$root"/agent-min/tests/fixtures/documents/*)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

show() { git --git-dir="$cline" show "v4.0.10:$1" 2>/dev/null || git -C "$cline" show "v4.0.10:$1"; }
show apps/vscode/src/integrations/misc/extract-text.ts >"$work/extract-text.ts"
show apps/vscode/src/integrations/misc/notebook-utils.ts >"$work/notebook-utils.ts"
show apps/vscode/src/shared/content-limits.ts >"$work/content-limits.ts"
printf 'export const Logger = { error() {}, warn() {}, info() {}, debug() {}, log() {} }\n' >"$work/logger.ts"

(cd "$work" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund \
  pdf-parse@1.1.4 mammoth@1.11.0 exceljs@4.4.0 jschardet@3.1.4 iconv-lite@0.6.3 isbinaryfile@5.0.7 \
  typescript@5 >/dev/null)

# Compile Cline's files as they are (CommonJS), the two `@/shared/...` imports pointed here.
(cd "$work" && node -e '
const ts = require("typescript"), fs = require("fs")
for (const f of ["extract-text", "notebook-utils", "content-limits", "logger"]) {
  let src = fs.readFileSync(f + ".ts", "utf8")
    .replace("@/shared/content-limits", "./content-limits")
    .replace("@/shared/services/Logger", "./logger")
  const out = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2020, esModuleInterop: true } })
  fs.writeFileSync(f + ".js", out.outputText)
}')
cat >"$work/run.js" <<'JS'
// `uint8`: pdf-parse is given a Uint8Array instead of the Buffer Cline passes (see below).
if (process.argv[3] === "uint8") {
  const p = require.resolve("pdf-parse/lib/pdf-parse")
  const parse = require(p)
  require.cache[p].exports = (buf, opts) => parse(new Uint8Array(buf), opts)
}
const { extractTextFromFile } = require("./extract-text")
extractTextFromFile(process.argv[2]).then(
  (t) => process.stdout.write(t),
  (e) => process.stdout.write("ERROR: " + e.message),
)
JS

cargo build -q --manifest-path "$root/Cargo.toml" -p agent-min --example extract_text
ours="$root/target/debug/examples/extract_text"
differ=0
for f in "${files[@]}"; do
  name=$(basename "$f")
  (cd "$work" && node run.js "$f") >"$work/cline.out" 2>/dev/null || true
  # pdf.js 1.10 (inside pdf-parse) fails on a Node Buffer under node 20+ ("bad XRef entry"):
  # Cline's own read of any PDF fails there. Compare with what it reads from the same bytes as
  # a Uint8Array, and say so.
  if [ "$(cat "$work/cline.out")" = "ERROR: bad XRef entry" ]; then
    echo "note       $name: Cline's extractTextFromFile fails (ERROR: bad XRef entry); compared with pdf-parse given a Uint8Array"
    (cd "$work" && node run.js "$f" uint8) >"$work/cline.out" 2>/dev/null || true
  fi
  "$ours" "$f" >"$work/ours.out" 2>/dev/null || true
  if cmp -s "$work/cline.out" "$work/ours.out"; then
    echo "same       $name ($(wc -c <"$work/ours.out") bytes)"
  else
    differ=$((differ + 1))
    echo "DIFFERENT  $name"
    echo "--- Cline"; cat "$work/cline.out"; echo
    echo "--- agent-min"; cat "$work/ours.out"; echo
  fi
done
echo "$differ of ${#files[@]} differ"
exit "$differ"
