"""What every document format gives the translator: units of tagged text, and bytes back.

A format module turns a file into a :class:`Source`: ``units`` (each a sentence or paragraph,
inline formatting as ``<b id="N">``/``<x id="N"/>`` tags, :mod:`hymt_chat.text.formats.inline`), and
``write(translations)``, which puts one translation per unit back into the parsed file and
returns the file's bytes, of the same kind. ``write`` may be called again (a ``.partial`` file
first, the finished one later): each call starts from the units as read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["Source", "Unit", "Writable"]


class Writable(Protocol):
    tagged: str

    def write(self, translated: str) -> None: ...


@dataclass(slots=True)
class Unit:
    """One thing to translate: its tagged text and where its translation goes."""

    tagged: str
    put: Callable[[str], None]

    @classmethod
    def of(cls, item: Writable) -> Unit:
        return cls(item.tagged, item.write)


@dataclass(slots=True)
class Source:
    """A parsed document: its units, how to serialize it, and what it keeps untranslated."""

    units: list[Unit]
    serialize: Callable[[], bytes]
    kept: list[str] = field(default_factory=list)  # "formulas, numbers and dates", …
    retarget: Callable[[str], None] | None = None  # a format that names its target language

    def write(self, translations: Sequence[str], target: str | None = None) -> bytes:
        """The document with unit *i* replaced by ``translations[i]`` (as many as units); with
        *target* (a BCP 47 code), a format that names its target language says that one."""
        if len(translations) != len(self.units):
            raise ValueError(f"{len(translations)} translations for {len(self.units)} units")
        for unit, text in zip(self.units, translations, strict=True):
            unit.put(text)
        if target is not None and self.retarget is not None:
            self.retarget(target)
        return self.serialize()
