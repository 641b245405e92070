"""Every page of the app, in five languages, read in a real Chromium (Debian's, Playwright):
the chat page in the Translator and in the Support agent mode, the kiosk, a room's guest page
(and the room's closed and unknown links, a closed desk, the counter), and the desk's page
(and the agents' sign-in page). On each, everything a person can make the page say is made to
happen (the menu of commands, every command's reply, every notice and error, a refused file of
each kind, a document translated, the PDF viewer, the settings), and after each step the page
is read as its reader gets it: its text, title, placeholders, labels and tooltips. No English
may be left on it.

English is found three ways:

* a fragment of the app's own English (every message of ``hymt_chat/words/source.py`` and
  Chainlit's ``en-US.json``, cut at its ``{{slots}}``: the pieces of two words or more and 8
  characters or more), anywhere on the page;
* common English words (:data:`COMMON`), as whole words, unless the page's language writes the
  same word (French "message");
* on a page whose language is not written in Latin letters (Japanese, Arabic, Chinese), any
  Latin word at all: English the catalogs never had ("Read aloud") shows up there too.

What is not the page's words is taken out first: what the test typed, the engine's answers
(the stand-in model wraps each in ``⟦…⟧``), file names, links, the product's and formats'
names, and languages named in themselves (the kiosk's buttons, the pickers).

The app is the real one (``chainlit run app.py``) on the instant stand-in model of
``tests/support/tabs.py``; the desk's page needs agents who can sign in, so it has an app of
its own. Each page kind is one browser context per language."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Coroutine, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from playwright.sync_api import Browser, Page, expect

from hymt_chat.lang.endonyms import endonym
from hymt_chat.lang.languages import LANGUAGES
from hymt_chat.modes.page_text import STARTERS, PageText
from hymt_chat.modes.wording import WELCOME_LINES
from hymt_chat.room.chat_words import flat
from hymt_chat.service.auth import hash_password
from hymt_chat.words.catalogs import catalog
from hymt_chat.words.source import CHAT, GUEST, PLURALS
from tests.support import pdf_files
from tests.support.browser import new_page
from tests.support.tabs import Tab, app, open_room

pytestmark = pytest.mark.slow

LOCALES = ("fr-FR", "ja-JP", "ar-SA", "zh-CN", "es-ES")
ROOT = Path(__file__).resolve().parent.parent
CHAINLIT_ENGLISH = ROOT / ".chainlit" / "translations" / "en-US.json"
LIMIT = 300  # HYMT_MAX_INPUT_CHARS: a paste over it is refused by the page
# HYMT_KIOSK_IDLE_SECONDS. A conversation's steps run on a kiosk whose idle time no step on a
# loaded host comes near (a slow answer must not reset the screen mid-test); the countdown is
# read on a kiosk of its own, whose countdown shows in the last 8 s of a short idle time.
PATIENT = 3600
IDLE = 16
PASSWORD = "correct horse battery"

# Names that are the same in every language: the product's, the model's, formats'.
ALLOWED = ("hymt-chat", "Hunyuan-MT-Chimera", "Hunyuan-MT", "Hy-MT2", "PDF", "Word", "Excel",
           "PowerPoint", "OpenDocument", "CSV", "Markdown", "JSON", "YAML", "XLIFF", "SRT",
           "UTF-8", "OCR", "HYMT_AGENTS", "Chainlit", "PO", "PNG", "JPEG", "WebP",
           "espeak-ng", "Piper",  # the voices' programs, named as they name themselves
           "Enter",  # the key's name, as keyboards print it
           "alice")  # the sign-in page's example name, typed in Latin letters
# Words of any English sentence; a language that writes the same word keeps it (see _common).
COMMON = ("the", "and", "your", "you", "with", "this", "please", "translate", "message",
          "here", "there", "still", "tap", "read", "aloud", "more", "another", "language",
          "languages", "send", "nothing", "cannot", "can't", "don't", "not", "for", "of", "is",
          "are", "to", "it")

# The commands of the Translator and the Support agent: what a person types, in any language.
COMMANDS = ("to", "swap", "detect", "reset", "customer", "agent", "tone", "glossary",
            "transcript", "room", "desk", "cancel")
# What follows a command ("/glossary … · list · remove <term> · clear"), in any language.
SUBCOMMANDS = ("add", "list", "remove", "clear", "close", "guests", "take", "block", "neutral",
               "formal", "friendly")
COMMAND = re.compile(rf"/(?:{'|'.join(COMMANDS)})\b(?:[ \t]+(?:(?:add|list|remove|clear|close|"
                     r"guests|take|block|neutral|formal|friendly|JD-Express|[a-z]{2})\b|\|))*")

# What the test types, in each page's language, and the customer's German.
SAID = {
    "fr": "Bonjour, ma commande n'est pas encore arrivée.",
    "ja": "こんにちは、注文した荷物がまだ届いていません。",
    "ar": "مرحبا، لم يصل طلبي بعد. هل يمكنكم مساعدتي؟",
    "zh": "你好，我的订单还没有到，请帮我查一下。",
    "es": "Hola, mi pedido todavía no ha llegado.",
}
GERMAN = "Guten Tag, meine Bestellung ist noch nicht angekommen."
ENGLISH_TEXT = "Good morning, the parcel will arrive tomorrow before noon."
REPLY = "I am sorry about the delay, let me check your order right now."
FILES = {"setup.exe": b"MZ\x90\x00" + b"\x00" * 200,
         "empty.txt": b"",
         "broken.pdf": b"This is not a PDF at all.\n" * 20}
LETTER = "Paragraphe unique de la lettre envoyée hier."  # a document's text, translated

# The page as its reader gets it (or the part of it in *root*): its title, its text, and the
# words it gives to screen readers and tooltips.
_SEEN = """(root) => {
  const top = root ? document.querySelector(root) : document.body;
  const said = root ? [top.innerText] : [document.title, top.innerText];
  top.querySelectorAll("[placeholder], [aria-label], [title], [alt]").forEach(e => {
    ["placeholder", "aria-label", "title", "alt"].forEach(a => {
      if (e.getAttribute(a)) said.push(e.getAttribute(a));
    });
  });
  return said.join("\\n");
}"""


# --- what English is ------------------------------------------------------------------------


def _squash(text: str) -> str:
    return " ".join(text.split())


@cache
def english_fragments() -> tuple[str, ...]:
    """The app's and Chainlit's English, cut at the slots: pieces a page in another language
    must never show."""
    sentences = [*CHAT.values(), *GUEST.values(),
                 *(form for forms in PLURALS.values() for form in forms),
                 *flat(json.loads(CHAINLIT_ENGLISH.read_text("utf-8"))).values()]
    found: set[str] = set()
    for sentence in sentences:
        for part in re.split(r"\{\{\s*[\w.]+\s*\}\}", sentence):
            part = _squash(part).strip(" '\"“”‘’:;,.·→⇄()-—…")
            words = part
            for name in ALLOWED:
                words = words.replace(name, " ")
            if len(re.findall(r"[A-Za-z]{2,}", words)) >= 2 and len(part) >= 8:
                found.add(part)
    return tuple(sorted(found, key=len, reverse=True))


@cache
def _own_words(code: str) -> frozenset[str]:
    """The words the page's language writes (lower case), from its catalog."""
    said = catalog(code)
    text = " ".join([*said.group("chat").values(), *said.group("guest").values()])
    return frozenset(w.lower() for w in re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", text))


def _common(code: str) -> re.Pattern[str]:
    words = [w for w in COMMON if w not in _own_words(code)]
    return re.compile(r"(?<![A-Za-z'/])(" + "|".join(map(re.escape, words)) + r")(?![A-Za-z'])",
                      re.IGNORECASE)


def _latin_script(code: str) -> bool:
    return code in ("fr", "es")


def english_in(seen: str, code: str) -> list[str]:
    """The English the page's text *seen* (in language *code*) shows."""
    seen = _squash(seen)
    found = [f for f in english_fragments()
             if re.search((r"(?<!\w)" if f[0].isalnum() else "") + re.escape(f)
                          + (r"(?!\w)" if f[-1].isalnum() else ""), seen)]
    found += [f"word “{w}”" for w in sorted({m.group(1) for m in _common(code).finditer(seen)})]
    if not _latin_script(code):
        rest = seen
        for name in ALLOWED:
            rest = rest.replace(name, " ")
        found += [f"Latin “{w}”" for w in
                  sorted(set(re.findall(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]", rest)))]
    return found


def _not_words(seen: str, typed: list[str]) -> str:
    """*seen* without what is not the page's own words: the engine's answers, what the test
    typed, links, file names, language codes, and languages named in themselves."""
    seen = re.sub(r"⟦.*?⟧", " ", seen, flags=re.S)
    seen = re.sub(r"https?://\S+", " ", seen)
    # The commands, as typed ("/tone neutral | formal | friendly"), and their names in the
    # composer's menu of commands, each on a line of its own.
    seen = re.sub(COMMAND, " ", seen)
    seen = re.sub(rf"(?m)^\s*(?:{'|'.join(COMMANDS)})\s*$", " ", seen)
    for text in sorted(typed, key=len, reverse=True):
        seen = seen.replace(text, " ")
    seen = re.sub(r"[\w.-]+\.(?:exe|txt|pdf|png|csv|md)\b", " ", seen)
    seen = re.sub(r"(?<![A-Za-z])(?:exe|txt|pdf|png|csv|md)(?![A-Za-z])", " ", seen)  # badges
    seen = re.sub(rf"(?<![A-Za-z])(?:{'|'.join(SUBCOMMANDS)})(?![A-Za-z])", " ", seen)
    for line in WELCOME_LINES:  # the kiosk greets strangers in several languages on purpose
        seen = seen.replace(line, " ")
    seen = re.sub(r"\((?:[a-z]{2,3})(?:-[A-Za-z]{2,4})?\)", " ", seen)  # "(en)", "(zh-Hant)"
    for _, teaser, _ in STARTERS:
        seen = seen.replace(teaser, " ")
    for lang in sorted(LANGUAGES, key=lambda lang: -len(endonym(lang.code))):
        seen = seen.replace(endonym(lang.code), " ")
    return seen


class Reader:
    """One page in one language: what the test typed, and the English found after each step."""

    def __init__(self, page: Page, locale: str) -> None:
        self.page, self.code = page, PageText.of(locale.split("-")[0]).language
        # what the test types, and the words of it the app's replies quote
        self.typed: list[str] = [*SAID.values(), GERMAN, ENGLISH_TEXT, REPLY, LETTER, "xx",
                                 "wrong", "frobnicate"]
        self.found: dict[str, list[str]] = {}

    def read(self, step: str, root: str | None = None) -> None:
        """Read the page (or its part *root*, a selector) after *step*."""
        # The page's script words what Chainlit draws in English in the mutation observer's
        # callback, before any later script of the page runs: read it as it is now.
        seen = _not_words(self.page.evaluate(_SEEN, root), self.typed)
        english = english_in(seen, self.code)
        if english:
            self.found[step] = english

    def verdict(self) -> None:
        assert self.found == {}, "English on the page:\n" + "\n".join(
            f"  after {step}: {english}" for step, english in self.found.items())


# --- the apps -------------------------------------------------------------------------------


def _engine(prompt: str) -> str:
    """The stand-in's "translation": the text, marked as the engine's (taken out of what the
    page shows before it is read)."""
    return "⟦" + prompt.rsplit("\n\n", 1)[-1] + "⟧"


@pytest.fixture(scope="module")
def open_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app as a person finds it without signing in (no agents): the Translator, the
    Support agent, the kiosk and rooms."""
    # Every page is one user here (127.0.0.1): more than a person's 20 jobs a minute.
    with app(tmp_path_factory.mktemp("open"), answer=_engine, HYMT_MAX_INPUT_CHARS=str(LIMIT),
             HYMT_DEMO_MODEL="1", HYMT_KIOSK_IDLE_SECONDS=str(PATIENT),
             HYMT_RATE_LIMIT="1000/minute") as (url, _):
        yield url


@pytest.fixture(scope="module")
def hasty_kiosk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The open app with a short idle time: its kiosk's countdown comes within the test."""
    with app(tmp_path_factory.mktemp("hasty"), answer=_engine, HYMT_DEMO_MODEL="1",
             HYMT_KIOSK_IDLE_SECONDS=str(IDLE), HYMT_RATE_LIMIT="1000/minute") as (url, _):
        yield url


@pytest.fixture(scope="module")
def staffed_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An app with an agent who can sign in: its desk takes visitors."""
    agents = f"alice:{hash_password(PASSWORD, n=2**10)}"
    with app(tmp_path_factory.mktemp("staffed"), answer=_engine, HYMT_AGENTS=agents,
             CHAINLIT_AUTH_SECRET="s" * 64, HYMT_DESK_PER_VISITOR="10",
             HYMT_DESK_STARTS="100/hour") as (url, _):  # every visitor is 127.0.0.1 here
        yield url


# --- moves on the chat page -----------------------------------------------------------------


def _chat(browser: Browser, url: str, locale: str, init_script: str | None = None) -> Page:
    context = browser.new_context(locale=locale, viewport={"width": 1280, "height": 900},
                                  accept_downloads=True)
    page = new_page(context)
    if init_script:
        page.add_init_script(init_script)
    page.goto(url)
    page.wait_for_selector("#starters button:not([disabled])")
    # The page's script has put its words where Chainlit writes English (public/banner.js).
    expect(page.locator("img.logo[alt=logo]")).to_have_count(0)
    return page


def _profile(page: Page, name: str) -> None:
    page.click("#chat-profiles")
    page.click(f"[data-test='select-item:{name}']")
    expect(page.locator(".ai-message").first).to_be_visible()
    _settled(page)


def _settled(page: Page) -> None:
    """No task of the tab runs (Chainlit shows its Stop button while one does)."""
    expect(page.locator("#stop-button")).to_have_count(0)


def _send(page: Page, text: str, reader: Reader) -> None:
    """Send *text* with the send button (Enter on a "/command" may pick the command menu's
    entry), and wait for the app's answer."""
    reader.typed.append(text)
    before = page.locator(".ai-message").count()
    page.fill("#chat-input", text)
    page.click("#chat-submit")
    expect(page.locator(".ai-message").nth(before)).to_be_visible()
    _settled(page)


def _upload(page: Page, path: Path, reader: Reader) -> None:
    reader.typed.append(path.name)
    before = page.locator(".ai-message").count()
    page.set_input_files("#upload-button-input", str(path))
    expect(page.locator("#message-composer").get_by_text(path.name)).to_be_visible()
    expect(page.locator("#chat-submit")).to_be_enabled()  # uploaded
    page.click("#chat-submit")
    expect(page.locator(".ai-message").nth(before)).to_be_visible()
    expect(page.locator(".ai-message").last).to_contain_text(path.name)
    _settled(page)


def _menu(page: Page, reader: Reader, step: str) -> None:
    """The composer's menu of commands, which a "/" opens."""
    page.click("#chat-input")
    page.keyboard.type("/")
    expect(page.locator("[cmdk-list] [cmdk-item]").first).to_be_visible()
    reader.read(step)
    page.keyboard.press("Escape")
    page.fill("#chat-input", "")


def _settings(page: Page, reader: Reader, step: str) -> None:
    page.click("#chat-settings-open-modal")
    expect(page.get_by_role("dialog")).to_be_visible()
    reader.read(step)
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)


# --- the pages ------------------------------------------------------------------------------


@pytest.mark.parametrize("locale", LOCALES)
def test_the_translator_speaks_the_readers_language(browser, open_app, locale, tmp_path):
    for name, data in FILES.items():
        (tmp_path / name).write_bytes(data)
    page = _chat(browser, open_app, locale)
    reader = Reader(page, locale)
    code = reader.code
    try:
        reader.read("the first load")
        _menu(page, reader, "the menu of commands")
        for command in ("/swap", "/to", "/to xx", "/detect", f"/detect {SAID[code]}",
                        "/to de"):
            _send(page, command, reader)
            reader.read(command)
        _send(page, GERMAN, reader)  # already in the target language: the model is not asked
        reader.read("a text already in the target language")
        _send(page, SAID[code], reader)  # translated
        reader.read("a translation")
        for command in ("/detect", "/swap", "/reset", "/frobnicate"):
            _send(page, command, reader)
            reader.read(command)
        page.fill("#chat-input", "   ")  # an empty message is not sent
        expect(page.locator("#chat-submit")).to_be_disabled()
        page.fill("#chat-input", "Une très longue phrase. " * 20)  # over the limit
        page.keyboard.press("Enter")
        expect(page.locator("#hymt-banner[data-kind=limit]")).to_be_visible()
        reader.read("a paste over the limit")
        page.fill("#chat-input", "")
        for name in FILES:
            _upload(page, tmp_path / name, reader)
            reader.read(f"the file {name}")
        (tmp_path / "lettre.txt").write_text(LETTER, encoding="utf-8")
        (tmp_path / "lettre.pdf").write_bytes(pdf_files.paragraphs([LETTER]))
        for name in ("lettre.txt", "lettre.pdf"):
            _upload(page, tmp_path / name, reader)
            stem, kind = name.rsplit(".", 1)
            expect(page.locator(f"a.inline-file[download='{stem}.en.{kind}']")).to_be_visible()
            reader.read(f"the document {name}, translated")
        page.locator(".inline-pdf").last.click()  # the PDF's preview, in a larger view
        expect(page.get_by_role("dialog")).to_be_visible()
        reader.read("the PDF in a larger view")
        page.keyboard.press("Escape")
        expect(page.get_by_role("dialog")).to_have_count(0)
        _settings(page, reader, "the settings")
    finally:
        page.context.close()
    reader.verdict()


@pytest.mark.parametrize("locale", LOCALES)
def test_the_support_agent_speaks_the_readers_language(browser, open_app, locale):
    page = _chat(browser, open_app, locale)
    reader = Reader(page, locale)
    reader.typed += ["Zorblax", "Quibbit", "Frumple", "Glorp"]
    try:
        _profile(page, "Support agent")
        reader.read("the agent's first load")
        _menu(page, reader, "the agent's menu of commands")
        for command in ("/customer xx", "/agent", "/tone wrong", "/tone formal",
                        "/glossary list", "/glossary add Zorblax = Quibbit",
                        "/glossary add Frumple = Glorp", "/glossary list",
                        "/glossary remove Zorblax", "/glossary clear", "/transcript",
                        "/customer de"):
            _send(page, command, reader)
            reader.read(command)
        _send(page, GERMAN, reader)
        reader.read("the customer's message")
        _send(page, REPLY, reader)
        reader.read("the agent's reply")
        _send(page, "/transcript", reader)
        reader.read("/transcript with a conversation")
        for command in ("/room guests 2", "/room", "/room guests 2", "/room close", "/desk",
                        "/frobnicate"):
            _send(page, command, reader)
            reader.read(command)
        _settings(page, reader, "the agent's settings")
    finally:
        page.context.close()
    reader.verdict()


# Debian's headless chromium has no speech voices: one for each language the kiosk test
# taps, so that "Read aloud" shows.
_VOICES = """
window.SpeechSynthesisUtterance = function (text) { this.text = text; };
speechSynthesis.getVoices = function () {
  return ["de-DE", "es-ES"].map(function (tag) {
    return { lang: tag, name: "Test " + tag, voiceURI: tag, localService: true, "default": true };
  });
};
speechSynthesis.speak = function () {};
speechSynthesis.cancel = function () {};
"""


@pytest.mark.parametrize("locale", LOCALES)
def test_the_kiosk_speaks_the_readers_language(browser, open_app, locale):
    page = _chat(browser, open_app, locale, init_script=_VOICES)
    reader = Reader(page, locale)
    code = reader.code
    german = page.get_by_role("button", name="Deutsch", exact=True)
    try:
        _profile(page, "Kiosk")
        expect(page.locator("body.hymt-kiosk")).to_have_count(1)
        reader.read("the kiosk's welcome")
        _send(page, SAID[code], reader)  # a text before a language
        reader.read("a text before a language")
        before = page.locator(".ai-message").count()
        german.last.click()  # the text waiting, into German
        expect(page.locator(".ai-message").nth(before)).to_be_visible()
        _settled(page)
        expect(page.locator(".hymt-tts-button").last).to_be_visible()
        reader.read("a language button")
        before = page.locator(".ai-message").count()
        answer = page.locator(".ai-message", has_text="⟦").last
        answer.get_by_role("button").last.click()  # another language
        expect(page.locator(".ai-message").nth(before)).to_be_visible()
        _settled(page)
        reader.read("another language")
        before = page.locator(".ai-message").count()
        page.locator(".ai-message").last.get_by_role("button").last.click()  # more languages
        expect(page.locator(".ai-message").nth(before)).to_be_visible()
        _settled(page)
        reader.read("more languages")
        before = page.locator(".ai-message").count()
        german.last.click()  # the text, into German again
        expect(page.locator(".ai-message").nth(before)).to_be_visible()
        _settled(page)
        _send(page, GERMAN, reader)  # already German
        reader.read("a text already in the language")
    finally:
        page.context.close()
    reader.verdict()


@pytest.mark.parametrize("locale", LOCALES)
def test_the_kiosks_countdown_speaks_the_readers_language(browser, hasty_kiosk, locale):
    page = _chat(browser, hasty_kiosk, locale, init_script=_VOICES)
    reader = Reader(page, locale)
    german = page.get_by_role("button", name="Deutsch", exact=True)
    try:
        _profile(page, "Kiosk")
        expect(page.locator("body.hymt-kiosk")).to_have_count(1)
        _send(page, SAID[reader.code], reader)  # something on screen to forget
        # Nobody touches the screen: the countdown, then a fresh start where a language
        # button comes before any text.
        expect(page.locator("#hymt-kiosk-idle[data-open]")).to_be_visible()
        reader.read("the idle countdown")
        expect(page.locator("[data-step-type=user_message]")).to_have_count(0)
        # The whole wipe, not its middle: the welcome alone (the reset removes one message at
        # a time, and a tap on a message on its way out is lost).
        expect(page.locator("[data-step-type=assistant_message]")).to_have_count(1)
        expect(german.first).to_be_visible()
        _settled(page)
        before = page.locator(".ai-message").count()
        german.first.click()
        expect(page.locator(".ai-message").nth(before)).to_be_visible()
        reader.read("a language button before a text")
    finally:
        page.context.close()
    reader.verdict()


class _Loop:
    """An event loop in a thread of its own, for the agent's socket.io tab (Playwright's sync
    API owns the test's thread)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, work: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(180)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def _blank_png(path: Path) -> Path:
    Image.new("RGB", (64, 48), "white").save(path, "PNG")
    return path


def _guest_words(code: str) -> dict[str, str]:
    return catalog(code).group("guest")


@pytest.mark.parametrize("locale", LOCALES)
def test_a_rooms_guest_page_speaks_the_readers_language(browser, open_app, locale, tmp_path):
    loop = _Loop()
    agent = Tab(open_app, profile="Support agent")
    loop.run(agent.__aenter__())
    context = browser.new_context(locale=locale, viewport={"width": 390, "height": 844})
    guest = new_page(context)
    reader = Reader(guest, locale)
    code = reader.code
    words = _guest_words(code)
    try:
        token = loop.run(open_room(agent))
        guest.goto(f"{open_app}/room/{token}")
        expect(guest.locator("#language")).to_have_value(code)
        expect(guest.locator("#send")).to_have_text(words["send"])
        reader.read("the guest page")
        guest.fill("#text", SAID[code])
        guest.press("#text", "Enter")
        expect(guest.locator(".msg.guest .orig")).to_be_visible()
        reader.read("the guest's message")
        loop.run(agent.wait("Customer"))
        loop.run(agent.send(REPLY))
        expect(guest.locator(".msg.agent")).to_be_visible()
        reader.read("the agent's reply")
        guest.set_input_files("#photo", str(_blank_png(tmp_path / "blank.png")))
        expect(guest.locator("#status")).to_have_text(words["photo_refused"])
        reader.read("a photo with no text")
        loop.run(agent.send("/room close"))
        expect(guest.locator("#status")).to_have_text(words["closed"])
        reader.read("the room closed")
        guest.reload()  # the closed link's page
        expect(guest.locator("p")).to_have_text(words["closed"])
        reader.read("the closed link")
        guest.goto(f"{open_app}/room/{'x' * 24}")  # a link that never was
        expect(guest.locator("p")).to_have_text(words["invalid"])
        reader.read("a link that never was")
        guest.goto(f"{open_app}/desk")  # no agent can sign in here: the desk is closed
        expect(guest.locator("p")).to_have_text(words["desk_closed"])
        reader.read("a closed desk")
        # Two people at one counter, one screen: each half speaks its side's language (the
        # other half, the other person's): the reader's half is read.
        guest.goto(f"{open_app}/counter")
        half = f"#side-a[lang='{code}'], #side-b[lang='{code}']"
        expect(guest.locator(half).locator("textarea")).to_have_attribute(
            "placeholder", words["placeholder"])
        reader.read("the counter", root=half)
    finally:
        context.close()
        loop.run(agent.__aexit__(None, None, None))
        loop.stop()
    reader.verdict()


@pytest.mark.parametrize("locale", LOCALES)
def test_the_desk_page_speaks_the_readers_language(browser, staffed_app, locale):
    context = browser.new_context(locale=locale, viewport={"width": 390, "height": 844})
    page = new_page(context)
    reader = Reader(page, locale)
    code = reader.code
    words = _guest_words(code)
    try:
        page.goto(f"{staffed_app}/desk")
        expect(page.locator("#start")).to_have_text(words["start"])
        reader.read("the desk page")
        page.fill("#text", SAID[code])
        page.click("#start")
        expect(page.locator(".msg.guest")).to_be_visible()
        expect(page.locator("#status")).to_have_text(words["waiting"])
        reader.read("a conversation started")
        page.goto(f"{staffed_app}/login")  # where the agents sign in
        expect(page.locator("#email")).to_be_visible()
        reader.read("the agents' sign-in page")
    finally:
        context.close()
    reader.verdict()
