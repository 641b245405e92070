"""Retention with an injected clock: a 31-day-old conversation is removed and a 29-day-old one
kept (SQLite and the real PostgreSQL, written by Chainlit's data layer); per-kind days override
HYMT_RETENTION_DAYS, the team's memory entries follow only their own setting; the app's sweeper
and ``hymt-chat retention run`` say what they removed."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from hymt_chat.cli.main import main
from hymt_chat.service.erasure import Part, Subject
from hymt_chat.service.history import METADATA
from hymt_chat.service.retention import DAY, Retention, run_sweeper, start_sweeper, sweep
from hymt_chat.settings import Settings
from hymt_chat.store.audit import AuditLog
from hymt_chat.store.database import sync_url
from hymt_chat.store.memory import CORRECTED, MACHINE, MemoryStore, TeamEntry, memory_location
from tests.support.history_rows import step_outputs, write_conversation
from tests.support.postgres import fresh_database

NOW = 1_800_000_000.0  # the injected clock: 2027-01-15


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest) -> str | None:
    if request.param == "sqlite":
        return None
    return fresh_database(request.getfixturevalue("postgres_url"))


async def test_a_31_day_old_conversation_goes_and_a_29_day_old_one_stays(
        tmp_path: Path, database_url: str | None) -> None:
    settings = Settings(cache_dir=tmp_path, database_url=database_url, retention_days=30)
    await write_conversation(settings.history_url, agent="alice", at=NOW - 31 * DAY,
                             said=[("customer", "old"), ("agent", "old answer")])
    await write_conversation(settings.history_url, agent="alice", at=NOW - 29 * DAY,
                             said=[("customer", "recent")])
    audit = AuditLog(tmp_path / "audit.db", clock=lambda: NOW)
    removed = sweep(settings, now=NOW, audit=audit)
    assert removed["history threads"] == 1 and removed["history steps"] == 2
    assert step_outputs(settings) == ["recent"]
    assert sweep(settings, now=NOW)["history threads"] == 0  # nothing more: idempotent
    assert [(e.actor, e.action) for e in audit.entries()] == [("command:retention", "retention")]


async def test_a_conversation_active_lately_is_kept_however_old_it_is(tmp_path: Path) -> None:
    settings = Settings(cache_dir=tmp_path, retention_history_days=30)
    thread = await write_conversation(settings.history_url, agent="alice", at=NOW - 40 * DAY,
                                      said=[("customer", "opened long ago")])
    engine = sa.create_engine(sync_url(settings.history_url))
    steps = METADATA.tables["steps"]
    with engine.begin() as db:  # a message of yesterday in the same thread
        db.execute(sa.insert(steps).values(id="s-late", name="customer", type="user_message",
                                           threadId=thread, streaming=False, output="still here",
                                           createdAt="2027-01-14T00:00:00.000000Z"))
    engine.dispose()
    sweep(settings, now=NOW)
    assert step_outputs(settings) == ["opened long ago", "still here"]


def test_per_kind_days_override_and_the_team_has_its_own() -> None:
    policy = Retention.of(Settings(retention_days=30, retention_logs_days=7,
                                   retention_memory_days=0))
    assert policy.days == {"history": 30, "conversations": 30, "uploads": 30, "memory": None,
                           "logs": 7, "team": None}
    assert Retention.of(Settings(retention_team_days=365)).days["team"] == 365
    assert not Retention.of(Settings()).active


def test_memory_answers_and_team_entries_follow_their_own_days(tmp_path: Path) -> None:
    settings = Settings(cache_dir=tmp_path, retention_days=30, retention_team_days=90)
    made = [NOW - 60 * DAY]
    store = MemoryStore(memory_location(settings), clock=lambda: made[0])
    store.put("old", "es", "en", "Viejo.", "Old.", "stub")
    store.add_team([TeamEntry("es", "en", "Hola.", "Hello.", origin=CORRECTED)])
    made[0] = NOW - DAY
    store.put("new", "es", "en", "Nuevo.", "New.", "stub")
    removed = sweep(settings, now=NOW)
    assert removed["memory model answers"] == 1
    assert removed["memory corrections and imports"] == 0  # 60 days < 90
    assert {e.segment for e in store.entries((MACHINE, CORRECTED))} == {"Nuevo.", "Hola."}
    store.close()


def test_log_lines_older_than_their_days_go(tmp_path: Path) -> None:
    settings = Settings(cache_dir=tmp_path, retention_logs_days=7)
    logs = tmp_path / "logs"
    logs.mkdir()
    lines = [{"time": "2027-01-01T00:00:00+00:00", "message": "old"},
             {"time": "2027-01-14T00:00:00+00:00", "message": "new"}]
    (logs / "app.log").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert sweep(settings, now=NOW)["log lines"] == 1
    assert [json.loads(x)["message"] for x in (logs / "app.log").read_text().splitlines()] == [
        "new"]


class Conversations:
    """A holding of conversations (the rooms' tables) as the sweep sees it."""

    name = "rooms"

    def __init__(self) -> None:
        self.cuts: list[float] = []

    def erase(self, subject: Subject) -> Part:
        return Part()

    def export(self, subject: Subject) -> Part:
        return Part()

    def sweep(self, before: float) -> dict[str, int]:
        self.cuts.append(before)
        return {"room conversations": 2}


async def test_the_apps_sweeper_sweeps_each_round_with_its_clock(tmp_path: Path) -> None:
    settings = Settings(cache_dir=tmp_path, retention_conversations_days=10,
                        retention_every=5.0)
    rooms = Conversations()
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    await run_sweeper(settings, clock=lambda: NOW, holdings=[rooms], sleep=sleep, rounds=2)
    assert rooms.cuts == [NOW - 10 * DAY] * 2 and waits == [5.0]


async def test_no_retention_set_means_no_sweeper(tmp_path: Path) -> None:
    rooms = Conversations()
    await run_sweeper(Settings(cache_dir=tmp_path), holdings=[rooms], rounds=1)
    assert rooms.cuts == [] and start_sweeper(Settings(cache_dir=tmp_path)) is None


async def test_the_app_starts_the_sweeper_as_a_task_it_holds(tmp_path: Path) -> None:
    rooms = Conversations()
    task = start_sweeper(Settings(cache_dir=tmp_path, retention_conversations_days=1),
                         holdings=[rooms])
    assert task is not None
    while not rooms.cuts:  # the first round runs at once (bounded by the test's timeout)
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_the_command_says_what_it_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HYMT_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("HYMT_DATABASE_URL", raising=False)
    assert main(["retention", "run"]) == 0
    assert "No retention is set" in capsys.readouterr().out
    await write_conversation(Settings(cache_dir=tmp_path).history_url, agent="alice",
                             at=time.time() - 40 * DAY, said=[("customer", "old")])
    monkeypatch.setenv("HYMT_RETENTION_HISTORY_DAYS", "30")
    assert main(["retention", "run"]) == 0
    out = capsys.readouterr().out
    assert "history threads" in out and "Kept without a limit" in out
