"""Download a Support-agent conversation: CSV and Markdown, original and translation side by side.

CSV is written as UTF-8 **with a BOM** (``utf-8-sig``): Excel on Windows opens a BOM-less CSV
in the legacy code page and turns Chinese, Arabic or accented text into mojibake; with the BOM
it reads UTF-8, and every other tool (Python's csv, pandas, LibreOffice, Google Sheets) skips
it. Times are ISO 8601 with their UTC offset. The Markdown table escapes what would break it:
backslashes, pipes, HTML, and newlines (shown as ``<br>``).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from hymt_chat.lang.names import language_name
from hymt_chat.modes.agent.conversation import Conversation, Turn

__all__ = [
    "CSV_COLUMNS",
    "Export",
    "escape_cell",
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


def escape_cell(text: str) -> str:
    """Text shown literally inside one Markdown table cell."""
    out = (text.replace("\\", "\\\\").replace("&", "&amp;").replace("<", "&lt;")
           .replace(">", "&gt;").replace("|", "\\|"))
    out = out.replace("\r\n", "\n").replace("\r", "\n").strip("\n")
    return out.replace("\n", "<br>")


def transcript_markdown(conversation: Conversation) -> str:
    """A heading with the pair and the time span, then one table row per turn."""
    turns = conversation.transcript
    lines = [
        "# Support conversation",
        "",
        f"- {escape_cell(conversation.banner())}",
        f"- Started: {_iso(conversation.started)}",
        f"- Turns: {len(turns)}",
        "",
        "| Time | Who | Original | Translation | Notes |",
        "|---|---|---|---|---|",
    ]
    for t in turns:
        original = f"*{language_name(t.source)}:* {escape_cell(t.original)}"
        translation = f"*{language_name(t.target)}:* {escape_cell(t.translation)}"
        notes = [escape_cell(w) for w in t.warnings]
        if t.back_translation is not None:
            notes.insert(0, f"Back-translation: {escape_cell(t.back_translation)}")
        lines.append(f"| {_iso(t.time)} | {t.who} | {original} | {translation} | "
                     f"{'<br>'.join(notes)} |")
    return "\n".join(lines) + "\n"


def export_files(conversation: Conversation, now: datetime | None = None) -> list[Export]:
    """Both downloads, named after the conversation's start: support-20250101-093000.csv/.md."""
    stamp = (now or conversation.started).strftime("%Y%m%d-%H%M%S")
    return [
        Export(f"support-{stamp}.csv", transcript_csv(conversation.transcript),
               "text/csv; charset=utf-8"),
        Export(f"support-{stamp}.md", transcript_markdown(conversation).encode("utf-8"),
               "text/markdown; charset=utf-8"),
    ]
