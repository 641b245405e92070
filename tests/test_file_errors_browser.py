"""Refused files on a French page, in a real Chromium (Debian's, Playwright; the app on the
stand-in model): an .exe, an empty .txt and a broken .pdf each get the app's sentence in French
— what went wrong, the kinds it reads named as people name them — and never Chainlit's toasts
("File type must be text/plain,…", "Upload failed") nor its PDF viewer's "Failed to load PDF
file.". The sentences themselves: tests/test_file_errors.py."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from hymt_chat.modes import documents
from hymt_chat.modes.page_text import PageText
from hymt_chat.words.source import CHAT
from tests.support.browser import new_page
from tests.support.tabs import app

pytestmark = pytest.mark.slow

FILES = {"setup.exe": b"MZ\x90\x00" + b"\x00" * 200,
         "vide.txt": b"",
         "casse.pdf": b"Ceci n'est pas un PDF.\n" * 20}
MIME = re.compile(r"\b(?:application|text|image|audio|video)/[\w.+-]+")
# Chainlit's own words for a refused upload, and its PDF viewer's
CHAINLIT = ("File type must be", "Upload failed", "Upload error", "Failed to load PDF file",
            "File is larger than")
ENGLISH = re.compile(r"\b(?:the|and|is|not|file|kind|upload|failed|empty|nothing|read|"
                     r"accepted|translate|header)\b", re.IGNORECASE)


def _words(text: str) -> str:
    return " ".join(text.split())  # the page's no-break spaces and line ends as one space


def _french(name: str) -> str:
    try:
        documents.load_document(name, FILES[name])
    except Exception as err:  # noqa: BLE001 - each file is refused, and says so
        return _words(PageText.of("fr").error(err))
    raise AssertionError(f"{name} was not refused")


def test_refused_files_are_said_in_french_without_mime_types_or_chainlits_words(
        browser, tmp_path):
    for name, data in FILES.items():
        (tmp_path / name).write_bytes(data)
    with app(tmp_path / "app") as (url, stub):
        context = browser.new_context(locale="fr-FR", viewport={"width": 1280, "height": 800})
        page = new_page(context)
        page.goto(url)
        page.wait_for_selector("#starters button:not([disabled])")
        said: list[str] = []
        for name in FILES:
            # the paperclip's own input: the file a person picks with it
            page.set_input_files("#upload-button-input", str(tmp_path / name))
            expect(page.locator("#message-composer").get_by_text(name)).to_be_visible()
            expect(page.locator("#chat-submit")).to_be_enabled()  # uploaded, not refused
            expect(page.locator("[data-sonner-toast]")).to_have_count(0)
            page.click("#chat-submit")
            sentence = _french(name)
            answer = page.locator(".ai-message").filter(has_text=name)
            expect(answer).to_have_count(1)
            shown = _words(answer.inner_text())
            assert sentence in shown, shown
            said.append(shown)
        body = _words(page.evaluate("document.body.innerText"))
        assert "Acceptés : texte, Word, PowerPoint, Excel, PDF, images" in said[0]
        assert "« vide.txt » est vide : il n'y a rien à traduire." in said[1]
        assert "« casse.pdf » n'est pas un PDF" in said[2]
        for shown in said:
            assert not MIME.search(shown) and ENGLISH.findall(shown) == [], shown
        assert [w for w in CHAINLIT if w in body] == [], body
        english = [part.strip() for key in ("file_kind", "file_empty", "pdf_no_header")
                   for part in re.split(r"'?\{\{\w+\}\}'?", CHAT[key]) if len(part.strip()) > 8]
        assert len(english) >= 4 and [e for e in english if e in body] == [], body
        # the broken PDF is in the message as a file, not in the page's PDF viewer
        expect(page.locator(".react-pdf__Document")).to_have_count(0)
        expect(page.locator("[data-sonner-toast]")).to_have_count(0)
        assert stub.prompts == []  # nothing of it reached the model
        context.close()
