"""What the agent and the customer can trust, seen from outside in real browsers (Debian's
chromium, Playwright): the real app (``chainlit run app.py``) on the engine double, whose
phrasebook answers the app's own prompts both ways (the translation into Spanish, and the
back-translation into English the verdict judges).

* At the desk, a reply whose back-translation refuses what the agent asked is held: the agent
  reads the hold, the negation and the two choices; the visitor's page shows nothing of it and
  its "translating…" ends; "Send anyway" then delivers it.
* In a room, a reply whose back-translation keeps its meaning goes at once and says so.
* A customer's message whose translation says another thing reaches the agent flagged.
* A reply typed after the room closed says that nobody received it.

The socket-level tests (``tests/test_room_hold.py``) read the events; here it is what the pages
draw from them. Each test signs in an agent of its own: a signed-in agent's room outlives their
tab, and would be the next test's otherwise."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from hymt_chat.words.source import CHAT

# The agent's page is English in these tests: the catalogs' source words.
EDIT_LABEL, HELD_NOTE = CHAT["edit"], CHAT["held_note"]
HELD_SENT, SEND_ANYWAY_LABEL = CHAT["held_sent"], CHAT["send_anyway"]
from hymt_chat.modes.wording import DELIVERED, NOT_DELIVERED
from hymt_chat.service.auth import hash_password
from hymt_chat.text.verdict import judge
from hymt_chat.words.catalogs import catalog
from tests.support.browser import new_page
from tests.support.double_app import double_app
from tests.support.engine_double import running_double
from tests.support.phrasebook import phrasebook
from tests.test_desk import G1, _start
from tests.test_desk_browsers_proxy import PASSWORD, _agent, _say

pytestmark = pytest.mark.slow

ASKED = "I am sorry. Please send me a photo of the box."
REFUSED = "Lo siento, pero no puedo proporcionar una foto de la caja."
REFUSED_BACK = "I am sorry, but I cannot provide a photo of the box."
YES = "Yes, of course."
SI = "Sí, claro."
BROKEN = "El paquete llegó roto."
LATE = "The package arrived late."
LATE_BACK = "El paquete llegó tarde."
OPENING = "Hola, mi pedido no ha llegado."
# Both ways for every text: a customer's message is translated back too, and an echo in the
# wrong language would be a finding of its own.
BOOK = phrasebook({
    ASKED: {"es": REFUSED}, REFUSED: {"en": REFUSED_BACK},
    YES: {"es": SI}, SI: {"en": "Yes, sure."},
    BROKEN: {"en": LATE}, LATE: {"es": LATE_BACK},
    OPENING: {"en": "Hello, my order has not arrived."},
    "Hello, my order has not arrived.": {"es": OPENING},
})
AGENTS = ("alice", "bob", "carol", "dave")
PHONE: ViewportSize = {"width": 390, "height": 800}
# Every status line the guest's page shows, in order (read where it is drawn: a translating
# line that passed between two events of the socket is recorded too).
_WATCH_STATUS = """() => {
  window.__statuses = [];
  new MutationObserver(() => window.__statuses.push(document.getElementById("status").textContent))
    .observe(document.getElementById("status"), {childList: true, characterData: true,
                                                  subtree: true});
}"""


@pytest.fixture(scope="module")
def trust_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app on the phrasebook's double, answer checks on, with signed-in agents (the desk
    takes visitors only where agents can sign in)."""
    agents = ",".join(f"{name}:{hash_password(PASSWORD, n=2**10)}" for name in AGENTS)
    with running_double(answer=BOOK) as double, \
            double_app(double, tmp_path_factory.mktemp("trust"), HYMT_AGENTS=agents,
                       CHAINLIT_AUTH_SECRET="s" * 64) as url:
        yield url


def _signed_in(browser: Browser, url: str, name: str) -> Page:
    """Agent *name*'s page in the Support agent profile, its banner shown."""
    page = _agent(browser.new_context(viewport={"width": 1100, "height": 900}), url, name)
    expect(page.get_by_text(re.compile(r"^Agent: English ⇄ Customer")).first).to_be_visible()
    return page


def _room_with_guest(browser: Browser, url: str, agent_name: str) -> tuple[Page, Page]:
    """Agent *agent_name* opens a room and a Spanish-speaking customer joins it on a phone:
    the agent's page, the guest's."""
    agent = _signed_in(browser, url, agent_name)
    _say(agent, "/room")
    link = agent.locator("a[href*='/room/']").first
    expect(link).to_be_visible()
    guest = new_page(browser.new_context(locale="es-ES", viewport=PHONE))
    guest.goto(str(link.get_attribute("href")))
    expect(guest.locator("#language")).to_have_value("es")
    return agent, guest


def _meta(delivery: str) -> str:
    """The meta line of the agent's reply into Spanish ending with *delivery*, as a pattern."""
    return rf"^Your reply · English → Spanish · .* · {re.escape(delivery)}$"


