"""Cutting long text into segments the model translates well, and sizing each call.

Lossless: joining the segments gives back the text exactly. Pure and cheap enough to run on a
200,000-character paste.
"""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections.abc import Callable

__all__ = [
    "estimate_tokens",
    "halve_at_sentence",
    "max_tokens_for",
    "segment_budget",
    "split_segments",
]


# Line pieces: a line's content with the newline run after it, or (only at the very start) a
# bare newline run.
_LINE_PIECE = re.compile(r"[^\n]+\n*|\n+")

_CLOSERS = "\"'’”»)\\]}」』）】〕》〉"
# Each match *ends* a sentence; the cut goes after the match, so the terminator and the
# whitespace after it stay with their sentence. Regex rather than a sentence-boundary library:
# only a boundary near the packing limit ever matters (sentences are packed greedily), so an
# occasional false split after "Dr." costs nothing, and cut-after-a-match is lossless by
# construction; pysbd and friends normalise or drop whitespace and are Latin-centric.
_SENTENCE_END = re.compile(
    rf"[.?!…]+[{_CLOSERS}]*\s+"  # Latin-style: needs whitespace (3.14, e.g.x, a…b stay whole)
    rf"|[。！？｡]+[{_CLOSERS}]*\s*"  # CJK: no space between sentences
    rf"|……[{_CLOSERS}]*\s*"  # Chinese ellipsis
    r"|[\u104b\u0f0d-\u0f12\u0f14\u0964\u0965\u061f\u06d4\u17d4\u17d5]+\s*"
    # ^ Burmese ။, Tibetan shads ། ༎…, Devanagari/Bengali danda । ॥, Arabic ؟, Urdu ۔, Khmer ។ ៕
    r"|(?<=[\u0e00-\u0e7f])\s+"  # Thai has no sentence punctuation: a space after Thai ends one
)
_WHITESPACE = re.compile(r"\s+")

_Splitter = Callable[[str], list[str]]


def _cut_after(pattern: re.Pattern[str]) -> _Splitter:
    def split(piece: str) -> list[str]:
        cuts = [m.end() for m in pattern.finditer(piece) if 0 < m.end() < len(piece)]
        bounds = [0, *cuts, len(piece)]
        return [piece[a:b] for a, b in itertools.pairwise(bounds)]

    return split


def _extends_grapheme(ch: str) -> bool:
    """Characters that belong to the one before them (so a hard cut must not fall before them)."""
    return (
        unicodedata.category(ch) in ("Mn", "Mc", "Me")
        or ch in "\u200c\u200d"
        or "\U0001f3fb" <= ch <= "\U0001f3ff"  # skin tones
        or "\U000e0020" <= ch <= "\U000e007f"  # emoji tags
    )


def _hard_cut(piece: str, max_chars: int) -> list[str]:
    """Fixed-size chunks, nudged back (a little) so no accent or emoji is torn from its base."""
    out: list[str] = []
    start = 0
    while len(piece) - start > max_chars:
        end = start + max_chars
        floor = max(start + 1, end - 16)
        cut = end
        while cut > floor and (_extends_grapheme(piece[cut]) or piece[cut - 1] == "\u200d"):
            cut -= 1
        if cut == floor and (_extends_grapheme(piece[cut]) or piece[cut - 1] == "\u200d"):
            cut = end  # a pathological run of marks: give up on keeping it whole
        out.append(piece[start:cut])
        start = cut
    out.append(piece[start:])
    return out


_SPLITTERS: tuple[_Splitter, ...] = (_cut_after(_SENTENCE_END), _cut_after(_WHITESPACE))


def _split_long(piece: str, max_chars: int, level: int = 0) -> list[str]:
    """Split at the coarsest boundary that exists, packing units greedily up to ``max_chars``."""
    if len(piece) <= max_chars:
        return [piece]
    if level == len(_SPLITTERS):
        return _hard_cut(piece, max_chars)
    units = _SPLITTERS[level](piece)
    if len(units) == 1:
        return _split_long(piece, max_chars, level + 1)
    out: list[str] = []
    buf = ""
    for unit in units:
        if len(unit) > max_chars:
            if buf:
                out.append(buf)
                buf = ""
            out.extend(_split_long(unit, max_chars, level + 1))
        elif len(buf) + len(unit) > max_chars:
            out.append(buf)
            buf = unit
        else:
            buf += unit
    if buf:
        out.append(buf)
    return out


