"""The audit log: who (an agent, or a command) read, exported, corrected, erased or took over
what, and when — one append-only table in the deployment's database (a PostgreSQL
``HYMT_DATABASE_URL``, else ``audit.db`` in the cache folder).

Append-only is the database's rule, not only this module's: a trigger refuses every UPDATE and
DELETE of a row (SQLite and PostgreSQL alike), so a person erased from everything else still
has their erasure on record. What a row names is never the personal data itself: a text (an
e-mail address someone asked to forget) or a visitor is kept as its SHA-256 (an operator who
knows the address can find its rows with :func:`subject_label`), with its kinds shown as
placeholders (``[email-1]``).
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import logging
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import sqlalchemy as sa

from hymt_chat.errors import HymtError
from hymt_chat.store.database import database_location, db_errors, open_database, open_error
from hymt_chat.text.personal import redact

if TYPE_CHECKING:
    from hymt_chat.settings import Settings

__all__ = [
    "ACTIONS",
    "AuditEntry",
    "AuditLog",
    "AuditStoreError",
    "audit_location",
    "audit_quietly",
    "open_audit_log",
    "subject_label",
    "write_csv",
]

ACTIONS = ("read", "export", "correct", "erase", "take_over", "retention")
_SCHEMA_LOCK = 0x68796175  # 'hyau'
_REFUSAL = "the audit log is append-only"
_log = logging.getLogger("hymt_chat.audit")

METADATA = sa.MetaData()
ROWS = sa.Table(
    "audit_log", METADATA,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True,
              autoincrement=True),
    sa.Column("at", sa.Double, nullable=False, index=True),  # epoch seconds
    sa.Column("actor", sa.Text, nullable=False),  # agent:alice, command:forget
    sa.Column("action", sa.Text, nullable=False),  # one of ACTIONS
    sa.Column("subject", sa.Text, nullable=False),  # subject_label(kind, value)
    sa.Column("detail", sa.Text, nullable=False, server_default=""),
)


def _only_on(dialect: str, statement: str) -> None:
    ddl = sa.DDL(statement)  # type: ignore[no-untyped-call]
    sa.event.listen(ROWS, "after_create", ddl.execute_if(dialect=dialect))


for _name in ("update", "delete"):
    _only_on("sqlite", f"CREATE TRIGGER audit_log_no_{_name} BEFORE {_name.upper()} ON audit_log "
             f"BEGIN SELECT RAISE(ABORT, '{_REFUSAL}'); END")
_only_on("postgresql", "CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger "
         f"LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '{_REFUSAL}'; END $$")
_only_on("postgresql", "CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON "
         "audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()")


class AuditStoreError(HymtError):
    """The audit log's database did not answer or refused a statement."""


@dataclass(frozen=True, slots=True)
class AuditEntry:
    at: float
    actor: str
    action: str
    subject: str
    detail: str = ""

    @property
    def when(self) -> str:
        return datetime.fromtimestamp(self.at, UTC).isoformat(timespec="seconds")


def subject_label(kind: str, value: str) -> str:
    """What a row names: a room or an agent as it is; a visitor or a text by its SHA-256 (and
    its personal data's kinds as placeholders), never in clear."""
    if kind in ("room", "agent", "thread"):
        return f"{kind} {value}"
    digest = hashlib.sha256(value.strip().encode()).hexdigest()[:16]
    shown = redact(value.strip())
    kinds = f" {shown.text}" if shown.changed and not _clear_left(shown.text) else ""
    return f"{kind} sha256:{digest}{kinds}"


def _clear_left(redacted: str) -> bool:
    """Anything besides placeholders, spaces and punctuation is left in clear."""
    return bool(re.sub(r"\[[a-z]+-\d+\]|[\s\W]", "", redacted))


def audit_location(settings: Settings) -> Path | str:
    return database_location(settings, settings.cache_dir / "audit.db")


_db_errors = db_errors(AuditStoreError, "The audit log's database is not answering")


class AuditLog:
    def __init__(self, where: Path | str, *, clock: Callable[[], float] = time.time,
                 connect_timeout: float = 10) -> None:
        self._clock = clock
        db = open_database(where, METADATA, schema_lock=_SCHEMA_LOCK,
                           connect_timeout=connect_timeout)
        self._engine, self.location = db.engine, db.location

    def close(self) -> None:
        self._engine.dispose()

    @_db_errors
    def record(self, actor: str, action: str, subject: str, detail: str = "") -> AuditEntry:
        """Append one row (*subject*: a :func:`subject_label`)."""
        if action not in ACTIONS:
            raise ValueError(f"unknown audit action {action!r}")
        entry = AuditEntry(self._clock(), actor, action, subject, detail)
        with self._engine.begin() as db:
            db.execute(sa.insert(ROWS).values(at=entry.at, actor=actor, action=action,
                                              subject=subject, detail=detail))
        return entry

    @_db_errors
    def entries(self, *, since: float | None = None, until: float | None = None,
                actor: str | None = None, action: str | None = None,
                subject: str | None = None) -> list[AuditEntry]:
        """The rows, oldest first, narrowed by any of the filters (*subject*: a prefix)."""
        query = sa.select(ROWS).order_by(ROWS.c.at, ROWS.c.id)
        if since is not None:
            query = query.where(ROWS.c.at >= since)
        if until is not None:
            query = query.where(ROWS.c.at < until)
        if actor:
            query = query.where(ROWS.c.actor == actor)
        if action:
            query = query.where(ROWS.c.action == action)
        if subject:
            query = query.where(ROWS.c.subject.startswith(subject, autoescape=True))
        with self._engine.connect() as db:
            return [AuditEntry(r.at, r.actor, r.action, r.subject, r.detail)
                    for r in db.execute(query)]


async def audit_quietly(log: AuditLog | None, actor: str, action: str, subject: str,
                        detail: str = "") -> None:
    """Record from the event loop (a worker thread does the write); a database that fails
    is logged, never the agent's turn."""
    if log is None:
        return
    try:
        await asyncio.to_thread(log.record, actor, action, subject, detail)
    except AuditStoreError:
        _log.exception("could not write the audit log: %s %s %s", actor, action, subject)


def open_audit_log(settings: Settings, *, clock: Callable[[], float] = time.time) -> AuditLog:
    where = audit_location(settings)
    try:
        return AuditLog(where, clock=clock)
    except HymtError:
        raise
    except (OSError, sa.exc.SQLAlchemyError, ImportError) as err:
        raise open_error("audit log", where, err) from None


def write_csv(entries: Iterable[AuditEntry], out: TextIO) -> int:
    """RFC 4180 CSV with a header row: time (UTC, ISO 8601), actor, action, subject, detail."""
    writer = csv.writer(out)
    writer.writerow(["time", "actor", "action", "subject", "detail"])
    count = 0
    for entry in entries:
        writer.writerow([entry.when, entry.actor, entry.action, entry.subject, entry.detail])
        count += 1
    return count
