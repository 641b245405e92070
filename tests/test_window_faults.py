"""The window's watch when the engine's /metrics misbehaves: missing, slow, garbage, lying,
stopping mid-run, and an engine restarted with other flags.

Played by tests/support/fake_server.py's GET /metrics: a real vLLM serves a correct page
(test_e2e_window.py reads one), and neither it nor a proxy in front of it can be made to
answer 404, stall, send HTML or wrong numbers, or restart with other flags, on demand in a
test. The page is read over real HTTP by the real reader (httpx, prometheus_client's parser)
and the real watch moves a real Policy; only the clock is a number the test moves.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import httpx
import pytest

from hymt_chat.engine.policy import Policy
from hymt_chat.engine.window import HOLD, WindowWatch, build_watch
from hymt_chat.errors import METRICS_MISSING, MetricsError
from hymt_chat.settings import Settings
from hymt_chat.sidecar.engine_load import parse_load
from tests.support.fake_server import FakeServer, Reply, fake_server


def page(running: float, waiting: float, started: float = 1_700_000_000.0, engines: int = 1
         ) -> Reply:
    """vLLM's page as it writes it (one label set per engine), less its other series."""
    lines = ["# HELP vllm:num_requests_running Number of requests in model execution batches.",
             "# TYPE vllm:num_requests_running gauge"]
    lines += [f'vllm:num_requests_running{{engine="{e}",model_name="hymt"}} {running}'
              for e in range(engines)]
    lines += ["# TYPE vllm:num_requests_waiting gauge"]
    lines += [f'vllm:num_requests_waiting{{engine="{e}",model_name="hymt"}} {waiting}'
              for e in range(engines)]
    lines += ['vllm:num_requests_waiting_by_reason{engine="0",reason="capacity"} 99',
              "# TYPE process_start_time_seconds gauge",
              f"process_start_time_seconds {started}"]
    return Reply(200, ("\n".join(lines) + "\n").encode())


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def watch_of(fake: FakeServer, policy: Policy, clock: Clock, **kw: object) -> WindowWatch:
    return build_watch(Settings(base_url=fake.base_url, api_key="k"), policy, clock=clock,
                       **kw)  # type: ignore[arg-type]


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    """The watch's client (its own run() keeps one for its life, as this does per test)."""
    async with httpx.AsyncClient(timeout=10.0) as client:
        yield client


async def ticks(watch: WindowWatch, http: httpx.AsyncClient, n: int, clock: Clock,
                every: float = 1.0) -> None:
    for _ in range(n):
        await watch.tick(http)
        clock.now += every


def warnings_about_window_max(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and "HYMT_WINDOW_MAX" in r.getMessage()]


# --- the page's numbers -----------------------------------------------------------------------

def test_the_gauges_of_every_engine_are_added_and_other_series_ignored() -> None:
    load = parse_load(page(2, 3, engines=2).body.decode())  # type: ignore[union-attr]
    assert (load.running, load.waiting, load.started) == (4, 6, frozenset({1_700_000_000.0}))


@pytest.mark.parametrize("text, says", [
    ("<html><body>Welcome to nginx</body></html>", "not Prometheus text"),
    ("# some other exporter\nnode_load1 0.5\n", "no vllm:num_requests_running"),
    ("vllm:num_requests_running 2\n", "no vllm:num_requests_running"),  # waiting missing
    ("vllm:num_requests_running NaN\nvllm:num_requests_waiting 0\n", "impossible value"),
    ("vllm:num_requests_running -1\nvllm:num_requests_waiting 0\n", "impossible value"),
    ("vllm:num_requests_running 1e12\nvllm:num_requests_waiting 0\n", "impossible value"),
    ("vllm:num_requests_running +Inf\nvllm:num_requests_waiting 0\n", "impossible value"),
])
def test_a_page_that_is_not_an_engines_is_refused_with_the_reason(text: str, says: str) -> None:
    with pytest.raises(MetricsError, match=says):
        parse_load(text)


# --- the faults, over HTTP --------------------------------------------------------------------

