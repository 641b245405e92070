"""A security probe's findings, replayed against the real app: each must fail to get through.
The real app (``chainlit run app.py``) on the stand-in model of ``tests/support/tabs.py``
(answers marked ``EN:``, its calls counted), socket.io clients like a browser's, plain
websockets, httpx; a real Redis for the shared sign-in throttle. Three app configurations,
each started once (and the agents' one restarted twice).

The API's list cap, the event loop and hang-ups: ``tests/test_api_limits.py``.
"""

from __future__ import annotations

import asyncio
import json
import uuid

import aiohttp
import httpx

from hymt_chat.service.auth import hash_password
from tests.support.redis_server import redis_server
from tests.support.tabs import Tab, app, open_room, room_events, room_ws_url

AGENT = "Support agent"
LIMITED = "You are sending more than allowed"
PASSWORD = "correct horse battery"
SECRET = "s" * 64
TOOLS, HELP = "https://tools.example", "https://help.example"
FRENCH = "Bonjour, ma commande est toujours en retard."


def _ws(url: str, path: str) -> str:
    return url.replace("http://", "ws://") + path


async def _closed(ws: aiohttp.ClientWebSocketResponse) -> tuple[int | None, str]:
    """How the app closed *ws*: (code, reason)."""
    message = await asyncio.wait_for(ws.receive(), 30)
    while message.type == aiohttp.WSMsgType.TEXT:  # events before the close
        message = await asyncio.wait_for(ws.receive(), 30)
    assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED), message
    return ws.close_code, str(message.extra or "")


async def _counter_says(http: aiohttp.ClientSession, url: str, text: str,
                        headers: dict[str, str] | None = None) -> dict:
    async with http.ws_connect(_ws(url, "/counter/ws"), headers=headers or {}) as ws:
        await ws.send_json({"a": "fr", "b": "en"})
        await ws.send_json({"type": "say", "side": "a", "text": text})
        return json.loads((await asyncio.wait_for(ws.receive(), 30)).data)


async def _send_file(tab: Tab, url: str, name: str, data: bytes) -> None:
    upload = httpx.post(f"{url}/project/file", params={"session_id": tab.session},
                        files={"file": (name, data, "application/json")}, timeout=30)
    assert upload.status_code == 200, upload.text
    await tab.client.emit("client_message", {"message": {
        "id": str(uuid.uuid4()), "threadId": "", "name": "User", "type": "user_message",
        "output": "", "createdAt": "2026-01-01T00:00:00Z"},
        "fileReferences": [{"id": upload.json()["id"]}]})


# --- cost, rooms, the counter, origins --------------------------------------------------------


def test_work_is_charged_what_it_costs_and_every_door_draws_from_the_chats_allowance(tmp_path):
    """A JSON file of 1,000 values costs 1,000 model calls (refused whole over 999); a room's
    guest and the counter draw from the same allowance as the chat (not one each)."""
    values = json.dumps({f"k{i}": f"Valeur {i}" for i in range(1000)}).encode()

    async def scenario(url: str) -> tuple[str, dict, dict, dict]:
        async with Tab(url) as translator:
            await _send_file(translator, url, "strings.json", values)
            refused = await translator.wait("1,000 model calls", "EN:")
        async with Tab(url, profile=AGENT) as agent, aiohttp.ClientSession() as http:
            await agent.send(FRENCH)  # 1 of 3 jobs
            await agent.wait("EN:")
            first = await open_room(agent)
            async with http.ws_connect(room_ws_url(url, first)) as guest:
                await guest.send_json({"type": "hello", "guest": "a" * 32})
                await room_events(guest, "welcome")
                await guest.send_json({"type": "say", "text": FRENCH})  # 2 of 3
                in_room = (await room_events(guest, "message"))[-1]
            counter = await _counter_says(http, url, FRENCH)  # 3 of 3
            await agent.send("/room close")
            await agent.wait("The room is closed")
            second = await open_room(agent)  # a fresh room is no fresh allowance
            async with http.ws_connect(room_ws_url(url, second)) as guest:
                await guest.send_json({"type": "hello", "guest": "b" * 32})
                await room_events(guest, "welcome")
                await guest.send_json({"type": "say", "text": FRENCH})
                over = (await room_events(guest, "error"))[-1]
            return refused, in_room, counter, over

    with app(tmp_path, HYMT_RATE_LIMIT="3/minute", HYMT_RATE_LIMIT_CALLS="999/hour") as (
            url, stub):
        refused, in_room, counter, over = asyncio.run(scenario(url))
        calls = [p.split("\n\n", 1)[-1] for p in stub.prompts]
    assert refused == "1,000 model calls"  # "This is 1,000 model calls; … at most 999 …"
    assert in_room["message"]["translation"].startswith("EN:")
    assert counter["type"] == "message" and counter["translation"].startswith("EN:")
    assert LIMITED in over["text"]
    # The message, the guest's and the counter's: nothing of the file. (The agent mode checks
    # the two customer messages by translating them back: two calls more, of theirs.)
    assert calls.count(FRENCH) == 3 and len(calls) == 5, calls


