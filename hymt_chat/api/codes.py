"""Each dialect's language codes <-> ours (the 38 of :mod:`hymt_chat.lang.languages`).

LibreTranslate names Chinese ``zh-Hans`` / ``zh-Hant`` (older servers and clients: ``zh`` /
``zt``); DeepL writes codes in capitals, splits English and Portuguese by region for targets
(``EN-US``, ``EN-GB``, ``PT-BR``, ``PT-PT``) and Chinese by script (``ZH-HANS``, ``ZH-HANT``).
Every other language keeps our code (DeepL: in capitals). An unknown code is refused with
the dialect's own list, never guessed.
"""

from __future__ import annotations

from hymt_chat.errors import UnknownLanguageError
from hymt_chat.lang.languages import LANGUAGES

__all__ = [
    "deepl_source_code",
    "deepl_sources",
    "deepl_targets",
    "from_deepl",
    "from_libre",
    "libre_code",
    "libre_codes",
]

# --- LibreTranslate ------------------------------------------------------------------------

_TO_LIBRE = {"zh": "zh-Hans", "zh-Hant": "zh-Hant"}
# What clients send besides the codes we list: LibreTranslate's older names and BCP 47 tags.
_LIBRE_ALIASES = {"zh": "zh", "zt": "zh-Hant", "zh-cn": "zh", "zh-sg": "zh", "zh-tw": "zh-Hant",
                  "zh-hk": "zh-Hant", "pb": "pt", "pt-br": "pt", "pt-pt": "pt", "iw": "he",
                  "fil": "tl", "en-us": "en", "en-gb": "en"}


def libre_code(code: str) -> str:
    """Our code -> LibreTranslate's."""
    return _TO_LIBRE.get(code, code)


def libre_codes() -> list[str]:
    return [libre_code(lang.code) for lang in LANGUAGES]


_FROM_LIBRE = {libre_code(lang.code).casefold(): lang.code for lang in LANGUAGES}
_FROM_LIBRE.update(_LIBRE_ALIASES)


def from_libre(value: object, field: str) -> str:
    """LibreTranslate's code (any case) -> ours; UnknownLanguageError naming the valid ones."""
    code = _FROM_LIBRE.get(value.strip().casefold()) if isinstance(value, str) else None
    if code is None:
        shown = repr(value[:40]) if isinstance(value, str) else "that value"
        raise UnknownLanguageError(
            f"{shown} is not supported as {field}; the codes are {', '.join(libre_codes())}.")
    return code


# --- DeepL ---------------------------------------------------------------------------------

_DEEPL_SOURCE = {"zh": "ZH", "zh-Hant": "ZH-HANT"}
_DEEPL_TARGETS = {"en": ("EN-GB", "EN-US"), "pt": ("PT-BR", "PT-PT"), "zh": ("ZH-HANS",),
                  "zh-Hant": ("ZH-HANT",)}


def deepl_source_code(code: str) -> str:
    """Our code -> the DeepL source code we report (``detected_source_language``)."""
    return _DEEPL_SOURCE.get(code, code.upper())


def deepl_sources() -> list[tuple[str, str]]:
    """(DeepL source code, English name) for each of the 38."""
    return [(deepl_source_code(lang.code), lang.english) for lang in LANGUAGES]


def deepl_targets() -> list[tuple[str, str]]:
    """(DeepL target code, name) — regional variants listed apart, as DeepL lists them."""
    out = []
    for lang in LANGUAGES:
        codes = _DEEPL_TARGETS.get(lang.code, (lang.code.upper(),))
        for code in codes:
            region = code.partition("-")[2]
            named = f"{lang.english} ({region})" if len(codes) > 1 else lang.english
            out.append((code, named))
    return out


_FROM_DEEPL: dict[str, str] = {}
for _lang in LANGUAGES:
    _FROM_DEEPL[_lang.code.upper()] = _lang.code
    for _code in _DEEPL_TARGETS.get(_lang.code, ()):
        _FROM_DEEPL[_code] = _lang.code
_FROM_DEEPL["ZH"] = "zh"


def from_deepl(value: object, field: str) -> str:
    """DeepL's code (any case: ``en-us``, ``ZH-HANT``) -> ours; UnknownLanguageError else."""
    code = _FROM_DEEPL.get(value.strip().upper()) if isinstance(value, str) else None
    if code is None:
        shown = repr(value[:40]) if isinstance(value, str) else "that value"
        valid = sorted({c for c, _ in deepl_sources()} | {c for c, _ in deepl_targets()})
        raise UnknownLanguageError(
            f"Value for '{field}' not supported: {shown}; the codes are {', '.join(valid)}.")
    return code
