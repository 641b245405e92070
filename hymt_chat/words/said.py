"""A sentence the app says, kept as its catalog key and slots until a page words it: the core
(routing, checks, errors) never needs to know the reader's language. A :class:`Said` *is* its
English (a ``str``), so logs, the API, the CLI, stored records and every ``in``/``==`` read it as
they read any sentence; a page reads its key and says it in its own words."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Self

from hymt_chat.words.source import CHAT, PLURALS

__all__ = ["LISTS_LANGUAGES", "Code", "Said", "said"]

LISTS_LANGUAGES = frozenset({"unknown_language_named", "which_language"})
"""Sentences followed by the list of the 38 (named in the reader's language on a page)."""


class Code(str):
    """A slot's value that is a language's code: the page names the language in its own
    language ("Spanish", "espagnol", "スペイン語"); English names it in English."""

    __slots__ = ()


class Said(str):
    """The chat's message *key* (``chat|<key>``) with its ``{{slots}}`` (a plural message's
    form is chosen by its ``count`` slot); its value is the English sentence."""

    key: str
    slots: Mapping[str, object]

    def __new__(cls, key: str, slots: Mapping[str, object] | None = None) -> Self:
        filled = dict(slots or {})
        sentence = super().__new__(cls, _english(key, filled))
        sentence.key, sentence.slots = key, filled
        return sentence

    def __getnewargs__(self) -> tuple[str, dict[str, object]]:  # type: ignore[override]
        """What copy, deepcopy (``dataclasses.asdict``) and pickle make it again from."""
        return self.key, dict(self.slots)

    def __repr__(self) -> str:
        return f"Said({self.key!r}, {dict(self.slots)!r})"


def _english(key: str, slots: Mapping[str, object]) -> str:
    from hymt_chat.lang.names import language_list, language_name

    if key in PLURALS:
        one, other = PLURALS[key]
        english = one if slots.get("count") == 1 else other
    else:
        english = CHAT[key]
    for name, value in slots.items():
        shown = (language_name(value) if isinstance(value, Code)
                 else ", ".join(map(str, value)) if isinstance(value, tuple) else value)
        english = english.replace("{{" + name + "}}", str(shown))
    if key in LISTS_LANGUAGES:
        english += "\n\n" + language_list()
    return english


def said(key: str, **slots: object) -> Said:
    """:class:`Said` of *key*, checked against the catalogs' source at once (a typo fails
    where it is made, not on a page)."""
    if key not in CHAT and key not in PLURALS:
        raise KeyError(f"no message {key!r} in hymt_chat/words/source.py")
    return Said(key, slots)
