"""Prometheus metrics: what the app does, for ``GET /metrics``.

Like stamina's instrumentation, the policy only emits :class:`~hymt_chat.engine.policy.PolicyEvent`
objects; :class:`PolicyHook` (installed with ``policy.add_hook``) turns them into counters.
Translations are counted by :class:`InstrumentedTranslator`, a wrapper around the translator that
front ends call. Every metric lives in the :class:`Metrics` object's own ``CollectorRegistry``
(never the global default), so tests and several apps in one process do not mix.

=====================================  =======================================================
``hymt_translations_total``            translate() calls by source, target and outcome
``hymt_translation_seconds``           wall time of successful translations (histogram)
``hymt_retries_total``                 retries scheduled by the policy, by reason
                                       (busy, unavailable, timeout)
``hymt_busy_503_total``                503 "busy" answers of the model server
``hymt_downgrades_total``              times the adaptive window was cut (fewer calls at once)
``hymt_policy_window``                 calls allowed at once right now
``hymt_policy_window_max``             the window's ceiling (settings, launch flags, engine)
``hymt_policy_in_flight``              calls running
``hymt_policy_queue_length``           calls waiting for a slot
``hymt_sidecar_restarts``              restarts of the supervised vLLM (from its state file)
``hymt_api_requests_total``            API requests by dialect, key *name* and outcome
``hymt_api_characters_total``          characters translated through the API, by key name
``hymt_checks_total``                  answer checks by outcome (failed, repaired, flagged)
                                       and kind (amount, date, time, weekday, language…)
``hymt_values_masked_total``           values masked before translation, by kind
``hymt_memory_total``                  translation memory look-ups and writes by outcome (hit,
                                       corrected, imported, miss, rejected, stored, unstored,
                                       unavailable)
``hymt_event_loop_stall_seconds``      event-loop stalls (a 20 ms timer run late while the
                                       loop ran code), histogram; ``…_max_seconds``: worst
=====================================  =======================================================
"""

from __future__ import annotations

import asyncio
import time
import weakref
from typing import TYPE_CHECKING, Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.exposition import generate_latest

from hymt_chat.engine.fidelity import CheckEvent
from hymt_chat.engine.policy import Policy, PolicyEvent
from hymt_chat.engine.recall import Memory, MemoryEvent
from hymt_chat.errors import HymtError, ModelBusyError, reason_by_label, reason_label, reason_of
from hymt_chat.lang.languages import get_language
from hymt_chat.sidecar.endpoint import read_state

if TYPE_CHECKING:
    from hymt_chat.engine.translator import Translation, Translator
    from hymt_chat.settings import Settings

__all__ = ["InstrumentedTranslator", "Metrics", "PolicyHook", "outcome_of"]

NAMESPACE = "hymt"
# A translation is one message or one document piece: from well under a second on a free A10
# to the 180 s deadline under overload.
# Event-loop stalls: 100 ms is the most one request may hold up another user's page.
STALL_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, float("inf"))
LATENCY_BUCKETS = (0.25, 0.5, 1, 2, 3, 5, 8, 13, 20, 30, 45, 60, 90, 120, 180, float("inf"))
_BUSY = reason_label(ModelBusyError())


def outcome_of(err: BaseException) -> str:
    """The ``outcome`` label of a failed translation (from the one reason table, errors.py)."""
    return reason_of(err).outcome


def _retry_reason(label: str) -> str:
    """The ``reason`` label of a retry, from the policy event's reason label."""
    reason = reason_by_label(label)
    return reason.outcome if reason is not None else "other"


def _language_label(code: str | None) -> str:
    """A bounded label: a table code, "auto", "unsure" or "other" (never raw user input)."""
    if code is None:
        return "unsure"
    if code in ("", "auto"):
        return "auto"
    try:
        return get_language(code).code
    except HymtError:
        return "other"


