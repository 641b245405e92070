"""The chat page (Chainlit's) in one language: the reader's choice, else the browser's, for
any of the 38.

Chainlit's page asks ``/project/translations`` for its UI strings and ``/project/settings``
for its profiles, starters and readme, each with the browser's language. Here:

* ``/project/translations`` answers ahead of Chainlit's: Chainlit's own file for the page's
  language where Chainlit ships one (the strings it leaves in English there filled by the
  model's words once made), else its English strings as the model says them (made, checked
  and kept once per deployment like the guest pages' words, :class:`PageWords`); then the
  app's words (:mod:`hymt_chat.modes.chat_words`) over the strings it words its own way. So
  the app's words and Chainlit's come from the same language.
* ``/project/settings`` is passed the page's own language (:class:`PageLanguage`), so that
  the profiles and starters follow it; Chainlit reads the readme of that language
  (``chainlit_<tag>.md``), or the English one where none is written, and so never looks for
  a file that is not there (which it logs at every page load).
* ``/hymt/words`` gives the page's own script (the banner) its words in that language.
* ``?lang=<code>`` on the page's address is the reader's choice (the settings' *Page
  language* loads the page with it), kept in a cookie.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import unicodedata
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from http.cookies import CookieError, SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from hymt_chat.engine.translator import Translator
from hymt_chat.lang.endonyms import endonym
from hymt_chat.lang.languages import find_language
from hymt_chat.lang.page_locale import chainlit_tag, page_language
from hymt_chat.modes.chat_words import ENGLISH, STATIC, PageText, chainlit_keys
from hymt_chat.room.words import PageWords
from hymt_chat.service.web import to_front

__all__ = ["COOKIE", "ChatWords", "PageLanguage", "environ_language", "flat", "mount", "nested",
           "settings_language"]

COOKIE = "hymt_page_language"
"""The reader's choice of the page's language (set by ``?lang=<code>``)."""
_YEAR = 365 * 24 * 3600
_CHAINLIT_HTML = b'<html lang="en">'  # Chainlit's page, whatever the language it then speaks
# Chainlit strings that are no words to translate: a keyboard shortcut, an example address.
_NOT_WORDS = frozenset({"navigation.user.menu.settingsKey", "auth.login.form.email.placeholder"})
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


def _latin(text: str) -> bool:
    """Is *text* written in the Latin script (a language's name in itself)?"""
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and all(unicodedata.name(c, "").startswith("LATIN") for c in letters)


def settings_language(language: str | None) -> str:
    """The page's language in a Chainlit callback given *language* (profiles, starters):
    the one :class:`PageLanguage` chose for this request, else *language*'s."""
    return _SETTINGS_PAGE.get() or page_language(browser=language)


class ChatWords:
    """The chat page's words in any of the 38: the app's (by hand, or the model's) and
    Chainlit's (its file, or the model's where it ships none)."""

    def __init__(self, translator: Translator | None, folder: Path, translations: Path,
                 wait_seconds: float = 20.0) -> None:
        self.translations = translations  # Chainlit's translation files (.chainlit/translations)
        self.english = flat(json.loads((translations / "en-US.json").read_text("utf-8")))
        self._files: dict[str, dict[str, str]] = {}
        ui = {k: v for k, v in self.english.items() if k not in ENGLISH and k not in _NOT_WORDS}
        self.app = PageWords(translator, folder / "chat-words", wait_seconds,
                             english=ENGLISH, static=STATIC)
        self.ui = PageWords(translator, folder / "chainlit-words", wait_seconds,
                            english=ui, static={"en": ui})

    def settings_text(self, language: str | None) -> PageText:
        """The words of a page asking Chainlit's ``/project/settings`` in *language*."""
        return self.page_text(settings_language(language))

    def page_text(self, code: str) -> PageText:
        """A tab's words, without waiting for the model: the page's request for its strings
        (:meth:`translation`) came first and asked for them; else English this once, as the
        strings were."""
        words = self.app.known(code)
        return PageText(code, words) if words is not None else PageText()

    def _shipped(self, tag: str) -> dict[str, str]:
        """Chainlit's strings in *tag* (read once: a handful of files)."""
        if tag not in self._files:
            try:
                tree = json.loads((self.translations / f"{tag}.json").read_text("utf-8"))
            except (OSError, ValueError):
                tree = {}
            self._files[tag] = flat(tree)
        return self._files[tag]

    def _gaps(self, code: str, shipped: Mapping[str, str]) -> list[str]:
        """The strings Chainlit's file for *code* leaves in English ("Light Theme" in its
        Japanese): all that differ from English in a language of another script, those of
        more than one word in a language of Latin script ("Info" is French too)."""
        latin = _latin(endonym(code))
        return [key for key, english in self.ui.english.items()
                if code != "en" and shipped.get(key, english) == english
                and (not latin or len(english.split()) > 1)]

    async def translation(self, code: str) -> dict[str, Any]:
        """Chainlit's translation file for a page in *code*, with the app's words in it: all
        English when the app's words are not to be had now (the model is slow or failed)."""
        tag = chainlit_tag(code)
        if tag is not None:
            (said, words), ui = await self.app.words(code), self._shipped(tag)
            if self._gaps(code, ui):  # the model's words there, once they are made: no wait
                made, filled = await self.ui.words(code, wait=0)
                if made == code:
                    ui = {**ui, **{k: filled[k] for k in self._gaps(code, ui) if k in filled}}
        else:
            (said, words), (_, ui) = await asyncio.gather(self.app.words(code),
                                                          self.ui.words(code))
        if said != code:
            ui = {}
        return nested({**self.english, **ui, **chainlit_keys(words)})


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


def mount(server: FastAPI, translator: Translator | None, cache: Path,
          app_root: str | Path) -> ChatWords:
    """``/project/translations`` ahead of Chainlit's, and :class:`PageLanguage` around the app
    (*app_root*: Chainlit's, with its readmes and ``.chainlit/translations``); the model's
    words kept under *cache*."""
    root = Path(app_root)
    words = ChatWords(translator, cache, root / ".chainlit" / "translations")
    readmes = frozenset(p.stem.removeprefix("chainlit_") for p in root.glob("chainlit_*.md"))
    server.add_middleware(PageLanguage, readmes=readmes)

    @server.get("/project/translations", include_in_schema=False)
    async def translations(request: Request) -> JSONResponse:
        code = page_language(request.cookies.get(COOKIE), request.query_params.get("language"),
                             request.headers.get("accept-language"))
        return JSONResponse({"translation": await words.translation(code)})

    to_front(server)

    @server.get("/hymt/words", include_in_schema=False)
    async def banner_words(request: Request) -> JSONResponse:
        """The page script's words (public/banner.js: the banner, and the few strings
        Chainlit's page writes in English whatever its language) in the page's language."""
        code = page_language(request.cookies.get(COOKIE), request.query_params.get("language"),
                             request.headers.get("accept-language"))
        lang, said = await words.app.words(code)
        return JSONResponse({"lang": lang, "words": {k: v for k, v in said.items()
                                                     if k.startswith(("banner_", "script_"))}},
                            headers={"Cache-Control": "no-store"})

    to_front(server)
    return words
