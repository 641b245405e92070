"""The chat page in one language, on the real DOM (Debian's chromium, Playwright): a French
browser sees no English string, a Japanese one no English and no Chinese string — Chainlit's
own strings and the app's alike (composer, buttons, profile picker, starters, pickers, and a
translation's own meta line).

What the page shows is read as a reader gets it: the rendered text, the title, placeholders
and labels. Two things on it are not the page's words: the product's name, and the starters'
example sentences (each in its own language: the point of a starter), which are taken out.
The logic under these pages (which language, which words): tests/test_chat_words.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from hymt_chat.lang.endonyms import names_in
from hymt_chat.lang.languages import LANGUAGES
from hymt_chat.modes.page_text import STARTERS, PageText
from hymt_chat.room.chat_words import flat
from hymt_chat.words.catalogs import catalog
from hymt_chat.words.source import CHAT as ENGLISH
from tests.support.browser import ANSWER, choose, new_page, send
from tests.support.tabs import app

pytestmark = pytest.mark.slow

TRANSLATIONS = Path(__file__).resolve().parent.parent / ".chainlit" / "translations"
_SEEN = """() => {
  const said = [document.title, document.body.innerText];
  document.querySelectorAll("[placeholder], [aria-label], [title], [alt]").forEach(e => {
    ["placeholder", "aria-label", "title", "alt"].forEach(a => { if (e.getAttribute(a)) said.push(e.getAttribute(a)); });
  });
  return said.join("\\n");
}"""
_NOT_WORDS = ("hymt-chat", *(teaser for _, teaser, _ in STARTERS))


def _strings(tag: str) -> set[str]:
    return set(flat(json.loads((TRANSLATIONS / f"{tag}.json").read_text("utf-8"))).values())


def _seen(page: Page) -> str:
    # The page's script relabels Chainlit's English screen-reader labels as they appear, once
    # its words have come (public/banner.js): read the page once they have.
    expect(page.locator(".sr-only").filter(has_text=re.compile(r"^(Toggle theme|Close)$"))
           ).to_have_count(0)
    seen = page.evaluate(_SEEN)
    for name in _NOT_WORDS:
        seen = seen.replace(name, " ")
    return seen


@pytest.fixture(scope="module")
def chat_url(tmp_path_factory):
    """One app for the module's pages (the model is not what is under test)."""
    with app(tmp_path_factory.mktemp("chat")) as (url, _):
        yield url


def _open(browser: Browser, url: str, locale: str) -> Page:
    context = browser.new_context(locale=locale, viewport={"width": 1280, "height": 800})
    page = new_page(context)
    page.goto(url)
    page.wait_for_selector("#starters button:not([disabled])")
    # The page's script has put its words in the few places Chainlit writes English.
    expect(page.locator("img.logo[alt=logo]")).to_have_count(0)
    return page


def _composer(code: str) -> str:
    """What the Translator's empty box says on a first load in *code*: which languages it
    translates between ("Auto-detect → English: …", in the page's language)."""
    page = PageText.of(code)
    return page.fill("placeholder_pair", pair=f"{page['auto']} → {page.name_of('en')}")


def test_a_french_browser_sees_the_chat_page_in_french_only(browser, chat_url):
    french = _strings("fr-FR") | set(catalog("fr").group("chat").values()) | set(names_in("fr").values())
    english = ({s for s in _strings("en-US") | set(ENGLISH.values())
                | set(names_in("en").values()) if len(s) > 2} - french)
    page = _open(browser, chat_url, "fr-FR")
    assert page.locator("html").get_attribute("lang") == "fr"
    expect(page.locator("#chat-input")).to_have_attribute("placeholder", _composer("fr"))
    # A translation's own lines speak French too: its meta line names the languages in French.
    send(page, "Bonjour à tous, merci de votre patience.")
    expect(page.locator(ANSWER).last).to_have_text("EN:Bonjour à tous, merci de votre patience.")
    expect(page.get_by_text(re.compile(r"^Français → Anglais · "))).to_be_visible()
    page.click("#chat-settings-open-modal")  # the pickers
    expect(page.get_by_text(catalog("fr").group("chat")["from"], exact=True)).to_be_visible()
    seen = _seen(page)
    shown = [s for s in english if re.search(rf"(?<!\w){re.escape(s)}(?!\w)", seen)]
    # and words Chainlit's page writes in English outside its translations (screen-reader
    # labels: "Toggle theme", "Close"), with the commonest of any English sentence
    common = re.findall(r"\b(?:the|and|your|you|with|here|this|please|new|close|open|toggle|"
                        r"theme|logo|search|settings|loading)\b", seen, re.I)
    assert shown == [] and common == [], seen
    # The reader picks Japanese for the page, in the settings where each language is named
    # in itself: the page comes back in Japanese, and stays so (the choice is kept).
    choose(page, "page_language", "日本語")
    confirm = flat(json.loads((TRANSLATIONS / "fr-FR.json").read_text("utf-8")))
    page.get_by_role("button", name=confirm["common.actions.confirm"]).click()
    japanese = _composer("ja")
    expect(page.locator("#chat-input")).to_have_attribute("placeholder", japanese)
    assert page.locator("html").get_attribute("lang") == "ja"
    page.goto(chat_url)
    expect(page.locator("#chat-input")).to_have_attribute("placeholder", japanese)
    page.context.close()


def test_a_japanese_browser_sees_the_chat_page_with_no_english_or_chinese(browser, chat_url):
    japanese = _strings("ja") | set(catalog("ja").group("chat").values())
    chinese = ({s for s in _strings("zh-CN") | set(catalog("zh").group("chat").values()) if len(s) > 1}
               - japanese) | {lang.chinese for lang in LANGUAGES}
    page = _open(browser, chat_url, "ja-JP")
    assert page.locator("html").get_attribute("lang") == "ja"
    expect(page.locator("#chat-input")).to_have_attribute("placeholder", _composer("ja"))
    page.click("#chat-settings-open-modal")
    expect(page.get_by_text(catalog("ja").group("chat")["into"], exact=True)).to_be_visible()
    seen = _seen(page)
    assert re.findall(r"[A-Za-z]+", seen) == [], seen
    assert [z for z in chinese if z in seen] == [], seen
    page.context.close()