async def test_no_metrics_gives_the_safe_window_and_one_line_on_how_to_set_it(
        http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture) -> None:
    policy = Policy(window_max=2)
    clock = Clock()
    with fake_server() as fake:  # GET /metrics: 404
        watch = watch_of(fake, policy, clock)
        with caplog.at_level(logging.INFO, logger="hymt_chat.engine.window"):
            await ticks(watch, http, 5, clock)
        assert fake.scrapes == 5
    assert (policy.window_max, watch.state.origin) == (2, "safe default")
    assert "answered HTTP 404" in watch.state.problem
    lines = warnings_about_window_max(caplog)
    assert len(lines) == 1, lines
    assert "--max-num-seqs" in lines[0] and "404" in lines[0]
    described = watch.describe()
    # /health's words: the state, never the page's address (anyone may ask /health)
    assert (described["origin"], described["problem"]) == ("safe default", METRICS_MISSING)


async def test_a_page_of_something_else_is_no_metrics_either(
        http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture) -> None:
    policy = Policy(window_max=2)
    clock = Clock()
    with fake_server() as fake:
        fake.metrics = Reply(200, b"<html>login required</html>")
        watch = watch_of(fake, policy, clock)
        with caplog.at_level(logging.WARNING, logger="hymt_chat.engine.window"):
            await ticks(watch, http, 3, clock)
    assert watch.state.origin == "safe default" and policy.window_max == 2
    assert "not Prometheus text" in watch.state.problem
    assert len(warnings_about_window_max(caplog)) == 1


async def test_a_slow_page_is_no_reading_and_the_last_good_ceiling_holds() -> None:
    policy = Policy(window_max=2)
    clock = Clock()
    with fake_server() as fake:
        fake.metrics = page(6, 0)
        watch = watch_of(fake, policy, clock)
        http = httpx.AsyncClient(timeout=0.2)  # the watch's own would wait 3 s
        await ticks(watch, http, 3, clock)
        assert policy.window_max == 6  # 2 -> 3 -> 4 -> 6: the 6 seen running
        fake.metrics = Reply(200, page(1, 1).body, delay=1.0)  # slower than the timeout
        await ticks(watch, http, 2, clock)
        await http.aclose()
    assert policy.window_max == 6  # held: the slow answers moved nothing
    assert "did not answer within 0.2 s" in watch.state.problem
    assert watch.state.origin == "engine metrics"


async def test_metrics_that_stop_mid_run_keep_the_ceiling_a_while_then_fall_back(
        http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture) -> None:
    policy = Policy(window_max=2)
    clock = Clock()
    with fake_server() as fake:
        fake.metrics = page(4, 0)
        watch = watch_of(fake, policy, clock)
        await ticks(watch, http, 3, clock)
        assert (policy.window_max, watch.state.origin) == (4, "engine metrics")
        fake.metrics = None  # the proxy in front stops passing /metrics through
        with caplog.at_level(logging.INFO, logger="hymt_chat.engine.window"):
            await ticks(watch, http, int(HOLD) - 1, clock)
            assert policy.window_max == 4  # kept for HOLD seconds
            await ticks(watch, http, 3, clock)
            assert (policy.window_max, watch.state.origin) == (2, "safe default")
            fake.metrics = page(4, 1)  # back
            await ticks(watch, http, 1, clock)
    assert (policy.window_max, watch.state.origin) == (4, "engine metrics")
    assert len(warnings_about_window_max(caplog)) == 1
    assert any("metrics answer" in r.getMessage() for r in caplog.records)


async def test_a_proxy_with_wrong_numbers_is_not_believed(
        http: httpx.AsyncClient) -> None:
    policy = Policy(window_max=2)
    clock = Clock()
    gate = asyncio.Event()

    async def call() -> str:
        await gate.wait()
        return "ok"

    with fake_server() as fake:
        fake.metrics = page(2, 1)
        watch = watch_of(fake, policy, clock)
        await ticks(watch, http, 1, clock)
        assert watch.state.full and policy.window_max == 2
        tasks = [asyncio.create_task(policy.run(call, user=f"u{i}")) for i in range(2)]
        await asyncio.sleep(0)
        assert policy.in_flight == 2
        fake.metrics = page(0, 0)  # a cached page: nothing runs, while 2 of ours do
        await ticks(watch, http, 2, clock)
        assert "fewer than the 2 this app has in flight" in watch.state.problem
        assert policy.window_max == 2 and watch.state.origin == "engine metrics"
        fake.metrics = page(10**9, 0)  # absurd: refused, never a window of a billion
        await ticks(watch, http, int(HOLD) + 1, clock)
        assert "impossible" in watch.state.problem
        assert (policy.window_max, watch.state.origin) == (2, "safe default")
        gate.set()
        await asyncio.gather(*tasks)


