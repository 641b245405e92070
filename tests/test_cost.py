"""Pricing a job on the event loop (:func:`hymt_chat.modes.cost.priced`): a chat-sized text is
priced where it is (a worker thread's hop costs more CPU than the pricing), anything
larger in a thread; the price is :func:`jobs_cost`'s either way."""

from __future__ import annotations

import asyncio
import threading

import pytest

from hymt_chat.modes import cost
from hymt_chat.modes.cost import INLINE_CHARS, Text, jobs_cost, priced
from hymt_chat.settings import Settings

SENTENCE = "Bonjour, je voudrais réserver une table pour deux personnes ce soir. "


def _threads_used(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record each worker thread's pricing (the real ``asyncio.to_thread``, watched)."""
    used: list[str] = []
    real = asyncio.to_thread

    async def watched(func, /, *args, **kwargs):  # type: ignore[no-untyped-def]
        used.append(func.__name__)
        return await real(func, *args, **kwargs)

    monkeypatch.setattr(cost.asyncio, "to_thread", watched)
    return used


async def test_a_chat_message_is_priced_on_the_loop_at_the_same_price(monkeypatch) -> None:
    settings = Settings()
    used = _threads_used(monkeypatch)
    text = (SENTENCE * 20)[:INLINE_CHARS]
    assert await priced([Text(text)], settings) == jobs_cost([Text(text)], settings)
    assert await priced([Text("Merci."), Text("Bonsoir.")], settings) == jobs_cost(
        [Text("Merci."), Text("Bonsoir.")], settings)
    assert used == []


async def test_a_longer_text_is_priced_in_a_worker_thread(monkeypatch) -> None:
    settings = Settings(segment_chars=200)
    used = _threads_used(monkeypatch)
    text = (SENTENCE * 40)[:INLINE_CHARS + 1]
    where: list[str] = []
    real = cost.jobs_cost

    def jobs_cost_here(jobs, settings):  # type: ignore[no-untyped-def]
        where.append(threading.current_thread().name)
        return real(jobs, settings)

    monkeypatch.setattr(cost, "jobs_cost", jobs_cost_here)
    price = await priced([Text(text)], settings)
    assert price == real([Text(text)], settings)
    assert price.calls > 1 and price.chars == INLINE_CHARS + 1
    assert used == ["jobs_cost_here"] and where[0] != threading.main_thread().name
