"""The security probe's findings, replayed against the real app: each must fail to get through.

The real app (``chainlit run app.py``) with a stand-in model whose answers are marked ``EN:``
(so a test can count what reached the model); socket.io clients like a browser's, httpx for
HTTP. No vLLM, no browser: what is tested is the app's door.
"""

from __future__ import annotations

import asyncio
import functools
import uuid

import httpx
import socketio

from hymt_chat.service.auth import hash_password
from tests.support.ports import free_port
from tests.support.tabs import Tab, app

LIMITED = "You are sending more than allowed"
PASSWORD = "correct horse battery"
SECRET = "s" * 64


def _login(url: str, name: str, password: str = PASSWORD, **kw) -> httpx.Response:
    return httpx.post(f"{url}/login", data={"username": name, "password": password},
                      timeout=30, **kw)


@functools.cache
def _hash(name: str, password: str = PASSWORD) -> str:
    """One hash per agent and password (a new hash of the same password ends sessions too)."""
    return hash_password(password, n=2**10)


def _agents(*names: str, **passwords: str) -> str:
    return ",".join(f"{n}:{_hash(n, passwords.get(n, PASSWORD))}" for n in names)


# --- one limiter for all work ---------------------------------------------------------------


def test_a_new_session_per_message_does_not_reset_the_limit(tmp_path):
    async def scenario(url: str) -> list[str]:
        outcomes = []
        for i in range(6):
            async with Tab(url) as tab:
                await tab.send(f"Bonjour numéro {i}, ma commande est en retard.")
                outcomes.append(await tab.wait("EN:", LIMITED))
        return outcomes

    with app(tmp_path, HYMT_RATE_LIMIT="3/minute") as (url, stub):
        outcomes = asyncio.run(scenario(url))
        assert len(stub.prompts) == 3
    assert outcomes == ["EN:"] * 3 + [LIMITED] * 3


def test_buttons_draw_from_the_same_limit(tmp_path):
    async def scenario(url: str) -> tuple[list[int], list[str]]:
        async with Tab(url) as tab:
            await tab.send("Hello, this message is already written in English.")
            await tab.wait("already in English")
            action = await tab.action("translate_into")
            codes = []
            for _ in range(4):
                codes.append(httpx.post(f"{url}/project/action", timeout=10, json={
                    "sessionId": tab.session, "action": action}).status_code)
                await asyncio.sleep(0.5)
            await tab.wait(LIMITED)
            return codes, tab.said("EN:")

    with app(tmp_path, HYMT_RATE_LIMIT="3/minute") as (url, stub):
        codes, answers = asyncio.run(scenario(url))
        assert len(stub.prompts) == 2  # message 1 (no model call) + 2 buttons = the 3 allowed
    assert codes == [200] * 4 and len(answers) >= 1


def test_a_file_counts_its_characters_against_the_input_limit(tmp_path):
    async def scenario(url: str) -> str:
        async with Tab(url) as tab:
            big = ("Une phrase de la lettre au client. " * 200).encode()  # 7,000 characters
            upload = httpx.post(f"{url}/project/file", params={"session_id": tab.session},
                                files={"file": ("lettre.txt", big, "text/plain")}, timeout=10)
            assert upload.status_code == 200, upload.text
            # the app's own folder of Chainlit's files, under its cache folder
            [folder] = (tmp_path / "cache" / "chainlit-files").glob(f"*/{tab.session}")
            kept = list(folder.iterdir())
            assert kept and all(p.stat().st_mode & 0o777 == 0o600 for p in kept)  # owner only
            assert folder.stat().st_mode & 0o777 == 0o700
            await tab.client.emit("client_message", {"message": {
                "id": str(uuid.uuid4()), "threadId": "", "name": "User",
                "type": "user_message", "output": "", "createdAt": "2026-01-01T00:00:00Z"},
                "fileReferences": [{"id": upload.json()["id"]}]})
            return await tab.wait("characters long", "EN:")

    with app(tmp_path, HYMT_MAX_INPUT_CHARS="2000") as (url, stub):
        said = asyncio.run(scenario(url))
        assert stub.prompts == []  # refused whole, before any model call
    assert said == "characters long"