async def test_an_engine_restarted_with_fewer_slots_is_followed(
        http: httpx.AsyncClient) -> None:
    """Learned at 4, restarted with --max-num-seqs 2: from the first reading of the new
    engine on, this app never has more than 2 in flight (the 4 running ones end first)."""
    policy = Policy(window_max=2)
    clock = Clock()
    release: list[asyncio.Event] = []
    in_flight: list[int] = []

    async def call() -> str:
        gate = asyncio.Event()
        release.append(gate)
        await gate.wait()
        return "ok"

    async def users(n: int) -> list[asyncio.Task[str]]:
        tasks = [asyncio.create_task(policy.run(call, user=f"u{len(release)}-{i}"))
                 for i in range(n)]
        await asyncio.sleep(0)
        return tasks

    with fake_server() as fake:
        fake.metrics = page(4, 1, started=1.0)  # 4 run, 1 waits: its size is 4
        watch = watch_of(fake, policy, clock)
        await ticks(watch, http, 1, clock)
        assert policy.window_max == 4
        first = await users(6)
        assert policy.in_flight == 4
        fake.metrics = page(2, 3, started=2.0)  # restarted: 2 run, the rest wait
        await ticks(watch, http, 1, clock)
        assert policy.window_max == 2 and policy.in_flight == 4  # nothing cancelled
        later = await users(4)
        for _ in range(30):  # a period of readings while calls end and start
            if release:
                release.pop(0).set()
            await asyncio.sleep(0)
            await ticks(watch, http, 1, clock)
            in_flight.append(policy.in_flight)
            if policy.in_flight <= 2:
                break
        for _ in range(40):
            await asyncio.sleep(0)
            await ticks(watch, http, 1, clock)
            in_flight.append(policy.in_flight)
            assert policy.in_flight <= 2, in_flight
            if release:
                release.pop(0).set()
        results = await asyncio.gather(*first, *later)
    assert results == ["ok"] * 10
    assert max(in_flight[in_flight.index(2):]) <= 2


async def test_an_engine_restarted_with_more_slots_is_learned_afresh(
        http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture) -> None:
    policy = Policy(window_max=2)
    clock = Clock()
    gate = asyncio.Event()

    async def call() -> str:
        await gate.wait()
        return "ok"

    with fake_server() as fake:
        fake.metrics = page(2, 2, started=1.0)
        watch = watch_of(fake, policy, clock)
        await ticks(watch, http, 1, clock)
        assert watch.state.full and policy.window_max == 2
        tasks = [asyncio.create_task(policy.run(call, user=f"u{i}")) for i in range(12)]
        await asyncio.sleep(0)
        fake.metrics = page(2, 0, started=2.0)  # restarted, now with 8 slots: nothing waits
        with caplog.at_level(logging.INFO, logger="hymt_chat.engine.window"):
            await ticks(watch, http, 1, clock)
        assert any("restarted" in r.getMessage() for r in caplog.records)
        assert not watch.state.full and policy.window_max == 4  # 2 + 2 probe slots
        windows = []
        for _ in range(6):  # the page of an engine of 8 slots under what this app sends
            await asyncio.sleep(0)
            sent = policy.in_flight
            fake.metrics = page(min(sent, 8), max(0, sent - 8), started=2.0)
            await ticks(watch, http, 1, clock)
            windows.append(policy.window_max)
        # Grown to what it was seen running, probing again while busy, until requests waited.
        assert windows == [3, 8, 6, 16, 8, 8]
        assert (watch.state.size, watch.state.full) == (8, True)
        gate.set()
        await asyncio.gather(*tasks)


async def test_the_loop_reads_on_its_interval_until_stopped() -> None:
    policy = Policy(window_max=2)
    with fake_server() as fake:
        fake.metrics = page(3, 1)
        watch = build_watch(Settings(base_url=fake.base_url), policy, interval=0.01)
        watch.start()
        watch.start()  # once: a second start is the same task
        for _ in range(500):
            if fake.scrapes >= 3:
                break
            await asyncio.sleep(0.01)
        await watch.stop()
        scraped = fake.scrapes
        await asyncio.sleep(0.05)
        assert fake.scrapes == scraped  # stopped
    assert scraped >= 3 and policy.window_max == 3 and watch.state.full
