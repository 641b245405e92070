"""The LibreTranslate dialect, under ``/libretranslate``: what its clients send and expect.

``POST /translate`` (``q`` one text, or a JSON list of them; ``source`` a code or ``auto``,
``target``, ``format`` text|html, ``alternatives``, ``api_key``; JSON or form), ``POST /detect``,
``GET /languages``, ``POST /translate_file`` (multipart ``file``; the answer names a download
URL), ``GET /download_file/{name}``, ``GET /frontend/settings``, ``GET /health``, ``GET /spec``
(:mod:`~hymt_chat.api.libre_spec`), ``POST /suggest`` (suggestions are off: 403, as
LibreTranslate answers without ``--suggestions``). Errors are ``{"error": "..."}`` with
LibreTranslate's codes: 400 bad input (also a text over ``charLimit``, a missing key and a key's
spent monthly quota: LibreTranslate has no 456, and refuses what a key may not send with 400,
as its ``char_limit`` check does), 403 a bad key, 429 slow down (the per-minute limit), 500
translation failed; any other path under the root 404 and a known one's wrong method 405 with
``Allow`` (:mod:`.fallback`), never the chat page.

``/translate`` answers ``hymt_flags`` beside ``translatedText`` (the checks' findings on the
text, a list per text for a batch) and ``/translate_file`` beside ``translatedFileUrl`` (the
whole file's); both count them in ``X-Hymt-Flags`` (:mod:`.service`).

Where clients and scripts match LibreTranslate's sentence, ``error`` is that sentence word for
word: "Invalid JSON format" (a JSON body that is not an object) and "Invalid API key", ours
beside it in ``detail`` (app.py's ``get_json_dict`` and ``access_check``); "Invalid request:
file format not supported" (``translate_file``) is followed by the formats this server reads,
which a user needs to see where clients show ``error`` alone.

Each endpoint answers at ``ROOT/name`` and where clients join it: ``ROOTname`` (deep-translator
appends the name to the base URL as given) and ``ROOT//name`` ('/name' joined onto a base URL
that ends in a slash); libretranslatepy adds the slash itself.

Like LibreTranslate (app.py: ``request.values.get("q")``), a form field sent twice is read once,
its first value; only a JSON list is a batch. ``charLimit`` is :attr:`Settings.max_input_chars`,
for one text and for a request's texts together, and the body may be as large as that many
characters take at their worst encoding (:func:`body_limit`): a text the settings allow is
never refused for its bytes, and one over it gets LibreTranslate's 400 "exceeds text limit".

**Keys and other origins.** Any page may call these paths from a browser (CORS ``*``, no
cookies: :class:`hymt_chat.service.web.ApiCors`), with a key. Without one, a request from a
browser page on another origin (an ``Origin`` that is neither this server's nor listed in
``HYMT_API_ORIGINS``) is never the keyless "local" caller of ``HYMT_API_OPEN_LOCAL``: it gets
LibreTranslate's answer to a missing key, 400 "Please contact the server operator to get an API
key" — else any web page a local user visits could spend the local API. LibreTranslate does
the same with ``--require-api-key-origin`` (app.py:352-356 and 380-387, ``access_check``).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from hymt_chat import __version__
from hymt_chat.api.access import OFF_MESSAGE
from hymt_chat.api.codes import from_libre, libre_code, libre_codes
from hymt_chat.api.fallback import add_fallback
from hymt_chat.api.fields import Fields, NotAnObjectError, read_fields
from hymt_chat.api.libre_spec import libre_spec
from hymt_chat.api.service import FLAGS_FIELD, ApiService, Context, flag_list
from hymt_chat.api.uploads import UnsupportedKindError, load_upload
from hymt_chat.api.work import MAX_ALTERNATIVES, MAX_TEXTS, Job
from hymt_chat.engine.priority import BULK
from hymt_chat.engine.translator import Translation
from hymt_chat.errors import (
    AccessDeniedError,
    BodyTooLargeError,
    InputError,
    QuotaExceededError,
    RateLimitedError,
    UnknownLanguageError,
    public_text,
)
from hymt_chat.lang.detect import detect_candidates, detect_with_confidence
from hymt_chat.lang.languages import LANGUAGES, get_language
from hymt_chat.modes import documents
from hymt_chat.modes.cost import document_cost
from hymt_chat.service.ratelimit import Cost
from hymt_chat.service.web import api_origins
from hymt_chat.service.web_guard import LIBRE_ENDPOINTS, LIBRE_ROOT, origin_allowed
from hymt_chat.settings import Settings

__all__ = ["KEY_NEEDED", "FileStore", "KeyMissingError", "body_limit", "char_limit",
           "detections", "libretranslate_router"]

DIALECT = "libretranslate"
ROOT = LIBRE_ROOT
FILE_SLACK = 64 * 1024  # multipart headers and the other fields around the file
FORM_SLACK = 64 * 1024  # the fields around the texts: keys, codes, JSON's quotes and commas
WORST_BYTES = 12  # a character at its worst: an emoji as two \uXXXX escapes, or %F0%9F%98%80
KEY_NEEDED = "Please contact the server operator to get an API key"  # LibreTranslate's words
NO_SUGGESTIONS = "Suggestions are disabled on this server."  # ditto
UNKNOWN = {"confidence": 0.0, "language": "en"}  # LibreTranslate's guess when it has none


class KeyMissingError(AccessDeniedError):
    """No key where one is needed: LibreTranslate answers 400, not 403 (a bad key's)."""


class BadKeyError(AccessDeniedError):
    """A key that is unknown or revoked: LibreTranslate's 403 "Invalid API key"."""


# LibreTranslate's own sentence for each of these (app.py), then ours in ``detail``
_WORDS: tuple[tuple[type[Exception], int, str], ...] = (
    (NotAnObjectError, 400, "Invalid JSON format"),
    (BadKeyError, 403, "Invalid API key"),
)
FILE_FORMAT = "Invalid request: file format not supported"  # app.py, translate_file


def char_limit(settings: Settings) -> int:
    """``charLimit``: the characters one request may carry (the chat's own limit)."""
    return settings.max_input_chars


def body_limit(settings: Settings) -> int:
    """The largest body: ``charLimit`` characters at their worst encoding, and the fields."""
    return WORST_BYTES * char_limit(settings) + FORM_SLACK


def _too_long(size: int, limit: int, unit: str = "") -> InputError:
    """LibreTranslate's sentence (app.py, its char_limit check), numbers as it prints them."""
    return InputError(f"Invalid request: request ({size}{unit}) exceeds text limit "
                      f"({limit}{unit})")


def error_response(err: BaseException) -> Response:
    if isinstance(err, UnsupportedKindError):
        return JSONResponse({"error": f"{FILE_FORMAT}. {err.sentence}"}, status_code=400)
    for kind, status, words in _WORDS:
        if isinstance(err, kind):
            return JSONResponse({"error": words, "detail": str(err)}, status_code=status)
    if isinstance(err, BodyTooLargeError):
        err = _too_long(err.size, err.limit, " bytes")
    if isinstance(err, QuotaExceededError):
        return JSONResponse({"error": f"Invalid request: {err}"}, status_code=400)
    if isinstance(err, InputError | KeyMissingError):
        return JSONResponse({"error": str(err)}, status_code=400)
    if isinstance(err, AccessDeniedError):
        return JSONResponse({"error": str(err)}, status_code=403)
    if isinstance(err, RateLimitedError):
        headers = {}
        if err.retry_after:
            headers["Retry-After"] = str(max(1, round(err.retry_after)))
        return JSONResponse({"error": f"Slowdown: {err}"}, status_code=429, headers=headers)
    message = public_text(err)  # never the model server's address, nor a bug's text
    return JSONResponse({"error": f"Cannot translate text: {message}"}, status_code=500)


def _error(status: int, sentence: str, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"error": sentence}, status_code=status, headers=headers)


