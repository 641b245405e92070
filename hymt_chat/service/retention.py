"""Retention: what is older than its kind's days is removed, by a sweeper in the app and by
``hymt-chat retention run``; both say what they removed.

Kinds and their settings (``HYMT_RETENTION_<KIND>_DAYS``, else ``HYMT_RETENTION_DAYS``; unset or
0: kept):

- ``history``: Chainlit's threads, by their last activity (with their upload folders);
- ``conversations``: the rooms' and the desk's conversations and transcripts (each
  :class:`~hymt_chat.service.erasure.Holding` sweeps its own);
- ``uploads``: Chainlit's upload folders and the DeepL document jobs' results;
- ``memory``: the memory's model answers, by when they were made;
- ``logs``: log lines, by their time;
- ``team``: the memory's corrections and imports — the team's work, so only their own
  ``HYMT_RETENTION_TEAM_DAYS`` applies, never the general setting.

The clock is injected (``now``): a test moves time, not the files' dates.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hymt_chat.service.cache_files import erase_files, session_folders, sweep_uploads
from hymt_chat.service.erasure import Holding, open_memory_if_kept
from hymt_chat.service.history_records import HistoryRecords
from hymt_chat.service.log_lines import log_files, sweep_lines
from hymt_chat.store.audit import AuditLog
from hymt_chat.store.documents import DocumentJobs, documents_location
from hymt_chat.store.memory import CORRECTED, IMPORTED, MACHINE

if TYPE_CHECKING:
    from hymt_chat.settings import Settings

__all__ = ["KINDS", "Retention", "run_sweeper", "start_sweeper", "sweep"]

KINDS = ("history", "conversations", "uploads", "memory", "logs", "team")
DAY = 86400.0
_log = logging.getLogger("hymt_chat.retention")


@dataclass(frozen=True, slots=True)
class Retention:
    """Days kept per kind (None: kept)."""

    days: dict[str, int | None]

    @classmethod
    def of(cls, settings: Settings) -> Retention:
        general = settings.retention_days or None
        own = {"history": settings.retention_history_days,
               "conversations": settings.retention_conversations_days,
               "uploads": settings.retention_uploads_days,
               "memory": settings.retention_memory_days,
               "logs": settings.retention_logs_days}
        days: dict[str, int | None] = {
            kind: (general if value is None else value or None) for kind, value in own.items()}
        days["team"] = settings.retention_team_days or None
        return cls(days)

    @property
    def active(self) -> bool:
        return any(self.days.values())

    def before(self, kind: str, now: float) -> float | None:
        """The time before which *kind* is removed (None: kept)."""
        days = self.days.get(kind)
        return now - days * DAY if days else None


def sweep(settings: Settings, *, now: float, holdings: Sequence[Holding] = (),
          audit: AuditLog | None = None, actor: str = "command:retention") -> dict[str, int]:
    """Remove what is past its kind's days at *now*; what went, by what (a kind kept: absent)."""
    policy = Retention.of(settings)
    removed: dict[str, int] = {}
    if (cut := policy.before("history", now)) is not None:
        history = HistoryRecords(settings.history_url)
        try:
            gone = history.delete(history.older_than(cut))
        finally:
            history.close()
        removed.update(gone.counts())
        removed["history uploads"] = erase_files(session_folders(settings, gone.sessions))
    if (cut := policy.before("conversations", now)) is not None:
        for holding in holdings:
            for what, n in holding.sweep(cut).items():
                removed[what] = removed.get(what, 0) + n
    if (cut := policy.before("uploads", now)) is not None:
        removed["uploads"] = sweep_uploads(settings, cut)
        where = documents_location(settings)
        if not isinstance(where, Path) or where.exists():
            jobs = DocumentJobs(where)
            try:
                removed["document jobs"] = jobs.sweep(cut)
            finally:
                jobs.close()
    memory_cut, team_cut = policy.before("memory", now), policy.before("team", now)
    if memory_cut is not None or team_cut is not None:
        memory = open_memory_if_kept(settings)
        if memory is not None:
            try:
                if memory_cut is not None:
                    removed["memory model answers"] = memory.sweep([MACHINE], memory_cut)
                if team_cut is not None:
                    removed["memory corrections and imports"] = memory.sweep(
                        [CORRECTED, IMPORTED], team_cut)
            finally:
                memory.close()
    if (cut := policy.before("logs", now)) is not None:
        removed["log lines"] = sweep_lines(log_files(settings), cut)
    if audit is not None and any(removed.values()):
        audit.record(actor, "retention", "older than the retention days",
                     ", ".join(f"{k}={v}" for k, v in removed.items() if v))
    return removed


async def run_sweeper(settings: Settings, *, clock: Callable[[], float] = time.time,
                      holdings: Sequence[Holding] = (), audit: AuditLog | None = None,
                      sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
                      rounds: int | None = None) -> None:
    """The app's sweeper: :func:`sweep` every ``HYMT_RETENTION_EVERY`` seconds, in a worker
    thread; a failed round is logged and the next one tried. Returns at once when nothing has
    a retention (*rounds*: how many, for a test; None: until cancelled)."""
    if not Retention.of(settings).active:
        return
    done = 0
    while rounds is None or done < rounds:
        try:
            removed = await asyncio.to_thread(sweep, settings, now=clock(), holdings=holdings,
                                              audit=audit, actor="app:retention")
            if any(removed.values()):
                _log.info("retention removed %s", ", ".join(
                    f"{n} {what}" for what, n in removed.items() if n))
        except Exception:  # noqa: BLE001 - a database away for a while: the next round
            _log.exception("the retention sweep failed; trying again at the next round")
        done += 1
        if rounds is None or done < rounds:
            await sleep(settings.retention_every)


def start_sweeper(settings: Settings, *, audit: AuditLog | None = None,
                  holdings: Sequence[Holding] = ()) -> asyncio.Task[None] | None:
    """The app's one call, from its startup on the running loop: the sweeper as a task for the
    process to hold (None: no retention is set, nothing runs)."""
    if not Retention.of(settings).active:
        return None
    return asyncio.get_running_loop().create_task(
        run_sweeper(settings, audit=audit, holdings=holdings), name="hymt-retention")
