"""Rooms and desk conversations as rows: what outlives the process that held them.

A room (an agent's own, or a desk conversation) is one row of ``conversation_rooms``: who holds
it, its visitor and number (the desk's), its state (the conversation's languages, glossary and
transcript, its guests, the notice their page shows) and whether it ended. Each message is one
row of ``conversation_messages``, keyed by the room's token and its number there, so writing the
same message twice (a retry after the database came back) keeps one. The open desk rows with
no holder are the queue.

Where: the deployment's database of :mod:`hymt_chat.store.database` (a PostgreSQL
``HYMT_DATABASE_URL`` shared by every replica, else ``conversations.db`` in the cache folder).
Each method is one transaction; a database failure is :class:`ConversationStoreError`. The
process keeps only a cache of these rows (``hymt_chat.modes.room``), written behind the talk
(``hymt_chat.modes.keeping``). Erasure and retention find rooms with :meth:`tokens`,
:meth:`containing` and :meth:`ended_before`, and delete them with :meth:`forget`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from hymt_chat.errors import HymtError
from hymt_chat.store.database import database_location, db_errors, open_database

if TYPE_CHECKING:
    from hymt_chat.settings import Settings

__all__ = ["ConversationStore", "ConversationStoreError", "MessageRecord", "RoomRecord",
           "StoredRoom", "conversations_location"]

_SCHEMA_LOCK = 0x68796D63  # 'hymc'

METADATA = sa.MetaData()
ROOMS = sa.Table(
    "conversation_rooms", METADATA,
    sa.Column("token", sa.Text, primary_key=True),       # the room link's secret
    sa.Column("kind", sa.Text, nullable=False),          # "room" (an agent's) or "desk"
    sa.Column("number", sa.Integer),                     # the desk's conversation number
    sa.Column("agent", sa.Text),                         # its holder; None: in the queue
    sa.Column("visitor", sa.Text),                       # the desk visitor's allowance key
    sa.Column("opened", sa.Double, nullable=False),
    sa.Column("taken", sa.Double),
    sa.Column("unread", sa.Integer, nullable=False, server_default="0"),
    sa.Column("expires_at", sa.Double, nullable=False),
    sa.Column("closed", sa.Text),                        # why it ended (a page-words key)
    sa.Column("closed_at", sa.Double),
    sa.Column("state", sa.Text, nullable=False),         # JSON: conversation, guests, notice
    sa.Column("updated", sa.Double, nullable=False),
    sa.Index("ix_conversation_rooms_kind_closed", "kind", "closed"),
)
MESSAGES = sa.Table(
    "conversation_messages", METADATA,
    sa.Column("token", sa.Text, primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True),
    sa.Column("who", sa.Text, nullable=False),           # "agent" or "guest"
    sa.Column("original", sa.Text, nullable=False),
    sa.Column("source", sa.Text),
    sa.Column("translation", sa.Text),
    sa.Column("target", sa.Text, nullable=False),
    sa.Column("at", sa.Double, nullable=False),
    sa.Column("note", sa.Text),
    sa.Column("warnings", sa.Text, nullable=False, server_default="[]"),  # JSON list
    sa.Column("ref", sa.Text),                           # the guest page's id for it (sent once)
)


class ConversationStoreError(HymtError):
    """The conversations' database did not answer (the details are logged)."""


@dataclass(frozen=True, slots=True)
class RoomRecord:
    """One room's row (without its messages)."""

    token: str
    kind: str
    opened: float
    expires_at: float
    state: dict[str, Any]
    number: int | None = None
    agent: str | None = None
    visitor: str | None = None
    taken: float | None = None
    unread: int = 0
    closed: str | None = None
    closed_at: float | None = None


@dataclass(frozen=True, slots=True)
class MessageRecord:
    """One message of a room, as both sides saw it."""

    token: str
    seq: int
    who: str
    original: str
    source: str | None
    translation: str | None
    target: str
    at: float
    note: str | None = None
    warnings: tuple[str, ...] = ()
    ref: str | None = None

    def fields(self) -> dict[str, Any]:
        """The message without its room's token (a RoomMessage's fields)."""
        return {"seq": self.seq, "who": self.who, "original": self.original,
                "source": self.source, "translation": self.translation, "target": self.target,
                "at": self.at, "note": self.note, "warnings": self.warnings, "ref": self.ref}


@dataclass(frozen=True, slots=True)
class StoredRoom:
    """A room's row and its messages, oldest first."""

    room: RoomRecord
    messages: list[MessageRecord] = field(default_factory=list)


def conversations_location(settings: Settings) -> Path | str:
    """A PostgreSQL ``HYMT_DATABASE_URL``, else ``conversations.db`` in the cache folder."""
    return database_location(settings, settings.cache_dir / "conversations.db")


_db_errors = db_errors(ConversationStoreError, "The conversations' database is not answering")


def _room(row: sa.Row[Any]) -> RoomRecord:
    return RoomRecord(row.token, row.kind, row.opened, row.expires_at, json.loads(row.state),
                      row.number, row.agent, row.visitor, row.taken, row.unread, row.closed,
                      row.closed_at)


def _message(row: sa.Row[Any]) -> MessageRecord:
    return MessageRecord(row.token, row.seq, row.who, row.original, row.source,
                         row.translation, row.target, row.at, row.note,
                         tuple(json.loads(row.warnings)), row.ref)


