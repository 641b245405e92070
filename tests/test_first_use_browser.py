"""Two first moments of the app seen in a real browser (Debian's chromium, Playwright), where the
socket-level tests only read the events the app sends:

* a text of several parts shows its part count while the model still holds every part
  (``tests/test_progress_first.py``), and the whole answer then comes back in order;
* a room reply flagged by the answer checks stays off the guest's page until the agent presses
  "Send anyway" (``tests/test_room_hold.py``), and then shows there.

What the page draws from those events (Chainlit's React tree, the room's own page) is what is
under test here. The models are the test's: the engine double holds the parts until the test
releases them, so the first test does not depend on the host's speed; the room runs on
``tests/test_room_hold.py``'s stand-in, whose Spanish for one reply adds a time its source
lacks."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from hymt_chat.modes import wording
from hymt_chat.words.source import CHAT

# The agent's page is English in these tests: the catalogs' source words.
EDIT_LABEL, HELD_NOTE = CHAT["edit"], CHAT["held_note"]
HELD_SENT, SEND_ANYWAY_LABEL = CHAT["held_sent"], CHAT["send_anyway"]
from tests.support.browser import ANSWER, answers, new_page, open_chat, open_profile, send
from tests.support.double_app import double_app
from tests.support.engine_double import EngineDouble, Request, echo_source, running_double
from tests.support.tabs import app, marked
from tests.test_room_hold import CLEAN, ENGLISH, FLAGGED, SPANISH, answer

pytestmark = pytest.mark.slow

# A client's letter of four paragraphs, about 2,000 characters: each paragraph is a part.
PARAGRAPHS = [
    f"Paragraphe {i} de la lettre du client : nous avons bien reçu votre commande du mois "
    "dernier, mais le colis n'est toujours pas arrivé à notre adresse de livraison. Le "
    "transporteur indique qu'il a été déposé au point relais, pourtant personne ne l'y a "
    "trouvé. Pourriez-vous vérifier le numéro de suivi, contacter le transporteur et nous dire "
    "quand un nouvel envoi sera possible ? Nous restons à votre disposition pour toute "
    "information complémentaire. Merci d'avance pour votre aide rapide."
    for i in range(4)]
LETTER = "\n\n".join(PARAGRAPHS)
CUSTOMER = "Hola, mi pedido no ha llegado."
assert CUSTOMER in ENGLISH  # the stand-in has its English


def _a_part(req: Request) -> bool:
    return "Paragraphe" in echo_source(req.prompt)


def _what_happened(double: EngineDouble, log: Path) -> str:
    """What the double was asked and the app's log, for a failure's message."""
    asked = [(r.state, echo_source(r.prompt)[:40]) for r in double.requests]
    tail = log.read_text(errors="replace")[-3000:] if log.exists() else "(no log)"
    return f"the double was asked: {asked}\nthe app's log ends:\n{tail}"


@pytest.fixture
def held(tmp_path: Path) -> Iterator[tuple[str, EngineDouble]]:
    """The app on an engine double that holds the letter's parts until the test releases them,
    each answered "EN:<the part>" (a marker of what reached the model, not a translation:
    HYMT_CHECKS=0, or the checks would rightly send it again as French)."""
    with running_double(answer=marked, hold=_a_part) as double, \
            double_app(double, tmp_path, HYMT_CHECKS="0") as url:
        try:
            yield url, double
        finally:
            double.set_hold(False)  # nothing left held for the app's shutdown


def test_a_text_of_several_parts_shows_its_count_before_the_first_part(
        browser: Browser, held: tuple[str, EngineDouble], tmp_path: Path) -> None:
    """The count on screen while no part is back is what tells a person their long text is
    under way; the seconds it took to appear are printed, the host's speed being no verdict."""
    url, double = held
    count = f"Translating · {wording.progress_label(0, len(PARAGRAPHS), None)}"
    page = open_chat(browser, url)
    page.fill("#chat-input", LETTER)  # typed, its blank lines would press Enter
    page.wait_for_selector("#chat-submit:not([disabled])")
    pressed = time.monotonic()
    page.keyboard.press("Enter")
    try:
        expect(page.get_by_text(count)).to_be_visible()
    except AssertionError as err:
        raise AssertionError(f"{err}\n{_what_happened(double, tmp_path / 'app.log')}") from None
    print(f"\npart count visible {time.monotonic() - pressed:.2f} s after Enter")
    assert [r.state for r in double.requests if _a_part(r)].count("finished") == 0
    assert answers(page) == 0

    double.set_hold(False)
    page.wait_for_selector(ANSWER)
    expect(page.get_by_text(count)).to_have_count(0)  # the line became the answer
    assert page.locator(ANSWER).last.inner_text().strip() == "\n\n".join(
        f"EN:{paragraph}" for paragraph in PARAGRAPHS)
    page.close()


def test_a_flagged_room_reply_reaches_the_guest_only_once_the_agent_confirms(
        browser: Browser, tmp_path: Path) -> None:
    """A reply whose translation the checks doubt must not reach the customer unseen: the
    agent's page shows it held with its two choices while the guest's page stays without it,
    and "Send anyway" is what puts it there."""
    with app(tmp_path, answer=answer, HYMT_CHECKS="true") as (url, _):
        agent = open_profile(browser, url, "Support agent",
                             "Agent: English ⇄ Customer: not known")
        send(agent, "/room")
        link = agent.locator("a[href*='/room/']").first
        expect(link).to_be_visible()
        phone = browser.new_context(locale="es-ES", viewport={"width": 390, "height": 800})
        try:
            guest = new_page(phone)
            guest.goto(str(link.get_attribute("href")))
            guest.fill("#text", CUSTOMER)
            guest.press("#text", "Enter")
            # The customer's message on the agent's page: the room knows they read Spanish.
            expect(agent.get_by_text("Customer · Spanish → English").first).to_be_visible()

            send(agent, FLAGGED)
            reply = agent.locator(".ai-message", has_text=HELD_NOTE)
            expect(reply.get_by_role("button", name=SEND_ANYWAY_LABEL)).to_be_visible()
            expect(reply.get_by_role("button", name=EDIT_LABEL)).to_be_visible()
            expect(reply).to_contain_text(SPANISH[FLAGGED])
            agents_lines = guest.locator(".msg.agent .text")
            assert agents_lines.count() == 0
            assert SPANISH[FLAGGED] not in guest.locator("#log").inner_text()

            # A clean reply meanwhile reaches the guest at once: their page is live, and the
            # held one, had it been sent, would have come before it.
            send(agent, CLEAN)
            expect(agents_lines).to_have_text([SPANISH[CLEAN]])
            assert SPANISH[FLAGGED] not in guest.locator("#log").inner_text()

            reply.get_by_role("button", name=SEND_ANYWAY_LABEL).click()
            expect(agents_lines).to_have_text([SPANISH[CLEAN], SPANISH[FLAGGED]])
            expect(agent.get_by_text(HELD_SENT)).to_be_visible()
        finally:
            phone.close()
            agent.close()
