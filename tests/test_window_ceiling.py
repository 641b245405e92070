"""The window's ceiling from the engine's readings (engine/window.py's pure decision) and
the policy's resize, which moves the ceiling while calls run.

Readings are plain EngineLoad values and the clock a number: the decision is a pure function.
The policy's calls are coroutines waiting on events (scheduling logic, no model needed);
the watch against real /metrics pages is in test_window_faults.py and test_e2e_window.py.
"""

from __future__ import annotations

import asyncio

import pytest

from hymt_chat.engine.policy import Policy, segment_parallelism
from hymt_chat.engine.priority import BULK
from hymt_chat.engine.window import (
    MAX_CEILING,
    Rules,
    WindowState,
    initial_state,
    next_state,
)
from hymt_chat.errors import MetricsError
from hymt_chat.settings import Settings
from hymt_chat.sidecar.capacity import SAFE_SLOTS, app_share, engine_slots, engine_total
from hymt_chat.sidecar.engine_load import EngineLoad

SAFE = Rules()  # a server reached by URL: starts at the safe default
STARTED = frozenset({1000.0})


def step(state: WindowState, running: int, waiting: int, *, now: float = 0.0, busy: bool = False,
         ours: int = 0, rules: Rules = SAFE, started: frozenset[float] = STARTED) -> WindowState:
    return next_state(state, EngineLoad(running, waiting, started), now=now, busy=busy,
                      ours=ours, rules=rules)


def fail(state: WindowState, *, now: float, rules: Rules = SAFE) -> WindowState:
    return next_state(state, MetricsError("HTTP 404"), now=now, busy=False, ours=0, rules=rules)


# --- where the window starts ------------------------------------------------------------------

def test_a_server_reached_by_url_starts_at_the_safe_default_not_eight() -> None:
    settings = Settings(base_url="http://x/v1")
    assert engine_total(settings) == (SAFE_SLOTS, "safe default")
    assert engine_slots(settings) == SAFE_SLOTS == 2
    assert engine_total(Settings(base_url="http://x/v1", replicas=3)) == (6, "safe default")
    assert engine_total(Settings(base_url="http://x/v1", profile="h200")) == (128,
                                                                              "launch flags")
    assert engine_total(Settings(base_url=None, profile="cpu")) == (4, "launch flags")


def test_the_share_of_app_replicas_is_rounded_up_and_at_least_one() -> None:
    assert app_share(5, 2) == 3
    assert app_share(1, 4) == 1
    assert Rules(share=2).of(5) == 3
    assert Rules().of(10**9) == MAX_CEILING  # a claim beyond any engine is capped


# --- the decision -----------------------------------------------------------------------------

def test_requests_waiting_inside_vllm_bring_the_ceiling_down_to_what_runs() -> None:
    state = initial_state(Rules(initial=8, origin="launch flags"))
    assert state.ceiling == 8
    state = step(state, running=2, waiting=5, rules=Rules(initial=8, origin="launch flags"))
    assert (state.ceiling, state.size, state.full, state.origin) == (2, 8, True,
                                                                     "engine metrics")


def test_the_share_of_what_runs_is_split_between_app_replicas() -> None:
    rules = Rules(share=2, initial=8)
    state = step(initial_state(rules), running=3, waiting=1, rules=rules)
    assert state.ceiling == 2  # 3 running between 2 app processes: 2 each, rounded up


def test_it_grows_back_only_while_nothing_waits_and_only_to_what_was_seen_running() -> None:
    rules = Rules(initial=2)
    state = step(initial_state(rules), running=12, waiting=0, rules=rules)  # others' load
    assert state.size == 12
    state = step(state, running=12, waiting=3, rules=rules)
    assert state.ceiling == 12
    state = step(state, running=4, waiting=2, rules=rules)  # still waiting: down to 4
    assert state.ceiling == 4
    state = step(state, running=4, waiting=1, rules=rules)
    assert state.ceiling == 4  # no growth while anything waits
    ceilings = []
    for _ in range(5):
        state = step(state, running=4, waiting=0, busy=True, rules=rules)
        ceilings.append(state.ceiling)
    assert ceilings == [6, 9, 12, 12, 12]  # by half, up to the 12 once seen, no further
    assert state.probe == 0  # it was seen full: no probing above its size


