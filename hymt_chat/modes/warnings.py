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

from hymt_chat.modes.page_text import PageText
from hymt_chat.modes.wording import escape_markdown
from hymt_chat.words.said import Said

_ENGLISH_PAGE = PageText()

__all__ = [
    "FILE_WARNINGS_SHOWN",
    "WARNING_MARK",
    "file_warnings_markdown",
    "held_markdown",
    "warning_lines",
    "warnings_markdown",
    "with_warnings",
]

WARNING_MARK = "⚠"
FILE_WARNINGS_SHOWN = 10  # a file's flags listed in its answer; the rest counted, not listed


class _Finding(Protocol):
    """A check's finding (read-only: :class:`~hymt_chat.text.checks.Finding` is frozen)."""

    @property
    def kind(self) -> str: ...
    @property
    def message(self) -> str: ...


def warning_lines(warnings: Sequence[_Finding | Said | str],
                  page: PageText = _ENGLISH_PAGE) -> list[str]:
    """Each warning's sentence once, in order (a finding, a sentence of the app's, or an
    already written sentence), in the *page*'s language where it is worded."""
    seen: dict[str, None] = {}
    for warning in warnings:
        if isinstance(warning, str | Said):
            line = page.say(warning)
        else:
            worded = getattr(warning, "said", None)
            line = page.say(worded) if isinstance(worded, Said) else warning.message
        seen.setdefault(line, None)
    return list(seen)


def warnings_markdown(warnings: Sequence[_Finding | Said | str],
                      page: PageText = _ENGLISH_PAGE) -> str:
    """"- ⚠ The amount 259 元 may be wrong in this translation (it says $259)." lines, Markdown
    escaped; the empty string when every check passed."""
    return "\n".join(f"- {WARNING_MARK} {escape_markdown(line)}"
                     for line in warning_lines(warnings, page))


def with_warnings(markdown: str, warnings: Sequence[_Finding | Said | str],
                  page: PageText = _ENGLISH_PAGE) -> str:
    """*markdown* (an answer) followed by its warnings, if any: never hidden, right under it."""
    lines = warnings_markdown(warnings, page)
    return f"{markdown}\n\n{lines}" if lines else markdown


def file_warnings_markdown(parts: Sequence[tuple[int, Sequence[_Finding | Said | str]]],
                           limit: int = FILE_WARNINGS_SHOWN,
                           page: PageText = _ENGLISH_PAGE) -> str:
    """A file's warnings part by part ("- ⚠ Part 3: The duration 14 jours may be wrong…"),
    the first *limit* of them, then how many more: a long file's answer stays short enough to
    read. *parts* are (part number, its warnings) in reading order; "" when nothing was found."""
    lines = [page.fill("part_line", number=number, line=line) for number, found in parts
             for line in warning_lines(found, page)]
    shown = [f"- {WARNING_MARK} {escape_markdown(line)}" for line in lines[:limit]]
    if len(lines) > limit:
        more = page.fill("and_more", count=f"{len(lines) - limit:,}")
        shown.append(f"- {WARNING_MARK} " + escape_markdown(more))
    return "\n".join(shown)


def held_markdown(reply_markdown: str, page: PageText = _ENGLISH_PAGE) -> str:
    """A held reply as the agent sees it: the hold said first, in bold, then the reply (its
    translation, notes and warnings)."""
    return f"**{WARNING_MARK} {escape_markdown(page['held_note'])}**\n\n{reply_markdown}"
