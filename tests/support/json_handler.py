"""The request handler the tests' stand-in HTTP servers share (the stub model, the Kubernetes
API): quiet, and one way to answer JSON with its length, so each stand-in holds only its routes."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler

__all__ = ["JsonHandler"]


class JsonHandler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass

    def _json(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
