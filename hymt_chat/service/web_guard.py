"""The app's door, for HTTP and websockets alike: host names, foreign origins, revoked sign-ins,
pages that need a sign-in, guessing, oversized socket frames.

An ASGI middleware in front of everything Chainlit serves:

* **Host.** A request whose ``Host`` is not one of the app's names (``HYMT_ALLOWED_HOSTS``;
  by default the loopback names when the app listens on loopback only) is refused with 421:
  a DNS-rebinding page reaches the app under its own name and cannot read ``/metrics``.
* **Origins.** A request whose ``Origin`` is neither the app's own (its ``Host``, or the
  ``X-Forwarded-Host`` a proxy set) nor listed is refused — the page's fetches, the
  socket.io handshake and the websocket. The signed-in app lists ``HYMT_ALLOWED_ORIGINS``,
  the DeepL API (``/deepl``: keys, no cookies) ``HYMT_API_ORIGINS``: an origin let in for an
  API client cannot read an agent's threads. ``/libretranslate`` lets every origin in, as
  LibreTranslate does (a page elsewhere without a key is refused there, never served as the
  keyless local caller: :mod:`hymt_chat.api.libretranslate`).
* **Revoked sign-ins.** A token whose user is no longer an agent (dropped from
  ``HYMT_AGENTS``), or whose password changed since it was issued, is refused at the next
  request or connect, and its cookie cleared.
* **Sign-in first.** With agents configured, the paths in *signed_in_only* (the counter)
  need a valid token, as the chat does; the agent's name is left in the connection's state
  (:func:`signed_in`), so that their work is charged to them.
* **Password guessing.** Sign-in attempts are counted per name and per address, before the
  password is checked and atomically (:class:`LoginThrottle`), whatever the form's encoding;
  past the limit ``POST /login`` answers 429 with Retry-After, and every failure is logged
  (name and address, never the password).
* **Frames.** A websocket frame over *max_frame* gets close 1009 with its reason.

Chainlit-specific parts (how a token names its user) come in as callables: this module does
not import Chainlit.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from limits import RateLimitItem, parse
from limits.strategies import MovingWindowRateLimiter
from starlette.datastructures import Headers
from starlette.formparsers import MultiPartException, MultiPartParser

from hymt_chat.service.ratelimit import client_address, limit_storage

__all__ = ["API_PATHS", "LIBRE_ENDPOINTS", "LIBRE_ROOT", "Guard", "LoginThrottle", "SignedUser",
           "host_allowed", "is_libre", "origin_allowed", "signed_in"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_log = logging.getLogger("hymt_chat.security")
_MAX_LOGIN_BODY = 64 * 1024
_STATE_USER = "hymt_agent"
# keys, not cookies: their own origins (DeepL answers at the host root too, like DeepL)
API_PATHS = ("/libretranslate/", "/deepl/", "/v2/", "/v3/")
# LibreTranslate: any origin, as LibreTranslate itself answers (CORS "*"). Its paths: the root,
# what lies under it, and its endpoints joined onto a base URL without the slash (deep-translator
# appends "translate" to the URL as given: /libretranslatetranslate).
LIBRE_ROOT = "/libretranslate"
LIBRE_ENDPOINTS = ("translate", "detect", "languages", "translate_file", "frontend/settings",
                   "health", "spec", "suggest")
_LIBRE_JOINED = frozenset(LIBRE_ROOT + name for name in LIBRE_ENDPOINTS)


def is_libre(path: str) -> bool:
    """A LibreTranslate path: the root, under it, or an endpoint joined without the slash."""
    return path == LIBRE_ROOT or path.startswith(LIBRE_ROOT + "/") or path in _LIBRE_JOINED


def origin_allowed(origin: str | None, host: str | None, forwarded_host: str | None,
                   allowed: frozenset[str]) -> bool:
    """Is a request from *origin* one of ours? No Origin header: yes (not a cross-site page)."""
    if not origin:
        return True
    if origin.rstrip("/") in allowed:
        return True
    netloc = urlsplit(origin).netloc.lower()
    own = {h.strip().lower() for h in (host, forwarded_host) if h}
    return bool(netloc) and netloc in own


class LoginThrottle:
    """Sign-in attempts per name and per address, in moving windows (this process's memory,
    or Redis shared by the replicas).

    An attempt is counted *before* its password is checked, in one atomic step
    (:meth:`attempt`): 30 tries sent at once get 5 checks, not 30. A right password clears its
    name's count (the per-address one keeps it: an attacker who knows one password cannot
    reset their address's count with it)."""

    def __init__(self, per_name: str = "5/15 minutes", per_address: str = "20/15 minutes",
                 clock: Callable[[], float] = time.time, storage: str = "") -> None:
        """*storage*: a ``limits`` storage URI (``HYMT_REDIS_URL``); empty: this process."""
        self._limits = (("name", parse(per_name)), ("address", parse(per_address)))
        self.shared = bool(storage.strip())
        self._window = MovingWindowRateLimiter(limit_storage(storage))
        self._clock = clock

    def _keys(self, name: str, address: str) -> list[tuple[RateLimitItem, str]]:
        return [(item, f"login-{kind}:{name if kind == 'name' else address}")
                for kind, item in self._limits]

    def attempt(self, name: str, address: str) -> float:
        """Count one try of *name* from *address*: 0 when it may go ahead, else the seconds
        until it may (and nothing more is counted)."""
        for item, key in self._keys(name, address):
            if not self._window.hit(item, key):  # atomic: counted only when it fits
                reset = self._window.get_window_stats(item, key).reset_time
                return max(1.0, reset - self._clock())
        return 0.0

    def succeeded(self, name: str) -> None:
        item, key = self._keys(name, "")[0]
        self._window.clear(item, key)

    async def aattempt(self, name: str, address: str) -> float:
        """:meth:`attempt` for the event loop (Redis is asked from a thread)."""
        if self.shared:
            return await asyncio.to_thread(self.attempt, name, address)
        return self.attempt(name, address)

    async def asucceeded(self, name: str) -> None:
        if self.shared:
            await asyncio.to_thread(self.succeeded, name)
        else:
            self.succeeded(name)


