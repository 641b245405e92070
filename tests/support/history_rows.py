"""A conversation written into the history by Chainlit's own SQLAlchemy data layer (as the app
writes it), at a time the test chooses, and what the history holds read back: for the erasure,
export and retention tests."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import sqlalchemy as sa
from chainlit.context import init_http_context
from chainlit.data.sql_alchemy import SQLAlchemyDataLayer
from chainlit.message import Message
from chainlit.user import User

from hymt_chat.service.history import METADATA, adapt_sqlite, ensure_schema
from hymt_chat.settings import Settings
from hymt_chat.store.database import sync_url


def chainlit_time(epoch: float) -> str:
    """How Chainlit writes a time (``utils.utc_now``)."""
    return datetime.fromtimestamp(epoch, UTC).replace(tzinfo=None).isoformat() + "Z"


async def write_conversation(url: str, *, agent: str, said: list[tuple[str, str]],
                             session_id: str | None = None, at: float | None = None,
                             name: str = "Support") -> str:
    """A thread of *agent*'s with the messages *said* ((author, text), the first one the
    customer's), its Chainlit session id in its metadata as Chainlit keeps it; *at*: when it
    happened (epoch seconds; None: now). Returns the thread's id."""
    await ensure_schema(url)

    class Layer(SQLAlchemyDataLayer):
        async def get_current_timestamp(self) -> str:
            return chainlit_time(at) if at is not None else await super().get_current_timestamp()

    layer = Layer(conninfo=url)
    adapt_sqlite(layer.engine)
    try:
        user = await layer.get_user(agent) or await layer.create_user(User(identifier=agent))
        assert user is not None
        thread_id = str(uuid.uuid4())
        init_http_context(thread_id=thread_id)
        await layer.update_thread(thread_id, name=name, user_id=user.id, metadata={
            "id": session_id or str(uuid.uuid4()), "chat_profile": "Support agent"})
        for i, (author, text) in enumerate(said):
            message = Message(content=text, author=author,
                              type="user_message" if i % 2 == 0 else "assistant_message")
            if at is not None:
                message.created_at = chainlit_time(at + i)
            await layer.create_step(message.to_dict())
        return thread_id
    finally:
        await layer.close()


def step_outputs(settings: Settings) -> list[str]:
    """Every step's text in the history, sorted."""
    engine = sa.create_engine(sync_url(settings.history_url))
    try:
        with engine.connect() as db:
            steps = METADATA.tables["steps"]
            return sorted(r.output for r in db.execute(sa.select(steps.c.output)))
    finally:
        engine.dispose()
