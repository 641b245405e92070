"""The customer's pages on a phone: the room's guest page, the desk in the website
widget (its start page, then the conversation in the same frame) and the kiosk, each at 360×640
and 390×844, in Debian's chromium driven by Playwright.

On each: the text box takes most of the width; every button, select and text box is a finger's
size (44 px or more each way); the language choice and the text box are on the first screen,
uncovered, without scrolling; nothing overflows sideways. The photo button is an icon named by
the page's own word for it. The screenshots the docs show are taken on the way
(``{guest,widget,kiosk}-<width>x<height>.png``, in the ``shots`` folder: ``make screenshots``
puts them in ``docs/screenshots``).

The app is real; the model is the instant stand-in of ``tests/support/tabs.py`` answering from
a phrasebook (it is not what is under test here); the room's agent is a socket.io tab like a
browser's, run in a thread of its own because Playwright's sync API owns the test's thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Frame, Locator, Page, ViewportSize, expect

from hymt_chat.modes.kiosk import KIOSK_LANGUAGES
from hymt_chat.service.auth import hash_password
from tests.support.browser import new_page
from tests.support.phrasebook import phrasebook
from tests.support.ports import free_port
from tests.support.tabs import Tab, app, open_room

pytestmark = pytest.mark.slow

SIZES = [ViewportSize(width=360, height=640), ViewportSize(width=390, height=844)]
TAP = 44  # px: the smallest tap target each way (WCAG 2.5.5, Apple's and Material's guides)
WIDE = 0.6  # the text box's share of the screen's width, at least

CUSTOMER = ["Hola, mi paquete no ha llegado todavía.", "¿Pueden ayudarme, por favor?"]
AGENT = ["I am sorry about the delay.", "Your parcel leaves our warehouse today."]
# Both ways: the room's back-translation check reads each translation back.
BOOK = phrasebook({
    CUSTOMER[0]: {"en": "Hello, my parcel has not arrived yet."},
    "Hello, my parcel has not arrived yet.": {"es": CUSTOMER[0]},
    CUSTOMER[1]: {"en": "Can you help me, please?"},
    "Can you help me, please?": {"es": CUSTOMER[1]},
    AGENT[0]: {"es": "Siento mucho el retraso."},
    "Siento mucho el retraso.": {"en": AGENT[0]},
    AGENT[1]: {"es": "Su paquete sale hoy de nuestro almacén."},
    "Su paquete sale hoy de nuestro almacén.": {"en": AGENT[1]},
    "Hola, necesito ayuda con mi pedido.": {"en": "Hello, I need help with my order."},
    "Hello, I need help with my order.": {"es": "Hola, necesito ayuda con mi pedido."},
})

# The frame's controls a person taps or types in, each with its size, and whether the page
# (the frame's document) scrolls sideways.
_LAYOUT = """() => {
  const controls = [];
  for (const el of document.querySelectorAll("button, select, textarea, input:not([type=hidden])")) {
    if (!el.getClientRects().length || getComputedStyle(el).visibility === "hidden") continue;
    const b = el.getBoundingClientRect();
    const name = (el.getAttribute("aria-label") || el.innerText || el.placeholder || "").trim();
    controls.push({what: `${el.tagName.toLowerCase()}#${el.id} "${name.slice(0, 30)}"`,
                   width: b.width, height: b.height});
  }
  const root = document.scrollingElement;
  return {controls, scrollWidth: root.scrollWidth, innerWidth: innerWidth, scrollX: scrollX,
          scrollY: scrollY};
}"""
# Is the element the one a finger meets at its centre (not under a bar, a button or a frame)?
_ON_TOP = """el => {
  const b = el.getBoundingClientRect();
  const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
  return !!hit && (hit === el || el.contains(hit));
}"""
# The text box's placeholder, typed in as its text: does it fit the box (no scrolling inside)?
_PLACEHOLDER_FITS = """el => {
  const fits = el.value === "" ? (() => {
    el.value = el.placeholder;
    const ok = el.scrollHeight <= el.clientHeight + 1 && el.scrollWidth <= el.clientWidth + 1;
    el.value = "";
    return ok;
  })() : true;
  return fits;
}"""


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


class _Site:
    """A shop's page on another origin (``localhost``; the app is ``127.0.0.1``) with the
    widget's one script tag, and the viewport tag every phone-ready site has."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.app_url = ""
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                page = ('<!doctype html><html lang="es"><head><meta charset="utf-8">'
                        '<meta name="viewport" content="width=device-width, initial-scale=1">'
                        f'<script src="{site.app_url}/desk/widget.js" async></script></head>'
                        "<body><h1>Tienda</h1><p>Zapatos, bolsos y mucho más.</p></body></html>")
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.end_headers()
                self.wfile.write(page.encode())

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.url = f"http://localhost:{port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def room_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app with no sign-in (a room's agent tab, the kiosk) on the phrasebook."""
    with app(tmp_path_factory.mktemp("phone-room"), answer=BOOK) as (url, _):
        yield url


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, _Site]]:
    """The app whose desk a shop's site embeds (agents configured: a desk takes visitors only
    then), and that site."""
    site = _Site(free_port())
    agents = f"alice:{hash_password('correct horse battery', n=2**10)}"
    try:
        with app(tmp_path_factory.mktemp("phone-desk"), answer=BOOK,
                 HYMT_WIDGET_ORIGINS=site.url, HYMT_AGENTS=agents,
                 CHAINLIT_AUTH_SECRET="s" * 64, HYMT_DESK_PER_VISITOR="10",
                 HYMT_DESK_STARTS="") as (url, _):
            site.app_url = url
            yield url, site
    finally:
        site.close()


