"""The Support agent mode as a session: the conversation, its two switches, its commands, and
each message routed and translated the right way (:func:`~.turns.handle_agent_message`).

The conversation is saved after every change through *save* (the app writes it into the chat
thread, so a resumed thread or a restarted server loses nothing).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from hymt_chat.errors import HymtError
from hymt_chat.lang.names import language_choices
from hymt_chat.modes import wording
from hymt_chat.modes.agent import turns
from hymt_chat.modes.agent.conversation import Conversation
from hymt_chat.modes.screen import Attachment, Choice, Reply, Screen, Shown, Toggle
from hymt_chat.modes.session import Job, Services, Session, Upload

__all__ = ["AgentSession"]

Save = Callable[[dict[str, Any]], Awaitable[None]]


class AgentSession(Session):
    def __init__(self, services: Services, screen: Screen, *, session_id: str, user_key: str,
                 conversation: Conversation | None = None, save: Save | None = None) -> None:
        super().__init__(services, screen, session_id=session_id, user_key=user_key)
        self.conv = conversation or Conversation(self.settings.default_target)
        options = turns.AgentOptions.from_settings(self.settings)
        self.back_translate = options.back_translate
        self.use_context = options.use_context
        self._save = save

    async def resume(self, chat_settings: Mapping[str, Any] | None) -> None:
        await self.start(banner=False)  # the thread shows the banner already

    async def start(self, *, banner: bool = True) -> None:
        await self.send_settings()
        await self.screen.commands(turns.AGENT_COMMANDS)
        if banner:
            await self.banner()

    async def send_settings(self) -> None:
        await self.screen.settings([
            Choice("agent_language", "Your language (the agent's)",
                   language_choices(include_auto=False), self.conv.agent_language),
            Toggle("back_translate", "Check before sending (back-translate my replies)",
                   self.back_translate),
            Toggle("use_context", "Send the last few turns as context", self.use_context),
        ])

    async def banner(self) -> None:
        await self.show(Reply(f"**{wording.escape_markdown(self.conv.banner())}**"))

    async def save(self) -> None:
        if self._save is not None:
            await self._save(self.conv.to_dict())

    async def settings_changed(self, values: Mapping[str, Any]) -> None:
        self.back_translate = bool(values.get("back_translate"))
        self.use_context = bool(values.get("use_context"))
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
                      shown: Shown | None = None) -> None:
        """A command (free), or a message to translate (charged by size)."""
        try:
            parsed = turns.parse_agent_command(text, command)
        except HymtError as err:
            await self.say_error(err)
            return
        if parsed is not None:
            await self.command(parsed)
        elif await self.admit(len(text)):
            await self.when_ready(Job("agent", text), inline=True)

    async def command(self, command: turns.AgentCommand) -> None:
        try:
            reply = turns.run_agent_command(self.conv, command)
        except HymtError as err:
            await self.say_error(err)
            return
        files = tuple(Attachment(f.name, f.content, f.mime) for f in reply.files)
        await self.show(Reply(wording.escape_markdown(reply.text), files=files))
        if reply.banner_changed:
            await self.send_settings()  # /agent changes the picker's value
            await self.banner()
        await self.save()

    async def execute(self, job: Job) -> None:
        if job.partial is not None:
            await self.translate_rest(job)
            return
        progress = self.progress("Translating")
        result = await self.finished(progress, job, turns.handle_agent_message(
            self.conv, job.text, self.translator, self.settings,
            back_translate=self.back_translate, use_context=self.use_context,
            user=self.id, on_progress=progress.progress, on_event=progress.event))
        if result is None:
            return
        await self.show(Reply(turns.turn_markdown(result, demo=self.services.demo())))
        if result.route.pair_changed:
            await self.banner()
        await self.save()
