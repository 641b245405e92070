"""How languages are named to people: English names, picker labels, the list of all 38.

Pure and tiny, so that every layer (the agent's glossary, transcripts, the wording) can name a
language the same way.
"""

from __future__ import annotations

from hymt_chat.lang.languages import LANGUAGES, Language, find_language

__all__ = ["AUTO", "AUTO_LABEL", "language_choices", "language_label", "language_list",
           "language_name"]

AUTO = "auto"
AUTO_LABEL = "Auto-detect"




def language_name(code: str | None) -> str:
    """English name of a table code; "Auto-detect" for auto, "unknown language" for None."""
    if code is None:
        return "unknown language"
    if code == AUTO:
        return AUTO_LABEL
    lang = find_language(code)
    return lang.english if lang else code


def language_label(lang: Language | str) -> str:
    """Readable picker label: "Traditional Chinese (zh-Hant) · 繁体中文"."""
    if isinstance(lang, str):
        if lang == AUTO:
            return AUTO_LABEL
        found = find_language(lang)
        if found is None:
            return lang
        lang = found
    return f"{lang.english} ({lang.code}) · {lang.chinese}"


def language_choices(*, include_auto: bool) -> dict[str, str]:
    """Picker items, label -> value, in the official table order (Auto-detect first if asked)."""
    items = {AUTO_LABEL: AUTO} if include_auto else {}
    items.update({language_label(lang): lang.code for lang in LANGUAGES})
    return items


def language_list() -> str:
    """All 38 languages on a few lines, for messages: "English (en) · French (fr) · …"."""
    return " · ".join(f"{lang.english} ({lang.code})" for lang in LANGUAGES)