def _name(size: ViewportSize) -> str:
    return f"{size['width']}x{size['height']}"


def _controls_fit(page: Page, frames: Sequence[Frame] = ()) -> None:
    """Every control of *page* (and of the documents of *frames* in it) is a finger's size,
    and none of those documents scrolls: not sideways, and not down to reach anything."""
    for frame in [page.main_frame, *frames]:
        layout = frame.evaluate(_LAYOUT)
        small = [c for c in layout["controls"] if c["width"] < TAP or c["height"] < TAP]
        assert small == [], f"{frame.url}: controls under {TAP} px: {small}"
        assert layout["scrollWidth"] <= layout["innerWidth"], (
            f"{frame.url} scrolls sideways: {layout['scrollWidth']} > {layout['innerWidth']}")
        assert layout["scrollX"] == 0 and layout["scrollY"] == 0, frame.url


def _on_the_first_screen(control: Locator, size: ViewportSize) -> None:
    """*control* is inside the screen (the top page's viewport) and nothing covers it."""
    box = control.bounding_box()
    assert box is not None
    assert 0 <= box["y"] and box["y"] + box["height"] <= size["height"], (
        f"{control} is outside the first screen: {box}")
    assert 0 <= box["x"] and box["x"] + box["width"] <= size["width"], (control, box)
    assert control.evaluate(_ON_TOP), f"{control} is covered"


def _fits_a_phone(page: Page, frames: list[Frame], composer: Locator, choice: list[Locator],
                  size: ViewportSize) -> None:
    """The phone's checks on *page* (and the documents of *frames* in it): *composer* is the
    text box, *choice* the language's controls."""
    _controls_fit(page, frames)
    box = composer.bounding_box()
    assert box is not None
    assert box["width"] >= WIDE * size["width"], (
        f"the text box is {box['width']:.0f} px wide of {size['width']}")
    assert composer.evaluate(_PLACEHOLDER_FITS), "the text box cuts its placeholder off"
    for control in [*choice, composer]:
        _on_the_first_screen(control, size)


def _is_dark(page_or_frame: Page | Frame) -> bool:
    """Light text on a dark page."""
    return bool(page_or_frame.evaluate("""() => {
      const lum = c => { const [r, g, b] = c.match(/[\\d.]+/g).map(Number);
                         return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
      const s = getComputedStyle(document.body);
      return lum(s.backgroundColor) < 80 && lum(s.color) > 180;
    }"""))


def _photo_word(frame: Page | Frame) -> str:
    """The page's own word for "Send a photo" (its words, from the server's catalog)."""
    return str(frame.evaluate(
        "() => JSON.parse(document.getElementById('room-config').textContent).words.photo"))


@pytest.mark.parametrize("size", SIZES, ids=_name)
def test_the_rooms_guest_page_fits_a_phone(browser: Browser, room_url: str,
                                           size: ViewportSize, shots: Path) -> None:
    """A Spanish customer's phone in a room with an agent: two messages each way."""
    loop = _Loop()
    agent = Tab(room_url, profile="Support agent")
    loop.run(agent.__aenter__())
    try:
        token = loop.run(open_room(agent))
        phone = browser.new_context(locale="es-ES", viewport=size)
        guest = new_page(phone)
        guest.goto(f"{room_url}/room/{token}")
        expect(guest.locator("#language")).to_have_value("es")
        photo = _photo_word(guest)
        # The photo button is an icon; its word names it for a screen reader.
        expect(guest.get_by_role("button", name=photo, exact=True)).to_be_visible()
        assert guest.locator("#photo-button").evaluate(
            "b => parseFloat(getComputedStyle(b).fontSize)") == 0
        _fits_a_phone(guest, [], guest.locator("#text"), [guest.locator("#language")], size)
        for number, text in enumerate(CUSTOMER, 1):
            guest.fill("#text", text)
            guest.press("#text", "Enter")
            expect(guest.locator(".msg.guest")).to_have_count(number)
        loop.run(agent.wait("Can you help me"))
        for number, text in enumerate(AGENT, 1):
            loop.run(agent.send(text))
            expect(guest.locator(".msg.agent")).to_have_count(number)
        expect(guest.locator(".msg.agent .text").last).to_have_text(
            "Su paquete sale hoy de nuestro almacén.")
        _fits_a_phone(guest, [], guest.locator("#text"), [guest.locator("#language")], size)
        guest.locator("#text").blur()  # the picture without the focus ring
        guest.screenshot(path=str(shots / f"guest-{_name(size)}.png"))
        guest.emulate_media(color_scheme="dark")
        assert _is_dark(guest)
        phone.close()
    finally:
        loop.run(agent.__aexit__(None, None, None))
        loop.stop()


