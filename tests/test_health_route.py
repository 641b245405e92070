"""GET /health is ours (not Chainlit's {"status":"ok"}), tells the model's state; the page loads.

Runs the real app (``chainlit run app.py -h``) against a closed port, then a sidecar state file,
then a stand-in server; no vLLM and no browser needed. Anyone may ask ``/health``: it says the
state in words and never where the model server lives (its address goes to the log).
"""

import asyncio
import json
import re
import time

import httpx
import pytest

from hymt_chat.errors import METRICS_DOWN, METRICS_MISSING
from hymt_chat.service.health import Probe, health_response, is_demo_model, model_state
from hymt_chat.service.readiness import Readiness
from hymt_chat.settings import Settings
from tests.support.chainlit_app import app_env, running_app
from tests.support.ports import free_port as _free_port
from tests.support.stub_model import StubModel

_ADDRESS = re.compile(r"https?://|127\.0\.0\.1|localhost|/metrics|/v1")


def _health_with_problem(url: str) -> httpx.Response:
    """/health once the window has read the model server's metrics at least once (a reading
    a second: the bound is a safety net, not a speed)."""
    deadline = time.monotonic() + 120
    while True:
        response = httpx.get(f"{url}/health", timeout=30)
        if "problem" in response.json()["window"] or time.monotonic() > deadline:
            return response
        time.sleep(0.1)


def _no_address(response: httpx.Response, *ports: int) -> None:
    assert not _ADDRESS.search(response.text), response.text
    for port in ports:
        assert str(port) not in response.text, response.text


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("health")
    model_port, sidecar_port = _free_port(), _free_port()
    env = app_env(
        HYMT_BASE_URL=f"http://127.0.0.1:{model_port}/v1", HYMT_API_KEY="k",
        HYMT_CACHE_DIR=str(tmp / "cache"), HYMT_PORT=str(sidecar_port),
    )
    state_file = tmp / "cache" / "run" / f"sidecar-{sidecar_port}.json"
    with running_app(env, _free_port(), tmp / "app.log") as url:
        yield url, model_port, state_file


def test_health_is_503_from_our_route_when_the_model_is_down(app):
    url, _, _ = app
    response = httpx.get(f"{url}/health", timeout=10)
    assert response.status_code == 503
    body = response.json()
    assert (body["status"], body["vllm"]) == ("unavailable", "down")
    # A server reached by URL, never read: the safe window (2, not the old 8), and why.
    assert {k: body["window"][k] for k in ("max", "reserve", "in_flight", "origin")} == {
        "max": 2, "reserve": 1, "in_flight": 0, "origin": "safe default"}


def test_health_says_a_model_that_is_down_in_words_with_no_address(app):
    url, model_port, _ = app
    response = _health_with_problem(url)
    assert response.status_code == 503
    assert response.json()["window"]["problem"] == METRICS_DOWN
    _no_address(response, model_port)


def test_health_reports_a_starting_sidecar(app):
    url, _, state_file = app
    state_file.parent.mkdir(parents=True, exist_ok=True)
    state_file.write_text(json.dumps({"base_url": "http://127.0.0.1:9/v1", "api_key": "k",
                                      "state": "starting"}))
    try:
        response = httpx.get(f"{url}/health", timeout=10)
        assert response.status_code == 503
        assert response.json()["vllm"] == "starting"
        _no_address(response)
    finally:
        state_file.unlink()


def test_health_says_missing_metrics_in_words_and_logs_where(tmp_path):
    """A model server that answers but has no /metrics (a proxy, another server): /health
    says so with no address; the log has the page's address and its answer."""
    with StubModel() as stub:  # /metrics: 404
        env = app_env(HYMT_BASE_URL=stub.base_url, HYMT_API_KEY="k",
                      HYMT_CACHE_DIR=str(tmp_path / "cache"), HYMT_PORT=str(_free_port()))
        log = tmp_path / "app.log"
        with running_app(env, _free_port(), log) as url:
            response = _health_with_problem(url)
            assert response.status_code == 200 and response.json()["vllm"] == "ready"
            assert response.json()["window"]["problem"] == METRICS_MISSING
            _no_address(response, stub.port)
    assert f"{stub.base_url.removesuffix('/v1')}/metrics answered HTTP 404" in log.read_text()


async def test_health_answers_while_the_probe_hangs():
    """A server that takes the connection and never answers: the probe waits its own timeout
    (a busy server is slow, not down), /health does not; it says the last state known."""
    hung = asyncio.Event()

    async def probe() -> Probe:
        await hung.wait()
        return Probe("ready")

    readiness = Readiness(probe)
    first = asyncio.create_task(readiness.answer_within(0.05))
    await asyncio.sleep(0)  # it has asked the probe, with nothing known yet
    readiness.state = "down"  # known now (the background poll's last answer)
    assert await asyncio.wait_for(readiness.answer_within(0.05), 60) == "down"
    assert not first.done()  # nothing was known when it asked: it waits for the probe
    hung.set()
    assert await asyncio.wait_for(first, 60) == "ready"
    assert await asyncio.wait_for(readiness.answer_within(60), 60) == "ready"


def test_the_page_and_its_assets_still_load(app):
    url, _, _ = app
    page = httpx.get(f"{url}/", timeout=10)
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "hymt-chat" in page.text  # the product name from .chainlit/config.toml
    thread = httpx.get(f"{url}/thread/abc", timeout=10)  # Chainlit's catch-all still works
    assert thread.status_code == 200 and "text/html" in thread.headers["content-type"]
    for path, kind in (("/favicon", "image/png"), ("/logo?theme=light", "image/png"),
                       ("/logo?theme=dark", "image/png"), ("/public/style.css", "text/css"),
                       ("/public/banner.js", "javascript")):
        asset = httpx.get(f"{url}{path}", timeout=10)
        assert asset.status_code == 200, path
        assert kind in asset.headers["content-type"], path
    status = httpx.get(f"{url}/hymt/status", timeout=10).json()
    assert status["vllm"] == "down" and status["demo"] is False  # nothing listens there now


# --- the pure parts ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ok", "sidecar", "state"),
    [(True, None, "ready"), (True, "restarting", "ready"), (False, "starting", "starting"),
     (False, "restarting", "restarting"), (False, "ready", "down"), (False, None, "down"),
     (False, "stopped", "down")],
)
def test_model_state(ok, sidecar, state):
    assert model_state(ok, sidecar) == state


def test_health_response_bodies():
    assert health_response("ready") == (200, {"status": "ok", "vllm": "ready"})
    assert health_response("restarting") == (503, {"status": "unavailable", "vllm": "restarting"})


def test_demo_model_detection(monkeypatch, tmp_path):
    settings = Settings(cache_dir=tmp_path)
    monkeypatch.delenv("HYMT_DEMO_MODEL", raising=False)
    assert is_demo_model(settings, str(settings.demo_model_dir))
    assert is_demo_model(settings, "/elsewhere/Qwen2.5-Coder-0.5B-Instruct")
    assert not is_demo_model(settings, "tencent/Hunyuan-MT-7B")
    assert not is_demo_model(settings, None)
    monkeypatch.setenv("HYMT_DEMO_MODEL", "1")
    assert is_demo_model(settings, "tencent/Hunyuan-MT-7B")
    monkeypatch.setenv("HYMT_DEMO_MODEL", "0")
    assert not is_demo_model(settings, str(settings.demo_model_dir))
