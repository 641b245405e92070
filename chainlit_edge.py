"""The one typed edge of Chainlit's untyped surface: each call that ``app.py`` and
``presenter.py`` make into a Chainlit function left without annotations goes through here,
typed, so mypy checks both files strictly (Chainlit is pinned: ``tests/test_chainlit_pin.py``);
with the moves that reach into Chainlit's session and emitter (who a token names, waiting for
a resumed thread to be shown, and telling a closed tab from a reconnecting one)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import chainlit as cl
from chainlit.auth import get_token_from_cookies
from chainlit.auth.jwt import decode_jwt
from chainlit.data import get_data_layer
from chainlit.data.base import BaseDataLayer
from chainlit.logger import logger
from chainlit.session import WebsocketSession

__all__ = ["data_layer", "once_shown", "own_uploads", "remove", "send", "session_get",
           "session_set", "tab_id", "token_user", "unless_back", "update"]


class _Sendable(Protocol):
    """What Chainlit sends to the page: a message, the chat settings."""

    async def send(self) -> Any: ...


class _Sent(_Sendable, Protocol):
    """What Chainlit also updates in place: a message."""

    async def update(self) -> Any: ...


def session_get(key: str) -> Any:
    """The tab's value under *key* in Chainlit's user session (None: not set)."""
    return cl.user_session.get(key)  # type: ignore[no-untyped-call]


def session_set(key: str, value: object) -> None:
    cl.user_session.set(key, value)  # type: ignore[no-untyped-call]


def data_layer() -> BaseDataLayer | None:
    """Chainlit's history layer (None: the app keeps no history)."""
    layer: BaseDataLayer | None = get_data_layer()  # type: ignore[no-untyped-call]
    return layer


async def send(item: _Sendable) -> None:
    await item.send()


async def update(item: _Sent) -> None:
    await item.update()


async def remove(item: cl.Action | cl.Message) -> None:
    await item.remove()  # type: ignore[no-untyped-call]


def token_user(cookies: dict[str, str], authorization: str | None) -> cl.User | None:
    """Who a request's Chainlit token names (None: no token, or one Chainlit will refuse)."""
    token = get_token_from_cookies(cookies)
    if not token and authorization and authorization.startswith("Bearer "):
        token = authorization.removeprefix("Bearer ").strip()
    try:
        return decode_jwt(token) if token else None
    except Exception:  # noqa: BLE001 - expired or forged: Chainlit answers it with 401
        return None


def tab_id() -> str:
    """The tab's Chainlit session id: the same across the reconnects of its socket."""
    return str(cl.context.session.id)


def unless_back(grace: float, let_go: Callable[[], None]) -> None:
    """Call *let_go* after *grace* seconds unless the tab's socket has come back by then.
    Chainlit calls on_chat_end at every disconnect, also when the page reconnects at once (it
    does on each resume of a thread of another profile than the page's default), and restores
    the same session on the new socket."""
    session = cl.context.session
    if not isinstance(session, WebsocketSession):  # no socket to come back: at once
        let_go()
        return
    socket = session.socket_id

    def check() -> None:
        if session.socket_id == socket:  # no new socket since: the tab is gone
            let_go()

    asyncio.get_running_loop().call_later(grace, check)


def once_shown(then: Callable[[], Awaitable[None]]) -> None:
    """Run *then* once Chainlit has sent the resumed thread to the page. It sends it after
    on_chat_resume returns, and the page then replaces its messages with the thread's: what
    was said during the resume vanished (an agent's reload lost the desk's "You hold …")."""
    emitter = cl.context.emitter
    send = emitter.resume_thread

    async def resume_thread(thread: Any) -> None:
        await send(thread)
        emitter.resume_thread = send  # type: ignore[method-assign]
        try:
            await then()
        except Exception:  # noqa: BLE001 - outside on_chat_resume's guard: log, keep the socket
            logger.exception("the resumed tab's mode failed after the thread was shown")

    emitter.resume_thread = resume_thread  # type: ignore[method-assign,assignment]


def own_uploads(kept_as: Callable[[str, str, bytes], str]) -> None:
    """The composer's files taken as the app reads them (``hymt_chat.modes.documents``), which
    refuses what it cannot read itself, in the page's words, naming the kinds it reads:

    * of any type: the config's ``accept`` list is empty, so that the page's dropzone takes
      every file (its own refusal is a toast of MIME types, in English), and Chainlit's server
      check of that list is skipped for them (a file an ``AskFileMessage`` asks for is still
      checked against its spec);
    * an empty one too (Chainlit answers it with a 500, which the page shows as "Upload
      failed", with no reason);
    * each kept under the MIME type *kept_as* (name, the browser's type, content) gives it,
      which decides how the page shows it in its message (a PDF viewer, a picture, a file).
    """
    import chainlit.server  # here: importing it makes the app (app.py has, by now)

    checked = chainlit.server.validate_file_mime_type

    def mime_type(file: Any, spec: Any) -> None:
        if spec is not None:
            checked(file, spec)

    chainlit.server.validate_file_mime_type = mime_type
    persist = WebsocketSession.persist_file

    async def persist_file(session: WebsocketSession, name: str, mime: str,
                           path: str | None = None, content: bytes | str | None = None) -> Any:
        if content is not None and not path:
            data = content.encode("utf-8") if isinstance(content, str) else content
            mime = await asyncio.to_thread(kept_as, name, mime, data)
            if not data:  # Chainlit's check takes b"" for no content: an empty file to copy
                return await persist(session, name, mime, path=os.devnull)
        return await persist(session, name, mime, path, content)

    WebsocketSession.persist_file = persist_file  # type: ignore[method-assign,assignment]
