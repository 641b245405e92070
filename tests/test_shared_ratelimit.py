"""The rate limit holds across app replicas: two real app processes share one real Redis.

The model is the stand-in of ``tests/support/tabs.py`` (answers marked ``EN:``); the limit's
store is Debian's redis-server, started for the test."""

from __future__ import annotations

import asyncio

import pytest

from hymt_chat.errors import RateLimitedError
from hymt_chat.service.ratelimit import RateLimiter
from tests.support.redis_server import redis_server
from tests.support.tabs import Tab, app


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


def test_two_limiters_on_one_redis_share_each_users_allowance(redis_url) -> None:
    """Two processes' limiters are two objects here, on one Redis: 3/minute in all, not each."""
    one, two = (RateLimiter("3/minute", storage=redis_url) for _ in range(2))
    one.hit("user:shared-a")
    two.hit("user:shared-a")
    one.hit("user:shared-a")
    with pytest.raises(RateLimitedError) as caught:
        two.hit("user:shared-a")
    assert 0 < caught.value.retry_after <= 60
    two.hit("user:shared-b")  # another user has their own allowance


def test_a_refused_job_charges_nothing_in_redis_either(redis_url) -> None:
    limiter = RateLimiter("5/minute", chars="100/minute", storage=redis_url)
    limiter.hit("user:chars", chars=90)
    with pytest.raises(RateLimitedError):
        limiter.hit("user:chars", chars=20)  # over the characters: no job counted either
    for _ in range(4):
        limiter.hit("user:chars", chars=0)  # all 4 remaining jobs are still there


async def test_ahit_works_from_the_event_loop(redis_url) -> None:
    limiter = RateLimiter("2/minute", storage=redis_url)
    await asyncio.gather(limiter.ahit("user:loop"), limiter.ahit("user:loop"))
    with pytest.raises(RateLimitedError):
        await limiter.ahit("user:loop")


def test_a_redis_that_does_not_answer_stops_the_start_with_its_name() -> None:
    with pytest.raises(RuntimeError, match="HYMT_REDIS_URL"):
        RateLimiter("1/minute", storage="redis://127.0.0.1:1/0")


async def test_the_limit_holds_across_two_app_replicas(tmp_path, redis_url) -> None:
    env = {"HYMT_REDIS_URL": redis_url, "HYMT_RATE_LIMIT": "3/minute",
           "HYMT_RATE_LIMIT_CHARS": ""}
    with app(tmp_path / "a", **env) as (url_a, stub_a), app(tmp_path / "b", **env) as (url_b, stub_b):
        # Both tabs come from 127.0.0.1: one client address, so one allowance.
        async with Tab(url_a) as tab_a, Tab(url_b) as tab_b:
            for tab, n in ((tab_a, 1), (tab_b, 2), (tab_a, 3)):
                await tab.send(f"Bonjour tout le monde, message numéro {n}.")
                await tab.wait(f"EN:Bonjour tout le monde, message numéro {n}.")
            await tab_b.send("Bonjour tout le monde, message numéro 4.")
            await tab_b.wait("try again in")  # said by replica B, counted by A's hits too
        # Refused at admission, before any model call: each model saw only what it answered.
        assert len(stub_a.prompts) == 2 and len(stub_b.prompts) == 1
