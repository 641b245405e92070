"""Process-wide objects (policy, client, metrics, limiter, readiness, detector) are kept one way:
settings.Shared — built once on first use, even when threads race, rebuilt only for a new key."""

from __future__ import annotations

import threading
import time

from hymt_chat.engine.client import get_client, reset_client
from hymt_chat.lang.detect import _profiles
from hymt_chat.service.metrics import get_metrics
from hymt_chat.service.readiness import get_readiness
from hymt_chat.settings import Settings, Shared


def test_first_use_builds_and_later_uses_get_the_same():
    built: list[int] = []
    shared: Shared[list[int]] = Shared()
    first = shared.get(lambda: built.append(1) or [1])
    assert shared.get(lambda: built.append(2) or [2]) is first == [1]
    assert built == [1]
    shared.reset()
    assert shared.get(lambda: [3]) == [3]


def test_racing_threads_build_it_once():
    calls = 0
    start = threading.Barrier(8)

    def build() -> object:
        nonlocal calls
        calls += 1
        time.sleep(0.05)  # a slow build (langdetect's profiles take ~0.25 s): the window for a race
        return object()

    shared: Shared[object] = Shared()
    got: list[object] = []

    def worker() -> None:
        start.wait()
        got.append(shared.get(build))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == 1 and len(set(map(id, got))) == 1


def test_a_new_key_rebuilds_and_hands_over_the_old_one():
    replaced: list[str] = []
    shared: Shared[str] = Shared(on_replace=replaced.append)
    assert shared.get(lambda: "a", key=1) == "a"
    assert shared.get(lambda: "b", key=1) == "a"
    assert shared.get(lambda: "c", key=2) == "c"
    assert replaced == ["a"]


def test_the_getters_keep_their_first_settings(tmp_path):
    reset_client()
    try:
        one = Settings(base_url="http://127.0.0.1:1/v1", api_key="a")
        client = get_client(one)
        assert get_client(one) is client
        other = get_client(Settings(base_url="http://127.0.0.1:2/v1", api_key="b"))
        assert other is not client and other.endpoint.base_url == "http://127.0.0.1:2/v1"
    finally:
        reset_client()
    assert get_readiness(Settings()) is get_readiness(Settings(cache_dir=tmp_path))
    assert get_metrics(Settings()) is get_metrics(Settings(cache_dir=tmp_path))
    assert _profiles() is _profiles()
