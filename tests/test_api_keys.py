"""API keys: shown once, stored as a hash, revocable; a monthly quota that renews; glossaries
private to their key; the `hymt-chat api-key` command. Each on SQLite and on a real PostgreSQL
(``keys_at``: one cluster per session, a fresh database per test)."""

from __future__ import annotations

import sqlite3
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hymt_chat.api.keys import ApiKeyError, KeyStore, hash_key, month_of
from hymt_chat.cli.main import main
from hymt_chat.errors import QuotaExceededError


class Clock:
    def __init__(self, when: str) -> None:
        self.now = datetime.fromisoformat(when).replace(tzinfo=UTC).timestamp()

    def __call__(self) -> float:
        return self.now


def test_only_the_hash_is_stored_and_the_file_is_owner_only(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "k.db")
    key = store.create("weblate", per_minute=10)
    assert key.startswith("hymt-") and len(key) > 40
    store.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert key.encode() not in raw and hash_key(key).encode() in raw
    assert stat.S_IMODE((tmp_path / "k.db").stat().st_mode) == 0o600


def test_lookup_revoke_and_reuse_of_a_name(keys_at: Path | str) -> None:
    store = KeyStore(keys_at)
    key = store.create("bot", per_minute=5, chars_per_month=100)
    found = store.lookup(key)
    assert found is not None and (found.name, found.per_minute, found.chars_per_month) == (
        "bot", 5, 100)
    assert store.lookup(key + "x") is None
    with pytest.raises(ApiKeyError, match="exists"):
        store.create("bot", per_minute=5)
    store.revoke("bot")
    assert store.lookup(key) is None and store.active_count() == 0
    with pytest.raises(ApiKeyError, match="No active key"):
        store.revoke("bot")
    again = store.create("bot", per_minute=5)  # a revoked name may be given a new key
    assert store.lookup(again) is not None and store.lookup(key) is None


@pytest.mark.parametrize("name", ["", "a b", "-x", "x" * 65, "ключ"])
def test_bad_names_are_refused(keys_at: Path | str, name: str) -> None:
    store = KeyStore(keys_at)
    with pytest.raises(ApiKeyError, match="key name"):
        store.create(name, per_minute=1)
    assert store.list() == []


def test_quota_is_charged_refunded_and_renews_each_month(keys_at: Path | str) -> None:
    clock = Clock("2026-12-31T23:59:00")
    store = KeyStore(keys_at, clock=clock)
    month = store.charge("bot", 60, 100)
    with pytest.raises(QuotaExceededError, match="100 characters a month; 60 are used"):
        store.charge("bot", 41, 100)
    assert store.used("bot") == 60  # the refused request charged nothing
    store.refund("bot", 60, month)
    store.charge("bot", 100, 100)
    clock.now += 120  # 2027-01-01
    assert store.used("bot") == 0
    store.charge("bot", 100, 100)
    store.charge("other", 2 * 10**9, None)  # no quota: counted, never refused
    store.charge("other", 2 * 10**9, None)  # past 2**31: the counters are 64-bit
    assert store.used("other") == 4 * 10**9
    store.refund("other", 5 * 10**9, month_of(clock.now))  # never below zero
    assert store.used("other") == 0


def test_glossaries_belong_to_their_key(keys_at: Path | str) -> None:
    store = KeyStore(keys_at)
    glossary = store.add_glossary("a", "support", "en", "de", {"order number": "Bestellnummer",
                                                               "货号": "Artikelnummer"})
    assert store.glossary("a", glossary.id) == glossary
    assert store.glossary("a", glossary.id).entries == {"order number": "Bestellnummer",
                                                        "货号": "Artikelnummer"}
    assert store.glossaries("a") == [glossary]
    assert store.glossary("b", glossary.id) is None
    assert not store.delete_glossary("b", glossary.id)
    assert store.delete_glossary("a", glossary.id) and store.glossaries("a") == []


def test_cli_prints_the_key_alone_then_lists_and_revokes(
        keys_at: Path | str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """With a PostgreSQL HYMT_DATABASE_URL (the history's async URL, as the app has it) the
    command writes there, and the SQLite file is not made."""
    monkeypatch.setenv("HYMT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HYMT_API_KEYS_PATH", raising=False)
    monkeypatch.delenv("HYMT_DATABASE_URL", raising=False)
    if isinstance(keys_at, Path):
        monkeypatch.setenv("HYMT_API_KEYS_PATH", str(keys_at))
    else:
        monkeypatch.setenv("HYMT_DATABASE_URL", keys_at)
    assert main(["api-key", "create", "weblate", "--chars-per-month", "5000",
                 "--per-minute", "30"]) == 0
    key = capsys.readouterr().out
    assert key.endswith("\n") and key.count("\n") == 1 and key.startswith("hymt-")
    assert (tmp_path / "cache" / "api-keys.db").exists() is False
    found = KeyStore(keys_at).lookup(key.strip())
    assert found is not None and (found.per_minute, found.chars_per_month) == (30, 5000)
    assert main(["api-key", "create", "weblate"]) == 2
    assert "exists" in capsys.readouterr().err
    assert main(["api-key", "list"]) == 0
    listing = capsys.readouterr().out
    assert "weblate" in listing and "0 / 5,000" in listing and key.strip() not in listing
    assert main(["api-key", "revoke", "weblate"]) == 0
    capsys.readouterr()
    assert main(["api-key", "list"]) == 0 and "revoked" in capsys.readouterr().out
    assert main(["api-key", "revoke", "nobody"]) == 2


def test_store_schema_is_plain_sqlite(tmp_path: Path) -> None:
    KeyStore(tmp_path / "k.db").create("x", per_minute=1)
    tables = {r[0] for r in sqlite3.connect(tmp_path / "k.db").execute(
        "SELECT name FROM sqlite_master WHERE type='table'")}
    assert tables == {"api_keys", "api_usage", "api_glossaries"}
