"""The new document kinds through the real translator: a chat upload and LibreTranslate's
``/translate_file`` answer the same kind of file, its layout kept.

The model is the stand-in of tests/support/stub_model.py answering the prompt's text with its
words upper-cased and its tags kept (``upper``): only the mapping of the file to the model's
calls and back is judged here; quality is the demo model's, in the e2e tests.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import docx
import httpx
import openpyxl
import pptx
import pytest
from lxml import etree

from hymt_chat.modes.session import Upload
from hymt_chat.modes.translator_session import TranslatorSession
from hymt_chat.settings import Settings
from tests.support.api_server import ApiApp, api_app
from tests.support.office_files import XLIFF12, docx_letter, pptx_sheet, upper
from tests.support.ports import free_port
from tests.support.sessions import RecordingScreen, services
from tests.support.stub_model import StubModel, echo_source

LETTRE = ["Cher client, votre commande est ", "prête", " et part demain."]


def _french_docx() -> bytes:
    d = docx.Document()
    p = d.add_paragraph(LETTRE[0])
    p.add_run(LETTRE[1]).bold = True
    p.add_run(LETTRE[2])
    d.add_paragraph("Nous vous remercions de votre confiance et de votre patience.")
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


@pytest.fixture
def stub() -> Iterator[StubModel]:
    with StubModel(lambda prompt: upper(echo_source(prompt))) as model:
        yield model


async def test_a_docx_uploaded_in_the_chat_comes_back_a_docx_with_a_summary(stub, tmp_path):
    path = tmp_path / "lettre.docx"
    path.write_bytes(_french_docx())
    screen = RecordingScreen()
    session = TranslatorSession(services(stub, tmp_path), screen, session_id="s1",
                                user_key="addr:1")
    await session.message("", None, uploads=[Upload(str(path), "lettre.docx")])
    await session.settled()
    reply = screen.last()
    [out] = reply.files
    assert out.name == "lettre.en.docx"
    assert out.mime.endswith("wordprocessingml.document")
    first = docx.Document(io.BytesIO(out.content)).paragraphs[0]
    assert [(r.text, r.bold) for r in first.runs] == [
        (LETTRE[0].upper(), None), (LETTRE[1].upper(), True), (LETTRE[2].upper(), None)]
    assert "2 parts" in reply.markdown and "characters" in reply.markdown
    # The formatted sentence reached the model once, whole, its bold word tagged.
    assert any('Cher client, votre commande est <b id="1">prête</b> et part demain.' in p
               for p in stub.prompts)


@pytest.fixture
def api(stub: StubModel, tmp_path: Path) -> Iterator[tuple[ApiApp, str]]:
    settings = Settings(base_url=stub.base_url, api_key="k", model="stub", cache_dir=tmp_path,
                        checks=False)
    with api_app(settings, tmp_path / "keys.db", free_port()) as app:
        yield app, app.store.create("files", per_minute=100)


def _xlsx() -> bytes:
    wb = openpyxl.Workbook()
    wb.active["A1"] = "Chaise bleue"
    wb.active["B1"] = 259
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


@pytest.mark.parametrize("name", ["letter.docx", "sheet.pptx", "prices.xlsx", "app.xlf"])
def test_libretranslate_translate_file_answers_the_same_kind(api, name):
    """LibreTranslate's /translate_file (multipart ``file``, ``source``, ``target``; the answer's
    ``translatedFileUrl`` is downloaded: LibreTranslate app.py ``translate_file``)."""
    app, key = api
    data = {"letter.docx": docx_letter, "sheet.pptx": pptx_sheet, "prices.xlsx": _xlsx,
            "app.xlf": lambda: XLIFF12}[name]()
    with httpx.Client(timeout=60) as http:
        answer = http.post(f"{app.url}/libretranslate/translate_file",
                           data={"source": "en", "target": "de", "api_key": key},
                           files={"file": (name, data, "application/octet-stream")})
        assert answer.status_code == 200, answer.text
        got = http.get(answer.json()["translatedFileUrl"])
    assert got.status_code == 200
    out = got.content
    stem, suffix = name.rsplit(".", 1)
    assert f'filename="{stem}.de.{suffix}"' in got.headers["content-disposition"]
    if suffix == "docx":
        assert docx.Document(io.BytesIO(out)).paragraphs[0].text == "QUARTERLY LETTER"
    elif suffix == "pptx":
        title = pptx.Presentation(io.BytesIO(out)).slides[0].shapes.title
        assert title.text_frame.text == "PRODUCT SHEET"
    elif suffix == "xlsx":
        sheet = openpyxl.load_workbook(io.BytesIO(out)).active
        assert (sheet["A1"].value, sheet["B1"].value) == ("CHAISE BLEUE", 259)
    else:
        ns = {"x": "urn:oasis:names:tc:xliff:document:1.2"}
        target = etree.fromstring(out).find(".//x:trans-unit[@id='1']/x:target", ns)
        assert "".join(target.itertext()) == "SAVE ALL FILES NOW"


def test_the_upload_picker_accepts_every_kind_the_server_reads():
    """Chainlit's ``[features.spontaneous_file_upload.accept]`` is the browser's file picker and
    its dropzone's filter: empty, it takes every file, so that every kind
    documents.DOCUMENT_TYPES reads reaches the app (and what it does not read is refused in
    the page's words, tests/test_file_errors.py)."""
    import tomllib

    config = tomllib.loads((Path(__file__).parent.parent / ".chainlit/config.toml").read_text())
    assert config["features"]["spontaneous_file_upload"]["accept"] == []


@pytest.mark.slow
def test_a_docx_uploaded_in_a_real_browser_comes_back_a_docx(browser, tmp_path: Path) -> None:
    """Chromium picks the file in the composer, the real app translates it (the engine double,
    upper-casing) and the page offers `lettre.en.docx`: downloaded, opened with python-docx, its
    bold word still bold and every part translated."""
    from playwright.sync_api import expect

    from tests.support.browser import open_chat
    from tests.support.double_app import double_app
    from tests.support.engine_double import running_double

    source = tmp_path / "lettre.docx"
    source.write_bytes(_french_docx())
    # HYMT_CHECKS=0: upper-cased French is a marker, not an English translation.
    with running_double(answer=lambda prompt: upper(echo_source(prompt))) as double, \
            double_app(double, tmp_path / "app", HYMT_CHECKS="0") as url:
        page = open_chat(browser, url)
        page.set_input_files("input[type=file]", str(source))
        expect(page.locator("#chat-submit")).to_be_enabled(timeout=30_000)  # upload finished
        page.click("#chat-submit")
        link = page.locator("a.inline-file[download='lettre.en.docx']")
        expect(link).to_be_visible(timeout=60_000)
        with page.expect_download() as download:
            link.click()
        out = tmp_path / "lettre.en.docx"
        download.value.save_as(out)
        page.close()
    first, second = docx.Document(str(out)).paragraphs
    assert [(r.text, bool(r.bold)) for r in first.runs] == [
        (LETTRE[0].upper(), False), (LETTRE[1].upper(), True), (LETTRE[2].upper(), False)]
    assert second.text == "NOUS VOUS REMERCIONS DE VOTRE CONFIANCE ET DE VOTRE PATIENCE."
