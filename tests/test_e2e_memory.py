"""The translation memory on real parts: two real app processes (``chainlit run app.py``)
sharing one real PostgreSQL, and a real browser, with the engine double
(tests/support/engine_double.py) as their model server, answering from a phrasebook.

* A repeated message is answered without a model call — counted in the requests the double
  received — on the Translator page, the kiosk, its counter, in the Support agent mode, in a
  room and through both APIs, each repeat on the other replica than the first time.
* An agent's correction, made in the browser, is used for the same message in the next
  conversation (no model call, "corrected by an agent"); the deployment's TMX export of it is
  imported by another deployment, whose translator then answers with it.

The async socket tests come first, the browser test last (Playwright's sync API keeps its own
event loop while the module's browser is open).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

import aiohttp
import httpx
import pytest
from playwright.sync_api import Browser, expect

from hymt_chat.engine.recall import Memory
from hymt_chat.engine.translator import Translator
from hymt_chat.service.auth import hash_password
from hymt_chat.store.memory import CORRECTED
from tests.conftest import ROOT
from tests.support.browser import ANSWER, new_page, send
from tests.support.chainlit_app import app_env, running_app
from tests.support.engine_double import EngineDouble, running_double
from tests.support.phrasebook import phrasebook
from tests.support.ports import free_port
from tests.support.postgres import fresh_database
from tests.support.tabs import Tab

AGENT, KIOSK = "Support agent", "Kiosk"
# Answers that pass every check (an answer with findings is not kept).
PAGE_TEXT = "Bonjour, ma commande numéro 4711 est arrivée en retard."
AGENT_TEXT = "Hola, mi pedido número 5522 no ha llegado todavía."
API_TEXT = "Bonjour, la facture numéro 6633 est payée."
ANSWERS = phrasebook({
    PAGE_TEXT: {"en": "Hello, my order number 4711 arrived late."},
    AGENT_TEXT: {"en": "Hello, my order number 5522 has not arrived yet."},
    # The agent mode's check translates a customer's message back into their language.
    "Hello, my order number 5522 has not arrived yet.": {
        "es": "Hola, mi pedido número 5522 todavía no ha llegado."},
    API_TEXT: {"en": "Hello, invoice number 6633 is paid."},
})
PASSWORD = "memory-test-password"


@pytest.fixture(scope="module")
def double() -> Iterator[EngineDouble]:
    """One model server for the module's apps, as a deployment has one."""
    with running_double(answer=ANSWERS) as engine:
        yield engine


