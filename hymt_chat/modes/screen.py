"""What a mode shows, as plain data, and the one interface that shows it.

The modes decide *what* to show (a reply with buttons and files, a settings panel, a progress
line); ``presenter.py`` (beside ``app.py``) decides *how* (``cl.Message``, ``cl.Action``,
``cl.Step``). A unit test gives a session a recording screen instead and reads what it would
have shown.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "Attachment",
    "Button",
    "Choice",
    "Field",
    "ProgressView",
    "Reply",
    "Screen",
    "Shown",
    "Toggle",
    "not_stored",
    "storing",
]

_NOT_STORED: ContextVar[bool] = ContextVar("hymt_not_stored", default=False)


@contextmanager
def not_stored() -> Iterator[None]:
    """What is shown inside is not kept in the tab's history: a view of the present that each
    reload shows afresh (the desk's "You hold …" and the current conversation's latest lines).
    Kept, every resume showed the earlier ones again: one set per reload, and one per socket
    Chainlit's page opens while it loads (chromium: three, each resuming the thread)."""
    token = _NOT_STORED.set(True)
    try:
        yield
    finally:
        _NOT_STORED.reset(token)


def storing() -> bool:
    """For the data layer: whether what is shown now is kept."""
    return not _NOT_STORED.get()


@dataclass(frozen=True, slots=True)
class Button:
    """A button under a reply; *name* is the action the app routes back to the session."""

    name: str
    label: str
    payload: dict[str, Any] = field(default_factory=dict)
    icon: str | None = None
    tooltip: str | None = None


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file offered for download beside a reply."""

    name: str
    content: bytes
    mime: str


@dataclass(frozen=True, slots=True)
class Reply:
    """One message: Markdown, its buttons and files, and the kiosk's marker (its props)."""

    markdown: str
    buttons: tuple[Button, ...] = ()
    files: tuple[Attachment, ...] = ()
    marker: dict[str, object] | None = None
    sound: Attachment | None = None  # the answer read aloud by the server's voice (WAV)
    play: bool = False  # start the sound at once (the kiosk reads every answer aloud)


@dataclass(frozen=True, slots=True)
class Choice:
    """A drop-down in the settings panel: *items* maps labels to values."""

    id: str
    label: str
    items: dict[str, str]
    value: str


@dataclass(frozen=True, slots=True)
class Toggle:
    """A switch in the settings panel."""

    id: str
    label: str
    value: bool
    tooltip: str | None = None


Field = Choice | Toggle


class Shown(Protocol):
    """A message on screen, which a kiosk reset takes away again."""

    async def remove(self) -> None: ...


class ProgressView(Protocol):
    """The line that shows a long job's progress; created by its first update. A background
    job's line carries its Cancel until it closes; a finished line becomes the result."""

    async def update(self, name: str) -> None: ...

    async def close(self, name: str, *, failed: bool) -> None: ...

    async def replace(self, reply: Reply) -> Shown:
        """The line, shown, becomes *reply* (its own buttons gone, the reply's on)."""
        ...


class Screen(Protocol):
    """Where a session's output goes: one chat tab."""

    async def send(self, reply: Reply) -> Shown: ...

    async def heard(self, text: str) -> Shown:
        """What the person said into the microphone, shown as their own message (they may
        edit it, as a typed one)."""
        ...

    async def settings(self, fields: Sequence[Field]) -> None: ...

    async def commands(self, commands: Sequence[tuple[str, str, str]],
                       placeholder: str | None = None) -> None:
        """The composer's command menu, and what its empty box says the mode takes."""
        ...

    def progress(self, cancel: Button | None = None) -> ProgressView:
        """A progress line; with *cancel*, a background job's, shown with that button."""
        ...

    def forget(self) -> None:
        """Let go of what was shown: the chat's message list (Chainlit keeps one per session)
        and the messages kept to draw job lines under."""
        ...

    async def signal(self, data: dict[str, object]) -> None:
        """A message for the tab's own script (``public/desk.js``: the typing line), not a
        chat message."""
        ...
