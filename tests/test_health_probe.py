"""One probe (sidecar.probe.HealthCheck) answers for GET /health, the warm-up wait and the
supervisor: vLLM's /health decides; a server without one is asked for its keyed /v1/models.

vLLM always has a /health, so a server whose /health is missing (404) or keyed (401) is played
by a tiny real HTTP server here; everything else is the real probe over real HTTP.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from hymt_chat.service.health import probe_model
from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import Endpoint
from hymt_chat.sidecar.probe import HealthCheck
from hymt_chat.sidecar.supervisor import Supervisor
from tests.support.ports import free_port


@contextmanager
def server(health: int, models: int, key: str = "k",
           ready: int = 404) -> Iterator[tuple[Endpoint, list[str]]]:
    """GET /health answers *health*; GET /v1/models answers *models* with the right key, 401
    without it; GET /readiness *ready* (404 like vLLM's). Yields the endpoint and the paths
    asked, in order."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            if self.path == "/health":
                status = health
            elif self.path == "/readiness":
                status = ready
            elif self.path == "/v1/models":
                status = models if self.headers.get("Authorization") == f"Bearer {key}" else 401
            else:
                status = 404
            body = b'{"data": [{"id": "m", "root": "/models/m"}]}' if status == 200 else b"{}"
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield Endpoint(f"http://127.0.0.1:{httpd.server_port}/v1", key, "m"), asked
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_router_with_no_healthy_replica_is_not_ready_for_the_app():
    """vllm-router 0.1.17 answers /health 200 with every replica gone; /readiness says 503."""
    with server(200, 200, ready=503) as (endpoint, asked):
        assert HealthCheck.of(endpoint)() is False
        assert asked == ["/readiness"]
    with server(200, 200, ready=200) as (endpoint, asked):
        assert HealthCheck.of(endpoint)() is True
        assert asked == ["/readiness"]
    with server(503, 200, ready=200) as (endpoint, asked):  # one of its replicas is down
        assert HealthCheck.of(endpoint)() is True


@pytest.mark.parametrize(("health", "models", "app", "supervisor"), [
    (200, 500, True, True),     # vLLM up: /health alone decides
    (500, 200, False, False),   # a real /health failing: the engine is down, whatever /models says
    (503, 200, False, False),
    (404, 200, True, False),    # no /health (not vLLM): the keyed /v1/models decides for the app
    (401, 200, True, False),    # /health behind a keyed gateway
    (404, 503, False, False),
])
def test_the_app_and_the_supervisor_read_the_same_answers(health, models, app, supervisor):
    with server(health, models) as (endpoint, _):
        assert HealthCheck.of(endpoint)() is app
        assert HealthCheck(f"{endpoint.root}/health")() is supervisor


async def test_the_async_driver_asks_the_same_requests_in_the_same_order():
    with server(404, 200) as (endpoint, asked):
        async with httpx.AsyncClient(timeout=3) as http:
            assert await HealthCheck.of(endpoint).ask(http) is True
        assert asked == ["/readiness", "/health", "/v1/models"]
        asked.clear()
        assert HealthCheck.of(endpoint)() is True
        assert asked == ["/readiness", "/health", "/v1/models"]


def test_the_fallback_sends_the_key():
    with server(404, 200, key="right") as (endpoint, _):
        assert HealthCheck.of(endpoint)() is True
        wrong = Endpoint(endpoint.base_url, "wrong")
        assert HealthCheck.of(wrong)() is False


async def test_a_closed_port_is_false_blocking_and_an_http_error_async():
    port = free_port()
    check = HealthCheck.of(Endpoint(f"http://127.0.0.1:{port}/v1", "k"))
    assert check(timeout=1.0) is False
    async with httpx.AsyncClient(timeout=1.0) as http:
        with pytest.raises(httpx.HTTPError):
            await check.ask(http)


async def test_get_health_and_the_supervisor_go_through_the_one_probe(tmp_path):
    with server(404, 200) as (endpoint, asked):
        settings = Settings(base_url=endpoint.base_url, api_key=endpoint.api_key,
                            cache_dir=tmp_path)
        probe = await probe_model(settings, with_model=True)
        assert (probe.state, probe.model_root) == ("ready", "/models/m")
        assert asked[:3] == ["/readiness", "/health", "/v1/models"]
        supervisor = Supervisor(None, health_url=f"{endpoint.root}/health",  # type: ignore[arg-type]
                                log_path=tmp_path / "log")
        assert supervisor.healthy() is False  # it launched vLLM: a missing /health is not health
    with server(200, 500) as (endpoint, _):
        supervisor = Supervisor(None, health_url=f"{endpoint.root}/health",  # type: ignore[arg-type]
                                log_path=tmp_path / "log")
        assert supervisor.healthy() is True


async def test_a_server_that_takes_the_connection_and_never_answers_is_slow_a_closed_one_not(
        tmp_path):
    """Timed out (busy) and refused (down) are told apart: the readiness waiter keeps a model
    that answered before "ready" through a slow check (tests/test_readiness.py)."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()  # accepts (the kernel's backlog), never answers
    try:
        port = listener.getsockname()[1]
        settings = Settings(base_url=f"http://127.0.0.1:{port}/v1", api_key="k",
                            cache_dir=tmp_path)
        hung = await probe_model(settings, timeout=0.3)
        assert (hung.state, hung.slow) == ("down", True)
    finally:
        listener.close()
    closed = await probe_model(Settings(base_url=f"http://127.0.0.1:{free_port()}/v1",
                                        api_key="k", cache_dir=tmp_path), timeout=0.3)
    assert (closed.state, closed.slow) == ("down", False)
