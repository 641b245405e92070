"""What every HTTP answer of the app carries, and who may read /metrics: pure rules; app.py
applies them in one middleware."""

from __future__ import annotations

import gzip
import hmac
import re
import secrets
from collections.abc import Mapping, MutableMapping

__all__ = ["VISITOR_PATHS", "harden_page", "hardened_page", "let_frame", "metrics_refusal",
           "page_policy", "secure_cookie",
           "security_headers"]

# Third-party requests Chainlit's page makes on every load (Google Fonts, KaTeX from jsDelivr):
# a kiosk without internet waits on them, and each visitor's address goes to a third party.
# The page falls back to the system's sans-serif font.
_THIRD_PARTY_LINK = re.compile(
    r"<link\b[^>]*\bhref=\"https://(?:fonts\.googleapis\.com|fonts\.gstatic\.com|"
    r"cdn\.jsdelivr\.net)[^\"]*\"[^>]*>", re.IGNORECASE | re.DOTALL)
_SCRIPT_TAG = re.compile(r"<script\b", re.IGNORECASE)


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
    the kiosk's) in the browser. An injected inline script still does not run (no nonce).
    """
    policy = [
        "default-src 'self'",
        f"script-src 'self' 'nonce-{nonce}' 'unsafe-eval'",
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


def let_frame(headers: MutableMapping[str, str], origins: frozenset[str]) -> None:
    """A visitor's page inside the desk's widget: framed by *origins* (HYMT_WIDGET_ORIGINS)
    and the app itself, by nobody else (frame-ancestors; X-Frame-Options cannot list sites)."""
    ancestors = "frame-ancestors " + " ".join(["'self'", *sorted(origins)])
    policy = headers.get("Content-Security-Policy") or "frame-ancestors 'none'"
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
