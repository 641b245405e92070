"""The typing indicator's core, both ways: a side's typing goes to the other side throttled,
is shown for a few seconds after the last keystroke told (and so ends by itself), and ends at
once when that side's message arrives; a desk conversation's visitor typing reaches its
holder's tab only, as a signal for the tab's script, and the agent's typing (that script's
signal) reaches the visitor's page.

Driven directly over a stand-in model that answers at once (``tests/support/sessions.py``);
time is an injected clock. The pages on real browsers, across two replicas behind the proxy,
are in ``tests/test_desk_proxy_browser.py``."""

from __future__ import annotations

import asyncio

import pytest

from hymt_chat.modes.agent.desk_seat import translate_for
from hymt_chat.modes.agent.session import AgentSession
from hymt_chat.modes.desk import Desk
from hymt_chat.modes.room import Rooms
from hymt_chat.modes.session import Services
from hymt_chat.modes.typing import Typing
from tests.support.sessions import RecordingScreen, services
from tests.support.stub_model import StubModel

GUEST = "a" * 32


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _drain(queue: asyncio.Queue) -> list[dict]:
    events = []
    while not queue.empty():
        events.append(queue.get_nowait())
    return events


async def _next(queue: asyncio.Queue, kind: str) -> dict:
    while (event := await asyncio.wait_for(queue.get(), 30))["type"] != kind:
        pass
    return event


def _typing(events: list[dict]) -> list[dict]:
    return [e for e in events if e["type"] == "typing"]


@pytest.fixture
def stub():
    with StubModel(answer=lambda prompt: prompt.split("\n\n", 1)[-1].upper()) as model:
        yield model


def test_a_side_is_told_at_most_every_two_seconds_and_shown_six():
    clock = Clock()
    typing = Typing(clock)
    assert typing.mark("guest") and typing.active("guest")
    clock.now += 1.9
    assert not typing.mark("guest")  # a page that does not throttle cannot flood the other side
    clock.now += 0.1
    assert typing.mark("guest")  # 2 s after the last told: told again (the line goes on)
    clock.now += 5.9
    assert typing.active("guest")
    clock.now += 0.1
    assert not typing.active("guest")  # 6 s after the last told: it ended by itself
    assert typing.event("agent") == {"type": "typing", "who": "agent", "seconds": 6.0}
    assert typing.event("agent", typing=False)["seconds"] == 0


def test_a_message_ends_the_typing_at_once_and_the_next_keystroke_is_told_at_once():
    clock = Clock()
    typing = Typing(clock)
    typing.mark("agent")
    assert typing.stop("agent") and not typing.active("agent")
    assert typing.mark("agent")  # not held back by the throttle of the message just sent
    clock.now += 10
    assert not typing.stop("agent")  # long expired: nothing to take away


async def test_a_room_tells_each_side_the_other_types(stub, tmp_path):
    clock = Clock()
    rooms = Rooms(clock=clock)
    screen = RecordingScreen()
    agent = AgentSession(services(stub, tmp_path, rooms=rooms), screen, session_id="agent",
                         user_key="user:ann", page_url="https://chat.example")
    await agent.message("/room", None)
    room = agent.room
    assert room is not None
    queue = room.join(GUEST)
    _drain(queue)
    room.set_guest_language("es")
    await room.guest_typing(GUEST)
    await room.guest_typing(GUEST)  # 0 s later: throttled
    await asyncio.sleep(0)  # the tab's own task shows it
    assert screen.signals == [{"hymt": "visitor_typing", "key": "room",
                               "text": "The customer is typing…", "seconds": 6.0}]
    await room.guest_says(GUEST, "Hola, mi pedido no ha llegado.", "addr:1")
    await asyncio.sleep(0)
    assert screen.signals[-1]["seconds"] == 0  # their message came: the line goes
    await agent.window_message({"hymt": "typing"})  # the tab's script: the agent types
    await agent.window_message({"hymt": "visitor_typing", "text": "x"})  # our own echo: ignored
    await agent.window_message({"hymt": "typing"})  # throttled
    assert _typing(_drain(queue)) == [{"type": "typing", "who": "agent", "seconds": 6.0}]
    await agent.message("Your order ships today.", None)
    assert (await _next(queue, "message"))["message"]["who"] == "agent"
    await agent.window_message({"hymt": "typing"})  # sent: the next keystroke is told at once
    assert _typing(_drain(queue))
    await room.guest_typing("b" * 32)  # not this room's guest: nobody is told
    room.close()
    clock.now += 10
    await agent.window_message({"hymt": "typing"})
    await room.guest_typing(GUEST)
    await asyncio.sleep(0)
    assert not _typing(_drain(queue)) and screen.signals[-1]["seconds"] == 0


async def test_a_desk_visitor_s_typing_reaches_its_holder_s_tab_only(stub, tmp_path):
    clock = Clock()
    rooms = Rooms(clock=clock)
    base = services(stub, tmp_path, rooms=rooms)
    desk = Desk(rooms, translate_for(base.translator, base.settings), clock=clock)
    shared = Services(base.settings, base.translator, base.readiness, base.limiter,
                      base.metrics, rooms=rooms, desk=desk)
    screens = {name: RecordingScreen() for name in ("ann", "bob")}
    tabs = {name: AgentSession(shared, screens[name], session_id=name, user_key=f"user:{name}")
            for name in screens}
    for tab in tabs.values():
        await tab.start()
    ticket = await desk.start("203.0.113.1", "es")
    ticket.room.guests.add(GUEST)
    queue = ticket.room.join(GUEST)
    await ticket.room.guest_typing(GUEST)  # waiting: nobody holds it, nobody is told
    await asyncio.sleep(0)
    assert not screens["ann"].signals and not screens["bob"].signals
    assert tabs["ann"].seat is not None
    await tabs["ann"].seat.take(ticket.number)
    clock.now += 2
    await ticket.room.guest_typing(GUEST)
    await asyncio.sleep(0)
    assert screens["ann"].signals == [{"hymt": "visitor_typing", "key": str(ticket.number),
                                       "text": "#1 · Spanish · the visitor is typing…",
                                       "seconds": 6.0}]
    assert not screens["bob"].signals  # another agent's tab hears nothing of it
    _drain(queue)
    await tabs["ann"].window_message({"hymt": "typing"})  # to the conversation she has open
    await tabs["bob"].window_message({"hymt": "typing"})  # bob has none open: nowhere
    assert _typing(_drain(queue)) == [{"type": "typing", "who": "agent", "seconds": 6.0}]
