"""The guest's page of a room (``/room/<token>``) and its websocket (``/room/<token>/ws``).

No sign-in: the long random token is the key, and it leads to one room only. The page speaks
the guest's language — the one they write in once known, else their browser's
(Accept-Language) — every word of it, notices and errors included (:mod:`~hymt_chat.room.words`);
the guest picks the language they write in, and the page then speaks that. Over the websocket
a guest can say things (typed, in a photo, or spoken: :mod:`~hymt_chat.room.voice`), pick a
language, say that they are typing and have an agent's message read aloud — nothing else: no command, glossary, history or other
room is reachable from here. A guest's messages are charged to the guest's own allowance,
their address (as the chat would charge them). Each carries the page's id for it: the page
sends it again after a reconnect until it comes back as a message (the server was away), and
the room takes each id once.

The link is the key to the room, and the customer may carry it to another device: a page opened
there takes the conversation over (:meth:`~hymt_chat.modes.room.Room.join`), and the page it
replaces is told ``{"type": "moved"}`` and closed. A page that reconnects by itself says so in
its hello (``"resume": true``): it never takes over.

A frame that is not a JSON object (a list, a string, binary, broken JSON) is answered with a
close that says so (:func:`read_object`), never a traceback; the same for the counter's socket.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import functools
import html
import json
import logging
import re
from importlib import resources
from pathlib import PurePath
from typing import Any
from urllib.parse import urlencode

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from hymt_chat.errors import HymtError, InputError
from hymt_chat.lang.languages import find_language
from hymt_chat.lang.page_locale import browser_language
from hymt_chat.modes import documents
from hymt_chat.modes.room import Room, RoomError, Rooms
from hymt_chat.room import voice
from hymt_chat.room.inflight import InFlight
from hymt_chat.room.words import PageWords, page_config, text_direction
from hymt_chat.service.web import peer_key, to_front
from hymt_chat.settings import Settings
from hymt_chat.speech.service import Speech
from hymt_chat.text import formats

log = logging.getLogger("hymt_chat.room")

__all__ = ["HELLO_SECONDS", "BadFrame", "browser_language", "mount", "read_object",
           "refused_page", "render_page", "socket_payer"]

_GUEST_KEY = re.compile(r"\A[0-9a-f]{16,64}\Z")
_MESSAGE_ID = re.compile(r"\A[A-Za-z0-9_-]{8,64}\Z")  # the page's id for a message it sends
_ROOM_TOKEN = re.compile(r"\A[A-Za-z0-9_-]{32}\Z")  # secrets.token_urlsafe(24)
_AFFINITY = re.compile(r"\A[A-Za-z0-9_.-]{1,64}\Z")  # HAProxy's and ingress-nginx's values
HELLO_SECONDS = 20.0  # a connection that does not say hello in time is closed
PICTURE_FRAME_CHARS = (documents.MAX_FILE_BYTES * 4) // 3 + 4  # 2 MB, in base64


class BadFrame(Exception):
    """A websocket frame we cannot read: the close code and the reason to send."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code, self.reason = code, reason


