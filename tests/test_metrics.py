"""Prometheus metrics: isolated registries, policy events -> counters, translations, render()."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client.parser import text_string_to_metric_families

from hymt_chat.engine.policy import Policy, PolicyEvent
from hymt_chat.engine.translator import Translation, Translator
from hymt_chat.errors import (
    ModelBusyError,
    ModelTimeoutError,
    ModelUnavailableError,
    UnknownLanguageError,
)
from hymt_chat.service.metrics import Metrics, PolicyHook, outcome_of
from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import Endpoint, write_state

FAST = {"initial_delay": 0.002, "max_delay": 0.01}
BUSY = "busy (503)"


def _samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    body, content_type = metrics.render()
    assert content_type.startswith("text/plain")
    out = {}
    for family in text_string_to_metric_families(body.decode()):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def _value(metrics: Metrics, name: str, **labels: str) -> float:
    return _samples(metrics).get((name, tuple(sorted(labels.items()))), 0.0)


class FakeClient:
    """Answers "EN:<text>" after *busy* 503s; stands in for the model in translation tests."""

    def __init__(self, busy: int = 0, error: Exception | None = None) -> None:
        self.busy = busy
        self.error = error
        self.calls = 0

    async def complete(self, prompt: str, *, max_tokens: int, source: str, **_request) -> list[str]:
        self.calls += 1
        if self.error is not None:
            raise self.error
        if self.calls <= self.busy:
            raise ModelBusyError("The engine is currently busy")
        return [f"EN:{source}"]


def _translator(client: FakeClient, policy: Policy, deadline: float = 5) -> Translator:
    settings = Settings(base_url="http://unused/v1", api_key="k", model="m", deadline=deadline)
    return Translator(settings, client, policy)  # type: ignore[arg-type]


def test_each_metrics_object_has_its_own_registry():
    a, b = Metrics(), Metrics()
    a.observe_translation("fr", "en", "ok", 1.0)
    assert _value(a, "hymt_translations_total", source="fr", target="en", outcome="ok") == 1
    assert _value(b, "hymt_translations_total", source="fr", target="en", outcome="ok") == 0


def test_render_is_prometheus_text_with_every_metric():
    names = {f.name for f in text_string_to_metric_families(
        Metrics(policy=Policy()).render()[0].decode())}
    assert names >= {"hymt_translations", "hymt_translation_seconds", "hymt_retries",
                     "hymt_busy_503", "hymt_downgrades", "hymt_policy_window",
                     "hymt_policy_window_max", "hymt_policy_in_flight", "hymt_policy_queue_length", "hymt_sidecar_restarts"}


async def test_a_ceiling_moved_by_the_engine_s_metrics_is_no_downgrade():
    policy = Policy(window_max=4, **FAST)
    metrics = Metrics(policy=policy)
    translator = metrics.instrument(_translator(FakeClient(), policy))
    policy.resize(2)  # what engine/window.py does when requests wait inside vLLM
    await translator.translate("Bonjour tout le monde, comment allez-vous ?", "en", "fr")
    assert _value(metrics, "hymt_downgrades_total") == 0
    assert _value(metrics, "hymt_policy_window_max") == 2 == _value(metrics, "hymt_policy_window")


async def test_a_503_then_success_counts_retry_busy_and_downgrade():
    policy = Policy(window_max=4, **FAST)
    metrics = Metrics(policy=policy)
    translator = metrics.instrument(_translator(FakeClient(busy=1), policy))
    result = await translator.translate("Bonjour tout le monde, comment allez-vous ?", "en", "fr")
    assert result.text.startswith("EN:")
    assert _value(metrics, "hymt_retries_total", reason="busy") == 1
    assert _value(metrics, "hymt_busy_503_total") == 1
    assert _value(metrics, "hymt_downgrades_total") == 1  # the window was cut from 4
    assert _value(metrics, "hymt_policy_window") == policy.window < 4
    assert _value(metrics, "hymt_translations_total", source="fr", target="en", outcome="ok") == 1
    assert _value(metrics, "hymt_translation_seconds_count") == 1


async def test_giving_up_busy_counts_the_outcome_and_each_503_once():
    policy = Policy(window_max=2, deadline=0.05, **FAST)
    metrics = Metrics(policy=policy)
    translator = metrics.instrument(_translator(FakeClient(busy=10**6), policy, deadline=0.05))
    with pytest.raises(ModelBusyError):
        await translator.translate("Hola, ¿cómo estás hoy?", "en", "es")
    client_calls = translator.wrapped.client.calls
    assert _value(metrics, "hymt_busy_503_total") == client_calls  # one per 503 the server sent
    assert _value(metrics, "hymt_translations_total", source="es", target="en",
                  outcome="busy") == 1
    assert _value(metrics, "hymt_translation_seconds_count") == 0  # failures are not latency


def test_a_call_that_gives_up_in_the_queue_is_not_a_second_503():
    class StubPolicy:
        window = 4
        cuts = 0

    metrics = Metrics()
    hook = PolicyHook(metrics, StubPolicy())  # type: ignore[arg-type]

    async def call(events: list[PolicyEvent]) -> None:
        for event in events:
            hook(event)

    async def main() -> None:
        # Task 1: 503 on attempt 1 (retried), then the deadline runs out queued for attempt 2.
        await asyncio.create_task(call([
            PolicyEvent("started", attempt=1), PolicyEvent("retrying", attempt=1, error=BUSY),
            PolicyEvent("gave_up", attempt=2, error=BUSY)]))
        # Task 2: 503 on attempt 1 with no time left to retry: gives up on that attempt.
        await asyncio.create_task(call([
            PolicyEvent("started", attempt=1), PolicyEvent("gave_up", attempt=1, error=BUSY)]))

    asyncio.run(main())
    assert _value(metrics, "hymt_busy_503_total") == 2
    assert _value(metrics, "hymt_retries_total", reason="busy") == 1


async def test_unavailable_retries_are_labelled_and_not_503s():
    policy = Policy(**FAST)
    metrics = Metrics(policy=policy)
    calls = 0

    async def flaky() -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise ModelUnavailableError("down")
        return "ok"

    assert await policy.run(flaky, user="u") == "ok"
    assert _value(metrics, "hymt_retries_total", reason="unavailable") == 1
    assert _value(metrics, "hymt_busy_503_total") == 0
    assert _value(metrics, "hymt_downgrades_total") == 0  # not congestion: the window stays


async def test_gauges_read_the_policy_live():
    policy = Policy(window_max=1, **FAST)
    metrics = Metrics(policy=policy)
    release = asyncio.Event()

    async def hold() -> str:
        await release.wait()
        return "ok"

    tasks = [asyncio.create_task(policy.run(hold, user=u)) for u in ("a", "b", "c")]
    await asyncio.sleep(0.01)
    assert _value(metrics, "hymt_policy_in_flight") == 1
    assert _value(metrics, "hymt_policy_queue_length") == 2
    assert _value(metrics, "hymt_policy_window") == 1
    release.set()
    await asyncio.gather(*tasks)
    assert _value(metrics, "hymt_policy_queue_length") == 0


async def test_translation_labels_are_bounded_and_outcomes_named():
    metrics = Metrics()

    class Stub:
        async def translate(self, text: str, target: str, source: str = "auto", **kw: object):
            if target == "klingon":
                raise UnknownLanguageError("Unknown language 'klingon'.")
            if text == "cancel":
                raise asyncio.CancelledError
            same = text == "same"
            return Translation(text, None if text == "unsure" else "en", "en", True, same, 1, 0.2)

    translator = metrics.instrument(Stub())  # type: ignore[arg-type]
    await translator.translate("hello", "English")
    await translator.translate("same", "en")
    await translator.translate("unsure", "en")
    with pytest.raises(UnknownLanguageError):
        await translator.translate("hi", "klingon", "auto")
    with pytest.raises(asyncio.CancelledError):
        await translator.translate("cancel", "en")
    assert _value(metrics, "hymt_translations_total", source="en", target="en", outcome="ok") == 1
    assert _value(metrics, "hymt_translations_total", source="en", target="en",
                  outcome="same_language") == 1
    assert _value(metrics, "hymt_translations_total", source="unsure", target="en",
                  outcome="ok") == 1
    assert _value(metrics, "hymt_translations_total", source="auto", target="other",
                  outcome="refused") == 1
    assert _value(metrics, "hymt_translations_total", source="auto", target="en",
                  outcome="cancelled") == 1
    assert _value(metrics, "hymt_translation_seconds_count") == 2


@pytest.mark.parametrize(("err", "outcome"), [
    (ModelBusyError("x"), "busy"), (ModelUnavailableError("x"), "unavailable"),
    (UnknownLanguageError("x"), "refused"), (RuntimeError("x"), "error"),
])
def test_outcome_of(err, outcome):
    assert outcome_of(err) == outcome


def test_sidecar_restarts_come_from_the_state_file(tmp_path):
    settings = Settings(cache_dir=tmp_path, port=9911, base_url=None)
    metrics = Metrics(settings)
    assert _value(metrics, "hymt_sidecar_restarts") == 0  # no sidecar yet
    write_state(settings, Endpoint("http://127.0.0.1:9911/v1", "k"), pid=1, state="ready",
                restarts=3)
    assert _value(metrics, "hymt_sidecar_restarts") == 3
    remote = Metrics(Settings(cache_dir=tmp_path, port=9911, base_url="http://gpu:8000/v1"))
    assert _value(remote, "hymt_sidecar_restarts") == 0  # not ours to count


def test_a_metrics_object_observes_one_policy():
    metrics = Metrics(policy=Policy())
    metrics.attach(metrics.policy)  # type: ignore[arg-type]  # the same one again is fine
    with pytest.raises(ValueError):
        metrics.attach(Policy())


async def test_timeout_retries_are_labelled_timeout():
    # Timeouts are retried for callers that widen each try (retry_timeouts); the label comes from
    # the one reason table, so a retried timeout is "timeout", not "other".
    policy = Policy(**FAST)
    metrics = Metrics(policy=policy)
    calls = 0

    async def slow_once() -> str:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise ModelTimeoutError("slow")
        return "ok"

    assert await policy.run(slow_once, user="u", retry_timeouts=True) == "ok"
    assert _value(metrics, "hymt_retries_total", reason="timeout") == 1
    assert _value(metrics, "hymt_retries_total", reason="other") == 0
