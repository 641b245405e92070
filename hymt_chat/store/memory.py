"""The translation memory's table: segment translations by key, in SQLite or PostgreSQL.

Three origins, ranked: ``machine`` (a model's answer that passed every check), ``imported``
(from a TMX file) and ``corrected`` (an agent's correction), the last two being the team's
own translations. A machine entry's key is made by the engine from everything that changes
the model's output (hymt_chat/engine/recall.py); a team entry's key is only the language pair
and the segment (:func:`team_key`): a person's translation does not depend on the model, so a
model change keeps it and a new deployment can import it.

Size: at most ``max_entries`` rows. Past it, machine entries go first, least recently used
first (a look-up that finds an entry marks it used), down to 90 % of the cap so that eviction
runs once per many writes, not at each; team entries are never evicted — an import that would
take the team's entries past the cap is refused whole (:class:`MemoryFullError`).

**Personal data** (``pii``, HYMT_MEMORY_PII): ``mask`` keeps a pair with its e-mail addresses,
phones, cards, IBANs, links and order numbers as placeholders (``[email-1]``, the same in the
segment and the translation; the engine puts the looked-up text's own values back), ``skip``
keeps no pair that holds any, ``keep`` keeps them in clear (:mod:`hymt_chat.text.personal`).
A pair whose translation still holds a value the segment's placeholders do not cover is not
kept under ``mask``.

Every method is one transaction through :mod:`hymt_chat.store.database`; a database failure is
:class:`MemoryStoreError` (the engine then translates without the memory).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import sqlalchemy as sa

from hymt_chat.errors import HymtError, InputError
from hymt_chat.store.database import (
    database_location,
    db_errors,
    open_database,
    open_error,
    scrub,
)
from hymt_chat.text.cleanup import clean_text
from hymt_chat.text.personal import find_personal, redact_pair

if TYPE_CHECKING:
    from hymt_chat.settings import Settings

__all__ = [
    "CORRECTED",
    "IMPORTED",
    "MACHINE",
    "ORIGINS",
    "Entry",
    "MemoryFullError",
    "MemoryStore",
    "MemoryStoreError",
    "PiiPolicy",
    "Stats",
    "TeamEntry",
    "line_pairs",
    "memory_location",
    "open_memory_store",
    "team_key",
]

MACHINE, IMPORTED, CORRECTED = "machine", "imported", "corrected"
PiiPolicy = Literal["mask", "skip", "keep"]
ORIGINS = (MACHINE, IMPORTED, CORRECTED)
RANK = {MACHINE: 0, IMPORTED: 1, CORRECTED: 2}
EVICT_EVERY = 256  # machine writes between two looks at the size
EVICT_TO = 0.9  # of the cap, once past it
_BATCH = 1000  # rows per executemany of an import
_SCHEMA_LOCK = 0x68796D75  # 'hymu': the memory's own lock (the keys' is 'hymt')

METADATA = sa.MetaData()
ENTRIES = sa.Table(
    "translation_memory", METADATA,
    sa.Column("key", sa.Text, primary_key=True),
    sa.Column("rank", sa.SmallInteger, nullable=False),        # RANK of origin
    sa.Column("origin", sa.Text, nullable=False),              # machine, imported, corrected
    sa.Column("source", sa.Text, nullable=False),              # our language codes
    sa.Column("target", sa.Text, nullable=False),
    sa.Column("segment", sa.Text, nullable=False),             # the cleaned segment, stripped
    sa.Column("translation", sa.Text, nullable=False),
    sa.Column("model", sa.Text, nullable=False, server_default=""),  # machine: which model
    sa.Column("author", sa.Text),                              # corrected: the agent
    sa.Column("created", sa.Double, nullable=False),
    sa.Column("used", sa.Double, nullable=False),              # last found (LRU)
    sa.Column("hits", sa.BigInteger, nullable=False, server_default="0"),
    sa.Index("ix_translation_memory_rank_used", "rank", "used"),
)


class MemoryStoreError(HymtError):
    """The memory's database did not answer or refused a statement (details in the log)."""


class MemoryFullError(InputError):
    """An import would take the team's entries past HYMT_MEMORY_MAX_ENTRIES."""


