"""A translated room: the agent in the chat page, the customer on their own phone, each writing in
their own language and reading the other's in theirs, the original one tap away.

A :class:`Room` belongs to one agent session and shares its
:class:`~hymt_chat.modes.agent.conversation.Conversation` — the customer's language memory, the
glossary, masking and the back-translation check apply as in the agent mode, and every message
lands in the transcript. Guests connect to it through ``hymt_chat.room.page`` (a websocket);
each connection is a queue of events. :class:`Rooms` hands out tokens and refuses unknown,
expired and closed ones. With a keeper (:mod:`~hymt_chat.modes.keeping`) every room and message
is written to the deployment's database as it changes, and a room this process does not hold
(it restarted) is read back from there: the process holds only a cache. Either side's typing
is told to the other (throttled, expiring on its own: :mod:`~hymt_chat.modes.typing`). An
agent's reply whose checks found something is held (:class:`HeldReply`): the guests get nothing
until the agent sends it anyway or drops it to write it again. Nothing here knows Chainlit or HTTP.

A customer may move to another device: the room's link is the key, and a device that opens it
when the room is full takes the conversation over (:meth:`Room.join`). It gets the history;
the device it replaces is told ("moved") and loses its place; the agent reads one line. A page
that reconnects by itself never takes over: two open pages do not wrest the room from each
other, only a link opened (or a page reloaded) does.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal, Protocol

from hymt_chat.errors import HymtError, InputError, RateLimitedError, reason_of
from hymt_chat.lang.names import language_name
from hymt_chat.modes.agent.conversation import Conversation, Turn
from hymt_chat.modes.agent.turns import AgentTurn
from hymt_chat.modes.keeping import RoomKeeper, keep_rooms
from hymt_chat.modes.typing import Typing
from hymt_chat.settings import Settings
from hymt_chat.store.conversations import MessageRecord, RoomRecord, StoredRoom
from hymt_chat.words.said import Said, said
from hymt_chat.words.source import GUEST as ENGLISH

__all__ = ["GuestRelay", "HeldReply", "Room", "RoomError", "RoomMessage",
           "Rooms"]

_log = logging.getLogger(__name__)

Who = Literal["agent", "guest"]
Translate = Callable[[str, str], Awaitable[AgentTurn]]  # (text, side) -> the turn
Deliver = Callable[["RoomMessage"], Awaitable[None]]
Charge = Callable[[str, str], Awaitable[None]]  # (payer's allowance key, text)
Typed = Callable[[bool], Awaitable[None]]  # the guest types (True) or their message came (False)
Event = dict[str, Any]
HELD_REPLIES = 20  # per room: the agent's flagged replies awaiting "Send anyway" or "Edit"
# The agent's line when the customer's conversation moved to another device: said at most once
# in this many seconds (a link opened in a loop does not fill the agent's chat; each move still
# takes place and the device it replaced is still told).
MOVED_TOLD_SECONDS = 30.0


# Why a message went untranslated, as the agent's page says it (errors.Reason's words).
_REASON_WORDS = {"busy": "reason_busy", "unavailable": "reason_unavailable",
                 "timeout": "reason_timeout"}


def _english(key: str) -> str:
    """The English of a guest page's word (a key of the page words)."""
    return ENGLISH.get(key) or ENGLISH["ended"]


class RoomError(InputError):
    """A join link that leads nowhere (unknown, expired, closed), or a page whose conversation
    continued on another device ("moved").

    ``known``: the link was a room's once (expired or closed), not a made-up one. ``key``: the
    sentence's key in the guest pages' words (``hymt_chat.modes.guest_words``), which the guest
    reads in their language; the message is its English.
    """

    def __init__(self, key: str, *, known: bool = True) -> None:
        super().__init__(_english(key))
        self.key, self.known = key, known


@dataclass(frozen=True, slots=True)
class RoomMessage:
    """One message of the room, as both sides see it."""

    seq: int
    who: Who
    original: str
    source: str | None  # its language (detected or chosen)
    translation: str | None  # None: it could not be translated; *note* says why
    target: str
    at: float  # Unix time
    note: Said | str | None = None  # the agent's page words a Said; a restored one is English
    warnings: tuple[str, ...] = ()
    ref: str | None = None  # the guest page's id for what it sent: sent again, taken once

    def fields(self) -> dict[str, Any]:
        """Its fields as JSON holds them (the note in English)."""
        return {**asdict(self), "note": None if self.note is None else str(self.note)}

    def event(self) -> Event:
        body = self.fields()
        body["source_name"] = language_name(self.source) if self.source else None
        body["target_name"] = language_name(self.target)
        return {"type": "message", "message": body}


