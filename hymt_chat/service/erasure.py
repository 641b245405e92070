"""Erasure of one person: every trace of a visitor, a room, an agent or a text (an e-mail
address) in what the deployment keeps, and a report of what went.

Where the traces are, in order (each step feeds the next):

1. Other holdings of conversations (:class:`Holding`: the rooms' and the desk's tables, the
   queue) — what their messages said comes back for the memory.
2. Chainlit's history: the threads that name the subject or (an agent) are theirs, with their
   steps, elements and feedbacks; an agent's user row.
3. The translation memory: entries holding the subject, and the model's answers to the
   segments of every erased message (under ``HYMT_MEMORY_PII=mask`` they hold placeholders,
   but they were made from those messages); an agent's name comes off their corrections (a
   text naming the agent is not searched for: "Alice" in a sentence is not the agent alice).
4. The cache folder's files: the erased threads' upload folders (a photo with them), and any
   file holding the subject.
5. The log lines holding the subject.

A pass that removed something is followed by another, up to :data:`PASSES`: a message that
arrived during the erasure (a live conversation) is caught by the next pass. Erasing again
finds nothing and says so: it is idempotent. The audit log gets one row per erasure, naming
the subject only by its hash (:func:`hymt_chat.store.audit.subject_label`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from hymt_chat.errors import InputError
from hymt_chat.service.cache_files import erase_files, files_holding, session_folders
from hymt_chat.service.history_records import HistoryRecords, Removed
from hymt_chat.service.log_lines import erase_lines, log_files
from hymt_chat.store.audit import AuditLog, subject_label
from hymt_chat.store.memory import MemoryStore, memory_location, open_memory_store
from hymt_chat.text.cleanup import clean_text
from hymt_chat.text.segments import segment_budget, split_segments

if TYPE_CHECKING:
    from hymt_chat.settings import Settings

__all__ = ["PASSES", "Holding", "Part", "Report", "Subject", "erase", "open_memory_if_kept"]

SubjectKind = Literal["visitor", "room", "agent", "text"]
KINDS: tuple[SubjectKind, ...] = ("visitor", "room", "agent", "text")
PASSES = 3


@dataclass(frozen=True, slots=True)
class Subject:
    """Whom to erase or export: a desk visitor's id, a room's token, an agent's sign-in name,
    or any text they wrote (an e-mail address, a phone number)."""

    kind: SubjectKind
    value: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InputError(f"Erase a visitor, a room, an agent or a text, not {self.kind!r}.")
        if len(self.value.strip()) < 3:
            raise InputError("Name the person by at least three characters: a shorter text "
                             "would match nearly everything.")

    @property
    def text(self) -> str:
        return self.value.strip()

    @property
    def label(self) -> str:
        return subject_label(self.kind, self.text)


@dataclass(slots=True)
class Part:
    """What one holding removed (or found, for an export)."""

    counts: dict[str, int] = field(default_factory=dict)
    texts: list[str] = field(default_factory=list)  # what the removed messages said
    records: dict[str, Any] = field(default_factory=dict)  # an export's JSON, by file name


class Holding(Protocol):
    """Another store of conversations (the rooms' and the desk's): it erases, exports and
    sweeps its own rows for a :class:`Subject`."""

    name: str

    def erase(self, subject: Subject) -> Part: ...

    def export(self, subject: Subject) -> Part: ...

    def sweep(self, before: float) -> dict[str, int]: ...


@dataclass(slots=True)
class Report:
    subject: Subject
    counts: dict[str, int] = field(default_factory=dict)
    passes: int = 0

    def add(self, counts: dict[str, int]) -> int:
        for what, n in counts.items():
            self.counts[what] = self.counts.get(what, 0) + n
        return sum(counts.values())

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def lines(self) -> list[str]:
        if not self.total:
            return [f"Nothing is held about {self.subject.kind} {self.subject.text!r}: "
                    "nothing was removed."]
        return [f"Removed about {self.subject.kind} {self.subject.text!r}:"] + [
            f"  {what:<28}{n:>8,}" for what, n in self.counts.items() if n]

    def detail(self) -> str:
        return ", ".join(f"{what}={n}" for what, n in self.counts.items() if n) or "nothing"


def open_memory_if_kept(settings: Settings) -> MemoryStore | None:
    """The memory's store if the deployment has one (a SQLite file is not made for this)."""
    where = memory_location(settings)
    if isinstance(where, Path) and not where.exists():
        return None
    return open_memory_store(where, max_entries=settings.memory_max_entries, connect_timeout=10,
                             pii=settings.memory_pii)


def segments_of(texts: Sequence[str], settings: Settings) -> list[str]:
    """The segments the translator would have looked up for *texts* (and their lines)."""
    out: set[str] = set()
    size = settings.segment_chars or segment_budget(settings.max_model_len)  # the translator's
    for text in texts:
        cleaned = clean_text(text)
        out |= {line.strip() for line in cleaned.split("\n") if line.strip()}
        out |= {seg.strip() for seg in split_segments(cleaned, size) if seg.strip()}
    return sorted(out)


def _history_pass(history: HistoryRecords, subject: Subject, removed: Removed) -> None:
    ids = (history.of_agent(subject.text) if subject.kind == "agent"
           else history.mentioning(subject.text))
    history.delete(sorted(ids), removed, refuse_later=True)
    if subject.kind == "agent":
        history.delete_user(subject.text, removed)


def erase(settings: Settings, subject: Subject, *, holdings: Sequence[Holding] = (),
          audit: AuditLog | None = None, actor: str = "command:forget") -> Report:
    """Remove every trace of *subject*; the report says what went (empty: nothing was held).
    The erasure is on the audit log even when nothing was found."""
    report = Report(subject)
    history = HistoryRecords(settings.history_url)
    memory = open_memory_if_kept(settings)
    try:
        for _ in range(PASSES):
            report.passes += 1
            texts: list[str] = []
            found = 0
            for holding in holdings:
                part = holding.erase(subject)
                found += report.add(part.counts)
                texts += part.texts
            removed = Removed()
            _history_pass(history, subject, removed)
            found += report.add(removed.counts())
            texts += removed.texts
            # An agent's name is no text of theirs: a sentence naming "Alice" is not hers.
            searched = [] if subject.kind == "agent" else [subject.text]
            if memory is not None:
                gone = memory.erase(searched, segments_of(texts, settings))
                unsigned = memory.unsign(subject.text) if subject.kind == "agent" else 0
                found += report.add({"memory entries": gone, "corrections unsigned": unsigned})
            paths = session_folders(settings, removed.sessions)
            paths += files_holding(settings, searched)
            found += report.add({"files": erase_files(sorted(set(paths)))})
            found += report.add({"log lines": erase_lines(log_files(settings), [subject.text])})
            if not found:
                break
    finally:
        history.close()
        if memory is not None:
            memory.close()
    if audit is not None:
        audit.record(actor, "erase", subject.label, report.detail())
    return report
