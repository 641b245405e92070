"""Languages named the way their own speakers and a page's reader name them, from CLDR (Babel).

A guest's picker lists "Español", "日本語", "ไทย" — each language in itself, so that a person
finds their own whatever the page is in ("Spanish (es) · 西班牙语" is no help to a Spanish
speaker) — and a page names the other side's language in the reader's language
("→ 英語" on a Japanese page).
"""

from __future__ import annotations

import functools

from babel import Locale, UnknownLocaleError

from hymt_chat.lang.languages import LANGUAGES, find_language

__all__ = ["endonym", "name_in", "names_in"]

# Our table's codes that CLDR spells otherwise (zh is the Simplified script, tl is fil).
_CLDR = {"zh": "zh_Hans", "zh-Hant": "zh_Hant", "tl": "fil"}


def _locale(code: str) -> Locale | None:
    found = find_language(code)
    if found is None:
        return None
    try:
        return Locale.parse(_CLDR.get(found.code, found.code))
    except (UnknownLocaleError, ValueError):
        return None


def _capital(name: str) -> str:
    """A name that starts a picker's line starts with a capital (CLDR's "español" -> "Español")."""
    return name[:1].upper() + name[1:]


@functools.cache
def name_in(code: str, reader: str) -> str:
    """Language *code* named in language *reader* (both table codes); its English name where
    CLDR has none."""
    lang, page = _locale(code), _locale(reader)
    found = find_language(code)
    english = found.english if found else code
    if lang is None or page is None:
        return english
    return _capital(lang.get_display_name(page) or english)


def endonym(code: str) -> str:
    """Language *code* in itself: "Español", "日本語", "中文 (简体)"."""
    return name_in(code, code)


@functools.cache
def names_in(reader: str) -> dict[str, str]:
    """Every one of the 38 named in *reader*'s language, by code."""
    return {lang.code: name_in(lang.code, reader) for lang in LANGUAGES}
