"""The kiosk's counter page (``/counter``): one screen, two people, two languages, and its
websocket (``/counter/ws``). Nothing is stored: a connection's :class:`Counter` is all there is,
and the page wipes itself (and reconnects afresh) after the kiosk's idle time.

With agents configured (``HYMT_AGENTS``) both need a signed-in agent, as the chat does: the
door (:class:`~hymt_chat.service.web_guard.Guard`) refuses them otherwise and names the agent
in the connection's state. A screen's words are charged to that agent, else to the client's
address — the chat's own allowance, at what they cost (:mod:`hymt_chat.modes.cost`).

Each side has its own mic: its recording (``{"type": "voice", "side": "a", "audio": <base64>,
"mime": …}``) is heard in that side's language and then said as if typed; a recording that
gives no words is an ``error`` event with the ``voice_*`` key that says why
(:mod:`~hymt_chat.room.voice`).

Each message carries a ``ref``: the other half's Listen button asks for it by that number
(``{"type": "speak", "ref": n}``) where the browser has no voice of its language; the socket
reads only its own last answers (:data:`ANSWERS_KEPT`), never a text the page sends.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import itertools
import logging
from collections import OrderedDict

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import HTMLResponse

from hymt_chat.engine.translator import Translator
from hymt_chat.errors import HymtError
from hymt_chat.modes.counter import Counter, Side
from hymt_chat.room import voice
from hymt_chat.room.inflight import InFlight
from hymt_chat.room.page import (
    HELLO_SECONDS,
    BadFrame,
    browser_language,
    read_object,
    render_page,
    socket_payer,
)
from hymt_chat.room.words import PageWords, page_config
from hymt_chat.service.ratelimit import Cost, RateLimiter
from hymt_chat.service.web import to_front
from hymt_chat.service.web_guard import signed_in
from hymt_chat.settings import Settings
from hymt_chat.speech.service import Speech

log = logging.getLogger("hymt_chat.room")

__all__ = ["ANSWERS_KEPT", "mount"]

ANSWERS_KEPT = 50  # a screen's last answers that Listen can still ask the server to read


def _page(settings: Settings, sides: dict[str, tuple[str, dict[str, str]]],
          defaults: dict[str, str], speech: Speech | None = None) -> str:
    """Each half speaks its side's language (its words: :mod:`hymt_chat.room.words`)."""
    configs = {side: page_config(lang, words) for side, (lang, words) in sides.items()}
    title = " · ".join(dict.fromkeys(c["words"]["counter_title"]  # type: ignore[index]
                                     for c in configs.values()))
    return render_page("counter.html", {"defaults": defaults, "sides": configs,
                                        "languages": configs["a"]["languages"],
                                        "idle": settings.kiosk_idle_seconds,
                                        "max_chars": settings.max_input_chars,
                                        "voice": voice.voice_on(speech),
                                        "recording": voice.recording_limits(speech),
                                        "server_voices": voice.server_voices(speech)},
                       {"title": html.escape(title)})


