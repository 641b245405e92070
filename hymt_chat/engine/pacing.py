"""How long a call may take, and how long a message has left: pure arithmetic on measured rates.

A fixed request timeout would be a coin toss: whether a long paragraph outlived it would depend
on how long it waited inside vLLM. So each call's timeout is sized from the output it may produce
(its ``max_tokens``) at the decode rate measured on this server, with a floor, and stretched on
each retry; the measured rate is per request (tokens of one answer over its wall time), so it
already includes batching and prefill.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DecodeRate", "call_timeout", "eta_seconds", "expected_seconds"]


@dataclass(slots=True)
class DecodeRate:
    """Tokens per second of one request, an exponentially weighted mean of what was seen.

    ``initial`` is used until the first answer; it should be low (slow hardware) rather than
    high: a low guess only makes the first timeouts generous.
    """

    initial: float = 4.0
    weight: float = 0.2  # of each new observation
    _value: float | None = field(default=None, init=False)

    @property
    def value(self) -> float:
        return self._value if self._value is not None else self.initial

    @property
    def measured(self) -> bool:
        return self._value is not None

    def observe(self, tokens: int, seconds: float) -> None:
        """One answer of *tokens* tokens took *seconds* (answers under 8 tokens say little)."""
        if tokens < 8 or seconds <= 0:
            return
        rate = tokens / seconds
        self._value = rate if self._value is None else (
            (1 - self.weight) * self._value + self.weight * rate)


def call_timeout(max_tokens: int, rate: float, *, floor: float, stretch: float = 1.0) -> float:
    """Seconds one call may take: all of *max_tokens* at half the measured *rate*, at least *floor*.

    Half the rate because a request decodes slower when the batch fills up after it started;
    *stretch* (2, 4, ... on retries) widens it when the server turned out slower still.
    """
    return max(floor, 2.0 * max_tokens / max(rate, 1e-3)) * max(1.0, stretch)


def eta_seconds(done: int, total: int, elapsed: float, parallel: int = 1) -> float | None:
    """Seconds left at the pace so far, or None before the first part is done.

    *parallel* parts are translated at once: the first part back means the others sent with
    it are nearly done too, so the pace is counted in rounds of *parallel* parts (a 13-part
    text 4 at a time, first part back after 15 s: about 45 s left, not 3 minutes)."""
    if done <= 0:
        return None
    if total <= done or elapsed <= 0:
        return 0.0
    at_once = max(1, min(parallel, total))
    per_round = elapsed / max(done / at_once, 1.0)
    return per_round * (total - done) / at_once


def expected_seconds(tokens: int, parts: int, rate: float, parallel: int = 1) -> float:
    """Seconds *parts* parts of about *tokens* tokens in all should take before any is back:
    a translation about as long as its text, each request decoding at *rate* tokens a second
    (the rate measured on this server, :class:`DecodeRate`), *parallel* at once."""
    at_once = max(1, min(parallel, parts))
    return tokens / max(rate, 1e-3) / at_once
