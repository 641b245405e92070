"""How languages are named to people: English names, picker labels in the reader's language,
the list of all 38.

Pure and tiny, so that every layer (the agent's glossary, transcripts, the wording) can name a
language the same way.
"""

from __future__ import annotations

from hymt_chat.lang.endonyms import names_in
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
    """A language named for an English sentence, with the code that /to takes:
    "Traditional Chinese (zh-Hant)"."""
    if isinstance(lang, str):
        if lang == AUTO:
            return AUTO_LABEL
        found = find_language(lang)
        if found is None:
            return lang
        lang = found
    return f"{lang.english} ({lang.code})"


def language_choices(*, include_auto: bool, reader: str = "en",
                     auto_label: str = AUTO_LABEL) -> dict[str, str]:
    """Picker items, label -> value, in the official table order (*auto_label* first if
    asked): each language named in the *reader*'s language (CLDR), as the page speaks it."""
    items = {auto_label: AUTO} if include_auto else {}
    names = names_in(reader)
    items.update({names[lang.code]: lang.code for lang in LANGUAGES})
    return items


def language_list() -> str:
    """All 38 languages on a few lines, for messages: "English (en) · French (fr) · …"."""
    return " · ".join(f"{lang.english} ({lang.code})" for lang in LANGUAGES)
