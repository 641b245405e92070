"""A tiny OpenAI-compatible HTTP server that misbehaves on purpose, for the fault tests.

vLLM cannot be made to answer 500, malformed JSON, an endless 503 or a stalled response on
demand, so these faults are played by this stand-in: a ``ThreadingHTTPServer`` on 127.0.0.1 in
a daemon thread, answering every POST with the next step of a script. It speaks real HTTP, so
the real client (openai SDK + httpx) and the real policy are what is tested.

``GET /metrics`` answers ``FakeServer.metrics`` (set it at any time; None: 404): a page that
is missing, slow, garbage or lying, or that stops or changes mid-run, which a real vLLM (or a
proxy in front of it) does not do on demand.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted answer: status, body, headers, and how long to stall before it."""

    status: int = 200
    body: bytes | None = None  # None: a valid chat completion answering "ok"
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0


OK = Reply()
BUSY = Reply(503, json.dumps({"error": {
    "message": "The engine is currently busy, please try again later.",
    "type": "Service Unavailable", "code": 503}}).encode())


def busy(retry_after: str) -> Reply:
    return Reply(BUSY.status, BUSY.body, (("Retry-After", retry_after),))


def completion(content: str = "ok") -> bytes:
    return json.dumps({
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": "fake",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }).encode()


@dataclass
class FakeServer:
    """Answers POSTs with ``script[i]`` for the i-th call (the last entry repeats)."""

    script: list[Reply]
    calls: list[float] = field(default_factory=list)  # monotonic arrival time of each POST
    base_url: str = ""
    metrics: Reply | None = None  # what GET /metrics answers (None: 404)
    scrapes: int = 0  # GET /metrics received

    def next_reply(self) -> Reply:
        index = len(self.calls)
        self.calls.append(time.monotonic())
        return self.script[min(index, len(self.script) - 1)]


@contextmanager
def fake_server(*script: Reply) -> Iterator[FakeServer]:
    fake = FakeServer(list(script) or [OK])
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body are two writes: with Nagle on, each kept-alive answer waited for the
        # client's delayed ACK (~40 ms, measured: 60 ms a /metrics reading instead of ~2).
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with lock:
                reply = fake.next_reply()
            self._answer(reply, completion() if reply.body is None else reply.body,
                         "application/json")

        def do_GET(self) -> None:
            with lock:
                fake.scrapes += 1
                reply = fake.metrics if self.path == "/metrics" else None
            reply = reply or Reply(404, b"Not Found")
            self._answer(reply, reply.body or b"", "text/plain; version=0.0.4")

        def _answer(self, reply: Reply, body: bytes, content_type: str) -> None:
            if reply.delay:
                time.sleep(reply.delay)
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for name, value in reply.headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)
            except OSError:
                pass  # the client gave up (timeout test): nothing to answer

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="fake-openai", daemon=True)
    thread.start()
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
