"""Does the model server answer? The one probe behind ``GET /health``, the warm-up wait, the
doctor and the supervisor's watch.

The question is written once, as the GETs to send and how to read their answers
(:meth:`HealthCheck.steps`, a generator: it yields a GET and is sent the response); two
drivers of a few lines send them, one blocking (the supervisor's threads) and one async (the
app's event loop). So a change to what "healthy" means lands in every caller at once.
(:class:`RedisPing` is the one server here that speaks no HTTP.)
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass

import httpx

from hymt_chat.sidecar.endpoint import Endpoint

__all__ = ["HealthCheck", "RedisPing"]

# A /health that is absent, or behind a gateway that wants the key: the keyed /v1/models decides.
# (A 5xx from a real /health means the engine is down, whatever /v1/models says.)
_ASK_MODELS = frozenset({401, 403, 404, 405})

Get = tuple[str, dict[str, str]]  # url, headers (sent with the driver's client and timeout)
Steps = Generator[Get, httpx.Response, bool]


@dataclass(frozen=True, slots=True)
class HealthCheck:
    """vLLM's ``/health`` (no key needed); with *models_url*, a server without one is asked
    for its keyed ``/v1/models`` instead. Without it (the supervisor, which launched vLLM
    itself) only a 200 from ``/health`` counts.

    With *ready_url*, that is asked first. vllm-router (0.1.17, measured) answers ``/health``
    503 while any one replica is down (the app would call the model down with one of two
    replicas serving) and 200 with none listed; its ``/readiness`` is 200 while one replica is
    healthy, 503 "no healthy workers" otherwise. A server without one (vLLM: 404) goes on to
    ``/health``."""

    health_url: str
    models_url: str | None = None
    api_key: str = ""
    ready_url: str | None = None

    @classmethod
    def of(cls, endpoint: Endpoint) -> HealthCheck:
        """The check of a server the app talks to (it may be a router, or not vLLM at all:
        both fallbacks are on)."""
        return cls(f"{endpoint.root}/health", f"{endpoint.base_url}/models", endpoint.api_key,
                   f"{endpoint.root}/readiness")

    def steps(self) -> Steps:
        """The GETs to send, in order, and the verdict (the generator's return value)."""
        if self.ready_url is not None:
            ready = yield self.ready_url, {}
            if ready.status_code == 200:
                return True
            if ready.status_code not in _ASK_MODELS:
                return False  # a router with no healthy replica
        response = yield self.health_url, {}
        if response.status_code == 200:
            return True
        if self.models_url is None or response.status_code not in _ASK_MODELS:
            return False
        models = yield self.models_url, {"Authorization": f"Bearer {self.api_key}"}
        return models.status_code == 200

    def __call__(self, timeout: float = 2.0) -> bool:
        """Blocking: True when the server answers; any transport failure is False."""
        steps = self.steps()
        try:
            with httpx.Client(timeout=timeout) as http:
                url, headers = next(steps)
                while True:
                    url, headers = steps.send(http.get(url, headers=headers))
        except StopIteration as done:
            return bool(done.value)
        except httpx.HTTPError:
            return False

    async def ask(self, http: httpx.AsyncClient) -> bool:
        """Async, on the caller's client: True when the server answers; a transport failure
        raises ``httpx.HTTPError`` (the caller may want to tell it apart)."""
        steps = self.steps()
        try:
            url, headers = next(steps)
            while True:
                url, headers = steps.send(await http.get(url, headers=headers))
        except StopIteration as done:
            return bool(done.value)


@dataclass(frozen=True, slots=True)
class RedisPing:
    """Redis speaks its own protocol, not HTTP: healthy when ``PING`` is answered. Asked with
    redis-py (``limits[redis]`` brings it, and the app's limiter talks to Redis through it),
    not a socket of our own."""

    host: str
    port: int

    def __call__(self, timeout: float = 2.0) -> bool:
        import redis  # only `up --app-replicas` pings: the other callers never pay the import

        try:
            with redis.Redis(host=self.host, port=self.port, socket_timeout=timeout,
                             socket_connect_timeout=timeout) as client:
                return bool(client.ping())
        except redis.RedisError:  # refused, timed out, still loading, wants a password
            return False
