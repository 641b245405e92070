"""The audit log: rows appended and read back, filtered, written as CSV, and never changed or
removed — the database refuses it (a trigger), on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import dataclasses
import io
from pathlib import Path

import pytest
import sqlalchemy as sa

from hymt_chat.cli.main import main
from hymt_chat.store.audit import AuditLog, subject_label, write_csv
from hymt_chat.store.database import sync_url


def test_rows_are_appended_read_and_never_changed(where: Path | str) -> None:
    now = [1_000_000.0]
    log = AuditLog(where, clock=lambda: now[0])
    log.record("agent:alice", "take_over", "room r-123")
    now[0] += 60
    log.record("command:forget", "erase", subject_label("text", "anna@example.com"), "files=1")
    assert [(e.actor, e.action) for e in log.entries()] == [
        ("agent:alice", "take_over"), ("command:forget", "erase")]
    assert [e.actor for e in log.entries(since=1_000_030.0)] == ["command:forget"]
    assert [e.action for e in log.entries(actor="agent:alice")] == ["take_over"]
    engine = sa.create_engine(sync_url(where))
    try:
        for statement in ("UPDATE audit_log SET actor = 'x'", "DELETE FROM audit_log"):
            with pytest.raises(sa.exc.DBAPIError, match="append-only"), engine.begin() as db:
                db.execute(sa.text(statement))
    finally:
        engine.dispose()
    assert len(log.entries()) == 2
    log.close()


def test_a_text_is_named_by_its_hash_never_in_clear() -> None:
    label = subject_label("text", "anna@example.com")
    assert "anna" not in label and label.startswith("text sha256:") and "[email-1]" in label
    assert "Anna" not in subject_label("visitor", "Anna Berg")
    assert subject_label("agent", "alice") == "agent alice"


def test_csv_has_a_header_and_a_row_per_entry(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.db", clock=lambda: 0.0)
    log.record("agent:alice", "read", "thread t-1", 'said "hello", twice')
    out = io.StringIO()
    assert write_csv(log.entries(), out) == 1
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows == [["time", "actor", "action", "subject", "detail"],
                    ["1970-01-01T00:00:00+00:00", "agent:alice", "read", "thread t-1",
                     'said "hello", twice']]


def test_the_command_reads_and_exports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HYMT_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("HYMT_DATABASE_URL", raising=False)
    assert main(["audit"]) == 0
    assert "no such row" in capsys.readouterr().out
    AuditLog(tmp_path / "audit.db").record("agent:bob", "correct", "thread t-2")
    assert main(["audit", "--action", "correct"]) == 0
    out = capsys.readouterr().out
    assert "agent:bob" in out and "thread t-2" in out
    assert main(["audit", "--action", "erase"]) == 0
    assert "no such row" in capsys.readouterr().out
    assert main(["audit", "--csv", str(tmp_path / "a.csv")]) == 0
    assert "agent:bob,correct,thread t-2" in (tmp_path / "a.csv").read_text()
    assert main(["audit", "--since", "yesterday"]) == 2  # one sentence, exit 2
    assert "is not a date" in capsys.readouterr().err


async def test_an_agents_correction_is_on_the_audit_log(tmp_path: Path) -> None:
    """Driven as a session (tests/support/sessions.py), the stand-in model answering."""
    from hymt_chat.modes.agent.session import AgentSession
    from tests.support.sessions import RecordingScreen, services
    from tests.support.stub_model import StubModel

    async def noop() -> None:
        return None

    with StubModel(lambda prompt: "Hello, my package has not arrived yet.") as stub:
        svc = dataclasses.replace(services(stub, tmp_path, memory=True),
                                  audit_log=AuditLog(tmp_path / "audit.db"))
        screen = RecordingScreen()
        agent = AgentSession(svc, screen, session_id="s-1", user_key="user:alice",
                             page_url="https://chat.example")
        await agent.message("Hola, mi paquete no ha llegado todavía.", None)
        button = next(b for s in reversed(screen.shown) for b in s.reply.buttons
                      if b.name == "correct")
        await agent.button("correct", button.payload, button.label, noop)
        await agent.message("Hello, my parcel still has not arrived.", None)
    assert svc.audit_log is not None
    assert [(e.actor, e.action, e.subject) for e in svc.audit_log.entries()] == [
        ("agent:alice", "correct", "session s-1")]
