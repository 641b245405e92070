"""The modes' core sessions, driven directly: no Chainlit, no browser.

Each session shows its output on a recording screen. The model is a stand-in OpenAI-compatible
server (``tests/support/stub_model.py``) that answers at once — the thing under test is the
session's state and decisions, not a translation; the real model's side is in the e2e tests.
The model's readiness is the real :class:`Readiness` over a scripted probe, so that "starting"
and "down" can be produced on demand.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from hymt_chat.modes import wording
from hymt_chat.modes.agent.session import AgentSession
from hymt_chat.modes.kiosk_session import PICK, KioskSession
from hymt_chat.modes.screen import Choice, Reply, Toggle
from hymt_chat.modes.session import Services, Upload
from hymt_chat.modes.translator_session import TranslatorSession
from hymt_chat.words.source import CHAT as ENGLISH
from tests.support.sessions import RecordingScreen, ScriptedProbe, Shown, services
from tests.support.stub_model import StubModel, echo_source


@pytest.fixture
def stub():
    with StubModel() as model:
        yield model


def _translator(services: Services) -> tuple[TranslatorSession, RecordingScreen]:
    screen = RecordingScreen()
    return TranslatorSession(services, screen, session_id="s1", user_key="addr:1"), screen


async def _settled(session: Any) -> None:
    """Let the session's queued and background jobs (buttons, warm-up, files) finish."""
    await session.settled()


async def test_a_message_is_translated_and_its_source_remembered(stub, tmp_path):
    session, screen = _translator(services(stub, tmp_path))
    await session.start()
    # no Chimera here; the page's own language last
    assert [f.id for f in screen.panels[-1]] == ["source", "target", "page_language"]
    assert [c[0] for c in screen.command_menus[-1]] == ["to", "swap", "detect", "reset"]
    await session.message("Bonjour tout le monde, comment allez-vous aujourd'hui ?", None)
    answer = screen.last().markdown
    assert "Bonjour tout le monde" in answer  # the stand-in echoes the source
    assert "French → English" in answer
    assert session.state.last_detected == "fr"
    assert "into English" in stub.prompts[-1]


async def test_commands_change_the_pickers_and_cost_nothing(stub, tmp_path):
    session, screen = _translator(services(stub, tmp_path, rate="1/minute"))
    await session.message("/swap", None)
    assert "Nothing to swap with yet" in screen.texts[-1]  # auto-detect, no other side yet
    await session.message("/to Japanese", None)
    target = next(f for f in screen.panels[-1] if isinstance(f, Choice) and f.id == "target")
    assert target.value == "ja"
    assert "Now translating Auto-detect → Japanese" in screen.texts[-1].replace("\\", "")
    await session.message("", "swap")  # the composer's menu: back to the previous target
    assert session.state.target == "en"
    assert stub.prompts == []  # commands are free: the one allowed job is still there
    await session.message("Ciao a tutti, come state oggi?", None)
    assert "Ciao a tutti" in screen.last().markdown


async def test_text_already_in_the_target_offers_quick_targets_that_translate_it(stub, tmp_path):
    session, screen = _translator(services(stub, tmp_path))
    await session.message("This sentence is plainly written in the English language.", None)
    offer = screen.last()
    assert "already in English" in offer.markdown and stub.prompts == []
    french = next(b for b in offer.buttons if b.label == "French")
    assert french.name == "translate_into" and "en" not in [b.payload["target"]
                                                            for b in offer.buttons]
    await session.button(french.name, french.payload, french.label, _never)
    await _settled(session)
    assert session.state.target == "fr"
    assert "English → French" in screen.last().markdown.replace("\\", "")


async def _never() -> None:
    raise AssertionError("this button stays")


async def test_a_failed_translation_keeps_the_text_behind_a_retry_button(stub, tmp_path):
    stub.answer = lambda prompt: (_ for _ in ()).throw(RuntimeError("model exploded"))
    session, screen = _translator(services(stub, tmp_path))
    await session.message("Guten Morgen, wie geht es Ihnen heute?", None)
    failure = screen.last()
    assert wording.KEPT_HINT.replace(".", "\\.") in failure.markdown.replace("—", "—")
    retry = failure.buttons[0]
    assert retry.name == "retry" and set(retry.payload) == {"key"}  # the text stays on the server
    assert not any(line.names for line in screen.lines)  # one part, no news: no progress line
    stub.answer = lambda prompt: "Good morning, how are you today?"
    removed: list[bool] = []

    async def remove() -> None:
        removed.append(True)

    await session.button("retry", retry.payload, "Retry", remove)
    await _settled(session)
    assert removed == [True]
    assert "Good morning, how are you today?" in screen.last().markdown


async def test_a_button_whose_text_expired_says_so(stub, tmp_path):
    session, screen = _translator(services(stub, tmp_path))

    async def remove() -> None:
        pass

    await session.button("retry", {"key": "not-kept"}, "Retry", remove)
    assert screen.last().markdown == wording.escape_markdown(wording.EXPIRED_JOB)
    await session.button("retry", "not even a dict", "Retry", remove)
    assert len(screen.shown) == 2 and stub.prompts == []


