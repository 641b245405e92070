"""The support desk across replicas, in real browsers (Debian's chromium, Playwright) through
the real proxy: two app replicas (``chainlit run app.py``) on one Redis and one PostgreSQL
history, behind HAProxy configured by ``hymt_chat/sidecar/proxy.py``, as ``hymt-chat up
--app-replicas 2`` runs them.

Another origin's page (127.0.0.1, another port) embeds the widget with its one script tag; two
visitors (es-ES, ja-JP, each a browser context of its own) start conversations in its frame;
agent alice (signed in on the Chainlit page) takes both with the inbox's buttons, answers each
in English, and each visitor reads the answer translated for their language; alice reloads
and finds both with their history; agent bob takes one over, reads its history, and his answer
reaches its visitor. Then a visitor on another *site's* page (localhost), whose frame the
proxy's cookie cannot pin, is taken and answered across the replicas too; last, alice's
reload lands on the other replica (as HAProxy redispatches a browser whose replica is gone)
and her remaining conversation comes along. Then that replica is SIGKILLed under her and the
Japanese visitor: the visitor writes during the gap, her page reconnects by itself through the
proxy to the other replica, which reads the conversation back from the database, with the
whole history, and delivers that message once; alice's reload there has it again.

Real: chromium, HAProxy, Redis, PostgreSQL, the two app processes. The model is the engine
double (tests/support/engine_double.py), one per replica; the real model's translations are
the end-to-end tests'. Replica 2, alice's, talks to a double that answers from a phrasebook
(answer checks on): her answers reach the visitors in Spanish and Japanese, read back with the
app's own language detection. Replica 1 talks to a double that answers the text it was given
marked with the language it was asked for ("ES:The tracking number is in your email.") and
records what it was asked: a marked answer was translated on replica 1, a phrasebook one on
replica 2.

Placement: each context but the last carries the proxy's affinity cookie before its first
request — the visitors naming replica 1, alice replica 2, bob replica 1 — and the replicas say
whom they served: the answers' kind (above), the stand-in's record, and the desk's relay over
Redis, which says where each talk lives and what one replica asks or sends the other (a
visitor's events go to the replica holding their socket).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import redis
from playwright.sync_api import Browser, BrowserContext, FrameLocator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from hymt_chat.engine.prompts import build_prompt
from hymt_chat.lang.detect import detect_language
from hymt_chat.modes.agent.drift import drift_score
from hymt_chat.service.auth import hash_password
from hymt_chat.settings import Settings
from hymt_chat.sidecar.private import write_private
from hymt_chat.sidecar.proxy import plan_proxy
from hymt_chat.sidecar.supervisor import Supervisor
from hymt_chat.words.catalogs import catalog
from tests.support.browser import new_page
from tests.support.double_app import double_app
from tests.support.engine_double import EngineDouble, echo_source, running_double
from tests.support.phrasebook import phrasebook
from tests.support.ports import free_port
from tests.support.postgres import fresh_database
from tests.support.redis_server import redis_server
from tests.test_desk_browser import _Site

pytestmark = pytest.mark.slow

PASSWORD = "correct horse battery"
WAIT = 120_000  # ms: generous, for a busy 2-core machine; every wait ends on an event
# Replica 2's "model": what alice writes, in the visitors' languages, and back (her answers'
# back-translation check, on there: a reply whose back-translation differs is held until she
# sends it anyway, and the visitor would see nothing), and the visitors' words.
_BOOK = phrasebook({
    "Your order ships today.": {"es": "Su pedido se envía hoy."},
    "Su pedido se envía hoy.": {"en": "Your order ships today."},
    "Your parcel is on its way.": {"ja": "お荷物は配送中です。"},
    "お荷物は配送中です。": {"en": "Your parcel is on its way."},
    "Hola, mi pedido no ha llegado.": {"en": "Hello, my order has not arrived."},
    "荷物がまだ届きません。": {"en": "My parcel has not arrived yet."},
    "Bonjour, ma commande est en retard.": {"en": "Hello, my order is late."},
})
_CODES = {"English": "EN", "Spanish": "ES", "Japanese": "JA", "French": "FR"}


def _marked(prompt: str) -> str:
    """The stand-in's answer: the source text, marked with the language it was asked for."""
    asked = re.search(r"into (\w+), without", prompt)
    return f"{_CODES.get(asked.group(1), '??') if asked else '??'}:{echo_source(prompt)}"


