"""Prevent, repair once, else flag: one segment's translation, checked.

:func:`translate_checked` masks the segment's values (when asked: see the measurement in
``benchmarks/fidelity.py`` and the README), calls the model, restores the values in the
target's format, and runs :func:`~hymt_chat.text.checks.check_translation`. An answer with
findings is asked for once more with another sampling seed, and the answer with fewer
findings wins (the first on a tie); what is still wrong is returned as findings, which the
translator attaches to ``Translation.warnings`` — never hidden, never a silent pass.

Like the policy, this module emits events and leaves counting to whoever listens (the
translator's ``check_hooks``; the app's metrics install one): ``failed`` per finding of
the first answer, ``repaired`` per kind the retry fixed, ``flagged`` per finding shown to the
user, ``masked`` per value masked before the call.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass

from hymt_chat.text.checks import Finding, check_translation, score
from hymt_chat.text.masking import MASKED_KINDS, mask_values
from hymt_chat.text.protect import Masked, unmask
from hymt_chat.text.values import extract_values, values_prepared

__all__ = ["CheckEvent", "CheckHook", "Checked", "translate_checked"]


@dataclass(frozen=True, slots=True)
class CheckEvent:
    outcome: str  # failed, repaired, flagged, masked
    kind: str  # a finding's kind, or a masked value's kind


CheckHook = Callable[[CheckEvent], None]


@dataclass(frozen=True, slots=True)
class Checked:
    text: str  # the answer shown, values restored
    findings: tuple[Finding, ...]  # what is still wrong with it (empty: every check passed)
    first: tuple[Finding, ...]  # what was wrong with the first answer
    calls: int  # model calls made (0: nothing but values to translate)


SegmentCall = Callable[[str, "int | None"], Awaitable[str]]
"""(text to send, sampling seed or None) -> the model's answer."""


async def translate_checked(
    text: str,
    source: str | None,
    target: str,
    call: SegmentCall,
    *,
    mask: bool = True,
    repair: bool = True,
    kinds: Collection[str] = MASKED_KINDS,
    on_event: CheckHook | None = None,
) -> Checked:
    """Translate one segment through *call*, checked and, if needed, retried once; *mask*
    replaces the values of *kinds* (and protected spans) by placeholders first; *on_event*
    hears what happened (:class:`CheckEvent`)."""

    def _emit(outcome: str, kind: str) -> None:
        if on_event is not None:
            on_event(CheckEvent(outcome, kind))

    await values_prepared(source, target)  # a pair's first segment: ~1 s of CPU, off the loop
    values = extract_values(text, [source, target])  # read once: the masking and every check
    masked = (mask_values(text, source, target, kinds, values=values) if mask
              else Masked(text, (), text))
    for span in masked.spans:
        _emit("masked", span.kind)
    if masked.spans and masked.only_spans:
        # Nothing but values ("JD123456789", "259 元"): no model call can improve on them.
        restored = unmask(masked.text, masked).text
        return Checked(restored, (), (), 0)

    async def attempt(seed: int | None) -> tuple[str, tuple[Finding, ...]]:
        raw = await call(masked.text, seed)
        answer = unmask(raw, masked).text if masked.spans else raw
        return answer, check_translation(text, answer, source, target, source_values=values)

    answer, findings = await attempt(None)
    first, calls = findings, 1
    for finding in first:
        _emit("failed", finding.kind)
    if findings and repair:
        again, again_findings = await attempt(secrets.randbelow(2**31))
        calls += 1
        if score(again_findings) < score(findings):
            answer, findings = again, again_findings
        for kind in dict.fromkeys(f.kind for f in first):
            if kind not in {f.kind for f in findings}:
                _emit("repaired", kind)
    for finding in findings:
        _emit("flagged", finding.kind)
    return Checked(answer, findings, first, calls)
