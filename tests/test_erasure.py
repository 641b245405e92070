"""Erasure and export of one person (``hymt-chat forget`` / ``hymt-chat export``), on SQLite and
on the real PostgreSQL.

The conversation is written by Chainlit's own data layer (tests/support/history_rows.py): a
customer gives their e-mail address and phone number, and a photo lies in their tab's upload
folder (where Chainlit keeps a session's files). The memory keeps their sentence in clear
(``HYMT_MEMORY_PII=keep``, the hardest case) and an old log line holds the address. After
``forget --text <the address>`` a dump of the database and a byte search of the whole cache
folder (the SQLite files and their write-ahead logs included) find it zero times, the other
customer's conversation is still there, and the audit log shows the erasure.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import zipfile
from pathlib import Path

import pytest

from hymt_chat.cli.main import main
from hymt_chat.service.web import FILES_ROOT
from hymt_chat.settings import Settings
from hymt_chat.store.conversations import (
    ConversationStore,
    MessageRecord,
    RoomRecord,
    conversations_location,
)
from hymt_chat.store.memory import CORRECTED, MemoryStore, TeamEntry, memory_location
from tests.support.history_rows import step_outputs, write_conversation
from tests.support.postgres import fresh_database, libpq, postgres_bin

EMAIL, PHONE = "anna.berg@example.com", "+49 170 1234567"
PHOTO = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64  # a photo: no text to find in it
SAID = [("customer", f"Hola, soy Anna. Mi correo es {EMAIL} y mi teléfono {PHONE}."),
        ("agent", f"Hello Anna, I wrote to {EMAIL}."),
        ("customer", "Mi paquete no ha llegado todavía.")]
OTHER = [("customer", "Hola, soy Bruno: bruno@example.org."), ("agent", "Hello Bruno.")]


@pytest.fixture(params=["sqlite", "postgresql"])
def deployment(request: pytest.FixtureRequest, tmp_path: Path,
               monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The deployment's settings, in the environment too (the command reads them there)."""
    monkeypatch.setenv("HYMT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HYMT_MEMORY_PII", "keep")
    monkeypatch.delenv("HYMT_DATABASE_URL", raising=False)
    if request.param == "postgresql":
        monkeypatch.setenv("HYMT_DATABASE_URL",
                           fresh_database(request.getfixturevalue("postgres_url")))
    return Settings()


async def _customer(settings: Settings) -> str:
    """Anna's conversation, photo, memory entries and log line; Bruno's conversation."""
    session = "0b6f3c1e-session-anna"
    await write_conversation(settings.history_url, agent="alice", said=SAID, session_id=session)
    await write_conversation(settings.history_url, agent="alice", said=OTHER)
    folder = settings.cache_dir / FILES_ROOT / "4242-abcd" / session
    folder.mkdir(parents=True)
    (folder / "5d1c-photo").write_bytes(PHOTO)
    store = MemoryStore(memory_location(settings), pii="keep")
    store.put("k1", "es", "en", SAID[0][1], f"Hi, I am Anna. My mail is {EMAIL}.", "stub")
    store.put("k2", "es", "en", SAID[2][1], "My parcel has not arrived yet.", "stub")
    store.put("k3", "es", "en", "Gracias.", "Thank you.", "stub")
    store.add_team([TeamEntry("es", "en", "Hola.", "Hello.", origin=CORRECTED, author="alice")])
    store.close()
    rooms = ConversationStore(conversations_location(settings))
    for token, said in (("room-anna", SAID), ("room-bruno", OTHER)):
        rooms.write([RoomRecord(token, "room", 1.0, 2.0, {"glossary": {}}, agent="alice")],
                    [MessageRecord(token, n, who, text, "es", f"EN: {text}", "en", 1.0 + n)
                     for n, (who, text) in enumerate(said)])
    rooms.close()
    logs = settings.cache_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "app.log").write_text(
        json.dumps({"time": "2026-12-01T09:00:00+00:00", "message": f"mail to {EMAIL} bounced"})
        + "\n" + json.dumps({"time": "2026-12-01T09:00:01+00:00", "message": "started"}) + "\n")
    return session


