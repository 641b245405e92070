"""DeepL's glossaries, v2 (one language pair) and v3 (multilingual: several "dictionaries").

v2: ``POST/GET /v2/glossaries``, ``GET/DELETE /v2/glossaries/{id}``, ``GET …/{id}/entries``
(TSV), ``GET /v2/glossary-language-pairs``. v3 (deepl-python's ``DeepLClient``):
``POST/GET /v3/glossaries``, ``GET/PATCH/DELETE /v3/glossaries/{id}`` (PATCH renames and/or
merges dictionaries: a pair's entries updated and added to, a new pair added),
``PUT /v3/glossaries/{id}/dictionaries`` (one pair replaced or created),
``GET /v3/glossaries/{id}/entries?source_lang=&target_lang=`` and
``DELETE /v3/glossaries/{id}/dictionaries?source_lang=&target_lang=``.

Both versions see every glossary of the key: v2 shows a multilingual one by its first pair.
Ids are UUIDs, as DeepL's: a malformed id is a 400 and an unknown one a 404, the difference
deepl-python's suite checks (``INVALID_GLOSSARY_ID`` / ``NONEXISTENT_GLOSSARY_ID``). A
dictionary holds up to :data:`MAX_GLOSSARY_ENTRIES` entries (DeepL's own suite sends 10,000)
in a body of up to 10 MiB, DeepL's glossary size limit.
"""

from __future__ import annotations

import csv
import io
import re
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter
from starlette.responses import JSONResponse, Response

from hymt_chat.api.codes import deepl_source_code, from_deepl
from hymt_chat.api.deepl_door import DeepLDoor, GlossaryNotFoundError
from hymt_chat.api.fields import Fields
from hymt_chat.api.keys import Dictionary, Glossary, KeyStore
from hymt_chat.api.service import ApiService, Context
from hymt_chat.errors import InputError
from hymt_chat.lang.languages import LANGUAGES
from hymt_chat.modes.agent.glossary import MAX_TERM_CHARS

__all__ = ["GLOSSARY_BODY", "MAX_GLOSSARY_ENTRIES", "add_glossary_routes", "glossary_terms",
           "parse_entries", "resolve"]

MAX_GLOSSARY_ENTRIES = 100_000  # per dictionary: only terms found in a text are searched
MAX_DICTIONARIES = 38 * 37  # every pair of the 38 languages
MAX_GLOSSARIES = 100  # per key: each is kept (entries and all) in the key store
GLOSSARY_BODY = 10 * 1024 * 1024
_FORM_FIELD = re.compile(r"^dictionaries\[(\d{1,4})\]\.(\w+)$")
_ID = re.compile(r"^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})$")


def _time(at: float) -> str:
    created = datetime.fromtimestamp(at, UTC)
    return created.strftime("%Y-%m-%dT%H:%M:%S.") + f"{created.microsecond // 1000:03d}Z"


def _code(code: str) -> str:
    return deepl_source_code(code).lower()


def _v2_info(glossary: Glossary) -> dict[str, Any]:
    return {"glossary_id": glossary.id, "name": glossary.name, "ready": True,
            "source_lang": _code(glossary.source), "target_lang": _code(glossary.target),
            "creation_time": _time(glossary.created), "entry_count": len(glossary.entries)}


def _dictionary_info(d: Dictionary) -> dict[str, Any]:
    return {"source_lang": _code(d.source), "target_lang": _code(d.target),
            "entry_count": len(d.entries)}


def _v3_info(glossary: Glossary) -> dict[str, Any]:
    return {"glossary_id": glossary.id, "name": glossary.name,
            "dictionaries": [_dictionary_info(d) for d in glossary.dictionaries],
            "creation_time": _time(glossary.created)}


def _tsv(entries: dict[str, str] | Any) -> str:
    """Entries as DeepL answers them: a line each, no newline after the last (deepl-python's
    ``util.convert_dict_to_tsv``, which its test_glossary_dictionary_replace compares with)."""
    return "\n".join(f"{s}\t{t}" for s, t in entries.items())


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
        raise InputError(f"A glossary dictionary has at most {MAX_GLOSSARY_ENTRIES} entries.")
    return entries


def _pair(source: object, target: object) -> tuple[str, str]:
    return (from_deepl(source if isinstance(source, str) else "", "source_lang"),
            from_deepl(target if isinstance(target, str) else "", "target_lang"))


def _dictionary(item: object) -> Dictionary:
    """One ``{"source_lang", "target_lang", "entries", "entries_format"}`` of a v3 body."""
    if not isinstance(item, dict):
        raise InputError("Each of 'dictionaries' must be an object with source_lang, "
                         "target_lang and entries.")
    source, target = _pair(item.get("source_lang"), item.get("target_lang"))
    entries, fmt = item.get("entries"), item.get("entries_format", "tsv")
    if not isinstance(entries, str) or not isinstance(fmt, str):
        raise InputError("A dictionary's 'entries' and 'entries_format' must be strings.")
    return Dictionary(source, target, parse_entries(entries, fmt.lower()))


