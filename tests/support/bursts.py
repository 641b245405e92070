"""Bursts of short customer messages, each with its own order code, and what the policy did
with them: for the overload tests on the engine double and the one on the real vLLM."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from hymt_chat.engine.policy import Policy, PolicyEvent
from hymt_chat.engine.translator import Translation

__all__ = ["Watch", "assert_mapped", "messages"]

_TEMPLATES = [
    ("fr", "Bonjour, ma commande {code} n'est toujours pas arrivée."),
    ("de", "Hallo, meine Bestellung {code} ist noch nicht angekommen."),
    ("es", "Hola, mi pedido {code} todavía no ha llegado."),
    ("it", "Buongiorno, il mio ordine {code} non è ancora arrivato."),
]


def messages(count: int) -> list[tuple[str, str, str]]:
    """(source language, text, order code): short, distinct, each with its own code."""
    out = []
    for i in range(count):
        lang, template = _TEMPLATES[i % len(_TEMPLATES)]
        code = f"JD{100003 + 7919 * i}"
        out.append((lang, template.format(code=code), code))
    return out


class Watch:
    """Counts the policy's events by (kind, reason), for every call of one policy."""

    def __init__(self, policy: Policy) -> None:
        self.events: Counter[tuple[str, str]] = Counter()
        policy.add_hook(self)

    def __call__(self, event: PolicyEvent) -> None:
        self.events[(event.kind, event.error)] += 1

    @property
    def busy_retries(self) -> int:
        return self.events[("retrying", "busy (503)")]

    @property
    def unavailable_retries(self) -> int:
        return self.events[("retrying", "unavailable")]

    @property
    def delivered(self) -> int:
        return self.events[("succeeded", "")]


def assert_mapped(sent: Sequence[tuple[str, str, str]], results: Sequence[Translation]) -> None:
    """Each answer carries its own message's order code and no other's: nothing lost or mixed."""
    codes = [code for _, _, code in sent]
    for (_, text, code), result in zip(sent, results, strict=True):
        assert code in result.text, (text, result.text)
        assert not [c for c in codes if c != code and c in result.text], result.text
    assert len({r.text for r in results}) == len(sent)
