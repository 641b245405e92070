"""The engine double keeps to the real vLLM: one scenario, run against both, must give the app
the same observations.

The app depends on vLLM for slots, an admission cap, priority order, abort on hang-up and the
two gauges of ``/metrics`` (``tests/support/engine_double.py``). The scenario touches each,
through the app's own client (``ModelClient``) and metrics reader (``read_load``):

1. two long requests take both slots (``running`` 2);
2. a low-priority request, then a high-priority one, wait behind them (``waiting`` 2);
3. one more request is refused at once with vLLM's 503 (the cap: 2 running + 2 waiting);
4. one long request's client hangs up: its slot goes to the high request before the low one,
   which proves the priority reached the engine, and the abort freed the slot;
5. with every client gone, nothing runs or waits.

On the real engine the long requests hold their slots for minutes (1,500 tokens of counting),
so a scrape that comes back late costs time, never the verdict; the double holds them until
the scenario hangs up.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass

import httpx
import pytest

from hymt_chat.engine.client import ModelClient
from hymt_chat.errors import ModelBusyError
from hymt_chat.sidecar.engine_load import EngineLoad, read_load
from tests.support.engine_double import EngineDouble, running_double

COUNT = "Count from 1 to 500 in English words, separated by commas."
LONG = 1500  # tokens: the demo model counts on without ending (1,200 of 1,200 measured)
SHORT = 24


@dataclass(frozen=True)
class Observed:
    """What the app saw, the same on both engines."""

    held: EngineLoad  # both slots taken, two waiting
    refused: str  # the error the app's client raised for the request over the cap
    finished: tuple[str, ...]  # the order the two waiting requests ended in
    after: EngineLoad  # once every client is gone


async def until(check: Callable[[], Awaitable[bool]], what: str, timeout: float = 300) -> None:
    """Poll *check* (a scrape of /metrics) until it holds: generous and bounded."""
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(0.2)


async def scenario(server) -> Observed:
    client = ModelClient(server.settings(temperature=0.0))
    url = f"{server.endpoint.root}/metrics"
    key = server.endpoint.api_key
    finished: list[str] = []

    async with httpx.AsyncClient(timeout=60) as http:
        async def load() -> EngineLoad:
            return await read_load(http, [url], api_key=key)

        async def shows(running: int, waiting: int) -> bool:
            now = await load()
            return (now.running, now.waiting) == (running, waiting)

        async def ask(name: str, max_tokens: int, priority: int) -> None:
            await client.complete(COUNT, max_tokens=max_tokens, priority=priority, timeout=900)
            finished.append(name)

        await until(lambda: shows(0, 0), "an idle engine")
        long = [asyncio.create_task(ask("long-1", LONG, 30)),
                asyncio.create_task(ask("long-2", LONG, 30))]
        waiting: list[asyncio.Task[None]] = []
        try:
            await until(lambda: shows(2, 0), "both slots running")
            waiting.append(asyncio.create_task(ask("low", SHORT, 30)))
            await until(lambda: shows(2, 1), "the low request waiting")
            waiting.append(asyncio.create_task(ask("high", SHORT, 0)))
            await until(lambda: shows(2, 2), "the high request waiting")
            held = await load()
            with pytest.raises(ModelBusyError) as refused:
                await client.complete(COUNT, max_tokens=SHORT, priority=0, timeout=300)
            assert not finished, "a long request ended while the queue was held"
            long[0].cancel()  # the client hangs up: the engine aborts it, its slot is freed
            await asyncio.wait_for(asyncio.gather(*waiting), 600)
            order = tuple(finished)
        finally:
            for task in long:
                task.cancel()
            await asyncio.gather(*long, *waiting, return_exceptions=True)
        await until(lambda: shows(0, 0), "the engine idle again")
        after = await load()
    await client.aclose()
    return Observed(held, type(refused.value).__name__, order, after)


EXPECTED = Observed(EngineLoad(2, 2), "ModelBusyError", ("high", "low"), EngineLoad(0, 0))


def _counts(observed: Observed) -> Observed:
    """The observation without the start times (a property of the process, not the engine)."""
    strip = lambda load: EngineLoad(load.running, load.waiting)
    return Observed(strip(observed.held), observed.refused, observed.finished,
                    strip(observed.after))


@pytest.fixture
def double() -> Iterator[EngineDouble]:
    # The demo sidecar's admission (conftest's TIGHT_ADMISSION); long requests held.
    with running_double(max_num_seqs=2, max_queued=4,
                        hold=lambda req: req.body.get("max_tokens", 0) >= LONG) as engine:
        yield engine


async def test_the_double_gives_the_app_what_vllm_gives_it(double: EngineDouble) -> None:
    assert _counts(await scenario(double)) == EXPECTED
    assert double.count("aborted") == 2 and double.count("refused") == 1


@pytest.mark.slow
async def test_the_real_vllm_gives_the_app_what_the_double_gives_it(demo_server) -> None:
    assert _counts(await scenario(demo_server)) == EXPECTED
