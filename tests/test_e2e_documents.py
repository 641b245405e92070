"""A formatted .docx through DeepL's own client, the app's /v2/document and the real translator,
on the engine double (tests/support/engine_double.py): the one end-to-end test of the document
formats (the mapping itself is judged, fast, in tests/test_document_formats.py; the document
API's contract in tests/test_deepl_contract.py). The double answers from a phrasebook that
keeps the tags it is sent, as a good model does, or drops them, as a small one may: then the
app translates the sentence around its tags, and the bold words are bold all the same."""

from __future__ import annotations

import io
import re

import deepl
import docx
import pytest

from hymt_chat.modes.documents import load_document
from tests.support.api_server import api_app
from tests.support.engine_double import EngineDouble
from tests.support.phrasebook import phrasebook
from tests.support.ports import free_port

PARAGRAPHS = [
    ("Votre commande est ", "prête", " et partira demain matin."),
    ("Le service client répond ", "en moins d'une heure", " du lundi au vendredi."),
    ("Merci de votre patience et de votre confiance.", "", ""),
]
ENGLISH = [
    ("Your order is ", "ready", " and will leave tomorrow morning."),
    ("Customer service answers ", "in less than an hour", " from Monday to Friday."),
    ("Thank you for your patience and your trust.", "", ""),
]
IN_ENGLISH = phrasebook({french.strip(): {"en": english.strip()}
                         for pair in zip(PARAGRAPHS, ENGLISH, strict=True)
                         for french, english in zip(*pair, strict=True) if french})


def _dropping_tags(prompt: str) -> str:
    """The phrasebook's answer without its tags: what a small model may do to them."""
    return re.sub(r"</?b[^>]*>", "", IN_ENGLISH(prompt))


def _letter() -> bytes:
    d = docx.Document()
    for before, bold, after in PARAGRAPHS:
        p = d.add_paragraph(before)
        if bold:
            p.add_run(bold).bold = True
            p.add_run(after)
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


@pytest.mark.parametrize("answer", [IN_ENGLISH, _dropping_tags], ids=["tags kept", "tags lost"])
def test_a_docx_comes_back_translated_with_its_bold_words_bold(engine: EngineDouble, tmp_path,
                                                               answer):
    """deepl-python's translate_document_from_filepath, as a DeepL user translates a file."""
    engine.answer = answer
    settings = engine.settings(window_max=2, cache_dir=tmp_path)
    source, target = tmp_path / "lettre.docx", tmp_path / "letter.docx"
    source.write_bytes(_letter())
    with api_app(settings, tmp_path / "keys.db", free_port()) as api:
        key = api.store.create("files", per_minute=60)
        status = deepl.Translator(key, server_url=api.url, send_platform_info=False
                                  ).translate_document_from_filepath(source, target,
                                                                     source_lang="FR",
                                                                     target_lang="EN-US")
    billed = len(load_document("lettre.docx", _letter()).text)  # its parts, as read for the limit
    assert status.done and status.billed_characters == billed
    out = docx.Document(io.BytesIO(target.read_bytes()))
    assert len(out.paragraphs) == len(PARAGRAPHS)
    for paragraph, (before, bold, after) in zip(out.paragraphs, ENGLISH, strict=True):
        assert paragraph.text == before + bold + after, paragraph.text
        assert "".join(r.text for r in paragraph.runs if r.bold) == bold, paragraph.text
    # Kept tags: one call a paragraph; lost: the formatted ones are asked again in pieces.
    assert (len(engine.requests) == len(PARAGRAPHS)) == (answer is IN_ENGLISH), engine.prompts
