"""Per-user message rate limit (moving window, in memory)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from hymt_chat.errors import RateLimitedError
from hymt_chat.service.ratelimit import RateLimiter, limiter_for
from hymt_chat.settings import Settings


def test_under_the_limit_passes_and_over_it_raises_with_the_wait() -> None:
    limiter = RateLimiter("3/minute")
    for _ in range(3):
        limiter.hit("alice")
    with pytest.raises(RateLimitedError) as caught:
        limiter.hit("alice")
    assert 59 < caught.value.retry_after <= 60
    assert str(caught.value).endswith("try again in 60 s.")


def test_users_are_limited_separately() -> None:
    limiter = RateLimiter("1/minute")
    limiter.hit("alice")
    limiter.hit("bob")
    with pytest.raises(RateLimitedError):
        limiter.hit("alice")


def test_the_window_moves_and_retry_after_is_right(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1_000_000.0]  # an injected clock: limits and the limiter read time.time()
    monkeypatch.setattr(time, "time", lambda: now[0])
    limiter = RateLimiter("2/second")
    limiter.hit("a")
    now[0] += 0.4
    limiter.hit("a")
    with pytest.raises(RateLimitedError) as caught:
        limiter.hit("a")
    # Moving window: a place frees when the *oldest* hit is a second old, 0.6 s from now.
    assert caught.value.retry_after == pytest.approx(0.6, abs=0.01)
    now[0] += 0.61
    limiter.hit("a")  # one place came back
    with pytest.raises(RateLimitedError):
        limiter.hit("a")  # but only one


def test_a_refused_message_uses_up_no_limit() -> None:
    limiter = RateLimiter("1/second; 5/minute")
    limiter.hit("a")
    for _ in range(10):
        with pytest.raises(RateLimitedError):
            limiter.hit("a")  # refused by 1/second; must not eat the 5/minute budget
    time.sleep(1.05)
    limiter.hit("a")  # 2 of 5/minute used, not 12


def test_several_limits_report_the_longest_wait() -> None:
    limiter = RateLimiter("5/second; 1/minute")
    limiter.hit("a")
    with pytest.raises(RateLimitedError) as caught:
        limiter.hit("a")
    assert caught.value.retry_after > 59


@pytest.mark.parametrize("spec", ["", "   "])
def test_empty_spec_disables_the_limit(spec: str) -> None:
    limiter = RateLimiter(spec)
    assert not limiter.enabled
    for _ in range(1000):
        limiter.hit("a")


def test_a_bad_spec_is_refused_at_start() -> None:
    with pytest.raises(ValueError):
        RateLimiter("lots")


def test_the_chats_limiter_is_built_from_its_settings() -> None:
    limiter = limiter_for(Settings(rate_limit="1/minute"))
    limiter_for(Settings()).hit("a")  # another app's limiter: its own counters, unlimited
    limiter.hit("a")
    with pytest.raises(RateLimitedError):
        limiter.hit("a")


def test_characters_are_charged_and_a_job_over_the_whole_allowance_is_refused() -> None:
    limiter = RateLimiter("100/minute", chars="1000/minute")
    limiter.hit("a", chars=600)
    with pytest.raises(RateLimitedError) as caught:
        limiter.hit("a", chars=600)  # 1,200 > 1,000 in the window: wait
    assert caught.value.retry_after > 0 and "try again in" in str(caught.value)
    limiter.hit("a", chars=400)  # the refused one used up nothing
    with pytest.raises(RateLimitedError, match="This is 5,000 characters; one user may send at "
                                               "most 1,000"):
        limiter.hit("b", chars=5000)  # never possible: said so, no wait offered


def _address_behind(proxies: str, peer: str | None, forwarded_for: str | None) -> str:
    """client_address of a request from *peer*, with uvicorn's proxy-headers middleware in
    front as uvicorn serves the app (uvicorn/config.py, Config.load:
    ``ProxyHeadersMiddleware(self.loaded_app, trusted_hosts=self.forwarded_allow_ips)``)."""
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    from hymt_chat.service.ratelimit import client_address

    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(client_address(scope["client"][0] if scope.get("client") else None))

    headers = [(b"x-forwarded-for", forwarded_for.encode())] if forwarded_for else []
    scope = {"type": "http", "client": (peer, 5000) if peer else None, "headers": headers}
    asyncio.run(ProxyHeadersMiddleware(app, trusted_hosts=proxies)(scope, None, None))  # type: ignore[arg-type]
    return seen[0]


def test_the_client_address_trusts_forwarded_for_only_from_our_proxies() -> None:
    from hymt_chat.service.web import forwarded_allow_ips

    proxies = forwarded_allow_ips(Settings(trusted_proxies="10.0.0.2"))
    assert _address_behind(proxies, "203.0.113.9", "1.2.3.4") == "203.0.113.9"  # not a proxy
    assert _address_behind(proxies, "10.0.0.2", "1.2.3.4, 198.51.100.7") == "198.51.100.7"
    assert _address_behind(proxies, "10.0.0.2", "198.51.100.7, 10.0.0.2") == "198.51.100.7"
    assert _address_behind(proxies, "10.0.0.2", None) == "10.0.0.2"
    assert _address_behind(proxies, None, None) == "unknown"
