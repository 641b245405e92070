"""The web service around the chat page: its guards and its own routes, installed on the
FastAPI app that Chainlit serves (passed in: this package never imports Chainlit).

Chainlit registers a catch-all route for its page; ours are moved in front of it, so that
``/health``, ``/metrics`` and ``/hymt/status`` answer instead of the page.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.middleware.cors import CORSMiddleware

from hymt_chat.engine.window import window_report
from hymt_chat.service import http_guard, web_guard
from hymt_chat.service.health import health_response
from hymt_chat.service.loop_watch import LoopWatch, StartWatch
from hymt_chat.service.metrics import Metrics
from hymt_chat.service.ratelimit import client_address
from hymt_chat.service.readiness import Readiness
from hymt_chat.settings import Settings

__all__ = ["add_routes", "address_key", "allowed_hosts", "allowed_origins", "api_origins",
           "cookie", "frame_cap", "install_guards", "page_url", "peer_key", "to_front",
           "trusted_proxies"]

_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_LOOPBACK_BINDS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def _listed(value: str, *, origins: bool = False) -> frozenset[str]:
    return frozenset(o.strip().rstrip("/") if origins else o.strip().lower()
                     for o in value.split(",") if o.strip())


def allowed_origins(settings: Settings) -> frozenset[str]:
    """Other origins that may call the signed-in app with its cookies."""
    return _listed(settings.allowed_origins, origins=True)


def api_origins(settings: Settings) -> frozenset[str]:
    """Other origins whose pages may call the APIs (HYMT_API_ORIGINS): for LibreTranslate, those
    that may call it without a key where the local caller may (any origin may with one)."""
    return _listed(settings.api_origins, origins=True)


def trusted_proxies(settings: Settings) -> frozenset[str]:
    return _listed(settings.trusted_proxies)


def allowed_hosts(settings: Settings, bind: str | None) -> frozenset[str] | None:
    """The Host names the app answers to (None: any).

    HYMT_ALLOWED_HOSTS when set ("*": any), with the loopback names (local probes) and
    HYMT_PUBLIC_URL's host. Unset, it follows where the app listens (*bind*, Chainlit's
    ``--host``): on loopback only — ``hymt-chat up``'s default — the loopback names and the
    public URL's host, which is what a browser on this machine sends (a DNS-rebinding page
    sends its own name); on any other address (a container: Compose, Kubernetes) any name,
    since the names people use are not known here: set HYMT_ALLOWED_HOSTS there.
    """
    listed = _listed(settings.allowed_hosts)
    if "*" in listed:
        return None
    public = urlsplit(settings.public_url).hostname if settings.public_url else None
    extra = _LOOPBACK_NAMES | ({public.lower()} if public else set())
    if listed:
        return listed | extra
    if (bind or "127.0.0.1").strip().lower() in _LOOPBACK_BINDS:
        return extra
    return None


def frame_cap(settings: Settings) -> int:
    """The largest websocket frame (socket.io packet) the app reads: the input limit at its
    worst encoding (12 bytes a character: an emoji as two \\uXXXX escapes), at least 8 MB."""
    return max(8 << 20, 12 * settings.max_input_chars + (1 << 20))


def page_url(environ: Mapping[str, Any]) -> str:
    """The page's address as a websocket's browser reached it (a WSGI-style environ)."""
    secure = (environ.get("asgi.scope") or {}).get("scheme") in ("https", "wss")
    scheme = "https" if secure or environ.get("HTTP_X_FORWARDED_PROTO") == "https" else "http"
    return f"{scheme}://{environ.get('HTTP_HOST') or 'localhost'}"


def cookie(environ: Mapping[str, Any], name: str) -> str | None:
    """The value of cookie *name* in a websocket's request (None: absent or unreadable)."""
    if not name:
        return None
    try:
        morsel = SimpleCookie(environ.get("HTTP_COOKIE") or "").get(name)
    except CookieError:
        return None
    return morsel.value if morsel is not None and morsel.value else None


def peer_key(peer: str | None, forwarded_for: str | None, proxies: frozenset[str]) -> str:
    """Whose allowance an anonymous client draws from: its address (behind trusted proxies,
    the one they forwarded), so that a new browser session per message — or a room, or the
    counter — is the same person."""
    return "addr:" + client_address(peer, forwarded_for, proxies)


def address_key(environ: Mapping[str, Any], proxies: frozenset[str]) -> str:
    """:func:`peer_key` of a socket.io connection (its WSGI-style environ)."""
    peer = (environ.get("asgi.scope") or {}).get("client") or (None, 0)
    return peer_key(peer[0], environ.get("HTTP_X_FORWARDED_FOR"), proxies)


def to_front(server: FastAPI) -> None:
    """Move the route just added ahead of Chainlit's catch-all page."""
    server.router.routes.insert(0, server.router.routes.pop())


