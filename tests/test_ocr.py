"""Tesseract, the real part (Debian's tesseract-ocr, the language data setup installs): a picture
made with Pillow in a Noto font, and a PDF whose pages are such pictures (a scan), come back
with each paragraph translated where it was. Three pictures and a two-page scan in all: this boundary once, through the chat, the Support
agent and a PDF."""

import asyncio
import io

import pypdfium2 as pdfium
import pytest
from PIL import Image
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen.canvas import Canvas

from hymt_chat.modes.agent.session import AgentSession
from hymt_chat.modes.documents import load_document, translate_document
from hymt_chat.modes.session import Upload
from hymt_chat.modes.translator_session import TranslatorSession
from hymt_chat.modes.wording import escape_markdown
from tests.support import pdf_files
from tests.support.office_files import upper
from tests.support.sessions import RecordingScreen, services
from tests.support.stub_model import StubModel, echo_source

pytestmark = pytest.mark.slow

LINES = pdf_files.SIGN
_sign = pdf_files.sign


def _translate(name: str, data: bytes):
    doc = load_document(name, data)

    async def model(text, *, on_progress=None):
        return upper(text)

    out = asyncio.run(translate_document(doc, model))
    return doc, out, doc.encode(out)


async def test_a_picture_in_the_chat_comes_back_block_by_block_and_laid_over(tmp_path):
    """A sign in French, German, Japanese and Arabic (Noto and WenQuanYi fonts): the
    Translator's answer lists each line found and its translation in reading order, and
    attaches the picture, same size and kind, with the translation drawn over it."""
    path = tmp_path / "sign.png"
    _sign().save(path, "PNG")
    with StubModel(lambda prompt: upper(echo_source(prompt))) as stub:
        screen = RecordingScreen()
        session = TranslatorSession(services(stub, tmp_path), screen, session_id="s1",
                                    user_key="addr:1")
        await session.message("", None, uploads=[Upload(str(path), "sign.png")])
        await session.settled()
    answer = screen.last()
    listing = answer.markdown
    assert [listing.index(line) for line in LINES] == sorted(
        listing.index(line) for line in LINES)
    for line in LINES:
        assert f"{escape_markdown(line)}\n\n→ {escape_markdown(line.upper())}" in listing
    (picture,) = answer.files
    after = Image.open(io.BytesIO(picture.content))
    assert picture.name == "sign.en.png" and after.format == "PNG" and after.size == (900, 620)
    assert after.convert("RGB").tobytes() != _sign().tobytes()


async def test_a_customers_screenshot_reaches_the_agent_translated(tmp_path):
    path = tmp_path / "screenshot.png"
    _sign(["Bitte nicht rauchen"], (900, 200)).save(path, "PNG")
    with StubModel(lambda prompt: upper(echo_source(prompt))) as stub:
        screen = RecordingScreen()
        session = AgentSession(services(stub, tmp_path), screen, session_id="a1",
                               user_key="user:bob")
        await session.start()
        await session.message("", None, uploads=[Upload(str(path), "screenshot.png")])
    assert any("BITTE NICHT RAUCHEN" in text for text in screen.texts)  # then the banner:
    assert "Customer\\: German" in screen.last().markdown  # the customer's language, detected
    assert any("Bitte nicht rauchen" in prompt for prompt in stub.prompts)


def test_a_scanned_pdf_is_read_by_ocr_and_comes_back_translated():
    buf = io.BytesIO()
    canvas = Canvas(buf, pagesize=(450, 180))
    for line in LINES[:2]:  # each page a picture of one line, as a scanner makes it
        canvas.drawImage(ImageReader(_sign([line], (900, 360))), 0, 0, 450, 180)
        canvas.showPage()
    canvas.save()
    doc, _, data = _translate("scan.pdf", buf.getvalue())
    assert "the scan of 2 pages" in " ".join(map(str, doc.kept))
    pdf = pdfium.PdfDocument(data)
    texts = [" ".join(page.get_textpage().get_text_range().split()) for page in pdf]
    pdf.close()
    assert texts == [line.upper() for line in LINES[:2]]
