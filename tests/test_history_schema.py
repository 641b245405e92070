"""The history schema matches what Chainlit's SQLAlchemy data layer really writes and reads.

The proof is Chainlit itself: its ``SQLAlchemyDataLayer`` creates a user, a thread, steps and
messages (one with ``autoCollapse``, one with a composer command), an element and a feedback in
a SQLite file made by :func:`ensure_schema`, and reads the thread back. Chainlit swallows SQL
errors into log warnings, so every write is checked by reading the row back.
"""

from __future__ import annotations

import sqlite3
import uuid

import aiosqlite  # noqa: F401 - a hard dependency: its absence must fail, not skip
import chainlit  # noqa: F401
from chainlit.context import init_http_context
from chainlit.data.sql_alchemy import SQLAlchemyDataLayer
from chainlit.data.storage_clients.base import BaseStorageClient
from chainlit.element import Text
from chainlit.message import Message
from chainlit.step import Step
from chainlit.types import Feedback
from chainlit.user import User

from hymt_chat.service.history import (
    COLUMNS,
    adapt_sqlite,
    ensure_schema,
    skip_writes_when,
    sqlite_path,
)
from hymt_chat.settings import Settings

# The schema published in Chainlit's documentation (2.x), without the columns added since.
DOCUMENTED_STEPS = """
CREATE TABLE steps (
    "id" UUID PRIMARY KEY, "name" TEXT NOT NULL, "type" TEXT NOT NULL, "threadId" UUID NOT NULL,
    "parentId" UUID, "streaming" BOOLEAN NOT NULL, "waitForAnswer" BOOLEAN, "isError" BOOLEAN,
    "metadata" JSONB, "tags" TEXT[], "input" TEXT, "output" TEXT, "createdAt" TEXT,
    "command" TEXT, "start" TEXT, "end" TEXT, "generation" JSONB, "showInput" TEXT,
    "language" TEXT, "indent" INT, "defaultOpen" BOOLEAN
)"""


