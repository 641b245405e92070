"""Retry and downgrade: one adaptive window of model calls, a fair queue in front of it, retries.

Every model call of the process goes through one :class:`Policy`:

* **Window (AIMD, like TCP).** At most ``window`` calls run at once. A 503 halves it (from the
  number of calls actually in flight, floor ``window_min``), once per congestion episode; each run
  of ``window`` consecutive successes widens it by one, up to ``window_max``.
* **Sized to the engine.** ``window_max`` is what the engine can *run* (its ``--max-num-seqs``,
  see :func:`hymt_chat.sidecar.capacity.engine_slots`), not what it can queue: a request
  waiting inside vLLM is out of our hands (order and time), so almost nothing should wait
  there. A 503 is the safety net, not the signal the window grows towards. The engine's own
  metrics move the ceiling while calls run (:meth:`Policy.resize`, driven by
  :mod:`hymt_chat.engine.window`): down to what runs when requests wait inside vLLM.
* **A lead for live messages.** With more live calls than the engine runs, ``lead`` more may
  go out and wait *inside* vLLM, where its priority scheduling orders them: when a batch ends,
  the engine starts them at its next step, instead of idling while this process reads the
  finished answers and sends the next ones (measured on an H100: 0.85-0.88 of raw vLLM at 128
  users without it). Only at the full window (no 503 lately), never for background classes.
* **Classes first** (:mod:`hymt_chat.engine.priority`). Waiting calls are served by class rank
  (interactive, best, check, bulk), and background classes never hold more than
  ``window - reserve`` slots: an interactive message always finds a slot free of documents.
* **Fair queue.** Within a class, calls wait round-robin across users, FIFO within a user, so
  one user's 50 segments cannot starve another user's single message.
* **Retry.** ``ModelBusyError`` and ``ModelUnavailableError`` are retried (via ``stamina``) with
  exponential backoff and full jitter, or exactly ``retry_after`` seconds when the server said so,
  until the per-message deadline (and ``ModelTimeoutError`` too when the caller sized each try's
timeout itself and asks for it: ``retry_timeouts``). During the backoff the slot is given back; the retry then
  rejoins the queue ahead of every first try of its class (retries in arrival order): it
  already waited its turn, and a 503 is the server's refusal, not the user's. Anything else
  propagates at once.

The policy does no I/O besides ``asyncio`` sleeps. It reports what happens as
:class:`PolicyEvent` objects to a per-call sink (the UI) and to the policy's hooks (metrics).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeVar

import stamina

from hymt_chat.engine.priority import DEFAULT_RANKS, INTERACTIVE, parse_ranks
from hymt_chat.errors import (
    ModelBusyError,
    ModelError,
    ModelTimeoutError,
    ModelUnavailableError,
    reason_label,
)

if TYPE_CHECKING:
    from hymt_chat.settings import Settings

__all__ = ["EventSink", "Policy", "PolicyEvent", "policy_for", "segment_parallelism",
           "window_lead"]

T = TypeVar("T")

_RETRYABLE = (ModelBusyError, ModelUnavailableError, ModelTimeoutError)
_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PolicyEvent:
    """Something that happened to one call; the UI and metrics hooks decide what to show."""

    kind: Literal["queued", "started", "retrying", "gave_up", "succeeded"]
    ahead: int = 0  # requests that will be served before this one (kind="queued")
    attempt: int = 0
    delay: float = 0.0  # seconds until the next try (kind="retrying")
    error: str = ""  # short reason: "busy (503)", "unavailable", ...


EventSink = Callable[[PolicyEvent], None]


def _seconds(value: float) -> str:
    """180.0 -> "180", 1.748 -> "2", 0.3 -> "0.3": whole seconds unless under one."""
    return f"{value:.0f}" if value >= 1 else f"{value:.1f}"


def _no_slot(req: _Request) -> ModelError:
    """Raised inside an attempt whose deadline ran out in the queue; run() rewords it."""
    kind = type(req.last_error) if req.last_error else ModelBusyError
    return kind("no free slot in the request window before the deadline")


@dataclass(eq=False, slots=True)
class _Request:
    """One ``Policy.run`` call: who asked, its deadline, and where it is."""

    user: str
    on_event: EventSink | None
    budget: float
    deadline_at: float
    rank: int = 0
    background: bool = False  # not interactive: may not take the reserved slots
    retry_timeouts: bool = False
    attempt: int = 0
    last_error: ModelError | None = None  # last busy/unavailable answer of the server
    expired: bool = False  # the deadline ran out (in the queue or before a retry)
    too_long: float | None = None  # Retry-After asked for more than the time left
    waiter: asyncio.Future[None] | None = None  # set while queued
    queued: bool = False
    ahead: int | None = None  # last "ahead" reported


@dataclass(eq=False, slots=True)
class _Line:
    """The waiting requests of one class: retries first, then round-robin across users."""

    queues: dict[str, deque[_Request]] = field(default_factory=dict)  # user -> FIFO
    ring: deque[str] = field(default_factory=deque)  # users with waiting requests
    retries: deque[_Request] = field(default_factory=deque)

    def __len__(self) -> int:
        return len(self.retries) + sum(len(q) for q in self.queues.values())

    def push(self, req: _Request, *, retry: bool) -> None:
        if retry:
            self.retries.append(req)
            return
        line = self.queues.get(req.user)
        if line is None:
            line = self.queues[req.user] = deque()
            self.ring.append(req.user)  # a newcomer is served after everyone waiting
        line.append(req)

    def remove(self, req: _Request) -> None:
        if req in self.retries:
            self.retries.remove(req)
            return
        line = self.queues[req.user]
        line.remove(req)
        if not line:
            del self.queues[req.user]
            self.ring.remove(req.user)

    def pop(self) -> _Request:
        if self.retries:
            return self.retries.popleft()
        user = self.ring.popleft()
        line = self.queues[user]
        req = line.popleft()
        if line:
            self.ring.append(user)  # round-robin: this user's next one waits for the others
        else:
            del self.queues[user]
        return req

    def order(self) -> list[_Request]:
        """The order pop() would serve them in: the i-th of every user before anyone's i+1-th."""
        out = list(self.retries)
        lines = [self.queues[u] for u in self.ring]
        for i in range(max(map(len, lines), default=0)):
            out.extend(line[i] for line in lines if i < len(line))
        return out