class SignedUser(Protocol):
    """Who a request's token names (Chainlit's ``User``: its identifier and metadata)."""

    identifier: str
    metadata: dict[str, Any]


def signed_in(scope: Scope) -> str | None:
    """The agent the door found signed in on this request or socket (None: nobody)."""
    state = scope.get("state")
    found = state.get(_STATE_USER) if isinstance(state, dict) else None
    return found if isinstance(found, str) else None


def host_allowed(host: str | None, allowed: frozenset[str] | None) -> bool:
    """Is *host* (a Host header, port and all) one of *allowed* (names, no ports)? None: any.
    A DNS-rebinding page reaches us under its own name, which is not in the list."""
    if allowed is None:
        return True
    name = (host or "").strip().lower()
    if name.startswith("["):  # [::1]:8000
        name = name[1:name.find("]")] if "]" in name else name
    elif name.count(":") == 1:
        name = name.rsplit(":", 1)[0]
    return name in allowed


async def _login_fields(body: bytes, content_type: str) -> dict[str, str]:
    """The sign-in form's fields, whatever its encoding: JSON, urlencoded or multipart (a
    multipart form had skipped the per-name count: the name read as '')."""
    kind = content_type.split(";")[0].strip().lower()
    try:
        if kind == "application/json" or kind.endswith("+json"):
            data = json.loads(body or b"{}")
            return {k: str(v) for k, v in data.items()} if isinstance(data, dict) else {}
        if kind == "multipart/form-data":
            async def stream() -> AsyncGenerator[bytes, None]:
                yield body

            form = await MultiPartParser(Headers({"content-type": content_type}), stream(),
                                         max_files=0).parse()
            return {k: v for k, v in form.items() if isinstance(v, str)}
    except (ValueError, UnicodeDecodeError, MultiPartException):
        return {}
    return {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}