async def test_the_rate_limit_counts_messages_and_buttons(stub, tmp_path):
    session, screen = _translator(services(stub, tmp_path, rate="1/minute"))
    await session.message("Buenos días a todos los presentes", None)
    await session.message("Buenas noches a todos los presentes", None)
    assert len(stub.prompts) == 1
    assert "more than allowed" in screen.last().markdown


async def test_while_the_model_warms_up_messages_wait_in_order(stub, tmp_path):
    probe = ScriptedProbe("starting")
    session, screen = _translator(services(stub, tmp_path, probe=probe, startup_timeout=60))
    await session.message("Erste Nachricht auf Deutsch, bitte übersetzen", None)
    await session.message("Zweite Nachricht auf Deutsch, bitte übersetzen", None)
    assert "warming up" in screen.texts[0] and "2 messages are waiting" in screen.texts[1]
    assert stub.prompts == [] and len(session.waiting) == 2
    session.services.readiness.start()
    probe.state = "ready"
    await _settled(session)
    await session.services.readiness.stop()
    answers = [t for t in screen.texts if "German → English" in t.replace("\\", "")]
    assert ["Erste" in answers[0], "Zweite" in answers[1]] == [True, True]


async def test_a_model_that_is_down_keeps_the_text(stub, tmp_path):
    session, screen = _translator(services(stub, tmp_path, probe=ScriptedProbe("down")))
    await session.message("Bonsoir à tous et à toutes", None)
    assert "not reachable" in screen.last().markdown
    assert screen.last().buttons[0].name == "retry" and stub.prompts == []


async def test_files_are_read_at_arrival_and_answered_with_a_download(stub, tmp_path):
    session, screen = _translator(services(stub, tmp_path))
    path = tmp_path / "notes.txt"
    path.write_text("Bonjour à tous.\nMerci beaucoup pour votre aide.\n", encoding="utf-8")
    await session.message("", None, uploads=[Upload(str(path), "notes.txt")])
    assert session.jobs  # a file runs in the background: the message returned at once
    await _settled(session)
    answer = screen.last()
    assert answer.files and answer.files[0].name == "notes.en.txt"
    assert b"Merci beaucoup" in answer.files[0].content
    too_many = [Upload(str(path), f"n{i}.txt") for i in range(3)]
    await session.message("", None, uploads=too_many)
    assert "At most 2 files" in screen.last().markdown.replace("\\", "")


async def test_a_binary_file_is_refused_and_nothing_is_sent(stub, tmp_path):
    session, screen = _translator(services(stub, tmp_path))
    path = tmp_path / "photo.txt"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    await session.message("", None, uploads=[Upload(str(path), "photo.txt")])
    assert stub.prompts == [] and not screen.last().files


async def test_settings_switch_best_quality_and_languages(stub, tmp_path):
    session, screen = _translator(services(stub, tmp_path))
    await session.settings_changed({"source": "de", "target": "fr", "best": True})
    assert (session.state.source, session.state.target, session.best) == ("de", "fr", True)
    await session.settings_changed({"source": "Klingon", "target": "fr"})
    assert "Klingon" in screen.last().markdown and session.state.source == "de"


async def test_best_quality_names_the_demo_model_when_it_plays_chimera(stub, tmp_path,
                                                                     monkeypatch):
    """On the demo model with no fusion model configured, the demo model fuses: the switch says
    so (the answer's note: tests/test_chimera.py); with a fusion model, it names Chimera."""
    monkeypatch.setenv("HYMT_DEMO_MODEL", "1")  # as `hymt-chat up` tells the app
    session, screen = _translator(services(stub, tmp_path))
    await session.start()
    [best] = [f for f in screen.panels[-1] if isinstance(f, Toggle)]
    assert best.label == wording.best_label(True) and "standing in" in best.label
    monkeypatch.setenv("HYMT_DEMO_MODEL", "0")
    session, screen = _translator(services(stub, tmp_path, fusion_model="chimera"))
    await session.start()
    assert [f.label for f in screen.panels[-1] if isinstance(f, Toggle)] == [
        ENGLISH["best"]]  # the page's own word when a real Chimera fuses


async def test_the_agent_session_routes_and_saves_the_conversation(stub, tmp_path):
    saved: list[dict] = []

    async def save(state: dict) -> None:
        saved.append(state)

    screen = RecordingScreen()
    session = AgentSession(services(stub, tmp_path), screen, session_id="a1",
                           user_key="user:bob", save=save)
    await session.start()
    assert "Agent\\: English" in screen.texts[0]
    assert [f.id for f in screen.panels[-1]] == ["agent_language", "back_translate",
                                                 "use_context", "tone", "page_language"]
    assert all(isinstance(f, Toggle) for f in screen.panels[-1][1:3])
    await session.message("/customer Spanish", None)
    assert saved and saved[-1]["customer_language"] == "es"
    await session.settings_changed({"agent_language": "en", "back_translate": False})
    await session.message("Hola, mi pedido no ha llegado todavía", None)
    assert "Hola, mi pedido" in screen.last().markdown  # the customer's words, "translated"
    assert len(saved[-1]["transcript"]) == 1
    await session.message("/transcript", None)
    assert {f.name.rsplit(".", 1)[-1] for f in screen.last().files} == {"csv", "md"}


