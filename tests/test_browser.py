"""The chat page in a real browser: Debian's chromium driven by Playwright, app started by the test.

* The journey, on the embedded default (real vLLM with the demo model): open the page, pick a
  target language in the chat settings, send a message and see the translation, upload an .srt
  and download the translated one; the screenshot the README and the docs show is saved on the way.
* Model output is text: an answer containing ``<img onerror=…>`` and ``<script>`` is shown
  literally and never runs (a stand-in server guarantees the answer contains them).
"""

from __future__ import annotations

import json

import pytest
import srt
from playwright.sync_api import Browser, Page, expect

from hymt_chat.lang.detect import detect_language
from tests.conftest import free_port
from tests.support.browser import ANSWER, answers, open_chat, send
from tests.support.chainlit_app import app_env, running_app
from tests.support.gate import Gate
from tests.support.stub_model import StubModel, echo_source

pytestmark = pytest.mark.slow

SRT_IN = (
    "1\n00:00:01,000 --> 00:00:03,500\nGood morning, everyone.\n\n"
    "2\n00:00:04,000 --> 00:00:07,250\nThe train leaves at nine o'clock.\n\n"
    "3\n00:00:08,000 --> 00:00:10,000\nThank you very much!\n"
)
XSS = ('Hello <img src=x onerror="window.__xss=1;alert(1)"> and '
       "<script>window.__xss=2</script> friends")


def choose_target(page: Page, option: str) -> None:
    page.click("#chat-settings-open-modal")
    page.click("#target")
    page.get_by_role("option", name=option).click()
    page.get_by_role("button", name="Confirm").click()


