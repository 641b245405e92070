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

from hymt_chat.words.said import Said

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
    kept: list[Said] = field(default_factory=list)  # "formulas, numbers and dates", …
    retarget: Callable[[str], None] | None = None  # a format that names its target language
    removed: list[Said] = field(default_factory=list)  # active content taken out ("JavaScript")
    # what a second read of the same bytes can start from instead of the slow part (the text
    # a picture's OCR found): handed back to the reader by read_source(..., found=…)
    found: object = None
    # other kinds the document can be written as: kind -> (translations -> bytes)
    converters: dict[str, Callable[[Sequence[str]], bytes]] = field(default_factory=dict)

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

    def write_as(self, kind: str, translations: Sequence[str]) -> bytes:
        """The translated document as a file of another *kind* (one of ``converters``)."""
        if len(translations) != len(self.units):
            raise ValueError(f"{len(translations)} translations for {len(self.units)} units")
        return self.converters[kind](translations)
