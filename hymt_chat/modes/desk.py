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

Limits: the queue holds at most *queue_limit* waiting conversations ("busy"), a
visitor at most *per_visitor* open ones ("too_many"), starts are charged to the visitor's own
allowance (*starts*), and an agent can block a visitor ("blocked"). Each refusal is a
:class:`DeskError` whose key the visitor's page says in their language.

Several replicas (:class:`Remote`, over Redis: ``hymt_chat.room.desk_relay``): ticket numbers
and the queue are the deployment's; a conversation's talk lives on one replica, and an agent who
takes it from another replica has it handed over there, history and all (:meth:`Desk.hand_over`,
:meth:`Desk.adopt`), while the visitor's socket stays where it is and is relayed.

Durable (the rooms' keeper, :mod:`hymt_chat.modes.keeping`): each conversation's row carries its
number, visitor, holder and unread count, written as they change; a process that starts again
takes the open ones back (:meth:`Desk.restore`), its agents' inboxes list them again, and a
visitor's link to one that only the database holds brings it back (:meth:`Rooms.revive`).

Nothing here knows Chainlit, HTTP or Redis.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from hymt_chat.errors import InputError, RateLimitedError
from hymt_chat.modes.agent.conversation import Conversation
from hymt_chat.modes.room import Room, RoomMessage, Rooms, Translate
from hymt_chat.store.conversations import StoredRoom
from hymt_chat.words.source import GUEST as ENGLISH

__all__ = ["Desk", "DeskError", "Remote", "Seat", "Ticket", "TicketView"]

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
        "taken" (another agent took it over), "closed", "typing" / "typed" (its visitor types
        / their message came: told to its holder only), "moved" (its visitor continued on
        another device: told to its holder only)."""
        ...


@dataclass(frozen=True)
class TicketView:
    """A conversation of another replica, as its inbox line and its announcement show it."""

    number: int
    language: str | None
    opened: float
    agent: str | None = None
    taken: float | None = None
    unread: int = 0
    open: bool = True

    def waited(self, now: float) -> float:
        return (self.taken if self.taken is not None else now) - self.opened


class Remote(Protocol):
    """The other replicas, as the desk needs them (``hymt_chat.room.desk_relay``)."""

    replica: str

    async def number(self) -> int:
        """The deployment's next conversation number."""
        ...

    async def others(self) -> list[TicketView]:
        """The open conversations whose talk is on other replicas."""
        ...

    def changed(self, ticket: Ticket, *, new: bool = False) -> None:
        """Say *ticket*'s state to the others (*new*: announce it as waiting)."""
        ...

    async def take(self, number: int, agent: str) -> bool:
        """Ask the replica of conversation *number* to hand it over here, for *agent*."""
        ...

    async def orphaned(self, number: int) -> str | None:
        """The room token of conversation *number* when its replica died (else None)."""
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
    # Several replicas: those the visitor's pages talk to (their sockets), the talk's own
    # replica among them while a socket is there.
    doors: set[str] = field(default_factory=set)
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
        self.remote: Remote | None = None  # the other replicas (HYMT_REDIS_URL)
        self._next = 1
        rooms.reviver, rooms.defaults = self._revive, translate_for

    # --- the visitor's side -----------------------------------------------------------------

    def waiting(self) -> list[Ticket]:
        return [t for t in self.tickets.values() if t.agent is None and t.open]

    async def admit(self, visitor: str, *, count: bool = True) -> None:
        """May *visitor* start a conversation now? DeskError if not; *count*: the start counts
        against their rate (the other checks are asked again at the start itself)."""
        self._prune()
        if visitor in self.blocked:
            raise DeskError("blocked")
        if not self.staffed:
            raise DeskError("desk_closed")  # no agent can sign in: nobody would ever answer
        if sum(1 for t in self.tickets.values() if t.visitor == visitor and t.open) >= \
                self.per_visitor:
            raise DeskError("too_many")
        others = await self.remote.others() if self.remote is not None else []
        if len(self.waiting()) + sum(1 for v in others if v.agent is None) >= self.queue_limit:
            raise DeskError("busy")
        if count and self.starts is not None:
            try:
                await self.starts(visitor)
            except RateLimitedError:
                raise DeskError("rate_limited") from None

    async def start(self, visitor: str, language: str | None,
                    first: Callable[[Room], Awaitable[None]] | None = None, *,
                    admitted: bool = False) -> Ticket:
        """A visitor starts a conversation: it waits in the queue, announced once *first* (the
        visitor's first message) is in it. Raises :class:`DeskError` (blocked, too many of
        theirs open, the queue full, starting too often); *admitted*: :meth:`admit` counted
        this start already (a spoken one, checked before its recording was heard)."""
        await self.admit(visitor, count=not admitted)
        conv = Conversation(self.agent_language)
        if language and language != conv.agent_language:  # the agents' own: nothing to set
            conv.set_customer_language(language)
        if self.remote is not None:
            number = await self.remote.number()
        else:
            number, self._next = self._next, self._next + 1
        room = self.rooms.open(conv, translate=self.translate_for(conv),
                               to_agent=self._router(number), charge=self.charge)
        ticket = Ticket(number, room, visitor, self.clock(),
                        doors={self.remote.replica} if self.remote is not None else set())
        room.on_typing, room.on_moved = self._typing(number), self._moved(number)
        room.notice = "waiting"
        self.tickets[number] = ticket
        if first is not None:
            await first(room)
        self._changed(ticket, new=True)
        await self.announced(ticket)
        return ticket

    async def announced(self, ticket: Ticket | TicketView) -> None:
        """A new conversation waits (here or on another replica): every seat here is told."""
        for seat in list(self.seats):
            await seat.desk_event(ticket, "waiting")  # type: ignore[arg-type]

    def _router(self, number: int) -> Callable[[RoomMessage], Awaitable[None]]:
        async def to_agent(message: RoomMessage) -> None:
            ticket = self.tickets.get(number)
            if ticket is not None:
                await self._from_visitor(ticket, message)
        return to_agent

    def _typing(self, number: int) -> Callable[[bool], Awaitable[None]]:
        async def typed(typing: bool) -> None:
            ticket = self.tickets.get(number)
            if ticket is None:
                return
            for seat in self._holders(ticket):  # its holder's tabs; nobody's while it waits
                await seat.desk_event(ticket, "typing" if typing else "typed")
        return typed

    def _moved(self, number: int) -> Callable[[], Awaitable[None]]:
        async def moved() -> None:
            ticket = self.tickets.get(number)
            if ticket is None:
                return
            for seat in self._holders(ticket):  # its holder's tabs; nobody's while it waits
                await seat.desk_event(ticket, "moved")
        return moved

    def _changed(self, ticket: Ticket, *, new: bool = False) -> None:
        ticket.room.about = {"number": ticket.number, "visitor": ticket.visitor,
                             "agent": ticket.agent, "opened": ticket.opened,
                             "taken": ticket.taken, "unread": ticket.unread}
        ticket.room.kept()
        if self.remote is not None:
            self.remote.changed(ticket, new=new)

    def read(self, ticket: Ticket) -> None:
        """Its holder looks at it now: nothing unread."""
        if ticket.unread:
            ticket.unread = 0
            self._changed(ticket)

    # --- after a restart ----------------------------------------------------------------------

    async def restore(self) -> int:
        """The open conversations of the database, held here again (a restart: the queue, the
        holders, the unread counts, the numbering); how many. Only with one replica: with
        several, each conversation's replica holds it (Redis says which)."""
        keeper = self.rooms.keeper
        if keeper is None or self.remote is not None:
            return 0
        stored, last = await keeper.open_desk()
        self._next = max(self._next, last + 1)
        for row in stored:
            if row.room.number not in self.tickets:
                self.rooms.hold(self._revive(row))
        return len(stored)

    def _revive(self, stored: StoredRoom) -> Room:
        """A stored room held again: a desk conversation with its ticket, or an agent's own
        room translated with the deployment's defaults until that agent's tab takes it back."""
        row = stored.room

        async def unattended(message: RoomMessage) -> None:
            """Kept in the room's history (and the database) for its agent's return."""
        number = row.number
        room = Room.revived(stored, translate=self.translate_for(Conversation(
            self.agent_language)), to_agent=unattended if number is None else self._router(
            number), charge=self.charge, clock=self.clock)
        room.translate = self.translate_for(room.conv)
        if number is not None:
            room.on_typing, room.on_moved = self._typing(number), self._moved(number)
            ticket = Ticket(number, room, row.visitor or "", row.opened, row.agent, row.taken,
                            row.unread, doors={self.remote.replica} if self.remote else set())
            self.tickets[number] = ticket
            if self.remote is not None and ticket.open:  # a dead replica's: this one's now
                self._changed(ticket)
        return room

    async def _from_visitor(self, ticket: Ticket, message: RoomMessage) -> None:
        if not ticket.shown_to:
            ticket.unread += 1
            self._changed(ticket)
        for seat in self._holders(ticket):
            await seat.desk_event(ticket, "message", message)

    def _holders(self, ticket: Ticket) -> list[Seat]:
        return [s for s in self.seats if ticket.agent is not None and s.agent == ticket.agent]

    # --- the agents' side -------------------------------------------------------------------

    async def sit(self, seat: Seat) -> list[Ticket]:
        """A tab of *seat.agent* opened (or reloaded): it hears the desk's news; the open
        conversations that agent holds, theirs still (those whose talk is on another replica
        are handed over here)."""
        self.seats.add(seat)
        if self.remote is not None:
            for view in await self.remote.others():
                if view.agent == seat.agent and not await self.orphaned(view.number):
                    await self.remote.take(view.number, seat.agent)
        return self.held_by(seat.agent)

    async def orphaned(self, number: int) -> bool:
        """Conversation *number*'s replica died: it is read back from the database and is this
        replica's now (False: it is not a dead replica's, or the database has no open one)."""
        token = await self.remote.orphaned(number) if self.remote is not None else None
        return token is not None and await self.rooms.revive(token) is not None

    def stand(self, seat: Seat) -> None:
        """The tab closed: the agent keeps their conversations (a reload finds them)."""
        self.seats.discard(seat)
        for ticket in self.tickets.values():
            ticket.shown_to.discard(seat)
            if ticket.agent == seat.agent and not self._holders(ticket):
                self._unbind(ticket)

    def held_by(self, agent: str) -> list[Ticket]:
        return [t for t in self.tickets.values() if t.agent == agent and t.open]

    async def inbox(self, agent: str) -> list[Ticket | TicketView]:
        """What an agent sees: the waiting ones (oldest first), then their own, then the
        others' open ones (to take over) — of every replica."""
        here: list[Ticket | TicketView] = [t for t in self.tickets.values() if t.open]
        if self.remote is not None:
            here += await self.remote.others()
        open_ones = sorted(here, key=lambda t: t.opened)
        return ([t for t in open_ones if t.agent is None]
                + [t for t in open_ones if t.agent == agent]
                + [t for t in open_ones if t.agent not in (None, agent)])

    def by_token(self, token: str) -> Ticket | None:
        found = [t for t in self.tickets.values() if t.room.token == token]
        return found[0] if found else None

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
        if ticket is None and await self.orphaned(number):
            ticket = self.get(number)
        if ticket is None and self.remote is not None and await self.remote.take(number,
                                                                                 seat.agent):
            ticket = self.get(number)  # handed over by its replica, taken for this agent
            if ticket is not None:
                bind(ticket)
                return ticket
        if ticket is None:
            raise InputError.worded("desk_no_such", n=number)
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
        self._changed(ticket)
        return ticket

    async def hand_over(self, number: int, agent: str) -> dict[str, Any] | None:
        """Another replica's *agent* takes conversation *number*: its state to carry there
        (None: no such open one here). It leaves this replica's desk; its former holder here
        is told."""
        ticket = self.get(number)
        if ticket is None:
            return None
        before, ticket.agent = ticket.agent, agent
        for other in [s for s in self.seats if before not in (None, agent) and s.agent == before]:
            ticket.shown_to.discard(other)
            await other.desk_event(ticket, "taken")
        del self.tickets[number]
        if before != agent:
            ticket.room.tell_guests("joined")
        return {"number": number, "visitor": ticket.visitor, "opened": ticket.opened,
                "taken": ticket.taken or self.clock(), "agent": agent,
                "doors": sorted(ticket.doors), "room": ticket.room.state()}

    def adopt(self, state: dict[str, Any]) -> Ticket:
        """A conversation handed over by another replica (:meth:`hand_over`), now here."""
        number = state["number"]
        room = self.rooms.adopt(state["room"], translate=self.translate_for(
            Conversation(self.agent_language)), to_agent=self._router(number),
            charge=self.charge)
        room.translate = self.translate_for(room.conv)
        room.on_typing, room.on_moved = self._typing(number), self._moved(number)
        ticket = Ticket(number, room, state["visitor"], state["opened"], state["agent"],
                        state["taken"], doors=set(state["doors"]))
        self.tickets[number] = ticket
        self._changed(ticket)
        return ticket

    def close(self, ticket: Ticket) -> None:
        ticket.room.close("closed")
        ticket.shown_to.clear()
        self._changed(ticket)

    async def erase(self, tokens: list[str]) -> int:
        """Erase these conversations (their tickets too): :meth:`Rooms.erase`."""
        for number, ticket in list(self.tickets.items()):
            if ticket.room.token in tokens:
                ticket.room.keeper = None
                ticket.room.close()
                del self.tickets[number]
                self._changed(ticket)  # the other replicas' inboxes drop it
        return await self.rooms.erase(tokens)

    def block(self, ticket: Ticket) -> None:
        """The visitor of *ticket* starts no more conversations here; this one ends."""
        self.blocked.add(ticket.visitor)
        for other in self.tickets.values():
            if other.visitor == ticket.visitor and other.open:
                other.room.close("blocked")
                self._changed(other)

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
