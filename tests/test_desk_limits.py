"""The desk's limits on its own (no app, no model call: a start translates nothing): the
queue's length, a visitor's open conversations, a blocked visitor, a desk nobody can staff,
and conversations forgotten an hour after they end."""

from __future__ import annotations

import pytest

from hymt_chat.engine.translator import Translator
from hymt_chat.errors import RateLimitedError
from hymt_chat.modes.agent.desk_seat import translate_for
from hymt_chat.modes.desk import Desk, DeskError
from hymt_chat.modes.room import Rooms
from hymt_chat.settings import Settings


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class Seat:
    """An agent's tab as the desk sees it: who sits there, and what it was told."""

    def __init__(self, agent: str) -> None:
        self.agent, self.told = agent, []

    async def desk_event(self, ticket, what, message=None) -> None:
        self.told.append((ticket.number, what))


def _desk(tmp_path, **kw) -> tuple[Desk, Clock]:
    settings = Settings(cache_dir=tmp_path, base_url="http://127.0.0.1:9/v1")
    clock = Clock()
    rooms = Rooms(clock=clock)
    return Desk(rooms, translate_for(Translator(settings), settings), clock=clock, **kw), clock


async def test_the_queue_refuses_past_its_length_and_lets_in_once_one_is_taken(tmp_path):
    desk, _ = _desk(tmp_path, queue_limit=2, per_visitor=10)
    seat = Seat("user:alice")
    await desk.sit(seat)
    first = await desk.start("203.0.113.1", "es")
    await desk.start("203.0.113.2", "ja")
    with pytest.raises(DeskError) as busy:
        await desk.start("203.0.113.3", "de")
    assert busy.value.key == "busy" and "busy" in str(busy.value)
    assert seat.told == [(1, "waiting"), (2, "waiting")]
    await desk.take(seat, first.number, lambda ticket: None)
    assert first.room.notice == "joined" and [t.number for t in desk.waiting()] == [2]
    assert (await desk.start("203.0.113.3", "de")).number == 3


async def test_one_visitor_cannot_open_a_hundred(tmp_path):
    desk, _ = _desk(tmp_path, queue_limit=100, per_visitor=2)
    refused = []
    for _ in range(100):
        try:
            await desk.start("198.51.100.7", "fr")
        except DeskError as err:
            refused.append(err.key)
    assert len(desk.tickets) == 2 and refused == ["too_many"] * 98


async def test_a_blocked_visitor_is_closed_and_refused(tmp_path):
    desk, _ = _desk(tmp_path)
    ticket = await desk.start("192.0.2.9", "ru")
    queue = ticket.room.join("a" * 32)
    desk.block(ticket)
    assert ticket.room.refusal_key() == "blocked" and not ticket.open
    assert [e for e in _drain(queue) if e["type"] == "closed"][0]["key"] == "blocked"
    with pytest.raises(DeskError) as blocked:
        await desk.start("192.0.2.9", "ru")
    assert blocked.value.key == "blocked"
    assert (await desk.start("192.0.2.10", "ru")).open  # another visitor still may


async def test_a_visitor_in_the_agents_own_language_starts_and_picks_it(tmp_path):
    desk, _ = _desk(tmp_path)
    ticket = await desk.start("192.0.2.5", "en")  # the agents' language: nothing to translate
    assert ticket.open and ticket.language is None
    assert ticket.room.set_guest_language("en") == "en"  # picked on the page: no error either


async def test_a_desk_no_agent_can_sign_in_to_takes_nobody(tmp_path):
    desk, _ = _desk(tmp_path, staffed=False)
    with pytest.raises(DeskError) as closed:
        await desk.start("192.0.2.1", "es")
    assert closed.value.key == "desk_closed" and not desk.tickets


async def test_ended_conversations_are_forgotten_after_an_hour(tmp_path):
    desk, clock = _desk(tmp_path)
    ended = await desk.start("192.0.2.1", "es")
    desk.close(ended)
    clock.now += 3601
    await desk.start("192.0.2.2", "es")
    assert list(desk.tickets) == [2]


def _drain(queue) -> list[dict]:
    got = []
    while not queue.empty():
        got.append(queue.get_nowait())
    return got


async def test_a_spoken_start_is_admitted_before_it_is_heard_and_counted_once(tmp_path):
    """``/desk/start`` with a recording asks :meth:`Desk.admit` before waking the recogniser:
    a visitor past their allowance is refused unheard, and the start that follows the hearing
    is not charged a second time, while its other checks are asked again."""
    charged: list[str] = []

    async def starts(visitor: str) -> None:
        if charged.count(visitor) >= 1:
            raise RateLimitedError(60)
        charged.append(visitor)

    desk, _ = _desk(tmp_path, queue_limit=10, per_visitor=1, starts=starts)
    await desk.sit(Seat("user:alice"))
    await desk.admit("198.51.100.4")
    await desk.start("198.51.100.4", "fr", admitted=True)
    assert charged == ["198.51.100.4"]
    with pytest.raises(DeskError) as again:  # open already: refused before any hearing
        await desk.admit("198.51.100.4", count=False)
    assert again.value.key == "too_many"
    await desk.admit("198.51.100.5")
    with pytest.raises(DeskError) as twice:
        await desk.admit("198.51.100.5")
    assert twice.value.key == "rate_limited" and charged.count("198.51.100.5") == 1
