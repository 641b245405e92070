"""Voice on the kiosk, end to end in Chromium with a fake microphone: espeak-ng says an English
sentence into it, the real Whisper model hears it, the page shows the words, the engine double
translates them into Spanish, and the server's voice reads the Spanish aloud (Debian's
Chromium has no speech voice of its own: the audio element is the server's).

Chromium's flags for the microphone are its own (``--use-file-for-fake-audio-capture``, see
tests/support/speech_files.py); Chainlit's mic streams 16-bit PCM over its socket
(``audio_start``/``audio_chunk``) and the app's voice activity detector ends the utterance."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, open_profile
from tests.support.double_app import double_app
from tests.support.engine_double import running_double
from tests.support.phrasebook import phrasebook
from tests.support.speech_files import microphone_args, model_dir, spoken_wav

pytestmark = pytest.mark.slow

SAID = "Where is the train station?"
BOOK = phrasebook({"Where is the train station": {"es": "Dónde está la estación de tren"}})
WAIT = 120_000  # ms: the model hears on two loaded cores; every wait ends on an event


@pytest.fixture(scope="module")
def voice_kiosk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_double(answer=BOOK) as double, \
            double_app(double, tmp_path_factory.mktemp("voice"), HYMT_WINDOW_MAX="2",
                       HYMT_KIOSK_IDLE_SECONDS="3600",
                       HYMT_SPEECH_MODEL=str(model_dir())) as url:
        yield url


def _chromium_hearing(wav: Path) -> Iterator[Browser]:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=[*CHROMIUM_ARGS, *microphone_args(wav),
                  "--autoplay-policy=no-user-gesture-required"])
        yield browser
        browser.close()


def _microphone(page: Page) -> None:
    """Chainlit's mic button, by its own shortcut (P, outside a text box)."""
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("p")


def test_a_kiosk_hears_english_and_says_it_in_spanish(voice_kiosk: str, tmp_path: Path) -> None:
    wav = spoken_wav(SAID, "en-us", tmp_path / "said.wav", before=1.0, after=2.5)
    for browser in _chromium_hearing(wav):
        page = open_profile(browser, voice_kiosk, "Kiosk", "Welcome!")
        expect(page.locator("body.hymt-kiosk")).to_have_count(1)
        page.get_by_role("button", name="Español", exact=True).first.click()
        expect(page.get_by_text("→ Español.")).to_be_visible()
        _microphone(page)
        # The words as heard, shown as the visitor's own message (editable, as typed ones are).
        heard = page.locator("[data-step-type=user_message]", has_text="train station").first
        expect(heard).to_be_visible(timeout=WAIT)
        answer = page.locator(".ai-message", has_text="estación de tren").first
        expect(answer).to_be_visible(timeout=WAIT)
        _microphone(page)  # off again: the fake microphone plays its file in a loop
        # The server's reading of the answer, played at once, of a real length.
        duration = page.wait_for_function(
            """() => { const a = [...document.querySelectorAll('.ai-message audio')]
                         .find(e => e.duration > 0 && isFinite(e.duration));
                       return a ? a.duration : null; }""", timeout=WAIT).json_value()
        assert duration > 0.5
        expect(answer).to_contain_text("espeak-ng")  # the voice that read it, named
        page.close()
