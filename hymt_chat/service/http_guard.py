"""What every HTTP answer of the app carries, who may read /metrics, which of Chainlit's routes
the product uses, how a user's file is served and whose session a request names: pure rules;
:mod:`hymt_chat.service.web` applies them in middlewares."""

from __future__ import annotations

import gzip
import hmac
import json
import mimetypes
import re
import secrets
import uuid
from collections.abc import Mapping
from typing import Protocol

__all__ = ["CHAINLIT_PAGE", "CHAINLIT_USED", "CLIENT_COOKIE", "DOWNLOAD_POLICY", "FILE_PATH",
           "VISITOR_PATHS", "as_download", "bound_session", "chainlit_route_used",
           "client_cookie", "harden_page", "hardened_page", "is_download", "let_frame",
           "metrics_refusal", "page_policy", "rebound_connect", "secure_cookie",
           "security_headers"]

# Third-party requests Chainlit's page makes on every load (Google Fonts, KaTeX from jsDelivr):
# a kiosk without internet waits on them, and each visitor's address goes to a third party.
# The page falls back to the system's sans-serif font.
_THIRD_PARTY_LINK = re.compile(
    r"<link\b[^>]*\bhref=\"https://(?:fonts\.googleapis\.com|fonts\.gstatic\.com|"
    r"cdn\.jsdelivr\.net)[^\"]*\"[^>]*>", re.IGNORECASE | re.DOTALL)
_SCRIPT_TAG = re.compile(r"<script\b", re.IGNORECASE)


class _EditableHeaders(Protocol):
    """Headers edited in place: a dict, or Starlette's MutableHeaders (which is a Mapping
    with item assignment, not a MutableMapping)."""

    def get(self, key: str, default: str, /) -> str: ...
    def __contains__(self, key: object, /) -> bool: ...
    def __setitem__(self, key: str, value: str, /) -> None: ...
    def __delitem__(self, key: str, /) -> None: ...


def security_headers(*, allow_framing: bool = False) -> dict[str, str]:
    """Headers for every answer: no MIME sniffing, no framing (a kiosk may opt in), no referrer
    leaking the page's URL (a room or thread id) to other sites."""
    headers = {
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "same-origin",
        "Cross-Origin-Opener-Policy": "same-origin",
    }
    if not allow_framing:
        headers["X-Frame-Options"] = "DENY"
        headers["Content-Security-Policy"] = "frame-ancestors 'none'"
    return headers


def page_policy(nonce: str, *, allow_framing: bool = False) -> str:
    """The page's Content-Security-Policy: everything from the app itself; scripts only its own
    files and the inline ones it wrote (nonce); no plugins, no foreign forms or frames.

    'unsafe-eval' is what Chainlit needs: it compiles custom elements (public/elements/*.jsx,
    the kiosk's) in the browser. blob: is its microphone's: the audio worklet that records is
    loaded from a blob the page makes itself (a worklet falls under script-src). An injected
    inline script still does not run (no nonce).
    """
    policy = [
        "default-src 'self'",
        f"script-src 'self' 'nonce-{nonce}' 'unsafe-eval' blob:",
        "style-src 'self' 'unsafe-inline'",  # React sets style attributes
        "img-src 'self' data: blob:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "media-src 'self' data: blob:",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
    ]
    if not allow_framing:
        policy.append("frame-ancestors 'none'")
    return "; ".join(policy)


VISITOR_PATHS = ("/desk", "/room/")  # the support desk's visitor pages: the widget frames them


def let_frame(headers: _EditableHeaders, origins: frozenset[str]) -> None:
    """A visitor's page inside the desk's widget: framed by *origins* (HYMT_WIDGET_ORIGINS)
    and the app itself, by nobody else (frame-ancestors; X-Frame-Options cannot list sites)."""
    ancestors = "frame-ancestors " + " ".join(["'self'", *sorted(origins)])
    policy = headers.get("Content-Security-Policy", "") or "frame-ancestors 'none'"
    headers["Content-Security-Policy"] = policy.replace("frame-ancestors 'none'", ancestors)
    if "X-Frame-Options" in headers:
        del headers["X-Frame-Options"]


