"""Best quality: several candidates from the translation model, fused by Hunyuan-MT-Chimera.

Per segment (the Translator's segmentation, parallelism, progress and join are reused through
its ``segment_translator`` hook):

1. **Candidates, one request.** The translation model is asked once with ``n`` =
   ``chimera_candidates`` and more varied sampling than the model card's (temperature 0.9,
   top_p 0.9 instead of 0.7/0.6), so that the candidates differ: the technical report only says
   the candidates come "under varying parameter settings"; one request with ``n`` shares the
   prompt's prefill and takes one slot of our window (vLLM still counts it as ``n`` requests
   against ``--max-num-queued-reqs``: keep ``n`` well under that cap).
2. **De-duplicate** (whitespace-insensitive, order kept, duplicates counted). When all
   candidates agree there is nothing to fuse: that answer is used and no fusion call is made.
3. **Fuse** with the official Chimera prompt (:func:`hymt_chat.engine.prompts.build_chimera_prompt`).

**Downgrades** — Best quality is opportunistic; it never costs the user their translation:

* *Under load* (the policy's window shrunk below its maximum, or calls already queue): no
  candidates are asked for at all — ``n`` candidates are ``n`` times the decoding work, exactly
  what a congested server cannot take — and the standard translation is made instead.
* *Candidates refused* (503 within ``chimera_wait``, or a server that rejects ``n``): the
  standard translation.
* *Fusion fails* (busy, unreachable, refused, timed out, malformed answer, or the prompt does
  not fit the context): the best single candidate, chosen as the **medoid** — the candidate
  most similar to all the others (duplicates count), similarity being the Dice overlap of
  character 1-to-3-grams averaged over n, a chrF-like measure that needs no tokenizer and works
  for CJK as for Latin text. This is minimum-Bayes-risk selection with a chrF-style utility:
  the consensus candidate, never an outlier sample.

**Other families.** Chimera fuses Hunyuan-MT-7B's candidates (the technical report); it was
not trained on HY-MT1.5's or Hy-MT2's. With those families Best quality asks the family's own
model for the candidates (its own prompt and sampling) and keeps their consensus, the medoid,
with no fusion call: that is what it does, not a downgrade, and :func:`best_note` says so.

Every downgrade is reported (:class:`BestTranslation.downgrades`, :func:`best_note`) so the UI
says so. Nothing here imports Chainlit.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.families import family_in_force
from hymt_chat.engine.fusion import fusion_endpoint
from hymt_chat.engine.policy import EventSink, Policy
from hymt_chat.engine.priority import BEST
from hymt_chat.engine.prompts import build_chimera_prompt
from hymt_chat.engine.translator import ProgressSink, SegmentJob, Translation, Translator
from hymt_chat.errors import (
    ModelBusyError,
    ModelError,
    ModelTimeoutError,
    ModelUnavailableError,
    http_status,
    reason_of,
    status_words,
)
from hymt_chat.settings import Settings
from hymt_chat.text.segments import (
    MAX_SEGMENT_CHARS,
    OUTPUT_RATIO,
    PROMPT_TOKENS,
    TOKENISER_SLACK,
    estimate_tokens,
    max_tokens_for,
)

__all__ = [
    "BestTranslation",
    "SegmentOutcome",
    "best_note",
    "chimera_available",
    "chimera_segment_budget",
    "dedupe",
    "fusion_endpoint",
    "load_reason",
    "medoid",
    "similarity",
    "translate_best",
]

_log = logging.getLogger(__name__)

Kind = Literal["fused", "agreed", "consensus", "medoid", "plain"]

BUSY = "the server is busy"
NO_CANDIDATES = "the translation server could not produce several candidates"
TOO_LONG = "the text is too long to fuse"
MALFORMED = "the fusion model's answer was not a translation"


# --------------------------------------------------------------------------------------------
# Configuration: is there a fusion model, where, and through which policy
# --------------------------------------------------------------------------------------------


def chimera_available(settings: Settings, *, demo: bool = False) -> bool:
    """Offer "Best quality"? When a fusion model or server is configured; on the embedded demo
    model, the demo model plays both roles (so the whole path runs on a CPU); with a family
    Chimera does not fuse, always (its candidates' consensus needs only the model itself)."""
    if not family_in_force(settings).chimera:
        return True
    return bool(settings.fusion_model or settings.fusion_base_url) or demo


def chimera_segment_budget(max_model_len: int, candidates: int) -> int:
    """Largest segment (characters) whose Chimera prompt and answer fit the context.

    The fusion prompt holds the source (n tokens, worst case one per character) and every
    candidate (1.5 n each), and the answer needs 1.5 n more: with ``c`` candidates
    ``2 * PROMPT_TOKENS + 8 c + n (1 + 1.5 c + 1.5)`` tokens, with 10 % slack. 4096 tokens and
    4 candidates give 420 characters (the plain budget is 1466).
    """
    fixed = 2 * PROMPT_TOKENS + 8 * candidates
    per_char = (1 + OUTPUT_RATIO * candidates + OUTPUT_RATIO) * TOKENISER_SLACK
    return max(16, min(MAX_SEGMENT_CHARS, int((max_model_len - fixed) / per_char)))


def load_reason(policy: Policy, window_max: int) -> str | None:
    """Why Best quality should not add load now, or None: the window was cut by a 503 (it is
    below its maximum) or calls are already waiting for a slot."""
    if policy.window < window_max or policy.queue_length > 0:
        return BUSY
    return None


# --------------------------------------------------------------------------------------------
# Candidates: de-duplication and the medoid
# --------------------------------------------------------------------------------------------


def _key(text: str) -> str:
    return " ".join(text.split())


def dedupe(candidates: Sequence[str]) -> list[tuple[str, int]]:
    """Distinct non-empty candidates in first-seen order, each with how often it came back.

    Candidates that differ only in whitespace are the same; case and punctuation count.
    """
    counts: Counter[str] = Counter()
    first: dict[str, str] = {}
    for cand in candidates:
        key = _key(cand)
        if not key:
            continue
        counts[key] += 1
        first.setdefault(key, cand.strip())
    return [(first[key], counts[key]) for key in first]


def _grams(text: str, n: int) -> Counter[str]:
    t = _key(text).casefold()
    if len(t) <= n:
        return Counter([t]) if t else Counter()
    return Counter(t[i:i + n] for i in range(len(t) - n + 1))


def similarity(a: str, b: str, max_n: int = 3) -> float:
    """Character n-gram overlap in [0, 1]: Dice of the 1..max_n-gram multisets, averaged."""
    scores = []
    for n in range(1, max_n + 1):
        ga, gb = _grams(a, n), _grams(b, n)
        total = sum(ga.values()) + sum(gb.values())
        scores.append(1.0 if total == 0 else 2 * sum((ga & gb).values()) / total)
    return sum(scores) / len(scores)


def medoid(candidates: Sequence[tuple[str, int]] | Sequence[str]) -> int:
    """Index of the candidate most similar to all the others (weighted by their counts).

    A candidate that came back k times agrees with itself k-1 times. Ties go to the earlier
    candidate. Accepts :func:`dedupe` output or plain strings.
    """
    items = [(c, 1) if isinstance(c, str) else c for c in candidates]
    if not items:
        raise ValueError("medoid of no candidates")
    best, best_score = 0, float("-inf")
    for i, (text, count) in enumerate(items):
        score = (count - 1) * 1.0 + sum(
            other_count * similarity(text, other)
            for j, (other, other_count) in enumerate(items) if j != i
        )
        if score > best_score + 1e-12:
            best, best_score = i, score
    return best


# --------------------------------------------------------------------------------------------
# One segment
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SegmentOutcome:
    text: str
    kind: Kind  # fused | agreed (all equal) | consensus (no Chimera for this family: medoid)
    #             | medoid (fusion failed) | plain
    candidates: int = 0  # distinct candidates
    reason: str | None = None  # why it was downgraded (medoid, plain)


def _fusion_reason(err: ModelError) -> str:
    """Why the fusion call failed, in the words of the one reason table (errors.py)."""
    status = http_status(err)
    known = status_words(status)
    if known is not None:
        did, setting = known
        return f"the fusion server {did} (HYMT_FUSION_{setting})"
    if status == 400:
        return TOO_LONG  # vLLM's answer to a prompt over the context (or a bad request)
    reason = reason_of(err)
    words = reason.fusion or "the fusion model failed"
    # Busy (503/429) says so already; a plain failure names its status.
    return f"{words} (HTTP {status})" if status and reason.outcome == "model_error" else words


def _unfence(answer: str, source: str) -> str:
    """Chimera's prompt wraps every text in triple backticks, and models answer in kind; the
    client removes one complete fence, not a lone opening or closing one."""
    out = answer.strip()
    if "```" not in source:
        out = out.removeprefix("```").removesuffix("```").strip()
    return out


def _malformed(fused: str, source: str, candidates: Sequence[str]) -> bool:
    """A fusion answer that cannot be the translation: empty, an echo of the numbered list, or
    far outside the candidates' lengths (an explanation, or a cut-off answer)."""
    if not fused.strip():
        return True
    if "```" in fused and "```" not in source:
        return True
    lengths = [len(c) for c in candidates]
    return len(fused) > 3 * max(lengths) + 20 or len(fused) < 0.3 * min(lengths)


class _Best:
    """The segment translator of Best quality (one per message; counts what happened)."""

    def __init__(self, translator: Translator, fusion: ModelClient, fusion_policy: Policy) -> None:
        self.translator = translator
        self.settings = translator.settings
        self.fusion = fusion  # its endpoint names the fusion model (None: the server's first)
        self.fusion_policy = fusion_policy
        self.outcomes: list[SegmentOutcome] = []
        self.fusion_calls = 0

    async def __call__(self, job: SegmentJob) -> str:
        outcome = await self.segment(job)
        self.outcomes.append(outcome)
        return outcome.text

    def _remaining(self, job: SegmentJob) -> float:
        return max(0.0, job.deadline_at - time.monotonic())

    async def _plain(self, job: SegmentJob, reason: str) -> SegmentOutcome:
        return SegmentOutcome(await self.translator.translate_segment(job), "plain", 0, reason)

    async def segment(self, job: SegmentJob) -> SegmentOutcome:
        s = self.settings
        policy = self.translator.policy
        busy = load_reason(policy, policy.window_max)
        if busy:
            return await self._plain(job, busy)
        prompt = self.translator.default_prompt(job.text, job.source, job.target)
        max_tokens = max_tokens_for(job.text, s.max_model_len)
        client = self.translator.client
        try:
            raw = await policy.run(
                lambda: client.complete(prompt, max_tokens=max_tokens, n=s.chimera_candidates,
                                        temperature=s.chimera_temperature, top_p=s.chimera_top_p,
                                        source=job.text, priority=policy.rank(BEST)),
                user=job.user, klass=BEST,
                deadline=min(s.chimera_wait, self._remaining(job)),
                on_event=job.on_event,
            )
        except (ModelBusyError, ModelUnavailableError):
            return await self._plain(job, BUSY)
        except ModelTimeoutError:
            # n candidates decode n times the tokens: one may still fit the request timeout.
            return await self._plain(job, "the candidates took too long")
        except ModelError as err:
            _log.warning("candidates refused, standard translation instead: %s", err)
            return await self._plain(job, NO_CANDIDATES)
        unique = dedupe(raw)
        if not unique:
            return await self._plain(job, NO_CANDIDATES)
        texts = [text for text, _ in unique]
        if len(unique) == 1:
            return SegmentOutcome(texts[0], "agreed", 1)
        best = texts[medoid(unique)]
        if not self.translator.family.chimera:
            return SegmentOutcome(best, "consensus", len(unique))

        def fallback(reason: str) -> SegmentOutcome:
            return SegmentOutcome(best, "medoid", len(unique), reason)

        fusion_policy = self.fusion_policy
        busy = load_reason(fusion_policy, fusion_policy.window_max)
        if busy:
            return fallback(busy if fusion_policy is policy else "the fusion model is busy")
        fusion_prompt = build_chimera_prompt(job.text, job.source, job.target, texts)
        prompt_tokens = estimate_tokens(fusion_prompt) + PROMPT_TOKENS // 2
        room = s.max_model_len - prompt_tokens
        wanted = max(64, 2 * max(estimate_tokens(t) for t in texts) + 32)
        if room < max(16, wanted // 2):  # not even room for a short answer: it would be cut off
            return fallback(TOO_LONG)
        self.fusion_calls += 1
        try:
            answers = await fusion_policy.run(
                lambda: self.fusion.complete(fusion_prompt, max_tokens=min(wanted, room),
                                             source=job.text, priority=fusion_policy.rank(BEST)),
                user=job.user, klass=BEST,
                deadline=min(s.chimera_wait, self._remaining(job)),
                on_event=job.on_event,
            )
        except ModelError as err:
            _log.warning("fusion failed, best candidate instead: %s", err)
            return fallback(_fusion_reason(err))
        fused = _unfence(answers[0], job.text)
        if _malformed(fused, job.text, texts):
            return fallback(MALFORMED)
        return SegmentOutcome(fused, "fused", len(unique))


# --------------------------------------------------------------------------------------------
# A whole message
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BestTranslation:
    translation: Translation
    outcomes: tuple[SegmentOutcome, ...] = field(default=())  # one per segment, in finish order
    fusion_calls: int = 0  # fusion requests sent (successful or not)
    family: str = "Hunyuan-MT"  # title of the family that made the candidates

    @property
    def text(self) -> str:
        return self.translation.text

    @property
    def fused(self) -> int:
        return sum(o.kind == "fused" for o in self.outcomes)

    @property
    def downgrades(self) -> tuple[SegmentOutcome, ...]:
        return tuple(o for o in self.outcomes if o.kind in ("medoid", "plain"))

    @property
    def downgraded(self) -> bool:
        return bool(self.downgrades)

    @property
    def reasons(self) -> tuple[str, ...]:
        """Distinct downgrade reasons, first seen first."""
        return tuple(dict.fromkeys(o.reason for o in self.downgrades if o.reason))


def best_note(result: BestTranslation) -> str:
    """The sentence the UI shows with a Best quality answer (always something to say)."""
    if result.translation.same_language:
        return "Already in the target language: nothing to translate."
    parts = len(result.outcomes)
    if not result.downgraded:
        consensus = [o for o in result.outcomes if o.kind == "consensus"]
        if consensus:
            most = max(o.candidates for o in consensus)
            title = result.family
            return (f"Best quality: the consensus of {most} {title} candidate translations "
                    "(Hunyuan-MT-Chimera fuses Hunyuan-MT-7B's only).")
        if result.fused == 0:
            return "Best quality: every candidate translation agreed."
        most = max(o.candidates for o in result.outcomes)
        return f"Best quality: fused {most} candidate translations (Hunyuan-MT-Chimera)."
    down = result.downgrades
    why = "; ".join(result.reasons) or "unknown reason"
    what = ("the best single candidate" if all(o.kind == "medoid" for o in down)
            else "the standard translation" if all(o.kind == "plain" for o in down)
            else "the best single candidate or the standard translation")
    scope = "" if len(down) == parts else f" for {len(down)} of {parts} parts"
    return f"Best quality unavailable{scope} ({why}): showing {what}."


async def translate_best(
    translator: Translator,
    text: str,
    target: str,
    source: str = "auto",
    *,
    fusion: ModelClient | None = None,
    fusion_policy: Policy | None = None,
    user: str = "default",
    on_progress: ProgressSink | None = None,
    on_event: EventSink | None = None,
) -> BestTranslation:
    """Translate *text* in Best quality: candidates per segment, fused by Chimera, downgrading
    per segment when it cannot (see the module docstring).

    Segments are smaller than in a standard translation (:func:`chimera_segment_budget`) so the
    fusion prompt with all candidates fits the context. *fusion* and *fusion_policy* default to
    the translator's route to the configured fusion endpoint (:class:`hymt_chat.engine.fusion.FusionRoute`).
    """
    settings = translator.settings
    budget = chimera_segment_budget(settings.max_model_len, settings.chimera_candidates)
    if settings.segment_chars:
        budget = min(budget, settings.segment_chars)
    # Checked, but not repaired: the candidates and their fusion are already the extra samples,
    # and a repair would run all of them again and count the part twice ("fused 2 of 1").
    sized = Translator(settings.model_copy(update={"segment_chars": budget,
                                                   "check_repair": False}),
                       translator.client, translator.policy, fusion=translator.fusion)
    sized.check_hooks = translator.check_hooks  # its checks are the translator's to count
    fusion = fusion or translator.fusion.client(translator.client)
    fusion_policy = fusion_policy or translator.fusion.policy(translator.client.endpoint)
    best = _Best(sized, fusion, fusion_policy)
    result = await sized.translate(text, target, source, user=user, on_progress=on_progress,
                                   on_event=on_event, segment_translator=best)
    return BestTranslation(result, tuple(best.outcomes), best.fusion_calls, sized.family.title)
