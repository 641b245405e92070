"""The support desk against the real app: visitors start conversations that wait in the queue,
a signed-in agent takes two and switches between them in one tab, reloads and finds both, a
second agent takes one over with its history and blocks its visitor; the queue's limit and a
visitor's limit refuse with the key their page says in their language.

The model is the instant stand-in of ``tests/support/tabs.py`` (answers marked ``EN:``): what
is under test is the desk's routing, not translation. Every visitor here comes from 127.0.0.1,
so they are one visitor to the desk's per-visitor limit (set high enough for the scenario)."""

from __future__ import annotations

import asyncio
import functools

import aiohttp
import httpx

from hymt_chat.modes.wording import escape_markdown as md
from hymt_chat.service.auth import hash_password
from tests.support.tabs import Tab, app, room_events, room_ws_url

AGENT = "Support agent"
PASSWORD = "correct horse battery"
G1, G2, G3 = "1" * 32, "2" * 32, "3" * 32


@functools.cache
def _hash(name: str) -> str:
    return hash_password(PASSWORD, n=2**10)


def _cookie(url: str, name: str) -> str:
    answer = httpx.post(f"{url}/login", data={"username": name, "password": PASSWORD},
                        timeout=30)
    assert answer.status_code == 200, answer.text
    return "; ".join(f"{c.name}={c.value}" for c in answer.cookies.jar)


async def _kept(url: str, cookie: str, thread: str, text: str) -> bool:
    """Whether the history's thread, as its owner reads it (Chainlit's
    ``GET /project/thread/{id}``), comes to hold a step saying *text* within a minute."""
    async with httpx.AsyncClient(timeout=30, headers={"Cookie": cookie}) as client:
        for _ in range(600):
            answer = await client.get(f"{url}/project/thread/{thread}")
            if answer.status_code == 200 and any(
                    text in (s.get("output") or "") for s in answer.json()["steps"]):
                return True
            await asyncio.sleep(0.1)
    return False


def _start(url: str, guest: str, language: str, text: str) -> httpx.Response:
    return httpx.post(f"{url}/desk/start", timeout=30,
                      json={"language": language, "text": text, "guest": guest})


async def test_two_visitors_one_agent_a_reload_a_transfer_and_a_block(tmp_path):
    agents = ",".join(f"{n}:{_hash(n)}" for n in ("alice", "bob"))
    with app(tmp_path, HYMT_AGENTS=agents, CHAINLIT_AUTH_SECRET="s" * 64, HYMT_DESK_QUEUE="2",
             HYMT_DESK_PER_VISITOR="3") as (url, _):
        es = _start(url, G1, "es", "Hola, mi pedido no ha llegado.")
        ja = _start(url, G2, "ja", "荷物がまだ届きません。")
        assert es.status_code == ja.status_code == 200
        one, two = es.json(), ja.json()
        busy = _start(url, G3, "de", "Hallo?")  # two wait already: the queue is full
        assert busy.status_code == 503 and busy.json()["key"] == "busy"
        page = httpx.get(f"{url}/desk", headers={"Accept-Language": "ja"}, timeout=30)
        assert "お問い合わせ" in page.text and 'lang="ja"' in page.text
        alice_cookie = _cookie(url, "alice")
        async with aiohttp.ClientSession() as http:
            async with Tab(url, {"Cookie": alice_cookie}, profile=AGENT) as alice:
                await alice.wait("| Waiting |")  # the inbox, at once: two wait
                await alice.send(f"/desk take {one['number']}")
                await alice.wait(md(f"Now with #{one['number']} · Spanish"))
                async with http.ws_connect(room_ws_url(url, one["token"])) as v1:
                    await v1.send_json({"type": "hello", "guest": G1})
                    welcome = (await room_events(v1, "welcome"))[-1]
                    assert welcome["notice"] == "joined" and welcome["guest_language"] == "es"
                    assert [m["who"] for m in welcome["history"]] == ["guest"]
                    await alice.send("Your order ships today.")
                    reply = (await room_events(v1, "message"))[-1]["message"]
                    assert reply["who"] == "agent" and reply["target"] == "es"
                    # The inbox's button this time (what the agent clicks), as the page posts it.
                    take = await alice.action(
                        "desk_take", lambda b: b["payload"] == {"n": two["number"]})
                    clicked = httpx.post(f"{url}/project/action", timeout=30,
                                         headers={"Cookie": alice_cookie},
                                         json={"sessionId": alice.session, "action": take})
                    assert clicked.status_code == 200, clicked.text
                    await alice.wait(md(f"Now with #{two['number']} · Japanese"))
                    await v1.send_json({"type": "say", "text": "¿Y el número de seguimiento?"})
                    await alice.wait(md(f"#{one['number']} · Spanish · 1 unread"))
                # the queue has room again: one more start is let in, the next is theirs too many
                assert _start(url, G3, "de", "Hallo, eine Frage.").status_code == 200
                four = _start(url, "4" * 32, "fr", "Bonjour ?")
                assert four.status_code == 429 and four.json()["key"] == "too_many"
            async with Tab(url, {"Cookie": alice_cookie}, profile=AGENT) as again:  # a reload
                await again.wait(md("You hold 2 conversations"))
                await again.send(f"/desk {one['number']}")
                await again.wait(md("(3 so far)"))  # the Spanish talk, every message
                bob_cookie = _cookie(url, "bob")
                async with Tab(url, {"Cookie": bob_cookie}, profile=AGENT) as bob:
                    await bob.send(f"/desk take {one['number']}")  # a transfer
                    await bob.wait(md(f"Now with #{one['number']} · Spanish"))
                    await bob.wait(md("mi pedido no ha llegado"))  # the history came along
                    await again.wait(md(f"#{one['number']} · Spanish was taken over by bob"))
                    async with http.ws_connect(room_ws_url(url, one["token"])) as v1:
                        await v1.send_json({"type": "hello", "guest": G1})
                        await room_events(v1, "welcome")
                        await bob.send("/desk block")
                        await bob.wait(md("the visitor is blocked"))
                        closed = (await room_events(v1, "closed"))[-1]
                        assert closed["key"] == "blocked"
        blocked = _start(url, "5" * 32, "es", "Hola otra vez.")
        assert blocked.status_code == 403 and blocked.json()["key"] == "blocked"