def _form_dictionaries(fields: Fields) -> list[dict[str, object]]:
    """deepl-node's form body: ``dictionaries[0].source_lang=…`` (its utils.js
    ``appendDictionaryEntries``), one object per index, in index order."""
    items: dict[int, dict[str, object]] = {}
    for name in fields.names():
        match = _FORM_FIELD.match(name)
        if match:
            items.setdefault(int(match.group(1)), {})[match.group(2)] = fields.get(name)
    return [items[i] for i in sorted(items)]


def _dictionaries(fields: Fields) -> list[Dictionary]:
    sent = fields.getlist("dictionaries") or _form_dictionaries(fields)
    found = [_dictionary(item) for item in sent]
    pairs = [(d.source, d.target) for d in found]
    if len(set(pairs)) != len(pairs):
        raise InputError("Each language pair may appear once in 'dictionaries'.")
    if len(found) > MAX_DICTIONARIES:
        raise InputError(f"A glossary has at most {MAX_DICTIONARIES} dictionaries.")
    return found


def resolve(glossary: Glossary, source: str, target: str) -> dict[str, str]:
    """The terms *glossary* has for this request's pair, or InputError saying which it has."""
    found = glossary.pair(source, target)
    if found is None:
        have = ", ".join(f"{deepl_source_code(d.source)} -> {deepl_source_code(d.target)}"
                         for d in glossary.dictionaries)
        raise InputError(f"The glossary has no dictionary for {deepl_source_code(source)} -> "
                         f"{deepl_source_code(target)} (it has {have}).")
    return dict(found.entries)


async def glossary_terms(svc: ApiService, ctx: Context, glossary_id: str | None, source: str,
                         target: str) -> dict[str, str] | None:
    """The terms of the caller's glossary *glossary_id* for this pair (None: no glossary)."""
    if not glossary_id:
        return None
    if source == "auto":
        raise InputError("Use of a glossary requires the source_lang parameter to be specified.")
    assert ctx.caller is not None
    glossary = await svc.access.keys(svc.access.store.glossary, ctx.caller.name, glossary_id)
    if glossary is None:
        raise GlossaryNotFoundError("Glossary not found.")
    return resolve(glossary, source, target)


