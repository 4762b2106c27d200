#!/usr/bin/env bash
# apply_patch's V4A engine (agent-min/src/run/tools/v4a.rs) against Cline's own PatchParser and
# ApplyPatchHandler glue (preprocessLines, stripBashWrapper, extractFilesForOperations,
# patchToCommit, applyChunks), transpiled from Cline's TypeScript with `typescript`, on a corpus
# of patches: Cline's own test cases' shapes, fuzzy context (whitespace, Unicode punctuation,
# similarity), moves, wrappers, and malformed ones.
#
#   agent-min/scripts/patch-vs-cline.sh CLINE_GIT_DIR [N]
#
# Needs node (18+), npm (installs typescript into a temporary directory) and python3. Prints how
# many results are identical (same changes, fuzz and warnings, or the same error text), how many
# are cases where Cline never returns (agent-min answers an error) and how many differ — which
# must be 0.
set -euo pipefail
cline=${1:?usage: $0 CLINE_GIT_DIR [N]}
n=${2:-3000}
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
show() { git --git-dir="$cline" show "v4.0.10:apps/vscode/src/$1" 2>/dev/null || git -C "$cline" show "v4.0.10:apps/vscode/src/$1"; }
show core/task/tools/utils/PatchParser.ts >"$work/PatchParser.ts"
show shared/Patch.ts >"$work/Patch.ts"
show shared/string.ts >"$work/string.ts"
show core/task/tools/handlers/ApplyPatchHandler.ts >"$work/Handler.ts"
npm install --silent --no-audit --no-fund --prefix "$work" typescript@5.6.3 >/dev/null

# The handler's text-only methods, as a class of their own (the rest needs VS Code).
python3 - "$work" <<'PY'
import sys
w = sys.argv[1]
h = open(f"{w}/Handler.ts").read()
a = h[h.index("\tprivate preprocessLines"):h.index("\tprivate extractAllFiles")]
b = h[h.index("\tprivate applyChunks"):h.index("\t/**\n\t * Prepares a single file change")]
open(f"{w}/Glue.ts", "w").write(
    'import { BASH_WRAPPERS, DiffError, PATCH_MARKERS, type PatchChunk } from "./Patch"\n'
    'import { preserveEscaping } from "./string"\n'
    "export class Glue {\n" + a + b + "}\n")
for f in ["PatchParser.ts"]:
    s = open(f"{w}/{f}").read().replace('"@/shared/Patch"', '"./Patch"').replace('"@/shared/string"', '"./string"')
    open(f"{w}/{f}", "w").write(s)
PY
node -e '
const ts = require(process.argv[1] + "/node_modules/typescript");
const fs = require("fs");
for (const f of ["Patch", "string", "PatchParser", "Glue"]) {
  const src = fs.readFileSync(`${process.argv[1]}/${f}.ts`, "utf8");
  const out = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2020 } });
  fs.writeFileSync(`${process.argv[1]}/${f}.js`, out.outputText);
}' "$work"

python3 - "$work" "$n" <<'PY'
import json, random, sys
w, n = sys.argv[1], int(sys.argv[2])
random.seed(21)
words = ["def f():", "    return 1", "    x = 1", "class A:", "", "  ", "print(\u201chi\u201d)", "a\u2014b", "it's", "}", "{",
         "\tfoo()", "foo()  ", "caf\u00e9", "cafe\u0301", "x\\`y", "if (a) {", "return a;", "end"]
names = ["a.py", "b.txt", "src/c.rs", "d.md"]
def fuzz_line(l):
    r = random.random()
    if r < 0.2: return l + "  "
    if r < 0.3: return "  " + l.strip()
    if r < 0.4: return l.replace("\u201c", '"').replace("\u201d", '"').replace("\u2014", "-")
    if r < 0.45: return l + "x"
    return l
