"""The one way hymt-chat keeps its own tables: a SQLite file, or PostgreSQL when
``HYMT_DATABASE_URL`` is one (the API keys and the translation memory both live this way).

Several app replicas on several hosts cannot share a SQLite file (its locks need one host's
file system), but they all reach the one PostgreSQL; on one host a SQLite file under the cache
folder needs nothing running (the command line works on a fresh machine). One implementation
for both: SQLAlchemy Core tables, portable statements or the dialect's own ``insert … on
conflict`` helper (:attr:`Database.insert`), over a *sync* engine (the stdlib's sqlite3,
psycopg 3) that command lines and tests call plainly and the app calls from a worker thread
(``asyncio.to_thread``), never on the event loop. Chainlit's history is the other database
user and stays on its own async engine (service/history.py): Chainlit drives it.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import URL, make_url

from hymt_chat.errors import HymtError

if TYPE_CHECKING:
    from hymt_chat.settings import Settings

__all__ = ["Database", "database_location", "open_database", "open_error", "scrub", "sync_url"]

_LIBPQ_SSLMODES = frozenset({"disable", "allow", "prefer", "require", "verify-ca",
                             "verify-full"})


@dataclass(frozen=True, slots=True)
class Database:
    """An open engine, its dialect's ``insert`` (with ``on_conflict_*``) and where it is."""

    engine: sa.Engine
    insert: Callable[..., Any]
    path: Path | None  # the SQLite file, if that is where the tables are
    location: str  # the file path, or the URL without its password: for start lines and logs

    @property
    def postgresql(self) -> bool:
        return self.engine.dialect.name == "postgresql"


def database_location(settings: Settings, sqlite_file: Path) -> Path | str:
    """A PostgreSQL ``database_url`` (shared by every replica), else *sqlite_file* (a SQLite
    history URL does not move a store: its file stays where its own setting says)."""
    url = settings.database_url
    if url and make_url(url).get_backend_name() == "postgresql":
        return url
    return sqlite_file


def sync_url(where: Path | str) -> URL:
    """The sync engine's URL: a path is a SQLite file; the history's async URLs
    (``postgresql+asyncpg://``, ``sqlite+aiosqlite://``) get the sync drivers (psycopg 3,
    sqlite3). asyncpg's ``ssl=`` is libpq's ``sslmode=``."""
    if isinstance(where, Path) or "://" not in where:
        return URL.create("sqlite+pysqlite", database=str(where))
    url = make_url(where)
    backend = url.get_backend_name()
    if backend == "sqlite":
        if not url.database or url.database == ":memory:":
            raise HymtError("hymt-chat's stores need a SQLite file, not an in-memory database.")
        return url.set(drivername="sqlite+pysqlite")
    if backend != "postgresql":
        raise HymtError(f"hymt-chat's stores live in SQLite or PostgreSQL, not {backend}.")
    query = dict(url.query)
    ssl = query.pop("ssl", None)
    if isinstance(ssl, str) and "sslmode" not in query:
        query["sslmode"] = ssl if ssl in _LIBPQ_SSLMODES else "require"
    return url.set(drivername="postgresql+psycopg", query=query)


def open_database(where: Path | str, metadata: sa.MetaData, *, schema_lock: int,
                  connect_timeout: float = 10) -> Database:
    """Open *where* and create *metadata*'s tables if missing. On PostgreSQL the creation holds
    the advisory lock *schema_lock* (two replicas starting at once); a SQLite file is made
    owner-only before SQLite opens it and switched to WAL (readers never wait for a writer)."""
    url = sync_url(where)
    path: Path | None = None
    if url.get_backend_name() == "sqlite":
        path = Path(url.database or "")
        _owner_only_file(path)
        engine = sa.create_engine(url, connect_args={"timeout": connect_timeout})
        sa.event.listen(engine, "connect", _pragmas)
        insert: Callable[..., Any] = sqlite.insert
    else:
        engine = sa.create_engine(url, pool_pre_ping=True,
                                  connect_args={"connect_timeout": max(1, int(connect_timeout))})
        insert = postgresql.insert
    try:
        with engine.begin() as db:
            if engine.dialect.name == "postgresql":
                db.execute(sa.select(sa.func.pg_advisory_xact_lock(schema_lock)))
            metadata.create_all(db)
    except BaseException:
        engine.dispose()
        raise
    return Database(engine, insert, path, str(path) if path else url.render_as_string(True))


P = ParamSpec("P")
T = TypeVar("T")


def db_errors(error: Callable[[str], HymtError],
              sentence: str) -> Callable[[Callable[P, T]], Callable[P, T]]:
    """A store's methods: a database failure becomes *error* with *sentence* and the driver's
    error class, never the driver's text (which names hosts); the cause stays chained for the
    log."""
    def decorate(method: Callable[P, T]) -> Callable[P, T]:
        @functools.wraps(method)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
            try:
                return method(*args, **kwargs)
            except sa.exc.SQLAlchemyError as err:
                cause = type(getattr(err, "orig", None) or err).__name__
                raise error(f"{sentence} ({cause}).") from err
        return wrapper
    return decorate


def open_error(what: str, where: Path | str, err: BaseException) -> HymtError:
    """Why *what* ("API key", "translation memory") could not be opened at *where*, in one
    sentence that never holds a URL's password."""
    if isinstance(err, ImportError):  # the PostgreSQL driver is a dependency; a broken install
        return HymtError(f"Cannot open the {what} store: {err} (pip install psycopg[binary]).")
    place = f"file {where}"
    if isinstance(where, str) and "://" in where:
        place = f"database {make_url(where).render_as_string(hide_password=True)}"
    reason = err.orig if isinstance(err, sa.exc.DBAPIError) else err
    return HymtError(f"Cannot open the {what} {place}: {reason}.")


def _owner_only_file(path: Path) -> None:
    """Made owner-only before SQLite opens it: key hashes, glossaries, what people wrote."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not path.exists():
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))


def _pragmas(dbapi_connection: Any, _record: Any) -> None:
    """WAL: readers (look-ups) never wait for a writer. Secure delete: a removed row's bytes
    are overwritten, not left in a free page (an erased e-mail address is gone from the file)."""
    dbapi_connection.execute("PRAGMA journal_mode=WAL")
    dbapi_connection.execute("PRAGMA secure_delete=ON")


def scrub(db: Database) -> None:
    """After an erasure on SQLite: the write-ahead log, which still holds the pages as they
    were, is folded into the file and emptied (PostgreSQL: nothing; its dump holds live rows)."""
    if db.path is None:
        return
    with db.engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
