"""A file's answer in the chat says what the checks flagged, part by part, under its summary.

The real Translator, its checks and their one repair, over the engine double
(tests/support/engine_double.py) answering from a phrasebook (tests/support/phrasebook.py) in
which some sentences come back with a number or a date changed, as a small model changes them
without a word ("14 jours" as "8 days"): the checks must catch it, and the file's answer must
say so with the part a reader can count to (the Nth translated part, in reading order). The
sessions are driven without Chainlit, as in tests/test_sessions.py; pictures are read by the
real Tesseract, as in tests/test_ocr.py.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hymt_chat.modes.kiosk_session import KioskSession
from hymt_chat.modes.screen import Reply
from hymt_chat.modes.session import Upload
from hymt_chat.modes.translator_session import TranslatorSession
from hymt_chat.modes.warnings import WARNING_MARK
from tests.support import pdf_files
from tests.support.engine_double import EngineDouble, running_double
from tests.support.office_files import docx_paragraphs
from tests.support.phrasebook import phrasebook, source_text
from tests.support.sessions import RecordingScreen, services

FRENCH = {
    "Conditions de location": "Rental terms",
    "Merci de votre confiance.": "Thank you for your trust.",
    "Le paiement est dû le 5 avril 2024.": "Payment is due on 5 April 2024.",
    "Le délai de rétractation est de 14 jours.": "The withdrawal period is 8 days.",  # wrong
    "Magasin fermé": "Shop closed",
    "Réouverture le 12 mars 2024": "Reopening on 13 March 2024",  # wrong
}
IN_ENGLISH = phrasebook({french: {"en": english} for french, english in FRENCH.items()})
WRONG_DAYS = "The duration 14 jours may be wrong in this translation (it says 8 days)."
WRONG_DATE = "The date 12 mars 2024 may be wrong in this translation (it says 13 March 2024)."
TERMS = ["Conditions de location", "Merci de votre confiance.",
         "Le paiement est dû le 5 avril 2024."]  # all three come back right


@pytest.fixture
def double() -> Iterator[EngineDouble]:
    with running_double(api_key="k", max_queued=64, answer=IN_ENGLISH) as engine:
        yield engine


def _translator(double: EngineDouble, tmp_path: Path,
                **settings: Any) -> tuple[TranslatorSession, RecordingScreen]:
    screen = RecordingScreen()
    session = TranslatorSession(services(double, tmp_path, checks=True, **settings),
                                screen, session_id="s1", user_key="addr:1")
    return session, screen


async def _send(session: TranslatorSession, tmp_path: Path, name: str, data: bytes) -> None:
    """French picked in the source picker, then the file dropped in the chat."""
    await session.settings_changed({"source": "fr", "target": "en"})
    path = tmp_path / name
    path.write_bytes(data)
    await session.message("", None, uploads=[Upload(str(path), name)])
    await session.settled()


def _read(markdown: str) -> str:
    """Markdown as the reader sees it (our escapes taken out)."""
    return re.sub(r"\\(.)", r"\1", markdown)


def _under_summary(reply: Reply) -> tuple[str, list[str]]:
    """The file's one-line summary and the warning lines right under it, as read."""
    paragraphs = reply.markdown.split("\n\n")
    at = next(i for i, p in enumerate(paragraphs)
              if re.match(r"[\d,]+ parts?, [\d,]+ characters", _read(p)))
    under = paragraphs[at + 1].splitlines()
    flags = [_read(line) for line in under if line.startswith(f"- {WARNING_MARK} ")]
    assert flags == [] or len(flags) == len(under), under  # a block of warnings, nothing else
    assert paragraphs[-1].startswith("*"), reply.markdown  # the meta line stays the last
    return _read(paragraphs[at]), flags


def _picture(lines: list[str]) -> bytes:
    buf = io.BytesIO()
    pdf_files.sign(lines, (900, 150 * len(lines) + 20)).save(buf, "PNG")
    return buf.getvalue()


