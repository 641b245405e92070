"""The web service around the chat page: its guards and its own routes, installed on the
FastAPI app that Chainlit serves (passed in: this package never imports Chainlit).

Chainlit registers a catch-all route for its page; ours are moved in front of it, so that
``/health``, ``/metrics`` and ``/hymt/status`` answer instead of the page.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from http.cookies import CookieError, SimpleCookie
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.middleware.cors import CORSMiddleware

from hymt_chat.service import http_guard, web_guard
from hymt_chat.service.health import health_response
from hymt_chat.service.loop_watch import LoopWatch, StartWatch
from hymt_chat.service.metrics import Metrics
from hymt_chat.service.ratelimit import client_address
from hymt_chat.service.readiness import Readiness
from hymt_chat.settings import Settings

__all__ = ["add_routes", "address_key", "allowed_origins", "cookie", "install_guards",
           "page_url", "to_front", "trusted_proxies"]


def allowed_origins(settings: Settings) -> frozenset[str]:
    return frozenset(o.strip().rstrip("/") for o in settings.allowed_origins.split(",")
                     if o.strip())


def trusted_proxies(settings: Settings) -> frozenset[str]:
    return frozenset(p.strip() for p in settings.trusted_proxies.split(",") if p.strip())


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


def address_key(environ: Mapping[str, Any], proxies: frozenset[str]) -> str:
    """Whose allowance an anonymous client draws from: its address (behind trusted proxies,
    the one they forwarded), so that a new browser session per message is the same person."""
    peer = (environ.get("asgi.scope") or {}).get("client") or (None, 0)
    return "addr:" + client_address(peer[0], environ.get("HTTP_X_FORWARDED_FOR"), proxies)


def to_front(server: FastAPI) -> None:
    """Move the route just added ahead of Chainlit's catch-all page."""
    server.router.routes.insert(0, server.router.routes.pop())


def install_guards(server: FastAPI, settings: Settings, *,
                   user_of: Callable[[dict[str, str], str | None], str | None] | None,
                   is_allowed: Callable[[str], bool] | None, sign_in: bool) -> None:
    """Origins, revoked agents and password guessing (:class:`~.web_guard.Guard`); security
    headers on every answer, a nonce CSP on the page, Secure cookies over HTTPS."""
    origins = allowed_origins(settings)
    # Chainlit's CORS answered every origin ("*" with credentials): only the listed others now
    # (set before the app starts, when Starlette builds its middleware stack).
    for middleware in server.user_middleware:
        if middleware.cls is CORSMiddleware:
            middleware.kwargs["allow_origins"] = sorted(origins)
    server.add_middleware(web_guard.Guard, allowed_origins=origins, user_of=user_of,
                          is_allowed=is_allowed,
                          throttle=web_guard.LoginThrottle() if sign_in else None,
                          trusted_proxies=trusted_proxies(settings))
    headers = http_guard.security_headers(allow_framing=settings.allow_framing)

    @server.middleware("http")
    async def guard(request: Request, call_next: Any) -> Response:
        response: Response = await call_next(request)
        if response.headers.get("content-type", "").startswith("text/html"):
            body = b"".join([chunk async for chunk in response.body_iterator])  # type: ignore[attr-defined]
            html, kept = http_guard.hardened_page(body, response.headers,
                                                  allow_framing=settings.allow_framing)
            response = Response(html, status_code=response.status_code, headers=kept,
                                media_type="text/html")
        for name, value in headers.items():
            response.headers.setdefault(name, value)
        if settings.secure_cookies or request.url.scheme == "https":
            response.raw_headers[:] = [
                (k, http_guard.secure_cookie(v.decode("latin-1")).encode("latin-1"))
                if k.lower() == b"set-cookie" else (k, v) for k, v in response.raw_headers]
        return response


def add_routes(server: FastAPI, settings: Settings, *, readiness: Readiness, metrics: Metrics,
               demo: Callable[[], bool], notice: str, sign_in: bool) -> None:
    """``/health`` (readiness), ``/metrics`` (token or local only), ``/hymt/status`` (banner);
    the event loop's stalls measured from the server's start into the metrics."""
    server.add_middleware(StartWatch, watch=LoopWatch(metrics.observe_loop_stall))

    @server.get("/health", include_in_schema=False)
    async def health() -> JSONResponse:
        status, body = health_response(await readiness.refresh())
        return JSONResponse(body, status_code=status)

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
