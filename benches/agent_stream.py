#!/usr/bin/env python3
"""The agent-stream benchmark (issue 12): the whole agent path — curl, SSE, parser, terminal,
--json events, the write — for a write_to_file whose content is streamed in 16-byte deltas.

    python3 benches/agent_stream.py            # builds agent-min (release), then measures

For 1 MiB and 4 MiB files it serves, from a scripted Anthropic server on 127.0.0.1, a reply
that writes the file in 16-byte text deltas (the XML dialect), then a completion; it runs
`agent-min run --json --yolo` against it and reports the agent's CPU time (its own and curl's,
from wait4), the wall time and the bytes of --json output, then, once each under callgrind,
the agent's own instructions (not curl's: valgrind does not follow the exec). Then once more
for 1 MiB with native tool calls (the default path: the arguments in 16-byte
`input_json_delta` fragments), for the --json bytes. Each --json figure is split into the
complete `tool_call` event, the `tool_result`, the partial `tool_call` events and the rest.
Then the --json ratio of 16, 100 and 400 KB files in both dialects (no limit).

It fails (exit 1) unless the agent's instructions grow at most 4.5x from 1 to 4 MiB (linear is
4x; quadratic would be 16x) and the --json output is at most 2x the file's size (the result
leaves out its echo of the file: `left_out`). The limit is on instructions, not time: they are
the same at any load (two runs differ by a few thousand in 2.3 billion), where the CPU time's
growth, 3.5x on an idle machine, once read 4.58x on a loaded one. Needs valgrind.
"""
import json, os, shutil, socket, subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DELTA = 16