# --- origins ------------------------------------------------------------------------------------


def test_another_origin_cannot_read_or_connect_with_the_agents_cookie(tmp_path):
    async def connect(url: str, origin: str, cookie: str) -> bool:
        try:
            async with Tab(url, headers={"Origin": origin, "Cookie": cookie}):
                return True
        except socketio.exceptions.ConnectionError:
            return False

    with app(tmp_path, HYMT_AGENTS=_agents("alice"), CHAINLIT_AUTH_SECRET=SECRET) as (url, _):
        cookies = _login(url, "alice").cookies
        cookie = "; ".join(f"{c.name}={c.value}" for c in cookies.jar)
        evil = f"http://127.0.0.1:{free_port()}"  # another port of the same host
        stolen = httpx.get(f"{url}/project/settings", cookies=cookies,
                           headers={"Origin": evil}, timeout=10)
        own = httpx.get(f"{url}/project/settings", cookies=cookies, headers={"Origin": url},
                        timeout=10)
        preflight = httpx.options(f"{url}/project/threads", timeout=10, headers={
            "Origin": evil, "Access-Control-Request-Method": "POST"})
        ws_evil = asyncio.run(connect(url, "http://evil.example", cookie))
        ws_own = asyncio.run(connect(url, url, cookie))
    assert stolen.status_code == 403 and "access-control-allow-origin" not in stolen.headers
    assert own.status_code == 200
    assert preflight.headers.get("access-control-allow-origin") != evil
    assert ws_evil is False and ws_own is True


# --- sign-in ------------------------------------------------------------------------------------


def test_a_removed_agent_is_signed_out_at_the_next_request(tmp_path):
    async def connects(url: str, cookie: str) -> bool:
        try:
            async with Tab(url, headers={"Cookie": cookie}):
                return True
        except socketio.exceptions.ConnectionError:
            return False

    with app(tmp_path, HYMT_AGENTS=_agents("alice", "bob"),
             CHAINLIT_AUTH_SECRET=SECRET) as (url, _):
        bob = _login(url, "bob")
        alice = _login(url, "alice")
        assert bob.status_code == 200 and alice.status_code == 200
        assert "Max-Age=28800" in bob.headers["set-cookie"]  # hours, not 15 days
    bob_cookie = "; ".join(f"{c.name}={c.value}" for c in bob.cookies.jar)
    with app(tmp_path / "again", HYMT_AGENTS=_agents("alice"),
             CHAINLIT_AUTH_SECRET=SECRET) as (url, _):  # bob removed, app restarted
        bob_read = httpx.get(f"{url}/project/settings", cookies=bob.cookies, timeout=10)
        alice_read = httpx.get(f"{url}/project/settings", cookies=alice.cookies, timeout=10)
        bob_ws = asyncio.run(connects(url, bob_cookie))
    assert bob_read.status_code == 401 and "Max-Age=0" in bob_read.headers.get("set-cookie", "")
    assert alice_read.status_code == 200
    assert bob_ws is False


def test_password_guessing_is_throttled_and_logged(tmp_path):
    with app(tmp_path, HYMT_AGENTS=_agents("alice"), CHAINLIT_AUTH_SECRET=SECRET) as (url, _):
        wrong = [_login(url, "alice", f"guess-{i}").status_code for i in range(5)]
        blocked = _login(url, "alice", "guess-5")
        right_too = _login(url, "alice")  # while throttled, even the right password waits
    log = (tmp_path / "app.log").read_text()
    assert wrong == [401] * 5
    assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) >= 1
    assert right_too.status_code == 429
    assert "failed sign-in of 'alice' from 127.0.0.1" in log
    assert "guess-" not in log  # never the password


# --- client-supplied values ---------------------------------------------------------------------


