#!/usr/bin/env bash
# End-to-end check of agent-min's native tool calls against a real server: LiteLLM's proxy
# (pinned below) with a scripted custom handler (scripts/litellm/handler.py). The same native
# task runs through the proxy's OpenAI-compatible endpoint (/v1/chat/completions), its
# Anthropic-format endpoint (/v1/messages) and its Responses API (/v1/responses, as agent-min asks
# OpenAI's own API for gpt-5.5): read notes.txt, write out.txt (write_to_file, or apply_patch in
# Cline's GPT-5 tool set), complete. The handler answers 400 if a tool set is not one of Cline's
# or a call lacks its result (on the Responses API, LiteLLM turns our input items into chat
# messages first: a function_call without its function_call_output by call_id fails there).
#
#   scripts/litellm-native.sh            # installs LiteLLM into a cached venv on first use
#
# Needs python3 (3.9+), network access to PyPI the first time, and a built agent-min
# (`cargo build -p agent-min`; AGENT_MIN=path overrides). Exit 0 when both runs pass.
set -euo pipefail
cd "$(dirname "$0")/.."
LITELLM_VERSION=1.108.7
VENV="${XDG_CACHE_HOME:-$HOME/.cache}/agent-min/litellm-$LITELLM_VERSION"
BIN="${AGENT_MIN:-$PWD/target/debug/agent-min}"
[ -x "$BIN" ] || { echo "no agent-min binary at $BIN; run cargo build -p agent-min (or set AGENT_MIN)"; exit 1; }

if ! "$VENV/bin/python" -c "import litellm.proxy" 2>/dev/null; then
  echo "installing litellm[proxy]==$LITELLM_VERSION into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "litellm[proxy]==$LITELLM_VERSION"
fi

# A fresh master key per run: the proxy refuses to start without one. agent-min sends it as its
# API key (through curl's stdin, as always).
KEY="sk-$("$VENV/bin/python" -c 'import secrets; print(secrets.token_hex(24))')"
PORT=$("$VENV/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
LOG=$(mktemp)
(cd scripts/litellm && LITELLM_MASTER_KEY="$KEY" exec "$VENV/bin/litellm" --config config.yaml --host 127.0.0.1 --port "$PORT") >"$LOG" 2>&1 &
PROXY=$!
cleanup() { kill "$PROXY" 2>/dev/null || true; wait "$PROXY" 2>/dev/null || true; rm -f "$LOG"; }
trap cleanup EXIT
for _ in $(seq 1 120); do
  curl -fsS "http://127.0.0.1:$PORT/health/liveliness" >/dev/null 2>&1 && break
  kill -0 "$PROXY" 2>/dev/null || { cat "$LOG"; echo "the LiteLLM proxy did not start"; exit 1; }
  sleep 0.5
done
curl -fsS "http://127.0.0.1:$PORT/health/liveliness" >/dev/null || { cat "$LOG"; echo "the LiteLLM proxy is not answering"; exit 1; }

run() { # provider base-url [model [writing tool]]
  local ws; ws=$(mktemp -d)
  local model=${3:-claude-sonnet-4-5} writer=${4:-write_to_file}
  printf 'remember the milk\n' >"$ws/notes.txt"
  echo "=== $1 via $2 ($model)"
  OPENAI_API_KEY="$KEY" ANTHROPIC_API_KEY="$KEY" \
    "$BIN" run --provider "$1" --base-url "$2" --model "$model" --cwd "$ws" --yolo --no-save \
      --json "copy the notes" >"$ws/events.ndjson" || { cat "$ws/events.ndjson"; tail -40 "$LOG"; echo "FAIL: $1 run failed"; exit 1; }
  grep -q "\"type\":\"tool_call\".*\"tool\":\"$writer\",\"partial\":false" "$ws/events.ndjson" || { echo "FAIL: $1: no native $writer call"; exit 1; }
  [ "$(cat "$ws/out.txt")" = "milk ✓" ] || { echo "FAIL: $1: out.txt is $(cat "$ws/out.txt" 2>&1)"; exit 1; }
  grep -q '"result":"copied via LiteLLM"' "$ws/events.ndjson" || { echo "FAIL: $1: no completion"; exit 1; }
  # Real usage on tool turns (issue 11): the agent reads on after the first tool until the usage
  # arrives, so no request of the run is an estimate.
  local requests estimated
  requests=$(grep -c '"type":"api_request"' "$ws/events.ndjson" || true)
  estimated=$(grep '"type":"api_request"' "$ws/events.ndjson" | grep -c '"estimated":true' || true)
  [ "$requests" -ge 3 ] && [ "$estimated" -eq 0 ] || { grep '"type":"api_request"' "$ws/events.ndjson"; echo "FAIL: $1: $estimated of $requests requests have estimated usage"; exit 1; }
  echo "ok: $1 — 3 native tool calls through LiteLLM $LITELLM_VERSION, real usage on all $requests requests"
  rm -rf "$ws"
}
run openai "http://127.0.0.1:$PORT/v1"
run anthropic "http://127.0.0.1:$PORT"
# gpt-5.5 as on OpenAI's own API (openai-native): the Responses API, with Cline's GPT-5 tools.
run openai-native "http://127.0.0.1:$PORT/v1" gpt-5.5 apply_patch
grep -q '"POST /v1/responses HTTP/1.1" 200' "$LOG" || { echo "FAIL: the gpt-5.5 run did not go through /v1/responses"; exit 1; }
