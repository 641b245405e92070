"""A formatted .docx through DeepL's own client, the app's /v2/document and the real translator
on the real vLLM server with the demo model: the one end-to-end test of the document formats
(the mapping itself is judged, fast, in tests/test_document_formats.py; the document API's
contract in tests/test_deepl_contract.py). It prints how many formatted sentences came back with
their tags in one call (the rest were translated around their tags, as the fallback does)."""

from __future__ import annotations

import io

import deepl
import docx
import pytest

from hymt_chat.lang.detect import detect_language
from hymt_chat.modes.documents import load_document
from tests.conftest import free_port
from tests.support.api_server import api_app

pytestmark = pytest.mark.slow

PARAGRAPHS = [
    ("Votre commande est ", "prête", " et partira demain matin."),
    ("Le service client répond ", "en moins d'une heure", " du lundi au vendredi."),
    ("Merci de votre patience et de votre confiance.", "", ""),
]


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


def test_a_docx_comes_back_translated_with_its_bold_words_bold(demo_server, tmp_path):
    """deepl-python's translate_document_from_filepath, as a DeepL user translates a file."""
    settings = demo_server.settings(temperature=0.0, window_max=2, cache_dir=tmp_path)
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
    for paragraph, (before, bold, _) in zip(out.paragraphs, PARAGRAPHS, strict=True):
        assert detect_language(paragraph.text) == "en", paragraph.text
        if bold:
            bolds = [r for r in paragraph.runs if r.bold]
            assert bolds and all(r.text.strip() for r in bolds), paragraph.text
            assert [r for r in paragraph.runs if not r.bold], paragraph.text
        assert before not in paragraph.text
