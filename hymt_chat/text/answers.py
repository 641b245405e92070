"""Clean-up of what the model answers: the translation, and nothing around it."""

from __future__ import annotations

import re

# A language tag counts only when a newline follows it: "```I forgot```" has no tag.
_FENCE = re.compile(r"\A```(?:[\w-]*[ \t]*\n)?(?P<body>.*?)\n?```\Z", re.DOTALL)
_QUOTE_PAIRS = {'"': '"', "“": "”", "「": "」", "『": "』", "«": "»", "'": "'", "‘": "’"}


def strip_wrapping(answer: str, source: str = "") -> str:
    """Remove one stray code fence or quote pair the model wrapped the answer in.

    A wrapper that the source text itself had is kept: then it is part of the translation.
    """
    out = answer.strip()
    src = source.strip()
    match = _FENCE.match(out)
    if match and not src.startswith("```"):
        out = match.group("body").strip()
    if len(out) >= 2 and out[0] in _QUOTE_PAIRS and out[-1] == _QUOTE_PAIRS[out[0]]:
        inner = out[1:-1]
        src_wrapped = len(src) >= 2 and src[0] in _QUOTE_PAIRS and src[-1] == _QUOTE_PAIRS[src[0]]
        if not src_wrapped and out[0] not in inner:
            out = inner.strip()
    return out


_BREAKS = re.compile(r"[ \t]*\n\s*")


def keep_line_structure(answer: str, source: str) -> str:
    """A one-line source gets a one-line translation.

    Small models sometimes break a paragraph's translation into several; re-joining the
    segments would then change the document's paragraph structure.
    """
    if "\n" in source.strip() or "\n" not in answer:
        return answer
    return _BREAKS.sub(" ", answer.strip())
