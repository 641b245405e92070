"""Run a request's pieces at once; the first failure cancels the rest and is raised as itself."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import TypeVar

__all__ = ["all_or_first_error"]

T = TypeVar("T")


def _first(group: BaseExceptionGroup[BaseException]) -> BaseException:
    err: BaseException = group
    while isinstance(err, BaseExceptionGroup):
        err = err.exceptions[0]
    return err


async def all_or_first_error(jobs: Iterable[Awaitable[T]]) -> list[T]:
    """Results in order. Unlike ``asyncio.gather`` the siblings of a failed job are cancelled
    (no model call keeps running for an answer nobody will read), and the caller gets the
    error, not an ExceptionGroup: the dialects map it to their own status codes. The jobs
    start one per turn of the event loop (timers and other requests run between them)."""
    tasks: list[asyncio.Task[T]] = []
    try:
        async with asyncio.TaskGroup() as group:
            for job in jobs:
                tasks.append(group.create_task(_await(job)))
                # One new task per turn of the loop: 50 first steps (plan, prompt, queue) run
                # as one burst otherwise, and every other page waits behind it. A sibling's
                # failure cancels us here.
                await asyncio.sleep(0)
    except BaseExceptionGroup as eg:
        raise _first(eg) from None
    return [task.result() for task in tasks]


async def _await(job: Awaitable[T]) -> T:
    return await job
