"""A restart keeps the conversations: the real app (``chainlit run app.py``) is stopped and
started again on the same cache folder (its SQLite history and conversations database), and
everything is checked through its own HTTP and socket surface — the room's link, the guest's
socket and its history, the signed-in agent's next tab, the desk's queue and inbox.

The model is the stand-in of ``tests/support/tabs.py`` (answers marked ``EN:``)."""

from __future__ import annotations

import functools

import aiohttp
import httpx

from hymt_chat.modes.wording import escape_markdown as md
from hymt_chat.service.auth import hash_password
from tests.support.tabs import Tab, app, open_room, room_events, room_ws_url

AGENT = "Support agent"
PASSWORD = "correct horse battery"
GUEST, VISITOR = "c" * 32, "d" * 32


@functools.cache
def _env() -> dict[str, str]:
    return {"HYMT_AGENTS": f"alice:{hash_password(PASSWORD, n=2**10)}",
            "CHAINLIT_AUTH_SECRET": "s" * 64}


def _cookie(url: str) -> str:
    answer = httpx.post(f"{url}/login", data={"username": "alice", "password": PASSWORD},
                        timeout=30)
    assert answer.status_code == 200, answer.text
    return "; ".join(f"{c.name}={c.value}" for c in answer.cookies.jar)


async def _say(ws: aiohttp.ClientWebSocketResponse, text: str, ref: str) -> None:
    """What the guest's page sends: its text and its id for it (public guest.html)."""
    await ws.send_json({"type": "say", "text": text, "id": ref})


async def test_a_restart_keeps_the_room_link_history_agent_and_desk(tmp_path):
    with app(tmp_path, **_env()) as (url, _):
        desk = httpx.post(f"{url}/desk/start", timeout=30, json={
            "language": "ja", "text": "荷物がまだ届きません。", "guest": VISITOR})
        assert desk.status_code == 200, desk.text
        async with Tab(url, {"Cookie": _cookie(url)}, profile=AGENT) as alice, \
                aiohttp.ClientSession() as http:
            token = await open_room(alice)
            async with http.ws_connect(room_ws_url(url, token)) as ws:
                await ws.send_json({"type": "hello", "guest": GUEST, "language": "es"})
                await room_events(ws, "welcome")
                await _say(ws, "Hola, mi pedido no ha llegado.", "page-msg-01")
                await room_events(ws, "message", tab=alice)
                await alice.send("Your order ships today.")
                sent = (await room_events(ws, "message", tab=alice))[-1]["message"]
                assert sent["who"] == "agent"
    # Stopped (SIGTERM, as a deploy does) and started again on the same cache folder.
    with app(tmp_path, **_env()) as (url, _):
        page = httpx.get(f"{url}/room/{token}", timeout=30)
        assert page.status_code == 200, page.text
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(room_ws_url(url, token)) as ws:
                await ws.send_json({"type": "hello", "guest": GUEST})
                welcome = (await room_events(ws, "welcome"))[-1]
                assert [(m["who"], m["original"]) for m in welcome["history"]] == [
                    ("guest", "Hola, mi pedido no ha llegado."),
                    ("agent", "Your order ships today.")]
                assert welcome["guest_language"] == "es"
                # The page sends again what it has not seen come back, then a new message:
                # the first is taken once already, the second arrives, numbered next.
                await _say(ws, "Hola, mi pedido no ha llegado.", "page-msg-01")
                await _say(ws, "¿Sigue ahí?", "page-msg-02")
                new = (await room_events(ws, "message"))[-1]["message"]
                assert (new["seq"], new["ref"]) == (3, "page-msg-02")
                assert new["translation"] == "EN:¿Sigue ahí?"
            cookie = _cookie(url)
            async with Tab(url, {"Cookie": cookie}, profile=AGENT) as alice:
                await alice.wait("Your room is still open")
                await alice.wait(md("¿Sigue ahí?"))  # what the guest said meanwhile
                assert await open_room(alice) == token  # /room: the same room's link
                await alice.send("/desk")
                await alice.wait(md(f"#{desk.json()['number']} · Japanese"), "| Waiting |")
                await alice.send(f"/desk take {desk.json()['number']}")
                await alice.wait(md("荷物がまだ届きません"))  # the visitor's first message
