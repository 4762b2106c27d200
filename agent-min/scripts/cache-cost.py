#!/usr/bin/env python3
"""The cost of a 10-turn task with and without prompt caching, as the server's usage reports it.

    python3 agent-min/scripts/cache-cost.py [AGENT_MIN_BIN] [MODEL]   (default claude-sonnet-4-5;
                                                                     claude-3-7-sonnet: the XML path)

A SCRIPTED Anthropic Messages server on 127.0.0.1 (not the real API) answers agent-min's requests
over the real SSE wire format: nine replies that each call `read_file` on another 2 KB source file
(native `tool_use`), then `attempt_completion` (as XML text when the request carries no tools). It reports `usage` by applying Anthropic's documented prompt-caching rules
(docs.anthropic.com, "Prompt caching") to the `cache_control` breakpoints each request carries:

- the prompt is the sequence tools -> system -> messages, cut into content blocks;
- a breakpoint caches the prefix that ends with its block, if that prefix is at least the
  model's minimum cacheable length (1,024 tokens for Sonnet);
- a request reads the longest cached prefix that ends at one of its breakpoints or at one of the
  20 blocks before each breakpoint (`cache_read_input_tokens`), writes the rest of the prompt up
  to its last cacheable breakpoint (`cache_creation_input_tokens`), and pays the remainder as
  `input_tokens`;
- a cache entry lives 5 minutes (the task takes seconds, so none expires).

Tokens are estimated as ceil(UTF-8 bytes / 4) per block (JSON-serialised without
`cache_control`); the real tokenizer gives other counts, so the dollar figures show the effect of
the breakpoints agent-min sends, not a bill. Run 1 keeps the breakpoints; run 2 is the same task
with the server ignoring every `cache_control` (Cline has no setting that turns caching off for
Anthropic, nor has agent-min: this is what the same requests would cost without breakpoints).
agent-min computes each request's cost from the reported usage with its model prices
(`agent-min/data/models.json`, from Cline's api.ts); the `--json` `api_request` events carry it.
"""
import hashlib
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "target", "debug", "agent-min")
MODEL = sys.argv[2] if len(sys.argv) > 2 else "claude-sonnet-4-5"
MIN_CACHEABLE = 1024
LOOKBACK = 20
TURNS = 10


def tokens(v):
    return math.ceil(len(json.dumps(v, sort_keys=True, ensure_ascii=False).encode()) / 4)


def strip_marks(v):
    if isinstance(v, dict):
        return {k: strip_marks(x) for k, x in v.items() if k != "cache_control"}
    if isinstance(v, list):
        return [strip_marks(x) for x in v]
    return v


def prompt_blocks(body):
    """(block without marks, marked?) in cache order: tools, system, then messages' blocks."""
    out = [(t, "cache_control" in t) for t in body.get("tools", [])]
    system = body.get("system", [])
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    out += [(b, "cache_control" in b) for b in system]
    for m in body["messages"]:
        content = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        for i, b in enumerate(content):
            # The role is part of what is cached: it goes with the message's first block.
            out.append(({"role": m["role"], "block": b} if i == 0 else b, "cache_control" in b))
    return [(strip_marks(b), marked) for b, marked in out]


class Cache:
    def __init__(self, honour_marks):
        self.honour = honour_marks
        self.entries = set()

    def usage(self, body):
        blocks = prompt_blocks(body)
        cum, h, hashes = [], hashlib.sha256(), []
        total = 0
        for b, _ in blocks:
            total += tokens(b)
            cum.append(total)
            h.update(json.dumps(b, sort_keys=True).encode())
            hashes.append(h.copy().hexdigest())
        marks = [i for i, (_, m) in enumerate(blocks) if m] if self.honour else []
        read_end = -1
        for bp in marks:
            for i in range(bp, max(bp - LOOKBACK, -1), -1):
                if hashes[i] in self.entries:
                    read_end = max(read_end, i)
                    break
        read = cum[read_end] if read_end >= 0 else 0
        cacheable = [bp for bp in marks if cum[bp] >= MIN_CACHEABLE]
        write_end = max(cacheable, default=-1)
        write = cum[write_end] - read if write_end > read_end else 0
        for bp in cacheable:
            self.entries.add(hashes[bp])
        return {"input_tokens": total - read - write, "cache_creation_input_tokens": write, "cache_read_input_tokens": read}


