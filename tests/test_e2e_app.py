"""The app itself through its real surface: Stop and a closed tab abort the generation in the
engine, uploads are checked through the app, agents' history (and the API keys) land in a real
PostgreSQL, /health reads the engine, and a one-liner is answered while the tab's own document
translates.

Real: the app (``chainlit run app.py`` in a subprocess), its HTTP routes, socket.io clients
like a browser's (``Tab``), PostgreSQL. The double: the engine (``tests/support/engine_double.py``),
which holds a request until the test releases it and counts what the app aborted; the real
vLLM's abort on hang-up is pinned in ``tests/test_engine_contract.py``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
import psycopg

from hymt_chat.api.keys import KeyStore
from hymt_chat.service.auth import hash_password
from tests.support.double_app import double_app
from tests.support.engine_double import EngineDouble, echo_source
from tests.support.phrasebook import phrasebook
from tests.support.postgres import fresh_database, libpq
from tests.support.tabs import Tab

PASSWORD = "correct horse battery"
PARAGRAPH = (
    "La livraison est arrivée avec deux jours de retard et le colis était endommagé. "
    "J'ai contacté le service client trois fois sans obtenir de réponse claire. "
    "Je voudrais savoir si un remboursement partiel est possible, ou au moins un bon de "
    "réduction pour ma prochaine commande. Pourriez-vous m'envoyer une facture corrigée ?"
)


def test_stop_and_closing_the_tab_abort_the_generation(engine: EngineDouble, tmp_path: Path):
    """Stop and a closed tab, each also with the message sent *before* the chat started.

    Chainlit handles each socket event in a task of its own: ``connection_successful`` emits
    three events before it starts the chat and names ``on_chat_start``'s task the session's
    ``current_task``, so a message sent at once ran in a session the chat's start then
    replaced, and Stop cancelled the wrong task: the engine went on generating. Sending the
    message first makes that order certain.

    The double holds every request, so the generation is under way for as long as the test
    needs; each one the app started must end *aborted* (the app hung up), none *finished*."""
    engine.set_hold(True)

    async def generating(tab: Tab, first: bool) -> int:
        """The message under way in the engine; the index of its first request."""
        start = len(engine.requests)
        if first:
            await tab.send(PARAGRAPH)
        await tab.client.emit("connection_successful")
        if not first:
            await tab.send(PARAGRAPH)
        await engine.until(lambda d: d.count("running") >= 1, "the paragraph to be generating")
        return start

    def all_aborted(start: int) -> Callable[[EngineDouble], bool]:
        def check(double: EngineDouble) -> bool:
            mine = double.requests[start:]
            return bool(mine) and all(r.state == "aborted" for r in mine)
        return check

    async def scenario(url: str) -> list[str]:
        seen = []
        for first in (False, True):
            async with Tab(url, greet=False) as tab:
                start = await generating(tab, first)
                await tab.client.emit("stop")  # Chainlit's Stop button
                await engine.until(all_aborted(start), "Stop to abort the request")
            seen.append(f"stop, first={first}: {[r.state for r in engine.requests[start:]]}")
            async with Tab(url, greet=False) as tab:
                start = await generating(tab, first)
            await engine.until(all_aborted(start), "the closed tab to abort it")
            seen.append(f"closed, first={first}: {[r.state for r in engine.requests[start:]]}")
        return seen

    with double_app(engine, tmp_path, HYMT_CHECKS="0") as url:
        seen = asyncio.run(scenario(url))
    assert engine.count("finished") == 0, seen
    assert engine.count("aborted") >= 4, seen  # one per Stop or close, at the least
    print("; ".join(seen))


def test_a_tab_whose_socket_comes_back_keeps_the_translation_under_way(
        engine: EngineDouble, tmp_path: Path):
    """Chainlit calls on_chat_end at every disconnect, also when the page reconnects at once
    (it does on each resume of a thread of another profile than its default) and restores the
    same session on the new socket. A translation under way then goes on and its answer reaches
    the new socket; the engine finishes it, nothing is aborted. (The grace is long here: the
    reconnect is the test's own step, not a race with the host's speed.)"""
    engine.set_hold(True)
    text = "Bonjour, je reviens tout de suite."

    async def scenario(url: str) -> str:
        async with Tab(url) as first:
            await first.send(text)
            await engine.until(lambda d: d.count("running") >= 1, "the message to be generating")
        again = Tab(url)
        again.session = first.session  # the same page: Chainlit restores its session
        async with again:
            engine.release_all()
            return await again.wait(text)

    with double_app(engine, tmp_path, HYMT_CHECKS="0", HYMT_RECONNECT_GRACE="600") as url:
        said = asyncio.run(scenario(url))
    assert said == text
    assert engine.count("finished") == 1 and engine.count("aborted") == 0, engine.requests


def test_uploads_are_checked_through_the_app(engine: EngineDouble, tmp_path: Path):
    """Chainlit's upload takes any file under its own ceiling (20 MB); the app reads each one
    sent in a message and refuses, in its own words, a kind it does not read, a file over its
    2 MB limit and a binary file named .txt (Chainlit's toast would list MIME types)."""
    async def scenario(url: str) -> dict[str, object]:
        out: dict[str, object] = {}
        async with Tab(url) as tab:
            def upload(name: str, data: bytes, mime: str) -> str:
                sent = httpx.post(f"{url}/project/file", params={"session_id": tab.session},
                                  files={"file": (name, data, mime)}, timeout=30)
                assert sent.status_code == 200, sent.text  # the app decides on its content
                return str(sent.json()["id"])

            async def send(file_id: str) -> None:
                await tab.client.emit("client_message", {"message": {
                    "id": str(uuid.uuid4()), "threadId": "", "name": "User",
                    "type": "user_message", "output": "", "createdAt": "2026-01-01T00:00:00Z"},
                    "fileReferences": [{"id": file_id}]})

            await send(upload("photo.gif", b"GIF89a" + b"\0" * 64, "image/gif"))
            out["gif"] = await tab.wait("it is not a kind of file I read")
            await send(upload("huge.txt", b"word " * (600 * 1024), "text/plain"))  # 3 MB
            out["big"] = await tab.wait("the limit is 2 MB per file")
            await send(upload("notes.txt", b"hello\x00\x01\x02 world", "text/plain"))
            out["binary"] = await tab.wait("not UTF-8 text", "not a text file", "binary")
        return out

    with double_app(engine, tmp_path) as url:
        out = asyncio.run(scenario(url))
    assert out["gif"] and out["big"] and out["binary"]
    assert engine.requests == []  # nothing of a refused file reached the model


def test_agents_history_is_kept_in_postgresql(engine: EngineDouble, tmp_path: Path,
                                             postgres_url: str):
    """The history in PostgreSQL, and the API keys beside it (the app made their tables).
    The double answers in English (a phrasebook), so the app's answer checks pass as on a
    good model."""
    engine.answer = phrasebook({"Hola, mi pedido": {"en": "Hello, my order"},
                                "llegó roto": {"en": "arrived broken"}})
    entry = f"alice:{hash_password(PASSWORD, n=2**10)}"
    database = fresh_database(postgres_url)

    async def scenario(url: str, cookie: str) -> dict:
        async with Tab(url, headers={"Cookie": cookie}, profile="Support agent") as tab, \
                httpx.AsyncClient(headers={"Cookie": cookie}, timeout=30) as http:
            await tab.wait("English ⇄ Customer")
            await tab.send("Hola, mi pedido JD123456789 llegó roto.")
            await tab.wait("arrived broken")
            deadline = time.monotonic() + 60  # Chainlit writes the steps after the answer
            while True:
                threads = (await http.post(f"{url}/project/threads", json={
                    "pagination": {"first": 20}, "filter": {}})).json()
                if threads["data"] or time.monotonic() > deadline:
                    return threads
                await asyncio.sleep(0.5)

    with double_app(engine, tmp_path, HYMT_AGENTS=entry, CHAINLIT_AUTH_SECRET="s" * 64,
                    HYMT_DATABASE_URL=database) as url:
        login = httpx.post(f"{url}/login", data={"username": "alice", "password": PASSWORD},
                           timeout=30)
        cookie = "; ".join(f"{c.name}={c.value}" for c in login.cookies.jar)
        threads = asyncio.run(scenario(url, cookie))
    assert threads["data"], threads  # the conversation is in PostgreSQL, listed for alice
    assert threads["data"][0]["userIdentifier"] == "alice"
    assert KeyStore(database).list() == [] and not (tmp_path / "cache" / "api-keys.db").exists()
    with psycopg.connect(libpq(database)) as db:
        tables = {r[0] for r in db.execute("SELECT tablename FROM pg_tables WHERE "
                                           "tablename LIKE 'api_%'")}
    assert tables == {"api_keys", "api_usage", "api_glossaries"}


def test_health_is_200_when_the_model_answers(engine: EngineDouble, tmp_path: Path):
    """/health says ready, and its window learns from the engine's own /metrics (the double's
    gauges, vLLM's names: the contract test pins them)."""
    with double_app(engine, tmp_path) as url:
        response = httpx.get(f"{url}/health", timeout=10)
        assert response.status_code == 200
        body = response.json()
        assert (body["status"], body["vllm"]) == ("ok", "ready")
        # By URL only, the window starts safe; the first /health started the watch, and the
        # next ones show the engine's own /metrics read (test_e2e_window.py: learning).
        deadline = time.monotonic() + 60
        while (window := httpx.get(f"{url}/health", timeout=10).json()["window"])["origin"] \
                != "engine metrics" and time.monotonic() < deadline:
            time.sleep(0.2)
    assert window["origin"] == "engine metrics", window
    assert window["engine"]["waiting"] == 0 and window["engine"]["running"] == 0, window
    assert window["max"] == 2 and window["reserve"] == 1, window


def test_a_one_liner_is_answered_while_the_tabs_own_document_translates(
        engine: EngineDouble, tmp_path: Path):
    """One tab pastes a 12-paragraph French text (a long paste: a background job), then, while
    the double holds the text's parts, a one-liner. The one-liner is answered while the text is
    still under way, and the text comes back whole and in order once its parts are released.
    An order of events, not a time."""
    sentences = [s.strip(" .?") for s in PARAGRAPH.split(". ") if s.strip(" .?")]
    letter = "\n\n".join(f"Point {i + 1} : {sentences[i % len(sentences)]}."
                           for i in range(12))
    engine.set_hold(lambda req: echo_source(req.prompt).startswith("Point "))

    async def scenario(url: str) -> tuple[list[str], str]:
        async with Tab(url) as tab:
            await tab.send("/to en")
            await tab.wait("→ English")
            await tab.send(letter)
            await engine.until(lambda d: d.count("running") >= 1, "the text's parts to run")
            await tab.send("Hallo, wann wird mein Paket geliefert?")
            await tab.wait("German → English")
            document_done_first = tab.said("French → English")
            held = [r.state for r in engine.requests if r.prompt.count("Point ")]
            assert "running" in held, held  # the text really was under way meanwhile
            engine.set_hold(False)
            await tab.wait("French → English")
            return document_done_first, tab.said("French → English")[-1]

    with double_app(engine, tmp_path, HYMT_CHECKS="0") as url:
        done_first, answer = asyncio.run(scenario(url))
    assert done_first == [], "the one-liner waited for the tab's own document"
    assert "not translated" not in answer, answer
    at = [answer.find(f"Point {i + 1} :") for i in range(12)]
    assert -1 not in at and at == sorted(at), answer  # whole, in order
