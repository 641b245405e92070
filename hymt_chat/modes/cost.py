"""What a piece of work costs, decided once, before it starts: the model calls it will make and
the characters it sends (a :class:`~hymt_chat.service.ratelimit.Cost`).

Every door charges through here — the chat's messages, files and buttons, a room guest's and
the counter's messages, both APIs — so that what is charged is the work caused: a text costs
one call per segment the translator will cut it into (a line, or a part of a long one:
:func:`~hymt_chat.engine.translator.model_calls`), a document one per value or part it is
split into (a JSON, YAML or PO file: one per string value), "Retry the rest" only the missing
parts. Retries and the answer checks' second tries are not counted: they depend on the model's
answers, which are not known before the work starts.

Pure but not free (a 200,000-character text is segmented, a document split): callers on the
event loop price through :func:`priced`, which sends all but a chat-sized text to a worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hymt_chat.engine.translator import PartialTranslation, model_calls
from hymt_chat.modes.documents import Document, PartialDocument, split_document
from hymt_chat.service.ratelimit import Cost
from hymt_chat.settings import Settings

__all__ = ["INLINE_CHARS", "Priced", "Text", "document_cost", "jobs_cost", "priced", "text_cost"]

# Texts up to this many characters are priced on the event loop: ~0.2 ms of CPU at most (about
# 0.4 µs a character), less than a worker thread's hop costs (~0.25 ms: the hand-over, the
# thread's wake-up and the loop's), which a chat message would otherwise pay each time.
INLINE_CHARS = 500


class Priced(Protocol):
    """A job as the chat keeps it (:class:`~hymt_chat.modes.session.Job`), or a bare
    :class:`Text`: read-only, so that a frozen Text (whose doc is always None) fits too."""

    @property
    def text(self) -> str: ...
    @property
    def doc(self) -> Document | None: ...
    @property
    def partial(self) -> Any: ...


@dataclass(frozen=True)
class Text:
    """A bare text to price as a job (a counter's or a desk visitor's message)."""

    text: str
    doc: None = None
    partial: None = None


def text_cost(text: str, settings: Settings, *, times: int = 1) -> Cost:
    """*text* translated *times* times (an API's alternatives): its segments and characters."""
    return Cost(model_calls(text, settings) * times, len(text) * times)


def document_cost(doc: Document, settings: Settings) -> Cost:
    """Every piece of *doc* to translate, each priced as a text (a value: one call)."""
    return _pieces_cost((p.text for p in split_document(doc) if p.translate), settings)


def _pieces_cost(texts: Iterable[str], settings: Settings) -> Cost:
    total = Cost(0, 0)
    for text in texts:
        total += Cost(max(1, model_calls(text, settings)), len(text))
    return total


def _partial_cost(partial: object, settings: Settings) -> Cost:
    """Retry the rest: only what is missing is sent again."""
    if isinstance(partial, PartialTranslation):
        return _pieces_cost((partial.plan.segments[i] for i in partial.missing), settings)
    if isinstance(partial, PartialDocument):
        return _pieces_cost((piece.text for piece, result in
                             zip(partial.pieces, partial.results, strict=True)
                             if piece.translate and result is None), settings)
    raise TypeError(f"not a partial translation: {type(partial).__name__}")


def jobs_cost(jobs: Iterable[Priced], settings: Settings) -> Cost:
    """What a message (its files and text) or a button's job costs, as one charge."""
    total = Cost(0, 0)
    for job in jobs:
        if job.partial is not None:
            total += _partial_cost(job.partial, settings)
        elif job.doc is not None:
            total += document_cost(job.doc, settings)
        else:
            total += text_cost(job.text, settings)
    return total


async def priced(jobs: Sequence[Priced], settings: Settings) -> Cost:
    """:func:`jobs_cost` for the event loop: texts of :data:`INLINE_CHARS` or fewer in all are
    priced here, anything else (a long text, a file, a retry of parts) in a worker thread."""
    if (all(job.doc is None and job.partial is None for job in jobs)
            and sum(len(job.text) for job in jobs) <= INLINE_CHARS):
        return jobs_cost(jobs, settings)
    return await asyncio.to_thread(jobs_cost, jobs, settings)