def sse(event, data):
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def anthropic_reply(text):
    out = [sse("message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 100, "output_tokens": 1}}})]
    out.append(sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}))
    for i in range(0, len(text), DELTA):
        out.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text[i:i + DELTA]}}))
    out.append(sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
    out.append(sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": len(text) // 4}}))
    out.append(sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


def anthropic_native(call_id, name, args):
    """A reply that is one native tool call, its arguments' JSON in DELTA-byte fragments."""
    out = [sse("message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 100, "output_tokens": 1}}})]
    out.append(sse("content_block_start", {"type": "content_block_start", "index": 0,
                                           "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}}}))
    for i in range(0, len(args), DELTA):
        out.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                               "delta": {"type": "input_json_delta", "partial_json": args[i:i + DELTA]}}))
    out.append(sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
    out.append(sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": len(args) // 4}}))
    out.append(sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


def split(events, text):
    """The bytes of --json output by kind: complete call, result, partial calls, the rest. The
    write's result must leave out its echo of the file (`left_out`), and the text the model got,
    put back together from the call's `content`, must hold the file (`text`)."""
    parts = {"call": 0, "result": 0, "partial": 0, "rest": 0}
    call = None
    for line in events.splitlines(keepends=True):
        e = json.loads(line)
        kind = "rest"
        if e["type"] == "tool_call" and e.get("tool") == "write_to_file":
            kind = "partial" if e["partial"] else "call"
            call = e if kind == "call" else call
        elif e["type"] == "tool_result" and e.get("tool") == "write_to_file":
            kind = "result"
            shown = e["result"]
            at = shown.find('<final_file_content path="')
            at += shown[at:].find('">\n') + 3
            whole = shown[:at] + call["params"]["content"] + shown[at:]
            if e.get("left_out") != "final_file_content" or f'path="out.rs">\n{text}\n</final_file_content>' not in whole:
                sys.exit(f"the write's tool_result does not leave out the file, or does not give it back: {shown[:300]!r}")
        parts[kind] += len(line)
    return parts


def serve(listener, bodies):
    for body in bodies:
        conn, _ = listener.accept()
        with conn:
            f = conn.makefile("rb")
            length = 0
            while True:
                line = f.readline()
                if line in (b"\r\n", b"\n", b""):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            f.read(length)
            # The body ends when the connection closes (no length, not chunked): close the file
            # object too, or the socket stays open and a reader that reads to the end waits forever.
            f.close()
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n" + body)


def content(size):
    line = "    let value = compute(index, &table[offset..]); // a line of code\n"
    return (line * (size // len(line) + 1))[:size]


def measure(agent, size, native=False, callgrind=None):
    """The agent's CPU time, wall time, --json bytes and their parts; under callgrind (a file
    for its profile), the CPU time is valgrind's and the instructions are read from the file."""
    text = content(size)
    if native:
        replies = [anthropic_native("toolu_w", "write_to_file", json.dumps({"absolutePath": "out.rs", "content": text})),
                   anthropic_native("toolu_d", "attempt_completion", json.dumps({"result": "written"}))]
    else:
        reply = f"I'll write it.\n<write_to_file>\n<path>out.rs</path>\n<content>\n{text}\n</content>\n</write_to_file>"
        done = "Done.\n<attempt_completion>\n<result>written</result>\n</attempt_completion>"
        replies = [anthropic_reply(reply), anthropic_reply(done)]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    server = threading.Thread(target=serve, args=(listener, replies), daemon=True)
    server.start()
    with tempfile.TemporaryDirectory() as ws, tempfile.TemporaryFile() as out:
        env = dict(os.environ, ANTHROPIC_API_KEY="sk-bench-0123456789", NO_COLOR="1")
        args = [agent, "run", "--provider", "anthropic", "--base-url", f"http://127.0.0.1:{port}", "--model",
                "claude-bench", "--yolo", "--json", "--no-save", "--sandbox", "off",
                "--tool-calls", "native" if native else "xml", "write it"]
        if callgrind:
            args = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={callgrind}"] + args
        start = time.monotonic()
        p = subprocess.Popen(args, cwd=ws, env=env, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.monotonic() - start
        p.returncode = os.waitstatus_to_exitcode(status)
        written = os.path.getsize(os.path.join(ws, "out.rs")) if os.path.exists(os.path.join(ws, "out.rs")) else -1
        json_bytes = out.tell()
        out.seek(0)
        parts = split(out.read().decode(), text)
    listener.close()
    if p.returncode != 0 or written != size:
        sys.exit(f"agent-min failed for {size} bytes (exit {p.returncode}, wrote {written} bytes)")
    return usage.ru_utime + usage.ru_stime, wall, json_bytes, parts


def instructions_of(agent, size):
    """The instructions the agent ran (callgrind's total) for a file of this size, XML dialect."""
    with tempfile.TemporaryDirectory() as tmp:
        profile = os.path.join(tmp, "callgrind.out")
        measure(agent, size, callgrind=profile)
        with open(profile) as f:
            for line in f:
                if line.startswith("summary:"):
                    return int(line.split()[1])
    sys.exit(f"callgrind wrote no summary for {size} bytes")


def main():
    if shutil.which("valgrind") is None:
        sys.exit("agent_stream.py needs valgrind (the growth is measured in instructions): apt-get install valgrind")
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "agent-min"], cwd=ROOT, check=True)
    agent = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "agent-min")
    # The time reported: best of 3 of each, the two sizes taking turns, so that a load that comes
    # and goes falls on both alike. Even so it varies with load (a CI machine once read 4.58x
    # growth), so the limit is on instructions (below).
    runs = {1: [], 4: []}
    for _ in range(3):
        for mib in runs:
            runs[mib].append(measure(agent, mib << 20))
    rows = {mib: min(r, key=lambda row: row[0]) for mib, r in runs.items()}
    native = measure(agent, 1 << 20, native=True)

    def shares(parts, size):
        return ", ".join(f"{k} {v / size:.2f}x" for k, v in parts.items())

    for mib in rows:
        size = mib << 20
        cpu, wall, out, parts = rows[mib]
        print(f"{mib} MiB in {size // DELTA} deltas: agent CPU {cpu:.3f} s, wall {wall:.3f} s, --json {out} bytes ({out / size:.2f}x the file)")
        print(f"  --json: {shares(parts, size)}")
    _, _, out, parts = native
    print(f"1 MiB native: --json {out} bytes ({out / (1 << 20):.2f}x the file)")
    print(f"  --json: {shares(parts, 1 << 20)}")
    # Smaller files, where the fixed events of a run (~2.4 KB) and the partial events (each
    # value's first 1 KiB, a few dozen at most) weigh more: no limit, for the README.
    small = []
    for kb in (16, 100, 400):
        xml, nat = (measure(agent, kb << 10, native=n)[2] / (kb << 10) for n in (False, True))
        small.append(f"{kb} KB {xml:.2f}x / {nat:.2f}x")
    print(f"--json / file at other sizes (XML / native): {', '.join(small)}")
    instructions = {mib: instructions_of(agent, mib << 20) for mib in rows}
    growth = instructions[4] / instructions[1]
    print(f"agent instructions: 1 MiB {instructions[1]:,}, 4 MiB {instructions[4]:,}")
    print(f"growth from 1 to 4 MiB: {growth:.2f}x in instructions (limit 4.5x), "
          f"{rows[4][0] / rows[1][0]:.2f}x in CPU time (no limit: it varies with load)")
    ok = growth <= 4.5 and all(rows[m][2] <= 2 * (m << 20) for m in rows) and native[2] <= 2 << 20
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
