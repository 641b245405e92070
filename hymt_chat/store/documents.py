"""Documents being translated for DeepL's ``/v2/document``: status, progress and the result,
until downloaded (once) or an hour old.

DeepL's document API is three calls (upload -> ``document_id`` + ``document_key``; status;
download) that a client may send to any app replica: the job lives in the one database of
:mod:`hymt_chat.store.database` (PostgreSQL with ``HYMT_DATABASE_URL``, else an owner-only
SQLite file in the cache folder), while the replica that took the upload translates it. Only the
key's SHA-256 is kept; a document is found only with its key and its API key's owner, deleted
once downloaded, and every expired one is deleted on the next write. A job whose replica went
away (no progress for :data:`STALLED_AFTER` seconds) is reported as an error, not as
"translating" forever.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from hymt_chat.errors import HymtError
from hymt_chat.store.database import database_location, db_errors, open_database

if TYPE_CHECKING:
    from hymt_chat.settings import Settings

__all__ = ["DocumentJob", "DocumentJobs", "DocumentStoreError", "documents_location"]

KEEP_SECONDS = 3600.0  # a job and its result, from the upload
STALLED_AFTER = 600.0  # no progress for this long: the replica translating it is gone
_SCHEMA_LOCK = 0x68796D64  # 'hymd'

METADATA = sa.MetaData()
JOBS = sa.Table(
    "api_documents", METADATA,
    sa.Column("id", sa.Text, primary_key=True),
    sa.Column("key_hash", sa.Text, nullable=False),
    sa.Column("owner", sa.Text, nullable=False),        # the API key's name
    sa.Column("name", sa.Text, nullable=False),         # the upload's file name
    sa.Column("status", sa.Text, nullable=False),       # queued, translating, done, error
    sa.Column("parts", sa.Integer, nullable=False, server_default="0"),
    sa.Column("done", sa.Integer, nullable=False, server_default="0"),
    sa.Column("billed", sa.BigInteger, nullable=False, server_default="0"),
    sa.Column("error", sa.Text),
    sa.Column("created", sa.Double, nullable=False),
    sa.Column("updated", sa.Double, nullable=False),
    sa.Column("started", sa.Double),
    sa.Column("out_name", sa.Text),
    sa.Column("mime", sa.Text),
    sa.Column("result", sa.LargeBinary),
)


class DocumentStoreError(HymtError):
    """The documents' database did not answer (the details are logged)."""


@dataclass(frozen=True, slots=True)
class DocumentJob:
    id: str
    status: str
    parts: int
    done: int
    billed: int
    error: str | None
    seconds_remaining: int | None  # while translating, from the pace so far


def documents_location(settings: Settings) -> Path | str:
    """A PostgreSQL ``HYMT_DATABASE_URL``, else ``api-documents.db`` in the cache folder."""
    return database_location(settings, settings.cache_dir / "api-documents.db")


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


_db_errors = db_errors(DocumentStoreError, "The documents' database is not answering")


class DocumentJobs:
    """The jobs' rows; safe from several threads and replicas (one transaction a call)."""

    def __init__(self, where: Path | str, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        db = open_database(where, METADATA, schema_lock=_SCHEMA_LOCK)
        self._engine, self.location = db.engine, db.location

    def close(self) -> None:
        self._engine.dispose()

    @_db_errors
    def sweep(self, before: float) -> int:
        """Remove the jobs made before *before* (epoch seconds), results and all: retention."""
        with self._engine.begin() as db:
            return db.execute(sa.delete(JOBS).where(JOBS.c.created < before)).rowcount

    @_db_errors
    def create(self, owner: str, name: str, parts: int) -> tuple[str, str]:
        """A queued job of *owner*: its ``(document_id, document_key)``; expired jobs go."""
        now = self._clock()
        job_id, key = uuid.uuid4().hex.upper(), secrets.token_hex(32).upper()
        with self._engine.begin() as db:
            db.execute(sa.delete(JOBS).where(JOBS.c.created < now - KEEP_SECONDS))
            db.execute(sa.insert(JOBS).values(id=job_id, key_hash=_hash(key), owner=owner,
                                              name=name, status="queued", parts=parts,
                                              created=now, updated=now))
        return job_id, key

    @_db_errors
    def progress(self, job_id: str, done: int) -> None:
        now = self._clock()
        with self._engine.begin() as db:
            db.execute(sa.update(JOBS).where(JOBS.c.id == job_id, JOBS.c.status != "error")
                       .values(status="translating", done=done, updated=now,
                               started=sa.func.coalesce(JOBS.c.started, now)))

    @_db_errors
    def finish(self, job_id: str, data: bytes, out_name: str, mime: str, billed: int) -> None:
        with self._engine.begin() as db:
            db.execute(sa.update(JOBS).where(JOBS.c.id == job_id).values(
                status="done", done=JOBS.c.parts, result=data, out_name=out_name, mime=mime,
                billed=billed, updated=self._clock()))

    @_db_errors
    def fail(self, job_id: str, message: str) -> None:
        with self._engine.begin() as db:
            db.execute(sa.update(JOBS).where(JOBS.c.id == job_id).values(
                status="error", error=message, updated=self._clock()))

    def _row(self, db: sa.Connection, owner: str, job_id: str, key: str) -> sa.Row[Any] | None:
        row = db.execute(sa.select(JOBS).where(JOBS.c.id == job_id, JOBS.c.owner == owner,
                                               JOBS.c.created >= self._clock() - KEEP_SECONDS)
                         ).first()
        if row is None or not hmac.compare_digest(row.key_hash, _hash(key)):
            return None
        return row

    @_db_errors
    def status(self, owner: str, job_id: str, key: str) -> DocumentJob | None:
        """The job, if *key* is its key and *owner* its owner (else None: not found)."""
        with self._engine.connect() as db:
            row = self._row(db, owner, job_id, key)
        if row is None:
            return None
        now = self._clock()
        status, error, remaining = row.status, row.error, None
        if status in ("queued", "translating") and now - row.updated > STALLED_AFTER:
            status, error = "error", ("The translation stopped: the server translating it "
                                      "went away. Upload the document again.")
        elif status == "translating" and row.started and row.done:
            pace = (now - row.started) / row.done
            remaining = max(1, round(pace * (row.parts - row.done)))
        return DocumentJob(row.id, status, row.parts, row.done, row.billed, error, remaining)

    @_db_errors
    def take(self, owner: str, job_id: str, key: str) -> tuple[bytes, str, str] | None:
        """A done job's ``(bytes, file name, MIME type)``, deleted as it is taken: a document
        is downloaded once (DeepL's rule). None: no such job, or not done."""
        with self._engine.begin() as db:
            row = self._row(db, owner, job_id, key)
            if row is None or row.status != "done":
                return None
            gone = db.execute(sa.delete(JOBS).where(JOBS.c.id == job_id, JOBS.c.status == "done"))
            if gone.rowcount != 1:  # taken by another request meanwhile
                return None
        return bytes(row.result), str(row.out_name), str(row.mime)
