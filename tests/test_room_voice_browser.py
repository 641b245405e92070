"""A customer speaks on the room's guest page, on a phone-sized screen, in Debian's Chromium
(Playwright) with a fake microphone: espeak-ng says an English sentence into it, the page's
recorder (``hymt_chat/room/voice.js``: MediaRecorder, WebM/Opus) ends the utterance itself at
the pause after it and sends it over the room's socket, the real Whisper model hears it, the
customer sees their own words, and the agent (the app's own page, in the same browser) reads
them in Spanish from the engine double's phrasebook.

A browser that gives no microphone says so in the page's words, and typing goes on."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, new_page, open_profile, send
from tests.support.double_app import double_app
from tests.support.engine_double import running_double
from tests.support.phrasebook import phrasebook
from tests.support.speech_files import microphone_args, model_dir, spoken_wav

pytestmark = pytest.mark.slow

SAID = "Could you please send me a photo of the package?"
# Whisper hears the sentence through Chromium's audio processing and Opus: a small word may
# come out otherwise ("a photo on the package"), so the page and the phrasebook go by the words
# that carry it.
HEARD = re.compile(r"send me a photo \w+ the package", re.IGNORECASE)
BOOK = phrasebook({"send me": {"es": "enviarme"}, "photo": {"es": "foto"},
                   "package": {"es": "paquete"}, "Thank you.": {"es": "Gracias."}})
PHONE = {"width": 390, "height": 844}
WAIT = 120_000  # ms: the model hears on loaded cores; every wait ends on an event
# A browser without a microphone (or that was refused one): getUserMedia rejects.
NO_MICROPHONE = """navigator.mediaDevices.getUserMedia = () =>
    Promise.reject(new DOMException("Permission denied", "NotAllowedError"));"""


@pytest.fixture(scope="module")
def voice_room_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    # The stand-in's partial phrasebook is no translation the answer checks would pass.
    with running_double(answer=BOOK) as double, \
            double_app(double, tmp_path_factory.mktemp("voice-room"), HYMT_WINDOW_MAX="2",
                       HYMT_CHECKS="false", HYMT_SPEECH_MODEL=str(model_dir())) as url:
        yield url


def _chromium_hearing(wav: Path) -> Iterator[Browser]:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM,
                                     args=[*CHROMIUM_ARGS, *microphone_args(wav)])
        yield browser
        browser.close()


def _word(page: Page, key: str) -> str:
    """The guest page's own word for *key* (its words, from the server's catalog)."""
    return str(page.evaluate(
        "k => JSON.parse(document.getElementById('room-config').textContent).words[k]", key))


def test_a_customer_speaks_on_the_phone_and_the_agent_reads_it(voice_room_app: str,
                                                               tmp_path: Path) -> None:
    wav = spoken_wav(SAID, "en-us", tmp_path / "said.wav", before=0.5, after=1.5)
    for browser in _chromium_hearing(wav):
        agent = open_profile(browser, voice_room_app, "Support agent",
                             "Agent: English ⇄ Customer: not known")
        send(agent, "/agent Spanish")  # the customer speaks English: the agent reads Spanish
        expect(agent.get_by_text("Agent: Spanish").first).to_be_visible()
        send(agent, "/room")
        link = agent.locator("a[href*='/room/']").first
        expect(link).to_be_visible()
        url = link.get_attribute("href")
        assert url is not None

        phone_context = browser.new_context(locale="en-US", viewport=PHONE,
                                            permissions=["microphone"])
        phone = new_page(phone_context)
        phone.goto(url)
        expect(phone.locator("#language")).to_have_value("en")
        mic = phone.get_by_role("button", name=_word(phone, "speak"), exact=True)
        expect(mic).to_be_visible()
        expect(mic).to_have_attribute("aria-pressed", "false")
        mic.click()
        # Recording: the button says Stop and is pressed; the status asks them to speak.
        stop = phone.get_by_role("button", name=_word(phone, "stop_speaking"), exact=True)
        expect(stop).to_have_attribute("aria-pressed", "true")
        expect(phone.locator("#status")).to_have_text(_word(phone, "listening"))
        # The pause after the sentence ended it: the customer reads their own words...
        expect(phone.locator(".msg.guest .text")).to_have_text([HEARD], timeout=WAIT)
        expect(mic).to_have_attribute("aria-pressed", "false")
        # ...and the agent reads them in Spanish.
        expect(agent.get_by_text(re.compile(r"enviarme a foto \w+ the paquete")).first
               ).to_be_visible(timeout=WAIT)
        expect(agent.get_by_text("Customer · English → Spanish")).to_have_count(1)
        phone_context.close()

        # No microphone: the page says so in its words; typing goes on.
        deaf_context = browser.new_context(locale="en-US", viewport=PHONE)
        deaf_context.add_init_script(NO_MICROPHONE)
        deaf = new_page(deaf_context)
        deaf.goto(url)
        deaf.get_by_role("button", name=_word(deaf, "speak"), exact=True).click()
        expect(deaf.locator("#status")).to_have_text(_word(deaf, "no_microphone"))
        deaf.fill("#text", "Thank you.")
        deaf.press("#text", "Enter")
        expect(deaf.locator(".msg.guest .text").last).to_have_text("Thank you.", timeout=WAIT)
        expect(agent.get_by_text("Gracias.").first).to_be_visible(timeout=WAIT)
        deaf_context.close()
        agent.close()


def test_a_counter_side_speaks_into_its_own_mic(voice_room_app: str, tmp_path: Path) -> None:
    """The counter: the mic of the side that speaks English; the other half reads it."""
    wav = spoken_wav(SAID, "en-us", tmp_path / "said.wav", before=0.5, after=1.5)
    for browser in _chromium_hearing(wav):
        page = new_page(browser.new_context(locale="en-US",
                                            viewport={"width": 1100, "height": 800}))
        page.goto(f"{voice_room_app}/counter")
        left, right = page.locator("#side-a"), page.locator("#side-b")
        expect(left.locator("select.language")).to_have_value("en")
        mic = left.get_by_role("button", name="Speak", exact=True)
        expect(right.locator(".mic")).to_be_visible()  # each side has its own
        mic.click()
        expect(left.locator(".mic")).to_have_attribute("aria-pressed", "true")
        expect(left.locator(".msg.mine .main")).to_have_text([HEARD], timeout=WAIT)
        expect(left.locator(".mic")).to_have_attribute("aria-pressed", "false")
        expect(right.locator(".msg.theirs")).to_have_count(1)
        expect(right.locator(".msg.mine")).to_have_count(0)
        page.context.close()