@dataclass(frozen=True, slots=True)
class Entry:
    key: str
    origin: str
    source: str
    target: str
    segment: str
    translation: str
    model: str = ""
    author: str | None = None
    created: float = 0.0
    used: float = 0.0
    hits: int = 0

    @property
    def team(self) -> bool:
        """A person's translation (corrected or imported), not a model's."""
        return self.origin != MACHINE


@dataclass(frozen=True, slots=True)
class TeamEntry:
    """One team translation to store (a correction, or a TMX unit's pair)."""

    source: str
    target: str
    segment: str
    translation: str
    origin: str = IMPORTED
    author: str | None = None
    created: float | None = None


@dataclass(frozen=True, slots=True)
class Stats:
    by_origin: dict[str, int]
    hits: int  # look-ups answered, all entries
    max_entries: int
    location: str

    @property
    def total(self) -> int:
        return sum(self.by_origin.values())


def team_key(source: str, target: str, segment: str) -> str:
    """The key of a team entry: the pair and the segment, nothing of the model."""
    return hashlib.sha256(f"team\x1f{source}\x1f{target}\x1f{segment}".encode()).hexdigest()


def line_pairs(source: str, translation: str) -> list[tuple[str, str]] | None:
    """(segment, translation) per line, as the translator looks segments up (each line is a
    segment, stripped); None when the two do not have the same number of non-blank lines."""
    src = [line.strip() for line in clean_text(source).split("\n") if line.strip()]
    out = [line.strip() for line in clean_text(translation).split("\n") if line.strip()]
    if not src or len(src) != len(out):
        return None
    return list(zip(src, out, strict=True))


def memory_location(settings: Settings) -> Path | str:
    """A PostgreSQL ``HYMT_DATABASE_URL`` (shared by the deployment's replicas), else the
    SQLite file ``HYMT_MEMORY_PATH`` (default ``memory.db`` in the cache folder)."""
    return database_location(settings, settings.memory_file)


_db_errors = db_errors(MemoryStoreError,
                       "The translation memory's database is not answering")