with open(f"{w}/cases.jsonl", "w") as out:
    for _ in range(n):
        files = {}
        for name in random.sample(names, random.randint(1, 3)):
            body = [random.choice(words) for _ in range(random.randint(0, 12))]
            files[name] = "\n".join(body) + ("\n" if random.random() < 0.6 else "")
        ops = []
        for name in list(files)[: random.randint(0, len(files))]:
            lines = files[name].split("\n")
            kind = random.random()
            if kind < 0.15:
                ops.append(f"*** Delete File: {name}")
                continue
            ops.append(f"*** Update File: {name}")
            if random.random() < 0.1:
                ops.append(f"*** Move to: moved/{name}")
            for _ in range(random.randint(1, 2)):
                if random.random() < 0.3 and lines:
                    ops.append("@@ " + random.choice(lines).strip())
                elif random.random() < 0.2:
                    ops.append("@@")
                if not lines: break
                i = random.randint(0, max(0, len(lines) - 1))
                for l in lines[max(0, i - 2):i]:
                    ops.append(" " + fuzz_line(l) if random.random() < 0.9 else fuzz_line(l))
                if i < len(lines) and random.random() < 0.8:
                    ops.append("-" + fuzz_line(lines[i]))
                for _ in range(random.randint(0, 2)):
                    ops.append("+" + random.choice(words))
                for l in lines[i + 1:i + 3]:
                    ops.append(" " + fuzz_line(l))
                if random.random() < 0.1:
                    ops.append("*** End of File")
        for _ in range(random.randint(0, 2)):
            new = random.choice(["new.txt", "b.txt", "n/x.py", "a.py"])
            ops.append(f"*** Add File: {new}")
            for _ in range(random.randint(0, 3)):
                ops.append(random.choice(["+" + random.choice(words), "+", random.choice(words)]))
        # Malformed or wrapped now and then.
        r = random.random()
        if r < 0.1 and ops: ops.insert(random.randint(0, len(ops)), random.choice(["***", "*** Bogus", "garbage", "", "-x"]))
        body = "\n".join(ops)
        r = random.random()
        if r < 0.6: text = f"*** Begin Patch\n{body}\n*** End Patch"
        elif r < 0.7: text = f"%%bash\napply_patch <<\"EOF\"\n*** Begin Patch\n{body}\n*** End Patch\nEOF"
        elif r < 0.8: text = f"*** Begin Patch\n{body}"
        elif r < 0.9: text = body.replace("\n", "\r\n") if random.random() < 0.5 else body
        else: text = f"```\n*** Begin Patch\n{body}\n*** End Patch\n```"
        out.write(json.dumps({"patch": text, "files": files}) + "\n")
PY

node -e '
const w = process.argv[1];
const vm = require("vm");
const { PatchParser } = require(w + "/PatchParser.js");
const { Glue } = require(w + "/Glue.js");
const { PatchActionType } = require(w + "/Patch.js");
const lines = require("fs").readFileSync(w + "/cases.jsonl", "utf8").trim().split("\n");
function run(c) {
  const g = new Glue();
  const ls = g.preprocessLines(c.patch);
  const files = {};
  for (const f of g.extractFilesForOperations(c.patch, ["*** Update File: ", "*** Delete File: "])) {
    if (!(f in c.files)) throw new Error(`File not found: ${f}`);
    files[f] = c.files[f].replace(/\r\n/g, "\n");
  }
  const { patch, fuzz } = new PatchParser(ls, files).parse();
  const changes = [];
  for (const [p, a] of Object.entries(patch.actions)) {
    if (a.type === PatchActionType.DELETE) changes.push([p, "delete", null, null]);
    else if (a.type === PatchActionType.ADD) { if (!a.newFile) throw new Error("ADD action without file content"); changes.push([p, "add", a.newFile, null]); }
    else changes.push([p, "update", g.applyChunks(files[p], a.chunks, p), a.movePath ?? null]);
  }
  const warnings = (patch.warnings || []).map((x) => `${x.path}: chunk ${x.chunkIndex}: ${x.message}\n${x.context}`);
  return { ok: { changes, fuzz, warnings } };
}
const ctx = vm.createContext({ run, c: null });
for (const l of lines) {
  ctx.c = JSON.parse(l);
  let r;
  try { r = vm.runInContext("run(c)", ctx, { timeout: 2000 }); }
  catch (e) { r = /Script execution timed out/.test(e.message) ? { hang: true } : { err: e.message }; }
  console.log(JSON.stringify(r));
}' "$work" >"$work/cline.out"

cargo run -q --release -p agent-min --example patch_apply <"$work/cases.jsonl" >"$work/ours.out"

python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
cases = [json.loads(l) for l in open(f"{w}/cases.jsonl")]
cline = [json.loads(l) for l in open(f"{w}/cline.out")]
ours = [json.loads(l) for l in open(f"{w}/ours.out")]
same = hang = differ = 0
kinds = {"ok": 0, "err": 0, "warn": 0, "fuzz": 0}
for case, c, o in zip(cases, cline, ours):
    if c.get("hang"):
        hang += 1 if "err" in o else 0
        differ += 0 if "err" in o else 1
        continue
    if c == o:
        same += 1
        if "ok" in c:
            kinds["ok"] += 1
            kinds["warn"] += bool(c["ok"]["warnings"])
            kinds["fuzz"] += c["ok"]["fuzz"] > 0
        else:
            kinds["err"] += 1
    else:
        differ += 1
        if differ <= 5:
            print("DIFFER:", json.dumps(case)[:600], "\n cline:", json.dumps(c)[:400], "\n ours: ", json.dumps(o)[:400])
print(f"{len(ours)} patches: {same} identical to Cline ({kinds['ok']} applied, of which {kinds['fuzz']} with fuzz and {kinds['warn']} with skipped chunks; {kinds['err']} the same error), {hang} where Cline never returns (agent-min: an error), {differ} different")
sys.exit(1 if differ or len(ours) != len(cline) else 0)
PY
