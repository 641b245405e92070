"""Request classes on our queue: live messages first, and a slot documents may never take.

A fake async callable stands in for the model (these check scheduling only); that vLLM itself
honours the priority is tested on the real server in test_e2e_priority.py.
"""

from __future__ import annotations

import asyncio

import pytest

from hymt_chat.engine.policy import Policy, PolicyEvent, segment_parallelism
from hymt_chat.engine.priority import parse_ranks
from hymt_chat.errors import HymtError


class Gate:
    """Calls that hold their slot until released; records the order they started in."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.release = asyncio.Event()

    def call(self, name: str):
        async def run() -> str:
            self.started.append(name)
            await self.release.wait()
            return name

        return run


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


async def test_documents_never_take_the_reserved_slot() -> None:
    policy = Policy(window_max=2, reserve=1)
    gate = Gate()
    bulk = [asyncio.create_task(policy.run(gate.call(f"doc{i}"), user="A", klass="bulk"))
            for i in range(3)]
    await settle()
    assert gate.started == ["doc0"]  # one slot for documents, one kept free
    assert policy.in_flight == 1 and policy.queue_length == 2
    live = asyncio.create_task(policy.run(gate.call("live"), user="B"))
    await settle()
    assert gate.started == ["doc0", "live"]  # the live message did not queue at all
    gate.release.set()
    await asyncio.gather(*bulk, live)
    assert policy.in_flight == 0 and policy.queue_length == 0


async def test_a_live_message_never_reports_documents_ahead_of_it() -> None:
    policy = Policy(window_max=2, reserve=1)
    gate = Gate()
    bulk = [asyncio.create_task(policy.run(gate.call(f"doc{i}"), user="A", klass="bulk"))
            for i in range(5)]
    await settle()
    events: list[PolicyEvent] = []
    live = asyncio.create_task(policy.run(gate.call("live"), user="B", on_event=events.append))
    await settle()
    assert [e.kind for e in events] == ["started"]
    gate.release.set()
    await asyncio.gather(*bulk, live)


async def test_waiting_calls_are_served_by_class_then_round_robin() -> None:
    policy = Policy(window_max=1, reserve=0)
    gate = Gate()
    first = asyncio.create_task(policy.run(gate.call("first"), user="X", klass="bulk"))
    await settle()
    tasks = [
        asyncio.create_task(policy.run(gate.call(name), user=user, klass=klass))
        for name, user, klass in [("bulkA1", "A", "bulk"), ("bulkA2", "A", "bulk"),
                                  ("bulkB1", "B", "bulk"), ("check", "C", "check"),
                                  ("best", "D", "best"), ("live", "E", "interactive")]
    ]
    await settle()
    assert policy.queue_length == 6
    gate.release.set()
    await asyncio.gather(first, *tasks)
    assert gate.started == ["first", "live", "best", "check", "bulkA1", "bulkB1", "bulkA2"]


async def test_ahead_counts_follow_the_class_order() -> None:
    policy = Policy(window_max=1, reserve=0)
    gate = Gate()
    first = asyncio.create_task(policy.run(gate.call("first"), user="X"))
    await settle()
    seen: dict[str, list[int]] = {"bulk": [], "live": []}
    bulk = asyncio.create_task(policy.run(
        gate.call("bulk"), user="A", klass="bulk",
        on_event=lambda e: e.kind == "queued" and seen["bulk"].append(e.ahead)))
    await settle()
    live = asyncio.create_task(policy.run(
        gate.call("live"), user="B",
        on_event=lambda e: e.kind == "queued" and seen["live"].append(e.ahead)))
    await settle()
    assert seen == {"bulk": [0, 1], "live": [0]}  # the live one went ahead of the document
    gate.release.set()
    await asyncio.gather(first, bulk, live)


async def test_without_a_reserve_documents_may_use_every_slot() -> None:
    policy = Policy(window_max=3, reserve=0)
    gate = Gate()
    bulk = [asyncio.create_task(policy.run(gate.call(f"doc{i}"), user="A", klass="bulk"))
            for i in range(4)]
    await settle()
    assert len(gate.started) == 3
    gate.release.set()
    await asyncio.gather(*bulk)


def test_segment_parallelism_leaves_the_reserve_to_live_messages() -> None:
    policy = Policy(window_max=4, reserve=1)
    assert segment_parallelism(policy, 8) == 4
    assert segment_parallelism(policy, 8, "bulk") == 3
    assert segment_parallelism(Policy(window_max=1, reserve=1), 4, "bulk") == 1  # never zero


def test_ranks_are_configurable_and_checked() -> None:
    assert parse_ranks("bulk=99")["bulk"] == 99
    assert parse_ranks("")["interactive"] == 0
    with pytest.raises(HymtError, match="Unknown request class 'urgent'"):
        parse_ranks("urgent=1")
    with pytest.raises(HymtError, match="lowest rank"):
        parse_ranks("interactive=50")
    with pytest.raises(HymtError, match="not name=integer"):
        parse_ranks("bulk")
    with pytest.raises(ValueError, match="unknown request class"):
        Policy().rank("urgent")


async def test_api_calls_come_after_live_work_before_documents_and_leave_the_reserve() -> None:
    policy = Policy(window_max=2, reserve=1)
    gate = Gate()
    held = asyncio.create_task(policy.run(gate.call("api0"), user="api:k", klass="api"))
    await settle()
    tasks = [asyncio.create_task(policy.run(gate.call(name), user=user, klass=klass))
             for name, user, klass in [("doc", "A", "bulk"), ("api1", "api:k", "api"),
                                       ("check", "C", "check")]]
    await settle()
    assert gate.started == ["api0"]  # API work is background: the second slot stays live
    live = asyncio.create_task(policy.run(gate.call("live"), user="B"))
    await settle()
    assert gate.started == ["api0", "live"]
    gate.release.set()
    await asyncio.gather(held, live, *tasks)
    assert gate.started == ["api0", "live", "check", "api1", "doc"]
    ranks = parse_ranks("")
    assert ranks["check"] < ranks["api"] < ranks["bulk"]
