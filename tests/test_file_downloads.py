"""A user's file is a download, never a page of the app's origin, and only for its own session.

The real app (``chainlit run app.py``) on the stand-in model; clients like a browser (the page's
cookie, a socket.io tab) and, once, a real Chromium. The HTML file carries a script that would
leave a mark in the origin's storage, or an alert, if it ever ran.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from hymt_chat.service.http_guard import DOWNLOAD_POLICY
from tests.support.browser import open_chat
from tests.support.browser_client import browser_cookie, element, file_link, send_files, upload
from tests.support.tabs import Tab, app

SCRIPT = b"<script>localStorage.setItem('ran', '1'); alert('ran')</script>"
PAGE = (b"<!doctype html><html><body><p>Bonjour, votre commande est en retard.</p>"
        + SCRIPT + b"</body></html>")


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    with app(tmp_path_factory.mktemp("downloads"), HYMT_API_OPEN_LOCAL="true") as (url, _stub):
        yield url


def _is_download(answer: httpx.Response) -> None:
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-disposition"].startswith("attachment"), answer.headers
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["content-security-policy"] == DOWNLOAD_POLICY
    assert b"nonce" not in answer.content  # the page guard never touched it


def test_an_uploaded_html_file_is_a_download_for_its_own_browser_only(running):
    async def scenario() -> dict[str, httpx.Response]:
        cookie = browser_cookie(running)
        async with Tab(running, headers={"Cookie": cookie}) as tab:
            link = file_link(running, tab, upload(running, tab, "page.html", PAGE, "text/html",
                                                  cookie))
            return {"own": httpx.get(link, headers={"Cookie": cookie}, timeout=30),
                    "bare": httpx.get(link, timeout=30),  # the link alone
                    "other": httpx.get(link, headers={"Cookie": browser_cookie(running)},
                                       timeout=30)}

    got = asyncio.run(scenario())
    _is_download(got["own"])
    assert got["own"].content == PAGE  # byte for byte: no nonce, no rewriting
    assert got["bare"].status_code == 401 and SCRIPT not in got["bare"].content
    assert got["other"].status_code == 401 and SCRIPT not in got["other"].content


def test_a_translated_html_file_is_a_download_without_a_nonce(running):
    async def scenario() -> tuple[httpx.Response, httpx.Response]:
        cookie = browser_cookie(running)
        async with Tab(running, headers={"Cookie": cookie}) as tab:
            await send_files(tab, upload(running, tab, "page.html", PAGE, "text/html", cookie))
            made = await element(tab, ".en.html")
            link = file_link(running, tab, made["chainlitKey"])
            return (httpx.get(link, headers={"Cookie": cookie}, timeout=30),
                    httpx.get(link, timeout=30))

    own, bare = asyncio.run(scenario())
    _is_download(own)
    assert b"<script" in own.content and b"EN:" in own.content  # the app's translation
    assert bare.status_code == 401


def test_the_apis_translated_documents_are_downloads_too(running):
    made = httpx.post(f"{running}/libretranslate/translate_file", timeout=60,
                      data={"source": "fr", "target": "en"},
                      files={"file": ("page.html", PAGE, "text/html")})
    assert made.status_code == 200, made.text
    _is_download(httpx.get(made.json()["translatedFileUrl"], timeout=30))


@pytest.mark.slow
def test_chromium_downloads_an_uploaded_html_file_and_runs_nothing(running, browser, tmp_path):
    """The issue's finding, from a real browser: the link of an uploaded HTML file opened in
    the chat's own tab downloads it; its script neither alerts nor writes the origin's storage."""
    dialogs: list[str] = []
    page = open_chat(browser, running, dialogs)
    try:
        sent = tmp_path / "page.html"
        sent.write_bytes(PAGE)
        with page.expect_response(lambda r: "/project/file?" in r.url
                                  and r.request.method == "POST") as uploaded:
            page.set_input_files("input[type=file]", str(sent))
        answer = uploaded.value
        assert answer.status == 200, answer.text()
        session = answer.url.split("session_id=", 1)[1].split("&", 1)[0]
        link = f"{running}/project/file/{answer.json()['id']}?session_id={session}"
        with page.expect_download() as download:
            try:
                page.goto(link)
            except Exception as err:  # noqa: BLE001 - Playwright: "Download is starting"
                assert "Download is starting" in str(err), err
        assert download.value.path().read_bytes() == PAGE
        page.goto(running + "/")  # back on the app's origin: did anything run there?
        assert page.evaluate("() => localStorage.getItem('ran')") is None
        assert dialogs == []
    finally:
        page.close()
