"""A reply whose checks warn is held: in a room and at the desk the customer's socket gets
nothing until the agent presses "Send anyway" (or "Edit", which drops it); a reply with no
finding goes at once.

Against the real app (``tests/support/tabs.py``) with the answer checks on and a stand-in model
whose Spanish adds "12:00" to one reply (the time check then says the source has no such time);
the guest is a real websocket whose events are read. The agent's buttons are pressed as the page
posts them (``POST /project/action``, Chainlit's own route: ``chainlit/server.py``). Directly
(no HTTP) the room keeps a held reply out of its history and transcript."""

from __future__ import annotations

import aiohttp
import httpx
import pytest

from hymt_chat.modes.agent.session import AgentSession
from hymt_chat.modes.room import HeldReply, RoomError
from hymt_chat.words.source import CHAT

HELD_DROPPED, HELD_GONE, HELD_SENT = CHAT["held_dropped"], CHAT["held_gone"], CHAT["held_sent"]
from hymt_chat.modes.wording import escape_markdown as md
from tests.support.sessions import RecordingScreen, services
from tests.support.stub_model import StubModel, echo_source
from tests.support.tabs import Tab, app, open_room, room_events, room_ws_url
from tests.test_desk import G1, _cookie, _hash, _start

AGENT = "Support agent"
GUEST = "e" * 32
FLAGGED = "Your order ships today."
CLEAN = "Thank you for waiting."
SPANISH = {FLAGGED: "Su pedido sale hoy antes de las 12:00.", CLEAN: "Gracias por esperar."}
ENGLISH = {"Su pedido sale hoy antes de las 12:00.": "Your order ships today before 12:00.",
           "Gracias por esperar.": CLEAN, "Hola, mi pedido no ha llegado.": "Hello, my order "
           "has not arrived."}


def answer(prompt: str) -> str:
    """Spanish for the agent's replies (one with a time its source lacks), English for the
    back-translations and the visitor; anything else echoed."""
    text = echo_source(prompt)
    table = SPANISH if "into Spanish" in prompt else ENGLISH
    return table.get(text, text)


async def _press(url: str, tab: Tab, name: str, cookie: str | None = None) -> None:
    """The latest button *name* of *tab*, clicked."""
    button = await tab.action(name, lambda b: b is tab.actions(name)[-1])
    async with httpx.AsyncClient(timeout=30) as client:
        clicked = await client.post(f"{url}/project/action", headers={"Cookie": cookie or ""},
                                    json={"sessionId": tab.session, "action": button})
    assert clicked.status_code == 200, clicked.text


async def _held(tab: Tab, count: int) -> None:
    """Wait until *tab* has shown *count* held replies (each with its Send anyway)."""
    await tab._first(lambda: True if len(tab.actions("room_send_anyway")) >= count else None,
                     60, f"{count} held replies")


async def test_a_flagged_room_reply_reaches_the_guest_only_once_the_agent_confirms(tmp_path):
    with app(tmp_path, answer=answer, HYMT_CHECKS="true") as (url, _):
        async with Tab(url, profile=AGENT) as agent, aiohttp.ClientSession() as http:
            token = await open_room(agent)
            await agent.wait("Customer")  # the chat started
            async with http.ws_connect(room_ws_url(url, token)) as ws:
                await ws.send_json({"type": "hello", "guest": GUEST, "language": "es"})
                await room_events(ws, "welcome")

                # Flagged, then edited: dropped, never sent; the text goes back to the composer.
                await agent.send(FLAGGED)
                await _held(agent, 1)
                held = agent.said("12:00")[-1]
                assert "Not sent yet" in held and "⚠" in held
                await _press(url, agent, "room_edit")
                await agent.wait(md(HELD_DROPPED))
                await agent._first(lambda: next((d for e, d in agent.events if e ==
                                                 "window_message" and d.get("hymt") == "edit"),
                                                None), 60, "the text sent back to the composer")
                assert ("window_message", {"hymt": "edit", "text": FLAGGED}) in agent.events

                # Flagged again and held: a clean reply meanwhile goes at once, and first.
                await agent.send(FLAGGED)
                await _held(agent, 2)
                await agent.send(CLEAN)
                got = await room_events(ws, "message", tab=agent)
                first = got[-1]["message"]
                assert first["translation"] == "Gracias por esperar." and first["seq"] == 1
                assert not [e for e in got if "12:00" in str(e)], got

                await _press(url, agent, "room_send_anyway")
                second = (await room_events(ws, "message", tab=agent))[-1]["message"]
                assert second["translation"] == SPANISH[FLAGGED] and second["seq"] == 2
                assert second["warnings"], second  # the page's copy says what was flagged
                await agent.wait(md(HELD_SENT))

                # A reload sees both sent replies, and not the dropped one.
                async with http.ws_connect(room_ws_url(url, token)) as again:
                    await again.send_json({"type": "hello", "guest": GUEST})
                    history = (await room_events(again, "welcome"))[-1]["history"]
                    assert [m["translation"] for m in history] == [
                        "Gracias por esperar.", SPANISH[FLAGGED]]

                # The same button once more: the reply is no longer waiting, nothing is sent.
                await _press(url, agent, "room_send_anyway")
                await agent.wait(md(HELD_GONE))


