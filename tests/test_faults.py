"""Faults the real server cannot play on demand: 500, malformed JSON, endless 503, a stall.

Why a fake server: vLLM answers 500 or broken JSON only on internal bugs, never sends
Retry-After, and cannot be told to stall one response, so each fault here is played by a tiny
HTTP server on 127.0.0.1 (tests/support/fake_server.py). Everything on our side is real: the
Translator, the Policy, the ModelClient (the openai SDK on aiohttp) over a real socket. The
behaviours a real vLLM does produce are pinned against it once: 503 under its cap and abort on
hang-up in test_engine_contract.py, a SIGKILL and the Supervisor's restart in test_e2e_scale.py.
"""

from __future__ import annotations

import email.utils
import time

import pytest

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy, PolicyEvent
from hymt_chat.engine.translator import Translator
from hymt_chat.errors import (
    ModelBusyError,
    ModelError,
    ModelTimeoutError,
    ModelUnavailableError,
)
from hymt_chat.settings import Settings
from tests.support.fake_server import BUSY, OK, Reply, busy, fake_server
from tests.support.ports import free_port
from tests.support.stub_model import StubModel

FRENCH = "Bonjour, je voudrais réserver une table pour deux personnes ce soir."
SLACK = 10.0  # past a deadline: "stopped there, not much later" on a busy 2-core machine


def _translator(base_url: str, **overrides: object) -> tuple[Translator, Policy]:
    settings = Settings(base_url=base_url, api_key="test", model="fake", **overrides)
    policy = Policy(deadline=settings.deadline)
    return Translator(settings, ModelClient(settings), policy), policy


async def _fails(translator: Translator, events: list[PolicyEvent] | None = None):
    """Translate FRENCH, expecting a failure: (the error, seconds it took)."""
    started = time.monotonic()
    with pytest.raises(ModelError) as info:
        await translator.translate(FRENCH, "en", on_event=events.append if events is not None
                                   else None)
    return info.value, time.monotonic() - started


def _no_leak(policy: Policy) -> None:
    assert policy.in_flight == 0 and policy.queue_length == 0


async def test_http_500_is_a_clear_error_and_not_retried():
    with fake_server(Reply(500, b'{"error": {"message": "boom", "code": 500}}')) as fake:
        translator, policy = _translator(fake.base_url)
        err, seconds = await _fails(translator)
    assert type(err) is ModelError  # not busy/unavailable: nothing the policy retries
    assert str(err) == "The model server failed (HTTP 500)."
    assert len(fake.calls) == 1 and seconds < SLACK
    _no_leak(policy)


@pytest.mark.parametrize("status", [502, 504])
async def test_a_gateway_that_lost_its_upstream_is_retried(status):
    """vllm-router or an ingress in front: 502/504 means the replica went away, not that the
    request is bad; the retry goes to another replica (here: the same fake, answering now)."""
    with fake_server(Reply(status, b"upstream gone"), OK) as fake:
        translator, policy = _translator(fake.base_url)
        events: list[PolicyEvent] = []
        result = await translator.translate(FRENCH, "en", on_event=events.append)
    assert result.text == "ok" and len(fake.calls) == 2
    assert [e.error for e in events if e.kind == "retrying"] == ["unavailable"]
    _no_leak(policy)


@pytest.mark.parametrize("body", [b"{not json", b"", b"<html>Bad Gateway</html>"],
                         ids=["truncated", "empty", "html"])
async def test_malformed_json_is_a_clear_error_and_not_retried(body):
    with fake_server(Reply(200, body)) as fake:
        translator, policy = _translator(fake.base_url)
        err, seconds = await _fails(translator)
    assert type(err) is ModelError
    assert "not valid JSON" in str(err), str(err)
    assert len(fake.calls) == 1 and seconds < SLACK
    _no_leak(policy)


@pytest.mark.parametrize("body", [b'{"id": "x"}', b'{"choices": []}', b"[1, 2]", b"null",
                                  b'{"choices": [{"message": {"content": null}}]}',
                                  b'{"choices": [{"message": {"content": 5}}]}'],
                         ids=["no-choices", "empty-choices", "list", "null", "null-content",
                              "number-content"])
async def test_json_of_the_wrong_shape_is_a_clear_error(body):
    with fake_server(Reply(200, body)) as fake:
        translator, policy = _translator(fake.base_url)
        err, _ = await _fails(translator)
    assert type(err) is ModelError
    assert str(err).startswith("The model server sent an "), str(err)
    assert len(fake.calls) == 1
    _no_leak(policy)


async def test_503_storm_outlasting_the_deadline_gives_up_at_the_deadline():
    with fake_server(BUSY) as fake:
        translator, policy = _translator(fake.base_url, deadline=2.0)
        events: list[PolicyEvent] = []
        err, seconds = await _fails(translator, events)
    assert isinstance(err, ModelBusyError)
    assert str(err) == "The translation server is still busy after 2 s."
    assert 2.0 - 0.1 <= seconds <= 2.0 + SLACK  # it kept trying until the deadline, no longer
    assert len(fake.calls) >= 3  # backoff retried meanwhile...
    assert len(fake.calls) < 40  # ...without hammering the server
    assert [e.kind for e in events].count("retrying") == len(fake.calls) - 1
    assert events[-1].kind == "gave_up" and events[-1].error == "busy (503)"
    _no_leak(policy)


