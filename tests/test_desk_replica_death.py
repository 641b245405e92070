"""A desk conversation whose replica dies goes on in another one, read back from the database.

Two replicas' desks in one process, each with its own relay on one real Redis (Debian's
``redis-server``) and one conversations database (SQLite: both on one host here; PostgreSQL
across hosts). Replica A's death is its listener and heartbeat stopping and its heartbeat key
gone (as its expiry would do it seconds later). The model is the instant stand-in; the real
kill behind HAProxy is ``tests/test_e2e_scale.py``'s kind of test."""

from __future__ import annotations

import asyncio
import json

import pytest

from hymt_chat.engine.translator import Translator
from hymt_chat.modes.agent.desk_seat import translate_for
from hymt_chat.modes.desk import Desk
from hymt_chat.modes.keeping import RoomKeeper
from hymt_chat.modes.room import Rooms
from hymt_chat.room.desk_relay import DeskRelay
from hymt_chat.settings import Settings
from hymt_chat.store.conversations import ConversationStore
from tests.support.redis_server import redis_server
from tests.support.stub_model import StubModel

GUEST = "a" * 32
PAYER = "addr:203.0.113.9"


class Seat:
    """An agent's tab as the desk sees it."""

    def __init__(self, agent: str) -> None:
        self.agent, self.told = agent, []

    async def desk_event(self, ticket, what, message=None) -> None:
        self.told.append((ticket.number, what))


@pytest.fixture
def stub():
    with StubModel(answer=lambda prompt: prompt.split("\n\n", 1)[-1].upper()) as model:
        yield model


def _messages(queue: asyncio.Queue) -> list[dict]:
    events = []
    while not queue.empty():
        events.append(queue.get_nowait())
    return [e["message"] for e in events if e["type"] == "message"]


async def test_a_dead_replicas_conversation_goes_on_in_another_with_its_history(
        stub, tmp_path):
    settings = Settings(cache_dir=tmp_path, base_url=stub.base_url, api_key="k", model="stub",
                        checks=False)
    with redis_server(tmp_path / "redis") as url:
        replicas = []

        async def replica(name: str) -> tuple[Desk, DeskRelay, asyncio.Task]:
            keeper = RoomKeeper(ConversationStore(tmp_path / "conversations.db"),
                                first_retry=0.01, last_retry=0.05)
            rooms = Rooms(keeper=keeper)
            desk = Desk(rooms, translate_for(Translator(settings), settings))
            relay = DeskRelay(desk, rooms, url, replica=name)
            listening = asyncio.create_task(relay.run())
            await relay.ready()
            replicas.append((desk, relay, listening))
            return desk, relay, listening

        try:
            a, relay_a, listening_a = await replica("a")
            b, relay_b, _ = await replica("b")
            ticket = await a.start("addr:1", "es")
            await a.take(Seat("user:alice"), ticket.number, lambda held: None)
            ticket.room.join(GUEST)
            await ticket.room.guest_says(GUEST, "Hola, ¿está mi pedido?", PAYER, "page-msg-01")
            await asyncio.wait_for(a.rooms.keeper.flush(), 30)

            listening_a.cancel()  # replica A dies: no listener, no heartbeat
            await asyncio.gather(listening_a, return_exceptions=True)
            await relay_b.redis.delete("hymt:desk:alive:a")

            # The visitor's page reconnects, through the proxy, to replica B.
            room = await asyncio.wait_for(b.rooms.reach(ticket.room.token), 10)
            queue = room.join(GUEST)
            welcome = queue.get_nowait()
            assert [m["original"] for m in welcome["history"]] == ["Hola, ¿está mi pedido?"]
            await room.guest_says(GUEST, "Hola, ¿está mi pedido?", PAYER, "page-msg-01")
            await room.guest_says(GUEST, "¿Hay alguien?", PAYER, "page-msg-02")
            assert [(m["seq"], m["translation"]) for m in _messages(queue)] == [
                (2, "¿HAY ALGUIEN?")]  # the page's resent one was taken once already
            # Alice's tab reconnects to B: her conversation is hers, its unread counted.
            held = await asyncio.wait_for(b.sit(Seat("user:alice")), 10)
            assert [(t.number, t.unread) for t in held] == [(ticket.number, 2)]
            row = json.loads(await relay_b.redis.hget("hymt:desk:tickets", str(ticket.number)))
            for _ in range(100):  # the row is rewritten by a task of the relay's
                if row["owner"] == "b":
                    break
                await asyncio.sleep(0.05)
                row = json.loads(await relay_b.redis.hget("hymt:desk:tickets",
                                                          str(ticket.number)))
            assert row["owner"] == "b"
            await asyncio.wait_for(b.rooms.keeper.flush(), 30)
            stored = b.rooms.keeper.store.load(ticket.room.token)
            assert [m.original for m in stored.messages] == [
                "Hola, ¿está mi pedido?", "¿Hay alguien?"]
        finally:
            for desk, relay, listening in replicas:
                listening.cancel()
                await asyncio.gather(listening, return_exceptions=True)
                await desk.rooms.close()
                await relay.redis.aclose()