def harden_page(html: str, nonce: str) -> str:
    """Chainlit's page with a nonce on each of its scripts and no third-party stylesheets."""
    html = _THIRD_PARTY_LINK.sub("", html)
    return _SCRIPT_TAG.sub(f'<script nonce="{nonce}"', html)


def hardened_page(body: bytes, headers: Mapping[str, str], *, allow_framing: bool = False
                  ) -> tuple[str, dict[str, str]]:
    """The page Chainlit serves (gzip'd or not), with its scripts tagged by a fresh nonce, and
    the headers to send with it: a CSP that allows only those scripts."""
    if headers.get("content-encoding") == "gzip":  # Chainlit compresses its page
        body = gzip.decompress(body)
    nonce = secrets.token_urlsafe(16)
    kept = {k: v for k, v in headers.items() if k.lower() not in
            ("content-length", "content-security-policy", "content-encoding")}
    kept["Content-Security-Policy"] = page_policy(nonce, allow_framing=allow_framing)
    return harden_page(body.decode("utf-8"), nonce), kept


def secure_cookie(set_cookie: str) -> str:
    """A Set-Cookie value with ``Secure`` added (once): sent over HTTPS, the browser must never
    send the agent's token over plain HTTP."""
    parts = [p.strip().lower() for p in set_cookie.split(";")]
    return set_cookie if "secure" in parts else f"{set_cookie}; Secure"


def metrics_refusal(token: str | None, authorization: str | None, *, sign_in: bool
                    ) -> tuple[int, str] | None:
    """Why a /metrics request is refused (status, sentence), or None to serve it.

    With HYMT_METRICS_TOKEN set, only ``Authorization: Bearer <token>`` reads it. Without one
    it is open while the app has no sign-in (a local, single-user app) and closed once agents
    sign in: traffic volumes and language pairs are then nobody else's business.
    """
    if token:
        given = (authorization or "").removeprefix("Bearer ").strip()
        if hmac.compare_digest(given.encode(), token.encode()) and authorization:
            return None
        return 401, "Send Authorization: Bearer <HYMT_METRICS_TOKEN>."
    if sign_in:
        return 403, "Agents sign in here: set HYMT_METRICS_TOKEN to read /metrics."
    return None


# --- Chainlit's HTTP surface ----------------------------------------------------------------
# Chainlit is archived upstream (SECURITY.md): of its routes, only those its page calls in this
# product answer (its frontend's api client: sign-in, settings, history, actions, files; the
# socket). Everything else (feedback without an owner check, sharing the server does not turn
# off, elements, MCP, OpenAPI docs, copilot, OAuth, header/JWT sign-in) answers 404.
CHAINLIT_USED = frozenset({
    ("GET", "/public/{filename:path}"), ("GET", "/assets/{filename:path}"),
    ("GET", "/auth/config"), ("POST", "/login"), ("POST", "/logout"), ("GET", "/user"),
    ("POST", "/set-session-cookie"),
    ("GET", "/project/translations"), ("GET", "/project/settings"),
    ("POST", "/project/threads"), ("GET", "/project/thread/{thread_id}"),
    ("GET", "/project/thread/{thread_id}/element/{element_id}"),
    ("PUT", "/project/thread"), ("DELETE", "/project/thread"),
    ("POST", "/project/action"), ("POST", "/project/file"), ("GET", "/project/file/{file_id}"),
    ("GET", "/favicon"), ("GET", "/logo"), ("GET", "/avatars/{avatar_id:str}"),
    ("HEAD", "/"), ("GET", "/health"), ("GET", "/{full_path:path}"),
    ("WEBSOCKET", "/ws/socket.io"),  # websocket only: the config's transports
})
CHAINLIT_PAGE = "/{full_path:path}"  # the page, for its own routes only (_PAGE_PATHS)
# The page's routes (its router: "/", "/thread/:id?", "/element/:id", "/login"); "/share/:id",
# "/env" and "/login/callback" serve sharing, user keys and OAuth, none of which is on.
_PAGE_PATHS = re.compile(r"/(?:login|thread(?:/[\w-]+)?|element/[\w-]+)?/?\Z")


