"""A client of the real app as a browser is one: with the cookie the page gives it (the app keys
its anonymous sessions by that cookie), a socket.io tab, uploads and file links."""

from __future__ import annotations

import asyncio
import time
import uuid

import httpx

from tests.support.tabs import Tab

__all__ = ["browser_cookie", "element", "elements", "file_link", "send_files", "upload"]


def browser_cookie(url: str) -> str:
    """The Cookie header of a browser that has loaded the page."""
    page = httpx.get(url + "/", timeout=30)
    assert page.status_code == 200, page.text
    return f"hymt_client={page.cookies['hymt_client']}"


def upload(url: str, tab: Tab, name: str, data: bytes, mime: str,
           cookie: str | None = None) -> str:
    """Attach a file to *tab*'s session as its page does: the file's id."""
    answer = httpx.post(f"{url}/project/file", params={"session_id": tab.session},
                        files={"file": (name, data, mime)}, timeout=30,
                        headers={"Cookie": cookie} if cookie else {})
    assert answer.status_code == 200, answer.text
    return str(answer.json()["id"])


async def send_files(tab: Tab, *ids: str, text: str = "") -> None:
    await tab.client.emit("client_message", {"message": {
        "id": str(uuid.uuid4()), "threadId": "", "name": "User", "type": "user_message",
        "output": text, "createdAt": "2026-01-01T00:00:00Z"},
        "fileReferences": [{"id": i} for i in ids]})


def elements(tab: Tab) -> list[dict]:
    """The files and images the app showed in *tab* (Chainlit's ``element`` events)."""
    return [d for e, d in tab.events if e == "element" and isinstance(d, dict)]


async def element(tab: Tab, suffix: str, timeout: float = 60) -> dict:
    """The first element whose name ends with *suffix*, waited for."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [d for d in elements(tab) if str(d.get("name", "")).endswith(suffix)]
        if found:
            return found[0]
        await asyncio.sleep(0.1)
    raise AssertionError(f"no element *{suffix} in {str(tab.events[-6:])[:800]}")


def file_link(url: str, tab: Tab, file_id: str) -> str:
    """The link the page makes for a file of its session."""
    return f"{url}/project/file/{file_id}?session_id={tab.session}"
