"""The Translator mode's state and commands: the languages chosen, and /to, /swap, /detect,
/reset. Its sentences are in :mod:`hymt_chat.modes.wording`; its session is
:mod:`hymt_chat.modes.translator_session`.
"""

from __future__ import annotations

from dataclasses import dataclass

from hymt_chat.errors import CommandError, UnknownLanguageError
from hymt_chat.lang.languages import Language, find_language
from hymt_chat.lang.names import AUTO, language_name
from hymt_chat.modes.commands import split_command
from hymt_chat.modes.wording import unknown_language_message
from hymt_chat.words.said import Code

__all__ = [
    "COMMANDS",
    "ChatState",
    "Command",
    "DetectCommand",
    "ResetCommand",
    "SwapCommand",
    "ToCommand",
    "parse_command",
]


# --------------------------------------------------------------------------------------------
# Session state
# --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class ChatState:
    """What one chat session remembers: the language pair and what was last detected."""

    source: str = AUTO  # AUTO or a table code
    target: str = "en"
    last_detected: str | None = None  # source language of the last message (detected or chosen)
    previous: str | None = None  # last source language other than the target: what /swap uses

    @classmethod
    def new(cls, default_target: str = "en") -> ChatState:
        lang = find_language(default_target)
        return cls(target=lang.code if lang else "en")

    @property
    def pair(self) -> str:
        """ "Auto-detect → English"."""
        return f"{language_name(self.source)} → {language_name(self.target)}"

    def picker_values(self) -> dict[str, str]:
        return {"source": self.source, "target": self.target}

    def set_languages(self, source: str | None = None, target: str | None = None) -> bool:
        """Apply picker values (codes, or AUTO for the source). True when something changed.

        Unknown values raise :class:`UnknownLanguageError`.
        """
        before = (self.source, self.target)
        if source is not None:
            self.source = AUTO if source in (AUTO, "") else _code(source)
        if target is not None:
            self.target = _code(target)
            # en→fr, then "/to en": swapping back should offer French.
            if self.previous in (None, self.target) and before[1] != self.target:
                self.previous = before[1]
        return (self.source, self.target) != before

    def swap(self) -> None:
        """Swap source and target; with auto-detect, the last other language becomes the target.

        Raises :class:`CommandError` when there is nothing to swap with yet.
        """
        if self.source != AUTO:
            if self.source == self.target:
                raise CommandError.worded("swap_same", language=Code(self.target))
            self.source, self.target = self.target, self.source
            return
        other = self.previous if self.previous != self.target else None
        if other is None:
            raise CommandError.worded("swap_nothing", language=Code(self.target))
        self.previous, self.target = self.target, other

    def reset(self, default_target: str = "en") -> None:
        fresh = ChatState.new(default_target)
        self.source, self.target = fresh.source, fresh.target
        self.last_detected = self.previous = None

    def remember(self, source: str | None) -> None:
        """Record the source language of a message just handled (None: detection unsure)."""
        if source is None:
            return
        self.last_detected = source
        if source != self.target:
            self.previous = source


def _code(name: str) -> str:
    lang = find_language(name)
    if lang is None and not isinstance(name, str):  # from the browser, not typed by a person
        raise UnknownLanguageError.worded("not_a_language")
    if lang is None:
        raise unknown_language_message(name[:40])
    return lang.code


# --------------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToCommand:
    language: Language


@dataclass(frozen=True, slots=True)
class SwapCommand:
    pass


@dataclass(frozen=True, slots=True)
class DetectCommand:
    text: str  # may be empty: then the last detection is reported


@dataclass(frozen=True, slots=True)
class ResetCommand:
    pass


Command = ToCommand | SwapCommand | DetectCommand | ResetCommand

# id, description, lucide icon: what the composer's command menu shows.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("to", "Translate into another language: /to Japanese, /to zh-Hant, /to 法语", "languages"),
    ("swap", "Swap source and target languages", "arrow-left-right"),
    ("detect", "Tell which language a text is in, without translating it", "scan-search"),
    ("reset", "Back to Auto-detect and the default target language", "rotate-ccw"),
)
_COMMAND_IDS = frozenset(c[0] for c in COMMANDS)


def parse_command(text: str, command: str | None = None) -> Command | None:
    """The command in a message, or None when the message is text to translate.

    *command* is what the composer's command menu selected (the text is then its argument);
    otherwise a message starting with "/to", "/swap", "/detect" or "/reset" is a command. Any
    other text starting with "/" ("/usr/bin is…") is translated like any text.
    Raises :class:`UnknownLanguageError` (listing the valid ones) or :class:`CommandError`.
    """
    found = split_command(text, command, _COMMAND_IDS)
    if found is None:
        return None
    name, rest = found
    if name == "to":
        if not rest:
            raise CommandError.worded("which_language")
        lang = find_language(rest)
        if lang is None:
            raise unknown_language_message(rest)
        return ToCommand(lang)
    if name == "swap":
        return SwapCommand()
    if name == "detect":
        return DetectCommand(rest)
    if name == "reset":
        return ResetCommand()
    return None  # a command the menu knows but this version does not: translate the text