def test_the_apis_origins_are_not_the_signed_in_apps(tmp_path):
    def preflight(url: str, path: str, origin: str) -> httpx.Response:
        return httpx.options(url + path, timeout=10, headers={
            "Origin": origin, "Access-Control-Request-Method": "POST"})

    with app(tmp_path, HYMT_API_OPEN_LOCAL="1", HYMT_API_ORIGINS=TOOLS,
             HYMT_ALLOWED_ORIGINS=HELP) as (url, _):
        api_from_tools = preflight(url, "/deepl/v2/translate", TOOLS)
        api_from_help = preflight(url, "/deepl/v2/translate", HELP)
        app_from_tools = httpx.get(f"{url}/project/settings", headers={"Origin": TOOLS}, timeout=30)
        app_from_help = httpx.get(f"{url}/project/settings", headers={"Origin": HELP}, timeout=30)
        languages = httpx.get(f"{url}/libretranslate/languages", headers={"Origin": TOOLS},
                              timeout=30)
    assert api_from_tools.status_code == 200
    assert api_from_tools.headers["access-control-allow-origin"] == TOOLS
    assert "access-control-allow-credentials" not in api_from_tools.headers  # keys, no cookies
    assert languages.headers["access-control-allow-origin"] == "*"  # LibreTranslate: any origin
    assert api_from_help.status_code == 403  # the app's origin is not the API's
    assert app_from_tools.status_code == 403  # …and the API's cannot read the app
    assert app_from_help.status_code == 200


# --- proxies, host names, frames, hellos, errors, cookies -------------------------------------


def test_the_smaller_doors(tmp_path):
    async def scenario(url: str, stub) -> dict:
        seen: dict = {}
        outcomes = []
        for i in range(4):  # a fresh X-Forwarded-For each time, from loopback
            async with Tab(url, headers={"X-Forwarded-For": f"6.6.6.{i}"}) as tab:
                await tab.send(f"{FRENCH} ({i})")
                outcomes.append(await tab.wait("EN:", LIMITED))
        seen["forwarded"] = outcomes
        async with Tab(url, profile=AGENT) as agent, aiohttp.ClientSession() as http:
            token = await open_room(agent)
            seen["hellos"] = []
            for bad in ("[1, 2]", '"hello"', b"\x00\x01", "{not json"):
                async with http.ws_connect(room_ws_url(url, token)) as guest:
                    await (guest.send_bytes(bad) if isinstance(bad, bytes)
                           else guest.send_str(bad))
                    seen["hellos"].append(await _closed(guest))
            seen["counter"] = []
            for bad in ("[1, 2]", b"\x00\x01", "{not json"):
                async with http.ws_connect(_ws(url, "/counter/ws")) as counter:
                    await (counter.send_bytes(bad) if isinstance(bad, bytes)
                           else counter.send_str(bad))
                    seen["counter"].append(await _closed(counter))
            nine_mb = "4" + "x" * (9 << 20)
            for path in ("/counter/ws", "/ws/socket.io/?EIO=4&transport=websocket"):
                async with http.ws_connect(_ws(url, path), max_msg_size=0) as ws:
                    await ws.send_str(nine_mb)
                    seen[path] = await _closed(ws)
        stub.server.shutdown()  # the model goes away: the API's error must not say where it was
        stub.server.server_close()
        seen["down"] = [
            httpx.post(f"{url}/libretranslate/translate", timeout=60,
                       json={"q": FRENCH, "source": "fr", "target": "en"}),
            httpx.post(f"{url}/deepl/v2/translate", timeout=60,
                       json={"text": [FRENCH], "source_lang": "FR", "target_lang": "EN-US"})]
        return seen

    with app(tmp_path, HYMT_RATE_LIMIT="3/minute", HYMT_API_OPEN_LOCAL="1",
             HYMT_RETRIES="false", HYMT_DEADLINE="5") as (url, stub):
        port = str(stub.port)
        rebinding = httpx.get(f"{url}/metrics", headers={"Host": "rebind.evil.example"}, timeout=30)
        own = httpx.get(f"{url}/metrics", headers={"Host": "localhost"}, timeout=30)
        planted = httpx.get(f"{url}/room/anything?r=app2", follow_redirects=False, timeout=30)
        seen = asyncio.run(scenario(url, stub))
    log = (tmp_path / "app.log").read_text()
    assert seen["forwarded"] == ["EN:"] * 3 + [LIMITED]  # a spoofed address is no new allowance
    assert rebinding.status_code == 421 and own.status_code == 200
    # A planted ?r= sets no affinity cookie (the page's own client cookie is another matter).
    assert planted.status_code == 404 and not [
        c for c in planted.headers.get_list("set-cookie") if c.startswith("hymt-route=")]
    assert all(code == 4400 and "Say hello first" in why for code, why in seen["hellos"])
    assert [code for code, _ in seen["counter"]] == [1003, 1003, 1007]
    assert "binary" in seen["counter"][1][1] and "not JSON" in seen["counter"][2][1]
    for path in ("/counter/ws", "/ws/socket.io/?EIO=4&transport=websocket"):
        code, why = seen[path]
        assert code == 1009 and "Message too big" in why, (path, code, why)
    for down in seen["down"]:
        assert down.status_code >= 500 and "not reachable" in down.text
        assert port not in down.text and "127.0.0.1" not in down.text, down.text
    assert "Traceback" not in log