class FileStore:
    """Translated files until downloaded or an hour old (at most 64 kept): in memory."""

    def __init__(self, keep: int = 64, seconds: float = 3600.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._files: OrderedDict[str, tuple[float, bytes, str]] = OrderedDict()
        self._keep, self._seconds, self._clock = keep, seconds, clock

    def put(self, name: str, data: bytes, mime: str) -> str:
        self._expire()
        file_id = f"{secrets.token_urlsafe(16)}.{name}"
        self._files[file_id] = (self._clock(), data, mime)
        while len(self._files) > self._keep:
            self._files.popitem(last=False)
        return file_id

    def get(self, file_id: str) -> tuple[bytes, str] | None:
        self._expire()
        entry = self._files.get(file_id)
        return (entry[1], entry[2]) if entry else None

    def _expire(self) -> None:
        now = self._clock()
        for file_id in [f for f, (at, _, _) in self._files.items() if now - at > self._seconds]:
            del self._files[file_id]


def _key(fields: Fields, request: Request) -> str | None:
    key = fields.text("api_key")
    auth = request.headers.get("authorization", "")
    if not key and auth.lower().startswith("bearer "):
        key = auth[7:].strip()
    return key or None


def from_elsewhere(request: Request, listed: frozenset[str]) -> bool:
    """Sent by a browser page on an origin neither this server's nor *listed*. (A page cannot
    forge ``Origin``, nor send ``X-Forwarded-Host`` without a preflight, which the API's CORS
    refuses: that header is not among those it allows.)"""
    headers = request.headers
    if "origin" not in headers:  # browsers send one with every cross-origin POST and fetch()
        return headers.get("sec-fetch-site") == "cross-site"
    return not origin_allowed(headers["origin"], headers.get("host"),
                              headers.get("x-forwarded-host"), listed)


async def _authenticate(svc: ApiService, ctx: Context, fields: Fields) -> None:
    """The caller, or LibreTranslate's 400 for a missing key (403 for a bad one)."""
    key = _key(fields, ctx.request)
    if key is None and from_elsewhere(ctx.request, api_origins(svc.settings)):
        raise KeyMissingError(KEY_NEEDED)  # never the local caller: see the module docstring
    try:
        await svc.authenticate(ctx, key)
    except AccessDeniedError as err:
        if key is None:
            raise KeyMissingError(OFF_MESSAGE if str(err) == OFF_MESSAGE else KEY_NEEDED) from None
        raise BadKeyError(str(err)) from None


def _texts(fields: Fields, limit: int) -> tuple[list[str], bool]:
    """The texts, and whether they came as a batch (a JSON list)."""
    batch = fields.json_list("q")
    values = fields.getlist("q") if batch else fields.getlist("q")[:1]
    if not values or (len(values) == 1 and values[0] in (None, "")):
        raise InputError("Invalid request: missing q parameter")
    if len(values) > MAX_TEXTS:  # LibreTranslate's own wording (its --batch-limit)
        raise InputError(f"Invalid request: request ({len(values)}) exceeds text limit "
                         f"({MAX_TEXTS}): send at most {MAX_TEXTS} texts per request.")
    if not all(isinstance(v, str) for v in values):
        raise InputError("Invalid request: q must be a string or a list of strings")
    total = sum(len(v) for v in values)  # LibreTranslate counts each text; here also together
    if total > limit:
        raise _too_long(total, limit)
    return values, batch


def _code(value: str, field: str) -> str:
    """Our code of LibreTranslate's; else its sentence, "zz is not supported" (app.py:805-811,
    word for word: its own test compares it; the codes are at ``/languages``)."""
    try:
        return from_libre(value, field)
    except UnknownLanguageError:
        raise UnknownLanguageError(f"{value.lower()[:40]} is not supported") from None


def _alternatives(fields: Fields) -> int:
    """LibreTranslate's reading: a number, below 0 taken as 0 (app.py: ``max(0, int(n))``)."""
    value = fields.get("alternatives")
    try:
        wanted = max(0, int(value if value not in (None, "") else 0))
    except (TypeError, ValueError):
        raise InputError("Invalid request: alternatives parameter is not a number") from None
    if wanted > MAX_ALTERNATIVES:
        raise InputError(f"Invalid request: alternatives parameter must be <= {MAX_ALTERNATIVES}")
    return wanted


def _detected(code: str | None, confidence: float) -> dict[str, Any]:
    if not code:
        return dict(UNKNOWN)
    return {"confidence": round(confidence * 100, 1), "language": libre_code(code)}


def libretranslate_router(svc: ApiService, files: FileStore | None = None) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    store = files or FileStore()
    limit = body_limit(svc.settings)
    chars = char_limit(svc.settings)

    def endpoint(name: str, method: str) -> Callable[[Callable[..., Awaitable[Response]]],
                                                      Callable[..., Awaitable[Response]]]:
        """Register a handler at ``ROOT/name`` and at the paths clients join it to (the Guard
        and the CORS know the joined ones by :data:`LIBRE_ENDPOINTS`)."""
        if name not in LIBRE_ENDPOINTS:
            raise ValueError(f"{name} is not in web_guard.LIBRE_ENDPOINTS")

        def register(handler: Callable[..., Awaitable[Response]]
                     ) -> Callable[..., Awaitable[Response]]:
            for path in (f"{ROOT}/{name}", f"{ROOT}{name}", f"{ROOT}//{name}"):
                router.add_api_route(path, handler, methods=[method])
            return handler
        return register

    @endpoint("translate", "POST")
    async def translate(request: Request) -> Response:
        async def work(ctx: Context) -> Response:
            fields = await read_fields(request, limit)
            await _authenticate(svc, ctx, fields)
            texts, batch = _texts(fields, chars)
            source = fields.text("source")
            target = fields.text("target")
            if not source:
                raise InputError("Invalid request: missing source parameter")
            if not target:
                raise InputError("Invalid request: missing target parameter")
            fmt = fields.text("format", "text")
            if fmt not in ("text", "html"):
                raise InputError(f"{fmt} format is not supported")
            alternatives = _alternatives(fields)
            job = Job(texts, _code(target, "target"),
                      "auto" if source == "auto" else _code(source, "source"),
                      fmt, alternatives=alternatives if fmt == "text" else 0)  # type: ignore[arg-type]
            results = await svc.translate(ctx, job)
            body: dict[str, Any] = {"translatedText": [r.text for r in results] if batch
                                    else results[0].text}
            if source == "auto":
                detected = [_detected(r.source, r.confidence) for r in results]
                body["detectedLanguage"] = detected if batch else detected[0]
            if alternatives:
                alts = [r.alternatives for r in results]
                body["alternatives"] = alts if batch else alts[0]
            flags = [flag_list(r.flags) for r in results]
            body[FLAGS_FIELD] = flags if batch else flags[0]
            return JSONResponse(body)

        return await svc.guard(DIALECT, request, work, error_response)

    @endpoint("detect", "POST")
    async def detect(request: Request) -> Response:
        async def work(ctx: Context) -> Response:
            fields = await read_fields(request, limit)
            await _authenticate(svc, ctx, fields)
            q = fields.text("q")
            if not q:
                raise InputError("Invalid request: missing q parameter")
            if len(q) > chars:
                raise _too_long(len(q), chars)
            await svc.access.admit(ctx.caller)  # type: ignore[arg-type]
            return JSONResponse(await asyncio.to_thread(detections, q))  # CPU: off the loop

        return await svc.guard(DIALECT, request, work, error_response)

    @endpoint("languages", "GET")
    async def languages() -> Response:
        codes = libre_codes()
        return JSONResponse([{"code": libre_code(lang.code), "name": lang.english,
                              "targets": [c for c in codes if c != libre_code(lang.code)]}
                             for lang in LANGUAGES])

    @endpoint("frontend/settings", "GET")
    async def frontend_settings() -> Response:
        target = get_language(svc.settings.default_target)
        return JSONResponse({
            "charLimit": chars,
            "frontendTimeout": 500,
            "apiKeys": True,
            "keyRequired": not svc.access.open_local,
            "suggestions": False,
            "filesTranslation": True,
            "supportedFilesFormat": sorted(documents.DOCUMENT_TYPES),
            "language": {"source": {"code": "auto", "name": "Auto Detect"},
                         "target": {"code": libre_code(target.code), "name": target.english}},
        })

    @endpoint("health", "GET")
    async def health() -> Response:
        """LibreTranslate's answer: the API is up (the model's state is the app's /health)."""
        return JSONResponse({"status": "ok"})

    @endpoint("spec", "GET")
    async def spec() -> Response:
        return JSONResponse(libre_spec(ROOT, __version__, MAX_ALTERNATIVES))

    @endpoint("suggest", "POST")
    async def suggest() -> Response:
        return _error(403, NO_SUGGESTIONS)

    @endpoint("translate_file", "POST")
    async def translate_file(request: Request) -> Response:
        async def work(ctx: Context) -> Response:
            fields = await read_fields(request, documents.MAX_FILE_BYTES + FILE_SLACK)
            await _authenticate(svc, ctx, fields)
            upload = fields.file("file")
            if upload is None:
                raise InputError("Invalid request: missing file parameter")
            source = fields.text("source") or "auto"
            target = fields.text("target")
            if not target:
                raise InputError("Invalid request: missing target parameter")
            target = _code(target, "target")
            data = await upload.read()
            doc = await asyncio.to_thread(  # decoding, parsing, detecting: off the event loop
                load_upload, upload.filename or "file.txt", data,
                max_chars=svc.settings.max_input_chars)
            code = (await asyncio.to_thread(documents.detect_document_language, doc)
                    if source == "auto" else _code(source, "source"))
            calls = (await asyncio.to_thread(document_cost, doc, svc.settings)).calls
            ctx.charge = await svc.access.admit(ctx.caller,  # type: ignore[arg-type]
                                                Cost(calls, len(doc.text)))  # a call a value
            out = documents.untranslated(doc)  # a formatted file's units, as they came
            flags = documents.FileFlags()  # each part's findings, by part in reading order
            if code != target:
                async def piece(text: str, *, on_progress: object = None) -> Translation:
                    return await svc.translator.translate(
                        text, target, code or "auto", user=ctx.caller.user,  # type: ignore[union-attr]
                        klass=BULK)

                out = await svc.unless_gone(ctx, documents.translate_document(
                    doc, piece, flags=flags))
            ctx.billed = len(doc.text)
            data = await asyncio.to_thread(doc.encode, out, target)  # a file's XML: off the loop
            file_id = store.put(documents.output_name(doc.name, target), data, doc.mime)
            url = f"{str(request.base_url).rstrip('/')}{ROOT}/download_file/{file_id}"
            # A file's findings name their part (the Nth translated part, as the chat says).
            listed = [{**flag, "part": part} for part, findings in flags.by_part()
                      for flag in flag_list(findings)]
            svc.flagged(ctx, len(listed))
            return JSONResponse({"translatedFileUrl": url, FLAGS_FIELD: listed})

        return await svc.guard(DIALECT, request, work, error_response)

    @router.get(f"{ROOT}/download_file/{{file_id}}")
    async def download_file(file_id: str) -> Response:
        found = store.get(file_id)
        if found is None:
            return _error(400, "Invalid filename (unknown or expired).")
        data, mime = found
        name = file_id.split(".", 1)[1]
        return Response(data, media_type=mime,
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    add_fallback(router, [ROOT], _error)  # last: every other path under the root, in JSON
    return router


def detections(text: str) -> list[dict[str, Any]]:
    """LibreTranslate's ``/detect`` answer: our detector's verdict first (confidence 0-100),
    then langdetect's other candidates among the 38; never empty: with no candidate at all,
    LibreTranslate's own fallback, English at confidence 0 (its language.py)."""
    code, confidence = detect_with_confidence(text)
    out = [_detected(code, confidence)] if code else []
    known = {lang.code for lang in LANGUAGES}
    for other, prob in detect_candidates(text, min_prob=0.05):
        if other in known and other != code:
            out.append(_detected(other, prob))
    return out[:3] or [dict(UNKNOWN)]
