"""The one command parser: which message is a command, and what its argument is.

A message is a command when the composer's menu picked one (the text is then its argument), or
when it starts with ``/name`` for a *name* the mode knows. Any other text starting with "/"
("/usr/bin is…") is text to translate.
"""

from __future__ import annotations

import re
from collections.abc import Collection

__all__ = ["split_command"]

_TYPED = re.compile(r"\A/(?P<name>[A-Za-z]+)(?=\s|\Z)[ \t]*(?P<rest>.*)\Z", re.DOTALL)


def split_command(text: str, command: str | None, known: Collection[str]
                  ) -> tuple[str, str] | None:
    """``(name, argument)`` of the command in a message, or None when it is text to translate.

    The name is lower-cased and the argument stripped; an unknown name is never a command.
    """
    if command:
        name, rest = command.strip().lstrip("/").lower(), text
    else:
        match = _TYPED.match(text.strip())
        if match is None:
            return None
        name, rest = match.group("name").lower(), match.group("rest")
    return (name, rest.strip()) if name in known else None
