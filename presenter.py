"""The chat page's presenter: what a core session shows (``hymt_chat.modes.screen``), as Chainlit
messages, actions, settings and steps. ``app.py`` hands each tab's session a :class:`Screen`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import chainlit as cl
from chainlit.input_widget import Select, Switch
from chainlit.utils import utc_now

from hymt_chat.modes import kiosk, wording
from hymt_chat.modes import profiles as modes
from hymt_chat.modes.chat_words import PageText
from hymt_chat.modes.screen import Button, Choice, Field, Reply

__all__ = ["Screen", "profiles_shown", "starters_shown"]


def profiles_shown(page: PageText) -> list[cl.ChatProfile]:
    """The profile picker, in the page's language (a profile's name stays its identity)."""
    return [cl.ChatProfile(name=p.name, display_name=page[p.key],
                           markdown_description=page[f"{p.key}_about"], icon=p.icon or None,
                           default=p.name == modes.TRANSLATOR_PROFILE,
                           starters=None if p.starters else [])  # [] hides the starters
            for p in modes.PROFILES]


def starters_shown(page: PageText) -> list[cl.Starter]:
    return [cl.Starter(label=label, message=message) for label, message in page.starters()]



class _Step:
    """A progress line: a ``cl.Step`` under the message being answered, made at first news."""

    def __init__(self) -> None:
        self.step: cl.Step | None = None

    async def update(self, name: str) -> None:
        if self.step is None:
            parent = cl.context.current_step  # the on_message run: it shows above the answer
            self.step = cl.Step(name=name, type="tool", show_input=False, icon="languages",
                                parent_id=parent.id if parent else None)
            self.step.start = utc_now()
            await self.step.send()
        else:
            self.step.name = name
            await self.step.update()

    async def close(self, name: str, *, failed: bool) -> None:
        if self.step is not None:
            self.step.name, self.step.end, self.step.is_error = name, utc_now(), failed
            await self.step.update()


def _action(button: Button) -> cl.Action:
    return cl.Action(name=button.name, payload=button.payload, label=button.label,
                     icon=button.icon, tooltip=button.tooltip or "")


class _JobLine:
    """A background job's progress: a message of its own, updated in place, with the job's
    Cancel until it ends (a step has no buttons, and the message's own run is long over)."""

    def __init__(self, cancel: Button) -> None:
        self.cancel = cancel
        self.message: cl.Message | None = None

    async def update(self, name: str) -> None:
        if self.message is None:
            self.message = cl.Message(content=wording.escape_markdown(name),
                                      actions=[_action(self.cancel)])
            await self.message.send()
        else:
            self.message.content = wording.escape_markdown(name)
            await self.message.update()

    async def close(self, name: str, *, failed: bool) -> None:
        if self.message is not None:
            for action in self.message.actions:
                await action.remove()
            self.message.actions = []
            await self.update(name)


class Screen:
    async def send(self, reply: Reply) -> cl.Message:
        elements: list[Any] = [
            (cl.Image if f.mime.startswith("image/") else cl.File)(
                name=f.name, content=f.content, mime=f.mime, display="inline")
            for f in reply.files]
        if reply.marker is not None:
            elements.append(cl.CustomElement(name=kiosk.MARKER_ELEMENT, props=reply.marker,
                                             display="inline"))
        actions = [_action(b) for b in reply.buttons]
        msg = cl.Message(content=reply.markdown, actions=actions, elements=elements)
        await msg.send()
        return msg

    async def settings(self, fields: Sequence[Field]) -> None:
        await cl.ChatSettings([
            Select(id=f.id, label=f.label, items=f.items, initial_value=f.value)
            if isinstance(f, Choice) else
            Switch(id=f.id, label=f.label, initial=f.value, tooltip=f.tooltip)
            for f in fields]).send()

    async def commands(self, commands: Sequence[tuple[str, str, str]]) -> None:
        await cl.context.emitter.set_commands([
            {"id": cid, "description": text, "icon": icon, "button": False, "persistent": False}
            for cid, text, icon in commands])

    def progress(self, cancel: Button | None = None) -> _Step | _JobLine:
        return _Step() if cancel is None else _JobLine(cancel)

    def forget_context(self) -> None:
        cl.chat_context.clear()

    async def signal(self, data: dict[str, object]) -> None:
        await cl.send_window_message(data)  # the page posts it to itself: public/desk.js
