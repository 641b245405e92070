"""Sentences that were English on every page, now in the page's language: a file
answer's summary line and what its file kept or lost, a room message the model could not
translate as the agent reads it, the counter's check notes, the kiosk's language controls,
its "Read aloud" and its idle warning."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import docx
import pytest

from hymt_chat.errors import ModelUnavailableError
from hymt_chat.modes import documents, kiosk, wording
from hymt_chat.modes.counter import Counter
from hymt_chat.modes.kiosk_session import KioskSession
from hymt_chat.modes.page_text import PageText
from hymt_chat.modes.room import RoomMessage
from hymt_chat.modes.session import Upload
from hymt_chat.modes.translator_session import TranslatorSession
from hymt_chat.settings import Settings
from hymt_chat.text.checks import Finding
from hymt_chat.words.said import said
from tests.support.office_files import upper
from tests.support.sessions import RecordingScreen, services
from tests.support.stub_model import StubModel, echo_source

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def stub() -> Iterator[StubModel]:
    with StubModel(lambda prompt: upper(echo_source(prompt))) as model:
        yield model


def _docx(*paragraphs: str) -> bytes:
    d = docx.Document()
    for text in paragraphs:
        d.add_paragraph(text)
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


# --- a file's summary line ------------------------------------------------------------------


def test_the_summary_is_a_sentence_each_page_words_its_way():
    doc = documents.load_document("lettre.docx", _docx(
        "Cher client, votre commande est prête.", "Merci de votre confiance.", "2024 – 2025"))
    summary = documents.file_summary(doc)
    english = PageText().say(summary)
    assert english == ("2 parts, 64 characters; kept as they were: 1 paragraph of numbers or "
                       "codes")
    assert str(summary) == english  # its English, for logs
    french = PageText.of("fr").say(summary)
    assert french.startswith("2 parties, 64 caractères")
    assert french.endswith("1 paragraphe de nombres ou de codes")
    japanese = PageText.of("ja").say(summary)
    assert japanese.startswith("2 パート、64 文字") and "数字やコードだけの段落 1 個" in japanese


def test_a_thousand_characters_are_written_as_the_page_writes_numbers():
    doc = documents.load_document("long.txt", ("word " * 300).encode())
    assert PageText().say(documents.file_summary(doc)) == "1 part, 1,500 characters"
    assert PageText.of("de").say(documents.file_summary(doc)) == "1 Teil, 1.500 Zeichen"


def test_what_a_pdf_removed_is_named_in_the_pages_language():
    removed = said("file_summary_removed", summary=said("file_summary", count=3, chars=900),
                   removed=(said("removed_javascript"), said("removed_embedded_files")))
    assert str(removed) == "3 parts, 900 characters; removed: JavaScript, embedded files"
    spanish = PageText.of("es").say(removed)
    assert "JavaScript" in spanish and "embedded" not in spanish and "removed" not in spanish


async def test_a_docx_answer_in_a_spanish_tab_sums_up_in_spanish(stub, tmp_path):
    path = tmp_path / "carta.docx"
    path.write_bytes(_docx("Estimado cliente, su pedido está listo.", "Gracias por su paciencia."))
    screen = RecordingScreen()
    session = TranslatorSession(services(stub, tmp_path), screen, session_id="s1",
                                user_key="addr:1", page=PageText.of("es"))
    await session.message("", None, uploads=[Upload(str(path), "carta.docx")])
    await session.settled()
    answer = screen.last().markdown.replace("\\", "")
    assert "2 partes, " in answer and "caracteres" in answer
    assert "parts" not in answer and "characters" not in answer and "kept as" not in answer


# --- a room message the model could not translate, as the agent reads it ----------------------


def test_an_untranslated_room_message_is_said_in_the_agents_language():
    note = said("room_not_translated", reason=said("reason_unavailable"))
    message = RoomMessage(1, "guest", "Buongiorno.", "it", None, "fr", 0.0, note)
    shown = wording.room_message_markdown(message, page=PageText.of("fr"))
    assert "Non traduit (le serveur du modèle était injoignable)" in shown.replace("\\", "")
    assert "Not translated" not in shown
    # JSON (the guests' event, a replica's copy, the stored record) holds its English
    assert message.event()["message"]["note"] == (
        "Not translated (the model server was not reachable): this is the original.")
    assert message.fields()["note"] == message.event()["message"]["note"]


# --- the counter's check notes ----------------------------------------------------------------


async def test_the_counters_check_notes_are_in_the_readers_language(monkeypatch, tmp_path):
    finding = Finding.of("number", "numbers_missing", "1", numbers="14")

    class _Result:
        text = "Le délai est de 8 jours."
        warnings = (finding,)

    class _Translator:
        settings = Settings(cache_dir=tmp_path)

        async def translate(self, *_args: object, **_kwargs: object) -> _Result:
            return _Result()

    counter = Counter(_Translator(), user="screen", a="en", b="ja")  # type: ignore[arg-type]
    event = await counter.say("a", "The period is 14 days.")
    assert event["note"] == PageText.of("ja").say(finding.said)  # side b reads it
    assert finding.message not in event["note"]

    class _Down(_Translator):
        async def translate(self, *_args: object, **_kwargs: object) -> _Result:
            raise ModelUnavailableError("down")

    untranslated = await Counter(_Down(), user="s", a="en", b="ja").say(  # type: ignore[arg-type]
        "a", "Hello")
    assert untranslated["translation"] is None  # the page says its own words for it


# --- the kiosk ------------------------------------------------------------------------------


def test_the_kiosks_language_controls_speak_the_page_and_chinese():
    assert kiosk.kiosk_buttons()[-1].label == "More languages · 更多语言"  # as it was
    assert kiosk.kiosk_buttons(page=PageText.of("fr"))[-1].label == "Plus de langues · 更多语言"
    assert kiosk.kiosk_buttons(page=PageText.of("zh"))[-1].label == "更多语言"
    assert kiosk.with_chinese(PageText.of("de"), "kiosk_another") == "Andere Sprache · 其他语言"


async def test_the_kiosks_read_aloud_and_idle_warning_come_in_the_pages_words(stub, tmp_path):
    screen = RecordingScreen()
    session = KioskSession(services(stub, tmp_path), screen, session_id="k1", user_key="a:1",
                           page=PageText.of("es"))
    props = session.marker("¿Dónde está la estación?", "es")
    assert props["label"] == "Leer en voz alta"
    assert props["still"] == PageText.of("es")["kiosk_still_there"]
    assert "{{seconds}}" in str(props["still"]) and "Still there" not in str(props["still"])
    element = (ROOT / "public" / "elements" / "HymtKiosk.jsx").read_text("utf-8")
    script = (ROOT / "public" / "kiosk.js").read_text("utf-8")
    assert "data-still={props.still" in element and 'getAttribute("data-still")' in script
    assert 'still.replace("{{seconds}}"' in script
