"""The support desk's door for visitors: ``/desk`` (pick a language, write the first message)
and ``POST /desk/start``, which opens the conversation in the desk's queue and answers the
room's token — the visitor then talks on the room's own guest page (``/room/<token>``), in
their language throughout (:mod:`hymt_chat.room.words`). The first message may be spoken:
the start then carries the recording (``"audio"``, base64, and its ``"mime"``) instead of
``"text"``, and the words heard open the conversation as typed ones would; a recording that
gives none is answered with the ``voice_*`` key that says why (:mod:`hymt_chat.room.voice`).

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
import logging
import re
from importlib import resources
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from hymt_chat.errors import HymtError
from hymt_chat.lang.languages import find_language
from hymt_chat.modes.desk import Desk, DeskError
from hymt_chat.modes.room import Room
from hymt_chat.room import voice
from hymt_chat.room.page import browser_language, refused_page, render_page
from hymt_chat.room.words import PageWords, page_config, text_direction
from hymt_chat.service.web import peer_key, to_front
from hymt_chat.settings import Settings
from hymt_chat.speech.service import Speech

log = logging.getLogger("hymt_chat.room")

__all__ = ["mount"]

_GUEST_KEY = re.compile(r"\A[0-9a-f]{16,64}\Z")
_STATUS = {"busy": 503, "desk_closed": 503, "too_many": 429, "rate_limited": 429,
           "blocked": 403}
_SLACK = 64 << 10  # a start's JSON around its text or recording


async def _body(request: Request, limit: int) -> Any:
    """The request's JSON, None when it is not JSON or runs past *limit* bytes (read no
    further: a start is a sentence or one short recording, never a stream)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    try:
        return json.loads(bytes(body))
    except ValueError:
        return None


@functools.cache
def _widget() -> str:
    return resources.files("hymt_chat.room").joinpath("widget.js").read_text("utf-8")


def mount(server: FastAPI, desk: Desk, settings: Settings, words: PageWords,
          speech: Speech | None = None) -> None:
    """Add the visitor's routes in front of Chainlit's catch-all page (*speech*: the app's
    voice, None for a start page without a mic)."""
    limit = max(voice.VOICE_FRAME_CHARS, 12 * settings.max_input_chars) + _SLACK

    @server.get("/desk", include_in_schema=False)
    async def page(request: Request) -> Response:
        guess = browser_language(request.headers.get("accept-language"))
        lang, said = await words.words(guess)
        if not desk.staffed:  # no form: nobody could ever answer what a visitor writes
            return refused_page(said, lang, "desk_closed", 503, title="desk_title")
        config = {**page_config(lang, said), "voice": voice.voice_on(speech),
                  "recording": voice.recording_limits(speech)}
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
        body: Any = await _body(request, limit)
        if not isinstance(body, dict):
            return JSONResponse({"key": "refused"}, status_code=400)
        text, guest = body.get("text"), body.get("guest")
        found = find_language(body.get("language") or "") if isinstance(
            body.get("language"), str) else None
        spoken = text is None and "audio" in body
        if not isinstance(guest, str) or not _GUEST_KEY.match(guest) or not spoken and (
                not isinstance(text, str) or not text.strip()
                or len(text) > settings.max_input_chars):
            return JSONResponse({"key": "refused"}, status_code=400)
        visitor = peer_key(request.client.host if request.client else None)
        try:
            if spoken:
                # Every check and the visitor's rate first: a start that would be refused
                # anyway does not wake the recogniser.
                await desk.admit(visitor)
                try:
                    heard = await voice.hear_frame(speech, body, found.code if found else None)
                except HymtError as err:  # InputError, SpeechUnavailableError: typing works
                    log.info("a visitor's recording was not heard: %s", err)
                    return JSONResponse({"key": voice.problem_key(err)}, status_code=422)
                text = heard.text
            said_text = str(text)

            async def first(room: Room) -> None:
                room.guests.add(guest)  # the visitor's browser, admitted as the room's guest
                await room.guest_says(guest, said_text, visitor)  # in before the agents know

            ticket = await desk.start(visitor, found.code if found else None, first,
                                      admitted=spoken)
        except DeskError as err:
            return JSONResponse({"key": err.key, "text": str(err)},
                                status_code=_STATUS.get(err.key, 400))
        return JSONResponse({"token": ticket.room.token, "number": ticket.number},
                            headers={"Cache-Control": "no-store"})

    to_front(server)
