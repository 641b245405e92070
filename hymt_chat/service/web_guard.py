"""The app's door, for HTTP and websockets alike: foreign origins, revoked sign-ins, guessing.

An ASGI middleware in front of everything Chainlit serves:

* **Origins.** A request whose ``Origin`` is neither the app's own (its ``Host``, or the
  ``X-Forwarded-Host`` a proxy set) nor listed in ``HYMT_ALLOWED_ORIGINS`` is refused — the
  page's fetches, the socket.io handshake and the websocket. A page on another port of the
  same host can no longer read an agent's threads with their cookie.
* **Revoked sign-ins.** A token whose user is no longer an agent (dropped from
  ``HYMT_AGENTS``) is refused at the next request or connect, and its cookie cleared.
* **Password guessing.** Failed sign-ins are counted per name and per address; past the limit
  ``POST /login`` answers 429 with Retry-After, and every failure is logged (name and
  address, never the password).

Chainlit-specific parts (how a token names its user) come in as callables: this module does
not import Chainlit.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlsplit

from limits import parse
from limits.storage import MemoryStorage
from limits.strategies import MovingWindowRateLimiter

from hymt_chat.service.ratelimit import client_address

__all__ = ["Guard", "LoginThrottle", "origin_allowed"]

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_log = logging.getLogger("hymt_chat.security")
_MAX_LOGIN_BODY = 64 * 1024


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
    """Failed sign-ins per name and per address, in moving windows."""

    def __init__(self, per_name: str = "5/15 minutes", per_address: str = "20/15 minutes",
                 clock: Callable[[], float] = time.time) -> None:
        self._limits = (("name", parse(per_name)), ("address", parse(per_address)))
        self._window = MovingWindowRateLimiter(MemoryStorage())
        self._clock = clock

    def wait(self, name: str, address: str) -> float:
        """Seconds until this name (from this address) may try again; 0: now."""
        waits = [0.0]
        for kind, item in self._limits:
            key = f"{kind}:{name if kind == 'name' else address}"
            if not self._window.test(item, key):
                reset = self._window.get_window_stats(item, key).reset_time
                waits.append(max(1.0, reset - self._clock()))
        return max(waits)

    def failed(self, name: str, address: str) -> None:
        for kind, item in self._limits:
            self._window.hit(item, f"{kind}:{name if kind == 'name' else address}")


class Guard:
    """ASGI middleware: see the module docstring."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_origins: frozenset[str] = frozenset(),
        user_of: Callable[[dict[str, str], str | None], str | None] | None = None,
        is_allowed: Callable[[str], bool] | None = None,
        throttle: LoginThrottle | None = None,
        trusted_proxies: frozenset[str] = frozenset(),
        cookie_names: tuple[str, ...] = ("access_token",),
    ) -> None:
        self.app = app
        self.allowed_origins = allowed_origins
        self.user_of = user_of
        self.is_allowed = is_allowed
        self.throttle = throttle
        self.trusted_proxies = trusted_proxies
        self.cookie_names = cookie_names

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        if not origin_allowed(headers.get("origin"), headers.get("host"),
                              headers.get("x-forwarded-host"), self.allowed_origins):
            _log.warning("refused a request from origin %s to %s", headers.get("origin"),
                         scope.get("path"))
            await _refuse(scope, send, 403, "This origin may not use the app.")
            return
        if self.user_of is not None and self.is_allowed is not None:
            cookies = _cookies(headers.get("cookie", ""))
            user = self.user_of(cookies, headers.get("authorization"))
            if user is not None and not self.is_allowed(user):
                _log.warning("refused the sign-in of %r: no longer an agent", user)
                clear = [f"{n}=; Max-Age=0; Path=/" for n in cookies if n in self.cookie_names
                         or n.startswith(tuple(f"{c}_" for c in self.cookie_names))]
                await _refuse(scope, send, 401, "Your sign-in is no longer valid; sign in again.",
                              clear)
                return
        if (self.throttle is not None and scope["type"] == "http"
                and scope.get("method") == "POST" and scope.get("path") == "/login"):
            await self._login(scope, receive, send, headers)
            return
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
        fields = parse_qs(body.decode("utf-8", "replace"))
        name = (fields.get("username") or [""])[0].strip().lower()[:64]
        peer = (scope.get("client") or ("unknown", 0))[0]
        address = client_address(peer, headers.get("x-forwarded-for"), self.trusted_proxies)
        wait = self.throttle.wait(name, address)
        if wait > 0:
            _log.warning("sign-in of %r from %s throttled for %.0f s", name, address, wait)
            await _refuse(scope, send, 429, f"Too many failed sign-ins; try again in "
                          f"{round(wait)} s.", retry_after=wait)
            return
        replayed = False

        async def replay() -> MutableMapping[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        async def watch(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start" and message["status"] == 401:
                assert self.throttle is not None
                self.throttle.failed(name, address)
                _log.warning("failed sign-in of %r from %s", name, address)
            await send(message)

        await self.app(scope, replay, watch)


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
    body = json.dumps({"detail": sentence, "error": sentence}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(b"set-cookie", c.encode("latin-1")) for c in clear or []]
    if retry_after is not None:
        headers.append((b"retry-after", str(max(1, round(retry_after))).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
