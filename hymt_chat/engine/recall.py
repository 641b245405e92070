"""The translation memory as the translator consults it, per segment, before the policy.

**Keys.** A model's answer is kept under a key of everything that changes it
(:func:`machine_key`): the family and size, the served model (its id and the path
``/v1/models`` names), the decoding (sampling, the context length that sizes ``max_tokens``,
masking and repair settings) and the exact prompt the segment is sent with — which holds the
prompt kind, the language pair, the cleaned segment and a mode's glossary terms, tone or
context. A model or prompt change therefore misses: nothing is invalidated by hand. A team
entry (an agent's correction, an import) is keyed by the pair and the segment only
(:func:`hymt_chat.store.memory.team_key`) and is looked up first.

**Never wrong silently.** A hit goes through the same checks as a fresh answer
(:func:`hymt_chat.text.checks.check_translation`): a model's entry that fails them is dropped
and the segment goes to the model; a team entry is used with its findings shown (a person
chose it, the next reader still sees what the checks see). Only answers with no findings are
stored. Best quality and other custom segment translators bypass the memory. What is stored
holds personal data as placeholders by default (HYMT_MEMORY_PII; the store decides), and a hit
gets the looked-up segment's own values back (:func:`hymt_chat.text.personal.fill`).

**Scope.** :func:`memory_use` says what the code running inside it may do — read, write, or
neither (an API request's ``X-Hymt-Memory: off``; the kiosk writes nothing a visitor typed) —
and counts what it got (the API's response header).

**Database gone.** :class:`Memory` opens its store on first use; when the store fails, the
translation goes on without it, the log says so once, and the memory is tried again after
``retry_after`` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from hymt_chat.engine.hooks import Hooks
from hymt_chat.errors import HymtError, InputError
from hymt_chat.store.memory import (
    MACHINE,
    Entry,
    MemoryStore,
    MemoryStoreError,
    TeamEntry,
    memory_location,
    open_memory_store,
    team_key,
)
from hymt_chat.text.checks import Finding, check_translation
from hymt_chat.text.personal import fill

if TYPE_CHECKING:
    from hymt_chat.engine.families import Family, Sampling
    from hymt_chat.settings import Settings

__all__ = [
    "Memory",
    "MemoryEvent",
    "MemoryUse",
    "Remembered",
    "SegmentKey",
    "current_use",
    "machine_key",
    "memory_use",
]

_log = logging.getLogger("hymt_chat.memory")
T = TypeVar("T")
RETRY_AFTER = 30.0  # seconds without the memory once its database failed


@dataclass(frozen=True, slots=True)
class MemoryEvent:
    # hit (a model's entry), corrected (an agent's), imported (a TMX entry's), miss, rejected
    # (a hit that failed its checks), stored, unstored (findings: not kept), unavailable
    outcome: str




# --- scope -------------------------------------------------------------------------------------

@dataclass(slots=True)
class MemoryUse:
    """What the work in one scope may do with the memory, and what it got from it."""

    read: bool = True
    write: bool = True
    looked: int = 0  # segments looked up
    found: int = 0  # of them answered from the memory (any origin)

    @property
    def summary(self) -> str:
        """``off``, ``hit`` (every segment), ``partial``, ``miss``: the API's header."""
        if not self.read:
            return "off"
        if self.looked and self.found == self.looked:
            return "hit"
        return "partial" if self.found else "miss"


_USE: ContextVar[MemoryUse | None] = ContextVar("hymt_memory_use", default=None)
_ANYTHING = MemoryUse()


def current_use() -> MemoryUse:
    """The innermost :func:`memory_use` (outside any: read and write)."""
    return _USE.get() or _ANYTHING


@contextlib.contextmanager
def memory_use(*, read: bool = True, write: bool = True) -> Iterator[MemoryUse]:
    """Work inside may read / write the memory only if this and every enclosing scope allow it;
    the yielded object counts the segments looked up and found."""
    outer = _USE.get()
    use = MemoryUse(read and (outer is None or outer.read),
                    write and (outer is None or outer.write))
    token = _USE.set(use)
    try:
        yield use
    finally:
        _USE.reset(token)


# --- keys --------------------------------------------------------------------------------------

def model_label(model_id: str, root: str | None, family: Family) -> str:
    """Which model answers: ``hy-mt2:7b hymt=/models/Hy-MT2-7B`` (served id, then path)."""
    return f"{family.name}:{family.size} {model_id}={root or ''}"


def decoding_of(sampling: Sampling, settings: Settings) -> str:
    """Everything besides the prompt and the model that changes the answer kept."""
    return json.dumps([sampling.as_dict(), settings.max_model_len, settings.mask_values,
                       sorted(settings.masked_kinds), settings.check_repair], sort_keys=True)


def machine_key(model: str, decoding: str, prompt: str, source: str | None) -> str:
    """The key of a model's answer to *prompt* (which holds the pair, the segment and a
    mode's terms, tone or context); *source* None: detection was unsure (checked so)."""
    parts = ("machine", model, decoding, source or "", prompt)
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class SegmentKey:
    index: int  # into the plan's segments
    segment: str  # the cleaned segment, stripped: what is looked up and checked
    source: str | None
    target: str
    machine: str
    team: str | None  # None: the source language is unsure (no pair to look up)
    model: str


