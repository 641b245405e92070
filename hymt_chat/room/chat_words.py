"""The chat page (Chainlit's) in one language: the reader's choice, else the browser's, for
any of the 38.

Chainlit's page asks ``/project/translations`` for its UI strings and ``/project/settings``
for its profiles, starters and readme, each with the browser's language. Here:

* ``/project/translations`` answers ahead of Chainlit's, from the catalogs
  (:mod:`hymt_chat.words.catalogs`): Chainlit's UI strings in the page's language (its own
  files' words where it ships them, completed for the 38), then the app's words over the
  strings it words its own way. So the app's words and Chainlit's come from the same language.
* ``/project/settings`` is passed the page's own language (:class:`PageLanguage`), so that
  the profiles and starters follow it; Chainlit reads the readme of that language
  (``chainlit_<tag>.md``), or the English one where none is written, and so never looks for
  a file that is not there (which it logs at every page load).
* ``/hymt/words`` gives the page's own script (the banner) its words in that language.
* ``?lang=<code>`` on the page's address is the reader's choice (the settings' *Page
  language* loads the page with it), kept in a cookie.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from http.cookies import CookieError, SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from hymt_chat.lang.languages import find_language
from hymt_chat.lang.page_locale import chainlit_tag, page_language
from hymt_chat.modes.page_text import PageText, chainlit_keys
from hymt_chat.service.web import to_front
from hymt_chat.words.catalogs import catalog
from hymt_chat.words.extract import NOT_WORDS

__all__ = ["COOKIE", "ChatWords", "PageLanguage", "environ_language", "flat", "mount", "nested",
           "settings_language"]

COOKIE = "hymt_page_language"
"""The reader's choice of the page's language (set by ``?lang=<code>``)."""
_YEAR = 365 * 24 * 3600
_CHAINLIT_HTML = b'<html lang="en">'  # Chainlit's page, whatever the language it then speaks
# The page's language while Chainlit answers /project/settings: Chainlit hands its callbacks
# (profiles, starters) the language it was asked, which names the readme's file, not the page.
_SETTINGS_PAGE: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "hymt_settings_page", default=None)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def flat(tree: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """A Chainlit translation file's strings by path: {"chat.input.placeholder": "…"}."""
    out: dict[str, str] = {}
    for key, value in tree.items():
        if isinstance(value, Mapping):
            out.update(flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = str(value)
    return out


def nested(strings: Mapping[str, str]) -> dict[str, Any]:
    """:func:`flat` undone: the shape Chainlit's page reads."""
    tree: dict[str, Any] = {}
    for path, value in strings.items():
        *parents, last = path.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return tree


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def _cookie(header: str | None) -> str | None:
    try:
        morsel = SimpleCookie(header or "").get(COOKIE)
    except CookieError:
        return None
    return morsel.value if morsel is not None else None


def settings_language(language: str | None) -> str:
    """The page's language in a Chainlit callback given *language* (profiles, starters):
    the one :class:`PageLanguage` chose for this request, else *language*'s."""
    return _SETTINGS_PAGE.get() or page_language(browser=language)


class ChatWords:
    """The chat page's words in any of the 38, from the catalogs: the app's (group ``chat``)
    and Chainlit's UI strings (group ``chainlit``, its files' words completed for the 38)."""

    def __init__(self, translations: Path) -> None:
        self.translations = translations  # Chainlit's translation files (.chainlit/translations)
        self.english = flat(json.loads((translations / "en-US.json").read_text("utf-8")))
        self.ui = {k: v for k, v in self.english.items() if k not in NOT_WORDS}

    def settings_text(self, language: str | None) -> PageText:
        """The words of a page asking Chainlit's ``/project/settings`` in *language*."""
        return self.page_text(settings_language(language))

    def page_text(self, code: str) -> PageText:
        """A tab's words."""
        return PageText.of(code)

    def translation(self, code: str) -> dict[str, Any]:
        """Chainlit's translation file for a page in *code*, with the app's words in it."""
        said = catalog(code)
        return nested({**self.english, **said.group("chainlit", self.ui),
                       **chainlit_keys(said.group("chat"))})


class PageLanguage:
    """ASGI: ``/project/settings`` asked in the page's language (the reader's choice, else the
    browser's), named as its readme is (``fr-FR``, ``ja``), or English where no readme is
    written in it; and ``?lang=`` on a page kept as the reader's choice."""

    def __init__(self, app: ASGIApp, *, readmes: frozenset[str]) -> None:
        self.app = app
        self.readmes = readmes  # the tags of the chainlit_<tag>.md files

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"))
        if str(scope.get("path", "")).endswith("/project/settings"):
            await self._settings(scope, query, receive, send)
        elif scope.get("method") == "GET":
            await self._page(scope, query, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _page(self, scope: Scope, query: list[tuple[str, str]], receive: Receive,
                    send: Send) -> None:
        """An HTML page: Chainlit's says its language (``<html lang>``, for screen readers and
        the browser's own translation offer); ``?lang=`` is kept as the reader's choice."""
        headers = _headers(scope)
        chosen = find_language(dict(query).get("lang") or "")
        code = page_language(chosen.code if chosen else _cookie(headers.get("cookie")),
                             accept_language=headers.get("accept-language"))
        start: Message | None = None
        body: list[bytes] = []

        async def send_page(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                if not any(k.lower() == b"content-type" and v.startswith(b"text/html")
                           for k, v in message.get("headers", [])):
                    await send(message)
                    return
                start = message
                if chosen is not None:
                    cookie = f"{COOKIE}={chosen.code}; Path=/; Max-Age={_YEAR}; SameSite=Lax"
                    start["headers"] = [*start.get("headers", []),
                                        (b"set-cookie", cookie.encode("latin-1"))]
                return
            if start is None or message["type"] != "http.response.body":
                await send(message)
                return
            body.append(message.get("body", b""))
            if message.get("more_body"):
                return
            page = b"".join(body).replace(_CHAINLIT_HTML, f'<html lang="{code}">'.encode(), 1)
            start["headers"] = [(k, str(len(page)).encode() if k.lower() == b"content-length"
                                 else v) for k, v in start.get("headers", [])]
            await send(start)
            await send({"type": "http.response.body", "body": page})

        await self.app(scope, receive, send_page)

    async def _settings(self, scope: Scope, query: list[tuple[str, str]], receive: Receive,
                        send: Send) -> None:
        headers = _headers(scope)
        code = page_language(_cookie(headers.get("cookie")), dict(query).get("language"),
                             headers.get("accept-language"))
        tag = chainlit_tag(code) or code
        readme = tag if tag in self.readmes else "en-US"
        query = [(k, v) for k, v in query if k != "language"] + [("language", readme)]
        token = _SETTINGS_PAGE.set(code)
        try:
            await self.app({**scope, "query_string": urlencode(query).encode("latin-1")},
                           receive, send)
        finally:
            _SETTINGS_PAGE.reset(token)


def environ_language(environ: Mapping[str, Any]) -> str:
    """The page's language for a socket (its WSGI-style environ): the reader's choice, else
    the browser's first language we translate, else English."""
    return page_language(_cookie(environ.get("HTTP_COOKIE")),
                         accept_language=environ.get("HTTP_ACCEPT_LANGUAGE"))


def mount(server: FastAPI, app_root: str | Path) -> ChatWords:
    """``/project/translations`` ahead of Chainlit's, and :class:`PageLanguage` around the app
    (*app_root*: Chainlit's, with its readmes and ``.chainlit/translations``)."""
    root = Path(app_root)
    words = ChatWords(root / ".chainlit" / "translations")
    readmes = frozenset(p.stem.removeprefix("chainlit_") for p in root.glob("chainlit_*.md"))
    server.add_middleware(PageLanguage, readmes=readmes)

    @server.get("/project/translations", include_in_schema=False)
    async def translations(request: Request) -> JSONResponse:
        code = page_language(request.cookies.get(COOKIE), request.query_params.get("language"),
                             request.headers.get("accept-language"))
        return JSONResponse({"translation": words.translation(code)})

    to_front(server)

    @server.get("/hymt/words", include_in_schema=False)
    async def banner_words(request: Request) -> JSONResponse:
        """The page script's words (public/banner.js: the banner, and the few strings
        Chainlit's page writes in English whatever its language) in the page's language."""
        code = page_language(request.cookies.get(COOKIE), request.query_params.get("language"),
                             request.headers.get("accept-language"))
        said = words.page_text(code)
        return JSONResponse({"lang": said.language, "words": {k: v for k, v in said.words.items()
                                                     if k.startswith(("banner_", "script_"))}},
                            headers={"Cache-Control": "no-store"})

    to_front(server)
    return words
