"""The web service around the chat page: its guards and its own routes, installed on the
FastAPI app that Chainlit serves (passed in: this package never imports Chainlit).

Chainlit registers a catch-all route for its page; ours are moved in front of it, so that
``/health``, ``/metrics`` and ``/hymt/status`` answer instead of the page.

Chainlit is archived upstream, so its safety is the app's (SECURITY.md): only the routes its
page uses answer (:class:`ChainlitSurface`), an anonymous session belongs to the browser that
opened it (:class:`SessionBinding`), a user's file is always a download, and each process keeps
Chainlit's files in a folder of its own (:func:`own_files`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
import types
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from http.cookies import CookieError, SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import Match

from hymt_chat.service import http_guard, web_guard
from hymt_chat.service.health import health_response
from hymt_chat.service.loop_watch import LoopWatch, StartWatch
from hymt_chat.service.metrics import Metrics
from hymt_chat.service.ratelimit import client_address
from hymt_chat.service.readiness import Readiness
from hymt_chat.settings import Settings

__all__ = ["ChainlitSurface", "FilesFolder", "SessionBinding", "UploadCap", "add_routes",
           "address_key", "allowed_hosts", "allowed_origins", "api_origins", "cookie",
           "forwarded_allow_ips", "frame_cap", "install_guards", "own_files", "page_url",
           "peer_key", "to_front", "trusted_proxies", "upload_cap"]

_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
_LOOPBACK_BINDS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})
HEALTH_WAIT = 0.8
"""Seconds ``/health`` waits for a fresh probe before it answers the last state it knows:
orchestrators and balancers give a health check a second or so."""


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


def forwarded_allow_ips(settings: Settings) -> str:
    """uvicorn's FORWARDED_ALLOW_IPS: the proxies whose X-Forwarded-For names the client."""
    return ",".join(sorted(trusted_proxies(settings)))


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


def peer_key(peer: str | None) -> str:
    """Whose allowance an anonymous client draws from: its address (behind trusted proxies,
    the one they forwarded: :func:`~.ratelimit.client_address`), so that a new browser session
    per message — or a room, or the counter — is the same person."""
    return "addr:" + client_address(peer)


def address_key(environ: Mapping[str, Any]) -> str:
    """:func:`peer_key` of a socket.io connection (its WSGI-style environ)."""
    peer = (environ.get("asgi.scope") or {}).get("client") or (None, 0)
    return peer_key(peer[0])


def to_front(server: FastAPI) -> None:
    """Move the route just added ahead of Chainlit's catch-all page."""
    server.router.routes.insert(0, server.router.routes.pop())


