"""A formatted .docx through the real translator on the real vLLM server with the demo model:
the one end-to-end test of the document formats (the mapping itself is judged, fast, in
tests/test_document_formats.py). It prints how many formatted sentences came back with their
tags in one call (the rest were translated around their tags, as the fallback does)."""

from __future__ import annotations

import io

import docx
import pytest

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.priority import BULK
from hymt_chat.engine.translator import Translator
from hymt_chat.lang.detect import detect_language
from hymt_chat.modes.documents import load_document, translate_document

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


async def test_a_docx_comes_back_translated_with_its_bold_words_bold(demo_server):
    settings = demo_server.settings()
    translator = Translator(settings, ModelClient(settings), Policy(deadline=settings.deadline))
    calls: list[tuple[str, str]] = []

    async def translate(text, *, on_progress=None):
        result = await translator.translate(text, "en", "fr", klass=BULK)
        calls.append((text, result.text))
        return result.text

    doc = load_document("lettre.docx", _letter())
    out = docx.Document(io.BytesIO(doc.encode(await translate_document(doc, translate))))
    kept = sum(1 for sent, got in calls if "</b>" in sent and "</b>" in got)
    tagged = sum(1 for sent, _ in calls if "</b>" in sent)
    print(f"tags kept in one call: {kept} of {tagged} formatted sentences")
    assert len(out.paragraphs) == len(PARAGRAPHS)
    for paragraph, (before, bold, _) in zip(out.paragraphs, PARAGRAPHS, strict=True):
        assert detect_language(paragraph.text) == "en", paragraph.text
        if bold:
            bolds = [r for r in paragraph.runs if r.bold]
            assert bolds and all(r.text.strip() for r in bolds), paragraph.text
            assert [r for r in paragraph.runs if not r.bold], paragraph.text
        assert before not in paragraph.text
