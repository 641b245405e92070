"""Rooms written behind the talk: what a room says and becomes reaches the conversations'
database (:mod:`hymt_chat.store.conversations`) without the talk waiting for it.

A change is queued at once (a room's latest row replaces the one still queued; messages queue
in order) and written from a worker thread, one transaction per batch. While the database is
away the talk goes on from the process's cache and the queue waits: it is written again,
with backoff, and at once when something new arrives or :meth:`RoomKeeper.flush` asks. A
batch that the database kept but whose answer was lost is written again harmlessly: a room's
row is replaced, a message already there (its room and number) is kept as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from hymt_chat.settings import Settings
from hymt_chat.store.conversations import (
    ConversationStore,
    MessageRecord,
    RoomRecord,
    StoredRoom,
    conversations_location,
)

__all__ = ["RoomKeeper", "keep_rooms"]

_log = logging.getLogger(__name__)
FIRST_RETRY, LAST_RETRY = 0.5, 15.0  # seconds between writes while the database is away


class RoomKeeper:
    """The queue of rooms' changes and its writer (one per process)."""

    def __init__(self, store: ConversationStore, *, first_retry: float = FIRST_RETRY,
                 last_retry: float = LAST_RETRY) -> None:
        self.store = store
        self.first_retry, self.last_retry = first_retry, last_retry
        self._rooms: dict[str, RoomRecord] = {}  # the latest row of each room, unwritten
        self._messages: list[MessageRecord] = []
        self._wake: asyncio.Event | None = None
        self._idle: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self.failing = False  # the last write failed: the database is away

    @property
    def pending(self) -> int:
        """Rows queued and not written yet."""
        return len(self._rooms) + len(self._messages)

    def room(self, record: RoomRecord) -> None:
        self._rooms[record.token] = record
        self._kick()

    def message(self, record: MessageRecord) -> None:
        self._messages.append(record)
        self._kick()

    def drop(self, tokens: set[str]) -> None:
        """Forget what is queued for these rooms (they are being erased)."""
        for token in tokens:
            self._rooms.pop(token, None)
        self._messages[:] = [m for m in self._messages if m.token not in tokens]

    async def flush(self) -> None:
        """Until everything queued so far is written (retrying now if the database was away)."""
        if not self.pending:
            return
        self._kick()
        assert self._idle is not None
        while self.pending:
            await self._idle.wait()

    async def load(self, token: str) -> StoredRoom | None:
        """The stored room of *token*; None when there is none, or the database is away (the
        link then leads nowhere until it is back: logged)."""
        try:
            return await asyncio.to_thread(self.store.load, token)
        except Exception:  # noqa: BLE001 - a page that cannot find its room, not a crash
            _log.exception("could not read a room from the conversations' database")
            return None

    async def open_desk(self) -> tuple[list[StoredRoom], int]:
        """The desk's open conversations and the highest number given, to start again from;
        none when the database is away (logged: a link to one brings it back later)."""
        try:
            rows = await asyncio.to_thread(self.store.open_desk)
            return rows, await asyncio.to_thread(self.store.last_number)
        except Exception:  # noqa: BLE001 - the app starts all the same
            _log.exception("could not read the desk's conversations from the database")
            return [], 0

    async def close(self, timeout: float = 10.0) -> None:
        """Write what is queued (for at most *timeout* seconds), stop, close the database."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.flush(), timeout)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self.store.close()

    # --- the writer -----------------------------------------------------------------------

    def _kick(self) -> None:
        if self._task is None or self._task.done():
            self._wake, self._idle = asyncio.Event(), asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._run())
        assert self._wake is not None and self._idle is not None
        self._idle.clear()
        self._wake.set()

    async def _run(self) -> None:
        assert self._wake is not None and self._idle is not None
        delay = self.first_retry
        while True:
            await self._wake.wait()
            self._wake.clear()
            if not self.pending:
                self._idle.set()
                continue
            rooms, messages = list(self._rooms.values()), list(self._messages)
            try:
                await asyncio.to_thread(self.store.write, rooms, messages)
            except Exception:  # noqa: BLE001 - kept, and written again when it answers
                if not self.failing:
                    _log.exception("the conversations' database is away; %d change(s) wait",
                                   self.pending)
                self.failing = True
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), delay)
                self._wake.set()
                delay = min(delay * 2, self.last_retry)
                continue
            if self.failing:
                _log.info("the conversations' database is back; written")
            self.failing, delay = False, self.first_retry
            for room in rooms:  # a newer row of the same room stays queued
                if self._rooms.get(room.token) is room:
                    del self._rooms[room.token]
            del self._messages[:len(messages)]  # only ever appended to meanwhile
            if self.pending:
                self._wake.set()
            else:
                self._idle.set()


def keep_rooms(settings: Settings) -> RoomKeeper:
    """The process's keeper, on the deployment's conversations database."""
    return RoomKeeper(ConversationStore(conversations_location(settings)))
