"""Rooms over the wire, against the real app: the agent's socket.io tab opens a room, a guest's
websocket joins it; a link that leads nowhere, a foreign page and a guest's "commands" get
nowhere. The model is the stand-in of ``tests/support/tabs.py`` (answers marked ``EN:``)."""

from __future__ import annotations

import asyncio
import base64
import io

import aiohttp
import httpx
import pytest

from tests.support import pdf_files
from tests.support.gate import Gate
from tests.support.tabs import Tab, app, marked, open_room, room_events, room_ws_url

AGENT = "Support agent"
GUEST = "c" * 32
LAPTOP = "d" * 32  # the same customer's other device


async def test_a_room_opened_before_the_chat_started_carries_the_agents_messages(tmp_path):
    """Chainlit starts the chat after ``connection_successful`` has emitted three events, each
    socket event in a task of its own: a /room typed at once opened the tab's session first,
    and the chat's start replaced it, so the agent's next message went to a session with no
    room and never reached the guest (one CI run of the test above failed exactly so). The
    order is made certain here: the message before the chat's start."""
    with app(tmp_path) as (url, stub):
        async with Tab(url, profile=AGENT, greet=False) as agent, \
                aiohttp.ClientSession() as http:
            opening = asyncio.create_task(open_room(agent))
            await asyncio.sleep(0)  # /room is on the wire first
            await agent.client.emit("connection_successful")
            token = await opening
            await agent.wait("Customer")  # the chat started: its settings and greeting
            async with http.ws_connect(room_ws_url(url, token)) as ws:
                await ws.send_json({"type": "hello", "guest": GUEST, "language": "es"})
                await room_events(ws, "welcome")
                await agent.send("Your order ships today.")
                sent = (await room_events(ws, "message", tab=agent))[-1]["message"]
                assert sent["who"] == "agent" and sent["original"] == "Your order ships today."


async def test_a_guest_joins_and_both_sides_read_each_other(tmp_path):
    with app(tmp_path) as (url, stub):
        async with Tab(url, profile=AGENT) as agent, aiohttp.ClientSession() as http:
            token = await open_room(agent)
            page = httpx.get(f"{url}/room/{token}", headers={"Accept-Language": "es-ES,es"},
                             timeout=30)
            assert page.status_code == 200 and 'lang="es"' in page.text
            assert "Su idioma" in page.text and "nonce=" in page.text  # the page's CSP holds
            async with http.ws_connect(room_ws_url(url, token)) as ws:
                await ws.send_json({"type": "hello", "guest": GUEST, "language": "es"})
                welcome = await room_events(ws, "welcome")
                assert welcome[-1]["history"] == []
                await ws.send_json({"type": "say", "text": "/glossary add pedido = order"})
                got = await room_events(ws, "message")
                assert got[-1]["message"]["translation"] == "EN:/glossary add pedido = order"
                await agent.wait("Customer")
                await agent.send("/glossary list")
                await agent.wait("empty", "no terms", "No terms")  # the guest added nothing
                await agent.send("Your order ships today.")
                sent = (await room_events(ws, "message", tab=agent))[-1]["message"]
                assert sent["who"] == "agent" and sent["translation"].startswith("EN:")
                assert sent["target"] == "es"
            async with http.ws_connect(room_ws_url(url, token)) as again:  # a reload
                await again.send_json({"type": "hello", "guest": GUEST})
                history = (await room_events(again, "welcome"))[-1]["history"]
                assert [m["who"] for m in history] == ["guest", "agent"]
                await _a_photo_is_the_guests_message(again, agent, stub)
            await agent.send("/room close")
            await agent.wait("The room is closed")
            closed = httpx.get(f"{url}/room/{token}", timeout=30)
            assert closed.status_code == 410 and "closed" in closed.text