class PolicyHook:
    """Policy events -> counters. Install with ``policy.add_hook(PolicyHook(metrics, policy))``.

    A 503 is counted when a call that *started* its attempt is retried or gives up as busy; a
    call that gives up while still queued after an earlier 503 is not counted twice. The policy
    emits "started", "retrying" and "gave_up" from the calling task, which is how the hook tells
    the calls apart without the policy having to name them.
    """

    def __init__(self, metrics: Metrics, policy: Policy) -> None:
        self._metrics = metrics
        self._policy = policy
        self._cuts = policy.cuts
        self._started: weakref.WeakKeyDictionary[asyncio.Task[Any], int] = (
            weakref.WeakKeyDictionary()
        )
        self._started_sync = 0  # outside any task (not how the policy runs, but safe)

    def _started_attempt(self) -> int:
        task = _current_task()
        return self._started.get(task, 0) if task is not None else self._started_sync

    def _mark_started(self, attempt: int) -> None:
        task = _current_task()
        if task is not None:
            self._started[task] = attempt
        else:
            self._started_sync = attempt

    def __call__(self, event: PolicyEvent) -> None:
        m = self._metrics
        cuts = self._policy.cuts  # 503 cuts only: a ceiling following the engine's metrics is none
        if cuts > self._cuts:
            m.downgrades.inc(cuts - self._cuts)
        self._cuts = cuts
        if event.kind == "started":
            self._mark_started(event.attempt)
        elif event.kind == "retrying":
            m.retries.labels(_retry_reason(event.error)).inc()
            if event.error == _BUSY:
                m.busy_503.inc()
        elif (event.kind == "gave_up" and event.error == _BUSY
              and self._started_attempt() == event.attempt):  # the 503 of the attempt that ran
            m.busy_503.inc()


def _current_task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # no running event loop
        return None


