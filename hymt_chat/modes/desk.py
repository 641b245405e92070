"""The support desk: visitors start conversations that wait in the deployment's queue, and
signed-in agents take them, several at once, from one tab.

A desk conversation (:class:`Ticket`) IS a :class:`~hymt_chat.modes.room.Room` — its own
:class:`~hymt_chat.modes.agent.conversation.Conversation` (the visitor's language, glossary,
masking, the back-translation check, the transcript) and the room's guest page and socket —
with a number, a visitor, a holder and an unread count on top. While nobody holds it, its
messages are translated with the deployment's defaults and counted as unread; the agent who
takes it binds the room to their tab (their switches, their screen) and lets go of it when
their tab closes: the conversation stays theirs, waiting for their reload
(:meth:`Desk.attach`). Another agent may take it over, history and all.

Limits (issue 29): the queue holds at most *queue_limit* waiting conversations ("busy"), a
visitor at most *per_visitor* open ones ("too_many"), starts are charged to the visitor's own
allowance (*starts*), and an agent can block a visitor ("blocked"). Each refusal is a
:class:`DeskError` whose key the visitor's page says in their language.

Nothing here knows Chainlit or HTTP; one process's desk (several replicas: not yet shared).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from hymt_chat.errors import InputError, RateLimitedError
from hymt_chat.modes.agent.conversation import Conversation
from hymt_chat.modes.guest_words import ENGLISH
from hymt_chat.modes.room import Room, RoomMessage, Rooms, Translate

__all__ = ["Desk", "DeskError", "Seat", "Ticket"]

TranslateFor = Callable[[Conversation], Translate]  # the deployment's defaults, per ticket
Charge = Callable[[str, str], Awaitable[None]]  # (visitor's allowance key, text)


class DeskError(InputError):
    """A start the desk refuses; ``key``: the page words' sentence for the visitor."""

    def __init__(self, key: str) -> None:
        super().__init__(ENGLISH[key])
        self.key = key


class Seat(Protocol):
    """An agent's tab at the desk: told what happens to the conversations it may care for."""

    agent: str  # who sits there (the signed-in agent's key, "user:<name>")

    async def desk_event(self, ticket: Ticket, what: str,
                         message: RoomMessage | None = None) -> None:
        """*what*: "waiting" (a new one in the queue), "message" (its visitor wrote),
        "taken" (another agent took it over), "closed"."""
        ...


@dataclass(eq=False)
class Ticket:
    """One desk conversation: its room, who started it, who holds it."""

    number: int
    room: Room
    visitor: str  # the visitor's allowance key (their address): limits and blocks
    opened: float
    agent: str | None = None  # the holder's key; None while it waits in the queue
    taken: float | None = None
    unread: int = 0  # the visitor's messages its holder has not looked at yet
    shown_to: set[Seat] = field(default_factory=set)  # seats that have it open now

    @property
    def language(self) -> str | None:
        return self.room.conv.customer_language

    @property
    def open(self) -> bool:
        return self.room.refusal_key() is None

    def waited(self, now: float) -> float:
        """Seconds it waited (or has been waiting) for an agent."""
        return (self.taken if self.taken is not None else now) - self.opened