def test_alices_replies_pass_replica_2s_back_translation_check():
    """Her replies go out at once (none held for a warning): each comes back from replica 2's
    phrasebook as she wrote it, under the app's own prompt and drift check."""
    for reply, target in (("Your order ships today.", "es"), ("Your parcel is on its way.", "ja")):
        there = _BOOK(build_prompt(reply, "en", target))
        back = _BOOK(build_prompt(there, target, "en"))
        assert there != reply and not drift_score(reply, back).flagged, (there, back)


def _asked(stub: EngineDouble, text: str) -> list[str]:
    """The languages *stub* was asked to translate *text* into."""
    return [_marked(p).split(":", 1)[0] for p in stub.prompts if echo_source(p) == text]


@contextmanager
def _replica(folder: Path, answer, **env: str) -> Iterator[tuple[str, EngineDouble]]:
    """A replica (the real app) on an engine double of its own that answers with *answer*."""
    with running_double(answer=answer) as double, double_app(double, folder, **env) as url:
        yield url, double


def _translated(reply, original: str, language: str) -> str:
    """The text a visitor's page shows for the agent's *original*: translated on replica 2 (its
    phrasebook, not replica 1's marked echo), in *language*; the original one tap away."""
    expect(reply.locator(".orig")).to_contain_text(original, timeout=WAIT)
    text = reply.locator(".text").inner_text()
    assert ":" + original not in text and detect_language(text) == language, text
    return text


@contextmanager
def _proxy(backends: list[str], folder: Path, cookie: str) -> Iterator[str]:
    """HAProxy in front of *backends* (their URLs), as ``up --app-replicas`` configures it."""
    port = free_port()
    plan = plan_proxy([("127.0.0.1", int(u.rsplit(":", 1)[1])) for u in backends],
                      host="127.0.0.1", port=port, cookie=cookie,
                      config_path=folder / "haproxy.cfg")
    write_private(plan.config_path, plan.config)
    proxy = Supervisor(plan.spec, health_url=plan.health_url, log_path=folder / "haproxy.log",
                       name="haproxy")
    proxy.start(timeout=30)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proxy.stop()


class _Relay:
    """What the replicas tell each other over Redis (``hymt_chat/room/desk_relay.py``), read by
    a subscriber of the test's own, and where each conversation's talk lives (its inbox row's
    owner): the replicas' own account of whom they serve."""

    def __init__(self, url: str) -> None:
        self.redis = redis.Redis.from_url(url, decode_responses=True)
        self.watch = self.redis.pubsub()
        self.watch.psubscribe("hymt:desk:to:*")
        self.seen: list[tuple[str, dict]] = []  # (replica told, message)

    def owner(self, number: int) -> tuple[str, str | None]:
        """The replica where conversation *number*'s talk lives, and its agent."""
        row = json.loads(self.redis.hget("hymt:desk:tickets", str(number)) or "{}")
        return row.get("owner", ""), row.get("agent")

    def told(self, op: str, until: str | None = None, **fields: object) -> list[str]:
        """The replicas told *op* (with *fields*), once one is — replica *until*, if given
        (waiting up to a minute)."""
        for _ in range(600):
            found = [to for to, m in self.seen if m.get("op") == op
                     and all(m.get(k) == v for k, v in fields.items())]
            if found and (until is None or until in found):
                return found
            message = self.watch.get_message(timeout=0.1)
            if message and message["type"] == "pmessage":
                self.seen.append((message["channel"].removeprefix("hymt:desk:to:"),
                                  json.loads(message["data"])))
        raise AssertionError(f"no {op} {fields} in {self.seen}")

    def close(self) -> None:
        self.watch.close()
        self.redis.close()


def _pid_of(url: str) -> int:
    """The app process serving *url* (its process group's leader)."""
    port = url.rsplit(":", 1)[1]
    out = subprocess.run(["pgrep", "-f", f"chainlit run .*--port {port}( |$)"],
                         capture_output=True, text=True).stdout
    pids = [int(p) for p in out.split()]
    assert pids, f"no app process on port {port}"
    return min(pids)


def _token(page: Page) -> str:
    """The room token of the visitor's conversation, from the widget frame's address."""
    return next(re.search(r"/room/([A-Za-z0-9_-]+)", f.url).group(1)  # type: ignore[union-attr]
                for f in page.frames if "/room/" in f.url)


