"""Run a request's pieces at once; the first failure cancels the rest and is raised as itself."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import TypeVar

__all__ = ["all_or_first_error"]

T = TypeVar("T")


def _first(group: BaseExceptionGroup) -> BaseException:  # type: ignore[type-arg]
    err: BaseException = group
    while isinstance(err, BaseExceptionGroup):
        err = err.exceptions[0]
    return err


async def all_or_first_error(jobs: Iterable[Awaitable[T]]) -> list[T]:
    """Results in order. Unlike ``asyncio.gather`` the siblings of a failed job are cancelled
    (no model call keeps running for an answer nobody will read), and the caller gets the
    error, not an ExceptionGroup: the dialects map it to their own status codes."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(_await(job)) for job in jobs]
    except BaseExceptionGroup as eg:
        raise _first(eg) from None
    return [task.result() for task in tasks]


async def _await(job: Awaitable[T]) -> T:
    return await job
