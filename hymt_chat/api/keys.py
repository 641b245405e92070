"""API keys, their monthly character usage and their glossaries, in one small SQLite file.

A key is shown once, when it is made (``hymt-chat api-key create NAME``); only its SHA-256 is
stored. A plain hash is enough here, unlike for passwords: the key is 256 random bits, so
there is nothing to guess and no need for a slow hash (scrypt would cost every request).

Stored in its own SQLite file under the cache folder (``HYMT_API_KEYS_PATH``), not in the
history database: the API must work without agents or history configured, the history may be
PostgreSQL behind an async driver, and the command line must create a key with nothing running.
One file per host: several app replicas need it on shared storage (SQLite's locking does the
rest; the counters are single UPDATE statements).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from hymt_chat.errors import HymtError, InputError, QuotaExceededError

__all__ = ["ApiKey", "ApiKeyError", "Glossary", "KeyStore", "hash_key", "month_of", "open_store"]

KEY_PREFIX = "hymt-"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS api_keys (
    name TEXT PRIMARY KEY,
    key_hash TEXT UNIQUE,               -- NULL once revoked
    chars_per_month INTEGER,            -- NULL: no quota
    per_minute INTEGER NOT NULL,
    created REAL NOT NULL,
    revoked REAL
);
CREATE TABLE IF NOT EXISTS api_usage (
    name TEXT NOT NULL,
    month TEXT NOT NULL,                -- 'YYYY-MM', UTC
    chars INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (name, month)
);
CREATE TABLE IF NOT EXISTS api_glossaries (
    id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,                -- the key's name ('local' without a key)
    name TEXT NOT NULL,
    source TEXT NOT NULL,               -- our language codes
    target TEXT NOT NULL,
    entries TEXT NOT NULL,              -- JSON object: source term -> target term
    created REAL NOT NULL
);
"""


class ApiKeyError(InputError):
    """A key command that cannot be carried out (bad name, name taken, no such key)."""


@dataclass(frozen=True, slots=True)
class ApiKey:
    name: str
    chars_per_month: int | None
    per_minute: int
    created: float
    revoked: float | None
    used_this_month: int = 0

    @property
    def active(self) -> bool:
        return self.revoked is None


