"""How long the event loop was kept from running: every user's page waits that long.

A timer is set every :data:`INTERVAL` seconds; how late it fires is a stall, as long as the
loop spent that time running code. The lateness is capped by the loop thread's own CPU time over
the same interval (``time.thread_time``, read in that thread), so a process the host merely did
not schedule (a busy 2-core machine) does not read as a stall of ours, and neither does a
worker thread's work (detection runs there; it costs the loop at most a GIL switch interval,
5 ms, at a time). The worst stall since start and a histogram go to ``/metrics``
(:meth:`~hymt_chat.service.metrics.Metrics.observe_loop_stall`).

:class:`StartWatch` is the ASGI middleware that starts the watch on the server's first event
(its lifespan startup), inside the server's own loop. (The stalls it first showed were full
garbage collections of the heap built at start, 0.16-1.0 s each, measured with
``gc.callbacks``: app.py freezes that heap, ``gc.freeze``.)
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["INTERVAL", "LoopWatch", "StartWatch", "stall"]

INTERVAL = 0.02  # seconds between timers: 50 wake-ups a second, a few microseconds each

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]


def stall(expected: float, wall: float, cpu: float) -> float:
    """The stall one timer saw: its lateness (*wall* elapsed minus *expected*), at most the
    *cpu* seconds the loop's thread computed meanwhile; never negative."""
    return max(0.0, min(wall - expected, cpu))


class LoopWatch:
    """Measures the running loop's stalls and reports each to *report* (seconds)."""

    def __init__(self, report: Callable[[float], None], *, interval: float = INTERVAL,
                 wall: Callable[[], float] = time.perf_counter,
                 cpu: Callable[[], float] = time.thread_time) -> None:
        self.report = report
        self.interval = interval
        self._wall, self._cpu = wall, cpu
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start watching the running loop (once; again after the loop it watched ended)."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(),
                                                                name="hymt-loop-watch")

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _run(self) -> None:
        while True:
            wall, cpu = self._wall(), self._cpu()
            await asyncio.sleep(self.interval)
            self.report(stall(self.interval, self._wall() - wall, self._cpu() - cpu))


class StartWatch:
    """ASGI middleware: starts *watch* at the server's first event (its lifespan startup)."""

    def __init__(self, app: ASGIApp, *, watch: LoopWatch) -> None:
        self.app = app
        self.watch = watch

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        self.watch.start()
        await self.app(scope, receive, send)
