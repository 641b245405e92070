"""Rooms: the agent's session opens one, a guest joins with the token, each side's words reach
the other translated, and a link that leads nowhere says why.

Driven directly (no Chainlit, no browser) over a stand-in model that answers at once (see
``tests/support/sessions.py``); the real model and two real browsers are in
``tests/test_e2e_room.py``. Time is an injected clock.
"""

from __future__ import annotations

import asyncio

import pytest

from hymt_chat.modes.agent.session import AgentSession
from hymt_chat.modes.room import RoomError, Rooms
from hymt_chat.room.page import browser_language
from hymt_chat.words.source import CHAT
from tests.support.sessions import RecordingScreen, services
from tests.support.stub_model import StubModel

GUEST = "a" * 32
PHONE_TWO = "b" * 32  # the customer's other device
PAYER = "addr:203.0.113.9"  # the guest's allowance (their address)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def stub():
    with StubModel(answer=lambda prompt: prompt.split("\n\n", 1)[-1].upper()) as model:
        yield model


async def _agent(stub, tmp_path, rooms: Rooms,
                 user_key: str = "user:ann") -> tuple[AgentSession, RecordingScreen]:
    screen = RecordingScreen()
    session = AgentSession(services(stub, tmp_path, rooms=rooms), screen, session_id="agent",
                           user_key=user_key, page_url="https://chat.example")
    await session.message("/room", None)
    return session, screen


def _drain(queue: asyncio.Queue) -> list[dict]:
    events = []
    while not queue.empty():
        events.append(queue.get_nowait())
    return events


async def test_room_opens_with_a_link_and_a_qr_code(stub, tmp_path):
    rooms = Rooms()
    session, screen = await _agent(stub, tmp_path, rooms)
    reply = screen.last()
    room = session.room
    assert room is not None and len(room.token) >= 32
    assert f"https://chat.example/room/{room.token}" in reply.markdown
    png = reply.files[0]
    assert png.mime == "image/png" and png.content.startswith(b"\x89PNG")
    assert reply.buttons[0].name == "room_close"
    await session.message("/room", None)  # again: the same room, its link shown again
    assert session.room is room and room.token in screen.last().markdown


async def test_both_sides_read_each_other_translated(stub, tmp_path):
    rooms = Rooms()
    session, screen = await _agent(stub, tmp_path, rooms)
    room = rooms.get(session.room.token)
    queue = room.join(GUEST)
    assert _drain(queue)[0]["type"] == "welcome"
    room.set_guest_language("es")
    await room.guest_says(GUEST, "Hola, mi pedido no ha llegado todavía.", PAYER)
    events = _drain(queue)
    assert [e["type"] for e in events] == ["pending", "message"]
    message = events[1]["message"]
    assert message["who"] == "guest" and message["source"] == "es" and message["target"] == "en"
    assert message["translation"] == "HOLA, MI PEDIDO NO HA LLEGADO TODAVÍA."
    await asyncio.sleep(0.05)  # the agent's tab is updated from the session's own context
    assert "Customer · Spanish → English" in screen.last().markdown.replace("\\", "")
    line = screen.lines[-1]  # "translating…" was shown to the agent meanwhile, then became it
    assert line.names[0].startswith("The customer's message") and line.closed is None
    assert line.became is screen.last()
    assert "Original" in screen.last().markdown
    await session.settings_changed({"agent_language": "en", "back_translate": False})
    await session.message("Sorry about that, it ships today.", None)
    events = _drain(queue)
    sent = [e for e in events if e["type"] == "message"][0]["message"]
    assert sent["who"] == "agent" and sent["target"] == "es"
    assert sent["translation"] == "SORRY ABOUT THAT, IT SHIPS TODAY."
    assert [t.who for t in session.conv.transcript] == ["customer", "agent"]
    await session.message("/transcript", None)
    csv = next(f for f in screen.last().files if f.name.endswith(".csv")).content.decode()
    assert "Hola, mi pedido" in csv and "it ships today" in csv


async def test_a_guest_cannot_run_the_agents_commands(stub, tmp_path):
    rooms = Rooms()
    session, _ = await _agent(stub, tmp_path, rooms)
    room = rooms.get(session.room.token)
    queue = room.join(GUEST)
    room.set_guest_language("fr")
    await room.guest_says(GUEST, "/glossary add commande = order", PAYER)
    await room.guest_says(GUEST, "/room close", PAYER)
    assert len(session.conv.glossary.entries) == 0
    assert room.refusal() is None  # still open
    said = [e["message"]["original"] for e in _drain(queue) if e["type"] == "message"]
    assert said == ["/glossary add commande = order", "/room close"]  # translated as text


