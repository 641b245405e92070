"""The Support agent mode as a session: the conversation, its two switches, its commands, and
each message routed and translated the right way (:func:`~.turns.handle_agent_message`).

The conversation is saved after every change through *save* (the app writes it into the chat
thread, so a resumed thread or a restarted server loses nothing). A signed-in agent can correct
a translation (the button under a turn, then the corrected text as the next message:
:mod:`~hymt_chat.modes.agent.corrections`); the translation memory keeps it for next time.
A reply for a room (or a desk conversation) whose checks found something is held: the agent
sends it anyway or edits it (:data:`HOLD_BUTTONS`); the customer sees nothing before.
A signed-in agent's room outlives their tab and the server: their next tab takes it back
(:meth:`AgentSession.shown`); an anonymous agent's room ends with their tab (nobody could find
it again).
"""

from __future__ import annotations

import contextvars
import io
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import segno

from hymt_chat.errors import HymtError
from hymt_chat.modes import warnings, wording
from hymt_chat.modes.agent import turns
from hymt_chat.modes.agent.conversation import Conversation
from hymt_chat.modes.agent.corrections import Correctable, review
from hymt_chat.modes.agent.desk_seat import DESK_BUTTONS, DeskSeat
from hymt_chat.modes.page_text import PageText
from hymt_chat.modes.progress import Progress
from hymt_chat.modes.room import HeldReply, Room, RoomError, RoomMessage, Translate
from hymt_chat.modes.screen import (
    Attachment,
    Button,
    Choice,
    Reply,
    Screen,
    Shown,
    Toggle,
    not_stored,
)
from hymt_chat.modes.session import KEPT_JOBS, Job, Kept, Services, Session, Upload
from hymt_chat.modes.typing import SHOWN
from hymt_chat.modes.warnings import warning_lines
from hymt_chat.store.audit import audit_quietly
from hymt_chat.text.cleanup import TITLE_CHARS, clean_text, headline

__all__ = ["HOLD_BUTTONS", "AgentSession"]

Save = Callable[[dict[str, Any]], Awaitable[None]]
TYPING = {"hymt": "typing"}  # what public/desk.js says while the agent types (throttled)
# The agent's room replies being sent in this task collect their checked turn here.
_ROOM_TURN: contextvars.ContextVar[list[turns.AgentTurn] | None] = contextvars.ContextVar(
    "hymt_room_turn", default=None)
TONE_CHOICES = {"Neutral": "neutral", "Formal": "formal", "Friendly": "friendly"}
"""The Tone picker: the family's style instruction (Hy-MT2) for the agent's replies."""
HOLD_BUTTONS = ("room_send_anyway", "room_edit")
"""Under a held room reply: send it as it is, or drop it and write it again."""


@dataclass(slots=True)
class _Hold:
    """What a held reply's buttons stand for: its room, its key there, its checked turn, and
    the message that shows it (which the outcome replaces)."""

    room: str
    key: str
    turn: turns.AgentTurn | None
    shown: Shown | None = None


