"""Who is typing in a room, told to the other side without flooding it, and forgotten on its own.

A page says "typing" at most once every :data:`EVERY` seconds while a key is pressed (the guest's
page, the agent's tab: their scripts throttle too, and :meth:`Typing.mark` throttles again here
so that a page that does not cannot flood the other side or the relay between replicas). The
other side shows it for :data:`SHOWN` seconds after the last one it got — each event carries that
number, so an indicator expires by itself even when its side goes away without a word — and
drops it at once when that side's message arrives (:meth:`Typing.stop`). Nothing here knows a
page; the clock is injected.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["EVERY", "SHOWN", "Typing"]

EVERY = 2.0  # a side's "typing" goes on to the other side at most this often
SHOWN = 6.0  # and is shown there this long after the last one (more than EVERY: no flicker)


class Typing:
    """The two sides' latest keystrokes (``"agent"``, ``"guest"``)."""

    def __init__(self, clock: Callable[[], float] = time.time, *, every: float = EVERY,
                 shown: float = SHOWN) -> None:
        self.clock, self.every, self.shown = clock, every, shown
        self._last: dict[str, float] = {}  # who -> when it was last said to the other side

    def mark(self, who: str) -> bool:
        """*who* typed: True when the other side is to be told now (the first keystroke, or
        the first one :attr:`every` seconds after the last told)."""
        now = self.clock()
        last = self._last.get(who)
        if last is not None and now - last < self.every:
            return False
        self._last[who] = now
        return True

    def stop(self, who: str) -> bool:
        """*who*'s message arrived: True when the other side still shows them typing."""
        was = self.active(who)
        self._last.pop(who, None)
        return was

    def active(self, who: str) -> bool:
        """Does the other side show *who* typing now (told less than :attr:`shown` ago)?"""
        last = self._last.get(who)
        return last is not None and self.clock() - last < self.shown

    def event(self, who: str, *, typing: bool = True) -> dict[str, object]:
        """What a page gets: who, and how long to show it (0: no longer)."""
        return {"type": "typing", "who": who, "seconds": self.shown if typing else 0}