@dataclass(frozen=True, slots=True)
class Glossary:
    id: str
    owner: str
    name: str
    source: str
    target: str
    entries: Mapping[str, str]
    created: float


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def month_of(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m")


class KeyStore:
    """The SQLite file; every method is one short transaction (safe from several threads)."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not path.exists():  # owner-only from the start: it holds key hashes and glossaries
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None,
                                   timeout=10)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # --- keys ------------------------------------------------------------------------------

    def create(self, name: str, *, per_minute: int, chars_per_month: int | None = None) -> str:
        """Make a key named *name*; returns the key itself (the only time it exists in clear)."""
        if not _NAME.match(name):
            raise ApiKeyError(f"A key name is 1-64 letters, digits, '.', '_' or '-'; not {name!r}.")
        if per_minute < 1 or (chars_per_month is not None and chars_per_month < 1):
            raise ApiKeyError("--per-minute and --chars-per-month must be at least 1.")
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        with self._tx() as db:
            row = db.execute("SELECT revoked FROM api_keys WHERE name = ?", (name,)).fetchone()
            if row is not None and row[0] is None:
                raise ApiKeyError(f"A key named {name!r} exists; revoke it first or pick another "
                                "name.")
            db.execute("INSERT OR REPLACE INTO api_keys VALUES (?, ?, ?, ?, ?, NULL)",
                       (name, hash_key(key), chars_per_month, per_minute, self._clock()))
        return key

    def revoke(self, name: str) -> None:
        with self._tx() as db:
            cur = db.execute("UPDATE api_keys SET key_hash = NULL, revoked = ? "
                             "WHERE name = ? AND revoked IS NULL", (self._clock(), name))
            if cur.rowcount == 0:
                raise ApiKeyError(f"No active key named {name!r} (`hymt-chat api-key list`).")

    def list(self) -> list[ApiKey]:
        month = month_of(self._clock())
        with self._lock:
            rows = self._db.execute(
                "SELECT k.name, k.chars_per_month, k.per_minute, k.created, k.revoked, "
                "COALESCE(u.chars, 0) FROM api_keys k LEFT JOIN api_usage u "
                "ON u.name = k.name AND u.month = ? ORDER BY k.name", (month,)).fetchall()
        return [ApiKey(*row) for row in rows]

    def active_count(self) -> int:
        with self._lock:
            return self._db.execute(
                "SELECT COUNT(*) FROM api_keys WHERE revoked IS NULL").fetchone()[0]

    def lookup(self, key: str) -> ApiKey | None:
        """The active key *key* is, or None (unknown or revoked)."""
        with self._lock:
            row = self._db.execute(
                "SELECT name, chars_per_month, per_minute, created, revoked FROM api_keys "
                "WHERE key_hash = ? AND revoked IS NULL", (hash_key(key),)).fetchone()
        return ApiKey(*row) if row else None

    # --- usage -----------------------------------------------------------------------------

    def used(self, name: str) -> int:
        with self._lock:
            row = self._db.execute("SELECT chars FROM api_usage WHERE name = ? AND month = ?",
                                   (name, month_of(self._clock()))).fetchone()
        return row[0] if row else 0

    def charge(self, name: str, chars: int, limit: int | None) -> str:
        """Add *chars* to this month's use, or raise QuotaExceededError (and add nothing).

        Returns the month charged, for :meth:`refund` (a failed translation is not billed)."""
        month = month_of(self._clock())
        with self._tx() as db:
            db.execute("INSERT OR IGNORE INTO api_usage VALUES (?, ?, 0)", (name, month))
            cur = db.execute("UPDATE api_usage SET chars = chars + ? WHERE name = ? AND "
                             "month = ? AND (? IS NULL OR chars + ? <= ?)",
                             (chars, name, month, limit, chars, limit))
            if cur.rowcount == 0:
                used = db.execute("SELECT chars FROM api_usage WHERE name = ? AND month = ?",
                                  (name, month)).fetchone()[0]
                raise QuotaExceededError(used, limit or 0, chars)
        return month

    def refund(self, name: str, chars: int, month: str) -> None:
        with self._tx() as db:
            db.execute("UPDATE api_usage SET chars = MAX(0, chars - ?) WHERE name = ? AND "
                       "month = ?", (chars, name, month))

    # --- glossaries --------------------------------------------------------------------------

    def add_glossary(self, owner: str, name: str, source: str, target: str,
                     entries: Mapping[str, str]) -> Glossary:
        glossary = Glossary(secrets.token_hex(16), owner, name, source, target, dict(entries),
                            self._clock())
        with self._tx() as db:
            db.execute("INSERT INTO api_glossaries VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (glossary.id, owner, name, source, target,
                        json.dumps(glossary.entries, ensure_ascii=False), glossary.created))
        return glossary

    def glossary(self, owner: str, glossary_id: str) -> Glossary | None:
        """*owner*'s glossary *glossary_id* (another key's is not found, by design)."""
        with self._lock:
            row = self._db.execute("SELECT * FROM api_glossaries WHERE id = ? AND owner = ?",
                                   (glossary_id, owner)).fetchone()
        return _glossary(row) if row else None

    def glossaries(self, owner: str) -> list[Glossary]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM api_glossaries WHERE owner = ? "
                                    "ORDER BY created", (owner,)).fetchall()
        return [_glossary(row) for row in rows]

    def delete_glossary(self, owner: str, glossary_id: str) -> bool:
        with self._tx() as db:
            cur = db.execute("DELETE FROM api_glossaries WHERE id = ? AND owner = ?",
                             (glossary_id, owner))
        return cur.rowcount > 0


def _glossary(row: tuple) -> Glossary:  # type: ignore[type-arg]
    gid, owner, name, source, target, entries, created = row
    return Glossary(gid, owner, name, source, target, json.loads(entries), created)


def open_store(path: Path) -> KeyStore:
    """The store at *path*; HymtError with the reason when the file cannot be opened."""
    try:
        return KeyStore(path)
    except (OSError, sqlite3.Error) as err:
        raise HymtError(f"Cannot open the API key file {path}: {err}.") from None
