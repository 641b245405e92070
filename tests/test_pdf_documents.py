"""A text PDF comes back a PDF with the same pages, each block translated in its own box.

The files are made with reportlab (tests/support/pdf_files.py), translated through
:mod:`hymt_chat.modes.documents` with an instant stand-in (it upper-cases the words), and read
back with pypdfium2 (PDFium, Chrome's PDF engine: another reader than the pdfminer.six the app
lays pages out with) and pikepdf for the structure: ISO 32000-1 §12.5.6.5 link annotations
(``/Subtype /Link``, ``/A << /S /URI >>``), §8.9 image XObjects, §7.7.3.3 the MediaBox, §9.9
embedded font programs (a subset's ``/BaseFont`` is ``ABCDEF+Name``, §9.6.4).
"""

import asyncio
import io
import re

import docx
import pikepdf
import pypdfium2 as pdfium
import pytest

from hymt_chat.errors import IncompleteTranslationError, ModelError
from hymt_chat.modes.documents import (
    file_summary,
    load_document,
    translate_document,
    untranslated,
)
from tests.support import pdf_files
from tests.support.office_files import upper


def _translate(data: bytes, fn=upper, name: str = "agreement.pdf"):
    doc = load_document(name, data)
    calls: list[str] = []

    async def model(text, *, on_progress=None):
        calls.append(text)
        return fn(text)

    return doc, asyncio.run(translate_document(doc, model)), calls


def _page_texts(data: bytes) -> list[str]:
    pdf = pdfium.PdfDocument(data)
    try:
        return [" ".join(page.get_textpage().get_text_range().split()) for page in pdf]
    finally:
        pdf.close()


def _images(page: pikepdf.Page) -> list[bytes]:
    return [image.read_raw_bytes() for image in page.get_images().values()]


def _links(page: pikepdf.Page) -> list[tuple[str, list[float]]]:
    return [(str(a.A.URI), [float(v) for v in a.Rect]) for a in page.obj.get("/Annots", [])
            if a.get("/Subtype") == "/Link"]


def _fonts(data: bytes) -> set[str]:
    with pikepdf.open(io.BytesIO(data)) as pdf:
        return {str(obj.BaseFont) for obj in pdf.objects
                if isinstance(obj, pikepdf.Dictionary) and obj.get("/Type") == "/Font"
                and "/BaseFont" in obj}


def test_each_block_is_translated_in_place_and_the_rest_of_the_page_is_kept():
    source = pdf_files.two_pages()
    doc, out, calls = _translate(source)
    data = doc.encode(out)
    # One call per block with letters: heading, paragraphs, each table cell with words.
    assert "Rental agreement" in calls and "Blue chair" in calls
    assert "259.00" not in calls  # no letters: drawn again as it was, never sent
    one, two = _page_texts(data)
    for line in pdf_files.PAGE_ONE[:2]:
        assert line.upper() in one and line not in one
    assert "READ THE FULL TERMS ON OUR WEBSITE BEFORE YOU SIGN." in one
    for row in pdf_files.TABLE:
        for cell in row:
            assert cell.upper() in two
    assert pdf_files.PAGE_TWO[0].upper() in two and "Both parties" not in two
    with pikepdf.open(io.BytesIO(source)) as before, pikepdf.open(io.BytesIO(data)) as after:
        assert len(after.pages) == len(before.pages) == 2
        for a, b in zip(before.pages, after.pages, strict=True):
            assert [float(v) for v in b.mediabox] == [float(v) for v in a.mediabox]
        assert _images(after.pages[0]) == _images(before.pages[0]) != []
        assert _links(after.pages[0]) == _links(before.pages[0])
        assert _links(after.pages[0])[0][0] == pdf_files.LINK
        # The table's grid (vector graphics) is drawn by the same operators as before.
        ops = [str(i.operator) for i in pikepdf.parse_content_stream(after.pages[1])]
        assert ops.count("l") >= 4 or ops.count("re") >= 1
    assert "images, drawings, links and page sizes" in str(file_summary(doc))


@pytest.mark.parametrize("translation, family", [
    ("契約書の本文です。", "WenQuanYiMicroHei"),
    ("يدفع المستأجر الإيجار", "NotoSansArabic"),
    ("किराया हर महीने की पहली तारीख", "NotoSansDevanagari"),
])
def test_the_translation_is_drawn_in_a_font_of_its_script_embedded_as_a_subset(translation,
                                                                               family):
    def translate(text: str) -> str:
        return translation if any(ch.isalpha() for ch in text) else text

    doc, out, _ = _translate(pdf_files.two_pages(), translate)
    data = doc.encode(out)
    fonts = _fonts(data)
    assert any(re.fullmatch(rf"/[A-Z]{{6}}\+{family}.*", f) for f in fonts), fonts
    if family == "WenQuanYiMicroHei":  # neither shaped nor reordered: it reads back as sent
        one, _ = _page_texts(data)
        assert translation in one.replace(" ", "")


def test_a_pdf_already_in_the_target_language_comes_back_with_its_own_words():
    source = pdf_files.two_pages()
    doc = load_document("agreement.pdf", source)
    one, _ = _page_texts(doc.encode(untranslated(doc)))
    assert pdf_files.PAGE_ONE[1] in one


def test_on_request_a_pdf_comes_back_as_an_editable_docx():
    doc, out, _ = _translate(pdf_files.two_pages())
    word = docx.Document(io.BytesIO(doc.encode(out, "de", "docx")))
    paragraphs = [p.text for p in word.paragraphs if p.text]
    assert paragraphs[0] == "RENTAL AGREEMENT"
    assert pdf_files.PAGE_TWO[0].upper() in paragraphs
    assert "259.00" in paragraphs


def test_javascript_and_embedded_files_are_removed_and_forms_flattened_and_it_says_so():
    doc, out, _ = _translate(pdf_files.active())
    summary = str(file_summary(doc))
    assert "removed: JavaScript, embedded files, form fields" in summary, summary
    with pikepdf.open(io.BytesIO(doc.encode(out))) as pdf:
        assert "/OpenAction" not in pdf.Root and "/AcroForm" not in pdf.Root
        names = pdf.Root.get("/Names", {})
        assert "/JavaScript" not in names and "/EmbeddedFiles" not in names
        assert not pdf.attachments


def test_a_block_that_failed_leaves_a_partial_pdf_with_the_rest_translated():
    doc = load_document("agreement.pdf", pdf_files.two_pages())

    async def flaky(text, *, on_progress=None):
        if text == "Blue chair":
            raise ModelError("the model timed out")
        return upper(text)

    with pytest.raises(IncompleteTranslationError) as caught:
        asyncio.run(translate_document(doc, flaky))
    one, two = _page_texts(doc.encode(caught.value.partial.text))
    assert "RENTAL AGREEMENT" in one and "OAK TABLE" in two
    assert "Blue chair" in two  # kept, marked, in its box


def test_a_page_whose_font_does_not_say_its_characters_is_kept_as_it_was():
    source = pdf_files.unmapped_font()
    doc, out, calls = _translate(source)
    assert calls == ["Hello world, this is a page."]  # never "(cid:65)…"
    assert "fonts that do not say their characters" in str(file_summary(doc))
    with pikepdf.open(io.BytesIO(source)) as before, \
            pikepdf.open(io.BytesIO(doc.encode(out))) as after:
        assert after.pages[1].obj.Contents.read_bytes() == before.pages[1].obj.Contents.read_bytes()
    one, _ = _page_texts(doc.encode(out))
    assert one == "HELLO WORLD, THIS IS A PAGE."
