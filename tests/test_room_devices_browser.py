"""A room continued on a second device, in real browsers (Debian's chromium, Playwright): the
real app (``chainlit run app.py``) on the engine double, whose phrasebook answers both ways;
the agent in the app's own page, the customer's two devices in two browser contexts (each its
own storage, so each its own device key).

The customer opens the room's link on their phone and writes; then opens the same link on a
laptop. The laptop shows the conversation so far and can write (the agent reads it translated);
the phone says the conversation continued on another device and takes no more input; the
agent's chat says so in one line. The socket-level steps (an automatic reconnect that takes
nothing, the link taken back) are ``tests/test_room_socket.py``'s."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import new_page, open_profile, send
from tests.support.double_app import double_app
from tests.support.engine_double import EngineDouble, running_double
from tests.support.phrasebook import phrasebook

pytestmark = pytest.mark.slow

WAIT = 60_000  # ms: generous, for a busy 2-core machine; every wait ends on an event
MOVED = "This conversation continued on another device."  # the page's English for "moved"
FROM_PHONE = "Hola, mi paquete no ha llegado todavía."
FROM_LAPTOP = "Ahora le escribo desde el portátil."
REPLY = "I am sorry about the delay."
# Both ways for every text: a message is translated back too, for the meaning check.
BOOK = phrasebook({
    FROM_PHONE: {"en": "Hello, my parcel has not arrived yet."},
    "Hello, my parcel has not arrived yet.": {"es": FROM_PHONE},
    FROM_LAPTOP: {"en": "I am writing to you from the laptop now."},
    "I am writing to you from the laptop now.": {"es": FROM_LAPTOP},
    REPLY: {"es": "Siento mucho el retraso."},
    "Siento mucho el retraso.": {"en": "I am very sorry about the delay."},
})


@pytest.fixture(scope="module")
def book_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, EngineDouble]]:
    with running_double(answer=BOOK) as double, \
            double_app(double, tmp_path_factory.mktemp("devices"), HYMT_WINDOW_MAX="2") as url:
        yield url, double


def _moved_word(page: Page) -> str:
    """What the page says for "moved" in its language: its table's word, else the English."""
    said = page.evaluate("""() => JSON.parse(
        document.getElementById("room-config").textContent).words.moved || null""")
    return said or MOVED


def _write(page: Page, text: str, mine: int) -> None:
    page.fill("#text", text)
    page.press("#text", "Enter")
    expect(page.locator(".msg.guest")).to_have_count(mine, timeout=WAIT)


def test_the_customer_continues_the_room_on_a_second_device(browser, book_app):
    app_url, _ = book_app
    agent = open_profile(browser, app_url, "Support agent",
                         "Agent: English ⇄ Customer: not known")
    send(agent, "/room")
    link = agent.locator("a[href*='/room/']").first
    expect(link).to_be_visible(timeout=30_000)
    url = link.get_attribute("href")
    assert url is not None

    phone_context = browser.new_context(locale="es-ES", viewport={"width": 390, "height": 800})
    phone = new_page(phone_context)
    phone.goto(url)
    expect(phone.locator("#language")).to_have_value("es")
    _write(phone, FROM_PHONE, 1)
    expect(agent.get_by_text("Customer · Spanish → English")).to_have_count(1, timeout=WAIT)
    expect(agent.get_by_text("Hello, my parcel has not arrived yet.").first).to_be_visible()

    laptop_context = browser.new_context(locale="es-ES", viewport={"width": 1100, "height": 800})
    laptop = new_page(laptop_context)
    laptop.goto(url)  # the same link on another device: it takes the conversation over
    expect(laptop.locator(".msg.guest .text")).to_have_text([FROM_PHONE], timeout=WAIT)
    expect(laptop.locator("#text")).to_be_enabled()

    expect(phone.locator("#status")).to_have_text(_moved_word(phone), timeout=WAIT)
    for control in ("#text", "#send", "#photo-button", "#language"):
        expect(phone.locator(control)).to_be_disabled()
    moved_line = agent.get_by_text("The customer continued on another device.")
    expect(moved_line).to_have_count(1, timeout=WAIT)

    _write(laptop, FROM_LAPTOP, 2)
    expect(agent.get_by_text("Customer · Spanish → English")).to_have_count(2, timeout=WAIT)
    expect(agent.get_by_text("I am writing to you from the laptop now.").first).to_be_visible()
    send(agent, REPLY)
    expect(laptop.locator(".msg.agent .text")).to_have_text(["Siento mucho el retraso."],
                                                            timeout=WAIT)
    # The phone heard none of it: its page stopped at the move, and did not reconnect.
    expect(phone.locator(".msg")).to_have_count(1)
    expect(phone.locator("#status")).to_have_text(_moved_word(phone))
    expect(moved_line).to_have_count(1)  # said once
    phone_context.close()
    laptop_context.close()
    agent.close()
