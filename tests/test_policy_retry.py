"""Retries: backoff until success, Retry-After, the deadline, what is never retried.

A fake async callable stands in for the model because these tests check scheduling logic
(timing, counting, ordering); the tests against a real vLLM server are separate.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from hymt_chat.engine.policy import Policy, PolicyEvent
from hymt_chat.errors import ModelBusyError, ModelError, ModelUnavailableError

FAST = {"initial_delay": 0.005, "max_delay": 0.02}


class Flaky:
    """Raises *error* the first *failures* times, then answers "ok"; records when it was called."""

    def __init__(self, failures: int, error: type[Exception] = ModelBusyError,
                 retry_after: float | None = None) -> None:
        self.failures = failures
        self.error = error
        self.retry_after = retry_after
        self.calls: list[float] = []

    async def __call__(self) -> str:
        self.calls.append(time.monotonic())
        if len(self.calls) <= self.failures:
            err = self.error("boom")
            if self.retry_after is not None:
                err.retry_after = self.retry_after  # type: ignore[attr-defined]
            raise err
        return "ok"


async def test_retry_succeeds_after_several_503s() -> None:
    policy = Policy(**FAST)
    call = Flaky(4)
    events: list[PolicyEvent] = []
    assert await policy.run(call, user="a", on_event=events.append) == "ok"
    assert len(call.calls) == 5
    retrying = [e for e in events if e.kind == "retrying"]
    assert [e.attempt for e in retrying] == [1, 2, 3, 4]
    assert all(e.error == "busy (503)" and 0 <= e.delay <= 0.02 for e in retrying)
    assert events[-1] == PolicyEvent("succeeded", attempt=5)
    assert policy.in_flight == 0


async def test_unavailable_is_retried_too() -> None:
    policy = Policy(**FAST)
    call = Flaky(2, ModelUnavailableError)
    assert await policy.run(call, user="a") == "ok"
    assert len(call.calls) == 3


async def test_backoff_is_capped_exponential_with_full_jitter() -> None:
    policy = Policy(initial_delay=0.01, max_delay=0.04, deadline=10)
    delays: list[float] = []

    def sink(event: PolicyEvent) -> None:
        if event.kind == "retrying":
            delays.append(event.delay)

    await policy.run(Flaky(6), user="a", on_event=sink)
    caps = [0.01, 0.02, 0.04, 0.04, 0.04, 0.04]
    assert all(0 <= d <= cap for d, cap in zip(delays, caps, strict=True))


async def test_retry_after_is_honoured() -> None:
    policy = Policy(**FAST)
    call = Flaky(1, retry_after=0.2)
    events: list[PolicyEvent] = []
    assert await policy.run(call, user="a", on_event=events.append) == "ok"
    assert call.calls[1] - call.calls[0] >= 0.2
    assert [e.delay for e in events if e.kind == "retrying"] == [0.2]


async def test_retry_after_beyond_the_deadline_gives_up_at_once() -> None:
    policy = Policy(deadline=5.0, **FAST)
    call = Flaky(1, retry_after=60.0)
    start = time.monotonic()
    with pytest.raises(ModelBusyError, match="asks to wait 60 s") as caught:
        await policy.run(call, user="a")
    assert time.monotonic() - start < 0.5
    assert caught.value.retry_after == 60.0  # type: ignore[attr-defined]


async def test_retry_after_past_the_time_left_says_the_deadline_ran_out() -> None:
    """Retry-After 0.2 s fits the 0.3 s budget but not what is left after the first wait."""
    policy = Policy(deadline=0.3, **FAST)
    call = Flaky(10**6, retry_after=0.2)
    with pytest.raises(ModelBusyError) as caught:
        await policy.run(call, user="a")
    assert str(caught.value) == (
        "The translation server is still busy after 0.3 s."
    )
    assert len(call.calls) == 2  # it does not knock before the server said it may


@pytest.mark.parametrize(
    ("error", "word"), [(ModelBusyError, "busy"), (ModelUnavailableError, "not reachable")]
)
async def test_deadline_raises_the_last_error_with_a_clear_message(
    error: type[Exception], word: str
) -> None:
    policy = Policy(deadline=180.0, **FAST)
    call = Flaky(10**6, error)
    events: list[PolicyEvent] = []
    start = time.monotonic()
    with pytest.raises(error) as caught:
        await policy.run(call, user="a", deadline=0.3, on_event=events.append)
    elapsed = time.monotonic() - start
    assert 0.3 <= elapsed < 0.3 + 10  # stopped at the deadline (a busy machine is slow)
    assert str(caught.value) == (
        f"The translation server is still {word} after 0.3 s."
    )
    assert type(caught.value) is error
    assert len(call.calls) > 3
    assert events[-1].kind == "gave_up"
    assert policy.in_flight == 0 and policy.queue_length == 0


async def test_the_default_deadline_is_in_the_message() -> None:
    policy = Policy(deadline=0.1, **FAST)
    with pytest.raises(ModelBusyError, match=r"still busy after 0\.1 s\.$"):
        await policy.run(Flaky(10**6), user="a")


async def test_time_in_the_queue_counts_against_the_deadline() -> None:
    policy = Policy(window_max=1, **FAST)
    gate = asyncio.Event()

    async def hold() -> str:
        await gate.wait()
        return "held"

    holder = asyncio.create_task(policy.run(hold, user="a"))
    await asyncio.sleep(0.01)
    call = Flaky(0)
    events: list[PolicyEvent] = []
    start = time.monotonic()
    with pytest.raises(ModelBusyError, match="still busy after 0.2 s"):
        await policy.run(call, user="b", deadline=0.2, on_event=events.append)
    assert 0.2 <= time.monotonic() - start < 0.2 + 10  # gave up at the deadline, not later
    assert call.calls == []  # never got a slot
    assert [e.kind for e in events] == ["queued", "gave_up"]
    assert policy.queue_length == 0 and policy.in_flight == 1
    gate.set()
    assert await holder == "held"
    assert policy.in_flight == 0


async def test_retries_off_fails_at_once() -> None:
    policy = Policy(retries=False, **FAST)
    for error in (ModelBusyError, ModelUnavailableError):
        call = Flaky(1, error)
        with pytest.raises(error, match="boom"):  # the server's own error, untouched
            await policy.run(call, user="a")
        assert len(call.calls) == 1
    assert policy.in_flight == 0


@pytest.mark.parametrize("error", [ModelError, ValueError])
async def test_other_errors_are_not_retried_and_release_the_slot(error: type[Exception]) -> None:
    policy = Policy(window_max=1, **FAST)
    call = Flaky(1, error)
    events: list[PolicyEvent] = []
    with pytest.raises(error, match="boom"):
        await policy.run(call, user="a", on_event=events.append)
    assert len(call.calls) == 1
    assert [e.kind for e in events] == ["started", "gave_up"]
    assert (policy.in_flight, policy.queue_length, policy.window) == (0, 0, 1)
    assert await policy.run(call, user="a") == "ok"  # the slot came back


async def test_hooks_see_every_event_and_a_broken_hook_breaks_nothing() -> None:
    policy = Policy(**FAST)
    seen: list[str] = []
    policy.add_hook(lambda e: seen.append(e.kind))

    def broken(event: PolicyEvent) -> None:
        raise RuntimeError("bug in a hook")

    policy.add_hook(broken)
    assert await policy.run(Flaky(1), user="a", on_event=broken) == "ok"
    assert seen == ["started", "retrying", "started", "succeeded"]
    assert policy.in_flight == 0


class FakeServer:
    """vLLM with --max-num-seqs 2 --max-num-queued-reqs 2: 503 beyond 4 requests inside."""

    def __init__(self, running: int = 2, capacity: int = 4, work: float = 0.01) -> None:
        self.capacity = capacity
        self.inside = 0
        self.peak = 0
        self.rejected = 0
        self.slots = asyncio.Semaphore(running)
        self.work = work

    async def __call__(self) -> str:
        if self.inside >= self.capacity:
            self.rejected += 1
            raise ModelBusyError("The translation model is busy (HTTP 503).")
        self.inside += 1
        self.peak = max(self.peak, self.inside)
        try:
            async with self.slots:
                await asyncio.sleep(self.work)
        finally:
            self.inside -= 1
        return "ok"


async def test_24_concurrent_calls_against_a_small_server_all_succeed_with_retries() -> None:
    server = FakeServer()
    policy = Policy(window_max=8, initial_delay=0.01, max_delay=0.05, deadline=20)
    windows: list[int] = []
    policy.add_hook(lambda e: windows.append(policy.window))
    start = time.monotonic()
    results = await asyncio.gather(
        *(policy.run(server, user=f"user{i % 6}") for i in range(24)), return_exceptions=True
    )
    assert results == ["ok"] * 24
    assert server.rejected > 0  # the server really did refuse some
    assert min(windows) < 8  # and the window was downgraded in answer
    assert time.monotonic() - start < 3
    assert (policy.in_flight, policy.queue_length) == (0, 0)


async def test_24_concurrent_calls_against_a_small_server_fail_without_retries() -> None:
    server = FakeServer()
    policy = Policy(window_max=8, retries=False)
    results = await asyncio.gather(
        *(policy.run(server, user=f"user{i % 6}") for i in range(24)), return_exceptions=True
    )
    failures = [r for r in results if isinstance(r, ModelBusyError)]
    assert failures
    assert all(r == "ok" or isinstance(r, ModelBusyError) for r in results)
    assert (policy.in_flight, policy.queue_length) == (0, 0)



async def test_the_default_180_s_deadline_reads_well() -> None:
    """An injected clock running 1000x fast makes the 180 s deadline pass in 0.18 s."""
    policy = Policy(clock=lambda: time.monotonic() * 1000, **FAST)
    start = time.monotonic()
    with pytest.raises(ModelBusyError) as caught:
        await policy.run(Flaky(10**6), user="a")
    assert str(caught.value) == (
        "The translation server is still busy after 180 s."
    )
    assert 0.15 < time.monotonic() - start < 10  # the fake clock ran 1000x: 180 ms for 180 s
    with pytest.raises(ModelBusyError, match=r"still busy after 2 s\.$"):
        await policy.run(Flaky(10**6), user="a", deadline=1.748)  # whole seconds from 1 s up
