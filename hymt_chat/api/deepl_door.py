"""What every DeepL route shares: the key from the header, the request's fields, DeepL's error
shape and codes, and the routes' wrapper.

The key comes as ``Authorization: DeepL-Auth-Key <key>`` only: an ``auth_key`` in the query
string or the body is refused (403), as DeepL itself has refused it since January 2026 (a key
in a URL ends up in logs and browser histories). Errors are ``{"message": "..."}`` (what
deepl-python's ``_raise_for_status`` reads) with DeepL's codes: 400, 403, 404, 405, 413, 429,
456 quota exceeded, 503 (model busy or down: DeepL's clients retry it), 500.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from hymt_chat.api.codes import from_deepl
from hymt_chat.api.fields import Fields, read_fields
from hymt_chat.api.service import ApiService, Context
from hymt_chat.errors import (
    AccessDeniedError,
    BodyTooLargeError,
    InputError,
    ModelBusyError,
    ModelError,
    ModelUnavailableError,
    QuotaExceededError,
    RateLimitedError,
    public_text,
)

__all__ = [
    "DIALECT",
    "DeepLDoor",
    "GlossaryNotFoundError",
    "error_response",
    "message",
    "requested_languages",
]

DIALECT = "deepl"
LEGACY_AUTH = ("auth_key in the query string or the body is no longer accepted (nor by DeepL "
               "since January 2026): send the key as Authorization: DeepL-Auth-Key <key>.")


class GlossaryNotFoundError(InputError):
    """A glossary id this key does not own (or that does not exist): 404."""


def message(status: int, text: str, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"message": text}, status_code=status, headers=headers)


def error_response(err: BaseException) -> Response:
    status, headers = 500, {}
    if isinstance(err, BodyTooLargeError):
        status = 413
    elif isinstance(err, GlossaryNotFoundError):
        status = 404
    elif isinstance(err, InputError):
        status = 400
    elif isinstance(err, AccessDeniedError):
        status = 403
    elif isinstance(err, QuotaExceededError):
        status = 456
    elif isinstance(err, RateLimitedError):
        status = 429
        if err.retry_after:
            headers["Retry-After"] = str(max(1, round(err.retry_after)))
    elif isinstance(err, ModelBusyError | ModelUnavailableError):
        status = 503
        headers["Retry-After"] = "5"
    elif isinstance(err, ModelError):
        status = 503
    return message(status, public_text(err), headers)  # never a server address, nor a bug


def requested_languages(fields: Fields) -> tuple[str, str]:
    """A request's ``(source, target)`` in our codes: ``target_lang`` required, ``source_lang``
    optional ("auto"), each refused with DeepL's wording when unknown."""
    target_value = fields.text("target_lang")
    if not target_value:
        raise InputError("Parameter 'target_lang' not specified.")
    target = from_deepl(target_value, "target_lang")  # checked first, as DeepL does
    source = fields.text("source_lang")
    return from_deepl(source, "source_lang") if source else "auto", target


def _header_key(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("deepl-auth-key "):
        return auth[len("deepl-auth-key "):].strip() or None
    return None


class DeepLDoor:
    """The service and the two body caps: translate requests, and glossaries (DeepL takes
    glossaries of up to 10 MB; its own suite sends 10,000 entries)."""

    def __init__(self, svc: ApiService, glossary_body: int) -> None:
        self.svc = svc
        self.glossary_body = glossary_body

    async def begin(self, ctx: Context, limit: int | None = None) -> Fields:
        """The caller (a key in the header: a refused one costs no body read), the fields."""
        if "auth_key" in ctx.request.query_params:
            raise AccessDeniedError(LEGACY_AUTH)
        key = _header_key(ctx.request)
        if key:
            await self.svc.authenticate(ctx, key)
        fields = await read_fields(ctx.request, limit or self.svc.settings.api_max_body)
        if fields.get("auth_key") is not None:
            raise AccessDeniedError(LEGACY_AUTH)
        if not key:
            await self.svc.authenticate(ctx, None)
        return fields

    def route(self, work: Callable[[Context], Awaitable[Response]]) -> Any:
        async def endpoint(request: Request) -> Response:
            return await self.svc.guard(DIALECT, request, work, error_response)
        return endpoint