def test_a_malformed_setting_gets_a_sentence_not_a_python_error(tmp_path):
    async def scenario(url: str) -> list[str]:
        async with Tab(url) as tab:
            await tab.client.emit("chat_settings_change", {"source": {"x": 1}, "target": "en"})
            await tab.wait("is not a language name")
            await tab.send("Hello, this message is already written in English.")
            await tab.wait("already in English")
            button = await tab.action("translate_into")
            for payload in ({"key": {"x": 1}, "target": "fr"}, {"key": "nope", "target": "fr"}):
                httpx.post(f"{url}/project/action", timeout=10, json={
                    "sessionId": tab.session, "action": {**button, "payload": payload}})
            await tab.wait("no longer kept")
            return [text for e, d in tab.events if isinstance(d, dict)
                    for text in [str(d.get("output") or "")]]

    with app(tmp_path) as (url, _):
        said = asyncio.run(scenario(url))
    assert not [s for s in said if "object has no attribute" in s or "Traceback" in s]


def test_a_forged_kiosk_button_is_refused_with_a_sentence(tmp_path):
    from hymt_chat.modes.kiosk import KIOSK_PROFILE

    async def scenario(url: str) -> str:
        async with Tab(url, profile=KIOSK_PROFILE) as tab:
            await tab.wait("Welcome")
            button = await tab.action("kiosk_target")
            forged = {**button, "payload": {"target": {"<script>": 1}}}
            response = httpx.post(f"{url}/project/action", timeout=10,
                                  json={"sessionId": tab.session, "action": forged})
            assert response.status_code == 200
            return await tab.wait("Unknown language", "Traceback")

    with app(tmp_path) as (url, stub):
        assert asyncio.run(scenario(url)) == "Unknown language"
        assert stub.prompts == []


# --- sizes and memory ---------------------------------------------------------------------------


def _rss_mb(port: int) -> float:
    import subprocess

    pids = subprocess.run(["pgrep", "-f", f"port {port}"], capture_output=True,
                          text=True).stdout.split()
    with open(f"/proc/{pids[-1]}/status") as status:
        line = next(x for x in status if x.startswith("VmRSS"))
    return int(line.split()[1]) / 1024


def test_the_memory_of_closed_sessions_is_released(tmp_path):
    """200 tabs each paste 100,000 characters, get the answer and close. Chainlit keeps each
    closed session (with its texts for buttons and its message list) for an hour unless the app
    releases it: RSS would grow ~27 MB per 50 tabs. Released, it grows a few MB per 50 after
    the first 50 (allocator warm-up). The bound leaves room for noise, not for a leak."""
    async def tab(url: str, i: int) -> bool:
        async with Tab(url) as t:
            await t.send(f"Bonjour {i} " + "é" * 100_000)
            return await t.wait("EN:", timeout=60) == "EN:"

    async def scenario(url: str, port: int) -> list[float]:
        marks = []
        for batch in range(4):
            assert all([await tab(url, batch * 50 + i) for i in range(50)])
            await asyncio.sleep(1)
            marks.append(_rss_mb(port))
        return marks

    # every tab comes from 127.0.0.1: one caller, 200 pastes of ~20 model calls each
    # HYMT_RECONNECT_GRACE=0: a closed tab is let go at once (else after the grace a
    # reconnecting tab gets), so each mark counts every tab closed before it.
    with app(tmp_path, HYMT_RATE_LIMIT="", HYMT_RATE_LIMIT_CHARS="",
             HYMT_RATE_LIMIT_CALLS="", HYMT_RECONNECT_GRACE="0") as (url, _):
        marks = asyncio.run(scenario(url, int(url.rsplit(":", 1)[1])))
    growth = marks[-1] - marks[0]  # over the last 150 tabs
    print(f"RSS after each 50 tabs: {[round(m) for m in marks]} MB; +{growth:.0f} MB")
    assert growth < 40, marks  # kept sessions would add ~80 MB here

