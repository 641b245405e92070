"""API keys with several app replicas: where the keys live (a PostgreSQL HYMT_DATABASE_URL, else
the SQLite file), the quota held across replicas charging at once, the store's blocking IO kept
off the event loop, and a database that does not answer said in one sentence."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import sqlite3
import threading
from pathlib import Path

import psycopg
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from hymt_chat.api.access import Access
from hymt_chat.api.keys import (
    KeyStore,
    KeyStoreError,
    _sync_url,
    hash_key,
    open_store,
    store_location,
)
from hymt_chat.cli.main import main
from hymt_chat.errors import AccessDeniedError, HymtError, RateLimitedError
from hymt_chat.service.ratelimit import Cost
from hymt_chat.settings import Settings
from tests.support.key_replica import charge_burst
from tests.support.ports import free_port
from tests.support.postgres import fresh_database, libpq
from tests.support.redis_server import redis_server

# --- where the keys live ----------------------------------------------------------------------

def test_a_postgresql_database_url_holds_the_keys_else_the_sqlite_file(tmp_path: Path) -> None:
    pg = "postgresql+asyncpg://hymt:pw@db.internal/hymt"
    assert store_location(Settings(cache_dir=tmp_path, database_url=pg)) == pg
    assert store_location(Settings(cache_dir=tmp_path)) == tmp_path / "api-keys.db"
    history = f"sqlite+aiosqlite:///{tmp_path}/history.db"  # a SQLite history moves nothing
    assert store_location(Settings(cache_dir=tmp_path, database_url=history)) == (
        tmp_path / "api-keys.db")
    assert store_location(Settings(cache_dir=tmp_path, api_keys_path=tmp_path / "k.db")) == (
        tmp_path / "k.db")


def test_the_historys_async_urls_get_the_sync_drivers() -> None:
    assert _sync_url("postgresql+asyncpg://u:p@h:5433/d").render_as_string(False) == (
        "postgresql+psycopg://u:p@h:5433/d")
    assert _sync_url("postgresql://h/d?ssl=require").query == {"sslmode": "require"}
    assert _sync_url("postgresql+asyncpg://h/d?ssl=true").query == {"sslmode": "require"}
    assert _sync_url("sqlite+aiosqlite:////var/k.db").render_as_string() == (
        "sqlite+pysqlite:////var/k.db")
    with pytest.raises(HymtError, match="SQLite or PostgreSQL, not mysql"):
        _sync_url("mysql+aiomysql://h/d")
    with pytest.raises(HymtError, match="SQLite file"):
        _sync_url("sqlite+aiosqlite://")


def test_a_database_that_does_not_answer_is_one_sentence_without_the_password(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    closed = f"postgresql+asyncpg://hymt:s3cret-pw@127.0.0.1:{free_port()}/hymt"
    with pytest.raises(HymtError, match="Cannot open the API key database") as caught:
        open_store(closed)
    assert "s3cret-pw" not in str(caught.value) and "127.0.0.1" in str(caught.value)
    monkeypatch.setenv("HYMT_DATABASE_URL", closed)
    assert main(["api-key", "list"]) != 0
    err = capsys.readouterr().err
    assert "Cannot open the API key database" in err and "s3cret-pw" not in err


def test_the_tables_on_postgresql_beside_the_history_and_only_hashes(postgres_url: str) -> None:
    url = fresh_database(postgres_url)
    store = KeyStore(url)
    key = store.create("weblate", per_minute=10, chars_per_month=5)
    assert store.location.startswith("postgresql+psycopg://hymt@127.0.0.1:")
    store.close()
    with psycopg.connect(libpq(url)) as db:
        tables = {r[0] for r in db.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")}
        rows = db.execute("SELECT * FROM api_keys").fetchall()
    assert tables == {"api_keys", "api_usage", "api_glossaries"}
    assert [r[1] for r in rows] == [hash_key(key)] and key not in repr(rows)


def test_replicas_starting_at_once_create_the_tables_once(postgres_url: str) -> None:
    """Four stores open one empty database together (replicas of a fresh deployment): the
    advisory lock lets one create the tables; none fails on the others' CREATE TABLE."""
    url = fresh_database(postgres_url)
    start = threading.Barrier(4)
    errors: list[BaseException] = []
    stores: list[KeyStore] = []

    def replica() -> None:
        start.wait()
        try:
            stores.append(KeyStore(url))
        except BaseException as err:  # noqa: BLE001 - collected and asserted below
            errors.append(err)

    workers = [threading.Thread(target=replica) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == [] and len(stores) == 4
    key = stores[0].create("k", per_minute=1)
    assert all(s.lookup(key) is not None for s in stores)


# --- several replicas on one store ------------------------------------------------------------

async def test_a_key_made_or_revoked_on_one_replica_holds_on_the_other(
        keys_at: Path | str) -> None:
    one, other = KeyStore(keys_at), KeyStore(keys_at)
    access = Access(other, open_local=False, local_limit="20/minute")
    key = one.create("weblate", per_minute=5, chars_per_month=100)
    caller = await access.authenticate(key, "10.0.0.1")
    assert caller.name == "weblate" and caller.chars_per_month == 100
    await access.admit(caller, Cost(0, 30))
    assert one.used("weblate") == 30  # the other replica's charge, seen here
    one.revoke("weblate")
    with pytest.raises(AccessDeniedError, match="unknown or revoked"):
        await access.authenticate(key, "10.0.0.1")


async def test_a_keys_per_minute_limit_is_shared_by_replicas_through_redis(
        keys_at: Path | str, tmp_path: Path) -> None:
    """Two replicas (two Access objects, one key store, one real Redis): a key allowed 3
    requests a minute gets 3 in all, not 3 on each; without Redis each replica counts alone."""
    one = Access(KeyStore(keys_at), open_local=False, local_limit="20/minute")
    key = one.store.create("bot", per_minute=3)
    with redis_server(tmp_path / "redis") as redis_url:
        shared = [Access(KeyStore(keys_at), open_local=False, local_limit="20/minute",
                         limit_storage=redis_url) for _ in range(2)]
        callers = [await a.authenticate(key, "10.0.0.1") for a in shared]
        for i in range(3):
            await shared[i % 2].admit(callers[i % 2], Cost(0, 5))
        with pytest.raises(RateLimitedError):
            await shared[1].admit(callers[1], Cost(0, 5))
    alone = [Access(KeyStore(keys_at), open_local=False, local_limit="20/minute")
             for _ in range(2)]
    for access in alone:  # in memory: each replica allows its own 3
        for _ in range(3):
            await access.admit(await access.authenticate(key, "10.0.0.1"), Cost(0, 0))
    assert one.store.used("bot") == 15  # the refused request charged nothing


def test_two_replicas_charging_one_key_at_once_never_pass_its_quota(
        keys_at: Path | str) -> None:
    """Two processes (each its own store and connections), eight threads each, 320 charges of
    7 characters against a quota of 1,000: exactly 142 are admitted (994 characters), none
    lost, none over — on SQLite's file lock and on PostgreSQL's row lock alike."""
    KeyStore(keys_at).close()  # the tables exist before the race (as after the first start)
    ctx = multiprocessing.get_context("spawn")
    start, results = ctx.Barrier(2), ctx.Queue()
    replicas = [ctx.Process(target=charge_burst,
                            args=(keys_at, "bot", 7, 1000, 8, 20, start, results))
                for _ in range(2)]
    for p in replicas:
        p.start()
    counts = [results.get(timeout=300) for _ in replicas]
    for p in replicas:
        p.join(timeout=60)
        assert p.exitcode == 0
    admitted = sum(a for a, _ in counts)
    refused = sum(r for _, r in counts)
    assert (admitted, refused) == (142, 320 - 142)
    assert KeyStore(keys_at).used("bot") == 994


# --- off the event loop -----------------------------------------------------------------------

async def test_a_charge_waiting_on_the_database_does_not_stall_the_event_loop(
        keys_at: Path | str) -> None:
    """Another connection holds the usage row's lock (a real wait inside the database, as when
    a replica's transaction is slow). While our charge waits for it, the loop goes on; then the
    lock is released and the charge lands. A charge made on the loop would freeze it until the
    fallback release, and the tick would only come after the charge: the test would fail."""
    store = KeyStore(keys_at)
    store.charge("local", 1, None)  # the row exists, for the other connection to lock
    access = Access(store, open_local=True, local_limit="")
    caller = await access.authenticate(None, "127.0.0.1")
    assert caller.name == "local"
    locked, release = threading.Event(), threading.Event()

    def hold_the_row() -> None:
        if isinstance(keys_at, Path):
            db = sqlite3.connect(keys_at, isolation_level=None)
            db.execute("BEGIN IMMEDIATE")  # SQLite: the whole file's write lock
        else:
            db = psycopg.connect(libpq(keys_at))
            db.execute("UPDATE api_usage SET chars = chars WHERE name = 'local'")  # row lock
        locked.set()
        release.wait(timeout=8)  # only a fallback, so that a failing test ends (SQLite waits 10)
        db.commit() if not isinstance(db, sqlite3.Connection) else db.execute("COMMIT")
        db.close()

    holder = threading.Thread(target=hold_the_row)
    holder.start()
    await asyncio.to_thread(locked.wait)
    charge = asyncio.ensure_future(access.admit(caller, Cost(0, 40)))
    try:
        for _ in range(20):  # the loop runs: the charge is still waiting on the lock
            await asyncio.sleep(0.01)
        assert not charge.done()
    finally:
        release.set()
        await charge
        await asyncio.to_thread(holder.join)
    assert store.used("local") == 41


def test_a_database_gone_after_start_is_one_sentence(postgres_url: str) -> None:
    """The store was opened; then its database goes (dropped here, as a failover would drop the
    connections): the next call says so in one sentence, without the driver's text."""
    url = fresh_database(postgres_url)
    store = KeyStore(url)
    key = store.create("k", per_minute=1)
    store.close()
    name = make_url(url).database
    with psycopg.connect(libpq(postgres_url), autocommit=True) as db:
        db.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    with pytest.raises(KeyStoreError, match="^The API key database is not answering") as err:
        store.lookup(key)
    assert isinstance(err.value.__cause__, sa.exc.OperationalError)


# --- moving to PostgreSQL -------------------------------------------------------------------

def test_import_copies_a_sqlite_key_file_and_its_keys_keep_working(
        postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    old = KeyStore(tmp_path / "api-keys.db")
    kept = old.create("weblate", per_minute=30, chars_per_month=1000)
    old.charge("weblate", 250, 1000)
    gone = old.create("gone", per_minute=1)
    old.revoke("gone")
    glossary = old.add_glossary("weblate", "support", "en", "de", {"order": "Bestellung"})
    old.close()
    url = fresh_database(postgres_url)
    taken = KeyStore(url).create("bot", per_minute=5)
    old = KeyStore(tmp_path / "api-keys.db")
    old.create("bot", per_minute=9)  # the same name on both sides: PostgreSQL's is kept
    old.close()
    monkeypatch.setenv("HYMT_DATABASE_URL", url)
    assert main(["api-key", "import", str(tmp_path / "api-keys.db")]) == 0
    out = capsys.readouterr().out
    assert "Copied 2 key(s)" in out and ": weblate, gone." in out  # the revoked one listed too
    assert out.splitlines()[-1] == "Skipped (a key of that name is there already): bot."
    new = KeyStore(url)
    found = new.lookup(kept)
    assert found is not None and (found.per_minute, found.chars_per_month) == (30, 1000)
    assert new.used("weblate") == 250 and new.lookup(gone) is None
    assert new.glossary("weblate", glossary.id) == glossary
    assert new.lookup(taken) is not None and new.lookup(taken).per_minute == 5
    assert main(["api-key", "import", str(tmp_path / "nothing.db")]) == 2
    assert "No key file" in capsys.readouterr().err


def test_the_app_says_when_keys_are_left_in_the_sqlite_file(
        postgres_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from fastapi import FastAPI

    from hymt_chat.api.routes import mount
    from hymt_chat.engine.translator import Translator

    KeyStore(tmp_path / "api-keys.db").create("weblate", per_minute=3)
    settings = Settings(base_url="http://127.0.0.1:9/v1", cache_dir=tmp_path,
                        database_url=fresh_database(postgres_url))
    with caplog.at_level(logging.WARNING, logger="hymt_chat.api"):
        svc = mount(FastAPI(), Translator(settings), settings)
    assert svc is not None and svc.access.store.path is None
    assert (f"1 API key(s) in {tmp_path / 'api-keys.db'} are not used: the keys live in "
            "postgresql+psycopg://") in caplog.text
    assert "`hymt-chat api-key import" in caplog.text
