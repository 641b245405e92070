"""The DeepL dialect, at the host root like DeepL itself (``/v2/…``, ``/v3/…``) and under
``/deepl`` (so a client's ``server_url`` may be ``http://host``, ``http://host/deepl/`` or
``http://host/deepl``: deepl-python joins ``v2/translate`` onto the URL with ``urljoin``, which
drops a last path part without a slash — that lands at the root, which answers too).

``POST /v2/translate`` (``text`` a list, ``target_lang``, ``source_lang``, ``formality``,
``model_type``, ``custom_instructions``, ``glossary_id``, ``tag_handling`` xml|html,
``ignore_tags``, ``split_sentences``; JSON or form; other DeepL fields such as ``context`` are
accepted and have no effect; :mod:`.deepl_options` says what each option does here),
``/v2/languages`` (``type=source|target``), ``GET /v3/languages`` (``resource=…``) and
``GET /v3/languages/resources`` (:mod:`.deepl_languages`), ``/v2/usage``, the glossaries of
:mod:`.deepl_glossaries` and the documents of :mod:`.deepl_documents`. Every other path under the three roots is a JSON 404, or a 405 for a
known path and another method (:mod:`.fallback`); the endpoints DeepL has and this server does
not (Write, style rules, translation memories) say so in their 404.

Each ``translations[]`` item of ``/v2/translate`` also carries ``hymt_flags``, the checks'
findings on that text, and the answer ``X-Hymt-Flags``, their count (:mod:`.service`).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.responses import JSONResponse, Response

from hymt_chat.api.codes import deepl_source_code, deepl_sources, deepl_targets, from_deepl
from hymt_chat.api.deepl_documents import add_document_routes
from hymt_chat.api.deepl_door import DeepLDoor, message, requested_languages
from hymt_chat.api.deepl_glossaries import GLOSSARY_BODY, add_glossary_routes, glossary_terms
from hymt_chat.api.deepl_languages import v3_languages, v3_resources
from hymt_chat.api.deepl_options import parse_options, supports_formality
from hymt_chat.api.fallback import add_fallback
from hymt_chat.api.fields import Fields
from hymt_chat.api.service import FLAGS_FIELD, ApiService, Context, flag_list
from hymt_chat.api.work import MAX_TEXTS, Job
from hymt_chat.engine.chimera import chimera_available
from hymt_chat.engine.families import family_in_force
from hymt_chat.errors import InputError

__all__ = ["PREFIXES", "deepl_router"]

PREFIXES = ("", "/deepl")  # DeepL's own layout, and under /deepl
# DeepL names a language for every text ("42" too) and its clients need one: deepl-node's
# standardizeLanguageCode throws on "" (dist/utils.js). Where nothing is known: English.
UNKNOWN_SOURCE = "en"
UNLIMITED = 1_000_000_000_000  # what DeepL reports as the limit of an account without one
_NOT_OFFERED = {"/v2/write": "DeepL Write (rephrasing)", "/v3/style_rules": "style rules",
                "/v3/translation_memories": "translation memories"}


def _not_offered(path: str) -> str | None:
    """The 404's words for a DeepL endpoint this server does not have."""
    bare = path.removeprefix("/deepl")
    for root, what in _NOT_OFFERED.items():
        if bare == root or bare.startswith(root + "/"):
            return f"This server does not offer {what} ({root}): it translates text."
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


def deepl_router(svc: ApiService) -> APIRouter:
    """Every DeepL route under each of :data:`PREFIXES`, then their fallbacks."""
    router = APIRouter(include_in_schema=False)
    door = DeepLDoor(svc, GLOSSARY_BODY)
    settings = svc.settings

    async def translate(ctx: Context) -> Response:
        fields = await door.begin(ctx)
        texts = fields.getlist("text")
        if not texts:
            raise InputError("Parameter 'text' not specified.")
        if len(texts) > MAX_TEXTS:
            raise InputError(f"Too many texts: at most {MAX_TEXTS} per request.")
        if not all(isinstance(t, str) for t in texts):
            raise InputError("Parameter 'text' must be a list of strings.")
        source, target = requested_languages(fields)
        options = parse_options(
            target=target, family=family_in_force(settings),
            quality_available=chimera_available(settings),
            formality=fields.text("formality"), model_type=fields.text("model_type"),
            split_sentences=fields.text("split_sentences"),
            custom_instructions=fields.getlist("custom_instructions"))
        tags = fields.text("tag_handling")
        if tags not in (None, "xml", "html"):
            raise InputError(f"Value for 'tag_handling' not supported: {tags!r} (xml or html).")
        terms = await glossary_terms(svc, ctx, fields.text("glossary_id"), source, target)
        job = Job(texts, target, source, tags or "text", terms,  # type: ignore[arg-type]
                  tuple(_strings(fields, "ignore_tags")), options=options)
        results = await svc.translate(ctx, job)
        extra: dict[str, Any] = ({"model_type_used": options.model_type_used}
                                 if options.model_type_used else {})
        return JSONResponse({"translations": [
            {"detected_source_language": deepl_source_code(r.source or UNKNOWN_SOURCE),
             "text": r.text, "billed_characters": len(t), **extra,
             FLAGS_FIELD: flag_list(r.flags)}
            for r, t in zip(results, texts, strict=True)]})

    async def languages(ctx: Context) -> Response:
        fields = await door.begin(ctx)
        kind = (fields.text("type") or "source").lower()
        if kind == "source":
            return JSONResponse([{"language": c, "name": n} for c, n in deepl_sources()])
        if kind == "target":
            family = family_in_force(settings)
            return JSONResponse([{"language": c, "name": n,
                                  "supports_formality": supports_formality(
                                      family, from_deepl(c, "target_lang"))}
                                 for c, n in deepl_targets()])
        raise InputError(f"Value for 'type' not supported: {kind!r} (source or target).")

    async def languages_v3(ctx: Context) -> Response:
        fields = await door.begin(ctx)
        return JSONResponse(v3_languages(fields.text("resource"), family_in_force(settings)))

    async def resources_v3(ctx: Context) -> Response:
        await door.begin(ctx)
        return JSONResponse(v3_resources())

    async def usage(ctx: Context) -> Response:
        await door.begin(ctx)
        caller = ctx.caller
        assert caller is not None
        used = await svc.access.keys(svc.access.store.used, caller.name)
        return JSONResponse({"character_count": used,
                             "character_limit": caller.chars_per_month or UNLIMITED})

    jobs = None  # one document worker for every prefix
    for prefix in PREFIXES:
        # GET too (older clients; DeepL itself now takes POST only), the key in the header
        for path, work in (("/v2/translate", translate), ("/v2/languages", languages),
                           ("/v2/usage", usage)):
            router.add_api_route(prefix + path, door.route(work), methods=["GET", "POST"],
                                 include_in_schema=False)
        for path, work in (("/v3/languages", languages_v3),
                           ("/v3/languages/resources", resources_v3)):  # GET only, as DeepL
            router.add_api_route(prefix + path, door.route(work), methods=["GET"],
                                 include_in_schema=False)
        add_glossary_routes(router, door, prefix)
        jobs = add_document_routes(router, door, prefix, jobs)
    add_fallback(router, ["/v2", "/v3", "/deepl"],
                 lambda status, text, headers: message(status, text, headers), _not_offered)
    return router
