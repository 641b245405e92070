"""Observers of the engine's per-segment events (a translator's answer checks, a memory's
look-ups): the engine emits, whoever listens counts (the app's metrics install one of each)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Hooks"]

E = TypeVar("E")
_log = logging.getLogger(__name__)


class Hooks(Generic[E]):
    """A list of callables that receive every event; a broken one is logged, never raised."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._hooks: list[Callable[[E], None]] = []

    def add(self, hook: Callable[[E], None]) -> None:
        if hook not in self._hooks:
            self._hooks.append(hook)

    def remove(self, hook: Callable[[E], None]) -> None:
        if hook in self._hooks:
            self._hooks.remove(hook)

    def emit(self, event: E) -> None:
        for hook in list(self._hooks):
            try:
                hook(event)
            except Exception:  # noqa: BLE001 - a broken observer must not break a translation
                _log.exception("%s hook failed", self.name)
