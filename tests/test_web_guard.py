"""The door's pure rules: which hosts and origins are ours, when a sign-in must wait."""

from __future__ import annotations

import time

import pytest

from hymt_chat.service.web_guard import LoginThrottle, host_allowed, origin_allowed


@pytest.mark.parametrize(("origin", "host", "forwarded", "allowed", "ok"), [
    (None, "chat.example:8000", None, frozenset(), True),  # no Origin: not a cross-site page
    ("http://chat.example:8000", "chat.example:8000", None, frozenset(), True),
    ("http://chat.example:9000", "chat.example:8000", None, frozenset(), False),  # other port
    ("http://evil.example", "chat.example:8000", None, frozenset(), False),
    ("https://chat.example", "app:8000", "chat.example", frozenset(), True),  # behind a proxy
    ("https://help.example", "chat.example", None, frozenset({"https://help.example"}), True),
    ("null", "chat.example", None, frozenset(), False),  # a sandboxed frame, a file:// page
])
def test_origins(origin, host, forwarded, allowed, ok) -> None:
    assert origin_allowed(origin, host, forwarded, allowed) is ok


def test_attempts_are_counted_before_the_check_per_name_and_per_address(
        monkeypatch: pytest.MonkeyPatch) -> None:
    now = [2_000_000.0]
    monkeypatch.setattr(time, "time", lambda: now[0])
    throttle = LoginThrottle("3/minute", "5/minute", clock=lambda: now[0])
    assert [throttle.attempt("alice", "1.2.3.4") for _ in range(3)] == [0, 0, 0]
    assert throttle.attempt("alice", "9.9.9.9") == pytest.approx(60, abs=1)  # the name waits
    assert throttle.attempt("bob", "1.2.3.4") == 0  # the address had 2 tries left
    assert throttle.attempt("carol", "1.2.3.4") == 0
    assert throttle.attempt("erin", "1.2.3.4") > 0  # a 6th try from one address
    throttle.succeeded("alice")  # the right password clears its name, not the address
    assert throttle.attempt("alice", "9.9.9.9") == 0
    assert throttle.attempt("dave", "1.2.3.4") > 0
    now[0] += 61
    assert throttle.attempt("carol", "1.2.3.4") == 0


@pytest.mark.parametrize(("host", "allowed", "ok"), [
    ("127.0.0.1:8000", frozenset({"127.0.0.1", "localhost"}), True),
    ("LOCALHOST:8000", frozenset({"127.0.0.1", "localhost"}), True),
    ("[::1]:8000", frozenset({"::1"}), True),
    ("rebind.evil.example:8000", frozenset({"127.0.0.1", "localhost"}), False),
    (None, frozenset({"localhost"}), False),
    ("anything.example", None, True),  # None: any name
])
def test_hosts(host, allowed, ok) -> None:
    assert host_allowed(host, allowed) is ok
