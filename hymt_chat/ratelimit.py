"""Per-user message rate limit (moving window, in memory; one process, no gateway needed)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from limits import RateLimitItem, parse_many
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter

from .errors import RateLimitedError

if TYPE_CHECKING:
    from .settings import Settings

__all__ = ["RateLimiter", "get_rate_limiter"]


class RateLimiter:
    """``hit(key)`` once per user message; raises ``RateLimitedError`` over the limit.

    *spec* uses the ``limits`` notation ("20/minute", or several: "3/second; 20/minute");
    an empty spec disables the limit.
    """

    def __init__(self, spec: str = "20/minute") -> None:
        self.spec = spec.strip()
        self._items = parse_many(self.spec) if self.spec else []
        self._limiter = MovingWindowRateLimiter(MemoryStorage()) if self._items else None

    @property
    def enabled(self) -> bool:
        return self._limiter is not None

    def hit(self, key: str) -> None:
        """Count one message of *key*, or raise ``RateLimitedError`` (and count nothing)."""
        limiter = self._limiter
        if limiter is None:
            return
        # Test every limit first, so a refused message uses up none of them.
        waits = [self._wait(item, key) for item in self._items if not limiter.test(item, key)]
        if not waits:
            for item in self._items:
                if not limiter.hit(item, key):  # lost a race with another thread
                    waits.append(self._wait(item, key))
        if waits:
            raise RateLimitedError(max(waits))

    def _wait(self, item: RateLimitItem, key: str) -> float:
        """Seconds until the oldest hit in the moving window expires and frees one place."""
        assert self._limiter is not None
        stats = self._limiter.get_window_stats(item, key)
        return max(0.0, stats.reset_time - time.time())  # limits keeps wall-clock timestamps


_RATE_LIMITER: RateLimiter | None = None


def get_rate_limiter(settings: Settings) -> RateLimiter:
    """The process-wide limiter, built from ``settings.rate_limit`` on first use."""
    global _RATE_LIMITER
    if _RATE_LIMITER is None:
        _RATE_LIMITER = RateLimiter(settings.rate_limit)
    return _RATE_LIMITER