class AgentSession(Session):
    def __init__(self, services: Services, screen: Screen, *, session_id: str, user_key: str,
                 conversation: Conversation | None = None, save: Save | None = None,
                 page_url: str = "", affinity: str | None = None,
                 page: PageText | None = None) -> None:
        super().__init__(services, screen, session_id=session_id, user_key=user_key, page=page)
        self.conv = conversation or Conversation(self.settings.default_target)
        options = turns.AgentOptions.from_settings(self.settings)
        self.back_translate = options.back_translate
        self.use_context = options.use_context
        self._save = save
        self.page_url = (self.settings.public_url or page_url).rstrip("/")
        self.affinity = affinity  # the sticky proxy's cookie of the agent's replica
        self.room: Room | None = None
        # "translating…" lines for the guest's messages under way, oldest first
        self._guest_lines: deque[Progress] = deque()
        # Corrections: the turns their buttons stand for; the one being corrected now (and
        # the text sent once already, awaiting its confirmation); the guest's latest turns.
        self.corrections: Kept[Correctable] = Kept()
        self._correcting: tuple[Correctable, str | None] | None = None
        self._guest_turns: dict[str, turns.AgentTurn] = {}
        self.holds: Kept[_Hold] = Kept()  # the held room replies' buttons
        # The support desk (a signed-in agent's tab): its conversations, one of them current.
        desk = services.desk
        self.seat = DeskSeat(self, desk) if desk is not None and user_key.startswith(
            "user:") else None

    def title(self) -> str | None:
        """The desk conversation open ("Desk #3 · Spanish"), else the conversation's first
        customer words ("Customer in Spanish: Hola, mi pedido…"), else the agent's first
        reply; None before either."""
        desk = self.seat.title() if self.seat is not None else None
        if desk is not None:
            return desk
        turns_ = self.conv.transcript
        turn = next((t for t in turns_ if t.who == "customer"), turns_[0] if turns_ else None)
        if turn is None:
            return None
        key = "thread_customer" if turn.who == "customer" else "thread_reply"
        language = self.page.name_of(turn.source if turn.who == "customer" else turn.target,
                                     in_text=True)
        room = TITLE_CHARS - len(self.page.fill(key, language=language, words=""))
        return self.page.fill(key, language=language,
                              words=headline(turn.original, max(20, room)))

    async def resume(self, chat_settings: Mapping[str, Any] | None) -> None:
        await self._controls()  # the thread shows the banner already; the desk: shown()

    async def shown(self) -> None:
        with not_stored():  # said afresh at each reload, never piled up in the thread
            if self.seat is not None:
                await self.seat.sit()  # a reload: the agent's desk conversations are here again
            await self._room_again()

    def _signed_in(self) -> bool:
        return self.user_key.startswith("user:")

    async def _room_again(self) -> None:
        """A signed-in agent's open room (after a reload, a closed tab or a restart) is this
        tab's again: its conversation, its guest's messages, its link."""
        rooms = self.services.rooms
        if self.room is not None or rooms is None or not self._signed_in():
            return
        room = await rooms.owned_by(self.user_key)
        if room is None:
            return
        self._bind_room(room)
        await self.say(wording.room_again(len(room.history), self.page))
        demo = self.services.demo()
        for message in room.history[-10:]:
            await self.show(Reply(wording.room_message_markdown(message, demo=demo, page=self.page)))
        await self._show_link(room)

    def _bind_room(self, room: Room) -> None:
        """*room* talks through this tab: its conversation is the tab's."""
        self.conv = room.conv
        room.translate, room.to_agent = self._room_translate, self._from_guest
        room.charge, room.on_pending = self._charge_guest, self._guest_writing
        room.on_typing, room.on_moved = self._guest_typing, self._guest_moved
        self.room = room

    async def start(self) -> None:
        await self._controls()
        await self.banner()
        await self.shown()  # a new tab shows nothing before this: said at once

    async def _controls(self) -> None:
        """The settings panel and the command menu: a new tab's and a resumed one's."""
        await self.send_settings()
        await self.screen.commands([(cid, self.page[f"command_{cid}"], icon)
                                    for cid, _, icon in turns.AGENT_COMMANDS],
                                   self.page["placeholder_agent"])

    async def send_settings(self) -> None:
        await self.screen.settings([
            Choice("agent_language", self.page["agent_language"],
                   self.page.choices(include_auto=False), self.conv.agent_language),
            Toggle("back_translate", self.page["back_translate"], self.back_translate),
            Toggle("use_context", self.page["use_context"], self.use_context),
            Choice("tone", self.page["tone"],
                   {self.page[f"tone_{tone}"]: tone for tone in TONE_CHOICES.values()},
                   self.conv.tone),
            self.page.page_choice(),
        ])

    async def banner(self) -> None:
        await self.show(Reply(f"**{wording.escape_markdown(self.page.say(self.conv.banner()))}**"))

    async def save(self) -> None:
        room = self.talking_room()
        if room is not None:  # its glossary, tone, languages: kept with the room too
            room.kept()
        if self._save is not None:
            await self._save(self.conv.to_dict())

    async def settings_changed(self, values: Mapping[str, Any]) -> None:
        if await self.page_language_changed(values):
            return
        self.back_translate = bool(values.get("back_translate"))
        self.use_context = bool(values.get("use_context"))
        tone = values.get("tone")
        if tone and tone != self.conv.tone:
            try:
                said = turns.tone_reply(self.conv, str(tone), self.translator.family)
            except HymtError as err:
                await self.send_settings()  # put the picker back
                await self.say_error(err)
                return
            await self.show(Reply(wording.escape_markdown(self.page.say(said))))
        language = values.get("agent_language")
        if language and language != self.conv.agent_language:
            try:
                self.conv.set_agent_language(language)
            except HymtError as err:
                await self.send_settings()  # put the picker back
                await self.say_error(err)
                return
            await self.banner()
        await self.save()

    async def message(self, text: str, command: str | None, *, uploads: Sequence[Upload] = (),
                      shown: Shown | None = None, spoken: str | None = None) -> None:
        """A command (free), or a message to translate (charged by size); while a correction
        is asked for, the message is the correction (a command cancels it)."""
        if self._correcting is not None:
            if not (command or text.lstrip().startswith("/")):
                await self._take_correction(text)
                return
            self._correcting = None
            if text.strip().lower() == "/cancel":
                await self.say(self.page["correction_cancelled"])
                return
        if uploads:
            found = await self.text_in_pictures(uploads)
            if found is None:
                return
            text = "\n\n".join(part for part in (text, found) if part.strip())
        try:
            parsed = turns.parse_agent_command(text, command)
        except HymtError as err:
            await self.say_error(err)
            return
        if parsed is not None:
            await self.command(parsed)
        elif await self.admit(Job("agent", text)):
            room = self.talking_room()
            await self.when_ready(Job("room", text, room=room.token) if room is not None
                                  else Job("agent", text), inline=True)

    def talking_room(self) -> Room | None:
        """Where the agent's messages go: the desk conversation they have open, else their
        own room, else nowhere (the agent mode's one screen)."""
        if self.seat is not None and self.seat.current is not None and self.seat.current.open:
            return self.seat.current.room
        return self.room if self.room is not None and self.room.refusal() is None else None

    def _room_of(self, token: str | None) -> Room | None:
        if self.room is not None and self.room.token == token:
            return self.room
        desk = self.services.desk
        found = [t.room for t in desk.tickets.values() if t.room.token == token] if desk else []
        return found[0] if found else None

    async def command(self, command: turns.AgentCommand) -> None:
        if command.name == "room":
            await self.room_command(command.argument)
            return
        if command.name == "desk":
            if self.seat is None:
                await self.say(self.page["desk_signed_in_only"])
            else:
                await self.seat.command(command.argument)
            return
        room = self.talking_room()
        conv = room.conv if room is not None else self.conv  # a desk conversation's own
        try:
            reply = turns.run_agent_command(conv, command, self.translator.family, self.page)
        except HymtError as err:
            await self.say_error(err)
            return
        files = tuple(Attachment(f.name, f.content, f.mime) for f in reply.files)
        await self.show(Reply(wording.escape_markdown(self.page.say(reply.text)), files=files))
        if reply.banner_changed:
            await self.send_settings()  # /agent changes the picker's value
            await self.banner()
        await self.save()

    async def execute(self, job: Job) -> None:
        if job.partial is not None:
            await self.translate_rest(job)
            return
        if job.kind == "room":
            await self._reply_in_room(job)
            return
        progress = self.progress(self.page["translating"])
        result = await self.finished(progress, job, turns.handle_agent_message(
            self.conv, job.text, self.translator, self.settings,
            back_translate=self.back_translate, use_context=self.use_context,
            user=self.id, on_progress=progress.progress, on_event=progress.event))
        if result is None:
            return
        # Nothing here sends it anywhere: an agent who had a room or a desk conversation open a
        # moment ago must not believe the customer got it.
        delivery = self.page["not_delivered"] if result.route.side == "agent" else None
        await self.show(Reply(turns.turn_markdown(result, demo=self.services.demo(),
                                                  delivery=delivery, page=self.page),
                              self._correct_buttons(result)))
        if result.route.pair_changed:
            await self.banner()
        await self.save()

    # --- the room: the customer on their own phone ----------------------------------------------

    async def room_command(self, argument: str) -> None:
        """/room opens a room (or shows its link again), /room close ends it, /room guests N
        admits more than one guest."""
        word, _, rest = argument.strip().lower().partition(" ")
        room = self.room if self.room is not None and self.room.refusal() is None else None
        if word == "close":
            if room is None:
                await self.say(self.page["no_room"])
                return
            room.close()
            await self.say(self.page["room_closed"])
            return
        if word == "guests":
            if room is None or not rest.strip().isdigit() or not 1 <= int(rest) <= 20:
                await self.say(self.page["room_guests_how"])
                return
            room.max_guests = int(rest)
            await self.say(self.page.fill("room_guests", count=room.max_guests))
            return
        if word:
            await self.say(self.page["room_usage"])
            return
        if room is None:
            rooms = self.services.rooms
            if rooms is None:
                await self.say(self.page["rooms_unavailable"])
                return
            room = rooms.open(self.conv, translate=self._room_translate,
                              to_agent=self._from_guest, charge=self._charge_guest,
                              on_pending=self._guest_writing, agent=self.user_key)
            self._bind_room(room)
        await self._show_link(room)

    async def _show_link(self, room: Room) -> None:
        link = f"{self.page_url}/room/{room.token}"
        if self.affinity:  # the guest's phone is sent on to this replica (room/page.py)
            link += f"?r={quote(self.affinity, safe='')}"
        buffer = io.BytesIO()
        segno.make(link, error="m").save(buffer, kind="png", scale=8, border=2)
        hours = self.services.rooms.hours if self.services.rooms else 12
        await self.show(Reply(
            wording.room_link_markdown(link, hours, self.page),
            (Button("room_close", self.page["close_room"], {}, "x"),),
            (Attachment("room.png", buffer.getvalue(), "image/png"),)))

    async def _charge_guest(self, key: str, text: str) -> None:
        await self.charge(key, Job("room", text))  # the guest's own allowance, as in the chat

    async def _room_translate(self, text: str, side: str) -> turns.AgentTurn:
        """The agent's own room's messages (its conversation is the tab's)."""
        assert self.room is not None
        return await self.room_translator(self.room)(text, side)

    def room_translator(self, room: Room) -> Translate:
        """*room*'s messages through the agent mode, with this tab's switches: routed by who
        wrote it, checked, kept in the room's conversation."""
        async def translate(text: str, side: str) -> turns.AgentTurn:
            return await self._translate_in(room, text, side)
        return translate

    async def _translate_in(self, room: Room, text: str, side: str) -> turns.AgentTurn:
        user = self.id if side == "agent" else f"room:{room.token}"
        turn = await turns.handle_agent_message(
            room.conv, text, self.translator, self.settings,
            back_translate=self.back_translate,
            use_context=self.use_context, side=side, user=user)  # type: ignore[arg-type]
        mine = _ROOM_TURN.get()
        if side == "agent" and mine is not None:
            mine.append(turn)  # for the reply being sent (several may be under way at once)
        elif side != "agent":  # the agent's tab shows it next (_from_guest), with its button
            self._guest_turns[turn.turn.original] = turn
            while len(self._guest_turns) > KEPT_JOBS:
                self._guest_turns.pop(next(iter(self._guest_turns)))
        return turn

    async def _guest_writing(self) -> None:
        """A guest's message is being translated: "translating…" in the agent's tab."""
        async def show() -> None:
            line = self.progress(self.page["customer_translating"], always=True)
            self._guest_lines.append(line)
            await line.start()
        await self.from_outside(show())

    async def _guest_typing(self, typing: bool) -> None:
        await self.from_outside(self.typing_line("room", self.page["customer_typing"], typing))

    async def _guest_moved(self) -> None:
        """The customer opened the room's link on another device, which has the talk now."""
        await self.from_outside(self.say(self.page["room_moved"]))

    async def typing_line(self, key: str, text: str, typing: bool) -> None:
        """The tab's typing line (``public/desk.js``): *text* for :data:`SHOWN` seconds, or
        gone (*typing* False: their message came). *key*: whose (a desk number, "room")."""
        await self.screen.signal({"hymt": "visitor_typing", "key": key, "text": text,
                                  "seconds": SHOWN if typing else 0})

    async def window_message(self, data: object) -> None:
        """The agent types (the tab's script says so, throttled): the room their messages go
        to is told. Anything else — the page's echo of our own signals — is ignored."""
        if data == TYPING:
            room = self.talking_room()
            if room is not None:
                room.agent_typing()

    async def _from_guest(self, message: RoomMessage) -> None:
        """A guest's message reached the room: show it in the agent's tab, save the talk."""
        assert self.room is not None
        await self.from_outside(self.room_message(self.room, message))

    async def room_message(self, room: Room, message: RoomMessage) -> None:
        """A guest's message in the agent's tab (with its Correct button), the talk saved; it
        takes the place of its "translating" line."""
        line = self._guest_lines.popleft() if self._guest_lines and room is self.room else None
        demo = self.services.demo()
        turn = self._guest_turns.pop(message.original, None)
        buttons = self._correct_buttons(turn) if message.translation is not None else ()
        worded = warning_lines(turn.warnings, self.page) if turn is not None else None
        reply = Reply(wording.room_message_markdown(message, demo=demo, page=self.page,
                                                    warnings=worded), buttons)
        if line is not None and await line.end():
            await line.become(reply)
        else:
            await self.show(reply)
        await self.save()

    async def _reply_in_room(self, job: Job) -> None:
        room = self._room_of(job.room)
        if room is None:
            await self.say(self.page["room_closed"])
            return
        holder = self.services.desk.holder_of(room) if self.services.desk else None
        if holder is not None and holder != self.user_key:  # taken over meanwhile
            await self.say(self.page.fill("taken_over", name=holder.removeprefix("user:")))
            return
        progress = self.progress(self.page["translating_for_room"])
        mine: list[turns.AgentTurn] = []
        _ROOM_TURN.set(mine)
        sent = await self.finished(progress, job, room.agent_says(job.text))
        if sent is None:
            return
        turn = mine[-1] if mine else None
        if isinstance(sent, HeldReply):
            await self._show_held(room, sent, turn)
            await self.save()
            return
        if turn is not None and sent.translation is not None:
            await self.show(Reply(turns.turn_markdown(turn, demo=self.services.demo(),
                                                      delivery=self.page["delivered"],
                                                      page=self.page),
                                  self._correct_buttons(turn)))
        else:
            demo = self.services.demo()
            await self.show(Reply(wording.room_message_markdown(sent, demo=demo, page=self.page)))
        await self.save()

    def _reply_markdown(self, turn: turns.AgentTurn | None, message: RoomMessage) -> str:
        demo = self.services.demo()
        if turn is not None:
            return turns.turn_markdown(turn, demo=demo, page=self.page)
        return wording.room_message_markdown(message, demo=demo, page=self.page)

    async def _show_held(self, room: Room, held: HeldReply,
                         turn: turns.AgentTurn | None) -> None:
        """The held reply with its warnings, and the agent's two choices."""
        hold = _Hold(room.token, held.key, turn)
        key = self.holds.keep(hold)
        buttons = (Button("room_send_anyway", self.page["send_anyway"], {"key": key}, "send",
                          self.page["send_anyway_tip"]),
                   Button("room_edit", self.page["edit"], {"key": key}, "pencil",
                          self.page["edit_tip"]))
        markdown = warnings.held_markdown(self._reply_markdown(turn, held.message), self.page)
        hold.shown = await self.place(Reply(markdown, buttons))

    async def _decide(self, name: str, payload: object) -> None:
        """"Send anyway" or "Edit" under a held reply: the held message gives way to what
        became of it."""
        hold = self.holds.get(payload)
        room = self._room_of(hold.room) if hold is not None else None
        if hold is None or room is None or hold.key not in room.held:
            await self.say(self.page["held_gone"])
            return
        self.holds.jobs = {k: h for k, h in self.holds.jobs.items() if h is not hold}
        if name == "room_edit":
            held = room.drop_held(hold.key)
            await self._unshow(hold)
            await self.say(self.page["held_dropped"])
            if held is not None:  # the tab's script puts it back in the composer
                await self.screen.signal({"hymt": "edit", "text": held.message.original})
            await self.save()
            return
        holder = self.services.desk.holder_of(room) if self.services.desk else None
        if holder is not None and holder != self.user_key:  # taken over meanwhile
            room.drop_held(hold.key)
            await self.say(self.page.fill("taken_over", name=holder.removeprefix("user:")))
            return
        try:
            sent = room.send_held(hold.key)
        except RoomError as err:
            await self.say(str(err))
            return
        await self._unshow(hold)
        markdown = self._reply_markdown(hold.turn, sent)
        await self.show(Reply(f"{markdown}\n\n*{wording.escape_markdown(self.page['held_sent'])}*",
                              self._correct_buttons(hold.turn)))
        await self.save()

    @staticmethod
    async def _unshow(hold: _Hold) -> None:
        if hold.shown is not None:
            await hold.shown.remove()

    async def button(self, name: str, payload: object, label: str,
                     remove: Callable[[], Awaitable[object]]) -> None:
        if name in HOLD_BUTTONS:
            await self._decide(name, payload)
        elif name == "room_close":
            await remove()
            await self.room_command("close")
        elif name in DESK_BUTTONS and self.seat is not None:
            await self.seat.button(name, payload)
        elif name == "correct":
            await self._ask_correction(payload)
        else:
            await super().button(name, payload, label, remove)

    # --- corrections: the translation memory learns from the agent -----------------------------

    def _correct_buttons(self, turn: turns.AgentTurn | None) -> tuple[Button, ...]:
        """"Correct this translation" under a translated turn: only for a signed-in agent (a
        correction outranks the model for everyone) and with a translation memory."""
        item = Correctable.of(turn) if turn is not None else None
        if item is None or self.translator.memory is None or not self.user_key.startswith(
                "user:"):
            return ()
        return (Button("correct", self.page["correct_label"],
                       {"key": self.corrections.keep(item)}, "pencil",
                       self.page["correct_tooltip"]),)

    async def _ask_correction(self, payload: object) -> None:
        item = self.corrections.get(payload)
        if item is None:
            await self.say(self.page["correction_expired"])
            return
        self._correcting = (item, None)
        await self.say(wording.correct_prompt(item.original, item.target, self.page))

    async def _take_correction(self, text: str) -> None:
        """The agent's corrected text: checked (a changed value asks for it once more), then
        kept in the memory; a problem (lines) is said and the next message is tried again."""
        assert self._correcting is not None
        item, sent_before = self._correcting
        found = review(item, text, self.user_key.removeprefix("user:"))
        if found.problem:
            await self.say(found.problem)
            return
        typed = clean_text(text).strip()
        if found.findings and sent_before != typed:
            self._correcting = (item, typed)
            await self.say(wording.correction_check_message(
                warning_lines(found.findings, self.page), self.page))
            return
        self._correcting = None
        memory = self.translator.memory
        try:
            saved = memory is not None and await memory.correct(found.entries)
        except HymtError as err:  # the cap: said as it is
            await self.say_error(err)
            return
        if saved:
            room = self.talking_room()
            agent = self.user_key.removeprefix("user:")
            await audit_quietly(self.services.audit_log, f"agent:{agent}", "correct",
                                f"room {room.token}" if room is not None
                                else f"session {self.id}", f"into {item.target}")
        await self.say(wording.correction_saved_message(item.target, self.page) if saved
                       else self.page["correction_not_saved"])

    def end(self) -> None:
        if self.seat is not None:
            self.seat.stand()  # the agent keeps their desk conversations for a reload
        room = self.room
        if room is not None and room.to_agent == self._from_guest:  # not another tab's now
            if self._signed_in() and self.services.rooms is not None:
                self.services.rooms.let_go(room)  # theirs again at their next tab
            else:
                room.close("left")
        super().end()
