"""The agent mode's view of a back-translation: how alike it reads, and what it says otherwise.

The comparison itself is the verdict's (:func:`hymt_chat.text.verdict.back_findings`: negation,
opposites, names, omissions, additions, numbers, protected spans); the similarity is shown for
reference and, above :data:`DRIFT_THRESHOLD`, a floor for a long back-translation about
something else. A bare similarity threshold held "Yes, of course." / "Yes, sure." and let
"Please send me a photo." / "I can't provide a photo." through: ``benchmarks/meaning.py``
measures both on a labelled set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from hymt_chat.text.meaning import missing_numbers, numbers, similarity, words
from hymt_chat.text.verdict import back_findings

__all__ = ["DRIFT_THRESHOLD", "Drift", "drift_score", "missing_numbers", "numbers", "similarity",
           "words"]

DRIFT_THRESHOLD = 0.15
"""Below this similarity a long back-translation (six words or more on both sides) reads like
another text: flagged. Every correct reply of the labelled set scores above it."""


@dataclass(frozen=True, slots=True)
class Drift:
    score: float  # 0 (nothing in common) .. 1 (same words, same order)
    flagged: bool
    reasons: list[str] = field(default_factory=list)


def drift_score(original: str, back: str, *, threshold: float = DRIFT_THRESHOLD,
                spans: Sequence[str] = (), language: str | None = None,
                translation: str = "") -> Drift:
    """Compare the writer's text with the back-translation of its translation."""
    found = back_findings(original, back, language, translation=translation, spans=spans,
                          floor=threshold)
    return Drift(similarity(original, back), bool(found), [f.message for f in found])
