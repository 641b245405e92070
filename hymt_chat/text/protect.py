"""Protected spans: what must reach the other side exactly as written, whatever the model does.

Order numbers (JD123456789, #12345, ORD-2024-001), e-mail addresses, URLs, template
placeholders ({name}, {{x}}, %s, $VAR), inline code and the conversation's do-not-translate
terms are replaced by numbered placeholders before translation and put back after. A glossary
term can be masked the same way with its *replacement*: the model never sees it, and the agreed
translation comes back deterministically.

Placeholder shape, measured (benchmarks/agent_measure.py, demo model Qwen2.5-Coder-0.5B on the
real vLLM CPU server, 8 sentences x 2 samples per shape, es/fr/zh->en and en->es/fr/de/zh):

    shape     spans kept exactly once     messages with every span intact
    [1]       69/72 (96 %)                31/34   <- chosen
    {0}       67/72 (93 %)                29/34
    <x0/>     57/72 (79 %)                25/34   (the Japanese output turned it into <x1>)
    ⟦0⟧       33/72 (46 %)                15/34   (became ⟵0⟧, [0], `0`)
    [[1]]     20/24 (round 1 only)        14/16   (became [1] in Chinese)
    __P0__    20/24 (round 1 only)        13/16   (became P0)
    no mask   62/72 (86 %)                24/34   and the losses are silent corruption:
              help@example.com -> "ayudarte@example.com", support@ -> "支持@", a command
              explained instead of translated.

Round 1: 8 one- or two-span sentences x 2 samples; round 2: 6 harder ones (three spans, a span
first, ja and zh targets) x 3, for the four best of round 1. Masking also stops the model from
"translating" a span. A span that *looks* like a placeholder in the source ("see [2]") is
itself masked, so every ``[n]`` in the answer is ours.

Restoring is tolerant (spaces inside the brackets, fullwidth brackets) and never silent: a
placeholder the model dropped is reported in ``missing`` with the span's text, one it repeated
or invented is reported in ``extra``. Dropped spans are NOT appended to the translation: where
they belonged is unknown, and a sentence with an order number stuck at its end reads as if it
were right; the UI shows them next to the translation instead (``warnings``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = [
    "Masked",
    "Span",
    "Unmasked",
    "find_spans",
    "mask",
    "plain_text",
    "strip_tokens",
    "token",
    "unmask",
]


@dataclass(frozen=True, slots=True)
class Span:
    """One protected piece of the source: ``original`` is masked, ``restore`` is put back."""

    index: int
    original: str
    restore: str
    kind: str  # code, url, email, literal, placeholder, order, number, term, glossary
    start: int
    end: int

    @property
    def token(self) -> str:
        return token(self.index)


@dataclass(frozen=True, slots=True)
class Masked:
    text: str  # what the model sees
    spans: tuple[Span, ...] = ()
    original: str = ""

    @property
    def only_spans(self) -> bool:
        """Nothing but placeholders and punctuation is left: there is nothing to translate."""
        rest = _TOKEN.sub(" ", self.text)
        return not any(ch.isalpha() for ch in rest)


@dataclass(frozen=True, slots=True)
class Unmasked:
    text: str
    missing: list[str] = field(default_factory=list)  # spans the model dropped (restored text)
    extra: list[str] = field(default_factory=list)  # spans it repeated, placeholders it invented

    @property
    def warnings(self) -> list[str]:
        """One sentence per problem, for the UI."""
        out = [f"The translation lost {s!r}; add it back before sending." for s in self.missing]
        out += [f"The translation repeats or invents {s!r}; check it." for s in self.extra]
        return out


# --------------------------------------------------------------------------------------------
# Placeholders
# --------------------------------------------------------------------------------------------


def token(index: int) -> str:
    """The placeholder for span ``index`` (0-based), in the shape the measurement chose."""
    return f"[{index + 1}]"


# Tolerant: "[ 1 ]", fullwidth ［1］ and 【1】 (CJK output) are read back too.
_TOKEN = re.compile(r"[\[［【]\s*(\d{1,3})\s*[\]］】]")


def _index(match: re.Match[str]) -> int:
    return int(match.group(1)) - 1


# --------------------------------------------------------------------------------------------
# What is protected
# --------------------------------------------------------------------------------------------

_EDGE_L = r"(?<![A-Za-z0-9_])"
_EDGE_R = r"(?![A-Za-z0-9_])"
_TRAILING = ".,;:!?)]}'\"»”’>。，；：！？）"

# Order of the alternatives = priority when two kinds overlap (code over URL over e-mail…).
_PATTERNS: tuple[tuple[str, str], ...] = (
    ("code", r"```.*?```|`[^`\n]+`"),
    ("url", r"(?:https?://|ftp://|www\.)[^\s<>\"'`，。、；！？）】」]+"),
    # possessive: a run of name characters not followed by "@" is not tried again shorter
    ("email", r"[A-Za-z0-9._%+-]++@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"),
    ("literal", _TOKEN.pattern),  # "[2]" in the source: masked too, so it cannot be confused
    ("placeholder",
     r"\{\{[^{}\n]{1,60}\}\}|\{[A-Za-z0-9_.:\-\[\]]{0,40}\}|\$\{[A-Za-z_]\w*\}"
     r"|" + _EDGE_L + r"\$[A-Z_][A-Z0-9_]*" + _EDGE_R
     + r"|%(?:\([A-Za-z_]\w*\))?[-+#0]*\d*(?:\.\d+)?[sdifrxXeEgGc](?![A-Za-z])"
     r"|%\d+\$[sd]"),
    # Letters and digits mixed, 4+ digits: JD123456789, ORD-2024-001, AB12-3456, SKU-99812.
    ("order",
     _EDGE_L + r"(?=[A-Za-z0-9-]*[A-Za-z])(?=(?:[A-Za-z-]*\d){4})"
     r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*" + _EDGE_R),
    ("order", r"#\d{3,}" + _EDGE_R),
    # Long bare numbers (tracking, phone, account): 6+ digits in a row.
    ("number", _EDGE_L + r"\d{6,}" + _EDGE_R),
)
_COMPILED = tuple((kind, re.compile(pattern, re.DOTALL)) for kind, pattern in _PATTERNS)


def _trim(kind: str, text: str, start: int, end: int) -> int:
    """URLs end before trailing punctuation (and an unbalanced closing bracket)."""
    if kind != "url":
        return end
    while end > start and text[end - 1] in _TRAILING:
        closing = text[end - 1]
        opening = {")": "(", "]": "[", "}": "{", "）": "（"}.get(closing)
        if opening and text[start:end].count(opening) >= text[start:end].count(closing):
            break
        end -= 1
    return end


def _term_pattern(term: str) -> re.Pattern[str]:
    """A term as a whole word where it starts or ends with a Latin letter or digit."""
    left = _EDGE_L if term[:1].isascii() and term[:1].isalnum() else ""
    right = _EDGE_R if term[-1:].isascii() and term[-1:].isalnum() else ""
    return re.compile(left + re.escape(term) + right, re.IGNORECASE)


def find_spans(text: str, terms: Mapping[str, str] | None = None) -> list[Span]:
    """Every protected span of ``text``, left to right, without overlaps.

    ``terms`` maps a term to what is put back for it: itself for a do-not-translate term, the
    agreed translation for a glossary term. Terms win over the patterns (longest first), then
    the patterns in the order above.
    """
    if not terms and len(text) <= _REMEMBERED_CHARS:  # a chat segment and its answer are
        return list(_pattern_spans(text))  # read four to six times (masking, the checks)
    return _find_spans(text, terms)


_REMEMBERED_CHARS = 2000
"""Texts up to this long have their spans remembered (256 of them: at most ~2 MB held)."""


@lru_cache(maxsize=256)
def _pattern_spans(text: str) -> tuple[Span, ...]:
    """:func:`find_spans` without terms: pure, so remembered for the last few texts."""
    return tuple(_find_spans(text, None))


def _find_spans(text: str, terms: Mapping[str, str] | None) -> list[Span]:
    found: list[tuple[int, int, str, str]] = []  # start, end, kind, restore
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= s or start >= e for s, e in taken)

    lowered = text.lower()  # a term that cannot occur is not searched (glossaries of 10,000)
    for term in sorted((t for t in (terms or {}) if t.strip() and t.lower() in lowered),
                       key=len, reverse=True):
        replacement = (terms or {})[term]
        kind = "term" if replacement == term else "glossary"
        for match in _term_pattern(term).finditer(text):
            start, end = match.span()
            if free(start, end):
                restore = match.group(0) if kind == "term" else replacement
                found.append((start, end, kind, restore))
                taken.append((start, end))
    for kind, pattern in _COMPILED:
        for match in pattern.finditer(text):
            start = match.start()
            end = _trim(kind, text, start, match.end())
            if end > start and free(start, end):
                found.append((start, end, kind, text[start:end]))
                taken.append((start, end))
    found.sort()
    return [Span(i, text[s:e], restore, kind, s, e)
            for i, (s, e, kind, restore) in enumerate(found)]


def mask(text: str, terms: Mapping[str, str] | None = None) -> Masked:
    """``text`` with every protected span replaced by its placeholder."""
    spans = find_spans(text, terms)
    parts: list[str] = []
    last = 0
    for span in spans:
        parts += [text[last:span.start], span.token]
        last = span.end
    parts.append(text[last:])
    return Masked("".join(parts), tuple(spans), text)


def plain_text(text: str, terms: Mapping[str, str] | None = None) -> str:
    """``text`` without its protected spans: what language detection should look at."""
    spans = find_spans(text, terms)
    out, last = [], 0
    for span in spans:
        out += [text[last:span.start], " "]
        last = span.end
    out.append(text[last:])
    return re.sub(r"[ \t]{2,}", " ", "".join(out)).strip()


def strip_tokens(text: str) -> str:
    """``text`` without placeholders (what is left to compare numbers in)."""
    return _TOKEN.sub(" ", text)


def unmask(translation: str, masked: Masked) -> Unmasked:
    """Put the spans back into the model's answer; report what was dropped or repeated.

    A repeated placeholder is restored each time (and reported), an unknown one is removed
    (and reported): the text never shows a raw placeholder to the customer.
    """
    if not masked.spans:  # nothing was masked: a "[1]" in the answer is the model's own text
        return Unmasked(translation)
    by_index = {span.index: span for span in masked.spans}
    seen: dict[int, int] = {}
    extra: list[str] = []

    def put_back(match: re.Match[str]) -> str:
        index = _index(match)
        span = by_index.get(index)
        if span is None:
            extra.append(match.group(0))
            return ""
        seen[index] = seen.get(index, 0) + 1
        if seen[index] == 2:
            extra.append(span.restore)
        return span.restore

    text = _TOKEN.sub(put_back, translation)
    if extra and any(not by_index.get(_index(m)) for m in _TOKEN.finditer(translation)):
        text = re.sub(r"[ \t]{2,}", " ", text).strip()
    missing = [span.restore for span in masked.spans if span.index not in seen]
    return Unmasked(text, missing, extra)