async def test_a_reloaded_thread_page_hears_the_desk_after_the_thread(tmp_path):
    """A reload after the first message is a reload of ``/thread/<id>``, which Chainlit
    resumes: it sends the thread to the page after on_chat_resume, and the page replaces its
    messages with the thread's — so the desk's news must come after it, or the agent sees none
    of their conversations (both found in a real browser: tests/test_desk_browsers_proxy.py)."""
    with app(tmp_path, HYMT_AGENTS=f"alice:{_hash('alice')}", CHAINLIT_AUTH_SECRET="s" * 64
             ) as (url, _):
        assert _start(url, G1, "es", "Hola, mi pedido no ha llegado.").status_code == 200
        alice_cookie = _cookie(url, "alice")
        async with Tab(url, {"Cookie": alice_cookie}, profile=AGENT) as alice:
            await alice.send("/desk take 1")
            await alice.wait(md("Now with #1 · Spanish"))
            for _ in range(600):  # the thread is made after the first message's answer
                thread = [d["thread_id"] for e, d in alice.events if e == "first_interaction"]
                if thread:
                    break
                await asyncio.sleep(0.1)
            assert thread, alice.events[-5:]
            # The agent's message reaches the history in a write of Chainlit's own, which may
            # come after the page heard of the thread: reloads are of a thread that holds it.
            assert await _kept(url, alice_cookie, thread[0], "/desk take 1")
        async with Tab(url, {"Cookie": alice_cookie}, profile=AGENT, thread=thread[0]) as again:
            await again.wait(md("You hold 1 conversation"))
            names = [e for e, _ in again.events]
            held = next(i for i, (e, d) in enumerate(again.events) if e == "new_message"
                        and "You hold" in d["output"])
            assert "resume_thread" in names[:held], names
        # That news is the present, shown afresh at each reload: not kept in the thread, or
        # every resume showed the earlier ones too (Chainlit's page opens several sockets
        # while it loads, each resuming: the agent read it all twice).
        async with Tab(url, {"Cookie": alice_cookie}, profile=AGENT, thread=thread[0]) as third:
            await third.wait(md("You hold 1 conversation"))
            steps = [d for e, d in third.events if e == "resume_thread"][0]["steps"]
            assert any("/desk take 1" in (s.get("output") or "") for s in steps), steps
            assert not [s for s in steps if "You hold" in (s.get("output") or "")]


async def test_a_thread_the_take_button_started_is_named_after_its_conversation(tmp_path):
    """Chainlit names a thread after its first interaction: the action's name when a button
    came first ("desk_take" in the agent's history). The app names it from the conversation.
    The page's list is Chainlit's ``POST /project/threads`` (chainlit/server.py)."""
    with app(tmp_path, HYMT_AGENTS=f"alice:{_hash('alice')}", CHAINLIT_AUTH_SECRET="s" * 64
             ) as (url, _):
        assert _start(url, G1, "es", "Hola, mi pedido no ha llegado.").status_code == 200
        cookie = _cookie(url, "alice")
        async with Tab(url, {"Cookie": cookie}, profile=AGENT) as alice:
            take = await alice.action("desk_take")  # the inbox's button: the first thing done
            clicked = httpx.post(f"{url}/project/action", timeout=30, headers={"Cookie": cookie},
                                 json={"sessionId": alice.session, "action": take})
            assert clicked.status_code == 200, clicked.text
            await alice.wait(md("Now with #1 · Spanish"))

            def listed() -> list[str] | None:
                threads = httpx.post(f"{url}/project/threads", timeout=30,
                                     headers={"Cookie": cookie},
                                     json={"pagination": {"first": 10}, "filter": {}})
                assert threads.status_code == 200, threads.text
                names = [t.get("name") for t in threads.json()["data"]]
                return names if names and all(names) else None

            assert await alice._first(listed, 60, "the named thread") == ["Desk #1 · Spanish"]
            said = [d["interaction"] for e, d in alice.events if e == "first_interaction"]
            assert "Desk #1 · Spanish" in said  # the page's list is told the name too