class Guard:
    """ASGI middleware: see the module docstring."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_origins: frozenset[str] = frozenset(),
        api_origins: frozenset[str] = frozenset(),
        allowed_hosts: frozenset[str] | None = None,
        user_of: Callable[[dict[str, str], str | None], SignedUser | None] | None = None,
        is_allowed: Callable[[SignedUser], bool] | None = None,
        throttle: LoginThrottle | None = None,
        cookie_names: tuple[str, ...] = ("access_token",),
        signed_in_only: tuple[str, ...] = (),
        max_frame: int | None = None,
    ) -> None:
        self.app = app
        self.allowed_origins = allowed_origins
        self.api_origins = api_origins
        self.allowed_hosts = allowed_hosts
        self.user_of = user_of
        self.is_allowed = is_allowed
        self.throttle = throttle
        self.cookie_names = cookie_names
        self.signed_in_only = signed_in_only
        self.max_frame = max_frame

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        path = scope.get("path") or ""
        if not host_allowed(headers.get("host"), self.allowed_hosts):
            _log.warning("refused a request for host %r to %s", headers.get("host"), path)
            await _refuse(scope, send, 421, "This server does not answer for that host name "
                          "(HYMT_ALLOWED_HOSTS).")
            return
        libre = is_libre(path)  # any origin: keys in the body, no cookies (libretranslate.py)
        api = libre or path.startswith(API_PATHS)
        origins = self.api_origins if api else self.allowed_origins
        if not libre and not origin_allowed(headers.get("origin"), headers.get("host"),
                                            headers.get("x-forwarded-host"), origins):
            _log.warning("refused a request from origin %s to %s", headers.get("origin"), path)
            await _refuse(scope, send, 403, "This origin may not use the app.")
            return
        if self.user_of is not None and self.is_allowed is not None and not api:
            cookies = _cookies(headers.get("cookie", ""))
            user = self.user_of(cookies, headers.get("authorization"))
            if user is not None and not self.is_allowed(user):
                _log.warning("refused the sign-in of %r: no longer an agent, or their password "
                             "changed", user.identifier)
                clear = [f"{n}=; Max-Age=0; Path=/" for n in cookies if n in self.cookie_names
                         or n.startswith(tuple(f"{c}_" for c in self.cookie_names))]
                await _refuse(scope, send, 401, "Your sign-in is no longer valid; sign in again.",
                              clear)
                return
            if user is not None:
                scope.setdefault("state", {})[_STATE_USER] = user.identifier
            elif path.startswith(self.signed_in_only):
                await _refuse(scope, send, 401, "Sign in first: agents sign in at /login.")
                return
        if (self.throttle is not None and scope["type"] == "http"
                and scope.get("method") == "POST" and path == "/login"):
            await self._login(scope, receive, send, headers)
            return
        if scope["type"] == "websocket" and self.max_frame is not None:
            receive, send = _capped(receive, send, self.max_frame)
        await self.app(scope, receive, send)

    async def _login(self, scope: Scope, receive: Receive, send: Send,
                     headers: dict[str, str]) -> None:
        assert self.throttle is not None
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > _MAX_LOGIN_BODY:
                await _refuse(scope, send, 413, "The sign-in form is too large.")
                return
            if not message.get("more_body"):
                break
        fields = await _login_fields(body, headers.get("content-type", ""))
        name = (fields.get("username") or "").strip().lower()[:64]
        peer = (scope.get("client") or ("unknown", 0))[0]
        address = client_address(peer)
        wait = await self.throttle.aattempt(name, address)
        if wait > 0:
            _log.warning("sign-in of %r from %s throttled for %.0f s", name, address, wait)
            await _refuse(scope, send, 429, f"Too many sign-in attempts; try again in "
                          f"{round(wait)} s.", retry_after=wait)
            return
        replayed = False
        status = 0

        async def replay() -> MutableMapping[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        async def watch(message: MutableMapping[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                if status == 401:
                    _log.warning("failed sign-in of %r from %s", name, address)
            await send(message)

        await self.app(scope, replay, watch)
        if status == 200:
            await self.throttle.asucceeded(name)


def _capped(receive: Receive, send: Send, limit: int) -> tuple[Receive, Send]:
    """A websocket's receive and send, where a frame over *limit* characters (or bytes) is
    answered with close 1009 and its reason instead of reaching the app (socket.io dropped
    such a frame with no word: a silent disconnect)."""
    closed = False

    async def capped_receive() -> MutableMapping[str, Any]:
        nonlocal closed
        message = await receive()
        if message["type"] == "websocket.receive":
            size = len(message.get("text") or message.get("bytes") or "")
            if size > limit:
                closed = True
                await send({"type": "websocket.close", "code": 1009,
                            "reason": f"Message too big: {size:,}; at most {limit:,}."})
                return {"type": "websocket.disconnect", "code": 1009}
        return message

    async def capped_send(message: MutableMapping[str, Any]) -> None:
        if not closed:  # after our close the app's own sends have nowhere to go
            await send(message)

    return capped_receive, capped_send


def _cookies(header: str) -> dict[str, str]:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except Exception:  # noqa: BLE001 - a malformed Cookie header carries no token we accept
        return {}
    return {name: morsel.value for name, morsel in jar.items()}


async def _refuse(scope: Scope, send: Send, status: int, sentence: str,
                  clear: list[str] | None = None, retry_after: float | None = None) -> None:
    if scope["type"] == "websocket":  # before accept: the handshake fails (HTTP 403)
        await send({"type": "websocket.close", "code": 1008, "reason": sentence[:120]})
        return
    # the field each reader takes: FastAPI's detail, LibreTranslate's error, DeepL's message
    body = json.dumps({"detail": sentence, "error": sentence, "message": sentence}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(b"set-cookie", c.encode("latin-1")) for c in clear or []]
    if retry_after is not None:
        headers.append((b"retry-after", str(max(1, round(retry_after))).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
