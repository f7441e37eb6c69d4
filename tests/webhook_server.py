"""A real HTTP server on 127.0.0.1 that records the JSON POSTed to it (budget alerts)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer


@contextmanager
def webhook_server(status: int = 204) -> Iterator[tuple[str, list[dict]]]:
    """Yields (url, received): each POST appends {"path", "content_type", "json"}; every
    request is answered with `status`."""
    received: list[dict] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append(
                {
                    "path": self.path,
                    "content_type": self.headers["Content-Type"],
                    "json": json.loads(body),
                }
            )
            self.send_response(status)
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/kubeledger", received
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
