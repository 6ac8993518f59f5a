"""A client that runs inside a network namespace and does what the test asks, one JSON line at a time.

Standard library only (it starts fast and depends on nothing that could reach the network).
Commands on stdin, one result per line on stdout:
  {"op": "request", "method", "url", "headers"?, "body"?, "ca"?: path or null (null: the system's
   trust store), "host_header"?} -> {"status", "headers", "body"} or {"error", "kind"}
  {"op": "raw", "host", "port", "send"} -> {"received": text of the bytes that came back, "count"}
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import sys
import time
import urllib.parse
from typing import Any


def request(cmd: dict[str, Any]) -> dict[str, Any]:
    url = urllib.parse.urlsplit(cmd["url"])
    started = time.perf_counter()
    try:
        if url.scheme == "https":
            context = ssl.create_default_context(cafile=cmd.get("ca"))
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                url.hostname or "", url.port, context=context, timeout=10
            )
        else:
            conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=10)
        headers = dict(cmd.get("headers") or {})
        body = cmd.get("body")
        data = json.dumps(body).encode() if body is not None else None
        if data is not None:
            headers.setdefault("Content-Type", "application/json")
        conn.request(cmd.get("method", "GET"), url.path + (f"?{url.query}" if url.query else ""), data, headers)
        response = conn.getresponse()
        text = response.read().decode("utf-8", "replace")
        conn.close()
        return {
            "status": response.status,
            "headers": dict(response.getheaders()),
            "body": text,
            "ms": round((time.perf_counter() - started) * 1000, 1),
        }
    except Exception as exc:  # the test reads what kind of failure it was
        return {"error": str(exc), "kind": type(exc).__name__}


def raw(cmd: dict[str, Any]) -> dict[str, Any]:
    received = b""
    try:
        with socket.create_connection((cmd["host"], cmd["port"]), timeout=5) as sock:
            sock.sendall(cmd["send"].encode())
            sock.settimeout(3)
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                received += chunk
    except OSError as exc:
        return {"received": received.decode("latin-1"), "count": len(received), "closed_by": type(exc).__name__}
    return {"received": received.decode("latin-1"), "count": len(received), "closed_by": "eof"}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        cmd = json.loads(line)
        result = request(cmd) if cmd["op"] == "request" else raw(cmd)
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