def _pinned(browser: Browser, url: str, cookie: str, server: str, locale: str) -> BrowserContext:
    """A browser context whose requests to *url* carry the proxy's affinity cookie for
    *server* (as HAProxy inserts it: HttpOnly, no SameSite, so Lax), before any page opens."""
    context = browser.new_context(locale=locale, viewport={"width": 1100, "height": 900})
    context.add_cookies([{"name": cookie, "value": server, "url": url, "sameSite": "Lax",
                          "httpOnly": True}])
    return context


def _visitor(context: BrowserContext, site: str, text: str) -> tuple[Page, FrameLocator]:
    """The visitor opens the widget on the site's page and starts a conversation."""
    page = new_page(context)
    page.goto(site)
    page.click("#hymt-desk-button")
    frame = page.frame_locator("#hymt-desk-frame")
    frame.locator("#text").fill(text)
    frame.locator("#start").click()
    expect(frame.locator(".msg.guest .text")).to_have_text(text, timeout=WAIT)
    return page, frame


def _agent(context: BrowserContext, url: str, name: str) -> Page:
    """An agent signs in on the Chainlit page and picks the Support agent profile."""
    page = new_page(context)
    page.goto(f"{url}/login")
    page.fill("#email", name)
    page.fill("#password", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_selector("#chat-profiles", timeout=WAIT)
    page.click("#chat-profiles")
    page.click("[data-test='select-item:Support agent']")
    return page


def _say(page: Page, text: str) -> None:
    """Type *text* and send it with the send button (Enter on a "/command" may pick the
    command menu's entry instead), then see the composer emptied: it went."""
    for _ in range(12):  # a redraw (the tab's thread made: /thread/<id>) may empty the composer
        page.fill("#chat-input", text)  # at once: keys typed while the page redraws get lost
        try:
            page.click("#chat-submit", timeout=5_000)  # disabled again: it was emptied
            break
        except PlaywrightTimeout:
            continue
    expect(page.locator("#chat-input")).to_have_text("", timeout=WAIT)


def test_two_visitors_two_agents_two_replicas_behind_the_proxy(browser, postgres_url, tmp_path):
    cookie = Settings().affinity_cookie  # "hymt-route", as `up` gives every replica
    site_port, other_port = free_port(), free_port()
    site_url, other_url = f"http://127.0.0.1:{site_port}", f"http://localhost:{other_port}"
    agents = ",".join(f"{n}:{hash_password(PASSWORD, n=2**10)}" for n in ("alice", "bob"))
    with redis_server(tmp_path / "redis") as redis_url:
        env = {"HYMT_AGENTS": agents, "CHAINLIT_AUTH_SECRET": "s" * 64,
               "HYMT_REDIS_URL": redis_url, "HYMT_APP_REPLICAS": "2",
               "HYMT_AFFINITY_COOKIE": cookie, "HYMT_TRUSTED_PROXIES": "127.0.0.1",
               "HYMT_WIDGET_ORIGINS": f"{site_url},{other_url}",
               "HYMT_DESK_PER_VISITOR": "3",  # every visitor is 127.0.0.1 here
               "HYMT_DATABASE_URL": fresh_database(postgres_url)}  # one history, as deployed
        # Replica 1's marks are not translations: its answer checks are off.
        with (_replica(tmp_path / "r1", _marked, HYMT_CHECKS="0", **env) as (url_1, model_1),
              _replica(tmp_path / "r2", _BOOK, **env) as (url_2, model_2),
              _proxy([url_1, url_2], tmp_path, cookie) as front):
            site, relay = _Site(front, site_port, host="127.0.0.1"), _Relay(redis_url)
            other = _Site(front, other_port)  # localhost: another site, not only origin
            try:
                # The proxy's own cookie, as a browser it has not seen before gets it: the name
                # and server names pinned below, HttpOnly, no SameSite (so Lax).
                # (The app sets a cookie of its own beside it: only the proxy's is read.)
                headers = httpx.get(f"{front}/desk", timeout=30).headers
                given = [c for c in headers.get_list("set-cookie") if c.startswith(f"{cookie}=")]
                assert len(given) == 1, headers
                assert re.fullmatch(rf"{cookie}=app[12]; path=/; HttpOnly", given[0]), given
                es_ctx = _pinned(browser, front, cookie, "app1", "es-ES")
                ja_ctx = _pinned(browser, front, cookie, "app1", "ja-JP")
                es_text, ja_text = "Hola, mi pedido no ha llegado.", "荷物がまだ届きません。"
                es_page, es = _visitor(es_ctx, site.url, es_text)
                ja_page, ja = _visitor(ja_ctx, site.url, ja_text)
                expect(es.locator("#status")).to_have_text(catalog("es").group("guest")["waiting"])
                expect(ja.locator("#status")).to_have_text(catalog("ja").group("guest")["waiting"])
                # Replica 1 started both (its model translated their first messages).
                assert _asked(model_1, es_text) == ["EN"] and _asked(model_1, ja_text) == ["EN"]
                one, ja_token, es_token = relay.owner(1)[0], _token(ja_page), _token(es_page)
                assert one and relay.owner(1) == relay.owner(2) == (one, None)

                alice_ctx = _pinned(browser, front, cookie, "app2", "en-US")
                alice = _agent(alice_ctx, front, "alice")
                alice.get_by_role("button", name="Take #1").click(timeout=WAIT)
                alice.wait_for_url("**/thread/*", timeout=WAIT)  # her first step made the thread
                expect(alice.get_by_text("Now with #1 · Spanish").last).to_be_visible(
                    timeout=WAIT)
                expect(es.locator("#status")).to_have_text(catalog("es").group("guest")["joined"], timeout=WAIT)
                _say(alice, "Your order ships today.")
                model_2.wait_for(lambda d: d.count("finished") and bool(_asked(d, "Your order "
                                 "ships today.")), "replica 2 to translate alice's reply")
                es_reply = _translated(es.locator(".msg.agent").last, "Your order ships today.",
                                       "es")
                alice.get_by_role("button", name="Take #2").last.click(timeout=WAIT)
                expect(alice.get_by_text("Now with #2 · Japanese").last).to_be_visible(
                    timeout=WAIT)
                _say(alice, "Your parcel is on its way.")
                ja_reply = _translated(ja.locator(".msg.agent").last,
                                       "Your parcel is on its way.", "ja")
                print(f"the visitors read: {es_reply!r}, {ja_reply!r}")
                # Alice's replica translated her replies (phrasebook answers, none asked of
                # replica 1's double): her tab is on replica 2.
                assert _asked(model_1, "Your order ships today.") == []
                assert _asked(model_1, "Your parcel is on its way.") == []
                assert set(_asked(model_2, "Your order ships today.")) == {"ES"}
                assert set(_asked(model_2, "Your parcel is on its way.")) == {"JA"}
                # Replica 2 asked replica 1 for both (alice's take) and holds their talk now,
                assert relay.told("take", number=1, agent="user:alice") == [one]
                assert relay.told("take", number=2, agent="user:alice") == [one]
                two = relay.owner(1)[0]
                assert two != one and relay.owner(1) == relay.owner(2) == (two, "user:alice")
                # while the visitors' sockets stay on replica 1: 2 sends their events there.
                assert set(relay.told("guest_event", token=es_token)) == {one}
                assert set(relay.told("guest_event", token=ja_token)) == {one}

                alice.reload()
                expect(alice.get_by_text("You hold 2 conversations: #1 · Spanish, #2 · "
                                         "Japanese.")).to_be_visible(timeout=WAIT)
                # The last one is current again, its talk shown; the other a click away.
                expect(alice.get_by_text("Now with #2 · Japanese").last).to_be_visible()
                _say(alice, "/desk inbox")  # both hers
                for row in (r"^1 Spanish .* you$", r"^2 ◀ Japanese .* you$"):  # ◀: current
                    expect(alice.get_by_role("row", name=re.compile(row)).last).to_be_visible(
                        timeout=WAIT)
                _say(alice, "/desk 1")
                expect(alice.get_by_text("Now with #1 · Spanish: your messages go to this "
                                         "visitor (2 so far).")).to_be_visible(timeout=WAIT)
                expect(alice.locator("code", has_text=es_reply).last).to_be_visible()

                bob_ctx = _pinned(browser, front, cookie, "app1", "en-US")
                bob = _agent(bob_ctx, front, "bob")
                bob.get_by_role("button", name="Take over #1").last.click(timeout=WAIT)
                bob.wait_for_url("**/thread/*", timeout=WAIT)
                expect(bob.get_by_text("Now with #1 · Spanish: your messages go to this "
                                       "visitor (2 so far).")).to_be_visible(timeout=WAIT)
                expect(bob.get_by_text(f"Original: {es_text}").last).to_be_visible()
                expect(bob.locator("code", has_text=es_reply).last).to_be_visible()
                expect(alice.get_by_text("#1 · Spanish was taken over by bob")).to_be_visible(
                    timeout=WAIT)
                _say(bob, "The tracking number is in your email.")
                expect(es.locator(".msg.agent .text").last).to_have_text(
                    "ES:The tracking number is in your email.", timeout=WAIT)
                assert _asked(model_1, "The tracking number is in your email.") == ["ES"]
                assert relay.owner(1) == (one, "user:bob")  # the talk back on bob's replica 1

                # A visitor on another SITE's page: the frame is cross-site, so chromium
                # neither stores nor sends the proxy's cookie (Lax) there, each of its requests
                # goes where HAProxy balances it, and the replicas serve it wherever it lands.
                fr_ctx = browser.new_context(locale="fr-FR")
                fr_text = "Bonjour, ma commande est en retard."
                fr_page, fr = _visitor(fr_ctx, other.url, fr_text)
                bob.get_by_role("button", name="Take #3").last.click(timeout=WAIT)
                expect(bob.get_by_text("Now with #3 · French").last).to_be_visible(timeout=WAIT)
                expect(fr.locator("#status")).to_have_text(catalog("fr").group("guest")["joined"], timeout=WAIT)
                _say(bob, "We will call you tomorrow.")
                expect(fr.locator(".msg.agent .text").last).to_have_text(
                    "FR:We will call you tomorrow.", timeout=WAIT)
                assert [c for c in fr_ctx.cookies() if c["name"] == cookie] == []
                # HAProxy's leastconn put it on replica 2 (alice's one socket there against
                # three on replica 1), so bob's take crossed again: 1 asked 2 for it.
                assert _asked(model_1, fr_text) == []
                assert relay.told("take", number=3, agent="user:bob") == [two]
                assert relay.owner(3) == (one, "user:bob")

                # Alice's replica is gone for her browser (HAProxy redispatches it: the cookie
                # names replica 1 now); her reload resumes the thread from the shared history
                # there, and her remaining conversation is brought along to replica 1.
                alice_ctx.add_cookies([{"name": cookie, "value": "app1", "url": front,
                                        "sameSite": "Lax", "httpOnly": True}])
                alice.reload()
                expect(alice.get_by_text("You hold 1 conversation: #2 · Japanese.")
                       ).to_be_visible(timeout=WAIT)
                expect(alice.get_by_text("Now with #2 · Japanese").last).to_be_visible(
                    timeout=WAIT)
                assert relay.told("take", two, number=2, agent="user:alice") == [one, two]
                assert relay.owner(2) == (one, "user:alice")
                _say(alice, "It arrives on Friday.")
                expect(ja.locator(".msg.agent .text").last).to_have_text(
                    "JA:It arrives on Friday.", timeout=WAIT)
                assert _asked(model_1, "It arrives on Friday.") == ["JA"]

                # Replica 1 dies holding the talk, the Japanese visitor's socket and alice's
                # tab. The visitor writes during the gap: her page keeps it, reconnects by
                # itself through the proxy to replica 2, which reads the conversation back from
                # the database once replica 1's heartbeat is gone, and sends it then, once.
                os.killpg(_pid_of(url_1), signal.SIGKILL)
                ja.locator("#text").fill(ja_text)
                ja.locator("#text").press("Enter")
                # (The dead replica's heartbeat lasts up to 15 s, the page's backoff up to 8.)
                expect(ja.locator(".msg.guest .text")).to_have_text([ja_text, ja_text],
                                                                    timeout=2 * WAIT)
                expect(ja.locator(".msg")).to_have_count(4)  # the whole history, one new
                assert relay.owner(2) == (two, "user:alice")
                alice.reload()
                expect(alice.get_by_text("You hold 1 conversation: #2 · Japanese.")
                       ).to_be_visible(timeout=WAIT)
                expect(alice.get_by_text("Now with #2 · Japanese").last).to_be_visible(
                    timeout=WAIT)
                expect(alice.get_by_text("Now with #2 · Japanese: your messages go to this "
                                         "visitor (4 so far).")).to_be_visible(timeout=WAIT)
                _say(alice, "Your parcel is on its way.")
                expect(ja.locator(".msg.agent .text").last).to_have_text(ja_reply, timeout=WAIT)
                for context in (es_ctx, ja_ctx, alice_ctx, bob_ctx, fr_ctx):
                    context.close()
            finally:
                site.close()
                other.close()
                relay.close()
