"""The small things a user meets, each driven without a browser:

- a thread is named after its first real words (not "/room close", not "Untitled
  Conversation"): the sessions' titles and the data layer that writes them;
- Cancel keeps the parts already translated, with Retry the rest;
- a long text has an estimate as soon as one can be made, and says better than "0 of 13";
- the Translator's first load says which languages it translates between.

The transcript's own tests are in ``tests/test_transcript.py`` and
``tests/test_markdown_text.py``. The model is the instant stand-in of
``tests/support/stub_model.py`` (answers echo the source), held where a test needs it
(``tests/support/gate.py``)."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from typing import Any

import pytest
from chainlit.data.sql_alchemy import SQLAlchemyDataLayer

from hymt_chat.engine.pacing import eta_seconds, expected_seconds
from hymt_chat.modes import progress as progress_module
from hymt_chat.modes.agent.session import AgentSession
from hymt_chat.modes.page_text import PageText
from hymt_chat.modes.progress import Progress
from hymt_chat.modes.session import BUTTONS, Upload
from hymt_chat.modes.translator_session import TranslatorSession
from hymt_chat.service.history import adapt_sqlite, ensure_schema, thread_name, unnamed_after
from hymt_chat.words.source import CHAT as ENGLISH
from tests.support.gate import Gate
from tests.support.sessions import Line, RecordingScreen, services
from tests.support.stub_model import StubModel

DOCUMENT = "\n\n".join(f"Paragraphe {i} de la lettre envoyée au client hier." for i in range(8))


@pytest.fixture
def stub():
    with StubModel() as model:
        yield model


def _translator(svc: Any) -> tuple[TranslatorSession, RecordingScreen]:
    screen = RecordingScreen()
    return TranslatorSession(svc, screen, session_id="s1", user_key="addr:1"), screen


async def _until(condition: Any, what: str) -> None:
    for _ in range(3000):  # a safety net, not a speed bound: the condition comes in ms
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


async def _remove() -> None:
    pass


# --- 1. the thread's name -----------------------------------------------------------------

def test_a_thread_is_never_named_after_a_command_a_file_alone_or_a_whole_paste():
    assert thread_name("/room close") is None  # the history listed "/room close"
    assert thread_name("  /to ja") is None
    assert thread_name("") is None and thread_name(" \n ") is None  # a file sent alone
    assert thread_name("desk_take", BUTTONS) is None  # a button came first
    assert thread_name("Hola,\n  ¿qué tal?") == "Hola, ¿qué tal?"
    long = thread_name("Disculpe, ¿dónde está la estación de tren más cercana? " * 20)
    assert long == "Disculpe, ¿dónde está la estación de tren más…" and len(long) <= 50
    chinese = thread_name("你好！明天的会议改到下午三点，请准时参加。" * 5)
    assert chinese is not None and len(chinese) == 50 and chinese.endswith("…")


async def test_the_data_layer_keeps_a_command_out_of_the_threads_name(tmp_path):
    """Chainlit names a thread after its first interaction: its text, or a button's name.
    The app's layer leaves a command out (the thread stays unnamed until the app names it
    from its conversation) and writes a long first message as one short line."""
    url = f"sqlite+aiosqlite:///{tmp_path}/h.db"
    await ensure_schema(url)
    layer = unnamed_after(SQLAlchemyDataLayer, BUTTONS)(conninfo=url)
    adapt_sqlite(layer.engine)

    def name(thread_id: str) -> str | None:
        with sqlite3.connect(tmp_path / "h.db") as db:
            return db.execute("SELECT name FROM threads WHERE id = ?", (thread_id,)
                              ).fetchone()[0]

    try:
        command, paste = str(uuid.uuid4()), str(uuid.uuid4())
        await layer.update_thread(thread_id=command, name="/room close", tags=["Support agent"])
        assert name(command) is None  # listed by the page as untitled, not as the command
        await layer.update_thread(command, name="Customer in Spanish: Hola")  # the app's
        assert name(command) == "Customer in Spanish: Hola"
        await layer.update_thread(thread_id=command, name="/desk")  # never renamed by one
        assert name(command) == "Customer in Spanish: Hola"
        await layer.update_thread(thread_id=paste, name="Bonjour à tous.\n" * 300)
        assert name(paste) == "Bonjour à tous. Bonjour à tous. Bonjour à tous…"
    finally:
        await layer.close()


async def test_the_translators_thread_is_named_after_its_first_real_message(stub, tmp_path):
    session, _ = _translator(services(stub, tmp_path))
    await session.message("/to Japanese", None)
    assert session.title() is None  # a command names nothing
    await session.message("  Bonjour à tous,\nmerci de votre patience.  ", None)
    assert session.title() == "Bonjour à tous, merci de votre patience."
    await session.message("Une autre phrase, bien plus tard.", None)
    assert session.title() == "Bonjour à tous, merci de votre patience."  # the first stays


async def test_a_file_sent_alone_names_the_thread_after_the_file(stub, tmp_path):
    session, _ = _translator(services(stub, tmp_path))
    path = tmp_path / "lettre.txt"
    path.write_text("Bonjour à tous, merci de votre patience.", encoding="utf-8")
    await session.message("", None, uploads=[Upload(str(path), "lettre.txt")])
    await session.settled()
    assert session.title() == "lettre.txt"  # not "Untitled Conversation"


async def test_the_agents_thread_is_named_after_the_customers_first_words(stub, tmp_path):
    screen = RecordingScreen()
    session = AgentSession(services(stub, tmp_path), screen, session_id="a1",
                           user_key="addr:2")
    await session.message("/customer Spanish", None)
    assert session.title() is None
    await session.message("Hola, mi pedido número 4411 no ha llegado todavía a mi casa", None)
    title = session.title()
    assert title == "Customer in Spanish: Hola, mi pedido número 4411…"
    assert len(title) <= 50
    french = AgentSession(services(stub, tmp_path), RecordingScreen(), session_id="a2",
                          user_key="addr:3", page=PageText.of("fr"))
    await french.message("/customer Spanish", None)
    await french.message("Hola, mi pedido no ha llegado", None)
    assert french.title() == "Client en espagnol : Hola, mi pedido no ha llegado"


# --- 3. Cancel keeps the parts done -------------------------------------------------------

async def test_cancel_keeps_the_parts_already_translated_with_retry_the_rest(
        tmp_path, monkeypatch):
    monkeypatch.setattr(progress_module, "_EVERY", -1.0)  # every count drawn: the test waits
    gate = Gate(held="Paragraphe 7")  # the last part is held; the other seven come back
    try:
        with StubModel(answer=gate) as stub:
            session, screen = _translator(services(stub, tmp_path, segment_chars=80))
            await session.message(DOCUMENT, None)  # 8 parts: a job of its own, with Cancel
            await _until(lambda: screen.lines, "the job's line")
            line = screen.lines[-1]
            await _until(lambda: any("7 of 8 parts" in n for n in line.names),
                         "seven parts back")
            # the held part's request must have reached the model before Cancel, so that it is
            # counted here and not after the retry below
            await _until(lambda: gate.waiting == 1, "the last part held by the model")
            cancel = line.cancel
            assert cancel is not None
            await session.button(cancel.name, cancel.payload, cancel.label, _remove)
            await session.settled()
            kept = screen.last()
            assert line.became is kept  # the line became what was translated, not "cancelled"
            assert line.closed is None
            assert "Paragraphe 6" in kept.markdown and "Paragraphe 0" in kept.markdown
            assert "Paragraphe 7" not in kept.markdown  # the rest, not translated, left out
            assert "Cancelled after 7 of 8 parts: the rest was not translated." in (
                kept.markdown.replace("\\", ""))
            [retry] = kept.buttons
            assert retry.name == "retry_rest" and retry.label == ENGLISH["retry_rest"]

            gate.open()
            asked = len(stub.prompts)
            await session.button(retry.name, retry.payload, retry.label, _remove)
            await session.settled()
            assert len(stub.prompts) == asked + 1  # only the part that was not translated
            assert "Paragraphe 7" in screen.last().markdown
            assert "not translated" not in screen.last().markdown
    finally:
        gate.open()


async def test_cancel_before_any_part_is_back_says_cancelled_as_before(tmp_path):
    gate = Gate(held="Paragraphe")
    try:
        with StubModel(answer=gate) as stub:
            session, screen = _translator(services(stub, tmp_path, segment_chars=80))
            await session.message(DOCUMENT, None)
            await _until(lambda: gate.waiting >= 1, "the parts reach the model")
            line = screen.lines[-1]
            assert line.cancel is not None
            await session.button(line.cancel.name, line.cancel.payload, "Cancel", _remove)
            await session.settled()
            assert line.closed is not None and ENGLISH["cancelled"] in line.closed[0]
            assert not screen.shown  # nothing was translated: nothing to show
    finally:
        gate.open()


async def test_a_cancelled_file_keeps_its_parts_in_a_partial_file(tmp_path, monkeypatch):
    monkeypatch.setattr(progress_module, "_EVERY", -1.0)
    gate = Gate(held="Paragraphe 7")
    try:
        with StubModel(answer=gate) as stub:
            session, screen = _translator(services(stub, tmp_path, segment_chars=80))
            path = tmp_path / "lettre.txt"
            path.write_text(DOCUMENT, encoding="utf-8")
            await session.message("", None, uploads=[Upload(str(path), "lettre.txt")])
            await _until(lambda: screen.lines, "the job's line")
            line = screen.lines[-1]
            await _until(lambda: any("7 of 8 parts" in n for n in line.names),
                         "seven parts back")
            assert line.cancel is not None
            await session.button(line.cancel.name, line.cancel.payload, "Cancel", _remove)
            await session.settled()
            kept = screen.last()
            [out] = kept.files
            assert out.name == "lettre.en.partial.txt"
            text = out.content.decode()
            assert "Paragraphe 6" in text and "[not translated] Paragraphe 7" in text
            assert "Cancelled after 7 of 8 parts" in kept.markdown
            assert [b.name for b in kept.buttons] == ["retry_rest"]
    finally:
        gate.open()


# --- 4. an estimate as soon as one can be made ----------------------------------------------

def test_the_first_part_back_gives_an_estimate_counted_in_rounds_of_parts_sent_at_once():
    # 13 parts, 4 at a time, the first back after 15 s: the three sent with it are nearly
    # done too; about 3 more rounds of 15 s, not 12 x 15 s.
    assert eta_seconds(1, 13, 15.0, parallel=4) == pytest.approx(45.0)
    assert eta_seconds(4, 13, 15.0, parallel=4) == pytest.approx(33.75)
    assert eta_seconds(1, 13, 15.0) == pytest.approx(180.0)  # one at a time: as before
    assert eta_seconds(0, 13, 15.0, parallel=4) is None
    # before any part: the text's tokens at the measured rate, 4 requests at once
    assert expected_seconds(1200, 13, 20.0, parallel=4) == pytest.approx(15.0)


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_the_line_says_the_parts_are_on_their_way_with_an_estimate_from_the_pace():
    line, clock = Line(), _Clock()
    progress = Progress(line, "Translating", always=True, clock=clock, expected=50.0,
                        parallel=lambda: 4)
    await progress.start()
    await progress.progress(0, 13)
    assert line.names[-1] == "Translating · 13 parts · on their way · about 50 s left"
    clock.now += 15
    await progress.progress(1, 13)  # the first part: the pace of the parts back takes over
    assert line.names[-1] == "Translating · 1 of 13 parts · about 45 s left"


async def test_without_a_measured_pace_the_line_says_only_that_the_parts_are_on_their_way():
    line, clock = Line(), _Clock()
    progress = Progress(line, "Translating", always=True, clock=clock,
                        page=PageText.of("fr"))
    await progress.start()
    await progress.progress(0, 13)
    assert line.names[-1] == "Translating · 13 parties · en cours"
    clock.now += 60
    fading = Progress(Line(), "T", clock=clock, expected=10.0)
    fading.total = 13
    clock.now += 30  # the guess ran out with no part back: no "about 1 s left" for ever
    assert fading.name() == "T · 13 parts · on their way"


async def test_a_long_text_has_an_estimate_before_its_first_part_once_the_pace_is_known(
        tmp_path, monkeypatch):
    monkeypatch.setattr(progress_module, "_EVERY", -1.0)
    gate = Gate(held="Paragraphe")
    try:
        with StubModel(answer=gate) as stub:
            svc = services(stub, tmp_path, segment_chars=80)
            svc.translator.client.decode_rate.observe(100, 10.0)  # an answer measured: 10 t/s
            session, screen = _translator(svc)
            await session.message(DOCUMENT, None)
            await _until(lambda: gate.waiting >= 1, "the parts reach the model")
            first = screen.lines[-1].names
            assert first[0] == "Translating"  # the job's line, from its start
            assert first[1].startswith("Translating · 8 parts · on their way · about ")
    finally:
        gate.open()


# --- 5. the first load says which languages --------------------------------------------------

async def test_the_first_load_says_which_language_answers_come_in(stub, tmp_path):
    session, screen = _translator(services(stub, tmp_path))
    await session.start()
    assert screen.placeholder == "Auto-detect → English: type or paste text, or attach a file…"
    await session.message("/to Japanese", None)
    assert screen.placeholder == "Auto-detect → Japanese: type or paste text, or attach a file…"
    await session.settings_changed({"source": "fr", "target": "ja"})
    assert screen.placeholder.startswith("French → Japanese: ")
    japanese, on_ja = _translator(services(stub, tmp_path))
    japanese.page = PageText.of("ja")
    await japanese.start()
    assert on_ja.placeholder == "自動検出 → 英語：テキストを入力または貼り付け、またはファイルを添付…"


# --- 1, against the real app: the history's list -------------------------------------------

async def test_the_history_lists_threads_by_their_first_real_words(tmp_path):
    """Chainlit names a thread after its first interaction: "/room close", or nothing for a
    file alone ("Untitled Conversation"). The page's list (``POST /project/threads``) shows
    the first real words instead, the agent's with the customer's language."""
    import httpx

    from hymt_chat.service.auth import hash_password
    from tests.support.tabs import Tab, app

    password = "correct horse battery"
    agents = f"alice:{hash_password(password, n=2**10)}"
    with app(tmp_path, HYMT_AGENTS=agents, CHAINLIT_AUTH_SECRET="s" * 64) as (url, _):
        login = httpx.post(f"{url}/login", data={"username": "alice", "password": password},
                           timeout=30)
        assert login.status_code == 200, login.text
        cookie = "; ".join(f"{c.name}={c.value}" for c in login.cookies.jar)
        async with Tab(url, {"Cookie": cookie}, profile="Support agent") as agent:
            await agent.send("/room close")  # the history listed this
            await agent.wait("No room is open")
            await agent.send("/customer Spanish")
            await agent.wait("Customer language set")
            await agent.send("Hola, mi pedido número 4411 no ha llegado todavía a mi casa")
            await agent.wait("EN:Hola")
        async with Tab(url, {"Cookie": cookie}, profile="Translator") as tab:
            await tab.send("/to Japanese")
            await tab.wait("Japanese")
            await tab.send("Bonjour à tous,\nmerci de votre patience.")
            await tab.wait("Bonjour à tous")

            def listed() -> list[str] | None:
                threads = httpx.post(f"{url}/project/threads", timeout=30,
                                     headers={"Cookie": cookie},
                                     json={"pagination": {"first": 10}, "filter": {}})
                assert threads.status_code == 200, threads.text
                names = [t.get("name") for t in threads.json()["data"]]
                return names if len(names) == 2 and all(names) else None

            names = await tab._first(listed, 60, "both threads named")
            assert sorted(names) == ["Bonjour à tous, merci de votre patience.",
                                     "Customer in Spanish: Hola, mi pedido número 4411…"]
