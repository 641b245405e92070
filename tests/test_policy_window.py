"""The adaptive window: shrinks on 503, grows back on success, bounds concurrency.

A fake async callable stands in for the model because these tests check scheduling logic
(timing, counting, ordering); the tests against a real vLLM server are separate.
"""

from __future__ import annotations

import asyncio

import pytest
import stamina

from hymt_chat.engine.policy import Policy, policy_for, segment_parallelism
from hymt_chat.errors import ModelBusyError, ModelError, ModelUnavailableError
from hymt_chat.settings import Settings


async def ok() -> str:
    return "ok"


async def busy() -> str:
    raise ModelBusyError("busy")


async def fail_together(policy: Policy, n: int, error: type[Exception]) -> None:
    """Start n calls at once (all in the window), then make all of them fail."""
    gate = asyncio.Event()

    async def call() -> str:
        await gate.wait()
        raise error("boom")

    tasks = [asyncio.create_task(policy.run(call, user=f"u{i}")) for i in range(n)]
    await asyncio.sleep(0.01)
    assert policy.in_flight == n
    gate.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(isinstance(r, error) for r in results)


async def test_window_starts_at_max() -> None:
    assert Policy(window_max=6).window == 6


async def test_simultaneous_503s_halve_the_window_once() -> None:
    policy = Policy(window_max=8, retries=False)
    await fail_together(policy, 8, ModelBusyError)
    # Eight 503s from one burst are one congestion signal: 8 -> 4, not 8 -> 1.
    assert policy.window == 4
    assert policy.in_flight == 0


async def test_503_shrinks_to_what_was_in_flight_and_respects_the_floor() -> None:
    policy = Policy(window_max=8, window_min=2, retries=False)
    with pytest.raises(ModelBusyError):
        await policy.run(busy, user="a")  # one call in flight got a 503: 1 // 2 -> floor 2
    assert policy.window == 2


async def test_window_grows_back_additively_after_window_successes() -> None:
    policy = Policy(window_max=8, retries=False)
    await fail_together(policy, 8, ModelBusyError)
    assert policy.window == 4
    for expected_after, needed in [(5, 4), (6, 5), (7, 6), (8, 7)]:
        for _ in range(needed - 1):
            await policy.run(ok, user="a")
        assert policy.window == expected_after - 1  # one success short: not yet
        await policy.run(ok, user="a")
        assert policy.window == expected_after
    for _ in range(20):
        await policy.run(ok, user="a")
    assert policy.window == 8  # capped at window_max


async def test_a_503_resets_the_success_streak() -> None:
    policy = Policy(window_max=8, retries=False)
    await fail_together(policy, 8, ModelBusyError)  # window 4
    for _ in range(3):
        await policy.run(ok, user="a")
    with pytest.raises(ModelBusyError):
        await policy.run(busy, user="a")  # 1 in flight: 4 -> 1 (floor 1)
    assert policy.window == 1
    await policy.run(ok, user="a")
    assert policy.window == 2


async def test_unavailable_and_model_errors_leave_the_window_alone() -> None:
    policy = Policy(window_max=8, retries=False)
    await fail_together(policy, 8, ModelUnavailableError)
    await fail_together(policy, 8, ModelError)
    assert policy.window == 8


async def test_concurrency_never_exceeds_the_window() -> None:
    policy = Policy(window_max=3, retries=False)
    running = peak = 0
    violations: list[tuple[int, int]] = []

    async def call() -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        if running > policy.window or policy.in_flight > policy.window:
            violations.append((running, policy.window))
        await asyncio.sleep(0.005)
        running -= 1
        return "ok"

    results = await asyncio.gather(*(policy.run(call, user=f"u{i % 4}") for i in range(40)))
    assert results == ["ok"] * 40
    assert violations == []
    assert peak == 3  # and the window was actually used
    assert policy.in_flight == 0 and policy.queue_length == 0


async def test_a_shrunk_window_admits_fewer_calls() -> None:
    policy = Policy(window_max=8, retries=False)
    await fail_together(policy, 8, ModelBusyError)
    await fail_together(policy, 4, ModelBusyError)  # 4 in flight at the 503 -> 2
    assert policy.window == 2
    running = peak = 0

    async def call() -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.005)
        running -= 1
        return "ok"

    # Few enough calls that the window cannot grow past 3 meanwhile (2 + 3 successes needed).
    await asyncio.gather(*(policy.run(call, user="a") for i in range(4)))
    assert peak == 2


