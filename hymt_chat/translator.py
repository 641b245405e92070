"""The one entry point every front end uses: text in, clean translation out."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from .answers import keep_line_structure
from .client import ModelClient, get_client
from .detect import detect_language
from .errors import EmptyTextError, InputTooLongError
from .languages import get_language
from .policy import EventSink, Policy, get_policy, segment_parallelism
from .prompts import build_prompt
from .settings import Settings, get_settings
from .text import clean_text, is_blank, max_tokens_for, segment_budget, split_segments

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
    deadline_at: float  # time.monotonic() by which the whole message must be done
    user: str
    on_event: EventSink | None = None


SegmentTranslator = Callable[[SegmentJob], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class Translation:
    text: str
    source: str | None  # table code; None when auto-detection was unsure
    target: str
    detected: bool  # the source came from auto-detection
    same_language: bool  # already in the target language: the model was not called
    segments: int  # model calls made
    seconds: float  # wall time of the whole translation


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
        raise EmptyTextError("Nothing to translate: the message is empty.")
    if len(cleaned) > settings.max_input_chars:
        raise InputTooLongError(len(cleaned), settings.max_input_chars)
    detected = source_code is None
    if detected:
        source_code = detect_language(cleaned)
    budget = settings.segment_chars or segment_budget(settings.max_model_len)
    return Plan(cleaned, source_code, target_code, detected, split_segments(cleaned, budget))


class Translator:
    """clean -> detect -> same language? -> segment -> prompt -> call (via the policy) -> join."""

    def __init__(
        self,
        settings: Settings | None = None,
        client: ModelClient | None = None,
        policy: Policy | None = None,
    ) -> None:
        self.settings = settings or get_settings()
        self._client = client
        self._policy = policy

    @property
    def client(self) -> ModelClient:
        return self._client or get_client(self.settings)

    @property
    def policy(self) -> Policy:
        return self._policy or get_policy(self.settings)

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
    ) -> Translation:
        """Translate *text*; *segment_translator* replaces the per-segment model call."""
        started = time.monotonic()
        plan = plan_translation(text, target, source, self.settings)
        if plan.same_language:
            return Translation(plan.text, plan.source, plan.target, plan.detected, True, 0,
                               time.monotonic() - started)
        # Unsure detection: the target decides the template (a Chinese target -> Chinese one).
        prompt_source = plan.source or plan.target
        results: list[str] = list(plan.segments)
        todo = [i for i, seg in enumerate(plan.segments) if seg.strip()]
        done = 0

        async def one(index: int) -> None:
            nonlocal done
            segment = plan.segments[index]
            core = segment.strip()
            lead = segment[: len(segment) - len(segment.lstrip())]
            trail = segment[len(segment.rstrip()):]
            # Each segment gets the whole deadline for its own queueing and retries: a long
            # document's model time must not eat the budget of its last segments.
            deadline_at = time.monotonic() + self.settings.deadline
            job = SegmentJob(core, prompt_source, plan.target, deadline_at, user, on_event)
            answer = await (segment_translator or self.translate_segment)(job)
            results[index] = lead + keep_line_structure(answer, core) + trail
            done += 1
            if on_progress is not None:
                maybe = on_progress(done, len(todo))
                if inspect.isawaitable(maybe):
                    await maybe

        await _bounded_gather(
            [lambda i=i: one(i) for i in todo],
            lambda: segment_parallelism(self.policy, self.settings.segment_concurrency),
        )
        return Translation("".join(results), plan.source, plan.target, plan.detected, False,
                           len(todo), time.monotonic() - started)

    async def translate_segment(
        self, job: SegmentJob, build: Callable[[str, str, str], str] = build_prompt
    ) -> str:
        """One segment, one model call (via the policy); the official prompt unless a mode
        (terminology, context) brings its own ``build(text, source, target)``."""
        prompt = build(job.text, job.source, job.target)
        max_tokens = max_tokens_for(job.text, self.settings.max_model_len)
        answers = await self.policy.run(
            lambda: self.client.complete(prompt, max_tokens=max_tokens, source=job.text),
            user=job.user,
            deadline=max(0.0, job.deadline_at - time.monotonic()),
            on_event=job.on_event,
        )
        return answers[0]


async def _bounded_gather(
    jobs: list[Callable[[], Awaitable[None]]], limit: Callable[[], int]
) -> None:
    """Run jobs in order with at most limit() at once, re-reading the limit as it changes.

    The first failure cancels the rest and is raised as itself (nothing half-translated is
    returned, and callers catch our error types, not an ExceptionGroup).
    """
    pending = list(reversed(jobs))
    running: set[asyncio.Future[None]] = set()
    try:
        while pending or running:
            while pending and len(running) < max(1, limit()):
                running.add(asyncio.ensure_future(pending.pop()()))
            finished, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            errors = [task.exception() for task in finished if not task.cancelled()]
            first = next((err for err in errors if err is not None), None)
            if first is not None:
                raise first
    finally:
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running)