@pytest.fixture(scope="module")
def replicas(double: EngineDouble, postgres_url: str, tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[list[str]]:
    """Two app processes of one deployment: one PostgreSQL (the memory, the API keys)."""
    tmp = tmp_path_factory.mktemp("memory")
    database = fresh_database(postgres_url)
    with ExitStack() as stack:
        urls = [stack.enter_context(running_app(
            app_env(double.env(), HYMT_CACHE_DIR=str(tmp / f"cache{n}"),
                    HYMT_DATABASE_URL=database, HYMT_API_OPEN_LOCAL="1", HYMT_RATE_LIMIT="",
                    HYMT_WINDOW_MAX="2", HYMT_AGENTS=""),
            free_port(), tmp / f"app{n}.log", timeout=180)) for n in (1, 2)]
        yield urls


class Calls:
    """The requests the engine received, counted around each step."""

    def __init__(self, double: EngineDouble) -> None:
        self.double = double
        self.mark = len(double.requests)

    def since(self) -> int:
        now = len(self.double.requests)
        made, self.mark = now - self.mark, now
        return made


async def _answer(tab: Tab, marker: str) -> str:
    said = await tab.wait(marker, "press Retry", timeout=120)
    assert said == marker, tab.said("press Retry")
    return tab.said(marker)[-1]


async def _room_token(tab: Tab) -> str:
    await tab.send("/room")
    await tab.wait("Room open")
    link = re.search(r"\]\([^)]*/room/([A-Za-z0-9_-]+)\)", tab.said("Room open")[0])
    assert link
    return link.group(1)


async def test_a_repeat_is_answered_without_a_model_call_in_every_mode_and_api(
        double: EngineDouble, replicas: list[str]) -> None:
    one, two = replicas
    calls = Calls(double)

    # The Translator page: the first time on replica 1 asks the model, the repeat on 2 does not.
    async with Tab(one) as tab:
        await tab.send(PAGE_TEXT)
        first = await _answer(tab, "4711")
    assert calls.since() >= 1 and "⚠" not in first, first  # kept only without findings
    async with Tab(two) as tab:
        await tab.send(PAGE_TEXT)
        again = await _answer(tab, "from memory")
    assert calls.since() == 0 and "4711" in again

    # The kiosk (reads the memory, writes nothing a visitor typed), on replica 1.
    async with Tab(one, profile=KIOSK) as tab:
        await tab.wait("Welcome")
        await tab.send(PAGE_TEXT)
        await tab.wait("Tap the language")
        english = await tab.action("kiosk_target", lambda a: a["payload"]["target"] == "en")
        httpx.post(f"{one}/project/action", timeout=30,
                   json={"sessionId": tab.session, "action": english}).raise_for_status()
        kiosk = await _answer(tab, "from memory")
    assert calls.since() == 0 and "4711" in kiosk

    # The kiosk's counter, on replica 2: side a writes French, side b reads English.
    async with aiohttp.ClientSession() as http, \
            http.ws_connect(two.replace("http://", "ws://") + "/counter/ws") as ws:
        await ws.send_json({"a": "fr", "b": "en"})
        await ws.send_json({"type": "say", "side": "a", "text": PAGE_TEXT})
        got = await asyncio.wait_for(ws.receive(), 120)
        assert got.type == aiohttp.WSMsgType.TEXT, (got, ws.close_code)
        event = json.loads(got.data)
    assert calls.since() == 0 and "4711" in (event.get("translation") or ""), event

    # The Support agent mode: a customer's message on replica 2, then again on replica 1.
    async with Tab(two, profile=AGENT) as tab:
        await tab.wait("English ⇄ Customer")
        await tab.send(AGENT_TEXT)
        first = await _answer(tab, "Customer · Spanish → English")
    assert calls.since() >= 1 and "⚠" not in first, first
    async with Tab(one, profile=AGENT) as tab:
        await tab.wait("English ⇄ Customer")
        await tab.send(AGENT_TEXT)
        again = await _answer(tab, "from memory")
        assert calls.since() == 0 and "5522" in again

        # A room of that agent (replica 1): the guest writes the same on their own phone.
        token = await _room_token(tab)
        async with aiohttp.ClientSession() as http, http.ws_connect(
                one.replace("http://", "ws://") + f"/room/{token}/ws") as ws:
            await ws.send_json({"type": "hello", "guest": "c" * 32, "language": "es"})
            await ws.send_json({"type": "say", "text": AGENT_TEXT})
            while True:
                got = await asyncio.wait_for(ws.receive(), 120)
                assert got.type == aiohttp.WSMsgType.TEXT, (got, ws.close_code)
                event = json.loads(got.data)
                if event["type"] == "message":
                    break
    assert calls.since() == 0 and "5522" in (event["message"]["translation"] or ""), event

    # The APIs: LibreTranslate on replica 1 asks the model; DeepL on replica 2 and
    # LibreTranslate again on 1 do not, and say so.
    libre = {"q": API_TEXT, "source": "fr", "target": "en"}
    first_api = httpx.post(f"{one}/libretranslate/translate", json=libre, timeout=120)
    assert first_api.status_code == 200 and first_api.headers["X-Hymt-Memory"] == "miss"
    assert calls.since() >= 1
    deepl = httpx.post(f"{two}/deepl/v2/translate", timeout=120,
                       json={"text": [API_TEXT], "source_lang": "FR", "target_lang": "EN-US"})
    assert deepl.status_code == 200 and deepl.headers["X-Hymt-Memory"] == "hit", deepl.text
    assert deepl.json()["translations"][0]["text"] == first_api.json()["translatedText"]
    libre_again = httpx.post(f"{one}/libretranslate/translate", json=libre, timeout=120)
    assert libre_again.headers["X-Hymt-Memory"] == "hit"
    assert calls.since() == 0
    metrics = httpx.get(f"{two}/metrics", timeout=30).text
    assert re.search(r'^hymt_memory_total\{outcome="hit"\} [1-9]', metrics, re.MULTILINE)


# --- the browser: an agent's correction, the next conversation, TMX --------------------------

@pytest.fixture(scope="module")
def agents_app(double: EngineDouble, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str,
                                                                                       Path]]:
    """A deployment whose agents sign in (corrections are theirs), its memory in SQLite."""
    tmp = tmp_path_factory.mktemp("agents")
    cache = tmp / "cache"
    env = app_env(double.env(), HYMT_CACHE_DIR=str(cache), HYMT_WINDOW_MAX="2",
                  HYMT_AGENTS=f"alice:{hash_password(PASSWORD, n=2**10)}",
                  CHAINLIT_AUTH_SECRET="s" * 64, HYMT_RATE_LIMIT="")
    with running_app(env, free_port(), tmp / "app.log", timeout=180) as url:
        yield url, cache