async def test_segment_parallelism_follows_the_window() -> None:
    policy = Policy(window_max=8, retries=False)
    assert segment_parallelism(policy, 4) == 4
    await fail_together(policy, 8, ModelBusyError)
    await fail_together(policy, 4, ModelBusyError)
    assert policy.window == 2
    assert segment_parallelism(policy, 4) == 2
    assert segment_parallelism(policy, 0) == 1


def test_window_bounds_are_checked() -> None:
    with pytest.raises(ValueError):
        Policy(window_max=2, window_min=3)
    with pytest.raises(ValueError):
        Policy(window_min=0)


def test_a_policy_is_built_from_its_own_settings() -> None:
    settings = Settings(window_max=5, window_min=2, deadline=30.0, retries=False)
    try:
        policy = policy_for(settings)
        assert policy is not policy_for(settings)  # no process-wide one: a Runtime holds it
        assert policy.window == 5 and policy_for(Settings(window_max=3)).window == 3
        # Policy events are the one observability channel: stamina's own log lines are off.
        assert stamina.instrumentation.get_on_retry_hooks() == ()
    finally:
        stamina.instrumentation.set_on_retry_hooks(None)


async def _hold(policy: Policy, n: int, klass: str) -> tuple[list[asyncio.Task[str]], asyncio.Event]:
    """*n* calls of *klass* that stay in flight until the event is set."""
    gate = asyncio.Event()

    async def call() -> str:
        await gate.wait()
        return "ok"

    tasks = [asyncio.create_task(policy.run(call, user=f"u{i}", klass=klass)) for i in range(n)]
    for _ in range(1000):  # loop turns, not time: each call in flight or queued
        if policy.in_flight + policy.queue_length == n:
            break
        await asyncio.sleep(0)
    return tasks, gate


async def test_live_calls_lead_the_window_into_the_engines_queue_documents_never() -> None:
    """The lead: live calls beyond the engine's slots wait in its own (priority) queue, so a
    batch that ends has its successors there; background work stays within the window less
    the reserve, and a window a 503 cut has no lead until it is whole again."""
    policy = Policy(window_max=4, lead=2, reserve=1, retries=False)
    live, gate = await _hold(policy, 8, "interactive")
    assert (policy.in_flight, policy.queue_length) == (6, 2)  # 4 slots + a lead of 2
    gate.set()
    assert await asyncio.gather(*live) == ["ok"] * 8
    documents, gate = await _hold(policy, 8, "bulk")
    assert (policy.in_flight, policy.queue_length) == (3, 5)  # the window less the reserve
    gate.set()
    await asyncio.gather(*documents)
    await fail_together(policy, 4, ModelBusyError)  # a 503: 4 -> 2
    assert policy.window == 2
    live, gate = await _hold(policy, 4, "interactive")
    assert policy.in_flight == 2  # congestion: no lead on top
    gate.set()
    await asyncio.gather(*live)
    with pytest.raises(ValueError):
        Policy(lead=-1)


def test_the_lead_is_a_quarter_of_the_engines_slots_unless_the_window_is_fixed() -> None:
    try:
        gpu = Settings(base_url="http://gpu:8000/v1", profile="h100")
        assert (policy_for(gpu).window_max, policy_for(gpu).lead) == (64, 16)
        assert policy_for(Settings(window_max=64)).lead == 0  # fixed means fixed
        assert policy_for(Settings(window_max=64, window_lead=3)).lead == 3  # asked for
        assert policy_for(Settings(window_max=3, window_lead=None)).lead == 0
        assert policy_for(Settings(base_url="http://cpu:8000/v1")).lead == 0  # 2 slots
        cpu = Settings(base_url="http://cpu:8000/v1", profile="cpu")
        assert (policy_for(cpu).window_max, policy_for(cpu).lead) == (4, 0)
    finally:
        stamina.instrumentation.set_on_retry_hooks(None)