def test_live_work_beyond_the_window_probes_with_slots_only_live_calls_may_take() -> None:
    state = initial_state(SAFE)
    state = step(state, running=2, waiting=0, busy=False)
    assert (state.ceiling, state.probe) == (2, 0)  # idle: nothing to learn
    state = step(state, running=2, waiting=0, busy=True)
    assert (state.ceiling, state.probe) == (2, 2)  # 2 more, for interactive calls
    state = step(state, running=4, waiting=0, busy=True)  # the engine ran them all
    assert (state.size, state.ceiling, state.probe) == (4, 3, 0)  # proven: grows towards 4
    state = step(state, running=4, waiting=0, busy=True)
    assert (state.ceiling, state.probe) == (4, 4)
    state = step(state, running=5, waiting=3, busy=True)  # now requests wait: its size
    assert (state.ceiling, state.probe, state.full) == (5, 0, True)
    state = step(state, running=5, waiting=0, busy=True)
    assert state.probe == 0


def test_a_missing_reading_keeps_the_last_good_ceiling_for_a_while_then_the_safe_one() -> None:
    rules = Rules(initial=2, hold=30.0)
    state = step(initial_state(rules), running=6, waiting=0, now=100.0, rules=rules)
    state = step(state, running=6, waiting=0, now=101.0, rules=rules)
    assert state.ceiling == 4
    held = fail(state, now=131.0, rules=rules)
    assert (held.ceiling, held.origin, held.problem) == (4, "engine metrics", "HTTP 404")
    gone = fail(held, now=131.5, rules=rules)
    assert (gone.ceiling, gone.size, gone.origin) == (2, 2, "safe default")
    assert gone.good_at is None and gone.problem == "HTTP 404"


def test_without_any_reading_it_stays_where_it_started() -> None:
    rules = Rules(initial=16, origin="launch flags")
    state = fail(initial_state(rules), now=5.0, rules=rules)
    assert (state.ceiling, state.origin) == (16, "launch flags")


def test_a_page_counting_fewer_requests_than_ours_in_flight_is_no_reading() -> None:
    state = step(initial_state(SAFE), running=2, waiting=1, now=1.0)
    assert state.ceiling == 2
    lie = step(state, running=0, waiting=0, now=2.0, ours=2)
    assert lie.problem.startswith("the page counts 0 requests, fewer than the 2")
    assert lie.good_at == 1.0  # not a good reading: the hold runs from the last one
    assert step(lie, running=0, waiting=0, now=40.0, ours=2).origin == "safe default"


def test_a_restarted_server_is_learned_afresh() -> None:
    state = step(initial_state(SAFE), running=4, waiting=2, started=frozenset({1.0}))
    assert (state.ceiling, state.size, state.full) == (4, 4, True)
    again = step(state, running=1, waiting=0, started=frozenset({2.0}))  # a new start time
    assert (again.size, again.full) == (2, False)  # the safe start again, then learning
    assert again.starts == (1.0, 2.0)
    more = step(again, running=2, waiting=0, busy=True, started=frozenset({2.0}))
    assert more.probe == 2  # not full any more: live work may find out its new size


def test_a_router_showing_each_replica_in_turn_is_no_restart() -> None:
    both = frozenset({1.0, 2.0})
    state = step(initial_state(SAFE), running=2, waiting=1, started=frozenset({1.0}))
    state = step(state, running=2, waiting=1, started=frozenset({2.0}))  # replica 2 first seen
    state = step(state, running=2, waiting=1, started=frozenset({1.0}))
    state = step(state, running=2, waiting=1, started=frozenset({2.0}))
    assert state.full and state.starts == tuple(sorted(both))


# --- Policy.resize ----------------------------------------------------------------------------

