"""The support desk across app replicas, over Redis (``HYMT_REDIS_URL``, already in the stack
for the shared limits): the deployment's queue and numbers, and the hand-over of a
conversation to the replica of the agent who takes it — not only the sticky cookie.

* ``hymt:desk:next`` numbers conversations (INCR); ``hymt:desk:tickets`` holds each open one's
  inbox line (language, waiting, unread, holder) and where it lives, written by that replica.
* Channel ``hymt:desk:all``: "a visitor is waiting", for every replica's agents.
* Channel ``hymt:desk:to:<replica>``: what one replica asks of another. An agent on replica B
  takes #3 of replica A: B sends ``take``; A hands it over (``adopt``: the room's state, its
  history and conversation) and keeps the visitor's socket (A is the *door*); from then on A
  sends what the visitor says to B (``says``, ``language``, ``typing``) and B sends the room's
  events to A (``guest_event``: the agent's typing among them), which shows them on the
  visitor's page. A visitor's new device that takes the conversation over at a door is told to
  the talk (``moved``: the device admitted, those it replaced). A further take-over moves the talk
  again and tells the door (``relay_to``).
* ``hymt:room:<token>``: the replica that holds a room (the desk's and the agents' own).
* ``hymt:desk:alive:<replica>``: each replica's heartbeat (expiring). A conversation whose
  replica's heartbeat is gone (it died) is read back from the database by the replica that
  needs it — a visitor's reconnect, its agent's inbox or take — and is that replica's from then
  on (``Desk.orphaned``), without waiting for the dead one to answer.

One listener task per process (:meth:`DeskRelay.run`); a message that cannot be handled is
logged, never fatal to the listener.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import Coroutine
from typing import Any, TypeVar

import redis.asyncio as aioredis

from hymt_chat.modes.desk import Desk, Ticket, TicketView
from hymt_chat.modes.room import Room, Rooms

__all__ = ["DeskRelay"]

_log = logging.getLogger(__name__)
T = TypeVar("T")
_NEXT, _TICKETS, _TOKENS = "hymt:desk:next", "hymt:desk:tickets", "hymt:desk:tokens"
_ALL, _TO = "hymt:desk:all", "hymt:desk:to:"
_TAKE_SECONDS = 30.0  # how long a take waits for the other replica's hand-over
_ALIVE, _BEAT, _ALIVE_SECONDS = "hymt:desk:alive:", 5.0, 15  # heartbeat: key, every, lasts
_ROOM = "hymt:room:"  # + token: the replica that holds that room (expires after the room)


class _ToTalk:
    """A guest's words on this replica (the door), sent to the replica of the room's talk."""

    def __init__(self, relay: DeskRelay, token: str, to: str) -> None:
        self.relay, self.token, self.to = relay, token, to

    def says(self, guest: str, text: str, payer: str, ref: str | None = None) -> None:
        self.relay.send(self.to, {"op": "says", "token": self.token, "guest": guest,
                                  "text": text, "payer": payer, "ref": ref})

    def language(self, code: str) -> None:
        self.relay.send(self.to, {"op": "language", "token": self.token, "code": code})

    def typing(self, guest: str) -> None:
        self.relay.send(self.to, {"op": "typing", "token": self.token, "guest": guest})

    def moved(self, guest: str, gone: list[str]) -> None:
        self.relay.send(self.to, {"op": "moved", "token": self.token, "guest": guest,
                                  "gone": gone})


class DeskRelay:
    """This replica's side of the shared desk (see the module docstring)."""

    def __init__(self, desk: Desk, rooms: Rooms, url: str, replica: str | None = None) -> None:
        self.desk, self.rooms = desk, rooms
        self.redis = aioredis.from_url(url, decode_responses=True)
        self.replica = replica or secrets.token_hex(6)
        self._adopted: dict[int, asyncio.Future[bool]] = {}
        self._doorways: dict[str, asyncio.Future[dict[str, Any] | None]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._ready = asyncio.Event()
        desk.remote = self
        rooms.reach_remote = self.reach
        rooms.claim, rooms.held_elsewhere = self.claim, self.held_elsewhere

    # --- the desk's Remote ------------------------------------------------------------------

    async def number(self) -> int:
        return int(await self.redis.incr(_NEXT))

    async def others(self) -> list[TicketView]:
        rows = await self.redis.hgetall(_TICKETS)  # type: ignore[misc]
        views, now = [], self.desk.clock()
        for number, raw in rows.items():
            row = json.loads(raw)
            if row["opened"] + self.rooms.hours * 3600 < now:  # expired with its replica gone
                await self.redis.hdel(_TICKETS, number)  # type: ignore[misc]
            elif row["owner"] != self.replica and row["open"]:
                views.append(TicketView(row["number"], row["language"], row["opened"],
                                        row["agent"], row["taken"], row["unread"]))
        return views

    def changed(self, ticket: Ticket, *, new: bool = False) -> None:
        row = {"number": ticket.number, "owner": self.replica, "token": ticket.room.token,
               "language": ticket.language,
               "opened": ticket.opened, "agent": ticket.agent, "taken": ticket.taken,
               "unread": ticket.unread, "open": ticket.open}

        async def write() -> None:
            if ticket.open:
                await self.redis.hset(_TICKETS, str(ticket.number),  # type: ignore[misc]
                                      json.dumps(row))
                await self.redis.hset(_TOKENS, ticket.room.token,  # type: ignore[misc]
                                      str(ticket.number))
            else:
                await self.redis.hdel(_TICKETS, str(ticket.number))  # type: ignore[misc]
                await self.redis.hdel(_TOKENS, ticket.room.token)  # type: ignore[misc]
            if new:
                await self.redis.publish(_ALL, json.dumps({"op": "waiting", "row": row}))
        self._spawn(write())

    async def alive(self, replica: str) -> bool:
        """Is *replica*'s heartbeat there (it did not die)?"""
        return replica == self.replica or bool(await self.redis.exists(_ALIVE + replica))

    async def _answer(self, answer: asyncio.Future[T], owner: str) -> T:
        """*owner*'s answer, waited for while its heartbeat lasts, at most
        :data:`_TAKE_SECONDS` (TimeoutError): a dead replica is not waited for in full."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _TAKE_SECONDS
        while True:
            left = deadline - loop.time()
            try:
                return await asyncio.wait_for(asyncio.shield(answer), min(1.0, max(left, 0)))
            except TimeoutError:
                if left <= 1.0 or not await self.alive(owner):
                    raise

    def claim(self, token: str) -> None:
        """Room *token* is this replica's (its agent's own room, or a desk conversation)."""
        async def write() -> None:
            await self.redis.set(_ROOM + token, self.replica,
                                 ex=int(self.rooms.hours * 3600) + 3600)
        self._spawn(write())

    async def held_elsewhere(self, token: str) -> bool:
        """Does another replica, alive, hold room *token*? (Redis away: taken as yes, so that
        no room is ever held by two replicas at once.)"""
        try:
            owner = await self.redis.get(_ROOM + token)
            return owner is not None and owner != self.replica and await self.alive(owner)
        except Exception:  # noqa: BLE001 - unknown: not read back here
            _log.exception("could not ask Redis which replica holds a room")
            return True

    async def orphaned(self, number: int) -> str | None:
        """The token of conversation *number* when the replica that held it died."""
        raw = await self.redis.hget(_TICKETS, str(number))  # type: ignore[misc]
        row = json.loads(raw) if raw else None
        if row is None or await self.alive(row["owner"]):
            return None
        return str(row["token"])

    async def take(self, number: int, agent: str) -> bool:
        raw = await self.redis.hget(_TICKETS, str(number))  # type: ignore[misc]
        if raw is None:
            return False
        owner = json.loads(raw)["owner"]
        if owner == self.replica or not await self.alive(owner):
            return False
        done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._adopted[number] = done
        self.send(owner, {"op": "take", "number": number, "agent": agent, "to": self.replica})
        try:
            return await self._answer(done, owner)
        except TimeoutError:
            _log.warning("replica %s did not hand over conversation #%d", owner, number)
            return False
        finally:
            self._adopted.pop(number, None)

    async def reach(self, token: str) -> Room | None:
        """A visitor landed here with the token of a room whose talk is on another replica
        (no sticky cookie, or a frame that sends none): this replica becomes a door to it."""
        number = await self.redis.hget(_TOKENS, token)  # type: ignore[misc]
        raw = await self.redis.hget(_TICKETS, number) if number else None  # type: ignore[misc]
        owner = json.loads(raw)["owner"] if raw else None
        if owner is None or owner == self.replica or not await self.alive(owner):
            return None  # a dead replica's: the database has it (Rooms.revive)
        answer: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
        self._doorways[token] = answer
        self.send(owner, {"op": "door", "token": token, "from": self.replica})
        try:
            state = await self._answer(answer, owner)
        except TimeoutError:
            return None
        finally:
            self._doorways.pop(token, None)
        if state is None:
            return None
        return self.rooms.stub(state["room"], _ToTalk(self, token, state["owner"]))

    def _open_doors(self, ticket: Ticket) -> None:
        """The room's events go to the replicas its visitor's pages talk to, not only here."""
        token = ticket.room.token

        def to_doors(event: dict[str, Any], guest: str | None) -> None:
            for door in ticket.doors - {self.replica}:
                self.send(door, {"op": "guest_event", "token": token, "event": event,
                                 "guest": guest})
        ticket.room.door = to_doors

    # --- sending and listening -------------------------------------------------------------

    def send(self, replica: str, message: dict[str, Any]) -> None:
        async def publish() -> None:
            await self.redis.publish(_TO + replica, json.dumps(message))
        self._spawn(publish())

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (err := task.exception()) is not None:
            _log.error("the desk's relay failed a step", exc_info=err)

    async def ready(self) -> None:
        """Subscribed: what other replicas send from now on arrives."""
        await self._ready.wait()

    async def run(self) -> None:
        """Listen to the desk's channels until cancelled (reconnecting after a Redis error)."""
        delay = 0.5
        while True:
            pubsub = self.redis.pubsub()
            beat = asyncio.get_running_loop().create_task(self._beat())
            try:
                await pubsub.subscribe(_ALL, _TO + self.replica)
                await beat_once(self)
                self._ready.set()
                delay = 0.5
                async for message in pubsub.listen():
                    if message.get("type") == "message":
                        await self._handle(message["data"])
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - Redis went away: try again, not die
                _log.exception("the desk's relay lost Redis; reconnecting")
                await asyncio.sleep(delay)
                delay = min(delay * 2, 10.0)
            finally:
                beat.cancel()
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]

    async def _beat(self) -> None:
        """This replica's heartbeat, while it listens."""
        while True:
            await asyncio.sleep(_BEAT)
            with contextlib.suppress(Exception):  # Redis away: the listener reconnects
                await beat_once(self)

    async def _handle(self, data: str) -> None:
        try:
            message = json.loads(data)
            await getattr(self, "_on_" + message["op"])(message)
        except Exception:  # noqa: BLE001 - one bad message, not the listener
            _log.exception("the desk's relay could not handle %.200s", data)

    # --- what other replicas say -----------------------------------------------------------

    async def _on_waiting(self, message: dict[str, Any]) -> None:
        row = message["row"]
        if row["owner"] != self.replica:
            await self.desk.announced(TicketView(row["number"], row["language"], row["opened"]))

    async def _on_take(self, message: dict[str, Any]) -> None:
        """Another replica's agent takes one of ours: hand its talk over, keep its door."""
        number, to = message["number"], message["to"]
        ticket = self.desk.get(number)
        state = await self.desk.hand_over(number, message["agent"])
        if state is None or ticket is None:
            self.send(to, {"op": "refused", "number": number})
            return
        room = ticket.room
        room.door = None
        if self.replica in ticket.doors:
            room.relay = _ToTalk(self, room.token, to)  # the visitor's socket stays here
        else:
            self.rooms.forget(room.token)  # no socket of the visitor here: the doors have them
        self.send(to, {"op": "adopt", "state": state})

    async def _on_adopt(self, message: dict[str, Any]) -> None:
        state = message["state"]
        ticket = self.desk.adopt(state)
        self._open_doors(ticket)
        for door in ticket.doors - {self.replica}:
            self.send(door, {"op": "relay_to", "token": ticket.room.token, "to": self.replica})
        done = self._adopted.get(state["number"])
        if done is not None and not done.done():
            done.set_result(True)

    async def _on_refused(self, message: dict[str, Any]) -> None:
        done = self._adopted.get(message["number"])
        if done is not None and not done.done():
            done.set_result(False)

    async def _on_door(self, message: dict[str, Any]) -> None:
        """Another replica is a door to one of ours now: its state, and its events from now."""
        ticket = self.desk.by_token(message["token"])
        state = None
        if ticket is not None and ticket.open:
            ticket.doors.add(message["from"])
            self._open_doors(ticket)
            state = {"room": ticket.room.state(), "owner": self.replica}
        self.send(message["from"], {"op": "doorway", "token": message["token"], "state": state})

    async def _on_doorway(self, message: dict[str, Any]) -> None:
        answer = self._doorways.get(message["token"])
        if answer is not None and not answer.done():
            answer.set_result(message["state"])

    def _room(self, token: str) -> Room | None:
        return self.rooms.find(token)

    async def _on_guest_event(self, message: dict[str, Any]) -> None:
        room = self._room(message["token"])
        if room is not None:
            room.relayed(message["event"], message.get("guest"))

    async def _on_relay_to(self, message: dict[str, Any]) -> None:
        room = self._room(message["token"])
        if room is not None:
            room.relay = _ToTalk(self, room.token, message["to"])

    async def _on_says(self, message: dict[str, Any]) -> None:
        room = self._room(message["token"])
        if room is not None and room.relay is None:
            self._spawn(room.guest_says(message["guest"], message["text"], message["payer"],
                                        message.get("ref")))

    async def _on_typing(self, message: dict[str, Any]) -> None:
        room = self._room(message["token"])
        if room is not None and room.relay is None:
            await room.guest_typing(message["guest"])

    async def _on_moved(self, message: dict[str, Any]) -> None:
        """A visitor's new device took the conversation over at a door: admitted here, the
        devices it replaced told (at every door) and no longer admitted, the agent told."""
        room = self._room(message["token"])
        if room is not None and room.relay is None:
            room.took_over(message["guest"], [str(g) for g in message["gone"]])

    async def _on_language(self, message: dict[str, Any]) -> None:
        room = self._room(message["token"])
        if room is not None and room.relay is None:
            code = room.set_guest_language(message["code"])
            room.relayed({"type": "language", "code": code}, None)  # told at the door too


async def beat_once(relay: DeskRelay) -> None:
    """One heartbeat: *relay*'s replica is alive for the next few seconds."""
    await relay.redis.set(_ALIVE + relay.replica, "1", ex=_ALIVE_SECONDS)
