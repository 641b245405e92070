"""The one bounded-concurrency runner: segments of a message and pieces of a document use it.

A model failure of one job does not cancel the others: a 15-part text whose 9th part timed out
still returns the other 14 (the caller marks the missing one and offers to retry it). Anything
else — a bug, a cancellation — stops everything at once, as itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from hymt_chat.errors import ModelError

__all__ = ["run_bounded"]

Job = Callable[[], Awaitable[None]]


async def run_bounded(
    jobs: Sequence[Job],
    limit: Callable[[], int],
    *,
    keep_going: type[BaseException] | tuple[type[BaseException], ...] = ModelError,
) -> dict[int, BaseException]:
    """Run *jobs* in order with at most ``limit()`` at once, re-reading the limit as it changes.

    Returns the failures of type *keep_going* by job index (empty: all done). Any other
    failure cancels the jobs still running and is raised as itself (not an ExceptionGroup).
    """
    pending = list(reversed(range(len(jobs))))
    running: dict[asyncio.Future[None], int] = {}
    failed: dict[int, BaseException] = {}
    try:
        while pending or running:
            while pending and len(running) < max(1, limit()):
                index = pending.pop()
                running[asyncio.ensure_future(jobs[index]())] = index
            finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for task in finished:
                index = running.pop(task)
                err = None if task.cancelled() else task.exception()
                if task.cancelled():
                    raise asyncio.CancelledError
                if err is None:
                    continue
                if not isinstance(err, keep_going):
                    raise err
                failed[index] = err
    finally:
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running)
    return failed