async def test_503_storm_with_retry_after_is_paced_by_the_server():
    with fake_server(busy("1")) as fake:
        translator, policy = _translator(fake.base_url, deadline=2.5)
        err, seconds = await _fails(translator)
    assert isinstance(err, ModelBusyError)
    assert "still busy after 2 s" in str(err)  # 2.5 s, rounded for the user
    assert seconds <= 2.5 + SLACK
    gaps = [b - a for a, b in zip(fake.calls, fake.calls[1:])]
    assert 2 <= len(fake.calls) <= 3 and all(gap >= 0.95 for gap in gaps), gaps
    _no_leak(policy)


async def test_retry_after_longer_than_the_deadline_fails_at_once():
    with fake_server(busy("60")) as fake:
        translator, policy = _translator(fake.base_url, deadline=5.0)
        err, seconds = await _fails(translator)
    assert isinstance(err, ModelBusyError)
    assert "asks to wait 60 s" in str(err) and "longer than this message may wait" in str(err)
    assert "press" not in str(err)  # the core names no button: the chat page adds Retry
    assert err.retry_after == 60  # type: ignore[attr-defined] - the UI may offer a countdown
    assert len(fake.calls) == 1 and seconds < SLACK
    _no_leak(policy)


@pytest.mark.parametrize("header", ["1", "http-date"])
async def test_retry_after_then_success_delivers(header):
    # An HTTP date has one-second resolution and is written before the server, the translator
    # and langdetect's first load start: ask for 3 s so that well over 1 s remains at the call.
    value = email.utils.formatdate(time.time() + 3, usegmt=True) if header == "http-date" else "1"
    with fake_server(busy(value), OK) as fake:
        translator, policy = _translator(fake.base_url, deadline=10.0)
        result = await translator.translate(FRENCH, "en")
    assert result.text == "ok"
    assert len(fake.calls) == 2 and fake.calls[1] - fake.calls[0] >= 0.95
    _no_leak(policy)


async def test_a_stalled_server_is_retried_with_longer_timeouts_until_the_deadline():
    with fake_server(Reply(delay=30.0)) as fake:
        translator, policy = _translator(fake.base_url, request_timeout=0.5, deadline=3.0)
        events: list[PolicyEvent] = []
        err, _ = await _fails(translator, events)
    assert isinstance(err, ModelTimeoutError)
    assert str(err).startswith("The model did not answer within ")
    # 0.5 s, then 1 s, then 2 s: each try waited longer, none past the 3 s deadline's reach
    assert len(fake.calls) >= 2
    assert [e.kind for e in events if e.error == "timeout"].count("retrying") == len(fake.calls) - 1
    _no_leak(policy)


async def test_a_timed_out_call_is_retried_and_delivers():
    with fake_server(Reply(delay=0.6), OK) as fake:
        translator, policy = _translator(fake.base_url, request_timeout=0.3, deadline=30.0)
        result = await translator.translate(FRENCH, "en")
    assert result.text == "ok"
    assert len(fake.calls) == 2  # the slow one timed out (0.3 s) and the retry answered
    _no_leak(policy)


async def test_a_timed_out_paragraph_is_retried_as_two_halves():
    two = "Bonjour, ma commande n'est pas arrivée. Pourriez-vous vérifier le suivi du colis ?"
    with fake_server(Reply(delay=30.0), OK, OK) as fake:
        translator, policy = _translator(fake.base_url, request_timeout=0.5, deadline=30.0)
        events: list[PolicyEvent] = []
        result = await translator.translate(two, "en", on_event=events.append)
    assert result.text == "ok ok"  # each half translated on its own, the space between kept
    assert len(fake.calls) == 3
    assert ("retrying", "timeout (split)") in [(e.kind, e.error) for e in events]
    _no_leak(policy)


async def test_sidecar_down_at_app_start_gives_a_clear_error_at_the_deadline():
    closed = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    translator, policy = _translator(closed, deadline=2.0)
    events: list[PolicyEvent] = []
    err, seconds = await _fails(translator, events)
    assert isinstance(err, ModelUnavailableError)
    assert str(err) == (f"The translation server is still not reachable after 2 s "
                        f"({closed}: connection refused).")  # where it looked, and why
    assert 2.0 - 0.1 <= seconds <= 2.0 + SLACK
    retrying = [e for e in events if e.kind == "retrying"]
    assert retrying and all(e.error == "unavailable" for e in retrying)
    _no_leak(policy)


@pytest.mark.parametrize(("header", "expected"), [
    ("3", 3.0), ("garbage", None), ("", None), ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0),
])
def test_retry_after_header_is_read_or_ignored_never_fatal(header, expected):
    from hymt_chat.engine.client import _retry_after

    assert _retry_after({"retry-after": header} if header else {}) == expected


async def test_calls_go_through_the_environments_proxy_unless_no_proxy_exempts_the_host(
        monkeypatch):
    """The model client takes HTTP_PROXY and NO_PROXY from the environment as httpx does (the
    SDK's client trusts it): a model server behind a proxy is reached through it, a host that
    NO_PROXY exempts directly. The stand-in answers as the proxy (a plain HTTP proxy is sent
    the whole URL and answers for it)."""
    for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy",
                "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(key, raising=False)
    settings = Settings(base_url="http://model.invalid:8000/v1", api_key="test", model="fake")
    with StubModel(answer=lambda prompt: "Through the proxy.") as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        proxied = ModelClient(settings)
        answer = await proxied.complete("Translate into English:\n\nBonjour.", max_tokens=8)
        await proxied.aclose()
        assert answer == ["Through the proxy."] and len(proxy.requests) == 1
        monkeypatch.setenv("NO_PROXY", "model.invalid")
        direct = ModelClient(settings)
        with pytest.raises(ModelUnavailableError):  # .invalid never resolves
            await direct.complete("Translate into English:\n\nBonjour.", max_tokens=8)
        await direct.aclose()
        assert len(proxy.requests) == 1