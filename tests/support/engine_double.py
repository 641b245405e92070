"""The engine double: an in-process OpenAI-compatible server that behaves like vLLM wherever the
app depends on it, with the test holding the clock.

What it copies from vLLM (``tests/test_engine_contract.py`` runs one scenario against both and
compares what the app can observe):

- **slots**: at most ``max_num_seqs`` requests run (``--max-num-seqs``); the rest wait;
- **an admission cap**: a request that would make more than ``max_queued`` unfinished ones
  (running and waiting together, as vLLM counts ``--max-num-queued-reqs``: 4 is 2 running + 2
  waiting with 2 slots) gets a 503 with vLLM's body; a request for ``n`` answers counts ``n``
  (vLLM fans it out into ``n`` requests: Best quality's ``n`` = 6 is refused by a cap of 4),
  and is answered with ``n`` choices (the answer function asked once for each; a slot is
  still one per request here);
- **priority**: a free slot goes to the waiting request of the lowest ``priority``, arrival
  order breaking ties (vLLM's ``--scheduling-policy priority``);
- **abort on hang-up**: a client that closes its connection frees its slot or its place in the
  queue, and the request counts as aborted;
- **/metrics**: ``vllm:num_requests_running`` and ``vllm:num_requests_waiting`` (one label set,
  ``model_name``), and ``process_start_time_seconds``.

What vLLM cannot do on demand, the double does when told: a 503 storm, a connection reset in
the middle of an answer, an answer that never ends, and a ``/metrics`` that is slow, wrong or
missing.

Time is the test's: a held request (``hold`` on, or true of the request) finishes only when
:meth:`release` says so; any other finishes as soon as it has a slot. Nothing here sleeps to
pass time.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import Endpoint

__all__ = ["EngineDouble", "Request", "echo_source", "running_double"]

BUSY_BODY = {"error": {"message": "The engine is currently busy, please try again later.",
                       "type": "Service Unavailable", "code": 503}}


def echo_source(prompt: str) -> str:
    """The text to translate: the official templates put it after the first blank line."""
    return prompt.split("\n\n", 1)[-1]


@dataclass
class Request:
    """One chat completion as the double saw it."""

    seq: int
    body: dict[str, Any]
    priority: int
    state: str = "waiting"  # waiting -> running -> finished | aborted | refused | reset
    started: int | None = None  # order in which it got a slot
    released: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def prompt(self) -> str:
        return str(self.body["messages"][-1]["content"])

    @property
    def n(self) -> int:
        """Answers asked for: what the request counts against the admission cap."""
        return max(1, int(self.body.get("n", 1)))


class EngineDouble:
    """A vLLM stand-in on 127.0.0.1 in a thread of its own (start with :func:`running_double`)."""

    def __init__(self, *, max_num_seqs: int = 2, max_queued: int = 4,
                 answer: Callable[[str], str] = echo_source,
                 hold: bool | Callable[[Request], bool] = False,
                 model: str = "double", api_key: str = "double-key") -> None:
        self.max_num_seqs = max_num_seqs
        self.max_queued = max_queued
        self.answer = answer
        self.hold = hold
        self.model = model
        self.api_key = api_key
        self.requests: list[Request] = []
        self.metrics_mode = "ok"  # ok | missing | garbage | lie | slow
        self.storm = 0  # the next N completions answer 503 at once
        self.reset_next = 0  # the next N completions lose their connection mid-answer
        self.never_end = False  # running requests never finish, whatever release says
        self.started_at = time.time()
        self.base_url = ""
        self.root = ""
        self._seq = itertools.count()
        self._starts = itertools.count()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._changed = threading.Condition()
        self._slow_metrics = asyncio.Event()

    # -- what the app is given -------------------------------------------------------------

    @property
    def endpoint(self) -> Endpoint:
        return Endpoint(self.base_url, self.api_key, self.model)

    def settings(self, **overrides: object) -> Settings:
        """Settings of an app that talks to the double (the same as ``Server.settings``)."""
        base = dict(base_url=self.base_url, api_key=self.api_key, model=self.model)
        return Settings(**{**base, **overrides})  # type: ignore[arg-type]

    def env(self) -> dict[str, str]:
        """An app process's environment pointing at the double."""
        return {**os.environ, "HYMT_BASE_URL": self.base_url, "HYMT_API_KEY": self.api_key,
                "HYMT_MODEL": self.model}

    # -- what the test reads ---------------------------------------------------------------

    @property
    def running(self) -> list[Request]:
        return [r for r in self.requests if r.state == "running"]

    @property
    def waiting(self) -> list[Request]:
        return [r for r in self.requests if r.state == "waiting"]

    def count(self, state: str) -> int:
        return sum(1 for r in self.requests if r.state == state)

    @property
    def prompts(self) -> list[str]:
        return [r.prompt for r in self.requests]

    def wait_for(self, predicate: Callable[[EngineDouble], bool], what: str,
                 timeout: float = 60.0) -> None:
        """Block until *predicate* holds (checked on every change of state, never by a clock's
        tick); generous and bounded: a host too busy to get there in *timeout* fails loudly."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate(self):
                left = deadline - time.monotonic()
                if left <= 0:
                    states = [(r.seq, r.state, r.priority) for r in self.requests]
                    raise AssertionError(f"engine double: timed out waiting for {what}: {states}")
                self._changed.wait(left)

    async def until(self, predicate: Callable[[EngineDouble], bool], what: str,
                    timeout: float = 60.0) -> None:
        """:meth:`wait_for` from a test's event loop, without blocking it."""
        await asyncio.to_thread(self.wait_for, predicate, what, timeout)

    # -- what the test does ----------------------------------------------------------------

    def release(self, count: int = 1) -> None:
        """Let the *count* earliest-started running requests finish."""
        self._call(self._release, count)

    def release_all(self) -> None:
        self._call(self._release, len(self.requests))

    def set_hold(self, hold: bool | Callable[[Request], bool]) -> None:
        """Turn holding on or off; off also lets every held request finish."""
        self.hold = hold
        if not hold:
            self.release_all()

    def finish_slow_metrics(self) -> None:
        """Let every ``/metrics`` scrape held by the ``slow`` mode answer."""
        self._call(self._slow_metrics.set)

    # -- the server ------------------------------------------------------------------------

    def _call(self, fn: Callable[..., Any], *args: Any) -> None:
        assert self._loop is not None, "the double is not running"
        done: Future[None] = Future()

        def run() -> None:
            try:
                fn(*args)
                done.set_result(None)
            except BaseException as err:  # noqa: BLE001 - handed back to the caller
                done.set_exception(err)

        self._loop.call_soon_threadsafe(run)
        done.result(timeout=30)

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def _release(self, count: int) -> None:
        for req in sorted(self.running, key=lambda r: r.started or 0)[:count]:
            req.released.set()

    def _admit(self) -> None:
        """Give free slots to the waiting requests, lowest priority value first."""
        free = self.max_num_seqs - len(self.running)
        for req in sorted(self.waiting, key=lambda r: (r.priority, r.seq))[:max(free, 0)]:
            req.state = "running"
            req.started = next(self._starts)
            if not self._holds(req) and not self.never_end:
                req.released.set()
        self._notify()

    def _holds(self, req: Request) -> bool:
        return self.hold(req) if callable(self.hold) else self.hold

    def _done(self, req: Request, state: str) -> None:
        req.state = state
        self._admit()

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        if self.api_key and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return web.json_response({"error": {"message": "Unauthorized"}}, status=401)
        body = await request.json()
        req = Request(next(self._seq), body, int(body.get("priority", 0)))
        self.requests.append(req)
        if self.storm > 0:
            self.storm -= 1
            self._done(req, "refused")
            return web.json_response(BUSY_BODY, status=503)
        if sum(r.n for r in (*self.running, *self.waiting)) > self.max_queued:
            self._done(req, "refused")
            return web.json_response(BUSY_BODY, status=503)
        self._admit()
        try:
            await req.released.wait()
            while self.never_end:  # an answer that never comes: only a hang-up ends it
                await asyncio.Event().wait()
        except asyncio.CancelledError:  # the client hung up (handler_cancellation)
            self._done(req, "aborted")
            raise
        if self.reset_next > 0:
            self.reset_next -= 1
            self._done(req, "reset")
            return await self._reset_mid_answer(request)
        try:
            contents = [self.answer(req.prompt) for _ in range(req.n)]
        except Exception as err:  # noqa: BLE001 - a scripted failure: HTTP 500
            self._done(req, "finished")
            return web.json_response({"error": {"message": str(err), "code": 500}}, status=500)
        self._done(req, "finished")
        tokens = sum(max(1, len(content.split())) for content in contents)
        return web.json_response({
            "id": f"chatcmpl-double-{req.seq}", "object": "chat.completion",
            "created": int(time.time()), "model": self.model,
            "choices": [{"index": i, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}
                        for i, content in enumerate(contents)],
            "usage": {"prompt_tokens": len(req.prompt.split()), "completion_tokens": tokens,
                      "total_tokens": len(req.prompt.split()) + tokens},
        })

    async def _reset_mid_answer(self, request: web.Request) -> web.StreamResponse:
        """Headers and half a body, then the connection is cut."""
        response = web.StreamResponse(status=200, headers={"Content-Type": "application/json",
                                                           "Content-Length": "4096"})
        await response.prepare(request)
        await response.write(b'{"id": "chatcmpl-double", "choices": [')
        assert request.transport is not None
        request.transport.abort()
        return response

    async def _metrics(self, request: web.Request) -> web.Response:
        mode = self.metrics_mode
        if mode == "missing":
            return web.Response(status=404, text="Not Found")
        if mode == "garbage":
            return web.Response(text="<html>a proxy's page</html>\n")
        if mode == "slow":
            await self._slow_metrics.wait()
        running, waiting = len(self.running), len(self.waiting)
        if mode == "lie":
            running, waiting = -3, float("nan")  # type: ignore[assignment]
        label = f'{{engine="0",model_name="{self.model}"}}'
        text = (
            "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
            "# TYPE vllm:num_requests_running gauge\n"
            f"vllm:num_requests_running{label} {float(running)}\n"
            "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n"
            "# TYPE vllm:num_requests_waiting gauge\n"
            f"vllm:num_requests_waiting{label} {float(waiting)}\n"
            "# HELP process_start_time_seconds Start time of the process since unix epoch.\n"
            "# TYPE process_start_time_seconds gauge\n"
            f"process_start_time_seconds {self.started_at}\n"
        )
        return web.Response(text=text, content_type="text/plain")

    async def _models(self, request: web.Request) -> web.Response:
        if self.api_key and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return web.json_response({"error": {"message": "Unauthorized"}}, status=401)
        return web.json_response({"object": "list", "data": [{
            "id": self.model, "object": "model", "root": self.model, "owned_by": "vllm",
            "max_model_len": 4096}]})

    async def _health(self, request: web.Request) -> web.Response:
        return web.Response(status=200)

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._completions)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/health", self._health)
        return app