def install_guards(server: FastAPI, settings: Settings, *,
                   user_of: Callable[[dict[str, str], str | None],
                                     web_guard.SignedUser | None] | None,
                   is_allowed: Callable[[web_guard.SignedUser], bool] | None,
                   sign_in: bool, max_upload: int | None = None) -> None:
    """Host names, origins, revoked agents, the counter's sign-in, password guessing and
    oversized frames (:class:`~.web_guard.Guard`); uploads over *max_upload* bytes
    (:class:`UploadCap`: None, no cap); CORS for the APIs apart from the app's;
    proxies trusted only as configured; security headers on every answer, a nonce CSP on
    the page, Secure cookies over HTTPS."""
    origins = allowed_origins(settings)
    # Inner first: the surface sees the session ids the binding wrote.
    server.add_middleware(ChainlitSurface, router=server.router,
                          framework=frozenset(id(r) for r in server.router.routes))
    server.add_middleware(SessionBinding)
    if max_upload is not None:
        server.add_middleware(UploadCap, limit=max_upload)
    # Chainlit's CORS answers every origin ("*" with credentials): only the listed others here
    # (set before the app starts, when Starlette builds its middleware stack).
    for middleware in server.user_middleware:
        factory: object = middleware.cls  # typed as a factory protocol; compared by identity
        if factory is CORSMiddleware:
            middleware.kwargs["allow_origins"] = sorted(origins)
    server.add_middleware(ApiCors, origins=api_origins(settings))
    server.add_middleware(
        web_guard.Guard, allowed_origins=origins, api_origins=api_origins(settings),
        allowed_hosts=allowed_hosts(settings, os.environ.get("CHAINLIT_HOST")),
        user_of=user_of, is_allowed=is_allowed,
        throttle=web_guard.LoginThrottle(storage=settings.redis_url) if sign_in else None,
        signed_in_only=("/counter",) if sign_in else (), max_frame=frame_cap(settings))
    # The one place proxies are trusted: uvicorn rewrites the client's address from
    # X-Forwarded-For when the peer is one of FORWARDED_ALLOW_IPS, and the app reads that
    # address (ratelimit.client_address). Its default is loopback: any local process (HAProxy
    # or not) could then name any client and get a fresh allowance with each name.
    # Chainlit builds uvicorn's config after loading app.py, so this is read there.
    os.environ["FORWARDED_ALLOW_IPS"] = forwarded_allow_ips(settings)
    headers = http_guard.security_headers(allow_framing=settings.allow_framing)
    widget = _listed(settings.widget_origins, origins=True)

    @server.middleware("http")
    async def guard(request: Request, call_next: Any) -> Response:
        response: Response = await call_next(request)
        # A user's file (an upload, a translated .html) is their bytes: never the page's nonces.
        if http_guard.is_download(request.url.path, response.headers):
            http_guard.as_download(response.headers, request.url.path)
        elif response.headers.get("content-type", "").startswith("text/html"):
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
    true``, which browsers ignore beside ``*``: none here. Our memory headers are allowed too,
    and a page may read our answer headers (memory, and the checks' ``X-Hymt-Flags``) on
    both: a browser hides any other header from the page."""

    def __init__(self, app: Any, *, origins: frozenset[str]) -> None:
        self.app = app
        ours = ["X-Hymt-Memory", "X-Hymt-Memory-Segments", "X-Hymt-Flags"]
        self.cors = CORSMiddleware(app, allow_origins=sorted(origins), allow_credentials=False,
                                   allow_methods=["GET", "POST", "DELETE"],
                                   allow_headers=["Authorization", "Content-Type"],
                                   expose_headers=ours)
        self.libre = CORSMiddleware(
            app, allow_origins=["*"], allow_credentials=False, allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "X-Hymt-Memory"],
            expose_headers=ours, max_age=20 * 86400)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if web_guard.is_libre(path):
            await self.libre(scope, receive, _one_cors_layer(send))
            return
        api = scope["type"] == "http" and path.startswith(web_guard.API_PATHS)
        if api:
            await self.cors(scope, receive, _one_cors_layer(send))
            return
        await self.app(scope, receive, send)


def _one_cors_layer(send: Any) -> Any:
    """An API answer's headers as one CORS layer sends them. Chainlit's own CORS middleware,
    inside this one, answers the same request too: its ``Vary: Origin`` would come twice and
    its ``Allow-Credentials: true`` would reach APIs that take keys, never cookies."""

    async def sending(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            kept: list[tuple[bytes, bytes]] = []
            vary: list[str] = []
            for name, value in message.get("headers", []):
                if name.lower() == b"access-control-allow-credentials":
                    continue
                if name.lower() == b"vary":
                    for part in value.decode("latin-1").split(","):
                        if part.strip() and part.strip().lower() not in map(str.lower, vary):
                            vary.append(part.strip())
                    continue
                kept.append((name, value))
            if vary:
                kept.append((b"vary", ", ".join(vary).encode("latin-1")))
            message = {**message, "headers": kept}
        await send(message)

    return sending


def add_routes(server: FastAPI, settings: Settings, *, readiness: Readiness, metrics: Metrics,
               window: Callable[[], dict[str, object]], demo: Callable[[], bool], notice: str,
               sign_in: bool) -> None:
    """``/health`` (readiness, and the window of model calls), ``/metrics`` (token or local
    only), ``/hymt/status`` (banner); the event loop's stalls measured from the server's start
    into the metrics."""
    server.add_middleware(StartWatch, watch=LoopWatch(metrics.observe_loop_stall))

    @server.get("/health", include_in_schema=False)
    async def health() -> JSONResponse:
        status, body = health_response(await readiness.answer_within(HEALTH_WAIT))
        # How many model calls this process keeps in flight, and where that comes from.
        return JSONResponse({**body, "window": window()}, status_code=status)

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


# --- Chainlit's surface, and whose session a request names ------------------------------------

Scope = MutableMapping[str, Any]


def _leaves(route: Any) -> Iterator[Any]:
    """The routes a table entry holds (FastAPI keeps an included router as one entry)."""
    inner = getattr(getattr(route, "original_router", None), "routes", None)
    if inner is None:
        yield route
    else:
        for child in inner:
            yield from _leaves(child)


async def _not_found(scope: Scope, send: Any) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008, "reason": "Not Found"})
        return
    body = b'{"detail":"Not Found"}'
    await send({"type": "http.response.start", "status": 404, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class ChainlitSurface:
    """ASGI middleware: of Chainlit's routes (and FastAPI's docs), only those the product uses
    answer (:func:`~.http_guard.chainlit_route_used`); a request another would take gets 404.

    *framework* holds the route table's entries when the guards were installed (Chainlit's);
    entries added after are the app's own and pass. The route a request reaches is found as
    Starlette's router finds it: the first full match, else the first on the path alone."""

    def __init__(self, app: Any, *, router: Any, framework: frozenset[int]) -> None:
        self.app, self.router, self.framework = app, router, framework
        self._tables: tuple[int, list[Any], list[Any]] = (-1, [], [])

    def _split(self) -> tuple[list[Any], list[Any]]:
        """(the app's routes, Chainlit's), read again only when the table changed."""
        size, ours, theirs = self._tables
        if size != len(self.router.routes):
            ours, theirs = [], []
            for entry in self.router.routes:
                (theirs if id(entry) in self.framework else ours).extend(_leaves(entry))
            self._tables = (len(self.router.routes), ours, theirs)
        return ours, theirs

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            ours, theirs = self._split()
            if not any(r.matches(scope)[0] is Match.FULL for r in ours):
                matches = [(r.matches(scope)[0], r) for r in theirs]
                reached = next((r for m, r in matches if m is Match.FULL),
                               next((r for m, r in matches if m is Match.PARTIAL), None))
                method = scope.get("method", "GET") if scope["type"] == "http" else "WEBSOCKET"
                if reached is not None and not http_guard.chainlit_route_used(
                        method, getattr(reached, "path", ""), scope.get("path", "")):
                    await _not_found(scope, send)
                    return
        await self.app(scope, receive, send)


