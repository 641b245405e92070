"""The support desk across two app replicas on one real Redis (Debian's ``redis-server``): both
visitors start on replica A, the Spanish one stays there while the Japanese one's page lands on
replica B (no sticky cookie: each client here names its replica directly), the agent sits on
B, and the queue, the take, the replies, the visitors' messages and the typing indicator (both
ways) cross between them by Redis pub/sub. The Spanish visitor moves to another device, whose
page lands on A too: the conversation (its talk on B) follows, the old page is told, the agent
on B reads one line. A second agent on A then takes one over.

The model is the instant stand-in of ``tests/support/tabs.py`` (answers marked ``EN:``)."""

from __future__ import annotations

import asyncio

import aiohttp
import httpx

from hymt_chat.modes.wording import escape_markdown as md
from tests.support.redis_server import redis_server
from tests.support.tabs import Tab, app, room_events, room_ws_url
from tests.test_desk import AGENT, G1, G2, G3, _cookie, _hash, _start


async def _signal(tab: Tab) -> dict:
    """The first "visitor_typing" window message the tab got (for its page's script)."""
    for _ in range(600):
        found = [d for e, d in tab.events if e == "window_message" and isinstance(d, dict)
                 and d.get("hymt") == "visitor_typing"]
        if found:
            return found[0]
        await asyncio.sleep(0.1)
    raise AssertionError(f"no typing signal in {str(tab.events[-5:])[:800]}")


async def test_visitors_on_one_replica_an_agent_on_the_other(tmp_path):
    agents = ",".join(f"{n}:{_hash(n)}" for n in ("alice", "bob"))
    with redis_server(tmp_path / "redis") as redis_url:
        env = {"HYMT_AGENTS": agents, "CHAINLIT_AUTH_SECRET": "s" * 64,
               "HYMT_REDIS_URL": redis_url, "HYMT_APP_REPLICAS": "2"}
        with app(tmp_path / "a", **env) as (url_a, _), app(tmp_path / "b", **env) as (url_b, _):
            es = _start(url_a, G1, "es", "Hola, mi pedido no ha llegado.").json()
            ja = _start(url_a, G2, "ja", "荷物がまだ届きません。").json()
            assert (es["number"], ja["number"]) == (1, 2)  # the deployment's numbers
            async with aiohttp.ClientSession() as http:
                v1 = await http.ws_connect(room_ws_url(url_a, es["token"]))
                page = httpx.get(f"{url_b}/room/{ja['token']}", timeout=30)  # not B's room
                assert page.status_code == 200 and 'lang="ja"' in page.text
                v2 = await http.ws_connect(room_ws_url(url_b, ja["token"]))
                for ws, guest in ((v1, G1), (v2, G2)):
                    await ws.send_json({"type": "hello", "guest": guest})
                    welcome = (await room_events(ws, "welcome"))[-1]
                    assert len(welcome["history"]) == 1 and welcome["notice"] == "waiting"
                alice_cookie = _cookie(url_b, "alice")
                async with Tab(url_b, {"Cookie": alice_cookie}, profile=AGENT) as alice:
                    await alice.wait("| Waiting |")  # replica A's two, in B's inbox
                    await alice.send("/desk take 1")
                    await alice.wait(md("Now with #1 · Spanish"))
                    await alice.wait(md("mi pedido no ha llegado"))  # its history came along
                    assert (await room_events(v1, "notice"))[-1]["key"] == "joined"
                    await alice.send("Your order ships today.")
                    reply = (await room_events(v1, "message"))[-1]["message"]
                    assert reply["who"] == "agent" and reply["target"] == "es"
                    # Typing, both ways across the replicas: the visitor's (A -> B, to her tab's
                    # script as a window message) and hers (her tab's script -> B -> A).
                    await v1.send_json({"type": "typing"})
                    told = await _signal(alice)
                    assert told["text"] == "#1 · Spanish · the visitor is typing…", told
                    await alice.client.emit("window_message", {"hymt": "typing"})
                    typing = (await room_events(v1, "typing"))[-1]
                    assert typing["who"] == "agent" and typing["seconds"] > 0
                    await alice.send("/desk take 2")
                    await alice.wait(md("Now with #2 · Japanese"))
                    await alice.send("Your parcel is on its way.")
                    reply = (await room_events(v2, "message"))[-1]["message"]
                    assert reply["who"] == "agent" and reply["target"] == "ja"
                    await v1.send_json({"type": "say", "text": "¿Y el número de seguimiento?"})
                    mine = (await room_events(v1, "message"))[-1]["message"]
                    assert mine["who"] == "guest" and mine["translation"].startswith("EN:")
                    await alice.wait(md("#1 · Spanish · 1 unread"))  # translated on B
                    # The Spanish visitor opens the link on another device (its page on A, a
                    # door to the talk on B): the talk admits it, the first page is told.
                    v3 = await http.ws_connect(room_ws_url(url_a, es["token"]))
                    await v3.send_json({"type": "hello", "guest": G3})
                    history = (await room_events(v3, "welcome"))[-1]["history"]
                    assert [m["who"] for m in history] == ["guest", "agent", "guest"]
                    assert (await room_events(v1, "moved"))[-1]["key"] == "moved"
                    await alice.wait(md("#1 · Spanish: the visitor continued on another device."))
                    await v3.send_json({"type": "say", "text": "Lo escribo desde el portátil."})
                    mine = (await room_events(v3, "message"))[-1]["message"]
                    assert mine["original"] == "Lo escribo desde el portátil."
                    await alice.wait(md("#1 · Spanish · 2 unread"))  # heard on B
                async with Tab(url_b, {"Cookie": alice_cookie}, profile=AGENT) as again:
                    await again.wait(md("You hold 2 conversations"))  # a reload
                    bob_cookie = _cookie(url_a, "bob")
                    async with Tab(url_a, {"Cookie": bob_cookie}, profile=AGENT) as bob:
                        await bob.send("/desk take 1")  # from B back to A, the visitor's
                        await bob.wait(md("Now with #1 · Spanish: your messages go to this "
                                          "visitor (4 so far)"))
                        await again.wait(md("#1 · Spanish was taken over by bob"))
                        await bob.send("The tracking number is in your email.")
                        last = (await room_events(v3, "message"))[-1]["message"]
                        assert last["who"] == "agent" and last["original"].startswith("The tr")
                await v1.close()
                await v3.close()
                await v2.close()