async def test_a_flagged_desk_reply_is_held_too(tmp_path):
    with app(tmp_path, answer=answer, HYMT_CHECKS="true", HYMT_AGENTS=f"alice:{_hash('alice')}",
             CHAINLIT_AUTH_SECRET="s" * 64) as (url, _):
        ticket = _start(url, G1, "es", "Hola, mi pedido no ha llegado.")
        assert ticket.status_code == 200, ticket.text
        cookie = _cookie(url, "alice")
        async with Tab(url, {"Cookie": cookie}, profile=AGENT) as alice, \
                aiohttp.ClientSession() as http:
            await alice.send("/desk take 1")
            await alice.wait(md("Now with #1 · Spanish"))
            async with http.ws_connect(room_ws_url(url, ticket.json()["token"])) as ws:
                await ws.send_json({"type": "hello", "guest": G1})
                await room_events(ws, "welcome")
                await alice.send(FLAGGED)
                await _held(alice, 1)
                await alice.send(CLEAN)
                got = await room_events(ws, "message", tab=alice)
                assert got[-1]["message"]["translation"] == "Gracias por esperar."
                assert not [e for e in got if "12:00" in str(e)], got
                await _press(url, alice, "room_send_anyway", cookie)
                sent = (await room_events(ws, "message", tab=alice))[-1]["message"]
                assert sent["translation"] == SPANISH[FLAGGED]


# --- the room itself, driven directly ---------------------------------------------------------

@pytest.fixture
def stub():
    with StubModel(answer=answer) as model:
        yield model


async def test_a_held_reply_is_not_in_the_history_until_sent(stub, tmp_path):
    screen = RecordingScreen()
    session = AgentSession(services(stub, tmp_path, checks=True), screen, session_id="agent",
                           user_key="user:ann")
    await session.message("/room", None)
    room = session.room
    assert room is not None
    queue = room.join(GUEST)
    room.set_guest_language("es")
    held = await room.agent_says(FLAGGED)
    assert isinstance(held, HeldReply) and held.message.seq == 0
    assert room.history == [] and "12:00" not in str([queue.get_nowait() for _ in
                                                       range(queue.qsize())])
    assert [t.original for t in room.conv.transcript] == [FLAGGED]
    assert room.drop_held(held.key) is held and room.conv.transcript == []
    assert room.drop_held(held.key) is None
    again = await room.agent_says(FLAGGED)
    assert isinstance(again, HeldReply)
    sent = await room.agent_says(CLEAN)
    assert not isinstance(sent, HeldReply) and sent.seq == 1
    released = room.send_held(again.key)
    assert released.seq == 2 and [m.seq for m in room.history] == [1, 2]
    with pytest.raises(KeyError):
        room.send_held(again.key)
    late = await room.agent_says(FLAGGED)
    assert isinstance(late, HeldReply)
    room.close()
    with pytest.raises(RoomError):
        room.send_held(late.key)


async def test_a_reply_the_model_could_not_translate_is_not_held(stub, tmp_path):
    """The original with its note goes as today: it carries no check's finding."""
    session = AgentSession(services(stub, tmp_path, checks=True), RecordingScreen(),
                           session_id="agent", user_key="user:ann")
    await session.message("/room", None)
    room = session.room
    assert room is not None
    room.set_guest_language("es")
    stub.answer = lambda prompt: (_ for _ in ()).throw(RuntimeError("down"))
    sent = await room.agent_says(FLAGGED)
    assert not isinstance(sent, HeldReply) and sent.translation is None and sent.seq == 1
