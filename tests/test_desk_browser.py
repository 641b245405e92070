"""The visitor's side of the desk on the real DOM (Debian's chromium, Playwright): a Japanese
guest's page shows only Japanese — every word they can see or hear (the title, labels,
placeholders, the notices, the closed link's page), no English and no Chinese string — with
languages named in themselves in the picker; and the website widget opens the desk from
another site's strict-CSP page.

The app is real; the model is the instant stand-in of ``tests/support/tabs.py`` (it is not
what is under test here); the agent is a socket.io tab like a browser's, run in a thread of
its own because Playwright's sync API owns the test's thread."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Coroutine
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
from playwright.sync_api import Page, expect

from hymt_chat.lang.languages import LANGUAGES
from hymt_chat.service.auth import hash_password
from hymt_chat.words.catalogs import catalog
from tests.support.browser import new_page
from tests.support.ports import free_port
from tests.support.tabs import Tab, app, open_room

# What the page shows and says, as a reader (or a screen reader) gets it: the text of the page
# without its scripts and without the picker's other languages (each named in itself: the
# point of the picker), then its title, placeholders and labels.
_SEEN = """() => {
  const copy = document.documentElement.cloneNode(true);
  const picked = document.getElementById("language");
  copy.querySelectorAll("script, style").forEach(e => e.remove());
  copy.querySelectorAll("option").forEach(o => { if (!picked || o.value !== picked.value) o.remove(); });
  const said = [document.title, copy.textContent];
  document.querySelectorAll("[placeholder], [aria-label], [title]").forEach(e => {
    ["placeholder", "aria-label", "title"].forEach(a => { if (e.getAttribute(a)) said.push(e.getAttribute(a)); });
  });
  return said.join("\\n");
}"""
_CHINESE = ({v for v in catalog("zh").group("guest").values() if v not in catalog("ja").group("guest").values()}
            | {lang.chinese for lang in LANGUAGES})


def _foreign(page: Page) -> list[str]:
    """The English (any Latin letters) and Chinese strings the page shows."""
    seen = page.evaluate(_SEEN)
    return re.findall(r"[A-Za-z]+", seen) + [z for z in _CHINESE if z in seen]


class _Loop:
    """An event loop in a thread of its own, for the agent's socket.io tab."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, work: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(120)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def test_a_japanese_guest_page_shows_no_english_or_chinese_string(browser, tmp_path):
    loop = _Loop()
    with app(tmp_path) as (url, _):
        agent = Tab(url, profile="Support agent")
        loop.run(agent.__aenter__())
        try:
            token = loop.run(open_room(agent))
            phone = browser.new_context(locale="ja-JP", viewport={"width": 390, "height": 800})
            guest = new_page(phone)
            guest.goto(f"{url}/room/{token}")
            expect(guest.locator("#send")).to_have_text("送信")
            expect(guest.locator("#language")).to_have_value("ja")
            assert guest.locator("html").get_attribute("lang") == "ja"
            assert guest.locator("#language option[value=es]").inner_text() == "Español"
            assert _foreign(guest) == []
            guest.fill("#text", "荷物がまだ届きません。")
            guest.press("#text", "Enter")
            expect(guest.locator(".msg.guest .orig")).to_contain_text("→ 英語")
            loop.run(agent.wait("Customer"))
            # The guest's own message carries the stand-in's "EN:" translation: the words
            # around it are the page's, the message is theirs.
            guest.evaluate("document.querySelectorAll('.msg').forEach(m => m.remove())")
            assert _foreign(guest) == []
            loop.run(agent.send("/room close"))
            expect(guest.locator("#status")).to_have_text(catalog("ja").group("guest")["closed"])
            assert _foreign(guest) == []
            guest.reload()  # the closed link's page
            expect(guest.locator("p")).to_have_text(catalog("ja").group("guest")["closed"])
            assert _foreign(guest) == []
            phone.close()
        finally:
            loop.run(agent.__aexit__(None, None, None))
            loop.stop()