class MemoryStorage(BaseStorageClient):
    """Just enough of a storage provider for Chainlit to persist element rows."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    async def upload_file(self, object_key, data, mime="application/octet-stream",
                          overwrite=True, content_disposition=None):
        self.files[object_key] = data if isinstance(data, bytes) else data.encode()
        return {"object_key": object_key, "url": f"memory://{object_key}"}

    async def delete_file(self, object_key):
        return self.files.pop(object_key, None) is not None

    async def get_read_url(self, object_key):
        return f"memory://{object_key}"

    async def close(self):
        pass


def _rows(path, query, *args):
    with sqlite3.connect(path) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute(query, args)]


def test_default_url_is_sqlite_in_the_cache_folder(tmp_path):
    url = Settings(cache_dir=tmp_path).history_url
    assert url == f"sqlite+aiosqlite:///{tmp_path}/history.db"
    assert sqlite_path(url) == tmp_path / "history.db"
    assert sqlite_path("sqlite+aiosqlite://") is None
    assert sqlite_path("postgresql+asyncpg://u:p@db/h") is None
    assert Settings(database_url="postgresql+asyncpg://db/h").history_url.startswith("postgres")


async def test_schema_is_created_idempotently_with_the_columns_chainlit_writes(tmp_path):
    url = f"sqlite+aiosqlite:///{tmp_path}/sub/history.db"
    assert await ensure_schema(url) == []
    assert await ensure_schema(url) == []  # second start: nothing to do
    db = tmp_path / "sub" / "history.db"
    for table, columns in COLUMNS.items():
        have = [r["name"] for r in _rows(db, f"PRAGMA table_info({table})")]
        assert have == list(columns), table
    assert "autoCollapse" in COLUMNS["steps"] and "command" in COLUMNS["steps"]
    assert _rows(db, "PRAGMA journal_mode")[0]["journal_mode"] == "wal"


async def test_a_documented_schema_gets_the_missing_columns(tmp_path):
    db = tmp_path / "old.db"
    with sqlite3.connect(db) as conn:
        conn.execute(DOCUMENTED_STEPS)
    added = await ensure_schema(f"sqlite+aiosqlite:///{db}")
    assert added == ["steps.modes", "steps.autoCollapse"]
    assert "autoCollapse" in [r["name"] for r in _rows(db, "PRAGMA table_info(steps)")]


async def _round_trip(url: str) -> None:
    """Chainlit writes a whole conversation through its data layer and reads it back."""
    await ensure_schema(url)
    storage = MemoryStorage()
    layer = SQLAlchemyDataLayer(conninfo=url, storage_provider=storage)
    adapt_sqlite(layer.engine)

    async def one(query: str, **params):
        rows = await layer.execute_sql(query, params)
        assert isinstance(rows, list) and len(rows) == 1, rows
        return rows[0]

    try:
        user = await layer.create_user(User(identifier="alice", metadata={"role": "agent"}))
        assert user is not None and (await layer.get_user("alice")).id == user.id

        thread_id = str(uuid.uuid4())
        init_http_context(thread_id=thread_id)  # a context, as in a request: writes run now
        # What Chainlit does on the first message of a profile-tagged thread.
        await layer.update_thread(thread_id, name="Bonjour", user_id=user.id,
                                  metadata={"chat_profile": "Support agent"},
                                  tags=["Support agent"])

        asked = Message(content="/to Japanese", type="user_message", author="alice")
        asked.command = "to"
        await layer.create_step(asked.to_dict())
        step = Step(name="Translating", type="tool")
        step.auto_collapse = True
        step.output = "2 of 2 parts"
        await layer.create_step(step.to_dict())
        answer = Message(content="Hello, I would like a table for two.", parent_id=step.id)
        await layer.create_step(answer.to_dict())
        await layer.update_step({**answer.to_dict(), "output": "Hello, a table for two."})

        element = Text(name="transcript.md", content="# Transcript", for_id=answer.id)
        element.thread_id = thread_id
        await layer.create_element(element)
        await layer.upsert_feedback(Feedback(forId=answer.id, value=1, threadId=thread_id,
                                             comment="good"))

        thread = await layer.get_thread(thread_id)
        assert thread is not None and thread["name"] == "Bonjour"
        assert thread["userIdentifier"] == "alice"
        steps = {s["id"]: s for s in thread["steps"]}
        assert steps[asked.id]["output"] == "/to Japanese"
        assert steps[step.id]["output"] == "2 of 2 parts"
        assert steps[answer.id]["output"] == "Hello, a table for two."  # updated in place
        assert steps[answer.id]["parentId"] == step.id and len(steps) == 3
        assert steps[answer.id]["feedback"]["comment"] == "good"
        assert [e["name"] for e in thread["elements"]] == ["transcript.md"]
        assert await layer.get_thread_author(thread_id) == "alice"
        listed = await layer.get_all_user_threads(user_id=user.id)
        assert [t["id"] for t in listed] == [thread_id]

        # Columns Chainlit writes but never reads back: check the rows themselves.
        row = await one('SELECT "autoCollapse" FROM steps WHERE id = :id', id=step.id)
        assert row["autoCollapse"] in (True, 1)
        row = await one('SELECT "command" FROM steps WHERE id = :id', id=asked.id)
        assert row["command"] == "to"
        row = await one('SELECT "tags" FROM threads WHERE id = :id', id=thread_id)
        assert row["tags"] in (["Support agent"], '["Support agent"]')

        await layer.delete_thread(thread_id)
        assert await layer.get_thread(thread_id) is None
        assert await layer.execute_sql('SELECT id FROM steps', {}) == []
    finally:
        await layer.close()


async def test_chainlit_data_layer_round_trip_on_sqlite(tmp_path):
    await _round_trip(f"sqlite+aiosqlite:///{tmp_path}/history.db")


async def test_chainlit_data_layer_round_trip_on_postgresql(postgres_url):
    assert await ensure_schema(postgres_url) == []
    assert await ensure_schema(postgres_url) == []  # idempotent there too
    await _round_trip(postgres_url)


async def test_without_the_autocollapse_column_chainlit_loses_steps(tmp_path):
    """Why the column matters: the documented schema makes every cl.Step vanish, silently."""
    db = tmp_path / "documented.db"
    with sqlite3.connect(db) as conn:
        conn.execute(DOCUMENTED_STEPS)
        conn.execute('CREATE TABLE threads ("id" TEXT PRIMARY KEY, "createdAt" TEXT, "name" TEXT,'
                     ' "userId" TEXT, "userIdentifier" TEXT, "tags" TEXT, "metadata" TEXT)')
    layer = SQLAlchemyDataLayer(conninfo=f"sqlite+aiosqlite:///{db}")
    try:
        init_http_context(thread_id=str(uuid.uuid4()))
        step = Step(name="Translating", type="tool")
        await layer.create_step(step.to_dict())
        assert _rows(db, "SELECT id FROM steps") == []  # lost, with only a log warning
    finally:
        await layer.close()


async def test_without_the_adapter_sqlite_loses_a_tagged_thread(tmp_path):
    url = f"sqlite+aiosqlite:///{tmp_path}/h.db"
    await ensure_schema(url)
    layer = SQLAlchemyDataLayer(conninfo=url)
    try:
        thread_id = str(uuid.uuid4())
        await layer.update_thread(thread_id, name="x", tags=["Kiosk"])
        assert await layer.get_thread(thread_id) is None
    finally:
        await layer.close()


async def test_kiosk_sessions_write_nothing(tmp_path):
    url = f"sqlite+aiosqlite:///{tmp_path}/h.db"
    await ensure_schema(url)
    kiosk = {"on": True}
    layer = skip_writes_when(SQLAlchemyDataLayer, lambda: kiosk["on"])(conninfo=url)
    adapt_sqlite(layer.engine)
    try:
        init_http_context(thread_id=str(uuid.uuid4()))
        thread_id = str(uuid.uuid4())
        await layer.update_thread(thread_id, name="kiosk", tags=["Kiosk"])
        await layer.create_step(Step(name="Translating", type="tool", thread_id=thread_id)
                                .to_dict())
        assert _rows(tmp_path / "h.db", "SELECT id FROM threads UNION SELECT id FROM steps") == []
        kiosk["on"] = False  # an agent's session: stored as usual
        await layer.update_thread(thread_id, name="agent", tags=["Support agent"])
        assert (await layer.get_thread(thread_id))["name"] == "agent"
        assert type(layer).__name__ == "SelectiveSQLAlchemyDataLayer"
    finally:
        await layer.close()
