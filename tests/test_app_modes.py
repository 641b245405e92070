"""The app's three chat profiles, and sign-in only when support agents are configured.

Runs the real app (``chainlit run app.py -h``) against a stand-in model; no vLLM, no browser.
"""

from __future__ import annotations

import json
import re

import httpx
import pytest

from hymt_chat.modes.agent.conversation import Conversation
from hymt_chat.modes.profiles import (
    AGENT_PROFILE,
    KIOSK_PROFILE,
    TRANSLATOR_PROFILE,
    agent_state_of,
    profile_name,
)
from hymt_chat.modes.wording import best_meta
from hymt_chat.service.auth import hash_password
from tests.support.chainlit_app import app_env, running_app
from tests.support.ports import free_port
from tests.support.stub_model import StubModel
from tests.support.tabs import CONNECT_WAIT

PASSWORD = "correct horse battery"


def _profiles(url: str, cookies: httpx.Cookies | None = None) -> dict[str, dict]:
    response = httpx.get(f"{url}/project/settings", cookies=cookies, timeout=10)
    assert response.status_code == 200, response.text
    return {p["name"]: p for p in response.json()["chatProfiles"]}


def test_three_profiles_and_no_sign_in_without_agents(tmp_path):
    with StubModel() as stub:
        env = app_env(HYMT_BASE_URL=stub.base_url, HYMT_API_KEY="k", HYMT_MODEL="stub",
                      HYMT_CACHE_DIR=str(tmp_path / "cache"), HYMT_PORT=str(free_port()),
                      HYMT_AGENTS="")
        env.pop("CHAINLIT_AUTH_SECRET", None)
        with running_app(env, free_port(), tmp_path / "app.log") as url:
            config = httpx.get(f"{url}/auth/config", timeout=10).json()
            assert not config["requireLogin"] and config["passwordAuth"] is False  # None: falsy
            profiles = _profiles(url)
            settings = httpx.get(f"{url}/project/settings", timeout=10).json()
            page = httpx.get(url, timeout=10)
            metrics = httpx.get(f"{url}/metrics", timeout=10)
    # The page loads nothing from the internet (a kiosk may have none; visitors' addresses stay
    # here): a new external URL in a Chainlit upgrade fails this.
    external = re.findall(r"""<(?:link|script|img)\b[^>]*(?:href|src)=["']?(?:https?:)?//""",
                          page.text, re.IGNORECASE)
    assert external == [], external
    assert "'self'" in page.headers["content-security-policy"]  # and nothing else may load
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["x-content-type-options"] == "nosniff"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert metrics.status_code == 200  # no sign-in: a local, single-user app
    assert list(profiles) == [TRANSLATOR_PROFILE, AGENT_PROFILE, KIOSK_PROFILE]
    assert profiles[TRANSLATOR_PROFILE]["default"] is True
    assert profiles[TRANSLATOR_PROFILE].get("starters") is None  # the Translator's starters
    assert profiles[AGENT_PROFILE]["starters"] == [] == profiles[KIOSK_PROFILE]["starters"]
    assert settings["dataPersistence"] is False  # no sign-in: nothing is stored
    assert not (tmp_path / "cache" / "history.db").exists()


def test_agents_must_sign_in_and_get_a_history_database(tmp_path):
    entry = f"alice:{hash_password(PASSWORD, n=2**10)}"
    with StubModel() as stub:
        env = app_env(HYMT_BASE_URL=stub.base_url, HYMT_API_KEY="k", HYMT_MODEL="stub",
                      HYMT_CACHE_DIR=str(tmp_path / "cache"), HYMT_PORT=str(free_port()),
                      HYMT_AGENTS=entry, CHAINLIT_AUTH_SECRET="x" * 64,
                      HYMT_METRICS_TOKEN="m" * 32, HYMT_SECURE_COOKIES="true")
        with running_app(env, free_port(), tmp_path / "app.log") as url:
            config = httpx.get(f"{url}/auth/config", timeout=10).json()
            assert config["requireLogin"] is True and config["passwordAuth"] is True
            assert httpx.get(f"{url}/metrics", timeout=10).status_code == 401
            assert httpx.get(f"{url}/metrics", headers={"Authorization": "Bearer wrong"},
                             timeout=10).status_code == 401
            assert httpx.get(f"{url}/metrics", headers={"Authorization": "Bearer " + "m" * 32},
                             timeout=10).status_code == 200
            assert httpx.get(f"{url}/project/settings", timeout=10).status_code == 401
            wrong = httpx.post(f"{url}/login", data={"username": "alice", "password": "nope"},
                               timeout=10)
            assert wrong.status_code == 401
            stranger = httpx.post(f"{url}/login",
                                  data={"username": "mallory", "password": PASSWORD}, timeout=10)
            assert stranger.status_code == 401
            right = httpx.post(f"{url}/login", data={"username": "alice", "password": PASSWORD},
                               timeout=10)
            assert right.status_code == 200 and right.json() == {"success": True}
            cookies = right.headers.get_list("set-cookie")
            assert cookies and all("; Secure" in c for c in cookies)  # behind a TLS proxy
            # The test talks plain HTTP: hand the token over without the Secure flag.
            plain = httpx.Cookies({c.name: c.value for c in right.cookies.jar})
            profiles = _profiles(url, plain)
            settings = httpx.get(f"{url}/project/settings", cookies=plain, timeout=10).json()
    assert list(profiles) == [TRANSLATOR_PROFILE, AGENT_PROFILE, KIOSK_PROFILE]
    # Only agents sign in: their page opens on their desk (and a reload of a desk thread
    # connects in its profile at once, with no reconnect to switch to it).
    assert [n for n, p in profiles.items() if p["default"]] == [AGENT_PROFILE]
    assert settings["dataPersistence"] is True and settings["threadResumable"] is True
    assert (tmp_path / "cache" / "history.db").exists()  # schema made at start
    # Customer conversations, logs and keys are the owner's alone, from the start.
    cache = tmp_path / "cache"
    assert _mode(cache / "history.db") == 0o600
    assert _mode(cache / "logs" / "app.log") == 0o600
    assert _mode(cache) == 0o700 and _mode(cache / "logs") == 0o700