async def read_object(websocket: WebSocket) -> dict[str, Any]:
    """The next frame as a JSON object; BadFrame (1003 binary or not an object, 1007 not
    JSON) to close with, WebSocketDisconnect when the other side left."""
    message = await websocket.receive()
    if message["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(message.get("code", 1000))
    text = message.get("text")
    if text is None:
        raise BadFrame(1003, "Send JSON text frames, not binary ones.")
    try:
        value = json.loads(text)
    except ValueError:
        raise BadFrame(1007, "That frame is not JSON.") from None
    if not isinstance(value, dict):
        raise BadFrame(1003, "Send JSON objects, such as {\"type\": \"say\", \"text\": \"…\"}.")
    return value


def socket_payer(websocket: WebSocket) -> str:
    """Whose allowance a socket's messages draw from: its client's address."""
    return peer_key(websocket.client.host if websocket.client else None)


@functools.cache
def _template(name: str) -> str:
    """A page of this package, read once (not at every page load)."""
    return resources.files("hymt_chat.room").joinpath(name).read_text("utf-8")


def render_page(name: str, config: dict[str, object], fields: dict[str, str]) -> str:
    """Page *name* with its ``{field}`` marks filled and *config* as the JSON its script
    reads."""
    # JSON inside <script>: "</" and "<!--" could end or bend the element, so they are escaped.
    fields = {**fields, "config": json.dumps(config, ensure_ascii=False).replace("<", "\\u003c")}
    page = _template(name)
    for mark, value in fields.items():
        page = page.replace("{" + mark + "}", value)
    return page


def _page(lang: str, words: dict[str, str], *, token: str, language: str | None,
          max_chars: int, speech: Speech | None) -> str:
    return render_page("guest.html", {**page_config(lang, words), "token": token,
                                      "language": language, "voice": voice.voice_on(speech),
                                      "recording": voice.recording_limits(speech),
                                      "server_voices": voice.server_voices(speech)},
                       {"lang": lang, "dir": text_direction(lang),
                        "title": html.escape(words["title"]), "max_chars": str(max_chars)})


def refused_page(words: dict[str, str], lang: str, key: str, status: int, *,
                 title: str = "title") -> HTMLResponse:
    """A link that leads nowhere (or no longer), or a desk that is closed: why, in the guest's
    language, under the page's *title* (a key of the words)."""
    heading = html.escape(words[title])
    body = (f'<!doctype html><html lang="{lang}" dir="{text_direction(lang)}"><head>'
            '<meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{heading}</title></head><body style=\"font-family:"
            f'system-ui,sans-serif;padding:2rem"><h1>{heading}</h1>'
            f"<p>{html.escape(words.get(key) or words['ended'])}</p></body></html>")
    return HTMLResponse(body, status_code=status, headers={"Cache-Control": "no-store"})


def _to_replica(request: Request, token: str, settings: Settings) -> Response | None:
    """Several replicas: a room lives in the agent's. Its link carries the agent's affinity
    cookie (``?r=``); a replica that does not hold the room sets that cookie and sends the
    phone round once more, so the sticky proxy now routes it to the agent's replica.

    Only then: with one replica, for a link that cannot be a room's, or a value that cannot
    be a proxy's server name, no cookie is set (any page could otherwise plant one)."""
    wanted = request.query_params.get("r")
    cookie = settings.affinity_cookie
    if (not cookie or settings.app_replicas < 2 or not wanted or request.query_params.get("hop")
            or not _ROOM_TOKEN.match(token) or not _AFFINITY.match(wanted)):
        return None
    if request.cookies.get(cookie) == wanted:
        return None  # it did route by the cookie: the room is really gone
    response = RedirectResponse(f"{request.url.path}?{urlencode({'r': wanted, 'hop': 1})}",
                                status_code=307)
    response.set_cookie(cookie, wanted, path="/", httponly=True, samesite="lax")
    return response


def mount(server: FastAPI, rooms: Rooms, settings: Settings,
          words: PageWords | None = None, speech: Speech | None = None) -> None:
    """Add the guest's routes in front of Chainlit's catch-all page (*words*: the pages'
    words; without a translator, only the table's languages; *speech*: the app's voice, None
    for a page without a mic)."""
    words = words or PageWords()

    @server.get("/room/words/{code}", include_in_schema=False)
    async def page_words(code: str) -> Response:
        """A page's words in another language (the guest or a counter side picked it)."""
        if find_language(code) is None:
            return JSONResponse({"error": "unknown language"}, status_code=404)
        lang, said = await words.words(code)
        return JSONResponse(page_config(lang, said), headers={"Cache-Control": "no-store"})

    to_front(server)

    @server.get("/room/{token}", include_in_schema=False)
    async def page(token: str, request: Request) -> Response:
        guess = browser_language(request.headers.get("accept-language"))
        try:
            room = await rooms.reach(token)
        except RoomError as err:
            hop = _to_replica(request, token, settings)
            lang, said = await words.words(guess)
            return hop or refused_page(said, lang, err.key, 410 if err.known else 404)
        language = room.conv.customer_language or guess
        lang, said = await words.words(language)  # the language they write in, else the browser's
        return HTMLResponse(_page(lang, said, token=token, language=language,
                                  max_chars=settings.max_input_chars, speech=speech),
                            headers={"Cache-Control": "no-store"})

    to_front(server)

    @server.websocket("/room/{token}/ws")
    async def guest_socket(websocket: WebSocket, token: str) -> None:
        await websocket.accept()  # then close with a code the page can read (4404, 4410)
        try:
            room = await rooms.reach(token)
        except RoomError as err:  # the page says it in the guest's language, by the code
            await _close(websocket, 4410 if err.known else 4404, str(err))
            return
        await _serve(websocket, room, socket_payer(websocket), settings.max_input_chars,
                     speech)

    to_front(server)

    # Added last, so that it stands ahead of ``/room/{token}`` (each route goes to the front).
    @server.get("/room/voice.js", include_in_schema=False)
    async def voice_script() -> Response:
        """The visitors' pages' recorder (the guest page, the desk's, the counter)."""
        return Response(voice.script(), media_type="text/javascript; charset=utf-8",
                        headers={"Cache-Control": "no-cache"})

    to_front(server)


_HELLO = 'Say hello first: {"type": "hello", "guest": "<your key>"}.'


async def _picture_says(room: Room, guest: str, payer: str, frame: dict[str, Any],
                        queue: asyncio.Queue[dict[str, Any]], max_chars: int) -> None:
    """A guest's photo (``{"type": "picture", "name": "sign.jpg", "data": <base64>}``): the
    text OCR finds in it is their message; a photo that cannot be read is said to them alone
    (``photo_refused``, with the reason)."""
    name, data = frame.get("name"), frame.get("data")
    try:
        if not isinstance(name, str) or not isinstance(data, str):
            raise InputError("Send a picture as its name and its bytes in base64.")
        if len(data) > PICTURE_FRAME_CHARS:
            raise InputError("This picture is over 2 MB.")
        raw = base64.b64decode(data, validate=True)
        doc = await asyncio.to_thread(documents.load_document, PurePath(name).name or "photo",
                                      raw, max_chars=max_chars)
        if doc.kind not in formats.PICTURES:
            raise InputError(f"{PurePath(name).name!r} is not a PNG, JPEG or WebP picture.")
    except (InputError, binascii.Error) as err:
        queue.put_nowait({"type": "error", "key": "photo_refused", "text": str(err)})
        return
    await room.guest_says(guest, doc.text, payer)


async def _voice_says(room: Room, guest: str, payer: str, frame: dict[str, Any],
                      queue: asyncio.Queue[dict[str, Any]], speech: Speech | None) -> None:
    """A guest's recording (``{"type": "voice", "audio": <base64>, "mime": …, "id": …}``):
    the words heard are their message, as if typed; a recording that gives none is said to
    them alone (a ``voice_*`` key: no speech, unclear, not a language of ours, refused,
    unavailable), and the conversation goes on."""
    if room.refusal() or guest not in room.guests:
        return  # the room ended, or this device lost its place: the recogniser is not woken
    ref = _ref(frame.get("id"))
    # The language they write in; else the page's (theirs, or their browser's).
    chosen = find_language(frame.get("language") or "") if isinstance(
        frame.get("language"), str) else None
    hint = room.conv.customer_language or (chosen.code if chosen is not None else None)
    try:
        heard = await voice.hear_frame(speech, frame, hint)
    except HymtError as err:  # InputError, or SpeechUnavailableError: typing goes on
        log.info("a guest's recording was not heard: %s", err)  # the detail stays here
        queue.put_nowait({"type": "error", "key": voice.problem_key(err), "ref": ref})
        return
    await room.guest_says(guest, heard.text, payer, ref)


async def _listening(room: Room, guest: str, queue: asyncio.Queue[dict[str, Any]],
                     speech: Speech | None) -> None:
    """The guest's mic opened: the agent reads that they are typing (they are, by voice), and
    the model loads now rather than after they spoke; voice that cannot work is said at once."""
    await room.guest_typing(guest)
    problem = "voice is off" if speech is None or not speech.enabled else await speech.ready()
    if problem is not None:
        log.info("a guest's microphone: voice unavailable: %s", problem)
        queue.put_nowait({"type": "error", "key": "voice_unavailable"})


async def _read_aloud(room: Room, frame: dict[str, Any], queue: asyncio.Queue[dict[str, Any]],
                      speech: Speech | None) -> None:
    """``{"type": "speak", "ref": <seq>}``: an agent's message of this room, read as the guest
    sees it (its translation, else the original), never a text the page sends."""
    ref = frame.get("ref")
    found = next((m for m in room.history if m.seq == ref and m.who == "agent"), None) if (
        isinstance(ref, int) and not isinstance(ref, bool)) else None
    if found is None:
        queue.put_nowait({"type": "error", "key": "listen_unavailable", "ref": ref,
                          "text": "no message of yours has that number"})
        return
    if found.translation is not None:
        text, code = found.translation, found.target
    else:
        text, code = found.original, found.source or room.conv.agent_language
    queue.put_nowait(await voice.sound(speech, text, code, ref))


def _ref(value: object) -> str | None:
    return value if isinstance(value, str) and _MESSAGE_ID.match(value) else None


async def _serve(websocket: WebSocket, room: Room, payer: str,
                 max_chars: int = 200_000, speech: Speech | None = None) -> None:
    """One guest connection: hello, then events out and messages in, until either side ends."""
    try:
        hello = await asyncio.wait_for(read_object(websocket), HELLO_SECONDS)
    except (TimeoutError, WebSocketDisconnect, BadFrame):
        await _close(websocket, 4400, _HELLO)
        return
    guest = hello.get("guest")
    if hello.get("type") != "hello" or not isinstance(guest, str) or not _GUEST_KEY.match(guest):
        await _close(websocket, 4400, _HELLO)
        return
    try:
        queue = room.join(guest, resume=hello.get("resume") is True)
    except RoomError as err:
        await websocket.send_json({"type": "closed", "key": err.key, "text": str(err)})
        await _close(websocket, 4409, str(err))
        return
    language = find_language(hello.get("language") or "")
    if language is not None and room.conv.customer_language is None:
        room.set_guest_language(language.code)
        queue.put_nowait({"type": "language", "code": language.code})

    async def send_events() -> None:
        while True:
            event = await queue.get()
            await websocket.send_json(event)
            if event["type"] in ("closed", "replaced", "moved"):
                await _close(websocket, 1000, event["type"])
                return

    sender = asyncio.create_task(send_events())
    saying = InFlight()  # a guest's long message does not hold their next one
    reading = InFlight(limit=1)  # one reading aloud at a time: asked again, never piled
    try:
        while not sender.done():
            incoming = await read_object(websocket)
            if incoming.get("type") == "say" and isinstance(incoming.get("text"), str):
                await saying.start(room.guest_says(guest, incoming["text"], payer,
                                                   _ref(incoming.get("id"))))
            elif incoming.get("type") == "picture":  # read by OCR, beside the messages
                await saying.start(_picture_says(room, guest, payer, incoming, queue, max_chars))
            elif incoming.get("type") == "voice":  # heard by the recogniser, beside them too
                await saying.start(_voice_says(room, guest, payer, incoming, queue, speech))
            elif incoming.get("type") == "listening":
                await saying.start(_listening(room, guest, queue, speech))
            elif incoming.get("type") == "speak":
                if not reading.try_start(_read_aloud(room, incoming, queue, speech)):
                    queue.put_nowait({"type": "error", "key": "listen_unavailable",
                                      "ref": incoming.get("ref"),
                                      "text": "one message is read aloud at a time"})
            elif incoming.get("type") == "typing":  # throttled by the room
                await room.guest_typing(guest)
            elif incoming.get("type") == "language":
                found = find_language(incoming.get("code") or "")
                if found is not None:
                    queue.put_nowait({"type": "language",
                                      "code": room.set_guest_language(found.code)})
    except BadFrame as bad:
        await _close(websocket, bad.code, bad.reason)
    except (WebSocketDisconnect, RuntimeError):
        pass  # the guest left; the room keeps its history
    finally:
        room.leave(guest, queue)
        reading.cancel()
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await sender


async def _close(websocket: WebSocket, code: int, reason: str) -> None:
    with contextlib.suppress(Exception):
        await websocket.close(code=code, reason=reason[:120])
