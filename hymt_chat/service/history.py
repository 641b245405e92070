"""Conversation history: the tables Chainlit's SQLAlchemy data layer writes, created for it.

Chainlit's ``SQLAlchemyDataLayer`` (chainlit/data/sql_alchemy.py) writes raw SQL into tables it
never creates. Its documented schema is behind the code: ``steps`` lacks ``"autoCollapse"``
(written by every ``cl.Step`` since 2.10), ``"command"`` and ``"modes"`` (written by user
messages), and ``elements`` lacks ``"autoPlay"``/``"playerConfig"``; a missing column makes the
INSERT fail, which Chainlit only logs as a warning — the step is silently lost. The columns here
are the ones chainlit 2.12 writes (``Step.to_dict``, ``Message.to_dict``, ``Element.to_dict``,
``Feedback``, ``update_thread``, ``create_user``) and reads.

:func:`ensure_schema` creates the tables idempotently on SQLite (aiosqlite) and PostgreSQL
(asyncpg), and adds missing columns to tables made from the older documented schema.
:func:`adapt_sqlite` lets SQLite store the two kinds of values Chainlit binds that it cannot:
lists (thread tags: one per chat profile with ``auto_tag_thread``) and dicts (message modes).

Nothing here imports Chainlit.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from hymt_chat.text.cleanup import headline

__all__ = [
    "COLUMNS",
    "ERASED",
    "METADATA",
    "WRITES",
    "adapt_sqlite",
    "ensure_schema",
    "refuse_erased",
    "skip_writes_when",
    "sqlite_path",
    "thread_name",
    "unnamed_after",
]

L = TypeVar("L", bound=type)

# Portable types: TEXT everywhere, the documented PostgreSQL types on PostgreSQL.
_ID = sa.Text().with_variant(postgresql.UUID(as_uuid=False), "postgresql")
_JSON = sa.Text().with_variant(postgresql.JSONB(), "postgresql")
_TAGS = sa.Text().with_variant(postgresql.ARRAY(sa.Text()), "postgresql")
_TEXT = sa.Text()
_BOOL = sa.Boolean()
_INT = sa.Integer()

METADATA = sa.MetaData()


def _fk(target: str) -> sa.ForeignKey:
    return sa.ForeignKey(target, ondelete="CASCADE")


sa.Table(
    "users", METADATA,
    sa.Column("id", _ID, primary_key=True),
    sa.Column("identifier", _TEXT, nullable=False, unique=True),
    sa.Column("metadata", _JSON, nullable=False),
    sa.Column("createdAt", _TEXT),
)
sa.Table(
    "threads", METADATA,
    sa.Column("id", _ID, primary_key=True),
    sa.Column("createdAt", _TEXT),
    sa.Column("name", _TEXT),
    sa.Column("userId", _ID, _fk("users.id"), index=True),
    sa.Column("userIdentifier", _TEXT),
    sa.Column("tags", _TAGS),
    sa.Column("metadata", _JSON),
)
sa.Table(
    "steps", METADATA,
    sa.Column("id", _ID, primary_key=True),
    sa.Column("name", _TEXT, nullable=False),
    sa.Column("type", _TEXT, nullable=False),
    sa.Column("threadId", _ID, _fk("threads.id"), nullable=False, index=True),
    sa.Column("parentId", _ID),
    sa.Column("streaming", _BOOL, nullable=False),
    sa.Column("waitForAnswer", _BOOL),
    sa.Column("isError", _BOOL),
    sa.Column("metadata", _JSON),
    sa.Column("tags", _TAGS),
    sa.Column("input", _TEXT),
    sa.Column("output", _TEXT),
    sa.Column("createdAt", _TEXT),
    sa.Column("command", _TEXT),
    sa.Column("modes", _JSON),
    sa.Column("start", _TEXT),
    sa.Column("end", _TEXT),
    sa.Column("generation", _JSON),
    sa.Column("showInput", _TEXT),
    sa.Column("language", _TEXT),
    sa.Column("indent", _INT),
    sa.Column("defaultOpen", _BOOL),
    sa.Column("autoCollapse", _BOOL),
)
sa.Table(
    "elements", METADATA,
    sa.Column("id", _ID, primary_key=True),
    sa.Column("threadId", _ID, _fk("threads.id"), index=True),
    sa.Column("type", _TEXT),
    sa.Column("url", _TEXT),
    sa.Column("chainlitKey", _TEXT),
    sa.Column("name", _TEXT, nullable=False),
    sa.Column("display", _TEXT),
    sa.Column("objectKey", _TEXT),
    sa.Column("size", _TEXT),
    sa.Column("page", _INT),
    sa.Column("language", _TEXT),
    sa.Column("forId", _ID),
    sa.Column("mime", _TEXT),
    sa.Column("props", _JSON),
    sa.Column("autoPlay", _BOOL),
    sa.Column("playerConfig", _JSON),
)
sa.Table(
    "feedbacks", METADATA,
    sa.Column("id", _ID, primary_key=True),
    sa.Column("forId", _ID, nullable=False, index=True),
    # NULL allowed: Feedback.threadId is optional and Chainlit omits None values.
    sa.Column("threadId", _ID, _fk("threads.id")),
    sa.Column("value", _INT, nullable=False),
    sa.Column("comment", _TEXT),
)

# Our own table beside Chainlit's: the threads an erasure removed. A tab still open on one
# would write it back (Chainlit saves the session into the thread when the tab goes), so the
# data layer refuses writes to these ids (:func:`refuse_erased`). An id is a random UUID: it
# names no one.
OWN_METADATA = sa.MetaData()
ERASED = sa.Table(
    "erased_threads", OWN_METADATA,
    sa.Column("id", _TEXT, primary_key=True),
    sa.Column("erasedAt", _TEXT),
)

COLUMNS: dict[str, tuple[str, ...]] = {
    name: tuple(col.name for col in table.columns) for name, table in METADATA.tables.items()
}
"""Every table and its columns, as Chainlit 2.12 writes and reads them."""


def sqlite_path(url: str) -> Path | None:
    """The database file of a SQLite URL (None for in-memory or another database)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def _to_json(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, (list, dict)) else value