def chainlit_route_used(method: str, template: str, path: str) -> bool:
    """Does the product use Chainlit's route *template* for *method* ("WEBSOCKET" for a
    socket) on *path*? Its page route only for the page's own paths."""
    if template == CHAINLIT_PAGE:
        return method in ("GET", "HEAD") and bool(_PAGE_PATHS.match(path))
    return (method, template) in CHAINLIT_USED or (
        method == "HEAD" and ("GET", template) in CHAINLIT_USED)


# --- a user's files -------------------------------------------------------------------------
FILE_PATH = "/project/file/"  # Chainlit's files of a session: uploads and what the app made
DOWNLOAD_POLICY = "sandbox; default-src 'none'"
_SAFE_NAME = re.compile(r"[^\w.-]")


def is_download(path: str, headers: Mapping[str, str]) -> bool:
    """Is this answer a user's file (Chainlit's file route, or any attachment: the APIs'
    translated documents)? Such bytes are never the page: no nonce, no rewriting."""
    disposition = headers.get("content-disposition", "").lower()
    return path.startswith(FILE_PATH) or disposition.startswith("attachment")


def as_download(headers: _EditableHeaders, path: str) -> None:
    """Make a user's file a download that can never act as a page of the app: an attachment,
    its type not sniffed, and a sandbox with nothing allowed should a browser render it
    anyway (an HTML file's scripts, an SVG's)."""
    if not headers.get("content-disposition", "").lower().startswith("attachment"):
        kind = headers.get("content-type", "").split(";")[0].strip()
        stem = _SAFE_NAME.sub("_", path.rstrip("/").rsplit("/", 1)[-1])[:80] or "file"
        name = stem + ((mimetypes.guess_extension(kind) or "") if kind else "")
        headers["Content-Disposition"] = f'attachment; filename="{name}"'
    headers["X-Content-Type-Options"] = "nosniff"
    headers["Content-Security-Policy"] = DOWNLOAD_POLICY


# --- whose session: an anonymous session belongs to the browser that opened it ----------------
CLIENT_COOKIE = "hymt_client"


def client_cookie(token: str) -> str:
    """The Set-Cookie value that names a browser: scripts cannot read it, other sites' pages
    do not send it."""
    return f"{CLIENT_COOKIE}={token}; Path=/; HttpOnly; SameSite=Lax"


def bound_session(token: str | None, session_id: str) -> str | None:
    """The server's id of the session a client names: its own id keyed by its browser's
    cookie, so that the id alone (a copied file link) reaches nothing; a client without the
    cookie (a script) keeps its id. None: not a session id (Chainlit's are UUIDs, and one
    names a folder)."""
    try:
        uuid.UUID(session_id)
    except (ValueError, TypeError, AttributeError):
        return None
    if not token:
        return session_id
    digest = hmac.new(token.encode(), session_id.encode(), "sha256").digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def rebound_connect(packet: str, token: str | None) -> str:
    """A socket.io packet as the client sent it, with the session id of a CONNECT packet
    (``40[/ns,]{auth}``) replaced by :func:`bound_session`'s (a new one when it is not an
    id); every other packet unchanged."""
    if not packet.startswith("40"):
        return packet
    head, body = "40", packet[2:]
    if body.startswith("/"):
        namespace, _, body = body.partition(",")
        head += namespace + ","
    try:
        auth = json.loads(body) if body else None
    except ValueError:
        return packet
    if not isinstance(auth, dict) or "sessionId" not in auth:
        return packet
    auth["sessionId"] = bound_session(token, str(auth["sessionId"])) or str(uuid.uuid4())
    return head + json.dumps(auth)