class ConversationStore:
    """The rooms' and messages' rows; safe from several threads and replicas."""

    def __init__(self, where: Path | str, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        db = open_database(where, METADATA, schema_lock=_SCHEMA_LOCK)
        self._engine, self._insert, self.location = db.engine, db.insert, db.location

    def close(self) -> None:
        self._engine.dispose()

    @_db_errors
    def write(self, rooms: Sequence[RoomRecord], messages: Sequence[MessageRecord]) -> None:
        """Rooms' latest rows (replacing what was there) and new messages (one that is there
        already, by its room and number, is kept as it is), in one transaction."""
        now = self._clock()
        with self._engine.begin() as db:
            for room in rooms:
                values = {"kind": room.kind, "number": room.number, "agent": room.agent,
                          "visitor": room.visitor, "opened": room.opened, "taken": room.taken,
                          "unread": room.unread, "expires_at": room.expires_at,
                          "closed": room.closed, "closed_at": room.closed_at,
                          "state": json.dumps(room.state, ensure_ascii=False), "updated": now}
                db.execute(self._insert(ROOMS).values(token=room.token, **values)
                           .on_conflict_do_update(index_elements=["token"], set_=values))
            for m in messages:
                db.execute(self._insert(MESSAGES).values(
                    token=m.token, seq=m.seq, who=m.who, original=m.original, source=m.source,
                    translation=m.translation, target=m.target, at=m.at, note=m.note,
                    warnings=json.dumps(list(m.warnings), ensure_ascii=False), ref=m.ref,
                ).on_conflict_do_nothing(index_elements=["token", "seq"]))

    @_db_errors
    def load(self, token: str) -> StoredRoom | None:
        """The room of *token* with its messages (None: no such room)."""
        with self._engine.connect() as db:
            row = db.execute(sa.select(ROOMS).where(ROOMS.c.token == token)).first()
            if row is None:
                return None
            return StoredRoom(_room(row), self._messages(db, [token])[token])

    @_db_errors
    def open_desk(self) -> list[StoredRoom]:
        """The desk's conversations not ended nor expired (queued ones among them), by number."""
        with self._engine.connect() as db:
            rows = db.execute(sa.select(ROOMS).where(
                ROOMS.c.kind == "desk", ROOMS.c.closed.is_(None),
                ROOMS.c.expires_at > self._clock()).order_by(ROOMS.c.number)).all()
            found = self._messages(db, [r.token for r in rows])
        return [StoredRoom(_room(r), found[r.token]) for r in rows]

    @_db_errors
    def last_number(self) -> int:
        """The highest desk conversation number given so far (0: none)."""
        with self._engine.connect() as db:
            return int(db.execute(sa.select(sa.func.max(ROOMS.c.number))).scalar() or 0)

    @_db_errors
    def tokens(self, *, agent: str | None = None, visitor: str | None = None,
               kind: str | None = None, open_only: bool = False) -> list[str]:
        """The rooms of *agent* (who holds them) or *visitor*, oldest first (*open_only*: not
        ended nor expired)."""
        query = sa.select(ROOMS.c.token).order_by(ROOMS.c.opened)
        if open_only:
            query = query.where(ROOMS.c.closed.is_(None), ROOMS.c.expires_at > self._clock())
        if agent is not None:
            query = query.where(ROOMS.c.agent == agent)
        if visitor is not None:
            query = query.where(ROOMS.c.visitor == visitor)
        if kind is not None:
            query = query.where(ROOMS.c.kind == kind)
        with self._engine.connect() as db:
            return [r.token for r in db.execute(query)]

    @_db_errors
    def containing(self, text: str) -> list[str]:
        """Rooms where *text* (an e-mail address, a name; any case) was written: in a message, its
        translation, or the room's state (transcript, glossary)."""
        pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace(
            "_", "\\_") + "%"
        said = sa.select(MESSAGES.c.token).where(sa.or_(
            MESSAGES.c.original.ilike(pattern, escape="\\"),
            MESSAGES.c.translation.ilike(pattern, escape="\\")))
        kept = sa.select(ROOMS.c.token).where(ROOMS.c.state.ilike(pattern, escape="\\"))
        with self._engine.connect() as db:
            return sorted({r.token for r in db.execute(sa.union(said, kept))})

    @_db_errors
    def ended_before(self, when: float) -> list[str]:
        """Rooms ended (closed, or expired) before *when*: what retention removes."""
        ended = sa.func.coalesce(ROOMS.c.closed_at, ROOMS.c.expires_at)
        with self._engine.connect() as db:
            return [r.token for r in db.execute(sa.select(ROOMS.c.token).where(ended < when))]

    @_db_errors
    def forget(self, tokens: Iterable[str]) -> int:
        """Delete these rooms and every message of theirs; how many rooms were there."""
        wanted = list(tokens)
        if not wanted:
            return 0
        with self._engine.begin() as db:
            db.execute(sa.delete(MESSAGES).where(MESSAGES.c.token.in_(wanted)))
            return int(db.execute(sa.delete(ROOMS).where(ROOMS.c.token.in_(wanted))).rowcount)

    @staticmethod
    def _messages(db: sa.Connection, tokens: list[str]) -> dict[str, list[MessageRecord]]:
        found: dict[str, list[MessageRecord]] = {t: [] for t in tokens}
        if tokens:
            for row in db.execute(sa.select(MESSAGES).where(MESSAGES.c.token.in_(tokens))
                                  .order_by(MESSAGES.c.token, MESSAGES.c.seq)):
                found[row.token].append(_message(row))
        return found
