"""API keys, their monthly character usage and their glossaries: SQLite or PostgreSQL.

A key is shown once, when it is made (``hymt-chat api-key create NAME``); only its SHA-256 is
stored. A plain hash is enough here, unlike for passwords: the key is 256 random bits, so
there is nothing to guess and no need for a slow hash (scrypt would cost every request).

Where (:func:`store_location`): with a PostgreSQL ``HYMT_DATABASE_URL`` the keys live in that
database, in their own tables beside the history's (every app replica sees them); otherwise a
SQLite file under the cache folder (``HYMT_API_KEYS_PATH``), which needs nothing running: the
command line makes a key on a fresh machine. Both through :mod:`hymt_chat.store.database`
(the one SQLite-or-PostgreSQL mechanism); the API calls the store from a worker thread
(``asyncio.to_thread``), never on the event loop.

Every counter is one conditional statement in one transaction, so two replicas charging the
same key at once never pass its monthly quota: PostgreSQL locks the row and re-checks the
condition on the row the other replica committed; SQLite serialises writers on its file lock.
"""

from __future__ import annotations

import builtins  # KeyStore.list shadows the builtin in its class body
import hashlib
import json
import re
import secrets
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from hymt_chat.errors import HymtError, InputError, QuotaExceededError
from hymt_chat.store.database import database_location, db_errors, open_database, open_error
from hymt_chat.store.database import sync_url as _sync_url  # noqa: F401 - tests import it here

if TYPE_CHECKING:
    from hymt_chat.settings import Settings

__all__ = [
    "ApiKey",
    "ApiKeyError",
    "Dictionary",
    "Glossary",
    "KeyStore",
    "KeyStoreError",
    "hash_key",
    "month_of",
    "open_store",
    "store_location",
]

KEY_PREFIX = "hymt-"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_SCHEMA_LOCK = 0x68796D74  # 'hymt': one replica at a time creates the tables on PostgreSQL

METADATA = sa.MetaData()
KEYS = sa.Table(
    "api_keys", METADATA,
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("key_hash", sa.Text, unique=True),         # NULL once revoked
    sa.Column("chars_per_month", sa.BigInteger),         # NULL: no quota
    sa.Column("per_minute", sa.Integer, nullable=False),
    sa.Column("created", sa.Double, nullable=False),
    sa.Column("revoked", sa.Double),
)
USAGE = sa.Table(
    "api_usage", METADATA,
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("month", sa.Text, primary_key=True),       # 'YYYY-MM', UTC
    sa.Column("chars", sa.BigInteger, nullable=False, server_default="0"),
)
GLOSSARIES = sa.Table(
    "api_glossaries", METADATA,
    sa.Column("id", sa.Text, primary_key=True),
    sa.Column("owner", sa.Text, nullable=False),         # the key's name ('local' without one)
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("source", sa.Text, nullable=False),        # our language codes
    sa.Column("target", sa.Text, nullable=False),
    sa.Column("entries", sa.Text, nullable=False),       # JSON object: source -> target term
    sa.Column("created", sa.Double, nullable=False),
)
_KEY_COLUMNS = (KEYS.c.name, KEYS.c.chars_per_month, KEYS.c.per_minute, KEYS.c.created,
                KEYS.c.revoked)


class ApiKeyError(InputError):
    """A key command that cannot be carried out (bad name, name taken, no such key)."""


class KeyStoreError(HymtError):
    """The key database did not answer or refused a statement (the details are logged)."""


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
class Dictionary:
    """One language pair of a glossary and its terms (DeepL's v3 "dictionary")."""

    source: str  # our codes
    target: str
    entries: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Glossary:
    """A key's glossary: one dictionary (DeepL v2) or several (v3, one per language pair).

    Stored in one row: ``source``/``target`` hold the first pair (what v2 shows), ``entries``
    a JSON object for a one-pair glossary (every row written before v3) or a JSON list of
    ``[source, target, {terms}]`` for several."""

    id: str
    owner: str
    name: str
    dictionaries: tuple[Dictionary, ...]
    created: float

    @property
    def source(self) -> str:
        return self.dictionaries[0].source

    @property
    def target(self) -> str:
        return self.dictionaries[0].target

    @property
    def entries(self) -> Mapping[str, str]:
        return self.dictionaries[0].entries

    def pair(self, source: str, target: str) -> Dictionary | None:
        return next((d for d in self.dictionaries if (d.source, d.target) == (source, target)),
                    None)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def month_of(now: float) -> str:
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m")


