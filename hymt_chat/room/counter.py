"""The kiosk's counter page (``/counter``): one screen, two people, two languages, and its
websocket (``/counter/ws``). Nothing is stored: a connection's :class:`Counter` is all there is,
and the page wipes itself (and reconnects afresh) after the kiosk's idle time."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import HTMLResponse

from hymt_chat.engine.translator import Translator
from hymt_chat.modes.counter import Counter, Side
from hymt_chat.room.inflight import InFlight
from hymt_chat.room.page import HELLO_SECONDS, browser_language, render_page
from hymt_chat.service.ratelimit import RateLimiter, client_address
from hymt_chat.service.web import to_front
from hymt_chat.settings import Settings

__all__ = ["mount"]

def _page(settings: Settings, first: str, second: str) -> str:
    return render_page("counter.html", {"defaults": {"a": first, "b": second},
                                        "idle": settings.kiosk_idle_seconds,
                                        "max_chars": settings.max_input_chars},
                       {"title": "Counter · hymt-chat"})


def mount(server: FastAPI, translator: Translator, limiter: RateLimiter, settings: Settings,
          trusted_proxies: frozenset[str] = frozenset()) -> None:
    """Add the counter's routes in front of Chainlit's catch-all page. A screen's words are
    charged to its client address, as the chat's are."""

    @server.get("/counter", include_in_schema=False)
    async def page(request: Request) -> HTMLResponse:
        guess = browser_language(request.headers.get("accept-language"))
        first = settings.default_target if guess in (None, "zh") else guess
        second = "zh" if first != "zh" else "en"
        return HTMLResponse(_page(settings, first, second), headers={"Cache-Control": "no-store"})

    to_front(server)

    @server.websocket("/counter/ws")
    async def socket(websocket: WebSocket) -> None:
        await websocket.accept()
        peer = websocket.client.host if websocket.client else None
        key = "addr:" + client_address(peer, websocket.headers.get("x-forwarded-for"),
                                       trusted_proxies)
        counter = Counter(translator, user=f"counter:{id(websocket)}",
                          charge=lambda chars: limiter.ahit(key, chars=chars))
        saying = InFlight()  # one side's long paste does not hold the other side's line

        async def say(side: Side, text: str) -> None:
            with contextlib.suppress(WebSocketDisconnect, RuntimeError):
                await websocket.send_json(await counter.say(side, text))

        try:
            hello = await asyncio.wait_for(websocket.receive_json(), HELLO_SECONDS)
            if isinstance(hello, dict):
                for side in ("a", "b"):
                    counter.set_language(side, hello.get(side))
            while True:
                incoming: Any = await websocket.receive_json()
                side = incoming.get("side") if isinstance(incoming, dict) else None
                if side not in ("a", "b"):
                    continue
                if incoming.get("type") == "say" and isinstance(incoming.get("text"), str):
                    await saying.start(say(side, incoming["text"]))
                elif incoming.get("type") == "language":
                    code = counter.set_language(side, incoming.get("code"))
                    await websocket.send_json({"type": "language", "side": side, "code": code})
        except (TimeoutError, WebSocketDisconnect, ValueError, RuntimeError):
            return  # the screen was reset, closed or went quiet: nothing to keep
        finally:
            saying.cancel()

    to_front(server)


