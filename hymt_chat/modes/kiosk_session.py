"""The Kiosk mode as a session: strangers at a public screen.

Type or paste, tap a language (or tap first, then type); the answer comes with "Read aloud"
and "Another language". After the idle time the screen and everything kept are wiped — the
browser does it first (public/kiosk.js), this session's watcher is the server's backstop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from hymt_chat.errors import HymtError
from hymt_chat.lang.languages import get_language
from hymt_chat.lang.names import AUTO
from hymt_chat.modes import kiosk, wording
from hymt_chat.modes.page_text import PageText
from hymt_chat.modes.screen import Button, Reply, Screen, Shown
from hymt_chat.modes.session import Job, Kept, Services, Session, Upload, player
from hymt_chat.modes.warnings import with_warnings
from hymt_chat.text.cleanup import is_blank
from hymt_chat.words.said import said

__all__ = ["PICK", "KioskSession"]

log = logging.getLogger("hymt_chat.kiosk")
PICK = "pick"  # the "Another language" button of a kiosk answer


def _buttons(choices: list[kiosk.KioskButton]) -> tuple[Button, ...]:
    return tuple(Button("kiosk_target", b.label, {"target": b.value}) for b in choices)


class KioskSession(Session):
    def __init__(self, services: Services, screen: Screen, *, session_id: str,
                 user_key: str, page: PageText | None = None) -> None:
        super().__init__(services, screen, session_id=session_id, user_key=user_key, page=page)
        self.idle = self.settings.kiosk_idle_seconds
        self.timer = kiosk.IdleTimer(self.idle)
        self.watcher: asyncio.Task[None] | None = None
        self.on_screen: list[Shown] = []  # everything on screen, for the idle reset
        self.target: str | None = None  # the language tapped
        self.text: str | None = None  # the text on screen, for the next language tapped
        self.source: str | None = None  # the language it was spoken in (None: typed)

    def marker(self, text: str = "", target: str | None = None, *,
               welcome: bool = False, spoken: bool = False) -> dict[str, object]:
        return kiosk.marker_props(idle_seconds=self.idle, text=text, target=target,
                                  label=self.page["kiosk_read_aloud"],
                                  still=self.page["kiosk_still_there"], welcome=welcome,
                                  spoken=spoken)

    async def show(self, reply: Reply) -> None:
        self.track(await self.place(reply))

    def track(self, shown: Shown) -> None:
        """Remember what is on screen (the visitor's own messages too)."""
        self.on_screen.append(shown)

    async def start(self) -> None:
        await self.screen.settings([])  # nothing to set on a kiosk
        await self.screen.commands((), self.page["placeholder_kiosk"])
        self.touch(activity=False)
        await self.welcome()

    async def welcome(self) -> None:
        text = wording.welcome_markdown(self.idle, self.page)
        await self.show(Reply(f"{text}\n\n{wording.counter_link(self.page)}",
                              _buttons(kiosk.kiosk_buttons(page=self.page)),
                              marker=self.marker(welcome=True)))

    def touch(self, *, activity: bool = True) -> None:
        """Restart the idle clock (and the watcher, if a dropped connection ended it)."""
        if activity:
            self.timer.touch()
        if self.watcher is None or self.watcher.done():
            self.watcher = asyncio.get_running_loop().create_task(kiosk.watch_idle(
                self.timer, self.expire, grace=kiosk.server_grace(self.idle)))

    async def expire(self) -> None:
        """The idle time passed: start afresh, unless a translation is still on its way (the
        visitor is waiting for it; the clock restarts when it is shown)."""
        if self.busy:
            self.timer.touch()
            return
        await self.reset()

    async def reset(self) -> None:
        """Wipe the screen and the session, then greet the next visitor."""
        self.drop()
        for shown in self.on_screen:
            try:
                await shown.remove()
            except Exception:
                log.debug("kiosk reset: could not remove a message", exc_info=True)
        self.on_screen, self.target, self.text, self.source = [], None, None, None
        self.kept = Kept()
        self.screen.forget()
        await self.welcome()

    def end(self) -> None:
        if self.watcher is not None:
            self.watcher.cancel()
        super().end()
        self.on_screen, self.text = [], None

    async def message(self, text: str, command: str | None, *, uploads: Sequence[Upload] = (),
                      shown: Shown | None = None, spoken: str | None = None) -> None:
        if shown is not None:
            self.track(shown)
        self.touch()
        if uploads:  # a photo of a sign or a menu: its text is the message
            found = await self.text_in_pictures(uploads)
            if found is None:
                return
            text = "\n\n".join(part for part in (text, found) if part.strip())
        if is_blank(text) or not await self.admit(Job("kiosk", text)):
            return
        self.text, self.source = text, spoken
        if self.target is None:
            await self.show(Reply(wording.escape_markdown(wording.kiosk_pick_message(self.page)),
                                  _buttons(kiosk.kiosk_buttons(page=self.page))))
            return
        await self.when_ready(Job("kiosk", text, target=self.target, source=spoken), inline=True)

    async def button(self, name: str, payload: object, label: str,
                     remove: Callable[[], Awaitable[object]]) -> None:
        if name == "kiosk_target" and isinstance(payload, Mapping):
            await self.tap(payload, label)
        else:
            await super().button(name, payload, label, remove)

    async def tap(self, payload: Mapping[str, Any], label: str) -> None:
        """A language button: "More languages", "Another language", or a language."""
        self.touch()
        target = payload.get("target")
        if target in (kiosk.MORE, PICK):
            choices = (kiosk.more_buttons() if target == kiosk.MORE
                       else kiosk.kiosk_buttons(page=self.page))
            await self.show(Reply(wording.escape_markdown(wording.kiosk_pick_message(self.page)),
                                  _buttons(choices)))
            return
        try:  # the payload comes from the browser: a code of ours, or nothing is stored
            code = get_language(target).code
        except HymtError as err:
            await self.say_error(err)
            return
        self.target = code
        if self.text and await self.admit(Job("kiosk", self.text)):  # a text on screen: into it
            await self.when_ready(Job("kiosk", self.text, target=code, source=self.source),
                                  inline=False)
        else:
            await self.say(wording.kiosk_target_message(code, label, self.page))

    async def execute(self, job: Job) -> None:
        with kiosk.kiosk_memory(self.settings):  # read, never write what a visitor typed
            await self._execute(job)
        self.touch()  # the answer is on screen: the visitor reads it from now on

    async def _execute(self, job: Job) -> None:
        if job.partial is not None:
            await self.translate_rest(job)
            return
        assert job.target is not None  # a kiosk job is made for the language tapped
        progress = self.progress(self.page["translating"])
        result = await self.finished(progress, job, self.translator.translate(
            job.text, job.target, job.source or AUTO, user=self.id, on_progress=progress.progress,
            on_event=progress.event))
        if result is None:
            return
        if result.same_language:
            await self.show(Reply(
                wording.escape_markdown(wording.kiosk_same_message(result.target, self.page)),
                _buttons(kiosk.kiosk_buttons(page=self.page))))
            return
        meta = wording.format_meta(result, demo=self.services.demo(), page=self.page)
        # Read aloud by the server: a kiosk's browser often has no voice of its own.
        sound = await self.read_aloud(result.text, result.target)
        if sound is not None:
            meta = f"{meta} · {self.page.say(said('voice_read_by', voice=sound.program))}"
        await self.show(Reply(
            with_warnings(wording.answer_markdown(result.text, meta), result.warnings,
                          self.page),
            (Button("kiosk_target", kiosk.with_chinese(self.page, "kiosk_another"),
                    {"target": PICK}, "languages"),),
            marker=self.marker(result.text, result.target, spoken=sound is not None),
            sound=player(sound) if sound is not None else None, play=True))
