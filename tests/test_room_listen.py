"""Speech out on the visitors' pages, over the wire against the real app: a room guest's
Listen asks the server to read an agent's message by its number, and gets it as a WAV in the
server's voice (espeak-ng); the server reads only what it sent to that room, one reading at a
time, and nothing with voice turned off. The counter's Listen does the same for its own
answers. The model is the ``EN:`` stand-in of ``tests/support/tabs.py``."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import re
import wave
from typing import Any

import aiohttp
import httpx
import pytest

from tests.support.tabs import Tab, app, open_room, room_events, room_ws_url

AGENT = "Support agent"
GUEST, OTHER_GUEST = "a1" * 16, "b2" * 16
REPLY = "Your order ships today, and it should arrive on Monday."


def _config(url: str, token: str) -> dict[str, Any]:
    page = httpx.get(f"{url}/room/{token}", headers={"Accept-Language": "es"}, timeout=30)
    found = re.search(r'<script[^>]* id="room-config"[^>]*>(.*?)</script>', page.text)
    assert found, page.text[:300]
    return dict(json.loads(found.group(1)))


def _seconds(frame: dict[str, Any]) -> float:
    assert frame["type"] == "sound" and frame["mime"] == "audio/wav", frame
    with wave.open(io.BytesIO(base64.b64decode(frame["audio"]))) as read:
        return read.getnframes() / read.getframerate()


async def _answer(ws: aiohttp.ClientWebSocketResponse) -> dict[str, Any]:
    """The next ``sound`` or ``error`` frame (other events pass by)."""
    while True:
        event = json.loads((await asyncio.wait_for(ws.receive(), 60)).data)
        if event["type"] in ("sound", "error"):
            return dict(event)


async def _refused(ws: aiohttp.ClientWebSocketResponse, ref: object) -> dict[str, Any]:
    await ws.send_json({"type": "speak", "ref": ref})
    while True:
        event = json.loads((await asyncio.wait_for(ws.receive(), 60)).data)
        assert event["type"] != "sound", event
        if event["type"] == "error":
            assert event["key"] == "listen_unavailable" and event["ref"] == ref, event
            return dict(event)


async def _joined(http: aiohttp.ClientSession, url: str, token: str,
                  guest: str) -> aiohttp.ClientWebSocketResponse:
    ws = await http.ws_connect(room_ws_url(url, token), max_msg_size=0)
    await ws.send_json({"type": "hello", "guest": guest, "language": "es"})
    await room_events(ws, "welcome")
    return ws


async def test_a_guest_listens_to_the_agents_reply_and_nothing_else(tmp_path):
    with app(tmp_path) as (url, _):
        async with Tab(url, profile=AGENT) as agent, Tab(url, profile=AGENT) as other, \
                aiohttp.ClientSession() as http:
            token, elsewhere = await open_room(agent), await open_room(other)
            assert {"es", "en"} <= set(_config(url, token)["server_voices"])
            ws = await _joined(http, url, token, GUEST)
            away = await _joined(http, url, elsewhere, OTHER_GUEST)
            await ws.send_json({"type": "say", "text": "Hola, ¿dónde está mi pedido?"})
            mine = (await room_events(ws, "message", tab=agent))[-1]["message"]
            await agent.wait("Customer")
            await agent.send(REPLY)
            reply = (await room_events(ws, "message", tab=agent))[-1]["message"]
            assert reply["who"] == "agent" and reply["target"] == "es"
            # The other room has an agent's message numbered past this room's last one.
            await away.send_json({"type": "say", "text": "Hola."})
            await room_events(away, "message", tab=other)
            await other.wait("Customer")
            for text in ("First.", "Second."):
                await other.send(text)
                theirs = (await room_events(away, "message", tab=other))[-1]["message"]
            assert theirs["who"] == "agent" and theirs["seq"] > reply["seq"]

            await ws.send_json({"type": "speak", "ref": reply["seq"]})
            sound = await _answer(ws)
            assert sound["ref"] == reply["seq"] and _seconds(sound) > 0.3
            # Only the agent's messages of this room, by number: never the page's own text.
            for ref in (mine["seq"], theirs["seq"], 999, str(reply["seq"]), None, True):
                await _refused(ws, ref)
            await _refused(ws, {"text": "read this"})
            # One reading at a time: an ask while one is under way is refused, not queued.
            await ws.send_json({"type": "speak", "ref": reply["seq"]})
            await ws.send_json({"type": "speak", "ref": reply["seq"]})
            answers = [await _answer(ws), await _answer(ws)]
            assert sorted(a["type"] for a in answers) == ["error", "sound"], answers
            await ws.close()
            await away.close()

        async with CounterSocket(url) as counter:
            await counter.send_json({"type": "hello", "a": "en", "b": "es"})
            await counter.send_json({"type": "say", "side": "a", "text": REPLY})
            said = json.loads((await asyncio.wait_for(counter.receive(), 60)).data)
            assert said["type"] == "message" and isinstance(said["ref"], int), said
            await counter.send_json({"type": "speak", "side": "b", "ref": said["ref"]})
            heard = json.loads((await asyncio.wait_for(counter.receive(), 60)).data)
            assert heard["side"] == "b" and _seconds(heard) > 0.3
            await counter.send_json({"type": "speak", "side": "b", "ref": said["ref"] + 1})
            refused = json.loads((await asyncio.wait_for(counter.receive(), 60)).data)
            assert refused["type"] == "error" and refused["key"] == "listen_unavailable"


class CounterSocket:
    """The counter's socket, with its own session."""

    def __init__(self, url: str) -> None:
        self.url = url.replace("http://", "ws://") + "/counter/ws"

    async def __aenter__(self) -> aiohttp.ClientWebSocketResponse:
        self.http = aiohttp.ClientSession()
        self.ws = await self.http.ws_connect(self.url, max_msg_size=0)
        return self.ws

    async def __aexit__(self, *_: object) -> None:
        await self.ws.close()
        await self.http.close()


