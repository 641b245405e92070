"""A recording screen and the services a core session needs, for tests that drive sessions
without Chainlit (the model: ``tests/support/stub_model.py``, a stand-in that answers at once)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.recall import Memory
from hymt_chat.engine.translator import Translator
from hymt_chat.modes.room import Rooms
from hymt_chat.modes.screen import Button, Field, Reply
from hymt_chat.modes.session import Services
from hymt_chat.service.health import Probe
from hymt_chat.service.metrics import Metrics
from hymt_chat.service.ratelimit import RateLimiter
from hymt_chat.service.readiness import Readiness
from hymt_chat.settings import Settings
from tests.support.stub_model import StubModel


@dataclass
class Shown:
    reply: Reply
    removed: bool = False

    async def remove(self) -> None:
        self.removed = True


@dataclass
class Line:
    cancel: Button | None = None
    names: list[str] = field(default_factory=list)
    closed: tuple[str, bool] | None = None
    became: Reply | None = None  # the reply the finished line turned into
    screen: RecordingScreen | None = None

    async def update(self, name: str) -> None:
        self.names.append(name)

    async def close(self, name: str, *, failed: bool) -> None:
        self.closed = (name, failed)

    async def replace(self, reply: Reply) -> Shown:
        """The line becomes *reply*: recorded on the screen like any reply shown."""
        assert self.screen is not None
        self.became = reply
        return await self.screen.send(reply)


@dataclass
class RecordingScreen:
    shown: list[Shown] = field(default_factory=list)
    panels: list[list[Field]] = field(default_factory=list)
    command_menus: list[list[tuple[str, str, str]]] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    forgotten: int = 0
    placeholder: str | None = None  # what the composer's empty box says
    signals: list[dict[str, object]] = field(default_factory=list)  # for the tab's own script
    spoken: list[str] = field(default_factory=list)  # what the microphone heard, as shown

    async def send(self, reply: Reply) -> Shown:
        self.shown.append(Shown(reply))
        return self.shown[-1]

    async def heard(self, text: str) -> Shown:
        """What was said into the microphone, as the speaker's own message."""
        self.spoken.append(text)
        return Shown(Reply(text))

    async def settings(self, fields: Any) -> None:
        self.panels.append(list(fields))

    async def commands(self, commands: Any, placeholder: str | None = None) -> None:
        self.command_menus.append(list(commands))
        self.placeholder = placeholder

    def progress(self, cancel: Button | None = None) -> Line:
        self.lines.append(Line(cancel, screen=self))
        return self.lines[-1]

    def forget(self) -> None:
        self.forgotten += 1

    async def signal(self, data: dict[str, object]) -> None:
        self.signals.append(data)

    @property
    def texts(self) -> list[str]:
        return [s.reply.markdown for s in self.shown]

    def last(self) -> Reply:
        return self.shown[-1].reply


class ScriptedProbe:
    def __init__(self, state: str = "ready") -> None:
        self.state = state

    async def __call__(self) -> Probe:
        return Probe(self.state)


def services(stub: StubModel, tmp_path, probe: ScriptedProbe | None = None,
              rate: str = "", rooms: Rooms | None = None, memory: bool = False,
              **overrides: Any) -> Services:
    # checks off unless a test asks: the stub echoes the source (a marker, not a translation),
    # which the answer checks would rightly ask for again as the wrong language.
    # The translation memory (which needs the checks) only when a test asks for it.
    overrides.setdefault("checks", memory)
    # A request held by a test lasts as long as the test wants: the deadline and the sized
    # call timeout are never what a test races (the tests of those set their own).
    overrides.setdefault("deadline", 600.0)
    overrides.setdefault("timeout_floor", 600.0)
    settings = Settings(base_url=stub.base_url, api_key="k", model="stub",
                        cache_dir=tmp_path / "cache", **overrides)
    policy = Policy(window_max=4, retries=False)
    translator = Translator(settings, client=ModelClient(settings), policy=policy,
                            memory=Memory.for_settings(settings) if memory else None)
    metrics = Metrics(settings, policy)
    readiness = Readiness(probe or ScriptedProbe(), interval=0.01, ready_interval=0.01)
    return Services(settings, metrics.instrument(translator), readiness, RateLimiter(rate),
                    metrics, max_files=2, rooms=rooms or Rooms())