class Policy:
    """One adaptive window of in-flight calls, a fair queue in front of it, and retries."""

    def __init__(
        self,
        *,
        window_max: int = 8,
        window_min: int = 1,
        deadline: float = 180.0,
        retries: bool = True,
        initial_delay: float = 0.25,
        max_delay: float = 5.0,
        reserve: int = 1,
        lead: int = 0,
        ranks: str = DEFAULT_RANKS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 1 <= window_min <= window_max:
            msg = f"need 1 <= window_min ({window_min}) <= window_max ({window_max})"
            raise ValueError(msg)
        if reserve < 0:
            raise ValueError(f"reserve must be >= 0, not {reserve}")
        if lead < 0:
            raise ValueError(f"lead must be >= 0, not {lead}")
        self._reserve = reserve
        self._lead = lead
        self._ranks = parse_ranks(ranks)
        self._window_max = window_max
        self._window_min = window_min
        self._min_asked = window_min  # window_min follows a ceiling below it (resize) and back
        self._deadline = deadline
        self._retries = retries
        self._initial_delay = initial_delay
        self._max_delay = max_delay
        self._clock = clock
        self._hooks: list[EventSink] = []
        # Our PolicyEvent hooks are the one observability channel. stamina's default hooks would
        # add a second one (a "stamina.retry_scheduled" warning per retry, on stderr when logging
        # is not configured, which breaks the CLI's one-sentence errors) that knows less. Done
        # for every Policy, however built: a flood of them during a sidecar restart says nothing.
        stamina.instrumentation.set_on_retry_hooks([])
        # Start wide open: window_max is what the operator sized the server for, and the first
        # 503 halves it at once, whereas a slow start would delay every message after a restart.
        self._window = window_max
        self._in_flight = 0
        self._background = 0  # of which background classes
        self._successes = 0  # consecutive successes since the last change of the window
        self._epoch = 0  # bumped at each shrink; a 503 from an older epoch is already answered
        self._cuts = 0  # 503 episodes that made the window smaller (resize() is not one)
        self._lines: dict[int, _Line] = {}  # rank -> its waiting requests

    # --- public surface ---------------------------------------------------------------------

    @property
    def window_max(self) -> int:
        """The window's ceiling: a window below it means the server pushed back recently."""
        return self._window_max

    @property
    def window(self) -> int:
        """How many calls may run at once right now."""
        return self._window

    @property
    def cuts(self) -> int:
        """How many times a 503 made the window smaller (a ceiling moved by :meth:`resize`,
        to follow the engine's metrics, is not counted: that is no congestion)."""
        return self._cuts

    @property
    def reserve(self) -> int:
        """Slots of the window that background classes may never take (live messages' own)."""
        return self._reserve

    def resize(self, window_max: int, *, reserve: int | None = None) -> None:
        """Move the window's ceiling (and, if given, the reserve) while calls run: the engine's
        size learned from its metrics (:mod:`hymt_chat.engine.window`).

        The AIMD window follows: one at its old ceiling (no 503 lately) moves with it; one that
        a 503 cut keeps its place under a higher ceiling and grows back by AIMD, and is capped
        by a lower one. ``window_min`` comes down with a ceiling below it, and back up to its
        asked value with it. Nothing is cancelled: a window below the calls in flight holds new
        ones back until enough have ended; a wider window or a smaller reserve hands its free
        slots to the waiting calls at once, in the queue's order.
        """
        if window_max < 1:
            raise ValueError(f"window_max must be >= 1, not {window_max}")
        if reserve is not None and reserve < 0:
            raise ValueError(f"reserve must be >= 0, not {reserve}")
        at_ceiling = self._window >= self._window_max
        self._window_max = window_max
        self._window_min = min(self._min_asked, window_max)
        if at_ceiling or self._window > window_max:
            self._window = window_max
        self._window = max(self._window, self._window_min)
        if reserve is not None:
            self._reserve = reserve
        self._dispatch()

    @property
    def lead(self) -> int:
        """Live calls that may run beyond the window, waiting inside the engine's own queue."""
        return self._lead

    @property
    def in_flight(self) -> int:
        """How many calls are running (hold a slot of the window)."""
        return self._in_flight

    @property
    def queue_length(self) -> int:
        """How many calls wait for a slot."""
        return sum(len(line) for line in self._lines.values())

    @property
    def background_slots(self) -> int:
        """Slots background classes may hold at once: the window less the reserve (at least 1)."""
        return max(1, self._window - self._reserve)

    def rank(self, klass: str) -> int:
        """The rank of a request class: its place in our queue and its vLLM ``priority``."""
        try:
            return self._ranks[klass]
        except KeyError:
            raise ValueError(f"unknown request class {klass!r}") from None

    def add_hook(self, hook: EventSink) -> None:
        """Send every event of every call to *hook* too (metrics, logs)."""
        self._hooks.append(hook)

    def notify(self, event: PolicyEvent, on_event: EventSink | None = None) -> None:
        """Report an event a caller decided on (a segment split after a timeout) like our own."""
        for sink in [on_event, *self._hooks] if on_event else self._hooks:
            try:
                sink(event)
            except Exception:  # noqa: BLE001 - a broken observer must never break scheduling
                _log.exception("policy event hook %r failed", sink)

    async def run(
        self,
        call: Callable[[], Awaitable[T]],
        *,
        user: str,
        deadline: float | None = None,
        on_event: EventSink | None = None,
        klass: str = INTERACTIVE,
        retry_timeouts: bool = False,
    ) -> T:
        """Await ``call()`` inside the window, retrying busy/unavailable until the deadline.

        *deadline* (seconds from now, queueing included) overrides the policy's default. At the
        deadline the last error type is raised with a sentence for the user. A running call is
        not cut off by the deadline; the client's request timeout bounds it. *klass* places the
        call in the queue (see :mod:`hymt_chat.engine.priority`); *retry_timeouts* retries a
        ``ModelTimeoutError`` too, for callers whose ``call`` widens its timeout each try.
        """
        budget = self._deadline if deadline is None else max(0.0, float(deadline))
        rank = self.rank(klass)
        req = _Request(user, on_event, budget, self._clock() + budget, rank=rank,
                       background=rank > self._ranks[INTERACTIVE], retry_timeouts=retry_timeouts)
        try:
            # The hook returns False (stop) or the exact delay, so stamina's own wait_* settings
            # never apply; attempts and timeout are off because the deadline decides, in the
            # hook: stamina's timeout would neither count queueing nor cap the last sleep.
            async for attempt in stamina.retry_context(
                on=lambda exc: self._retry_delay(req, exc), attempts=None, timeout=None
            ):
                with attempt:
                    req.attempt = attempt.num
                    return await self._attempt(req, call)
        except _RETRYABLE as err:
            final = self._final_error(req, err)
            reason = reason_label(req.last_error) if req.last_error else "deadline (queued)"
            self._emit(req, PolicyEvent("gave_up", attempt=req.attempt, error=reason))
            if final is err:
                raise
            raise final from err
        except Exception as err:
            self._emit(req, PolicyEvent("gave_up", attempt=req.attempt, error=reason_label(err)))
            raise
        raise AssertionError("unreachable")  # pragma: no cover

    # --- one attempt ------------------------------------------------------------------------

    async def _attempt(self, req: _Request, call: Callable[[], Awaitable[T]]) -> T:
        await self._acquire(req)
        epoch = self._epoch
        self._emit(req, PolicyEvent("started", attempt=req.attempt))
        try:
            result = await call()
        except ModelBusyError as err:
            req.last_error = err
            self._shrink(epoch)
            raise
        except (ModelUnavailableError, ModelTimeoutError) as err:
            req.last_error = err  # not congestion: the window stays as it is
            raise
        else:
            self._grow()
        finally:
            self._release(req)
        self._emit(req, PolicyEvent("succeeded", attempt=req.attempt))
        return result

    def _retry_delay(self, req: _Request, exc: Exception) -> bool | float:
        """stamina backoff hook: False to stop, else the seconds to sleep before the next try."""
        if not self._retries or req.expired or not isinstance(exc, _RETRYABLE):
            return False
        if isinstance(exc, ModelTimeoutError) and not req.retry_timeouts:
            return False
        remaining = req.deadline_at - self._clock()
        if remaining <= 0:
            req.expired = True
            return False
        retry_after = getattr(exc, "retry_after", None)
        if isinstance(exc, ModelTimeoutError):
            delay = 0.0  # the timeout itself was the wait; the next try is given longer
        elif retry_after is not None:
            delay = max(0.0, float(retry_after))
            if delay > remaining:  # the server will not take it before our deadline: stop now
                if delay > req.budget:  # more than this message may ever wait: say the server's
                    req.too_long = delay
                else:  # the message simply used up its time waiting: say that
                    req.expired = True
                return False
        else:
            # Full jitter (uniform in [0, capped exponential]): many sessions that got the same
            # 503 spread out instead of coming back together. stamina's own jitter is additive,
            # so we compute the delay and hand it to stamina as a custom backoff.
            cap = min(self._max_delay, self._initial_delay * 2 ** min(req.attempt - 1, 30))
            delay = min(random.uniform(0.0, cap), remaining)
        self._emit(
            req, PolicyEvent("retrying", attempt=req.attempt, delay=delay, error=reason_label(exc))
        )
        return delay

    def _final_error(self, req: _Request, err: ModelError) -> ModelError:
        """The error a user sees when the policy stops retrying *err*."""
        if isinstance(err, ModelTimeoutError):
            return err  # "did not answer within N s": already the user's sentence
        unreachable = isinstance(err, ModelUnavailableError)
        kind = ModelUnavailableError if unreachable else ModelBusyError
        if req.too_long is not None:
            final = kind(
                f"The translation server is busy and asks to wait {_seconds(req.too_long)} s, "
                "longer than this message may wait."
            )
        elif req.expired:
            state = "not reachable" if unreachable else "busy"
            where = getattr(req.last_error, "detail", None)
            final = kind(
                f"The translation server is still {state} after {_seconds(req.budget)} s"
                + (f" ({where})." if where else ".")
            )
        else:  # retries off (or stamina deactivated): the server's own error, untouched
            return err
        final.retry_after = getattr(err, "retry_after", None)  # type: ignore[union-attr]
        return final

    # --- the window -------------------------------------------------------------------------

    def _shrink(self, epoch: int) -> None:
        """A 503: halve the window, once per congestion episode (like TCP: one cut per RTT)."""
        self._successes = 0
        if epoch != self._epoch:  # started before the last cut: that cut already answered it
            return
        flight = self._in_flight  # includes the failed call, its slot is not yet released
        # Halve what was really in use, not an unused allowance (RFC 5681's FlightSize / 2).
        window = max(self._window_min, min(self._window, flight) // 2)
        self._cuts += window < self._window
        self._window = window
        self._epoch += 1

    def _grow(self) -> None:
        """A success: +1 after ``window`` consecutive successes."""
        self._successes += 1
        if self._successes >= self._window and self._window < self._window_max:
            self._window += 1
            self._successes = 0

    def _take(self, req: _Request) -> None:
        self._in_flight += 1
        if req.background:
            self._background += 1

    def _release(self, req: _Request) -> None:
        self._in_flight -= 1
        if req.background:
            self._background -= 1
        self._dispatch()

    def _may_start(self, req: _Request) -> bool:
        limit = self._window
        if not req.background and self._window >= self._window_max:
            limit += self._lead  # no 503 lately: the engine's queue holds the next few
        if self._in_flight >= limit:
            return False
        return not req.background or self._background < self.background_slots

    # --- the queue --------------------------------------------------------------------------

    async def _acquire(self, req: _Request) -> None:
        """Take a slot of the window, waiting in the queue until the deadline if needed."""
        # Straight in when a slot is free for it and nobody of its class or a better one waits
        # (documents waiting for their share do not hold a live message back).
        if self._may_start(req) and not any(rank <= req.rank for rank in self._lines):
            self._take(req)
            return
        remaining = req.deadline_at - self._clock()
        if remaining <= 0:
            req.expired = True
            raise _no_slot(req)
        req.waiter = asyncio.get_running_loop().create_future()
        # A retry already waited its turn: it goes ahead of every first try of its class.
        self._enqueue(req, retry=req.attempt > 1)
        self._dispatch()  # a free slot the waiting ones may not take (reserved) may be its
        try:
            async with asyncio.timeout(remaining):
                await req.waiter
        except BaseException as exc:
            if req.waiter.done() and not req.waiter.cancelled():
                self._release(req)  # granted in the very moment we stopped waiting: hand it back
            else:
                self._dequeue(req)
            if isinstance(exc, TimeoutError):
                req.expired = True
                raise _no_slot(req) from None
            raise
        finally:
            req.waiter = None

    def _enqueue(self, req: _Request, *, retry: bool) -> None:
        # A retry goes ahead of the users already waiting, not only to the front of its own
        # user's line: behind them, a message unlucky enough to meet two or three 503s would
        # wait three or four times as long as the rest.
        line = self._lines.get(req.rank)
        if line is None:
            line = self._lines[req.rank] = _Line()
        line.push(req, retry=retry)
        req.queued = True
        req.ahead = None  # each time it joins the queue, it is told where it stands
        self._report_ahead()

    def _dequeue(self, req: _Request) -> None:
        if not req.queued:
            return
        req.queued = False
        line = self._lines[req.rank]
        line.remove(req)
        if not len(line):
            del self._lines[req.rank]
        self._report_ahead()

    def _pop_next(self) -> _Request | None:
        """The next request that may start now: best class first; None if none may."""
        for rank in sorted(self._lines):
            line = self._lines[rank]
            if not self._may_start(_head(line)):
                return None  # later classes are background too: they may not either
            req = line.pop()
            if not len(line):
                del self._lines[rank]
            req.queued = False
            return req
        return None

    def _dispatch(self) -> None:
        """Hand free slots to waiting requests: class by class, round-robin across users."""
        while (req := self._pop_next()) is not None:
            if req.waiter is None or req.waiter.done():
                continue  # cancelled or timed out; its own task is cleaning up
            self._take(req)
            req.waiter.set_result(None)
        self._report_ahead()

    def _report_ahead(self) -> None:
        """Tell each waiting request how many will be served before it, when that changed."""
        ahead = 0
        for rank in sorted(self._lines):
            for req in self._lines[rank].order():
                self._tell_ahead(req, ahead)
                ahead += 1

    def _tell_ahead(self, req: _Request, ahead: int) -> None:
        if ahead != req.ahead:
            req.ahead = ahead
            self._emit(req, PolicyEvent("queued", ahead=ahead, attempt=req.attempt))

    # --- observability ----------------------------------------------------------------------

    def _emit(self, req: _Request, event: PolicyEvent) -> None:
        self.notify(event, req.on_event)  # a broken observer never breaks us (or leaks a slot)


def _head(line: _Line) -> _Request:
    return line.retries[0] if line.retries else line.queues[line.ring[0]][0]


def segment_parallelism(policy: Policy, requested: int, klass: str = INTERACTIVE) -> int:
    """How many segments of one message to hand to the policy at once: at most the window,
    and for a background class at most its share of it (the reserve stays free).

    Callers re-read it before launching each segment, so a message downgrades (and recovers)
    as the window moves. Keeping a message's segments out of the queue until they can run is
    also what makes the per-segment deadline mean "waiting", not "length of the document".
    """
    share = policy.window if klass == INTERACTIVE else policy.background_slots
    return max(1, min(requested, share))


def policy_for(settings: Settings) -> Policy:
    """The policy of a server *settings* name: its slots, deadline, retries, reserve and ranks.
    One per app (its Runtime's): one window for one server's capacity."""
    from hymt_chat.sidecar.capacity import engine_slots

    slots = engine_slots(settings)
    return Policy(
        window_max=slots,
        window_min=min(settings.window_min, slots),
        deadline=settings.deadline,
        retries=settings.retries,
        reserve=settings.interactive_reserve,
        lead=window_lead(settings, slots),
        ranks=settings.priorities,
    )


def window_lead(settings: Settings, slots: int) -> int:
    """Live calls beyond the window (``HYMT_WINDOW_LEAD``): unset, a quarter of what the engine
    runs, so a GPU's batch has its next ones queued while the app turns the last over; none
    under 16 slots (a CPU engine's, whose decode takes seconds: a turnover is nothing beside
    it) and none for a window fixed by ``HYMT_WINDOW_MAX``, which means what it says."""
    if settings.window_lead is not None:
        return settings.window_lead
    return 0 if settings.window_max or slots < 16 else slots // 4
