"""The chat page's presenter: what a core session shows (``hymt_chat.modes.screen``), as Chainlit
messages, actions and settings. ``app.py`` hands each tab's session a :class:`Screen`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import chainlit as cl
from chainlit.config import ChainlitConfigOverrides, FeaturesSettings, SpontaneousFileUploadFeature
from chainlit.config import config as cl_config
from chainlit.context import init_ws_context
from chainlit.input_widget import InputWidget, Select, Switch
from chainlit.logger import logger
from chainlit.session import WebsocketSession
from chainlit.user import PersistedUser
from socketio import AsyncServer

import chainlit_edge as edge
from hymt_chat.modes import kiosk, wording
from hymt_chat.modes import profiles as modes
from hymt_chat.modes.page_text import PageText
from hymt_chat.modes.screen import Button, Choice, Field, Reply
from hymt_chat.modes.session import Session

__all__ = ["NO_UPLOADS", "Screen", "first_naming", "name_from", "name_thread", "named",
           "own_controls", "profiles_shown", "starters_shown"]

# A profile's config overrides for a mode that takes no file: no paperclip on its page.
NO_UPLOADS = ChainlitConfigOverrides(features=FeaturesSettings(
    spontaneous_file_upload=SpontaneousFileUploadFeature(enabled=False)))
_NAMED = "hymt_named"  # the user session's key: the tab's thread has its name


def profiles_shown(page: PageText, signed_in: bool = False) -> list[cl.ChatProfile]:
    """The profile picker, in the page's language (a profile's name stays its identity).
    Only agents sign in: their page opens on the Support agent. Their reload of a desk thread
    then connects in its profile at once (Chainlit's page reconnects to switch from its
    default to a resumed thread's profile, and showed the thread twice)."""
    default = modes.AGENT_PROFILE if signed_in else modes.TRANSLATOR_PROFILE
    return [cl.ChatProfile(name=p.name, display_name=page[p.key],
                           markdown_description=page[f"{p.key}_about"], icon=p.icon or None,
                           default=p.name == default,
                           starters=None if p.starters else [],  # [] hides the starters
                           config_overrides=None if p.uploads else NO_UPLOADS)
            for p in modes.PROFILES]


def starters_shown(page: PageText) -> list[cl.Starter]:
    return [cl.Starter(label=label, message=message) for label, message in page.starters()]


def first_naming() -> bool:
    """The tab's thread is named from now on (a resumed thread has its name); True when it
    was not yet."""
    first = not named()
    edge.session_set(_NAMED, True)
    return first


def named() -> bool:
    """Has the app named the tab's thread already (:func:`name_thread`, or a resumed one)?"""
    return bool(edge.session_get(_NAMED))


async def name_from(title: str | None) -> None:
    """Name the tab's thread *title* (``Session.title``: its conversation's first real words)
    once there is one, unless it is named: Chainlit names it after its first interaction,
    unless that was a command, a file alone or a button (``history.unnamed_after`` leaves
    those out), so a thread is listed by its words, not as "/room close"."""
    if title and not named():
        await name_thread(title)


async def name_thread(name: str) -> None:
    """Name the tab's thread *name* in the history and in the page's list of threads.

    The name is written with its owner: it may land before Chainlit's own first save of the
    thread (which writes the owner), and the page, told of the thread below, may reload it at
    once; a thread without its owner refuses its own user's reload."""
    layer, thread = edge.data_layer(), cl.context.session.thread_id
    if layer is None:
        return
    user = cl.context.session.user
    owner = user.id if isinstance(user, PersistedUser) else None
    try:
        await layer.update_thread(thread, name=name, user_id=owner)
    except Exception:  # noqa: BLE001 - history is a convenience: never fail a turn over it
        logger.exception("could not name the thread in the history database")
        return
    edge.session_set(_NAMED, True)
    await cl.context.emitter.emit("first_interaction", {"interaction": name,
                                                        "thread_id": thread})


def own_controls(sio: AsyncServer, session: Callable[[], Session], *, microphone: bool) -> None:
    """The composer's controls that the tab's *session* answers: Stop, and the microphone."""
    _own_stop(sio, lambda: session().stop())
    _own_microphone(microphone, session)


def _own_stop(sio: AsyncServer, stop: Callable[[], object]) -> None:
    """The composer's Stop, in place of Chainlit's socket handler, whose first act is to say
    "Task manually stopped." in its own words: *stop* (the session's, which says what was
    stopped, with Retry), then the task Chainlit names cancelled like Chainlit does."""
    async def handler(sid: str) -> None:
        ws = WebsocketSession.get(sid)
        if ws is None:
            return
        init_ws_context(ws)
        stop()
        task = ws.current_task
        if task is not None and not task.done() and not task.cancelling():
            task.cancel()

    sio.on("stop", handler)  # python-socketio keeps one handler per event: ours


def _own_microphone(enabled: bool, session: Callable[[], Session]) -> None:
    """Chainlit's microphone (the composer's button, only when *enabled*) into the tab's
    *session*: it streams 16-bit PCM at the configured rate, and the session cuts the stream
    into utterances with its own voice activity detector."""
    cl_config.features.audio.enabled = enabled
    rate = int(cl_config.features.audio.sample_rate)

    async def start() -> bool:
        return await session().audio_start(rate)

    async def chunk(piece: cl.InputAudioChunk) -> None:
        await session().audio_chunk(piece.data)

    async def end() -> None:
        await session().audio_end()

    cl.on_audio_start(start)
    cl.on_audio_chunk(chunk)
    cl.on_audio_end(end)


def _action(button: Button) -> cl.Action:
    return cl.Action(name=button.name, payload=button.payload, label=button.label,
                     icon=button.icon, tooltip=button.tooltip or "")


def _speaker() -> str:
    """The author of a spoken message: the signed-in person, else Chainlit's own "User"."""
    user = edge.session_get("user")
    return str(user.identifier) if user is not None else "User"


def _message(reply: Reply) -> cl.Message:
    elements: list[Any] = [
        (cl.Image if f.mime.startswith("image/") else cl.File)(
            name=f.name, content=f.content, mime=f.mime, display="inline")
        for f in reply.files]
    if reply.sound is not None:
        elements.append(cl.Audio(name=reply.sound.name, content=reply.sound.content,
                                 mime=reply.sound.mime, display="inline",
                                 auto_play=reply.play))
    if reply.marker is not None:
        elements.append(cl.CustomElement(name=kiosk.MARKER_ELEMENT, props=reply.marker,
                                         display="inline"))
    return cl.Message(content=reply.markdown, actions=[_action(b) for b in reply.buttons],
                      elements=elements)


async def _drop_actions(message: cl.Message) -> None:
    for action in message.actions:
        await edge.remove(action)
    message.actions = []


class _Line:
    """A progress line: a message of its own, updated in place, in the app's own words (a
    ``cl.Step`` is drawn under Chainlit's "Using …" label). A background job's line carries
    the job's Cancel until it ends and is drawn again under each newer message, so that it
    stays in view; a finished line becomes the result (:meth:`replace`)."""

    def __init__(self, screen: Screen, cancel: Button | None) -> None:
        self.screen = screen
        self.cancel = cancel
        self.message: cl.Message | None = None
        self.name = ""

    def _new(self) -> cl.Message:
        actions = [_action(self.cancel)] if self.cancel is not None else []
        return cl.Message(content=wording.escape_markdown(self.name), actions=actions)

    async def update(self, name: str) -> None:
        self.name = name
        if self.message is None:
            self.message = self._new()
            await edge.send(self.message)
            await self.screen.newest(self)
        else:
            self.message.content = wording.escape_markdown(name)
            await edge.update(self.message)

    async def close(self, name: str, *, failed: bool) -> None:
        self.screen.jobs.discard(self)
        if self.message is not None:
            await _drop_actions(self.message)
            await self.update(name)

    async def replace(self, reply: Reply) -> cl.Message:
        self.screen.jobs.discard(self)
        if self.message is None:
            return await self.screen.send(reply)
        await _drop_actions(self.message)
        done = _message(reply)
        self.message.content = done.content
        self.message.actions, self.message.elements = done.actions, done.elements
        await edge.update(self.message)
        return self.message

    async def lower(self) -> None:
        """Draw the line again as the newest message."""
        if self.message is None:
            return
        await _drop_actions(self.message)
        await edge.remove(self.message)
        self.message = self._new()
        await edge.send(self.message)


class Screen:
    """One tab's output. It keeps its background jobs' open lines, to draw them again under
    each newer message (a job's line scrolled out of view once the person sent another)."""

    def __init__(self) -> None:
        self.jobs: set[_Line] = set()  # background jobs' lines, while the job runs
        self.latest: object = None  # the newest message shown (a line, or a cl.Message)

    async def newest(self, shown: object) -> None:
        """*shown* was just sent: the running jobs' lines go under it."""
        self.latest = shown
        for line in list(self.jobs):
            if line is not self.latest and line.message is not None:
                await line.lower()
                self.latest = line

    async def send(self, reply: Reply) -> cl.Message:
        msg = _message(reply)
        await edge.send(msg)
        await self.newest(msg)
        return msg

    async def heard(self, text: str) -> cl.Message:
        msg = cl.Message(content=text, type="user_message", author=_speaker())
        await edge.send(msg)
        await self.newest(msg)
        return msg

    async def settings(self, fields: Sequence[Field]) -> None:
        widgets: list[InputWidget] = [
            Select(id=f.id, label=f.label, items=f.items, initial_value=f.value)
            if isinstance(f, Choice) else
            Switch(id=f.id, label=f.label, initial=f.value, tooltip=f.tooltip)
            for f in fields]
        await edge.send(cl.ChatSettings(widgets))

    async def commands(self, commands: Sequence[tuple[str, str, str]],
                       placeholder: str | None = None) -> None:
        await cl.context.emitter.set_commands([
            {"id": cid, "description": text, "icon": icon, "button": False, "persistent": False,
             "selected": False}
            for cid, text, icon in commands])
        if placeholder is not None:  # Chainlit's own is one sentence for every mode
            await self.signal({"hymt": "composer", "placeholder": placeholder})

    def progress(self, cancel: Button | None = None) -> _Line:
        line = _Line(self, cancel)
        if cancel is not None:
            self.jobs.add(line)
        return line

    def forget(self) -> None:
        cl.chat_context.clear()
        self.latest = None  # a closed session is kept an hour: not its last reply with it
        self.jobs.clear()

    async def signal(self, data: dict[str, object]) -> None:
        await cl.send_window_message(data)  # the page posts it to itself: public/desk.js