@pytest.fixture(scope="module")
def demo_app(demo_server, tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("browser")
    # Window 2: what the app computes for its own sidecar with these --max-num-seqs.
    env = app_env(demo_server.env(), HYMT_CACHE_DIR=str(tmp / "cache"), HYMT_WINDOW_MAX="2")
    with running_app(env, free_port(), tmp / "app.log") as url:
        yield url


def test_translate_a_message_and_a_file_in_the_browser(browser, demo_app, artifacts, tmp_path):
    dialogs: list[str] = []
    page = open_chat(browser, demo_app, dialogs)
    banner = page.locator("#hymt-banner[data-kind=demo]")
    expect(banner).to_contain_text("Demo model", timeout=20_000)

    # Pick the target in the chat settings; the chat confirms it.
    choose_target(page, "French (fr) · 法语")
    expect(page.get_by_text("Now translating Auto-detect → French.")).to_be_visible(timeout=15_000)

    # A message: the translation comes back as text, with the meta line.
    send(page, "Good morning! The meeting has been moved to three o'clock this afternoon.")
    page.wait_for_selector(ANSWER, timeout=180_000)
    translation = page.locator(ANSWER).last.inner_text().strip()
    assert translation and "The meeting has been moved" not in translation
    assert detect_language(translation) == "fr", translation  # French, not any other text
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
    expect(link).to_be_visible(timeout=300_000)
    with page.expect_download() as download:
        link.click()
    out = tmp_path / "talk.es.srt"
    download.value.save_as(out)
    before, after = list(srt.parse(SRT_IN)), list(srt.parse(out.read_text(encoding="utf-8")))
    assert [(c.index, c.start, c.end) for c in after] == [(c.index, c.start, c.end) for c in before]
    assert all(c.content.strip() for c in after)
    assert [c.content for c in after] != [c.content for c in before]

    # The README's and the docs' screenshot: the whole conversation, from the top.
    page.set_viewport_size({"width": 1100, "height": 1200})
    page.wait_for_timeout(500)
    page.evaluate("""() => { for (const el of document.querySelectorAll('*')) {
        const style = getComputedStyle(el);
        if (/(auto|scroll)/.test(style.overflowY) && el.scrollHeight > el.clientHeight) {
            el.scrollTop = 0; } } }""")
    page.wait_for_timeout(500)
    page.screenshot(path=str(artifacts / "chat.png"))

    # A bad command gets a clear answer and the session keeps working.
    send(page, "/to klingon")
    expect(page.get_by_text("I don't know the language 'klingon'")).to_be_visible(timeout=15_000)
    send(page, "Thank you!")
    page.locator(ANSWER).nth(1).wait_for(timeout=180_000)  # (the page's CSP forbids eval)
    assert dialogs == []
    page.close()


@pytest.fixture(scope="module")
def echo_app(tmp_path_factory):
    """The app against a stand-in model whose 'translation' is the text itself, HTML included."""
    tmp = tmp_path_factory.mktemp("xss")
    with StubModel() as stub:
        # HYMT_CHECKS=0: the stand-in echoes (a marker, not a translation), which the answer
        # checks would rightly send again as the wrong language; these tests count the calls.
        env = app_env(HYMT_BASE_URL=stub.base_url, HYMT_API_KEY="k", HYMT_MODEL="stub",
                      HYMT_CHECKS="0",
                      HYMT_CACHE_DIR=str(tmp / "cache"), HYMT_PORT=str(free_port()))
        with running_app(env, free_port(), tmp / "app.log") as url:
            yield url, stub


def test_html_in_a_translation_is_shown_as_text_and_never_runs(browser, echo_app):
    url, stub = echo_app
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
    page.wait_for_timeout(1000)
    assert page.evaluate("window.__xss") is None
    assert page.locator(".message-content img[src='x'], .message-content script").count() == 0
    # The translation's copy button copies exactly the text (no Markdown fences around it).
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.locator(".ai-message .relative.my-2 button").last.click()
    page.wait_for_timeout(300)
    assert page.evaluate("navigator.clipboard.readText()").strip() == XSS
    # The user's own message is shown as typed, not rendered either.
    assert page.locator(".step img[src='x']").count() == 0
    assert dialogs == []
    page.close()


def test_long_text_shows_progress_and_comes_back_whole_in_order(browser, demo_app):
    page = open_chat(browser, demo_app)
    send(page, "/to pt")
    expect(page.get_by_text("Now translating Auto-detect → Portuguese.")).to_be_visible(
        timeout=15_000)
    lines = [f"Order {100 + i} was shipped today and will arrive on Friday." for i in range(12)]
    page.fill("#chat-input", "\n".join(lines))
    page.keyboard.press("Enter")
    expect(page.get_by_text("Translating · 12 of 12 parts")).to_be_visible(timeout=300_000)
    page.wait_for_selector(ANSWER, timeout=300_000)
    out = page.locator(ANSWER).last.inner_text().strip().split("\n")
    assert len(out) == 12  # one line each, in order: no line carries another line's number
    numbers = [[n for n in range(100, 112) if str(n) in line] for line in out]
    assert all(found in ([], [100 + i]) for i, found in enumerate(numbers)), out
    assert sum(found == [100 + i] for i, found in enumerate(numbers)) >= 8, out
    assert sum(detect_language(line) == "pt" for line in out) >= 9, out
    expect(page.get_by_text("· 12 parts").last).to_be_visible()
    page.close()

def test_a_failed_part_is_marked_in_place_and_retry_the_rest_sends_only_it(browser, echo_app):
    url, stub = echo_app
    lines = [f"Line {i} of a letter to the customer." for i in range(1, 5)]
    broken = {lines[1]}

    def answer(prompt: str) -> str:
        text = echo_source(prompt)
        if text in broken:
            raise RuntimeError("scripted failure")
        return text

    stub.answer = answer
    try:
        page = open_chat(browser, url)
        send(page, "/to pt")
        expect(page.get_by_text("Now translating Auto-detect → Portuguese.")).to_be_visible(
            timeout=15_000)
        page.fill("#chat-input", "\n".join(lines))
        page.keyboard.press("Enter")
        expect(page.get_by_text("Translated 3 of 4 parts; part 2 could not be translated")
               ).to_be_visible(timeout=60_000)
        partial = page.locator(ANSWER).last.inner_text().strip().split("\n")
        assert partial == [lines[0], "[not translated] " + lines[1], lines[2], lines[3]]
        broken.clear()
        sent_before, shown = len(stub.prompts), answers(page)
        page.get_by_role("button", name="Retry the rest").click()
        page.locator(ANSWER).nth(shown).wait_for(timeout=60_000)
        assert page.locator(ANSWER).last.inner_text().strip().split("\n") == lines
        assert [echo_source(p) for p in stub.prompts[sent_before:]] == [lines[1]]  # only it
        page.close()
    finally:
        stub.answer = echo_source


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
    tmp = tmp_path_factory.mktemp("limit")
    with StubModel() as stub:
        # HYMT_CHECKS=0: the stand-in echoes (a marker, not a translation), which the answer
        # checks would rightly send again as the wrong language; these tests count the calls.
        env = app_env(HYMT_BASE_URL=stub.base_url, HYMT_API_KEY="k", HYMT_MODEL="stub",
                      HYMT_CHECKS="0",
                      HYMT_CACHE_DIR=str(tmp / "cache"), HYMT_PORT=str(free_port()),
                      HYMT_MAX_INPUT_CHARS="300")
        with running_app(env, free_port(), tmp / "app.log") as url:
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
            page.wait_for_selector(ANSWER, timeout=30_000)
            assert [echo_source(p) for p in stub.prompts] == ["Une phrase courte."]
            page.close()


def test_messages_sent_while_the_model_warms_up_are_translated_once_it_is_ready(
    browser, tmp_path_factory
):
    tmp = tmp_path_factory.mktemp("warmup")
    model_port, sidecar_port = free_port(), free_port()
    state = tmp / "cache" / "run" / f"sidecar-{sidecar_port}.json"
    state.parent.mkdir(parents=True)
    state.write_text(json.dumps({"base_url": f"http://127.0.0.1:{model_port}/v1", "api_key": "k",
                                 "model": "stub", "state": "starting"}))
    env = app_env(HYMT_CACHE_DIR=str(tmp / "cache"), HYMT_PORT=str(sidecar_port))
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
        expect(page.get_by_text("your 2 waiting messages")).to_be_visible(timeout=15_000)
        assert answers(page) == 0
        with StubModel(port=model_port):  # the model is up: both are translated, in order
            page.locator(ANSWER).nth(1).wait_for(timeout=60_000)
            texts = [el.inner_text().strip() for el in page.locator(ANSWER).all()]
            assert texts == ["First message, sent early.", "Second message, also early."]
            expect(page.locator("#hymt-banner[data-kind=wait]")).to_have_count(0, timeout=20_000)
        page.close()


def test_a_model_that_is_down_gets_one_clear_message_and_retry_sends_the_text_again(
    browser, tmp_path_factory
):
    tmp = tmp_path_factory.mktemp("down")
    model_port = free_port()
    env = app_env(HYMT_BASE_URL=f"http://127.0.0.1:{model_port}/v1", HYMT_API_KEY="k",
                  HYMT_MODEL="stub", HYMT_CACHE_DIR=str(tmp / "cache"), HYMT_PORT=str(free_port()))
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
        with StubModel(port=model_port):
            retry.click()
            page.wait_for_selector(ANSWER, timeout=30_000)
            assert page.locator(ANSWER).last.inner_text().strip() == "Nothing typed is lost."
        page.close()


# --- chat profiles: Support agent and Kiosk ----------------------------------------------------


def open_profile(browser: Browser, url: str, profile: str, ready: str,
                 init_script: str | None = None) -> Page:
    """A page on the app switched to *profile* (Chainlit's profile picker), once *ready* shows."""
    page = browser.new_page(viewport={"width": 1100, "height": 900}, accept_downloads=True)
    if init_script:
        page.add_init_script(init_script)
    page.goto(url)
    page.wait_for_selector("#starters button:not([disabled])", timeout=60_000)  # Translator
    page.click("#chat-profiles")
    page.click(f"[data-test='select-item:{profile}']")
    expect(page.get_by_text(ready).first).to_be_visible(timeout=30_000)
    return page


def test_support_agent_translates_both_ways_and_downloads_the_transcript(
    browser, demo_app, tmp_path
):
    """On the real demo model: routing depends on the input only (detection, not the model's
    answer), so the checks below hold whatever the small model writes."""
    page = open_profile(browser, demo_app, "Support agent", "Agent: English ⇄ Customer: not known")
    send(page, "Hola, buenos días. Mi paquete no ha llegado todavía y necesito ayuda, por favor.")
    expect(page.get_by_text("Customer · Spanish → English").first).to_be_visible(timeout=180_000)
    expect(page.get_by_text("Agent: English ⇄ Customer: Spanish").first).to_be_visible()
    send(page, "I am sorry about the delay. Let me check your order right now.")
    expect(page.get_by_text("Your reply · English → Spanish").first).to_be_visible(
        timeout=180_000)
    expect(page.get_by_text("Back-translation into English").first).to_be_visible()  # default on
    send(page, "/transcript")  # Enter picks the command from the menu; the button sends it
    page.click("#chat-submit")
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


def test_a_customer_joins_a_room_from_their_own_phone(browser, demo_app, tmp_path):
    """Two real pages on the real demo model: the agent opens a room, the customer joins with
    the link on a "phone" whose browser speaks Spanish; each sends two messages and reads the
    other's translated, the original beside it; a reload keeps the talk; the transcript has all
    four. The checks hold whatever the small model writes (structure, languages, originals)."""
    agent = open_profile(browser, demo_app, "Support agent",
                         "Agent: English ⇄ Customer: not known")
    send(agent, "/room")
    agent.click("#chat-submit")
    link = agent.locator("a[href*='/room/']").first
    expect(link).to_be_visible(timeout=30_000)
    expect(agent.get_by_role("img", name="room.png")).to_be_visible()  # the QR code
    url = link.get_attribute("href")
    phone = browser.new_context(locale="es-ES", viewport={"width": 390, "height": 800})
    guest = phone.new_page()
    guest.goto(url)
    expect(guest.get_by_text("Su idioma")).to_be_visible(timeout=15_000)
    expect(guest.locator("#language")).to_have_value("es")
    words = ["Hola, mi paquete no ha llegado todavía.", "El número de pedido es JD123456789."]
    for number, text in enumerate(words, 1):
        guest.fill("#text", text)
        guest.press("#text", "Enter")
        expect(guest.locator(".msg.guest")).to_have_count(number, timeout=180_000)
    expect(agent.get_by_text("Customer · Spanish → English")).to_have_count(2, timeout=180_000)
    expect(agent.get_by_text(words[0], exact=False).first).to_be_visible()  # the original
    replies = ["I am sorry about the delay.", "Your parcel leaves our warehouse today."]
    for number, text in enumerate(replies, 1):
        send(agent, text)
        expect(guest.locator(".msg.agent")).to_have_count(number, timeout=180_000)
    for index, text in enumerate(replies):
        shown = guest.locator(".msg.agent").nth(index)
        expect(shown.locator(".orig")).to_contain_text(text)  # the original, small
        assert shown.locator(".text").inner_text().strip()  # and its translation
    guest.reload()
    expect(guest.locator(".msg")).to_have_count(4, timeout=15_000)  # rejoined, with history
    send(agent, "/transcript")
    agent.click("#chat-submit")
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
def kiosk_app(demo_server, tmp_path_factory):
    """The real demo model behind a kiosk whose idle time is 10 s."""
    tmp = tmp_path_factory.mktemp("kiosk")
    env = app_env(demo_server.env(), HYMT_CACHE_DIR=str(tmp / "cache"), HYMT_WINDOW_MAX="2",
                  HYMT_KIOSK_IDLE_SECONDS="10")
    with running_app(env, free_port(), tmp / "app.log") as url:
        yield url


def test_kiosk_big_buttons_read_aloud_and_idle_reset(browser, kiosk_app):
    url = kiosk_app
    page = open_profile(browser, url, "Kiosk", "Welcome!", init_script=KIOSK_INIT)
    expect(page.locator("body.hymt-kiosk")).to_have_count(1, timeout=10_000)  # kiosk.js is on
    spanish = page.get_by_role("button", name="Español", exact=True).first
    expect(spanish).to_be_visible()
    assert spanish.bounding_box()["height"] >= 60  # touch size (kiosk.css)
    expect(page.locator("#chat-profiles")).to_be_hidden()  # strangers cannot switch modes
    spanish.click()
    expect(page.get_by_text("→ Español.")).to_be_visible(timeout=15_000)
    send(page, "Where is the nearest train station, please?")
    page.wait_for_selector(ANSWER, timeout=120_000)
    shown = page.locator(ANSWER).last.inner_text().strip()
    assert detect_language(shown) == "es", shown  # the real model answered in Spanish
    read = page.locator(".hymt-tts-button").last  # the answer's (not an earlier message's)
    expect(read).to_be_visible(timeout=10_000)
    read.click()
    spoken = page.evaluate("window.__spoken")
    assert spoken == [{"text": shown, "lang": "es-ES"}]  # exactly what is shown, in Spanish

    # Nobody touches it: a countdown, then a fresh welcome screen without the conversation.
    expect(page.locator("#hymt-kiosk-idle[data-open]")).to_contain_text("Starting afresh",
                                                                        timeout=15_000)
    expect(page.locator(ANSWER)).to_have_count(0, timeout=20_000)
    expect(page.get_by_text("Where is the nearest train station")).to_have_count(0)
    expect(page.get_by_text("Welcome!").first).to_be_visible(timeout=15_000)
    expect(page.locator("body.hymt-kiosk")).to_have_count(1)  # still a kiosk
    page.close()


def test_kiosk_counter_two_people_two_languages_one_screen(browser, kiosk_app):
    """The kiosk's counter page on the real demo model: each side writes in its language and the
    other side reads it translated, the original small beneath; the idle reset (10 s here)
    wipes both sides."""
    page = browser.new_page(viewport={"width": 1200, "height": 800})
    page.goto(f"{kiosk_app}/counter")
    left, right = page.locator("#side-a"), page.locator("#side-b")
    left.locator("select.language").select_option("en")
    right.locator("select.language").select_option("es")
    left.locator("textarea").fill("Where is the train station, please?")
    left.locator("textarea").press("Enter")
    expect(right.locator(".msg.theirs")).to_have_count(1, timeout=180_000)
    expect(right.locator(".msg.theirs .orig")).to_contain_text(  # named in the reader's language
        "Inglés: Where is the train station, please?")
    assert right.locator(".msg.theirs .main").inner_text().strip()
    expect(left.locator(".msg.mine")).to_have_text("Where is the train station, please?")
    right.locator("textarea").fill("La estación está al final de esta calle.")
    right.locator("textarea").press("Enter")
    expect(left.locator(".msg.theirs")).to_have_count(1, timeout=180_000)
    expect(left.locator(".msg.theirs .orig")).to_contain_text("Spanish: La estación está")
    # Nobody touches the screen: after the idle time both sides are empty again.
    expect(page.locator(".msg")).to_have_count(0, timeout=30_000)
    page.close()


@pytest.fixture(scope="module")
def held_app(tmp_path_factory):
    """The app against a stand-in that sits on the document's parts until the test opens it:
    the moment under test (a document in progress) must last as long as the test needs, which
    no real model can be told to do. Short segments make the text below an 8-part document."""
    tmp = tmp_path_factory.mktemp("held")
    gate = Gate()
    try:
        with StubModel(answer=gate) as stub:
            env = app_env(HYMT_BASE_URL=stub.base_url, HYMT_API_KEY="k", HYMT_MODEL="stub",
                          HYMT_CHECKS="0", HYMT_SEGMENT_CHARS="80",
                          HYMT_CACHE_DIR=str(tmp / "cache"), HYMT_PORT=str(free_port()))
            with running_app(env, free_port(), tmp / "app.log") as url:
                yield url, gate
    finally:
        gate.open()


def test_the_composer_stays_free_while_the_tabs_own_document_translates(
        browser, held_app, artifacts, tmp_path):
    """Issue 22: the person types and sends a one-liner while their document's progress is on
    screen; the document's line has its own Cancel, which stops that document only."""
    url, gate = held_app
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

    gate.open()
    expect(page.locator("a.inline-file[download='lettre.en.txt']")).to_be_visible(
        timeout=60_000)
    expect(job.get_by_role("button", name="Cancel")).to_have_count(0)  # over: no Cancel

    gate.close()  # a second document, cancelled by its own button
    second = tmp_path / "suite.txt"
    second.write_text(letter.read_text(encoding="utf-8"), encoding="utf-8")
    page.set_input_files("input[type=file]", str(second))
    expect(page.locator("#chat-submit")).to_be_enabled(timeout=30_000)
    page.click("#chat-submit")
    job = page.locator(".ai-message", has_text="Translating suite.txt")
    job.get_by_role("button", name="Cancel").click()
    expect(job).to_contain_text("cancelled", timeout=30_000)
    gate.open()
    page.wait_for_timeout(1000)  # what a cancelled job would still send has had its chance
    assert page.locator("a.inline-file[download='suite.en.txt']").count() == 0
    page.close()


_DOT = """() => [...document.querySelectorAll('div')].filter(
    e => getComputedStyle(e, '::after').animationName === 'loading-cursor-pulse').length"""


def test_a_message_on_its_way_shows_chainlits_pulsing_dot_until_its_answer(browser, held_app):
    """app.py registers its message handler without Chainlit's "on_message" run step (issue
    28), inside which Chainlit drew its pulsing dot; public/style.css draws the dot while the
    Stop button is shown. Held by the stand-in, the message stays on its way."""
    url, gate = held_app
    gate.close()
    page = open_chat(browser, url)
    try:
        assert page.evaluate(_DOT) == 0
        send(page, "Paragraphe unique, envoyé seul.")
        expect(page.locator("#stop-button")).to_be_visible()
        assert page.evaluate(_DOT) == 1
    finally:
        gate.open()
    expect(page.locator(ANSWER, has_text="Paragraphe unique")).to_be_visible(timeout=60_000)
    expect(page.locator("#stop-button")).to_have_count(0)
    assert page.evaluate(_DOT) == 0
    page.close()
