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
max_len = 4096
inputs = list(BUILT_IN) if fallback else []
if not fallback:
    with open(src, encoding="utf-8") as f:
        for line in f.read().split("\n"):
            if line:
                data = json.loads(line)["input"].encode("utf-8")
                if len(data) <= max_len:
                    inputs.append(data)
corpus_dir = os.environ.get("FUZZ_CORPUS_DIR") or os.path.join(here, "corpus")
for t in targets:
    d = os.path.join(corpus_dir, t)
    os.makedirs(d, exist_ok=True)
    for data in AGENT_SEEDS.get(t, inputs):
        name = hashlib.sha1(data).hexdigest()
        with open(os.path.join(d, name), "wb") as out:
            out.write(data)
print(f"seeded {len(inputs)} inputs into {len(targets)} corpora")
