"""The door's pure rules: which hosts and origins are ours, when a sign-in must wait, which of
Chainlit's routes answer, how a file is served, whose session an id names."""

from __future__ import annotations

import json
import time
import uuid

import pytest
from starlette.datastructures import Headers

from hymt_chat.service.http_guard import (
    CHAINLIT_PAGE,
    as_download,
    bound_session,
    chainlit_route_used,
    is_download,
    rebound_connect,
)
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


# --- Chainlit's surface, files, sessions: the rules web.py applies ------------------------------


@pytest.mark.parametrize(("method", "template", "path", "used"), [
    ("POST", "/project/file", "/project/file", True),
    ("GET", "/project/file/{file_id}", "/project/file/abc", True),
    ("HEAD", "/project/file/{file_id}", "/project/file/abc", True),  # a GET route answers HEAD
    ("PUT", "/feedback", "/feedback", False),
    ("PUT", "/project/thread/share", "/project/thread/share", False),
    ("POST", "/mcp", "/mcp", False),
    ("WEBSOCKET", "/ws/socket.io", "/ws/socket.io/", True),
    ("GET", "/ws/socket.io", "/ws/socket.io/", False),  # polling: the config says websocket
    ("GET", CHAINLIT_PAGE, "/", True),
    ("GET", CHAINLIT_PAGE, "/thread/0e7f7a4c-7b1e", True),
    ("GET", CHAINLIT_PAGE, "/share/abc", False),  # sharing is off
    ("GET", CHAINLIT_PAGE, "/mcp", False),
    ("POST", CHAINLIT_PAGE, "/", False),
])
def test_only_the_chainlit_routes_the_product_uses(method, template, path, used) -> None:
    assert chainlit_route_used(method, template, path) is used


def test_a_file_is_made_a_download_whatever_it_came_with() -> None:
    headers = Headers({"content-type": "text/html; charset=utf-8",
                       "content-security-policy": "script-src 'nonce-x'"}).mutablecopy()
    assert is_download("/project/file/ab-12", headers)
    as_download(headers, "/project/file/ab-12")
    assert headers["content-disposition"] == 'attachment; filename="ab-12.html"'
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["content-security-policy"] == "sandbox; default-src 'none'"
    api = Headers({"content-disposition": 'attachment; filename="a.en.html"'}).mutablecopy()
    assert is_download("/libretranslate/download_file/x", api)
    as_download(api, "/libretranslate/download_file/x")
    assert api["content-disposition"] == 'attachment; filename="a.en.html"'  # its own name kept
    assert not is_download("/thread/x", Headers({"content-type": "text/html"}))


def test_a_session_id_is_keyed_by_the_browser_cookie() -> None:
    sid = "0e7f7a4c-7b1e-4a54-9a52-1f0e6c0f9d3b"
    mine, theirs = bound_session("cookie-a", sid), bound_session("cookie-b", sid)
    assert mine == bound_session("cookie-a", sid) and mine not in (theirs, sid)
    assert str(uuid.UUID(mine or "")) == mine  # still a UUID: it names a folder
    assert bound_session(None, sid) == sid  # a script without the cookie keeps its id
    assert bound_session("cookie-a", "../../etc") is None  # not an id


def test_the_connect_packet_carries_the_keyed_id() -> None:
    sid = "0e7f7a4c-7b1e-4a54-9a52-1f0e6c0f9d3b"
    packet = rebound_connect("40" + json.dumps({"sessionId": sid, "clientType": "webapp"}),
                             "cookie-a")
    assert json.loads(packet[2:]) == {"sessionId": bound_session("cookie-a", sid),
                                      "clientType": "webapp"}
    spaced = rebound_connect("40/ns," + json.dumps({"sessionId": sid}), "cookie-a")
    assert spaced.startswith("40/ns,") and sid not in spaced
    forged = json.loads(rebound_connect('40{"sessionId":"../x"}', None)[2:])["sessionId"]
    assert str(uuid.UUID(forged)) == forged  # a new session, not a path
    assert rebound_connect('42["client_message",{}]', "cookie-a") == '42["client_message",{}]'
