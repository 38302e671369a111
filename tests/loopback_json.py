"""A real HTTP server on loopback answering every POST with JSON: what a model
provider's endpoint looks like to the code under test (no network, no mock)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: (the request's path, headers and JSON body) -> (status, JSON answer)
Answer = Callable[[str, Any, Any], tuple[int, Any]]


@contextmanager
def json_server(answer: Answer) -> Iterator[int]:
    """Serve `answer` on a free loopback port (yielded) until the block ends."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            size = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(size) if size else b""
            status, out = answer(self.path, self.headers, json.loads(raw) if raw else None)
            body = json.dumps(out).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        thread.join(10)