@dataclass(frozen=True, slots=True)
class Remembered:
    text: str
    origin: str  # machine, imported, corrected
    findings: tuple[Finding, ...]  # the checks' findings on it (a model's: always empty)
    author: str | None = None


def segment_keys(segments: Sequence[tuple[int, str]], source: str | None, target: str, *,
                 prompt: Callable[[str], str], model: str, decoding: str) -> list[SegmentKey]:
    """The keys of (index, segment) pairs; *prompt* renders a segment's full prompt."""
    return [SegmentKey(i, seg, source, target, machine_key(model, decoding, prompt(seg), source),
                       team_key(source, target, seg) if source else None, model)
            for i, seg in segments]


# --- the memory ---------------------------------------------------------------------------------

class Memory:
    """The store, opened on first use, and never in the way: a failing database means
    translating without it (logged once, tried again after *retry_after* seconds)."""

    def __init__(self, open_store: Callable[[], MemoryStore], *,
                 clock: Callable[[], float] = time.monotonic,
                 retry_after: float = RETRY_AFTER) -> None:
        self._open = open_store
        self._store: MemoryStore | None = None
        self._clock = clock
        self.retry_after = retry_after
        self._down_until: float | None = None  # set while the database is failing
        self._lock = threading.Lock()
        self.hooks: Hooks[MemoryEvent] = Hooks("memory")  # who counts (the app's metrics)

    def _emit(self, outcome: str, times: int = 1) -> None:
        for _ in range(times):
            self.hooks.emit(MemoryEvent(outcome))

    @classmethod
    def for_settings(cls, settings: Settings) -> Memory | None:
        """The deployment's memory (HYMT_MEMORY and HYMT_CHECKS on), else None."""
        if not (settings.memory and settings.checks):
            return None
        where = memory_location(settings)
        return cls(lambda: open_memory_store(where, max_entries=settings.memory_max_entries,
                                             pii=settings.memory_pii))

    @property
    def available(self) -> bool:
        return self._down_until is None

    def store(self) -> MemoryStore:
        """The open store (opened now if it was not); raises HymtError when it cannot be."""
        with self._lock:
            if self._store is None:
                self._store = self._open()
            return self._store

    def _call(self, op: Callable[[MemoryStore], T], default: T) -> T:
        """*op* on the store, or *default* while the database is failing (a worker thread)."""
        if self._down_until is not None and self._clock() < self._down_until:
            return default
        try:
            result = op(self.store())
        except (MemoryStoreError, HymtError) as err:
            if isinstance(err, InputError):  # a refusal (the cap), not a failing database
                raise
            if self._down_until is None:
                _log.warning("The translation memory is unavailable (%s): translating without "
                             "it; trying again every %.0f s.", err, self.retry_after)
                self._emit("unavailable")
            self._down_until = self._clock() + self.retry_after
            return default
        if self._down_until is not None:
            _log.warning("The translation memory answers again.")
            self._down_until = None
        return result

    async def _run(self, op: Callable[[MemoryStore], T], default: T) -> T:
        return await asyncio.to_thread(self._call, op, default)

    async def recall(self, keys: Sequence[SegmentKey]) -> dict[int, Remembered]:
        """Each key's entry that may be used, by segment index: a team entry first, else a
        model's that passes the checks (one that fails is dropped from the store)."""
        if not keys:
            return {}
        wanted = [k.machine for k in keys] + [k.team for k in keys if k.team]
        nothing: dict[str, Entry] = {}
        found = await self._run(lambda s: s.find(wanted), nothing)
        out: dict[int, Remembered] = {}
        stale: list[str] = []
        for key in keys:
            team = found.get(key.team) if key.team else None
            entry = team or found.get(key.machine)
            # A kept translation's placeholders ([email-1]) take this segment's own values.
            text = fill(entry.translation, key.segment) if entry is not None else None
            if entry is None or text is None:
                self._emit("miss")
                continue
            findings = check_translation(key.segment, text, key.source, key.target)
            if findings and not entry.team:
                stale.append(entry.key)
                self._emit("rejected")
                continue
            out[key.index] = Remembered(text, entry.origin, findings, entry.author)
            self._emit("hit" if entry.origin == MACHINE else entry.origin)
        if stale:
            await self._run(lambda s: s.forget(stale), 0)
        return out

    async def correct(self, entries: Sequence[TeamEntry]) -> bool:
        """Store team entries (an agent's correction) in one transaction; False when the
        database is failing (nothing saved). Raises MemoryFullError past the cap."""
        return await self._run(lambda s: s.add_team(entries) >= 0, False)

    async def remember(self, key: SegmentKey, translation: str,
                       findings: Sequence[Finding]) -> None:
        """Keep a model's answer, unless the checks found something in it."""
        if findings:
            self._emit("unstored")
            return
        await self._run(lambda s: s.put(key.machine, key.source or "", key.target, key.segment,
                                        translation, key.model), None)
        self._emit("stored")
