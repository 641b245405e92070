"""The door's pure rules: which origins are ours, and when guessing a password must wait."""

from __future__ import annotations

import time

import pytest

from hymt_chat.service.web_guard import LoginThrottle, origin_allowed


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


def test_guessing_waits_per_name_and_per_address(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [2_000_000.0]
    monkeypatch.setattr(time, "time", lambda: now[0])
    throttle = LoginThrottle("3/minute", "5/minute", clock=lambda: now[0])
    for _ in range(3):
        assert throttle.wait("alice", "1.2.3.4") == 0
        throttle.failed("alice", "1.2.3.4")
    assert throttle.wait("alice", "9.9.9.9") == pytest.approx(60, abs=1)  # the name is locked
    assert throttle.wait("bob", "1.2.3.4") == 0  # the address has 2 tries left
    throttle.failed("bob", "1.2.3.4")
    throttle.failed("carol", "1.2.3.4")
    assert throttle.wait("dave", "1.2.3.4") > 0  # 5 failures from one address
    now[0] += 61
    assert throttle.wait("alice", "1.2.3.4") == 0
