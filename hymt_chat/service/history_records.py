"""One person's threads in Chainlit's history (the tables of :mod:`hymt_chat.service.history`):
found, read for an export, deleted, and the old ones swept.

A plain sync engine on the history's URL (sqlite3 or psycopg, as :mod:`hymt_chat.store.database`
opens the other stores): the command line and the sweeper's worker thread call it, never the
event loop. Children are deleted before their thread, explicitly: SQLite enforces the schema's
``ON DELETE CASCADE`` only on connections that turned foreign keys on, and Chainlit's do not.
SQLite deletes securely (the bytes overwritten) and empties its write-ahead log afterwards.

A thread's age is its last activity: the newest of its own and its steps' ``createdAt``
(Chainlit writes ISO 8601 strings, which sort as times do).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from hymt_chat.errors import HymtError
from hymt_chat.service.history import ERASED, METADATA, sqlite_path
from hymt_chat.store.database import db_errors, sync_url

__all__ = ["HistoryRecords", "HistoryStoreError", "Removed", "iso_before"]

THREADS, STEPS = METADATA.tables["threads"], METADATA.tables["steps"]
ELEMENTS, FEEDBACKS = METADATA.tables["elements"], METADATA.tables["feedbacks"]
USERS = METADATA.tables["users"]
_BATCH = 500


class HistoryStoreError(HymtError):
    """The history's database did not answer or refused a statement."""


_db_errors = db_errors(HistoryStoreError, "The history's database is not answering")


@dataclass(slots=True)
class Removed:
    threads: int = 0
    steps: int = 0
    elements: int = 0
    feedbacks: int = 0
    users: int = 0
    sessions: set[str] = field(default_factory=set)  # Chainlit session ids: their file folders
    texts: list[str] = field(default_factory=list)  # what the removed steps said

    def counts(self) -> dict[str, int]:
        return {"history threads": self.threads, "history steps": self.steps,
                "history elements": self.elements, "history feedbacks": self.feedbacks,
                "history users": self.users}


def iso_before(epoch: float) -> str:
    """*epoch* as Chainlit writes its times (``2026-11-04T07:00:00.000000Z``)."""
    moment = datetime.fromtimestamp(epoch, UTC).replace(tzinfo=None)
    return moment.isoformat(timespec="microseconds") + "Z"


