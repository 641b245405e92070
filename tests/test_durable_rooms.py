"""Rooms and desk conversations kept in the deployment's database (SQLite, and the session's
real PostgreSQL where a test names *where*): written behind the talk, read back by a process
that did not hold them, and not lost nor doubled when the database goes away in the middle of
a conversation.

Driven directly (no Chainlit) over the instant stand-in model of ``tests/support/sessions.py``;
the database's failure is a fault injected into the real store (:class:`FlakyStore`). The real
app restarted on the same database is ``tests/test_rooms_restart.py``.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from hymt_chat.engine.translator import Translator
from hymt_chat.modes.agent.desk_seat import translate_for
from hymt_chat.modes.agent.session import AgentSession
from hymt_chat.modes.desk import Desk
from hymt_chat.modes.keeping import RoomKeeper
from hymt_chat.modes.room import Rooms
from hymt_chat.settings import Settings
from hymt_chat.store.conversations import (
    ConversationStore,
    ConversationStoreError,
    MessageRecord,
    RoomRecord,
)
from tests.support.sessions import RecordingScreen, services
from tests.support.stub_model import StubModel

GUEST = "a" * 32
PAYER = "addr:203.0.113.9"


class FlakyStore(ConversationStore):
    """The real store, with the database's faults at its door: *down* refuses every write (as
    a database that went away does); *lose_answers* commits a write and then fails it (the
    connection dropped before the answer came back), so the writer tries it again."""

    down = False
    lose_answers = 0
    failed = 0

    def write(self, rooms, messages):
        if self.down:
            self.failed += 1
            raise ConversationStoreError("The conversations' database is not answering "
                                         "(OperationalError).")
        super().write(rooms, messages)
        if self.lose_answers:
            self.lose_answers -= 1
            raise ConversationStoreError("The conversations' database is not answering "
                                         "(OperationalError).")


@pytest.fixture
def stub():
    with StubModel(answer=lambda prompt: prompt.split("\n\n", 1)[-1].upper()) as model:
        yield model


def _keeper(store: ConversationStore) -> RoomKeeper:
    return RoomKeeper(store, first_retry=0.01, last_retry=0.05)


async def _agent(stub, tmp_path, rooms: Rooms) -> AgentSession:
    session = AgentSession(services(stub, tmp_path, rooms=rooms), RecordingScreen(),
                           session_id="agent", user_key="user:ann",
                           page_url="https://chat.example")
    await session.message("/room", None)
    return session


def _messages(queue: asyncio.Queue) -> list[dict]:
    events = []
    while not queue.empty():
        events.append(queue.get_nowait())
    return [e["message"] for e in events if e["type"] == "message"]


async def _until(condition, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the condition never came true"
        await asyncio.sleep(0.01)


def test_a_room_and_its_messages_round_trip_and_a_message_written_twice_is_kept_once(where):
    store = ConversationStore(where, clock=lambda: 1000.0)
    room = RoomRecord("t" * 32, "desk", 900.0, 5000.0, {"conv": {"x": "ñ"}, "guests": []},
                      number=7, visitor="addr:1", unread=2)
    first = MessageRecord("t" * 32, 1, "guest", "Hola", "es", "Hello", "en", 950.0, ref="r1")
    store.write([room], [first])
    store.write([room], [first, MessageRecord("t" * 32, 1, "guest", "doubled", None, None,
                                              "en", 951.0)])  # a retry of the same number
    loaded = store.load("t" * 32)
    assert loaded is not None and loaded.room == room
    assert loaded.messages == [first]
    assert [r.room.number for r in store.open_desk()] == [7] and store.last_number() == 7
    assert store.tokens(visitor="addr:1") == ["t" * 32]
    assert store.ended_before(6000.0) == ["t" * 32] and store.ended_before(4000.0) == []
    assert store.containing("hOLA") == store.containing("ñ") == ["t" * 32]  # message, state
    assert store.containing("H_la") == store.containing("%") == []  # no wildcards
    assert store.forget(["t" * 32]) == 1 and store.load("t" * 32) is None
    assert store.forget(["t" * 32]) == 0  # erasing it again finds nothing
    store.close()


async def test_messages_flow_while_the_database_is_away_and_are_written_once_it_is_back(
        stub, tmp_path, where):
    """The database goes away mid-conversation: both sides still read each other at once; what
    was said is written when it is back, every message once (a write the database kept but
    whose answer was lost is written again, and still kept once)."""
    store = FlakyStore(where)
    keeper = _keeper(store)
    rooms = Rooms(keeper=keeper)
    session = await _agent(stub, tmp_path, rooms)
    room = session.room
    await session.settings_changed({"back_translate": False})  # one model call a reply
    queue = room.join(GUEST)
    room.set_guest_language("es")
    await asyncio.wait_for(keeper.flush(), 30)
    store.down = True
    await room.guest_says(GUEST, "Hola, ¿dónde está mi pedido?", PAYER, "page-msg-01")
    await session.message("It ships today.", None)
    await room.guest_says(GUEST, "Gracias.", PAYER, "page-msg-02")
    flowed = _messages(queue)
    assert [(m["seq"], m["who"], m["translation"]) for m in flowed] == [
        (1, "guest", "HOLA, ¿DÓNDE ESTÁ MI PEDIDO?"), (2, "agent", "IT SHIPS TODAY."),
        (3, "guest", "GRACIAS.")]
    await _until(lambda: store.failed >= 2)  # tried, refused, tried again
    assert keeper.failing and store.load(room.token).messages == []
    store.down, store.lose_answers = False, 1
    await asyncio.wait_for(keeper.flush(), 30)
    stored = store.load(room.token)
    assert [(m.seq, m.who, m.original, m.translation) for m in stored.messages] == [
        (m["seq"], m["who"], m["original"], m["translation"]) for m in flowed]
    assert [m.ref for m in stored.messages] == ["page-msg-01", None, "page-msg-02"]
    assert stored.room.agent == "user:ann" and stored.room.state["guests"] == [GUEST]
    assert [t["who"] for t in stored.room.state["conv"]["transcript"]] == [
        "customer", "agent", "customer"]
    assert not keeper.failing and keeper.pending == 0
    await keeper.close()


async def test_another_process_reads_the_room_back_and_takes_a_resent_message_once(
        stub, tmp_path):
    """A process that did not hold the room (the first one stopped) finds its link, its
    history and its guest; the guest's page sends again what it has not seen come back, and
    the room takes what it has already once."""
    keeper = _keeper(ConversationStore(tmp_path / "conversations.db"))
    session = await _agent(stub, tmp_path, Rooms(keeper=keeper))
    room = session.room
    await session.settings_changed({"back_translate": False})
    room.join(GUEST)
    room.set_guest_language("es")
    await room.guest_says(GUEST, "Hola.", PAYER, "page-msg-01")
    await session.message("Hello, how can I help?", None)
    await keeper.close()

    keeper = _keeper(ConversationStore(tmp_path / "conversations.db"))
    rooms = Rooms(keeper=keeper)
    Desk(rooms, translate_for(session.translator, session.settings))  # the app's defaults
    again = await rooms.reach(room.token)
    queue = again.join(GUEST)  # its guest, known: not "already joined"
    welcome = queue.get_nowait()
    assert [(m["who"], m["original"]) for m in welcome["history"]] == [
        ("guest", "Hola."), ("agent", "Hello, how can I help?")]
    assert welcome["guest_language"] == "es"
    await again.guest_says(GUEST, "Hola.", PAYER, "page-msg-01")  # sent again: taken already
    assert _messages(queue) == []
    # The agent's next tab takes the room back; the guest's new message reaches it.
    back = await _agent_tab(stub, tmp_path, rooms)
    assert back.room is again and back.conv is again.conv
    await again.guest_says(GUEST, "¿Sigue ahí?", PAYER, "page-msg-02")
    assert [m["seq"] for m in _messages(queue)] == [3]
    await asyncio.wait_for(keeper.flush(), 30)
    assert [m.seq for m in keeper.store.load(room.token).messages] == [1, 2, 3]
    await keeper.close()


async def _agent_tab(stub, tmp_path, rooms: Rooms) -> AgentSession:
    session = AgentSession(services(stub, tmp_path, rooms=rooms), RecordingScreen(),
                           session_id="agent-2", user_key="user:ann")
    await session.start()
    return session


async def test_a_restarted_desk_has_its_queue_holders_unread_counts_and_numbers(
        stub, tmp_path):
    settings = Settings(cache_dir=tmp_path, base_url=stub.base_url, api_key="k", model="stub",
                        checks=False)

    class Seat:
        agent, told = "user:bob", []

        async def desk_event(self, ticket, what, message=None):
            self.told.append(what)

    def desk() -> Desk:
        keeper = _keeper(ConversationStore(tmp_path / "conversations.db"))
        return Desk(Rooms(keeper=keeper), translate_for(Translator(settings), settings))

    first = desk()
    one = await first.start("addr:1", "es")
    two = await first.start("addr:2", "ja")
    await first.take(Seat(), two.number, lambda ticket: None)
    two.room.join(GUEST)
    for text in ("すみません。", "荷物がまだ届きません。"):  # their holder's tab is closed
        await two.room.guest_says(GUEST, text, PAYER)
    assert two.unread == 2
    await first.rooms.close()

    again = desk()
    assert await again.restore() == 2
    inbox = await again.inbox("user:bob")
    assert [(t.number, t.agent, t.unread, t.language) for t in inbox] == [
        (one.number, None, 0, "es"), (two.number, "user:bob", 2, "ja")]
    assert again.waiting()[0].room.token == one.room.token
    assert [m.original for m in again.get(two.number).room.history] == [
        "すみません。", "荷物がまだ届きません。"]
    three = await again.start("addr:3", "de")
    assert three.number == 3  # the numbering goes on
    await again.rooms.close()


async def test_an_erased_conversation_is_gone_even_what_arrives_during_the_erasure(
        stub, tmp_path):
    """Erasure (for the data commands): the room ends, its rows go, and a message being
    translated while it runs is never written."""
    keeper = _keeper(ConversationStore(tmp_path / "conversations.db"))
    settings = Settings(cache_dir=tmp_path, base_url=stub.base_url, api_key="k", model="stub",
                        checks=False)
    desk = Desk(Rooms(keeper=keeper), translate_for(Translator(settings), settings))
    ticket = await desk.start("addr:1", "es")
    queue = ticket.room.join(GUEST)
    await ticket.room.guest_says(GUEST, "Mi correo es ana@example.com", PAYER)
    await asyncio.wait_for(keeper.flush(), 30)
    assert keeper.store.containing("ANA@example.com") == [ticket.room.token]
    started, release = asyncio.Event(), asyncio.Event()
    original = ticket.room.translate

    async def held(text: str, side: str):
        started.set()
        await release.wait()  # translating while the erasure runs
        return await original(text, side)
    ticket.room.translate = held
    late = asyncio.create_task(ticket.room.guest_says(GUEST, "Y mi teléfono…", PAYER))
    await asyncio.wait_for(started.wait(), 30)
    assert await desk.erase([ticket.room.token]) == 1
    release.set()
    await late
    await asyncio.wait_for(keeper.flush(), 30)
    assert keeper.store.load(ticket.room.token) is None
    assert keeper.store.containing("ana@example.com") == []
    assert "closed" in [e["type"] for e in _events(queue)]  # the visitor's page is told
    assert desk.get(ticket.number) is None and await desk.erase([ticket.room.token]) == 0
    await keeper.close()


def _events(queue: asyncio.Queue) -> list[dict]:
    events = []
    while not queue.empty():
        events.append(queue.get_nowait())
    return events
