"""What a catalog must keep of its English: every message, each placeholder (``{{slot}}``),
each command (``/to``), each number (a language may add one), and as many plural forms as its language has. Used by
the catalog script before a draft is kept and by the test that keeps the catalogs complete."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from babel.messages.catalog import Catalog

__all__ = ["kept", "problems"]

_SLOT = re.compile(r"\{\{\s*\w+\s*\}\}")
_COMMAND = re.compile(r"(?<![\w/.])/[a-z]+\b")
_NUMBER = re.compile(r"\d+")


def _numbers(text: str) -> Counter[str]:
    return Counter(str(int("".join(str(unicodedata.digit(c)) for c in run)))
                   for run in _NUMBER.findall(text))


def kept(english: str, said: str) -> list[str]:
    """What *said* lost or added of *english*'s placeholders, commands and numbers."""
    wrong = []
    if sorted(_SLOT.findall(english)) != sorted(_SLOT.findall(said)):
        wrong.append(f"placeholders {sorted(_SLOT.findall(english))} became "
                     f"{sorted(_SLOT.findall(said))}")
    lost = set(_COMMAND.findall(english)) - set(_COMMAND.findall(said))
    if lost:
        wrong.append(f"commands {sorted(lost)} missing")
    lost_numbers = _numbers(english) - _numbers(said)  # a language may add one ("2 つ")
    if lost_numbers:
        wrong.append(f"numbers {sorted(lost_numbers.elements())} missing")
    return wrong


def problems(pot: Catalog, po: Catalog) -> list[str]:
    """Each message of *pot* that *po* lacks, leaves empty or says wrongly."""
    found = []
    for message in pot:
        if not message.id:
            continue
        name = message.context or message.id
        have = po.get(message.id, context=message.context)
        if have is None or not have.string:
            found.append(f"{name}: missing")
            continue
        if isinstance(message.id, tuple):
            forms = have.string if isinstance(have.string, tuple) else (have.string,)
            if len(forms) != po.num_plurals or not all(forms):
                found.append(f"{name}: {len(forms)} plural form(s), the language has "
                             f"{po.num_plurals}")
                continue
            for form in forms:
                found.extend(f"{name}: {said}" for said in kept(str(message.id[1]), str(form)))
        elif isinstance(have.string, str):
            found.extend(f"{name}: {said}" for said in kept(str(message.id), have.string))
    return found
