"""Check before sending: does the back-translation of the agent's reply still say the same?

The agent's reply is translated into the customer's language, then back into the agent's; the
agent reads the back-translation beside the translation. :func:`drift_score` compares it with
what the agent wrote:

* similarity = mean of word-set Jaccard and difflib's sequence ratio over lowercased words
  (scripts written without spaces — Chinese, Japanese, Thai… — count characters as words);
* numbers must match exactly, as a multiset after normalising digits and separators
  ("1,000" = "1000" = "١٠٠٠"): any number that differs is ALWAYS flagged, whatever the score —
  a wrong amount or date is the costly mistake, and paraphrase does not excuse it;
* protected spans (order numbers, e-mails, URLs…) passed in ``spans`` must be present verbatim.

The threshold (0.4) was measured on the demo model: see agent.py.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["DRIFT_THRESHOLD", "Drift", "drift_score", "missing_numbers", "numbers", "words"]

DRIFT_THRESHOLD = 0.4
"""Below this similarity the back-translation is flagged (see agent.py for the measurement)."""

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_NUMBER = re.compile(r"\d+(?:[.,'’\u00a0\u202f]\d+)*")
_SEPARATORS = re.compile(r"[.,'’\u00a0\u202f]")


def _unspaced(ch: str) -> bool:
    """Scripts written without spaces between words: each character counts as a word."""
    cp = ord(ch)
    return (0x0E00 <= cp <= 0x0EFF or 0x1000 <= cp <= 0x109F or 0x1780 <= cp <= 0x17FF
            or 0x0F00 <= cp <= 0x0FFF or 0x2E80 <= cp <= 0x9FFF or 0xF900 <= cp <= 0xFAFF
            or 0x20000 <= cp <= 0x323AF)


def words(text: str) -> list[str]:
    """Lowercased words, digits left out; unspaced scripts split into characters."""
    out: list[str] = []
    for word in _WORD.findall(text.casefold()):
        if any(_unspaced(ch) for ch in word):
            out += [ch for ch in word if ch.isalpha()]
        else:
            out.append(word.replace("’", "'"))
    return out


def numbers(text: str) -> Counter[str]:
    """Every number, as ASCII digits without separators ("1,000.50" -> "100050")."""
    ascii_digits = "".join(str(unicodedata.digit(ch)) if ch.isdigit() and not ch.isascii()
                           and unicodedata.digit(ch, None) is not None else ch for ch in text)
    return Counter(_SEPARATORS.sub("", n) for n in _NUMBER.findall(ascii_digits))


def missing_numbers(source: str, other: str) -> list[str]:
    """Numbers of ``source`` (as written there) that ``other`` does not have as often."""
    have = numbers(other)
    out: list[str] = []
    ascii_source = "".join(str(unicodedata.digit(ch)) if ch.isdigit() and not ch.isascii()
                           and unicodedata.digit(ch, None) is not None else ch for ch in source)
    for raw in _NUMBER.findall(ascii_source):
        key = _SEPARATORS.sub("", raw)
        if have[key] > 0:
            have[key] -= 1
        else:
            out.append(raw)
    return out


@dataclass(frozen=True, slots=True)
class Drift:
    score: float  # 0 (nothing in common) .. 1 (same words, same order)
    flagged: bool
    reasons: list[str] = field(default_factory=list)


def similarity(original: str, back: str) -> float:
    a, b = words(original), words(back)
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    jaccard = len(set(a) & set(b)) / len(set(a) | set(b))
    ratio = difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
    return round((jaccard + ratio) / 2, 3)


def drift_score(original: str, back: str, *, threshold: float = DRIFT_THRESHOLD,
                spans: Sequence[str] = ()) -> Drift:
    """Compare the agent's text with the back-translation of its translation."""
    score = similarity(original, back)
    reasons: list[str] = []
    if score < threshold:
        reasons.append(f"The back-translation reads differently from your text "
                       f"(similarity {score:.0%}); check the translation's meaning.")
    lost = missing_numbers(original, back)
    added = missing_numbers(back, original)
    if lost or added:
        detail = "; ".join(filter(None, (
            f"missing {', '.join(lost)}" if lost else "",
            f"new {', '.join(added)}" if added else "",
        )))
        reasons.append(f"Numbers differ in the back-translation ({detail}).")
    gone = [s for s in spans if s not in back]
    if gone:
        reasons.append("The back-translation lost " + ", ".join(repr(s) for s in gone) + ".")
    return Drift(score, bool(reasons), reasons)
