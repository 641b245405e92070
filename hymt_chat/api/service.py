"""What every API route shares: the translator, the door (keys, limits, quota), the metrics,
and one guard that turns any failure into the dialect's error and counts the outcome.

The translation memory, in both dialects: a request header ``X-Hymt-Memory: off`` keeps it out
of that request (nothing read, nothing written); every translate answer says what it gave in
``X-Hymt-Memory`` (``hit``: every segment, ``partial``, ``miss``, ``off``) and
``X-Hymt-Memory-Segments`` (``found/looked up``). Neither dialect has a field for it (DeepL has
none; LibreTranslate's own ``--translation-cache`` answers a hit with the same body, unmarked):
headers leave both bodies as their clients parse them.

The checks' findings, in both dialects: each translation carries what the checks
(:mod:`hymt_chat.text.checks`) still found wrong in it as :data:`FLAGS_FIELD`, a list of
``{"kind", "message"}`` (empty when every check passed), beside the dialect's own fields, and
the answer counts them all in :data:`FLAGS_HEADER` (a number: a header is ASCII, the messages
are not). The official clients read their own fields by name and never the headers, so an
extra field is invisible to them (``tests/test_api_flags.py`` cites their lines).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from starlette.requests import Request
from starlette.responses import Response

from hymt_chat.api.access import Access, Caller, Charge
from hymt_chat.api.work import Job, Result, TranslatorLike, job_cost, run_job
from hymt_chat.engine.recall import MemoryUse, memory_use
from hymt_chat.errors import (
    AccessDeniedError,
    BodyTooLargeError,
    HymtError,
    InputError,
    QuotaExceededError,
    RateLimitedError,
)
from hymt_chat.service.metrics import Metrics, outcome_of
from hymt_chat.service.ratelimit import client_address
from hymt_chat.settings import Settings
from hymt_chat.text.checks import Finding

__all__ = ["FLAGS_FIELD", "FLAGS_HEADER", "ApiService", "ClientGoneError", "Context",
           "api_outcome", "flag_list"]

_log = logging.getLogger("hymt_chat.api")
T = TypeVar("T")
MEMORY_HEADER = "X-Hymt-Memory"
FLAGS_FIELD = "hymt_flags"  # one name in both dialects: a caller of both looks for one
FLAGS_HEADER = "X-Hymt-Flags"
_OFF = frozenset({"off", "false", "0", "no"})


def flag_list(flags: Iterable[Finding]) -> list[dict[str, str]]:
    """The findings as :data:`FLAGS_FIELD` answers them: each one's kind and its sentence."""
    return [{"kind": f.kind, "message": f.message} for f in flags]


class ClientGoneError(HymtError):
    """The client hung up (or timed out and will retry) before its answer was ready."""


def api_outcome(err: BaseException) -> str:
    """The ``outcome`` label of a refused or failed API request."""
    for kind, label in ((ClientGoneError, "cancelled"),
                        (BodyTooLargeError, "too_large"), (AccessDeniedError, "denied"),
                        (QuotaExceededError, "quota"), (RateLimitedError, "rate_limited"),
                        (InputError, "refused")):
        if isinstance(err, kind):
            return label
    return outcome_of(err)


@dataclass(slots=True)
class Context:
    """One request as it goes: who (once known) and what was charged (refunded on failure)."""

    request: Request
    caller: Caller | None = None
    charge: Charge | None = None
    billed: int = 0
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(slots=True)
class ApiService:
    translator: TranslatorLike
    settings: Settings
    access: Access
    metrics: Metrics | None = None

    def client(self, request: Request) -> str:
        """The caller's address (behind HYMT_TRUSTED_PROXIES, the one they forwarded)."""
        return client_address(request.client.host if request.client else None)

    async def authenticate(self, ctx: Context, key: str | None) -> Caller:
        ctx.caller = await self.access.authenticate(key, self.client(ctx.request))
        return ctx.caller

    async def translate(self, ctx: Context, job: Job) -> list[Result]:
        """Admit (rate limit, quota) and run *job* for the authenticated caller."""
        assert ctx.caller is not None
        cost = await asyncio.to_thread(job_cost, job, self.settings)  # decided before any call
        ctx.charge = await self.access.admit(ctx.caller, cost)
        on = (getattr(self.translator, "memory", None) is not None  # HYMT_MEMORY off: "off"
              and ctx.request.headers.get(MEMORY_HEADER, "").strip().lower() not in _OFF)
        with memory_use(read=on, write=on) as use:  # the task unless_gone makes inherits it
            ctx.extra["memory"] = use
            results = await self.unless_gone(ctx, run_job(self.translator, job,
                                                          user=ctx.caller.user))
        ctx.billed = job.chars
        self.flagged(ctx, sum(len(r.flags) for r in results))
        return results

    @staticmethod
    def flagged(ctx: Context, count: int) -> None:
        """Say *count* findings in the answer's :data:`FLAGS_HEADER` (set by :meth:`guard`)."""
        ctx.extra["flags"] = count

    async def unless_gone(self, ctx: Context, work: Awaitable[T]) -> T:
        """*work*, cancelled the moment the client disconnects (ClientGoneError).

        DeepL's Python client waits 10 s for the first byte, then retries the same request:
        without this, every abandoned try would keep its model calls running (cancelling
        closes them, and vLLM aborts their generation). The hang-up is awaited on the
        request's own ``receive`` (an ``http.disconnect``), not polled with
        ``Request.is_disconnected()``: behind a BaseHTTPMiddleware (the app's security
        headers) that poll never sees the disconnect, and an abandoned request would run every
        call. Only call it once the body is read.
        """
        task = asyncio.ensure_future(work)
        gone = asyncio.ensure_future(_hung_up(ctx.request))
        try:
            await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
            if task.done():
                return task.result()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)  # its calls closed, counted
            raise ClientGoneError("The client closed the connection before the answer.")
        finally:
            for pending in (task, gone):
                if not pending.done():
                    pending.cancel()

    async def guard(self, dialect: str, request: Request,
                    work: Callable[[Context], Awaitable[Response]],
                    error: Callable[[BaseException], Response]) -> Response:
        """Run *work*; any failure becomes ``error(err)``; the outcome is counted either way."""
        ctx = Context(request)
        try:
            response = await work(ctx)
        except Exception as err:  # noqa: BLE001 - every failure gets the dialect's error shape
            if ctx.charge is not None:
                await self.access.refund(ctx.charge)
            outcome = api_outcome(err)
            if outcome == "error":
                _log.exception("API request %s %s failed", request.method, request.url.path)
            self._count(dialect, ctx, outcome)
            return error(err)
        self._count(dialect, ctx, "ok")
        use = ctx.extra.get("memory")
        if isinstance(use, MemoryUse):
            response.headers[MEMORY_HEADER] = use.summary
            response.headers[f"{MEMORY_HEADER}-Segments"] = f"{use.found}/{use.looked}"
        flags = ctx.extra.get("flags")
        if isinstance(flags, int):
            response.headers[FLAGS_HEADER] = str(flags)
        return response

    def _count(self, dialect: str, ctx: Context, outcome: str) -> None:
        if self.metrics is not None:
            name = ctx.caller.name if ctx.caller else "none"
            self.metrics.observe_api(dialect, name, outcome, ctx.billed if outcome == "ok" else 0)


async def _hung_up(request: Request) -> None:
    """Return when the client of *request* (its body already read) disconnects."""
    while (await request.receive())["type"] != "http.disconnect":
        await asyncio.sleep(0.5)  # a stray body message: never a busy loop
