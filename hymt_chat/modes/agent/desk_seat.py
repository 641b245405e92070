"""An agent's seat at the support desk (:mod:`hymt_chat.modes.desk`): the inbox, taking a
conversation, switching between several in one tab, closing or blocking one, and the desk's
news shown as it happens.

The seat speaks through its :class:`~hymt_chat.modes.agent.session.AgentSession` (screen,
progress lines, the room's checked translation). One conversation is *current*: what the agent
types goes there, and the commands of a conversation (/glossary, /transcript, /customer, /tone)
act on it; the others' new messages are counted as unread and announced in one line each.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from hymt_chat.engine.translator import Translator
from hymt_chat.errors import HymtError
from hymt_chat.modes import wording
from hymt_chat.modes.agent import turns
from hymt_chat.modes.agent.conversation import Conversation
from hymt_chat.modes.agent.glossary import Glossary
from hymt_chat.modes.cost import Text, priced
from hymt_chat.modes.desk import Desk, Ticket, TicketView
from hymt_chat.modes.page_text import PageText
from hymt_chat.modes.room import RoomMessage, Rooms, Translate
from hymt_chat.modes.screen import Button, Reply
from hymt_chat.service.ratelimit import RateLimiter
from hymt_chat.settings import Settings
from hymt_chat.store.audit import audit_quietly
from hymt_chat.words.said import said

if TYPE_CHECKING:
    from hymt_chat.modes.agent.session import AgentSession

__all__ = ["DESK_BUTTONS", "DeskSeat", "open_desk", "translate_for"]

DESK_BUTTONS = ("desk_take", "desk_open")
_SHOWN_ON_SWITCH = 10  # the latest messages of a conversation shown when the agent opens it


def translate_for(translator: Translator, settings: Settings) -> Callable[[Conversation],
                                                                          Translate]:
    """A desk conversation's translation while no agent's tab shows it: the agent mode with
    the deployment's defaults (the visitor's message is kept, its language learnt)."""
    options = turns.AgentOptions.from_settings(settings)

    def bound(conv: Conversation) -> Translate:
        async def translate(text: str, side: str) -> turns.AgentTurn:
            return await turns.handle_agent_message(
                conv, text, translator, settings, back_translate=options.back_translate,
                use_context=options.use_context, side=side,  # type: ignore[arg-type]
                user="desk")
        return translate
    return bound


def open_desk(rooms: Rooms, translator: Translator, limiter: RateLimiter,
              settings: Settings) -> Desk:
    """The deployment's desk: a visitor's messages drawn from their own allowance (the
    chat's limiter, at what they cost), their starts from a limiter of their own."""
    starts = (RateLimiter(settings.desk_starts, storage=settings.redis_url)
              if settings.desk_starts.strip() else None)

    async def charge(key: str, text: str) -> None:
        await limiter.ahit(key, await priced([Text(text)], settings))

    async def start(visitor: str) -> None:
        if starts is not None:
            await starts.ahit(f"desk-start:{visitor}")

    return Desk(rooms, translate_for(translator, settings), agent_language=settings.default_target,
                queue_limit=settings.desk_queue, per_visitor=settings.desk_per_visitor,
                charge=charge, starts=start, staffed=bool(settings.agents.strip()))


def _label(ticket: Ticket | TicketView, page: PageText) -> str:
    language = (page.name_of(ticket.language) if ticket.language
                else page["language_not_known"])
    return f"#{ticket.number} · {language}"


class DeskSeat:
    """One agent tab's place at the desk."""

    def __init__(self, session: AgentSession, desk: Desk) -> None:
        self.session = session
        self.desk = desk
        self.agent = session.user_key
        self.current: Ticket | None = None

    # --- the tab opens and closes -------------------------------------------------------------

    async def sit(self) -> None:
        """The tab opened (or reloaded): the agent's conversations are bound to it again."""
        held = await self.desk.sit(self)
        for ticket in held:
            self._bind(ticket)
        if held:
            # Current before the first word is shown: a reply typed while the tab says what it
            # holds goes to that visitor, not to the agent's own translation.
            self._make_current(held[-1])
            names = ", ".join(self._label(t) for t in held)
            await self.session.say(said("desk_holding", count=len(held), names=names))
            await self._show_current(held[-1])
        elif await self.desk.inbox(self.agent):  # of every replica
            await self.inbox()

    @property
    def page(self) -> PageText:
        return self.session.page

    def _label(self, ticket: Ticket | TicketView) -> str:
        return _label(ticket, self.page)

    def stand(self) -> None:
        self.desk.stand(self)

    def title(self) -> str | None:
        """The thread's name while a desk conversation is open: "Desk #3 · Spanish"."""
        if self.current is None:
            return None
        return self.page.fill("desk_title", label=self._label(self.current))

    # --- the agent's commands ----------------------------------------------------------------

    async def command(self, argument: str) -> None:
        word, _, rest = argument.strip().lower().partition(" ")
        if word in ("", "list", "inbox"):
            await self.inbox()
        elif word == "take" and rest.strip().lstrip("#").isdigit():
            await self.take(int(rest.strip().lstrip("#")))
        elif word.lstrip("#").isdigit():
            await self.open(int(word.lstrip("#")))
        elif word in ("close", "block"):
            ticket = self.current
            if ticket is None or not ticket.open:
                await self.session.say(self.page["desk_open_first"])
                return
            if word == "block":
                self.desk.block(ticket)
                await self.session.say(self.page.fill("desk_blocked",
                                                      label=self._label(ticket)))
            else:
                self.desk.close(ticket)
                await self.session.say(self.page.fill("desk_closed", label=self._label(ticket)))
            self.current = None
        else:
            await self.session.say(self.page["desk_help"])

    async def inbox(self) -> None:
        """Waiting and open conversations: language, waiting time, unread, holder."""
        now = self.desk.clock()
        tickets = await self.desk.inbox(self.agent)
        if not tickets:
            await self.session.say(self.page["desk_empty"])
            return
        page = self.page
        head = [page["desk_language"], page["desk_waiting_col"], page["desk_unread"],
                page["desk_who"]]
        lines = ["| # | " + " | ".join(wording.escape_markdown(h) for h in head) + " |",
                 "|---|---|---|---|---|"]
        buttons = []
        for t in tickets:
            who = (page["desk_waiting"] if t.agent is None else page["desk_you"]
                   if t.agent == self.agent else t.agent.removeprefix("user:"))
            mark = " ◀" if t is self.current else ""
            language = page.name_of(t.language) if t.language else "?"
            since = wording.format_duration(max(0.0, t.waited(now)), page)
            lines.append(f"| {t.number}{mark} | {wording.escape_markdown(language)} | "
                         f"{since} | {t.unread} | {wording.escape_markdown(who)} |")
            if t.agent == self.agent:
                buttons.append(Button("desk_open", page.fill("desk_open", n=t.number),
                                      {"n": t.number}))
            else:
                verb = "desk_take" if t.agent is None else "desk_take_over"
                buttons.append(Button("desk_take", page.fill(verb, n=t.number), {"n": t.number}))
        help_line = wording.escape_markdown(page["desk_help"])
        await self.session.show(Reply("\n".join(lines) + f"\n\n*{help_line}*",
                                      tuple(buttons[:12])))

    async def take(self, number: int) -> None:
        try:
            ticket = await self.desk.take(self, number, self._bind)
        except HymtError as err:
            await self.session.say_error(err)
            return
        await self._audit("take_over", ticket)
        await self.switch(ticket)

    async def open(self, number: int) -> None:
        ticket = self.desk.get(number)
        if ticket is None or ticket.agent != self.agent:
            await self.session.say(self.page.fill("desk_not_yours", n=number))
            return
        await self._audit("read", ticket)
        await self.switch(ticket)

    async def _audit(self, action: str, ticket: Ticket) -> None:
        await audit_quietly(self.session.services.audit_log,
                            f"agent:{self.agent.removeprefix('user:')}", action,
                            f"room {ticket.room.token}", f"desk #{ticket.number}")

    async def switch(self, ticket: Ticket) -> None:
        """*ticket* becomes current: its latest messages, and the agent's replies go there."""
        self._make_current(ticket)
        await self._show_current(ticket)

    def _make_current(self, ticket: Ticket) -> None:
        if self.current is not None:
            self.current.shown_to.discard(self)
        self.current = ticket
        ticket.shown_to.add(self)
        self.desk.read(ticket)

    async def _show_current(self, ticket: Ticket) -> None:
        history = ticket.room.history[-_SHOWN_ON_SWITCH:]
        await self.session.say(said("desk_now_with", label=self._label(ticket),
                                    count=len(ticket.room.history)))
        demo = self.session.services.demo()
        for message in history:
            await self.session.show(Reply(wording.room_message_markdown(message, demo=demo,
                                                                        page=self.page)))

    def button(self, name: str, payload: object) -> Awaitable[None]:
        number = payload.get("n") if isinstance(payload, dict) else None
        if not isinstance(number, int):
            return self.session.say(self.page["button_expired"])
        return self.take(number) if name == "desk_take" else self.open(number)

    # --- the desk's news -------------------------------------------------------------------

    async def desk_event(self, ticket: Ticket | TicketView, what: str,
                         message: RoomMessage | None = None) -> None:
        async def show() -> None:
            if what == "waiting":
                await self.session.say(
                    self.page.fill("desk_visitor_waiting", label=self._label(ticket)),
                    (Button("desk_take", self.page.fill("desk_take", n=ticket.number),
                            {"n": ticket.number}),))
            elif what == "taken":
                who = (ticket.agent or "").removeprefix("user:")
                if self.current is ticket:
                    self.current = None
                await self.session.say(self.page.fill("desk_taken_by", label=self._label(ticket),
                                                      name=who))
            elif what == "moved":
                await self.session.say(self.page.fill("desk_moved", label=self._label(ticket)))
            elif what in ("typing", "typed"):
                await self.session.typing_line(str(ticket.number),
                                               wording.visitor_typing(self._label(ticket),
                                                                      self.page),
                                               what == "typing")
            elif what == "message" and message is not None and isinstance(ticket, Ticket):
                if self.current is ticket:
                    await self.session.room_message(ticket.room, message)
                else:
                    await self.session.say(
                        self.page.fill("desk_unread_line", label=self._label(ticket),
                                       count=ticket.unread),
                        (Button("desk_open", self.page.fill("desk_open", n=ticket.number),
                                {"n": ticket.number}),))
        await self.session.from_outside(show())

    # --- binding a conversation to this tab ---------------------------------------------------

    def _bind(self, ticket: Ticket) -> None:
        """The room translates through this tab (its switches, its checked turns); a fresh
        conversation starts with the agent's language, tone and glossary."""
        conv, mine = ticket.room.conv, self.session.conv
        if not conv.transcript or conv.agent_language != mine.agent_language:
            try:
                conv.set_agent_language(mine.agent_language)
            except HymtError:
                pass  # the visitor writes in the agent's language: kept as it was
        if not conv.glossary.entries and not conv.glossary.keep:
            conv.glossary = Glossary(list(mine.glossary.entries), list(mine.glossary.keep))
        conv.tone = mine.tone
        ticket.room.translate = self.session.room_translator(ticket.room)
        ticket.room.on_pending = None
        ticket.taken = ticket.taken or time.time()
