"""A file too large, or too many files, is refused by the app in the page's language, never by
Chainlit's English toasts ("File is larger than 2 MB", "Too many files"): the page's limits
(.chainlit/config.toml) are far above the app's, which says what it refuses itself. The page's
limit is still the server's: an upload over it is refused with 413 before it is read
(web.UploadCap), since Chainlit reads a file whole into memory before checking its size."""

from __future__ import annotations

import dataclasses
import importlib.util
import io
import re
import tomllib
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pikepdf
from fastapi import FastAPI, UploadFile

from hymt_chat.modes import documents
from hymt_chat.modes.kiosk_session import KioskSession
from hymt_chat.modes.page_text import PageText
from hymt_chat.modes.session import Upload
from hymt_chat.modes.translator_session import TranslatorSession
from hymt_chat.service.web import UPLOAD_SLACK, UploadCap, upload_cap
from hymt_chat.words.said import said
from tests.support.sessions import RecordingScreen, services
from tests.support.stub_model import StubModel

ROOT = Path(__file__).resolve().parent.parent
UPLOAD = tomllib.loads((ROOT / ".chainlit" / "config.toml").read_text("utf-8"))[
    "features"]["spontaneous_file_upload"]
CHAINLIT = Path(importlib.util.find_spec("chainlit").origin).parent  # type: ignore[arg-type]


def _said(screen: RecordingScreen) -> str:
    return screen.last().markdown.replace("\\", "")


