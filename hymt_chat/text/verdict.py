"""One verdict on a translation: hold it, or let it go, and why.

Every segment of every path (a chat message, a file's parts, the kiosk, rooms and the desk,
the HTTP APIs) is checked by the translator with
:func:`hymt_chat.text.checks.check_translation` (values, numbers also as words, spans,
language, leftovers, lines), and those findings are what each path shows. Where a message
is translated back (the agent mode, both directions of rooms and the desk), :func:`judge`
takes those findings and adds what the back-translation says differently from the writer's
text (:func:`hymt_chat.text.meaning.meaning_findings`: negation, opposites, names,
omissions, additions), its numbers and the protected spans it must keep; the hold is decided
here and nowhere else.

A :class:`Verdict` holds when anything was found, or when a check could not run (an
exception, a back-translation that failed): a reply that could not be checked is never
waved through, and never blocks the conversation either — the agent reads it and decides.
The decision is measured on a labelled set: ``benchmarks/meaning.py``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hymt_chat.text.checks import Finding, check_translation
from hymt_chat.text.meaning import meaning_findings, missing_numbers, reads, similarity, words

__all__ = ["UNCHECKED", "Verdict", "back_findings", "judge", "judged", "unchecked"]

UNCHECKED = "This translation could not be checked ({reason}): read it before it goes out."
OFF_LOOP_CHARS = 2_000
"""A text without a back-translation and no longer than this is judged on the event loop
(its own checks ran already: what is left costs microseconds); anything else, in a worker
thread: comparing a back-translation costs about a millisecond a line, more for a paste."""
FLOOR_WORDS = 6
"""The similarity floor applies only when both texts have this many words: short replies are
reworded wholesale ("No problem at all." / "Don't worry about it." share no word)."""
_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the checks found, and whether a reader must see it before it goes out."""

    findings: tuple[Finding, ...] = ()
    reason: str | None = None  # why a check could not run (None: every check ran)
    score: float | None = None  # surface likeness of the back-translation, for reference

    @property
    def hold(self) -> bool:
        return bool(self.findings) or self.reason is not None

    @property
    def messages(self) -> tuple[str, ...]:
        """Each finding's sentence once, then the reason the checks could not run."""
        said = dict.fromkeys(f.message for f in self.findings)
        if self.reason is not None:
            said[UNCHECKED.format(reason=self.reason)] = None
        return tuple(said)


def unchecked(reason: str, findings: Iterable[Finding] = ()) -> Verdict:
    """A verdict whose checks could not all run: held, *reason* said (and logged)."""
    _log.warning("a translation could not be checked: %s", reason)
    return Verdict(tuple(findings), reason)


def back_findings(original: str, back: str, language: str | None, *, translation: str = "",
                  spans: Sequence[str] = (), floor: float = 0.0) -> tuple[Finding, ...]:
    """What *back* (the translation translated back into *language*) says differently from
    *original*: meaning, numbers, the spans it must keep, and (with a *floor* above 0) a back-
    translation that shares almost nothing with a long text."""
    if words(original) and not words(back):
        return (Finding.of("omission", "back_empty"),)
    found = list(meaning_findings(original, back, language, translation))
    lost = missing_numbers(original, back, language or "")
    added = missing_numbers(back, original, language or "")
    if lost or added:
        key = ("numbers_differ_both" if lost and added
               else "numbers_differ_missing" if lost else "numbers_differ_new")
        found.append(Finding.of("number", key, ", ".join(lost), ", ".join(added),
                                lost=", ".join(lost), added=", ".join(added)))
    gone = [s for s in spans if s not in back]
    if gone:
        found.append(Finding.of("order", "spans_lost", ", ".join(gone),
                                spans=", ".join(repr(s) for s in gone)))
    score = similarity(original, back)
    if (floor > 0 and score < floor and len(words(original)) >= FLOOR_WORDS
            and len(words(back)) >= FLOOR_WORDS):
        found.append(Finding.of("drift", "drift", score=f"{score:.0%}"))
    return tuple(found)


def judge(source: str, translation: str, source_lang: str | None, target: str, *,
          back: str | None = None, findings: Sequence[Finding] | None = None,
          spans: Sequence[str] = (), floor: float = 0.0) -> Verdict:
    """The verdict on *translation* of *source*: *findings* are the translator's own checks
    (run here when None), *back* the back-translation if one was made. Never raises: a check
    that fails makes a held verdict that says so."""
    try:
        own = (tuple(findings) if findings is not None
               else check_translation(source, translation, source_lang, target))
    except Exception as err:  # noqa: BLE001 - a check's bug must not stop the conversation
        _log.exception("the answer checks failed")
        return unchecked(f"a check failed: {type(err).__name__}")
    if back is None:
        return Verdict(own)
    if not reads(source_lang):
        return unchecked(f"the meaning checks do not read {source_lang or 'an unknown language'}",
                         own)
    try:
        extra = back_findings(source, back, source_lang, translation=translation, spans=spans,
                              floor=floor)
    except Exception as err:  # noqa: BLE001
        _log.exception("the back-translation checks failed")
        return unchecked(f"a check failed: {type(err).__name__}", own)
    kinds = {f.kind for f in own}
    # The translator's value checks said it already: the back-translation's numbers add
    # nothing but a second sentence about the same value.
    extra = tuple(f for f in extra if not (f.kind == "number" and kinds & _VALUE_KINDS))
    return Verdict(own + extra, None, similarity(source, back))


_VALUE_KINDS = frozenset({"number", "amount", "date", "time", "duration", "percent", "weekday"})


async def judged(source: str, translation: str, source_lang: str | None, target: str, *,
                 back: str | None = None, findings: Sequence[Finding] | None = None,
                 spans: Sequence[str] = (), floor: float = 0.0) -> Verdict:
    """:func:`judge`, in a worker thread for a long text (the event loop serves every tab)."""
    if back is None and len(source) <= OFF_LOOP_CHARS:
        return judge(source, translation, source_lang, target, back=back, findings=findings,
                     spans=spans, floor=floor)
    return await asyncio.to_thread(judge, source, translation, source_lang, target, back=back,
                                   findings=findings, spans=spans, floor=floor)