async def test_voice_off_reads_nothing_aloud(tmp_path):
    with app(tmp_path, HYMT_SPEECH="false") as (url, _):
        async with Tab(url, profile=AGENT) as agent, aiohttp.ClientSession() as http:
            token = await open_room(agent)
            assert _config(url, token)["server_voices"] == []
            ws = await _joined(http, url, token, GUEST)
            await agent.wait("Customer")
            await agent.send(REPLY)
            reply = (await room_events(ws, "message", tab=agent))[-1]["message"]
            await _refused(ws, reply["seq"])
            await ws.close()


@pytest.mark.slow
def test_the_listen_button_plays_the_servers_voice_on_a_phone(tmp_path):
    """Debian's Chromium has no speechSynthesis voices: Listen goes to the server, and the
    message's <audio> holds the WAV."""
    from playwright.sync_api import expect, sync_playwright

    from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, new_page, open_profile, send

    with app(tmp_path) as (url, _), sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        agent = open_profile(browser, url, AGENT, "Agent: English ⇄ Customer: not known")
        send(agent, "/room")
        link = agent.locator("a[href*='/room/']").first
        expect(link).to_be_visible()
        room = link.get_attribute("href")
        assert room is not None
        phone = new_page(browser.new_context(locale="es-ES",
                                             viewport={"width": 390, "height": 844}))
        phone.goto(room)
        expect(phone.locator("#language")).to_have_value("es")
        assert phone.evaluate("speechSynthesis.getVoices().length") == 0
        send(agent, REPLY)
        message = phone.locator(".msg.agent").last
        expect(message.locator(".text")).to_have_text(f"EN:{REPLY}", timeout=60_000)
        listen = message.get_by_role("button", name="Escuchar", exact=True)
        expect(listen).to_be_visible()
        box = listen.bounding_box()
        assert box is not None and box["width"] >= 44 and box["height"] >= 44
        listen.click()
        expect(message.locator("audio")).to_have_count(1)
        phone.wait_for_function(
            "() => { const a = document.querySelector('.msg.agent audio');"
            " return a && a.duration > 0 && isFinite(a.duration); }", timeout=30_000)
        browser.close()
