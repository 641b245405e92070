"""The one entry point every front end uses: text in, clean translation out."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from hymt_chat.engine.client import ModelClient, ModelClients
from hymt_chat.engine.families import Family, family_in_force, served_model
from hymt_chat.engine.fidelity import CheckEvent, translate_checked
from hymt_chat.engine.fusion import FusionRoute
from hymt_chat.engine.hooks import Hooks
from hymt_chat.engine.policy import EventSink, Policy, PolicyEvent, policy_for, segment_parallelism
from hymt_chat.engine.priority import API, BULK, INTERACTIVE
from hymt_chat.engine.prompts import build_prompt
from hymt_chat.engine.recall import (
    Memory,
    Remembered,
    SegmentKey,
    current_use,
    decoding_of,
    model_label,
    segment_keys,
)
from hymt_chat.engine.runner import run_bounded
from hymt_chat.errors import (
    EmptyTextError,
    IncompleteTranslationError,
    InputTooLongError,
    ModelError,
    ModelTimeoutError,
)
from hymt_chat.lang.detect import detect_language
from hymt_chat.lang.languages import get_language
from hymt_chat.settings import Settings, get_settings
from hymt_chat.text.answers import keep_line_structure
from hymt_chat.text.checks import Finding
from hymt_chat.text.cleanup import clean_text, is_blank
from hymt_chat.text.segments import (
    halve_at_sentence,
    max_tokens_for,
    segment_budget,
    split_segments,
)

MISSING_MARK = "[not translated] "
"""Put before each part that could not be translated, which is shown in the original."""

ProgressSink = Callable[[int, int], "Awaitable[None] | None"]


@dataclass(frozen=True, slots=True)
class SegmentJob:
    """One segment of a message, as handed to a segment translator.

    The default is :meth:`Translator.translate_segment`; a mode that translates segments
    differently (Best quality) passes its own to :meth:`Translator.translate` and keeps the
    segmentation, the parallelism, the progress reports and the join.
    """

    text: str  # the segment without its leading/trailing whitespace (re-attached by the caller)
    source: str  # code for the prompt: the detected/chosen source, else the target's
    target: str
    deadline_at: float  # time.monotonic() by which this segment must be done
    user: str
    on_event: EventSink | None = None
    klass: str = INTERACTIVE  # request class (hymt_chat.engine.priority): queue order, vLLM priority
    until: float | None = None  # time.monotonic() at which even a running call is cut (CLI)
    seed: int | None = None  # sampling seed: set when a failed check asks for another answer


SegmentTranslator = Callable[[SegmentJob], Awaitable[str]]
PromptBuilder = Callable[[str, str, str], str]
"""(segment, source, target) -> the prompt: a mode's own instruction (terms, tone, context)."""


@dataclass(frozen=True, slots=True)
class Translation:
    text: str
    source: str | None  # table code; None when auto-detection was unsure
    target: str
    detected: bool  # the source came from auto-detection
    same_language: bool  # already in the target language: the model was not called
    segments: int  # segments sent to the model (not those answered from the memory)
    seconds: float  # wall time of the whole translation
    # What the checks found still wrong after one repair (hymt_chat.text.checks): each has
    # .kind and .message; empty when every check passed.
    warnings: tuple[Finding, ...] = ()
    # The origin (machine, imported, corrected) of each segment answered from the memory.
    remembered: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PartialTranslation:
    """A translation some of whose segments failed: what :meth:`Translator.translate_rest` resumes.

    ``results`` has one entry per plan segment: its translation, or None where it is missing.
    """

    plan: Plan
    results: tuple[str | None, ...]
    klass: str
    seconds: float
    # The checks' findings of the parts already translated, by part index (kept for the rest).
    findings: tuple[tuple[int, tuple[Finding, ...]], ...] = ()

    @property
    def missing(self) -> list[int]:
        """Indices (into the plan's segments) still to translate."""
        return [i for i, r in enumerate(self.results) if r is None]

    @property
    def part_numbers(self) -> list[int]:
        """The missing ones as the user counts them: 1-based among the parts that need work."""
        return part_numbers([bool(seg.strip()) for seg in self.plan.segments], self.results)

    @property
    def text(self) -> str:
        """Everything in order: translations in place, missing parts in the original, marked."""
        return "".join(mark_missing(seg) if result is None else result
                       for seg, result in zip(self.plan.segments, self.results, strict=True))

    @property
    def so_far(self) -> str:
        """The translation as far as it got (:func:`shown_so_far`)."""
        return shown_so_far(self.plan.segments, self.results)