@contextlib.contextmanager
def running_double(double: EngineDouble | None = None, *, port: int = 0,
                   **options: Any) -> Iterator[EngineDouble]:
    """Serve *double* (or a new one made with *options*) until the block ends: on a free port,
    or on *port* for a test whose app was told the model's address before the model is up
    (warming up, down and back)."""
    engine = double or EngineDouble(**options)
    loop = asyncio.new_event_loop()
    ready: Future[web.AppRunner] = Future()

    async def start() -> None:
        # handler_cancellation: a client that hangs up cancels its handler, as vLLM aborts.
        runner = web.AppRunner(engine.app(), handler_cancellation=True, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", port)
        await site.start()
        bound = runner.addresses[0][1]
        engine.root = f"http://127.0.0.1:{bound}"
        engine.base_url = f"{engine.root}/v1"
        ready.set_result(runner)

    def serve() -> None:
        asyncio.set_event_loop(loop)
        engine._loop = loop
        engine._slow_metrics = asyncio.Event()
        loop.run_until_complete(start())
        loop.run_forever()

    thread = threading.Thread(target=serve, name="engine-double", daemon=True)
    thread.start()
    runner = ready.result(timeout=30)
    try:
        yield engine
    finally:
        engine.never_end = False
        engine._call(engine._slow_metrics.set)
        engine.release_all()
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        loop.close()


def completion_json(content: str) -> str:
    """A chat completion's JSON, as the double answers it (for tests that build one)."""
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]})
