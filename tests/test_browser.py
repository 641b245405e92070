"""The chat page in a real browser: Debian's chromium driven by Playwright, the real app
(``chainlit run app.py``) started by the test, the engine double (tests/support/engine_double.py)
as its model. The browser is the real part under test here: what the page shows and does. The
real model's translations are the end-to-end tests' (tests/test_e2e_translation.py); no test
here needs vLLM.

* The journey: open the page, pick a target language in the chat settings, send a message and
  see the translation, upload an .srt and download the translated one; the screenshot the
  README shows is saved on the way. The double answers from a phrasebook, so the answers read
  as translations and the app's answer checks stay on.
* Model output is text: an answer containing ``<img onerror=…>`` and ``<script>`` is shown
  literally and never runs (the double echoes it back).
* Progress, a failed part and Retry, the limit, warming up, a model that is down, the profiles
  (Support agent, a room across two browsers, the kiosk): each moment is made by the double
  (held requests, scripted failures, a model that is not there yet), and every wait ends on an
  event.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
import srt
from playwright.sync_api import Page, expect

from hymt_chat.modes import wording
from hymt_chat.words.source import CHAT as ENGLISH
from tests.support import pdf_files
from tests.support.browser import (
    ANSWER,
    answers,
    choose,
    covered_controls,
    new_page,
    open_chat,
    open_list,
    open_profile,
    send,
)
from tests.support.chainlit_app import app_env, running_app
from tests.support.double_app import double_app
from tests.support.engine_double import EngineDouble, echo_source, running_double
from tests.support.phrasebook import phrasebook, target_code
from tests.support.ports import free_port

pytestmark = pytest.mark.slow

WAIT = 60_000  # ms: generous, for a busy 2-core machine; every wait ends on an event

# The sign of tests/support/pdf_files.py, read by Tesseract, and its translation.
SIGN_ES = dict(zip(pdf_files.SIGN, ["Salida de emergencia", "Por favor, no fume",
                                    "La salida de emergencia está aquí", "Salida de auxilio"],
                   strict=True))
# What the double "translates", both ways where a test reads a back-translation.
BOOK = phrasebook({
    "Good morning! The meeting has been moved to three o'clock this afternoon.": {
        "fr": "Bonjour ! La réunion a été déplacée à trois heures cet après-midi."},
    "Good morning, everyone.": {"es": "Buenos días a todos."},
    "The train leaves at nine o'clock.": {"es": "El tren sale a las nueve."},
    "Thank you very much!": {"es": "¡Muchas gracias!"},
    "Thank you!": {"es": "¡Gracias!"},
    "Hola, buenos días. Mi paquete no ha llegado todavía y necesito ayuda, por favor.": {
        "en": "Hello, good morning. My parcel has not arrived yet and I need help, please."},
    "I am sorry about the delay.": {"es": "Siento mucho el retraso."},
    "Siento mucho el retraso.": {"en": "I am very sorry about the delay."},
    "Let me check your order right now.": {"es": "Déjeme revisar su pedido ahora mismo."},
    "Déjeme revisar su pedido ahora mismo.": {"en": "Let me check your order right now."},
    "Hola, mi paquete no ha llegado todavía.": {"en": "Hello, my parcel has not arrived yet."},
    "El número de pedido es JD123456789.": {"en": "The order number is JD123456789."},
    "Your parcel leaves our warehouse today.": {"es": "Su paquete sale hoy de nuestro almacén."},
    "Su paquete sale hoy de nuestro almacén.": {"en": "Your parcel leaves our warehouse today."},
    "Where is the nearest train station, please?": {
        "es": "¿Dónde está la estación de tren más cercana, por favor?"},
    "Where is the train station, please?": {"es": "¿Dónde está la estación de tren, por favor?"},
    "La estación está al final de esta calle.": {"en": "The station is at the end of this street."},
    **{line: {"es": spanish} for line, spanish in SIGN_ES.items()},
})


@pytest.fixture(scope="module")
def book_app(tmp_path_factory) -> Iterator[tuple[str, EngineDouble]]:
    """The app on a double that answers from :data:`BOOK` (window 2, as the demo sidecar's),
    told it serves the demo model (as ``hymt-chat up`` tells it), so the page shows its banner."""
    with running_double(answer=BOOK) as double, \
            double_app(double, tmp_path_factory.mktemp("browser"), HYMT_WINDOW_MAX="2",
                       HYMT_DEMO_MODEL="1") as url:
        yield url, double


SRT_IN = (
    "1\n00:00:01,000 --> 00:00:03,500\nGood morning, everyone.\n\n"
    "2\n00:00:04,000 --> 00:00:07,250\nThe train leaves at nine o'clock.\n\n"
    "3\n00:00:08,000 --> 00:00:10,000\nThank you very much!\n"
)
XSS = ('Hello <img src=x onerror="window.__xss=1;alert(1)"> and '
       "<script>window.__xss=2</script> friends")


def choose_target(page: Page, option: str) -> None:
    page.click("#chat-settings-open-modal")
    choose(page, "target", option)
    page.get_by_role("button", name="Confirm").click()


def _from_the_top(page: Page) -> None:
    """Every scrolled box back at its top, until the first message is in view (the page may
    still be scrolling to the newest one): a screenshot shows the conversation from its start."""
    first = page.locator("[data-step-type]").first
    for _ in range(100):
        page.evaluate("""() => { for (const el of document.querySelectorAll('*')) {
            const style = getComputedStyle(el);
            if (/(auto|scroll)/.test(style.overflowY) && el.scrollHeight > el.clientHeight) {
                el.scrollTop = 0; } } }""")
        box = first.bounding_box()
        if box is not None and box["y"] >= 0:
            return
        page.wait_for_timeout(100)
    raise AssertionError("the conversation's first message never came into view")


def _open_target_list(page: Page) -> None:
    page.click("#chat-settings-open-modal")
    open_list(page, "target")


def _options_under_the_banner(page: Page) -> list[str]:
    """The options of the open list, in its visible part, that the banner is drawn over (it
    is the element at the option's centre)."""
    return page.evaluate("""() => [...document.querySelectorAll('[role=option]')]
        .filter(el => { const b = el.getBoundingClientRect();
            const list = el.closest('[role=listbox]').getBoundingClientRect();
            const x = b.left + b.width / 2, y = b.top + b.height / 2;
            if (!b.width || y < list.top || y > list.bottom) return false;  // scrolled away
            const top = document.elementFromPoint(x, y);
            return !!(top && top.closest('#hymt-banner')); })
        .map(el => el.innerText.trim())""")


def test_translate_a_message_and_a_file_in_the_browser(browser, book_app, artifacts, tmp_path,
                                                        shots):
    url, double = book_app
    dialogs: list[str] = []
    page = open_chat(browser, url, dialogs)
    banner = page.locator("#hymt-banner[data-kind=demo]")
    expect(banner).to_contain_text("Demo model", timeout=20_000)

    # The demo banner covers no control, on a desktop and on a phone; nor the open target list.
    # The composer says what the Translator takes: documents, not only three text formats.
    for size in ({"width": 1280, "height": 800}, {"width": 390, "height": 844}):
        page.set_viewport_size(size)
        expect(banner).to_be_visible()
        assert covered_controls(page) == [], size
    page.set_viewport_size({"width": 1280, "height": 800})
    _open_target_list(page)
    assert page.get_by_role("option").count() > 30
    assert _options_under_the_banner(page) == []
    page.keyboard.press("Escape")
    page.keyboard.press("Escape")
    page.set_viewport_size({"width": 1100, "height": 900})
    # ... and which languages: the first load says where answers come in
    expect(page.locator("#chat-input")).to_have_attribute(
        "placeholder", ENGLISH["placeholder_pair"].replace("{{pair}}", "Auto-detect → English"))

    # Pick the target in the chat settings; the chat confirms it.
    choose_target(page, "French")
    expect(page.get_by_text("Now translating Auto-detect → French.")).to_be_visible(timeout=15_000)

    # A message: the translation comes back as text, with the meta line.
    send(page, "Good morning! The meeting has been moved to three o'clock this afternoon.")
    page.wait_for_selector(ANSWER, timeout=WAIT)
    translation = page.locator(ANSWER).last.inner_text().strip()
    assert translation == "Bonjour ! La réunion a été déplacée à trois heures cet après-midi."
    assert {target_code(p) for p in double.prompts} == {"fr"}  # the page's choice reached it
    expect(page.get_by_text("English → French").last).to_be_visible()

    send(page, "/to es")
    expect(page.get_by_text("Now translating Auto-detect → Spanish.")).to_be_visible(timeout=15_000)

    # A file: upload an .srt, get an .srt back with numbering and timestamps untouched.
    source = tmp_path / "talk.srt"
    source.write_text(SRT_IN, encoding="utf-8")
    page.set_input_files("input[type=file]", str(source))
    attached = page.locator("#message-composer").get_by_text("talk.srt")
    expect(attached).to_be_visible(timeout=15_000)
    expect(page.locator("#chat-submit")).to_be_enabled(timeout=30_000)  # upload finished
    page.click("#chat-submit")
    expect(attached).to_have_count(0, timeout=15_000)  # sent
    link = page.locator("a.inline-file[download='talk.es.srt']")
    expect(link).to_be_visible(timeout=WAIT)
    with page.expect_download() as download:
        link.click()
    out = tmp_path / "talk.es.srt"
    download.value.save_as(out)
    before, after = list(srt.parse(SRT_IN)), list(srt.parse(out.read_text(encoding="utf-8")))
    assert [(c.index, c.start, c.end) for c in after] == [(c.index, c.start, c.end) for c in before]
    assert all(c.content.strip() for c in after)
    assert [c.content for c in after] == ["Buenos días a todos.", "El tren sale a las nueve.",
                                          "¡Muchas gracias!"]

    # The README's and the docs' screenshot: the whole conversation, from the top.
    page.set_viewport_size({"width": 1100, "height": 1200})
    _from_the_top(page)
    page.screenshot(path=str(artifacts / "chat.png"))
    page.screenshot(path=str(shots / "chat.png"))

    # A bad command gets a clear answer and the session keeps working.
    send(page, "/to klingon")
    expect(page.get_by_text("I don't know the language “klingon”")).to_be_visible(timeout=15_000)
    send(page, "Thank you!")
    expect(page.locator(ANSWER, has_text="¡Gracias!")).to_be_visible(timeout=WAIT)

    # A picture (Tesseract, the real part): each line found and its translation, in reading
    # order, and the picture with the translation laid over.
    picture = tmp_path / "sign.png"
    pdf_files.sign().save(picture, "PNG")
    page.set_input_files("input[type=file]", str(picture))
    expect(page.locator("#chat-submit")).to_be_enabled(timeout=30_000)  # upload finished
    page.click("#chat-submit")
    expect(page.get_by_role("img", name="sign.es.png")).to_be_visible(timeout=WAIT)
    text = page.locator("body").inner_text()
    listing = text[text.rindex("Text found, and its translation"):]
    order = [listing.index(found) for found in pdf_files.SIGN]
    assert order == sorted(order), listing
    for found, spanish in SIGN_ES.items():
        assert spanish in listing[listing.index(found):], listing
    assert dialogs == []
    page.close()


@pytest.fixture(scope="module")
def echo_app(tmp_path_factory) -> Iterator[tuple[str, EngineDouble]]:
    """The app on a double whose 'translation' is the text itself, HTML included.
    HYMT_CHECKS=0: an echo is a marker, not a translation, which the answer checks would rightly
    send again as the wrong language; these tests count the calls."""
    with running_double() as double, \
            double_app(double, tmp_path_factory.mktemp("echo"), HYMT_CHECKS="0") as url:
        yield url, double


@pytest.fixture
def echo(echo_app) -> Iterator[tuple[str, EngineDouble]]:
    """:func:`echo_app`, its double echoing and holding nothing again after the test."""
    url, double = echo_app
    try:
        yield url, double
    finally:
        double.answer = echo_source
        double.set_hold(False)


def test_html_in_a_translation_is_shown_as_text_and_never_runs(browser, echo):
    url, stub = echo
    dialogs: list[str] = []
    page = open_chat(browser, url, dialogs)
    send(page, "/to fr")
    expect(page.get_by_text("Now translating Auto-detect → French.")).to_be_visible(timeout=15_000)
    send(page, XSS)
    page.wait_for_selector(ANSWER, timeout=60_000)
    assert any("<img src=x" in prompt for prompt in stub.prompts)  # the model really got it back
    shown = page.locator(ANSWER).last.inner_text()
    assert '<img src=x onerror="window.__xss=1;alert(1)">' in shown
    assert "<script>window.__xss=2</script>" in shown
    # No such element is on the page, so nothing can run (the flag below only confirms it).
    assert page.locator(".message-content img[src='x'], .message-content script").count() == 0
    assert page.evaluate("window.__xss") is None
    # The translation's copy button copies exactly the text (no Markdown fences around it).
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.locator(".ai-message .relative.my-2 button").last.click()
    assert _until_copied(page).strip() == XSS
    # The user's own message is shown as typed, not rendered either.
    assert page.locator(".step img[src='x']").count() == 0
    assert dialogs == []
    page.close()


def _until_copied(page: Page) -> str:
    """The clipboard once the copy button's write has landed (polled, bounded)."""
    for _ in range(300):
        if copied := page.evaluate("navigator.clipboard.readText()"):
            return str(copied)
        page.wait_for_timeout(100)
    raise AssertionError("the copy button put nothing on the clipboard")


def test_long_text_shows_progress_and_comes_back_whole_in_order(browser, echo):
    """The page shows a long text's progress while its parts are under way (the double holds
    all but the first three), then the whole text, each line in its place. The property at
    full size (10,000+ characters) is tests/test_e2e_translation.py's, on the double."""
    url, double = echo
    lines = [f"Order {100 + i} was shipped today and will arrive on Friday." for i in range(12)]
    first = tuple(lines[:3])
    double.set_hold(lambda req: echo_source(req.prompt) not in first)
    asked = len(double.prompts)
    page = open_chat(browser, url)
    send(page, "/to pt")
    expect(page.get_by_text("Now translating Auto-detect → Portuguese.")).to_be_visible(
        timeout=15_000)
    page.fill("#chat-input", "\n".join(lines))
    page.keyboard.press("Enter")
    expect(page.get_by_text("3 of 12 parts")).to_be_visible(timeout=WAIT)
    assert answers(page) == 0  # under way: no answer yet
    double.set_hold(False)
    page.wait_for_selector(ANSWER, timeout=WAIT)
    assert page.locator(ANSWER).last.inner_text().strip().split("\n") == lines
    expect(page.get_by_text("· 12 parts").last).to_be_visible()
    assert {target_code(p) for p in double.prompts[asked:]} == {"pt"}
    page.close()


def test_a_failed_part_is_marked_in_place_and_retry_the_rest_sends_only_it(browser, echo):
    url, double = echo
    lines = [f"Line {i} of a letter to the customer." for i in range(1, 5)]
    broken = {lines[1]}

    def answer(prompt: str) -> str:
        text = echo_source(prompt)
        if text in broken:
            raise RuntimeError("scripted failure")  # the double answers HTTP 500
        return text

    double.answer = answer
    page = open_chat(browser, url)
    send(page, "/to pt")
    expect(page.get_by_text("Now translating Auto-detect → Portuguese.")).to_be_visible(
        timeout=15_000)
    page.fill("#chat-input", "\n".join(lines))
    page.keyboard.press("Enter")
    expect(page.get_by_text("Translated 3 of 4 parts; part 2 could not be translated")
           ).to_be_visible(timeout=WAIT)
    partial = page.locator(ANSWER).last.inner_text().strip().split("\n")
    assert partial == [lines[0], "[not translated] " + lines[1], lines[2], lines[3]]
    broken.clear()
    sent_before, shown = len(double.prompts), answers(page)
    page.get_by_role("button", name="Retry the rest").click()
    page.locator(ANSWER).nth(shown).wait_for(timeout=WAIT)
    assert page.locator(ANSWER).last.inner_text().strip().split("\n") == lines
    assert [echo_source(p) for p in double.prompts[sent_before:]] == [lines[1]]  # only it
    page.close()


def _until_fetched(page: Page, path: str) -> None:
    """The page has fetched *path*: the browser lists a resource once its body is in (an event,
    not a clock; the page's CSP forbids wait_for_function's eval)."""
    fetched = f"() => performance.getEntriesByType('resource').some(e => e.name.includes({path!r}))"
    for _ in range(600):
        if page.evaluate(fetched):
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"the page never fetched {path}")


def test_the_page_does_not_send_a_text_over_the_limit_and_keeps_it(browser, tmp_path_factory):
    """Socket.IO drops a message over its cap without a word; the page checks the limit first,
    says so, and leaves the text in the box."""
    # HYMT_CHECKS=0: the double echoes (a marker, not a translation); this test counts calls.
    with running_double() as stub, \
            double_app(stub, tmp_path_factory.mktemp("limit"), HYMT_CHECKS="0",
                       HYMT_MAX_INPUT_CHARS="300") as url:
        page = open_chat(browser, url)
        _until_fetched(page, "/hymt/status")  # where the banner script reads the limit
        text = "Une très longue phrase. " * 20  # 480 characters
        page.fill("#chat-input", text)
        page.keyboard.press("Enter")
        banner = page.locator("#hymt-banner[data-kind=limit]")
        expect(banner).to_contain_text("the limit is 300", timeout=10_000)
        expect(banner).to_contain_text("Nothing was sent")
        assert page.input_value("#chat-input") == text  # nothing typed is lost
        page.fill("#chat-input", "Une phrase courte.")
        page.keyboard.press("Enter")
        page.wait_for_selector(ANSWER, timeout=WAIT)
        assert [echo_source(p) for p in stub.prompts] == ["Une phrase courte."]
        page.close()


def test_messages_sent_while_the_model_warms_up_are_translated_once_it_is_ready(
    browser, tmp_path_factory
):
    tmp = tmp_path_factory.mktemp("warmup")
    model_port, sidecar_port = free_port(), free_port()
    state = tmp / "cache" / "run" / f"sidecar-{sidecar_port}.json"
    state.parent.mkdir(parents=True)
    model = EngineDouble()  # served below, once the test says the model is up
    state.write_text(json.dumps({"base_url": f"http://127.0.0.1:{model_port}/v1",
                                 "api_key": model.api_key, "model": model.model,
                                 "state": "starting"}))
    # HYMT_CHECKS=0: the double echoes (a marker, not a translation).
    env = app_env(HYMT_CACHE_DIR=str(tmp / "cache"), HYMT_PORT=str(sidecar_port),
                  HYMT_CHECKS="0")
    with running_app(env, free_port(), tmp / "app.log") as url:
        page = open_chat(browser, url)
        expect(page.locator("#hymt-banner[data-kind=wait]")).to_contain_text("warming up",
                                                                            timeout=20_000)
        send(page, "/to de")
        expect(page.get_by_text("Now translating Auto-detect → German.")).to_be_visible(
            timeout=15_000)
        send(page, "First message, sent early.")
        expect(page.locator(".ai-message").get_by_text("The translation model is warming up").first
               ).to_be_visible(timeout=15_000)
        send(page, "Second message, also early.")
        expect(page.get_by_text("2 messages are waiting")).to_be_visible(timeout=15_000)
        assert answers(page) == 0
        with running_double(model, port=model_port):  # the model is up: both, in order
            page.locator(ANSWER).nth(1).wait_for(timeout=WAIT)
            texts = [el.inner_text().strip() for el in page.locator(ANSWER).all()]
            assert texts == ["First message, sent early.", "Second message, also early."]
            expect(page.locator("#hymt-banner[data-kind=wait]")).to_have_count(0, timeout=20_000)
        page.close()


def test_a_model_that_is_down_gets_one_clear_message_and_retry_sends_the_text_again(
    browser, tmp_path_factory
):
    tmp = tmp_path_factory.mktemp("down")
    model_port = free_port()
    model = EngineDouble()  # served below: first the model is not there at all
    env = app_env(HYMT_BASE_URL=f"http://127.0.0.1:{model_port}/v1",
                  HYMT_API_KEY=model.api_key, HYMT_MODEL=model.model, HYMT_CHECKS="0",
                  HYMT_CACHE_DIR=str(tmp / "cache"), HYMT_PORT=str(free_port()))
    with running_app(env, free_port(), tmp / "app.log") as url:
        page = open_chat(browser, url)
        send(page, "/to it")
        expect(page.get_by_text("Now translating Auto-detect → Italian.")).to_be_visible(
            timeout=15_000)
        send(page, "Nothing typed is lost.")
        expect(page.locator(".ai-message").get_by_text("is not reachable (it is down")
               ).to_be_visible(timeout=30_000)
        retry = page.get_by_role("button", name="Retry")
        expect(retry).to_be_visible()
        expect(page.locator("#hymt-banner[data-kind=down]")).to_be_visible(timeout=20_000)
        with running_double(model, port=model_port):
            retry.click()
            page.wait_for_selector(ANSWER, timeout=WAIT)
            assert page.locator(ANSWER).last.inner_text().strip() == "Nothing typed is lost."
        page.close()


# --- chat profiles: Support agent and Kiosk ----------------------------------------------------


def test_support_agent_translates_both_ways_and_downloads_the_transcript(
    browser, book_app, tmp_path, shots
):
    """The agent's page: routing depends on the input only (detection, not the model's answer);
    the double answers from the phrasebook, both ways."""
    url, _ = book_app
    page = open_profile(browser, url, "Support agent", "Agent: English ⇄ Customer: not known")
    send(page, "Hola, buenos días. Mi paquete no ha llegado todavía y necesito ayuda, por favor.")
    expect(page.get_by_text("Customer · Spanish → English").first).to_be_visible(timeout=WAIT)
    expect(page.get_by_text("Agent: English ⇄ Customer: Spanish").first).to_be_visible()
    send(page, "I am sorry about the delay. Let me check your order right now.")
    expect(page.get_by_text("Your reply · English → Spanish").first).to_be_visible(
        timeout=WAIT)
    expect(page.get_by_text("Back-translation into English").first).to_be_visible()  # default on
    _from_the_top(page)
    page.screenshot(path=str(shots / "agent.png"))
    # The composer takes the customer's message or the reply: it says so, and has no paperclip.
    expect(page.locator("#chat-input")).to_have_attribute("placeholder",
                                                          ENGLISH["placeholder_agent"])
    expect(page.locator("input[type=file]")).to_have_count(0)
    send(page, "/transcript")  # typed in full: Enter sends it (not only a command chip)
    link = page.locator("a.inline-file[download$='.csv']")
    expect(link).to_be_visible(timeout=15_000)
    expect(page.locator("a.inline-file[download$='.md']")).to_be_visible()
    with page.expect_download() as download:
        link.click()
    out = tmp_path / "transcript.csv"
    download.value.save_as(out)
    rows = out.read_text(encoding="utf-8-sig").splitlines()
    assert rows[0].startswith("time,who,source_language,original,target_language")
    assert ",customer,es," in rows[1] and ",agent,en," in rows[2]
    page.close()


def test_a_customer_joins_a_room_from_their_own_phone(browser, book_app, tmp_path, shots):
    """Two real pages (a room across two browsers) on the double's phrasebook: the agent opens a
    room, the customer joins with the link on a "phone" whose browser speaks Spanish; each
    sends two messages and reads the other's translated, the original beside it; a reload keeps
    the talk; the transcript has all four."""
    app_url, _ = book_app
    agent = open_profile(browser, app_url, "Support agent",
                         "Agent: English ⇄ Customer: not known")
    send(agent, "/room")  # typed in full: Enter sends it
    link = agent.locator("a[href*='/room/']").first
    expect(link).to_be_visible(timeout=30_000)
    expect(agent.get_by_role("img", name="room.png")).to_be_visible()  # the QR code
    url = link.get_attribute("href")
    phone = browser.new_context(locale="es-ES", viewport={"width": 390, "height": 800})
    guest = new_page(phone)
    guest.goto(url)
    expect(guest.get_by_text("Su idioma")).to_be_visible(timeout=15_000)
    expect(guest.locator("#language")).to_have_value("es")
    words = ["Hola, mi paquete no ha llegado todavía.", "El número de pedido es JD123456789."]
    for number, text in enumerate(words, 1):
        guest.fill("#text", text)
        guest.press("#text", "Enter")
        expect(guest.locator(".msg.guest")).to_have_count(number, timeout=WAIT)
    expect(agent.get_by_text("Customer · Spanish → English")).to_have_count(2, timeout=WAIT)
    expect(agent.get_by_text(words[0], exact=False).first).to_be_visible()  # the original
    replies = ["I am sorry about the delay.", "Your parcel leaves our warehouse today."]
    for number, text in enumerate(replies, 1):
        send(agent, text)
        expect(guest.locator(".msg.agent")).to_have_count(number, timeout=WAIT)
    for index, text in enumerate(replies):
        shown = guest.locator(".msg.agent").nth(index)
        expect(shown.locator(".orig")).to_contain_text(text)  # the original, small
        assert shown.locator(".text").inner_text().strip() == BOOK(  # and its translation
            f"Translate into Spanish, without explanation.\n\n{text}")
    guest.screenshot(path=str(shots / "room.png"))
    guest.reload()
    expect(guest.locator(".msg")).to_have_count(4, timeout=15_000)  # rejoined, with history
    send(agent, "/transcript")
    csv_link = agent.locator("a.inline-file[download$='.csv']").last
    expect(csv_link).to_be_visible(timeout=15_000)
    with agent.expect_download() as download:
        csv_link.click()
    out = tmp_path / "room.csv"
    download.value.save_as(out)
    rows = out.read_text(encoding="utf-8-sig").splitlines()[1:]
    assert [r.split(",")[1] for r in rows] == ["customer", "customer", "agent", "agent"]
    phone.close()
    agent.close()


KIOSK_INIT = """
// Debian's headless chromium has no speech voices (speechSynthesis.getVoices() is empty), so the
// test gives it one Spanish voice and records what would be spoken.
window.__spoken = [];
window.SpeechSynthesisUtterance = function (text) { this.text = text; };
speechSynthesis.getVoices = function () {
  return [{ lang: "es-ES", name: "Test voice", voiceURI: "test", localService: true,
            "default": true }];
};
speechSynthesis.speak = function (u) { window.__spoken.push({ text: u.text, lang: u.lang }); };
speechSynthesis.cancel = function () {};
"""


@pytest.fixture(scope="module")
def kiosk_app(tmp_path_factory) -> Iterator[str]:
    """The double's phrasebook behind a kiosk whose idle time is 16 s (its countdown: the last
    8 s, long enough to be read on a loaded host)."""
    with running_double(answer=BOOK) as double, \
            double_app(double, tmp_path_factory.mktemp("kiosk"), HYMT_WINDOW_MAX="2",
                       HYMT_KIOSK_IDLE_SECONDS="16") as url:
        yield url


@pytest.fixture(scope="module")
def patient_kiosk(tmp_path_factory) -> Iterator[str]:
    """The phrasebook kiosk with an idle time no step of a loaded host comes near: a slow
    answer must not start the screen afresh in the middle of a conversation under test. Its
    server has no voice: "Read aloud" is the browser's own (test_voice_browser.py has the
    server's)."""
    with running_double(answer=BOOK) as double, \
            double_app(double, tmp_path_factory.mktemp("patient"), HYMT_WINDOW_MAX="2",
                       HYMT_KIOSK_IDLE_SECONDS="3600", HYMT_SPEECH="false") as url:
        yield url


def test_kiosk_big_buttons_and_read_aloud(browser, patient_kiosk, shots):
    url = patient_kiosk
    page = open_profile(browser, url, "Kiosk", "Welcome!", init_script=KIOSK_INIT)
    expect(page.locator("body.hymt-kiosk")).to_have_count(1, timeout=10_000)  # kiosk.js is on
    spanish = page.get_by_role("button", name="Español", exact=True).first
    expect(spanish).to_be_visible()
    assert spanish.bounding_box()["height"] >= 60  # touch size (kiosk.css)
    expect(page.locator("#chat-profiles")).to_be_hidden()  # strangers cannot switch modes
    # A language button looks like one (a border and a fill, not plain text); the welcome has
    # a line per language; a public screen offers no paperclip, and its box says what to do.
    look = spanish.evaluate("""b => { const s = getComputedStyle(b);
        return [parseFloat(s.borderTopWidth), s.backgroundColor]; }""")
    assert look[0] >= 1 and look[1] not in ("rgba(0, 0, 0, 0)", "transparent"), look
    welcome = page.locator(".ai-message", has_text="Welcome!").first
    expect(welcome.locator("li")).to_have_count(len(wording.WELCOME_LINES))
    expect(page.locator("input[type=file]")).to_have_count(0)
    expect(page.locator("#chat-input")).to_have_attribute("placeholder",
                                                          ENGLISH["placeholder_kiosk"])
    assert ".srt" not in page.locator("body").inner_text()
    page.screenshot(path=str(shots / "kiosk.png"))
    spanish.click()
    expect(page.get_by_text("→ Español.")).to_be_visible(timeout=15_000)
    send(page, "Where is the nearest train station, please?")
    page.wait_for_selector(ANSWER, timeout=WAIT)
    shown = page.locator(ANSWER).last.inner_text().strip()
    assert shown == "¿Dónde está la estación de tren más cercana, por favor?"  # into Spanish
    read = page.locator(".hymt-tts-button").last  # the answer's (not an earlier message's)
    expect(read).to_be_visible(timeout=10_000)
    read.click()
    spoken = page.evaluate("window.__spoken")
    assert spoken == [{"text": shown, "lang": "es-ES"}]  # exactly what is shown, in Spanish
    page.close()


def test_kiosk_starts_afresh_when_nobody_touches_it(browser, kiosk_app):
    """One message, then nobody touches the screen: a countdown, then a fresh welcome screen
    without the conversation. A single step comes before the idle time runs: the message,
    whose reply (which language?) counts as use (kiosk.js's ``IdleClock.follow``)."""
    page = open_profile(browser, kiosk_app, "Kiosk", "Welcome!", init_script=KIOSK_INIT)
    expect(page.locator("body.hymt-kiosk")).to_have_count(1, timeout=10_000)
    send(page, "Where is the nearest train station, please?")
    said = page.locator("[data-step-type=user_message]")
    expect(said).to_have_count(1, timeout=WAIT)
    expect(page.locator("#hymt-kiosk-idle[data-open]")).to_contain_text("Starting afresh",
                                                                        timeout=WAIT)
    expect(said).to_have_count(0, timeout=WAIT)
    expect(page.get_by_text("Where is the nearest train station")).to_have_count(0)
    expect(page.get_by_text("Welcome!").first).to_be_visible(timeout=15_000)
    expect(page.locator("body.hymt-kiosk")).to_have_count(1)  # still a kiosk
    page.close()


# Counts the page's own "New chat" clicks: kiosk.js starts afresh with one.
COUNT_NEW_CHATS = """
window.__newChats = 0;
document.addEventListener("click", function (e) {
  if (e.target && e.target.closest && e.target.closest("#new-chat-button")) window.__newChats++;
}, true);
"""


def test_a_screen_the_server_started_afresh_is_not_wiped_again(browser, kiosk_app):
    """The server's backstop can wipe the screen before the browser does (a browser slowed by
    a busy device): the browser takes that fresh welcome as its own fresh start, and does not
    wipe it again under the next visitor's first tap. The page's clock stands still, so the
    server's wipe comes first, whatever the host's speed; then the page's time runs past the
    idle time."""
    page = new_page(browser, viewport={"width": 1100, "height": 900})
    page.clock.install()  # before the page's scripts, so that kiosk.js's timers are the fake
    page.add_init_script(KIOSK_INIT + COUNT_NEW_CHATS)
    page.goto(kiosk_app)
    page.wait_for_selector("#starters button:not([disabled])")
    page.click("#chat-profiles")
    page.click("[data-test='select-item:Kiosk']")
    expect(page.get_by_text("Welcome!").first).to_be_visible(timeout=WAIT)
    expect(page.locator("body.hymt-kiosk")).to_have_count(1, timeout=WAIT)
    send(page, "Where is the nearest train station, please?")
    said = page.locator("[data-step-type=user_message]")
    expect(said).to_have_count(1, timeout=WAIT)
    shown = page.locator("[data-step-type=assistant_message]")
    expect(shown).to_have_count(2, timeout=WAIT)  # the welcome, then "which language?"
    start = page.evaluate("Date.now()")
    page.clock.pause_at((start + 100) / 1000)  # Python's API counts seconds here
    # The server's backstop wipes the screen. The page renders what comes on timers of a
    # millisecond or so: its clock steps one millisecond a poll, a poll every 50 real ones.
    deadline = time.monotonic() + WAIT / 1000
    while (said.count() or shown.count() != 1) and time.monotonic() < deadline:
        page.clock.run_for(1)
        page.wait_for_timeout(50)
    expect(said).to_have_count(0)  # the conversation is gone
    expect(shown).to_have_count(1)  # and the welcome greets afresh
    assert page.evaluate("Date.now()") - start < 8_000  # the page's own idle time not near
    page.clock.run_for(20_000)  # past the page's own idle time (16 s)
    assert page.evaluate("window.__newChats") == 0
    expect(page.locator("#hymt-kiosk-idle[data-open]")).to_have_count(0)
    page.get_by_role("button", name="Español", exact=True).first.click()
    expect(page.get_by_text("→ Español.")).to_be_visible(timeout=WAIT)
    page.close()


def test_kiosk_counter_two_people_two_languages_one_screen(browser, kiosk_app):
    """The kiosk's counter page on the double's phrasebook: each side writes in its language and the
    other side reads it translated, the original small beneath; the idle reset (16 s here)
    wipes both sides."""
    page = new_page(browser, viewport={"width": 1200, "height": 800})
    page.goto(f"{kiosk_app}/counter")
    left, right = page.locator("#side-a"), page.locator("#side-b")
    left.locator("select.language").select_option("en")
    right.locator("select.language").select_option("es")
    left.locator("textarea").fill("Where is the train station, please?")
    left.locator("textarea").press("Enter")
    expect(right.locator(".msg.theirs")).to_have_count(1, timeout=WAIT)
    expect(right.locator(".msg.theirs .orig")).to_contain_text(  # named in the reader's language
        "Inglés: Where is the train station, please?")
    assert right.locator(".msg.theirs .main").inner_text().strip()
    expect(left.locator(".msg.mine")).to_have_text("Where is the train station, please?")
    right.locator("textarea").fill("La estación está al final de esta calle.")
    right.locator("textarea").press("Enter")
    expect(left.locator(".msg.theirs")).to_have_count(1, timeout=WAIT)
    expect(left.locator(".msg.theirs .orig")).to_contain_text("Spanish: La estación está")
    # Nobody touches the screen: after the idle time both sides are empty again.
    expect(page.locator(".msg")).to_have_count(0, timeout=60_000)
    page.close()


def _paragraphe(req) -> bool:
    return "Paragraphe" in echo_source(req.prompt)


@pytest.fixture(scope="module")
def held_app(tmp_path_factory) -> Iterator[tuple[str, EngineDouble]]:
    """The app on a double that holds the document's parts ("Paragraphe …") until the test
    releases them: the moment under test (a document in progress) lasts as long as the test
    needs, which no real model can be told to do. Short segments make the text below an 8-part
    document."""
    with running_double() as double, \
            double_app(double, tmp_path_factory.mktemp("held"), HYMT_CHECKS="0",
                       HYMT_SEGMENT_CHARS="80") as url:
        yield url, double


def test_the_composer_stays_free_while_the_tabs_own_document_translates(
        browser, held_app, artifacts, tmp_path):
    """The person types and sends a one-liner while their document's progress is on
    screen; the document's line has its own Cancel, which stops that document only."""
    url, double = held_app
    double.set_hold(_paragraphe)
    page = open_chat(browser, url)
    letter = tmp_path / "lettre.txt"
    letter.write_text("\n\n".join(f"Paragraphe {i} de la lettre envoyée au client hier."
                                  for i in range(8)), encoding="utf-8")
    page.set_input_files("input[type=file]", str(letter))
    expect(page.locator("#chat-submit")).to_be_enabled(timeout=30_000)  # upload finished
    page.click("#chat-submit")
    job = page.locator(".ai-message", has_text="Translating lettre.txt")
    expect(job.get_by_role("button", name="Cancel")).to_be_visible(timeout=30_000)
    expect(page.locator("#stop-button")).to_have_count(0)  # Send, not Stop: the tab is free
    page.screenshot(path=str(artifacts / "own-tab.png"))

    send(page, "Bonjour, comment allez-vous ?")
    expect(page.locator(ANSWER, has_text="Bonjour, comment allez-vous ?")).to_be_visible(
        timeout=30_000)
    expect(job.get_by_role("button", name="Cancel")).to_be_visible()  # still translating
    assert page.locator("a.inline-file[download='lettre.en.txt']").count() == 0

    double.set_hold(False)
    expect(page.locator("a.inline-file[download='lettre.en.txt']")).to_be_visible(
        timeout=60_000)
    expect(job.get_by_role("button", name="Cancel")).to_have_count(0)  # over: no Cancel

    double.set_hold(_paragraphe)  # a second document, cancelled by its own button
    second = tmp_path / "suite.txt"
    second.write_text(letter.read_text(encoding="utf-8"), encoding="utf-8")
    page.set_input_files("input[type=file]", str(second))
    expect(page.locator("#chat-submit")).to_be_enabled(timeout=30_000)
    page.click("#chat-submit")
    job = page.locator(".ai-message", has_text="Translating suite.txt")
    double.wait_for(lambda d: d.count("running") >= 1, "the second document's parts to run")
    job.get_by_role("button", name="Cancel").click()
    expect(job).to_contain_text("cancelled", timeout=30_000)
    # The app hangs up its calls for the cancelled parts: the engine aborts them.
    double.wait_for(lambda d: not d.running and not d.waiting, "the cancelled parts to end")
    assert double.requests[-1].state == "aborted"
    double.set_hold(False)
    sent = len(double.requests)
    send(page, "Une dernière question.")  # answered after all the cancelled job could send
    expect(page.locator(ANSWER, has_text="Une dernière question.")).to_be_visible(timeout=WAIT)
    assert [echo_source(r.prompt) for r in double.requests[sent:]] == ["Une dernière question."]
    assert page.locator("a.inline-file[download='suite.en.txt']").count() == 0
    page.close()


_DOT = """() => [...document.querySelectorAll('div')].filter(
    e => getComputedStyle(e, '::after').animationName === 'loading-cursor-pulse').length"""


def test_a_message_on_its_way_shows_chainlits_pulsing_dot_until_its_answer(browser, held_app):
    """app.py registers its message handler without Chainlit's "on_message" run step (five
    events a message), inside which Chainlit draws its pulsing dot; public/style.css draws the
    dot while the Stop button is shown. Held by the stand-in, the message stays on its way."""
    url, double = held_app
    double.set_hold(_paragraphe)
    page = open_chat(browser, url)
    try:
        assert page.evaluate(_DOT) == 0
        send(page, "Paragraphe unique, envoyé seul.")
        expect(page.locator("#stop-button")).to_be_visible()
        assert page.evaluate(_DOT) == 1
    finally:
        double.set_hold(False)
    expect(page.locator(ANSWER, has_text="Paragraphe unique")).to_be_visible(timeout=60_000)
    expect(page.locator("#stop-button")).to_have_count(0)
    assert page.evaluate(_DOT) == 0
    page.close()