class MemoryStore:
    """The memory's rows; safe from several threads and replicas (one transaction a call)."""

    def __init__(self, where: Path | str, *, max_entries: int = 200_000,
                 clock: Callable[[], float] = time.time, connect_timeout: float = 3,
                 pii: PiiPolicy = "mask") -> None:
        self._clock = clock
        self.max_entries = max_entries
        self.pii = pii
        db = open_database(where, METADATA, schema_lock=_SCHEMA_LOCK,
                           connect_timeout=connect_timeout)
        self._db = db
        self._engine, self._insert, self.location = db.engine, db.insert, db.location
        self._writes = 0

    def close(self) -> None:
        self._engine.dispose()

    @_db_errors
    def find(self, keys: Sequence[str]) -> dict[str, Entry]:
        """The entries of *keys* that exist (marked used: the LRU order), by key."""
        if not keys:
            return {}
        with self._engine.begin() as db:
            rows = db.execute(sa.select(ENTRIES).where(ENTRIES.c.key.in_(set(keys)))).all()
            if rows:
                db.execute(sa.update(ENTRIES).where(ENTRIES.c.key.in_([r.key for r in rows]))
                           .values(used=self._clock(), hits=ENTRIES.c.hits + 1))
        return {row.key: _entry(row) for row in rows}

    def kept_pair(self, segment: str, translation: str) -> tuple[str, str] | None:
        """The pair as the ``pii`` policy keeps it, or None: not kept."""
        if self.pii == "keep":
            return segment, translation
        if self.pii == "skip":
            personal = find_personal(segment) or find_personal(translation)
            return None if personal else (segment, translation)
        return redact_pair(segment, translation)

    @_db_errors
    def put(self, key: str, source: str, target: str, segment: str, translation: str,
            model: str) -> None:
        """A model's checked answer (the same key again: the newer answer); not kept when the
        ``pii`` policy says so."""
        pair = self.kept_pair(segment, translation)
        if pair is None:
            return
        segment, translation = pair
        now = self._clock()
        new = self._insert(ENTRIES).values(
            key=key, rank=RANK[MACHINE], origin=MACHINE, source=source, target=target,
            segment=segment, translation=translation, model=model, author=None, created=now,
            used=now, hits=0)
        # A team entry is never under a machine key (different key spaces); on the same key,
        # the newer answer replaces the older one.
        with self._engine.begin() as db:
            db.execute(new.on_conflict_do_update(
                index_elements=[ENTRIES.c.key],
                set_={"translation": new.excluded.translation, "used": now}))
        self._writes += 1
        if self._writes % EVICT_EVERY == 0:
            self.evict()

    @_db_errors
    def correct(self, entry: TeamEntry) -> Entry:
        """Store a team translation; the same segment corrected twice keeps the last write
        (two agents at once: whichever commits second)."""
        key = team_key(entry.source, entry.target, entry.segment)
        with self._engine.begin() as db:
            self._upsert_team(db, [entry])
            return _entry(db.execute(sa.select(ENTRIES).where(ENTRIES.c.key == key)).one())

    @_db_errors
    def forget(self, keys: Iterable[str]) -> int:
        keys = list(keys)
        if not keys:
            return 0
        with self._engine.begin() as db:
            return db.execute(sa.delete(ENTRIES).where(ENTRIES.c.key.in_(keys))).rowcount

    @_db_errors
    def holding(self, texts: Sequence[str], segments: Sequence[str] = ()) -> list[Entry]:
        """Entries holding any of *texts* (in the segment or the translation), and the model's
        answers to any of *segments* (the segments of erased messages)."""
        return [_entry(row) for row in self._select_holding(texts, segments)]

    @_db_errors
    def erase(self, texts: Sequence[str], segments: Sequence[str] = ()) -> int:
        """Remove what :meth:`holding` finds; the agents' corrections of a common segment
        stay unless they hold one of *texts*."""
        keys = [row.key for row in self._select_holding(texts, segments)]
        removed = 0
        for start in range(0, len(keys), _BATCH):
            with self._engine.begin() as db:
                removed += db.execute(sa.delete(ENTRIES).where(
                    ENTRIES.c.key.in_(keys[start:start + _BATCH]))).rowcount
        if removed:
            scrub(self._db)
        return removed

    @_db_errors
    def unsign(self, author: str) -> int:
        """An agent's corrections stay the team's, without their name."""
        with self._engine.begin() as db:
            return db.execute(sa.update(ENTRIES).where(ENTRIES.c.author == author)
                              .values(author=None)).rowcount

    @_db_errors
    def sweep(self, origins: Sequence[str], before: float) -> int:
        """Remove entries of *origins* made before *before* (epoch seconds): retention."""
        with self._engine.begin() as db:
            return db.execute(sa.delete(ENTRIES).where(
                ENTRIES.c.origin.in_(list(origins)), ENTRIES.c.created < before)).rowcount

    def _select_holding(self, texts: Sequence[str], segments: Sequence[str]) -> list[Any]:
        wanted = [t for t in texts if t.strip()]
        found: dict[str, Any] = {}
        with self._engine.connect() as db:
            for text in wanted:
                like = [sa.func.lower(column).contains(text.lower(), autoescape=True)
                        for column in (ENTRIES.c.segment, ENTRIES.c.translation)]
                for row in db.execute(sa.select(ENTRIES).where(sa.or_(*like))):
                    found[row.key] = row
            unique = sorted({s for s in segments if s.strip()})
            for start in range(0, len(unique), _BATCH):
                for row in db.execute(sa.select(ENTRIES).where(
                        ENTRIES.c.origin == MACHINE,
                        ENTRIES.c.segment.in_(unique[start:start + _BATCH]))):
                    found[row.key] = row
        return list(found.values())

    @_db_errors
    def evict(self) -> int:
        """Past the cap: the least recently used machine entries go, down to 90 % of it."""
        with self._engine.begin() as db:
            count = db.execute(sa.select(sa.func.count()).select_from(ENTRIES)).scalar_one()
            if count <= self.max_entries:
                return 0
            excess = count - int(self.max_entries * EVICT_TO)
            oldest = (sa.select(ENTRIES.c.key).where(ENTRIES.c.rank == RANK[MACHINE])
                      .order_by(ENTRIES.c.used).limit(excess).scalar_subquery())
            return db.execute(sa.delete(ENTRIES).where(ENTRIES.c.key.in_(oldest))).rowcount

    @_db_errors
    def stats(self) -> Stats:
        with self._engine.connect() as db:
            rows = db.execute(sa.select(ENTRIES.c.origin, sa.func.count(),
                                        sa.func.coalesce(sa.func.sum(ENTRIES.c.hits), 0))
                              .group_by(ENTRIES.c.origin)).all()
        counts = {origin: 0 for origin in ORIGINS}
        counts.update({origin: n for origin, n, _ in rows})
        return Stats(counts, int(sum(h for *_, h in rows)), self.max_entries, self.location)

    @_db_errors
    def clear(self, origins: Sequence[str] = ORIGINS) -> int:
        with self._engine.begin() as db:
            return db.execute(sa.delete(ENTRIES).where(ENTRIES.c.origin.in_(list(origins)))
                              ).rowcount

    def entries(self, origins: Sequence[str] = (IMPORTED, CORRECTED)) -> Iterator[Entry]:
        """Every entry of *origins*, oldest first, streamed (a million rows are not loaded)."""
        try:
            with self._engine.connect() as db:
                query = (sa.select(ENTRIES).where(ENTRIES.c.origin.in_(list(origins)))
                         .order_by(ENTRIES.c.created, ENTRIES.c.key)
                         .execution_options(yield_per=_BATCH))
                for row in db.execute(query):
                    yield _entry(row)
        except sa.exc.SQLAlchemyError as err:
            raise MemoryStoreError("The translation memory's database is not answering "
                                   f"({type(err).__name__}).") from err

    @_db_errors
    def add_team(self, entries: Iterable[TeamEntry]) -> int:
        """Store *entries* in ONE transaction: all of them, or (on any error: a bad entry, the
        cap) none. Streamed in batches, so the iterable may be a million entries long; an entry
        already here (the same pair and segment) takes the new translation."""
        added = 0
        with self._engine.begin() as db:
            batch: list[TeamEntry] = []
            for entry in entries:
                batch.append(entry)
                if len(batch) >= _BATCH:
                    self._upsert_team(db, batch)
                    added, batch = added + len(batch), []
            if batch:
                self._upsert_team(db, batch)
                added += len(batch)
            team = db.execute(sa.select(sa.func.count()).select_from(ENTRIES)
                              .where(ENTRIES.c.rank > RANK[MACHINE])).scalar_one()
            if team > self.max_entries:
                raise MemoryFullError(
                    f"The team's translations would number {team:,}, more than the memory may "
                    f"keep (HYMT_MEMORY_MAX_ENTRIES={self.max_entries:,}): nothing was "
                    "imported. Raise the cap or import a smaller file.")
        self.evict()  # machine entries make room for the team's
        return added

    def _upsert_team(self, db: sa.Connection, entries: list[TeamEntry]) -> None:
        now = self._clock()
        rows = []
        for e in entries:
            pair = self.kept_pair(e.segment, e.translation)
            if pair is None:
                continue
            rows.append({"key": team_key(e.source, e.target, e.segment), "rank": RANK[e.origin],
                         "origin": e.origin, "source": e.source, "target": e.target,
                         "segment": pair[0], "translation": pair[1], "model": "",
                         "author": e.author, "used": now, "hits": 0,
                         "created": e.created if e.created is not None else now})
        if not rows:
            return
        new = self._insert(ENTRIES)
        db.execute(new.on_conflict_do_update(
            index_elements=[ENTRIES.c.key],
            set_={c: new.excluded[c] for c in ("rank", "origin", "translation", "author",
                                                "created", "used")}), rows)


def _entry(row: sa.Row[Any]) -> Entry:
    return Entry(row.key, row.origin, row.source, row.target, row.segment, row.translation,
                 row.model, row.author, row.created, row.used, row.hits)


def open_memory_store(where: Path | str, *, max_entries: int = 200_000,
                      connect_timeout: float = 3, pii: PiiPolicy = "mask") -> MemoryStore:
    """The store at *where* (:func:`memory_location`); HymtError with the reason when it
    cannot be opened (the password of a URL is never in the message)."""
    try:
        return MemoryStore(where, max_entries=max_entries, connect_timeout=connect_timeout,
                           pii=pii)
    except HymtError:
        raise
    except (OSError, sa.exc.SQLAlchemyError, ImportError) as err:
        raise open_error("translation memory", where, err) from None
