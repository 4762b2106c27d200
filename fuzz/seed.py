#!/usr/bin/env python3
"""Seed corpus from the conformance inputs: fuzz/corpus/<target>/, one file per input.

Generated, not committed: run by fuzz/run.sh. The inputs come from ../shared/conformance.
Environment: FUZZ_CORPUS_DIR puts the corpora elsewhere (.clusterfuzzlite/build.sh does);
FUZZ_SEED_FALLBACK=1 seeds a few built-in replies when ../shared/conformance is absent (as in a
ClusterFuzzLite Docker build, whose context is the repository alone) instead of failing.
"""
import hashlib
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
src = os.path.join(here, "..", "..", "shared", "conformance", "cline-v4.0.10.jsonl")
BUILT_IN = [
    b"I'll read it.\n<read_file>\n<path>src/main.rs</path>\n</read_file>",
    b"<write_to_file><path>a.rs</path><content>\nfn f<T>(a: T) {}\n</content></write_to_file> done",
    b"<replace_in_file><path>x</path><diff>------- SEARCH\na\n=======\nb\n+++++++ REPLACE</diff></replace_in_file>",
    b"<execute_command><command>ls</command><requires_approval>false</requires_approval></execute_command><attempt_compl",
]
fallback = not os.path.exists(src)
if fallback and os.environ.get("FUZZ_SEED_FALLBACK") != "1":
    sys.exit(f"seed.py: {src} is missing (../shared/conformance must sit beside the repo)")
targets = sys.argv[1:] or ["parse", "differential_naive", "streaming", "heapless", "custom_tables"]
# The agent's targets get their own seeds: SSE streams and SEARCH/REPLACE diffs.
AGENT_SEEDS = {
    "sse_decoder": [
        b"\x07event: message_start\ndata: {\"type\":\"message_start\"}\n\n: ping\r\ndata: a\r\ndata: b\r\n\r\n",
        b"\x03data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n",
        b"\x01event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\r\r",
    ],
    "diff_apply": [
        b"fn a() {\n    x\n}\n\x00------- SEARCH\n    x\n=======\n    y\n+++++++ REPLACE\n",
        b"a\nb\nc\nd\n\x00<<<<<<< SEARCH\na\nb\nc\n=======\nz\n>>>>>>> REPLACE\n",
    ],
}

# libFuzzer's length control grows inputs slowly from the seeds: long seeds (up to run.sh's
# -max_len, 64 KiB) let it work on long replies at once. The naive oracle keeps its 4 KiB.
MAX_LEN = {"differential_naive": 4096}
all_inputs = list(BUILT_IN) if fallback else []
if not fallback:
    with open(src, encoding="utf-8") as f:
        for line in f.read().split("\n"):
            if line:
                all_inputs.append(json.loads(line)["input"].encode("utf-8"))
# Long seeds: conformance inputs laid end to end, about 16, 32 and 60 KiB.
for size in (16 << 10, 32 << 10, 60 << 10):
    long, i = b"", len(all_inputs) // 3
    while len(long) < size and all_inputs:
        long += all_inputs[i % len(all_inputs)]
        i += 7
    all_inputs.append(long[:65536])


def sse_seeds(replies):
    """The agent's reply path: a provider byte (with the chunk size), then that provider's stream."""
    out = []
    for n, text in enumerate(replies):
        t = text.decode("utf-8", "replace")
        pieces = [t[i:i + 16] for i in range(0, len(t), 16)]
        kind = n % 3
        if kind == 0:  # Anthropic
            body = 'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":9,"output_tokens":1}}}\n\n'
            body += "".join("event: content_block_delta\ndata: " + json.dumps({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}) + "\n\n" for p in pieces)
            body += 'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}\n\n'
        elif kind == 1:  # OpenAI-compatible
            body = "".join("data: " + json.dumps({"choices": [{"delta": {"content": p}, "finish_reason": None}]}) + "\n\n" for p in pieces)
            body += 'data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":7}}\n\ndata: [DONE]\n\n'
        else:  # Ollama
            body = "".join(json.dumps({"message": {"content": p}, "done": False}) + "\n" for p in pieces)
            body += '{"done":true,"done_reason":"stop","prompt_eval_count":9,"eval_count":7}\n'
        out.append(bytes([kind + 3 * (1 + n % 40)]) + body.encode("utf-8"))
    return out


with_tools = [i for i in all_inputs if b"</" in i and len(i) < 8192][:300]
AGENT_SEEDS["agent_stream"] = sse_seeds(with_tools) + [b"\x01" + b"data: " * 3000] + [
    # Native dialect (first byte's high bit): streamed tool calls, one stream per provider.
    bytes([0x80 | 0 | 3 * 5]) + b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"read_file","input":{}}}\n\n'
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"path\\": \\"a"}}\n\n'
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":".rs\\"}"}}\n\n'
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":7}}\n\n',
    bytes([0x80 | 1 | 3 * 7]) + b'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"execute_command","arguments":"{\\"command\\":"}}]}}]}\n\n'
    b'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\\"ls\\",\\"requires_approval\\":false}"}}]},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n',
    bytes([0x80 | 2 | 3 * 9]) + b'{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"read_file","arguments":{"path":"a.rs"}}}]},"done":false}\n'
    b'{"done":true,"done_reason":"stop","prompt_eval_count":9,"eval_count":7}\n',
    # Native dialect, no native call: two calls written as XML in the text, which both run.
    bytes([0x80 | 0 | 3 * 5]) + b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Reading.\\n<read_file>\\n<path>a.rs</path>\\n</read_file>\\n<read_file>\\n<path>b.rs</path>\\n</read_file>"}}\n\n'
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}\n\n',
]
corpus_dir = os.environ.get("FUZZ_CORPUS_DIR") or os.path.join(here, "corpus")
for t in targets:
    d = os.path.join(corpus_dir, t)
    os.makedirs(d, exist_ok=True)
    inputs = [i for i in all_inputs if len(i) <= MAX_LEN.get(t, 65536)]
    for data in AGENT_SEEDS.get(t, inputs):
        name = hashlib.sha1(data).hexdigest()
        with open(os.path.join(d, name), "wb") as out:
            out.write(data)
print(f"seeded {len(all_inputs)} inputs into {len(targets)} corpora")
