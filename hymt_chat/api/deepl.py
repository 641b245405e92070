"""The DeepL dialect, under ``/deepl`` (so a client's ``server_url`` is ``…/deepl``).

``POST /v2/translate`` (``text`` a list, ``target_lang``, ``source_lang``, ``formality``,
``glossary_id``, ``tag_handling`` xml|html, ``ignore_tags``; JSON or form; other DeepL fields
such as ``split_sentences`` or ``context`` are accepted and have no effect), ``/v2/languages``
(``type=source|target``), ``/v2/usage``, and glossaries: ``POST/GET /v2/glossaries``,
``GET/DELETE /v2/glossaries/{id}``, ``GET /v2/glossaries/{id}/entries`` (TSV),
``GET /v2/glossary-language-pairs``. The key comes as ``Authorization: DeepL-Auth-Key <key>``
only: an ``auth_key`` in the query string or the body is refused (403), as DeepL itself has
refused it since January 2026 (a key in a URL ends up in logs and browser histories). Errors are ``{"message": "..."}`` with DeepL's codes: 400,
403, 404 (glossary), 413, 429, 456 quota exceeded, 503 (model busy or down: DeepL's clients
retry it), 500.

Formality: the official Hunyuan-MT prompts have no register, so no target "supports
formality": ``more``/``less`` are refused as DeepL refuses them for such a language, and
``prefer_more``/``prefer_less`` fall back to the default, as DeepL defines them.
"""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from hymt_chat.api.codes import deepl_source_code, deepl_sources, deepl_targets, from_deepl
from hymt_chat.api.fields import Fields, read_fields
from hymt_chat.api.keys import Glossary
from hymt_chat.api.service import ApiService, Context
from hymt_chat.api.work import MAX_TEXTS, Job
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
from hymt_chat.lang.languages import LANGUAGES
from hymt_chat.modes.agent.glossary import MAX_TERM_CHARS

__all__ = ["deepl_router"]

DIALECT = "deepl"
MAX_GLOSSARY_ENTRIES = 1000  # every entry is matched against every text
MAX_GLOSSARIES = 100  # per key: each is kept (entries and all) in the key store
UNLIMITED = 1_000_000_000_000  # what DeepL reports as the limit of an account without one
LEGACY_AUTH = ("auth_key in the query string or the body is no longer accepted (nor by DeepL "
               "since January 2026): send the key as Authorization: DeepL-Auth-Key <key>.")


class GlossaryNotFoundError(InputError):
    """A glossary id this key does not own (or that does not exist)."""


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
    message = public_text(err)  # never the model server's address, nor a bug's text
    return JSONResponse({"message": message}, status_code=status, headers=headers)


