#!/usr/bin/env python3
"""A recording HTTP proxy on 127.0.0.1 for local-model-e2e.sh.

Forwards every request to UPSTREAM (a local model server), streams the reply back unchanged,
and appends one JSON line per exchange to RECORD: the method and path, what the request asked
for (message count, tools sent, stream options; not the whole prompt), the status, the
content type, the response body as text (the bytes as the server sent them, after HTTP's
chunked framing) and the sizes of the reads it came in. agent-min's replay test serves these
bodies again from a scripted server.

usage: record-proxy.py LISTEN_PORT UPSTREAM_URL RECORD_FILE
"""

import http.client
import json
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(sys.argv[1])
UPSTREAM = urllib.parse.urlsplit(sys.argv[2])
RECORD = sys.argv[3]
LOCK = threading.Lock()


def summary(body: bytes):
    try:
        req = json.loads(body)
    except ValueError:
        return None
    if not isinstance(req, dict):
        return None
    return {
        "model": req.get("model"),
        "messages": len(req.get("messages") or []),
        "tools": len(req.get("tools") or []),
        "stream": req.get("stream"),
        "stream_options": req.get("stream_options"),
        "max_tokens": req.get("max_tokens"),
    }


class Proxy(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # the reply ends when the connection closes

    def log_message(self, *args):
        pass

    def forward(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        conn = http.client.HTTPConnection(UPSTREAM.hostname, UPSTREAM.port, timeout=900)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        conn.request(self.command, self.path, body=body or None, headers=headers)
        resp = conn.getresponse()
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        self.send_header("Connection", "close")
        self.end_headers()
        data, sizes = bytearray(), []
        while True:
            chunk = resp.read1(65536)
            if not chunk:
                break
            data += chunk
            sizes.append(len(chunk))
            self.wfile.write(chunk)
            self.wfile.flush()
        conn.close()
        entry = {
            "method": self.command,
            "path": self.path,
            "request": summary(body),
            "status": resp.status,
            "content_type": resp.getheader("Content-Type"),
            "body": data.decode("utf-8", errors="replace"),
            "reads": sizes,
        }
        with LOCK, open(RECORD, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    do_GET = forward
    do_POST = forward


ThreadingHTTPServer(("127.0.0.1", PORT), Proxy).serve_forever()