def add_glossary_routes(router: APIRouter, door: DeepLDoor, prefix: str) -> None:
    """The v2 and v3 glossary routes under *prefix* ('' or '/deepl')."""
    svc, big = door.svc, door.glossary_body

    def store() -> KeyStore:
        return svc.access.store

    def owner(ctx: Context) -> str:
        assert ctx.caller is not None
        return ctx.caller.name

    async def owned(ctx: Context) -> Glossary:
        glossary_id = ctx.request.path_params["glossary_id"]
        if not _ID.match(glossary_id):
            raise InputError("Invalid glossary ID.")
        glossary = await svc.access.keys(store().glossary, owner(ctx), glossary_id)
        if glossary is None:
            raise GlossaryNotFoundError("Glossary not found.")
        return glossary

    async def create(ctx: Context, dictionaries: list[Dictionary], name: str | None) -> Glossary:
        if not name:
            raise InputError("Parameter 'name' not specified.")
        if not dictionaries:
            raise InputError("Parameter 'dictionaries' not specified.")
        assert ctx.caller is not None
        await svc.access.admit(ctx.caller)  # the key's per_minute
        return await svc.access.keys(store().add_dictionaries, owner(ctx), name[:200],
                                     dictionaries, at_most=MAX_GLOSSARIES)

    # --- v2 ----------------------------------------------------------------------------------

    async def v2_create(ctx: Context) -> Response:
        fields = await door.begin(ctx, big)
        source, target = _pair(fields.text("source_lang"), fields.text("target_lang"))
        entries = parse_entries(fields.text("entries") or "",
                                (fields.text("entries_format") or "tsv").lower())
        made = await create(ctx, [Dictionary(source, target, entries)], fields.text("name"))
        return JSONResponse(_v2_info(made), status_code=201)

    async def v2_list(ctx: Context) -> Response:
        await door.begin(ctx)
        found = await svc.access.keys(store().glossaries, owner(ctx))
        return JSONResponse({"glossaries": [_v2_info(g) for g in found]})

    async def v2_get(ctx: Context) -> Response:
        await door.begin(ctx)
        return JSONResponse(_v2_info(await owned(ctx)))

    async def v2_entries(ctx: Context) -> Response:
        await door.begin(ctx)
        return Response(_tsv((await owned(ctx)).entries),
                        media_type="text/tab-separated-values; charset=utf-8")

    async def delete(ctx: Context) -> Response:
        await door.begin(ctx)
        glossary = await owned(ctx)
        await svc.access.keys(store().delete_glossary, owner(ctx), glossary.id)
        return Response(status_code=204)

    async def language_pairs(ctx: Context) -> Response:
        await door.begin(ctx)
        codes = [_code(lang.code) for lang in LANGUAGES]
        return JSONResponse({"supported_languages": [
            {"source_lang": s, "target_lang": t} for s in codes for t in codes if s != t]})

    # --- v3 ----------------------------------------------------------------------------------

    async def v3_create(ctx: Context) -> Response:
        fields = await door.begin(ctx, big)
        made = await create(ctx, _dictionaries(fields), fields.text("name"))
        return JSONResponse(_v3_info(made), status_code=201)

    async def v3_list(ctx: Context) -> Response:
        await door.begin(ctx)
        found = await svc.access.keys(store().glossaries, owner(ctx))
        return JSONResponse({"glossaries": [_v3_info(g) for g in found]})

    async def v3_get(ctx: Context) -> Response:
        await door.begin(ctx)
        return JSONResponse(_v3_info(await owned(ctx)))

    async def save(ctx: Context, glossary: Glossary, name: str | None,
                   dictionaries: list[Dictionary] | None) -> Glossary:
        saved = await svc.access.keys(store().update_glossary, owner(ctx), glossary.id,
                                      name=name, dictionaries=dictionaries)
        if saved is None:  # deleted meanwhile
            raise GlossaryNotFoundError("Glossary not found.")
        return saved

    async def v3_patch(ctx: Context) -> Response:
        fields = await door.begin(ctx, big)
        glossary = await owned(ctx)
        name = fields.text("name")
        changes = _dictionaries(fields)
        if not name and not changes:
            raise InputError("Send a new 'name' and/or 'dictionaries' to update.")
        merged = list(glossary.dictionaries)
        for change in changes:
            at = next((i for i, d in enumerate(merged)
                       if (d.source, d.target) == (change.source, change.target)), None)
            if at is None:
                merged.append(change)
            else:
                entries = {**merged[at].entries, **change.entries}
                if len(entries) > MAX_GLOSSARY_ENTRIES:
                    raise InputError(f"A glossary dictionary has at most "
                                     f"{MAX_GLOSSARY_ENTRIES} entries.")
                merged[at] = Dictionary(change.source, change.target, entries)
        saved = await save(ctx, glossary, name, merged if changes else None)
        return JSONResponse(_v3_info(saved))

    async def v3_replace(ctx: Context) -> Response:
        fields = await door.begin(ctx, big)
        glossary = await owned(ctx)
        new = _dictionary({"source_lang": fields.text("source_lang"),
                           "target_lang": fields.text("target_lang"),
                           "entries": fields.text("entries") or "",
                           "entries_format": fields.text("entries_format") or "tsv"})
        kept = [d for d in glossary.dictionaries if (d.source, d.target) != (new.source,
                                                                            new.target)]
        await save(ctx, glossary, None, [*kept, new])
        return JSONResponse(_dictionary_info(new))

    def asked_pair(fields: Fields) -> tuple[str, str]:
        source, target = fields.text("source_lang"), fields.text("target_lang")
        if not source or not target:
            raise InputError("Parameters 'source_lang' and 'target_lang' are required.")
        return _pair(source, target)

    async def v3_entries(ctx: Context) -> Response:
        fields = await door.begin(ctx)
        glossary = await owned(ctx)
        source, target = asked_pair(fields)
        found = glossary.pair(source, target)
        if found is None:
            raise GlossaryNotFoundError("The glossary has no dictionary for this language pair.")
        return JSONResponse({"dictionaries": [{
            "source_lang": _code(source), "target_lang": _code(target),
            "entries": _tsv(found.entries), "entries_format": "tsv"}]})

    async def v3_delete_dictionary(ctx: Context) -> Response:
        fields = await door.begin(ctx)
        glossary = await owned(ctx)
        source, target = asked_pair(fields)
        kept = [d for d in glossary.dictionaries if (d.source, d.target) != (source, target)]
        if len(kept) == len(glossary.dictionaries):
            raise GlossaryNotFoundError("The glossary has no dictionary for this language pair.")
        if not kept:
            raise InputError("A glossary keeps at least one dictionary: delete the glossary "
                             "instead.")
        await save(ctx, glossary, None, kept)
        return Response(status_code=204)

    for path, work, methods in (
        ("/v2/glossaries", v2_create, ["POST"]),
        ("/v2/glossaries", v2_list, ["GET"]),
        ("/v2/glossaries/{glossary_id}", v2_get, ["GET"]),
        ("/v2/glossaries/{glossary_id}", delete, ["DELETE"]),
        ("/v2/glossaries/{glossary_id}/entries", v2_entries, ["GET"]),
        ("/v2/glossary-language-pairs", language_pairs, ["GET"]),
        ("/v3/glossaries", v3_create, ["POST"]),
        ("/v3/glossaries", v3_list, ["GET"]),
        ("/v3/glossaries/{glossary_id}", v3_get, ["GET"]),
        ("/v3/glossaries/{glossary_id}", v3_patch, ["PATCH"]),
        ("/v3/glossaries/{glossary_id}", delete, ["DELETE"]),
        ("/v3/glossaries/{glossary_id}/dictionaries", v3_replace, ["PUT"]),
        ("/v3/glossaries/{glossary_id}/dictionaries", v3_delete_dictionary, ["DELETE"]),
        ("/v3/glossaries/{glossary_id}/entries", v3_entries, ["GET"]),
    ):
        router.add_api_route(prefix + path, door.route(work), methods=methods,
                             include_in_schema=False)
