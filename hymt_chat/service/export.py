"""One person's data as a zip (the right of access): JSON of everything held about a
:class:`~hymt_chat.service.erasure.Subject`, found as the erasure finds it, and a transcript a
person can read.

The zip holds ``subject.json`` (who, when, what is inside), ``history.json`` (the threads with
their steps), ``memory.json`` (the memory's entries), ``logs.json`` (the log lines, by file),
each other holding's own files, ``files/…`` (the uploads and other files found) and
``transcript.md``. It is written owner-only: it is the person's data.
"""

from __future__ import annotations

import json
import os
import re
import time
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hymt_chat.service.cache_files import files_holding, session_folders
from hymt_chat.service.erasure import Holding, Subject, open_memory_if_kept, segments_of
from hymt_chat.service.history_records import HistoryRecords
from hymt_chat.service.log_lines import holding_lines, log_files
from hymt_chat.store.audit import AuditLog
from hymt_chat.text.markdown_text import as_markdown, tidy_escapes

if TYPE_CHECKING:
    from hymt_chat.settings import Settings

__all__ = ["Conversation", "Exported", "export_person", "transcript"]

Conversation = Callable[[Mapping[str, Any] | None], str | None]
"""A thread's saved conversation (its metadata) as Markdown, None where it holds none: the
mode that saved it renders it (:func:`hymt_chat.modes.profiles.saved_markdown`)."""

_SHOWN_TYPES = ("user_message", "assistant_message", "system_message")
_HEADING = re.compile(r"^(#+ )", re.MULTILINE)  # a conversation's headings, under a thread's


@dataclass(slots=True)
class Exported:
    path: Path
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def transcript(subject: Subject, threads: Sequence[dict[str, Any]], extra: Sequence[str] = (),
               conversation: Conversation | None = None) -> str:
    """The threads in order, as Markdown a person reads, rendered or as plain text: a Support
    agent's thread as its conversation (who, when, original and translation:
    :func:`~hymt_chat.modes.agent.transcript.transcript_markdown`), any other thread's messages
    under who said them and when, without the chat's needless escapes ("Agent\\: English")."""
    lines = [f"# What we hold about {subject.kind} {as_markdown(subject.text)}", "",
             f"Exported {datetime.now(UTC).isoformat(timespec='seconds')}.", ""]
    for thread in threads:
        name = as_markdown(str(thread.get("name") or "Conversation"))
        lines += [f"## {name} ({thread.get('createdAt') or ''})", ""]
        saved = conversation(thread.get("metadata")) if conversation is not None else None
        if saved:
            lines += [_HEADING.sub(r"##\1", saved), ""]
            continue
        for step in thread.get("steps", []):
            if step.get("type") not in _SHOWN_TYPES:
                continue
            said = (step.get("output") or step.get("input") or "").strip()
            if said:
                who = as_markdown(str(step.get("name") or step.get("type")))
                text = (as_markdown(said) if step.get("type") == "user_message"  # as typed
                        else tidy_escapes(said))  # the app's own Markdown
                lines += [f"### {step.get('createdAt') or ''} · {who}", "", text, ""]
    lines += list(extra)
    return "\n".join(lines).rstrip() + "\n"


def export_person(settings: Settings, subject: Subject, out: Path, *,
                  holdings: Sequence[Holding] = (), audit: AuditLog | None = None,
                  actor: str = "command:export",
                  conversation: Conversation | None = None) -> Exported:
    """Write the zip to *out*; the counts say what it holds (all zero: nothing is held)."""
    result = Exported(out)
    history = HistoryRecords(settings.history_url)
    try:
        ids = (history.of_agent(subject.text) if subject.kind == "agent"
               else history.mentioning(subject.text))
        threads = history.read(sorted(ids))
    finally:
        history.close()
    texts = [t for th in threads for s in th["steps"] for t in (s.get("input"), s.get("output"))
             if t]
    parts = [(h.name, h.export(subject)) for h in holdings]
    for _, part in parts:
        texts += part.texts
    searched = [] if subject.kind == "agent" else [subject.text]  # as the erasure does
    memory = open_memory_if_kept(settings)
    entries: list[dict[str, Any]] = []
    if memory is not None:
        try:
            entries = [asdict(e) for e in memory.holding(searched, segments_of(texts, settings))]
        finally:
            memory.close()
    lines = holding_lines(log_files(settings), [subject.text])
    sessions = [th["metadata"].get("id") for th in threads]
    files = sorted(set(files_holding(settings, searched)
                       + session_folders(settings, [s for s in sessions if isinstance(s, str)])))
    out.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as zf:
        def put(name: str, value: Any) -> None:
            zf.writestr(name, json.dumps(value, ensure_ascii=False, indent=2, default=str))

        put("history.json", threads)
        put("memory.json", entries)
        put("logs.json", lines)
        extra: list[str] = []
        for name, part in parts:
            for file_name, value in part.records.items():
                if file_name.endswith(".md") and isinstance(value, str):
                    extra.append(value)
                else:
                    put(f"{name}/{file_name}", value)
            for what, n in part.counts.items():
                result.counts[what] = result.counts.get(what, 0) + n
        stored = 0
        for path in files:
            for one in ([p for p in path.rglob("*") if p.is_file() and p.name != ".lock"]
                        if path.is_dir() else [path]):
                zf.write(one, "files/" + str(one.relative_to(settings.cache_dir)))
                stored += 1
        result.counts.update({"history threads": len(threads), "memory entries": len(entries),
                              "log lines": sum(map(len, lines.values())), "files": stored})
        zf.writestr("transcript.md", transcript(subject, threads, extra, conversation))
        put("subject.json", {"kind": subject.kind, "value": subject.text,
                             "exported": time.time(), "holds": result.counts})
    if audit is not None:
        audit.record(actor, "export", subject.label,
                     ", ".join(f"{k}={v}" for k, v in result.counts.items() if v) or "nothing")
    return result