class _Site:
    """Another origin's page (``localhost``, where the app is ``127.0.0.1``: another site; or
    *host* ``127.0.0.1``, the same site on another port) under a strict CSP: nothing inline,
    scripts and frames from the app's origin only — the widget's whole demand on a host page."""

    def __init__(self, app_url: str, port: int, host: str = "localhost") -> None:
        page = (f'<!doctype html><html><head><script src="{app_url}/desk/widget.js" async>'
                "</script></head><body><h1>Tienda</h1></body></html>").encode()
        policy = f"default-src 'none'; script-src {app_url}; frame-src {app_url}"

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Security-Policy", policy)
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.url = f"http://{host}:{port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_the_widget_opens_the_desk_on_another_sites_strict_csp_page(browser, tmp_path):
    """One script tag on another origin's page: the button in the visitor's language, the
    desk in a frame (allowed for that origin only), a conversation started; no CSP report."""
    port = free_port()
    site_url = f"http://localhost:{port}"
    # A desk takes visitors only where agents can sign in to answer them.
    agents = f"alice:{hash_password('correct horse battery', n=2**10)}"
    with app(tmp_path, HYMT_WIDGET_ORIGINS=site_url, HYMT_AGENTS=agents,
             CHAINLIT_AUTH_SECRET="s" * 64) as (url, _):
        site = _Site(url, port)
        try:
            desk = httpx.get(f"{url}/desk", timeout=30).headers
            chat = httpx.get(url, timeout=30).headers
            assert f"frame-ancestors 'self' {site_url}" in desk["content-security-policy"]
            assert "x-frame-options" not in desk  # it cannot list a site: the CSP does
            assert "frame-ancestors 'none'" in chat["content-security-policy"]
            assert chat["x-frame-options"] == "DENY"  # every other page: framed by nobody
            visitor = browser.new_context(locale="es-ES")
            page = new_page(visitor)
            reports: list[str] = []
            page.on("console", lambda m: reports.append(m.text)
                    if "Content Security Policy" in m.text else None)
            page.goto(site.url)
            page.click("#hymt-desk-button")
            frame = page.frame_locator("#hymt-desk-frame")
            expect(frame.locator("#start")).to_have_text(catalog("es").group("guest")["start"])
            assert page.locator("#hymt-desk-button").inner_text() == "×"
            frame.locator("#text").fill("Hola, necesito ayuda con mi pedido.")
            frame.locator("#start").click()
            expect(frame.locator(".msg.guest .text")).to_have_text(
                "Hola, necesito ayuda con mi pedido.")
            # The first message is shown and the visitor still reads that they wait.
            expect(frame.locator("#status")).to_have_text(catalog("es").group("guest")["waiting"])
            assert reports == []
            visitor.close()
        finally:
            site.close()


def test_a_visitors_page_goes_on_after_a_restart_and_sends_what_was_typed_meanwhile(
        browser, tmp_path):
    """The app stops under an open conversation: the visitor's page says it is offline and
    takes a message all the same; the app starts again (the same address, cache folder and
    database) and the page reconnects by itself, with the whole history, and delivers that
    message once."""
    port, guest = free_port(), "e" * 32
    env = {"HYMT_AGENTS": f"alice:{hash_password('correct horse battery', n=2**10)}",
           "CHAINLIT_AUTH_SECRET": "s" * 64}
    visitor = browser.new_context(locale="es-ES")
    page = new_page(visitor)
    with app(tmp_path, port=port, **env) as (url, _):
        started = httpx.post(f"{url}/desk/start", timeout=30, json={
            "language": "es", "text": "Hola, mi pedido no ha llegado.", "guest": guest})
        assert started.status_code == 200, started.text
        page.goto(f"{url}/room/{started.json()['token']}#g={guest}")
        expect(page.locator(".msg.guest")).to_have_count(1)
    expect(page.locator("#status")).to_have_text(catalog("es").group("guest")["offline"])
    page.fill("#text", "¿Hay alguien ahí?")
    page.press("#text", "Enter")
    with app(tmp_path, port=port, **env):
        expect(page.locator(".msg.guest .text")).to_have_text(
            ["Hola, mi pedido no ha llegado.", "¿Hay alguien ahí?"])
        page.reload()  # what the server holds: each message once
        expect(page.locator(".msg.guest .text")).to_have_text(
            ["Hola, mi pedido no ha llegado.", "¿Hay alguien ahí?"])
    visitor.close()


def test_each_half_of_the_counter_speaks_its_side_s_language(browser, tmp_path):
    """The counter's two halves: each labelled in its side's language (a picked language
    relabels its half), the other side's words named in the reader's language."""
    with app(tmp_path) as (url, _):
        page = new_page(browser.new_context(locale="ja-JP"))
        page.goto(f"{url}/counter")
        left, right = page.locator("#side-a"), page.locator("#side-b")
        expect(left.locator("textarea")).to_have_attribute("placeholder",
                                                           catalog("ja").group("guest")["placeholder"])
        assert left.get_attribute("lang") == "ja"
        right.locator("select.language").select_option("es")
        expect(right.locator("textarea")).to_have_attribute("placeholder",
                                                            catalog("es").group("guest")["placeholder"])
        assert right.get_attribute("lang") == "es"
        assert right.locator("button[type=submit]").get_attribute("aria-label") == catalog("es").group("guest")["send"]
        left.locator("textarea").fill("駅はどこですか？")
        left.locator("textarea").press("Enter")
        expect(right.locator(".msg.theirs .orig")).to_have_text("Japonés: 駅はどこですか？")
        page.context.close()


# A socket that never gets past CONNECTING, as a slow network or a busy server leaves it: its
# send() throws, as a real one does then (HTML's WebSocket send(), step 1: InvalidStateError).
_CONNECTING = """window.WebSocket = function () {
  this.readyState = 0;
  this.send = function () { throw new DOMException("still connecting", "InvalidStateError"); };
  this.close = function () {};
};"""


def test_a_half_picked_before_the_socket_opens_still_speaks_its_language(browser, tmp_path):
    """Picking a language before the page's socket is open relabels the half: the socket's
    send() throws then, and must not stop it (the hello, once open, carries the languages)."""
    with app(tmp_path) as (url, _):
        page = new_page(browser.new_context(locale="ja-JP"))
        page.add_init_script(_CONNECTING)
        page.goto(f"{url}/counter")
        right = page.locator("#side-b")
        right.locator("select.language").select_option("es")
        expect(right.locator("textarea")).to_have_attribute("placeholder",
                                                            catalog("es").group("guest")["placeholder"])
        assert right.get_attribute("lang") == "es"
        page.context.close()
