"""A sentence the app says, kept as its catalog key and slots until a page words it: the core
(routing, checks, errors) never needs to know the reader's language, and ``str()`` of it is
its English for logs, the API and the CLI."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from hymt_chat.words.source import CHAT, PLURALS

__all__ = ["Code", "Said", "said"]


class Code(str):
    """A slot's value that is a language's code: the page names the language in its own
    language ("Spanish", "espagnol", "スペイン語"); English names it in English."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Said:
    """The chat's message *key* (``chat|<key>``) with its ``{{slots}}`` (a plural message's
    form is chosen by its ``count`` slot)."""

    key: str
    slots: Mapping[str, object] = field(default_factory=dict)

    def __str__(self) -> str:
        from hymt_chat.lang.names import language_name

        if self.key in PLURALS:
            one, other = PLURALS[self.key]
            english = one if self.slots.get("count") == 1 else other
        else:
            english = CHAT[self.key]
        for name, value in self.slots.items():
            shown = (language_name(value) if isinstance(value, Code)
                     else ", ".join(map(str, value)) if isinstance(value, tuple) else value)
            english = english.replace("{{" + name + "}}", str(shown))
        return english


def said(key: str, **slots: object) -> Said:
    """:class:`Said` of *key*, checked against the catalogs' source at once (a typo fails
    where it is made, not on a page)."""
    if key not in CHAT and key not in PLURALS:
        raise KeyError(f"no message {key!r} in hymt_chat/words/source.py")
    return Said(key, slots)
