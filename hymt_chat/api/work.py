"""What both dialects do with a request: detect, translate each text (plain, HTML or XML, a
glossary masked in), through the app's one translator (its Runtime's) in the ``api`` request class.

The detection of each text (CPU work: langdetect, and lxml for markup) runs in a worker thread,
never on the event loop: a request of many texts must not stall every other user's page (on
the loop, 10,000 texts stalled it for 34-76 s). Every list is capped at :data:`MAX_TEXTS`.

Each result carries what the checks (:mod:`hymt_chat.text.checks`) still found wrong in its
translation (``Result.flags``, the translator's ``Translation.warnings``): both dialects answer
them in a field and a header their clients ignore (:mod:`.service`).

Glossary terms are enforced the way the support-agent mode does it (measured there: 16/24
terms kept with masking vs 6/24 with the unofficial terminology template): each source term is
replaced by a placeholder the model does not translate and put back as its agreed translation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast

from hymt_chat.api.deepl_options import Options
from hymt_chat.api.markup import text_content, translate_markup
from hymt_chat.api.together import all_or_first_error
from hymt_chat.engine import chimera
from hymt_chat.engine.recall import memory_use
from hymt_chat.engine.translator import Translation, Translator
from hymt_chat.lang.detect import detect_candidates, detect_with_confidence
from hymt_chat.lang.languages import LANGUAGES
from hymt_chat.modes.agent.protect import mask, strip_tokens, unmask
from hymt_chat.modes.agent.turns import is_universal
from hymt_chat.modes.cost import text_cost
from hymt_chat.service.ratelimit import Cost
from hymt_chat.settings import Settings
from hymt_chat.text.checks import Finding
from hymt_chat.text.cleanup import is_blank

__all__ = ["MAX_ALTERNATIVES", "MAX_TEXTS", "Job", "Result", "TranslatorLike", "job_cost",
           "run_job", "translate_piece"]

Format = Literal["text", "html", "xml"]
MAX_ALTERNATIVES = 3
MAX_TEXTS = 50  # texts per request, both dialects: DeepL's own limit; each is a model call


class TranslatorLike(Protocol):
    settings: Settings

    async def translate(self, text: str, target: str, source: str = "auto", *,
                        user: str = ..., klass: str = ..., prompt: Any = ...) -> Translation: ...


@dataclass(frozen=True, slots=True)
class Job:
    texts: Sequence[str]
    target: str  # our code
    source: str = "auto"  # our code or "auto"
    fmt: Format = "text"
    glossary: Mapping[str, str] | None = None  # source term -> target term
    ignore_tags: tuple[str, ...] = ()
    alternatives: int = 0  # plain text only: more translations, each a call of its own
    options: Options = field(default_factory=Options)  # class, instruction, Best quality

    @property
    def chars(self) -> int:
        """What the request is billed: its characters, once per translation asked for."""
        return sum(len(t) for t in self.texts) * (1 + self.alternatives)


def job_cost(job: Job, settings: Settings) -> Cost:
    """What *job* costs (:mod:`hymt_chat.modes.cost`): each text's model calls (markup: its
    text slots, a call each), once per translation asked for; billed its characters. CPU (a
    parse per markup text): run it in a thread. Raises MarkupError for broken markup."""
    calls = 0
    times = (1 + job.alternatives) * (1 + settings.chimera_candidates
                                      if job.options.quality else 1)
    for text in job.texts:
        plain = text if job.fmt == "text" else text_content(text, job.fmt, job.ignore_tags)
        calls += text_cost(plain, settings, times=times).calls
    return Cost(calls, job.chars)


@dataclass(frozen=True, slots=True)
class Result:
    text: str
    source: str | None  # our code: the given one, detected, or langdetect's guess when unsure
    confidence: float  # of the detection, 0-1 (1.0 when the source was given)
    alternatives: list[str] = field(default_factory=list)
    # What the checks still found wrong in *text* (never in the alternatives), in text order.
    flags: tuple[Finding, ...] = ()


@dataclass(frozen=True, slots=True)
class _Source:
    code: str  # ours, or "auto" when unsure
    confidence: float
    reported: str | None  # what the answer names (langdetect's guess when unsure)


async def run_job(translator: TranslatorLike, job: Job, *, user: str) -> list[Result]:
    """Every text of *job*, in order; the first failure cancels the others and is raised."""
    sources = await asyncio.to_thread(_sources, job)  # CPU: off the event loop
    return await all_or_first_error(_one(translator, job, text, source, user)
                                    for text, source in zip(job.texts, sources, strict=True))


def _sources(job: Job) -> list[_Source]:
    """Each text's source language: the given one, or detected (in a worker thread)."""
    out = []
    for text in job.texts:
        if job.source != "auto" or is_blank(text):
            out.append(_Source(job.source, 1.0, None if job.source == "auto" else job.source))
            continue
        plain = text if job.fmt == "text" else text_content(text, job.fmt, job.ignore_tags)
        code, confidence = detect_with_confidence(plain)
        if code is None:  # unsure: translate as "auto", but name langdetect's best guess
            guess, confidence = _best_guess(plain)
            out.append(_Source("auto", confidence, guess))
        else:
            out.append(_Source(code, confidence, code))
    return out


