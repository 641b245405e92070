"""What the chat shows under a translation whose checks found something (issue 18).

Pure: the Chainlit app puts :func:`warnings_markdown` under the translation's block
(Translator mode), and the agent mode's :func:`~hymt_chat.modes.agent.turns.turn_markdown`
renders its turn's warnings the same way, next to the reply before it is sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from hymt_chat.modes.wording import escape_markdown

__all__ = ["WARNING_MARK", "warning_lines", "warnings_markdown", "with_warnings"]

WARNING_MARK = "⚠"


class _Finding(Protocol):
    kind: str
    message: str


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
