"""Masking values before translation, so that the model cannot change them.

Amounts (and, by HYMT_MASK_KINDS, dates, times, percentages, numbers) become numbered
placeholders, like the protected spans of :mod:`hymt_chat.text.protect`, and are put back by :func:`~hymt_chat.text.protect.unmask` in the
*target* language's own format: "12 March" comes back as "3月12日" in Japanese, "259 元" as
"CN¥259" in English, "1.234,50 €" as "€1,234.50". A value whose meaning is not certain (an
ambiguous "1,234", "9:00" without AM/PM) comes back exactly as written.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from hymt_chat.settings import MASKABLE
from hymt_chat.text.checks import SMALL_NUMBER
from hymt_chat.text.protect import Masked, Span, find_spans
from hymt_chat.text.values import Value, extract_values, format_value

__all__ = ["ALL_KINDS", "MASKED_KINDS", "mask_values"]

MASKED_KINDS = frozenset({"amount"})
"""The default (HYMT_MASK_KINDS), measured on the demo model (benchmarks/fidelity.py, 64
messages x 2 runs): masking amounts cut their defects from 12 to 6 (first answers); masking
dates as well did not cut date defects (9 unmasked, 11 masked: the model dropped the
placeholder); masking times, percentages and numbers too raised time defects from 2 to 11.
Durations and weekdays are never masked: their words must be translated (and declined).
Bare numbers up to ``SMALL_NUMBER`` are not masked either (as they are not checked)."""
ALL_KINDS = frozenset(MASKABLE)


def mask_values(text: str, source: str | None, target: str,
                kinds: Collection[str] = MASKED_KINDS, *,
                values: Sequence[Value] | None = None) -> Masked:
    """*text* with its values of *kinds* replaced by placeholders ``[1]``, ``[2]``…
    (*values*: ``extract_values(text, [source, target])`` when the caller has it already).

    Order numbers, e-mails and URLs are not masked here: the demo model copied them as written
    (1 order defect in 128 answers unmasked, 6 masked: it dropped the placeholder), and the
    checks report one that is lost. A ``[n]`` already in the text (the agent mode's own
    placeholders) is masked with them, so that the two numberings cannot mix.
    """
    pieces: list[tuple[int, int, str, str]] = []
    if values is None:
        values = extract_values(text, [source, target])
    for value in values:
        if value.kind == "number" and all(n <= SMALL_NUMBER and n == int(n)
                                          for n in value.numbers):
            continue  # "2 items", "line 3": nothing to protect, and the sentence reads better
        if value.kind in kinds:
            pieces.append((value.start, value.end, value.kind,
                           format_value(value, target) or value.text))
    if not pieces:
        return Masked(text, (), text)
    pieces += [(s.start, s.end, s.kind, s.restore) for s in find_spans(text)
               if s.kind == "literal"]
    pieces.sort()
    spans: list[Span] = []
    parts: list[str] = []
    last = 0
    for start, end, kind, restore in pieces:
        if start < last:
            continue  # overlaps a piece already masked
        span = Span(len(spans), text[start:end], restore, kind, start, end)
        spans.append(span)
        parts += [text[last:start], span.token]
        last = end
    parts.append(text[last:])
    return Masked("".join(parts), tuple(spans), text)
