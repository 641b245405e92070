"""The LibreTranslate dialect, under ``/libretranslate``: what its clients send and expect.

``POST /translate`` (``q`` one text or a list, ``source`` a code or ``auto``, ``target``,
``format`` text|html, ``alternatives``, ``api_key``; JSON or form), ``POST /detect``,
``GET /languages``, ``POST /translate_file`` (multipart ``file``; the answer names a download
URL), ``GET /download_file/{name}``, ``GET /frontend/settings``. Errors are
``{"error": "..."}`` with LibreTranslate's codes: 400 bad input, 403 bad or missing key,
429 slow down (also a spent quota: LibreTranslate has no 456), 500 translation failed.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from hymt_chat.api.codes import from_libre, libre_code, libre_codes
from hymt_chat.api.fields import Fields, read_fields
from hymt_chat.api.service import ApiService, Context
from hymt_chat.api.work import MAX_ALTERNATIVES, MAX_TEXTS, Job
from hymt_chat.engine.priority import BULK
from hymt_chat.errors import (
    AccessDeniedError,
    BodyTooLargeError,
    InputError,
    QuotaExceededError,
    RateLimitedError,
    public_text,
)
from hymt_chat.lang.detect import detect_candidates, detect_with_confidence
from hymt_chat.lang.languages import LANGUAGES, get_language
from hymt_chat.modes import documents
from hymt_chat.modes.cost import document_cost
from hymt_chat.service.ratelimit import Cost
from hymt_chat.text.cleanup import is_blank

__all__ = ["FileStore", "libretranslate_router"]

DIALECT = "libretranslate"
FILE_SLACK = 64 * 1024  # multipart headers and the other fields around the file


def error_response(err: BaseException) -> Response:
    if isinstance(err, BodyTooLargeError):
        return JSONResponse({"error": str(err)}, status_code=413)
    if isinstance(err, InputError):
        return JSONResponse({"error": str(err)}, status_code=400)
    if isinstance(err, AccessDeniedError):
        return JSONResponse({"error": str(err)}, status_code=403)
    if isinstance(err, RateLimitedError | QuotaExceededError):
        headers = {}
        if isinstance(err, RateLimitedError) and err.retry_after:
            headers["Retry-After"] = str(max(1, round(err.retry_after)))
        return JSONResponse({"error": f"Slowdown: {err}"}, status_code=429, headers=headers)
    message = public_text(err)  # never the model server's address, nor a bug's text
    return JSONResponse({"error": f"Cannot translate text: {message}"}, status_code=500)


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


def _texts(fields: Fields) -> list[str]:
    values = fields.getlist("q")
    if not values or (len(values) == 1 and values[0] in (None, "")):
        raise InputError("Invalid request: missing q parameter")
    if len(values) > MAX_TEXTS:  # LibreTranslate's own wording (its --batch-limit)
        raise InputError(f"Invalid request: request ({len(values)}) exceeds text limit "
                         f"({MAX_TEXTS}): send at most {MAX_TEXTS} texts per request.")
    if not all(isinstance(v, str) for v in values):
        raise InputError("Invalid request: q must be a string or a list of strings")
    return values


def _detected(code: str | None, confidence: float) -> dict[str, Any]:
    return {"confidence": round(confidence * 100, 1), "language": libre_code(code) if code
            else "auto"}


def libretranslate_router(svc: ApiService, files: FileStore | None = None) -> APIRouter:
    router = APIRouter(prefix="/libretranslate", include_in_schema=False)
    store = files or FileStore()
    limit = svc.settings.api_max_body

    @router.post("/translate")
    async def translate(request: Request) -> Response:
        async def work(ctx: Context) -> Response:
            fields = await read_fields(request, limit)
            await svc.authenticate(ctx, _key(fields, request))
            texts = _texts(fields)
            batch = fields.was_list("q") or len(texts) > 1
            source = fields.text("source")
            target = fields.text("target")
            if not source:
                raise InputError("Invalid request: missing source parameter")
            if not target:
                raise InputError("Invalid request: missing target parameter")
            fmt = fields.text("format", "text")
            if fmt not in ("text", "html"):
                raise InputError(f"{fmt} format is not supported")
            alternatives = fields.integer("alternatives")
            if not 0 <= alternatives <= MAX_ALTERNATIVES:
                raise InputError(f"Invalid request: alternatives is 0 to {MAX_ALTERNATIVES}.")
            job = Job(texts, from_libre(target, "target"),
                      "auto" if source == "auto" else from_libre(source, "source"),
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
            return JSONResponse(body)

        return await svc.guard(DIALECT, request, work, error_response)

    @router.post("/detect")
    async def detect(request: Request) -> Response:
        async def work(ctx: Context) -> Response:
            fields = await read_fields(request, limit)
            await svc.authenticate(ctx, _key(fields, request))
            q = fields.text("q")
            if not q or is_blank(q):
                raise InputError("Invalid request: missing q parameter")
            await svc.access.admit(ctx.caller)  # type: ignore[arg-type]
            return JSONResponse(await asyncio.to_thread(detections, q))  # CPU: off the loop

        return await svc.guard(DIALECT, request, work, error_response)

    @router.get("/languages")
    async def languages() -> Response:
        codes = libre_codes()
        return JSONResponse([{"code": libre_code(lang.code), "name": lang.english,
                              "targets": [c for c in codes if c != libre_code(lang.code)]}
                             for lang in LANGUAGES])

    @router.get("/frontend/settings")
    async def frontend_settings() -> Response:
        target = get_language(svc.settings.default_target)
        return JSONResponse({
            "charLimit": svc.settings.max_input_chars,
            "frontendTimeout": 500,
            "apiKeys": True,
            "keyRequired": not svc.access.open_local,
            "suggestions": False,
            "filesTranslation": True,
            "supportedFilesFormat": sorted(documents.DOCUMENT_TYPES),
            "language": {"source": {"code": "auto", "name": "Auto Detect"},
                         "target": {"code": libre_code(target.code), "name": target.english}},
        })

    @router.post("/translate_file")
    async def translate_file(request: Request) -> Response:
        async def work(ctx: Context) -> Response:
            fields = await read_fields(request, documents.MAX_FILE_BYTES + FILE_SLACK)
            await svc.authenticate(ctx, _key(fields, request))
            upload = fields.file("file")
            if upload is None:
                raise InputError("Invalid request: missing file parameter")
            source = fields.text("source") or "auto"
            target = from_libre(fields.text("target") or "", "target")
            data = await upload.read()
            doc = await asyncio.to_thread(  # decoding, parsing, detecting: off the event loop
                documents.load_document, upload.filename or "file.txt", data,
                max_chars=svc.settings.max_input_chars)
            code = (await asyncio.to_thread(documents.detect_document_language, doc)
                    if source == "auto" else from_libre(source, "source"))
            calls = (await asyncio.to_thread(document_cost, doc, svc.settings)).calls
            ctx.charge = await svc.access.admit(ctx.caller,  # type: ignore[arg-type]
                                                Cost(calls, len(doc.text)))  # a call a value
            out = documents.untranslated(doc)  # a formatted file's units, as they came
            if code != target:
                async def piece(text: str, *, on_progress: object = None) -> str:
                    result = await svc.translator.translate(
                        text, target, code or "auto", user=ctx.caller.user,  # type: ignore[union-attr]
                        klass=BULK)
                    return result.text

                out = await svc.unless_gone(ctx, documents.translate_document(doc, piece))
            ctx.billed = len(doc.text)
            file_id = store.put(documents.output_name(doc.name, target), doc.encode(out),
                                doc.mime)
            url = f"{str(request.base_url).rstrip('/')}/libretranslate/download_file/{file_id}"
            return JSONResponse({"translatedFileUrl": url})

        return await svc.guard(DIALECT, request, work, error_response)

    @router.get("/download_file/{file_id}")
    async def download_file(file_id: str) -> Response:
        found = store.get(file_id)
        if found is None:
            return JSONResponse({"error": "Invalid filename (unknown or expired)."},
                                status_code=400)
        data, mime = found
        name = file_id.split(".", 1)[1]
        return Response(data, media_type=mime,
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    return router


def detections(text: str) -> list[dict[str, Any]]:
    """LibreTranslate's ``/detect`` answer: our detector's verdict first (confidence 0-100),
    then langdetect's other candidates among the 38; empty when nothing is known."""
    code, confidence = detect_with_confidence(text)
    out = [_detected(code, confidence)] if code else []
    known = {lang.code for lang in LANGUAGES}
    for other, prob in detect_candidates(text, min_prob=0.05):
        if other in known and other != code:
            out.append(_detected(other, prob))
    return out[:3]
