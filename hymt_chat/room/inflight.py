"""A socket's messages, each handled as a task of its own, so that a long one does not hold
the next: a counter side's or a guest's one-liner is answered while a long paste translates
(the long one goes as bulk work, the one-liner ahead of it). At most *limit* at once per
socket: past it the socket stops reading until one ends (backpressure, not a growing pile),
or, for work a page may simply ask again (a reading aloud), the ask is refused."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

__all__ = ["InFlight"]

_log = logging.getLogger(__name__)


class InFlight:
    def __init__(self, limit: int = 8) -> None:
        self.limit = limit
        self.tasks: set[asyncio.Task[Any]] = set()
        self._freed = asyncio.Event()

    async def start(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run *work* beside the others; waits only while *limit* are already running."""
        while len(self.tasks) >= self.limit:
            self._freed.clear()
            await self._freed.wait()
        self._run(work)

    def try_start(self, work: Coroutine[Any, Any, Any]) -> bool:
        """Run *work* if fewer than *limit* are running; else drop it and say False."""
        if len(self.tasks) >= self.limit:
            work.close()
            return False
        self._run(work)
        return True

    def _run(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self.tasks.discard(task)
        self._freed.set()
        if not task.cancelled() and (err := task.exception()) is not None:
            _log.error("a socket message failed", exc_info=err)  # one message, not the socket

    def cancel(self) -> None:
        """The socket closed and nobody is left to show the answers to: stop them."""
        for task in list(self.tasks):
            task.cancel()