async def test_a_reload_rejoins_with_history_and_another_device_takes_the_room_over(
        stub, tmp_path):
    """The same browser again (a reload) replaces its own connection; another device (another
    key) opening the link takes the conversation over: it gets the history, the first device
    is told "moved" and is no longer admitted, and the agent reads one line."""
    clock = Clock()
    rooms = Rooms(clock=clock)
    session, screen = await _agent(stub, tmp_path, rooms)
    room = rooms.get(session.room.token)
    first = room.join(GUEST)
    room.set_guest_language("de")
    await room.guest_says(GUEST, "Guten Tag, ich habe eine Frage.", PAYER)
    again = room.join(GUEST)  # the same browser after a reload
    assert _drain(first)[-1] == {"type": "replaced"}
    welcome = _drain(again)[0]
    assert welcome["type"] == "welcome" and welcome["guest_language"] == "de"
    assert [m["original"] for m in welcome["history"]] == ["Guten Tag, ich habe eine Frage."]

    laptop = room.join(PHONE_TWO)  # the customer opens the link on another device
    history = _drain(laptop)[0]["history"]
    assert [m["original"] for m in history] == ["Guten Tag, ich habe eine Frage."]
    assert _drain(again)[-1] == {"type": "moved", "key": "moved",
                                 "text": "This conversation continued on another device."}
    assert room.guests == {PHONE_TWO}
    await asyncio.sleep(0.05)  # the agent's tab is told from the session's own context
    assert screen.texts[-1].replace("\\", "") == CHAT["room_moved"]
    await room.guest_says(GUEST, "Vom alten Telefon.", PAYER)  # the old device: no longer heard
    await room.guest_says(PHONE_TWO, "Vom Laptop.", PAYER)
    assert [m.original for m in room.history][-1] == "Vom Laptop."
    assert "Vom alten Telefon." not in [m.original for m in room.history]
    await session.message("Danke, ich sehe es mir an.", None)
    assert [e["message"]["who"] for e in _drain(laptop) if e["type"] == "message"] == [
        "guest", "agent"]

    with pytest.raises(RoomError, match="another device") as moved:
        room.join(GUEST, resume=True)  # the old page reconnecting by itself: told, not taken
    assert moved.value.key == "moved" and room.guests == {PHONE_TWO}
    told = len(screen.texts)
    clock.now += 5
    back = room.join(GUEST)  # the link opened again on the first device: it takes it back
    assert _drain(back)[0]["type"] == "welcome" and _drain(laptop)[-1]["type"] == "moved"
    await asyncio.sleep(0.05)
    assert len(screen.texts) == told  # the agent was told 5 s ago: not again so soon
    clock.now += 60
    room.join(PHONE_TWO)
    await asyncio.sleep(0.05)
    assert screen.texts[-1].replace("\\", "") == CHAT["room_moved"]

    await session.message("/room guests 2", None)
    clock.now += 1
    room.join(GUEST)  # now admitted beside the other: nobody is moved
    assert room.guests == {GUEST, PHONE_TWO}
    third = "e" * 32
    room.join(third)  # a third device replaces the one connected longest ago
    assert room.guests == {GUEST, third}
    await session.message("/room", None)  # the link the agent is shown is the same, working
    assert room.token in screen.last().markdown and rooms.get(room.token) is room


async def test_unknown_expired_and_closed_links_say_why(stub, tmp_path):
    clock = Clock()
    rooms = Rooms(hours=1, clock=clock)
    session, screen = await _agent(stub, tmp_path, rooms)
    token = session.room.token
    with pytest.raises(RoomError, match="not valid"):
        rooms.get(token[:-1] + ("x" if token[-1] != "x" else "y"))
    queue = rooms.get(token).join(GUEST)
    clock.now += 3601
    with pytest.raises(RoomError, match="expired"):
        rooms.get(token)
    clock.now -= 3601
    await session.message("/room close", None)
    assert "closed" in screen.last().markdown
    assert _drain(queue)[-1]["type"] == "closed"
    with pytest.raises(RoomError, match="closed"):
        rooms.get(token)
    await session.message("And this goes where?", None)  # not to the closed room
    assert "AND THIS GOES WHERE" not in str(_drain(queue))


async def test_a_message_the_model_cannot_translate_arrives_with_the_original(stub, tmp_path):
    rooms = Rooms()
    session, screen = await _agent(stub, tmp_path, rooms)
    room = rooms.get(session.room.token)
    queue = room.join(GUEST)
    room.set_guest_language("it")
    stub.answer = lambda prompt: (_ for _ in ()).throw(RuntimeError("down"))
    await room.guest_says(GUEST, "Buongiorno, il pacco è arrivato rotto.", PAYER)
    message = [e for e in _drain(queue) if e["type"] == "message"][0]["message"]
    assert message["translation"] is None and message["note"].startswith("Not translated")
    assert message["original"] == "Buongiorno, il pacco è arrivato rotto."
    await asyncio.sleep(0.05)
    assert "il pacco è arrivato rotto" in screen.last().markdown


async def test_an_anonymous_agent_leaving_closes_the_room(stub, tmp_path):
    rooms = Rooms()
    session, _ = await _agent(stub, tmp_path, rooms, user_key="addr:198.51.100.7")
    queue = rooms.get(session.room.token).join(GUEST)
    session.end()
    assert _drain(queue)[-1] == {"type": "closed", "key": "left",
                                 "text": "The agent has left; this conversation is closed."}


