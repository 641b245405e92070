"""An agent's correction of a translation: checked, keyed as the translator will look it up, and
kept as a team entry of the translation memory (used first next time, by every page of the
deployment, shown "corrected by an agent").

The key is what the translator was given: the message with its protected spans masked (order
numbers, e-mails, glossary terms), line by line (:func:`~hymt_chat.store.memory.line_pairs`).
The correction is masked the same way — each span's text in it becomes its placeholder — so
that "Your order JD123 ships today" corrected once serves "Your order JD456 ships today" too,
and a glossary term comes back as the glossary says then.

A correction goes through the same checks as a model's answer, against the original: one that
changes a number, an amount, a date… is shown its findings and stored only when the agent
sends it again unchanged (a confirmation). Only a signed-in agent corrects: a correction
outranks the model for every user of the deployment. Two agents correcting one segment at
once: the last write wins (both are told theirs was saved; the memory keeps one).
"""

from __future__ import annotations

from dataclasses import dataclass

from hymt_chat.modes.agent.turns import AgentTurn
from hymt_chat.store.memory import CORRECTED, TeamEntry, line_pairs
from hymt_chat.text.checks import Finding, check_translation
from hymt_chat.text.cleanup import clean_text
from hymt_chat.text.protect import Span
from hymt_chat.words.said import Said, said

__all__ = ["Correctable", "Review", "review"]


@dataclass(frozen=True, slots=True)
class Correctable:
    """A translated turn as a correction needs it."""

    original: str  # what was written (cleaned)
    sent: str  # what the translator was given: spans masked
    spans: tuple[Span, ...]
    source: str
    target: str
    translation: str  # what was shown

    @classmethod
    def of(cls, turn: AgentTurn) -> Correctable | None:
        """None for a turn the model never saw ("ok", an order number alone)."""
        if turn.sent is None or turn.template == "none":
            return None
        t = turn.turn
        return cls(t.original, turn.sent.text, turn.sent.spans, t.source, t.target,
                   t.translation)


@dataclass(frozen=True, slots=True)
class Review:
    entries: tuple[TeamEntry, ...]  # what would be stored (empty when *problem*)
    findings: tuple[Finding, ...]  # the checks on the correction: shown, confirmed by resending
    problem: Said | None = None  # why it cannot be stored as written


def _masked_like(text: str, spans: tuple[Span, ...]) -> str:
    """*text* with each span's text replaced by its placeholder (the longest first)."""
    for span in sorted(spans, key=lambda s: len(s.restore), reverse=True):
        if span.restore:
            text = text.replace(span.restore, span.token)
    return text


def review(item: Correctable, corrected: str, author: str) -> Review:
    """The entries *corrected* makes, what the checks say of it, or why it cannot be kept."""
    text = clean_text(corrected).strip()
    if not text:
        return Review((), (), said("correction_empty"))
    if text == item.translation.strip():
        return Review((), (), said("correction_unchanged"))
    findings = check_translation(item.original, text, item.source, item.target)
    pairs = line_pairs(item.sent, _masked_like(text, item.spans))
    if pairs is None:
        lines = sum(1 for line in item.sent.split("\n") if line.strip())
        return Review((), findings, said("correction_lines", count=lines))
    return Review(tuple(TeamEntry(item.source, item.target, segment, translation, CORRECTED,
                                  author) for segment, translation in pairs), findings)
