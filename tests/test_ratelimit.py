"""Per-user message rate limit (moving window, in memory)."""

from __future__ import annotations

import time

import pytest

from hymt_chat.errors import RateLimitedError
from hymt_chat.ratelimit import RateLimiter, get_rate_limiter
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


def test_the_window_moves_and_retry_after_is_right() -> None:
    limiter = RateLimiter("2/second")
    limiter.hit("a")
    time.sleep(0.4)
    limiter.hit("a")
    with pytest.raises(RateLimitedError) as caught:
        limiter.hit("a")
    # Moving window: a place frees when the *oldest* hit is a second old, ~0.6 s from now.
    assert 0.45 < caught.value.retry_after < 0.65
    time.sleep(caught.value.retry_after + 0.05)
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


def test_get_rate_limiter_is_a_lazy_singleton(monkeypatch: pytest.MonkeyPatch) -> None:
    import hymt_chat.ratelimit as module

    monkeypatch.setattr(module, "_RATE_LIMITER", None)
    limiter = get_rate_limiter(Settings(rate_limit="1/minute"))
    assert limiter is get_rate_limiter(Settings())
    limiter.hit("a")
    with pytest.raises(RateLimitedError):
        limiter.hit("a")
