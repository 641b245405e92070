"""Who is calling the API, and may they: the key, the per-key rate limit, the monthly quota.

* No active key in the store and ``HYMT_API_OPEN_LOCAL`` off: the API is off (403 that says how
  to turn it on). With the setting on, a request *without* a key from 127.0.0.1 / ::1 is served
  as "local" under the app's own per-user limit; a request from elsewhere still needs a key.
* A key that is unknown or revoked: 403, whatever the setting.
* Per key: ``per_minute`` requests in a moving window (429 with Retry-After), the app's
  per-user model calls (``HYMT_RATE_LIMIT_CALLS``: a 50-text list is 50 calls, a text of
  three lines three), and ``chars_per_month`` characters, charged when a request is admitted
  and refunded when its translation fails (456 when the month's quota would be exceeded).
  What a request costs is decided once, before any work (:class:`Cost`).

The key store is a blocking database (a SQLite file, or PostgreSQL over the network with several
replicas): every call the API makes of it runs in a worker thread (:meth:`Access.keys`), never
on the event loop. With ``HYMT_REDIS_URL`` the per-key rate limits live in Redis too, so a key
gets its ``per_minute`` once, not once per replica.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from hymt_chat.api.keys import KeyStore
from hymt_chat.errors import AccessDeniedError
from hymt_chat.service.ratelimit import Cost, RateLimiter

__all__ = ["LOCAL", "Access", "Caller", "Charge"]

P = ParamSpec("P")
T = TypeVar("T")

LOCAL = "local"
_NOTHING = Cost(0, 0)  # a request that costs nothing (the default of admit)
_LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})
OFF_MESSAGE = ("The API is off: no API key is configured. Create one with `hymt-chat api-key "
               "create NAME`, or set HYMT_API_OPEN_LOCAL=1 to open it to 127.0.0.1 without keys.")


@dataclass(frozen=True, slots=True)
class Caller:
    """An admitted caller: its name is the metrics label and the fairness key."""

    name: str
    chars_per_month: int | None
    per_minute: int | None  # None: the app's own limit (HYMT_RATE_LIMIT), local callers

    @property
    def user(self) -> str:
        """The key of the policy's fair queue: API callers never share one with chat users."""
        return f"api:{self.name}"


@dataclass(frozen=True, slots=True)
class Charge:
    caller: Caller
    chars: int
    month: str | None


class Access:
    def __init__(self, store: KeyStore, *, open_local: bool, local_limit: str,
                 local_chars: str = "", limit_storage: str = "", calls: str = "") -> None:
        """*limit_storage*: the rate limits' ``limits`` storage (``HYMT_REDIS_URL``); empty:
        this process's memory. *calls*: model calls per caller (``HYMT_RATE_LIMIT_CALLS``)."""
        self.store = store
        self.open_local = open_local
        self._storage = limit_storage
        self._local = RateLimiter(local_limit, local_chars, storage=limit_storage, calls=calls)
        self._calls = RateLimiter("", storage=limit_storage, calls=calls)
        self._limiters: dict[tuple[str, int], RateLimiter] = {}

    async def keys(self, call: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``call(*args)``, a method of the key store, in a worker thread: its database IO
        (a network round trip on PostgreSQL) must not stall every other request."""
        return await asyncio.to_thread(call, *args, **kwargs)

    def status_line(self) -> str:
        """The one line the app logs at start."""
        keys = self.store.active_count()
        if keys:
            extra = "; also open without a key to 127.0.0.1" if self.open_local else ""
            return f"API (/libretranslate, /deepl): {keys} key(s) in {self.store.location}{extra}."
        if self.open_local:
            return "API (/libretranslate, /deepl): open without a key to 127.0.0.1 only."
        return OFF_MESSAGE

    async def authenticate(self, key: str | None, client: str) -> Caller:
        """The caller of a request with *key* (None: none given) from address *client*."""
        if key:
            found = await self.keys(self.store.lookup, key)
            if found is None:
                raise AccessDeniedError("Invalid API key (unknown or revoked).")
            return Caller(found.name, found.chars_per_month, found.per_minute)
        if self.open_local and client in _LOOPBACK:
            return Caller(LOCAL, None, None)
        if not self.open_local and await self.keys(self.store.active_count) == 0:
            raise AccessDeniedError(OFF_MESSAGE)
        raise AccessDeniedError("An API key is required (ask the operator for one: "
                                "`hymt-chat api-key create NAME`).")

    async def admit(self, caller: Caller, cost: Cost = _NOTHING) -> Charge:
        """One request of *cost*: RateLimitedError or QuotaExceededError, or a charge to
        :meth:`refund` if the translation fails."""
        chars = cost.chars
        if caller.per_minute is None:
            await self._local.ahit(caller.user, cost)
        else:
            slot = (caller.name, caller.per_minute)
            limiter = self._limiters.get(slot)
            if limiter is None:  # a Redis storage is checked once when made: off the loop too
                limiter = await asyncio.to_thread(RateLimiter, f"{caller.per_minute}/minute",
                                                  storage=self._storage)
                limiter = self._limiters.setdefault(slot, limiter)
            await limiter.ahit(caller.user)  # 'api:NAME': never a chat user's window in Redis
            await self._calls.ahit(caller.user, cost)
        month = None
        if chars:  # counted for every caller (DeepL's /v2/usage), limited where a quota is set
            month = await self.keys(self.store.charge, caller.name, chars,
                                    caller.chars_per_month)
        return Charge(caller, chars, month)

    async def refund(self, charge: Charge) -> None:
        if charge.month is not None:
            await self.keys(self.store.refund, charge.caller.name, charge.chars, charge.month)
