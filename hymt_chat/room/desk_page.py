"""The support desk's door for visitors: ``/desk`` (pick a language, write the first message)
and ``POST /desk/start``, which opens the conversation in the desk's queue and answers the
room's token — the visitor then talks on the room's own guest page (``/room/<token>``), in
their language throughout (:mod:`hymt_chat.room.words`).

A start is the visitor's: their address is their key for the desk's limits (open
conversations, starts, blocks: :mod:`hymt_chat.modes.desk`); the first message is charged to
their allowance as every guest message is. A refusal answers the page-words key the page says
in the visitor's language ("busy": all agents are busy). A desk no agent can sign in to (no
``HYMT_AGENTS``) is closed: its page says so, and a start is refused with "desk_closed".
"""

from __future__ import annotations

import functools
import html
import json
import re
from importlib import resources
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from hymt_chat.lang.languages import find_language
from hymt_chat.modes.desk import Desk, DeskError
from hymt_chat.modes.room import Room
from hymt_chat.room.page import browser_language, refused_page, render_page
from hymt_chat.room.words import PageWords, page_config, text_direction
from hymt_chat.service.web import peer_key, to_front
from hymt_chat.settings import Settings

__all__ = ["mount"]

_GUEST_KEY = re.compile(r"\A[0-9a-f]{16,64}\Z")
_STATUS = {"busy": 503, "desk_closed": 503, "too_many": 429, "rate_limited": 429,
           "blocked": 403}


@functools.cache
def _widget() -> str:
    return resources.files("hymt_chat.room").joinpath("widget.js").read_text("utf-8")


def mount(server: FastAPI, desk: Desk, settings: Settings, words: PageWords) -> None:
    """Add the visitor's routes in front of Chainlit's catch-all page."""

    @server.get("/desk", include_in_schema=False)
    async def page(request: Request) -> Response:
        guess = browser_language(request.headers.get("accept-language"))
        lang, said = await words.words(guess)
        if not desk.staffed:  # no form: nobody could ever answer what a visitor writes
            return refused_page(said, lang, "desk_closed", 503, title="desk_title")
        config = page_config(lang, said)
        return HTMLResponse(render_page("desk.html", config, {
            "lang": lang, "dir": text_direction(lang), "title": html.escape(said["desk_title"]),
            "max_chars": str(settings.max_input_chars)}), headers={"Cache-Control": "no-store"})

    to_front(server)

    @server.get("/desk/widget.js", include_in_schema=False)
    async def widget(request: Request) -> Response:
        """The website widget: one script tag on the company's site, a "Chat with us" button
        (in the visitor's browser language) that opens ``/desk`` in a frame."""
        guess = browser_language(request.headers.get("accept-language"))
        _, said = await words.words(guess)
        label = json.dumps(said["desk_title"], ensure_ascii=False).replace("<", "\\u003c")
        return Response(_widget().replace("{label}", label),
                        media_type="text/javascript; charset=utf-8",
                        headers={"Cache-Control": "no-store", "Vary": "Accept-Language",
                                 "Cross-Origin-Resource-Policy": "cross-origin"})

    to_front(server)

    @server.post("/desk/start", include_in_schema=False)
    async def start(request: Request) -> Response:
        try:
            body: Any = await request.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return JSONResponse({"key": "refused"}, status_code=400)
        text, guest = body.get("text"), body.get("guest")
        found = find_language(body.get("language") or "") if isinstance(
            body.get("language"), str) else None
        if (not isinstance(text, str) or not text.strip() or not isinstance(guest, str)
                or not _GUEST_KEY.match(guest) or len(text) > settings.max_input_chars):
            return JSONResponse({"key": "refused"}, status_code=400)
        visitor = peer_key(request.client.host if request.client else None)
        async def first(room: Room) -> None:
            room.guests.add(guest)  # the visitor's browser, admitted as the room's guest
            await room.guest_says(guest, text, visitor)  # in before the agents hear of it

        try:
            ticket = await desk.start(visitor, found.code if found else None, first)
        except DeskError as err:
            return JSONResponse({"key": err.key, "text": str(err)},
                                status_code=_STATUS.get(err.key, 400))
        return JSONResponse({"token": ticket.room.token, "number": ticket.number},
                            headers={"Cache-Control": "no-store"})

    to_front(server)