async def _a_photo_is_the_guests_message(ws, agent, stub) -> None:
    """The guest page's photo button sends ``{"type": "picture", "name", "data": base64}``: the
    text Tesseract (the real part, once here) finds is the guest's message, translated for the
    agent; a picture that cannot be read is said to the guest alone, nothing sent."""
    await ws.send_json({"type": "picture", "name": "bomb.png",
                        "data": base64.b64encode(pdf_files.pixel_bomb()).decode()})
    refused = (await room_events(ws, "error"))[-1]
    assert refused["key"] == "photo_refused" and "pixel bomb" in refused["text"]
    buf = io.BytesIO()
    pdf_files.sign(["Bitte nicht rauchen"], (900, 200)).save(buf, "PNG")
    await ws.send_json({"type": "picture", "name": "sign.png",
                        "data": base64.b64encode(buf.getvalue()).decode()})
    said = (await room_events(ws, "message", tab=agent))[-1]["message"]
    assert said["who"] == "guest" and said["original"] == "Bitte nicht rauchen"
    assert said["translation"] == "EN:Bitte nicht rauchen"
    await agent.wait("EN:Bitte nicht rauchen")
    # The bomb sent nothing: the sign's text went out once (and its translation, once more,
    # for the check's back-translation).
    assert sum(p.split("\n\n", 1)[-1] == "Bitte nicht rauchen" for p in stub.prompts) == 1


@pytest.mark.parametrize("token", ["nope", "A" * 32])
async def test_a_link_that_leads_nowhere_says_so(tmp_path, token):
    with app(tmp_path) as (url, _):
        page = httpx.get(f"{url}/room/{token}", timeout=30)
        assert page.status_code == 404 and "not valid" in page.text
        async with aiohttp.ClientSession() as http:
            async with http.ws_connect(room_ws_url(url, token)) as ws:
                message = await asyncio.wait_for(ws.receive(), 10)
                assert message.type == aiohttp.WSMsgType.CLOSE and message.data == 4404


async def test_a_foreign_page_and_a_silent_socket_cannot_join(tmp_path):
    with app(tmp_path) as (url, _):
        async with Tab(url, profile=AGENT) as agent, aiohttp.ClientSession() as http:
            token = await open_room(agent)
            with pytest.raises(aiohttp.WSServerHandshakeError):
                await http.ws_connect(room_ws_url(url, token),
                                      headers={"Origin": "http://evil.example"})
            async with http.ws_connect(room_ws_url(url, token)) as silent:
                await silent.send_json({"type": "say", "text": "no hello"})
                message = await asyncio.wait_for(silent.receive(), 10)
                assert message.type == aiohttp.WSMsgType.CLOSE and message.data == 4400


async def _closed(ws: aiohttp.ClientWebSocketResponse) -> aiohttp.WSMessage:
    """The socket's next frame, which must be its close."""
    message = await asyncio.wait_for(ws.receive(), 30)
    assert message.type == aiohttp.WSMsgType.CLOSE, message
    return message