def _metadata(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value:
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def _contains(column: Any, text: str) -> Any:
    return sa.func.lower(sa.cast(column, sa.Text)).contains(text.lower(), autoescape=True)


class HistoryRecords:
    """The history's tables at *url* (``HYMT_DATABASE_URL``'s async form is fine)."""

    def __init__(self, url: str) -> None:
        path = sqlite_path(url)
        self.missing = path is not None and not path.exists()  # no history kept here yet
        self.engine = sa.create_engine(sync_url(path if path is not None else url))
        self.sqlite = path is not None
        if self.sqlite:
            sa.event.listen(self.engine, "connect",
                            lambda conn, _r: conn.execute("PRAGMA secure_delete=ON"))

    def close(self) -> None:
        self.engine.dispose()

    @_db_errors
    def present(self) -> bool:
        if self.missing:
            return False
        with self.engine.connect() as db:
            return sa.inspect(db).has_table("threads")

    # --- finding ---------------------------------------------------------------------------

    @_db_errors
    def of_agent(self, identifier: str) -> list[str]:
        """The threads of the signed-in user *identifier*."""
        if not self.present():
            return []
        users = sa.select(USERS.c.id).where(USERS.c.identifier == identifier)
        query = sa.select(THREADS.c.id).where(sa.or_(THREADS.c.userIdentifier == identifier,
                                                     THREADS.c.userId.in_(users)))
        with self.engine.connect() as db:
            return [str(r[0]) for r in db.execute(query)]

    @_db_errors
    def mentioning(self, text: str) -> list[str]:
        """The threads whose name, metadata (an agent's saved conversation), steps or
        elements hold *text* (case-insensitive)."""
        if not self.present() or not text.strip():
            return []
        ids: set[str] = set()
        with self.engine.connect() as db:
            ids |= {str(r[0]) for r in db.execute(sa.select(THREADS.c.id).where(sa.or_(
                _contains(THREADS.c.name, text), _contains(THREADS.c.metadata, text))))}
            ids |= {str(r[0]) for r in db.execute(sa.select(STEPS.c.threadId).where(sa.or_(
                *(_contains(STEPS.c[c], text) for c in ("name", "input", "output", "metadata",
                                                         "generation")))))}
            ids |= {str(r[0]) for r in db.execute(sa.select(ELEMENTS.c.threadId).where(sa.or_(
                _contains(ELEMENTS.c.name, text), _contains(ELEMENTS.c.url, text),
                _contains(ELEMENTS.c.props, text))).where(ELEMENTS.c.threadId.is_not(None)))}
        return sorted(ids)

    @_db_errors
    def older_than(self, epoch: float) -> list[str]:
        """Threads with no activity since *epoch*."""
        if not self.present():
            return []
        cutoff = iso_before(epoch)
        latest = (sa.select(STEPS.c.threadId, sa.func.max(STEPS.c.createdAt).label("last"))
                  .group_by(STEPS.c.threadId).subquery())
        query = (sa.select(THREADS.c.id).select_from(
            THREADS.outerjoin(latest, latest.c.threadId == THREADS.c.id))
            .where(sa.func.coalesce(THREADS.c.createdAt, "") < cutoff)
            .where(sa.or_(latest.c.last.is_(None), latest.c.last < cutoff)))
        with self.engine.connect() as db:
            return [str(r[0]) for r in db.execute(query)]

    # --- reading ---------------------------------------------------------------------------

    @_db_errors
    def read(self, ids: Sequence[str]) -> list[dict[str, Any]]:
        """The threads with their steps (in order), elements and feedbacks, as plain JSON."""
        out: list[dict[str, Any]] = []
        with self.engine.connect() as db:
            for tid in ids:
                thread = db.execute(sa.select(THREADS).where(THREADS.c.id == tid)).first()
                if thread is None:
                    continue
                steps = db.execute(sa.select(STEPS).where(STEPS.c.threadId == tid)
                                   .order_by(STEPS.c.createdAt)).all()
                elements = db.execute(sa.select(ELEMENTS).where(ELEMENTS.c.threadId == tid)).all()
                feedbacks = db.execute(sa.select(FEEDBACKS).where(
                    FEEDBACKS.c.threadId == tid)).all()
                item = _plain(thread)
                item["metadata"] = _metadata(thread.metadata)
                item["steps"] = [_plain(s) for s in steps]
                item["elements"] = [_plain(e) for e in elements]
                item["feedbacks"] = [_plain(f) for f in feedbacks]
                out.append(item)
        return out

    # --- removing --------------------------------------------------------------------------

    @_db_errors
    def delete(self, ids: Sequence[str], removed: Removed | None = None, *,
               refuse_later: bool = False) -> Removed:
        """Delete the threads *ids* and everything under them; *removed* says what went (the
        steps' texts and the threads' session ids too: for the memory and the files). With
        *refuse_later* (an erasure) the ids are kept in ``erased_threads``: a tab still open
        on one cannot write it back (:func:`hymt_chat.service.history.refuse_erased`)."""
        removed = removed or Removed()
        ids = list(dict.fromkeys(ids))
        if not ids or not self.present():
            return removed
        for start in range(0, len(ids), _BATCH):
            batch = ids[start:start + _BATCH]
            with self.engine.begin() as db:
                for row in db.execute(sa.select(THREADS.c.metadata).where(
                        THREADS.c.id.in_(batch))):
                    session = _metadata(row.metadata).get("id")
                    if isinstance(session, str) and session:
                        removed.sessions.add(session)
                for row in db.execute(sa.select(STEPS.c.input, STEPS.c.output).where(
                        STEPS.c.threadId.in_(batch))):
                    removed.texts += [t for t in (row.input, row.output) if t]
                steps = sa.select(STEPS.c.id).where(STEPS.c.threadId.in_(batch))
                removed.feedbacks += db.execute(sa.delete(FEEDBACKS).where(sa.or_(
                    FEEDBACKS.c.threadId.in_(batch), FEEDBACKS.c.forId.in_(steps)))).rowcount
                removed.elements += db.execute(sa.delete(ELEMENTS).where(
                    ELEMENTS.c.threadId.in_(batch))).rowcount
                removed.steps += db.execute(sa.delete(STEPS).where(
                    STEPS.c.threadId.in_(batch))).rowcount
                removed.threads += db.execute(sa.delete(THREADS).where(
                    THREADS.c.id.in_(batch))).rowcount
                if refuse_later:
                    ERASED.create(db, checkfirst=True)  # a history made by an older version
                    known = {r[0] for r in db.execute(sa.select(ERASED.c.id).where(
                        ERASED.c.id.in_(batch)))}
                    now = iso_before(time.time())
                    fresh = [{"id": t, "erasedAt": now} for t in batch if t not in known]
                    if fresh:
                        db.execute(sa.insert(ERASED), fresh)
        self.scrub()
        return removed

    @_db_errors
    def delete_user(self, identifier: str, removed: Removed | None = None) -> Removed:
        """The signed-in user's row (after their threads)."""
        removed = removed or Removed()
        if self.present():
            with self.engine.begin() as db:
                removed.users += db.execute(sa.delete(USERS).where(
                    USERS.c.identifier == identifier)).rowcount
            self.scrub()
        return removed

    @_db_errors
    def scrub(self) -> None:
        if self.sqlite:
            with self.engine.connect() as db:
                db.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")


def _plain(row: sa.Row[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in row._mapping.items():
        if key in ("metadata", "props", "generation", "modes", "playerConfig"):
            value = _metadata(value) if value is not None else None
        out[str(key)] = value if isinstance(value, (str, int, float, bool, dict, list,
                                                    type(None))) else str(value)
    return out
