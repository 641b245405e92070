"""The fair queue in front of the window: round-robin across users, "ahead" reports, no leaks.

A fake async callable stands in for the model because these tests check scheduling logic
(timing, counting, ordering); the tests against a real vLLM server are separate.
"""

from __future__ import annotations

import asyncio
import random

from hymt_chat.engine.policy import Policy, PolicyEvent
from hymt_chat.errors import ModelBusyError


class Blocker:
    """A call that holds its slot until released."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()

    async def __call__(self) -> str:
        await self.gate.wait()
        return "blocker"


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_newcomer_is_not_starved_by_a_big_user() -> None:
    policy = Policy(window_max=1)
    order: list[str] = []
    blocker = Blocker()
    first = asyncio.create_task(policy.run(blocker, user="A"))
    await settle()

    def job(name: str):
        async def call() -> str:
            order.append(name)
            return name

        return call

    big = [asyncio.create_task(policy.run(job(f"A{i}"), user="A")) for i in range(50)]
    await settle()
    small = asyncio.create_task(policy.run(job("B"), user="B"))
    await settle()
    assert policy.queue_length == 51
    blocker.gate.set()
    await asyncio.gather(first, small, *big)
    # B is served after at most one more of A's items (FIFO would put it 51st).
    assert order.index("B") <= 1
    assert order[:3] == ["A0", "B", "A1"]
    assert [n for n in order if n != "B"] == [f"A{i}" for i in range(50)]  # FIFO within a user


async def test_round_robin_across_three_users_and_ahead_matches_service_order() -> None:
    policy = Policy(window_max=1)
    blocker = Blocker()
    first = asyncio.create_task(policy.run(blocker, user="A"))
    await settle()
    served: list[str] = []
    last_ahead: dict[str, int] = {}
    tasks = []
    for name in ["A0", "A1", "A2", "A3", "A4", "B0", "C0", "C1"]:

        async def call(name: str = name) -> str:
            served.append(name)
            return name

        def sink(event: PolicyEvent, name: str = name) -> None:
            if event.kind == "queued":
                last_ahead[name] = event.ahead

        tasks.append(asyncio.create_task(policy.run(call, user=name[0], on_event=sink)))
        await settle()
    snapshot = dict(last_ahead)
    blocker.gate.set()
    await asyncio.gather(first, *tasks)
    assert served == ["A0", "B0", "C0", "A1", "C1", "A2", "A3", "A4"]
    # What each one was told just before the queue started moving is exactly its position.
    assert snapshot == {name: served.index(name) for name in served}


async def test_ahead_is_reported_and_decreases_to_zero() -> None:
    policy = Policy(window_max=1)
    blocker = Blocker()
    first = asyncio.create_task(policy.run(blocker, user="A"))
    await settle()
    events: list[PolicyEvent] = []

    async def quick() -> str:
        await asyncio.sleep(0.002)
        return "ok"

    others = [asyncio.create_task(policy.run(quick, user=f"u{i}")) for i in range(4)]
    await settle()
    mine = asyncio.create_task(policy.run(quick, user="me", on_event=events.append))
    await settle()
    assert [e.ahead for e in events] == [4]
    blocker.gate.set()
    await asyncio.gather(first, mine, *others)
    kinds = [e.kind for e in events]
    aheads = [e.ahead for e in events if e.kind == "queued"]
    assert aheads == [4, 3, 2, 1, 0]
    assert kinds == ["queued"] * 5 + ["started", "succeeded"]


async def test_a_call_that_fits_in_the_window_is_not_queued() -> None:
    policy = Policy(window_max=2)
    events: list[PolicyEvent] = []

    async def call() -> str:
        return "ok"

    assert await policy.run(call, user="a", on_event=events.append) == "ok"
    assert [e.kind for e in events] == ["started", "succeeded"]


async def test_a_retry_goes_to_the_front_of_its_users_line() -> None:
    policy = Policy(window_max=1, initial_delay=0.001, max_delay=0.001)
    done: list[str] = []
    tries = {"X": 0}

    async def x() -> str:
        tries["X"] += 1
        if tries["X"] == 1:
            err = ModelBusyError("busy")
            err.retry_after = 0.0  # type: ignore[attr-defined]
            raise err
        done.append("X")
        return "X"

    def plain(name: str, pause: float = 0.0):
        async def call() -> str:
            await asyncio.sleep(pause)
            done.append(name)
            return name

        return call

    blocker = Blocker()
    first = asyncio.create_task(policy.run(blocker, user="A"))
    await settle()
    tasks = [
        asyncio.create_task(policy.run(x, user="A")),
        asyncio.create_task(policy.run(plain("Y", pause=0.05), user="A")),
        asyncio.create_task(policy.run(plain("Z"), user="A")),
    ]
    await settle()
    blocker.gate.set()
    await asyncio.gather(first, *tasks)
    # X's 503 gave its slot to Y; X came back while Y ran and went before Z, not after it.
    assert done == ["Y", "X", "Z"]


async def test_a_retry_goes_ahead_of_other_users_waiting() -> None:
    """A 503 is the server's refusal, not the user's turn: the retry does not queue again.

    Found on the real server: retries rejoined behind every other user, so a message that met
    a few 503s under 40 users waited several queue lengths (78 s against a P95 of 22 s).
    """
    policy = Policy(window_max=1, initial_delay=0.001, max_delay=0.001)
    done: list[str] = []
    x_events: list[PolicyEvent] = []
    tries = {"X": 0}

    async def x() -> str:
        tries["X"] += 1
        if tries["X"] == 1:
            err = ModelBusyError("busy")
            err.retry_after = 0.0  # type: ignore[attr-defined]
            raise err
        done.append("X")
        return "X"

    def plain(name: str, pause: float = 0.0):
        async def call() -> str:
            await asyncio.sleep(pause)
            done.append(name)
            return name

        return call

    blocker = Blocker()
    first = asyncio.create_task(policy.run(blocker, user="A"))
    await settle()
    tasks = [asyncio.create_task(policy.run(x, user="X", on_event=x_events.append))]
    await settle()
    for name in "PQR":
        tasks.append(asyncio.create_task(policy.run(plain(name, pause=0.05), user=name)))
        await settle()
    blocker.gate.set()
    await asyncio.gather(first, *tasks)
    # X's 503 handed its slot to P; X came back while P ran and went next, before Q and R.
    assert done == ["P", "X", "Q", "R"]
    requeued = [e for e in x_events if e.kind == "queued" and e.attempt == 2]
    assert requeued and requeued[0].ahead == 0
    assert policy.in_flight == 0 and policy.queue_length == 0


async def test_cancel_while_queued_leaves_the_queue() -> None:
    policy = Policy(window_max=1)
    blocker = Blocker()
    first = asyncio.create_task(policy.run(blocker, user="A"))
    await settle()
    called: list[str] = []
    behind: list[PolicyEvent] = []

    async def call() -> str:
        called.append("x")
        return "x"

    waiting = asyncio.create_task(policy.run(call, user="B"))
    later = asyncio.create_task(policy.run(call, user="C", on_event=behind.append))
    await settle()
    assert policy.queue_length == 2
    assert behind[-1].ahead == 1
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    assert waiting.cancelled()
    assert policy.queue_length == 1
    assert behind[-1].ahead == 0  # the one behind moved up
    blocker.gate.set()
    await asyncio.gather(first, later)
    assert called == ["x"]  # the cancelled one never ran
    assert (policy.in_flight, policy.queue_length, policy.window) == (0, 0, 1)


async def test_cancel_while_running_cancels_the_call_and_frees_the_slot() -> None:
    policy = Policy(window_max=1)
    seen: list[str] = []
    started = asyncio.Event()

    async def slow() -> str:
        started.set()
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            seen.append("cancelled")  # the HTTP request would be closed here
            raise
        return "never"

    task = asyncio.create_task(policy.run(slow, user="a"))
    await started.wait()
    assert policy.in_flight == 1
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled()
    assert seen == ["cancelled"]
    assert (policy.in_flight, policy.queue_length, policy.window) == (0, 0, 1)

    async def ok() -> str:
        return "ok"

    assert await asyncio.wait_for(policy.run(ok, user="b"), 1) == "ok"  # the slot is free


async def test_cancel_during_backoff_leaves_nothing_behind() -> None:
    policy = Policy(window_max=2)
    retrying = asyncio.Event()

    async def busy() -> str:
        err = ModelBusyError("busy")
        err.retry_after = 5.0  # type: ignore[attr-defined]
        raise err

    def sink(event: PolicyEvent) -> None:
        if event.kind == "retrying":
            retrying.set()

    task = asyncio.create_task(policy.run(busy, user="a", on_event=sink))
    await retrying.wait()
    assert policy.in_flight == 0  # the slot is given back during the backoff sleep
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled()
    assert (policy.in_flight, policy.queue_length) == (0, 0)


async def test_no_leaked_slots_under_random_cancellations_and_503s() -> None:
    """Many calls, random 503s, random cancellations anywhere: everything is returned."""
    rng = random.Random(7)
    policy = Policy(window_max=4, initial_delay=0.001, max_delay=0.005, deadline=2.0)

    async def flaky() -> str:
        await asyncio.sleep(rng.uniform(0, 0.004))
        if rng.random() < 0.3:
            raise ModelBusyError("busy")
        return "ok"

    tasks = [asyncio.create_task(policy.run(flaky, user=f"u{i % 5}")) for i in range(120)]
    for task in tasks:
        if rng.random() < 0.4:
            asyncio.get_running_loop().call_later(rng.uniform(0, 0.05), task.cancel)
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert any(r == "ok" for r in results)
    assert any(isinstance(r, asyncio.CancelledError) for r in results)
    assert all(r == "ok" or isinstance(r, asyncio.CancelledError) for r in results)
    assert (policy.in_flight, policy.queue_length) == (0, 0)
    assert 1 <= policy.window <= 4