def sse(event, data):
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def reply(turn, usage, native):
    if turn < TURNS:
        name, args = "read_file", {"path": f"src/part{turn}.py"}
    else:
        name, args = "attempt_completion", {"result": "Done."}
    out_tokens = tokens(args) + 10
    yield sse("message_start", {"type": "message_start", "message": {"id": f"msg_{turn}", "type": "message", "role": "assistant", "content": [], "model": MODEL, "stop_reason": None, "usage": {**usage, "output_tokens": 1}}})
    if native:
        yield sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": f"toolu_{turn}", "name": name, "input": {}}})
        yield sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": json.dumps(args)}})
    else:  # the XML dialect (a model Cline gives no native tools, e.g. claude-3-7-sonnet)
        text = f"<{name}>" + "".join(f"<{k}>{v}</{k}>" for k, v in args.items()) + f"</{name}>"
        yield sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
        yield sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}})
    yield sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    stop = "tool_use" if native else "end_turn"
    yield sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": out_tokens}})
    yield sse("message_stop", {"type": "message_stop"})


def serve(cache):
    state = {"turn": 0}

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            state["turn"] += 1
            chunks = list(reply(state["turn"], cache.usage(body), "tools" in body))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(sum(map(len, chunks))))
            self.send_header("connection", "close")
            self.end_headers()
            for c in chunks:
                self.wfile.write(c)
            self.close_connection = True

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def run(honour):
    cache = Cache(honour)
    srv = serve(cache)
    with tempfile.TemporaryDirectory() as ws, tempfile.TemporaryDirectory() as st:
        with open(os.path.join(ws, "README.md"), "w") as f:
            f.write("# demo\n\nA small project.\n")
        os.mkdir(os.path.join(ws, "src"))
        for n in range(1, TURNS):
            with open(os.path.join(ws, "src", f"part{n}.py"), "w") as f:
                f.write("".join(f"def f{n}_{i}(x):\n    return x * {i} + {n}  # step {i}\n\n" for i in range(40)))
        env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL")}
        env.update({"ANTHROPIC_API_KEY": "sk-test", "XDG_STATE_HOME": st, "XDG_CONFIG_HOME": os.path.join(st, "c"), "HOME": st, "NO_COLOR": "1"})
        args = [BIN, "run", "--provider", "anthropic", "--model", MODEL, "--base-url", f"http://127.0.0.1:{srv.server_address[1]}",
                "--yolo", "--json", "--no-save", "--no-checkpoints", "--no-hooks", "--cwd", ws, "Read the nine parts under src/, then finish."]
        p = subprocess.run(args, env=env, cwd=ws, capture_output=True, text=True, timeout=300)
    srv.shutdown()
    reqs = [e for e in map(json.loads, p.stdout.splitlines()) if e.get("type") == "api_request"]
    if len(reqs) != TURNS:
        sys.exit(f"expected {TURNS} requests, got {len(reqs)}:\n{p.stderr[-2000:]}")
    return reqs


def main():
    print(f"{MODEL}, {TURNS} turns against a SCRIPTED Anthropic server applying the documented caching rules (token counts estimated; not the real API)")
    totals = {}
    for honour, label in ((True, "with caching (agent-min's cache_control breakpoints)"), (False, "without caching (breakpoints ignored)")):
        reqs = run(honour)
        print(f"\n{label}\n turn    input  cache_write  cache_read  output   cost USD")
        for r in reqs:
            print(f" {r['turn']:>4} {r['tokens_in']:>8} {r['cache_write']:>12} {r['cache_read']:>11} {r['tokens_out']:>7} {r['cost_usd']:>10.6f}")
        total = sum(r["cost_usd"] for r in reqs)
        totals[honour] = total
        print(f" total{sum(r['tokens_in'] for r in reqs):>8} {sum(r['cache_write'] for r in reqs):>12} {sum(r['cache_read'] for r in reqs):>11} {sum(r['tokens_out'] for r in reqs):>7} {total:>10.6f}")
    print(f"\nwith caching: ${totals[True]:.4f}   without: ${totals[False]:.4f}   ratio {totals[True] / totals[False]:.2f}")


if __name__ == "__main__":
    main()
