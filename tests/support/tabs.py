"""The real app (``chainlit run app.py``) in front of a stand-in model whose answers are marked
``EN:`` (so a test can count what reached the model), and a socket.io client like a browser
tab's. For tests of the app's door and its websockets; no vLLM, no browser."""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import aiohttp
import socketio

from tests.support.chainlit_app import app_env, running_app
from tests.support.ports import free_port
from tests.support.stub_model import StubModel, echo_source

__all__ = ["Tab", "app", "marked", "open_room", "room_events", "room_ws_url"]

T = TypeVar("T")
CONNECT_WAIT = 30.0  # seconds a connect waits for the namespace (socket.io's default: 1)


def marked(prompt: str) -> str:
    return "EN:" + echo_source(prompt)


@contextmanager
def app(tmp_path: Path, answer: Callable[[str], str] = marked, port: int | None = None,
        **env: str):
    """The app on a stand-in model (*answer*: prompt -> reply; it may sleep to be slow), on
    *port* (a free one unless given: an app started again where its pages knew it)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    with StubModel(answer=answer) as stub:
        environment = app_env(HYMT_BASE_URL=stub.base_url, HYMT_API_KEY="k", HYMT_MODEL="stub",
                              HYMT_CACHE_DIR=str(tmp_path / "cache"), HYMT_PORT=str(free_port()),
                              **env)
        # The stub's "EN:<French>" is a marker, not a translation: the answer checks
        # would rightly retry it as French; they are tested in tests/test_checks_*.py.
        environment.setdefault("HYMT_CHECKS", "false")
        if "HYMT_AGENTS" not in env:
            environment.pop("CHAINLIT_AUTH_SECRET", None)
            environment["HYMT_AGENTS"] = ""
        with running_app(environment, port or free_port(), tmp_path / "app.log") as url:
            yield url, stub


class Tab:
    """One browser tab's socket.io session: send messages, read what the app answered."""

    def __init__(self, url: str, headers: dict[str, str] | None = None,
                 profile: str | None = None, thread: str | None = None,
                 greet: bool = True) -> None:
        """*thread*: the page of that thread (``/thread/<id>``), which Chainlit resumes.
        *greet*: False leaves ``connection_successful`` (the chat's start) to the test."""
        self.url, self.headers, self.profile, self.thread = url, headers or {}, profile, thread
        self.greet = greet
        self.session = str(uuid.uuid4())
        self.events: list[tuple[str, object]] = []
        self.client = socketio.AsyncClient()

        @self.client.on("*")
        async def record(event, data=None):
            self.events.append((event, data))

        @self.client.event
        async def disconnect(reason=None):  # a reserved event: "*" does not see it
            self.events.append(("disconnect", reason))

    async def __aenter__(self) -> Tab:
        try:
            await self._connect()
        except socketio.exceptions.ConnectionError:
            http = getattr(self.client.eio, "http", None)
            if http is not None:
                await http.close()  # the refused handshake left its HTTP session open
            raise
        if self.greet:
            await self.client.emit("connection_successful")
        return self

    async def _connect(self) -> None:
        # socket.io waits 1 s for the namespace by default: a 2-core CI host running vLLM and two
        # replicas took longer once ("Unexpected connection error"), so the wait is CONNECT_WAIT.
        await self.client.connect(self.url, socketio_path="/ws/socket.io",
                                  transports=["websocket"], headers=self.headers,
                                  wait_timeout=CONNECT_WAIT,
                                  auth={"sessionId": self.session, "clientType": "webapp",
                                        "userEnv": "{}",
                                        **({"chatProfile": self.profile} if self.profile else {}),
                                        **({"threadId": self.thread} if self.thread else {})})

    async def __aexit__(self, *exc: object) -> None:
        await self.client.disconnect()

    async def send(self, text: str) -> None:
        await self.client.emit("client_message", {"message": {
            "id": str(uuid.uuid4()), "threadId": "", "name": "User", "type": "user_message",
            "output": text, "createdAt": "2026-01-01T00:00:00Z"}, "fileReferences": None})

    def said(self, text: str) -> list[str]:
        return [d["output"] for e, d in self.events
                if e in ("new_message", "update_message") and isinstance(d, dict)
                and text in (d.get("output") or "")]

    def actions(self, name: str) -> list[dict]:
        return [d for e, d in self.events if e == "action" and d.get("name") == name]

    async def action(self, name: str, where: Callable[[dict], bool] = lambda a: True,
                     timeout: float = 60) -> dict:
        """The first button *name* (matching *where*) the app sent: Chainlit sends a message's
        buttons after the message, so they are waited for, not read at once."""
        return await self._first(lambda: next((a for a in self.actions(name) if where(a)), None),
                                 timeout, f"no {name} button")

    async def wait(self, *texts: str, timeout: float = 60) -> str:
        """The first text of *texts* the app said (waiting for it: generously, since a busy
        2-core machine can take seconds to answer a socket)."""
        return await self._first(lambda: next((t for t in texts if self.said(t)), None),
                                 timeout, f"none of {texts}")

    async def event(self, name: str, timeout: float = 60) -> object:
        """The data of the first event *name* the app sent (waited for, as :meth:`wait`)."""
        return await self._first(lambda: next((d for e, d in self.events if e == name), None),
                                 timeout, f"no {name} event")

    async def _first(self, found: Callable[[], T | None], timeout: float, missing: str) -> T:
        """What *found* returns once it is not None, polled until *timeout* seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if (value := found()) is not None:
                return value
            await asyncio.sleep(0.1)
        raise AssertionError(f"{missing} in {str(self.events[-5:])[:800]}")


async def open_room(tab: Tab) -> str:
    """An agent tab types /room: the new room's token (of its latest "Room open")."""
    before = len(tab.said("Room open"))
    await tab.send("/room")
    deadline = time.monotonic() + 60
    while len(tab.said("Room open")) == before and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    # From the link's target, not its text: the text is Markdown-escaped ("\_", "\-"), so a
    # token with "_" or "-" read from there came out cut short (a flaky 404).
    link = re.search(r"\]\([^)]*/room/([A-Za-z0-9_-]+)\)", tab.said("Room open")[-1])
    assert link, tab.said("Room open")
    return link.group(1)


async def room_events(ws: aiohttp.ClientWebSocketResponse, until: str, timeout: float = 60,
                      tab: Tab | None = None) -> list[dict]:
    """A guest socket's events up to the first of type *until* (waiting as generously as
    :meth:`Tab.wait`). *tab*: the agent's, whose last events a timeout shows."""
    got = []
    while True:
        try:
            message = await asyncio.wait_for(ws.receive(), timeout)
        except TimeoutError:
            seen = str(tab.events[-6:])[:1500] if tab is not None else "(no tab given)"
            raise AssertionError(f"no {until!r} in {timeout:g} s after {got}; the agent's tab "
                                 f"last showed {seen}") from None
        if message.type != aiohttp.WSMsgType.TEXT:
            raise AssertionError(f"socket ended: {message!r} after {got}")
        got.append(json.loads(message.data))
        if got[-1]["type"] == until:
            return got


def room_ws_url(url: str, token: str) -> str:
    """The guest socket of room *token*."""
    return url.replace("http://", "ws://") + f"/room/{token}/ws"