def test_a_desk_reply_whose_back_translation_refuses_it_is_held_until_sent_anyway(
        browser: Browser, trust_app: str) -> None:
    """"Please send me a photo" came back as "I cannot provide a photo": the visitor must not
    read the opposite of what the agent meant unless the agent chooses so."""
    verdict = judge(ASKED, REFUSED, "en", "es", back=REFUSED_BACK)
    negation = [f.message for f in verdict.findings if f.kind == "negation"]
    assert verdict.hold and negation, verdict  # the app's own verdict on these words
    ticket = _start(trust_app, G1, "es", OPENING)
    assert ticket.status_code == 200, ticket.text
    number, token = ticket.json()["number"], ticket.json()["token"]
    visitor = browser.new_context(locale="es-ES", viewport=PHONE)
    agent = _signed_in(browser, trust_app, "alice")
    try:
        guest = new_page(visitor)
        guest.goto(f"{trust_app}/room/{token}#g={G1}")
        expect(guest.locator(".msg.guest .text")).to_have_text([OPENING])
        agent.get_by_role("button", name=f"Take #{number}").click()
        expect(agent.get_by_text(f"Now with #{number} · Spanish").last).to_be_visible()
        joined = catalog("es").group("guest")["joined"]
        expect(guest.locator("#status")).to_have_text(joined)
        guest.evaluate(_WATCH_STATUS)

        _say(agent, ASKED)
        reply = agent.locator(".ai-message", has_text=HELD_NOTE)
        expect(reply.get_by_role("button", name=SEND_ANYWAY_LABEL)).to_be_visible()
        expect(reply.get_by_role("button", name=EDIT_LABEL)).to_be_visible()
        expect(reply).to_contain_text(REFUSED)
        expect(reply).to_contain_text(f"⚠ {negation[0]}")
        expect(reply.get_by_text(re.compile(re.escape(DELIVERED)))).to_have_count(0)
        # The visitor's page said "translating…" and then went back to its notice: it is not
        # left waiting for a reply that is not coming, and it shows nothing of this one.
        expect(guest.locator("#status")).to_have_text(joined)
        statuses = guest.evaluate("window.__statuses")
        translating = [i for i, said in enumerate(statuses) if said == catalog("es").group("guest")["translating"]]
        assert translating and joined in statuses[translating[-1] + 1:], statuses
        assert guest.locator(".msg.agent").count() == 0
        assert REFUSED not in guest.locator("#log").inner_text()

        reply.get_by_role("button", name=SEND_ANYWAY_LABEL).click()
        expect(guest.locator(".msg.agent .text")).to_have_text([REFUSED])
        expect(agent.get_by_text(HELD_SENT)).to_be_visible()
        expect(agent.locator(".ai-message", has_text=HELD_NOTE)).to_have_count(0)
    finally:
        visitor.close()
        agent.context.close()


def test_a_room_reply_whose_back_translation_keeps_its_meaning_is_sent(
        browser: Browser, trust_app: str) -> None:
    """"Yes, sure." for "Yes, of course." is a paraphrase, not a change: no hold, and the
    agent's page says the customer got it."""
    assert not judge(YES, SI, "en", "es", back="Yes, sure.").hold
    agent, guest = _room_with_guest(browser, trust_app, "bob")
    try:
        _say(agent, YES)
        expect(guest.locator(".msg.agent .text")).to_have_text([SI])
        reply = agent.locator(".ai-message", has_text=SI).last
        expect(reply.get_by_text(re.compile(_meta(DELIVERED)))).to_be_visible()
        expect(agent.get_by_text(HELD_NOTE)).to_have_count(0)
        expect(agent.get_by_role("button", name=SEND_ANYWAY_LABEL)).to_have_count(0)
    finally:
        guest.context.close()
        agent.context.close()


def test_a_customers_message_whose_translation_changes_its_meaning_is_flagged(
        browser: Browser, trust_app: str) -> None:
    """"Broken" read as "late" would have the agent answer another problem: the agent reads
    the customer's message with a warning naming both words."""
    verdict = judge(BROKEN, LATE, "es", "en", back=LATE_BACK)
    named = [m for m in verdict.messages if "“tarde”" in m and "“roto”" in m]
    assert named, verdict
    agent, guest = _room_with_guest(browser, trust_app, "carol")
    try:
        guest.fill("#text", BROKEN)
        guest.press("#text", "Enter")
        message = agent.locator(".ai-message", has_text=LATE).last
        expect(message).to_contain_text("Customer · Spanish → English")
        expect(message).to_contain_text(BROKEN)  # the original, beneath
        expect(message.locator("li", has_text=named[0])).to_have_text(f"⚠ {named[0]}")
    finally:
        guest.context.close()
        agent.context.close()


def test_a_reply_after_the_room_closed_says_nobody_received_it(
        browser: Browser, trust_app: str) -> None:
    """An agent who had a room open a moment ago must not believe the customer got the next
    reply: its meta line says it went nowhere, and the guest's page has nothing of it."""
    agent, guest = _room_with_guest(browser, trust_app, "dave")
    try:
        _say(agent, "/room close")
        expect(guest.locator("#status")).to_have_text(catalog("es").group("guest")["closed"])
        _say(agent, YES)
        reply = agent.locator(".ai-message", has_text=SI).last
        expect(reply.get_by_text(re.compile(_meta(NOT_DELIVERED)))).to_be_visible()
        expect(agent.get_by_text(re.compile(_meta(DELIVERED)))).to_have_count(0)
        assert guest.locator(".msg.agent").count() == 0
    finally:
        guest.context.close()
        agent.context.close()
