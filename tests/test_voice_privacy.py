"""Audio is personal data, and the app keeps none of it: a recording is heard in memory and
dropped; the server's reading of an answer goes to the tab as an element that Chainlit's
history never stores (its SQLAlchemy layer writes an element only through a blob storage
client, and the app configures none: ``chainlit/data/sql_alchemy.py`` create_element); a
transcript is the speaker's message, kept (or not) like a typed one, so retention, ``forget``
and ``export`` cover it as they cover text (tests/test_erasure.py)."""

from __future__ import annotations

import uuid
from pathlib import Path

import chainlit as cl
import sqlalchemy as sa
from chainlit.context import init_http_context
from chainlit.data.sql_alchemy import SQLAlchemyDataLayer

from hymt_chat.service.history import METADATA, adapt_sqlite, ensure_schema
from hymt_chat.settings import Settings
from hymt_chat.store.database import sync_url
from tests.support.history_rows import write_conversation


async def test_the_history_keeps_the_words_said_never_the_sound(tmp_path: Path) -> None:
    settings = Settings(cache_dir=tmp_path)
    url = settings.history_url
    thread = await write_conversation(url, agent="ana", said=[
        ("User", "Could you please send me a photo of the package?")])
    await ensure_schema(url)
    layer = SQLAlchemyDataLayer(conninfo=url)  # as app.py builds it: no storage client
    adapt_sqlite(layer.engine)
    try:
        init_http_context(thread_id=thread)
        sound = cl.Audio(name="es.wav", content=b"RIFF" + bytes(4000), mime="audio/wav",
                         display="inline", for_id=str(uuid.uuid4()))
        sound.thread_id = thread
        await layer.create_element(sound)
    finally:
        await layer.close()
    engine = sa.create_engine(sync_url(url))
    try:
        with engine.connect() as db:
            elements = db.execute(sa.select(METADATA.tables["elements"])).all()
            steps = [r.output for r in db.execute(sa.select(METADATA.tables["steps"].c.output))]
    finally:
        engine.dispose()
    assert elements == []  # no sound, no row pointing at one
    assert steps == ["Could you please send me a photo of the package?"]
