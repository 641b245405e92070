"""One limiter for all work, per user (moving windows; in memory, or in Redis for replicas).

Every job draws from it — a message, a file, a Retry / Swap / Translate-into button, a room
guest's or a counter's message, an API request — and is charged what it costs (:class:`Cost`,
decided before the work starts by :mod:`hymt_chat.modes.cost`): one job, the model calls it
will make, and its characters. A JSON file of 1,000 values costs 1,000 calls, not "one
message" (9,891 characters would otherwise cost one job and make 1,000 calls).
The key is the signed-in identity, else the client's address (:func:`client_address`): a new
browser session per message does not start a new allowance.

With ``HYMT_REDIS_URL`` the windows live in Redis (``limits``' Redis storage), so several app
replicas share each user's allowance: a user cannot get N times the limit by landing on N
replicas. The app calls :meth:`RateLimiter.ahit`, which does the Redis round trips off the
event loop.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from limits import RateLimitItem, parse_many
from limits.storage import MemoryStorage, Storage, storage_from_string
from limits.strategies import MovingWindowRateLimiter

from hymt_chat.errors import RateLimitedError

if TYPE_CHECKING:
    from hymt_chat.settings import Settings

__all__ = ["Cost", "RateLimiter", "client_address", "limit_storage", "limiter_for"]


@dataclass(frozen=True, slots=True)
class Cost:
    """What one job costs: the model calls it will make and the characters it sends."""

    calls: int = 1
    chars: int = 0

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.calls + other.calls, self.chars + other.chars)


_UNITS = {"chars": "characters", "calls": "model calls"}


class RateLimiter:
    """``hit(key, chars=n, calls=m)`` once per job; raises ``RateLimitedError`` over a limit.

    *spec* limits jobs, *chars* characters, *calls* model calls, each in the ``limits``
    notation ("20/minute", or several: "3/second; 20/minute"); an empty spec disables that
    limit.
    """

    def __init__(self, spec: str = "20/minute", chars: str = "", storage: str = "",
                 calls: str = "") -> None:
        """*storage*: a ``limits`` storage URI (``redis://host:6379/0``); empty: this process's
        memory."""
        self.spec = spec.strip()
        self._items = [(item, "jobs") for item in parse_many(self.spec)] if self.spec else []
        for kind, given in (("chars", chars), ("calls", calls)):
            if given.strip():
                self._items += [(item, kind) for item in parse_many(given.strip())]
        self.shared = bool(storage.strip())
        self._limiter = (MovingWindowRateLimiter(limit_storage(storage)) if self._items else None)

    @property
    def enabled(self) -> bool:
        return self._limiter is not None

    async def ahit(self, key: str, cost: Cost = Cost()) -> None:
        """:meth:`hit` of *cost* for the event loop: a shared (Redis) storage is asked from a
        thread."""
        if self.shared and self._limiter is not None:
            await asyncio.to_thread(self.hit, key, cost.chars, cost.calls)
        else:
            self.hit(key, cost.chars, cost.calls)

    def hit(self, key: str, chars: int = 0, calls: int = 1) -> None:
        """Charge one job of *chars* characters and *calls* model calls to *key*, or raise
        ``RateLimitedError`` (and charge nothing). A job larger than a whole allowance can
        never pass: it is refused with the allowance stated, not with a wait that would never
        end."""
        limiter = self._limiter
        if limiter is None:
            return
        amounts = {"jobs": 1, "chars": max(0, chars), "calls": max(0, calls)}
        costs = [(item, kind, amounts[kind]) for item, kind in self._items]
        for item, kind, cost in costs:
            if kind != "jobs" and cost > item.amount:
                raise RateLimitedError(0, too_big=(cost, item.amount), unit=_UNITS[kind])
        # Test every limit first, so a refused job uses up none of them.
        waits = [self._wait(item, key) for item, _, cost in costs
                 if cost and not limiter.test(item, key, cost=cost)]
        if not waits:
            for item, _, cost in costs:
                if cost and not limiter.hit(item, key, cost=cost):  # lost a race
                    waits.append(self._wait(item, key))
        if waits:
            raise RateLimitedError(max(waits))

    def _wait(self, item: RateLimitItem, key: str) -> float:
        """Seconds until the oldest hit in the moving window expires and frees one place."""
        assert self._limiter is not None
        stats = self._limiter.get_window_stats(item, key)
        return max(0.0, stats.reset_time - time.time())  # limits keeps wall-clock timestamps


def limit_storage(uri: str) -> Storage:
    """The moving windows' storage of every limiter (*uri*: ``HYMT_REDIS_URL``; empty: this
    process); a Redis that does not answer stops the app at start, said."""
    if not uri.strip():
        return MemoryStorage()
    if uri.strip().startswith("async+"):  # the limiter here is synchronous
        raise RuntimeError(f"the rate-limit storage {uri!r} (HYMT_REDIS_URL) is asynchronous; "
                           "name it without the async+ prefix")
    storage = storage_from_string(uri.strip())
    if not isinstance(storage, Storage) or not storage.check():
        raise RuntimeError(f"the rate-limit storage {uri!r} (HYMT_REDIS_URL) does not answer")
    return storage


def client_address(peer: str | None) -> str:
    """The client's address: the ASGI scope's client. Proxy trust is decided once, by uvicorn's
    proxy-headers middleware (``FORWARDED_ALLOW_IPS``, set from HYMT_TRUSTED_PROXIES by
    :func:`hymt_chat.service.web.install_guards`): behind a trusted proxy it has already put
    the right-most ``X-Forwarded-For`` address that is not a proxy there."""
    return peer or "unknown"


def limiter_for(settings: Settings) -> RateLimiter:
    """The chat's limiter: ``HYMT_RATE_LIMIT`` and its characters and calls, in Redis when set."""
    return RateLimiter(settings.rate_limit, settings.rate_limit_chars, storage=settings.redis_url,
                       calls=settings.rate_limit_calls)