def install_guards(server: FastAPI, settings: Settings, *,
                   user_of: Callable[[dict[str, str], str | None],
                                     web_guard.SignedUser | None] | None,
                   is_allowed: Callable[[web_guard.SignedUser], bool] | None,
                   sign_in: bool) -> None:
    """Host names, origins, revoked agents, the counter's sign-in, password guessing and
    oversized frames (:class:`~.web_guard.Guard`); CORS for the APIs apart from the app's;
    proxies trusted only as configured; security headers on every answer, a nonce CSP on
    the page, Secure cookies over HTTPS."""
    origins = allowed_origins(settings)
    # Chainlit's CORS answered every origin ("*" with credentials): only the listed others now
    # (set before the app starts, when Starlette builds its middleware stack).
    for middleware in server.user_middleware:
        if middleware.cls is CORSMiddleware:
            middleware.kwargs["allow_origins"] = sorted(origins)
    server.add_middleware(ApiCors, origins=api_origins(settings))
    server.add_middleware(
        web_guard.Guard, allowed_origins=origins, api_origins=api_origins(settings),
        allowed_hosts=allowed_hosts(settings, os.environ.get("CHAINLIT_HOST")),
        user_of=user_of, is_allowed=is_allowed,
        throttle=web_guard.LoginThrottle(storage=settings.redis_url) if sign_in else None,
        trusted_proxies=trusted_proxies(settings),
        signed_in_only=("/counter",) if sign_in else (), max_frame=frame_cap(settings))
    # uvicorn rewrites the client's address from X-Forwarded-For when the peer is one of
    # FORWARDED_ALLOW_IPS, which defaults to loopback: any local process (HAProxy or not)
    # could then name any client (issue 27: 6 of 6 fresh addresses admitted at 5/minute).
    # Chainlit builds uvicorn's config after loading app.py, so this is read there.
    os.environ["FORWARDED_ALLOW_IPS"] = ",".join(sorted(trusted_proxies(settings)))
    headers = http_guard.security_headers(allow_framing=settings.allow_framing)
    widget = _listed(settings.widget_origins, origins=True)

    @server.middleware("http")
    async def guard(request: Request, call_next: Any) -> Response:
        response: Response = await call_next(request)
        # A download (a translated .html file) is the user's bytes: never the page's nonces.
        if (response.headers.get("content-type", "").startswith("text/html")
                and not response.headers.get("content-disposition", "").startswith("attachment")):
            body = b"".join([chunk async for chunk in response.body_iterator])  # type: ignore[attr-defined]
            html, kept = http_guard.hardened_page(body, response.headers,
                                                  allow_framing=settings.allow_framing)
            response = Response(html, status_code=response.status_code, headers=kept,
                                media_type="text/html")
        for name, value in headers.items():
            response.headers.setdefault(name, value)
        if widget and request.url.path.startswith(http_guard.VISITOR_PATHS):
            http_guard.let_frame(response.headers, widget)
        if settings.secure_cookies or request.url.scheme == "https":
            response.raw_headers[:] = [
                (k, http_guard.secure_cookie(v.decode("latin-1")).encode("latin-1"))
                if k.lower() == b"set-cookie" else (k, v) for k, v in response.raw_headers]
        return response


class ApiCors:
    """CORS for the APIs, no credentials (they take keys, never cookies): ``/deepl`` for
    HYMT_API_ORIGINS; every other path goes to the app's own CORS.

    ``/libretranslate`` for any origin (``*``), as LibreTranslate answers (its app.py's
    ``after_request``: ``Access-Control-Allow-Origin: *``, headers Authorization and
    Content-Type, methods GET and POST, max age 20 days). It also sends ``Allow-Credentials:
    true``, which browsers ignore beside ``*``: none here. Our memory headers are allowed too."""

    def __init__(self, app: Any, *, origins: frozenset[str]) -> None:
        self.app = app
        self.cors = CORSMiddleware(app, allow_origins=sorted(origins), allow_credentials=False,
                                   allow_methods=["GET", "POST", "DELETE"],
                                   allow_headers=["Authorization", "Content-Type"])
        self.libre = CORSMiddleware(
            app, allow_origins=["*"], allow_credentials=False, allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "X-Hymt-Memory"],
            expose_headers=["X-Hymt-Memory", "X-Hymt-Memory-Segments"], max_age=20 * 86400)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if web_guard.is_libre(path):
            await self.libre(scope, receive, send)
            return
        api = scope["type"] == "http" and path.startswith(web_guard.API_PATHS)
        await (self.cors if api else self.app)(scope, receive, send)


def add_routes(server: FastAPI, settings: Settings, *, readiness: Readiness, metrics: Metrics,
               demo: Callable[[], bool], notice: str, sign_in: bool) -> None:
    """``/health`` (readiness, and the window of model calls), ``/metrics`` (token or local
    only), ``/hymt/status`` (banner); the event loop's stalls measured from the server's start
    into the metrics."""
    server.add_middleware(StartWatch, watch=LoopWatch(metrics.observe_loop_stall))

    @server.get("/health", include_in_schema=False)
    async def health() -> JSONResponse:
        status, body = health_response(await readiness.refresh())
        # How many model calls this process keeps in flight, and where that comes from.
        return JSONResponse({**body, "window": window_report(settings)}, status_code=status)

    to_front(server)

    @server.get("/metrics", include_in_schema=False)
    async def scrape(request: Request) -> Response:
        refused = http_guard.metrics_refusal(settings.metrics_token,
                                             request.headers.get("authorization"),
                                             sign_in=sign_in)
        if refused is not None:
            return JSONResponse({"error": refused[1]}, status_code=refused[0])
        body, content_type = metrics.render()
        return Response(body, media_type=content_type)

    to_front(server)

    @server.get("/hymt/status", include_in_schema=False)
    async def status() -> JSONResponse:
        """For the page's banner (public/banner.js): model state and whether it is the demo."""
        state = await readiness.current(max_age=3)
        return JSONResponse({"vllm": state, "demo": demo(), "notice": notice,
                             "max_input_chars": settings.max_input_chars})

    to_front(server)