async def test_the_customer_moves_to_another_device_and_the_conversation_follows(tmp_path):
    """The link opened on a second device (another key) takes the conversation over: it gets
    the history and can write, the first device's socket is told "moved" and closed, and the
    agent's tab reads one line. The first page reconnecting by itself ("resume") is told the
    same and takes nothing; opened again (a reload), it takes the conversation back. /room
    shows the same link, which still works."""
    with app(tmp_path) as (url, _):
        async with Tab(url, profile=AGENT) as agent, aiohttp.ClientSession() as http:
            token = await open_room(agent)
            async with http.ws_connect(room_ws_url(url, token)) as phone:
                await phone.send_json({"type": "hello", "guest": GUEST, "language": "es"})
                await room_events(phone, "welcome")
                await phone.send_json({"type": "say", "text": "Hola desde el móvil."})
                await room_events(phone, "message", tab=agent)
                await agent.wait("EN:Hola desde el móvil.")
                async with http.ws_connect(room_ws_url(url, token)) as laptop:
                    await laptop.send_json({"type": "hello", "guest": LAPTOP})
                    welcome = (await room_events(laptop, "welcome"))[-1]
                    assert [m["original"] for m in welcome["history"]] == [
                        "Hola desde el móvil."]
                    assert welcome["guest_language"] == "es"
                    moved = (await room_events(phone, "moved"))[-1]
                    assert moved == {"type": "moved", "key": "moved",
                                     "text": "This conversation continued on another device."}
                    assert (await _closed(phone)).data == 1000
                    await agent.wait("The customer continued on another device")
                    await laptop.send_json({"type": "say", "text": "Hola desde el portátil."})
                    said = (await room_events(laptop, "message", tab=agent))[-1]["message"]
                    assert said["who"] == "guest" and said["original"] == "Hola desde el portátil."
                    await agent.wait("EN:Hola desde el portátil.")
                    await agent.send("Your order ships today.")
                    sent = (await room_events(laptop, "message", tab=agent))[-1]["message"]
                    assert sent["who"] == "agent"

                    async with http.ws_connect(room_ws_url(url, token)) as again:
                        await again.send_json({"type": "hello", "guest": GUEST, "resume": True})
                        refused = (await room_events(again, "closed"))[-1]
                        assert refused["key"] == "moved"
                        assert (await _closed(again)).data == 4409
                    links = len(agent.said(f"/room/{token}"))
                    await agent.send("/room")  # the link again: the same one, still working
                    for _ in range(600):
                        if len(agent.said(f"/room/{token}")) > links:
                            break
                        await asyncio.sleep(0.1)
                    else:
                        raise AssertionError("/room did not show the room's link again")
                    async with http.ws_connect(room_ws_url(url, token)) as back:
                        await back.send_json({"type": "hello", "guest": GUEST})  # a reload
                        history = (await room_events(back, "welcome"))[-1]["history"]
                        assert [m["who"] for m in history] == ["guest", "guest", "agent"]
                        assert (await room_events(laptop, "moved"))[-1]["key"] == "moved"
            assert sum("continued on another device" in t for t in agent.said("")) == 1


LONG = "\n\n".join(f"Paragraphe {i} de la longue lettre du client." for i in range(8))


async def test_a_long_message_on_a_socket_holds_no_other(tmp_path):
    """The counter's and a room guest's socket: a one-liner sent while a long paste of the same
    socket is held at the model is answered first; the long one still arrives whole."""
    gate = Gate(answer=marked)
    try:
        with app(tmp_path, answer=gate, HYMT_SEGMENT_CHARS="80") as (url, stub):
            ws_url = url.replace("http://", "ws://")
            async with aiohttp.ClientSession() as http:
                async with http.ws_connect(f"{ws_url}/counter/ws") as ws:
                    await ws.send_json({"a": "fr", "b": "en"})
                    await ws.send_json({"type": "say", "side": "a", "text": LONG})
                    await _held(gate, 1)
                    await ws.send_json({"type": "say", "side": "b", "text": "Thank you!"})
                    first = (await room_events(ws, "message"))[-1]
                    assert first["side"] == "b" and first["translation"] == "EN:Thank you!"
                    gate.open()
                    second = (await room_events(ws, "message"))[-1]
                    assert second["side"] == "a" and second["translation"].count("EN:") == 8
            gate.close()
            async with Tab(url, profile=AGENT) as agent, aiohttp.ClientSession() as http:
                token = await open_room(agent)
                async with http.ws_connect(room_ws_url(url, token)) as ws:
                    await ws.send_json({"type": "hello", "guest": GUEST, "language": "fr"})
                    await room_events(ws, "welcome")
                    held = gate.waiting
                    await ws.send_json({"type": "say", "text": LONG})
                    await _held(gate, held + 1)
                    await ws.send_json({"type": "say", "text": "Merci beaucoup !"})
                    got = (await room_events(ws, "message"))[-1]["message"]
                    assert got["original"] == "Merci beaucoup !" and got["seq"] == 1
                    gate.open()
                    got = (await room_events(ws, "message"))[-1]["message"]
                    assert got["original"].startswith("Paragraphe 0") and got["seq"] == 2
    finally:
        gate.open()


async def _held(gate: Gate, count: int) -> None:
    for _ in range(2000):  # a safety net, not a speed bound
        if gate.waiting >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the long message never reached the model")

