"""What every HTTP answer of the app carries, and who may read /metrics: pure rules; app.py
applies them in one middleware."""

from __future__ import annotations

import hmac

__all__ = ["metrics_refusal", "secure_cookie", "security_headers"]


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