def store_location(settings: Settings) -> Path | str:
    """Where the keys live: a PostgreSQL ``database_url`` (shared by every replica), else the
    SQLite file ``settings.api_keys_file`` (a SQLite history URL does not move them: the file
    stays where ``HYMT_API_KEYS_PATH`` says)."""
    return database_location(settings, settings.api_keys_file)


_db_errors = db_errors(KeyStoreError,
                       "The API key database is not answering; try again shortly")


class KeyStore:
    """Keys, usage and glossaries in SQLite (*where* a file path) or PostgreSQL (*where* a
    URL); every method is one short transaction, safe from several threads and replicas."""

    def __init__(self, where: Path | str, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        db = open_database(where, METADATA, schema_lock=_SCHEMA_LOCK)
        self._engine, self._insert = db.engine, db.insert
        self.path: Path | None = db.path  # the SQLite file, if that is where the keys are
        # The file path, or the URL without its password: what the app's start line shows.
        self.location = db.location

    def close(self) -> None:
        self._engine.dispose()

    # --- keys ------------------------------------------------------------------------------

    @_db_errors
    def create(self, name: str, *, per_minute: int, chars_per_month: int | None = None) -> str:
        """Make a key named *name*; returns the key itself (the only time it exists in clear)."""
        if not _NAME.match(name):
            raise ApiKeyError(f"A key name is 1-64 letters, digits, '.', '_' or '-'; not {name!r}.")
        if per_minute < 1 or (chars_per_month is not None and chars_per_month < 1):
            raise ApiKeyError("--per-minute and --chars-per-month must be at least 1.")
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        new = self._insert(KEYS).values(name=name, key_hash=hash_key(key),
                                        chars_per_month=chars_per_month,
                                        per_minute=per_minute, created=self._clock(),
                                        revoked=None)
        # A revoked name may be given a new key; an active one is refused, in the same
        # statement (two replicas creating one name at once: one wins, the other is told).
        # RETURNING says which: psycopg reports no rowcount for an upsert that did nothing.
        new = new.on_conflict_do_update(
            index_elements=[KEYS.c.name], where=KEYS.c.revoked.is_not(None),
            set_={c: new.excluded[c] for c in ("key_hash", "chars_per_month", "per_minute",
                                                "created", "revoked")})
        with self._engine.begin() as db:
            if db.execute(new.returning(KEYS.c.name)).first() is None:
                raise ApiKeyError(f"A key named {name!r} exists; revoke it first or pick "
                                  "another name.")
        return key

    @_db_errors
    def revoke(self, name: str) -> None:
        with self._engine.begin() as db:
            done = db.execute(sa.update(KEYS)
                              .where(KEYS.c.name == name, KEYS.c.revoked.is_(None))
                              .values(key_hash=None, revoked=self._clock()))
            if done.rowcount == 0:
                raise ApiKeyError(f"No active key named {name!r} (`hymt-chat api-key list`).")

    @_db_errors
    def list(self) -> list[ApiKey]:
        month = month_of(self._clock())
        query = (sa.select(*_KEY_COLUMNS, sa.func.coalesce(USAGE.c.chars, 0))
                 .select_from(KEYS.outerjoin(USAGE, sa.and_(USAGE.c.name == KEYS.c.name,
                                                            USAGE.c.month == month)))
                 .order_by(KEYS.c.name))
        with self._engine.connect() as db:
            return [ApiKey(*row) for row in db.execute(query)]

    @_db_errors
    def active_count(self) -> int:
        with self._engine.connect() as db:
            return db.execute(sa.select(sa.func.count()).select_from(KEYS)
                              .where(KEYS.c.revoked.is_(None))).scalar_one()

    @_db_errors
    def lookup(self, key: str) -> ApiKey | None:
        """The active key *key* is, or None (unknown or revoked)."""
        with self._engine.connect() as db:
            row = db.execute(sa.select(*_KEY_COLUMNS).where(
                KEYS.c.key_hash == hash_key(key), KEYS.c.revoked.is_(None))).first()
        return ApiKey(*row) if row else None

    # --- usage -----------------------------------------------------------------------------

    @_db_errors
    def used(self, name: str) -> int:
        with self._engine.connect() as db:
            return _chars(db, name, month_of(self._clock()))

    @_db_errors
    def charge(self, name: str, chars: int, limit: int | None) -> str:
        """Add *chars* to this month's use, or raise QuotaExceededError (and add nothing).

        Returns the month charged, for :meth:`refund` (a failed translation is not billed)."""
        month = month_of(self._clock())
        fits = sa.true() if limit is None else USAGE.c.chars + chars <= limit
        with self._engine.begin() as db:
            db.execute(self._insert(USAGE).values(name=name, month=month, chars=0)
                       .on_conflict_do_nothing())
            added = db.execute(sa.update(USAGE)
                               .where(USAGE.c.name == name, USAGE.c.month == month, fits)
                               .values(chars=USAGE.c.chars + chars))
            if added.rowcount == 0:
                raise QuotaExceededError(_chars(db, name, month), limit or 0, chars)
        return month

    @_db_errors
    def refund(self, name: str, chars: int, month: str) -> None:
        left = sa.case((USAGE.c.chars > chars, USAGE.c.chars - chars), else_=0)
        with self._engine.begin() as db:
            db.execute(sa.update(USAGE).where(USAGE.c.name == name, USAGE.c.month == month)
                       .values(chars=left))

    # --- glossaries --------------------------------------------------------------------------

    @_db_errors
    def add_glossary(self, owner: str, name: str, source: str, target: str,
                     entries: Mapping[str, str], *, at_most: int | None = None) -> Glossary:
        """Keep a new one-pair glossary of *owner* (DeepL v2): :meth:`add_dictionaries`."""
        return self.add_dictionaries(owner, name, [Dictionary(source, target, dict(entries))],
                                     at_most=at_most)

    @_db_errors
    def add_dictionaries(self, owner: str, name: str, dictionaries: Sequence[Dictionary], *,
                         at_most: int | None = None) -> Glossary:
        """Keep a new glossary of *owner*; InputError when they already have *at_most*.

        Inserted, then counted, in one transaction: SQLite serialises writers, PostgreSQL
        takes a lock per owner first, so glossaries made at once never pass the cap. The id
        is a UUID, as DeepL's are (its clients tell a malformed id from an unknown one)."""
        glossary = Glossary(str(uuid.uuid4()), owner, name, tuple(dictionaries), self._clock())
        with self._engine.begin() as db:
            if db.dialect.name == "postgresql":
                db.execute(sa.select(sa.func.pg_advisory_xact_lock(_owner_lock(owner))))
            db.execute(sa.insert(GLOSSARIES).values(id=glossary.id, owner=owner,
                                                    created=glossary.created,
                                                    **_row(name, glossary.dictionaries)))
            if at_most is not None:
                count = db.execute(sa.select(sa.func.count()).select_from(GLOSSARIES)
                                   .where(GLOSSARIES.c.owner == owner)).scalar_one()
                if count > at_most:
                    raise InputError(f"A key may keep at most {at_most} glossaries; delete "
                                     "one first (DELETE /v2/glossaries/{id}).")
        return glossary

    @_db_errors
    def update_glossary(self, owner: str, glossary_id: str, *, name: str | None = None,
                        dictionaries: Sequence[Dictionary] | None = None) -> Glossary | None:
        """Rename *owner*'s glossary and/or set its dictionaries (None: not found)."""
        with self._engine.begin() as db:
            row = db.execute(sa.select(GLOSSARIES).where(
                GLOSSARIES.c.id == glossary_id, GLOSSARIES.c.owner == owner)
                .with_for_update()).first()
            if row is None:
                return None
            old = _glossary(row)
            new = Glossary(old.id, owner, name if name is not None else old.name,
                           tuple(dictionaries) if dictionaries is not None else old.dictionaries,
                           old.created)
            db.execute(sa.update(GLOSSARIES).where(GLOSSARIES.c.id == glossary_id)
                       .values(**_row(new.name, new.dictionaries)))
        return new

    @_db_errors
    def glossary(self, owner: str, glossary_id: str) -> Glossary | None:
        """*owner*'s glossary *glossary_id* (another key's is not found, by design)."""
        with self._engine.connect() as db:
            row = db.execute(sa.select(GLOSSARIES).where(
                GLOSSARIES.c.id == glossary_id, GLOSSARIES.c.owner == owner)).first()
        return _glossary(row) if row else None

    @_db_errors
    def glossaries(self, owner: str) -> builtins.list[Glossary]:
        with self._engine.connect() as db:
            rows = db.execute(sa.select(GLOSSARIES).where(GLOSSARIES.c.owner == owner)
                              .order_by(GLOSSARIES.c.created)).all()
        return [_glossary(row) for row in rows]

    @_db_errors
    def delete_glossary(self, owner: str, glossary_id: str) -> bool:
        with self._engine.begin() as db:
            gone = db.execute(sa.delete(GLOSSARIES).where(GLOSSARIES.c.id == glossary_id,
                                                          GLOSSARIES.c.owner == owner))
        return gone.rowcount > 0

    @_db_errors
    def copy_from(self, source: KeyStore) -> tuple[builtins.list[str], builtins.list[str]]:
        """Copy *source*'s keys (hashes: the keys keep working), usage and glossaries here, in
        one transaction; a name already here keeps its own key and usage. For a move to
        PostgreSQL from the SQLite file of one host. Returns (copied, skipped) names."""
        with source._engine.connect() as src:
            keys = [row._asdict() for row in src.execute(sa.select(KEYS))]
            usage = [row._asdict() for row in src.execute(sa.select(USAGE))]
            glossaries = [row._asdict() for row in src.execute(sa.select(GLOSSARIES))]
        copied: list[str] = []
        with self._engine.begin() as db:
            for row in keys:
                new = self._insert(KEYS).values(**row).on_conflict_do_nothing()
                if db.execute(new.returning(KEYS.c.name)).first() is not None:
                    copied.append(row["name"])
            owners = {*copied, "local"}  # 'local': the open-to-127.0.0.1 caller's glossaries
            for row in usage:
                if row["name"] in copied:
                    db.execute(self._insert(USAGE).values(**row).on_conflict_do_nothing())
            for row in glossaries:
                if row["owner"] in owners:
                    db.execute(self._insert(GLOSSARIES).values(**row).on_conflict_do_nothing())
        return copied, [row["name"] for row in keys if row["name"] not in copied]


def _chars(db: Connection, name: str, month: str) -> int:
    found = db.execute(sa.select(USAGE.c.chars).where(USAGE.c.name == name,
                                                      USAGE.c.month == month)).scalar()
    return found or 0


def _owner_lock(owner: str) -> int:
    """A PostgreSQL advisory-lock number for one key's glossaries (64-bit, signed)."""
    return int.from_bytes(hashlib.sha256(b"glossaries:" + owner.encode()).digest()[:8],
                          "big", signed=True)


def _row(name: str, dictionaries: Sequence[Dictionary]) -> dict[str, str]:
    """The columns of a glossary of *dictionaries* (see :class:`Glossary`)."""
    first = dictionaries[0]
    entries: object = dict(first.entries) if len(dictionaries) == 1 else [
        [d.source, d.target, dict(d.entries)] for d in dictionaries]
    return {"name": name, "source": first.source, "target": first.target,
            "entries": json.dumps(entries, ensure_ascii=False)}


def _glossary(row: Any) -> Glossary:
    gid, owner, name, source, target, entries, created = row
    data = json.loads(entries)
    if isinstance(data, dict):
        dictionaries: tuple[Dictionary, ...] = (Dictionary(source, target, data),)
    else:
        dictionaries = tuple(Dictionary(s, t, e) for s, t, e in data)
    return Glossary(gid, owner, name, dictionaries, created)


def open_store(where: Path | str) -> KeyStore:
    """The store at *where* (:func:`store_location`); HymtError with the reason when it cannot
    be opened (the password of a URL is never in the message)."""
    try:
        return KeyStore(where)
    except HymtError:
        raise
    except (OSError, sa.exc.SQLAlchemyError, ImportError) as err:
        raise open_error("API key", where, err) from None