class Desk:
    """Every desk conversation of this process, the queue among them, and the seats."""

    def __init__(self, rooms: Rooms, translate_for: TranslateFor, *, agent_language: str = "en",
                 queue_limit: int = 20, per_visitor: int = 2, charge: Charge | None = None,
                 starts: Callable[[str], Awaitable[None]] | None = None,
                 staffed: bool = True, clock: Callable[[], float] = time.time) -> None:
        self.rooms = rooms
        self.translate_for = translate_for
        self.agent_language = agent_language
        self.queue_limit = queue_limit
        self.per_visitor = per_visitor
        self.charge = charge  # a visitor's message: their own allowance, as a room guest's
        self.starts = starts  # a start: raises RateLimitedError past the visitor's allowance
        self.staffed = staffed  # agents can sign in (HYMT_AGENTS): else nobody could answer
        self.clock = clock
        self.tickets: dict[int, Ticket] = {}
        self.blocked: set[str] = set()
        self.seats: set[Seat] = set()
        self._next = 1

    # --- the visitor's side -----------------------------------------------------------------

    def waiting(self) -> list[Ticket]:
        return [t for t in self.tickets.values() if t.agent is None and t.open]

    async def start(self, visitor: str, language: str | None) -> Ticket:
        """A visitor starts a conversation: it waits in the queue. Raises :class:`DeskError`
        (blocked, too many of theirs open, the queue full, starting too often)."""
        self._prune()
        if visitor in self.blocked:
            raise DeskError("blocked")
        if not self.staffed:
            raise DeskError("busy")  # no agent can sign in to answer: said as "all are busy"
        if sum(1 for t in self.tickets.values() if t.visitor == visitor and t.open) >= \
                self.per_visitor:
            raise DeskError("too_many")
        if len(self.waiting()) >= self.queue_limit:
            raise DeskError("busy")
        if self.starts is not None:
            try:
                await self.starts(visitor)
            except RateLimitedError:
                raise DeskError("rate_limited") from None
        conv = Conversation(self.agent_language)
        if language:
            conv.set_customer_language(language)
        number = self._next
        self._next += 1
        ticket: Ticket | None = None

        async def to_agent(message: RoomMessage) -> None:
            assert ticket is not None
            await self._from_visitor(ticket, message)

        room = self.rooms.open(conv, translate=self.translate_for(conv), to_agent=to_agent,
                               charge=self.charge)
        ticket = Ticket(number, room, visitor, self.clock())
        room.notice = "waiting"
        self.tickets[number] = ticket
        for seat in list(self.seats):
            await seat.desk_event(ticket, "waiting")
        return ticket

    async def _from_visitor(self, ticket: Ticket, message: RoomMessage) -> None:
        if not ticket.shown_to:
            ticket.unread += 1
        for seat in self._holders(ticket):
            await seat.desk_event(ticket, "message", message)

    def _holders(self, ticket: Ticket) -> list[Seat]:
        return [s for s in self.seats if ticket.agent is not None and s.agent == ticket.agent]

    # --- the agents' side -------------------------------------------------------------------

    def sit(self, seat: Seat) -> list[Ticket]:
        """A tab of *seat.agent* opened (or reloaded): it hears the desk's news; the open
        conversations that agent holds, theirs still."""
        self.seats.add(seat)
        return self.held_by(seat.agent)

    def stand(self, seat: Seat) -> None:
        """The tab closed: the agent keeps their conversations (a reload finds them)."""
        self.seats.discard(seat)
        for ticket in self.tickets.values():
            ticket.shown_to.discard(seat)
            if ticket.agent == seat.agent and not self._holders(ticket):
                self._unbind(ticket)

    def held_by(self, agent: str) -> list[Ticket]:
        return [t for t in self.tickets.values() if t.agent == agent and t.open]

    def inbox(self, agent: str) -> list[Ticket]:
        """What an agent sees: the waiting ones (oldest first), then their own, then the
        others' open ones (to take over)."""
        open_ones = sorted((t for t in self.tickets.values() if t.open), key=lambda t: t.opened)
        return ([t for t in open_ones if t.agent is None]
                + [t for t in open_ones if t.agent == agent]
                + [t for t in open_ones if t.agent not in (None, agent)])

    def holder_of(self, room: Room) -> str | None:
        """Who holds the desk conversation of *room* (None: not a desk's, or waiting)."""
        found = [t.agent for t in self.tickets.values() if t.room is room]
        return found[0] if found else None

    def get(self, number: int) -> Ticket | None:
        ticket = self.tickets.get(number)
        return ticket if ticket is not None and ticket.open else None

    async def take(self, seat: Seat, number: int, bind: Callable[[Ticket], None]) -> Ticket:
        """*seat*'s agent takes conversation *number* (from the queue, or over from another
        agent, who is told); *bind* ties its room to the taker's tab. Raises InputError."""
        ticket = self.get(number)
        if ticket is None:
            raise InputError(f"There is no open conversation #{number}.")
        before = ticket.agent
        if before == seat.agent:
            bind(ticket)
            return ticket
        ticket.agent = seat.agent
        if ticket.taken is None:
            ticket.taken = self.clock()
        for other in [s for s in self.seats if before is not None and s.agent == before]:
            ticket.shown_to.discard(other)
            await other.desk_event(ticket, "taken")
        bind(ticket)
        ticket.room.tell_guests("joined")
        return ticket

    def close(self, ticket: Ticket) -> None:
        ticket.room.close("closed")
        ticket.shown_to.clear()

    def block(self, ticket: Ticket) -> None:
        """The visitor of *ticket* starts no more conversations here; this one ends."""
        self.blocked.add(ticket.visitor)
        for other in self.tickets.values():
            if other.visitor == ticket.visitor and other.open:
                other.room.close("blocked")

    def _prune(self) -> None:
        """Forget conversations ended more than an hour ago (their rooms go then too)."""
        now = self.clock()
        for number, ticket in list(self.tickets.items()):
            room = ticket.room
            ended = room.closed_at if room.closed_at is not None else (
                room.expires_at if not ticket.open else None)
            if ended is not None and now > ended + 3600:
                del self.tickets[number]

    def _unbind(self, ticket: Ticket) -> None:
        """Nobody's tab shows it now: its messages are translated with the defaults again."""
        ticket.room.translate = self.translate_for(ticket.room.conv)
        ticket.room.on_pending = None
