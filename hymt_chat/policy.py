"""Retry and downgrade: one adaptive window of model calls, a fair queue in front of it, retries.

Every model call of the process goes through one :class:`Policy`:

* **Window (AIMD, like TCP).** At most ``window`` calls run at once. A 503 halves it (from the
  number of calls actually in flight, floor ``window_min``), once per congestion episode; each run
  of ``window`` consecutive successes widens it by one, up to ``window_max``.
* **Fair queue.** Calls beyond the window wait round-robin across users, FIFO within a user, so
  one user's 50 segments cannot starve another user's single message.
* **Retry.** ``ModelBusyError`` and ``ModelUnavailableError`` are retried (via ``stamina``) with
  exponential backoff and full jitter, or exactly ``retry_after`` seconds when the server said so,
  until the per-message deadline. During the backoff the slot is given back; the retry then
  rejoins the queue ahead of every first try (retries among themselves in arrival order): it
  already waited its turn, and a 503 is the server's refusal, not the user's. Anything else
  propagates at once.

The policy does no I/O besides ``asyncio`` sleeps. It reports what happens as
:class:`PolicyEvent` objects to a per-call sink (the UI) and to process-wide hooks (metrics).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

import stamina

from .errors import ModelBusyError, ModelError, ModelUnavailableError

if TYPE_CHECKING:
    from .settings import Settings

__all__ = ["EventSink", "Policy", "PolicyEvent", "get_policy", "segment_parallelism"]

T = TypeVar("T")

_RETRYABLE = (ModelBusyError, ModelUnavailableError)
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


def _reason(err: BaseException | None) -> str:
    if isinstance(err, ModelBusyError):
        return "busy (503)"
    if isinstance(err, ModelUnavailableError):
        return "unavailable"
    if isinstance(err, ModelError):
        return "model error"
    return type(err).__name__ if err is not None else ""


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
    attempt: int = 0
    last_error: ModelError | None = None  # last busy/unavailable answer of the server
    expired: bool = False  # the deadline ran out (in the queue or before a retry)
    too_long: float | None = None  # Retry-After asked for more than the time left
    waiter: asyncio.Future[None] | None = None  # set while queued
    queued: bool = False
    ahead: int | None = None  # last "ahead" reported


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
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 1 <= window_min <= window_max:
            msg = f"need 1 <= window_min ({window_min}) <= window_max ({window_max})"
            raise ValueError(msg)
        self._window_max = window_max
        self._window_min = window_min
        self._deadline = deadline
        self._retries = retries
        self._initial_delay = initial_delay
        self._max_delay = max_delay
        self._clock = clock
        self._hooks: list[EventSink] = []
        # Our PolicyEvent hooks are the one observability channel. stamina's default hooks would
        # add a second one (a "stamina.retry_scheduled" warning per retry, on stderr when logging
        # is not configured, which breaks the CLI's one-sentence errors) that knows less. Done
        # here, not only in get_policy(): a Policy built directly (a Translator given its own,
        # a benchmark) flooded the log with them during a 60 s sidecar restart.
        stamina.instrumentation.set_on_retry_hooks([])
        # Start wide open: window_max is what the operator sized the server for, and the first
        # 503 halves it at once, whereas a slow start would delay every message after a restart.
        self._window = window_max
        self._in_flight = 0
        self._successes = 0  # consecutive successes since the last change of the window
        self._epoch = 0  # bumped at each shrink; a 503 from an older epoch is already answered
        self._queues: dict[str, deque[_Request]] = {}  # user -> their waiting requests, FIFO
        self._ring: deque[str] = deque()  # users with waiting requests, in round-robin order
        self._retry_line: deque[_Request] = deque()  # retries waiting: served before the ring

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
    def in_flight(self) -> int:
        """How many calls are running (hold a slot of the window)."""
        return self._in_flight

    @property
    def queue_length(self) -> int:
        """How many calls wait for a slot."""
        return len(self._retry_line) + sum(len(q) for q in self._queues.values())

    def add_hook(self, hook: EventSink) -> None:
        """Send every event of every call to *hook* too (metrics, logs)."""
        self._hooks.append(hook)

    async def run(
        self,
        call: Callable[[], Awaitable[T]],
        *,
        user: str,
        deadline: float | None = None,
        on_event: EventSink | None = None,
    ) -> T:
        """Await ``call()`` inside the window, retrying busy/unavailable until the deadline.

        *deadline* (seconds from now, queueing included) overrides the policy's default. At the
        deadline the last error type is raised with a sentence for the user. A running call is
        not cut off by the deadline; the client's request timeout bounds it.
        """
        budget = self._deadline if deadline is None else max(0.0, float(deadline))
        req = _Request(user, on_event, budget, self._clock() + budget)
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
            reason = _reason(req.last_error) if req.last_error else "deadline (queued)"
            self._emit(req, PolicyEvent("gave_up", attempt=req.attempt, error=reason))
            if final is err:
                raise
            raise final from err
        except Exception as err:
            self._emit(req, PolicyEvent("gave_up", attempt=req.attempt, error=_reason(err)))
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
        except ModelUnavailableError as err:
            req.last_error = err  # not congestion: the window stays as it is
            raise
        else:
            self._grow()
        finally:
            self._release()
        self._emit(req, PolicyEvent("succeeded", attempt=req.attempt))
        return result

    def _retry_delay(self, req: _Request, exc: Exception) -> bool | float:
        """stamina backoff hook: False to stop, else the seconds to sleep before the next try."""
        if not self._retries or req.expired or not isinstance(exc, _RETRYABLE):
            return False
        remaining = req.deadline_at - self._clock()
        if remaining <= 0:
            req.expired = True
            return False
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is not None:
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
            delay = min(random.uniform(0.0, cap), remaining)  # noqa: S311 - not crypto
        self._emit(
            req, PolicyEvent("retrying", attempt=req.attempt, delay=delay, error=_reason(exc))
        )
        return delay

    def _final_error(self, req: _Request, err: ModelError) -> ModelError:
        """The error a user sees when the policy stops retrying *err*."""
        unreachable = isinstance(err, ModelUnavailableError)
        kind = ModelUnavailableError if unreachable else ModelBusyError
        if req.too_long is not None:
            final = kind(
                f"The translation server is busy and asks to wait {_seconds(req.too_long)} s, "
                "longer than this message may wait; your text was kept — press Retry."
            )
        elif req.expired:
            state = "not reachable" if unreachable else "busy"
            final = kind(
                f"The translation server is still {state} after {_seconds(req.budget)} s; "
                "your text was kept — press Retry."
            )
        else:  # retries off (or stamina deactivated): the server's own error, untouched
            return err
        final.retry_after = getattr(err, "retry_after", None)  # type: ignore[attr-defined]
        return final

    # --- the window -------------------------------------------------------------------------

    def _shrink(self, epoch: int) -> None:
        """A 503: halve the window, once per congestion episode (like TCP: one cut per RTT)."""
        self._successes = 0
        if epoch != self._epoch:  # started before the last cut: that cut already answered it
            return
        flight = self._in_flight  # includes the failed call, its slot is not yet released
        # Halve what was really in use, not an unused allowance (RFC 5681's FlightSize / 2).
        self._window = max(self._window_min, min(self._window, flight) // 2)
        self._epoch += 1

    def _grow(self) -> None:
        """A success: +1 after ``window`` consecutive successes."""
        self._successes += 1
        if self._successes >= self._window and self._window < self._window_max:
            self._window += 1
            self._successes = 0

    def _release(self) -> None:
        self._in_flight -= 1
        self._dispatch()

    # --- the fair queue ---------------------------------------------------------------------

    async def _acquire(self, req: _Request) -> None:
        """Take a slot of the window, waiting in the fair queue until the deadline if needed."""
        if not self._ring and not self._retry_line and self._in_flight < self._window:
            self._in_flight += 1
            return
        remaining = req.deadline_at - self._clock()
        if remaining <= 0:
            req.expired = True
            raise _no_slot(req)
        req.waiter = asyncio.get_running_loop().create_future()
        # A retry already waited its turn: it goes ahead of every first try.
        self._enqueue(req, retry=req.attempt > 1)
        try:
            async with asyncio.timeout(remaining):
                await req.waiter
        except BaseException as exc:
            if req.waiter.done() and not req.waiter.cancelled():
                self._release()  # granted in the very moment we stopped waiting: hand it back
            else:
                self._dequeue(req)
            if isinstance(exc, TimeoutError):
                req.expired = True
                raise _no_slot(req) from None
            raise
        finally:
            req.waiter = None

    def _enqueue(self, req: _Request, *, retry: bool) -> None:
        # Retries used to rejoin at the front of their user's line only, i.e. behind every other
        # user already waiting: on the real server (40 users, 2+2 admission) a message unlucky
        # enough to meet two or three 503s waited three or four times as long as the rest.
        if retry:
            self._retry_line.append(req)
        else:
            line = self._queues.get(req.user)
            if line is None:
                line = self._queues[req.user] = deque()
                self._ring.append(req.user)  # a newcomer is served after everyone waiting
            line.append(req)
        req.queued = True
        req.ahead = None  # each time it joins the queue, it is told where it stands
        self._report_ahead()

    def _dequeue(self, req: _Request) -> None:
        if not req.queued:
            return
        req.queued = False
        if req in self._retry_line:
            self._retry_line.remove(req)
        else:
            line = self._queues[req.user]
            line.remove(req)
            if not line:
                del self._queues[req.user]
                self._ring.remove(req.user)
        self._report_ahead()

    def _pop_next(self) -> _Request:
        if self._retry_line:
            req = self._retry_line.popleft()
            req.queued = False
            return req
        user = self._ring.popleft()
        line = self._queues[user]
        req = line.popleft()
        req.queued = False
        if line:
            self._ring.append(user)  # round-robin: this user's next one waits for the others
        else:
            del self._queues[user]
        return req

    def _dispatch(self) -> None:
        """Hand free slots to waiting requests, round-robin across users."""
        while self._in_flight < self._window and (self._retry_line or self._ring):
            req = self._pop_next()
            if req.waiter is None or req.waiter.done():
                continue  # cancelled or timed out; its own task is cleaning up
            self._in_flight += 1
            req.waiter.set_result(None)
        self._report_ahead()

    def _report_ahead(self) -> None:
        """Tell each waiting request how many will be served before it, when that changed.

        Round-robin serves the i-th waiting request of every user in ring order before anyone's
        (i+1)-th, so for the i-th request of the user at ring position j the count is
        sum(min(len_u, i)) over all users plus the users before j that have more than i waiting.
        Waiting retries go first, in order, so they count ahead of everyone in the ring.
        """
        for k, req in enumerate(self._retry_line):
            self._tell_ahead(req, k)
        lengths = [len(self._queues[u]) for u in self._ring]
        for j, user in enumerate(self._ring):
            for i, req in enumerate(self._queues[user]):
                ahead = len(self._retry_line) + sum(min(n, i) for n in lengths)
                ahead += sum(1 for n in lengths[:j] if n > i)
                self._tell_ahead(req, ahead)

    def _tell_ahead(self, req: _Request, ahead: int) -> None:
        if ahead != req.ahead:
            req.ahead = ahead
            self._emit(req, PolicyEvent("queued", ahead=ahead, attempt=req.attempt))

    # --- observability ----------------------------------------------------------------------

    def _emit(self, req: _Request, event: PolicyEvent) -> None:
        sinks = [req.on_event, *self._hooks] if req.on_event else self._hooks
        for sink in sinks:
            try:
                sink(event)
            except Exception:  # a broken observer must never break scheduling (or leak a slot)
                _log.exception("policy event hook %r failed", sink)


def segment_parallelism(policy: Policy, requested: int) -> int:
    """How many segments of one message to hand to the policy at once: at most the window.

    Callers re-read it before launching each segment, so a message downgrades (and recovers)
    as the window moves. Keeping a message's segments out of the queue until they can run is
    also what makes the per-segment deadline mean "waiting", not "length of the document".
    """
    return max(1, min(requested, policy.window))


_POLICY: Policy | None = None


def get_policy(settings: Settings) -> Policy:
    """The process-wide policy, built from *settings* on first use and shared by every session."""
    global _POLICY
    if _POLICY is None:
        _POLICY = Policy(
            window_max=settings.window_max,
            window_min=settings.window_min,
            deadline=settings.deadline,
            retries=settings.retries,
        )
    return _POLICY