def _signed_in_agent(browser: Browser, url: str):
    page = new_page(browser, viewport={"width": 1100, "height": 900})
    page.goto(url)
    page.fill("#email", "alice")
    page.fill("#password", PASSWORD)
    page.get_by_role("button", name="Sign In").click()
    page.wait_for_selector("#chat-profiles", timeout=60_000)
    page.click("#chat-profiles")
    page.click(f"[data-test='select-item:{AGENT}']")
    expect(page.get_by_text("Agent: English ⇄ Customer: not known").first).to_be_visible(
        timeout=30_000)
    return page


def _cli(cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HYMT_")}
    env["HYMT_CACHE_DIR"] = str(cache)
    return subprocess.run([sys.executable, "-m", "hymt_chat.cli.main", "memory", *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


async def _translate_in(cache: Path, double: EngineDouble, text: str
                        ) -> tuple[str, tuple[str, ...]]:
    settings = double.settings(cache_dir=cache)
    translator = Translator(settings, memory=Memory.for_settings(settings))
    result = await translator.translate(text, "en", "es")
    return result.text, result.remembered


@pytest.mark.slow  # Chromium
def test_an_agents_correction_is_used_next_conversation_and_travels_as_tmx(
        browser: Browser, double: EngineDouble, agents_app: tuple[str, Path],
        tmp_path: Path) -> None:
    url, cache = agents_app
    calls = Calls(double)
    page = _signed_in_agent(browser, url)
    send(page, AGENT_TEXT)
    expect(page.get_by_text("Customer · Spanish → English").first).to_be_visible(
        timeout=120_000)
    page.get_by_role("button", name="Correct this translation").first.click()
    expect(page.get_by_text("Type the corrected English translation").first).to_be_visible(
        timeout=30_000)
    correction = "Hello, my order 5522 has still not arrived."
    send(page, correction)
    expect(page.get_by_text("Saved: from now on").first).to_be_visible(timeout=30_000)
    page.close()
    calls.since()

    later = _signed_in_agent(browser, url)  # the next conversation
    send(later, AGENT_TEXT)
    expect(later.get_by_text("corrected by an agent").first).to_be_visible(timeout=120_000)
    assert later.locator(ANSWER).last.inner_text().strip() == correction
    assert calls.since() == 0  # vLLM was not asked
    later.close()

    tmx = tmp_path / "team.tmx"
    exported = _cli(cache, "export", str(tmx))
    assert exported.returncode == 0, exported.stderr
    assert correction in tmx.read_text(encoding="utf-8") and 'creationid="alice"' in tmx.read_text()
    other = tmp_path / "other-deployment"
    imported = _cli(other, "import", str(tmx))
    assert imported.returncode == 0 and "Imported 1 entry" in imported.stdout, imported
    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API holds this thread's loop
        text, remembered = pool.submit(asyncio.run,
                                       _translate_in(other, double, AGENT_TEXT)).result()
    assert (text, remembered) == (correction, (CORRECTED,))
    assert calls.since() == 0
