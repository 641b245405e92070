"""The window's ceiling learned from the engine: what vLLM's ``/metrics`` says runs and waits.

The policy's window should be what the engine *runs* at once (a request waiting inside vLLM
is out of our hands: a live message there waits for a document's part to finish). Launch
flags say it for a sidecar the app started; a server reached by URL says it only through its
metrics (:mod:`hymt_chat.sidecar.engine_load`). Every second the watch reads them and
:func:`next_state` (pure) decides:

* **Requests wait inside vLLM**, more than the policy's *lead* (live calls it sends beyond the
  window on purpose, every app process its own): the ceiling comes down to what runs (this
  process's share of it, ``HYMT_APP_REPLICAS``), and the engine is marked *full* at that size.
* **Nothing waits**: the ceiling grows back (by half, at least one, a reading) up to the most
  the engine has been seen running at once. Beyond that, only when the app has more live work
  than its window and the engine was never seen full: then *probe* slots are opened on top,
  for interactive calls only (they join the reserve), so that finding out costs a document
  nothing and never puts a document's part in vLLM's queue ahead of a live message. When the
  engine runs them with nothing waiting, its proven size grows and the ceiling with it.
* **No reading** (missing, slow, garbage, numbers that count fewer requests than this process
  has in flight): the last good ceiling is kept for :data:`HOLD` seconds, then the window goes
  back to where it started (launch flags, else :data:`~hymt_chat.sidecar.capacity.SAFE_SLOTS`),
  with one log line saying how to set ``HYMT_WINDOW_MAX``.
* **A server restarted** (a start time not seen before): what was learned is forgotten.

``HYMT_WINDOW_MAX`` wins: no watch runs. :meth:`WindowWatch.describe` is what ``/health``
shows: the window and where it came from.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import httpx

from hymt_chat.errors import MetricsError
from hymt_chat.sidecar.capacity import Origin, app_share, engine_total
from hymt_chat.sidecar.endpoint import resolve_endpoint
from hymt_chat.sidecar.engine_load import EngineLoad, metrics_urls, read_load

if TYPE_CHECKING:
    from hymt_chat.engine.policy import Policy
    from hymt_chat.settings import Settings

__all__ = ["HOLD", "INTERVAL", "MAX_CEILING", "Rules", "WindowState", "WindowWatch", "build_watch",
           "describe", "initial_state", "next_state", "window_report"]

INTERVAL = 1.0  # seconds between readings
TIMEOUT = 3.0  # a page slower than this is no reading (a busy 2-core CPU engine: ~0.1 s)
HOLD = 30.0  # seconds the last good ceiling outlives the metrics
MAX_CEILING = 1024  # the most one process sends at once, whatever a page claims
_STARTS_KEPT = 64  # start times remembered (a router over many replicas shows each in turn)
_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Rules:
    """What the decisions depend on besides the readings."""

    share: int = 1  # app processes splitting the engine (HYMT_APP_REPLICAS)
    lead: int = 0  # live calls each process keeps waiting inside vLLM on purpose
    initial: int = 2  # the engine's size assumed before any reading, all servers
    origin: Origin = "safe default"  # where *initial* comes from
    hold: float = HOLD

    def of(self, total: int) -> int:
        """This process's share of *total* engine slots, within 1..MAX_CEILING."""
        return min(MAX_CEILING, app_share(total, self.share))


@dataclass(frozen=True, slots=True)
class WindowState:
    """Where the ceiling stands, what was learned, and the last reading."""

    ceiling: int  # this process's window_max, the probe slots not included
    size: int  # the engine's size as far as proven: the most seen running at once (all servers)
    origin: Origin
    full: bool = False  # requests waited inside vLLM: no probing above *size*
    probe: int = 0  # slots on top of *ceiling*, for interactive calls only
    good_at: float | None = None  # when the last good reading came (the clock's time)
    running: int | None = None  # the last good reading
    waiting: int | None = None
    problem: str = ""  # why the last reading was no good ("": it was), the page's address too
    starts: tuple[float, ...] = field(default=())  # servers' start times seen, newest last
    public: str = ""  # the problem in words with no address: what /health tells anyone


