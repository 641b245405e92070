"""The progress line of a translation: parts done, time left, and why it waits.

It is shown only when there is news (a text of several parts, a retry, a wait), and updated at
most every 0.4 s so that a 100-part document does not flood the socket. A waiting request hears
of every move of the queue (each request served ahead of it): its place is redrawn at most
every 2 s, by one task whatever the number of moves — with 500 tabs waiting, a redraw per move
was 500 socket messages per answer (``benchmarks/app_ceiling.py`` at 512 sessions). The clock
and the sleep are injected.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from hymt_chat.engine.pacing import eta_seconds
from hymt_chat.engine.policy import PolicyEvent
from hymt_chat.modes import wording
from hymt_chat.modes.page_text import PageText
from hymt_chat.modes.screen import ProgressView, Reply, Shown

__all__ = ["Progress"]

_EVERY = 0.4  # seconds between two updates of the same line
_QUEUE_EVERY = 2.0  # ... when only the place in the queue moved


class Progress:
    """One job's progress, drawn on a :class:`ProgressView`."""

    def __init__(self, view: ProgressView, title: str, *, always: bool = False,
                 base: int = 0, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
                 page: PageText | None = None, expected: float | None = None,
                 parallel: Callable[[], int] | None = None) -> None:
        self.view = view
        self.page = page or PageText()  # the language the line speaks
        self.title = title
        self.always = always  # files: shown from the start, not only at the first news
        self.base = base  # parts done before this run (Retry the rest): not this run's pace
        self.clock = clock
        self.sleep = sleep
        # Before the first part is back: the seconds the whole job should take at the model's
        # measured pace (None: not measured yet); and how many parts go at once.
        self.expected = expected
        self.parallel = parallel
        self.done = self.total = 0
        self.note: str | None = None
        self.queued = False  # the note is a place in the queue
        self.shown = False
        self.closed = False
        self.last = 0.0
        self.started = clock()
        self._lock = asyncio.Lock()  # policy events arrive from several segments at once
        self._redraw: asyncio.Task[None] | None = None  # the one pending redraw of a new note

    def name(self) -> str:
        parts = [self.title]
        if self.total > 1:
            eta = None if self.note == self.page["cancelled"] else self.eta()
            parts.append(wording.progress_label(self.done, self.total, eta, self.page,
                                                waiting=self.note is not None))
        if self.note:
            parts.append(self.note)
        return " · ".join(parts)

    def eta(self) -> float | None:
        """Seconds left: from the pace of the parts back so far, counted in rounds of the
        parts sent at once; before the first, from the measured pace (*expected*), while
        that has time left; else None."""
        done, total = self.done - self.base, self.total - self.base
        elapsed = self.clock() - self.started
        if done <= 0:
            left = None if self.expected is None else self.expected - elapsed
            return left if left is not None and left >= 1 else None
        return eta_seconds(done, total, elapsed, self.parallel() if self.parallel else 1)

    async def _show(self, force: bool = False) -> None:
        async with self._lock:
            if self.closed:
                return
            if not self.shown or force or self.clock() - self.last > _EVERY:
                self.shown = True
                await self.view.update(self.name())
            self.last = self.clock()

    async def start(self) -> None:
        if self.always:
            await self._show()

    async def progress(self, done: int, total: int) -> None:
        """The translator's progress callback. The count is drawn at once when it is first
        known (a job's line, shown from its start, said only "Translating" until a part was
        back) and at the end; in between at most every 0.4 s."""
        counted = total != self.total
        self.done, self.total = done, total
        if total > 1 or self.shown:
            self.note, self.queued = None, False
            await self._show(force=done == total or counted)

    def event(self, event: PolicyEvent) -> None:
        """The policy's event callback (synchronous): a retry or a wait becomes the note, shown
        by one redraw task: at once if the line was quiet long enough, else when it has been."""
        note = wording.describe_event(event, self.page)
        if note == self.note or (note is None and not (self.note and event.kind == "started")):
            return
        moved = self.queued and event.kind == "queued"  # only the place changed
        self.note, self.queued = note, note is not None and event.kind == "queued"
        if self._redraw is None:
            every = _QUEUE_EVERY if moved else _EVERY
            self._redraw = asyncio.get_running_loop().create_task(self._redraw_after(every))

    async def _redraw_after(self, every: float) -> None:
        try:
            wait = self.last + every - self.clock() if self.shown else 0.0
            if wait > 0:
                await self.sleep(wait)
        finally:
            self._redraw = None
        await self._show(force=True)

    async def finish(self, *, failed: bool = False, cancelled: bool = False) -> None:
        """Close the line: done, failed, or cancelled (then it says so, with the parts done)."""
        if self._redraw is not None:
            self._redraw.cancel()
        async with self._lock:
            self.closed = True
            if self.shown:
                self.note = self.page["cancelled"] if cancelled else None
                await self.view.close(self.name(), failed=failed or cancelled)

    async def end(self) -> bool:
        """The work is done: no more redraws; the line waits to :meth:`become` the result (a
        "7 of 7 parts" left above the answer says nothing). True when a line is on screen."""
        if self._redraw is not None:
            self._redraw.cancel()
        async with self._lock:
            self.closed = True
            return self.shown

    async def become(self, reply: Reply) -> Shown:
        """The line, ended, turned into *reply* (its Cancel gone, the reply's buttons on)."""
        return await self.view.replace(reply)

    @property
    def seconds(self) -> float:
        return self.clock() - self.started