@pytest.mark.parametrize("size", SIZES, ids=_name)
def test_the_desk_widget_fits_a_phone(browser: Browser, desk: tuple[str, _Site],
                                      size: ViewportSize, shots: Path) -> None:
    """A shop's page on a phone: the widget's button, the desk as a sheet over the page, then
    the conversation in it."""
    _, site = desk
    visitor = browser.new_context(locale="es-ES", viewport=size)
    page = new_page(visitor)
    page.goto(site.url)
    button = page.locator("#hymt-desk-button")
    expect(button).to_be_visible()
    _controls_fit(page)
    _on_the_first_screen(button, size)
    button.click()
    frame = page.frame_locator("#hymt-desk-frame")
    expect(frame.locator("#start")).to_be_visible()
    desk_frame = page.frame(url=lambda u: u.endswith("/desk"))
    assert desk_frame is not None
    _fits_a_phone(page, [desk_frame], frame.locator("#text"), [frame.locator("#language")], size)
    _on_the_first_screen(button, size)  # the close button: above the sheet, never under it
    page.screenshot(path=str(shots / f"widget-{_name(size)}.png"))
    page.emulate_media(color_scheme="dark")
    assert _is_dark(desk_frame)
    page.emulate_media(color_scheme="light")
    frame.locator("#text").fill("Hola, necesito ayuda con mi pedido.")
    frame.locator("#start").click()
    expect(frame.locator(".msg.guest .text")).to_have_text("Hola, necesito ayuda con mi pedido.")
    room_frame = page.frame(url=lambda u: "/room/" in u)
    assert room_frame is not None
    expect(frame.get_by_role("button", name=_photo_word(room_frame), exact=True)).to_be_visible()
    _fits_a_phone(page, [room_frame], frame.locator("#text"), [frame.locator("#language")], size)
    button.click()  # closed again: the page is the shop's
    expect(page.locator("#hymt-desk-frame")).to_be_hidden()
    visitor.close()


@pytest.mark.parametrize("size", SIZES, ids=_name)
def test_the_kiosk_fits_a_phone(browser: Browser, room_url: str, size: ViewportSize,
                                shots: Path) -> None:
    """The kiosk's welcome on a phone: its language buttons at the top, its text box whole."""
    page = new_page(browser, viewport=size)
    page.goto(room_url)
    page.wait_for_selector("#starters button:not([disabled])")  # the Translator, started
    page.click("#chat-profiles")
    page.click("[data-test='select-item:Kiosk']")
    expect(page.locator("body.hymt-kiosk")).to_have_count(1)  # kiosk.js is on
    welcome = page.locator(".ai-message", has_text="Welcome!").first
    buttons = [welcome.get_by_role("button", name=label, exact=True)
               for _, label in KIOSK_LANGUAGES]
    for button in buttons:
        expect(button).to_be_visible()
    more = welcome.locator("div.-ml-1\\.5 > button").last  # "More languages"
    page.mouse.move(size["width"] / 2, 30)  # off the buttons: none is drawn hovered
    page.wait_for_timeout(300)  # the page settled (Chainlit's own scroll, if any)
    _fits_a_phone(page, [], page.locator("#chat-input"), [*buttons, more], size)
    page.screenshot(path=str(shots / f"kiosk-{_name(size)}.png"))
    page.close()


def test_the_docs_show_the_phone_screenshots() -> None:
    """Each screenshot the tests above take is on the docs page of its page."""
    docs = Path(__file__).resolve().parents[1] / "docs"
    rooms = (docs / "rooms.md").read_text(encoding="utf-8")
    chat = (docs / "chat.md").read_text(encoding="utf-8")
    for size in SIZES:
        assert f"screenshots/guest-{_name(size)}.png" in rooms
        assert f"screenshots/widget-{_name(size)}.png" in rooms
        assert f"screenshots/kiosk-{_name(size)}.png" in chat
