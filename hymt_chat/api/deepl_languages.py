"""DeepL's v3 languages: ``GET /v3/languages?resource=…`` and ``GET /v3/languages/resources``,
shaped as DeepL documents them (DeepLcom/api-docs: api-reference/openapi.yaml, ``/v3/languages``
and ``/v3/languages/resources``; api-reference/languages/retrieve-supported-languages-by-resource
.mdx). Pure data, no IO.

Each language is ``{"lang", "name", "usable_as_source", "usable_as_target", "status",
"features"}``, its code in BCP 47 casing (``de``, ``en-US``, ``zh-Hant``), a feature present as
a key with ``{"status": "stable"}``. DeepL marks these endpoints beta and deepl-python 1.30 does
not call them (it reads ``/v2/languages``); they are answered for the tools that do. The
resources this server has no part of (Write, voice, style rules, translation memories) are
known values with no language: an empty list, the answer of a resource nothing supports.
"""

from __future__ import annotations

from typing import Any

from hymt_chat.api.codes import deepl_source_code, from_deepl
from hymt_chat.api.deepl_options import supports_formality
from hymt_chat.engine.families import Family
from hymt_chat.errors import InputError
from hymt_chat.lang.languages import LANGUAGES

__all__ = ["RESOURCES", "bcp47", "v3_languages", "v3_resources"]

STABLE = {"status": "stable"}
# Each resource this server serves, its features and which side of a pair must have each
# (DeepL's /v3/languages/resources: needs_source_support / needs_target_support).
_FEATURES: dict[str, tuple[tuple[str, bool, bool], ...]] = {
    "translate_text": (("formality", False, True), ("tag_handling", True, True),
                       ("glossary", True, True), ("auto_detection", True, False)),
    "translate_document": (("formality", False, True), ("glossary", True, True),
                           ("auto_detection", True, False)),
    "glossary": (),
}
RESOURCES = (*_FEATURES, "voice", "write", "style_rules", "translation_memory")
_TARGETS = {"en": ("EN-GB", "EN-US"), "pt": ("PT-BR", "PT-PT"), "zh": ("ZH-HANS",),
            "zh-Hant": ("ZH-HANT",)}
_NAMES = {"EN-GB": "English (British)", "EN-US": "English (American)",
          "PT-BR": "Portuguese (Brazilian)", "PT-PT": "Portuguese (European)",
          "ZH-HANS": "Chinese (simplified)", "ZH-HANT": "Chinese (traditional)"}


def bcp47(code: str) -> str:
    """DeepL's v2 code -> BCP 47 casing, as v3 writes it: ``EN-US`` -> ``en-US``,
    ``ZH-HANT`` -> ``zh-Hant``."""
    base, *rest = code.split("-")
    return "-".join([base.lower(), *(p.title() if len(p) == 4 else p.upper() for p in rest)])


def _entries() -> dict[str, tuple[str, bool, bool]]:
    """v3 code -> (name, usable as source, usable as target), for text and documents: a
    source code and a target code that are the same (``de``, ``zh-Hant``) are one language."""
    out: dict[str, tuple[str, bool, bool]] = {}
    for lang in LANGUAGES:
        source = deepl_source_code(lang.code)
        for code in (source, *_TARGETS.get(lang.code, (source,))):
            name, as_source, as_target = out.get(bcp47(code), (_NAMES.get(code, lang.english),
                                                               False, False))
            out[bcp47(code)] = (name, as_source or code == source,
                                as_target or code in _TARGETS.get(lang.code, (source,)))
    return out


def v3_languages(resource: str | None, family: Family) -> list[dict[str, Any]]:
    """The answer of ``GET /v3/languages?resource=…``; InputError for a missing or unknown
    resource (DeepL: 400)."""
    if not resource:
        raise InputError("Parameter 'resource' not specified (one of "
                         f"{', '.join(RESOURCES)}).")
    if resource not in RESOURCES:
        raise InputError(f"Value for 'resource' not supported: {resource[:40]!r} (one of "
                         f"{', '.join(RESOURCES)}).")
    if resource not in _FEATURES:
        return []
    if resource == "glossary":  # a glossary's pair is named by source codes, either way round
        return [_language(bcp47(deepl_source_code(lang.code)), lang.english, True, True, {})
                for lang in LANGUAGES]
    out = []
    for code, (name, as_source, as_target) in _entries().items():
        features = {}
        for feature, on_source, on_target in _FEATURES[resource]:
            if feature == "formality":
                offered = as_target and supports_formality(family, from_deepl(code, "lang"))
            else:
                offered = (on_source and as_source) or (on_target and as_target)
            if offered:
                features[feature] = dict(STABLE)
        out.append(_language(code, name, as_source, as_target, features))
    return out


def _language(code: str, name: str, as_source: bool, as_target: bool,
              features: dict[str, Any]) -> dict[str, Any]:
    return {"lang": code, "name": name, "usable_as_source": as_source,
            "usable_as_target": as_target, "status": "stable", "features": features}


def v3_resources() -> list[dict[str, Any]]:
    """The answer of ``GET /v3/languages/resources``: the resources served here, their
    features and the side of a pair each needs."""
    return [{"name": name, "features": [
        {"name": feature, **({"needs_source_support": True} if source else {}),
         **({"needs_target_support": True} if target else {})}
        for feature, source, target in features]} for name, features in _FEATURES.items()]
