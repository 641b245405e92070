"""The translation memory in every mode, driven as sessions (no Chainlit; the model is the
stand-in of tests/support/stub_model.py, answering from a table): a repeat is answered without
a model call on the Translator page, in the Support agent mode, in a room, on the kiosk and its
counter (which write nothing a visitor typed); an agent's correction — signed in only — is used
next conversation, shown "corrected by an agent"; a correction that changes a number asks to
be sent again; one of several lines, or of an order number, is keyed as the translator sees it.
The real model, two app replicas and the browser: tests/test_e2e_scale.py, tests/test_browser.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from hymt_chat.modes.agent.session import AgentSession
from hymt_chat.modes.counter import Counter
from hymt_chat.modes.kiosk_session import KioskSession
from hymt_chat.modes.room import Rooms
from hymt_chat.modes.session import Services
from hymt_chat.modes.translator_session import TranslatorSession
from hymt_chat.store.memory import CORRECTED, MACHINE
from tests.support.sessions import RecordingScreen, services
from tests.support.stub_model import StubModel, echo_source

TABLE = {
    "Hola, mi paquete no ha llegado todavía.": "Hello, my package has not arrived yet.",
    "Hello, my package has not arrived yet.": "Hola, mi paquete no ha llegado todavía.",
    "Lamento mucho el retraso de su pedido.": "I am very sorry about the delay of your order.",
    "I am very sorry about the delay of your order.": "Lamento mucho el retraso de su pedido.",
    "Gracias por esperar tanto tiempo.": "Thank you for waiting so long.",
    "Your parcel ships in 3 days.": "Su paquete se envía en 3 días.",
    "Su paquete se envía en 3 días.": "Your parcel ships in 3 days.",
    "El pedido [1] salió ayer del almacén.": "Order [1] left the warehouse yesterday.",
    "El pedido [1] llega mañana por la tarde.": "Order [1] arrives tomorrow afternoon.",
}
CUSTOMER = "Hola, mi paquete no ha llegado todavía."


def answer(prompt: str) -> str:
    text = echo_source(prompt).strip()
    return TABLE.get(text, text)


@pytest.fixture
def stub() -> Iterator[StubModel]:
    with StubModel(answer) as model:
        yield model


@pytest.fixture
def svc(stub: StubModel, tmp_path: Path) -> Services:
    return services(stub, tmp_path, memory=True, rooms=Rooms())


def _agent(svc: Services, user_key: str = "user:alice") -> tuple[AgentSession, RecordingScreen]:
    screen = RecordingScreen()
    return AgentSession(svc, screen, session_id=f"a-{id(screen)}", user_key=user_key,
                        page_url="https://chat.example"), screen


def _calls(stub: StubModel) -> int:
    return len(stub.prompts)


def _answer(screen: RecordingScreen):
    """The last translation shown (a banner may follow it when the pair changed)."""
    return next(s.reply for s in reversed(screen.shown) if s.reply.markdown.startswith("```"))


# --- a repeat, in every mode -----------------------------------------------------------------

async def test_the_translator_page_answers_a_repeat_from_the_memory(stub, svc) -> None:
    screen = RecordingScreen()
    session = TranslatorSession(svc, screen, session_id="t1", user_key="addr:1")
    await session.message(CUSTOMER, None)
    await session.message(CUSTOMER, None)
    assert _calls(stub) == 1
    first, again = screen.texts[-2:]
    assert "Hello, my package has not arrived yet." in again and "from memory" in again
    assert "from memory" not in first


async def test_the_agent_mode_answers_a_repeat_in_the_next_conversation(stub, svc) -> None:
    one, _ = _agent(svc)
    await one.message(CUSTOMER, None)
    two, screen = _agent(svc)
    await two.message(CUSTOMER, None)
    assert _calls(stub) == 2  # the first conversation's: the message and its check
    assert "Customer · Spanish → English" in _answer(screen).markdown
    assert "from memory" in _answer(screen).markdown
    turn = two.conv.transcript[-1]
    assert turn.translation == "Hello, my package has not arrived yet."


async def test_an_agents_reply_from_the_memory_still_gets_its_back_translation(stub, svc) -> None:
    one, _ = _agent(svc)
    await one.message(CUSTOMER, None)  # the customer's language is learnt: Spanish
    await one.message("I am very sorry about the delay of your order.", None)
    used = _calls(stub)
    assert used == 4  # the customer's message, the reply, each with its back-translation
    two, screen = _agent(svc)
    await two.message(CUSTOMER, None)
    await two.message("I am very sorry about the delay of your order.", None)
    assert _calls(stub) == used  # the reply and its back-translation both from the memory
    assert "Your reply · English → Spanish" in _answer(screen).markdown
    assert "Back\\-translation into English" in _answer(screen).markdown  # the switch


async def _room_with_guest(svc: Services):
    """An agent's room whose Spanish guest has written CUSTOMER (shown in the agent's tab)."""
    agent, screen = _agent(svc)
    await agent.message("/room", None)
    room = svc.rooms.get(agent.room.token)  # type: ignore[union-attr]
    room.join("g" * 32)
    room.set_guest_language("es")
    await room.guest_says("g" * 32, CUSTOMER, "addr:guest")
    await asyncio.sleep(0.05)  # the agent's tab is updated from the session's own context
    return agent, screen, room


async def test_a_room_answers_the_guest_from_the_memory(stub, svc) -> None:
    warm, _ = _agent(svc)
    await warm.message(CUSTOMER, None)
    agent, screen, room = await _room_with_guest(svc)
    assert _calls(stub) == 2  # the warm-up's message and its check; the guest's: none
    assert room.history[-1].translation == "Hello, my package has not arrived yet."
    assert "Customer · Spanish → English" in screen.last().markdown


async def test_the_kiosk_and_its_counter_read_the_memory_and_store_no_visitor_text(
        stub, svc) -> None:
    translator_screen = RecordingScreen()
    page = TranslatorSession(svc, translator_screen, session_id="t1", user_key="addr:1")
    await page.message(CUSTOMER, None)  # the chat page kept it
    screen = RecordingScreen()
    kiosk = KioskSession(svc, screen, session_id="k1", user_key="addr:2")
    await kiosk.start()
    await kiosk.tap({"target": "en"}, "English")
    await kiosk.message(CUSTOMER, None)
    assert "from memory" in screen.last().markdown and _calls(stub) == 1
    await kiosk.message("Gracias por esperar tanto tiempo.", None)  # a visitor's own words
    await kiosk.message("Gracias por esperar tanto tiempo.", None)
    assert _calls(stub) == 3  # asked each time: nothing was kept
    counter = Counter(svc.translator, user="screen", a="es", b="en")  # type: ignore[arg-type]
    said = await counter.say("a", CUSTOMER)
    assert said["translation"] == "Hello, my package has not arrived yet." and _calls(stub) == 3
    await counter.say("a", "Gracias por esperar tanto tiempo.")
    store = svc.translator.memory.store()  # type: ignore[union-attr]
    assert [e.segment for e in store.entries([MACHINE])] == [CUSTOMER]


# --- corrections -------------------------------------------------------------------------------

def _correct_button(screen: RecordingScreen):
    buttons = [b for b in _answer(screen).buttons if b.name == "correct"]
    assert len(buttons) == 1, _answer(screen)
    return buttons[0]


async def _noop() -> None:
    return None


async def test_an_agents_correction_is_used_in_the_next_conversation(stub, svc) -> None:
    one, screen = _agent(svc)
    await one.message(CUSTOMER, None)
    button = _correct_button(screen)
    await one.button("correct", button.payload, button.label, _noop)
    assert "Type the corrected English translation" in screen.last().markdown
    await one.message("Hello, my parcel still has not arrived.", None)
    assert screen.last().markdown.startswith("Saved")
    assert one.conv.transcript[-1].translation == "Hello, my package has not arrived yet."
    calls = _calls(stub)

    two, later = _agent(svc, "user:bob")
    await two.message(CUSTOMER, None)
    assert _calls(stub) == calls
    assert "Hello, my parcel still has not arrived." in _answer(later).markdown
    assert "corrected by an agent" in _answer(later).markdown
    entry = next(svc.translator.memory.store().entries([CORRECTED]))  # type: ignore[union-attr]
    assert (entry.author, entry.source, entry.target) == ("alice", "es", "en")


async def test_a_correction_that_changes_a_number_is_kept_only_once_confirmed(stub, svc) -> None:
    agent, screen = _agent(svc)
    await agent.message(CUSTOMER, None)  # Spanish customer
    await agent.message("Your parcel ships in 3 days.", None)
    button = _correct_button(screen)
    await agent.button("correct", button.payload, button.label, _noop)
    await agent.message("Su paquete se envía en 5 días.", None)
    said = screen.last().markdown
    assert "Check the correction" in said and "3 days" in said and "Send it again" in said
    store = svc.translator.memory.store()  # type: ignore[union-attr]
    assert store.stats().by_origin[CORRECTED] == 0
    await agent.message("Su paquete se envía en 5 días.", None)  # the same again: confirmed
    assert screen.last().markdown.startswith("Saved")
    assert store.stats().by_origin[CORRECTED] == 1
    other, shown = _agent(svc)
    await other.message(CUSTOMER, None)
    await other.message("Your parcel ships in 3 days.", None)
    assert "Su paquete se envía en 5 días." in _answer(shown).markdown
    assert "3 days" in _answer(shown).markdown  # its finding is shown under it, every time


async def test_a_correction_keys_an_order_number_as_a_placeholder(stub, svc) -> None:
    agent, screen = _agent(svc)
    await agent.message("El pedido JD123456789 salió ayer del almacén.", None)
    button = _correct_button(screen)
    await agent.button("correct", button.payload, button.label, _noop)
    await agent.message("Order JD123456789 was shipped from the warehouse yesterday.", None)
    assert screen.last().markdown.startswith("Saved")
    calls = _calls(stub)
    other, shown = _agent(svc)
    await other.message("El pedido JD987654321 salió ayer del almacén.", None)  # another order
    assert _calls(stub) == calls
    assert "Order JD987654321 was shipped from the warehouse yesterday." in (
        _answer(shown).markdown)


async def test_a_correction_needs_its_lines_and_a_command_cancels_it(stub, svc) -> None:
    agent, screen = _agent(svc)
    await agent.message(CUSTOMER, None)
    button = _correct_button(screen)
    await agent.button("correct", button.payload, button.label, _noop)
    await agent.message("Hello,\nmy parcel has not arrived.", None)
    assert "needs 1 line," in screen.last().markdown  # still waiting for the correction
    await agent.message("/cancel", None)
    assert screen.last().markdown.startswith("Correction cancelled")
    await agent.message("Gracias por esperar tanto tiempo.", None)  # a message again
    assert "Thank you for waiting so long." in _answer(screen).markdown
    store = svc.translator.memory.store()  # type: ignore[union-attr]
    assert store.stats().by_origin[CORRECTED] == 0


async def test_only_a_signed_in_agent_is_offered_a_correction(stub, svc, tmp_path) -> None:
    anonymous, screen = _agent(svc, user_key="addr:10.0.0.1")
    await anonymous.message(CUSTOMER, None)
    assert not [b for b in _answer(screen).buttons if b.name == "correct"]
    no_memory = services(stub, tmp_path / "other")  # HYMT_MEMORY off (no memory at all)
    agent, shown = _agent(no_memory)
    await agent.message(CUSTOMER, None)
    assert not [b for b in _answer(shown).buttons if b.name == "correct"]


async def test_the_guests_message_in_a_room_can_be_corrected(stub, svc) -> None:
    agent, screen, room = await _room_with_guest(svc)
    button = _correct_button(screen)
    await agent.button("correct", button.payload, button.label, _noop)
    await agent.message("Hi, my parcel has not come yet.", None)
    assert screen.last().markdown.startswith("Saved")
    await room.guest_says("g" * 32, CUSTOMER, "addr:guest")
    await asyncio.sleep(0.05)
    assert room.history[-1].translation == "Hi, my parcel has not come yet."
