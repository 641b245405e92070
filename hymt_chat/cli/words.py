"""What the `hymt-chat` command says to a person, in the terminal's language: the first of
``$LANGUAGE``, ``$LC_ALL``, ``$LC_MESSAGES`` and ``$LANG`` that names one of the 38
(``fr_FR.UTF-8`` is French, ``pt_BR`` Portuguese, ``zh_TW`` Traditional Chinese; ``C`` and
``POSIX`` are English), its words from the catalogs, as the chat page's are
(:class:`~hymt_chat.modes.page_text.PageText`).

Only sentences: what scripts read (a translation, a language code, a key, a table, JSON, CSV)
is written as it is whatever the language. In English an error is its own sentence
(``str(err)``), which may tell more than the page's (the valid codes, a parser's line)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING

from hymt_chat.lang.languages import find_language
from hymt_chat.words.said import Said, said

if TYPE_CHECKING:
    from hymt_chat.modes.page_text import PageText

__all__ = ["error", "note", "say", "terminal_language", "warning", "words"]

LOCALE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
_ENGLISH_LOCALES = frozenset({"C", "POSIX"})
PROGRAM = "hymt-chat"


def terminal_language(environ: Mapping[str, str] | None = None) -> str:
    """The code of the terminal's language among the 38, else ``en``."""
    env = os.environ if environ is None else environ
    for name in LOCALE_VARIABLES:
        value = env.get(name) or ""
        # LANGUAGE is a list ("fr_CA:fr:en"); the others one locale ("de_DE.UTF-8@euro").
        for item in value.split(":") if name == "LANGUAGE" else [value]:
            tag = item.split(".", 1)[0].split("@", 1)[0].strip()
            if not tag:
                continue
            if tag in _ENGLISH_LOCALES:
                return "en"
            found = find_language(tag)
            if found is not None:
                return found.code
    return "en"


@cache
def _page(code: str) -> PageText:
    from hymt_chat.modes.page_text import PageText  # read when something is said, not at start

    return PageText.of(code)


def words() -> PageText:
    """The terminal's words (English where its language is not one of the 38)."""
    return _page(terminal_language())


def say(key: str, **slots: object) -> str:
    """The message *key* with *slots* in the terminal's language (numbers written its way)."""
    return words().say(said(key, **slots))


def error(err: BaseException) -> str:
    """An error's sentence: its own English, else the terminal's language where it is worded."""
    if terminal_language() == "en":
        return str(err)
    return words().error(err)


def warning(found: object) -> str:
    """A check's finding (its page sentence where it has one) as the CLI's warning line."""
    sentence = getattr(found, "said", None)
    text = (words().say(sentence) if isinstance(sentence, Said) and terminal_language() != "en"
            else str(getattr(found, "message", found)))
    return f"{PROGRAM}: {say('cli_warning', warning=text)}"


def note(key: str, **slots: object) -> None:
    """A sentence to the person on stderr, after the program's name (stdout is the result)."""
    print(f"{PROGRAM}: {say(key, **slots)}", file=sys.stderr)
