"""How long a call may take, and how long a message has left: pure arithmetic on measured rates.

A fixed request timeout would be a coin toss: whether a long paragraph outlived it would depend
on how long it waited inside vLLM. So each call's timeout is sized from the output it may produce
(its ``max_tokens``) at the decode rate measured on this server, with a floor, and stretched on
each retry; the measured rate is per request (tokens of one answer over its wall time), so it
already includes batching and prefill.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["DecodeRate", "call_timeout", "eta_seconds"]


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


def eta_seconds(done: int, total: int, elapsed: float) -> float | None:
    """Seconds left at the pace so far, or None before the first part is done."""
    if done <= 0 or total <= done or elapsed <= 0:
        return None if done <= 0 else 0.0
    return elapsed / done * (total - done)