def _client_token(scope: Scope) -> str | None:
    header = next((v.decode("latin-1") for k, v in scope.get("headers", [])
                   if k == b"cookie"), "")
    return cookie({"HTTP_COOKIE": header}, http_guard.CLIENT_COOKIE)


_MAX_ACTION_BODY = 1 << 20
_FILES = "/project/file"
UPLOAD_SLACK = 64 * 1024
"""A multipart upload's own bytes around its file (boundaries, the part's headers)."""


def upload_cap(max_size_mb: float) -> int:
    """The largest upload body let through to Chainlit, for its config's ``max_size_mb``
    (the page counts a megabyte as 10**6 bytes, Chainlit's server as 2**20)."""
    return int(max_size_mb * 1024 * 1024) + UPLOAD_SLACK


class UploadCap:
    """ASGI middleware: an upload (``POST /project/file``) over *limit* bytes is refused with
    413 before Chainlit sees it. Chainlit reads an uploaded file whole into memory and only
    then checks its size, and its page refuses a large file only in the browser (with an
    English toast, which is why its limits are set far above the app's, and the app says
    what it refuses in the page's language): a client that skips the page is stopped here by
    its Content-Length, or, without one, once its body passes *limit*."""

    def __init__(self, app: Any, *, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if (scope["type"] != "http" or scope.get("method") != "POST"
                or scope.get("path") != _FILES):
            await self.app(scope, receive, send)
            return
        declared = next((v for k, v in scope.get("headers", []) if k == b"content-length"), b"")
        if declared.strip().isdigit() and int(declared) > self.limit:
            await _too_large(send, self.limit)
            return
        seen, over, started = 0, False, False

        async def counted() -> MutableMapping[str, Any]:
            nonlocal seen, over
            message: MutableMapping[str, Any] = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:  # the rest is never read: the app sees the client gone
                    over = True
                    return {"type": "http.disconnect"}
            return message

        async def sending(message: MutableMapping[str, Any]) -> None:
            nonlocal started
            if over and not started:  # its answer to a body it never got whole: ours instead
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, sending)
        except Exception:
            if not over or started:
                raise
        if over and not started:
            await _too_large(send, self.limit)


async def _too_large(send: Any, limit: int) -> None:
    body = json.dumps({"detail": f"The upload is over {limit:,} bytes."}).encode()
    await send({"type": "http.response.start", "status": 413, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})
_ACTION = "/project/action"