async def _one(translator: TranslatorLike, job: Job, text: str, found: _Source,
               user: str) -> Result:
    source, confidence, reported = found.code, found.confidence, found.reported
    detected = None if source == "auto" else source
    parts: list[list[Finding]] = []  # each piece's findings, in the order the pieces start

    async def piece(value: str, *, flagged: bool = True) -> str:
        mine: list[Finding] | None = None
        if flagged:
            # Reserved before the first await: markup's slots start in text order, so the
            # flags come in text order whichever answer is back first.
            mine = []
            parts.append(mine)
        return await translate_piece(translator, value, job, source, user, flags=mine)

    def flags() -> tuple[Finding, ...]:
        return tuple(f for part in parts for f in part)

    if is_blank(text) or detected == job.target:
        return Result(text, reported, confidence)
    if job.fmt != "text":
        out = await translate_markup(text, job.fmt, piece, ignore_tags=job.ignore_tags)
        return Result(out, reported, confidence, flags=flags())
    first, *others = await all_or_first_error(
        piece(text) if n == 0 else _asked(piece(text, flagged=False))
        for n in range(1 + job.alternatives))
    alternatives: list[str] = []
    for other in others:
        if other != first and other not in alternatives:
            alternatives.append(other)
    return Result(first, reported, confidence, alternatives, flags())


async def _asked(work: Awaitable[str]) -> str:
    """An alternative is the model's own (the memory would give the first answer again)."""
    with memory_use(read=False, write=False):
        return await work


def _best_guess(text: str) -> tuple[str | None, float]:
    """langdetect's first candidate among the 38 (the dialects always name a language)."""
    known = {lang.code for lang in LANGUAGES}
    for code, prob in detect_candidates(text):
        if code in known:
            return code, prob
    return None, 0.0


async def translate_piece(translator: TranslatorLike, text: str, job: Job, source: str,
                          user: str, *, flags: list[Finding] | None = None) -> str:
    """One piece of text of *job* (a text, a markup slot, a document's part): the glossary
    masked in, the job's class, instruction or Best quality. The checks' findings on its
    translation are added to *flags* when given (a value kept as written adds none)."""
    masked = None
    if job.glossary:  # a dictionary of up to 100,000 terms: searched off the event loop
        masked = await asyncio.to_thread(mask, text, job.glossary)
        if masked.only_spans or is_universal(strip_tokens(masked.text)):
            return unmask(masked.text, masked).text
    elif is_universal(text):  # "42", "👍", "ok": the same in every language
        return text
    sent = masked.text if masked else text
    if job.options.plain:
        result = await translator.translate(sent, job.target, source, user=user,
                                            klass=job.options.klass)
    else:
        with memory_use(read=False, write=False):  # not the default prompt's answer
            result = await _instructed(translator, sent, job, source, user)
    if flags is not None:
        flags.extend(result.warnings)
    return unmask(result.text, masked).text if masked else result.text


async def _instructed(translator: TranslatorLike, text: str, job: Job, source: str,
                      user: str) -> Translation:
    """Best quality (candidates fused by Chimera), or the family's instruction prompt."""
    if job.options.quality:
        # The metrics' wrapper counts it; both wrap the engine's Translator, which Chimera drives.
        inner = cast(Translator, getattr(translator, "wrapped", translator))
        fused = await chimera.translate_best(inner, text, job.target, source, user=user)
        return fused.translation
    return await translator.translate(text, job.target, source, user=user,
                                      klass=job.options.klass, prompt=job.options.prompt)