def mount(server: FastAPI, translator: Translator, limiter: RateLimiter, settings: Settings,
          words: PageWords | None = None, speech: Speech | None = None) -> None:
    """Add the counter's routes in front of Chainlit's catch-all page (*speech*: the app's
    voice, None for a counter without mics)."""
    page_words = words or PageWords()

    @server.get("/counter", include_in_schema=False)
    async def page(request: Request) -> HTMLResponse:
        guess = browser_language(request.headers.get("accept-language"))
        first = settings.default_target if guess in (None, "zh") else guess
        second = "zh" if first != "zh" else "en"
        sides = {"a": await page_words.words(first), "b": await page_words.words(second)}
        return HTMLResponse(_page(settings, sides, {"a": first, "b": second}, speech),
                            headers={"Cache-Control": "no-store"})

    to_front(server)

    @server.websocket("/counter/ws")
    async def socket(websocket: WebSocket) -> None:
        await websocket.accept()
        agent = signed_in(websocket.scope)
        key = f"user:{agent}" if agent else socket_payer(websocket)

        async def charge(cost: Cost) -> None:
            await limiter.ahit(key, cost)

        counter = Counter(translator, user=f"counter:{id(websocket)}", charge=charge)
        saying = InFlight()  # one side's long paste does not hold the other side's line
        reading = InFlight(limit=1)  # one reading aloud at a time: asked again, never piled
        numbers = itertools.count(1)
        answers: OrderedDict[int, tuple[str, str]] = OrderedDict()  # ref: (text, language)

        async def say(side: Side, text: str) -> None:
            event = await counter.say(side, text)
            if event["type"] == "message":  # what the other half reads, kept for Listen
                event["ref"] = ref = next(numbers)
                answers[ref] = ((event["translation"], event["target"])
                                if event["translation"] is not None
                                else (event["original"], event["source"]))
                while len(answers) > ANSWERS_KEPT:
                    answers.popitem(last=False)
            with contextlib.suppress(WebSocketDisconnect, RuntimeError):
                await websocket.send_json(event)

        async def read_aloud(side: Side, ref: object) -> None:
            """One of this screen's answers read aloud, for the *side* that pressed Listen."""
            kept = answers.get(ref) if isinstance(ref, int) else None
            frame = (await voice.sound(speech, *kept, ref) if kept is not None else
                     {"type": "error", "key": "listen_unavailable", "ref": ref,
                      "text": "no answer of this screen has that number"})
            with contextlib.suppress(WebSocketDisconnect, RuntimeError):
                await websocket.send_json({**frame, "side": side})

        async def refuse(side: Side, key: str, text: str) -> None:
            with contextlib.suppress(WebSocketDisconnect, RuntimeError):
                await websocket.send_json({"type": "error", "side": side, "key": key,
                                           "text": text})

        async def spoken(side: Side, frame: dict[str, object]) -> None:
            """A side's recording, heard in that side's language, then said as typed."""
            try:
                heard = await voice.hear_frame(speech, frame, counter.languages[side])
            except HymtError as err:  # InputError, or SpeechUnavailableError
                log.info("a counter side's recording was not heard: %s", err)
                await refuse(side, voice.problem_key(err), "")
                return
            await say(side, heard.text)

        async def listening(side: Side) -> None:
            """A side's mic opened: the model loads now; voice that cannot work is said."""
            problem = ("voice is off" if speech is None or not speech.enabled
                       else await speech.ready())
            if problem is not None:
                log.info("a counter side's microphone: voice unavailable: %s", problem)
                await refuse(side, "voice_unavailable", "")

        try:
            hello = await asyncio.wait_for(read_object(websocket), HELLO_SECONDS)
            both: tuple[Side, Side] = ("a", "b")
            for first in both:
                counter.set_language(first, hello.get(first))
            while True:
                incoming = await read_object(websocket)
                raw = incoming.get("side")
                if raw not in both:
                    continue
                side: Side = "a" if raw == "a" else "b"
                if incoming.get("type") == "say" and isinstance(incoming.get("text"), str):
                    await saying.start(say(side, incoming["text"]))
                elif incoming.get("type") == "voice":
                    await saying.start(spoken(side, incoming))
                elif incoming.get("type") == "listening":
                    await saying.start(listening(side))
                elif incoming.get("type") == "speak":
                    if not reading.try_start(read_aloud(side, incoming.get("ref"))):
                        await websocket.send_json({
                            "type": "error", "side": side, "key": "listen_unavailable",
                            "ref": incoming.get("ref"),
                            "text": "one answer is read aloud at a time"})
                elif incoming.get("type") == "language":
                    code = counter.set_language(side, incoming.get("code"))
                    await websocket.send_json({"type": "language", "side": side, "code": code})
        except BadFrame as bad:
            await websocket.close(code=bad.code, reason=bad.reason[:120])
        except (TimeoutError, WebSocketDisconnect, RuntimeError):
            return  # the screen was reset, closed or went quiet: nothing to keep
        finally:
            saying.cancel()
            reading.cancel()

    to_front(server)