class Metrics:
    """The app's metrics in their own registry; ``render()`` is the body of ``GET /metrics``."""

    def __init__(
        self,
        settings: Settings | None = None,
        policy: Policy | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.registry = registry or CollectorRegistry(auto_describe=True)
        self._settings = settings
        reg = self.registry
        self.translations = Counter(
            "translations", "Translations by source, target and outcome.",
            ["source", "target", "outcome"], namespace=NAMESPACE, registry=reg,
        )
        self.translation_seconds = Histogram(
            "translation_seconds", "Wall time of successful translations (queue and retries "
            "included).", namespace=NAMESPACE, buckets=LATENCY_BUCKETS, registry=reg,
        )
        self.retries = Counter(
            "retries", "Model calls retried by the policy, by reason (busy, unavailable, timeout).",
            ["reason"], namespace=NAMESPACE, registry=reg,
        )
        self.busy_503 = Counter(
            "busy_503", "503 'busy' answers of the model server.",
            namespace=NAMESPACE, registry=reg,
        )
        self.downgrades = Counter(
            "downgrades", "Cuts of the adaptive window (fewer model calls at once).",
            namespace=NAMESPACE, registry=reg,
        )
        self.window = Gauge("policy_window", "Model calls allowed at once right now.",
                            namespace=NAMESPACE, registry=reg)
        self.window_max = Gauge(
            "policy_window_max", "The window's ceiling: HYMT_WINDOW_MAX, the launch flags, or "
            "what the engine's /metrics show it runs (see /health's window.origin).",
            namespace=NAMESPACE, registry=reg)
        self.in_flight = Gauge("policy_in_flight", "Model calls running.",
                               namespace=NAMESPACE, registry=reg)
        self.queue_length = Gauge("policy_queue_length", "Model calls waiting for a slot.",
                                  namespace=NAMESPACE, registry=reg)
        self.sidecar_restarts = Gauge(
            "sidecar_restarts", "Restarts of the supervised vLLM sidecar (0 without one).",
            namespace=NAMESPACE, registry=reg,
        )
        self.sidecar_restarts.set_function(self._sidecar_restarts)
        # Labelled by the key's name (operator-chosen, a bounded set), never the key itself.
        self.api_requests = Counter(
            "api_requests", "LibreTranslate/DeepL API requests by dialect, key name and outcome.",
            ["dialect", "key", "outcome"], namespace=NAMESPACE, registry=reg,
        )
        self.api_characters = Counter(
            "api_characters", "Characters translated through the API (billed), by key name.",
            ["key"], namespace=NAMESPACE, registry=reg,
        )
        self.checks = Counter(
            "checks", "Answer checks (numbers, amounts, dates, language, leftovers…) by outcome: "
            "failed (first answer), repaired (the retry fixed it), flagged (shown to the user).",
            ["outcome", "kind"], namespace=NAMESPACE, registry=reg,
        )
        self.values_masked = Counter(
            "values_masked", "Values masked before translation and restored in the target's "
            "format, by kind.", ["kind"], namespace=NAMESPACE, registry=reg,
        )
        self.memory = Counter(
            "memory", "Translation memory, per segment: hit (a model's answer kept), corrected "
            "(an agent's), imported (TMX), miss, rejected (a hit that failed the checks), stored, "
            "unstored (findings: not kept), unavailable (its database failed).",
            ["outcome"], namespace=NAMESPACE, registry=reg,
        )
        self.loop_stall = Histogram(
            "event_loop_stall_seconds", "How late the event loop ran a 20 ms timer while it was "
            "running code (hymt_chat.service.loop_watch): every page waits that long.",
            namespace=NAMESPACE, buckets=STALL_BUCKETS, registry=reg,
        )
        self.loop_stall_max = Gauge(
            "event_loop_stall_max_seconds", "The longest event-loop stall since the start.",
            namespace=NAMESPACE, registry=reg,
        )
        self._worst_stall = 0.0
        self.policy: Policy | None = None
        if policy is not None:
            self.attach(policy)

    # --- wiring ----------------------------------------------------------------------------

    def attach(self, policy: Policy) -> PolicyHook:
        """Read the policy's gauges and count its events (once per policy)."""
        if self.policy is not None and self.policy is not policy:
            raise ValueError("these metrics already observe another policy")
        self.policy = policy
        self.window.set_function(lambda: policy.window)
        self.window_max.set_function(lambda: policy.window_max)
        self.in_flight.set_function(lambda: policy.in_flight)
        self.queue_length.set_function(lambda: policy.queue_length)
        hook = PolicyHook(self, policy)
        policy.add_hook(hook)
        return hook

    def observe_check(self, event: CheckEvent) -> None:
        """One event of the answer checks (hymt_chat.engine.fidelity) -> its counter."""
        if event.outcome == "masked":
            self.values_masked.labels(event.kind).inc()
        else:
            self.checks.labels(event.outcome, event.kind).inc()

    def observe_memory(self, event: MemoryEvent) -> None:
        self.memory.labels(event.outcome).inc()

    def attach_checks(self, translator: Translator, memory: Memory | None) -> None:
        """Count *translator*'s answer checks and *memory*'s look-ups (:meth:`detach_checks`
        undoes it)."""
        translator.check_hooks.add(self.observe_check)
        if memory is not None:
            memory.hooks.add(self.observe_memory)

    def detach_checks(self, translator: Translator, memory: Memory | None) -> None:
        translator.check_hooks.remove(self.observe_check)
        if memory is not None:
            memory.hooks.remove(self.observe_memory)

    def instrument(self, translator: Translator) -> InstrumentedTranslator:
        """*translator*, counting and timing every translate() call."""
        return InstrumentedTranslator(translator, self)

    # --- recording -------------------------------------------------------------------------

    def observe_translation(
        self, source: str | None, target: str | None, outcome: str, seconds: float | None = None
    ) -> None:
        self.translations.labels(
            _language_label(source), _language_label(target), outcome
        ).inc()
        if seconds is not None and outcome == "ok":
            self.translation_seconds.observe(seconds)

    def observe_api(self, dialect: str, key: str, outcome: str, chars: int = 0) -> None:
        """One API request: *key* is the key's name ("local" without a key, "none" refused)."""
        self.api_requests.labels(dialect, key, outcome).inc()
        if chars:
            self.api_characters.labels(key).inc(chars)

    def observe_loop_stall(self, seconds: float) -> None:
        """One look of the loop watch: a stall of *seconds* (0: on time)."""
        if seconds <= 0:
            return  # on time: the histogram holds the stalls, not the 50 looks a second
        self.loop_stall.observe(seconds)
        if seconds > self._worst_stall:
            self._worst_stall = seconds
            self.loop_stall_max.set(seconds)

    def _sidecar_restarts(self) -> float:
        if self._settings is None or self._settings.base_url:
            return 0.0
        try:
            return float(read_state(self._settings).get("restarts") or 0)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return 0.0

    # --- exposition ------------------------------------------------------------------------

    def render(self) -> tuple[bytes, str]:
        """(body, content type) of ``GET /metrics`` in the Prometheus text format."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class InstrumentedTranslator:
    """A :class:`~hymt_chat.engine.translator.Translator` that records each call in :class:`Metrics`.

    One call is one count: a message, or one piece of a document (documents call translate()
    once per piece). Everything but ``translate`` is the wrapped translator's.
    """

    def __init__(self, translator: Translator, metrics: Metrics) -> None:
        self.wrapped = translator
        self.metrics = metrics

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)

    async def translate(
        self, text: str, target: str, source: str = "auto", **kwargs: Any
    ) -> Translation:
        started = time.monotonic()
        try:
            result = await self.wrapped.translate(text, target, source, **kwargs)
        except BaseException as err:
            if isinstance(err, Exception | asyncio.CancelledError):
                self.metrics.observe_translation(source, target, outcome_of(err))
            raise
        outcome = "same_language" if result.same_language else "ok"
        self.metrics.observe_translation(
            result.source, result.target, outcome, time.monotonic() - started
        )
        return result