@dataclass(frozen=True, slots=True)
class HeldReply:
    """The agent's reply whose checks found something, kept unsent: a wrong value must not
    reach the customer before the agent has read the warning."""

    key: str  # random: what the agent's "Send anyway" and "Edit" name
    message: RoomMessage  # not numbered yet (seq 0): it takes its number when sent
    turn: Turn | None  # its transcript line, dropped with it


class GuestRelay(Protocol):
    """What a guest here says, sent on to the replica where their room's talk is."""

    def says(self, guest: str, text: str, payer: str, ref: str | None = None) -> None: ...

    def language(self, code: str) -> None: ...

    def typing(self, guest: str) -> None: ...

    def moved(self, guest: str, gone: list[str]) -> None: ...


class Room:
    """One conversation between an agent and (by default one) guest."""

    def __init__(self, token: str, conv: Conversation, *, translate: Translate,
                 to_agent: Deliver, expires_at: float, max_guests: int = 1,
                 charge: Charge | None = None,
                 on_pending: Callable[[], Awaitable[None]] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.token = token
        self.on_pending = on_pending  # the agent's side shows "translating…" meanwhile
        self.conv = conv
        self.translate = translate
        self.to_agent = to_agent
        self.expires_at = expires_at
        self.max_guests = max_guests
        self.charge = charge  # (payer, text): raises RateLimitedError past the allowance
        self.clock = clock
        self.closed: str | None = None  # why, once closed (a key of the page words)
        self.closed_at: float | None = None
        self.history: list[RoomMessage] = []
        self.guests: set[str] = set()  # admitted guests, by the key their browser keeps
        self.notice: str | None = None  # what the guest's page says meanwhile (desk: "waiting")
        self._queues: dict[str, asyncio.Queue[Event]] = {}
        # Several replicas (the desk): the guests' sockets may be on another replica than the
        # room's talk. *door* sends this room's events to the guests' replica; *relay* (on the
        # guests' replica) sends what a guest says to the room's.
        self.door: Callable[[Event, str | None], None] | None = None
        self.relay: GuestRelay | None = None
        self.typing = Typing(clock)
        self.on_typing: Typed | None = None  # the agent's side shows "the visitor is typing…"
        self.on_moved: Callable[[], Awaitable[None]] | None = None  # the agent reads one line
        self._moved_told = float("-inf")  # when the agent was last told of a move
        self._arrived: dict[str, float] = {}  # each guest's latest connection (this process)
        self._tasks: set[asyncio.Task[Any]] = set()
        self.held: dict[str, HeldReply] = {}  # the agent's flagged replies, oldest first
        self.opened = clock()
        # What its holder adds to its row: the desk's number, visitor, agent, taken, unread;
        # an agent's own room: the agent.
        self.about: dict[str, Any] = {}
        self.keeper: RoomKeeper | None = None  # writes it to the database as it changes
        self._refs: set[str] = set()  # the guests' message ids taken (sent or under way)

    @classmethod
    def revived(cls, stored: StoredRoom, *, translate: Translate, to_agent: Deliver,
                charge: Charge | None = None,
                clock: Callable[[], float] = time.time) -> Room:
        """The room of a stored row and its messages (this process did not hold it)."""
        row = stored.room
        room = cls(row.token, Conversation.from_dict(row.state["conv"]), translate=translate,
                   to_agent=to_agent, expires_at=row.expires_at,
                   max_guests=row.state.get("max_guests", 1), charge=charge, clock=clock)
        room.opened, room.closed, room.closed_at = row.opened, row.closed, row.closed_at
        room.guests = set(row.state.get("guests", ()))
        room.notice = row.state.get("notice")
        room.about = {k: v for k, v in (("number", row.number), ("agent", row.agent),
                                        ("visitor", row.visitor), ("taken", row.taken),
                                        ("unread", row.unread)) if v is not None}
        room.history = [RoomMessage(**m.fields()) for m in stored.messages]
        room._refs = {m.ref for m in stored.messages if m.ref}
        return room

    def record(self) -> RoomRecord:
        """The room's row for the database (its messages are rows of their own)."""
        about = self.about
        return RoomRecord(
            self.token, "desk" if "number" in about else "room", about.get("opened", self.opened),
            self.expires_at, {"conv": self.conv.to_dict(), "max_guests": self.max_guests,
                              "guests": sorted(self.guests), "notice": self.notice},
            about.get("number"), about.get("agent"), about.get("visitor"), about.get("taken"),
            about.get("unread", 0), self.closed, self.closed_at)

    def kept(self) -> None:
        """The room changed: its row is written (not by a door to another replica's talk)."""
        if self.keeper is not None and self.relay is None:
            self.keeper.room(self.record())

    # --- who may be here ----------------------------------------------------------------------

    def refusal_key(self) -> str | None:
        """Why this room cannot be used now (a key of the page words), None when it is open."""
        if self.closed:
            return self.closed
        if self.clock() >= self.expires_at:
            return "expired"
        return None

    def refusal(self) -> str | None:
        """Why this room cannot be used now, in English, or None when it is open."""
        key = self.refusal_key()
        return _english(key) if key else None

    def join(self, guest: str, *, resume: bool = False) -> asyncio.Queue[Event]:
        """Admit *guest* (again, after a reload: the same key) and open their event queue,
        which starts with the room's history. Raises :class:`RoomError`.

        *guest* is a device's key (its page makes one at random and keeps it). A new device
        when the room is full takes the conversation over from the device that was away
        longest (one guest: the only one): that one is told ("moved") and is no longer
        admitted, and the agent is told. *resume*: the page reconnects by itself (the
        connection dropped) rather than being opened; it never takes over, and a device that
        lost its place meanwhile is told so (:class:`RoomError` "moved")."""
        refused = self.refusal_key()
        if refused:
            raise RoomError(refused)
        gone: list[str] = []
        if guest not in self.guests:
            if len(self.guests) >= self.max_guests:
                if resume:
                    raise RoomError("moved")
                gone = self._longest_away(len(self.guests) - self.max_guests + 1)
            self.guests.add(guest)
            if not gone:
                self.kept()
        queue: asyncio.Queue[Event] = asyncio.Queue()
        old = self._queues.get(guest)
        if old is not None:  # the same guest on a new connection: the old one is replaced
            old.put_nowait({"type": "replaced"})
        self._queues[guest] = queue
        self._arrived[guest] = self.clock()
        queue.put_nowait(self.welcome())
        if gone:
            self.took_over(guest, gone)
        return queue

    def _longest_away(self, count: int) -> list[str]:
        """The *count* guests a new device replaces: those not connected first, then those
        connected longest ago."""
        order = sorted(self.guests, key=lambda g: (g in self._queues, self._arrived.get(g, 0.0),
                                                   g))
        return order[:count]

    def took_over(self, guest: str, gone: list[str]) -> None:
        """*guest*'s device took the conversation over from *gone*'s: they are no longer
        admitted and their pages say so; the agent reads one line (at most one in
        :data:`MOVED_TOLD_SECONDS`). Also what the room's talk on another replica hears from the
        replica where the new device connected (the desk's relay)."""
        for old in gone:
            self.guests.discard(old)
            self._arrived.pop(old, None)
            self._tell(old, {"type": "moved", "key": "moved", "text": _english("moved")})
        self.guests.add(guest)
        self.kept()
        if self.relay is not None:  # the room's talk is on another replica: told there
            self.relay.moved(guest, gone)
            return
        now, told = self.clock(), self.on_moved
        if told is not None and now - self._moved_told >= MOVED_TOLD_SECONDS:
            self._moved_told = now

            async def tell() -> None:
                await told()
            task = asyncio.get_running_loop().create_task(tell())
            self._tasks.add(task)
            task.add_done_callback(self._told)

    def _told(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (err := task.exception()) is not None:
            _log.error("the agent could not be told of a move", exc_info=err)

    def leave(self, guest: str, queue: asyncio.Queue[Event]) -> None:
        if self._queues.get(guest) is queue:
            del self._queues[guest]

    def welcome(self) -> Event:
        return {"type": "welcome", "guest_language": self.conv.customer_language,
                "agent_language": self.conv.agent_language, "notice": self.notice,
                "history": [m.event()["message"] for m in self.history]}

    def _to_guests(self, event: Event) -> None:
        if self.door is not None:
            self.door(event, None)
        for queue in self._queues.values():
            queue.put_nowait(event)

    def tell_guests(self, key: str) -> None:
        """A notice for the guests' pages (a key of the page words), kept for a reload."""
        self.notice = key
        self.kept()
        self._to_guests({"type": "notice", "key": key})

    def close(self, key: str = "closed") -> None:
        """End the room; *key* says why ("closed", "left": the page words' keys)."""
        if self.closed is None:
            self.closed, self.closed_at = key, self.clock()
            self.kept()
            self._to_guests({"type": "closed", "key": key, "text": _english(key)})

    # --- the guest's side ---------------------------------------------------------------------

    async def guest_typing(self, guest: str) -> None:
        """A guest is typing: the agent's side is told (throttled, here and at the door)."""
        if self.refusal_key() or guest not in self.guests or not self.typing.mark("guest"):
            return
        if self.relay is not None:  # the room's talk is on another replica
            self.relay.typing(guest)
        elif self.on_typing is not None:
            await self.on_typing(True)

    def set_guest_language(self, code: str) -> str:
        """The guest picked their language (a code of ours, checked)."""
        if self.relay is not None:
            self.relay.language(code)
        try:
            self.conv.set_customer_language(code)
        except InputError:  # the agent's own language: nothing to set, both read it as is
            pass
        self.kept()
        return self.conv.customer_language or code

    async def guest_says(self, guest: str, text: str, payer: str,
                         ref: str | None = None) -> None:
        """A guest's message: translated for the agent, shown on both sides. It is charged to
        *payer*, the guest's own allowance (their address, as the chat would charge them): a
        room is not a fresh allowance, or each room opened would give a client its limit again.
        *ref*: the page's id for it; the page sends it again until it comes back as a message
        (it went out while the server was away), and a second one is ignored."""
        if self.refusal() or guest not in self.guests:
            return
        typed = self.typing.stop("guest")  # they sent it: no longer typing
        if self.relay is not None:  # the room's talk is on another replica
            self.relay.says(guest, text, payer, ref)
            return
        if ref is not None:
            if ref in self._refs:
                return
            self._refs.add(ref)
        try:
            if self.charge is not None:
                await self.charge(payer, text)
        except RateLimitedError as err:
            self._tell(guest, {"type": "error", "key": "rate_limited", "text": str(err),
                               "ref": ref})
            return
        if typed and self.on_typing is not None:
            await self.on_typing(False)
        self._to_guests({"type": "pending", "who": "guest"})
        if self.on_pending is not None:
            await self.on_pending()
        before = self.conv.customer_language
        try:
            message, _ = await self._translated(text, "customer", "guest")
        except InputError as err:  # empty, too long: said to the guest, nothing sent
            self._tell(guest, {"type": "error", "key": "refused", "text": str(err), "ref": ref})
            return
        message = self._post(replace(message, ref=ref))
        await self.to_agent(message)
        if self.conv.customer_language != before:  # detected: they write in another language
            self._to_guests({"type": "language", "code": self.conv.customer_language})

    def _tell(self, guest: str, event: dict[str, Any]) -> None:
        """One guest's own event; nothing if they left while their message was translated."""
        if self.door is not None:
            self.door(event, guest)
        queue = self._queues.get(guest)
        if queue is not None:
            queue.put_nowait(event)

    def relayed(self, event: Event, guest: str | None) -> None:
        """An event of this room's talk on another replica, for the guests here: kept as the
        room's own (history, notice, closing), then shown."""
        kind = event.get("type")
        if kind == "message":
            body = {k: v for k, v in event["message"].items()
                    if k in RoomMessage.__dataclass_fields__}
            self.history.append(RoomMessage(**{**body, "warnings": tuple(body["warnings"])}))
        elif kind == "notice":
            self.notice = event.get("key")
        elif kind == "closed" and self.closed is None:
            self.closed, self.closed_at = event.get("key") or "closed", self.clock()
        elif kind == "moved" and guest is not None:  # that device is no longer admitted here
            self.guests.discard(guest)
        if guest is None:
            for queue in self._queues.values():
                queue.put_nowait(event)
        elif (own := self._queues.get(guest)) is not None:
            own.put_nowait(event)

    def state(self) -> dict[str, Any]:
        """The room as JSON, to carry to another replica (the desk's take-over)."""
        return {"token": self.token, "conv": self.conv.to_dict(), "expires_at": self.expires_at,
                "max_guests": self.max_guests, "guests": sorted(self.guests),
                "notice": self.notice, "history": [m.fields() for m in self.history]}

    def restore(self, state: dict[str, Any]) -> None:
        """Take over the talk of :meth:`state` (this room's, from another replica)."""
        self.conv = Conversation.from_dict(state["conv"])
        self.expires_at, self.max_guests = state["expires_at"], state["max_guests"]
        self.guests = set(state["guests"])
        self.notice = state["notice"]
        self.history = [RoomMessage(**{**m, "warnings": tuple(m["warnings"])})
                        for m in state["history"]]
        self._refs = {m.ref for m in self.history if m.ref}
        if self.keeper is not None:  # its talk is here now: every message of it, written here
            for message in self.history:
                self.keeper.message(self._message_record(message))
        self.kept()

    # --- the agent's side ---------------------------------------------------------------------

    def agent_typing(self) -> None:
        """The agent is typing a reply: the guests' pages say so (throttled; each event says
        how long to show it, so it ends by itself)."""
        if self.refusal_key() is None and self.typing.mark("agent"):
            self._to_guests(self.typing.event("agent"))

    async def agent_says(self, text: str) -> RoomMessage | HeldReply:
        """The agent's reply: translated for the guest (checked as in the agent mode) and sent,
        or held when a check found something (:meth:`send_held`, :meth:`drop_held`). Raises
        :class:`RoomError` when the room is closed, InputError for a refused text."""
        refused = self.refusal_key()
        if refused:
            raise RoomError(refused)
        self.typing.stop("agent")  # the page's "translating…" takes the typing line's place
        self._to_guests({"type": "pending", "who": "agent"})
        message, turn = await self._translated(text, "agent", "agent")
        if message.warnings and message.translation is not None:
            held = HeldReply(secrets.token_urlsafe(12), message, turn)
            self.held[held.key] = held
            while len(self.held) > HELD_REPLIES:
                self.drop_held(next(iter(self.held)))
            self._to_guests({"type": "settled"})  # their "translating…" ends: nothing comes yet
            return held
        return self._post(message)

    def send_held(self, key: str) -> RoomMessage:
        """The agent read the warning and sends the held reply as it is ("Send anyway").
        Raises :class:`RoomError` when the room is closed, KeyError when *key* is not held."""
        refused = self.refusal_key()
        if refused:
            raise RoomError(refused)
        held = self.held.pop(key)
        return self._post(replace(held.message, at=self.clock()))

    def drop_held(self, key: str) -> HeldReply | None:
        """The agent will write the held reply again ("Edit"): it is forgotten, transcript and
        all, and the guests never see it. None when *key* is not held."""
        held = self.held.pop(key, None)
        if held is not None and held.turn is not None:
            self.conv.drop_turn(held.turn)
            self.kept()
        return held

    # --- both -----------------------------------------------------------------------------------

    async def _translated(self, text: str, side: str,
                          who: Who) -> tuple[RoomMessage, Turn | None]:
        """Translate one message (not numbered yet) and its transcript line; a model failure
        still gives the original, with a note. A refused text (empty, too long…) raises its
        InputError: the writer is told."""
        try:
            turn = await self.translate(text, side)
        except InputError:
            raise
        except HymtError as err:
            target = (self.conv.agent_language if who == "guest"
                      else self.conv.customer_language or self.conv.agent_language)
            note = said("room_not_translated", reason=said(_REASON_WORDS.get(
                reason_of(err).outcome, "reason_failed")))
            return RoomMessage(0, who, text.strip(), None, None, target, self.clock(), note), None
        t = turn.turn
        return RoomMessage(0, who, t.original, t.source, t.translation, t.target, self.clock(),
                           None, t.warnings), t

    def _post(self, message: RoomMessage) -> RoomMessage:
        """*message* numbered, kept in the history and shown to the guests. Numbered only now:
        a long paste in the background and a short line meanwhile finish in either order (and a
        held reply is sent later), and each takes the next number then."""
        message = replace(message, seq=len(self.history) + 1)
        self.history.append(message)
        if self.keeper is not None:
            self.keeper.message(self._message_record(message))
        self.kept()  # its transcript line, the language learnt
        self._to_guests(message.event())
        return message

    def _message_record(self, m: RoomMessage) -> MessageRecord:
        return MessageRecord(self.token, m.seq, m.who, m.original, m.source, m.translation,
                             m.target, m.at, None if m.note is None else str(m.note),
                             m.warnings, m.ref)


class Rooms:
    """Every open room of this process, by token (a long random one); with a *keeper*, a
    cache of the deployment's rooms."""

    def __init__(self, *, hours: float = 12.0, clock: Callable[[], float] = time.time,
                 keeper: RoomKeeper | None = None) -> None:
        self.hours = hours
        self.clock = clock
        self.keeper = keeper
        self._rooms: dict[str, Room] = {}
        # Several replicas (the desk): a room whose talk is on another replica, reached from
        # here for a visitor who landed here (None: a room is only this process's).
        self.reach_remote: Callable[[str], Awaitable[Room | None]] | None = None
        # A stored room this process does not hold, held again (the desk sets it: it has the
        # deployment's translation defaults); None: a room is revived with no translation.
        self.reviver: Callable[[StoredRoom], Room] | None = None
        # A room whose agent's tab closed: translated with these defaults meanwhile (the desk's)
        self.defaults: Callable[[Conversation], Translate] | None = None
        # Several replicas: say that a room is this replica's, and ask whether a live replica
        # holds one (then it is not read back here: its link hops there).
        self.claim: Callable[[str], None] | None = None
        self.held_elsewhere: Callable[[str], Awaitable[bool]] | None = None

    @classmethod
    def for_settings(cls, settings: Settings) -> Rooms:
        """The process's rooms, kept in the deployment's conversations database."""
        return cls(hours=settings.room_hours, keeper=keep_rooms(settings))

    async def close(self) -> None:
        """Write what the database has not taken yet (for a while), then close it."""
        if self.keeper is not None:
            await self.keeper.close()

    async def erase(self, tokens: list[str]) -> int:
        """Erase these rooms: closed, out of the cache, nothing of theirs queued, their rows
        and messages deleted (a message still being translated is never written); how many
        the database held."""
        wanted = set(tokens)
        for token in wanted:
            room = self._rooms.pop(token, None)
            if room is not None:
                room.keeper = None
                room.close()
        if self.keeper is None:
            return 0
        self.keeper.drop(wanted)
        return await asyncio.to_thread(self.keeper.store.forget, sorted(wanted))

    def let_go(self, room: Room) -> None:
        """*room*'s agent's tab closed; the room stays open for their next tab (its guest's
        messages are translated with the defaults and kept meanwhile)."""
        async def unattended(message: RoomMessage) -> None:
            """Kept in the room's history (and the database) for its agent's return."""

        async def nowhere(*_: Any) -> Any:
            raise RoomError("ended")
        room.translate = self.defaults(room.conv) if self.defaults is not None else nowhere
        room.to_agent, room.on_pending, room.on_typing = unattended, None, None
        room.on_moved = None

    def open(self, conv: Conversation, *, translate: Translate, to_agent: Deliver,
             charge: Charge | None = None,
             on_pending: Callable[[], Awaitable[None]] | None = None,
             agent: str | None = None) -> Room:
        """A new room; *agent*: whose it is (their tab finds it again after a restart)."""
        self._prune()
        token = secrets.token_urlsafe(24)  # 192 bits: not guessable, not enumerable
        room = Room(token, conv, translate=translate, to_agent=to_agent, charge=charge,
                    on_pending=on_pending, expires_at=self.clock() + self.hours * 3600,
                    clock=self.clock)
        if agent is not None:
            room.about["agent"] = agent
        self.hold(room)
        room.kept()
        return room

    def hold(self, room: Room) -> Room:
        """*room* is this process's to talk in (and to write, with a keeper)."""
        room.keeper = self.keeper
        self._rooms[room.token] = room
        if self.claim is not None:
            self.claim(room.token)
        return room

    async def revive(self, token: str) -> Room | None:
        """The stored room of *token*, held here again (None: none stored, or no keeper)."""
        if self.keeper is None or not isinstance(token, str):
            return None
        if self.held_elsewhere is not None and await self.held_elsewhere(token):
            return None
        stored = await self.keeper.load(token)
        if stored is None:
            return None
        if (room := self._rooms.get(token)) is not None:  # revived meanwhile
            return room
        if self.reviver is not None:
            return self.hold(self.reviver(stored))

        async def nowhere(*_: Any) -> Any:
            raise RoomError("ended")
        return self.hold(Room.revived(stored, translate=nowhere, to_agent=nowhere,
                                      clock=self.clock))

    async def owned_by(self, agent: str) -> Room | None:
        """The open room *agent* opened (their latest), here or stored (after a restart)."""
        mine = [r for r in self._rooms.values() if r.about.get("agent") == agent
                and "number" not in r.about and r.refusal_key() is None]
        if mine:
            return max(mine, key=lambda r: r.opened)
        if self.keeper is None:
            return None
        try:
            tokens = await asyncio.to_thread(self.keeper.store.tokens, agent=agent, kind="room",
                                           open_only=True)
        except Exception:  # noqa: BLE001 - the database is away: no room to find again
            return None
        for token in reversed(tokens):
            room = self._rooms.get(token) or await self.revive(token)
            if room is not None and room.refusal_key() is None:
                return room
        return None

    def adopt(self, state: dict[str, Any], *, translate: Translate, to_agent: Deliver,
              charge: Charge | None = None) -> Room:
        """A room whose talk another replica hands over (the desk): the room of its token here
        (the guests' sockets may be on this replica), else a new one of that token."""
        room = self._rooms.get(state["token"])
        if room is None:
            room = Room(state["token"], Conversation.from_dict(state["conv"]),
                        translate=translate, to_agent=to_agent, charge=charge,
                        expires_at=state["expires_at"], clock=self.clock)
        self.hold(room)
        room.translate, room.to_agent, room.charge = translate, to_agent, charge
        room.relay = None
        room.restore(state)
        return room

    async def reach(self, token: str) -> Room:
        """:meth:`get`, or the room of *token* on another replica, reached from here."""
        try:
            return self.get(token)
        except RoomError as err:
            if err.known:
                raise
            if self.reach_remote is not None and isinstance(token, str):
                room = await self.reach_remote(token)
                if room is not None:
                    return self.get(room.token)
            if await self.revive(token) is None:
                raise
            return self.get(token)

    def stub(self, state: dict[str, Any], relay: GuestRelay) -> Room:
        """A door here to a room whose talk is on another replica: its guests' sockets connect
        here, what they say goes through *relay*, the room's events come in
        (:meth:`Room.relayed`)."""
        async def nowhere(*_: Any) -> Any:
            raise RoomError("ended")  # the talk is elsewhere: never translated here
        room = self._rooms.get(state["token"]) or Room(
            state["token"], Conversation.from_dict(state["conv"]), translate=nowhere,
            to_agent=nowhere, expires_at=state["expires_at"], clock=self.clock)
        room.keeper = None  # the talk's replica writes it
        room.restore(state)
        room.relay = relay
        self._rooms[room.token] = room
        return room

    def find(self, token: str) -> Room | None:
        """The room of *token*, open or not (the desk's relay between replicas)."""
        return self._rooms.get(token)

    def forget(self, token: str) -> None:
        """A room whose talk went to another replica, with no guest socket here."""
        self._rooms.pop(token, None)

    def get(self, token: str) -> Room:
        """The open room of *token*. Raises :class:`RoomError` with a sentence for the page."""
        room = self._rooms.get(token) if isinstance(token, str) else None
        if room is None:
            raise RoomError("invalid", known=False)
        refused = room.refusal_key()
        if refused:
            raise RoomError(refused)
        return room

    def _prune(self) -> None:
        """Forget rooms closed or expired for more than an hour (their links keep saying why
        for that hour, then say "not valid")."""
        now = self.clock()
        for token, room in list(self._rooms.items()):
            ended = room.closed_at if room.closed_at is not None else room.expires_at
            if now > ended + 3600:
                del self._rooms[token]
