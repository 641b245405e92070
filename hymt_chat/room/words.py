"""What a guest page needs to speak its reader's language: its words from the catalogs
(:mod:`hymt_chat.words.catalogs`, group ``guest``), its direction, and every language named
in it."""

from __future__ import annotations

from hymt_chat.lang.endonyms import endonym, names_in
from hymt_chat.lang.languages import LANGUAGES, find_language
from hymt_chat.words.catalogs import catalog

__all__ = ["PageWords", "page_config", "text_direction"]

_RTL = frozenset({"ar", "fa", "he", "ur", "ug"})


def text_direction(code: str) -> str:
    return "rtl" if code in _RTL else "ltr"


class PageWords:
    """The guest pages' words in any of the 38 (English for a code that names none)."""

    async def words(self, code: str | None) -> tuple[str, dict[str, str]]:
        """(the page's language, its words) for a guest whose language is *code*."""
        found = find_language(code) if isinstance(code, str) else None
        lang = found.code if found is not None else "en"
        return lang, catalog(lang).group("guest")


def page_config(code: str, words: dict[str, str]) -> dict[str, object]:
    """What a page's script needs to speak *code*: its words, its direction, every language
    named in it (the messages' "→ 英語"), and the picker's labels (endonyms)."""
    return {"lang": code, "dir": text_direction(code), "words": words,
            "names": names_in(code),
            "languages": [{"code": lang.code, "label": endonym(lang.code)}
                          for lang in LANGUAGES]}