def _mode(path) -> int:
    return path.stat().st_mode & 0o777


def test_agents_without_a_secret_stop_the_app_with_a_clear_message(tmp_path):
    entry = f"alice:{hash_password(PASSWORD, n=2**10)}"
    env = app_env(HYMT_BASE_URL="http://127.0.0.1:9/v1", HYMT_API_KEY="k",
                  HYMT_CACHE_DIR=str(tmp_path / "cache"), HYMT_PORT=str(free_port()),
                  HYMT_AGENTS=entry)
    env.pop("CHAINLIT_AUTH_SECRET", None)
    with pytest.raises(RuntimeError, match="CHAINLIT_AUTH_SECRET"), \
            running_app(env, free_port(), tmp_path / "app.log", timeout=30):
        pass


# --- the pure helpers (hymt_chat/modes/profiles.py) -----------------------------------------------------


def test_profile_name_defaults_to_the_translator():
    assert profile_name(None) == TRANSLATOR_PROFILE
    assert profile_name("nonsense") == TRANSLATOR_PROFILE
    assert profile_name(KIOSK_PROFILE) == KIOSK_PROFILE


def test_agent_state_round_trips_through_thread_metadata():
    conv = Conversation("en", "es")
    saved = {"chat_profile": AGENT_PROFILE, "agent_state": conv.to_dict()}
    for metadata in (saved, json.dumps(saved)):
        back = agent_state_of(metadata)
        assert back is not None and back.to_dict() == conv.to_dict()
    assert agent_state_of(None) is None
    assert agent_state_of("not json") is None
    assert agent_state_of({"agent_state": {"agent_language": "xx-unknown"}}) is None


def test_best_meta_makes_a_downgrade_prominent():
    assert best_meta("English → French · 1.0 s", "Best quality: fused 3.", downgraded=False) \
        .startswith("*English → French")
    shown = best_meta("English → French · 1.0 s", "Best quality unavailable (busy).",
                      downgraded=True)
    assert "**⚠ Best quality unavailable \\(busy\\)\\.**" in shown


# --- the kiosk's server-side idle reset (the backstop of kiosk.js's own) ----------------------


async def _kiosk_session(url: str, events: list[tuple[str, object]]):
    import uuid

    import socketio

    client = socketio.AsyncClient()

    @client.on("*")
    async def record(event, data=None):
        events.append((event, data))

    await client.connect(url, socketio_path="/ws/socket.io", transports=["websocket"],
                         wait_timeout=CONNECT_WAIT,
                         auth={"sessionId": str(uuid.uuid4()), "clientType": "webapp",
                               "userEnv": "{}", "chatProfile": KIOSK_PROFILE})
    await client.emit("connection_successful")
    return client


def _messages(events, text: str) -> list[dict]:
    return [d for e, d in events if e == "new_message" and text in (d.get("output") or "")]


def test_kiosk_server_resets_an_idle_session_without_the_browser(tmp_path):
    """kiosk.js normally resets the page; a tab whose script is blocked is reset by the server
    after the idle time plus a grace (10 s + 2.5 s here)."""
    import asyncio
    import time
    import uuid

    async def scenario(url: str) -> list[tuple[str, object]]:
        events: list[tuple[str, object]] = []
        client = await _kiosk_session(url, events)
        deadline = time.monotonic() + 10
        while not _messages(events, "Welcome") and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        await client.emit("client_message", {"message": {
            "id": str(uuid.uuid4()), "threadId": "", "name": "User", "type": "user_message",
            "output": "Bonjour, où est la gare ?", "createdAt": "2026-01-01T00:00:00Z"},
            "fileReferences": None})
        deadline = time.monotonic() + 60  # due at 12.5 s; a busy host may answer later
        while len(_messages(events, "Welcome")) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        await client.disconnect()
        return events

    with StubModel() as stub:
        env = app_env(HYMT_BASE_URL=stub.base_url, HYMT_API_KEY="k", HYMT_MODEL="stub",
                      HYMT_CACHE_DIR=str(tmp_path / "cache"), HYMT_PORT=str(free_port()),
                      HYMT_KIOSK_IDLE_SECONDS="10")
        with running_app(env, free_port(), tmp_path / "app.log") as url:
            started = time.monotonic()
            events = asyncio.run(scenario(url))
            took = time.monotonic() - started
    assert len(_messages(events, "Welcome")) == 2, events  # the fresh welcome screen
    deleted = {d["id"] for e, d in events if e == "delete_message"}
    first_welcome = _messages(events, "Welcome")[0]["id"]
    picker = _messages(events, "Tap the language")[0]["id"]  # no language chosen yet
    assert {first_welcome, picker} <= deleted  # the screen was wiped, the user's text too
    assert len(deleted) >= 3
    assert 12 <= took < 60  # not before the idle time + grace; well before a minute
