"""Personal data in the translation memory (HYMT_MEMORY_PII): by default placeholders, never the
e-mail address or the phone number; ``skip`` keeps no such pair; ``keep`` keeps it in clear. The
translator runs against the stand-in model (tests/support/stub_model.py) and the real store,
SQLite and PostgreSQL."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.recall import Memory
from hymt_chat.engine.translator import Translator
from hymt_chat.settings import Settings
from hymt_chat.store.database import sync_url
from hymt_chat.store.memory import CORRECTED, ENTRIES, MACHINE, MemoryStore, TeamEntry
from tests.support.stub_model import StubModel, echo_source

EMAIL, PHONE = "anna.berg@example.com", "+49 170 1234567"
SOURCE = f"Bitte schreiben Sie an {EMAIL} oder rufen Sie {PHONE} an."
PHRASES = (("Bitte schreiben Sie an", "Please write to"), ("oder rufen Sie", "or call"),
           (" an.", "."))


def english(prompt: str) -> str:
    text = echo_source(prompt).strip()
    for german, english in PHRASES:
        text = text.replace(german, english)
    return text


@pytest.fixture
def stub() -> Iterator[StubModel]:
    with StubModel(english) as model:
        yield model


def _translator(stub: StubModel, tmp_path: Path, where: Path | str, pii: str) -> Translator:
    settings = Settings(base_url=stub.base_url, api_key="k", model="stub", cache_dir=tmp_path)
    memory = Memory(lambda: MemoryStore(where, pii=pii))  # type: ignore[arg-type]
    return Translator(settings, ModelClient(settings), Policy(retries=False), memory=memory)


def _rows(where: Path | str) -> list[tuple[str, str, str]]:
    engine = sa.create_engine(sync_url(where))
    try:
        with engine.connect() as db:
            return [(r.origin, r.segment, r.translation) for r in db.execute(sa.select(ENTRIES))]
    finally:
        engine.dispose()


async def test_by_default_the_memory_holds_placeholders_never_the_address_or_phone(
        stub: StubModel, tmp_path: Path, where: Path | str) -> None:
    translator = _translator(stub, tmp_path, where, "mask")
    first = await translator.translate(SOURCE, "en", "de")
    assert first.text == f"Please write to {EMAIL} or call {PHONE}."
    assert _rows(where) == [(MACHINE, "Bitte schreiben Sie an [email-1] oder rufen Sie "
                             "[phone-1] an.", "Please write to [email-1] or call [phone-1].")]
    if isinstance(where, Path):  # the file itself, not only its rows
        with sqlite3.connect(where) as db:
            dump = "\n".join(db.iterdump())
        assert EMAIL not in dump and PHONE not in dump and "[email-1]" in dump
    again = await translator.translate(SOURCE, "en", "de")
    assert len(stub.prompts) == 1  # answered from the memory, the values put back
    assert again.text == first.text and again.remembered == (MACHINE,)


async def test_skip_keeps_no_pair_with_personal_data(stub: StubModel, tmp_path: Path) -> None:
    where = tmp_path / "memory.db"
    translator = _translator(stub, tmp_path, where, "skip")
    await translator.translate(SOURCE, "en", "de")
    await translator.translate("Bitte schreiben Sie an uns.", "en", "de")
    assert [row[1] for row in _rows(where)] == ["Bitte schreiben Sie an uns."]


async def test_keep_keeps_them_in_clear(stub: StubModel, tmp_path: Path) -> None:
    where = tmp_path / "memory.db"
    await _translator(stub, tmp_path, where, "keep").translate(SOURCE, "en", "de")
    assert _rows(where)[0][1] == SOURCE


def test_corrections_are_redacted_the_same_way(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory.db")
    store.add_team([TeamEntry("de", "en", f"Meine Nummer ist {PHONE}.",
                              f"My number is {PHONE}.", origin=CORRECTED, author="alice")])
    assert _rows(tmp_path / "memory.db") == [
        (CORRECTED, "Meine Nummer ist [phone-1].", "My number is [phone-1].")]