# --- sign-in: the counter, the throttle in Redis, a changed password --------------------------


def _agents(**passwords: str) -> str:
    return ",".join(f"{name}:{hash_password(pw, n=2**10)}" for name, pw in passwords.items())


def _cookie(response: httpx.Response) -> str:
    return "; ".join(f"{c.name}={c.value}" for c in response.cookies.jar)


async def _tries(url: str, name: str, count: int) -> list[int]:
    """*count* wrong passwords for *name* at once."""
    async with httpx.AsyncClient(timeout=120) as http:
        answers = await asyncio.gather(*[http.post(f"{url}/login", data={
            "username": name, "password": f"guess-{i}"}) for i in range(count)])
    return [a.status_code for a in answers]


def test_sign_in_covers_the_counter_every_form_of_login_and_a_changed_password(tmp_path):
    async def counter(url: str, cookie: str | None) -> tuple[int | None, list[dict]]:
        headers = {"Cookie": cookie} if cookie else {}
        got = []
        async with aiohttp.ClientSession() as http:
            try:
                async with http.ws_connect(_ws(url, "/counter/ws"), headers=headers) as ws:
                    await ws.send_json({"a": "fr", "b": "en"})
                    for i in range(2):
                        await ws.send_json({"type": "say", "side": "a", "text": f"{FRENCH} {i}"})
                        got.append(json.loads((await asyncio.wait_for(ws.receive(), 30)).data))
            except aiohttp.WSServerHandshakeError as err:
                return err.status, got
        return None, got

    async def chat_then_counter(url: str, cookie: str) -> tuple[str, list[dict]]:
        async with Tab(url, headers={"Cookie": cookie}) as tab:
            await tab.send(FRENCH)
            said = await tab.wait("EN:", LIMITED)
        return said, (await counter(url, cookie))[1]

    first = _agents(alice=PASSWORD, bob=PASSWORD)
    with redis_server(tmp_path / "redis") as redis:
        env = {"HYMT_REDIS_URL": redis, "CHAINLIT_AUTH_SECRET": SECRET,
               "HYMT_RATE_LIMIT": "2/minute"}
        with app(tmp_path / "one", HYMT_AGENTS=first, **env) as (url, _):
            alice = httpx.post(f"{url}/login", data={"username": "alice", "password": PASSWORD},
                               timeout=30)
            assert alice.status_code == 200
            page = httpx.get(f"{url}/counter", timeout=30)
            anonymous = asyncio.run(counter(url, None))
            signed_page = httpx.get(f"{url}/counter", cookies=alice.cookies, timeout=30)
            said, at_counter = asyncio.run(chat_then_counter(url, _cookie(alice)))
            multipart = [httpx.post(f"{url}/login", files={
                "username": (None, "bob"), "password": (None, f"m{i}")}, timeout=30).status_code
                for i in range(5)]
            as_json = httpx.post(f"{url}/login", json={"username": "bob", "password": "j"},
                                 timeout=30)
            at_once = asyncio.run(_tries(url, "carol", 30))
            spoofed = httpx.post(f"{url}/login", headers={"X-Forwarded-For": "6.6.6.6"},
                                 data={"username": "dave", "password": "x"}, timeout=30)
        with app(tmp_path / "two", HYMT_AGENTS=first, **env) as (url, _):  # restarted
            bob_after_restart = httpx.post(f"{url}/login",
                                           data={"username": "bob", "password": PASSWORD},
                                           timeout=30)
        changed = _agents(alice="a new password for alice", bob=PASSWORD)
        with app(tmp_path / "three", HYMT_AGENTS=changed, **env) as (url, _):
            old_session = httpx.get(f"{url}/project/settings", cookies=alice.cookies, timeout=30)
    log = (tmp_path / "one" / "app.log").read_text()
    assert page.status_code == 401 and anonymous[0] == 403  # the chat says 401 too
    assert signed_page.status_code == 200
    assert said == "EN:"  # alice's chat message: 1 of 2…
    assert at_counter[0]["type"] == "message"  # …the counter's first: 2 of 2, the same allowance
    assert at_counter[1]["type"] == "error" and LIMITED in at_counter[1]["text"]
    assert multipart == [401] * 5 and as_json.status_code == 429  # every form is counted
    assert "failed sign-in of 'bob' from 127.0.0.1" in log  # the name, from multipart too
    assert at_once.count(401) == 5 and at_once.count(429) == 25  # not all 30 checked
    assert log.count("failed sign-in of 'carol'") == 5
    assert spoofed.status_code == 401 and "failed sign-in of 'dave' from 127.0.0.1" in log
    assert "6.6.6.6" not in log
    assert bob_after_restart.status_code == 429  # the count lives in Redis
    assert old_session.status_code == 401  # the password changed: the session ended