def _header_key(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("deepl-auth-key "):
        return auth[len("deepl-auth-key "):].strip() or None
    return None


def _strings(fields: Fields, name: str) -> list[str]:
    """A DeepL list field: a JSON list, repeated form fields, or one comma-separated string."""
    values = fields.getlist(name)
    out: list[str] = []
    for value in values:
        if not isinstance(value, str):
            raise InputError(f"Parameter '{name}' must be a list of strings.")
        out += [v.strip() for v in value.split(",") if v.strip()]
    return out


def _formality(value: str | None) -> None:
    if value in (None, "default", "prefer_more", "prefer_less"):
        return
    if value in ("more", "less"):
        raise InputError("'formality' is not supported for given 'target_lang'; use "
                         "prefer_more or prefer_less to fall back to the default.")
    raise InputError(f"Value for 'formality' not supported: {value!r}.")


def _info(glossary: Glossary) -> dict[str, Any]:
    created = datetime.fromtimestamp(glossary.created, UTC)
    return {"glossary_id": glossary.id, "name": glossary.name, "ready": True,
            "source_lang": deepl_source_code(glossary.source).lower(),
            "target_lang": deepl_source_code(glossary.target).lower(),
            "creation_time": created.strftime("%Y-%m-%dT%H:%M:%S.") +
            f"{created.microsecond // 1000:03d}Z",
            "entry_count": len(glossary.entries)}


def parse_entries(text: str, fmt: str) -> dict[str, str]:
    """DeepL's glossary entries: TSV (``source<TAB>target`` a line) or CSV (two columns)."""
    if fmt not in ("tsv", "csv"):
        raise InputError(f"Value for 'entries_format' not supported: {fmt!r} (tsv or csv).")
    if fmt == "tsv":
        rows = [line.split("\t") for line in text.splitlines() if line.strip()]
    else:
        rows = [row for row in csv.reader(io.StringIO(text)) if any(c.strip() for c in row)]
    entries: dict[str, str] = {}
    for number, row in enumerate(rows, 1):
        if len(row) < 2 or not row[0].strip() or not row[1].strip():
            raise InputError(f"Invalid glossary entries: line {number} needs a source and a "
                             "target term.")
        source, target = row[0].strip(), row[1].strip()
        if len(source) > MAX_TERM_CHARS or len(target) > MAX_TERM_CHARS:
            raise InputError(f"Invalid glossary entries: line {number}: a term is at most "
                             f"{MAX_TERM_CHARS} characters.")
        if source in entries:
            raise InputError(f"Invalid glossary entries: {source!r} appears twice.")
        entries[source] = target
    if not entries:
        raise InputError("Invalid glossary entries: there are none.")
    if len(entries) > MAX_GLOSSARY_ENTRIES:
        raise InputError(f"A glossary has at most {MAX_GLOSSARY_ENTRIES} entries.")
    return entries


def deepl_router(svc: ApiService) -> APIRouter:
    router = APIRouter(prefix="/deepl/v2", include_in_schema=False)
    limit = svc.settings.api_max_body

    async def begin(ctx: Context) -> Fields:
        """The caller (a key in the header: a refused one costs no body read), the fields."""
        if "auth_key" in ctx.request.query_params:
            raise AccessDeniedError(LEGACY_AUTH)
        key = _header_key(ctx.request)
        if key:
            await svc.authenticate(ctx, key)
        fields = await read_fields(ctx.request, limit)
        if fields.get("auth_key") is not None:
            raise AccessDeniedError(LEGACY_AUTH)
        if not key:
            await svc.authenticate(ctx, None)
        return fields

    def route(work: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            return await svc.guard(DIALECT, request, work, error_response)
        return endpoint

    async def translate(ctx: Context) -> Response:
        fields = await begin(ctx)
        texts = fields.getlist("text")
        if not texts:
            raise InputError("Parameter 'text' not specified.")
        if len(texts) > MAX_TEXTS:
            raise InputError(f"Too many texts: at most {MAX_TEXTS} per request.")
        if not all(isinstance(t, str) for t in texts):
            raise InputError("Parameter 'text' must be a list of strings.")
        target_value = fields.text("target_lang")
        if not target_value:
            raise InputError("Parameter 'target_lang' not specified.")
        target = from_deepl(target_value, "target_lang")
        source_value = fields.text("source_lang")
        source = from_deepl(source_value, "source_lang") if source_value else "auto"
        _formality(fields.text("formality"))
        tags = fields.text("tag_handling")
        if tags not in (None, "xml", "html"):
            raise InputError(f"Value for 'tag_handling' not supported: {tags!r} (xml or html).")
        terms = None
        glossary_id = fields.text("glossary_id")
        if glossary_id:
            if source == "auto":
                raise InputError("Use of a glossary requires the source_lang parameter to be "
                                 "specified.")
            glossary = await svc.access.keys(svc.access.store.glossary,
                                             ctx.caller.name, glossary_id)  # type: ignore[union-attr]
            if glossary is None:
                raise GlossaryNotFoundError("Glossary not found.")
            if (glossary.source, glossary.target) != (source, target):
                raise InputError(
                    f"The glossary is for {deepl_source_code(glossary.source)} -> "
                    f"{deepl_source_code(glossary.target)}, not this request's languages.")
            terms = glossary.entries
        job = Job(texts, target, source, tags or "text", terms,  # type: ignore[arg-type]
                  tuple(_strings(fields, "ignore_tags")))
        results = await svc.translate(ctx, job)
        return JSONResponse({"translations": [
            {"detected_source_language": deepl_source_code(r.source) if r.source else "",
             "text": r.text, "billed_characters": len(t)}
            for r, t in zip(results, texts, strict=True)]})

    async def languages(ctx: Context) -> Response:
        fields = await begin(ctx)
        kind = (fields.text("type") or "source").lower()
        if kind == "source":
            return JSONResponse([{"language": c, "name": n} for c, n in deepl_sources()])
        if kind == "target":
            return JSONResponse([{"language": c, "name": n, "supports_formality": False}
                                 for c, n in deepl_targets()])
        raise InputError(f"Value for 'type' not supported: {kind!r} (source or target).")

    async def usage(ctx: Context) -> Response:
        await begin(ctx)
        caller = ctx.caller
        assert caller is not None
        used = await svc.access.keys(svc.access.store.used, caller.name)
        return JSONResponse({"character_count": used,
                             "character_limit": caller.chars_per_month or UNLIMITED})

    async def create_glossary(ctx: Context) -> Response:
        fields = await begin(ctx)
        name = fields.text("name")
        if not name:
            raise InputError("Parameter 'name' not specified.")
        source = from_deepl(fields.text("source_lang") or "", "source_lang")
        target = from_deepl(fields.text("target_lang") or "", "target_lang")
        entries = parse_entries(fields.text("entries") or "",
                                (fields.text("entries_format") or "tsv").lower())
        await svc.access.admit(ctx.caller)  # type: ignore[arg-type]  # the key's per_minute
        glossary = await svc.access.keys(svc.access.store.add_glossary, ctx.caller.name,  # type: ignore[union-attr]
                                         name[:200], source, target, entries,
                                         at_most=MAX_GLOSSARIES)
        return JSONResponse(_info(glossary), status_code=201)

    async def list_glossaries(ctx: Context) -> Response:
        await begin(ctx)
        found = await svc.access.keys(svc.access.store.glossaries, ctx.caller.name)  # type: ignore[union-attr]
        return JSONResponse({"glossaries": [_info(g) for g in found]})

    async def owned(ctx: Context) -> Glossary:
        glossary_id = ctx.request.path_params["glossary_id"]
        glossary = await svc.access.keys(svc.access.store.glossary, ctx.caller.name,  # type: ignore[union-attr]
                                         glossary_id)
        if glossary is None:
            raise GlossaryNotFoundError("Glossary not found.")
        return glossary

    async def get_glossary(ctx: Context) -> Response:
        await begin(ctx)
        return JSONResponse(_info(await owned(ctx)))

    async def glossary_entries(ctx: Context) -> Response:
        await begin(ctx)
        entries = (await owned(ctx)).entries
        tsv = "".join(f"{s}\t{t}\n" for s, t in entries.items())
        return Response(tsv, media_type="text/tab-separated-values; charset=utf-8")

    async def delete_glossary(ctx: Context) -> Response:
        await begin(ctx)
        glossary = await owned(ctx)
        await svc.access.keys(svc.access.store.delete_glossary, ctx.caller.name,  # type: ignore[union-attr]
                              glossary.id)
        return Response(status_code=204)

    async def language_pairs(ctx: Context) -> Response:
        await begin(ctx)
        codes = [deepl_source_code(lang.code).lower() for lang in LANGUAGES]
        return JSONResponse({"supported_languages": [
            {"source_lang": s, "target_lang": t} for s in codes for t in codes if s != t]})

    # GET too (older clients; DeepL itself now takes POST only), the key in the header
    router.add_api_route("/translate", route(translate), methods=["GET", "POST"])
    router.add_api_route("/languages", route(languages), methods=["GET", "POST"])
    router.add_api_route("/usage", route(usage), methods=["GET", "POST"])
    router.add_api_route("/glossaries", route(create_glossary), methods=["POST"])
    router.add_api_route("/glossaries", route(list_glossaries), methods=["GET"])
    router.add_api_route("/glossaries/{glossary_id}", route(get_glossary), methods=["GET"])
    router.add_api_route("/glossaries/{glossary_id}", route(delete_glossary),
                         methods=["DELETE"])
    router.add_api_route("/glossaries/{glossary_id}/entries", route(glossary_entries),
                         methods=["GET"])
    router.add_api_route("/glossary-language-pairs", route(language_pairs), methods=["GET"])
    return router
