"""The API's door on a plain FastAPI app (no model call is needed for any of these): routes
answer before a catch-all, off without keys, open to 127.0.0.1 only when asked, body caps,
glossaries and usage. The key store is SQLite and a real PostgreSQL (``keys_at``)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from hymt_chat.api.keys import KeyStore
from hymt_chat.api.routes import mount
from hymt_chat.engine.translator import Translator
from hymt_chat.service.metrics import Metrics
from hymt_chat.service.web import forwarded_allow_ips
from hymt_chat.settings import Settings

# Nothing here reaches the model: refusals come first, "42" is never sent (the same in every
# language), detection is local. The base URL is a closed port, so a call would fail loudly.
DEAD = "http://127.0.0.1:9/v1"


def app_for(tmp_path: Path, where: Path | str | None = None,
            **overrides: object) -> tuple[FastAPI, KeyStore, Metrics]:
    settings = Settings(base_url=DEAD, cache_dir=tmp_path, **overrides)  # type: ignore[arg-type]
    store = KeyStore(where or tmp_path / "keys.db")
    app = FastAPI()

    @app.get("/{path:path}")
    async def page(path: str) -> dict[str, str]:  # Chainlit's catch-all, registered first
        return {"page": path}

    metrics = Metrics()
    mount(app, Translator(settings), settings, metrics=metrics, store=store)
    return app, store, metrics


def client(app: FastAPI, address: str = "10.0.0.1", proxies: str = "") -> httpx.AsyncClient:
    """*app* as uvicorn serves it: behind its proxy-headers middleware, which trusts *proxies*
    (uvicorn/config.py, Config.load: ``ProxyHeadersMiddleware(app, trusted_hosts=...)``)."""
    served = ProxyHeadersMiddleware(app, trusted_hosts=proxies)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=served, client=(address, 5000)),
                             base_url="http://hymt")


async def test_our_routes_answer_before_the_catch_all(tmp_path: Path) -> None:
    app, _, _ = app_for(tmp_path)
    async with client(app) as http:
        langs = await http.get("/libretranslate/languages")
        assert isinstance(langs.json(), list) and len(langs.json()) == 38
        assert (await http.get("/elsewhere")).json() == {"page": "elsewhere"}


async def test_without_keys_the_api_is_off_and_says_how_to_turn_it_on(
        tmp_path: Path, keys_at: Path | str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="hymt_chat.api"):
        app, _, metrics = app_for(tmp_path, keys_at)
    assert [r.getMessage() for r in caplog.records if r.name == "hymt_chat.api"] == [
        ("The API is off: no API key is configured. Create one with `hymt-chat api-key create "
         "NAME`, or set HYMT_API_OPEN_LOCAL=1 to open it to 127.0.0.1 without keys.")]
    async with client(app, "127.0.0.1") as http:
        lt = await http.post("/libretranslate/detect", data={"q": "Guten Tag, wie geht es?"})
        dl = await http.post("/deepl/v2/translate", json={"text": ["42"], "target_lang": "DE"})
    assert lt.status_code == 400 and "hymt-chat api-key create" in lt.json()["error"]  # no key
    assert dl.status_code == 403 and "HYMT_API_OPEN_LOCAL" in dl.json()["message"]
    body = metrics.render()[0].decode()
    assert 'hymt_api_requests_total{dialect="deepl",key="none",outcome="denied"} 1.0' in body


async def test_open_local_serves_127_0_0_1_without_a_key_and_nobody_else(
        tmp_path: Path, keys_at: Path | str) -> None:
    app, store, metrics = app_for(tmp_path, keys_at, api_open_local=True,
                                  trusted_proxies="127.0.0.1")
    proxies = forwarded_allow_ips(Settings(trusted_proxies="127.0.0.1"))
    async with client(app, "127.0.0.1", proxies) as local:
        ok = await local.post("/deepl/v2/translate", json={"text": ["42"], "target_lang": "DE"})
        assert ok.status_code == 200 and ok.json()["translations"][0]["text"] == "42"
        proxied = await local.post("/deepl/v2/translate", headers={"X-Forwarded-For": "10.9.9.9"},
                                   json={"text": ["42"], "target_lang": "DE"})
        assert proxied.status_code == 403  # a proxy on this host does not open it to the world
        wrong = await local.post("/deepl/v2/translate",
                                 headers={"Authorization": "DeepL-Auth-Key hymt-wrong"},
                                 json={"text": ["42"], "target_lang": "DE"})
        assert wrong.status_code == 403  # a bad key is refused even where no key is needed
    async with client(app) as remote:
        far = await remote.post("/libretranslate/detect", data={"q": "Guten Tag, wie geht es?"})
        assert far.status_code == 400  # LibreTranslate's answer to a missing key
        assert far.json()["error"] == "Please contact the server operator to get an API key"
        key = store.create("far", per_minute=5)
        near = await remote.post("/libretranslate/detect",
                                 data={"q": "Guten Tag, wie geht es Ihnen heute?", "api_key": key})
        assert near.status_code == 200 and near.json()[0]["language"] == "de"
    body = metrics.render()[0].decode()
    assert 'dialect="deepl",key="local",outcome="ok"} 1.0' in body
    assert 'dialect="libretranslate",key="far",outcome="ok"} 1.0' in body


async def test_bodies_over_the_cap_are_refused_before_they_are_read(tmp_path: Path) -> None:
    app, store, _ = app_for(tmp_path, api_max_body=4096, max_input_chars=1000)
    key = store.create("k", per_minute=50)
    auth = {"Authorization": f"DeepL-Auth-Key {key}"}

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: read only up to the cap
        for _ in range(100):
            yield b'{"text": ["' + b"a" * 1000

    async with client(app) as http:
        declared = await http.post("/deepl/v2/translate", headers=auth, content=b"x" * 5000)
        assert declared.status_code == 413
        assert declared.json()["message"] == ("The request body is 5,000 bytes; the limit is "
                                              "4,096 bytes. Send less text per request.")
        streamed = await http.post("/deepl/v2/translate", headers=auth, content=chunks())
        assert streamed.status_code == 413 and "4,096" in streamed.json()["message"]
        # LibreTranslate's cap is its charLimit (HYMT_MAX_INPUT_CHARS) at 12 bytes a character
        # and 64 KiB of fields; over it, its 400 (libretranslate.py: body_limit).
        lt = await http.post("/libretranslate/translate", data={"q": "a" * 100_000,
                                                                "api_key": key})
        assert lt.status_code == 400 and lt.json()["error"].endswith(
            " bytes) exceeds text limit (77536 bytes)")


async def test_bad_json_and_form_bodies_get_one_sentence(tmp_path: Path) -> None:
    app, store, _ = app_for(tmp_path)
    key = store.create("k", per_minute=50)
    async with client(app) as http:
        broken = await http.post("/libretranslate/translate", content=b"{nope",
                                 headers={"Content-Type": "application/json"},
                                 params={"api_key": key})
        assert broken.status_code == 400 and "not valid JSON" in broken.json()["error"]
        listed = await http.post("/deepl/v2/translate", json=["text"],
                                 headers={"Authorization": f"DeepL-Auth-Key {key}"})
        assert listed.status_code == 400 and "must be a JSON object" in listed.json()["message"]
        many = await http.post("/deepl/v2/translate", json={"text": ["42"] * 51,
                                                            "target_lang": "DE"},
                               headers={"Authorization": f"DeepL-Auth-Key {key}"})
        assert many.status_code == 400 and "at most 50" in many.json()["message"]


async def test_a_key_file_that_cannot_be_opened_leaves_the_page_up(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "keys.db").mkdir()  # a folder where the file should be
    settings = Settings(base_url=DEAD, cache_dir=tmp_path, api_keys_path=tmp_path / "keys.db")
    app = FastAPI()

    @app.get("/{path:path}")
    async def page(path: str) -> dict[str, str]:
        return {"page": path}

    with caplog.at_level(logging.ERROR, logger="hymt_chat.api"):
        assert mount(app, Translator(settings), settings) is None
    assert "API off: Cannot open the API key file" in caplog.text
    async with client(app) as http:
        assert (await http.get("/libretranslate/languages")).json() == {
            "page": "libretranslate/languages"}


async def test_deepl_translate_answers_a_get_with_query_fields_and_the_key_in_the_header(
        tmp_path: Path, keys_at: Path | str) -> None:
    app, store, _ = app_for(tmp_path, keys_at)
    key = store.create("weblate", per_minute=5)
    async with client(app) as http:
        got = await http.get("/deepl/v2/translate", params={"text": "42", "target_lang": "FR"},
                             headers={"Authorization": f"DeepL-Auth-Key {key}"})
        in_query = await http.get("/deepl/v2/translate", params={
            "text": "42", "target_lang": "FR", "auth_key": key})
        in_body = await http.post("/deepl/v2/translate", data={
            "text": "42", "target_lang": "FR", "auth_key": key})
    # DeepL itself refuses a key in the query string or body since January 2026
    for refused in (in_query, in_body):
        assert refused.status_code == 403
        assert "Authorization: DeepL-Auth-Key" in refused.json()["message"]
    assert got.status_code == 200
    # DeepL names a language for every text, "42" too (deepl-node throws on ""): English
    assert got.json() == {"translations": [{"detected_source_language": "EN", "text": "42",
                                            "billed_characters": 2, "hymt_flags": []}]}


async def test_deepl_glossaries_and_usage_through_the_routes(
        tmp_path: Path, keys_at: Path | str, caplog: pytest.LogCaptureFixture) -> None:
    """Create, list, get, entries, delete, usage: every store call the DeepL routes make (in a
    worker thread), private to the key that made the glossary."""
    first = KeyStore(keys_at)  # keys made before the app starts (by the CLI)
    mine = {"Authorization": f"DeepL-Auth-Key {first.create('a', per_minute=50)}"}
    theirs = {"Authorization": f"DeepL-Auth-Key {first.create('b', per_minute=50)}"}
    first.close()
    with caplog.at_level(logging.INFO, logger="hymt_chat.api"):
        app, store, _ = app_for(tmp_path, keys_at)
    async with client(app) as http:
        made = await http.post("/deepl/v2/glossaries", headers=mine, json={
            "name": "support", "source_lang": "EN", "target_lang": "DE",
            "entries": "order number\tBestellnummer\n", "entries_format": "tsv"})
        assert made.status_code == 201 and made.json()["entry_count"] == 1
        gid = made.json()["glossary_id"]
        listed = (await http.get("/deepl/v2/glossaries", headers=mine)).json()["glossaries"]
        assert [g["glossary_id"] for g in listed] == [gid]
        entries = await http.get(f"/deepl/v2/glossaries/{gid}/entries", headers=mine)
        assert entries.text == "order number\tBestellnummer"  # as DeepL: no last newline
        assert (await http.get(f"/deepl/v2/glossaries/{gid}", headers=theirs)).status_code == 404
        assert (await http.get("/deepl/v2/glossaries", headers=theirs)).json() == {
            "glossaries": []}
        assert (await http.delete(f"/deepl/v2/glossaries/{gid}", headers=theirs)).status_code \
            == 404
        assert (await http.delete(f"/deepl/v2/glossaries/{gid}", headers=mine)).status_code \
            == 204
        assert (await http.get(f"/deepl/v2/glossaries/{gid}", headers=mine)).status_code == 404
        ok = await http.post("/deepl/v2/translate", headers=mine,
                             json={"text": ["42", "7"], "target_lang": "DE"})
        assert ok.status_code == 200
        usage = (await http.get("/deepl/v2/usage", headers=mine)).json()
    assert usage == {"character_count": 3, "character_limit": usage["character_limit"]}
    assert store.used("a") == 3 and store.used("b") == 0
    where = str(keys_at) if isinstance(keys_at, Path) else "postgresql+psycopg://hymt@"
    assert f"2 key(s) in {where}" in caplog.text  # the start line names the store