def adapt_sqlite(engine: AsyncEngine) -> AsyncEngine:
    """Store list and dict parameters as JSON text on a SQLite engine (no-op elsewhere).

    PostgreSQL takes them (TEXT[] and JSONB); SQLite refuses them, and Chainlit then loses the
    write with only a warning: a thread's first save (name, user, tags) when chat profiles tag
    threads. Call it on the data layer's engine: ``adapt_sqlite(data_layer.engine)``.
    """
    if engine.dialect.name != "sqlite":
        return engine

    @event.listens_for(engine.sync_engine, "before_cursor_execute", retval=True)
    def _json_params(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any,
                     executemany: bool) -> tuple[str, Any]:
        if executemany:
            parameters = [_adapt(p) for p in parameters]
        else:
            parameters = _adapt(parameters)
        return statement, parameters

    return engine


def _adapt(parameters: Any) -> Any:
    if isinstance(parameters, dict):
        return {k: _to_json(v) for k, v in parameters.items()}
    if isinstance(parameters, (list, tuple)):
        return type(parameters)(_to_json(v) for v in parameters)
    return parameters


def _add_missing_columns(conn: sa.Connection) -> list[str]:
    """ALTER TABLE … ADD COLUMN for columns an older schema lacks (all of them nullable)."""
    inspector = sa.inspect(conn)
    added = []
    for table in METADATA.sorted_tables:
        have = {c["name"] for c in inspector.get_columns(table.name)}
        for column in table.columns:
            if column.name in have:
                continue
            if not column.nullable:
                raise RuntimeError(
                    f"Table {table.name} lacks the required column {column.name!r}; "
                    "it cannot be added to existing rows: migrate it by hand."
                )
            kind = column.type.compile(dialect=conn.dialect)
            prep = conn.dialect.identifier_preparer
            conn.execute(sa.text(
                f"ALTER TABLE {prep.quote(table.name)} ADD COLUMN {prep.quote(column.name)} {kind}"
            ))
            added.append(f"{table.name}.{column.name}")
    return added


