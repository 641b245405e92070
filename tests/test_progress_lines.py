"""The progress line in the app's own words, from its first news to its end: a message of its
own (not a Chainlit step, which the page draws under its "Using …"/"Used" label), which becomes
the answer once the work is done; a background job's line drawn again under each newer message
until the job ends; Stop said in the app's words, with Retry.

Against the real app (``tests/support/tabs.py``) over a stand-in model whose answers to
"Paragraphe …" are held back (``tests/support/gate.py``) until the test opens the gate. The
page's Stop emits ``stop`` on its socket (Chainlit's frontend: ``stopTask``); its buttons are
posted to ``POST /project/action`` (Chainlit's own route, ``chainlit/server.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from hymt_chat.modes import wording
from tests.support.gate import Gate
from tests.support.tabs import Tab, app, marked

THREE = "\n\n".join(f"Paragraphe {i} de la lettre du client, assez long." for i in range(3))


@pytest.fixture(scope="module")
def held(tmp_path_factory) -> Iterator[tuple[str, Gate]]:
    """The app on a gated stand-in; three paragraphs are three parts, and a text of more than
    two parts is a long paste (a background job with its Cancel)."""
    gate = Gate(answer=marked)
    try:
        with app(tmp_path_factory.mktemp("lines"), answer=gate, HYMT_SEGMENT_CHARS="60",
                 HYMT_BULK_SEGMENTS="2") as (url, _):
            yield url, gate
    finally:
        gate.open()


@pytest.fixture
def gate(held) -> Iterator[Gate]:
    _, gate = held
    gate.close()
    try:
        yield gate
    finally:
        gate.open()


def _messages(tab: Tab) -> dict[str, list[str]]:
    """Every message's outputs in order, by id (what the page drew of it, update by update)."""
    seen: dict[str, list[str]] = {}
    for event, data in tab.events:
        if event in ("new_message", "update_message") and isinstance(data, dict):
            seen.setdefault(data["id"], []).append(data.get("output") or "")
    return seen


def _line_of(tab: Tab, text: str) -> str | None:
    """The id of the first message that said *text*."""
    return next((mid for mid, outputs in _messages(tab).items()
                 if any(text in o for o in outputs)), None)


def _order(tab: Tab) -> list[str]:
    """The ids of the messages on the page, in the page's order (new_message appends,
    delete_message takes away)."""
    ids: list[str] = []
    for event, data in tab.events:
        if event == "new_message" and isinstance(data, dict):
            ids.append(data["id"])
        elif event == "delete_message" and isinstance(data, dict) and data["id"] in ids:
            ids.remove(data["id"])
    return ids


async def _press(url: str, tab: Tab, action: dict) -> None:
    async with httpx.AsyncClient(timeout=30) as client:
        clicked = await client.post(f"{url}/project/action",
                                    json={"sessionId": tab.session, "action": action})
    assert clicked.status_code == 200, clicked.text


async def test_the_line_is_a_message_in_the_apps_words_that_becomes_the_answer(held, gate):
    url, _ = held
    async with Tab(url) as tab:
        await tab.send("Paragraphe 0 de la lettre du client, assez long.\n\nParagraphe 1 de "
                       "la lettre du client, assez long.")  # two parts: in the chat's turn
        line = await tab._first(lambda: _line_of(tab, "2 parts · on their way"), 60, "the line")
        assert _messages(tab)[line][0] == "Translating · 2 parts · on their way"
        gate.open()
        await tab.wait("EN:Paragraphe 1")
        outputs = _messages(tab)[line]
        assert "EN:Paragraphe 0" in outputs[-1] and "2 parts" in outputs[-1]  # the answer
        assert not any(d.get("type") == "tool" for e, d in tab.events  # no Chainlit step
                       if e in ("new_message", "update_message") and isinstance(d, dict))
        assert {mid for mid, said in _messages(tab).items()  # no second message of it
                if any("EN:Paragraphe 1" in o for o in said)} == {line}


async def test_a_jobs_line_stays_under_the_newest_message_until_it_ends(held, gate):
    url, _ = held
    async with Tab(url) as tab:
        await tab.send(THREE)  # a long paste: in the background, the tab free
        await tab.action("cancel_job")
        first = _line_of(tab, "3 parts")  # "3 parts · on their way": none back yet
        await tab.send("Bonjour, une question courte.")  # answered at once (not held)
        await tab.wait("EN:Bonjour")
        answer = _line_of(tab, "EN:Bonjour")

        def lowered() -> str | None:
            order = _order(tab)
            last = order[-1] if order else None
            return last if last not in (first, answer) and first not in order else None

        moved = await tab._first(lowered, 60, "the job's line under the answer")
        assert "3 parts" in _messages(tab)[moved][-1]
        assert any(a.get("forId") == moved for a in tab.actions("cancel_job"))  # its Cancel too
        gate.open()
        await tab.wait("EN:Paragraphe 2")
        assert "EN:Paragraphe 2" in _messages(tab)[moved][-1]  # the line became the answer
        assert _order(tab)[-1] == moved


async def test_stop_says_so_in_the_apps_words_and_retry_translates_the_text(held, gate):
    url, _ = held
    async with Tab(url) as tab:
        held_before = gate.waiting
        await tab.send("Paragraphe seul, arrêté en route.")
        await tab._first(lambda: gate.waiting > held_before or None, 60, "the model to hold it")
        await tab.client.emit("stop")  # the composer's Stop
        await tab.wait(wording.escape_markdown(wording.STOPPED))
        retry = await tab.action("retry")
        assert not tab.said("Task manually stopped")
        gate.open()
        await _press(url, tab, retry)
        await tab.wait("EN:Paragraphe seul")