async def test_a_signed_in_agents_room_outlives_their_tab_and_their_next_tab_takes_it(
        stub, tmp_path):
    """A signed-in agent can come back (a reload, a restart), so their tab closing does not
    end the room: their next tab has it, its history shown and its link again."""
    rooms = Rooms()
    session, _ = await _agent(stub, tmp_path, rooms)
    room = rooms.get(session.room.token)
    room.join(GUEST)
    room.set_guest_language("es")
    await room.guest_says(GUEST, "Hola.", PAYER)
    session.end()
    assert rooms.get(room.token) is room  # still open
    screen = RecordingScreen()
    again = AgentSession(services(stub, tmp_path, rooms=rooms), screen, session_id="again",
                         user_key="user:ann", page_url="https://chat.example")
    await again.start()
    assert again.room is room and again.conv is room.conv
    said = screen.texts
    assert any("still open" in m for m in said) and any("HOLA" in m for m in said)
    assert f"/room/{room.token}" in said[-1]


@pytest.mark.parametrize(("header", "code"), [
    ("es-ES,es;q=0.9,en;q=0.8", "es"),
    ("en;q=0.5, zh-CN;q=0.9", "zh"),
    ("zh-TW", "zh-Hant"),
    ("xx-YY, *;q=0.1", None),
    ("", None),
    ("fr;q=abc, de", "de"),
])
def test_the_guest_page_guesses_the_browser_language(header, code):
    assert browser_language(header) == code


async def test_the_counter_translates_each_side_into_the_others_language(stub, tmp_path):
    from hymt_chat.modes.counter import Counter

    counter = Counter(services(stub, tmp_path).translator, user="screen", a="en", b="ja")
    assert counter.set_language("b", "Klingon") == "ja"  # from the browser: checked, kept
    left = await counter.say("a", "Where is the nearest station?")
    assert (left["source"], left["target"]) == ("en", "ja")
    assert left["translation"] == "WHERE IS THE NEAREST STATION?"
    assert counter.set_language("a", "fr") == "fr"
    right = await counter.say("b", "駅はあそこです。")
    assert (right["source"], right["target"]) == ("ja", "fr") and right["original"] == "駅はあそこです。"
    assert (await counter.say("a", "   "))["type"] == "error"  # refused, said to the writer
    stub.answer = lambda prompt: (_ for _ in ()).throw(RuntimeError("down"))
    failed = await counter.say("a", "Merci beaucoup.")
    assert failed["translation"] is None and failed["original"] == "Merci beaucoup."


def test_a_room_link_reaches_the_agents_replica_through_the_sticky_cookie(tmp_path):
    """Two replicas behind a cookie-sticky proxy: the link carries the agent's affinity cookie;
    a replica without the room sets it and sends the phone round once (then it says why)."""
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from hymt_chat.room import page
    from hymt_chat.settings import Settings

    app = FastAPI()
    page.mount(app, Rooms(), Settings(cache_dir=tmp_path / "c", affinity_cookie="hymt-route",
                                      app_replicas=2))
    client = TestClient(app, follow_redirects=False)
    gone = "E" * 32  # a room token's shape, of a room another replica holds
    hop = client.get(f"/room/{gone}?r=replica-7")
    assert hop.status_code == 307 and hop.headers["location"] == f"/room/{gone}?r=replica-7&hop=1"
    assert "hymt-route=replica-7" in hop.headers["set-cookie"]
    assert client.get(f"/room/{gone}?r=replica-7&hop=1").status_code == 404  # no loop
    for planted in ("/room/anything?r=replica-7", f"/room/{gone}?r=a;%20Domain=evil"):
        refused = client.get(planted)  # not a room's link, or not a server's name: no cookie
        assert refused.status_code == 404 and "set-cookie" not in refused.headers
    client.cookies.set("hymt-route", "replica-7")
    assert client.get(f"/room/{gone}?r=replica-7").status_code == 404  # routed, still gone
    assert client.get(f"/room/{gone}").status_code == 404  # a plain link: no hop
    one = FastAPI()  # one replica: a link's ?r= never sets a cookie
    page.mount(one, Rooms(), Settings(cache_dir=tmp_path / "c", affinity_cookie="hymt-route"))
    alone = TestClient(one, follow_redirects=False).get(f"/room/{gone}?r=replica-7")
    assert alone.status_code == 404 and "set-cookie" not in alone.headers


async def test_the_link_carries_the_agents_affinity(stub, tmp_path):
    screen = RecordingScreen()
    session = AgentSession(services(stub, tmp_path, rooms=Rooms()), screen, session_id="a",
                           user_key="user:ann", page_url="https://chat.example",
                           affinity="b2f/1 x")
    await session.message("/room", None)
    assert f"/room/{session.room.token}?r=b2f%2F1%20x" in screen.last().markdown
