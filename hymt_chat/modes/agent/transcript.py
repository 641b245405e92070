"""Download a Support-agent conversation: CSV and Markdown, original and translation side by side.

CSV is written as UTF-8 **with a BOM** (``utf-8-sig``): Excel on Windows opens a BOM-less CSV
in the legacy code page and turns Chinese, Arabic or accented text into mojibake; with the BOM
it reads UTF-8, and every other tool (Python's csv, pandas, LibreOffice, Google Sheets) skips
it. Times are ISO 8601 with their UTC offset. The Markdown is the conversation as a person reads
it, rendered or as plain text: each message under who said it and when, then its translation;
a mark is escaped only where Markdown would otherwise change it (no "Agent\\: English").
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from hymt_chat.modes.agent.conversation import Conversation, Turn
from hymt_chat.modes.page_text import PageText
from hymt_chat.text.markdown_text import as_markdown

__all__ = [
    "CSV_COLUMNS",
    "Export",
    "export_files",
    "transcript_csv",
    "transcript_markdown",
]

CSV_COLUMNS = ("time", "who", "source_language", "original", "target_language", "translation",
               "back_translation", "warnings")


@dataclass(frozen=True, slots=True)
class Export:
    """A file for the UI to offer (Chainlit: ``cl.File(name=..., content=..., mime=...)``)."""

    name: str
    content: bytes
    mime: str


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")


def transcript_csv(turns: Sequence[Turn]) -> bytes:
    """One row per turn; UTF-8 with BOM, CRLF line ends (the csv module's default dialect)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for t in turns:
        writer.writerow([_iso(t.time), t.who, t.source, safe_cell(t.original), t.target,
                         safe_cell(t.translation), safe_cell(t.back_translation or ""),
                         safe_cell(" | ".join(t.warnings))])
    return out.getvalue().encode("utf-8-sig")


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(text: str) -> str:
    """A cell a spreadsheet shows as text, never runs: OWASP's rule for CSV injection.

    A cell that starts with ``= + - @``, tab or CR gets a leading apostrophe, which Excel,
    LibreOffice and Google Sheets read as "this is text" and do not display. A customer's
    ``=HYPERLINK("http://…")`` stays a harmless string.
    """
    return "'" + text if text.startswith(_FORMULA_START) else text


def transcript_markdown(conversation: Conversation, page: PageText | None = None) -> str:
    """The conversation as a person reads it, in Markdown that reads as plain text too: the
    pair and when it started, then each message under who said it and when: the original,
    then its translation (quoted), its back-translation and its warnings.

    A message is written as typed (:func:`~hymt_chat.text.markdown_text.as_markdown`: a mark
    is escaped only where Markdown would take it for its own), in the *page*'s words."""
    page = page or PageText()
    turns = conversation.transcript
    started = conversation.started.astimezone(UTC)
    head = " · ".join((page.fill("transcript_started",
                                 time=started.strftime("%Y-%m-%d %H:%M UTC")),
                       page.count("transcript_messages", len(turns))))
    lines = [f"# {as_markdown(page['transcript_title'])}", "",
             f"{as_markdown(page.say(conversation.banner()))}  ", as_markdown(head), ""]
    day = started.date()
    for t in turns:
        moment = t.time.astimezone(UTC)
        when = moment.strftime("%H:%M:%S" if moment.date() == day else "%Y-%m-%d %H:%M:%S")
        day = moment.date()
        who = page["who_customer" if t.who == "customer" else "transcript_agent"]
        lines += [f"## {as_markdown(f'{when} · {who} · {page.name_of(t.source)}')}", "",
                  as_markdown(t.original), "",
                  _quoted(f"{page.name_of(t.target)}:", t.translation), ""]
        if t.back_translation is not None:
            lines += [_quoted(f"{page['transcript_back']}:", t.back_translation), ""]
        lines += [f"- ⚠ {as_markdown(w)}" for w in t.warnings]
        if t.warnings:
            lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def _quoted(label: str, text: str) -> str:
    """*label* then *text*, as a quote (each of its lines one of the quote's)."""
    return "\n".join(f"> {line}" if line else ">" for line in
                     as_markdown(f"{label} {text}").split("\n"))


def export_files(conversation: Conversation, now: datetime | None = None,
                 page: PageText | None = None) -> list[Export]:
    """Both downloads, named after the conversation's start: support-20250101-093000.csv/.md
    (the Markdown in the *page*'s words)."""
    stamp = (now or conversation.started).strftime("%Y%m%d-%H%M%S")
    return [
        Export(f"support-{stamp}.csv", transcript_csv(conversation.transcript),
               "text/csv; charset=utf-8"),
        Export(f"support-{stamp}.md", transcript_markdown(conversation, page).encode("utf-8"),
               "text/markdown; charset=utf-8"),
    ]