def _dump(settings: Settings) -> str:
    """The database as text: pg_dump, or every SQLite file's dump."""
    if settings.database_url:
        bindir = postgres_bin()
        assert bindir is not None
        return subprocess.run([str(bindir / "pg_dump"), f"--dbname={libpq(settings.database_url)}"],
                              check=True, capture_output=True, text=True, timeout=120).stdout
    dumps = []
    for db in sorted(settings.cache_dir.glob("*.db")):
        with sqlite3.connect(db) as conn:
            dumps.append("\n".join(conn.iterdump()))
    return "\n".join(dumps)


def _bytes_found(folder: Path, text: str) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


async def test_forget_a_text_removes_every_trace_and_audits_it(
        deployment: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    await _customer(deployment)
    assert EMAIL in _dump(deployment)
    assert main(["forget", "--text", EMAIL]) == 0
    said = capsys.readouterr().out
    assert "history threads" in said and "files" in said and "log lines" in said
    assert "memory entries" in said and "conversations" in said

    assert EMAIL not in _dump(deployment)
    assert _bytes_found(deployment.cache_dir, EMAIL) == []
    assert not (deployment.cache_dir / FILES_ROOT / "4242-abcd" / "0b6f3c1e-session-anna").exists()
    assert step_outputs(deployment) == sorted(t for _, t in OTHER)  # Bruno's is kept
    rooms = ConversationStore(conversations_location(deployment))
    assert rooms.load("room-anna") is None and rooms.load("room-bruno") is not None
    rooms.close()
    store = MemoryStore(memory_location(deployment))
    # Anna's sentences went (one held the address, one was only made from her message).
    assert {e.segment for e in store.entries(("machine", "corrected"))} == {"Gracias.", "Hola."}
    store.close()
    log = (deployment.cache_dir / "logs" / "app.log").read_text()
    assert "started" in log and EMAIL not in log

    assert main(["audit", "--text", EMAIL]) == 0
    audit = capsys.readouterr().out
    assert "command:forget" in audit and "erase" in audit and EMAIL not in audit

    assert main(["forget", "--text", EMAIL]) == 0  # again: idempotent, and says so
    assert "Nothing is held" in capsys.readouterr().out


async def test_forget_someone_who_does_not_exist_says_so(
        deployment: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    await _customer(deployment)
    assert main(["forget", "--text", "nobody@example.net"]) == 0
    assert "Nothing is held about text 'nobody@example.net'" in capsys.readouterr().out
    assert EMAIL in _dump(deployment)


async def test_forget_an_agent_removes_their_threads_and_unsigns_corrections(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HYMT_CACHE_DIR", str(tmp_path))
    settings = Settings()
    await _customer(settings)
    await write_conversation(settings.history_url, agent="bob", said=[("customer", "Ciao.")])
    assert main(["forget", "--agent", "alice"]) == 0
    assert "corrections unsigned" in capsys.readouterr().out
    assert step_outputs(settings) == ["Ciao."]
    store = MemoryStore(memory_location(settings))
    assert [(e.segment, e.author) for e in store.entries((CORRECTED,))] == [("Hola.", None)]
    store.close()


async def test_export_writes_a_zip_of_json_and_a_transcript(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HYMT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HYMT_MEMORY_PII", "keep")
    settings = Settings()
    await _customer(settings)
    out = tmp_path / "anna.zip"
    assert main(["export", "--text", EMAIL, "--out", str(out)]) == 0
    assert "history threads" in capsys.readouterr().out
    with zipfile.ZipFile(out) as zf:
        names = set(zf.namelist())
        assert {"subject.json", "history.json", "memory.json", "logs.json",
                "transcript.md"} <= names
        threads = json.loads(zf.read("history.json"))
        assert [s["output"] for s in threads[0]["steps"]] == [t for _, t in SAID]
        assert any(EMAIL in e["segment"] for e in json.loads(zf.read("memory.json")))
        transcript = zf.read("transcript.md").decode()
        assert "Mi paquete no ha llegado todavía." in transcript and "Bruno" not in transcript
        assert json.loads(zf.read("subject.json"))["value"] == EMAIL
        assert f"files/{FILES_ROOT}/4242-abcd/0b6f3c1e-session-anna/5d1c-photo" in names
        lines = json.loads(zf.read("logs.json"))
        assert [EMAIL in line for found in lines.values() for line in found] == [True]
    assert out.stat().st_mode & 0o077 == 0  # the person's data: owner-only
    assert main(["audit", "--action", "export"]) == 0
    assert "command:export" in capsys.readouterr().out


def test_a_text_too_short_to_name_anyone_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HYMT_CACHE_DIR", str(tmp_path))
    assert main(["forget", "--text", "a"]) == 2
    assert "at least three characters" in capsys.readouterr().err


def test_a_database_that_does_not_answer_is_one_sentence(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from tests.support.ports import free_port

    monkeypatch.setenv("HYMT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("HYMT_DATABASE_URL",
                       f"postgresql+asyncpg://hymt:secret@127.0.0.1:{free_port()}/gone")
    assert main(["forget", "--text", EMAIL]) == 3
    err = capsys.readouterr().err
    assert err.startswith("hymt-chat: Cannot open the audit log database") and "secret" not in err
    assert "Traceback" not in err


async def test_an_agents_name_in_someone_elses_sentence_is_not_erased_with_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HYMT_CACHE_DIR", str(tmp_path))
    settings = Settings()
    await write_conversation(settings.history_url, agent="bob",
                             said=[("customer", "Alice in Wonderland, por favor.")])
    store = MemoryStore(memory_location(settings), pii="keep")
    store.put("k", "es", "en", "Alice in Wonderland, por favor.", "Alice in Wonderland, please.",
              "stub")
    store.close()
    assert main(["forget", "--agent", "alice"]) == 0
    assert step_outputs(settings) == ["Alice in Wonderland, por favor."]
    store = MemoryStore(memory_location(settings))
    assert [e.key for e in store.entries(("machine",))] == ["k"]
    store.close()


async def test_a_tab_still_open_on_an_erased_thread_cannot_write_it_back(
        deployment: Settings) -> None:
    """Chainlit saves the session into its thread when the tab goes, and writes each new step
    there: the app's data layer (history.refuse_erased) refuses both for an erased thread."""
    from chainlit.context import init_http_context
    from chainlit.data.sql_alchemy import SQLAlchemyDataLayer
    from chainlit.message import Message

    from hymt_chat.service.history import adapt_sqlite, refuse_erased

    anna = await write_conversation(deployment.history_url, agent="alice", said=SAID)
    bruno = await write_conversation(deployment.history_url, agent="alice", said=OTHER)
    assert main(["forget", "--text", EMAIL]) == 0
    layer = refuse_erased(SQLAlchemyDataLayer)(conninfo=deployment.history_url)
    adapt_sqlite(layer.engine)
    try:
        init_http_context(thread_id=anna)
        await layer.create_step(Message(content=f"late: {EMAIL}", author="customer").to_dict())
        await layer.update_thread(anna, metadata={"id": "s", "transcript": EMAIL})
        init_http_context(thread_id=bruno)  # a thread not erased is written as ever
        await layer.create_step(Message(content="Bruno again.", author="customer").to_dict())
    finally:
        await layer.close()
    assert EMAIL not in _dump(deployment)
    assert step_outputs(deployment) == sorted([*(t for _, t in OTHER), "Bruno again."])