def _glue_blank(segments: list[str], max_chars: int) -> list[str]:
    """Attach whitespace-only pieces to a neighbour: separators, not something to translate."""
    out: list[str] = []
    for seg in segments:
        if out and not seg.strip() and len(out[-1]) + len(seg) <= max_chars:
            out[-1] += seg
        else:
            out.append(seg)
    if len(out) > 1 and not out[0].strip() and len(out[0]) + len(out[1]) <= max_chars:
        out[0:2] = [out[0] + out[1]]
    return out


def split_segments(text: str, max_chars: int) -> list[str]:
    """Cut ``text`` into segments to translate one by one; ``"".join(result) == text``.

    Every line is its own segment (the model merges lines translated together), with its
    newline run at the end; a line over ``max_chars`` is cut at sentence ends, then at
    whitespace, then anywhere. A segment may be whitespace-only only when that cannot be
    avoided (all-whitespace text, or a whitespace run longer than ``max_chars``): callers pass
    such segments through untranslated.
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, not {max_chars}.")
    segments: list[str] = []
    for match in _LINE_PIECE.finditer(text):
        segments.extend(_split_long(match.group(), max_chars))
    return _glue_blank(segments, max_chars)


# --------------------------------------------------------------------------------------------
# Sizing against the model's context
# --------------------------------------------------------------------------------------------

PROMPT_TOKENS = 64
"""Template (~40 tokens for the longest official one) plus chat markup and slack."""
OUTPUT_RATIO = 1.5
"""A translation can be this many times longer, in tokens, than its source."""
TOKENISER_SLACK = 1.1
"""Margin for characters that cost more than one token (rare Han, emoji, byte fallback)."""
MAX_SEGMENT_CHARS = 2000
"""Longer segments translate worse (omissions, drift) even when they fit."""


def segment_budget(max_model_len: int) -> int:
    """Largest segment (characters) that fits the context with its prompt and its translation.

    Worst case one token per character (CJK), so a segment of n characters needs
    ``PROMPT_TOKENS + n + 1.5 n`` tokens; with 10 % slack,
    ``n = (max_model_len - 64) / (2.5 * 1.1)``: 4096 gives 1466. Capped at 2000 characters,
    where quality drops before the context runs out (8192 and up).
    """
    if max_model_len <= PROMPT_TOKENS:
        raise ValueError(
            f"A {max_model_len}-token context cannot hold the prompt ({PROMPT_TOKENS} tokens)."
        )
    budget = (max_model_len - PROMPT_TOKENS) / ((1 + OUTPUT_RATIO) * TOKENISER_SLACK)
    return max(1, min(MAX_SEGMENT_CHARS, int(budget)))


# Latin script, digits, punctuation, spaces: about 3 characters a token (BPE merges words).
_LATIN = re.compile("[\x00-\u024f\u0300-\u036f\u1e00-\u1eff\u2000-\u206f]")
# Other alphabets written with spaces between words: at most 2 characters a token.
_ALPHABETIC = re.compile("[\u0370-\u06ff\u0750-\u077f\u10a0-\u10ff]")


def estimate_tokens(text: str) -> int:
    """An upper-ish token count without the tokenizer: Latin 1/3, other alphabets 1/2, rest 1.

    CJK, Thai, Indic, Tibetan, Burmese, Khmer and emoji count a token per character, which
    over-estimates a little; that is the safe side for sizing ``max_tokens``.
    """
    rest, latin = _LATIN.subn("", text)
    rest, alphabetic = _ALPHABETIC.subn("", rest)
    return math.ceil(latin / 3 + alphabetic / 2 + len(rest))


def max_tokens_for(text: str, max_model_len: int) -> int:
    """``max_tokens`` for translating ``text``: room for a long translation, within the context.

    Twice the estimate plus 32 (at least 64) lets verbose target languages finish; a request
    asking for more than the context leaves is rejected by vLLM, so it is capped at
    ``max_model_len - estimate - PROMPT_TOKENS`` (never below 16).
    """
    estimate = estimate_tokens(text)
    wanted = max(64, 2 * estimate + 32)
    room = max(16, max_model_len - estimate - PROMPT_TOKENS)
    return min(wanted, room)


def halve_at_sentence(text: str) -> tuple[str, str] | None:
    """Two halves of *text* cut at the sentence end nearest its middle (``a + b == text``), or
    None for a single sentence: a segment that timed out is retried as two smaller ones, but
    cutting inside a sentence would cost its meaning."""
    sentences = _cut_after(_SENTENCE_END)(text)
    if len(sentences) < 2:
        return None
    ends = list(itertools.accumulate(len(s) for s in sentences))[:-1]
    cut = min(ends, key=lambda end: abs(2 * end - len(text)))
    return text[:cut], text[cut:]
