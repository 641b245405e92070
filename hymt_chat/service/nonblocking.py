"""Take a library's blocking ``time.sleep`` off the event loop.

Chainlit (2.x) calls ``time.sleep(0.001)`` in ``Message.__init__`` and ``Step.__init__`` so that
two objects made back to back get different ``created_at`` stamps. On the event loop that is a
millisecond with every tab frozen, several times per answer (the run step, the user's message,
the reply, the progress step): measured as the largest single cost of a message in
``benchmarks/app_ceiling.py``. The stamps have microseconds, and making one of these objects
takes far longer than a microsecond, so they stay distinct without the sleep.
"""

from __future__ import annotations

import time
import types
from typing import Any

__all__ = ["drop_blocking_sleep"]


class _TimeWithoutSleep(types.ModuleType):
    """The ``time`` module with ``sleep`` as a no-op; everything else is the real one."""

    def __init__(self) -> None:
        super().__init__("time")

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)

    @staticmethod
    def sleep(seconds: float) -> None:
        return None


def drop_blocking_sleep(*modules: types.ModuleType) -> None:
    """Make ``time.sleep`` a no-op inside *modules* only (their global ``time`` name)."""
    for module in modules:
        if getattr(module, "time", None) is not time:
            raise TypeError(f"{module.__name__} has no global `time` module to replace")
        module.time = _TimeWithoutSleep()  # type: ignore[attr-defined]