async def ensure_schema(url: str) -> list[str]:
    """Create the history tables if missing and add columns an older schema lacks.

    Idempotent; safe at every start. SQLite: the folder is created and the database switched to
    WAL (readers do not block the writer, and Chainlit writes from concurrent tasks). Returns
    the columns it added to existing tables (``["steps.autoCollapse"]``), for the log.
    """
    path = sqlite_path(url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_async_engine(url)
    try:
        async with engine.begin() as conn:
            if path is not None:
                await conn.exec_driver_sql("PRAGMA journal_mode=WAL")
            await conn.run_sync(METADATA.create_all, checkfirst=True)
            await conn.run_sync(OWN_METADATA.create_all, checkfirst=True)
            return await conn.run_sync(_add_missing_columns)
    finally:
        await engine.dispose()


WRITES = (
    "create_step", "update_step", "delete_step", "update_thread", "delete_thread",
    "create_element", "delete_element", "upsert_feedback", "delete_feedback",
)
"""The data layer methods that store something about a conversation."""


def thread_name(name: str | None, buttons: Collection[str] = ()) -> str | None:
    """What a thread is listed as for the *name* it is given: one line of at most
    :data:`~hymt_chat.text.cleanup.TITLE_CHARS` characters; None (it stays as it was) for a
    command ("/room close"), a text without words (a file sent alone) or one of *buttons*."""
    if name is None or name in buttons or name.lstrip().startswith("/"):
        return None
    return headline(name) or None


def unnamed_after(layer_cls: L, names: Collection[str]) -> L:
    """A subclass of a Chainlit data layer class whose threads are named as :func:`thread_name`
    says: never one of *names*, never a command, never a whole paste.

    Chainlit names a thread after its first interaction: a message's text (a command: the
    history listed "/room close"; a file alone: "Untitled Conversation"), or an action's
    *name* when a button came first (a desk thread was listed as "desk_take"). Such a name is
    left out; the app names the thread from its conversation instead (``Session.title``)."""
    original = getattr(layer_cls, "update_thread")  # noqa: B009 - L: mypy knows no such name

    @functools.wraps(original)
    async def update_thread(self: Any, thread_id: str, name: str | None = None,
                            *args: Any, **kwargs: Any) -> Any:
        return await original(self, thread_id, thread_name(name, names), *args, **kwargs)

    named = type(f"Named{layer_cls.__name__}", (layer_cls,), {"update_thread": update_thread})
    return named  # type: ignore[return-value]


def skip_writes_when(layer_cls: L, skip: Callable[[], bool]) -> L:
    """A subclass of a Chainlit data layer class whose conversation writes do nothing while
    ``skip()`` is true — how a kiosk session keeps nothing while agents' sessions are stored.

    Chainlit has one data layer per process; *skip* decides per call (the app reads the
    current session's chat profile). Reads are untouched.
    """

    def make(name: str) -> Callable[..., Any]:
        original = getattr(layer_cls, name)

        @functools.wraps(original)
        async def write(self: Any, *args: Any, **kwargs: Any) -> Any:
            if skip():
                return None
            return await original(self, *args, **kwargs)

        return write

    methods = {name: make(name) for name in WRITES if hasattr(layer_cls, name)}
    selective = type(f"Selective{layer_cls.__name__}", (layer_cls,), methods)
    return selective  # type: ignore[return-value]



def _first(args: tuple[Any, ...], kwargs: dict[str, Any], name: str) -> Any:
    return args[0] if args else kwargs.get(name)


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)


_THREAD_OF: dict[str, Callable[[tuple[Any, ...], dict[str, Any]], Any]] = {
    "update_thread": lambda a, k: _first(a, k, "thread_id"),
    "create_step": lambda a, k: _field(_first(a, k, "step_dict"), "threadId"),
    "update_step": lambda a, k: _field(_first(a, k, "step_dict"), "threadId"),
    "create_element": lambda a, k: _field(_first(a, k, "element"), "thread_id"),
    "upsert_feedback": lambda a, k: _field(_first(a, k, "feedback"), "threadId"),
}


def refuse_erased(layer_cls: L) -> L:
    """A subclass of a Chainlit data layer class whose writes to an erased thread (one in
    ``erased_threads``) do nothing: an erasure that races a live tab is not undone when the
    tab writes its next step or saves its session on leaving. One primary-key look-up a write
    (the layer's own ``execute_sql``, which answers None when the table is not there yet)."""

    def make(name: str, thread_of: Callable[[tuple[Any, ...], dict[str, Any]], Any]
             ) -> Callable[..., Any]:
        original = getattr(layer_cls, name)

        @functools.wraps(original)
        async def write(self: Any, *args: Any, **kwargs: Any) -> Any:
            thread = thread_of(args, kwargs)
            if thread:
                rows = await self.execute_sql(
                    'SELECT "id" FROM erased_threads WHERE "id" = :id', {"id": str(thread)})
                if isinstance(rows, list) and rows:
                    return None
            return await original(self, *args, **kwargs)

        return write

    methods = {name: make(name, of) for name, of in _THREAD_OF.items()
               if hasattr(layer_cls, name)}
    guarded = type(f"Guarded{layer_cls.__name__}", (layer_cls,), methods)
    return guarded  # type: ignore[return-value]
