"""Wait for the model to be ready, so messages sent while it warms up are translated, not refused.

One :class:`Readiness` per process polls the model in the background (quickly while it is not
ready, slowly once it is) and lets any number of chat messages ``await wait_ready()``. It also
remembers what the server serves, for the demo-model notice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from hymt_chat.engine.families import note_served_model
from hymt_chat.service.health import ModelState, Probe, probe_model
from hymt_chat.settings import Settings

__all__ = ["Readiness", "readiness_for"]

_log = logging.getLogger(__name__)


class Readiness:
    def __init__(
        self,
        probe: Callable[[], Awaitable[Probe]],
        *,
        interval: float = 2.0,
        ready_interval: float = 15.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._probe = probe
        self._interval = interval
        self._ready_interval = ready_interval
        self._clock = clock
        self.state: ModelState | None = None  # None: never checked
        self.model_root: str | None = None
        self.checked_at: float | None = None
        self._ready: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._probing: asyncio.Task[ModelState] | None = None

    @property
    def ready(self) -> bool:
        return self.state == "ready"

    def _event(self) -> asyncio.Event:
        if self._ready is None:
            self._ready = asyncio.Event()
        return self._ready

    async def refresh(self) -> ModelState:
        """Probe now and record the answer. Callers that arrive while a probe is out share its
        answer: a burst of messages when the state goes stale makes one probe, not one each."""
        # Shielded: a caller cancelled (Stop, a closed tab) leaves the probe to the others.
        return await asyncio.shield(self._probe_out())

    async def answer_within(self, seconds: float) -> ModelState:
        """The state a probe gives within *seconds*, else the last one known: ``/health``
        answers load balancers and orchestrators at once, whatever the model does; a hung
        server must not hang them too (the probe's own timeout is longer: a busy server is
        slow, not down). Before any state is known, the first probe's answer is awaited."""
        probing = self._probe_out()
        if self.state is None:
            return await asyncio.shield(probing)
        try:
            return await asyncio.wait_for(asyncio.shield(probing), seconds)
        except TimeoutError:
            return self.state

    def _probe_out(self) -> asyncio.Task[ModelState]:
        """The probe out now, or a new one."""
        if self._probing is None or self._probing.done():
            self._probing = asyncio.get_running_loop().create_task(
                self._probe_once(), name="hymt-readiness-probe")
        return self._probing

    async def _probe_once(self) -> ModelState:
        try:
            result = await self._probe()
        except Exception:  # noqa: BLE001 - a broken probe must not break messages: count it down
            _log.exception("model probe failed")
            result = Probe("down")
        if result.slow and self.state == "ready":
            # A server that answered before and is slow now is busy, not down: the message goes
            # on, and its own deadline and retries decide. (A probe slower than its timeout on a
            # loaded machine refused a message with "the model is down", one CI run.)
            _log.warning("the model server's health check timed out: counted busy, not down")
            result = Probe("ready")
        self.state = result.state
        if result.model_root:
            self.model_root = result.model_root
            note_served_model(result.model_root)  # HYMT_MODEL_FAMILY=auto reads it
        self.checked_at = self._clock()
        if result.state == "ready":
            self._event().set()
        else:
            self._event().clear()
        return result.state

    async def current(self, max_age: float = 10.0) -> ModelState:
        """The state: a "ready" under *max_age* seconds old is reused, anything else re-probed."""
        fresh = self.checked_at is not None and self._clock() - self.checked_at <= max_age
        if self.state == "ready" and fresh:
            return self.state
        return await self.refresh()

    def start(self) -> None:
        """Start the background poll (once per process; needs a running event loop)."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._poll(), name="hymt-readiness")

    async def _poll(self) -> None:
        while True:
            state = await self.refresh()
            await asyncio.sleep(self._ready_interval if state == "ready" else self._interval)

    async def wait_ready(self, timeout: float | None = None) -> bool:
        """True once the model is ready; False when *timeout* seconds pass first."""
        self.start()
        if self.ready:
            return True
        try:
            async with asyncio.timeout(timeout):
                await self._event().wait()
        except TimeoutError:
            return False
        return True

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None


def readiness_for(settings: Settings) -> Readiness:
    """The readiness of the model *settings* name (the app's: its Runtime builds one)."""
    def probe() -> Awaitable[Probe]:
        # The served model is asked for once (it is what the demo notice needs).
        return probe_model(settings, with_model=readiness.model_root is None)

    readiness = Readiness(probe)
    return readiness
