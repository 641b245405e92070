"""A Japanese guest's page on the real DOM (Debian's chromium, Playwright): every word they
can see or hear (the title, labels, placeholders, the notices, the closed link's page) is
Japanese — no English and no Chinese string — and the picker names languages in themselves.

The app is real; the model is the instant stand-in of ``tests/support/tabs.py`` (it is not
what is under test here); the agent is a socket.io tab like a browser's, run in a thread of
its own because Playwright's sync API owns the test's thread."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Coroutine
from typing import Any

from playwright.sync_api import Page, expect

from hymt_chat.lang.languages import LANGUAGES
from hymt_chat.room.words_table import STATIC
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
_CHINESE = ({v for v in STATIC["zh"].values() if v not in STATIC["ja"].values()}
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
            guest = phone.new_page()
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
            expect(guest.locator("#status")).to_have_text(STATIC["ja"]["closed"])
            assert _foreign(guest) == []
            guest.reload()  # the closed link's page
            expect(guest.locator("p")).to_have_text(STATIC["ja"]["closed"])
            assert _foreign(guest) == []
            phone.close()
        finally:
            loop.run(agent.__aexit__(None, None, None))
            loop.stop()
