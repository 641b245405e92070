"""A job's progress line under a moving queue: every move is heard, few are drawn."""

from __future__ import annotations

import asyncio

import pytest

from hymt_chat.engine.policy import PolicyEvent
from hymt_chat.modes.progress import Progress
from tests.support.sessions import Line


class Clock:
    def __init__(self) -> None:
        self.now = 100.0  # the queue moves while it stands still

    def __call__(self) -> float:
        return self.now


class Sleeps:
    """An injected sleep that returns when the test says (and records how long was asked)."""

    def __init__(self) -> None:
        self.asked: list[float] = []
        self.go = asyncio.Event()

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)
        await self.go.wait()


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_queue_that_moves_a_hundred_times_is_drawn_twice_with_the_newest_place():
    line, clock, sleeps = Line(), Clock(), Sleeps()
    progress = Progress(line, "Translating", clock=clock, sleep=sleeps)
    progress.event(PolicyEvent("queued", ahead=120))
    await _settle()
    assert line.names == ["Translating · busy — waiting (120 ahead)"]  # news: shown at once
    clock.now += 0.5
    for ahead in range(119, 19, -1):  # each request served ahead of this one is an event
        progress.event(PolicyEvent("queued", ahead=ahead))
    await _settle()
    assert len(line.names) == 1 and sleeps.asked == [1.5]  # one redraw waits out the 2 s
    sleeps.go.set()
    await _settle()
    assert line.names[1:] == ["Translating · busy — waiting (20 ahead)"]


async def test_the_line_closed_is_not_redrawn_by_a_late_note():
    line, clock, sleeps = Line(), Clock(), Sleeps()
    progress = Progress(line, "Translating", clock=clock, sleep=sleeps)
    progress.event(PolicyEvent("queued", ahead=3))
    await _settle()
    progress.event(PolicyEvent("queued", ahead=2))  # a redraw waits...
    await _settle()
    await progress.finish()  # ...and the answer comes first
    sleeps.go.set()
    await _settle()
    assert line.names == ["Translating · busy — waiting (3 ahead)"]
    assert line.closed == ("Translating", False)


async def test_a_retry_note_after_the_wait_is_drawn_within_the_short_interval():
    line, clock, sleeps = Line(), Clock(), Sleeps()
    progress = Progress(line, "Translating", clock=clock, sleep=sleeps)
    progress.event(PolicyEvent("queued", ahead=1))
    await _settle()
    progress.event(PolicyEvent("retrying", delay=2.0, error="busy"))
    await _settle()
    assert sleeps.asked == [pytest.approx(0.4)]
    sleeps.go.set()
    await _settle()
    assert line.names[-1].startswith("Translating · model busy — retrying in")


async def test_a_line_shown_from_its_start_draws_the_count_as_soon_as_it_is_known():
    """A background job's line says "Translating" from its start; the part count that comes a
    moment later is drawn at once, not only when the first part is back (a 20,000-character
    paste showed "Translating" alone for minutes)."""
    line, clock, sleeps = Line(), Clock(), Sleeps()
    progress = Progress(line, "Translating", always=True, clock=clock, sleep=sleeps)
    await progress.start()
    clock.now += 0.1  # well within the 0.4 s between two redraws
    await progress.progress(0, 12)
    clock.now += 0.1
    await progress.progress(1, 12)  # an ordinary step: waits for its turn
    assert line.names == ["Translating", "Translating · 12 parts · on their way"]