class PartsCancelled(asyncio.CancelledError):
    """A translation cancelled (a job's Cancel) once some of its parts were done: the task
    still ends cancelled; ``partial`` keeps them (a ``PartialTranslation`` or a document's
    ``PartialDocument``), for the chat to show and to offer the rest (Retry the rest)."""

    def __init__(self, partial: object, done: int, total: int) -> None:
        super().__init__(f"cancelled after {done} of {total} parts")
        self.partial, self.done, self.total = partial, done, total


def shown_so_far(segments: Sequence[str], results: Sequence[str | None]) -> str:
    """The translation as far as it got: every segment up to the last one translated (any
    missing before it marked :data:`MISSING_MARK`), the untranslated rest left out."""
    last = max((i for i, (seg, result) in enumerate(zip(segments, results, strict=True))
                if result is not None and seg.strip()), default=-1)
    return "".join(mark_missing(seg) if result is None else result
                   for seg, result in zip(segments[: last + 1], results[: last + 1],
                                          strict=True))


def part_numbers(needs_work: list[bool], results: Sequence[str | None]) -> list[int]:
    """Missing results numbered as the user counts parts: 1-based among those needing work."""
    work = [i for i, needed in enumerate(needs_work) if needed]
    return [n for n, i in enumerate(work, 1) if results[i] is None]


def mark_missing(text: str) -> str:
    """*text* in the original, marked as not translated (its surrounding whitespace kept)."""
    core = text.strip()
    return text[: len(text) - len(text.lstrip())] + MISSING_MARK + core + text[len(text.rstrip()):]


@dataclass(frozen=True, slots=True)
class Plan:
    """What translate() will do, decided before any model call (pure; the UI shows it)."""

    text: str  # cleaned input
    source: str | None
    target: str
    detected: bool
    segments: list[str]

    @property
    def same_language(self) -> bool:
        return self.source == self.target

    @property
    def work(self) -> int:
        """Segments that need the model (whitespace-only ones are copied)."""
        return sum(1 for seg in self.segments if seg.strip())


def plan_translation(text: str, target: str, source: str, settings: Settings) -> Plan:
    """Clean, check, detect and segment. Raises EmptyTextError, InputTooLongError, UnknownLanguageError."""
    target_code = get_language(target).code
    source_code = None if source in ("", "auto") else get_language(source).code
    cleaned = clean_text(text)
    if is_blank(cleaned):
        raise EmptyTextError.worded("empty_message")
    if len(cleaned) > settings.max_input_chars:
        raise InputTooLongError(len(cleaned), settings.max_input_chars)
    detected = source_code is None
    if detected:
        source_code = detect_language(cleaned)
    return Plan(cleaned, source_code, target_code, detected, _segments(cleaned, settings))


def segment_chars(settings: Settings) -> int:
    """The longest segment one model call gets: HYMT_SEGMENT_CHARS, else from the context."""
    return settings.segment_chars or segment_budget(settings.max_model_len)


def _segments(cleaned: str, settings: Settings) -> list[str]:
    return split_segments(cleaned, segment_chars(settings))


def _is_bulk(work: int, settings: Settings) -> bool:
    return work > settings.bulk_segments