async def test_the_kiosk_asks_for_a_language_then_translates_and_resets(stub, tmp_path):
    screen = RecordingScreen()
    session = KioskSession(services(stub, tmp_path), screen, session_id="k1",
                           user_key="addr:9")
    await session.start()
    assert screen.last().marker is not None and screen.last().buttons
    typed = Shown(Reply("Où est la gare, s'il vous plaît ?"))
    await session.message(typed.reply.markdown, None, shown=typed)
    assert "Tap the language" in screen.last().markdown and stub.prompts == []
    english = next(b for b in screen.last().buttons if b.payload.get("target") == "en")
    await session.button(english.name, english.payload, english.label, _never)
    await _settled(session)
    answer = screen.last()
    assert "Où est la gare" in answer.markdown
    assert answer.marker is not None and answer.marker["lang"].startswith("en")
    assert answer.buttons[0].payload == {"target": PICK}
    on_screen = [typed, *screen.shown]
    await session.reset()
    assert all(s.removed for s in on_screen if s is not screen.shown[-1])
    assert session.text is None and session.target is None and screen.forgotten == 1
    assert "Welcome" in screen.last().markdown
    session.end()
    await asyncio.sleep(0)
    assert session.watcher is not None and session.watcher.cancelled()


async def test_the_kiosk_does_not_wipe_an_answer_still_on_its_way(stub, tmp_path):
    """The idle time passing while the visitor waits for a translation (a slow or busy model)
    postpones the reset; the answer shown restarts the clock, and only then the idle time
    wipes the screen. The server's reset must not cancel the translation and wipe it all."""
    gate = threading.Event()
    stub.answer = lambda prompt: echo_source(prompt) if gate.wait(60) else "late"
    screen = RecordingScreen()
    session = KioskSession(services(stub, tmp_path), screen, session_id="k2",
                           user_key="addr:10")
    await session.start()
    english = next(b for b in screen.last().buttons if b.payload.get("target") == "en")
    await session.button(english.name, english.payload, english.label, _never)
    await _settled(session)
    typed = Shown(Reply("Où est la gare, s'il vous plaît ?"))
    sending = asyncio.create_task(session.message(typed.reply.markdown, None, shown=typed))
    while not stub.prompts:  # the call is at the model
        await asyncio.sleep(0.01)
    before = session.timer.last_activity
    await session.expire()  # the idle time is over while it waits
    assert not typed.removed and session.timer.dirty and session.timer.last_activity > before
    assert sum("Welcome" in t for t in screen.texts) == 1
    postponed = session.timer.last_activity
    gate.set()
    await sending
    assert "Où est la gare" in screen.last().markdown  # the answer came and was shown
    shown_at = session.timer.last_activity
    assert shown_at > postponed and session.timer.dirty  # its arrival restarted the clock
    await session.expire()  # a later idle time: nothing runs, the screen is wiped
    assert typed.removed and "Welcome" in screen.last().markdown
    session.end()


async def test_a_message_is_cleaned_detected_and_segmented_once(stub, tmp_path, monkeypatch):
    from hymt_chat.engine import translator as module

    calls: list[str] = []
    real = module.detect_language

    def counted(text: str) -> str | None:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(module, "detect_language", counted)
    session, screen = _translator(services(stub, tmp_path))
    await session.message("Das ist ein ganz normaler deutscher Satz über das Wetter.", None)
    assert "German → English" in screen.last().markdown.replace("\\", "")
    assert len(calls) == 1


async def test_a_changed_amount_is_flagged_under_the_answer(stub, tmp_path):
    """The stand-in "translates" by echoing, but turns 259 into 295: a fluent wrong answer,
    the same on the one repair, so the answer is shown with the warning, never hidden."""
    stub.answer = lambda prompt: prompt.split("\n\n", 1)[-1].replace("259", "295")
    session, screen = _translator(services(stub, tmp_path, checks=True, mask_values=False))
    await session.message("Le remboursement de 259 euros arrivera vendredi.", None)
    answer = screen.last().markdown
    assert "295" in answer and "⚠" in answer and "259" in answer.split("⚠", 1)[1]
    assert len(stub.prompts) == 2  # the answer, and its one repair


@pytest.mark.parametrize("mode", [AgentSession, KioskSession])
async def test_the_agent_and_the_kiosk_take_pictures_not_documents(stub, tmp_path, mode):
    """A picture's text is their message (tests/test_ocr.py, with Tesseract); a document sent
    there is refused with a sentence, nothing sent to the model."""
    path = tmp_path / "notes.txt"
    path.write_text("Hola, mi pedido no ha llegado todavía", encoding="utf-8")
    screen = RecordingScreen()
    session = mode(services(stub, tmp_path), screen, session_id="m1", user_key="addr:7")
    await session.message("", None, uploads=[Upload(str(path), "notes.txt")])
    assert "translate documents in the Translator" in screen.texts[-1]
    assert stub.prompts == []
