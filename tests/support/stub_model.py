"""A stand-in OpenAI-compatible server (stdlib only) for tests that must control the model's answer.

It answers ``GET /health``, ``GET /v1/models`` and ``POST /v1/chat/completions``; by default the
"translation" is the source text itself (the part of the prompt after the instruction), so a test
can make the answer contain anything, e.g. HTML that must not be executed; an answer function that
raises makes that request fail with HTTP 500.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import ThreadingHTTPServer

from tests.support.json_handler import JsonHandler


def echo_source(prompt: str) -> str:
    """The text to translate: the official templates put it after the first blank line."""
    return prompt.split("\n\n", 1)[-1]


class StubModel:
    def __init__(self, answer: Callable[[str], str] = echo_source, port: int = 0) -> None:
        self.answer = answer
        self.prompts: list[str] = []
        self.requests: list[dict[str, object]] = []  # each request body as sent
        stub = self

        class Handler(JsonHandler):
            def do_GET(self) -> None:
                if self.path == "/health":
                    self._json(200, {})
                elif self.path == "/v1/models":
                    model = {"id": "stub", "object": "model", "root": "stub-model", "owned_by": "t"}
                    self._json(200, {"object": "list", "data": [model]})
                else:
                    self._json(404, {"error": "not found"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                prompt = request["messages"][-1]["content"]
                stub.prompts.append(prompt)
                stub.requests.append(request)
                try:
                    content = stub.answer(prompt)
                except Exception as err:  # noqa: BLE001 - a scripted failure: HTTP 500
                    self._json(500, {"error": {"message": str(err), "code": 500}})
                    return
                self._json(200, {
                    "id": "stub-1", "object": "chat.completion", "created": 0, "model": "stub",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                })

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> StubModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