def initial_state(rules: Rules, *, problem: str = "", public: str = "",
                  starts: tuple[float, ...] = ()) -> WindowState:
    """Before any reading, or once the readings stopped for longer than ``rules.hold``."""
    return WindowState(rules.of(rules.initial), rules.initial, rules.origin, problem=problem,
                       starts=starts, public=public)


def next_state(state: WindowState, reading: EngineLoad | MetricsError, *, now: float,
               busy: bool, ours: int, rules: Rules) -> WindowState:
    """The state after one reading (or its failure), pure.

    *busy*: this process has more calls than its window (some wait in its queue, or all
    slots are taken); *ours*: calls it had in flight throughout the reading (a page counting
    fewer, running and waiting, is not this engine's: a proxy's stale or wrong numbers)."""
    if isinstance(reading, EngineLoad) and reading.running + reading.waiting < ours:
        counted = (f"the page counts {reading.running + reading.waiting} requests, "
                   f"fewer than the {ours} this app has in flight")
        reading = MetricsError(counted, public=counted)  # numbers only: nothing to hide
    if isinstance(reading, MetricsError):
        if state.good_at is not None and now - state.good_at <= rules.hold:
            # keep the last good one
            return replace(state, probe=0, problem=str(reading), public=reading.public)
        return initial_state(rules, problem=str(reading), public=reading.public,
                             starts=state.starts)
    new = tuple(s for s in sorted(reading.started) if s not in state.starts)
    starts = (state.starts + new)[-_STARTS_KEPT:]
    if new and state.starts:  # a server restarted (or one more replica): forget its size
        state = initial_state(rules)
    running, waiting = reading.running, reading.waiting
    size = min(max(state.size, running), MAX_CEILING * rules.share)
    ceiling, full, probe = state.ceiling, state.full, 0
    if waiting > rules.lead * rules.share:
        ceiling, full = rules.of(running), True
    else:
        target = rules.of(size)
        if ceiling < target:
            ceiling = min(target, ceiling + max(1, ceiling // 2))
        if ceiling >= target and busy and not full:
            probe = min(ceiling, MAX_CEILING - ceiling)
    return WindowState(ceiling, size, "engine metrics", full, probe, now, running, waiting,
                       "", starts)


Reader = Callable[[httpx.AsyncClient], Awaitable[EngineLoad]]


class WindowWatch:
    """Reads the engine's load every *interval* seconds and moves *policy*'s ceiling
    (:meth:`Policy.resize`); one per app, built and started by its Runtime."""

    def __init__(self, policy: Policy, read: Reader, rules: Rules, *,
                 interval: float = INTERVAL, timeout: float = TIMEOUT,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.policy = policy
        self.rules = rules
        self.state = initial_state(rules)
        self._read = read
        self._interval = interval
        self._timeout = timeout
        self._clock = clock
        self._reserve = policy.reserve  # the operator's; probe slots are added on top
        self._warned = False  # the one line about missing metrics is out
        self._task: asyncio.Task[None] | None = None

    async def tick(self, http: httpx.AsyncClient) -> WindowState:
        """One reading, one decision, applied to the policy."""
        policy = self.policy
        before = policy.in_flight
        try:
            reading: EngineLoad | MetricsError = await self._read(http)
        except MetricsError as err:
            reading = err
        busy = policy.queue_length > 0 or policy.in_flight >= policy.window
        old = self.state
        self.state = next_state(old, reading, now=self._clock(), busy=busy,
                                ours=min(before, policy.in_flight), rules=self.rules)
        new = self.state
        if (new.ceiling + new.probe, self._reserve + new.probe) != (
                policy.window_max, policy.reserve):
            policy.resize(new.ceiling + new.probe, reserve=self._reserve + new.probe)
        self._tell(old, new, reading)
        return new

    def _tell(self, old: WindowState, new: WindowState, reading: object) -> None:
        """Log what changed, once: no metrics (a warning), another problem (its details),
        metrics back, the size learned."""
        if isinstance(reading, MetricsError):
            if not reading.down and not self._warned and new.origin != "engine metrics":
                self._warned = True
                _log.warning(
                    "The model server's /metrics does not say what it runs (%s): this app "
                    "keeps at most %d requests in flight on it (%s). Set HYMT_WINDOW_MAX to "
                    "the server's --max-num-seqs (divided by HYMT_APP_REPLICAS) to size it "
                    "yourself.", reading, new.ceiling, new.origin)
            elif new.problem != old.problem:  # the details /health leaves out, once a change
                _log.info("engine metrics: %s", reading)
            return
        if old.starts and set(new.starts) - set(old.starts):
            _log.info("The model server restarted (or a replica joined): its size is learned "
                      "afresh from %d slots", self.rules.of(self.rules.initial))
        if old.origin != "engine metrics":
            self._warned = False
            _log.info("The model server's metrics answer: the window follows them "
                      "(%d running, %d waiting now)", new.running, new.waiting)
        if new.full and (not old.full or new.size != old.size):
            _log.info("The engine runs %d requests at once (more waited): this app's window "
                      "is at most %d", new.size, self.rules.of(new.size))

    async def run(self) -> None:
        """Read, decide, sleep, for as long as the task lives."""
        async with httpx.AsyncClient(timeout=self._timeout) as http:
            while True:
                try:
                    await self.tick(http)
                except Exception:  # noqa: BLE001 - a bug here must not stop the readings for good
                    _log.exception("engine metrics reading failed")
                await asyncio.sleep(self._interval)

    def start(self) -> None:
        """Start the readings in the running event loop (once; again if that loop changed)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        task = self._task
        if task is not None and not task.done() and task.get_loop() is loop:
            return
        self._task = loop.create_task(self.run(), name="hymt-window")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def describe(self) -> dict[str, object]:
        """The window and where its ceiling comes from, for ``/health``."""
        return describe(self.policy, self.state)


def describe(policy: Policy, state: WindowState | None, origin: Origin = "settings"
             ) -> dict[str, object]:
    """``/health``'s ``window``: how many calls may run now, the ceiling and its origin, and
    the engine's last reading when there is one; a problem in words with no address (anyone
    may ask ``/health``: the details are in the log and ``doctor``)."""
    out: dict[str, object] = {"now": policy.window, "max": policy.window_max,
                              "reserve": policy.reserve, "lead": policy.lead,
                              "in_flight": policy.in_flight,
                              "origin": state.origin if state else origin}
    if state is not None:
        if state.running is not None:
            out["engine"] = {"running": state.running, "waiting": state.waiting,
                             "size": state.size, "full": state.full}
        if state.problem:
            out["problem"] = state.public
    return out


def build_watch(settings: Settings, policy: Policy, *, interval: float = INTERVAL,
                timeout: float = TIMEOUT,
                clock: Callable[[], float] = time.monotonic) -> WindowWatch:
    """A watch over *policy* for the server *settings* name (not started)."""
    total, origin = engine_total(settings)
    rules = Rules(share=settings.app_replicas, initial=total, origin=origin, lead=policy.lead)
    stands_for = settings.replicas if settings.base_url else 1

    async def read(http: httpx.AsyncClient) -> EngineLoad:
        return await read_load(http, metrics_urls(settings),
                               api_key=resolve_endpoint(settings).api_key, stands_for=stands_for)

    return WindowWatch(policy, read, rules, interval=interval, timeout=timeout, clock=clock)


def window_report(policy: Policy, watch: WindowWatch | None) -> dict[str, object]:
    """``/health``'s ``window``: the app's policy's, and where its ceiling comes from."""
    return watch.describe() if watch is not None else describe(policy, None, "settings")
