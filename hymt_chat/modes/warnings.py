"""What the chat shows under a translation whose checks found something.

Pure: the Chainlit app puts :func:`warnings_markdown` under the translation's block
(Translator mode) and :func:`file_warnings_markdown` under a file's summary, and the agent
mode's :func:`~hymt_chat.modes.agent.turns.turn_markdown` renders its turn's warnings the
same way, next to the reply before it is sent. In a room (and the desk) such a reply is held
until the agent sends it anyway or edits it: the words for that are here too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from hymt_chat.modes.wording import escape_markdown

__all__ = [
    "EDIT_LABEL",
    "FILE_WARNINGS_SHOWN",
    "HELD_DROPPED",
    "HELD_GONE",
    "HELD_NOTE",
    "HELD_SENT",
    "SEND_ANYWAY_LABEL",
    "WARNING_MARK",
    "file_warnings_markdown",
    "held_markdown",
    "warning_lines",
    "warnings_markdown",
    "with_warnings",
]

WARNING_MARK = "⚠"
HELD_NOTE = "Not sent yet: the customer sees nothing until you choose. Read the warning below."
SEND_ANYWAY_LABEL = "Send anyway"
SEND_ANYWAY_TOOLTIP = "Send this translation to the customer as it is"
EDIT_LABEL = "Edit"
EDIT_TOOLTIP = "Drop this translation and write the reply again"
HELD_SENT = "Sent to the customer as it was, warning and all."
HELD_DROPPED = ("Not sent: the customer saw nothing. Your reply is back in the message box: "
                "change it and send it again.")
HELD_GONE = "That reply is no longer waiting: it was sent or dropped, or its conversation ended."
FILE_WARNINGS_SHOWN = 10  # a file's flags listed in its answer; the rest counted, not listed


class _Finding(Protocol):
    """A check's finding (read-only: :class:`~hymt_chat.text.checks.Finding` is frozen)."""

    @property
    def kind(self) -> str: ...
    @property
    def message(self) -> str: ...


def warning_lines(warnings: Sequence[_Finding | str]) -> list[str]:
    """Each warning's sentence once, in order (a finding or an already written sentence)."""
    seen: dict[str, None] = {}
    for warning in warnings:
        seen.setdefault(warning if isinstance(warning, str) else warning.message, None)
    return list(seen)


def warnings_markdown(warnings: Sequence[_Finding | str]) -> str:
    """"- ⚠ The amount 259 元 may be wrong in this translation (it says $259)." lines, Markdown
    escaped; the empty string when every check passed."""
    return "\n".join(f"- {WARNING_MARK} {escape_markdown(line)}"
                     for line in warning_lines(warnings))


def with_warnings(markdown: str, warnings: Sequence[_Finding | str]) -> str:
    """*markdown* (an answer) followed by its warnings, if any: never hidden, right under it."""
    lines = warnings_markdown(warnings)
    return f"{markdown}\n\n{lines}" if lines else markdown


def file_warnings_markdown(parts: Sequence[tuple[int, Sequence[_Finding | str]]],
                           limit: int = FILE_WARNINGS_SHOWN) -> str:
    """A file's warnings part by part ("- ⚠ Part 3: The duration 14 jours may be wrong…"),
    the first *limit* of them, then how many more: a long file's answer stays short enough to
    read. *parts* are (part number, its warnings) in reading order; "" when nothing was found."""
    lines = [f"Part {number}: {line}" for number, found in parts
             for line in warning_lines(found)]
    shown = [f"- {WARNING_MARK} {escape_markdown(line)}" for line in lines[:limit]]
    if len(lines) > limit:
        shown.append(f"- {WARNING_MARK} " + escape_markdown(f"…and {len(lines) - limit:,} more."))
    return "\n".join(shown)


def held_markdown(reply_markdown: str) -> str:
    """A held reply as the agent sees it: the hold said first, in bold, then the reply (its
    translation, notes and warnings)."""
    return f"**{WARNING_MARK} {escape_markdown(HELD_NOTE)}**\n\n{reply_markdown}"