async def _answered(session, screen, tmp_path, name: str, data: bytes
                    ) -> tuple[list[str], str, list[str]]:
    """The file's answer: the files it carries, its summary line, its flag lines."""
    await _send(session, tmp_path, name, data)
    reply = screen.last()
    summary, flags = _under_summary(reply)
    return [f.name for f in reply.files], summary, flags


async def test_a_pdf_whose_translation_changes_a_number_says_which_part(double, tmp_path):
    """The case reported: a two-page French PDF whose "14 jours" came back "8 days"."""
    session, screen = _translator(double, tmp_path)
    data = pdf_files.paragraphs(TERMS[:2], ["Le délai de rétractation est de 14 jours."])
    names, summary, flags = await _answered(session, screen, tmp_path, "conditions.pdf", data)
    assert names == ["conditions.en.pdf"] and summary.startswith("3 parts")
    assert flags == [f"- {WARNING_MARK} Part 3: {WRONG_DAYS}"]
    # The checks asked again once (another seed); the same wrong answer is what is flagged.
    assert sum("14 jours" in p for p in double.prompts) == 2


async def test_a_docx_counts_only_the_parts_it_translated(double, tmp_path):
    """A paragraph of figures only is copied, not translated: not a part the reader counts."""
    session, screen = _translator(double, tmp_path)
    data = docx_paragraphs([TERMS[0], "2024 – 2025", TERMS[1],
                            "Le délai de rétractation est de 14 jours."])
    names, summary, flags = await _answered(session, screen, tmp_path, "contrat.docx", data)
    assert names == ["contrat.en.docx"] and summary.startswith("3 parts")
    assert flags == [f"- {WARNING_MARK} Part 3: {WRONG_DAYS}"]


async def test_a_clean_file_says_nothing_more_than_its_summary(double, tmp_path):
    session, screen = _translator(double, tmp_path)
    await _send(session, tmp_path, "conditions.docx", docx_paragraphs(TERMS))
    reply = screen.last()
    summary, flags = _under_summary(reply)
    assert summary.startswith("3 parts") and flags == []
    assert WARNING_MARK not in reply.markdown
    assert len(reply.markdown.split("\n\n")) == 3  # names, summary, meta
    assert [f.name for f in reply.files] == ["conditions.en.docx"]


def _failing(answer: Callable[[str], str], text: str, failing: list[bool]) -> Callable[[str], str]:
    """*answer*, except that *text* fails (HTTP 500) while *failing* holds True."""
    def model(prompt: str) -> str:
        if failing[0] and text in prompt:
            raise RuntimeError("the model fell over")
        return answer(prompt)
    return model


async def test_the_rest_of_a_partial_file_keeps_the_flags_of_its_first_parts(double, tmp_path):
    failing = [True]
    double.answer = _failing(IN_ENGLISH, TERMS[1], failing)
    session, screen = _translator(double, tmp_path)
    data = docx_paragraphs(["Le délai de rétractation est de 14 jours.", TERMS[1], TERMS[0]])
    await _send(session, tmp_path, "contrat.docx", data)
    partial = screen.last()
    assert [f.name for f in partial.files] == ["contrat.en.partial.docx"]
    # The parts done are said with their flags at once, beside the partial file.
    assert f"- {WARNING_MARK} Part 1: {WRONG_DAYS}" in _read(partial.markdown).splitlines()
    asked = sum("14 jours" in p for p in double.prompts)
    failing[0] = False
    (rest,) = [b for b in partial.buttons if b.name == "retry_rest"]

    async def remove() -> None:
        pass

    await session.button(rest.name, rest.payload, rest.label, remove)
    await session.settled()
    reply = screen.last()
    assert [f.name for f in reply.files] == ["contrat.en.docx"]
    summary, flags = _under_summary(reply)
    assert summary.startswith("3 parts")
    assert flags == [f"- {WARNING_MARK} Part 1: {WRONG_DAYS}"]
    assert sum("14 jours" in p for p in double.prompts) == asked  # kept, not asked again


def _day_late(prompt: str) -> str:
    """Each "Rendez-vous dans N jours." comes back a day late."""
    return re.sub(r"Rendez-vous dans (\d+) jours\.",
                  lambda m: f"See you in {int(m[1]) + 1} days.", source_text(prompt))


