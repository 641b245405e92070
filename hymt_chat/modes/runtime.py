"""One app's shared state, built from its Settings and passed down, closed when the app stops.

The chat page (``app.py``, at its start), the CLI (for a command) and the tests each build a
Runtime: one model client per endpoint in force, one policy and the watch that moves its
window, Chimera's route, the limiter, metrics, readiness, the memory, the rooms, the desk, the
audit log, the retention sweeper and the voice.
Nothing of it lives in a module: two Runtimes in one process share nothing, and a test builds a
fresh one instead of resetting globals (the way a Starlette app keeps its state on
``app.state`` for its lifespan).
"""

from __future__ import annotations

import asyncio
import contextlib
from types import TracebackType
from typing import Self, cast

from hymt_chat.engine.client import ModelClients
from hymt_chat.engine.fusion import FusionRoute
from hymt_chat.engine.policy import policy_for
from hymt_chat.engine.recall import Memory
from hymt_chat.engine.translator import Translator
from hymt_chat.engine.window import WindowWatch, build_watch, window_report
from hymt_chat.modes.agent.desk_seat import open_desk
from hymt_chat.modes.room import Rooms
from hymt_chat.modes.session import Services, Session
from hymt_chat.service.conversation_records import ConversationRecords
from hymt_chat.service.metrics import Metrics
from hymt_chat.service.ratelimit import limiter_for
from hymt_chat.service.readiness import readiness_for
from hymt_chat.service.retention import start_sweeper
from hymt_chat.settings import Settings
from hymt_chat.speech.service import Speech
from hymt_chat.store.audit import open_audit_log

__all__ = ["Runtime"]


class Runtime:
    """Everything one app shares among its sessions, routes and background tasks."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.clients = ModelClients(settings)
        self.policy = policy_for(settings)
        # HYMT_WINDOW_MAX fixes the window; else the engine's metrics move it.
        self.watch: WindowWatch | None = (None if settings.window_max
                                          else build_watch(settings, self.policy))
        self.fusion = FusionRoute(settings, self.policy)
        self.readiness = readiness_for(settings)
        self.metrics = Metrics(settings, self.policy)
        self.limiter = limiter_for(settings)
        self.memory = Memory.for_settings(settings)
        self.engine = Translator(settings, self.clients, self.policy, self.memory, self.fusion)
        self.metrics.attach_checks(self.engine, self.memory)
        # The metrics' wrapper stands in for the Translator it wraps (it counts translate()).
        self.translator = cast(Translator, self.metrics.instrument(self.engine))
        self.rooms = Rooms.for_settings(settings)  # kept in the deployment's database
        self.desk = open_desk(self.rooms, self.translator, self.limiter, settings)
        self.audit = open_audit_log(settings)  # who read, exported, corrected, erased, took over
        self.speech = Speech(settings)  # the voice: its model loads at the first microphone
        self._sweeper: asyncio.Task[None] | None = None
        # The conversations' rows as retention sees them (their own connection, opened once).
        self._conversations = ConversationRecords.for_settings(settings)
        # Each open tab's session, by Chainlit's session id: a tab that reconnects (a dropped
        # connection; the page switching to a resumed thread's profile) finds it again with
        # its work under way. Chainlit's own per-tab store is replaced at each resume.
        self.tabs: dict[str, Session] = {}

    def services(self, max_files: int = 5) -> Services:
        """What a chat session uses of it (*max_files* per message: the app's own cap)."""
        return Services(self.settings, self.translator, self.readiness, self.limiter,
                        self.metrics, max_files, self.rooms, self.desk, audit_log=self.audit,
                        speech=self.speech)

    def window(self) -> dict[str, object]:
        """``/health``'s ``window``: the policy's, and where its ceiling comes from."""
        return window_report(self.policy, self.watch)

    def start(self) -> None:
        """Start the readings of the model's state and load, and the retention sweeper, in the
        running event loop (again harmless: each starts once)."""
        self.readiness.start()
        if self.watch is not None:
            self.watch.start()
        if self._sweeper is None or self._sweeper.done():  # None: no retention is set
            self._sweeper = start_sweeper(self.settings, audit=self.audit,
                                          holdings=[self._conversations])

    async def close(self) -> None:
        """Stop what :meth:`start` started and close the model clients' connections."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        await self.readiness.stop()
        if self.watch is not None:
            await self.watch.stop()
        self.metrics.detach_checks(self.engine, self.memory)
        await self.fusion.aclose()
        await self.clients.aclose()
        await self.rooms.close()  # what the database has not taken yet: written, for a while
        self._conversations.close()
        await self.speech.aclose()

    async def __aenter__(self) -> Self:
        self.start()
        return self

    async def __aexit__(self, kind: type[BaseException] | None, err: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()