async def _hold(policy: Policy, n: int, *, klass: str = "interactive",
                user: str = "a") -> tuple[asyncio.Event, list[asyncio.Task[str]]]:
    gate = asyncio.Event()

    async def call() -> str:
        await gate.wait()
        return "ok"

    tasks = [asyncio.create_task(policy.run(call, user=f"{user}{i}", klass=klass))
             for i in range(n)]
    await asyncio.sleep(0)
    return gate, tasks


async def test_a_ceiling_below_the_calls_in_flight_cancels_none_and_holds_new_ones() -> None:
    policy = Policy(window_max=4)
    gate, running = await _hold(policy, 4)
    assert policy.in_flight == 4
    policy.resize(2)
    assert (policy.window_max, policy.window, policy.in_flight) == (2, 2, 4)
    late_gate, late = await _hold(policy, 1, user="late")
    assert policy.queue_length == 1
    gate.set()
    assert await asyncio.gather(*running) == ["ok"] * 4
    late_gate.set()
    assert await asyncio.gather(*late) == ["ok"]
    assert policy.in_flight == 0


async def test_a_wider_ceiling_starts_the_waiting_calls_at_once() -> None:
    policy = Policy(window_max=1)
    gate, tasks = await _hold(policy, 3)
    assert (policy.in_flight, policy.queue_length) == (1, 2)
    policy.resize(3)
    assert (policy.window, policy.in_flight, policy.queue_length) == (3, 3, 0)
    gate.set()
    await asyncio.gather(*tasks)


async def test_probe_slots_in_the_reserve_are_for_live_calls_only() -> None:
    policy = Policy(window_max=2, reserve=1)
    gate, docs = await _hold(policy, 3, klass=BULK, user="doc")
    assert (policy.in_flight, policy.queue_length) == (1, 2)  # the reserve is kept free
    policy.resize(4, reserve=3)  # 2 probe slots on top of the ceiling of 2
    assert policy.background_slots == 1 and policy.in_flight == 1
    assert segment_parallelism(policy, 4, BULK) == 1
    live_gate, live = await _hold(policy, 3, user="live")
    assert policy.in_flight == 4  # 1 document part + 3 live calls
    live_gate.set()
    gate.set()
    await asyncio.gather(*live, *docs)


async def test_a_window_cut_by_a_503_keeps_its_place_under_a_higher_ceiling() -> None:
    from hymt_chat.errors import ModelBusyError

    async def busy() -> str:
        raise ModelBusyError("busy")

    policy = Policy(window_max=4, retries=False)
    gate, tasks = await _hold(policy, 3)
    with pytest.raises(ModelBusyError):
        await policy.run(busy, user="x")
    assert policy.window == 2  # AIMD: 4 in flight, halved
    policy.resize(8)
    assert (policy.window_max, policy.window) == (8, 2)  # grows back by AIMD, not at once
    policy.resize(1)
    assert policy.window == 1
    gate.set()
    await asyncio.gather(*tasks)


def test_resize_lowers_the_floor_with_the_ceiling_and_restores_it() -> None:
    policy = Policy(window_max=4, window_min=3)
    policy.resize(2)
    assert policy.window == 2
    policy.resize(6)
    assert policy.window == 6
    policy.resize(5)
    assert policy.window == 5
    with pytest.raises(ValueError):
        policy.resize(0)
    with pytest.raises(ValueError):
        policy.resize(2, reserve=-1)


def test_the_policys_own_lead_waiting_in_vllm_is_not_a_full_engine() -> None:
    """The lead waits inside vLLM on purpose (every app process its own): only more than that
    says the engine runs fewer than the window."""
    rules = Rules(share=2, initial=64, origin="launch flags", lead=8)
    state = initial_state(rules)
    state = step(state, running=64, waiting=16, rules=rules)  # two processes' leads
    assert (state.ceiling, state.full) == (32, False)
    state = step(state, running=48, waiting=17, rules=rules)
    assert (state.ceiling, state.full) == (24, True)