def model_calls(text: str, settings: Settings) -> int:
    """The model calls :meth:`Translator.translate` makes for *text*: its segments that have
    words (before retries and answer checks). Pure, no detection: what a job is charged."""
    return sum(1 for seg in _segments(clean_text(text), settings) if seg.strip())


def is_long_text(text: str, settings: Settings) -> bool:
    """Is *text* a long paste: more parts than ``HYMT_BULK_SEGMENTS``, translated as bulk work?
    Decided before detection (the chat runs it in the background then; pure, cheap)."""
    return _is_bulk(model_calls(text, settings), settings)


class Translator:
    """clean -> detect -> same language? -> segment -> prompt -> call (via the policy) -> join."""

    def __init__(
        self,
        settings: Settings | None = None,
        client: ModelClient | ModelClients | None = None,
        policy: Policy | None = None,
        memory: Memory | None = None,
        fusion: FusionRoute | None = None,
    ) -> None:
        """*client*: one client, or the app's :class:`ModelClients` (the endpoint in force);
        *policy*: the app's window. Without them the translator has its own (the CLI, tests)."""
        self.settings = settings or get_settings()
        self._client = client if client is not None else ModelClients(self.settings)
        self.policy = policy if policy is not None else policy_for(self.settings)
        self.fusion = fusion if fusion is not None else FusionRoute(self.settings, self.policy)
        self.memory = memory  # None: every segment goes to the model
        self.check_hooks: Hooks[CheckEvent] = Hooks("check")  # who counts (the app's metrics)

    @property
    def client(self) -> ModelClient:
        held = self._client
        return held.current() if isinstance(held, ModelClients) else held

    def request_class(self, plan: Plan, klass: str = INTERACTIVE) -> str:
        """A long paste is bulk work even when typed in the chat (or sent to the API): it must
        not hold the slots of live messages, nor make short API calls wait behind it."""
        if klass in (INTERACTIVE, API) and _is_bulk(plan.work, self.settings):
            return BULK
        return klass

    async def translate(
        self,
        text: str,
        target: str,
        source: str = "auto",
        *,
        user: str = "default",
        on_progress: ProgressSink | None = None,
        on_event: EventSink | None = None,
        segment_translator: SegmentTranslator | None = None,
        klass: str = INTERACTIVE,
        until: float | None = None,
        plan: Plan | None = None,
        prompt: PromptBuilder | None = None,
    ) -> Translation:
        """Translate *text*; *segment_translator* replaces the per-segment model call (and
        bypasses the memory); *prompt* replaces the family's default instruction.

        *plan* is :func:`plan_translation`'s for this very text, when the caller made one
        already (the chat does, to say "already in English" before any call): the text is
        then cleaned, detected and segmented once, not twice.

        Raises IncompleteTranslationError, carrying every segment that was translated, when
        some segments still failed at their deadline; :meth:`translate_rest` resumes it.
        *until* (a ``time.monotonic()`` value) bounds the whole message in wall time, running
        calls included: what a command line's ``--wait`` promises.
        """
        started = time.monotonic()
        if plan is None:
            plan = plan_translation(text, target, source, self.settings)
        if plan.same_language:
            return Translation(plan.text, plan.source, plan.target, plan.detected, True, 0,
                               time.monotonic() - started)
        results: list[str | None] = [None if seg.strip() else seg for seg in plan.segments]
        return await self._run(plan, results, self.request_class(plan, klass), started,
                               user=user, on_progress=on_progress, on_event=on_event,
                               segment_translator=segment_translator, until=until,
                               prompt=prompt)

    async def translate_rest(
        self,
        partial: PartialTranslation,
        *,
        user: str = "default",
        on_progress: ProgressSink | None = None,
        on_event: EventSink | None = None,
        segment_translator: SegmentTranslator | None = None,
    ) -> Translation:
        """Translate only the segments *partial* is missing; the others are not sent again."""
        return await self._run(partial.plan, list(partial.results), partial.klass,
                               time.monotonic() - partial.seconds, user=user,
                               on_progress=on_progress, on_event=on_event,
                               segment_translator=segment_translator,
                               findings=dict(partial.findings))

    async def _run(
        self,
        plan: Plan,
        results: list[str | None],
        klass: str,
        started: float,
        *,
        user: str,
        on_progress: ProgressSink | None,
        on_event: EventSink | None,
        segment_translator: SegmentTranslator | None,
        until: float | None = None,
        findings: dict[int, tuple[Finding, ...]] | None = None,
        prompt: PromptBuilder | None = None,
    ) -> Translation:
        # Unsure detection: the target decides the template (a Chinese target -> Chinese one).
        prompt_source = plan.source or plan.target
        todo = [i for i, r in enumerate(results) if r is None]
        total = plan.work
        done = before = total - len(todo)  # before: parts an earlier run did (Retry the rest)
        findings = dict(findings or {})
        translate_one = segment_translator or (
            functools.partial(self.translate_segment, build=prompt) if prompt
            else self.translate_segment)
        keys, recalled = await self._recall(plan, todo, prompt_source, prompt,
                                            custom=segment_translator is not None)
        write = current_use().write

        async def one(index: int) -> None:
            nonlocal done
            segment = plan.segments[index]
            core = segment.strip()
            lead = segment[: len(segment) - len(segment.lstrip())]
            trail = segment[len(segment.rstrip()):]
            # Each segment gets the whole deadline for its own queueing and retries: a long
            # document's model time must not eat the budget of its last segments.
            deadline_at = time.monotonic() + self.settings.deadline
            if until is not None:
                deadline_at = min(deadline_at, until)
            job = SegmentJob(core, prompt_source, plan.target, deadline_at, user, on_event, klass,
                             until)
            hit = recalled.get(index)
            if hit is not None:  # checked like a fresh answer (recall.py)
                answer, findings[index] = hit.text, hit.findings
            elif self.settings.checks:
                checked = await translate_checked(
                    core, plan.source, plan.target,
                    lambda text, seed: translate_one(dataclasses.replace(job, text=text,
                                                                         seed=seed)),
                    mask=self.settings.mask_values, repair=self.settings.check_repair,
                    kinds=self.settings.masked_kinds, on_event=self.check_hooks.emit)
                answer, findings[index] = checked.text, checked.findings
                key = keys.get(index)
                if key is not None and write and checked.calls and self.memory is not None:
                    await self.memory.remember(key, answer, checked.findings)
            else:
                answer = await translate_one(job)
            results[index] = lead + keep_line_structure(answer, core) + trail
            done += 1
            if on_progress is not None:
                maybe = on_progress(done, total)
                if inspect.isawaitable(maybe):
                    await maybe

        if on_progress is not None and total > 1 and todo:
            # The count from the first second: "0 of 4 parts" before the first part is back
            # (the line otherwise waited for it, half a minute on a slow model).
            maybe = on_progress(done, total)
            if inspect.isawaitable(maybe):
                await maybe
        try:
            failed = await run_bounded(
                [functools.partial(one, i) for i in todo],
                lambda: segment_parallelism(self.policy, self.settings.segment_concurrency,
                                            klass),
            )
        except asyncio.CancelledError as err:
            if done == before or isinstance(err, PartsCancelled):  # nothing new to keep
                raise
            kept = PartialTranslation(plan, tuple(results), klass, time.monotonic() - started,
                                      tuple(sorted(findings.items())))
            raise PartsCancelled(kept, done, total) from err
        seconds = time.monotonic() - started
        if failed:
            first = failed[min(failed)]
            if done == 0:  # nothing to keep: the error itself says it best
                raise first
            partial = PartialTranslation(plan, tuple(results), klass, seconds,
                                         tuple(sorted(findings.items())))
            raise IncompleteTranslationError(partial, done, total, partial.part_numbers, first)
        warnings = tuple(f for i in sorted(findings) for f in findings[i])
        return Translation("".join(results), plan.source, plan.target,  # type: ignore[arg-type]
                           plan.detected, False, len(todo) - len(recalled), seconds, warnings,
                           tuple(recalled[i].origin for i in sorted(recalled)))

    async def _recall(
        self, plan: Plan, todo: list[int], prompt_source: str,
        prompt: PromptBuilder | None, *, custom: bool,
    ) -> tuple[dict[int, SegmentKey], dict[int, Remembered]]:
        """The memory's keys of the segments to do, and those it can answer (checked).

        No memory with a custom segment translator (Best quality: its answers are not one
        prompt's), with the checks off (a hit must pass them), or outside a scope that allows
        it (:func:`~hymt_chat.engine.recall.memory_use`). A server whose model cannot be named
        yet (not reachable) is translated without the memory: the call says why.
        """
        memory, use = self.memory, current_use()
        if memory is None or custom or not self.settings.checks or not (use.read or use.write):
            return {}, {}
        try:
            model_id = await self.client.model_name()
        except ModelError:
            return {}, {}
        family = self.family
        build = prompt or self.default_prompt
        keys = segment_keys(
            [(i, plan.segments[i].strip()) for i in todo], plan.source, plan.target,
            prompt=lambda seg: build(seg, prompt_source, plan.target),
            model=model_label(model_id, served_model() or self.settings.model_path, family),
            decoding=decoding_of(self.client.sampling(), self.settings))
        by_index = {k.index: k for k in keys}
        if not use.read:
            return by_index, {}
        recalled = await memory.recall(keys)
        use.looked += len(keys)
        use.found += len(recalled)
        return by_index, recalled

    @property
    def family(self) -> Family:
        """The model family whose prompts and sampling this translator uses."""
        return family_in_force(self.settings)

    def default_prompt(self, text: str, source: str, target: str) -> str:
        """The family's default instruction (HYMT_MODEL_FAMILY, else the served model's)."""
        return build_prompt(text, source, target, self.family)

    async def translate_segment(
        self, job: SegmentJob, build: Callable[[str, str, str], str] | None = None
    ) -> str:
        """One segment via the policy; the family's default prompt unless a mode (terminology,
        context, style) brings its own ``build(text, source, target)``.

        A call that times out is retried with a longer timeout; a segment of several
        sentences is retried as two halves instead (each a call of its own), so a paragraph
        that is slow on this server does not fail whole.
        """
        return await self._segment(job.text, job, build or self.default_prompt, stretch=1.0)

    async def _segment(
        self, text: str, job: SegmentJob, build: Callable[[str, str, str], str], stretch: float
    ) -> str:
        prompt = build(text, job.source, job.target)
        max_tokens = max_tokens_for(text, self.settings.max_model_len)
        halves = halve_at_sentence(text)
        client, policy = self.client, self.policy
        tries = 0

        def call() -> Awaitable[list[str]]:
            nonlocal tries
            tries += 1
            return client.complete(prompt, max_tokens=max_tokens, source=text,
                                   priority=policy.rank(job.klass), seed=job.seed,
                                   stretch=stretch * 2 ** (tries - 1), until=job.until)

        try:
            answers = await policy.run(
                call, user=job.user, deadline=max(0.0, job.deadline_at - time.monotonic()),
                on_event=job.on_event, klass=job.klass, retry_timeouts=halves is None,
            )
        except ModelTimeoutError:
            if halves is None or not self.settings.retries or time.monotonic() >= job.deadline_at:
                raise
            policy.notify(PolicyEvent("retrying", attempt=tries, error="timeout (split)"),
                          job.on_event)
            return "".join([await self._half(half, job, build, stretch * 2) for half in halves])
        return answers[0]

    async def _half(
        self, half: str, job: SegmentJob, build: Callable[[str, str, str], str], stretch: float
    ) -> str:
        core = half.strip()
        if not core:
            return half
        lead = half[: len(half) - len(half.lstrip())]
        return lead + await self._segment(core, job, build, stretch) + half[len(half.rstrip()):]

