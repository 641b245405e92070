"""Personal data in a text, found and replaced by placeholders: what the translation memory and
the logs keep instead of a customer's e-mail address, phone, card or IBAN.

Kinds found: ``iban`` (ISO 13616, checked with its ISO 7064 mod 97-10 digits), ``card`` (13 to
19 digits passing the Luhn check, as ISO/IEC 7812 numbers do), ``phone`` (7 to 15 digits, the
E.164 maximum, written as people write them: ``+49 170 1234567``, ``(030) 123-4567``,
``0170/1234567``), and the masking's own spans that may name a person (``email``, ``url``,
``order`` numbers, long ``number`` runs: :func:`hymt_chat.text.protect.find_spans`). A phone
number is found by its shape, not by a country's numbering plan: a chat in 38 languages has no
one country to read a national number in, and a false find only hides more.

A placeholder is ``[email-1]``: the kind and the how-manieth distinct value of that kind in the
text. The masking's own placeholders are digits only (``[1]``), so the two never meet.
:func:`redact_pair` replaces the same values in a source and its translation alike, and
:func:`fill` puts a text's own values back into a stored translation (the memory answering the
same segment again).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from hymt_chat.text.protect import find_spans

__all__ = ["KINDS", "LOG_KINDS", "Found", "Redacted", "fill", "find_personal", "redact", "redact_pair"]

KINDS = ("iban", "card", "phone", "email", "url", "order", "number")
_PROTECT_KINDS = frozenset({"email", "url", "order", "number"})
# A log line names hosts, ports, sizes and durations: links and bare numbers stay readable there.
LOG_KINDS = ("iban", "card", "phone", "email", "order")

_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Za-z0-9])")
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
_PHONE = re.compile(r"(?<![\w+])(?:\+|00|\()?\d[\d ()./-]{5,22}\d(?![\w])")
_DATE = re.compile(r"\d{1,4}([-./])\d{1,2}\1\d{1,4}")
_ADDRESS = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")  # an IPv4 address: a host, not a phone
_PLACEHOLDER = re.compile(r"\[(" + "|".join(KINDS) + r")-(\d{1,3})\]")


@dataclass(frozen=True, slots=True)
class Found:
    start: int
    end: int
    kind: str
    text: str


@dataclass(frozen=True, slots=True)
class Redacted:
    text: str
    values: dict[str, str]  # placeholder -> the value it replaces

    @property
    def changed(self) -> bool:
        return bool(self.values)


def _iban_ok(value: str) -> bool:
    """ISO 7064 mod 97-10: the country and check digits moved to the end, letters as 10..35."""
    compact = value.replace(" ", "")
    digits = "".join(str(int(ch, 36)) for ch in compact[4:] + compact[:4])
    return 15 <= len(compact) <= 34 and int(digits) % 97 == 1


def _luhn_ok(value: str) -> bool:
    digits = [int(d) for d in value if d.isdigit()]
    total = 0
    for i, d in enumerate(reversed(digits)):
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _phone_ok(value: str) -> bool:
    digits = sum(ch.isdigit() for ch in value)
    if (not 7 <= digits <= 15 or _DATE.fullmatch(value) or _ADDRESS.fullmatch(value)
            or value.count("(") != value.count(")")):
        return False
    if value[0] in "+(" or value.startswith("0"):
        return True
    # Unprefixed: written in groups (555 123 4567), not a number with separators of thousands.
    groups = re.split(r"[ ./-]+", value)
    return len(groups) >= 2 and digits >= 8 and not all(len(g) == 3 for g in groups[1:])


def find_personal(text: str, kinds: Collection[str] = KINDS) -> list[Found]:
    """Every piece of personal data of *kinds* in *text*, left to right, without overlaps."""
    found: list[Found] = []

    def free(start: int, end: int) -> bool:
        return all(end <= f.start or start >= f.end for f in found)

    for kind, pattern, ok in (("iban", _IBAN, _iban_ok), ("card", _CARD, _luhn_ok)):
        for m in pattern.finditer(text):
            if ok(m.group(0)) and free(*m.span()):
                found.append(Found(m.start(), m.end(), kind, m.group(0)))
    for span in find_spans(text):  # e-mail and URL before phone: digits inside them are theirs
        if span.kind in ("email", "url") and free(span.start, span.end):
            found.append(Found(span.start, span.end, span.kind, span.original))
    for m in _PHONE.finditer(text):
        value = m.group(0).rstrip(".-/ (")
        start = m.start()
        if value.startswith("(") and value.count("(") > value.count(")"):
            value, start = value[1:], start + 1
        end = start + len(value)
        if value and _phone_ok(value) and free(start, end):
            found.append(Found(start, end, "phone", value))
    for span in find_spans(text):
        if span.kind in _PROTECT_KINDS and free(span.start, span.end):
            found.append(Found(span.start, span.end, span.kind, span.original))
    return sorted((f for f in found if f.kind in kinds), key=lambda f: f.start)


def _placeholders(found: list[Found]) -> dict[str, str]:
    """value -> placeholder, numbered per kind in order of first appearance."""
    out: dict[str, str] = {}
    counts: dict[str, int] = {}
    for f in found:
        if f.text not in out:
            counts[f.kind] = counts.get(f.kind, 0) + 1
            out[f.text] = f"[{f.kind}-{counts[f.kind]}]"
    return out


def _replace(text: str, found: list[Found], names: dict[str, str]) -> str:
    parts, last = [], 0
    for f in found:
        parts += [text[last:f.start], names[f.text]]
        last = f.end
    parts.append(text[last:])
    return "".join(parts)


def redact(text: str, kinds: Collection[str] = KINDS) -> Redacted:
    """*text* with each piece of personal data (of *kinds*) replaced by its placeholder."""
    found = find_personal(text, kinds)
    if not found:
        return Redacted(text, {})
    names = _placeholders(found)
    return Redacted(_replace(text, found, names), {p: v for v, p in names.items()})


def redact_pair(source: str, translation: str) -> tuple[str, str] | None:
    """The source and its translation with the source's personal data as the same placeholders
    in both; None when the translation would still hold personal data in clear (the model
    rewrote a value: it cannot be told apart, so the pair is not kept)."""
    src = redact(source)
    out = translation
    for placeholder, value in sorted(src.values.items(), key=lambda kv: -len(kv[1])):
        out = out.replace(value, placeholder)
    if find_personal(_PLACEHOLDER.sub(" ", out)):
        return None
    return src.text, out


def fill(stored: str, source: str) -> str | None:
    """*stored* (a redacted translation) with *source*'s own values put back for its
    placeholders; None when one has no value in *source* (then the stored text does not fit)."""
    values = redact(source).values
    missing = False

    def put_back(m: re.Match[str]) -> str:
        nonlocal missing
        value = values.get(m.group(0))
        if value is None:
            missing = True
            return m.group(0)
        return value

    filled = _PLACEHOLDER.sub(put_back, stored)
    return None if missing else filled