class SessionBinding:
    """ASGI middleware: an anonymous session belongs to the browser that opened it.

    Chainlit restores a session for any client that names its id, and serves a session's
    files to anyone holding a link (the id is in it). Here a browser gets a cookie of its own
    (:data:`~.http_guard.CLIENT_COOKIE`, with the page), and every session id it sends — the
    socket's connect, a file's upload or link, a button — is replaced by one keyed by that
    cookie (:func:`~.http_guard.bound_session`): another client naming the same id reaches
    another session (a new one), and a link without the cookie reaches nothing. The server's
    ids are never sent to the page. Signed-in sessions are bound to their user by Chainlit."""

    def __init__(self, app: Any, *, socket_path: str = "/ws/socket.io") -> None:
        self.app, self.socket_path = app, socket_path

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        path = scope.get("path", "")
        if scope["type"] == "websocket" and path.startswith(self.socket_path):
            await self.app(scope, self._rebinding(receive, _client_token(scope)), send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        token = _client_token(scope)
        rebound: tuple[Scope, Any] | None = (scope, receive)
        if path == _FILES or path.startswith(_FILES + "/"):
            query = self._rebound_query(scope, token)
            rebound = None if query is None else ({**scope, "query_string": query}, receive)
        elif path == _ACTION and scope.get("method") == "POST":
            rebound = await self._rebound_body(scope, receive, token)
        if rebound is None:  # not a session id, or a body too large to be a button's
            await _not_found(scope, send)
            return
        scope, receive = rebound
        if token is None:
            send = self._issuing(send, path)
        await self.app(scope, receive, send)

    @staticmethod
    def _rebinding(receive: Any, token: str | None) -> Any:
        async def rebinding() -> MutableMapping[str, Any]:
            message: MutableMapping[str, Any] = await receive()
            text = message.get("text") if message["type"] == "websocket.receive" else None
            if isinstance(text, str) and text.startswith("40"):
                message = {**message, "text": http_guard.rebound_connect(text, token)}
            return message

        return rebinding

    @staticmethod
    def _rebound_query(scope: Scope, token: str | None) -> bytes | None:
        pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"),
                          keep_blank_values=True)
        rebound = []
        for name, value in pairs:
            if name == "session_id":
                value = http_guard.bound_session(token, value) or ""
                if not value:
                    return None
            rebound.append((name, value))
        return urlencode(rebound).encode("latin-1")

    @staticmethod
    async def _rebound_body(scope: Scope, receive: Any, token: str | None
                            ) -> tuple[Scope, Any] | None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > _MAX_ACTION_BODY:
                return None
            if not message.get("more_body"):
                break
        with contextlib.suppress(ValueError):
            data = json.loads(body)
            if isinstance(data, dict) and "sessionId" in data:
                data["sessionId"] = http_guard.bound_session(token, str(data["sessionId"]))
                if data["sessionId"] is None:
                    return None
                body = json.dumps(data).encode()
        headers = [(k, v) for k, v in scope.get("headers", []) if k != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        sent = False

        async def replay() -> MutableMapping[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            message: MutableMapping[str, Any] = await receive()
            return message

        return {**scope, "headers": headers}, replay

    @staticmethod
    def _issuing(send: Any, path: str) -> Any:
        """*send* that gives a browser its cookie with the page (or the page's first call)."""
        async def issuing(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = {k.lower(): v for k, v in message.get("headers", [])}
                page = (headers.get(b"content-type", b"").startswith(b"text/html")
                        and not headers.get(b"content-disposition", b"").startswith(b"attach"))
                if page or path == "/set-session-cookie":
                    cookie_value = http_guard.client_cookie(secrets.token_urlsafe(32))
                    message = {**message, "headers": [*message.get("headers", []),
                                                      (b"set-cookie", cookie_value.encode())]}
            await send(message)

        return issuing


# --- Chainlit's files: a folder per process ----------------------------------------------------

FILES_ROOT = "chainlit-files"


class FilesFolder:
    """This process's folder for Chainlit's files, held by a lock on ``.lock`` inside it for
    as long as the process lives: a starting process removes only folders whose lock is free
    (their process ended), so no process's start or stop touches another's files."""

    def __init__(self, path: Path, lock: int) -> None:
        self.path, self._lock = path, lock


def _left_behind(folder: Path) -> bool:
    """Is *folder*'s process gone (its lock free, or no lock at all)?"""
    try:
        fd = os.open(folder / ".lock", os.O_RDWR)
    except FileNotFoundError:
        return not folder.name.startswith(".")  # a dot folder may be a claim in progress
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def own_files(cache_dir: Path, *modules: types.ModuleType) -> FilesFolder:
    """Claim a folder of Chainlit's files for this process under *cache_dir*, remove those left
    by processes that ended without removing theirs (a crash), and point *modules* at it
    (Chainlit's ``FILES_DIRECTORY``: ``chainlit.config`` for the sessions' folders,
    ``chainlit.server`` for the one it deletes when it stops)."""
    root = cache_dir / FILES_ROOT
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    for folder in [p for p in root.iterdir() if p.is_dir()]:
        if _left_behind(folder):
            shutil.rmtree(folder, ignore_errors=True)
    name = f"{os.getpid()}-{secrets.token_hex(4)}"
    claim = root / f".{name}"
    claim.mkdir(mode=0o700)
    lock = os.open(claim / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    path = claim.rename(root / name)  # whole, locked: another start never sees it half-made
    for module in modules:
        if not isinstance(getattr(module, "FILES_DIRECTORY", None), Path):
            raise TypeError(f"{module.__name__} has no FILES_DIRECTORY folder to point")
        module.FILES_DIRECTORY = path  # type: ignore[attr-defined]
    return FilesFolder(path, lock)