async def test_a_file_with_many_flags_lists_the_first_ten_and_counts_the_rest(double, tmp_path):
    double.answer = _day_late
    cues = "\n".join(f"{n}\n00:00:{n:02},000 --> 00:00:{n:02},900\nRendez-vous dans {n + 1} "
                     "jours.\n" for n in range(1, 13))
    session, screen = _translator(double, tmp_path)
    await _send(session, tmp_path, "episode.srt", cues.encode())
    reply = screen.last()
    assert "See you in 14 days." in reply.files[0].content.decode()
    summary, flags = _under_summary(reply)
    assert summary.startswith("12 parts")
    assert flags == [*(f"- {WARNING_MARK} Part {n}: The duration {n + 1} jours may be wrong in "
                       f"this translation (it says {n + 2} days)." for n in range(1, 11)),
                     f"- {WARNING_MARK} …and 2 more."]


async def test_a_json_value_whose_block_answer_changed_a_number_is_flagged(double, tmp_path):
    """Hy-MT2 translates a JSON file's values in one block: each value's answer is checked as
    a value sent alone would be, and the wrong one flagged, with no call of its own."""
    heading = "### Source Data\n"  # Hy-MT2's structured-data instruction: the block follows

    def model(prompt: str) -> str:
        if heading in prompt:
            instruction, block = prompt.split(heading, 1)
            return IN_ENGLISH(f"{instruction.split(chr(10) * 2)[0]}\n\n{block}")
        return IN_ENGLISH(prompt)

    double.answer = model
    session, screen = _translator(double, tmp_path, model_family="hy-mt2")
    values = {"title": TERMS[0], "notice": "Le délai de rétractation est de 14 jours.",
              "thanks": TERMS[1]}
    await _send(session, tmp_path, "ui.json", json.dumps(values).encode())
    reply = screen.last()
    assert json.loads(reply.files[0].content) == {
        "title": "Rental terms", "notice": "The withdrawal period is 8 days.",
        "thanks": "Thank you for your trust."}
    summary, flags = _under_summary(reply)
    assert summary.startswith("3 parts")
    assert flags == [f"- {WARNING_MARK} Part 2: {WRONG_DAYS}"]
    assert len(double.prompts) == 1 and heading in double.prompts[0]


SIGN = ["Magasin fermé", "2024", "Réouverture le 12 mars 2024"]
"""A shop's sign: a line of figures only between the two others (not a part of its own)."""


@pytest.mark.slow
async def test_a_photographed_sign_whose_date_changed_says_which_line(double, tmp_path):
    session, screen = _translator(double, tmp_path)
    await _send(session, tmp_path, "panneau.png", _picture(SIGN))
    reply = screen.last()
    assert [f.name for f in reply.files] == ["panneau.en.png"]
    summary, flags = _under_summary(reply)
    assert summary.startswith("2 parts")
    assert flags == [f"- {WARNING_MARK} Part 2: {WRONG_DATE}"]
    # The lines listed above are numbered as the parts are: the flagged one is "2."
    listing = _read(reply.markdown)
    assert "**2.** Réouverture le 12 mars 2024\n\n→ Reopening on 13 March 2024" in listing
    assert "**3.**" not in listing


@pytest.mark.slow
async def test_the_kiosk_shows_a_photographed_signs_flag_under_its_translation(double,
                                                                               tmp_path):
    """The kiosk translates a picture's text as a message: its warnings come with it."""
    screen = RecordingScreen()
    session = KioskSession(services(double, tmp_path, checks=True),
                           screen, session_id="k1", user_key="addr:1")
    try:
        await session.start()
        await session.tap({"target": "en"}, "English")
        path = tmp_path / "panneau.png"
        path.write_bytes(_picture(SIGN))
        await session.message("", None, uploads=[Upload(str(path), "panneau.png")])
        await session.settled()
        answer = _read(screen.last().markdown)
    finally:
        session.end()
    assert "Reopening on 13 March 2024" in answer
    assert f"{WARNING_MARK} {WRONG_DATE}" in answer
