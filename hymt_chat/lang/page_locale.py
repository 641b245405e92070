"""Which of the 38 languages a page speaks to its reader, and the name Chainlit's own UI files
give it.

A page speaks the language its reader chose, else the first of the browser's languages that
we translate, else English. Chainlit ships its UI strings for some of our languages (one file
per BCP 47 tag: ``fr-FR.json``, ``ja.json``); :data:`CHAINLIT_TAGS` names each one's file, and a
language without a file gets the model's words for them instead (``hymt_chat.room.chat_words``).
"""

from __future__ import annotations

from hymt_chat.lang.languages import find_language

__all__ = ["CHAINLIT_TAGS", "ENGLISH", "browser_language", "chainlit_tag", "page_language"]

ENGLISH = "en"
# Our table's code -> the tag of the translation file Chainlit 2.12 ships for it
# (chainlit/translations/*.json; da, el, kn and ml are not among our 38).
CHAINLIT_TAGS: dict[str, str] = {
    "ar": "ar-SA", "bn": "bn", "de": "de-DE", "en": "en-US", "es": "es", "fr": "fr-FR",
    "gu": "gu", "he": "he-IL", "hi": "hi", "it": "it", "ja": "ja", "ko": "ko", "mr": "mr",
    "nl": "nl", "pt": "pt-PT", "ta": "ta", "te": "te", "zh": "zh-CN", "zh-Hant": "zh-TW",
}


def _known(tag: str | None) -> str | None:
    found = find_language(tag.strip()) if isinstance(tag, str) and tag.strip() else None
    return found.code if found else None


def browser_language(accept_language: str | None) -> str | None:
    """The first of the browser's languages that we translate ("es-ES,es;q=0.9" -> "es")."""
    tags: list[tuple[float, int, str]] = []
    for item in (accept_language or "").split(","):
        tag, _, q = item.strip().partition(";q=")
        try:
            weight = float(q) if q else 1.0
        except ValueError:
            weight = 0.0
        if tag and tag != "*" and weight > 0:
            tags.append((-weight, len(tags), tag))
    for _, _, tag in sorted(tags):
        code = _known(tag)
        if code is not None:
            return code
    return None


def page_language(choice: str | None = None, browser: str | None = None,
                  accept_language: str | None = None) -> str:
    """The page's language: the reader's *choice*, else the browser's own language (*browser*,
    the page script's ``navigator.language``), else its Accept-Language, else English. A value
    that names none of the 38 is passed over."""
    return (_known(choice) or _known(browser) or browser_language(accept_language)
            or ENGLISH)


def chainlit_tag(code: str) -> str | None:
    """The tag of Chainlit's translation file for *code*, or None where Chainlit ships none."""
    return CHAINLIT_TAGS.get(code)
