"""Tesseract, the real part (Debian's tesseract-ocr, the language data setup installs): a picture
made with Pillow in a Noto font, and a PDF whose pages are such pictures (a scan), come back
with each paragraph translated where it was. Two OCR runs in all: this boundary once."""

import asyncio
import io

import pypdfium2 as pdfium
import pytest
from PIL import Image, ImageDraw, ImageFont
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen.canvas import Canvas

from hymt_chat.modes.documents import found_text, load_document, translate_document
from hymt_chat.text.formats.pdf_fonts import FontBook
from tests.support.office_files import upper

pytestmark = pytest.mark.slow

LINES = ["Sortie de secours", "Bitte nicht rauchen"]


def _sign(lines=LINES, size=(900, 360)) -> Image.Image:
    picture = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(picture)
    for i, line in enumerate(lines):
        font = ImageFont.truetype(str(FontBook().path_for(line)), 44)
        draw.text((40, 60 + i * 150), line, font=font, fill="black")
    return picture


def _translate(name: str, data: bytes):
    doc = load_document(name, data)

    async def model(text, *, on_progress=None):
        return upper(text)

    out = asyncio.run(translate_document(doc, model))
    return doc, out, doc.encode(out)


def test_a_picture_comes_back_with_each_line_found_translated_and_laid_over():
    buf = io.BytesIO()
    _sign().save(buf, "PNG")
    doc, out, data = _translate("sign.png", buf.getvalue())
    assert found_text(doc, out) == [(line, line.upper()) for line in LINES]
    after = Image.open(io.BytesIO(data))
    assert after.format == "PNG" and after.size == (900, 360)
    assert after.convert("RGB").tobytes() != _sign().tobytes()


def test_a_scanned_pdf_is_read_by_ocr_and_comes_back_translated():
    buf = io.BytesIO()
    canvas = Canvas(buf, pagesize=(450, 180))
    for line in LINES:  # each page a picture of one line, as a scanner makes it
        canvas.drawImage(ImageReader(_sign([line], (900, 360))), 0, 0, 450, 180)
        canvas.showPage()
    canvas.save()
    doc, _, data = _translate("scan.pdf", buf.getvalue())
    assert "the scan of 2 pages" in " ".join(doc.kept)
    pdf = pdfium.PdfDocument(data)
    texts = [" ".join(page.get_textpage().get_text_range().split()) for page in pdf]
    pdf.close()
    assert texts == [line.upper() for line in LINES]