def _files(tmp_path: Path, count: int, size: int = 20) -> list[Upload]:
    uploads = []
    for n in range(count):
        path = tmp_path / f"part{n}.txt"
        path.write_bytes(b"Hello there. " * (size // 13 + 1))
        uploads.append(Upload(str(path), path.name))
    return uploads


# --- the page lets them through; the app says no, in the page's words ------------------------


def test_the_page_lets_through_what_the_app_refuses_in_its_own_words():
    assert UPLOAD["max_size_mb"] * 1_000_000 > 3 * documents.MAX_FILE_BYTES
    assert UPLOAD["max_files"] > documents.MAX_FILES
    assert upload_cap(UPLOAD["max_size_mb"]) == UPLOAD["max_size_mb"] * 2**20 + UPLOAD_SLACK


def test_chainlit_still_reads_a_file_whole_before_checking_its_size():
    """Why the server keeps its own cap (web.UploadCap), and what public/banner.js words: the
    page's refusals past its limits are react-dropzone's English sentences."""
    server = (CHAINLIT / "server.py").read_text("utf-8")
    upload = server[server.index("async def upload_file("):server.index("def validate_file_upload(")]
    assert upload.index("content = await file.read()") < upload.index("validate_file_upload(file")
    bundle = "".join(p.read_text("utf-8") for p in
                     (CHAINLIT / "frontend" / "dist" / "assets").glob("index-*.js"))
    assert "maxSize:(r.max_size_mb||2)*1e6" in bundle  # a megabyte is 10**6 bytes there
    assert "File is larger than ${r.max_size_mb} MB" in bundle
    assert 'message:"Too many files"' in bundle
    script = (ROOT / "public" / "banner.js").read_text("utf-8")
    assert "^File is larger than ([\\d.]+) MB$" in script and '"Too many files"' in script
    for key in ("script_file_over", "script_too_many_files"):
        assert key in script and PageText.of("fr")[key] != PageText()[key]


async def test_a_file_over_the_apps_size_is_refused_in_french_and_nothing_is_sent(tmp_path):
    with StubModel() as stub:
        screen = RecordingScreen()
        session = TranslatorSession(services(stub, tmp_path), screen, session_id="s1",
                                    user_key="addr:1", page=PageText.of("fr"))
        big = tmp_path / "rapport.txt"
        big.write_bytes(b"a" * 3_000_000)  # over 2 MB, under the page's limit
        await session.message("", None, uploads=[Upload(str(big), big.name)])
        assert _said(screen).startswith(
            "«\u00a0rapport.txt\u00a0» fait 2,9 Mo\u00a0; la limite est de 2 Mo par fichier")
        await session.settled()
        assert stub.prompts == []


async def test_more_files_than_the_app_reads_are_refused_in_the_pages_words(tmp_path):
    with StubModel() as stub:
        svc = dataclasses.replace(services(stub, tmp_path), max_files=documents.MAX_FILES)
        for code in ("fr", "ja"):
            screen = RecordingScreen()
            session = TranslatorSession(svc, screen, session_id=f"s-{code}", user_key="addr:1",
                                        page=PageText.of(code))
            await session.message("", None, uploads=_files(tmp_path, documents.MAX_FILES + 1))
            page = PageText.of(code)
            assert _said(screen) == page.say(said("too_many_files", limit=5, count=6))
            assert "files per message" not in _said(screen)
        kiosk_screen = RecordingScreen()  # the kiosk takes pictures as messages: the same cap
        kiosk = KioskSession(svc, kiosk_screen, session_id="k1", user_key="addr:2",
                             page=PageText.of("es"))
        await kiosk.message("", None, uploads=_files(tmp_path, documents.MAX_FILES + 1))
        assert _said(kiosk_screen) == PageText.of("es").say(
            said("too_many_files", limit=5, count=6))
        await session.settled()
        assert stub.prompts == []


def test_a_pdf_over_the_apps_size_is_not_parsed_to_choose_its_viewer():
    pdf, out = pikepdf.new(), io.BytesIO()
    pdf.add_blank_page()
    pdf.save(out)
    assert documents.upload_mime("ok.pdf", "application/pdf", out.getvalue()) == \
        "application/pdf"
    padded = out.getvalue() + b"%" * documents.MAX_FILE_BYTES  # a comment: still a PDF
    assert documents.upload_mime("big.pdf", "application/pdf", padded) == \
        "application/octet-stream"


# --- the server's cap ---------------------------------------------------------------------------


def _capped(limit: int) -> tuple[UploadCap, list[int]]:
    """Chainlit's upload route as FastAPI serves it (a form's file), behind the cap."""
    app, reached = FastAPI(), []

    @app.post("/project/file")
    async def upload_file(file: UploadFile) -> dict[str, int]:
        data = await file.read()
        reached.append(len(data))
        return {"size": len(data)}

    @app.post("/project/action")
    async def action() -> dict[str, bool]:
        return {"ok": True}

    return UploadCap(app, limit=limit), reached


async def _post(app: UploadCap, path: str, **kwargs: object) -> httpx.Response:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 base_url="http://app") as client:
        return await client.post(path, **kwargs)  # type: ignore[arg-type]


async def test_an_upload_under_the_cap_reaches_chainlit():
    app, reached = _capped(64_000)
    answer = await _post(app, "/project/file?session_id=x",
                         files={"file": ("a.txt", b"x" * 10_000, "text/plain")})
    assert answer.status_code == 200 and reached == [10_000]


async def test_an_upload_over_the_cap_is_refused_by_its_length_before_it_is_read():
    app, reached = _capped(64_000)
    answer = await _post(app, "/project/file?session_id=x",
                         files={"file": ("big.bin", b"x" * 100_000, "application/pdf")})
    assert answer.status_code == 413 and reached == []
    assert "64,000 bytes" in answer.json()["detail"]
    # other routes are not the cap's business
    assert (await _post(app, "/project/action", content=b"x" * 100_000)).status_code == 200


async def test_an_upload_without_a_length_is_cut_off_at_the_cap():
    """A chunked body (no Content-Length): the app is told the client left once the body
    passes the cap; the rest is never read, and the answer is 413, not the app's 400."""
    app, reached = _capped(64_000)
    boundary = "hymtboundary"
    sent = []

    async def body() -> AsyncIterator[bytes]:
        yield (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
               f"filename=\"big.bin\"\r\nContent-Type: application/pdf\r\n\r\n").encode()
        for _ in range(100):  # 1.6 MB in all, were it read
            sent.append(1)
            yield b"x" * 16_384
        yield f"\r\n--{boundary}--\r\n".encode()

    answer = await _post(app, "/project/file?session_id=x", content=body(),
                         headers={"content-type": f"multipart/form-data; boundary={boundary}"})
    assert answer.status_code == 413 and reached == []
    assert re.search(r"over [\d,]+ bytes", answer.json()["detail"])
    assert len(sent) < 10  # the rest of the body was never asked for
